"""Matrix multiplication, batched and 1-D, with NumPy's (and PyTorch's) broadcasting."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..function import Function


def matmul_shape(a_shape: tuple, b_shape: tuple) -> tuple:
    """The result shape of ``a @ b``, or a ShapeError that says which sizes disagree."""
    if len(a_shape) == 0 or len(b_shape) == 0:
        raise ShapeError(
            f"matmul: both inputs need at least 1 dimension, got shapes {a_shape} and "
            f"{b_shape}; use * to multiply by a scalar"
        )
    inner_b = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    if a_shape[-1] != inner_b:
        raise ShapeError(
            f"matmul: input 0 has shape {a_shape} and input 1 has shape {b_shape}: the last "
            f"size of input 0 ({a_shape[-1]}) must equal the "
            f"{'size' if len(b_shape) == 1 else 'second-to-last size'} of input 1 "
            f"({inner_b}). Check the layer sizes, or transpose one input (x.T / x.mT)."
        )
    batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    rows = a_shape[-2:-1] if len(a_shape) > 1 else ()
    cols = b_shape[-1:] if len(b_shape) > 1 else ()
    return tuple(batch) + tuple(rows) + tuple(cols)


class MatMul(Function):
    """f(A, B) = A @ B,  df/dA = G @ B^T,  df/dB = A^T @ G
    (1-D inputs are treated as a row / a column and the extra size dropped again)"""

    hint = "batch dimensions (all but the last two) broadcast like elementwise ops"

    @staticmethod
    def forward(ctx, a, b):
        matmul_shape(a.shape, b.shape)
        ctx.save_for_backward(a, b)
        return np.matmul(a, b)

    @staticmethod
    def output_shape(a, b):
        return matmul_shape(tuple(a.shape), tuple(b.shape))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:  # a dot product
            return (grad_output * b if needs_a else None), (grad_output * a if needs_b else None)
        a2 = a[None, :] if a.ndim == 1 else a  # (n,) -> (1, n)
        b2 = b[:, None] if b.ndim == 1 else b  # (n,) -> (n, 1)
        grad = grad_output
        if a.ndim == 1:
            grad = np.expand_dims(grad, -2)
        if b.ndim == 1:
            grad = np.expand_dims(grad, -1)
        grad_a = np.matmul(grad, np.swapaxes(b2, -1, -2)) if needs_a else None
        grad_b = np.matmul(np.swapaxes(a2, -1, -2), grad) if needs_b else None
        if grad_a is not None and a.ndim == 1:
            grad_a = grad_a.reshape(grad_a.shape[:-2] + a.shape)  # engine sums any batch
        if grad_b is not None and b.ndim == 1:
            grad_b = grad_b.reshape(grad_b.shape[:-2] + b.shape)
        return grad_a, grad_b


class Linear(Function):
    """f(x, W, b) = x W^T + b, with W of shape (out, in) (``nn.Linear``; PyTorch's addmm):
    df/dx = G W,  df/dW = G^T x,  df/db = G summed over every dim but the last.
    One Function instead of transpose, matmul and add: one graph node, and each
    gradient is one BLAS call, already of the weight's shape (no batched products to
    sum, no transposed copy)."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        if x.ndim == 2:
            out = x @ weight.T
        else:  # leading dims flattened: one matrix product, whatever the batch shape
            out = np.matmul(x.reshape(-1, x.shape[-1]), weight.T)
            out = out.reshape(x.shape[:-1] + (weight.shape[0],))
        if bias is None:
            return out
        if out.dtype == bias.dtype:
            out += bias  # out is new: add in place, no second array
            return out
        return out + bias

    @staticmethod
    def output_shape(x, weight, bias=None):
        return tuple(x.shape[:-1]) + (weight.shape[0],)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        needs_x, needs_weight, needs_bias = ctx.needs_input_grad
        grad_2d = grad_output.reshape(-1, weight.shape[0])
        grad_x = np.matmul(grad_2d, weight).reshape(x.shape) if needs_x else None
        grad_weight = np.matmul(grad_2d.T, x.reshape(-1, x.shape[-1])) if needs_weight else None
        grad_bias = grad_2d.sum(axis=0) if needs_bias else None
        return grad_x, grad_weight, grad_bias
