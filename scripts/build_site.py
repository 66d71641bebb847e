"""Build the course website from the committed, executed notebooks (Jupyter Book 1.x).

    .venv/bin/python scripts/build_site.py        # or: bash scripts/site.sh
    open build/site/html/index.html               # works from file:// too

The notebooks are not executed again: their saved outputs (the widgets' pictures
included) are shown as saved. The book is put together in ``build/site/source/`` from

- every notebook of notebooks/, in course order (``scripts/course_index.py``): the
  sidebar and the landing page's course table list them, so a new chapter joins by being
  there;
- the README: its opening and "Two commands" make the landing page, and its sections
  "For teachers", "Learning alone", "The engine in one page", "Training, as in PyTorch",
  "Seeing it work: the widgets", "Design notes" and "Speed" one page each, when present;
- ``docs/api.md`` (the API reference) and ``docs/teaching.md`` (the instructor guide,
  after "For teachers"), when present;
- ``site/``: the website's style sheet, and a small Sphinx extension that puts a "launch
  on Binder / download" line under each notebook page's title and marks exercise cells;

and the repository's address comes from ``course.toml`` (Binder buttons, links to files).
Everything a page needs is in the built folder (MathJax included): nothing is fetched
from the internet when the site is read. Warnings of the build are printed at the end;
``--strict`` makes any of them an error.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course_index  # noqa: E402

ROOT = course_index.ROOT

# README sections that become pages: (heading it starts with, page name, sidebar part)
README_PAGES = [
    ("For teachers", "for-teachers", "Using the course"),
    ("Learning alone", "learning-alone", "Using the course"),
    ("The engine in one page", "engine", "The engine"),
    ("Training, as in PyTorch", "training", "The engine"),
    ("Seeing it work: the widgets", "widgets", "The engine"),
    ("Design notes", "design-notes", "The engine"),
    ("Speed", "speed", "The engine"),
]
API_PAGE = ("docs/api.md", "api", "The engine")  # placed before the design notes
TEACHING_PAGE = ("docs/teaching.md", "teaching", "Using the course")  # after "For teachers"
LANDING_SECTIONS = ["Two commands"]
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")  # the text may span lines
FENCE = re.compile(r"^\s*(```|~~~)")


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def split_sections(markdown: str) -> tuple[str, dict[str, str]]:
    """A README's opening (its title and what precedes the first ``##``) and its ``##``
    sections, by heading; code blocks are never split."""
    opening, sections, current, in_code = [], {}, None, False
    for line in markdown.splitlines():
        if FENCE.match(line):
            in_code = not in_code
        if not in_code and line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
            continue
        (opening if current is None else sections[current]).append(line)
    return "\n".join(opening), {title: "\n".join(lines).strip("\n")
                                for title, lines in sections.items()}


def shift_headings(markdown: str, by: int) -> str:
    """Make every heading (outside code blocks) ``by`` levels higher: ``###`` -> ``##``."""
    lines, in_code = [], False
    for line in markdown.splitlines():
        if FENCE.match(line):
            in_code = not in_code
        if not in_code and re.match(r"#{2,6} ", line):
            line = line[by:]
        lines.append(line)
    return "\n".join(lines)


