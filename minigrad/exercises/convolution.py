"""Chapter 10's classic mistakes (convolution and pooling), out of the notebook so that
its test cells do not show the answers, the plain-NumPy references they are built from,
and ``check_conv_init`` (``check_module`` copies the reference's weights into the
student's layer, so it cannot see the initialisation).

Layouts, as in the chapter: an image batch x is (N, C, H, W), a weight (O, C, kH, kW);
``im2col`` gives one row per window, (N OH OW, C kH kW), rows in (n, p, q) order and
columns in (c, i, j) order, the order of ``weight.reshape(O, -1)``'s columns. Stride and
padding are ints (the same along H and W); kernels may be rectangular.

The mistake tables are ``{sentence naming the mistake: fn(*arrays, grad_output) -> wrong
gradients}`` (``check_function``) or ``fn(*args) -> wrong result``
(``check_array_function``). Stride and padding are not among a Function's arrays, so the
convolution's and pooling's tables are made for one setting by ``conv2d_mistakes(stride,
padding)`` and ``max_pool2d_mistakes(kernel_size, stride)``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..function import Function
from .checks import checker, wrong_output
from .linear import check_init
from .prerequisites import reference_for

# --- the references, in plain NumPy -----------------------------------------------------


@reference_for(1, "conv_output_size")
def output_size(size: int, kernel: int, stride: int = 1, padding: int = 0) -> int:
    """How many windows fit: floor((size + 2 padding - kernel) / stride) + 1."""
    return (size + 2 * padding - kernel) // stride + 1


def _padded(x: np.ndarray, padding: int) -> np.ndarray:
    return np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))


def window_view(x: np.ndarray, kernel_size: tuple, stride: int = 1, padding: int = 0
                ) -> np.ndarray:
    """Every window of the padded x, a view (N, C, OH, OW, kH, kW)."""
    view = np.lib.stride_tricks.sliding_window_view(_padded(x, padding), tuple(kernel_size),
                                                    axis=(2, 3))
    return view[:, :, ::stride, ::stride]


@reference_for(2, "my_im2col")
def im2col(x: np.ndarray, kernel_size: tuple, stride: int = 1, padding: int = 0
           ) -> np.ndarray:
    """One row per window, (N OH OW, C kH kW): rows (n, p, q), columns (c, i, j)."""
    view = window_view(x, kernel_size, stride, padding)
    n, c, out_h, out_w, kh, kw = view.shape
    return view.transpose(0, 2, 3, 1, 4, 5).reshape(n * out_h * out_w, c * kh * kw)


def col2im(grad_cols: np.ndarray, x_shape: tuple, kernel_size: tuple, stride: int = 1,
           padding: int = 0, assign: bool = False) -> np.ndarray:
    """The backward of ``im2col``: each row's gradient added back into its window of the
    padded image (``assign``: written over instead, the mistake), padding cut off."""
    n, c, h, w = x_shape
    kh, kw = kernel_size
    out_h, out_w = output_size(h, kh, stride, padding), output_size(w, kw, stride, padding)
    patches = grad_cols.reshape(n, out_h, out_w, c, kh, kw)
    grad = np.zeros((n, c, h + 2 * padding, w + 2 * padding))
    for p in range(out_h):
        for q in range(out_w):
            rows = slice(p * stride, p * stride + kh)
            cols = slice(q * stride, q * stride + kw)
            if assign:
                grad[:, :, rows, cols] = patches[:, p, q]
            else:
                grad[:, :, rows, cols] += patches[:, p, q]
    return grad[:, :, padding:padding + h, padding:padding + w]


def _rows_of(grad_output: np.ndarray, transposed: bool = True) -> np.ndarray:
    """(N, O, OH, OW) -> (N OH OW, O), the rows in im2col's order (``transposed=False``:
    reshaped straight, without moving O last first, the mistake)."""
    if not transposed:
        return grad_output.reshape(-1, grad_output.shape[1])
    return grad_output.transpose(0, 2, 3, 1).reshape(-1, grad_output.shape[1])


def conv2d_gradients(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, g: np.ndarray,
                     stride: int = 1, padding: int = 0, flip: bool = False,
                     assign: bool = False, g_transposed: bool = True) -> tuple:
    """The right gradients of the convolution (and, with ``flip``, ``assign`` or
    ``g_transposed=False``, the gradients of three mistakes)."""
    kernel = weight.shape[2:]
    cols, rows = im2col(x, kernel, stride, padding), _rows_of(g, g_transposed)
    w = weight[:, :, ::-1, ::-1] if flip else weight
    grad_x = col2im(rows @ w.reshape(len(w), -1), x.shape, kernel, stride, padding, assign)
    return grad_x, (rows.T @ cols).reshape(weight.shape), g.sum(axis=(0, 2, 3))


def max_pool2d_gradient(x: np.ndarray, g: np.ndarray, kernel_size: int, stride: int,
                        pick: str = "first", assign: bool = False) -> np.ndarray:
    """max_pool2d's input gradient. ``pick``: "first" (PyTorch's: the first maximal
    element of the window, row by row), or a mistake: "last", "split" (shared evenly by
    tied maxima), "ties" (all of it to each tied maximum), "all" (to every element),
    "mean" (divided evenly over the window, as avg-pool)."""
    k = kernel_size
    view = window_view(x, (k, k), stride)
    n, c, out_h, out_w = view.shape[:4]
    flat = view.reshape(n, c, out_h, out_w, k * k)
    top = flat.max(axis=-1, keepdims=True)
    if pick == "first":
        share = np.eye(k * k)[flat.argmax(axis=-1)]
    elif pick == "last":
        share = np.eye(k * k)[k * k - 1 - flat[..., ::-1].argmax(axis=-1)]
    elif pick == "split":
        share = (flat == top) / (flat == top).sum(axis=-1, keepdims=True)
    elif pick == "ties":
        share = (flat == top).astype(float)
    elif pick == "all":
        share = np.ones_like(flat)
    else:  # "mean"
        share = np.full(flat.shape, 1 / (k * k))
    patches = (share * g[..., None]).reshape(n, c, out_h, out_w, k, k)
    grad = np.zeros(x.shape)
    for p in range(out_h):
        for q in range(out_w):
            rows, cols = slice(p * stride, p * stride + k), slice(q * stride, q * stride + k)
            if assign:
                grad[:, :, rows, cols] = patches[:, :, p, q]
            else:
                grad[:, :, rows, cols] += patches[:, :, p, q]
    return grad


# --- the mistakes ------------------------------------------------------------------------

OUTPUT_SIZE_MISTAKES: dict[str, Callable] = {
    "the +1 is missing: with size = kernel, exactly one window fits, and "
    "(size - kernel) // stride is 0; the formula is "
    "(size + 2 * padding - kernel) // stride + 1.":
        lambda size, kernel, stride=1, padding=0: (size + 2 * padding - kernel) // stride,
    "the padding is counted once: it is added on BOTH sides (top and bottom, left and "
    "right), so the padded size is size + 2 * padding.":
        lambda size, kernel, stride=1, padding=0: (size + padding - kernel) // stride + 1,
    "the padding is forgotten: the windows slide over the padded image, "
    "size + 2 * padding.":
        lambda size, kernel, stride=1, padding=0: (size - kernel) // stride + 1,
    "it rounds up (ceil) instead of down: a window that would stick out past the padded "
    "image is not taken, so use floor division, //.":
        lambda size, kernel, stride=1, padding=0:
            -(-(size + 2 * padding - kernel) // stride) + 1,
    "it divides with / (a float, and no rounding): a number of windows is a whole number, "
    "rounded down: use //.":
        lambda size, kernel, stride=1, padding=0: (size + 2 * padding - kernel) / stride + 1,
}

IM2COL_MISTAKES: dict[str, Callable] = {
    "the columns are in (i, j, c) order (channels last): they must be in (c, i, j) order, "
    "the order of weight.reshape(out_channels, -1)'s columns, so transpose the windows to "
    "(N, OH, OW, C, kH, kW) before reshaping.":
        lambda x, kernel_size, stride=1, padding=0: window_view(
            x, kernel_size, stride, padding).transpose(0, 2, 3, 4, 5, 1).reshape(
            -1, x.shape[1] * kernel_size[0] * kernel_size[1]),
    "the rows are in (n, q, p) order (output columns first): take the windows row by row, "
    "(n, p, q), as the output (N, OH, OW) is laid out.":
        lambda x, kernel_size, stride=1, padding=0: window_view(
            x, kernel_size, stride, padding).transpose(0, 3, 2, 1, 4, 5).reshape(
            -1, x.shape[1] * kernel_size[0] * kernel_size[1]),
    "the windows were reshaped without moving the channels: (N, C, OH, OW, kH, kW) "
    "reshaped straight to (N OH OW, C kH kW) mixes channels and positions. Transpose to "
    "(N, OH, OW, C, kH, kW) first.":
        lambda x, kernel_size, stride=1, padding=0: np.ascontiguousarray(window_view(
            x, kernel_size, stride, padding)).reshape(
            -1, x.shape[1] * kernel_size[0] * kernel_size[1]),
}

FLIPPED_KERNEL = (
    "the input's gradient has the kernel flipped the wrong way (flipped kernel): the "
    "forward is a cross-correlation, so each window's gradient is grad_output's row "
    "times the weight AS IT IS, added back into the window (col2im); seen as one "
    "'full' correlation of grad_output, it is the kernel flipped that way. Flip it in "
    "exactly one of the two views.")
ASSIGNED = (
    "overlapping windows were not accumulated: a pixel in several windows must get the "
    "SUM of their gradients (grad[..., rows, cols] += ..., as chapter 6's scatter-add), "
    "not only the last one written (=).")
WEIGHT_TRANSPOSED = (
    "the weight's gradient is transposed: windows.T @ G has shape (C kH kW, O), and "
    "reshaping it to (O, C, kH, kW) scrambles it. PyTorch's layout needs G.T @ windows, "
    "(O, N OH OW) @ (N OH OW, C kH kW), then the reshape.")
G_NOT_TRANSPOSED = (
    "grad_output was reshaped to (N OH OW, O) without moving O last first: its layout is "
    "(N, O, OH, OW), so a plain reshape mixes channels and positions. Undo the forward's "
    "transpose, then reshape: grad_output.transpose(0, 2, 3, 1).reshape(-1, O).")
OUTPUT_NOT_TRANSPOSED = (
    "the output was reshaped straight to (N, O, OH, OW): the product's rows are (N OH "
    "OW) and its columns O, so reshape it to (N, OH, OW, O) first, then move O to the "
    "second place: .transpose(0, 3, 1, 2).")
BIAS_MEAN = (
    "the bias's gradient is a mean: the bias is added at every output position of every "
    "image, so its gradient is grad_output SUMMED over (N, OH, OW).")


def conv2d_mistakes(stride: int = 1, padding: int = 0) -> dict[str, Callable]:
    """The convolution's classic mistakes for one ``stride`` and ``padding``."""

    def right(x, w, b, g, **how):
        return conv2d_gradients(x, w, b, g, stride, padding, **how)

    def weight_transposed(x, w, b, g):
        grad_x, _, grad_b = right(x, w, b, g)
        cols = im2col(x, w.shape[2:], stride, padding)
        return grad_x, (cols.T @ _rows_of(g)).reshape(w.shape), grad_b

    def with_bias(make):
        return lambda x, w, b, g: right(x, w, b, g)[:2] + (make(g),)

    def output_not_transposed(x, w, b):
        n, out_channels = len(x), len(w)
        out_h = output_size(x.shape[2], w.shape[2], stride, padding)
        out_w = output_size(x.shape[3], w.shape[3], stride, padding)
        out = im2col(x, w.shape[2:], stride, padding) @ w.reshape(out_channels, -1).T + b
        return out.reshape(n, out_channels, out_h, out_w)

    return {
        OUTPUT_NOT_TRANSPOSED: wrong_output(output_not_transposed),
        G_NOT_TRANSPOSED: lambda x, w, b, g: right(x, w, b, g, g_transposed=False),
        FLIPPED_KERNEL: lambda x, w, b, g: right(x, w, b, g, flip=True),
        ASSIGNED: lambda x, w, b, g: right(x, w, b, g, assign=True),
        WEIGHT_TRANSPOSED: weight_transposed,
        BIAS_MEAN: with_bias(lambda g: g.mean(axis=(0, 2, 3))),
    }


