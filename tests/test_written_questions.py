"""Questions graded by hand (``question:ID`` and ``answer:ID:POINTS``), with real nbgrader.

The authoring rules first (cheap); then one small course, a chapter of one code exercise
and one written question, whose rubric and model answer hold words that appear nowhere
else (``RUBRIC`` and ``MODEL``), graded once (module fixture) for three students: one who
answers, one who hands back the blank copy, and one whose own code cell searches
everything the sandbox lets it read for the rubric. The teacher then grades the written
answer through nbgrader's ``Gradebook``, as the formgrader does. Last, the student's side:
a workspace made from the same chapter.
"""

from __future__ import annotations

import copy
import csv
import json
import pathlib
import re

import pytest

from conftest import STRICT, need

if not STRICT:
    pytest.importorskip("nbgrader", reason="pip install -e '.[grading]'")

from minigrad.course import authoring, cli, sandbox  # noqa: E402

TIMEOUT = 30
STEM = "01_written"
# words only the teacher's copy holds (split here so that this file's own text, were it
# ever readable in the sandbox, would not hold them either)
RUBRIC = "-".join(["quetzal", "rubric", "7f3a"])
MODEL = "-".join(["okapi", "model", "answer", "9c1e"])
STUDENT_ANSWER = "Each b_j is used once per row, so the chain rule adds its gradients."


