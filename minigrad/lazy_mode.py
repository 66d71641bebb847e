"""Lazy mode: ``Function.apply`` records an op with its results' shapes and dtypes
(``defer``), and its forward runs here, later, when a value is needed (``realize()``,
``backward()``, ``item()``, ``numpy()``, or an in-place write to one of its inputs).

The rule throughout: the same program gives the same values, gradients, errors and graph
as in eager mode. So a deferred op reads its inputs as they were when it was recorded
(``realize_readers``), runs in the grad mode and group it was recorded in, and a user's
Function whose results cannot be known before its forward runs (no ``output_shape``)
runs at once.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import tensor_class
from .errors import ShapeError
from .forward import as_output_tuple, read_only, run_forward
from .graph import lazy_parents, walk
from .messages import explain
from .state import state, thread
from .versions import clock, make_view, share_version

# The nodes recorded whose forward has not run yet (weakly: a node whose outputs are all
# gone will never run), so that an in-place write can run first the ones that read it.
_pending: weakref.WeakSet = weakref.WeakSet()


def result_metas(cls: type, args: tuple, kwargs: dict) -> tuple[tuple, tuple, bool]:
    """The shapes and dtypes ``cls`` will return, from its ``output_shape`` and
    ``output_dtype``, one per output; and whether it has several outputs."""
    realize_user_results(args)
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


def realize_user_results(args: tuple) -> None:
    """Compute now the inputs that a user's Function has not computed yet and that may
    have history: only its forward says which of its outputs are differentiable
    (``ctx.mark_non_differentiable``, an integer dtype), and the op about to be recorded
    must know, or it would record a history that eager mode does not have."""
    for a in args:
        node = getattr(a, "_lazy_node", None)  # (None for anything but a pending Tensor)
        if node is not None and node.function._guarded and a.grad_fn is not None:
            realize(a)


def defer(node: Any, kwargs: dict, metas: tuple, record: bool) -> Any:
    """The results of ``node``'s op as tensors without data, computed on ``realize``.
    ``record``: they get ``node`` as their ``grad_fn`` (floating-point ones only)."""
    shapes, dtypes, several = metas
    node._pending = kwargs
    modes = thread.modes
    node._modes = modes.grad_enabled, modes.anomaly  # its forward runs later in these
    # the arrays its inputs hold now are what it reads, as eager mode would have: a
    # tensor given another array later (p.data = ..., module.double()) does not change it
    node._input_arrays = [a._data if isinstance(a, tensor_class.Tensor) else a
                          for a in node.args]
    _pending.add(node)
    node.start_outputs()
    results = []
    for index, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        shape, dtype = tuple(shape), np.dtype(dtype)
        differentiable = record and dtype.kind in "fc"  # not the indices of max
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
    if array is None:
        return
    while _pending:  # again after each round: a view it realized has the memory now,
        # and a deferred op reading that view must run too (y.t().exp(), then y[0] = 1)
        readers = [node for node in list(_pending) if any(
            np.may_share_memory(a, array) for a in _arrays_read(node))]
        if not readers:
            return
        _realize_nodes(readers, for_write=True)


def _arrays_read(node: Any) -> Iterator[np.ndarray]:
    """Every array ``node``'s forward will read: its inputs', and those inside its other
    arguments (an index tuple holds the arrays of the index tensors: ``x[i, :]``)."""
    stack = [*_input_arrays(node), *node._pending.values()]
    while stack:
        value = stack.pop()
        if isinstance(value, tensor_class.Tensor):
            value = value._data
        if isinstance(value, np.ndarray):
            yield value
        elif isinstance(value, (tuple, list)):
            stack.extend(value)


def _input_arrays(node: Any) -> list:
    """The arrays ``node``'s forward will read: those its inputs held when it was
    recorded, and for an input computed since (it was pending then), its array now."""
    return [a._data if array is None and isinstance(a, tensor_class.Tensor) else array
            for a, array in zip(node.args, node._input_arrays)]


def _realize_nodes(roots: list, for_write: bool = False) -> None:
    """Run the pending nodes ``roots`` need, oldest first. ``for_write`` (an in-place
    write is waiting): a node whose forward already failed, and every node waiting for it,
    can never run, so it is skipped rather than raising its error again."""
    if not roots:
        return
    previous, state.lazy = state.lazy, False  # forwards that call apply run eagerly
    failed: set = set()
    try:
        for node in walk(roots, lazy_parents):
            if not node.pending:
                continue
            if for_write and (getattr(node, "_failed", None) is not None
                              or any(p in failed for p in lazy_parents(node))):
                failed.add(node)
                _pending.discard(node)  # it reads no memory that a write must wait for
                continue
            realize_node(node)
    finally:
        state.lazy = previous


def realize_node(node: Any) -> None:
    """Run the forward that lazy mode deferred; its inputs are already realized. If it
    fails, the node keeps its error: it never runs (as in eager mode, where the op raised
    and made no result), and realizing one of its results raises that error again."""
    if getattr(node, "_failed", None) is not None:
        raise node._failed
    try:
        _run_deferred(node)
    except Exception as error:
        node._failed = error
        _pending.discard(node)  # an in-place write to its inputs need not wait for it
        where = f" in group {node.group!r}" if node.group else ""  # (a layer's path)
        error.add_note(f"(lazy mode: {node.name} was recorded earlier{where}, and its "
                       "forward ran only now, when a value was needed)")
        raise


def _run_deferred(node: Any) -> None:
    cls, args = node.function, node.args
    arrays = _input_arrays(node)
    if cls._guarded:  # the user's Function: read-only inputs, as in eager mode (Context)
        arrays = node._forward_arrays = [read_only(a) for a in arrays]
    # in the group and modes it was made in: errors name that group, a view is remembered
    # by its base only if made with grad mode on (versions.make_view), and anomaly mode
    # checks the results of the ops recorded inside detect_anomaly()
    modes = thread.modes
    previous = modes.group, modes.grad_enabled, modes.anomaly
    modes.group, (modes.grad_enabled, modes.anomaly) = node.group, node._modes
    try:
        outputs, marked = as_output_tuple(
            cls, run_forward(cls, node, arrays, node._pending, args, modes), node)
        if len(outputs) != len(node._outputs):  # zip below would drop or miss outputs
            _wrong_output_count(cls, len(outputs), len(node._outputs))
        _take_outputs(node, cls, args, arrays, outputs, marked)
    finally:
        modes.group, modes.grad_enabled, modes.anomaly = previous


def _take_outputs(node: Any, cls: type, args: tuple, arrays: list, outputs: tuple,
                  marked: tuple) -> None:
    """Give the forward's arrays to the tensors ``defer`` made, as eager mode's
    ``wrap_outputs`` would have made them."""
    for index, (out, (shape, _)) in enumerate(zip(outputs, node.output_meta)):
        if out.shape != shape:
            raise ShapeError(
                f"{cls.oper}: output_shape() promised shape {shape} for output {index} but "
                f"forward returned {out.shape}; fix {cls.__name__}.output_shape"
            )
    node._pending = node._input_arrays = None  # (backward's free() drops what it read)
    _pending.discard(node)
    results = []
    for index, (out, ref) in enumerate(zip(outputs, node._outputs)):
        node.output_meta[index] = (out.shape, out.dtype)
        t = ref()
        if t is not None:
            t._data, t._lazy_node = out, None
            if marked[index] or out.dtype.kind not in "fc":  # no history, as in eager mode
                t.grad_fn, t.requires_grad = None, False  # (a leaf first: then no grad)
            results.append(t)
        if cls._guarded:  # a user's Function may return (a view of) an input
            _share_with_input(node, t, out, args, arrays)
    first = node._outputs[0]()
    if cls.view and first is not None and isinstance(args[0], tensor_class.Tensor):
        share_version(first, args[0], arrays[0])  # a view of its input, as in eager mode
    several_views_of = getattr(node, "several_views_of", None)  # split(), unbind()
    if several_views_of is not None:
        base = args[0]._base if args[0]._base is not None else args[0]
        for piece in results:  # as tensor._several_views does for eager results
            if np.may_share_memory(piece._data, arrays[0]):
                make_view(piece, base)
                piece._several_views_of = several_views_of
    if cls._guarded and node._saved:
        node._saved = tuple([read_only(a) for a in node._saved])
    node._saved_at = next(clock)  # what was saved is as of now
    if not any(t.grad_fn is node for t in results):
        node.release()  # nothing will backpropagate through it


def _share_with_input(node: Any, result: Any, out: np.ndarray, args: tuple,
                      arrays: list) -> None:
    """An output of a user's Function that is (a view of) one of its inputs shares that
    input's memory and version counter, as ``forward._wrap_guarded`` does eagerly."""
    source = next((k for k, a in enumerate(arrays) if isinstance(args[k], tensor_class.Tensor)
                   and isinstance(a, np.ndarray) and np.may_share_memory(out, a)), None)
    if source is None:
        return
    if not out.flags.writeable:
        out.flags.writeable = True  # a view of the input's own (writable) array
    if result is not None:
        share_version(result, args[source], arrays[source])
        if result.grad_fn is node:  # in place, it would bypass its backward: refused
            result._view_made_by = node.function.__name__


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
