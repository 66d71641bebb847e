"""``minigrad.nn.utils``: gradient clipping, and the parameters as one vector."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterable

import numpy as np

from ..state import no_grad
from ..tensor import Tensor, cat


def _with_grads(parameters: Tensor | Iterable[Tensor], who: str) -> list[Tensor]:
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    if not parameters:  # the classic: a model.parameters() generator used up before
        warnings.warn(
            f"{who}: no parameters were given, so nothing is clipped. An exhausted "
            "generator? model.parameters() can be iterated only once: call it again here, "
            "or keep list(model.parameters()).", UserWarning, stacklevel=3)
    return [p for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale all gradients together so that their joint norm is at most ``max_norm``;
    returns the norm before clipping. The norm is that of all gradients concatenated."""
    grads = [p.grad._data for p in _with_grads(parameters, "clip_grad_norm_")]
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
    for p in _with_grads(parameters, "clip_grad_value_"):
        np.clip(p.grad._data, -clip_value, clip_value, out=p.grad._data)


# --- parameters as one vector (issue 11) -------------------------------------------------------


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter flattened and joined into one 1-D tensor (differentiable, as in
    PyTorch: it is a cat of views)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive pieces of the 1-D ``vec`` into the parameters (the inverse of
    ``parameters_to_vector``); not recorded in the graph."""
    if not isinstance(vec, Tensor) or vec.ndim != 1:
        raise TypeError(f"vector_to_parameters: expected a 1-D Tensor, got "
                        f"{type(vec).__name__}" + (f" of shape {tuple(vec.shape)}"
                                                    if isinstance(vec, Tensor) else ""))
    parameters = list(parameters)
    total = sum(p.numel() for p in parameters)
    if vec.numel() != total:
        raise ValueError(f"vector_to_parameters: the vector has {vec.numel()} elements but "
                         f"the parameters hold {total}")
    values, offset = vec.numpy(), 0
    for p in parameters:
        with no_grad():
            p.copy_(values[offset:offset + p.numel()].reshape(p.shape))
        offset += p.numel()

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters"]


# torch.nn.utils.rnn (pad_sequence; packed sequences say why they are left out)
from . import rnn_utils as rnn  # noqa: E402

sys.modules[__name__ + ".rnn"] = rnn
