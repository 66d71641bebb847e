"""Convolution and pooling over images (N, C, H, W), built on strided windows.

``windows`` turns an image into every kernel-sized window at once, a view with no copy:
shape (N, C, OH, OW, kH, kW) (the same idea as ``Tensor.unfold``, in two dimensions).
Convolution is then one contraction of the windows with the weight (BLAS does the work),
and pooling a max or a mean over the last two dimensions. Every backward ends with
``add_windows_back`` ("col2im"): each window's gradient is added back where the window
came from, with a loop over the kH * kW kernel offsets, never over pixels.

Two fast paths keep the same loops over kernel offsets but move longer runs of memory
(NumPy is slow on many short rows): a stride-1 convolution, the usual one, works in
"wide rows" as wide as the padded image (``_wide_im2col``, ``_input_gradient_stride_1``),
and max pooling with windows side by side (stride == kernel) writes its gradient straight
into place (``_max_pool_tiles_backward``).

For gradients of gradients (``create_graph=True``) each op also has a ``tensor_backward``
of recorded ops: ``window_index`` reads the windows as an indexing (GetItem) and
IndexBackward adds them back, both differentiable to any order.
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ..higher_order import recomputed
from .indexing import IndexBackward
from .movement import Pad
from .reduce import row_sums

Pair = tuple[int, int]


def pad_image(x: np.ndarray, padding: tuple[Pair, Pair], value: float = 0.0) -> np.ndarray:
    """``x`` with ``padding`` ((top, bottom), (left, right)) of ``value`` around H and W."""
    if not any(before or after for before, after in padding):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(padding), constant_values=value)


def output_size(size: int, kernel: int, stride: int, padding: Pair, dilation: int = 1) -> int:
    """How many windows fit along a dimension (PyTorch's formula, rounding down)."""
    return (size + padding[0] + padding[1] - dilation * (kernel - 1) - 1) // stride + 1


def windows(x: np.ndarray, kernel: Pair, stride: Pair, dilation: Pair = (1, 1)) -> np.ndarray:
    """Every window of an (N, C, H, W) array as a view of shape (N, C, OH, OW, kH, kW).
    A dilated window spans d * (k - 1) + 1 pixels and takes every d-th of them."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    view = np.lib.stride_tricks.sliding_window_view(x, span, axis=(2, 3))
    return view[:, :, ::sh, ::sw, ::dh, ::dw]


def tiles(x: np.ndarray, kernel: Pair, stride: Pair) -> np.ndarray | None:
    """``windows`` when the windows tile a C-contiguous image exactly (stride == kernel,
    H and W multiples of it: the usual pooling): the same view made by a reshape, without
    sliding_window_view's Python (CNN benchmark, callgrind, 5 steps of two pools each:
    192.7 M -> 191.7 M instructions, ~100,000 a call).
    None when they don't."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw) = kernel, stride
    if (kh, kw) != (sh, sw) or h % kh or w % kw or not x.flags.c_contiguous:
        return None
    return x.reshape(n, c, h // kh, kh, w // kw, kw).transpose(0, 1, 2, 4, 3, 5)


def add_windows_back(grad_windows: np.ndarray, shape: tuple, stride: Pair,
                     dilation: Pair = (1, 1)) -> np.ndarray:
    """The backward of ``windows`` ("col2im"): an array of ``shape`` (N, C, H, W) where
    each element collects the gradients of every window it is in. ``grad_windows`` has
    shape (N, C, OH, OW, kH, kW); kernel offset (i, j) of all windows is one strided
    slab of the image, so one loop over the offsets adds everything."""
    *_, out_h, out_w, kh, kw = grad_windows.shape
    (sh, sw), (dh, dw) = stride, dilation
    grad = np.zeros(shape, dtype=grad_windows.dtype)
    for i in range(kh):
        rows = slice(i * dh, i * dh + sh * (out_h - 1) + 1, sh)
        for j in range(kw):
            cols = slice(j * dw, j * dw + sw * (out_w - 1) + 1, sw)
            grad[:, :, rows, cols] += grad_windows[..., i, j]
    return grad


def unpad_image(grad: np.ndarray, padding: tuple[Pair, Pair]) -> np.ndarray:
    """Cut the padding off a gradient of the padded image again."""
    (top, bottom), (left, right) = padding
    return grad[:, :, top:grad.shape[2] - bottom, left:grad.shape[3] - right]


def window_index(out_hw: Pair, kernel: Pair, stride: Pair, dilation: Pair = (1, 1)) -> tuple:
    """The index that reads every window of an (N, C, H, W) Tensor: ``x[window_index(...)]``
    is ``windows(x)`` as a copy, (N, C, OH, OW, kH, kW). For create_graph=True: a recorded
    GetItem, whose backward (IndexBackward, a scatter-add) is ``add_windows_back``, and
    both are differentiable to any order."""
    (out_h, out_w), (kh, kw), (sh, sw), (dh, dw) = out_hw, kernel, stride, dilation
    rows = np.arange(out_h).reshape(-1, 1, 1, 1) * sh + np.arange(kh).reshape(1, 1, -1, 1) * dh
    cols = np.arange(out_w).reshape(1, -1, 1, 1) * sw + np.arange(kw).reshape(1, 1, 1, -1) * dw
    return slice(None), slice(None), rows, cols


class Conv2d(Function):
    """f(x, W, b)[n, o, p, q] = b[o] + sum_{c,i,j} W[o, c, i, j] * x[n, c, sp + di, sq + dj]

    Cross-correlation of the padded x, as in PyTorch (the kernel is not flipped); s is the
    stride and d the dilation.

    forward:  the windows copied once into an (N, C kH kW, OH OW) array ("im2col": per
              image, one row per (c, i, j), one column per output position), then the
              weight as an (O, C kH kW) matrix times each image's matrix: one batched
              matrix product (BLAS) that lands directly in the (N, O, OH, OW) layout
              (stride 1: in rows as wide as the padded image, see ``_wide_im2col``)
    backward: grad_weight = sum over images of grad (O, OH OW) times im2col^T; every
              window's gradient = W^T grad, which ``add_windows_back`` adds into the
              image; grad_bias = grad summed over (N, OH, OW)
    groups:   the C input and O output channels split into ``groups`` blocks; output
              block g sees only input block g (W is (O, C / groups, kH, kW)), so each
              product above becomes one per block, batched as (groups, ...) matrices.
              groups == C is the depthwise convolution.
    """

    hint = "input (N, C, H, W), weight (out_channels, C, kH, kW), bias (out_channels,)"

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation, groups=1):
        ctx.save_for_backward(x, weight)  # im2col is redone in backward (it is 9x x's size)
        ctx.stride, ctx.padding, ctx.dilation, ctx.groups = stride, padding, dilation, groups
        out_h, out_w = _conv_output_hw(x, weight, stride, padding, dilation)
        if _is_stride_1(stride, dilation):  # rows as wide as the padded image: _wide_im2col
            cols, row_width = _wide_im2col(x, weight.shape, padding), x.shape[3] + sum(padding[1])
        else:
            cols, row_width = _im2col(x, weight.shape, stride, padding, dilation), out_w
        out = _weight_times(weight, cols, groups)  # (N, O, OH row_width)
        if bias is not None:
            out += bias[:, None]  # before dropping the junk columns: long rows are faster
        out = out.reshape(len(x), len(weight), out_h, row_width)[..., :out_w]
        return np.ascontiguousarray(out)  # (N, O, OH, OW) (a copy only in the wide layout)

    @staticmethod
    def output_shape(x, weight, bias, stride, padding, dilation, groups=1):
        return (x.shape[0], weight.shape[0], *_conv_output_hw(x, weight, stride, padding,
                                                               dilation))

    @staticmethod
    def output_dtype(x, weight, bias, stride, padding, dilation, groups=1):
        return np.result_type(*(a.dtype for a in (x, weight, bias) if a is not None))

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        needs_x, needs_weight, needs_bias = ctx.needs_input_grad[:3]
        stride, padding, dilation, groups = ctx.stride, ctx.padding, ctx.dilation, ctx.groups
        out_channels, _, kh, kw = weight.shape
        n, _, out_h, out_w = grad_output.shape
        (top, bottom), (left, right) = padding
        padded_shape = x.shape[:2] + (x.shape[2] + top + bottom, x.shape[3] + left + right)
        grad_3d = grad_output.reshape(n, out_channels, out_h * out_w)
        grad_x = grad_weight = grad_bias = None
        if _is_stride_1(stride, dilation):
            # grad_output in the padded image's layout (one spare row, as in _wide_im2col),
            # zero where the junk columns and rows were; its first OH rows are the wide rows
            grad_image = np.zeros((n, out_channels, padded_shape[2] + 1, padded_shape[3]),
                                  dtype=grad_output.dtype)
            grad_image[:, :, :out_h, :out_w] = grad_output
            grad_wide = grad_image.reshape(n, out_channels, -1)[:, :, :out_h * padded_shape[3]]
        if needs_weight:
            if _is_stride_1(stride, dilation):
                with np.errstate(invalid="ignore"):  # (see below)
                    grad_weight = _grad_weight(grad_wide, _wide_im2col(x, weight.shape, padding),
                                               groups)
            if grad_weight is None or not np.isfinite(grad_weight).all():
                # (the wide junk columns hold copies of x: an inf there times its zero
                # gradient is NaN, so a non-finite result is recomputed the plain way)
                grad_weight = _grad_weight(
                    grad_3d, _im2col(x, weight.shape, stride, padding, dilation), groups)
            grad_weight = grad_weight.reshape(weight.shape)
        if needs_bias:  # the sum over (N, OH, OW): over OH OW with BLAS (reduce.row_sums)
            grad_bias = row_sums(grad_3d).sum(axis=0)
        if needs_x:
            if _is_stride_1(stride, dilation):
                grad_padded = _input_gradient_stride_1(grad_image, weight, groups)
            else:  # W^T grad per block: (N, G, C/G kH kW, OH OW)
                grad_cols = np.matmul(_grouped_weight(weight, groups).transpose(0, 2, 1),
                                      _grouped(grad_3d, groups))
                grad_patches = grad_cols.reshape(n, x.shape[1], kh, kw, out_h, out_w)
                grad_patches = grad_patches.transpose(0, 1, 4, 5, 2, 3)  # (N, C, OH, OW, kH, kW)
                grad_padded = add_windows_back(grad_patches, padded_shape, stride, dilation)
            grad_x = unpad_image(grad_padded, padding)
        return grad_x, grad_weight, grad_bias, None, None, None, None

    # create_graph=True: the gradients of the same convolution written with recorded ops
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        return recomputed(ctx, (grad_output,), _conv2d_recorded)


