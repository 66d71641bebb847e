"""Re-execute chapter notebooks in a fresh kernel and save their outputs in place.

    .venv/bin/python scripts/execute_notebooks.py                 # every chapter
    .venv/bin/python scripts/execute_notebooks.py notebooks/01_*.ipynb

The paired py:percent file is the source: it is synced into the notebook first, then the
notebook is executed (nbclient, without timing metadata, so re-running an unchanged
chapter changes no byte) and written back.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import nbclient
import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]


def execute(path: pathlib.Path) -> None:
    subprocess.run([sys.executable, "-m", "jupytext", "--sync", "--quiet", str(path)],
                   check=True)
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    client = nbclient.NotebookClient(notebook, kernel_name="python3", record_timing=False,
                                     timeout=120,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    nbformat.write(notebook, path)
    print(f"executed {path.relative_to(ROOT)}")


if __name__ == "__main__":
    paths = [pathlib.Path(p).resolve() for p in sys.argv[1:]] or \
        sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    for p in paths:
        execute(p)
