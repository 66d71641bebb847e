"""Chapter 08's classic mistakes (activations and losses), out of the notebook so that its
test cells do not show the answers: ``{sentence naming the mistake: fn(*arrays, g) ->
wrong gradient}``, as ``check_function(..., mistakes=...)`` and ``check_loss`` take them.
``g`` is the upstream gradient (a number's worth, shape ``()``, for a loss)."""

from __future__ import annotations

import math

import numpy as np

from ..ops.activation import erf
from .checks import wrong_output
from .prerequisites import reference_for


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _normal_pdf(x: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * x**2) / math.sqrt(2 * math.pi)


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + erf(x / math.sqrt(2)))


# MySoftmax with dim=-1: fn(x, g) -> the wrong gradient for x
SOFTMAX_MISTAKES = {
    "backward used only the diagonal of the Jacobian, s * (1 - s) * grad_output, as if "
    "each output depended on its own input only. Every s_j depends on every x_i (they share "
    "the denominator): the gradient is s * (grad_output - (grad_output * s).sum(dim, "
    "keepdim=True)).":
        lambda x, g: _softmax(x) * (1 - _softmax(x)) * g,
    "the term from the shared denominator is missing: s * grad_output alone. Subtract "
    "(grad_output * s) summed over dim (keepdims=True) before multiplying by s.":
        lambda x, g: _softmax(x) * g,
    "the sum over dim was taken without keepdims, so it lined up with the wrong axis: use "
    "(grad_output * s).sum(axis=dim, keepdims=True).":
        lambda x, g: _softmax(x) * (g - (g * _softmax(x)).sum(axis=-1)[None, :])
        if x.shape[0] == x.shape[-1] else None,
    "the s inside the sum is missing: s * (grad_output - grad_output.sum(dim)). The sum is "
    "of grad_output * s (each g_j weighted by its s_j): s * (grad_output - (grad_output * "
    "s).sum(axis=dim, keepdims=True)).":
        lambda x, g: _softmax(x) * (g - g.sum(axis=-1, keepdims=True)),
    "the maximum was taken over the whole array (x.max()), not along dim: a row whose "
    "logits are all far below the largest one underflows to 0 / 0 = nan. Subtract each "
    "row's own maximum, x.max(axis=dim, keepdims=True).":
        wrong_output(lambda x: _only_if_not_finite(_global_max_softmax(x))),
}


