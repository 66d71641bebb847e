"""Gradients of gradients: the backward pass recorded as a graph (``create_graph=True``).

Without ``create_graph`` the engine (autograd.py) computes gradients with NumPy arrays:
fast, and with no history. With it, the same engine loop runs, but the gradients are
Tensors and every node's backward runs on Tensors, with recording on, so each backward
formula adds ordinary nodes (Mul, Exp, ...) to the graph. The gradient is then a Tensor
with history, differentiable again, to any order. Everything that differs lives here:

- ``run_backward``: one node's backward on Tensors. The trick that serves both Function
  contracts: while it runs, what the node saved is swapped for the graph's own Tensors.
  A saved array that *is* an input's (or an output's) array becomes that input (output)
  Tensor, so the formula ``grad_output * out`` records a Mul whose inputs have history.
  Then
    - ``mg.autograd.Function`` (Tensor contract): its backward, already written with
      Tensor ops, runs with recording on (PyTorch's "double backward" tutorial).
    - ``mg.Function`` (array contract, the built-in ops): its NumPy backward runs on
      Tensors through NumPy's dispatch (``np.exp(t)``, ``t * array``: Tensor's
      ``__array_ufunc__`` / ``__array_function__`` call minigrad's ops).
  This is only right when every saved value the formula differentiates through is an
  input or an output (a value derived in forward, such as a softmax kept by a log-softmax,
  would be a constant, and the second derivative silently wrong). So an array-contract
  Function says so by declaring ``twice_differentiable = True`` (and, where its NumPy
  backward cannot run on Tensors, a ``tensor_backward`` built from recorded ops, as
  GetItem's), checked op by op by
  ``gradgradcheck`` in tests/test_higher_order.py; any other Function asked for a
  graph raises an error naming it, never a detached second derivative.
- ``seed``, ``add``, ``into_grad``, ``run_hooks``: the engine's array helpers, for Tensors.

The nodes one node's recorded backward makes are put in a group, ``backward of Mul #12``
(``backward_group``), so a drawing of a gradient tells the backward's ops from the forward's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tensor_class
from .gradients import seed_gradient
from .state import group


class NotTwiceDifferentiableError(RuntimeError):
    """A Function's backward cannot be recorded as a graph (``create_graph=True``)."""


def seed(tensor: Any, gradient: Any, who: str) -> Any:
    """The seed gradient as a Tensor; a Tensor given with history keeps it (PyTorch lets
    ``grad_outputs`` require grad: the result is then differentiable with respect to it)."""
    Tensor = tensor_class.Tensor
    if isinstance(gradient, Tensor) and gradient.requires_grad:
        seed_gradient(tensor, gradient.detach(), who)  # the checks, on the values
        return gradient if gradient.dtype == tensor.dtype else gradient.to(tensor.dtype)
    return Tensor._make(seed_gradient(tensor, gradient, who))


def add(total: Any, grad: Any, node: Any = None) -> Any:
    """Two gradients for one tensor: a recorded sum (never in place: ``total`` may be
    a node's input by now). ``node``: the node whose output the gradients are for; the
    sum is part of its backward (drawn in its ``backward_group``)."""
    if total is None:
        return grad
    if node is None:
        return total + grad
    with group(backward_group(node)):
        return total + grad


def into_grad(leaf: Any, grad: Any) -> None:
    """``leaf.grad`` becomes the gradient itself, with its history (as in PyTorch), or
    the recorded sum with the ``.grad`` from before."""
    leaf._grad = grad if leaf.grad is None else leaf.grad + grad


def run_hooks(tensor: Any, grad: Any, hooks: dict | None = None) -> Any:
    """``tensor``'s hooks (or ``hooks``: see ``run_tensor_hooks``) on its gradient Tensor;
    a returned Tensor replaces it."""
    hooks = tensor._hooks if hooks is None else hooks
    for hook in list((hooks or {}).values()):
        result = hook(grad)
        if result is not None:
            grad = result
    return grad


