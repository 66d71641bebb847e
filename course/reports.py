"""What the teacher reads after grading: scores per exercise, flags, and the grade files.

Four files in the course folder, next to nbgrader's gradebook:

- ``flags.json``: what grading noticed and did not turn into points, per student and
  assignment, ``{student: {assignment: [{"exercise": id or null, "flag": kind, "note":
  text}]}}``. Grading writes it with ``add_flag``; ``export`` and ``grade``'s table show it.
  A flag is for the teacher to look at; it never changes a score.
- ``students.json``: the names and LMS ids that ``collect`` found in a download's file and
  folder names (Moodle's participant id, Canvas's user id), so the grades can be written
  back in that LMS's import format.
- ``changed_answers.json``: the written answers graded by hand that the student changed
  since (a new submission), ``{student: {assignment: {question: points}}}`` with the
  points the old answer got. ``grade`` writes it (course/scoring.py); nbgrader keeps those
  points in its total and lists the answer for review again, and ``export`` counts them
  only once the teacher has graded the new answer.
- ``answers/ASSIGNMENT/EXERCISE/STUDENT.py``: each student's answer to each exercise as
  text, written by ``flag_similar`` (open them side by side, or run copydetect's own HTML
  report on the folder).

Only the standard library at import time; nbgrader and copydetect are imported by the
functions that need them.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import io
import itertools
import json
import os
import tempfile
import threading
from pathlib import Path

from .authoring import (  # noqa: F401  (exercises: part of what reports offers)
    HIDDEN_MARKERS, SOLUTION_MARKERS, exercise_cells, exercise_of_tests, exercise_role,
    exercises, written_questions)

FLAGS = "flags.json"
STUDENTS = "students.json"
CHANGED_ANSWERS = "changed_answers.json"
ANSWERS = "answers"
# what a flag says (flags.json's "flag"); the note says the rest
FLAG_KINDS = {
    "unsandboxed": "graded without a sandbox",
    "reference-used": "the reference answer was loaded",
    "delegated": "the answer hands the work to minigrad's own implementation",
    "tampering": "the notebook tried to change its grading",
    "similar": "nearly identical to another answer",
}


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


_write_lock = threading.Lock()


@contextlib.contextmanager
def _locked(course: Path):
    """One writer at a time, across threads and (where fcntl exists) processes: grading
    may run students in parallel, each adding its flags."""
    with _write_lock, open(Path(course) / ".reports.lock", "a") as handle:
        try:
            import fcntl
        except ImportError:  # Windows: threads only
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_json(path: Path, data: dict) -> None:
    """Replace ``path`` in one step (a reader never sees half a file)."""
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False,
                                     encoding="utf-8") as file:
        json.dump(data, file, indent=1, sort_keys=True, ensure_ascii=False)
    os.replace(file.name, path)


# --- written answers changed after grading by hand -------------------------------------


def read_changed_answers(course: Path) -> dict:
    """``{student: {assignment: {question: points}}}`` from ``changed_answers.json``."""
    return _read_json(Path(course) / CHANGED_ANSWERS)


def note_changed_answers(course: Path, assignment: str, changed: list[tuple],
                         unchanged: list[tuple]) -> None:
    """After autograde: ``changed`` answers ``(student, question, points)`` wait for the
    teacher again; ``unchanged`` ones ``(student, question)`` are graded as they were."""
    with _locked(course):
        record = read_changed_answers(course)
        for student, question in unchanged:
            record.get(student, {}).get(assignment, {}).pop(question, None)
        for student, question, points in changed:
            record.setdefault(student, {}).setdefault(assignment, {})[question] = points
        record = {student: {a: questions for a, questions in by_assignment.items()
                            if questions}
                  for student, by_assignment in record.items()}
        _write_json(Path(course) / CHANGED_ANSWERS, {s: r for s, r in record.items() if r})


def waits_for_teacher(grade, changed: dict) -> bool:
    """Does this written answer (a gradebook grade) wait for the teacher's points: not
    graded yet, or changed since it was graded (``changed``: that student's questions
    for this assignment, from ``read_changed_answers``) and not graded again?"""
    if grade.manual_score is None and grade.auto_score is None:
        return True
    return grade.name in changed and bool(grade.needs_manual_grade)


# --- flags -----------------------------------------------------------------------------


def read_flags(course: Path) -> dict:
    """``{student: {assignment: [flag, ...]}}`` from ``flags.json`` (empty if none)."""
    return _read_json(Path(course) / FLAGS)


def add_flag(course: Path, student: str, assignment: str, exercise: str | None, flag: str,
             note: str = "") -> None:
    """Record one flag for the teacher; the same flag twice is kept once."""
    if flag not in FLAG_KINDS:
        raise ValueError(f"unknown flag {flag!r}; one of {sorted(FLAG_KINDS)}")
    entry = {"exercise": exercise, "flag": flag, "note": note}
    with _locked(course):
        flags = read_flags(course)
        kept = flags.setdefault(student, {}).setdefault(assignment, [])
        if entry not in kept:
            kept.append(entry)
            _write_json(Path(course) / FLAGS, flags)


def clear_flags(course: Path, assignment: str, flag: str | None = None,
                student: str | None = None) -> None:
    """Forget the flags of an assignment (only one kind, or one student's, if given): a
    regrade writes them anew."""
    with _locked(course):
        flags = read_flags(course)
        for name, assignments in flags.items():
            if student is not None and name != student:
                continue
            assignments[assignment] = [f for f in assignments.get(assignment, [])
                                       if flag is not None and f["flag"] != flag]
        flags = {name: {a: found for a, found in assignments.items() if found}
                 for name, assignments in flags.items()}
        flags = {name: assignments for name, assignments in flags.items() if assignments}
        if flags or (Path(course) / FLAGS).exists():
            _write_json(Path(course) / FLAGS, flags)


def flags_text(flags: list[dict]) -> str:
    """One line for a list of flags: ``similar [mydiv]: nearly identical to bob's answer``."""
    return "; ".join(f["flag"] + (f" [{f['exercise']}]" if f.get("exercise") else "")
                     + (f": {f['note']}" if f.get("note") else "") for f in flags)


# --- exercises and their scores ----------------------------------------------------------


def _notebook(course: Path, assignment: str) -> Path:
    (path,) = (Path(course) / "source" / assignment).glob("*.ipynb")
    return path


def exercise_scores(course: Path, assignment: str, changed: dict | None = None,
                    ) -> dict[str, dict[str, float | None]]:
    """``{student: {exercise: score}}`` from nbgrader's gradebook: an exercise's score is
    the sum of its test cells' scores; a question graded by hand's is the teacher's points
    (``manual_score``), None while the answer waits for them (nbgrader gives 0 by itself
    only to an answer left as handed out: "No response").

    An answer the student changed after the teacher graded it waits again
    (``waits_for_teacher``): nbgrader keeps the old points in its total; they are put in
    ``changed`` (``{student: {question: points}}``), if given, and not counted here."""
    from nbgrader.api import Gradebook, MissingEntry

    course = Path(course)
    path = _notebook(course, assignment)
    source = json.loads(path.read_text(encoding="utf-8"))
    owner = exercise_of_tests(source)
    written = written_questions(source)
    scores: dict[str, dict[str, float | None]] = {}
    changed_since = read_changed_answers(course)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in gradebook.students:
            theirs = changed_since.get(student.id, {}).get(assignment, {})
            try:
                notebook = gradebook.find_submission_notebook(path.stem, assignment,
                                                              student.id)
            except MissingEntry:
                continue
            by_exercise: dict[str, float | None] = {
                exercise: 0.0 for exercise in dict.fromkeys(owner.values())}
            for grade in notebook.grades:
                if grade.name in owner:
                    by_exercise[owner[grade.name]] += grade.score or 0.0
                elif grade.name in written:
                    waiting = waits_for_teacher(grade, theirs)
                    by_exercise[grade.name] = None if waiting else grade.score
                    if waiting and grade.manual_score is not None and changed is not None:
                        changed.setdefault(student.id, {})[grade.name] = grade.manual_score
            scores[student.id] = by_exercise
    return scores


# --- the students' LMS names and ids -----------------------------------------------------


def remember_student(course: Path, student: str, assignment: str, name: str,
                     moodle_participant: str | None = None,
                     canvas_user: str | None = None) -> None:
    """Keep what an LMS download said about a student (``collect`` calls it)."""
    path = Path(course) / STUDENTS
    with _locked(course):
        students = _read_json(path)
        known = students.setdefault(student, {})
        known["name"] = name
        if moodle_participant:
            known.setdefault("moodle_participant", {})[assignment] = moodle_participant
        if canvas_user:
            known["canvas_user"] = canvas_user
        _write_json(path, students)


def read_students(course: Path) -> dict:
    return _read_json(Path(course) / STUDENTS)


# --- writing the grades ------------------------------------------------------------------


COLUMNS = ["student", "assignment", "score", "max_score", "status", "note"]
FORMATS = ("csv", "canvas", "moodle")


def write_grades(course: Path, rows: list[dict], path: Path, format: str = "csv") -> list[Path]:
    """Write ``rows`` (``teacher.rows``) as ``format``; returns the files written."""
    if format == "canvas":
        return [_write_canvas(course, rows, path)]
    if format == "moodle":
        return _write_moodle(course, rows, path)
    exercise_columns = list(dict.fromkeys(e for row in rows for e in row["exercises"]))
    late = [c for c in ("late_by", "late_penalty") if any(c in row for row in rows)]
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, COLUMNS + late + exercise_columns + ["flags"])
        writer.writeheader()
        for row in rows:
            writer.writerow({**{c: row.get(c, "") for c in COLUMNS + late},
                             **row["exercises"], "flags": row["flags"]})
    return [path]


