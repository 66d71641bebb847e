"""``minigrad.nn.functional`` (``F``): the layers' computations as plain functions.

Where numerics or speed matter the work is one Function with an analytic backward
(``softmax``, ``log_softmax``, ``cross_entropy``, ``layer_norm``, ``conv2d``, ...; see
``minigrad/ops/``). The rest is composed from Tensor ops, so autograd derives the
backward: read those as the definitions they are.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops.activation import GELU, LogSoftmax, Softmax
from ..ops.attention import ScaledDotProductAttention
from ..ops.convolution import AvgPool2d, Conv2d, MaxPool2d
from ..ops.matmul import Linear
from ..ops.loss import BinaryCrossEntropy, BinaryCrossEntropyWithLogits, CrossEntropy
from ..ops.normalization import LayerNorm
from ..ops.reduce import normalize_dims
from ..state import state
from ..tensor import Tensor, pad_tensor, where
from .functional_checks import (REDUCTIONS, _check_floating, _check_reduction,  # noqa: F401
                                _check_groups, _class_targets, _class_weight, _error,
                                _legacy_reduction, _pair, _positive_pair, _reduce,
                                _same_padding)
from ..unsupported import module_getattr as _module_getattr


# --- activations ----------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else input.relu()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (``"none"``, with erf) or its tanh approximation (``"tanh"``)."""
    if approximate not in ("none", "tanh"):
        raise _error(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}",
                     ValueError)
    _check_floating(input, "gelu")
    return GELU.apply(input, approximate)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """exp(x_i) / sum_j exp(x_j) along ``dim`` (computed stably, for logits of +-1000).
    ``dtype``: the input is cast to it first. Without ``dim``: PyTorch's deprecated
    implicit choice (dim 0 for 0-, 1- and 3-D inputs, else 1), with its warning."""
    if dim is None:
        dim = _layers_more.implicit_softmax_dim("softmax", input.ndim, _stacklevel)
    input = input if dtype is None else input.to(dtype)
    _check_floating(input, "softmax")
    return Softmax.apply(input, normalize_dims(dim, input.ndim, "softmax")[0])


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """x_i - logsumexp(x) along ``dim``: stable where log(softmax(x)) would give -inf.
    ``dtype`` and a missing ``dim`` as in ``softmax``."""
    if dim is None:
        dim = _layers_more.implicit_softmax_dim("log_softmax", input.ndim, _stacklevel)
    input = input if dtype is None else input.to(dtype)
    _check_floating(input, "log_softmax")
    return LogSoftmax.apply(input, normalize_dims(dim, input.ndim, "log_softmax")[0])


# --- linear layers, embedding, dropout ------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ W^T + b, with ``weight`` of shape (out_features, in_features) as in PyTorch."""
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise _error(
            f"linear: input of shape {tuple(input.shape)} does not fit weight of shape "
            f"{tuple(weight.shape)}: the input's last size must be in_features = "
            f"{weight.shape[-1]}"
        )
    if weight.ndim == 2:
        return Linear.apply(input, weight, bias)  # one Function (ops/matmul.py)
    output = input @ weight.T  # a 1-D weight: one output feature, as in PyTorch
    return output + bias if bias is not None else output