def run_node_hooks(node: Any, grad_inputs: tuple, grad_outputs: list) -> tuple:
    """``node.register_hook`` hooks, given and returning Tensors."""
    for hook in list(node._node_hooks.values()):
        result = hook(grad_inputs, tuple(grad_outputs))
        if result is not None:
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            grad_inputs = tuple(_fit(node, i, g, False) for i, g in enumerate(result))
    return grad_inputs


def zeros(shape: tuple, dtype: Any) -> Any:
    return tensor_class.Tensor._make(np.zeros(shape, dtype=dtype))


# --- one node's backward, on Tensors ---------------------------------------------------------


def check_twice_differentiable(node: Any) -> None:
    cls = node.function
    if getattr(cls, "twice_differentiable", False):
        return
    name = cls.__name__
    if getattr(cls, "_tensor_contract", False):  # marked @once_differentiable
        why = (f"{name}.backward is marked @once_differentiable. Remove the decorator if "
               "its backward uses only Tensor operations (then it is differentiable).")
    elif cls.__module__.startswith("minigrad.") and not cls._guarded:
        why = (f"minigrad's {name} has no differentiable backward yet (the list of ops "
               "that have one is in tests/test_higher_order.py).")
    else:
        why = (f"{name} is an mg.Function: its backward works on NumPy arrays, which have "
               "no history. Write it as an mg.autograd.Function (backward with Tensor ops), "
               f"or, if its NumPy backward also runs on Tensors (NumPy functions minigrad "
               f"has as ops) and uses only saved inputs and outputs, declare "
               f"`twice_differentiable = True` on {name} and check it with "
               "mg.autograd.gradgradcheck.")
    raise NotTwiceDifferentiableError(
        f"create_graph=True: the gradient through {node.describe()} cannot be "
        f"differentiated again: {why}")


def backward_group(node: Any) -> str:
    """The group of the nodes that ``node``'s recorded backward makes: ``'backward of Mul
    #12'``, numbered as errors number nodes (a drawing renumbers it: widgets/trace.py)."""
    return f"backward of {node.name} #{node.id}"


def run_backward(node: Any, grad_outputs: list) -> tuple:
    """``node``'s backward on Tensors, recorded (in its ``backward_group``)."""
    check_twice_differentiable(node)
    with group(backward_group(node)):
        return _recorded_backward(node, grad_outputs)


def _recorded_backward(node: Any, grad_outputs: list) -> tuple:
    """``run_backward``: the backward with its saved values swapped for the graph's
    Tensors (see the module docstring); the gradients fitted to the inputs."""
    cls = node.function
    # an op whose NumPy backward cannot run on Tensors declares a Tensor-level one; the
    # Tensor contract's backward is wrapped to run under no_grad: take the original
    backward = getattr(cls, "tensor_backward", None) \
        or getattr(cls.backward, "__wrapped__", cls.backward)
    saved = node._saved
    if saved:
        node._saved = tuple([_graph_tensor(node, value) for value in saved])
    try:
        grads = backward(node, *grad_outputs)
    finally:
        node._saved = saved
    grads = grads if type(grads) is tuple else (grads,)
    if len(grads) > len(node.args) and all(g is None for g in grads[len(node.args):]):
        grads = grads[:len(node.args)]
    if len(grads) != len(node.args):
        raise RuntimeError(f"{cls.__name__}.backward returned {len(grads)} gradient(s), but "
                           f"forward received {len(node.args)} positional input(s)")
    history = any(isinstance(g, tensor_class.Tensor) and g.requires_grad
                  for g in (*grad_outputs, *node.args))
    return tuple([_fit(node, position, grad, history) for position, grad in enumerate(grads)])


