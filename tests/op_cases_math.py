"""Op cases for the elementwise functions of tensor_math.py / functions_math.py (round 3 of
the census): tan and the inverse hyperbolic functions, exp2, sinc, trunc/frac, nan_to_num,
logaddexp, xlogy, copysign, heaviside, float_power, the special functions of
minigrad/ops/special_functions.py and ``mg.special``, and in-place forms.

``lib(x)`` is the library of ``x`` (minigrad or torch), so ``lib(x).special.entr(x)`` runs
on both; ``const(x, array)`` makes a constant in x's library and dtype. The NumPy
references are written from the definitions, the slow obvious way (series, bisection,
Python's math module element by element), never with the code they check.
"""

from __future__ import annotations

import math

import numpy as np
from op_cases import OpCase, positive, real
from op_cases_tensor_ops import const, lib

# --- constants --------------------------------------------------------------------------------

ZEROS = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0]])
# divided by these, values become +-inf (and stay finite where the entry is 1)
INFINITIES = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0]])


# --- references, from the definitions ------------------------------------------------------------


def each(function, x):
    """``function`` (of one Python float) on every element of ``x``."""
    return np.vectorize(function, otypes=[np.float64])(x)


def sinc_reference(x):
    return each(lambda v: 1.0 if v == 0 else math.sin(math.pi * v) / (math.pi * v), x)


def xlogy_reference(x, y):
    return np.vectorize(lambda a, b: 0.0 if a == 0 else a * math.log(b),
                        otypes=[np.float64])(x, y)


def xlog1py_reference(x, y):
    return np.vectorize(lambda a, b: 0.0 if a == 0 else a * math.log1p(b),
                        otypes=[np.float64])(x, y)


def erfinv_reference(y):
    """Bisection on math.erf: the x with erf(x) = y."""
    def one(value):
        low, high = -6.0, 6.0
        for _ in range(200):
            middle = (low + high) / 2
            low, high = (middle, high) if math.erf(middle) < value else (low, middle)
        return (low + high) / 2
    return each(one, y)


def lgamma_reference(x):
    """ln |Gamma(x)| = ln Gamma(x + N) - sum_{k < N} ln |x + k|, and Stirling's series for
    the large z = x + N: (z - 1/2) ln z - z + ln(2 pi) / 2 + 1/(12 z) - 1/(360 z^3)."""
    def one(v):
        z = v + 1000
        stirling = (z - 0.5) * math.log(z) - z + 0.5 * math.log(2 * math.pi) + 1 / (12 * z) \
            - 1 / (360 * z ** 3)
        return stirling - math.fsum(math.log(abs(v + k)) for k in range(1000))
    return each(one, x)


def digamma_reference(x):
    """psi(x) = psi(x + N) - sum_{k < N} 1 / (x + k), and psi(z) ~ ln z - 1/(2z) - 1/(12 z^2)
    + 1/(120 z^4) for the large z = x + N."""
    def one(v):
        z = v + 1000
        return math.log(z) - 1 / (2 * z) - 1 / (12 * z * z) + 1 / (120 * z ** 4) \
            - math.fsum(1 / (v + k) for k in range(1000))
    return each(one, x)


def polygamma_reference(n, x):
    """(-1)^(n+1) n! sum_k 1 / (x + k)^(n+1): 1000 terms, then the tail's integral and
    Euler-Maclaurin corrections."""
    def one(v):
        z = v + 1000
        tail = 1 / (n * z ** n) + 1 / (2 * z ** (n + 1)) + (n + 1) / (12 * z ** (n + 2))
        total = math.fsum(1 / (v + k) ** (n + 1) for k in range(1000)) + tail
        return (-1) ** (n + 1) * math.factorial(n) * total
    return each(one, x)


def bessel_reference(order, x):
    """I_order(x) = sum_k (x/2)^(2k + order) / (k! (k + order)!)."""
    return each(lambda v: math.fsum((v / 2) ** (2 * k + order)
                                    / (math.factorial(k) * math.factorial(k + order))
                                    for k in range(60)), x)


def log_ndtr_reference(x):
    return each(lambda v: math.log(0.5 * math.erfc(-v / math.sqrt(2))), x)


def nan_to_num_reference(x, posinf, neginf):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(x / INFINITIES, posinf=posinf, neginf=neginf)


def log_then_nan_to_num_reference(x):
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(np.log(x), nan=0.0)


def divided_by_infinities(x):
    return x / const(x, INFINITIES)


def tan_in_place(x):
    y = x * 0.7
    return y.tan_()


