"""Custom Functions and their Context: the contract of API.md's 'Function and Context'."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg


class Mul(mg.Function):
    """The example of API.md, as a user would write it."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x


class MulSetupContext(mg.Function):
    """The PyTorch 2 form: forward without ctx, then setup_context."""

    @staticmethod
    def forward(x, y):
        return x * y

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y = inputs
        ctx.save_for_backward(x, y)

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x


def leaves(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [mg.Tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


@pytest.mark.parametrize("function", [Mul, MulSetupContext])
def test_custom_function_gives_value_and_gradients(function):
    a, b = leaves((3,), (3,))
    z = function.apply(a, b)
    np.testing.assert_allclose(z.numpy(), a.numpy() * b.numpy())
    z.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.numpy())
    np.testing.assert_allclose(b.grad.numpy(), a.numpy())


def test_forward_receives_numpy_arrays_and_other_arguments_unchanged():
    received = {}

    class Scale(mg.Function):
        @staticmethod
        def forward(ctx, x, factor, *, offset=0.0):
            received.update(x=x, factor=factor, offset=offset)
            return x * factor + offset

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None

    (x,) = leaves((2,))
    Scale.apply(x, 3, offset=1.5)
    assert type(received["x"]) is np.ndarray and np.shares_memory(received["x"], x.numpy())
    assert not received["x"].flags.writeable  # the user's Function gets a read-only view
    assert received["factor"] == 3 and received["offset"] == 1.5


def test_a_python_number_can_be_an_input():
    (a,) = leaves((3,))
    z = Mul.apply(a, 2.0)
    z.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 2.0))


def test_needs_input_grad_has_one_bool_per_input():
    seen = []

    class Record(mg.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            seen.append(ctx.needs_input_grad)
            return x * y * z

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, grad_output, None

    Record.apply(mg.tensor([1.0], requires_grad=True), mg.tensor([2.0]), 3.0)
    assert seen[-1] == (True, False, False)
    Record.apply(mg.tensor([1.0]), mg.tensor([2.0], requires_grad=True), 3.0)
    assert seen[-1] == (False, True, False)


def test_backward_may_return_none_for_inputs_that_need_no_gradient():
    class OnlyFirst(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad_output):
            needs_x, needs_y = ctx.needs_input_grad
            return (grad_output if needs_x else None), (grad_output if needs_y else None)

    x, y = mg.tensor([1.0, 2.0], requires_grad=True), mg.tensor([3.0, 4.0])
    OnlyFirst.apply(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(2))
    assert y.grad is None


class ValueAndArgmax(mg.Function):
    """Two outputs: the values (differentiable) and an index (marked non-differentiable)."""

    @staticmethod
    def forward(ctx, x):
        index = np.argmax(x, keepdims=True)
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(x)
        return x * 2, index

    @staticmethod
    def backward(ctx, grad_values, grad_index):
        return grad_values * 2


def test_mark_non_differentiable_output_gets_no_history():
    (x,) = leaves((4,))
    values, index = ValueAndArgmax.apply(x)
    assert index.grad_fn is None and not index.requires_grad
    assert values.grad_fn is not None and values.requires_grad


def test_mark_non_differentiable_leaves_other_outputs_differentiable():
    (x,) = leaves((4,))
    values, _ = ValueAndArgmax.apply(x)
    values.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2.0))


def make_two_outputs(materialize: bool, received: list):
    class TwoOutputs(mg.Function):
        """f(x) = (2x, 3x)"""

        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grad_double, grad_triple):
            received.append((grad_double, grad_triple))
            grad = 0
            if grad_double is not None:
                grad = grad + 2 * grad_double
            if grad_triple is not None:
                grad = grad + 3 * grad_triple
            return grad

    return TwoOutputs


def test_multi_output_function_returns_a_tuple_of_tensors():
    (x,) = leaves((3,))
    outputs = make_two_outputs(True, []).apply(x)
    assert isinstance(outputs, tuple) and len(outputs) == 2
    assert all(isinstance(o, mg.Tensor) for o in outputs)
    np.testing.assert_allclose(outputs[0].numpy(), 2 * x.numpy())
    np.testing.assert_allclose(outputs[1].numpy(), 3 * x.numpy())
    assert outputs[0].grad_fn is outputs[1].grad_fn


def test_multi_output_backward_receives_one_gradient_per_output():
    received = []
    (x,) = leaves((3,))
    double, triple = make_two_outputs(True, received).apply(x)
    (double.sum() + (triple * 5).sum()).backward()
    (grad_double, grad_triple), = received
    np.testing.assert_allclose(grad_double, np.ones(3))
    np.testing.assert_allclose(grad_triple, np.full(3, 5.0))
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2 + 15.0))


def test_materialize_grads_by_default_gives_zeros_for_an_unused_output():
    received = []
    (x,) = leaves((3,))
    double, _ = make_two_outputs(True, received).apply(x)
    double.sum().backward()
    (_, grad_triple), = received
    assert isinstance(grad_triple, np.ndarray)
    np.testing.assert_array_equal(grad_triple, np.zeros(3))


def test_set_materialize_grads_false_gives_none_for_an_unused_output():
    received = []
    (x,) = leaves((3,))
    double, _ = make_two_outputs(False, received).apply(x)
    double.sum().backward()
    (grad_double, grad_triple), = received
    assert grad_triple is None
    np.testing.assert_allclose(grad_double, np.ones(3))
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))


