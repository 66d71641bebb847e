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
