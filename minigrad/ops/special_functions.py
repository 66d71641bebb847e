"""Special functions NumPy lacks (``torch.special``): erfc, erfinv, log_ndtr, entr, lgamma,
digamma, polygamma, i0 and i1, each with its derivative.

How each value is computed, in float64 (a float32 input gets a float32 result):

- erfc: W. J. Cody's rational approximations (activation.py's, as erf's).
- erfinv: Giles' approximation (M. Giles, "Approximating the erfinv function", GPU Computing
  Gems, 2011; about 1e-7 relative error), then Newton steps on Cody's erf (erfc near +-1,
  where erf's own value has no digits left): as accurate as erf itself.
- log_ndtr: from erfc, and an asymptotic series far in the lower tail.
- lgamma: Python's ``math.lgamma`` applied element by element: exact, but a Python call per
  element (about 0.1 us each; fine for the sizes minigrad is for).
- digamma and polygamma: the recurrence psi(x) = psi(x + 1) - 1/x moves x up to 10 + n, then
  the asymptotic series in Bernoulli numbers; digamma reflects x < 0.5 to 1 - x first.
- i0: NumPy's ``np.i0``; i1 (its derivative): the power series sum_k (x/2)^(2k+1) / (k! (k+1)!).
"""

from __future__ import annotations

import math

import numpy as np

from ..function import Function
from .activation import erf, erfc

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _float64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _like(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """float64 ``values`` in x's floating dtype (float32 for integer x, as PyTorch)."""
    return values.astype(_floating_dtype(x), copy=False)


def _floating_dtype(x, *ignored) -> np.dtype:
    return x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)


# --- erfc and erfinv ----------------------------------------------------------------------


class Erfc(Function):
    """f(x) = erfc(x) = 1 - erf(x), accurate where it is tiny;  f'(x) = -2/sqrt(pi) e^(-x^2)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _like(erfc(x), x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return -grad_output * _TWO_OVER_SQRT_PI * np.exp(-x * x)

    output_dtype = staticmethod(_floating_dtype)


_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefficients: tuple, w: np.ndarray) -> np.ndarray:
    result = np.full_like(w, coefficients[0])
    for c in coefficients[1:]:
        result = result * w + c
    return result


def erfinv(y: np.ndarray) -> np.ndarray:
    """x with erf(x) = y, for -1 <= y <= 1 (+-inf at +-1, NaN outside), in float64."""
    y = _float64(y)
    a = np.abs(y)
    inside = a < 1
    safe = np.where(inside, a, 0.0)
    with np.errstate(divide="ignore"):
        w = -np.log((1 - safe) * (1 + safe))
    x = safe * np.where(w < 5, _horner(_GILES_CENTRAL, w - 2.5),
                        _horner(_GILES_TAIL, np.sqrt(w) - 3))
    central = safe < 0.5
    for _ in range(4):  # Newton on erf(x) = a, and near 1 on ln erfc(x) = ln(1 - a)
        slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)  # erf'(x)
        complement = erfc(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            tail_step = (np.log(1 - safe) - np.log(complement)) * complement / slope
        x = x - np.where(central, (erf(x) - safe) / slope, tail_step)
    x = np.where(inside, x, np.where(a == 1, np.inf, np.nan))
    return np.copysign(x, y)


class Erfinv(Function):
    """f(y) = erfinv(y), the x with erf(x) = y;  f'(y) = sqrt(pi)/2 e^(f(y)^2)
    (so we save the output)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, y):
        out = _like(erfinv(y), y)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output / _TWO_OVER_SQRT_PI * np.exp(out * out)

    output_dtype = staticmethod(_floating_dtype)


def log_ndtr(x: np.ndarray) -> np.ndarray:
    """ln Phi(x), Phi the standard normal CDF, in float64: ln(erfc(-x/sqrt 2) / 2); for
    x > 0 as log1p(-Phi(-x)) (Phi near 1); below -30, where Phi underflows soon, the
    asymptotic series -x^2/2 - ln(-x sqrt(2 pi)) + ln(1 - 1/x^2 + 3/x^4 - 15/x^6 + 105/x^8)."""
    x = _float64(x)
    low = x < -30
    z = np.where(low, -30.0, x)  # (each branch computed where it is valid only)
    with np.errstate(divide="ignore"):
        middle = np.where(z > 0, np.log1p(-0.5 * erfc(z / math.sqrt(2))),
                          np.log(0.5 * erfc(-z / math.sqrt(2))))
    z = np.where(low, x, -30.0)
    inverse_square = 1 / (z * z)
    series = 1 + inverse_square * (-1 + inverse_square * (3 + inverse_square * (
        -15 + inverse_square * 105)))
    tail = -z * z / 2 - np.log(-z) - 0.5 * math.log(2 * math.pi) + np.log(series)
    return np.where(low, tail, middle)


