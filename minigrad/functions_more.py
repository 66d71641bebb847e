"""More of PyTorch's ``torch.*`` functions that teaching code uses (issue 29's census):
each the function form of a Tensor method, or composed of existing ops.
"""

from __future__ import annotations

from typing import Any

from .ops.trigonometry import Acos, Asin, Atan
from .tensor import Tensor


def acos(input: Tensor) -> Tensor: return Acos.apply(input)
def asin(input: Tensor) -> Tensor: return Asin.apply(input)
def atan(input: Tensor) -> Tensor: return Atan.apply(input)


arccos, arcsin, arctan = acos, asin, atan


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return input.cumprod(dim, dtype=dtype)


def trace(input: Tensor) -> Tensor: return input.trace()
def ravel(input: Tensor) -> Tensor: return input.ravel()
def flip(input: Tensor, dims) -> Tensor: return input.flip(dims)
def tile(input: Tensor, dims) -> Tensor: return input.tile(dims)
def logical_not(input: Tensor) -> Tensor: return input.logical_not()
def logical_and(input: Tensor, other: Any) -> Tensor: return input.logical_and(other)
def logical_or(input: Tensor, other: Any) -> Tensor: return input.logical_or(other)
def logical_xor(input: Tensor, other: Any) -> Tensor: return input.logical_xor(other)
def bitwise_not(input: Tensor) -> Tensor: return input.bitwise_not()


def index_add(input: Tensor, dim: int, index: Any, source: Tensor, *,
              alpha: float = 1) -> Tensor:
    return input.index_add(dim, index, source, alpha=alpha)


def meshgrid(*tensors: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Grids from 1-D tensors: with ``indexing="ij"`` output i varies along dim i; with
    ``"xy"`` the first two dims are swapped (NumPy's default). Differentiable (expand)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for i, t in enumerate(tensors):
        if t.ndim > 1:
            raise ValueError(f"meshgrid: expected 0-D or 1-D tensors, tensor {i} has shape "
                             f"{tuple(t.shape)}")
    flat = [t.reshape(-1) for t in tensors]
    if indexing == "xy" and len(flat) >= 2:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    grids = []
    for i, t in enumerate(flat):
        view = [1] * len(flat)
        view[i] = -1
        grids.append(t.reshape(*view).expand(*shape))
    if indexing == "xy" and len(grids) >= 2:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


__all__ = ["acos", "arccos", "arcsin", "arctan", "asin", "atan", "bitwise_not", "cumprod",
           "flip", "index_add", "logical_and", "logical_not", "logical_or", "logical_xor",
           "meshgrid", "ravel", "tile", "trace"]
