"""A term on top of grading: due dates and a late policy, and solutions after the deadline.

- **Due dates** live where nbgrader keeps them, in the gradebook (``Assignment.duedate``,
  UTC); ``term.json`` in the course folder keeps only the time zone the teacher gave, to
  show the date as it was said. A submission's time is nbgrader's ``timestamp.txt``
  (written by the exchange, or by ``collect`` from ``--submitted-at``, ``--timestamps`` or
  ``--file-times``); nbgrader's ``autograde`` compares the two.
- **The late policy** is nbgrader's ``AssignLatePenalties`` with ``late.LatePolicy`` as its
  plugin, configured in a block of ``nbgrader_config.py`` that ``release`` rewrites: a
  percentage of the notebook's score per started day late, or a cut-off (nbgrader's
  ``zero``), per assignment. The penalty is in the gradebook, and in ``export``.
- **Solutions**: nbgrader's ``generate_solution`` (answers in, hidden tests and the rubric's
  mark-scheme regions out), after the due date, to a folder and, on a hub, through the
  exchange as the assignment ``CHAPTER-solutions``.
- **The report** of the class, per exercise, is ``class_report.py``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import shutil
import sys
from pathlib import Path

from .authoring import SOLUTION_MARKERS
from .teacher import (CourseError, assignments_of, course_folder, exchange_folder,
                      nbgrader_settings, notebook_of, read_json, run_nbgrader)

TERM = "term.json"
DUE_FORMATS = ("%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S",
               "%Y-%m-%d")
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # nbgrader's timestamp.txt, in UTC
DUE_CELL_ID = "minigrad-due-date"
SOLUTIONS = "solutions"


# --- the late policy: nbgrader's plugin (late.py), named in the course's config ------------

CONFIG_START = "# --- minigrad-course term: late policy, solutions (release rewrites this block)"
CONFIG_END = "# --- end of minigrad-course term"
CONFIG_BLOCK = '''\
{start}
# late submissions: nbgrader's AssignLatePenalties with minigrad's plugin (course/late.py);
# the due dates are in the gradebook (Assignment.duedate)
c.AssignLatePenalties.plugin_class = "minigrad.course.late.LatePolicy"
c.LatePolicy.percent_per_day = {percent!r}
c.LatePolicy.cutoff = {cutoff!r}
# solutions: the answers in, hidden tests and the rubric (mark scheme) out; not executed
# (nbgrader's default runs them: students run their copy themselves)
from nbgrader.preprocessors import (ClearHiddenTests, ClearMarkScheme, ClearOutput,  # noqa: E402
                                    IncludeHeaderFooter, LockCells)
c.GenerateSolution.preprocessors = [IncludeHeaderFooter, LockCells, ClearOutput,
                                    ClearHiddenTests, ClearMarkScheme]
c.ClearMarkScheme.enforce_metadata = False
{end}
'''


def policies(course: Path) -> dict[str, str | float]:
    """``{assignment: percent per day, or "cutoff"}`` as the course's config says."""
    settings = nbgrader_settings(course).LatePolicy
    found: dict[str, str | float] = dict(settings.get("percent_per_day", {}))
    found.update(dict.fromkeys(settings.get("cutoff", []), "cutoff"))
    return found


def _write_config(course: Path, policy: dict[str, str | float]) -> None:
    path = course / "nbgrader_config.py"
    text = path.read_text(encoding="utf-8")
    start, end = text.find(CONFIG_START), text.find(CONFIG_END)
    if start >= 0 and end > start:
        text = text[:start] + text[text.index("\n", end) + 1:]
    block = CONFIG_BLOCK.format(
        start=CONFIG_START, end=CONFIG_END,
        percent={a: float(p) for a, p in sorted(policy.items()) if p != "cutoff"},
        cutoff=sorted(a for a, p in policy.items() if p == "cutoff"))
    path.write_text(text.rstrip("\n") + "\n\n" + block, encoding="utf-8")


def policy_text(policy: str | float | None) -> str:
    if policy == "cutoff":
        return "no late submissions: a notebook handed in after the due date scores 0"
    if policy:
        return (f"{float(policy):g}% of the score is taken for each started day late (up to "
                "all of it)")
    return "late submissions count in full (their lateness is recorded)"


# --- due dates ---------------------------------------------------------------------------


def _zone(name: str) -> datetime.tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise CourseError(f"unknown time zone {name!r}: use a name like Europe/Berlin, "
                          "America/New_York or UTC") from None


