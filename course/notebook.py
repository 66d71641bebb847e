"""What a student calls from a notebook of the workspace (``minigrad.course``):

    from minigrad.course import status, use_reference
    status()                    # exercises passed per chapter, as a small table widget
    use_reference("mysum")      # stuck: load that exercise's reference answer, go on

``use_reference`` runs the solution cell of the repository's chapter (its answer
included) in the calling notebook, so the cells after the exercise run; the check of that
exercise then tests the reference, not the student's work, and ``status`` does not count
it while the call is in the notebook. An exercise whose checks use an earlier exercise's
code (``uses=`` in its test cells: ``MyMul`` calls ``unbroadcast``) gets those earlier
references loaded first, so that the reference runs on references throughout.
"""

from __future__ import annotations

import ast
import html
import sys
from pathlib import Path

from . import student, teacher
from .authoring import SOLUTION_MARKERS, exercise_cells, exercise_role, exercises, is_written
from .teacher import CourseError


def reference_source(exercise: str, chapter: str | int | None = None,
                     workspace: Path | None = None) -> tuple[str, str]:
    """``(chapter stem, code)``: the solution cell of ``exercise`` with its answer, the
    marker lines removed."""
    stem, notebook = _chapter_of(exercise, chapter, workspace)
    return stem, _solution_code(notebook, exercise)


def reference_sources(exercise: str, chapter: str | int | None = None,
                      workspace: Path | None = None) -> tuple[str, list[tuple[str, str]]]:
    """``(chapter stem, [(exercise, code), ...])``: the solution cells to run for
    ``use_reference(exercise)``: those of the exercises it uses (``dependencies``), in
    the chapter's order, then its own."""
    stem, notebook = _chapter_of(exercise, chapter, workspace)
    return stem, [(e, _solution_code(notebook, e))
                  for e in dependencies(notebook, exercise) + [exercise]]


def _chapter_of(exercise: str, chapter: str | int | None,
                workspace: Path | None) -> tuple[str, dict]:
    """``(stem, notebook with its answers)`` of the chapter that has ``exercise``."""
    sources = student.chapter_sources(workspace or student.find_workspace())
    if chapter is not None:
        stems = [student._chapter({"notebooks": dict.fromkeys(sources)}, str(chapter))]
    else:
        stems = list(sources)
    found = []
    for stem in stems:
        notebook = student._read_source(sources[stem])
        for cell in notebook["cells"]:
            meta = exercise_role(cell)
            if meta and meta["solution"] and meta["grade_id"] == exercise:
                if is_written(cell):
                    raise CourseError(
                        f"{exercise!r} is a question you answer in words, with no code to "
                        f"load; its model answer: minigrad-course solution {stem} {exercise}")
                found.append((stem, notebook))
    if not found:
        known = sorted({e for s in stems
                        for e in student._solution_ids(student._read_source(sources[s]))})
        raise CourseError(f"no exercise {exercise!r}"
                          + (f" in {stems[0]}" if chapter is not None else "")
                          + f"; the exercises are: {', '.join(known)}")
    if len(found) > 1:
        raise CourseError(f"exercise {exercise!r} is in several chapters "
                          f"({', '.join(s for s, _ in found)}): say which, e.g. "
                          f"use_reference({exercise!r}, chapter={found[0][0]!r})")
    return found[0]


def _solution_code(notebook: dict, exercise: str) -> str:
    """The solution cell of ``exercise``, its answer included, the marker lines removed."""
    text = next(student._source_text(cell) for cell, meta in exercise_cells(notebook)
                if meta.get("solution") and meta["grade_id"] == exercise)
    lines = [line for line in text.splitlines()
             if not any(marker in line for marker in SOLUTION_MARKERS)]
    return "\n".join(lines) + "\n"


def dependencies(notebook: dict, exercise: str) -> list[str]:
    """The exercises whose code the checks of ``exercise`` use, and those theirs use, in
    the chapter's order: a test cell's ``uses={"unbroadcast": "module:reference"}`` names
    a global the checked code reads, and the exercise whose solution cell defines it is one
    (chapter 2: ``mymul-broadcast`` uses ``unbroadcast``)."""
    cells = exercise_cells(notebook)
    solutions = [meta["grade_id"] for _, meta in cells if meta.get("solution")]
    tests = {meta["grade_id"]: student._source_text(cell) for cell, meta in cells
             if meta.get("grade")}
    defined_by: dict[str, str] = {}
    for name_of_exercise in solutions:
        for name in _defined_names(_solution_code(notebook, name_of_exercise)):
            defined_by.setdefault(name, name_of_exercise)
    tests_of = exercises(notebook)
    found: set[str] = set()
    pending = [exercise]
    while pending:
        for test in tests_of.get(pending.pop(), []):
            for name in _used_names(tests[test]):
                used = defined_by.get(name)
                if used is not None and used != exercise and used not in found:
                    found.add(used)
                    pending.append(used)
    return [e for e in solutions if e in found]


