"""The second half of ``minigrad.nn.functional`` (``F``): more activations, losses,
1-D convolution and pooling, adaptive pooling, group norm, interpolation, and helpers.
Everything here is re-exported by ``functional``; import it as ``F.leaky_relu``.

The activations are one Function each (``minigrad/ops/activation_pointwise.py``). The
rest is composed from existing Functions, so autograd derives the backward:

- ``conv1d`` and the 1-D pools are their 2-D versions on a (N, C, 1, L) view.
- ``adaptive_avg_pool2d`` and bilinear ``interpolate`` are linear maps along each spatial
  axis: out = A_h @ x @ A_w^T with small constant matrices A (each row of A holds the
  weights of one output position), two matmuls whose backward is the transposed map.
- ``group_norm`` is the LayerNorm Function over (N, groups, rest), then a per-channel
  affine.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops.activation_pointwise import ELU, Hardtanh, LeakyReLU, Mish, SiLU, Softplus
from ..ops.convolution import AvgPool2d, Conv2d, MaxPool2d
from ..ops.normalization import LayerNorm
from ..ops.reduce import normalize_dims
from ..tensor import Tensor, gather, where
from .functional_checks import (_check_floating, _check_groups, _check_reduction,
                                _class_targets, _class_weight, _error, _legacy_reduction,
                                _output_sizes, _reduce, _same_padding, _single)

# --- activations ----------------------------------------------------------------------------


def _activation(function: type, who: str, input: Tensor, inplace: bool, *args: Any) -> Tensor:
    """``function`` applied to ``input``; with ``inplace`` written into input (recorded as
    PyTorch's in-place ops are) and input returned."""
    _check_floating(input, who)
    return input._modify(function, *args) if inplace else function.apply(input, *args)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope * x"""
    return _activation(LeakyReLU, "leaky_relu", input, inplace, float(negative_slope))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x if x > 0 else alpha * (e^x - 1)"""
    return _activation(ELU, "elu", input, inplace, float(alpha))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + e^(beta x)) / beta, a smooth relu (x itself where beta x > threshold)."""
    return _activation(Softplus, "softplus", input, False, float(beta), float(threshold))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (also called swish)."""
    return _activation(SiLU, "silu", input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))"""
    return _activation(Mish, "mish", input, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """x clamped into [min_val, max_val] (gradient 0 outside)."""
    if min_val > max_val:
        raise _error(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})",
                     ValueError)
    return _activation(Hardtanh, "hardtanh", input, inplace, float(min_val), float(max_val))


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6)"""
    return _activation(Hardtanh, "relu6", input, inplace, 0.0, 6.0)


# --- losses ---------------------------------------------------------------------------------


def nll_loss(input: Tensor, target: Any, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] * weight[target[n]] for log-probabilities ``input`` (N, C),
    (N, C, d1, ...) or (C,). "mean" divides by the sum of the weights of the targets that
    are not ``ignore_index`` (their count without ``weight``), as in PyTorch."""
    reduction = _legacy_reduction(size_average, reduce, reduction, "nll_loss")
    _check_reduction(reduction, "nll_loss")
    _check_floating(input, "nll_loss", "input (the log-probabilities)")
    if input.ndim == 0:
        raise _error("nll_loss: input needs a class dim: shape (C,), (N, C) or (N, C, d1, "
                     "...), got a 0-d tensor")
    weights = _class_weight(weight, input, "nll_loss")
    labels = _class_targets(input, target, "nll_loss", ignore_index)
    class_dim = 1 if input.ndim > 1 else 0
    keep = labels != ignore_index
    safe = np.where(keep, labels, 0)  # any valid class: those losses are weighted 0
    picked = gather(input, class_dim, np.expand_dims(safe, class_dim)).squeeze(class_dim)
    scale = keep.astype(input.dtype)
    if weights is not None:
        scale = scale * weights[safe]
    loss = picked * -scale
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    total_weight = float(scale.sum())
    if total_weight == 0:  # every target ignored: NaN, with zero gradients, as in PyTorch
        return loss.sum() + np.nan
    return loss.sum() / total_weight


def _check_same_shape(input: Tensor, target: Any, who: str) -> None:
    if tuple(input.shape) != tuple(np.shape(target)):
        raise _error(f"{who}: input shape {tuple(input.shape)} and target shape "
                     f"{tuple(np.shape(target))} differ (broadcasting them is usually a bug)")


def l1_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """|input - target|, averaged (or summed, or per element)."""
    _check_reduction(reduction, "l1_loss")
    _check_same_shape(input, target, "l1_loss")
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input: Tensor, target: Any, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta."""
    _check_reduction(reduction, "smooth_l1_loss")
    _check_same_shape(input, target, "smooth_l1_loss")
    if beta < 0:
        raise _error(f"smooth_l1_loss: beta must not be negative, got {beta}", ValueError)
    distance = (input - target).abs()
    if beta == 0:
        return _reduce(distance, reduction)
    return _reduce(where(distance < beta, 0.5 * distance * distance / beta,
                         distance - 0.5 * beta), reduction)


