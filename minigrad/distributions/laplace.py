"""The Laplace distribution: a two-sided exponential around loc."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..state import rng_for
from ..tensor import Tensor
from .distribution import LocationScale
from .utils import uniform


class Laplace(LocationScale):
    """``Laplace(loc, scale)``: density e^(-|x - μ|/b) / (2b).

    - log p(x) = -log(2b) - |x - μ| / b;  entropy: 1 + log(2b)
    - rsample: x = μ - b sign(u) log(1 - |u|) with u ~ U(-1, 1)
    """

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = float(np.finfo(self.loc.dtype).eps)
        u = uniform(shape, self.loc.dtype, rng_for(None)) * (2 - eps) + (eps - 1)  # (-1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() \
            * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
