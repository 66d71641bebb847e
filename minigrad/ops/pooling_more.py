"""Functions for nn/functional_layers_more.py (round 3 of the census). Everything else
there is composed from existing ops; this is the one piece that is not."""

from __future__ import annotations

import numpy as np

from ..function import Function


class ScaleGradient(Function):
    """f(x) = x, whose gradient is scaled: df/dx = scale (a constant array that broadcasts
    to x). Embedding's scale_grad_by_freq divides each looked-up row's gradient by how
    often its index occurs."""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.copy()

    @staticmethod
    def output_shape(x, scale):
        return tuple(x.shape)

    @staticmethod
    def output_dtype(x, scale):
        return x.dtype

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * np.asarray(ctx.scale, dtype=grad_output.dtype), None
