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
from .dtypes import get_default_dtype
from .ops.logical import Bitwise, BitwiseNot, Logical, LogicalNot
from .ops.movement import Diagonal
from .ops.trigonometry import Acos, Asin, Atan, Cumprod


def _floating(x):
    """``x``, or an integer or bool ``x`` in the default float dtype (float32)."""
    return x if x.dtype.kind in "fc" else x.to(get_default_dtype())


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

    # in place, as PyTorch's (without them Python would rebind `mask |= other` to a new
    # tensor, and the tensor's views and other names would keep the old values)
    def __iand__(self, other): return self._modify(Bitwise, other, op="and")
    def __ior__(self, other): return self._modify(Bitwise, other, op="or")
    def __ixor__(self, other): return self._modify(Bitwise, other, op="xor")
    bitwise_and_, bitwise_or_, bitwise_xor_ = __iand__, __ior__, __ixor__
    def logical_not_(self): return self._modify(LogicalNot)
    def logical_and_(self, other): return self._modify(Logical, other, op="and")
    def logical_or_(self, other): return self._modify(Logical, other, op="or")

    def bitwise_not(self): return BitwiseNot.apply(self)
    def bitwise_and(self, other): return Bitwise.apply(self, other, op="and")
    def bitwise_or(self, other): return Bitwise.apply(self, other, op="or")
    def bitwise_xor(self, other): return Bitwise.apply(self, other, op="xor")
    def logical_not(self): return LogicalNot.apply(self)
    def logical_and(self, other): return Logical.apply(self, other, op="and")
    def logical_or(self, other): return Logical.apply(self, other, op="or")
    def logical_xor(self, other): return Logical.apply(self, other, op="xor")

    # --- elementwise and scans -------------------------------------------------------------

    # (integers and bools in the default float, float32, as PyTorch; NumPy: float16/64)
    def acos(self): return Acos.apply(_floating(self))
    def asin(self): return Asin.apply(_floating(self))
    def atan(self): return Atan.apply(_floating(self))
    arccos, arcsin, arctan = acos, asin, atan

    def cumprod(self, dim: int | None = None, *, dtype: Any = None, axis: int | None = None):
        """Running products along ``dim`` (or NumPy's ``axis``): x_0, x_0 x_1, ..."""
        dim = axis if dim is None else dim
        if dim is None:
            raise TypeError(f"cumprod: give dim (the dimension to multiply along), for the "
                            f"tensor of shape {tuple(self.shape)}")
        x = self if dtype is None else self.to(dtype)
        if x.dtype.kind in "bu":  # as PyTorch: bools and unsigned ints multiply in int64
            x = x.to(np.int64)
        if x.dtype == np.float16:  # as PyTorch: a float32 running product, then float16
            return x.to(np.float32).cumprod(dim).to(np.float16)
        if self.ndim == 0:  # a 0-d tensor is its own running product
            return Cumprod.apply(x.reshape(1), _dim(dim, 0, "cumprod")).reshape(())
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
    def isfinite(self):
        if self.dtype.kind not in "fc":  # integers and bools are always finite
            return self == self
        return (self - self) == 0  # inf - inf and nan - nan are nan

    # --- linear algebra: square matrices, batched over leading dims (ops/linalg.py) ------

    def inverse(self): return Inverse.apply(self)
    def det(self): return Det.apply(self)

    def clamp_min_(self, min): return self.clamp_(min=min)
    def clamp_max_(self, max): return self.clamp_(max=max)
    def half(self): return self.to(np.float16)
    def byte(self): return self.to(np.uint8)
    def char(self): return self.to(np.int8)
    def short(self): return self.to(np.int16)

    def __contains__(self, element) -> bool:
        """``value in t``: does some element equal it (as PyTorch: (t == value).any())?"""
        return bool((self == element).any())

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
        the last dimension: a view, as in PyTorch (``x.diagonal().add_(1)`` changes x)."""
        dim1, dim2 = _dim(dim1, self.ndim, "diagonal"), _dim(dim2, self.ndim, "diagonal")
        if dim1 == dim2:
            raise ValueError(f"diagonal: dim1 and dim2 are both dim {dim1} (tensor of shape "
                             f"{tuple(self.shape)}); give two different dims")
        return Diagonal.apply(self, int(offset), dim1, dim2)

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
            d = _dim(dim, self.ndim, "flip")
            if self.ndim:  # (a 0-d tensor is its own flip)
                index[d] = slice(None, None, -1)
        return self[tuple(index)].clone()  # a copy, as PyTorch's (NumPy's is a view)

    def fill_diagonal_(self, fill_value, wrap: bool = False):
        """``fill_value`` on the main diagonal (of a matrix, or of a tensor whose dims
        all have one size); ``wrap``: in a tall matrix, start again below every square
        block (NumPy's and PyTorch's rule: every ``columns + 1``-th element)."""
        if self.ndim < 2 or self.ndim > 2 and len(set(self.shape)) != 1:
            raise ValueError(f"fill_diagonal_: expected a matrix, or a tensor whose dims all "
                             f"have the same size, got shape {tuple(self.shape)}")
        if self.ndim > 2:
            steps = np.arange(self.shape[0])
            self[(steps,) * self.ndim] = fill_value
            return self
        rows, columns = self.shape
        end = rows * columns if wrap else min(rows, columns) * columns
        flat = np.arange(0, end, columns + 1)
        self[flat // columns, flat % columns] = fill_value
        return self

    def tril_(self, diagonal: int = 0): return self._modify(type(self).tril, diagonal)
    def triu_(self, diagonal: int = 0): return self._modify(type(self).triu, diagonal)

    def __reversed__(self):  # reversed(t) is a tensor, as in PyTorch: t.flip(0)
        return self.flip(0)

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

    # --- PyTorch's other names and small helpers --------------------------------------------

    def ndimension(self) -> int: return self.ndim
    def is_signed(self) -> bool: return self.dtype.kind in "if"
    def is_complex(self) -> bool: return self.dtype.kind == "c"
    def is_same_size(self, other) -> bool: return tuple(self.shape) == tuple(other.shape)

    def is_nonzero(self) -> bool:
        """bool(t) for a one-element tensor (PyTorch raises for any other)."""
        if self.numel() != 1:
            raise RuntimeError(f"is_nonzero: expected a tensor with one element, got shape "
                               f"{tuple(self.shape)}")
        return bool(self.item())

    def greater(self, other): return self > other
    def greater_equal(self, other): return self >= other
    def less(self, other): return self < other
    def less_equal(self, other): return self <= other
    def not_equal(self, other): return self != other
    def sgn(self): return self.sign()
    def isposinf(self): return self == float("inf")
    def isneginf(self): return self == float("-inf")
    def msort(self): return self.sort(0).values
    def narrow_copy(self, dim: int, start, length: int):
        return self.narrow(dim, start, length).clone()

    def split_with_sizes(self, split_sizes, dim: int = 0): return self.split(list(split_sizes), dim)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
        from .torch_functions import isclose
        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
        from .torch_functions import allclose
        return allclose(self, other, rtol, atol, equal_nan)

    def hsplit(self, sections):
        """Split along dim 1 (dim 0 for a 1-D tensor), as ``tensor_split``."""
        return self.tensor_split(sections, 1 if self.ndim > 1 else 0)

    def vsplit(self, sections): return self.tensor_split(sections, 0)
    def dsplit(self, sections): return self.tensor_split(sections, 2)

    # the conjugate transposes: real tensors only here, so plain transposes
    def adjoint(self): return self.transpose(-2, -1)

    @property
    def mH(self): return self.transpose(-2, -1)

    @property
    def H(self): return self.t()

    # --- storage ---------------------------------------------------------------------------

    def element_size(self) -> int:
        """Bytes per element (4 for float32)."""
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize * self.numel()

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
