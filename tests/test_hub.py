"""A class on a real JupyterHub: a teacher and six students, real Unix users, nbgrader's
exchange, the whole cycle over HTTPS (the hub's REST API, and each user's own server as
JupyterLab's front end calls it).

The hub runs ``deploy/jupyterhub/jupyterhub_config.py`` (the one-machine setup a teacher
copies) over HTTPS with a certificate the test makes (every client verifies it), each
person's server in its own control group with the memory and CPU limits of their role.
It runs from an environment built with Debian's ``/usr/bin/python3`` from the pinned
``deploy/jupyterhub/requirements.txt``, plus configurable-http-proxy from npm, both kept
in a cache folder (``MINIGRAD_HUB_CACHE``, default ``/var/tmp/minigrad-hub``) and reused by
later runs; minigrad is installed into it from a copy of the tree under test. It listens
on 127.0.0.1 only, every wait is bounded, and its processes run at a lower priority so the
rest of the suite is not starved.

The teacher sets up the course and releases chapter 1 with ``minigrad-course`` typed in a
JupyterLab terminal; each student fetches it from the assignment list, edits it through
the contents API and submits one of: the right answers, a classic mistake, the blank copy,
an endless loop, a file cut short, the right answers with a locked test cell edited. The
teacher collects, grades and returns feedback; each student fetches their own. Then one
student's cell allocates past the memory limit and another's spins past the CPU limit,
while a third student's kernel keeps its state and answers.

Needs root (it makes Unix users; they stay on the machine, their processes do not) and
the cgroup v1 memory and cpu controllers (the spawner's limits); skips otherwise, except
in CI (MINIGRAD_STRICT=1), where it fails instead.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import html
import http.client
import io
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest

from conftest import need
from notebook_json import read_notebook

# its own xdist group (the whole file runs in one worker anyway with --dist loadfile)
pytestmark = pytest.mark.xdist_group("hub")

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy" / "jupyterhub"
CHAPTER = ROOT / "notebooks" / "01_autograd_from_scratch.ipynb"
ASSIGNMENT = CHAPTER.stem
COURSE_ID = "minigrad"
CACHE = Path(os.environ.get("MINIGRAD_HUB_CACHE", "/var/tmp/minigrad-hub"))
PROXY_VERSION = "5.3.0"  # configurable-http-proxy, from npm
SYSTEM_PYTHON = "/usr/bin/python3"  # a Python every user can run (not one under /root)
TIMEOUT = 10  # seconds a cell may run while grading
NICE = 10  # the hub and everything it starts run at this lower priority
TEACHER = "mg-teacher"
# student -> what they hand in
STUDENTS = {"mg-right": "the right answers",
            "mg-mistake": "a classic mistake: a variable used twice, gradient not accumulated",
            "mg-blank": "the blank copy",
            "mg-loop": "an endless loop in the last exercise",
            "mg-broken": "a notebook file cut short",
            "mg-tampered": "the right answers, and a locked test cell edited"}
USERS = [TEACHER, *STUDENTS]
MISTAKE = "not-accumulated"  # from tests/test_grading.py's table of classic mistakes
MiB = 1024 ** 2
# each role's server with its kernels (MINIGRAD_HUB_[TEACHER_]MEM/CPU_LIMIT): the teacher
# grades in theirs, so gets the machine's 2 cores; a student gets a quarter of a core, less
# than a busy loop gets here even while other tests keep both cores busy
LIMITS = {"student": (600 * MiB, 0.25), "teacher": (2048 * MiB, 2.0)}
CGROUPS = Path("/sys/fs/cgroup")


# --- the environment: built once, reused ----------------------------------------------


@contextlib.contextmanager
def _lock(seconds: float = 900):
    """One hub test at a time on a machine (they share users, ports' owners and the cache)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    CACHE.chmod(0o755)
    with open(CACHE / "lock", "w") as handle:
        deadline = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"another hub test held {CACHE / 'lock'} for {seconds} s")
                time.sleep(2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(command: list[str], log: Path, timeout: float, **kwargs) -> None:
    with open(log, "a") as out:
        out.write(f"$ {' '.join(map(str, command))}\n")
        out.flush()
        result = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT,
                                timeout=timeout, **kwargs)
    if result.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        pytest.fail(f"{' '.join(map(str, command))} failed ({result.returncode}):\n{tail}")


