"""Checks that hand the student's code objects of their own (a model and its optimizer,
parameters, a graph, a file to write) run in the judge, with those objects copied to the
student's process by pickle (one way only) and what the code did to them sent back as
data (course/mirror.py). An answer cell that rebinds or patches these checkers changes
nothing; the student's copies and the judge's objects stay in step.
"""

from __future__ import annotations

import copy
import json
import os
import pathlib

import numpy as np
import pytest

import minigrad as mg
from minigrad.course import judge, mirror, sandbox, wire

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _round_trip(value):
    """``value`` pickled by the judge's side and unpickled by the student's (in this
    process): (judge's mirrors, student's mirrors, the student's copy)."""
    mine, theirs = mirror.Mirrors(first_new=1), mirror.Mirrors(first_new=-1)
    payload = mirror.pickled(value, mine, 10**9, lambda obj: None)
    copy_ = mirror.unpickled(json.loads(json.dumps(payload)), theirs, None)
    return mine, theirs, copy_


def _cross(changes: dict) -> dict:
    return json.loads(json.dumps(changes))  # what the pipe carries: JSON


def test_a_model_and_its_optimizer_stay_in_step_with_the_student_s_copies():
    mg.manual_seed(0)
    model = mg.nn.Sequential(mg.nn.Linear(3, 4), mg.nn.Tanh(), mg.nn.Linear(4, 2))
    optimizer = mg.optim.Adam(model.parameters(), lr=0.1)
    mine, theirs, (copy_model, copy_optimizer) = _round_trip((model, optimizer))
    assert copy_optimizer.param_groups[0]["params"][0] is next(copy_model.parameters())

    # the student's code trains its copy one step and switches it to eval mode
    x, y = mg.randn(5, 3), mg.randn(5, 2)
    copy_optimizer.zero_grad()
    ((copy_model(x) - y) ** 2).mean().backward()
    copy_optimizer.step()
    copy_model.eval()
    mine.apply(_cross(theirs.changes()))

    for judged, student in zip(model.parameters(), copy_model.parameters()):
        np.testing.assert_array_equal(judged.detach().numpy(), student.detach().numpy())
        np.testing.assert_array_equal(judged.grad.numpy(), student.grad.numpy())
    assert model.training is False and model[0].training is False
    # Adam's state (made by the student's step) reached the judge's optimizer, keyed by
    # the judge's own parameters
    first = next(model.parameters())
    assert optimizer.state[first]["step"] == copy_optimizer.state[
        next(copy_model.parameters())]["step"]
    mean, copied = (o.state[p]["exp_avg"] for o, p in (
        (optimizer, first), (copy_optimizer, next(copy_model.parameters()))))
    assert mean is not copied and np.asarray(mean).any()
    np.testing.assert_array_equal(np.asarray(mean), np.asarray(copied))

    # and what the check changes afterwards reaches the student's copy
    with mg.no_grad():
        first.mul_(0.0)
    model.train()
    theirs.apply(_cross(mine.changes()))
    assert not next(copy_model.parameters()).detach().numpy().any()
    assert copy_model.training is True


def test_an_array_given_twice_is_one_array_there_and_aliasing_comes_back():
    """A leaf's .grad that keeps the very array it was given (the classic
    accumulate_grad mistake) shares memory with it in the judge too."""
    g = np.ones(3)
    leaf = mg.tensor(np.zeros(3), requires_grad=True)
    mine, theirs, (copy_leaf, copy_g, copy_g_again) = _round_trip((leaf, g, g))
    assert copy_g is copy_g_again
    copy_leaf.grad = mg.Tensor._make(copy_g)  # keeps the array itself
    copy_g[0] = 5.0  # and a later in-place edit shows through
    mine.apply(_cross(theirs.changes()))
    assert leaf.grad is not None and np.shares_memory(leaf.grad.numpy(), g)
    assert g[0] == 5.0


def test_a_graph_keeps_its_identity_across_the_boundary():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    loss = (x.tanh() * x).sum()
    mine, theirs, copy_node = _round_trip(loss.grad_fn)
    order = [copy_node, *[parent for parent, _ in copy_node.next_functions if parent]]
    sent = wire.encode(order, mirror_of=theirs.number_of)
    back = wire.decode(json.loads(json.dumps(sent)),
                       lambda handle: mine.resolve(handle.id))
    assert back[0] is loss.grad_fn
    assert back[1:] == [p for p, _ in loss.grad_fn.next_functions if p]


def test_nothing_the_student_s_side_sends_is_unpickled_or_code():
    t = mg.tensor([1.0])
    mine, _, _ = _round_trip(t)
    number = mine.number_of(t)
    for bad in ([["array", mine.number_of(t._data), {"t": "pickle", "b64": "gAQ="}]],
                [["tensor", number, {"data": {"a": 7, "v": {
                    "t": "array", "dtype": "object", "shape": [1], "b64": ""}}}]],
                [["contents", 999, {"l": []}]],
                [["exec", number, {}]]):
        with pytest.raises(wire.WireError):
            mine.apply({"entries": bad})
    np.testing.assert_array_equal(t.numpy(), [1.0])


