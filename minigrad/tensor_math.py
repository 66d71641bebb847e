"""More of PyTorch's elementwise Tensor methods (round 3 of the census): tan and the
hyperbolic inverses, exp2, sinc, trunc and frac, nan_to_num, the binary logaddexp,
xlogy, copysign, heaviside, the special functions (erfc, erfinv, lgamma, digamma,
polygamma, i0), PyTorch's alias spellings (multiply, subtract, true_divide, negative,
absolute, positive), ``equal``, and the in-place ``_`` form of each.

``Tensor`` (tensor.py) inherits them, as it inherits tensor_compat.py's. Each is one line
that forwards to a Function (minigrad/ops/elementwise_more.py, special_functions.py) or
combines existing Tensor methods; an in-place form runs the same op through ``_modify``,
as tensor.py's ``exp_`` does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import tensor_class
from .dtypes import result_type
from .ops.activation import Erf
from .ops.elementwise import Cos, Pow, RoundedDiv, Sin
from .ops.elementwise_more import (Acosh, Asinh, Atanh, Copysign, Heaviside, LogAddExp,
                                   LogAddExp2, Signbit, Tan, Trunc, Xlogy)
from .ops.special_functions import Digamma, Erfc, Erfinv, I0, Lgamma, Polygamma
from .state import state


def _floating(x: Any) -> Any:
    """``x`` for maths on real numbers: an integer or bool tensor in the default float
    dtype (float32), as in PyTorch (tensor.py's rule, for the methods here)."""
    return x if x.dtype.kind in "fc" else x.to(state.default_dtype)


def _float_pair(x: Any, other: Any) -> tuple:
    """``x`` and ``other`` (a Tensor or a number) in the floating dtype PyTorch computes a
    float-only binary op in (a float32 tensor with a number stays float32)."""
    Tensor = tensor_class.Tensor
    if isinstance(other, (list, tuple, np.ndarray)):
        other = Tensor(other)
    dtype = result_type(x, other)
    dtype = dtype if dtype.kind == "f" else state.default_dtype
    x = x if x.dtype == dtype else x.to(dtype)
    if isinstance(other, Tensor):
        return x, (other if other.dtype == dtype else other.to(dtype))
    return x, float(other)


def _tensor_only(op: str, name: str, value: Any) -> None:
    """PyTorch takes only a Tensor for this argument (no number): say so, as it does."""
    if not isinstance(value, tensor_class.Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(value).__name__} "
                        f"(as in PyTorch); wrap a number as a tensor, e.g. "
                        f"mg.full_like(input, {value!r})")


