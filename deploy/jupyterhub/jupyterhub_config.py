# A JupyterHub for one class on one machine: real Unix users (one process each), the
# students' notebooks graded with nbgrader through its exchange, minigrad installed with
# the hub. See README.md next to this file. Run as root from the hub's environment:
#
#   sudo /opt/minigrad-hub/bin/jupyterhub -f /srv/minigrad-hub/jupyterhub_config.py
#
# The settings a class changes are read from the environment (defaults in brackets):
#   MINIGRAD_HUB_CLASS     the class list, "USER teacher|student" a line
#                          [/srv/minigrad-hub/class.txt]
#   MINIGRAD_HUB_STATE     the hub's own files: database, cookie secret, logs
#                          [/srv/minigrad-hub]
#   MINIGRAD_HUB_EXCHANGE  nbgrader's exchange folder [/srv/nbgrader/exchange]
#   MINIGRAD_HUB_BIND      the address people open [http://:8000, https:// with a certificate]
#   MINIGRAD_HUB_PORTS     the hub's and the proxy API's ports on 127.0.0.1 [8081,8001]
#   MINIGRAD_HUB_SSL_CERT, MINIGRAD_HUB_SSL_KEY   the certificate (full chain) and its
#                          key, PEM files: the hub then serves HTTPS itself [unset: HTTP,
#                          for behind a reverse proxy that does HTTPS; see README.md]
#   MINIGRAD_HUB_AUTH      how people log in: pam (their Unix password), shared-password
#                          (one password, a workshop) or oauth (the university's login,
#                          below) [pam; shared-password if MINIGRAD_HUB_SHARED_PASSWORD is set]
#   MINIGRAD_HUB_SHARED_PASSWORD   the one password (at least 8 characters)
#   MINIGRAD_HUB_OAUTH_*   for oauth, the university's OpenID Connect / OAuth 2 provider:
#                          CLIENT_ID, CLIENT_SECRET (as registered there), CALLBACK_URL
#                          (https://HUB/hub/oauth_callback), AUTHORIZE_URL, TOKEN_URL,
#                          USERDATA_URL (the provider's endpoints), USERNAME_CLAIM (the
#                          claim that holds the class list's names) [preferred_username],
#                          NAME (on the login button) [your university]
#   MINIGRAD_HUB_SPAWNER   how each server runs: cgroup (a Unix process in its own control
#                          group, limits enforced: cgroupspawner.py), systemd (a systemd
#                          unit: jupyterhub-systemdspawner) or local (no limits) [cgroup
#                          where the cgroup v1 memory and cpu controllers are, else systemd
#                          where it runs]
#   MINIGRAD_HUB_MEM_LIMIT, MINIGRAD_HUB_CPU_LIMIT   each student's server with its kernels:
#                          bytes (K, M, G suffixes) and cores, or none [1G, 1]
#   MINIGRAD_HUB_TEACHER_MEM_LIMIT, MINIGRAD_HUB_TEACHER_CPU_LIMIT   the same for teachers,
#                          who grade the class's notebooks in their server [2G, 2]
#   MINIGRAD_HUB_PROXY     the configurable-http-proxy program [found on PATH]
#   MINIGRAD_HUB_API_TOKEN a token for scripts (a service that may start servers and
#                          manage users' tokens); unset: no such service
import json
import os
import re
import sys
from pathlib import Path

c = get_config()  # noqa: F821

ENV = Path(sys.prefix)  # the environment jupyterhub runs from: minigrad, nbgrader, lab
STATE = Path(os.environ.get("MINIGRAD_HUB_STATE", "/srv/minigrad-hub"))
EXCHANGE = Path(os.environ.get("MINIGRAD_HUB_EXCHANGE", "/srv/nbgrader/exchange"))
CLASS = Path(os.environ.get("MINIGRAD_HUB_CLASS", STATE / "class.txt"))


def read_class(path):
    """{user: role} from the class list."""
    people = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or words[1] not in ("teacher", "student"):
            raise SystemExit(f"{path}:{number}: write 'USER teacher' or 'USER student', "
                             f"not {line!r}")
        people[words[0]] = words[1]
    return people


PEOPLE = read_class(CLASS)
TEACHERS = {user for user, role in PEOPLE.items() if role == "teacher"}


def setting(name, default=None):
    """MINIGRAD_HUB_<name>; stops the hub with a clear message if it is needed and unset."""
    value = os.environ.get(f"MINIGRAD_HUB_{name}", default)
    if value is None:
        raise SystemExit(f"set MINIGRAD_HUB_{name} (see the top of {__file__})")
    return value