def huber_loss(input: Tensor, target: Any, reduction: str = "mean",
               delta: float = 1.0) -> Tensor:
    """0.5 d^2 where d = |input - target| < delta, else delta (d - 0.5 delta)."""
    _check_reduction(reduction, "huber_loss")
    _check_same_shape(input, target, "huber_loss")
    if delta <= 0:
        raise _error(f"huber_loss: delta must be positive, got {delta}", ValueError)
    distance = (input - target).abs()
    return _reduce(where(distance < delta, 0.5 * distance * distance,
                         delta * (distance - 0.5 * delta)), reduction)


KL_REDUCTIONS = ("mean", "batchmean", "sum", "none")


def kl_div(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) per element: target (log target - input), for
    log-probabilities ``input``. ``log_target``: the target is given as log-probabilities
    too. "batchmean" divides the sum by the batch size (the mathematically right KL);
    "mean" divides by the number of elements, as PyTorch does."""
    if size_average is not None or reduce is not None:
        raise _error("kl_div: size_average and reduce are deprecated in PyTorch and not "
                     "supported here; use reduction=", ValueError)
    if reduction not in KL_REDUCTIONS:
        raise _error(f"kl_div: reduction must be one of {KL_REDUCTIONS}, got {reduction!r}",
                     ValueError)
    _check_floating(input, "kl_div")
    _check_same_shape(input, target, "kl_div")
    if not isinstance(target, Tensor):
        target = Tensor(np.asarray(target, dtype=input.dtype))  # a constant
    if log_target:
        pointwise = target.exp() * (target - input)
    else:
        safe = where(target > 0, target, 1.0)  # 0 log 0 = 0 (xlogy)
        pointwise = target * safe.log() - target * input
    if reduction == "batchmean":
        return pointwise.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(pointwise, reduction)


# --- similarity and normalisation ------------------------------------------------------------


def _norm(input: Tensor, p: float, dim: int) -> Tensor:
    """The p-norm along ``dim`` (kept as size 1)."""
    if p == 2:
        return (input * input).sum(dim, keepdim=True).sqrt()
    if p == 1:
        return input.abs().sum(dim, keepdim=True)
    if p == math.inf:
        return input.abs().max(dim, keepdim=True)[0]
    return (input.abs() ** p).sum(dim, keepdim=True) ** (1.0 / p)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """input / max(||input||_p, eps) along ``dim``: unit vectors."""
    _check_floating(input, "normalize")
    dim = normalize_dims(dim, max(input.ndim, 1), "normalize")[0]
    return input / _norm(input, float(p), dim).clamp(min=eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 * x2) / (max(||x1||, eps) max(||x2||, eps)) along ``dim`` (the inputs
    broadcast against each other)."""
    _check_floating(x1, "cosine_similarity", "x1")
    try:
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise _error(f"cosine_similarity: x1 of shape {tuple(x1.shape)} and x2 of shape "
                     f"{tuple(x2.shape)} do not broadcast") from None
    dim = normalize_dims(dim, len(shape), "cosine_similarity")[0]
    if len(x1.shape) < len(shape):
        x1 = x1.reshape((1,) * (len(shape) - x1.ndim) + tuple(x1.shape))
    if len(x2.shape) < len(shape):
        x2 = x2.reshape((1,) * (len(shape) - x2.ndim) + tuple(x2.shape))
    unit1 = x1 / _norm(x1, 2, dim).clamp(min=eps)
    unit2 = x2 / _norm(x2, 2, dim).clamp(min=eps)
    return (unit1 * unit2).sum(dim)


