"""The chapters' classic mistakes, one file a chapter (``NN_name.py``, the notebook's stem).

Each file holds ``MISTAKES``: a name -> (the grade_id of a solution cell, that cell
rewritten with the mistake, words the feedback must show). tests/test_grading.py grades a
notebook per mistake with nbgrader (partial marks, the words in the feedback), and
tests/test_exercise_gate.py checks that each loses its own exercise's points only. A chapter
that gains exercises adds its file here (a test checks that every such chapter has one).
"""

from __future__ import annotations

import importlib.util
import pathlib


def _load(path: pathlib.Path) -> dict:
    spec = importlib.util.spec_from_file_location(f"mistakes_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MISTAKES


MISTAKES = {path.stem: _load(path)
            for path in sorted(pathlib.Path(__file__).parent.glob("[0-9][0-9]_*.py"))}
