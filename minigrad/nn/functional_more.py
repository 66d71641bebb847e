"""More of ``nn.functional`` that teaching code uses (issue 29's census): transposed
convolutions, pixel shuffles and channel dropout. Re-exported by ``functional``.

- ``conv_transpose2d`` is one Function (``ops/convolution.py``): the input gradient of a
  convolution, used forwards (decoders, GAN generators, U-Nets upsample with it);
  ``conv_transpose1d`` is it on an (N, C, 1, L) view, as ``conv1d`` is ``conv2d``'s.
- ``pixel_shuffle`` / ``pixel_unshuffle`` only move elements: a reshape, a permute and a
  reshape, so their backward is those moves undone.
- ``dropout1d/2d/3d`` zero whole channels: one mask value per (sample, channel).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops.convolution import ConvTranspose2d
from ..state import state
from ..tensor import Tensor
from .functional_checks import _check_floating, _error


def _ints(value: Any, count: int, who: str, name: str, least: int) -> tuple[int, ...]:
    values = (value,) * count if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) != count or not all(isinstance(v, (int, np.integer)) for v in values):
        raise _error(f"{who}: {name} must be an int or {count} ints, got {value!r}", TypeError)
    if min(values) < least:
        raise _error(f"{who}: {name} must be at least {least}, got {value!r}", ValueError)
    return tuple(int(v) for v in values)


# --- transposed convolution ---------------------------------------------------------------


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The transpose of conv2d: (N, C_in, H, W) with weight (C_in, C_out, kH, kW) gives
    (N, C_out, (H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1, ...)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The transpose of conv1d: (N, C_in, L) with weight (C_in, C_out, K)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    dims: int, who: str) -> Tensor:
    _check_floating(input, who)
    if input.ndim not in (dims + 1, dims + 2):
        layout = "(C, L)" if dims == 1 else "(C, H, W)"
        raise _error(f"{who}: expected a {dims + 1}-D {layout} or {dims + 2}-D (N, ...) input, "
                     f"got shape {tuple(input.shape)}")
    if weight.ndim != dims + 2:
        raise _error(f"{who}: weight must be {dims + 2}-D (in_channels, out_channels, "
                     f"kernel...), got shape {tuple(weight.shape)}")
    unbatched = input.ndim == dims + 1
    x = input.unsqueeze(0) if unbatched else input
    groups = _check_transposed_groups(x, weight, groups, who)
    if x.shape[1] != weight.shape[0]:
        raise _error(f"{who}: input has {x.shape[1]} channels (shape {tuple(input.shape)}) but "
                     f"the weight of shape {tuple(weight.shape)} expects {weight.shape[0]} "
                     "(a transposed convolution's weight is (in_channels, out_channels / "
                     "groups, ...))")
    out_channels = weight.shape[1] * groups
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise _error(f"{who}: bias must have shape ({out_channels},) (one per output "
                     f"channel), got {tuple(bias.shape)}")
    stride = _ints(stride, dims, who, "stride", 1)
    padding = _ints(padding, dims, who, "padding", 0)
    output_padding = _ints(output_padding, dims, who, "output_padding", 0)
    dilation = _ints(dilation, dims, who, "dilation", 1)
    if any(extra >= max(s, d) for extra, s, d in zip(output_padding, stride, dilation)):
        raise _error(f"{who}: output_padding {output_padding} must be smaller than the stride "
                     f"{stride} or the dilation {dilation}", ValueError)
    if dims == 1:  # the 2-D Function on an (N, C, 1, L) view
        x, weight = x.unsqueeze(2), weight.unsqueeze(2)
        stride, padding = (1,) + stride, (0,) + padding
        output_padding, dilation = (0,) + output_padding, (1,) + dilation
    shape = ConvTranspose2d.output_shape(x, weight, None, stride, padding, output_padding,
                                         dilation, groups)
    if min(shape[2:]) < 1:
        raise _error(f"{who}: the output would be empty (size {shape[2:]}): padding "
                     f"{padding} is too large for input shape {tuple(input.shape)} and "
                     f"weight shape {tuple(weight.shape)}", ValueError)
    output = ConvTranspose2d.apply(x, weight, bias, stride, padding, output_padding, dilation,
                                   groups)
    if dims == 1:
        output = output.squeeze(2)
    return output[0] if unbatched else output


def _check_transposed_groups(x: Tensor, weight: Tensor, groups: Any, who: str) -> int:
    """``groups`` of a transposed convolution: positive, dividing the weight's dim 0 (the
    input channels), as PyTorch checks."""
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)):
        raise _error(f"{who}: groups must be an int, got {type(groups).__name__} {groups!r}",
                     TypeError)
    if groups <= 0:
        raise _error(f"{who}: non-positive groups is not supported, got groups={groups}",
                     RuntimeError)
    if weight.shape[0] % groups:
        raise _error(f"{who}: Given groups={groups}, expected weight to be divisible by "
                     f"{groups} at dimension 0 (in_channels), but got weight of size "
                     f"{list(weight.shape)} instead")
    return int(groups)


# --- pixel shuffle -------------------------------------------------------------------------


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels becomes an r x r
    block of pixels."""
    r, who = int(upscale_factor), "pixel_shuffle"
    if input.ndim < 3 or input.shape[-3] % (r * r):
        raise _error(f"{who}: expected an input (*, C * {r}^2, H, W) with channels divisible "
                     f"by upscale_factor^2 = {r * r}, got shape {tuple(input.shape)}")
    *batch, channels, height, width = input.shape
    c = channels // (r * r)
    x = input.reshape(*batch, c, r, r, height, width)
    nb = len(batch)
    x = x.permute(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return x.reshape(*batch, c, height * r, width * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W): the inverse of ``pixel_shuffle``."""
    r, who = int(downscale_factor), "pixel_unshuffle"
    if input.ndim < 3 or input.shape[-2] % r or input.shape[-1] % r:
        raise _error(f"{who}: expected an input (*, C, H, W) with H and W divisible by "
                     f"downscale_factor = {r}, got shape {tuple(input.shape)}")
    *batch, c, height, width = input.shape
    x = input.reshape(*batch, c, height // r, r, width // r, r)
    nb = len(batch)
    x = x.permute(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return x.reshape(*batch, c * r * r, height // r, width // r)


# --- channel dropout -----------------------------------------------------------------------


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool, dims: int,
                     who: str) -> Tensor:
    if not 0.0 <= p <= 1.0:
        raise _error(f"{who}: p must be between 0 and 1, got {p}", ValueError)
    if input.ndim not in (dims + 1, dims + 2):
        raise _error(f"{who}: expected a {dims + 1}-D (C, ...) or {dims + 2}-D (N, C, ...) "
                     f"input, got shape {tuple(input.shape)}")
    if not training or p == 0.0:
        return input
    keep_shape = input.shape[:input.ndim - dims] + (1,) * dims  # one draw per channel
    keep = state.rng.random(keep_shape) >= p
    scale = np.where(keep, 1.0 / (1.0 - p) if p < 1.0 else 0.0, 0.0).astype(input.dtype)
    return input.mul_(Tensor._make(scale)) if inplace else input * Tensor._make(scale)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) with probability p, scale the rest by 1/(1-p)."""
    return _channel_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) with probability p, scale the rest by 1/(1-p)."""
    return _channel_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) with probability p, scale the rest."""
    return _channel_dropout(input, p, training, inplace, 3, "dropout3d")


