"""Version counters and views: how backward notices that an array a Function saved was
modified in place since (PyTorch's version counter, kept cheap with one clock), and which
tensors show another one's memory (a view and its base share one counter).

One clock orders graph nodes and in-place writes: a node's id is the clock's value when
it was made, and every in-place write takes the next value. "Was this saved array
modified after node N saved it?" is then "is its last write later than N?", and a
backward pass that no write has happened during (the usual case) skips the question.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

import numpy as np

from .state import state

clock = itertools.count(1)
_TOO_HARD = getattr(np, "exceptions", np).TooHardError  # (np.exceptions: NumPy 1.25+)


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
    edits of the other: they share one version counter, as in PyTorch. Its ``_base`` is
    the tensor that owns the memory (the base of a view of a view is the first base)."""
    if np.may_share_memory(result._data, base_array):
        make_view(result, base._base if base._base is not None else base)


def make_view(view: Any, base: Any) -> None:
    """``view`` shows part of ``base``'s memory: one version counter, and ``base`` keeps
    a weak reference to it (made with grad mode on), so that an in-place op recorded on
    ``base`` can give the view a new history (``Tensor._views_follow``). A view of a leaf
    that requires grad never needs one: such a leaf cannot be modified in place."""
    view._version_counter = counter_of(base)
    view._base = base
    if state.grad_enabled and not (base._requires_grad and base.grad_fn is None):
        views = base._views
        if views is None:
            views = base._views = {}
        key = id(view)  # (a dict by id: a WeakSet would compare tensors with ==)
        views[key] = weakref.ref(view, lambda _, key=key: views.pop(key, None))


def views_of(base: Any) -> list:
    """The live views of ``base`` made with grad mode on (``make_view``)."""
    views = [ref() for ref in list((base._views or {}).values())]
    return [view for view in views if view is not None]


def is_remembered_view(view: Any, base: Any) -> bool:
    """Was ``view`` made from ``base`` with grad mode on (``make_view``)?"""
    ref = (base._views or {}).get(id(view))
    return ref is not None and ref() is view


def positions_in_base(view: np.ndarray, base: np.ndarray) -> tuple:
    """Where each element of ``view``, a NumPy view of ``base``'s memory, is in ``base``:
    an index (one integer array per dimension of ``base``, each of ``view``'s shape), so
    that ``base[positions]`` has ``view``'s values. PyTorch describes a view the same way,
    by where it lies in its base's memory (``as_strided``: sizes, strides and offset).

    The elements of ``base`` are numbered 0, 1, 2, ... in a scratch array laid out in
    memory as ``base`` is; the same strided walk that reads ``view`` then reads their
    numbers."""
    if base.ndim == 0:  # a view of one number: base[None, ...] has the view's shape
        return (None,) * view.ndim
    if view.size == 0:
        return tuple(np.zeros(view.shape, np.intp) for _ in base.shape)
    item, first, last = base.itemsize, _first_address(base), _last_address(base)
    if view.dtype != base.dtype or _first_address(view) < first or _last_address(view) > last \
            or (view.__array_interface__["data"][0] - first) % item \
            or any(s % item for s in view.strides):
        raise ValueError("the view's elements do not line up with its base's")
    scratch = np.full((last - first) // item + 1, -1, dtype=np.int64)

    def laid_out_like(array: np.ndarray) -> np.ndarray:  # the scratch slots of its elements
        offset = (array.__array_interface__["data"][0] - first) // item
        strides = tuple(s // item * scratch.itemsize for s in array.strides)
        return np.lib.stride_tricks.as_strided(scratch[offset:], array.shape, strides)

    laid_out_like(base)[...] = np.arange(base.size).reshape(base.shape)
    numbers = laid_out_like(view).copy()
    if numbers.min() < 0:
        raise ValueError("the view shows memory between its base's elements")
    return np.unravel_index(numbers, base.shape)


def _first_address(array: np.ndarray) -> int:
    """The address of the element of ``array`` that comes first in memory."""
    start = array.__array_interface__["data"][0]
    return start + sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s < 0)


def _last_address(array: np.ndarray) -> int:
    """The address of the element of ``array`` that comes last in memory."""
    start = array.__array_interface__["data"][0]
    return start + sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s > 0)


def check_saved_versions(node: Any) -> None:
    """Raise if an array saved by ``node`` was modified in place after it was saved. A
    saved array counts as an input's or output's when it shares memory with it (a NumPy
    view made in forward, ``x.reshape(-1)`` or ``x.T``, is watched as ``x`` itself)."""
    for position, array in enumerate(node.saved_arrays()):
        if not isinstance(array, np.ndarray):
            continue
        for counter in _counters_of_saved(node, array):
            if counter.stamp > node._saved_at:
                error = RuntimeError(
                    f"{node.describe()}: saved tensor {position} (shape {np.shape(array)}) "
                    f"was modified by an in-place operation after it was saved (it is now "
                    f"at version {counter.writes}). Its gradient would be wrong. Do the "
                    "in-place edit on a clone() instead, or before the op."
                )
                error.minigrad = True
                raise error


def _counters_of_saved(node: Any, array: np.ndarray) -> list[VersionCounter]:
    """The version counters of the inputs and outputs of ``node`` whose memory ``array``
    shares (those that have one: it is made at the first write)."""
    found = []
    for tensor in node.inputs + node.outputs:
        if tensor is not None and tensor._version_counter is not None \
                and tensor._data is not None and shares_memory(tensor._data, array):
            found.append(tensor._version_counter)
    if node._output_counters:  # outputs that are gone: known by their array's id
        owner = array
        while owner is not None:  # the array, and the arrays it is a view of
            counter = node._output_counters.get(id(owner))
            if counter is not None:
                found.append(counter)
            owner = owner.base if isinstance(owner.base, np.ndarray) else None
    return found


def shares_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Do ``a`` and ``b`` share memory? Exact, but bounded in work: an overlap too hard to
    decide counts as shared (a false alarm is better than a wrong gradient)."""
    if a is b:
        return True
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=10_000))
    except _TOO_HARD:
        return True
