"""More of PyTorch's functionals (round 3 of the census): the ranking, metric and
likelihood losses and pairwise distance.

Each is a composite of Tensor ops (norm, clamp, where, minimum, log, exp, ...), written with
PyTorch's formula, so its gradient and its gradient's gradient come from those ops. Targets
that only choose a branch (labels -1/1, class indices) are constants; targets that enter
the formula (margin_ranking_loss, poisson_nll_loss, gaussian_nll_loss, ...) keep their
gradient when they are Tensors, as in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..state import no_grad
from ..tensor import Tensor, gather, pad_tensor, stack, where
from .functional_activations import logsigmoid
from .functional_checks import (_check_floating, _check_reduction, _class_weight, _error,
                                _legacy_reduction, _reduce)

__all__ = [
    "cosine_embedding_loss", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss",
    "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "pairwise_distance", "pdist", "poisson_nll_loss",
    "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
]


# --- helpers ----------------------------------------------------------------------------------


def _reduction(size_average: Any, reduce: Any, reduction: str, who: str) -> str:
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _check_reduction(reduction, who)
    return reduction


def _as_tensor(value: Any, like: Tensor) -> Tensor:
    """A Tensor stays itself (and keeps its gradient); an array, list or number becomes a
    constant Tensor of ``like``'s dtype."""
    if isinstance(value, Tensor):
        return value
    return Tensor(np.asarray(value, dtype=like.dtype))


def _labels(target: Any) -> np.ndarray:
    """Targets that only pick a branch (-1/1 labels, class indices), as a constant array."""
    return target.numpy() if isinstance(target, Tensor) else np.asarray(target)


def _broadcast(who: str, **operands: Any) -> tuple[int, ...]:
    """The shape the operands broadcast to, or an error naming each of them and its shape."""
    shapes = {name: tuple(np.shape(value)) for name, value in operands.items()}
    try:
        return tuple(np.broadcast_shapes(*shapes.values()))
    except ValueError:
        listed = ", ".join(f"{name} of shape {shape}" for name, shape in shapes.items())
        raise _error(f"{who}: {listed} do not broadcast against each other; give them the "
                     "same shape (one value per example)") from None


