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


class VersionCounter:
    """A tensor's in-place writes so far, and the clock's value at the last one. A tensor
    gets one at its first write (``tensor._version_counter``); its views and detached
    copies share it, as in PyTorch."""

    __slots__ = ("writes", "stamp")

    def __init__(self) -> None:
        self.writes, self.stamp = 0, 0


def counter_of(tensor: Any) -> VersionCounter:
    """``tensor``'s version counter, made now if it has none yet. The node that made the
    tensor keeps it too (as PyTorch's saved variables keep theirs): an output it saved
    can still be written through a detached copy after the output itself is gone."""
    if tensor._version_counter is None:
        tensor._version_counter = VersionCounter()
        node = tensor.grad_fn
        if node is not None:
            if node._output_counters is None:
                node._output_counters = {}
            node._output_counters[id(tensor._data)] = tensor._version_counter
    return tensor._version_counter


def record_write(tensor: Any) -> None:
    """Count an in-place write of ``tensor``'s data, stamped with the clock."""
    counter = counter_of(tensor)
    counter.writes += 1
    counter.stamp = state.last_write = next(clock)


def share_version(result: Any, base: Any, base_array: np.ndarray) -> None:
    """If a view Function's output is a view of its input 0 (``base``), edits of one are
    edits of the other: they share one version counter, as in PyTorch."""
    if np.may_share_memory(result._data, base_array):
        result._version_counter = counter_of(base)
        result._base = base._base if base._base is not None else base


def check_saved_versions(node: Any) -> None:
    """Raise if an array saved by ``node`` was modified in place after it was saved."""
    for position, array in enumerate(node.saved_arrays()):
        counter = _counter_of_saved(node, array)
        if counter is not None and counter.stamp > node._saved_at:
            error = RuntimeError(
                f"{node.describe()}: saved tensor {position} (shape {np.shape(array)}) was "
                f"modified by an in-place operation after it was saved (it is now at "
                f"version {counter.writes}). Its gradient would be wrong. Do the in-place "
                "edit on a clone() instead, or before the op."
            )
            error.minigrad = True
            raise error


def _counter_of_saved(node: Any, array: Any) -> VersionCounter | None:
    """The version counter of the input or output of ``node`` whose data ``array`` is
    (None if it has none: never written, never shared)."""
    for tensor in node.inputs + node.outputs:
        if tensor is not None and tensor._data is array:
            return tensor._version_counter
    return (node._output_counters or {}).get(id(array))  # an output that is gone