def one_hot(tensor: Any, num_classes: int = -1) -> Tensor:
    """Class indices (int64) -> one-hot int64 rows of ``num_classes`` (default: the
    largest index + 1); a new last dimension. No gradient."""
    labels = tensor.numpy() if isinstance(tensor, Tensor) else np.asarray(tensor)
    if labels.dtype.kind not in "iu":
        raise _error(f"one_hot: expected integer class indices (int64), got {labels.dtype} "
                     f"of shape {labels.shape}; use .long()", TypeError)
    if num_classes == -1:
        if labels.size == 0:
            raise _error("one_hot: cannot infer num_classes from an empty tensor; pass it",
                         ValueError)
        num_classes = int(labels.max()) + 1
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        bad = labels.min() if labels.min() < 0 else labels.max()
        raise _error(f"one_hot: class index {bad} is out of range for num_classes="
                     f"{num_classes} (valid: 0 to {num_classes - 1})", IndexError)
    return Tensor(np.eye(num_classes, dtype=np.int64)[labels])


# --- 1-D convolution and pooling: the 2-D ones over a (N, C, 1, L) view ----------------------


def _check_sequence_input(input: Tensor, who: str) -> tuple[Tensor, bool]:
    """(N, C, L) as (N, C, 1, L); (C, L) gets a batch dimension too (removed after)."""
    if input.ndim not in (2, 3):
        raise _error(f"{who}: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape "
                     f"{tuple(input.shape)}")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    return x.unsqueeze(2), unbatched


def _unsqueezed_result(output: Tensor, unbatched: bool) -> Tensor:
    output = output.squeeze(2)
    return output[0] if unbatched else output


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Cross-correlation of (N, C_in, L) with weight (C_out, C_in / groups, K), plus bias.
    ``padding``: int, ``"valid"`` or ``"same"`` (stride 1 only); ``groups`` as in conv2d."""
    who = "conv1d"
    x, unbatched = _check_sequence_input(input, who)
    if weight.ndim != 3:
        raise _error(f"{who}: weight must be 3-D (out_channels, in_channels, kernel_size), "
                     f"got shape {tuple(weight.shape)}")
    if groups != 1:
        groups = _check_groups(x, weight, groups, who, (x.shape[0], x.shape[1], x.shape[3]))
    elif x.shape[1] != weight.shape[1]:
        raise _error(f"{who}: input has {x.shape[1]} channels (shape {tuple(input.shape)}) "
                     f"but the weight of shape {tuple(weight.shape)} expects {weight.shape[1]}")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise _error(f"{who}: bias must have shape ({weight.shape[0]},) (one per output "
                     f"channel of the weight of shape {tuple(weight.shape)}), got "
                     f"{tuple(bias.shape)}")
    stride = _single(stride, who, "stride", 1)
    dilation = _single(dilation, who, "dilation", 1)
    kernel = weight.shape[2]
    if padding == "valid":
        pads = (0, 0)
    elif padding == "same":
        if stride != 1:
            raise _error(f"{who}: padding='same' needs stride 1 (the output size would not "
                         f"be the input size with stride {stride})", ValueError)
        pads = _same_padding((kernel,), (dilation,))[0]
    elif isinstance(padding, str):
        raise _error(f"{who}: padding must be an int, 'same' or 'valid', got {padding!r}",
                     ValueError)
    else:
        size = _single(padding, who, "padding")
        pads = (size, size)
    length = x.shape[3]
    if length + sum(pads) < dilation * (kernel - 1) + 1:
        raise _error(f"{who}: the input's length {length} (padded: {length + sum(pads)}) is "
                     f"smaller than the kernel ({dilation * (kernel - 1) + 1}); input shape "
                     f"{tuple(input.shape)}, weight shape {tuple(weight.shape)}")
    output = Conv2d.apply(x, weight.unsqueeze(2), bias, (1, stride), ((0, 0), pads),
                          (1, dilation), groups)
    return _unsqueezed_result(output, unbatched)


def _pool1d_arguments(input, kernel_size, stride, padding, who):
    x, unbatched = _check_sequence_input(input, who)
    kernel = _single(kernel_size, who, "kernel_size", 1)
    stride = kernel if stride is None else _single(stride, who, "stride", 1)
    padding = _single(padding, who, "padding")
    if 2 * padding > kernel:
        raise _error(f"{who}: padding {padding} must be at most half the kernel size "
                     f"{kernel}", ValueError)
    if x.shape[3] + 2 * padding < kernel:
        raise _error(f"{who}: the input's length {x.shape[3]} is smaller than the kernel "
                     f"{kernel}; input shape {tuple(input.shape)}")
    return x, unbatched, (1, kernel), (1, stride), (0, padding)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value in each window of ``kernel_size`` along the last dimension.
    ``dilation``, ``ceil_mode`` and ``return_indices`` (indices into the length L) as in
    ``max_pool2d``."""
    who = "max_pool1d"
    if return_indices or ceil_mode or _single(dilation, who, "dilation", 1) != 1:
        from .functional_layers_more import max_pool_with_indices
        x, unbatched = _check_sequence_input(input, who)
        stride = None if stride is None else (1, _single(stride, who, "stride", 1))
        values, indices = max_pool_with_indices(
            x, (1, _single(kernel_size, who, "kernel_size", 1)), stride,
            (0, _single(padding, who, "padding")), (1, _single(dilation, who, "dilation", 1)),
            ceil_mode, who)
        values, indices = (_unsqueezed_result(t, unbatched) for t in (values, indices))
        return (values, indices) if return_indices else values
    x, unbatched, kernel, stride, padding = _pool1d_arguments(input, kernel_size, stride,
                                                              padding, who)
    return _unsqueezed_result(MaxPool2d.apply(x, kernel, stride, padding), unbatched)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window of ``kernel_size`` along the last dimension."""
    x, unbatched, kernel, stride, padding = _pool1d_arguments(input, kernel_size, stride,
                                                              padding, "avg_pool1d")
    output = AvgPool2d.apply(x, kernel, stride, padding, bool(count_include_pad))
    return _unsqueezed_result(output, unbatched)


# --- adaptive pooling and interpolation: a constant matrix along each axis --------------------


def _adaptive_matrix(size: int, out: int, dtype: Any) -> np.ndarray:
    """(out, size): row i averages input positions floor(i size / out) up to
    ceil((i + 1) size / out), PyTorch's adaptive windows."""
    matrix = np.zeros((out, size), dtype=dtype)
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix


