"""Loss Functions with an analytic backward: cross entropy, binary cross entropy (from
probabilities and from logits).

Each takes ``reduction``: ``"none"`` keeps one loss per element (or per position, for
cross entropy), ``"sum"`` adds them up, ``"mean"`` averages them. Inputs are checked by
``minigrad.nn.functional``, which calls these.
"""

from __future__ import annotations

import numpy as np

from .. import tensor_class
from ..function import Function
from .activation import log_softmax

LOG_FLOOR = -100.0  # PyTorch clamps the logs of binary_cross_entropy here: finite at 0 and 1
BCE_EPSILON = 1e-12  # and keeps its gradient's denominator x (1 - x) at least this


def _reduce(loss: np.ndarray, reduction: str, count: int, dtype: np.dtype) -> np.ndarray:
    """One loss per element -> the result; ``count`` is what "mean" divides by."""
    if reduction == "none":
        return loss.astype(dtype, copy=False)
    total = loss.sum()
    if reduction == "mean":
        if count == 0:  # nothing to average: NaN, as in PyTorch
            return np.asarray(np.nan, dtype=dtype)
        total = total / count
    return np.asarray(total, dtype=dtype)


def _reduced_gradient(grad_output: np.ndarray, reduction: str, count: int) -> np.ndarray:
    """The gradient of the result with respect to each element's loss (broadcastable)."""
    if reduction == "mean":
        # count 0 (all ignored): the loss is NaN, but every gradient is 0, as in PyTorch
        return grad_output / (count if count else 1)
    return grad_output


class _Loss(Function):
    @staticmethod
    def output_dtype(input, *args, **kwargs):
        return input.dtype


# --- cross entropy ---------------------------------------------------------------------------


