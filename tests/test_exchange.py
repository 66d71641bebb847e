"""``minigrad-course`` through nbgrader's exchange, without a hub (no root needed).

The teacher names an exchange folder at ``init``; ``release`` publishes there; two
students (nbgrader's own ``fetch_assignment``/``submit``/``fetch_feedback``, each with
their own cache, as on a hub) hand in the chapter solved and a notebook cut short;
``collect`` with no folder collects from the exchange, ``grade`` grades, ``feedback``
returns the pages, and each student fetches their own. ``tests/test_hub.py`` does the
same on a real JupyterHub with real users.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import STRICT

if not STRICT:
    pytest.importorskip("nbgrader", reason="pip install -e '.[grading]'")

from minigrad.course import authoring, cli  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "01_autograd_from_scratch.ipynb"


def _student(tmp: pathlib.Path, student: str, *args: str) -> subprocess.CompletedProcess:
    """One of nbgrader's student commands, as ``student`` (own folder and cache)."""
    home = tmp / student
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args, "--course", "minigrad",
         f"--student={student}", f"--Exchange.cache={home / 'cache'}"],
        cwd=home, capture_output=True, text=True, check=True,
        env={**os.environ, "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
             "PYTHONWARNINGS": "ignore"})


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("exchange")
    exchange, course = tmp / "exchange", tmp / "course"
    os.environ["JUPYTER_CONFIG_DIR"] = str(tmp / "teacher-jupyter")  # the formgrader's pointer
    try:
        assert cli.main(["init", str(course), "--chapters", "1", "--timeout", "10",
                         "--exchange", str(exchange)]) == 0
        assert cli.main(["release", "--course", str(course)]) == 0
        for student in ("ada", "bob"):
            _student(tmp, student, "fetch_assignment", CHAPTER.stem, "--Exchange.root=" +
                     str(exchange))
        ada = tmp / "ada" / CHAPTER.stem / CHAPTER.name
        solved = json.loads(CHAPTER.read_text(encoding="utf-8"))
        ada.write_text(json.dumps(solved), encoding="utf-8")
        bob = tmp / "bob" / CHAPTER.stem / CHAPTER.name
        bob.write_text(bob.read_text(encoding="utf-8")[:500], encoding="utf-8")
        for student in ("ada", "bob"):
            _student(tmp, student, "submit", CHAPTER.stem, f"--Exchange.root={exchange}")
        assert cli.main(["collect", "--course", str(course)]) == 0
        assert cli.main(["grade", "--course", str(course)]) == 0
        assert cli.main(["feedback", "--course", str(course)]) == 0
        for student in ("ada", "bob"):
            _student(tmp, student, "fetch_feedback", CHAPTER.stem, f"--Exchange.root={exchange}")
    finally:
        del os.environ["JUPYTER_CONFIG_DIR"]
    rows = {r["student"]: r for r in __import__("minigrad.course.teacher", fromlist=["rows"])
            .rows(course)}
    return {"tmp": tmp, "course": course, "exchange": exchange, "rows": rows}


def _fetched_feedback(course, student: str) -> str:
    (page,) = (course["tmp"] / student / CHAPTER.stem / "feedback").glob("*/*.html")
    return page.read_text(encoding="utf-8")


def test_init_names_the_exchange_in_the_course_config_and_points_the_formgrader_at_it(
        course):
    config = (course["course"] / "nbgrader_config.py").read_text(encoding="utf-8")
    assert f"c.Exchange.root = {str(course['exchange'])!r}" in config
    assert (course["exchange"].stat().st_mode & 0o7777) == 0o1777
    teacher = (course["tmp"] / "teacher-jupyter" / "nbgrader_config.py").read_text()
    assert f"c.CourseDirectory.root = {str(course['course'])!r}" in teacher


def test_release_publishes_the_students_copy_in_the_exchange(course):
    published = course["exchange"] / "minigrad" / "outbound" / CHAPTER.stem / CHAPTER.name
    notebook = json.loads(published.read_text(encoding="utf-8"))
    assert "BEGIN SOLUTION" not in published.read_text(encoding="utf-8")
    assert authoring.graded_cells(notebook).keys() == \
        authoring.graded_cells(json.loads(CHAPTER.read_text(encoding="utf-8"))).keys()


def test_collect_from_the_exchange_then_grade(course):
    full = sum(authoring.graded_cells(json.loads(CHAPTER.read_text(encoding="utf-8")))
               .values())
    # ada handed in the chapter itself: her written answers wait for the teacher
    assert (course["rows"]["ada"]["status"], float(course["rows"]["ada"]["score"])) == \
        ("needs manual grading", full)
    bob = course["rows"]["bob"]
    assert (bob["status"], bob["score"]) == ("not graded", "")
    assert "not a readable notebook" in bob["note"]


def test_each_student_fetches_their_own_feedback_through_the_exchange(course):
    assert "minigrad-note" not in _fetched_feedback(course, "ada")
    assert f"{CHAPTER.stem}.ipynb could not be read" in _fetched_feedback(course, "bob")


def test_collect_with_no_folder_and_no_exchange_says_what_to_do(tmp_path, capsys):
    course = tmp_path / "course"
    assert cli.main(["init", str(course), "--chapters", "1"]) == 0
    (course / "nbgrader_config.py").write_text(
        (course / "nbgrader_config.py").read_text()
        + f"c.Exchange.root = {str(tmp_path / 'nowhere')!r}\n")
    assert cli.main(["collect", "--course", str(course)]) == 2
    error = capsys.readouterr().err
    assert "no nbgrader exchange at" in error and "SUBMISSIONS_DIR" in error
    assert cli.main(["feedback", "--course", str(course)]) == 2
    assert "send the pages" in capsys.readouterr().err
