"""Pointwise activations with an analytic backward: LeakyReLU, ELU, Softplus, SiLU, Mish,
Hardtanh (ReLU6 is Hardtanh(0, 6)).

Each is one graph node. Where a composed form would overflow (ELU's and Softplus's
exponentials of large inputs), the forward computes the stable form: log(1 + e^x) as
max(x, 0) + log1p(e^-|x|), and the sigmoid from e^-|x|.
"""

from __future__ import annotations

import numpy as np

from ..function import Function


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x), as e^x / (1 + e^x) for x < 0: no overflow, and full relative
    precision where it is tiny (x silu(x) at x = -30 is -2.8e-12, not 0)."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|)."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


class _Pointwise(Function):
    @staticmethod
    def output_dtype(x, *args, **kwargs):
        return x.dtype

    @staticmethod
    def output_shape(x, *args, **kwargs):
        return tuple(x.shape)


class LeakyReLU(_Pointwise):
    """f(x) = x if x > 0 else slope * x;  f'(x) = 1 if x > 0 else slope"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, negative_slope):
        positive = x > 0
        ctx.save_for_backward(positive)
        ctx.negative_slope = negative_slope
        return np.where(positive, x, x * negative_slope).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad_output):
        (positive,) = ctx.saved_tensors
        return np.where(positive, grad_output, grad_output * ctx.negative_slope), None


class ELU(_Pointwise):
    """f(x) = x if x > 0 else alpha (e^x - 1);  f'(x) = 1 if x > 0 else f(x) + alpha"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, alpha):
        positive = x > 0
        out = np.where(positive, x, alpha * np.expm1(np.minimum(x, 0))).astype(x.dtype,
                                                                               copy=False)
        ctx.save_for_backward(positive, out)
        ctx.alpha = alpha
        return out

    @staticmethod
    def backward(ctx, grad_output):
        positive, out = ctx.saved_tensors
        return grad_output * np.where(positive, 1, out + ctx.alpha), None


class Softplus(_Pointwise):
    """f(x) = log(1 + e^(beta x)) / beta (x itself where beta x > threshold);
    f'(x) = sigmoid(beta x) (1 where beta x > threshold)"""

    @staticmethod
    def forward(ctx, x, beta, threshold):
        scaled = x * beta
        linear = scaled > threshold
        ctx.save_for_backward(scaled, linear)
        return np.where(linear, x, _softplus(scaled) / beta).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad_output):
        scaled, linear = ctx.saved_tensors
        return grad_output * np.where(linear, 1, _sigmoid(scaled)), None, None

    # create_graph=True: the sigmoid from the input Tensor (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        x, beta = ctx.args[0], ctx.args[1]
        (_, linear) = ctx.saved_tensors
        return grad_output * np.where(linear, 1.0, (x * beta).sigmoid()), None, None


class SiLU(_Pointwise):
    """f(x) = x sigmoid(x);  f'(x) = s (1 + x (1 - s)), s = sigmoid(x)"""

    @staticmethod
    def forward(ctx, x):
        s = _sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * s * (1 + x * (1 - s))

    # create_graph=True: the sigmoid from the input Tensor (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        x = ctx.args[0]
        s = x.sigmoid()
        return grad_output * s * (1 + x * (1 - s))


class Mish(_Pointwise):
    """f(x) = x tanh(softplus(x));  f'(x) = t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x))"""

    @staticmethod
    def forward(ctx, x):
        t = np.tanh(_softplus(x))
        ctx.save_for_backward(x, t)
        return x * t

    @staticmethod
    def backward(ctx, grad_output):
        x, t = ctx.saved_tensors
        return grad_output * (t + x * _sigmoid(x) * (1 - t * t))

    # create_graph=True: t from the input Tensor (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        x = ctx.args[0]
        t = Softplus.apply(x, 1.0, 20.0).tanh()
        return grad_output * (t + x * x.sigmoid() * (1 - t * t))


class Hardtanh(_Pointwise):
    """f(x) = min(max(x, min_val), max_val);  f'(x) = 1 if min_val < x < max_val else 0"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, min_val, max_val):
        ctx.save_for_backward((x > min_val) & (x < max_val))
        return np.clip(x, min_val, max_val).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad_output):
        (inside,) = ctx.saved_tensors
        return grad_output * inside, None, None
