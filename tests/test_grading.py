"""Grading the chapters' exercises with real nbgrader, through ``minigrad-course``.

One course holds every chapter with exercises and a whole class of returned notebooks:
the chapter itself (full marks), the blank copy students get (zero), one notebook per
classic mistake (partial marks, and the feedback names the mistake); and, for three of the
chapters (``MACHINERY``), one that loops forever (cut off by the time limit), a truncated
file, one with deleted and edited test cells (a clear note for that student), one saved
with widget output and one with a cell of its own after the last check. It is built once
(module fixture) and graded with one ``minigrad-course grade``.
"""

from __future__ import annotations

import copy
import csv
import html
import json
import os
import pathlib
import re
import sys

import pytest

from conftest import STRICT, graded_here
from notebook_json import read_notebook

if not STRICT:
    pytest.importorskip("nbgrader", reason="pip install -e '.[grading]'")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
from minigrad.course import authoring, cli  # noqa: E402

TIMEOUT = 10  # seconds a cell may run while grading, here

from mistakes import MISTAKES  # noqa: E402  (tests/mistakes/NN_name.py, one file a chapter)


CHAPTERS = [p for p in sorted(NOTEBOOKS.glob("[0-9]*_*.ipynb"))
            if graded_here(p.stem) and authoring.graded_cells(read_notebook(p))]
