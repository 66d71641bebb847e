"""``minigrad-course report``: the class, exercise by exercise.

For each exercise of an assignment: who passed it (full points), partly passed, failed or
did not attempt it (the answer cell as handed out, or nothing returned), from nbgrader's
gradebook; the mistakes its checks named ("It looks like backward ignores grad_output:
..."), from what the judge recorded for each submission (``judged/STUDENT/ASSIGNMENT/
result.json``: the test cells' error outputs); and the written answers graded by hand,
with the points given or "not graded yet" (nbgrader's ``needs_manual_grade`` and
``manual_score``). In the terminal, and as one HTML page with a plot per exercise (inline
SVG from matplotlib; without it, the page says so and has none).
"""

from __future__ import annotations

import argparse
import html
import json
import re
from collections import Counter
from pathlib import Path

from .teacher import CourseError, assignments_of, course_folder, notebook_of, read_json
from .term import open_gradebook, chapters_named

PASSED, PARTLY, FAILED, MISSING = "passed", "partly", "failed", "not attempted"
OUTCOMES = (PASSED, PARTLY, FAILED, MISSING)
NOT_GRADED = "not graded yet"
NOT_ANSWERED = "0 (not answered)"
COLORS = {PASSED: "#2e7d32", PARTLY: "#f9a825", FAILED: "#c62828", MISSING: "#9e9e9e",
          NOT_GRADED: "#6a1b9a"}
MISTAKE = re.compile(r"It looks like (?:this mistake: )?(.+?)(?::\s|\.\s|\.$|$)", re.S)


def named_mistakes(message: str) -> list[str]:
    """The classic mistakes a check's message names ("It looks like backward ignores
    grad_output: ..." -> "backward ignores grad_output")."""
    flat = " ".join(message.split())
    return [m.strip() for m in MISTAKE.findall(flat)]


def _solution_text(notebook: dict) -> dict[str, str]:
    return {meta["grade_id"]: "".join(cell["source"]) if isinstance(cell["source"], list)
            else cell["source"] for cell in notebook["cells"]
            if (meta := cell.get("metadata", {}).get("nbgrader", {})).get("solution")}


def class_report(course: Path, assignment: str) -> dict:
    """The overview of one assignment: ``exercises`` (automatic: points, each outcome's
    students, the named mistakes with their students) and ``written`` (graded by hand:
    each student's score or ``not graded yet``)."""
    from nbgrader.api import MissingEntry

    from . import reports
    from .authoring import graded_cells
    from .grading import result_path

    notebook_name = notebook_of(course, assignment)
    source = read_json(course / "source" / assignment / notebook_name)
    points = graded_cells(source)
    exercise_tests = {e: tests for e, tests in reports.exercises(source).items() if tests}
    owner = {test: e for e, tests in exercise_tests.items() for test in tests}
    released_path = course / "release" / assignment / notebook_name
    stubs = _solution_text(read_json(released_path)) if released_path.exists() else {}
    submitted = course / "submitted"
    students = sorted(p.name for p in submitted.iterdir()) if submitted.is_dir() else []
    scores = reports.exercise_scores(course, assignment) \
        if (course / "gradebook.db").exists() else {}
    exercises = {e: {"points": sum(points.get(t, 0) for t in tests),
                     **{o: [] for o in OUTCOMES}, "mistakes": {}}
                 for e, tests in exercise_tests.items()}
    for student in students:
        path = submitted / student / assignment / notebook_name
        answers = _solution_text(read_json(path)) if path.exists() else {}
        result = result_path(course, student, assignment)
        judged = json.loads(result.read_text(encoding="utf-8")) if result.exists() else {}
        for cell in judged.get("notebook", {}).get("cells", []):
            test = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            for output in cell.get("outputs", []) if test in owner else []:
                if output.get("output_type") == "error":
                    for mistake in named_mistakes(output.get("evalue", "")):
                        found = exercises[owner[test]]["mistakes"].setdefault(mistake, [])
                        if student not in found:
                            found.append(student)
        for exercise, entry in exercises.items():
            score = scores.get(student, {}).get(exercise)
            untouched = exercise in stubs and answers.get(exercise, "").strip() == \
                stubs[exercise].strip()
            if score is None or (untouched and not score):
                outcome = MISSING
            elif score >= entry["points"]:
                outcome = PASSED
            else:
                outcome = PARTLY if score > 0 else FAILED
            entry[outcome].append(student)
    written: dict[str, dict] = {}
    changed_since = reports.read_changed_answers(course)
    if (course / "gradebook.db").exists():
        with open_gradebook(course) as gradebook:
            for student in students:
                try:
                    graded = gradebook.find_submission_notebook(
                        Path(notebook_name).stem, assignment, student)
                except MissingEntry:
                    continue
                for grade in graded.grades:
                    if grade.cell_type != "markdown":
                        continue
                    entry = written.setdefault(grade.name, {"points": grade.max_score,
                                                            "students": {}})
                    if reports.waits_for_teacher(grade, changed_since.get(student, {})
                                                 .get(assignment, {})):
                        entry["students"][student] = NOT_GRADED
                    elif grade.manual_score is None and grade.auto_score == 0:
                        entry["students"][student] = NOT_ANSWERED  # nbgrader: unchanged
                    else:
                        entry["students"][student] = grade.score
    return {"assignment": assignment, "students": students, "exercises": exercises,
            "written": written, "returned": [s for s in students
                                             if (submitted / s / assignment).is_dir()]}


