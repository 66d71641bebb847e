"""Chapter 14 (execution modes): the chapter's claims against PyTorch (grad-mode switches
nest and restore, `inference_mode`'s tensors refused by autograd, dropout untouched by
`no_grad`, checkpointing's gradients equal to a plain run's), the reference answers, and
the checks of its exercises, each of which must name its classic mistakes
(minigrad/exercises/modes.py, tests/mistakes/14_execution_modes.py)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.exercises.modes import (_EXPECTED, GRAD_SWITCH_MISTAKES, activation_bytes,
                                      check_checkpoint, check_evaluate, check_grad_switch,
                                      check_layer_shapes)
from mistakes import MISTAKES

STEM = "14_execution_modes"
CHAPTER = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / f"{STEM}.ipynb"
CHECKS = {"my_no_grad": (check_grad_switch, "my_no_grad"),
          "evaluate": (check_evaluate, "evaluate"),
          "my_checkpoint": (check_checkpoint, "MyCheckpoint"),
          "layer_shapes": (check_layer_shapes, "layer_shapes")}


def _namespace() -> dict:
    return {"mg": mg, "np": np, "nn": nn, "F": F}


def _answers() -> dict:
    """The chapter's solution cells, run: my_no_grad, evaluate, MyCheckpoint, layer_shapes."""
    namespace = _namespace()
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)
    return namespace


ANSWERS = _answers()


@pytest.fixture(autouse=True)
def modes_restored():
    yield
    assert mg.is_grad_enabled() and not mg.is_lazy(), "a test left a mode switched"


# --- the checks: the right answers pass, blank ones and each named mistake fail ------------


@pytest.mark.parametrize("exercise", list(CHECKS))
def test_the_reference_answer_passes(exercise, capsys):
    check, name = CHECKS[exercise]
    check(ANSWERS[name])
    assert "right" in capsys.readouterr().out


def _stub(*args, **kwargs):
    raise NotImplementedError("exercise: write your code here")


class _StubSwitch:
    def __enter__(self):
        raise NotImplementedError()

    def __exit__(self, *exc):
        raise NotImplementedError()


class _StubCheckpoint(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        raise NotImplementedError()

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


@pytest.mark.parametrize("check, blank", [(check_grad_switch, _StubSwitch),
                                          (check_evaluate, _stub),
                                          (check_checkpoint, _StubCheckpoint),
                                          (check_layer_shapes, _stub)])
def test_a_blank_answer_fails_and_says_so(check, blank):
    with pytest.raises(AssertionError, match="NotImplementedError"):
        check(blank)


@pytest.mark.parametrize("sentence", list(GRAD_SWITCH_MISTAKES))
def test_the_switch_check_names_each_wrong_switch(sentence):
    with pytest.raises(AssertionError) as failure:
        check_grad_switch(GRAD_SWITCH_MISTAKES[sentence])
    assert " ".join(sentence.split()[:8]) in " ".join(str(failure.value).split())


def test_minigrad_s_own_switch_is_refused():
    with pytest.raises(AssertionError, match="write the class yourself"):
        check_grad_switch(mg.no_grad)


@pytest.mark.parametrize("name", list(MISTAKES[STEM]))
def test_each_classic_mistake_fails_its_check_with_its_words(name):
    grade_id, code, words = MISTAKES[STEM][name]
    namespace = _namespace()
    exec(code, namespace)
    check, answer = CHECKS[grade_id]
    with pytest.raises(AssertionError) as failure:
        check(namespace[answer])
    assert " ".join(words.split()) in " ".join(str(failure.value).split())


def test_a_switch_written_as_a_generator_with_finally_passes(capsys):
    import contextlib

    @contextlib.contextmanager
    def switch():
        previous = mg.is_grad_enabled()
        mg.set_grad_enabled(False)
        try:
            yield
        finally:
            mg.set_grad_enabled(previous)

    check_grad_switch(switch)
    assert "right" in capsys.readouterr().out


def test_the_evaluate_check_names_a_percentage_and_a_count():
    def evaluate(model, batches, scale=100.0):
        loss, accuracy = ANSWERS["evaluate"](model, batches)
        return loss, accuracy * scale

    with pytest.raises(AssertionError, match="a percentage"):
        check_evaluate(evaluate)


def test_the_layer_shapes_check_names_input_shapes():
    def layer_shapes(model, input_shape):
        shapes = []
        with mg.lazy():
            h = mg.zeros(*input_shape)
            for name, layer in model.named_children():
                shapes.append((name, tuple(h.shape)))
                h = layer(h)
        return shapes

    with pytest.raises(AssertionError, match="shape of the layer's INPUT"):
        check_layer_shapes(layer_shapes)


def test_the_checks_leave_the_modes_and_the_generator_as_they_were():
    mg.manual_seed(7)
    state = mg.get_rng_state()
    for check, name in CHECKS.values():
        check(ANSWERS[name])
    assert mg.get_rng_state() == state


# --- the chapter's claims ---------------------------------------------------------------------


def test_activation_bytes_counts_each_saved_array_once_and_no_weights():
    mg.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(5)])
    out = model(mg.randn(4, 8))
    assert activation_bytes(out, model) == 6 * 4 * 8 * 4  # 5 Linear inputs + last ReLU output
    with mg.no_grad():
        assert activation_bytes(model(mg.randn(4, 8)), model) == 0


