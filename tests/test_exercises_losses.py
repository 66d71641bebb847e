"""Chapter 08's mistakes module (minigrad/exercises/losses.py): its reference targets are
PyTorch's, each listed mistake really is wrong (and differs from the right gradient,
taken from PyTorch's autograd), and check_loss passes ``mistakes`` and ``more`` on."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.exercises import check_function, check_loss
from minigrad.exercises.checks import WrongOutput
from minigrad.exercises.losses import (BCE_MISTAKES, CROSS_ENTROPY_MISTAKES, GELU_MISTAKES,
                                       SMOOTHED_TARGETS_MISTAKES, SOFTMAX_DIM0_MISTAKES,
                                       SOFTMAX_MISTAKES, ignore_index_mistakes,
                                       label_smoothing_mistakes, reference_smoothed_targets)

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(8)
X = RNG.uniform(-2, 2, size=(6, 5))
G = RNG.standard_normal((6, 5))
TARGET = np.array([1, 0, 4, 2, 3, 1])
IGNORED = np.array([1, -1, 4, -1, 3, 1])


def _torch_ce(x, target, **kw):
    t = torch.tensor(x, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(t, torch.tensor(target), **kw)
    loss.backward()
    return loss.item(), t.grad.numpy()


@pytest.mark.parametrize("target, ignore_index, smoothing",
                         [(TARGET, -100, 0.0), (IGNORED, -1, 0.0), (TARGET, -100, 0.1),
                          (IGNORED, -1, 0.3), (np.array([2, -100, 0, 4, 4, 4]), -100, 0.2)])
def test_smoothed_targets_and_the_gradient_formula_are_pytorch_s(target, ignore_index,
                                                                   smoothing):
    q = reference_smoothed_targets(target, 5, ignore_index, smoothing)
    kept = (target != ignore_index).sum()
    log_probs = X - X.max(1, keepdims=True)
    log_probs = log_probs - np.log(np.exp(log_probs).sum(1, keepdims=True))
    loss, grad = _torch_ce(X, target, ignore_index=ignore_index, label_smoothing=smoothing)
    assert np.isclose(-(q * log_probs).sum() / kept, loss, atol=1e-12)
    probs = np.exp(log_probs) * (target != ignore_index)[:, None]
    np.testing.assert_allclose((probs - q) / kept, grad, atol=1e-12)
    # and minigrad's own op agrees
    ours = F.cross_entropy(mg.tensor(X), target, ignore_index=ignore_index,
                           label_smoothing=smoothing)
    assert np.isclose(ours.item(), loss, atol=1e-12)
    for sentence, wrong in SMOOTHED_TARGETS_MISTAKES.items():
        value = wrong(target, 5, ignore_index, smoothing)
        assert value is None or not np.allclose(value, q), sentence


def test_cross_entropy_mistakes_are_wrong():
    _, grad = _torch_ce(X, TARGET)
    for sentence, wrong in CROSS_ENTROPY_MISTAKES.items():
        assert not np.allclose(wrong(X, TARGET, np.array(1.0)), grad), sentence
    _, grad = _torch_ce(X, TARGET, label_smoothing=0.1)
    for sentence, wrong in label_smoothing_mistakes(0.1).items():
        assert not np.allclose(wrong(X, TARGET, np.array(1.0)), grad), sentence
    assert all(wrong(X, TARGET, np.array(1.0)) is None
               for wrong in label_smoothing_mistakes(0.0).values())
    _, grad = _torch_ce(X, IGNORED, ignore_index=-1)
    for sentence, wrong in ignore_index_mistakes(-1).items():
        assert not np.allclose(wrong(X, IGNORED, np.array(1.0)), grad), sentence


def _each_is_wrong(mistakes, x, g, right_output, right_grad, may_be_none=True):
    """Every mistake gives something other than PyTorch's output (a ``wrong_output``
    entry) or gradient (the others), or None where it does not apply."""
    for sentence, wrong in mistakes.items():
        if isinstance(wrong, WrongOutput):
            value, right = wrong.make(x), right_output
        else:
            value, right = wrong(x, g), right_grad
        if value is None:
            assert may_be_none, sentence
            continue
        assert not np.allclose(value, right, atol=1e-6, equal_nan=False), sentence


def _torch_softmax(x, dim):
    t = torch.tensor(x, requires_grad=True)
    out = torch.softmax(t, dim)
    (out * torch.tensor(G[:x.shape[0], :x.shape[1]])).sum().backward()
    return out.detach().numpy(), t.grad.numpy()


def test_softmax_and_gelu_mistakes_are_wrong():
    _each_is_wrong(SOFTMAX_MISTAKES, X, G, *_torch_softmax(X, -1))
    _each_is_wrong(SOFTMAX_DIM0_MISTAKES, X, G, *_torch_softmax(X, 0), may_be_none=False)
    t = torch.tensor(X * 2, requires_grad=True)
    out = torch.nn.functional.gelu(t)
    (out * torch.tensor(G)).sum().backward()
    _each_is_wrong(GELU_MISTAKES, X * 2, G, out.detach().numpy(), t.grad.numpy(),
                   may_be_none=False)


def test_the_global_maximum_mistake_is_named_only_where_a_row_underflows():
    (sentence,) = [s for s in SOFTMAX_MISTAKES if "whole array" in s]
    make = SOFTMAX_MISTAKES[sentence].make
    assert make(X) is None  # ordinary logits: the global maximum is harmless
    far = np.array([[0.0, 1.0, 2.0], [-1000.0, -999.0, -998.0]])
    assert np.isnan(make(far)[1]).all() and np.isfinite(make(far)[0]).all()


class _GlobalMaxSoftmax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(x - x.max())
        s = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(s)
        ctx.dim = dim
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return s * (grad_output - (grad_output * s).sum(axis=ctx.dim, keepdims=True))


class _FixedAxisSoftmax(_GlobalMaxSoftmax):
    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        s = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return s * (grad_output - (grad_output * s).sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("wrong, words", [(_GlobalMaxSoftmax, "taken over the whole array"),
                                          (_FixedAxisSoftmax, "summed along the last axis")])
def test_the_chapter_s_softmax_check_names_these_mistakes(wrong, words):
    with pytest.raises(AssertionError, match=words):
        check_function(wrong, inputs=[[(4, 5)], [(5, 5)]], kwargs={"dim": -1},
                       reference=lambda x, dim: F.softmax(x, dim=dim), large_inputs=True,
                       mistakes=SOFTMAX_MISTAKES,
                       more=[({"dim": 0}, [(4, 5)], SOFTMAX_DIM0_MISTAKES)])


LABELS = np.array([[1, 0, 1], [0, 0, 1], [0, 1, 0], [1, 1, 0]])


def _bce_check(function):
    check_loss(function, inputs=[(4, 3), LABELS],
               reference=lambda x, y: F.binary_cross_entropy_with_logits(x, y.double()),
               mistakes=BCE_MISTAKES)


def test_bce_mistakes_differ_from_pytorch_at_ordinary_logits_and_at_a_thousand():
    x = RNG.uniform(-2, 2, size=(4, 3))
    for scale in (1.0, 1000.0 / np.abs(x).max()):
        right = torch.nn.functional.binary_cross_entropy_with_logits(
            torch.tensor(x * scale), torch.tensor(LABELS, dtype=torch.float64)).item()
        for sentence, wrong in BCE_MISTAKES.items():
            value = wrong.make(x * scale, LABELS)
            assert value is None or not np.isclose(value, right), sentence
    right = torch.nn.functional.binary_cross_entropy_with_logits(
        torch.tensor(x), torch.tensor(LABELS, dtype=torch.float64)).item()
    # and the stable form the mistakes are variations of is PyTorch's
    assert np.isclose((np.maximum(x, 0) - x * LABELS
                       + np.log1p(np.exp(-np.abs(x)))).mean(), right)


@pytest.mark.parametrize("body, words", [
    ("-(y * x.sigmoid().log() + (1 - y) * (1 - x.sigmoid()).log()).mean()", "is nan at logits"),
    ("((1 - y) * x + (-x).exp().log1p()).mean()", "is inf at logits"),
    ("(x.relu() - x * y + (-x.abs()).exp().log1p()).sum()", "summed over all elements"),
    ("(x.relu() - x * y + (-x).exp().log1p()).mean()", "absolute value is missing"),
    ("(x.relu() + x * y + (-x.abs()).exp().log1p()).mean()", "added instead of subtracted"),
])
def test_the_chapter_s_bce_check_names_each_mistake(body, words):
    namespace = {}
    exec(f"def my_bce(x, y):\n    return {body}\n", namespace)  # noqa: S102
    with pytest.raises(AssertionError, match=words):
        _bce_check(namespace["my_bce"])


def test_the_chapter_s_bce_check_passes_the_stable_form(capsys):
    _bce_check(lambda x, y: (x.relu() - x * y + (-x.abs()).exp().log1p()).mean())
    assert "right" in capsys.readouterr().out


class _CrossEntropyDividingByN(mg.Function):
    """Right on plain targets, but counts ignored rows in the mean."""

    @staticmethod
    def forward(ctx, x, target, ignore_index=-100):
        keep = target != ignore_index
        log_probs = x - x.max(1, keepdims=True)
        log_probs = log_probs - np.log(np.exp(log_probs).sum(1, keepdims=True))
        q = np.eye(x.shape[1])[np.where(keep, target, 0)] * keep[:, None]
        ctx.save_for_backward(np.exp(log_probs) * keep[:, None], q)
        return -(q * log_probs).sum() / keep.sum()

    @staticmethod
    def backward(ctx, grad_output):
        probs, q = ctx.saved_tensors
        return grad_output * (probs - q) / len(q), None


def test_check_loss_tries_more_settings_with_their_own_mistakes(capsys):
    reference = lambda x, t, **kw: F.cross_entropy(x, t, **kw)  # noqa: E731
    check_loss(_CrossEntropyDividingByN, inputs=[(6, 5), TARGET], reference=reference)
    assert "right" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="ignored rows were counted in the mean"):
        check_loss(_CrossEntropyDividingByN, inputs=[(6, 5), TARGET], reference=reference,
                   more=[({"ignore_index": -1}, [(6, 5), IGNORED], ignore_index_mistakes(-1))])
