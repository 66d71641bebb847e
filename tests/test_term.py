"""A term with real nbgrader: due dates and a late penalty, solutions after the deadline,
and the per-exercise report of the class.

One course (chapter 1 on an exchange folder, plus a written answer graded by hand and a
hidden test), released with a due date in the past and 10% per started day late; six
students hand it in before and after the date (their times from a CSV, as nbgrader's
``timestamp.txt``), with the grading tests' classic mistakes. Graded once (module fixture).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import datetime
import io
import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import STRICT
from notebook_json import cell_with_id, read_notebook

if not STRICT:
    pytest.importorskip("nbgrader", reason="pip install -e '.[grading]'")

from minigrad.course import class_report, cli, teacher, term  # noqa: E402
from mistakes import MISTAKES  # noqa: E402

CHAPTER = "01_autograd_from_scratch"
NOTEBOOK = f"{CHAPTER}.ipynb"
DUE = "2026-01-10 17:00"  # Europe/Berlin: 16:00 UTC
HIDDEN_CASE = "HIDDEN-CASE-5e1b"
HIDDEN = f"""
### BEGIN HIDDEN TESTS
# {HIDDEN_CASE}
check_function(MySin, inputs=[(2, 5)], reference=lambda x: x.sin(), mistakes=SIN_MISTAKES)
### END HIDDEN TESTS
"""
RUBRIC = "RUBRIC-WORDS-9c2d"
MODEL_ANSWER = "Because the gradient of a broadcast input is summed over the copies."
# who hands in what, and when (Europe/Berlin; None: no time known)
MISTAKE_OF = {"ada": [], "bob": ["grad-output-ignored"], "cat": ["wrong-sign"],
              "dan": None, "eve": ["grad-output-ignored", "sin-wrong-sign"],
              "fay": ["x-and-y-swapped"]}
SUBMITTED_AT = {"ada": "2026-01-10 16:59", "bob": "2026-01-12 05:00",
                "cat": "2026-01-13 18:00", "eve": "2026-01-09 12:00",
                "fay": "2026-01-10 09:00"}


def _run(course: pathlib.Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main([*args, "--course", str(course)])
    return code, out.getvalue()


def _student(tmp: pathlib.Path, student: str, exchange: pathlib.Path, *args: str):
    """One of nbgrader's student commands, as ``student`` (own folder and cache)."""
    home = tmp / student
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args, "--course", "minigrad",
         f"--student={student}", f"--Exchange.cache={home / 'cache'}",
         f"--Exchange.root={exchange}"],
        cwd=home, capture_output=True, text=True, check=True,
        env={**os.environ, "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
             "PYTHONWARNINGS": "ignore"})


def _add_written_question(source: dict) -> None:
    """A question (locked, its rubric in nbgrader's mark scheme) and its answer cell
    (nbgrader's "manually graded answer") after the first exercise, in place of the
    chapter's own why-sum (its rubric and model answer are this test's words)."""
    source["cells"] = [c for c in source["cells"] if c.get("metadata", {}).get(
        "nbgrader", {}).get("grade_id") not in ("why-sum", "why-sum-question")]
    at = source["cells"].index(cell_with_id(source, "mymul-tests")) + 1
    question = {"cell_type": "markdown", "id": "why-sum-question", "metadata": {"nbgrader": {
        "grade": False, "grade_id": "why-sum-question", "locked": True, "schema_version": 3,
        "solution": False, "task": False}},
        "source": f"Why a sum?\n\n=== BEGIN MARK SCHEME ===\n{RUBRIC}\n"
                  "=== END MARK SCHEME ===\n"}
    answer = {"cell_type": "markdown", "id": "why-sum", "metadata": {"nbgrader": {
        "grade": True, "grade_id": "why-sum", "locked": False, "points": 2,
        "schema_version": 3, "solution": True, "task": False}}, "source": MODEL_ANSWER}
    source["cells"][at:at] = [question, answer]


