"""Small built-in data sets that need no download, each a function returning NumPy arrays.

    X, y = make_moons(200, noise=0.1)       # X: (200, 2) float32, y: (200,) int64
    loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)

Randomness: with ``seed=None`` (the default) a data set draws from minigrad's global
generator, so ``mg.manual_seed(0)`` first makes it repeatable; with an int ``seed`` it uses
its own ``np.random.default_rng(seed)`` and is the same whatever was drawn before.
"""

from __future__ import annotations

import gzip
import math
from importlib import resources
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..state import state
from ..tensor import Tensor


def _generator(seed: int | None) -> np.random.Generator:
    # None: the global generator, so mg.manual_seed governs it; an int: a private one
    return state.rng if seed is None else np.random.default_rng(seed)


def _check_count(function: str, name: str, value: Any, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{function}: {name} must be an int >= {minimum}, got {value!r}")


# --- two-dimensional classification ----------------------------------------------------


def make_moons(n_samples: int = 200, noise: float = 0.1,
               seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles (scikit-learn's geometry): class 0 is the upper arc of
    the unit circle, class 1 the lower arc shifted to (1, -0.5); then Gaussian noise of
    standard deviation ``noise``. Rows are shuffled. Returns X (n, 2) float32, y (n,) int64.
    """
    _check_count("make_moons", "n_samples", n_samples, minimum=2)
    rng = _generator(seed)
    n_upper = n_samples // 2
    n_lower = n_samples - n_upper
    upper = np.linspace(0, np.pi, n_upper)
    lower = np.linspace(0, np.pi, n_lower)
    X = np.concatenate([
        np.stack([np.cos(upper), np.sin(upper)], axis=1),
        np.stack([1 - np.cos(lower), 0.5 - np.sin(lower)], axis=1),
    ])
    y = np.concatenate([np.zeros(n_upper), np.ones(n_lower)]).astype(np.int64)
    order = rng.permutation(n_samples)
    X, y = X[order], y[order]
    X = X + rng.normal(scale=noise, size=X.shape)
    return X.astype(np.float32), y


def make_spirals(n_samples: int = 300, n_classes: int = 3, noise: float = 0.2,
                 seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """CS231n's spirals: ``n_classes`` arms winding out from the origin, radius 0 to 1, each
    arm turning 4 radians; ``noise`` jitters the angle. Not linearly separable: the classic
    case for a hidden layer. Rows are shuffled. Returns X (n, 2) float32, y (n,) int64.
    """
    _check_count("make_spirals", "n_samples", n_samples)
    _check_count("make_spirals", "n_classes", n_classes)
    rng = _generator(seed)
    points, labels = [], []
    for k in range(n_classes):
        n = n_samples // n_classes + (k < n_samples % n_classes)  # the remainder goes first
        radius = np.linspace(0.0, 1.0, n)
        angle = np.linspace(4.0 * k, 4.0 * (k + 1), n) + rng.standard_normal(n) * noise
        points.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1))
        labels.append(np.full(n, k, dtype=np.int64))
    order = rng.permutation(n_samples)
    return np.concatenate(points)[order].astype(np.float32), np.concatenate(labels)[order]


# --- sequences, for attention ----------------------------------------------------------

SEQUENCE_TASKS = ("reverse", "sort", "copy")


def make_sequence_task(n_samples: int = 1000, seq_len: int = 8, vocab_size: int = 10,
                       task: str = "reverse",
                       seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Random token sequences and a target sequence of the same length, for attention.

    Inputs are uniform integers in ``[0, vocab_size)``. The target at position ``i`` is:

    - ``"reverse"``: ``inputs[seq_len - 1 - i]`` (each position must look at one other);
    - ``"sort"``: the inputs in ascending order (each position must compare all tokens);
    - ``"copy"``: ``inputs[i]`` (a sanity check: no looking elsewhere is needed).

    Returns inputs and targets, both (n_samples, seq_len) int64.
    """
    _check_count("make_sequence_task", "n_samples", n_samples)
    _check_count("make_sequence_task", "seq_len", seq_len)
    _check_count("make_sequence_task", "vocab_size", vocab_size, minimum=2)
    if task not in SEQUENCE_TASKS:
        raise ValueError(f"make_sequence_task: unknown task {task!r}; expected one of "
                         f"{', '.join(map(repr, SEQUENCE_TASKS))}")
    inputs = _generator(seed).integers(0, vocab_size, (n_samples, seq_len), dtype=np.int64)
    if task == "reverse":
        targets = inputs[:, ::-1].copy()
    elif task == "sort":
        targets = np.sort(inputs, axis=1)
    else:
        targets = inputs.copy()
    return inputs, targets


# --- characters, for a language model --------------------------------------------------

_ADJECTIVES = ("big", "small", "red", "old")
_ANIMALS = ("cat", "dog", "bird", "fox", "frog")
_VERBS = ("sat", "slept", "hid", "stood")
_PREPOSITIONS = ("on", "under", "near", "by")
_PLACES = ("mat", "rug", "log", "box", "bed")


def make_char_corpus(n_sentences: int = 500, seed: int | None = None) -> str:
    """Sentences from a tiny grammar, one per line: ``the [adjective] animal verb
    preposition the place.`` ("the small cat sat on the mat."). About 20 distinct
    characters and 20 words, so a small model can learn the spelling and word order.
    """
    _check_count("make_char_corpus", "n_sentences", n_sentences)
    rng = _generator(seed)

    def pick(words: tuple[str, ...]) -> str:
        return words[rng.integers(len(words))]

    lines = []
    for _ in range(n_sentences):
        adjective = pick(_ADJECTIVES) + " " if rng.random() < 0.5 else ""
        lines.append(f"the {adjective}{pick(_ANIMALS)} {pick(_VERBS)} "
                     f"{pick(_PREPOSITIONS)} the {pick(_PLACES)}.")
    return "\n".join(lines) + "\n"


class CharTokenizer:
    """Characters to integer ids and back. The vocabulary is the sorted set of characters
    of ``text``, so two tokenizers built from the same text agree.

        tokenizer = CharTokenizer(text)
        ids = tokenizer.encode("the cat")       # int64 array
        tokenizer.decode(ids)                   # "the cat"
    """

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text:
            raise ValueError(f"CharTokenizer: give a non-empty string to build the vocabulary "
                             f"from, got {type(text).__name__} {text!r:.40}")
        self.itos = sorted(set(text))  # id -> character
        self.stoi = {ch: i for i, ch in enumerate(self.itos)}  # character -> id

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> np.ndarray:
        unknown = sorted(set(text) - self.stoi.keys())
        if unknown:
            raise ValueError(
                f"CharTokenizer.encode: the characters {unknown} are not in the vocabulary "
                f"{''.join(self.itos)!r}; build the tokenizer from text that contains them"
            )
        return np.array([self.stoi[ch] for ch in text], dtype=np.int64)

    def decode(self, ids: Any) -> str:
        """Ids (a list, a NumPy array or a tensor, of any shape) back to a string."""
        ids = np.asarray(ids.numpy() if isinstance(ids, Tensor) else ids).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"CharTokenizer.decode: ids must lie in [0, {self.vocab_size}), "
                             f"got values from {ids.min()} to {ids.max()}")
        return "".join(self.itos[i] for i in ids.tolist())

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size}, chars={''.join(self.itos)!r})"