def test_a_link_the_student_s_code_makes_in_the_shared_folder_is_removed(tmp_path):
    secret = tmp_path / "source.ipynb"
    secret.write_text("the answers")
    shared = tmp_path / "check-files"
    (shared / "inner").mkdir(parents=True)
    (shared / "checkpoint.pt").symlink_to(secret)
    (shared / "inner" / "hard.pt").write_bytes(b"x")
    os.link(shared / "inner" / "hard.pt", shared / "inner" / "second.pt")
    (shared / "plain.pt").write_bytes(b"weights")
    judge._only_plain_files(shared)
    left = {p.name: p for p in shared.rglob("*")}
    assert "checkpoint.pt" not in left and "plain.pt" in left
    # of the two names of one file, one goes (a name left alone is a plain file again)
    assert len({"hard.pt", "second.pt"} & set(left)) == 1
    assert all(p.is_dir() or (not p.is_symlink() and p.stat().st_nlink == 1)
               for p in left.values())
    assert secret.read_text() == "the answers"


# --- attacks on the checks that hand objects over, judged for real ---------------------------


def _submission(stem: str, answers: dict[str, str]) -> tuple[dict, dict]:
    source = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    submission = copy.deepcopy(source)
    for cell in submission["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell["source"] = answers[grade_id]
    return submission, source


def _failing_tests(stem: str, answers: dict[str, str]) -> dict[str, str]:
    submission, source = _submission(stem, answers)
    result = judge.judge(submission, source, ROOT / "notebooks", timeout=60,
                         sandboxed=sandbox.check() is None)
    failing = {}
    for cell in result["notebook"]["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        errors = [o for o in cell.get("outputs", []) if o["output_type"] == "error"]
        if grade_id.endswith("-tests") and errors:
            failing[grade_id] = errors[0]["evalue"]
    return failing


def test_rebinding_or_patching_the_optimizer_checks_gives_no_points():
    """Chapter 9: clipping undone, MySGD wrong; each answer cell also switches its check
    off, in the notebook and in minigrad.exercises."""
    failing = _failing_tests("09_optimizers_and_training", {
        "my_sgd_momentum": (
            "import sys\n"
            "class MySGD(mg.optim.Optimizer):\n"
            "    def __init__(self, params, lr=0.01, momentum=0.0, weight_decay=0.0):\n"
            "        super().__init__(params, {'lr': lr, 'momentum': momentum,\n"
            "                                  'weight_decay': weight_decay})\n"
            "    def update_param(self, param, grad, state, group):\n"
            "        param -= group['lr'] * grad\n"
            "check_optimizer_step = lambda *a, **k: print('MySGD: right')\n"
            "sys.modules['minigrad.exercises.checks'].check_optimizer_step = "
            "check_optimizer_step\n"),
        "my_clip_grad_norm": (
            "import minigrad.exercises.optimizers as optimizers\n"
            "def my_clip_grad_norm_(parameters, max_norm):\n"
            "    return 0.0\n"
            "optimizers.check_clip_grad_norm = check_clip_grad_norm = lambda *a, **k: None\n"),
    })
    assert {"my_sgd_momentum-tests", "my_clip_grad_norm-tests"} <= set(failing)
    assert "my_adam-tests" not in failing  # the untouched answers keep their points


def test_patching_the_graph_checks_gives_no_points():
    """Chapter 4: a topological order that returns nothing and an accumulate_grad that
    keeps the array it is given, with the checks' helpers patched to say nothing."""
    failing = _failing_tests("04_backward_engine", {
        "topological-order": (
            "import minigrad.exercises.backward_engine as engine\n"
            "engine.order_mistake = lambda *a, **k: None\n"
            "engine.check_topological_order = lambda *a, **k: None\n"
            "def topological_order(root):\n"
            "    return []\n"),
        "accumulate-grad": (
            "def accumulate_grad(leaf, grad):\n"
            "    if leaf.grad is None:\n"
            "        leaf.grad = mg.Tensor._make(grad)\n"
            "    else:\n"
            "        leaf.grad = mg.Tensor._make(leaf.grad.numpy() + grad)\n"),
    })
    assert {"topological-order-tests", "accumulate-grad-tests"} <= set(failing)
    assert "same array" in failing["accumulate-grad-tests"] \
        or "very array" in failing["accumulate-grad-tests"]
    assert "backward-loop-tests" not in failing  # judged on its own, on the references


KEEPS_THE_GRAPH = (
    "import sys\n"
    "class MyCheckpoint(mg.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, x, fn):\n"
    "        with mg.enable_grad():\n"
    "            ctx.out = fn(x.detach().requires_grad_())\n"
    "        ctx.x = x\n"
    "        return ctx.out.detach()\n"
    "    @staticmethod\n"
    "    def backward(ctx, grad_output):\n"
    "        ctx.out.backward(grad_output)\n"
    "        return ctx.out.grad, None\n"
    "check_checkpoint = lambda *a, **k: print('MyCheckpoint: right')\n"
    "sys.modules['minigrad.exercises.modes'].check_checkpoint = check_checkpoint\n")


@pytest.mark.parametrize("lie", ["", "mg.is_grad_enabled = lambda: False\n"],
                         ids=["checks-rebound", "recording-reported-off"])
def test_a_checkpoint_that_keeps_the_graph_gets_no_points_whatever_it_patches(lie):
    """Chapter 14: a checkpoint that runs fn with recording on in forward (it keeps every
    activation), from an answer cell that also switches the check off, and in the second
    case makes the student's process report recording as off. The check runs in the
    judge and sees each call of its block there (the block is lent to the student's
    code, which calls it back): rebinding changes nothing, and a block called "with
    recording off" records no graph, so backward has nothing to go through. The
    judge's own grad mode stays on, whatever the student's side reports."""
    failing = _failing_tests("14_execution_modes", {"my_checkpoint": KEEPS_THE_GRAPH + lie})
    said = " ".join(failing.get("my_checkpoint-tests", "").split())
    assert ("recording on" in said) if not lie else ("does not require grad" in said)
    assert "evaluate-tests" not in failing  # the untouched answers keep their points
    assert mg.is_grad_enabled()


def test_a_test_cell_s_visible_data_reaches_later_cells_and_its_hidden_data_does_not():
    class Student:
        asked: list = []

        def send(self, value):
            return wire.encode(value)

        def ask(self, op, **args):
            self.asked.append((op, args))
            return {}

    student = Student()
    namespace = judge.JudgeNamespace(student)
    source = ("with_ties = np.array([1.0, 3.0, 3.0])\nshown = 2\ncheck = print\n"
              "### BEGIN HIDDEN TESTS\nshown = 7\nsecret = np.ones(2)\n"
              "### END HIDDEN TESTS\n")
    namespace["np"] = np
    exec(source.replace("### BEGIN HIDDEN TESTS", "").replace("### END HIDDEN TESTS", ""),
         namespace)
    judge.share_data(source, namespace, student)
    ((op, args),) = student.asked
    assert op == "set_globals" and sorted(args["values"]) == ["with_ties"]
    np.testing.assert_array_equal(wire.decode(args["values"]["with_ties"]), [1.0, 3.0, 3.0])


@pytest.mark.parametrize("code", [
    "def evaluate(model, batches):\n    type(model).forward = lambda self, x: x\n",
    "def evaluate(model, batches):\n    model.__class__.forward = None\n"])
def test_code_aimed_at_a_check_s_own_objects_is_flagged(code):
    from minigrad.course import integrity

    cells = [{"cell_type": "code", "source": code, "metadata": {"nbgrader": {
        "grade_id": "evaluate", "solution": True, "grade": False, "locked": False}}}]
    flags = integrity.inspect(cells, {"evaluate": "evaluate"}, [])
    assert [f["flag"] for f in flags] == ["tampering"]
    assert not any(f.get("zero") for f in flags)


def test_a_student_s_function_that_floods_stderr_during_a_check_does_not_hang_it():
    """Warnings printed while a check calls the student's code (outside any cell) go
    nowhere; they used to fill a pipe nobody read and stop the process."""
    failing = _failing_tests("15_custom_functions_and_debugging", {
        "checkpoint": (
            "import sys\n"
            "def checkpoint_training(model, optimizer, path):\n"
            "    sys.stderr.write('w' * 200_000)\n"
            "    mg.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()},"
            " path)\n\n"
            "def resume(model, optimizer, path):\n"
            "    sys.stderr.write('w' * 200_000)\n"
            "    state = mg.load(path)\n"
            "    model.load_state_dict(state['model'])\n"
            "    optimizer.load_state_dict(state['optimizer'])\n"),
    })
    assert "checkpoint-tests" not in failing


# --- what the student's Functions and functions do to the judge's arrays -------------------


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    """A student's process (unsandboxed: these are about what crosses, not the jail)
    whose cells define a few Functions and functions with classic in-place habits."""
    workdir = tmp_path_factory.mktemp("student")
    process = judge.StudentProcess(workdir, sandboxed=False, hide=[])
    remote = judge.Remote(process, timeout=60, workdir=workdir, sandboxed=False)
    judge.run_student_cell(process, (
        "import numpy as np\n"
        "import minigrad as mg\n"
        "class Rows(mg.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, s):\n"
        "        ctx.save_for_backward(x, s[:, None])  # a view of input s\n"
        "        ctx.x = x\n"
        "        return x * s[:, None]\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_output):\n"
        "        x, column = ctx.saved_tensors\n"
        "        grad_output *= 1.0  # in place, harmless in value\n"
        "        grad_output[0, 0] = 7.0\n"
        "        return grad_output * column, (grad_output * ctx.x).sum(axis=1)\n"
        "def hook(grad):\n"
        "    grad.mul_(0.5)\n"
        "    return grad\n"
        "def steps(n):\n"
        "    made = np.zeros(n)\n"
        "    yield made\n"
        "    made += 1.0  # added to in place after it was handed out\n"
        "    yield None\n"
        "import contextlib\n"
        "from minigrad.errors import ShapeError\n"
        "def shaped():\n"
        "    raise ShapeError('Linear: input of shape (2, 3), weight of shape (4, 5)')\n"
        "@contextlib.contextmanager\n"
        "def recording_off():\n"
        "    with mg.no_grad():\n"
        "        yield\n"
        "class Loose(mg.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.weight = mg.nn.Parameter(mg.zeros(2, 3))\n"
        "        self.frozen = mg.nn.Parameter(mg.zeros(1), requires_grad=False)\n"
        "        self.bias = mg.zeros(2)  # not registered\n"
        "        self.params = [mg.zeros(1), mg.zeros(1)]  # not registered either\n"
        "def norm(x):\n"
        "    s = (x * x).sum(dim=-1)\n"
        "    return mg.where(s > 0, s.sqrt(), 0.0)\n"
        "class Twice(mg.autograd.Function):  # calls the judge's fn, in forward and backward\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, fn, how):\n"
        "        ctx.fn, ctx.how, ctx.state = fn, how, mg.get_rng_state()\n"
        "        ctx.save_for_backward(x)\n"
        "        return fn(x)\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_output):\n"
        "        (x,) = ctx.saved_tensors\n"
        "        x = x.detach().requires_grad_()\n"
        "        mg.set_rng_state(ctx.state)\n"
        "        with mg.enable_grad():\n"
        "            out = ctx.fn(x)\n"
        "        if ctx.how == 'grad':\n"
        "            return mg.autograd.grad(out, x, grad_output)[0], None, None\n"
        "        out.backward(grad_output)\n"
        "        return x.grad, None, None\n"), timeout=60)
    outputs = judge.run_student_cell(process, GRADIENTS_OF_GRADIENTS, timeout=60)
    assert not [o for o in outputs if o["output_type"] == "error"], outputs
    yield remote
    process.stop()


# chapter 16's kinds of answers, run in the student's process and, for the one-process
# result they are compared with, here (the ``here`` fixture)
GRADIENTS_OF_GRADIENTS = '''
import numpy as np
import minigrad as mg


class Dual:
    def __init__(self, value, tangent):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        other = other if isinstance(other, Dual) else Dual(other, 0.0)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    __radd__ = __add__

    def __sub__(self, other):
        return self + -other

    def __rsub__(self, other):
        return -self + other

    def __mul__(self, other):
        other = other if isinstance(other, Dual) else Dual(other, 0.0)
        return Dual(self.value * other.value,
                    self.tangent * other.value + self.value * other.tangent)

    __rmul__ = __mul__

    def __neg__(self):
        return Dual(-self.value, -self.tangent)

    def sin(self):
        return Dual(np.sin(self.value), np.cos(self.value) * self.tangent)


class OneSided:  # no __radd__: 2.5 + d is Python's TypeError
    def __init__(self, value, tangent):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        return OneSided(self.value + other, self.tangent)


class Zero:  # says every difference is 0 (np.allclose subtracts)
    def __sub__(self, other):
        return 0.0

    __rsub__ = __sub__


class Hypot(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = (x * x + y * y).sqrt()
        ctx.save_for_backward(x, y, r)
        return r

    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, grad_output * y / r


class HypotOnce(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = (x * x + y * y).sqrt()
        ctx.save_for_backward(x, y, r)
        return r

    @staticmethod
    @mg.autograd.once_differentiable
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, grad_output * y / r


class Scale(mg.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = mg.nn.Parameter(mg.tensor([0.5, -1.5, 2.0], dtype=mg.float64))

    def forward(self, x):
        return (self.weight * x).tanh()


def hvp(f, x, v):
    (g,) = mg.autograd.grad(f(x), x, create_graph=True)
    (hv,) = mg.autograd.grad((g * v).sum(), x)
    return hv


def hvp_by_backward(f, x, v):  # x.grad ends as g + H v; f's weights get theirs
    f(x).backward(create_graph=True)
    (x.grad * v).sum().backward()
    return x.grad


def penalty(critic, x):
    x = x.detach().requires_grad_(True)
    (g,) = mg.autograd.grad(critic(x).sum(), x, create_graph=True)
    return ((g.norm(dim=1) - 1) ** 2).mean()


def made_up_history(critic, x):  # the right value, taken without create_graph
    x = x.detach().requires_grad_(True)
    (g,) = mg.autograd.grad(critic(x).sum(), x)
    return ((g.norm(dim=1) - 1) ** 2).mean() + 0.0 * sum(p.sum() for p in critic.parameters())
'''


def _named(remote, name):
    return remote.value(remote.ask("get", name=name)["value"])


def test_a_saved_view_and_a_ctx_attribute_are_the_judge_s_own_arrays(student):
    from minigrad.function import Context

    rows = _named(student, "Rows")
    assert [p for p in __import__("inspect").signature(rows.forward).parameters] == \
        ["ctx", "x", "s"]
    x, s = np.arange(6.0).reshape(2, 3), np.array([2.0, 3.0])
    ctx = Context()
    ctx.needs_input_grad = (True, True)
    out = rows.forward(ctx, x, s)
    np.testing.assert_array_equal(out, x * s[:, None])
    saved_x, column = ctx.saved_tensors
    assert saved_x is x  # the input itself, as in one process
    assert column is not s and np.shares_memory(column, s) and column.shape == (2, 1)
    assert ctx.x is x
    # an edit of s here shows through the saved view, there too
    s *= 10.0
    grad = np.ones((2, 3))
    grad_x, grad_s = rows.backward(ctx, grad)
    expected = np.ones((2, 3))
    expected[0, 0] = 7.0
    np.testing.assert_array_equal(grad, expected)  # backward's in-place edit came back
    np.testing.assert_array_equal(grad_x, expected * s[:, None])


def test_a_view_the_student_s_side_describes_outside_the_array_is_not_made():
    base = np.zeros(4)
    value = np.zeros(2)
    assert judge._view_of(base, 16, [2], [8], value) is not None
    for offset, strides in ((24, [8]), (-8, [8]), (0, [80]), (8, [-16]), (4, [8])):
        assert judge._view_of(base, offset, [2], strides, value) is None
    assert judge._view_of(base, 0, [2], [8], np.ones(2)) is None  # other values


def test_a_function_s_in_place_edit_of_its_argument_comes_back(student):
    hook = _named(student, "hook")
    grad = mg.tensor([2.0, 4.0])
    returned = hook(grad)
    np.testing.assert_array_equal(grad.numpy(), [1.0, 2.0])
    assert returned is grad


def test_a_function_on_tensors_names_its_ops_and_runs_backward_in_anomaly_mode(student):
    norm = _named(student, "norm")
    x = mg.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    with mg.detect_anomaly():
        out = norm(x)
        assert out.grad_fn.inner_ops.count("Where") == 1 and "Sqrt" in out.grad_fn.inner_ops
        with pytest.raises(FloatingPointError, match="Sqrt"):
            out.sum().backward()


def test_an_array_handed_out_and_changed_later_in_place_changes_in_the_judge(student):
    """While a check hands objects over (the backward loop of chapter 04), an array the
    student's code yields and later adds to in place shows the change here, as the
    check's copy-at-hand-out comparison expects."""
    steps = _named(student, "steps")
    with student.mirroring():
        iterator = iter(steps(3))
        first = next(iterator)
        handed_out = first.copy()
        assert next(iterator) is None
    np.testing.assert_array_equal(handed_out, np.zeros(3))
    np.testing.assert_array_equal(first, np.ones(3))


def test_minigrad_s_own_error_from_the_student_s_code_is_that_error_in_the_judge(student):
    from minigrad.errors import ShapeError

    with pytest.raises(ShapeError, match="weight of shape"):
        _named(student, "shaped")()


def test_a_context_manager_made_by_contextmanager_can_be_entered_from_the_judge(student):
    with student.mirroring():  # (the grad mode travels with the calls)
        manager = _named(student, "recording_off")()
        assert mg.is_grad_enabled()
        with manager:
            assert not mg.is_grad_enabled()
        assert mg.is_grad_enabled()


def test_a_student_s_module_shows_what_it_did_not_register(student):
    """Chapter 07's init check names a bias left a plain Tensor, or parameters kept in a
    list, by what the module holds; the judge's copy holds the same kinds of things."""
    module = _named(student, "Loose")()
    assert sorted(dict(module.named_parameters())) == ["frozen", "weight"]
    assert module.frozen.requires_grad is False and module.weight.requires_grad is True
    assert isinstance(vars(module)["bias"], mg.Tensor) and vars(module)["bias"].shape == (2,)
    assert isinstance(vars(module)["params"], list) and len(vars(module)["params"]) == 2


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_a_tensor_function_calls_the_check_s_function_back_in_the_judge(student, how):
    """The student's ``mg.autograd.Function`` is handed a function of the judge's (chapter
    14's checkpoint block): each call runs in the judge, in the student's grad mode and
    random state; backpropagating the result there fills the block's parameters' .grad
    for ``backward()`` and leaves them alone for ``grad()``, as in one process."""
    twice = _named(student, "Twice")
    assert issubclass(twice, mg.autograd.Function)
    mg.manual_seed(0)
    layer = mg.nn.Linear(3, 2)
    seen = []

    def fn(x):
        seen.append((mg.is_grad_enabled(), x.requires_grad))
        return mg.nn.functional.dropout(layer(x), 0.5)

    x = mg.randn(4, 3, requires_grad=True)
    v = mg.randn(4, 2)
    mg.manual_seed(5)
    out = twice.apply(x, fn, how)
    mg.rand(3)  # the generator moves on between forward and backward
    after_forward = mg.get_rng_state()
    (out * v).sum().backward()
    # forward ran fn with recording off, backward on a fresh leaf with recording on
    assert len(seen) == 2 and seen[0][0] is False and seen[1] == (True, True)
    assert mg.get_rng_state() != after_forward  # the recomputation drew dropout's mask again

    mg.manual_seed(5)
    x_plain = x.detach().requires_grad_()
    plain = mg.nn.functional.dropout(layer(x_plain), 0.5)
    np.testing.assert_allclose(out.detach().numpy(), plain.detach().numpy())
    expected_weight_grad = layer.weight.grad
    layer.weight.grad = None
    (plain * v).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x_plain.grad.numpy(), rtol=1e-6)
    if how == "backward":
        np.testing.assert_allclose(expected_weight_grad.numpy(), layer.weight.grad.numpy(),
                                   rtol=1e-6)
    else:
        assert expected_weight_grad is None


def test_the_graph_a_lent_function_records_is_measured_in_the_judge(student):
    """A checkpoint that runs the check's block with recording on keeps its activations,
    and those live here, in the judge: what they hold is measured here, so a student's
    process that says its outputs hold nothing (``_held_by`` patched) hides nothing."""
    from minigrad.exercises.modes import _held_by, activation_bytes

    judge.run_student_cell(student.student, (
        "import minigrad.course.student_process as _side\n"
        "_saved_held = _side._held_by\n"
        "_side._held_by = lambda node: 0  # 'my outputs hold nothing'\n"
        "class Keeps(mg.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, fn):\n"
        "        with mg.enable_grad():\n"
        "            ctx.out = fn(x.detach().requires_grad_())\n"
        "        return ctx.out.detach()\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_output):\n"
        "        return None, None\n"), timeout=60)
    try:
        keeps = _named(student, "Keeps")
        layer = mg.nn.Linear(6, 5)
        kept = []

        def fn(x):
            kept.append(layer(x).tanh())
            return kept[-1]

        out = keeps.apply(mg.randn(4, 6, requires_grad=True), fn)
        assert out.grad_fn.held_bytes == activation_bytes(kept[0]) > 0
        assert _held_by(out.grad_fn) >= activation_bytes(kept[0])

        # run with recording off (a right checkpoint), the block leaves nothing held
        kept.clear()
        judge.run_student_cell(student.student, (
            "class Drops(mg.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, fn):\n"
            "        return fn(x)\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad_output):\n"
            "        return None, None\n"), timeout=60)
        out = _named(student, "Drops").apply(mg.randn(4, 6, requires_grad=True), fn)
        assert kept[0].grad_fn is None and out.grad_fn.held_bytes == 0
    finally:
        judge.run_student_cell(student.student, "_side._held_by = _saved_held\n", timeout=60)


# --- chapter 16: gradients of gradients across the boundary ----------------------------------


@pytest.fixture(scope="module")
def here():
    """The same answers in this process: the one-process result to compare with."""
    namespace = {}
    exec(GRADIENTS_OF_GRADIENTS, namespace)
    return namespace


@pytest.fixture
def arithmetic(student):
    """As while a check of ``judge.ARITHMETIC`` (check_dual) runs."""
    student.arithmetic = True
    yield
    student.arithmetic = False


def _parts(dual) -> tuple:
    return np.asarray(dual.value, dtype=float), np.asarray(dual.tangent, dtype=float)


def _dual_results(Dual) -> list:
    a, ta = np.array([0.5, -1.0]), np.array([1.0, 2.0])
    b, tb = np.array([2.0, 3.0]), np.array([-1.0, 0.5])
    d, e = Dual(a, ta), Dual(b, tb)
    return [d + e, 2.5 + d, d + 2.5, d - e, 1.0 - d, -d, d * e, 3.0 * d, d * d,
            (d * e).sin() + 3.0 * d * d + 1.0]


def test_a_student_s_object_s_operators_run_in_its_process_as_in_one(student, here,
                                                                     arithmetic):
    results = _dual_results(_named(student, "Dual"))
    assert all(isinstance(r, judge.RemoteObject) for r in results)
    for got, right in zip(results, _dual_results(here["Dual"])):
        for got_part, right_part in zip(_parts(got), _parts(right)):
            np.testing.assert_array_equal(got_part, right_part)
    # Python's own rules run there: without __radd__, the TypeError a check names
    with pytest.raises(TypeError, match="unsupported operand type"):
        2.5 + _named(student, "OneSided")(np.ones(2), np.ones(2))


def test_outside_those_checks_a_student_s_object_has_no_operators(student):
    """A student's object returned where a number belongs cannot decide a check's
    comparison: np.allclose(got, want) computes got - want, and the student's __sub__
    would say 0 whatever got is."""
    zero = _named(student, "Zero")()
    with pytest.raises(TypeError):
        np.allclose(zero, np.ones(3))
    with pytest.raises(TypeError):
        zero - 1.0
    with pytest.raises(TypeError):
        -zero
    student.arithmetic = True
    try:
        assert zero - 1.0 == 0.0  # (what it would have said)
    finally:
        student.arithmetic = False


def _derivatives(apply, x, y, v, w) -> list[np.ndarray]:
    """r, its first derivatives for v (create_graph), the gradient of their weighted sum
    with respect to x, y and v, and a third derivative (of sum(d2r/dx2))."""
    tx, ty, tv = (mg.tensor(a, requires_grad=True) for a in (x, y, v))
    r = apply(tx, ty)
    gx, gy = mg.autograd.grad(r, (tx, ty), grad_outputs=tv, create_graph=True)
    total = (gx * mg.tensor(w[0])).sum() + (gy * mg.tensor(w[1])).sum()
    second = mg.autograd.grad(total, (tx, ty, tv), create_graph=True)
    (third,) = mg.autograd.grad(second[0].sum(), tx)
    return [r.detach().numpy(), gx.detach().numpy(), gy.detach().numpy(),
            *[s.detach().numpy() for s in second], third.numpy()]


def test_a_student_s_function_is_differentiated_twice_in_its_process(student, here):
    """``create_graph=True`` through the student's mg.autograd.Function: its backward
    runs recorded there, and the gradients are one op here whose own backward runs
    there (recorded again for a third derivative), as in one process; gradgradcheck
    passes, with a few requests per call of the Function."""
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0.5, 2, (3, 4)), rng.uniform(-2, -0.5, (3, 4))
    v, *w = rng.standard_normal((3, 3, 4))
    hypot = _named(student, "Hypot")
    for got, right in zip(_derivatives(hypot.apply, x, y, v, w),
                          _derivatives(here["Hypot"].apply, x, y, v, w)):
        np.testing.assert_allclose(got, right, rtol=1e-12)
    asked = []
    original = student.student.ask_raw

    def counted(message, timeout):
        asked.append(message["op"])
        return original(message, timeout)

    student.student.ask_raw = counted
    try:
        inputs = (mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True))
        assert mg.autograd.gradgradcheck(hypot.apply, inputs)
    finally:
        student.student.ask_raw = original
    calls = asked.count("call_graph")
    assert calls > 50 and len(asked) <= 2 * calls + 5