@pytest.fixture(scope="module")
def term_course(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("term")
    course, exchange = tmp / "course", tmp / "exchange"
    os.environ["JUPYTER_CONFIG_DIR"] = str(tmp / "teacher-jupyter")
    try:
        assert cli.main(["init", str(course), "--chapters", "1", "--timeout", "10",
                         "--exchange", str(exchange)]) == 0
        source_path = course / "source" / CHAPTER / NOTEBOOK
        source = read_notebook(source_path)
        tests = cell_with_id(source, "mysin-tests")
        tests["source"] = "".join(tests["source"]) + HIDDEN
        _add_written_question(source)
        source_path.write_text(json.dumps(source), encoding="utf-8")
        code, released = _run(course, "release", "1", "--due", DUE, "--timezone",
                              "Europe/Berlin", "--late-penalty", "10")
        assert code == 0

        solved = copy.deepcopy(source)
        for cell in solved["cells"]:
            if cell["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = [], None
        handed_out = read_notebook(course / "release" / CHAPTER / NOTEBOOK)
        returned = tmp / "returned"
        returned.mkdir()
        for student, mistakes in MISTAKE_OF.items():
            notebook = copy.deepcopy(handed_out if mistakes is None else solved)
            for mistake in mistakes or []:
                grade_id, wrong, _ = MISTAKES[CHAPTER][mistake]
                cell_with_id(notebook, grade_id)["source"] = wrong.lstrip("\n")
            (returned / f"{student}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
        times = tmp / "times.csv"
        times.write_text("student,submitted_at\n" + "".join(
            f"{s},{t}\n" for s, t in SUBMITTED_AT.items()), encoding="utf-8")
        assert _run(course, "collect", str(returned), "--timestamps", str(times),
                    "--timezone", "Europe/Berlin")[0] == 0
        assert _run(course, "grade")[0] == 0

        from nbgrader.api import Gradebook
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:  # by hand
            gradebook.find_grade("why-sum", CHAPTER, CHAPTER, "ada").manual_score = 2
            gradebook.db.commit()
        assert _run(course, "export", str(tmp / "grades.csv"))[0] == 0
        with open(tmp / "grades.csv", newline="", encoding="utf-8") as file:
            grades = {row["student"]: row for row in csv.DictReader(file)}
        code, report = _run(course, "report", "1", "--html", str(tmp / "report.html"))
        assert code == 0
    finally:
        del os.environ["JUPYTER_CONFIG_DIR"]
    return {"tmp": tmp, "course": course, "exchange": exchange, "released": released,
            "grades": grades, "report": report,
            "html": (tmp / "report.html").read_text(encoding="utf-8")}


# --- due dates and the late penalty ----------------------------------------------------


def test_the_due_date_is_in_the_gradebook_in_utc(term_course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{term_course['course'] / 'gradebook.db'}") as gradebook:
        assert gradebook.find_assignment(CHAPTER).duedate == datetime.datetime(2026, 1, 10, 16)


def test_the_students_copy_opens_with_the_due_date_and_the_policy(term_course):
    first = read_notebook(term_course["course"] / "release" / CHAPTER / NOTEBOOK)["cells"][0]
    assert first["cell_type"] == "markdown"
    assert "Saturday 10 January 2026, 17:00 (Europe/Berlin)" in first["source"]
    assert "10% of the score" in first["source"]
    published = term_course["exchange"] / "minigrad" / "outbound" / CHAPTER / NOTEBOOK
    assert read_notebook(published)["cells"][0]["source"] == first["source"]
    assert "due Saturday 10 January 2026, 17:00" in term_course["released"]


def test_the_added_cell_disturbs_no_locked_cell(term_course):
    # dan handed the copy back untouched: collect found nothing edited, and it was graded
    problems = teacher._problems(term_course["course"])
    assert "dan" not in problems
    assert term_course["grades"]["dan"]["status"] == "graded"


def test_collect_writes_nbgraders_timestamp_in_utc(term_course):
    stamp = (term_course["course"] / "submitted" / "bob" / CHAPTER / "timestamp.txt")
    assert stamp.read_text() == "2026-01-12 04:00:00.000000 UTC"
    assert not (term_course["course"] / "submitted" / "dan" / CHAPTER
                / "timestamp.txt").exists()


def test_on_time_submissions_lose_nothing(term_course):
    grades = term_course["grades"]
    for student in ("ada", "eve", "fay", "dan"):
        assert (grades[student]["late_by"], grades[student]["late_penalty"]) == ("", "")
    assert float(grades["ada"]["score"]) == 10 + 2  # with the written answer graded by hand


def test_late_submissions_lose_ten_percent_per_started_day(term_course):
    grades = term_course["grades"]
    # bob: 8 points, 1 day 12 hours late (2 started days); cat: 8 points, 3 days 1 hour
    assert (grades["bob"]["late_by"], grades["bob"]["late_penalty"],
            grades["bob"]["score"]) == ("1 d 12 h", "1.6", "6.4")
    assert (grades["cat"]["late_by"], grades["cat"]["late_penalty"],
            grades["cat"]["score"]) == ("3 d 1 h", "3.2", "4.8")


def test_the_penalty_is_nbgraders_in_the_gradebook(term_course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{term_course['course'] / 'gradebook.db'}") as gradebook:
        bob = gradebook.find_submission(CHAPTER, "bob")
        assert (bob.score, bob.late_submission_penalty) == (pytest.approx(8),
                                                            pytest.approx(1.6))
        assert bob.total_seconds_late == 36 * 3600


def test_the_late_policy_plugin_per_assignment():
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets.config import Config

    from minigrad.course.late import LatePolicy, penalty

    config = Config({"LatePolicy": {"percent_per_day": {"a": 25}, "cutoff": ["b"]}})
    parent = AssignLatePenalties(config=config)
    plugin = LatePolicy(parent=parent)
    for assignment, seconds, expected in [("a", 1, 2.5), ("a", 86400, 2.5),
                                          ("a", 86401, 5), ("a", 10 * 86400, 10),
                                          ("b", 1, 10), ("c", 86400 * 3, None)]:
        parent.assignment_id = assignment
        assert plugin.late_submission_penalty("s", 10, seconds) == expected
    assert penalty(10, 0, 50) == 0


def _collect_into_a_copy(term_course, tmp_path, *options: str) -> pathlib.Path:
    """``collect`` two returned notebooks into a copy of the course (its ``submitted/``
    is the copy's own); returns the copy."""
    import shutil

    course = tmp_path / "copy"
    shutil.copytree(term_course["course"], course)
    returned = tmp_path / "returned"
    returned.mkdir()
    for student in ("gus", "hal"):
        shutil.copy(term_course["course"] / "release" / CHAPTER / NOTEBOOK,
                    returned / f"{student}.ipynb")
    os.utime(returned / "gus.ipynb", (0, datetime.datetime(2026, 1, 11, 8, 30).replace(
        tzinfo=datetime.timezone.utc).timestamp()))
    assert cli.main(["collect", str(returned), *options, "--course", str(course)]) == 0
    return course


def _stamp(course: pathlib.Path, student: str) -> str | None:
    path = course / "submitted" / student / CHAPTER / "timestamp.txt"
    return path.read_text() if path.exists() else None


def test_collect_takes_one_time_for_the_whole_folder(term_course, tmp_path):
    course = _collect_into_a_copy(term_course, tmp_path, "--submitted-at", "2026-01-11 09:30",
                                  "--timezone", "Europe/Berlin")
    assert _stamp(course, "gus") == _stamp(course, "hal") == "2026-01-11 08:30:00.000000 UTC"


def test_collect_takes_file_times_with_a_warning(term_course, tmp_path, capsys):
    course = _collect_into_a_copy(term_course, tmp_path, "--file-times")
    assert _stamp(course, "gus") == "2026-01-11 08:30:00.000000 UTC"
    assert "modification times" in capsys.readouterr().err


def test_collect_without_times_says_they_count_as_on_time(term_course, tmp_path, capsys):
    course = _collect_into_a_copy(term_course, tmp_path)
    assert _stamp(course, "gus") is None
    assert "count as on time" in capsys.readouterr().err


def test_a_cutoff_in_the_course_config_scores_late_work_zero(term_course, tmp_path):
    import argparse
    import shutil

    from nbgrader.preprocessors import AssignLatePenalties

    from minigrad.course.late import LatePolicy

    course = tmp_path / "copy"
    shutil.copytree(term_course["course"], course)
    args = argparse.Namespace(chapters=["1"], due=None, timezone=None, late_penalty=None,
                              cutoff=True, no_late_penalty=False)
    assert term.before_release(course, args) == [CHAPTER]
    assert term.policies(course) == {CHAPTER: "cutoff"}
    parent = AssignLatePenalties(config=teacher.nbgrader_settings(course))  # as autograde makes it
    parent.assignment_id = CHAPTER
    assert parent.plugin_class is LatePolicy
    assert LatePolicy(parent=parent).late_submission_penalty("bob", 8.0, 60) == 8.0
    assert "nothing handed in after the due date" not in term.policy_text(10)
    assert "scores 0" in term.policy_text("cutoff")


@pytest.mark.parametrize("options, says", [
    (["--due", "next friday"], "write the date and time as"),
    (["--due", "2026-12-07 17:00", "--timezone", "Mars/Olympus"], "unknown time zone"),
    (["--due", "2026-12-07 17:00", "--late-penalty", "150"], "0 to 100"),
    (["9"], "no chapter '9'"),
])
def test_release_refuses_what_it_cannot_understand(term_course, capsys, options, says):
    assert cli.main(["release", *options, "--course", str(term_course["course"])]) == 2
    assert says in capsys.readouterr().err


# --- solutions ---------------------------------------------------------------------------


def _set_due(course: pathlib.Path, due: datetime.datetime | None) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.find_assignment(CHAPTER).duedate = due
        gradebook.db.commit()


def test_solutions_refuse_before_the_due_date_or_without_one(term_course, capsys):
    course = term_course["course"]
    try:
        _set_due(course, datetime.datetime(2099, 3, 1, 12))
        assert cli.main(["solutions", "1", "--course", str(course)]) == 2
        assert "is due Sunday 01 March 2099, 13:00 (Europe/Berlin)" in capsys.readouterr().err
        _set_due(course, None)
        assert cli.main(["solutions", "1", "--course", str(course)]) == 2
        assert "has no due date" in capsys.readouterr().err
    finally:
        _set_due(course, datetime.datetime(2026, 1, 10, 16))
    assert not (course / term.SOLUTIONS).exists()


def test_solutions_may_be_published_once_the_due_date_is_past():
    due = term.parse_time("2026-01-10 17:00", "Europe/Berlin")
    term.may_publish(CHAPTER, due, due + datetime.timedelta(seconds=1))
    with pytest.raises(teacher.CourseError, match="--force"):
        term.may_publish(CHAPTER, due, due - datetime.timedelta(seconds=1))


@pytest.fixture(scope="module")
def published(term_course):
    """``solutions 1 --force`` before the due date (moved to the future), to a folder and
    the exchange; a student fetches them."""
    course, folder = term_course["course"], term_course["tmp"] / "to-students"
    _set_due(course, datetime.datetime(2099, 3, 1, 12))
    try:
        assert _run(course, "solutions", "1", "--force", "--to", str(folder))[0] == 0
    finally:
        _set_due(course, datetime.datetime(2026, 1, 10, 16))
    _student(term_course["tmp"], "ada", term_course["exchange"], "fetch_assignment",
             f"{CHAPTER}-solutions")
    return {"folder": folder / CHAPTER / NOTEBOOK,
            "fetched": term_course["tmp"] / "ada" / f"{CHAPTER}-solutions" / NOTEBOOK}


def test_the_solutions_have_the_answers_and_no_hidden_test_or_rubric(term_course, published):
    text = published["folder"].read_text(encoding="utf-8")
    for hidden in (HIDDEN_CASE, "BEGIN HIDDEN TESTS", RUBRIC, "BEGIN SOLUTION"):
        assert hidden not in text
    assert "Why a sum?" in text
    solution = read_notebook(published["folder"])
    source = read_notebook(term_course["course"] / "source" / CHAPTER / NOTEBOOK)
    for grade_id in ("mymul", "myexp", "myexpmulplus", "mydiv", "mysin", "why-sum"):
        answer = "".join(cell_with_id(source, grade_id)["source"])
        assert "".join(cell_with_id(solution, grade_id)["source"]) == "".join(
            line for line in answer.splitlines(keepends=True) if "SOLUTION" not in line)


def test_a_student_fetches_the_solutions_from_the_exchange(published):
    assert read_notebook(published["fetched"]) == read_notebook(published["folder"])


# --- the report --------------------------------------------------------------------------


def _line(report: str, exercise: str) -> list[str]:
    (line,) = [x for x in report.splitlines() if x.startswith(f"{exercise} ")]
    return line.split()


def test_the_report_counts_each_exercise_s_outcomes(term_course):
    report = term_course["report"]
    # exercise, points, passed, partly, failed, not attempted
    assert _line(report, "mymul") == ["mymul", "2", "2", "0", "3", "1"]
    assert _line(report, "myexp") == ["myexp", "2", "4", "0", "1", "1"]
    assert _line(report, "mysin") == ["mysin", "1", "4", "0", "1", "1"]
    assert _line(report, "mydiv") == ["mydiv", "2", "5", "0", "0", "1"]


def test_the_report_names_who_and_the_most_common_mistake_first(term_course):
    block = term_course["report"].split("\nmymul:\n")[1].split("\n\n")[0]
    assert "failed: bob, eve, fay" in block and "not attempted: dan" in block
    mistakes = [x for x in block.splitlines() if "mistake" in x]
    assert mistakes == ["  mistake (2): backward ignores grad_output (bob, eve)",
                        "  mistake (1): the gradients of x and y are swapped (fay)"]
    myexp = term_course["report"].split("\nmyexp:\n")[1].split("\n\n")[0]
    assert "mistake (1): it has the wrong sign (cat)" in myexp


def test_the_report_shows_written_answers_graded_by_hand_or_not_yet(term_course):
    block = term_course["report"].split("\nwhy-sum (written")[1]
    assert "  ada: 2\n" in block
    assert "  dan: 0 (not answered)" in block  # nbgrader scores an untouched answer 0
    for student in ("bob", "cat", "eve", "fay"):
        assert f"  {student}: not graded yet" in block


def test_the_html_report_has_a_plot_per_exercise_and_nothing_from_the_network(term_course):
    page = term_course["html"]
    plots = [part.split('"')[0] for part in page.split('class="plot" data-exercise="')[1:]]
    assert plots == ["mymul", "myexp", "myexpmulplus", "mydiv", "mysin", "why-sum"]
    assert page.count("<svg") == 6
    for fetch in ('src="http', "href=\"http", "url(http", "@import", "<script"):
        assert fetch not in page
    assert "backward ignores grad_output: 2 (bob, eve)" in page
    assert "not graded yet" in page


def test_report_before_grading_says_what_to_do(tmp_path, capsys):
    course = tmp_path / "course"
    assert cli.main(["init", str(course), "--chapters", "1"]) == 0
    assert cli.main(["report", "--course", str(course)]) == 2
    assert "grade first" in capsys.readouterr().err


def test_without_matplotlib_the_page_has_no_plots_and_says_why(term_course, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    report = class_report.class_report(term_course["course"], CHAPTER)
    page = class_report.report_html([report])
    assert "<svg" not in page and "matplotlib is not installed" in page
    assert "backward ignores grad_output: 2 (bob, eve)" in page


def test_collect_tells_the_chapter_by_its_cells_and_takes_a_chapter_number(
        term_course, tmp_path, capsys):
    """An LMS names a returned notebook after the student (``gus.ipynb``): with two
    chapters in the course, its cells say which one it is; a notebook that says nothing
    is skipped, loudly (exit 1), and ``--assignment 1`` files it (the teacher's
    walk-through: collect filed nothing and said to go on)."""
    import shutil

    course = tmp_path / "copy"
    shutil.copytree(term_course["course"], course)
    second = "02_tensors_and_broadcasting"
    (course / "source" / second).mkdir()
    shutil.copy(pathlib.Path(__file__).resolve().parents[1] / "notebooks" / f"{second}.ipynb",
                course / "source" / second / f"{second}.ipynb")
    returned = tmp_path / "returned"
    returned.mkdir()
    shutil.copy(course / "release" / CHAPTER / NOTEBOOK, returned / "gus.ipynb")
    shutil.copy(course / "source" / second / f"{second}.ipynb", returned / "hal.ipynb")
    (returned / "ivy.ipynb").write_text(json.dumps(
        {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    code, out = _run(course, "collect", str(returned))
    assert code == 1 and "1 skipped" in out
    assert "skipped" in capsys.readouterr().err
    assert (course / "submitted" / "gus" / CHAPTER / NOTEBOOK).exists()
    assert (course / "submitted" / "hal" / second / f"{second}.ipynb").exists()
    assert not (course / "submitted" / "ivy").exists()
    code, out = _run(course, "collect", str(returned), "--assignment", "1")
    assert code == 0 and (course / "submitted" / "ivy" / CHAPTER / NOTEBOOK).exists()
