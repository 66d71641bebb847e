"""More of PyTorch's functionals (round 3 of the census): pooling with indices, unpooling,
adaptive max pooling, local response norm, alpha dropout, bilinear, embedding bags.

Everything here is composed from existing Tensor ops, so autograd derives the backward
(and the backward of the backward); the one Function of its own is embedding's
``scale_grad_by_freq`` (``ScaleGradient``, minigrad/ops/pooling_more.py).

- A max pooling with indices finds each window's winner in NumPy (an integer index, no
  gradient), then reads the values with ``gather``: the gradient of ``gather`` is the
  scatter back to the winners, which is max pooling's gradient.
- Unpooling is the reverse: a ``scatter`` of the values to those indices.
- An embedding bag is the looked-up rows times a constant (bags, rows) matrix that sums
  or averages each bag's rows (a maximum for ``mode="max"``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..ops.activation_pointwise import ELU, Hardtanh, LeakyReLU
from ..ops.pooling_more import ScaleGradient
from ..state import no_grad, state
from ..tensor import Tensor, gather, where
from .functional_checks import _check_floating, _error, _output_sizes, _pair, _single

__all__: list[str] = [
    "adaptive_max_pool1d", "adaptive_max_pool2d", "alpha_dropout", "bilinear", "elu_",
    "embedding_bag", "feature_alpha_dropout", "hardtanh_", "leaky_relu_",
    "local_response_norm", "max_unpool1d", "max_unpool2d", "relu_",
    "fold", "channel_shuffle",  # (F.unfold is functional.py's: the seed's form, or im2col)
]


def implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's deprecated choice when softmax gets no dim: 0 for 0-, 1- and 3-D inputs
    (a vector; one unbatched image (C, H, W)), else 1 (a batch: its class dim), with
    PyTorch's warning."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                  "call to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


# --- max pooling with indices (PyTorch's return_indices=True) ---------------------------------


def pool_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int,
                     ceil_mode: bool) -> int:
    """PyTorch's output length: floor (or ceil) of (size + 2 padding - dilation (kernel - 1)
    - 1) / stride, plus 1; with ceil_mode the last window must start inside the input or
    its left padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def _window_winners(x: np.ndarray, kernel: tuple, stride: tuple, padding: tuple,
                    dilation: tuple, out_hw: tuple) -> np.ndarray:
    """(N, C, OH, OW) int64: where each window's maximum is, as a flat index into its
    (H, W) plane. As PyTorch: padding never wins, a later element wins only if strictly
    larger (ties keep the first) or NaN."""
    height, width = x.shape[-2:]
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = kernel, stride, padding, dilation, out_hw
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    bottom = max(0, (oh - 1) * sh + dh * (kh - 1) + 1 - height - ph)
    right = max(0, (ow - 1) * sw + dw * (kw - 1) + 1 - width - pw)
    padded = np.pad(x, ((0, 0), (0, 0), (ph, bottom), (pw, right)), constant_values=lowest)
    first_row = np.arange(oh) * sh - ph  # each window's first row inside the input
    first_row += -(-np.maximum(-first_row, 0) // dh) * dh
    first_col = np.arange(ow) * sw - pw
    first_col += -(-np.maximum(-first_col, 0) // dw) * dw
    winner = np.broadcast_to(first_row[:, None] * width + first_col, x.shape[:2] + (oh, ow))
    winner, best = winner.copy(), np.full(winner.shape, lowest, dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            candidate = padded[:, :, i * dh: i * dh + (oh - 1) * sh + 1: sh,
                               j * dw: j * dw + (ow - 1) * sw + 1: sw]
            rows, cols = np.arange(oh) * sh + i * dh - ph, np.arange(ow) * sw + j * dw - pw
            better = candidate > best
            if x.dtype.kind == "f":
                better |= np.isnan(candidate)
            best = np.where(better, candidate, best)
            winner = np.where(better, rows[:, None] * width + cols, winner)
    return winner.astype(np.int64)


def max_pool_with_indices(x: Tensor, kernel: Any, stride: Any, padding: Any, dilation: Any,
                          ceil_mode: bool, who: str) -> tuple[Tensor, Tensor]:
    """(values, indices) of max pooling a 4-D (N, C, H, W) ``x``: indices (int64, no
    gradient) index each (H * W) plane; values = gather(x, indices), so their gradient goes
    to the winners (overlapping windows add up)."""
    kernel = _pair(kernel, who, "kernel_size", 1)
    stride = kernel if stride is None else _pair(stride, who, "stride", 1)
    padding = _pair(padding, who, "padding", 0)
    dilation = _pair(dilation, who, "dilation", 1)
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise _error(f"{who}: padding {padding} must be at most half the kernel size "
                     f"{kernel}", ValueError)
    out_hw = tuple(pool_output_size(s, k, st, p, d, ceil_mode) for s, k, st, p, d in
                   zip(x.shape[2:], kernel, stride, padding, dilation))
    if min(out_hw) < 1:
        raise _error(f"{who}: the input of shape {tuple(x.shape)} is too small for a "
                     f"kernel {kernel} with dilation {dilation} and padding {padding} "
                     f"(output size {out_hw})")
    winners = _window_winners(x.numpy(), kernel, stride, padding, dilation, out_hw)
    return _values_at(x, winners), Tensor(winners)


def _values_at(x: Tensor, winners: np.ndarray) -> Tensor:
    """x's values at the flat (H * W) indices ``winners`` (N, C, OH, OW): a gather."""
    n, channels = winners.shape[:2]
    flat = gather(x.reshape(n, channels, -1), 2, winners.reshape(n, channels, -1))
    return flat.reshape(winners.shape)


# --- unpooling ------------------------------------------------------------------------------


def _unpool(input: Tensor, indices: Any, out_hw: tuple, who: str) -> Tensor:
    """(N, C, H, W) values put at the flat indices of an (N, C, *out_hw) zero image."""
    index = indices.numpy() if isinstance(indices, Tensor) else np.asarray(indices)
    if index.dtype.kind not in "iu":
        raise _error(f"{who}: indices must be integers (int64, as max pooling returns "
                     f"them), got {index.dtype}", TypeError)
    if tuple(index.shape) != tuple(input.shape):
        raise _error(f"{who}: indices of shape {tuple(index.shape)} must have the input's "
                     f"shape {tuple(input.shape)}")
    n, channels = input.shape[:2]
    plane = out_hw[0] * out_hw[1]
    if index.size and (index.min() < 0 or index.max() >= plane):
        bad = index.max() if index.max() >= plane else index.min()
        raise _error(f"{who}: index {bad} is out of range for an output of size {out_hw} "
                     f"({plane} elements per plane); input shape {tuple(input.shape)}",
                     IndexError)
    zeros = Tensor(np.zeros((n, channels, plane), dtype=input.dtype))
    flat = zeros.scatter(2, index.reshape(n, channels, -1), input.reshape(n, channels, -1))
    return flat.reshape(n, channels, *out_hw)


def _unpool_size(input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                 output_size: Any, who: str) -> tuple:
    """The default (H - 1) stride - 2 padding + kernel, or ``output_size`` (its last
    dims), which must lie within one stride of the default."""
    dims = len(kernel)
    default = tuple((size - 1) * s - 2 * p + k for size, k, s, p in
                    zip(input.shape[-dims:], kernel, stride, padding))
    if output_size is None:
        return default
    size = tuple(int(s) for s in output_size)[-dims:]
    if len(size) != dims:
        raise _error(f"{who}: output_size must have {dims} (or {dims + 2}) entries, got "
                     f"{tuple(output_size)!r}", ValueError)
    smallest = tuple(d - s + 1 for d, s in zip(default, stride))
    largest = tuple(d + s - 1 for d, s in zip(default, stride))
    if any(not low <= wanted <= high for wanted, low, high in zip(size, smallest, largest)):
        raise _error(f"{who}: output_size {size} must be between {smallest} and {largest} "
                     f"for an input of shape {tuple(input.shape)} (kernel {kernel}, stride "
                     f"{stride}, padding {padding})", ValueError)
    return size


def max_unpool2d(input: Tensor, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The inverse of ``max_pool2d(..., return_indices=True)``: each value goes back to the
    place its index names in a zero (N, C, H_out, W_out) image (H_out = (H - 1) stride -
    2 padding + kernel unless ``output_size`` says). Gradient: read back at the indices."""
    who = "max_unpool2d"
    if input.ndim not in (3, 4):
        raise _error(f"{who}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape "
                     f"{tuple(input.shape)}")
    kernel = _pair(kernel_size, who, "kernel_size", 1)
    stride = kernel if stride is None else _pair(stride, who, "stride", 1)
    padding = _pair(padding, who, "padding", 0)
    out_hw = _unpool_size(input, kernel, stride, padding, output_size, who)
    if input.ndim == 3:
        index = indices.numpy() if isinstance(indices, Tensor) else np.asarray(indices)
        return _unpool(input.unsqueeze(0), index[None], out_hw, who)[0]
    return _unpool(input, indices, out_hw, who)


def max_unpool1d(input: Tensor, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """``max_unpool2d`` along the last dimension of (N, C, L) or (C, L)."""
    who = "max_unpool1d"
    if input.ndim not in (2, 3):
        raise _error(f"{who}: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape "
                     f"{tuple(input.shape)}")
    kernel = (_single(kernel_size, who, "kernel_size", 1),)
    stride = kernel if stride is None else (_single(stride, who, "stride", 1),)
    padding = (_single(padding, who, "padding"),)
    (length,) = _unpool_size(input, kernel, stride, padding, output_size, who)
    index = indices.numpy() if isinstance(indices, Tensor) else np.asarray(indices)
    batched = input if input.ndim == 3 else input.unsqueeze(0)
    index = index if input.ndim == 3 else index[None]
    output = _unpool(batched.unsqueeze(2), index[:, :, None], (1, length), who).squeeze(2)
    return output if input.ndim == 3 else output[0]


# --- adaptive max pooling -------------------------------------------------------------------


def _adaptive_winners(x: np.ndarray, out_hw: tuple) -> np.ndarray:
    """(N, C, OH, OW): the flat index of each adaptive window's maximum, PyTorch's windows
    rows floor(i H / OH) to ceil((i + 1) H / OH), and the same for columns."""
    height, width = x.shape[-2:]
    winners = np.empty(x.shape[:2] + tuple(out_hw), dtype=np.int64)
    for i in range(out_hw[0]):
        top, bottom = (i * height) // out_hw[0], -(-(i + 1) * height // out_hw[0])
        for j in range(out_hw[1]):
            left, right = (j * width) // out_hw[1], -(-(j + 1) * width // out_hw[1])
            window = x[:, :, top:bottom, left:right].reshape(x.shape[:2] + (-1,))
            nan = np.isnan(window) if x.dtype.kind == "f" else np.zeros(window.shape, bool)
            # the first maximum, or (as PyTorch) the last NaN
            place = np.where(nan.any(-1), window.shape[-1] - 1 - nan[..., ::-1].argmax(-1),
                             window.argmax(-1))
            cols = right - left
            winners[:, :, i, j] = (top + place // cols) * width + left + place % cols
    return winners


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum over adaptive windows, so the output is (..., out_h, out_w) whatever the
    input's size (``None`` keeps a size); with ``return_indices`` also where each maximum
    is (flat (H * W) indices, as ``max_pool2d`` gives them). Gradient: to the winners."""
    who = "adaptive_max_pool2d"
    if input.ndim not in (3, 4):
        raise _error(f"{who}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape "
                     f"{tuple(input.shape)}")
    if min(input.shape[-2:]) < 1:
        raise _error(f"{who}: the input of shape {tuple(input.shape)} is empty")
    x = input if input.ndim == 4 else input.unsqueeze(0)
    out_hw = _output_sizes(output_size, tuple(x.shape[-2:]), who)
    winners = _adaptive_winners(x.numpy(), out_hw)
    values, indices = _values_at(x, winners), Tensor(winners)
    if input.ndim == 3:
        values, indices = values[0], indices[0]
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum over adaptive windows along the last dimension: (..., output_size)."""
    who = "adaptive_max_pool1d"
    if input.ndim not in (2, 3):
        raise _error(f"{who}: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape "
                     f"{tuple(input.shape)}")
    (out,) = _output_sizes(output_size, tuple(input.shape[-1:]), who)
    values, indices = adaptive_max_pool2d(input.unsqueeze(-2), (1, out), True)
    values, indices = values.squeeze(-2), indices.squeeze(-2)
    return (values, indices) if return_indices else values


# --- embeddings -----------------------------------------------------------------------------


def embedding_indices(input: Any, num: int, who: str) -> np.ndarray:
    """The integer indices of an embedding lookup, checked against the ``num`` rows."""
    indices = input.numpy() if isinstance(input, Tensor) else np.asarray(input)
    if indices.dtype.kind not in "iu":
        raise _error(f"{who}: indices must be integers, got {indices.dtype} "
                     f"(shape {indices.shape}); use .long()", TypeError)
    if indices.size and (indices.min() < 0 or indices.max() >= num):
        bad = indices.max() if indices.max() >= num else indices.min()
        raise _error(f"{who}: index {bad} is out of range for an embedding with "
                     f"{num} rows (valid: 0 to {num - 1})", IndexError)
    return indices


def refuse_sparse(sparse: bool, who: str) -> None:
    if sparse:
        raise _error(f"{who}: sparse=True is not supported by minigrad (it has no sparse "
                     "tensors: every gradient is a dense array); leave sparse=False",
                     NotImplementedError)


def embedding_renorm_(weight: Tensor, indices: np.ndarray, max_norm: float,
                      norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: each row of ``weight`` that ``indices`` picks and
    whose ``norm_type``-norm exceeds ``max_norm`` is scaled in place (without history)
    to norm max_norm: row * max_norm / (norm + 1e-7)."""
    rows = np.unique(indices)
    if rows.size == 0:
        return
    values = weight.numpy()[rows].astype(np.float64)
    norms = np.linalg.norm(values, ord=norm_type, axis=1) if norm_type != math.inf else \
        np.abs(values).max(axis=1)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    if (scale != 1.0).any():
        with no_grad():
            weight[rows] = (values * scale[:, None]).astype(weight.dtype)


def frequency_scaled(rows: Tensor, indices: np.ndarray) -> Tensor:
    """``rows`` (weight[indices]) unchanged, whose gradient is divided by how often each
    index occurs in ``indices`` (PyTorch's scale_grad_by_freq)."""
    _, inverse, counts = np.unique(indices, return_inverse=True, return_counts=True)
    scale = (1.0 / counts[inverse.reshape(indices.shape)]).astype(rows.dtype)
    return ScaleGradient.apply(rows, scale[..., None])


EMBEDDING_BAG_MODES = ("sum", "mean", "max")


def _bags(indices: np.ndarray, offsets: Any, include_last_offset: bool,
          who: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(flat indices, the bag of each, the number of bags) from a 2-D input (one bag a
    row) or a 1-D input cut at ``offsets``."""
    if indices.ndim == 2:
        if offsets is not None:
            raise _error(f"{who}: offsets must be None for a 2-D input (each row is a bag), "
                         f"got input of shape {indices.shape} and offsets", ValueError)
        bags = np.repeat(np.arange(indices.shape[0]), indices.shape[1])
        return indices.reshape(-1), bags, indices.shape[0]
    if indices.ndim != 1:
        raise _error(f"{who}: input must be 1-D (with offsets) or 2-D (one bag a row), got "
                     f"shape {indices.shape}", ValueError)
    if offsets is None:
        raise _error(f"{who}: a 1-D input needs offsets (where each bag starts)", ValueError)
    starts = offsets.numpy() if isinstance(offsets, Tensor) else np.asarray(offsets)
    if starts.ndim != 1 or starts.dtype.kind not in "iu":
        raise _error(f"{who}: offsets must be a 1-D integer tensor, got {starts.dtype} of "
                     f"shape {starts.shape}", ValueError)
    if starts.size and (starts[0] != 0 or (np.diff(starts) < 0).any()
                        or starts[-1] > indices.size):
        raise _error(f"{who}: offsets must start at 0 and not decrease, up to the input's "
                     f"length {indices.size}, got {starts.tolist()}", ValueError)
    if include_last_offset and (starts.size == 0 or starts[-1] != indices.size):
        raise _error(f"{who}: with include_last_offset=True the last offset must be the "
                     f"input's length {indices.size} (the end of the last bag), got offsets "
                     f"{starts.tolist()}", ValueError)
    count = len(starts) - 1 if include_last_offset else len(starts)
    ends = np.append(starts[1:], indices.size)[:count]
    bags = np.full(indices.size, -1)
    for bag, (start, end) in enumerate(zip(starts[:count], ends)):
        bags[start:end] = bag
    return indices, bags, max(count, 0)


def embedding_bag(input: Any, weight: Tensor, offsets: Any = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of each bag of looked-up rows, without making the (bag, length,
    dim) tensor of rows: out = M @ weight[input], M (bags, indices) holding 1 (sum), 1/size
    of the bag (mean) or the ``per_sample_weights`` (sum only). Entries equal to
    ``padding_idx`` are left out (not counted in the mean); an empty bag gives zeros."""
    who = "embedding_bag"
    refuse_sparse(sparse, who)
    if mode not in EMBEDDING_BAG_MODES:
        raise _error(f"{who}: mode must be one of {EMBEDDING_BAG_MODES}, got {mode!r}",
                     ValueError)
    if weight.ndim != 2:
        raise _error(f"{who}: weight must be 2-D (num_embeddings, embedding_dim), got shape "
                     f"{tuple(weight.shape)}")
    num = weight.shape[0]
    indices = embedding_indices(input, num, who)
    flat, bags, count = _bags(indices, offsets, include_last_offset, who)
    if per_sample_weights is not None:
        if mode != "sum":
            raise _error(f"{who}: per_sample_weights only go with mode='sum', got mode="
                         f"{mode!r}", NotImplementedError)
        if tuple(per_sample_weights.shape) != tuple(indices.shape):
            raise _error(f"{who}: per_sample_weights of shape "
                         f"{tuple(per_sample_weights.shape)} must have the input's shape "
                         f"{tuple(indices.shape)}")
    if max_norm is not None:
        embedding_renorm_(weight, flat, max_norm, norm_type)
    keep = bags >= 0
    if padding_idx is not None:
        keep &= flat != padding_idx % num
    rows = weight[flat]
    if scale_grad_by_freq:
        rows = frequency_scaled(rows, flat)
    if mode == "max":
        return _bag_max(rows, bags, keep, count, weight)
    membership = np.zeros((count, flat.size), dtype=weight.dtype)
    membership[bags[keep], np.nonzero(keep)[0]] = 1.0
    if mode == "mean":
        membership /= np.maximum(membership.sum(1, keepdims=True), 1)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    return Tensor(membership) @ rows


def _bag_max(rows: Tensor, bags: np.ndarray, keep: np.ndarray, count: int,
             weight: Tensor) -> Tensor:
    """Each bag's elementwise maximum (0 for an empty bag): the rows laid out as
    (bags, longest bag, dim), the gaps -inf; its gradient goes to the first maximal row."""
    sizes = np.bincount(bags[keep], minlength=count)
    longest = max(int(sizes.max()) if count else 0, 1)
    slot = np.zeros(bags.size, dtype=np.int64)  # each kept row's place in its bag
    for bag in range(count):
        members = np.nonzero(keep & (bags == bag))[0]
        slot[members] = np.arange(members.size)
    position = np.zeros((count, longest), dtype=np.int64)
    filled = np.zeros((count, longest), dtype=bool)
    position[bags[keep], slot[keep]] = np.nonzero(keep)[0]
    filled[bags[keep], slot[keep]] = True
    laid_out = where(Tensor(filled[..., None]), rows[position], -math.inf)
    if not count:
        return Tensor(np.zeros((0, weight.shape[1]), dtype=weight.dtype))
    # each bag's first maximal row, per feature, read with gather: the gradient goes to
    # that row alone, as PyTorch's (a max reduction would split it between tied rows)
    first = laid_out.detach().numpy().argmax(1)[:, None, :]
    best = gather(laid_out, 1, Tensor(first)).squeeze(1)
    return where(Tensor((sizes > 0)[:, None]), best, 0.0)


# --- normalisation, dropout, bilinear ---------------------------------------------------------


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha / size * sum of x^2 over ``size`` neighbouring channels) ** beta
    (AlexNet's normalisation across channels, dim 1; the window of channel c is c -
    size // 2 to c + (size - 1) // 2, zeros beyond the edges, as in PyTorch)."""
    who = "local_response_norm"
    if input.ndim < 3:
        raise _error(f"{who}: expected a 3-D or higher input (N, C, ...), got shape "
                     f"{tuple(input.shape)}")
    if input.numel() == 0:
        return input.clone()
    _check_floating(input, who)
    channels = input.shape[1]
    pads = [(0, 0)] * input.ndim
    pads[1] = (size // 2, (size - 1) // 2)
    squares = (input * input).pad(tuple(pads))
    window = squares[:, 0:channels]
    for offset in range(1, size):
        window = window + squares[:, offset:offset + channels]
    return input / (window * (alpha / size) + k) ** beta


SELU_ALPHA_SCALE = 1.7580993408473766  # SELU's scale * alpha: the value a dropped unit gets


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                   noise_shape: tuple, who: str) -> Tensor:
    if not 0.0 <= p <= 1.0:
        raise _error(f"{who}: p must be between 0 and 1, got {p}", ValueError)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = (state.rng.random(noise_shape) >= p).astype(input.dtype)
    a = 1.0 / math.sqrt((SELU_ALPHA_SCALE ** 2 * p + 1) * (1 - p))
    scale = (keep * a).astype(input.dtype)
    shift = ((keep - 1) * SELU_ALPHA_SCALE * a + SELU_ALPHA_SCALE * a * p).astype(input.dtype)
    return input.mul_(scale).add_(shift) if inplace else input * scale + shift


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: a dropped element becomes -1.7581 (SELU's lowest value)
    and every element is then scaled by a and shifted by b so that mean and variance stay
    those of the input: out = a (x keep + (-1.7581)(1 - keep)) + b, where a =
    ((1 - p)(1 + 1.7581^2 p))^(-1/2) and b = 1.7581 a p. Identity when not training."""
    return _alpha_dropout(input, p, training, inplace, tuple(input.shape), "alpha_dropout")


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels: one draw per (sample, channel) of an (N, C, ...)
    input."""
    if input.ndim < 2:
        raise _error(f"feature_alpha_dropout: expected an input of shape (N, C, ...), got "
                     f"{tuple(input.shape)}")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return _alpha_dropout(input, p, training, inplace, shape, "feature_alpha_dropout")


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """y_k = x1^T A_k x2 + b_k for ``weight`` A (out, in1, in2): x1 (..., in1) and
    x2 (..., in2) give (..., out)."""
    who = "bilinear"
    if weight.ndim != 3:
        raise _error(f"{who}: weight must be 3-D (out_features, in1_features, in2_features), "
                     f"got shape {tuple(weight.shape)}")
    out, in1, in2 = weight.shape
    if input1.ndim == 0 or input2.ndim == 0 or input1.shape[-1] != in1 or \
            input2.shape[-1] != in2 or tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise _error(f"{who}: input1 of shape {tuple(input1.shape)} and input2 of shape "
                     f"{tuple(input2.shape)} do not fit the weight of shape "
                     f"{tuple(weight.shape)}: they need (..., {in1}) and (..., {in2}) with "
                     f"the same leading dims")
    if bias is not None and tuple(bias.shape) != (out,):
        raise _error(f"{who}: bias must have shape ({out},), got {tuple(bias.shape)}")
    leading = tuple(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, in1), input2.reshape(-1, in2)
    # x1 A_k for every k at once: (B, in1) @ (in1, out * in2) -> (B, out, in2)
    left = (x1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)).reshape(-1, out, in2)
    output = (left * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        output = output + bias
    return output.reshape(*leading, out)


# --- in-place functional activations --------------------------------------------------------


def relu_(input: Tensor) -> Tensor:
    """``relu`` written into ``input`` (recorded as an in-place op, as PyTorch's)."""
    return input.relu_()


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``elu`` written into ``input``."""
    _check_floating(input, "elu_")
    return input._modify(ELU, float(alpha))


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu`` written into ``input``."""
    _check_floating(input, "leaky_relu_")
    return input._modify(LeakyReLU, float(negative_slope))


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``hardtanh`` written into ``input``."""
    if min_val > max_val:
        raise _error(f"hardtanh_: min_val ({min_val}) must not exceed max_val ({max_val})",
                     ValueError)
    _check_floating(input, "hardtanh_")
    return input._modify(Hardtanh, float(min_val), float(max_val))


# --- PyTorch's unfold and fold (im2col and col2im), channel shuffle ----------------------------


def _patch_index(channels: int, padded_hw: tuple, kernel: tuple, dilation: tuple,
                 stride: tuple) -> tuple[np.ndarray, tuple]:
    """For each row (c, i, j) of an unfolded (C kH kW, L) block and each window l, the flat
    index of the pixel it reads in a padded (C, Hp, Wp) image; and the windows' grid."""
    (hp, wp), (kh, kw), (dh, dw), (sh, sw) = padded_hw, kernel, dilation, stride
    out_h, out_w = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    c, i, j = np.meshgrid(np.arange(channels), np.arange(kh), np.arange(kw), indexing="ij")
    oh, ow = np.meshgrid(np.arange(out_h), np.arange(out_w), indexing="ij")
    rows = (i * dh).reshape(-1, 1) + (oh * sh).reshape(1, -1)
    cols = (j * dw).reshape(-1, 1) + (ow * sw).reshape(1, -1)
    return (c.reshape(-1, 1) * hp + rows) * wp + cols, (out_h, out_w)


def _fold_settings(kernel_size, dilation, padding, stride, who):
    return (_pair(kernel_size, who, "kernel_size", 1), _pair(dilation, who, "dilation", 1),
            _pair(padding, who, "padding", 0), _pair(stride, who, "stride", 1))


def im2col(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """PyTorch's ``F.unfold``: every ``kernel_size`` window of an (N, C, H, W) image (or
    (C, H, W)), zero ``padding`` around it, as the columns of (N, C kH kW, L), L the number
    of windows; row (c, i, j) holds pixel (i, j) of each window of channel c. A gather of
    the padded image, so its gradient adds each column back where it was read (col2im).
    (``F.unfold`` also has the seed's form, ``F.unfold(x, dimension, size, step)``: the
    strided windows of ``Tensor.unfold``.)"""
    who = "unfold"
    if input.ndim not in (3, 4):
        raise _error(f"{who}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape "
                     f"{tuple(input.shape)}")
    x = input if input.ndim == 4 else input.unsqueeze(0)
    kernel, dilation, padding, stride = _fold_settings(kernel_size, dilation, padding, stride,
                                                       who)
    (ph, pw), (n, channels, height, width) = padding, x.shape
    padded_hw = (height + 2 * ph, width + 2 * pw)
    if any(p < dilation[k] * (kernel[k] - 1) + 1 for k, p in enumerate(padded_hw)):
        raise _error(f"{who}: a kernel {kernel} with dilation {dilation} does not fit the "
                     f"input of shape {tuple(input.shape)} padded by {padding}")
    index, _ = _patch_index(channels, padded_hw, kernel, dilation, stride)
    flat = x.pad((pw, pw, ph, ph)).reshape(n, -1) if ph or pw else x.reshape(n, -1)
    columns = flat[:, index]
    return columns if input.ndim == 4 else columns[0]


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """PyTorch's ``F.fold`` (col2im), the adjoint of ``unfold``: the columns of an
    (N, C kH kW, L) input (or (C kH kW, L)) added back into an (N, C, *output_size) image at
    the places unfold would read them (overlapping windows add up). Gradient: unfold."""
    who = "fold"
    if input.ndim not in (2, 3):
        raise _error(f"{who}: expected a 2-D (C kH kW, L) or 3-D (N, C kH kW, L) input, got "
                     f"shape {tuple(input.shape)}")
    x = input if input.ndim == 3 else input.unsqueeze(0)
    kernel, dilation, padding, stride = _fold_settings(kernel_size, dilation, padding, stride,
                                                       who)
    height, width = _pair(output_size, who, "output_size", 1)
    (ph, pw), (n, rows, length) = padding, x.shape
    if rows % (kernel[0] * kernel[1]):
        raise _error(f"{who}: dim 1 of the input of shape {tuple(input.shape)} must be a "
                     f"multiple of the kernel's {kernel[0]} x {kernel[1]} = "
                     f"{kernel[0] * kernel[1]} pixels (C kH kW)")
    channels, padded_hw = rows // (kernel[0] * kernel[1]), (height + 2 * ph, width + 2 * pw)
    index, grid = _patch_index(channels, padded_hw, kernel, dilation, stride)
    if grid[0] * grid[1] != length:
        raise _error(f"{who}: the input of shape {tuple(input.shape)} has {length} columns, "
                     f"but an output of size {(height, width)} with kernel {kernel}, "
                     f"dilation {dilation}, padding {padding} and stride {stride} has "
                     f"{grid[0]} x {grid[1]} = {grid[0] * grid[1]} windows")
    image = Tensor(np.zeros((n, channels * padded_hw[0] * padded_hw[1]), dtype=x.dtype))
    image = image.index_add(1, Tensor(index.reshape(-1)), x.reshape(n, -1))
    image = image.reshape(n, channels, *padded_hw)[:, :, ph:ph + height, pw:pw + width]
    return image if input.ndim == 3 else image[0]


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The channels (dim 1) of (N, C, ...) as ``groups`` groups interleaved: channel
    g C/groups + k moves to k groups + g (ShuffleNet). A permutation: its gradient moves
    back."""
    if input.ndim < 3:
        raise _error(f"channel_shuffle: expected an input (N, C, ...) of 3 or more dims, got "
                     f"shape {tuple(input.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1 \
            or input.shape[1] % groups:
        raise _error(f"channel_shuffle: groups must be a positive int dividing the "
                     f"{input.shape[1]} channels of the input of shape {tuple(input.shape)}, "
                     f"got {groups!r}", ValueError)
    n, channels, *rest = input.shape
    grouped = input.reshape(n, groups, channels // groups, *rest)
    return grouped.transpose(1, 2).reshape(n, channels, *rest)
