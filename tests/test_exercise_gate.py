"""The exercise gate: every check tests the student's own code, and every check can fail.

For every chapter with exercises (found in ``notebooks/``: a new chapter joins by being
there), graded by real nbgrader from the exercise version it releases:

- the fully stripped copy (what a student gets) scores zero, the solved chapter full marks
  (graded once, in test_grading.py's class: its blank and perfect students);
- for each exercise in turn, the chapter with only that solution stripped loses exactly
  that exercise's points: no check passes without its own solution, none needs another
  exercise's code, none swallows its own failure;
- for each exercise, a subtly wrong answer (generated: its first gradient, or its value,
  times 2, while minigrad's own operations stay right) loses that exercise's points.
- each of the course's named wrong answers (``MISTAKES`` in tests/mistakes/, each a
  rewritten solution cell) loses points on its own exercise's checks and nowhere else
  (by this file's rule, ``_allowed_to_lose``). Those cases are graded once, in
  test_grading.py's class (which also checks partial marks and that the feedback names
  the mistake): that test, not a second nbgrader run here, is this part of the gate.

One exception is made, and found by construction: an exercise whose *answer* uses
another's (chapter 5's ``MyVar.forward`` returns the student's ``variance(...)``) may
lose its points with it; every other exercise must keep all of its points.

Speed: one course per chapter, all submissions of a chapter graded by one
``nbgrader autograde`` run, the chapters' runs two at a time: 2 x (its exercises)
notebooks per chapter.
"""

from __future__ import annotations

import ast
import copy
import json
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import STRICT, graded_here

if not STRICT:
    pytest.importorskip("nbgrader", reason="pip install -e '.[grading]'")

from minigrad.course import authoring, cli, grading, sandbox, teacher  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TIMEOUT = 60  # seconds a cell may run while grading (the course's default)


def _read(path: pathlib.Path) -> dict:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    authoring.apply_exercise_tags(notebook)
    return notebook


def _text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _meta(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


CHAPTERS = {p.stem: _read(p) for p in sorted(NOTEBOOKS.glob("[0-9]*_*.ipynb"))
            if graded_here(p.stem) and authoring.graded_cells(_read(p))}


def exercises(notebook: dict) -> dict[str, list[str]]:
    """``{exercise: [its test cells]}``, in order: the test cells after each solution (the
    questions graded by hand are no exercise of the checks)."""
    found, current = {}, None
    for cell in notebook["cells"]:
        meta = _meta(cell)
        if authoring.is_written(cell):
            continue
        if meta.get("solution"):
            current = meta["grade_id"]
            found[current] = []
        elif meta.get("grade") and current is not None:
            found[current].append(meta["grade_id"])
    return found


def _solution_cell(notebook: dict, exercise: str) -> dict:
    (cell,) = [c for c in notebook["cells"]
               if _meta(c).get("solution") and _meta(c)["grade_id"] == exercise]
    return cell


def _defined(code: str) -> set[str]:
    names = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n.id for t in node.targets for n in ast.walk(t)
                      if isinstance(n, ast.Name)}
    return names


def builds_on(notebook: dict) -> dict[str, set[str]]:
    """``{exercise: earlier exercises whose answer its own answer uses}`` (transitively)."""
    order = list(exercises(notebook))
    code = {e: _text(_solution_cell(notebook, e)) for e in order}
    uses = {e: {n.id for n in ast.walk(ast.parse(code[e])) if isinstance(n, ast.Name)}
            for e in order}
    found: dict[str, set[str]] = {}
    for i, exercise in enumerate(order):
        direct = {earlier for earlier in order[:i] if _defined(code[earlier]) & uses[exercise]}
        found[exercise] = direct.union(*(found[d] for d in direct))
    return found


def depending_on(notebook: dict, exercise: str) -> set[str]:
    return {e for e, earlier in builds_on(notebook).items() if exercise in earlier}


# --- the subtly wrong answers ---------------------------------------------------------


TWICE = '''
def _twice(value):
    """(the gate's wrong answer) the first gradient, or the value, times 2"""
    if isinstance(value, tuple):
        return (_twice(value[0]),) + value[1:] if value else value
    if isinstance(value, list):
        return [2 * v for v in value]
    return None if value is None else 2 * value
'''