def embedding(input: Tensor | np.ndarray, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input`` (backward adds each row's
    gradient up, so a repeated index accumulates). Row ``padding_idx`` gets no gradient.
    ``max_norm``: first, each picked row whose ``norm_type``-norm exceeds it is scaled
    down to it, in ``weight`` itself (without history), as PyTorch does.
    ``scale_grad_by_freq``: each row's gradient is divided by its index's count in input."""
    _layers_more.refuse_sparse(sparse, "embedding")  # (bound at the end of this file)
    num = weight.shape[0]
    indices = _layers_more.embedding_indices(input, num, "embedding")
    if max_norm is not None:
        _layers_more.embedding_renorm_(weight, indices, max_norm, norm_type)
    rows = weight[indices]
    if scale_grad_by_freq:
        rows = _layers_more.frequency_scaled(rows, indices)
    if padding_idx is not None:  # that row's value, without a path back to the weight
        padding = indices == padding_idx % num
        if padding.any():
            return where(Tensor(padding[..., None]), weight.detach()[indices], rows)
    return rows


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p), so the
    expected value is unchanged; identity when not training. ``inplace``: into input."""
    _check_dropout_probability(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = state.rng.random(input.shape) >= p
    scale = (keep / (1.0 - p)).astype(input.dtype)
    return input.mul_(scale) if inplace else input * scale


def _check_dropout_probability(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise _error(f"dropout: p must be between 0 and 1, got {p}", ValueError)


# --- normalization --------------------------------------------------------------------------


def layer_norm(input: Tensor, normalized_shape: int | tuple[int, ...],
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias over the last ``len(normalized_shape)``
    dimensions (biased variance, as in PyTorch)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape or input.ndim < len(shape):
        raise _error(
            f"layer_norm: input of shape {tuple(input.shape)} does not end with "
            f"normalized_shape {shape}"
        )
    return LayerNorm.apply(input, weight, bias, len(shape), eps)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and spatial dims. Training: with the
    batch's statistics, and the running ones move ``momentum`` of the way towards them
    (the running variance with the unbiased estimate, as in PyTorch). Eval: with the
    running statistics."""
    if input.ndim < 2:
        raise _error(f"batch_norm: expected an input of shape (N, C, ...), got "
                     f"{tuple(input.shape)}")
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)  # broadcasts over the channel dim
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise _error(f"batch_norm: expected more than 1 value per channel when "
                         f"training, got input of shape {tuple(input.shape)}", ValueError)
        mean = input.mean(dims, keepdim=True)
        var = input.var(dims, keepdim=True, correction=0)
        if running_mean is not None and running_var is not None:
            unbiased = var.numpy().reshape(-1) * count / (count - 1)
            for running, batch_value in ((running_mean, mean.numpy().reshape(-1)),
                                         (running_var, unbiased)):
                moved = (1 - momentum) * running.numpy() + momentum * batch_value
                running._write(moved.astype(running.dtype))
    else:
        if running_mean is None or running_var is None:
            raise _error("batch_norm: eval mode needs running_mean and running_var",
                         ValueError)
        mean = running_mean.detach().reshape(shape)
        var = running_var.detach().reshape(shape)
    output = (input - mean) / (var + eps).sqrt()
    if weight is not None:
        output = output * weight.reshape(shape)
    if bias is not None:
        output = output + bias.reshape(shape)
    return output


# --- convolution and pooling (strided windows plus one BLAS call) ---------------------------


def _check_image_input(input: Tensor, who: str) -> tuple[Tensor, bool]:
    """(N, C, H, W) as is; (C, H, W) gets a batch dimension (removed again after)."""
    if input.ndim == 3:
        return input.unsqueeze(0), True
    if input.ndim != 4:
        raise _error(f"{who}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got "
                     f"shape {tuple(input.shape)}")
    return input, False


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Cross-correlation of (N, C_in, H, W) with weight (C_out, C_in / groups, kH, kW),
    plus bias. ``padding``: int, pair, ``"valid"`` (none) or ``"same"`` (output as big as
    input; stride 1 only). ``groups``: output channel block g sees input block g only
    (groups == C_in: depthwise)."""
    x, unbatched = _check_image_input(input, "conv2d")
    if weight.ndim != 4:
        raise _error(f"conv2d: weight must be 4-D (out_channels, in_channels, kH, kW), got "
                     f"shape {tuple(weight.shape)}")
    if groups != 1:
        groups = _check_groups(x, weight, groups, "conv2d")
    elif x.shape[1] != weight.shape[1]:
        raise _error(
            f"conv2d: input has {x.shape[1]} channels (shape {tuple(input.shape)}) but the "
            f"weight of shape {tuple(weight.shape)} expects {weight.shape[1]}"
        )
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise _error(f"conv2d: bias must have shape ({weight.shape[0]},) (one per output "
                     f"channel of the weight of shape {tuple(weight.shape)}), got "
                     f"{tuple(bias.shape)}")
    stride = _positive_pair(stride, "conv2d", "stride")
    dilation = _positive_pair(dilation, "conv2d", "dilation")
    kernel = tuple(weight.shape[2:])
    if padding == "valid":
        pads = ((0, 0), (0, 0))
    elif padding == "same":
        if stride != (1, 1):
            raise _error("conv2d: padding='same' needs stride 1 (the output size would "
                         f"not be the input size with stride {stride})", ValueError)
        pads = _same_padding(kernel, dilation)
    elif isinstance(padding, str):
        raise _error(f"conv2d: padding must be an int, a pair, 'same' or 'valid', got "
                     f"{padding!r}", ValueError)
    else:
        ph, pw = _pair(padding, "conv2d", "padding")
        if min(ph, pw) < 0:
            raise _error(f"conv2d: padding must not be negative, got {padding!r}", ValueError)
        pads = ((ph, ph), (pw, pw))
    for size, (before, after), k, d, name in zip(x.shape[2:], pads, kernel, dilation, "HW"):
        if size + before + after < d * (k - 1) + 1:
            raise _error(
                f"conv2d: the input's {name} size {size} (padded: {size + before + after}) is "
                f"smaller than the kernel ({d * (k - 1) + 1}); input shape "
                f"{tuple(input.shape)}, weight shape {tuple(weight.shape)}"
            )
    output = Conv2d.apply(x, weight, bias, stride, pads, dilation, groups)
    return output[0] if unbatched else output


def _pool_arguments(input: Tensor, kernel_size: Any, stride: Any, padding: Any,
                    who: str) -> tuple:
    x, unbatched = _check_image_input(input, who)
    kernel = _positive_pair(kernel_size, who, "kernel_size")
    stride = kernel if stride is None else _positive_pair(stride, who, "stride")
    padding = _pair(padding, who, "padding")
    if any(2 * p > k or p < 0 for p, k in zip(padding, kernel)):
        raise _error(f"{who}: padding {padding} must be between 0 and half the kernel size "
                     f"{kernel}", ValueError)
    for size, p, k, name in zip(x.shape[2:], padding, kernel, "HW"):
        if size + 2 * p < k:
            raise _error(f"{who}: the input's {name} size {size} is smaller than the kernel "
                         f"{k}; input shape {tuple(input.shape)}")
    return x, unbatched, kernel, stride, padding


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value in each window (its gradient goes to that element).
    ``ceil_mode``: a last, partial window where the windows do not fit exactly.
    ``dilation``: the window's elements that far apart. ``return_indices``: also where
    each maximum is, as a flat index into its (H * W) plane (for ``max_unpool2d``)."""
    if return_indices or _positive_pair(dilation, "max_pool2d", "dilation") != (1, 1):
        from .functional_layers_more import max_pool_with_indices
        x, unbatched = _check_image_input(input, "max_pool2d")
        values, indices = max_pool_with_indices(x, kernel_size, stride, padding, dilation,
                                                ceil_mode, "max_pool2d")
        if unbatched:
            values, indices = values[0], indices[0]
        return (values, indices) if return_indices else values
    x, unbatched, kernel, stride, padding = _pool_arguments(input, kernel_size, stride,
                                                            padding, "max_pool2d")
    if ceil_mode:
        output = ceil_mode_pool(x, kernel, stride, padding, "max")
    else:
        output = MaxPool2d.apply(x, kernel, stride, padding)
    return output[0] if unbatched else output


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Any = None) -> Tensor:
    """The mean of each window. ``ceil_mode``: a last, partial window where the windows do
    not fit exactly (its mean is over the part inside the padded input, as in PyTorch)."""
    x, unbatched, kernel, stride, padding = _pool_arguments(input, kernel_size, stride,
                                                            padding, "avg_pool2d")
    if divisor_override is not None:
        raise _error("avg_pool2d: divisor_override is not supported by minigrad",
                     NotImplementedError)
    if ceil_mode:
        output = ceil_mode_pool(x, kernel, stride, padding, "avg", bool(count_include_pad))
    else:
        output = AvgPool2d.apply(x, kernel, stride, padding, bool(count_include_pad))
    return output[0] if unbatched else output


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float = 0.0) -> Tensor:
    """PyTorch's ``F.pad``: ``pad`` lists (before, after) pairs from the last dim backwards;
    ``mode`` "constant" (with ``value``), "reflect", "replicate" or "circular"."""
    if mode != "constant":
        return pad_by_index(input, tuple(pad), mode)
    return pad_tensor(input, tuple(pad) if not isinstance(pad, int) else pad, mode, value)


def unfold(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Two forms. ``unfold(input, dimension, size, step)``: the seed's strided windows
    (``Tensor.unfold``): windows of ``size`` along ``dimension``, ``step`` apart, as a new
    last dimension. ``unfold(input, kernel_size, dilation=1, padding=0, stride=1)``:
    PyTorch's im2col (``nn.Unfold``), taken unless there are exactly three arguments
    after the input or ``dimension``/``size``/``step`` are given by name."""
    if (len(args) == 3 and not kwargs) or set(kwargs) & {"dimension", "size", "step"}:
        return input.unfold(*args, **kwargs)
    return _layers_more.im2col(input, *args, **kwargs)


# --- attention ------------------------------------------------------------------------------


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None) -> Tensor:
    """softmax(Q K^T / sqrt(d) + mask) V over the last two dims (..., L, d) x (..., S, d).
    A bool ``attn_mask`` says where attention is allowed (True = keep); a float one is
    added to the scores. ``is_causal``: position i sees positions <= i. A query that may
    attend to nothing gets zeros (as PyTorch does), not NaN."""
    who = "scaled_dot_product_attention"
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise _error(
            f"{who}: query {tuple(query.shape)}, key {tuple(key.shape)} and value "
            f"{tuple(value.shape)} do not fit: query and key need the same last size, key "
            "and value the same sequence length (dim -2)"
        )
    if is_causal and attn_mask is not None:
        raise _error(f"{who}: give attn_mask or is_causal, not both", ValueError)
    length, source_length = query.shape[-2], key.shape[-2]
    if is_causal:
        attn_mask = np.tril(np.ones((length, source_length), dtype=bool))
    if attn_mask is not None:
        shape = tuple(np.shape(attn_mask))
        scores_shape = tuple(query.shape[:-1]) + (source_length,)
        try:
            np.broadcast_shapes(shape, scores_shape)
        except ValueError:
            raise _error(f"{who}: attn_mask of shape {shape} does not broadcast to the "
                         f"scores' shape {scores_shape} (..., L={length}, "
                         f"S={source_length})") from None
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    return attention(query, key, value, attn_mask, dropout_p, scale)[0]


def attention(query: Tensor, key: Tensor, value: Tensor, mask: Any, dropout_p: float,
              scale: float) -> tuple[Tensor, Tensor]:
    """What scaled_dot_product_attention and MultiheadAttention share: the output and the
    attention weights (after dropout). ``mask``: None, bool (True = may attend) or float
    (added to the scores; -inf blocks). Rows that may attend to nothing get weights 0."""
    # One Function (minigrad/ops/attention.py): one graph node, the scores in one array.
    # a float mask tensor stays a Tensor (it keeps its history: its gradient is the
    # scores'); any other mask becomes an array, a float one in the scores' dtype
    if mask is not None and not (isinstance(mask, Tensor) and mask.dtype.kind == "f"):
        mask = mask.numpy() if isinstance(mask, Tensor) else np.asarray(mask)
        if mask.dtype != np.bool_:
            mask = mask.astype(np.result_type(query.dtype, key.dtype))
    _check_dropout_probability(dropout_p)
    keep = None
    if 0.0 < dropout_p < 1.0:  # drawn now, as F.dropout does (also when the graph is lazy)
        shape = ScaledDotProductAttention.output_shape(query, key, value, mask)[1]
        keep = state.rng.random(shape) >= dropout_p
    return ScaledDotProductAttention.apply(query, key, value, mask, float(scale), dropout_p,
                                           keep)


# --- losses ---------------------------------------------------------------------------------


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """(input - target)^2, averaged (or summed, or per element)."""
    _check_reduction(reduction, "mse_loss")
    if tuple(input.shape) != tuple(np.shape(target)):
        raise _error(f"mse_loss: input shape {tuple(input.shape)} and target shape "
                     f"{tuple(np.shape(target))} differ (broadcasting them is usually a bug)")
    return _reduce((input - target) ** 2, reduction)


def cross_entropy(input: Tensor, target: Any, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """-log softmax(input)[target], from logits (N, C) or (N, C, d1, ...) or (C,).
    ``target``: class indices (int64, shape (N,) / (N, d1, ...)) or class probabilities
    (float, the shape of ``input``). ``weight`` (C,): each class's weight; with class
    indices "mean" divides by the sum of the weights of the targets not ignored, as
    PyTorch does (with probabilities, by the number of positions)."""
    reduction = _legacy_reduction(size_average, reduce, reduction, "cross_entropy")
    _check_reduction(reduction, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise _error(f"cross_entropy: label_smoothing must be in [0, 1], got "
                     f"{label_smoothing}", ValueError)
    _check_floating(input, "cross_entropy", "input (the logits)")
    if input.ndim == 0:
        raise _error("cross_entropy: input (the logits) needs a class dim: shape (C,), (N, C) "
                     "or (N, C, d1, ...), got a 0-d tensor")
    weights = _class_weight(weight, input, "cross_entropy")
    if not isinstance(target, Tensor):
        target = np.asarray(target)
    if target.dtype.kind != "f":  # class indices
        labels = _class_targets(input, target, "cross_entropy", ignore_index)
        return CrossEntropy.apply(input, labels, ignore_index, label_smoothing, reduction,
                                  weights)
    if tuple(target.shape) != tuple(input.shape):
        raise _error(
            f"cross_entropy: target has dtype {target.dtype} and shape {tuple(target.shape)}; "
            "class-index targets must be integers (use .long()), probability targets must "
            f"have the input's shape {tuple(input.shape)}"
        )
    if not isinstance(target, Tensor):
        target = target.astype(input.dtype, copy=False)
    return CrossEntropy.apply(input, target, ignore_index, label_smoothing, reduction, weights)


def _binary_targets(input: Tensor, target: Any, who: str) -> Any:
    """Check a binary loss's input and target (probabilities or 0/1 labels, float, the
    input's shape); an array or list becomes an array of the input's dtype."""
    _check_floating(input, who)
    if isinstance(target, Tensor):
        _check_floating(target, who, "target")
    else:
        target = np.asarray(target, dtype=input.dtype)
    if tuple(target.shape) != tuple(input.shape):
        raise _error(
            f"{who}: target shape {tuple(target.shape)} differs from input shape "
            f"{tuple(input.shape)}; they must be equal (broadcasting them is usually a bug): "
            f"reshape the target to {tuple(input.shape)} if it holds one label per input"
        )
    return target


def _binary_weight(weight: Any, input: Tensor, who: str, name: str) -> np.ndarray | None:
    """A binary loss's ``weight`` or ``pos_weight``: None, or a Tensor that broadcasts to
    the input's shape (pos_weight: usually one per class, the last dim), without
    gradient; returned as an array of the input's dtype."""
    if weight is None:
        return None
    if isinstance(weight, str):  # minigrad's old third argument, PyTorch's is weight
        raise _error(f"{who}: the third argument is weight (as in PyTorch), got the string "
                     f"{weight!r}; pass the reduction by name: reduction={weight!r}", TypeError)
    if not isinstance(weight, Tensor):
        raise _error(f"{who}: {name} must be a Tensor, got {type(weight).__name__}; wrap it: "
                     f"{name}=mg.tensor(...)", TypeError)
    _check_floating(weight, who, name)
    try:
        fits = np.broadcast_shapes(tuple(weight.shape), tuple(input.shape)) == \
            tuple(input.shape)
    except ValueError:
        fits = False
    if not fits:
        raise _error(f"{who}: {name} of shape {tuple(weight.shape)} does not broadcast to the "
                     f"input's shape {tuple(input.shape)}" + (
                         f"; pos_weight holds one weight per class, shape "
                         f"({input.shape[-1]},)" if name == "pos_weight" and input.ndim else ""))
    if weight.requires_grad:
        raise _error(f"{who}: minigrad's {name} is a constant, without gradient; give "
                     f"{name}.detach()", RuntimeError)
    return weight.numpy().astype(input.dtype, copy=False)


def binary_cross_entropy(input: Tensor, target: Any, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """-(y log p + (1 - y) log(1 - p)) for probabilities p (log clamped at -100 as in
    PyTorch, so p = 0 or 1 gives a large finite loss), times ``weight`` (broadcast to the
    input) if given. Values outside [0, 1] raise when the loss is computed."""
    reduction = _legacy_reduction(size_average, reduce, reduction, "binary_cross_entropy")
    _check_reduction(reduction, "binary_cross_entropy")
    weight = _binary_weight(weight, input, "binary_cross_entropy", "weight")
    target = _binary_targets(input, target, "binary_cross_entropy")
    return BinaryCrossEntropy.apply(input, target, reduction, weight)


def binary_cross_entropy_with_logits(input: Tensor, target: Any, weight: Tensor | None = None,
                                     size_average: Any = None, reduce: Any = None,
                                     reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """binary_cross_entropy(sigmoid(x), y), computed from the logits x stably;
    ``pos_weight`` weighs the positive examples (one weight per class: more than 1 for a
    class with few positives), ``weight`` each loss."""
    who = "binary_cross_entropy_with_logits"
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _check_reduction(reduction, who)
    weight = _binary_weight(weight, input, who, "weight")
    pos_weight = _binary_weight(pos_weight, input, who, "pos_weight")
    target = _binary_targets(input, target, who)
    return BinaryCrossEntropyWithLogits.apply(input, target, reduction, weight, pos_weight)


def hinge_loss(input: Tensor, target: Any, margin: float = 1.0,
               reduction: str = "mean") -> Tensor:
    """The seed's max-margin loss for labels y in {-1, +1}: max(0, margin - y * score)."""
    _check_reduction(reduction, "hinge_loss")
    return _reduce((margin - input * target).relu(), reduction)


# --- more of PyTorch's functionals (issue 11), written in functional_ext.py ------------------

from .functional_ext import (  # noqa: E402, F401  (re-exported; they use the helpers above)
    adaptive_avg_pool1d, adaptive_avg_pool2d, avg_pool1d, conv1d, cosine_similarity, elu,
    group_norm, hardtanh, huber_loss, interpolate, kl_div, l1_loss, leaky_relu, max_pool1d,
    mish, nll_loss, normalize, one_hot, relu6, silu, smooth_l1_loss, softplus,
)

# --- the rest of PyTorch's pointwise activations, in functional_activations.py --------------

from .functional_activations import (  # noqa: E402, F401  (re-exported)
    celu, glu, hardsigmoid, hardswish, logsigmoid, selu, softmin, softsign, tanhshrink,
    threshold,
)

# --- issue 29: what the census of teaching code found missing, in functional_more.py ---------

from .functional_more import (  # noqa: E402, F401  (re-exported)
    ceil_mode_pool, conv_transpose1d, conv_transpose2d, dropout1d, dropout2d, dropout3d,
    instance_norm, pad_by_index, pixel_shuffle, pixel_unshuffle, prelu, rms_norm,
)

# --- round 3 of the census: in functional_layers_more.py and functional_losses_more.py -------

from . import functional_layers_more as _layers_more  # noqa: E402
from .functional_layers_more import *  # noqa: E402, F401, F403  (re-exported)
from . import functional_losses_more as _losses_more  # noqa: E402
from .functional_losses_more import *  # noqa: E402, F401, F403  (re-exported)

__all__ = [  # what `from minigrad.nn.functional import *` and the coverage list see
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "attention", "avg_pool1d", "avg_pool2d",
    "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "conv1d",
    "conv2d", "cosine_similarity", "cross_entropy", "dropout", "elu", "embedding", "gelu",
    "group_norm", "hardtanh", "hinge_loss", "huber_loss", "interpolate", "kl_div", "l1_loss",
    "layer_norm", "leaky_relu", "linear", "log_softmax", "max_pool1d", "max_pool2d", "mish",
    "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "relu", "relu6",
    "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss", "softmax",
    "softplus", "tanh", "unfold",
    "conv_transpose1d", "conv_transpose2d", "dropout1d", "dropout2d", "dropout3d",
    "instance_norm", "pixel_shuffle", "pixel_unshuffle", "prelu", "rms_norm",
    "celu", "glu", "hardsigmoid", "hardswish", "logsigmoid", "selu", "softmin", "softsign",
    "tanhshrink", "threshold",
] + _layers_more.__all__ + _losses_more.__all__  # round 3 of the census

# a name PyTorch has and minigrad leaves out on purpose says why (minigrad/unsupported.py)
__getattr__ = _module_getattr("torch.nn.functional")
