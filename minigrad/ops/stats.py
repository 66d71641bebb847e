"""``LogCumSumExp``: the running log-sum-exp, exact however far apart the values are.

(The other statistics of tensor_stats.py are composites of existing ops.)
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ..higher_order import graph_output


def _reverse_logcumsumexp(x, dim: int):
    """log(sum_{j >= i} exp(x_j)) along ``dim``: on arrays with NumPy, on Tensors recorded."""
    if isinstance(x, np.ndarray):
        return np.flip(np.logaddexp.accumulate(np.flip(x, dim), axis=dim), dim)
    return x.flip(dim).logcumsumexp(dim).flip(dim)


class LogCumSumExp(Function):
    """f(x)_i = log(exp(x_0) + ... + exp(x_i)) along ``dim``;
    grad_x_i = sum_{j >= i} g_j exp(x_i - f_j), computed as PyTorch does (from
    TensorFlow): the positive and the negative parts of g each through a reverse
    logcumsumexp of log|g| - f, so no exp overflows."""

    twice_differentiable = True  # its tensor_backward is recorded LogCumSumExps

    @staticmethod
    def forward(ctx, x, dim):  # dim: a non-negative int (Tensor.logcumsumexp checks it)
        out = np.logaddexp.accumulate(x, axis=dim)
        ctx.dim = dim
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def output_shape(x, dim):
        return tuple(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        lowest = np.finfo(x.dtype).min  # "log 0", finite: lowest + x may round to -inf
        with np.errstate(divide="ignore", over="ignore"):
            log_size = np.log(np.abs(grad_output))
            positive = np.where(grad_output > 0, log_size, lowest)
            negative = np.where(grad_output < 0, log_size, lowest)
            return (np.exp(_reverse_logcumsumexp(positive - out, ctx.dim) + x)
                    - np.exp(_reverse_logcumsumexp(negative - out, ctx.dim) + x)), None

    @staticmethod
    def tensor_backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        out = graph_output(ctx, out if isinstance(out, np.ndarray) else out.numpy())
        # log|g|, with 1 for |g| where g = 0: no log(0), and no 0 / 0 in its gradient
        log_size = grad_output.abs().masked_fill(grad_output == 0, 1.0).log()
        lowest = float(np.finfo(x.dtype).min)
        positive = log_size.masked_fill(grad_output <= 0, lowest)
        negative = log_size.masked_fill(grad_output >= 0, lowest)
        return ((_reverse_logcumsumexp(positive - out, ctx.dim) + x).exp()
                - (_reverse_logcumsumexp(negative - out, ctx.dim) + x).exp()), None
