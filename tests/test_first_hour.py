"""A student's first hour, learning alone: the kernels the course starts run with one BLAS
thread (as the pages were made), the workspace is made in this process and opens trusted
and unpaired from jupytext, the commands that run checks say what they run and ``next``
stops at its exercise, chapter 00's open exercises get checks that say what to write, and
``init`` refuses to write a course into a student's workspace.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

from conftest import need
from notebook_json import read_notebook
from minigrad.course import authoring, cli, student, teacher

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
START = NOTEBOOKS / "00_start_here.ipynb"
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "OPENBLAS_CORETYPE")

# How many threads the BLAS that NumPy loaded runs (threadpoolctl when it is there, else
# OpenBLAS's own counter, as threadpoolctl reads it), and the thread variables.
BLAS_THREADS = """
import ctypes, json, os
import numpy
from minigrad.course.thread_settings import openblas_get

def blas_threads():
    try:
        import threadpoolctl
        return [i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"]
    except ImportError:
        return openblas_get("num_threads")

def blas_cores():  # the kernels each OpenBLAS loaded chose (its core name)
    return [name.decode() for name in openblas_get("corename", ctypes.c_char_p)]

print("threads " + json.dumps({"blas": blas_threads(), "cores": blas_cores(), "env": [
    os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")]}))
"""


def _need_nbgrader() -> None:
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        need("nbgrader", "pip install -e '.[grading]'")


def _without_thread_variables() -> dict:
    return {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}


def _threads_reported(text: str) -> dict:
    (line,) = [line for line in text.splitlines() if line.startswith("threads ")]
    return json.loads(line[len("threads "):])


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> pathlib.Path:
    """A Jupyter data folder of the test's own: where notebooks are signed (trusted)."""
    folder = tmp_path / "jupyter-data"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(folder))
    return folder


def _upstream(tmp_path: pathlib.Path, *names: str) -> pathlib.Path:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in names:
        shutil.copy2(NOTEBOOKS / name, folder / name)
    return folder


# --- the kernels the course starts --------------------------------------------------------


def test_the_workspace_notebooks_kernel_runs_one_blas_thread(tmp_path):
    """Started as JupyterLab starts it (opened from lab.sh, which ran workspace): the
    kernel named in the workspace notebook's metadata, found by jupyter_client's search,
    from a server whose environment does not limit the threads."""
    _need_nbgrader()
    try:
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager
    except ImportError:
        need("jupyter_client", "pip install -e '.[jupyter]'")
    made = tmp_path / "00_start_here.ipynb"
    student.exercise_version(START, made)
    name = read_notebook(made)["metadata"]["kernelspec"]["name"]
    student.install_kernel()  # what workspace does, into this environment
    spec = KernelSpecManager().get_kernel_spec(name)
    assert spec.argv[0] == sys.executable and spec.env == student.ONE_THREAD
    manager = KernelManager(kernel_name=name)
    manager.start_kernel(env=_without_thread_variables(), cwd=str(tmp_path))
    client = manager.client()
    printed = []
    try:
        client.start_channels()
        client.wait_for_ready(timeout=120)
        client.execute_interactive(BLAS_THREADS, timeout=120, output_hook=lambda message:
                                   printed.append(message["content"].get("text", "")))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    inside = _threads_reported("".join(printed))
    assert inside["env"] == ["1", "1", "1"]
    assert inside["blas"] and set(inside["blas"]) == {1}, inside
    # and the page's matrix-product kernels, whatever this CPU would pick (one_thread.env)
    if inside["cores"] and "avx2" in pathlib.Path("/proc/cpuinfo").read_text():
        wanted = student.ONE_THREAD["OPENBLAS_CORETYPE"].lower()
        assert {core.lower() for core in inside["cores"]} == {wanted}, inside
    # without the spec, this machine's BLAS would run more (what the test guards against)
    if (os.cpu_count() or 1) > 1:
        plain = subprocess.run([sys.executable, "-c", BLAS_THREADS], capture_output=True,
                               text=True, env=_without_thread_variables(), check=True)
        assert max(_threads_reported(plain.stdout)["blas"]) > 1


TINY_CHAPTER = {
    "cells": [
        {"cell_type": "code", "execution_count": None, "outputs": [], "id": "tiny-answer",
         "metadata": {"tags": ["solution:tiny"]},
         "source": "# BEGIN SOLUTION\nanswer = 1\n# END SOLUTION\n"},
        {"cell_type": "code", "execution_count": None, "outputs": [], "id": "tiny-check",
         "metadata": {"tags": ["tests:tiny:1"]},
         "source": BLAS_THREADS + "\nreported = {'blas': blas_threads(), 'env': [os.environ.get(v)"
                   " for v in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS')]}\n"
                   "assert reported['env'] == ['1', '1', '1'], reported\n"
                   "assert set(reported['blas']) <= {1}, reported\n"},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5}


def test_status_runs_the_checks_with_one_blas_thread(tmp_path, data_dir, monkeypatch, capsys):
    _need_nbgrader()
    for variable in THREAD_VARIABLES:  # a terminal that sets nothing
        monkeypatch.delenv(variable, raising=False)
    upstream = tmp_path / "notebooks"
    upstream.mkdir()
    (upstream / "01_tiny.ipynb").write_text(json.dumps(TINY_CHAPTER), encoding="utf-8")
    folder = tmp_path / "my-course"
    assert cli.main(["workspace", str(folder), "--notebooks", str(upstream)]) == 0
    capsys.readouterr()
    assert cli.main(["status", str(folder), "--timeout", "60"]) == 0
    captured = capsys.readouterr()
    assert "checking 01_tiny.ipynb (1 of 1)" in captured.err
    (line,) = [line for line in captured.out.splitlines() if line.startswith("01_tiny")]
    assert " 1 / 1" in line, captured.out + captured.err


def test_check_runs_the_notebook_with_one_blas_thread_and_says_so(tmp_path, monkeypatch,
                                                                  capsys):
    _need_nbgrader()
    for variable in THREAD_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    notebook = json.loads(json.dumps(TINY_CHAPTER))
    authoring.apply_exercise_tags(notebook)
    path = tmp_path / "01_tiny.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert cli.main(["check", str(path), "--timeout", "60"]) == 0, capsys.readouterr()
    captured = capsys.readouterr()
    assert "check: running 01_tiny.ipynb in a fresh kernel" in captured.err
    assert "Success!" in captured.out
    assert all(v not in os.environ for v in THREAD_VARIABLES)  # this process: as it was


# --- the workspace: made here, quickly; trusted; not paired -------------------------------


def test_the_stripping_is_nbgrader_s_generate_assignment(tmp_path):
    """The workspace strips the answers in this process with nbgrader's own steps: the
    cells come out as ``nbgrader generate_assignment`` (what release runs) makes them."""
    _need_nbgrader()
    notebook = student._read_source(START)
    course = tmp_path / "course"
    (course / "source" / START.stem).mkdir(parents=True)
    student._write(course / "source" / START.stem / START.name, notebook)
    (course / "nbgrader_config.py").write_text(teacher.CONFIG.format(
        course_id="minigrad", root=str(course), db_url=f"sqlite:///{course / 'gradebook.db'}",
        timeout=teacher.DEFAULT_TIMEOUT, preprocessors=teacher.FEEDBACK_PREPROCESSORS),
        encoding="utf-8")
    teacher.run_nbgrader(course, "generate_assignment", START.stem, "--force",
                      "--ClearOutput.enabled=False")
    released = read_notebook(course / "release" / START.stem / START.name)
    assert student._strip_answers(notebook)["cells"] == released["cells"]


def test_the_workspace_is_made_without_a_process_per_notebook(tmp_path, data_dir,
                                                              monkeypatch):
    _need_nbgrader()

    def no_process(*args, **kwargs):
        raise AssertionError("the workspace ran nbgrader in a process of its own")

    monkeypatch.setattr(teacher, "run_nbgrader", no_process)
    monkeypatch.setattr(subprocess, "run", no_process)
    upstream = _upstream(tmp_path, START.name, "01_autograd_from_scratch.ipynb",
                         "widgets_tour.ipynb")
    started = time.monotonic()
    assert cli.main(["workspace", str(tmp_path / "my-course"), "--notebooks",
                     str(upstream)]) == 0
    print(f"3 notebooks made in {time.monotonic() - started:.1f} s")


def test_the_workspace_notebooks_are_trusted_and_not_paired(tmp_path, data_dir):
    _need_nbgrader()
    import nbformat
    from nbformat.sign import NotebookNotary
    try:
        from jupytext import TextFileContentsManager
    except ImportError:
        need("jupytext", "pip install -e '.[jupyter]'")
    upstream = _upstream(tmp_path, START.name, "widgets_tour.ipynb")
    folder = tmp_path / "my-course"
    assert cli.main(["workspace", str(folder), "--notebooks", str(upstream)]) == 0
    notary = NotebookNotary(data_dir=str(data_dir))  # the lab's (JUPYTER_DATA_DIR)
    for name in (START.name, "widgets_tour.ipynb"):
        mine = nbformat.read(folder / name, as_version=4)
        assert notary.check_signature(mine), f"{name} is not trusted"
        upstream_metadata = read_notebook(upstream / name)["metadata"]
        assert "jupytext" not in mine.metadata and "jupytext" in upstream_metadata
        assert mine.metadata.kernelspec.name == student.KERNEL_NAME
    # saved as JupyterLab with jupytext saves it: no .py beside the chapter
    lab = TextFileContentsManager(root_dir=str(folder))
    lab.save(lab.get(START.name), START.name)
    assert sorted(p.name for p in folder.glob("00_start_here.*")) == [START.name]


def test_reset_never_leaves_a_chapter_that_the_lab_refuses(tmp_path, data_dir):
    _need_nbgrader()
    try:
        from jupytext import TextFileContentsManager
        from tornado.web import HTTPError
    except ImportError:
        need("jupytext", "pip install -e '.[jupyter]'")
    upstream = _upstream(tmp_path, START.name)
    folder = tmp_path / "my-course"
    assert cli.main(["workspace", str(folder), "--notebooks", str(upstream)]) == 0
    lab = TextFileContentsManager(root_dir=str(folder))
    path = folder / START.name

    def paired_by_an_older_workspace() -> None:
        """As a workspace made before this fix left it: the copy paired with a .py that
        the lab wrote at a save, a little older than the notebook."""
        (folder / "00_start_here.py").unlink(missing_ok=True)
        notebook = read_notebook(path)
        notebook["metadata"]["jupytext"] = \
            read_notebook(upstream / START.name)["metadata"]["jupytext"]
        path.write_text(json.dumps(notebook), encoding="utf-8")
        lab.save(lab.get(START.name), START.name)
        assert (folder / "00_start_here.py").exists()
        time.sleep(1.1)

    # what went wrong before: the notebook rewritten (as reset does) while still paired
    paired_by_an_older_workspace()
    notebook = read_notebook(path)
    notebook["cells"][0]["source"] = "# restored\n"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    with pytest.raises(HTTPError, match="is more recent than"):
        lab.get(START.name)
    # reset of the chapter, and of one exercise, run in the lab's terminal (the lab
    # still running, and remembering the pair): the lab opens the chapter
    for command in (["reset", "00"], ["reset", "00", "start_neuron_grad"]):
        paired_by_an_older_workspace()
        text = (folder / "00_start_here.py").read_text(encoding="utf-8")
        assert cli.main([*command, "--workspace", str(folder)]) == 0
        assert lab.get(START.name)["content"].cells
        assert "jupytext" not in read_notebook(path)["metadata"]
        lab.save(lab.get(START.name), START.name)  # and a save pairs nothing again
        assert not (folder / "00_start_here.py").exists()
        assert text in [b.read_text(encoding="utf-8")  # the text copy is kept, aside
                        for b in (folder / ".minigrad" / "backups").glob("*.py")]


# --- checks say what they do; next stops at its exercise ----------------------------------


def test_next_runs_the_checks_only_up_to_the_first_exercise_to_do(tmp_path, data_dir,
                                                                  capsys):
    _need_nbgrader()
    upstream = _upstream(tmp_path, START.name, "01_autograd_from_scratch.ipynb")
    folder = tmp_path / "my-course"
    assert cli.main(["workspace", str(folder), "--notebooks", str(upstream)]) == 0
    capsys.readouterr()
    assert cli.main(["next", str(folder), "--timeout", "60"]) == 0
    captured = capsys.readouterr()
    # four exercises and a written question
    assert "next: exercise start_neuron_grad of 00_start_here (0 of 5 done)" in captured.out
    assert "running the checks of 2 notebook(s)" in captured.err
    assert "checking 00_start_here.ipynb (1 of 2)" in captured.err
    assert "01_autograd" not in captured.err  # its checks were not run
    assert set(read_notebook(folder / ".minigrad" / "checks.json")) == {"00_start_here"}


# --- chapter 00 ---------------------------------------------------------------------------


def test_chapter_00_s_open_exercises_have_checks_that_say_what_to_write(tmp_path):
    """The workspace's chapter 00 run as a student's first Run All cell by cell, with
    exercise 3 done (so that exercise 4's own check is reached): each open exercise's
    check says that it is not done and what to write, never a bare NameError."""
    _need_nbgrader()
    try:
        import nbclient
        import nbformat
    except ImportError:
        need("nbclient", "pip install -e '.[test]'")
    made = tmp_path / START.name
    student.exercise_version(START, made)
    notebook = nbformat.read(made, as_version=4)
    answer = next(c for c in nbformat.read(START, as_version=4).cells
                  if "solution:start_train_step" in c.metadata.get("tags", []))
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "start_train_step":
            cell.source = answer.source
    nbclient.NotebookClient(notebook, kernel_name="python3", allow_errors=True, timeout=120,
                            resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    errors = {cell.metadata["nbgrader"]["grade_id"]: output
              for cell in notebook.cells if cell.metadata.get("nbgrader")
              and cell.cell_type == "code"  # (a written answer is markdown)
              for output in cell.outputs if output.output_type == "error"}
    assert set(errors) == {"start_neuron_grad", "start_neuron_grad-tests",
                           "start_grad_piles_up", "start_grad_piles_up-tests",
                           "start_train_epoch-tests"}, sorted(errors)
    for exercise, to_write in [("start_neuron_grad", "grad_w = ... and grad_b = ..."),
                               ("start_grad_piles_up", "predicted_grad = [..., ..., ...]"),
                               ("start_train_epoch", "Write the body of train_epoch")]:
        check = errors[f"{exercise}-tests"]
        assert check.ename == "AssertionError", (exercise, check.ename, check.evalue)
        assert f"exercise {exercise} is" in check.evalue and "not done yet" in check.evalue
        assert to_write in check.evalue


def test_chapter_00_says_how_run_all_behaves_and_where_the_commands_run():
    markdown = "\n".join("".join(c["source"]) for c in read_notebook(START)["cells"]
                         if c["cell_type"] == "markdown")
    assert "Run All" in markdown and "stops at exercise 1" in markdown
    assert "File → New → Terminal" in markdown and "on Binder" in markdown
    assert "from minigrad.course import status\nstatus()" in markdown


# --- init is not for a workspace ----------------------------------------------------------


def test_init_refuses_to_make_a_course_in_a_student_s_workspace(tmp_path, capsys):
    folder = tmp_path / "my-course"
    (folder / ".minigrad").mkdir(parents=True)
    (folder / ".minigrad" / "manifest.json").write_text('{"notebooks": {}}')
    for target in (folder, folder / "inside"):
        assert cli.main(["init", str(target), "--chapters", "0"]) == 2
        err = capsys.readouterr().err
        assert f"{folder} is a student's workspace" in err
        assert not (target / "nbgrader_config.py").exists() and not (target / "source").exists()


def test_every_process_the_course_starts_reads_one_list_of_thread_settings():
    """course/one_thread.env is the one place that says "one BLAS thread": the grading
    sandbox, the course's kernel spec, the tests (conftest.py, scripts/test.sh), the lab
    (scripts/lab.sh, binder/start), the chapters' execution and the benchmarks read it;
    no other file spells the settings out (six copies had drifted to two lists)."""
    from minigrad.course import sandbox, thread_settings

    settings = thread_settings.read_env_file(ROOT / "course" / "one_thread.env")
    assert settings["OPENBLAS_NUM_THREADS"] == "1" and len(settings) >= 3
    assert sandbox.ONE_THREAD == settings == student.ONE_THREAD
    assert all(os.environ.get(name) == value for name, value in settings.items())
    readers = ["conftest.py", "scripts/test.sh", "scripts/lab.sh", "binder/start",
               "scripts/execute_notebooks.py", "bench/__init__.py", "course/sandbox.py"]
    for reader in readers:
        text = (ROOT / reader).read_text(encoding="utf-8")
        assert "one_thread.env" in text, reader
        # ... each keeping the BLAS kernels only where the CPU has them
        assert "OPENBLAS_CORETYPE" in text or "read_env_file" in text, reader
    spelled = [str(path.relative_to(ROOT)) for folder in ("scripts", "course", "bench",
                                                          "binder", "minigrad")
               for path in (ROOT / folder).rglob("*") if path.is_file()
               and path.suffix in (".py", ".sh", "") and path.name != "one_thread.env"
               and "OPENBLAS_NUM_THREADS=1" in path.read_text(encoding="utf-8",
                                                              errors="replace")
               .replace('": "', "=").replace('"', "")]
    assert spelled == []


def test_the_blas_kernels_are_pinned_only_where_the_cpu_can_run_them(monkeypatch, tmp_path):
    """one_thread.env's OPENBLAS_CORETYPE names AVX2 kernels: forced on a CPU without AVX2,
    OpenBLAS would stop the process at its first matrix product, so readers drop it."""
    from minigrad.course import thread_settings

    assert thread_settings.has_avx2("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n")
    assert not thread_settings.has_avx2("flags\t\t: fpu sse2 avx fma avx2x\n")
    assert not thread_settings.has_avx2("")
    monkeypatch.setattr(thread_settings, "has_avx2", lambda cpuinfo=None: True)
    assert thread_settings.read_env_file()["OPENBLAS_CORETYPE"] == "Haswell"
    monkeypatch.setattr(thread_settings, "has_avx2", lambda cpuinfo=None: False)
    settings = thread_settings.read_env_file()
    assert "OPENBLAS_CORETYPE" not in settings and settings["OPENBLAS_NUM_THREADS"] == "1"
    # the shell readers: the same, with grep (their line, run on a CPU with and without)
    for reader in ("scripts/test.sh", "scripts/lab.sh", "binder/start"):
        (line,) = [line for line in (ROOT / reader).read_text(encoding="utf-8").splitlines()
                   if "unset OPENBLAS_CORETYPE" in line]
        for flags, expected in (("fpu avx avx2 fma", "Haswell"), ("fpu avx fma", "none")):
            cpuinfo = tmp_path / "cpuinfo"
            cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n", encoding="utf-8")
            script = ("set -a; . course/one_thread.env; set +a\n"
                      + line.replace("/proc/cpuinfo", str(cpuinfo))
                      + '\necho "core=${OPENBLAS_CORETYPE:-none}"')
            shown = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True,
                                   text=True, check=True).stdout
            assert shown.strip() == f"core={expected}", (reader, flags, shown)
