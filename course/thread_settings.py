"""``course/one_thread.env`` read: the settings every process the course starts runs with
(the file says why), and what the BLAS made of them (``openblas_get``). Standard library
only, nothing from minigrad: conftest.py and bench/ load this file before NumPy loads,
where minigrad may not even be installed; the sandbox, the course's kernel spec and the
chapters' execution read the settings through it too.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

FILE = Path(__file__).with_name("one_thread.env")


def read_env_file(path: Path = FILE) -> dict[str, str]:
    """``NAME=VALUE`` lines of a file a shell can also source (``#`` comments), without
    ``OPENBLAS_CORETYPE`` where the CPU cannot run the kernels it names (one_thread.env)."""
    pairs = (line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#"))
    settings = {name.strip(): value.strip() for name, value in pairs}
    if not has_avx2():
        settings.pop("OPENBLAS_CORETYPE", None)
    return settings


def has_avx2(cpuinfo: str | None = None) -> bool:
    """Does this CPU have AVX2 (``/proc/cpuinfo``'s flags; False where there is none)?"""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    return any(line.startswith("flags") and "avx2" in line.split()
               for line in cpuinfo.splitlines())


def openblas_get(what: str, restype: type = ctypes.c_int) -> list:
    """``openblas_get_<what>()`` of each OpenBLAS this process has loaded (NumPy's
    ``scipy_openblas`` build included): ``"num_threads"``, or ``"corename"`` with
    ``ctypes.c_char_p`` (the kernels it chose, or was told to use). ``[]`` where none."""
    try:
        with open("/proc/self/maps") as maps:
            libraries = sorted({line.split()[-1] for line in maps if "openblas" in line.lower()})
    except OSError:
        return []
    found = []
    for library in libraries:
        loaded = ctypes.CDLL(library)
        for name in (f"openblas_get_{what}", f"scipy_openblas_get_{what}64_",
                     f"openblas_get_{what}64_"):
            if hasattr(loaded, name):
                function = getattr(loaded, name)
                function.restype = restype
                found.append(function())
                break
    return found
