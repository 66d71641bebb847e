"""More of PyTorch's Tensor methods: logical operators, ``narrow``, in-place ``detach_``.

``Tensor`` (tensor.py) inherits them. Each is one line that forwards to a Function (in
``minigrad/ops``) or to a method of tensor.py, as the methods there do; they live here so
that tensor.py stays the core a student reads first.
"""

from __future__ import annotations

from typing import Any

from .ops.logical import Bitwise, BitwiseNot, Logical, LogicalNot


class TensorCompat:
    """Methods that ``Tensor`` inherits (it has the data; this class only forwards)."""

    __slots__ = ()

    # --- logical and bitwise: bool tensors in, bool tensors out (integers: bits) -----------

    def __invert__(self): return BitwiseNot.apply(self)
    def __and__(self, other): return Bitwise.apply(self, other, op="and")
    def __or__(self, other): return Bitwise.apply(self, other, op="or")
    def __xor__(self, other): return Bitwise.apply(self, other, op="xor")
    def __rand__(self, other): return Bitwise.apply(other, self, op="and")
    def __ror__(self, other): return Bitwise.apply(other, self, op="or")
    def __rxor__(self, other): return Bitwise.apply(other, self, op="xor")

    def bitwise_not(self): return BitwiseNot.apply(self)
    def bitwise_and(self, other): return Bitwise.apply(self, other, op="and")
    def bitwise_or(self, other): return Bitwise.apply(self, other, op="or")
    def bitwise_xor(self, other): return Bitwise.apply(self, other, op="xor")
    def logical_not(self): return LogicalNot.apply(self)
    def logical_and(self, other): return Logical.apply(self, other, op="and")
    def logical_or(self, other): return Logical.apply(self, other, op="or")
    def logical_xor(self, other): return Logical.apply(self, other, op="xor")

    # --- movement --------------------------------------------------------------------------

    def narrow(self, dim: int, start: Any, length: int):
        """``length`` entries of dimension ``dim`` from ``start``: ``x[..., start:start+length]``
        on that dimension (a view in PyTorch; here a differentiable slice)."""
        ndim = self.ndim
        if not -ndim <= dim < ndim:
            raise IndexError(f"narrow: dim {dim} is out of range for a tensor of shape "
                             f"{tuple(self.shape)} (dims -{ndim} .. {ndim - 1})")
        dim, size = dim % ndim, self.shape[dim]
        start = int(start)
        start = start + size if start < 0 else start
        if not 0 <= start <= size or length < 0 or start + length > size:
            raise IndexError(f"narrow: start {start} + length {length} exceeds the size "
                             f"{size} of dim {dim} (input of shape {tuple(self.shape)})")
        return self[(slice(None),) * dim + (slice(start, start + length),)]

    # --- autograd --------------------------------------------------------------------------

    def detach_(self):
        """Detach in place: this tensor forgets its history and needs no gradient."""
        self.grad_fn, self._requires_grad = None, False
        return self

    # --- devices: only the CPU (device.py) -------------------------------------------------

    is_xpu = False
    is_mps = False
    is_meta = False
