"""The instructor guide's measured parts: what each chapter asks of a student, read from
the notebooks, and how long it took to run.

``docs/teaching.md`` is written by hand (term plan, objectives, discussion questions,
running the course), except the parts between its markers, which this script makes from
the chapters, as ``course_index.py --write-readme`` makes the README's course table:

- the chapter table: per chapter, the graded exercises (ids and points, from nbgrader's
  cells: ``course/authoring.py``), the written questions (cells tagged ``question:ID``
  and ``answer:ID:POINTS``), the words of its markdown, the code cells a student runs,
  the measured run time of the solved chapter, and a working time derived from those by
  the rule below;
- per chapter, a block with the exercises, the written questions and the classic
  mistakes its checks name (the mistakes ``tests/test_grading.py`` grades, with the words
  the feedback shows for each: ``tests/mistakes/NN_*.py``).

Run times are measured, not guessed: ``--measure`` executes every solved chapter in a
fresh kernel with one BLAS thread, as ``scripts/execute_notebooks.py`` does (nbclient;
the notebook is not written back), and records in ``docs/teaching_times.json`` the
kernel's CPU time (which the machine's load changes little), the time on the clock and
the load average; ``--write`` reads them.

    .venv/bin/python scripts/teaching_guide.py               # the chapter table, printed
    .venv/bin/python scripts/teaching_guide.py --measure     # time every chapter (minutes)
    .venv/bin/python scripts/teaching_guide.py --measure 02  # ... or some chapters
    .venv/bin/python scripts/teaching_guide.py --write       # the tables into docs/teaching.md
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course_index  # noqa: E402

ROOT = course_index.ROOT
sys.path.insert(0, str(ROOT / "course"))
import authoring  # noqa: E402  (course/ is minigrad.course; only the standard library)

GUIDE = ROOT / "docs" / "teaching.md"
TIMES = ROOT / "docs" / "teaching_times.json"
MISTAKES = ROOT / "tests" / "mistakes"
WRITE = "`python scripts/teaching_guide.py --write`"
TABLE_START = f"<!-- chapter table: made by {WRITE} -->"
TABLE_END = "<!-- end of chapter table -->"
BLOCK_START = re.compile(r"<!-- chapter (\d+): made by .*? -->")
BLOCK_END = "<!-- end of chapter {number:02d} -->"

# Written ("explain why") questions: a markdown cell tagged question:ID, and the cell where
# the student answers, tagged answer:ID:POINTS (graded by hand in the formgrader).
QUESTION_TAG = re.compile(rf"^question:({authoring.ID})$")
ANSWER_TAG = re.compile(rf"^answer:({authoring.ID}):(\d+(?:\.\d+)?)$")

# The rule that turns measured quantities into a student's working time (the guide says
# why these numbers): careful reading of technical prose, a minute per code cell (read
# it, run it, look at what it printed), minutes per point of an exercise or a written
# answer. The chapters give 1 point to a formula or a prediction and 3 to a whole
# Function with its backward, so the minutes follow the points.
READING_WORDS_PER_MINUTE = 120
MINUTES_PER_CODE_CELL = 1
MINUTES_PER_EXERCISE_POINT = 10
MINUTES_PER_WRITTEN_POINT = 5


@dataclass(frozen=True)
class Chapter:
    notebook: course_index.Notebook
    exercises: dict[str, float]  # exercise id -> its points (the sum of its test cells)
    written: dict[str, float]  # written question id -> its points
    words: int  # whitespace-separated words of the markdown cells
    code_cells: int
    mistakes: dict[str, list[tuple[str, str]]]  # exercise id -> [(mistake, feedback words)]
    refers_back: dict[int, int]  # earlier chapter (1 on) -> how often the text names it

    @property
    def number(self) -> int:
        return self.notebook.number

    @property
    def points(self) -> float:
        return sum(self.exercises.values())

    @property
    def written_points(self) -> float:
        return sum(self.written.values())

    def working_minutes(self) -> float:
        """The derived working time (see the rule's constants above)."""
        return (self.words / READING_WORDS_PER_MINUTE
                + self.code_cells * MINUTES_PER_CODE_CELL
                + self.points * MINUTES_PER_EXERCISE_POINT
                + self.written_points * MINUTES_PER_WRITTEN_POINT)


def _source(cell: dict) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else text


def _is_written(cell: dict) -> bool:
    return any(QUESTION_TAG.match(tag) or ANSWER_TAG.match(tag)
               for tag in cell.get("metadata", {}).get("tags", []))


def written_questions(notebook: dict) -> dict[str, float]:
    """``{question id: points}`` of a notebook's written questions, from their answer cells'
    tags (a ``question:ID`` cell without an answer cell is worth nothing yet)."""
    found: dict[str, float] = {}
    for cell in notebook["cells"]:
        for tag in cell.get("metadata", {}).get("tags", []):
            if match := ANSWER_TAG.match(tag):
                points = float(match.group(2))
                found[match.group(1)] = int(points) if points.is_integer() else points
    return found


def graded_exercises(notebook: dict) -> dict[str, float]:
    """``{exercise id: points}`` of the code exercises, in the notebook's order (written
    answers left out, whatever nbgrader metadata they carry)."""
    code_only = {"cells": [cell for cell in notebook["cells"] if not _is_written(cell)]}
    points = authoring.graded_cells(code_only)
    return {exercise: sum(points.get(test, 0) for test in tests)
            for exercise, tests in authoring.exercises(code_only).items()}


def feedback_of_mistakes(number: int) -> dict[str, list[tuple[str, str]]]:
    """``{exercise id: [(mistake, what the feedback says)]}`` for the classic mistakes that
    tests/test_grading.py grades in chapter ``number`` (a mistake whose feedback only
    asks to fix an earlier exercise first is left out: it names no mistake of its own)."""
    path = next(MISTAKES.glob(f"{number:02d}_*.py"), None)
    if path is None:
        return {}
    spec = importlib.util.spec_from_file_location(f"mistakes_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: dict[str, list[tuple[str, str]]] = {}
    for name, (grade_id, _code, words) in module.MISTAKES.items():
        if not re.match(r"fix exercise \d+", words):
            found.setdefault(grade_id, []).append((name, words))
    return found


def earlier_chapters_named(text: str, number: int) -> dict[int, int]:
    """``{chapter: times}`` for each earlier chapter the text names ("chapter 7's
    Linear", "chapters 2 and 6"), chapter 0 left out (every chapter names it for the
    course's commands)."""
    named: dict[int, int] = {}
    for mention in re.finditer(r"[Cc]hapters? (0?\d+(?:(?:, | and | to | or )0?\d+)*)", text):
        for found in re.findall(r"\d+", mention.group(1)):
            if 0 < int(found) < number:
                named[int(found)] = named.get(int(found), 0) + 1
    return dict(sorted(named.items()))


def read_chapter(notebook: course_index.Notebook) -> Chapter:
    cells = json.loads(notebook.path.read_text(encoding="utf-8"))["cells"]
    markdown = [_source(c) for c in cells if c["cell_type"] == "markdown"]
    return Chapter(notebook, graded_exercises({"cells": cells}),
                   written_questions({"cells": cells}),
                   sum(len(text.split()) for text in markdown),
                   sum(c["cell_type"] == "code" for c in cells),
                   feedback_of_mistakes(notebook.number),
                   earlier_chapters_named("\n".join(_source(c) for c in cells),
                                          notebook.number))


def chapters(course: course_index.Course | None = None) -> list[Chapter]:
    course = course or course_index.load()
    return [read_chapter(nb) for nb in course.notebooks() if nb.is_chapter]


# -- run times ---------------------------------------------------------------------------

# The kernel's own CPU time (and its finished child processes', e.g. Graphviz's dot), read
# by one more cell at the end: unlike the time on the clock, it changes little with the
# machine's load.
CPU_CELL = ("import resource as _resource\n"
            "print(sum(getattr(_resource.getrusage(who), field) for who in "
            "(_resource.RUSAGE_SELF, _resource.RUSAGE_CHILDREN) "
            "for field in ('ru_utime', 'ru_stime')))")


@dataclass(frozen=True)
class RunTime:
    seconds: float  # on the clock, from the kernel's start to its shutdown
    cpu_seconds: float  # the kernel's CPU time


def run_time(path: Path) -> RunTime:
    """Run a chapter as committed (its answers in) from a fresh kernel with one BLAS
    thread, as scripts/execute_notebooks.py does; the notebook is not written back."""
    import nbclient
    import nbformat
    import thread_settings  # course/thread_settings.py: reads course/one_thread.env

    environment = dict(os.environ)
    environment.update(thread_settings.read_env_file())
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(CPU_CELL))
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=300,
                                     record_timing=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    started = time.perf_counter()
    client.execute(env=environment)  # a new kernel, given this environment
    seconds = time.perf_counter() - started
    printed = "".join(output.get("text", "") for output in notebook.cells[-1].outputs)
    return RunTime(seconds, float(printed))


def recorded_times() -> dict:
    """``docs/teaching_times.json``: ``{"chapters": {stem: seconds}, ...}`` ({} if absent)."""
    if not TIMES.exists():
        return {"chapters": {}}
    return json.loads(TIMES.read_text(encoding="utf-8"))


def measure(selected: list[str]) -> None:
    """Run the chosen chapters (numbers or stems; all when empty) and record their times."""
    record = recorded_times()
    for chapter in chapters():
        stem = chapter.notebook.stem
        if selected and not any(stem.startswith(f"{int(s):02d}_") if s.isdigit()
                                else stem == s for s in selected):
            continue
        load_before = os.getloadavg()[0]
        run = run_time(chapter.notebook.path)
        record["chapters"][stem] = {"seconds": round(run.seconds, 1),
                                    "cpu_seconds": round(run.cpu_seconds, 1),
                                    "load_average": round(
                                        (load_before + os.getloadavg()[0]) / 2, 1)}
        print(f"{stem}: {run.cpu_seconds:.1f} s of CPU, {run.seconds:.1f} s on the clock "
              f"(load average {load_before:.1f})", flush=True)
        record.update(measured=time.strftime("%Y-%m-%d"), machine=(
            f"{os.cpu_count()} cores, Python {platform.python_version()}, "
            f"one BLAS thread, a fresh kernel per chapter"))
        TIMES.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n",
                         encoding="utf-8")


