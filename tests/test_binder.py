"""The Binder environment, checked as closely as this machine allows.

repo2docker (what Binder runs) cannot build images here, so the test does what it would
do with `binder/`: a fresh virtual environment, `pip install -r binder/requirements.txt`
from the repository root (the project is installed, not linked, so nothing of the working
tree leaks in), and then two chapters run under nbval inside that environment, from a
copy of the notebooks folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ["01_autograd_from_scratch.ipynb", "widgets_tour.ipynb"]


def test_binder_files_say_what_repo2docker_needs():
    assert (ROOT / "binder" / "apt.txt").read_text().split() == ["graphviz"]
    assert (ROOT / "binder" / "runtime.txt").read_text().strip().startswith("python-3.")
    requirements = (ROOT / "binder" / "requirements.txt").read_text().split()
    assert any(line.startswith(".[") or line == "." for line in requirements)


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory) -> Path:
    """A fresh venv with binder/requirements.txt installed (and nbval to run chapters)."""
    venv = tmp_path_factory.mktemp("binder") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
           "--disable-pip-version-check"]
    for args in (["-r", "binder/requirements.txt"], ["pytest", "nbval"]):
        result = subprocess.run(pip + args, cwd=ROOT, capture_output=True, text=True)
        if result.returncode != 0:
            need("the Binder requirements", "pip could not install them:\n" + result.stderr)
    return venv


def test_the_binder_environment_runs_the_chapters(binder_env, tmp_path):
    if shutil.which("dot") is None:
        need("Graphviz dot", "the chapters' saved graphs were drawn with it")
    python = str(binder_env / "bin" / "python")
    where = subprocess.run([python, "-c", "import minigrad, minigrad.widgets; "
                            "print(minigrad.__file__)"], cwd=tmp_path, capture_output=True,
                           text=True, check=True).stdout.strip()
    assert "site-packages" in where and not where.startswith(str(ROOT))
    notebooks = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", notebooks)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval",
         "--nbval-current-env", "--nbval-sanitize-with", "sanitize.cfg", *CHAPTERS],
        cwd=notebooks, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_binder_makes_the_workspace_that_the_course_links_open(binder_env, tmp_path):
    # what repo2docker does after installing the requirements: run binder/postBuild in
    # the repository's root, with the environment's commands on PATH
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "notebooks", repo / "notebooks")
    shutil.copytree(ROOT / "binder", repo / "binder")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = str(binder_env / "bin") + os.pathsep + env["PATH"]
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "jupyter-data")  # Binder's user's, here
    result = subprocess.run(["bash", "binder/postBuild"], cwd=repo, capture_output=True,
                            text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    # the workspace's kernel is in the environment, with one BLAS thread
    spec = json.loads((binder_env / "share" / "jupyter" / "kernels" / "minigrad" /
                       "kernel.json").read_text())
    assert spec["env"]["OPENBLAS_NUM_THREADS"] == "1"
    assert spec["argv"][0].startswith(str(binder_env))
    # and its notebooks open trusted (their saved pictures drawn)
    import nbformat
    from nbformat.sign import NotebookNotary

    notary = NotebookNotary(data_dir=env["JUPYTER_DATA_DIR"])
    assert notary.check_signature(nbformat.read(repo / "my-course" / "00_start_here.ipynb",
                                                as_version=4))
    sys.path.insert(0, str(ROOT / "scripts"))
    import course_index

    for notebook in course_index.load(ROOT).notebooks():
        url = course_index.load(ROOT).binder_url(notebook)
        opened = repo / url.split("?urlpath=lab/tree/")[1]
        assert opened.exists(), url
        assert "BEGIN SOLUTION" not in opened.read_text(encoding="utf-8")
    assert (repo / "my-course" / ".minigrad" / "manifest.json").exists()


def test_binder_start_runs_the_lab_with_one_blas_thread_and_the_student_s_config():
    # binder/start wraps the command that starts the lab: what that command inherits
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    result = subprocess.run(["bash", str(ROOT / "binder" / "start"), "env"],
                            capture_output=True, text=True, env=env, check=True)
    seen = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    assert [seen.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                  "MKL_NUM_THREADS")] == ["1", "1", "1"]
    assert seen["JUPYTER_CONFIG_PATH"].split(":")[0] == str(ROOT / "student-lab")
