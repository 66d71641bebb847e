"""The backward engine, and the one graph walk that realize, backward and drawing share.

``backward_steps`` is the whole backward pass as an iterator: each step runs one node's
``backward`` and says which gradients it received and which it produced.
``Tensor.backward()`` simply runs it to the end; the BackwardStepper widget runs it one
step at a time. There is no other implementation of backward.

Order: node ids grow as nodes are made, and a node's inputs are always made before it,
so visiting nodes from the newest id to the oldest is a valid order for backward (every
node receives all its gradients before it runs) and the oldest-first order is one for
realize. Walks use an explicit stack, so a 100,000-node chain needs no recursion.

``mg.autograd`` is also PyTorch's ``torch.autograd`` namespace: ``backward`` is defined
here; ``Function`` (the Tensor form), ``grad``, ``gradcheck``, ``detect_anomaly`` ... live
in autograd_function.py and are found through this module's ``__getattr__`` (at the end).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .errors import ShapeError
from . import function
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
    return sorted(seen, key=_by_id)


_by_id = attrgetter("id")


def _grad_graph(*roots: Node) -> list[Node]:
    """``walk(roots, grad_parents)``, newest first, written out: backward's only walk."""
    seen = set(roots)
    stack = list(seen)
    while stack:
        for parent, _ in stack.pop().next_functions:
            if parent is not None and parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return sorted(seen, key=_by_id, reverse=True)


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


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs=None) -> None:
    """Run the backward pass to the end (``Tensor.backward``; PyTorch's
    ``mg.autograd.backward``): from one tensor or a sequence of them, each with its
    gradient (``None`` for a one-element tensor), accumulating into the leaves' ``.grad``
    (only into those of ``inputs``, if given)."""
    tensors, gradients = _roots(tensors, grad_tensors, create_graph, "backward")
    if inputs is None:
        for _ in _backward(tensors, gradients, bool(retain_graph), report=False):
            pass
        return
    inputs = [inputs] if isinstance(inputs, function.Tensor) else list(inputs)
    captured = gradients_of(inputs, tensors, gradients, bool(retain_graph))
    for t in inputs:
        if captured[id(t)] is not None:
            _add_to_grad(t, captured[id(t)])


def backward_steps(tensor: Tensor, gradient=None,
                   retain_graph: bool = False) -> Iterator[BackwardStep]:
    """The backward pass from ``tensor``, one node at a time, newest node first.

    Gradients for leaves are accumulated into their ``.grad`` as they are produced.
    """
    return _backward([tensor], [gradient], retain_graph, report=True)


def _roots(tensors, gradients, create_graph: bool, who: str) -> tuple[list, list]:
    """The tensors to differentiate and their gradients, as two lists of one length."""
    if create_graph:
        raise NotImplementedError(
            f"{who}: create_graph=True (a graph of the backward pass, for higher-order "
            "gradients) is not supported: minigrad's backward computes gradients with NumPy "
            "arrays (each Function's backward works on arrays), so the gradients have no "
            "history to differentiate again. Gradients of gradients need PyTorch; "
            "first-order gradients work as they do there."
        )
    if isinstance(tensors, function.Tensor):  # one tensor, one gradient (or a 1-tuple)
        several = isinstance(gradients, (tuple, list)) and len(gradients) == 1 \
            and isinstance(gradients[0], function.Tensor)
        return [tensors], list(gradients) if several else [gradients]
    tensors = list(tensors)
    gradients = [None] * len(tensors) if gradients is None else list(gradients)
    if len(gradients) != len(tensors):
        raise RuntimeError(f"{who}: got {len(tensors)} tensor(s) but {len(gradients)} "
                           "gradient(s); give one gradient (or None) per tensor")
    return tensors, gradients


# Reusing a gradient array instead of copying it pays only for big arrays; for small ones
# the check costs more than the copy it saves.
_REUSE_MIN_SIZE = 4096


