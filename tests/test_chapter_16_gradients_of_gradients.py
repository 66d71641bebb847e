"""Chapter 16 (gradients of gradients): the checks of its exercises, each of which must
name its classic mistakes (minigrad/exercises/higher_order.py), and what the chapter
claims against PyTorch (dual numbers give torch.func.jvp's tangents, the Function's second
derivatives are torch.hypot's, hvp is torch's, the gradient penalty and the gradients it
gives the critic are torch's, and a detached r passes gradcheck but not gradgradcheck)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import pathlib

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.exercises.higher_order import (AT_FAKE, EPSILON_SWAPPED, LEFT_IN_CRITIC,
                                             LEFT_IN_GRAD, NO_VALUE_OR_TANGENT, NOT_A_DUAL,
                                             SQUARED_NORM, USED_OWN_HVP, WHOLE_NORM,
                                             check_double_backward,
                                             check_dual, check_gradient_penalty, check_hvp,
                                             dual_example)

ROOT = pathlib.Path(__file__).resolve().parents[1]
STEM = "16_gradients_of_gradients"
CHAPTER = ROOT / "notebooks" / f"{STEM}.ipynb"


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MISTAKES = _load(ROOT / "tests" / "mistakes" / f"{STEM}.py", "mistakes_16").MISTAKES


def _answers() -> dict:
    """The chapter's solution cells, run: Dual, MyHypot, hvp and gradient_penalty."""
    namespace = {"mg": mg, "np": np, "nn": nn}
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)
    return namespace


ANSWERS = _answers()

CHECKS = {
    "dual": lambda ns: check_dual(ns["Dual"]),
    "hypot_twice": lambda ns: check_double_backward(ns["MyHypot"]),
    "hvp": lambda ns: check_hvp(ns["hvp"]),
    "gradient_penalty": lambda ns: check_gradient_penalty(ns["gradient_penalty"]),
}


def _message(check, namespace) -> str:
    with pytest.raises(AssertionError) as failure, contextlib.redirect_stdout(io.StringIO()):
        check(namespace)
    return " ".join(str(failure.value).split())


def _words(sentence: str) -> str:
    """The sentence's fixed words, up to its first {placeholder}, spaces normalised."""
    return " ".join(sentence.split("{")[0].replace("{{", "{").split())


# --- the checks: the answers pass, each classic mistake is named ---------------------------


@pytest.mark.parametrize("exercise", sorted(CHECKS))
def test_the_chapter_s_answer_passes_its_check(exercise, capsys):
    CHECKS[exercise](ANSWERS)
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("exercise", sorted(CHECKS))
def test_the_hidden_seed_passes_too(exercise, capsys):
    check = {"dual": check_dual, "hypot_twice": check_double_backward, "hvp": check_hvp,
             "gradient_penalty": check_gradient_penalty}[exercise]
    name = {"dual": "Dual", "hypot_twice": "MyHypot"}.get(exercise, exercise)
    check(ANSWERS[name], seed=8)
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_classic_mistake_fails_with_its_sentence(mistake):
    exercise, code, words = MISTAKES[mistake]
    namespace = {"mg": mg, "np": np, "nn": nn}
    exec(code, namespace)
    assert words in _message(CHECKS[exercise], namespace)


def test_every_exercise_has_classic_mistakes():
    assert {exercise for exercise, _, _ in MISTAKES.values()} == set(CHECKS)


def _hvp_left_in_grad(f, x, v):
    (g,) = mg.autograd.grad(f(x), x, create_graph=True)
    (g * v).sum().backward()
    hv = x.grad
    x.grad = hv.clone()  # the mistake: a gradient left in x.grad
    return hv


def _penalty_with(mix=None, norms=None, backward=False):
    def gradient_penalty(critic, real, fake, epsilon):
        x_hat = (mix or (lambda r, f, e: e * r + (1 - e) * f))(real, fake, epsilon)
        x_hat.requires_grad_(True)
        (grads,) = mg.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
        penalty = (((norms or (lambda g: g.norm(dim=1)))(grads) - 1) ** 2).mean()
        if backward:
            penalty.backward(retain_graph=True)
        return penalty

    return {"gradient_penalty": gradient_penalty}


class _NoTangent:
    def __init__(self, value, tangent):
        self.value = value


class _FloatsBack:
    def __init__(self, value, tangent):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        return self.value + getattr(other, "value", other)


