"""Elementwise Functions: unary, binary (with broadcasting), comparisons, where, casts.

Binary ops may return gradients with the broadcast output's shape: the engine sums them
back to each input's shape, so no Function here has to think about broadcasting.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpError
from ..function import Function

BROADCAST_HINT = (
    "shapes broadcast when, compared from the right, each pair of sizes is equal or one "
    "of them is 1; reshape() or unsqueeze() one input so they line up"
)


# --- unary ------------------------------------------------------------------------------


class Neg(Function):
    """f(x) = -x"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        return -x

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output


class Abs(Function):
    """f(x) = |x|,  f'(x) = sign(x) (0 at 0, as in PyTorch)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.abs(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * np.sign(x)


class Exp(Function):
    """f(x) = e^x,  f'(x) = e^x (so we save the output)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        out = np.exp(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * out


class Log(Function):
    """f(x) = ln x,  f'(x) = 1 / x"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        with np.errstate(divide="ignore"):
            return grad_output / x


class Sqrt(Function):
    """f(x) = sqrt(x),  f'(x) = 1 / (2 sqrt(x))"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore"):
            out = np.sqrt(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 at x = 0 gives NaN
            return grad_output / (2 * out)


class Log1p(Function):
    """f(x) = ln(1 + x), accurate for tiny x;  f'(x) = 1 / (1 + x)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log1p(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        with np.errstate(divide="ignore"):
            return grad_output / (1 + x)


class Expm1(Function):
    """f(x) = e^x - 1, accurate for tiny x;  f'(x) = e^x = f(x) + 1"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        out = np.expm1(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * (out + 1)


class Sin(Function):
    """f(x) = sin x,  f'(x) = cos x"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * np.cos(x)


class Cos(Function):
    """f(x) = cos x,  f'(x) = -sin x"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.cos(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return -grad_output * np.sin(x)


class Tanh(Function):
    """f(x) = tanh x,  f'(x) = 1 - tanh(x)^2"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        out = np.tanh(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * (1 - out * out)


class Sigmoid(Function):
    """f(x) = 1 / (1 + e^-x),  f'(x) = f(x) (1 - f(x))"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        # written with tanh so that large |x| neither overflows nor loses precision
        out = 0.5 * (np.tanh(0.5 * x) + 1)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * out * (1 - out)


class ReLU(Function):
    """f(x) = max(x, 0),  f'(x) = 1 if x > 0 else 0 (PyTorch's 1 at NaN too)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        if x.size < 4096 or x.dtype.kind != "f":
            out = np.maximum(x, 0)
        else:  # NumPy's maximum with a number is not vectorized, with a row of zeros
            # (broadcast) it is: the MLP bench's 128x256 ReLU in 6.9 us for 13.5 us
            out = np.maximum(x, np.zeros(x.shape[-1], x.dtype))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        # the mask is out != 0 (out is never negative; a NaN output passes the gradient,
        # as in PyTorch), made without a Python number (a ufunc pays ~0.3 us to convert
        # one); small ones as numbers, which NumPy multiplies faster than bools (4x4:
        # 0.9 us for 1.6 us with out > 0), large ones stay bools (a quarter of the
        # memory, as fast). (out.shape, not out.size: this also runs on Tensors, whose
        # size is a method, for create_graph)
        mask = out.astype(bool)
        if math.prod(out.shape) < 4096:
            mask = mask.astype(grad_output.dtype)
        return grad_output * mask


class Clamp(Function):
    """f(x) = min(max(x, min), max); the gradient passes where min <= x <= max"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, min=None, max=None):
        ctx.save_for_backward(x)
        ctx.min, ctx.max = min, max
        return np.clip(x, min, max)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        inside = np.ones(x.shape, dtype=bool)
        if ctx.min is not None:
            inside &= x >= ctx.min
        if ctx.max is not None:
            inside &= x <= ctx.max
        return grad_output * inside


class _Step(Function):
    """A piecewise-constant f: its slope is 0 wherever it exists, so the gradient is 0
    (as PyTorch gives, also at the jumps)."""

    @staticmethod
    def backward(ctx, grad_output):
        return np.zeros_like(grad_output)

    twice_differentiable = True  # zeros, as Tensors: higher_order.py

    @staticmethod
    def tensor_backward(ctx, grad_output):
        return tuple(grad_output * 0 if needs else None for needs in ctx.needs_input_grad)


class Sign(_Step):
    """f(x) = -1, 0 or 1 as x < 0, x = 0, x > 0;  f'(x) = 0"""

    @staticmethod
    def forward(ctx, x):
        return np.sign(x)


class Floor(_Step):
    """f(x) = the largest integer <= x;  f'(x) = 0"""

    @staticmethod
    def forward(ctx, x):
        return np.floor(x) if x.dtype.kind == "f" else x.copy()  # integers stay integers

    @staticmethod
    def output_dtype(x):
        return x.dtype


class Ceil(_Step):
    """f(x) = the smallest integer >= x;  f'(x) = 0"""

    @staticmethod
    def forward(ctx, x):
        return np.ceil(x) if x.dtype.kind == "f" else x.copy()

    @staticmethod
    def output_dtype(x):
        return x.dtype


class Round(_Step):
    """f(x) = x rounded to ``decimals`` places, halves to even (as PyTorch);  f'(x) = 0"""

    @staticmethod
    def forward(ctx, x, decimals=0):
        return np.round(x, decimals)

    @staticmethod
    def output_dtype(x, decimals=0):
        return x.dtype


# --- binary -----------------------------------------------------------------------------


class Add(Function):
    """f(x, y) = x + y"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y):
        return x + y

    @staticmethod
    def backward(ctx, grad_output):
        needs_x, needs_y = ctx.needs_input_grad
        return (grad_output if needs_x else None), (grad_output if needs_y else None)


class Sub(Function):
    """f(x, y) = x - y"""

    @staticmethod
    def refuse_bool(x, y) -> None:
        """As PyTorch: no subtraction with a bool operand (checked by ``-``, ``-=`` and
        ``sub_`` before type promotion turns a mask into numbers; two bool arrays are
        refused by NumPy itself)."""
        x_bool, y_bool = (type(v) is bool or getattr(getattr(v, "dtype", None), "kind",
                                                     None) == "b" for v in (x, y))
        if x_bool or y_bool:
            error = OpError(
                f"Sub: subtraction with a bool operand (shapes {np.shape(x)} and "
                f"{np.shape(y)}) is not supported, as in PyTorch: "
                + ("use ^ or logical_xor() for two masks" if x_bool and y_bool else
                   "to invert a mask use ~ or logical_not(); to subtract it as numbers, "
                   "convert it first (mask.int() or mask.float())"))
            error.minigrad = True  # says all there is to say: raised as it is
            raise error

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y):
        return x - y

    @staticmethod
    def backward(ctx, grad_output):
        needs_x, needs_y = ctx.needs_input_grad
        return (grad_output if needs_x else None), (-grad_output if needs_y else None)


class Mul(Function):
    """f(x, y) = x * y,  df/dx = y,  df/dy = x"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        return (grad_output * y if needs_x else None), (grad_output * x if needs_y else None)


class Div(Function):
    """f(x, y) = x / y,  df/dx = 1 / y,  df/dy = -x / y^2"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            return x / y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        with np.errstate(divide="ignore", invalid="ignore"):
            grad_x = grad_output / y if needs_x else None
            grad_y = -grad_output * x / (y * y) if needs_y else None
        return grad_x, grad_y


def _check_integer_divisor(x, y, op: str) -> None:
    """Integer division by zero has no value: PyTorch raises (NumPy would give 0); nor has
    the division of two bool tensors."""
    if np.result_type(x, y).kind == "b":
        raise NotImplementedError(f"{op} is not implemented for two bool tensors, as in "
                                  "PyTorch; convert them with .long() or .float()")
    if np.result_type(x, y).kind in "iu" and np.any(np.asarray(y) == 0):
        raise RuntimeError(f"ZeroDivisionError: integer division by zero in {op} (the "
                           "divisor holds a 0), as PyTorch raises; divide floating tensors "
                           "to get inf/nan instead")


class RoundedDiv(Function):
    """f(x, y) = floor(x / y) or trunc(x / y) (``rounding_mode``);  df/dx = df/dy = 0

    PyTorch's ``div(x, y, rounding_mode=)``, ``floor_divide`` and ``//``: a step function
    of x and y, so its gradient is 0 wherever it exists (PyTorch gives zeros). Integers
    stay integers; floats round like Python's ``//`` (NumPy's floor_divide)."""

    oper = "div"  # (no broadcasting hint: their errors are mostly division by zero)

    @staticmethod
    def forward(ctx, x, y, rounding_mode="floor"):
        _check_integer_divisor(x, y, f"div(rounding_mode={rounding_mode!r}) (// and "
                               "floor_divide are rounding_mode='floor')")
        with np.errstate(divide="ignore", invalid="ignore"):
            if rounding_mode == "floor":
                return np.floor_divide(x, y)
            if np.result_type(x, y).kind == "f":
                return np.trunc(np.true_divide(x, y))
            return np.floor_divide(x - np.fmod(x, y), y)  # an exact multiple of y: exact

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(np.zeros_like(grad_output) if needs else None
                     for needs in ctx.needs_input_grad)

    twice_differentiable = True  # zeros, as Tensors: higher_order.py

    @staticmethod
    def tensor_backward(ctx, grad_output):
        return tuple(grad_output * 0 if needs else None for needs in ctx.needs_input_grad)


class FloorDivide(RoundedDiv):
    """f(x, y) = floor(x / y): ``//`` and ``floor_divide``, which PyTorch 2 gives no
    derivative (its backward raises; ``div(rounding_mode="floor")`` gives zeros)."""

    oper = "floor_divide"
    no_derivative = True  # the output requires grad, but backward raises (tests/test_ops.py)

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError(
            "floor_divide (//): the derivative for floor_divide is not implemented, as in "
            "PyTorch. Use x.div(y, rounding_mode='floor') (its gradient is zero), or detach() "
            "the inputs of // when no gradient should flow through it.")


class Remainder(Function):
    """f(x, y) = x - floor(x / y) y (the sign of y, as Python's %);
    df/dx = 1,  df/dy = -floor(x / y)"""

    oper = "remainder"  # (no broadcasting hint: their errors are mostly division by zero)

    @staticmethod
    def forward(ctx, x, y):
        _check_integer_divisor(x, y, "remainder (%)")
        ctx.save_for_backward(x, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.remainder(x, y)

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        grad_y = -grad_output * _rounded_quotient(x, y, np.floor_divide) if needs_y else None
        return (grad_output if needs_x else None), grad_y

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py


class ScalarRemainder(Remainder):
    """f(x) = c % x for a number c: PyTorch 2 has no derivative for it (its backward raises)."""

    no_derivative = True

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError(
            "remainder: the derivative for remainder(number, tensor) (number % tensor) is not "
            "implemented, as in PyTorch; make the number a tensor (mg.full_like(x, c) % x) "
            "for a gradient, or detach() x.")


class Fmod(Function):
    """f(x, y) = x - trunc(x / y) y (the sign of x, as C's fmod);
    df/dx = 1,  df/dy = -trunc(x / y)"""

    oper = "fmod"  # (no broadcasting hint: their errors are mostly division by zero)

    @staticmethod
    def forward(ctx, x, y):
        _check_integer_divisor(x, y, "fmod")
        ctx.save_for_backward(x, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(x, y)

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        grad_y = -grad_output * _rounded_quotient(x, y, _truncated_divide) if needs_y else None
        return (grad_output if needs_x else None), grad_y

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py


def _truncated_divide(x, y):
    return np.trunc(x / y)


def _rounded_quotient(x, y, rounded_divide):
    """floor(x / y) or trunc(x / y) for the gradient of remainder and fmod: piecewise
    constant, so a constant also when the backward runs on Tensors (create_graph)."""
    x, y = (a.detach().numpy() if hasattr(a, "detach") else a for a in (x, y))
    with np.errstate(divide="ignore", invalid="ignore"):
        return rounded_divide(x, y)


class Pow(Function):
    """f(x, e) = x^e,  df/dx = e x^(e-1),  df/de = x^e ln x (0 where x = 0, as PyTorch)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, exponent):
        with np.errstate(divide="ignore", invalid="ignore"):
            try:
                out = np.power(x, exponent)
            except ValueError as error:  # NumPy: "Integers to negative integer powers ..."
                raise ValueError(f"{error.args[0].rstrip('.')} (as in PyTorch); use a "
                                 "floating base: x.float() ** exponent") from error
        ctx.save_for_backward(x, exponent, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, exponent, out = ctx.saved_tensors
        needs_x, needs_exponent = ctx.needs_input_grad
        grad_x = grad_exponent = None
        with np.errstate(divide="ignore", invalid="ignore"):
            if needs_x:
                grad_x = grad_output * exponent * np.power(x, exponent - 1)
            if needs_exponent:
                log_x = np.where(x == 0, 0, np.log(np.where(x == 0, 1, x)))
                grad_exponent = grad_output * out * log_x
        return grad_x, grad_exponent


class Maximum(Function):
    """f(x, y) = max(x, y); where x == y the gradient is split evenly"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return np.maximum(x, y)

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        share_x = _tie_share(x > y, x == y, grad_output.dtype)
        return ((grad_output * share_x if needs_x else None),
                (grad_output * (1 - share_x) if needs_y else None))


class Minimum(Function):
    """f(x, y) = min(x, y); where x == y the gradient is split evenly"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return np.minimum(x, y)

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        needs_x, needs_y = ctx.needs_input_grad
        share_x = _tie_share(x < y, x == y, grad_output.dtype)
        return ((grad_output * share_x if needs_x else None),
                (grad_output * (1 - share_x) if needs_y else None))


def _tie_share(wins, ties, dtype):
    """1 where x wins, 0.5 where it ties, 0 where it loses."""
    # np.where rather than share[ties] = 0.5: for 0-d inputs, x > y is a NumPy scalar
    return np.where(ties, 0.5, wins).astype(dtype)


class Where(Function):
    """f(c, x, y) = x where c else y; the gradient goes to the branch that was taken"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, condition, x, y):
        ctx.save_for_backward(condition)
        return np.where(condition, x, y)

    @staticmethod
    def output_dtype(condition, x, y):
        return np.result_type(*(a.dtype if hasattr(a, "dtype") else a for a in (x, y)))

    @staticmethod
    def backward(ctx, grad_output):
        (condition,) = ctx.saved_tensors
        _, needs_x, needs_y = ctx.needs_input_grad
        zero = np.zeros((), dtype=grad_output.dtype)
        return (None, np.where(condition, grad_output, zero) if needs_x else None,
                np.where(condition, zero, grad_output) if needs_y else None)


# --- comparisons and casts (no gradient) -------------------------------------------------

COMPARISONS = {"<": np.less, "<=": np.less_equal, ">": np.greater,
               ">=": np.greater_equal, "==": np.equal, "!=": np.not_equal}


class Compare(Function):
    """f(x, y) = x < y (or <=, >, >=, ==, !=): a bool tensor without history"""

    differentiable = False
    hint = BROADCAST_HINT

    @staticmethod
    def forward(ctx, x, y, op="<"):
        return COMPARISONS[op](x, y)

    @staticmethod
    def output_dtype(*inputs, **kwargs):
        return np.dtype(bool)


class Cast(Function):
    """f(x) = x as another dtype; the gradient is cast back (floating dtypes only)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.input_dtype = x.dtype
        out = x.astype(dtype)
        if out.dtype.kind != "f":
            ctx.mark_non_differentiable(out)  # no gradient through an integer cast
        return out

    @staticmethod
    def output_dtype(x, dtype):
        return np.dtype(dtype)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.astype(ctx.input_dtype), None
