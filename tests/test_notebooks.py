"""The chapter notebooks are kept the way nbval needs them.

nbval (``pytest --nbval notebooks/``) re-runs every chapter and compares each cell's
output with the saved one. It can only pass meaningfully if the saved notebook was
executed, matches its reviewable ``py:percent`` twin, and is deterministic. These tests
check those three things without running a kernel.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import sys

import pytest

if os.environ.get("MINIGRAD_STRICT") == "1":
    import jupytext  # CI: a missing jupytext must fail, not skip (see conftest.py)
else:
    jupytext = pytest.importorskip("jupytext", reason="pip install jupytext")

NOTEBOOKS_DIR = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
SEED = re.compile(r"\bmg\.manual_seed\(\s*\d+\s*\)")


def chapter_id(path: pathlib.Path) -> str:
    return path.stem


def code_cells(path: pathlib.Path) -> list[dict]:
    """The code cells of a saved notebook, read as plain JSON (no nbformat needed)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [cell for cell in cells if cell["cell_type"] == "code"]


def source(cell) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else text


def cells_to_compare(notebook) -> list[tuple[str, str, list[str]]]:
    """Type, source and tags of each cell: what the .ipynb and the .py must agree on."""
    return [(cell.cell_type, cell.source.strip(), sorted(cell.metadata.get("tags", [])))
            for cell in notebook.cells if cell.cell_type in ("code", "markdown")]


chapters = pytest.mark.parametrize("path", CHAPTERS, ids=chapter_id)


def test_there_are_chapters():
    assert CHAPTERS, f"no notebooks found in {NOTEBOOKS_DIR}"


@chapters
def test_every_code_cell_was_executed(path):
    # nbval runs cells saved without an execution_count but never compares their output,
    # so a notebook committed with cleared outputs would pass while checking nothing
    unexecuted = [i for i, cell in enumerate(code_cells(path))
                  if cell.get("execution_count") is None]
    assert not unexecuted, (
        f"{path.name}: code cells {unexecuted} (counting code cells from 0) have no "
        "execution_count; execute the notebook and save it with its outputs"
    )


@chapters
def test_notebook_is_in_sync_with_its_py_percent_twin(path):
    twin = path.with_suffix(".py")
    assert twin.exists(), f"{path.name} has no paired {twin.name} (jupytext py:percent)"
    saved = jupytext.read(path)
    text = jupytext.read(twin)
    assert saved.metadata.get("jupytext", {}).get("formats") == "ipynb,py:percent", (
        f"{path.name} is not paired: run jupytext --set-formats ipynb,py:percent {twin.name}"
    )
    assert cells_to_compare(saved) == cells_to_compare(text), (
        f"{path.name} and {twin.name} differ: edit the .py, then run "
        f"jupytext --sync {twin.name} and re-execute the notebook"
    )


def test_every_py_percent_chapter_has_its_notebook():
    unpaired = [p.name for p in NOTEBOOKS_DIR.glob("*.py") if not p.with_suffix(".ipynb").exists()]
    assert not unpaired, f"chapters without an executed .ipynb: {unpaired}"


@chapters
def test_first_code_cell_seeds_minigrad(path):
    first = source(code_cells(path)[0])
    assert "import minigrad as mg" in first and SEED.search(first), (
        f"{path.name}: the first code cell must import minigrad as mg and call "
        "mg.manual_seed(<int>), so every run draws the same random numbers"
    )


@chapters
def test_only_cells_tagged_raises_exception_saved_an_error(path):
    # an untagged error stops "Run All" and nbval; a deliberate one is tagged
    untagged = [
        i for i, cell in enumerate(code_cells(path))
        if any(out["output_type"] == "error" for out in cell.get("outputs", []))
        and "raises-exception" not in cell.get("metadata", {}).get("tags", [])
        and "NBVAL_RAISES_EXCEPTION" not in source(cell)
    ]
    assert not untagged, f"{path.name}: code cells {untagged} saved an unexpected error"


@chapters
def test_notebook_uses_the_default_python3_kernel(path):
    metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"]
    assert metadata.get("kernelspec", {}).get("name") == "python3"


@chapters
def test_widget_outputs_are_saved_as_static_pictures(path):
    # a saved widget view needs a kernel (or saved state and a CDN) to show anything;
    # its text/html picture shows everywhere (see scripts/execute_notebooks.py)
    live_only = [i for i, cell in enumerate(code_cells(path)) for output in cell["outputs"]
                 if "application/vnd.jupyter.widget-view+json" in output.get("data", {})]
    assert live_only == [], f"cells {live_only} saved a live widget view instead of a picture"
    metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"]
    assert "widgets" not in metadata


