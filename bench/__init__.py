"""minigrad's benchmarks: ``python -m bench`` (see bench/__main__.py).

Importing this package pins every BLAS/OpenMP pool to one thread *before* NumPy (or
PyTorch) is imported anywhere in the process: a thread pool is sized when the library
loads, so setting these later changes nothing.
"""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                  "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_variable] = "1"