def _final(row: dict) -> str:
    """The score an LMS gets: blank while a written answer waits for the teacher's points
    (an LMS keeps a number as the grade; a partial one would pass for the total)."""
    return "" if row["status"] == "needs manual grading" else row["score"]


def _write_canvas(course: Path, rows: list[dict], path: Path) -> Path:
    """Canvas's gradebook import: one row per student (``Student, ID, SIS User ID, SIS
    Login ID, Section``, then one column per assignment), the Canvas user id from the
    download's file names (``name_USERID_SUBMISSION_...``) when ``collect`` saw one; a
    second row gives each assignment's points."""
    students = read_students(course)
    assignments = list(dict.fromkeys(row["assignment"] for row in rows))
    max_scores = {row["assignment"]: row["max_score"] for row in rows}
    scores = {(row["student"], row["assignment"]): _final(row) for row in rows}
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         *assignments])
        writer.writerow(["    Points Possible", "", "", "", "",
                         *(max_scores[a] for a in assignments)])
        for student in sorted({row["student"] for row in rows}):
            known = students.get(student, {})
            writer.writerow([known.get("name", student), known.get("canvas_user", ""), "",
                             "" if known.get("canvas_user") else student, "",
                             *(scores.get((student, a), "") for a in assignments)])
    return path