chapters = pytest.mark.parametrize("chapter", [p.stem for p in CHAPTERS])
# The cases that test the grading itself, not a chapter's checks (a loop, a broken file,
# deleted test cells, widget output, a cell after the last check): on three chapters,
# the first, a middle one and the last, rather than on every one.
MACHINERY = sorted({CHAPTERS[i].stem for i in (0, len(CHAPTERS) // 2, -1)}) if CHAPTERS else []
machinery = pytest.mark.parametrize("chapter", MACHINERY)


def _without_outputs(notebook: dict) -> dict:
    notebook = copy.deepcopy(notebook)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return notebook


def _with_cell(notebook: dict, grade_id: str, source: str) -> dict:
    notebook = copy.deepcopy(notebook)
    (cell,) = [c for c in notebook["cells"]
               if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
    cell["source"] = source.lstrip("\n")
    return notebook


def _cells(notebook: dict, solution: bool) -> list[str]:
    """The grade_ids of the code exercises' solution (or test) cells (not the written
    questions')."""
    return [c["metadata"]["nbgrader"]["grade_id"] for c in notebook["cells"]
            if c["metadata"].get("nbgrader", {}).get("solution" if solution else "grade")
            and not authoring.is_written(c)]


def _class(chapter: pathlib.Path, release: pathlib.Path) -> dict[str, str | dict]:
    """``{student: notebook}``: what each student of this chapter returns."""
    number = chapter.stem.split("_")[0]
    source = read_notebook(chapter)
    solved = _without_outputs(source)
    blank = read_notebook(release / chapter.stem / chapter.name)
    returned = {"perfect": solved, "blank": blank}
    for name, (grade_id, wrong, _) in MISTAKES.get(chapter.stem, {}).items():
        returned[name] = _with_cell(solved, grade_id, wrong)
    if chapter.stem not in MACHINERY:
        return {f"c{number}-{name}": notebook for name, notebook in returned.items()}
    last_solution = _cells(source, solution=True)[-1]
    returned["loop"] = _with_cell(solved, last_solution, "while True:\n    pass\n")
    returned["truncated"] = json.dumps(solved)[:len(json.dumps(solved)) // 2]
    tampered = copy.deepcopy(solved)
    first_test, *other_tests = _cells(source, solution=False)
    tampered["cells"] = [c for c in tampered["cells"]
                         if c["metadata"].get("nbgrader", {}).get("grade_id") != first_test]
    if other_tests:
        tampered = _with_cell(tampered, other_tests[0], "pass  # the test is gone")
    returned["tampered"] = tampered
    widgets = copy.deepcopy(source)  # the executed chapter, plus a live widget's output
    view = {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": "VBox()", "application/vnd.jupyter.widget-view+json":
                     {"model_id": "0" * 32, "version_major": 2, "version_minor": 0}}}
    next(c for c in widgets["cells"] if c["cell_type"] == "code")["outputs"].append(view)
    widgets["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {}, "version_major": 2, "version_minor": 0}}
    returned["widgets"] = widgets
    after = copy.deepcopy(solved)  # a cell of the student's own after the last check
    after["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [],
                           "execution_count": None, "source": "while True:\n    pass\n"})
    returned["after"] = after
    return {f"c{number}-{name}": notebook for name, notebook in returned.items()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A course with every chapter that has exercises, released, a class returned in
    the one-folder-per-student layout, collected and graded once."""
    root = tmp_path_factory.mktemp("course")
    course = root / "course"
    run = _runner(course)
    assert run("init", str(course), "--timeout", str(TIMEOUT),
               "--chapters", ",".join(str(int(p.stem.split("_")[0])) for p in CHAPTERS)) == 0
    assert run("release") == 0
    submissions = root / "returned"
    students = {}
    for chapter in CHAPTERS:
        for student, notebook in _class(chapter, course / "release").items():
            folder = submissions / student
            folder.mkdir(parents=True)
            text = notebook if isinstance(notebook, str) else json.dumps(notebook)
            (folder / chapter.name).write_text(text, encoding="utf-8")
            students[student] = chapter.stem
    assert run("collect", str(submissions)) == 0
    assert run("grade") == 0
    assert run("export", str(root / "grades.csv")) == 0
    with open(root / "grades.csv", newline="", encoding="utf-8") as file:
        rows = {(r["student"], r["assignment"]): r for r in csv.DictReader(file)}
    return {"course": course, "rows": rows, "students": students, "run": run}


def _runner(course: pathlib.Path):
    def run(*args: str) -> int:
        command = list(args)
        if command[0] not in ("init", "check"):
            command += ["--course", str(course)]
        return cli.main(command)

    return run


def _row(graded, chapter: str, name: str) -> dict:
    number = chapter.split("_")[0]
    return graded["rows"][(f"c{number}-{name}", chapter)]


def _feedback(graded, chapter: str, name: str) -> str:
    """The feedback page's text, without tags and with whitespace collapsed."""
    number = chapter.split("_")[0]
    path = graded["course"] / "feedback" / f"c{number}-{name}" / chapter / f"{chapter}.html"
    text = re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))
    return " ".join(html.unescape(text).split())


def _max(chapter: str) -> float:
    """The automatic points (the written questions wait for the teacher's)."""
    return sum(authoring.graded_cells(read_notebook(NOTEBOOKS / f"{chapter}.ipynb")).values())


def _answered(chapter: str) -> str:
    """The status of a notebook made from the chapter itself, its written answers
    filled in: complete once the teacher has graded them by hand."""
    written = authoring.written_questions(read_notebook(NOTEBOOKS / f"{chapter}.ipynb"))
    return "needs manual grading" if written else "graded"


@chapters
def test_the_chapter_itself_gets_full_marks(graded, chapter):
    row = _row(graded, chapter, "perfect")
    assert (row["status"], float(row["score"]), row["note"]) == \
        (_answered(chapter), _max(chapter), "")
    for question in authoring.written_questions(read_notebook(NOTEBOOKS / f"{chapter}.ipynb")):
        assert row[question] == "pending"  # for the teacher to grade, not a silent 0
    assert "right" in _feedback(graded, chapter, "perfect")


@chapters
def test_the_blank_copy_gets_zero_and_says_where_to_write(graded, chapter):
    row = _row(graded, chapter, "blank")
    assert (row["status"], float(row["score"])) == ("graded", 0.0)
    for question in authoring.written_questions(read_notebook(NOTEBOOKS / f"{chapter}.ipynb")):
        assert row[question] == "0"  # left as handed out: nbgrader's "No response"
    assert "Write your solution where the exercise says so" in _feedback(graded, chapter,
                                                                         "blank")


def _mistakes():
    return [(chapter, name) for chapter, table in MISTAKES.items() if graded_here(chapter)
            for name in table]


def _cell_scores(graded, chapter: str, name: str) -> dict[str, float]:
    """``{test cell: score}`` of one returned notebook, from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    number = chapter.split("_")[0]
    with Gradebook(f"sqlite:///{graded['course'] / 'gradebook.db'}") as gradebook:
        submitted = gradebook.find_submission_notebook(chapter, chapter, f"c{number}-{name}")
        return {grade.name: grade.score for grade in submitted.grades}


@pytest.mark.parametrize("chapter, mistake", _mistakes())
def test_a_classic_mistake_gets_partial_marks_and_its_name_in_the_feedback(graded, chapter,
                                                                           mistake):
    row = _row(graded, chapter, mistake)
    assert row["status"] == _answered(chapter)
    assert 0 < float(row["score"]) < _max(chapter)
    words = MISTAKES[chapter][mistake][2]
    assert words in _feedback(graded, chapter, mistake)


@pytest.mark.parametrize("chapter, mistake", _mistakes())
def test_a_classic_mistake_loses_points_on_its_own_exercise_s_checks_only(graded, chapter,
                                                                          mistake):
    # Part of the exercise gate (tests/test_exercise_gate.py), graded here so that each
    # mistake runs once under nbgrader: the gate's own rule says which checks belong to
    # the exercise and which may lose points with it (an exercise whose answer uses this
    # one's), so the checks are seen to test what the student wrote.
    from test_exercise_gate import _allowed_to_lose

    exercise = MISTAKES[chapter][mistake][0]
    must, may = _allowed_to_lose(chapter, exercise)
    points = authoring.graded_cells(read_notebook(NOTEBOOKS / f"{chapter}.ipynb"))
    scores = _cell_scores(graded, chapter, mistake)
    written = authoring.written_questions(read_notebook(NOTEBOOKS / f"{chapter}.ipynb"))
    assert set(scores) == set(points) | set(written)
    lost = {cell: points[cell] - scores[cell] for cell in points if scores[cell] < points[cell]}
    assert set(lost) & must, f"{mistake}: the checks of {exercise} ({sorted(must)}) kept " \
        "all their points"
    assert set(lost) <= must | may, f"{mistake}: other exercises' checks lost points " \
        f"{ {c: p for c, p in lost.items() if c not in must | may} }"


@chapters
def test_every_chapter_with_exercises_has_classic_mistakes_to_grade(chapter):
    solutions = _cells(read_notebook(NOTEBOOKS / f"{chapter}.ipynb"), solution=True)
    table = MISTAKES.get(chapter, {})
    assert table, f"add {chapter}'s classic mistakes: tests/mistakes/{chapter}.py"
    assert {grade_id for grade_id, _, _ in table.values()} <= set(solutions)


@machinery
def test_an_endless_loop_is_cut_off_and_the_rest_is_graded(graded, chapter):
    row = _row(graded, chapter, "loop")
    assert row["status"] == _answered(chapter) and 0 < float(row["score"]) < _max(chapter)
    assert "CellTimeoutError" in _feedback(graded, chapter, "loop")
    # the teacher's table and the student's page say which cell was stopped, and why
    last = _cells(read_notebook(NOTEBOOKS / f"{chapter}.ipynb"), solution=True)[-1]
    assert f"'{last}' ran past the time limit" in row["note"]
    assert f"Note from grading: '{last}' ran past the time limit" in _feedback(graded, chapter,
                                                                              "loop")


@machinery
def test_a_truncated_notebook_gets_a_note_and_the_class_is_still_graded(graded, chapter):
    row = _row(graded, chapter, "truncated")
    assert row["status"] == "not graded" and row["score"] == ""
    assert "not a readable notebook" in row["note"] and "new copy" in row["note"]
    assert _row(graded, chapter, "perfect")["status"] == _answered(chapter)


@machinery
def test_deleted_and_edited_test_cells_are_noted_and_the_teacher_s_tests_run(graded,
                                                                              chapter):
    row = _row(graded, chapter, "tampered")
    assert (row["status"], float(row["score"])) == (_answered(chapter), _max(chapter))
    assert "was deleted" in row["note"]
    if len(authoring.graded_cells(read_notebook(NOTEBOOKS / f"{chapter}.ipynb"))) > 1:
        assert "was edited" in row["note"]
    assert "Note from grading: " + row["note"] in _feedback(graded, chapter, "tampered")


@machinery
def test_widget_output_in_a_returned_notebook_does_not_break_grading(graded, chapter):
    row = _row(graded, chapter, "widgets")
    assert (row["status"], float(row["score"])) == (_answered(chapter), _max(chapter))


@machinery
def test_cells_after_the_last_check_do_not_run_and_the_feedback_says_so(graded, chapter):
    # a loop there costs nothing: those cells cannot change a grade
    row = _row(graded, chapter, "after")
    assert (row["status"], float(row["score"]), row["note"]) == \
        (_answered(chapter), _max(chapter), "")
    assert "Not run while grading: this cell and the ones after it come after the last " \
        "check" in _feedback(graded, chapter, "after")


def test_export_writes_one_row_per_student_and_assignment(graded):
    assignments = {p.stem for p in CHAPTERS}
    expected = {(s, a) for s in graded["students"] for a in assignments}
    assert set(graded["rows"]) == expected
    for (student, assignment), row in graded["rows"].items():
        if graded["students"][student] != assignment:
            assert row["status"] == "not returned"


def test_students_check_their_notebook(graded, tmp_path, capsys):
    chapter = CHAPTERS[0]
    release = graded["course"] / "release" / chapter.stem / chapter.name
    blank = tmp_path / chapter.name
    blank.write_text(release.read_text(encoding="utf-8"), encoding="utf-8")
    assert cli.main(["check", str(blank), "--timeout", str(TIMEOUT)]) == 1
    assert "Write your solution where the exercise says so" in capsys.readouterr().out


def test_collect_accepts_one_notebook_per_student_named_after_them(graded, tmp_path):
    # STUDENT.ipynb, as an LMS exports a single assignment; a name with spaces is made
    # into a valid student id
    # (with several chapters in the course, --assignment says which one they are for)
    course = graded["course"]
    chapter = CHAPTERS[0]
    returned = tmp_path / "flat"
    returned.mkdir()
    (returned / "Ada Lovelace.ipynb").write_text(chapter.read_text(encoding="utf-8"))
    assert cli.main(["collect", str(returned), "--course", str(course),
                     "--assignment", chapter.stem]) == 0
    assert (course / "submitted" / "Ada_Lovelace" / chapter.stem / chapter.name).exists()


def test_collect_understands_moodle_and_canvas_downloads(tmp_path):
    # no nbgrader needed: collect only files notebooks
    course = tmp_path / "course"
    assert cli.main(["init", str(course), "--chapters", "1"]) == 0
    chapter = course / "source" / "01_autograd_from_scratch" / "01_autograd_from_scratch.ipynb"
    returned = tmp_path / "returned"
    moodle = returned / "Ada Lovelace_1234_assignsubmission_file_"
    moodle.mkdir(parents=True)
    (moodle / "my homework.ipynb").write_text(chapter.read_text())
    canvas = returned / "hopper_LATE_77_9001_01_autograd_from_scratch.ipynb"
    canvas.write_text(chapter.read_text())
    assert cli.main(["collect", str(returned), "--course", str(course)]) == 0
    filed = sorted(p.relative_to(course / "submitted").parts[:2]
                   for p in (course / "submitted").rglob("*.ipynb"))
    assert filed == [("Ada_Lovelace", "01_autograd_from_scratch"),
                     ("hopper", "01_autograd_from_scratch")]


def test_without_nbgrader_the_command_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "nbgrader", None)  # import nbgrader now fails
    (tmp_path / "nbgrader_config.py").write_text("")
    (tmp_path / "source").mkdir()
    assert cli.main(["release", "--course", str(tmp_path)]) == 0  # nothing to release
    (tmp_path / "source" / "01_x").mkdir()
    assert cli.main(["release", "--course", str(tmp_path)]) == 2
    assert "grading extra" in capsys.readouterr().err


def test_the_command_is_installed():
    scripts = pathlib.Path(sys.executable).parent
    assert (scripts / ("minigrad-course" + (".exe" if os.name == "nt" else ""))).exists()


def test_init_refuses_an_unknown_chapter(tmp_path, capsys):
    assert cli.main(["init", str(tmp_path / "c"), "--chapters", "99"]) == 2
    assert "no chapter [99]" in capsys.readouterr().err
