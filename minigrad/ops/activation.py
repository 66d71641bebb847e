"""Activation Functions with an analytic backward: softmax, log_softmax, GELU and erf.

softmax and log_softmax subtract the largest logit first, so logits of +-1000 give the
right finite results instead of inf / inf. GELU needs the error function, which NumPy lacks: ``erf``
and ``erfc`` below are W. J. Cody's rational approximations, vectorised.
"""

from __future__ import annotations

import math

import numpy as np

from ..function import Function

# --- erf and erfc ----------------------------------------------------------------------------
#
# W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23
# (1969), as in his SPECFUN routine CALERF (ACM TOMS Algorithm 715). Three intervals of
# |x|: below 0.46875 erf(x) = x P(x^2) / Q(x^2); up to 4 erfc(x) = e^(-x^2) P(x) / Q(x);
# beyond, erfc(x) = e^(-x^2) / x (1/sqrt(pi) - P(1/x^2) / (x^2 Q(1/x^2))). Measured
# against math.erf and math.erfc in float64: largest error of erf 2.2e-16 (2e6 points in
# [-8, 8]), largest relative error of erfc 1.0e-15 (3e6 points in [-6, 26.5]): as
# accurate as float64 allows. About 50 ns per element, no Python call per element.

_SMALL_P = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
            3.20937758913846947e03, 1.85777706184603153e-1)
_SMALL_Q = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
            2.84423683343917062e03)
_MIDDLE_P = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
             2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
             2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_MIDDLE_Q = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
             1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
             3.43936767414372164e03, 1.23033935480374942e03)
_LARGE_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
            1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_LARGE_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
            6.05183413124413191e-2, 2.33520497626869185e-3)
_SMALL, _LARGE, _BEYOND = 0.46875, 4.0, 27.3  # erfc(27.3) underflows to 0


def _ratio(z: np.ndarray, p: tuple, q: tuple) -> np.ndarray:
    """Cody's (p[-1] z^n + p[0] z^(n-1) + ... + p[n-1]) / (z^n + q[0] z^(n-1) + ... + q[n-1])."""
    top, bottom = p[-1] * z, z.copy()
    for a, b in zip(p[:-2], q[:-1]):  # Horner's rule, in place (it is the hot loop)
        top += a
        top *= z
        bottom += b
        bottom *= z
    top += p[-2]
    bottom += q[-1]
    return np.divide(top, bottom, out=top)


def _times_exp_minus_square(y: np.ndarray, value: np.ndarray) -> np.ndarray:
    """value * e^(-y^2), with y^2 split in two so its rounding error is not amplified."""
    rounded = np.trunc(y * 16) / 16
    return np.exp(-rounded * rounded) * np.exp(-(y - rounded) * (y + rounded)) * value


def _erf_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For y = |x| (float64): the mask of the small interval, erf(y) there, and erfc(y)
    elsewhere (both in one array, each valid where its interval is)."""
    y = np.abs(np.asarray(x, dtype=np.float64))
    small = y <= _SMALL
    out = np.zeros_like(y)
    z = y[small]
    out[small] = z * _ratio(z * z, _SMALL_P, _SMALL_Q)
    middle = ~small & (y <= _LARGE)
    z = y[middle]
    out[middle] = _times_exp_minus_square(z, _ratio(z, _MIDDLE_P, _MIDDLE_Q))
    large = (y > _LARGE) & (y < _BEYOND)
    z = y[large]
    tail = (1 / math.sqrt(math.pi) - _ratio(1 / (z * z), _LARGE_P, _LARGE_Q) / (z * z)) / z
    out[large] = _times_exp_minus_square(z, tail)
    out[np.isnan(y)] = np.nan
    return small, out


def erf(x: np.ndarray) -> np.ndarray:
    """erf(x) = 2/sqrt(pi) * integral_0^x e^(-t^2) dt, in float64."""
    small, part = _erf_parts(x)
    return np.copysign(np.where(small, part, 1 - part), x)


def erfc(x: np.ndarray) -> np.ndarray:
    """erfc(x) = 1 - erf(x), in float64, accurate also where it is tiny (x large)."""
    small, part = _erf_parts(x)
    return np.where(small, 1 - np.copysign(part, x), np.where(x < 0, 2 - part, part))


class Erf(Function):
    """f(x) = erf(x),  f'(x) = 2/sqrt(pi) e^(-x^2)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return erf(x).astype(Erf.output_dtype(x), copy=False)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (2 / math.sqrt(math.pi)) * np.exp(-x * x)

    @staticmethod
    def output_dtype(x):
        return x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)  # ints: float32