def parse_time(text: str, zone: str | None = None, what: str = "--due") -> datetime.datetime:
    """A date and time as a teacher writes it ("2026-12-07 17:00"), in ``zone`` (default:
    this machine's), as an aware datetime; a date alone is the end of that day."""
    for format in DUE_FORMATS:
        try:
            parsed = datetime.datetime.strptime(text.strip(), format)
        except ValueError:
            continue
        if format == "%Y-%m-%d":
            parsed = parsed.replace(hour=23, minute=59, second=59)
        break
    else:
        try:  # ISO 8601 with an offset: 2026-12-07T17:00+01:00
            parsed = datetime.datetime.fromisoformat(text.strip())
        except ValueError:
            raise CourseError(f"{what} {text!r}: write the date and time as \"2026-12-07 "
                              "17:00\" (in --timezone, default this machine's)") from None
    if parsed.tzinfo:
        return parsed
    # this machine's zone as it is on that date (summer time or not)
    return parsed.replace(tzinfo=_zone(zone)) if zone else parsed.astimezone()


def _utc(moment: datetime.datetime) -> datetime.datetime:
    """Naive UTC, as nbgrader's gradebook stores times."""
    return moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def open_gradebook(course: Path):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{course / 'gradebook.db'}",
                     nbgrader_settings(course).CourseDirectory.course_id)


def _term(course: Path) -> dict:
    path = course / TERM
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def due_dates(course: Path) -> dict[str, datetime.datetime]:
    """``{assignment: due date}`` from the gradebook, as aware datetimes in the time zone
    the teacher gave (this machine's if none was given)."""
    if not (course / "gradebook.db").exists():
        return {}
    zones = _term(course)
    found = {}
    with open_gradebook(course) as gradebook:
        for assignment in gradebook.assignments:
            if assignment.duedate is not None:
                zone = zones.get(assignment.name, {}).get("timezone")
                moment = assignment.duedate.replace(tzinfo=datetime.timezone.utc)
                found[assignment.name] = moment.astimezone(_zone(zone) if zone else None)
    return found


def due_text(moment: datetime.datetime) -> str:
    zone = getattr(moment.tzinfo, "key", None) or moment.strftime("UTC%z")
    return f"{moment:%A %d %B %Y, %H:%M} ({zone})"


def _set_due(course: Path, assignment: str, due: datetime.datetime, zone: str | None) -> None:
    with open_gradebook(course) as gradebook:
        gradebook.update_or_create_assignment(assignment, duedate=_utc(due))
    term = _term(course)
    term[assignment] = {"timezone": zone or getattr(due.tzinfo, "key", None)}
    (course / TERM).write_text(json.dumps(term, indent=1, sort_keys=True), encoding="utf-8")


def _number(assignment: str) -> int | None:
    prefix = assignment.split("_")[0]
    return int(prefix) if prefix.isdigit() else None


def chapters_named(course: Path, names: list[str]) -> list[str]:
    """The assignments given by name or number (``1``, ``01``, ``01_autograd_...``)."""
    assignments = assignments_of(course)
    chosen = []
    for name in names:
        number = int(name) if name.isdigit() else None
        found = [a for a in assignments
                 if a == name or (number is not None and _number(a) == number)]
        if not found:
            raise CourseError(f"no chapter {name!r} in this course; there are "
                              f"{', '.join(assignments)}")
        chosen += found
    return list(dict.fromkeys(chosen))


def release_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chapters", nargs="*", metavar="CHAPTER",
                        help="the chapters to release, by name or number (default: all)")
    parser.add_argument("--due", default=None, metavar="\"YYYY-MM-DD HH:MM\"",
                        help="the due date (in --timezone); shown at the top of the "
                             "students' copy, and kept in nbgrader's gradebook")
    parser.add_argument("--timezone", default=None, metavar="ZONE",
                        help="the due date's time zone, e.g. Europe/Berlin (default: this "
                             "machine's)")
    late = parser.add_mutually_exclusive_group()
    late.add_argument("--late-penalty", type=float, default=None, metavar="PERCENT",
                      help="take PERCENT of the score for each started day late")
    late.add_argument("--cutoff", action="store_true",
                      help="nothing handed in after the due date counts (score 0)")
    late.add_argument("--no-late-penalty", action="store_true",
                      help="late work counts in full (the lateness is still recorded)")


def before_release(course: Path, args: argparse.Namespace) -> list[str]:
    """Check ``release``'s options and write the late policy; the assignments to release."""
    chosen = chapters_named(course, args.chapters) if getattr(args, "chapters", None) \
        else assignments_of(course)
    if not chosen:
        return chosen  # nothing to release (nor nbgrader needed)
    late = getattr(args, "late_penalty", None)
    if late is not None and not 0 <= late <= 100:
        raise CourseError(f"--late-penalty is a percentage per day late, 0 to 100 (got {late:g})")
    if getattr(args, "due", None):
        parse_time(args.due, args.timezone)  # a bad date stops before anything is released
    policy = policies(course)
    if late is not None:
        policy.update(dict.fromkeys(chosen, late))
    elif getattr(args, "cutoff", False):
        policy.update(dict.fromkeys(chosen, "cutoff"))
    elif getattr(args, "no_late_penalty", False):
        for assignment in chosen:
            policy.pop(assignment, None)
    _write_config(course, policy)
    return chosen