def _hvp_delegated(f, x, v):
    return mg.autograd.functional.hvp(f, x, v)[1]


def _hvp_returning(last):
    def hvp(f, x, v):
        (g,) = mg.autograd.grad(f(x), x, create_graph=True)
        return last(mg.autograd.grad((g * v).sum(), x))

    return {"hvp": hvp}


# (not in tests/mistakes/: while grading, the student's call of functional.hvp happens in
# the student's process, where this check cannot watch it; course/integrity.py reads it
# from the answer's code instead: tests/test_grading_handover.py. An hvp that returns
# grad's tuple, or an array, fails while grading too, but course/judge.py's GraphCall
# reports it before the check can name it.)
@pytest.mark.parametrize(("exercise", "namespace", "sentence"), [
    ("dual", {"Dual": _NoTangent}, NO_VALUE_OR_TANGENT),
    ("dual", {"Dual": _FloatsBack}, NOT_A_DUAL),
    ("hvp", {"hvp": _hvp_left_in_grad}, LEFT_IN_GRAD),
    ("hvp", {"hvp": _hvp_delegated}, USED_OWN_HVP),
    # (RETURNED_TUPLE and NOT_A_TENSOR start with the call: their own words, then)
    ("hvp", _hvp_returning(lambda found: found), "the tuple mg.autograd.grad returns"),
    ("hvp", _hvp_returning(lambda found: found[0].numpy()), "return H v as a Tensor"),
    ("gradient_penalty", _penalty_with(mix=lambda r, f, e: f), AT_FAKE),
    ("gradient_penalty", _penalty_with(mix=lambda r, f, e: (1 - e) * r + e * f),
     EPSILON_SWAPPED),
    ("gradient_penalty", _penalty_with(norms=lambda g: (g * g).sum(dim=1)), SQUARED_NORM),
    ("gradient_penalty", _penalty_with(norms=lambda g: g.norm()), WHOLE_NORM),
    ("gradient_penalty", _penalty_with(backward=True), LEFT_IN_CRITIC),
], ids=["no-tangent", "floats-back", "left-in-grad", "delegated", "returns-grad-s-tuple",
        "returns-an-array", "at-fake", "epsilon-swapped",
        "squared-norm", "whole-norm", "left-in-critic"])
def test_each_named_mistake_fails_with_its_sentence(exercise, namespace, sentence):
    assert _words(sentence) in _message(CHECKS[exercise], namespace)


def test_a_blank_answer_fails_every_check():
    def stub(*args, **kwargs):
        raise NotImplementedError()

    blank_function = type("MyHypot", (mg.autograd.Function,), {
        "forward": staticmethod(stub), "backward": staticmethod(stub)})
    blank_dual = type("Dual", (), {"__init__": lambda self, value, tangent: None,
                                   "__add__": stub, "__radd__": stub, "__mul__": stub,
                                   "__rmul__": stub, "sin": stub, "exp": stub})
    blank = {"Dual": blank_dual, "MyHypot": blank_function, "hvp": stub,
             "gradient_penalty": stub}
    for check in CHECKS.values():
        with pytest.raises(AssertionError), contextlib.redirect_stdout(io.StringIO()):
            check(blank)


def test_hvp_by_the_backward_of_a_vjp_passes(capsys):
    """grad(g, x, grad_outputs=v) is H^T v = H v: another right answer."""
    def hvp(f, x, v):
        (g,) = mg.autograd.grad(f(x), x, create_graph=True)
        return mg.autograd.grad(g, x, grad_outputs=v)[0]

    check_hvp(hvp)
    assert "two backward passes" in capsys.readouterr().out


def test_an_hvp_that_never_differentiates_f_fails():
    """The right numbers from this f's Hessian written out (it can be read in the
    checks' source) are not an hvp: no backward pass went through f."""
    from minigrad.exercises.higher_order import F_NOT_DIFFERENTIATED, _hessian

    def hvp(f, x, v):
        f(x)  # called, never differentiated
        return mg.tensor(_hessian(x.detach().numpy()) @ v.numpy())

    with pytest.raises(AssertionError) as caught, contextlib.redirect_stdout(io.StringIO()):
        check_hvp(hvp)
    assert _words(F_NOT_DIFFERENTIATED) in " ".join(str(caught.value).split())


