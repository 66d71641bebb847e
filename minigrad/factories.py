"""Ways to make tensors: from data, filled with a value, ranges, and random ones.

Every random factory draws from the one global generator (``mg.manual_seed``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .state import state
from .tensor import Tensor, _unpack_shape, as_dtype

DEFAULT_DTYPE = np.float32


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None,
           label: str | None = None) -> Tensor:
    """Same as ``Tensor(...)``: Python numbers become float32, NumPy arrays keep their dtype."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, label=label)


def _new(array: np.ndarray, dtype: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(array.astype(as_dtype(dtype) if dtype is not None else array.dtype,
                                  copy=False))
    return t.requires_grad_(True) if requires_grad else t


def zeros(*size, dtype=None, requires_grad=False) -> Tensor:
    return _new(np.zeros(_unpack_shape(size), dtype=DEFAULT_DTYPE), dtype, requires_grad)


def ones(*size, dtype=None, requires_grad=False) -> Tensor:
    return _new(np.ones(_unpack_shape(size), dtype=DEFAULT_DTYPE), dtype, requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False) -> Tensor:
    return _new(np.full(_unpack_shape((size,)), fill_value, dtype=DEFAULT_DTYPE), dtype,
                requires_grad)


def zeros_like(input: Tensor, dtype=None, requires_grad=False) -> Tensor:
    return _new(np.zeros(input.shape, dtype=input.dtype), dtype, requires_grad)


def ones_like(input: Tensor, dtype=None, requires_grad=False) -> Tensor:
    return _new(np.ones(input.shape, dtype=input.dtype), dtype, requires_grad)


def full_like(input: Tensor, fill_value, dtype=None, requires_grad=False) -> Tensor:
    return _new(np.full(input.shape, fill_value, dtype=input.dtype), dtype, requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False) -> Tensor:
    """Like PyTorch: integers only -> int64, any float -> float32."""
    if end is None:
        start, end = 0, start
    integral = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    array = np.arange(start, end, step, dtype=np.int64 if integral else DEFAULT_DTYPE)
    return _new(array, dtype, requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False) -> Tensor:
    return _new(np.linspace(start, end, steps, dtype=DEFAULT_DTYPE), dtype, requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False) -> Tensor:
    return _new(np.eye(n, m, dtype=DEFAULT_DTYPE), dtype, requires_grad)


def _draw_dtype(dtype) -> np.dtype:
    """Draw float64 numbers when float64 is asked for (not float32 ones, cast)."""
    return np.dtype(np.float64) if dtype is not None and as_dtype(dtype) == np.float64 \
        else np.dtype(DEFAULT_DTYPE)


def rand(*size, dtype=None, requires_grad=False) -> Tensor:
    """Uniform on [0, 1)."""
    return _new(state.rng.random(_unpack_shape(size), dtype=_draw_dtype(dtype)), dtype,
                requires_grad)


def randn(*size, dtype=None, requires_grad=False) -> Tensor:
    """Standard normal."""
    return _new(state.rng.standard_normal(_unpack_shape(size), dtype=_draw_dtype(dtype)),
                dtype, requires_grad)


def randint(low, high=None, size=None, dtype=None) -> Tensor:
    """Integers in [low, high); ``randint(high, size)`` as in PyTorch. int64."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    return _new(state.rng.integers(low, high, _unpack_shape((size,)), dtype=np.int64), dtype,
                False)


def randperm(n, dtype=None) -> Tensor:
    return _new(state.rng.permutation(n).astype(np.int64), dtype, False)
