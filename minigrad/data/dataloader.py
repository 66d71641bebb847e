"""DataLoader: a dataset's samples grouped into batches, in order or shuffled.

    loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
    for epoch in range(10):
        for xb, yb in loader:      # xb: (32, 2) float32 tensor, yb: (32,) int64 tensor
            ...

Each ``for`` over the loader is one epoch. With ``shuffle=True`` every epoch draws a new
order from the global generator, so ``mg.manual_seed`` makes training repeatable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..state import state
from ..tensor import Tensor, stack
from .dataset import Subset, TensorDataset


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` samples.

    - ``shuffle``: a new random order every epoch (drawn when the ``for`` loop starts).
    - ``drop_last``: leave out the last batch when it would be smaller than the others.
    - ``collate_fn``: turns a list of samples into a batch; ``default_collate`` stacks them.
    - ``batch_size=None``: yield the samples one by one, unbatched.
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool = False,
                 drop_last: bool = False,
                 collate_fn: Callable[[list], Any] | None = None) -> None:
        if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
            raise TypeError(
                f"DataLoader: the dataset must support len(dataset) and dataset[i], but a "
                f"{type(dataset).__name__} does not; wrap arrays in TensorDataset(X, y) or "
                "subclass Dataset"
            )
        if batch_size is not None and (isinstance(batch_size, bool)
                                       or not isinstance(batch_size, (int, np.integer))):
            raise TypeError(f"DataLoader: batch_size must be an int (or None for single "
                            f"samples), got {type(batch_size).__name__} {batch_size!r}")
        if batch_size is not None and batch_size <= 0:
            raise ValueError(f"DataLoader: batch_size must be at least 1, got {batch_size}")
        if batch_size is None and drop_last:
            raise ValueError("DataLoader: drop_last=True needs a batch_size; batch_size=None "
                             "yields single samples, so there is no last batch to drop")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be a function taking a list of "
                            f"samples, got {type(collate_fn).__name__}")
        self.dataset = dataset
        self.batch_size = None if batch_size is None else int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        """The number of batches in one epoch."""
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        # drawn here, at the start of the epoch, not lazily at the first batch
        order = state.rng.permutation(n) if self.shuffle else np.arange(n)
        return self._batches(order)

    def _batches(self, order: np.ndarray) -> Iterator[Any]:
        if self.batch_size is None:
            for i in order:
                sample = self.dataset[int(i)]
                yield sample if self.collate_fn is None else self.collate_fn(sample)
            return
        stop = len(self) * self.batch_size if self.drop_last else len(order)
        for start in range(0, stop, self.batch_size):
            yield self._fetch(order[start:start + self.batch_size])

    def _fetch(self, indices: np.ndarray) -> Any:
        if self.collate_fn is None:
            rows = _tensor_rows(self.dataset, indices)
            if rows is not None:
                return rows
        samples = [self.dataset[int(i)] for i in indices]
        return (self.collate_fn or default_collate)(samples)


def _tensor_rows(dataset: Any, indices: Sequence[int]) -> tuple[Tensor, ...] | None:
    """For a TensorDataset (or a Subset of one), the batch as one fancy-index per tensor,
    which gives what stacking the samples would, without a Python loop; else None."""
    if isinstance(dataset, Subset):
        return _tensor_rows(dataset.dataset, [dataset.indices[i] for i in indices])
    if isinstance(dataset, TensorDataset):
        return dataset[np.asarray(indices, dtype=np.int64)]
    return None


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch, keeping the samples' structure.

    Tensors and NumPy arrays are stacked along a new first dimension (keeping their dtype);
    Python ints become an int64 tensor, floats a float32 one (minigrad's default float;
    PyTorch would give float64), bools a bool one; tuples, lists and dicts are collated
    field by field; strings stay a list.
    """
    sample = batch[0]
    if isinstance(sample, (Tensor, np.ndarray, np.generic)):
        shapes = sorted({tuple(np.shape(s)) for s in batch})
        if len(shapes) > 1:
            raise ValueError(
                f"default_collate: the samples of a batch must have one shape to be stacked, "
                f"got shapes {shapes}; pad them to one length, or pass a collate_fn"
            )
        return stack(batch) if isinstance(sample, Tensor) else Tensor(np.stack(batch))
    if isinstance(sample, bool):  # before int: True is an int to Python
        return Tensor(np.array(batch, dtype=np.bool_))
    if isinstance(sample, int):
        return Tensor(np.array(batch, dtype=np.int64))
    if isinstance(sample, float):
        return Tensor(np.array(batch, dtype=np.float32))
    if isinstance(sample, str):
        return list(batch)
    if isinstance(sample, dict):
        return {key: default_collate([s[key] for s in batch]) for key in sample}
    if isinstance(sample, (tuple, list)):
        lengths = sorted({len(s) for s in batch})
        if len(lengths) > 1:
            raise ValueError(f"default_collate: every sample must have the same number of "
                             f"fields, got samples of lengths {lengths}")
        columns = [default_collate(list(column)) for column in zip(*batch)]
        if hasattr(sample, "_fields"):  # a namedtuple keeps its field names
            return type(sample)(*columns)
        return tuple(columns) if isinstance(sample, tuple) else columns
    raise TypeError(
        f"default_collate: cannot make a batch of {type(sample).__name__} samples; return "
        "tensors, NumPy arrays, numbers or tuples of them from __getitem__, or pass a "
        "collate_fn"
    )
