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
    yield remote
    process.stop()


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
