"""The gamma distribution (and the refusal of its rsample)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..state import rng_for
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lgamma


def no_rsample(name: str) -> NotImplementedError:
    """Why ``name`` (drawn through gamma variables) has no rsample here."""
    return NotImplementedError(
        f"{name}.rsample is not supported by minigrad: a gamma draw is not a simple "
        f"function of its parameters, and its gradient needs implicit reparameterisation "
        f"(the derivative of the incomplete gamma function), which minigrad does not have. "
        f"Use sample() (no gradient) with the score function, log_prob(x) * signal, or a "
        f"distribution that has rsample (Normal, Laplace, Exponential, Uniform)")


def standard_gamma(concentration: Tensor) -> np.ndarray:
    """Gamma(α, 1) draws, one per element of ``concentration`` (NumPy's, of its dtype),
    kept above the dtype's smallest positive number (as PyTorch does)."""
    alpha = concentration.detach().numpy()
    draws = rng_for(None).standard_gamma(alpha.astype(np.float64)).astype(alpha.dtype)
    return np.maximum(draws, np.finfo(alpha.dtype).tiny)


class Gamma(Distribution):
    """``Gamma(concentration, rate)``: density β^α x^(α-1) e^(-βx) / Γ(α), x > 0.

    - log p(x) = α log β + (α - 1) log x - βx - log Γ(α)
    - entropy: α - log β + log Γ(α) + (1 - α) ψ(α)
    - sample only: rsample is refused (``has_rsample`` is False here; PyTorch has it)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        numbers_only = isinstance(concentration, numbers.Number) \
            and isinstance(rate, numbers.Number)
        super().__init__(() if numbers_only else self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise no_rsample("Gamma")

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        draws = standard_gamma(self.concentration.detach().expand(shape))
        return (Tensor(draws) / self.rate.detach()).clamp(min=float(np.finfo(draws.dtype).tiny))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        alpha, beta = self.concentration, self.rate
        return alpha.xlogy(beta) + (alpha - 1).xlogy(value) - beta * value - lgamma(alpha)

    def entropy(self) -> Tensor:
        alpha = self.concentration
        return alpha - self.rate.log() + lgamma(alpha) + (1.0 - alpha) * alpha.digamma()
