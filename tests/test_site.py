"""The course website: built from the committed notebooks, read in headless Chromium.

``scripts/build_site.py`` builds it once for this file (Jupyter Book; the notebooks are
not executed again), a small HTTP server on 127.0.0.1 serves it, and Debian's Chromium
(driven by Playwright, never ``playwright install``) opens the landing page, every
chapter page and the other pages, and checks what a reader would see: the build had no
warnings; a chapter's first widget picture is drawn (an SVG or image of non-zero size, not
escaped text); its formulas are typeset, not raw TeX; the sidebar lists the notebooks in
course order; every internal link resolves; the Binder and download entries point at the
repository of ``course.toml`` and at that chapter's notebook; nothing is fetched from
outside the site; nothing is wider than a phone's screen. Screenshots of two chapters at
desktop and phone width go to the test's folder, or to ``MINIGRAD_SITE_SCREENSHOTS``.

The first tests need no browser: the course's order, its one place for the repository's
address, and the README's course table made from them.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest
from conftest import need

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import course_index  # noqa: E402

COURSE = course_index.load()
NOTEBOOKS = COURSE.notebooks()
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
# a picture in a cell's output: the widgets' inline SVG (in their HTML), or an image
# (not the copy buttons' icons, which are SVGs too)
PICTURE = ".cell_output .text_html svg, .cell_output img"


# -- the course: its order, its one place, the README's table ---------------------------

def test_the_chapters_come_in_course_order_then_the_other_notebooks():
    names = [notebook.path.name for notebook in NOTEBOOKS]
    chapters = [n for n in names if re.match(r"\d+_", n)]
    assert chapters == sorted(chapters, key=lambda n: int(n.split("_")[0]))
    assert names[:len(chapters)] == chapters
    assert sorted(names) == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert "01_autograd_from_scratch.ipynb" in chapters


def test_a_notebook_is_titled_by_its_first_heading():
    first = next(nb for nb in NOTEBOOKS if nb.stem == "01_autograd_from_scratch")
    assert first.title.startswith("Chapter 1")


def test_a_fork_changes_one_line_of_course_toml(tmp_path):
    (tmp_path / "notebooks").mkdir()
    shutil.copy(NOTEBOOKS[0].path, tmp_path / "notebooks")
    text = (ROOT / "course.toml").read_text()
    assert text.count(COURSE.repository) == 1
    (tmp_path / "course.toml").write_text(
        text.replace(COURSE.repository, "https://github.com/someone/their-fork"))
    fork = course_index.load(tmp_path)
    notebook = fork.notebooks()[0]
    assert fork.site == "https://someone.github.io/their-fork/"
    assert fork.page_url(notebook) == f"https://someone.github.io/their-fork/{notebook.stem}.html"
    assert fork.binder_url(notebook) == (
        f"https://mybinder.org/v2/gh/someone/their-fork/{fork.branch}"
        f"?urlpath=lab/tree/my-course/{notebook.path.name}")


def test_the_readme_links_every_notebook_to_its_page_on_the_website():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme == course_index.readme_with_table(readme, COURSE), (
        "the README's course table is not up to date: "
        "run `.venv/bin/python scripts/course_index.py --write-readme`")
    for notebook in NOTEBOOKS:
        assert f"]({COURSE.page_url(notebook)})" in readme
        assert f"]({COURSE.binder_url(notebook)})" in readme


def test_the_course_table_says_what_each_chapter_has_the_student_write(tmp_path):
    def cell(kind, source, **nbgrader):
        meta = {"nbgrader": nbgrader} if nbgrader else {}
        return {"cell_type": kind, "source": source, "metadata": meta}

    path = tmp_path / "07_x.ipynb"
    path.write_text(json.dumps({"cells": [
        cell("markdown", "# Chapter 7\nGraphView( in prose is not a use"),
        cell("code", "class MyLinear(nn.Module):\n    pass", solution=True, grade_id="a"),
        cell("code", "check(MyLinear)", grade=True, grade_id="a-tests", points=3),
        cell("code", "answer = 42", solution=True, grade_id="b"),
        cell("code", "check(answer)\nplt.show()", grade=True, grade_id="b-tests", points=1.5),
        cell("code", "GradientFlow(model)\nshow(loss)\nGradientFlow(model)"),
    ]}))
    found = course_index.exercises(path)
    assert found.written == ["MyLinear", "answer"]
    assert found.points == 4.5
    assert found.widgets == ["GradientFlow", "show"]


# -- the build ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The website, built once for this file: (its html folder, the build's warnings,
    seconds taken)."""
    if shutil.which("jupyter-book", path=str(Path(sys.executable).parent)) is None:
        need("jupyter-book", "pip install -e '.[site]'")
    output = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_site.py"),
                          "--output", str(output)], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    seconds = time.monotonic() - started
    assert run.returncode == 0, run.stdout + run.stderr
    log = (output / "build.log").read_text()
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    return output / "html", warnings, seconds


