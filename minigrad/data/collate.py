"""Collation: turning the samples of one batch into a batch (``torch.utils.data``'s
``default_collate`` and ``default_convert``).

    default_collate([(x0, 0), (x1, 1)])   # [stack([x0, x1]), tensor([0, 1])]

A batch keeps the samples' structure: a list of ``(input, label)`` tuples becomes a list
``[inputs, labels]`` (a list, as in PyTorch), a list of dicts one dict of batches. The
output types are PyTorch's, so a PyTorch training loop gets the dtypes it expects.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping, MutableSequence, Sequence
from typing import Any

import numpy as np

from ..tensor import Tensor, stack

NUMPY_SCALARS = (np.bool_, np.number, np.object_)  # PyTorch's list: not np.str_/np.bytes_


def default_collate(batch: Sequence) -> Any:
    """Stack a list of samples into a batch, keeping the samples' structure (PyTorch's
    rules, decided by the first sample):

    - tensors and NumPy arrays: stacked along a new first dimension, keeping their dtype;
    - NumPy scalars: a tensor of their dtype;
    - Python floats: a **float64** tensor (as PyTorch, not the float32 of ``tensor(1.5)``);
    - Python ints: ``tensor(batch)``: int64, bool for bools, float32 if floats are mixed in;
    - strings and bytes: the list, unchanged;
    - dicts (any Mapping), namedtuples, lists: the same container of collated fields;
      tuples become a list of collated fields (PyTorch's choice, kept for compatibility).
    """
    sample = batch[0]
    if isinstance(sample, Tensor):
        return stack(_same_shapes(batch))
    if isinstance(sample, np.ndarray):
        return _collate_arrays(batch)
    if isinstance(sample, NUMPY_SCALARS):
        return Tensor(np.stack(_same_shapes(batch)))
    if isinstance(sample, float):
        return _numbers(batch, np.float64)
    if isinstance(sample, int):  # bool too: True is an int to Python
        return _numbers(batch, None)
    if isinstance(sample, (str, bytes)):
        return batch
    if isinstance(sample, Mapping):
        return _same_mapping(sample, {key: default_collate([s[key] for s in batch])
                                      for key in sample})
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):  # a namedtuple
        return type(sample)(*(default_collate(list(field)) for field in _fields(batch)))
    if isinstance(sample, Sequence):
        return _same_sequence(sample, [default_collate(list(field)) for field in _fields(batch)])
    raise TypeError(
        f"default_collate: cannot make a batch of {type(sample).__name__} samples; return "
        "tensors, NumPy arrays, numbers, strings, dicts or tuples/lists of them from "
        "__getitem__, or pass a collate_fn"
    )


def default_convert(data: Any) -> Any:
    """One sample, its NumPy arrays and scalars turned into tensors (strings and object
    arrays stay as they are), inside tuples, lists and dicts too; the DataLoader's
    collation when ``batch_size=None`` (no batching). Tuples become lists, as in
    PyTorch."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in "SUaO" else Tensor(data)
    if isinstance(data, NUMPY_SCALARS):
        return Tensor(np.asarray(data))
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, Mapping):
        return _same_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, Sequence):
        return _same_sequence(data, [default_convert(d) for d in data])
    return data


def _same_shapes(batch: Sequence) -> Sequence:
    """``batch`` unchanged if its samples have one shape; else an error naming them."""
    shapes = sorted({tuple(np.shape(s)) for s in batch})
    if len(shapes) > 1:
        raise ValueError(
            f"default_collate: the samples of a batch must have one shape to be stacked, "
            f"got shapes {shapes}; pad them to one length, or pass a collate_fn"
        )
    return batch


def _collate_arrays(batch: Sequence) -> Tensor:
    kind = batch[0].dtype.kind
    if kind in "SUaO":  # strings or Python objects: there is no tensor of those
        raise TypeError(f"default_collate: cannot make a batch of NumPy arrays of dtype "
                        f"{batch[0].dtype}; return numeric arrays, or pass a collate_fn")
    return Tensor(np.stack(_same_shapes(batch)))


def _numbers(batch: Sequence, dtype: Any) -> Tensor:
    """Python numbers as ``tensor(batch, dtype=dtype)`` (``dtype=None``: tensor's own rules,
    ints int64, bools bool, floats mixed in float32), with a clear error for a batch that
    mixes in other things."""
    try:
        if dtype is None and not any(isinstance(s, (float, np.floating)) for s in batch):
            np.array(batch, dtype=np.int64)  # ints beyond int64 must not turn into floats
        return Tensor(list(batch), dtype=dtype)
    except (TypeError, ValueError, OverflowError) as error:
        shown = ", ".join(repr(s) for s in list(batch)[:6]) + (", ..." if len(batch) > 6 else "")
        raise TypeError(f"default_collate: cannot make a tensor of the samples [{shown}] "
                        f"({error}); return numbers of one kind, or pass a collate_fn") from None


def _fields(batch: Sequence) -> list[tuple]:
    """The samples' fields side by side: field i of every sample."""
    lengths = sorted({len(s) for s in batch})
    if len(lengths) > 1:
        raise ValueError(f"default_collate: every sample must have the same number of "
                         f"fields, got samples of lengths {lengths}")
    return list(zip(*batch))


def _same_mapping(sample: Mapping, values: dict) -> Mapping:
    """``values`` in a container of the sample's type (an OrderedDict stays one), as in
    PyTorch; a plain dict when that type cannot be rebuilt."""
    try:
        if isinstance(sample, MutableMapping):
            clone = copy.copy(sample)
            clone.update(values)
            return clone
        return type(sample)(values)
    except TypeError:
        return values


def _same_sequence(sample: Sequence, values: list) -> Sequence:
    """``values`` in a sequence of the sample's type, except that a tuple gives a list
    (PyTorch's rule, kept for backward compatibility); a list when that type cannot be
    rebuilt (a ``range``)."""
    if isinstance(sample, tuple):
        return values
    try:
        if isinstance(sample, MutableSequence):
            clone = copy.copy(sample)
            clone[:] = values
            return clone
        return type(sample)(values)
    except TypeError:
        return values
