"""Hooks: the user's functions that backward calls on a gradient on its way.

``t.register_hook(hook)`` runs ``hook(grad)`` when ``t``'s gradient is known; a returned
tensor replaces it, and must have its shape. ``node.register_hook(hook)`` runs
``hook(grad_inputs, grad_outputs)`` after the node's backward; a returned tuple replaces
the gradients for its inputs. Both return a ``RemovableHandle``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tensor_class
from .errors import ShapeError
from .gradients import fit_gradients


class RemovableHandle:
    """What ``register_hook`` (and a module's ``register_*_hook``) returns:
    ``handle.remove()`` takes the hook away; ``with handle:`` removes it at the end of
    the block. ``handle.id`` is the hook's key in ``hooks``: ``key``, or, without one, a
    number counted over the whole session (PyTorch's). ``extra_dict``: a dict (or a
    list of them) whose entry under the same key goes too (a module's ``with_kwargs``
    and ``always_call`` marks)."""

    next_id = 0

    def __init__(self, hooks: dict, key: int | None = None, *,
                 extra_dict: dict | list | None = None) -> None:
        if key is None:
            key = RemovableHandle.next_id
            RemovableHandle.next_id += 1
        # the dicts themselves (a plain dict cannot be weakly referenced); they keep no
        # tensor alive
        self._hooks, self.id = hooks, key
        self._extra = (extra_dict,) if isinstance(extra_dict, dict) else tuple(extra_dict or ())

    def remove(self) -> None:
        for hooks in (self._hooks, *self._extra):
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exception: Any) -> None:
        self.remove()


def hooks_stay_with_old_value(tensor: Any, new_node: Any) -> None:
    """``tensor`` becomes an output of ``new_node`` (an in-place op). As in PyTorch, the
    hooks registered on it so far are for its old value: they stay with the node that
    made that value and run on that value's gradient (``node._old_hooks``); hooks
    registered from now on run on the new value's. ``retain_grad`` moves to the new value."""
    old_node = tensor.grad_fn
    if tensor._hooks and old_node is not None:
        if old_node._old_hooks is None:
            old_node._old_hooks = {}
        old_node._old_hooks[tensor._output_index] = tensor._hooks
        tensor._hooks = None
    if tensor._retains_grad:
        new_node._output_hooks = True


def run_tensor_hooks(tensor: Any, grad: np.ndarray, hooks: dict | None = None) -> np.ndarray:
    """Run ``tensor``'s hooks (or ``hooks``, those of an old value of it) on its gradient;
    a returned tensor replaces it."""
    hooks = tensor._hooks if hooks is None else hooks
    for hook in list((hooks or {}).values()):
        name = getattr(hook, "__name__", type(hook).__name__)
        try:
            result = hook(tensor_class.Tensor._make(grad))
        except ShapeError as error:
            if not (isinstance(error.__cause__, ValueError) and not grad.flags.writeable):
                raise
            raise ShapeError(  # the gradient is a read-only broadcast view of a smaller one
                f"hook '{name}' registered on {_which_tensor(tensor)} edited the gradient it "
                "was given in place, but that gradient is read-only here (backward made it "
                "by broadcasting a smaller one, as a sum's backward does). A hook changes a "
                "gradient by returning a new tensor: return e.g. grad * 0.5, not "
                "grad.mul_(0.5)."
            ) from error
        if result is None:
            continue
        if isinstance(result, tensor_class.Tensor):
            result = result.realize()._data
        replaced = np.asarray(result)
        if replaced.shape != grad.shape:
            raise ShapeError(
                f"hook '{name}' registered on {_which_tensor(tensor)} returned a gradient "
                f"of shape {replaced.shape}, but the gradient it was given has shape "
                f"{grad.shape}. A tensor hook may change the gradient's values, not its shape."
            )
        if replaced.dtype != grad.dtype:  # PyTorch refuses this too
            raise RuntimeError(
                f"hook '{name}' registered on {_which_tensor(tensor)} returned a gradient "
                f"of dtype {replaced.dtype}, but the gradient it was given is "
                f"{grad.dtype}. A tensor hook may change the gradient's values, not its "
                f"dtype: return e.g. grad * 2 or grad.to({grad.dtype}) rather than a new "
                "tensor of another dtype."
            )
        grad = replaced
    return grad


def _which_tensor(tensor: Any) -> str:
    """``"the tensor 'h' (shape (2, 3), made by Exp #4)"``, or ``"a leaf tensor ..."``."""
    name = f" '{tensor.label}'" if tensor.label else ""
    made = f", made by {tensor.grad_fn.describe()}" if tensor.grad_fn is not None else ""
    kind = "the tensor" if tensor.grad_fn is not None else "the leaf tensor"
    return f"{kind}{name} (shape {tuple(tensor.shape)}{made})"


def run_node_hooks(node: Any, grad_inputs: tuple, grad_outputs: list) -> tuple:
    """Call the hooks registered with ``node.register_hook``; a hook's returned tuple
    replaces the gradients for the inputs (checked as a backward's result is)."""
    make = tensor_class.Tensor._make
    received = tuple(None if g is None else make(g) for g in grad_outputs)
    for hook in list(node._node_hooks.values()):
        result = hook(tuple(None if g is None else make(g) for g in grad_inputs), received)
        if result is not None:
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            name = getattr(hook, "__name__", type(hook).__name__)
            grad_inputs = fit_gradients(node, result, f"hook '{name}' on {node.describe()}")
    return grad_inputs
