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

from ..tensor import Tensor
from .collate import default_collate, default_convert
from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

_told_about_workers = False  # the num_workers explanation is given once per session
# what __init__ plans the batches from: PyTorch refuses to change them afterwards
FIXED_AFTER_INIT = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                    "persistent_workers")


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` samples.

    - ``shuffle``: a new random order every epoch (drawn when the ``for`` loop starts),
      from ``generator`` if given, else from the global generator.
    - ``sampler``: the order of the indices instead (a ``Sampler`` or any iterable of
      indices); ``batch_sampler``: the batches of indices themselves.
    - ``drop_last``: leave out the last batch when it would be smaller than the others.
    - ``collate_fn``: turns a list of samples into a batch; ``default_collate`` stacks them
      (a batch of ``(x, y)`` samples is a list ``[xs, ys]``, as in PyTorch).
    - ``batch_size=None``: yield the samples one by one, unbatched (NumPy arrays in them
      turned into tensors by ``default_convert``, unless a ``collate_fn`` is given).
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
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
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
        if batch_sampler is not None:
            batch_size = None  # the batch sampler decides (PyTorch's loader.batch_size too)
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
        self.worker_init_fn, self.multiprocessing_context = worker_init_fn, multiprocessing_context
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self._initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        # the batches are planned in __init__: changing these later would be ignored
        if getattr(self, "_initialized", False) and name in FIXED_AFTER_INIT:
            raise ValueError(f"DataLoader: {name} attribute should not be set after the "
                             f"DataLoader is made (as in PyTorch: the batches are planned "
                             f"then); make a new DataLoader with the {name} you want")
        super().__setattr__(name, value)

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
        if type(self.batch_sampler) is BatchSampler:
            # drawn here, at the start of the epoch, not lazily at the first batch
            return map(self._fetch, self.batch_sampler.epoch())
        return (self._fetch(batch) for batch in self.batch_sampler)

    def _stream(self) -> Iterator[Any]:
        """An IterableDataset: its samples, in its order, grouped into batches."""
        if self.batch_size is None:
            yield from map(self.collate_fn or default_convert, self.dataset)
            return
        batch: list = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield (self.collate_fn or default_collate)(batch)
                batch = []
        if batch and not self.drop_last:
            yield (self.collate_fn or default_collate)(batch)

    def _samples(self, indices: Iterator[Any]) -> Iterator[Any]:
        """Unbatched: each sample through ``collate_fn``, or ``default_convert`` (NumPy
        arrays and scalars to tensors, tuples to lists), as PyTorch does."""
        for index in indices:
            yield (self.collate_fn or default_convert)(self.dataset[index])

    def _fetch(self, indices: np.ndarray | Sequence[Any]) -> Any:
        """The batch at ``indices``: the samples (``dataset.__getitems__(indices)`` if the
        dataset has one, as in PyTorch), collated."""
        if self.collate_fn is None:
            rows = _tensor_rows(self.dataset, indices)
            if rows is not None:
                return rows
        if isinstance(indices, np.ndarray):
            indices = indices.tolist()  # Python ints, as PyTorch's samplers give
        getitems = getattr(self.dataset, "__getitems__", None)
        samples = getitems(indices) if callable(getitems) else [self.dataset[i] for i in indices]
        if self.collate_fn is None:
            _check_samples(self.dataset, indices, samples)
        return (self.collate_fn or default_collate)(samples)


def _check_samples(dataset: Any, indices: Sequence[Any], samples: list) -> None:
    """Samples that cannot make a batch, named by their index in the dataset (a
    ``__getitem__`` without ``return`` gives None)."""
    for index, sample in zip(indices, samples):
        if sample is None:
            raise TypeError(
                f"DataLoader: dataset[{index!r}] is None: {type(dataset).__name__}."
                "__getitem__ returned nothing for it (a missing `return`, or a branch that "
                "does not return?). Return the sample: a tensor, an array, a number or a "
                "tuple of them.")


def get_worker_info() -> None:
    """Which worker process this code runs in: None, the main process, always (minigrad
    loads every batch there), so a dataset that splits its stream across workers with
    ``get_worker_info()`` reads all of it, as with PyTorch's ``num_workers=0``."""
    return None


def _explain_workers(num_workers: int) -> None:
    global _told_about_workers
    if not _told_about_workers:
        _told_about_workers = True
        warnings.warn(
            f"DataLoader(num_workers={num_workers}): minigrad loads every batch in the main "
            "process; there are no worker processes. The batches are the same as with "
            "num_workers=0, in the same order (this note is shown once).",
            UserWarning, stacklevel=3)


def _tensor_rows(dataset: Any, indices: np.ndarray | Sequence[Any]) -> list[Tensor] | None:
    """For a TensorDataset (or a Subset of one), the batch as one fancy-index per tensor,
    which gives what collating the samples would (a list of batch tensors), without a
    Python loop; else None. Only for the classes' own ``__getitem__``: a subclass that
    changes the samples gets them collated one by one."""
    kind = type(dataset)
    if getattr(kind, "__getitem__", None) is Subset.__getitem__ \
            and kind.__getitems__ is Subset.__getitems__:
        return _tensor_rows(dataset.dataset, [dataset.indices[i] for i in indices])
    if getattr(kind, "__getitem__", None) is TensorDataset.__getitem__ \
            and not hasattr(dataset, "__getitems__"):
        positions = np.asarray(indices)
        if positions.ndim != 1 or positions.dtype.kind not in "iu":
            return None  # not plain integer indices: the dataset takes them one by one
        return list(dataset[positions.astype(np.int64, copy=False)])
    return None
