"""Channel dropout layers: ``Dropout1d/2d/3d`` zero whole channels (feature maps) at
once, the module forms of ``F.dropout1d/2d/3d``. (``Dropout`` itself is in linear.py.)"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


class _DropoutNd(Module):
    function = staticmethod(F.dropout2d)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: p must be between 0 and 1, got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """In training, zero each channel of (N, C, L) with probability p, scale the others by
    1/(1-p); in eval mode, the identity."""

    function = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """In training, zero each channel of (N, C, H, W) with probability p, scale the
    others by 1/(1-p); in eval mode, the identity."""

    function = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """In training, zero each channel of (N, C, D, H, W) with probability p, scale the
    others by 1/(1-p); in eval mode, the identity."""

    function = staticmethod(F.dropout3d)
