"""``minigrad-course``: homework from the chapters, graded offline with nbgrader.

For teachers (an nbgrader course folder; nbgrader's own commands and gradebook do the
work underneath)::

    minigrad-course init COURSE_DIR [--chapters 1,2]   the course: config, chapters, data
    minigrad-course release [CHAPTER...] [--due "2026-12-07 17:00"] [--late-penalty 10 |
                            --cutoff]              the students' copies (release/,
                                                       and the exchange on a hub)
    minigrad-course collect SUBMISSIONS_DIR            file returned notebooks (submitted/)
    minigrad-course collect                            on a hub: from nbgrader's exchange
    minigrad-course grade [--timeout 60] [--student ID]  sandboxed autograde, feedback
    minigrad-course feedback                           on a hub: return it through the exchange
    minigrad-course export grades.csv                  one row per student and assignment
    minigrad-course solutions CHAPTER [--to DIR]       its solutions, after the due date
    minigrad-course report [CHAPTER] [--html FILE]     per exercise: passed, failed, mistakes
    minigrad-course export --format canvas FILE        the grades for Canvas's (or Moodle's)
                                                       gradebook import

For students::

    minigrad-course check NOTEBOOK                     run the checks on your own work

Learning alone (a workspace, default my-course/, with every chapter without the answers)::

    minigrad-course workspace [DIR]                    make it, or add new chapters
    minigrad-course kernel                             (re)install the course's kernel
    minigrad-course status [DIR]                       exercises passed per chapter
    minigrad-course next [DIR]                         the first exercise still to do
    minigrad-course hint CHAPTER EXERCISE              the next hint step for it
    minigrad-course solution CHAPTER EXERCISE          print a reference answer
    minigrad-course reset CHAPTER [EXERCISE]           restore (your copy is backed up)

In a notebook of the workspace, ``from minigrad.course import status, use_reference``:
``status()`` shows the same table, ``use_reference("mysum")`` loads one exercise's
reference answer so the rest of the chapter runs (it is then not counted as done).

Teacher commands work on the course folder given with ``--course`` (default: the current
folder). Each subcommand is a function in ``COMMANDS``: a new command adds its function
and its arguments there.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import class_report, reports, student, teacher, term


@dataclass
class Command:
    run: Callable[[argparse.Namespace], int]
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]


def _course_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", default=".", metavar="COURSE_DIR",
                        help="the course folder made by init (default: the current folder)")


def _init_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("course_dir", metavar="COURSE_DIR", help="folder to create")
    parser.add_argument("--chapters", default=None,
                        help="chapter numbers, e.g. 1,2 (default: every chapter with exercises)")
    parser.add_argument("--notebooks", default=None, metavar="DIR",
                        help="where the chapters are (default: this repository's notebooks/)")
    parser.add_argument("--course-id", default="minigrad", help="nbgrader's course id")
    parser.add_argument("--timeout", type=int, default=teacher.DEFAULT_TIMEOUT,
                        help="seconds a cell may run when grading (default: %(default)s)")
    parser.add_argument("--exchange", default=None, metavar="DIR",
                        help="nbgrader's exchange folder on a JupyterHub (default: the one "
                             "nbgrader's config names, if it exists)")


def _collect_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submissions", nargs="?", default=None, metavar="SUBMISSIONS_DIR",
                        help="returned notebooks: STUDENT.ipynb or STUDENT/NOTEBOOK.ipynb "
                             "(default: the submissions in nbgrader's exchange, on a hub)")
    parser.add_argument("--assignment", default=None,
                        help="the assignment they are for (default: from the notebook's name, "
                             "or the only one)")
    term.collect_options(parser)
    _course_option(parser)


def _release_arguments(parser: argparse.ArgumentParser) -> None:
    term.release_options(parser)
    _course_option(parser)


def _grade_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=int, default=None,
                        help="seconds a cell may run (default: the one set by init)")
    parser.add_argument("--student", default=None,
                        help="grade only this student's submissions")
    parser.add_argument("--unsandboxed", action="store_true",
                        help="grade without a sandbox where bubblewrap cannot run (each "
                             "notebook's code could then read or change the course's "
                             "files: the grades are flagged 'unsandboxed')")
    _course_option(parser)


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("csv", metavar="GRADES_CSV", help="file to write")
    parser.add_argument("--format", choices=reports.FORMATS, default="csv",
                        help="csv: a row per student and assignment, a column per exercise, "
                             "the flags; canvas, moodle: that LMS's gradebook import (Moodle: "
                             "one file per assignment) (default: %(default)s)")
    _course_option(parser)


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("notebook", metavar="NOTEBOOK", help="your notebook (.ipynb)")
    parser.add_argument("--timeout", type=int, default=teacher.DEFAULT_TIMEOUT,
                        help="seconds a cell may run (default: %(default)s)")


def _workspace_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=None, metavar="DIR",
                        help="the workspace folder (default: my-course/ at the repository's "
                             "root)")


def _workspace_arguments(parser: argparse.ArgumentParser) -> None:
    _workspace_dir(parser)
    parser.add_argument("--notebooks", default=None, metavar="DIR",
                        help="where the chapters are (default: this repository's notebooks/)")


def _status_arguments(parser: argparse.ArgumentParser) -> None:
    _workspace_dir(parser)
    parser.add_argument("--timeout", type=int, default=teacher.DEFAULT_TIMEOUT,
                        help="seconds a cell may run (default: %(default)s)")
    parser.add_argument("--recheck", action="store_true",
                        help="run every notebook's checks again, even those unchanged since "
                             "the last check")


def _workspace_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", dest="dir", default=None, metavar="DIR",
                        help="the workspace folder (default: my-course/ at the "
                             "repository's root)")


def _hint_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chapter", metavar="CHAPTER", help="a chapter's name or number")
    parser.add_argument("exercise", metavar="EXERCISE", help="the exercise's id, e.g. mymul")
    _workspace_option(parser)


def _solution_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chapter", metavar="CHAPTER", help="a chapter's name or number")
    parser.add_argument("exercise", metavar="EXERCISE", help="the exercise's id, e.g. mymul")
    parser.add_argument("--notebooks", default=None, metavar="DIR",
                        help="where the chapters are (default: those the workspace was made "
                             "from, else this repository's notebooks/)")
    _workspace_option(parser)


def _reset_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chapter", metavar="CHAPTER", help="a chapter's name or number")
    parser.add_argument("exercise", nargs="?", default=None, metavar="EXERCISE",
                        help="only this exercise's cell, or one test cell such as "
                             "mymul-tests (default: the whole chapter)")
    _workspace_option(parser)


def _check(args: argparse.Namespace) -> int:
    """``teacher.check``, run as the pages were made (one BLAS thread in its kernel),
    saying what it does first (it prints nothing else until the notebook has run)."""
    path = Path(args.notebook)
    try:
        kernel = json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]["name"]
    except (OSError, ValueError, KeyError, TypeError):
        kernel = None
    if kernel == student.KERNEL_NAME:  # a workspace notebook: its kernel must be there
        student.install_kernel()
    if path.exists():
        print(f"check: running {path.name} in a fresh kernel, top to bottom (at most "
              f"{args.timeout} s a cell), then its checks' verdict...", file=sys.stderr,
              flush=True)
    before = {name: os.environ.get(name) for name in student.ONE_THREAD}
    os.environ.update(student.ONE_THREAD)  # the kernel nbgrader starts inherits them
    try:
        return teacher.check(args)
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _kernel(args: argparse.Namespace) -> int:
    folder = student.install_kernel()
    print(f"kernel \"{student.kernel_spec()['display_name']}\" installed in {folder}: this "
          "Python, one BLAS thread (the workspace's notebooks use it)")
    return 0


COMMANDS: dict[str, Command] = {
    "init": Command(teacher.init, "make a course folder with the chosen chapters",
                    _init_arguments),
    "release": Command(teacher.release, "generate the students' copies (solutions removed), "
                       "with a due date and a late policy if given", _release_arguments),
    "collect": Command(teacher.collect, "file a folder of returned notebooks for grading (no "
                       "folder: collect the submissions from nbgrader's exchange)",
                       _collect_arguments),
    "grade": Command(teacher.grade, "autograde the submissions and write feedback HTML",
                     _grade_arguments),
    "feedback": Command(teacher.feedback, "(on a hub) return each student's feedback "
                        "through nbgrader's exchange", _course_option),
    "export": Command(teacher.export, "write the grades as CSV", _export_arguments),
    "solutions": Command(term.solutions, "publish a chapter's solution notebooks after its "
                         "due date (a folder, and the exchange on a hub)",
                         term.solutions_options),
    "report": Command(class_report.report, "per exercise: who passed, the mistakes the "
                      "checks named (terminal, and an HTML page with --html)",
                      class_report.report_options),
    "check": Command(_check, "(students) run the checks of your notebook",
                     _check_arguments),
    "workspace": Command(student.workspace, "(learning alone) make or complete your "
                         "workspace: the chapters without the answers", _workspace_arguments),
    "kernel": Command(_kernel, "(learning alone) install the course's Jupyter kernel (this "
                      "Python, one BLAS thread); workspace does it too",
                      lambda parser: None),
    "status": Command(student.status, "(learning alone) exercises passed per chapter",
                      _status_arguments),
    "next": Command(student.next_exercise, "(learning alone) the first exercise still to "
                    "do: which notebook, which cell", _status_arguments),
    "hint": Command(student.hint, "(learning alone) the next hint step for an exercise",
                    _hint_arguments),
    "solution": Command(student.solution, "(learning alone) print an exercise's reference "
                        "answer", _solution_arguments),
    "reset": Command(student.reset, "(learning alone) restore a chapter or one exercise "
                     "(your copy is backed up)", _reset_arguments),
}


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(
        prog="minigrad-course", description="Homework from the minigrad chapters, graded "
        "offline with nbgrader.")
    sub = made.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        command.arguments(sub.add_parser(name, help=command.help, description=command.help))
    return made


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command].run(args)
    except teacher.CourseError as error:
        print(f"minigrad-course {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
