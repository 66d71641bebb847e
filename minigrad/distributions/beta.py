"""The beta distribution on (0, 1)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..tensor import Tensor, stack
from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution
from .gamma import no_rsample, standard_gamma
from .utils import broadcast_all, lgamma


class Beta(Distribution):
    """``Beta(concentration1, concentration0)``: density x^(a-1) (1-x)^(b-1) / B(a, b)
    with a = concentration1, b = concentration0.

    - log p(x) = (a - 1) log x + (b - 1) log(1 - x) - log B(a, b),
      log B(a, b) = log Γ(a) + log Γ(b) - log Γ(a + b)
    - entropy: log B(a, b) - (a - 1) ψ(a) - (b - 1) ψ(b) + (a + b - 2) ψ(a + b)
    - sample only (X/(X + Y) for gamma draws X, Y); rsample is refused
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = False

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        numbers_only = isinstance(concentration1, numbers.Number) \
            and isinstance(concentration0, numbers.Number)
        super().__init__(() if numbers_only else self.concentration1.shape,
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        """The Dirichlet's mode of (a, b), as PyTorch takes it: (a - 1)/(a + b - 2) with
        a - 1 and b - 1 clamped at 0, so it stays in [0, 1] (a corner where a, b < 1)."""
        pair = Dirichlet(stack([self.concentration1, self.concentration0], -1),
                         validate_args=False)
        return pair.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise no_rsample("Beta")

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration1.detach().expand(shape))
        y = standard_gamma(self.concentration0.detach().expand(shape))
        eps = np.finfo(x.dtype).eps
        return Tensor(np.clip(x / (x + y), eps, 1 - eps).astype(x.dtype))

    def _log_beta(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return lgamma(a) + lgamma(b) - lgamma(a + b)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (a - 1).xlogy(value) + (b - 1).xlogy(1 - value) - self._log_beta()

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return self._log_beta() - (a - 1) * a.digamma() - (b - 1) * b.digamma() \
            + (a + b - 2) * (a + b).digamma()
