"""``MixtureSameFamily``: a mixture of K distributions of one family (a Gaussian mixture)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    """``MixtureSameFamily(mixture_distribution, component_distribution)``: pick a
    component k ~ ``mixture_distribution`` (a Categorical over K), then draw from
    component k; the components are the last batch dimension (size K) of
    ``component_distribution``.

    - log p(x) = logsumexp_k (log π_k + log p_k(x))
    - mean: Σ π_k μ_k;  variance: Σ π_k σ_k² + Σ π_k (μ_k - mean)²
    - sample only (the choice of k has no gradient)
    """

    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical,
                 component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mixture_batch = mixture_distribution.batch_shape
        component_batch = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mixture_batch), reversed(component_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is "
                                 f"not compatible with `component_distribution.batch_shape`"
                                 f"({component_batch})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch, component_distribution.event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MixtureSameFamily:
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        batch_shape = tuple(batch_shape)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        return self._expanded(new, batch_shape, new._component_distribution.event_shape)

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad(self, x: Tensor) -> Tensor:
        """x with a component dimension before its event dimensions."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        batch_ndims = len(self.batch_shape)
        mixture_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad = 0 if mixture_batch_ndims == 1 else batch_ndims - mixture_batch_ndims
        return x.reshape(x.shape[:-1] + (1,) * pad + x.shape[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_of_variances = (probs * self.component_distribution.variance).sum(dim)
        variance_of_means = (probs * (self.component_distribution.mean
                                      - self._pad(self.mean)).pow(2.0)).sum(dim)
        return mean_of_variances + variance_of_means

    def cdf(self, x: Tensor) -> Tensor:
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))  # (S, B, K)
        log_mix_prob = self.mixture_distribution.logits.log_softmax(-1)  # (B, K)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        sample_shape = tuple(sample_shape)
        gather_dim = len(sample_shape) + len(self.batch_shape)
        event_shape = self.event_shape
        chosen = self.mixture_distribution.sample(sample_shape)  # (S, B)
        draws = self.component_distribution.sample(sample_shape)  # (S, B, K, E)
        index = chosen.reshape(chosen.shape + (1,) * (len(event_shape) + 1))
        index = index.expand(chosen.shape + (1,) + event_shape)
        return draws.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  " \
               f"{self.component_distribution})"
