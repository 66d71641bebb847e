"""Load deploy/jupyterhub/jupyterhub_config.py as ``jupyterhub -f`` does, once for each set
of MINIGRAD_HUB_* settings (and config file) read as JSON from standard input, and print
what each gave as JSON: the classes the hub would use, every setting that is no trait of
them, traitlets' warnings, and what a student's and a teacher's server would get.

Run by tests/test_hub_config.py with the Python of the hub's environment (jupyterhub,
oauthenticator and jupyterhub-systemdspawner installed from deploy/jupyterhub/requirements.txt).
"""

import json
import logging
import os
import sys
from types import SimpleNamespace

from jupyterhub.app import JupyterHub
from traitlets.config import Configurable


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.said = []

    def emit(self, record):
        self.said.append(record.getMessage())


def known_classes(app):
    """{name: class} of every configurable class the hub would use, with their bases."""
    classes = {}
    for used in (JupyterHub, app.authenticator_class, app.spawner_class, app.proxy_class):
        for cls in used.mro():
            if isinstance(cls, type) and issubclass(cls, Configurable):
                classes.setdefault(cls.__name__, cls)
    return classes


def check(config_file, settings):
    for name in [name for name in os.environ if name.startswith("MINIGRAD_HUB_")]:
        del os.environ[name]
    os.environ.update(settings)
    app = JupyterHub()
    warnings = Collect()
    app.log.addHandler(warnings)
    try:
        app.load_config_file(config_file)
    except SystemExit as stop:
        return {"exit": str(stop)}
    classes = known_classes(app)
    problems = []
    for section, values in app.config.items():
        if section not in classes:
            problems.append(f"{section}: no class of this hub is called so")
            continue
        traits = classes[section].class_trait_names(config=True)
        problems += [f"{section}.{key}: no such setting" for key in values if key not in traits]
    authenticator = app.authenticator_class(parent=app)
    servers = {}
    for name in ("ada", "turing"):  # what the pre-spawn hook gives each role
        spawner = app.spawner_class(parent=app, user=SimpleNamespace(name=name, id=1),
                                    hub=None)
        app.config.Spawner.pre_spawn_hook(spawner)
        servers[name] = {"mem_limit": spawner.mem_limit, "cpu_limit": spawner.cpu_limit,
                         "config_path": spawner.environment.get("JUPYTER_CONFIG_PATH")}
    return {"prefix": sys.prefix, "authenticator": type(authenticator).__name__,
            "spawner": app.spawner_class.__name__,
            "allowed_users": sorted(authenticator.allowed_users),
            "bind_url": app.bind_url, "ssl": [app.ssl_cert, app.ssl_key],
            "oauth": {key: str(getattr(authenticator, key, None)) for key in (
                "client_id", "authorize_url", "token_url", "userdata_url", "username_claim",
                "oauth_callback_url", "login_service")},
            "servers": servers, "problems": problems + warnings.said}


if __name__ == "__main__":  # {name: {"config": FILE, "settings": {NAME: VALUE}}} in
    runs = json.load(sys.stdin)
    print(json.dumps({name: check(run["config"], run["settings"])
                      for name, run in runs.items()}))
