"""``minigrad.nn.utils``: gradient clipping."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..tensor import Tensor


def _with_grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale all gradients together so that their joint norm is at most ``max_norm``;
    returns the norm before clipping. The norm is that of all gradients concatenated."""
    grads = [p.grad._data for p in _with_grads(parameters)]
    if not grads:
        return Tensor(0.0)
    norm_type = float(norm_type)
    if norm_type == np.inf:
        total = max(float(np.abs(g).max()) for g in grads)
    else:
        total = float(sum(np.sum(np.abs(g.astype(np.float64)) ** norm_type) for g in grads)
                      ** (1.0 / norm_type))
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients is {total}; they cannot be clipped")
    clip_coef = min(max_norm / (total + 1e-6), 1.0)  # as PyTorch: never scales up
    for g in grads:
        g *= np.asarray(clip_coef, dtype=g.dtype)
    return Tensor(np.asarray(total, dtype=grads[0].dtype))


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float) -> None:
    """Clamp every gradient element into [-clip_value, clip_value]."""
    for p in _with_grads(parameters):
        np.clip(p.grad._data, -clip_value, clip_value, out=p.grad._data)