class TensorMath:
    """Methods that ``Tensor`` inherits (it has the data; this class only forwards)."""

    __slots__ = ()

    # --- trigonometric and hyperbolic --------------------------------------------------------

    def tan(self): return Tan.apply(_floating(self))
    def asinh(self): return Asinh.apply(_floating(self))
    def acosh(self): return Acosh.apply(_floating(self))
    def atanh(self): return Atanh.apply(_floating(self))
    arcsinh, arccosh, arctanh = asinh, acosh, atanh

    def tan_(self): return self._modify(Tan)
    def asinh_(self): return self._modify(Asinh)
    def acosh_(self): return self._modify(Acosh)
    def atanh_(self): return self._modify(Atanh)
    arcsinh_, arccosh_, arctanh_ = asinh_, acosh_, atanh_
    def sin_(self): return self._modify(Sin)
    def cos_(self): return self._modify(Cos)
    def sinh_(self): return self._modify(type(self).sinh)
    def cosh_(self): return self._modify(type(self).cosh)

    def sinc(self):
        """sin(pi x) / (pi x), 1 at x = 0. Near 0 (|pi x| < 1e-3) its Taylor series
        1 - (pi x)^2/6 + (pi x)^4/120 (exact to float64 there), so every derivative at 0 is
        right too (PyTorch's second derivative at 0 is NaN). Each branch gets only the x
        it is valid for, so neither puts a NaN into the other's gradient."""
        x = _floating(self)
        small = x.abs() < 1e-3 / math.pi
        pi_x = x.where(~small, 1.0) * math.pi
        square = (x.where(small, 0.0) * math.pi).square()
        return (pi_x.sin() / pi_x).where(~small, 1 - square / 6 + square.square() / 120)

    def deg2rad(self): return _floating(self) * (math.pi / 180)
    def rad2deg(self): return _floating(self) * (180 / math.pi)

    def sinc_(self): return self._modify(TensorMath.sinc)
    def deg2rad_(self): return self._modify(TensorMath.deg2rad)
    def rad2deg_(self): return self._modify(TensorMath.rad2deg)

    # --- exponentials and logarithms -----------------------------------------------------------

    def exp2(self):
        """2^x (a Pow with base 2: exact at integers); d/dx = 2^x ln 2."""
        return _floating(self).__rpow__(2.0)

    def exp2_(self): return self._modify(TensorMath.exp2)

    def logaddexp(self, other):
        """ln(e^x + e^y), without overflow (x = y = 1000 gives 1000 + ln 2)."""
        _tensor_only("logaddexp", "other", other)
        return LogAddExp.apply(*_float_pair(self, other))

    def logaddexp2(self, other):
        """log2(2^x + 2^y), without overflow."""
        _tensor_only("logaddexp2", "other", other)
        return LogAddExp2.apply(*_float_pair(self, other))

    def xlogy(self, other):
        """x ln(other), and 0 where x = 0 (also where other = 0): the entropy terms p ln p."""
        return Xlogy.apply(*_float_pair(self, other))

    def xlogy_(self, other): return self._modify(Xlogy, other)

    def logit_(self, eps: float | None = None): return self._modify(type(self).logit, eps)

    # --- rounding and signs ------------------------------------------------------------------

    def trunc(self): return Trunc.apply(self)
    fix = trunc
    def trunc_(self): return self._modify(Trunc)
    fix_ = trunc_

    def frac(self):
        """x - trunc(x): the fractional part, with the sign of x (gradient 1)."""
        if self.dtype.kind != "f":
            raise RuntimeError(f"frac: not implemented for {self.dtype} tensors (shape "
                               f"{self.shape}), as in PyTorch: an integer has no fractional "
                               "part; convert first: x.float().frac()")
        return self - Trunc.apply(self)

    def frac_(self): return self._modify(TensorMath.frac)

    def signbit(self):
        """True where the sign bit is set: x < 0, and also -0.0 (a bool tensor)."""
        return Signbit.apply(self)

    def copysign(self, other):
        """|x| with the sign of ``other`` (a tensor or a number); d/dx = +-1, d/dother = 0."""
        return Copysign.apply(*_float_pair(self, other))

    def copysign_(self, other): return self._modify(Copysign, other)

    def heaviside(self, values):
        """0 where x < 0, ``values`` where x = 0, 1 where x > 0; no gradient (as PyTorch)."""
        _check_heaviside(self, values)
        return Heaviside.apply(self, values)

    def heaviside_(self, values):
        _check_heaviside(self, values)
        return self._modify(Heaviside, values)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None):
        """NaN -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf`` (by default the largest
        and the lowest finite value of the dtype); the gradient passes where x is finite.
        Integer tensors have none of them: a copy."""
        if self.dtype.kind != "f":
            return self.clone()
        largest = float(np.finfo(self.dtype).max)
        x = self.where(self == self, nan)
        x = x.where(x != math.inf, largest if posinf is None else posinf)
        return x.where(x != -math.inf, -largest if neginf is None else neginf)

    def nan_to_num_(self, nan: float = 0.0, posinf: float | None = None,
                    neginf: float | None = None):
        return self._modify(TensorMath.nan_to_num, nan, posinf, neginf)

    # --- two-argument maths ----------------------------------------------------------------------

    def float_power(self, exponent):
        """x ** exponent computed in float64 (both converted first), as PyTorch's."""
        base = self.double()
        if isinstance(exponent, tensor_class.Tensor):
            return base ** exponent.double()
        return base ** float(exponent)

    def float_power_(self, exponent):
        if self.dtype != np.float64:
            raise RuntimeError(
                f"float_power_: the base given to float_power_ has dtype {self.dtype} but the "
                "operation's result requires dtype float64 (as in PyTorch: an in-place op "
                "keeps its tensor's dtype); use t = t.float_power(exponent), or t.double() "
                "first")
        is_tensor = isinstance(exponent, tensor_class.Tensor)
        return self._modify(Pow, exponent.double() if is_tensor else float(exponent))

    # --- PyTorch's other spellings of the arithmetic ---------------------------------------------

    def multiply(self, other): return self.mul(other)
    def multiply_(self, other): return self.mul_(other)
    def subtract(self, other, *, alpha: float = 1):
        return self - (other if alpha == 1 else other * alpha)

    def subtract_(self, other, *, alpha: float = 1): return self.sub_(other, alpha=alpha)
    def true_divide(self, other): return self.div(other)
    def true_divide_(self, other): return self.div_(other)
    def negative(self): return self.neg()
    def negative_(self): return self.neg_()
    def absolute(self): return self.abs()
    def absolute_(self): return self.abs_()

    def divide_(self, other, *, rounding_mode: str | None = None):
        if rounding_mode is None:
            return self.div_(other)
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f"divide_ expected rounding_mode to be one of None, 'trunc', or "
                             f"'floor' but found {rounding_mode!r}")
        return self._modify(RoundedDiv, other, rounding_mode=rounding_mode)

    def positive(self):
        """``self`` itself (+x), as in PyTorch; a bool tensor is refused, as there."""
        if self.dtype == np.bool_:
            raise RuntimeError(f"positive: the + operator on a bool tensor (shape "
                               f"{self.shape}) is not supported, as in PyTorch")
        return self

    def equal(self, other) -> bool:
        """Same shape and the same elements? A Python bool (``mg.equal``)."""
        _tensor_only("equal", "other", other)
        return self.shape == other.shape and bool(np.array_equal(self.numpy(), other.numpy()))

    # --- special functions (minigrad/ops/special_functions.py) ----------------------------------

    def erf_(self): return self._modify(Erf)
    def erfc(self): return Erfc.apply(_floating(self))
    def erfc_(self): return self._modify(Erfc)
    def erfinv(self): return Erfinv.apply(_floating(self))
    def erfinv_(self): return self._modify(Erfinv)
    def lgamma(self): return Lgamma.apply(_floating(self))
    def lgamma_(self): return self._modify(Lgamma)
    def digamma(self): return Digamma.apply(_floating(self))
    def digamma_(self): return self._modify(Digamma)
    def i0(self): return I0.apply(_floating(self))
    def i0_(self): return self._modify(I0)

    def polygamma(self, n: int):
        """The n-th derivative of digamma (n = 0: digamma itself)."""
        return _polygamma(_floating(self), n)

    def polygamma_(self, n: int): return self._modify(_polygamma, n)


def _polygamma(x: Any, n: int) -> Any:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"polygamma: n must be a non-negative int (the order of the "
                         f"derivative of digamma), got {n!r}")
    return Digamma.apply(x) if n == 0 else Polygamma.apply(x, int(n))


def _check_heaviside(x: Any, values: Any) -> None:
    _tensor_only("heaviside", "values", values)
    if values.dtype != x.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different "
                           f"dtypes (input {x.dtype} of shape {x.shape}, values "
                           f"{values.dtype} of shape {values.shape}), as in PyTorch; convert "
                           "values first: values.to(input.dtype)")
