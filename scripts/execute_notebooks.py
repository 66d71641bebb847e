"""Re-execute chapter notebooks in a fresh kernel and save their outputs in place.

    .venv/bin/python scripts/execute_notebooks.py                 # every chapter
    .venv/bin/python scripts/execute_notebooks.py notebooks/01_*.ipynb

The paired py:percent file is the source: it is synced into the notebook first, its
exercise tags become nbgrader metadata (``solution:ID``, ``tests:ID:POINTS``,
``locked:ID``; see course/authoring.py), then the notebook is executed (nbclient,
without timing metadata, so re-running an unchanged chapter changes no byte) and
written back.

Widgets are saved as their static pictures: each widget output keeps its ``text/html``
(tables and inline SVG) and ``text/plain``, and drops the live view's model reference,
which no viewer can use without a kernel (JupyterLab would show "model not found",
nbconvert, nbviewer and GitHub an empty box). Running the notebook makes live widgets again.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import nbclient
import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "course"))
from authoring import apply_exercise_tags  # noqa: E402  (course/ is minigrad.course)
import thread_settings  # noqa: E402

# One BLAS thread in the kernels (they inherit this), as in every process the course
# starts (course/one_thread.env says why; nbval's kernels read the same file)
for _variable, _value in thread_settings.read_env_file().items():
    os.environ.setdefault(_variable, _value)


def execute(path: pathlib.Path) -> None:
    subprocess.run([sys.executable, "-m", "jupytext", "--sync", "--quiet", str(path)],
                   check=True)
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    apply_exercise_tags(notebook)
    client = nbclient.NotebookClient(notebook, kernel_name="python3", record_timing=False,
                                     timeout=120,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    keep_static_pictures(notebook)
    join_stream_pieces(notebook)
    nbformat.write(notebook, path)
    print(f"executed {path.relative_to(ROOT)}")


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def keep_static_pictures(notebook) -> None:
    """Drop the live-widget part of every output that has a static picture, and the saved
    widget state (see the module's docstring)."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and "text/html" in data:
                del data[WIDGET_VIEW]
    notebook.metadata.pop("widgets", None)


def join_stream_pieces(notebook) -> None:
    """Join consecutive outputs of the same stream. The kernel sends stdout on a timer, so
    one cell's prints (even one print: its text, then its newline) can arrive in two
    pieces or one depending on timing; joined, the saved file is the same on every run
    and the text reads as one block."""
    for cell in notebook.cells:
        joined = []
        for output in cell.get("outputs", []):
            last = joined[-1] if joined else None
            if output.get("output_type") == "stream" and last is not None and \
                    last.get("output_type") == "stream" and last["name"] == output["name"]:
                last["text"] += output["text"]
            else:
                joined.append(output)
        if cell.cell_type == "code":
            cell.outputs = joined


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path,
                        help="the notebooks to execute (default: every one in notebooks/)")
    notebooks = parser.parse_args().notebooks
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    for p in [p.resolve() for p in notebooks] or sorted((ROOT / "notebooks").glob("*.ipynb")):
        execute(p)
