"""The binomial distribution: successes in total_count independent trials."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..factories import arange
from ..state import rng_for
from ..tensor import Tensor
from . import constraints
from .categorical import check_probs_or_logits
from .distribution import Distribution
from .utils import BinaryParameter, broadcast_all, lgamma


def _clamp_by_zero(x: Tensor) -> Tensor:
    """max(x, 0) whose gradient at 0 is ½ (as PyTorch writes it)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryParameter, Distribution):
    """``Binomial(total_count=1, probs=None, logits=None)``: P(k) = C(n, k) p^k (1-p)^(n-k).

    - log P(k) = log n! - log k! - log (n-k)! + k·logits - n log(1 + e^logits)
    - entropy (one total_count for the whole batch): -Σ_k P(k) log P(k)
    - sample: counts in the parameters' dtype; no rsample
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits, type(self).__name__, numbers=True)
        given = probs if probs is not None else logits
        count, parameter = broadcast_all(total_count, given)
        self.total_count = count.to(parameter.dtype)
        if probs is not None:
            self.probs = self._param = parameter
        else:
            self.logits = self._param = parameter
        batch_shape = () if isinstance(given, numbers.Number) else parameter.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = tuple(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_parameter(new, batch_shape)
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach().expand(shape).numpy()
        counts = self.total_count.detach().expand(shape).numpy().astype(np.int64)
        return Tensor(rng_for(None).binomial(counts, probs).astype(probs.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = lgamma(n + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_n_minus_k = lgamma(n - value + 1)
        # n log(1 + e^logits), written to stay finite for large |logits|
        normalizer = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p() \
            - log_factorial_n
        return value * logits - log_factorial_k - log_factorial_n_minus_k - normalizer

    def entropy(self) -> Tensor:
        total_count = int(self.total_count.max().item())
        if not self.total_count.min().item() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total_count = int(self.total_count.max().item())
        if not self.total_count.min().item() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by "
                                      "`enumerate_support`.")
        values = arange(1 + total_count, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
