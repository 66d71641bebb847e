"""Reductions: sum, mean, prod, max/min, var, norm, logsumexp, argmax/argmin, all/any, and the
running sum cumsum.

Each takes ``dim`` (an int, a tuple of ints, or None for all) and ``keepdim``. Backward
puts the reduced dimensions back (``_unreduce``) and broadcasts to the input's shape.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DimensionError, ShapeError
from ..function import Function
from ..higher_order import graph_output


def dummy(shape: tuple) -> np.ndarray:
    """A zero-memory array of ``shape``, for working out result shapes in lazy mode."""
    return np.broadcast_to(np.zeros((), dtype=np.int8), shape)


def normalize_dims(dim, ndim: int, op: str) -> tuple[int, ...]:
    """``None`` -> all dimensions; ints may be negative; each must exist."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim) \
        if isinstance(dim, (tuple, list)) else (dim,)
    result = []
    for d in dims:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise TypeError(f"{op}: dim must be an int or a tuple of ints, got {dim!r}")
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise DimensionError(
                f"{op}: dim {d} is out of range for a tensor with {ndim} dimension(s); "
                f"use a dim from {-max(ndim, 1)} to {max(ndim, 1) - 1}"
            )
        result.append(d % ndim if ndim else 0)
    if len(set(result)) != len(result):
        raise ShapeError(f"{op}: dim {tuple(dims)} names a dimension more than once; "
                         "give each dimension once")
    return tuple(sorted(result))


def reduced_shape(shape, dim, keepdim: bool, op: str) -> tuple[int, ...]:
    dims = normalize_dims(dim, len(shape), op)
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def row_sums(a: np.ndarray) -> np.ndarray:
    """The sums over ``a``'s last axis, as a product with ones: one BLAS call, where
    NumPy's reduction loop pays per row (attention's 16x4x64x64 float32 scores: 40 us
    against 157 us; a convolution's bias gradient: twice as fast as ``sum`` over three
    axes, CNN benchmark). The engine's kernels use it; ``Sum`` stays NumPy's sum."""
    return a @ np.ones(a.shape[-1], dtype=a.dtype)


def column_sums(a: np.ndarray) -> np.ndarray:
    """The sums over a matrix's first axis (one per column), as a product with ones."""
    return np.ones(a.shape[0], dtype=a.dtype) @ a


def _unreduce(grad_output: np.ndarray, ctx) -> np.ndarray:
    """Give a reduced gradient its reduced dimensions back (size 1), ready to broadcast."""
    if ctx.keepdim or not ctx.dims:
        return grad_output
    return np.expand_dims(grad_output, ctx.dims)


class _Reduction(Function):
    @classmethod
    def output_shape(cls, x, dim=None, keepdim=False, **kwargs):
        return reduced_shape(x.shape, _all_if_empty(dim), keepdim, cls.oper.lower())


def _all_if_empty(dim):
    """PyTorch's sum, mean, var, max ... read ``dim=[]`` (or ``()``) as every dim."""
    return None if isinstance(dim, (tuple, list)) and not dim else dim


def _remember(ctx, x, dim, keepdim, op):
    dims = normalize_dims(_all_if_empty(dim), x.ndim, op)  # (checked on a 0-d x too)
    ctx.dims = dims if x.ndim else ()
    ctx.keepdim = keepdim
    ctx.input_shape = x.shape
    return ctx.dims if x.ndim else None


def _integer_sum_dtype(x: np.ndarray):
    """The dtype of a sum or product: int64 for bools and every integer dtype, as in
    PyTorch (NumPy gives uint64 for unsigned ones); None (x's own) for floats."""
    return np.int64 if x.dtype.kind in "biu" else None


