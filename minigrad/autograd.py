"""The backward engine: the chain rule, run over the recorded graph.

``backward_steps`` is the whole backward pass as an iterator. Each step pops the newest
node that gradients reached, runs its Function's ``backward`` and routes each gradient it
returns to the input it is for: into a leaf's ``.grad``, or into the pending sum of the
node that made that input (a tensor used twice gets the sum of two gradients).
``Tensor.backward()`` runs the iterator to the end; the BackwardStepper widget runs it one
step at a time and only looks. There is no other implementation of backward.

The order (newest node first) comes from ``graph.backward_order``; in-place edits of saved
arrays are caught by ``versions.check_saved_versions``.

``mg.autograd`` is also PyTorch's ``torch.autograd`` namespace: ``backward`` is defined
here; ``Function`` (the Tensor form), ``grad``, ``gradcheck``, ``detect_anomaly`` ... live
in autograd_function.py, which builds on this module; ``minigrad/__init__.py`` adds them here.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from . import function
from .errors import ShapeError
from .function import Node
from .graph import backward_order, grad_parents, lazy_parents, walk  # noqa: F401 (exported)
from .lazy_mode import pending_node, realize  # noqa: F401 (exported)
from .messages import check_finite
from .state import state
from .unsupported import module_getattr
from .versions import check_saved_versions


class BackwardStep(NamedTuple):
    """One node's part of the backward pass."""

    node: Node
    grad_outputs: tuple  # the gradient that arrived for each of its outputs
    grad_inputs: tuple  # the gradient it sent to each positional input (None: none)


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
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
            _accumulate_into_grad(t, captured[id(t)], {}, new=False)


def backward_steps(tensor: Any, gradient: Any = None,
                   retain_graph: bool = False) -> Iterator[BackwardStep]:
    """The backward pass from ``tensor``, one node at a time, newest node first.

    Gradients for leaves are accumulated into their ``.grad`` as they are produced. The
    engine never writes into an array a step showed, in this pass or a later one (see
    ``accumulate``); but a leaf's ``.grad`` may be that very array, taken without a copy,
    so an in-place edit of ``.grad`` of your own shows in the step too."""
    return _backward([tensor], [gradient], retain_graph, report=True)


def gradients_of(inputs: list, tensors: list, gradients: list,
                 retain_graph: bool) -> dict[int, np.ndarray | None]:
    """Run the backward pass from ``tensors`` and return ``{id(input): its gradient}``
    (None where none arrived) instead of accumulating into any ``.grad`` (what
    ``mg.autograd.grad`` and ``backward(inputs=...)`` need). A leaf's gradient is caught
    where it would be accumulated; an intermediate tensor's by a hook, for the pass."""
    captured: dict[int, np.ndarray | None] = {id(t): None for t in inputs}

    def catch(key: int) -> Any:
        return lambda grad: captured.__setitem__(key, grad._data)

    handles = [t.register_hook(catch(id(t))) for t in inputs if not t.is_leaf]
    try:
        for _ in _backward(tensors, gradients, retain_graph, False, captured):
            pass
    finally:
        for handle in handles:
            handle.remove()
    return captured