def test_checkpointing_keeps_one_input_per_segment_and_the_same_gradients():
    mg.manual_seed(0)
    blocks = [nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(8)]
    deep = nn.Sequential(*blocks)
    x = mg.randn(4, 8, requires_grad=True)
    grads = []
    for mine in (False, True):
        for p in deep.parameters():
            p.grad = None
        x.grad = None
        h = x
        if mine:
            for start in range(0, 8, 4):
                h = ANSWERS["MyCheckpoint"].apply(h, nn.Sequential(*blocks[start:start + 4]))
            assert activation_bytes(h, deep) == 2 * 4 * 8 * 4
        else:
            h = deep(h)
        h.sum().backward()
        grads.append([p.grad.numpy().copy() for p in deep.parameters()] + [x.grad.numpy()])
    for plain, checkpointed in zip(*grads):
        np.testing.assert_allclose(checkpointed, plain, rtol=1e-6, atol=1e-7)


def _torch_situations(torch) -> list:
    """The situations of check_grad_switch, run with torch.no_grad."""
    seen = []
    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        seen.append((torch.is_grad_enabled(), (w * 2).requires_grad))
    seen.append(torch.is_grad_enabled())
    with torch.no_grad():
        with torch.no_grad():
            pass
        seen.append(torch.is_grad_enabled())
    with torch.no_grad():
        with torch.no_grad():
            pass
        between = torch.is_grad_enabled()
    seen.append((between, torch.is_grad_enabled()))
    with torch.no_grad():
        with torch.enable_grad():
            with torch.no_grad():
                pass
            on = torch.is_grad_enabled()
        seen.append((on, torch.is_grad_enabled()))
    block = torch.no_grad()
    with torch.no_grad():
        with block:
            pass
        seen.append(torch.is_grad_enabled())
    reached = False
    try:
        with torch.no_grad():
            raise KeyError("inside")
    except KeyError:
        reached = True
    seen.append((reached, torch.is_grad_enabled()))
    return seen


def test_the_switch_check_expects_what_torch_no_grad_does(torch):
    assert _torch_situations(torch) == _EXPECTED


def test_the_nesting_cell_prints_what_torch_prints(torch):
    def trace(lib):
        w = lib.ones(3, requires_grad=True)
        seen = []
        with lib.no_grad():
            seen.append((lib.is_grad_enabled(), (w * 2).requires_grad))
            with lib.enable_grad():
                seen.append((lib.is_grad_enabled(), (w * 2).requires_grad))
                with lib.no_grad():
                    seen.append(lib.is_grad_enabled())
                seen.append(lib.is_grad_enabled())
            seen.append(lib.is_grad_enabled())
        seen.append(lib.is_grad_enabled())
        return seen

    assert trace(mg) == trace(torch)