def after_generate(course: Path, assignment: str, args: argparse.Namespace) -> None:
    """Set the due date given (after nbgrader made the assignment in its gradebook), and
    put it, with the late policy, at the top of the students' copy; print it."""
    if getattr(args, "due", None):
        _set_due(course, assignment, parse_time(args.due, args.timezone), args.timezone)
    due = due_dates(course).get(assignment)
    if due is None:
        if assignment in policies(course):
            print(f"note: {assignment} has a late policy but no due date: give one with "
                  f"release {assignment} --due \"YYYY-MM-DD HH:MM\"")
        return
    policy = policy_text(policies(course).get(assignment))
    print(f"{assignment}: due {due_text(due)}; {policy}")
    path = course / "release" / assignment / notebook_of(course, assignment)
    notebook = read_json(path)
    cell = {"cell_type": "markdown", "metadata": {"minigrad": DUE_CELL_ID},
            "source": f"**Due: {due_text(due)}.** Late work: {policy}."}
    if notebook.get("nbformat_minor", 0) >= 5:  # cells have ids from nbformat 4.5 on
        cell["id"] = DUE_CELL_ID
    notebook["cells"] = [cell] + [c for c in notebook["cells"]
                                  if c.get("metadata", {}).get("minigrad") != DUE_CELL_ID]
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# --- submission times (collect from a folder) ----------------------------------------------


def collect_options(parser: argparse.ArgumentParser) -> None:
    times = parser.add_mutually_exclusive_group()
    times.add_argument("--submitted-at", default=None, metavar="\"YYYY-MM-DD HH:MM\"",
                       help="when these notebooks were handed in (all of them; in "
                            "--timezone), for the late policy")
    times.add_argument("--timestamps", default=None, metavar="CSV",
                       help="a CSV file with columns student,submitted_at (the student as "
                            "the file or folder is named, or their id)")
    times.add_argument("--file-times", action="store_true",
                       help="take each notebook's file modification time as its submission "
                            "time (only if nothing since has touched the files)")
    parser.add_argument("--timezone", default=None, metavar="ZONE",
                        help="the time zone of --submitted-at and --timestamps (default: "
                             "this machine's)")


class SubmissionTimes:
    """When each returned notebook of a folder was handed in, as ``collect`` is told."""

    def __init__(self, course: Path, args: argparse.Namespace, assignments: list[str]):
        self.at = self.table = None
        self.file_times = getattr(args, "file_times", False)
        zone = getattr(args, "timezone", None)
        if getattr(args, "submitted_at", None):
            self.at = parse_time(args.submitted_at, zone, "--submitted-at")
        if getattr(args, "timestamps", None):
            self.table = self._read_table(Path(args.timestamps), zone)
        due = [a for a in (args.assignment and [args.assignment] or assignments)
               if a in due_dates(course)]
        if self.file_times:
            print("note: submission times are the files' modification times; unpacking or "
                  "copying a download may have changed them (check a few, or pass "
                  "--timestamps CSV)", file=sys.stderr)
        elif due and self.at is None and self.table is None:
            print(f"note: {', '.join(due)} has a due date, but no submission times were "
                  "given: these notebooks count as on time. Give --submitted-at, "
                  "--timestamps CSV or --file-times to apply the late policy.",
                  file=sys.stderr)

    @staticmethod
    def _read_table(path: Path, zone: str | None) -> dict[str, datetime.datetime]:
        import csv

        if not path.exists():
            raise CourseError(f"no file {path} (--timestamps)")
        with open(path, newline="", encoding="utf-8") as file:
            rows = list(csv.DictReader(file))
        if not rows or not {"student", "submitted_at"} <= set(rows[0]):
            raise CourseError(f"{path}: --timestamps needs the columns student,submitted_at")
        return {row["student"].strip(): parse_time(row["submitted_at"], zone,
                                                   f"{path.name}: {row['student']}")
                for row in rows}

    def when(self, student: str, written: str, notebook: Path) -> datetime.datetime | None:
        if self.at is not None:
            return self.at
        if self.table is not None:
            found = self.table.get(written, self.table.get(student))
            if found is None:
                print(f"note: {student} is not in --timestamps: counted as on time",
                      file=sys.stderr)
            return found
        if self.file_times:
            return datetime.datetime.fromtimestamp(notebook.stat().st_mtime,
                                                   datetime.timezone.utc)
        return None

    def record(self, target: Path, student: str, written: str, notebook: Path) -> None:
        """Write nbgrader's ``timestamp.txt`` next to the filed notebook (if known)."""
        moment = self.when(student, written, notebook)
        stamp = target / "timestamp.txt"
        if moment is None:
            stamp.unlink(missing_ok=True)
        elif target.is_dir():
            stamp.write_text(_utc(moment).strftime(TIMESTAMP_FORMAT), encoding="utf-8")


