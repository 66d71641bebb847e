"""The backward engine: the chain rule, run over the recorded graph.

``backward_steps`` is the whole backward pass as an iterator. Each step pops the newest
node that gradients reached, runs its Function's ``backward`` and routes each gradient it
returns to the input it is for: into a leaf's ``.grad``, or into the pending sum of the
node that made that input (a tensor used twice gets the sum of two gradients).
``Tensor.backward()`` runs the iterator to the end; the BackwardStepper widget runs it one
step at a time and only looks. There is no other implementation of backward.

Around the loop, one module each: the order (newest node first) is
``graph.backward_order``; the seed gradients and the check of what a backward returned
are in ``gradients.py``, the hooks in ``hooks.py``, the check for in-place edits of saved
arrays in ``versions.py``, and the array reuse of the sums in ``reuse.py``.

``create_graph=True`` runs this same loop with Tensors instead of arrays: each node's
backward is then recorded as graph operations, so the gradients have history and can be
differentiated again. What differs is in ``higher_order.py``; here it is one flag,
``create_graph``, tested at the few places where an array would be made or added to.

``mg.autograd`` is also PyTorch's ``torch.autograd`` namespace: ``backward`` is defined
here; ``Function`` (the Tensor form), ``grad``, ``gradcheck``, ``detect_anomaly`` ... live
in autograd_function.py, which builds on this module; ``minigrad/__init__.py`` adds them here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from . import higher_order, tensor_class
from . import forward as _forward  # (read-only arrays for a user's Function's backward)
from .function import Node
from .gradients import fit_gradients, roots, seed_gradient
from .gradients import sum_to_shape  # noqa: F401 (exported: ops and chapter 1 use it)
from .graph import backward_order, grad_parents, lazy_parents, walk  # noqa: F401 (exported)
from .hooks import run_node_hooks, run_tensor_hooks
from .lazy_mode import pending_node, realize  # noqa: F401 (exported)
from .reuse import accumulate, accumulate_into_grad, made_for_this_input
from .state import enable_grad, state
from .state import lazy as _lazy  # (not torch.autograd.lazy)
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
    tensors, gradients = roots(tensors, grad_tensors, "backward")
    retain_graph = create_graph if retain_graph is None else retain_graph  # as PyTorch
    if inputs is None:
        for _ in _backward(tensors, gradients, bool(retain_graph), report=False,
                           create_graph=create_graph):
            pass
        return
    inputs = [inputs] if isinstance(inputs, tensor_class.Tensor) else list(inputs)
    captured = gradients_of(inputs, tensors, gradients, bool(retain_graph),
                            create_graph=create_graph)
    for t in inputs:
        if captured[id(t)] is None:
            continue
        if create_graph:
            higher_order.into_grad(t, captured[id(t)])
        else:
            accumulate_into_grad(t, captured[id(t)], {}, new=False)


def backward_steps(tensor: Any, gradient: Any = None,
                   retain_graph: bool = False) -> Iterator[BackwardStep]:
    """The backward pass from ``tensor``, one node at a time, newest node first.

    Gradients for leaves are accumulated into their ``.grad`` as they are produced. The
    engine never writes into an array a step showed, in this pass or a later one (see
    ``accumulate``); but a leaf's ``.grad`` may be that very array, taken without a copy,
    so an in-place edit of ``.grad`` of your own shows in the step too."""
    return _backward([tensor], [gradient], retain_graph, report=True)


def gradients_of(inputs: list, tensors: list, gradients: list, retain_graph: bool,
                 who: str = "backward", create_graph: bool = False) -> dict[int, Any]:
    """Run the backward pass from ``tensors`` and return ``{id(input): its gradient}``
    (None where none arrived) instead of accumulating into any ``.grad`` (what
    ``mg.autograd.grad`` and ``backward(inputs=...)`` need). A leaf's gradient is caught
    where it would be accumulated; an intermediate tensor's by a hook, for the pass.
    With ``create_graph`` the gradients are Tensors with history, else arrays."""
    captured: dict[int, np.ndarray | None] = {id(t): None for t in inputs}

    def catch(key: int) -> Any:
        return lambda grad: captured.__setitem__(key, grad if create_graph else grad._data)

    handles = [t.register_hook(catch(id(t))) for t in inputs if not t.is_leaf]
    try:
        for _ in _backward(tensors, gradients, retain_graph, False, captured, who,
                           create_graph):
            pass
    finally:
        for handle in handles:
            handle.remove()
    return captured


def _backward(tensors: list, gradients: list, retain_graph: bool, report: bool,
              captured: dict | None = None, who: str = "backward",
              create_graph: bool = False) -> Iterator[BackwardStep]:
    """The one implementation of all three: ``report`` only decides whether each step is
    handed out (``backward`` skips making them; that is all). ``captured`` (from
    ``gradients_of``): the leaves' gradients go there instead of into ``.grad``.
    ``create_graph``: gradients are Tensors and each backward is recorded
    (``higher_order.py``), with grad mode on whatever the caller's, as in PyTorch."""
    if create_graph:
        with enable_grad(), _lazy(False):
            yield from _backward_recorded(tensors, gradients, retain_graph, report,
                                          captured, who)
        return
    own: dict = {}  # key (a pending slot, or id of a tensor) -> id of the sum this pass
    # made for it, which it may add into in place (see accumulate)
    pending: dict = {}  # node -> the gradient for each of its outputs
    held: dict = {}  # id of a leaf with hooks -> [leaf, the sum of its gradients so far]
    for tensor, gradient in zip(tensors, gradients):
        seed = seed_gradient(tensor, gradient, who)
        root = tensor.grad_fn
        if root is None:  # backward of a leaf: its gradient is the seed itself
            _accumulate_into_leaf(tensor, seed, own, False, captured, held)
            continue
        slots = pending.setdefault(root, [None] * len(root._outputs))
        total = slots[tensor._output_index]
        slots[tensor._output_index] = seed if total is None else total + seed
    yield from _backward_loop(pending, own, held, retain_graph, report, captured, False)


