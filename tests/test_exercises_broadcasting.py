"""Chapter 2's checkers (minigrad/exercises/broadcasting.py) fail on the wrong answers a
student walking through the chapter tried, and name the mistake; the right answers pass.
The cases are the ones the chapter's visible test cells use."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad.exercises import check_array_function, check_function
from minigrad.exercises.broadcasting import (MUL_MISTAKES, UNBROADCAST_MISTAKES,
                                             builtin_unbroadcast, check_broadcast_shape,
                                             check_incompatible_shapes)

SHAPE_CASES = [((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((3, 1), (1, 4)), ((5,), ()),
               ((), (2, 3)), ((1,), (2, 3)), ((2, 3), (2, 3))]
INCOMPATIBLE = [((3, 4), (3,)), ((4, 3), (2, 3)), ((2, 3, 4), (5, 1, 4))]
GRAD = np.arange(6.0).reshape(2, 3)
UNBROADCAST_EXAMPLE = [(GRAD, (3,)), (GRAD, (2, 1)), (GRAD, ()),
                       (np.arange(24.0).reshape(2, 3, 4), (3, 1)),
                       (np.arange(24.0).reshape(2, 3, 4), (4,))]
MUL_INPUTS = [[(3, 1), (1, 4)], [(3, 4), (4,)], [(2, 3, 1), (3, 4)], [(3, 1), (2, 3, 4)],
              [(3, 4), ()], [(3, 4), (3, 4)]]


def fails(check, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as failure:
        check(*args, **kwargs)
    return " ".join(str(failure.value).split())


def padded(a, b):
    n = max(len(a), len(b))
    return (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)


def broadcast_shape_right(a, b):
    result = []
    for x, y in zip(*padded(a, b)):
        if x != y and 1 not in (x, y):
            raise ValueError(f"shapes {a} and {b} do not broadcast")
        result.append(max(x, y))
    return tuple(result)


def check_all_shapes(broadcast_shape):
    check_broadcast_shape(broadcast_shape, SHAPE_CASES)
    for a, b in INCOMPATIBLE:
        check_incompatible_shapes(broadcast_shape, a, b)


def test_right_broadcast_shape_passes(capsys):
    check_all_shapes(broadcast_shape_right)
    assert "broadcast_shape: right (7 case(s) checked)" in capsys.readouterr().out


def test_a_list_is_not_a_shape():
    def as_list(a, b):
        return list(broadcast_shape_right(a, b))

    message = fails(check_all_shapes, as_list)
    assert "returned list [3, 4], expected the tuple (3, 4)" in message


def test_an_array_from_numpy_is_refused_as_forbidden():
    def numpy_answer(a, b):
        return np.array(np.broadcast_shapes(a, b))

    assert "called np.broadcast_shapes, which the exercise asks you not to use" in fails(
        check_all_shapes, numpy_answer)
    assert np.broadcast_shapes((3, 1), (4,)) == (3, 4)  # switched back on afterwards


def test_aligning_from_the_left_that_raises_is_told_the_shapes_do_broadcast():
    def aligned_left(a, b):
        n = max(len(a), len(b))
        result = []
        for x, y in zip(tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))):
            if x != y and 1 not in (x, y):
                raise ValueError(f"shapes {a} and {b} do not broadcast")
            result.append(max(x, y))
        return tuple(result)

    message = fails(check_all_shapes, aligned_left)
    assert "broadcast_shape((3, 4), (4,)) raised ValueError" in message
    assert "these shapes do broadcast, to (3, 4). Line them up from the RIGHT" in message


def test_zip_without_padding_says_the_expected_shape_once():
    def unpadded(a, b):
        return tuple(max(x, y) for x, y in zip(a[::-1], b[::-1]))[::-1]

    message = fails(check_all_shapes, unpadded)
    assert "broadcast_shape((3, 4), (4,)) returned (4,), expected (3, 4)." in message
    assert "leading dimensions of the longer shape were dropped" in message


@pytest.mark.parametrize("a, b", INCOMPATIBLE[1:])
def test_compatibility_checked_in_the_last_dimension_only_fails(a, b):
    def last_only(a, b):
        pa, pb = padded(a, b)
        if pa[-1] != pb[-1] and 1 not in (pa[-1], pb[-1]):
            raise ValueError(f"shapes {a} and {b} do not broadcast")
        return tuple(max(x, y) for x, y in zip(pa, pb))

    message = fails(check_incompatible_shapes, last_only, a, b)
    assert f"broadcast_shape({a}, {b}) returned" in message
    assert "these shapes do not broadcast" in message


def test_raising_only_when_the_lengths_differ_fails():
    def lengths_only(a, b):
        result = []
        for x, y in zip(*padded(a, b)):
            if x != y and 1 not in (x, y) and len(a) != len(b):
                raise ValueError(f"shapes {a} and {b} do not broadcast")
            result.append(max(x, y))
        return tuple(result)

    assert "these shapes do not broadcast" in fails(check_all_shapes, lengths_only)


def test_an_error_message_without_the_shapes_fails():
    def anonymous(a, b):
        try:
            return broadcast_shape_right(a, b)
        except ValueError:
            raise ValueError("incompatible") from None

    message = fails(check_all_shapes, anonymous)
    assert "does not name both shapes: the message must show (3, 4) and (3,)" in message


# --- unbroadcast: the visible example check --------------------------------------------


def check_unbroadcast_example(unbroadcast):
    check_array_function(unbroadcast, reference=builtin_unbroadcast,
                         mistakes=UNBROADCAST_MISTAKES, cases=UNBROADCAST_EXAMPLE)


def unbroadcast_right(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def test_right_unbroadcast_passes_the_example_check():
    check_unbroadcast_example(unbroadcast_right)


def test_size_1_axes_counted_from_the_left_fail_the_example_check():
    def offset(grad, shape):
        for axis, size in enumerate(shape):
            if size == 1:
                grad = grad.sum(axis=axis, keepdims=True)
        while grad.ndim > len(shape):
            grad = grad.sum(axis=0)
        return grad

    message = fails(check_unbroadcast_example, offset)
    assert "(3, 1)" in message and "summed at the wrong axes" in message


def test_summing_only_one_added_leading_dimension_fails_the_example_check():
    # it passed the example check when no case had two added dimensions, then failed a
    # right MyMul
    def one_leading(grad, shape):
        if grad.ndim > len(shape):
            grad = grad.sum(axis=0)
        for axis, size in enumerate(shape):
            if size == 1 and grad.shape[axis] != 1:
                grad = grad.sum(axis=axis, keepdims=True)
        return grad

    message = fails(check_unbroadcast_example, one_leading)
    assert "only one of the added leading dimensions was summed away" in message


def test_left_aligned_keepdims_then_reshape_fails_the_example_check():
    def reshaped(grad, shape):
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
        g = grad.sum(axis=axes, keepdims=True) if axes else grad
        while g.ndim > len(shape):
            g = g.sum(axis=0)
        return g.reshape(shape) if g.size == int(np.prod(shape)) else g

    assert "(3, 1)" in fails(check_unbroadcast_example, reshaped)


def test_writing_into_grad_fails_the_example_check():
    def in_place(grad, shape):
        while grad.ndim > len(shape):
            grad = grad.sum(axis=0)
        for axis, size in enumerate(shape):
            if size == 1 and grad.shape[axis] != 1:
                grad[..., :1] = grad.sum(axis=axis, keepdims=True)
                grad = grad[..., :1]
        return grad

    assert "changed an array it was given in place" in fails(check_unbroadcast_example,
                                                             in_place)


def test_a_mean_instead_of_a_sum_is_named():
    def averaged(grad, shape):
        grad = grad.mean(axis=tuple(range(grad.ndim - len(shape))))
        for axis, size in enumerate(shape):
            if size == 1:
                grad = grad.mean(axis=axis, keepdims=True)
        return grad

    assert "averaged (mean) where it must be summed" in fails(check_unbroadcast_example,
                                                              averaged)


def test_no_keepdims_message_does_not_name_a_shape_it_was_not_given():
    def no_keepdims(grad, shape):
        while grad.ndim > len(shape):
            grad = grad.sum(axis=0)
        axes = tuple(i for i, size in enumerate(shape) if size == 1)
        return grad.sum(axis=axes) if axes else grad

    message = fails(check_unbroadcast_example, no_keepdims)
    assert "summed without keepdims=True" in message and "must still be there" in message


def test_blank_unbroadcast_gets_the_write_here_message():
    def blank(grad, shape):
        raise NotImplementedError("exercise unbroadcast: write your code here")

    assert "Write your solution where the exercise says so" in fails(
        check_unbroadcast_example, blank)


# --- the broadcasting MyMul -------------------------------------------------------------


def mul(unbroadcast, backward):
    class MyMul(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return backward(unbroadcast, x, y, grad_output)

    return MyMul


def right_backward(u, x, y, g):
    return u(g * y, x.shape), u(g * x, y.shape)


def check_mul(function):
    check_function(function, inputs=MUL_INPUTS, reference=lambda x, y: x * y,
                   mistakes=MUL_MISTAKES, exact_shapes=True)


def test_right_mymul_passes():
    check_mul(mul(unbroadcast_right, right_backward))


def test_mymul_with_an_axis_offset_unbroadcast_fails():
    def offset(grad, shape):
        for axis, size in enumerate(shape):
            if size == 1:
                grad = grad.sum(axis=axis, keepdims=True)
        while grad.ndim > len(shape):
            grad = grad.sum(axis=0)
        return grad

    assert "(3, 1)" in fails(check_mul, mul(offset, right_backward))


def test_mymul_with_x_and_y_swapped_is_named():
    swapped = mul(unbroadcast_right, lambda u, x, y, g: (u(g * x, x.shape), u(g * y, y.shape)))
    assert "x and y are swapped" in fails(check_mul, swapped)


def test_mymul_summed_before_and_after_multiplying_is_named():
    twice = mul(unbroadcast_right, lambda u, x, y, g: (u(u(g, x.shape) * y, x.shape),
                                                       u(u(g, y.shape) * x, y.shape)))
    assert "summed back before multiplying" in fails(check_mul, twice)
