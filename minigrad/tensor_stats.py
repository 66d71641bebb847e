"""More of PyTorch's Tensor methods for reductions, statistics, indexing and linear
algebra (round 3 of the census): median, nansum, cummax, diff, take, movedim, rot90, kron,
the decompositions (svd, qr) and more.

``Tensor`` (tensor.py) inherits them, as it inherits tensor_compat.py's. Most are
composites of existing ops (a gather, a sort, a matmul), so their gradients, and
gradients of gradients, come from those ops; the decompositions are Functions in
minigrad/ops/linalg_more.py. The ``torch.*`` spellings are in functions_stats.py.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

from .errors import ShapeError
from .ops.reduce import normalize_dims
from .state import rng_for

# PyTorch's named tuples (torch.return_types.*): fields by name, or unpacked in order
ValuesIndices = namedtuple("return_types", ["values", "indices"])
HistogramResult = namedtuple("histogram", ["hist", "bin_edges"])
MinMax = namedtuple("aminmax", ["min", "max"])
QUANTILE_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def one_dim(dim: int, ndim: int, op: str) -> int:
    """``dim`` as a non-negative int (a 0-d tensor has the one dim 0, as in PyTorch)."""
    return normalize_dims(dim, ndim, op)[0] if ndim else 0


def dim_or_axis(dim, axis, op: str):
    """PyTorch also takes NumPy's ``axis=`` for ``dim``; one of them is needed."""
    if dim is None and axis is None:
        raise TypeError(f"{op}: give the dim to work along, e.g. {op}(x, 0)")
    return axis if dim is None else dim


