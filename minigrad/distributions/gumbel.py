"""The Gumbel distribution: the law of the maximum of many draws."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..state import rng_for
from ..tensor import Tensor
from .distribution import LocationScale
from .utils import uniform

EULER_GAMMA = 0.57721566490153286060


class Gumbel(LocationScale):
    """``Gumbel(loc, scale)``: cdf F(x) = exp(-exp(-(x - μ)/β)).

    - log p(x) = y - e^y - log β with y = (μ - x)/β
    - rsample: x = μ - β log(-log u), u ~ U(0, 1)  (the Gumbel-max trick's noise)
    - entropy: log β + 1 + γ (γ Euler's constant); mean μ + βγ, variance π²β²/6
    """

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * EULER_GAMMA

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        finfo = np.finfo(self.loc.dtype)
        u = uniform(shape, self.loc.dtype, rng_for(None)).clamp(min=float(finfo.tiny),
                                                                 max=float(1 - finfo.eps))
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + EULER_GAMMA)
