"""PyTorch's function spellings of the Tensor operations: ``mg.exp(x)`` is ``x.exp()``.

Each function is one line that calls the Tensor method (so the Function doing the work
is one jump further, in ``minigrad/ops``). The basic maths functions also take ``out=``,
as PyTorch's do: the result is written into an existing tensor, which is refused while
gradients are being recorded (an ``out=`` write has no place in the graph).

Many names here are also Python builtins (``sum``, ``max``, ``abs``, ``round``, ``all``);
inside this module they mean the tensor functions, as they do for ``mg.sum``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .errors import ShapeError
from .ops import Einsum
from .state import rng_for, state
from .tensor import Tensor, _multinomial


def _tensor(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(value)


def _out(result: Tensor, out: Tensor | None, op: str) -> Tensor:
    """``result``, or (with ``out=``) ``out`` holding result's values."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}: out must be a Tensor, got {type(out).__name__}")
    if state.grad_enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad. Drop out= and use "
            "the result, or call it inside `with mg.no_grad():`."
        )
    values = result.numpy()
    out.realize()
    if out.shape != values.shape:  # PyTorch resizes out (and warns if it held elements)
        if out.numel():
            warnings.warn(f"{op}: out had shape {out.shape} but the result has shape "
                          f"{values.shape}; out was resized", UserWarning, stacklevel=3)
        if not np.can_cast(values.dtype, out.dtype, casting="same_kind"):
            raise TypeError(f"{op}: the result is {values.dtype} but out is {out.dtype}; "
                            "out cannot hold it")
        out._data = np.empty(values.shape, dtype=out.dtype)
    out._write(values)
    return out


# --- unary maths --------------------------------------------------------------------------

def exp(input, *, out=None): return _out(input.exp(), out, "exp")
def log(input, *, out=None): return _out(input.log(), out, "log")
def log1p(input, *, out=None): return _out(input.log1p(), out, "log1p")
def expm1(input, *, out=None): return _out(input.expm1(), out, "expm1")
def log2(input, *, out=None): return _out(input.log2(), out, "log2")
def log10(input, *, out=None): return _out(input.log10(), out, "log10")
def sqrt(input, *, out=None): return _out(input.sqrt(), out, "sqrt")
def rsqrt(input, *, out=None): return _out(input.rsqrt(), out, "rsqrt")
def sin(input, *, out=None): return _out(input.sin(), out, "sin")
def cos(input, *, out=None): return _out(input.cos(), out, "cos")
def tanh(input, *, out=None): return _out(input.tanh(), out, "tanh")
def sigmoid(input, *, out=None): return _out(input.sigmoid(), out, "sigmoid")
def relu(input): return input.relu()
def abs(input, *, out=None): return _out(input.abs(), out, "abs")  # noqa: A001
def neg(input, *, out=None): return _out(input.neg(), out, "neg")
def sign(input, *, out=None): return _out(input.sign(), out, "sign")
def floor(input, *, out=None): return _out(input.floor(), out, "floor")
def ceil(input, *, out=None): return _out(input.ceil(), out, "ceil")
def erf(input, *, out=None): return _out(input.erf(), out, "erf")
def square(input, *, out=None): return _out(input.square(), out, "square")
def reciprocal(input, *, out=None): return _out(input.reciprocal(), out, "reciprocal")


def round(input, *, decimals=0, out=None):  # noqa: A001
    return _out(input.round(decimals), out, "round")


def clamp(input, min=None, max=None, *, out=None):  # noqa: A002
    return _out(input.clamp(min, max), out, "clamp")


def pow(input, exponent, *, out=None):  # noqa: A001
    """``input ** exponent``; either may be a number (``mg.pow(2, x)``)."""
    result = input ** exponent if isinstance(input, Tensor) else _tensor(exponent).__rpow__(input)
    return _out(result, out, "pow")


def clamp_min(input, min, *, out=None): return _out(input.clamp_min(min), out, "clamp_min")  # noqa: A002
def clamp_max(input, max, *, out=None): return _out(input.clamp_max(max), out, "clamp_max")  # noqa: A002


negative, clip, absolute = neg, clamp, abs

# --- binary maths -------------------------------------------------------------------------


def add(input, other, *, alpha=1, out=None):
    """input + alpha * other."""
    return _out(_tensor(input) + (other if alpha == 1 else other * alpha), out, "add")