def _environment(source: Path, log: Path) -> Path:
    """The hub's Python environment: jupyterhub, nbgrader, JupyterLab (pinned in
    deploy/jupyterhub/requirements.txt) and minigrad's dependencies, from Debian's Python.
    ``source`` is the copy of the tree (pip would write build files into the tree)."""
    env = _environment_folder()
    if (env / ".complete").exists():
        return env
    if env.exists():
        shutil.rmtree(env)  # a build that was cut short
    _run([SYSTEM_PYTHON, "-m", "venv", str(env)], log, 120)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
           "--disable-pip-version-check"]
    # the pins, and minigrad's own dependencies (its grading extra) around them
    _run([*pip, "-r", str(DEPLOY / "requirements.txt"), f"{source}[grading]"], log, 1500)
    (env / ".complete").write_text(env.name)
    return env


def _environment_folder() -> Path:
    """Where the environment of these pins and this pyproject.toml is (or will be)."""
    key = hashlib.sha256((DEPLOY / "requirements.txt").read_bytes()
                         + (ROOT / "pyproject.toml").read_bytes()).hexdigest()[:12]
    return CACHE / f"env-{key}"


def _proxy(log: Path) -> Path:
    """configurable-http-proxy from npm, in its own folder."""
    prefix = CACHE / f"proxy-{PROXY_VERSION}"
    program = prefix / "bin" / "configurable-http-proxy"
    if (prefix / ".complete").exists() and program.exists():
        return program
    if shutil.which("npm") is None:
        need("npm", "apt-get install nodejs npm (configurable-http-proxy comes from npm)")
    if prefix.exists():
        shutil.rmtree(prefix)
    _run(["npm", "install", "--global", "--no-fund", "--no-audit", "--prefix", str(prefix),
          f"configurable-http-proxy@{PROXY_VERSION}"], log, 600)
    (prefix / ".complete").write_text(PROXY_VERSION)
    return program


def _copy_tree(target: Path) -> Path:
    """The tree under test, where the class users can read it."""
    skip = shutil.ignore_patterns(".git", ".venv*", "__pycache__", "*.egg-info", "build",
                                  "_build", ".pytest_cache", ".ruff_cache", "my-course",
                                  ".hypothesis", "node_modules")
    for part in ("minigrad", "widgets", "course", "notebooks", "deploy"):
        shutil.copytree(ROOT / part, target / part, ignore=skip)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, target / name)
    return target


# --- users, ports, HTTPS --------------------------------------------------------------


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key (openssl)."""
    folder.mkdir(mode=0o700)
    cert, key = folder / "cert.pem", folder / "key.pem"
    if shutil.which("openssl") is None:
        need("openssl", "apt-get install openssl (the test makes its certificate with it)")
    _run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes", "-days", "2", "-subj", "/CN=minigrad test hub", "-keyout", str(key),
          "-out", str(cert), "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
         folder.parent / "setup.log", 60)
    return cert, key


def _users(run: Path, homes: Path) -> None:
    """The class's Unix users (made once, by deploy/jupyterhub/add-users.sh) with fresh,
    empty home folders."""
    (run / "class.txt").write_text(f"{TEACHER} teacher\n" + "".join(
        f"{s} student\n" for s in STUDENTS))
    homes.mkdir(parents=True, exist_ok=True)
    homes.chmod(0o755)
    _run(["bash", str(DEPLOY / "add-users.sh"), str(run / "class.txt"), str(homes)],
         run / "setup.log", 60)
    for user in USERS:
        entry = pwd.getpwnam(user)
        for line in _processes_of(user):  # left by an earlier run that was killed
            with open(run / "setup.log", "a") as out:
                out.write(f"stopping {user}'s process from an earlier run: {line}\n")
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(line.split()[0]), signal.SIGKILL)
        home = Path(entry.pw_dir)
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True, mode=0o700)
        os.chown(home, entry.pw_uid, entry.pw_gid)


def _processes_of(user: str) -> list[str]:
    result = subprocess.run(["ps", "-u", user, "-o", "pid=,args="], capture_output=True,
                            text=True)
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


class Http:
    """Requests to the hub, with a token (the service's, or a user's own)."""

    def __init__(self, base: str, token: str, certificate: Path):
        self.base, self.token, self.certificate = base, token, certificate
        self.tls = ssl.create_default_context(cafile=str(certificate))  # verified

    def __call__(self, method: str, path: str, body=None, timeout: float = 120,
                 raw: bool = False):
        data = None if body is None else (body if isinstance(body, bytes)
                                          else json.dumps(body).encode())
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": f"token {self.token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.tls) as response:
                text = response.read().decode()
                status = response.status
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")
        if raw:
            return status, text
        return status, (json.loads(text) if text.strip() else None)


def _wait(what: str, seconds: float, check):
    deadline = time.monotonic() + seconds
    while True:
        try:
            result = check()
        except (OSError, urllib.error.URLError):
            result = None
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting {seconds} s for {what}")
        time.sleep(0.5)


# --- the teacher's terminal ------------------------------------------------------------


class Terminal:
    """A terminal on the teacher's server, as JupyterLab opens one (REST + websocket)."""

    MARK = "__minigrad_done__"

    def __init__(self, http: Http, user: str):
        import websocket  # websocket-client, a dependency of jupyter_server

        status, made = http("POST", f"/user/{user}/api/terminals")
        assert status == 200, made
        url = http.base.replace("https://", "wss://") + \
            f"/user/{user}/terminals/websocket/{made['name']}"
        self.socket = websocket.create_connection(  # verifies the certificate
            url, header=[f"Authorization: token {http.token}"], timeout=30,
            sslopt={"ca_certs": str(http.certificate)})

    def run(self, command: str, seconds: float = 300) -> tuple[int, str]:
        """Type ``command``; its exit status and what it printed."""
        self.socket.send(json.dumps(["stdin", f"{command}; echo {self.MARK} $?\r"]))
        seen, deadline = "", time.monotonic() + seconds
        while (done := re.search(rf"{self.MARK} (\d+)", seen)) is None:
            if time.monotonic() > deadline:
                pytest.fail(f"{command!r} did not finish in {seconds} s:\n{seen[-3000:]}")
            self.socket.settimeout(max(1.0, deadline - time.monotonic()))
            kind, *content = json.loads(self.socket.recv())
            if kind == "stdout":
                seen += content[0]
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", seen[:done.start()])
        return int(done[1]), text

    def close(self):
        self.socket.close()