class Sum(_Reduction):
    """f(x) = sum of x over dim;  df/dx = 1 everywhere"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        axes = _remember(ctx, x, dim, keepdim, "sum")
        if x.dtype == np.float16:  # as PyTorch: a float32 sum, rounded once to float16
            total = np.sum(x, axis=axes, keepdims=keepdim, dtype=np.float32)
            with np.errstate(over="ignore"):  # (beyond 65504: inf, as PyTorch, silently)
                return total.astype(x.dtype)
        return np.sum(x, axis=axes, keepdims=keepdim, dtype=_integer_sum_dtype(x))

    @staticmethod
    def output_dtype(x, dim=None, keepdim=False):
        return x.dtype if x.dtype.kind in "fc" else np.dtype(np.int64)

    @staticmethod
    def backward(ctx, grad_output):
        return np.broadcast_to(_unreduce(grad_output, ctx), ctx.input_shape)


class Mean(_Reduction):
    """f(x) = sum of x over dim / n;  df/dx = 1 / n"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        axes = _remember(ctx, x, dim, keepdim, "mean")
        ctx.count = int(np.prod([x.shape[d] for d in ctx.dims])) if x.ndim else 1
        if ctx.count == 0:  # the mean of no numbers: NaN, as PyTorch's (without NumPy's
            with np.errstate(invalid="ignore"):  # "Mean of empty slice" warning)
                return np.sum(x, axis=axes, keepdims=keepdim) / np.array(0, x.dtype)
        return np.mean(x, axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        return np.broadcast_to(_unreduce(grad_output, ctx) / ctx.count, ctx.input_shape)


class Prod(_Reduction):
    """f(x) = product of x over dim (one dim, or all);  df/dx_i = product of the others,
    computed as (product of those before i) * (product of those after i), so that a
    zero in x gives the right gradient instead of 0 / 0"""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        ctx.input_shape, ctx.keepdim = x.shape, keepdim
        dims = normalize_dims(dim, x.ndim, "prod") if dim is not None else ()
        ctx.dims = dims if x.ndim else ()
        ctx.save_for_backward(x)
        dtype = _integer_sum_dtype(x)
        if dim is None:
            return np.prod(x, keepdims=keepdim, dtype=dtype)
        return np.prod(x, axis=ctx.dims, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        axis = ctx.dims[0] if ctx.dims else None
        rows = np.moveaxis(x, axis, -1) if axis is not None else x.reshape(-1)
        ones = np.ones(rows.shape[:-1] + (1,), dtype=x.dtype)
        before = np.cumprod(np.concatenate([ones, rows[..., :-1]], axis=-1), axis=-1)
        after = np.cumprod(np.concatenate([ones, rows[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        others = before * after
        others = np.moveaxis(others, -1, axis) if axis is not None else others.reshape(x.shape)
        return _unreduce(grad_output, ctx) * others

    # create_graph=True: the product of the others as a recorded Prod (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        axis = ctx.dims[0] if ctx.dims else None
        rows = x.transpose(axis, -1) if axis is not None else x.reshape(-1)
        others = products_of_the_others(rows)
        others = others.transpose(axis, -1) if axis is not None else others.reshape(x.shape)
        return _unreduce(grad_output, ctx) * others

    @staticmethod
    def output_dtype(x, dim=None, keepdim=False):
        return x.dtype if x.dtype.kind in "fc" else np.dtype(np.int64)


def products_of_the_others(rows):
    """For a Tensor of rows (..., n): element i of each row becomes the product of the
    row's other elements, as a recorded Prod over n copies of the row whose diagonal is
    set to 1. No division, so it is exact where the row holds zeros (and costs n times
    the row's size: it runs only for create_graph=True)."""
    n = rows.shape[-1]
    diagonal = np.eye(n, dtype=rows.dtype)
    copies = rows.unsqueeze(-2).expand(*rows.shape[:-1], n, n)
    return (copies * (1 - diagonal) + diagonal).prod(dim=-1)


class Cumsum(Function):
    """f(x)_i = x_0 + ... + x_i along dim;  df/dx_j = sum of the gradient from j on,
    so backward is a cumsum of the gradient taken from the other end"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        if x.dtype == np.float16:  # as PyTorch: a float32 running sum, each rounded to
            # float16 (a float16 one stops growing at 2048 when adding numbers below 1)
            with np.errstate(over="ignore"):  # (beyond 65504: inf, silently)
                return np.cumsum(x, axis=dim, dtype=np.float32).astype(np.float16)
        dtype = x.dtype if x.dtype.kind in "fc" else np.int64
        return np.cumsum(x, axis=dim, dtype=dtype)

    @staticmethod
    def output_dtype(x, dim):
        return x.dtype if x.dtype.kind in "fc" else np.dtype(np.int64)

    @staticmethod
    def backward(ctx, grad_output):
        flipped = np.flip(grad_output, ctx.dim)
        return np.flip(np.cumsum(flipped, axis=ctx.dim), ctx.dim), None


class Max(_Reduction):
    """f(x) = max of x over dim; the gradient goes to the maximal elements, split evenly
    between ties (as ``maximum`` does). With ``return_indices`` it also returns the
    argmax (no gradient), like ``torch.max(x, dim)``."""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    take = staticmethod(np.max)
    arg = staticmethod(np.argmax)

    @classmethod
    def forward(cls, ctx, x, dim=None, keepdim=False, return_indices=False):
        axes = _remember(ctx, x, dim, keepdim, cls.oper.lower())
        if x.size == 0 and (x.ndim == 0 or any(x.shape[d] == 0 for d in ctx.dims)):
            raise ShapeError(
                f"{cls.oper.lower()}: cannot reduce an empty tensor of shape {x.shape} "
                f"over dim {dim}: there is no largest or smallest of no elements")
        values = cls.take(x, axis=axes, keepdims=True)
        ctx.save_for_backward(x, values)
        out = values if keepdim else np.squeeze(values, axis=axes)
        if not return_indices:
            return out
        axis = ctx.dims[0] if ctx.dims else None  # a 0-d x has no dims: its index is 0
        indices = cls.arg(x, axis=axis, keepdims=keepdim).astype(np.int64)
        ctx.mark_non_differentiable(indices)
        ctx.set_materialize_grads(False)
        return out, indices

    @classmethod
    def output_shape(cls, x, dim=None, keepdim=False, return_indices=False):
        shape = reduced_shape(x.shape, dim, keepdim, cls.oper.lower())
        return (shape, shape) if return_indices else shape

    @staticmethod
    def output_dtype(x, dim=None, keepdim=False, return_indices=False):
        return (x.dtype, np.dtype(np.int64)) if return_indices else x.dtype

    @staticmethod
    def backward(ctx, grad_output, grad_indices=None):
        x, values = ctx.saved_tensors
        winners = x == values
        share = winners / winners.sum(axis=ctx.dims, keepdims=True)
        return _unreduce(grad_output, ctx) * share.astype(grad_output.dtype)


class Min(Max):
    """f(x) = min of x over dim; the gradient goes to the minimal elements"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    take = staticmethod(np.min)
    arg = staticmethod(np.argmin)


class Var(_Reduction):
    """f(x) = sum((x - mean)^2) / (n - correction);  df/dx = 2 (x - mean) / (n - correction)"""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, correction=1):
        axes = _remember(ctx, x, dim, keepdim, "var")
        count = int(np.prod([x.shape[d] for d in ctx.dims])) if x.ndim else 1
        ctx.denominator = max(count - correction, 0)
        if count:
            centered = x - np.mean(x, axis=axes, keepdims=True)
        else:  # no elements: NaN, as PyTorch, without NumPy's "Mean of empty slice"
            centered = x * np.array(np.nan, x.dtype)
        ctx.save_for_backward(centered)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sum(centered * centered, axis=axes, keepdims=keepdim) / ctx.denominator

    @staticmethod
    def backward(ctx, grad_output):
        (centered,) = ctx.saved_tensors
        scale = 2 / ctx.denominator if ctx.denominator else math.inf  # n <= correction:
        with np.errstate(invalid="ignore"):  # 0 * inf, NaN, as PyTorch's
            return _unreduce(grad_output, ctx) * centered * scale

    # create_graph=True: centered again, from the input Tensor (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        x = ctx.args[0]
        centered = x - x.mean(dim=ctx.dims, keepdim=True) if ctx.dims else x * 0
        return _unreduce(grad_output, ctx) * centered * (2 / ctx.denominator)


class Norm(_Reduction):
    """f(x) = (sum |x|^p)^(1/p) over dim, p > 0;  df/dx = sign(x) |x|^(p-1) / f^(p-1),
    which is x / f for p = 2; 0 where f = 0 (a zero vector), as in PyTorch"""

    @staticmethod
    def forward(ctx, x, p=2, dim=None, keepdim=False):
        axes = _remember(ctx, x, dim, keepdim, "norm")
        if p == 2:
            out = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
        else:
            out = np.sum(np.abs(x) ** p, axis=axes, keepdims=True) ** (1 / p)
        ctx.p = p
        ctx.save_for_backward(x, out)
        return out if keepdim or axes is None else np.squeeze(out, axis=axes)

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(out == 0, 0, _unreduce(grad_output, ctx) / out ** (ctx.p - 1))
        if ctx.p == 2:
            return (x * scale).astype(grad_output.dtype, copy=False)
        return (np.sign(x) * np.abs(x) ** (ctx.p - 1) * scale).astype(grad_output.dtype,
                                                                        copy=False)

    # create_graph=True: the same formula, with the output Tensor (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        x, out = ctx.saved_tensors  # x: the input Tensor; out: the norm, with keepdims
        norm = graph_output(ctx, out)
        zero = out == 0  # a zero vector: gradient 0, as in PyTorch (and no 0 / 0 inside)
        safe = np.where(zero, 1.0, norm)
        scale = np.where(zero, 0.0, _unreduce(grad_output, ctx) / safe ** (ctx.p - 1))
        if ctx.p == 2:
            return x * scale
        sign = np.sign(x.detach().numpy())  # piecewise constant: no gradient of its own
        return sign * (x * sign) ** (ctx.p - 1) * scale


class LogSumExp(_Reduction):
    """f(x) = log sum exp(x), computed as m + log sum exp(x - m) so it never overflows;
    df/dx = softmax(x)"""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        axes = _remember(ctx, x, dim, keepdim, "logsumexp")
        shift = np.max(x, axis=axes, keepdims=True, initial=-np.inf)  # (empty: -inf)
        shift = np.where(np.isfinite(shift), shift, 0)
        with np.errstate(divide="ignore"):
            out = np.log(np.sum(np.exp(x - shift), axis=axes, keepdims=True)) + shift
        ctx.save_for_backward(x, out)
        return out if keepdim else np.squeeze(out, axis=axes)

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        return _unreduce(grad_output, ctx) * np.exp(x - out)

    # create_graph=True: the same formula, with the output Tensor (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        return _unreduce(grad_output, ctx) * (x - graph_output(ctx, out)).exp()


class ArgMax(_Reduction):
    """index of the largest element along dim (flattened when dim is None); no gradient"""

    differentiable = False
    find = staticmethod(np.argmax)

    @classmethod
    def forward(cls, ctx, x, dim=None, keepdim=False):
        if dim is None:
            out = cls.find(x.reshape(-1))
            return out.reshape((1,) * x.ndim) if keepdim else out
        (axis,) = normalize_dims(dim, x.ndim, cls.oper.lower())
        return cls.find(x, axis=axis, keepdims=keepdim).astype(np.int64)

    @staticmethod
    def output_dtype(*inputs, **kwargs):
        return np.dtype(np.int64)


class ArgMin(ArgMax):
    """index of the smallest element along dim; no gradient"""

    find = staticmethod(np.argmin)


class AllTrue(_Reduction):
    """True where every element along dim is nonzero; a bool tensor without history"""

    oper = "All"
    differentiable = False
    test = staticmethod(np.all)

    @classmethod
    def forward(cls, ctx, x, dim=None, keepdim=False):
        axes = normalize_dims(dim, x.ndim, cls.oper.lower())  # (checked on a 0-d x too)
        result = cls.test(x, axis=axes if x.ndim else None, keepdims=keepdim)
        return result.astype(np.uint8) if x.dtype == np.uint8 else result  # (PyTorch's)

    @classmethod
    def output_shape(cls, x, dim=None, keepdim=False):
        return reduced_shape(x.shape, dim, keepdim, cls.oper.lower())  # (dim=(): none)

    @staticmethod
    def output_dtype(x, *inputs, **kwargs):
        return np.dtype(np.uint8) if x.dtype == np.uint8 else np.dtype(bool)


class AnyTrue(AllTrue):
    """True where some element along dim is nonzero; a bool tensor without history"""

    oper = "Any"
    test = staticmethod(np.any)