def _cell(kind: str, source: str, tags: list[str] = ()) -> dict:
    cell = {"cell_type": kind, "metadata": {"tags": list(tags)}, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def chapter() -> dict:
    cells = [
        _cell("markdown", "# A chapter with a written question"),
        _cell("code", "import numpy as np"),
        _cell("code", "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
              "    ### END SOLUTION", ["solution:double"]),
        _cell("code", "assert double(3) == 6, 'double(3) should be 6'", ["tests:double:1"]),
        _cell("markdown", "### Question (2 points, graded by your teacher)\n\nWhy does the "
              "gradient of a broadcast input need a sum?\n\n=== BEGIN MARK SCHEME ===\n"
              f"**Rubric (2 points).** 2: names the chain rule and the shapes ({RUBRIC}); "
              "1: one of them; 0: neither.\n=== END MARK SCHEME ===", ["question:why-sum"]),
        _cell("markdown", f"Because each b_j is used once per row ({MODEL}).",
              ["answer:why-sum:2"]),
    ]
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number}"
    notebook = {"cells": cells, "metadata": {"kernelspec": {
        "display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}
    authoring.apply_exercise_tags(notebook)
    return notebook


def _text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _by_id(notebook: dict, grade_id: str) -> dict:
    (cell,) = [c for c in notebook["cells"]
               if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id]
    return cell


# --- authoring ---------------------------------------------------------------------------


def test_the_tags_ask_for_a_locked_question_and_a_manually_graded_answer():
    notebook = chapter()
    question, answer = notebook["cells"][4:6]
    assert question["metadata"]["nbgrader"] == {
        "grade": False, "grade_id": "why-sum-question", "locked": True, "schema_version": 3,
        "solution": False, "task": False}
    assert answer["metadata"]["nbgrader"] == {
        "grade": True, "grade_id": "why-sum", "locked": False, "points": 2,
        "schema_version": 3, "solution": True, "task": False}
    assert authoring.exercise_problems(notebook) == []


def test_a_written_answer_is_not_an_autograded_exercise():
    notebook = chapter()
    assert authoring.graded_cells(notebook) == {"double-tests": 1}
    assert authoring.exercises(notebook) == {"double": ["double-tests"]}
    assert authoring.written_questions(notebook) == {"why-sum": 2}
    assert [m["grade_id"] for _, m in authoring.exercise_cells(notebook)] == \
        ["double", "double-tests"]


def _problems(cells: list[dict]) -> str:
    notebook = {"cells": cells}
    authoring.apply_exercise_tags(notebook)
    return "\n".join(authoring.exercise_problems(notebook))


QUESTION = "Why?\n=== BEGIN MARK SCHEME ===\n2: all\n=== END MARK SCHEME ==="


@pytest.mark.parametrize("cells, named", [
    ([_cell("markdown", QUESTION, ["question:q"])], "question 'q' has no answer cell"),
    ([_cell("markdown", "model", ["answer:q:2"])], "question 'q' has no question cell"),
    ([_cell("markdown", QUESTION, ["question:q"]), _cell("code", "x = 1", ["answer:q:2"])],
     "must be a markdown cell"),
    ([_cell("markdown", QUESTION, ["question:q"]), _cell("markdown", "model", ["answer:q:0"])],
     "has no points"),
    ([_cell("markdown", "Why?", ["question:q"]), _cell("markdown", "model", ["answer:q:2"])],
     "has no rubric"),
    ([_cell("markdown", "Why?\n=== BEGIN MARK SCHEME ===\n2: all", ["question:q"]),
      _cell("markdown", "model", ["answer:q:2"])], "unbalanced"),
    ([_cell("markdown", QUESTION)], "outside a question:ID cell"),
    ([_cell("markdown", QUESTION, ["question:q"]), _cell("markdown", "model", ["answer:q"])],
     "malformed exercise tag"),
])
def test_what_is_wrong_with_a_written_question_is_named(cells, named):
    assert named in _problems(cells)


def test_the_course_table_counts_a_written_question_apart_from_the_code(tmp_path):
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
    import course_index

    path = tmp_path / f"{STEM}.ipynb"
    path.write_text(json.dumps(chapter()), encoding="utf-8")
    found = course_index.exercises(path)
    assert (found.written, found.points, found.questions, found.question_points) == \
        (["double"], 1, 1, 2)


# --- the course: release, grade, grade by hand, export, feedback ---------------------------

# A student's own cell: every file the student's process can read, searched for the
# rubric's and the model answer's words (built here, so the cell's text does not hold
# them), and for a phrase it can read (minigrad's own code: the search works); then its
# environment, the processes it sees and its own memory. The machine's installed files
# (/usr, /etc, /opt, Python's installation: some 250 000 files here, 30 s just to list)
# are not read: they are the machine's, not the course's; minigrad's own folders are.
SNOOP = '''
import os, sys
import minigrad
wanted = ["-".join(["quetzal", "rubric", "7f3a"]).encode(),
          "-".join(["okapi", "model", "answer", "9c1e"]).encode()]
control = b"BEGIN MARK" + b" SCHEME"
found, searched, control_seen = [], 0, 0
def look(name, data):
    global searched, control_seen
    searched += 1
    control_seen += control in data
    found.extend(name for word in wanted if word in data)
installed = {os.path.realpath(p) for p in ("/usr", "/etc", "/opt", "/proc", "/sys", "/dev",
                                           sys.prefix, sys.base_prefix, sys.exec_prefix)}
package = os.path.dirname(os.path.realpath(minigrad.__file__))
ours = [package] + [os.path.join(os.path.dirname(package), name)
                    for name in ("course", "widgets")]
def search(root, skip):
    for top, folders, files in os.walk(root):
        folders[:] = [f for f in folders
                      if os.path.realpath(os.path.join(top, f)) not in skip]
        for name in files:
            path = os.path.join(top, name)
            try:
                if os.path.isfile(path) and os.path.getsize(path) < 50_000_000:
                    with open(path, "rb") as file:
                        look(path, file.read())
            except OSError:
                pass
search("/", installed)
for folder in ours:
    search(folder, set())
for pid in [p for p in os.listdir("/proc") if p.isdigit()] + ["self"]:
    for part in ("cmdline", "environ"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as file:
                look(f"/proc/{pid}/{part}", file.read())
        except OSError:
            pass
look("environment", repr(dict(os.environ)).encode())
look("sys.modules", repr(sorted(sys.modules)).encode())
look("this process", repr({k: repr(v)[:100000] for k, v in globals().items()
                          if k not in ("wanted", "found")}).encode())  # (its own words)
try:
    shell = get_ipython()
    look("history", repr(shell.user_ns.get("In")).encode())
    look("user namespace", repr([(k, v) for k, v in shell.user_ns.items()
                                 if k not in ("wanted", "found")])[:10**7].encode())
except NameError:
    pass
print(f"searched {searched} files; the control phrase in {control_seen}; found: {found}")
'''


def _sandbox_or_skip() -> None:
    why = sandbox.check()
    if why:
        need("a sandbox (bubblewrap)", why)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    _sandbox_or_skip()
    root = tmp_path_factory.mktemp("written")
    notebooks = root / "notebooks"
    notebooks.mkdir()
    (notebooks / f"{STEM}.ipynb").write_text(json.dumps(chapter()), encoding="utf-8")
    folder = root / "course"

    def run(*args: str) -> int:
        command = list(args) + ([] if args[0] == "init" else ["--course", str(folder)])
        return cli.main(command)

    assert run("init", str(folder), "--notebooks", str(notebooks), "--timeout",
               str(TIMEOUT)) == 0
    assert run("release") == 0
    released = json.loads((folder / "release" / STEM / f"{STEM}.ipynb")
                          .read_text(encoding="utf-8"))
    solved = copy.deepcopy(released)
    _by_id(solved, "double")["source"] = "def double(x):\n    return 2 * x\n"
    answered = copy.deepcopy(solved)
    _by_id(answered, "why-sum")["source"] = STUDENT_ANSWER
    snoop = copy.deepcopy(solved)
    at = snoop["cells"].index(_by_id(snoop, "double-tests"))
    snoop["cells"].insert(at, _cell("code", SNOOP))
    erased = copy.deepcopy(answered)  # the question cell deleted
    erased["cells"].remove(_by_id(erased, "why-sum-question"))
    returned = root / "returned"
    class_ = {"ada": answered, "blank": released, "snoop": snoop, "erased": erased}
    for student, notebook in class_.items():
        (returned / student).mkdir(parents=True)
        (returned / student / f"{STEM}.ipynb").write_text(json.dumps(notebook),
                                                          encoding="utf-8")
    assert run("collect", str(returned)) == 0
    assert run("grade") == 0
    return {"root": root, "course": folder, "run": run, "released": released}


def _export(course, name: str, format: str = "csv") -> list[dict]:
    path = course["root"] / name
    assert course["run"]("export", str(path), "--format", format) == 0
    with open(path, newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file)) if format == "csv" else list(csv.reader(file))


def test_the_release_has_the_question_but_neither_rubric_nor_model_answer(course):
    text = json.dumps(course["released"])
    assert RUBRIC not in text and MODEL not in text and "MARK SCHEME" not in text
    assert "Why does the gradient of a broadcast input need a sum?" in \
        _text(_by_id(course["released"], "why-sum-question"))
    assert _text(_by_id(course["released"], "why-sum")).strip() == authoring.ANSWER_STUB


def test_a_written_answer_waits_for_the_teacher_in_nbgrader_s_gradebook(course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course['course'] / 'gradebook.db'}") as gradebook:
        ada = gradebook.find_grade("why-sum", STEM, STEM, "ada")
        blank = gradebook.find_grade("why-sum", STEM, STEM, "blank")
        assert (ada.auto_score, ada.manual_score, ada.needs_manual_grade) == \
            (None, None, True)
        # nbgrader's own rule: an answer left as handed out is "No response", 0 points
        assert (blank.auto_score, blank.needs_manual_grade) == (0, False)
        assert gradebook.find_grade("double-tests", STEM, STEM, "ada").auto_score == 1


def test_the_formgrader_shows_the_grader_the_rubric_and_the_student_s_answer(course):
    # the formgrader shows the autograded notebook: nbgrader put the teacher's question
    # cell (with its rubric, kept in the gradebook) back in place of the student's
    autograded = json.loads((course["course"] / "autograded" / "ada" / STEM
                             / f"{STEM}.ipynb").read_text(encoding="utf-8"))
    assert RUBRIC in _text(_by_id(autograded, "why-sum-question"))
    assert _text(_by_id(autograded, "why-sum")) == STUDENT_ANSWER


def test_a_deleted_question_comes_back_without_its_rubric_but_the_grader_has_it(course):
    folder = course["course"]
    submitted = (folder / "submitted" / "erased" / STEM / f"{STEM}.ipynb").read_text(
        encoding="utf-8")
    assert "Why does the gradient" in submitted and RUBRIC not in submitted
    autograded = json.loads((folder / "autograded" / "erased" / STEM / f"{STEM}.ipynb")
                            .read_text(encoding="utf-8"))
    assert RUBRIC in _text(_by_id(autograded, "why-sum-question"))
    page = (folder / "feedback" / "erased" / STEM / f"{STEM}.html").read_text(
        encoding="utf-8")
    assert RUBRIC not in page and "was deleted" in page


def test_the_student_s_code_cannot_read_the_rubric_in_the_sandbox(course):
    judged = json.loads((course["course"] / "judged" / "snoop" / STEM / "result.json")
                        .read_text(encoding="utf-8"))
    (cell,) = [c for c in judged["notebook"]["cells"] if "os.walk" in _text(c)]
    said = "".join(o.get("text", "") for o in cell["outputs"])
    match = re.search(r"searched (\d+) files; the control phrase in (\d+); found: (.*)", said)
    assert match, cell["outputs"]
    searched, control, found = int(match[1]), int(match[2]), match[3]
    assert searched > 100 and control >= 1  # it did search, and could read code
    assert found == "[]"


def test_export_shows_a_written_question_not_graded_yet_as_pending(course):
    rows = {r["student"]: r for r in _export(course, "pending.csv")}
    ada, blank = rows["ada"], rows["blank"]
    assert (ada["status"], ada["score"], ada["max_score"]) == ("needs manual grading", "1", "3")
    assert (ada["double"], ada["why-sum"]) == ("1", "pending")
    assert (blank["status"], blank["score"], blank["why-sum"]) == ("graded", "0", "0")
    canvas = _export(course, "pending-canvas.csv", "canvas")
    assert canvas[1][-1] == "3"  # points possible
    assert {row[0]: row[-1] for row in canvas[2:]}["ada"] == ""  # no partial total


def test_grading_by_hand_completes_the_total_and_the_feedback_hides_the_rubric(
        course, monkeypatch):
    # the README's lines for grading without a browser, on this course's chapter
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    (snippet,) = [block for block in re.findall(r"```py\n(.*?)```", readme, flags=re.S)
                  if "find_grade" in block]
    monkeypatch.chdir(course["course"])  # "in the course folder"
    exec(snippet.replace('"01_autograd_from_scratch"', repr(STEM)), {})
    rows = {r["student"]: r for r in _export(course, "graded.csv")}
    ada = rows["ada"]
    assert (ada["status"], ada["score"], ada["why-sum"], ada["double"]) == \
        ("graded", "2.5", "1.5", "1")
    moodle = _export(course, "moodle.csv", "moodle")
    assert {row[0]: row[4] for row in moodle[1:]}["ada"] == "2.5"
    assert course["run"]("grade") == 0  # the feedback pages, with the teacher's points
    page = (course["course"] / "feedback" / "ada" / STEM / f"{STEM}.html").read_text(
        encoding="utf-8")
    assert STUDENT_ANSWER in page and "1.5" in page
    assert RUBRIC not in page and MODEL not in page and "MARK SCHEME" not in page
    assert "Why does the gradient of a broadcast input need a sum?" in page
    # ... and the formgrader does not list the graded answer as still to grade
    assert _why_sum(course, "ada") == (1.5, False)


def _why_sum(course, student: str) -> tuple:
    """The written answer's (manual score, needs manual grading) in the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course['course'] / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade("why-sum", STEM, STEM, student)
        return grade.manual_score, grade.needs_manual_grade


def test_an_answer_changed_after_grading_by_hand_waits_for_the_teacher_again(course):
    """(After the test above.) A new submission whose written answer differs is listed
    for review again, with the teacher's points kept, as nbgrader does; its code
    exercise is judged anew."""
    submitted = course["course"] / "submitted" / "ada" / STEM / f"{STEM}.ipynb"
    notebook = json.loads(submitted.read_text(encoding="utf-8"))
    _by_id(notebook, "why-sum")["source"] = STUDENT_ANSWER + " And the shapes must match."
    submitted.write_text(json.dumps(notebook), encoding="utf-8")
    assert course["run"]("grade", "--student", "ada") == 0
    assert _why_sum(course, "ada") == (1.5, True)
    # the export does not count the points given to the old answer: the total waits
    ada = {r["student"]: r for r in _export(course, "changed.csv")}["ada"]
    assert (ada["status"], ada["score"], ada["why-sum"], ada["double"]) == \
        ("needs manual grading", "1", "pending", "1")
    assert "why-sum (1.5 points before)" in ada["note"] and "grade it again" in ada["note"]
    canvas = _export(course, "changed-canvas.csv", "canvas")
    assert {row[0]: row[-1] for row in canvas[2:]}["ada"] == ""  # no partial total
    from minigrad.course.class_report import NOT_GRADED, class_report

    assert class_report(course["course"], STEM)["written"]["why-sum"]["students"]["ada"] == \
        NOT_GRADED
    # the teacher grades the new answer: it counts, and stays graded after `grade`
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course['course'] / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade("why-sum", STEM, STEM, "ada")
        grade.manual_score, grade.needs_manual_grade = 2, False
        gradebook.db.commit()
    for again in (False, True):
        if again:
            assert course["run"]("grade", "--student", "ada") == 0
        ada = {r["student"]: r for r in _export(course, "regraded.csv")}["ada"]
        assert (ada["status"], ada["score"], ada["why-sum"], ada["note"]) == \
            ("graded", "3", "2", "")
    assert _why_sum(course, "ada") == (2, False)


# --- the student's side: the workspace -------------------------------------------------------


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("workspace")
    notebooks = root / "notebooks"
    notebooks.mkdir()
    (notebooks / f"{STEM}.ipynb").write_text(json.dumps(chapter()), encoding="utf-8")
    folder = root / "mine"
    assert cli.main(["workspace", str(folder), "--notebooks", str(notebooks)]) == 0
    return folder


def test_the_workspace_has_the_question_without_rubric_and_an_empty_answer(workspace):
    notebook = json.loads((workspace / f"{STEM}.ipynb").read_text(encoding="utf-8"))
    assert RUBRIC not in json.dumps(notebook) and MODEL not in json.dumps(notebook)
    assert _text(_by_id(notebook, "why-sum")).strip() == authoring.ANSWER_STUB


def test_status_and_next_count_a_written_question_as_answered_or_not(workspace, capsys):
    path = workspace / f"{STEM}.ipynb"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    _by_id(notebook, "double")["source"] = "def double(x):\n    return 2 * x\n"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert cli.main(["status", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "1 / 1" in out and "written: 0 of 1 answered (to answer: why-sum)" in out
    assert cli.main(["next", str(workspace)]) == 0
    assert "next: question why-sum" in capsys.readouterr().out
    _by_id(notebook, "why-sum")["source"] = STUDENT_ANSWER
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert cli.main(["status", str(workspace)]) == 0
    assert "written: 1 of 1 answered" in capsys.readouterr().out
    assert cli.main(["next", str(workspace)]) == 0
    assert "well done" in capsys.readouterr().out


def test_solution_prints_the_model_answer_and_reset_restores_the_empty_answer(workspace,
                                                                             capsys):
    assert cli.main(["solution", "1", "why-sum", "--workspace", str(workspace)]) == 0
    assert MODEL in capsys.readouterr().out
    path = workspace / f"{STEM}.ipynb"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    _by_id(notebook, "why-sum")["source"] = "my draft"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert cli.main(["reset", "1", "why-sum", "--workspace", str(workspace)]) == 0
    restored = json.loads(path.read_text(encoding="utf-8"))
    assert _text(_by_id(restored, "why-sum")).strip() == authoring.ANSWER_STUB
