"""``minigrad.data``: datasets, batches and small built-in data sets (``torch.utils.data``'s
names).

    from minigrad.data import DataLoader, TensorDataset, make_moons

    X, y = make_moons(200, noise=0.1)
    loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
    for xb, yb in loader:
        ...

``dataset`` (what a sample is), ``dataloader`` (grouping samples into batches) and
``datasets`` (the built-in data, as NumPy arrays).
"""

from .dataloader import DataLoader, default_collate
from .dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split
from .datasets import (CharTokenizer, load_digits, make_char_corpus, make_char_lm_dataset,
                       make_moons, make_sequence_task, make_spirals, train_test_split)

__all__ = [
    "CharTokenizer", "ConcatDataset", "DataLoader", "Dataset", "Subset", "TensorDataset",
    "default_collate", "load_digits", "make_char_corpus", "make_char_lm_dataset", "make_moons",
    "make_sequence_task", "make_spirals", "random_split", "train_test_split",
]