@chapters
def test_stream_outputs_are_saved_joined(path):
    # the kernel sends stdout on a timer, so a cell's prints can arrive in pieces;
    # scripts/execute_notebooks.py joins them, so the saved file is the same on every run
    split = [i for i, cell in enumerate(code_cells(path))
             for a, b in zip(cell["outputs"], cell["outputs"][1:])
             if a["output_type"] == b["output_type"] == "stream" and a["name"] == b["name"]]
    assert split == [], (f"{path.name}: code cells {split} saved one stream in several "
                         "pieces; re-execute with scripts/execute_notebooks.py")


# --- exercises: tags in the .py, nbgrader metadata in the .ipynb -----------------------

sys.path.insert(0, str(NOTEBOOKS_DIR.parent / "course"))
import authoring  # noqa: E402  (course/authoring.py, installed as minigrad.course.authoring)

CHAPTERS_WITH_EXERCISES = [p for p in CHAPTERS if authoring.graded_cells(
    json.loads(p.read_text(encoding="utf-8")))]


def test_chapter_1_has_at_least_four_graded_exercises():
    chapter = NOTEBOOKS_DIR / "01_autograd_from_scratch.ipynb"
    notebook = json.loads(chapter.read_text(encoding="utf-8"))
    solutions = [c for c in notebook["cells"]
                 if (authoring.exercise_role(c) or {}).get("solution")]
    assert len(solutions) >= 4 and len(authoring.graded_cells(notebook)) >= 4


@chapters
def test_exercise_metadata_is_consistent(path):
    # unique grade_ids, points on every graded cell, markers in every solution cell, and
    # nbgrader metadata that matches the tags (scripts/execute_notebooks.py writes it)
    problems = authoring.exercise_problems(json.loads(path.read_text(encoding="utf-8")))
    assert problems == [], f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", CHAPTERS_WITH_EXERCISES, ids=chapter_id)
def test_exercise_tags_survive_the_py_percent_pairing(path):
    # nbgrader metadata itself is filtered out of the .py; the tags it is made from are not
    text = jupytext.read(path.with_suffix(".py"))
    from_text = [authoring.exercise_role(cell) for cell in text.cells]
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert from_text == [cell.get("metadata", {}).get("nbgrader") for cell in saved["cells"]]


@pytest.mark.parametrize("path", CHAPTERS_WITH_EXERCISES, ids=chapter_id)
def test_nbgrader_metadata_survives_jupytext_sync_after_editing_the_py(path, tmp_path):
    import shutil
    import subprocess
    import time

    notebook, text = tmp_path / path.name, tmp_path / path.with_suffix(".py").name
    shutil.copy(path, notebook)
    shutil.copy(path.with_suffix(".py"), text)
    time.sleep(0.01)
    text.write_text(text.read_text(encoding="utf-8") + "\n# %%\n1 + 1\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "jupytext", "--sync", "--quiet", str(text)],
                   check=True)
    synced = json.loads(notebook.read_text(encoding="utf-8"))
    assert "".join(synced["cells"][-1]["source"]) == "1 + 1"  # the edit arrived
    assert authoring.exercise_problems(synced) == []  # and the metadata stayed


@pytest.mark.parametrize("path", CHAPTERS_WITH_EXERCISES, ids=chapter_id)
def test_every_test_cell_passes_in_the_chapter(path):
    # the chapter carries its solutions: each test cell printed its success line
    for cell in code_cells(path):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade"):
            errors = [out for out in cell["outputs"] if out["output_type"] == "error"]
            assert not errors, f"{path.name}: test cell {meta['grade_id']} fails"


def test_a_malformed_or_duplicate_exercise_tag_is_reported():
    def cell(tag, source="# BEGIN SOLUTION\nx = 1\n# END SOLUTION"):
        made = {"cell_type": "code", "source": source, "metadata": {"tags": [tag]}}
        made["metadata"]["nbgrader"] = authoring.exercise_role(made)
        return made

    notebook = {"cells": [cell("solution:a"), cell("solution:a"), cell("tests:b"),
                          cell("solution:c", "x = 1"), cell("tests:d:0", "check()"),
                          cell("", "text that says BEGIN SOLUTION")]}
    problems = "\n".join(authoring.exercise_problems(notebook))
    assert "grade_id 'a' is also used" in problems
    assert "malformed exercise tag" in problems
    assert "needs # BEGIN SOLUTION" in problems
    assert "has no points" in problems
    assert "BEGIN SOLUTION outside a solution cell" in problems
