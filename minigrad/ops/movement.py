"""Movement Functions: they move, copy or view elements without arithmetic.

The backward of each is the inverse movement: a reshape is undone by a reshape, a
transpose by the same transpose, an expand by a sum, a pad by a slice.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..errors import ShapeError
from ..function import Function
from .indexing import IndexBackward
from .reduce import dummy, normalize_dims

RESHAPE_HINT = "the number of elements must stay the same; use -1 for one size to infer it"


def check_dim(dim: int, ndim: int, op: str) -> int:
    (d,) = normalize_dims(dim, ndim, op)
    return d


class Clone(Function):
    """f(x) = a copy of x"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class Reshape(Function):
    """f(x) = x with a new shape (a view when NumPy can make one)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    view = True
    hint = RESHAPE_HINT

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def output_shape(x, shape):
        return dummy(x.shape).reshape(shape).shape

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.reshape(ctx.input_shape), None


class Permute(Function):
    """f(x) = x with its dimensions reordered; backward applies the inverse order"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    view = True
    hint = "give each dimension exactly once, e.g. permute(0, 2, 1) for a 3-D tensor"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def output_shape(x, dims):
        return tuple(x.shape[d] for d in dims)

    @staticmethod
    def backward(ctx, grad_output):
        return np.transpose(grad_output, np.argsort(ctx.dims)), None


