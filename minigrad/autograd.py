"""The backward engine, and the one graph walk that realize, backward and drawing share.

``backward_steps`` is the whole backward pass as an iterator: each step runs one node's
``backward`` and says which gradients it received and which it produced.
``Tensor.backward()`` simply runs it to the end; the BackwardStepper widget runs it one
step at a time. There is no other implementation of backward.

Order: node ids grow as nodes are made, and a node's inputs are always made before it,
so visiting nodes from the newest id to the oldest is a valid order for backward (every
node receives all its gradients before it runs) and the oldest-first order is one for
realize. Walks use an explicit stack, so a 100,000-node chain needs no recursion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .errors import ShapeError
from .function import Node, _check_finite, check_saved_versions, realize_node
from .state import state

if TYPE_CHECKING:
    from .tensor import Tensor


def walk(roots: Iterable[Node], parents: Callable[[Node], Iterable[Node]]) -> list[Node]:
    """Every node reachable from ``roots`` through ``parents``, oldest first."""
    seen: set[Node] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(p for p in parents(node) if p is not None and p not in seen)
    return sorted(seen, key=lambda n: n.id)


def grad_parents(node: Node) -> Iterator[Node]:
    """The nodes that made ``node``'s inputs (the edges gradients travel along)."""
    return (parent for parent, _ in node.next_functions if parent is not None)


def lazy_parents(node: Node) -> Iterator[Node]:
    """The not-yet-computed nodes that ``node``'s inputs wait for."""
    return (t._lazy_node for t in node.inputs if t._lazy_node is not None)


# --- realize (lazy mode) ------------------------------------------------------------------


def realize(*tensors: Tensor) -> None:
    """Compute every deferred op that ``tensors`` depend on, oldest first."""
    roots = [t._lazy_node for t in tensors if t._lazy_node is not None]
    if not roots:
        return
    previous, state.lazy = state.lazy, False  # forwards that call apply run eagerly
    try:
        for node in walk(roots, lazy_parents):
            if node._pending is not None:
                realize_node(node)
    finally:
        state.lazy = previous


# --- backward -------------------------------------------------------------------------------


class BackwardStep(NamedTuple):
    """One node's part of the backward pass."""

    node: Node
    grad_outputs: tuple  # the gradient that arrived for each of its outputs
    grad_inputs: tuple  # the gradient it sent to each positional input (None: none)


def backward(tensor: Tensor, gradient=None, retain_graph: bool = False) -> None:
    """Run the backward pass to the end (what ``Tensor.backward`` does)."""
    for _ in backward_steps(tensor, gradient, retain_graph):
        pass


def backward_steps(tensor: Tensor, gradient=None,
                   retain_graph: bool = False) -> Iterator[BackwardStep]:
    """The backward pass from ``tensor``, one node at a time, newest node first.

    Gradients for leaves are accumulated into their ``.grad`` as they are produced.
    """
    seed = _seed_gradient(tensor, gradient)
    if tensor.grad_fn is None:  # backward of a leaf: its gradient is the seed itself
        _accumulate_into_leaf(tensor, seed)
        return
    root = tensor.grad_fn
    pending: dict[Node, list] = {root: [None] * len(root.output_meta)}
    pending[root][tensor._output_index] = seed
    for node in reversed(walk([root], grad_parents)):
        grad_outputs = pending.pop(node, None)
        if grad_outputs is None or all(g is None for g in grad_outputs):
            continue  # no gradient reached this node
        grad_inputs = _run_backward(node, grad_outputs)
        for position, ((parent, index), grad) in enumerate(zip(node.next_functions, grad_inputs)):
            if grad is None:
                continue
            if parent is not None:
                slots = pending.setdefault(parent, [None] * len(parent.output_meta))
                slots[index] = grad if slots[index] is None else slots[index] + grad
            else:
                _accumulate_into_leaf(node.args[position], grad)
        yield BackwardStep(node, tuple(grad_outputs), grad_inputs)
        if not retain_graph:
            node.free()  # after the step is seen, so a stepper can still show the node


def _seed_gradient(tensor: Tensor, gradient) -> np.ndarray:
    if tensor._lazy_node is not None:
        tensor.realize()
    if not tensor.requires_grad:
        raise RuntimeError(
            f"backward: this tensor (shape {tensor.shape}) does not require grad and has no "
            "grad_fn, so there is nothing to differentiate. Create the inputs with "
            "requires_grad=True, and do not compute it inside no_grad()."
        )
    if gradient is None:
        if tensor.data.size != 1:
            raise RuntimeError(
                f"backward: grad can be implicitly created only for a tensor with one "
                f"element, but this one has shape {tensor.shape}. Reduce it first (e.g. "
                f".sum() or .mean()), or pass gradient= a tensor of shape {tensor.shape}."
            )
        return np.ones(tensor.shape, dtype=tensor.dtype)
    gradient = np.asarray(gradient.data if hasattr(gradient, "data") else gradient,
                          dtype=tensor.dtype)
    if gradient.shape != tensor.shape:
        raise ShapeError(
            f"backward: gradient has shape {gradient.shape} but the tensor has shape "
            f"{tensor.shape}; they must be equal"
        )
    return gradient