def test_a_student_s_module_is_differentiated_twice_in_its_process(student, here):
    """The same for a module: the second derivatives reach its parameters here."""
    x, v = np.array([0.3, -0.2, 0.9]), np.array([1.0, 2.0, -1.0])
    found = []
    for scale in (_named(student, "Scale")(), here["Scale"]()):
        tx = mg.tensor(x, requires_grad=True)
        (g,) = mg.autograd.grad(scale(tx).sum(), tx, create_graph=True)
        found.append([s.numpy() for s in mg.autograd.grad((g * mg.tensor(v)).sum(),
                                                          (tx, scale.weight))])
    for got, right in zip(*found):
        np.testing.assert_allclose(got, right, rtol=1e-12)


def test_a_backward_that_cannot_be_recorded_is_minigrad_s_error_in_the_judge(student):
    from minigrad.higher_order import NotTwiceDifferentiableError

    once = _named(student, "HypotOnce")
    x, y = mg.tensor([3.0], requires_grad=True), mg.tensor([4.0], requires_grad=True)
    with pytest.raises(NotTwiceDifferentiableError, match="once_differentiable"):
        mg.autograd.grad(once.apply(x, y), x, create_graph=True)


def _hvp_in_judge(hvp, x, v):
    """``hvp(f, x, v)`` with f a function of this process whose weight w gets gradients
    (f counts its backward passes, as check_hvp's does): (the result, w.grad, passes)."""
    from minigrad.exercises.higher_order import _Counted, hvp_example

    w = mg.tensor([1.5], requires_grad=True)
    _Counted.calls = 0
    result = hvp(lambda t: (w * hvp_example(t)).sum(), mg.tensor(x, requires_grad=True),
                 mg.tensor(v))
    return result.detach().numpy(), w.grad, _Counted.calls


