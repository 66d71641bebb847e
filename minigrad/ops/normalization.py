"""Normalization Functions with an analytic backward (one node in the graph, not twenty)."""

from __future__ import annotations

import numpy as np

from ..function import Function


def _layer_norm_recorded(x, weight, bias, normalized_ndim, eps):
    """LayerNorm's forward from recorded ops (mean, subtraction, sqrt ...), for its
    second derivatives (higher_order.recomputed)."""
    dims = tuple(range(x.ndim - normalized_ndim, x.ndim))
    centered = x - x.mean(dim=dims, keepdim=True)
    out = centered / ((centered * centered).mean(dim=dims, keepdim=True) + eps).sqrt()
    out = out if weight is None else out * weight
    return out if bias is None else out + bias


class LayerNorm(Function):
    """f(x) = (x - mean) / sqrt(var + eps) * weight + bias, mean and (biased) var over the
    last ``normalized_ndim`` dims, of N elements each. With xhat the normalised x,
    rstd = 1 / sqrt(var + eps) and g = grad_output * weight:

        dx      = rstd / N * (N * g - sum(g) - xhat * sum(g * xhat))   (sums over the N)
        dweight = sum(grad_output * xhat),  dbias = sum(grad_output)   (over leading dims)
    """

    hint = "weight and bias have the normalized shape (the input's last dimensions)"

    @staticmethod
    def forward(ctx, x, weight, bias, normalized_ndim, eps):
        dims = tuple(range(x.ndim - normalized_ndim, x.ndim))
        centered = x - x.mean(axis=dims, keepdims=True)
        variance = np.mean(centered * centered, axis=dims, keepdims=True)
        rstd = (1.0 / np.sqrt(variance + eps)).astype(centered.dtype)
        xhat = centered * rstd
        ctx.save_for_backward(xhat, rstd, weight)
        ctx.dims = dims
        out = xhat if weight is None else xhat * weight
        return out if bias is None else out + bias

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
        dims = ctx.dims
        leading = tuple(range(grad_output.ndim - len(dims)))
        grad_x = grad_weight = grad_bias = None
        if needs_x:
            g = grad_output if weight is None else grad_output * weight
            # rstd / N * (N g - sum g - xhat sum(g xhat)), written with means
            grad_x = rstd * (g - g.mean(axis=dims, keepdims=True)
                             - xhat * np.mean(g * xhat, axis=dims, keepdims=True))
        if needs_weight:
            grad_weight = np.sum(grad_output * xhat, axis=leading)
        if needs_bias:
            grad_bias = grad_output.sum(axis=leading)
        return grad_x, grad_weight, grad_bias, None, None