def test_the_site_builds_without_a_warning(site):
    html, warnings, _seconds = site  # (its time is printed by scripts/site.sh, not asserted)
    assert warnings == []  # a missing file, image or reference would be one
    for notebook in NOTEBOOKS:
        assert (html / f"{notebook.stem}.html").is_file()
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()  # math offline


# -- in the browser -------------------------------------------------------------------

class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *arguments):
        pass


@pytest.fixture(scope="module")
def browser(site):
    """Chromium and the site served on 127.0.0.1: yields (browser, base URL)."""
    if CHROMIUM is None:
        need("chromium", "apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        need("playwright", "pip install playwright (then no `playwright install`)")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site[0])))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            try:
                yield chromium, f"http://127.0.0.1:{server.server_address[1]}/"
            finally:
                chromium.close()
    finally:
        server.shutdown()
        server.server_close()  # the listening socket too, or it leaks a ResourceWarning
        thread.join()


class Reader:
    """A browser tab on the site that records what a page fetched from outside the site
    and what failed to load."""

    def __init__(self, browser, viewport=DESKTOP):
        chromium, self.base = browser
        self.page = chromium.new_page(viewport=viewport)
        self.outside, self.failed = [], []
        self.page.route("**/*", self._route)
        self.page.on("response", lambda r: r.status >= 400 and self.failed.append(r.url))

    def _route(self, route):
        if route.request.url.startswith(self.base) or route.request.url.startswith("data:"):
            route.continue_()
        else:  # nothing needed for reading may come from the internet
            self.outside.append(route.request.url)
            route.abort()

    def open(self, name: str):
        self.page.goto(self.base + name)
        self.page.wait_for_load_state("load")
        self.page.evaluate("() => window.MathJax?.startup?.promise")  # typeset, if any
        return self.page

    def close(self):
        assert self.outside == [], f"fetched from outside the site: {self.outside}"
        assert self.failed == [], f"failed to load: {self.failed}"
        self.page.close()


@pytest.fixture
def reader(browser):
    reader = Reader(browser)
    yield reader
    reader.close()


def page_ids(html: Path, name: str) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', (html / name).read_text(encoding="utf-8")))


def check_internal_links(page, base: str, html: Path) -> int:
    """Every link of the page into the site names a file that exists, and an anchor that
    is on its target page; returns how many were checked."""
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    checked = 0
    for href in hrefs:
        if not href.startswith(base):
            continue
        url, fragment = urldefrag(href)
        name = unquote(urlparse(url).path).lstrip("/") or "index.html"
        if name.endswith("/"):
            name += "index.html"
        assert (html / name).is_file(), f"{page.url}: broken link {href}"
        if fragment and name.endswith(".html"):
            assert fragment in page_ids(html, name), f"{page.url}: no #{fragment} in {name}"
        checked += 1
    return checked


def first_picture(notebook: Path) -> str | None:
    """The kind of the first picture a notebook's outputs hold: "svg" (inline, as the
    widgets save it) or "img"; None if it has none."""
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            html = "".join(data.get("text/html", ""))
            if "image/svg+xml" in data or "<svg" in html:
                return "svg"
            if "image/png" in data or "image/jpeg" in data or "<img" in html:
                return "img"
    return None


def has_math(notebook: Path) -> bool:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return any(re.search(r"\$[^$\n]+\$", "".join(cell["source"]))
               for cell in cells if cell["cell_type"] == "markdown")


def test_the_landing_page_has_the_two_commands_and_the_course_table(reader, site):
    page = reader.open("index.html")
    article = page.locator("article")
    for command in ("bash scripts/lab.sh", "bash scripts/test.sh"):
        assert command in article.inner_text()
    table = page.locator("article table").filter(has_text="Binder")
    links = table.locator("a.internal")
    stems = [Path(urlparse(href).path).stem for href in links.evaluate_all(
        "links => links.map(a => a.href)") if href.endswith(".html")]
    assert stems == [notebook.stem for notebook in NOTEBOOKS]
    binder = table.locator("a[href^='https://mybinder.org']").evaluate_all(
        "links => links.map(a => a.href)")
    assert binder == [COURSE.binder_url(notebook) for notebook in NOTEBOOKS]
    assert check_internal_links(page, reader.base, site[0]) > len(NOTEBOOKS)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_a_chapter_page_reads_as_in_jupyterlab(reader, site, notebook):
    html = site[0]
    page = reader.open(f"{notebook.stem}.html")
    article = page.locator("article.bd-article")
    assert article.locator("h1").first.inner_text().strip() == notebook.title
    text = article.inner_text()
    assert "<svg" not in text and "<div" not in text  # outputs are HTML, not escaped text

    # its first widget picture is drawn, with a size
    kind = first_picture(notebook.path)
    if kind is not None:
        picture = article.locator(PICTURE).first
        box = picture.bounding_box()
        assert box is not None and box["width"] > 20 and box["height"] > 20, box
        if kind == "svg":
            assert picture.evaluate("e => e.tagName.toLowerCase()") == "svg"
            assert picture.locator("g, path, rect, text").count() > 0

    # formulas typeset by MathJax (served by the site), no TeX left in the prose
    if has_math(notebook.path):
        assert article.locator("mjx-container").count() > 0
        prose = " ".join(article.locator("p, li").evaluate_all(
            "items => items.map(e => { const c = e.cloneNode(true);"
            " c.querySelectorAll('mjx-container, code, pre').forEach(m => m.remove());"
            " return c.textContent; })"))
        assert not re.search(r"\\(frac|partial|sum|leftarrow)|\$", prose), prose[:500]

    # exercise cells (nbgrader): labelled, the solved cell folded, its check labelled
    cells = json.loads(notebook.path.read_text(encoding="utf-8"))["cells"]
    grading = [cell["metadata"]["nbgrader"] for cell in cells if "nbgrader" in cell["metadata"]]
    solutions = article.locator(".mg-exercise.mg-solution")
    assert solutions.count() == sum(  # (a written answer is a markdown cell: text here)
        bool(cell["metadata"].get("nbgrader", {}).get("solution"))
        and cell["cell_type"] == "code" for cell in cells)
    assert solutions.locator("details:not([open])").count() == solutions.count()
    assert article.locator(".mg-exercise.mg-check").count() == sum(
        bool(g.get("grade")) and not g.get("solution") for g in grading)

    # the sidebar: every notebook, in course order, this one marked as the current page
    sidebar = [text.strip() for text in
               page.locator("nav.bd-docs-nav a.reference").all_inner_texts()]
    titles = [nb.title for nb in NOTEBOOKS]
    assert [text for text in sidebar if text in titles] == titles
    current = page.locator("nav.bd-docs-nav li.current > a.reference")
    assert current.first.inner_text().strip() == notebook.title

    # launch on Binder (under the title, and in the header's menu): the repository of
    # course.toml, this notebook
    binder = page.locator("a[href^='https://mybinder.org']").evaluate_all(
        "links => links.map(a => a.href)")
    assert len(binder) == 2 and set(binder) == {COURSE.binder_url(notebook)}
    assert COURSE.repository.removeprefix("https://github.com/") in binder[0]
    assert binder[0].endswith(f"my-course/{notebook.path.name}")  # the workspace copy
    run_line = article.locator("p.mg-run")
    assert run_line.locator("a.mg-binder").is_visible()

    # download (under the title, and in the header's menu): this notebook, as committed
    downloads = page.locator(f"a[href$='_sources/{notebook.path.name}']")
    assert downloads.count() == 2 and run_line.locator("a.mg-download").is_visible()
    for href in set(downloads.evaluate_all("links => links.map(a => a.href)")):
        reply = page.request.get(href)
        assert reply.ok
        assert json.loads(reply.body()) == json.loads(notebook.path.read_text(encoding="utf-8"))

    assert check_internal_links(page, reader.base, html) > 0


def test_the_other_pages_have_no_broken_links(reader, site):
    html = site[0]
    names = sorted(path.name for path in html.glob("*.html")
                   if path.stem not in {nb.stem for nb in NOTEBOOKS} | {"index", "search",
                                                                         "genindex"})
    assert "design-notes.html" in names
    for name in names:
        check_internal_links(reader.open(name), reader.base, html)


def test_search_finds_a_chapter(reader):
    page = reader.open("search.html?q=gradcheck")
    results = page.locator("#search-results a")
    results.first.wait_for(timeout=20_000)
    hrefs = results.evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert any("01_autograd_from_scratch" in href for href in hrefs)


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_two_chapters_fit_the_screen_and_are_photographed(browser, size, tmp_path):
    """Nothing runs off the screen sideways (graphs and curves shrink to the column; wide
    tables scroll inside their output), and screenshots are kept for a look."""
    folder = Path(os.environ.get("MINIGRAD_SITE_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    reader = Reader(browser, DESKTOP if size == "desktop" else PHONE)
    try:
        for stem in ("01_autograd_from_scratch", "widgets_tour"):
            page = reader.open(f"{stem}.html")
            overflow = page.evaluate(
                "() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{stem} is {overflow} px wider than a {size} screen"
            shot = folder / f"site-{stem}-{size}.png"
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
            picture = page.locator(f"article {PICTURE}").first
            if picture.count():
                picture.scroll_into_view_if_needed()
                shot = folder / f"site-{stem}-{size}-picture.png"
                page.screenshot(path=str(shot))
                assert shot.stat().st_size > 10_000
    finally:
        reader.close()