def _written_outcome(score, points) -> str:
    if score == NOT_GRADED:
        return NOT_GRADED
    if score == NOT_ANSWERED:
        return MISSING
    return PASSED if score >= points else PARTLY if score > 0 else FAILED


def _score_text(score) -> str:
    return score if isinstance(score, str) else f"{score:g}"


def report_text(report: dict, most: int = 3) -> str:
    lines = [f"{report['assignment']}: {len(report['returned'])} of "
             f"{len(report['students'])} student(s) returned it", "",
             f"{'exercise':<22}{'points':>7}" + "".join(f"{o:>15}" for o in OUTCOMES)]
    for exercise, entry in report["exercises"].items():
        lines.append(f"{exercise:<22}{entry['points']:>7g}"
                     + "".join(f"{len(entry[o]):>15}" for o in OUTCOMES))
    for exercise, entry in report["exercises"].items():
        lines.append(f"\n{exercise}:")
        for outcome in (PARTLY, FAILED, MISSING):
            if entry[outcome]:
                lines.append(f"  {outcome}: {', '.join(entry[outcome])}")
        ranked = sorted(entry["mistakes"].items(), key=lambda item: -len(item[1]))
        for mistake, who in ranked[:most]:
            lines.append(f"  mistake ({len(who)}): {mistake} ({', '.join(who)})")
        if len(ranked) > most:
            lines.append(f"  ... and {len(ranked) - most} other named mistake(s)")
    for question, entry in report["written"].items():
        lines.append(f"\n{question} (written, {entry['points']:g} points, graded by hand):")
        for student, score in entry["students"].items():
            lines.append(f"  {student}: {_score_text(score)}")
    return "\n".join(lines)


def _plot(counts: dict[str, int], title: str) -> str | None:
    """A bar per outcome as inline SVG (None without matplotlib)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import io

    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(4.2, 2.0))
    names = list(counts)
    axes.barh(names, [counts[n] for n in names], color=[COLORS[n] for n in names])
    axes.invert_yaxis()
    axes.set_title(title, fontsize=10)
    axes.set_xlabel("students")
    axes.xaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None})  # the same page twice
    plt.close(figure)
    svg = out.getvalue()
    return svg[svg.index("<svg"):]


PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222 }
table { border-collapse: collapse; margin: 1em 0 } td, th { border: 1px solid #ccc;
padding: 0.3em 0.7em; text-align: left } th { background: #f0f0f0 }
section { border-top: 1px solid #ddd; margin-top: 1.5em; display: flex; gap: 2em;
flex-wrap: wrap } section > div:first-child { flex: 0 0 26em }
.plot svg { width: 26em; height: auto } .note { color: #a60 }
"""