def _used_names(code: str) -> list[str]:
    """The keys of the ``uses=`` dicts in a test cell: ``{name: "minigrad.exercises.
    <module>:<reference>"}``, wherever the dict is written (in the call, or assigned to
    a variable first)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:  # a cell with IPython magics: none of the course's test cells
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) \
                        and isinstance(value, ast.Constant) and isinstance(value.value, str) \
                        and value.value.startswith("minigrad.exercises.") \
                        and ":" in value.value:
                    names.append(key.value)
    return names


def _defined_names(code: str) -> list[str]:
    names = []
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return names


def use_reference(exercise: str, chapter: str | int | None = None) -> None:
    """Stuck on ``exercise``? Define its reference answer in this notebook (the names of
    its solution cell, e.g. ``MySum``), so the rest of the chapter runs. The exercise's
    check then tests the reference, not your work: ``status`` does not count it while
    this call is in your notebook. When the exercise's code uses an earlier exercise's
    (``MyMul`` calls ``unbroadcast``), the earlier reference is loaded first, replacing
    yours in this notebook from here on. ``chapter`` (a name or number) is needed only
    when two chapters have an exercise of that name."""
    try:
        stem, loads = reference_sources(exercise, chapter)
    except CourseError as error:
        raise LookupError(f"use_reference: {error}") from None
    namespace = sys._getframe(1).f_globals  # the notebook's, when called from a cell
    for name, code in loads:
        exec(compile(code, f"<reference answer to {name} ({stem})>", "exec"), namespace)
    *earlier, (_, code) = loads
    names = ", ".join(_defined_names(code)) or "nothing"
    also = ""
    if earlier:
        listed = "; ".join(f"{e} ({', '.join(_defined_names(c)) or 'nothing'})"
                           for e, c in earlier)
        also = (f" Its code uses earlier exercises', so their reference answers are loaded "
                f"too, in place of yours from here on: {listed}.")
    print(f"use_reference: the reference answer to exercise {exercise} ({stem}) is loaded "
          f"(it defined {names}).{also} The checks now test the reference, not your work, "
          f"and status does not count {exercise}: to do it yourself, write your answer in "
          "its cell, remove this call and run the notebook again.")


# --- status, as a table in a notebook --------------------------------------------------


def status_html(chapters: list[student.Chapter]) -> str:
    """The progress table of ``status``, in HTML (notes and problems under it)."""
    cell = 'style="text-align:left;padding:2px 10px"'
    rows = "".join(
        f"<tr><td {cell}><code>{html.escape(stem)}</code></td><td {cell}>{score}</td>"
        f"<td {cell}>{html.escape(note)}</td></tr>"
        for stem, score, note in student.status_table(chapters))
    notes = [note for c in chapters for note in c.notes] + \
        [c.problem for c in chapters if c.problem]
    below = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return (f'<table class="minigrad-status"><thead><tr><th {cell}>chapter</th>'
            f"<th {cell}>passed</th><th {cell}></th></tr></thead><tbody>{rows}</tbody>"
            "</table>" + (f"<ul>{below}</ul>" if below else ""))


class StatusTable:
    """Progress per chapter, shown as an HTML table (a widget with a "check again"
    button when ipywidgets is there). ``.chapters`` holds the results."""

    def __init__(self, workspace: Path, timeout: int, recheck: bool = False):
        self.workspace, self.timeout = workspace, timeout
        self.chapters = student.check_chapters(  # each notebook run says so, in the cell
            workspace, timeout, recheck, say=lambda message: print(message, flush=True))
        self.widget = None
        try:
            import ipywidgets
        except ImportError:
            return
        self._html = ipywidgets.HTML(status_html(self.chapters))
        self.button = ipywidgets.Button(description="check again",
                                        tooltip="run the checks of the notebooks changed "
                                                "since the last check (save them first)")
        self.button.on_click(lambda _: self.refresh())
        self.widget = ipywidgets.VBox([self._html, self.button])

    def refresh(self) -> None:
        self.chapters = student.check_chapters(self.workspace, self.timeout)
        if self.widget is not None:
            self._html.value = status_html(self.chapters)

    def _repr_html_(self) -> str:
        return status_html(self.chapters)

    def _repr_mimebundle_(self, **kwargs):
        bundle = {"text/html": status_html(self.chapters),
                  "text/plain": "\n".join("  ".join(r)
                                          for r in student.status_table(self.chapters))}
        if self.widget is not None:
            bundle.update(self.widget._repr_mimebundle_(**kwargs) or {})
            bundle["text/html"] = status_html(self.chapters)  # kept for static views
        return bundle


def status(workspace: str | Path | None = None, timeout: int = teacher.DEFAULT_TIMEOUT,
           recheck: bool = False) -> StatusTable:
    """Exercises passed per chapter of the workspace (by default the one this notebook
    is in), checked as ``minigrad-course status`` does: save your notebook first, its
    checks run on the saved file, in a fresh kernel."""
    folder = Path(workspace).resolve() if workspace else student.find_workspace()
    return StatusTable(folder, timeout, recheck)