def in_place_function(x, name, *args):
    """``lib.name(x * 1, *args)``: torch.sin_(y) on a non-leaf, then y."""
    y = x * 1
    getattr(lib(x), name)(y, *args)
    return y


# --- the table --------------------------------------------------------------------------------

CASES: list = [
    # --- trigonometric and hyperbolic ---
    OpCase("tan", lambda x: (x * 0.7).tan(), lambda x: np.tan(x * 0.7), (real(3, 4),)),
    OpCase("torch_tan", lambda x: lib(x).tan(x * 0.7), lambda x: np.tan(x * 0.7), (real(5),)),
    OpCase("asinh", lambda x: x.asinh(), np.arcsinh, (real(3, 4),)),
    OpCase("acosh", lambda x: (x + 1).acosh(), lambda x: np.arccosh(x + 1), (positive(3, 4),)),
    OpCase("atanh", lambda x: lib(x).atanh(x * 0.4), lambda x: np.arctanh(x * 0.4),
           (real(3, 4),)),
    OpCase("arcsinh_alias", lambda x: x.arcsinh(), np.arcsinh, (real(4),)),
    OpCase("sinc", lambda x: lib(x).sinc(x), sinc_reference, (real(3, 4),)),
    OpCase("sinc_at_zero", lambda x: (x * const(x, ZEROS)).sinc(),
           lambda x: sinc_reference(x * ZEROS), (real(3, 4),)),
    OpCase("deg2rad", lambda x: (x * 90).deg2rad(), lambda x: x * 90 * math.pi / 180,
           (real(3, 4),)),
    OpCase("rad2deg", lambda x: lib(x).rad2deg(x), lambda x: x * 180 / math.pi, (real(3, 4),),
           rtol=1e-5, atol=1e-4),

    # --- exponentials and logarithms ---
    OpCase("exp2", lambda x: x.exp2(), lambda x: 2.0 ** x, (real(3, 4),)),
    OpCase("logaddexp", lambda x, y: lib(x).logaddexp(x, y),
           lambda x, y: np.log(np.exp(x) + np.exp(y)), (real(3, 4), real(4))),
    OpCase("logaddexp2", lambda x, y: x.logaddexp2(y),
           lambda x, y: np.log2(2 ** x + 2 ** y), (real(3, 1), real(3, 4))),
    OpCase("xlogy", lambda x, y: x.xlogy(y), xlogy_reference, (real(3, 4), positive(3, 4))),
    OpCase("xlogy_zeros", lambda x, y: lib(x).xlogy(x * const(x, ZEROS), y),
           lambda x, y: xlogy_reference(x * ZEROS, y), (real(3, 4), positive(4))),
    OpCase("xlogy_number_first", lambda y: lib(y).xlogy(2.0, y),
           lambda y: 2 * np.log(y), (positive(3, 4),)),
    OpCase("xlog1py", lambda x, y: lib(x).special.xlog1py(x, y), xlog1py_reference,
           (real(3, 4), positive(3, 4))),
    OpCase("float_power", lambda x, y: x.float_power(y), lambda x, y: x ** y,
           (positive(3, 4), real(3, 4)), dtypes=("float64",)),
    OpCase("float_power_number", lambda x: lib(x).float_power(x, 3),
           lambda x: x ** 3, (real(3, 4),), dtypes=("float64",)),
    OpCase("logit_in_place", lambda x: (x * 0.2 + 0.5).logit_(),
           lambda x: np.log((x * 0.2 + 0.5) / (0.5 - x * 0.2)), (real(3, 4),)),

    # --- rounding, signs, replacing non-finite values ---
    OpCase("trunc", lambda x: (x * 2).trunc() * x, lambda x: np.trunc(x * 2) * x,
           (real(3, 4, away_from=(-0.5, 0.0, 0.5)),)),
    OpCase("fix", lambda x: lib(x).fix(x * 2) + x, lambda x: np.trunc(x * 2) + x,
           (real(3, 4, away_from=(-0.5, 0.0, 0.5)),)),
    OpCase("frac", lambda x: (x * 2).frac(), lambda x: x * 2 - np.trunc(x * 2),
           (real(3, 4, away_from=(-0.5, 0.0, 0.5)),)),
    OpCase("copysign", lambda x, y: x.copysign(y), np.copysign,
           (real(3, 4, away_from=(0,)), real(3, 4, away_from=(0,)))),
    OpCase("copysign_number", lambda x: lib(x).copysign(x, -1.0), lambda x: -np.abs(x),
           (real(3, 4, away_from=(0,)),)),
    OpCase("signbit", lambda x: x.signbit(), np.signbit, (real(3, 4),), dtypes=("bool",),
           differentiable=False),
    OpCase("heaviside", lambda x: (x * const(x, ZEROS)).heaviside(const(x, [0.5])),
           lambda x: np.heaviside(x * ZEROS, 0.5), (real(3, 4),), differentiable=False),
    OpCase("nan_to_num_infinities", lambda x: divided_by_infinities(x).nan_to_num(
        posinf=5.0, neginf=-4.0), lambda x: nan_to_num_reference(x, 5.0, -4.0),
        (real(3, 4, away_from=(0,)),)),
    OpCase("nan_to_num_nan", lambda x: lib(x).nan_to_num(x.log()),
           log_then_nan_to_num_reference, (real(3, 4, away_from=(0,)),)),

    # --- two-argument lengths ---

    # --- special functions ---
    OpCase("erfc", lambda x: x.erfc(), lambda x: each(math.erfc, x), (real(3, 4),)),
    OpCase("erfinv", lambda x: (x * 0.45).erfinv(), lambda x: erfinv_reference(x * 0.45),
           (real(3, 4),)),
    OpCase("lgamma", lambda x: x.lgamma(), lgamma_reference, (positive(3, 4),)),
    OpCase("lgamma_negative", lambda x: lib(x).lgamma(x * 0.2 - 0.5),
           lambda x: lgamma_reference(x * 0.2 - 0.5), (real(3, 4),)),
    OpCase("digamma", lambda x: x.digamma(), digamma_reference, (positive(3, 4),)),
    OpCase("digamma_negative", lambda x: lib(x).digamma(x * 0.2 - 0.5),
           lambda x: digamma_reference(x * 0.2 - 0.5), (real(3, 4),)),
    OpCase("polygamma_1", lambda x: lib(x).polygamma(1, x), lambda x: polygamma_reference(1, x),
           (positive(3, 4),)),
    OpCase("polygamma_2", lambda x: x.polygamma(2), lambda x: polygamma_reference(2, x),
           (positive(3, 4),)),
    OpCase("i0", lambda x: x.i0(), lambda x: bessel_reference(0, x), (real(3, 4),)),
    OpCase("special_i1", lambda x: lib(x).special.i1(x), lambda x: bessel_reference(1, x),
           (real(3, 4),)),
    OpCase("special_entr", lambda x: lib(x).special.entr(x), lambda x: -x * np.log(x),
           (positive(3, 4),)),
    OpCase("special_ndtr", lambda x: lib(x).special.ndtr(x),
           lambda x: each(lambda v: 0.5 * math.erfc(-v / math.sqrt(2)), x), (real(3, 4),)),
    OpCase("special_log_ndtr", lambda x: lib(x).special.log_ndtr(x * 3), lambda x:
           log_ndtr_reference(x * 3), (real(3, 4),)),

    # --- in place, on a non-leaf (recorded) ---
    OpCase("tan_in_place", tan_in_place, lambda x: np.tan(x * 0.7), (real(3, 4),)),
    OpCase("torch_sin_in_place", lambda x: in_place_function(x, "sin_"), np.sin, (real(3, 4),)),
    OpCase("torch_cos_in_place", lambda x: in_place_function(x, "cos_"), np.cos, (real(3, 4),)),
    OpCase("torch_exp2_in_place", lambda x: in_place_function(x, "exp2_"), lambda x: 2.0 ** x,
           (real(3, 4),)),
    OpCase("xlogy_in_place", lambda x, y: (x * 1).xlogy_(y), xlogy_reference,
           (real(3, 4), positive(3, 4))),
    OpCase("nan_to_num_in_place", lambda x: divided_by_infinities(x).nan_to_num_(1.0, 3.0, -2.0),
           lambda x: nan_to_num_reference(x, 3.0, -2.0), (real(3, 4, away_from=(0,)),)),

    # --- PyTorch's other spellings ---
    OpCase("multiply", lambda x, y: x.multiply(y), lambda x, y: x * y, (real(3, 4), real(4))),
    OpCase("subtract_alpha", lambda x, y: x.subtract(y, alpha=2), lambda x, y: x - 2 * y,
           (real(3, 4), real(3, 4))),
    OpCase("true_divide", lambda x, y: x.true_divide(y), lambda x, y: x / y,
           (real(3, 4), positive(4))),
    OpCase("negative_absolute", lambda x: x.negative().absolute(), np.abs,
           (real(3, 4, away_from=(0,)),)),
    OpCase("positive", lambda x: lib(x).positive(x) * 2, lambda x: x * 2, (real(3, 4),)),
]
