"""Comparing a student's answer with the right one, and naming the mistake.

``compare(got, expected, what)`` raises ``CheckFailed`` (an ``AssertionError``) whose
message says what came back, what was expected and, when the answer matches a known-wrong
variant of the right one, which classic mistake it looks like. The generic variants
(wrong sign, a constant factor, transposed, not summed over broadcast dimensions, summed
without ``keepdim``, overflow) are tried on every comparison; a checker adds the ones only
it can build (``Variant``: a wrong answer and the sentence that names it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

SHOWN = 4  # elements listed in a mismatch table


class CheckFailed(AssertionError):
    """A check failed; the message is meant for the student."""


@dataclass
class Variant:
    """A known-wrong answer, and the sentence that names the mistake that gives it."""

    mistake: str
    value: Any


def as_array(value: Any) -> np.ndarray | None:
    """A Tensor, an array, a number or a nested list as a NumPy array (None stays None)."""
    if value is None:
        return None
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a minigrad (or torch) Tensor
        return np.asarray(value.detach().numpy())
    return np.asarray(value)


def describe(value: Any) -> str:
    """``'array of shape (3, 4), float64'``: what a value is, in a few words."""
    if value is None:
        return "None"
    if isinstance(value, (tuple, list)) and not _is_numeric_list(value):
        return f"{type(value).__name__} of {len(value)}: " + \
            ", ".join(describe(v) for v in value)
    if isinstance(value, (tuple, list)):  # a short one (e.g. a shape) with its values
        return f"{type(value).__name__} {value!r}" if len(value) <= 8 else \
            f"{type(value).__name__} of {len(value)} number(s)"
    if isinstance(value, np.generic) and not isinstance(value, float):
        return f"numpy.{type(value).__name__} {value.item()!r}"
    kind = "Tensor" if hasattr(value, "grad_fn") else "array"
    if not hasattr(value, "shape"):
        if isinstance(value, (int, float, np.number)) or (
                isinstance(value, (tuple, list)) and len(value) <= 8):  # e.g. a shape
            return f"{type(value).__name__} {value!r}"
        return type(value).__name__
    array = as_array(value)
    return f"{kind} of shape {tuple(array.shape)}, {array.dtype}"


def _is_numeric_list(value: Sequence) -> bool:
    return all(isinstance(v, (int, float, np.number)) for v in value)


def preview(array: np.ndarray, limit: int = 6) -> str:
    """The first few values, rounded, on one line."""
    flat = np.asarray(array, dtype=np.float64).reshape(-1)
    shown = ", ".join(f"{v:.4g}" for v in flat[:limit])
    return f"[{shown}{', ...' if flat.size > limit else ''}]"


def close(got: Any, expected: Any, atol: float, rtol: float, equal_nan: bool = False) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    return got.shape == expected.shape and bool(
        np.allclose(got.astype(np.float64), expected.astype(np.float64), atol=atol, rtol=rtol,
                    equal_nan=equal_nan))


def sum_to_shape(array: np.ndarray, shape: tuple) -> np.ndarray | None:
    """``array`` summed over the dimensions broadcasting added to ``shape`` (None if no
    broadcast of ``shape`` has ``array``'s shape)."""
    extra = array.ndim - len(shape)
    if extra < 0 or not all(s in (g, 1) for s, g in zip(shape, array.shape[extra:])):
        return None
    axes = tuple(range(extra)) + tuple(extra + i for i, s in enumerate(shape)
                                       if s == 1 and array.shape[extra + i] != 1)
    return array.sum(axis=axes, keepdims=True).reshape(shape)


# --- what a wrong shape looks like -----------------------------------------------------


def shape_mistake(got: np.ndarray, expected: np.ndarray, summed_from: tuple | None,
                  atol: float, rtol: float) -> str | None:
    """Name the mistake behind a wrong shape, if it is a classic one."""
    if got.ndim == 2 and got.shape == expected.shape[::-1]:
        return ("it is transposed: the shape is reversed. Check which operand of a matrix "
                "product is transposed, and their order (for z = a @ b: grad_a = "
                "grad_output @ b.T, grad_b = a.T @ grad_output).")
    if got.size == expected.size and [d for d in got.shape if d != 1] == \
            [d for d in expected.shape if d != 1] and got.ndim > expected.ndim:
        return (f"it has size-1 dimensions too many: the values are right, but shape "
                f"{got.shape} must be {expected.shape}. A sum with keepdims=True where the "
                "dimension must go (or an extra [:, None], np.expand_dims)? Sum without "
                "keepdims there, or reshape.")
    if got.size == expected.size and [d for d in got.shape if d != 1] == \
            [d for d in expected.shape if d != 1]:
        return (f"it was summed without keepdim: the values are right but the size-1 "
                f"dimensions are gone. Use .sum(axis=..., keepdims=True) to get shape "
                f"{expected.shape}.")
    summed = sum_to_shape(got, expected.shape)
    if summed is not None and got.shape != expected.shape:
        what = "is right once summed" if close(summed, expected, atol, rtol) else "is not"
        return (f"it was not summed over the broadcast dimensions: shape {got.shape} is the "
                f"broadcast output's; it must be summed back to the input's shape "
                f"{expected.shape} (a value used many times gets the sum of its gradients); "
                f"your result {what}.")
    if summed_from is not None and got.shape == tuple(summed_from):
        return (f"it has the output's shape {got.shape}, not the shape {expected.shape} of "
                "the input it is the gradient of. A gradient has its input's shape: for an "
                "operation that reads elements of its input (indexing, gather), start from "
                "np.zeros of the input's shape and add each output's gradient where that "
                "output was read from.")
    return None


# --- what wrong values look like -------------------------------------------------------


def factor_mistake(got: np.ndarray, expected: np.ndarray, atol: float, rtol: float,
                   batch_size: int | None = None) -> str | None:
    """Name a wrong sign or a constant factor."""
    norm = float(np.sum(expected * expected))
    if norm == 0.0:
        return None
    if close(got, -expected, atol, rtol):
        return ("it has the wrong sign: every value is the negative of the right one. "
                "Check a minus sign (in the formula, or in an update: p -= lr * grad).")
    factor = float(np.sum(got * expected)) / norm
    if factor == 0.0 or abs(factor - 1) < 1e-6 or not close(got, factor * expected, atol, rtol):
        return None
    if batch_size and batch_size > 1 and abs(factor * batch_size - 1) < 1e-6:
        return (f"it is {batch_size} times too small, {batch_size} being the batch size: "
                "averaged where a sum was wanted, or divided by N twice.")
    if batch_size and batch_size > 1 and abs(factor - batch_size) < 1e-6 * batch_size:
        return (f"it is {batch_size} times too large, {batch_size} being the batch size: "
                "summed where the mean was wanted (a missing 1/N).")
    if expected.size == 1:
        return None  # any wrong number is some factor times a single right one: no clue
    return (f"it is off by a constant factor: every value is {_factor(factor)} the right one "
            "(a missing 2 from a square, a missing 1/N from a mean, a step size used twice?).")


def _factor(factor: float) -> str:
    for k in range(2, 101):
        if abs(factor - k) < 1e-6 * k:
            return f"{k} times"
        if abs(factor * k - 1) < 1e-6:
            return f"1/{k} of"
    return f"{factor:.4g} times"


def nonfinite_mistake(got: np.ndarray, expected: np.ndarray) -> str | None:
    if got.dtype.kind != "f" or np.isfinite(got).all() or not np.isfinite(expected).all():
        return None
    bad = "nan" if np.isnan(got).any() else "inf"
    return (f"it contains {bad} where the answer is finite: something overflowed. exp of a "
            "large number (exp(1000)) is inf in floating point, and inf - inf, inf / inf "
            "or 0 * inf are nan. Rewrite the formula so that no exp gets a large positive "
            "number (this changes nothing mathematically). Two examples: for softmax and "
            "log-softmax, subtract the maximum first (x - x.max(axis, keepdims=True)); for "
            "log(1 + exp(x)), max(x, 0) + log1p(exp(-|x|)).")


def transpose_mistake(got: np.ndarray, expected: np.ndarray, atol: float,
                      rtol: float) -> str | None:
    if got.ndim == 2 and got.shape[0] == got.shape[1] and not close(expected, expected.T,
                                                                      atol, rtol) \
            and close(got, expected.T, atol, rtol):
        return ("it is transposed: your values are the right ones, transposed. Check which "
                "operand of a matrix product is transposed and their order (for z = a @ b: "
                "grad_a = grad_output @ b.T, grad_b = a.T @ grad_output).")
    return None


def mismatch_table(got: np.ndarray, expected: np.ndarray, atol: float, rtol: float,
                   yours: str = "yours", right: str = "expected") -> str:
    """The worst few elements: where, your value, the right value."""
    got64, expected64 = got.astype(np.float64), expected.astype(np.float64)
    difference = np.abs(got64 - expected64)
    difference = np.where(np.isnan(difference), np.inf, difference)
    bad = difference > atol + rtol * np.abs(expected64)
    order = np.argsort(-np.where(bad, difference, -1).reshape(-1), kind="stable")[:SHOWN]
    rows = []
    for flat in order:
        if not bad.reshape(-1)[flat]:
            break
        where = tuple(int(i) for i in np.unravel_index(flat, got.shape)) if got.ndim else ()
        rows.append(f"    at {where}: {yours} {got64.reshape(-1)[flat]:.6g}, "
                    f"{right} {expected64.reshape(-1)[flat]:.6g}")
    count = int(bad.sum())
    head = f"  {count} of {bad.size} value(s) differ (atol={atol:g}, rtol={rtol:g}):"
    return "\n".join([head] + rows)


def hidden_mismatch(got: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> str:
    """How many values are wrong, without the right ones (for a prediction)."""
    bad = ~np.isclose(got.astype(np.float64), expected.astype(np.float64), atol=atol,
                      rtol=rtol)
    return (f"  {int(bad.sum())} of {bad.size} value(s) are not right (the right ones are "
            "not shown: work them out again).")


def compare(got: Any, expected: Any, what: str, *, atol: float = 1e-6, rtol: float = 1e-4,
            variants: Sequence[Variant] = (), summed_from: tuple | None = None,
            batch_size: int | None = None, check_dtype: bool = False,
            right: str = "expected", reveal: bool = True) -> None:
    """Raise ``CheckFailed`` unless ``got`` equals ``expected`` (shape, values and, with
    ``check_dtype``, dtype). ``variants`` are known-wrong answers tried first (in order):
    the message names the first one ``got`` matches. ``reveal=False`` (a prediction, an
    answer worked out by hand): the message says what is wrong, never the expected
    values."""
    if got is None:
        raise CheckFailed(f"{what}: got None, expected {describe(expected)}. Did you forget "
                          "to return it?")
    try:
        got_array = as_array(got)
        got_array = got_array.astype(np.float64) if got_array.dtype == object else got_array
    except (TypeError, ValueError):
        raise CheckFailed(f"{what}: got {describe(got)}, expected {describe(expected)}") \
            from None
    expected_array = as_array(expected)
    if got_array.dtype.kind in "US" and expected_array.dtype.kind not in "US":
        shown = repr(got) if len(repr(got)) <= 40 else repr(got)[:37] + "..."
        raise CheckFailed(f"{what}: got text ({shown}), expected numbers. Write the numbers "
                          "without quotes: 18, not '18'.")
    if got_array.shape != expected_array.shape:
        message = (f"{what}: wrong shape: got {describe(got)}, expected shape "
                   f"{tuple(expected_array.shape)}.")
        try:  # a wrong answer may have the right values but not the broadcast shape
            stretched = np.broadcast_to(got_array, expected_array.shape)
        except ValueError:
            stretched = got_array
        for variant in variants:
            wrong = as_array(variant.value)
            if close(got_array, wrong, atol, rtol) or close(stretched, wrong, atol, rtol):
                raise CheckFailed(f"{message}\n  It looks like {variant.mistake}")
        mistake = shape_mistake(got_array, expected_array, summed_from, atol, rtol)
        raise CheckFailed(message + (f"\n  It looks like {mistake}" if mistake else ""))
    if check_dtype and got_array.dtype != expected_array.dtype:
        raise CheckFailed(f"{what}: wrong dtype: got {got_array.dtype}, expected "
                          f"{expected_array.dtype} (shape {tuple(got_array.shape)} is right).")
    if close(got_array, expected_array, atol, rtol):
        return
    table = mismatch_table(got_array, expected_array, atol, rtol, right=right) if reveal \
        else hidden_mismatch(got_array, expected_array, atol, rtol)
    mistake = None
    for variant in variants:  # the exercise's own mistakes first: they know the cause
        if mistake is None and close(got_array, as_array(variant.value), atol, rtol,
                                     equal_nan=True):  # a nan where the mistake has one
            mistake = variant.mistake
    mistake = mistake or nonfinite_mistake(got_array, expected_array) \
        or factor_mistake(got_array, expected_array, atol, rtol, batch_size) \
        or transpose_mistake(got_array, expected_array, atol, rtol)
    message = f"{what}: wrong values.\n{table}"
    if mistake:
        message = f"{what}: wrong values.\n  It looks like {mistake}\n{table}"
    raise CheckFailed(message)
