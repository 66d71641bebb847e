"""Running a Function's forward, and turning what it returned into output Tensors.

``Function.apply`` (and ``lazy_mode.realize``, later) call ``run_forward``; a forward
that returns one array takes apply's short path, anything else comes here to be checked
(``as_output_tuple``) and wrapped (``wrap_outputs``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tensor_class
from .hooks import hooks_stay_with_old_value
from .messages import check_finite, describe_args, explain
from .state import thread
from .versions import counter_of, record_write, share_version

NUMBERS = (np.generic, bool, int, float, complex)


def run_forward(cls: type, ctx: Any, arrays: list, kwargs: dict, args: tuple,
                modes: Any = None) -> Any:
    """Call ``cls``'s forward (either form); a NumPy error comes out explained.
    ``modes``: the thread's modes, if the caller has them at hand."""
    try:
        if cls._uses_setup_context:
            outputs = cls.forward(*arrays, **kwargs)
            cls.setup_context(ctx, tuple(arrays), outputs)
        else:
            outputs = cls.forward(ctx, *arrays, **kwargs)
    except (ValueError, IndexError, TypeError, RuntimeError) as error:
        raise_explained(cls, error, args)
    if modes is None:
        modes = thread.modes
    if modes.anomaly:
        where = f"{cls.oper} (forward" + (f", group {modes.group})" if modes.group else ")")
        check_finite(outputs, where, args, received=[*arrays, *kwargs.values()])
    return outputs


def raise_explained(cls: type, error: Exception, args: tuple) -> None:
    """Raise what a forward's ``error`` means: a write into a read-only input of a user's
    Function said so, one of minigrad's own messages as it is, else ``explain``'s."""
    if cls._guarded and is_read_only_write(error):
        raise wrote_in_place(cls, "forward", args) from error
    if getattr(error, "minigrad", False):
        raise error
    raise explain(cls, error, args) from error


def wrap_outputs(cls: type, ctx: Any, node: Any, args: tuple, arrays: list,
                 outputs: Any) -> Any:
    """``apply`` for any other result: several outputs, NumPy scalars, integer outputs
    and outputs marked non-differentiable (those get no history, as in PyTorch), the
    outputs of a user's Function (guarded: see ``Context``), and inputs it marked dirty."""
    several = isinstance(outputs, tuple)
    outputs, marked = as_output_tuple(cls, outputs, ctx)
    if node is not None:
        node.start_outputs()
    if cls._guarded:
        return _wrap_guarded(cls, ctx, node, args, arrays, outputs, marked, several)
    results = []
    for i, out in enumerate(outputs):
        recorded = node is not None and not marked[i] and out.dtype.kind in "fc"
        results.append(tensor_class.Tensor._make(out, recorded, node if recorded else None, i))
        if node is not None:
            node.record_output(results[i], out.shape, out.dtype)
    if cls.view and isinstance(args[0], tensor_class.Tensor):
        share_version(results[0], args[0], arrays[0])
    return tuple(results) if several else results[0]


def _wrap_guarded(cls: type, ctx: Any, node: Any, args: tuple, arrays: list,
                  outputs: tuple, marked: tuple, several: bool) -> Any:
    """``wrap_outputs`` for a Function written outside minigrad: an output that is (a
    view of) an input shares its memory and version counter, as a view does in PyTorch;
    an input marked dirty comes back as the input tensor itself; what it saved is made
    read-only, so its backward cannot change it for a second backward."""
    Tensor = tensor_class.Tensor
    results: list = []
    dirty = set(ctx._dirty)
    for i, out in enumerate(outputs):
        recorded = node is not None and not marked[i] and out.dtype.kind in "fc"
        source = next((k for k, a in enumerate(arrays) if isinstance(args[k], Tensor)
                       and isinstance(a, np.ndarray) and np.may_share_memory(out, a)), None)
        if source is not None and source in dirty:
            results.append(_dirty_output(ctx, node, args, source, out, i, recorded))
            dirty.discard(source)
            continue
        if source is not None and not out.flags.writeable:
            out.flags.writeable = True  # a view of the input's own (writable) array
        result = Tensor._make(out, recorded, node if recorded else None, i)
        if node is not None:
            node.record_output(result, out.shape, out.dtype)
        if source is not None:
            share_version(result, args[source], args[source]._data)
            if recorded:  # in place, it would bypass cls.backward: refused (tensor.py)
                result._view_made_by = cls.__name__
        results.append(result)
    if dirty:
        raise RuntimeError(
            f"{cls.__name__}.forward marked input(s) {sorted(dirty)} dirty (ctx.mark_dirty) "
            "but did not return them: a Function that modifies an input in place must "
            "return that input as one of its outputs, as in PyTorch.")
    if ctx._saved:
        ctx._saved = tuple([read_only(a) for a in ctx._saved])
    return tuple(results) if several else results[0]


