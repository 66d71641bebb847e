"""Lazy mode, driven by the op table: every op promises its result's shape and dtype
before computing anything, and realizing gives exactly what eager mode gives."""

from __future__ import annotations

import numpy as np
import pytest
from all_cases import CASES
from test_ops import outputs_of

import minigrad as mg


def float_outputs(outputs: list) -> list:
    return [t for t in outputs if t.dtype.kind == "f"]


def run_case(case, lazy: bool):
    inputs = [mg.tensor(a, requires_grad=case.differentiable) for a in case.make_inputs()]
    with mg.lazy(lazy):
        result = case.fn(*inputs)
    return inputs, outputs_of(result)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_lazy_results_have_the_eager_shape_and_dtype_before_realize(case):
    _, eager = run_case(case, lazy=False)
    _, lazy = run_case(case, lazy=True)
    assert [(t.shape, t.dtype) for t in lazy] == [(t.shape, t.dtype) for t in eager]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_realized_lazy_values_and_gradients_equal_eager_ones(case):
    eager_inputs, eager = run_case(case, lazy=False)
    lazy_inputs, lazy = run_case(case, lazy=True)
    for e, t in zip(eager, lazy):
        assert t.realize() is t
        np.testing.assert_array_equal(t.numpy(), e.numpy())
        assert t.requires_grad == e.requires_grad
    if not case.differentiable:
        return
    gradients = case.upstream_gradients([t.shape for t in float_outputs(eager)])
    for outputs in (eager, lazy):
        for output, gradient in zip(float_outputs(outputs), gradients):
            if output.requires_grad:
                output.backward(gradient.astype(output.dtype), retain_graph=True)
    for e, t in zip(eager_inputs, lazy_inputs):
        assert (e.grad is None) == (t.grad is None)
        if e.grad is not None:
            np.testing.assert_array_equal(t.grad.numpy(), e.grad.numpy())


def test_most_ops_are_really_deferred():
    deferred = 0
    for case in CASES:
        _, lazy = run_case(case, lazy=True)
        deferred += all(not t.is_realized for t in lazy)
    assert deferred >= 0.8 * len(CASES)  # in-place ops and boolean masks realize early


def test_a_float_output_marked_non_differentiable_is_computed_without_history():
    class Two(mg.Function):
        @staticmethod
        def forward(ctx, x):
            out, aux = x * 2, x + 1
            ctx.mark_non_differentiable(aux)
            return out, aux

        @staticmethod
        def output_shape(x):
            return tuple(x.shape), tuple(x.shape)

        @staticmethod
        def backward(ctx, grad, grad_aux):
            return grad * 2

    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.lazy():
        out, aux = Two.apply(x)
        out.sum().backward()  # realizes both outputs
    assert (aux.requires_grad, aux.grad_fn) == (False, None)
    np.testing.assert_array_equal(aux.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


class _TwoOutputs(mg.Function):
    """A user's Function with two outputs and no output_shape: lazy mode cannot know
    before its forward runs that it has two."""

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, grad_a, grad_b):
        return grad_a * 2 + grad_b * 3


def test_a_forward_returning_more_outputs_than_lazy_mode_made_is_an_error_not_wrong_rows():
    x = mg.tensor(np.ones((2, 3)), requires_grad=True)
    with mg.lazy(), pytest.raises(ValueError, match=r"_TwoOutputs.*no output_shape.*"
                                                    r"returned 2 output\(s\)"):
        a, b = _TwoOutputs.apply(x)  # one deferred (2, 3) result, whose rows these would be
        b.numpy()  # (eagerly b is x * 3; it must not be a row of x * 2)
    eager_a, eager_b = _TwoOutputs.apply(x)  # outside lazy mode: right
    np.testing.assert_array_equal(eager_b.numpy(), np.full((2, 3), 3.0))


def test_an_output_shape_promising_more_outputs_than_forward_returns_is_an_error():
    class Three(_TwoOutputs):
        @staticmethod
        def output_shape(x):
            return tuple(x.shape), tuple(x.shape), tuple(x.shape)

    x = mg.tensor(np.ones((2, 3)), requires_grad=True)
    with mg.lazy():
        results = Three.apply(x)
        assert len(results) == 3
        with pytest.raises(ValueError, match=r"output_shape\(\) gave 3 shape\(s\).*"
                                             r"returned 2 output\(s\)"):
            results[2].numpy()
