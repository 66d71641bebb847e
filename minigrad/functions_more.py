"""More of PyTorch's ``torch.*`` functions that teaching code uses (issue 29's census):
each the function form of a Tensor method, or composed of existing ops.
"""

from __future__ import annotations

from typing import Any

from .ops.trigonometry import Acos, Asin, Atan
from .tensor import Tensor
from .torch_functions import _out


def acos(input: Tensor) -> Tensor: return Acos.apply(input)
def asin(input: Tensor) -> Tensor: return Asin.apply(input)
def atan(input: Tensor) -> Tensor: return Atan.apply(input)


arccos, arcsin, arctan = acos, asin, atan


def cumprod(input: Tensor, dim: int | None = None, *, dtype: Any = None,
            axis: int | None = None) -> Tensor:
    return input.cumprod(dim, dtype=dtype, axis=axis)


def trace(input: Tensor) -> Tensor: return input.trace()
def inverse(input: Tensor) -> Tensor: return input.inverse()
def det(input: Tensor) -> Tensor: return input.det()
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


def cosh(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.cosh(), out, "cosh")


def sinh(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.sinh(), out, "sinh")


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    return _out(input.logit(eps), out, "logit")
def isnan(input: Tensor) -> Tensor: return input.isnan()
def isinf(input: Tensor) -> Tensor: return input.isinf()
def isfinite(input: Tensor) -> Tensor: return input.isfinite()
def is_floating_point(input: Tensor) -> bool: return input.is_floating_point()
def select(input: Tensor, dim: int, index: int) -> Tensor: return input.select(dim, index)
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return input.diagonal(offset, dim1, dim2)


def bitwise_and(input: Tensor, other: Any) -> Tensor: return input.bitwise_and(other)
def bitwise_or(input: Tensor, other: Any) -> Tensor: return input.bitwise_or(other)
def bitwise_xor(input: Tensor, other: Any) -> Tensor: return input.bitwise_xor(other)


def range(start: float, end: float, step: float = 1, *, dtype: Any = None) -> Tensor:  # noqa: A001
    """PyTorch's deprecated ``torch.range``: like arange, but ``end`` included, and float
    (the default dtype) unless ``dtype`` says otherwise."""
    import numpy as np

    from .factories import tensor

    count = int(np.floor((end - start) / step)) + 1
    values = start + step * np.arange(count)
    return tensor(values, dtype=dtype if dtype is not None else "float32")


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Sum over the last ``dims`` dims of a and the first ``dims`` of b (or the dims given
    as two lists), through einsum."""
    from .torch_functions import einsum

    letters = "abcdefghijklmnopqrstuvwxyz"
    if isinstance(dims, int):
        dims_a = [a.ndim - dims + i for i in _steps(dims)]
        dims_b = list(_steps(dims))
    else:
        dims_a, dims_b = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    left = list(letters[:a.ndim])
    right = list(letters[a.ndim:a.ndim + b.ndim])
    for i, j in zip(dims_a, dims_b):
        right[j % b.ndim] = left[i % a.ndim]
    summed = {left[i % a.ndim] for i in dims_a}
    out = [c for c in left if c not in summed] + [c for c in right if c not in summed]
    return einsum(f"{''.join(left)},{''.join(right)}->{''.join(out)}", a, b)


def _steps(count: int):
    """0 .. count - 1 (this module's ``range`` is PyTorch's)."""
    return iter(__import__("builtins").range(count))


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


__all__ = ["acos", "arccos", "arcsin", "arctan", "asin", "atan", "bitwise_and", "bitwise_not",
           "bitwise_or", "bitwise_xor", "cosh", "cumprod", "det", "diagonal", "flip",
           "index_add", "inverse", "is_floating_point", "isfinite", "isinf", "isnan",
           "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "meshgrid",
           "range", "ravel", "select", "sinh", "tensordot", "tile", "trace"]