def _vector_norm(x: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    """PyTorch's vector p-norm along ``dim``: p = 0 counts the non-zeros (gradient 0), p = inf
    the largest |x|, -inf the smallest, other p (sum |x|^p)^(1/p)."""
    if p == 0:
        count = (x.detach() != 0).sum(dim, keepdim=keepdim).to(x.dtype)
        return (x * 0).sum(dim, keepdim=keepdim) + count  # in the graph, with gradient 0
    if p > 0 or p == -math.inf:
        return x.norm(p, dim, keepdim)
    return (x.abs() ** p).sum(dim, keepdim=keepdim) ** (1.0 / p)


# --- distances --------------------------------------------------------------------------------


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p along the last dim (the inputs broadcast). PyTorch adds ``eps`` to
    the difference, not to the norm: equal inputs are a distance ||eps||_p apart, where the
    gradient is defined (d/dx1 = sign(d) |d|^(p-1) / ||d||^(p-1) with d = x1 - x2 + eps)."""
    _broadcast("pairwise_distance", x1=x1, x2=x2)
    difference = x1 - x2 + eps
    if difference.ndim == 0:  # two numbers: |x1 - x2 + eps|
        return _vector_norm(difference.reshape(1), p, 0, False)
    return _vector_norm(difference, p, -1, keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distance ||x_i - x_j||_p between every pair of rows i < j of an (N, M)
    input, in the order (0, 1), (0, 2), ..., (1, 2), ...: N (N - 1) / 2 values (no eps).
    Gradient: pairwise_distance's for each pair, + to row i and - to row j; 0 at a zero
    distance, as in PyTorch."""
    if input.ndim != 2:
        raise _error(f"pdist: only supports 2D tensors (N rows of M features), got a "
                     f"{input.ndim}D input of shape {tuple(input.shape)}", RuntimeError)
    if p < 0:
        raise _error(f"pdist: only supports non-negative p values, got p={p}", RuntimeError)
    _check_floating(input, "pdist")
    rows, columns = np.triu_indices(input.shape[0], 1)
    return _vector_norm(input[rows] - input[columns], p, 1, False)


# --- ranking and embedding losses --------------------------------------------------------------


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target = 1, max(0, cos(x1, x2) - margin) where target = -1 (0
    for other targets), with cos = sum(x1 x2) / sqrt((sum x1^2 + 1e-12)(sum x2^2 + 1e-12))
    along the last dim, as PyTorch computes it. Inputs (N, D) with target (N,), or (D,)
    with a 0-d target. Gradient: -dcos for target 1, dcos where cos > margin for -1, with
    dcos/dx1 = x2 / (|x1| |x2|) - cos x1 / |x1|^2."""
    who = "cosine_embedding_loss"
    reduction = _reduction(size_average, reduce, reduction, who)
    labels = _labels(target)
    if labels.ndim > 1:
        raise _error(f"{who}: 0D or 1D target tensor expected (one -1/1 label per pair), "
                     f"multi-target not supported; got target of shape {labels.shape}",
                     RuntimeError)
    expected = labels.ndim + 1
    if input1.ndim != expected or input2.ndim != expected:
        raise _error(f"{who}: a {labels.ndim}D target (shape {labels.shape}) expects "
                     f"{expected}D inputs, but got input1 of shape {tuple(input1.shape)} and "
                     f"input2 of shape {tuple(input2.shape)}", RuntimeError)
    _check_floating(input1, who, "input1")
    _broadcast(who, input1=input1, input2=input2)
    dim = labels.ndim  # the feature dim
    product = (input1 * input2).sum(dim)
    squares = ((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)
    cosine = product / squares.sqrt()
    _broadcast(who, cosine_of_the_inputs=cosine, target=labels)
    loss = (where(labels == 1, 1 - cosine, 0.0)
            + where(labels == -1, (cosine - margin).clamp(min=0), 0.0))
    return _reduce(loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target (input1 - input2) + margin): target = 1 asks input1 to rank above
    input2 by ``margin``, target = -1 below. The three have the same number of dims and
    broadcast. Gradient where the loss is >= 0 (clamp_min's, as PyTorch): d/dinput1 =
    -target, d/dinput2 = target, d/dtarget = -(input1 - input2); 0 elsewhere."""
    who = "margin_ranking_loss"
    reduction = _reduction(size_average, reduce, reduction, who)
    target = _as_tensor(target, input1)
    if not input1.ndim == input2.ndim == target.ndim:
        raise _error(f"{who}: all input tensors should have the same number of dimensions, "
                     f"but got input1 of shape {tuple(input1.shape)}, input2 of shape "
                     f"{tuple(input2.shape)} and target of shape {tuple(target.shape)}",
                     RuntimeError)
    _broadcast(who, input1=input1, input2=input2, target=target)
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input: Tensor, target: Any, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """input where target = 1, max(0, margin - input) where target = -1 (input is usually a
    distance: small for similar pairs). PyTorch's formula: where(target != 1,
    max(0, margin - input), 0) + where(target != -1, input, 0); they broadcast. Gradient:
    1 for target 1, -1 for target -1 where input <= margin, 0 above."""
    who = "hinge_embedding_loss"
    reduction = _reduction(size_average, reduce, reduction, who)
    labels = _labels(target)
    _broadcast(who, input=input, target=labels)
    loss = (where(labels != 1, (margin - input).clamp(min=0), 0.0)
            + where(labels != -1, input, 0.0))
    return _reduce(loss, reduction)


def _constant_target(target: Any, input: Tensor, who: str) -> Tensor:
    if isinstance(target, Tensor) and target.requires_grad:
        raise _error(f"{who}: the loss is not differentiable with respect to target (as in "
                     f"PyTorch); give target.detach() (shape {tuple(target.shape)})",
                     RuntimeError)
    return _as_tensor(target, input)


def soft_margin_loss(input: Tensor, target: Any, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target input)) for labels -1/1 (a smooth hinge), as PyTorch computes
    it: log1p(exp(-target input)) (inf where -target input > ~88 in float32, as PyTorch's).
    Gradient: d/dinput = -target sigmoid(-target input)."""
    who = "soft_margin_loss"
    reduction = _reduction(size_average, reduce, reduction, who)
    target = _constant_target(target, input, who)
    _broadcast(who, input=input, target=target)
    return _reduce((-target * input).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Any, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross entropy of the logits against 0/1 targets, one per class, averaged over
    the classes (the last dim): -mean_c (y_c log sigmoid(x_c) + (1 - y_c) log sigmoid(-x_c)),
    each class's term times ``weight`` if given. One loss per example: (N,). Gradient:
    d/dx_c = weight_c (sigmoid(x_c) - y_c) / C."""
    who = "multilabel_soft_margin_loss"
    reduction = _reduction(size_average, reduce, reduction, who)
    if input.ndim == 0:
        raise _error(f"{who}: input needs a class dim (the last): shape (C,) or (N, C), got a "
                     "0-d tensor", IndexError)
    _check_floating(input, who)
    target = _as_tensor(target, input)
    _broadcast(who, input=input, target=target, **({} if weight is None else {"weight": weight}))
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.shape[-1]
    return _reduce(loss, reduction)


def _scores_matrix(input: Tensor, who: str) -> Tensor:
    """The (N, C) scores of a multi-class margin loss: (C,) and 0-d inputs are one example."""
    if input.ndim > 2 or (input.ndim > 0 and input.shape[-1] == 0):
        raise _error(f"{who}: expected non-empty vector or matrix with optional 0-dim batch "
                     f"size, (C,) or (N, C), but got input of shape {tuple(input.shape)}",
                     RuntimeError)
    _check_floating(input, who)
    return input if input.ndim == 2 else input.reshape(1, -1)


def _class_indices(labels: np.ndarray, who: str) -> None:
    if labels.dtype.kind not in "iu":
        raise _error(f"{who}: target has dtype {labels.dtype} (shape {labels.shape}); class "
                     "indices must be integers (use .long())", TypeError)


def multi_margin_loss(input: Tensor, target: Any, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss of scores x (N, C) against class indices y (N,):
    sum over i != y of w[y] max(0, margin - x[y] + x[i])^p, divided by C (p is 1 or 2).
    Gradient: each i != y with z_i = margin - x[y] + x[i] > 0 adds w[y] p z_i^(p-1) / C to
    x[i] and takes it from x[y]."""
    who = "multi_margin_loss"
    reduction = _reduction(size_average, reduce, reduction, who)
    if p not in (1, 2):
        raise _error(f"{who}: only p == 1 and p == 2 supported, got p={p}", ValueError)
    if isinstance(weight, Tensor) and weight.ndim != 1:
        raise _error(f"{who}: weight must be one-dimensional (one weight per class), got "
                     f"weight of shape {tuple(weight.shape)}", ValueError)
    scores = _scores_matrix(input, who)
    examples, classes = scores.shape
    labels = _labels(target)
    _class_indices(labels, who)
    if labels.ndim > 1 or labels.size != examples:
        raise _error(f"{who}: target should be 1-D with one class index per example: expected "
                     f"target of shape ({examples},), but got {labels.shape} for input of shape "
                     f"{tuple(input.shape)}", RuntimeError)
    labels_flat = labels.reshape(examples)
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        wrong = labels_flat[(labels_flat < 0) | (labels_flat >= classes)][0]
        raise _error(f"{who}: target out of range: it holds class index {wrong}, but the input "
                     f"of shape {tuple(input.shape)} has C = {classes} classes (0 to "
                     f"{classes - 1})", IndexError)
    weights = _class_weight(weight, scores, who)
    picked = gather(scores, 1, labels_flat[:, None])  # x[y], (N, 1)
    hinge = (margin - picked + scores).relu()  # relu: no gradient where exactly 0, as PyTorch
    if p == 2:
        hinge = hinge * hinge
    scale = (np.arange(classes) != labels_flat[:, None]).astype(scores.dtype)  # i != y
    if weights is not None:
        scale = scale * weights[labels_flat][:, None]
    loss = (hinge * scale).sum(1) / classes
    if input.ndim < 2:
        loss = loss.reshape(labels.shape)  # one example: shaped as its target, () or (1,)
    return _reduce(loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Any, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """The multi-label hinge loss: each row of ``target`` (the input's shape, int) lists an
    example's classes, ended by the first -1. The loss sums max(0, 1 - (x[j] - x[i])) over
    each listed class j and each class i not listed, divided by C. Gradient: each such pair
    with 1 - (x[j] - x[i]) > 0 adds 1 / C to x[i] and takes 1 / C from x[j]."""
    who = "multilabel_margin_loss"
    reduction = _reduction(size_average, reduce, reduction, who)
    scores = _scores_matrix(input, who)
    examples, classes = scores.shape
    labels = _labels(target)
    _class_indices(labels, who)
    if labels.shape != tuple(input.shape):
        raise _error(f"{who}: inconsistent target size: target of shape {labels.shape} for "
                     f"input of shape {tuple(input.shape)}; the target has the input's shape "
                     "(each row: the class indices, then -1 after the last)", RuntimeError)
    labels = labels.reshape(examples, classes)
    if labels.size and (labels.min() < -1 or labels.max() >= classes):
        raise _error(f"{who}: target is out of range: it holds {labels.min()} to "
                     f"{labels.max()}, but class indices go from 0 to {classes - 1} (-1 ends "
                     "the list)", IndexError)
    pairs = np.zeros((examples, classes, classes), dtype=scores.dtype)  # [n, listed j, other i]
    for n, row in enumerate(labels):
        ends = np.flatnonzero(row < 0)
        listed = row[:ends[0] if ends.size else classes]
        others = np.ones(classes, dtype=bool)
        others[listed] = False
        for j in listed:  # a class listed twice counts twice, as in PyTorch
            pairs[n, j] += others
    margins = 1 - scores.reshape(examples, classes, 1) + scores.reshape(examples, 1, classes)
    loss = (margins.relu() * pairs).sum((1, 2)) / classes
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def _same_ndim(anchor: Tensor, positive: Tensor, negative: Tensor, who: str) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise _error(f"{who}: the anchor, positive, and negative tensors are expected to have "
                     f"the same number of dimensions, but got anchor of shape "
                     f"{tuple(anchor.shape)}, positive {tuple(positive.shape)} and negative "
                     f"{tuple(negative.shape)}", RuntimeError)


def _positive_margin(margin: float, who: str) -> None:
    if margin <= 0:
        raise _error(f"{who}: margin must be greater than 0, got {margin}", ValueError)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with d = pairwise_distance(., ., p, eps): the anchor
    should be nearer the positive than the negative by ``margin``. ``swap``: d(a, n) becomes
    min(d(a, n), d(p, n)). Gradient where the loss is >= 0: that of d(a, p) - d(a, n), each
    the pairwise_distance gradient; 0 elsewhere."""
    who = "triplet_margin_loss"
    reduction = _reduction(size_average, reduce, reduction, who)
    _positive_margin(margin, who)
    _same_ndim(anchor, positive, negative, who)
    _broadcast(who, anchor=anchor, positive=positive, negative=negative)
    positive_distance = pairwise_distance(anchor, positive, p, eps)
    negative_distance = pairwise_distance(anchor, negative, p, eps)
    if swap:
        negative_distance = negative_distance.minimum(pairwise_distance(positive, negative,
                                                                        p, eps))
    return _reduce((margin + positive_distance - negative_distance).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """triplet_margin_loss with any distance: max(0, margin + d(a, p) - d(a, n)), where
    ``distance_function(x1, x2)`` gives one distance per example (default:
    pairwise_distance); ``swap``: d(a, n) becomes min(d(a, n), d(p, n)). Gradient: that of
    d(a, p) - d(a, n) where the loss is >= 0, through the distance function's ops."""
    who = "triplet_margin_with_distance_loss"
    _check_reduction(reduction, who)
    _positive_margin(margin, who)
    _same_ndim(anchor, positive, negative, who)
    distance = pairwise_distance if distance_function is None else distance_function
    positive_distance = distance(anchor, positive)
    negative_distance = distance(anchor, negative)
    if swap:
        negative_distance = negative_distance.minimum(distance(positive, negative))
    return _reduce((margin + positive_distance - negative_distance).clamp(min=0), reduction)


# --- likelihood losses ------------------------------------------------------------------------


def poisson_nll_loss(input: Tensor, target: Any, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of counts ``target`` under Poisson(rate), without the
    constant log(target!): exp(input) - target input for a log-rate input (``log_input``),
    else input - target log(input + eps). ``full`` adds Stirling's approximation of
    log(target!), target log target - target + log(2 pi target) / 2, where target > 1.
    Gradient: d/dinput = exp(input) - target (log_input) or 1 - target / (input + eps);
    d/dtarget = -input or -log(input + eps), plus log(target) + 1 / (2 target) where the
    Stirling term counts."""
    who = "poisson_nll_loss"
    reduction = _reduction(size_average, reduce, reduction, who)
    _check_floating(input, who)
    target = _as_tensor(target, input)
    _broadcast(who, input=input, target=target)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        counted = target > 1
        safe = where(counted, target, 1.0)  # no log(0) in the branch that is left out
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + where(counted, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Any, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of ``target`` under Normal(input, var), without the
    constant: (log var + (input - target)^2 / var) / 2 (``full`` adds log(2 pi) / 2).

    ``var``: the input's shape (one variance per value), or one fewer dim or size 1 in one
    dim (shared; broadcast), or a float. As in PyTorch, var is clamped to at least ``eps``
    under no_grad: the value is clamped, the gradient passes as if it were not.
    Gradient: d/dinput = (input - target) / var, d/dvar = (1 / var - (input - target)^2 /
    var^2) / 2 (summed over the values that share a variance)."""
    who = "gaussian_nll_loss"
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise _error(f"{who}: var has negative entry/entries: var = {var}", ValueError)
        var = Tensor(np.full(tuple(input.shape), var, dtype=input.dtype))
    elif not isinstance(var, Tensor):
        raise _error(f"{who}: var must be a Tensor or a float, got {type(var).__name__}",
                     TypeError)
    elif bool((var < 0).any()):
        raise _error(f"{who}: var has negative entry/entries (var of shape "
                     f"{tuple(var.shape)}); variances are >= 0", ValueError)
    input_shape, var_shape = tuple(input.shape), tuple(var.shape)
    if var_shape != input_shape:
        if input_shape[:-1] == var_shape:  # one variance per row: (N, D) input, (N,) var
            var = var.unsqueeze(-1)
        elif not (len(input_shape) == len(var_shape) and sum(
                v for i, v in zip(input_shape, var_shape) if i != v) == 1):
            raise _error(f"{who}: var is of incorrect size: var of shape {var_shape} for input "
                         f"of shape {input_shape}; give var the input's shape, the input's "
                         f"shape without its last dim {input_shape[:-1]}, or size 1 in the "
                         "one dim it shares", ValueError)
    _check_reduction(reduction, who)
    target = _as_tensor(target, input)
    _broadcast(who, input=input, target=target, var=var)
    var = var.clone()
    with no_grad():  # clamped in place, without gradient: d/dvar passes through unchanged
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# --- connectionist temporal classification -----------------------------------------------------

# the log-probability of what cannot happen: finite, so that logsumexp's gradient stays
# finite where every term is impossible (exp(-1e30 - x) is exactly 0 next to any real path)
IMPOSSIBLE = -1e30


def _lengths(lengths: Any, batch: int, name: str, who: str) -> np.ndarray:
    values = np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths)
    if values.dtype.kind not in "iu" or values.size != batch or values.ndim > 1:
        raise _error(f"{who}: {name} must hold {batch} integer length(s), one per batch element "
                     f"(batch_size = {batch}), got {values.dtype} of shape {values.shape}",
                     RuntimeError)
    if values.size and values.min() < 0:
        raise _error(f"{who}: {name} must not be negative, got {values.tolist()}",
                     RuntimeError)
    return values.reshape(batch)


def _ctc_nll(emissions: Tensor, labels: np.ndarray, blank: int) -> Tensor:
    """-log p(labels | one sequence) by the forward (alpha) recursion over the extended labels
    l' = (blank, l1, blank, l2, ..., blank): alpha_t(s) = log p_t(l'_s) + logsumexp of
    alpha_{t-1} at s, s - 1, and s - 2 where l'_s is a label that differs from l'_(s-2).
    ``emissions`` (T, C) holds the sequence's log-probabilities."""
    extended = np.full(2 * len(labels) + 1, blank)
    extended[1::2] = labels
    odd = np.arange(len(extended)) % 2 == 1
    can_skip = odd & (np.arange(len(extended)) >= 3)
    can_skip[3:] &= extended[3:] != extended[1:-2]
    picked = emissions[:, extended]  # (T, L): log p_t(l'_s)
    alpha = where(np.arange(len(extended)) < 2, picked[0], IMPOSSIBLE)  # start: blank or l1
    length = len(extended)
    for t in range(1, emissions.shape[0]):
        step = pad_tensor(alpha, ((1, 0),), value=IMPOSSIBLE)[:length]  # from s - 1
        skip = where(can_skip, pad_tensor(alpha, ((2, 0),), value=IMPOSSIBLE)[:length],
                     IMPOSSIBLE)  # from s - 2
        alpha = picked[t] + stack([alpha, step, skip]).logsumexp(0)
    return -(alpha[-1] if len(labels) == 0 else alpha[-2:].logsumexp(0))


def ctc_loss(log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification: -log of the probability of the target
    sequence, summed over every alignment of it to the T frames (repeats merged, blanks
    removed), for ``log_probs`` (T, N, C) (log_softmax over C; or (T, C), one sequence).
    ``targets``: (N, S) padded, or 1-D, the N targets one after another. "mean" divides
    each loss by its target length (at least 1), then averages over the batch. A target
    that no alignment fits (too short an input, or a log-probability of -inf on every
    alignment) has an infinite loss (``zero_infinity``: 0, with gradient 0).

    The gradient is the true derivative with respect to ``log_probs``; through
    log_softmax it equals PyTorch's (PyTorch's own ctc_loss returns, for log_probs, the
    gradient with respect to the logits: exp(log_probs) - the alignments' occupancies)."""
    who = "ctc_loss"
    _check_reduction(reduction, who)
    _check_floating(log_probs, who, "log_probs")
    if log_probs.ndim not in (2, 3):
        raise _error(f"{who}: log_probs must be (T, N, C) or (T, C) for one sequence, got shape "
                     f"{tuple(log_probs.shape)}", RuntimeError)
    unbatched = log_probs.ndim == 2
    frames, batch, classes = (log_probs.shape[0], 1, log_probs.shape[1]) if unbatched \
        else log_probs.shape
    if not 0 <= blank < classes:
        raise _error(f"{who}: blank must be in label range: blank={blank}, but log_probs of "
                     f"shape {tuple(log_probs.shape)} has C = {classes} classes", RuntimeError)
    labels = _labels(targets)
    _class_indices(labels, who)
    input_lengths = _lengths(input_lengths, batch, "input_lengths", who)
    target_lengths = _lengths(target_lengths, batch, "target_lengths", who)
    if input_lengths.max(initial=0) > frames:
        raise _error(f"{who}: expected input_lengths to have value at most {frames} (the T of "
                     f"log_probs of shape {tuple(log_probs.shape)}), but got value "
                     f"{input_lengths.max()}", RuntimeError)
    if unbatched or labels.ndim == 2:  # padded: row b holds target b
        rows = labels.reshape(1, -1) if unbatched else labels
        if rows.shape[0] != batch or target_lengths.max(initial=0) > rows.shape[1]:
            raise _error(f"{who}: padded targets of shape {labels.shape} do not hold "
                         f"target_lengths {target_lengths.tolist()} for a batch of {batch}",
                         RuntimeError)
        sequences = [row[:length] for row, length in zip(rows, target_lengths)]
    else:  # concatenated
        ends = np.cumsum(target_lengths)
        if labels.ndim != 1 or ends[-1] > labels.size:
            raise _error(f"{who}: 1-D targets hold the targets one after another: "
                         f"sum(target_lengths) = {ends[-1]}, but targets has shape "
                         f"{labels.shape}", RuntimeError)
        sequences = [labels[end - length:end] for end, length in zip(ends, target_lengths)]
    for sequence in sequences:
        wrong = sequence[(sequence < 0) | (sequence >= classes)]
        if wrong.size:
            raise _error(f"{who}: targets hold class {wrong[0]}, but log_probs of shape "
                         f"{tuple(log_probs.shape)} has C = {classes} classes", IndexError)
        if np.any(sequence == blank):  # PyTorch documents it as invalid, and computes on
            raise _error(f"{who}: a target holds the blank class {blank}; targets are labels "
                         f"other than blank (blank={blank} marks 'no label' between them)",
                         ValueError)
    losses = []
    # 0 with a path back to log_probs, whose gradient is 0 (log_probs.sum() * 0 would be
    # NaN where a log-probability is -inf)
    zero = where(np.zeros(log_probs.shape, dtype=bool), log_probs, 0.0).sum()
    for b, sequence in enumerate(sequences):
        emissions = log_probs[:input_lengths[b]] if unbatched else \
            log_probs[:input_lengths[b], b]
        repeats = int(np.sum(sequence[1:] == sequence[:-1]))
        impossible = zero + (0.0 if zero_infinity else math.inf)
        if input_lengths[b] < len(sequence) + repeats:  # no alignment fits: infinite loss
            losses.append(impossible)
        elif input_lengths[b] == 0:  # an empty input, an empty target: probability 1
            losses.append(zero)
        else:
            nll = _ctc_nll(emissions, sequence, blank)
            # every alignment passes a log-probability of -inf: probability 0, so the loss
            # is infinite too (the recursion's stand-in for -inf leaves about 1e30)
            losses.append(impossible if float(nll.detach().numpy()) >= -IMPOSSIBLE / 2
                          else nll)
    loss = stack(losses)
    if reduction == "mean":
        return (loss / np.maximum(target_lengths, 1).astype(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.reshape(()) if unbatched else loss
