"""The multivariate normal distribution N(loc, Σ) on vectors, Σ = L Lᵀ."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..linalg import cholesky as linalg_cholesky
from ..linalg import inv, solve
from ..state import rng_for
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, standard_normal


def cholesky(matrix: Tensor, who: str = "MultivariateNormal") -> Tensor:
    """The lower-triangular L with L Lᵀ = ``matrix`` (symmetric positive-definite):
    ``mg.linalg.cholesky``, whose gradient is symmetric as PyTorch's (a gradient step keeps
    a covariance matrix symmetric)."""
    try:
        return linalg_cholesky(matrix)
    except np.linalg.LinAlgError as error:
        raise ValueError(f"{who}: cholesky: the factorization could not be completed because "
                         f"the input is not positive-definite ({error})") from None


def _batch_mahalanobis(scale_tril: Tensor, difference: Tensor) -> Tensor:
    """‖L⁻¹ d‖², the squared Mahalanobis distance of d for Σ = L Lᵀ, batched."""
    shape = np.broadcast_shapes(scale_tril.shape[:-2], difference.shape[:-1])
    n = difference.shape[-1]
    solved = solve(scale_tril.expand(shape + (n, n)),
                   difference.expand(shape + (n,)).unsqueeze(-1))
    return solved.squeeze(-1).pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None,
    scale_tril=None)``: give one of Σ, Σ⁻¹ or the Cholesky factor L (Σ = L Lᵀ).

    - log p(x) = -½ (k log 2π + ‖L⁻¹(x - μ)‖²) - Σ_i log L_ii
    - rsample: x = μ + L ε with ε ~ N(0, I_k)
    - entropy: ½ k (1 + log 2π) + Σ_i log L_ii
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        matrix = given[0]
        if matrix.dim() < 2:
            name = ("covariance_matrix" if covariance_matrix is not None else
                    "precision_matrix" if precision_matrix is not None else "scale_tril")
            raise ValueError(f"{name} matrix must be at least two-dimensional, with "
                             f"optional leading batch dimensions")
        if matrix.shape[-1] != loc.shape[-1] or matrix.shape[-2] != loc.shape[-1]:
            raise ValueError(f"MultivariateNormal: the matrix's shape {matrix.shape} does not "
                             f"fit loc's event size {loc.shape[-1]} (expected (..., "
                             f"{loc.shape[-1]}, {loc.shape[-1]}))")
        batch_shape = np.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        k = loc.shape[-1]
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(batch_shape + (k, k))
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (k, k))
        else:
            self.precision_matrix = precision_matrix.expand(batch_shape + (k, k))
        self.loc = loc.expand(batch_shape + (k,))
        super().__init__(batch_shape, (k,), validate_args=validate_args)
        if scale_tril is not None:  # its lower triangle (as PyTorch's triangular solves
            # read it): no gradient reaches the zeros above the diagonal
            self._unbroadcasted_scale_tril = scale_tril.tril()
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = cholesky(inv(precision_matrix))

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        k = self.event_shape[0]
        new.loc = self.loc.expand(batch_shape + (k,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape + (k, k)))
        return self._expanded(new, batch_shape, self.event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        k = self.event_shape[0]
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + (k, k))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        k = self.event_shape[0]
        return (tril @ tril.transpose(-2, -1)).expand(self._batch_shape + (k, k))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return inv(self.covariance_matrix)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        variance = self._unbroadcasted_scale_tril.pow(2).sum(-1)
        return variance.expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        noise = standard_normal(shape, self.loc.dtype, rng_for(None))
        return self.loc + (self._unbroadcasted_scale_tril @ noise.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        k = self.event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + mahalanobis) - self._half_log_det()

    def entropy(self) -> Tensor:
        k = self.event_shape[0]
        entropy = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return entropy.expand(self._batch_shape)
