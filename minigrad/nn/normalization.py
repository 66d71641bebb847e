"""Normalization layers: LayerNorm, BatchNorm1d, BatchNorm2d."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..device import check_device
from ..lazy_mode import realize_readers
from ..tensor import Tensor
from . import functional as F
from .module import Module, check_sizes, new_parameter


class LayerNorm(Module):
    """Normalise each sample over its last ``len(normalized_shape)`` dims, then scale by
    ``weight`` (ones) and shift by ``bias`` (zeros)."""

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        check_device(device, "LayerNorm")
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape, self.eps = tuple(shape), eps
        self.elementwise_affine = elementwise_affine
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = new_parameter(*self.normalized_shape, dtype=dtype)
            self.weight._data[...] = 1.0
            if bias:
                self.bias = new_parameter(*self.normalized_shape, dtype=dtype)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_type(input, self.weight)
        size = len(self.normalized_shape)
        if tuple(input.shape[input.ndim - size:]) != self.normalized_shape \
                or input.ndim < size:
            raise self._error(
                f"expected input whose last dimensions are {self.normalized_shape} "
                f"(normalized_shape), got shape {tuple(input.shape)}"
            )
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


def _affine(module: Module, features: int, bias: bool, dtype: Any) -> None:
    """``weight`` (ones) and, if ``bias``, ``bias`` (zeros), one per channel."""
    module.weight = new_parameter(features, dtype=dtype)
    module.weight._data[...] = 1.0
    module.bias = new_parameter(features, dtype=dtype) if bias else None


class _BatchNorm(Module):
    """Normalise each channel with the batch's mean and variance in training, and with
    running averages of them (buffers ``running_mean``, ``running_var``) in eval mode."""

    expected_ranks: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        check_device(device, type(self).__name__)
        (num_features,) = check_sizes(type(self).__name__, num_features=num_features)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = self.bias = None
        if affine:
            _affine(self, num_features, bias, dtype)
        if track_running_stats:
            float_type = np.float32 if dtype is None else dtype
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, float_type)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, float_type)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            for buffer in (self.running_mean, self.running_var, self.num_batches_tracked):
                realize_readers(buffer)  # lazy mode: a deferred read of it runs first
            self.running_mean._data[...] = 0.0
            self.running_var._data[...] = 1.0
            self.num_batches_tracked._data[...] = 0

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_type(input, self.weight if self.affine else self.running_mean)
        if input.ndim not in self.expected_ranks:
            ranks = " or ".join(f"{r}-D" for r in self.expected_ranks)
            raise self._error(f"expected a {ranks} input, got shape {tuple(input.shape)}")
        if input.shape[1] != self.num_features:
            raise self._error(
                f"expected {self.num_features} channels in dim 1 (num_features="
                f"{self.num_features}), got shape {tuple(input.shape)}"
            )
        use_batch_stats = self.training or not self.track_running_stats
        momentum = self.momentum
        if self.training and self.track_running_stats:
            realize_readers(self.num_batches_tracked)  # lazy mode: a deferred read first
            self.num_batches_tracked._data += 1
            if momentum is None:  # a plain average of all batches so far
                momentum = 1.0 / float(self.num_batches_tracked._data)
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight,
                            self.bias, use_batch_stats, momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs."""

    expected_ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs."""

    expected_ranks = (4,)


# --- GroupNorm (issue 11) --------------------------------------------------------------------


class GroupNorm(Module):
    """Normalise each sample over groups of ``num_channels / num_groups`` channels (and
    all positions), independent of the batch; then scale by ``weight`` and shift by
    ``bias`` (one per channel, ones and zeros at first)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        check_device(device, "GroupNorm")
        if num_groups < 1 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels={num_channels} must split into "
                             f"num_groups={num_groups} equal groups")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        self.weight = self.bias = None
        if affine:
            _affine(self, num_channels, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_type(input, self.weight)
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise self._error(f"expected an input (N, {self.num_channels}, ...) "
                              f"(num_channels={self.num_channels} in dim 1), got shape "
                              f"{tuple(input.shape)}")
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class _InstanceNorm(Module):
    """Normalise each channel of each sample over its positions; with ``affine=True``,
    then scale and shift per channel (PyTorch's default is ``affine=False``)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        check_device(device, type(self).__name__)
        if track_running_stats:
            raise NotImplementedError(f"{type(self).__name__}: track_running_stats=True is "
                                      "not supported by minigrad (each input is normalised "
                                      "with its own statistics)")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = self.bias = None
        if affine:
            _affine(self, num_features, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        unbatched = input.ndim == self.dims + 1
        x = input.unsqueeze(0) if unbatched else input
        if x.ndim != self.dims + 2 or x.shape[1] != self.num_features:
            raise self._error(f"expected an input (N, {self.num_features}, ...) with "
                              f"{self.dims} position dims, got shape {tuple(input.shape)}")
        output = F.instance_norm(x, weight=self.weight, bias=self.bias, eps=self.eps)
        return output[0] if unbatched else output

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L)."""

    dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) (style transfer, GAN generators)."""

    dims = 2


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) over the last dims, times ``weight`` (ones at first):
    LayerNorm without the mean, as in Llama-style models."""

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) \
            else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = None
        if elementwise_affine:
            self.weight = new_parameter(*self.normalized_shape, dtype=dtype)
            self.weight._data[...] = 1.0

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
