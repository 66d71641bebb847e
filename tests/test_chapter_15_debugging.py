"""Chapter 15 (custom Functions and debugging): the checks of its exercises, each of which
must name its classic mistakes (minigrad/exercises/debugging.py), what the chapter claims
about PyTorch (the same gradients as torch.hypot and torch.linalg.vector_norm, the same
NaN from a single where, the float32 warning of gradcheck, a hook returning None), and the
PyTorch bridge's data file (made by scripts/make_torch_reference.py, never stale, found
from a student's workspace)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import pathlib
import shutil
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.exercises.context import check_in_place_safety
from minigrad.exercises.debugging import (CLIPPED_VALUES, FORGOT_MAX_NORM, HYPOT_MISTAKES,
                                          MASK_TRAP, NORM_SQUARED, NOT_A_FACTORY,
                                          NOT_THE_KEYS, PER_ROW, SAFE_INPUT_IS_ZERO,
                                          SAFE_VALUE_SHOWS, SAVED_TWICE, check_save_and_resume,
                                          check_clip_hook, check_safe_norm,
                                          hypot_reference)

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
STEM = "15_custom_functions_and_debugging"
CHAPTER = NOTEBOOKS / f"{STEM}.ipynb"
DATA = NOTEBOOKS / "data" / "torch_mlp.npz"


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MISTAKES = _load(ROOT / "tests" / "mistakes" / f"{STEM}.py", "mistakes_15").MISTAKES


def _answers() -> dict:
    """The chapter's solution cells, run: MyHypot, safe_norm, clip_hook,
    checkpoint_training and resume."""
    namespace = {"mg": mg, "np": np, "nn": nn}
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)
    return namespace


ANSWERS = _answers()

CHECKS = {
    "myhypot": lambda ns: check_in_place_safety(
        ns["MyHypot"], inputs=[(3, 4), (3, 4)], reference=hypot_reference, modified=[0, 1],
        mistakes=HYPOT_MISTAKES),
    "safe_norm": lambda ns: check_safe_norm(ns["safe_norm"]),
    "clip_hook": lambda ns: check_clip_hook(ns["clip_hook"]),
    "checkpoint": lambda ns: check_save_and_resume(ns["checkpoint_training"], ns["resume"]),
}


def _message(check, namespace) -> str:
    with pytest.raises(AssertionError) as failure, contextlib.redirect_stdout(io.StringIO()):
        check(namespace)
    return " ".join(str(failure.value).split())


# --- the checks: the answers pass, each classic mistake is named ---------------------------


@pytest.mark.parametrize("exercise", sorted(CHECKS))
def test_the_chapter_s_answer_passes_its_check(exercise, capsys):
    CHECKS[exercise](ANSWERS)
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_classic_mistake_fails_with_its_sentence(mistake):
    exercise, code, words = MISTAKES[mistake]
    namespace = {"mg": mg, "np": np, "nn": nn}
    exec(code, namespace)
    assert words in _message(CHECKS[exercise], namespace)


def _hypot_with(gradients):
    """A MyHypot whose backward returns ``gradients(x, y, grad_output)``."""

    class WrongHypot(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return np.hypot(x, y)

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return gradients(x, y, grad_output)

    return {"MyHypot": WrongHypot}


@pytest.mark.parametrize("sentence", sorted(HYPOT_MISTAKES))
def test_each_wrong_hypot_gradient_is_named(sentence):
    message = _message(CHECKS["myhypot"], _hypot_with(HYPOT_MISTAKES[sentence]))
    assert " ".join(sentence.split()) in message


def test_a_hypot_that_ignores_grad_output_is_named():
    message = _message(CHECKS["myhypot"], _hypot_with(
        lambda x, y, g: (x / np.hypot(x, y), y / np.hypot(x, y))))
    assert "backward ignores grad_output" in message


def test_a_clip_hook_that_clamps_values_or_forgets_max_norm_is_named():
    def clamping(max_norm):
        return lambda grad: grad.clamp(-max_norm, max_norm)

    def unit(max_norm):
        return lambda grad: grad / grad.norm() if grad.norm() > max_norm else grad

    assert " ".join(CLIPPED_VALUES.split()) in _message(CHECKS["clip_hook"],
                                                        {"clip_hook": clamping})
    assert " ".join(FORGOT_MAX_NORM.split()) in _message(CHECKS["clip_hook"],
                                                         {"clip_hook": unit})


def _words(sentence: str) -> str:
    """The sentence's fixed words, up to its first {placeholder}, spaces normalised."""
    return " ".join(sentence.split("{")[0].replace("{{", "{").split())