def _apply_axis_maps(input: Tensor, maps: list) -> Tensor:
    """x with the last len(maps) axes each mapped by its matrix (None: unchanged)."""
    output = input.clone() if all(m is None for m in maps) else input  # a new tensor
    if maps[-1] is not None:  # the last axis: x @ A^T
        output = output @ Tensor(np.ascontiguousarray(maps[-1].T))
    if len(maps) == 2 and maps[0] is not None:  # the one before: A @ x
        output = Tensor(maps[0]) @ output
    return output


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """The mean over adaptive windows, so the output is (..., out_h, out_w) whatever the
    input's size (``None`` keeps a size). ``output_size=1``: global average pooling."""
    who = "adaptive_avg_pool2d"
    if input.ndim not in (3, 4):
        raise _error(f"{who}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape "
                     f"{tuple(input.shape)}")
    _check_floating(input, who)
    sizes = tuple(input.shape[-2:])
    outs = _output_sizes(output_size, sizes, who)
    maps = [None if o == s else _adaptive_matrix(s, o, input.dtype) for s, o in zip(sizes, outs)]
    return _apply_axis_maps(input, maps)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """The mean over adaptive windows along the last dimension: (..., output_size)."""
    who = "adaptive_avg_pool1d"
    if input.ndim not in (2, 3):
        raise _error(f"{who}: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape "
                     f"{tuple(input.shape)}")
    _check_floating(input, who)
    (out,) = _output_sizes(output_size, tuple(input.shape[-1:]), who)
    size = input.shape[-1]
    return _apply_axis_maps(input, [None if out == size else
                                    _adaptive_matrix(size, out, input.dtype)])


