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
#   MINIGRAD_HUB_BIND      the address people open [http://:8000]
#   MINIGRAD_HUB_PORTS     the hub's and the proxy API's ports on 127.0.0.1 [8081,8001]
#   MINIGRAD_HUB_SHARED_PASSWORD   one password for everyone (a workshop); unset: each
#                          person logs in with their Unix password (PAM)
#   MINIGRAD_HUB_PROXY     the configurable-http-proxy program [found on PATH]
#   MINIGRAD_HUB_API_TOKEN a token for scripts (a service that may start servers and
#                          manage users' tokens); unset: no such service
import json
import os
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

# --- who may log in ---------------------------------------------------------------------
c.Authenticator.allowed_users = set(PEOPLE)
if os.environ.get("MINIGRAD_HUB_SHARED_PASSWORD"):
    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = os.environ["MINIGRAD_HUB_SHARED_PASSWORD"]
else:
    c.JupyterHub.authenticator_class = "pam"

# --- where it listens and keeps its files -----------------------------------------------
hub_port, proxy_port = (int(p) for p in
                        os.environ.get("MINIGRAD_HUB_PORTS", "8081,8001").split(","))
c.JupyterHub.bind_url = os.environ.get("MINIGRAD_HUB_BIND", "http://:8000")
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = hub_port
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{proxy_port}"
if os.environ.get("MINIGRAD_HUB_PROXY"):
    c.ConfigurableHTTPProxy.command = [os.environ["MINIGRAD_HUB_PROXY"]]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")

# --- each person's server: their own Unix process, in their home folder ------------------
c.JupyterHub.spawner_class = "localprocess"  # setuid to the user (not everyone as root)
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


def student_settings(spawner):
    if spawner.user.name not in TEACHERS:  # a new dict: the configured one is shared
        spawner.environment = {**spawner.environment, "JUPYTER_CONFIG_PATH": str(STUDENT_CONFIG)}


c.Spawner.pre_spawn_hook = student_settings

# --- a token for scripts (optional) ------------------------------------------------------
if os.environ.get("MINIGRAD_HUB_API_TOKEN"):
    c.JupyterHub.services = [{"name": "class-admin",
                              "api_token": os.environ["MINIGRAD_HUB_API_TOKEN"]}]
    c.JupyterHub.load_roles = [{
        "name": "class-admin", "services": ["class-admin"],
        "scopes": ["admin:users", "admin:servers", "access:servers", "list:users",
                   "read:users", "tokens"]}]
