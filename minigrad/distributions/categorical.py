"""The categorical distribution: one of K categories, 0 .. K-1, with given probabilities."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..factories import arange, full
from ..state import rng_for
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits


def check_probs_or_logits(probs: Any, logits: Any, who: str, numbers: bool = False) -> None:
    """Exactly one of them, a Tensor (or, for ``numbers``, a Python number)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, given = ("probs", probs) if probs is not None else ("logits", logits)
    if not isinstance(given, Tensor) and not (numbers and isinstance(given, (int, float))):
        raise TypeError(f"{who}: {name} must be a Tensor, got {type(given).__name__} "
                        f"(make one with mg.tensor(...))")


def draw_categories(probs: Tensor, count: int) -> np.ndarray:
    """``count`` draws of a category for each row of ``probs`` (rows sum to 1):
    shape ``(count,) + probs.shape[:-1]``, by inverting the cumulative probabilities."""
    rows = probs.detach().numpy().astype(np.float64)
    cumulative = rows.cumsum(-1)
    cumulative /= cumulative[..., -1:]  # the last one exactly 1
    uniform = rng_for(None).random((count,) + rows.shape[:-1])
    chosen = (uniform[..., None] >= cumulative).sum(-1)
    return np.minimum(chosen, rows.shape[-1] - 1).astype(np.int64)


class Categorical(Distribution):
    """``Categorical(probs=None, logits=None)``: give one of them, over the last dim.

    ``probs`` are normalised to sum to 1 (p / Σp); ``logits`` are kept normalised too,
    as log-probabilities (logits - logsumexp(logits)), so ``logits.exp()`` is ``probs``.

    - log_prob(k) = logits[k] (the normalised log-probability of category k)
    - entropy: H = -Σ_k p_k log p_k
    - sample: integers (int64) in 0 .. K-1; no rsample (a category is not a
      differentiable function of p: use log_prob(sample) * reward, REINFORCE)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits, type(self).__name__)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1]
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = tuple(batch_shape)
        param_shape = batch_shape + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(param_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(param_shape)
        new._num_events = self._num_events
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> tuple:
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        count = int(np.prod(shape[:len(shape) - len(self._batch_shape)]))
        return Tensor(draw_categories(self.probs, count).reshape(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = np.broadcast_shapes(value.shape, self.logits.shape)
        index = value.expand(shape[:-1] + (1,))
        return self.logits.expand(shape).gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = float(np.finfo(self.logits.dtype).min)
        logits = self.logits.clamp(min=min_real)  # -inf logits (p = 0) add 0, not nan
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
