"""The judge processes of ``grade``: each submission is judged in a process of its own,
forked from one that has already imported the judge (Python, NumPy and minigrad: about
0.6 s of CPU a notebook that a fresh ``python -m minigrad.course.judge`` would spend).

Each judge still starts its own sandboxed student process (``judge.StudentProcess``): the
fork saves the judge's start-up, never shares a student's process. The judge runs no
student code, so what it inherits is the grader's own code, freshly imported.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path

_context = None


def _forkserver():
    global _context
    if _context is None:
        context = multiprocessing.get_context("forkserver")
        # the server imports these once; every judge is a fork of it
        context.set_forkserver_preload(["minigrad.course.judge"])
        _context = context
    return _context


def _judge(argv: list[str], log: str) -> None:
    """In the forked process: ``python -m minigrad.course.judge ARGV``, its printed text
    and any error in ``log``."""
    import warnings

    warnings.simplefilter("ignore")
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    from . import judge

    try:
        code = judge.main(argv)
    except BaseException:  # noqa: BLE001 - reported to the grader as the log's last line
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


def run(argv: list[str], log: Path, limit: float) -> str | None:
    """Judge one submission (``judge.main``'s arguments); ``None`` when it finished, else
    why not (the last line it printed, or that it ran past ``limit`` seconds)."""
    process = _forkserver().Process(target=_judge, args=(argv, str(log)), daemon=True)
    process.start()
    process.join(limit)
    if process.is_alive():
        process.kill()  # its student process dies with it (bubblewrap's --die-with-parent)
        process.join()
        return f"grading took more than {limit:g} s and was stopped"
    if process.exitcode == 0:
        return None
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines() \
        if log.exists() else []
    return lines[-1] if lines else f"the judge stopped (exit code {process.exitcode})"
