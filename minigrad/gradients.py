"""The gradients at the backward loop's edges, checked: the seeds a pass starts from, and
what each backward (or a hook on its node) returned, fitted to its inputs.

A Function's backward may return a gradient of a broadcast shape (``sum_to_shape`` sums
it back) or of another dtype (cast to the input's); anything else is an error that names
who returned it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tensor_class
from .errors import ShapeError
from .messages import check_finite
from .state import thread


def roots(tensors: Any, gradients: Any, who: str) -> tuple[list, list]:
    """The tensors to differentiate and their gradients, as two lists of one length."""
    if isinstance(tensors, tensor_class.Tensor):  # one tensor, one gradient (or a 1-tuple)
        several = isinstance(gradients, (tuple, list)) and len(gradients) == 1 \
            and isinstance(gradients[0], tensor_class.Tensor)
        return [tensors], list(gradients) if several else [gradients]
    tensors = list(tensors)
    gradients = [None] * len(tensors) if gradients is None else list(gradients)
    if len(gradients) != len(tensors):
        raise RuntimeError(f"{who}: got {len(tensors)} tensor(s) but {len(gradients)} "
                           "gradient(s); give one gradient (or None) per tensor")
    return tensors, gradients


def seed_gradient(tensor: Any, gradient: Any, who: str = "backward") -> np.ndarray:
    """The gradient backward starts from: ones for a one-element tensor, or ``gradient``.
    ``who``: ``"backward"`` or ``"grad"`` (``mg.autograd.grad``, whose argument is
    ``grad_outputs=``), for the messages."""
    argument = "gradient" if who == "backward" else "grad_outputs"
    tensor.realize()
    if not tensor.requires_grad:
        raise RuntimeError(
            f"{who}: this tensor (shape {tensor.shape}) does not require grad and has no "
            "grad_fn, so there is nothing to differentiate. Create the inputs with "
            "requires_grad=True, and do not compute it inside no_grad()."
        )
    if gradient is None:
        if tensor._data.size != 1:
            raise RuntimeError(
                f"{who}: grad can be implicitly created only for a tensor with one "
                f"element, but this one has shape {tensor.shape}. Reduce it first (e.g. "
                f".sum() or .mean()), or pass {argument}= a tensor of shape {tensor.shape}."
            )
        return np.ones(tensor.shape, dtype=tensor.dtype)
    if isinstance(gradient, tensor_class.Tensor):
        gradient = gradient.numpy()
    gradient = np.asarray(gradient, dtype=tensor.dtype)
    if gradient.shape != tensor.shape:
        raise ShapeError(
            f"{who}: {argument} has shape {gradient.shape} but the tensor has shape "
            f"{tensor.shape}; they must be equal"
        )
    return gradient


def fit_gradients(node: Any, grads: tuple, who: str | None = None) -> tuple:
    """Check the gradients ``who`` (a hook on the node; None: the node's backward)
    returned for the node's inputs: one per positional input, each summed to that
    input's shape and cast to its dtype (None where no gradient is needed)."""
    args, needs_input_grad = node.args, node.needs_input_grad
    if len(grads) != len(args):
        if who is None and len(grads) > len(args) and all(g is None
                                                          for g in grads[len(args):]):
            return fit_gradients(node, grads[:len(args)])  # Nones for inputs left out
        who = who or f"{node.function.__name__}.backward"
        listed = len(grads) == 1 and isinstance(grads[0], list)
        raise RuntimeError(
            f"{who} returned {len(grads)} gradient(s), but forward received {len(args)} "
            "positional input(s). Return one gradient per input, in order (None for "
            "inputs that need none)." + (
                f" It returned a list of {len(grads[0])}, which counts as ONE gradient: "
                "return a tuple instead (return grad_x, grad_y)." if listed else "")
        )
    fitted = []
    position = -1  # (a counter, not enumerate(): see _backward_loop)
    for grad in grads:
        position += 1
        if grad is None or not needs_input_grad[position]:
            fitted.append(None)
            continue
        arg = args[position]
        # the usual case, one check: an array of its input's shape and dtype (dtypes are
        # compared with `is`, NumPy's native dtypes being single objects; this loop runs
        # for every node of every backward: callgrind, a dispatch step 3% fewer
        # instructions than with the full checks below)
        if type(grad) is np.ndarray and arg is not None and grad.shape == arg._data.shape \
                and grad.dtype is arg._data.dtype:
            fitted.append(grad)
        else:
            fitted.append(_fit(node, position, grad, who))
    if thread.modes.anomaly:
        for position, grad in enumerate(fitted):
            if grad is not None:
                check_finite(grad, f"the backward of {node.describe()} (gradient for input "
                                   f"{position})", args, node._trace)
    return tuple(fitted)


def _fit(node: Any, position: int, grad: Any, who: str | None) -> np.ndarray:
    """``grad`` for input ``position`` summed to that input's shape and cast to its
    dtype, or an error saying why it cannot be."""
    if type(grad) is not np.ndarray:  # a number, or a Tensor (from a hook; in lazy mode
        # one still to compute)
        grad = grad.realize()._data if isinstance(grad, tensor_class.Tensor) \
            else np.asarray(grad)
    arg = node.args[position]
    shape, dtype = (arg._data.shape, arg._data.dtype) if arg is not None \
        else node.input_shape_dtype(position)
    if grad.shape != shape:
        summed = sum_to_shape(grad, shape)
        if summed is None:
            who = who or f"{node.function.__name__}.backward"
            raise ShapeError(
                f"{who} returned a gradient of shape {grad.shape} for input {position}, "
                f"which has shape {shape}; it cannot be summed to that shape. A gradient "
                f"must have its input's shape {shape}, or a larger shape that {shape} "
                "broadcasts to (the engine then sums it back to the input's shape)."
            )
        grad = summed
    if grad.dtype != dtype:
        grad = grad.astype(dtype)
    return grad


def sum_to_shape(grad: np.ndarray, shape: tuple) -> np.ndarray | None:
    """``grad`` summed over the dimensions that broadcasting added to ``shape`` (the
    gradient of a broadcast is the sum over the copies); None if no broadcast of
    ``shape`` has ``grad``'s shape."""
    extra = grad.ndim - len(shape)
    if extra < 0 or not all(s == g or s == 1 for s, g in zip(shape, grad.shape[extra:])):
        return None
    axes = tuple(range(extra)) + tuple(
        extra + i for i, s in enumerate(shape) if s == 1 and grad.shape[extra + i] != 1
    )
    return grad.sum(axis=axes, keepdims=True).reshape(shape) if axes else grad.reshape(shape)
