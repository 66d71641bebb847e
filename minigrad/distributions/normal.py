"""The normal (Gaussian) distribution N(loc, scale²)."""

from __future__ import annotations

import math
from typing import Any

from ..state import rng_for
from ..tensor import Tensor
from .distribution import LocationScale
from .utils import standard_normal


class Normal(LocationScale):
    """``Normal(loc, scale)``: mean ``loc``, standard deviation ``scale`` (> 0).

    - density: log p(x) = -(x - μ)² / (2σ²) - log σ - log √(2π)
    - rsample: x = μ + σ ε with ε ~ N(0, 1), so ∂x/∂μ = 1 and ∂x/∂σ = ε
    - entropy: ½ + ½ log(2π) + log σ;  cdf: ½ (1 + erf((x - μ) / (σ√2)))
    """

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        noise = standard_normal(shape, self.loc.dtype, rng_for(None))
        return self.loc + noise * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        variance = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * variance) - self.scale.log() \
            - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal()
                           / math.sqrt(2)).erf())

    def icdf(self, value: Tensor) -> Tensor:
        """The quantile: μ + σ √2 erfinv(2p - 1)."""
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
