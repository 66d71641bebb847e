"""Error messages that speak to a student: which op, which input, which shapes, what to try.

``explain`` turns a NumPy error raised inside a Function into one that names the op and
describes its inputs; ``check_finite`` is anomaly mode's NaN/Inf check. Errors made here
carry ``error.minigrad = True``, so an outer layer re-raises them instead of wrapping
them again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tensor_class
from .errors import OpError, ShapeError


def describe_args(args: tuple) -> str:
    """``'input 0 'x': shape (2, 3), float32; input 1: float 2.0'``."""
    parts = []
    for i, a in enumerate(args):
        if a is None:
            parts.append(f"input {i}: (freed by an earlier backward)")
        elif isinstance(a, (np.ndarray, np.generic)):
            parts.append(f"input {i}: array of shape {a.shape}, {a.dtype}")
        elif isinstance(a, tensor_class.Tensor):
            name = f" '{a.label}'" if a.label else ""
            parts.append(f"input {i}{name}: shape {tuple(a.shape)}, {a.dtype}")
        else:
            parts.append(f"input {i}: {type(a).__name__} {a!r:.40}")
    return "; ".join(parts)


# the words of NumPy's ValueErrors about shapes (others, like "Integers to negative integer
# powers are not allowed", are about values: an OpError, without a broadcasting hint)
SHAPE_WORDS = ("shape", "broadcast", "dimension", "axis", "axes", "size", "operands",
               "aligned", "mismatch", "reshape", "split", "concatenat", "stack")


def explain(function: type, error: Exception, args: tuple) -> Exception:
    """The error to raise instead of ``error`` (from ``function``'s forward): the op, its
    inputs' shapes and the Function's ``hint``. A ValueError becomes a ShapeError."""
    text = str(error)
    named = text.lower().startswith(function.oper.lower() + ":")  # already says which op
    message = f"{text if named else f'{function.oper}: {text}'}\n  {describe_args(args)}"
    about_shapes = not isinstance(error, ValueError) or any(
        word in text.lower() for word in SHAPE_WORDS)
    if function.hint and about_shapes:  # (a broadcasting hint fits shape errors only)
        message += f"\n  hint: {function.hint}"
    kind = type(error) if not isinstance(error, ValueError) else \
        ShapeError if about_shapes else OpError
    try:
        new = kind(message)
    except TypeError:  # an exception type that takes other arguments
        new = RuntimeError(message)
    new.minigrad = True
    return new


def check_finite(outputs: Any, who: str, args: tuple, trace: list | None = None,
                 received: list | None = None) -> None:
    """Anomaly mode: raise if an array in ``outputs`` holds NaN or Inf, naming ``who``
    made it (and, from ``trace``, where the op was created). ``received``: the arrays
    ``who`` was given (a forward: its arguments, numbers too); if one of them already
    held NaN or Inf, the message says that the input was bad, rather than blaming
    ``who``. In a forward, an Inf that came in with the inputs is no anomaly: masking
    scores with ``-inf`` before a softmax is correct code (PyTorch runs it too)."""
    arrays = outputs if isinstance(outputs, tuple) else (outputs,)
    for i, a in enumerate(arrays):
        if a is None:
            continue
        a = np.asarray(a)
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            if received is not None and not np.isnan(a).any() and _holds_inf(received):
                continue  # an Inf passed on (a -inf mask), not made here
            message = (f"detect_anomaly: {who} produced {_bad(a)} in output {i} "
                       f"(shape {a.shape})")
            for position, given in enumerate(received or ()):
                if isinstance(given, np.ndarray) and given.dtype.kind in "fc" \
                        and not np.all(np.isfinite(given)):
                    message = (f"detect_anomaly: input {position} of {who} was already "
                               f"{_bad(given)} (shape {given.shape}) before the op ran, so "
                               f"the {_bad(a)} in its output {i} comes from that input, not "
                               "from the op. Look where the input was made: a leaf's "
                               "values, or an op run outside detect_anomaly()")
                    break
            message += f"\n  {describe_args(args)}"
            if trace:
                message += "\n  the op was created here:\n" + "".join(trace[-4:])
            error = FloatingPointError(message)
            error.minigrad = True
            raise error


def _holds_inf(values: list) -> bool:
    """Does one of a forward's arguments (arrays or numbers) hold an infinity?"""
    for value in values:
        if isinstance(value, (float, np.floating)) and np.isinf(value):
            return True
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc" \
                and np.isinf(value).any():
            return True
    return False


def _bad(array: np.ndarray) -> str:
    return "NaN" if np.isnan(array).any() else "Inf"
