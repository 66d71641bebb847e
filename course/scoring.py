"""Scores and feedback pages for a class: nbgrader's ``autograde`` (from the judged
outputs, ``grading.JudgedOutputs``) then ``generate_feedback``, in one process.

``grade`` runs ``python -m minigrad.course.scoring COURSE ASSIGNMENT [STUDENT]`` in the
course folder, as it would run the two nbgrader commands, with the same configuration
(``nbgrader_config.py``): one start-up of nbgrader (some seconds of imports) instead of
one per command, and no student code in it. The feedback pages are split over the
machine's cores by forking after the scores are written (the pages only read the
gradebook). It prints each command's log, as ``nbgrader`` would.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import reports

# jsonschema, which nbformat loads, builds a parser for IRIs (an Earley grammar, 2-3 s of
# CPU) at import when rfc3987-syntax is installed (jupyter-events asks for it); a
# notebook's schema never checks that format, so this process goes without
sys.modules.setdefault("rfc3987_syntax", None)


def _api():
    from nbgrader.apps import NbGraderAPI
    from nbgrader.apps.nbgraderapp import NbGraderApp

    app = NbGraderApp()  # reads nbgrader_config.py as the command line would
    app.initialize([])
    config = app.config
    if "exporter_class" not in config.GenerateFeedback:  # (unless the teacher chose one)
        config.GenerateFeedback.exporter_class = "minigrad.course.feedback_page.FeedbackHTML"
    return NbGraderAPI(config=config)


def _report(title: str, result: dict) -> bool:
    print(f"$ nbgrader {title}\n{result.get('log', '')}{result.get('error', '')}", flush=True)
    return bool(result.get("success"))


def score(assignment: str, student: str | None, parts: int) -> int:
    """Scores for the assignment (one student's, or everyone's), then feedback pages in
    ``parts`` processes; 0 if all went well."""
    api = _api()
    reviewed, changed = _reviewed_answers(api, assignment, student)
    ok = _report(f"autograde {assignment} --force" + (f" --student={student}" if student
                                                        else ""),
                 api.autograde(assignment, student or "*", force=True, create=True))
    _keep_reviews(api, assignment, reviewed)
    reports.note_changed_answers(Path(api.coursedir.root), assignment, changed,
                                 [(who, name) for who, _, name in reviewed])
    autograded = os.path.join(api.coursedir.root, "autograded")
    everyone = sorted(
        entry.name for entry in (os.scandir(autograded) if os.path.isdir(autograded) else ())
        if os.path.isdir(os.path.join(entry.path, assignment)))
    students = [student] if student else everyone
    parts = max(1, min(parts, len(students) // 4))
    children = []
    sys.stdout.flush()  # (or a child would print it again)
    for part in range(1, parts):
        group = students[part::parts]
        pid = os.fork()
        if pid == 0:  # a child: its share of the pages, and nothing else
            code = 1
            try:
                code = 0 if _feedback(api, assignment, group, everyone) else 1
            finally:
                sys.stdout.flush()
                os._exit(code)
        children.append(pid)
    mine = students[0::parts]
    ok = _feedback(api, assignment, mine, everyone) and ok
    for pid in children:
        ok = os.waitpid(pid, 0)[1] == 0 and ok
    return 0 if ok else 1


def _answer_sources(path: str) -> dict[str, str]:
    """``{grade_id: source}`` of a notebook's graded cells ({} if it cannot be read)."""
    import nbformat

    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception:  # a notebook nbgrader could not read either: nothing to keep
        return {}
    return {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in notebook.cells
            if cell.metadata.get("nbgrader", {}).get("grade_id")}


def _reviewed_answers(api, assignment: str, student: str | None) -> tuple[list, list]:
    """The answers graded by hand (a ``manual_score``, not waiting for review) whose text
    is the same in the notebook about to be scored as in the one the teacher graded
    (last time's ``autograded/`` copy): ``(student, notebook, grade_id)``; and those whose
    text changed: ``(student, grade_id, points)``.

    nbgrader's autograde marks every answer with a manual score "needs manual grading"
    again, in case the submission changed; the teacher's guide runs ``grade`` again after
    grading by hand, which would then list every graded answer as still to grade. An
    answer the student changed since is marked again, as nbgrader does."""
    from nbgrader.api import Gradebook

    root = api.coursedir.root
    kept, changed = [], []
    with Gradebook(api.coursedir.db_url) as gradebook:
        for submission in gradebook.assignment_submissions(assignment):
            if student is not None and submission.student_id != student:
                continue
            for notebook in submission.notebooks:
                done = [g.name for g in notebook.grades
                        if g.manual_score is not None and not g.needs_manual_grade]
                if not done:
                    continue
                where = (submission.student_id, assignment, f"{notebook.name}.ipynb")
                graded = _answer_sources(os.path.join(root, "autograded", *where))
                now = _answer_sources(os.path.join(root, "submitted", *where))
                for grade in notebook.grades:
                    if grade.name not in done:
                        continue
                    if grade.name in graded and graded[grade.name] == now.get(grade.name):
                        kept.append((submission.student_id, notebook.name, grade.name))
                    else:
                        changed.append((submission.student_id, grade.name,
                                        grade.manual_score))
    return kept, changed


def _keep_reviews(api, assignment: str, reviewed: list[tuple]) -> None:
    """After autograde: the answers ``_reviewed_answers`` found are graded, as before."""
    from nbgrader.api import Gradebook, MissingEntry

    if not reviewed:
        return
    with Gradebook(api.coursedir.db_url) as gradebook:
        for student, notebook, name in reviewed:
            try:
                grade = gradebook.find_grade(name, notebook, assignment, student)
            except MissingEntry:  # (the teacher's copy lost that cell: nothing to keep)
                continue
            if grade.manual_score is not None:
                grade.needs_manual_grade = False
        gradebook.db.commit()


def _feedback(api, assignment: str, group: list[str], everyone: list[str]) -> bool:
    from nbgrader.utils import temp_attrs

    if not group:
        return True
    others = sorted(set(everyone) - set(group))
    with temp_attrs(api.coursedir, student_id_exclude=",".join(others)):
        return _report(f"generate_feedback {assignment} --force ({len(group)} students)",
                       api.generate_feedback(assignment, None, force=True))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    course, assignment = argv[0], argv[1]
    student = argv[2] if len(argv) > 2 and argv[2] else None
    os.chdir(course)
    return score(assignment, student, os.cpu_count() or 1)


if __name__ == "__main__":
    sys.exit(main())
