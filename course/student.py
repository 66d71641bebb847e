"""The self-paced student's commands: a workspace without the answers, and progress.

``workspace [DIR]`` makes (or completes) a folder (default ``my-course/`` at the
repository's root, git-ignored) holding the exercise version of every chapter, made by
the steps of nbgrader's own ``generate_assignment`` (the same stripping as the teacher's
``release``, run in this process), with the outputs of the cells that are not exercises
kept; its notebooks run in the course's kernel (a ``kernel.json`` with one BLAS thread),
are trusted (their saved pictures show) and are not paired with jupytext.
``DIR/.minigrad/`` holds ``manifest.json`` (each notebook, the source it was made from
and that source's hash) and ``exercise/``: the latest exercise version of each notebook,
which ``reset`` restores. ``status`` runs the checks of the student's own notebooks
(``nbgrader``'s validator, a fresh kernel each, with a time limit, one line per notebook
as it starts; the results are kept in ``checks.json`` and reused while a notebook is
unchanged), and does not count an exercise whose locked test cell was edited (nbgrader's
checksum) or whose reference is loaded (``use_reference``); a question answered in words
(graded by the teacher) counts as answered or not, with no verdict. ``next`` names the
first exercise or question still to do, running the checks only up to it; ``hint`` shows
the next step of an exercise's hints (``notebooks/hints/<chapter>.toml``, progress in
``hints.json``); ``solution`` prints a reference answer (or a question's model answer)
from the repository's chapter. No command overwrites a student's notebook without a
backup.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import authoring, sandbox, teacher
from .authoring import SOLUTION_MARKERS, apply_exercise_tags, exercise_role
from .teacher import CourseError

DEFAULT_WORKSPACE = teacher.REPOSITORY_NOTEBOOKS.parent / "my-course"
HIDDEN = ".minigrad"
MANIFEST = "manifest.json"
BACKUPS = "backups"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sources(notebooks: Path) -> dict[str, Path]:
    """``{stem: path}`` of the notebooks the workspace is made from."""
    return {p.stem: p for p in sorted(notebooks.glob("*.ipynb"))}


def _read_source(path: Path) -> dict:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    apply_exercise_tags(notebook)
    return notebook


def _solution_ids(notebook: dict) -> list[str]:
    return [meta["grade_id"] for cell in notebook["cells"]
            if (meta := exercise_role(cell)) and meta["solution"]]


def _write(path: Path, notebook: dict) -> None:
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")


# --- making the exercise version ------------------------------------------------------

# nbgrader's own steps of ``generate_assignment``, run here in this process (no course
# folder, no gradebook, no process per notebook: the workspace's 17 notebooks take seconds,
# not minutes), in nbgrader's order; the stub is the one ``teacher.CONFIG`` sets
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


def _strip_answers(notebook: dict) -> dict:
    """``notebook`` as nbgrader's ``generate_assignment`` releases it, outputs kept:
    answers replaced by the stub, hidden tests removed, cells locked, checksums set."""
    teacher._need_nbgrader()
    import nbformat
    from nbgrader.preprocessors import (CheckCellMetadata, ClearHiddenTests,
                                        ClearMarkScheme, ClearSolutions, ComputeChecksums,
                                        LockCells)
    from traitlets.config import Config

    config = Config()
    config.ClearSolutions.code_stub = {"python": STUB}
    config.ClearMarkScheme.enforce_metadata = False  # rubrics sit in question cells
    made, resources = nbformat.reads(json.dumps(notebook), nbformat.NO_CONVERT), {}
    for step in (LockCells, ClearSolutions, CheckCellMetadata, ComputeChecksums,
                 ClearHiddenTests, ClearMarkScheme, ComputeChecksums, CheckCellMetadata):
        made, resources = step(config=config).preprocess(made, resources)
    return json.loads(nbformat.writes(made))  # plain dicts, as nbgrader writes the file


def exercise_version(source: Path, target: Path) -> list[str]:
    """Write the exercise version of chapter ``source`` to ``target``: nbgrader's
    stripping (outputs kept, then cleared from the exercise cells only), each stub naming
    its exercise, and the workspace's notebook metadata. Returns the exercises' ids
    (none: the notebook is copied with only its metadata changed)."""
    notebook = _read_source(source)
    exercises = _solution_ids(notebook)
    made = _strip_answers(notebook) if exercises else \
        json.loads(source.read_text(encoding="utf-8"))
    for cell in made["cells"] if exercises else []:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and (meta.get("solution") or meta.get("grade")):
            cell["outputs"], cell["execution_count"] = [], None  # the answer's own output
        if cell["cell_type"] == "code" and meta.get("solution"):
            text = "".join(cell["source"]) if isinstance(cell["source"], list) \
                else cell["source"]
            cell["source"] = text.replace(
                "raise NotImplementedError()",
                f"raise NotImplementedError(\"exercise {meta['grade_id']}: write your "
                "code here\")")
    _write(target, for_the_workspace(made))
    return exercises


# --- the workspace's notebooks: their kernel, no text pairing, trusted -----------------

KERNEL_NAME = "minigrad"
# the kernels run as the pages were made (scripts/test.sh and execute_notebooks.py): one
# BLAS/OpenMP thread; with one per core, a chapter's training loop ran 30 times slower on
# a busy 2-core machine, and its printed numbers differed from the page's
ONE_THREAD = sandbox.ONE_THREAD  # (course/one_thread.env)


def kernel_spec() -> dict:
    """The course's kernel: this Python's ipykernel, with one BLAS thread."""
    return {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (minigrad)", "language": "python",
            "env": dict(ONE_THREAD), "metadata": {"debugger": True}}


def install_kernel(kernels: Path | None = None) -> Path:
    """Write the course's kernel spec to ``kernels/minigrad/`` (default: this Python
    environment's ``share/jupyter/kernels``, where its JupyterLab and nbgrader look first;
    the user's Jupyter folder if that one cannot be written). Returns its folder."""
    text = json.dumps(kernel_spec(), indent=1) + "\n"
    if kernels is None:
        from jupyter_core.paths import jupyter_data_dir

        places = [Path(sys.prefix) / "share" / "jupyter" / "kernels",
                  Path(jupyter_data_dir()) / "kernels"]
    else:
        places = [kernels]
    for place in places:
        folder = place / KERNEL_NAME
        try:
            if not (folder / "kernel.json").exists() or \
                    (folder / "kernel.json").read_text(encoding="utf-8") != text:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "kernel.json").write_text(text, encoding="utf-8")
            try:  # the launcher's Python logo
                from ipykernel.kernelspec import RESOURCES
                for logo in Path(RESOURCES).glob("logo-*"):
                    if not (folder / logo.name).exists():
                        shutil.copy2(logo, folder / logo.name)
            except ImportError:
                pass
            return folder
        except OSError as error:
            failure = error
    raise CourseError(f"could not write the course's kernel spec ({failure})")


