"""Lazy mode: ``Function.apply`` records an op with its results' shapes and dtypes
(``defer``), and its forward runs here, later, when a value is needed (``realize()``,
``backward()``, ``item()``, ``numpy()``, or an in-place write to one of its inputs).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from . import tensor_class
from .errors import ShapeError
from .forward import as_output_tuple, read_only, run_forward
from .graph import lazy_parents, walk
from .messages import explain
from .state import state
from .versions import clock, share_version

# The nodes recorded whose forward has not run yet (weakly: a node whose outputs are all
# gone will never run), so that an in-place write can run first the ones that read it.
_pending: weakref.WeakSet = weakref.WeakSet()


def result_metas(cls: type, args: tuple, kwargs: dict) -> tuple[tuple, tuple, bool]:
    """The shapes and dtypes ``cls`` will return, from its ``output_shape`` and
    ``output_dtype``, one per output; and whether it has several outputs."""
    try:
        shape, dtype = cls.output_shape(*args, **kwargs), cls.output_dtype(*args, **kwargs)
    except (ValueError, IndexError, TypeError) as error:
        if getattr(error, "minigrad", False):
            raise
        raise explain(cls, error, args) from error
    several = len(shape) > 0 and isinstance(shape[0], tuple)
    shapes = shape if several else (shape,)
    dtypes = dtype if isinstance(dtype, tuple) else (dtype,) * len(shapes)
    return shapes, dtypes, several


def defer(node: Any, kwargs: dict, metas: tuple, record: bool) -> Any:
    """The results of ``node``'s op as tensors without data, computed on ``realize``.
    ``record``: they get ``node`` as their ``grad_fn`` (floating-point ones only)."""
    shapes, dtypes, several = metas
    node._pending = kwargs
    _pending.add(node)
    node.start_outputs()
    results = []
    for index, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        shape, dtype = tuple(shape), np.dtype(dtype)
        differentiable = record and dtype.kind == "f"  # not the indices of max
        t = tensor_class.Tensor._make(None, differentiable, node if differentiable else None,
                                      index)
        t._lazy_node = node
        node.record_output(t, shape, dtype)
        results.append(t)
    return tuple(results) if several else results[0]


def pending_node(tensor: Any) -> Any:
    """The node that will compute ``tensor`` (lazy mode); None once it is computed."""
    return tensor._lazy_node


def realize(*tensors: Any) -> None:
    """Compute every deferred op that ``tensors`` depend on, oldest first."""
    _realize_nodes([t._lazy_node for t in tensors if t._lazy_node is not None])


def realize_readers(tensor: Any) -> None:
    """Before an in-place write into ``tensor``'s array: run every deferred op that reads
    that memory (through ``tensor`` or a view of it), so it computes with the values it
    was given, as it would have in eager mode."""
    array = tensor._data
    if not _pending or array is None:
        return
    _realize_nodes([node for node in list(_pending) if any(
        isinstance(a, tensor_class.Tensor) and a._data is not None
        and np.may_share_memory(a._data, array) for a in node.args)])


def _realize_nodes(roots: list) -> None:
    if not roots:
        return
    previous, state.lazy = state.lazy, False  # forwards that call apply run eagerly
    try:
        for node in walk(roots, lazy_parents):
            if node.pending:
                realize_node(node)
    finally:
        state.lazy = previous


def realize_node(node: Any) -> None:
    """Run the forward that lazy mode deferred; its inputs are already realized."""
    cls, args = node.function, node.args
    arrays = [a._data if isinstance(a, tensor_class.Tensor) else a for a in args]
    if cls._guarded:  # the user's Function: read-only inputs, as in eager mode (Context)
        arrays = node._forward_arrays = [read_only(a) for a in arrays]
    previous, state.group = state.group, node.group  # errors name the group it was made in
    try:
        outputs, marked = as_output_tuple(
            cls, run_forward(cls, node, arrays, node._pending, args), node)
    finally:
        state.group = previous
    if len(outputs) != len(node._outputs):  # zip below would drop or miss outputs
        _wrong_output_count(cls, len(outputs), len(node._outputs))
    node._pending = None
    _pending.discard(node)
    results = []
    for index, (out, ref, (shape, _)) in enumerate(zip(outputs, node._outputs, node.output_meta)):
        if out.shape != shape:
            raise ShapeError(
                f"{cls.oper}: output_shape() promised shape {shape} for output {index} but "
                f"forward returned {out.shape}; fix {cls.__name__}.output_shape"
            )
        node.output_meta[index] = (out.shape, out.dtype)
        t = ref()
        if t is not None:
            t._data, t._lazy_node = out, None
            if marked[index]:
                t.grad_fn, t.requires_grad = None, False  # (a leaf first: then no grad)
            results.append(t)
        if cls._guarded and not out.flags.writeable and any(
                isinstance(a, np.ndarray) and np.may_share_memory(out, a) for a in arrays):
            out.flags.writeable = True  # a view of an input's own (writable) array
    first = node._outputs[0]()
    if cls.view and first is not None and isinstance(args[0], tensor_class.Tensor):
        share_version(first, args[0], arrays[0])  # a view of its input, as in eager mode
    if cls._guarded and node._saved:
        node._saved = tuple([read_only(a) for a in node._saved])
    node._saved_at = next(clock)  # what was saved is as of now
    if not any(t.grad_fn is node for t in results):
        node.release()  # nothing will backpropagate through it


def _wrong_output_count(cls: type, returned: int, deferred: int) -> None:
    """Lazy mode made ``deferred`` result tensors for ``cls`` from its ``output_shape``
    before its forward ran, and the forward returned ``returned`` arrays: an error, not
    results paired with the wrong arrays (unpacking one deferred result ``a, b = ...``
    splits its rows, which would then hold the first output's values)."""
    default = cls.output_shape.__qualname__ == "Function.output_shape"
    promised = (f"its output_shape() gave {deferred} shape(s)" if not default else
                "it has no output_shape(), and the default (the inputs' broadcast shape) "
                "is one output")
    raise ValueError(
        f"{cls.oper}: in lazy mode its results were made before its forward ran, and "
        f"{promised}, but {cls.__name__}.forward returned {returned} output(s). Give "
        f"{cls.__name__} a static output_shape(*inputs) that returns one shape per output "
        "(a tuple of shapes for several), or apply it outside mg.lazy()."
    )
