"""Chapter 08's mistakes module (minigrad/exercises/losses.py): its reference targets are
PyTorch's, each listed mistake really is wrong (and differs from the right gradient,
taken from PyTorch's autograd), and check_loss passes ``mistakes`` and ``more`` on."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.exercises import check_loss
from minigrad.exercises.losses import (CROSS_ENTROPY_MISTAKES, GELU_MISTAKES,
                                       SMOOTHED_TARGETS_MISTAKES, SOFTMAX_MISTAKES,
                                       ignore_index_mistakes, reference_smoothed_targets)

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
    _, grad = _torch_ce(X, IGNORED, ignore_index=-1)
    for sentence, wrong in ignore_index_mistakes(-1).items():
        assert not np.allclose(wrong(X, IGNORED, np.array(1.0)), grad), sentence


def test_softmax_and_gelu_mistakes_are_wrong():
    t = torch.tensor(X, requires_grad=True)
    (torch.softmax(t, -1) * torch.tensor(G)).sum().backward()
    for sentence, wrong in SOFTMAX_MISTAKES.items():
        value = wrong(X, G)
        assert value is None or not np.allclose(value, t.grad.numpy()), sentence
    t = torch.tensor(X * 2, requires_grad=True)
    (torch.nn.functional.gelu(t) * torch.tensor(G)).sum().backward()
    for sentence, wrong in GELU_MISTAKES.items():
        assert not np.allclose(wrong(X * 2, G), t.grad.numpy(), atol=1e-6), sentence


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
