"""Grades a teacher can trust: a class whose notebooks try to cheat or to harm others,
graded once with real nbgrader through ``minigrad-course grade`` (each submission in its
bubblewrap sandbox, the checks in the judge).

Chapter 1 (five exercises, MyMul first). Every attacker leaves MyMul undone (its stub
raises) and tries to get its points anyway, or to change what the teacher sees; the
honest and blank notebooks beside them must keep their grades.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import json
import pathlib
import shutil

import pytest

from conftest import STRICT
from notebook_json import read_notebook

if not STRICT:
    pytest.importorskip("nbgrader", reason="pip install -e '.[grading]'")

from minigrad.course import authoring, cli, sandbox  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "01_autograd_from_scratch.ipynb"
STEM = CHAPTER.stem
TIMEOUT = 20
STUB = "raise NotImplementedError()  # MyMul is not done\n"
UNDONE_MYMUL = '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()
'''


def _solution(notebook: dict, grade_id: str) -> dict:
    (cell,) = [c for c in notebook["cells"]
               if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
    return cell


def _with(notebook: dict, grade_id: str, source: str) -> dict:
    notebook = copy.deepcopy(notebook)
    _solution(notebook, grade_id)["source"] = source.lstrip("\n")
    return notebook


def _first_code_cell(notebook: dict) -> dict:
    return next(c for c in notebook["cells"] if c["cell_type"] == "code")


def _attacks(solved: dict, course: pathlib.Path) -> dict[str, dict]:
    """``{student: notebook}``: MyMul undone, plus one attack each."""
    undone = _with(solved, "mymul", UNDONE_MYMUL)
    gradebook, canary = course / "gradebook.db", course / "canary.txt"
    source = course / "source" / STEM / CHAPTER.name
    attacks = {
        # rebinding the checkers in an answer cell
        "rebind": UNDONE_MYMUL + "\ncheck_function = check_needs_input_grad = "
                                 "lambda *args, **kwargs: print('Success!')\n",
        # patching the package the checkers come from, and the engine
        "patch-modules": UNDONE_MYMUL + '''
import sys
import minigrad.exercises as exercises
for module in list(sys.modules.values()):
    if getattr(module, "__name__", "").startswith("minigrad.exercises"):
        for name in dir(module):
            if name.startswith("check_"):
                setattr(module, name, lambda *args, **kwargs: None)
mg.gradcheck = lambda *args, **kwargs: True
''',
        # swallowing every error of the cells that follow
        "swallow-errors": UNDONE_MYMUL + '''
get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)
''',
        # minigrad's own Mul, as the answer
        "subclass": '''
from minigrad.ops.elementwise import Mul


class MyMul(Mul):
    pass
''',
        # the engine computes the gradient inside the Function
        "delegate": '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        a = mg.tensor(x, requires_grad=True)
        b = mg.tensor(y, requires_grad=True)
        ga, gb = mg.autograd.grad((a * b * mg.tensor(grad_output)).sum(), [a, b])
        return ga.numpy(), gb.numpy()
''',
        "use-reference": 'from minigrad.course import use_reference\n'
                         'use_reference("mymul")\n',
        # the teacher's copy, with the answers
        "read-source": f'''
import json
notebook = json.load(open({str(source)!r}))
for cell in notebook["cells"]:
    if "mymul" in str(cell["metadata"]):
        exec("".join(cell["source"]))
''',
        # full marks for oneself, zero for everyone else, a file of the teacher's changed
        "gradebook": UNDONE_MYMUL + f'''
import sqlite3
try:
    db = sqlite3.connect({str(gradebook)!r})
    db.execute("update grade set auto_score = 0")
    db.execute("update grade set manual_score = 100")
    db.commit()
except Exception as error:
    print("no gradebook:", error)
try:
    open({str(canary)!r}, "w").write("changed by a student")
except OSError as error:
    print("no canary:", error)
''',
        # leaving before the checks run
        "exit": UNDONE_MYMUL + "\nimport os\nos._exit(0)\n",
    }
    class_ = {"honest": solved, "blank": None}
    for name, source_text in attacks.items():
        class_[name] = _with(undone, "mymul", source_text)
    # the same, in the (unlocked) set-up cell instead of an answer cell
    setup = copy.deepcopy(undone)
    _first_code_cell(setup)["source"] += (
        "\ncheck_function = check_needs_input_grad = lambda *args, **kwargs: None\n")
    class_["rebind-setup"] = setup
    return class_


def _scores(course: pathlib.Path) -> dict[str, dict[str, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {}
        for student in gradebook.students:
            try:
                notebook = gradebook.find_submission_notebook(STEM, STEM, student.id)
            except Exception:  # noqa: BLE001 - not returned
                continue
            scores[student.id] = {g.name: g.score for g in notebook.grades}
        return scores


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if sandbox.check():
        if STRICT:
            pytest.fail(f"no sandbox: {sandbox.check()}")
        pytest.skip(f"no sandbox: {sandbox.check()}")
    root = tmp_path_factory.mktemp("integrity")
    course = root / "course"
    assert cli.main(["init", str(course), "--chapters", "1", "--timeout", str(TIMEOUT)]) == 0
    assert cli.main(["release", "--course", str(course)]) == 0
    canary = course / "canary.txt"
    canary.write_text("the teacher's", encoding="utf-8")
    solved = read_notebook(course / "source" / STEM / CHAPTER.name)
    for cell in solved["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    returned = root / "returned"
    class_ = _attacks(solved, course)
    class_["blank"] = read_notebook(course / "release" / STEM / CHAPTER.name)
    for student, notebook in class_.items():
        (returned / student).mkdir(parents=True)
        (returned / student / CHAPTER.name).write_text(json.dumps(notebook), encoding="utf-8")
    assert cli.main(["collect", str(returned), "--course", str(course)]) == 0
    source_digest = hashlib.sha256((course / "source" / STEM / CHAPTER.name)
                                   .read_bytes()).hexdigest()
    assert cli.main(["grade", "--course", str(course)]) == 0
    assert cli.main(["export", str(root / "grades.csv"), "--course", str(course)]) == 0
    with open(root / "grades.csv", newline="", encoding="utf-8") as file:
        rows = {r["student"]: r for r in csv.DictReader(file)}
    return {"course": course, "rows": rows, "scores": _scores(course),
            "flags": json.loads((course / "flags.json").read_text(encoding="utf-8")),
            "source_digest": source_digest, "class": class_}


POINTS = authoring.graded_cells(read_notebook(CHAPTER))
FULL = sum(POINTS.values())
OTHERS = FULL - POINTS["mymul-tests"]


def test_honest_work_keeps_full_marks_and_blank_work_scores_zero(graded):
    assert float(graded["rows"]["honest"]["score"]) == FULL
    assert float(graded["rows"]["blank"]["score"]) == 0
    assert "honest" not in graded["flags"]


@pytest.mark.parametrize("student", ["rebind", "rebind-setup", "patch-modules",
                                     "swallow-errors", "read-source", "gradebook"])
def test_an_attack_on_the_checks_or_the_course_gets_no_points_for_undone_work(graded,
                                                                            student):
    assert graded["scores"][student]["mymul-tests"] == 0
    # the other exercises were done: their points stay
    assert float(graded["rows"][student]["score"]) == OTHERS


@pytest.mark.parametrize("student, flag", [("subclass", "delegated"),
                                           ("delegate", "delegated"),
                                           ("use-reference", "reference-used")])
def test_an_answer_that_is_not_the_student_s_work_scores_zero_with_a_flag(graded, student,
                                                                          flag):
    assert graded["scores"][student]["mymul-tests"] == 0
    flags = graded["flags"][student][STEM]
    assert any(f["flag"] == flag and f["exercise"] == "mymul" for f in flags), flags


@pytest.mark.parametrize("student", ["rebind", "rebind-setup", "patch-modules"])
def test_tampering_is_flagged_for_the_teacher(graded, student):
    assert any(f["flag"] == "tampering" for f in graded["flags"][student][STEM])


def test_a_notebook_that_exits_early_loses_what_comes_after_only(graded):
    scores = graded["scores"]["exit"]
    assert scores["mymul-tests"] == 0
    assert sum(scores.values()) < OTHERS


def test_no_student_can_change_the_gradebook_the_teacher_s_files_or_a_classmate(graded):
    course = graded["course"]
    assert (course / "canary.txt").read_text(encoding="utf-8") == "the teacher's"
    assert hashlib.sha256((course / "source" / STEM / CHAPTER.name).read_bytes()) \
        .hexdigest() == graded["source_digest"]
    # the gradebook attacker's own score is what the checks gave, and the class's too
    assert float(graded["rows"]["gradebook"]["score"]) == OTHERS
    assert float(graded["rows"]["honest"]["score"]) == FULL


def test_a_regrade_reruns_only_what_changed(graded, capsys):
    course = graded["course"]
    capsys.readouterr()
    assert cli.main(["grade", "--course", str(course), "--student", "honest"]) == 0
    out = capsys.readouterr().out
    assert "judging" not in out  # nothing changed: the kept result is used
    submitted = course / "submitted" / "blank" / STEM / CHAPTER.name
    notebook = read_notebook(submitted)
    honest = graded["class"]["honest"]
    _solution(notebook, "mysin")["source"] = _solution(honest, "mysin")["source"]
    submitted.write_text(json.dumps(notebook), encoding="utf-8")
    assert cli.main(["grade", "--course", str(course)]) == 0
    out = capsys.readouterr().out
    assert "judging 1 notebook(s)" in out
    assert _scores(course)["blank"]["mysin-tests"] == POINTS["mysin-tests"]


def test_without_a_sandbox_grade_refuses_unless_asked(graded, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    monkeypatch.setattr(sandbox, "_checked", {})
    assert cli.main(["grade", "--course", str(graded["course"])]) == 2
    err = capsys.readouterr().err
    assert "bubblewrap" in err and "--unsandboxed" in err


def test_the_sandbox_hides_the_course_and_the_network(tmp_path):
    import subprocess
    import sys

    if sandbox.check():
        pytest.skip(sandbox.check())
    secret = tmp_path / "secret.txt"
    secret.write_text("answers")
    probe = ("import os, socket, pathlib\n"
             f"print(pathlib.Path({str(secret)!r}).exists())\n"
             "print(os.getuid())\n"
             "try:\n    socket.create_connection(('127.0.0.1', 22), timeout=2); print('net')\n"
             "except OSError:\n    print('no net')\n")
    work = tmp_path / "work"
    work.mkdir()
    result = subprocess.run(sandbox.command([sys.executable, "-c", probe], work,
                                            hide=[tmp_path]),
                            capture_output=True, text=True, timeout=60)
    assert result.stdout.split("\n")[:3] == ["False", "65534", "no net"], result.stderr
    shutil.rmtree(work)


def test_use_reference_under_another_name_is_found_too():
    from minigrad.course import integrity

    def answer(grade_id, source):
        return {"cell_type": "code", "source": source,
                "metadata": {"tags": [f"solution:{grade_id}"]}}

    cells = [{"cell_type": "code", "metadata": {}, "source":
              "from minigrad.course import use_reference as load\nget = load\n"},
             answer("mymul", "load('mymul')\n"),
             answer("myexp", "get(name)  # a name held in a variable\n"),
             answer("mysin", "class MySin(mg.Function):\n    pass\n")]
    zeroed = {f["exercise"]: f["note"] for f in integrity.inspect(
        cells, {"mymul": "mymul", "myexp": "myexp", "mysin": "mysin"}, []) if f["zero"]}
    assert sorted(zeroed) == ["myexp", "mymul"]
    assert "use_reference(mymul) loads the reference answer to mymul" in zeroed["mymul"]