def max_pool2d_mistakes(kernel_size: int, stride: int | None = None) -> dict[str, Callable]:
    """Max pooling's classic mistakes for one ``kernel_size`` and ``stride``."""
    stride = kernel_size if stride is None else stride
    words = {
        "all": "the gradient went to EVERY element of the window: only the maximum "
               "changed the output, so only it gets grad_output (the others get 0).",
        "mean": "the gradient was divided evenly over the window: that is avg-pool's "
                "backward. Max-pool sends all of it to the one maximal element.",
        "ties": "each tied maximum got the whole gradient: a window has ONE output and "
                "its gradient goes to ONE element, the first maximal one (row by row), "
                "as PyTorch's max_pool2d does (np.argmax picks it).",
        "split": "the gradient was split evenly among tied maxima (as minigrad's "
                 "x.max() reduction does): max_pool2d, like PyTorch's, gives it all to "
                 "the FIRST maximal element of the window (np.argmax picks it).",
        "last": "the gradient went to the LAST tied maximum of a window: PyTorch's "
                "max_pool2d picks the first one (row by row), as np.argmax does.",
    }
    mistakes = {sentence: (lambda x, g, pick=pick:
                           max_pool2d_gradient(x, g, kernel_size, stride, pick))
                for pick, sentence in words.items()}
    if stride < kernel_size:  # overlapping windows
        mistakes[ASSIGNED] = lambda x, g: max_pool2d_gradient(x, g, kernel_size, stride,
                                                              assign=True)
    return mistakes


