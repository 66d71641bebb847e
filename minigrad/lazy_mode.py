"""Lazy mode: ``Function.apply`` records an op with its results' shapes and dtypes, and
its forward runs here, later, when a value is needed (``realize()``, ``backward()``,
``item()``, ``numpy()``).
"""

from __future__ import annotations

from typing import Any

from . import function
from .errors import ShapeError
from .function import Node, as_output_tuple, run_forward
from .graph import lazy_parents, walk
from .state import state
from .versions import clock


def pending_node(tensor: Any) -> Node | None:
    """The node that will compute ``tensor`` (lazy mode); None once it is computed."""
    return tensor._lazy_node


def realize(*tensors: Any) -> None:
    """Compute every deferred op that ``tensors`` depend on, oldest first."""
    roots = [t._lazy_node for t in tensors if t._lazy_node is not None]
    if not roots:
        return
    previous, state.lazy = state.lazy, False  # forwards that call apply run eagerly
    try:
        for node in walk(roots, lazy_parents):
            if node.pending:
                realize_node(node)
    finally:
        state.lazy = previous


def realize_node(node: Node) -> None:
    """Run the forward that lazy mode deferred; its inputs are already realized."""
    cls, args = node.function, node.args
    arrays = [a._data if isinstance(a, function.Tensor) else a for a in args]
    previous, state.group = state.group, node.group  # errors name the group it was made in
    try:
        outputs, marked = as_output_tuple(run_forward(cls, node, arrays, node._pending, args),
                                          node)
    finally:
        state.group = previous
    node._pending = None
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
                t.requires_grad, t.grad_fn = False, None
            results.append(t)
    node._saved_at = next(clock)  # what was saved is as of now
    if not any(t.grad_fn is node for t in results):
        node.release()  # nothing will backpropagate through it
