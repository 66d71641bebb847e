"""The continuous Bernoulli distribution on [0, 1] (for pixel intensities in VAEs)."""

from __future__ import annotations

import math
import numbers
from typing import Any

from ..factories import ones_like, zeros_like
from ..nn.functional import binary_cross_entropy_with_logits
from ..state import rng_for
from ..tensor import Tensor, where
from . import constraints
from .categorical import check_probs_or_logits
from .distribution import Distribution
from .utils import (BinaryParameter, broadcast_all, clamp_probs, lazy_property,
                    logits_to_probs, uniform)


class ContinuousBernoulli(BinaryParameter, Distribution):
    """``ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501))``: density
    C(λ) λ^x (1 - λ)^(1-x) on [0, 1], with the normaliser
    C(λ) = 2 artanh(1 - 2λ) / (1 - 2λ) (2 near λ = ½, where a Taylor series replaces it
    between ``lims``).

    - log p(x) = -BCE-with-logits(logits, x) + log C(λ)
    - rsample: the inverse cdf at u ~ U[0, 1)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits, type(self).__name__, numbers=True)
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        batch_shape = () if isinstance(given, numbers.Number) else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = tuple(batch_shape)
        self._expand_parameter(new, batch_shape)
        return self._expanded(new, batch_shape)

    @lazy_property
    def probs(self) -> Tensor:  # (clamped, as PyTorch's)
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        """λ, moved out of the unstable region around ½ (where the Taylor series is used)."""
        return where(self._outside_unstable_region(), self.probs,
                     self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        """log C(λ)."""
        cut = self._cut_probs()
        below_half = where(cut <= 0.5, cut, zeros_like(cut))
        above_half = where(cut >= 0.5, cut, ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - where(
            cut <= 0.5, (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) \
            + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(uniform(shape, self.probs.dtype, rng_for(None)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") \
            + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, zeros_like(value),
                     where(value >= 1.0, ones_like(value), unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        return where(self._outside_unstable_region(),
                     ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                     / (cut.log() - (-cut).log1p()),
                     value)

    def entropy(self) -> Tensor:
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0