# --- softmax ---------------------------------------------------------------------------------


class Softmax(Function):
    """s_i = exp(x_i - max x) / sum_j exp(x_j - max x);  dL/dx = s * (g - sum(g * s))"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, dim):
        axis = dim if x.ndim else None  # a 0-d x has no dim 0 in NumPy
        with np.errstate(invalid="ignore"):  # a row of only -inf gives NaN, as in PyTorch
            exp = np.exp(x - x.max(axis=axis, keepdims=True))
        out = exp / exp.sum(axis=axis, keepdims=True)
        ctx.save_for_backward(out)
        ctx.axis = axis
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        grad = out * (grad_output - (grad_output * out).sum(axis=ctx.axis, keepdims=True))
        return grad, None  # nothing for dim

    @staticmethod
    def output_dtype(x, dim):
        return x.dtype


def log_softmax(x: np.ndarray, axis: int | None) -> np.ndarray:
    """x - max x - log sum exp(x - max x) along ``axis`` (cross entropy uses it too)."""
    with np.errstate(invalid="ignore", divide="ignore"):  # rows of only -inf give NaN
        shifted = x - x.max(axis=axis, keepdims=True)  # (methods: np.max and np.sum add a
        # Python call each, ~5 us for the MLP benchmark's logits on this machine)
        return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


class LogSoftmax(Function):
    """y_i = x_i - max x - log sum_j exp(x_j - max x);  dL/dx = g - softmax(x) * sum(g)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, dim):
        axis = dim if x.ndim else None
        out = log_softmax(x, axis)
        ctx.save_for_backward(out)
        ctx.axis = axis
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        grad = grad_output - np.exp(out) * grad_output.sum(axis=ctx.axis, keepdims=True)
        return grad, None  # nothing for dim

    @staticmethod
    def output_dtype(x, dim):
        return x.dtype


# --- GELU ------------------------------------------------------------------------------------

SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
GELU_CUBIC = 0.044715


# The standard normal CDF for float32, fast. Abramowitz & Stegun 7.1.26:
#     erfc(z) = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^(-z^2),  t = 1 / (1 + p z),  z >= 0,
# with |error| < 1.5e-7 over all z; with float32 rounding Phi is within 4e-7 (a few float32
# ulps, as tests/test_functional_activation_loss.py checks), and one formula serves every z
# (no masks). The coefficients below are halved, so
# the polynomial times e^(-x^2/2) is Phi(-|x|) directly. Cody's erfc above (float64, ~20x
# slower) is used for float64, where gradcheck needs full precision.
_AS_P = 0.3275911
_AS_HALF_A = (0.5 * 0.254829592, 0.5 * -0.284496736, 0.5 * 1.421413741,
              0.5 * -1.453152027, 0.5 * 1.061405429)
_CHUNK = 32768  # elements per pass: the temporaries of one chunk stay in the CPU cache
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)  # phi(x) = e^(-x^2/2) / sqrt(2 pi)
_SIGN_BIT = np.uint32(0x80000000)  # of a float32 seen as 32 bits


