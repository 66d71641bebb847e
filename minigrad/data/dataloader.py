"""DataLoader: a dataset's samples grouped into batches, in order or shuffled.

    loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
    for epoch in range(10):
        for xb, yb in loader:      # xb: (32, 2) float32 tensor, yb: (32,) int64 tensor
            ...

Each ``for`` over the loader is one epoch. With ``shuffle=True`` every epoch draws a new
order from the global generator, so ``mg.manual_seed`` makes training repeatable.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..tensor import Tensor, stack
from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

_told_about_workers = False  # the num_workers explanation is given once per session


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` samples.

    - ``shuffle``: a new random order every epoch (drawn when the ``for`` loop starts),
      from ``generator`` if given, else from the global generator.
    - ``sampler``: the order of the indices instead (a ``Sampler`` or any iterable of
      indices); ``batch_sampler``: the batches of indices themselves.
    - ``drop_last``: leave out the last batch when it would be smaller than the others.
    - ``collate_fn``: turns a list of samples into a batch; ``default_collate`` stacks them.
    - ``batch_size=None``: yield the samples one by one, unbatched.
    - ``num_workers``, ``pin_memory``, ``timeout``, ``worker_init_fn``, ... are accepted
      so that PyTorch code runs; batches are always loaded in the main process (minigrad
      has no worker processes, and no GPU memory to pin for).
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Sequence[int] | None = None,
                 batch_sampler: Sampler | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context: Any = None,
                 generator: Any = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "") -> None:
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle, "
                             f"sampler and batch_sampler (the dataset decides the order), got "
                             f"shuffle={shuffle}, sampler={sampler}, "
                             f"batch_sampler={batch_sampler}")
        if not self._iterable and not (hasattr(dataset, "__len__")
                                       and hasattr(dataset, "__getitem__")):
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
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle "
                             "(the sampler decides the order); leave shuffle out")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("DataLoader: batch_sampler option is mutually exclusive with "
                             "batch_size, shuffle, sampler, and drop_last (it decides them)")
        if isinstance(num_workers, bool) or not isinstance(num_workers, (int, np.integer)) \
                or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers must be an int >= 0, got "
                             f"{num_workers!r}")
        if num_workers > 0:
            _explain_workers(num_workers)
        if self._iterable:
            sampler = batch_sampler = None
        elif sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        if batch_sampler is None and batch_size is not None and not self._iterable:
            batch_sampler = BatchSampler(sampler, int(batch_size), bool(drop_last))
        self.dataset = dataset
        self.batch_size = None if batch_size is None else int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.collate_fn = collate_fn
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.num_workers, self.pin_memory, self.timeout = int(num_workers), pin_memory, timeout
        self.worker_init_fn = worker_init_fn

    def __len__(self) -> int:
        """The number of batches in one epoch."""
        if self._iterable:  # as PyTorch: from the dataset's len, if it has one
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.sampler) if self.batch_sampler is None else len(self.batch_sampler)

    def __iter__(self) -> Iterator[Any]:
        if self._iterable:
            return self._stream()
        if self.batch_sampler is None:  # batch_size=None: samples one by one
            return self._samples(iter(self.sampler))
        if type(self.batch_sampler) is BatchSampler and isinstance(self.batch_sampler.sampler,
                                                                   Sampler):
            # drawn here, at the start of the epoch, not lazily at the first batch
            return map(self._fetch, self.batch_sampler.epoch())
        return (self._fetch(batch) for batch in self.batch_sampler)

    def _stream(self) -> Iterator[Any]:
        """An IterableDataset: its samples, in its order, grouped into batches."""
        if self.batch_size is None:
            yield from (s if self.collate_fn is None else self.collate_fn(s)
                        for s in self.dataset)
            return
        batch: list = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield (self.collate_fn or default_collate)(batch)
                batch = []
        if batch and not self.drop_last:
            yield (self.collate_fn or default_collate)(batch)

    def _samples(self, indices: Iterator[int]) -> Iterator[Any]:
        for i in indices:
            sample = self.dataset[int(i)]
            yield sample if self.collate_fn is None else self.collate_fn(sample)

    def _fetch(self, indices: Sequence[int]) -> Any:
        if self.collate_fn is None:
            rows = _tensor_rows(self.dataset, indices)
            if rows is not None:
                return rows
        samples = [self.dataset[int(i)] for i in indices]
        if self.collate_fn is None:
            _check_samples(self.dataset, indices, samples)
        return (self.collate_fn or default_collate)(samples)


def _check_samples(dataset: Any, indices: Sequence[int], samples: list) -> None:
    """Samples that cannot make a batch, named by their index in the dataset (a
    ``__getitem__`` without ``return`` gives None)."""
    for index, sample in zip(indices, samples):
        if sample is None:
            raise TypeError(
                f"DataLoader: dataset[{int(index)}] is None: {type(dataset).__name__}."
                "__getitem__ returned nothing for it (a missing `return`, or a branch that "
                "does not return?). Return the sample: a tensor, an array, a number or a "
                "tuple of them.")


def _explain_workers(num_workers: int) -> None:
    global _told_about_workers
    if not _told_about_workers:
        _told_about_workers = True
        warnings.warn(
            f"DataLoader(num_workers={num_workers}): minigrad loads every batch in the main "
            "process; there are no worker processes. The batches are the same as with "
            "num_workers=0, in the same order (this note is shown once).",
            UserWarning, stacklevel=3)


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
