"""minigrad's benchmarks: ``python -m bench`` (see bench/__main__.py).

Importing this package pins every BLAS/OpenMP pool to one thread *before* NumPy (or
PyTorch) is imported anywhere in the process: a thread pool is sized when the library
loads, so setting these later changes nothing.
"""

import importlib.util
import os
import pathlib

# course/one_thread.env: the settings every process the course starts reads, through
# course/thread_settings.py loaded from its path (importing minigrad would load NumPy)
_settings = pathlib.Path(__file__).resolve().parents[1] / "course" / "thread_settings.py"
_spec = importlib.util.spec_from_file_location("thread_settings", _settings)
thread_settings = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(thread_settings)
os.environ.update(thread_settings.read_env_file())
