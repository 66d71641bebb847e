"""More of PyTorch's ``torch.*`` functions for reductions, statistics, indexing and
linear algebra (round 3 of the census). Most are the function form of a Tensor method of
tensor_stats.py; the rest (cdist, searchsorted, block_diag, ...) are composed here.
``mg.linalg`` (torch.linalg) is minigrad/linalg.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import linalg
from .errors import ShapeError
from .state import rng_for
from .tensor import Tensor, cat, stack

def _array(value: Any) -> np.ndarray:
    return value.numpy() if isinstance(value, Tensor) else np.asarray(value)


# --- reductions and statistics ----------------------------------------------------------


def median(input: Tensor, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    return input.median(dim, keepdim, axis=axis, keepdims=keepdims)


def nanmedian(input: Tensor, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    return input.nanmedian(dim, keepdim, axis=axis, keepdims=keepdims)


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, axis=None,
           keepdims=None) -> Tensor:
    return input.nansum(dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, axis=None,
            keepdims=None) -> Tensor:
    return input.nanmean(dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    return input.kthvalue(k, dim, keepdim)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False):
    return input.mode(dim, keepdim)


def aminmax(input: Tensor, *, dim=None, keepdim: bool = False):
    return input.aminmax(dim=dim, keepdim=keepdim)


def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    return input.quantile(q, dim, keepdim, interpolation=interpolation)


def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    return input.nanquantile(q, dim, keepdim, interpolation=interpolation)


def count_nonzero(input: Tensor, dim=None, *, axis=None) -> Tensor:
    return input.count_nonzero(dim, axis=axis)


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None, axis=None, keepdims=None) -> tuple[Tensor, Tensor]:
    """(std, mean) over ``dim``; ``unbiased``/``correction`` as for ``std``."""
    return (input.std(dim, unbiased, keepdim, correction=correction, axis=axis,
                      keepdims=keepdims),
            input.mean(dim, keepdim, axis=axis, keepdims=keepdims))


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None, axis=None, keepdims=None) -> tuple[Tensor, Tensor]:
    """(var, mean) over ``dim``."""
    return (input.var(dim, unbiased, keepdim, correction=correction, axis=axis,
                      keepdims=keepdims),
            input.mean(dim, keepdim, axis=axis, keepdims=keepdims))


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``torch.cross`` (``Tensor.cross``: without dim, the first dim of size 3, deprecated)."""
    return input.cross(other, dim)


def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    return input.cov(correction=correction, fweights=fweights, aweights=aweights)


def corrcoef(input: Tensor) -> Tensor: return input.corrcoef()
def cummax(input: Tensor, dim=None, *, axis=None): return input.cummax(dim, axis=axis)
def cummin(input: Tensor, dim=None, *, axis=None): return input.cummin(dim, axis=axis)


