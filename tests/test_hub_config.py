"""The hub's configuration under its other settings, without starting a hub: the
university's login (oauthenticator's GenericOAuthenticator), the systemd spawner, HTTPS,
the limits, and the message for each setting a deployer can get wrong.

``deploy/jupyterhub/jupyterhub_config.py`` is loaded by ``tests/hub_config_check.py`` in
the hub's environment (the one tests/test_hub.py builds from the pinned requirements, so
the packages are the versions the recipe installs); every setting the config makes must
be a trait of the class it configures (traitlets only warns about unknown ones: here
that fails), and traitlets' warnings fail too. The config writes a few files under its
environment (the exchange's place): it runs from a bare environment that sees the hub's
packages, so a hub test running at the same time keeps its own. Needs root, as
tests/test_hub.py does (the environment is the hub's, in a root-owned cache).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import need
from test_hub import (CACHE, DEPLOY, SYSTEM_PYTHON, _copy_tree, _environment,
                      _environment_folder)

CLASS = "turing teacher\nada student\ngrace student\n"
OAUTH = {"MINIGRAD_HUB_AUTH": "oauth",
         "MINIGRAD_HUB_OAUTH_CLIENT_ID": "minigrad-hub",
         "MINIGRAD_HUB_OAUTH_CLIENT_SECRET": "a-secret",
         "MINIGRAD_HUB_OAUTH_CALLBACK_URL": "https://hub.example.edu/hub/oauth_callback",
         "MINIGRAD_HUB_OAUTH_AUTHORIZE_URL": "https://login.example.edu/oauth2/authorize",
         "MINIGRAD_HUB_OAUTH_TOKEN_URL": "https://login.example.edu/oauth2/token",
         "MINIGRAD_HUB_OAUTH_USERDATA_URL": "https://login.example.edu/oauth2/userinfo",
         "MINIGRAD_HUB_OAUTH_NAME": "Example University"}
GiB = 1024 ** 3


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """What the config gave under each set of settings (one process for all of them)."""
    if os.geteuid() != 0:
        need("root", "the hub's environment is built in root's cache by tests/test_hub.py")
    if not Path(SYSTEM_PYTHON).exists():
        need(SYSTEM_PYTHON, "Debian's python3, for the hub's environment")
    folder = tmp_path_factory.mktemp("hub-config")
    (folder / "class.txt").write_text(CLASS)
    cert, key = folder / "cert.pem", folder / "key.pem"
    cert.write_text("a certificate\n")  # the config checks they are files; the proxy reads them
    key.write_text("its key\n")
    common = {"MINIGRAD_HUB_CLASS": str(folder / "class.txt"),
              "MINIGRAD_HUB_STATE": str(folder),
              "MINIGRAD_HUB_EXCHANGE": str(folder / "exchange")}
    runs = {
        "default": {},
        "university": {**OAUTH, "MINIGRAD_HUB_SPAWNER": "systemd",
                       "MINIGRAD_HUB_SSL_CERT": str(cert), "MINIGRAD_HUB_SSL_KEY": str(key),
                       "MINIGRAD_HUB_MEM_LIMIT": "1.5G", "MINIGRAD_HUB_CPU_LIMIT": "0.5",
                       "MINIGRAD_HUB_TEACHER_CPU_LIMIT": "none"},
        "workshop": {"MINIGRAD_HUB_SHARED_PASSWORD": "long enough", "MINIGRAD_HUB_SPAWNER":
                     "local"},
        # what a deployer can get wrong
        "no-client-id": {k: v for k, v in OAUTH.items() if k != "MINIGRAD_HUB_OAUTH_CLIENT_ID"},
        "unknown-login": {"MINIGRAD_HUB_AUTH": "ldap"},
        "cert-without-key": {"MINIGRAD_HUB_SSL_CERT": str(cert)},
        "cert-missing": {"MINIGRAD_HUB_SSL_CERT": str(folder / "nowhere.pem"),
                         "MINIGRAD_HUB_SSL_KEY": str(key)},
        "memory-in-words": {"MINIGRAD_HUB_MEM_LIMIT": "two gigabytes"},
        "no-cores": {"MINIGRAD_HUB_TEACHER_CPU_LIMIT": "0"},
        "unknown-spawner": {"MINIGRAD_HUB_SPAWNER": "docker"},
    }
    # the check itself: the config with two misspelled settings added must fail it
    typo = folder / "typo_config.py"
    typo.write_text(f"load_subconfig({str(DEPLOY / 'jupyterhub_config.py')!r})\n"
                    "c.GenericOAuthenticator.client_idd = 'x'\n"
                    "c.CgroupSpawner.mem_limitt = '1G'\n")
    files = {name: DEPLOY / "jupyterhub_config.py" for name in runs}
    runs["typo"], files["typo"] = {**OAUTH}, typo
    python = _overlay(_hub_environment(folder), folder / "overlay")
    result = subprocess.run(
        [str(python), str(Path(__file__).with_name("hub_config_check.py"))],
        input=json.dumps({name: {"config": str(files[name]), "settings": {**common, **settings}}
                          for name, settings in runs.items()}),
        capture_output=True, text=True, timeout=300, cwd=folder)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def _hub_environment(folder: Path, seconds: float = 1800) -> Path:
    """The hub's environment, built by whichever of the two hub tests comes first: while
    tests/test_hub.py holds the lock, wait until the environment is complete (not until
    its hub has finished)."""
    env, deadline = _environment_folder(), time.monotonic() + seconds
    CACHE.mkdir(parents=True, exist_ok=True)
    while not (env / ".complete").exists():
        with open(CACHE / "lock", "w") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"no complete {env} after {seconds} s")
                time.sleep(2)
                continue
            try:
                return _environment(_copy_tree(folder / "src"), folder / "setup.log")
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
    return env


def _overlay(env: Path, overlay: Path) -> Path:
    """A bare environment that sees ``env``'s packages: the config writes its files under
    sys.prefix, which is then this one, not the environment a running hub test uses."""
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(overlay)], check=True,
                   timeout=120)
    (site,) = (env / "lib").glob("python3*/site-packages")
    (own,) = (overlay / "lib").glob("python3*/site-packages")
    (own / "hub_environment.pth").write_text(f"{site}\n")
    return overlay / "bin" / "python"


@pytest.mark.parametrize("run", ["default", "university", "workshop"])
def test_every_setting_is_a_trait_of_the_class_it_configures(loaded, run):
    assert "exit" not in loaded[run], loaded[run]
    assert loaded[run]["problems"] == []


def test_a_misspelled_setting_fails_the_check(loaded):
    problems = loaded["typo"]["problems"]
    assert "GenericOAuthenticator.client_idd: no such setting" in problems, problems
    assert "CgroupSpawner.mem_limitt: no such setting" in problems, problems


def test_the_university_login_is_generic_oauth_and_the_class_list_decides_who_enters(loaded):
    university = loaded["university"]
    assert university["authenticator"] == "GenericOAuthenticator"
    assert university["allowed_users"] == ["ada", "grace", "turing"]
    oauth = university["oauth"]
    assert oauth["client_id"] == OAUTH["MINIGRAD_HUB_OAUTH_CLIENT_ID"]
    assert oauth["token_url"] == OAUTH["MINIGRAD_HUB_OAUTH_TOKEN_URL"]
    assert oauth["userdata_url"] == OAUTH["MINIGRAD_HUB_OAUTH_USERDATA_URL"]
    assert oauth["oauth_callback_url"] == OAUTH["MINIGRAD_HUB_OAUTH_CALLBACK_URL"]
    assert oauth["username_claim"] == "preferred_username"
    assert oauth["login_service"] == "Example University"


def test_the_tested_default_is_pam_with_each_server_in_its_own_control_group(loaded):
    default = loaded["default"]
    assert (default["authenticator"], default["spawner"]) == ("PAMAuthenticator",
                                                              "CgroupSpawner")
    assert default["bind_url"].startswith("http://") and default["ssl"] == ["", ""]
    assert default["allowed_users"] == ["ada", "grace", "turing"]
    assert loaded["workshop"]["authenticator"] == "SharedPasswordAuthenticator"
    assert loaded["workshop"]["spawner"] == "LocalProcessSpawner"


def test_limits_by_role_and_students_settings(loaded):
    default = loaded["default"]["servers"]
    assert default["ada"]["mem_limit"] == GiB and default["ada"]["cpu_limit"] == 1.0
    assert default["turing"]["mem_limit"] == 2 * GiB and default["turing"]["cpu_limit"] == 2.0
    assert default["ada"]["config_path"] == \
        str(Path(loaded["default"]["prefix"]) / "etc" / "jupyter-student")
    assert Path(loaded["default"]["prefix"]).name == "overlay"  # not the hub test's files
    assert default["turing"]["config_path"] is None
    university = loaded["university"]["servers"]
    assert university["ada"]["mem_limit"] == int(1.5 * GiB)
    assert university["ada"]["cpu_limit"] == 0.5
    assert university["turing"]["cpu_limit"] is None  # "none": no limit


def test_https_with_the_certificate_given(loaded):
    university = loaded["university"]
    assert university["bind_url"].startswith("https://")
    assert [Path(p).name for p in university["ssl"]] == ["cert.pem", "key.pem"]


@pytest.mark.parametrize("run, message", [
    ("no-client-id", "set MINIGRAD_HUB_OAUTH_CLIENT_ID"),
    ("unknown-login", "MINIGRAD_HUB_AUTH='ldap': write pam, shared-password or oauth"),
    ("cert-without-key", "MINIGRAD_HUB_SSL_KEY='': give both the certificate and its key"),
    ("cert-missing", "nowhere.pem'"),
    ("memory-in-words", "MINIGRAD_HUB_MEM_LIMIT='two gigabytes': write bytes with a K, M "
                        "or G suffix"),
    ("no-cores", "MINIGRAD_HUB_TEACHER_CPU_LIMIT='0': write a number of cores"),
    ("unknown-spawner", "MINIGRAD_HUB_SPAWNER='docker': write cgroup, systemd or local"),
])
def test_a_wrong_setting_stops_the_hub_with_a_message_naming_it(loaded, run, message):
    assert message in loaded[run].get("exit", ""), loaded[run]


def test_the_nginx_example_passes_nginx_s_own_check(tmp_path):
    """deploy/jupyterhub/nginx.conf, with a certificate made here in place of the
    example's, in a minimal main configuration: ``nginx -t`` accepts it."""
    nginx = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)
    if nginx is None:
        need("nginx", "apt-get install nginx-light (checks the reverse-proxy example)")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=hub.example.edu", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    text = (DEPLOY / "nginx.conf").read_text()
    for example, made in (("/etc/ssl/certs/hub.example.edu.fullchain.pem", cert),
                          ("/etc/ssl/private/hub.example.edu.key.pem", key)):
        assert example in text
        text = text.replace(example, str(made))
    (tmp_path / "minigrad-hub.conf").write_text(text)
    main = tmp_path / "nginx.conf"
    main.write_text(f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
                    "events {}\n"
                    f"http {{\n  access_log off;\n  include {tmp_path}/minigrad-hub.conf;\n}}\n")
    result = subprocess.run([nginx, "-t", "-c", str(main), "-p", str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "test is successful" in result.stderr, result.stderr
