"""In-place ops on views of tensors with history (issue 29), as PyTorch records them.

An in-place op on a view is recorded on its base: the base's history becomes CopySlices
(the old base with the view's elements replaced by the op of them), and the view, like
every view that overlaps what was written, reads from the new base (AsStrided). Each case
runs the same code on minigrad and on PyTorch; the values and the gradients must match,
and the gradients must match finite differences. PyTorch's refusals are kept.
"""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

X = np.array([[0.3, -1.2, 0.8], [1.5, -0.4, 2.0]])  # away from relu's kink
Z = 0.7


# --- the cases: lib is minigrad or torch; x (2, 3) and z (a number) require grad ------------


def mul_on_a_row(lib, x, z):
    y = x * 2
    y[0].mul_(3)
    return y


def add_on_a_column_slice_then_use_the_view(lib, x, z):
    y = x * 2
    v = y[:, 1:]
    v.add_(1)
    return v


def assign_through_a_flat_view(lib, x, z):
    y = x * 2
    y.view(-1)[2] = z
    return y * y


def relu_of_a_transpose(lib, x, z):
    y = x - 0.5
    h = y.t()
    h.relu_()
    return y


def value_with_grad_times_a_strided_view(lib, x, z):
    y = x * x + 1
    y[:, ::2].mul_(z)
    return y


def view_of_a_view(lib, x, z):
    y = x * 1
    v = y[0]
    v[1:].mul_(5)
    return v


def base_modified_then_an_earlier_view_used(lib, x, z):
    y = x * 1
    v = y[0]
    y.mul_(2)
    return v * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)


def overlapping_views(lib, x, z):
    y = x * 1
    p, q = y[:, :2], y[:, 1:]
    p.mul_(2)
    return q


def copy_into_a_tensor_without_history(lib, x, z):
    y = lib.zeros(4, 3, dtype=lib.float64)
    y[1:3].copy_(x)
    return y * lib.arange(12, dtype=lib.float64).reshape(4, 3)


def augmented_assignment_of_an_item(lib, x, z):
    y = x * 1
    y[0] += z
    return y.exp()


def assign_one_element_then_use_an_earlier_view(lib, x, z):
    y = x * 1
    row = y[0]
    y[0, 1] = z
    return row * row


def several_ops_through_one_view(lib, x, z):
    y = x * 1.5
    v = y[1]
    v.mul_(z)
    v.sub_(x[0])
    return y.sin()


def a_permuted_view_of_three_dims(lib, x, z):
    y = (x * 1).reshape(1, 2, 3)
    y.permute(2, 0, 1)[1:].tanh_()
    return y


CASES = [mul_on_a_row, add_on_a_column_slice_then_use_the_view, assign_through_a_flat_view,
         relu_of_a_transpose, value_with_grad_times_a_strided_view, view_of_a_view,
         base_modified_then_an_earlier_view_used, overlapping_views,
         copy_into_a_tensor_without_history, augmented_assignment_of_an_item,
         assign_one_element_then_use_an_earlier_view,
         several_ops_through_one_view, a_permuted_view_of_three_dims]


def run(lib, case):
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    z = lib.tensor(Z, dtype=lib.float64, requires_grad=True)
    out = case(lib, x, z)
    upstream = np.random.default_rng(0).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(upstream, dtype=lib.float64))
    grads = [None if t.grad is None else t.grad.numpy() for t in (x, z)]
    return out.detach().numpy(), grads


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_values_and_gradients_match_pytorch(case):
    ours, theirs = run(mg, case), run(torch, case)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    for got, expected in zip(ours[1], theirs[1]):
        if expected is None or not expected.any():  # an input the case does not use
            assert got is None or not got.any()
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_gradients_match_finite_differences(case):
    x = mg.tensor(X, dtype=mg.float64, requires_grad=True)
    z = mg.tensor(Z, dtype=mg.float64, requires_grad=True)
    assert mg.autograd.gradcheck(lambda x, z: case(mg, x, z), [x, z])


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_lazy_mode_gives_the_eager_values_and_gradients(case):
    eager = run(mg, case)
    with mg.lazy():
        lazy = run(mg, case)
    np.testing.assert_array_equal(lazy[0], eager[0])
    for got, expected in zip(lazy[1], eager[1]):
        np.testing.assert_array_equal(got, expected)


def test_second_derivatives_through_an_in_place_op_on_a_view():
    x = mg.tensor(X, dtype=mg.float64, requires_grad=True)
    z = mg.tensor(Z, dtype=mg.float64, requires_grad=True)
    assert mg.autograd.gradgradcheck(lambda x, z: value_with_grad_times_a_strided_view(
        mg, x, z).pow(2), [x, z])