class CrossEntropy(_Loss):
    """loss = (1 - eps) (-log p[target]) + eps/C sum_c (-log p_c), p = softmax(logits);
    dloss/dlogits = p - (1 - eps) onehot(target) - eps/C.
    With probability targets t: loss = -sum_c t_c log p_c, dloss/dlogits = p sum_c t_c - t.

    Logits are (N, C, d1, ...) or (C,): the class dim is 1 (0 for 1-D logits). Class-index
    targets equal to ``ignore_index`` add nothing and "mean" leaves them out of the count.

    Class weights w (an array (C,), no gradient), as in PyTorch: a class-index loss is
    (1 - eps) w[target] (-log p[target]) + eps/C sum_c w_c (-log p_c), and "mean" divides
    by the sum of w[target] over the targets kept; so
    dloss/dlogits = p ((1 - eps) w[target] + eps/C sum_c w_c) - (1 - eps) w[target]
    onehot(target) - eps/C w. A probability target t becomes w t (and "mean" still divides
    by the number of positions).
    """

    @staticmethod
    def forward(ctx, input, target, ignore_index=-100, label_smoothing=0.0, reduction="mean",
                weight=None):
        axis = 1 if input.ndim > 1 else 0
        classes = input.shape[axis]
        log_p = log_softmax(input, axis)  # stable: logits of +-1000 give finite values
        ctx.axis, ctx.reduction, ctx.smoothing = axis, reduction, label_smoothing
        ctx.probabilities = target.dtype.kind == "f"
        if weight is not None:  # shaped to broadcast along the class dim
            weight = weight.astype(input.dtype, copy=False).reshape(
                [classes if i == axis else 1 for i in range(input.ndim)])
        ctx.weight = weight
        if ctx.probabilities:  # target has the input's shape
            target = target.astype(input.dtype, copy=False)
            smoothed = target * (1 - label_smoothing) + label_smoothing / classes
            if weight is not None:
                smoothed = smoothed * weight
            loss = -np.sum(smoothed * log_p, axis=axis)
            ctx.count = loss.size
            ctx.save_for_backward(log_p, smoothed)
            return _reduce(loss, reduction, ctx.count, input.dtype)
        # class indices: target has the input's shape without the class dim
        keep = target != ignore_index
        if keep.all():
            keep = None  # the usual case: nothing ignored, no masks needed
        else:
            target = np.where(keep, target, 0)  # any valid class; those losses are masked
        picked = _at_target(log_p, target, axis)
        if weight is None:
            loss = -(1 - label_smoothing) * picked
            if label_smoothing:
                loss = loss - label_smoothing / classes * np.sum(log_p, axis=axis)
        else:
            target_weight = weight.reshape(-1)[target]  # w[target], one per position
            if keep is not None:
                target_weight = np.where(keep, target_weight, 0)
            loss = -(1 - label_smoothing) * target_weight * picked
            if label_smoothing:
                loss = loss - label_smoothing / classes * np.sum(weight * log_p, axis=axis)
        if keep is not None:
            loss = np.where(keep, loss, 0)
        if weight is not None:
            ctx.count = float(np.sum(target_weight))
        else:
            ctx.count = loss.size if keep is None else int(np.count_nonzero(keep))
        ctx.save_for_backward(log_p, target, keep)
        return _reduce(loss, reduction, ctx.count, input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        axis, reduction, weight = ctx.axis, ctx.reduction, ctx.weight
        scale = _reduced_gradient(grad_output, reduction, ctx.count)
        if reduction == "none":
            scale = np.expand_dims(scale, axis)  # one value per position, for every class
        if ctx.probabilities:
            log_p, smoothed = ctx.saved_tensors
            p = np.exp(log_p)
            grad_input = (p * np.sum(smoothed, axis=axis, keepdims=True) - smoothed) * scale
            grad_target = None
            if ctx.needs_input_grad[1]:
                grad_target = -log_p * (1 - ctx.smoothing) * scale
                if weight is not None:
                    grad_target = grad_target * weight
            return grad_input, grad_target, None, None, None, None
        log_p, target, keep = ctx.saved_tensors
        classes = log_p.shape[axis]
        grad = np.exp(log_p)  # softmax
        if weight is None:
            if ctx.smoothing:
                grad -= ctx.smoothing / classes
            _subtract_at_target(grad, target, axis, 1 - ctx.smoothing)  # - (1 - eps) onehot
        else:
            target_weight = np.expand_dims(weight.reshape(-1)[target], axis)
            grad *= (1 - ctx.smoothing) * target_weight + ctx.smoothing / classes * weight.sum()
            if ctx.smoothing:
                grad -= ctx.smoothing / classes * weight
            _subtract_at_target(grad, target, axis, 1 - ctx.smoothing,
                                target_weight)  # - (1 - eps) w[target] onehot
        if keep is not None:
            scale = scale * np.expand_dims(keep, axis)  # ignored positions get nothing
        grad *= scale
        # nothing for the class indices, ignore_index, label_smoothing, reduction, weight
        return grad, None, None, None, None, None

    # create_graph=True: the same formulas from recorded ops (higher_order.py); the
    # softmax is recomputed from the input Tensor so that its history is in the gradient
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        input, target = ctx.args[0], ctx.args[1]
        axis, smoothing, weight = ctx.axis, ctx.smoothing, ctx.weight
        classes = input.shape[axis]
        scale = _reduced_gradient(grad_output, ctx.reduction, ctx.count)
        if ctx.reduction == "none":
            scale = scale.unsqueeze(axis)
        p = input.softmax(axis)
        if ctx.probabilities:
            smoothed = target * (1 - smoothing) + smoothing / classes
            if weight is not None:
                smoothed = smoothed * weight
            grad_input = (p * smoothed.sum(axis=axis, keepdims=True) - smoothed) * scale
            grad_target = None
            if ctx.needs_input_grad[1]:
                grad_target = -input.log_softmax(axis) * (1 - smoothing) * scale
                if weight is not None:
                    grad_target = grad_target * weight
            return grad_input, grad_target, None, None, None, None
        _, target, keep = ctx.saved_tensors  # the class indices, with ignored ones moved
        if weight is None:
            factor = 1.0
            constant = np.full(input.shape, -smoothing / classes, dtype=input.dtype)
            _subtract_at_target(constant, target, axis, 1 - smoothing)  # - (1 - eps) onehot
        else:  # the weighted formula: p times a constant, minus a constant
            target_weight = np.expand_dims(weight.reshape(-1)[target], axis)
            factor = ((1 - smoothing) * target_weight
                      + smoothing / classes * weight.sum()).astype(input.dtype)
            constant = np.broadcast_to(-smoothing / classes * weight,
                                       input.shape).astype(input.dtype)
            _subtract_at_target(constant, target, axis, 1 - smoothing, target_weight)
        if keep is not None:
            scale = scale * np.expand_dims(keep, axis).astype(input.dtype)
        return (p * factor + constant) * scale, None, None, None, None, None

    @staticmethod
    def output_shape(input, target, ignore_index=-100, label_smoothing=0.0, reduction="mean",
                     weight=None):
        if reduction != "none":
            return ()
        axis = 1 if len(input.shape) > 1 else 0
        return tuple(s for i, s in enumerate(input.shape) if i != axis)


def _at_target(log_p: np.ndarray, target: np.ndarray, axis: int) -> np.ndarray:
    """``log_p`` at each position's target class: log_p[n, target[n], ...]."""
    if log_p.ndim == 2:  # (N, C): one fancy index, the usual case
        return log_p[np.arange(len(target)), target]
    index = np.expand_dims(target, axis)
    return np.take_along_axis(log_p, index, axis=axis).squeeze(axis)


def _subtract_at_target(grad: np.ndarray, target: np.ndarray, axis: int, value: float,
                        scale: np.ndarray | None = None) -> None:
    """grad[n, target[n], ...] -= value (times scale[n, 0, ...] if given), in place (each
    position has one target)."""
    if grad.ndim == 2 and scale is None:
        grad[np.arange(len(target)), target] -= value
        return
    shape = [1] * grad.ndim
    shape[axis] = grad.shape[axis]
    onehot = np.arange(grad.shape[axis]).reshape(shape) == np.expand_dims(target, axis)
    grad -= value * onehot if scale is None else value * scale * onehot


# --- binary cross entropy --------------------------------------------------------------------


def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|)."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