# --- who may log in: the people of the class list, however they prove who they are -------
c.Authenticator.allowed_users = set(PEOPLE)
AUTH = setting("AUTH", "shared-password" if os.environ.get("MINIGRAD_HUB_SHARED_PASSWORD")
               else "pam")
if AUTH == "pam":
    c.JupyterHub.authenticator_class = "pam"
elif AUTH == "shared-password":
    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = setting("SHARED_PASSWORD")
elif AUTH == "oauth":
    # the university's single sign-on (oauthenticator's GenericOAuthenticator: any OpenID
    # Connect provider, e.g. Microsoft Entra ID, Google Workspace, Keycloak, Shibboleth's
    # OIDC). The claim USERNAME_CLAIM must hold the class list's names, which are also the
    # Unix accounts add-users.sh made; anyone else is refused.
    c.JupyterHub.authenticator_class = "generic-oauth"
    c.GenericOAuthenticator.client_id = setting("OAUTH_CLIENT_ID")
    c.GenericOAuthenticator.client_secret = setting("OAUTH_CLIENT_SECRET")
    c.GenericOAuthenticator.oauth_callback_url = setting("OAUTH_CALLBACK_URL")
    c.GenericOAuthenticator.authorize_url = setting("OAUTH_AUTHORIZE_URL")
    c.GenericOAuthenticator.token_url = setting("OAUTH_TOKEN_URL")
    c.GenericOAuthenticator.userdata_url = setting("OAUTH_USERDATA_URL")
    c.GenericOAuthenticator.scope = ["openid", "profile", "email"]
    c.GenericOAuthenticator.username_claim = setting("OAUTH_USERNAME_CLAIM",
                                                     "preferred_username")
    c.GenericOAuthenticator.login_service = setting("OAUTH_NAME", "your university")
else:
    raise SystemExit(f"MINIGRAD_HUB_AUTH={AUTH!r}: write pam, shared-password or oauth")

# --- where it listens and keeps its files -----------------------------------------------
hub_port, proxy_port = (int(p) for p in
                        os.environ.get("MINIGRAD_HUB_PORTS", "8081,8001").split(","))
SSL = [os.environ.get("MINIGRAD_HUB_SSL_CERT"), os.environ.get("MINIGRAD_HUB_SSL_KEY")]
if any(SSL):  # the proxy serves HTTPS with them
    for name, path in zip(("SSL_CERT", "SSL_KEY"), SSL):
        if not path or not Path(path).is_file():
            raise SystemExit(f"MINIGRAD_HUB_{name}={path or ''!r}: give both the "
                             "certificate and its key, as PEM files")
    c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key = SSL
c.JupyterHub.bind_url = setting("BIND", "https://:8000" if any(SSL) else "http://:8000")
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = hub_port
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{proxy_port}"
if os.environ.get("MINIGRAD_HUB_PROXY"):
    c.ConfigurableHTTPProxy.command = [os.environ["MINIGRAD_HUB_PROXY"]]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")

# --- each person's server: their own Unix process, in their home folder ------------------
# (a Unix process started as the user: not everyone as root), within the limits below
sys.path.insert(0, str(Path(__file__).resolve().parent))  # cgroupspawner.py, next to us
from cgroupspawner import missing_controllers  # noqa: E402 (found through the line above)

# the default: the cgroup v1 controllers where they are, else systemd where it runs
SYSTEMD = Path("/run/systemd/system").is_dir()  # as sd_booted() tells
SPAWNER = setting("SPAWNER", "systemd" if SYSTEMD and missing_controllers() else "cgroup")
if SPAWNER == "cgroup":
    if missing := missing_controllers():
        raise SystemExit(
            f"MINIGRAD_HUB_SPAWNER=cgroup needs the cgroup v1 {' and '.join(missing)} "
            "controllers under /sys/fs/cgroup (and root). Where systemd runs, set "
            "MINIGRAD_HUB_SPAWNER=systemd; MINIGRAD_HUB_SPAWNER=local runs without limits")
    c.JupyterHub.spawner_class = "cgroupspawner.CgroupSpawner"
elif SPAWNER == "systemd":  # each server a transient systemd unit (MemoryMax, CPUQuota)
    c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
    c.SystemdSpawner.isolate_tmp = True  # a /tmp of their own
    c.SystemdSpawner.disable_user_sudo = True
elif SPAWNER == "local":
    c.JupyterHub.spawner_class = "localprocess"
else:
    raise SystemExit(f"MINIGRAD_HUB_SPAWNER={SPAWNER!r}: write cgroup, systemd or local")


