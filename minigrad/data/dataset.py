"""Datasets: anything with ``len(dataset)`` and ``dataset[i]``, as in ``torch.utils.data``.

    X, y = make_moons(200)
    dataset = TensorDataset(X, y)      # dataset[3] == (X[3], y[3]) as tensors
    train, val = random_split(dataset, [0.8, 0.2])

A dataset hands out one sample at a time; the ``DataLoader`` groups samples into batches.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

import numpy as np

from ..state import rng_for
from ..tensor import Tensor


class Dataset:
    """The base class: a subclass says how many samples there are and how to get one."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} must define __getitem__(self, index) returning one sample"
        )

    def __len__(self) -> int:
        raise NotImplementedError(
            f"{type(self).__name__} must define __len__(self) returning the number of samples"
        )

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: a subclass defines ``__iter__`` (and no ``dataset[i]``). The
    DataLoader batches the samples in the order the stream gives them."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__ yielding "
                                  "samples")

    def __getitem__(self, index: int) -> Any:
        raise TypeError(f"{type(self).__name__} is an IterableDataset: iterate over it, "
                        "it has no dataset[i]")

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} is an IterableDataset without __len__: its "
                        "length is not known before iterating")


class TensorDataset(Dataset):
    """Sample ``i`` is ``(tensors[0][i], tensors[1][i], ...)``: inputs and targets side by side.

    NumPy arrays are turned into tensors once, here, keeping their dtype (float64 stays
    float64, int64 stays int64).
    """

    def __init__(self, *tensors: Tensor | np.ndarray) -> None:
        if not tensors:
            raise ValueError("TensorDataset: give at least one tensor, e.g. TensorDataset(X, y)")
        self.tensors = tuple(t if isinstance(t, Tensor) else Tensor(np.asarray(t))
                             for t in tensors)
        if any(t.ndim == 0 for t in self.tensors):
            raise ValueError("TensorDataset: every tensor needs a first dimension to index, "
                             "but one is a 0-d scalar")
        sizes = [t.shape[0] for t in self.tensors]
        if len(set(sizes)) > 1:
            listed = ", ".join(f"tensor {i}: {n}" for i, n in enumerate(sizes))
            raise ValueError(
                f"TensorDataset: all tensors must have the same size in the first dimension "
                f"(one row per sample), got {listed}"
            )

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        # an array of indices gives a whole batch of rows: the DataLoader's fast path
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order (no copy is made)."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = [int(i) for i in indices]

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets one after another (``dataset_a + dataset_b``)."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: give at least one dataset")
        self.cumulative_sizes = list(accumulate(len(d) for d in self.datasets))

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"ConcatDataset: index out of range for {len(self)} samples")
        which = bisect.bisect_right(self.cumulative_sizes, index)  # the dataset holding it
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - start]

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: Any = None) -> list[Subset]:
    """Split into non-overlapping random subsets of the given lengths.

    ``lengths`` are counts that add up to ``len(dataset)``, or fractions that add up to 1
    (``[0.8, 0.2]``); as in PyTorch, what fractions leave over is handed out one sample at
    a time from the first subset on. The shuffle draws from ``generator`` (an
    ``mg.Generator``), or from the global generator.
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:  # fractions
        if any(not 0 <= f <= 1 for f in lengths):
            raise ValueError(f"random_split: fractions must lie in [0, 1], got {lengths}")
        counts = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if any(not isinstance(k, (int, np.integer)) or k < 0 for k in lengths):
        raise ValueError(f"random_split: lengths must be counts >= 0 or fractions adding up "
                         f"to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(
            f"random_split: the lengths {lengths} add up to {sum(lengths)}, but the dataset "
            f"has {n} samples; give counts that add up to {n}, or fractions like [0.8, 0.2]"
        )
    order = rng_for(generator, "random_split").permutation(n).tolist()
    return [Subset(dataset, order[end - k:end]) for end, k in zip(accumulate(lengths), lengths)]