def _global_max_softmax(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.exp(x - x.max())
        return e / e.sum(axis=-1, keepdims=True)


def _only_if_not_finite(value: np.ndarray) -> np.ndarray | None:
    return None if np.isfinite(value).all() else value

# MySoftmax with dim=0: the mistakes of a fixed axis=-1 somewhere
SOFTMAX_DIM0_MISTAKES = {
    "forward ignored dim: this is the softmax along the last axis, and dim=0 was asked "
    "for. Use axis=dim in the max and the sum (the dim=-1 case passed).":
        wrong_output(lambda x: _softmax(x, axis=-1)),
    "backward summed along the last axis, not along dim (the dim=-1 case passed): save dim "
    "on ctx in forward (ctx.dim = dim) and use (grad_output * s).sum(axis=ctx.dim, "
    "keepdims=True).":
        lambda x, g: _softmax(x, 0) * (g - (g * _softmax(x, 0)).sum(axis=-1, keepdims=True)),
}


def _ce_grad(x: np.ndarray, target: np.ndarray, g: np.ndarray, *, ignore_index: int = -100,
             divide_by: str = "kept", zero_ignored: bool = True) -> np.ndarray:
    keep = target != ignore_index
    q = reference_smoothed_targets(target, x.shape[1], ignore_index, 0.0)
    diff = _softmax(x) - q
    if zero_ignored:
        diff = diff * keep[:, None]
    count = {"kept": keep.sum(), "all": len(target), "one": 1}[divide_by]
    return g * diff / count


@reference_for(3, "smoothedtargets")
def reference_smoothed_targets(target: np.ndarray, n_classes: int, ignore_index: int,
                               label_smoothing: float) -> np.ndarray:
    """PyTorch's target distribution for ``F.cross_entropy``, shape (N, n_classes):
    ``(1 - eps) onehot + eps / K`` on kept rows, zero rows where ``target == ignore_index``."""
    keep = target != ignore_index
    onehot = np.eye(n_classes)[np.where(keep, target, 0)]
    return ((1 - label_smoothing) * onehot + label_smoothing / n_classes) * keep[:, None]


def _smoothed(target, n_classes, ignore_index, smoothing, *, over=None, zero=True,
              true_class_too=True):
    keep = target != ignore_index
    onehot = np.eye(n_classes)[np.where(keep, target, 0)]
    spread = smoothing / (over or n_classes)
    q = (1 - smoothing) * onehot + spread * (1 if true_class_too else 1 - onehot)
    return q * keep[:, None] if zero else q


IGNORED_NOT_ZERO = (
    "the rows whose target is ignore_index are not all zero: they are not in the loss, so "
    "their q must be 0. Careful: np.eye(K)[-1] is the LAST class's row, not an error. Index "
    "with np.where(keep, target, 0), then multiply by the mask keep = target != "
    "ignore_index.")

# smoothed_targets(target, n_classes, ignore_index, label_smoothing) -> the wrong q
SMOOTHED_TARGETS_MISTAKES = {
    "the smoothing was spread over the K - 1 wrong classes (eps / (K - 1) each, 1 - eps on "
    "the true one). PyTorch gives eps / K to EVERY class, the true one included: "
    "q = (1 - eps) onehot + eps / K.":
        lambda t, k, i, e: None if e == 0 else _smoothed(t, k, i, e, over=k - 1,
                                                         true_class_too=False),
    "eps / K was given only to the wrong classes, so the true class has 1 - eps and each row "
    "sums to 1 - eps / K. Add eps / K to every class, the true one included.":
        lambda t, k, i, e: None if e == 0 else _smoothed(t, k, i, e, true_class_too=False),
    IGNORED_NOT_ZERO:
        lambda t, k, i, e: None if (t != i).all() else _smoothed(t, k, i, e, zero=False),
    IGNORED_NOT_ZERO + " ":  # np.eye(K)[target] straight away: -1 is the last class
        lambda t, k, i, e: None if (t != i).all() or (t < -k).any() else
        (1 - e) * np.eye(k)[t] + e / k,
    "the label smoothing was ignored: with label_smoothing = eps, q = (1 - eps) onehot + "
    "eps / K.":
        lambda t, k, i, e: None if e == 0 else _smoothed(t, k, i, 0.0),
    "the ignored rows were zeroed before the smoothing, so they got eps / K on every class. "
    "Add eps / K first, then multiply the whole q by the mask keep[:, None] at the end.":
        lambda t, k, i, e: None if e == 0 or (t != i).all() else
        (1 - e) * _smoothed(t, k, i, 0.0) + e / k,
    "the smoothing was not divided by K: each class gets eps / K (K = n_classes), so that "
    "a kept row of q sums to 1.":
        lambda t, k, i, e: None if e == 0 else _smoothed(t, k, i, e, over=1),
}


# MyCrossEntropy.apply(logits, target) with no ignored rows and no smoothing
CROSS_ENTROPY_MISTAKES = {
    "the one-hot target was added instead of subtracted: the gradient is (softmax - onehot) "
    "/ N, it pulls the right class's logit UP.":
        lambda x, t, g: g * (_softmax(x) + np.eye(x.shape[1])[t]) / len(t),
    "the one-hot target is missing: softmax / N alone is the gradient of log-sum-exp, "
    "not of the loss. Subtract the one-hot target: (softmax - onehot) / N.":
        lambda x, t, g: g * _softmax(x) / len(t),
    "it was divided by N * K (probs.size, every element), not by N: the mean is over the N "
    "rows only; the sum over the K classes is part of each row's loss. Divide by ctx.count.":
        lambda x, t, g: _ce_grad(x, t, g) / x.shape[1],
}


def label_smoothing_mistakes(label_smoothing: float) -> dict:
    """For a target with ``label_smoothing``: fn(x, target, g)."""
    return {
        "backward used the one-hot target, not the smoothed q: with label_smoothing = eps "
        "the target is q = (1 - eps) onehot + eps / K (saved in forward), and the gradient "
        "is (probs - q) / N.":
            lambda x, t, g: _ce_grad(x, t, g) if label_smoothing else None,
    }


def ignore_index_mistakes(ignore_index: int) -> dict:
    """For a target with ignored rows (``ignore_index``): fn(x, target, g)."""
    return {
        "the ignored rows were counted in the mean: you divided by N, the batch size. "
        "PyTorch divides by the number of rows whose target is not ignore_index "
        "(ctx.count, kept in forward).":
            lambda x, t, g: _ce_grad(x, t, g, ignore_index=ignore_index, divide_by="all"),
        "the ignored rows got a gradient: they are not in the loss, so their rows of the "
        "gradient must be 0 (multiply by the mask of kept rows).":
            lambda x, t, g: _ce_grad(x, t, g, ignore_index=ignore_index, zero_ignored=False),
        "the ignored rows got a gradient and were counted in the mean: zero their rows "
        "and divide by the number of kept rows, not by N.":
            lambda x, t, g: _ce_grad(x, t, g, ignore_index=ignore_index, divide_by="all",
                                     zero_ignored=False),
    }


# MyGELU (exact): fn(x, g) -> the wrong gradient for x
GELU_MISTAKES = {
    "the x * phi(x) term is missing: GELU(x) = x Phi(x) is a product, so its derivative is "
    "Phi(x) + x phi(x), with phi(x) = exp(-x^2 / 2) / sqrt(2 pi) the normal density.":
        lambda x, g: g * _normal_cdf(x),
    "backward is the derivative of the tanh approximation (approximate='tanh'), but "
    "forward is the exact GELU with erf: use Phi(x) + x phi(x) to match it.":
        lambda x, g: g * _tanh_gelu_grad(x),
    "Phi was computed as erf(x) instead of (1 + erf(x / sqrt 2)) / 2: the normal CDF "
    "needs the 1/sqrt(2), the + 1 and the / 2.":
        lambda x, g: g * (erf(x) + x * 2 / math.sqrt(math.pi) * np.exp(-x**2)),
    "phi(x) lacks its 1 / sqrt(2 pi): the normal density is phi(x) = exp(-x^2 / 2) / "
    "sqrt(2 pi), so that it integrates to 1.":
        lambda x, g: g * (_normal_cdf(x) + x * np.exp(-0.5 * x**2)),
    "phi(x) was written with exp(-x^2) instead of exp(-x^2 / 2): the normal density is "
    "exp(-x^2 / 2) / sqrt(2 pi).":
        lambda x, g: g * (_normal_cdf(x) + x * np.exp(-x**2) / math.sqrt(2 * math.pi)),
    "forward used erf(x) instead of erf(x / sqrt 2): Phi(x) = (1 + erf(x / sqrt 2)) / 2, "
    "the 1/sqrt(2) turns erf's e^(-t^2) into the normal's e^(-t^2 / 2).":
        wrong_output(lambda x: x * 0.5 * (1 + erf(x))),
    "forward used erf(x / sqrt 2) as Phi(x): Phi(x) = (1 + erf(x / sqrt 2)) / 2 (erf runs "
    "from -1 to 1, Phi from 0 to 1).":
        wrong_output(lambda x: x * erf(x / math.sqrt(2))),
    "forward is the tanh approximation (approximate='tanh'), not the exact GELU: use "
    "x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2.":
        wrong_output(lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                      * (x + 0.044715 * x**3)))),
}


