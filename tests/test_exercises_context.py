"""Chapter 03's checks (minigrad/exercises/context.py): each passes a right Function and
fails each classic mistake with a message that names it."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad.exercises import MATMUL_MISTAKES
from minigrad.exercises.context import (SCALE_ROWS_MISTAKES, SIGMOID_MISTAKES,
                                        SINCOS_MISTAKES, check_in_place_safety,
                                        check_multi_output, check_needs_input_grad,
                                        check_saves_output)


def fails(check, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as failure:
        check(*args, **kwargs)
    return " ".join(str(failure.value).split())


def function(name, forward, backward):
    return type(name, (mg.Function,), {"forward": staticmethod(forward),
                                       "backward": staticmethod(backward)})


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# --- check_saves_output -------------------------------------------------------------------


def saves_output(ctx, x):
    s = sigmoid(x)
    ctx.save_for_backward(s)
    return s


def saves_input(ctx, x):
    ctx.save_for_backward(x)
    return sigmoid(x)


def saves_a_second_copy(ctx, x):
    ctx.save_for_backward(sigmoid(x))
    return sigmoid(x)


def test_a_forward_that_saves_its_output_passes(capsys):
    check_saves_output(function("MySigmoid", saves_output, None), [(3, 4)])
    assert "saves its output" in capsys.readouterr().out


@pytest.mark.parametrize("forward, words", [
    (saves_input, "saved its input x, not its output"),
    (saves_a_second_copy, "saved a copy of its output"),
    (lambda ctx, x: sigmoid(x), "forward saved nothing"),
])
def test_a_forward_that_saves_something_else_is_told_what(forward, words):
    assert words in fails(check_saves_output, function("MySigmoid", forward, None), [(3, 4)])


def test_sigmoid_mistakes_are_the_wrong_gradients_they_name():
    x, g = np.array([0.5, -1.0]), np.array([1.0, 2.0])
    right = g * sigmoid(x) * (1 - sigmoid(x))
    for make in SIGMOID_MISTAKES.values():
        assert not np.allclose(make(x, g), right)


# --- check_needs_input_grad ---------------------------------------------------------------


def matmul_forward(ctx, a, b):
    ctx.save_for_backward(a, b)
    return a @ b


def skips(ctx, g):
    a, b = ctx.saved_tensors
    return (g @ b.T if ctx.needs_input_grad[0] else None,
            a.T @ g if ctx.needs_input_grad[1] else None)


def computes_both(ctx, g):
    a, b = ctx.saved_tensors
    return g @ b.T, a.T @ g


def reads_the_other_flag(ctx, g):
    a, b = ctx.saved_tensors
    return (g @ b.T if ctx.needs_input_grad[1] else None,
            a.T @ g if ctx.needs_input_grad[0] else None)


def transposed(ctx, g):
    a, b = ctx.saved_tensors
    return ((g @ b.T).T if ctx.needs_input_grad[0] else None,
            (a.T @ g).T if ctx.needs_input_grad[1] else None)


def check_matmul(backward):
    check_needs_input_grad(function("MyMatMul", matmul_forward, backward), [(3, 4), (4, 2)],
                           lambda a, b: a @ b, mistakes=MATMUL_MISTAKES)


def test_a_backward_that_skips_unneeded_gradients_passes(capsys):
    check_matmul(skips)
    assert "3 settings of needs_input_grad" in capsys.readouterr().out


@pytest.mark.parametrize("backward, words", [
    (computes_both, "ctx.needs_input_grad[1] is False: nobody will use it"),
    (reads_the_other_flag, "not another index"),
    (transposed, "the gradient is transposed"),
])
def test_a_backward_that_ignores_needs_input_grad_is_named(backward, words):
    assert words in fails(check_matmul, backward)


# --- check_multi_output -------------------------------------------------------------------


def sincos_forward(ctx, x):
    ctx.set_materialize_grads(False)
    ctx.save_for_backward(x)
    return np.sin(x), np.cos(x)


def sincos_backward(ctx, grad_sin, grad_cos):
    (x,) = ctx.saved_tensors
    grad = np.zeros_like(x)
    if grad_sin is not None:
        grad = grad + grad_sin * np.cos(x)
    if grad_cos is not None:
        grad = grad - grad_cos * np.sin(x)
    return grad


def check_sincos(forward, backward):
    check_multi_output(function("MySinCos", forward, backward), [(3, 4)],
                       lambda x: (x.sin(), x.cos()), mistakes=SINCOS_MISTAKES,
                       materialize_grads=False)


def test_a_two_output_function_passes(capsys):
    check_sincos(sincos_forward, sincos_backward)
    assert "every output and its gradient are right" in capsys.readouterr().out


def _ignores_cos(ctx, grad_sin, grad_cos):
    return (0 if grad_sin is None else grad_sin) * np.cos(ctx.saved_tensors[0])


def _wrong_sign(ctx, grad_sin, grad_cos):
    return sincos_backward(ctx, grad_sin, None if grad_cos is None else -grad_cos)


def _uses_none(ctx, grad_sin, grad_cos):
    (x,) = ctx.saved_tensors
    return grad_sin * np.cos(x) - grad_cos * np.sin(x)


def _materializes(ctx, x):
    ctx.save_for_backward(x)
    return np.sin(x), np.cos(x)


@pytest.mark.parametrize("forward, backward, words", [
    (sincos_forward, _ignores_cos, "backward ignores grad_cos"),
    (sincos_forward, _wrong_sign, "the cosine's path has the wrong sign"),
    (sincos_forward, _uses_none, "arrives as None: skip that output's term"),
    (_materializes, sincos_backward, "asks for ctx.set_materialize_grads(False)"),
    (sincos_forward, lambda ctx, grad: grad, "one gradient per output, 2 here"),
    (lambda ctx, x: np.sin(x), sincos_backward, "expected a tuple of 2 arrays"),
])
def test_a_two_output_function_s_mistakes_are_named(forward, backward, words):
    assert words in fails(check_sincos, forward, backward)


def test_materialized_zeros_reach_backward_when_it_did_not_ask_for_none(capsys):
    check_multi_output(function("MySinCos", _materializes, _uses_none), [(2, 3)],
                       lambda x: (x.sin(), x.cos()))
    assert "right" in capsys.readouterr().out


# --- check_in_place_safety ----------------------------------------------------------------


def saves_inputs(ctx, x, s):
    ctx.save_for_backward(x, s)
    return x * s[:, None]


def saves_a_view(ctx, x, s):
    column = s[:, None]
    ctx.save_for_backward(x, column)
    return x * column


def saves_a_copy(ctx, x, s):
    ctx.save_for_backward(x, s[:, None].copy())
    return x * s[:, None]


def from_inputs(ctx, g):
    x, s = ctx.saved_tensors
    return g * s[:, None], (g * x).sum(axis=1)


def from_column(ctx, g):
    x, column = ctx.saved_tensors
    return g * column, (g * x).sum(axis=1)


def check_scale_rows(forward, backward):
    check_in_place_safety(function("MyScaleRows", forward, backward), [(3, 4), (3,)],
                          lambda x, s: x * s.unsqueeze(1), modified=1,
                          mistakes=SCALE_ROWS_MISTAKES)


def test_saving_the_inputs_lets_the_version_counter_catch_the_edit(capsys):
    check_scale_rows(saves_inputs, from_inputs)
    assert "caught by the version counter" in capsys.readouterr().out


def test_saving_a_copy_keeps_the_gradient_right(capsys):
    check_scale_rows(saves_a_copy, from_column)
    assert "it saved a copy" in capsys.readouterr().out


def test_saving_a_view_is_named():
    assert "saved a NumPy view of input 1" in fails(check_scale_rows, saves_a_view, from_column)


def test_a_gradient_not_summed_along_rows_is_named():
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * s[:, None], (g * x).sum(axis=0)

    assert "not summed along each row" in fails(check_scale_rows, saves_inputs, backward)


# --- what the chapter says about PyTorch's Function and ctx -------------------------------


def _seen_by_backward(library, materialize: bool) -> dict:
    """What a two-output Function's backward receives, in ``library`` (minigrad or torch),
    when the loss uses only the first output and only the second input needs a gradient."""
    seen = {}
    base = library.autograd.Function if library is not mg else mg.Function

    class TwoOutputs(base):
        @staticmethod
        def forward(ctx, a, x):
            ctx.set_materialize_grads(materialize)
            indices = (x * 0).long() if library is not mg else np.zeros(x.shape, np.int64)
            ctx.mark_non_differentiable(indices)
            return 2 * x, 3 * x, indices

        @staticmethod
        def backward(ctx, grad_u, grad_v, grad_indices):
            seen["needs_input_grad"] = tuple(ctx.needs_input_grad)
            seen["grad_v"] = None if grad_v is None else np.asarray(grad_v).tolist()
            seen["grad_indices"] = None if grad_indices is None else \
                np.asarray(grad_indices).tolist()
            return None, 2 * grad_u

    a = library.tensor([1.0, 2.0])
    x = library.tensor([1.0, 2.0], requires_grad=True)
    u, v, indices = TwoOutputs.apply(a, x)
    seen["indices_requires_grad"] = indices.requires_grad
    (5 * u).sum().backward()
    seen["x.grad"] = np.asarray(x.grad.detach().numpy() if library is not mg
                                else x.grad.numpy()).tolist()
    return seen


@pytest.mark.parametrize("materialize", [True, False])
def test_ctx_behaves_as_pytorch_s_for_unused_and_non_differentiable_outputs(materialize):
    torch = pytest.importorskip("torch")
    ours, theirs = _seen_by_backward(mg, materialize), _seen_by_backward(torch, materialize)
    assert ours == theirs
    assert ours["needs_input_grad"] == (False, True)
    assert ours["grad_v"] == ([0.0, 0.0] if materialize else None)
    assert ours["indices_requires_grad"] is False
    assert ours["x.grad"] == [10.0, 10.0]