def _run_backward(node: Node, grad_outputs: list) -> tuple:
    """Call one node's backward and check what it returns."""
    ctx = node.ctx
    if ctx._released:
        raise RuntimeError(
            f"backward: trying to backward through {node.describe()} a second time, but "
            "its saved tensors were released after the first backward. Call the first "
            "backward(retain_graph=True) if you need to backward twice."
        )
    for index, ref in enumerate(node._outputs):
        output = ref()
        if output is not None and grad_outputs[index] is not None \
                and (output._hooks or output._retains_grad):
            grad_outputs[index] = _hooked(output, grad_outputs[index], retain=True)
    if ctx.materialize_grads:
        for index, (shape, dtype) in enumerate(node.output_meta):
            if grad_outputs[index] is None:
                grad_outputs[index] = np.zeros(shape, dtype=dtype)
    check_saved_versions(node)
    grads = node.function.backward(ctx, *grad_outputs)
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) != len(node.args):
        raise RuntimeError(
            f"{node.function.__name__}.backward returned {len(grads)} gradient(s), but "
            f"forward received {len(node.args)} positional input(s). Return one gradient "
            "per input, in order (None for inputs that need none)."
        )
    fitted = []
    for position, (grad, needed) in enumerate(zip(grads, ctx.needs_input_grad)):
        if grad is None or not needed:
            fitted.append(None)
            continue
        grad = _fit_to_input(grad, node, position)
        if state.anomaly:
            _check_finite(grad, f"the backward of {node.describe()} (gradient for input "
                                f"{position})", node.args, node._trace)
        fitted.append(grad)
    return tuple(fitted)


def _fit_to_input(grad, node: Node, position: int) -> np.ndarray:
    """Sum a gradient over broadcast dimensions to its input's shape, in its dtype."""
    shape, dtype = node.input_shape_dtype(position)
    if type(grad) is not np.ndarray:
        grad = np.asarray(grad)
    if grad.shape != shape:
        grad = _sum_to_shape(grad, shape, node, position)
    if grad.dtype != dtype:
        grad = grad.astype(dtype)
    return grad


def _sum_to_shape(grad: np.ndarray, shape: tuple, node: Node, position: int) -> np.ndarray:
    extra = grad.ndim - len(shape)
    fits = extra >= 0 and all(s == g or s == 1 for s, g in zip(shape, grad.shape[extra:]))
    if not fits:
        raise ShapeError(
            f"{node.function.__name__}.backward returned a gradient of shape {grad.shape} "
            f"for input {position}, which has shape {shape}; it cannot be summed to that "
            "shape. A gradient must have the input's shape (or a shape it broadcasts to)."
        )
    axes = tuple(range(extra)) + tuple(
        extra + i for i, s in enumerate(shape) if s == 1 and grad.shape[extra + i] != 1
    )
    return grad.sum(axis=axes, keepdims=True).reshape(shape) if axes else grad.reshape(shape)


def _hooked(tensor: Tensor, grad: np.ndarray, retain: bool) -> np.ndarray:
    """Run ``tensor``'s hooks on its gradient; keep it in ``.grad`` if it retains grad."""
    from .tensor import Tensor

    for hook in tensor._hooks.values():
        result = hook(Tensor._make(grad))
        if result is not None:
            grad = np.asarray(result.data if isinstance(result, Tensor) else result)
    if retain and tensor._retains_grad:
        _add_to_grad(tensor, grad)
    return grad


def _accumulate_into_leaf(leaf: Tensor, grad: np.ndarray) -> None:
    if leaf._hooks:
        grad = _hooked(leaf, grad, retain=False)
    _add_to_grad(leaf, grad)


def _add_to_grad(tensor: Tensor, grad: np.ndarray) -> None:
    from .tensor import Tensor

    if tensor.grad is None:
        # a copy: the same array may have been sent to several inputs
        tensor.grad = Tensor._make(np.array(grad, dtype=tensor.dtype))
    elif tensor.grad.data.flags.writeable and tensor.grad.shape == grad.shape:
        tensor.grad.data += grad
    else:
        tensor.grad.data = tensor.grad.data + grad