def test_free_attributes_on_ctx_reach_backward():
    class Power(mg.Function):
        @staticmethod
        def forward(ctx, x, exponent):
            ctx.exponent = exponent
            ctx.save_for_backward(x)
            return x ** exponent

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * ctx.exponent * x ** (ctx.exponent - 1), None

    (x,) = leaves((4,))
    Power.apply(x, 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy() ** 2)


def test_saved_tensors_come_back_in_order():
    (x,) = leaves((2,))
    y = Mul.apply(x, mg.tensor([5.0, 6.0], dtype="float64"))
    first, second = y.grad_fn.ctx.saved_tensors
    # x's own array, seen read-only (a Function written outside minigrad cannot change it)
    assert np.shares_memory(first, x.numpy()) and first.shape == x.shape
    assert not first.flags.writeable
    np.testing.assert_array_equal(second, [5.0, 6.0])


def test_engine_sums_a_gradient_over_broadcast_dimensions():
    class BroadcastAdd(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, grad_output  # the output's shape, not the inputs'

    x, y = leaves((3, 1), (4,))
    upstream = np.random.default_rng(1).standard_normal((3, 4))
    BroadcastAdd.apply(x, y).backward(upstream)
    np.testing.assert_allclose(x.grad.numpy(), upstream.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(y.grad.numpy(), upstream.sum(axis=0))


def test_engine_casts_a_gradient_to_the_inputs_dtype():
    class Float64Gradient(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x.copy()

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.astype(np.float64)

    x = mg.tensor([1.0, 2.0], requires_grad=True)
    Float64Gradient.apply(x).sum().backward()
    assert x.grad.dtype == np.float32


# --- graph nodes ------------------------------------------------------------------------------


def test_graph_node_exposes_name_function_ctx_and_inputs():
    a, b = leaves((2,), (2,))
    node = Mul.apply(a, b).grad_fn
    assert node.name == "Mul" == Mul.oper
    assert node.function is Mul
    assert isinstance(node.ctx, mg.Context) and mg.FunctionCtx is mg.Context
    assert len(node.inputs) == 2 and node.inputs[0] is a and node.inputs[1] is b


def test_graph_node_inputs_leave_out_numbers():
    (a,) = leaves((2,))
    node = Mul.apply(a, 3.0).grad_fn
    assert len(node.inputs) == 1 and node.inputs[0] is a


def test_graph_node_group_is_none_outside_a_group():
    (a,) = leaves((2,))
    assert (a * 2).grad_fn.group is None


def test_graph_node_id_is_a_small_increasing_counter():
    (a,) = leaves((2,))
    first = a * 2
    second = first + 1
    third = second.exp()
    ids = [t.grad_fn.id for t in (first, second, third)]
    assert all(isinstance(i, int) for i in ids)
    assert ids[1] == ids[0] + 1 and ids[2] == ids[1] + 1
    assert ids[0] != id(first.grad_fn)
    assert ids[0] < 10_000_000  # a counter, not a memory address


def test_oper_defaults_to_the_class_name_and_can_be_set():
    class Square(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

    class Cube(mg.Function):
        oper = "x^3"

        @staticmethod
        def forward(ctx, x):
            return x * x * x

    (a,) = leaves((2,))
    assert Square.oper == "Square" and Square.apply(a).grad_fn.name == "Square"
    assert Cube.apply(a).grad_fn.name == "x^3"


def test_non_differentiable_function_records_no_history():
    class Sign(mg.Function):
        differentiable = False

        @staticmethod
        def forward(ctx, x):
            return np.sign(x)

    (a,) = leaves((3,))
    result = Sign.apply(a)
    assert result.grad_fn is None and not result.requires_grad
    np.testing.assert_array_equal(result.numpy(), np.sign(a.numpy()))


def test_lazy_mode_uses_a_custom_output_shape():
    class Outer(mg.Function):
        """f(x, y) = x y^T for vectors: shape (len x, len y), not the broadcast shape"""

        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return np.outer(x, y)

        @staticmethod
        def output_shape(x, y):
            return (x.shape[0], y.shape[0])

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return grad_output @ y, grad_output.T @ x

    x, y = leaves((3,), (5,))
    with mg.lazy():
        z = Outer.apply(x, y)
        assert not z.is_realized and z.shape == (3, 5)
        z.realize()
    np.testing.assert_allclose(z.numpy(), np.outer(x.numpy(), y.numpy()))
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, y.numpy().sum()))
    np.testing.assert_allclose(y.grad.numpy(), np.full(5, x.numpy().sum()))


@pytest.mark.parametrize("make", [
    lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
    lambda x, y: x ** y, lambda x, y: x.maximum(y), lambda x, y: x.minimum(y),
    lambda x, y: x @ y, lambda x, y: x[0] @ y[0], lambda x, y: mg.where(x > 0, x, y),
], ids=["add", "sub", "mul", "div", "pow", "maximum", "minimum", "matmul", "dot", "where"])
@pytest.mark.parametrize("needs", ["x", "y"])
def test_binary_backwards_compute_no_gradient_for_an_input_that_needs_none(make, needs):
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=needs == "x")
    y = mg.tensor([[2.0, 1.0], [0.5, 3.0]], requires_grad=needs == "y")
    node = make(x, y).grad_fn
    grads = node.function.backward(node, np.ones(node.output_meta[0][0], np.float32))
    positions = [i for i, a in enumerate(node.args) if isinstance(a, mg.Tensor)]
    for position, wanted in zip(positions[-2:], (needs == "x", needs == "y")):
        assert (grads[position] is not None) == wanted, (node.name, position)