# -- the guide's generated parts -----------------------------------------------------------

def _points(value: float) -> str:
    return f"{value:g}"


def _hours(minutes: float) -> str:
    quarters = max(1, round(minutes / 15))
    return f"{quarters / 4:g} h"


def chapter_table(found: list[Chapter], times: dict) -> str:
    rows = ["| chapter | graded exercises (points) | written questions (points) "
            "| words | code cells | run time, measured (CPU) | working time, derived |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for chapter in found:
        exercises = ", ".join(f"`{e}` {_points(p)}" for e, p in chapter.exercises.items())
        written = ", ".join(f"`{q}` {_points(p)}" for q, p in chapter.written.items())
        run = times["chapters"].get(chapter.notebook.stem)
        seconds = f"{run['cpu_seconds']:g} s" if run else "not measured"
        rows.append(
            f"| [{chapter.number}: {_short_title(chapter)}](#{_anchor(chapter)}) "
            f"| {exercises or '-'} ({_points(chapter.points)}) "
            f"| {written or 'none yet'} ({_points(chapter.written_points)}) "
            f"| {chapter.words} | {chapter.code_cells} "
            f"| {seconds} "
            f"| {_hours(chapter.working_minutes())} |")
    total_points = sum(c.points for c in found)
    total_written = sum(c.written_points for c in found)
    total_minutes = sum(c.working_minutes() for c in found)
    total_seconds = sum(times["chapters"].get(c.notebook.stem, {}).get("cpu_seconds", 0)
                        for c in found)
    rows.append(f"| all {len(found)} chapters | ({_points(total_points)}) "
                f"| ({_points(total_written)}) | {sum(c.words for c in found)} "
                f"| {sum(c.code_cells for c in found)} "
                f"| {total_seconds:.0f} s "
                f"| {_hours(total_minutes)} |")
    rows.append("")
    rows.append(measured_on(found, times))
    return "\n".join(rows)


def measured_on(found: list[Chapter], times: dict) -> str:
    """A sentence saying when and how the run times were measured."""
    runs = [times["chapters"][c.notebook.stem] for c in found
            if c.notebook.stem in times["chapters"]]
    if not runs:
        return "Run times: not measured yet (`python scripts/teaching_guide.py --measure`)."
    loads = [run["load_average"] for run in runs]
    return (f"Run times measured on {times['measured']} ({times['machine']}): the "
            f"kernel's CPU time, kernel start included. On the clock the chapters took "
            f"{sum(run['seconds'] for run in runs):.0f} s in all, the machine's load "
            f"average at {min(loads):g} to {max(loads):g} while they ran.")


def _short_title(chapter: Chapter) -> str:
    return chapter.notebook.title.split(": ", 1)[-1]


def _anchor(chapter: Chapter) -> str:
    """The anchor of the chapter's section in the guide (GitHub's, as the site's)."""
    heading = f"Chapter {chapter.number}: {_short_title(chapter)}"
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def chapter_block(chapter: Chapter, times: dict) -> str:
    """The generated part of a chapter's section: exercises, written questions, times,
    the earlier chapters it names, mistakes."""
    run = times["chapters"].get(chapter.notebook.stem)
    lines = [f"*Graded exercises* ({_points(chapter.points)} points): "
             + ", ".join(f"`{e}` ({_points(p)})" for e, p in chapter.exercises.items())
             + ".",
             "",
             "*Written questions, graded by hand*: "
             + (", ".join(f"`{q}` ({_points(p)})" for q, p in chapter.written.items())
                if chapter.written else "none in the notebook yet")
             + " (more in [written_questions.md](written_questions.md)).",
             "",
             f"*Working time* (derived, see [the rule](#working-times)): about "
             f"{_hours(chapter.working_minutes())} for {chapter.words} words, "
             f"{chapter.code_cells} code cells and {_points(chapter.points)} points; "
             + (f"the solved chapter runs in {run['cpu_seconds']:g} s of CPU time "
                f"({run['seconds']:g} s on the clock, load average {run['load_average']:g}; "
                "measured)."
                if run else "its run time is not measured yet."),
             "",
             "*Earlier chapters its text names* (times): "
             + (", ".join(f"{n} ({times})" for n, times in chapter.refers_back.items())
                or "none") + ".",
             ""]
    named = [(e, chapter.mistakes[e]) for e in chapter.exercises if chapter.mistakes.get(e)]
    if named:
        lines.append("*Classic mistakes its checks name* (each graded by "
                     "`tests/test_grading.py`, and what its feedback says):")
        lines.append("")
        for exercise, mistakes in named:
            lines.append(f"- `{exercise}`: " + "; ".join(
                f"{name.replace('-', ' ')} (\"{words}\")" for name, words in mistakes) + ".")
    return "\n".join(lines)


def guide_with_tables(guide: str, found: list[Chapter], times: dict) -> str:
    """The guide's text with its chapter table and every chapter block made again."""
    try:
        start, end = guide.index(TABLE_START), guide.index(TABLE_END)
    except ValueError:
        raise SystemExit(f"teaching_guide: {GUIDE.relative_to(ROOT)} has no chapter table "
                         f"markers ({TABLE_START} ... {TABLE_END})") from None
    guide = (guide[:start + len(TABLE_START)] + "\n\n" + chapter_table(found, times)
             + "\n\n" + guide[end:])
    by_number = {chapter.number: chapter for chapter in found}
    for match in reversed(list(BLOCK_START.finditer(guide))):
        number = int(match.group(1))
        if number not in by_number:
            raise SystemExit(f"teaching_guide: the guide has a block for chapter {number}, "
                             "which the notebooks do not have")
        end_marker = BLOCK_END.format(number=number)
        end = guide.find(end_marker, match.end())
        if end < 0:
            raise SystemExit(f"teaching_guide: chapter {number}'s block has no end marker "
                             f"{end_marker}")
        guide = (guide[:match.end()] + "\n\n" + chapter_block(by_number[number], times)
                 + "\n\n" + guide[end:])
    return guide


def main(arguments: list[str]) -> None:
    if arguments and arguments[0] == "--measure":
        measure(arguments[1:])
    elif arguments == ["--write"]:
        GUIDE.write_text(guide_with_tables(GUIDE.read_text(encoding="utf-8"), chapters(),
                                           recorded_times()), encoding="utf-8")
    elif not arguments:
        print(chapter_table(chapters(), recorded_times()))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
