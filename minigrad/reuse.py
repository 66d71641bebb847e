"""The backward pass's one speed trick: summing gradients without copies nobody needs.

``accumulate`` adds into a sum in place only when this pass made that sum itself;
``accumulate_into_grad`` lets a leaf's first gradient become its ``.grad`` without a copy
when backward made it for that leaf alone. Neither ever writes into an array that a
``backward_steps`` step showed, so ``backward()`` and the stepper run the same code.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from . import tensor_class
from .lazy_mode import realize_readers


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
ADOPT_MIN_SIZE = 4096

# The arrays taken as a .grad that way. A step showed them, so the engine never adds into
# them in place, in this pass or a later one (weakly held: an entry goes with its array).
_adopted: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def made_for_this_input(grad: np.ndarray, position: int, node: Any, grad_outputs: list,
                        grad_inputs: tuple) -> bool:
    """Did ``node``'s backward make ``grad`` for this input alone, so it may become a
    leaf's ``.grad`` as it is? Not if it is small, a view, the gradient it received
    (``Add`` passes that on), an array it saved, or one it also returned for an earlier
    input."""
    if grad.size < ADOPT_MIN_SIZE or grad.base is not None:
        return False
    for others in (grad_outputs, node.saved_arrays(), grad_inputs[:position]):
        for other in others:
            if other is grad:
                return False
    return True


def accumulate_into_grad(tensor: Any, grad: np.ndarray, own: dict, new: bool) -> None:
    """Add ``grad`` to ``tensor.grad``. ``new``: backward made ``grad`` for this tensor
    alone, so it may become ``.grad`` without a copy."""
    if tensor.grad is None:
        if new and grad.dtype == tensor.dtype:
            _adopted[id(grad)] = grad
        else:
            grad = np.array(grad, dtype=tensor.dtype)  # a copy: the engine's own
            own[id(tensor)] = id(grad)
        tensor._grad = tensor_class.Tensor._make(grad)  # (the engine's own: no check)
        return
    total = tensor.grad._data
    key = id(tensor)  # (not the tensor: == on tensors compares elements)
    if key not in own and total.flags.writeable and total.shape == grad.shape \
            and _adopted.get(id(total)) is not total:
        own[key] = id(total)  # a .grad from before: add into it in place, as PyTorch does
    if own.get(key) == id(total):  # lazy mode: a deferred read of .grad (g = p.grad *
        realize_readers(tensor.grad)  # 1) runs first, with the values it was given
    tensor.grad._data = accumulate(total, grad, key, own)


def zero_grads(params: Any, set_to_none: bool) -> None:
    """``zero_grad`` of a module or an optimizer: each ``.grad`` set to None, or, with
    ``set_to_none=False``, zeroed as PyTorch does, so that a reference kept to ``p.grad``
    sees the zeros: in place, unless the array was adopted from a backward (a step may
    have shown it), which gets fresh zeros in the same Tensor. Either way the next
    backward adds into them in place."""
    for param in params:
        grad = param.grad
        if grad is None:
            continue
        if set_to_none:
            param.grad = None
            continue
        if grad.grad_fn is not None:  # a gradient with history (create_graph=True)
            grad.detach_()
        grad.requires_grad = False
        array = grad._data
        if _adopted.get(id(array)) is array or not array.flags.writeable:
            grad._data = np.zeros_like(array)
        else:
            realize_readers(grad)  # lazy mode: a deferred read of it runs first
            array[...] = 0
