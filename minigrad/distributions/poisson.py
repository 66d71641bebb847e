"""The Poisson distribution: counts of events at a rate."""

from __future__ import annotations

import numbers
from typing import Any

from ..state import rng_for
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lgamma


class Poisson(Distribution):
    """``Poisson(rate)``: P(k) = λ^k e^(-λ) / k! for k = 0, 1, 2, ...

    - log P(k) = k log λ - λ - log Γ(k + 1);  mean = variance = λ
    - sample: counts in the rate's dtype; no rsample
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, numbers.Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = tuple(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        rate = self.rate.detach().expand(shape).numpy()
        return Tensor(rng_for(None).poisson(rate).astype(rate.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - lgamma(value + 1)
