"""More of PyTorch's ``torch.*`` elementwise functions (round 3 of the census): the function
form of each Tensor method of tensor_math.py (``mg.tan(x)`` is ``x.tan()``), with ``out=``
as torch_functions.py's maths functions take it, and the in-place function forms that
teaching code calls (``torch.sin_(x)`` is ``x.sin_()``).
"""

from __future__ import annotations

from typing import Any

from .tensor import Tensor
from .torch_functions import _out, _tensor

# --- unary maths --------------------------------------------------------------------------


def tan(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.tan(), out, "tan")


def asinh(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.asinh(), out, "asinh")


def acosh(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.acosh(), out, "acosh")


def atanh(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.atanh(), out, "atanh")


arcsinh, arccosh, arctanh = asinh, acosh, atanh


def exp2(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.exp2(), out, "exp2")


def sinc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.sinc(), out, "sinc")


def deg2rad(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.deg2rad(), out, "deg2rad")


def rad2deg(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.rad2deg(), out, "rad2deg")


def trunc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.trunc(), out, "trunc")


def fix(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.trunc(), out, "fix")


def frac(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.frac(), out, "frac")


def signbit(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.signbit(), out, "signbit")


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out: Tensor | None = None) -> Tensor:
    return _out(input.nan_to_num(nan, posinf, neginf), out, "nan_to_num")


def positive(input: Tensor) -> Tensor: return input.positive()


def erfc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.erfc(), out, "erfc")


def erfinv(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.erfinv(), out, "erfinv")


def lgamma(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.lgamma(), out, "lgamma")


def digamma(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.digamma(), out, "digamma")


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The n-th derivative of digamma at ``input`` (PyTorch's order: n first)."""
    return _out(input.polygamma(n), out, "polygamma")


def i0(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.i0(), out, "i0")


# --- binary maths -------------------------------------------------------------------------



def logaddexp(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.logaddexp(other), out, "logaddexp")


def logaddexp2(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.logaddexp2(other), out, "logaddexp2")


def xlogy(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """input * ln(other), 0 where input = 0; either may be a number (not both)."""
    return _out(_tensor_of(input, other, "xlogy").xlogy(other), out, "xlogy")


def copysign(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    return _out(_tensor_of(input, other, "copysign").copysign(other), out, "copysign")


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _out(input.heaviside(values), out, "heaviside")


def float_power(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """input ** exponent in float64; either may be a number (not both)."""
    base = _tensor_of(input, exponent, "float_power")
    return _out(base.float_power(exponent), out, "float_power")


def _tensor_of(input: Any, other: Any, op: str) -> Tensor:
    """``input`` as a Tensor: a number next to a tensor ``other`` takes its dtype (as
    PyTorch's ``torch.xlogy(2, y)``)."""
    if isinstance(input, Tensor):
        return input
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}: give at least one tensor, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    return _tensor(input).to(other.dtype if other.dtype.kind == "f" else "float32")


# --- in-place function forms: torch.sin_(x) is x.sin_() -------------------------------------

def sin_(input: Tensor) -> Tensor: return input.sin_()
def cos_(input: Tensor) -> Tensor: return input.cos_()
def tan_(input: Tensor) -> Tensor: return input.tan_()
def sinh_(input: Tensor) -> Tensor: return input.sinh_()
def cosh_(input: Tensor) -> Tensor: return input.cosh_()
def asinh_(input: Tensor) -> Tensor: return input.asinh_()
def acosh_(input: Tensor) -> Tensor: return input.acosh_()
def atanh_(input: Tensor) -> Tensor: return input.atanh_()


arcsinh_, arccosh_, arctanh_ = asinh_, acosh_, atanh_


def exp_(input: Tensor) -> Tensor: return input.exp_()
def exp2_(input: Tensor) -> Tensor: return input.exp2_()
def log_(input: Tensor) -> Tensor: return input.log_()
def sqrt_(input: Tensor) -> Tensor: return input.sqrt_()
def tanh_(input: Tensor) -> Tensor: return input.tanh_()
def sigmoid_(input: Tensor) -> Tensor: return input.sigmoid_()
def relu_(input: Tensor) -> Tensor: return input.relu_()
def abs_(input: Tensor) -> Tensor: return input.abs_()
def neg_(input: Tensor) -> Tensor: return input.neg_()
def negative_(input: Tensor) -> Tensor: return input.neg_()
def trunc_(input: Tensor) -> Tensor: return input.trunc_()
def fix_(input: Tensor) -> Tensor: return input.trunc_()
def frac_(input: Tensor) -> Tensor: return input.frac_()
def sinc_(input: Tensor) -> Tensor: return input.sinc_()
def deg2rad_(input: Tensor) -> Tensor: return input.deg2rad_()
def rad2deg_(input: Tensor) -> Tensor: return input.rad2deg_()
def erf_(input: Tensor) -> Tensor: return input.erf_()
def erfc_(input: Tensor) -> Tensor: return input.erfc_()
def i0_(input: Tensor) -> Tensor: return input.i0_()
def xlogy_(input: Tensor, other: Any) -> Tensor: return input.xlogy_(other)
def logit_(input: Tensor, eps: float | None = None) -> Tensor: return input.logit_(eps)


def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return input.clamp_(min, max)


def clamp_min_(input: Tensor, min: Any) -> Tensor: return input.clamp_min_(min)  # noqa: A002
def clamp_max_(input: Tensor, max: Any) -> Tensor: return input.clamp_max_(max)  # noqa: A002


clip_ = clamp_


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    return input.nan_to_num_(nan, posinf, neginf)


__all__ = [
    "acosh", "arccosh", "arcsinh", "arctanh", "asinh", "atanh", "copysign", "deg2rad",
    "digamma", "erfc", "erfinv", "exp2", "fix", "float_power", "frac", "heaviside",
    "i0", "lgamma", "logaddexp", "logaddexp2", "nan_to_num", "polygamma", "positive",
    "rad2deg", "signbit", "sinc", "tan", "trunc", "xlogy",
    # in place
    "abs_", "acosh_", "arccosh_", "arcsinh_", "arctanh_", "asinh_", "atanh_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_",
    "cos_", "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "fix_", "frac_", "i0_",
    "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "relu_", "sigmoid_",
    "sin_", "sinc_", "sinh_", "sqrt_", "tan_", "tanh_", "trunc_", "xlogy_",
]
