"""Padding layers (``ZeroPad2d``, ``ConstantPad2d``, ``ReflectionPad2d``, ...): the
module forms of ``F.pad``, with PyTorch's padding order (left, right, top, bottom)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import functional as F
from .module import Module


class _PadNd(Module):
    mode, dims = "constant", 2

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        self.padding = (padding,) * (2 * self.dims) if isinstance(padding, int) \
            else tuple(padding)
        if len(self.padding) != 2 * self.dims:
            raise ValueError(f"{type(self).__name__}: padding must be an int or "
                             f"{2 * self.dims} ints, got {padding!r}")
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode, self.value)

    def extra_repr(self) -> str:  # PyTorch's: the value only where it can be chosen
        if type(self).__init__ is _PadNd.__init__:  # ConstantPad1d/2d
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class ConstantPad1d(_PadNd):
    """(left, right) of ``value`` around the last dim."""

    dims = 1


class ConstantPad2d(_PadNd):
    """(left, right, top, bottom) of ``value`` around the last two dims."""


class ZeroPad1d(ConstantPad1d):
    """(left, right) zeros around the last dim."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ZeroPad2d(ConstantPad2d):
    """(left, right, top, bottom) zeros around the last two dims."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ReflectionPad1d(ZeroPad1d):
    """The last dim mirrored at its ends (without repeating the edge)."""

    mode = "reflect"


class ReflectionPad2d(ZeroPad2d):
    """The last two dims mirrored at their edges (without repeating the edge)."""

    mode = "reflect"


class ReplicationPad1d(ZeroPad1d):
    """The edge values of the last dim repeated."""

    mode = "replicate"


class ReplicationPad2d(ZeroPad2d):
    """The edge values of the last two dims repeated."""

    mode = "replicate"
