"""Argument checks and helpers shared by ``functional.py`` and ``functional_ext.py`` (both
import them from here, so neither imports the other's internals)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..tensor import Tensor

REDUCTIONS = ("mean", "sum", "none")


def _error(message: str, kind: type = ShapeError) -> Exception:
    error = kind(message)
    error.minigrad = True
    return error


def _check_reduction(reduction: str, who: str) -> None:
    if reduction not in REDUCTIONS:
        raise _error(f"{who}: reduction must be one of {REDUCTIONS}, got {reduction!r}",
                     ValueError)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _check_floating(input: Any, who: str, name: str = "input") -> None:
    if np.dtype(input.dtype).kind != "f":
        raise _error(f"{who}: {name} has dtype {input.dtype} (shape {tuple(input.shape)}) but "
                     f"must be floating point; convert it with .float()", TypeError)


def _same_padding(kernel: tuple[int, int], dilation: tuple[int, int]) -> tuple:
    """Padding that keeps the size for stride 1; an odd total puts the extra at the end,
    as PyTorch does."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _class_targets(input: Tensor, target: Any, who: str,
                   ignore_index: int = -100) -> np.ndarray:
    """Check integer class targets against the logits (N, C, ...) and return them."""
    labels = target.numpy() if isinstance(target, Tensor) else np.asarray(target)
    if labels.dtype.kind not in "iu":
        raise _error(f"{who}: target has dtype {labels.dtype} (shape {labels.shape}); class "
                     "indices must be integers (use .long())", TypeError)
    class_dim = 1 if input.ndim > 1 else 0
    classes = input.shape[class_dim]
    expected = tuple(s for i, s in enumerate(input.shape) if i != class_dim)
    if labels.shape != expected:
        raise _error(
            f"{who}: target of shape {labels.shape} does not fit input of shape "
            f"{tuple(input.shape)}: class-index targets need shape {expected}, the input's "
            f"shape without its class dim {class_dim} (C = {classes} classes); check that "
            "input and target hold the same batch"
        )
    if labels.size == 0 or 0 <= labels.min() and labels.max() < classes:
        return labels  # all in range (the usual case: two reductions, no masks)
    wrong = (labels != ignore_index) & ((labels < 0) | (labels >= classes))
    if wrong.any():
        raise _error(
            f"{who}: target holds class index {labels[wrong].flat[0]}, but the input of shape "
            f"{tuple(input.shape)} has C = {classes} classes: class indices go from 0 to "
            f"{classes - 1} (or equal ignore_index={ignore_index})", IndexError)
    return labels


def _check_groups(input: Any, weight: Any, groups: Any, who: str,
                  shown_shape: tuple | None = None) -> int:
    """A grouped convolution's ``groups``: a positive int that divides the weight's output
    channels, with input channels = groups * the weight's in_channels / groups (dim 1), as
    PyTorch checks (its messages name groups, the weight's size and the input's)."""
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)):
        raise _error(f"{who}: groups must be an int, got {type(groups).__name__} {groups!r}",
                     TypeError)
    if groups <= 0:
        raise _error(f"{who}: non-positive groups is not supported, got groups={groups}",
                     RuntimeError)
    out_channels, per_group = weight.shape[0], weight.shape[1]
    if out_channels % groups:
        raise _error(f"{who}: Given groups={groups}, expected weight to be divisible by "
                     f"{groups} at dimension 0 (out_channels), but got weight of size "
                     f"{list(weight.shape)} instead")
    if input.shape[1] != per_group * groups:
        shown = list(shown_shape or input.shape)  # the input as the user gave it
        raise _error(
            f"{who}: Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{shown} to have {per_group * groups} channels, but got "
            f"{input.shape[1]} channels instead (the weight's dim 1 is in_channels / groups"
            f" = {per_group})")
    return int(groups)


def _class_weight(weight: Any, input: Any, who: str) -> np.ndarray | None:
    """A loss's class ``weight``: None, or a Tensor of shape (C,) (C = the input's class
    dim) with the input's floating dtype, as PyTorch requires; returned as an array (the
    losses give it no gradient)."""
    if weight is None:
        return None
    if not isinstance(weight, Tensor):
        raise _error(f"{who}: weight must be a Tensor of shape (C,) (one weight per class), "
                     f"got {type(weight).__name__}; wrap it: weight=mg.tensor(...)", TypeError)
    classes = input.shape[1 if input.ndim > 1 else 0]
    if tuple(weight.shape) != (classes,):
        raise _error(f"{who}: weight tensor should be defined either for all {classes} "
                     f"classes or no classes, but got weight of shape {tuple(weight.shape)} "
                     f"for input of shape {tuple(input.shape)} (C = {classes}, dim "
                     f"{1 if input.ndim > 1 else 0}); give weight of shape ({classes},)")
    if weight.dtype != input.dtype:
        raise _error(f"{who}: weight has dtype {weight.dtype} but the input has dtype "
                     f"{input.dtype} (shapes {tuple(weight.shape)} and {tuple(input.shape)}); "
                     f"they must match: use weight.to({input.dtype})"
                     + ("" if np.dtype(weight.dtype).kind == "f" else
                        ", class weights are floating point"), RuntimeError)
    if weight.requires_grad:
        raise _error(f"{who}: the loss is not differentiable with respect to argument "
                     "'weight' (as PyTorch's class-index losses; minigrad's class weights are "
                     "constants for probability targets too): give weight.detach()",
                     RuntimeError)
    return weight.numpy()


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str, who: str) -> str:
    """PyTorch's deprecated ``size_average``/``reduce`` pair, mapped to ``reduction`` as
    PyTorch maps it (reduce=False: "none"; size_average=False: "sum"; else "mean")."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is not None and not reduce:
        return "none"
    return "sum" if size_average is not None and not size_average else "mean"


# --- window and size arguments (pooling, convolution, unpooling) -----------------------------


def _pair(value: Any, who: str, name: str, least: int | None = None) -> tuple[int, int]:
    """An int or a pair of ints as a pair, each at least ``least`` if given."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) for v in pair):
        raise _error(f"{who}: {name} must be an int or a pair of ints, got {value!r}",
                     TypeError)
    if least is not None and min(pair) < least:
        raise _error(f"{who}: {name} must be at least {least}, got {value!r}", ValueError)
    return int(pair[0]), int(pair[1])


def _positive_pair(value: Any, who: str, name: str) -> tuple[int, int]:
    return _pair(value, who, name, least=1)


def _single(value: Any, who: str, name: str, least: int = 0) -> int:
    """An int (or a 1-tuple of one), at least ``least``."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise _error(f"{who}: {name} must be an int (or a 1-tuple), got {value!r}", TypeError)
    if value < least:
        raise _error(f"{who}: {name} must be at least {least}, got {value!r}", ValueError)
    return int(value)


def _output_sizes(output_size: Any, sizes: tuple, who: str) -> tuple:
    """An adaptive pooling's output size: an int or one per dim (None keeps that dim's)."""
    count = len(sizes)
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * count
    output_size = tuple(output_size)
    if len(output_size) != count:
        raise _error(f"{who}: output_size must be an int or {count} ints, got "
                     f"{output_size!r}", ValueError)
    result = tuple(size if out is None else int(out) for out, size in zip(output_size, sizes))
    if min(result) < 1:
        raise _error(f"{who}: output_size must be positive, got {output_size!r}", ValueError)
    return result