def for_the_workspace(notebook: dict) -> dict:
    """A notebook as the workspace holds it: run by the course's kernel, and without
    jupytext's pairing (the lab would write a .py beside it at each save, and refuse the
    notebook once the .py is older, e.g. after ``reset``)."""
    notebook["metadata"].pop("jupytext", None)
    notebook["metadata"]["kernelspec"] = {"display_name": kernel_spec()["display_name"],
                                          "language": "python", "name": KERNEL_NAME}
    return notebook


def trust(path: Path) -> bool:
    """Sign ``path`` in the user's Jupyter notebook store, as ``jupyter trust`` does, so
    JupyterLab shows its saved pictures (SVG, HTML) before it runs. False if it could
    not (the notebook then opens untrusted: run it to see them)."""
    try:
        import nbformat
        from jupyter_core.paths import jupyter_data_dir

        _notary(jupyter_data_dir()).sign(nbformat.read(path, as_version=nbformat.NO_CONVERT))
        return True
    except Exception as error:  # an unwritable data folder, a broken file: say, go on
        print(f"note: could not mark {path.name} as trusted ({error}); its saved pictures "
              "show once its cells run", file=sys.stderr)
        return False


@functools.lru_cache
def _notary(data_dir: str) -> Any:
    """nbformat's notary for the Jupyter data folder ``data_dir`` (the lab's)."""
    from nbformat.sign import NotebookNotary

    Path(data_dir).mkdir(parents=True, exist_ok=True)  # (a fresh machine has none yet)
    return NotebookNotary(data_dir=data_dir)


def _unpair(folder: Path, stem: str) -> None:
    """Move away the ``.py`` that JupyterLab's jupytext wrote beside a chapter of a
    workspace made before the copies were unpaired: a running lab remembers the pair and
    refuses the chapter once the notebook is newer (after ``reset``)."""
    text = folder / f"{stem}.py"
    try:
        header = text.read_text(encoding="utf-8")[:1000]
    except (OSError, UnicodeDecodeError):
        return
    if "jupytext:" in header and "formats: ipynb," in header:
        backup = _backup(folder, text)
        text.unlink()
        print(f"{text.name}: the text copy that jupytext kept beside {stem}.ipynb was "
              f"moved to {backup} (the workspace's notebooks are no longer paired)")


def _place(path: Path, notebook: dict | Path) -> None:
    """Write a workspace notebook (a copy of a file, or a notebook) and trust it."""
    if isinstance(notebook, Path):
        shutil.copy2(notebook, path)
    else:
        _write(path, notebook)
    trust(path)


# --- the workspace --------------------------------------------------------------------