class LogNdtr(Function):
    """f(x) = ln Phi(x) (Phi the standard normal CDF),
    f'(x) = phi(x) / Phi(x) = e^(-x^2/2 - f(x)) / sqrt(2 pi)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        out = _like(log_ndtr(x), x)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        return grad_output * np.exp(-x * x / 2 - out) / math.sqrt(2 * math.pi)

    output_dtype = staticmethod(_floating_dtype)


class Entr(Function):
    """f(x) = -x ln x for x > 0, 0 at 0, -inf below (the entropy of one probability);
    f'(x) = -(1 + ln x)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(x > 0, -x * np.log(x), np.where(x == 0, 0.0, -np.inf)).astype(
                _floating_dtype(x), copy=False)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            return -grad_output * (1 + np.log(x))

    output_dtype = staticmethod(_floating_dtype)


# --- the gamma function: lgamma, digamma, polygamma ------------------------------------------


def _lgamma_one(value: float) -> float:
    try:
        return math.lgamma(value)
    except (ValueError, OverflowError):  # a pole (0, -1, -2, ...) or beyond float64
        return math.inf


_lgamma_each = np.frompyfunc(_lgamma_one, 1, 1)


def lgamma(x: np.ndarray) -> np.ndarray:
    """ln |Gamma(x)|, in float64 (inf at the poles 0, -1, -2, ...)."""
    return np.asarray(_lgamma_each(_float64(x)), dtype=np.float64)  # (a 0-d x: a float)


# the Bernoulli numbers B_2k for k = 1 .. 7: the asymptotic series' coefficients
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _shifted_up(x: np.ndarray, low: float, step_term) -> tuple[np.ndarray, np.ndarray]:
    """Move each x up by ones until it is >= low, summing ``step_term(x)`` of each x left
    behind (the recurrence); returns the moved x and the sum."""
    total = np.zeros_like(x)
    below = (x < low) & (x > -np.inf)  # (-inf would never get there)
    with np.errstate(divide="ignore", invalid="ignore"):
        while below.any():
            total += np.where(below, step_term(np.where(below, x, 1.0)), 0.0)
            x = np.where(below, x + 1, x)
            below = (x < low) & (x > -np.inf)
    return x, total


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx ln Gamma(x), in float64: -inf at 0, NaN at -1, -2, ... (as PyTorch)."""
    x = _float64(x)
    reflect = x < 0.5
    z = np.where(reflect, 1 - x, x)  # psi(x) = psi(1 - x) - pi / tan(pi x)
    z, behind = _shifted_up(z, 10.0, lambda v: -1 / v)  # psi(v) = psi(v + 1) - 1 / v
    inverse_square = 1 / (z * z)
    series = sum(b / (2 * k + 2) * inverse_square ** (k + 1) for k, b in enumerate(_BERNOULLI))
    psi = np.log(z) - 0.5 / z - series + behind
    with np.errstate(divide="ignore", invalid="ignore"):
        # tan(pi x) from x's distance to the nearest integer (exact), so large |x| keeps digits
        cotangent_term = np.pi / np.tan(np.pi * (x - np.round(x)))
    psi = np.where(reflect, psi - cotangent_term, psi)
    pole = (x <= 0) & (x == np.round(x))  # -inf at 0, +inf at -0.0 (PyTorch's), else NaN
    return np.where(pole, np.where(x == 0, np.where(np.signbit(x), np.inf, -np.inf), np.nan),
                    psi)


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """psi^(n)(x) = d^n/dx^n psi(x) = (-1)^(n+1) n! sum_k 1 / (x + k)^(n+1), for n >= 1, in
    float64 (0 at +inf, NaN at -inf). x < 0.5 is reflected to 1 - x (the recurrence from a
    very negative x would take one step per unit, and never end below -2^53):
        psi^(n)(x) = (-1)^n psi^(n)(1 - x) - pi d^n/dx^n cot(pi x)."""
    x = _float64(x)
    reflect = x < 0.5
    up = _polygamma_up(n, np.where(reflect, 1 - x, x))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # cot(pi x) from x's distance to the nearest integer (exact: large |x| keeps digits)
        cotangent = 1 / np.tan(np.pi * (x - np.round(x)))
        reflected = (-1) ** n * up - np.pi * _cot_derivative(n, cotangent)
    pole = (x <= 0) & (x == np.round(x))  # 0, -1, -2, ...: (-1)^(n+1) inf, as PyTorch's
    return np.where(x == -np.inf, np.nan, np.where(pole, (-1) ** (n + 1) * np.inf,
                                                   np.where(reflect, reflected, up)))


def _cot_derivative(n: int, c: np.ndarray) -> np.ndarray:
    """d^n/dx^n cot(pi x) as a polynomial in c = cot(pi x): P_0 = c and, since
    dc/dx = -pi (1 + c^2), P_(k+1) = -pi (1 + c^2) P_k'(c)."""
    polynomial = np.polynomial.polynomial
    coefficients = np.array([0.0, 1.0])
    for _ in range(n):
        coefficients = -np.pi * polynomial.polymul([1.0, 0.0, 1.0],
                                                   polynomial.polyder(coefficients))
    return polynomial.polyval(c, coefficients)


