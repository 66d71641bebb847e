"""What a student calls from a notebook of the workspace (``minigrad.course``):

    from minigrad.course import status, use_reference
    status()                    # exercises passed per chapter, as a small table widget
    use_reference("mysum")      # stuck: load that exercise's reference answer, go on

``use_reference`` runs the solution cell of the repository's chapter (its answer
included) in the calling notebook, so the cells after the exercise run; the check of that
exercise then tests the reference, not the student's work, and ``status`` does not count
it while the call is in the notebook.
"""

from __future__ import annotations

import ast
import html
import sys
from pathlib import Path

from . import student, teacher
from .authoring import SOLUTION_MARKERS, exercise_role
from .teacher import CourseError


def reference_source(exercise: str, chapter: str | int | None = None,
                     workspace: Path | None = None) -> tuple[str, str]:
    """``(chapter stem, code)``: the solution cell of ``exercise`` with its answer, the
    marker lines removed."""
    sources = student.chapter_sources(workspace or student.find_workspace())
    if chapter is not None:
        stems = [student._chapter({"notebooks": dict.fromkeys(sources)}, str(chapter))]
    else:
        stems = list(sources)
    found = []
    for stem in stems:
        for cell in student._read_source(sources[stem])["cells"]:
            meta = exercise_role(cell)
            if meta and meta["solution"] and meta["grade_id"] == exercise:
                found.append((stem, student._source_text(cell)))
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
    stem, text = found[0]
    lines = [line for line in text.splitlines()
             if not any(marker in line for marker in SOLUTION_MARKERS)]
    return stem, "\n".join(lines) + "\n"


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
    this call is in your notebook. ``chapter`` (a name or number) is needed only when two
    chapters have an exercise of that name."""
    try:
        stem, code = reference_source(exercise, chapter)
    except CourseError as error:
        raise LookupError(f"use_reference: {error}") from None
    namespace = sys._getframe(1).f_globals  # the notebook's, when called from a cell
    exec(compile(code, f"<reference answer to {exercise} ({stem})>", "exec"), namespace)
    names = ", ".join(_defined_names(code)) or "nothing"
    print(f"use_reference: the reference answer to exercise {exercise} ({stem}) is loaded "
          f"(it defined {names}). The checks now test the reference, not your work, and "
          f"status does not count {exercise}: to do it yourself, write your answer in "
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