def make_char_lm_dataset(text: str, block_size: int,
                         tokenizer: CharTokenizer | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Next-character prediction: every run of ``block_size`` characters in ``text`` is an
    input, and the same run shifted one character on is its target (``y[i, t]`` is the
    character after ``x[i, :t + 1]``). Without a ``tokenizer``, ``CharTokenizer(text)`` is
    used: build the same one to decode. Returns x, y, both (len(text) - block_size,
    block_size) int64.
    """
    _check_count("make_char_lm_dataset", "block_size", block_size)
    ids = (tokenizer or CharTokenizer(text)).encode(text)
    if len(ids) <= block_size:
        raise ValueError(f"make_char_lm_dataset: the text has {len(ids)} characters, too few "
                         f"for block_size={block_size}; give a longer text or a smaller block")
    windows = np.lib.stride_tricks.sliding_window_view(ids, block_size + 1)
    return windows[:, :-1].copy(), windows[:, 1:].copy()


# --- handwritten digits ----------------------------------------------------------------


def load_digits(return_X_y: bool = True, images: bool = False) -> Any:
    """The 8x8 handwritten digits (1797 images, pixels 0..16, 10 classes), as scikit-learn's
    ``load_digits``; shipped in the package (see DIGITS_LICENSE.md), read without pickle.

    Returns X float32, (1797, 64) or with ``images=True`` (1797, 8, 8), and y int64 in 0..9.
    With ``return_X_y=False``: a namespace with ``data`` (1797, 64), ``images``
    (1797, 8, 8), ``target`` and ``target_names``.
    """
    # each line of the file is one image's 64 pixels, row by row, then its label
    with (resources.files(__package__) / "digits.csv.gz").open("rb") as raw, \
            gzip.open(raw, "rt") as lines:
        table = np.loadtxt(lines, delimiter=",", dtype=np.int64)
    data, target = table[:, :64].astype(np.float32), table[:, 64]
    if not return_X_y:
        return SimpleNamespace(data=data, images=data.reshape(-1, 8, 8), target=target,
                               target_names=np.arange(10))
    return (data.reshape(-1, 8, 8) if images else data), target


# --- splitting -------------------------------------------------------------------------


def train_test_split(*arrays: Any, test_size: float | int = 0.25, seed: int | None = None,
                     shuffle: bool = True) -> list:
    """Split arrays (same first size) into train and test rows, as scikit-learn does:
    ``X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2)``.

    ``test_size`` is a fraction of the rows (rounded up) or a count. Without ``shuffle``
    the last rows are the test set.
    """
    if not arrays:
        raise ValueError("train_test_split: give at least one array, e.g. train_test_split(X, y)")
    arrays = tuple(a if isinstance(a, (np.ndarray, Tensor)) else np.asarray(a) for a in arrays)
    sizes = [len(a) for a in arrays]
    if len(set(sizes)) > 1:
        raise ValueError(f"train_test_split: all arrays must have the same number of rows, "
                         f"got {sizes}")
    n = sizes[0]
    if isinstance(test_size, (float, np.floating)) and 0 < test_size < 1:
        n_test = math.ceil(test_size * n)
    elif isinstance(test_size, (int, np.integer)) and not isinstance(test_size, bool) \
            and 0 < test_size < n:
        n_test = int(test_size)
    else:
        raise ValueError(f"train_test_split: test_size must be a fraction in (0, 1) or a count "
                         f"in [1, {n - 1}] for {n} rows, got {test_size!r}")
    if n_test >= n:
        raise ValueError(f"train_test_split: test_size={test_size} leaves no training rows "
                         f"out of {n}")
    order = _generator(seed).permutation(n) if shuffle else np.arange(n)
    train, test = order[:n - n_test], order[n - n_test:]
    return [part for a in arrays for part in (a[train], a[test])]
