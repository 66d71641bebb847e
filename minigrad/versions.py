"""Version counters: how backward notices that an array a Function saved was modified in
place since (PyTorch's version counter, kept cheap with one clock).

One clock orders graph nodes and in-place writes: a node's id is the clock's value when
it was made, and every in-place write takes the next value. "Was this saved array
modified after node N saved it?" is then "is its last write later than N?", and a
backward pass that no write has happened during (the usual case) skips the question.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .state import state

clock = itertools.count(1)


def record_write(tensor: Any) -> None:
    """Count an in-place write of ``tensor``'s data on its version counter (the one its
    views and detached copies share, as in PyTorch), stamped with the clock."""
    owner = tensor._counter()
    owner._writes += 1
    owner._stamp = state.last_write = next(clock)


def share_version(result: Any, base: Any, base_array: np.ndarray) -> None:
    """If a view Function's output is a view of its input 0 (``base``), edits of one are
    edits of the other: they share one version counter, as in PyTorch."""
    if np.may_share_memory(result._data, base_array):
        result._counter_of = base._counter()
        result._base = base._base if base._base is not None else base


def check_saved_versions(node: Any) -> None:
    """Raise if an array saved by ``node`` was modified in place after it was saved."""
    for position, array in enumerate(node.saved_arrays()):
        owner = _owner_of(node, array)
        if owner is not None and owner._counter()._stamp > node._saved_at:
            error = RuntimeError(
                f"{node.describe()}: saved tensor {position} (shape {np.shape(array)}) was "
                f"modified by an in-place operation after it was saved (it is now at "
                f"version {owner._version}). Its gradient would be wrong. Do the in-place "
                "edit on a clone() instead, or before the op."
            )
            error.minigrad = True
            raise error


def _owner_of(node: Any, array: Any) -> Any:
    """The input or output Tensor of ``node`` whose data ``array`` is, if any. (An output
    that is gone cannot have been modified: a view or a detached copy of it would have
    kept it alive, as they share its version counter.)"""
    for tensor in node.inputs + node.outputs:
        if tensor is not None and tensor._data is array:
            return tensor
    return None
