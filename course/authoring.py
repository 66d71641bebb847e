"""Exercise cells: the tags a chapter author writes, and the nbgrader metadata they mean.

An author marks cells with tags in the chapter's py:percent source (they survive
jupytext's pairing; nbgrader's own metadata would be filtered out of the ``.py``)::

    # %% tags=["solution:mymul"]          the cell where students write code, with the
                                          answer between # BEGIN SOLUTION / # END SOLUTION
    # %% tags=["tests:mymul:2"]           a locked, autograded test cell worth 2 points
                                          (### BEGIN HIDDEN TESTS ... for hidden tests)
    # %% tags=["locked:mymul-intro"]      a read-only cell (students cannot edit it)

``apply_exercise_tags(notebook)`` writes nbgrader's schema-3 metadata for those cells
(``scripts/execute_notebooks.py`` and ``minigrad-course init`` call it), and
``exercise_problems(notebook)`` lists what is inconsistent (the tests call it).
Only the standard library here: it works on notebooks read as plain JSON or nbformat.
"""

from __future__ import annotations

import re
from typing import Any

SCHEMA_VERSION = 3
ID = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
TAG = re.compile(rf"^(?:solution:(?P<solution>{ID})"
                 rf"|tests:(?P<tests>{ID}):(?P<points>\d+(?:\.\d+)?)|locked:(?P<locked>{ID}))$")
SOLUTION_MARKERS = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_MARKERS = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")


def _source(cell: Any) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else text


def exercise_role(cell: Any) -> dict | None:
    """The nbgrader metadata a cell's tags ask for, or None for an ordinary cell."""
    roles = [m for tag in cell.get("metadata", {}).get("tags", [])
             if (m := TAG.match(tag))]
    if not roles:
        return None
    match = roles[0]
    meta = {"grade": False, "locked": False, "schema_version": SCHEMA_VERSION,
            "solution": False, "task": False}
    if match["solution"]:
        meta.update(grade_id=match["solution"], solution=True)
    elif match["tests"]:
        points = float(match["points"])
        meta.update(grade_id=f"{match['tests']}-tests", grade=True, locked=True,
                    points=int(points) if points.is_integer() else points)
    else:
        meta.update(grade_id=f"{match['locked']}-locked", locked=True)
    return meta


def last_exercise_cell(cells: list) -> int:
    """The index of the last cell an exercise marks (an answer, a check or a locked
    cell: by its tags or its nbgrader metadata), -1 if none. The cells after it cannot
    change a grade or a status: grading and ``status`` do not run them."""
    marked = [i for i, cell in enumerate(cells) if exercise_role(cell) or any(
        cell.get("metadata", {}).get("nbgrader", {}).get(k) for k in ("grade", "solution"))]
    return marked[-1] if marked else -1


def apply_exercise_tags(notebook: Any) -> int:
    """Write (or refresh) nbgrader metadata from each cell's exercise tag, and remove it
    from cells that no longer have one. Returns how many cells are exercise cells."""
    count = 0
    for cell in notebook["cells"]:
        meta = exercise_role(cell)
        if meta is None:
            cell.get("metadata", {}).pop("nbgrader", None)
            continue
        cell.setdefault("metadata", {})["nbgrader"] = meta
        count += 1
    return count


