"""Activation layers: each the module form of a function in ``nn.functional``."""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


class _InPlace(Module):
    """An activation with PyTorch's ``inplace`` flag (the result written into the input)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_InPlace):
    """max(0, x); ``inplace=True`` writes the result into the input (as PyTorch's)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)


class GELU(Module):
    """x * Phi(x), Phi the standard normal CDF (``approximate="tanh"``: its tanh form)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """tanh(x)"""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Sigmoid(Module):
    """1 / (1 + e^-x)"""

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


STACKLEVEL = 5  # an implicit dim's warning names the line that called the module


class _AlongDim(Module):
    """An activation computed along one dim (Softmax, LogSoftmax, Softmin, GLU)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim  # None (Softmax, LogSoftmax, Softmin): PyTorch's deprecated implicit dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    """exp(x_i) / sum_j exp(x_j) along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=STACKLEVEL)


class LogSoftmax(_AlongDim):
    """log(softmax(x)) along ``dim``, computed stably."""

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=STACKLEVEL)


# --- more of PyTorch's activations (issue 11) -------------------------------------------------


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x"""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class ELU(Module):
    """x if x > 0 else alpha * (e^x - 1)"""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """log(1 + e^(beta x)) / beta (x itself where beta x > threshold)"""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class SiLU(_InPlace):
    """x * sigmoid(x)"""

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, self.inplace)


class Mish(_InPlace):
    """x * tanh(softplus(x))"""

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, self.inplace)


class Hardtanh(Module):
    """x clamped into [min_val, max_val]"""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) must not exceed max_val "
                             f"({max_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)"""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class PReLU(Module):
    """max(0, x) + a * min(0, x) with a learned slope ``weight`` (``num_parameters`` of
    them: 1, or one per channel, dim 1), starting at ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        super().__init__()
        from .module import new_parameter

        self.num_parameters = num_parameters
        self.weight = new_parameter(num_parameters, dtype=dtype)
        self.weight._data[...] = init

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


# --- the rest of PyTorch's pointwise activations (nn/functional_activations.py) -------------


class Hardsigmoid(_InPlace):
    """0 below -3, 1 above 3, x / 6 + 1/2 between"""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""  # (PyTorch's repr leaves out inplace here)


class Hardswish(_InPlace):
    """x * hardsigmoid(x)"""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""  # (PyTorch's repr leaves out inplace here)


class SELU(_InPlace):
    """scale * (x if x > 0 else alpha (e^x - 1)), self-normalizing constants"""

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)


class CELU(_InPlace):
    """max(0, x) + min(0, alpha (e^(x / alpha) - 1))"""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Threshold(_InPlace):
    """x where x > threshold, else value"""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.threshold, self.value = threshold, value

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class Softsign(Module):
    """x / (1 + |x|)"""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)"""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class LogSigmoid(Module):
    """log sigmoid(x)"""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softmin(_AlongDim):
    """softmax(-x) along ``dim``"""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=STACKLEVEL)


class GLU(_AlongDim):
    """a * sigmoid(b) for the input's halves a, b along ``dim``"""

    def __init__(self, dim: int = -1) -> None:
        super().__init__(dim)

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)