class Kernel:
    """A kernel on a user's server, as a notebook runs one (REST + its channels' websocket)."""

    def __init__(self, http: Http, user: str):
        import websocket

        self.http, self.user, self.session = http, user, uuid.uuid4().hex
        status, made = http("POST", f"/user/{user}/api/kernels", {"name": "python3"})
        assert status == 201, made
        self.id = made["id"]
        url = http.base.replace("https://", "wss://") + \
            f"/user/{user}/api/kernels/{self.id}/channels"
        self.socket = websocket.create_connection(
            url, header=[f"Authorization: token {http.token}"], timeout=60,
            sslopt={"ca_certs": str(http.certificate)})

    def run(self, code: str, seconds: float = 120) -> tuple[str, str]:
        """Run a cell: ("ok" or "error", what it printed), or ("died", ...) if the kernel
        died under it (the server then says it is restarting it). The cell is done when
        both its reply (shell channel) and the kernel's "idle" for it (iopub, after all
        its output) have come: the two channels share the websocket but not an order, so
        the reply can overtake the output (it did once, in CI on a loaded machine)."""
        msg_id = uuid.uuid4().hex
        self.socket.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "version": "5.3",
                       "session": self.session, "username": self.user, "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": False,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
        printed, reply, idle, deadline = "", None, False, time.monotonic() + seconds
        while reply is None or not idle:
            if time.monotonic() > deadline:
                pytest.fail(f"{self.user}'s cell {code!r} gave no answer in {seconds} s")
            self.socket.settimeout(max(1.0, deadline - time.monotonic()))
            message = json.loads(self.socket.recv())
            kind, content = message["msg_type"], message["content"]
            if kind == "status" and content["execution_state"] in (
                    "restarting", "autorestarting", "dead"):
                return "died", printed
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if kind == "stream" and content["name"] == "stdout":
                printed += content["text"]
            elif kind == "error":
                printed += "\n".join(content["traceback"])
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
            elif kind == "execute_reply":
                reply = content["status"]
        return reply, printed

    def close(self):
        self.socket.close()
        self.http("DELETE", f"/user/{self.user}/api/kernels/{self.id}", raw=True)


# --- what each student hands in --------------------------------------------------------


def _solutions() -> dict[str, str]:
    """``{grade_id: answer}`` of the chapter's code exercises, as a student would type
    them (the class leaves the written questions unanswered: nbgrader's "No response",
    0 points, and nothing waits for the teacher's grading by hand)."""
    answers = {}
    for cell in read_notebook(CHAPTER)["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution") and cell["cell_type"] == "code":
            lines = "".join(cell["source"]).splitlines(keepends=True)
            answers[meta["grade_id"]] = "".join(
                line for line in lines if "BEGIN SOLUTION" not in line
                and "END SOLUTION" not in line)
    return answers


def _edited(notebook: dict, changes: dict[str, str]) -> dict:
    notebook = json.loads(json.dumps(notebook))
    for cell in notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in changes:
            cell["source"] = changes[grade_id]
    return notebook