def _safe_norm_no_second_where(x):
    s = (x * x).sum(dim=-1)
    return mg.where(s > 0, s, 1.0).sqrt()


def _safe_norm_safe_value_zero(x):
    s = (x * x).sum(dim=-1)
    return mg.where(s > 0, mg.where(s > 0, s, 0.0).sqrt(), 0.0)


def _safe_norm_mask(x):
    s = (x * x).sum(dim=-1)
    return s.sqrt() * (s > 0)


def _clip_per_row(max_norm):
    def hook(grad):
        norm = grad.norm(dim=-1, keepdim=True)
        return mg.where(norm > max_norm, grad * (max_norm / norm), grad)

    return hook


def _clip_norm_squared(max_norm):
    def hook(grad):
        squares = (grad * grad).sum()
        return grad * (max_norm / squares) if squares > max_norm else grad

    return hook


def _clip_not_a_factory(grad, max_norm=1.0):
    return grad * (max_norm / grad.norm())


def _saved_twice(model, optimizer, path):
    mg.save(model.state_dict(), path)
    mg.save(optimizer.state_dict(), path)


def _other_keys(model, optimizer, path):
    mg.save({"weights": model.state_dict(), "adam": optimizer.state_dict()}, path)


def _resume_other_keys(model, optimizer, path):
    checkpoint = mg.load(path)
    model.load_state_dict(checkpoint["weights"])
    optimizer.load_state_dict(checkpoint["adam"])


@pytest.mark.parametrize(("exercise", "namespace", "sentence"), [
    ("safe_norm", {"safe_norm": _safe_norm_no_second_where}, SAFE_VALUE_SHOWS),
    ("safe_norm", {"safe_norm": _safe_norm_safe_value_zero}, SAFE_INPUT_IS_ZERO),
    ("safe_norm", {"safe_norm": _safe_norm_mask}, MASK_TRAP),
    ("clip_hook", {"clip_hook": _clip_per_row}, PER_ROW),
    ("clip_hook", {"clip_hook": _clip_norm_squared}, NORM_SQUARED),
    ("clip_hook", {"clip_hook": _clip_not_a_factory}, NOT_A_FACTORY),
    ("checkpoint", {"checkpoint_training": _saved_twice, "resume": lambda *a: None},
     SAVED_TWICE),
    ("checkpoint", {"checkpoint_training": _other_keys, "resume": _resume_other_keys},
     NOT_THE_KEYS),
], ids=["no-second-where", "safe-value-zero", "mask", "per-row", "norm-squared",
        "not-a-factory", "saved-twice", "other-keys"])
def test_each_named_mistake_fails_with_its_sentence(exercise, namespace, sentence):
    assert _words(sentence) in _message(CHECKS[exercise], namespace)


def test_a_tiny_eps_in_the_square_root_is_still_named_as_an_eps():
    message = _message(CHECKS["safe_norm"], {
        "safe_norm": lambda x: ((x * x).sum(dim=-1) + 1e-12).sqrt()})
    assert "an eps added inside" in message
    assert "shows through" not in message


def test_a_clip_hook_returning_none_for_a_short_gradient_passes(capsys):
    def clip_hook(max_norm):
        def hook(grad):
            norm = grad.norm()
            if norm > max_norm:
                return grad * (max_norm / norm)
            return None

        return hook

    check_clip_hook(clip_hook)
    assert "clips inside backward" in capsys.readouterr().out