def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other."""
    return _out(_tensor(input) - (other if alpha == 1 else other * alpha), out, "sub")


def mul(input, other, *, out=None): return _out(_tensor(input) * other, out, "mul")


def div(input, other, *, rounding_mode=None, out=None):
    """input / other, or its quotient rounded ("trunc" or "floor"), as Tensor.div."""
    return _out(_tensor(input).div(other, rounding_mode=rounding_mode), out, "div")


def floor_divide(input, other, *, out=None):
    return _out(_tensor(input) // other, out, "floor_divide")


def remainder(input, other, *, out=None):
    """input % other (a number % a tensor too, as PyTorch's remainder(Scalar, Tensor))."""
    result = other.__rmod__(input) if isinstance(other, Tensor) and \
        not isinstance(input, Tensor) else _tensor(input) % other
    return _out(result, out, "remainder")


def fmod(input, other, *, out=None): return _out(_tensor(input).fmod(other), out, "fmod")
def maximum(input, other, *, out=None): return _out(input.maximum(other), out, "maximum")
def minimum(input, other, *, out=None): return _out(input.minimum(other), out, "minimum")


def lerp(input, end, weight, *, out=None):
    return _out(input.lerp(end, weight), out, "lerp")


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return _out(input.addcmul(tensor1, tensor2, value=value), out, "addcmul")


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    return _out(input.addcdiv(tensor1, tensor2, value=value), out, "addcdiv")


subtract, multiply, divide, true_divide = sub, mul, div, div

# --- linear algebra -----------------------------------------------------------------------

def matmul(input, other, *, out=None): return _out(input.matmul(other), out, "matmul")
def mm(input, mat2, *, out=None): return _out(input.mm(mat2), out, "mm")
def bmm(input, mat2, *, out=None): return _out(input.bmm(mat2), out, "bmm")
def mv(input, vec, *, out=None): return _out(input.mv(vec), out, "mv")
def dot(input, other): return input.dot(other)
def outer(input, vec2): return input.outer(vec2)


def einsum(equation: str, *operands) -> Tensor:
    """``mg.einsum("bij,bjk->bik", a, b)`` (operands also as one list). Letters name
    dims; ``...`` stands for the leading dims; without ``->`` the output has the letters
    used once, in alphabetical order. A letter repeated within one operand (a trace) is
    not supported."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return Einsum.apply(*(_tensor(o) for o in operands), equation=equation)


ger = outer

# --- reductions ---------------------------------------------------------------------------


def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):  # noqa: A001
    """PyTorch also takes NumPy's ``axis=`` and ``keepdims=`` (as every reduction here)."""
    x = input if dtype is None else input.astype(dtype)
    return x.sum(dim, keepdim, axis=axis, keepdims=keepdims)


def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    x = input if dtype is None else input.astype(dtype)
    return x.mean(dim, keepdim, axis=axis, keepdims=keepdims)


def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    return input.prod(dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)


def cumsum(input, dim=None, *, dtype=None, axis=None):
    return input.cumsum(dim, dtype=dtype, axis=axis)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
        keepdims=None):
    return input.std(dim, unbiased, keepdim, correction=correction, axis=axis,
                     keepdims=keepdims)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
        keepdims=None):
    return input.var(dim, unbiased, keepdim, correction=correction, axis=axis,
                     keepdims=keepdims)


