"""Reading notebooks as JSON, for the tests of the course and of grading."""

from __future__ import annotations

import json
import pathlib


def read_notebook(path: pathlib.Path) -> dict:
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def cell_with_id(notebook: dict, grade_id: str) -> dict:
    """The one cell of ``notebook`` whose nbgrader grade_id is ``grade_id``."""
    (cell,) = [c for c in notebook["cells"]
               if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
    return cell
