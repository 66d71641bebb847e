"""Op cases for the layers of nn/layers_more.py and nn/functional_layers_more.py (round 3
of the census): max pooling with indices (and dilation), unpooling, adaptive max pooling,
embedding bags, embedding's scale_grad_by_freq (the ScaleGradient Function), local
response norm, bilinear, the implicit softmax dim and the in-place functional
activations, each called as a user would on minigrad and PyTorch. The NumPy references
are written from the definitions, the slow obvious way."""

from __future__ import annotations

import math
import warnings

import numpy as np
from op_cases import OpCase, as_torch, distinct, real, torch
from op_cases_convolution import CONV_TOLERANCE

import minigrad as mg
import minigrad.nn.functional as F

TF = torch.nn.functional if torch is not None else None


# --- references -------------------------------------------------------------------------------


def _pairs(*values):
    return [(v, v) if isinstance(v, int) else tuple(v) for v in values]


def im2col_reference(x, kernel, dilation=1, padding=0, stride=1):
    """Column l of (N, C kH kW, L): window l (row-major over the output grid), its rows
    (c, i, j) the pixels x_padded[c, oh s + i d, ow s + j d]."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _pairs(kernel, dilation, padding, stride)
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c, height, width = padded.shape
    out_h, out_w = (height - dh * (kh - 1) - 1) // sh + 1, (width - dw * (kw - 1) - 1) // sw + 1
    columns = np.zeros((n, c * kh * kw, out_h * out_w))
    for ch in range(c):
        for i in range(kh):
            for j in range(kw):
                for oh in range(out_h):
                    for ow in range(out_w):
                        columns[:, (ch * kh + i) * kw + j, oh * out_w + ow] = \
                            padded[:, ch, oh * sh + i * dh, ow * sw + j * dw]
    return columns


def col2im_reference(columns, output_size, kernel, dilation=1, padding=0, stride=1):
    """Each entry of the columns added to the pixel im2col_reference reads it from."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _pairs(kernel, dilation, padding, stride)
    height, width = output_size
    n, rows, _ = columns.shape
    c = rows // (kh * kw)
    padded = np.zeros((n, c, height + 2 * ph, width + 2 * pw))
    out_h = (height + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    out_w = (width + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    for ch in range(c):
        for i in range(kh):
            for j in range(kw):
                for oh in range(out_h):
                    for ow in range(out_w):
                        padded[:, ch, oh * sh + i * dh, ow * sw + j * dw] += \
                            columns[:, (ch * kh + i) * kw + j, oh * out_w + ow]
    return padded[:, :, ph:ph + height, pw:pw + width]


def _windows(size, kernel, stride, padding, dilation, ceil_mode=False):
    """Each window's input positions along one axis (those inside the input), PyTorch's
    output length (floor or ceil, the last window starting inside the input or its left
    padding)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    count = (math.ceil if ceil_mode else math.floor)(span / stride) + 1
    if ceil_mode and (count - 1) * stride >= size + padding:
        count -= 1
    return [[p for p in range(o * stride - padding, o * stride - padding + dilation * kernel,
                              dilation) if 0 <= p < size] for o in range(count)]


def max_pool_reference(x, kernel, stride=None, padding=0, dilation=1, ceil_mode=False):
    """(values, flat indices into each (H, W) plane): the first maximum of each window."""
    def pair(v):
        return (v, v) if isinstance(v, int) else tuple(v)

    kernel, padding, dilation = pair(kernel), pair(padding), pair(dilation)
    stride = kernel if stride is None else pair(stride)
    n, c, height, width = x.shape
    rows = _windows(height, kernel[0], stride[0], padding[0], dilation[0], ceil_mode)
    cols = _windows(width, kernel[1], stride[1], padding[1], dilation[1], ceil_mode)
    values = np.zeros((n, c, len(rows), len(cols)))
    indices = np.zeros((n, c, len(rows), len(cols)), dtype=np.int64)
    for a in range(n):
        for b in range(c):
            for i, rr in enumerate(rows):
                for j, cc in enumerate(cols):
                    places = [r * width + q for r in rr for q in cc]
                    best = max(places, key=lambda p: (x[a, b].flat[p], -p))
                    values[a, b, i, j], indices[a, b, i, j] = x[a, b].flat[best], best
    return values, indices


def max_pool1d_reference(x, kernel, stride=None, padding=0, dilation=1):
    values, indices = max_pool_reference(x[:, :, None], (1, kernel),
                                         None if stride is None else (1, stride),
                                         (0, padding), (1, dilation))
    return values[:, :, 0], indices[:, :, 0]


def unpool_reference(values, indices, shape):
    """Each value at its flat index of a zero (N, C, *shape) image."""
    out = np.zeros(values.shape[:2] + (math.prod(shape),))
    for a in range(values.shape[0]):
        for b in range(values.shape[1]):
            out[a, b, indices[a, b].reshape(-1)] = values[a, b].reshape(-1)
    return out.reshape(values.shape[:2] + tuple(shape))


def adaptive_max_pool_reference(x, out_h, out_w):
    """Windows rows floor(i H / out_h) to ceil((i + 1) H / out_h), the same for columns."""
    n, c, height, width = x.shape
    values = np.zeros((n, c, out_h, out_w))
    indices = np.zeros((n, c, out_h, out_w), dtype=np.int64)
    for i in range(out_h):
        rr = range(i * height // out_h, math.ceil((i + 1) * height / out_h))
        for j in range(out_w):
            cc = range(j * width // out_w, math.ceil((j + 1) * width / out_w))
            for a in range(n):
                for b in range(c):
                    places = [r * width + q for r in rr for q in cc]
                    best = max(places, key=lambda p: (x[a, b].flat[p], -p))
                    values[a, b, i, j], indices[a, b, i, j] = x[a, b].flat[best], best
    return values, indices


BAG_INPUT = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])  # index 4 and 2 twice, 0 twice
BAG_OFFSETS = np.array([0, 4, 4, 7])  # the second bag is empty
BAG_ROWS = np.array([[1, 2, 4], [4, 4, 0]])  # a 2-D input: one bag a row
DISTINCT_ROWS = np.array([[1, 3], [4, 0]])


def bag_reference(weight, input, offsets, mode, per_sample_weights=None, padding_idx=None):
    starts = list(offsets) + [len(input)]
    out = np.zeros((len(offsets), weight.shape[1]))
    for bag in range(len(offsets)):
        members = [i for i in range(starts[bag], starts[bag + 1]) if input[i] != padding_idx]
        if not members:
            continue
        rows = np.array([weight[input[i]] * (1 if per_sample_weights is None
                                              else per_sample_weights[i]) for i in members])
        out[bag] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


def local_response_norm_reference(x, size, alpha=1e-4, beta=0.75, k=1.0):
    """x_c / (k + alpha / size * sum of x_j^2 for j in c - size//2 .. c + (size-1)//2)^beta"""
    out = np.zeros_like(x)
    channels = x.shape[1]
    for c in range(channels):
        window = range(max(c - size // 2, 0), min(c + (size - 1) // 2, channels - 1) + 1)
        total = sum(x[:, j] ** 2 for j in window)
        out[:, c] = x[:, c] / (k + alpha / size * total) ** beta
    return out


def bilinear_reference(x1, x2, weight, bias):
    out = np.zeros(x1.shape[:-1] + (weight.shape[0],))
    for k in range(weight.shape[0]):
        out[..., k] = ((x1 @ weight[k]) * x2).sum(-1) + bias[k]
    return out


def softmax_reference(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def quietly(function):
    """``function`` with the deprecation warning of an implicit softmax dim silenced."""
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return function(*args)
    return run


# --- constants ---------------------------------------------------------------------------------

# max_pool2d(2) indices of a (2, 2, 4, 6) image: window (i, j) starts at 12 i + 2 j, and
# each index is one of its four places (0, 1, 6 or 7 further on)
UNPOOL_INDICES = (12 * np.arange(2)[:, None] + 2 * np.arange(3)) + \
    np.random.default_rng(0).choice([0, 1, 6, 7], (2, 2, 2, 3))
UNPOOL_1D_INDICES = np.array([[[1, 2, 5], [0, 3, 4]]])  # (1, 2, 3) into a length of 6

INT64 = ("float32", "int64")

CASES = [
    # --- max pooling with indices, dilation ---
    OpCase("max_pool2d_return_indices", lambda x: F.max_pool2d(x, 2, return_indices=True),
           lambda x: max_pool_reference(x, 2), (distinct(2, 3, 6, 5),),
           torch_fn=lambda x: TF.max_pool2d(x, 2, return_indices=True), dtypes=INT64),
    OpCase("max_pool2d_return_indices_overlapping_padded_ceil",
           lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
           lambda x: max_pool_reference(x, 3, 2, 1, ceil_mode=True), (distinct(1, 2, 6, 8),),
           torch_fn=lambda x: TF.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
           dtypes=INT64),
    OpCase("max_pool2d_dilation", lambda x: F.max_pool2d(x, (2, 3), 1, (1, 0), dilation=2),
           lambda x: max_pool_reference(x, (2, 3), 1, (1, 0), 2)[0], (distinct(2, 2, 5, 7),),
           torch_fn=lambda x: TF.max_pool2d(x, (2, 3), 1, (1, 0), dilation=2)),
    OpCase("max_pool2d_return_indices_unbatched",
           lambda x: F.max_pool2d(x, 2, return_indices=True),
           lambda x: tuple(t[0] for t in max_pool_reference(x[None], 2)),
           (distinct(3, 4, 4),), torch_fn=lambda x: TF.max_pool2d(x, 2, return_indices=True),
           dtypes=INT64),
    OpCase("max_pool1d_return_indices_dilation",
           lambda x: F.max_pool1d(x, 3, 2, 1, dilation=2, return_indices=True),
           lambda x: max_pool1d_reference(x, 3, 2, 1, 2), (distinct(2, 3, 9),),
           torch_fn=lambda x: TF.max_pool1d(x, 3, 2, 1, dilation=2, return_indices=True),
           dtypes=INT64),

    # --- unpooling ---
    OpCase("max_unpool2d", lambda v: F.max_unpool2d(v, mg.tensor(UNPOOL_INDICES), 2),
           lambda v: unpool_reference(v, UNPOOL_INDICES, (4, 6)), (real(2, 2, 2, 3),),
           torch_fn=lambda v: TF.max_unpool2d(v, as_torch(UNPOOL_INDICES), 2)),
    OpCase("max_unpool2d_output_size",
           lambda v: F.max_unpool2d(v, mg.tensor(UNPOOL_INDICES), 2, output_size=(5, 7)),
           lambda v: unpool_reference(v, UNPOOL_INDICES, (5, 7)),  # the same flat indices
           (real(2, 2, 2, 3),),
           torch_fn=lambda v: TF.max_unpool2d(v, as_torch(UNPOOL_INDICES), 2,
                                              output_size=(5, 7))),
    OpCase("max_pool2d_then_unpool",
           lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
           lambda x: unpool_reference(*max_pool_reference(x, 2), (4, 6)),
           (distinct(2, 2, 4, 6),),
           torch_fn=lambda x: TF.max_unpool2d(*TF.max_pool2d(x, 2, return_indices=True), 2)),
    OpCase("max_unpool1d", lambda v: F.max_unpool1d(v, mg.tensor(UNPOOL_1D_INDICES), 2),
           lambda v: unpool_reference(v[:, :, None], UNPOOL_1D_INDICES[:, :, None],
                                      (1, 6))[:, :, 0], (real(1, 2, 3),),
           torch_fn=lambda v: TF.max_unpool1d(v, as_torch(UNPOOL_1D_INDICES), 2)),

    # --- adaptive max pooling ---
    OpCase("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (3, 4), True),
           lambda x: adaptive_max_pool_reference(x, 3, 4), (distinct(2, 2, 7, 10),),
           torch_fn=lambda x: TF.adaptive_max_pool2d(x, (3, 4), True), dtypes=INT64),
    OpCase("adaptive_max_pool2d_global", lambda x: F.adaptive_max_pool2d(x, 1),
           lambda x: adaptive_max_pool_reference(x, 1, 1)[0], (distinct(2, 3, 4, 5),),
           torch_fn=lambda x: TF.adaptive_max_pool2d(x, 1)),
    OpCase("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True),
           lambda x: tuple(t[:, :, 0] for t in adaptive_max_pool_reference(x[:, :, None], 1,
                                                                             4)),
           (distinct(2, 3, 9),),
           torch_fn=lambda x: TF.adaptive_max_pool1d(x, 4, return_indices=True),
           dtypes=INT64),

    # --- embeddings ---
    OpCase("embedding_bag_mean_offsets",
           lambda w: F.embedding_bag(mg.tensor(BAG_INPUT), w, mg.tensor(BAG_OFFSETS)),
           lambda w: bag_reference(w, BAG_INPUT, BAG_OFFSETS, "mean"), (real(10, 3),),
           torch_fn=lambda w: TF.embedding_bag(as_torch(BAG_INPUT), w, as_torch(BAG_OFFSETS))),
    OpCase("embedding_bag_sum_padding_idx",
           lambda w: F.embedding_bag(mg.tensor(BAG_INPUT), w, mg.tensor(BAG_OFFSETS),
                                     mode="sum", padding_idx=2),
           lambda w: bag_reference(w, BAG_INPUT, BAG_OFFSETS, "sum", padding_idx=2),
           (real(10, 3),),
           torch_fn=lambda w: TF.embedding_bag(as_torch(BAG_INPUT), w, as_torch(BAG_OFFSETS),
                                               mode="sum", padding_idx=2)),
    OpCase("embedding_bag_max",
           lambda w: F.embedding_bag(mg.tensor(BAG_INPUT), w, mg.tensor(BAG_OFFSETS),
                                     mode="max"),
           lambda w: bag_reference(w, BAG_INPUT, BAG_OFFSETS, "max"), (distinct(10, 3),),
           torch_fn=lambda w: TF.embedding_bag(as_torch(BAG_INPUT), w, as_torch(BAG_OFFSETS),
                                               mode="max")),
    OpCase("embedding_bag_2d_per_sample_weights",
           lambda w, p: F.embedding_bag(mg.tensor(BAG_ROWS), w, mode="sum",
                                        per_sample_weights=p),
           lambda w, p: bag_reference(w, BAG_ROWS.reshape(-1), [0, 3], "sum", p.reshape(-1)),
           (real(5, 4), real(2, 3)),
           torch_fn=lambda w, p: TF.embedding_bag(as_torch(BAG_ROWS), w, mode="sum",
                                                  per_sample_weights=p)),
    # (indices without repeats: a repeated index's gradient is divided by its count, which
    # is by design not the derivative finite differences see; tests/test_nn_layers_more.py
    # compares that with PyTorch)
    OpCase("embedding_scale_grad_by_freq",
           lambda w: F.embedding(mg.tensor(DISTINCT_ROWS), w, scale_grad_by_freq=True),
           lambda w: w[DISTINCT_ROWS], (real(5, 4),),
           torch_fn=lambda w: TF.embedding(as_torch(DISTINCT_ROWS), w, scale_grad_by_freq=True)),

    # --- normalisation, bilinear, softmax ---
    OpCase("local_response_norm", lambda x: F.local_response_norm(x, 3, 0.5, 0.75, 1.5),
           lambda x: local_response_norm_reference(x, 3, 0.5, 0.75, 1.5), (real(2, 5, 3, 2),),
           torch_fn=lambda x: TF.local_response_norm(x, 3, 0.5, 0.75, 1.5)),
    OpCase("local_response_norm_even_size_3d", lambda x: F.local_response_norm(x, 4, 0.3),
           lambda x: local_response_norm_reference(x, 4, 0.3), (real(2, 6, 3),),
           torch_fn=lambda x: TF.local_response_norm(x, 4, 0.3)),
    OpCase("bilinear", F.bilinear, bilinear_reference,
           (real(2, 3, 4), real(2, 3, 5), real(6, 4, 5), real(6)), torch_fn=TF and TF.bilinear,
           **CONV_TOLERANCE),
    OpCase("softmax_implicit_dim_2d", quietly(lambda x: F.softmax(x)),
           lambda x: softmax_reference(x, 1), (real(3, 4),),
           torch_fn=quietly(lambda x: TF.softmax(x))),
    OpCase("log_softmax_implicit_dim_3d", quietly(lambda x: F.log_softmax(x)),
           lambda x: np.log(softmax_reference(x, 0)), (real(3, 2, 4),),
           torch_fn=quietly(lambda x: TF.log_softmax(x))),
    OpCase("softmax2d", lambda x: mg.nn.Softmax2d()(x), lambda x: softmax_reference(x, 1),
           (real(2, 3, 2, 2),), torch_fn=lambda x: torch.nn.Softmax2d()(x)),

    # --- in-place functional activations (on a non-leaf, as they must be) ---
    OpCase("relu_", lambda x: F.relu_(x * 1), lambda x: np.maximum(x, 0),
           (real(3, 4, away_from=(0.0,)),), torch_fn=lambda x: TF.relu_(x * 1)),
    OpCase("leaky_relu_", lambda x: F.leaky_relu_(x * 1, 0.2),
           lambda x: np.where(x > 0, x, 0.2 * x), (real(3, 4, away_from=(0.0,)),),
           torch_fn=lambda x: TF.leaky_relu_(x * 1, 0.2)),
    OpCase("elu_", lambda x: F.elu_(x * 1, 0.5),
           lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1)), (real(3, 4, away_from=(0.0,)),),
           torch_fn=lambda x: TF.elu_(x * 1, 0.5)),
    OpCase("hardtanh_", lambda x: F.hardtanh_(x * 1, -0.5, 1.0),
           lambda x: np.clip(x, -0.5, 1.0), (real(3, 4, away_from=(-0.5, 1.0)),),
           torch_fn=lambda x: TF.hardtanh_(x * 1, -0.5, 1.0)),

    # --- PyTorch's unfold (im2col) and fold (col2im), channel shuffle ---
    OpCase("unfold_im2col", lambda x: F.unfold(x, kernel_size=2), lambda x: im2col_reference(x, 2),
           (real(2, 3, 3, 4),), torch_fn=lambda x: TF.unfold(x, kernel_size=2)),
    OpCase("unfold_im2col_dilated_padded_strided_unbatched",
           lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
           lambda x: im2col_reference(x[None], (2, 3), (1, 2), 1, (2, 1))[0], (real(2, 4, 5),),
           torch_fn=lambda x: TF.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))),
    OpCase("fold_col2im_overlapping", lambda x: F.fold(x, (3, 4), 2),
           lambda x: col2im_reference(x, (3, 4), 2), (real(2, 8, 6),),
           torch_fn=lambda x: TF.fold(x, (3, 4), 2)),
    OpCase("fold_col2im_padded_strided", lambda x: F.fold(x, (4, 5), 3, padding=1, stride=2),
           lambda x: col2im_reference(x, (4, 5), 3, 1, 1, 2), (real(1, 18, 6),),
           torch_fn=lambda x: TF.fold(x, (4, 5), 3, padding=1, stride=2)),
    OpCase("channel_shuffle", lambda x: F.channel_shuffle(x, 2),
           lambda x: x.reshape(2, 2, 3, 5).transpose(0, 2, 1, 3).reshape(2, 6, 5),
           (real(2, 6, 5),), torch_fn=lambda x: TF.channel_shuffle(x, 2)),
]