def exercise_problems(notebook: Any) -> list[str]:
    """What is wrong with a chapter's exercise cells (empty when all is well)."""
    problems, seen = [], {}
    for index, cell in enumerate(notebook["cells"]):
        tags = cell.get("metadata", {}).get("tags", [])
        where = f"cell {index}"
        roles = [t for t in tags if TAG.match(t)]
        looks_like = [t for t in tags if t.split(":")[0] in ("solution", "tests", "locked")]
        if len(looks_like) > len(roles):
            malformed = sorted(set(looks_like) - set(roles))
            problems.append(f"{where}: malformed exercise tag(s) {malformed} (write "
                            "solution:ID, tests:ID:POINTS or locked:ID)")
        if len(roles) > 1:
            problems.append(f"{where}: more than one exercise tag: {roles}")
        expected = exercise_role(cell)
        actual = cell.get("metadata", {}).get("nbgrader")
        if SOLUTION_MARKERS[0] in _source(cell) and not (expected or {}).get("solution"):
            problems.append(f"{where}: {SOLUTION_MARKERS[0]} outside a solution cell "
                            "(nbgrader would cut the text there)")
        if expected != actual:
            problems.append(f"{where}: nbgrader metadata {actual} does not match its tags "
                            f"{tags} (run scripts/execute_notebooks.py)")
        if expected is None:
            continue
        grade_id = expected["grade_id"]
        if grade_id in seen:
            problems.append(f"{where}: grade_id {grade_id!r} is also used by cell "
                            f"{seen[grade_id]}")
        seen[grade_id] = index
        source = _source(cell)
        if expected["grade"] and not expected.get("points"):
            problems.append(f"{where}: test cell {grade_id!r} has no points")
        if expected["grade"] and cell["cell_type"] != "code":
            problems.append(f"{where}: test cell {grade_id!r} must be a code cell")
        if expected["solution"] and cell["cell_type"] == "code" and not all(
                source.count(m) >= 1 and source.count(m) == source.count(SOLUTION_MARKERS[0])
                for m in SOLUTION_MARKERS):
            problems.append(f"{where}: solution cell {grade_id!r} needs # BEGIN SOLUTION and "
                            "# END SOLUTION around the answer")
        if source.count(HIDDEN_MARKERS[0]) != source.count(HIDDEN_MARKERS[1]):
            problems.append(f"{where}: unbalanced ### BEGIN/END HIDDEN TESTS")
        if HIDDEN_MARKERS[0] in source and not expected["grade"]:
            problems.append(f"{where}: hidden tests outside a test cell")
    return problems


def graded_cells(notebook: Any) -> dict[str, float]:
    """``{grade_id: points}`` of the autograded test cells."""
    return {meta["grade_id"]: meta["points"] for cell in notebook["cells"]
            if (meta := exercise_role(cell)) and meta["grade"]}


def exercise_cells(notebook: dict) -> list[tuple[dict, dict]]:
    """``(cell, nbgrader metadata)`` of the exercise cells, from their tags (as ``init``
    writes them) or, failing that, from nbgrader's own metadata."""
    found = []
    for cell in notebook["cells"]:
        meta = exercise_role(cell) or cell.get("metadata", {}).get("nbgrader")
        if meta and meta.get("grade_id"):
            found.append((cell, meta))
    return found


def exercises(notebook: dict) -> dict[str, list[str]]:
    """``{exercise: [its test cells]}`` in the notebook's order. An exercise is a solution
    cell (its grade_id, e.g. ``mymul``); a test cell ``ID-tests`` belongs to the exercise
    ``ID``, else to the longest exercise id its own id starts with (``unbroadcast-example-
    tests`` to ``unbroadcast``), else to the solution cell above it."""
    cells = exercise_cells(notebook)
    solutions = [meta["grade_id"] for _, meta in cells if meta.get("solution")]
    made: dict[str, list[str]] = {grade_id: [] for grade_id in solutions}
    above = None
    for _, meta in cells:
        grade_id = meta["grade_id"]
        if meta.get("solution"):
            above = grade_id
            continue
        if not meta.get("grade"):
            continue
        stem = grade_id.removesuffix("-tests")
        prefixes = [s for s in solutions if stem == s or stem.startswith(s + "-")]
        owner = max(prefixes, key=len) if prefixes else above or grade_id
        made.setdefault(owner, []).append(grade_id)
    return made


def exercise_of_tests(notebook: dict) -> dict[str, str]:
    """``{test cell: exercise}``."""
    return {test: exercise for exercise, tests in exercises(notebook).items()
            for test in tests}