def twice_as_much(code: str) -> str | None:
    """The solution cell ``code`` with its answer doubled: the returns of ``backward`` when
    the answer is in a backward, else of the function holding the answer, else the last
    assignment of the answer. None when there is nothing of the kind."""
    answer = [n for n, line in enumerate(code.splitlines(), 1)
              if authoring.SOLUTION_MARKERS[0] in line]
    tree = ast.parse(code)
    holders = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
               and any(f.lineno < n <= f.end_lineno for n in answer)]
    holders.sort(key=lambda f: (f.name != "backward", -f.lineno))
    if holders:
        returns = [r for r in ast.walk(holders[0]) if isinstance(r, ast.Return) and r.value]
        if not returns:
            return None
        for node in returns:
            node.value = ast.Call(ast.Name("_twice", ast.Load()), [node.value], [])
    else:
        assigns = [a for a in tree.body if isinstance(a, ast.Assign)
                   and any(a.lineno > n for n in answer)]
        if not assigns:
            return None
        assigns[-1].value = ast.Call(ast.Name("_twice", ast.Load()), [assigns[-1].value], [])
    return TWICE + "\n" + ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def test_doubling_an_answer_changes_what_it_returns():
    code = ("class F:\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
            "    @staticmethod\n    def backward(ctx, g):\n        # BEGIN SOLUTION\n"
            "        return g * 3, None\n        # END SOLUTION\n")
    namespace = {}
    exec(twice_as_much(code), namespace)
    assert namespace["F"].backward(None, 1.0) == (6.0, None)
    assert namespace["F"].forward(None, 1.0) == 1.0
    namespace = {}
    exec(twice_as_much("# BEGIN SOLUTION\nanswer = [0.0, 1.0]\n# END SOLUTION\n"), namespace)
    assert namespace["answer"] == [0.0, 2.0]
    assert twice_as_much("# BEGIN SOLUTION\nprint(1)\n# END SOLUTION\n") is None


# --- the class: one submission per case, graded once -------------------------------------


def _solved(notebook: dict) -> dict:
    notebook = copy.deepcopy(notebook)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return notebook


def _replace(notebook: dict, exercise: str, source: str) -> dict:
    notebook = copy.deepcopy(notebook)
    _solution_cell(notebook, exercise)["source"] = source
    return notebook


def submissions(stem: str, release: dict) -> dict[str, dict]:
    """``{student: notebook}`` of one chapter's cases."""
    source = CHAPTERS[stem]
    solved = _solved(source)
    cases = {}
    for exercise in exercises(source):
        stub = _text(_solution_cell(release, exercise))
        cases[f"only-{exercise}"] = _replace(solved, exercise, stub)
        wrong = subtly_wrong(stem, exercise)
        if wrong is not None:
            cases[f"wrong-{exercise}"] = _replace(solved, exercise, wrong)
    return cases


def subtly_wrong(stem: str, exercise: str) -> str | None:
    """A wrong answer to ``exercise``: its answer doubled, or, where there is nothing to
    double (an order, an update in place), the first of its classic mistakes in
    tests/mistakes/'s ``MISTAKES``."""
    wrong = twice_as_much(_text(_solution_cell(CHAPTERS[stem], exercise)))
    if wrong is not None:
        return wrong
    from mistakes import MISTAKES

    classic = [code for grade_id, code, _ in MISTAKES.get(stem, {}).values()
               if grade_id == exercise]
    return classic[0] if classic else None


def _grade_chapter(root: pathlib.Path, stem: str) -> dict[str, dict[str, float]]:
    """``{student: {test cell: score}}`` for one chapter, in its own course."""
    course = root / stem
    number = str(int(stem.split("_")[0]))
    assert cli.main(["init", str(course), "--chapters", number,
                     "--timeout", str(TIMEOUT)]) == 0
    assert cli.main(["release", "--course", str(course)]) == 0
    release = json.loads((course / "release" / stem / f"{stem}.ipynb").read_text())
    cases = submissions(stem, release)
    for student, notebook in cases.items():
        folder = course / "submitted" / student / stem
        folder.mkdir(parents=True)
        (folder / f"{stem}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    if sandbox.check() is None:  # judged first, by one server of forked judges (as grade
        # does); nbgrader's autograde then finds each result kept (grading.JudgedOutputs)
        grading.judge_all(course, stem, f"{stem}.ipynb", list(cases), TIMEOUT, True,
                          say=lambda line: None)
    result = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", stem, "--force"],
                            cwd=course, capture_output=True, text=True,
                            env=teacher._environment())
    from nbgrader.api import Gradebook, MissingEntry

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in cases:
            try:
                submitted = gradebook.find_submission_notebook(stem, stem, student)
            except MissingEntry:
                pytest.fail(f"{stem}: {student} was not graded:\n{result.stderr[-3000:]}")
            scores[student] = {g.name: g.score for g in submitted.grades}
    return scores


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda stem: (stem, _grade_chapter(root, stem)), CHAPTERS)
        return dict(results)