def _backward(tensors: list, gradients: list, retain_graph: bool, report: bool,
              captured: dict | None = None) -> Iterator[BackwardStep]:
    """The one implementation of backward. With ``report`` each step is yielded, and
    every array it shows stays as it was shown. Without, the engine may reuse big
    arrays that nobody else holds: a gradient that a backward made is added to in place,
    or becomes a leaf's ``.grad`` without a copy (PyTorch does the same).

    ``captured`` (see ``gradients_of``): ``{id(leaf): None}`` for the leaves whose
    gradients are wanted; they are collected there, and no ``.grad`` is touched."""
    pending: dict[Node, list] = {}
    for tensor, gradient in zip(tensors, gradients):
        seed = _seed_gradient(tensor, gradient)
        if tensor.grad_fn is None:  # backward of a leaf: its gradient is the seed itself
            _accumulate_into_leaf(tensor, seed, False, captured)
            continue
        slots = pending.setdefault(tensor.grad_fn, [None] * len(tensor.grad_fn._outputs))
        index = tensor._output_index
        slots[index] = seed if slots[index] is None else slots[index] + seed
    owned: set[int] = set()  # ids of the pending sums that only this pass holds
    for node in _grad_graph(*pending):
        grad_outputs = pending.pop(node, None)
        if grad_outputs is None:
            continue  # no gradient reached this node
        if owned:
            for grad in grad_outputs:  # handed on now: no longer the pass's own
                owned.discard(id(grad))
        grad_inputs = _run_backward(node, grad_outputs)
        if node._node_hooks:
            grad_inputs = _run_node_hooks(node, grad_inputs, grad_outputs)
        for position, grad in enumerate(grad_inputs):
            if grad is None:
                continue
            mine = not report and grad.size >= _REUSE_MIN_SIZE and captured is None \
                and _is_new(grad, position, node, grad_outputs, grad_inputs) \
                and id(grad) not in owned
            parent, index = node.next_functions[position]
            if parent is None:
                _accumulate_into_leaf(node.args[position], grad, mine, captured)
                continue
            slots = pending.get(parent)
            if slots is None:
                slots = pending[parent] = [None] * len(parent._outputs)
            current = slots[index]
            if current is None:
                slots[index] = grad
                if mine:
                    owned.add(id(grad))
            elif id(current) in owned:
                current += grad  # a sum only this pass holds: add in place
            else:
                slots[index] = current = current + grad
                if not report and current.size >= _REUSE_MIN_SIZE:
                    owned.add(id(current))
        if report:
            yield BackwardStep(node, tuple(grad_outputs), grad_inputs)
        if not retain_graph:
            node.free()  # after the step is seen, so a stepper can still show the node
        else:
            node._retained = True


def gradients_of(inputs: list, tensors: list, gradients: list,
                 retain_graph: bool) -> dict[int, np.ndarray | None]:
    """Run the backward pass from ``tensors`` and return ``{id(input): its gradient}``
    (None where none arrived) instead of accumulating into any ``.grad`` (what
    ``mg.autograd.grad`` and ``backward(inputs=...)`` need). A leaf's gradient is caught
    where it would be accumulated; an intermediate tensor's by a hook, for the pass."""
    captured: dict[int, np.ndarray | None] = {id(t): None for t in inputs}

    def catch(key: int):
        return lambda grad: captured.__setitem__(key, grad._data)

    handles = [t.register_hook(catch(id(t))) for t in inputs if not t.is_leaf]
    try:
        for _ in _backward(tensors, gradients, retain_graph, False, captured):
            pass
    finally:
        for handle in handles:
            handle.remove()
    return captured


