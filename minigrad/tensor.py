"""Tensor: an n-dimensional NumPy array that remembers how it was made.

Every method is thin: ``x.exp()`` is ``Exp.apply(x)``, so you can jump from a method to
the Function (in ``minigrad/ops``) that does the work.
"""

from __future__ import annotations

import weakref
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from . import autograd
from .errors import ShapeError
from .function import Node, RemovableHandle, register_tensor_class
from .ops import (Abs, Add, ArgMax, ArgMin, Cast, Cat, Clamp, Clone, Compare, Cos, Div, Exp, Expand,
                  Gather, GetItem, Log, LogSumExp, MatMul, Max, Maximum, Mean, Min, Minimum,
                  Mul, Neg, Pad, Permute, Pow, ReLU, Repeat, Reshape, Roll, SetItem, Sigmoid,
                  Sin, Sqrt, Stack, Sub, Sum, Tanh, Unbind, Unfold, Var, Where)
from .ops.reduce import normalize_dims
from .state import no_grad, state
from .versions import VersionCounter, counter_of, record_write

DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_,
          "float": np.float32, "double": np.float64, "long": np.int64,
          "int32": np.int32, "float16": np.float16, "uint8": np.uint8}

return_types = namedtuple("return_types", ["values", "indices"])


def as_dtype(dtype: Any) -> np.dtype:
    """``"float32"``, ``np.float64``, ``mg.int64`` ... -> a NumPy dtype."""
    if isinstance(dtype, str) and dtype in DTYPES:
        return np.dtype(DTYPES[dtype])
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"unknown dtype {dtype!r}; use one of {', '.join(sorted(DTYPES))} or a NumPy dtype"
        ) from None