def recomputed(node: Any, grad_outputs: tuple, composite: Any) -> tuple:
    """A ``tensor_backward`` for an op that is a composite of twice-differentiable ops
    (a layer norm): ``composite(*node.args)`` recomputes the output from the graph's own
    input Tensors, recorded, and the gradients are that composite's, recorded too
    (``create_graph``). It costs a second forward, only on this path; it saves writing
    the op's backward formulas a second time with Tensor operations."""
    from .autograd_function import grad

    Tensor = tensor_class.Tensor
    args = node.args
    wanted = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad
              and i < len(node.needs_input_grad) and node.needs_input_grad[i]]
    out = composite(*args)
    outputs = out if isinstance(out, tuple) else (out,)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if g is not None]
    found = grad([o for o, _ in pairs], [args[i] for i in wanted], [g for _, g in pairs],
                 create_graph=True, allow_unused=True) if wanted and pairs else ()
    grads = [None] * len(args)
    for i, g in zip(wanted, found):
        grads[i] = g
    return tuple(grads)


def graph_output(node: Any, saved: np.ndarray, index: int = 0) -> Any:
    """For a ``tensor_backward``: output ``index`` of ``node`` as the graph's Tensor (re-made
    around ``saved``, the array forward saved for it, if the Tensor itself is gone),
    reshaped to ``saved``'s shape (a reduction saves its result with keepdims)."""
    output = node._outputs[index]()
    if output is None:
        shape = node.output_meta[index][0]
        output = tensor_class.Tensor._make(saved.reshape(shape), True, node, index)
    return output if tuple(output.shape) == saved.shape else output.reshape(saved.shape)


def _graph_tensor(node: Any, value: Any) -> Any:
    """A saved value as the graph's Tensor: the input or output whose array it is (the
    output re-made around its array if the Tensor itself is gone); else as it was."""
    Tensor = tensor_class.Tensor
    array = value._data if isinstance(value, Tensor) else value
    if isinstance(array, np.generic):  # a 0-d result NumPy gave as a scalar (np.sqrt)
        array = np.asarray(array)
    elif type(array) is not np.ndarray:
        return value
    if array.dtype.kind not in "fc":  # indices, masks: no gradient flows through them
        return value
    # (a user's Function got read-only views of its inputs: _forward_arrays)
    for arg, given in zip(node.args, node._forward_arrays or node.args):
        if isinstance(arg, Tensor) and (arg._data is array or given is array):
            return arg
    outputs = [ref() for ref in node._outputs]
    for output in outputs:
        if output is not None and output._data is array:
            return output
    for output in outputs:  # an in-place op (exp_) copied its result into the tensor's
        # array; a 0-d result was made an array: the same values, another array object
        if output is not None and output._data.shape == array.shape \
                and output._data.dtype == array.dtype and np.array_equal(output._data, array):
            return output
    return value


def _fit(node: Any, position: int, grad: Any, history: bool) -> Any:
    """The gradient for input ``position`` as a Tensor of its shape and dtype (summed over
    broadcast dimensions, recorded). A plain array where the gradient should have history
    means the backward stepped out of the graph: an error naming the Function."""
    Tensor = tensor_class.Tensor
    if grad is None or not node.needs_input_grad[position]:
        return None
    if not isinstance(grad, Tensor):
        if history:
            raise NotTwiceDifferentiableError(
                f"create_graph=True: {node.describe()}'s backward returned a NumPy array "
                f"for input {position}, not a Tensor: it computed the gradient outside the "
                "graph, so the gradient cannot be differentiated again.")
        grad = Tensor._make(np.asarray(grad))
    shape, dtype = node.input_shape_dtype(position)
    shape = tuple(shape)
    if grad.shape != shape:
        extra = grad.ndim - len(shape)
        if extra < 0 or not all(s == g or s == 1 for s, g in zip(shape, grad.shape[extra:])):
            raise RuntimeError(
                f"{node.function.__name__}.backward returned a gradient of shape "
                f"{tuple(grad.shape)} for input {position}, which has shape {shape}")
        axes = tuple(range(extra)) + tuple(extra + i for i, s in enumerate(shape)
                                           if s == 1 and grad.shape[extra + i] != 1)
        grad = (grad.sum(dim=axes, keepdim=True) if axes else grad).reshape(shape)
    if grad.dtype != dtype:
        grad = grad.to(dtype)
    return grad
