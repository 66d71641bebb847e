"""More of PyTorch's Tensor methods: logical operators, ``narrow``, ``inverse``, in-place
``detach_``.

``Tensor`` (tensor.py) inherits them. Each is one line that forwards to a Function (in
``minigrad/ops``) or to a method of tensor.py, as the methods there do; they live here so
that tensor.py stays the core a student reads first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .ops.linalg import Det, Inverse
from .ops.logical import Bitwise, BitwiseNot, Logical, LogicalNot
from .ops.trigonometry import Acos, Asin, Atan, Cumprod


def _dim(dim: int, ndim: int, op: str) -> int:
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"{op}: dim {dim} is out of range for a {ndim}-D tensor "
                         f"(dims -{max(ndim, 1)} .. {max(ndim, 1) - 1})")
    return dim % max(ndim, 1)


class TensorCompat:
    """Methods that ``Tensor`` inherits (it has the data; this class only forwards)."""

    __slots__ = ()

    # --- logical and bitwise: bool tensors in, bool tensors out (integers: bits) -----------

    def __invert__(self): return BitwiseNot.apply(self)
    def __and__(self, other): return Bitwise.apply(self, other, op="and")
    def __or__(self, other): return Bitwise.apply(self, other, op="or")
    def __xor__(self, other): return Bitwise.apply(self, other, op="xor")
    def __rand__(self, other): return Bitwise.apply(other, self, op="and")
    def __ror__(self, other): return Bitwise.apply(other, self, op="or")
    def __rxor__(self, other): return Bitwise.apply(other, self, op="xor")

    def bitwise_not(self): return BitwiseNot.apply(self)
    def bitwise_and(self, other): return Bitwise.apply(self, other, op="and")
    def bitwise_or(self, other): return Bitwise.apply(self, other, op="or")
    def bitwise_xor(self, other): return Bitwise.apply(self, other, op="xor")
    def logical_not(self): return LogicalNot.apply(self)
    def logical_and(self, other): return Logical.apply(self, other, op="and")
    def logical_or(self, other): return Logical.apply(self, other, op="or")
    def logical_xor(self, other): return Logical.apply(self, other, op="xor")

    # --- elementwise and scans -------------------------------------------------------------

    def acos(self): return Acos.apply(self)
    def asin(self): return Asin.apply(self)
    def atan(self): return Atan.apply(self)
    arccos, arcsin, arctan = acos, asin, atan

    def cumprod(self, dim: int | None = None, *, dtype: Any = None, axis: int | None = None):
        """Running products along ``dim`` (or NumPy's ``axis``): x_0, x_0 x_1, ..."""
        dim = axis if dim is None else dim
        if dim is None:
            raise TypeError(f"cumprod: give dim (the dimension to multiply along), for the "
                            f"tensor of shape {tuple(self.shape)}")
        x = self if dtype is None else self.to(dtype)
        return Cumprod.apply(x, _dim(dim, self.ndim, "cumprod"))

    def trace(self):
        """The sum of the main diagonal of a 2-D tensor."""
        if self.ndim != 2:
            raise ValueError(f"trace: expected a 2-D tensor, got shape {tuple(self.shape)}")
        return self.diag().sum()

    def cosh(self):
        x = self if self.dtype.kind == "f" else self.to(np.float32)  # (bools, ints: float32)
        return (x.exp() + (-x).exp()) * 0.5

    def sinh(self):
        x = self if self.dtype.kind == "f" else self.to(np.float32)
        return (x.exp() - (-x).exp()) * 0.5

    def logit(self, eps: float | None = None):
        """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when ``eps`` is given.
        Outside [0, 1] (no eps) the value is NaN, and so is the gradient, as in PyTorch
        (log's 1/x alone would give a finite one)."""
        p = self if self.dtype.kind == "f" else self.to(np.float32)  # (ints, bools: float32)
        p = p if eps is None else p.clamp(eps, 1 - eps)
        out = (p / (1 - p)).log()
        if eps is None and p.dtype.kind == "f":
            values = p.numpy()
            outside = (values < 0) | (values > 1)
            if outside.any():
                out = out + type(self)(np.where(outside, np.nan, 0.0).astype(p.dtype)) * p
        return out

    def isnan(self): return self != self
    def isinf(self): return self.abs() == float("inf")
    def isfinite(self): return (self - self) == 0  # inf - inf and nan - nan are nan

    # --- linear algebra: square matrices, batched over leading dims (ops/linalg.py) ------

    def inverse(self): return Inverse.apply(self)
    def det(self): return Det.apply(self)

    def clamp_min_(self, min): return self.clamp_(min=min)
    def clamp_max_(self, max): return self.clamp_(max=max)
    def half(self): return self.to(np.float16)

    # --- movement --------------------------------------------------------------------------

    def select(self, dim: int, index: int):
        """The slice at ``index`` of dimension ``dim`` (that dimension removed)."""
        position = [slice(None)] * self.ndim
        position[_dim(dim, self.ndim, "select")] = index
        return self[tuple(position)]

    def unflatten(self, dim: int, sizes):
        """Dimension ``dim`` split into ``sizes`` (one may be -1)."""
        dim = _dim(dim, self.ndim, "unflatten")
        return self.reshape(*self.shape[:dim], *sizes, *self.shape[dim + 1:])

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1):
        """The diagonal of dims ``dim1``, ``dim2`` (``offset`` above it if positive), as
        the last dimension; differentiable (an index gather)."""
        dim1, dim2 = _dim(dim1, self.ndim, "diagonal"), _dim(dim2, self.ndim, "diagonal")
        x = self.movedim((dim1, dim2), (-2, -1)) if hasattr(self, "movedim") else \
            self.permute(*[d for d in range(self.ndim) if d not in (dim1, dim2)], dim1, dim2)
        rows, columns = x.shape[-2], x.shape[-1]
        start_row, start_column = max(-offset, 0), max(offset, 0)
        count = max(0, min(rows - start_row, columns - start_column))
        steps = np.arange(count)
        return x[..., start_row + steps, start_column + steps]

    def ravel(self): return self.reshape(-1)
    def swapaxes(self, axis0: int, axis1: int): return self.transpose(axis0, axis1)
    swapdims = swapaxes

    def flip(self, *dims, **named):
        """The elements in reverse order along each of ``dims`` (a copy): ``flip(0, 1)``,
        ``flip((0, 1))`` or ``flip(dims=(0, 1))``."""
        if named:
            if dims or set(named) != {"dims"}:
                raise TypeError(f"flip: give the dims once, as flip(dims=...) or "
                                f"positionally, got {dims!r} and {named!r}")
            dims = (named["dims"],)
        dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        index = [slice(None)] * self.ndim
        for dim in dims:
            index[_dim(dim, self.ndim, "flip")] = slice(None, None, -1)
        return self[tuple(index)]

    def fliplr(self): return self.flip(1)
    def flipud(self): return self.flip(0)

    def tile(self, *dims):
        """``repeat``, with ``dims`` padded by ones in front when shorter than the shape."""
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) \
            else dims
        return self.repeat(*((1,) * (self.ndim - len(dims)) + tuple(dims)))

    def index_add_(self, dim: int, index: Any, source: Any, *, alpha: float = 1):
        """``self[..., index[i], ...] += alpha * source[..., i, ...]`` along ``dim``
        (repeated indices add up): a scatter_add_ with the index spread over source."""
        dim = _dim(dim, self.ndim, "index_add_")
        index = np.asarray(index.numpy() if hasattr(index, "numpy") else index, np.int64)
        shape = [1] * source.ndim
        shape[dim] = -1
        spread = np.broadcast_to(index.reshape(shape), tuple(source.shape))
        return self.scatter_add_(dim, spread, source if alpha == 1 else source * alpha)

    def index_add(self, dim: int, index: Any, source: Any, *, alpha: float = 1):
        return self.clone().index_add_(dim, index, source, alpha=alpha)

    # --- storage ---------------------------------------------------------------------------

    def element_size(self) -> int:
        """Bytes per element (4 for float32)."""
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (tensors sharing memory share it)."""
        return self.numpy().__array_interface__["data"][0]

    def random_(self, from_: int = 0, to: int | None = None, *, generator=None):
        """Fill with integers drawn uniformly from [from, to) (``random_(to)``: [0, to))."""
        from .state import rng_for

        low, high = (0, from_) if to is None else (from_, to)
        if to is None and from_ == 0:
            high = 2 ** 24 if self.dtype.kind == "f" else np.iinfo(self.dtype).max
        values = rng_for(generator, "random_").integers(low, high, self.shape)
        return self.copy_(values.astype(self.dtype))


    def narrow(self, dim: int, start: Any, length: int):
        """``length`` entries of dimension ``dim`` from ``start``: ``x[..., start:start+length]``
        on that dimension (a view in PyTorch; here a differentiable slice)."""
        ndim = self.ndim
        if not -ndim <= dim < ndim:
            raise IndexError(f"narrow: dim {dim} is out of range for a tensor of shape "
                             f"{tuple(self.shape)} (dims -{ndim} .. {ndim - 1})")
        dim, size = dim % ndim, self.shape[dim]
        start = int(start)
        start = start + size if start < 0 else start
        if not 0 <= start <= size or length < 0 or start + length > size:
            raise IndexError(f"narrow: start {start} + length {length} exceeds the size "
                             f"{size} of dim {dim} (input of shape {tuple(self.shape)})")
        return self[(slice(None),) * dim + (slice(start, start + length),)]

    # --- autograd --------------------------------------------------------------------------

    def detach_(self):
        """Detach in place: this tensor forgets its history and needs no gradient."""
        self.grad_fn, self._requires_grad = None, False
        return self

    # --- devices: only the CPU (device.py) -------------------------------------------------

    is_xpu = False
    is_mps = False
    is_meta = False