@pytest.mark.parametrize("name", ["hvp", "hvp_by_backward"])
def test_a_function_of_the_check_s_is_differentiated_twice_through_the_student_s_code(
        student, here, name):
    """The check's f, lent: the student's hvp differentiates it twice, each call and
    each backward pass of f running here (recorded here under create_graph); the
    result, f's count of passes and its weight's gradient (none from grad(), the
    accumulated ones from backward()) are those of one process."""
    rng = np.random.default_rng(1)
    x, v = rng.uniform(-2, 2, 6), rng.standard_normal(6)
    got, got_w, got_passes = _hvp_in_judge(_named(student, name), x, v)
    right, right_w, right_passes = _hvp_in_judge(here[name], x, v)
    np.testing.assert_allclose(got, right, rtol=1e-12)
    assert got_passes == right_passes == 2
    if right_w is None:
        assert got_w is None
    else:
        np.testing.assert_allclose(got_w.detach().numpy(), right_w.detach().numpy(),
                                   rtol=1e-12)


def test_the_judge_answers_only_for_what_it_lent_and_the_graphs_it_made(student):
    """What the student's process may ask of a lent function: to call it, and to
    backpropagate through a graph it made, with one floating gradient per output."""
    f = student.lend(lambda t: (t * t).sum())
    made = student.callback({
        "op": "call", "target": wire.encode(f), "kwargs": wire.encode({}),
        "args": wire.encode((wire.TensorData(np.ones(3), True),)), "grad_enabled": True})
    assert made["graph"] is not None
    for request in (
            {"op": "call", "target": wire.encode(wire.Handle(f.id + 99, "judge", "f")),
             "args": wire.encode(()), "kwargs": wire.encode({})},
            {"op": "backward", "graph": 10**6, "grads": wire.encode([np.ones(())])},
            {"op": "backward", "graph": made["graph"],
             "grads": wire.encode([np.ones(()), np.ones(())])},
            {"op": "backward", "graph": made["graph"], "grads": wire.encode([np.ones((), int)])},
            {"op": "exec", "code": "import os"}):
        assert "error" in student.callback(request), request
    answer = student.callback({"op": "backward", "graph": made["graph"],
                               "grads": wire.encode([np.ones(())])})
    np.testing.assert_array_equal(wire.decode(answer["grads"])[0], [2.0, 2.0, 2.0])