def test_a_safe_norm_by_clamping_passes(capsys):
    check_safe_norm(lambda x: (x * x).sum(dim=-1).clamp(min=1e-30).sqrt())
    assert "no NaN" in capsys.readouterr().out


def test_a_blank_answer_fails_every_check():
    def stub(*args, **kwargs):
        raise NotImplementedError()

    blank = {"MyHypot": type("MyHypot", (mg.Function,), {"forward": staticmethod(stub),
                                                           "backward": staticmethod(stub)}),
             "safe_norm": stub, "clip_hook": stub, "checkpoint_training": stub,
             "resume": stub}
    for check in CHECKS.values():
        with pytest.raises(AssertionError), contextlib.redirect_stdout(io.StringIO()):
            check(blank)


# --- what the chapter says, against PyTorch -------------------------------------------------


def test_myhypot_gives_torch_hypot_s_gradients(torch):
    rng = np.random.default_rng(0)
    x, y, g = (rng.standard_normal((3, 4)) for _ in range(3))
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    torch.hypot(tx, ty).backward(torch.tensor(g))
    mx, my = mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)
    out = ANSWERS["MyHypot"].apply(mx, my)
    out.backward(mg.tensor(g))
    np.testing.assert_allclose(out.numpy(), np.hypot(x, y))
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(my.grad.numpy(), ty.grad.numpy(), rtol=1e-12)


def test_safe_norm_gives_torch_s_norm_and_its_zero_gradient_at_zero(torch):
    x = np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [1.0, -2.0, 2.0]])
    g = np.array([0.5, -1.0, 2.0])
    tx = torch.tensor(x, requires_grad=True)
    value = torch.linalg.vector_norm(tx, dim=-1)
    value.backward(torch.tensor(g))
    mx = mg.tensor(x, requires_grad=True)
    mine = ANSWERS["safe_norm"](mx)
    mine.backward(mg.tensor(g))
    np.testing.assert_allclose(mine.numpy(), value.detach().numpy())
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy())
    assert not tx.grad[0].any()


def test_a_single_where_after_sqrt_gives_nan_in_torch_too(torch):
    tx = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    s = (tx * tx).sum(-1)
    torch.where(s > 0, s.sqrt(), torch.zeros_like(s)).sum().backward()
    assert torch.isnan(tx.grad).all()
    # PyTorch's anomaly mode looks for NaN only: it names the Mul after the square root,
    # where the chapter's (minigrad's, which also looks for Inf) names the Sqrt itself
    tx.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="'MulBackward0' returned nan"), \
                torch.autograd.detect_anomaly():
            (tx * tx).sum(-1).sqrt().sum().backward()
    mx = mg.zeros(2, 3, dtype=mg.float64, requires_grad=True)
    with pytest.raises(FloatingPointError, match="backward of Sqrt .* produced Inf"), \
            mg.detect_anomaly():
        (mx * mx).sum(dim=-1).sqrt().sum().backward()


def test_gradcheck_warns_about_float32_in_torch_and_minigrad(torch):
    tx = torch.randn(3, dtype=torch.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="double precision"):
        torch.autograd.gradcheck(torch.sin, (tx,), eps=1e-3, atol=1e-2, raise_exception=False)
    mx = mg.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="not float64"):
        assert mg.gradcheck(lambda t: t.sin(), (mx,))


def test_a_hook_returning_none_leaves_the_gradient_in_torch_and_minigrad(torch):
    def halve(grad):
        grad = grad * 0.5  # noqa: F841 - the mistake: nothing returned

    w = np.array([[1.0, -2.0], [0.5, 3.0]])
    a = np.array([[1.0, 1.0], [2.0, 0.0]])
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    tw = torch.tensor(w, requires_grad=True)
    th = torch.tensor(a) @ tw
    th.register_hook(halve)
    (th * torch.tensor(v)).sum().backward()
    mw = mg.tensor(w, requires_grad=True)
    mh = mg.tensor(a) @ mw
    mh.register_hook(halve)
    (mh * mg.tensor(v)).sum().backward()
    np.testing.assert_allclose(mw.grad.numpy(), tw.grad.numpy())
    np.testing.assert_allclose(mw.grad.numpy(), a.T @ v)