def test_a_hypot_recomputing_r_in_backward_passes(capsys):
    """Recomputing r from the saved inputs with Tensor ops is differentiable too."""
    class MyHypot(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return (x * x + y * y).sqrt()

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            r = (x * x + y * y).sqrt()
            return grad_output * x / r, grad_output * y / r

    check_double_backward(MyHypot)
    assert "gradgradcheck pass" in capsys.readouterr().out


def test_a_detached_r_passes_gradcheck_and_fails_gradgradcheck():
    """What section 4 shows: gradcheck alone does not see a constant r."""
    class ConstantR(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            r = (x * x + y * y).sqrt()
            ctx.save_for_backward(x, y, r)
            return r

        @staticmethod
        def backward(ctx, grad_output):
            x, y, r = ctx.saved_tensors
            return grad_output * x / r.detach(), grad_output * y / r.detach()

    inputs = (mg.randn(2, 3, dtype=mg.float64, requires_grad=True),
              mg.randn(2, 3, dtype=mg.float64, requires_grad=True))
    assert mg.autograd.gradcheck(ConstantR.apply, inputs)
    with pytest.raises(mg.GradcheckError, match="input 0"):
        mg.autograd.gradgradcheck(ConstantR.apply, inputs)


# --- what the chapter says, against PyTorch -------------------------------------------------


def test_dual_numbers_give_torch_func_jvp_s_tangent(torch):
    rng = np.random.default_rng(3)
    x, y, vx, vy = (rng.standard_normal(5) for _ in range(4))
    Dual = ANSWERS["Dual"]
    out = dual_example(Dual(x, vx), Dual(y, vy))
    value, tangent = torch.func.jvp(dual_example, (torch.tensor(x), torch.tensor(y)),
                                    (torch.tensor(vx), torch.tensor(vy)))
    np.testing.assert_allclose(out.value, value.numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.tangent, tangent.numpy(), rtol=1e-10, atol=1e-12)


def test_my_hypot_s_second_derivatives_are_torch_hypot_s(torch):
    rng = np.random.default_rng(4)
    x, y, v, w = (rng.standard_normal((3, 4)) for _ in range(4))
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    gx, _ = torch.autograd.grad(torch.hypot(tx, ty), (tx, ty), torch.tensor(v),
                                create_graph=True)
    expected = torch.autograd.grad((gx * torch.tensor(w)).sum(), (tx, ty))
    mx, my = mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)
    hx, _ = mg.autograd.grad(ANSWERS["MyHypot"].apply(mx, my), (mx, my), mg.tensor(v),
                             create_graph=True)
    got = mg.autograd.grad((hx * mg.tensor(w)).sum(), (mx, my))
    for mine, theirs in zip(got, expected):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_hvp_is_torch_s(torch):
    rng = np.random.default_rng(5)
    x, v = rng.standard_normal(6), rng.standard_normal(6)

    def f(t):
        return (t * t.sin()).sum() + 0.25 * t.sum() ** 2

    _, expected = torch.autograd.functional.hvp(f, torch.tensor(x), torch.tensor(v))
    got = ANSWERS["hvp"](f, mg.tensor(x, requires_grad=True), mg.tensor(v))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10)


def test_the_gradient_penalty_and_the_critic_s_gradients_are_torch_s(torch):
    rng = np.random.default_rng(6)
    real, fake = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    epsilon = rng.uniform(0, 1, (5, 1))
    critic = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    twin = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 1)).double()
    twin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in critic.state_dict().items()})
    x_hat = (torch.tensor(epsilon) * torch.tensor(real)
             + (1 - torch.tensor(epsilon)) * torch.tensor(fake)).requires_grad_(True)
    (grads,) = torch.autograd.grad(twin(x_hat).sum(), x_hat, create_graph=True)
    expected = ((grads.norm(dim=1) - 1) ** 2).mean()
    expected.backward()
    got = ANSWERS["gradient_penalty"](critic, mg.tensor(real), mg.tensor(fake),
                                      mg.tensor(epsilon))
    got.backward()
    assert got.item() == pytest.approx(expected.item(), rel=1e-10)
    for (name, mine), theirs in zip(critic.named_parameters(), twin.parameters()):
        if theirs.grad is None:
            assert mine.grad is None or not mine.grad.numpy().any(), name
        else:
            np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-8,
                                       atol=1e-12, err_msg=name)
