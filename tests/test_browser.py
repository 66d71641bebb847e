"""The widgets live in a real JupyterLab, driven by headless Chromium (Playwright).

One test, because starting JupyterLab and running the tour notebook is the expensive
part: it opens a copy of ``notebooks/widgets_tour.ipynb``, runs every cell, and checks
in the rendered page that

- the graph is drawn (an SVG with boxes) by the GraphView;
- selecting a node in its dropdown, or clicking its box, shows its saved tensors;
- the stepper's Step button moves the highlighted node and changes the gradient shown;

and saves a screenshot. The server listens on 127.0.0.1 only and is stopped by its PID.
It needs Debian's ``chromium`` (apt-get install chromium) and the ``playwright`` package
(never ``playwright install``: it would download a browser of its own).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import need

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "widgets_tour.ipynb"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TOKEN = "minigrad-browser-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on 127.0.0.1 serving a copy of the tour notebook; yields its
    base URL. Stopped by PID afterwards (which also stops its kernels)."""
    if CHROMIUM is None:
        need("chromium", "apt-get install chromium")
    try:
        import playwright  # noqa: F401
    except ImportError:
        need("playwright", "pip install playwright (then no `playwright install`)")
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        need("jupyterlab", "pip install -e '.[jupyter]'")
    work = tmp_path / "lab"
    work.mkdir()
    shutil.copy(NOTEBOOK, work / NOTEBOOK.name)  # autosave may write to the copy
    config = tmp_path / "config"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"))
    port = free_port()
    log = open(tmp_path / "lab.log", "w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", "--allow-root",
         "--ip=127.0.0.1", f"--port={port}", f"--ServerApp.token={TOKEN}",
         f"--ServerApp.root_dir={work}",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2):
                    break
            except OSError as error:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start:\n"
                                       + (tmp_path / "lab.log").read_text()[-3000:]) from error
                time.sleep(0.3)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def wait_for_a_settled_kernel(base: str, seconds: float = 2.0, limit: float = 60.0) -> None:
    """Wait until the server has one session whose kernel is idle and has stayed the
    same kernel for ``seconds``: right after a notebook opens, JupyterLab may replace
    its first kernel, and cells queued on that one would be lost."""
    deadline, stable_since, last = time.monotonic() + limit, None, None
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{base}/api/sessions?token={TOKEN}", timeout=5) as reply:
            sessions = json.load(reply)
        kernel = sessions[0]["kernel"] if len(sessions) == 1 else None
        current = kernel["id"] if kernel and kernel["execution_state"] == "idle" else None
        if current is not None and current == last:
            if time.monotonic() - stable_since >= seconds:
                return
        else:
            stable_since, last = time.monotonic(), current
        time.sleep(0.25)
    raise AssertionError(f"the notebook's kernel did not settle in {limit:.0f} s: {sessions}")


def run_all_cells(page, attempts: int = 4) -> None:
    """Run > Run All Cells, until a cell is seen queued or run: on a busy machine a click
    that lands while the kernel is still connecting can be ignored."""
    from playwright.sync_api import expect

    started = page.locator(".jp-InputArea-prompt").filter(has_text=re.compile(r"\[(\*|\d+)\]"))
    for attempt in range(attempts):
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            expect(started.first).to_be_visible(timeout=20_000)
            return
        except AssertionError:
            if attempt == attempts - 1:
                raise
            page.keyboard.press("Escape")  # close the menu if it is still open


