"""minigrad-course: homework from the chapters, graded with nbgrader (see cli.py); in a
notebook of a student's workspace, ``status()`` and ``use_reference(exercise)`` (see
notebook.py)."""

from .notebook import status, use_reference

__all__ = ["status", "use_reference"]
