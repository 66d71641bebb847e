"""Helpers the distributions share: parameters as tensors of one shape, probabilities from
logits and back, parameters computed once when first asked for, and random draws."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..state import state
from ..tensor import Tensor


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """The values as tensors of one broadcast shape. Numbers become tensors of the first
    tensor's dtype (the default dtype if all are numbers), as in PyTorch."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        kinds = ", ".join(type(v).__name__ for v in values)
        raise ValueError(f"Input arguments must all be instances of Number or Tensor, got "
                         f"{kinds} (make a tensor with mg.tensor(...))")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else state.default_dtype
    values = [v if isinstance(v, Tensor) else Tensor(v, dtype=dtype) for v in values]
    try:
        shape = np.broadcast_shapes(*(v.shape for v in values))
    except ValueError:
        shapes = " and ".join(str(v.shape) for v in values)
        raise ValueError(f"the parameters' shapes {shapes} do not broadcast") from None
    return tuple(v if v.shape == shape else v.expand(shape) for v in values)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` kept inside [eps, 1 - eps] (eps of its dtype), so that log p is finite."""
    eps = float(np.finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid(logits) for one event's log-odds, softmax over the last dim otherwise."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log(p) - log(1 - p) (log-odds) for one event, log(p) otherwise (p clamped first)."""
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


class lazy_property:  # noqa: N801 - PyTorch's name
    """A parameter computed from another the first time it is read, then stored on the
    instance (Categorical made with logits computes probs only if asked)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value  # later reads find it here
        return value


class BinaryParameter:
    """For a distribution of one success probability, given as ``probs`` or ``logits``
    (``self._param``, whichever was given): the other computed when first read, the
    parameter's shape, and both carried over by ``expand``."""

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple:
        return self._param.shape

    def _expand_parameter(self, new: Any, batch_shape: tuple) -> None:
        """``new`` (an ``expand`` of self) gets the given parameter, expanded, and the
        other one too if it was computed already."""
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(batch_shape)


def standard_normal(shape: tuple, dtype: Any, rng: np.random.Generator) -> Tensor:
    """N(0, 1) noise of ``shape`` and ``dtype`` from ``rng`` (no gradient)."""
    return Tensor(rng.standard_normal(shape, dtype=_draw_dtype(dtype)).astype(dtype))


def uniform(shape: tuple, dtype: Any, rng: np.random.Generator) -> Tensor:
    """U[0, 1) noise of ``shape`` and ``dtype`` from ``rng`` (no gradient)."""
    return Tensor(rng.random(shape, dtype=_draw_dtype(dtype)).astype(dtype))


def _draw_dtype(dtype: Any) -> np.dtype:
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def lgamma(x: Tensor) -> Tensor:
    """log Γ(x), also of a 0-d tensor (taken through shape (1,): ``Tensor.lgamma`` fails on
    a 0-d tensor, its NumPy kernel returning a Python float there)."""
    return x.reshape(1).lgamma().reshape(()) if x.dim() == 0 else x.lgamma()
