"""``minigrad.data``: datasets, batches and small built-in data sets (``torch.utils.data``'s
names).

    from minigrad.data import DataLoader, TensorDataset, make_moons

    X, y = make_moons(200, noise=0.1)
    loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
    for xb, yb in loader:
        ...

``dataset`` (what a sample is), ``sampler`` (the order of the samples), ``dataloader``
(grouping samples into batches), ``collate`` (how samples become a batch) and
``datasets`` (the built-in data, as NumPy arrays).
Also importable as ``minigrad.utils.data``, PyTorch's path.
"""

from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)
from .datasets import (CharTokenizer, load_digits, make_char_corpus, make_char_lm_dataset,
                       make_moons, make_sequence_task, make_spirals, train_test_split)

__all__ = [
    "BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
    "WeightedRandomSampler",
    "CharTokenizer", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "IterableDataset", "StackDataset", "Subset", "TensorDataset",
    "default_collate", "default_convert", "get_worker_info", "load_digits", "make_char_corpus",
    "make_char_lm_dataset", "make_moons", "make_sequence_task", "make_spirals", "random_split",
    "train_test_split",
]
