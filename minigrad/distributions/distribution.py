"""``Distribution``: what every probability distribution has, as in PyTorch.

Shapes: ``batch_shape`` is how many independent distributions one object holds (one per
element of its broadcast parameters); ``event_shape`` is the shape of one draw (``()`` for
a number, ``(k,)`` for a vector). ``sample(sample_shape)`` returns
``sample_shape + batch_shape + event_shape``; ``log_prob(value)`` returns
``batch_shape`` (broadcast with value's leading dimensions).

- ``sample`` draws without a gradient (from minigrad's generator: ``mg.manual_seed``).
- ``rsample`` (where ``has_rsample``) draws with the reparameterisation trick, x = g(θ, ε)
  with noise ε drawn apart from θ, so the gradient flows into the parameters θ.
- Arguments are validated by default (``validate_args=False`` or
  ``Distribution.set_default_validate_args(False)`` turns it off): a parameter outside its
  constraint, or a ``log_prob`` value outside the support, raises ValueError.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

from ..state import no_grad
from ..tensor import Tensor
from . import constraints
from .utils import broadcast_all, lazy_property


def _shown(value: Tensor) -> str:
    """A tensor as PyTorch's messages show it: a 0-d one as its number."""
    return str(value.item()) if value.dim() == 0 else str(value)


def _as_shape(shape: Any, who: str) -> tuple:
    """``sample_shape`` as a tuple of ints (a list, tuple or shape of ints is accepted)."""
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in shape):
        raise TypeError(f"{who}: sample_shape must be a tuple of ints, such as (5,) or "
                        f"(2, 3) or () for one draw, got {shape!r}")
    return tuple(int(n) for n in shape)


class Distribution:
    """The base class: subclasses give ``arg_constraints``, ``support``, ``rsample`` or
    ``sample``, ``log_prob``, and what else they can compute."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__  # on, unless Python runs with -O (as in PyTorch)

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution made afterwards."""
        if value not in [True, False]:
            raise ValueError(f"set_default_validate_args: give True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{type(self)} does not define `arg_constraints`. Please set "
                              f"`arg_constraints = {{}}` or initialize the distribution with "
                              f"`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # depends on other parameters: not checked on its own
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # computed from the parameter that was given
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n"
                        f"{_shown(value)}")

    # --- shapes ------------------------------------------------------------------------

    @property
    def batch_shape(self) -> tuple:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        """The shape of a single draw (without batching)."""
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> tuple:
        """``sample_shape + batch_shape + event_shape``: the shape of a sample."""
        return _as_shape(sample_shape, type(self).__name__) + self._batch_shape \
            + self._event_shape

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        raise NotImplementedError

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Distribution:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                f"__init__ method must also define a custom .expand() method.")
        return type(self).__new__(type(self)) if _instance is None else _instance

    def _expanded(self, new: Distribution, batch_shape: tuple,
                  event_shape: tuple = ()) -> Distribution:
        """Finish ``expand``: ``new``'s shapes set, validation as ``self``'s."""
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    # --- what subclasses give ----------------------------------------------------------

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """Each parameter's constraint, by the parameter's name."""
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint:
        """The constraint the values of a draw satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """A draw through which gradients flow into the parameters (reparameterised)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no rsample (has_rsample is False): its draws are "
            f"not a differentiable function of its parameters; use sample(), and for a "
            f"gradient the score function, log_prob(sample) * reward (REINFORCE)")

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement "
                                  f"enumerate_support")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return self.entropy().exp()

    # --- validation of values ----------------------------------------------------------

    def _validate_sample(self, value: Tensor) -> None:
        """``value``'s rightmost dimensions must fit ``batch_shape + event_shape``, and
        its values lie in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_start:]) != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{tuple(value.shape)} vs {self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(value.shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{tuple(value.shape)} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{type(self)} does not define `support` to enable sample "
                          f"validation. Please initialize the distribution with "
                          f"`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{_shown(value)}")

    def __repr__(self) -> str:
        names = [name for name in self.arg_constraints if name in self.__dict__]
        shown = ", ".join(f"{name}: " + (_shown(self.__dict__[name])
                                         if self.__dict__[name].numel() == 1
                                         else str(tuple(self.__dict__[name].shape)))
                          for name in names)
        return f"{type(self).__name__}({shown})"


class LocationScale(Distribution):
    """What Normal, Laplace and Gumbel share: a ``loc`` (real) and a ``scale`` (> 0),
    broadcast against each other, a real support and a reparameterised rsample."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers_only = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if numbers_only else self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    def expand(self, batch_shape: Any, _instance: Any = None) -> LocationScale:
        new = self._get_checked_instance(LocationScale, _instance)
        batch_shape = tuple(batch_shape)
        new.loc, new.scale = self.loc.expand(batch_shape), self.scale.expand(batch_shape)
        return self._expanded(new, batch_shape)
