"""What the teacher and the students read after grading, with real nbgrader: the grades
per exercise and the flags, the Canvas and Moodle import files, similarity flags, the
feedback pages and ``minigrad-course check``.

One small course (chapter 1, with one hidden test added) and five students returned as
Moodle and Canvas downloads name them: one right, one blank, one with a mistake, and two
who hand in the same unusual answer. Graded once (module fixture).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import pathlib
import re

import pytest

from conftest import STRICT
from notebook_json import read_notebook

if not STRICT:
    pytest.importorskip("nbgrader", reason="pip install -e '.[grading]'")
    pytest.importorskip("copydetect", reason="pip install -e '.[grading]'")

from minigrad.course import cli, reports, teacher  # noqa: E402
from mistakes import MISTAKES  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTER = "01_autograd_from_scratch"
NOTEBOOK = f"{CHAPTER}.ipynb"
TIMEOUT = 10
POINTS = {"mymul": 2, "myexp": 2, "myexpmulplus": 3, "mydiv": 2, "mysin": 1}
WRITTEN = {"why-sum": 2}  # chapter 1's question graded by hand
# the points the teacher gives those written answers by hand (the others wait)
BY_HAND = {"Ada_Lovelace": 2, "Mia_Stake": 1}
HIDDEN_CASE = "HIDDEN-CASE-7f3a"  # a comment inside the hidden tests: never on a page
HIDDEN = f"""
### BEGIN HIDDEN TESTS
# {HIDDEN_CASE}
check_function(MySin, inputs=[(2, 5)], reference=lambda x: x.sin(), mistakes=SIN_MISTAKES)
### END HIDDEN TESTS
"""
# the same unusual answer, handed in by two students (the second renamed the variables)
COPIED = '''
class MyExpMulPlus(mg.Function):
    """f(x, y) = exp(x * y) + x"""

    @staticmethod
    def forward(ctx, x, y):
        product = x * y
        exponential = np.exp(product)
        ctx.save_for_backward(x, y, exponential)
        result = exponential + x
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, y, exponential = ctx.saved_tensors
        common = grad_output * exponential
        gradient_x = common * y + grad_output
        gradient_y = common * x
        return gradient_x, gradient_y
'''
RENAMED = (COPIED.replace("product", "xy").replace("exponential", "e")
           .replace("common", "g").replace("gradient_", "d"))
# Moodle: a folder NAME_PARTICIPANT_assignsubmission_file_ each; Canvas: NAME_USER_SUB_FILE
RETURNED = {"right": "Ada Lovelace_101_assignsubmission_file_",
            "blank": "Blank Page_102_assignsubmission_file_",
            "mistake": "Mia Stake_103_assignsubmission_file_",
            "copy": "Cop Ier_104_assignsubmission_file_",
            "renamed": f"hopper_77_9001_{NOTEBOOK}"}
STUDENT = {"right": "Ada_Lovelace", "blank": "Blank_Page", "mistake": "Mia_Stake",
           "copy": "Cop_Ier", "renamed": "hopper"}


def _with_cell(notebook: dict, grade_id: str, source: str) -> dict:
    notebook = copy.deepcopy(notebook)
    (cell,) = [c for c in notebook["cells"]
               if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
    cell["source"] = source.lstrip("\n")
    return notebook


def _run(course: pathlib.Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main([*args, "--course", str(course)])
    return code, out.getvalue()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("reports")
    course = root / "course"
    assert cli.main(["init", str(course), "--chapters", "1", "--timeout", str(TIMEOUT)]) == 0
    source_path = course / "source" / CHAPTER / NOTEBOOK
    source = read_notebook(source_path)
    (tests,) = [c for c in source["cells"]
                if c["metadata"].get("nbgrader", {}).get("grade_id") == "mysin-tests"]
    tests["source"] = "".join(tests["source"]) + HIDDEN
    source_path.write_text(json.dumps(source), encoding="utf-8")
    assert _run(course, "release")[0] == 0

    solved = copy.deepcopy(source)
    for cell in solved["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    blank = read_notebook(course / "release" / CHAPTER / NOTEBOOK)
    grade_id, wrong, _ = MISTAKES[CHAPTER]["wrong-sign"]
    notebooks = {"right": solved, "blank": blank,
                 "mistake": _with_cell(solved, grade_id, wrong),
                 "copy": _with_cell(solved, "myexpmulplus", COPIED),
                 "renamed": _with_cell(solved, "myexpmulplus", RENAMED)}
    returned = root / "returned"
    returned.mkdir()
    for who, name in RETURNED.items():
        path = returned / name / "my work.ipynb" if name.endswith("_") else returned / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(notebooks[who]), encoding="utf-8")
    assert _run(course, "collect", str(returned))[0] == 0
    assert _run(course, "grade")[0] == 0
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student, points in BY_HAND.items():  # as the formgrader's grade box does
            grade = gradebook.find_grade("why-sum", CHAPTER, CHAPTER, student)
            grade.manual_score, grade.needs_manual_grade = points, False
        gradebook.db.commit()
    # what the lead's grading code and the end of grade do
    reports.add_flag(course, STUDENT["mistake"], CHAPTER, "myexp", "reference-used",
                     "use_reference('myexp') in the answer cell")
    similar = reports.flag_similar(course, CHAPTER)
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        teacher.print_grades(course)
    files = {}
    for format in reports.FORMATS:
        path = root / f"{format}.csv"
        assert _run(course, "export", "--format", format, str(path))[0] == 0
        with open(path, newline="", encoding="utf-8") as file:
            files[format] = list(csv.reader(file))
    return {"course": course, "similar": similar, "table": table.getvalue(), "files": files,
            "notebooks": notebooks}


def _grades(graded) -> dict[str, dict]:
    header, *rows = graded["files"]["csv"]
    return {row[0]: dict(zip(header, row)) for row in rows}


def _page(graded, who: str) -> str:
    return (graded["course"] / "feedback" / STUDENT[who] / CHAPTER
            / f"{CHAPTER}.html").read_text(encoding="utf-8")


def test_the_grades_csv_has_a_column_per_exercise_and_one_for_flags(graded):
    header = graded["files"]["csv"][0]
    assert header == ["student", "assignment", "score", "max_score", "status", "note",
                      *POINTS, *WRITTEN, "flags"]


def test_an_exercise_s_column_is_the_sum_of_its_test_cells(graded):
    grades = _grades(graded)
    assert {e: float(grades["Ada_Lovelace"][e]) for e in POINTS} == POINTS
    assert {e: float(grades["Blank_Page"][e]) for e in POINTS} == dict.fromkeys(POINTS, 0)
    mistake = {e: float(grades["Mia_Stake"][e]) for e in POINTS}
    assert mistake == {**POINTS, "myexp": 0}
    assert float(grades["Mia_Stake"]["score"]) == sum(mistake.values()) + BY_HAND["Mia_Stake"]


def test_a_written_answer_s_column_has_the_teacher_s_points_or_says_it_waits(graded):
    grades = _grades(graded)
    written = {s: (g["why-sum"], g["status"]) for s, g in grades.items()}
    assert written == {"Ada_Lovelace": ("2", "graded"), "Mia_Stake": ("1", "graded"),
                       "Blank_Page": ("0", "graded"),  # left as handed out: no response
                       "Cop_Ier": ("pending", "needs manual grading"),
                       "hopper": ("pending", "needs manual grading")}
    assert float(grades["Ada_Lovelace"]["score"]) == sum(POINTS.values()) + 2
    assert grades["Ada_Lovelace"]["max_score"] == "12"


def test_a_flag_from_grading_is_in_the_csv_and_the_table_and_changes_no_score(graded):
    grades = _grades(graded)
    assert grades["Mia_Stake"]["flags"] == ("reference-used [myexp]: use_reference('myexp') "
                                            "in the answer cell")
    assert grades["Ada_Lovelace"]["flags"] == ""
    (line,) = [x for x in graded["table"].splitlines() if x.startswith("Mia_Stake")]
    assert "FLAGGED: reference-used [myexp]" in line


def test_two_students_with_the_same_answer_are_flagged_naming_each_other(graded):
    grades = _grades(graded)
    assert "similar [myexpmulplus]: nearly identical to hopper's answer" in \
        grades["Cop_Ier"]["flags"]
    assert "similar [myexpmulplus]: nearly identical to Cop_Ier's answer" in \
        grades["hopper"]["flags"]
    assert float(grades["Cop_Ier"]["score"]) == float(grades["hopper"]["score"]) == 10
    # nobody else: chapter 1's other answers are a few lines each, too short to tell a
    # copy from the obvious answer
    assert {(s, e, o) for s, e, o, _ in graded["similar"]} == {
        ("Cop_Ier", "myexpmulplus", "hopper"), ("hopper", "myexpmulplus", "Cop_Ier")}
    answers = graded["course"] / reports.ANSWERS / CHAPTER / "myexpmulplus"
    assert "exponential" in (answers / "Cop_Ier.py").read_text()
    assert "BEGIN SOLUTION" not in (answers / "_reference.py").read_text()


def test_an_answer_like_the_reference_is_flagged_when_answers_are_long_enough(graded):
    found = reports.similar_answers(graded["course"], CHAPTER, reference_tokens=40)
    like_reference = {(s, e) for s, e, other, _ in found if other == reports.REFERENCE}
    assert ("Ada_Lovelace", "mysin") in like_reference
    assert ("Cop_Ier", "myexpmulplus") not in like_reference
    assert not any(s == "Blank_Page" for s, _, _, _ in found)
    # both wrote the reference answer: that is the flag, not a pair of copies
    assert not any({s, o} == {"Ada_Lovelace", "Mia_Stake"} for s, _, o, _ in found)


def test_canvas_import_file(graded):
    header, points, *rows = graded["files"]["canvas"]
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", CHAPTER]
    assert points[0].strip() == "Points Possible" and points[-1] == "12"
    by_name = {row[0]: row for row in rows}
    assert by_name["hopper"][1] == "77"  # Canvas's user id, from the file's name
    assert by_name["Ada Lovelace"][-1] == "12" and by_name["Blank Page"][-1] == "0"
    assert by_name["hopper"][-1] == ""  # its written answer waits: no partial total


def test_moodle_import_file_keeps_the_participant_ids(graded):
    header, *rows = graded["files"]["moodle"]
    # the columns Moodle's upload looks for, by these names
    assert {"Identifier", "Grade", "Last modified (grade)", "Feedback comments"} <= set(header)
    by_id = {row[0]: dict(zip(header, row)) for row in rows}
    ada = by_id["Participant 101"]
    assert (ada["Full name"], ada["Grade"], ada["Maximum Grade"]) == ("Ada Lovelace", "12", "12")
    assert by_id["Participant 103"]["Grade"] == "9"
    waiting = by_id["Participant 104"]
    assert (waiting["Grade"], waiting["Status"]) == ("", "needs manual grading")
    assert "reference-used" in by_id["Participant 103"]["Feedback comments"]


def test_export_names_the_students_an_lms_import_could_not_match(graded, capsys):
    """A notebook named after the student (not by Canvas's or Moodle's download) has no
    LMS id: the export says who, instead of a file the LMS silently half-imports."""
    from minigrad.course import cli

    made = teacher.rows(graded["course"])
    canvas = reports.unmatched(graded["course"], made, "canvas")
    moodle = reports.unmatched(graded["course"], made, "moodle")
    assert "hopper" not in canvas and "Ada_Lovelace" in canvas  # hopper came from Canvas
    assert "hopper" in moodle and "Ada_Lovelace" not in moodle  # Ada from Moodle
    assert reports.unmatched(graded["course"], made, "csv") == []
    capsys.readouterr()
    assert cli.main(["export", str(graded["course"] / "again.csv"), "--format", "moodle",
                     "--course", str(graded["course"])]) == 0
    assert "Moodle will not match them" in capsys.readouterr().out


def test_the_feedback_page_never_shows_a_hidden_test(graded):
    for who in STUDENT:
        page = _page(graded, who)
        assert HIDDEN_CASE not in page and "inputs=[(2, 5)]" not in page
        assert "MARK SCHEME" not in page and "Rubric" not in page  # the written question's
    assert "hidden: they run when your work is graded" in _page(graded, "right")
    # and the hidden test ran: a wrong MySin would have lost its point
    assert float(_grades(graded)["Ada_Lovelace"]["mysin"]) == 1


def test_the_feedback_page_names_exercises_loads_nothing_and_hides_paths(graded):
    page = _page(graded, "mistake")
    assert "Test cell" not in page and "Grade cell" not in page
    assert "Exercise <code>myexp</code>: checks" in page
    assert "Checks of exercise <code>myexp</code>" in page
    assert not re.search(r"<script[^>]+src=", page), "the page loads a script"
    assert "$" in page  # TeX left as written, readable
    assert "it has the wrong sign" in page
    assert str(ROOT) not in page and str(graded["course"]) not in page


def test_a_traceback_from_hidden_checks_quotes_none_of_them():
    import nbformat

    from minigrad.course.feedback_page import StudentFeedback

    cell = nbformat.v4.new_code_cell("visible()\n### BEGIN HIDDEN TESTS\nsecret(3)\n"
                                     "### END HIDDEN TESTS\n")
    frames = ["-" * 30, "Cell In[4], line 3\n----> 3 secret(3)",
              f"File {ROOT}/minigrad/exercises/checks.py:65", "AssertionError: wrong"]
    cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="wrong",
                                           traceback=frames)]
    cell, _ = StudentFeedback(course_root="/srv/course").preprocess_cell(cell, {}, 0)
    shown = cell.source + "\n".join(cell.outputs[0].traceback)
    assert "secret" not in shown and str(ROOT) not in shown
    assert "minigrad/exercises/checks.py:65" in shown


def test_check_names_each_failing_exercise_with_its_whole_message(graded, tmp_path,
                                                                   capsys):
    grade_id, wrong, words = MISTAKES[CHAPTER]["wrong-sign"]
    notebook = _with_cell(graded["notebooks"]["mistake"], "mydiv",
                          MISTAKES[CHAPTER]["in-place"][1])
    path = tmp_path / NOTEBOOK
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert cli.main(["check", str(path), "--timeout", str(TIMEOUT)]) == 1
    out = capsys.readouterr().out
    assert "2 exercise(s)" in out
    assert "--- exercise myexp (test cell myexp-tests)" in out
    assert "--- exercise mydiv (test cell mydiv-tests)" in out
    assert words in out and "write grad_output * ... into a new array" in out
    # nothing cut short (nbgrader's own validate cuts each line at 90 characters with ...)
    body = out.split("\n", 1)[1].replace("grad_output * ...", "").replace("*= ...", "")
    assert "..." not in body
    assert "Traceback" not in out and len(out.splitlines()) < 40


def test_flags_are_kept_once_and_a_regrade_clears_its_own_kind(tmp_path):
    reports.add_flag(tmp_path, "ada", CHAPTER, None, "unsandboxed", "no sandbox here")
    reports.add_flag(tmp_path, "ada", CHAPTER, "mymul", "similar", "like bob's")
    reports.add_flag(tmp_path, "ada", CHAPTER, "mymul", "similar", "like bob's")
    assert len(reports.read_flags(tmp_path)["ada"][CHAPTER]) == 2
    reports.clear_flags(tmp_path, CHAPTER, flag="similar")
    assert reports.flags_text(reports.read_flags(tmp_path)["ada"][CHAPTER]) == \
        "unsandboxed: no sandbox here"
    with pytest.raises(ValueError, match="unknown flag"):
        reports.add_flag(tmp_path, "ada", CHAPTER, None, "sneaky", "")
