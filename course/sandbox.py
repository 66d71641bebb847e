"""The sandbox a submission's code runs in: bubblewrap (``bwrap``, Flatpak's sandbox).

What the student's process sees: the operating system's files and this Python
environment, read-only; a private working folder with a copy of its own notebook's cells
(sent over a pipe) and the chapter's released data files; an empty private ``/tmp``. What
it does not see: the course folder (``source/`` with the answers, ``gradebook.db``, the
other submissions), the repository's notebooks, the teacher's home, the network. It runs
as user ``nobody`` in a user namespace of its own (no privilege on the machine, even when
the teacher grades as root), in its own process tree (killed with the grader), with one
BLAS/OpenMP thread and limits on memory, CPU time and processes.

Where bubblewrap is missing or cannot make a namespace, ``check`` says why; ``grade``
then refuses unless the teacher asks for ``--unsandboxed`` (and the grades say so).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from .thread_settings import read_env_file

# one BLAS/OpenMP thread per process, as every process the course starts (one_thread.env)
ONE_THREAD = read_env_file()
MEMORY = 4 * 2**30  # bytes of address space a submission may use
CPU_SECONDS = 900  # CPU time for a whole notebook (each cell also has a wall-clock limit)
PROCESSES = 256
INSTALL = ("https://github.com/containers/bubblewrap; on Debian or Ubuntu: "
           "apt-get install bubblewrap")


class SandboxError(Exception):
    """No sandbox can be made here; the message says why and what to do."""


def _readable_roots() -> list[Path]:
    """The folders the student's Python needs, read-only: the system's, this
    environment's, and where minigrad's own packages are (an editable install points
    into a repository: only its package folders, never its notebooks with the answers)."""
    roots = {Path(p) for p in ("/usr", "/etc", "/opt") if Path(p).exists()}
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        roots.add(Path(prefix).resolve())
        roots.add(Path(prefix))
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        roots.add(Path(sysconfig.get_paths()[key]).resolve())
    import minigrad

    package = Path(minigrad.__file__).resolve().parent
    roots.add(package)
    for name in ("widgets", "course"):  # minigrad.widgets and minigrad.course
        roots.add(package.parent / name if (package.parent / name).is_dir() else package)
    return sorted(r for r in roots if r.exists())


def _system_links() -> list[str]:
    """/bin, /lib, ... are links into /usr on current Debian: make the same links."""
    args = []
    for name in ("bin", "sbin", "lib", "lib64", "lib32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    return args


def bwrap() -> str | None:
    return shutil.which("bwrap")


def command(argv: list[str], workdir: Path, memory: int = MEMORY,
            cpu_seconds: int = CPU_SECONDS, hide: list[Path] = ()) -> list[str]:
    """``argv`` run in a sandbox whose only writable folder is ``workdir`` (seen as
    ``/submission``, the working directory); ``hide`` (the course folder) is replaced
    by an empty folder wherever it would show through a readable root."""
    program = bwrap()
    if program is None:
        raise SandboxError(f"bubblewrap (bwrap) is not installed: {INSTALL}")
    args = [program, "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
            "--hostname", "grader", "--die-with-parent", "--new-session",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/home",
            "--tmpfs", "/root", "--tmpfs", "/work", "--tmpfs", "/var", "--tmpfs", "/run"]
    args += _system_links()
    for root in _readable_roots():
        args += ["--ro-bind", str(root), str(root)]
    for folder in hide:
        args += ["--tmpfs", str(Path(folder).resolve())]
    args += ["--bind", str(workdir), "/submission", "--chdir", "/submission",
             "--clearenv", "--setenv", "HOME", "/submission", "--setenv", "PATH",
             f"{Path(sys.executable).parent}:/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8",
             "--setenv", "MPLBACKEND", "Agg", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
             "--setenv", "MPLCONFIGDIR", "/tmp/matplotlib",
             "--setenv", "IPYTHONDIR", "/tmp/ipython"]
    # matplotlib's list of the machine's fonts, made once by the grader: without it each
    # sandbox's first import of matplotlib scans the fonts again (0.3-0.4 s of CPU)
    folder = font_cache()
    for made in sorted(folder.glob("fontlist-*.json")) if folder else ():
        args += ["--ro-bind", str(made), f"/tmp/matplotlib/{made.name}"]
    for name, value in ONE_THREAD.items():
        args += ["--setenv", name, value]
    limits = [f"--as={memory}", f"--cpu={cpu_seconds}", f"--nproc={PROCESSES}",
              "--core=0"]
    prlimit = shutil.which("prlimit")
    return args + ([prlimit, *limits] if prlimit else []) + list(argv)


def compile_packages() -> None:
    """Write the bytecode of minigrad's own packages (``__pycache__``), where it is
    missing or stale. A sandboxed process cannot write it (read-only, and
    PYTHONDONTWRITEBYTECODE), so without it each one compiled minigrad from source
    again: about 0.3 s of CPU a graded notebook, on an editable install."""
    import compileall

    import minigrad

    package = Path(minigrad.__file__).resolve().parent
    folders = {package} | {package.parent / name for name in ("widgets", "course")
                           if (package.parent / name).is_dir()}
    for folder in sorted(folders):
        try:
            compileall.compile_dir(str(folder), quiet=2)
        except OSError:  # an install the grader cannot write to: it has its bytecode
            pass


def font_cache() -> Path | None:
    """A folder holding matplotlib's font list for this machine (``fontlist-*.json``),
    made by a short run of matplotlib outside any sandbox the first time; None when
    matplotlib is not installed. The sandbox gets the file read-only."""
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") \
        / "minigrad" / "matplotlib"
    if any(folder.glob("fontlist-*.json")):
        return folder
    if importlib.util.find_spec("matplotlib") is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"],
                   env={**os.environ, "MPLCONFIGDIR": str(folder), "MPLBACKEND": "Agg"},
                   capture_output=True, timeout=300, check=False)
    return folder if any(folder.glob("fontlist-*.json")) else None


_checked: dict[str, str | None] = {}


def check() -> str | None:
    """``None`` if a sandbox works here, else why not (and how to fix it)."""
    program = bwrap()
    if program is None:
        return f"bubblewrap (bwrap) is not installed: {INSTALL}"
    if program in _checked:
        return _checked[program]
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"minigrad-sandbox-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    try:
        result = subprocess.run(command([sys.executable, "-c", "import numpy, minigrad"],
                                        probe), capture_output=True, text=True, timeout=60)
        why = None if result.returncode == 0 else (
            "bubblewrap could not start a sandbox here: "
            + (result.stderr.strip().splitlines() or ["(no message)"])[-1]
            + ". It needs user namespaces (sysctl kernel.unprivileged_userns_clone=1; in a "
              "container, run it with the right to make namespaces)")
    except (OSError, subprocess.TimeoutExpired) as error:
        why = f"bubblewrap could not start a sandbox here: {error}"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    _checked[program] = why
    return why
