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
    ok = _report(f"autograde {assignment} --force" + (f" --student={student}" if student
                                                        else ""),
                 api.autograde(assignment, student or "*", force=True, create=True))
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
