"""The rest of PyTorch's pointwise activations, each a composite of the engine's
differentiable ops (so their gradients, and gradients of gradients, come from those ops'
own): hardsigmoid, hardswish, selu, celu, softsign, tanhshrink, threshold, logsigmoid,
softmin and glu. Re-exported by ``functional``; the layers are in ``activation.py``.

With ``inplace=True`` the result is computed from a clone of the input and then written
into the input (recorded as ``copy_``), as PyTorch's in-place activations are: the ops of
the composite save the clone, which the write leaves as it was (saving the input itself,
they would find it changed at backward, and refuse).
"""

from __future__ import annotations

from typing import Any

from ..ops.activation import Softmax
from ..ops.reduce import normalize_dims
from ..tensor import Tensor
from .functional_checks import _check_floating, _error
from .functional_ext import elu, softplus
from .functional_layers_more import implicit_softmax_dim

# SELU's constants (Klambauer et al., 2017): the values that keep unit mean and variance
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _source(input: Tensor, inplace: bool) -> Tensor:
    """What the composite computes from: the input, or for ``inplace`` a clone of it."""
    return input.clone() if inplace else input


def _done(input: Tensor, result: Tensor, inplace: bool) -> Tensor:
    return input.copy_(result) if inplace else result


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """0 below -3, 1 above 3, x / 6 + 1/2 between: a cheap sigmoid."""
    _check_floating(input, "hardsigmoid")
    x = _source(input, inplace)
    return _done(input, (x / 6 + 0.5).clamp(0.0, 1.0), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x) (MobileNetV3's cheap swish)."""
    _check_floating(input, "hardswish")
    x = _source(input, inplace)
    return _done(input, x * (x / 6 + 0.5).clamp(0.0, 1.0), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * (x if x > 0 else alpha (e^x - 1)), with the constants that keep
    activations at mean 0 and variance 1."""
    _check_floating(input, "selu")
    return _done(input, elu(_source(input, inplace), SELU_ALPHA) * SELU_SCALE, inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha (e^(x / alpha) - 1))."""
    _check_floating(input, "celu")
    if alpha == 0:
        raise _error("celu: alpha must not be 0 (it divides x)", ValueError)
    x = _source(input, inplace)
    negative = ((x.clamp(max=0.0) / alpha).exp() - 1) * alpha
    return _done(input, x.relu() + negative, inplace)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)"""
    _check_floating(input, "softsign")
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)"""
    _check_floating(input, "tanhshrink")
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value``."""
    x = _source(input, inplace)
    return _done(input, x.where(x > threshold, value), inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """log sigmoid(x) = -softplus(-x), without overflow for large |x|."""
    _check_floating(input, "logsigmoid")
    return -softplus(-input)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """softmax(-x) along ``dim``: the smallest values get the largest weights. Without
    ``dim``: PyTorch's deprecated implicit choice, as ``softmax``."""
    if dim is None:
        dim = implicit_softmax_dim("softmin", input.ndim, _stacklevel)
    _check_floating(input, "softmin")
    negated = -(input if dtype is None else input.to(dtype))
    return Softmax.apply(negated, normalize_dims(dim, input.ndim, "softmin")[0])


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: the input's halves a, b along ``dim`` give a * sigmoid(b)."""
    _check_floating(input, "glu")
    axis = normalize_dims(dim, input.ndim, "glu")[0]
    size = input.shape[axis]
    if size % 2:
        raise _error(f"glu: halving input: dim {dim} of the input of shape "
                     f"{tuple(input.shape)} has size {size}, which is not even")
    a, b = input.split(size // 2, dim=axis)
    return a * b.sigmoid()
