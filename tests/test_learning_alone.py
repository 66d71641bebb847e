"""The self-paced student's commands, end to end with real nbgrader, in a temporary
workspace made once (module fixture): ``workspace``, ``status``, ``solution``, ``reset``.

The workspace is made from a copy of ``notebooks/`` so that a test can add a chapter
upstream or change one. The tests run in this file's order (they share the workspace).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import need
from notebook_json import cell_with_id, read_notebook
import minigrad.course as course
from minigrad.course import authoring, cli, student

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TIMEOUT = 20
CHAPTERS = [p for p in sorted(NOTEBOOKS.glob("[0-9]*_*.ipynb"))
            if authoring.graded_cells(json.loads(p.read_text(encoding="utf-8")))]


def _text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        need("nbgrader", "pip install -e '.[grading]'")
    root = tmp_path_factory.mktemp("alone")
    upstream = root / "notebooks"
    shutil.copytree(NOTEBOOKS, upstream, ignore=shutil.ignore_patterns("*.py", "*.md",
                                                                       "*.cfg"))
    folder = root / "my-course"
    with pytest.MonkeyPatch.context() as patch:  # the notebooks' trust: not the user's store
        patch.setenv("JUPYTER_DATA_DIR", str(root / "jupyter-data"))
        assert cli.main(["workspace", str(folder), "--notebooks", str(upstream)]) == 0
        yield {"folder": folder, "upstream": upstream, "chapter": CHAPTERS[0]}


def test_the_workspace_holds_the_exercise_version_of_every_chapter(made):
    folder = made["folder"]
    for source in made["upstream"].glob("*.ipynb"):
        assert (folder / source.name).exists()
    chapter = made["chapter"]
    original, mine = read_notebook(chapter), read_notebook(folder / chapter.name)
    text = (folder / chapter.name).read_text(encoding="utf-8")
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    for grade_id in authoring.exercises(original):  # stubs naming each code exercise
        cell = cell_with_id(mine, grade_id)
        assert f'NotImplementedError("exercise {grade_id}:' in _text(cell)
        assert cell["outputs"] == []
    for grade_id in authoring.graded_cells(original):  # the visible checks are kept
        assert cell_with_id(mine, grade_id)
    kept = [c for c in mine["cells"] if c["cell_type"] == "code" and c["outputs"]
            and not c["metadata"].get("nbgrader")]
    assert kept, "the outputs of the cells that are not exercises are kept"
    manifest = read_notebook(folder / ".minigrad" / "manifest.json")["notebooks"]
    assert manifest[chapter.stem]["exercises"] == student._solution_ids(original)
    assert manifest[chapter.stem]["source_sha256"] == student._sha(
        made["upstream"] / chapter.name)
    # a notebook without exercises is copied as it is, but for the workspace's metadata
    copied = read_notebook(folder / "widgets_tour.ipynb")
    tour = read_notebook(NOTEBOOKS / "widgets_tour.ipynb")
    assert copied["cells"] == tour["cells"]
    assert copied["metadata"] == {**{k: v for k, v in tour["metadata"].items()
                                     if k != "jupytext"},
                                  "kernelspec": mine["metadata"]["kernelspec"]}


def test_solving_an_exercise_is_counted_by_status(made, capsys):
    folder, chapter = made["folder"], made["chapter"]
    exercise = student._solution_ids(read_notebook(chapter))[0]
    mine = read_notebook(folder / chapter.name)
    solved = _text(cell_with_id(read_notebook(chapter), exercise))
    cell_with_id(mine, exercise)["source"] = solved
    (folder / chapter.name).write_text(json.dumps(mine), encoding="utf-8")
    capsys.readouterr()
    assert cli.main(["status", str(folder), "--timeout", str(TIMEOUT)]) == 0
    out = capsys.readouterr().out
    total = len(authoring.exercises(read_notebook(chapter)))  # written questions apart
    line = next(line for line in out.splitlines() if line.startswith(chapter.stem))
    assert f" 1 / {total}" in line and exercise not in line.split("to do:")[1]


def test_next_names_the_first_exercise_still_to_do_from_the_last_check(made, capsys,
                                                                         monkeypatch):
    folder, chapter = made["folder"], made["chapter"]
    first, second = student._solution_ids(read_notebook(chapter))[:2]
    monkeypatch.setattr(student, "check_notebooks", None)  # the notebook did not change:
    capsys.readouterr()                                      # no new check is run
    assert cli.main(["next", str(folder), "--timeout", str(TIMEOUT)]) == 0
    out = capsys.readouterr().out
    assert f"next: exercise {second} of {chapter.stem} (1 of " in out
    index = [i for i, c in enumerate(read_notebook(folder / chapter.name)["cells"])
             if c["metadata"].get("nbgrader", {}).get("grade_id") == second][0]
    assert f"open  {folder / chapter.name}" in out and f"cell {index + 1} of" in out
    assert f"hint {chapter.stem} {second}" in out and first not in out


def test_status_runs_every_changed_notebook_in_one_process(made, monkeypatch):
    calls = []  # importing nbgrader takes as long as a chapter's checks: once, not 12 times

    def check_notebooks(paths, timeout, say=None):
        calls.append(list(paths))
        yield from ((path, set()) for path in paths)

    folder = made["folder"]
    cache = folder / student.HIDDEN / student.CHECKS
    before = cache.read_text(encoding="utf-8") if cache.exists() else None
    monkeypatch.setattr(student, "check_notebooks", check_notebooks)
    chapters = student.check_chapters(folder, TIMEOUT, recheck=True)
    assert len(calls) == 1 and sorted(calls[0]) == sorted(c.path for c in chapters)
    if before is None:  # the other tests' results, as they were
        cache.unlink()
    else:
        cache.write_text(before, encoding="utf-8")


def test_status_in_a_notebook_is_a_table_widget(made, monkeypatch):
    monkeypatch.setattr(student, "check_notebooks", None)  # from the last check
    monkeypatch.chdir(made["folder"])  # where a notebook's kernel runs
    table = course.status(timeout=TIMEOUT)
    chapter = made["chapter"]
    total = len(authoring.exercises(read_notebook(chapter)))  # written questions apart
    text = table._repr_html_()
    assert f"<code>{chapter.stem}</code></td><td" in text and f">1 / {total}<" in text
    bundle = table._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and bundle["text/html"] == text
    assert table.widget.children[0].value == text
    table.button.click()  # checks again (nothing changed: same table)
    assert table.widget.children[0].value == text


def test_an_edited_test_cell_or_a_loaded_reference_is_not_counted(made, tmp_path, capsys):
    folder = tmp_path / "copy"
    shutil.copytree(made["folder"], folder)
    chapter = made["chapter"]
    first, second = student._solution_ids(read_notebook(chapter))[:2]
    path = folder / chapter.name
    mine = read_notebook(path)
    owners = student._owners(read_notebook(folder / ".minigrad" / "exercise" / chapter.name))
    test_of_first = next(g for g, e in owners.items() if e == first and g != first)
    cell_with_id(mine, test_of_first)["source"] = "pass  # no more checks"
    index = mine["cells"].index(cell_with_id(mine, second))
    mine["cells"].insert(index + 1, {"cell_type": "code", "execution_count": None,
                                     "id": "loads-a-reference",
                                     "metadata": {}, "outputs": [], "source":
                                     f'from minigrad.course import use_reference\n'
                                     f'use_reference("{second}")'})
    path.write_text(json.dumps(mine), encoding="utf-8")
    capsys.readouterr()
    assert cli.main(["status", str(folder), "--timeout", str(TIMEOUT)]) == 0
    captured = capsys.readouterr()
    line = next(line for line in captured.out.splitlines() if line.startswith(chapter.stem))
    assert " 0 / " in line and first in line and second in line
    assert f"the locked cell {test_of_first} was edited" in captured.err
    assert f"exercise {second} is not counted: use_reference({second}) loads the " \
        "reference answer" in captured.err
    # the reference did run in the fresh kernel: the second exercise's checks passed
    failed = read_notebook(folder / ".minigrad" / "checks.json")[chapter.stem]["failed"]
    tests_of_second = [_text(c) for c in mine["cells"] if owners.get(
        c["metadata"].get("nbgrader", {}).get("grade_id")) == second
        and c["metadata"]["nbgrader"].get("grade")]
    assert tests_of_second and not set(tests_of_second) & set(failed)
    # the edited test cell is restored alone; the student's solution stays
    solved = _text(cell_with_id(mine, first))
    assert cli.main(["reset", chapter.stem, test_of_first, "--workspace", str(folder)]) == 0
    restored = read_notebook(path)
    assert cell_with_id(restored, test_of_first) == cell_with_id(
        read_notebook(folder / ".minigrad" / "exercise" / chapter.name), test_of_first)
    assert _text(cell_with_id(restored, first)) == solved
    assert student.changed_test_cells(read_notebook(folder / ".minigrad" / "exercise" /
                                            chapter.name), restored) == ([], [])
    # a deleted test cell is put back in its place
    restored["cells"].remove(cell_with_id(restored, test_of_first))
    path.write_text(json.dumps(restored), encoding="utf-8")
    assert student.changed_test_cells(read_notebook(folder / ".minigrad" / "exercise" /
                                            chapter.name), restored)[1] == [test_of_first]
    assert cli.main(["reset", chapter.stem, test_of_first, "--workspace", str(folder)]) == 0
    again = read_notebook(path)["cells"]
    ids = [c["metadata"].get("nbgrader", {}).get("grade_id") for c in again]
    assert ids.index(test_of_first) == ids.index(first) + 1


def test_hint_gives_the_next_step_each_time_then_points_to_the_solution(made, capsys):
    folder, chapter = made["folder"], made["chapter"]
    exercise = student._solution_ids(read_notebook(chapter))[0]
    steps = student.read_hints(NOTEBOOKS / "hints" / f"{chapter.stem}.toml")[exercise]
    number = str(int(chapter.stem.split("_")[0]))
    outputs = []
    for _ in range(len(steps) + 1):
        capsys.readouterr()
        assert cli.main(["hint", number, exercise, "--workspace", str(folder)]) == 0
        outputs.append(" ".join(capsys.readouterr().out.split()))
    for i, step in enumerate(steps):
        assert f"hint {i + 1} of {len(steps)} for exercise {exercise}" in outputs[i]
        assert " ".join(step.split()) in outputs[i]
        assert all(" ".join(s.split()) not in outputs[i] for s in steps[i + 1:])
    assert "That was the last hint" in outputs[len(steps) - 1]
    assert f"minigrad-course solution {chapter.stem.split('_')[0]} {exercise}" in outputs[-1]
    assert f"You have seen all {len(steps)} hints" in outputs[-1]
    seen = read_notebook(folder / ".minigrad" / "hints.json")
    assert seen[chapter.stem][exercise] == len(steps)
    assert cli.main(["hint", number, "nope", "--workspace", str(folder)]) == 2
    assert "no exercise 'nope'" in capsys.readouterr().err


def test_running_workspace_again_keeps_the_student_s_work_and_reports_changes(made,
                                                                                capsys):
    folder, upstream, chapter = made["folder"], made["upstream"], made["chapter"]
    before = (folder / chapter.name).read_bytes()
    # upstream: a chapter added, and one changed (neither with exercises: no nbgrader run)
    shutil.copy2(upstream / "widgets_tour.ipynb", upstream / "99_added.ipynb")
    tour = read_notebook(upstream / "widgets_tour.ipynb")
    tour["cells"][0]["source"] = "# changed upstream\n"
    (upstream / "widgets_tour.ipynb").write_text(json.dumps(tour), encoding="utf-8")
    mine_tour = read_notebook(folder / "widgets_tour.ipynb")
    mine_tour["cells"][0]["source"] = "my notes"
    (folder / "widgets_tour.ipynb").write_text(json.dumps(mine_tour), encoding="utf-8")
    capsys.readouterr()
    assert cli.main(["workspace", str(folder), "--notebooks", str(upstream)]) == 0
    out = capsys.readouterr().out
    assert (folder / chapter.name).read_bytes() == before
    assert f"{chapter.name}: up to date" in out
    assert (folder / "99_added.ipynb").exists() and "99_added.ipynb: made" in out
    assert "widgets_tour.ipynb: changed upstream" in out and "reset widgets_tour" in out
    assert read_notebook(folder / "widgets_tour.ipynb")["cells"][0]["source"] == "my notes"
    # reset takes the update, keeping a backup of the student's copy
    assert cli.main(["reset", "widgets_tour", "--workspace", str(folder)]) == 0
    first = read_notebook(folder / "widgets_tour.ipynb")["cells"][0]
    assert first["source"] == "# changed upstream\n"
    backups = list((folder / ".minigrad" / "backups").glob("widgets_tour.*.ipynb"))
    assert [read_notebook(b)["cells"][0]["source"] for b in backups] == ["my notes"]
    capsys.readouterr()
    assert cli.main(["workspace", str(folder), "--notebooks", str(upstream)]) == 0
    assert "widgets_tour.ipynb: up to date" in capsys.readouterr().out


def test_reset_restores_an_exercise_with_a_backup(made):
    folder, chapter = made["folder"], made["chapter"]
    exercise = student._solution_ids(read_notebook(chapter))[0]
    solved = _text(cell_with_id(read_notebook(folder / chapter.name), exercise))
    assert "NotImplementedError" not in solved  # solved by the test above
    stub = cell_with_id(read_notebook(folder / ".minigrad" / "exercise" / chapter.name), exercise)
    assert cli.main(["reset", str(int(chapter.stem.split("_")[0])), exercise,
                     "--workspace", str(folder)]) == 0
    assert cell_with_id(read_notebook(folder / chapter.name), exercise) == stub
    (backup,) = (folder / ".minigrad" / "backups").glob(f"{chapter.stem}.*.ipynb")
    assert _text(cell_with_id(read_notebook(backup), exercise)) == solved


def test_solution_prints_the_reference_answer(capsys):
    chapter = CHAPTERS[0]
    exercise = student._solution_ids(read_notebook(chapter))[0]
    assert cli.main(["solution", chapter.stem, exercise]) == 0
    out = capsys.readouterr().out
    answer = [line for line in _text(cell_with_id(read_notebook(chapter), exercise)).splitlines()
              if "SOLUTION" not in line]
    assert "\n".join(answer) in out and "BEGIN SOLUTION" not in out


def test_an_unknown_chapter_or_exercise_is_named(capsys):
    assert cli.main(["solution", "42", "mymul"]) == 2
    err = capsys.readouterr().err
    assert "no chapter '42'" in err and CHAPTERS[0].stem in err
    assert cli.main(["solution", CHAPTERS[0].stem, "nope"]) == 2
    err = capsys.readouterr().err
    first_exercise = student._solution_ids(read_notebook(CHAPTERS[0]))[0]
    assert "no exercise 'nope'" in err and first_exercise in err


def test_hint_and_solution_follow_the_chapters_when_they_move(made, tmp_path, capsys):
    folder = tmp_path / "copy"
    shutil.copytree(made["folder"], folder, ignore=shutil.ignore_patterns("hints.json"))
    chapter = made["chapter"]
    exercise = student._solution_ids(read_notebook(chapter))[0]
    manifest_path = folder / ".minigrad" / "manifest.json"
    manifest = read_notebook(manifest_path)
    for entry in manifest["notebooks"].values():  # the chapters it was made from, moved
        entry["source"] = str(tmp_path / "gone" / pathlib.Path(entry["source"]).name)
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    capsys.readouterr()
    # hint and solution: this installation's chapters
    assert cli.main(["hint", chapter.stem, exercise, "--workspace", str(folder)]) == 0
    assert "hint 1 of" in capsys.readouterr().out
    assert cli.main(["solution", chapter.stem, exercise, "--workspace", str(folder)]) == 0
    assert f"reference answer to exercise {exercise}" in capsys.readouterr().out
    # a chapter this installation does not have: say what happened and how to recover
    manifest["notebooks"]["09_new"] = {**manifest["notebooks"][chapter.stem],
                                       "source": str(tmp_path / "gone" / "09_new.ipynb")}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    assert cli.main(["hint", "09_new", exercise, "--workspace", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"no longer in {tmp_path / 'gone'} (moved?)" in err
    assert f"minigrad-course workspace {folder} --notebooks" in err
    # workspace --notebooks points the workspace at the chapters' new place
    del manifest["notebooks"]["09_new"]
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    assert cli.main(["workspace", str(folder), "--notebooks", str(made["upstream"])]) == 0
    assert read_notebook(manifest_path)["notebooks"][chapter.stem]["source"] == \
        str(made["upstream"] / chapter.name)


def test_a_missing_workspace_says_how_to_make_one(tmp_path, capsys):
    assert cli.main(["status", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "no workspace in" in err and "minigrad-course workspace" in err
    for command in (["next", str(tmp_path / "nowhere")],
                    ["hint", "1", "mymul", "--workspace", str(tmp_path / "nowhere")]):
        assert cli.main(command) == 2
        assert "no workspace in" in capsys.readouterr().err


def test_a_broken_notebook_gets_a_clear_message_and_is_kept(made, tmp_path, capsys):
    folder = tmp_path / "copy"
    shutil.copytree(made["folder"], folder)
    chapter = made["chapter"]
    path = folder / chapter.name
    broken = path.read_text(encoding="utf-8")[:500]
    path.write_text(broken, encoding="utf-8")
    capsys.readouterr()
    # (the same time limit as the other tests: the other chapters' last checks are used)
    assert cli.main(["status", str(folder), "--timeout", str(TIMEOUT)]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and "not a readable notebook" in err
    assert f"minigrad-course reset {chapter.stem}" in err
    assert cli.main(["next", str(folder), "--timeout", str(TIMEOUT)]) == 1  # repair first
    err = capsys.readouterr().err
    assert f"repair {chapter.name} first" in err and "not a readable notebook" in err
    exercise = student._solution_ids(read_notebook(chapter))[0]
    assert cli.main(["reset", chapter.stem, exercise, "--workspace", str(folder)]) == 2
    assert "not a readable notebook" in capsys.readouterr().err
    assert cli.main(["workspace", str(folder), "--notebooks", str(made["upstream"])]) == 0
    assert path.read_text(encoding="utf-8") == broken  # nothing of the student's lost
    assert cli.main(["reset", chapter.stem, "--workspace", str(folder)]) == 0
    assert read_notebook(path) == read_notebook(folder / ".minigrad" / "exercise" / chapter.name)
    assert broken in [b.read_text(encoding="utf-8")
                      for b in (folder / ".minigrad" / "backups").glob("*.ipynb")]


def _nb(*cells: tuple[str, str, str]) -> dict:
    """A notebook of (kind, grade_id, source) cells: kind "solution" or "tests"."""
    return {"cells": [{"cell_type": "code", "source": source, "outputs": [],
                       "metadata": {"nbgrader": {"grade_id": grade_id,
                                                 "solution": kind == "solution",
                                                 "grade": kind == "tests"}}}
                      for kind, grade_id, source in cells]}


def test_progress_counts_an_exercise_only_when_all_its_visible_checks_are_there_and_pass():
    version = _nb(("solution", "a", "raise NotImplementedError"), ("tests", "a-tests", "ta()"),
                  ("solution", "b", "raise NotImplementedError"), ("tests", "b-tests", "tb()"),
                  ("tests", "b-more-tests", "# hidden in this copy\n"))
    assert student.progress(version, version, set()) == {"a": True, "b": True}
    assert student.progress(version, version, {"tb()"}) == {"a": True, "b": False}
    # the solution cell of a deleted: its test still counts for a, not for the one before
    no_solution = {"cells": [c for c in version["cells"]
                             if c["metadata"]["nbgrader"]["grade_id"] != "a"]}
    assert student.progress(version, no_solution, {"ta()"}) == {"a": False, "b": True}
    # a deleted test cell: its exercise is not counted
    no_test = {"cells": [c for c in version["cells"]
                         if c["metadata"]["nbgrader"]["grade_id"] != "b-tests"]}
    assert student.progress(version, no_test, set()) == {"a": True, "b": False}


HINT_FILES = sorted((NOTEBOOKS / "hints").glob("*.toml"))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_exercise_has_hints_in_two_steps_or_more(chapter):
    path = NOTEBOOKS / "hints" / f"{chapter.stem}.toml"
    assert path.exists(), f"write the hints of {chapter.stem}'s exercises in {path}"
    hints = student.read_hints(path)
    for exercise in student._solution_ids(read_notebook(chapter)):
        assert len(hints.get(exercise, [])) >= 2, f"{path}: [{exercise}] needs 2+ hints"


def test_hints_read_on_python_3_10_with_tomli(monkeypatch):
    # Python 3.10 has no tomllib: the package depends on tomli there, and read_hints uses it
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as file:
        project = tomllib.load(file)["project"]
    assert "tomli>=1.1; python_version < '3.11'" in project["dependencies"]
    assert project["requires-python"] == ">=3.10"
    path = NOTEBOOKS / "hints" / f"{CHAPTERS[0].stem}.toml"
    expected = student.read_hints(path)
    monkeypatch.setattr(sys, "version_info", (3, 10, 14, "final", 0))
    monkeypatch.setitem(sys.modules, "tomli", tomllib)  # the same API, under its 3.10 name
    assert student.read_hints(path) == expected
    monkeypatch.setitem(sys.modules, "tomli", None)  # not installed
    with pytest.raises(student.CourseError, match="pip install tomli"):
        student.read_hints(path)


@pytest.mark.parametrize("path", HINT_FILES, ids=lambda p: p.name)
def test_no_hint_file_names_an_unknown_chapter_or_exercise(path):
    chapter = NOTEBOOKS / f"{path.stem}.ipynb"
    assert chapter.exists(), f"{path.name}: no chapter {chapter.name}"
    unknown = set(student.read_hints(path)) - set(student._solution_ids(read_notebook(chapter)))
    assert not unknown, f"{path.name}: no exercise {sorted(unknown)} in {chapter.name}"


HINT_COMMAND = re.compile(r"minigrad-course hint (\d+) ([\w-]+)")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_tells_how_to_get_a_hint_and_names_its_own_exercises(chapter):
    """The intro shows ``minigrad-course hint N ID`` with this chapter's number and one of
    its exercises, and every ``use_reference("ID")`` its text suggests loads one of its
    own exercises (the names a student copies must work)."""
    notebook = read_notebook(chapter)
    exercises = set(student._solution_ids(notebook))
    markdown = [_text(c) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    intro = "\n".join(markdown[:2])
    commands = HINT_COMMAND.findall(intro)
    assert commands, f"{chapter.name}: its intro should show `minigrad-course hint`"
    for number, exercise in commands:
        assert int(number) == int(chapter.stem[:2]), f"{chapter.name}: hint {number}"
        assert exercise in exercises, f"{chapter.name}: hint {number} {exercise}: no such exercise"
    suggested = {name for text in markdown
                 for name in re.findall(r"""use_reference\(\s*["']([^"']+)["']""", text)}
    assert suggested <= exercises, f"{chapter.name}: use_reference of {suggested - exercises}"


def test_use_reference_defines_the_reference_answer_in_the_caller(capsys):
    from minigrad.course.notebook import _defined_names, reference_source

    chapter = CHAPTERS[0]
    exercise = student._solution_ids(read_notebook(chapter))[0]
    stem, code = reference_source(exercise, chapter.stem)
    namespace = {"__name__": "notebook"}
    exec("import numpy as np\nimport minigrad as mg\nfrom minigrad.course import "
         f"use_reference\nuse_reference({exercise!r})", namespace)
    names = _defined_names(code)
    assert stem == chapter.stem and names and all(n in namespace for n in names)
    assert "BEGIN SOLUTION" not in code
    out = capsys.readouterr().out
    assert f"reference answer to exercise {exercise}" in out and "not your work" in out
    with pytest.raises(LookupError, match="no exercise 'nope'"):
        course.use_reference("nope")


def test_lab_sh_makes_the_workspace_once_and_opens_it_at_chapter_00(tmp_path):
    # the repository in miniature, with a .venv whose pip and jupyter are stand-ins
    # (the workspace is made by the real minigrad-course)
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "lab.sh", repo / "scripts" / "lab.sh")
    (repo / "course").mkdir()
    shutil.copy2(ROOT / "course" / "one_thread.env", repo / "course" / "one_thread.env")
    shutil.copy2(ROOT / "pyproject.toml", repo / "pyproject.toml")
    (repo / "notebooks").mkdir()
    chapter = next(c for c in CHAPTERS if not c.name.startswith("00_"))  # and a stand-in 00:
    shutil.copy2(chapter, repo / "notebooks")
    shutil.copy2(NOTEBOOKS / "widgets_tour.ipynb", repo / "notebooks" / "00_welcome.ipynb")
    bin_ = repo / ".venv" / "bin"
    bin_.mkdir(parents=True)
    course_command = pathlib.Path(sys.executable).parent / "minigrad-course"
    for name, text in {"python": "exit 0\n",  # pip install: nothing to do here
                       "minigrad-course": f'exec "{course_command}" "$@"\n',
                       "jupyter": 'echo "$@" > "$(dirname "$0")/jupyter-args"\n'
                                  'echo "$JUPYTER_CONFIG_PATH" > "$(dirname "$0")/config-path"\n'
                                  'echo "$PATH" > "$(dirname "$0")/path"\n'
                                  'echo "$OPENBLAS_NUM_THREADS $OMP_NUM_THREADS '
                                  '$MKL_NUM_THREADS" > "$(dirname "$0")/threads"\n'
                       }.items():
        (bin_ / name).write_text("#!/bin/sh\n" + text)
        (bin_ / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in (
        "VIRTUAL_ENV", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "jupyter-data")  # the notebooks' trust
    run = subprocess.run(["bash", "scripts/lab.sh", "--port", "8999"], cwd=repo,
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    # it says what it is doing while it sets up (not half a minute of silence)
    said = [line for line in run.stdout.splitlines() if line.startswith("lab.sh: ")]
    assert [line.split()[1] for line in said] == ["installing", "your", "opening"], said
    assert "my-course/00_welcome.ipynb" in said[-1]
    args = (bin_ / "jupyter-args").read_text().split()
    assert args[:3] == ["lab", "--ServerApp.root_dir=my-course",
                        "--LabApp.default_url=/lab/tree/00_welcome.ipynb"]
    assert args[-2:] == ["--port", "8999"]
    # the student's lab reads student-lab/ (no teacher menus: see the test below)
    assert (bin_ / "config-path").read_text().strip().split(":")[0] == str(repo / "student-lab")
    # its terminals find minigrad-course, and it runs (as its kernels) with one BLAS thread
    assert (bin_ / "path").read_text().split(":")[0] == str(bin_)
    assert (bin_ / "threads").read_text().split() == ["1", "1", "1"]
    mine = repo / "my-course" / chapter.name
    assert "BEGIN SOLUTION" not in mine.read_text() and "NotImplementedError" in mine.read_text()
    mine.write_text(mine.read_text().replace("NotImplementedError", "NotImplementedError "))
    before = mine.read_bytes()
    again = subprocess.run(["bash", "scripts/lab.sh"], cwd=repo, capture_output=True,
                           text=True, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert mine.read_bytes() == before and f"{chapter.name}: up to date" in again.stdout
    # the second time, nothing to install (pyproject.toml unchanged): no pip run
    assert "lab.sh: .venv/ has minigrad" in again.stdout and "installing" not in again.stdout
    (repo / "pyproject.toml").write_text("# changed\n" + (ROOT / "pyproject.toml").read_text())
    third = subprocess.run(["bash", "scripts/lab.sh"], cwd=repo, capture_output=True,
                           text=True, env=env)
    assert third.returncode == 0 and "lab.sh: installing" in third.stdout, third.stderr


TEACHER_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                   "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:assignment-list",
                   "@jupyter/nbgrader:menu"]


def test_the_student_s_lab_has_no_teacher_menus_and_keeps_validate(tmp_path):
    # the lab as Binder starts it (binder/start; scripts/lab.sh sets the same folder):
    # nbgrader's teacher plugins are disabled in the page and their server extensions not
    # loaded, while its validate button and its server side stay
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        need("nbgrader", "pip install -e '.[grading]'")
    lab = pathlib.Path(sys.executable).parent / "jupyter-lab"
    if not lab.exists():
        need("jupyterlab", "pip install -e '.[jupyter]'")
    import http.client
    import signal
    import socket
    import time
    import urllib.error
    import urllib.request

    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    env.update(JUPYTER_CONFIG_DIR=str(tmp_path / "user-config"),  # not the machine's user's
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    token = "minigrad-student-lab"
    log = open(tmp_path / "lab.log", "w")

    def get(path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"{base}{path}?token={token}&version="
                                        f"{nbgrader.__version__}", timeout=10) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, ""

    def stop(server: subprocess.Popen) -> None:
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=20)
        except ProcessLookupError:  # it had exited (its port was taken)
            server.wait()
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()

    # a free port can be taken between finding it and the lab binding it (by a kernel of
    # a notebook test running alongside: its ZMQ socket answers HTTP with garbage), so the
    # lab must not move to another port, and a taken port means trying a new one
    for _attempt in range(3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            ["bash", str(ROOT / "binder" / "start"), str(lab), "--no-browser", "--allow-root",
             "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while True:
            try:
                get("/api/status")
                break
            except http.client.HTTPException:  # something else answers on that port
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.3)
        if server.poll() is None:
            try:
                if get("/api/status")[0] == 200:
                    break
            except (OSError, http.client.HTTPException):
                pass
        stop(server)
    else:
        log.close()
        pytest.fail("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:])

    try:
        status, page = get("/lab")
        assert status == 200
        config = json.loads(re.search(r'<script id="jupyter-config-data" '
                                      r'type="application/json">(.*?)</script>', page,
                                      re.S).group(1))
        assert set(TEACHER_PLUGINS) <= set(config["disabledExtensions"])
        # and no "Jupyter news" pop-up over the chapter
        assert "@jupyterlab/apputils-extension:announcements" in config["disabledExtensions"]
        assert "@jupyter/nbgrader:validate-assignment" not in config["disabledExtensions"]
        assert get("/formgrader")[0] == 404  # the formgrader's server side is not there
        assert get("/formgraders")[0] == 404  # nor the course list's
        assert get("/nbgrader_version")[0] == 200  # validate's is
    finally:
        stop(server)
        log.close()