def moved_axes(ndim: int, source: Any, destination: Any, op: str) -> list[int]:
    """The order of dims that puts each ``source`` dim at its ``destination`` (movedim)."""
    source = [source] if isinstance(source, (int, np.integer)) else list(source)
    destination = [destination] if isinstance(destination, (int, np.integer)) \
        else list(destination)
    if len(source) != len(destination):
        raise ValueError(f"{op}: source {source} and destination {destination} must have "
                         "the same number of dims")
    source = [one_dim(d, ndim, op) for d in source]
    destination = [one_dim(d, ndim, op) for d in destination]
    if len(set(source)) != len(source) or len(set(destination)) != len(destination):
        raise ValueError(f"{op}: repeated dim in source {source} or destination "
                         f"{destination}")
    order = [n for n in range(ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return order


class TensorStats:
    """Methods that ``Tensor`` inherits (it has the data; this class only forwards)."""

    __slots__ = ()

    # --- movement and indexing ---------------------------------------------------------

    def movedim(self, source, destination):
        """The dims ``source`` moved to positions ``destination``; the others keep their
        order (a permute)."""
        return self.permute(*moved_axes(self.ndim, source, destination, "movedim"))

    moveaxis = movedim

    def stride(self, dim: int | None = None):
        """Steps in elements between neighbours along each dim: (n2 n1 ..., 1) for a
        contiguous tensor, as PyTorch's; for a view, NumPy's strides / itemsize."""
        steps = tuple(s // self.dtype.itemsize for s in self.numpy().strides)
        return steps if dim is None else steps[one_dim(dim, self.ndim, "stride")]

    def take(self, index):
        """The elements at ``index`` of the flattened tensor (the result has index's
        shape); the gradient scatter-adds back."""
        shape = np.shape(index.numpy() if hasattr(index, "numpy") else index)
        return self.reshape(-1)[_flat_index(self, index, "take").reshape(shape)]

    def put(self, index, source, accumulate: bool = False):
        """A copy with ``source``'s elements written (``accumulate``: added) at the
        positions ``index`` of the flattened tensor: ``take``'s inverse."""
        return _put(self, _flat_index(self, index, "put"), source, accumulate)

    def put_(self, index, source, accumulate: bool = False):
        return self._modify(_put, _flat_index(self, index, "put_"), source,
                            accumulate=accumulate)

    def take_along_dim(self, indices, dim: int | None = None):
        """``gather`` along ``dim`` with ``indices`` broadcast against the input in the
        other dims; ``dim=None``: the flattened input, read at the flattened indices."""
        if dim is None:
            return self.reshape(-1).take(indices.reshape(-1))
        d = one_dim(dim, self.ndim, "take_along_dim")
        sizes = [(n if i != d else 1) for i, n in enumerate(self.shape)]
        index_sizes = [(n if i != d else 1) for i, n in enumerate(indices.shape)]
        common = list(np.broadcast_shapes(tuple(sizes), tuple(index_sizes)))
        x = self.expand(*[n if i != d else self.shape[d] for i, n in enumerate(common)])
        index = indices.expand(*[n if i != d else indices.shape[d]
                                 for i, n in enumerate(common)])
        return x.gather(d, index)

    def scatter_reduce(self, dim: int, index, src, reduce: str, *, include_self: bool = True):
        """A copy where each ``src[i][j]`` (dim 0; and so on) joins ``self[index[i][j]][j]``
        under ``reduce``: "sum", "mean", "amax", "amin" or "prod"; ``include_self=False``
        leaves out self's values where something is scattered. As PyTorch, the gradient
        of amax / amin is shared evenly between the values equal to the result."""
        if reduce not in SCATTER_REDUCTIONS:
            raise ValueError(f"scatter_reduce: reduce must be one of "
                             f"{', '.join(SCATTER_REDUCTIONS)}, got {reduce!r}")
        index = np.asarray(index.numpy() if hasattr(index, "numpy") else index)
        d = one_dim(dim, self.ndim, "scatter_reduce")
        base = self if include_self else self.scatter(d, index, value=0)
        if reduce in ("sum", "mean"):
            total = base.scatter_add(d, index, src)
            if reduce == "sum":
                return total
            counts = np.zeros(tuple(self.shape), np.int64)
            np.add.at(counts, _scatter_positions(index, d), 1)
            counts = counts + include_self
            divided = total / np.maximum(counts, 1) if self.dtype.kind == "f" else \
                total // np.maximum(counts, 1)
            return divided if include_self else self.where(counts == 0, divided)
        return _scatter_extreme(self, d, index, src, reduce, include_self)

    def index_put_(self, indices, values, accumulate: bool = False):
        """``self[indices] = values`` for a tuple of index tensors; ``accumulate``: added
        instead (an index that appears twice adds twice)."""
        if not isinstance(indices, (tuple, list)):
            raise TypeError(f"index_put_: indices must be a tuple of tensors, got "
                            f"{type(indices).__name__}")
        if not accumulate:
            self[tuple(indices)] = values
            return self
        positions = np.arange(self.numel()).reshape(tuple(self.shape))[tuple(
            np.asarray(i.numpy() if hasattr(i, "numpy") else i) for i in indices)]
        values = values if hasattr(values, "expand") else type(self)(values, dtype=self.dtype)
        return self.put_(positions, values.expand(*positions.shape), accumulate=True)

    def index_put(self, indices, values, accumulate: bool = False):
        return self.clone().index_put_(indices, values, accumulate)

    def masked_scatter_(self, mask, source):
        """Where ``mask`` (bool, broadcast to self) is True, the elements of ``source``
        in order (row-major): the first True gets source's first element, and so on."""
        where = _bool_mask(self, mask, "masked_scatter_")
        self[where] = source.reshape(-1)[:int(where.sum())]
        return self

    def masked_scatter(self, mask, source):
        return self.clone().masked_scatter_(mask, source)

    def index_fill_(self, dim: int, index, value):
        """``value`` written at positions ``index`` of dimension ``dim``."""
        self[_along(self, dim, index, "index_fill_")] = value
        return self

    def index_fill(self, dim: int, index, value):
        return self.clone().index_fill_(dim, index, value)

    def index_copy_(self, dim: int, index, source):
        """``source``'s slices along ``dim`` written at positions ``index`` of ``dim``."""
        self[_along(self, dim, index, "index_copy_")] = source
        return self

    def index_copy(self, dim: int, index, source):
        return self.clone().index_copy_(dim, index, source)

    def argwhere(self):
        """The indices of the nonzero elements, one row each (``nonzero()``)."""
        return self.nonzero()

    def masked_select(self, mask):
        """The elements where ``mask`` (bool, broadcast with self) is True, as a 1-D
        tensor; the gradient goes back to those elements (zero elsewhere)."""
        mask = np.asarray(mask.numpy() if hasattr(mask, "numpy") else mask)
        if mask.dtype != np.bool_:
            raise TypeError(f"masked_select: mask must be a bool tensor, got {mask.dtype}")
        try:
            shape = np.broadcast_shapes(tuple(self.shape), mask.shape)
        except ValueError:
            raise ShapeError(f"masked_select: the mask of shape {mask.shape} does not "
                             f"broadcast with the input of shape {tuple(self.shape)}") from None
        x = self if tuple(self.shape) == shape else self.expand(*shape)
        return x[np.broadcast_to(mask, shape)]

    def rot90(self, k: int = 1, dims=(0, 1)):
        """Rotated by 90 degrees ``k`` times, from the first of ``dims`` towards the second."""
        dims = list(dims)
        if len(dims) != 2 or self.ndim < 2:
            raise ValueError(f"rot90: expected two dims of a tensor with at least 2 dims, "
                             f"got dims {dims} for shape {tuple(self.shape)}")
        first, second = (one_dim(d, self.ndim, "rot90") for d in dims)
        if first == second:
            raise ValueError(f"rot90: the two dims must differ, got {dims}")
        k %= 4
        if k == 1:
            return self.flip(second).transpose(first, second)
        if k == 2:
            return self.flip(first, second)
        if k == 3:
            return self.flip(first).transpose(first, second)
        return self.clone()

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1):
        """Each vector of the last dim put on the diagonal (``offset`` above it if
        positive) of a square matrix whose dims are ``dim1``, ``dim2`` of the result:
        a product with a constant 0/1 tensor, so differentiable."""
        n = self.shape[-1] if self.ndim else 1
        size = n + abs(offset)
        place = np.zeros((n, size, size), dtype=self.dtype)
        steps = np.arange(n)
        place[steps, steps + max(-offset, 0), steps + max(offset, 0)] = 1
        x = self if self.ndim else self.reshape(1)
        out = (x @ place.reshape(n, size * size)).reshape(*x.shape[:-1], size, size)
        return out.movedim((-2, -1), (dim1, dim2))

    def kron(self, other):
        """The Kronecker product: out[i * m + k, j * n + l] = a[i, j] b[k, l] (any ndim:
        the shorter shape padded with ones in front)."""
        ndim = max(self.ndim, other.ndim)
        a_shape = (1,) * (ndim - self.ndim) + tuple(self.shape)
        b_shape = (1,) * (ndim - other.ndim) + tuple(other.shape)
        a = self.reshape(*[s for size in a_shape for s in (size, 1)])
        b = other.reshape(*[s for size in b_shape for s in (1, size)])
        return (a * b).reshape(*[p * q for p, q in zip(a_shape, b_shape)])

    # --- reductions and statistics ----------------------------------------------------------

    def _median(self, dim, keepdim, ignore_nan: bool, op: str):
        if dim is None:
            flat = self.reshape(-1)
            if flat.shape[0] == 0:
                raise IndexError(f"{op}(): cannot take the median of an empty tensor")
            values, _ = flat._median(0, False, ignore_nan, op)
            return values
        d = one_dim(dim, self.ndim, op)
        x = self if self.ndim else self.reshape(1)
        if x.shape[d] == 0:
            raise IndexError(f"{op}(): dim {dim} of the input (shape {tuple(self.shape)}) "
                             "is empty")
        array = x.numpy()
        order = np.argsort(array, axis=d, kind="stable")  # NaN sorts last
        valid = (~np.isnan(array)).sum(axis=d, keepdims=True)
        if ignore_nan:  # the lower median of the numbers (index 0 of an all-NaN row)
            position = np.maximum(valid - 1, 0) // 2
        else:  # any NaN: the result is NaN, at its first position
            position = np.where(valid < array.shape[d], valid, (valid - 1) // 2)
        indices = np.take_along_axis(order, position, axis=d).astype(np.int64)
        values = x.gather(d, indices)  # its gradient goes to the chosen element
        if not keepdim:
            values, indices = values.squeeze(d), indices.squeeze(d)
        if not self.ndim:
            values, indices = values.reshape(()), indices.reshape(())
        return ValuesIndices(values, type(self)._make(indices))

    def median(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
        """``x.median()``: the lower of the two middle values of all elements (NaN if
        any is NaN); ``x.median(dim)``: (values, indices) along ``dim``. The gradient goes
        to the chosen element."""
        dim = axis if dim is None else dim
        keepdim = bool(keepdim if keepdims is None else keepdims)
        return self._median(dim, keepdim, False, "median")

    def nanmedian(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
        """``median`` of the elements that are not NaN."""
        dim = axis if dim is None else dim
        keepdim = bool(keepdim if keepdims is None else keepdims)
        return self._median(dim, keepdim, True, "nanmedian")

    def nansum(self, dim=None, keepdim: bool = False, *, dtype=None, axis=None,
               keepdims=None):
        """The sum with NaNs counted as zero (their gradient is 0)."""
        x = self if dtype is None else self.to(dtype)
        return x.masked_fill(x.isnan(), 0).sum(dim, keepdim, axis=axis, keepdims=keepdims)

    def nanmean(self, dim=None, keepdim: bool = False, *, dtype=None, axis=None,
                keepdims=None):
        """The mean of the elements that are not NaN (NaN where there are none)."""
        x = self if dtype is None else self.to(dtype)
        if x.dtype.kind != "f":
            raise TypeError(f"nanmean: expected a floating point tensor, got {x.dtype}")
        count = (~x.isnan()).to(x.dtype).sum(dim, keepdim, axis=axis, keepdims=keepdims)
        return x.nansum(dim, keepdim, axis=axis, keepdims=keepdims) / count

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False):
        """(values, indices): the k-th smallest element (k from 1) along ``dim``. Among
        tied elements the index is one of theirs (PyTorch's choice may differ)."""
        d = one_dim(dim, self.ndim, "kthvalue")
        size = self.shape[d] if self.ndim else 1
        if not 1 <= k <= size:
            raise IndexError(f"kthvalue: k={k} is out of range for dim {dim} of size {size} "
                             f"(shape {tuple(self.shape)})")
        x = self if self.ndim else self.reshape(1)
        order = np.argsort(x.numpy(), axis=d, kind="stable")
        indices = np.take(order, [k - 1], axis=d).astype(np.int64)
        values = x.gather(d, indices)
        if not keepdim or not self.ndim:
            values, indices = values.squeeze(d), indices.squeeze(d)
        return ValuesIndices(values, type(self)._make(indices))

    def mode(self, dim: int = -1, keepdim: bool = False):
        """(values, indices): the most frequent value along ``dim`` (the smallest of
        equally frequent ones) and its last position, as PyTorch's."""
        d = one_dim(dim, self.ndim, "mode")
        x = self if self.ndim else self.reshape(1)
        array = np.moveaxis(x.numpy(), d, -1)
        rows = array.reshape(-1, array.shape[-1])
        found = np.empty(len(rows), dtype=np.int64)
        for i, row in enumerate(rows):  # one slice at a time: np.unique sorts the values
            values, counts = np.unique(row, return_counts=True)
            best = values[np.argmax(counts)]  # the first maximum: the smallest value
            found[i] = np.flatnonzero(row == best)[-1]
        indices = np.expand_dims(found.reshape(array.shape[:-1]), d)
        values = x.gather(d, indices)
        if not keepdim or not self.ndim:
            values, indices = values.squeeze(d), indices.squeeze(d)
        return ValuesIndices(values, type(self)._make(indices))

    def aminmax(self, *, dim=None, keepdim: bool = False):
        """(min, max) over ``dim`` (all elements by default), as ``amin`` and ``amax``."""
        every = () if dim is None else dim
        return MinMax(self.amin(every, keepdim), self.amax(every, keepdim))

    def _quantile(self, q, dim, keepdim, interpolation, ignore_nan: bool, op: str):
        if interpolation not in QUANTILE_INTERPOLATIONS:
            raise ValueError(f"{op}: interpolation must be one of {QUANTILE_INTERPOLATIONS}, "
                             f"got {interpolation!r}")
        if self.dtype.kind != "f":
            raise TypeError(f"{op}: expected a floating point tensor, got {self.dtype}")
        q_array = np.asarray(q.numpy() if hasattr(q, "numpy") else q, dtype=np.float64)
        if q_array.ndim > 1 or np.any((q_array < 0) | (q_array > 1)):
            raise ValueError(f"{op}: q must be a number or a 1-D tensor of values in [0, 1], "
                             f"got {q_array.tolist()}")
        if dim is None:
            x, d = self.reshape(-1), 0
        else:
            x, d = (self if self.ndim else self.reshape(1)), one_dim(dim, self.ndim, op)
        if x.shape[d] == 0:
            raise IndexError(f"{op}: cannot take a quantile of an empty dim (input shape "
                             f"{tuple(self.shape)})")
        array = x.numpy()
        order = np.argsort(array, axis=d, kind="stable")  # NaN last
        ordered = x.gather(d, order)
        valid = (~np.isnan(array)).sum(axis=d, keepdims=True)  # numbers per slice
        has_nan = valid < array.shape[d]
        results = []
        for fraction in np.atleast_1d(q_array):
            rank = fraction * np.maximum(valid - 1, 0)  # where the quantile falls
            below, above = np.floor(rank), np.ceil(rank)
            if interpolation == "lower":
                above = below
            elif interpolation == "higher":
                below = above
            elif interpolation == "nearest":
                below = above = np.round(rank)
            weight = (rank - below) if interpolation == "linear" else \
                np.full(rank.shape, 0.5 if interpolation == "midpoint" else 0.0)
            low = ordered.gather(d, below.astype(np.int64))
            high = ordered.gather(d, above.astype(np.int64))
            value = low + (high - low) * weight.astype(self.dtype)
            if ignore_nan:  # a slice of NaNs only: NaN
                value = value.masked_fill(valid == 0, math.nan)
            else:  # any NaN: NaN
                value = value.masked_fill(has_nan, math.nan)
            if not keepdim:
                value = value.squeeze(d)
            elif dim is None or self.ndim == 0:  # (a 0-d input keeps its 0 dims)
                value = value.reshape(tuple([1] * self.ndim))
            results.append(value)
        if q_array.ndim == 0:
            return results[0]
        from .ops.movement import Stack

        return Stack.apply(*results, dim=0)

    def quantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
        """The q-th quantiles along ``dim`` (all elements by default): the value at rank
        q (n - 1) of the sorted slice, between two neighbours ``interpolation``'s way
        (``"linear"``: low + (high - low) (rank - floor(rank))). NaN where a slice has a
        NaN. A 1-D ``q`` adds a first dim, one entry per q. Gradient: to the neighbours."""
        return self._quantile(q, dim, keepdim, interpolation, False, "quantile")

    def nanquantile(self, q, dim=None, keepdim: bool = False, *,
                    interpolation: str = "linear"):
        """``quantile`` of the elements that are not NaN."""
        return self._quantile(q, dim, keepdim, interpolation, True, "nanquantile")

    def count_nonzero(self, dim=None, *, axis=None):
        """The number of nonzero elements (along ``dim``): an int64 tensor, no gradient."""
        dim = axis if dim is None else dim
        axes = None if dim is None else normalize_dims(dim, self.ndim, "count_nonzero")
        counts = np.count_nonzero(self.numpy(), axis=axes)
        return type(self)._make(np.asarray(counts, dtype=np.int64))

    def _running_extreme(self, dim: int, take, op: str):
        """(values, indices) of the running max (min) along ``dim``: a tie moves the index
        to the later element, as PyTorch's; values gathered at the indices (gradient)."""
        d = one_dim(dim, self.ndim, op)
        x = self if self.ndim else self.reshape(1)
        array = np.moveaxis(x.numpy(), d, -1)
        running = take.accumulate(array, axis=-1)
        steps = np.broadcast_to(np.arange(array.shape[-1]), array.shape)
        found = (array == running) | np.isnan(array)  # a NaN wins from then on
        indices = np.maximum.accumulate(np.where(found, steps, 0), axis=-1)
        indices = np.moveaxis(indices, -1, d).astype(np.int64)
        values = x.gather(d, indices)
        if not self.ndim:
            values, indices = values.reshape(()), indices.reshape(())
        return ValuesIndices(values, type(self)._make(indices))

    def cummax(self, dim: int | None = None, *, axis=None):
        """(values, indices): the largest element so far along ``dim``, and where it is."""
        return self._running_extreme(dim_or_axis(dim, axis, "cummax"), np.maximum, "cummax")

    def cummin(self, dim: int | None = None, *, axis=None):
        return self._running_extreme(dim_or_axis(dim, axis, "cummin"), np.minimum, "cummin")

    def logcumsumexp(self, dim: int | None = None, *, axis=None):
        """log(exp(x_0) + ... + exp(x_i)) along ``dim`` (ops/stats.py), exact however far
        apart the values are."""
        from .ops.stats import LogCumSumExp

        d = one_dim(dim_or_axis(dim, axis, "logcumsumexp"), self.ndim, "logcumsumexp")
        if self.dtype.kind != "f":
            raise TypeError(f"logcumsumexp: expected a floating point tensor, got "
                            f"{self.dtype}")
        if self.ndim == 0:
            return LogCumSumExp.apply(self.reshape(1), 0).reshape(())
        return LogCumSumExp.apply(self, d)

    def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None, *, axis=None):
        """Differences of neighbours along ``dim``, ``n`` times: out[i] = x[i + 1] - x[i]
        (``prepend``/``append`` are concatenated first)."""
        from .dtypes import result_type
        from .ops.movement import Cat

        if self.ndim == 0:
            raise RuntimeError("diff: expected at least a 1-D tensor, got a 0-d tensor")
        d = one_dim(dim if axis is None else axis, self.ndim, "diff")
        parts = [p if hasattr(p, "shape") else type(self)(p) for p in (prepend, self, append)
                 if p is not None]
        dtype = result_type(*parts)
        x = Cat.apply(*(p.to(dtype) for p in parts), dim=d) if len(parts) > 1 else self
        for _ in range(n):
            if x.shape[d] == 0:  # n >= the size: empty, as PyTorch's
                break
            later = x.narrow(d, 1, max(x.shape[d] - 1, 0))
            earlier = x.narrow(d, 0, max(x.shape[d] - 1, 0))
            x = (later != earlier) if x.dtype == np.bool_ else later - earlier
        return x

    def cross(self, other, dim: int | None = None):
        """The cross product of 3-vectors along ``dim``; without it (deprecated in PyTorch,
        with its warning) the first dim of size 3. ``mg.linalg.cross``'s default is -1."""
        from . import linalg

        if dim is None:
            import warnings

            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                          "Please either pass the dim explicitly or simply use "
                          "torch.linalg.cross.\nThe default value of dim will change to "
                          "agree with that of linalg.cross in a future release.",
                          UserWarning, stacklevel=2)
            shape = np.broadcast_shapes(tuple(self.shape), tuple(other.shape))
            sizes = [i for i, size in enumerate(shape) if size == 3]
            if not sizes:
                raise RuntimeError(f"cross: no dimension of size 3 in the inputs of shapes "
                                   f"{tuple(self.shape)} and {tuple(other.shape)}")
            dim = sizes[0]
        return linalg.cross(self, other, dim=dim)

    def cov(self, *, correction: int = 1, fweights=None, aweights=None):
        """The covariance matrix of the variables in the rows (observations in columns):
        sum_k w_k (x_ik - mean_i)(x_jk - mean_j) / (sum w - correction), with weights
        w = fweights * aweights (then the divisor is sum w - correction sum(w aw) / sum w)."""
        if self.ndim > 2:
            raise ValueError(f"cov: expected a 1-D or 2-D input (variables in rows), got "
                             f"shape {tuple(self.shape)}")
        x = self.reshape(1, -1) if self.ndim < 2 else self
        if x.dtype.kind != "f":
            x = x.float()
        observations = x.shape[1]
        weights = None
        for name, w in (("fweights", fweights), ("aweights", aweights)):
            if w is None:
                continue
            if tuple(w.shape) != (observations,):
                raise ShapeError(f"cov: {name} must be 1-D with one weight per observation "
                                 f"({observations}), got shape {tuple(w.shape)}")
            weights = w if weights is None else weights * w
        if weights is None:
            mean = x.mean(1, keepdim=True)
            divisor = observations - correction
            centered = x - mean
            out = centered @ centered.t() / max(divisor, 0)
        else:
            weights = weights.to(x.dtype)
            total = weights.sum()
            mean = (x * weights).sum(1, keepdim=True) / total
            divisor = total - correction * (weights * aweights.to(x.dtype)).sum() / total \
                if aweights is not None else total - correction
            centered = x - mean
            out = (centered * weights) @ centered.t() / divisor.clamp(min=0)
        return out.reshape(()) if self.ndim < 2 else out

    def corrcoef(self):
        """Pearson's correlation coefficients: cov_ij / sqrt(cov_ii cov_jj), clipped to
        [-1, 1] as PyTorch does."""
        c = self.cov()
        if c.ndim == 0:
            return c / c
        scale = c.diagonal().sqrt()
        return (c / scale.reshape(-1, 1) / scale.reshape(1, -1)).clamp(-1, 1)

    def dist(self, other, p: float = 2):
        """The p-norm of ``self - other`` (broadcast), over all elements."""
        from .linalg import vector_norm

        return vector_norm(self - other, p)

    def renorm(self, p: float, dim: int, maxnorm: float):
        """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to norm
        ``maxnorm``; the others unchanged."""
        from .linalg import vector_norm

        d = one_dim(dim, self.ndim, "renorm")
        others = tuple(i for i in range(self.ndim) if i != d)
        norm = vector_norm(self, p, others, keepdim=True)
        too_big = (norm > maxnorm).detach()
        scale = (maxnorm / (norm + 1e-7)).masked_fill(~too_big, 1)
        return self * scale

    def renorm_(self, p: float, dim: int, maxnorm: float):
        return self.copy_(self.renorm(p, dim, maxnorm))

    # --- histograms: counts, no gradient --------------------------------------------------

    def histc(self, bins: int = 100, min: float = 0, max: float = 0):  # noqa: A002
        """Counts in ``bins`` equal bins over [min, max] (the data's range if both are 0);
        elements outside are ignored. Same dtype as the input, no gradient."""
        array = self.numpy()
        if self.dtype.kind != "f":
            raise TypeError(f"histc: expected a floating point tensor, got {self.dtype}")
        low, high = float(min), float(max)
        if low == high and array.size:
            low, high = float(array.min()), float(array.max())
        if low == high:
            low, high = low - 1, high + 1
        if low > high:
            raise ValueError(f"histc: max {max} must be larger than min {min}")
        counts, _ = np.histogram(array, bins, range=(low, high))
        return type(self)._make(counts.astype(self.dtype))

    def histogram(self, bins=100, *, range=None, weight=None, density: bool = False):  # noqa: A002
        """(hist, bin_edges): counts (or summed ``weight``, or a density) in ``bins``
        bins (an int, or a 1-D tensor of edges) over ``range`` (the data's by default)."""
        array = self.numpy()
        edges = bins.numpy() if hasattr(bins, "numpy") else bins
        weights = weight.numpy() if weight is not None else None
        hist, edges = np.histogram(array, edges, range=range, weights=weights,
                                   density=density)
        make = type(self)._make
        return HistogramResult(make(hist.astype(self.dtype)), make(edges.astype(self.dtype)))

    def bincount(self, weights=None, minlength: int = 0):
        """How often each value 0, 1, ... occurs in a 1-D tensor of non-negative ints (or
        the sum of ``weights`` at its positions)."""
        array = self.numpy()
        if self.ndim != 1 or array.dtype.kind not in "iu" or (array.size and array.min() < 0):
            raise ValueError(f"bincount: expected a 1-D tensor of non-negative ints, got "
                             f"shape {tuple(self.shape)} and dtype {self.dtype}")
        w = None if weights is None else weights.numpy()
        counts = np.bincount(array, w, minlength)
        dtype = np.int64 if w is None else (w.dtype if w.dtype.kind == "f" else np.float64)
        return type(self)._make(counts.astype(dtype))

    # --- random ------------------------------------------------------------------------

    def bernoulli(self, p=None, *, generator=None):
        """0/1 samples, 1 with probability ``self`` (or ``p``), elementwise; no gradient."""
        probability = self.numpy() if p is None else np.broadcast_to(
            p.numpy() if hasattr(p, "numpy") else p, tuple(self.shape))
        if np.any((probability < 0) | (probability > 1)):
            raise ValueError("bernoulli: probabilities must be in [0, 1]")
        draws = rng_for(generator, "bernoulli").random(probability.shape) < probability
        dtype = self.dtype if self.dtype.kind == "f" else np.float32
        return type(self)._make(draws.astype(dtype))

    def bernoulli_(self, p=0.5, *, generator=None):
        """Filled in place with 0/1 samples, each 1 with probability ``p``."""
        probability = np.broadcast_to(p.numpy() if hasattr(p, "numpy") else p,
                                      tuple(self.shape))
        draws = rng_for(generator, "bernoulli_").random(probability.shape) < probability
        return self.copy_(draws.astype(self.dtype))

    # --- linear algebra (minigrad/linalg.py) ---------------------------------------------

    def svd(self, some: bool = True, compute_uv: bool = True):
        from .linalg import svd_legacy

        return svd_legacy(self, some, compute_uv)

    def qr(self, some: bool = True):
        from .linalg import qr

        return qr(self, "reduced" if some else "complete")

    def slogdet(self):
        from .linalg import slogdet

        return slogdet(self)

    def logdet(self):
        """log det(A): NaN where the determinant is negative, as PyTorch's."""
        sign, logabsdet = self.slogdet()
        return logabsdet.masked_fill(sign < 0, math.nan)

    def matrix_exp(self):
        from .linalg import matrix_exp

        return matrix_exp(self)


def _flat_index(x, index, op: str) -> np.ndarray:
    """An index into the flattened ``x`` as int64 NumPy values in 0..numel-1."""
    index = np.asarray(index.numpy() if hasattr(index, "numpy") else index)
    if index.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must be an integer tensor, got {index.dtype}")
    size = x.numel()
    if index.size and not (-size <= index.min() and index.max() < size):
        raise IndexError(f"{op}: an index in [{index.min()}, {index.max()}] is out of range "
                         f"for a tensor of shape {tuple(x.shape)} ({size} elements)")
    return index.reshape(-1).astype(np.int64) % max(size, 1)


def _put(x, index: np.ndarray, source, accumulate: bool = False):
    """``x`` with ``source`` scattered (or added) into its flattened elements at ``index``."""
    source = source if hasattr(source, "reshape") else np.asarray(source)
    values = source.reshape(-1)
    if values.shape[0] != index.shape[0]:
        raise ShapeError(f"put: source has {values.shape[0]} elements but index has "
                         f"{index.shape[0]}; give one value per index")
    flat = x.reshape(-1)
    flat = flat.scatter_add(0, index, values) if accumulate else flat.scatter(0, index, values)
    return flat.reshape(x.shape)


def _bool_mask(x, mask, op: str) -> np.ndarray:
    """``mask`` as a bool array of ``x``'s shape."""
    mask = np.asarray(mask.numpy() if hasattr(mask, "numpy") else mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"{op}: mask must be a bool tensor, got {mask.dtype}")
    try:
        return np.broadcast_to(mask, tuple(x.shape))
    except ValueError:
        raise ShapeError(f"{op}: the mask of shape {mask.shape} does not broadcast to the "
                         f"tensor's shape {tuple(x.shape)}") from None


def _along(x, dim: int, index, op: str) -> tuple:
    """The index ``x[:, ..., index]`` with ``index`` (1-D integers) at dimension ``dim``."""
    index = np.asarray(index.numpy() if hasattr(index, "numpy") else index)
    if index.dtype.kind not in "iu" or index.ndim > 1:
        raise TypeError(f"{op}: index must be a 1-D integer tensor, got {index.dtype} of "
                        f"shape {index.shape}")
    return (slice(None),) * one_dim(dim, x.ndim, op) + (index.reshape(-1),)


SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_positions(index: np.ndarray, dim: int) -> tuple:
    """Where each entry of a scatter's ``index`` goes: one index array per dimension."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _scatter_extreme(x, dim: int, index: np.ndarray, src, reduce: str, include_self: bool):
    """scatter_reduce with amax, amin or prod: the result computed in NumPy, then, for
    amax / amin, rebuilt from the inputs with constant weights (1 / the number of ties on
    each value equal to the result, 0 elsewhere), so that the gradient is shared evenly."""
    values, sources = x.detach().numpy(), src.detach().numpy()
    where = _scatter_positions(index, dim)
    used = sources[tuple(slice(0, n) for n in index.shape)]
    scattered = np.zeros(values.shape, bool)
    scattered[where] = True
    ufunc = {"amax": np.maximum, "amin": np.minimum, "prod": np.multiply}[reduce]
    result = values.copy()
    if not include_self:
        result[scattered] = {"amax": -np.inf, "amin": np.inf, "prod": 1}[reduce] \
            if values.dtype.kind == "f" or reduce == "prod" else \
            getattr(np.iinfo(values.dtype), "min" if reduce == "amax" else "max")
    ufunc.at(result, where, used)
    if reduce == "prod":
        if x.requires_grad or src.requires_grad:
            raise NotImplementedError(
                "scatter_reduce: minigrad has no gradient for reduce='prod'; use 'sum', "
                "'mean', 'amax' or 'amin', or compute it under mg.no_grad()")
        return type(x)(result)
    ties = np.zeros(values.shape, np.int64)
    np.add.at(ties, where, used == result[where])
    self_counts = (values == result) & (include_self | ~scattered)
    ties = ties + self_counts
    self_weight = self_counts / ties
    source_weight = np.zeros(sources.shape)
    source_weight[tuple(slice(0, n) for n in index.shape)] = \
        (used == result[where]) / ties[where]
    return (x * self_weight.astype(values.dtype)).scatter_add(
        dim, index, src * source_weight.astype(sources.dtype))