def test_clip_hook_clips_as_torch_does_with_the_same_hook(torch):
    clip = ANSWERS["clip_hook"]
    rng = np.random.default_rng(1)
    a, w, v = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), \
        rng.standard_normal((3, 5)) * 3
    ta, tw = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
    th = ta @ tw
    th.register_hook(clip(1.0))  # the same code on torch tensors
    (th * torch.tensor(v)).sum().backward()
    ma, mw = mg.tensor(a, requires_grad=True), mg.tensor(w, requires_grad=True)
    mh = ma @ mw
    mh.register_hook(clip(1.0))
    (mh * mg.tensor(v)).sum().backward()
    np.testing.assert_allclose(ma.grad.numpy(), ta.grad.numpy())
    np.testing.assert_allclose(mw.grad.numpy(), tw.grad.numpy())


def test_adam_restarted_takes_another_step_than_adam_resumed(torch):
    """The chapter's reason to save the optimizer: in PyTorch too."""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    for _ in range(3):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    fresh = torch.optim.Adam(model.parameters(), lr=0.1)
    resumed = torch.optim.Adam(model.parameters(), lr=0.1)
    resumed.load_state_dict(optimizer.state_dict())
    ends = []
    for opt in (fresh, resumed):
        model.load_state_dict(state)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        ends.append(model.weight.detach().clone())
    assert not torch.allclose(ends[0], ends[1])


# --- the bridge's data file -----------------------------------------------------------------


def test_the_data_file_is_what_the_script_makes_with_torch(torch):
    script = _load(ROOT / "scripts" / "make_torch_reference.py", "make_torch_reference")
    made = script.make_reference()
    committed = dict(np.load(DATA, allow_pickle=False))
    assert sorted(made) == sorted(committed)
    for key in ("0.weight", "0.bias", "2.weight", "2.bias", "input", "target"):
        np.testing.assert_array_equal(made[key], committed[key], err_msg=key)
    for key in sorted(made):
        np.testing.assert_allclose(made[key], committed[key], rtol=1e-6, atol=1e-7,
                                   err_msg=key)


def test_minigrad_gives_the_outputs_and_gradients_in_the_data_file():
    reference = mg.load(DATA)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    model.load_state_dict({key: reference[key] for key in model.state_dict()})
    output = model(mg.tensor(reference["input"]))
    loss = F.cross_entropy(output, mg.tensor(reference["target"]))
    loss.backward()
    np.testing.assert_allclose(output.detach().numpy(), reference["output"], atol=1e-6)
    assert math.isclose(loss.item(), float(reference["loss"]), rel_tol=1e-6)
    for name, parameter in model.named_parameters():
        np.testing.assert_allclose(parameter.grad.numpy(), reference[f"grad.{name}"],
                                   atol=1e-6, err_msg=name)


def test_the_chapter_reads_the_file_next_to_it_and_a_workspace_has_it(tmp_path):
    """The notebook opens data/torch_mlp.npz relative to its own folder: the repository's
    notebooks/, and a student's workspace, where `minigrad-course workspace` copies
    notebooks/data/."""
    from minigrad.course import cli

    source = CHAPTER.with_suffix(".py").read_text(encoding="utf-8")
    assert 'mg.load("data/torch_mlp.npz")' in source
    upstream = tmp_path / "notebooks"
    (upstream / "hints").mkdir(parents=True)
    shutil.copy2(CHAPTER, upstream)
    shutil.copytree(NOTEBOOKS / "data", upstream / "data")
    folder = tmp_path / "my-course"
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(["workspace", str(folder), "--notebooks", str(upstream)]) == 0
    assert (folder / CHAPTER.name).exists()
    assert sorted(mg.load(folder / "data" / "torch_mlp.npz")) == sorted(mg.load(DATA))