def _points(stem: str) -> dict[str, float]:
    return authoring.graded_cells(CHAPTERS[stem])


def _lost(graded, stem: str, student: str) -> dict[str, float]:
    """``{test cell: points lost}`` for the cells that lost points."""
    scores = graded[stem][student]
    written = authoring.written_questions(CHAPTERS[stem])  # for the teacher, by hand
    assert set(scores) == set(_points(stem)) | set(written), \
        f"{student}: graded cells {sorted(scores)}"
    return {cell: points - scores[cell] for cell, points in _points(stem).items()
            if scores[cell] < points}


def _cases() -> list[tuple[str, str]]:
    return [(stem, e) for stem, notebook in CHAPTERS.items() for e in exercises(notebook)]


each_exercise = pytest.mark.parametrize("stem, exercise", _cases())


def _allowed_to_lose(stem: str, exercise: str) -> tuple[set[str], set[str]]:
    """(cells that must lose all their points, cells that may: those of exercises whose
    answer builds on this one)."""
    tests = exercises(CHAPTERS[stem])
    must = set(tests[exercise])
    may = {cell for other in depending_on(CHAPTERS[stem], exercise) for cell in tests[other]}
    return must, may


def _check_loses_exactly(graded, stem: str, exercise: str, student: str) -> None:
    must, may = _allowed_to_lose(stem, exercise)
    lost = _lost(graded, stem, student)
    points = _points(stem)
    assert {c: lost.get(c, 0) for c in must} == {c: points[c] for c in must}, \
        f"{student}: the checks of {exercise} kept points"
    others = {c: p for c, p in lost.items() if c not in must | may}
    assert not others, f"{student}: other exercises' checks lost points {others}"


@each_exercise
def test_without_its_solution_an_exercise_loses_exactly_its_points(graded, stem, exercise):
    _check_loses_exactly(graded, stem, exercise, f"only-{exercise}")


@each_exercise
def test_a_subtly_wrong_answer_loses_that_exercise_s_points(graded, stem, exercise):
    wrong = subtly_wrong(stem, exercise)
    assert wrong is not None, (f"cannot make a wrong answer to {exercise} by doubling: add "
                               f"one to MISTAKES in tests/mistakes/{stem}.py")
    _check_loses_exactly(graded, stem, exercise, f"wrong-{exercise}")


def test_an_answer_that_uses_another_one_is_found():
    if "05_reductions" not in CHAPTERS:
        pytest.skip("chapter 05 is not here")
    found = builds_on(CHAPTERS["05_reductions"])
    assert found["myvar"] == {"variance"}  # MyVar.forward returns variance(...)
    assert {e: s for e, s in found.items() if s} == {"myvar": {"variance"}}


def _judged_on_their_own() -> list[tuple[str, str, str]]:
    """(chapter, earlier exercise, later exercise built on it) for chapters 08-15, whose
    checks rerun on the earlier answer's reference (minigrad/exercises/prerequisites.py)."""
    return [(stem, earlier, later) for stem, notebook in CHAPTERS.items()
            if int(stem.split("_")[0]) >= 8
            for later, earliers in builds_on(notebook).items() for earlier in sorted(earliers)]


@pytest.mark.parametrize("stem, earlier, later", _judged_on_their_own())
def test_an_exercise_keeps_its_points_when_the_one_it_builds_on_is_missing_or_wrong(
        graded, stem, earlier, later):
    # issue 31: each exercise judged on its own; its check passes with a note that says
    # to fix the earlier exercise first
    tests = exercises(CHAPTERS[stem])[later]
    for student in (f"only-{earlier}", f"wrong-{earlier}"):
        if student in graded[stem]:
            lost = _lost(graded, stem, student)
            assert not {c: p for c, p in lost.items() if c in tests}, \
                f"{student}: {later} lost points for {earlier}'s mistake"
