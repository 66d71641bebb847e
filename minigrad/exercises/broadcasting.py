"""Chapter 02's classic mistakes (tensors and broadcasting), out of the notebook so that
its test cells do not show the answers. Each table is ``{sentence naming the mistake:
fn(...) -> the wrong result}`` with the exercise's own arguments, as the checkers'
``mistakes=`` takes them."""

from __future__ import annotations

import numpy as np

from .checks import checker
from .compare import CheckFailed, sum_to_shape
from .prerequisites import reference_for


@reference_for(1, "broadcast-shape")
def builtin_broadcast_shape(a: tuple, b: tuple) -> tuple:
    """NumPy's answer, the reference for the ``broadcast_shape`` exercise."""
    return tuple(np.broadcast_shapes(a, b))


@reference_for(2, "unbroadcast")
def builtin_unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """minigrad's own sum back to ``shape``, the reference for ``unbroadcast`` (and what
    ``MyMul``'s check swaps in for the student's, ``uses={"unbroadcast": ...}``)."""
    return sum_to_shape(grad, tuple(shape))


# --- broadcast_shape(a, b) -------------------------------------------------------------


def _aligned_left(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
    return tuple(max(x, y) for x, y in zip(a, b))


def _leading_dropped(a: tuple, b: tuple) -> tuple:
    pairs = list(zip(reversed(a), reversed(b)))  # zip stops at the shorter shape
    return tuple(max(x, y) for x, y in reversed(pairs))


BROADCAST_SHAPE_MISTAKES = {  # tried in this order: a dropped dimension first
    "the leading dimensions of the longer shape were dropped: zip stops at the shorter "
    "shape. Pad the shorter one with 1s in front first, so both have the same length.":
        _leading_dropped,
    "the shapes were lined up from the left. Broadcasting lines them up from the RIGHT "
    "(the last dimensions first): a (4,) against a (3, 4) is a row, so pad the shorter "
    "shape with 1s in front.": _aligned_left,
}


# --- unbroadcast(grad, shape) ----------------------------------------------------------


def _leading(grad: np.ndarray, shape: tuple) -> int:
    return grad.ndim - len(shape)


def _only_leading(grad: np.ndarray, shape: tuple) -> np.ndarray:
    return grad.sum(axis=tuple(range(_leading(grad, shape))))


def _one_leading_summed(grad: np.ndarray, shape: tuple) -> np.ndarray | None:
    if _leading(grad, shape) < 2:
        return None  # the same as the right answer: not this mistake
    grad = grad.sum(axis=0)
    lead = _leading(grad, shape)
    return grad.sum(axis=tuple(lead + i for i, size in enumerate(shape) if size == 1),
                    keepdims=True)


def _ones_counted_from_the_left(grad: np.ndarray, shape: tuple) -> np.ndarray:
    for axis, size in enumerate(shape):
        if size == 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad.sum(axis=tuple(range(_leading(grad, shape))))


def _leading_summed_at_the_end(grad: np.ndarray, shape: tuple) -> np.ndarray:
    while grad.ndim > len(shape):
        grad = grad.sum(axis=-1)
    axes = tuple(i for i, size in enumerate(shape) if size == 1)
    return grad.sum(axis=axes, keepdims=True)


def _no_keepdims(grad: np.ndarray, shape: tuple) -> np.ndarray:
    grad = grad.sum(axis=tuple(range(_leading(grad, shape))))
    return grad.sum(axis=tuple(i for i, size in enumerate(shape) if size == 1))


def _averaged(grad: np.ndarray, shape: tuple) -> np.ndarray | None:
    right = sum_to_shape(grad, tuple(shape))
    if right is None or right.size == grad.size:
        return None  # nothing summed: the same as the right answer
    return right * (right.size / grad.size)


def _leading_kept(grad: np.ndarray, shape: tuple) -> np.ndarray | None:
    lead = _leading(grad, shape)
    if lead == 0:
        return None  # the same as the right answer: not this mistake
    ones = tuple(lead + i for i, size in enumerate(shape) if size == 1)
    return grad.sum(axis=tuple(range(lead)) + ones, keepdims=True)


UNBROADCAST_MISTAKES = {
    "only the leading dimensions were summed away. A dimension of size 1 in `shape` "
    "that was stretched (a (2, 1) against a (2, 3)) must be summed too, with "
    "keepdims=True.": _only_leading,
    "only one of the added leading dimensions was summed away: a (4,) input against a "
    "(2, 3, 4) output had two added, and a 0-d input as many as grad has. Sum them while "
    "grad has more dimensions than `shape` (a `while`, not an `if`), or all at once with "
    "axis=tuple(range(grad.ndim - len(shape))).": _one_leading_summed,
    "the size-1 dimensions were summed at the wrong axes: `shape`'s axis i is grad's "
    "axis i + (grad.ndim - len(shape)), because broadcasting lines shapes up from the "
    "right. Sum the leading dimensions away first, then the size-1 ones.":
        _ones_counted_from_the_left,
    "the leading dimensions were summed from the wrong end: the dimensions broadcasting "
    "added are in FRONT (axis 0), not at the end (axis -1).": _leading_summed_at_the_end,
    "the size-1 dimensions were summed without keepdims=True, so they are gone: a "
    "dimension of size 1 in `shape` must still be there, with size 1, in the result "
    "(a (2, 1) stays (2, 1), it does not become (2,)).": _no_keepdims,
    "the gradient was averaged (mean) where it must be summed: a number used by several "
    "outputs gets the SUM of their gradients, not their mean. Use grad.sum(...).":
        _averaged,
    "the leading dimensions are still there with size 1 (summed with keepdims=True): "
    "a (3,) input got a (1, 3) gradient, and a 0-d input (shape ()) a (1, 1) one. Sum "
    "the leading dimensions away WITHOUT keepdims; only the size-1 dimensions of "
    "`shape` keep theirs.": _leading_kept,
}


# --- the broadcasting MyMul: fn(x, y, grad_output) -> (grad_x, grad_y) -----------------


def _both(grad_x: np.ndarray | None, grad_y: np.ndarray | None) -> tuple | None:
    return None if grad_x is None or grad_y is None else (grad_x, grad_y)


def _summed_before_multiplying(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> tuple | None:
    gx, gy = sum_to_shape(g, np.shape(x)), sum_to_shape(g, np.shape(y))
    return None if gx is None or gy is None else _both(gx * y, gy * x)


def _summed_to_the_other_shape(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> tuple | None:
    if g.shape in (np.shape(x), np.shape(y)):  # the other shape is the output's: no sum
        return None  # to tell apart from forgetting the sum
    return _both(sum_to_shape(g * y, np.shape(y)), sum_to_shape(g * x, np.shape(x)))


def _swapped(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> tuple | None:
    return _both(sum_to_shape(g * np.asarray(x), np.shape(x)),
                 sum_to_shape(g * np.asarray(y), np.shape(y)))


def _summed_twice(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> tuple | None:
    gx, gy = _summed_before_multiplying(x, y, g) or (None, None)
    if gx is None or gy is None:
        return None
    return _both(sum_to_shape(gx, np.shape(x)), sum_to_shape(gy, np.shape(y)))


MUL_MISTAKES = {
    "grad_output was summed back before multiplying: unbroadcast(grad_output, x.shape) "
    "* y mixes numbers from different positions. Multiply first (grad_output * y has "
    "the output's shape), then unbroadcast the product to x's shape.":
        _summed_before_multiplying,
    "x and y are swapped: the gradient for x is grad_output * y (x's partner in the "
    "product), and the one for y is grad_output * x.": _swapped,
    "grad_output was summed back before multiplying, then summed again: "
    "unbroadcast(unbroadcast(grad_output, x.shape) * y, x.shape) still mixes numbers "
    "from different positions. Multiply first (grad_output * y), then unbroadcast the "
    "product once.": _summed_twice,
    "each gradient was summed to the other input's shape: grad_x must come back with "
    "x's shape, grad_y with y's.": _summed_to_the_other_shape,
}


# --- helpers for the test cells ---------------------------------------------------------


def named_mistakes(table: dict, *args: object) -> dict:
    """``{sentence: wrong value}`` of ``table``'s mistakes on ``args``, for check_value
    (a mistake that cannot be made on these arguments is left out)."""
    wrong = {}
    for sentence, make in table.items():
        try:
            value = make(*args)
        except (ValueError, IndexError, TypeError):
            continue
        if value is not None:
            wrong[sentence] = value
    return wrong


def _call_refusing_numpy(broadcast_shape: object, a: tuple, b: tuple) -> object:
    """``broadcast_shape(a, b)``, with ``np.broadcast_shapes`` switched off meanwhile:
    the exercise is to write it without."""
    def forbidden(*shapes: object) -> None:
        raise CheckFailed(f"broadcast_shape({a!r}, {b!r}) called np.broadcast_shapes, which "
                          "the exercise asks you not to use: line the shapes up from the "
                          "right yourself.")

    builtin, np.broadcast_shapes = np.broadcast_shapes, forbidden
    try:
        return broadcast_shape(a, b)
    finally:
        np.broadcast_shapes = builtin


def _not_written(call: str) -> CheckFailed:
    return CheckFailed(f"{call} raised NotImplementedError.\n  Write your solution where "
                       "the exercise says so, then run its cell.")


@checker
def check_broadcast_shape(broadcast_shape: object, cases: list) -> None:
    """``broadcast_shape(a, b)`` must return NumPy's shape, as a tuple of ints, for each
    ``(a, b)`` in ``cases`` (shapes that do broadcast); a classic mistake is named."""
    for a, b in cases:
        call = f"broadcast_shape({a!r}, {b!r})"
        expected = builtin_broadcast_shape(a, b)
        try:
            got = _call_refusing_numpy(broadcast_shape, a, b)
        except CheckFailed:
            raise
        except NotImplementedError:
            raise _not_written(call) from None
        except ValueError as error:
            raise CheckFailed(f"{call} raised ValueError ({error}), but these shapes do "
                              f"broadcast, to {expected}. Line them up from the RIGHT "
                              "(pad the shorter one with 1s in front); two sizes fit when "
                              "they are equal or one of them is 1.") from None
        except Exception as error:  # noqa: BLE001 - the student's code: report, don't crash
            raise CheckFailed(f"{call} raised {type(error).__name__}: {error}; expected "
                              f"{expected}.") from None
        if not isinstance(got, tuple):
            raise CheckFailed(f"{call} returned {type(got).__name__} {got!r}, expected the "
                              f"tuple {expected}. A shape is a tuple: return tuple(...) of "
                              "your sizes.")
        if got == expected:
            continue
        mistake = next((sentence for sentence, make in BROADCAST_SHAPE_MISTAKES.items()
                        if make(a, b) == got), None)
        raise CheckFailed(f"{call} returned {got}, expected {expected}."
                          + (f"\n  It looks like {mistake}" if mistake else ""))
    print(f"broadcast_shape: right ({len(cases)} case(s) checked).")


def _names(message: str, shape: tuple) -> bool:
    return str(tuple(shape)) in message or str(list(shape)) in message


@checker
def check_incompatible_shapes(broadcast_shape: object, a: tuple, b: tuple) -> None:
    """``broadcast_shape(a, b)`` must raise ValueError naming both shapes: ``a`` and ``b``
    do not broadcast."""
    call = f"broadcast_shape({a!r}, {b!r})"
    try:
        got = _call_refusing_numpy(broadcast_shape, a, b)
    except CheckFailed:
        raise
    except ValueError as error:
        if not (_names(str(error), a) and _names(str(error), b)):
            raise CheckFailed(f"{call} raised ValueError({str(error)!r}), which does not name "
                              f"both shapes: the message must show {a} and {b}, e.g. "
                              f"f\"shapes {{a}} and {{b}} do not broadcast\".") from None
        print(f"{call} raised ValueError: {error}")
        return
    except NotImplementedError:
        raise _not_written(call) from None
    except Exception as error:  # noqa: BLE001 - the student's code: report, don't crash
        raise CheckFailed(f"{call} raised {type(error).__name__}: {error}; expected a "
                          "ValueError (raise ValueError(...) yourself, naming both "
                          "shapes).") from None
    raise CheckFailed(f"{call} returned {got!r}, but these shapes do not broadcast: "
                      "compared from the right, sizes that differ must include a 1 (check "
                      "every dimension, not only the last one). Raise ValueError naming "
                      "both shapes.")
