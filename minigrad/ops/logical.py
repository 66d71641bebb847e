"""Logical and bitwise Functions: ``~``, ``&``, ``|``, ``^`` and their named forms.

On bool tensors they are logic (``~mask`` flips it); on integer tensors they act on the
bits, as in PyTorch and NumPy. Like comparisons, they give tensors without history.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import result_type
from ..function import Function
from .elementwise import BROADCAST_HINT

BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
LOGICAL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


class BitwiseNot(Function):
    """f(x) = ~x: not on bool tensors, flipped bits on integer tensors"""

    differentiable = False

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind not in "biu":
            raise TypeError(f"~ (bitwise_not): only bool and integer tensors, got {x.dtype}; "
                            "for a float tensor use (x == 0) or 1 - x")
        return np.invert(x)


class Bitwise(Function):
    """f(x, y) = x & y (or |, ^) on bool or integer tensors"""

    differentiable = False
    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y, op="and"):
        dtype = result_type(x, y)  # PyTorch's: uint8 & a 0-d int8 tensor stays uint8
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype.kind not in "biu" or y.dtype.kind not in "biu":
            raise TypeError(f"bitwise_{op}: only bool and integer tensors, got {x.dtype} and "
                            f"{y.dtype}; for logic on other tensors use logical_{op}")
        return BITWISE[op](x, y).astype(dtype, copy=False)

    @staticmethod
    def output_dtype(x, y, op="and"):
        return result_type(x, y)


class LogicalNot(Function):
    """f(x) = (x == 0), a bool tensor"""

    differentiable = False

    @staticmethod
    def forward(ctx, x):
        return np.logical_not(x)

    @staticmethod
    def output_dtype(*inputs, **kwargs):
        return np.dtype(bool)


class Logical(Function):
    """f(x, y) = (x != 0) and (y != 0) (or or, xor), a bool tensor"""

    differentiable = False
    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y, op="and"):
        return LOGICAL[op](x, y)

    @staticmethod
    def output_dtype(*inputs, **kwargs):
        return np.dtype(bool)