def logcumsumexp(input: Tensor, dim=None, *, axis=None) -> Tensor:
    return input.logcumsumexp(dim, axis=axis)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None, *,
         axis=None) -> Tensor:
    return input.diff(n, dim, prepend, append, axis=axis)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor: return input.dist(other, p)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2
    (..., R, M): a (..., P, R) tensor, out[i, j] = ||x1[i] - x2[j]||_p."""
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist: expected x1 (..., P, M) and x2 (..., R, M) with the same M, "
                         f"got shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    if p < 0:
        raise ValueError(f"cdist: p must be non-negative, got {p}")
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
    return linalg.vector_norm(differences, p, -1)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    return input.renorm(p, dim, maxnorm)


# --- indexing and movement ----------------------------------------------------------------


def masked_select(input: Tensor, mask) -> Tensor: return input.masked_select(mask)
def take(input: Tensor, index) -> Tensor: return input.take(index)
def take_along_dim(input: Tensor, indices, dim=None) -> Tensor:
    return input.take_along_dim(indices, dim)
def argwhere(input: Tensor) -> Tensor: return input.argwhere()
def masked_scatter(input: Tensor, mask, source) -> Tensor:
    return input.masked_scatter(mask, source)
def scatter_reduce(input: Tensor, dim, index, src, reduce, *, include_self=True) -> Tensor:
    return input.scatter_reduce(dim, index, src, reduce, include_self=include_self)
def movedim(input: Tensor, source, destination) -> Tensor:
    return input.movedim(source, destination)


moveaxis = movedim


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor: return input.rot90(k, dims)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return input.diag_embed(offset, dim1, dim2)


def kron(input: Tensor, other: Tensor) -> Tensor: return input.kron(other)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-, 1- or 2-D) as blocks on the diagonal of one matrix, zeros
    elsewhere (concatenations: the gradient of each block is its part)."""
    from .dtypes import result_type

    blocks = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise ValueError(f"block_diag: expected 0-, 1- or 2-D tensors, tensor {i} has "
                             f"shape {tuple(t.shape)}")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        return Tensor._make(np.zeros((1, 0), np.float32))
    dtype = result_type(*(b.reshape(-1) for b in blocks))  # as one op on them all
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        b = b.to(dtype)
        height, right = b.shape[0], width - left - b.shape[1]
        parts = [Tensor._make(np.zeros((height, left), dtype)), b,
                 Tensor._make(np.zeros((height, right), dtype))]
        rows.append(cat(parts, 1))
        left += b.shape[1]
    return cat(rows, 0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D tensor, one per row (in the
    order of nested loops, the last tensor fastest)."""
    from .functions_more import meshgrid

    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None) -> Tensor:
    """The (row, column) indices of the lower triangle of a row x col matrix (the
    diagonal ``offset`` and below), row by row: a (2, N) int64 tensor."""
    rows, columns = np.tril_indices(row, offset, col)
    return Tensor._make(np.stack([rows, columns]).astype(dtype or np.int64))


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None) -> Tensor:
    rows, columns = np.triu_indices(row, offset, col)
    return Tensor._make(np.stack([rows, columns]).astype(dtype or np.int64))


# --- searching and counting: no gradient ------------------------------------------------


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter=None) -> Tensor:
    """For each value, the index at which it would be inserted to keep
    ``sorted_sequence`` (its last dim) sorted: the first such index, or with
    ``right=True`` / ``side="right"`` the last. A sequence of shape (..., N) works row by
    row on values of shape (..., K)."""
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ValueError("searchsorted: right=True and side='left' contradict each other")
        right = side == "right"
    sequence, values = _array(sorted_sequence), _array(input)
    if sorter is not None:
        sequence = np.take_along_axis(sequence, _array(sorter), -1)
    side_name = "right" if right else "left"
    if sequence.ndim <= 1:
        found = np.searchsorted(sequence, values, side=side_name)
    else:
        if sequence.shape[:-1] != values.shape[:-1]:
            raise ShapeError(f"searchsorted: the leading dims of sorted_sequence "
                             f"{sequence.shape} and input {values.shape} must match")
        rows = sequence.reshape(-1, sequence.shape[-1])
        wanted = values.reshape(-1, values.shape[-1])
        found = np.stack([np.searchsorted(r, w, side=side_name)
                          for r, w in zip(rows, wanted)]).reshape(values.shape)
    return Tensor._make(np.asarray(found, dtype=np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each value: i with boundaries[i-1] < x <= boundaries[i] (with
    ``right=True``: boundaries[i-1] <= x < boundaries[i]); ``searchsorted`` on a 1-D
    sequence."""
    if _array(boundaries).ndim != 1:
        raise ValueError(f"bucketize: boundaries must be 1-D, got shape "
                         f"{_array(boundaries).shape}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    return input.histc(bins, min, max)


def histogram(input: Tensor, bins=100, *, range=None, weight=None,  # noqa: A002
              density: bool = False):
    return input.histogram(bins, range=range, weight=weight, density=density)


def bincount(input: Tensor, weights=None, minlength: int = 0) -> Tensor:
    return input.bincount(weights, minlength)


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """0/1 samples, each 1 with the probability in ``input`` (same shape and dtype)."""
    rng_for(generator, "bernoulli")  # the check of generator=, here where it was given
    return input.bernoulli(p, generator=generator)


# --- linear algebra -------------------------------------------------------------------------

def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``torch.svd`` (deprecated in PyTorch for ``torch.linalg.svd``): (U, S, V) with
    V, not Vh."""
    return input.svd(some, compute_uv)


def qr(input: Tensor, some: bool = True):
    return input.qr(some)


def slogdet(input: Tensor): return input.slogdet()
def logdet(input: Tensor) -> Tensor: return input.logdet()
def matrix_exp(input: Tensor) -> Tensor: return input.matrix_exp()


__all__ = ["aminmax", "bernoulli", "bincount", "block_diag", "bucketize",
           "cartesian_prod", "cdist", "corrcoef", "count_nonzero", "cov", "cross", "cummax",
           "cummin", "diag_embed", "diff", "dist", "histc", "histogram", "kron",
           "kthvalue", "linalg", "logcumsumexp", "logdet", "masked_select",
           "matrix_exp", "median", "mode", "moveaxis", "movedim", "nanmean",
           "nanmedian", "nanquantile", "nansum", "qr", "quantile", "renorm", "rot90",
           "searchsorted", "slogdet", "std_mean", "svd", "take", "take_along_dim",
           "argwhere", "masked_scatter", "scatter_reduce", "tril_indices",
           "triu_indices", "var_mean"]