# --- normalization -------------------------------------------------------------------------


def instance_norm(input: Tensor, running_mean: Any = None, running_var: Any = None,
                  weight: Tensor | None = None, bias: Tensor | None = None,
                  use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its positions (group_norm with one
    group per channel), then scale and shift per channel."""
    if running_mean is not None or running_var is not None or not use_input_stats:
        raise _error("instance_norm: running statistics (track_running_stats=True) are not "
                     "supported by minigrad; normalise with each input's own statistics",
                     NotImplementedError)
    from .functional_ext import group_norm

    if input.ndim < 3:
        raise _error(f"instance_norm: expected an input (N, C, positions...), got shape "
                     f"{tuple(input.shape)}")
    return group_norm(input, input.shape[1], weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the last ``len(normalized_shape)`` dims, times
    ``weight``; ``eps=None`` is the dtype's machine epsilon, as in PyTorch."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise _error(f"rms_norm: normalized_shape {shape} must be the last dims of the input "
                     f"of shape {tuple(input.shape)}")
    eps = float(np.finfo(input.dtype).eps) if eps is None else eps
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    output = input * ((input * input).mean(dim=dims, keepdim=True) + eps).rsqrt()
    return output if weight is None else output * weight


# --- padding by mode -----------------------------------------------------------------------


def pad_by_index(input: Tensor, pad: tuple, mode: str) -> Tensor:
    """``F.pad`` with ``mode`` "reflect", "replicate" or "circular": each padded
    dimension gathered with an index array (so the gradient adds back where it came from)."""
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise _error(f"pad: a flat pad needs an even length of at most {2 * input.ndim} "
                     f"for shape {tuple(input.shape)}, got {tuple(pad)}")
    output = input
    for i in range(len(pad) // 2):
        dim, before, after = input.ndim - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1])
        size = input.shape[dim]
        if mode == "reflect" and (before >= size or after >= size):
            raise _error(f"pad: reflect padding ({before}, {after}) must be smaller than the "
                         f"size {size} of dim {dim} (input shape {tuple(input.shape)})",
                         ValueError)
        inner = np.arange(size)
        if mode == "reflect":
            index = np.concatenate([inner[before:0:-1], inner, inner[-2:-2 - after:-1]])
        elif mode == "replicate":
            index = np.concatenate([np.zeros(before, int), inner,
                                    np.full(after, size - 1)])
        elif mode == "circular":
            index = np.arange(-before, size + after) % size
        else:
            raise _error(f"pad: mode must be 'constant', 'reflect', 'replicate' or "
                         f"'circular', got {mode!r}", ValueError)
        output = output.index_select(dim, Tensor(index.astype(np.int64)))
    return output


# --- pooling with ceil_mode ------------------------------------------------------------------


def _ceil_extra(size: int, kernel: int, stride: int, padding: int) -> int:
    """How far past the padded input the last window reaches in ceil mode (PyTorch's rule:
    one more window if the division leaves a rest, unless it would start in the right
    padding)."""
    out = -(-(size + 2 * padding - kernel) // stride) + 1
    if (out - 1) * stride >= size + padding:
        out -= 1
    return max(0, (out - 1) * stride + kernel - (size + 2 * padding))


def ceil_mode_pool(x: Tensor, kernel: tuple, stride: tuple, padding: tuple, kind: str,
                   count_include_pad: bool = True) -> Tensor:
    """max_pool2d / avg_pool2d of (N, C, H, W) with ``ceil_mode=True``: the input gets the
    overhang on its bottom and right (-inf for max, 0 for the mean); a mean divides by the
    part of each window inside the (padded) input, as PyTorch does."""
    from ..ops.convolution import AvgPool2d, MaxPool2d

    extra = tuple(_ceil_extra(size, k, s, p) for size, k, s, p in
                  zip(x.shape[2:], kernel, stride, padding))
    if kind == "max":
        grown = x.pad(((0, 0), (0, 0), (0, extra[0]), (0, extra[1])), value=-np.inf)
        return MaxPool2d.apply(grown, kernel, stride, padding)
    grown = x.pad(((0, 0), (0, 0), (0, extra[0]), (0, extra[1])))
    sums = AvgPool2d.apply(grown, kernel, stride, padding, True) * float(np.prod(kernel))
    # the divisor: window elements inside the input (and inside its padding, if counted)
    (ph, pw), (eh, ew) = padding, extra
    counted = np.ones(tuple(x.shape[2:]), dtype=x.dtype)
    counted = np.pad(counted, ((ph, ph), (pw, pw)), constant_values=float(count_include_pad))
    counted = np.pad(counted, ((0, eh), (0, ew)))
    windows = np.lib.stride_tricks.sliding_window_view(counted, kernel)[::stride[0],
                                                                       ::stride[1]]
    divisor = windows.sum(axis=(-2, -1))
    return sums / Tensor._make(divisor.astype(x.dtype))


# --- a learned-slope activation ------------------------------------------------------------


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x); ``weight`` has 1 element or one per channel (dim 1)."""
    if weight.numel() > 1:
        if input.ndim < 2 or input.shape[1] != weight.numel():
            raise _error(f"prelu: weight has {weight.numel()} elements, one per channel, but "
                         f"the input of shape {tuple(input.shape)} has "
                         f"{input.shape[1] if input.ndim > 1 else 1} channels (dim 1)")
        weight = weight.reshape(weight.numel(), *(1,) * (input.ndim - 2))
    return input.relu() - weight * (-input).relu()