def _linear_matrix(size: int, out: int, scale: float | None, align_corners: bool,
                   dtype: Any) -> np.ndarray:
    """(out, size): linear interpolation weights, PyTorch's source positions: with
    align_corners the corners match, src = dst (size - 1) / (out - 1); without, pixel
    centres, src = (dst + 0.5) / scale - 0.5 (clamped at 0)."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        src = dst * ((size - 1) / (out - 1) if out > 1 else 0.0)
    else:
        ratio = 1.0 / scale if scale is not None else size / out
        src = np.maximum((dst + 0.5) * ratio - 0.5, 0.0)
    low = np.minimum(np.floor(src).astype(np.int64), size - 1)
    high = np.minimum(low + 1, size - 1)
    weight = src - low
    matrix = np.zeros((out, size))
    np.add.at(matrix, (np.arange(out), low), 1 - weight)
    np.add.at(matrix, (np.arange(out), high), weight)
    return matrix.astype(dtype)


INTERPOLATE_MODES = {3: ("nearest", "linear", "area"), 4: ("nearest", "bilinear", "area")}


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize (N, C, L) or (N, C, H, W) to ``size`` or by ``scale_factor``: ``"nearest"``
    (src = floor(dst / scale)), ``"linear"`` / ``"bilinear"`` (``align_corners``: whether
    the corner pixels' centres line up), or ``"area"`` (adaptive average pooling).
    ``recompute_scale_factor=True``: positions from the output size, not the factor."""
    who = "interpolate"
    if antialias:
        raise _error(f"{who}: antialias=True is not supported in minigrad", NotImplementedError)
    if input.ndim not in INTERPOLATE_MODES:
        raise _error(f"{who}: expected a 3-D (N, C, L) or 4-D (N, C, H, W) input, got shape "
                     f"{tuple(input.shape)}")
    modes = INTERPOLATE_MODES[input.ndim]
    if mode not in modes:
        raise _error(f"{who}: mode {mode!r} is not supported for a {input.ndim}-D input; use "
                     f"one of {modes}", NotImplementedError if mode in (
                         "bicubic", "trilinear", "nearest-exact") else ValueError)
    if align_corners is not None and mode in ("nearest", "area"):
        raise _error(f"{who}: align_corners only goes with the linear modes, not {mode!r}",
                     ValueError)
    if (size is None) == (scale_factor is None):
        raise _error(f"{who}: give exactly one of size and scale_factor", ValueError)
    sizes = tuple(input.shape[2:])
    if size is not None:
        outs = _output_sizes(size, sizes, who)
        scales = (None,) * len(sizes)
    else:
        scales = (tuple(float(s) for s in scale_factor)
                  if isinstance(scale_factor, (tuple, list))
                  else (float(scale_factor),) * len(sizes))
        if len(scales) != len(sizes) or min(scales) <= 0:
            raise _error(f"{who}: scale_factor must be positive, one per spatial dim, got "
                         f"{scale_factor!r}", ValueError)
        outs = tuple(int(math.floor(s * f)) for s, f in zip(sizes, scales))
        if recompute_scale_factor:
            scales = (None,) * len(sizes)
    _check_floating(input, who)
    if mode == "area":
        return adaptive_avg_pool2d(input, outs) if input.ndim == 4 else \
            adaptive_avg_pool1d(input, outs)
    if mode == "nearest":
        indices = [np.minimum(np.floor(np.arange(o) * (1.0 / f if f else s / o)).astype(np.int64),
                              s - 1) for s, o, f in zip(sizes, outs, scales)]
        if len(indices) == 1:
            return input[..., indices[0]]
        return input[:, :, indices[0][:, None], indices[1][None, :]]
    maps = [_linear_matrix(s, o, f, bool(align_corners), input.dtype)
            for s, o, f in zip(sizes, outs, scales)]
    return _apply_axis_maps(input, maps)


# --- group norm -----------------------------------------------------------------------------


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Split the C channels of (N, C, ...) into ``num_groups`` groups and normalise each
    sample's group (its channels and positions together), then scale and shift each
    channel by ``weight`` and ``bias`` (shape (C,))."""
    who = "group_norm"
    if input.ndim < 2:
        raise _error(f"{who}: expected an input of shape (N, C, ...), got "
                     f"{tuple(input.shape)}")
    channels = input.shape[1]
    if num_groups < 1 or channels % num_groups:
        raise _error(f"{who}: the {channels} channels of the input of shape "
                     f"{tuple(input.shape)} do not split into num_groups={num_groups} equal "
                     "groups", ValueError)
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and tuple(value.shape) != (channels,):
            raise _error(f"{who}: {name} must have shape ({channels},), one per channel, got "
                         f"{tuple(value.shape)}")
    grouped = input.reshape(input.shape[0], num_groups, -1)
    output = LayerNorm.apply(grouped, None, None, 1, eps).reshape(input.shape)
    shape = (1, channels) + (1,) * (input.ndim - 2)
    if weight is not None:
        output = output * weight.reshape(shape)
    if bias is not None:
        output = output + bias.reshape(shape)
    return output