def unmatched(course: Path, rows: list[dict], format: str) -> list[str]:
    """The students an LMS import could not match by the id ``collect`` saw in that LMS's
    download (notebooks named after the student, as from e-mail or a shared drive)."""
    students = read_students(course)
    if format == "canvas":
        return sorted({row["student"] for row in rows
                       if not students.get(row["student"], {}).get("canvas_user")})
    if format == "moodle":
        return sorted({row["student"] for row in rows if row["status"] != "not returned"
                       and not students.get(row["student"], {}).get(
                           "moodle_participant", {}).get(row["assignment"])})
    return []


# the columns of the worksheet Moodle hands out; its upload needs Identifier, Grade and
# Last modified (grade) (a grade changed in Moodle after that time is kept, unless the
# teacher ticks "Allow updating records that have been modified more recently in Moodle")
MOODLE_COLUMNS = ["Identifier", "Full name", "Email address", "Status", "Grade",
                  "Maximum Grade", "Grade can be changed", "Last modified (submission)",
                  "Last modified (grade)", "Feedback comments"]


def _write_moodle(course: Path, rows: list[dict], path: Path) -> list[Path]:
    """Moodle's offline grading worksheet, one file per assignment (Moodle uploads one
    assignment's grades at a time): ``Identifier`` is ``Participant N``, the participant
    id of that assignment's download folders (``Name_N_assignsubmission_file_``). With
    several assignments, ``grades.csv`` becomes ``grades_ASSIGNMENT.csv``."""
    students = read_students(course)
    assignments = list(dict.fromkeys(row["assignment"] for row in rows))
    now = datetime.datetime.now().strftime("%A, %d %B %Y, %I:%M %p")  # as Moodle writes it
    written = []
    for assignment in assignments:
        target = path if len(assignments) == 1 else \
            path.with_name(f"{path.stem}_{assignment}{path.suffix or '.csv'}")
        with open(target, "w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file)
            writer.writerow(MOODLE_COLUMNS)
            for row in rows:
                if row["assignment"] != assignment or row["status"] == "not returned":
                    continue
                known = students.get(row["student"], {})
                participant = known.get("moodle_participant", {}).get(assignment)
                writer.writerow([f"Participant {participant}" if participant
                                 else row["student"], known.get("name", row["student"]), "",
                                 row["status"], _final(row), row["max_score"], "Yes", "",
                                 now, "; ".join(n for n in (row["note"], row["flags"]) if n)])
        written.append(target)
    return written


# --- similar answers ----------------------------------------------------------------------


# Two answers are "nearly identical" when each has this share of its fingerprints in the
# other. Sizes are counted in copydetect's normalised code (names become V, no spaces or
# comments: chapter 1's answers are 50-80 long), without the code every student was
# handed out. An answer shorter than REFERENCE_TOKENS is not compared with the reference:
# a few lines have one obvious way to be written. Two students are compared on what they
# wrote beyond the reference answer, if PAIR_TOKENS long: a shared unusual answer.
SIMILAR = 0.9
REFERENCE_TOKENS = 100
PAIR_TOKENS = 60
NOISE, GUARANTEE = 10, 10  # copydetect's k-gram length and winnowing window, in tokens


def _text(cell: dict) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def answers(notebook: dict) -> dict[str, str]:
    """``{exercise: the solution cell's code}``; the solution markers (in the teacher's
    copy) are left out, so the reference answer reads as a student's would."""
    markers = SOLUTION_MARKERS + HIDDEN_MARKERS
    return {meta["grade_id"]: "\n".join(line for line in _text(cell).splitlines()
                                        if not any(m in line for m in markers))
            for cell, meta in exercise_cells(notebook) if meta.get("solution")}


def _fingerprint(code: str, boilerplate=None):
    from copydetect import CodeFingerprint

    return CodeFingerprint("answer.py", NOISE, GUARANTEE, boilerplate=boilerplate,
                           fp=io.StringIO(code))


def _similarity(first, second) -> float:
    from copydetect import compare_files

    _, (one, two), _ = compare_files(first, second)
    return float(min(one, two))


REFERENCE = "the reference solution"


def similar_answers(course: Path, assignment: str, reference_tokens: int = REFERENCE_TOKENS,
                    pair_tokens: int = PAIR_TOKENS) -> list[tuple[str, str, str, float]]:
    """``(student, exercise, other, share)`` for each answer nearly identical to the
    chapter's reference answer (``other`` is ``REFERENCE``) or to another student's,
    exercise by exercise, by copydetect's fingerprints (renamed variables and changed
    comments or spacing do not hide a copy). The code every student was handed out is
    left out of the comparison, and so is, between two students, the code they share with
    the reference answer (two students who both wrote the reference answer are reported
    as such, not as a pair). Writes each answer to
    ``answers/ASSIGNMENT/EXERCISE/STUDENT.py``."""
    course = Path(course)
    path = _notebook(course, assignment)
    reference = answers(json.loads(path.read_text(encoding="utf-8")))
    released_path = course / "release" / assignment / path.name
    released = answers(json.loads(released_path.read_text(encoding="utf-8"))) \
        if released_path.exists() else {}
    returned: dict[str, dict[str, str]] = {}
    for notebook in sorted((course / "submitted").glob(f"*/{assignment}/{path.name}")):
        try:
            returned[notebook.parent.parent.name] = answers(
                json.loads(notebook.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError):
            continue  # an unreadable notebook: collect has noted it
    found = []
    for exercise, answer in reference.items():
        folder = course / ANSWERS / assignment / exercise
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "_reference.py").write_text(answer, encoding="utf-8")
        given = list(_fingerprint(released.get(exercise, "")).hashes)
        reference_print = _fingerprint(answer, given)
        beyond = given + list(reference_print.hashes)
        prints, own = {}, {}
        for student, theirs in sorted(returned.items()):
            if exercise in theirs:
                (folder / f"{student}.py").write_text(theirs[exercise], encoding="utf-8")
                prints[student] = _fingerprint(theirs[exercise], given)
                own[student] = _fingerprint(theirs[exercise], beyond)
        if reference_print.token_coverage >= reference_tokens:
            for student, print_ in prints.items():
                if print_.token_coverage >= reference_tokens and \
                        (share := _similarity(print_, reference_print)) >= SIMILAR:
                    found.append((student, exercise, REFERENCE, share))
        unusual = [s for s in prints if own[s].token_coverage >= pair_tokens]
        for first, second in itertools.combinations(unusual, 2):
            if (share := _similarity(own[first], own[second])) >= SIMILAR:
                found += [(first, exercise, second, share), (second, exercise, first, share)]
    return found


def flag_similar(course: Path, assignment: str) -> list[tuple[str, str, str, float]]:
    """Replace the assignment's "similar" flags with what ``similar_answers`` finds (call
    it once the assignment is graded); returns what it found."""
    found = similar_answers(course, assignment)
    clear_flags(course, assignment, flag="similar")
    for student, exercise, other, share in found:
        whose = REFERENCE if other == REFERENCE else f"{other}'s answer"
        add_flag(course, student, assignment, exercise, "similar",
                 f"nearly identical to {whose} ({share:.0%} of the code in common)")
    return found
