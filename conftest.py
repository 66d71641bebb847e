"""Every pytest run in this repository, whatever starts it (scripts/test.sh, CI, or a bare
``pytest --nbval notebooks/13_*.ipynb``): the kernels it starts run with one BLAS/OpenMP
thread, as the chapters were executed (scripts/execute_notebooks.py) and as the course's
kernel runs them (``minigrad-course kernel``: course/student.py, ``ONE_THREAD``).

Why here and not in the notebooks: a kernel reads these variables when NumPy loads
OpenBLAS, which each chapter's first cell does before minigrad is imported; nbval's kernels
(``--nbval-current-env`` or the notebook's ``python3``) inherit this process's
environment. With a thread per core, matrix products sum in another order (the chapters'
printed losses differed from step 200 on) and, on a busy 2-core machine, chapter 13 ran
ten times slower.
"""

import importlib.util
import os
import pathlib

# course/one_thread.env, the one list every process the course starts reads, through
# course/thread_settings.py loaded from its path: this file must load before anything else,
# even where minigrad is not installed
_settings = pathlib.Path(__file__).resolve().parent / "course" / "thread_settings.py"
_spec = importlib.util.spec_from_file_location("thread_settings", _settings)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
os.environ.update(_module.read_env_file())

# Bytecode for the repository's own packages, written once here: this machine's environment
# sets PYTHONDONTWRITEBYTECODE, so without it every kernel, nbgrader run and sandboxed
# student process the tests start compiled minigrad from source again (0.3 s of CPU each,
# hundreds of processes). compileall skips what is up to date.
import compileall  # noqa: E402

for _folder in ("minigrad", "widgets", "course"):
    compileall.compile_dir(str(pathlib.Path(__file__).resolve().parent / _folder), quiet=2)
