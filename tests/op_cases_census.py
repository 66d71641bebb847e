"""Op cases for what issue 29's census of teaching code added: transposed convolutions
(one Function in minigrad/ops/convolution.py), the inverse trigonometric functions and
cumprod (minigrad/ops/trigonometry.py), the inverse and determinant of matrices
(minigrad/ops/linalg.py), and the composites (pixel shuffles, narrow, flip, tile,
index_add, meshgrid, instance and RMS norm, reflect/replicate/circular padding), each
called as a user would on minigrad and PyTorch. The NumPy references are written from
the definitions, the slow obvious way.
"""

from __future__ import annotations

import numpy as np
from op_cases import OpCase, distinct, real, torch
from op_cases_convolution import CONV_TOLERANCE, conv2d_reference

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.ops.movement import DiagonalBackward

TF = torch.nn.functional if torch is not None else None


def _on_diagonal(values, shape, offset, dim1, dim2):
    """Zeros of ``shape`` with ``values`` written on a diagonal (NumPy's, by hand)."""
    out = np.zeros(shape, dtype=values.dtype)
    for index in np.ndindex(*np.diagonal(out, offset, dim1, dim2).shape):
        *rest, k = index
        where = list(rest)
        row, col = (k, k + offset) if offset >= 0 else (k - offset, k)
        where.insert(min(dim1, dim2), row if dim1 < dim2 else col)
        where.insert(max(dim1, dim2), col if dim1 < dim2 else row)
        out[tuple(where)] = values[index]
    return out


def _ints(value, count):
    return (value,) * count if isinstance(value, int) else tuple(value)


def conv_transpose2d_reference(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                               groups=1, dilation=1):
    """Each input pixel x[n, c, h, w] adds x[n, c, h, w] * weight[c, o, i, j] at output
    position (h s + i d, w s + j d); then ``padding`` is cut from every side."""
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    (sh, sw), (ph, pw) = _ints(stride, 2), _ints(padding, 2)
    (oh, ow), (dh, dw) = _ints(output_padding, 2), _ints(dilation, 2)
    n, c, height, width = x.shape
    _, o, kh, kw = weight.shape
    o *= groups  # weight (C_in, C_out / groups, kH, kW): input block g feeds output block g
    full = np.zeros((n, o, (height - 1) * sh + dh * (kh - 1) + 1 + oh,
                     (width - 1) * sw + dw * (kw - 1) + 1 + ow))
    for h in range(height):
        for w in range(width):
            for i in range(kh):
                for j in range(kw):
                    full[:, :, h * sh + i * dh, w * sw + j * dw] += np.einsum(
                        "ngc,gco->ngo", x[:, :, h, w].reshape(n, groups, -1),
                        weight[:, :, i, j].reshape(groups, -1, weight.shape[1])).reshape(n, o)
    out = full[:, :, ph:full.shape[2] - ph, pw:full.shape[3] - pw]
    out = out if bias is None else out + bias[:, None, None]
    return out[0] if unbatched else out


def conv_transpose1d_reference(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                               groups=1, dilation=1):
    """The 2-D reference on a height-1 image."""
    out = conv_transpose2d_reference(x[..., None, :], weight[..., None, :], bias,
                                     (1, stride), (0, padding), (0, output_padding), groups,
                                     (1, dilation))
    return out[..., 0, :]


