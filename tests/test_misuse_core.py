"""Misuse of the engine core (issue 16): each mistake is a clear error at once, naming the
Function or hook and what it got, or gives what eager mode (and PyTorch) gives; never a
silently wrong value. After each, the engine must still be in its normal state."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad.state import state


def engine_intact() -> None:
    """Grad mode on, lazy and anomaly off, no group open, and a forward/backward right."""
    assert mg.is_grad_enabled() and not mg.is_lazy() and not mg.is_anomaly_enabled()
    assert state.group is None
    x = mg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = (x * x).exp().sum()
    y.backward()
    expected = 2 * np.array([1.0, -2.0, 3.0]) * np.exp(np.array([1.0, 4.0, 9.0]))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(y.item(), np.exp([1.0, 4.0, 9.0]).sum(), rtol=1e-6)


@pytest.fixture(autouse=True)
def check_engine_afterwards():
    yield
    engine_intact()


# --- a Function's forward returns something that is not an array -----------------------------


def function_returning(value):
    class Returns(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return value

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    return Returns


@pytest.mark.parametrize("value, what", [
    (None, "a NoneType"),
    ("result", "a str"),
    ({"out": np.ones(2)}, "a dict"),
    ([np.ones(2), np.ones(2)], "a list"),
    ((np.ones(2), "oops"), "a tuple whose output 1 is a str"),
    ((), "an empty tuple"),
    (np.array(["a", "b"]), "an array of dtype <U1"),
])
def test_forward_returning_no_array_is_an_error_from_apply_naming_the_function(value, what):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError) as info:
        function_returning(value).apply(x)
    message = str(info.value)
    assert message.startswith("Returns.forward returned " + what)
    assert "a forward must return a NumPy array" in message


def test_forward_returning_a_list_is_told_to_return_a_tuple():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="return a tuple of arrays, or np.stack them"):
        function_returning([np.ones(2)]).apply(x)


def test_forward_returning_no_array_is_an_error_without_grad_too():
    with mg.no_grad(), pytest.raises(TypeError, match="Returns.forward returned a NoneType"):
        function_returning(None).apply(mg.tensor([1.0, 2.0]))


def test_forward_returning_no_array_in_lazy_mode_is_an_error_at_realize():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.lazy():
        y = function_returning("text").apply(x)
    with pytest.raises(TypeError, match="Returns.forward returned a str"):
        y.realize()


def test_forward_returning_a_tuple_of_arrays_stays_legal_with_several_outputs():
    class SplitHalves(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2] * 1.0, x[2:] * 3.0

        @staticmethod
        def backward(ctx, grad_first, grad_second):
            return np.concatenate([grad_first, grad_second * 3.0])

    x = mg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    first, second = SplitHalves.apply(x)
    (first.sum() + second.sum()).backward()
    np.testing.assert_allclose(second.numpy(), [9.0, 12.0])
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0, 3.0, 3.0])


def test_forward_returning_a_numpy_scalar_or_a_number_stays_legal():
    class Total(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()  # a NumPy scalar, not an array

        @staticmethod
        def backward(ctx, grad_output):
            return np.ones(2) * grad_output

    x = mg.tensor([1.0, 2.0], requires_grad=True, dtype=mg.float64)
    y = Total.apply(x)
    y.backward()
    assert y.item() == 3.0 and y.shape == ()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])
    assert function_returning(2.5).apply(x).item() == 2.5


# --- a tensor hook returns a gradient of the wrong shape ---------------------------------------


def test_hook_returning_the_wrong_shape_names_the_hook_and_the_tensor():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    hidden = x * 2.0
    hidden.label = "hidden"

    def widen_the_gradient(grad):
        return mg.ones(5)

    hidden.register_hook(widen_the_gradient)
    with pytest.raises(mg.ShapeError) as info:
        hidden.sum().backward()
    message = str(info.value)
    assert message.startswith("hook 'widen_the_gradient' registered on the tensor 'hidden' "
                              "(shape (3,), made by Mul #")
    assert "returned a gradient of shape (5,)" in message
    assert "given has shape (3,)" in message
    assert "Mul.backward" not in message  # the hook is to blame, not the Function


def test_hook_on_a_leaf_returning_the_wrong_shape_names_the_hook_and_the_leaf():
    weight = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    weight.register_hook(lambda grad: grad.sum(0))
    with pytest.raises(mg.ShapeError, match=r"hook '<lambda>' registered on the leaf tensor "
                                            r"\(shape \(2, 2\)\) returned a gradient of "
                                            r"shape \(2,\)"):
        (weight * 3.0).sum().backward()
    assert weight.grad is None  # nothing half-accumulated


def test_hook_editing_a_broadcast_gradient_in_place_is_told_to_return_a_new_one():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    hidden = x * 2.0
    hidden.label = "hidden"

    def halve_in_place(grad):
        grad.mul_(0.5)

    handle = hidden.register_hook(halve_in_place)
    with pytest.raises(mg.ShapeError) as info:
        hidden.sum().backward()  # sum's backward broadcasts: a read-only gradient
    message = str(info.value)
    assert message.startswith("hook 'halve_in_place' registered on the tensor 'hidden' ")
    assert "edited the gradient it was given in place" in message
    assert "return e.g. grad * 0.5" in message
    assert x.grad is None
    handle.remove()  # the engine's state is intact: a hook that returns works after
    hidden.register_hook(lambda grad: grad * 0.5)
    hidden.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0, 1.0])


def test_hook_returning_the_right_shape_replaces_the_gradient():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    hidden = x * 2.0
    hidden.register_hook(lambda grad: grad * 10.0)
    hidden.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0, 20.0])


def test_hook_changing_the_shape_is_refused_as_in_pytorch():
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = t * 2.0
    h.register_hook(lambda grad: torch.ones(5))
    with pytest.raises(RuntimeError, match="hook"):
        h.sum().backward()
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    hidden = x * 2.0
    hidden.register_hook(lambda grad: mg.ones(5))
    with pytest.raises(RuntimeError, match="hook"):  # a ShapeError is a RuntimeError too
        hidden.sum().backward()


# --- lazy mode: an in-place write before realize() ---------------------------------------------


def lazy_and_eager(program):
    """``program()`` run eagerly and in lazy mode (realized at the end): the values."""
    eager = [t.numpy().copy() for t in program()]
    with mg.lazy():
        results = program()
    mg.realize(*results)
    return eager, [t.numpy() for t in results]


@pytest.mark.parametrize("write", [
    lambda x: x.add_(10.0),
    lambda x: x.mul_(0.0),
    lambda x: x.__setitem__(0, 100.0),
    lambda x: x.fill_(7.0),
    lambda x: x.copy_(mg.tensor([4.0, 5.0, 6.0])),
])
def test_in_place_write_after_a_deferred_read_gives_the_eager_values(write):
    def program():
        x = mg.tensor([1.0, 2.0, 3.0])
        before = x * 2.0  # deferred in lazy mode: must still see 1, 2, 3
        write(x)
        after = x * 3.0  # must see the written values
        return before, after, x

    eager, lazy = lazy_and_eager(program)
    np.testing.assert_array_equal(eager[0], [2.0, 4.0, 6.0])
    for got, expected in zip(lazy, eager):
        np.testing.assert_array_equal(got, expected)


def test_in_place_write_through_a_view_runs_the_deferred_reads_of_its_base_first():
    def program():
        x = mg.tensor([1.0, 2.0, 3.0, 4.0])
        row = x[:2]  # a view of x
        total = x.sum()  # deferred in lazy mode
        row.mul_(0.0)  # writes x's memory
        return total, x

    eager, lazy = lazy_and_eager(program)
    np.testing.assert_array_equal(eager[0], 10.0)
    np.testing.assert_array_equal(lazy[0], eager[0])
    np.testing.assert_array_equal(lazy[1], [0.0, 0.0, 3.0, 4.0])


def test_data_update_of_a_parameter_runs_the_deferred_reads_first():
    def program():
        weight = mg.tensor([1.0, 2.0], requires_grad=True)
        out = weight * 3.0  # deferred in lazy mode
        with mg.no_grad():
            weight.data += 1.0  # as a hand-written optimizer step does
        return out, weight

    eager, lazy = lazy_and_eager(program)
    np.testing.assert_array_equal(lazy[0], [3.0, 6.0])
    np.testing.assert_array_equal(lazy[0], eager[0])


def test_in_place_write_in_lazy_mode_keeps_the_gradients_right():
    def gradients(lazy):
        x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with mg.lazy(lazy):
            hidden = x * 1.0
            squared = hidden * hidden  # saves hidden's values for backward
            shifted = hidden.clone()
            shifted.add_(5.0)
            loss = squared.sum() + shifted.sum()
        loss.backward()
        return loss.item(), x.grad.numpy()

    eager_loss, eager_grad = gradients(False)
    lazy_loss, lazy_grad = gradients(True)
    assert lazy_loss == eager_loss == 14.0 + 21.0
    np.testing.assert_allclose(lazy_grad, eager_grad)
    np.testing.assert_allclose(lazy_grad, [3.0, 5.0, 7.0])


def test_in_place_write_of_a_saved_input_in_lazy_mode_is_caught_as_in_eager_mode():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with mg.lazy():
        hidden = x * 1.0
        out = hidden.exp()  # saves its output; hidden is its input
        hidden.add_(1.0)  # eager: out was computed from the old hidden
        loss = out.sum()
    loss.backward()  # exp saved its result, not its input: nothing to complain about
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0, 3.0]), rtol=1e-6)
    with mg.lazy():
        hidden = x * 1.0
        squared = hidden * hidden  # saves hidden itself
        hidden.add_(1.0)
        loss = squared.sum()
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()


def test_lazy_in_place_matches_pytorch():
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.0, 2.0, 3.0])
    before = t * 2.0
    t.add_(10.0)
    after = t * 3.0
    with mg.lazy():
        x = mg.tensor([1.0, 2.0, 3.0])
        mine_before = x * 2.0
        x.add_(10.0)
        mine_after = x * 3.0
    mg.realize(mine_before, mine_after)
    np.testing.assert_array_equal(mine_before.numpy(), before.numpy())
    np.testing.assert_array_equal(mine_after.numpy(), after.numpy())


# --- anomaly mode: a NaN that was already in an op's input --------------------------------------


def test_anomaly_for_a_nan_already_in_the_input_says_the_input_was_nan():
    x = mg.tensor([1.0, float("nan"), 3.0], requires_grad=True)
    x.label = "x"
    with mg.detect_anomaly(), pytest.raises(FloatingPointError) as info:
        x.exp()
    message = str(info.value)
    assert message.startswith("detect_anomaly: input 0 of Exp (forward) was already NaN "
                              "(shape (3,)) before the op ran")
    assert "not from the op" in message
    assert "input 0 'x': shape (3,), float32" in message


def test_anomaly_for_a_nan_already_in_the_second_input_names_that_input():
    x = mg.tensor([1.0, 2.0])
    y = mg.tensor([1.0, float("nan")])
    with mg.detect_anomaly(), pytest.raises(FloatingPointError,
                                            match="input 1 of Add .*was already NaN"):
        x + y


def test_anomaly_lets_an_inf_that_came_with_the_inputs_through_in_forward():
    """An Inf passed on is no anomaly (issue 30: masking with -inf is correct code); an
    Inf an op makes from finite inputs still is."""
    x = mg.tensor([1.0, 2.0])
    y = mg.tensor([1.0, float("inf")])
    with mg.detect_anomaly():
        assert (x + y).tolist() == [2.0, float("inf")]
    with mg.detect_anomaly(), pytest.raises(FloatingPointError,
                                            match="Div \\(forward\\) produced Inf"):
        x / mg.tensor([1.0, 0.0])


def test_anomaly_for_a_nan_the_op_makes_still_blames_the_op():
    x = mg.tensor([-1.0, 4.0], requires_grad=True)
    with mg.detect_anomaly(), pytest.raises(FloatingPointError) as info:
        x.sqrt()
    message = str(info.value)
    assert message.startswith("detect_anomaly: Sqrt (forward) produced NaN in output 0")
    assert "already" not in message


@pytest.mark.parametrize("make", [
    lambda params: mg.optim.SGD(params, lr=1.0),
    lambda params: mg.optim.Adam(params, lr=1.0),
])
def test_an_optimizer_step_in_lazy_mode_does_not_change_what_a_deferred_op_reads(make):
    def run(lazy: bool):
        w = mg.nn.Parameter(mg.tensor([1.0, 2.0]))
        optimizer = make([w])
        w.grad = mg.tensor([1.0, 1.0])
        if lazy:
            with mg.lazy():
                y = w * 3
                optimizer.step()
            y = y.realize()
        else:
            y = w * 3
            optimizer.step()
        return y.tolist(), w.tolist()

    eager, deferred = run(False), run(True)
    assert deferred == eager and eager[0] == [3.0, 6.0]
    engine_intact()


def test_lbfgs_in_lazy_mode_does_not_change_what_a_deferred_op_reads():
    w = mg.nn.Parameter(mg.tensor([1.0, 2.0], dtype=mg.float64))
    optimizer = mg.optim.LBFGS([w], lr=0.5, max_iter=2)

    def closure():
        optimizer.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with mg.lazy():
        y = w * 3
        optimizer.step(closure)
    assert y.realize().tolist() == [3.0, 6.0]
    assert w.tolist() != [1.0, 2.0]
    engine_intact()


@pytest.mark.parametrize("leaf", [True, False])
def test_a_hook_that_changes_the_gradients_dtype_is_named(leaf):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    watched = x if leaf else x * 2

    def to_double(grad):
        return grad.double()

    watched.register_hook(to_double)
    with pytest.raises(RuntimeError, match=r"hook 'to_double'.*dtype float64.*float32"):
        (watched * 3).sum().backward()
    engine_intact()


# --- a student's first tries at a Function (from the chapter 1 walk-through) -----------


class _Mul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y  # forgot ctx.save_for_backward(x, y)

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x


def test_calling_a_function_class_says_to_use_apply():
    a = mg.randn(3, requires_grad=True)
    with pytest.raises(TypeError, match=r"call _Mul.apply\(\.\.\.\) with the inputs, not _Mul"):
        _Mul(a, a)
    engine_intact()


def test_a_backward_reading_what_forward_never_saved_says_so():
    a, b = mg.randn(3, requires_grad=True), mg.randn(3, requires_grad=True)
    with pytest.raises(ValueError, match=r"_Mul.backward: not enough values to unpack.*"
                                         r"saved nothing.*ctx.save_for_backward"):
        _Mul.apply(a, b).sum().backward()
    engine_intact()


def test_a_backward_returning_a_list_is_told_to_return_a_tuple():
    class ListBackward(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            return [grad_output, grad_output]

    a, b = mg.randn(3, requires_grad=True), mg.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"ListBackward.backward returned 1 gradient.*"
                                           r"2 positional.*a list of 2.*return a tuple"):
        ListBackward.apply(a, b).sum().backward()
    engine_intact()


def test_a_gradient_of_the_wrong_shape_names_both_shapes_and_which_way_broadcast_goes():
    class Shrinks(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.sum()[None, None]

    with pytest.raises(mg.ShapeError if hasattr(mg, "ShapeError") else Exception,
                       match=r"shape \(1, 1\) for input 0, which has shape \(3, 2\).*"
                             r"a larger shape that \(3, 2\) broadcasts to"):
        Shrinks.apply(mg.randn(3, 2, requires_grad=True)).sum().backward()
    engine_intact()
