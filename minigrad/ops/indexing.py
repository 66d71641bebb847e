"""Indexing Functions: ``x[index]``, ``x[index] = value``, ``gather`` and its inverses
``scatter`` and ``scatter_add``, and ``argsort`` (what ``sort`` and ``topk`` gather with).

The gradient of a read is a scatter-add: every element that was read gets back the
gradient of where it went, so an index that appears twice receives two gradients.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..function import Function
from .reduce import dummy

INDEX_HINT = "a dimension of size n takes indices from -n to n-1"


def is_basic(index) -> bool:
    """True if NumPy will return a view: only ints, slices, None and Ellipsis."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice))
               for p in parts)


def _is_int(part) -> bool:
    return isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_))


def torch_placement(index: tuple, shape: tuple):
    """Where PyTorch and NumPy place an index's advanced dimensions apart, the NumPy
    index that gives PyTorch's result, and the dimensions to squeeze from it; else None.

    PyTorch reads the ints of an index first (each removes its dimension, as ``select``)
    and only then the tensors: tensors side by side give their dimensions in place
    (``x[0, :, [1, 2]]`` of a (2, 3, 4) tensor has shape (3, 2)). NumPy counts the ints
    as arrays too, so an int apart from the arrays moves their dimensions to the front
    ((2, 3)). Such an int becomes a slice of length 1 here, squeezed afterwards."""
    if np.ndarray not in [type(part) for part in index]:
        return None  # (the usual case, kept fast: no tensor in the index)
    arrays = [i for i, part in enumerate(index) if isinstance(part, np.ndarray)]
    ints = [i for i, part in enumerate(index) if _is_int(part)]
    if not ints or not _side_by_side(arrays, arrays, ints) or \
            _side_by_side(arrays + ints, arrays, ints):
        return None  # NumPy agrees: the arrays are apart in both, or the ints touch them
    return _ints_as_slices(index, shape, arrays[0], arrays[-1])


def _side_by_side(positions: list, arrays: list, ints: list) -> bool:
    """Are ``positions`` of an index one run of arrays and ints (nothing else between)?"""
    return all(i in arrays or i in ints for i in range(min(positions), max(positions) + 1))


def _ints_as_slices(index: tuple, shape: tuple, first: int, last: int) -> tuple:
    """``index`` with each int outside the arrays' run (``first`` .. ``last``) made a
    slice of length 1, and where those length-1 dimensions end up in NumPy's result."""
    placed, squeeze, position, dim = [], [], 0, 0
    ellipsis_dims = len(shape) - sum(part.ndim if isinstance(part, np.ndarray)
                                     and part.dtype == bool else 1 for part in index
                                     if part is not None and part is not Ellipsis)
    block = np.broadcast_shapes(*[(int(part.sum()),) if part.dtype == bool else part.shape
                                  for part in index if isinstance(part, np.ndarray)])
    for i, part in enumerate(index):
        if _is_int(part) and not first < i < last:
            if dim >= len(shape) or not -shape[dim] <= part < shape[dim]:
                raise IndexError(f"index {part} is out of bounds for dimension {dim} of a "
                                 f"tensor of shape {tuple(shape)}")
            part = slice(part, part + 1 if part != -1 else None)
            squeeze.append(position)
        placed.append(part)
        if i == first:
            position += len(block)  # the arrays' dimensions, in place
        if part is Ellipsis:
            position, dim = position + ellipsis_dims, dim + ellipsis_dims
        elif part is None or isinstance(part, slice):
            position, dim = position + 1, dim + (part is not None)
        else:  # an array (a bool one covers its dims) or an int in the arrays' run
            dim += part.ndim if isinstance(part, np.ndarray) and part.dtype == bool else 1
    return tuple(placed), tuple(squeeze)


class GetItem(Function):
    """f(x) = x[index];  the gradient is scattered back (added up for repeated indices)"""

    view = True
    hint = INDEX_HINT

    @staticmethod
    def forward(ctx, x, index):
        ctx.input_shape, ctx.index = x.shape, index
        return x[index]

    @staticmethod
    def output_shape(x, index):
        return dummy(x.shape)[index].shape

    @staticmethod
    def output_dtype(x, index):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        return scatter_at(ctx.input_shape, ctx.index, grad_output), None

    # create_graph=True: the same scatter, as a recorded op (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        return IndexBackward.apply(grad_output, input_shape=ctx.input_shape,
                                   index=ctx.index), None


def scatter_at(shape: tuple, index, grad_output: np.ndarray) -> np.ndarray:
    """Zeros of ``shape`` with ``grad_output`` added at ``index`` (repeats add up)."""
    grad_input = np.zeros(shape, dtype=grad_output.dtype)
    if is_basic(index):
        grad_input[index] = grad_output  # no element can be read twice
    else:
        np.add.at(grad_input, index, grad_output)
    return grad_input


