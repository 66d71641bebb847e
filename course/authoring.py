"""Exercise cells: the tags a chapter author writes, and the nbgrader metadata they mean.

An author marks cells with tags in the chapter's py:percent source (they survive
jupytext's pairing; nbgrader's own metadata would be filtered out of the ``.py``)::

    # %% tags=["solution:mymul"]          the cell where students write code, with the
                                          answer between # BEGIN SOLUTION / # END SOLUTION
    # %% tags=["tests:mymul:2"]           a locked, autograded test cell worth 2 points
                                          (### BEGIN HIDDEN TESTS ... for hidden tests)
    # %% tags=["locked:mymul-intro"]      a read-only cell (students cannot edit it)

and, for a question the teacher grades by hand, two markdown cells::

    # %% [markdown] tags=["question:why-sum"]   the question, locked; its rubric between
                                                === BEGIN MARK SCHEME === and
                                                === END MARK SCHEME === lines (the
                                                students' copies leave it out)
    # %% [markdown] tags=["answer:why-sum:2"]   the model answer, worth 2 points: nbgrader's
                                                "manually graded answer" (students get
                                                "YOUR ANSWER HERE" in its place)

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
POINTS = r"\d+(?:\.\d+)?"
TAG = re.compile(rf"^(?:solution:(?P<solution>{ID})|tests:(?P<tests>{ID}):(?P<points>{POINTS})"
                 rf"|locked:(?P<locked>{ID})|question:(?P<question>{ID})"
                 rf"|answer:(?P<answer>{ID}):(?P<answer_points>{POINTS}))$")
KINDS = ("solution", "tests", "locked", "question", "answer")
SOLUTION_MARKERS = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_MARKERS = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
# nbgrader's ClearMarkScheme cuts the lines from the one holding the first to the one
# holding the second (both included) out of the students' copies
MARK_SCHEME_MARKERS = ("BEGIN MARK SCHEME", "END MARK SCHEME")
ANSWER_STUB = "YOUR ANSWER HERE"  # nbgrader's ClearSolutions.text_stub
QUESTION_SUFFIX = "-question"


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
        meta.update(grade_id=f"{match['tests']}-tests", grade=True, locked=True,
                    points=_points(match["points"]))
    elif match["question"]:
        meta.update(grade_id=match["question"] + QUESTION_SUFFIX, locked=True)
    elif match["answer"]:  # nbgrader's "manually graded answer"
        meta.update(grade_id=match["answer"], solution=True, grade=True,
                    points=_points(match["answer_points"]))
    else:
        meta.update(grade_id=f"{match['locked']}-locked", locked=True)
    return meta


def _points(text: str) -> int | float:
    points = float(text)
    return int(points) if points.is_integer() else points


def is_written(cell: Any) -> bool:
    """Whether ``cell`` belongs to a question graded by hand: its question (tag
    ``question:ID``) or its answer (tag ``answer:ID:POINTS``, or, without tags,
    nbgrader's metadata of a manually graded answer: a markdown solution cell that is
    graded)."""
    tags = cell.get("metadata", {}).get("tags", [])
    if any(t.startswith(("question:", "answer:")) for t in tags):
        return True
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(cell.get("cell_type") == "markdown" and meta.get("solution")
                and meta.get("grade"))


def is_written_answer(cell: Any) -> bool:
    """Whether ``cell`` is the answer cell of a question graded by hand."""
    meta = exercise_role(cell) or cell.get("metadata", {}).get("nbgrader", {})
    return is_written(cell) and bool(meta.get("solution"))


def written_questions(notebook: Any) -> dict[str, float]:
    """``{question: points}`` of the questions graded by hand, in the notebook's order
    (a question's id is its answer cell's grade_id)."""
    return {meta["grade_id"]: meta["points"] for cell in notebook["cells"]
            if is_written_answer(cell)
            and (meta := exercise_role(cell) or cell["metadata"]["nbgrader"])}


def without_mark_scheme(text: str) -> str:
    """``text`` without its mark-scheme lines, as nbgrader's ClearMarkScheme cuts them."""
    kept, inside = [], False
    for line in text.split("\n"):
        if MARK_SCHEME_MARKERS[0] in line:
            inside = True
        elif MARK_SCHEME_MARKERS[1] in line:
            inside = False
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


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
        looks_like = [t for t in tags if t.split(":")[0] in KINDS]
        if len(looks_like) > len(roles):
            malformed = sorted(set(looks_like) - set(roles))
            problems.append(f"{where}: malformed exercise tag(s) {malformed} (write "
                            "solution:ID, tests:ID:POINTS, locked:ID, question:ID or "
                            "answer:ID:POINTS)")
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
        problems += _mark_scheme_problems(cell, where, roles)
        if expected is None:
            continue
        grade_id = expected["grade_id"]
        if grade_id in seen:
            problems.append(f"{where}: grade_id {grade_id!r} is also used by cell "
                            f"{seen[grade_id]}")
        seen[grade_id] = index
        source = _source(cell)
        written = roles[0].split(":")[0] in ("question", "answer")
        if written:
            problems += _written_problems(notebook["cells"], index, roles[0], where)
            continue
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