def _unpack_shape(shape: tuple) -> tuple:
    """Accept both ``f(2, 3)`` and ``f((2, 3))``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _dims(dim, axis):
    return axis if dim is None else dim


def _keep(keepdim, keepdims):
    return bool(keepdims) if keepdims is not None else bool(keepdim)


class Tensor:
    """A NumPy array plus autograd: ``data``, ``grad``, ``requires_grad``, ``grad_fn``."""

    # Every op makes a Tensor, so making one must be cheap: the attributes every tensor
    # sets are slots; those that most tensors leave at their default are class
    # attributes, written to the instance only when they change.
    __slots__ = ("_data", "requires_grad", "grad_fn", "_output_index", "__weakref__",
                 "__dict__")
    grad: Tensor | None = None
    label: str | None = None
    _base: Tensor | None = None  # for a view: the tensor whose data it shows
    _hooks: dict | None = None  # a dict once a hook is registered
    _retains_grad = False
    _lazy_node: Node | None = None  # lazy mode: the node that will compute it (its
    # output_meta has the shape and dtype)
    _version_counter: VersionCounter | None = None  # made at the first in-place write;
    # views and detached copies share their source's (versions.py)

    __array_priority__ = 1000  # so that ndarray + Tensor gives a Tensor

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None,
                 label: str | None = None) -> None:
        if isinstance(data, Tensor):
            data = data.numpy()
        if dtype is not None:
            array = np.array(data, dtype=as_dtype(dtype))
        elif isinstance(data, (np.ndarray, np.generic)):
            array = np.array(data)  # a NumPy array keeps its dtype
        else:
            array = np.array(data)
            if array.dtype.kind in "iufc" or array.size == 0:
                array = array.astype(np.float32)  # Python numbers become float32
        if array.dtype.kind not in "biufc":
            raise TypeError(
                f"tensor: cannot make a tensor from {type(data).__name__} {data!r:.40} "
                f"(NumPy reads it as {array.dtype}); give numbers, (nested) lists of numbers "
                "or a NumPy array"
            )
        self._init(array, False, None, 0)
        self.label = label
        if requires_grad:
            self.requires_grad_(True)

    def _init(self, data, requires_grad: bool, grad_fn: Node | None, output_index: int) -> None:
        self._data = data
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn
        self._output_index = output_index

    @classmethod
    def _make(cls, data, requires_grad: bool = False, grad_fn: Node | None = None,
              output_index: int = 0) -> Tensor:
        """Wrap an array without any checks or copies (the engine's fast path)."""
        t = object.__new__(cls)
        t._data = data  # _init's lines, repeated: this runs for every op
        t.requires_grad = requires_grad
        t.grad_fn = grad_fn
        t._output_index = output_index
        return t

    # --- attributes ---------------------------------------------------------------------

    @property
    def data(self) -> Tensor:
        """As in PyTorch: the same values as a Tensor without history, sharing this
        tensor's array, so ``p.data += -lr * p.grad`` updates ``p`` without being
        recorded (and without the version counter noticing). The array is ``numpy()``."""
        t = Tensor._make(self.numpy())
        t.label = self.label
        return t

    @data.setter
    def data(self, value: Any) -> None:
        """``p.data = other`` gives ``p`` other's values (shared), keeping its history."""
        if isinstance(value, Tensor):
            array = value.numpy()
        else:
            array = np.asarray(value)
            if array.dtype.kind not in "biufc":
                raise TypeError(f"data: expected a Tensor or an array of numbers, got "
                                f"{type(value).__name__}")
        if self.requires_grad and array.dtype.kind not in "fc":
            raise TypeError(f"data: this tensor requires grad, so its data must be "
                            f"floating point, got {array.dtype} (shape {array.shape})")
        self._data = array

    @property
    def shape(self) -> tuple[int, ...]:
        if self._data is not None:
            return self._data.shape
        return self._lazy_node.output_meta[self._output_index][0]

    @property
    def dtype(self) -> np.dtype:
        if self._data is not None:
            return self._data.dtype
        return self._lazy_node.output_meta[self._output_index][1]

    @property
    def ndim(self) -> int:
        return self._data.ndim if self._data is not None else len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return self.shape
        return self.shape[normalize_dims(dim, self.ndim, "size")[0]]

    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def is_realized(self) -> bool:
        return self._data is not None

    @property
    def _version(self) -> int:
        """How many times this tensor's data (or a view of it) was modified in place."""
        return 0 if self._version_counter is None else self._version_counter.writes

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and self.dtype.kind not in "fc":
            raise TypeError(
                f"only floating-point tensors can require gradients, but this tensor is "
                f"{self.dtype} (shape {self.shape}). Convert it first: .float() or "
                f"Tensor(data, dtype='float32', requires_grad=True)."
            )
        if not requires_grad and not self.is_leaf:
            raise RuntimeError("requires_grad_(False) works only on leaf tensors; use detach()")
        self.requires_grad = bool(requires_grad)
        return self

    # --- conversions ----------------------------------------------------------------------

    def realize(self) -> Tensor:
        """Compute this tensor (and what it depends on) if lazy mode deferred it."""
        if self._lazy_node is not None:
            autograd.realize(self)
        return self

    def numpy(self) -> np.ndarray:
        return self._data if self._lazy_node is None else self.realize()._data

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def item(self) -> float | int | bool:
        array = self.numpy()
        if array.size != 1:
            raise ShapeError(
                f"item: only a tensor with one element can be converted to a Python number, "
                f"but this one has shape {self.shape}"
            )
        return array.item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def detach(self) -> Tensor:
        """The same data (shared, like PyTorch), without history."""
        t = Tensor._make(self.numpy())
        t._version_counter, t.label = counter_of(self), self.label
        return t

    def clone(self) -> Tensor:
        return Clone.apply(self)

    def astype(self, dtype: Any) -> Tensor:
        dtype = as_dtype(dtype)
        return self if dtype == self.dtype else Cast.apply(self, dtype)

    def to(self, dtype: Any) -> Tensor:
        return self.astype(dtype)

    def float(self) -> Tensor:
        return self.astype(np.float32)

    def double(self) -> Tensor:
        return self.astype(np.float64)

    def long(self) -> Tensor:
        return self.astype(np.int64)

    def int(self) -> Tensor:
        return self.astype(np.int32)

    def bool(self) -> Tensor:
        return self.astype(np.bool_)

    # --- autograd -------------------------------------------------------------------------

    def backward(self, gradient: Any = None, retain_graph: bool | None = None) -> None:
        """Compute the gradient of this tensor with respect to every leaf that requires
        grad, accumulating into their ``.grad``."""
        autograd.backward(self, gradient, bool(retain_graph))

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """``hook(grad)`` runs when this tensor's gradient is computed; a returned tensor
        replaces the gradient."""
        if not self.requires_grad:
            raise RuntimeError("register_hook: cannot register a hook on a tensor that "
                               "does not require grad")
        if self._hooks is None:
            self._hooks = {}
        key = len(self._hooks) and max(self._hooks) + 1
        self._hooks[key] = hook
        return RemovableHandle(self._hooks, key)

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf tensor in ``.grad`` after backward."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad")
        if not self.is_leaf:
            self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    # --- in-place -------------------------------------------------------------------------

    def _modify(self, function: type, *args: Any, **kwargs: Any) -> Tensor:
        """Apply ``function`` to self and write the result into self's own array.

        With history to record this is PyTorch's in-place op: the graph node of the new
        value takes ``self``'s place, and a stand-in for the old value becomes its input.
        Every node that saved the old array will notice (its version moved on)."""
        values = [a for a in args if isinstance(a, Tensor)]
        record = state.grad_enabled and (self.requires_grad
                                         or any(v.requires_grad for v in values))
        self.realize()
        for v in values:
            v.realize()
        if record and self.is_leaf and self.requires_grad:
            raise RuntimeError(
                f"in-place: a leaf tensor that requires grad (shape {self.shape}) cannot be "
                "modified in place, or its gradient would be wrong. Update it inside "
                "`with mg.no_grad():` (as optimizers do), or work on a clone()."
            )
        if record and self._base is not None and self._base.requires_grad:
            raise RuntimeError(
                f"in-place: this tensor (shape {self.shape}) is a view of another tensor "
                "with history; minigrad cannot rewrite the history of both. clone() the "
                "view before modifying it."
            )
        previous, state.lazy = state.lazy, False
        try:
            if record:
                old = Tensor._make(self._data.copy(), self.requires_grad, self.grad_fn,
                                   self._output_index)
                old.label = self.label
                result = function.apply(old, *args, **kwargs)
                node = result.grad_fn
                node._outputs[result._output_index] = weakref.ref(self)
                self.grad_fn, self._output_index = node, result._output_index
                self.requires_grad = True
            else:
                arrays = tuple(a._data if isinstance(a, Tensor) else a for a in args)
                with no_grad():
                    result = function.apply(self, *arrays, **kwargs)
            self._write(result._data)
        finally:
            state.lazy = previous
        return self

    def _write(self, values: np.ndarray) -> None:
        if values.shape != self.shape:
            raise ShapeError(
                f"in-place: the result has shape {values.shape} but this tensor has shape "
                f"{self.shape}; an in-place op cannot change a tensor's shape (the other "
                "operand must broadcast to it). Use the out-of-place op instead."
            )
        if not np.can_cast(values.dtype, self.dtype, casting="same_kind"):
            raise TypeError(
                f"in-place: the result is {values.dtype} but this tensor is {self.dtype}; "
                "it cannot hold it. Use the out-of-place op, or convert first."
            )
        try:
            self._data[...] = values
        except ValueError as error:  # e.g. a read-only view made by expand()
            raise ShapeError(
                f"in-place: cannot write into this tensor (shape {self.shape}): {error}. "
                "Views made by expand() or unfold() are read-only; clone() first."
            ) from error
        record_write(self)

    def __setitem__(self, index: Any, value: Any) -> None:
        self._modify(SetItem, value, _index(index))

    def add_(self, other: Any, alpha: float = 1) -> Tensor:
        return self._modify(Add, other if alpha == 1 else other * alpha)

    def sub_(self, other: Any, alpha: float = 1) -> Tensor:
        return self._modify(Sub, other if alpha == 1 else other * alpha)

    def mul_(self, other: Any) -> Tensor:
        return self._modify(Mul, other)

    def div_(self, other: Any) -> Tensor:
        return self._modify(Div, other)

    def clamp_(self, min: float | None = None, max: float | None = None) -> Tensor:
        return self._modify(Clamp, min=min, max=max)

    def copy_(self, source: Any) -> Tensor:
        return self._modify(SetItem, source, Ellipsis)

    def fill_(self, value: float) -> Tensor:
        return self._modify(SetItem, value, Ellipsis)

    def zero_(self) -> Tensor:
        return self.fill_(0)

    def uniform_(self, a: float = 0.0, b: float = 1.0) -> Tensor:
        return self.copy_(state.rng.uniform(a, b, self.shape).astype(self.dtype))

    def normal_(self, mean: float = 0.0, std: float = 1.0) -> Tensor:
        return self.copy_(state.rng.normal(mean, std, self.shape).astype(self.dtype))

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    # --- arithmetic (broadcasting; numbers on either side) ----------------------------------

    def __add__(self, other): return Add.apply(self, _operand(other))
    def __radd__(self, other): return Add.apply(_operand(other), self)
    def __sub__(self, other): return Sub.apply(self, _operand(other))
    def __rsub__(self, other): return Sub.apply(_operand(other), self)
    def __mul__(self, other): return Mul.apply(self, _operand(other))
    def __rmul__(self, other): return Mul.apply(_operand(other), self)
    def __truediv__(self, other): return Div.apply(self, _operand(other))
    def __rtruediv__(self, other): return Div.apply(_operand(other), self)
    def __pow__(self, exponent): return Pow.apply(self, _operand(exponent))
    def __rpow__(self, base): return Pow.apply(_operand(base), self)
    def __matmul__(self, other): return MatMul.apply(self, _operand(other))
    def __rmatmul__(self, other): return MatMul.apply(_operand(other), self)
    def __neg__(self): return Neg.apply(self)
    def __pos__(self): return self
    def __abs__(self): return Abs.apply(self)

    add, sub, mul, div, pow, matmul = __add__, __sub__, __mul__, __truediv__, __pow__, __matmul__
    def neg(self): return Neg.apply(self)
    def abs(self): return Abs.apply(self)
    def exp(self): return Exp.apply(self)
    def log(self): return Log.apply(self)
    def sqrt(self): return Sqrt.apply(self)
    def sin(self): return Sin.apply(self)
    def cos(self): return Cos.apply(self)
    def tanh(self): return Tanh.apply(self)
    def sigmoid(self): return Sigmoid.apply(self)
    def relu(self): return ReLU.apply(self)
    def maximum(self, other): return Maximum.apply(self, _operand(other))
    def minimum(self, other): return Minimum.apply(self, _operand(other))

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:
        if min is None and max is None:
            raise ValueError("clamp: give at least one of min and max")
        return Clamp.apply(self, min=min, max=max)

    clip = clamp

    # --- comparisons (bool tensors without history) --------------------------------------

    def __lt__(self, other): return Compare.apply(self, other, op="<")
    def __le__(self, other): return Compare.apply(self, other, op="<=")
    def __gt__(self, other): return Compare.apply(self, other, op=">")
    def __ge__(self, other): return Compare.apply(self, other, op=">=")
    def __eq__(self, other): return Compare.apply(self, other, op="==")  # type: ignore[override]
    def __ne__(self, other): return Compare.apply(self, other, op="!=")  # type: ignore[override]

    __hash__ = object.__hash__  # == compares elements, so hash by identity

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"the truth value of a tensor with {self.numel()} elements (shape "
                f"{self.shape}) is ambiguous; use .any() or .all()"
            )
        return bool(self.item())

    def any(self) -> bool:
        return bool(np.any(self.numpy()))

    def all(self) -> bool:
        return bool(np.all(self.numpy()))

    # --- reductions ------------------------------------------------------------------------

    def sum(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        return Sum.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        return Mean.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """``x.max()`` -> a tensor; ``x.max(dim)`` -> (values, indices), as in PyTorch."""
        return self._extreme(Max, Maximum, dim, keepdim, axis, keepdims)

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return self._extreme(Min, Minimum, dim, keepdim, axis, keepdims)

    def _extreme(self, reduction, elementwise, dim, keepdim, axis, keepdims):
        dim, keepdim = _dims(dim, axis), _keep(keepdim, keepdims)
        if isinstance(dim, Tensor):  # x.max(other) is maximum, as in PyTorch
            return elementwise.apply(self, dim)
        if dim is None or not isinstance(dim, (int, np.integer)):
            return reduction.apply(self, dim=dim, keepdim=keepdim)
        values, indices = reduction.apply(self, dim=dim, keepdim=keepdim, return_indices=True)
        return return_types(values, indices)

    def var(self, dim=None, keepdim=False, *, correction=1, unbiased=None, axis=None,
            keepdims=None) -> Tensor:
        if unbiased is not None:
            correction = int(unbiased)
        return Var.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims),
                         correction=correction)

    def std(self, dim=None, keepdim=False, *, correction=1, unbiased=None, axis=None,
            keepdims=None) -> Tensor:
        return self.var(dim, keepdim, correction=correction, unbiased=unbiased, axis=axis,
                        keepdims=keepdims).sqrt()

    def logsumexp(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        return LogSumExp.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    def argmax(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        return ArgMax.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    def argmin(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        return ArgMin.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    # --- shape -------------------------------------------------------------------------------

    def reshape(self, *shape) -> Tensor:
        return Reshape.apply(self, _unpack_shape(shape))

    def view(self, *shape) -> Tensor:
        return Reshape.apply(self, _unpack_shape(shape))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        start, end = (normalize_dims(d, self.ndim, "flatten")[0] for d in (start_dim, end_dim))
        shape = self.shape
        return self.reshape(shape[:start] + (-1,) + shape[end + 1:])

    def squeeze(self, dim=None) -> Tensor:
        dims = normalize_dims(dim, self.ndim, "squeeze") if self.ndim else ()
        shape = tuple(s for i, s in enumerate(self.shape) if not (i in dims and s == 1))
        return self.reshape(shape)

    def unsqueeze(self, dim: int) -> Tensor:
        d = normalize_dims(dim, self.ndim + 1, "unsqueeze")[0]
        return self.reshape(self.shape[:d] + (1,) + self.shape[d:])

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        dims = list(range(self.ndim))
        d0, d1 = (normalize_dims(d, self.ndim, "transpose")[0] for d in (dim0, dim1))
        dims[d0], dims[d1] = dims[d1], dims[d0]
        return Permute.apply(self, tuple(dims))

    def permute(self, *dims) -> Tensor:
        dims = _unpack_shape(dims)
        if sorted(d % max(self.ndim, 1) for d in dims) != list(range(self.ndim)):
            raise ShapeError(
                f"permute: dims {dims} are not a reordering of the {self.ndim} dimensions "
                f"of a tensor of shape {self.shape}; give each of 0..{self.ndim - 1} once"
            )
        return Permute.apply(self, tuple(d % self.ndim for d in dims))

    @property
    def T(self) -> Tensor:
        return Permute.apply(self, tuple(reversed(range(self.ndim))))

    @property
    def mT(self) -> Tensor:
        return self.transpose(-2, -1)

    def expand(self, *shape) -> Tensor:
        shape = _unpack_shape(shape)
        offset = len(shape) - self.ndim
        if offset < 0:
            raise ShapeError(
                f"expand: cannot expand shape {self.shape} to fewer dimensions {shape}")
        full = tuple(self.shape[i - offset] if s == -1 and i >= offset else s
                     for i, s in enumerate(shape))
        return Expand.apply(self, full)

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def repeat(self, *repeats) -> Tensor:
        return Repeat.apply(self, _unpack_shape(repeats))

    def pad(self, pad, mode: str = "constant", value: float = 0.0) -> Tensor:
        return pad_tensor(self, pad, mode, value)

    def roll(self, shifts, dims=None) -> Tensor:
        if dims is None:
            return Roll.apply(self.flatten(), shifts, 0).reshape(self.shape)
        return Roll.apply(self, shifts, dims)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """The slices along ``dim`` as a tuple (``x.unbind(0)`` = ``(x[0], x[1], ...)``)."""
        if self.ndim == 0:
            raise ShapeError("unbind: a 0-d tensor has no dimension to unbind")
        d = normalize_dims(dim, self.ndim, "unbind")[0]
        if self.shape[d] == 0:
            return ()
        result = Unbind.apply(self, d)
        return result if isinstance(result, tuple) else (result,)

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        """Windows of ``size`` elements, ``step`` apart, along ``dimension`` (a view)."""
        d = normalize_dims(dimension, self.ndim, "unfold")[0]
        return Unfold.apply(self, d, size, step)

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return gather(self, dim, index)

    # --- indexing -----------------------------------------------------------------------------

    def __getitem__(self, index: Any) -> Tensor:
        return GetItem.apply(self, _index(index))

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    # --- printing ------------------------------------------------------------------------------

    def __repr__(self) -> str:
        extras = []
        if self._data is None:
            body = f"<unrealized, shape={self.shape}"
        else:
            body = np.array2string(self._data, separator=", ", prefix="tensor(",
                                   precision=4, threshold=200)
        if self.dtype != np.float32 or self._data is None:
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        if self.label:
            extras.append(f"label={self.label!r}")
        if self._data is None:
            return f"tensor({body}" + "".join(", " + e for e in extras) + ">)"
        return "tensor(" + ", ".join([body] + extras) + ")"

    def __format__(self, spec: str) -> str:
        if spec and self.numel() == 1 and self._data is not None:
            return format(self.item(), spec)
        return repr(self)


register_tensor_class(Tensor)


def _operand(value: Any) -> Any:
    """A list or tuple of numbers next to a tensor becomes a float32 tensor, as in the
    constructor (NumPy would make it int64 or float64 and upcast the result)."""
    return Tensor(value) if isinstance(value, (list, tuple)) else value


def _index(index: Any) -> Any:
    """Turn Tensors and lists inside an index into NumPy arrays."""
    if isinstance(index, tuple):
        return tuple(_index_part(i) for i in index)
    return _index_part(index)


def _index_part(part: Any) -> Any:
    if isinstance(part, Tensor):
        return part.numpy()
    if isinstance(part, list):
        return np.asarray(part)
    return part


# --- module-level functions ---------------------------------------------------------------


def _check_same_dims(tensors, op: str) -> None:
    if not tensors:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    ndims = {t.ndim for t in tensors}
    if len(ndims) > 1:
        shapes = ", ".join(str(t.shape) for t in tensors)
        raise ShapeError(
            f"{op}: all tensors need the same number of dimensions, got shapes {shapes}")


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension."""
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    _check_same_dims(tensors, "cat")
    return Cat.apply(*tensors, dim=normalize_dims(dim, tensors[0].ndim, "cat")[0])


def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors along a new dimension."""
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    _check_same_dims(tensors, "stack")
    return Stack.apply(*tensors, dim=normalize_dims(dim, tensors[0].ndim + 1, "stack")[0])


def where(condition, input, other) -> Tensor:
    """Elements of ``input`` where ``condition`` holds, of ``other`` elsewhere."""
    condition = condition.numpy() if isinstance(condition, Tensor) else np.asarray(condition)
    return Where.apply(condition.astype(bool, copy=False), input, other)


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for dim=0, and so on (PyTorch's gather)."""
    index = index.numpy() if isinstance(index, Tensor) else np.asarray(index)
    d = normalize_dims(dim, input.ndim, "gather")[0]
    return Gather.apply(input, index, d)


def pad_tensor(x: Tensor, pad, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad with a constant. ``pad`` is an int (every side of every dimension), a flat
    tuple as in PyTorch (``(left, right)`` for the last dim, then ``(top, bottom)``, ...),
    or one ``(before, after)`` pair per dimension, first dimension first."""
    if mode != "constant":
        raise ValueError(f"pad: only mode='constant' is supported, got {mode!r}")
    ndim = x.ndim
    if isinstance(pad, (int, np.integer)):
        pairs = [(int(pad), int(pad))] * ndim
    elif all(isinstance(p, (tuple, list)) for p in pad):
        pairs = [tuple(p) for p in pad]
        if len(pairs) != ndim:
            raise ShapeError(f"pad: got {len(pairs)} (before, after) pairs for a tensor of "
                             f"shape {x.shape}; give one per dimension")
    else:
        if len(pad) % 2 or len(pad) // 2 > ndim:
            raise ShapeError(f"pad: a flat pad needs an even length of at most {2 * ndim} "
                             f"for shape {x.shape}, got {tuple(pad)}")
        last_first = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)]
        pairs = [(0, 0)] * (ndim - len(last_first)) + last_first[::-1]
    return Pad.apply(x, tuple(pairs), value=value)