def test_torch_s_inference_tensors_are_refused_by_autograd_minigrad_s_are_ordinary(torch):
    w = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        t = torch.ones(3) * 2
    assert t.is_inference() and not t.requires_grad
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        (w * t).sum().backward()
    (w + t).sum().backward()  # an addition saves nothing for backward: allowed
    with pytest.raises(RuntimeError, match="[Ii]nplace update to inference tensor"):
        t.add_(1)
    with torch.no_grad():
        u = torch.ones(3) * 2
    (w * u).sum().backward()  # a no_grad result is an ordinary tensor
    wm = mg.ones(3, requires_grad=True)
    with mg.inference_mode():
        tm = mg.ones(3) * 2
        assert not mg.is_grad_enabled()
    assert not tm.requires_grad and mg.is_grad_enabled()
    (wm * tm).sum().backward()
    np.testing.assert_allclose(wm.grad.numpy(), [2, 2, 2])


def test_no_grad_does_not_switch_dropout_off_in_torch_either(torch):
    torch.manual_seed(0)
    drop = torch.nn.Dropout(0.5)
    with torch.no_grad():
        a, b = drop(torch.ones(1000)), drop(torch.ones(1000))
    assert not torch.equal(a, b)
    drop.eval()
    assert torch.equal(drop(torch.ones(1000)), torch.ones(1000))


def test_torch_checkpoint_gives_the_plain_gradients_as_the_answer_does(torch):
    from torch.utils.checkpoint import checkpoint

    rng = np.random.default_rng(0)
    layers = [(rng.standard_normal((6, 6)), rng.standard_normal(6)) for _ in range(3)]
    x = rng.standard_normal((4, 6))
    v = rng.standard_normal((4, 6))

    def torch_block(h, params):
        for weight, bias in params:
            h = torch.tanh(h @ weight.T + bias)
        return h

    def run_torch(use_checkpoint):
        params = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
                  for w, b in layers]
        tx = torch.tensor(x, requires_grad=True)
        out = checkpoint(torch_block, tx, params, use_reentrant=False) if use_checkpoint \
            else torch_block(tx, params)
        (out * torch.tensor(v)).sum().backward()
        return [tx.grad.numpy()] + [t.grad.numpy() for pair in params for t in pair]

    params = [(mg.tensor(w, requires_grad=True), mg.tensor(b, requires_grad=True))
              for w, b in layers]

    def mg_block(h):
        for weight, bias in params:
            h = (h @ weight.T + bias).tanh()
        return h

    mx = mg.tensor(x, requires_grad=True)
    out = ANSWERS["MyCheckpoint"].apply(mx, mg_block)
    (out * mg.tensor(v)).sum().backward()
    mine = [mx.grad.numpy()] + [t.grad.numpy() for pair in params for t in pair]
    plain, checkpointed = run_torch(False), run_torch(True)
    for a, b, c in zip(plain, checkpointed, mine):
        np.testing.assert_allclose(b, a, rtol=1e-12)
        np.testing.assert_allclose(c, a, rtol=1e-10, atol=1e-12)


def test_layer_shapes_agrees_with_torch_s_meta_device(torch):
    shapes = ANSWERS["layer_shapes"](
        nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(8 * 4 * 4, 10)), (1000, 1, 8, 8))
    tnn = torch.nn
    model = tnn.Sequential(tnn.Conv2d(1, 8, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                           tnn.Flatten(), tnn.Linear(8 * 4 * 4, 10)).to("meta")
    h, expected = torch.zeros(1000, 1, 8, 8, device="meta"), []
    for name, layer in model.named_children():
        h = layer(h)
        expected.append((name, tuple(h.shape)))
    assert shapes == expected


def test_a_graph_view_collapses_to_a_depth_or_to_named_groups():
    """GraphView(collapse_groups=1) or a list of names collapsed nothing: its checkbox,
    which switches collapsing on, was ticked only for collapse_groups=True."""
    pytest.importorskip("ipywidgets")
    import re

    from minigrad.widgets import GraphView

    model = nn.Sequential(nn.Sequential(nn.Linear(3, 4), nn.Tanh()), nn.Linear(4, 1))
    loss = model(mg.randn(2, 3)).sum()
    boxes = {str(c): sorted(re.findall(r"\d+ ops?: [A-Za-z, ]+",
                                       GraphView(loss, collapse_groups=c).svg))
             for c in (False, True, 1, ["0"])}
    assert boxes == {"False": [], "True": ["1 op: Linear", "1 op: Linear", "1 op: Tanh"],
                     "1": ["1 op: Linear", "2 ops: Linear, Tanh"],
                     "['0']": ["2 ops: Linear, Tanh"]}
