"""What each ``minigrad-course`` subcommand does, on nbgrader's own commands.

A course folder is an ordinary nbgrader course (``source/`` -> ``release/`` ->
``submitted/`` -> ``autograded/`` -> ``feedback/``, gradebook ``gradebook.db``) plus
``problems.json``: per student and assignment, why a returned notebook could not be
graded as it was (a broken file, a deleted test cell), which ``grade`` prints and
``export`` adds to the CSV. On a JupyterHub the same course works through nbgrader's
exchange (a shared folder): ``release`` also publishes there, ``collect`` without a
folder collects the students' submissions from there, and ``feedback`` returns each
student's feedback through it. nbgrader is imported (or run) only here and in
``student.py`` (the self-paced student's workspace), so the rest of minigrad never needs
it.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from . import reports, sandbox
from .authoring import (ANSWER_STUB, HIDDEN_MARKERS, apply_exercise_tags, exercise_cells,
                        graded_cells, is_written, is_written_answer, without_mark_scheme,
                        written_questions)
from .grading import AUTOGRADE_CONFIG

DEFAULT_TIMEOUT = 60
CHAPTER = re.compile(r"^(\d+)_\w+\.ipynb$")
REPOSITORY_NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
DATA_FOLDER = "data"  # notebooks/data/: files the chapters read, copied next to each one
PROBLEMS = "problems.json"
# nbgrader's feedback preprocessors and minigrad's (course/feedback_page.py, imported by
# nbgrader only: it needs nbconvert)
FEEDBACK_PREPROCESSORS = ["nbgrader.preprocessors.GetGrades",
                          "minigrad.course.feedback_page.StudentFeedback",
                          "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor"]


class CourseError(Exception):
    """Something the user can fix; printed without a traceback."""


# --- nbgrader --------------------------------------------------------------------------


def _need_nbgrader() -> None:
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        raise CourseError("nbgrader is not installed: install minigrad with its grading "
                          "extra, pip install -e \".[grading]\" (or pip install nbgrader). "
                          "Without it, run your notebook from top to bottom: each test cell "
                          "checks one exercise.") from None


def run_nbgrader(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run one nbgrader command in the course folder; its log goes to ``nbgrader.log``."""
    _need_nbgrader()
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                            capture_output=True, text=True,
                            env={**_environment(), "MINIGRAD_COURSE": str(course)})
    with open(course / "nbgrader.log", "a", encoding="utf-8") as log:
        log.write(f"$ nbgrader {' '.join(args)}\n{result.stdout}{result.stderr}\n")
    if check and result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-8:])
        raise CourseError(f"nbgrader {args[0]} failed:\n{tail}\n(full log: "
                          f"{course / 'nbgrader.log'})")
    return result


def _environment() -> dict:
    """nbgrader runs tools (alembic, the kernel) by name: put this Python's scripts
    first on PATH, so an unactivated virtual environment works."""
    scripts = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": scripts + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONWARNINGS": "ignore", **sandbox.ONE_THREAD}


def course_folder(args: argparse.Namespace) -> Path:
    course = Path(args.course).resolve()
    if not (course / "nbgrader_config.py").exists():
        raise CourseError(f"{course} is not a course folder (no nbgrader_config.py): make one "
                          "with minigrad-course init COURSE_DIR, or pass --course COURSE_DIR")
    return course


def assignments_of(course: Path) -> list[str]:
    return sorted(p.name for p in (course / "source").iterdir() if p.is_dir())


def notebook_of(course: Path, assignment: str) -> str:
    (notebook,) = (p.name for p in (course / "source" / assignment).glob("*.ipynb"))
    return notebook


# --- init ------------------------------------------------------------------------------


def chapters(notebooks: Path) -> dict[int, Path]:
    """``{number: path}`` of the chapters ``NN_name.ipynb`` in ``notebooks``."""
    return {int(m[1]): p for p in sorted(notebooks.glob("*.ipynb"))
            if (m := CHAPTER.match(p.name))}


CONFIG = '''\
# nbgrader configuration, written by minigrad-course init
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_url = {db_url!r}
# seconds a cell may run when grading (minigrad-course grade --timeout overrides it); a cell
# that runs longer is interrupted and the rest of the notebook is still graded
c.Execute.timeout = {timeout}
c.Execute.interrupt_on_timeout = True
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
# a question graded by hand keeps its rubric (between BEGIN and END MARK SCHEME) in its
# locked question cell: nbgrader cuts it from the students' copy, and by default accepts
# it only in a "task" cell
c.ClearMarkScheme.enforce_metadata = False
# the feedback pages students get show no hidden test's source and none of this folder's
# paths (minigrad/course/feedback_page.py)
c.GenerateFeedback.preprocessors = {preprocessors!r}
c.StudentFeedback.course_root = {root!r}
''' + AUTOGRADE_CONFIG.replace("{", "{{").replace("}", "}}")
EXCHANGE_CONFIG = '''\
# nbgrader's exchange (the folder students fetch from and submit to, on a JupyterHub)
c.Exchange.root = {root!r}
'''
# The teacher's own nbgrader config, which the formgrader reads to find the course.
FORMGRADER_CONFIG = '''\
# written by minigrad-course init: the formgrader (JupyterLab's Nbgrader menu) shows this
# course
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = {root!r}
'''


