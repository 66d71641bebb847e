"""Inverse trigonometric Functions (``acos``, ``asin``, ``atan``) and ``Cumprod``.

Each keeps its forward and its local derivative side by side, as ``elementwise.py`` does.
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ..higher_order import recomputed


class Acos(Function):
    """f(x) = arccos(x),  f'(x) = -1 / sqrt(1 - x^2)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.arccos(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return -grad_output / np.sqrt(1 - x * x)


class Asin(Function):
    """f(x) = arcsin(x),  f'(x) = 1 / sqrt(1 - x^2)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.arcsin(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output / np.sqrt(1 - x * x)


class Atan(Function):
    """f(x) = arctan(x),  f'(x) = 1 / (1 + x^2)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.arctan(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output / (1 + x * x)


class Cumprod(Function):
    """f(x)_j = x_0 x_1 ... x_j along ``dim``,
    df_j/dx_k = prod_{i <= j, i != k} x_i for k <= j (0 for k > j)

    backward: without zeros, grad_x_k = sum_{j >= k} grad_j f_j / x_k (a reversed cumsum);
    with zeros that division is undefined, so those rows multiply the products out."""

    @staticmethod
    def forward(ctx, x, dim):
        out = np.cumprod(x, axis=dim)
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        x, out, grad = (np.moveaxis(a, ctx.dim, -1) for a in (x, out, grad_output))
        with np.errstate(divide="ignore", invalid="ignore"):
            grad_x = np.flip(np.cumsum(np.flip(grad * out, -1), -1), -1) / x
        shape = grad_x.shape
        x, grad, grad_x = (a.reshape(-1, shape[-1]) for a in (x, grad, grad_x))
        for row in np.nonzero((x == 0).any(axis=-1))[0]:  # with a zero: multiply out
            for k in range(shape[-1]):
                others = x[row].copy()
                others[k] = 1.0
                grad_x[row, k] = (grad[row, k:] * np.cumprod(others)[k:]).sum()
        grad_x = grad_x.reshape(shape)
        return np.moveaxis(grad_x, -1, ctx.dim), None

    # create_graph=True: the gradients of cumprod written as recorded Prods (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        return recomputed(ctx, (grad_output,), _cumprod_recorded)


def _cumprod_recorded(x, dim):
    """cumprod from recorded ops: f_j is the product of row j of a matrix holding
    x_0 .. x_j and ones after them (a Prod, exact with zeros), for second derivatives."""
    rows = x.transpose(dim, -1)
    n = rows.shape[-1]
    lower = np.tril(np.ones((n, n), dtype=rows.dtype))  # row j: 1 at x_0 .. x_j
    copies = rows.unsqueeze(-2).expand(*rows.shape[:-1], n, n)
    return (copies * lower + (1 - lower)).prod(dim=-1).transpose(dim, -1)
