"""``torch.distributions``: probability distributions to sample from and score with.

    import minigrad.distributions as D
    policy = D.Categorical(logits=scores)         # REINFORCE
    action = policy.sample()
    loss = -(policy.log_prob(action) * reward).sum()

    z = D.Normal(mu, std).rsample()               # VAE: the gradient flows into mu, std
    kl = D.kl_divergence(D.Normal(mu, std), D.Normal(0.0, 1.0)).sum()

Every distribution is written with Tensor operations, so ``log_prob``, ``entropy``,
``kl_divergence`` and ``rsample`` are differentiable (twice) in the parameters. Draws come
from minigrad's generator: ``mg.manual_seed`` makes them repeat (they are NumPy's numbers,
not PyTorch's).
"""

from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "Gamma", "Gumbel", "Independent", "Laplace",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "Normal",
           "OneHotCategorical", "Poisson", "Uniform", "constraints", "kl_divergence",
           "register_kl"]
