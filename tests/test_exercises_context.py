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


def saves_output_and_input(ctx, x):
    s = sigmoid(x)
    ctx.save_for_backward(s, x)
    return s


@pytest.mark.parametrize("forward, words", [
    (saves_input, "saved its input x, not its output"),
    (saves_output_and_input, "saved its input x as well as its output s"),
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


def computes_then_discards(ctx, g):
    a, b = ctx.saved_tensors
    grad_a, grad_b = g @ b.T, a.T @ g
    return (grad_a if ctx.needs_input_grad[0] else None,
            grad_b if ctx.needs_input_grad[1] else None)


def returns_a_list(ctx, g):
    return list(skips(ctx, g))


def no_else(ctx, g):
    a, b = ctx.saved_tensors
    grad_a = g @ b.T if ctx.needs_input_grad[0] else None
    if ctx.needs_input_grad[1]:
        grad_b = a.T @ g
    return grad_a, grad_b


def check_matmul(backward, **kwargs):
    check_needs_input_grad(function("MyMatMul", matmul_forward, backward), [(3, 4), (4, 2)],
                           lambda a, b: a @ b, mistakes=MATMUL_MISTAKES, **kwargs)


@pytest.mark.parametrize("saved_only_for", [None, {0: 1, 1: 0}])
def test_a_backward_that_skips_unneeded_gradients_passes(capsys, saved_only_for):
    check_matmul(skips, saved_only_for=saved_only_for)
    out = capsys.readouterr().out
    assert "3 settings of needs_input_grad" in out
    assert ("the work skipped" in out) == (saved_only_for is not None)


def test_a_gradient_computed_and_then_thrown_away_is_caught():
    told = fails(check_matmul, computes_then_discards, saved_only_for={0: 1, 1: 0})
    assert "needs_input_grad = (True, False): it used a (input 0, saved as array 0)" in told
    assert "only the gradient for input 1 (b) needs" in told
    assert "grad_a, grad_b = g @ b.T, a.T @ g" in told  # the student's line
    assert "compute it only inside `if ctx.needs_input_grad[1]:`" in told
    assert "the flag of input 1 itself, not another input's" in fails(
        check_matmul, reads_the_other_flag, saved_only_for={0: 1, 1: 0})
    # without saved_only_for the check cannot see the work; with it, the right one passes
    check_matmul(computes_then_discards)


@pytest.mark.parametrize("backward, words", [
    (computes_both, "ctx.needs_input_grad[1] is False: nobody will use it"),
    (reads_the_other_flag, "not another index"),
    (transposed, "the gradient is transposed"),
    (returns_a_list, "backward returned a list (2 item(s)); return a tuple"),
    (no_else, "give it a value on every path (e.g. `else: grad_b = None`)"),
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


def _truthiness(ctx, grad_sin, grad_cos):
    (x,) = ctx.saved_tensors
    grad = np.zeros_like(x)
    if grad_sin:
        grad = grad + grad_sin * np.cos(x)
    if grad_cos:
        grad = grad - grad_cos * np.sin(x)
    return grad


def test_an_array_used_as_a_condition_is_told_to_test_for_none():
    told = fails(check_sincos, sincos_forward, _truthiness)
    assert "truth value of an array" in told
    assert "write `if grad is not None:`" in told


def test_the_matmul_shape_hint_uses_the_chapter_s_shapes():
    def swapped(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b, a.T @ g

    told = fails(check_matmul, swapped)
    assert "a (m, n), b (n, k) and grad_output (m, k), grad_a = grad_output @ b.T " \
           "(shapes (m, k) @ (k, n))" in told


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


def saves_a_transpose(ctx, x, s):
    ctx.save_for_backward(x.T, s)
    return x * s[:, None]


def from_transpose(ctx, g):
    xt, s = ctx.saved_tensors
    return g * s[:, None], (g * xt.T).sum(axis=1)


def keeps_attributes(ctx, x, s):
    ctx.x, ctx.s = x, s
    return x * s[:, None]


def from_attributes(ctx, g):
    return g * ctx.s[:, None], (g * ctx.x).sum(axis=1)


def check_scale_rows(forward, backward, modified=(0, 1)):
    check_in_place_safety(function("MyScaleRows", forward, backward), [(3, 4), (3,)],
                          lambda x, s: x * s.unsqueeze(1), modified=modified,
                          mistakes=SCALE_ROWS_MISTAKES)


def test_saving_the_inputs_lets_the_version_counter_catch_the_edit(capsys):
    check_scale_rows(saves_inputs, from_inputs)
    out = capsys.readouterr().out
    assert "input 0, x: caught by the version counter" in out
    assert "input 1, s: caught by the version counter" in out


def test_saving_a_copy_keeps_the_gradient_right(capsys):
    check_scale_rows(saves_a_copy, from_column)
    assert "input 1, s: the gradient stays right, backward does not read the edited array" \
        in capsys.readouterr().out


def test_saving_a_view_is_caught_by_the_version_counter_now():
    """Issue 30: the version check compares memory, not array identity, so an edit of an
    input that forward saved a NumPy view of raises in backward: safe, so the check passes
    (the notebook's text about this mistake needs updating)."""
    check_scale_rows(saves_a_view, from_column)
    check_scale_rows(saves_a_transpose, from_transpose)


def test_arrays_kept_as_ctx_attributes_are_named():
    told = fails(check_scale_rows, keeps_attributes, from_attributes)
    assert "kept input 0 (x) as a ctx attribute (ctx.x = ...)" in told
    assert "NumPy view" not in told


def test_inputs_kept_together_in_a_ctx_tuple_are_named_as_an_attribute():
    def keeps_a_tuple(ctx, x, s):
        ctx.kept = (x, s)
        return x * s[:, None]

    def from_the_tuple(ctx, g):
        x, s = ctx.kept
        return g * s[:, None], (g * x).sum(axis=1)

    told = fails(check_scale_rows, keeps_a_tuple, from_the_tuple)
    assert "kept input 0 (x) as a ctx attribute (ctx.kept = ...)" in told


def test_inputs_kept_outside_ctx_are_named_without_guessing_a_view():
    """Issue 30: a saved NumPy view no longer escapes the version check, so the message
    that blamed one is gone; an input kept outside ctx gets the message that fits."""
    kept = {}

    def keeps_a_global(ctx, x, s):
        kept["x"], kept["s"] = x, s
        return x * s[:, None]

    def from_the_global(ctx, g):
        return g * kept["s"][:, None], (g * kept["x"]).sum(axis=1)

    told = fails(check_scale_rows, keeps_a_global, from_the_global)
    assert "from somewhere the version counter does not watch" in told
    assert "NumPy view" not in told


def test_a_gradient_summed_over_the_wrong_axis_is_named():
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * s[:, None], (g * x).sum(axis=0)

    assert "summed over the wrong axis (axis=0" in fails(check_scale_rows, saves_inputs,
                                                        backward)


@pytest.mark.parametrize("grad_s, words", [
    (lambda g, x: g * x, "the gradient for s was not summed"),
    (lambda g, x: (g * x).sum(), "summed over everything"),
    (lambda g, x: (g * x).sum(axis=1, keepdims=True), "size-1 dimensions too many")])
def test_other_wrong_sums_for_s_are_named(grad_s, words):
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * s[:, None], grad_s(g, x)

    assert words in fails(check_scale_rows, saves_inputs, backward)


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