def test_the_base_gets_copyslices_and_the_view_asstrided_as_in_pytorch():
    y = mg.tensor(X, requires_grad=True) * 2
    view = y[:, 1:]
    view.add_(1)
    assert y.grad_fn.name == "CopySlices" and view.grad_fn.name == "AsStrided"
    assert view.grad_fn.next_functions[0][0] is y.grad_fn
    assert y._version == view._version == 1


def test_a_view_that_does_not_overlap_the_write_keeps_its_history():
    y = mg.tensor(X, requires_grad=True) * 1
    first, second = y[0], y[1]
    first.mul_(2)
    assert second.grad_fn.name == "GetItem"  # its values did not change


def test_gradcheck_of_setitem_on_a_tensor_with_history():
    x = mg.tensor(X, dtype=mg.float64, requires_grad=True)
    v = mg.tensor([0.5, -0.25], dtype=mg.float64, requires_grad=True)

    def assign(x, v):
        y = x * x
        y[:, 1] = v
        return y

    assert mg.autograd.gradcheck(assign, [x, v])
    assert mg.autograd.gradgradcheck(lambda x, v: assign(x, v).pow(2), [x, v])


# --- what PyTorch refuses, minigrad refuses -------------------------------------------------


def refusal(lib, program):
    with pytest.raises(RuntimeError) as caught:
        program(lib)
    return str(caught.value)


def test_a_view_of_a_leaf_that_requires_grad_cannot_be_modified_in_place():
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        x[0].mul_(2)

    message = "a view of a leaf Variable that requires grad is being used in an in-place"
    assert message in refusal(torch, program)
    told = refusal(mg, program)
    assert message in told and "(3,)" in told and "(2, 3)" in told and "no_grad" in told


@pytest.mark.parametrize("leaf", [True, False], ids=["of a leaf", "of a result"])
def test_a_view_made_in_no_grad_mode_cannot_be_modified_with_grad_mode_on(leaf):
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        y = x if leaf else x * 1
        with lib.no_grad():
            view = y[0]
        view.mul_(2)

    assert "created in no_grad mode" in refusal(torch, program)
    assert "created in no_grad mode" in refusal(mg, program)


@pytest.mark.parametrize("pieces", ["split", "unbind"])
def test_a_piece_of_split_or_unbind_cannot_be_modified_in_place(pieces):
    def program(lib):
        y = lib.tensor(X, requires_grad=True) * 1
        first = y.split(1)[0] if pieces == "split" else y.unbind(0)[0]
        first.mul_(2)

    assert "returns multiple views" in refusal(torch, program)
    assert f"several views that {pieces}() returns" in refusal(mg, program)


def test_an_output_saved_before_a_write_through_a_view_is_still_caught():
    def program(lib):
        y = lib.tensor(X, requires_grad=True).exp()  # exp saves its output, y
        y[1].mul_(2)
        y.sum().backward()

    assert "modified by an inplace operation" in refusal(torch, program)
    assert "Exp" in refusal(mg, program) and "modified by an in-place" in refusal(mg, program)


def test_an_array_saved_before_the_write_is_still_caught_by_the_version_check():
    def program(lib):
        y = lib.tensor(X, requires_grad=True) * 1
        sines = y[0].sin()  # sin saves its input: the memory of y[0]
        y[0].mul_(3)
        sines.sum().backward()

    assert "modified by an inplace operation" in refusal(torch, program)
    assert "Sin" in refusal(mg, program) and "modified by an in-place" in refusal(mg, program)


def test_a_refused_write_changes_neither_values_nor_history():
    x = mg.tensor(X, requires_grad=True)
    view = x[0]
    with pytest.raises(RuntimeError):
        view.mul_(2)
    assert x.tolist() == mg.tensor(X).tolist() and x._version == 0
    assert view.grad_fn.name == "GetItem"


def test_an_expanded_view_is_read_only():
    y = mg.tensor(X, requires_grad=True) * 1
    with pytest.raises(mg.ShapeError, match="read-only"):
        y.expand(2, 2, 3).mul_(2)
    assert y.grad_fn.name == "Mul" and y._version == 0


# --- what is not recorded stays as it was ---------------------------------------------------


def test_a_write_through_a_view_under_no_grad_keeps_the_history():
    x = mg.tensor(X, requires_grad=True)
    y = x * 1
    view = y[0]
    with mg.no_grad():
        view.mul_(2)
    assert y.grad_fn.name == "Mul"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))


def test_a_write_into_a_view_of_a_detached_copy_leaves_the_history_and_bumps_the_version():
    y = mg.tensor(X, requires_grad=True) * 1
    squares = y * y  # saves y
    y.detach()[0].mul_(2)
    assert y.grad_fn.name == "Mul" and y._version == 1
    with pytest.raises(RuntimeError, match="Mul.*modified by an in-place"):
        squares.sum().backward()


def test_pieces_of_split_without_history_can_still_be_modified():
    y = mg.zeros(4)
    first, _ = y.split(2)
    first += 1
    assert y.tolist() == [1.0, 1.0, 0.0, 0.0] and y._version == 1