def tied_images(shape: tuple, seed: int = 0, levels: int = 3) -> np.ndarray:
    """Float images of a few whole numbers, so that most pooling windows have ties."""
    return np.random.default_rng(seed).integers(0, levels, size=shape).astype(np.float64)


# --- check_conv_init ---------------------------------------------------------------------

IN_CHANNELS, OUT_CHANNELS, KERNEL = 16, 20, (5, 4)  # fan_in 320: 6,400 weights to measure
FAN_IN = IN_CHANNELS * KERNEL[0] * KERNEL[1]


def conv_bounds(in_channels: int, out_channels: int, kernel: tuple) -> dict[str, float]:
    """What else someone might take for 1/sqrt(fan_in), by name, for a layer of these
    sizes."""
    fan_in = in_channels * kernel[0] * kernel[1]
    return {
        "1/sqrt(in_channels) (the fan-in of a convolution is in_channels * kH * kW)":
            1 / math.sqrt(in_channels),
        "1/sqrt(out_channels * kH * kW) (the fan-out)":
            1 / math.sqrt(out_channels * kernel[0] * kernel[1]),
        "1/fan_in (instead of 1/sqrt(fan_in))": 1 / fan_in,
        "sqrt(6/fan_in), Kaiming's bound for ReLU (kaiming_uniform_ without a=sqrt(5))":
            math.sqrt(6 / fan_in),
        "1 (the default range of uniform_)": 1.0,
    }


