"""The Dirichlet distribution on the probability simplex."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..nn.functional import one_hot
from ..tensor import Tensor, where
from . import constraints
from .distribution import Distribution
from .utils import lgamma
from .gamma import no_rsample, standard_gamma


class Dirichlet(Distribution):
    """``Dirichlet(concentration)``: vectors x ≥ 0 with Σx = 1 (event_shape (K,)),
    density Γ(α₀) / Π Γ(α_k) · Π x_k^(α_k - 1), α₀ = Σ α_k.

    - log p(x) = Σ (α_k - 1) log x_k + log Γ(α₀) - Σ log Γ(α_k)
    - entropy: Σ log Γ(α_k) - log Γ(α₀) - (K - α₀) ψ(α₀) - Σ (α_k - 1) ψ(α_k)
    - sample only (gamma draws, normalised); rsample is refused
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = False

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        return self._expanded(new, batch_shape, self.event_shape)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        """(α - 1)⁺ normalised; where every α < 1, a corner (one-hot at the largest)."""
        excess = (self.concentration - 1).clamp(min=0.0)
        mode = excess / excess.sum(-1, keepdim=True)
        corner = one_hot(mode.argmax(-1), excess.shape[-1]).to(mode.dtype)
        all_below_one = (self.concentration < 1).all(-1, keepdim=True)
        return where(all_below_one, corner, mode)

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) \
            / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise no_rsample("Dirichlet")

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        draws = standard_gamma(self.concentration.detach().expand(shape))
        tiny = np.finfo(draws.dtype).tiny
        return Tensor(np.clip(draws / draws.sum(-1, keepdims=True), tiny, 1 - tiny)
                      .astype(draws.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        alpha = self.concentration
        return (alpha - 1).xlogy(value).sum(-1) + lgamma(alpha.sum(-1)) \
            - lgamma(alpha).sum(-1)

    def entropy(self) -> Tensor:
        alpha = self.concentration
        k = alpha.shape[-1]
        total = alpha.sum(-1)
        return lgamma(alpha).sum(-1) - lgamma(total) - (k - total) * total.digamma() \
            - ((alpha - 1.0) * alpha.digamma()).sum(-1)