def test_widgets_work_live_in_jupyterlab(lab, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu",
                                          "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{lab}/lab/tree/{NOTEBOOK.name}?token={TOKEN}&reset")
            page.wait_for_selector(
                ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']",
                timeout=60_000)
            wait_for_a_settled_kernel(lab)
            run_all_cells(page)

            # the GraphView of section 1: a drawing with boxes
            graph = page.locator(".jp-Cell").filter(has=page.locator(".mg_graph_header")).first
            boxes = graph.locator(".mg_canvas svg g.node")
            try:
                expect(boxes.first).to_be_visible(timeout=90_000)
            except AssertionError:
                page.screenshot(path=str(tmp_path / "failed.png"))
                (tmp_path / "failed.html").write_text(graph.inner_html())
                raise AssertionError(f"no graph drawn; the page is in {tmp_path}") from None
            assert boxes.count() >= 9  # 4 ops, 5 leaves

            # every widget of the tour is live on the page, with its content
            expect(page.locator(".mg_training_monitor")).to_contain_text("50/50",
                                                                          timeout=90_000)
            expect(page.locator(".mg_training_monitor svg").first).to_be_attached()
            expect(page.locator(".mg_gradient_flow svg").first).to_be_attached()
            expect(page.locator(".mg_gradient_flow")).to_contain_text("update 50")
            inspectors = page.locator(".mg_context_inspector")
            expect(inspectors).to_have_count(2)
            expect(inspectors.first).to_contain_text("saved tensors")
            expect(page.locator(".mg_tensor_view")).to_contain_text("gradient")
            expect(page.locator(".mg_backward_stepper .widget-button")).to_have_count(4)
            views = page.locator(".mg_graph_view")
            expect(views.nth(5)).to_contain_text("(a loop)")  # show() of a 5,000-op chain
            expect(views.nth(3)).to_contain_text("retain_graph=True")  # a freed graph
            expect(views.nth(4)).to_contain_text("not computed yet")  # a lazy tensor

            # selecting a node in the dropdown shows its saved tensors
            graph.locator(".widget-dropdown select").first.select_option(index=1)
            inspector = graph.locator(".mg-inspector")
            expect(inspector).to_contain_text("saved tensors", timeout=20_000)
            expect(inspector).to_contain_text("CrossEntropy")
            expect(graph.locator(".mg_canvas svg g.node.mg_selected")).to_have_count(1)

            # clicking a box in the drawing selects it too
            linear = graph.locator(".mg_canvas svg g.node.mg_op").first
            linear_id = linear.get_attribute("id")
            linear.click()
            expect(inspector).to_contain_text("Linear", timeout=20_000)
            expect(graph.locator(f".mg_canvas svg g.node.mg_selected[id='{linear_id}']")) \
                .to_have_count(1, timeout=20_000)

            # the stepper (already run to the end by the next cell): Reset, then each Step
            # moves the highlighted node and changes the gradient shown
            stepper = page.locator(".jp-Cell").filter(has=page.locator(".mg_step_status")).first
            stepper.scroll_into_view_if_needed()
            status = stepper.locator(".mg_step_status")
            expect(status).to_contain_text("Backward done", timeout=30_000)
            stepper.get_by_role("button", name="Reset", exact=True).click()
            expect(status).to_contain_text("Ready", timeout=20_000)
            current = stepper.locator(".mg_canvas svg g.node.mg_current")
            expect(current).to_have_count(0)
            step = stepper.get_by_role("button", name="Step", exact=True)
            step.click()
            expect(current).to_have_count(1, timeout=20_000)
            first_id = current.get_attribute("id")
            detail = stepper.locator(".mg_step_info")
            expect(detail).to_contain_text("the seed", timeout=20_000)
            first_text = detail.inner_text()
            step.click()
            expect(status).to_contain_text("Step 2 of", timeout=20_000)
            expect(current).not_to_have_attribute("id", first_id)
            expect(detail).not_to_have_text(first_text)
            expect(detail).to_contain_text("gradient arriving (from ")

            graph.scroll_into_view_if_needed()
            shot = tmp_path / "widgets.png"
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
            keep = os.environ.get("MINIGRAD_SCREENSHOT")
            if keep:  # e.g. docs/widgets.png, to refresh the README's picture
                stepper.locator(".widget-button").first.evaluate(
                    "button => button.scrollIntoView({block: 'start'})")
                page.mouse.wheel(0, -60)  # a little of the code above the buttons
                page.wait_for_timeout(300)
                page.screenshot(path=keep)
        finally:
            browser.close()
