"""``minigrad.nn.init``: fill a weight in place with a good starting distribution.

Same names and formulas as ``torch.nn.init``. All of them draw from minigrad's global
generator (so ``mg.manual_seed`` fixes them) and run without recording history.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..state import no_grad, rng_for
from ..tensor import Tensor

_GAINS = {"linear": 1.0, "identity": 1.0, "conv1d": 1.0, "conv2d": 1.0, "sigmoid": 1.0,
          "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps activations' variance steady through ``nonlinearity``."""
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity not in _GAINS:
        raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}; "
                         f"known: {sorted(_GAINS) + ['leaky_relu']}")
    return _GAINS[nonlinearity]


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """fan_in = inputs per output unit, fan_out = outputs per input unit: for a weight
    (out, in, *kernel) both are multiplied by the kernel's size."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in and fan out need a tensor with at least 2 dimensions, got "
                         f"shape {tuple(tensor.shape)}")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    with no_grad():
        return tensor.normal_(mean, std)


def constant_(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al., 2015)."""
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan)."""
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)))

__all__ = ["calculate_gain", "constant_", "kaiming_normal_", "kaiming_uniform_", "normal_",
           "ones_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_"]


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain``, as PyTorch makes it: the Q of the QR
    decomposition of a standard normal (rows, rest) matrix, its signs fixed by R's
    diagonal. Tensors of more dimensions are flattened after the first."""
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are "
                         f"supported, got shape {tuple(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    columns = tensor.numel() // rows
    flat = rng_for(generator, "orthogonal_").standard_normal((rows, columns))
    if rows < columns:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < columns:
        q = q.T
    with no_grad():
        return tensor.copy_(Tensor(q.reshape(tensor.shape) * gain, dtype=tensor.dtype))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """N(mean, std^2) truncated to [a, b] (the bounds are values, not numbers of stds), as
    PyTorch draws it: u uniform between the normal CDF's values at a and b, then the
    inverse CDF, mean + std sqrt(2) erfinv(2u - 1), clamped to [a, b]. Used by ViT code
    (std=0.02)."""
    from ..ops.special_functions import erfinv

    if not a < b:
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")
    if mean < a - 2 * std or mean > b + 2 * std:  # (PyTorch's warning)
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    low, high = ((1 + math.erf((bound - mean) / (std * math.sqrt(2)))) / 2
                 for bound in (a, b))
    rng = rng_for(generator, "trunc_normal_")
    u = rng.uniform(2 * low - 1, 2 * high - 1, tensor.shape)
    values = np.clip(mean + std * math.sqrt(2) * erfinv(u), a, b)
    with no_grad():
        return tensor.copy_(Tensor(values, dtype=tensor.dtype))


def _deprecated(function):
    """PyTorch's old init names without the underscore: a FutureWarning, then the new one."""
    old_name = function.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{function.__name__}`.", FutureWarning, stacklevel=2)
        return function(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"Deprecated: use ``{function.__name__}``."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