# --- lateness in the grades -----------------------------------------------------------------


LATE_COLUMNS = ["late_by", "late_penalty"]


def late_text(seconds: float) -> str:
    """``1 d 2 h 5 min`` (rounded up to the minute)."""
    minutes = math.ceil(seconds / 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "",
             f"{minutes} min" if minutes else ""]
    return " ".join(p for p in parts if p) or "0 min"


def with_lateness(course: Path, rows: list[dict]) -> list[dict]:
    """``teacher.rows`` with the late policy applied: where the course has due dates, each
    row gains ``late_by`` and ``late_penalty`` (nbgrader's, from the gradebook) and its
    score is the score after the penalty."""
    if not due_dates(course):
        return rows
    from nbgrader.api import MissingEntry

    with open_gradebook(course) as gradebook:
        for row in rows:
            row.update(late_by="", late_penalty="")
            if not row.get("score"):
                continue
            try:
                submission = gradebook.find_submission(row["assignment"], row["student"])
            except MissingEntry:
                continue
            seconds = submission.total_seconds_late
            if seconds > 0:
                taken = submission.late_submission_penalty or 0.0
                row["late_by"], row["late_penalty"] = late_text(seconds), f"{taken:g}"
                row["score"] = f"{max(0.0, float(row['score']) - taken):g}"
    return rows


# --- solutions --------------------------------------------------------------------------------


def solutions_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chapter", metavar="CHAPTER", help="a chapter's name or number")
    parser.add_argument("--to", default=None, metavar="DIR",
                        help="where to write them (default: solutions/CHAPTER/ in the course)")
    parser.add_argument("--force", action="store_true",
                        help="publish before the due date, or with none set")
    parser.add_argument("--course", default=".", metavar="COURSE_DIR",
                        help="the course folder made by init (default: the current folder)")


def may_publish(assignment: str, due: datetime.datetime | None,
                now: datetime.datetime) -> None:
    """Raise unless ``now`` is past the assignment's due date."""
    if due is None:
        raise CourseError(f"{assignment} has no due date, so no time after which its solutions "
                          f"can be published: set one (release {assignment} --due "
                          "\"YYYY-MM-DD HH:MM\"), or publish now with --force")
    if now < due:
        raise CourseError(f"{assignment} is due {due_text(due)}: its solutions are published "
                          "after that (or now, with --force)")


def solutions(args: argparse.Namespace) -> int:
    """nbgrader's ``generate_solution`` for one chapter, after its due date: the solution
    notebooks in a folder and, on a hub, in the exchange as ``CHAPTER-solutions``."""
    course = course_folder(args)
    (assignment,) = chapters_named(course, [args.chapter])
    if not args.force:
        may_publish(assignment, due_dates(course).get(assignment),
                    datetime.datetime.now(datetime.timezone.utc))
    _write_config(course, policies(course))  # the solution's preprocessors
    generated = course / SOLUTIONS
    run_nbgrader(course, "generate_solution", assignment, "--force",
              f"--CourseDirectory.solution_directory={SOLUTIONS}")
    folder = generated / assignment
    for path in folder.glob("*.ipynb"):
        _without_solution_markers(path)
    target = Path(args.to).resolve() / assignment if args.to else folder
    if target != folder:
        shutil.copytree(folder, target, dirs_exist_ok=True)
    print(f"{assignment}: solutions in {target}")
    exchange = exchange_folder(course)
    if exchange.is_dir():
        name = f"{assignment}-solutions"
        released = course / "release" / name
        if released.exists():
            shutil.rmtree(released)
        shutil.copytree(folder, released)
        run_nbgrader(course, "release_assignment", name, "--force")
        print(f"{assignment}: solutions published in the exchange {exchange} as {name}; "
              "students fetch it from JupyterLab's Assignments tab")
    return 0


def _without_solution_markers(path: Path) -> None:
    """The answers as a student would write them: no ``# BEGIN SOLUTION`` lines."""
    notebook = read_json(path)
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            text = "".join(cell["source"]) if isinstance(cell["source"], list) \
                else cell["source"]
            cell["source"] = "".join(line for line in text.splitlines(keepends=True)
                                     if not any(m in line for m in SOLUTION_MARKERS))
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")