def max(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """``max(x)`` a tensor; ``max(x, dim)`` (values, indices); ``max(x, other)`` maximum."""
    return input.max(dim, keepdim, axis=axis, keepdims=keepdims)


def min(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    return input.min(dim, keepdim, axis=axis, keepdims=keepdims)


def amax(input, dim=(), keepdim=False, *, axis=None, keepdims=None):
    return input.amax(dim, keepdim, axis=axis, keepdims=keepdims)


def amin(input, dim=(), keepdim=False, *, axis=None, keepdims=None):
    return input.amin(dim, keepdim, axis=axis, keepdims=keepdims)


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.argmax(dim, keepdim, axis=axis, keepdims=keepdims)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.argmin(dim, keepdim, axis=axis, keepdims=keepdims)


def logsumexp(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.logsumexp(dim, keepdim, axis=axis, keepdims=keepdims)


def all(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    return input.all(dim, keepdim, axis=axis, keepdims=keepdims)


def any(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    return input.any(dim, keepdim, axis=axis, keepdims=keepdims)


def norm(input, p="fro", dim=None, keepdim=False): return input.norm(p, dim, keepdim)

# --- shape --------------------------------------------------------------------------------

def reshape(input, shape): return input.reshape(shape)
def flatten(input, start_dim=0, end_dim=-1): return input.flatten(start_dim, end_dim)
def transpose(input, dim0, dim1): return input.transpose(dim0, dim1)
def permute(input, dims): return input.permute(dims)
def squeeze(input, dim=None): return input.squeeze(dim)
def unsqueeze(input, dim): return input.unsqueeze(dim)
def t(input): return input.t()
def split(tensor, split_size_or_sections, dim=0): return tensor.split(split_size_or_sections, dim)
def chunk(input, chunks, dim=0): return input.chunk(chunks, dim)
def tensor_split(input, indices_or_sections, dim=0):
    return input.tensor_split(indices_or_sections, dim)
def unbind(input, dim=0): return input.unbind(dim)
def broadcast_to(input, size): return input.broadcast_to(size)
def tril(input, diagonal=0): return input.tril(diagonal)
def triu(input, diagonal=0): return input.triu(diagonal)
def diag(input, diagonal=0): return input.diag(diagonal)
def roll(input, shifts, dims=None): return input.roll(shifts, dims)


def repeat_interleave(input, repeats, dim=None):
    return input.repeat_interleave(repeats, dim)


swapaxes = swapdims = transpose

# --- selection ----------------------------------------------------------------------------

def masked_fill(input, mask, value): return input.masked_fill(mask, value)
def index_select(input, dim, index): return input.index_select(dim, index)
def argsort(input, dim=-1, descending=False, stable=False):
    return input.argsort(dim, descending, stable)


def sort(input, dim=-1, descending=False, stable=False):
    return input.sort(dim, descending, stable)


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    return input.topk(k, dim, largest, sorted)


def nonzero(input, *, as_tuple=False): return input.nonzero(as_tuple=as_tuple)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    return input.unique(sorted, return_inverse, return_counts, dim)


def scatter(input, dim, index, src=None, *, value=None):
    return input.scatter(dim, index, src, value=value)


def scatter_add(input, dim, index, src): return input.scatter_add(dim, index, src)


def softmax(input, dim, dtype=None): return input.softmax(dim, dtype)
def log_softmax(input, dim, dtype=None): return input.log_softmax(dim, dtype)

# --- comparisons --------------------------------------------------------------------------

def eq(input, other): return input == other
def ne(input, other): return input != other
def lt(input, other): return input < other
def le(input, other): return input <= other
def gt(input, other): return input > other
def ge(input, other): return input >= other


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _values(x):
    """The array of a tensor (with or without grad: comparing cuts no gradient)."""
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """|input - other| <= atol + rtol |other|, elementwise: a bool tensor."""
    return Tensor._make(np.isclose(_values(input), _values(other), rtol, atol, equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Are all elements close (``isclose``)? A Python bool, as in PyTorch."""
    return bool(np.allclose(_values(input), _values(other), rtol, atol, equal_nan))


def equal(input, other) -> bool:
    """Same shape and the same elements? A Python bool."""
    return input.shape == other.shape and bool(np.array_equal(input.numpy(), other.numpy()))

# --- random -------------------------------------------------------------------------------


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           requires_grad=False) -> Tensor:
    """Normal samples: ``normal(mean, std)`` with tensors (or a number and a tensor),
    elementwise; ``normal(mean, std, size)`` with numbers (then ``dtype=`` and
    ``requires_grad=`` as for ``randn``). Drawn as mean + std * z with z standard normal,
    so the result is differentiable in mean and std, as in PyTorch."""
    rng = rng_for(generator, "normal")
    if size is not None:
        if isinstance(mean, Tensor) or isinstance(std, Tensor):
            raise TypeError("normal: with size=, mean and std must be numbers")
        shape = tuple(size) if isinstance(size, (tuple, list)) else (size,)
        array = (mean + std * rng.standard_normal(shape)).astype(dtype or np.float32)
        result = Tensor._make(array).requires_grad_(requires_grad)
        return _out(result, out, "normal")
    if not (isinstance(mean, Tensor) or isinstance(std, Tensor)):
        raise TypeError("normal: give a tensor mean or std, or numbers and a size")
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    try:
        shape = np.broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        raise ShapeError(f"normal: mean and std shapes {[t.shape for t in tensors]} do not "
                         "broadcast") from None
    dtype = tensors[0].dtype
    noise = Tensor._make(rng.standard_normal(shape).astype(dtype))
    return _out(mean + std * noise, out, "normal")


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    return Tensor._make(_multinomial(input.numpy(), num_samples, replacement,
                                     rng_for(generator, "multinomial")))


__all__ = [name for name in dir() if not name.startswith("_") and name not in {
    "annotations", "warnings", "np", "Any", "ShapeError", "Einsum", "state", "Tensor",
    "rng_for"}]