def _tanh_gelu_grad(x: np.ndarray) -> np.ndarray:
    c = math.sqrt(2 / math.pi)
    u = c * (x + 0.044715 * x**3)
    t = np.tanh(u)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t**2) * c * (1 + 3 * 0.044715 * x**2)


def _bce_terms(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))


def _bce_textbook(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        p = 1 / (1 + np.exp(-x))
        return -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()


def _bce_half_stable(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return ((1 - y) * x + np.log1p(np.exp(-x))).mean()


# my_bce_with_logits(x, y): wrong outputs (the engine makes the gradient)
BCE_MISTAKES = {
    "the loss is nan at logits of +-1000: something overflowed. sigmoid(1000) is exactly "
    "1.0 in float64, so log(1 - sigmoid(x)) is log(0) = -inf, and 0 * -inf is nan. Never "
    "take the log of sigmoid: use max(x, 0) - x y + log1p(exp(-|x|)).":
        wrong_output(lambda x, y: _only_if_not_finite(_bce_textbook(x, y))),
    "the loss is inf at logits of +-1000: something overflowed. exp(-x) (or exp(x)) is inf "
    "for x = -1000 (or 1000); exp(-|x|) is at most 1. Use max(x, 0) - x y + "
    "log1p(exp(-|x|)).":
        wrong_output(lambda x, y: _only_if_not_finite(_bce_half_stable(x, y))),
    "it was summed over all elements, not averaged: F.binary_cross_entropy_with_logits "
    "returns the mean over every element (N * K of them here), so end with .mean().":
        wrong_output(lambda x, y: _bce_terms(x, y).sum()),
    "the absolute value is missing: log1p(exp(-x)) where the stable form has "
    "log1p(exp(-|x|)). For x < 0, max(x, 0) is 0 and log(1 + e^-x) = -x + log(1 + e^x): the "
    "identity needs |x| in both places.":
        wrong_output(lambda x, y: _bce_without_abs(x, y)),
    "x * y was added instead of subtracted: the loss is max(x, 0) - x y + "
    "log1p(exp(-|x|)).":
        wrong_output(lambda x, y: (np.maximum(x, 0) + x * y
                                   + np.log1p(np.exp(-np.abs(x)))).mean()),
}


def _bce_without_abs(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """Wrong but finite for ordinary logits; at +-1000 it overflows (named above)."""
    with np.errstate(over="ignore"):
        value = (np.maximum(x, 0) - x * y + np.log1p(np.exp(-x))).mean()
    return value if np.isfinite(value) else None


__all__ = ["BCE_MISTAKES", "CROSS_ENTROPY_MISTAKES", "GELU_MISTAKES",
           "SMOOTHED_TARGETS_MISTAKES", "SOFTMAX_DIM0_MISTAKES", "SOFTMAX_MISTAKES",
           "ignore_index_mistakes", "label_smoothing_mistakes", "reference_smoothed_targets"]