def report_html(reports: list[dict]) -> str:
    esc = html.escape
    parts = []
    plots_missing = False
    for report in reports:
        parts.append(f"<h1>{esc(report['assignment'])}</h1><p>{len(report['returned'])} of "
                     f"{len(report['students'])} student(s) returned it.</p><table><tr>"
                     "<th>exercise</th><th>points</th>"
                     + "".join(f"<th>{o}</th>" for o in OUTCOMES) + "</tr>")
        for exercise, entry in report["exercises"].items():
            parts.append(f"<tr><td>{esc(exercise)}</td><td>{entry['points']:g}</td>"
                         + "".join(f"<td>{len(entry[o])}</td>" for o in OUTCOMES) + "</tr>")
        parts.append("</table>")
        items = [(e, {o: len(entry[o]) for o in OUTCOMES}, entry)
                 for e, entry in report["exercises"].items()]
        for question, entry in report["written"].items():
            outcomes = Counter(_written_outcome(s, entry["points"])
                               for s in entry["students"].values())
            items.append((question, {o: outcomes[o] for o in (PASSED, PARTLY, FAILED,
                                                              NOT_GRADED, MISSING)}, entry))
        for name, counts, entry in items:
            svg = _plot(counts, name)
            plots_missing |= svg is None
            body = [f"<h2>{esc(name)}</h2>"]
            if "students" in entry:  # a written answer
                body.append(f"<p>Written answer, {entry['points']:g} points, graded by hand."
                            "</p><table><tr><th>student</th><th>score</th></tr>")
                body += [f"<tr><td>{esc(s)}</td><td>{esc(_score_text(v))}"
                         "</td></tr>" for s, v in entry["students"].items()]
                body.append("</table>")
            else:
                body += [f"<p><b>{o}</b>: {esc(', '.join(entry[o]))}</p>"
                         for o in OUTCOMES if entry[o]]
                ranked = sorted(entry["mistakes"].items(), key=lambda item: -len(item[1]))
                if ranked:
                    body.append("<p>Mistakes the checks named:</p><ul>" + "".join(
                        f"<li>{esc(m)}: {len(who)} ({esc(', '.join(who))})</li>"
                        for m, who in ranked) + "</ul>")
            plot = f'<div class="plot" data-exercise="{esc(name)}">{svg}</div>' if svg else ""
            parts.append(f"<section><div>{''.join(body)}</div>{plot}</section>")
    note = ('<p class="note">matplotlib is not installed, so this page has no plots '
            '(pip install matplotlib).</p>') if plots_missing else ""
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Class report</title>"
            f"<style>{PAGE_STYLE}</style></head><body>{note}{''.join(parts)}</body></html>\n")


def report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chapter", nargs="?", default=None, metavar="CHAPTER",
                        help="a chapter's name or number (default: every graded one)")
    parser.add_argument("--html", default=None, metavar="FILE",
                        help="also write the report as one HTML page (a plot per exercise)")
    parser.add_argument("--course", default=".", metavar="COURSE_DIR",
                        help="the course folder made by init (default: the current folder)")


def report(args: argparse.Namespace) -> int:
    course = course_folder(args)
    if not (course / "gradebook.db").exists() or not (course / "autograded").is_dir():
        raise CourseError("nothing graded yet: minigrad-course grade first")
    chosen = chapters_named(course, [args.chapter]) if args.chapter else [
        a for a in assignments_of(course) if any((course / "autograded").glob(f"*/{a}"))]
    made = [class_report(course, assignment) for assignment in chosen]
    print("\n\n".join(report_text(r) for r in made))
    if args.html:
        Path(args.html).write_text(report_html(made), encoding="utf-8")
        print(f"\nwrote {args.html}")
    return 0

