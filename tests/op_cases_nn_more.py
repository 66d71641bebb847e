"""Op cases for what issue 11 added to ``minigrad.nn.functional``: the pointwise
activations (minigrad/ops/activation_pointwise.py, one Function each) and the composed
functionals (losses, similarity, 1-D convolution and pooling, adaptive pooling,
interpolation, group norm), each called as a user would, on minigrad and PyTorch.

The NumPy references are written from the definitions, the slow obvious way.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from op_cases import OpCase, as_torch, distinct, positive, real, torch
from op_cases_activation_loss import TARGETS, TARGETS_IGNORED, TARGETS_SPATIAL
from op_cases_convolution import (CONV_TOLERANCE, avg_pool2d_reference, conv2d_reference,
                                  max_pool2d_reference)

import minigrad as mg
import minigrad.nn.functional as F

TF = torch.nn.functional if torch is not None else None
CLASS_WEIGHTS = np.array([0.2, 1.0, 3.0])


# --- NumPy references --------------------------------------------------------------------------


def softplus_reference(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def reduce(losses, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction](losses)


def nll_loss_reference(x, target, weight=None, ignore_index=-100, reduction="mean"):
    """One position at a time: -x[n, target[n], ...] * weight[target[n]]."""
    rows = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1]) if x.ndim > 1 else x[None]
    labels = np.asarray(target).reshape(-1)
    weight = np.ones(x.shape[1 if x.ndim > 1 else 0]) if weight is None else weight
    losses, weights = [], []
    for row, label in zip(rows, labels):
        w = 0.0 if label == ignore_index else weight[label]
        losses.append(0.0 if label == ignore_index else -row[label] * w)
        weights.append(w)
    losses = np.array(losses).reshape(np.shape(target))
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.sum() / sum(weights)


def smooth_l1_reference(x, y, beta=1.0, reduction="mean"):
    d = np.abs(x - y)
    return reduce(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def huber_reference(x, y, delta=1.0, reduction="mean"):
    d = np.abs(x - y)
    return reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def kl_div_reference(x, target, reduction="mean", log_target=False):
    pointwise = (np.exp(target) * (target - x) if log_target
                 else target * (np.log(target) - x))
    if reduction == "batchmean":
        return pointwise.sum() / x.shape[0]
    return reduce(pointwise, reduction)


def cosine_similarity_reference(x1, x2, dim=1, eps=1e-8):
    x1, x2 = np.broadcast_arrays(x1, x2)
    norm1 = np.maximum(np.sqrt((x1 * x1).sum(dim)), eps)
    norm2 = np.maximum(np.sqrt((x2 * x2).sum(dim)), eps)
    return (x1 * x2).sum(dim) / (norm1 * norm2)


def normalize_reference(x, p=2.0, dim=1, eps=1e-12):
    norm = (np.abs(x) ** p).sum(dim, keepdims=True) ** (1 / p)
    return x / np.maximum(norm, eps)


def as_2d(reference):
    """A 2-D reference run on (N, C, L) as (N, C, 1, L) (and (C, L) as (C, 1, L))."""
    def run(x, *args, **kwargs):
        if len(args) and hasattr(args[0], "ndim"):  # a conv weight (O, C, K) -> (O, C, 1, K)
            args = (args[0][:, :, None],) + args[1:]
        kwargs = {k: (1, v) if k in ("stride", "dilation", "kernel_size") and v is not None
                  else (0, v) if k == "padding" and not isinstance(v, str) else v
                  for k, v in kwargs.items()}
        return reference(x[..., None, :], *args, **kwargs)[..., 0, :]
    return run


def adaptive_avg_pool_reference(x, output_size):
    """PyTorch's windows: output i covers floor(i n / out) to ceil((i + 1) n / out)."""
    sizes = x.shape[-len(output_size):]
    outs = [n if o is None else o for n, o in zip(sizes, output_size)]
    out = np.zeros(x.shape[:-len(sizes)] + tuple(outs))
    for index in np.ndindex(*outs):
        window = tuple(slice(i * n // o, -(-(i + 1) * n // o))
                       for i, n, o in zip(index, sizes, outs))
        out[(...,) + index] = x[(...,) + window].mean(axis=tuple(range(-len(sizes), 0)))
    return out


def interpolate_reference(x, size, mode, align_corners=False, scale=None):
    """Each output position from its source coordinate, one position at a time."""
    sizes = x.shape[2:]
    out = np.zeros(x.shape[:2] + tuple(size))
    for index in np.ndindex(*size):
        coordinates = []
        for i, n, o, s in zip(index, sizes, size, scale or (None,) * len(size)):
            ratio = 1 / s if s else n / o
            if mode == "nearest":
                coordinates.append([(min(int(math.floor(i * ratio)), n - 1), 1.0)])
                continue
            if align_corners:
                src = i * (n - 1) / (o - 1) if o > 1 else 0.0
            else:
                src = max((i + 0.5) * ratio - 0.5, 0.0)
            low = min(int(math.floor(src)), n - 1)
            coordinates.append([(low, 1 - (src - low)), (min(low + 1, n - 1), src - low)])
        for corner in np.ndindex(*(len(c) for c in coordinates)):
            points = [coordinates[axis][k] for axis, k in enumerate(corner)]
            weight = np.prod([w for _, w in points])
            out[(...,) + index] += weight * x[(...,) + tuple(p for p, _ in points)]
    return out


def group_norm_reference(x, groups, weight=None, bias=None, eps=1e-5):
    n, c = x.shape[:2]
    grouped = x.reshape(n, groups, -1)
    mean = grouped.mean(-1, keepdims=True)
    var = ((grouped - mean) ** 2).mean(-1, keepdims=True)
    out = ((grouped - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    return out if bias is None else out + bias.reshape(shape)


# --- the table ------------------------------------------------------------------------------


def quietly(fn, *args, **kwargs):
    """PyTorch's advice (kl_div's "mean", an even kernel with padding="same") unsaid."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kwargs)


def same(id, name, reference, inputs, *args, **kwargs) -> OpCase:
    """F.name(*tensors, *args, **kwargs) on both libraries (PyTorch spells it the same)."""
    return OpCase(id, lambda *a: getattr(F, name)(*a, *args, **kwargs),
                  lambda *a: reference(*a, *args, **kwargs), inputs,
                  torch_fn=lambda *a: quietly(getattr(TF, name), *a, *args, **kwargs))


def with_targets(id, name, reference, inputs, target, **kwargs) -> OpCase:
    """F.name(x, target, **kwargs) with constant class indices (and weight) ."""
    torch_kwargs = {k: as_torch(v) if isinstance(v, np.ndarray) else v
                    for k, v in kwargs.items()}
    return OpCase(id, lambda x: getattr(F, name)(x, target, **{
                      k: mg.tensor(v.astype(x.dtype)) if isinstance(v, np.ndarray) else v
                      for k, v in kwargs.items()}),
                  lambda x: reference(x, target, **kwargs), inputs,
                  torch_fn=lambda x: getattr(TF, name)(x, as_torch(target), **{
                      k: v.to(x.dtype) if hasattr(v, "to") else v
                      for k, v in torch_kwargs.items()}))


def inplace(id, name, reference, x, **kwargs) -> OpCase:
    """F.name(x * 1, inplace=True): recorded in place on a non-leaf."""
    def run(functional):
        def apply(x):
            y = x * 1
            out = functional(y, inplace=True, **kwargs)
            assert out is y
            return out
        return apply
    return OpCase(id, run(getattr(F, name)), lambda x: reference(x), (x,),
                  torch_fn=run(getattr(TF, name) if TF is not None else None))


CASES: list[OpCase] = [
    # --- pointwise activations (one Function each) ---
    same("leaky_relu", "leaky_relu", lambda x: np.where(x > 0, x, 0.01 * x),
         (real(3, 4, away_from=(0,)),)),
    same("leaky_relu_slope", "leaky_relu", lambda x, s: np.where(x > 0, x, s * x),
         (real(3, 4, away_from=(0,)),), 0.3),
    inplace("leaky_relu_inplace", "leaky_relu", lambda x: np.where(x > 0, x, 0.2 * x),
            real(5, away_from=(0,)), negative_slope=0.2),
    same("elu", "elu", lambda x: np.where(x > 0, x, np.expm1(x)),
         (real(3, 4, away_from=(0,)),)),
    same("elu_alpha", "elu", lambda x, alpha: np.where(x > 0, x, alpha * np.expm1(x)),
         (real(2, 5, away_from=(0,)),), alpha=0.5),
    inplace("elu_inplace", "elu", lambda x: np.where(x > 0, x, np.expm1(x)),
            real(5, away_from=(0,))),
    same("softplus", "softplus", softplus_reference, (real(3, 4),)),
    same("softplus_beta_threshold", "softplus", softplus_reference,
         (real(3, 4, away_from=(0.5,)),), beta=2.0, threshold=1.0),
    same("silu", "silu", lambda x: x * sigmoid(x), (real(3, 4),)),
    inplace("silu_inplace", "silu", lambda x: x * sigmoid(x), real(5)),
    same("mish", "mish", lambda x: x * np.tanh(np.log1p(np.exp(x))), (real(3, 4),)),
    same("hardtanh", "hardtanh", lambda x: np.clip(x, -1, 1),
         (real(3, 4, away_from=(-1, 1)),)),
    same("hardtanh_range", "hardtanh", lambda x, lo, hi: np.clip(x, lo, hi),
         (real(3, 4, away_from=(-0.5, 1.5)),), -0.5, 1.5),
    inplace("hardtanh_inplace", "hardtanh", lambda x: np.clip(x, -1, 1),
            real(6, away_from=(-1, 1))),
    OpCase("relu6", lambda x: F.relu6(x * 4), lambda x: np.clip(x * 4, 0, 6),
           (real(3, 4, away_from=(0, 1.5)),), torch_fn=lambda x: TF.relu6(x * 4)),
    # (composites: nn/functional_activations.py; x * 2 reaches the kinks at +-3)
    OpCase("hardsigmoid", lambda x: F.hardsigmoid(x * 2), lambda x: np.clip(x / 3 + 0.5, 0, 1),
           (real(3, 4, away_from=(-1.5, 1.5)),), torch_fn=lambda x: TF.hardsigmoid(x * 2)),
    OpCase("hardswish", lambda x: F.hardswish(x * 2),
           lambda x: 2 * x * np.clip(x / 3 + 0.5, 0, 1),
           (real(3, 4, away_from=(-1.5, 1.5)),), torch_fn=lambda x: TF.hardswish(x * 2)),
    inplace("hardswish_inplace", "hardswish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
            real(5)),
    same("selu", "selu", lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x)), (real(3, 4, away_from=(0,)),)),
    same("celu_alpha", "celu", lambda x, alpha: np.where(x > 0, x, alpha * np.expm1(x / alpha)),
         (real(3, 4, away_from=(0,)),), alpha=0.5),
    inplace("celu_inplace", "celu", lambda x: np.where(x > 0, x, np.expm1(x)),
            real(5, away_from=(0,))),
    same("softsign", "softsign", lambda x: x / (1 + np.abs(x)), (real(3, 4, away_from=(0,)),)),
    same("tanhshrink", "tanhshrink", lambda x: x - np.tanh(x), (real(3, 4),)),
    same("threshold", "threshold", lambda x, t, v: np.where(x > t, x, v),
         (real(3, 4, away_from=(0.2,)),), 0.2, -1.0),
    same("logsigmoid", "logsigmoid", lambda x: -np.log1p(np.exp(-x)), (real(3, 4),)),
    same("softmin", "softmin", lambda x, dim: np.exp(-x) / np.exp(-x).sum(dim, keepdims=True),
         (real(3, 4),), dim=1),
    same("glu", "glu", lambda x, dim: x[..., :2] * sigmoid(x[..., 2:]), (real(3, 4),), dim=-1),

    # --- nll_loss (composed: a gather, constant weights) ---
    with_targets("nll_loss", "nll_loss", nll_loss_reference, (real(4, 3),), TARGETS),
    with_targets("nll_loss_weight_ignore", "nll_loss", nll_loss_reference, (real(4, 3),),
                 TARGETS_IGNORED, weight=CLASS_WEIGHTS),
    with_targets("nll_loss_sum", "nll_loss", nll_loss_reference, (real(4, 3),),
                 TARGETS_IGNORED, weight=CLASS_WEIGHTS, reduction="sum"),
    with_targets("nll_loss_none", "nll_loss", nll_loss_reference, (real(4, 3),),
                 TARGETS_IGNORED, reduction="none"),
    with_targets("nll_loss_ignore_real_class", "nll_loss", nll_loss_reference, (real(4, 3),),
                 TARGETS, ignore_index=2),
    with_targets("nll_loss_spatial_weight", "nll_loss", nll_loss_reference, (real(2, 3, 4),),
                 TARGETS_SPATIAL, weight=CLASS_WEIGHTS),
    with_targets("nll_loss_1d", "nll_loss", nll_loss_reference, (real(5),), np.array(3)),

    # --- regression losses ---
    same("l1_loss", "l1_loss", lambda x, y: np.abs(x - y).mean(), (real(3, 4), real(3, 4))),
    same("l1_loss_sum", "l1_loss", lambda x, y, reduction: np.abs(x - y).sum(),
         (real(3, 4), real(3, 4)), reduction="sum"),
    same("smooth_l1_loss", "smooth_l1_loss", smooth_l1_reference, (real(3, 4), real(3, 4))),
    same("smooth_l1_loss_beta_none", "smooth_l1_loss", smooth_l1_reference,
         (real(3, 4), real(3, 4)), beta=0.5, reduction="none"),
    same("huber_loss", "huber_loss", huber_reference, (real(3, 4), real(3, 4))),
    same("huber_loss_delta_sum", "huber_loss", huber_reference, (real(3, 4), real(3, 4)),
         delta=0.7, reduction="sum"),
    same("kl_div", "kl_div", kl_div_reference, (real(3, 4), positive(3, 4))),
    same("kl_div_batchmean", "kl_div", kl_div_reference, (real(3, 4), positive(3, 4)),
         reduction="batchmean"),
    same("kl_div_log_target_none", "kl_div", kl_div_reference, (real(3, 4), real(3, 4)),
         reduction="none", log_target=True),
    same("kl_div_log_target_sum", "kl_div", kl_div_reference, (real(2, 5), real(2, 5)),
         reduction="sum", log_target=True),

    # --- similarity, normalisation ---
    same("cosine_similarity", "cosine_similarity", cosine_similarity_reference,
         (real(3, 5), real(3, 5))),
    same("cosine_similarity_last_dim_broadcast", "cosine_similarity",
         cosine_similarity_reference, (real(2, 3, 4), real(4)), dim=-1),
    same("normalize", "normalize", normalize_reference, (real(3, 4),)),
    same("normalize_p1_dim0", "normalize", normalize_reference,
         (real(3, 4, away_from=(0,)),), p=1.0, dim=0),

    # --- conv1d, max_pool1d, avg_pool1d (the 2-D Functions on (N, C, 1, L)) ---
    same("conv1d_bias", "conv1d", as_2d(conv2d_reference), (real(2, 3, 7), real(4, 3, 3),
                                                             real(4))),
    same("conv1d_no_bias_stride_padding", "conv1d", as_2d(conv2d_reference),
         (real(2, 2, 8), real(3, 2, 2)), stride=2, padding=1),
    same("conv1d_dilation", "conv1d", as_2d(conv2d_reference), (real(1, 2, 9), real(2, 2, 3)),
         dilation=2),
    same("conv1d_same", "conv1d", as_2d(conv2d_reference), (real(1, 2, 6), real(2, 2, 4),
                                                             real(2)), padding="same"),
    same("conv1d_unbatched", "conv1d", lambda x, *a, **k: as_2d(conv2d_reference)(
        x[None], *a, **k)[0], (real(3, 6), real(2, 3, 3)), padding=1),
    same("max_pool1d", "max_pool1d", as_2d(max_pool2d_reference), (distinct(2, 3, 8),),
         kernel_size=2),
    same("max_pool1d_overlap_padding", "max_pool1d", as_2d(max_pool2d_reference),
         (distinct(1, 2, 7),), kernel_size=3, stride=1, padding=1),
    same("avg_pool1d", "avg_pool1d", as_2d(avg_pool2d_reference), (real(2, 3, 8),), kernel_size=2),
    same("avg_pool1d_exclude_pad", "avg_pool1d", as_2d(avg_pool2d_reference),
         (real(1, 2, 7),), kernel_size=3, stride=2, padding=1, count_include_pad=False),

    # --- adaptive average pooling (constant matrices along each axis) ---
    same("adaptive_avg_pool2d", "adaptive_avg_pool2d", adaptive_avg_pool_reference,
         (real(2, 3, 5, 7),), (2, 3)),
    same("adaptive_avg_pool2d_global", "adaptive_avg_pool2d",
         lambda x, o: adaptive_avg_pool_reference(x, (1, 1)), (real(2, 3, 4, 4),), 1),
    same("adaptive_avg_pool2d_keep_height_3d", "adaptive_avg_pool2d",
         adaptive_avg_pool_reference, (real(3, 4, 6),), (None, 4)),
    same("adaptive_avg_pool1d", "adaptive_avg_pool1d",
         lambda x, o: adaptive_avg_pool_reference(x, (o,)), (real(2, 3, 7),), 3),

    # --- interpolate ---
    same("interpolate_nearest_size", "interpolate",
         lambda x, **k: interpolate_reference(x, (5, 7), "nearest"), (real(1, 2, 3, 4),),
         size=(5, 7)),
    same("interpolate_nearest_scale_2", "interpolate",
         lambda x, **k: interpolate_reference(x, (6, 8), "nearest", scale=(2, 2)),
         (real(1, 2, 3, 4),), scale_factor=2),
    same("interpolate_bilinear", "interpolate",
         lambda x, **k: interpolate_reference(x, (5, 7), "bilinear"), (real(2, 2, 3, 4),),
         size=(5, 7), mode="bilinear"),
    same("interpolate_bilinear_align_corners", "interpolate",
         lambda x, **k: interpolate_reference(x, (5, 7), "bilinear", align_corners=True),
         (real(2, 2, 3, 4),), size=(5, 7), mode="bilinear", align_corners=True),
    same("interpolate_bilinear_downscale", "interpolate",
         lambda x, **k: interpolate_reference(x, (3, 2), "bilinear", scale=(0.5, 0.5)),
         (real(1, 2, 6, 5),), scale_factor=0.5, mode="bilinear"),
    same("interpolate_bilinear_recompute_scale_factor", "interpolate",
         lambda x, **k: interpolate_reference(x, (4, 7), "bilinear"),
         (real(1, 2, 3, 5),), scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
    same("interpolate_linear_3d", "interpolate",
         lambda x, **k: interpolate_reference(x, (9,), "linear", scale=(1.5,)),
         (real(2, 3, 6),), scale_factor=1.5, mode="linear"),
    same("interpolate_area", "interpolate",
         lambda x, **k: adaptive_avg_pool_reference(x, (2, 3)), (real(1, 2, 5, 6),),
         size=(2, 3), mode="area"),

    # --- group norm (the LayerNorm Function over (N, groups, rest)) ---
    OpCase("group_norm", lambda x, w, b: F.group_norm(x, 3, w, b),
           lambda x, w, b: group_norm_reference(x, 3, w, b),
           (real(2, 6, 3, 2), real(6), real(6)),
           torch_fn=lambda x, w, b: TF.group_norm(x, 3, w, b), **CONV_TOLERANCE),
    same("group_norm_no_affine_one_group", "group_norm", group_norm_reference,
         (real(3, 4, 5),), 1),
    same("group_norm_2d_input", "group_norm", group_norm_reference, (real(3, 6),), 2),
]