class IndexBackward(Function):
    """f(g) = zeros(input_shape) with g added at index: GetItem's backward as an op, so
    that the gradient of an indexing is differentiated again;  df/dg = the gradient
    read at index (a GetItem again, and so on to any order)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, grad_output, input_shape, index):
        ctx.index = index
        return scatter_at(input_shape, index, grad_output)

    @staticmethod
    def output_shape(grad_output, input_shape, index):
        return tuple(input_shape)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output[ctx.index]


class SetItem(Function):
    """f(x, v) = x with x[index] replaced by v. Used by ``x[index] = v`` on a tensor
    with history. df/dx is 1 outside the index and 0 inside; df/dv = the gradient there."""

    hint = INDEX_HINT + "; the value must broadcast to the shape of x[index]"

    @staticmethod
    def forward(ctx, x, value, index):
        ctx.index = index
        out = x.copy()
        out[index] = value
        return out

    @staticmethod
    def output_shape(x, value, index):
        return tuple(x.shape)

    @staticmethod
    def output_dtype(x, value, index):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        needs_x, needs_value, _ = ctx.needs_input_grad
        grad_x = grad_output.copy() if needs_x else None
        if needs_x:
            grad_x[ctx.index] = 0
        return grad_x, (grad_output[ctx.index] if needs_value else None), None

    # create_graph=True: the same two steps, as recorded ops (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        needs_x, needs_value, _ = ctx.needs_input_grad
        grad_x = SetItem.apply(grad_output, 0.0, ctx.index) if needs_x else None
        grad_value = GetItem.apply(grad_output, ctx.index) if needs_value else None
        return grad_x, grad_value, None


# An in-place op on a view of a tensor with history is recorded on its base, as PyTorch
# does (``Tensor._write_through_view``): the base becomes CopySlices(old base, op(view's
# elements of the old base)), and the view AsStrided(new base). The index is where the
# view's elements are in the base (``versions.positions_in_base``).

class CopySlices(SetItem):
    """f(base, v) = base with the elements a view of it shows replaced by v (PyTorch's
    name for an in-place op through a view, recorded on the base)"""


class AsStrided(GetItem):
    """f(base) = the elements of base that a view shows (PyTorch's AsStridedBackward:
    the history a view gets when its base was modified in place)"""

    view = False  # its result is a copy: the view keeps its own memory, takes the node


class Gather(Function):
    """f(x, index)[i][j] = x[index[i][j]][j] for dim = 0 (and so on: PyTorch's gather);
    the gradient is scattered back along ``dim``"""

    hint = "index must have as many dimensions as the input, hold int64 values in range"

    @staticmethod
    def forward(ctx, x, index, dim):
        check_index("gather", x, index, dim)
        ctx.input_shape, ctx.dim = x.shape, dim
        ctx.save_for_backward(index)
        return np.take_along_axis(x[_leading(index.shape, dim)], index, axis=dim)

    @staticmethod
    def output_shape(x, index, dim):
        return tuple(index.shape)

    @staticmethod
    def output_dtype(x, index, dim):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad_input = np.zeros(ctx.input_shape, dtype=grad_output.dtype)
        np.add.at(grad_input, _scatter_index(index, ctx.dim), grad_output)
        return grad_input, None, None

    # create_graph=True: the same scatter, as a recorded op (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        return IndexBackward.apply(grad_output, input_shape=ctx.input_shape,
                                   index=_scatter_index(index, ctx.dim)), None, None


def _leading(index_shape: tuple, dim: int) -> tuple:
    """gather reads only the first index.shape[d] entries of every other dimension."""
    return tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index_shape))


def _scatter_index(index: np.ndarray, dim: int) -> tuple:
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def check_index(op: str, x: np.ndarray, index: np.ndarray, dim: int, source=None) -> None:
    """The index of gather / scatter: as many dims as x, integers in range along ``dim``,
    and no larger than x (and than the source, for scatter) in the other dims."""
    if index.ndim != x.ndim:
        raise ShapeError(
            f"{op}: index has {index.ndim} dimension(s) but input has {x.ndim} "
            f"(input shape {x.shape}, index shape {index.shape}); they must match"
        )
    if index.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must be an integer tensor, got {index.dtype}")
    if index.size and (index.min() < 0 or index.max() >= x.shape[dim]):
        bad = index.min() if index.min() < 0 else index.max()
        raise IndexError(
            f"{op}: index {bad} is out of bounds for dim {dim} with size {x.shape[dim]} "
            f"(input shape {x.shape}); indices must be in 0..{x.shape[dim] - 1}"
        )
    for d in range(x.ndim):
        if d != dim and index.shape[d] > x.shape[d]:
            raise ShapeError(
                f"{op}: index shape {index.shape} is larger than input shape {x.shape} "
                f"in dim {d}; outside dim {dim} the index can be at most as large"
            )
    if getattr(source, "ndim", 0) and (source.ndim != index.ndim or any(
            i > s for i, s in zip(index.shape, source.shape))):
        raise ShapeError(
            f"{op}: index shape {index.shape} is larger than src shape {source.shape} (or "
            "has another number of dimensions); src needs a value for every index"
        )


class Scatter(Function):
    """f(x, src) = x with x[index[i][j]][j] = src[i][j] for dim = 0 (PyTorch's scatter;
    ``src`` may be a number). df/dx = the gradient where nothing was written, 0 there;
    df/dsrc = the gradient gathered from where each value went."""

    hint = "index must have as many dimensions as the input, hold int64 values in range"

    @staticmethod
    def forward(ctx, x, index, source, dim):
        check_index("scatter", x, index, dim, source)
        ctx.where, ctx.source_shape = _scatter_index(index, dim), np.shape(source)
        ctx.used = _leading(index.shape, -1)  # the part of src that is scattered
        out = x.copy()
        out[ctx.where] = source[ctx.used] if np.ndim(source) else source
        return out

    @staticmethod
    def output_shape(x, index, source, dim):
        check_index("scatter", x, index, dim, source)  # lazy mode: when the op is written
        return tuple(x.shape)

    @staticmethod
    def output_dtype(x, index, source, dim):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        needs_x, _, needs_source, _ = ctx.needs_input_grad
        grad_x = grad_source = None
        if needs_x:
            grad_x = grad_output.copy()
            grad_x[ctx.where] = 0
        if needs_source:
            grad_source = np.zeros(ctx.source_shape, dtype=grad_output.dtype)
            grad_source[ctx.used] = grad_output[ctx.where]
        return grad_x, None, grad_source, None

    # create_graph=True: the same mask and gather, as recorded ops (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        needs_x, _, needs_source, _ = ctx.needs_input_grad
        grad_x = None
        if needs_x:
            written = np.zeros(grad_output.shape, dtype=bool)
            written[ctx.where] = True
            grad_x = grad_output * ~written
        return grad_x, None, _gathered_source(ctx, grad_output, needs_source), None


class ScatterAdd(Function):
    """f(x, src) = x with src[i][j] added to x[index[i][j]][j] for dim = 0 (repeated
    indices add up). df/dx = the gradient; df/dsrc = the gradient gathered from where
    each value was added."""

    hint = "index must have as many dimensions as the input, hold int64 values in range"

    @staticmethod
    def forward(ctx, x, index, source, dim):
        check_index("scatter_add", x, index, dim, source)
        ctx.where, ctx.source_shape = _scatter_index(index, dim), source.shape
        ctx.used = _leading(index.shape, -1)  # the part of src that is added
        out = x.copy()
        np.add.at(out, ctx.where, source[ctx.used])
        return out

    @staticmethod
    def output_shape(x, index, source, dim):
        check_index("scatter_add", x, index, dim, source)  # lazy mode: when the op is written
        return tuple(x.shape)

    @staticmethod
    def output_dtype(x, index, source, dim):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        needs_x, _, needs_source, _ = ctx.needs_input_grad
        grad_source = None
        if needs_source:
            grad_source = np.zeros(ctx.source_shape, dtype=grad_output.dtype)
            grad_source[ctx.used] = grad_output[ctx.where]
        return (grad_output if needs_x else None), None, grad_source, None

    # create_graph=True: the same gather, as recorded ops (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        needs_x, _, needs_source, _ = ctx.needs_input_grad
        return ((grad_output if needs_x else None), None,
                _gathered_source(ctx, grad_output, needs_source), None)


def _gathered_source(ctx, grad_output, needed: bool):
    """A scatter's gradient for its source, as recorded ops: the gradient read where each
    value went (a GetItem), placed into zeros of the source's shape (an IndexBackward)."""
    if not needed:
        return None
    return IndexBackward.apply(grad_output[ctx.where], input_shape=ctx.source_shape,
                               index=ctx.used)


class ArgSort(Function):
    """The indices that sort x along ``dim`` (largest first if ``descending``; a stable
    sort keeps equal elements in their order); no gradient: ``sort`` gathers with them"""

    differentiable = False

    @staticmethod
    def forward(ctx, x, dim, descending=False, stable=False):
        if x.dtype.kind in "ub":  # so that -x below cannot wrap around
            x = x.astype(np.int64)
        return np.argsort(-x if descending else x, axis=dim, kind="stable").astype(np.int64)

    @staticmethod
    def output_shape(x, dim, descending=False, stable=False):
        return tuple(x.shape)

    @staticmethod
    def output_dtype(*inputs, **kwargs):
        return np.dtype(np.int64)
