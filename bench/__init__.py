"""minigrad's benchmarks: ``python -m bench`` (see bench/__main__.py).

Importing this package pins every BLAS/OpenMP pool to one thread *before* NumPy (or
PyTorch) is imported anywhere in the process: a thread pool is sized when the library
loads, so setting these later changes nothing.
"""

import os
import pathlib

# course/one_thread.env: the settings every process the course starts reads
_settings = pathlib.Path(__file__).resolve().parents[1] / "course" / "one_thread.env"
os.environ.update(line.strip().split("=", 1) for line in
                  _settings.read_text(encoding="utf-8").splitlines()
                  if line.strip() and not line.startswith("#"))
