"""The judge processes of ``grade``: each submission is judged in a process of its own,
forked from a server that has already imported the judge (Python, NumPy and minigrad:
about 0.6 s of CPU a notebook that a fresh ``python -m minigrad.course.judge`` spends).

Each judge still starts its own sandboxed student process (``judge.StudentProcess``): the
fork saves the judge's start-up and never shares a student's process. The judge runs no
student code, so all a judge inherits is the grader's code, freshly imported, and the
server only ever receives the judges' exit codes.

``python -m minigrad.course.judges`` is the server: one JSON line a request on its
standard input (``{"id", "argv", "log", "limit"}``: ``judge.main``'s arguments, the file
for what the judge prints, the seconds it may take), one JSON line on its standard output
when that judge has finished (``{"id", "code"}``: its exit code, or ``"timeout"`` when it
was stopped at its limit). End of input: the running judges are stopped and the server exits.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path


class Judges:
    """The grader's side: ``run`` judges one submission (threads may call it at once)."""

    def __init__(self):
        self.server = subprocess.Popen(
            [sys.executable, "-m", "minigrad.course.judges"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        self.lock = threading.Lock()
        self.done: dict[int, threading.Event] = {}
        self.codes: dict[int, int | str] = {}
        self.count = 0
        self.reader = threading.Thread(target=self._replies, daemon=True)
        self.reader.start()

    def _replies(self) -> None:
        for line in self.server.stdout:
            reply = json.loads(line)
            with self.lock:
                self.codes[reply["id"]] = reply["code"]
                event = self.done.get(reply["id"])
            if event is not None:
                event.set()
        with self.lock:  # the server stopped: no judge will answer any more
            for event in self.done.values():
                event.set()

    def run(self, argv: list[str], log: Path, limit: float) -> str | None:
        """Judge one submission (``judge.main``'s arguments); ``None`` when it finished,
        else why not (the last line it printed, or that it ran past ``limit`` seconds)."""
        event = threading.Event()
        with self.lock:
            self.count += 1
            number = self.count
            self.done[number] = event
            try:
                self.server.stdin.write(json.dumps({"id": number, "argv": argv,
                                                    "log": str(log), "limit": limit}
                                                   ).encode() + b"\n")
                self.server.stdin.flush()
            except (BrokenPipeError, OSError):
                return "the judges' server has stopped"
        event.wait()
        with self.lock:
            self.done.pop(number)
            code = self.codes.pop(number, None)
        if code == 0:
            return None
        if code is None:
            return "the judges' server has stopped"
        if code == "timeout":
            return f"grading took more than {limit:g} s and was stopped"
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines() \
            if log.exists() else []
        return lines[-1] if lines else f"the judge stopped (exit code {code})"

    def close(self) -> None:
        self.server.stdin.close()
        self.server.wait()
        self.reader.join(timeout=10)  # (it reads to the end of the server's output)
        if not self.reader.is_alive():
            self.server.stdout.close()


# --- the server ---------------------------------------------------------------------------


def _judge(request: dict) -> None:
    """In the forked process: ``judge.main``, what it prints in the request's log."""
    descriptor = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.close(descriptor)
    code = 1
    try:
        from . import judge

        code = judge.main([str(a) for a in request["argv"]]) or 0
    except BaseException:  # noqa: BLE001 - its last line tells the grader what went wrong
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def preload() -> None:
    """Import, once, what a judge imports while it runs a chapter's set-up cells and its
    checks (minigrad, every checker module, the widgets and matplotlib, which chapters
    import): each forked judge then starts with them. Measured on chapter 1's solution,
    these imports were most of a judge's own CPU time (about 1 s of 1.4 s)."""
    import importlib
    import pkgutil

    os.environ.setdefault("MPLBACKEND", "Agg")
    from . import judge  # noqa: F401 - imported once here, for every judge forked

    names = ["minigrad", "minigrad.exercises", "minigrad.widgets", "matplotlib.pyplot",
             "IPython.display"]
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an optional part not installed: judges import it
            continue
        if name in ("minigrad.exercises", "minigrad.widgets"):
            for found in pkgutil.iter_modules(module.__path__, f"{name}."):
                try:
                    importlib.import_module(found.name)
                except Exception:  # noqa: BLE001 - as above
                    pass
    from . import sandbox

    sandbox.font_cache()  # made once, outside any sandbox (sandbox.command binds it)
    sandbox.compile_packages()  # (what each sandboxed process then needs not compile)


def serve() -> None:
    import warnings

    warnings.simplefilter("ignore")
    preload()

    requests, replies = sys.stdin.fileno(), sys.stdout.buffer
    running: dict[int, tuple[int, float]] = {}  # pid -> (request id, deadline)
    pending, open_ = b"", True
    while open_ or running:
        readable, _, _ = select.select([requests] if open_ else [], [], [],
                                       0.05 if running else None)
        if readable:
            chunk = os.read(requests, 65536)
            if not chunk:
                open_ = False
                for pid in running:  # the grader has gone: so do its judges
                    os.kill(pid, signal.SIGKILL)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                replies.flush()
                pid = os.fork()
                if pid == 0:
                    _judge(request)
                running[pid] = (request["id"], time.monotonic() + float(request["limit"]))
        for pid, (number, deadline) in list(running.items()):
            finished, status = os.waitpid(pid, os.WNOHANG)
            if finished:
                code = os.waitstatus_to_exitcode(status)
                del running[pid]
            elif time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)  # its student process dies with it (bwrap's
                os.waitpid(pid, 0)            # --die-with-parent)
                del running[pid]
                code = "timeout"
            else:
                continue
            if open_:
                replies.write(json.dumps({"id": number, "code": code}).encode() + b"\n")
                replies.flush()


if __name__ == "__main__":
    serve()