def _backward(tensors: list, gradients: list, retain_graph: bool, report: bool,
              captured: dict | None = None) -> Iterator[BackwardStep]:
    """The one implementation of all three: ``report`` only decides whether each step is
    handed out (``backward`` skips making them; that is all). ``captured`` (from
    ``gradients_of``): the leaves' gradients go there instead of into ``.grad``."""
    own: dict = {}  # key (a pending slot, or id of a tensor) -> id of the sum this pass
    # made for it, which it may add into in place (see accumulate)
    pending: dict = {}  # node -> the gradient for each of its outputs
    for tensor, gradient in zip(tensors, gradients):
        seed = _seed_gradient(tensor, gradient)
        root = tensor.grad_fn
        if root is None:  # backward of a leaf: its gradient is the seed itself
            _accumulate_into_leaf(tensor, seed, own, False, captured)
            continue
        slots = pending.setdefault(root, [None] * len(root._outputs))
        total = slots[tensor._output_index]
        slots[tensor._output_index] = seed if total is None else total + seed
    for node in backward_order(*pending):
        grad_outputs = pending.pop(node, None)
        if grad_outputs is None:
            continue  # no gradient reached this node
        grad_inputs = _run_backward(node, grad_outputs)
        for position, grad in enumerate(grad_inputs):
            if grad is None:
                continue
            parent, index = node.next_functions[position]
            if parent is None:  # a leaf: into its .grad
                new = _made_for_this_input(grad, position, node, grad_outputs, grad_inputs)
                _accumulate_into_leaf(node.args[position], grad, own, new, captured)
                continue
            slots = pending.get(parent)  # else: into the sum for the node that made it
            if slots is None:
                slots = pending[parent] = [None] * len(parent._outputs)
            total = slots[index]
            slots[index] = grad if total is None else accumulate(total, grad, (parent, index), own)
        if report:
            yield BackwardStep(node, tuple(grad_outputs), grad_inputs)
        if retain_graph:
            node._retained = True
        else:
            node.free()  # after the step is seen, so a stepper can still show the node


# --- the one speed trick: reusing gradient arrays -------------------------------------------


def accumulate(total: np.ndarray, grad: np.ndarray, key: Any, own: dict) -> np.ndarray:
    """``total + grad``: the running sum of the gradients for ``key`` (an output of a
    pending node, or a tensor's ``.grad``), without copies nobody needs.

    The engine writes in place only into a sum it made itself, in this pass, for this
    ``key`` (``own[key]`` is its id): nobody else has seen it. Every other array (one a backward
    returned, which a step shows; one saved; the user's) is only read, so what a step
    shows stays as it was, and ``backward()`` and ``backward_steps`` run the same code.
    What it buys, measured: memory more than time. A ``.grad`` from an earlier pass is
    added into rather than replaced (the checkpointed ``memory`` bench peaks at 8.5 MiB
    with it, 20.6 MiB without), and a tensor used n times costs one new array instead of
    n - 1 (an RNN's weights); on the transformer bench the time is the same (0.4%)."""
    if own.get(key) == id(total):
        total += grad
    else:
        total = total + grad
        own[key] = id(total)  # an id, not the array: the sum may go when its node has run
    return total


# A leaf's first gradient becomes its .grad without a copy when backward made it for this
# input alone: the MLP bench's step is 12% slower with a copy (its weight gradients). For
# small arrays the check costs more than the copy it saves.
_ADOPT_MIN_SIZE = 4096

# The arrays taken as a .grad that way. A step showed them, so the engine never adds into
# them in place, in this pass or a later one (weakly held: an entry goes with its array).
_adopted: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _made_for_this_input(grad: np.ndarray, position: int, node: Node, grad_outputs: list,
                         grad_inputs: tuple) -> bool:
    """Did ``node``'s backward make ``grad`` for this input alone, so it may become a
    leaf's ``.grad`` as it is? Not if it is small, a view, the gradient it received
    (``Add`` passes that on), an array it saved, or one it also returned for an earlier
    input."""
    if grad.size < _ADOPT_MIN_SIZE or grad.base is not None:
        return False
    for others in (grad_outputs, node.saved_arrays(), grad_inputs[:position]):
        for other in others:
            if other is grad:
                return False
    return True


def _accumulate_into_leaf(leaf: Any, grad: np.ndarray, own: dict, new: bool,
                          captured: dict | None = None) -> None:
    """A leaf's gradient: through its hooks, into its ``.grad`` (or, for
    ``gradients_of``, into its entry in ``captured``, if it has one)."""
    if leaf._hooks:
        grad, new = _run_tensor_hooks(leaf, grad), False
    if captured is None:
        _accumulate_into_grad(leaf, grad, own, new)
    elif id(leaf) in captured:
        total = captured[id(leaf)]
        captured[id(leaf)] = grad if total is None else total + grad


