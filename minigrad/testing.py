"""``mg.testing`` (PyTorch's ``torch.testing``): ``assert_close(actual, expected)``, the
check that two results agree up to the tolerances of their dtype, with PyTorch's rules and
messages. It compares minigrad tensors, NumPy arrays, Python numbers, ``None``, and lists,
tuples and dicts of them (item by item: the message says which item failed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .tensor import Tensor

# (rtol, atol) when neither is given, as PyTorch's; other dtypes (ints, bool) compare exactly
TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
              np.dtype(np.float64): (1e-7, 1e-7)}


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_dtype: bool = True,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise an ``AssertionError`` unless ``|actual - expected| <= atol + rtol |expected|``
    everywhere (and shapes and, with ``check_dtype``, dtypes agree). Without ``rtol`` and
    ``atol``, the tolerances of the inputs' dtype (``TOLERANCES``); Python floats count as
    float64. ``msg`` replaces the message (a callable is given the message to change)."""
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but "
                         f"got no {'atol' if atol is None else 'rtol'}.")
    problem = _compare(actual, expected, "", rtol, atol, equal_nan, check_dtype)
    if problem is not None:
        message, item = problem
        if item:
            message += f"\n\nThe failure occurred for item {item}"
        if msg is not None:
            message = msg(message) if callable(msg) else msg
        raise AssertionError(message)


def _compare(actual, expected, item, rtol, atol, equal_nan, check_dtype):
    """None if they agree, else (the message, the item where they differ)."""
    if actual is None or expected is None:
        return None if actual is expected else (
            f"None mismatch: {actual} is not {expected}", item)
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            return ("The keys of the mappings do not match:\n"
                    f"Missing keys in the actual mapping: {sorted(set(expected) - set(actual))}\n"
                    f"Additional keys in the actual mapping: "
                    f"{sorted(set(actual) - set(expected))}", item)
        for key in expected:
            problem = _compare(actual[key], expected[key], f"{item}[{key!r}]", rtol, atol,
                               equal_nan, check_dtype)
            if problem is not None:
                return problem
        return None
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            return (f"The length of the sequences mismatch: {len(actual)} != "
                    f"{len(expected)}", item)
        for i, (a, e) in enumerate(zip(actual, expected)):
            problem = _compare(a, e, f"{item}[{i}]", rtol, atol, equal_nan, check_dtype)
            if problem is not None:
                return problem
        return None
    numbers = (bool, int, float)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        if type(actual) is not type(expected):
            return (f"The (d)types do not match: {type(actual)} != {type(expected)}.", item)
        actual, expected = np.asarray(actual), np.asarray(expected)  # bool, int64, float64
    elif isinstance(actual, Tensor) and isinstance(expected, Tensor):
        actual, expected = actual.numpy(), expected.numpy()
    elif not (isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray)):
        raise TypeError("No comparison pair was able to handle inputs of type "
                        f"{type(actual)} and {type(expected)}.")
    message = _compare_arrays(actual, expected, rtol, atol, equal_nan, check_dtype)
    return None if message is None else (message, item)


def _is_sequence(value) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _compare_arrays(actual, expected, rtol, atol, equal_nan, check_dtype) -> str | None:
    if actual.shape != expected.shape:
        return (f"The values for attribute 'shape' do not match: {actual.shape} != "
                f"{expected.shape}.")
    if check_dtype and actual.dtype != expected.dtype:
        return (f"The values for attribute 'dtype' do not match: {actual.dtype} != "
                f"{expected.dtype}.")
    if rtol is None:  # the looser of the two dtypes' tolerances
        rtol, atol = (max(tolerances) for tolerances in zip(
            *(TOLERANCES.get(a.dtype, (0.0, 0.0)) for a in (actual, expected))))
    common = np.result_type(actual, expected)
    actual, expected = actual.astype(common), expected.astype(common)
    if common.kind == "f":
        matches = np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        matches = actual == expected
    if matches.all():
        return None
    if actual.ndim == 0:
        return _scalar_mismatch(actual.item(), expected.item(), rtol, atol)
    return _array_mismatch(actual, expected, matches, rtol, atol)


def _scalar_mismatch(actual, expected, rtol, atol) -> str:
    difference = abs(actual - expected)
    relative = float("inf") if expected == 0 else difference / abs(expected)
    return _mismatch("Scalars", f"Expected {expected} but got {actual}.",
                     f"Absolute difference: {difference}", f"Relative difference: {relative}",
                     rtol, atol)


def _array_mismatch(actual, expected, matches, rtol, atol) -> str:
    """PyTorch's report: how many elements differ, and the greatest absolute and relative
    differences among them, with their indices."""
    count, wrong = matches.size, int((~matches).sum())
    if actual.dtype.kind != "f":  # integers and bools: differences as int64
        actual, expected = actual.astype(np.int64), expected.astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        difference = np.abs(actual - expected)
        relative = difference / np.abs(expected)
    if actual.dtype.kind != "f":
        relative = relative.astype(np.float32)  # PyTorch divides in the default dtype
    difference[matches], relative[matches] = 0, 0  # only the mismatches count

    def greatest(values) -> tuple:
        flat = int(np.argmax(values))  # a NaN is the greatest, as in PyTorch
        index = tuple(int(i) for i in np.unravel_index(flat, values.shape))
        return values.reshape(-1)[flat].item(), index

    (abs_value, abs_index), (rel_value, rel_index) = greatest(difference), greatest(relative)
    return _mismatch("Tensor-likes",
                     f"Mismatched elements: {wrong} / {count} ({wrong / count:.1%})",
                     f"Greatest absolute difference: {abs_value} at index {abs_index}",
                     f"Greatest relative difference: {rel_value} at index {rel_index}",
                     rtol, atol)


def _mismatch(what: str, extra: str, absolute: str, relative: str, rtol, atol) -> str:
    equality = rtol == 0 and atol == 0
    if not equality:
        absolute += f" (up to {atol} allowed)"
        relative += f" (up to {rtol} allowed)"
    return (f"{what} are not {'equal' if equality else 'close'}!\n\n{extra}\n{absolute}\n"
            f"{relative}")


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """PyTorch's deprecated ``assert_allclose``: ``assert_close`` with ``expected`` taken
    in ``actual``'s dtype and NaNs equal by default (with PyTorch's FutureWarning)."""
    import warnings

    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = Tensor(actual)
    expected = Tensor(expected.numpy() if isinstance(expected, Tensor) else expected,
                      dtype=actual.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 msg=msg or None)


__all__ = ["assert_close", "assert_allclose"]