def find_workspace(start: Path | None = None) -> Path:
    """The workspace holding ``start`` (default: the current folder, where a notebook's
    kernel runs) or its ``my-course/`` subfolder, else the default ``my-course/`` at the
    repository's root."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents, start / DEFAULT_WORKSPACE.name):
        if (folder / HIDDEN / MANIFEST).exists():
            return folder
    return DEFAULT_WORKSPACE


def _folder(args: argparse.Namespace) -> Path:
    return Path(args.dir).resolve() if getattr(args, "dir", None) else find_workspace()


def _manifest(workspace: Path) -> dict:
    path = workspace / HIDDEN / MANIFEST
    if not path.exists():
        raise CourseError(
            f"no workspace in {workspace} (no {HIDDEN}/{MANIFEST}): make one with "
            "minigrad-course workspace, or pass the folder you made, e.g. "
            "minigrad-course status path/to/my-course")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise CourseError(f"{path} is not valid JSON ({error}): delete it and run "
                          f"minigrad-course workspace {workspace} again (your notebooks are "
                          "kept)") from None


def _save_manifest(workspace: Path, manifest: dict) -> None:
    path = workspace / HIDDEN / MANIFEST
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def workspace(args: argparse.Namespace) -> int:
    folder = _folder(args)
    notebooks = Path(args.notebooks).resolve() if args.notebooks \
        else teacher.REPOSITORY_NOTEBOOKS
    sources = _sources(notebooks)
    if not sources:
        raise CourseError(f"no notebooks in {notebooks}")
    (folder / HIDDEN / "exercise").mkdir(parents=True, exist_ok=True)
    path = folder / HIDDEN / MANIFEST
    manifest = _manifest(folder) if path.exists() else {"notebooks": {}}
    entries = manifest["notebooks"]
    for stem, source in sources.items():
        entry = entries.get(stem)
        mine = folder / source.name
        latest = folder / HIDDEN / "exercise" / source.name
        digest = _sha(source)
        if entry:  # where the chapter is now (hint and solution read it there)
            entry["source"] = str(source)
        if entry and entry["source_sha256"] == digest and mine.exists():
            print(f"{source.name}: up to date")
            continue
        if entry is None or entry.get("latest_sha256") != digest or not latest.exists():
            exercises = exercise_version(source, latest)
            entry = {**(entry or {}), "source": str(source), "latest_sha256": digest,
                     "exercises": exercises}
            entries[stem] = entry
        if not mine.exists():
            _place(mine, latest)
            entry["source_sha256"] = digest
            print(f"{source.name}: made ({len(entry['exercises'])} exercise(s))")
        else:
            print(f"{source.name}: changed upstream since your copy was made; your copy "
                  f"is untouched. The new exercise version is {latest}; to take it, run "
                  f"minigrad-course reset {stem} (your copy is backed up first)")
    if (notebooks / teacher.DATA_FOLDER).is_dir():
        shutil.copytree(notebooks / teacher.DATA_FOLDER, folder / teacher.DATA_FOLDER,
                        dirs_exist_ok=True)
    _save_manifest(folder, manifest)
    kernel = install_kernel()
    print(f"the notebooks run in the kernel \"{kernel_spec()['display_name']}\" ({kernel}: "
          "this Python, one BLAS thread, as the pages were made)")
    print(f"workspace: {folder}. Open it in JupyterLab; minigrad-course status {folder} "
          "shows your progress")
    return 0


def _chapter(manifest: dict, name: str) -> str:
    """The stem of the chapter ``name`` (a stem, a file name, or a number such as 1)."""
    stems = list(manifest["notebooks"])
    name = name.removesuffix(".ipynb")
    if name in stems:
        return name
    if name.isdigit():
        found = [s for s in stems if s.split("_")[0].isdigit()
                 and int(s.split("_")[0]) == int(name)]
        if len(found) == 1:
            return found[0]
    raise CourseError(f"no chapter {name!r}; there are: {', '.join(stems)} (a name or a "
                      "number, e.g. 1)")


def _exercise(exercises: list[str], chapter: str, name: str) -> str:
    if name not in exercises:
        raise CourseError(f"no exercise {name!r} in {chapter}; its exercises are: "
                          f"{', '.join(exercises) or 'none'}")
    return name


def _student_notebook(path: Path, stem: str) -> dict:
    if not path.exists():
        raise CourseError(f"{path} is missing: run minigrad-course workspace "
                          f"{path.parent} to make it again")
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(notebook.get("cells"), list):
            raise ValueError("no list of cells")
        return notebook
    except (ValueError, UnicodeDecodeError, AttributeError) as error:
        raise CourseError(
            f"{path} is not a readable notebook ({error}). It was left as it is: repair "
            f"it in a text editor, or run minigrad-course reset {stem} to get a fresh "
            f"exercise version (your file is kept as a backup in "
            f"{path.parent / HIDDEN / BACKUPS})") from None


# --- status ---------------------------------------------------------------------------


VALIDATE = """\
import json, sys
from traitlets.config import Config
import nbgrader.validator
from nbgrader.validator import Validator
from minigrad.course.authoring import last_exercise_cell
read = nbgrader.validator.read_nb
def read_up_to_the_last_check(*args, **kwargs):
    # the cells after the last answer and check cannot change the status: not run
    notebook = read(*args, **kwargs)
    last = last_exercise_cell(notebook.cells)
    if last >= 0:
        del notebook.cells[last + 1:]
    return notebook
