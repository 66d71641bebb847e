"""``mg.special``: PyTorch's ``torch.special`` namespace.

Most names are other spellings of minigrad functions (``expit`` is ``sigmoid``,
``gammaln`` is ``lgamma``, ``psi`` is ``digamma``); the special functions NumPy lacks are
computed in minigrad/ops/special_functions.py (which says how, and how accurately).
Each takes ``out=`` where PyTorch's does.
"""

from __future__ import annotations

import math
from typing import Any

from .functions_math import _tensor_of, digamma, erfc, erfinv, exp2, i0, polygamma, sinc, xlogy
from .ops.elementwise_more import Xlog1py
from .ops.special_functions import I1, Entr, LogNdtr
from .tensor import Tensor
from .tensor_math import _float_pair, _floating
from .torch_functions import _out, erf, expm1, log1p
from .unsupported import module_getattr

# a torch.special name minigrad lacks (ndtri, zeta, the Bessel and polynomial families, ...)
# says so by its full name
__getattr__ = module_getattr("torch.special")

psi = digamma


def expit(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """1 / (1 + e^-x): the logistic sigmoid."""
    return _out(input.sigmoid(), out, "expit")


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """ln(p / (1 - p)), p clamped to [eps, 1 - eps] when ``eps`` is given."""
    return _out(input.logit(eps), out, "logit")


def gammaln(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """ln |Gamma(x)| (``lgamma``)."""
    return _out(input.lgamma(), out, "gammaln")


def xlog1py(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """input * ln(1 + other), 0 where input = 0; either may be a number (not both)."""
    x = _tensor_of(input, other, "xlog1py")
    return _out(Xlog1py.apply(*_float_pair(x, other)), out, "xlog1py")


def i1(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 1 (i0's derivative)."""
    return _out(I1.apply(_floating(input)), out, "i1")


def entr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """-x ln x for x > 0, 0 at 0, -inf for x < 0 (sum it for the entropy)."""
    return _out(Entr.apply(_floating(input)), out, "entr")


def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Phi(x), the standard normal CDF: erfc(-x / sqrt 2) / 2 (accurate in the lower tail)."""
    return _out(_floating(input).mul(-1 / math.sqrt(2)).erfc() * 0.5, out, "ndtr")


def log_ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """ln Phi(x), accurate also far in the lower tail (where Phi itself underflows)."""
    return _out(LogNdtr.apply(_floating(input)), out, "log_ndtr")


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:  # noqa: A001
    return _out(input.round(decimals), out, "round")


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return input.softmax(dim, dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return input.log_softmax(dim, dtype)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *,
              out: Tensor | None = None) -> Tensor:
    return _out(input.logsumexp(dim, keepdim), out, "logsumexp")


__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln",
           "i0", "i1", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "ndtr",
           "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy"]