def _backward_recorded(tensors: list, gradients: list, retain_graph: bool, report: bool,
                       captured: dict | None, who: str) -> Iterator[BackwardStep]:
    """``_backward`` with ``create_graph``: the seeds as Tensors, then the same loop."""
    pending: dict = {}
    held: dict = {}
    for tensor, gradient in zip(tensors, gradients):
        seed = higher_order.seed(tensor, gradient, who)
        root = tensor.grad_fn
        if root is None:
            _accumulate_into_leaf(tensor, seed, {}, False, captured, held, True)
            continue
        slots = pending.setdefault(root, [None] * len(root._outputs))
        slots[tensor._output_index] = higher_order.add(slots[tensor._output_index], seed)
    yield from _backward_loop(pending, {}, held, retain_graph, report, captured, True)


def _backward_loop(pending: dict, own: dict, held: dict, retain_graph: bool, report: bool,
                   captured: dict | None, create_graph: bool) -> Iterator[BackwardStep]:
    """The loop itself, from the seeded ``pending`` sums."""
    freed = []  # create_graph: freed at the end (a backward on Tensors reads outputs)
    for node in backward_order(*pending):  # newest first: all its gradients have arrived
        grad_outputs = pending.pop(node, None)
        if grad_outputs is None:
            continue  # no gradient reached this node
        grad_inputs = _run_backward(node, grad_outputs, create_graph)
        position = -1  # (a counter: enumerate() makes an object per node; with the one in
        # fit_gradients, 2.5% of a dispatch step, callgrind: 56.48 M -> 55.11 M)
        for grad in grad_inputs:  # route each gradient to its input
            position += 1
            if grad is None:
                continue
            parent, index = node.next_functions[position]
            if parent is None:  # a leaf: into its .grad
                new = not create_graph and made_for_this_input(grad, position, node,
                                                               grad_outputs, grad_inputs)
                _accumulate_into_leaf(node.args[position], grad, own, new, captured, held,
                                      create_graph)
                continue
            slots = pending.get(parent)  # else: into the sum for the node that made it
            if slots is None:
                slots = pending[parent] = [None] * len(parent._outputs)
            total = slots[index]
            if total is None:
                slots[index] = grad
            elif create_graph:  # (the sum is drawn as part of the parent's backward)
                slots[index] = higher_order.add(total, grad, parent)
            else:
                slots[index] = accumulate(total, grad, (parent, index), own)
        if report:
            yield BackwardStep(node, tuple(grad_outputs), grad_inputs)
        if retain_graph:
            node._retained = True
        elif create_graph:
            freed.append(node)
        else:
            node.free()  # after the step is seen, so a stepper can still show the node
    for node in freed:
        node.free()
    for leaf, total in held.values():  # every gradient has arrived: hooks once, on the sum
        if create_graph:
            _accumulate_into_leaf(leaf, higher_order.run_hooks(leaf, total), own, False,
                                  captured, None, True)
        else:
            _accumulate_into_leaf(leaf, run_tensor_hooks(leaf, total), own, False, captured)