def _polygamma_up(n: int, x: np.ndarray) -> np.ndarray:
    """``polygamma`` by the recurrence and the asymptotic series."""
    sign, factorial = (-1) ** (n + 1), math.factorial(n)
    # psi^(n)(v) = psi^(n)(v + 1) + (-1)^(n+1) n! / v^(n+1)
    z, behind = _shifted_up(x, 10.0 + n, lambda v: sign * factorial / v ** (n + 1))
    # (-1)^(n+1) [(n-1)!/z^n + n!/(2 z^(n+1)) + sum_k B_2k (2k+n-1)! / ((2k)! z^(2k+n))]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        series = math.factorial(n - 1) / z ** n + factorial / (2 * z ** (n + 1))
        for k, b in enumerate(_BERNOULLI, start=1):  # b = B_2k
            series = series + b * math.factorial(2 * k + n - 1) \
                / (math.factorial(2 * k) * z ** (2 * k + n))
    return sign * series + behind


class _Special:
    """What Lgamma, Digamma and I0 share (a mixin before ``Function``, so that it is no
    Function itself): f(x) = ``value``(x), whose derivative is a special function with a
    Function of its own. backward evaluates ``slope`` on the arrays; on Tensors
    (create_graph) it records ``recorded_slope`` (named in each class), so derivatives of
    every order exist (lgamma -> digamma -> polygamma(1) -> polygamma(2) ...)."""

    twice_differentiable = True  # tensor_backward records Slope (higher_order.py)
    output_dtype = staticmethod(_floating_dtype)

    @classmethod
    def forward(cls, ctx, x):
        ctx.save_for_backward(x)
        return _like(cls.value(x), x)

    @classmethod
    def backward(cls, ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * _like(cls.slope(x), x)

    @classmethod
    def tensor_backward(cls, ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * cls.recorded_slope(x)


class Lgamma(_Special, Function):
    """f(x) = ln |Gamma(x)|,  f'(x) = digamma(x)"""

    value, slope = staticmethod(lgamma), staticmethod(digamma)

    @staticmethod
    def recorded_slope(x):
        return Digamma.apply(x)


class Digamma(_Special, Function):
    """f(x) = psi(x) = d/dx ln Gamma(x),  f'(x) = polygamma(1, x) (the trigamma function)"""

    value = staticmethod(digamma)

    @staticmethod
    def slope(x):
        return polygamma(1, x)

    @staticmethod
    def recorded_slope(x):
        return Polygamma.apply(x, 1)


class Polygamma(Function):
    """f(x) = psi^(n)(x), the n-th derivative of digamma (n >= 1; n = 0 is Digamma);
    f'(x) = psi^(n+1)(x)"""

    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return _like(polygamma(n, x), x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * _like(polygamma(ctx.n + 1, x), x), None

    twice_differentiable = True  # the same formula, with Polygamma recorded (higher_order.py)

    @staticmethod
    def tensor_backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * Polygamma.apply(x, ctx.n + 1), None

    output_dtype = staticmethod(_floating_dtype)


# --- modified Bessel functions of the first kind: i0, i1 --------------------------------------


def i0(x: np.ndarray) -> np.ndarray:
    """I_0(x), in float64 (NumPy's ``np.i0``)."""
    return np.i0(_float64(x))


def i1(x: np.ndarray) -> np.ndarray:
    """I_1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!), in float64 (summed until the terms
    no longer change the sum: about |x| + 20 terms)."""
    half = _float64(x) / 2
    term = half.copy()
    total = term.copy()
    square = half * half
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(1, 2000):
            term = term * square / (k * (k + 1))
            total = total + term
            if not np.any(np.abs(term) > 1e-17 * np.abs(total)):
                break
    return total


class I0(_Special, Function):
    """f(x) = I_0(x) = sum_k (x/2)^(2k) / (k!)^2,  f'(x) = I_1(x)"""

    value, slope = staticmethod(i0), staticmethod(i1)

    @staticmethod
    def recorded_slope(x):
        return I1.apply(x)


class I1(Function):
    """f(x) = I_1(x),  f'(x) = I_0(x) - I_1(x) / x (1/2 at x = 0)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _like(i1(x), x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x64 = _float64(x)
        nonzero = np.where(x64 == 0, 1.0, x64)
        slope = np.where(x64 == 0, 0.5, np.i0(x64) - i1(x64) / nonzero)
        return grad_output * _like(slope, x)

    twice_differentiable = True  # the same formula, with I0 and I1 recorded (higher_order.py)

    @staticmethod
    def tensor_backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        at_zero = (x.detach().numpy() == 0)  # a constant mask
        nonzero = x + at_zero.astype(x.dtype)  # x, with 1 where x = 0 (no 0 / 0)
        slope = I0.apply(x) - I1.apply(x) / nonzero
        return grad_output * np.where(at_zero, 0.5, slope)  # (np.where of a Tensor: mg.where)

    output_dtype = staticmethod(_floating_dtype)