def _handed_in(student: str, fetched: dict) -> dict | str:
    """The notebook (or, for the broken file, the text) ``student`` saves and submits."""
    from test_grading import MISTAKES

    answers = _solutions()
    last = list(answers)[-1]
    if student == "mg-right":
        return _edited(fetched, answers)
    if student == "mg-mistake":
        grade_id, wrong, _ = MISTAKES[ASSIGNMENT][MISTAKE]
        return _edited(fetched, {**answers, grade_id: wrong.lstrip("\n")})
    if student == "mg-blank":
        return fetched
    if student == "mg-loop":
        return _edited(fetched, {**answers, last: "while True:\n    pass\n"})
    if student == "mg-broken":
        text = json.dumps(_edited(fetched, answers), indent=1)
        return text[:len(text) // 2]
    if student == "mg-tampered":
        return _edited(fetched, {**answers, "mymul-tests": "pass  # no test, no failure\n"})
    raise AssertionError(student)


def _expected_scores() -> dict[str, float | None]:
    """Each student's score: full marks less the points of the tests of the exercise
    that went wrong (a test cell ``ID-tests`` or ``ID-...-tests`` checks exercise ID)."""
    from test_grading import MISTAKES

    points = {m["grade_id"]: m["points"] for c in read_notebook(CHAPTER)["cells"]
              if (m := c["metadata"].get("nbgrader", {})).get("grade")
              and c["cell_type"] == "code"}  # (the written questions: 0, unanswered)
    full = sum(points.values())

    def without(exercise):
        return full - sum(p for g, p in points.items() if g.startswith(exercise + "-"))

    return {"mg-right": full, "mg-mistake": without(MISTAKES[ASSIGNMENT][MISTAKE][0]),
            "mg-blank": 0, "mg-loop": without(list(_solutions())[-1]), "mg-broken": None,
            "mg-tampered": full}


# --- the class ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hub():
    """Build (or reuse) the environment, make the users, start the hub and everyone's
    server; afterwards stop the hub by its PID and check no class user's process is left."""
    if os.geteuid() != 0:
        need("root", "this test makes Unix users and runs JupyterHub as root (CI does)")
    if not Path(SYSTEM_PYTHON).exists():
        need(SYSTEM_PYTHON, "Debian's python3 (the class users must be able to run it)")
    if not all((CGROUPS / probe).exists()
               for probe in ("memory/memory.limit_in_bytes", "cpu/cpu.cfs_quota_us")):
        need("cgroup v1 memory and cpu controllers",
             "the hub's spawner (cgroupspawner.py) limits each server with them")
    with _lock():
        run = CACHE / "run"
        if run.exists():
            shutil.rmtree(run)
        run.mkdir(mode=0o755)
        log = run / "setup.log"
        started = time.monotonic()
        source = _copy_tree(run / "src")
        env = _environment(source, log)
        proxy = _proxy(log)
        built = time.monotonic() - started
        _run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
              "--disable-pip-version-check", "--no-deps", "--force-reinstall", "--", str(source)],
             log, 300)
        _users(run, CACHE / "home")
        _remove_groups(_groups_of(os.getpid()))  # the hub's will be ours: from a killed run
        (run / "state").mkdir(mode=0o700)
        cert, key = _certificate(run / "tls")
        token = secrets.token_hex(32)
        hub_port, internal, proxy_api = _free_ports(3)
        settings = {"MINIGRAD_HUB_CLASS": str(run / "class.txt"),
                    "MINIGRAD_HUB_STATE": str(run / "state"),
                    "MINIGRAD_HUB_EXCHANGE": str(run / "exchange"),
                    "MINIGRAD_HUB_BIND": f"https://127.0.0.1:{hub_port}",
                    "MINIGRAD_HUB_SSL_CERT": str(cert), "MINIGRAD_HUB_SSL_KEY": str(key),
                    "MINIGRAD_HUB_PORTS": f"{internal},{proxy_api}",
                    "MINIGRAD_HUB_MEM_LIMIT": f"{LIMITS['student'][0] // MiB}M",
                    "MINIGRAD_HUB_CPU_LIMIT": str(LIMITS["student"][1]),
                    "MINIGRAD_HUB_TEACHER_MEM_LIMIT": f"{LIMITS['teacher'][0] // MiB}M",
                    "MINIGRAD_HUB_TEACHER_CPU_LIMIT": str(LIMITS["teacher"][1]),
                    "MINIGRAD_HUB_SHARED_PASSWORD": secrets.token_hex(8),
                    "MINIGRAD_HUB_PROXY": str(proxy),
                    "MINIGRAD_HUB_API_TOKEN": token}
        hub_log = open(run / "hub.log", "w")
        process = subprocess.Popen(
            [str(env / "bin" / "jupyterhub"), "-f",
             str(source / "deploy" / "jupyterhub" / "jupyterhub_config.py")],
            cwd=run / "state", stdout=hub_log, stderr=subprocess.STDOUT,
            env={"PATH": f"{env / 'bin'}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                 **settings},
            start_new_session=True, preexec_fn=lambda: os.nice(NICE))
        base = f"https://127.0.0.1:{hub_port}"
        admin = Http(base, token, cert)
        try:
            _wait("the hub", 90, lambda: process.poll() is None
                  and admin("GET", "/hub/api/")[0] == 200 or process.poll() is not None)
            assert process.poll() is None, (run / "hub.log").read_text()[-3000:]
            # all at once, as a class logging in (each request waits for its spawn, 10 s
            # at most, before the hub answers 202 and goes on in the background)
            with ThreadPoolExecutor(len(USERS)) as pool:
                for user, (status, body) in zip(USERS, pool.map(
                        lambda u: admin("POST", f"/hub/api/users/{u}/server"), USERS)):
                    assert status in (201, 202), (user, status, body)
            for user in USERS:
                _wait(f"{user}'s server", 300, lambda u=user: admin(
                    "GET", f"/hub/api/users/{u}")[1]["servers"].get("", {}).get("ready"))
            tokens = {}
            for user in USERS:
                status, made = admin("POST", f"/hub/api/users/{user}/tokens",
                                     {"note": "test_hub", "expires_in": 3600})
                assert status == 201, made
                tokens[user] = Http(base, made["token"], cert)
            yield {"run": run, "http": tokens, "admin": admin, "source": source,
                   "built": built, "pid": process.pid, "base": base, "cert": cert,
                   "groups": _groups_of(process.pid)}
        finally:
            groups = _groups_of(process.pid) if process.poll() is None else None
            left = _stop(process, run)
            hub_log.close()
        assert not left, f"processes of the class users left after the hub stopped: {left}"
        kept = [str(folder) for folder in (groups or {}).values() if folder.exists()]
        assert not kept, f"control groups left after the hub stopped: {kept}"


def _remove_groups(groups: dict[str, Path]) -> None:
    """Stop what is in the servers' groups and remove them (a run cut short leaves them)."""
    for parent in groups.values():
        for group in ([p for p in parent.iterdir() if p.is_dir()] if parent.exists() else []):
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            _wait(f"{group} to empty", 20, lambda g=group: not (g / "cgroup.procs").read_text())
            group.rmdir()
        if parent.exists():
            parent.rmdir()


def _groups_of(hub_pid: int) -> dict[str, Path]:
    """Where the hub's spawner puts the servers' groups: the ``jupyterhub`` group under
    the hub's own, in the memory and the cpu hierarchies (see cgroupspawner.py)."""
    groups = {}
    for line in Path(f"/proc/{hub_pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in ("memory", "cpu"):
            if controller in controllers.split(","):
                groups[controller] = CGROUPS / controller / path.lstrip("/") / "jupyterhub"
    return groups


def _stop(process: subprocess.Popen, run: Path) -> dict[str, list[str]]:
    """Stop the hub by its PID (it stops the users' servers and the proxy); then what is
    still running of the class users (returned, so the test can fail on it) and of the
    hub's session is stopped too, by PID."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
    pid_file = run / "state" / "jupyterhub-proxy.pid"
    pids = [int(pid_file.read_text())] if pid_file.exists() else []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_processes_of(u) for u in USERS):
        time.sleep(0.5)
    left = {user: found for user in USERS if (found := _processes_of(user))}
    pids += [int(line.split()[0]) for found in left.values() for line in found]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


@pytest.fixture(scope="module")
def semester(hub):
    """The whole cycle; returns what each side saw."""
    http = hub["http"]
    teacher = http[TEACHER]
    timings = {}
    clock = time.monotonic()
    terminal = Terminal(teacher, TEACHER)
    try:
        said = {}
        status, said["init"] = terminal.run(
            f"minigrad-course init ~/course --chapters 1 --timeout {TIMEOUT} "
            f"--notebooks {hub['source'] / 'notebooks'}")
        assert status == 0, said["init"]
        status, said["release"] = terminal.run("cd ~/course && minigrad-course release")
        assert status == 0, said["release"]
        timings["release"] = time.monotonic() - clock

        fetched, submitted = {}, {}
        for student in STUDENTS:
            own = http[student]
            status, courses = own("GET", f"/user/{student}/courses")
            assert status == 200 and courses["value"] == [COURSE_ID], courses
            status, listed = own("POST", f"/user/{student}/assignments/fetch",
                                 {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT})
            assert status == 200 and listed["success"], listed
            path = f"/user/{student}/api/contents/{ASSIGNMENT}/{CHAPTER.name}"
            status, model = own("GET", path)
            assert status == 200, model
            fetched[student] = model["content"]
            work = _handed_in(student, model["content"])
            body = ({"type": "file", "format": "text", "content": work} if isinstance(work, str)
                    else {"type": "notebook", "format": "json", "content": work})
            status, saved = own("PUT", path, body)
            assert status == 200, saved
            status, submitted[student] = own(
                "POST", f"/user/{student}/assignments/submit",
                {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT})
            assert status == 200 and submitted[student]["success"], submitted[student]
        timings["students"] = time.monotonic() - clock - timings["release"]

        for step in ("collect", "grade", "feedback", "export ~/grades.csv"):
            status, said[step.split()[0]] = terminal.run(f"minigrad-course {step}")
            assert status == 0, said[step.split()[0]]
        timings["grading"] = time.monotonic() - clock - sum(timings.values())
    finally:
        terminal.close()
    status, model = teacher("GET", f"/user/{TEACHER}/api/contents/grades.csv?type=file"
                                   "&format=text")
    assert status == 200, model
    grades = {row["student"]: row for row in csv.DictReader(io.StringIO(model["content"]))}

    feedback = {}
    for student in STUDENTS:
        own = http[student]
        status, listed = own("POST", f"/user/{student}/assignments/fetch_feedback",
                             {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT})
        assert status == 200 and listed["success"], listed
        feedback[student] = _feedback_pages(own, student)
    # how long it took and each person's memory (kB of each process), for the log and
    # README.md's sizing (not asserted: the machine is shared)
    memory = {user: subprocess.run(["ps", "-u", user, "-o", "rss=,args="], capture_output=True,
                                   text=True).stdout.splitlines() for user in USERS}
    (hub["run"] / "timings.json").write_text(json.dumps(
        {"environment": hub["built"], **timings, "memory": memory}, indent=1))
    return {"said": said, "grades": grades, "feedback": feedback, "fetched": fetched}


def _feedback_pages(own: Http, student: str) -> list[str]:
    """The text of each feedback page in ``student``'s ASSIGNMENT/feedback/TIMESTAMP/."""
    status, folder = own("GET", f"/user/{student}/api/contents/{ASSIGNMENT}/feedback")
    if status == 404:
        return []
    pages = []
    for stamp in folder["content"]:  # the folder is named after the time of submission
        status, inside = own("GET", f"/user/{student}/api/contents/{quote(stamp['path'])}")
        for page in inside["content"]:
            status, model = own("GET", f"/user/{student}/api/contents/{quote(page['path'])}"
                                       "?type=file&format=text")
            text = re.sub(r"<(script|style)\b.*?</\1>|<[^>]+>", " ", model["content"], flags=re.S)
            pages.append(" ".join(html.unescape(text).split()))
    return pages


# --- the assertions -------------------------------------------------------------------


def test_init_finds_the_exchange_from_nbgrader_config_and_release_publishes_there(
        hub, semester):
    exchange = hub["run"] / "exchange"
    assert f"nbgrader exchange {exchange}" in semester["said"]["init"]
    assert "published in the exchange" in semester["said"]["release"]
    # every student fetched the copy without the answers
    for student, notebook in semester["fetched"].items():
        text = json.dumps(notebook)
        assert "BEGIN SOLUTION" not in text and "YOUR CODE HERE" in text, student


def test_exact_scores_for_each_student(semester):
    expected = _expected_scores()
    got = {s: (float(r["score"]) if r["score"] else None)
           for s, r in semester["grades"].items()}
    assert got == expected
    assert {s: r["status"] for s, r in semester["grades"].items()} == {
        s: ("not graded" if score is None else "graded") for s, score in expected.items()}


def test_the_loop_and_the_broken_file_get_clear_messages_and_do_not_stop_the_others(
        semester):
    grades = semester["grades"]
    assert "not a readable notebook" in grades["mg-broken"]["note"]
    assert "ran past the time limit" in grades["mg-loop"]["note"]
    assert "was edited" in grades["mg-tampered"]["note"]
    assert all(grades[s]["status"] == "graded" for s in STUDENTS if s != "mg-broken")
    said = semester["said"]["grade"]
    assert "mg-broken" in said and "not a readable notebook" in said


def test_each_student_fetched_their_own_feedback_with_the_mistake_named(semester):
    from test_grading import MISTAKES

    pages = semester["feedback"]
    assert all(len(found) == 1 for found in pages.values()), \
        {s: len(found) for s, found in pages.items()}
    page = {s: found[0] for s, found in pages.items()}
    expected = _expected_scores()
    from minigrad.course import authoring

    # the total counts the written question too, which waits for the teacher (no points yet)
    written = sum(authoring.written_questions(read_notebook(CHAPTER)).values())
    for student, score in expected.items():  # the page starts with the total
        if score is not None:
            total = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", page[student])
            assert total and (float(total[1]), float(total[2])) == \
                (score, expected["mg-right"] + written), (student, page[student][:300])
    assert MISTAKES[ASSIGNMENT][MISTAKE][2] in page["mg-mistake"]
    assert MISTAKES[ASSIGNMENT][MISTAKE][2] not in page["mg-right"]
    assert "ran past the time limit" in page["mg-loop"]
    assert f"{ASSIGNMENT}.ipynb could not be read" in page["mg-broken"]
    assert "was edited" in page["mg-tampered"]
    assert "Write your solution where the exercise says so" in page["mg-blank"]


def test_a_student_gets_403_on_another_students_server_and_404_on_the_formgrader(hub):
    http = hub["http"]
    status, _ = http["mg-right"]("GET", "/user/mg-blank/api/contents", raw=True)
    assert status == 403
    status, _ = http["mg-right"]("GET", f"/user/{TEACHER}/api/contents", raw=True)
    assert status == 403
    for student in STUDENTS:
        status, _ = http[student]("GET", f"/user/{student}/formgrader", raw=True)
        assert status == 404, student
    # and JupyterLab is told not to load the formgrader's and the authoring tools' plugins
    for student in STUDENTS:
        status, page = http[student]("GET", f"/user/{student}/lab", raw=True)
        assert status == 200
        off = _lab_config(page)["disabledExtensions"]
        for plugin in ("formgrader", "create-assignment", "course-list"):
            assert f"@jupyter/nbgrader:{plugin}" in off, (student, off)
    status, page = http[TEACHER]("GET", f"/user/{TEACHER}/lab", raw=True)
    assert "@jupyter/nbgrader:formgrader" not in _lab_config(page)["disabledExtensions"]
    status, _ = http[TEACHER]("GET", f"/user/{TEACHER}/formgrader", raw=True)
    assert status == 200


def _lab_config(page: str) -> dict:
    found = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                      page, re.S)
    return json.loads(found[1])


def test_the_teacher_s_formgrader_shows_the_course_and_its_grades(hub, semester):
    # the formgrader reads the course's place (written by init) when the server starts:
    # the teacher restarts their server, as init says
    assert "once your Jupyter server restarts" in semester["said"]["init"]
    admin, teacher = hub["admin"], hub["http"][TEACHER]
    status, _ = admin("DELETE", f"/hub/api/users/{TEACHER}/server", raw=True)
    assert status in (202, 204), status
    _wait("the teacher's server to stop", 120, lambda: not admin(
        "GET", f"/hub/api/users/{TEACHER}")[1]["servers"])
    status, _ = admin("POST", f"/hub/api/users/{TEACHER}/server", raw=True)
    assert status in (201, 202), status
    _wait("the teacher's server", 300, lambda: admin(
        "GET", f"/hub/api/users/{TEACHER}")[1]["servers"].get("", {}).get("ready"))
    status, assignments = teacher("GET", f"/user/{TEACHER}/formgrader/api/assignments")
    assert status == 200, assignments
    (assignment,) = assignments
    assert (assignment["name"], assignment["status"]) == (ASSIGNMENT, "released")
    status, submissions = teacher("GET",
                                  f"/user/{TEACHER}/formgrader/api/submissions/{ASSIGNMENT}")
    assert status == 200, submissions
    scores = {s["student"]: s["score"] for s in submissions if s["autograded"]}
    expected = {s: v for s, v in _expected_scores().items() if v is not None}
    assert scores == expected


# --- the limits: one student's runaway cell, the others untouched ----------------------

HOG = "mg-blank"  # allocates past the memory limit
SPINNER = "mg-mistake"  # spins past the CPU limit
NEIGHBOUR = "mg-right"  # keeps working


# two processes spinning for 4 s (asking for 2 cores); the cores they got, measured by the
# kernel that started them
SPIN = """\
import os, time
start = time.monotonic()
spinners = []
for _ in range(2):
    if (pid := os.fork()) == 0:
        while time.monotonic() - start < 4:
            pass
        os._exit(0)
    spinners.append(pid)
for pid in spinners:
    os.waitpid(pid, 0)
used = os.times()
print((used.children_user + used.children_system) / (time.monotonic() - start))
"""


def _group(hub, controller: str, user: str) -> Path:
    return hub["groups"][controller] / user


def _kernel_pid(kernel: Kernel) -> int:
    status, printed = kernel.run("import os; print(os.getpid())")
    assert status == "ok", printed
    return int(printed)


@pytest.fixture(scope="module")
def runaway(hub, semester):
    """After the term's cycle: three students' kernels; one fills memory, one spins."""
    http = hub["http"]
    kernels = {user: Kernel(http[user], user) for user in (HOG, SPINNER, NEIGHBOUR)}
    try:
        pids = {user: _kernel_pid(kernel) for user, kernel in kernels.items()}
        seen = {"pids": pids, "cgroup": {user: Path(f"/proc/{pid}/cgroup").read_text()
                                         for user, pid in pids.items()}}
        status, _ = kernels[NEIGHBOUR].run("kept = 41")
        assert status == "ok"
        limit = LIMITS["student"][0]
        seen["hog"] = kernels[HOG].run(f"hog = b'x' * {2 * limit}; print('allocated')")
        seen["oom"] = (_group(hub, "memory", HOG) / "memory.oom_control").read_text()
        seen["hog_alive"] = Path(f"/proc/{pids[HOG]}").exists()
        spin = _group(hub, "cpu", SPINNER) / "cpu.stat"
        before = dict(line.split() for line in spin.read_text().splitlines())
        seen["spin"] = kernels[SPINNER].run(SPIN)
        after = dict(line.split() for line in spin.read_text().splitlines())
        seen["throttled"] = int(after["nr_throttled"]) - int(before["nr_throttled"])
        seen["neighbour"] = kernels[NEIGHBOUR].run("print(kept + 1, os.getpid())")
        seen["servers"] = {user: hub["admin"]("GET", f"/hub/api/users/{user}")[1]["servers"]
                           .get("", {}).get("ready") for user in USERS}
    finally:
        for kernel in kernels.values():
            kernel.close()
    return seen


def test_each_server_and_its_kernels_run_in_their_own_group_with_their_role_s_limits(
        hub, runaway):
    for user, text in runaway["cgroup"].items():  # the kernels: children of the server
        groups = {line.split(":")[1]: line.split(":", 2)[2] for line in text.splitlines()}
        for controller in ("memory", "cpu"):
            assert CGROUPS / controller / groups[controller].lstrip("/") == \
                _group(hub, controller, user), (user, text)
    for user in USERS:
        memory, cores = LIMITS["teacher" if user == TEACHER else "student"]
        assert int((_group(hub, "memory", user) / "memory.limit_in_bytes").read_text()) \
            == memory, user
        quota = int((_group(hub, "cpu", user) / "cpu.cfs_quota_us").read_text())
        period = int((_group(hub, "cpu", user) / "cpu.cfs_period_us").read_text())
        assert quota / period == cores, user


def test_a_cell_past_the_memory_limit_kills_that_kernel_only(hub, runaway):
    status, printed = runaway["hog"]
    assert status == "died" and "allocated" not in printed, runaway["hog"]
    oom = dict(line.split() for line in runaway["oom"].splitlines())
    assert int(oom["oom_kill"]) >= 1, runaway["oom"]  # the kernel's OOM killer, in its group
    assert not runaway["hog_alive"]
    # the student's own server lived (Jupyter restarts the kernel), and everyone else's
    assert all(runaway["servers"].values()), runaway["servers"]
    status, _ = hub["http"][HOG]("GET", f"/user/{HOG}/api/status")
    assert status == 200


def test_a_busy_loop_gets_its_share_of_the_cpu_and_no_more(runaway):
    status, printed = runaway["spin"]
    assert status == "ok", printed
    share = float(printed)
    assert share <= LIMITS["student"][1] * 1.2, share  # measured by the kernel
    assert runaway["throttled"] > 0  # the group's quota is what held it back


def test_another_student_s_kernel_keeps_its_state_and_answers(runaway):
    status, printed = runaway["neighbour"]
    assert status == "ok", printed
    assert printed.split() == ["42", str(runaway["pids"][NEIGHBOUR])]


def test_the_hub_speaks_https_only_with_its_certificate(hub):
    port = hub["base"].rsplit(":", 1)[1]
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(f"https://127.0.0.1:{port}/hub/api/", timeout=30,
                               context=ssl.create_default_context())  # without it: refused
    with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/hub/api/", timeout=30)  # plain
    status, info = hub["admin"]("GET", "/hub/api/")
    assert status == 200 and "version" in info