def _mark_scheme_problems(cell: Any, where: str, roles: list[str]) -> list[str]:
    """A mark scheme outside a question cell, or its delimiters unbalanced."""
    lines = _source(cell).split("\n")
    marks = [m for line in lines for m in MARK_SCHEME_MARKERS if m in line]
    if not marks:
        return []
    if not (roles and roles[0].startswith("question:")):
        return [f"{where}: {MARK_SCHEME_MARKERS[0]} outside a question:ID cell (the students "
                "would see it, or nbgrader would refuse the chapter)"]
    if marks != list(MARK_SCHEME_MARKERS) * (len(marks) // 2) or len(marks) % 2:
        return [f"{where}: unbalanced {MARK_SCHEME_MARKERS[0]} / {MARK_SCHEME_MARKERS[1]} "
                "(each BEGIN needs its END below it, not nested)"]
    return []


def _written_problems(cells: list, index: int, tag: str, where: str) -> list[str]:
    """A question graded by hand: a markdown question cell followed by its markdown answer
    cell (the next cell with an exercise tag), with points and a rubric."""
    kind, name = tag.split(":")[:2]
    cell = cells[index]
    problems = []
    if cell["cell_type"] != "markdown":
        problems.append(f"{where}: the {kind} cell of question {name!r} must be a markdown "
                        "cell (# %% [markdown] tags=[...])")
    partner_kind = "answer" if kind == "question" else "question"
    step = 1 if kind == "question" else -1
    partner = next((t for i in range(index + step, len(cells) if step > 0 else -1, step)
                    for t in cells[i].get("metadata", {}).get("tags", []) if TAG.match(t)),
                   None)
    if partner is None or not partner.startswith(f"{partner_kind}:{name}:" if kind ==
                                                 "question" else f"question:{name}"):
        wanted = (f"answer:{name}:POINTS just below it" if kind == "question"
                  else f"question:{name} just above it")
        problems.append(f"{where}: question {name!r} has no {partner_kind} cell (add a "
                        f"markdown cell tagged {wanted})")
    if kind == "answer" and not float(tag.split(":")[2]):
        problems.append(f"{where}: the answer to question {name!r} has no points")
    if kind == "question" and MARK_SCHEME_MARKERS[0] not in _source(cell):
        problems.append(f"{where}: question {name!r} has no rubric (write it between "
                        f"=== {MARK_SCHEME_MARKERS[0]} === and === {MARK_SCHEME_MARKERS[1]} "
                        "=== lines)")
    if kind == "answer" and not _source(cell).strip():
        problems.append(f"{where}: question {name!r} has no model answer")
    return problems


def graded_cells(notebook: Any) -> dict[str, float]:
    """``{grade_id: points}`` of the autograded test cells (not the questions graded by
    hand: ``written_questions``)."""
    return {meta["grade_id"]: meta["points"] for cell in notebook["cells"]
            if (meta := exercise_role(cell)) and meta["grade"] and not meta["solution"]}


def exercise_cells(notebook: dict) -> list[tuple[dict, dict]]:
    """``(cell, nbgrader metadata)`` of the autograded exercises' cells (answers, checks,
    locked cells), from their tags (as ``init`` writes them) or, failing that, from
    nbgrader's own metadata. The questions graded by hand are not among them
    (``written_questions``)."""
    found = []
    for cell in notebook["cells"]:
        if is_written(cell):
            continue
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