class Book:
    """The book's source folder, and how README links are carried over to it."""

    def __init__(self, course: course_index.Course, source: Path):
        self.course, self.source = course, source
        self.notebooks = course.notebooks()
        self.readme_opening, self.readme_sections = split_sections(
            (ROOT / "README.md").read_text(encoding="utf-8"))
        self.pages: list[tuple[str, str, str]] = []  # (page name, title, sidebar part)
        self.anchor_pages: dict[str, str] = {}  # README anchor -> page of the website
        self.subsection_links: dict[str, str] = {}  # a heading's anchor in such a section
        # -> "page.md#anchor"
        # files of docs/ that are pages of the website (a link to one goes to its page)
        self.doc_pages = {ROOT / path: name for path, name, _ in (API_PAGE, TEACHING_PAGE)
                          if (ROOT / path).exists()}

    def relink(self, markdown: str, base: Path) -> str:
        """Links of a markdown file at ``base`` (a folder of the repository) made to work on
        the website: a notebook of notebooks/ goes to its page, a README section that is a
        page to that page, a picture is copied into the book, any other file of the
        repository goes to the repository's host; web links stay as they are."""
        def replace(match: re.Match) -> str:
            bang, text, target = match.groups()
            if re.match(r"[a-z]+:", target):
                return match.group(0)
            path, _, anchor = target.partition("#")
            if not path:  # an anchor of the same file
                if base == ROOT and anchor in self.anchor_pages:
                    return f"{bang}[{text}]({self.anchor_pages[anchor]}.md)"
                if base == ROOT and anchor in self.subsection_links:
                    return f"{bang}[{text}]({self.subsection_links[anchor]})"
                if base == ROOT:
                    return f"{bang}[{text}]({self.course.file_url('README.md')}#{anchor})"
                return match.group(0)
            file = (base / path).resolve()
            if not file.is_relative_to(ROOT):  # left as it is: the build will warn
                return match.group(0)
            relative = file.relative_to(ROOT).as_posix()
            if file == ROOT / "README.md" and anchor in self.anchor_pages:
                return f"{bang}[{text}]({self.anchor_pages[anchor]}.md)"
            if file == ROOT / "README.md" and anchor in self.subsection_links:
                return f"{bang}[{text}]({self.subsection_links[anchor]})"
            if file in self.doc_pages:
                return f"{bang}[{text}]({self.doc_pages[file]}.md{'#' + anchor if anchor else ''})"
            if file.suffix == ".ipynb" and file.parent == ROOT / "notebooks" and file.exists():
                return f"{bang}[{text}]({file.name}{'#' + anchor if anchor else ''})"
            if bang and file.is_file():
                (self.source / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(file, self.source / relative)
                return f"{bang}[{text}]({relative})"
            kind = "tree" if file.is_dir() else "blob"
            url = self.course.file_url(relative).replace("/blob/", f"/{kind}/", 1)
            return f"{bang}[{text}]({url}{'#' + anchor if anchor else ''})"

        chunks, text, in_code = [], [], False  # runs of text, and code blocks as they are
        for line in markdown.splitlines():
            if FENCE.match(line):
                if not in_code and text:
                    chunks.append(LINK.sub(replace, "\n".join(text)))
                    text = []
                in_code = not in_code
            (chunks if in_code or FENCE.match(line) else text).append(line)
        if text:
            chunks.append(LINK.sub(replace, "\n".join(text)))
        return "\n".join(chunks) + "\n"

    def write(self, name: str, markdown: str) -> None:
        (self.source / f"{name}.md").write_text(markdown, encoding="utf-8")

    def add_readme_pages(self) -> None:
        """A page for each section of README_PAGES that the README has, in that order, and
        the API reference (when docs/api.md exists) just before the design notes."""
        found = []
        for prefix, name, part in README_PAGES:
            title = next((title for title in self.readme_sections
                          if title.lower().startswith(prefix.lower())), None)
            if title is not None:
                found.append((title, name, part))
                self.anchor_pages[github_slug(title)] = name
                for heading in re.findall(r"^###+ (.+)$", self.readme_sections[title],
                                          flags=re.M):
                    slug = github_slug(heading)
                    self.subsection_links.setdefault(slug, f"{name}.md#{slug}")
        api = ROOT / API_PAGE[0]
        for title, name, part in found:
            if name == "design-notes" and api.exists():
                self.add_api_page(api)
            body = shift_headings(self.readme_sections[title], 1)
            self.write(name, f"# {title}\n\n" + self.relink(body, ROOT))
            self.pages.append((name, title, part))
            if name == "for-teachers":
                self.add_doc_page(TEACHING_PAGE)
        if all(page != TEACHING_PAGE[1] for page, _, _ in self.pages):
            self.add_doc_page(TEACHING_PAGE)
        if api.exists() and all(page != API_PAGE[1] for page, _, _ in self.pages):
            self.add_api_page(api)

    def add_doc_page(self, page: tuple[str, str, str]) -> None:
        """A markdown file of docs/ as a page of its own, titled by its first heading
        (nothing when the file does not exist)."""
        path, name, part = page
        if not (ROOT / path).exists():
            return
        markdown = (ROOT / path).read_text(encoding="utf-8")
        title = next((line[2:].strip() for line in markdown.splitlines()
                      if line.startswith("# ")), name)
        self.write(name, self.relink(markdown, (ROOT / path).parent))
        self.pages.append((name, title, part))

    def add_api_page(self, api: Path) -> None:
        markdown = api.read_text(encoding="utf-8")
        title = next((line[2:].strip() for line in markdown.splitlines()
                      if line.startswith("# ")), "API reference")
        self.write(API_PAGE[1], self.relink(markdown, api.parent))
        self.pages.append((API_PAGE[1], title, API_PAGE[2]))

    def add_landing_page(self) -> None:
        """The README's opening, the course table (every notebook, in course order), the
        other pages, then the README's "Two commands"."""
        opening = self.readme_opening.strip().splitlines()
        title = opening[0].lstrip("# ").strip() if opening and opening[0].startswith("# ") \
            else "minigrad"
        rows = ["| chapter | run it | notebook |", "| --- | --- | --- |"]
        for notebook in self.notebooks:
            rows.append(f"| [{notebook.title}]({notebook.path.name}) "
                        f"| [on Binder]({self.course.binder_url(notebook)}) "
                        f"| {{download}}`download <{notebook.path.name}>` |")
        course = ["## The course",
                  "Each chapter is a notebook that runs from top to bottom on its own, in a "
                  "few seconds. Read it here, launch it on Binder (JupyterLab in your browser, "
                  "nothing to install), or download it and run it in your own JupyterLab with "
                  "minigrad installed.",
                  "\n".join(rows)]
        if self.pages:
            course.append("Also on this website: " + ", ".join(
                f"[{title}]({name}.md)" for name, title, _ in self.pages) + ".")
        course.append(f"The source, the issues and the notebooks live in the "
                      f"[repository]({self.course.repository}).")
        parts = [f"# {title}", self.relink("\n".join(opening[1:]).strip(), ROOT), *course]
        for heading in LANDING_SECTIONS:
            if heading in self.readme_sections:
                parts.append(f"## {heading}\n\n"
                             + self.relink(self.readme_sections[heading], ROOT))
        self.write("index", "\n\n".join(parts) + "\n")

    def write_table_of_contents(self) -> None:
        lines = ["format: jb-book", "root: index", "parts:"]
        groups = [("Chapters", [nb.stem for nb in self.notebooks if nb.is_chapter]),
                  ("Tours", [nb.stem for nb in self.notebooks if not nb.is_chapter])]
        for part in dict.fromkeys(part for _, _, part in self.pages):
            groups.append((part, [name for name, _, p in self.pages if p == part]))
        for caption, files in groups:
            if files:
                lines.append(f"  - caption: {json.dumps(caption)}")
                lines.append("    chapters:")
                lines.extend(f"      - file: {name}" for name in files)
        (self.source / "_toc.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def write_config(self) -> None:
        config = {
            "title": "minigrad",
            "author": "The minigrad authors",
            "copyright": "2026",  # as in LICENSE
            "only_build_toc_files": True,
            "exclude_patterns": ["_build", "_ext", "**.ipynb_checkpoints"],
            "execute": {"execute_notebooks": "off"},  # shown as committed
            # Binder buttons open the student's copy (binder/postBuild makes my-course/)
            "repository": {"url": self.course.repository,
                           "path_to_book": course_index.WORKSPACE,
                           "branch": self.course.branch},
            "launch_buttons": {"binderhub_url": "https://mybinder.org",
                               "notebook_interface": "jupyterlab"},
            "html": {"use_repository_button": True, "use_issues_button": False,
                     "use_edit_page_button": False, "use_multitoc_numbering": False,
                     "home_page_in_navbar": True, "baseurl": self.course.site},
            "parse": {"myst_enable_extensions": ["colon_fence", "dollarmath", "linkify",
                                                 "substitution", "tasklist"],
                      "myst_dmath_double_inline": True},
            "sphinx": {
                "extra_extensions": ["sphinx-mathjax-offline"],  # MathJax from _static
                "local_extensions": {"minigrad_site": "_ext"},  # site/minigrad_site.py
                "config": {
                    "minigrad_binder_urls": {nb.stem: self.course.binder_url(nb)
                                             for nb in self.notebooks},
                    "mathjax_path": "mathjax/tex-chtml.js",
                    "nb_ipywidgets_js": {},  # no widget scripts from a CDN
                    "html_static_path": ["_static"],
                    "html_css_files": ["minigrad.css"],
                    "html_show_sphinx": False,
                    "html_last_updated_fmt": None,
                    "myst_heading_anchors": 3,  # links to #a-heading, as on GitHub
                },
            },
        }
        # JSON is YAML: no YAML writer is needed
        (self.source / "_config.yml").write_text(json.dumps(config, indent=2) + "\n",
                                                 encoding="utf-8")

    def assemble(self) -> None:
        if self.source.exists():
            shutil.rmtree(self.source)
        (self.source / "_static").mkdir(parents=True)
        for notebook in self.notebooks:
            shutil.copy(notebook.path, self.source / notebook.path.name)
        (self.source / "_ext").mkdir()
        for asset in (ROOT / "site").iterdir():
            if asset.suffix == ".py":
                shutil.copy(asset, self.source / "_ext" / asset.name)
            elif asset.is_file():
                shutil.copy(asset, self.source / "_static" / asset.name)
        self.add_readme_pages()
        self.add_landing_page()
        self.write_table_of_contents()
        self.write_config()


def build(output: Path, strict: bool = False) -> list[str]:
    """Assemble the book in ``output/source`` and build it into ``output/html``; returns the
    build's warnings."""
    book = Book(course_index.load(), output / "source")
    book.assemble()
    html = output / "html"
    if html.exists():
        shutil.rmtree(html)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book), "build", str(book.source), "--path-output", str(output),
               "--builder", "html", "--all"]
    run = subprocess.run(command, capture_output=True, text=True)
    log = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout + run.stderr)  # no terminal colours
    (output / "build.log").write_text(log, encoding="utf-8")
    if run.returncode != 0:
        sys.stderr.write(log)
        raise SystemExit(f"build_site: jupyter-book failed (log: {output / 'build.log'})")
    shutil.move(output / "_build" / "html", html)
    shutil.rmtree(output / "_build")
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    if strict and warnings:
        raise SystemExit("build_site: the build warned:\n" + "\n".join(warnings))
    return warnings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", type=Path, default=ROOT / "build" / "site",
                        help="where to build (default: build/site; the pages go to html/)")
    parser.add_argument("--strict", action="store_true", help="fail on any build warning")
    arguments = parser.parse_args()
    if shutil.which("jupyter-book", path=str(Path(sys.executable).parent)) is None:
        raise SystemExit("build_site: jupyter-book is not installed in this Python: "
                         "pip install -e '.[site]' (bash scripts/site.sh does it)")
    started = time.monotonic()
    warnings = build(arguments.output.resolve(), arguments.strict)
    for warning in warnings:
        print(warning, file=sys.stderr)
    print(f"build_site: {arguments.output / 'html' / 'index.html'} "
          f"({time.monotonic() - started:.1f} s, {len(warnings)} warnings)")


if __name__ == "__main__":
    main()
