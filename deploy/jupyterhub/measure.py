"""What one active student costs: each chapter given is run top to bottom in a fresh
kernel, as a student who runs every cell would, and the kernel reports its own peak
memory and the processor time it used. Run it with the hub's Python, on the machine the
hub is for:

    /opt/minigrad-hub/bin/python deploy/jupyterhub/measure.py notebooks/01_*.ipynb ...

It prints a table (chapter, seconds, processor seconds, cores while running, peak MB of
the kernel); README.md's sizing table was made from its output. A server's own memory
(jupyterhub-singleuser, without its kernels) is measured by tests/test_hub.py, in its
run folder's timings.json.
"""

import json
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

# the last cell: the kernel's own account (ru_maxrss is in KiB on Linux)
REPORT = """\
import json as _json, resource as _resource
_self = _resource.getrusage(_resource.RUSAGE_SELF)
_children = _resource.getrusage(_resource.RUSAGE_CHILDREN)
print(_json.dumps({"cpu": _self.ru_utime + _self.ru_stime + _children.ru_utime
                   + _children.ru_stime, "peak_kib": _self.ru_maxrss}))
"""


def measure(path: Path) -> dict:
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(REPORT))
    start = time.monotonic()
    NotebookClient(notebook, timeout=1200, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    wall = time.monotonic() - start
    own = json.loads(notebook.cells[-1].outputs[0]["text"])
    return {"chapter": path.stem, "seconds": wall, "cpu_seconds": own["cpu"],
            "cores": own["cpu"] / wall, "peak_mb": own["peak_kib"] / 1024}


def main(paths: list[str]) -> None:
    if not paths:
        raise SystemExit("usage: measure.py NOTEBOOK.ipynb ... (the chapters to run)")
    print(f"{'chapter':36} {'seconds':>8} {'cpu s':>7} {'cores':>6} {'peak MB':>8}")
    for path in paths:
        row = measure(Path(path).resolve())
        print(f"{row['chapter']:36} {row['seconds']:8.1f} {row['cpu_seconds']:7.1f} "
              f"{row['cores']:6.2f} {row['peak_mb']:8.0f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
