"""Exceptions that minigrad raises on purpose."""


class ShapeError(ValueError, RuntimeError):
    """Shapes that do not fit together. A ValueError (as NumPy raises) and a
    RuntimeError (as PyTorch raises), so code written for either catches it."""

    minigrad = True


class CastError(TypeError, RuntimeError):
    """A result whose dtype the tensor it is written into cannot hold (floats into an
    integer tensor by an in-place op): PyTorch's RuntimeError, and a TypeError as before."""

    minigrad = True


class GradcheckError(RuntimeError):
    """Analytic and numerical gradients disagree; the message is a per-input report."""


class DimensionError(ShapeError, IndexError):
    """A ``dim`` that the tensor does not have: also an IndexError, as in PyTorch."""


class OpError(ValueError, RuntimeError):
    """A value an op cannot compute with (integers to a negative power, ...): NumPy's
    ValueError, made a RuntimeError too, as PyTorch raises."""

    minigrad = True
