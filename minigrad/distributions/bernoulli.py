"""The Bernoulli distribution: 1 with probability p, 0 otherwise."""

from __future__ import annotations

import numbers
from typing import Any

from ..nn.functional import binary_cross_entropy_with_logits
from ..state import rng_for
from ..tensor import Tensor
from . import constraints
from .categorical import check_probs_or_logits
from .distribution import Distribution
from .utils import BinaryParameter, broadcast_all, uniform


class Bernoulli(BinaryParameter, Distribution):
    """``Bernoulli(probs=None, logits=None)``: P(1) = probs = sigmoid(logits).

    - log_prob(x) = x log p + (1 - x) log(1 - p) = -BCE-with-logits(logits, x)
    - entropy: -p log p - (1 - p) log(1 - p)
    - sample: 0. and 1. in the parameters' dtype; no rsample
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits, type(self).__name__, numbers=True)
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = () if isinstance(given, numbers.Number) else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = tuple(batch_shape)
        self._expand_parameter(new, batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))  # both are modes

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach().expand(shape)
        return (uniform(shape, probs.dtype, rng_for(None)) < probs).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value.to(logits.dtype),
                                                 reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = Tensor([0.0, 1.0], dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
