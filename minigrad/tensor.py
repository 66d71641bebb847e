"""Tensor: an n-dimensional NumPy array that remembers how it was made.

Every method is thin: ``x.exp()`` is ``Exp.apply(x)``, so you can jump from a method to
the Function (in ``minigrad/ops``) that does the work.
"""

from __future__ import annotations

import math
import operator
import sys
import warnings
import weakref
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from . import autograd, tensor_class
from .device import (CPU, DEVICE_TYPES, channels_last, check_device, check_memory_format,
                     device, not_on_cpu, strided)
from .dtypes import DTYPES, _category, as_dtype, result_type  # noqa: F401  (DTYPES: for importers)
from .errors import CastError, OpError, ShapeError
from .function import Node
from .hooks import RemovableHandle, hooks_stay_with_old_value
from .lazy_mode import realize_readers
from .ops import (Abs, Add, AllTrue, AnyTrue, ArgMax, ArgMin, ArgSort, Cast, Cat, Ceil, Clamp,
                  Clone, Compare, Cos, Cumsum, Div, Erf, Exp, Expand, Expm1, Floor, Gather,
                  GetItem, Log, Log1p, LogSoftmax, LogSumExp, MatMul, Max, Maximum, Mean, Min,
                  Minimum, Mul, Neg, Norm, Pad, Permute, Pow, Prod, ReLU, Repeat, RepeatInterleave,
                  Reshape, Roll, Round, Scatter, ScatterAdd, SetItem, Sigmoid, Sign, Sin,
                  Softmax, Split, Sqrt, Stack, Sub, Sum, Tanh, Unbind, Unfold, Var, Where)
from .ops.elementwise import (FloorDivide, Fmod, Remainder, RoundedDiv,
                              ScalarRemainder)
from .ops.indexing import AsStrided, CopySlices, is_basic, torch_placement
from .ops.reduce import normalize_dims
from .state import no_grad, rng_for, state
from .printing import numpy_options as numpy_print_options
from .tensor_compat import TensorCompat
from .tensor_math import TensorMath
from .tensor_stats import TensorStats
from .unsupported import refuse_names
from .versions import (VersionCounter, counter_of, is_remembered_view, make_view,
                       positions_in_base, record_write, shares_memory, views_of)

return_types = namedtuple("return_types", ["values", "indices"])

