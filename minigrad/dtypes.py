"""dtypes: their names, the default float, and PyTorch's type promotion.

A minigrad dtype is a NumPy dtype (``mg.float32 == np.dtype("float32")``). What differs
from NumPy is which dtype a mixed operation gives. PyTorch's rule, which minigrad follows:

1. the result's *category* is the highest among the operands: bool < integer < floating;
2. among the operands of that category, tensors with dimensions decide before 0-d
   tensors, and those before Python numbers;
3. Python numbers alone give their category's default: ``int64``, or the default float
   dtype (``float32``) for floats.

So ``float32 * int64`` tensors give float32 (NumPy: float64), an int64 tensor times 0.5
gives float32 (NumPy: float64), and a float32 tensor of shape (3,) plus a 0-d float64
tensor stays float32 (NumPy: float64). NumPy scalars (``np.float64(2.0)``) count as
Python numbers, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .state import state

DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_,
          "float": np.float32, "double": np.float64, "long": np.int64,
          "int32": np.int32, "int": np.int32, "float16": np.float16, "half": np.float16,
          "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "short": np.int16}


class UnsupportedDtype:
    """A PyTorch dtype NumPy lacks (``mg.bfloat16``). Programs name it (a table of dtypes,
    a choice made only on a GPU), so the name exists; making a tensor of it says why not."""

    is_floating_point, is_complex = True, False

    def __init__(self, name: str, advice: str) -> None:
        self.name, self.advice = name, advice

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def error(self) -> TypeError:
        return TypeError(f"torch.{self.name} is not supported by minigrad: {self.advice}")


bfloat16 = UnsupportedDtype("bfloat16", "NumPy has no bfloat16; use float32 (or float16)")


def as_dtype(dtype: Any) -> np.dtype:
    """``"float32"``, ``np.float64``, ``mg.int64``, ``float``, ``bool`` ... -> a NumPy dtype."""
    if isinstance(dtype, UnsupportedDtype) or dtype in ("bfloat16", "torch.bfloat16"):
        raise bfloat16.error() if not isinstance(dtype, UnsupportedDtype) else dtype.error()
    if isinstance(dtype, str):
        name = dtype[len("torch."):] if dtype.startswith("torch.") else dtype
        if name in DTYPES:
            return np.dtype(DTYPES[name])
    if dtype is float:  # as PyTorch (and NumPy): Python's float is float64, whatever
        return np.dtype(np.float64)  # the default dtype (which mg.float, float32, names)
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"unknown dtype {dtype!r}; use one of {', '.join(sorted(DTYPES))} or a NumPy dtype"
        ) from None


def is_floating(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def get_default_dtype() -> np.dtype:
    """The dtype of Python floats made into tensors, and of float factories (float32)."""
    return state.default_dtype


def set_default_dtype(dtype: Any) -> None:
    """``mg.set_default_dtype(mg.float64)``: Python floats and float factories give it."""
    dtype = as_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"set_default_dtype: only floating dtypes can be the default, got "
                        f"{dtype}")
    state.default_dtype = dtype


CATEGORIES = {"b": 0, "i": 1, "u": 1, "f": 2}  # bool < integer < floating (< complex)


def _category(dtype: np.dtype) -> int:
    return CATEGORIES.get(dtype.kind, 3)


def result_type(*operands: Any) -> np.dtype:
    """The dtype PyTorch gives an operation on ``operands`` (Tensors, arrays or numbers)."""
    best, dtypes = None, []
    for operand in operands:
        if isinstance(operand, (bool, np.bool_)):
            rank, dtype = (0, 0), np.dtype(np.bool_)
        elif isinstance(operand, (int, np.integer)):
            rank, dtype = (1, 0), np.dtype(np.int64)
        elif isinstance(operand, (float, np.floating)):
            rank, dtype = (2, 0), state.default_dtype
        else:
            dtype = operand.dtype
            rank = (_category(dtype), 2 if len(operand.shape) else 1)
        if best is None or rank > best:
            best, dtypes = rank, [dtype]
        elif rank == best:
            dtypes.append(dtype)
    return np.result_type(*dtypes)
