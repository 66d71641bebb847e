"""Chapter 06's checks (its test cells call check_function) name the traps the chapter
warns about instead of showing NumPy's bare error: the scatter-add of MyGather given a
list, the index alone, or the position for dim = 1 only; MyIndex's gradient built in the
output's shape is not told to "sum over the broadcast dimensions"."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad.exercises import check_function

GATHER_CASES = [[(3, 4), np.array([[0, 0, 3, 1, 0], [1, 2, 1, 1, 2], [3, 3, 3, 0, 3]]), 1],
                [(4, 2), np.array([[0, 1], [0, 0], [3, 1]]), 0],
                [(2, 3, 2), np.array([[[2, 0], [2, 2]], [[1, 1], [0, 1]]]), 1]]


def fails(check, *args) -> str:
    with pytest.raises(AssertionError) as failure:
        check(*args)
    return " ".join(str(failure.value).split())


def gather(scatter):
    class MyGather(mg.Function):
        @staticmethod
        def forward(ctx, x, index, dim):
            ctx.input_shape, ctx.dim = x.shape, dim
            ctx.save_for_backward(index)
            return np.take_along_axis(x, index, axis=dim)

        @staticmethod
        def backward(ctx, grad_output):
            (index,) = ctx.saved_tensors
            grad = np.zeros(ctx.input_shape)
            scatter(grad, index, ctx.dim, grad_output)
            return grad, None, None

    return MyGather


def check_gather(function):
    check_function(function, inputs=GATHER_CASES,
                   reference=lambda x, index, dim: mg.gather(x, dim, index))


def right(grad, index, dim, grad_output):
    where = list(np.indices(index.shape, sparse=True))
    where[dim] = index
    np.add.at(grad, tuple(where), grad_output)


def as_list(grad, index, dim, grad_output):
    where = list(np.indices(index.shape, sparse=True))
    where[dim] = index
    np.add.at(grad, where, grad_output)


def index_alone(grad, index, dim, grad_output):
    np.add.at(grad, index, grad_output)


def for_dim_1(grad, index, dim, grad_output):
    rows, _ = np.indices(index.shape, sparse=True)[:2]
    np.add.at(grad, (rows, index), grad_output)


def test_a_right_gather_passes():
    check_gather(gather(right))


@pytest.mark.parametrize("scatter, words", [
    (as_list, "read your list of coordinate arrays as ONE array of indices"),
    (index_alone, "a gather along dim needs the full position of every element"),
    (for_dim_1, "(rows, index) is right for dim = 1 of a matrix only")])
def test_each_trap_of_the_scatter_add_is_named(scatter, words):
    assert words in fails(check_gather, gather(scatter))


def test_an_index_gradient_of_the_output_s_shape_is_not_called_a_broadcast():
    class MyIndex(mg.Function):
        @staticmethod
        def forward(ctx, x, index):
            ctx.index = index
            return x[index]

        @staticmethod
        def backward(ctx, grad_output):
            grad = np.zeros_like(grad_output)
            np.add.at(grad, ctx.index, grad_output)
            return grad, None

    told = fails(check_function, MyIndex, [[(5, 3), np.array([0, 2, 0, 4, 2, 1, 2])]],
                 lambda x, index: x[index])
    assert "broadcast" not in told
    assert "not the shape (5, 3) of the input it is the gradient of" in told
