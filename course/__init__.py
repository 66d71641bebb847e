"""minigrad-course: homework from the chapters, graded with nbgrader (see cli.py); in a
notebook of a student's workspace, ``status()`` and ``use_reference(exercise)`` (see
notebook.py)."""

__all__ = ["status", "use_reference"]


def __getattr__(name: str):
    # imported on first use: the grading processes (judge.py, student_process.py) live in
    # this package and start in well under a second without nbgrader's and nbconvert's
    # imports, which notebook.py pulls in
    if name in __all__:
        from . import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
