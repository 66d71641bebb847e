"""Datasets: anything with ``len(dataset)`` and ``dataset[i]``, as in ``torch.utils.data``.

    X, y = make_moons(200)
    dataset = TensorDataset(X, y)      # dataset[3] == (X[3], y[3]) as tensors
    train, val = random_split(dataset, [0.8, 0.2])

A dataset hands out one sample at a time; the ``DataLoader`` groups samples into batches.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Sequence
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

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several streams one after another (``stream_a + stream_b``), read as they go."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for dataset in self._streams():
            yield from dataset

    def __len__(self) -> int:
        return sum(len(dataset) for dataset in self._streams())

    def _streams(self) -> Iterator[IterableDataset]:
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise TypeError(f"ChainDataset: chains IterableDatasets (streams), got a "
                                f"{type(dataset).__name__}; use ConcatDataset for datasets "
                                "with dataset[i]")
            yield dataset


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


class StackDataset(Dataset):
    """Datasets of one length side by side: sample ``i`` is ``(a[i], b[i], ...)`` for
    ``StackDataset(a, b)``, ``{"image": a[i], "label": b[i]}`` for
    ``StackDataset(image=a, label=b)``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("StackDataset: give the datasets either positionally (samples are "
                             "tuples) or by name (samples are dicts), not both")
        if not args and not kwargs:
            raise ValueError("StackDataset: give at least one dataset")
        self.datasets = args or kwargs
        sizes = [len(d) for d in (args or kwargs.values())]
        if len(set(sizes)) > 1:
            names = range(len(args)) if args else kwargs
            listed = ", ".join(f"{name}: {n}" for name, n in zip(names, sizes))
            raise ValueError(f"StackDataset: the datasets must have one length, got {listed}")
        self._length = sizes[0]

    def __getitem__(self, index: Any) -> tuple | dict:
        if isinstance(self.datasets, dict):
            return {name: dataset[index] for name, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __len__(self) -> int:
        return self._length


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order (no copy is made).
    ``subset[[i, j]]`` gives ``dataset[[indices[i], indices[j]]]``, as in PyTorch."""

    def __init__(self, dataset: Dataset, indices: Sequence[Any]) -> None:
        self.dataset = dataset
        # kept as given (they may be keys of a dict-like dataset); a tensor as a list of ints
        self.indices = indices.tolist() if isinstance(indices, Tensor) else indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list) -> list:
        """The samples at ``indices`` (what the DataLoader asks for, one batch at a time);
        through the dataset's own ``__getitems__`` if it has one."""
        if type(self).__getitem__ is not Subset.__getitem__:  # a subclass's own decides
            return [self[i] for i in indices]
        positions = [self.indices[i] for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(positions)
        return [self.dataset[i] for i in positions]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets one after another (``dataset_a + dataset_b``)."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: give at least one dataset")
        for dataset in self.datasets:
            if isinstance(dataset, IterableDataset):
                raise TypeError(f"ConcatDataset: {type(dataset).__name__} is an "
                                "IterableDataset (a stream without dataset[i]); chain streams "
                                "with ChainDataset([a, b]) or a + b")
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
