"""More elementwise Functions: tan, the inverse hyperbolic functions, trunc, and the binary
logaddexp, xlogy, copysign; signbit and heaviside (no gradient).

Each keeps its forward and its local derivative side by side, as ``elementwise.py`` does.
Their backwards also run on Tensors (``create_graph=True``: higher_order.py), either as they
are (NumPy's ufuncs on Tensors call minigrad's ops) or, where a constant factor or a
recorded op is needed, through a ``tensor_backward``.
"""

from __future__ import annotations

import math

import numpy as np

from ..function import Function
from .elementwise import BROADCAST_HINT, _Step


def _values(a):
    """The values of a saved array or (create_graph) graph Tensor, as a constant array."""
    return a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)


# --- unary -------------------------------------------------------------------------------


class Tan(Function):
    """f(x) = tan x,  f'(x) = 1 + tan(x)^2 (so we save the output)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        out = np.tan(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * (1 + out * out)


class Asinh(Function):
    """f(x) = arsinh x = ln(x + sqrt(x^2 + 1)),  f'(x) = 1 / sqrt(x^2 + 1)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.arcsinh(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output / np.sqrt(x * x + 1)


class Acosh(Function):
    """f(x) = arcosh x = ln(x + sqrt(x^2 - 1)) for x >= 1,  f'(x) = 1 / sqrt(x^2 - 1)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(invalid="ignore"):  # NaN below 1, as in PyTorch
            return np.arccosh(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            return grad_output / np.sqrt(x * x - 1)


class Atanh(Function):
    """f(x) = artanh x = ln((1 + x) / (1 - x)) / 2 for |x| < 1,  f'(x) = 1 / (1 - x^2)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):  # +-inf at +-1, NaN beyond
            return np.arctanh(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        with np.errstate(divide="ignore"):
            return grad_output / (1 - x * x)


class Trunc(_Step):
    """f(x) = x rounded toward zero (the integer part);  f'(x) = 0"""

    @staticmethod
    def forward(ctx, x):
        return np.trunc(x) if x.dtype.kind == "f" else x.copy()  # integers stay integers

    @staticmethod
    def output_dtype(x):
        return x.dtype


class Signbit(Function):
    """f(x) = True where the sign bit of x is set (x < 0, also -0.0): a bool tensor"""

    differentiable = False

    @staticmethod
    def forward(ctx, x):
        return np.signbit(x)

    @staticmethod
    def output_dtype(x):
        return np.dtype(bool)


# --- binary ------------------------------------------------------------------------------


class LogAddExp(Function):
    """f(x, y) = ln(e^x + e^y) (without overflow),  df/dx = e^(x - f) = 1 / (1 + e^(y - x)),
    df/dy = 1 / (1 + e^(x - y)). The second form, PyTorch's: x - f loses every digit where
    x = y is large (f rounds to x: both gradients came out 1, not 1/2) and is NaN at inf."""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = BROADCAST_HINT
    combine = staticmethod(np.logaddexp)
    log_base = 1.0  # ln e

    @classmethod
    def forward(cls, ctx, x, y):
        ctx.save_for_backward(x, y)
        return cls.combine(x, y)

    @classmethod
    def backward(cls, ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        with np.errstate(invalid="ignore", over="ignore"):  # -inf - -inf: NaN, as in PyTorch
            return (grad_output / (1 + np.exp((y - x) * cls.log_base)) if needs_x else None,
                    grad_output / (1 + np.exp((x - y) * cls.log_base)) if needs_y else None)


class LogAddExp2(LogAddExp):
    """f(x, y) = log2(2^x + 2^y),  df/dx = 2^(x - f) = 1 / (1 + 2^(y - x)),
    df/dy = 1 / (1 + 2^(x - y)) (the second form: see LogAddExp)"""

    twice_differentiable = True

    combine = staticmethod(np.logaddexp2)
    log_base = math.log(2)  # 2^v = e^(v ln 2)


def _x_log(log, x, y):
    """x log(y), and 0 where x = 0 even if log(y) is infinite (a NaN y stays NaN)."""
    dtype = np.result_type(x, y)  # (log(2.0) is a float64 scalar: keep float32 float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0, x * log(y)).astype(dtype, copy=False)


class Xlogy(Function):
    """f(x, y) = x ln y, 0 where x = 0;  df/dx = ln y,  df/dy = x / y
    (PyTorch's formulas: the gradient for x is xlogy(grad, y), and 0 where x = 0 and y <= 0,
    where ln y has no value)"""

    hint = BROADCAST_HINT

    log = staticmethod(np.log)
    edge = 0  # the log of y - edge is taken: no value for y <= edge

    @classmethod
    def forward(cls, ctx, x, y):
        ctx.save_for_backward(x, y)
        return _x_log(cls.log, x, y)

    @classmethod
    def backward(cls, ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.where(_no_log(x, y, cls.edge), 0, _x_log(cls.log, grad_output, y))
                    if needs_x else None,
                    grad_output * x / cls._shifted(y) if needs_y else None)

    twice_differentiable = True  # the same formulas, with the op recorded (higher_order.py)

    @classmethod
    def tensor_backward(cls, ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        return (np.where(_no_log(x, y, cls.edge), 0.0, cls.apply(grad_output, y))  # (mg.where)
                if needs_x else None,
                grad_output * x / cls._shifted(y) if needs_y else None)

    @classmethod
    def _shifted(cls, y):
        """y - edge, the argument of ln (y itself for xlogy)."""
        return y - cls.edge if cls.edge else y


class Xlog1py(Xlogy):
    """f(x, y) = x ln(1 + y), 0 where x = 0;  df/dx = ln(1 + y),  df/dy = x / (1 + y)
    (as Xlogy: the gradient for x is 0 where x = 0 and y <= -1)"""

    twice_differentiable = True

    log = staticmethod(np.log1p)
    edge = -1


def _no_log(x, y, edge):
    """Where x = 0 and y <= edge (the log has no value there): a constant mask."""
    return (_values(x) == 0) & (_values(y) <= edge)


class Copysign(Function):
    """f(x, y) = |x| with the sign of y;  df/dx = f / x (0 where x = 0),  df/dy = 0"""

    twice_differentiable = True  # constant factors, as Tensors: higher_order.py

    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return np.copysign(x, y)

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        x, y = _values(x), _values(y)  # the slope is piecewise constant: no history
        slope = (np.sign(x) * np.copysign(1, y)).astype(grad_output.dtype)
        return (grad_output * slope if needs_x else None,
                grad_output * 0 if needs_y else None)


class Heaviside(Function):
    """f(x, v) = 0 where x < 0, v where x = 0, 1 where x > 0. PyTorch gives it no
    derivative (its backward raises), and so does minigrad."""

    hint = BROADCAST_HINT
    no_derivative = True  # the output requires grad, but backward raises (tests/test_ops.py)
    twice_differentiable = True  # (create_graph: the same error, from the same backward)

    @staticmethod
    def forward(ctx, x, values):
        out = np.heaviside(x, values).astype(np.result_type(x, values), copy=False)
        return np.where(x != x, 0, out) if out.dtype.kind == "f" else out  # NaN: 0, as
        # PyTorch's (x == 0 ? values : x > 0)

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError(
            "heaviside: the derivative for heaviside is not implemented, as in PyTorch (its "
            "slope is 0 wherever it exists). detach() its inputs, or use a smooth step such "
            "as sigmoid(k * x) when a gradient should flow.")
