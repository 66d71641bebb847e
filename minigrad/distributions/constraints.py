"""``torch.distributions.constraints``: the sets that parameters and samples live in.

A constraint's ``check(value)`` is a bool tensor, True where ``value`` is in the set (over
the last ``event_dim`` dimensions together: a probability vector is one element of the
simplex). Distributions list them in ``arg_constraints`` (checked when one is made) and
``support`` (checked by ``log_prob``), and print them in their error messages.

    constraints.positive.check(mg.tensor([1.0, -1.0]))   # tensor([ True, False])
"""

from __future__ import annotations

from typing import Any

from ..state import no_grad
from ..tensor import Tensor


def _format(bound: Any) -> str:
    """A bound as PyTorch prints it: a one-number tensor as its number."""
    if isinstance(bound, Tensor) and bound.dim() == 0:
        return str(bound.item())
    return str(bound)


class Constraint:
    """A set of values. ``is_discrete``: are its values integers? ``event_dim``: how many
    rightmost dimensions make up one value."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class Dependent(Constraint):
    """A set that depends on other parameters (Uniform's ``low`` < ``high``): not checked
    on its own. ``dependent(is_discrete=..., event_dim=...)`` makes one that knows them."""

    def __init__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> Dependent:
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Is ``constraint`` one that depends on other parameters (and so is not checked)?"""
    return isinstance(constraint, Dependent)


class dependent_property(property, Dependent):  # noqa: N801 - PyTorch's name
    """A property whose value is a constraint built from the distribution's parameters
    (``support`` of Uniform is ``interval(low, high)``); on the class it is a Dependent."""

    def __init__(self, fn: Any = None, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        self._is_discrete, self._event_dim = is_discrete, event_dim

    def __call__(self, fn: Any) -> dependent_property:  # used as a decorator with arguments
        return dependent_property(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class IndependentConstraint(Constraint):
    """``base_constraint`` on each element, the last ``reinterpreted_batch_ndims``
    dimensions taken together (all of them must hold)."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, " \
               f"{self.reinterpreted_batch_ndims})"


# --- one number at a time --------------------------------------------------------------------

class Real(Constraint):
    """Every real number (NaN is not one)."""

    def check(self, value: Tensor) -> Tensor:
        return value == value


class Boolean(Constraint):
    """0 or 1."""

    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class GreaterThan(Constraint):
    """``lower_bound < value``."""

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return value > self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={_format(self.lower_bound)})"


class GreaterThanEq(Constraint):
    """``lower_bound <= value``."""

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return value >= self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={_format(self.lower_bound)})"


class LessThan(Constraint):
    """``value < upper_bound``."""

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={_format(self.upper_bound)})"


class Interval(Constraint):
    """``lower_bound <= value <= upper_bound``."""

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lower_bound={_format(self.lower_bound)}, " \
               f"upper_bound={_format(self.upper_bound)})"


class HalfOpenInterval(Interval):
    """``lower_bound <= value < upper_bound``."""

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value < self.upper_bound)


class IntegerInterval(Interval):
    """The integers from ``lower_bound`` to ``upper_bound``, both included."""

    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == value.floor()) & super().check(value)


class IntegerGreaterThan(GreaterThanEq):
    """The integers from ``lower_bound`` on (``nonnegative_integer`` starts at 0)."""

    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == value.floor()) & super().check(value)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={_format(self.lower_bound)})"


# --- vectors and matrices --------------------------------------------------------------------

class Simplex(Constraint):
    """Vectors of nonnegative numbers that sum to 1 (along the last dimension)."""

    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        with no_grad():
            return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class OneHot(Constraint):
    """Vectors of 0s with a single 1."""

    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        with no_grad():
            return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal (the Cholesky factors)."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        with no_grad():
            lower = (value.tril() == value).all(-1).all(-1)
            return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class PositiveDefinite(Constraint):
    """Symmetric matrices whose eigenvalues are all positive."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        from ..linalg import eigvalsh

        with no_grad():
            symmetric = ((value - value.transpose(-2, -1)).abs() <= 1e-6).all(-1).all(-1)
            if not bool(symmetric.all()):
                return symmetric
            return (eigvalsh(value) > 0).all(-1)


class Multinomial(Constraint):
    """Vectors of nonnegative counts that sum to at most ``upper_bound``."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        with no_grad():
            return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class MixtureSameFamilyConstraint(Constraint):
    """The support of a mixture: the components' support, checked once per value."""

    def __init__(self, base_constraint: Constraint) -> None:
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got "
                             f"{value.dim()}")
        kept = value.dim() - self.event_dim
        return result.reshape(result.shape[:kept] + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


# PyTorch's names for the constraints (the distributions use these)
dependent = Dependent()
boolean = Boolean()
one_hot = OneHot()
real = Real()
real_vector = IndependentConstraint(real, 1)
positive = GreaterThan(0.0)
nonnegative = GreaterThanEq(0.0)
unit_interval = Interval(0.0, 1.0)
nonnegative_integer = IntegerGreaterThan(0)
positive_integer = IntegerGreaterThan(1)
simplex = Simplex()
lower_cholesky = LowerCholesky()
positive_definite = PositiveDefinite()
independent = IndependentConstraint
greater_than = GreaterThan
greater_than_eq = GreaterThanEq
less_than = LessThan
interval = Interval
half_open_interval = HalfOpenInterval
integer_interval = IntegerInterval
multinomial = Multinomial

__all__ = ["Constraint", "MixtureSameFamilyConstraint", "boolean", "dependent",
           "dependent_property", "greater_than", "greater_than_eq", "half_open_interval",
           "independent", "integer_interval", "interval", "is_dependent", "less_than",
           "lower_cholesky", "multinomial", "nonnegative", "nonnegative_integer", "one_hot",
           "positive", "positive_definite", "positive_integer", "real", "real_vector",
           "simplex", "unit_interval"]
