"""Lazy layers: ``LazyLinear(out_features)`` and friends learn their input size from the
first batch they see (d2l builds every model this way).

A lazy layer keeps its constructor's arguments; its first ``forward`` reads the input
size (the last dimension for ``LazyLinear``, the channels for the others), builds the real
layer with it, takes over that layer's parameters and settings, and becomes that class,
as PyTorch's do (``type(net[0])`` is ``Linear`` after the first batch). Before then it
has no parameters: run one batch through the model before making the optimizer, as
d2l does.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .conv import Conv1d, Conv2d
from .linear import Linear
from .hooks import MODULE_HOOK_DICTS
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d


HOOK_ATTRIBUTES = (*MODULE_HOOK_DICTS, "_hooked", "_is_full_backward_hook")


class _LazyModule(Module):
    cls_to_become: type = Module
    feature_dim = 1  # the input dimension that gives the missing size

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self._lazy_arguments = (args, kwargs)

    def has_uninitialized_params(self) -> bool:
        return True

    def initialize_parameters(self, input: Tensor) -> None:
        """Build the real layer for ``input`` and become it."""
        if input.ndim <= max(self.feature_dim, 0) and self.feature_dim >= 0:
            raise self._error(f"cannot infer the input size from an input of shape "
                              f"{tuple(input.shape)} (dim {self.feature_dim} is the features)")
        args, kwargs = self._lazy_arguments
        real = self.cls_to_become(input.shape[self.feature_dim], *args, **kwargs)
        training = self.training
        hooks = {name: value for name, value in self.__dict__.items()  # registered on the
                 if name in HOOK_ATTRIBUTES}  # lazy layer: they stay (their handles too)
        self.__dict__.clear()
        self.__dict__.update(real.__dict__)
        self.__dict__.update(hooks)
        self.__class__ = self.cls_to_become
        self.train(training)

    def forward(self, input: Tensor, *args: Any, **kwargs: Any) -> Any:
        self.initialize_parameters(input)
        return self.forward(input, *args, **kwargs)  # the real class's forward now

    def extra_repr(self) -> str:
        args, kwargs = self._lazy_arguments
        return ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])


class LazyLinear(_LazyModule):
    """``Linear`` whose ``in_features`` is the last dimension of the first input."""

    cls_to_become = Linear
    feature_dim = -1


class LazyConv1d(_LazyModule):
    """``Conv1d`` whose ``in_channels`` is the channels of the first input (N, C, L)."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyModule):
    """``Conv2d`` whose ``in_channels`` is the channels of the first input (N, C, H, W)."""

    cls_to_become = Conv2d


class LazyBatchNorm1d(_LazyModule):
    """``BatchNorm1d`` whose ``num_features`` is the channels of the first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyModule):
    """``BatchNorm2d`` whose ``num_features`` is the channels of the first input."""

    cls_to_become = BatchNorm2d
