"""How the C allocator keeps the memory of freed arrays: one setting, made at import.

NumPy takes an array's buffer from the C library's ``malloc``. glibc's malloc (Linux)
hands memory back to the operating system as soon as it can: a freed block at the top of
its heap is returned (``brk`` shrinks the heap) once more than a *trim threshold* is free
there, and big blocks are ``mmap``-ed and unmapped on their own. The next step of a
training loop allocates the same arrays again, and every 4 KiB page of them is a page
fault (the kernel zeroes a fresh page) before NumPy can write to it.

glibc moves both thresholds as the program runs (a freed ``mmap``-ed block raises them),
so whether a step's arrays fit under them depends on the process's history: the CNN
benchmark's step (about 5 MB of arrays) was either fast (a few page faults a step) or
about 1.6x slower (about 1,200 page faults and 6 ``brk`` calls a step, the heap grown
by 4.3 MB and trimmed back every step), from one process to the next, with the same
code (issue 33).

``keep_freed_memory`` fixes the thresholds at the largest values glibc's own rule would
reach: blocks up to 32 MiB come from the heap, and up to 64 MiB of freed heap is kept for
the next allocation. Memory is then faulted in once, on the first step, not on every
step. It changes nothing on other C libraries (macOS, Windows, musl), where it does
nothing.
"""

from __future__ import annotations

import ctypes

# mallopt's parameter numbers, from glibc's <malloc.h>
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

LARGEST_HEAP_BLOCK = 32 * 2**20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit machines
KEPT_FREE_MEMORY = 2 * LARGEST_HEAP_BLOCK  # the trim threshold glibc would pair with it


def keep_freed_memory() -> bool:
    """Set glibc malloc's thresholds (see the module docstring); True if it was set.
    Called once, when minigrad is imported; it affects the whole process."""
    try:
        libc = ctypes.CDLL(None)
    except (OSError, TypeError):  # not a Unix process
        return False
    if not hasattr(libc, "gnu_get_libc_version"):  # only glibc has these knobs
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, LARGEST_HEAP_BLOCK)
                and libc.mallopt(M_TRIM_THRESHOLD, KEPT_FREE_MEMORY))
