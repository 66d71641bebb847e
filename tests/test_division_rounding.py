"""``//``, ``%``, ``floor_divide``, ``remainder``, ``fmod`` and ``div(rounding_mode=)``:
values, dtypes, gradients and errors as in PyTorch 2 (the float cases and their gradients
are rows of the op table, tests/op_cases_tensor_ops.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg

INTS = [7, -7, 5, -5, 0, 9]
DIVISORS = [2, 2, -3, -3, 4, -4]


def torch_or_skip():
    return pytest.importorskip("torch")


# --- integers stay integers, rounded toward -inf (floor) or toward 0 (trunc) --------------


@pytest.mark.parametrize("op", ["//", "%", "fmod", "floor", "trunc"])
def test_integer_division_matches_pytorch_values_and_dtype(op):
    torch = torch_or_skip()

    def run(lib, a, b):
        return {"//": lambda: a // b, "%": lambda: a % b, "fmod": lambda: lib.fmod(a, b),
                "floor": lambda: lib.div(a, b, rounding_mode="floor"),
                "trunc": lambda: a.div(b, rounding_mode="trunc")}[op]()

    ours = run(mg, mg.tensor(INTS), mg.tensor(DIVISORS))
    theirs = run(torch, torch.tensor(INTS), torch.tensor(DIVISORS))
    assert ours.tolist() == theirs.tolist()
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.") == "int64"


@pytest.mark.parametrize("left, right", [
    ("int", 2.5), ("int", "float"), ("float", "int"), (3, "int"), (4.5, "int"),
    ("double", "int"), ("int", 2),
])
def test_mixed_dtypes_promote_as_in_pytorch(left, right):
    torch = torch_or_skip()

    def make(lib, value):
        if value == "int":
            return lib.tensor([7, -7, 5])
        if value == "float":
            return lib.tensor([2.0, 2.5, -1.5])
        if value == "double":
            return lib.tensor(np.array([2.0, 2.5, -1.5]))
        return value

    for name in ("floordiv", "mod"):
        ours = (make(mg, left) // make(mg, right)) if name == "floordiv" else \
            (make(mg, left) % make(mg, right))
        theirs = (make(torch, left) // make(torch, right)) if name == "floordiv" else \
            (make(torch, left) % make(torch, right))
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), name
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_float_division_by_zero_gives_inf_and_nan_as_in_pytorch():
    torch = torch_or_skip()
    values = [5.5, -5.5, 0.0]
    for op in (lambda a: a // 0.0, lambda a: a % 0.0, lambda a: a.fmod(0.0),
               lambda a: a.div(0.0, rounding_mode="trunc")):
        np.testing.assert_array_equal(op(mg.tensor(values)).numpy(),
                                      op(torch.tensor(values)).numpy())


@pytest.mark.parametrize("op", [
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a.fmod(b),
    lambda a, b: a.div(b, rounding_mode="trunc"),
])
def test_integer_division_by_zero_raises_as_in_pytorch(op):
    torch = torch_or_skip()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        op(torch.tensor([1, 2]), torch.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError") as error:
        op(mg.tensor([1, 2]), mg.tensor([0, 1]))
    assert "division by zero" in str(error.value)


def test_bool_floor_division_is_not_implemented_as_in_pytorch():
    flags = mg.tensor([True, False])
    with pytest.raises(NotImplementedError, match="bool"):
        flags // flags


def test_unknown_rounding_mode_names_the_choices():
    with pytest.raises(ValueError, match="None, 'trunc', or 'floor' but found 'round'"):
        mg.tensor([1.0]).div(2.0, rounding_mode="round")


# --- gradients: div(rounding_mode=) gives zeros, // has none, % and fmod have one ---------


def test_div_with_rounding_mode_has_a_zero_gradient_as_in_pytorch():
    torch = torch_or_skip()
    x = mg.tensor([1.5, -2.5, 3.0], requires_grad=True)
    y = mg.tensor([0.7, 0.7, -1.1], requires_grad=True)
    x.div(y, rounding_mode="floor").sum().backward()
    tx = torch.tensor([1.5, -2.5, 3.0], requires_grad=True)
    ty = torch.tensor([0.7, 0.7, -1.1], requires_grad=True)
    tx.div(ty, rounding_mode="floor").sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())
    assert not x.grad.numpy().any()


def test_floor_divide_backward_raises_as_in_pytorch():
    torch = torch_or_skip()
    tx = torch.tensor([1.5, -2.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="floor_divide"):
        (tx // 0.5).sum().backward()
    x = mg.tensor([1.5, -2.5], requires_grad=True)
    quotient = x // 0.5
    assert quotient.requires_grad  # as in PyTorch: the error comes at backward
    with pytest.raises(RuntimeError, match="floor_divide.*rounding_mode='floor'"):
        quotient.sum().backward()


def test_number_remainder_tensor_has_no_derivative_as_in_pytorch():
    torch = torch_or_skip()
    with pytest.raises(RuntimeError, match="remainder"):
        (5.0 % torch.tensor([1.5, 2.5], requires_grad=True)).sum().backward()
    with pytest.raises(RuntimeError, match="remainder"):
        (5.0 % mg.tensor([1.5, 2.5], requires_grad=True)).sum().backward()


def test_remainder_and_fmod_pass_float64_gradcheck():
    rng = np.random.default_rng(3)
    x = mg.tensor(rng.uniform(-4, 4, (3, 4)), requires_grad=True)
    y = mg.tensor(rng.uniform(0.5, 2, 4) * np.array([1, -1, 1, -1]), requires_grad=True)
    assert mg.gradcheck(lambda x, y: x % y, (x, y))
    assert mg.gradcheck(lambda x, y: mg.fmod(x, y), (x, y))
    assert mg.gradcheck(lambda x, y: mg.remainder(x, y), (x, y))
    assert mg.gradcheck(lambda x, y: x.div(y, rounding_mode="trunc"), (x, y))


# --- in place ------------------------------------------------------------------------------


def test_in_place_floor_divide_and_remainder_on_integers():
    torch = torch_or_skip()
    ours, theirs = mg.tensor(INTS), torch.tensor(INTS)
    ours //= 2
    theirs //= 2
    assert ours.tolist() == theirs.tolist()
    ours %= 3
    theirs %= 3
    assert ours.tolist() == theirs.tolist() and str(ours.dtype) == "int64"


@pytest.mark.parametrize("divisor", [2.5, "float tensor"])
def test_in_place_floor_divide_of_integers_by_a_float_raises_as_in_pytorch(divisor):
    torch = torch_or_skip()

    def run(lib):
        t = lib.tensor(INTS)
        with pytest.raises(RuntimeError) as caught:
            t //= lib.tensor([2.5] * len(INTS)) if divisor == "float tensor" else divisor
        return t, str(caught.value)

    (ours, told), (theirs, pytorch_told) = run(mg), run(torch)
    assert "result type Float can't be cast to the desired output type Long" in pytorch_told
    assert "result type Float can't be cast to the desired output type Long" in told
    for words in ("floor_divide_ (//=)", "float32", "int64", f"shape ({len(INTS)},)"):
        assert words in told
    assert ours.tolist() == theirs.tolist() == INTS and ours._version == 0


def test_in_place_fmod_of_a_non_leaf_is_recorded():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.fmod_(2.0)  # fmod's df/dx = 1
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_the_ops_without_a_derivative_say_so_and_raise_at_backward():
    for function in (mg.ops.FloorDivide, mg.ops.ScalarRemainder):
        assert function.no_derivative
    x = mg.tensor([1.5, 2.5], requires_grad=True)
    for result in (x // 2.0, 3.0 % x, mg.floor_divide(x, 2.0), mg.remainder(3.0, x)):
        assert result.requires_grad
        with pytest.raises(RuntimeError, match="not implemented"):
            result.sum().backward()
