"""Error messages speak to a student: which op, which input, which shapes, what to try."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg


@pytest.fixture(params=["eager", "lazy"])
def mode(request):
    """Shape errors are reported when the op is written, in both modes."""
    with mg.lazy(request.param == "lazy"):
        yield request.param


def test_mismatched_broadcast_names_the_op_and_both_shapes(mode):
    with pytest.raises(ValueError, match=r"(?s)Add.*\(2, 3\).*\(4,\)") as info:
        mg.ones(2, 3) + mg.ones(4)
    assert isinstance(info.value.__cause__, ValueError)  # NumPy's own error is kept


def test_mismatched_broadcast_error_is_also_a_runtime_error_as_in_pytorch():
    with pytest.raises(RuntimeError):
        mg.ones(2, 3) * mg.ones(4)
    assert issubclass(mg.ShapeError, ValueError) and issubclass(mg.ShapeError, RuntimeError)


def test_matmul_inner_dimension_mismatch_names_matmul_and_both_shapes(mode):
    with pytest.raises(mg.ShapeError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        mg.ones(2, 3) @ mg.ones(4, 5)


def test_reshape_to_a_wrong_size_names_reshape_and_the_shapes(mode):
    with pytest.raises(mg.ShapeError, match=r"(?s)Reshape.*\(4,\).*\(2, 3\)") as info:
        mg.ones(2, 3).reshape(4)
    assert isinstance(info.value.__cause__, ValueError)


def test_index_out_of_range_names_getitem_the_index_and_the_size(mode):
    with pytest.raises(IndexError, match=r"GetItem.*index 5.*size 3") as info:
        mg.ones(3)[5]
    assert isinstance(info.value.__cause__, IndexError)


def test_index_out_of_range_in_a_later_dimension_names_that_axis():
    with pytest.raises(IndexError, match=r"GetItem.*index 7.*axis 1.*size 3"):
        mg.ones(2, 3)[1, 7]


def test_requires_grad_on_an_integer_tensor_says_to_convert():
    with pytest.raises(TypeError, match=r"floating-point.*int64.*\.float\(\)"):
        mg.tensor([1, 2], dtype="int64", requires_grad=True)


def test_requires_grad_on_an_integer_tensor_via_requires_grad_():
    with pytest.raises(TypeError, match=r"int64"):
        mg.arange(3).requires_grad_()


def test_backward_twice_names_the_node_and_suggests_retain_graph():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    loss = x.exp().sum()
    loss.backward()
    with pytest.raises(RuntimeError, match=r"second time.*retain_graph=True"):
        loss.backward()


def test_non_scalar_backward_names_the_shape_and_suggests_sum_or_gradient():
    x = mg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\(1, 3\).*\.sum\(\).*gradient="):
        (x * 2).backward()


def test_backward_with_a_gradient_of_the_wrong_shape_names_both_shapes():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(mg.ShapeError, match=r"\(3,\).*\(2,\)"):
        (x * 2).backward(np.ones(3))


def test_backward_of_a_tensor_without_grad_says_what_to_do():
    with pytest.raises(RuntimeError, match=r"requires_grad=True"):
        (mg.tensor([1.0]) * 2).sum().backward()


def test_unknown_mode_names_the_valid_modes():
    with pytest.raises(ValueError, match=r"'bogus'.*'eager', 'lazy'"):
        mg.set_mode("bogus")


def test_backward_returning_the_wrong_number_of_gradients_names_function_and_counts():
    class TooFewGradients(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output  # one, for two inputs

    x, y = (mg.tensor([1.0, 2.0], requires_grad=True) for _ in range(2))
    with pytest.raises(RuntimeError, match=r"TooFewGradients.*returned 1 gradient.*2 positional"):
        TooFewGradients.apply(x, y).sum().backward()


def test_backward_returning_an_unsummable_gradient_names_function_input_and_shapes():
    class WrongShapeGradient(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, np.ones(3)  # input 1 has shape (2,)

    x, y = (mg.tensor([1.0, 2.0], requires_grad=True) for _ in range(2))
    with pytest.raises(mg.ShapeError, match=r"WrongShapeGradient.*\(3,\).*input 1.*\(2,\)"):
        WrongShapeGradient.apply(x, y).sum().backward()


def test_error_raised_inside_a_custom_forward_is_explained_and_chained():
    class BadForward(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return np.concatenate([x, x[None]])  # 1-D and 2-D: NumPy raises

    with pytest.raises(ValueError, match=r"(?s)BadForward.*input 0: shape \(2,\)") as info:
        BadForward.apply(mg.ones(2))
    assert isinstance(info.value.__cause__, ValueError)


def test_a_labelled_input_is_named_in_the_message():
    weights = mg.Tensor(np.ones((3, 4)), label="weights")
    with pytest.raises(ValueError, match=r"input 1 'weights': shape \(3, 4\), float64"):
        mg.ones(2, 3) + weights


def test_in_place_on_a_leaf_that_requires_grad_suggests_no_grad():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"leaf.*no_grad"):
        x.mul_(2)


def test_in_place_modification_of_a_saved_array_names_the_function_and_versions():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"Exp.*modified by an in-place operation.*version"):
        y.sum().backward()


def test_item_of_a_tensor_with_several_elements_names_the_shape():
    with pytest.raises(ValueError, match=r"one element.*\(2, 2\)"):
        mg.ones(2, 2).item()


def test_truth_value_of_a_tensor_with_several_elements_suggests_any_or_all():
    with pytest.raises(RuntimeError, match=r"ambiguous.*any\(\).*all\(\)"):
        bool(mg.ones(3) > 0)


def test_unknown_dtype_lists_the_known_names():
    with pytest.raises(TypeError, match=r"unknown dtype.*float32"):
        mg.tensor([1.0], dtype="floaty")


def test_a_reduction_over_a_repeated_dim_raises_as_in_pytorch(mode):
    with pytest.raises(mg.ShapeError, match=r"sum.*more than once"):
        mg.ones(2, 3).sum((1, -1))


def test_gather_with_a_negative_index_raises_as_in_pytorch():
    with pytest.raises(IndexError, match=r"gather: index -1 is out of bounds for dim 1.*size 3"):
        mg.gather(mg.ones(2, 3), 1, mg.tensor(np.array([[0, -1]])))


def test_gather_with_an_index_past_the_end_names_dim_and_size():
    with pytest.raises(IndexError, match=r"gather: index 3 is out of bounds for dim 0.*size 2"):
        mg.gather(mg.ones(2, 3), 0, mg.tensor(np.array([[3, 0, 1]])))


def test_a_tensor_of_strings_is_refused_with_what_to_give_instead():
    with pytest.raises(TypeError, match=r"cannot make a tensor from str 'abc'.*numbers"):
        mg.tensor("abc")


def test_a_dim_that_is_not_an_int_names_the_reduction_and_the_dim(mode):
    with pytest.raises(TypeError, match=r"^sum: dim must be an int.*'a'"):
        mg.ones(2, 3).sum(dim="a")


def test_an_in_place_op_that_would_change_the_shape_names_both_shapes():
    x = mg.ones(3)
    with pytest.raises(mg.ShapeError, match=r"in-place.*\(2, 3\).*\(3,\).*shape"):
        x += mg.ones(2, 3)


def test_an_in_place_op_cannot_put_floats_into_an_integer_tensor():
    x = mg.arange(3)
    with pytest.raises(TypeError, match=r"in-place: the result is float\d+ but .* int64"):
        x += mg.ones(3)


def test_a_dim_out_of_range_is_an_index_error_as_in_pytorch_and_a_shape_error():
    with pytest.raises(IndexError, match=r"sum: dim 2 is out of range for a tensor with 2"):
        mg.zeros(2, 3).sum(dim=2)
    with pytest.raises(mg.ShapeError):
        mg.zeros(2, 3).mean(dim=-3)