def _accumulate_into_leaf(leaf: Any, grad: np.ndarray, own: dict, new: bool,
                          captured: dict | None = None, held: dict | None = None,
                          create_graph: bool = False) -> None:
    """A leaf's gradient into its ``.grad`` (or, for ``gradients_of``, into its entry in
    ``captured``, if it has one). A leaf with hooks is ``held`` until the pass ends, so
    that, as in PyTorch, its hooks run once, on the sum of all its gradients."""
    if held is not None and leaf._hooks:
        entry = held.setdefault(id(leaf), [leaf, None])
        entry[1] = grad if entry[1] is None else entry[1] + grad
        return
    if captured is None:
        if create_graph:
            higher_order.into_grad(leaf, grad)
        else:
            accumulate_into_grad(leaf, grad, own, new)
    elif id(leaf) in captured:
        total = captured[id(leaf)]
        captured[id(leaf)] = grad if total is None else total + grad


# --- one node's backward ---------------------------------------------------------------------


def _run_output_hooks(node: Node, grad_outputs: list, create_graph: bool) -> None:
    """The hooks of ``node``'s outputs (and retain_grad), on the gradients that arrived for
    them, before its backward runs: a hook's result replaces the gradient. A tensor
    modified in place is an output of its old node too: there only the hooks registered
    before the in-place op run, and it retains the gradient of its current value only,
    as in PyTorch (``hooks.hooks_stay_with_old_value``)."""
    for index, ref in enumerate(node._outputs):
        output = ref()
        if output is None or grad_outputs[index] is None:
            continue
        current = output.grad_fn is node
        hooks = output._hooks if current else (node._old_hooks or {}).get(index)
        retains = current and output._retains_grad
        if create_graph:
            if hooks:
                grad_outputs[index] = higher_order.run_hooks(output, grad_outputs[index],
                                                             hooks)
            if retains:
                higher_order.into_grad(output, grad_outputs[index])
            continue
        if hooks:
            grad_outputs[index] = run_tensor_hooks(output, grad_outputs[index], hooks)
        if retains:
            accumulate_into_grad(output, grad_outputs[index], {}, new=False)


def _run_backward(node: Node, grad_outputs: list, create_graph: bool = False) -> tuple:
    """Call one node's backward and check what it returns: one gradient per input, with
    that input's shape and dtype (None where no gradient is needed). ``create_graph``:
    on Tensors, recorded (``higher_order.run_backward``)."""
    if node._released:
        raise RuntimeError(
            f"backward: trying to backward through {node.describe()} a second time, but "
            "its saved tensors were released after the first backward. Call the first "
            "backward(retain_graph=True) if you need to backward twice."
        )
    if node._output_hooks:  # an output's hooks and retain_grad
        _run_output_hooks(node, grad_outputs, create_graph)
    if len(grad_outputs) > 1 and node.materialize_grads:
        for index, (shape, dtype) in enumerate(node.output_meta):
            if grad_outputs[index] is None:
                grad_outputs[index] = higher_order.zeros(shape, dtype) if create_graph \
                    else np.zeros(shape, dtype=dtype)
    if state.last_write > node._saved_at and node._saved:  # an in-place write since forward
        check_saved_versions(node)
    if create_graph:
        grads = higher_order.run_backward(node, grad_outputs)
        return higher_order.run_node_hooks(node, grads, grad_outputs) if node._node_hooks \
            else grads
    cls = node.function
    received = [_forward.read_only(g) for g in grad_outputs] if cls._guarded \
        else grad_outputs
    try:
        grads = cls.backward(node, *received)  # a node is its Function's ctx
    except ValueError as error:  # `x, y = ctx.saved_tensors` with nothing saved
        if cls._guarded and _forward.is_read_only_write(error):
            raise _forward.wrote_in_place(cls, "backward", node.args) from error
        if node._saved or "values to unpack" not in str(error):
            raise
        raise ValueError(f"{node.function.__name__}.backward: {error}, and its forward saved "
                         "nothing: ctx.saved_tensors is (). Call ctx.save_for_backward(...) "
                         "in forward with what backward needs.") from error
    grads = fit_gradients(node, grads if type(grads) is tuple else (grads,))
    if node._node_hooks:
        grads = run_node_hooks(node, grads, grad_outputs)
    return grads


# a name torch.autograd has and minigrad leaves out on purpose says why (unsupported.py)
__getattr__ = module_getattr("torch.autograd")
