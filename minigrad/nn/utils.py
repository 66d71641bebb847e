"""``minigrad.nn.utils``: gradient clipping, and the parameters as one vector."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterable

import numpy as np

from ..lazy_mode import realize_readers
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
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale all gradients together so that their joint norm is at most ``max_norm``;
    returns the norm before clipping: that of all gradients concatenated, computed as
    PyTorch does, as the norm of the per-gradient norms. ``foreach`` (a CUDA speed-up in
    PyTorch) changes nothing here."""
    parameters = _with_grads(parameters, "clip_grad_norm_")
    total = get_total_norm([p.grad for p in parameters], norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type`` norm of the norms of ``tensors`` (= the norm of them all
    concatenated): ``inf`` the largest absolute value, ``0`` how many are non-zero."""
    arrays = [t._data for t in ([tensors] if isinstance(tensors, Tensor) else tensors)]
    if not arrays:
        return Tensor(0.0)
    norm_type = float(norm_type)
    norms = [_vector_norm(a, norm_type, f"gradient {i} (shape {a.shape})")
             for i, a in enumerate(arrays)]
    total = _vector_norm(np.array(norms, dtype=np.result_type(*arrays)), norm_type,
                         "the norms")
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients is {total}, so they cannot be clipped; to scale them "
                           "by it anyway, pass error_if_nonfinite=False")
    return Tensor._make(np.asarray(total))


def _vector_norm(array: np.ndarray, norm_type: float, what: str) -> np.generic:
    """``||array||_p`` of the flattened ``array``, in its dtype: (sum |x|^p)^(1/p); p = inf:
    max |x|, -inf: min |x|, 0: the count of non-zeros."""
    values = np.abs(array.reshape(-1))
    if values.size == 0 and (norm_type < 0 or np.isinf(norm_type)):
        raise RuntimeError(f"clip_grad_norm_: cannot compute the {norm_type} norm of {what}: "
                           "it is empty, and that norm has no value for no elements")
    if norm_type == np.inf:
        return values.max()
    if norm_type == -np.inf:
        return values.min()
    if norm_type == 0:
        return np.count_nonzero(values).astype(array.dtype)
    return np.sum(values ** norm_type) ** (1.0 / norm_type)


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                          total_norm: Tensor, foreach: bool | None = None) -> None:
    """Multiply every gradient by ``max_norm / (total_norm + 1e-6)`` if that is below 1
    (as PyTorch: never scales up), in the norm's dtype."""
    grads = [p.grad for p in ([parameters] if isinstance(parameters, Tensor)
                              else parameters) if p.grad is not None]
    if not grads:
        return
    for grad in grads:
        realize_readers(grad)  # lazy mode: a deferred read of it runs first
    grads = [grad._data for grad in grads]
    total = np.asarray(total_norm._data if isinstance(total_norm, Tensor) else total_norm)
    dtype = total.dtype if total.dtype.kind == "f" else np.float32
    coefficient = np.minimum(np.asarray(float(max_norm), dtype) / (total + dtype.type(1e-6)),
                             dtype.type(1.0))
    for g in grads:
        g *= coefficient.astype(g.dtype)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value] (``foreach``: as in
    ``clip_grad_norm_``)."""
    for p in _with_grads(parameters, "clip_grad_value_"):
        realize_readers(p.grad)  # lazy mode: a deferred read of it runs first
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

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters"]


# torch.nn.utils.rnn (pad_sequence; packed sequences say why they are left out)
from . import rnn_utils as rnn  # noqa: E402

sys.modules[__name__ + ".rnn"] = rnn
