"""Normalization Functions with an analytic backward (one node in the graph, not twenty)."""

from __future__ import annotations

import numpy as np

from ..function import Function
from .reduce import column_sums, row_sums


def _layer_norm_recorded(x, weight, bias, normalized_ndim, eps):
    """LayerNorm's forward from recorded ops (mean, subtraction, sqrt ...), for its
    second derivatives (higher_order.recomputed)."""
    dims = tuple(range(x.ndim - normalized_ndim, x.ndim))
    centered = x - x.mean(dim=dims, keepdim=True)
    out = centered / ((centered * centered).mean(dim=dims, keepdim=True) + eps).sqrt()
    out = out if weight is None else out * weight
    return out if bias is None else out + bias


def _as_rows(x: np.ndarray, normalized_ndim: int) -> np.ndarray:
    """x as a matrix with one row per group of elements normalised together."""
    length = int(np.prod(x.shape[x.ndim - normalized_ndim:]))
    return x.reshape(int(np.prod(x.shape[:x.ndim - normalized_ndim])), length)


# The row means and the column sums below are matrix-vector products with a vector of
# ones (reduce.row_sums, column_sums): one BLAS call, where NumPy's reduction loop pays
# ~100 instructions a row (a mean over the last 128 of 16x64x128 float32: 23 us against
# 83 us; a column sum of 1024x128: 14 us against 37 us).


class LayerNorm(Function):
    """f(x) = (x - mean) / sqrt(var + eps) * weight + bias, mean and (biased) var over the
    last ``normalized_ndim`` dims, of N elements each. With xhat the normalised x,
    rstd = 1 / sqrt(var + eps) and g = grad_output * weight:

        dx      = rstd / N * (N * g - sum(g) - xhat * sum(g * xhat))   (sums over the N)
        dweight = sum(grad_output * xhat),  dbias = sum(grad_output)   (over leading dims)

    Computed on x as a matrix (``_as_rows``): a row per group of N elements.
    """

    hint = "weight and bias have the normalized shape (the input's last dimensions)"

    @staticmethod
    def forward(ctx, x, weight, bias, normalized_ndim, eps):
        rows = _as_rows(x, normalized_ndim)
        count = rows.shape[1]
        centered = rows - (row_sums(rows) / count)[:, None]
        variance = row_sums(centered * centered) / count
        rstd = (1.0 / np.sqrt(variance + eps)).astype(centered.dtype)[:, None]
        xhat = centered
        xhat *= rstd  # centered is new: normalise it in place
        ctx.save_for_backward(xhat, rstd, weight)
        ctx.normalized_shape = x.shape[x.ndim - normalized_ndim:]
        out = xhat if weight is None else xhat * weight.reshape(-1)
        if bias is not None:
            if out is xhat or out.dtype != bias.dtype:  # (xhat is saved: never written)
                out = out + bias.reshape(-1)
            else:
                out += bias.reshape(-1)  # out is new: add in place
        return out.reshape(x.shape)

    @staticmethod
    def output_shape(x, weight, bias, normalized_ndim, eps):
        return tuple(x.shape)

    # create_graph=True: the gradients of the same formula written with recorded ops
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        from ..higher_order import recomputed

        return recomputed(ctx, (grad_output,), _layer_norm_recorded)

    @staticmethod
    def output_dtype(x, weight, bias, normalized_ndim, eps):
        return np.result_type(*(a.dtype for a in (x, weight, bias) if a is not None))

    @staticmethod
    def backward(ctx, grad_output):
        xhat, rstd, weight = ctx.saved_tensors
        needs_x, needs_weight, needs_bias = ctx.needs_input_grad[:3]
        grad_rows = grad_output.reshape(xhat.shape)
        grad_x = grad_weight = grad_bias = None
        if needs_x:
            g = grad_rows if weight is None else grad_rows * weight.reshape(-1)
            # rstd / N * (N g - sum g - xhat sum(g xhat)), written with means
            count = xhat.shape[1]
            grad_x = g * xhat
            mean_g_xhat = (row_sums(grad_x) / count)[:, None]
            np.multiply(xhat, mean_g_xhat, out=grad_x)
            np.subtract(g, grad_x, out=grad_x)
            grad_x -= (row_sums(g) / count)[:, None]
            grad_x *= rstd
            grad_x = grad_x.reshape(grad_output.shape)
        if needs_weight:
            grad_weight = column_sums(grad_rows * xhat).reshape(ctx.normalized_shape)
        if needs_bias:
            grad_bias = column_sums(grad_rows).reshape(ctx.normalized_shape)
        return grad_x, grad_weight, grad_bias, None, None