def _critic() -> mg.nn.Module:
    mg.manual_seed(3)
    return mg.nn.Sequential(mg.nn.Linear(3, 8), mg.nn.Tanh(), mg.nn.Linear(8, 1)).double()


def _penalty_here_and_there(student, penalty, x):
    """The penalty of the check's critic, computed by the student's function (handed the
    critic), then backpropagated here: (its value, the critic's gradients)."""
    critic = _critic()
    with student.mirroring():
        value = _named(student, penalty)(critic, mg.tensor(x))
        assert value.requires_grad and all(p.grad is None for p in critic.parameters())
        value.backward()
    return value.item(), [None if p.grad is None else p.grad.numpy()
                          for p in critic.parameters()]


def test_a_result_computed_with_the_check_s_module_backpropagates_into_it(student, here):
    """The check hands its critic over, the student's function computes a penalty with a
    gradient inside (create_graph there); the penalty is one op here over the critic's
    own parameters, and its backward gives them the gradients of one process."""
    x = np.random.default_rng(2).standard_normal((5, 3))
    value, grads = _penalty_here_and_there(student, "penalty", x)
    critic = _critic()
    right = here["penalty"](critic, mg.tensor(x))
    right.backward()
    assert value == pytest.approx(right.item(), rel=1e-12)
    for got, expected in zip(grads, critic.parameters()):
        if expected.grad is None:  # (the last bias: the gradient in x does not use it)
            assert got is None
            continue
        np.testing.assert_allclose(got, expected.grad.numpy(), rtol=1e-10)
    # a history made up (the value taken without create_graph, plus 0 * the weights)
    # gives the critic what that history gives: zeros, not the gradients of the penalty
    faked, faked_grads = _penalty_here_and_there(student, "made_up_history", x)
    assert faked == pytest.approx(right.item(), rel=1e-12)
    assert not any(g.any() for g in faked_grads[:2])