class Expand(Function):
    """f(x) = x broadcast to a larger shape (a read-only view); backward sums"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    view = True
    hint = "only dimensions of size 1 can be expanded; -1 keeps a size"

    @staticmethod
    def forward(ctx, x, shape):
        return np.broadcast_to(x, shape)

    @staticmethod
    def output_shape(x, shape):
        # forward's check (and error) before it runs (lazy mode), on a stand-in of x's
        # shape that takes no memory
        return np.broadcast_to(np.broadcast_to(np.empty((), np.int8), x.shape), shape).shape

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None  # the engine sums it back to the input's shape


class Repeat(Function):
    """f(x) = x tiled ``repeats`` times along each dimension (PyTorch's ``repeat``)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, repeats):
        _check_repeats(x.shape, repeats)
        ctx.input_shape = (1,) * (len(repeats) - x.ndim) + x.shape
        ctx.repeats = repeats
        return np.tile(x, repeats)

    @staticmethod
    def output_shape(x, repeats):
        _check_repeats(tuple(x.shape), repeats)  # before forward runs (lazy mode)
        shape = (1,) * (len(repeats) - len(x.shape)) + tuple(x.shape)
        return tuple(s * r for s, r in zip(shape, repeats))

    @staticmethod
    def backward(ctx, grad_output):
        # split every dimension into (repeat, size) and sum over the repeats
        split = []
        for r, s in zip(ctx.repeats, ctx.input_shape):
            split += [r, s]
        summed = grad_output.reshape(split).sum(axis=tuple(range(0, len(split), 2)))
        return summed, None


def _check_repeats(shape: tuple, repeats: tuple) -> None:
    if len(repeats) < len(shape):
        raise ShapeError(
            f"repeat: got {len(repeats)} repeat count(s) for a tensor of shape {shape}; "
            f"give at least {len(shape)} (one per dimension)"
        )


class Pad(Function):
    """f(x) = x with constant borders; backward cuts the borders off again.
    ``pad`` holds (before, after) pairs, one per dimension, first dimension first."""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = "give pads as (left, right) for the last dim, then (top, bottom), ..."

    @staticmethod
    def forward(ctx, x, pad, value=0.0):
        ctx.slices = tuple(slice(before, before + size) for (before, _), size in zip(pad, x.shape))
        return np.pad(x, pad, mode="constant", constant_values=value)

    @staticmethod
    def output_shape(x, pad, value=0.0):
        return tuple(s + before + after for s, (before, after) in zip(x.shape, pad))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output[ctx.slices], None


class Roll(Function):
    """f(x) = x shifted cyclically; backward shifts back"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return np.roll(x, shifts, axis=dims)

    @staticmethod
    def output_shape(x, shifts, dims):
        normalize_axis_tuple(dims, len(x.shape))  # np.roll's check, before it runs (lazy)
        return tuple(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        # np.negative: shifts may be an int, a tuple or a list, as in PyTorch
        return np.roll(grad_output, np.negative(ctx.shifts), axis=ctx.dims), None, None


class Cat(Function):
    """f(x1, x2, ...) = the inputs joined along ``dim``; backward splits the gradient"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = "all inputs must have the same shape except along the joining dimension"

    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        ctx.boundaries = np.cumsum([x.shape[dim] for x in xs])[:-1]
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def output_shape(*xs, dim=0):
        shape = list(xs[0].shape)
        for x in xs[1:]:  # np.concatenate's check, before it runs (lazy mode)
            if any(a != b for d, (a, b) in enumerate(zip(x.shape, shape)) if d != dim):
                raise ValueError("all the input array dimensions except for the "
                                 f"concatenation axis must match exactly, but got shapes "
                                 f"{tuple(xs[0].shape)} and {tuple(x.shape)}")
        shape[dim] = sum(x.shape[dim] for x in xs)
        return tuple(shape)

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(np.split(grad_output, ctx.boundaries, axis=ctx.dim))


class Stack(Function):
    """f(x1, x2, ...) = the inputs stacked along a new ``dim``"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = "all inputs must have exactly the same shape"

    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        return np.stack(xs, axis=dim)

    @staticmethod
    def output_shape(*xs, dim=0):
        if any(x.shape != xs[0].shape for x in xs):  # np.stack's check, before it runs
            raise ValueError("all input arrays must have the same shape")
        shape = list(xs[0].shape)
        shape.insert(dim, len(xs))
        return tuple(shape)

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(np.moveaxis(grad_output, ctx.dim, 0))


class Unbind(Function):
    """f(x) = the slices x[i] along ``dim``, as separate outputs; backward stacks their
    gradients (one array, where slicing one by one would allocate a gradient of x's
    whole size per slice: what a recurrent layer's loop over time steps needs)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return tuple(np.moveaxis(x, dim, 0))

    @staticmethod
    def output_shape(x, dim):
        shape = tuple(s for d, s in enumerate(x.shape) if d != dim)
        return (shape,) * x.shape[dim]

    @staticmethod
    def backward(ctx, *grad_outputs):
        return np.stack(grad_outputs, axis=ctx.dim), None


class Split(Function):
    """f(x) = consecutive pieces of x along ``dim``, of the given sizes, as separate
    outputs (views); backward joins their gradients (zeros for a piece not used)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = "the sizes must add up to the size of the dimension being split"

    @staticmethod
    def forward(ctx, x, sizes, dim):
        _check_split(x.shape, sizes, dim)
        ctx.dim = dim
        return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=dim))

    @staticmethod
    def output_shape(x, sizes, dim):
        _check_split(tuple(x.shape), sizes, dim)
        return tuple(tuple(x.shape[:dim]) + (size,) + tuple(x.shape[dim + 1:]) for size in sizes)

    @staticmethod
    def output_dtype(x, sizes, dim):
        return x.dtype

    @staticmethod
    def backward(ctx, *grad_outputs):
        return np.concatenate(grad_outputs, axis=ctx.dim), None, None


def _check_split(shape: tuple, sizes: tuple, dim: int) -> None:
    if sum(sizes) != shape[dim] or any(size < 0 for size in sizes):
        raise ShapeError(f"split: sizes {list(sizes)} add up to {sum(sizes)}, but dim {dim} of "
                         f"a tensor of shape {shape} has size {shape[dim]}")


class RepeatInterleave(Function):
    """f(x) = each slice of x along ``dim`` repeated ``repeats`` times in a row
    ([a, b] -> [a, a, b, b]); backward adds up the gradients of the copies"""

    hint = "repeats is an int, or one count per slice along dim"

    @staticmethod
    def forward(ctx, x, repeats, dim):
        ctx.dim, ctx.source = dim, np.repeat(np.arange(x.shape[dim]), repeats)
        ctx.input_shape = x.shape
        return np.repeat(x, repeats, axis=dim)

    @staticmethod
    def output_shape(x, repeats, dim):
        shape = list(x.shape)
        shape[dim] = int(np.sum(np.broadcast_to(repeats, (shape[dim],))))
        return tuple(shape)

    @staticmethod
    def output_dtype(x, repeats, dim):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = np.zeros(ctx.input_shape, dtype=grad_output.dtype)
        np.add.at(np.moveaxis(grad_input, ctx.dim, 0), ctx.source,
                  np.moveaxis(grad_output, ctx.dim, 0))
        return grad_input, None, None

    # create_graph=True: the same sum, as a recorded scatter-add (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        index = (slice(None),) * (ctx.dim % len(ctx.input_shape)) + (ctx.source,)
        return IndexBackward.apply(grad_output, input_shape=ctx.input_shape,
                                   index=index), None, None


class Unfold(Function):
    """Strided windows (PyTorch's ``Tensor.unfold``): every window of ``size`` elements,
    ``step`` apart, along ``dim``; the window becomes a new last dimension. A read-only
    view, no copy: the basis of convolution and pooling. Backward adds each window's
    gradient back where the window came from (overlapping windows accumulate)."""

    view = True
    hint = "the window size must be at most the size of the dimension, and step >= 1"

    @staticmethod
    def forward(ctx, x, dim, size, step):
        if not 1 <= size <= x.shape[dim] or step < 1:
            raise ShapeError(
                f"unfold: cannot take windows of size {size}, step {step} along dim {dim} "
                f"of a tensor of shape {x.shape}"
            )
        ctx.input_shape, ctx.dim, ctx.size, ctx.step = x.shape, dim, size, step
        windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
        index = [slice(None)] * windows.ndim
        index[dim] = slice(None, None, step)
        return windows[tuple(index)]

    @staticmethod
    def output_shape(x, dim, size, step):
        shape = list(x.shape)
        shape[dim] = (shape[dim] - size) // step + 1
        return tuple(shape) + (size,)

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = np.zeros(ctx.input_shape, dtype=grad_output.dtype)
        count = grad_output.shape[ctx.dim]
        index = [slice(None)] * len(ctx.input_shape)
        for k in range(ctx.size):  # a loop over the window's offsets, not over elements
            index[ctx.dim] = slice(k, k + ctx.step * (count - 1) + 1, ctx.step)
            grad_input[tuple(index)] += grad_output[..., k]
        return grad_input, None, None, None

    # create_graph=True: the same sum, as a recorded scatter-add (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        index = unfold_index(ctx.input_shape, ctx.dim, ctx.size, ctx.step)
        return IndexBackward.apply(grad_output, input_shape=ctx.input_shape,
                                   index=index), None, None, None


def unfold_index(shape: tuple, dim: int, size: int, step: int) -> tuple:
    """The integer index that reads Unfold's windows from an array of ``shape``:
    ``x[unfold_index(...)]`` equals ``x.unfold(dim, size, step)`` (as a copy)."""
    dim = dim % len(shape)
    count = (shape[dim] - size) // step + 1
    ndim = len(shape) + 1
    index = []
    for d, length in enumerate(shape):
        place = [1] * ndim
        if d == dim:  # window w, element k: position w * step + k
            place[d], place[-1] = count, size
            starts = np.arange(count).reshape(-1, 1) * step
            index.append((starts + np.arange(size)).reshape(place))
        else:
            place[d] = length
            index.append(np.arange(length).reshape(place))
    return tuple(index)


class Diagonal(Function):
    """f(x) = the diagonal of dims ``dim1``, ``dim2`` (``offset`` above it if positive)
    as a new last dimension: a view, as PyTorch's, so writing it writes x. Backward puts
    the gradient on that diagonal of zeros."""

    view = True
    hint = "dim1 and dim2 must be two different dimensions of the input"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.input_shape, ctx.where = x.shape, (offset, dim1, dim2)
        return diagonal_view(x, offset, dim1, dim2)

    @staticmethod
    def output_shape(x, offset, dim1, dim2):
        return np.diagonal(dummy(x.shape), offset, dim1, dim2).shape

    @staticmethod
    def output_dtype(x, offset, dim1, dim2):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        return on_diagonal(grad_output, ctx.input_shape, *ctx.where), None, None, None

    # create_graph=True: the same placement, as a recorded op (and its backward reads
    # the diagonal again)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        return (DiagonalBackward.apply(grad_output, ctx.input_shape, *ctx.where),
                None, None, None)


class DiagonalBackward(Function):
    """f(g) = zeros of the input's shape with g on the diagonal: Diagonal's backward as an
    op;  df/dg = the gradient's diagonal (a Diagonal again)"""

    @staticmethod
    def forward(ctx, grad_output, input_shape, offset, dim1, dim2):
        ctx.where = (offset, dim1, dim2)
        return on_diagonal(grad_output, input_shape, offset, dim1, dim2)

    @staticmethod
    def output_shape(grad_output, input_shape, offset, dim1, dim2):
        return tuple(input_shape)

    @staticmethod
    def backward(ctx, grad_output):
        return np.diagonal(grad_output, *ctx.where).copy(), None, None, None, None

    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        return Diagonal.apply(grad_output, *ctx.where), None, None, None, None


def diagonal_view(x: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """NumPy's diagonal, writable when x is (NumPy returns it read-only, for now)."""
    diagonal = np.diagonal(x, offset, dim1, dim2)
    if x.flags.writeable:
        diagonal.flags.writeable = True
    return diagonal


def on_diagonal(values: np.ndarray, shape: tuple, offset: int, dim1: int,
                dim2: int) -> np.ndarray:
    """Zeros of ``shape`` with ``values`` on the diagonal of dims ``dim1``, ``dim2``."""
    out = np.zeros(shape, dtype=values.dtype)
    diagonal_view(out, offset, dim1, dim2)[...] = values
    return out