def _is_new(grad: np.ndarray, position: int, node: Node, grad_outputs: list,
            grad_inputs: tuple) -> bool:
    """Did ``node``'s backward make ``grad`` for this input alone? Not if it is a view,
    the gradient it received (``Add`` passes that on), an array it saved, or an array
    it also returned for an earlier input."""
    if grad.base is not None:
        return False
    for others in (grad_outputs, node._saved or (), grad_inputs[:position]):
        for other in others:
            if other is grad:
                return False
    return True


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
        if tensor._data.size != 1:
            raise RuntimeError(
                f"backward: grad can be implicitly created only for a tensor with one "
                f"element, but this one has shape {tensor.shape}. Reduce it first (e.g. "
                f".sum() or .mean()), or pass gradient= a tensor of shape {tensor.shape}."
            )
        return np.ones(tensor.shape, dtype=tensor.dtype)
    gradient = np.asarray(gradient._data if isinstance(gradient, function.Tensor) else gradient,
                          dtype=tensor.dtype)
    if gradient.shape != tensor.shape:
        raise ShapeError(
            f"backward: gradient has shape {gradient.shape} but the tensor has shape "
            f"{tensor.shape}; they must be equal"
        )
    return gradient


def _run_backward(node: Node, grad_outputs: list) -> tuple:
    """Call one node's backward and check what it returns: one gradient per input, with
    that input's shape and dtype (None where no gradient is needed)."""
    if node._released:
        raise RuntimeError(
            f"backward: trying to backward through {node.describe()} a second time, but "
            "its saved tensors were released after the first backward. Call the first "
            "backward(retain_graph=True) if you need to backward twice."
        )
    for index, ref in enumerate(node._outputs):
        output = ref()
        if output is not None and (output._hooks or output._retains_grad) \
                and grad_outputs[index] is not None:
            grad_outputs[index] = _hooked(output, grad_outputs[index], retain=True)
    if len(grad_outputs) > 1 and node.materialize_grads:
        for index, (shape, dtype) in enumerate(node.output_meta):
            if grad_outputs[index] is None:
                grad_outputs[index] = np.zeros(shape, dtype=dtype)
    if state.last_write > node._saved_at and node._saved:  # an in-place write since forward
        check_saved_versions(node)
    grads = node.function.backward(node, *grad_outputs)  # a node is its Function's ctx
    if type(grads) is not tuple:
        grads = (grads,)
    return _fit_gradients(node, grads)


def _fit_gradients(node: Node, grads: tuple, who: str | None = None) -> tuple:
    """Check the gradients ``who`` (a hook on the node; None: the node's backward)
    returned for the node's inputs: one per positional input, each summed to that
    input's shape and cast to its dtype (None where no gradient is needed)."""
    args = node.args
    if len(grads) != len(args):
        if who is None and len(grads) > len(args) and all(g is None
                                                          for g in grads[len(args):]):
            return _fit_gradients(node, grads[:len(args)])  # Nones for inputs left out
        who = who or f"{node.function.__name__}.backward"
        raise RuntimeError(
            f"{who} returned {len(grads)} gradient(s), but forward received {len(args)} "
            "positional input(s). Return one gradient per input, in order (None for "
            "inputs that need none)."
        )
    fitted = []
    needs_input_grad = node.needs_input_grad
    for position, grad in enumerate(grads):
        if grad is None or not needs_input_grad[position]:
            fitted.append(None)
            continue
        if type(grad) is not np.ndarray:
            grad = np.asarray(grad._data if isinstance(grad, function.Tensor) else grad)
        arg = args[position]
        shape, dtype = (arg._data.shape, arg._data.dtype) if arg is not None \
            else node.input_shape_dtype(position)
        if grad.shape != shape:
            summed = sum_to_shape(grad, shape)
            if summed is None:
                who = who or f"{node.function.__name__}.backward"
                raise ShapeError(
                    f"{who} returned a gradient of shape {grad.shape} for input {position}, "
                    f"which has shape {shape}; it cannot be summed to that shape. A gradient "
                    "must have the input's shape (or a shape it broadcasts to)."
                )
            grad = summed
        if grad.dtype != dtype:
            grad = grad.astype(dtype)
        if state.anomaly:
            _check_finite(grad, f"the backward of {node.describe()} (gradient for input "
                                f"{position})", args, node._trace)
        fitted.append(grad)
    return tuple(fitted)


