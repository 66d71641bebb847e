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
            run_all_cells(page)

            # the GraphView of section 1: a drawing with boxes
            graph = page.locator(".jp-Cell").filter(has=page.locator(".mg_graph_header")).first
            boxes = graph.locator(".mg_canvas svg g.node")
            expect(boxes.first).to_be_visible(timeout=90_000)
            assert boxes.count() >= 9  # 4 ops, 5 leaves

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
            first_text = stepper.locator(".mg_step_info").inner_text()
            assert "the seed" in first_text
            step.click()
            expect(status).to_contain_text("Step 2 of", timeout=20_000)
            expect(current).not_to_have_attribute("id", first_id)
            expect(stepper.locator(".mg_step_info")).not_to_have_text(first_text)
            assert "gradient arriving" in stepper.locator(".mg_step_info").inner_text()

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