CHAPTER_16_ATTACKS = {
    # wrong tangents, a __sub__ that says "no difference", the check rebound and patched
    "dual": '''
import sys
class Dual:
    def __init__(self, value, tangent):
        self.value, self.tangent = value, tangent
    def __add__(self, other):
        return Dual(self.value + getattr(other, "value", other), self.tangent)
    __radd__ = __add__
    def __mul__(self, other):
        return Dual(self.value * getattr(other, "value", other), self.tangent)
    __rmul__ = __mul__
    def __sub__(self, other):
        return 0.0
    __rsub__ = __sub__
    def sin(self):
        return Dual(np.sin(self.value), self.tangent)
    def exp(self):
        return Dual(np.exp(self.value), self.tangent)
check_dual = lambda *args, **kwargs: print("Dual: right")
sys.modules["minigrad.exercises.higher_order"].check_dual = check_dual
''',
    # a backward outside the graph, with the student's process saying it has a history
    "hypot_twice": '''
import gc
side = next(o for o in gc.get_objects() if isinstance(o, type) and o.__name__ == "StudentSide")
honest = side.graph_grad
def lying(self, *args, **kwargs):
    reply = honest(self, *args, **kwargs)
    if "history" in reply:
        reply["history"] = [True] * len(reply["history"])
    return reply
side.graph_grad = lying
mg.autograd.gradgradcheck = lambda *args, **kwargs: True
class MyHypot(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = (x * x + y * y).sqrt()
        ctx.save_for_backward(x, y, r)
        return r
    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = (t.numpy() for t in ctx.saved_tensors)
        g = grad_output.numpy()
        return mg.tensor(g * x / r), mg.tensor(g * y / r)
''',
    # the check's f and its reference Hessian swapped, in the student's process, for a
    # function whose H v the answer knows
    "hvp": '''
import sys
checks = sys.modules["minigrad.exercises.higher_order"]
checks.hvp_example = lambda x: (x * x).sum()
checks._hessian = lambda x: 2 * np.eye(len(x))
def hvp(f, x, v):
    return 2 * v
''',
    # the right value, taken without create_graph, and a history made up for it
    "gradient_penalty": '''
def gradient_penalty(critic, real, fake, epsilon):
    x_hat = (epsilon * real + (1 - epsilon) * fake).requires_grad_(True)
    (grads,) = mg.autograd.grad(critic(x_hat).sum(), x_hat)
    made_up = 0.0 * sum(p.sum() for p in critic.parameters())
    return ((grads.norm(dim=1) - 1) ** 2).mean() + made_up
''',
}


def test_attacks_on_chapter_16_s_checks_give_no_points():
    failing = _failing_tests("16_gradients_of_gradients", CHAPTER_16_ATTACKS)
    assert set(failing) == {f"{name}-tests" for name in CHAPTER_16_ATTACKS}
    assert "critic's" in failing["gradient_penalty-tests"]


@pytest.mark.parametrize("code", [
    "def hvp(f, x, v):\n    return mg.autograd.functional.hvp(f, x, v)[1]\n",
    "from minigrad.autograd.functional import vhp\n\n"
    "def hvp(f, x, v):\n    return vhp(f, x, v)[1]\n"])
def test_an_hvp_that_calls_minigrad_s_own_is_flagged_as_delegated(code):
    """The check cannot see the call (it runs in the student's process): the answer's
    code is read instead (integrity.py)."""
    from minigrad.course import integrity

    cells = [{"cell_type": "code", "source": code, "metadata": {"tags": ["solution:hvp"]}}]
    flags = integrity.inspect(cells, {"hvp": "hvp"}, [])
    assert [(f["flag"], f["exercise"], f["zero"]) for f in flags] == [("delegated", "hvp",
                                                                        True)]