class BinaryCrossEntropyWithLogits(_Loss):
    """loss = -(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))), computed as
    max(x, 0) - x y + log(1 + e^-|x|);  dloss/dx = sigmoid(x) - y,  dloss/dy = -x.

    ``pos_weight`` p (an array broadcast against x, usually one per class) weighs the
    positive term: loss = -(p y log sigmoid(x) + (1 - y) log(1 - sigmoid(x)))
    = (1 - y) x + (1 + (p - 1) y) softplus(-x);  dloss/dx = (1 + (p - 1) y) sigmoid(x) - p y,
    dloss/dy = (p - 1) softplus(-x) - x. ``weight`` w multiplies each loss (and so each
    gradient). Both are constants (no gradient), as in PyTorch's usual use.
    """

    @staticmethod
    def forward(ctx, input, target, reduction="mean", weight=None, pos_weight=None):
        target = np.asarray(target, dtype=input.dtype)
        if pos_weight is None:
            loss = np.maximum(input, 0) - input * target + np.log1p(np.exp(-np.abs(input)))
        else:
            loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * _softplus(-input)
        if weight is not None:
            loss = loss * weight
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.weight, ctx.pos_weight = reduction, weight, pos_weight
        return _reduce(loss, reduction, loss.size, input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        input, target = ctx.saved_tensors
        weight, pos_weight = ctx.weight, ctx.pos_weight
        scale = _reduced_gradient(grad_output, ctx.reduction, input.size)
        if weight is not None:
            scale = scale * weight
        sigmoid = 0.5 * (np.tanh(0.5 * input) + 1)  # no overflow for large |x|
        grad_target = None
        if pos_weight is None:
            grad_input = (sigmoid - target) * scale
            if ctx.needs_input_grad[1]:
                grad_target = -input * scale
        else:
            grad_input = ((1 + (pos_weight - 1) * target) * sigmoid - pos_weight * target) \
                * scale
            if ctx.needs_input_grad[1]:
                grad_target = ((pos_weight - 1) * _softplus(-input) - input) * scale
        return grad_input, grad_target, None, None, None  # nothing for the constants

    # create_graph=True: the same formulas on the input Tensors (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        input, target = ctx.args[0], _target_of(ctx)
        weight, pos_weight = ctx.weight, ctx.pos_weight
        scale = _reduced_gradient(grad_output, ctx.reduction, int(np.prod(input.shape)))
        if weight is not None:
            scale = scale * weight
        grad_target = None
        if pos_weight is None:
            grad_input = (input.sigmoid() - target) * scale
            if ctx.needs_input_grad[1]:
                grad_target = -input * scale
        else:
            grad_input = (input.sigmoid() * (target * (pos_weight - 1) + 1)
                          - target * pos_weight) * scale
            if ctx.needs_input_grad[1]:
                softplus_neg = (-input).relu() + (-input.abs()).exp().log1p()
                grad_target = (softplus_neg * (pos_weight - 1) - input) * scale
        return grad_input, grad_target, None, None, None

    @staticmethod
    def output_shape(input, target, reduction="mean", weight=None, pos_weight=None):
        return tuple(input.shape) if reduction == "none" else ()


def _target_of(ctx):
    """A binary cross entropy's target: the Tensor (with its history), or the constant."""
    target = ctx.args[1]
    if isinstance(target, tensor_class.Tensor):
        return target if target.dtype == ctx.args[0].dtype else target.to(ctx.args[0].dtype)
    return np.asarray(target, dtype=ctx.args[0].dtype)


def _check_probabilities(values: np.ndarray, name: str, hint: str) -> None:
    """PyTorch's check: every value in [0, 1] (NaN is not)."""
    outside = ~((values >= 0) & (values <= 1))
    if outside.any():
        error = ValueError(
            f"binary_cross_entropy: the {name} must hold probabilities in [0, 1], but it "
            f"holds {values[outside].flat[0]} ({name} shape {values.shape}); {hint}"
        )
        error.minigrad = True
        raise error


class BinaryCrossEntropy(_Loss):
    """loss = -(y log x + (1 - y) log(1 - x)), each log at least -100 (as in PyTorch);
    dloss/dx = (x - y) / max(x (1 - x), 1e-12),  dloss/dy = log(1 - x) - log x"""

    @staticmethod
    def forward(ctx, input, target, reduction="mean", weight=None):
        target = np.asarray(target, dtype=input.dtype)
        _check_probabilities(input, "input", "apply sigmoid first, or give the logits to "
                             "binary_cross_entropy_with_logits instead")
        _check_probabilities(target, "target", "targets are labels 0 and 1, or soft "
                             "labels between them")
        with np.errstate(divide="ignore"):  # log 0 = -inf, then clamped
            log_x = np.maximum(np.log(input), LOG_FLOOR)
            log_1_minus_x = np.maximum(np.log1p(-input), LOG_FLOOR)
        loss = -(target * log_x + (1 - target) * log_1_minus_x)
        if weight is not None:  # each loss weighed (a constant, as in PyTorch's usual use)
            loss = loss * weight
        ctx.save_for_backward(input, target, log_x, log_1_minus_x)
        ctx.reduction, ctx.weight = reduction, weight
        return _reduce(loss, reduction, loss.size, input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        input, target, log_x, log_1_minus_x = ctx.saved_tensors
        scale = _reduced_gradient(grad_output, ctx.reduction, input.size)
        if ctx.weight is not None:
            scale = scale * ctx.weight
        grad_input = scale * (input - target) / np.maximum(input * (1 - input), BCE_EPSILON)
        grad_target = scale * (log_1_minus_x - log_x) if ctx.needs_input_grad[1] else None
        return grad_input, grad_target, None, None  # nothing for reduction, weight

    # create_graph=True: the same formulas on the input Tensors (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        input, target = ctx.args[0], _target_of(ctx)
        scale = _reduced_gradient(grad_output, ctx.reduction, int(np.prod(input.shape)))
        if ctx.weight is not None:
            scale = scale * ctx.weight
        grad_input = (input - target) * scale / (input * (1 - input)).clamp(min=BCE_EPSILON)
        grad_target = None
        if ctx.needs_input_grad[1]:
            grad_target = ((1 - input).log().clamp(min=LOG_FLOOR)
                           - input.log().clamp(min=LOG_FLOOR)) * scale
        return grad_input, grad_target, None, None

    @staticmethod
    def output_shape(input, target, reduction="mean", weight=None):
        return tuple(input.shape) if reduction == "none" else ()