def _normal_cdf_chunks(flat: np.ndarray, cdf: np.ndarray):
    """Fill ``cdf`` with Phi(``flat``) (both flat float32), chunk by chunk; after each chunk
    yield ``(start, x, Phi(x), e^(-x^2/2))`` of it, so that a caller (GELU) can use them
    while they are still in cache. Some twenty in-place passes over data that stays in
    cache instead of twenty trips to memory (a Python loop over chunks, never over
    elements)."""
    size = min(flat.size, _CHUNK)
    z_buffer, e_buffer = np.empty(size, dtype=np.float32), np.empty(size, dtype=np.float32)
    sign_buffer = np.empty(size, dtype=np.uint32)
    for start in range(0, flat.size, _CHUNK):
        part = flat[start:start + _CHUNK]
        z, e, sign = z_buffer[:len(part)], e_buffer[:len(part)], sign_buffer[:len(part)]
        np.abs(part, out=z)
        z *= np.float32(1 / math.sqrt(2))  # erf's argument, |x| / sqrt 2
        np.multiply(z, z, out=e)
        np.negative(e, out=e)
        np.exp(e, out=e)  # e^(-z^2) = e^(-x^2/2)
        t = z
        t *= _AS_P
        t += 1
        np.reciprocal(t, out=t)
        tail = cdf[start:start + _CHUNK]  # Horner: the polynomial in t
        np.multiply(t, _AS_HALF_A[-1], out=tail)
        for a in _AS_HALF_A[-2::-1]:
            tail += a
            tail *= t
        tail *= e  # = Phi(-|x|) = erfc(|x| / sqrt 2) / 2
        # Phi(x) = 1/2 + sign(x) (1/2 - Phi(-|x|)): no branch per element (a masked write
        # costs eight times more); below 3e-8, Phi rounds to 0, an absolute error < 3e-8
        np.subtract(0.5, tail, out=tail)  # >= +0.0: its sign bit is clear
        # copysign(tail, x) as PyTorch's vectorised erf does it, by setting the sign bit of
        # x on tail (np.copysign has no SIMD loop: 55 us a chunk, these two ops 18 us)
        np.bitwise_and(part.view(np.uint32), _SIGN_BIT, out=sign)
        np.bitwise_or(tail.view(np.uint32), sign, out=tail.view(np.uint32))
        tail += 0.5
        yield start, part, tail, e


def _gelu_float32(x: np.ndarray, with_slope: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """x Phi(x) in float32 and, ``with_slope``, its derivative Phi(x) + x phi(x), both
    made chunk by chunk from Phi(x) and e^(-x^2/2) while they are in cache (so backward
    has no exp to redo: 2.3 ms less of a 4.8 ms forward and backward of 16x64x512)."""
    flat = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
    out = np.empty_like(flat)
    slope = np.empty_like(flat) if with_slope else None
    for start, part, cdf, e in _normal_cdf_chunks(flat, out):
        if with_slope:
            density = slope[start:start + len(part)]
            np.multiply(part, e, out=density)
            density *= _INV_SQRT_2PI  # x phi(x)
            density += cdf
        cdf *= part  # out = x Phi(x), in place of Phi
    return out.reshape(x.shape), None if slope is None else slope.reshape(x.shape)


class GELU(Function):
    """f(x) = x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2;  f'(x) = Phi(x) + x phi(x).
    ``approximate="tanh"``: f(x) = x/2 (1 + tanh u), u = sqrt(2/pi) (x + 0.044715 x^3).
    float32 uses the fast Phi above; float64 the exact erfc. The forward saves f'(x)
    itself when a gradient is needed (one array, where x and Phi(x) would be two)."""

    @staticmethod
    def forward(ctx, x, approximate="none"):
        ctx.approximate = approximate
        if approximate == "tanh":
            ctx.save_for_backward(x)
            inner = SQRT_2_OVER_PI * (x + GELU_CUBIC * x ** 3)
            return 0.5 * x * (1 + np.tanh(inner))
        needs_slope = ctx.needs_input_grad[0]
        if x.dtype == np.float32:
            out, slope = _gelu_float32(x, needs_slope)
        else:
            cdf = (0.5 * erfc(-x / math.sqrt(2))).astype(x.dtype)
            out = x * cdf
            slope = cdf + x * np.exp(x * x * -0.5) * _INV_SQRT_2PI if needs_slope else None
        ctx.save_for_backward(slope)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.approximate == "tanh":
            (x,) = ctx.saved_tensors
            tanh = np.tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x ** 3))
            slope = SQRT_2_OVER_PI * (1 + 3 * GELU_CUBIC * x * x)
            return grad_output * (0.5 * (1 + tanh) + 0.5 * x * (1 - tanh * tanh) * slope), None
        (slope,) = ctx.saved_tensors  # Phi(x) + x phi(x)
        return grad_output * slope, None  # nothing for approximate

    # create_graph=True: Phi and phi from the input Tensor (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        if ctx.approximate == "tanh":  # that formula runs on Tensors as it is
            return GELU.backward(ctx, grad_output)
        x = ctx.args[0]
        cdf = 0.5 * (1 + (x * (1 / math.sqrt(2))).erf())
        density = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
        return grad_output * (cdf + x * density), None

    @staticmethod
    def output_dtype(x, approximate="none"):
        return x.dtype