nbgrader.validator.read_nb = read_up_to_the_last_check
config = Config()
config.Execute.timeout = int(sys.argv[1])
config.Execute.interrupt_on_timeout = True
config.Execute.kernel_name = sys.argv[2]
for path in sys.argv[3:]:
    print("minigrad-start " + json.dumps(path), flush=True)
    try:
        found = {"found": Validator(config=config, ignore_checksums=True).validate(path)}
    except Exception as error:  # this notebook could not run: say why, go on
        found = {"error": f"{type(error).__name__}: {error}"}
    print("minigrad-check " + json.dumps({"path": path, **found}), flush=True)
"""


def check_notebooks(paths: list[Path], timeout: int,
                    say: Callable[[str], Any] | None = None
                    ) -> Iterator[tuple[Path, set[str] | str]]:
    """Run the checks of ``paths``, in this order, each in a fresh kernel of the course's
    (one BLAS thread), up to the last check (the cells after it cannot change a status: a
    chapter's closing demonstrations are not rerun), and yield ``(path, failed)`` as soon
    as each is known: the sources of the cells that fail, or why it could not run. One
    process checks them all (importing nbgrader takes about 2 s, as long as running a
    chapter's checks);
    ``say`` is told when each notebook starts; closing the generator early (``next``
    found its exercise) stops the process and its kernel."""
    teacher._need_nbgrader()
    try:
        install_kernel()
        kernel = KERNEL_NAME
    except CourseError:  # no writable place for it: the default kernel, same threads
        kernel = "python3"
    pending = list(paths)
    limit = max(600, 20 * timeout) * len(paths)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errors:
        process = subprocess.Popen(
            [sys.executable, "-c", VALIDATE, str(timeout), kernel, *map(str, paths)],
            cwd=paths[0].parent, stdout=subprocess.PIPE, stderr=errors, text=True,
            env={**teacher._environment(), **ONE_THREAD}, start_new_session=True)
        timer = threading.Timer(limit, _stop, [process])
        timer.start()
        try:
            for line in process.stdout:
                kind, _, text = line.partition(" ")
                if kind == "minigrad-start" and say is not None:
                    index = [str(p) for p in paths].index(json.loads(text)) + 1
                    say(f"  checking {Path(json.loads(text)).name} ({index} of "
                        f"{len(paths)})...")
                elif kind == "minigrad-check":
                    entry = json.loads(text)
                    path = next(p for p in pending if str(p) == entry["path"])
                    pending.remove(path)
                    yield path, (f"could not run the checks of {path}:\n{entry['error']}"
                                 if "error" in entry else
                                 {cell["source"] for cell in entry["found"].get("failed", [])})
            process.wait()
        finally:
            timer.cancel()
            _stop(process)
        errors.seek(0)
        tail = "\n".join(errors.read().strip().splitlines()[-5:])
    for path in pending:  # the process ended, or was stopped, before their turn
        yield path, (f"could not run the checks of {path}:\n"
                     + (tail or f"checking took more than {limit} s"))


def _stop(process: subprocess.Popen) -> None:
    """End the checking process and the kernel it started (its own process group)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def progress(exercise_version: dict, notebook: dict, failed: set[str]) -> dict[str, bool]:
    """``{exercise: passed}``: an exercise passes when each of its test cells (those after
    its solution cell in the exercise version, found by grade_id in the student's
    notebook) is there and did not fail; a test cell left with only comments (its tests
    were hidden) does not count, and an exercise needs at least one that does."""
    owner = _owners(exercise_version)
    tests: dict[str, list[str]] = {e: [] for e in owner.values()}
    expected = {e: 0 for e in tests}
    for cell in exercise_version["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and _has_code(cell) and not authoring.is_written(cell):
            expected[owner[meta["grade_id"]]] += 1
    for cell in notebook["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        exercise = owner.get(meta.get("grade_id"))
        if meta.get("grade") and exercise and _has_code(cell):
            tests[exercise].append(_source_text(cell).strip())
    return {e: expected[e] > 0 and len(tests[e]) == expected[e]
            and not (set(tests[e]) & failed) for e in tests}


def answered(exercise_version: dict, notebook: dict) -> dict[str, bool]:
    """``{question: answered}`` for the questions graded by hand (no verdict: the
    teacher grades them): answered when the student's answer cell (found by grade_id) is
    there and holds text other than the stub it was handed out with."""
    mine = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c
            for c in notebook["cells"]}
    found = {}
    for question in authoring.written_questions(exercise_version):
        cell = mine.get(question)
        text = _source_text(cell).strip() if cell is not None else ""
        found[question] = bool(text) and text != authoring.ANSWER_STUB
    return found


def _source_text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _has_code(cell: dict) -> bool:
    return any(line.strip() and not line.strip().startswith("#")
               for line in _source_text(cell).splitlines())


@dataclass
class Chapter:
    """One chapter's progress: ``passed`` is ``{exercise: passed}`` for the exercises its
    checks grade (None when it could not be checked: ``problem`` says why), ``answered``
    ``{question: answered}`` for the questions the teacher grades by hand; ``notes`` name
    exercises not counted and why."""

    stem: str
    path: Path
    exercises: list[str]
    passed: dict[str, bool] | None = None
    problem: str | None = None
    notes: list[str] = field(default_factory=list)
    answered: dict[str, bool] = field(default_factory=dict)

    @property
    def todo(self) -> list[str]:
        """The exercises not passed yet and the questions not answered yet, in the
        notebook's order."""
        left = {e for e, ok in {**(self.passed or {}), **self.answered}.items() if not ok}
        return [e for e in self.exercises if e in left] + \
            [e for e in sorted(left) if e not in self.exercises]


def not_their_work(exercise_version: dict, notebook: dict) -> dict[str, str]:
    """``{exercise: why}`` for the answers that are not the student's work, by the rules
    grading scores 0 (``integrity.py``): the reference loaded (``use_reference``, however
    it is called), or the work handed to minigrad's own code or PyTorch. Their checks test
    someone else's code, so they do not count."""
    from . import integrity

    found: dict[str, str] = {}
    for flag in integrity.inspect(notebook["cells"], _owners(exercise_version),
                                  exercise_version["cells"]):
        if flag["zero"] and flag["exercise"]:
            found.setdefault(flag["exercise"], flag["note"])
    return found


def changed_test_cells(exercise_version: dict, notebook: dict) -> tuple[list[str], list[str]]:
    """``(edited, deleted)`` grade_ids of the locked and test cells: edited when the
    student's cell no longer has the checksum nbgrader gave it in the exercise version."""
    from nbformat import from_dict
    from nbgrader.utils import compute_checksum

    mine = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c
            for c in notebook["cells"]}
    edited, deleted = [], []
    for cell in exercise_version["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not (meta.get("grade") or meta.get("locked")) or meta.get("solution") \
                or "checksum" not in meta:
            continue
        theirs = mine.get(meta["grade_id"])
        if theirs is None:
            deleted.append(meta["grade_id"])
            continue
        copy = from_dict({**theirs, "source": _source_text(theirs),
                          "metadata": {**theirs.get("metadata", {}), "nbgrader": meta}})
        if compute_checksum(copy) != meta["checksum"]:
            edited.append(meta["grade_id"])
    return edited, deleted


def _owners(exercise_version: dict) -> dict[str, str]:
    """``{grade_id: exercise}`` for each solution cell and its test cells, by the rule
    the reports and the judge use (``authoring.exercises``)."""
    solutions = {meta["grade_id"] for _, meta in authoring.exercise_cells(exercise_version)
                 if meta.get("solution")}
    owner = {}
    for exercise, tests in authoring.exercises(exercise_version).items():
        if exercise in solutions:  # not a test cell that belongs to no solution cell
            owner[exercise] = exercise
            owner.update(dict.fromkeys(tests, exercise))
    return owner


CHECKS = "checks.json"


def check_chapters(folder: Path, timeout: int = teacher.DEFAULT_TIMEOUT,
                   recheck: bool = False, say: Callable[[str], Any] | None = None,
                   up_to_first_todo: bool = False) -> list[Chapter]:
    """Every chapter with exercises of the workspace, in course order, with its progress:
    the checks of the student's own notebook, run in a fresh kernel (or the last results
    from ``.minigrad/checks.json``, when neither the notebook nor its exercise version
    changed since). ``say``: told how many notebooks are run, and when each starts.
    ``up_to_first_todo``: stop at the first chapter with an exercise still to do (or a
    problem), without running the checks of the chapters after it; only the chapters up
    to it are returned."""
    manifest = _manifest(folder)
    cache_path = folder / HIDDEN / CHECKS
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    chapters, read, stale = [], {}, {}
    for stem, entry in manifest["notebooks"].items():
        if not entry["exercises"]:
            continue
        path = folder / f"{stem}.ipynb"
        chapter = Chapter(stem, path, list(entry["exercises"]))
        chapters.append(chapter)
        try:
            notebook = _student_notebook(path, stem)
            version_path = folder / HIDDEN / "exercise" / f"{stem}.ipynb"
            if not version_path.exists():
                raise CourseError(f"{version_path} is missing: run minigrad-course "
                                  f"workspace {folder} to make it again")
            version = json.loads(version_path.read_text(encoding="utf-8"))
        except CourseError as error:
            chapter.problem = str(error)
            continue
        key = {"notebook_sha256": _sha(path), "exercise_sha256": _sha(version_path),
               "timeout": timeout}
        read[stem] = (notebook, version, key)
        last = cache.get(stem)
        if recheck or not last or any(last.get(k) != v for k, v in key.items()):
            stale[stem] = path
    if stale and say is not None:
        say(f"running the checks of {len(stale)} notebook(s) changed since their last "
            "check, each in a fresh kernel (a few seconds each"
            + ("; in course order, up to the first exercise still to do" if up_to_first_todo
               else "") + "; unchanged notebooks are not run again next time):")
    results = check_notebooks(list(stale.values()), timeout, say) if stale else None
    try:
        for index, chapter in enumerate(chapters):
            if chapter.stem in read:
                notebook, version, key = read[chapter.stem]
                if chapter.stem in stale:
                    _, failed = next(results)  # they come in course order
                    if isinstance(failed, set):
                        cache[chapter.stem] = {**key, "failed": sorted(failed)}
                        cache_path.write_text(json.dumps(cache, indent=1) + "\n",
                                              encoding="utf-8")
                else:
                    failed = set(cache[chapter.stem]["failed"])
                if isinstance(failed, str):
                    chapter.problem = failed
                else:
                    _count(chapter, version, notebook, failed)
            if up_to_first_todo and (chapter.problem or chapter.todo):
                return chapters[:index + 1]
    finally:
        if results is not None:  # stops the checks not needed any more
            results.close()
    return chapters


def _count(chapter: Chapter, version: dict, notebook: dict, failed: set[str]) -> None:
    """Fill ``chapter.passed`` and its notes from the failing cells of its notebook."""
    path = chapter.path
    chapter.passed = progress(version, notebook, failed)
    chapter.answered = answered(version, notebook)
    owners = _owners(version)
    edited, deleted = changed_test_cells(version, notebook)
    for grade_id in edited + deleted:
        exercise = owners.get(grade_id)
        how = "was edited" if grade_id in edited else "was deleted"
        if exercise:
            chapter.passed[exercise] = False
        chapter.notes.append(
            f"{path.name}: the locked cell {grade_id} {how}"
            + (f", so exercise {exercise} is not counted" if exercise else "")
            + f". Restore it with minigrad-course reset {chapter.stem} {grade_id} (your "
            "notebook is backed up first; the other cells stay as they are)")
    for exercise, why in sorted(not_their_work(version, notebook).items()):
        if exercise in chapter.passed:
            chapter.passed[exercise] = False
            chapter.notes.append(f"{path.name}: exercise {exercise} is not counted: {why}")


def status_table(chapters: list[Chapter]) -> list[tuple[str, str, str]]:
    """``(chapter, "passed / total", what is left)`` rows, as ``status`` prints them."""
    rows = []
    for chapter in chapters:
        if chapter.passed is None:
            rows.append((chapter.stem, f"- / {len(chapter.exercises)}",
                         "cannot check: see below"))
            continue
        done = sum(chapter.passed.values())
        failing = [e for e in chapter.todo if e in chapter.passed]
        note = "done" if not failing else "to do: " + ", ".join(failing)
        if chapter.answered:
            unanswered = [q for q, ok in chapter.answered.items() if not ok]
            note += (f"; written: {sum(chapter.answered.values())} of "
                     f"{len(chapter.answered)} answered"
                     + (f" (to answer: {', '.join(unanswered)})" if unanswered else "")
                     + ", graded by your teacher")
        rows.append((chapter.stem, f"{done} / {len(chapter.passed)}", note))
    return rows


def status(args: argparse.Namespace) -> int:
    chapters = check_chapters(_folder(args), args.timeout, getattr(args, "recheck", False),
                              say=lambda message: print(message, file=sys.stderr,
                                                        flush=True))
    rows = status_table(chapters)
    width = max([len("chapter")] + [len(r[0]) for r in rows])
    print(f"{'chapter':<{width}}  passed")
    for stem, score, note in rows:
        done, total = score.split(" / ")
        print(f"{stem:<{width}}  {done:>2} / {total:<2}  {note}")
    for chapter in chapters:
        for note in chapter.notes:
            print(f"warning: {note}", file=sys.stderr)
    problems = [c.problem for c in chapters if c.problem]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


# --- next and hint --------------------------------------------------------------------


def _heading_before(notebook: dict, index: int) -> str:
    """The last markdown heading above cell ``index`` (what the student sees there)."""
    for cell in reversed(notebook["cells"][:index]):
        if cell["cell_type"] == "markdown":
            headings = [line.lstrip("#").strip() for line in _source_text(cell).splitlines()
                        if line.startswith("#")]
            if headings:
                return headings[-1]
    return ""


def next_exercise(args: argparse.Namespace) -> int:
    folder = _folder(args)
    chapters = check_chapters(folder, args.timeout, getattr(args, "recheck", False),
                              say=lambda message: print(message, file=sys.stderr,
                                                        flush=True),
                              up_to_first_todo=True)
    for chapter in chapters:
        if chapter.problem:
            print(f"next: repair {chapter.path.name} first\n{chapter.problem}",
                  file=sys.stderr)
            return 1
        if not chapter.todo:
            continue
        exercise = chapter.todo[0]
        notebook = _student_notebook(chapter.path, chapter.stem)
        found = [i for i, c in enumerate(notebook["cells"])
                 if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == exercise]
        where = (f"cell {found[0] + 1} of {len(notebook['cells'])}, under "
                 f"\"{_heading_before(notebook, found[0])}\"" if found
                 else f"its cell is missing: minigrad-course reset {chapter.stem} "
                 f"{exercise} restores it")
        done = len(chapter.passed) + len(chapter.answered) - len(chapter.todo)
        what = (f"question {exercise} (a written answer, graded by your teacher)"
                if exercise in chapter.answered else f"exercise {exercise}")
        print(f"next: {what} of {chapter.stem} "
              f"({done} of {len(chapter.passed) + len(chapter.answered)} done)")
        print(f"open  {chapter.path}")
        print(f"      {where}")
        for note in chapter.notes:
            print(f"note: {note}")
        print(f"stuck? minigrad-course hint {chapter.stem} {exercise}")
        return 0
    total = sum(len(c.passed or {}) for c in chapters)
    written = sum(len(c.answered) for c in chapters)
    print(f"all {total} exercises of the {len(chapters)} chapters with exercises pass"
          + (f", and your {written} written answer(s) are there for your teacher to grade"
             if written else "") + ": well done")
    return 0


HINTS = "hints"
HINTS_SEEN = "hints.json"


def read_hints(path: Path) -> dict[str, list[str]]:
    """``{exercise: [step, ...]}`` from a chapter's hint file (``notebooks/hints/``)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise CourseError("reading hints needs Python 3.11, or pip install tomli") \
                from None
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise CourseError(f"{path} is not valid TOML ({error})") from None
    hints = {}
    for exercise, entry in table.items():
        steps = entry.get("hints") if isinstance(entry, dict) else None
        if not (isinstance(steps, list) and steps
                and all(isinstance(s, str) and s.strip() for s in steps)):
            raise CourseError(f"{path}: [{exercise}] needs hints = [\"a nudge\", ...], a "
                              "list of non-empty strings")
        hints[exercise] = steps
    return hints


def hint(args: argparse.Namespace) -> int:
    folder = _folder(args)
    manifest = _manifest(folder)
    stem = _chapter(manifest, args.chapter)
    entry = manifest["notebooks"][stem]
    name = _exercise(entry["exercises"], stem, args.exercise)
    source = Path(entry.get("source", teacher.REPOSITORY_NOTEBOOKS / f"{stem}.ipynb"))
    if not source.parent.is_dir():  # the chapters were moved: the repository's, if there
        repository = teacher.REPOSITORY_NOTEBOOKS / HINTS / f"{stem}.toml"
        if not repository.exists():
            raise CourseError(
                f"the chapters this workspace was made from are no longer in "
                f"{source.parent} (moved?), and this installation's notebooks/hints/ has no "
                f"hints for {stem}: run minigrad-course workspace {folder} --notebooks "
                "NEW_FOLDER to point the workspace at them (your notebooks are kept)")
        source = repository.parent.parent / source.name
    path = source.parent / HINTS / f"{stem}.toml"
    number = stem.split("_")[0]
    answer = f"minigrad-course solution {number} {name}"
    if not path.exists():
        raise CourseError(f"no hints for {stem} yet ({path} does not exist); the "
                          f"reference answer: {answer}")
    steps = read_hints(path).get(name)
    if not steps:
        raise CourseError(f"{path} has no hints for exercise {name} yet; the reference "
                          f"answer: {answer}")
    seen_path = folder / HIDDEN / HINTS_SEEN
    try:
        seen = json.loads(seen_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seen = {}
    shown = seen.get(stem, {}).get(name, 0)
    if shown >= len(steps):
        print(f"You have seen all {len(steps)} hints for exercise {name} ({stem}):")
        for i, step in enumerate(steps, 1):
            print(textwrap.fill(f"{i}. {step}", width=88, subsequent_indent="   "))
        print(f"The reference answer, when you want it: {answer}")
        return 0
    step = steps[shown]
    seen.setdefault(stem, {})[name] = shown + 1
    seen_path.write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"hint {shown + 1} of {len(steps)} for exercise {name} ({stem}):")
    print(textwrap.fill(step, width=88, initial_indent="  ", subsequent_indent="  "))
    if shown + 1 < len(steps):
        print(f"(run minigrad-course hint {number} {name} again for the next step)")
    else:
        print(f"That was the last hint. The reference answer, when you want it: {answer}")
    return 0


# --- solution and reset ---------------------------------------------------------------


def chapter_sources(workspace: Path) -> dict[str, Path]:
    """``{stem: chapter with its answers}``: those the workspace was made from (when they
    are still there), else the repository's ``notebooks/``."""
    if (workspace / HIDDEN / MANIFEST).exists():
        entries = _manifest(workspace)["notebooks"]
        found = {stem: Path(e["source"]) for stem, e in entries.items() if "source" in e}
        if found and all(p.exists() for p in found.values()):
            return found
    return _sources(teacher.REPOSITORY_NOTEBOOKS)


def solution(args: argparse.Namespace) -> int:
    sources = _sources(Path(args.notebooks).resolve()) if args.notebooks \
        else chapter_sources(_folder(args))
    index = {"notebooks": {s: None for s in sources}}
    stem = _chapter(index, args.chapter)
    notebook = _read_source(sources[stem])
    name = _exercise(_solution_ids(notebook), stem, args.exercise)
    (cell,) = [c for c in notebook["cells"]
               if (m := exercise_role(c)) and m["solution"] and m["grade_id"] == name]
    text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    if authoring.is_written(cell):  # the model answer, as the teacher wrote it
        print(f"model answer to question {name} of {stem} (your teacher grades yours by "
              f"hand):\n{text.strip()}")
        return 0
    lines = [line for line in text.splitlines()
             if not any(marker in line for marker in SOLUTION_MARKERS)]
    print(f"# reference answer to exercise {name} of {stem}\n" + "\n".join(lines))
    return 0


def _backup(folder: Path, path: Path) -> Path:
    backups = folder / HIDDEN / BACKUPS
    backups.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = backups / f"{path.stem}.{stamp}{path.suffix}"
    number = 1
    while target.exists():
        number += 1
        target = backups / f"{path.stem}.{stamp}-{number}{path.suffix}"
    shutil.copy2(path, target)
    return target


def _grade_id(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _reset_cell(folder: Path, stem: str, entry: dict, mine: Path, fresh: dict,
                name: str) -> int:
    """Restore one cell of the exercise version: an exercise's solution cell (by its id)
    or one of its locked test cells (e.g. ``mysum-tests``), put back if deleted."""
    cells = {_grade_id(c): i for i, c in enumerate(fresh["cells"]) if _grade_id(c)}
    if name not in entry["exercises"] and name not in cells:
        _exercise(entry["exercises"], stem, name)  # raises, naming the exercises
    if name not in cells:
        raise CourseError(f"no cell {name!r} in the exercise version of {stem}")
    notebook = _student_notebook(mine, stem)
    found = [i for i, c in enumerate(notebook["cells"]) if _grade_id(c) == name]
    if len(found) > 1:
        raise CourseError(f"{mine} has {len(found)} cells {name} (copied?): delete the "
                          f"copies, or run minigrad-course reset {stem} to restore the "
                          "whole chapter (your copy is backed up first)")
    restored = fresh["cells"][cells[name]]
    if found:
        notebook["cells"][found[0]] = restored
    else:  # deleted: back after the nearest cell above it that is still there
        before = [_grade_id(c) for c in fresh["cells"][:cells[name]] if _grade_id(c)]
        mine_ids = [_grade_id(c) for c in notebook["cells"]]
        anchor = next((g for g in reversed(before) if g in mine_ids), None)
        if anchor is None:
            raise CourseError(f"the cell {name} is not in {mine} (deleted?), nor any cell "
                              f"above it: run minigrad-course reset {stem} to restore the "
                              "whole chapter (your copy is backed up first)")
        notebook["cells"].insert(mine_ids.index(anchor) + 1, restored)
    backup = _backup(folder, mine)
    _place(mine, for_the_workspace(notebook))
    _unpair(folder, stem)
    what = f"exercise {name}" if name in entry["exercises"] else f"the cell {name}"
    print(f"{mine.name}: {what} restored; your copy was backed up to {backup}")
    return 0


def reset(args: argparse.Namespace) -> int:
    folder = _folder(args)
    manifest = _manifest(folder)
    stem = _chapter(manifest, args.chapter)
    entry = manifest["notebooks"][stem]
    latest = folder / HIDDEN / "exercise" / f"{stem}.ipynb"
    mine = folder / f"{stem}.ipynb"
    if not latest.exists():
        raise CourseError(f"{latest} is missing: run minigrad-course workspace {folder}")
    fresh = json.loads(latest.read_text(encoding="utf-8"))
    if args.exercise is not None:
        return _reset_cell(folder, stem, entry, mine, fresh, args.exercise)
    if mine.exists():
        backup = _backup(folder, mine)
        print(f"your copy was backed up to {backup}")
    _place(mine, for_the_workspace(fresh))  # (a workspace made before kept the pairing)
    _unpair(folder, stem)
    entry["source_sha256"] = entry["latest_sha256"]
    _save_manifest(folder, manifest)
    print(f"{mine.name}: restored to the exercise version")
    return 0
