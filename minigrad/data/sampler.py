"""Samplers: the order in which a DataLoader visits a dataset (``torch.utils.data``'s).

A sampler yields dataset indices; a ``BatchSampler`` groups them into lists, one list per
batch. ``DataLoader(shuffle=True)`` is ``RandomSampler``; ``shuffle=False`` is
``SequentialSampler``. Random samplers draw from the global generator, or from their own
``generator=`` (an ``mg.Generator``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..state import rng_for
from ..tensor import Tensor

CHUNK = 1 << 16  # indices drawn at a time with replacement (num_samples may be 10**10)


def _check_positive_int(value: Any, who: str) -> int:
    """``value`` as an int if it is a positive int (not a bool); else the error names
    ``who`` (``"BatchSampler: batch_size"``)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{who} must be a positive int, got {value!r}")
    return int(value)


def _check_flag(value: Any, who: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{who} must be True or False, got {value!r}")
    return value


class Sampler:
    """Base class: a subclass yields indices in ``__iter__`` (and says how many in
    ``__len__``)."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__ yielding indices")


def _array_order(sampler: Any) -> np.ndarray | None:
    """All indices of one pass, drawn now, as an int64 array, for minigrad's own samplers,
    whose ``order()`` gives what their ``__iter__`` yields (the DataLoader then slices
    batches without a Python loop). None for anything else: a user's sampler, or a
    subclass with its own ``__iter__``, is iterated as it is, its indices handed on
    unchanged (they may be strings, tuples, ...)."""
    kind = type(sampler)
    if not hasattr(sampler, "order") or _defined_in(kind, "order") is not _defined_in(
            kind, "__iter__"):
        return None
    return sampler.order()


def _defined_in(kind: type, name: str) -> type | None:
    return next((cls for cls in kind.__mro__ if name in vars(cls)), None)


class SequentialSampler(Sampler):
    """0, 1, 2, ... len(data_source) - 1."""

    def __init__(self, data_source: Sequence) -> None:
        self.data_source = data_source

    def order(self) -> np.ndarray:
        return np.arange(len(self.data_source))

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """The indices in a random order, a new one each pass; with ``replacement=True``,
    ``num_samples`` indices drawn independently."""

    def __init__(self, data_source: Sequence, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be True or False, got "
                            f"{replacement!r}")
        if num_samples is not None and (not isinstance(num_samples, (int, np.integer))
                                        or num_samples <= 0):
            raise ValueError(f"RandomSampler: num_samples must be a positive int, got "
                             f"{num_samples!r}")
        rng_for(generator, "RandomSampler")  # checks it now
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def order(self) -> np.ndarray:
        rng, n = rng_for(self.generator), len(self.data_source)
        if self.replacement:
            return rng.integers(0, n, self.num_samples, dtype=np.int64)
        passes = -(-self.num_samples // n) if n else 0  # num_samples > n: several shuffles
        return np.concatenate([rng.permutation(n) for _ in range(passes)]
                              or [np.zeros(0, np.int64)])[:self.num_samples]

    def chunks(self, size: int = CHUNK) -> Iterator[np.ndarray]:
        """With replacement, the indices of one pass drawn ``size`` at a time, when asked
        for (as PyTorch draws them), so ``num_samples=10**10`` costs nothing up front."""
        rng, n, left = rng_for(self.generator), len(self.data_source), self.num_samples
        while left > 0:
            count = min(size, left)
            left -= count
            yield rng.integers(0, n, count, dtype=np.int64)

    def __iter__(self) -> Iterator[int]:
        if self.replacement:
            return (int(i) for chunk in self.chunks() for i in chunk)
        return iter(self.order().tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, a new one each pass (the indices as given:
    ints, or any keys the dataset takes)."""

    def __init__(self, indices: Sequence[Any], generator: Any = None) -> None:
        rng_for(generator, "SubsetRandomSampler")  # checks it now
        self.indices, self.generator = indices, generator

    def _permutation(self) -> np.ndarray:
        return rng_for(self.generator).permutation(len(self.indices))

    def order(self) -> np.ndarray | None:
        try:
            indices = np.asarray(self.indices)
        except ValueError:  # ragged: tuples of different lengths
            return None
        if len(indices) and (indices.ndim != 1 or indices.dtype.kind not in "iu"):
            return None  # not ints: __iter__ hands them on as they are
        return indices.astype(np.int64)[self._permutation()]

    def __iter__(self) -> Iterator[Any]:
        return (self.indices[i] for i in self._permutation().tolist())

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices into ``weights``, index i drawn with probability
    ``weights[i] / sum(weights)`` (the weights need not sum to 1); with
    ``replacement=False`` each index at most once. A new draw each pass. The usual use:
    a class-balanced loader, weights = 1 / (count of the sample's class)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        num_samples = _check_positive_int(num_samples, "WeightedRandomSampler: num_samples")
        _check_flag(replacement, "WeightedRandomSampler: replacement")
        weights = np.asarray(weights.numpy() if hasattr(weights, "numpy") else weights,
                             dtype=np.float64)
        if weights.ndim != 1 or not len(weights):
            raise ValueError(f"WeightedRandomSampler: weights must be a non-empty sequence of "
                             f"numbers (one per sample), got shape {weights.shape}")
        if not np.isfinite(weights).all() or (weights < 0).any() or weights.sum() <= 0:
            raise ValueError("WeightedRandomSampler: weights must be finite, >= 0 and not all "
                             f"0, got min {weights.min()}, max {weights.max()}")
        if not replacement and num_samples > np.count_nonzero(weights):
            raise ValueError(
                f"WeightedRandomSampler: cannot draw {num_samples} samples without "
                f"replacement from {np.count_nonzero(weights)} with weight > 0; use "
                "replacement=True or a smaller num_samples")
        rng_for(generator, "WeightedRandomSampler")  # checks it now
        self.weights = Tensor(weights)  # float64, as PyTorch's sampler.weights
        self._probabilities = weights / weights.sum()
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def order(self) -> np.ndarray:
        rng = rng_for(self.generator)
        return rng.choice(len(self._probabilities), self.num_samples,
                          replace=self.replacement, p=self._probabilities).astype(np.int64)

    def __iter__(self) -> Iterator[int]:
        return iter(self.order().tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one
    shorter, or left out with ``drop_last=True``)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        self.batch_size = _check_positive_int(batch_size, "BatchSampler: batch_size")
        self.sampler, self.drop_last = sampler, _check_flag(drop_last, "BatchSampler: drop_last")

    def __iter__(self) -> Iterator[list[int]]:
        return (batch if isinstance(batch, list) else batch.tolist() for batch in self.epoch())

    def epoch(self) -> Iterator[np.ndarray | list]:
        """The batches of one pass: arrays of indices for minigrad's own samplers, whose
        order is drawn now (a draw with replacement a chunk of whole batches at a time);
        lists of what any other sampler yields, grouped as it yields them."""
        if _defined_in(type(self.sampler), "__iter__") is RandomSampler \
                and self.sampler.replacement:
            size = self.batch_size * max(1, CHUNK // self.batch_size)
            return (batch for chunk in self.sampler.chunks(size)
                    for batch in self.batches(chunk))
        order = _array_order(self.sampler)
        return self.grouped(iter(self.sampler)) if order is None else self.batches(order)

    def grouped(self, indices: Iterator[Any]) -> Iterator[list]:
        """``indices`` (any objects) in lists of ``batch_size``, as they come."""
        batch: list = []
        for index in indices:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def batches(self, order: np.ndarray) -> Iterator[np.ndarray]:
        """``order`` cut into batches (arrays of indices)."""
        stop = len(order) - len(order) % self.batch_size if self.drop_last else len(order)
        for start in range(0, stop, self.batch_size):
            yield order[start:start + self.batch_size]

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