def conv1d_reference(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """The 2-D convolution reference on a height-1 image."""
    out = conv2d_reference(x[..., None, :], weight[..., None, :], bias, (1, stride),
                           (0, padding), (1, dilation), groups)
    return out[..., 0, :]


def pixel_shuffle_reference(x, r):
    """out[n, c, h r + i, w r + j] = x[n, c r^2 + i r + j, h, w]"""
    n, channels, height, width = x.shape
    out = np.zeros((n, channels // (r * r), height * r, width * r))
    for c in range(channels // (r * r)):
        for i in range(r):
            for j in range(r):
                out[:, c, i::r, j::r] = x[:, c * r * r + i * r + j]
    return out


def pixel_unshuffle_reference(x, r):
    """out[n, c r^2 + i r + j, h, w] = x[n, c, h r + i, w r + j]"""
    n, channels, height, width = x.shape
    out = np.zeros((n, channels * r * r, height // r, width // r))
    for c in range(channels):
        for i in range(r):
            for j in range(r):
                out[:, c * r * r + i * r + j] = x[:, c, i::r, j::r]
    return out


# a mask that puts zeros into cumprod's input (one row with one, one with two)
ZERO_MASK = np.array([[1, 0, 1, 1], [0, 1, 0, 1]], dtype=np.float32)


INDEX = np.array([0, 3, 0])  # index_add's rows (0 twice: the additions accumulate)


def index_add_reference(x, index, source):
    out = x.copy()
    for i, row in enumerate(index):
        out[row] += source[i]
    return out


def instance_norm_reference(x, weight=None, bias=None, eps=1e-5):
    """Each (sample, channel) normalised over its positions; then per-channel affine."""
    axes = tuple(range(2, x.ndim))
    out = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    return out if bias is None else out + bias.reshape(shape)


def rms_norm_reference(x, weight, eps, dims=1):
    axes = tuple(range(x.ndim - dims, x.ndim))
    out = x / np.sqrt((x * x).mean(axes, keepdims=True) + eps)
    return out if weight is None else out * weight


def _ceil_windows(size, kernel, stride, padding):
    """Window starts (in padded coordinates) in ceil mode, by PyTorch's rule."""
    count = -(-(size + 2 * padding - kernel) // stride) + 1
    if (count - 1) * stride >= size + padding:
        count -= 1
    return [i * stride for i in range(count)]


def ceil_avg_pool_reference(x, kernel, stride, padding, count_include_pad):
    """Each window's sum over the input, divided by its part inside the padded input
    (or inside the input itself, without count_include_pad)."""
    n, c, height, width = x.shape
    rows, cols = (_ceil_windows(height, kernel, stride, padding),
                  _ceil_windows(width, kernel, stride, padding))
    out = np.zeros((n, c, len(rows), len(cols)))
    for i, top in enumerate(rows):
        for j, left in enumerate(cols):
            r0, r1 = top - padding, min(top - padding + kernel, height + padding)
            c0, c1 = left - padding, min(left - padding + kernel, width + padding)
            inside = x[:, :, max(r0, 0):min(r1, height), max(c0, 0):min(c1, width)]
            if count_include_pad:
                count = (r1 - r0) * (c1 - c0)
            else:
                count = inside.shape[2] * inside.shape[3]
            out[:, :, i, j] = inside.sum(axis=(2, 3)) / count
    return out


def ceil_max_pool_reference(x, kernel, stride):
    n, c, height, width = x.shape
    rows, cols = _ceil_windows(height, kernel, stride, 0), _ceil_windows(width, kernel, stride, 0)
    return np.array([[[[x[a, b, r:r + kernel, q:q + kernel].max() for q in cols]
                       for r in rows] for b in range(c)] for a in range(n)])


def same(id, name, reference, inputs, *args, **kwargs) -> OpCase:
    """F.name(*tensors, *args, **kwargs) on both libraries (PyTorch spells it the same)."""
    return OpCase(id, lambda *a: getattr(F, name)(*a, *args, **kwargs),
                  lambda *a: reference(*a, *args, **kwargs), inputs,
                  torch_fn=lambda *a: getattr(TF, name)(*a, *args, **kwargs),
                  **CONV_TOLERANCE)


CASES = [
    # --- transposed convolution ---
    same("conv_transpose2d", "conv_transpose2d", conv_transpose2d_reference,
         (real(2, 3, 4, 5), real(3, 2, 3, 3), real(2))),
    same("conv_transpose2d_stride_padding", "conv_transpose2d", conv_transpose2d_reference,
         (real(2, 3, 4, 4), real(3, 2, 4, 4), real(2)), stride=2, padding=1),
    same("conv_transpose2d_output_padding", "conv_transpose2d", conv_transpose2d_reference,
         (real(1, 2, 3, 3), real(2, 3, 3, 3)), stride=2, padding=1, output_padding=1),
    same("conv_transpose2d_dilation_pairs", "conv_transpose2d", conv_transpose2d_reference,
         (real(1, 2, 3, 4), real(2, 2, 2, 3), real(2)), stride=(1, 2), dilation=(2, 1)),
    same("conv_transpose2d_unbatched", "conv_transpose2d", conv_transpose2d_reference,
         (real(2, 3, 3), real(2, 3, 2, 2)), stride=2),
    same("conv_transpose1d", "conv_transpose1d", conv_transpose1d_reference,
         (real(2, 3, 5), real(3, 2, 3), real(2)), stride=2, padding=1, output_padding=1),
    same("conv_transpose2d_groups_2", "conv_transpose2d", conv_transpose2d_reference,
         (real(2, 4, 3, 4), real(4, 3, 3, 3), real(6)), stride=2, padding=1, groups=2),
    same("conv_transpose2d_depthwise", "conv_transpose2d", conv_transpose2d_reference,
         (real(1, 3, 3, 3), real(3, 2, 2, 2)), stride=2, groups=3),
    same("conv_transpose1d_groups_2", "conv_transpose1d", conv_transpose1d_reference,
         (real(2, 4, 5), real(4, 1, 3), real(2)), stride=2, groups=2),
    same("conv1d_depthwise", "conv1d", conv1d_reference,
         (real(2, 4, 7), real(8, 1, 3), real(8)), stride=2, padding=1, groups=4),

    # --- pixel shuffle (movement only) ---
    same("pixel_shuffle", "pixel_shuffle", pixel_shuffle_reference, (real(2, 8, 2, 3),), 2),
    same("pixel_unshuffle", "pixel_unshuffle", pixel_unshuffle_reference,
         (real(2, 2, 4, 6),), 2),

    # --- narrow: a slice of one dimension ---
    OpCase("narrow", lambda x: x.narrow(1, 1, 2), lambda x: x[:, 1:3], (real(3, 4, 2),)),
    OpCase("narrow_negative_start", lambda x: x.narrow(-1, -3, 2), lambda x: x[..., -3:-1],
           (real(2, 5),)),

    # --- inverse trigonometry (inputs scaled into (-1, 1)) and running products ---
    OpCase("acos", lambda x: (x * 0.4).acos(), lambda x: np.arccos(x * 0.4), (real(3, 4),)),
    OpCase("asin", lambda x: (x * 0.4).asin(), lambda x: np.arcsin(x * 0.4), (real(3, 4),)),
    OpCase("atan", lambda x: x.atan(), np.arctan, (real(3, 4),)),
    OpCase("torch_acos", lambda x: mg.acos(x * 0.4), lambda x: np.arccos(x * 0.4),
           (real(5),), torch_fn=lambda x: torch.acos(x * 0.4)),
    OpCase("cumprod", lambda x: x.cumprod(1), lambda x: np.cumprod(x, 1), (real(2, 5),)),
    OpCase("cumprod_through_zeros", lambda x: (x * ZERO_MASK).cumprod(-1),
           lambda x: np.cumprod(x * ZERO_MASK, -1), (real(2, 4),),
           torch_fn=lambda x: (x * torch.tensor(ZERO_MASK, dtype=x.dtype)).cumprod(-1)),

    # --- composites of existing ops ---
    OpCase("flip", lambda x: x.flip(0, 2), lambda x: x[::-1, :, ::-1], (real(2, 3, 4),)),
    OpCase("tile", lambda x: x.tile((2, 1, 2)), lambda x: np.tile(x, (2, 1, 2)),
           (real(3, 2),)),
    OpCase("index_add", lambda x, s: x.index_add(0, INDEX, s),
           lambda x, s: index_add_reference(x, INDEX, s), (real(4, 3), real(3, 3)),
           torch_fn=lambda x, s: x.index_add(0, torch.tensor(INDEX), s)),
    OpCase("meshgrid_ij", lambda a, b: mg.meshgrid(a, b, indexing="ij")[0] * 2
           + mg.meshgrid(a, b, indexing="ij")[1],
           lambda a, b: np.meshgrid(a, b, indexing="ij")[0] * 2
           + np.meshgrid(a, b, indexing="ij")[1], (real(3), real(4)),
           torch_fn=lambda a, b: torch.meshgrid(a, b, indexing="ij")[0] * 2
           + torch.meshgrid(a, b, indexing="ij")[1]),
    OpCase("meshgrid_xy", lambda a, b: mg.meshgrid(a, b, indexing="xy")[0] * 2
           + mg.meshgrid(a, b, indexing="xy")[1],
           lambda a, b: np.meshgrid(a, b, indexing="xy")[0] * 2
           + np.meshgrid(a, b, indexing="xy")[1], (real(3), real(4)),
           torch_fn=lambda a, b: torch.meshgrid(a, b, indexing="xy")[0] * 2
           + torch.meshgrid(a, b, indexing="xy")[1]),
    OpCase("instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
           instance_norm_reference, (real(2, 3, 4, 5), real(3), real(3)),
           torch_fn=lambda x, w, b: TF.instance_norm(x, weight=w, bias=b), **CONV_TOLERANCE),
    OpCase("instance_norm_no_affine", lambda x: F.instance_norm(x),
           lambda x: instance_norm_reference(x), (real(2, 3, 6),),
           torch_fn=lambda x: TF.instance_norm(x), **CONV_TOLERANCE),
    OpCase("rms_norm", lambda x, w: F.rms_norm(x, 5, w, eps=1e-6),
           lambda x, w: rms_norm_reference(x, w, 1e-6), (real(2, 3, 5), real(5)),
           torch_fn=lambda x, w: TF.rms_norm(x, (5,), w, eps=1e-6), **CONV_TOLERANCE),
    OpCase("rms_norm_default_eps_two_dims", lambda x: F.rms_norm(x, (3, 4)),
           lambda x: rms_norm_reference(x, None, float(np.finfo(np.float32).eps), dims=2),
           (real(2, 3, 4),), torch_fn=lambda x: TF.rms_norm(x, (3, 4)), **CONV_TOLERANCE),
    same("pad_reflect", "pad", lambda x, pad, mode: np.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)),
                                                              mode="reflect"),
         (real(2, 3, 4, 5),), (1, 2, 2, 1), mode="reflect"),
    same("pad_replicate", "pad", lambda x, pad, mode: np.pad(x, ((0, 0), (0, 0), (2, 2)),
                                                                mode="edge"),
         (real(2, 3, 4),), (2, 2), mode="replicate"),
    same("pad_circular", "pad", lambda x, pad, mode: np.pad(x, ((0, 0), (0, 0), (1, 3)),
                                                               mode="wrap"),
         (real(2, 3, 4),), (1, 3), mode="circular"),

    # --- pooling with ceil_mode (a last, partial window) ---
    OpCase("avg_pool2d_ceil_mode", lambda x: F.avg_pool2d(x, 2, ceil_mode=True),
           lambda x: ceil_avg_pool_reference(x, 2, 2, 0, True), (real(2, 3, 5, 7),),
           torch_fn=lambda x: TF.avg_pool2d(x, 2, ceil_mode=True), **CONV_TOLERANCE),
    OpCase("avg_pool2d_ceil_mode_padding_excluded",
           lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
           lambda x: ceil_avg_pool_reference(x, 3, 2, 1, False), (real(1, 2, 6, 8),),
           torch_fn=lambda x: TF.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                            count_include_pad=False), **CONV_TOLERANCE),
    OpCase("max_pool2d_ceil_mode", lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True),
           lambda x: ceil_max_pool_reference(x, 3, 2), (distinct(1, 2, 6, 8),),
           torch_fn=lambda x: TF.max_pool2d(x, 3, 2, ceil_mode=True)),

    # --- more composites (issue 29's tail) ---
    OpCase("diagonal_offset", lambda x: x.diagonal(1, 1, 2),
           lambda x: np.diagonal(x, 1, 1, 2), (real(2, 3, 4),)),
    OpCase("diagonal_backward_placed",  # Diagonal's gradient as an op (create_graph=True)
           lambda g: DiagonalBackward.apply(g, (2, 3, 4), 1, 1, 2),
           lambda g: _on_diagonal(g, (2, 3, 4), 1, 1, 2), (real(2, 3),),
           torch_fn=lambda g: torch.zeros(2, 3, 4, dtype=g.dtype).diagonal_scatter(
               g, 1, 1, 2)),
    OpCase("select", lambda x: x.select(1, 2), lambda x: x[:, 2], (real(2, 3, 4),)),
    OpCase("unflatten", lambda x: x.unflatten(1, (2, -1)), lambda x: x.reshape(2, 2, 3),
           (real(2, 6),)),
    OpCase("logit", lambda x: (x * 0.2 + 0.5).logit(), lambda x: np.log(
        (x * 0.2 + 0.5) / (0.5 - x * 0.2)), (real(3, 4),)),
    OpCase("cosh_sinh", lambda x: x.cosh() + x.sinh() * 2, lambda x: np.cosh(x)
           + 2 * np.sinh(x), (real(3, 4),)),
    OpCase("tensordot", lambda a, b: mg.tensordot(a, b, 2), lambda a, b: np.tensordot(a, b, 2),
           (real(2, 3, 4), real(3, 4, 5)), torch_fn=lambda a, b: torch.tensordot(a, b, 2),
           **CONV_TOLERANCE),
    same("prelu", "prelu", lambda x, w: np.maximum(x, 0) + w[:, None] * np.minimum(x, 0),
         (real(2, 3, 4, away_from=(0.0,)), real(3))),

    # --- linear algebra (ops/linalg.py): inverses of x x^T + 1, well conditioned ---
    OpCase("inverse", lambda x: (x @ x.mT + mg.eye(3, dtype=x.dtype)).inverse(),
           lambda x: np.linalg.inv(x @ x.swapaxes(-1, -2) + np.eye(3)), (real(3, 3),),
           torch_fn=lambda x: (x @ x.mT + torch.eye(3, dtype=x.dtype)).inverse(),
           rtol=1e-4, atol=1e-5),
    OpCase("inverse_batched", lambda x: mg.inverse(x @ x.mT + mg.eye(3, dtype=x.dtype)),
           lambda x: np.linalg.inv(x @ x.swapaxes(-1, -2) + np.eye(3)), (real(2, 3, 3),),
           torch_fn=lambda x: torch.inverse(x @ x.mT + torch.eye(3, dtype=x.dtype)),
           rtol=1e-4, atol=1e-5),
    OpCase("det", lambda x: x.det(), np.linalg.det, (real(3, 3),), rtol=1e-4, atol=1e-5),
    OpCase("det_batched", lambda x: mg.det(x), np.linalg.det, (real(2, 4, 4),),
           torch_fn=lambda x: torch.det(x), rtol=1e-4, atol=1e-5),
]