def _dirty_output(ctx: Any, node: Any, args: tuple, position: int, out: np.ndarray,
                  index: int, recorded: bool) -> Any:
    """Input ``position`` was modified in place by forward and returned as output
    ``index``: that input tensor is the output. Recorded, its history gets the node
    (a stand-in for its old self becomes the node's input, as ``Tensor._modify`` does);
    either way its version moves on."""

    tensor = args[position]
    if recorded:
        stand_in = tensor_class.Tensor._make(tensor._data, tensor._requires_grad,
                                             tensor.grad_fn, tensor._output_index)
        stand_in._version_counter = counter_of(tensor)
        node.args = node.args[:position] + (stand_in,) + node.args[position + 1:]
        hooks_stay_with_old_value(tensor, node)
        tensor.grad_fn, tensor._output_index, tensor._requires_grad = node, index, True
    if node is not None:
        node.record_output(tensor, out.shape, out.dtype)
    record_write(tensor)
    if node is not None:
        node._saved_at = tensor._version_counter.stamp  # its own saves are as of the write
    return tensor


def read_only(value: Any) -> Any:
    """A read-only view of ``value`` if it is a writable array; else ``value`` itself."""
    if type(value) is np.ndarray and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


def same_array(a: Any, b: Any) -> bool:
    """Is ``a`` the array ``b``: the same object, or a view of the same memory with the
    same layout (a user's Function gets, and saves, read-only views of its inputs:
    ``read_only``; a saved input is still the input's own memory, not a copy)?"""
    if a is b:
        return True
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype
            and a.shape == b.shape and a.strides == b.strides
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def array_key(a: np.ndarray) -> tuple:
    """One key for every view of the same memory with the same layout (``same_array``)."""
    return (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str)


def is_read_only_write(error: BaseException) -> bool:
    """Is ``error`` NumPy's (or Tensor._write's) complaint about a write into a
    read-only array?"""
    return isinstance(error, ValueError) and "read-only" in str(error)


def wrote_in_place(cls: type, where: str, args: tuple) -> RuntimeError:
    """The error for a user's Function whose forward or backward wrote into an array it
    was given (read-only: see ``Context``)."""
    if where == "forward":
        what = ("one of its inputs. Its inputs are the arrays of the caller's tensors, so "
                "the caller's tensor would silently change (and any array saved from it). "
                "Compute a new array instead (np.maximum(x, 0), or x = x.copy() first), or, "
                "to modify the input on purpose, call ctx.mark_dirty(x) before the write and "
                "return x, as in PyTorch")
    else:
        what = ("grad_output or an array it saved. The engine may hand the same gradient "
                "to other nodes, and a saved array is read again by a second backward "
                "(retain_graph=True), so the gradients would silently change. Compute into "
                "a new array: grad_output * 2, not grad_output *= 2")
    error = RuntimeError(f"{cls.__name__}.{where} wrote in place into {what}.\n  "
                         f"{describe_args(args)}")
    error.minigrad = True
    return error


def as_output_tuple(cls: type, outputs: Any, ctx: Any) -> tuple[tuple, tuple]:
    """A forward's result (one array or a tuple of them; NumPy scalars and numbers too)
    as a tuple of arrays, and which of them were marked non-differentiable (asked before
    numbers become arrays, which makes new objects). Anything else is an error that names
    the Function and what its forward returned."""
    raw = outputs if isinstance(outputs, tuple) else (outputs,)
    if not raw:
        raise _bad_result(cls, outputs, "an empty tuple")
    marked = tuple(any(o is nd for nd in ctx._non_differentiable) for o in raw)
    arrays = []
    for o in raw:
        if isinstance(o, tensor_class.Tensor):  # mg.autograd.Function's forward
            o = o._data if o._data is not None else o.realize()._data  # (lazy inside it)
        elif type(o) is not np.ndarray:
            if not isinstance(o, (np.ndarray, *NUMBERS)):
                what = f"a {type(o).__name__}" if len(raw) == 1 else \
                    f"a tuple whose output {len(arrays)} is a {type(o).__name__}"
                raise _bad_result(cls, outputs, what)
            o = np.asarray(o)
        if o.dtype.kind not in "biufc":
            raise _bad_result(cls, outputs, f"an array of dtype {o.dtype}")
        arrays.append(o)
    return tuple(arrays), marked


def _bad_result(cls: type, outputs: Any, what: str) -> TypeError:
    hint = ("; for several outputs return a tuple of arrays, or np.stack them into one "
            "array" if isinstance(outputs, list) else "")
    error = TypeError(
        f"{cls.__name__}.forward returned {what} ({outputs!r:.60}), but a forward must "
        f"return a NumPy array of numbers, or a tuple of them (one per output){hint}."
    )
    error.minigrad = True
    return error