def init(args: argparse.Namespace) -> int:
    notebooks = Path(args.notebooks).resolve() if args.notebooks else REPOSITORY_NOTEBOOKS
    found = chapters(notebooks)
    if not found:
        raise CourseError(f"no chapters (NN_name.ipynb) in {notebooks}; pass --notebooks DIR")
    if args.chapters:
        try:
            wanted = [int(n) for n in args.chapters.split(",") if n.strip()]
        except ValueError:
            raise CourseError(f"--chapters takes numbers like 1,2 (got {args.chapters!r})") \
                from None
        missing = [n for n in wanted if n not in found]
        if missing:
            raise CourseError(f"no chapter {missing} in {notebooks}; there are "
                              f"{sorted(found)}")
    else:
        wanted = [n for n, p in found.items() if graded_cells(read_json(p))]
        if not wanted:
            raise CourseError(f"no chapter in {notebooks} has graded exercises yet; choose "
                              "some with --chapters 1,2")
    course = Path(args.course_dir).resolve()
    if (course / "nbgrader_config.py").exists():
        raise CourseError(f"{course} is already a course folder")
    inside = [f for f in (course, *course.parents)  # a student's (student.HIDDEN, MANIFEST)
              if (f / ".minigrad" / "manifest.json").exists()]
    if inside:
        raise CourseError(f"{inside[0]} is a student's workspace (made by minigrad-course "
                          "workspace): make the course folder outside it, e.g. "
                          f"minigrad-course init {inside[0].parent / 'my-class'}")
    for number in wanted:
        path = found[number]
        notebook = read_json(path)
        apply_exercise_tags(notebook)
        if not graded_cells(notebook):
            print(f"note: chapter {number} ({path.stem}) has no graded exercise yet")
        target = course / "source" / path.stem
        target.mkdir(parents=True, exist_ok=True)
        for cell in notebook["cells"]:  # the teacher's copy carries no outputs
            if cell["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = [], None
        (target / path.name).write_text(json.dumps(notebook, indent=1, ensure_ascii=False)
                                        + "\n", encoding="utf-8")
        if (notebooks / DATA_FOLDER).is_dir():
            shutil.copytree(notebooks / DATA_FOLDER, target / DATA_FOLDER, dirs_exist_ok=True)
    config = CONFIG.format(course_id=args.course_id, root=str(course),
                           db_url=f"sqlite:///{course / 'gradebook.db'}", timeout=args.timeout,
                           preprocessors=FEEDBACK_PREPROCESSORS)
    if args.exchange:
        config += EXCHANGE_CONFIG.format(root=str(Path(args.exchange).resolve()))
    (course / "nbgrader_config.py").write_text(config, encoding="utf-8")
    print(f"course folder {course}: assignments "
          f"{', '.join(found[n].stem for n in wanted)}.")
    if args.exchange:
        exchange = Path(args.exchange).resolve()
        _make_exchange(exchange)
    else:
        exchange = exchange_folder(course) if _has_nbgrader() else None
    if exchange is not None and exchange.is_dir():
        print(f"nbgrader exchange {exchange}: release publishes there, collect (with no "
              "folder) collects from there, feedback returns through it.")
        _point_formgrader_at(course, args.course_id)
    print(f"Next: cd {course} && minigrad-course release")
    return 0


def _has_nbgrader() -> bool:
    try:
        _need_nbgrader()
    except CourseError:
        return False
    return True


def _make_exchange(exchange: Path) -> None:
    """The exchange folder named with ``init --exchange``: everyone writes to it (nbgrader
    keeps students apart inside), so mode 1777 like /tmp."""
    if exchange.is_dir():
        return
    try:
        exchange.mkdir(parents=True)
        exchange.chmod(0o1777)
    except OSError as error:
        raise CourseError(f"cannot make the exchange folder {exchange} ({error}); ask the "
                          f"hub's administrator to run: mkdir -p -m 1777 {exchange}") from None


def _point_formgrader_at(course: Path, course_id: str) -> None:
    """Write ``~/.jupyter/nbgrader_config.py`` (if there is none) so the formgrader shows
    this course; an existing one is left alone, with a note when it points elsewhere."""
    config = Path(os.environ.get("JUPYTER_CONFIG_DIR") or Path.home() / ".jupyter") \
        / "nbgrader_config.py"
    wanted = FORMGRADER_CONFIG.format(course_id=course_id, root=str(course))
    if not config.exists():
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(wanted, encoding="utf-8")
        print(f"the formgrader shows this course once your Jupyter server restarts (written: "
              f"{config}; on a hub: File > Hub Control Panel > Stop My Server, then Start)")
    elif repr(str(course)) not in config.read_text(encoding="utf-8"):
        print(f"note: {config} points the formgrader at another course; for this one, "
              f"set in it:\n{wanted.split(chr(10), 3)[3]}")


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# --- release ---------------------------------------------------------------------------


def release(args: argparse.Namespace) -> int:
    from . import term  # due dates and the late policy

    course = course_folder(args)
    config = course / "nbgrader_config.py"
    if "ClearMarkScheme" not in config.read_text(encoding="utf-8"):  # a course made before
        with open(config, "a", encoding="utf-8") as file:
            file.write("\n# rubrics of the questions graded by hand sit in their question "
                       "cells\nc.ClearMarkScheme.enforce_metadata = False\n")
    chosen = term.before_release(course, args)
    exchange = exchange_folder(course) if chosen else None
    for assignment in chosen:
        run_nbgrader(course, "generate_assignment", assignment, "--force")
        term.after_generate(course, assignment, args)
        print(f"{assignment}: students' copy in {course / 'release' / assignment}")
        if exchange.is_dir():
            run_nbgrader(course, "release_assignment", assignment, "--force")
            print(f"{assignment}: published in the exchange {exchange}; students fetch it "
                  "from JupyterLab's Assignments tab (Nbgrader menu)")
    return 0


# --- the exchange ----------------------------------------------------------------------


class _WorkingDirectory:
    """Run in ``path`` (nbgrader reads its config from the working directory). The working
    directory belongs to the whole process: one lock keeps two threads (the exercise gate
    grades two chapters at once) from restoring each other's folder."""

    _lock = threading.RLock()

    def __init__(self, path: Path):
        self.path, self.previous = path, None

    def __enter__(self):
        self._lock.acquire()
        self.previous = os.getcwd()
        os.chdir(self.path)

    def __exit__(self, *exc):
        try:
            os.chdir(self.previous)
        finally:
            self._lock.release()


def nbgrader_settings(course: Path):
    """nbgrader's configuration as its commands see it when run in the course folder: the
    course's ``nbgrader_config.py`` over the user's and the system's."""
    _need_nbgrader()
    from nbgrader.apps import NbGrader

    app = NbGrader()
    with _WorkingDirectory(course):
        app.load_config_file()
    return app.config


def exchange_folder(course: Path) -> Path:
    """The exchange folder nbgrader uses for this course (``c.Exchange.root``, else
    nbgrader's default); the hub route is on when it exists."""
    from nbgrader.exchange.default.exchange import Exchange

    return Path(Exchange(config=nbgrader_settings(course)).root)


# --- collect ---------------------------------------------------------------------------


# What LMS downloads add to a student's name: Moodle makes one folder per student,
# "Ada Lovelace_1234_assignsubmission_file_"; Canvas names each file
# "lovelaceada_1234_567890_01_autograd_from_scratch.ipynb" (with "_LATE" when late).
# The numbers are the LMS's own ids (Moodle's participant id, Canvas's user id), which its
# grade import wants back: collect keeps them in students.json (course/reports.py).
MOODLE_FOLDER = re.compile(r"_(?P<participant>\d+)_assignsubmission_\w*$")
CANVAS_FILE = re.compile(r"^(?P<student>[^_]+)(?:_LATE)?_(?P<user>\d+)_\d+_")


def _student_id(name: str) -> str:
    """A student id nbgrader accepts (letters, digits, ``_.-``), from a file or folder
    name as an LMS wrote it."""
    name = MOODLE_FOLDER.sub("", name)
    if match := CANVAS_FILE.match(name):
        name = match["student"]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.") or "student"


def _lms_names(name: str) -> dict[str, str | None]:
    """What an LMS's file or folder name says of the student: the name as the LMS wrote
    it, Moodle's participant id, Canvas's user id (None when absent)."""
    moodle, canvas = MOODLE_FOLDER.search(name), CANVAS_FILE.match(name)
    return {"name": MOODLE_FOLDER.sub("", name) if moodle else
            canvas["student"] if canvas else name,
            "moodle_participant": moodle and moodle["participant"],
            "canvas_user": canvas and canvas["user"]}


def _returned(submissions: Path) -> list[tuple[str, Path, str]]:
    """``(student, notebook, name as written)``: ``STUDENT.ipynb`` files directly in the
    folder, and ``STUDENT/*.ipynb`` (one folder per student, as LMS exports often are)."""
    found = []
    for entry in sorted(submissions.iterdir()):
        if entry.is_file() and entry.suffix == ".ipynb":
            found.append((_student_id(entry.stem), entry, entry.stem))
        elif entry.is_dir() and not entry.name.startswith("."):
            for notebook in sorted(entry.rglob("*.ipynb")):
                if ".ipynb_checkpoints" not in notebook.parts:
                    found.append((_student_id(entry.name), notebook, entry.name))
    return found


def _which_assignment(path: Path, assignments: list[str], given: str | None,
                      cells_of: dict[str, set[str]] | None = None) -> str | None:
    """The assignment a returned notebook is for: ``given``, else the one whose name its
    file name contains or starts with its number (``01_...``), else the only one, else
    the one whose exercise cells it holds (``cells_of``: each assignment's grade ids; an
    LMS download names files after the student, not the chapter)."""
    if given:
        return given
    named = [a for a in assignments if a in path.stem]
    match = re.match(r"^(\d+)_", path.name)
    by_number = [a for a in assignments if match and a.startswith(match[1] + "_")]
    for candidates in (named, by_number):
        if len(candidates) == 1:
            return candidates[0]
    if len(assignments) == 1:
        return assignments[0]
    try:
        held = {cell["metadata"]["nbgrader"]["grade_id"] for cell in read_json(path)["cells"]
                if "grade_id" in cell.get("metadata", {}).get("nbgrader", {})}
    except (OSError, ValueError, KeyError, TypeError):
        return None  # (an unreadable notebook: _file notes it when it is named)
    by_cells = [a for a in assignments if held & (cells_of or {}).get(a, set())]
    return by_cells[0] if len(by_cells) == 1 else None


def _grade_ids(course: Path, assignment: str) -> set[str]:
    """The grade ids of an assignment's exercise cells, as handed out."""
    notebook = read_json(course / "source" / assignment / notebook_of(course, assignment))
    return {meta["grade_id"] for _, meta in exercise_cells(notebook)}


def _problems(course: Path) -> dict:
    path = course / PROBLEMS
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _inspect(path: Path, handed_out: dict) -> tuple[dict | None, list[str]]:
    """The returned notebook (None if unreadable) and what is wrong with it, compared
    with the copy the students were given."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(notebook.get("cells"), list):
            raise ValueError("no list of cells")
    except (ValueError, UnicodeDecodeError, AttributeError) as error:
        return None, [f"{path.name} is not a readable notebook ({error}); it may have been "
                      "cut short when saved or uploaded. It was not graded: ask the student "
                      "for a new copy."]
    problems = []
    ids = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c
           for c in notebook["cells"]}
    for cell in handed_out["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not meta.get("locked"):
            continue
        theirs = ids.get(meta["grade_id"])
        kind = "test cell" if meta.get("grade") else "locked cell"
        if theirs is None:
            problems.append(f"the {kind} {meta['grade_id']!r} was deleted; it was put back "
                            "from the teacher's copy for grading.")
        elif _as_handed_out(theirs) != _as_handed_out(cell):
            problems.append(f"the {kind} {meta['grade_id']!r} was edited; the teacher's "
                            "version was used for grading.")
    return notebook, problems


HIDDEN_TESTS = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS\n?", re.S)


def _text(source: str | list) -> str:
    """A cell's source, without hidden tests (the students' copy has none)."""
    return HIDDEN_TESTS.sub("", "".join(source) if isinstance(source, list) else source)


def _as_handed_out(cell: dict) -> str:
    """A locked cell's text as the students' copy has it: without hidden tests, and a
    question without its rubric (a notebook handed in from the chapter itself has it)."""
    text = _text(cell["source"])
    return (without_mark_scheme(text) if is_written(cell) else text).strip()


def _restore_locked_cells(notebook: dict, source: dict) -> None:
    """Put back the locked cells a student deleted, where they were (after the cell that
    came before them in the teacher's copy), so nbgrader grades every test."""
    ids = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in notebook["cells"]}
    previous_id = None
    for cell in source["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if meta.get("locked") and grade_id not in ids:
            position = next((i + 1 for i, c in enumerate(notebook["cells"])
                             if previous_id is not None and c.get("metadata", {})
                             .get("nbgrader", {}).get("grade_id") == previous_id), None)
            restored = json.loads(json.dumps(cell))
            restored.pop("id", None)
            # a question's rubric stays in the teacher's copy (nbgrader puts it back for
            # the grader when it grades)
            text = "".join(cell["source"]) if isinstance(cell["source"], list) \
                else cell["source"]
            if is_written(cell):
                restored["source"] = without_mark_scheme(text)
            notebook["cells"].insert(len(notebook["cells"]) if position is None else position,
                                     restored)
            ids.add(grade_id)
        if grade_id:
            previous_id = grade_id


def collect(args: argparse.Namespace) -> int:
    course = course_folder(args)
    assignments = assignments_of(course)
    if args.assignment:  # a name or a number, as release and solutions take it
        from .term import chapters_named

        (args.assignment,) = chapters_named(course, [args.assignment])
    if args.submissions is None:
        return _collect_from_exchange(course, assignments, args.assignment)
    submissions = Path(args.submissions).resolve()
    if not submissions.is_dir():
        raise CourseError(f"{submissions} is not a folder of returned notebooks")
    from . import term

    times = term.SubmissionTimes(course, args, assignments)  # for the late policy
    problems = _problems(course)
    cells_of = {a: _grade_ids(course, a) for a in assignments}
    filed, seen, skipped = 0, {}, 0
    for student, path, written in _returned(submissions):
        assignment = _which_assignment(path, assignments, args.assignment, cells_of)
        if assignment is None:
            skipped += 1
            print(f"skipped {path}: which chapter is it? Its name does not say and its cells "
                  "are not one chapter's; pass --assignment CHAPTER (a name or number)",
                  file=sys.stderr)
            continue
        if (student, assignment) in seen:
            print(f"{student} ({assignment}): several notebooks; {seen[student, assignment]} "
                  f"is graded, {path.name} is not", file=sys.stderr)
            continue
        seen[student, assignment] = path.name
        target = course / "submitted" / student / assignment
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        filed += _file(course, student, assignment, path, target, problems)
        times.record(target, student, written, path)
        reports.remember_student(course, student, assignment, **_lms_names(written))
    _save_problems(course, problems)
    print(f"filed {filed} notebook(s) in {course / 'submitted'}" + (
        f"; {skipped} skipped (above): collect them again with --assignment" if skipped
        else ". Next: minigrad-course grade"))
    return 1 if skipped else 0


def _file(course: Path, student: str, assignment: str, path: Path, target: Path,
          problems: dict) -> int:
    """Check one returned notebook against the copy handed out and put it in ``target``
    (``submitted/STUDENT/ASSIGNMENT/``) for grading, with the chapter's data files; note
    what is wrong in ``problems``. An unreadable notebook is not filed: ``target`` is
    removed and 0 returned."""
    source_dir = course / "source" / assignment
    name = notebook_of(course, assignment)
    source = read_json(source_dir / name)
    handed_out = course / "release" / assignment / name
    notebook, found = _inspect(path, read_json(handed_out) if handed_out.exists() else source)
    problems.setdefault(student, {}).pop(assignment, None)
    if found:
        problems[student][assignment] = " ".join(found)
        print(f"{student} ({assignment}): {' '.join(found)}")
    if notebook is None:
        shutil.rmtree(target)
        return 0
    _restore_locked_cells(notebook, source)
    (target / name).write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    for extra in source_dir.iterdir():  # data files the chapter reads
        if extra.suffix != ".ipynb" and not (target / extra.name).exists():
            copy = shutil.copytree if extra.is_dir() else shutil.copy2
            copy(extra, target / extra.name)
    return 1


def _save_problems(course: Path, problems: dict) -> None:
    problems = {s: p for s, p in problems.items() if p}
    (course / PROBLEMS).write_text(json.dumps(problems, indent=1, sort_keys=True),
                                   encoding="utf-8")


UNREADABLE = "unreadable"  # submissions from the exchange that could not be read


def _collect_from_exchange(course: Path, assignments: list[str], given: str | None) -> int:
    """``nbgrader collect`` (the newest submission of each student), then the same checks
    as for a folder; an unreadable notebook is moved to ``unreadable/STUDENT/ASSIGNMENT/``
    (with nbgrader's timestamp and secret, so ``grade`` can write that student a note and
    ``feedback`` return it)."""
    exchange = exchange_folder(course)
    if not exchange.is_dir():
        raise CourseError(f"no folder given, and no nbgrader exchange at {exchange} to collect "
                          "from: pass the folder of returned notebooks (minigrad-course collect "
                          "SUBMISSIONS_DIR), or name the exchange (c.Exchange.root in "
                          f"{course / 'nbgrader_config.py'})")
    course_id = nbgrader_settings(course).CourseDirectory.course_id
    released = [a for a in ([given] if given else assignments)
                if (exchange / course_id / "outbound" / a).is_dir()]
    if not released:
        raise CourseError(f"nothing released in the exchange {exchange} for course "
                          f"{course_id!r}: run minigrad-course release first")
    problems = _problems(course)
    filed = 0
    for assignment in released:
        before = _timestamps(course, assignment)
        run_nbgrader(course, "collect", assignment, "--update")
        for student, stamp in sorted(_timestamps(course, assignment).items()):
            if before.get(student) == stamp:
                continue  # collected before, already checked
            target = course / "submitted" / student / assignment
            path = target / notebook_of(course, assignment)
            if not path.exists():
                problems.setdefault(student, {})[assignment] = (
                    f"{path.name} was not in the submission; it was not graded.")
                print(f"{student} ({assignment}): {path.name} was not in the submission")
                continue
            aside = course / UNREADABLE / student / assignment
            if aside.exists():
                shutil.rmtree(aside)
            kept = [(f, f.read_bytes()) for f in (path, target / "timestamp.txt",
                                                  target / "submission_secret.txt")
                    if f.exists()]
            if _file(course, student, assignment, path, target, problems):
                filed += 1
                continue
            aside.mkdir(parents=True)
            for file, content in kept:
                (aside / file.name).write_bytes(content)
    _save_problems(course, problems)
    print(f"collected {filed} notebook(s) from the exchange into {course / 'submitted'}. "
          "Next: minigrad-course grade")
    return 0


def _timestamps(course: Path, assignment: str) -> dict[str, str]:
    """``{student: nbgrader's timestamp}`` of the submissions in ``submitted/``."""
    return {p.parent.parent.name: p.read_text(encoding="utf-8").strip()
            for p in (course / "submitted").glob(f"*/{assignment}/timestamp.txt")}


# --- grade -----------------------------------------------------------------------------


def grade(args: argparse.Namespace) -> int:
    """Judge every submission in its own sandbox (``grading.py``), then let nbgrader
    score the judged outputs and write the feedback pages."""
    from . import grading

    course = course_folder(args)
    sandboxed = not getattr(args, "unsandboxed", False)
    why = sandbox.check()
    if sandboxed and why:
        raise CourseError(
            f"cannot grade safely here: {why}.\nA returned notebook is code written by a "
            "student: without a sandbox it runs as you, and could read the answers in "
            "source/, change gradebook.db or another student's files. To grade anyway, "
            "knowing that, run: minigrad-course grade --unsandboxed (every grade is then "
            "flagged 'unsandboxed').")
    config = course / "nbgrader_config.py"
    if "JudgedOutputs" not in config.read_text(encoding="utf-8"):  # a course made before
        with open(config, "a", encoding="utf-8") as file:
            file.write("\n" + AUTOGRADE_CONFIG)
    timeout = args.timeout or nbgrader_settings(course).Execute.timeout or DEFAULT_TIMEOUT
    submitted = course / "submitted"
    graded = [a for a in assignments_of(course)
              if submitted.is_dir() and any((s / a).is_dir() for s in submitted.iterdir())]
    if not graded:
        raise CourseError("nothing to grade: file the returned notebooks first with "
                          "minigrad-course collect SUBMISSIONS_DIR")
    only = getattr(args, "student", None)
    if only and not (submitted / only).is_dir():
        raise CourseError(f"no submissions from {only!r} in {submitted}")
    for assignment in graded:
        students = sorted(s.name for s in submitted.iterdir() if (s / assignment).is_dir()
                          and (only is None or s.name == only))
        if not students:
            continue
        results = grading.judge_all(course, assignment, notebook_of(course, assignment),
                                    students, timeout, sandboxed)
        for student, result in results.items():  # what the judge noticed, anew
            reports.clear_flags(course, assignment, student=student)
            if not result.get("sandboxed", sandboxed):
                reports.add_flag(course, student, assignment, None, "unsandboxed",
                                 "graded without a sandbox (--unsandboxed): the notebook's "
                                 "code could reach the course's files")
            for flag in result.get("flags", []):
                reports.add_flag(course, student, assignment, flag["exercise"], flag["flag"],
                                 flag["note"])
        # one nbgrader process for the class: it scores the judged outputs (no student
        # code runs in it), writes the gradebook, then the feedback pages
        os.environ.pop("MINIGRAD_UNSANDBOXED", None)
        if not sandboxed:
            os.environ["MINIGRAD_UNSANDBOXED"] = "1"  # for nbgrader's process (judged already)
        _score(course, assignment, only)
        _write_notes(course, assignment)
        reports.flag_similar(course, assignment)
    print_grades(course)
    print(f"feedback: {course / 'feedback'}/STUDENT/ASSIGNMENT/*.html")
    return 0


def _score(course: Path, assignment: str, only: str | None) -> None:
    """nbgrader's ``autograde`` (the scores, into the gradebook) and ``generate_feedback``
    (the pages, split over the machine's cores), in one process (``scoring.py``); its
    log goes to ``nbgrader.log``."""
    _need_nbgrader()
    result = subprocess.run([sys.executable, "-m", "minigrad.course.scoring", str(course),
                             assignment, only or ""], cwd=course, capture_output=True,
                            text=True, env={**_environment(), "MINIGRAD_COURSE": str(course)})
    with open(course / "nbgrader.log", "a", encoding="utf-8") as log:
        log.write(f"{result.stdout}{result.stderr}\n")


NOTE = '<div id="minigrad-note" style="{style}"><b>Note from grading:</b> {text}</div>'
NOTE_STYLE = ("border: 2px solid #c60; background: #fff4e5; padding: 0.6em 1em; "
              "margin: 1em; font-family: sans-serif")


def _write_notes(course: Path, assignment: str) -> None:
    """What went wrong with a student's notebook, in their feedback too: at the top of the
    feedback page, or, for a notebook that could not be read (collected from the
    exchange), a page of its own that ``feedback`` returns like the others. Every page
    also gets its checks named after their exercises, and no MathJax from the CDN
    (``feedback_page.tidy``)."""
    name = Path(notebook_of(course, assignment)).stem
    _tidy_feedback(course, assignment)
    problems = _problems(course)
    students = set(problems) | {p.parent.name for p in
                                (course / "autograded").glob(f"*/{assignment}")}
    for student in sorted(students):
        text = _note(course, problems, student, assignment)
        if not text:
            continue
        note = NOTE.format(style=NOTE_STYLE, text=html.escape(text))
        folder = course / "feedback" / student / assignment
        page = folder / f"{name}.html"
        aside = course / UNREADABLE / student / assignment
        if page.exists() and not aside.exists():
            content = page.read_text(encoding="utf-8")
            if 'id="minigrad-note"' not in content:
                body = content.find("<body")
                at = content.find(">", body) + 1 if body >= 0 else 0
                content = content[:at] + note + content[at:]
                page.write_text(content, encoding="utf-8")
        elif aside.exists():
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            for kept in ("timestamp.txt", "submission_secret.txt"):
                if (aside / kept).exists():
                    shutil.copy2(aside / kept, folder / kept)
            student_text = (f"Your notebook {name}.ipynb could not be read as a notebook, so "
                            "it was not graded (it may have been cut short when it was saved). "
                            "Open it to check, then submit the assignment again, or ask your "
                            "teacher.")
            page.write_text(f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
                            f"{html.escape(name)}: not graded</title></head><body>"
                            f"{NOTE.format(style=NOTE_STYLE, text=html.escape(student_text))}"
                            f"<p>{html.escape(text)}</p></body></html>\n", encoding="utf-8")


def _tidy_feedback(course: Path, assignment: str) -> None:
    from .feedback_page import tidy  # needs nbconvert, which nbgrader brings

    config = (course / "nbgrader_config.py").read_text(encoding="utf-8")
    if "StudentFeedback" not in config:  # a course folder made by an older minigrad
        print(f"note: the feedback pages may show hidden tests and your file paths; add "
              f"these lines to {course / 'nbgrader_config.py'} and grade again:\n"
              f"c.GenerateFeedback.preprocessors = {FEEDBACK_PREPROCESSORS!r}\n"
              f"c.StudentFeedback.course_root = {str(course)!r}")
    name = notebook_of(course, assignment)
    exercise_of = reports.exercise_of_tests(read_json(course / "source" / assignment / name))
    for page in (course / "feedback").glob(f"*/{assignment}/{Path(name).stem}.html"):
        content = page.read_text(encoding="utf-8")
        tidied = tidy(content, exercise_of)
        if tidied != content:
            page.write_text(tidied, encoding="utf-8")


def _note(course: Path, problems: dict, student: str, assignment: str) -> str:
    """What went wrong with this notebook: the problems ``collect`` found, and the cells
    grading had to stop (an endless loop, most often)."""
    notes = [problems.get(student, {}).get(assignment, "")]
    for notebook in sorted((course / "autograded" / student / assignment).glob("*.ipynb")):
        try:
            cells = read_json(notebook)["cells"]
        except (ValueError, KeyError, OSError):
            continue
        answers, chapter_cells, code_number = [], [], 0
        for cell in cells:
            if cell.get("cell_type") != "code":
                continue
            code_number += 1
            if not any(o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", [])):
                continue
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("solution"):
                answers.append(repr(meta.get("grade_id")))
            else:  # the chapter's own code (or a test): numbered as the student counts
                chapter_cells.append(f"code cell {code_number}"
                                     + (f" ({meta['grade_id']})" if meta.get("grade_id") else ""))
        if answers:
            notes.append(f"{', '.join(answers)} ran past the time limit and was "
                         "stopped (an endless loop?); the cells after it were still run.")
        if chapter_cells:
            notes.append(f"{', '.join(chapter_cells)}, which holds no answer, ran past the "
                         "time limit and was stopped: an earlier answer may be too slow (or "
                         "the grading machine too busy); the cells after it were still run.")
    return " ".join(n for n in notes if n)


NEEDS_MANUAL_GRADING = "needs manual grading"  # a row's status: a written answer waits


def rows(course: Path) -> list[dict]:
    """One row per student and assignment: the score from nbgrader's gradebook, the
    maximum, a status (graded, needs manual grading, not graded, not returned), what went
    wrong, if anything, ``exercises`` (``{exercise: score}``, every exercise of the
    assignment, blank when not graded, then every question graded by hand: the points the
    teacher gave, ``pending`` while none) and ``flags`` (what grading flagged, as one
    line: ``reports.flags_text``). While a written answer waits for the teacher's points,
    the score is the points given so far and the status says it is incomplete."""
    problems = _problems(course)
    flags = reports.read_flags(course)
    students = set(problems)
    if (course / "submitted").is_dir():
        students |= {p.name for p in (course / "submitted").iterdir() if p.is_dir()}
    graded = (course / "gradebook.db").exists()
    scores = _scores(course) if graded else {}
    made = []
    for assignment in assignments_of(course):
        source = read_json(course / "source" / assignment / notebook_of(course, assignment))
        written = written_questions(source)
        max_score = sum(graded_cells(source).values()) + sum(written.values())
        exercises = [*reports.exercises(source), *written]
        changed: dict = {}  # answers changed since graded by hand: their old points
        by_exercise = reports.exercise_scores(course, assignment, changed) if graded else {}
        for student in sorted(students):
            score = scores.get((student, assignment))
            note = _note(course, problems, student, assignment)
            old = changed.get(student, {}) if score is not None else {}
            if old:  # nbgrader's total still holds them: not counted, and said why
                score -= sum(old.values())
                note = " ".join(filter(None, [note, _changed_note(old)]))
            returned = (course / "submitted" / student / assignment).is_dir()
            theirs = by_exercise.get(student, {}) if score is not None else {}
            waiting = [q for q in written if q in theirs and theirs[q] is None]
            if score is not None:
                status = NEEDS_MANUAL_GRADING if waiting else "graded"
            elif returned or note:
                status = "not graded"
                note = note or "nbgrader could not grade it (see nbgrader.log)"
            else:
                status = "not returned"
            made.append({"student": student, "assignment": assignment,
                         "score": "" if score is None else f"{score:g}",
                         "max_score": f"{max_score:g}", "status": status, "note": note,
                         "exercises": {e: _cell_score(theirs, e) for e in exercises},
                         "flags": reports.flags_text(flags.get(student, {})
                                                     .get(assignment, []))})
    from . import term

    return term.with_lateness(course, made)  # late_by, late_penalty where due dates are set


def _changed_note(old: dict) -> str:
    questions = ", ".join(f"{q} ({points:g} points before)" for q, points in old.items())
    return (f"The written answer to {questions} changed after it was graded by hand: "
            "grade it again in the formgrader (the old points are not counted).")


def _cell_score(theirs: dict, exercise: str) -> str:
    if exercise not in theirs:
        return ""
    return "pending" if theirs[exercise] is None else f"{theirs[exercise]:g}"


def print_grades(course: Path) -> None:
    """The table ``grade`` prints: score, notes and flags of each student and assignment."""
    for row in rows(course):
        score = row["score"] or "-"
        print(f"{row['student']:<20} {row['assignment']:<28} {score:>5} / {row['max_score']}"
              + (f"   ({row['status']})" if row["status"] == NEEDS_MANUAL_GRADING else "")
              + (f"   {row['note']}" if row["note"] else "")
              + (f"   FLAGGED: {row['flags']}" if row["flags"] else ""))


def _scores(course: Path) -> dict[tuple[str, str], float]:
    """``{(student, assignment): score}`` of the autograded submissions, from the gradebook."""
    _need_nbgrader()
    from nbgrader.api import Gradebook, MissingEntry

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for assignment in gradebook.assignments:
            for student in gradebook.students:
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:
                    continue
                if (course / "autograded" / student.id / assignment.name).is_dir():
                    scores[(student.id, assignment.name)] = submission.score
    return scores


# --- feedback (through the exchange) -----------------------------------------------------


def feedback(args: argparse.Namespace) -> int:
    """``nbgrader release_feedback`` for each graded assignment: each student fetches their
    own page from JupyterLab's Assignments tab."""
    course = course_folder(args)
    exchange = exchange_folder(course)
    if not exchange.is_dir():
        raise CourseError(f"no nbgrader exchange at {exchange} to return feedback through; "
                          f"send the pages in {course / 'feedback'} yourself (LMS, e-mail)")
    released = 0
    for assignment in assignments_of(course):
        folders = sorted(p for p in (course / "feedback").glob(f"*/{assignment}")
                         if any(p.glob("*.html")))
        # a submission collected from a folder has no nbgrader secret: it cannot go
        # through the exchange
        by_hand = [p.parent.name for p in folders if not (p / "submission_secret.txt").exists()]
        for student in by_hand:
            print(f"{student} ({assignment}): not submitted through the exchange; send "
                  f"{course / 'feedback' / student / assignment} yourself")
        if len(by_hand) == len(folders):
            continue
        exclude = [f"--CourseDirectory.student_id_exclude={','.join(by_hand)}"] if by_hand else []
        run_nbgrader(course, "release_feedback", assignment, *exclude)
        for folder in folders:
            if folder.parent.name not in by_hand:
                print(f"{folder.parent.name} ({assignment}): feedback released")
                released += 1
    if not released:
        raise CourseError("no feedback to release: grade first (minigrad-course grade)")
    print(f"released {released} feedback page(s) through the exchange {exchange}; students "
          "fetch them from the Assignments tab")
    return 0


# --- export ----------------------------------------------------------------------------


def export(args: argparse.Namespace) -> int:
    """The grades as CSV: minigrad's own table (one row per student and assignment, a
    column per exercise, the flags), or the gradebook-import format of Canvas or Moodle."""
    course = course_folder(args)
    made = rows(course)
    written = reports.write_grades(course, made, Path(args.csv), args.format)
    print(f"wrote {len(made)} row(s) to {', '.join(map(str, written))}"
          + ("" if args.format == "csv" else f" ({args.format}'s import format)"))
    unmatched = reports.unmatched(course, made, args.format)
    if unmatched:
        how = ("they are in the file with their id as the SIS Login ID: Canvas matches "
               "them only if that is their Canvas login" if args.format == "canvas" else
               "their Identifier is their id, not Moodle's 'Participant N': Moodle will not "
               "match them")
        print(f"warning: {len(unmatched)} student(s) came from notebooks not named by "
              f"{args.format}'s own download ({', '.join(unmatched[:5])}"
              f"{', ...' if len(unmatched) > 5 else ''}): {how}. Collect the submissions "
              f"as {args.format} downloads them to keep its ids.")
    waiting = [r for r in made if r["status"] == NEEDS_MANUAL_GRADING]
    if waiting:
        left = ("their score counts the points given so far (status: "
                f"{NEEDS_MANUAL_GRADING})" if args.format == "csv" else
                f"their grade is left blank in the {args.format} file, so that no "
                "incomplete total is uploaded")
        print(f"note: {len(waiting)} submission(s) have written answers not graded yet: "
              f"{left}. Grade them in the formgrader (JupyterLab's Nbgrader menu > Manual "
              "Grading), then run minigrad-course grade again (nothing is judged again; "
              "the feedback pages then show your points) and export again.")
    return 0


# --- check (students) ------------------------------------------------------------------


# Run in a separate Python (the notebook's kernel is started from there): nbgrader's
# validator, its results as JSON on the last line.
VALIDATE = """
import json, sys
from traitlets.config import Config
from nbgrader.validator import Validator
config = Config()
config.Execute.timeout = int(sys.argv[2])
print(json.dumps(Validator(config=config).validate(sys.argv[1])))
"""
FRAME = re.compile(r"^(File |Cell In|Input In|-{20,})")
EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(: |$)")


def _written_answers(notebook: dict) -> dict[str, dict]:
    """``{question: its answer cell}`` of the questions graded by hand."""
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in notebook["cells"]
            if is_written_answer(c) and c.get("metadata", {}).get("nbgrader")}


def _message(error: str) -> str:
    """The error's own message, without the traceback above it: from the exception's
    name (the first line at the left margin after the last frame) to the end."""
    lines = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", error).rstrip().splitlines()
    last_frame = max((i for i, line in enumerate(lines) if FRAME.match(line)), default=-1)
    start = next((i for i in range(last_frame + 1, len(lines))
                  if EXCEPTION.match(lines[i])), last_frame + 1)
    message = "\n".join(lines[start:]).strip() or error.strip()
    return message.removeprefix("AssertionError: ")  # how every checker reports


def _visible(source: str) -> str:
    """A test cell's code without its hidden tests (nbgrader's validate reports the
    cells so), to match a reported cell with the notebook's."""
    return source.split(HIDDEN_MARKERS[0])[0].strip()


def check(args: argparse.Namespace) -> int:
    """Run the notebook's checks as grading will (``nbgrader validate``), and print one
    block per exercise not passed yet, named, with the checker's whole message."""
    notebook = Path(args.notebook).resolve()
    if not notebook.exists():
        raise CourseError(f"no notebook {notebook}")
    _need_nbgrader()
    print(f"running {notebook.name} from top to bottom, as grading will...", flush=True)
    result = subprocess.run([sys.executable, "-c", VALIDATE, str(notebook), str(args.timeout)],
                            cwd=notebook.parent, capture_output=True, text=True,
                            env=_environment())
    try:
        found = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print((result.stderr or result.stdout).strip())
        return 1
    if found.get("type_changed") or found.get("changed"):
        print("Some cells that must not be edited were changed (or changed type): get them "
              "back from the copy you were given (on a workspace: minigrad-course reset "
              "CHAPTER TEST-CELL), then check again.")
        for cell in found.get("type_changed", []) + found.get("changed", []):
            print("\n" + textwrap.indent(cell["source"], "    "))
        return 1
    # nbgrader counts an answer to a written question left as handed out as failed:
    # named here as not answered (no verdict on the others: the teacher grades them)
    written = written_questions(read_json(notebook))
    unanswered = [q for q, cell in _written_answers(read_json(notebook)).items()
                  if _text(cell["source"]).strip() in ("", ANSWER_STUB)]
    failed = [cell for cell in found.get("failed", [])
              if cell["source"].strip() not in ("", ANSWER_STUB)]
    if written:
        print(f"written question(s) {', '.join(written)}: "
              + (f"not answered yet: {', '.join(unanswered)}" if unanswered
                 else "answered") + " (graded by your teacher, not by the checks)")
    if not failed:
        print(f"Success! Every check of {notebook.name} passes.")
        return 0
    test_of = {_visible(_text(cell["source"])): meta["grade_id"] for cell, meta in
               reports.exercise_cells(read_json(notebook))}
    exercise_of = reports.exercise_of_tests(read_json(notebook))
    by_exercise: dict[str, list[tuple[str, str]]] = {}  # in the notebook's order
    for cell in failed:
        test = test_of.get(_visible(cell["source"]), "")
        by_exercise.setdefault(exercise_of.get(test, test), []).append(
            (test, _message(cell["raw_error"])))
    print(f"{len(by_exercise)} exercise(s) of {notebook.name} do not pass their checks yet:")
    for exercise, failures in by_exercise.items():
        tests = ", ".join(test for test, _ in failures if test)
        title = f"exercise {exercise} (test cell {tests})" if exercise else "a test cell"
        print(f"\n--- {title} " + "-" * max(3, 86 - len(title)))
        print("\n\n".join(message for _, message in failures))
    print("\nFix them one at a time, from the top, and check again.")
    return 1