def _run_node_hooks(node: Node, grad_inputs: tuple, grad_outputs: list) -> tuple:
    """Call the hooks registered with ``node.register_hook``; a hook's returned tuple
    replaces the gradients for the inputs (checked as a backward's result is)."""
    make = function.Tensor._make
    received = tuple(None if g is None else make(g) for g in grad_outputs)
    for hook in list(node._node_hooks.values()):
        result = hook(tuple(None if g is None else make(g) for g in grad_inputs), received)
        if result is not None:
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            grad_inputs = _fit_gradients(node, result, f"a hook on {node.describe()}")
    return grad_inputs


def sum_to_shape(grad: np.ndarray, shape: tuple) -> np.ndarray | None:
    """``grad`` summed over the dimensions that broadcasting added to ``shape`` (the
    gradient of a broadcast is the sum over the copies); None if no broadcast of
    ``shape`` has ``grad``'s shape."""
    extra = grad.ndim - len(shape)
    if extra < 0 or not all(s == g or s == 1 for s, g in zip(shape, grad.shape[extra:])):
        return None
    axes = tuple(range(extra)) + tuple(
        extra + i for i, s in enumerate(shape) if s == 1 and grad.shape[extra + i] != 1
    )
    return grad.sum(axis=axes, keepdims=True).reshape(shape) if axes else grad.reshape(shape)


def _hooked(tensor: Tensor, grad: np.ndarray, retain: bool) -> np.ndarray:
    """Run ``tensor``'s hooks on its gradient; keep it in ``.grad`` if it retains grad."""
    from .tensor import Tensor

    for hook in (tensor._hooks or {}).values():
        result = hook(Tensor._make(grad))
        if result is not None:
            grad = np.asarray(result._data if isinstance(result, Tensor) else result)
    if retain and tensor._retains_grad:
        _add_to_grad(tensor, grad)
    return grad


def _accumulate_into_leaf(leaf: Tensor, grad: np.ndarray, owned: bool,
                          captured: dict | None = None) -> None:
    """Add ``grad`` to ``leaf.grad`` (or to its entry in ``captured``, if that is given).
    ``owned``: no one else holds ``grad``, so it may become the leaf's ``.grad`` as is."""
    if leaf._hooks:
        grad = _hooked(leaf, grad, retain=False)
        owned = False
    if captured is None:
        _add_to_grad(leaf, grad, owned)
    elif id(leaf) in captured:
        before = captured[id(leaf)]
        captured[id(leaf)] = grad if before is None else before + grad


def _add_to_grad(tensor: Tensor, grad: np.ndarray, owned: bool = False) -> None:
    if tensor.grad is None:
        if not (owned and grad.dtype == tensor.dtype):
            grad = np.array(grad, dtype=tensor.dtype)  # the array may be used elsewhere too
        tensor.grad = function.Tensor._make(grad)
    elif tensor.grad._data.flags.writeable and tensor.grad.shape == grad.shape:
        tensor.grad._data += grad
    else:
        tensor.grad._data = tensor.grad._data + grad


# --- mg.autograd as PyTorch's namespace ------------------------------------------------------


def __getattr__(name: str):
    """``mg.autograd.Function``, ``mg.autograd.grad`` ...: from autograd_function.py
    (imported on first use, since it builds on Tensor, which builds on this module)."""
    from . import autograd_function
    from .unsupported import absent

    if name in autograd_function.__all__:
        return getattr(autograd_function, name)
    raise absent("torch.autograd", name)


def __dir__() -> list[str]:
    from . import autograd_function

    return sorted(set(globals()) | set(autograd_function.__all__))
