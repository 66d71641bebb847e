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
try:  # the BLAS kernels only where the CPU has them (one_thread.env; sandbox.has_avx2)
    _avx2 = " avx2 " in pathlib.Path("/proc/cpuinfo").read_text().replace("\n", " ")
except OSError:
    _avx2 = False
if not _avx2:
    os.environ.pop("OPENBLAS_CORETYPE", None)