def _conv2d_recorded(x, weight, bias, stride, padding, dilation, groups=1):
    """conv2d from recorded ops (a Pad, the windows read by indexing, one matmul per channel
    block), for its second derivatives (higher_order.recomputed)."""
    n, channels = x.shape[:2]
    out_channels, _, kh, kw = weight.shape
    out_h, out_w = _conv_output_hw(x, weight, stride, padding, dilation)
    padded = Pad.apply(x, ((0, 0), (0, 0)) + tuple(padding))
    patches = padded[window_index((out_h, out_w), (kh, kw), stride, dilation)]
    # (N, C, OH, OW, kH, kW) -> (N, G, OH OW, C/G kH kW): one row per window and block
    patches = patches.reshape(n, groups, channels // groups, out_h, out_w, kh, kw)
    patches = patches.permute(0, 1, 3, 4, 2, 5, 6).reshape(n, groups, out_h * out_w, -1)
    blocks = weight.reshape(groups, out_channels // groups, -1)  # (G, O/G, C/G kH kW)
    out = (patches @ blocks.transpose(-1, -2)).permute(0, 1, 3, 2)  # (N, G, O/G, OH OW)
    out = out.reshape(n, out_channels, out_h, out_w)
    return out if bias is None else out + bias.reshape(-1, 1, 1)


def _grouped(rows: np.ndarray, groups: int) -> np.ndarray:
    """(N, G k, L) -> (N, G, k, L): the rows of each channel block together."""
    return rows.reshape(rows.shape[0], groups, -1, rows.shape[-1])


def _grouped_weight(weight: np.ndarray, groups: int) -> np.ndarray:
    """(O, C/G, kH, kW) -> (G, O/G, C/G kH kW): one weight matrix per channel block."""
    return weight.reshape(groups, len(weight) // groups, -1)


def _is_stride_1(stride: Pair, dilation: Pair) -> bool:
    """Whether the "wide rows" layout of ``_wide_im2col`` applies."""
    return stride == (1, 1) and dilation == (1, 1)


def _weight_times(weight: np.ndarray, cols: np.ndarray, groups: int) -> np.ndarray:
    """W times every image's im2col matrix, (N, C kH kW, L) -> (N, O, L): one batched
    matrix product (BLAS), per channel block when ``groups`` > 1."""
    if groups == 1:
        return np.matmul(weight.reshape(len(weight), -1), cols)
    # (G, O/G, C/G kH kW) times (N, G, C/G kH kW, L), per block
    return np.matmul(_grouped_weight(weight, groups), _grouped(cols, groups)).reshape(
        len(cols), len(weight), -1)


def _grad_weight(grad_3d: np.ndarray, cols: np.ndarray, groups: int) -> np.ndarray:
    """sum over images of grad (O, L) times im2col^T (L, C kH kW): (G, O/G, C/G kH kW)."""
    return np.matmul(_grouped(grad_3d, groups), _grouped(cols, groups).transpose(0, 1, 3, 2)
                     ).sum(axis=0)


def _input_gradient_stride_1(grad_image: np.ndarray, weight: np.ndarray,
                             groups: int = 1) -> np.ndarray:
    """The gradient of the padded input of a stride-1 convolution: ``add_windows_back``
    of every window's gradient, arranged so that each kernel offset adds ONE long run
    per image instead of C OH short rows (NumPy is slow on many short rows).

    ``grad_image`` is grad_output laid out like the padded image: (N, O, Hp + 1, Wp),
    zero outside the first OH rows and OW columns. Kernel offset (i, j) of output position
    (r, c) lands on image element (r + i, c + j), that is flat position (i Wp + j) +
    (r Wp + c): W^T grad for that offset, in this layout, is a run starting at i Wp + j.
    With W's rows ordered (i, j, c), the runs of all C channels of one offset are one
    contiguous block of C (Hp + 1) Wp elements, added at once (CNN benchmark: the second
    convolution's backward 10% faster than with per-channel runs). The zeros of
    grad_image land on other elements (adding nothing), and no run reaches into the next
    channel's spare row."""
    n, out_channels, rows, width = grad_image.shape
    _, channels_per_group, kh, kw = weight.shape
    size = channels_per_group * rows * width  # one image's channels of one group, flat
    # (G, kH kW C/G, O/G): W^T per channel block, rows in (i, j, c) order
    weight_t = weight.reshape(groups, -1, channels_per_group, kh, kw).transpose(0, 3, 4, 2, 1)
    runs = np.matmul(weight_t.reshape(groups, kh * kw * channels_per_group, -1),
                     grad_image.reshape(n, groups, out_channels // groups, rows * width))
    runs = runs.reshape(n, groups, kh * kw, size)  # (images, groups, offsets, run)
    flat = np.zeros((n, groups, size + (kh - 1) * width + kw - 1), dtype=runs.dtype)
    for i in range(kh):
        for j in range(kw):
            start = i * width + j
            flat[:, :, start:start + size] += runs[:, :, i * kw + j]
    grad = flat[:, :, :size].reshape(n, groups * channels_per_group, rows, width)
    return grad[:, :, :rows - 1]  # without the spare row


def _wide_im2col(x: np.ndarray, weight_shape: tuple, padding: tuple[Pair, Pair]
                 ) -> np.ndarray:
    """im2col of a stride-1 convolution in "wide rows": (N, C kH kW, OH Wp), Wp the padded
    width. Output position (r, c) reads the padded image at (r + i, c + j), flat position
    (r Wp + c) + (i Wp + j): with rows as wide as the image, kernel offset (i, j) of every
    window is ONE contiguous run of OH Wp elements starting at i Wp + j. The copy moves
    C kH kW long runs per image where ``_im2col`` moves C kH kW OH rows of OW (CNN
    benchmark, callgrind: 3x fewer instructions for this copy). The last kW - 1 columns of each row
    are junk (windows wrapping into the next row): their outputs are dropped, and their
    gradient is zero."""
    n, channels, height, width = x.shape
    (top, bottom), (left, right) = padding
    kh, kw = weight_shape[2:]
    padded_h, padded_w = height + top + bottom, width + left + right
    length = (padded_h - kh + 1) * padded_w
    # one spare row of zeros below the image: the last run reads kW - 1 elements past it
    padded = np.zeros((n, channels, padded_h + 1, padded_w), dtype=x.dtype)
    padded[:, :, top:top + height, left:left + width] = x
    flat = padded.reshape(n, channels, -1)
    cols = np.empty((n, channels, kh, kw, length), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = flat[:, :, i * padded_w + j:i * padded_w + j + length]
    return cols.reshape(n, channels * kh * kw, length)


def _im2col(x: np.ndarray, weight_shape: tuple, stride: Pair, padding: tuple[Pair, Pair],
            dilation: Pair) -> np.ndarray:
    """Every window of the padded x, one copy: (N, C kH kW, OH OW). In this order each
    kernel offset (c, i, j) is a whole shifted image, so the copy moves long rows."""
    patches = windows(pad_image(x, padding), weight_shape[2:], stride, dilation)
    n, c, out_h, out_w, kh, kw = patches.shape
    return np.ascontiguousarray(patches.transpose(0, 1, 4, 5, 2, 3)).reshape(
        n, c * kh * kw, out_h * out_w)


def _conv_output_hw(x, weight, stride, padding, dilation) -> tuple[int, int]:
    return (output_size(x.shape[2], weight.shape[2], stride[0], padding[0], dilation[0]),
            output_size(x.shape[3], weight.shape[3], stride[1], padding[1], dilation[1]))


def _pool_output_shape(x, kernel, stride, padding) -> tuple:
    n, c, h, w = x.shape
    return (n, c, output_size(h, kernel[0], stride[0], (padding[0], padding[0])),
            output_size(w, kernel[1], stride[1], (padding[1], padding[1])))


def _symmetric(padding: Pair) -> tuple[Pair, Pair]:
    """Pooling's (ph, pw) as ((top, bottom), (left, right))."""
    return (padding[0], padding[0]), (padding[1], padding[1])


class MaxPool2d(Function):
    """out[n, c, p, q] = the largest element of window (p, q); padding counts as -inf.

    backward: each window's gradient goes to ONE element, the first maximal one in
    row-major window order, as in PyTorch (overlapping windows add up). Note that this
    differs from minigrad's ``max`` reduction, which splits the gradient evenly between
    tied maxima. (A window holding NaN outputs NaN; its gradient goes to the first NaN,
    where PyTorch picks the last.)"""

    hint = "input (N, C, H, W); kernel, stride and padding are (height, width) pairs"

    @staticmethod
    def forward(ctx, x, kernel, stride, padding):
        padding = _symmetric(padding)
        lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        padded = pad_image(x, padding, lowest)
        patches = tiles(padded, kernel, stride)  # (N, C, OH, OW, kH, kW), a view
        if patches is None:
            patches = windows(padded, kernel, stride)
        # A running maximum over the kernel offsets: kH * kW vectorised steps over the
        # output (never a loop over windows). winner = the offset i * kW + j of the first
        # maximal element: a later element wins only if strictly larger. Every step is
        # branch-free arithmetic (a masked write would cost two to four times more).
        kh, kw = kernel
        best = patches[..., 0, 0].copy()
        winner = np.zeros(best.shape, dtype=np.uint8 if kh * kw <= 256 else np.int32)
        for offset in range(1, kh * kw):
            candidate = patches[..., offset // kw, offset % kw]
            larger = candidate > best
            # offsets only grow, so "offset where larger" is a maximum; the bools read as
            # 0/1 bytes need no conversion (CNN benchmark: 15% less time than a product)
            np.maximum(winner, larger.view(np.uint8) * winner.dtype.type(offset), out=winner)
            np.maximum(best, candidate, out=best)  # NaN wins: it propagates
        if x.dtype.kind == "f" and np.isnan(best).any():
            winner = _first_nan_wins(patches, winner)
        ctx.save_for_backward(winner)
        ctx.padded_shape, ctx.kernel, ctx.stride, ctx.padding = (
            padded.shape, kernel, stride, padding)
        return best

    @staticmethod
    def output_shape(x, kernel, stride, padding):
        return _pool_output_shape(x, kernel, stride, padding)

    @staticmethod
    def output_dtype(x, kernel, stride, padding):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        (winner,) = ctx.saved_tensors
        kh, kw = ctx.kernel
        if ctx.stride == ctx.kernel:  # windows side by side: each element is in one at most
            return _max_pool_tiles_backward(grad_output, winner, ctx), None, None, None
        # each window's gradient goes to its winner: offset by offset, grad_output where
        # that offset won (times a 0/1 mask, branch-free), added back where it came from
        grad_patches = np.empty(grad_output.shape + (kh, kw), dtype=grad_output.dtype)
        for offset in range(kh * kw):
            np.multiply(grad_output, winner == offset,
                        out=grad_patches[..., offset // kw, offset % kw])
        grad_padded = add_windows_back(grad_patches, ctx.padded_shape, ctx.stride)
        return unpad_image(grad_padded, ctx.padding), None, None, None

    # create_graph=True: the same scatter to the winners, as a recorded op (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        (winner,) = ctx.saved_tensors
        n, channels, out_h, out_w = grad_output.shape
        kw, (sh, sw) = ctx.kernel[1], ctx.stride
        rows = np.arange(out_h).reshape(-1, 1) * sh + winner // kw  # where each winner is
        cols = np.arange(out_w) * sw + winner % kw
        index = (np.arange(n).reshape(-1, 1, 1, 1), np.arange(channels).reshape(-1, 1, 1),
                 rows, cols)
        grad_padded = IndexBackward.apply(grad_output, input_shape=ctx.padded_shape,
                                          index=index)
        return unpad_image(grad_padded, ctx.padding), None, None, None


def _max_pool_tiles_backward(grad_output: np.ndarray, winner: np.ndarray, ctx) -> np.ndarray:
    """MaxPool2d's backward when the windows tile the image (stride == kernel, the usual
    pooling): the (N, C, OH, kH, OW, kW) view of the image gradient holds every window
    side by side, so each offset's 0/1-masked gradient is written straight into place,
    with no (N, C, OH, OW, kH, kW) temporary to add back (CNN benchmark: a third of the
    time of the general backward)."""
    n, channels, out_h, out_w = grad_output.shape
    (kh, kw), (_, height, width) = ctx.kernel, ctx.padded_shape[1:]
    covered = out_h * kh == height and out_w * kw == width
    grad = (np.empty if covered else np.zeros)(ctx.padded_shape, dtype=grad_output.dtype)
    tiles = grad[:, :, :out_h * kh, :out_w * kw].reshape(n, channels, out_h, kh, out_w, kw)
    for offset in range(kh * kw):
        np.multiply(grad_output, winner == offset, out=tiles[:, :, :, offset // kw, :, offset % kw])
    return unpad_image(grad, ctx.padding)


def _first_nan_wins(patches: np.ndarray, winner: np.ndarray) -> np.ndarray:
    """Windows holding NaN output NaN; their gradient goes to the first NaN (rare: only
    then is this slower path taken)."""
    kh, kw = patches.shape[-2:]
    winner = winner.copy()
    found = np.zeros(winner.shape, dtype=bool)
    for offset in range(kh * kw):
        nan = np.isnan(patches[..., offset // kw, offset % kw]) & ~found
        winner[nan] = offset
        found |= nan
    return winner


class AvgPool2d(Function):
    """out[n, c, p, q] = the mean of window (p, q). Padding counts as zeros; the divisor is
    kH * kW, or with ``count_include_pad=False`` the number of real (unpadded) elements
    in that window, as in PyTorch.

    backward: each element of a window gets grad_output / divisor (overlaps add up)."""

    hint = "input (N, C, H, W); kernel, stride and padding are (height, width) pairs"

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, count_include_pad):
        if x.dtype.kind != "f":
            raise TypeError(f"avg_pool2d needs a floating-point input, got {x.dtype}; "
                            "convert it with .float() first")
        padding = _symmetric(padding)
        padded = pad_image(x, padding)
        patches = windows(padded, kernel, stride)
        out_h, out_w = patches.shape[2:4]
        if count_include_pad:
            divisor = np.array(kernel[0] * kernel[1], dtype=x.dtype)
        else:  # real rows times real columns of each window
            rows = _real_counts(x.shape[2], kernel[0], stride[0], padding[0][0], out_h)
            cols = _real_counts(x.shape[3], kernel[1], stride[1], padding[1][0], out_w)
            divisor = np.outer(rows, cols).astype(x.dtype)
        ctx.divisor, ctx.padded_shape = divisor, padded.shape
        ctx.kernel, ctx.stride, ctx.padding = kernel, stride, padding
        return patches.sum(axis=(-2, -1)) / divisor

    @staticmethod
    def output_shape(x, kernel, stride, padding, count_include_pad):
        return _pool_output_shape(x, kernel, stride, padding)

    @staticmethod
    def output_dtype(x, kernel, stride, padding, count_include_pad):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        share = (grad_output / ctx.divisor).astype(grad_output.dtype, copy=False)
        # every element of a window gets the same share: a broadcast view, no copy
        grad_patches = np.broadcast_to(share[..., None, None], share.shape + tuple(ctx.kernel))
        grad_padded = add_windows_back(grad_patches, ctx.padded_shape, ctx.stride)
        return unpad_image(grad_padded, ctx.padding), None, None, None, None

    # create_graph=True: the same shares added back, as a recorded op (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        share = grad_output / ctx.divisor
        grad_patches = share.reshape(share.shape + (1, 1)).expand(*share.shape, *ctx.kernel)
        index = window_index(share.shape[2:], ctx.kernel, ctx.stride)
        grad_padded = IndexBackward.apply(grad_patches, input_shape=ctx.padded_shape,
                                          index=index)
        return unpad_image(grad_padded, ctx.padding), None, None, None, None


def _real_counts(size: int, kernel: int, stride: int, before: int, count: int) -> np.ndarray:
    """For each of ``count`` windows along a dimension of ``size`` padded by ``before``
    in front: how many of its ``kernel`` positions fall on the real input."""
    starts = np.arange(count) * stride - before  # in unpadded coordinates
    return np.minimum(starts + kernel, size) - np.maximum(starts, 0)


class ConvTranspose2d(Function):
    """f(x, W, b) = the gradient of conv2d with respect to its input, applied to x

    x (N, C_in, H, W), W (C_in, C_out, kH, kW): each input pixel x[n, c, h, w] adds
    x[n, c, h, w] * W[c, :, :, :] into the output at (s h, s w) (spaced by the dilation d),
    then ``padding`` is cut from each side; ``output_padding`` extra rows/columns at the
    end (zero before the bias) pick one of the sizes a strided conv2d maps to one size.

    forward:  every pixel's (C_out, kH, kW) contribution at once (W^T x, a matmul), added
              into place by ``add_windows_back``
    backward: grad_x = conv2d(grad, W) (the windows of the padded gradient against W),
              grad_W = sum over images and pixels of x times those windows
    groups:   W is (C_in, C_out / groups, kH, kW); input block g feeds output block g only,
              so the products above are batched over (groups, ...) blocks
    """

    hint = "input (N, C_in, H, W), weight (C_in, C_out / groups, kH, kW), bias (C_out,)"

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, output_padding, dilation, groups=1):
        ctx.save_for_backward(x, weight)
        ctx.stride, ctx.padding, ctx.output_padding, ctx.dilation = (stride, padding,
                                                                      output_padding, dilation)
        ctx.groups = groups
        n, channels, height, width = x.shape
        out_channels, kh, kw = weight.shape[1] * groups, weight.shape[2], weight.shape[3]
        per_group = weight.reshape(groups, channels // groups, -1)  # (G, C_in/G, C_out/G kH kW)
        cols = np.matmul(per_group.transpose(0, 2, 1),
                         x.reshape(n, groups, channels // groups, -1))
        patches = cols.reshape(n, out_channels, kh, kw, height, width).transpose(0, 1, 4, 5, 2, 3)
        full = _transposed_full_hw(x.shape, weight.shape, stride, output_padding, dilation)
        out = add_windows_back(patches, (n, out_channels) + full, stride, dilation)
        (ph, pw), (oh, ow) = padding, ConvTranspose2d.output_shape(
            x, weight, bias, stride, padding, output_padding, dilation, groups)[2:]
        out = out[:, :, ph:ph + oh, pw:pw + ow]
        if bias is not None:
            out = out + bias[:, None, None]
        return np.ascontiguousarray(out)

    @staticmethod
    def output_shape(x, weight, bias, stride, padding, output_padding, dilation, groups=1):
        full = _transposed_full_hw(x.shape, weight.shape, stride, output_padding, dilation)
        return (x.shape[0], weight.shape[1] * groups, full[0] - 2 * padding[0],
                full[1] - 2 * padding[1])

    @staticmethod
    def output_dtype(x, weight, bias, stride, padding, output_padding, dilation, groups=1):
        return np.result_type(*(a.dtype for a in (x, weight, bias) if a is not None))

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        (ph, pw), height, width = ctx.padding, x.shape[2], x.shape[3]
        full = _transposed_full_hw(x.shape, weight.shape, ctx.stride, ctx.output_padding,
                                   ctx.dilation)
        grad_full = np.zeros(grad_output.shape[:2] + full, dtype=grad_output.dtype)
        grad_full[:, :, ph:ph + grad_output.shape[2], pw:pw + grad_output.shape[3]] = grad_output
        patches = windows(grad_full, weight.shape[2:], ctx.stride, ctx.dilation)
        patches = patches[:, :, :height, :width]  # (N, C_out, H, W, kH, kW)
        groups, n = ctx.groups, x.shape[0]
        patches = patches.reshape(n, groups, -1, *patches.shape[2:])  # (N, G, C_out/G, ...)
        blocks = weight.reshape(groups, -1, *weight.shape[1:])  # (G, C_in/G, C_out/G, kH, kW)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = np.einsum("ngohwij,gcoij->ngchw", patches, blocks,
                               optimize=True).reshape(x.shape)
        if ctx.needs_input_grad[1]:
            grad_weight = np.einsum("ngchw,ngohwij->gcoij",
                                    x.reshape(n, groups, -1, *x.shape[2:]), patches,
                                    optimize=True).reshape(weight.shape)
        if ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(axis=(0, 2, 3))
        return grad_x, grad_weight, grad_bias, None, None, None, None, None

    # create_graph=True: the gradients of the same sum written with recorded ops
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        return recomputed(ctx, (grad_output,), _conv_transpose2d_recorded)


def _conv_transpose2d_recorded(x, weight, bias, stride, padding, output_padding, dilation,
                               groups=1):
    """conv_transpose2d from recorded ops (one matmul per channel block, the windows added
    into place by IndexBackward, the padding sliced off), for its second derivatives."""
    n, channels, height, width = x.shape
    out_channels, kh, kw = weight.shape[1] * groups, weight.shape[2], weight.shape[3]
    blocks = weight.reshape(groups, channels // groups, -1)  # (G, C_in/G, C_out/G kH kW)
    cols = blocks.transpose(-1, -2) @ x.reshape(n, groups, channels // groups, -1)
    patches = cols.reshape(n, out_channels, kh, kw, height, width).permute(0, 1, 4, 5, 2, 3)
    full = _transposed_full_hw(x.shape, weight.shape, stride, output_padding, dilation)
    out = IndexBackward.apply(patches, input_shape=(n, out_channels) + full,
                              index=window_index((height, width), (kh, kw), stride, dilation))
    (ph, pw), (oh, ow) = padding, ConvTranspose2d.output_shape(
        x, weight, bias, stride, padding, output_padding, dilation, groups)[2:]
    out = out[:, :, ph:ph + oh, pw:pw + ow]
    return out if bias is None else out + bias.reshape(-1, 1, 1)


def _transposed_full_hw(x_shape, weight_shape, stride, output_padding, dilation):
    """The transposed convolution's output size before the padding is cut off."""
    return tuple((size - 1) * s + d * (k - 1) + 1 + extra for size, k, s, extra, d in
                 zip(x_shape[2:], weight_shape[2:], stride, output_padding, dilation))