def _accumulate_into_grad(tensor: Any, grad: np.ndarray, own: dict, new: bool) -> None:
    """Add ``grad`` to ``tensor.grad``. ``new``: backward made ``grad`` for this tensor
    alone, so it may become ``.grad`` without a copy."""
    if tensor.grad is None:
        if new and grad.dtype == tensor.dtype:
            _adopted[id(grad)] = grad
        else:
            grad = np.array(grad, dtype=tensor.dtype)  # a copy: the engine's own
            own[id(tensor)] = id(grad)
        tensor.grad = function.Tensor._make(grad)
        return
    total = tensor.grad._data
    key = id(tensor)  # (not the tensor: == on tensors compares elements)
    if key not in own and total.flags.writeable and total.shape == grad.shape \
            and _adopted.get(id(total)) is not total:
        own[key] = id(total)  # a .grad from before: add into it in place, as PyTorch does
    tensor.grad._data = accumulate(total, grad, key, own)


# --- one node's backward ---------------------------------------------------------------------


def _run_backward(node: Node, grad_outputs: list) -> tuple:
    """Call one node's backward and check what it returns: one gradient per input, with
    that input's shape and dtype (None where no gradient is needed)."""
    if node._released:
        raise RuntimeError(
            f"backward: trying to backward through {node.describe()} a second time, but "
            "its saved tensors were released after the first backward. Call the first "
            "backward(retain_graph=True) if you need to backward twice."
        )
    for index, ref in enumerate(node._outputs):  # hooks and retain_grad of its outputs
        output = ref()
        if output is not None and (output._hooks or output._retains_grad) \
                and grad_outputs[index] is not None:
            grad_outputs[index] = _run_tensor_hooks(output, grad_outputs[index])
            if output._retains_grad:
                _accumulate_into_grad(output, grad_outputs[index], {}, new=False)
    if len(grad_outputs) > 1 and node.materialize_grads:
        for index, (shape, dtype) in enumerate(node.output_meta):
            if grad_outputs[index] is None:
                grad_outputs[index] = np.zeros(shape, dtype=dtype)
    if state.last_write > node._saved_at and node._saved:  # an in-place write since forward
        check_saved_versions(node)
    grads = node.function.backward(node, *grad_outputs)  # a node is its Function's ctx
    grads = _fit_gradients(node, grads if type(grads) is tuple else (grads,))
    if node._node_hooks:
        grads = _run_node_hooks(node, grads, grad_outputs)
    return grads


def _fit_gradients(node: Node, grads: tuple, who: str | None = None) -> tuple:
    """Check the gradients ``who`` (a hook on the node; None: the node's backward)
    returned for the node's inputs: one per positional input, each summed to that
    input's shape and cast to its dtype (None where no gradient is needed)."""
    args, needs_input_grad = node.args, node.needs_input_grad
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
    for position, grad in enumerate(grads):
        if grad is None or not needs_input_grad[position]:
            fitted.append(None)
            continue
        if type(grad) is not np.ndarray:
            grad = np.asarray(grad)  # a number, or a Tensor (from a hook)
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
            check_finite(grad, f"the backward of {node.describe()} (gradient for input "
                               f"{position})", args, node._trace)
        fitted.append(grad)
    return tuple(fitted)


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


# --- the start, and hooks ---------------------------------------------------------------------


def _roots(tensors: Any, gradients: Any, create_graph: bool, who: str) -> tuple[list, list]:
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


def _seed_gradient(tensor: Any, gradient: Any) -> np.ndarray:
    """The gradient backward starts from: ones for a one-element tensor, or ``gradient``."""
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
    gradient = np.asarray(gradient, dtype=tensor.dtype)
    if gradient.shape != tensor.shape:
        raise ShapeError(
            f"backward: gradient has shape {gradient.shape} but the tensor has shape "
            f"{tensor.shape}; they must be equal"
        )
    return gradient


def _run_tensor_hooks(tensor: Any, grad: np.ndarray) -> np.ndarray:
    """Run ``tensor.register_hook`` hooks on its gradient; a returned tensor replaces it."""
    for hook in (tensor._hooks or {}).values():
        result = hook(function.Tensor._make(grad))
        if result is not None:
            grad = np.asarray(result)
    return grad


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


# a name torch.autograd has and minigrad leaves out on purpose says why (unsupported.py)
__getattr__ = module_getattr("torch.autograd")
