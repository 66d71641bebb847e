"""``minigrad-course grade``: every submission judged in its own sandbox, in parallel,
then scored and given feedback by nbgrader.

1. Each returned notebook of ``submitted/STUDENT/ASSIGNMENT/`` is judged
   (``judge.py``: its code in a sandbox, the checks outside it), one process per
   submission (``judges.py``: forked from a server that has imported the judge), as many at
   once as the machine has cores. The result (every cell's
   outputs, and the flags) goes to ``judged/STUDENT/ASSIGNMENT/result.json`` with a key
   made of the notebook, the teacher's copy and the checkers' code: a regrade reruns
   only what changed.
2. ``nbgrader autograde`` then runs as usual (``scoring.py``: in one process with
   ``generate_feedback``) (it restores the teacher's test cells and
   clears every output the student saved), except that its ``Execute`` step is
   :class:`JudgedOutputs`, which fills in the judged outputs instead of running the
   notebook in a kernel of the grader's own. nbgrader scores the test cells and writes
   the gradebook; no student code runs in that process.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Float, Unicode

from . import judges

JUDGED = "judged"
RESULT = "result.json"


def _code_version() -> str:
    """A digest of the code that decides a grade (checkers, judge, engine): a change
    there regrades everyone."""
    import minigrad

    digest = hashlib.sha256()
    roots = [Path(minigrad.__file__).parent, Path(__file__).parent]
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _key(submission: Path, source: Path, timeout: float, sandboxed: bool,
         version: str) -> str:
    digest = hashlib.sha256()
    for part in (submission.read_bytes(), source.read_bytes(),
                 f"{float(timeout):g}:{sandboxed}:{version}".encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def judge_all(course: Path, assignment: str, notebook: str, students: list[str],
              timeout: float, sandboxed: bool, say=print) -> dict[str, dict]:
    """Judge the submissions of ``students`` (those whose result is stale), in parallel;
    ``{student: result}`` for all of them."""
    source = course / "source" / assignment / notebook
    version = _code_version()
    todo, results = [], {}
    for student in students:
        submission = course / "submitted" / student / assignment / notebook
        if not submission.exists():
            continue
        folder = course / JUDGED / student / assignment
        key = _key(submission, source, timeout, sandboxed, version)
        kept = folder / RESULT
        if kept.exists():
            result = json.loads(kept.read_text(encoding="utf-8"))
            if result.get("key") == key:
                results[student] = result
                continue
        todo.append((student, submission, folder, key))
    if not todo:
        return results
    # as many at once as there are cores (MINIGRAD_GRADING_JOBS=N sets another number:
    # the test suite, which runs two graders at once, grades one notebook at a time each)
    jobs = int(os.environ.get("MINIGRAD_GRADING_JOBS") or os.cpu_count() or 1)
    workers = max(1, min(len(todo), jobs))
    say(f"{assignment}: judging {len(todo)} notebook(s), {workers} at a time, each in its "
        f"own sandbox" + ("" if sandboxed else " (UNSANDBOXED)")
        + (f"; {len(results)} unchanged since the last grading" if results else ""))
    started = time.monotonic()
    done = 0

    def one(item):
        student, submission, folder, key = item
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / RESULT
        out.unlink(missing_ok=True)  # a result left from an earlier grading is not this one
        argv = [str(submission), str(source), str(out), "--timeout", str(timeout),
                "--data", str(submission.parent), "--hide", str(course)]
        if not sandboxed:
            argv.append("--unsandboxed")
        # the whole notebook may take a limit per cell; a judge that hangs past that is
        # stopped and the notebook reported as not graded
        error = server.run(argv, folder / "judge.log", limit=600 + 30 * timeout)
        if error or not out.exists():
            result = {"error": error or "the judge wrote no result",
                      "key": key}
        else:
            result = json.loads(out.read_text(encoding="utf-8"))
            result["key"] = key
        out.write_text(json.dumps(result), encoding="utf-8")
        return student, result

    server = judges.Judges()
    try:
        with ThreadPoolExecutor(workers) as pool:
            for student, result in pool.map(one, todo):
                results[student] = result
                done += 1
                say(f"  [{done}/{len(todo)}] {student}: "
                    + (f"not graded ({result['error']})" if "error" in result else
                       f"judged in {result.get('seconds', 0):.1f} s"))
    finally:
        server.close()
    say(f"{assignment}: judged in {time.monotonic() - started:.0f} s")
    return results


def result_path(course: Path, student: str, assignment: str) -> Path:
    return course / JUDGED / student / assignment / RESULT


class JudgedOutputs(Preprocessor):
    """nbgrader's ``Execute`` step, replaced: each code cell gets the outputs the judge
    recorded for it (the submission's own outputs were cleared by nbgrader before). A
    submission not judged yet (autograde started from the formgrader) is judged now, in
    its sandbox. A cell the judge has no record of gets an error, so a test cell can
    never pass unjudged."""

    enabled = Bool(True)  # nbconvert's preprocessors are off unless enabled
    course = Unicode("", help="the course folder (nbgrader's CourseDirectory.root)"
                     ).tag(config=True)
    timeout = Float(60, help="seconds a cell may run").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        course = Path(os.environ.get("MINIGRAD_COURSE") or self.course or ".")
        student, assignment = info.get("student", ""), info.get("assignment", "")
        path = result_path(course, student, assignment)
        notebook = f"{info.get('notebook', assignment)}.ipynb"
        if (course / "submitted" / student / assignment / notebook).exists():
            from . import sandbox

            sandboxed = not os.environ.get("MINIGRAD_UNSANDBOXED")
            if not sandboxed or sandbox.check() is None:  # kept results are reused
                judge_all(course, assignment, notebook, [student], self.timeout,
                          sandboxed, say=self.log.info)
        judged = []
        if path.exists():
            result = json.loads(path.read_text(encoding="utf-8"))
            judged = result.get("notebook", {}).get("cells", [])
            why = result.get("error", "")
        else:
            why = "it was not judged"
        by_id = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c
                 for c in judged if c.get("metadata", {}).get("nbgrader", {})}
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            record = by_id.get(grade_id) if grade_id else (
                judged[index] if index < len(judged) else None)
            if record is None or _text(record) != _text(cell):
                if cell.metadata.get("nbgrader", {}).get("grade"):
                    cell.outputs = [_error("NotGraded", f"this test was not run: {why}")]
                continue
            cell.outputs = [_output(o) for o in record.get("outputs", [])]
        return nb, resources


def _text(cell) -> str:
    source = cell.get("source", "") if isinstance(cell, dict) else cell.source
    return "".join(source) if isinstance(source, list) else source


def _output(output: dict):
    from nbformat import from_dict

    return from_dict(output)


def _error(name: str, text: str):
    from nbformat import from_dict

    return from_dict({"output_type": "error", "ename": name, "evalue": text,
                      "traceback": [f"{name}: {text}"]})


AUTOGRADE_CONFIG = '''\
# minigrad-course grade: nbgrader scores the outputs the judge recorded (each submission
# ran in its own sandbox, its checks outside it) instead of executing the notebook here
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern,
                                    LimitOutput, SaveAutoGrades)
from nbconvert.preprocessors import ClearMetadataPreprocessor
c.Autograde.autograde_preprocessors = [
    "minigrad.course.grading.JudgedOutputs", IgnorePattern, ClearMetadataPreprocessor,
    LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
c.JudgedOutputs.course = c.CourseDirectory.root
c.JudgedOutputs.timeout = c.Execute.timeout
'''