def limits(role, memory, cores):
    """(bytes as JupyterHub writes them, cores) from MINIGRAD_HUB_[TEACHER_]MEM/CPU_LIMIT."""
    prefix = "TEACHER_" if role == "teacher" else ""
    memory = setting(f"{prefix}MEM_LIMIT", memory)
    cores = setting(f"{prefix}CPU_LIMIT", cores)
    if memory != "none" and not re.fullmatch(r"\d+(\.\d+)?[KMGT]?", memory):
        raise SystemExit(f"MINIGRAD_HUB_{prefix}MEM_LIMIT={memory!r}: write bytes with a "
                         "K, M or G suffix (e.g. 1G), or none")
    if cores != "none" and not (re.fullmatch(r"\d+(\.\d+)?", cores) and float(cores) > 0):
        raise SystemExit(f"MINIGRAD_HUB_{prefix}CPU_LIMIT={cores!r}: write a number of "
                         "cores (e.g. 0.5 or 2), or none")
    return (None if memory == "none" else memory), (None if cores == "none" else float(cores))


LIMITS = {"student": limits("student", "1G", "1"), "teacher": limits("teacher", "2G", "2")}
if SPAWNER == "local" and any(any(pair) for pair in LIMITS.values()):
    print("jupyterhub_config.py: MINIGRAD_HUB_SPAWNER=local does not enforce the memory "
          "and CPU limits", file=sys.stderr)
c.Spawner.cmd = [str(ENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.environment = {"PATH": f"{ENV / 'bin'}:/usr/local/bin:/usr/bin:/bin"}
c.Spawner.start_timeout = 300  # a class logging in at once on a small machine
c.Spawner.http_timeout = 300

# --- nbgrader's exchange: everyone writes to it (nbgrader keeps students apart inside) ---
EXCHANGE.mkdir(parents=True, exist_ok=True)
EXCHANGE.chmod(0o1777)
NBGRADER_CONFIG = ENV / "etc" / "jupyter" / "nbgrader_config.py"  # read by every user
NBGRADER_CONFIG.parent.mkdir(parents=True, exist_ok=True)
NBGRADER_CONFIG.write_text("# written by jupyterhub_config.py: the class's exchange\n"
                           "c = get_config()  # noqa: F821\n"
                           f"c.Exchange.root = {str(EXCHANGE)!r}\n", encoding="utf-8")

# JupyterLab's terminals: a login shell would reset PATH from /etc/profile and lose this
# environment's programs (minigrad-course, nbgrader); a plain interactive bash keeps them
# (jupyter_server_config.d/ is read for the extensions only: this file it is)
SERVER_CONFIG = ENV / "etc" / "jupyter" / "jupyter_server_config.json"
SERVER_CONFIG.write_text(json.dumps({"ServerApp": {"terminado_settings": {
    "shell_command": ["/bin/bash"]}}}, indent=1), encoding="utf-8")

# --- what students see: no formgrader, no course list, no create-assignment tools --------
# (a config folder added to students' JUPYTER_CONFIG_PATH; teachers keep everything)
STUDENT_CONFIG = ENV / "etc" / "jupyter-student"
(STUDENT_CONFIG / "labconfig").mkdir(parents=True, exist_ok=True)
(STUDENT_CONFIG / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {
    "jpserver_extensions": {"nbgrader.server_extensions.formgrader": False,
                            "nbgrader.server_extensions.course_list": False}}}, indent=1))
(STUDENT_CONFIG / "labconfig" / "page_config.json").write_text(json.dumps({
    "disabledExtensions": {"@jupyter/nbgrader:formgrader": True,
                           "@jupyter/nbgrader:create-assignment": True,
                           "@jupyter/nbgrader:course-list": True}}, indent=1))


def role_settings(spawner):
    """A student's or a teacher's limits; students' Jupyter settings."""
    role = "teacher" if spawner.user.name in TEACHERS else "student"
    spawner.mem_limit, spawner.cpu_limit = LIMITS[role]
    if role == "student":  # a new dict: the configured one is shared
        spawner.environment = {**spawner.environment, "JUPYTER_CONFIG_PATH": str(STUDENT_CONFIG)}


c.Spawner.pre_spawn_hook = role_settings

# --- a token for scripts (optional) ------------------------------------------------------
if os.environ.get("MINIGRAD_HUB_API_TOKEN"):
    c.JupyterHub.services = [{"name": "class-admin",
                              "api_token": os.environ["MINIGRAD_HUB_API_TOKEN"]}]
    c.JupyterHub.load_roles = [{
        "name": "class-admin", "services": ["class-admin"],
        "scopes": ["admin:users", "admin:servers", "access:servers", "list:users",
                   "read:users", "tokens"]}]
