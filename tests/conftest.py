"""Shared fixtures.

Optional tools (PyTorch as a reference, Graphviz, Chromium) make some tests skip when
they are missing. With MINIGRAD_STRICT=1 (set by .ci/run) a missing tool fails the test
instead, so CI can never pass by skipping.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

import minigrad as mg

STRICT = os.environ.get("MINIGRAD_STRICT") == "1"
# pytest runs one worker per core, and a worker that grades would start one judge per core
# on top: one notebook at a time per worker keeps the chapters' cells within their time
# limits on a busy machine (a grading's own speed is measured by python -m bench grading)
os.environ.setdefault("MINIGRAD_GRADING_JOBS", "1")
# MINIGRAD_GRADE_CHAPTERS=12,13 limits the nbgrader tests (test_grading.py, test_exercise_gate.py)
# to those chapters: an author's quick loop on one chapter. CI grades them all.
GRADE_CHAPTERS = {int(n) for n in os.environ.get("MINIGRAD_GRADE_CHAPTERS", "").split(",") if n}


def graded_here(stem: str) -> bool:
    """Whether the nbgrader tests grade this chapter in this run (all, unless limited)."""
    return not GRADE_CHAPTERS or int(stem.split("_")[0]) in GRADE_CHAPTERS


def need(what: str, reason: str) -> None:
    """Skip (or, in strict mode, fail) because ``what`` is not available."""
    message = f"{what} is not available: {reason}"
    if STRICT:
        pytest.fail(message + " (MINIGRAD_STRICT=1 turns this skip into a failure)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def torch():
    """PyTorch as a reference implementation (pip install torch==2.13.0)."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        need("torch", "pip install torch==2.13.0")


@pytest.fixture(autouse=True, scope="module")
def working_directory_kept_by_the_module():
    """The same check as below for what a module-scoped fixture does (set up before any
    test's own check)."""
    folder = os.getcwd()
    yield
    try:
        moved_to = os.getcwd()
    except FileNotFoundError:
        moved_to = "a folder since deleted"
    if moved_to != folder:
        os.chdir(folder)
        raise AssertionError(f"this module left the working directory at {moved_to}")


@pytest.fixture(autouse=True)
def fresh_state():
    """Every test starts from the default global state and a fixed seed, and leaves the
    working directory where it found it (nbval, in the same worker, reads
    ``notebooks/sanitize.cfg`` relative to it)."""
    mg.manual_seed(0)
    np.random.seed(0)
    folder = os.getcwd()
    yield
    try:
        moved_to = os.getcwd()
    except FileNotFoundError:
        moved_to = "a folder since deleted"
    if moved_to != folder:
        os.chdir(folder)
        raise AssertionError(f"a test left the working directory at {moved_to}")
    assert mg.is_grad_enabled(), "a test left grad mode off"
    assert not mg.is_lazy(), "a test left lazy mode on"
    assert mg.current_group() is None, "a test left a group open"
    assert not mg.is_anomaly_enabled(), "a test left anomaly mode on"


def output_of_two_fresh_processes(script: str) -> tuple[str, str]:
    """What ``script`` prints in two fresh Python processes (with different hash seeds),
    run side by side: a deterministic output is the same twice. Nothing may go to stderr
    (a warning would land in a notebook)."""
    import subprocess
    import sys

    runs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             cwd=os.path.dirname(os.path.dirname(__file__)),
                             env={**os.environ, "PYTHONHASHSEED": seed})
            for seed in ("1", "2")]
    (first, first_err), (second, second_err) = (run.communicate(timeout=120) for run in runs)
    assert (first_err, second_err) == ("", ""), first_err or second_err
    return first, second


@pytest.fixture(autouse=True)
def close_widgets():
    """Widgets a test made are closed after it (their comms would pile up otherwise)."""
    yield
    import sys

    if "ipywidgets" in sys.modules:
        sys.modules["ipywidgets"].Widget.close_all()


def pytest_collection_modifyitems(config, items):
    """nbval: a notebook that draws graphs with the widgets was saved with Graphviz's
    drawings, so without the ``dot`` program its outputs cannot match: skip its cells
    (outside strict mode; CI installs Graphviz, and a mismatch there fails as it should)."""
    import shutil

    if STRICT or shutil.which("dot") is not None:
        return
    for item in items:
        path = str(getattr(item, "path", ""))
        if path.endswith(".ipynb") and "minigrad.widgets" in _notebook_text(path):
            item.add_marker(pytest.mark.skip(
                reason="Graphviz dot is not available: this notebook's saved graphs were "
                       "drawn with it (apt-get install graphviz)"))


_texts: dict[str, str] = {}


def _notebook_text(path: str) -> str:
    if path not in _texts:
        with open(path, encoding="utf-8") as file:
            _texts[path] = file.read()
    return _texts[path]


def fails(check, *args, **kwargs) -> str:
    """The message of the AssertionError ``check`` raises (the test fails if none), on
    one line (messages are wrapped to fit a notebook). ``from conftest import fails``."""
    return " ".join(raw_failure(check, *args, **kwargs).split())


def raw_failure(check, *args, **kwargs) -> str:
    """The message of the AssertionError ``check`` raises, as it is (wrapped)."""
    with pytest.raises(AssertionError) as failure:
        check(*args, **kwargs)
    return str(failure.value)