# PyTorch's legacy type names, for ``t.type()``
TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
              "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
              "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _unpack_shape(shape: tuple) -> tuple:
    """Accept both ``f(2, 3)`` and ``f((2, 3))``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _dims(dim, axis):
    return axis if dim is None else dim


def _keep(keepdim, keepdims):
    return bool(keepdims) if keepdims is not None else bool(keepdim)


class Tensor(TensorCompat, TensorMath, TensorStats):
    """A NumPy array plus autograd: ``data``, ``grad``, ``requires_grad``, ``grad_fn``."""

    # Every op makes a Tensor, so making one must be cheap: the attributes every tensor
    # sets are slots; those that most tensors leave at their default are class
    # attributes, written to the instance only when they change.
    __slots__ = ("_data", "_requires_grad", "grad_fn", "_output_index", "__weakref__",
                 "__dict__")
    _grad: Tensor | None = None  # .grad (a property: an assigned gradient is checked)
    label: str | None = None
    _base: Tensor | None = None  # for a view: the tensor whose data it shows
    _hooks: dict | None = None  # a dict once a hook is registered
    _retains_grad = False
    _lazy_node: Node | None = None  # lazy mode: the node that will compute it (its
    # output_meta has the shape and dtype)
    _version_counter: VersionCounter | None = None  # made at the first in-place write;
    # views and detached copies share their source's (versions.py)
    _views: dict | None = None  # a base's views made with grad mode on (weakly, by id)
    _several_views_of: str | None = None  # "split" for a piece of x.split(...): one of
    # several views made at once, which PyTorch refuses to modify in place with history
    _view_made_by: str | None = None  # a user's Function that returned (a view of) its
    # input as this recorded output: PyTorch refuses to modify it in place too

    __array_priority__ = 1000  # so that ndarray + Tensor gives a Tensor

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None,
                 label: str | None = None, device: Any = None) -> None:
        if device is not None:
            check_device(device, "tensor")
        sizes = _legacy_sizes(data, requires_grad, dtype, label)
        if sizes is not None:  # PyTorch's legacy Tensor(2, 3, 4): a shape, zero-filled here
            data, requires_grad, dtype, label = np.zeros(sizes, state.default_dtype), False, \
                None, None
        if not isinstance(requires_grad, (bool, np.bool_)):
            raise TypeError(
                f"Tensor: requires_grad must be True or False, got {requires_grad!r}. "
                "PyTorch's legacy Tensor(2, 3) (a shape) is mg.empty(2, 3) or "
                "mg.zeros(2, 3) here; Tensor(data) takes the values.")
        if isinstance(data, Tensor):
            if data.requires_grad:  # PyTorch warns: the result has none of its history
                warnings.warn(
                    "tensor: to copy a tensor, use t.detach().clone() (or "
                    "t.detach().clone().requires_grad_(True)) rather than mg.tensor(t): "
                    f"the new tensor (shape {tuple(data.shape)}) is cut from t's graph, so "
                    "no gradient will flow back through it.", UserWarning,
                    stacklevel=_caller_level())
            data = data.numpy()
        if dtype is not None:
            array = np.array(data, dtype=as_dtype(dtype))
        elif isinstance(data, (np.ndarray, np.generic)):
            array = np.array(data)  # a NumPy array keeps its dtype
        else:
            array = _array_from(data)
            if array.dtype.kind in "uf":
                _check_int64(array, data)
            inferred = _sequence_dtype(data) if isinstance(data, (list, tuple)) else None
            if inferred is not None:  # the list holds tensors, arrays or NumPy scalars
                array = array.astype(inferred, copy=False)
            # as PyTorch: Python floats become the default float (float32), ints int64
            elif array.dtype.kind == "f" or array.size == 0 and array.dtype.kind != "b":
                array = array.astype(state.default_dtype)
            elif array.dtype.kind in "iu":
                array = array.astype(np.int64, copy=False)
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
        self._requires_grad = requires_grad
        self.grad_fn = grad_fn
        self._output_index = output_index

    @classmethod
    def _make(cls, data, requires_grad: bool = False, grad_fn: Node | None = None,
              output_index: int = 0) -> Tensor:
        """Wrap an array without any checks or copies (the engine's fast path)."""
        t = object.__new__(cls)
        t._data = data  # _init's lines, repeated: this runs for every op
        t._requires_grad = requires_grad
        t.grad_fn = grad_fn
        t._output_index = output_index
        return t

    # --- attributes ---------------------------------------------------------------------

    @property
    def data(self) -> Tensor:
        """As in PyTorch: the same values as a Tensor without history, sharing this
        tensor's array, so ``p.data += -lr * p.grad`` updates ``p`` without being
        recorded (and without the version counter noticing). The array is ``numpy()``."""
        t = Tensor._make(self.numpy(force=True))
        t.label = self.label
        return t

    @data.setter
    def data(self, value: Any) -> None:
        """``p.data = other`` gives ``p`` other's values (shared), keeping its history."""
        if isinstance(value, Tensor):
            array = value.numpy(force=True)
        else:
            array = np.asarray(value)
            if array.dtype.kind not in "biufc":
                raise TypeError(f"data: expected a Tensor or an array of numbers, got "
                                f"{type(value).__name__}")
        if self.requires_grad and array.dtype.kind not in "fc":
            raise TypeError(f"data: this tensor requires grad, so its data must be "
                            f"floating point, got {array.dtype} (shape {array.shape})")
        realize_readers(self)  # deferred ops that read the old array run first
        self._data = array

    @property
    def grad(self) -> Tensor | None:
        """The gradient backward accumulated (a Tensor without history), or None. A
        non-leaf tensor's stays None unless ``retain_grad()`` was called: reading it then
        warns, as in PyTorch."""
        grad = self._grad
        if grad is None and self.grad_fn is not None and not self._retains_grad \
                and not sys._getframe(1).f_globals.get("__name__", "").startswith(
                    ("minigrad.", "widgets.")):
            warnings.warn(
                f"grad: this tensor (shape {tuple(self.shape)}, made by "
                f"{self.grad_fn.describe()}) is not a leaf, so backward() does not fill its "
                ".grad, which stays None. Call .retain_grad() on it before backward() to "
                "keep its gradient, or read .grad of the leaf tensor you meant.",
                UserWarning, stacklevel=2)
        return grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        """``t.grad = g`` is checked as in PyTorch: a Tensor (or None) of ``t``'s shape and
        dtype, so an optimizer never broadcasts a wrong one or fails later."""
        if value is not None:
            _check_assigned_grad(self, value)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    # ``t.requires_grad = True`` checks as requires_grad_() does; reading it costs one C call
    requires_grad = property(operator.attrgetter("_requires_grad"),
                             lambda self, value: self.requires_grad_(value),
                             doc="Will backward compute a gradient for this tensor?")

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
        self._requires_grad = bool(requires_grad)
        return self

    # --- conversions ----------------------------------------------------------------------

    def realize(self) -> Tensor:
        """Compute this tensor (and what it depends on) if lazy mode deferred it."""
        if self._lazy_node is not None:
            autograd.realize(self)
        return self

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a NumPy array, sharing this tensor's memory (no copy).

        For a result with history (a non-leaf that requires grad) the array is a
        read-only view: the op that made it may have saved that very array for backward
        (``exp`` does), so writing into it would make gradients silently wrong (PyTorch
        refuses ``numpy()`` on any tensor that requires grad). Reading works as usual; to
        write, ``t.detach().numpy()`` or ``t.numpy(force=True)`` give the writable array,
        as in PyTorch (and the edit is then yours to answer for). A leaf's array (a
        parameter's) stays the live, writable one, as hand-written updates expect."""
        array = self._data if self._lazy_node is None else self.realize()._data
        if self.grad_fn is not None and self._requires_grad and not force:
            array = array.view()
            array.flags.writeable = False
        return array

    # --- NumPy interop: explicit, so that NumPy never cuts a tensor from its graph ----------
    # np.asarray(t) gives the array, as t.numpy() does, but raises for a tensor that
    # requires grad (as PyTorch's numpy() does): the array has no history, so a gradient
    # would be lost without a word. NumPy functions that minigrad has as an op (np.exp,
    # np.add, np.sum, ...) run that op and give a Tensor, gradient kept; the others
    # compute with NumPy on tensors without grad and raise on ones that require it.

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if self.requires_grad:
            raise RuntimeError(
                f"NumPy was given a tensor that requires grad (shape {self.shape}, "
                f"{self.dtype}); its array has no history, so the gradient would be lost. "
                "Call .detach().numpy() if you want the values without gradient, or use "
                "minigrad's ops (x.exp(), mg.stack(...), ...) to keep it.")
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        operation = NUMPY_UFUNCS.get(ufunc.__name__)
        if operation is not None and method == "__call__" and not kwargs:
            return operation(*[_numpy_operand(a) for a in inputs])
        _refuse_grad(f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}"),
                     inputs + tuple(kwargs.get("out", ())))
        if "out" in kwargs:
            kwargs["out"] = tuple(o.numpy() if isinstance(o, Tensor) else o
                                  for o in kwargs["out"])
        arrays = [a.numpy() if isinstance(a, Tensor) else a for a in inputs]
        return getattr(ufunc, method)(*arrays, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        operation = NUMPY_FUNCTIONS.get(func.__name__)
        if operation is not None and getattr(np, func.__name__, None) is func:
            try:
                return operation(*args, **kwargs)
            except TypeError:  # an argument minigrad's op lacks (out=, dtype=, ...)
                pass
        flat = [a for arg in (*args, *kwargs.values())
                for a in (arg if isinstance(arg, (list, tuple)) else (arg,))]
        _refuse_grad(f"np.{func.__name__}", flat)
        return func(*_numpy_arrays(args), **{k: _numpy_arrays((v,))[0]
                                             for k, v in kwargs.items()})

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
        t = Tensor._make(self.numpy(force=True))
        t._version_counter, t.label = counter_of(self), self.label
        return t

    def clone(self, *, memory_format: Any = None) -> Tensor:
        check_memory_format(memory_format, "clone")  # (every layout is NumPy's here)
        return Clone.apply(self)

    def astype(self, dtype: Any) -> Tensor:
        dtype = as_dtype(dtype)
        return self if dtype == self.dtype else Cast.apply(self, dtype)

    def to(self, *args: Any, dtype: Any = None, device: Any = None, non_blocking: bool = False,
           copy: bool = False, memory_format: Any = None) -> Tensor:
        """PyTorch's forms: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
        ``to(other_tensor)`` (its dtype). The device must be the CPU; ``memory_format``:
        accepted, the values stay in row order (``mg.channels_last``)."""
        if memory_format is not None:
            check_memory_format(memory_format, "to")
        device, dtype = parse_to(args, device, dtype, "to")
        result = self if dtype is None else self.astype(dtype)
        return result.clone() if copy and result is self else result

    @property
    def device(self) -> device:
        """Always ``device(type='cpu')``: minigrad computes with NumPy on the CPU."""
        return CPU

    def get_device(self) -> int:
        """-1: the CPU (PyTorch's number for it; a GPU's index otherwise)."""
        return -1

    layout = strided  # PyTorch's only dense layout

    @property
    def real(self) -> Tensor:
        """The tensor itself: minigrad's tensors are real (as PyTorch's real tensors)."""
        return self

    @property
    def imag(self) -> Tensor:
        raise RuntimeError(f"imag is not implemented for tensors with non-complex dtypes "
                           f"(this one is {self.dtype}, shape {tuple(self.shape)}): "
                           "minigrad has no complex tensors")

    is_cuda = False
    is_cpu = True

    def cpu(self) -> Tensor:
        return self

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Tensor:
        raise RuntimeError(not_on_cpu("cuda" if device is None else device, "cuda()"))

    def pin_memory(self) -> Tensor:
        """Nothing to pin: there is no GPU to copy to."""
        return self

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

    def type(self, dtype: Any = None) -> Any:
        """``t.type()`` is PyTorch's type name (``'torch.FloatTensor'``); ``t.type(dtype)``
        converts (a dtype, or a name such as ``'torch.DoubleTensor'``)."""
        if dtype is None:
            return "torch." + TYPE_NAMES.get(self.dtype.name, self.dtype.name + "Tensor")
        dtype = getattr(dtype, "legacy_dtype", dtype)  # t.type(torch.FloatTensor)
        if isinstance(dtype, str) and dtype.removeprefix("torch.") in TYPE_NAMES.values():
            name = dtype.removeprefix("torch.")
            dtype = next(k for k, v in TYPE_NAMES.items() if v == name)
        return self.astype(dtype)

    def type_as(self, other: Tensor) -> Tensor:
        return self.astype(other.dtype)

    def nelement(self) -> int:
        return self.numel()

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Are the elements stored in row order (``channels_last``: as (N, H, W, C))?"""
        if memory_format is not None:
            check_memory_format(memory_format, "is_contiguous")
        if self._data is None:
            return True
        if memory_format is channels_last and self.ndim == 4:
            return self.numpy().transpose(0, 2, 3, 1).flags.c_contiguous
        return self.numpy().flags.c_contiguous

    def contiguous(self, memory_format: Any = None) -> Tensor:
        """Itself if its elements are stored in row order, else a copy that is (NumPy
        arrays are strided too: after a transpose they are not). Any ``memory_format``
        gives row order: a format changes strides, not values."""
        if memory_format is not None:
            check_memory_format(memory_format, "contiguous")
        return self if self.is_contiguous() else Clone.apply(self)

    # new tensors with this tensor's dtype (PyTorch's new_* methods)
    def new_tensor(self, data, dtype=None, requires_grad=False) -> Tensor:
        return Tensor(data, requires_grad=requires_grad, dtype=dtype or self.dtype)

    def new_zeros(self, *size, dtype=None, requires_grad=False) -> Tensor:
        return self.new_full(_unpack_shape(size), 0, dtype=dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, requires_grad=False) -> Tensor:
        return self.new_full(_unpack_shape(size), 1, dtype=dtype, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, requires_grad=False) -> Tensor:
        """Zeros: NumPy's uninitialised memory would make notebooks non-deterministic."""
        return self.new_full(_unpack_shape(size), 0, dtype=dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, requires_grad=False) -> Tensor:
        array = np.full(_unpack_shape((size,)), fill_value, dtype=as_dtype(dtype or self.dtype))
        return Tensor._make(array).requires_grad_(requires_grad)

    # --- autograd -------------------------------------------------------------------------

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Compute the gradient of this tensor with respect to every leaf that requires
        grad (or only ``inputs``), accumulating into their ``.grad``."""
        autograd.backward([self], [gradient], retain_graph, create_graph, inputs)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """``hook(grad)`` runs when this tensor's gradient is computed; a returned tensor
        replaces the gradient."""
        if not self.requires_grad:
            raise RuntimeError("register_hook: cannot register a hook on a tensor that "
                               "does not require grad")
        if self._hooks is None:
            self._hooks = {}
        if self.grad_fn is not None:  # backward looks at its outputs' hooks only then
            self.grad_fn._output_hooks = True
        key = len(self._hooks) and max(self._hooks) + 1
        self._hooks[key] = hook
        return RemovableHandle(self._hooks, key)

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf tensor in ``.grad`` after backward."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad")
        if not self.is_leaf:
            self._retains_grad = True
            self.grad_fn._output_hooks = True  # (see register_hook)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    # --- in-place -------------------------------------------------------------------------

    def _modify(self, function: Any, *args: Any, **kwargs: Any) -> Tensor:
        """Apply ``function`` (a Function, or a plain function of tensors for an update
        built from several ops, like ``lerp_``) to self and write the result into self's
        own array.

        With history to record this is PyTorch's in-place op: the graph node of the new
        value takes ``self``'s place, and a stand-in for the old value becomes its input.
        Every node that saved the old array will notice (its version moved on). On a view,
        the op is recorded on its base (``_write_through_view``); either way the views of
        the memory written get a history that reads the new values (``_views_follow``)."""
        values = [a for a in args if isinstance(a, Tensor)]
        if args and type(args[0]) is int and self.dtype.kind in "iu":  # (uint8 -= 300)
            args = (_wrapped(args[0], self.dtype, written=function is SetItem),) + args[1:]
        self.realize()
        for v in values:
            v.realize()
        base = self._base if self._base is not None \
            and np.may_share_memory(self._data, self._base._data) else None
        record = state.grad_enabled and (self.requires_grad or (
            base is not None and base.requires_grad) or any(v.requires_grad for v in values))
        if record:
            _check_in_place_allowed(self, base)
        apply = getattr(function, "apply", function)
        previous, state.lazy = state.lazy, False
        try:
            if record and base is not None:
                self._write_through_view(base, function, args, kwargs)
            elif record:
                old = Tensor._make(self._data.copy(), self.requires_grad, self.grad_fn,
                                   self._output_index)
                old.label = self.label
                result = apply(old, *args, **kwargs)
                self._write(result._data, function, args)
                self._take_history(result)
                written = self._data
                if function is SetItem and is_basic(args[1]):  # only x[index] changed
                    written = self._data[args[1]]
                self._views_follow(written if isinstance(written, np.ndarray)
                                   else self._data)  # (one element: NumPy gives a copy)
            else:
                arrays = tuple(a._data if isinstance(a, Tensor) else a for a in args)
                with no_grad():
                    result = apply(self, *arrays, **kwargs)
                self._write(result._data, function, args)
        finally:
            state.lazy = previous
        return self

    def _write_through_view(self, base: Tensor, function: Any, args: tuple,
                            kwargs: dict) -> None:
        """An in-place op on ``self``, a view of ``base``, recorded as PyTorch does: the
        new base is ``CopySlices(old base, op(AsStrided(old base)))``, the old base with
        the view's elements replaced by the op of them, and the view (as every view that
        overlaps it) then reads from the new base."""
        where = positions_in_base(self._data, base._data)
        old = Tensor._make(base._data.copy(), base.requires_grad, base.grad_fn,
                           base._output_index)
        old.label = base.label
        result = getattr(function, "apply", function)(AsStrided.apply(old, where), *args,
                                                      **kwargs)
        self._write(result._data, function, args)  # the checks come before any history
        base._take_history(CopySlices.apply(old, result, where))
        base._views_follow(self._data)

    def _take_history(self, result: Tensor) -> None:
        """``self`` becomes the output of the node that made ``result`` (its new value)."""
        node = result.grad_fn
        outputs = list(node._outputs)  # (a tuple for a one-output node: apply)
        outputs[result._output_index] = weakref.ref(self)
        node._outputs = outputs
        hooks_stay_with_old_value(self, node)
        self.grad_fn, self._output_index = node, result._output_index
        self._requires_grad = True

    def _views_follow(self, written: np.ndarray) -> None:
        """After an in-place op recorded on ``self``: each view of it that shows some of
        the ``written`` memory gets the history "these elements of the new self", so its
        next use reads (and backpropagates to) the new values. (A view that shows none of
        it has the same values either way, and keeps its history.)"""
        for view in views_of(self):
            if view._data is not None and shares_memory(view._data, written):
                positions = positions_in_base(view._data, self._data)
                view._take_history(AsStrided.apply(self, positions))

    def _write(self, values: np.ndarray, function: Any = None, args: tuple = ()) -> None:
        """Write ``values`` (an op's result) into self's array, which keeps its shape and
        dtype; ``function`` and ``args`` name the op in the error if it cannot."""
        if values.shape != self.shape:
            raise ShapeError(
                f"in-place: the result has shape {values.shape} but this tensor has shape "
                f"{self.shape}; an in-place op cannot change a tensor's shape (the other "
                "operand must broadcast to it). Use the out-of-place op instead."
            )
        if _category(values.dtype) > _category(self.dtype):  # PyTorch's rule: no float
            # into an integer tensor, nor a number into a bool one (uint8 += int8 is fine)
            raise _cannot_hold(self, values.dtype, function, args)
        realize_readers(self)  # deferred ops that read the old values run first
        try:
            self._data[...] = values
        except ValueError as error:  # e.g. a read-only view made by expand()
            raise ShapeError(
                f"in-place: cannot write into this tensor (shape {self.shape}): {error}. "
                "Views made by expand() or unfold() are read-only; clone() first."
            ) from error
        record_write(self)

    def __setitem__(self, index: Any, value: Any) -> None:
        index = _index(index)
        if type(index) is tuple and len(index) > 1:  # (ints and tensors: see torch_placement)
            placed = torch_placement(index, self.shape)
            if placed is not None:
                index, value = placed[0], _unsqueezed_value(self, placed, value)
        self._modify(SetItem, value, index)

    def add_(self, other: Any, alpha: float = 1) -> Tensor:
        other, alpha = _deprecated_alpha_first(other, alpha)
        return self._modify(Add, _in_place_operand(self, other if alpha == 1 else other * alpha))

    def sub_(self, other: Any, alpha: float = 1) -> Tensor:
        other, alpha = _deprecated_alpha_first(other, alpha)
        Sub.refuse_bool(self, other)
        return self._modify(Sub, _in_place_operand(self, other if alpha == 1 else other * alpha))

    def mul_(self, other: Any) -> Tensor:
        return self._modify(Mul, _in_place_operand(self, other))

    def div_(self, other: Any) -> Tensor:
        return self._modify(Div, _in_place_operand(self, other))

    def clamp_(self, min: float | None = None, max: float | None = None) -> Tensor:
        if isinstance(min, Tensor) or isinstance(max, Tensor):  # bounds per element
            return self._modify(_clamp, min, max)
        return self._modify(Clamp, min=min, max=max)

    def copy_(self, source: Any) -> Tensor:
        return self._modify(SetItem, source, Ellipsis)

    def fill_(self, value: float) -> Tensor:
        if isinstance(value, Tensor) and value.ndim:  # as PyTorch: copy_ takes a tensor
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions (shape {value.shape}; this tensor: {self.shape}). "
                "Use copy_(value) to copy a tensor's values in."
            )
        return self._modify(SetItem, value, Ellipsis)

    def zero_(self) -> Tensor:
        return self.fill_(0)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
        rng = rng_for(generator, "uniform_")
        return self.copy_(rng.uniform(a, b, self.shape).astype(self.dtype))

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
        rng = rng_for(generator, "normal_")
        return self.copy_(rng.normal(mean, std, self.shape).astype(self.dtype))

    # the updates hand-written optimizers use, each built from the ops it names
    def lerp_(self, end: Any, weight: Any) -> Tensor:
        return self._modify(_lerp, end, weight)

    def addcmul_(self, tensor1: Any, tensor2: Any, *, value: float = 1) -> Tensor:
        return self._modify(_addcmul, tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1: Any, tensor2: Any, *, value: float = 1) -> Tensor:
        return self._modify(_addcdiv, tensor1, tensor2, value=value)

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        return self._modify(_masked_fill, _mask_array(mask, self, "masked_fill_"), value)

    def scatter_(self, dim: int, index: Any, src: Any = None, *, value: Any = None) -> Tensor:
        index, d, source = _scatter_arguments(self, dim, index, src, value, "scatter_")
        return self._modify(Scatter, index, source, d)

    def scatter_add_(self, dim: int, index: Any, src: Any) -> Tensor:
        index, d, _ = _scatter_arguments(self, dim, index, src, None, "scatter_add_")
        return self._modify(ScatterAdd, index, src, d)

    def sqrt_(self) -> Tensor: return self._modify(Sqrt)
    def exp_(self) -> Tensor: return self._modify(Exp)
    def log_(self) -> Tensor: return self._modify(Log)
    def abs_(self) -> Tensor: return self._modify(Abs)
    def neg_(self) -> Tensor: return self._modify(Neg)
    def relu_(self) -> Tensor: return self._modify(ReLU)
    def sigmoid_(self) -> Tensor: return self._modify(Sigmoid)
    def tanh_(self) -> Tensor: return self._modify(Tanh)
    def pow_(self, exponent: Any) -> Tensor:
        return self._modify(Pow, _in_place_operand(self, exponent))

    def clip_(self, min=None, max=None) -> Tensor: return self.clamp_(min, max)

    # in-place shape changes: the tensor becomes a view of itself with another shape
    def unsqueeze_(self, dim: int) -> Tensor: return self._reshape_in_place(Tensor.unsqueeze, dim)
    def squeeze_(self, dim=None) -> Tensor: return self._reshape_in_place(Tensor.squeeze, dim)
    def t_(self) -> Tensor: return self._reshape_in_place(Tensor.t)

    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        return self._reshape_in_place(Tensor.transpose, dim0, dim1)

    def _reshape_in_place(self, method: Callable, *args: Any) -> Tensor:
        """``self`` becomes ``method(self, *args)`` (a view of its own data). Recorded, the
        op's graph node takes self's place, as ``_modify`` does for a value change."""
        record = state.grad_enabled and self.requires_grad
        if record and self.is_leaf:
            raise RuntimeError(
                f"in-place: a leaf tensor that requires grad (shape {self.shape}) cannot be "
                f"changed in place by {method.__name__}_; use {method.__name__}() instead, "
                "or do it inside `with mg.no_grad():`."
            )
        self.realize()
        realize_readers(self)  # deferred ops that read it run with its old shape
        previous, state.lazy = state.lazy, False
        try:
            if record:
                stand_in = Tensor._make(self._data, True, self.grad_fn, self._output_index)
                result = method(stand_in, *args)
                self._take_history(result)
            else:
                with no_grad():
                    result = method(self, *args)
        finally:
            state.lazy = previous
        self._data = result._data
        record_write(self)  # PyTorch counts it as a write too
        return self

    def floor_divide_(self, other: Any) -> Tensor:
        return self._modify(FloorDivide, _in_place_operand(self, other))

    def remainder_(self, other: Any) -> Tensor:
        return self._modify(Remainder, _in_place_operand(self, other))

    def fmod_(self, other: Any) -> Tensor:
        return self._modify(Fmod, _in_place_operand(self, other))

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_
    __ifloordiv__ = floor_divide_
    __imod__ = remainder_
    __ipow__ = pow_

    # --- arithmetic (broadcasting; numbers on either side) ----------------------------------

    # _plain: no cast needed (the usual case); else _promote casts as PyTorch's promotion
    def __add__(self, other):
        return Add.apply(self, other) if _plain(self, other) else Add.apply(*_promote(self, other))

    def __radd__(self, other):
        return Add.apply(other, self) if _plain(self, other) \
            else Add.apply(*_promote(self, other, reflected=True))

    def __sub__(self, other):
        if _plain(self, other):
            return Sub.apply(self, other)
        Sub.refuse_bool(self, other)  # (before promotion makes a mask numbers)
        return Sub.apply(*_promote(self, other))

    def __rsub__(self, other):
        if _plain(self, other):
            return Sub.apply(other, self)
        Sub.refuse_bool(other, self)
        return Sub.apply(*_promote(self, other, reflected=True))

    def __mul__(self, other):
        return Mul.apply(self, other) if _plain(self, other) else Mul.apply(*_promote(self, other))

    def __rmul__(self, other):
        return Mul.apply(other, self) if _plain(self, other) \
            else Mul.apply(*_promote(self, other, reflected=True))

    def __truediv__(self, other):
        return Div.apply(self, other) if _plain(self, other, division=True) \
            else Div.apply(*_promote(self, other, division=True))

    def __rtruediv__(self, other):
        return Div.apply(other, self) if _plain(self, other, division=True) \
            else Div.apply(*_promote(self, other, reflected=True, division=True))

    # // and %: as in PyTorch (and Python), rounded toward -inf; integers stay integers
    def __floordiv__(self, other):
        return FloorDivide.apply(*_operands(self, other))

    def __rfloordiv__(self, other):
        return FloorDivide.apply(*_operands(self, other, reflected=True))

    def __mod__(self, other): return Remainder.apply(*_operands(self, other))
    def __rmod__(self, other):  # number % tensor: no derivative in PyTorch
        function = Remainder if isinstance(other, Tensor) else ScalarRemainder
        return function.apply(*_operands(self, other, reflected=True))

    def __pow__(self, exponent):
        if _plain(self, exponent):
            return Pow.apply(self, exponent)
        if type(exponent) is int and exponent < 0 and self.dtype.kind in "biu":
            raise OpError(f"pow: Integers to negative integer powers are not allowed (as in "
                          f"PyTorch; tensor of {self.dtype}, shape {self.shape}, to the power "
                          f"{exponent}); use a floating base: x.float() ** exponent")
        if type(exponent) is bool and self.dtype == np.bool_:  # PyTorch: stays bool
            return Pow.apply(self, exponent).astype(np.bool_)
        return Pow.apply(*_promote(self, exponent))

    def __rpow__(self, base):
        return Pow.apply(base, self) if _plain(self, base) \
            else Pow.apply(*_promote(self, base, reflected=True))

    def __matmul__(self, other): return MatMul.apply(self, _operand(other))
    def __rmatmul__(self, other): return MatMul.apply(_operand(other), self)
    def __neg__(self): return Neg.apply(self)
    def __pos__(self): return self
    def __abs__(self): return Abs.apply(self)

    add, sub, mul, pow, matmul = __add__, __sub__, __mul__, __pow__, __matmul__
    floor_divide, remainder = __floordiv__, __mod__
    def fmod(self, other): return Fmod.apply(*_operands(self, other))

    def div(self, other, *, rounding_mode=None):
        """self / other; ``rounding_mode`` "trunc" or "floor" rounds the quotient (keeping
        integer dtypes, zero gradient), as PyTorch's ``div``."""
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or "
                             f"'floor' but found {rounding_mode!r}")
        return RoundedDiv.apply(*_operands(self, other), rounding_mode=rounding_mode)

    divide = div
    def neg(self): return Neg.apply(self)
    def abs(self): return Abs.apply(self)
    # float-only maths: an integer or bool tensor is computed in float32 (_floating)
    def exp(self): return Exp.apply(_floating(self))
    def log(self): return Log.apply(_floating(self))
    def sqrt(self): return Sqrt.apply(_floating(self))
    def sin(self): return Sin.apply(_floating(self))
    def cos(self): return Cos.apply(_floating(self))
    def tanh(self): return Tanh.apply(_floating(self))
    def sigmoid(self): return Sigmoid.apply(_floating(self))
    def relu(self): return ReLU.apply(self)
    def maximum(self, other): return Maximum.apply(*_operands(self, other))
    def minimum(self, other): return Minimum.apply(*_operands(self, other))
    def log1p(self): return Log1p.apply(_floating(self))
    def expm1(self): return Expm1.apply(_floating(self))
    def erf(self): return Erf.apply(_floating(self))
    def sign(self): return Sign.apply(self) if self.dtype != np.bool_ else self.clone()
    def floor(self): return Floor.apply(self)
    def ceil(self): return Ceil.apply(self)
    def round(self, decimals: int = 0): return Round.apply(self, decimals=decimals)
    # composites: the Functions above, combined
    def square(self):  # (a bool tensor squares to int64, as in PyTorch)
        x = self if self.dtype != np.bool_ else self.astype(np.int64)
        return Mul.apply(x, x)
    def reciprocal(self): return Div.apply(1.0, _floating(self))
    def rsqrt(self): return Div.apply(1.0, Sqrt.apply(_floating(self)))
    def log2(self): return Div.apply(Log.apply(_floating(self)), math.log(2))
    def log10(self): return Div.apply(Log.apply(_floating(self)), math.log(10))
    def lerp(self, end, weight): return _lerp(self, end, weight)
    def addcmul(self, tensor1, tensor2, *, value=1): return _addcmul(self, tensor1, tensor2, value)
    def addcdiv(self, tensor1, tensor2, *, value=1): return _addcdiv(self, tensor1, tensor2, value)

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:
        if min is None and max is None:
            raise ValueError("clamp: give at least one of min and max")
        if isinstance(min, Tensor) or isinstance(max, Tensor):  # bounds per element
            low = self if min is None else self.maximum(min)
            return low if max is None else low.minimum(max)
        if self.dtype.kind in "iu":
            _check_bounds_fit(self, min, max)
        if self.dtype.kind != "f" and (type(min) is float or type(max) is float):
            # as PyTorch: integers clamped to float bounds give the default float
            bounds = [bound for bound in (min, max) if bound is not None]
            return Clamp.apply(self.astype(result_type(self, *bounds)), min=min, max=max)
        return Clamp.apply(self, min=min, max=max)

    clip = clamp
    def clamp_min(self, min): return self.clamp(min=min)
    def clamp_max(self, max): return self.clamp(max=max)

    # --- comparisons (bool tensors without history) --------------------------------------

    # (compared in PyTorch's promoted dtype: a float32 tensor == a 0-d float64 one in float32)
    def __lt__(self, other): return Compare.apply(*_operands(self, other), op="<")
    def __le__(self, other): return Compare.apply(*_operands(self, other), op="<=")
    def __gt__(self, other): return Compare.apply(*_operands(self, other), op=">")
    def __ge__(self, other): return Compare.apply(*_operands(self, other), op=">=")

    def __eq__(self, other):  # type: ignore[override]
        if other is None:  # as PyTorch: `t == None` is False, not a tensor of them
            return False
        return Compare.apply(*_operands(self, other), op="==")

    def __ne__(self, other):  # type: ignore[override]
        if other is None:
            return True
        return Compare.apply(*_operands(self, other), op="!=")

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__
    __hash__ = object.__hash__  # == compares elements, so hash by identity

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"the truth value of a tensor with {self.numel()} elements (shape "
                f"{self.shape}) is ambiguous; use .any() or .all()"
            )
        return bool(self.item())

    def any(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:
        """A bool tensor: is some element (along ``dim``) nonzero?"""
        return AnyTrue.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    def all(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None) -> Tensor:
        return AllTrue.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    # --- reductions ------------------------------------------------------------------------

    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
        """``dtype=``: the input is cast to it first (so the sum is computed in it)."""
        x = self if dtype is None else self.astype(dtype)
        return Sum.apply(x, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
        x = self if dtype is None else self.astype(dtype)
        _check_floating(x, "mean")
        return Mean.apply(x, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

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

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
            keepdims=None) -> Tensor:
        """As in PyTorch, the second positional argument is ``unbiased`` (``x.var(0,
        False)`` divides by n); ``correction=`` is the newer spelling (n - correction)."""
        if correction is None:
            correction = 1 if unbiased is None else int(unbiased)
        elif unbiased is not None:
            raise TypeError("var: give unbiased or correction, not both")
        _check_floating(self, "var")
        if self.dtype == np.float16:  # as PyTorch: summed in float32 (float16 squares
            # overflow past 65504), the result rounded to float16
            return Var.apply(self.astype(np.float32), dim=_dims(dim, axis),
                             keepdim=_keep(keepdim, keepdims), correction=correction
                             ).astype(np.float16)
        return Var.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims),
                         correction=correction)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
            keepdims=None) -> Tensor:
        _check_floating(self, "std")
        if self.dtype == np.float16:  # (in float32, rounded once at the end, as PyTorch)
            return self.astype(np.float32).std(dim, unbiased, keepdim, correction=correction,
                                               axis=axis, keepdims=keepdims).astype(np.float16)
        return self.var(dim, unbiased, keepdim, correction=correction, axis=axis,
                        keepdims=keepdims).sqrt()

    def logsumexp(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        return LogSumExp.apply(_floating(self), dim=_dims(dim, axis),
                               keepdim=_keep(keepdim, keepdims))

    def prod(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
        x = self if dtype is None else self.astype(dtype)
        return Prod.apply(x, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    def cumsum(self, dim: int | None = None, *, dtype=None, axis=None) -> Tensor:
        dim = _dims(dim, axis)
        if dim is None:
            raise TypeError("cumsum: give the dim to sum along, e.g. x.cumsum(0)")
        x = self if dtype is None else self.astype(dtype)
        if self.ndim == 0:  # a 0-d tensor is its own running sum
            return x.reshape(1).cumsum(0).reshape(())
        return Cumsum.apply(x, normalize_dims(dim, self.ndim, "cumsum")[0])

    def amax(self, dim=(), keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        """The largest values over ``dim`` (all dims if ``()``); no indices, and the
        gradient is split evenly between ties, as in PyTorch."""
        dim = axis if axis is not None else dim
        return Max.apply(self, dim=None if dim == () else dim,
                         keepdim=_keep(keepdim, keepdims))

    def amin(self, dim=(), keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        dim = axis if axis is not None else dim
        return Min.apply(self, dim=None if dim == () else dim,
                         keepdim=_keep(keepdim, keepdims))

    def norm(self, p="fro", dim=None, keepdim=False) -> Tensor:
        """The p-norm over ``dim`` (all elements by default): ``"fro"`` and 2 are
        sqrt(sum x^2), 1 is sum |x|, ``inf`` max |x|, ``-inf`` min |x|, other p
        (sum |x|^p)^(1/p)."""
        if p == "fro":
            p = 2
        if p == math.inf:
            return self.abs().amax(() if dim is None else dim, keepdim)
        if p == -math.inf:
            return self.abs().amin(() if dim is None else dim, keepdim)
        if isinstance(p, (int, float)) and not isinstance(p, bool) and p > 0:
            if self.dtype == np.float16:  # (summed in float32, as var)
                return Norm.apply(self.astype(np.float32), p=p, dim=dim,
                                  keepdim=keepdim).astype(np.float16)
            return Norm.apply(self, p=p, dim=dim, keepdim=keepdim)
        raise ValueError(f"norm: p={p!r} is not supported; use 'fro', a positive number, "
                         "inf or -inf")

    def argmax(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        return ArgMax.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    def argmin(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        return ArgMin.apply(self, dim=_dims(dim, axis), keepdim=_keep(keepdim, keepdims))

    # --- shape -------------------------------------------------------------------------------

    def reshape(self, *shape) -> Tensor:
        return Reshape.apply(self, _unpack_shape(shape))

    def view(self, *shape) -> Tensor:
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
            return self._view_as_dtype(shape[0])  # x.view(mg.int32): the same bytes
        return Reshape.apply(self, _unpack_shape(shape))

    def _view_as_dtype(self, dtype: Any) -> Tensor:
        """The same memory read as another dtype of the same size (PyTorch's
        ``view(dtype)``), without history: bits have no gradient."""
        dtype = as_dtype(dtype)
        if dtype.itemsize != self.dtype.itemsize:
            raise ValueError(f"view: minigrad views a tensor as a dtype of the same size "
                             f"only; {self.dtype} has {self.dtype.itemsize} bytes, {dtype} "
                             f"{dtype.itemsize} (shape {self.shape}). Use .to({dtype}) to "
                             "convert the values instead.")
        view = Tensor._make(self.numpy().view(dtype))
        make_view(view, self)
        return view

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        start, end = (normalize_dims(d, self.ndim, "flatten")[0] for d in (start_dim, end_dim))
        if start > end:
            raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                             f"(tensor of shape {self.shape}); give start_dim <= end_dim")
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
        if not dims:  # a 0-d tensor: its one dim (0 or -1) is itself
            return Permute.apply(self, ())
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

    def broadcast_to(self, *shape) -> Tensor:
        return self.expand(*shape)

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other.shape)

    def t(self) -> Tensor:
        """Transpose of a matrix (a tensor of at most 2 dims; 0-d and 1-d stay as they are)."""
        if self.ndim > 2:
            raise ShapeError(f"t: expects a tensor of at most 2 dimensions, got shape "
                             f"{self.shape}; use transpose(dim0, dim1) or mT")
        return self.transpose(0, 1) if self.ndim == 2 else self.view(self.shape)

    def split(self, split_size_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
        """Pieces along ``dim``: of ``split_size`` each (the last may be smaller), or of
        the sizes in a list (which must add up to the size of ``dim``)."""
        d = normalize_dims(dim, self.ndim, "split")[0]
        length = self.shape[d]
        if isinstance(split_size_or_sections, (int, np.integer)):
            size = int(split_size_or_sections)
            if size <= 0 and length:
                raise ValueError(f"split: split_size must be positive, got {size}")
            sizes = [min(size, length - start) for start in range(0, length, size)] or [0]
        else:
            sizes = [int(n) for n in split_size_or_sections]
        pieces = Split.apply(self, tuple(sizes), d)
        pieces = pieces if isinstance(pieces, tuple) else (pieces,)
        return _several_views(self, pieces, "split")

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """``chunks`` pieces (or fewer) of equal size along ``dim``, the last smaller."""
        if chunks <= 0:
            raise ValueError(f"chunk: the number of chunks must be positive, got {chunks}")
        length = self.shape[normalize_dims(dim, self.ndim, "chunk")[0]]
        return self.split(max(-(-length // chunks), 1), dim)

    def tensor_split(self, indices_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
        """Views along ``dim``: ``sections`` (an int) pieces, the first ``n % sections``
        one longer, so always that many (some may be empty); or the pieces between the
        ``indices`` (a list, or a 1-D integer tensor): x[:i0], x[i0:i1], ..., x[ik:]."""
        d = normalize_dims(dim, self.ndim, "tensor_split")[0]
        cuts = indices_or_sections
        if isinstance(cuts, Tensor):
            cuts = cuts.item() if cuts.ndim == 0 else cuts.tolist()
        if isinstance(cuts, (int, np.integer)):
            if cuts <= 0:
                raise ValueError(f"tensor_split: the number of sections must be positive, "
                                 f"got {cuts}")
            length, sections = self.shape[d], int(cuts)
            sizes = [length // sections + (i < length % sections) for i in range(sections)]
            cuts = np.cumsum(sizes[:-1]).tolist()
        starts, stops = [0, *cuts], [*cuts, None]
        pieces = tuple(self[(slice(None),) * d + (slice(int(a), None if b is None else int(b)),)]
                       for a, b in zip(starts, stops))
        return _several_views(self, pieces, "tensor_split")

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def repeat_interleave(self, repeats, dim: int | None = None) -> Tensor:
        """Each element (or slice along ``dim``) repeated ``repeats`` times in a row."""
        x = self.flatten() if dim is None else self
        d = 0 if dim is None else normalize_dims(dim, self.ndim, "repeat_interleave")[0]
        counts = repeats.numpy() if isinstance(repeats, Tensor) else np.asarray(repeats)
        if counts.dtype.kind not in "iu" or np.any(counts < 0) or counts.ndim > 1 or (
                counts.ndim == 1 and counts.shape != (x.shape[d],)):
            raise ShapeError(
                f"repeat_interleave: repeats must be a non-negative int or one count per "
                f"slice ({x.shape[d]} along dim {d} of shape {x.shape}), got {counts.tolist()}")
        return RepeatInterleave.apply(x, counts if counts.ndim else int(counts), d)

    def tril(self, diagonal: int = 0) -> Tensor:
        """The lower triangle of the last two dims (from ``diagonal`` down); zeros above."""
        return Where.apply(self._triangle("tril", diagonal), self, np.zeros((), self.dtype))

    def triu(self, diagonal: int = 0) -> Tensor:
        """The upper triangle of the last two dims (from ``diagonal`` up); zeros below."""
        return Where.apply(~self._triangle("triu", diagonal - 1), self,
                           np.zeros((), self.dtype))

    def _triangle(self, op: str, diagonal: int) -> np.ndarray:
        if self.ndim < 2:
            raise ShapeError(f"{op}: expects a tensor of at least 2 dimensions (a matrix or "
                             f"a batch of them), got shape {self.shape}")
        return np.tri(self.shape[-2], self.shape[-1], diagonal, dtype=bool)

    def diag(self, diagonal: int = 0) -> Tensor:
        """Of a vector: the square matrix with it on a diagonal; of a matrix: that diagonal."""
        if self.ndim == 1:
            n = self.shape[0] + abs(diagonal)
            rows = np.arange(self.shape[0]) + max(-diagonal, 0)
            out = Tensor._make(np.zeros((n, n), dtype=self.dtype))
            out[rows, rows + diagonal] = self
            return out
        if self.ndim == 2:
            count = max(min(self.shape[0] + min(diagonal, 0), self.shape[1] - max(diagonal, 0)), 0)
            rows = np.arange(count) + max(-diagonal, 0)
            return self[rows, rows + diagonal]
        raise ShapeError(f"diag: expects a 1-D or 2-D tensor, got shape {self.shape}")

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
        return _several_views(self, result if isinstance(result, tuple) else (result,), "unbind")

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        """Windows of ``size`` elements, ``step`` apart, along ``dimension`` (a view)."""
        d = normalize_dims(dimension, self.ndim, "unfold")[0]
        return Unfold.apply(self, d, size, step)

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return gather(self, dim, index)

    # --- selection -----------------------------------------------------------------------------

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        """``value`` where ``mask`` is True (a bool tensor that broadcasts to self)."""
        return _masked_fill(self, _mask_array(mask, self, "masked_fill"), value)

    def where(self, condition: Any, other: Any) -> Tensor:
        """``self`` where ``condition`` holds, ``other`` elsewhere (``mg.where``)."""
        return where(condition, self, other)

    def index_select(self, dim: int, index: Any) -> Tensor:
        """The slices at ``index`` (a 1-D integer tensor) along ``dim``."""
        index = index.numpy() if isinstance(index, Tensor) else np.asarray(index)
        if index.ndim > 1 or index.dtype.kind not in "iu":
            raise ShapeError(f"index_select: index must be a 1-D integer tensor, got "
                             f"{index.dtype} of shape {index.shape}")
        d = normalize_dims(dim, self.ndim, "index_select")[0]
        return self[(slice(None),) * d + (index.reshape(-1),)]

    def scatter(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                reduce: str | None = None) -> Tensor:
        """A copy with ``src`` (or ``value``) written at ``index`` along ``dim``; PyTorch's
        older ``reduce="add"`` or ``"multiply"`` combines them with self's instead."""
        index, d, source = _scatter_arguments(self, dim, index, src, value, "scatter")
        if reduce is not None:
            if reduce not in ("add", "multiply"):
                raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got "
                                 f"{reduce!r} (scatter_reduce has the others)")
            if not isinstance(source, Tensor):  # a number: one for each index entry
                source = Tensor(np.full(index.shape, source, dtype=self.dtype))
            return self.scatter_reduce(d, index, source,
                                       "sum" if reduce == "add" else "prod")
        return Scatter.apply(self, index, source, d)

    def scatter_add(self, dim: int, index: Any, src: Any) -> Tensor:
        """A copy with ``src`` added at ``index`` along ``dim`` (repeats add up)."""
        index, d, _ = _scatter_arguments(self, dim, index, src, None, "scatter_add")
        return ScatterAdd.apply(self, index, src, d)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False, *,
                axis=None) -> Tensor:
        dim = axis if axis is not None else dim
        if self.ndim == 0:
            return Tensor._make(np.zeros((), dtype=np.int64))
        d = normalize_dims(dim, self.ndim, "argsort")[0]
        return ArgSort.apply(self, d, descending=descending, stable=stable)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False):
        """(values, indices) sorted along ``dim``; the values are gathered with the
        indices, so their gradient goes back to where each value came from."""
        indices = self.argsort(dim, descending, stable)
        if self.ndim == 0:
            return return_types(self.view(()), indices)
        return return_types(self.gather(dim, indices), indices)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
        """(values, indices) of the ``k`` largest (or smallest) along ``dim``."""
        d = normalize_dims(dim, max(self.ndim, 1), "topk")[0]
        size = self.shape[d] if self.ndim else 1
        if not 0 <= k <= size:
            raise ValueError(f"topk: k={k} is out of range for dim {dim} of size {size} "
                             f"(shape {self.shape})")
        indices = self.argsort(d, descending=largest, stable=True)
        if self.ndim:
            indices = indices[(slice(None),) * d + (slice(0, k),)]
            return return_types(self.gather(d, indices), indices)
        return return_types(self.view(()), indices)

    def nonzero(self, *, as_tuple: bool = False):
        """The indices of the nonzero elements: one row per element (int64, no history),
        or with ``as_tuple`` one index tensor per dim (ready for indexing)."""
        found = np.nonzero(np.atleast_1d(self.numpy()))
        if as_tuple:
            return tuple(Tensor._make(i.astype(np.int64)) for i in found)
        return Tensor._make(np.stack(found, axis=1).astype(np.int64)[:, :self.ndim])

    def unique(self, sorted: bool = True, return_inverse: bool = False,
               return_counts: bool = False, dim: int | None = None):
        """The distinct values (sorted), and optionally where each element went and how
        often each value occurs; no history."""
        axis = None if dim is None else normalize_dims(dim, self.ndim, "unique")[0]
        values, inverse, counts = np.unique(self.numpy(), return_inverse=True,
                                            return_counts=True, axis=axis)
        if axis is None:
            inverse = inverse.reshape(self.shape)
        results = [Tensor._make(values)]
        if return_inverse:
            results.append(Tensor._make(inverse.reshape(-1).astype(np.int64)
                                        if axis is not None else inverse.astype(np.int64)))
        if return_counts:
            results.append(Tensor._make(counts.astype(np.int64)))
        return results[0] if len(results) == 1 else tuple(results)

    def multinomial(self, num_samples: int, replacement: bool = False, *,
                    generator=None) -> Tensor:
        """Indices drawn with the probabilities in each row (weights that need not sum
        to 1); int64, no history."""
        return Tensor._make(_multinomial(self.numpy(), num_samples, replacement,
                                         rng_for(generator, "multinomial")))

    # --- linear algebra ------------------------------------------------------------------------

    def mm(self, mat2: Tensor) -> Tensor:
        _check_ndims("mm", (self, mat2), 2, "matrices; use matmul (@) for other shapes")
        return MatMul.apply(self, mat2)

    def bmm(self, mat2: Tensor) -> Tensor:
        _check_ndims("bmm", (self, mat2), 3, "batches of matrices, (b, n, m) and (b, m, p)")
        if self.shape[0] != mat2.shape[0]:
            raise ShapeError(f"bmm: the batch sizes differ: shapes {self.shape} and "
                             f"{mat2.shape}; use matmul (@) to broadcast a batch")
        return MatMul.apply(self, mat2)

    def mv(self, vec: Tensor) -> Tensor:
        _check_ndims("mv", (self,), 2, "a matrix")
        _check_ndims("mv", (vec,), 1, "a vector")
        return MatMul.apply(self, vec)

    def dot(self, other: Tensor) -> Tensor:
        _check_ndims("dot", (self, other), 1, "vectors; use matmul (@) or mm for matrices")
        return MatMul.apply(self, other)

    def outer(self, vec2: Tensor) -> Tensor:
        """``out[i, j] = self[i] * vec2[j]``."""
        _check_ndims("outer", (self, vec2), 1, "vectors")
        return self.unsqueeze(1) * vec2

    def softmax(self, dim: int | None = None, dtype: Any = None, *, axis=None) -> Tensor:
        x = self if dtype is None else self.astype(dtype)
        return Softmax.apply(x, _softmax_dim(_dims(dim, axis), self.ndim, "softmax"))

    def log_softmax(self, dim: int | None = None, dtype: Any = None, *, axis=None) -> Tensor:
        x = self if dtype is None else self.astype(dtype)
        return LogSoftmax.apply(x, _softmax_dim(_dims(dim, axis), self.ndim, "log_softmax"))

    # --- indexing -----------------------------------------------------------------------------

    def __getitem__(self, index: Any) -> Tensor:
        index = _index(index)
        if type(index) is tuple and len(index) > 1:  # (ints and tensors: see torch_placement)
            placed = torch_placement(index, self.shape)
            if placed is not None:
                return GetItem.apply(self, placed[0]).squeeze(placed[1])
        return GetItem.apply(self, index)

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

    def is_floating_point(self) -> bool:
        return self.dtype.kind == "f"

    # --- printing ------------------------------------------------------------------------------

    def __repr__(self) -> str:
        extras = []
        if self._data is None:
            body = f"<unrealized, shape={self.shape}"
        else:
            body = np.array2string(self._data, separator=", ", prefix="tensor(",
                                   **numpy_print_options())
        # as PyTorch, the dtypes a tensor gets by default (from floats, ints, bools) go unsaid
        if self.dtype not in (state.default_dtype, np.int64, np.bool_) or self._data is None:
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


tensor_class.register(Tensor)  # the engine reaches Tensor through tensor_class.py
refuse_names(Tensor, "torch.Tensor")  # PyTorch's names that minigrad leaves out say why


def _legacy_sizes(*arguments: Any) -> tuple | None:
    """The shape in PyTorch's legacy ``Tensor(2, 3, 4)`` (two or more ints), else None."""
    ints = [a for a in arguments if a is not None]
    if len(ints) >= 2 and all(isinstance(a, (int, np.integer)) and not isinstance(a, bool)
                              for a in ints) and ints == list(arguments[:len(ints)]):
        return tuple(int(a) for a in ints)
    return None


def _deprecated_alpha_first(other: Any, alpha: Any) -> tuple:
    """PyTorch still runs the deprecated ``add_(alpha, other)`` (old SGD code:
    ``p.data.add_(-lr, p.grad.data)``): a number first and a tensor second swap roles."""
    if isinstance(alpha, Tensor) and isinstance(other, (int, float, np.number)):
        return alpha, other
    return other, alpha


def _array_from(data: Any) -> np.ndarray:
    """``np.array(data)`` for the constructor, with its two classic mistakes explained:
    ragged nested lists, and a list of tensors that require grad (whose graph a copy
    of their values would cut)."""
    if isinstance(data, (list, tuple)):
        for item in data:
            if isinstance(item, Tensor) and item.requires_grad:
                raise TypeError(
                    f"tensor: the list holds a tensor that requires grad (shape {item.shape}); "
                    "tensor() copies values and would cut it from its graph. Use "
                    "mg.stack(list) to keep the gradient (or .detach() them first).")
    try:
        return np.array(data)
    except ValueError as error:
        if not isinstance(data, (list, tuple)):
            raise
        raise ValueError(f"tensor: the nested lists are ragged ({_ragged(data)}); every "
                         "row must have the same length, as in a NumPy array") from error


_PYTHON_NUMBERS = {float, int, bool}


def _sequence_dtype(data: list | tuple) -> np.dtype | None:
    """PyTorch's dtype for a (nested) list that holds tensors, NumPy arrays or NumPy
    scalars: each counts with its dtype, a Python float as the default float, an int as
    int64, a bool as bool; the highest category (bool < integer < floating) wins, promoted
    within it. So [1.5, np.float64(2)] is float64 and [tensor(1), tensor(1., dtype=
    float16)] float16. None for Python numbers only (then NumPy's reading, adjusted)."""
    found, kinds = _leaves(data)
    if not found:
        return None
    python = {float: state.default_dtype, int: np.dtype(np.int64), bool: np.dtype(np.bool_)}
    dtypes = found + [python[kind] for kind in kinds]
    best = max(_category(dtype) for dtype in dtypes)
    return np.result_type(*[dtype for dtype in dtypes if _category(dtype) == best])


def _leaves(data: list | tuple) -> tuple[list, set]:
    """The dtypes of the tensors, arrays and NumPy scalars in a nested list, and the
    types of its Python numbers (float, int, bool)."""
    found, kinds, stack = [], set(), [data]
    while stack:
        items = stack.pop()
        types = set(map(type, items))
        kinds |= types & _PYTHON_NUMBERS
        if types <= _PYTHON_NUMBERS:
            continue
        for item in items:
            if isinstance(item, (list, tuple)):
                stack.append(item)
            elif isinstance(item, (Tensor, np.ndarray, np.generic)):
                found.append(np.dtype(item.dtype))
    return found, kinds


def _check_int64(array: np.ndarray, data: Any) -> None:
    """Python ints beyond int64 (which NumPy reads as uint64 or float64) raise, as in
    PyTorch, rather than wrap around or lose digits."""
    if array.dtype == np.uint64 or array.dtype.kind == "f" and array.size and \
            (array.max() >= 2.0 ** 63 or array.min() < -2.0 ** 63) and \
            isinstance(data, (int, list, tuple)) and \
            (type(data) is int or _leaves(data) == ([], {int})):
        raise OverflowError(f"tensor: an integer in the data does not fit in int64 "
                            f"(largest {np.iinfo(np.int64).max}); give floats, or dtype="
                            "float64, for numbers that large")


def _ragged(data: Any, path: str = "") -> str:
    """Where nested lists first disagree in length, e.g. 'data[1] has 1 elements, data[0] 2'."""
    lengths = [len(item) if isinstance(item, (list, tuple)) else None for item in data]
    for i, length in enumerate(lengths):
        if length != lengths[0]:
            def what(n):
                return "a number" if n is None else f"{n} elements"
            return (f"data{path}[{i}] has {what(length)}, "
                    f"data{path}[0] has {what(lengths[0])}")
    for i, item in enumerate(data):
        if isinstance(item, (list, tuple)):
            found = _ragged(item, f"{path}[{i}]")
            if found:
                return found
    return ""


def _numpy_operand(value: Any) -> Any:
    """An input of a NumPy ufunc, ready for minigrad's op: arrays become tensors, NumPy
    scalars Python numbers (else the op would hand them back to NumPy)."""
    if isinstance(value, np.ndarray):
        return Tensor(value)
    return value.item() if isinstance(value, np.generic) else value


def _numpy_arrays(values: tuple) -> list:
    """Tensors (also inside a list or tuple) as their arrays, for a NumPy function."""
    def convert(value):
        if isinstance(value, Tensor):
            return value.numpy()
        if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
            return type(value)(convert(v) for v in value)
        return value
    return [convert(v) for v in values]


def _refuse_grad(name: str, values: Any) -> None:
    """A NumPy function minigrad has no op for cannot follow a tensor that requires grad."""
    for value in values:
        if isinstance(value, Tensor) and value.requires_grad:
            raise TypeError(
                f"{name}: minigrad has no op for this NumPy function (with these arguments), "
                f"and NumPy would cut "
                f"this tensor (shape {value.shape}, {value.dtype}) that requires grad from "
                "its graph. Use minigrad's ops to keep the gradient, or call "
                ".detach().numpy() first for the values only.")


def _numpy_reduction(method: str) -> Callable:
    """np.sum(x, axis, ...) as x.sum(axis, ...), for the keywords both know."""
    def reduce(x, axis=None, keepdims=False, **kwargs):
        if kwargs or not isinstance(x, Tensor):
            raise TypeError  # NumPy's own arguments: let NumPy do it
        return getattr(x, method)(axis, keepdim=keepdims)
    return reduce


def _numpy_variance(method: str) -> Callable:
    """np.var/np.std divide by n - ddof (ddof=0 by default: not PyTorch's default)."""
    def reduce(x, axis=None, ddof=0, keepdims=False, **kwargs):
        if kwargs or not isinstance(x, Tensor):
            raise TypeError
        return getattr(x, method)(axis, keepdim=keepdims, correction=ddof)
    return reduce


# NumPy's ufuncs (by name) that are minigrad ops: np.exp(t) is t.exp(), with its gradient
NUMPY_UFUNCS: dict[str, Callable] = {
    "exp": Tensor.exp, "log": Tensor.log, "sqrt": Tensor.sqrt, "sin": Tensor.sin,
    "cos": Tensor.cos, "tanh": Tensor.tanh, "log1p": Tensor.log1p, "expm1": Tensor.expm1,
    "log2": Tensor.log2, "log10": Tensor.log10, "negative": Tensor.neg,
    "absolute": Tensor.abs, "sign": Tensor.sign, "floor": Tensor.floor, "ceil": Tensor.ceil,
    "square": Tensor.square, "positive": lambda x: x,
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "power": operator.pow, "matmul": operator.matmul,
    "maximum": lambda x, y: x.maximum(y) if isinstance(x, Tensor) else y.maximum(x),
    "minimum": lambda x, y: x.minimum(y) if isinstance(x, Tensor) else y.minimum(x),
    "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
    "greater_equal": operator.ge, "equal": operator.eq, "not_equal": operator.ne,
}
# ... and NumPy's functions (np.sum(t) is t.sum(); arguments NumPy has and minigrad lacks
# fall back to NumPy, which works on tensors without grad)
NUMPY_FUNCTIONS: dict[str, Callable] = {
    "sum": _numpy_reduction("sum"), "mean": _numpy_reduction("mean"),
    "max": _numpy_reduction("amax"), "amax": _numpy_reduction("amax"),
    "min": _numpy_reduction("amin"), "amin": _numpy_reduction("amin"),
    "prod": _numpy_reduction("prod"), "var": _numpy_variance("var"),
    "std": _numpy_variance("std"),
    "shape": lambda a: a.shape, "ndim": lambda a: a.ndim, "size": lambda a, axis=None:
    a.numel() if axis is None else a.shape[axis],  # (these only read the shape)
    "reshape": lambda x, shape: x.reshape(shape),
    "transpose": lambda x, axes=None: x.permute(
        *(axes if axes is not None else reversed(range(x.ndim)))),
    "concatenate": lambda tensors, axis=0: cat(tensors, axis),
    "stack": lambda tensors, axis=0: stack(tensors, axis),
    "where": lambda condition, x, y: where(condition, x, y),
    "clip": lambda x, a_min=None, a_max=None: x.clamp(a_min, a_max),
    # movement, so that an op's NumPy backward also runs on Tensors (create_graph=True:
    # higher_order.py); each is a view in NumPy and a recorded Reshape/Expand/Permute here
    "expand_dims": lambda x, axis: x.reshape(np.expand_dims(np.empty(x.shape, np.bool_),
                                                            axis).shape),
    "broadcast_to": lambda x, shape: x.expand(*((shape,) if isinstance(shape, int)
                                                else shape)),
    "swapaxes": lambda x, axis1, axis2: x.transpose(axis1, axis2),
    "moveaxis": lambda x, source, destination: x.permute(
        *_moved_axes(x.ndim, source, destination)),
    "split": lambda x, indices, axis=0: _split_at(x, indices, axis),
    "flip": lambda x, axis=None: x.flip(list(range(x.ndim)) if axis is None
                                        else list(np.atleast_1d(axis).tolist())),
    "roll": lambda x, shift, axis=None: x.roll(shift, axis),
    "cumsum": lambda x, axis=None: x.cumsum(axis),
}


def _split_at(x: Tensor, indices: Any, axis: int) -> list:
    """``np.split(x, indices, axis)`` as slices of ``x`` (GetItem): at the given indices,
    or into that many equal sections."""
    axis, size = axis % x.ndim, x.shape[axis]
    if isinstance(indices, (int, np.integer)):
        indices = [size // int(indices) * k for k in range(1, int(indices))]
    edges = [0, *[int(i) for i in indices], size]
    return [x[(slice(None),) * axis + (slice(start, stop),)]
            for start, stop in zip(edges, edges[1:])]


def _moved_axes(ndim: int, source: Any, destination: Any) -> list[int]:
    """The permutation ``np.moveaxis(a, source, destination)`` applies (NumPy's own rule)."""
    source = [s % ndim for s in np.atleast_1d(source).tolist()]
    destination = [d % ndim for d in np.atleast_1d(destination).tolist()]
    order = [n for n in range(ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return order


def _operand(value: Any) -> Any:
    """A list, tuple or NumPy array next to a tensor becomes a tensor, as in the
    constructor (so a list of floats is float32)."""
    return Tensor(value) if isinstance(value, (list, tuple, np.ndarray)) else value


def _plain(x: Tensor, y: Any, division: bool = False) -> bool:
    """Can ``x`` and ``y`` go into a binary op as they are? Yes for a float tensor with a
    Python number, or two tensors of one dtype (unless integers are divided). This runs
    for every arithmetic op, so it is written for speed; ``_promote`` does the rest."""
    dtype = (x._data if x._data is not None else x).dtype
    if type(y) is float or type(y) is int:
        return dtype.kind == "f"
    return isinstance(y, Tensor) and (y._data if y._data is not None else y).dtype is dtype \
        and (dtype.kind == "f" or not division)


def _operands(x: Tensor, y: Any, reflected: bool = False, division: bool = False) -> tuple:
    """``(x, y)`` (``(y, x)`` if ``reflected``) ready for a binary op."""
    if _plain(x, y, division):
        return (y, x) if reflected else (x, y)
    return _promote(x, y, reflected, division)


def _promote(x: Tensor, y: Any, reflected: bool = False, division: bool = False) -> tuple:
    """``(x, y)`` (``(y, x)`` if ``reflected``) ready for a binary op, each cast to the
    dtype PyTorch's type promotion gives (dtypes.py) where NumPy's would differ: a float32
    tensor with an int64 tensor stays float32, an int tensor with 0.5 becomes float32,
    and a ``division`` of integers gives the default float (float32), not float64. Lists
    and NumPy arrays become tensors (so a list of floats is float32)."""
    if not isinstance(y, (Tensor, list, tuple, np.ndarray, np.generic, int, float)):
        return (y, x) if reflected else (x, y)  # not a number: the op's own error says so
    if isinstance(y, (list, tuple, np.ndarray)):
        y = Tensor(y)
    elif isinstance(y, np.generic):
        y = y.item()  # NumPy scalars count as Python numbers, as in PyTorch
    dtype = result_type(x, y)
    if division and dtype.kind != "f":
        dtype = state.default_dtype
    x = x if x.dtype == dtype else x.astype(dtype)
    if isinstance(y, Tensor) and y.dtype != dtype:
        y = y.astype(dtype)
    elif division and not isinstance(y, Tensor):
        y = float(y)
    elif type(y) is int and dtype.kind in "iu" and dtype != np.int64:
        y = _wrapped(y, dtype)
    return (y, x) if reflected else (x, y)


def _check_bounds_fit(x: Tensor, *bounds: Any) -> None:
    """clamp's int bounds must fit an integer tensor's dtype (PyTorch raises for some and
    wraps others around, so that uint8 clamped to min=-2 is all 254)."""
    info = np.iinfo(x.dtype)
    for bound in bounds:
        if type(bound) is int and not info.min <= bound <= info.max:
            raise ValueError(f"clamp: the bound {bound} does not fit the tensor's dtype "
                             f"{x.dtype} ({info.min} .. {info.max}; shape {x.shape}); "
                             "convert the tensor first, e.g. x.long().clamp(...)")


def _wrapped(number: int, dtype: np.dtype, written: bool = False) -> int:
    """A Python int with a small integer tensor, as PyTorch reads it: wrapped around into
    the tensor's dtype (uint8: -1 is 255), where NumPy raises an OverflowError. A number
    ``written`` into the tensor (``t[i] = n``, ``fill_``) must fit, as in PyTorch, except
    that a negative one may wrap into an unsigned dtype."""
    info = np.iinfo(dtype)
    if info.min <= number <= info.max:
        return number
    if written and (number > info.max or info.min < 0):
        raise OverflowError(f"value {number} cannot be converted to {dtype} without "
                            f"overflow ({info.min} .. {info.max}); convert the tensor "
                            "first, e.g. t = t.long()")
    return int(np.array(number, dtype=np.int64).astype(dtype))


def _in_place_operand(x: Tensor, other: Any) -> Any:
    """The other operand of an in-place op on ``x``, as PyTorch's promotion reads it: a
    NumPy scalar is a Python number, and a tensor that does not decide the dtype (a 0-d
    float64 one with a float32 ``x``) is cast first, so that ``x += y`` computes in
    float32 as ``x + y`` does (NumPy would compute in float64 and round twice)."""
    if _plain(x, other):
        return other  # (the usual case: one dtype, or a Python number)
    if isinstance(other, np.generic):
        return other.item()
    if isinstance(other, Tensor):
        dtype = result_type(x, other)
        return other if dtype == other.dtype else other.astype(dtype)
    return other


def _index(index: Any) -> Any:
    """Turn Tensors and lists inside an index into NumPy arrays, read as PyTorch does."""
    if isinstance(index, list) and _list_is_tuple(index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is "
                      "deprecated (as in PyTorch, x[[0, 1], [1, 2]] was meant: each inner "
                      "list indexes one dimension); write x[tuple(seq)] instead of x[seq]",
                      UserWarning, stacklevel=3)
        index = tuple(index)
    if isinstance(index, tuple):
        return tuple(_index_part(i) for i in index)
    return _index_part(index)


def _list_is_tuple(index: list) -> bool:
    """PyTorch (2.x, deprecated) reads a short list that holds lists, tensors, slices,
    None or ... as a tuple: x[[[0, 1], [1, 2]]] is x[[0, 1], [1, 2]]."""
    return len(index) < 32 and any(
        isinstance(i, (list, tuple, Tensor, np.ndarray, slice)) or i is None or i is Ellipsis
        for i in index)


def _index_part(part: Any) -> Any:
    if isinstance(part, Tensor):
        part = part.numpy()
    elif isinstance(part, list):
        part = np.asarray(part) if part else np.zeros(0, np.int64)  # ([]: no rows, as PyTorch)
    if isinstance(part, np.ndarray):
        if part.dtype == np.uint8:  # PyTorch: a uint8 index is a mask (deprecated)
            warnings.warn("indexing with dtype uint8 is deprecated, as in PyTorch: it is "
                          "read as a bool mask; use a bool tensor instead",
                          UserWarning, stacklevel=4)
            return part.astype(bool)
        if part.ndim == 0 and part.dtype.kind in "iu":
            return int(part)  # a 0-d integer tensor is an int (a select), as PyTorch
    return part


def _unsqueezed_value(x: Tensor, placed: tuple, value: Any) -> Any:
    """The value of ``x[index] = value`` for the NumPy index of ``torch_placement``: it
    broadcasts to PyTorch's shape of ``x[index]``, then gets the length-1 dimensions that
    NumPy's index keeps."""
    if not isinstance(value, (Tensor, list, tuple, np.ndarray)):
        return value  # a number broadcasts to any shape
    value = value if isinstance(value, Tensor) else Tensor(value)
    shape = list(GetItem.output_shape(x, placed[0]))
    for dim in reversed(placed[1]):
        shape.pop(dim)
    value = value.expand(*shape)
    for dim in placed[1]:
        value = value.unsqueeze(dim)
    return value


# --- helpers of the methods above: composite updates, argument checks, random draws -------


def _floating(x: Tensor) -> Tensor:
    """``x`` for maths defined on real numbers only (exp, sqrt, sigmoid, ...): as in
    PyTorch, an integer or bool tensor is computed in the default float dtype (float32),
    where NumPy would give float64."""
    if (x._data if x._data is not None else x).dtype.kind in "fc":
        return x
    return x.astype(state.default_dtype)


def _check_floating(x: Tensor, op: str) -> None:
    """``mean``, ``var`` and ``std`` of an integer tensor raise, as in PyTorch."""
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"{op}: needs a floating-point tensor, but this one is {x.dtype} (shape "
            f"{x.shape}); as in PyTorch, convert it first: x.float().{op}()")


def _clamp(x, min, max):
    """``clamp`` with bounds per element (tensors), for ``clamp_``."""
    return x.clamp(min, max)


def _lerp(x, end, weight):
    """x + weight (end - x): a step from x towards end (``lerp``, ``lerp_``)."""
    return x + weight * (end - x)


def _addcmul(x, tensor1, tensor2, value=1):
    """x + value * tensor1 * tensor2 (``addcmul``, ``addcmul_``, as Adam's moments use)."""
    return x + value * tensor1 * tensor2 if value != 1 else x + tensor1 * tensor2


def _addcdiv(x, tensor1, tensor2, value=1):
    """x + value * tensor1 / tensor2 (``addcdiv``, ``addcdiv_``, as Adam's step uses)."""
    return x + value * tensor1 / tensor2 if value != 1 else x + tensor1 / tensor2


def _masked_fill(x, mask: np.ndarray, value):
    """``value`` where ``mask`` holds, x elsewhere; a 0-d tensor value gets a gradient."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError(f"masked_fill: value must be a number or a 0-d tensor, got a "
                             f"tensor of shape {value.shape}")
        value = value if value.dtype == x.dtype else value.astype(x.dtype)
    else:
        value = np.asarray(value, dtype=x.dtype)
    return Where.apply(mask, value, x)


def _mask_array(mask: Any, x: Tensor, op: str) -> np.ndarray:
    mask = mask.numpy() if isinstance(mask, Tensor) else np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"{op}: mask must be a bool tensor, got {mask.dtype} (shape "
                        f"{mask.shape}); make one with a comparison or mask.bool()")
    try:
        fits = np.broadcast_shapes(mask.shape, x.shape) == tuple(x.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{op}: a mask of shape {mask.shape} does not broadcast to the "
                         f"tensor's shape {x.shape}")
    return mask


def _scatter_arguments(x: Tensor, dim: int, index: Any, src: Any, value: Any, op: str):
    if (src is None) == (value is None):
        raise TypeError(f"{op}: give either src (a tensor) or value (a number)")
    index = index.numpy() if isinstance(index, Tensor) else np.asarray(index)
    return index, normalize_dims(dim, x.ndim, op)[0], src if src is not None else value


def _softmax_dim(dim: Any, ndim: int, op: str) -> int:
    if dim is None:
        raise TypeError(f"{op}: give the dim to normalise along, e.g. {op}(dim=-1)")
    return normalize_dims(dim, ndim, op)[0]


def _check_ndims(op: str, tensors: tuple, ndim: int, what: str) -> None:
    if any(t.ndim != ndim for t in tensors):
        shapes = " and ".join(str(tuple(t.shape)) for t in tensors)
        raise ShapeError(f"{op}: expects {ndim}-D {what}, got shape(s) {shapes}")


def _multinomial(weights: np.ndarray, num_samples: int, replacement: bool,
                 rng: np.random.Generator) -> np.ndarray:
    """``num_samples`` category indices per row of ``weights`` (1-D or 2-D)."""
    if weights.ndim not in (1, 2):
        raise ShapeError(f"multinomial: expects a 1-D or 2-D tensor of weights, got shape "
                         f"{weights.shape}")
    rows = weights.reshape(-1, weights.shape[-1]).astype(np.float64)
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise RuntimeError("multinomial: the weights must be finite and non-negative "
                           f"(shape {weights.shape})")
    if rows.shape[-1] == 0 or np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError(f"multinomial: a row of weights sums to 0 (shape {weights.shape}); "
                           "every row needs a positive weight")
    if num_samples <= 0:
        raise ValueError(f"multinomial: num_samples must be positive, got {num_samples}")
    available = int(np.count_nonzero(rows, axis=1).min())
    if not replacement and num_samples > available:
        raise RuntimeError(
            f"multinomial: cannot draw {num_samples} samples without replacement from "
            f"{available} categories of nonzero weight; draw fewer, or pass replacement=True")
    draws = [rng.choice(len(row), size=num_samples, replace=replacement, p=row / row.sum())
             for row in rows]
    return np.array(draws, dtype=np.int64).reshape(weights.shape[:-1] + (num_samples,))


def parse_to(args: tuple, device: Any, dtype: Any, who: str) -> tuple:
    """``(device, dtype)`` from the arguments of ``to`` (Tensor's or Module's): a dtype, a
    device (or its name), both, or a tensor whose dtype to take; dtype None: unchanged."""
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif isinstance(arg, device_class) or (isinstance(arg, str) and arg.split(":")[0]
                                                 in DEVICE_TYPES) or type(arg) is int:
            device = arg
        elif arg is not None:
            dtype = arg
    check_device(device, who)
    return CPU, None if dtype is None else as_dtype(dtype)


device_class = device  # inside Tensor, "device" is the property


# --- module-level functions ---------------------------------------------------------------


def _check_same_dims(tensors, op: str) -> None:
    if not tensors:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    ndims = {t.ndim for t in tensors}
    if len(ndims) > 1:
        shapes = ", ".join(str(t.shape) for t in tensors)
        raise ShapeError(
            f"{op}: all tensors need the same number of dimensions, got shapes {shapes}")


def realize(*tensors: Any) -> None:
    """Compute the lazily recorded tensors given (``mg.realize(a, b)``; a list or tuple of
    them works too) and everything they depend on."""
    flat = [t for item in tensors
            for t in (item if isinstance(item, (list, tuple)) else (item,))]
    for position, t in enumerate(flat):
        if not isinstance(t, Tensor):
            raise TypeError(f"realize: expected tensors (or a list of them), but argument "
                            f"{position} is a {type(t).__name__}")
    autograd.realize(*flat)


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension."""
    tensors = _promoted([t if isinstance(t, Tensor) else Tensor(t) for t in tensors])
    if any(t.shape == (0,) for t in tensors) and any(t.ndim != 1 for t in tensors):
        # PyTorch's legacy rule, which accumulators rely on (out = cat([out, batch]) from
        # out = tensor([])): empty 1-D tensors are left out (their dtype still counts)
        tensors = [t for t in tensors if t.shape != (0,)]
    _check_same_dims(tensors, "cat")
    return Cat.apply(*tensors, dim=normalize_dims(dim, tensors[0].ndim, "cat")[0])


def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors along a new dimension."""
    tensors = _promoted([t if isinstance(t, Tensor) else Tensor(t) for t in tensors])
    _check_same_dims(tensors, "stack")
    return Stack.apply(*tensors, dim=normalize_dims(dim, tensors[0].ndim + 1, "stack")[0])


def _promoted(tensors: list) -> list:
    """The tensors cast to their common dtype under PyTorch's promotion (dtypes.py)."""
    if len({t.dtype for t in tensors}) < 2:
        return tensors
    dtype = result_type(*tensors)
    return [t if t.dtype == dtype else t.astype(dtype) for t in tensors]


def _several_views(tensor: Tensor, pieces: tuple, op: str) -> tuple:
    """The pieces of ``tensor`` that ``split``/``unbind`` made are views of it, as in
    PyTorch: one version counter; and, being several views made at once, none of them
    may be modified in place with history (``_check_in_place_allowed``)."""
    for piece in pieces:
        if piece._lazy_node is not None:  # lazy mode: realize_node does this part
            piece._lazy_node.several_views_of = op
        elif np.may_share_memory(piece._data, tensor._data):
            make_view(piece, tensor._base if tensor._base is not None else tensor)
            piece._several_views_of = op
    return pieces


def _check_in_place_allowed(tensor: Tensor, base: Tensor | None) -> None:
    """PyTorch's refusals of an in-place op that would be recorded on ``tensor`` (a view
    of ``base``, or ``base`` None): each would make some gradient wrong or ambiguous."""
    where = f"this tensor (shape {tensor.shape})"
    if base is None:
        if tensor.is_leaf and tensor.requires_grad:
            raise RuntimeError(
                f"in-place: a leaf tensor that requires grad (shape {tensor.shape}) cannot "
                "be modified in place, or its gradient would be wrong. Update it inside "
                "`with mg.no_grad():` (as optimizers do), or work on a clone()."
            )
        return
    of_a_leaf = base.is_leaf and base.requires_grad
    if tensor._view_made_by is not None:
        raise RuntimeError(
            f"in-place: {where} is an output of {tensor._view_made_by}, which returned "
            f"(a view of) its input (shape {base.shape}) as it is. Modifying it in place "
            f"would bypass {tensor._view_made_by}.backward, so the gradients would be "
            "wrong; PyTorch forbids it too. clone() the output first (or return "
            "x.copy() from forward)."
        )
    if tensor._several_views_of is not None:
        raise RuntimeError(
            f"in-place: {where} is a view of another tensor with history (shape "
            f"{base.shape}), one of the several views that {tensor._several_views_of}() "
            "returns at once, and PyTorch does not allow such views to be modified in "
            "place. Use the out-of-place op (piece = piece * 2), or clone() the piece first."
        )
    # a view made with grad mode on requires grad (of a leaf) or is remembered by its base
    made_in_no_grad = not (tensor.requires_grad if of_a_leaf
                           else is_remembered_view(tensor, base))
    if made_in_no_grad:
        raise RuntimeError(
            f"in-place: {where} is a view (of a tensor of shape {base.shape}) that was "
            "created in no_grad mode and is being modified in place with grad mode enabled. "
            "As in PyTorch this is ambiguous, so it is forbidden: make the view and the "
            "in-place op both inside the no_grad block (not recorded) or both outside it "
            "(recorded)."
        )
    if of_a_leaf:
        raise RuntimeError(
            f"in-place: a view of a leaf Variable that requires grad is being used in an "
            f"in-place operation ({where}, a view of a leaf of shape {base.shape}); the "
            "leaf's gradient would be wrong. Modify the leaf inside `with mg.no_grad():` "
            "(as optimizers do), or compute on a clone()."
        )


# an in-place op in an error: its method (and operator), and its out-of-place form
IN_PLACE_FORMS = {Add: ("add_ (+=)", "t + {}"), Sub: ("sub_ (-=)", "t - {}"),
                  Mul: ("mul_ (*=)", "t * {}"), Div: ("div_ (/=)", "t / {}"),
                  FloorDivide: ("floor_divide_ (//=)", "t // {}"),
                  Remainder: ("remainder_ (%=)", "t % {}"), Fmod: ("fmod_", "t.fmod({})"),
                  Pow: ("pow_", "t ** {}"), Clamp: ("clamp_", "t.clamp(...)"),
                  Sqrt: ("sqrt_", "t.sqrt()"), Exp: ("exp_", "t.exp()"), Log: ("log_", "t.log()"),
                  Sigmoid: ("sigmoid_", "t.sigmoid()"), Tanh: ("tanh_", "t.tanh()")}


def _cannot_hold(tensor: Tensor, dtype: np.dtype, function: Any, args: tuple) -> CastError:
    """The error of an in-place op whose result (of ``dtype``, NumPy's) ``tensor`` cannot
    hold: PyTorch's RuntimeError, "result type Float can't be cast to the desired output
    type Long", with the dtype PyTorch's promotion gives, the op, and the operands."""
    operands = [a for a in args if isinstance(a, (Tensor, bool, int, float, np.generic))]
    promoted = result_type(tensor, *operands)
    if dtype.kind in "fc" and promoted.kind not in "fc":  # division, sqrt, exp...: floats
        promoted = state.default_dtype
    method = getattr(function, "oper", getattr(function, "__name__", "op")).strip("_").lower()
    name, out_of_place = IN_PLACE_FORMS.get(function, (f"{method}_", f"t.{method}(...)"))
    other = operands[0] if operands else None
    out_of_place = out_of_place.format("other" if isinstance(other, Tensor) else repr(other))
    described = f"a {other.dtype} tensor of shape {other.shape}" \
        if isinstance(other, Tensor) else f"the number {other!r}"
    return CastError(
        f"{name} in-place: the result is {promoted} but this tensor is {tensor.dtype} "
        f"(shape {tensor.shape}), and an in-place op keeps its tensor's dtype (PyTorch: "
        f"result type {_torch_name(promoted)} can't be cast to the desired output type "
        f"{_torch_name(tensor.dtype)})" + (f"; the other operand is {described}"
                                           if operands else "")
        + f". Use the out-of-place op, t = {out_of_place}, which gives {promoted} values, "
        f"or convert the tensor first: t = t.to({promoted.name})."
    )


def _torch_name(dtype: np.dtype) -> str:
    """PyTorch's name of a dtype in its messages: Float, Double, Long, Bool..."""
    return TYPE_NAMES.get(dtype.name, dtype.name).removesuffix("Tensor")


def _caller_level() -> int:
    """The ``stacklevel`` of a warning that points at the first caller outside minigrad."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("minigrad."):
        frame, level = frame.f_back, level + 1
    return level


def _check_assigned_grad(tensor: Tensor, grad: Any) -> None:
    """What ``tensor.grad = grad`` accepts (PyTorch's checks): a Tensor of the same shape
    and dtype."""
    name = f" '{tensor.label}'" if tensor.label else ""
    which = f"the tensor{name} (shape {tuple(tensor.shape)}, {tensor.dtype})"
    if not isinstance(grad, Tensor):
        shape = f" of shape {np.shape(grad)}" if hasattr(grad, "shape") else ""
        raise TypeError(
            f"grad: assigned grad expected to be a Tensor or None, but got "
            f"{type(grad).__name__}{shape} for {which}. Wrap it: t.grad = mg.tensor(array) "
            "(or set t.grad = None).")
    if tuple(grad.shape) != tuple(tensor.shape):
        raise ShapeError(
            f"grad: assigned grad has data of a different size: shape {tuple(grad.shape)} "
            f"for {which}. A gradient has its tensor's shape; an optimizer would broadcast "
            "a wrong one silently, so it is refused here, as in PyTorch.")
    if grad.dtype != tensor.dtype:
        raise TypeError(
            f"grad: assigned grad has data of a different type: {grad.dtype} for {which}. "
            f"Convert it first: t.grad = g.to({tensor.dtype.name}).")


def where(condition, input=None, other=None) -> Tensor:
    """Elements of ``input`` where ``condition`` holds, of ``other`` elsewhere.
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``, as in PyTorch."""
    if input is None and other is None:
        condition = condition if isinstance(condition, Tensor) else Tensor(condition)
        return condition.nonzero(as_tuple=True)
    condition = condition.numpy() if isinstance(condition, Tensor) else np.asarray(condition)
    if condition.dtype != np.bool_ and condition.dtype != np.uint8:  # as PyTorch: a
        # float condition is not read as "nonzero is True" (uint8, the old masks, is)
        raise TypeError(
            f"where: expected condition to be a bool tensor, but got {condition.dtype} "
            f"(shape {condition.shape}); a float condition is not read as 'nonzero is "
            "True'. Compare first: mg.where(x > 0, a, b), or cond.bool().")
    if isinstance(input, Tensor):
        input, other = _operands(input, other)
    elif isinstance(other, Tensor):
        other, input = _operands(other, input)
    else:  # two numbers: PyTorch's dtype (where(c, 1., 0) is float32, not float64)
        input = Tensor._make(np.asarray(input, dtype=result_type(input, other)))
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