CONV_BOUNDS = conv_bounds(IN_CHANNELS, OUT_CHANNELS, KERNEL)


@checker
def check_conv_init(module: Callable, *, seed: int = 0,
                    args: tuple = (IN_CHANNELS, OUT_CHANNELS, KERNEL)) -> None:
    """Build ``module(*args)`` (by default ``module(16, 20, (5, 4))``) and check what
    ``check_module`` cannot: ``weight`` (20, 16, 5, 4) and ``bias`` (20,) are registered,
    and uniform in +-1/sqrt(fan_in) with fan_in = in_channels * kH * kW = 320, as
    PyTorch's ``nn.Conv2d`` starts (``check_init``, shared with chapter 7's
    ``check_linear_init``). Choose ``args`` with many weights (thousands), so that the
    bound can be measured."""
    def layout(key: str, shape: tuple) -> str:
        return (" PyTorch's layout is (out_channels, in_channels, kH, kW)."
                if key == "weight" else "")

    in_channels, out_channels, kernel = args
    kernel = (kernel, kernel) if isinstance(kernel, int) else tuple(kernel)
    shapes = {"weight": (out_channels, in_channels) + kernel, "bias": (out_channels,)}
    check_init(module, args, shapes, 1 / math.sqrt(in_channels * kernel[0] * kernel[1]),
               "1/sqrt(in_channels * kH * kW)", conv_bounds(in_channels, out_channels, kernel),
               reference="nn.Conv2d", layout=layout, seed=seed)
    name = getattr(module, "__name__", type(module).__name__)
    print(f"{name}: weight and bias are Parameters of PyTorch's shapes, uniform in "
          "+-1/sqrt(in_channels * kH * kW).")


@reference_for(3, "my_conv2d")
class ReferenceConv2dFunction(Function):
    """Exercise 3's answer, out = im2col(x) @ W^T + b (the checks of code built on
    ``MyConv2dFunction``, the layer ``MyConv2d``, use it)."""

    @staticmethod
    def forward(ctx: Any, x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
                stride: int = 1, padding: int = 0) -> np.ndarray:
        n, _, h, w = x.shape
        out_channels, _, kh, kw = weight.shape
        out_h, out_w = output_size(h, kh, stride, padding), output_size(w, kw, stride, padding)
        ctx.save_for_backward(x, weight, bias)
        ctx.stride, ctx.padding = stride, padding
        out = im2col(x, (kh, kw), stride, padding) @ weight.reshape(out_channels, -1).T + bias
        return out.reshape(n, out_h, out_w, out_channels).transpose(0, 3, 1, 2)

    @staticmethod
    def backward(ctx: Any, grad_output: np.ndarray) -> tuple:
        x, weight, bias = ctx.saved_tensors
        return conv2d_gradients(x, weight, bias, grad_output, ctx.stride, ctx.padding)


__all__ = ["IM2COL_MISTAKES", "OUTPUT_SIZE_MISTAKES", "ReferenceConv2dFunction",
           "check_conv_init", "col2im",
           "conv2d_gradients", "conv2d_mistakes", "im2col", "max_pool2d_gradient",
           "max_pool2d_mistakes", "output_size", "tied_images", "window_view"]
