"""``kl_divergence(p, q)``: KL(p ‖ q) = E_p[log p(x) - log q(x)], in closed form for the
pairs registered with ``@register_kl(TypeP, TypeQ)``; batched over ``batch_shape``.

Every formula is made of Tensor operations, so its gradient (and the gradient of that)
with respect to both distributions' parameters comes from autograd.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..linalg import solve
from ..nn.functional import softplus
from ..tensor import Tensor, where
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import EULER_GAMMA, Gumbel
from .independent import Independent, sum_rightmost
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform
from .utils import lgamma

_KL_REGISTRY: dict[tuple[type, type], Callable] = {}


def register_kl(type_p: type, type_q: type) -> Callable:
    """Decorator: ``@register_kl(Normal, Normal)`` over ``def kl(p, q)`` makes
    ``kl_divergence`` use it for those types (and their subclasses; the most specific
    registered pair wins)."""
    for name, given in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(given, type) and issubclass(given, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {given}")

    def decorator(function: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = function
        return function

    return decorator


def _dispatch(type_p: type, type_q: type) -> Callable | None:
    """The registered function for the closest pair of (super)classes, or None."""
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return None
    distance = lambda pair: (type_p.__mro__.index(pair[0]), type_q.__mro__.index(pair[1]))  # noqa: E731
    return _KL_REGISTRY[min(matches, key=distance)]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p ‖ q), of shape ``batch_shape``. NotImplementedError for unregistered pairs."""
    function = _dispatch(type(p), type(q))
    if function is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return function(p, q)


def _infinite_where(condition: Tensor, value: Tensor) -> Tensor:
    return where(condition, Tensor(math.inf, dtype=value.dtype), value)


def _zero_where(condition: Tensor, value: Tensor) -> Tensor:
    return where(condition, Tensor(0.0, dtype=value.dtype), value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    """½ (σp²/σq² + (μp - μq)²/σq² - 1 - log(σp²/σq²))."""
    variance_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (variance_ratio + t1 - 1 - variance_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    """Σ_k p_k (log p_k - log q_k): ∞ where q_k = 0 < p_k, and 0 log 0 = 0."""
    t = p.probs * (p.logits - q.logits)
    t = _infinite_where((q.probs == 0).expand(t.shape), t)
    t = _zero_where((p.probs == 0).expand(t.shape), t)
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    """p log(p/q) + (1 - p) log((1 - p)/(1 - q)), written with softplus of the logits."""
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _infinite_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _infinite_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    """log((bq - aq) / (bp - ap)), ∞ where p's interval is not inside q's."""
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Tensor:
    """log(√(2π) σ / (b - a)) + ((b - a)²/12 + ((a + b)/2 - μ)²) / (2σ²)."""
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: OneHotCategorical,
                                            q: OneHotCategorical) -> Tensor:
    """The Categorical KL of the categories."""
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    """The bases' KL summed over the reinterpreted dimensions."""
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for Independent distributions with different "
            f"reinterpreted_batch_ndims ({p.reinterpreted_batch_ndims} and "
            f"{q.reinterpreted_batch_ndims})")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p: MultivariateNormal,
                                              q: MultivariateNormal) -> Tensor:
    """Σ log Lq_ii - Σ log Lp_ii + ½ (‖Lq⁻¹ Lp‖²_F + ‖Lq⁻¹(μq - μp)‖² - k)."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    half_term1 = q._half_log_det() - p._half_log_det()
    k = p.event_shape[0]
    shape = np.broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                                p._unbroadcasted_scale_tril.shape[:-2])
    solved = solve(q._unbroadcasted_scale_tril.expand(shape + (k, k)),
                   p._unbroadcasted_scale_tril.expand(shape + (k, k)))
    term2 = solved.pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - k)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    """λq/λp - 1 - log(λq/λp)."""
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    """-log(bp/bq) + |μp - μq|/bq + (bp/bq) e^(-|μp - μq|/bp) - 1."""
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale \
        + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    """αq log(βp/βq) + log Γ(αq) - log Γ(αp) + (αp - αq) ψ(αp) + (βq - βp) αp/βp."""
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    """log B(aq, bq) - log B(ap, bp) + (ap - aq) ψ(ap) + (bp - bq) ψ(bp)
    + (aq + bq - ap - bp) ψ(ap + bp)."""
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sum_p)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    t5 = (sum_q - sum_p) * sum_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    """log Γ(αp₀) - log Γ(αq₀) - Σ (log Γ(αp) - log Γ(αq)) + Σ (αp - αq)(ψ(αp) - ψ(αp₀))."""
    sum_p, sum_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    """λp (log λp - log λq) - (λp - λq)."""
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    """-log(βp/βq) - (μq - μp)/βq + (βp/βq) γ + e^((μq - μp)/βq) Γ(1 + βp/βq) - 1 - γ."""
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * EULER_GAMMA
    t3 = (ct2 + lgamma(1 + ct1) - ct3).exp()
    return t1 + t2 + t3 - (1 + EULER_GAMMA)
