"""Op cases for minigrad/ops/convolution.py and minigrad/ops/normalization.py: conv2d,
max_pool2d, avg_pool2d and layer_norm through ``minigrad.nn.functional``.

The NumPy references below are written the slow, obvious way (a loop over output
positions) so that they read as the definition; the inputs are tiny.
"""

from __future__ import annotations

import warnings

import numpy as np
from op_cases import OpCase, distinct, real, torch

import minigrad.nn.functional as F

TF = torch.nn.functional if torch is not None else None

# float32 sums of a few dozen products: a little more slack than the elementwise ops
CONV_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


# --- NumPy references -------------------------------------------------------------------------


def _pair(value) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else tuple(value)


def _batched(fn):
    """Run a reference written for (N, C, H, W) on an unbatched (C, H, W) input too."""
    def run(x, *args, **kwargs):
        if x.ndim == 3:
            return fn(x[None], *args, **kwargs)[0]
        return fn(x, *args, **kwargs)
    return run


@_batched
def conv2d_reference(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """out[n, o, y, x] = bias[o] + sum over c, i, j of
    weight[o, c, i, j] * x_padded[n, c, y * sh + i * dh, x * sw + j * dw]
    (with groups: c runs over output channel o's block of input channels only)"""
    (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
    kh, kw = weight.shape[2:]
    if padding == "valid":
        pads = ((0, 0), (0, 0))
    elif padding == "same":  # an odd total puts the extra row / column at the end
        total_h, total_w = dh * (kh - 1), dw * (kw - 1)
        pads = ((total_h // 2, total_h - total_h // 2), (total_w // 2, total_w - total_w // 2))
    else:
        ph, pw = _pair(padding)
        pads = ((ph, ph), (pw, pw))
    x = np.pad(x, ((0, 0), (0, 0)) + pads)
    out_h = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1
    out_w = (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], weight.shape[0], out_h, out_w))
    for y in range(out_h):
        for z in range(out_w):
            window = x[:, :, y * sh:y * sh + dh * (kh - 1) + 1:dh,
                       z * sw:z * sw + dw * (kw - 1) + 1:dw]  # (N, C, kH, kW)
            blocks = window.reshape(len(x), groups, -1, kh, kw)  # (N, G, C/G, kH, kW)
            kernels = weight.reshape(groups, -1, *weight.shape[1:])  # (G, O/G, C/G, kH, kW)
            out[:, :, y, z] = np.einsum("ngcij,gocij->ngo", blocks, kernels).reshape(
                len(x), -1)
    return out if bias is None else out + bias[:, None, None]


def _pool_reference(x, kernel_size, stride, padding, reduce, fill):
    """Apply ``reduce(window, real)`` to each window of x padded with ``fill``; ``real``
    marks the window's elements that are not padding."""
    (kh, kw) = _pair(kernel_size)
    (sh, sw) = _pair(kernel_size if stride is None else stride)
    (ph, pw) = _pair(padding)
    pads = ((0, 0), (0, 0), (ph, ph), (pw, pw))
    padded = np.pad(x, pads, constant_values=fill)
    real = np.pad(np.ones(x.shape, dtype=bool), pads)
    out_h = (padded.shape[2] - kh) // sh + 1
    out_w = (padded.shape[3] - kw) // sw + 1
    out = np.zeros(x.shape[:2] + (out_h, out_w))
    for y in range(out_h):
        for z in range(out_w):
            rows, cols = slice(y * sh, y * sh + kh), slice(z * sw, z * sw + kw)
            out[:, :, y, z] = reduce(padded[:, :, rows, cols], real[:, :, rows, cols])
    return out


@_batched
def max_pool2d_reference(x, kernel_size, stride=None, padding=0):
    return _pool_reference(x, kernel_size, stride, padding,
                           lambda window, real: window.max(axis=(2, 3)), -np.inf)


@_batched
def avg_pool2d_reference(x, kernel_size, stride=None, padding=0, count_include_pad=True):
    def mean(window, real):
        count = window[0, 0].size if count_include_pad else real.sum(axis=(2, 3))
        return window.sum(axis=(2, 3)) / count
    return _pool_reference(x, kernel_size, stride, padding, mean, 0.0)


def layer_norm_reference(x, normalized_ndim, weight=None, bias=None, eps=1e-5):
    dims = tuple(range(x.ndim - normalized_ndim, x.ndim))
    mean = x.mean(axis=dims, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=dims, keepdims=True)  # biased, as in PyTorch
    out = (x - mean) / np.sqrt(variance + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


# --- the table ------------------------------------------------------------------------------


def torch_conv2d(*args, **kwargs):
    with warnings.catch_warnings():  # PyTorch warns that 'same' with an even kernel copies
        warnings.filterwarnings("ignore", "Using padding='same'", UserWarning)
        return TF.conv2d(*args, **kwargs)


def conv_case(id, inputs, **kwargs) -> OpCase:
    """conv2d(x, weight[, bias], **kwargs) on minigrad, PyTorch and the reference."""
    return OpCase(id, lambda *a: F.conv2d(*a, **kwargs),
                  lambda *a: conv2d_reference(*a, **kwargs), inputs,
                  torch_fn=lambda *a: torch_conv2d(*a, **kwargs), **CONV_TOLERANCE)


def pool_case(id, name, x, **kwargs) -> OpCase:
    """max_pool2d or avg_pool2d (``name``) of x with ``kwargs``."""
    reference = {"max_pool2d": max_pool2d_reference, "avg_pool2d": avg_pool2d_reference}[name]
    return OpCase(id, lambda x: getattr(F, name)(x, **kwargs),
                  lambda x: reference(x, **kwargs), (x,),
                  torch_fn=lambda x: getattr(TF, name)(x, **kwargs))


def layer_norm_case(id, inputs, normalized_shape, affine="both") -> OpCase:
    """layer_norm(x, normalized_shape, weight, bias) with ``affine`` saying which of
    weight and bias are inputs ("both", "weight", "bias" or "none")."""

    def split(x, *rest):
        weight = rest[0] if affine in ("both", "weight") else None
        bias = rest[-1] if affine in ("both", "bias") else None
        return x, weight, bias

    def minigrad_fn(*a):
        x, weight, bias = split(*a)
        return F.layer_norm(x, normalized_shape, weight, bias)

    def torch_fn(*a):
        x, weight, bias = split(*a)
        return TF.layer_norm(x, normalized_shape, weight, bias)

    def reference(*a):
        x, weight, bias = split(*a)
        return layer_norm_reference(x, len(normalized_shape), weight, bias)

    return OpCase(id, minigrad_fn, reference, inputs, torch_fn=torch_fn, **CONV_TOLERANCE)


CASES: list[OpCase] = [
    # --- conv2d ---
    conv_case("conv2d_bias", (real(2, 3, 5, 5), real(4, 3, 3, 3), real(4))),
    conv_case("conv2d_no_bias", (real(2, 2, 5, 4), real(3, 2, 2, 2))),
    conv_case("conv2d_stride_2", (real(1, 2, 7, 7), real(2, 2, 3, 3), real(2)), stride=2),
    conv_case("conv2d_padding_1", (real(2, 1, 4, 4), real(2, 1, 3, 3), real(2)), padding=1),
    conv_case("conv2d_same_odd_kernel", (real(1, 2, 5, 6), real(2, 2, 3, 3), real(2)),
              padding="same"),
    # an even kernel needs an odd total padding: PyTorch puts the extra at the bottom/right
    conv_case("conv2d_same_even_kernel", (real(1, 2, 5, 6), real(2, 2, 2, 4)),
              padding="same"),
    conv_case("conv2d_same_dilated", (real(1, 2, 5, 6), real(2, 2, 2, 3)),
              padding="same", dilation=(3, 1)),
    conv_case("conv2d_valid", (real(1, 2, 5, 6), real(3, 2, 3, 3), real(3)), padding="valid"),
    conv_case("conv2d_dilation_2", (real(1, 2, 7, 7), real(2, 2, 3, 3), real(2)), dilation=2),
    conv_case("conv2d_non_square", (real(2, 2, 6, 7), real(3, 2, 3, 2), real(3)),
              stride=(2, 1), padding=(1, 0)),
    conv_case("conv2d_stride_padding_dilation", (real(1, 2, 8, 7), real(2, 2, 2, 3)),
              stride=(1, 2), padding=(2, 1), dilation=(2, 1)),
    conv_case("conv2d_unbatched", (real(2, 5, 5), real(3, 2, 3, 3), real(3)), padding=1),
    # groups: output block g sees input block g; groups == in_channels is depthwise
    conv_case("conv2d_groups_2", (real(2, 4, 5, 5), real(6, 2, 3, 3), real(6)), groups=2),
    conv_case("conv2d_depthwise", (real(2, 3, 5, 6), real(3, 1, 3, 3), real(3)),
              padding=1, groups=3),
    conv_case("conv2d_depthwise_multiplier_2", (real(1, 3, 6, 6), real(6, 1, 3, 3)),
              stride=2, padding=1, groups=3),
    conv_case("conv2d_groups_dilation_stride", (real(1, 4, 7, 6), real(4, 2, 2, 3), real(4)),
              stride=(2, 1), dilation=(2, 1), groups=2),
    conv_case("conv2d_groups_unbatched", (real(4, 5, 5), real(8, 1, 3, 3)), groups=4),

    # --- max_pool2d (distinct values: no ties, not even after a finite-difference nudge) ---
    pool_case("max_pool2d_kernel_2", "max_pool2d", distinct(2, 2, 4, 6), kernel_size=2),
    pool_case("max_pool2d_overlap_padding", "max_pool2d", distinct(1, 2, 5, 5),
              kernel_size=3, stride=1, padding=1),
    pool_case("max_pool2d_kernel_3_stride_2", "max_pool2d", distinct(1, 2, 7, 7),
              kernel_size=3, stride=2),
    pool_case("max_pool2d_non_square", "max_pool2d", distinct(1, 2, 5, 7),
              kernel_size=(2, 3), stride=(2, 1), padding=(1, 0)),
    pool_case("max_pool2d_unbatched", "max_pool2d", distinct(2, 4, 4), kernel_size=2),
    # windows side by side (stride == kernel) that leave the last row and column out
    pool_case("max_pool2d_tiles_partly_covering", "max_pool2d", distinct(2, 2, 5, 7),
              kernel_size=2),
    pool_case("max_pool2d_tiles_padding", "max_pool2d", distinct(1, 2, 6, 5),
              kernel_size=2, padding=1),

    # --- avg_pool2d ---
    pool_case("avg_pool2d_kernel_2", "avg_pool2d", real(2, 2, 4, 6), kernel_size=2),
    pool_case("avg_pool2d_overlap", "avg_pool2d", real(1, 2, 5, 5), kernel_size=3, stride=1),
    pool_case("avg_pool2d_padding", "avg_pool2d", real(1, 2, 5, 5),
              kernel_size=3, stride=2, padding=1),
    pool_case("avg_pool2d_padding_count_exclude_pad", "avg_pool2d", real(1, 2, 5, 5),
              kernel_size=3, stride=2, padding=1, count_include_pad=False),
    pool_case("avg_pool2d_non_square_exclude_pad", "avg_pool2d", real(1, 2, 5, 6),
              kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), count_include_pad=False),
    pool_case("avg_pool2d_unbatched", "avg_pool2d", real(2, 4, 4), kernel_size=2),

    # --- layer_norm ---
    layer_norm_case("layer_norm_last_dim", (real(3, 5), real(5), real(5)), (5,)),
    layer_norm_case("layer_norm_two_dims", (real(2, 3, 4), real(3, 4), real(3, 4)), (3, 4)),
    layer_norm_case("layer_norm_no_affine", (real(3, 5),), (5,), affine="none"),
    layer_norm_case("layer_norm_two_dims_no_affine", (real(2, 3, 4),), (3, 4), affine="none"),
    layer_norm_case("layer_norm_weight_only", (real(2, 3, 4), real(4)), (4,), affine="weight"),
    layer_norm_case("layer_norm_bias_only", (real(2, 3, 4), real(3, 4)), (3, 4),
                    affine="bias"),
]
