"""The Tensor: construction, dtypes, factories, attributes, conversions, printing."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import minigrad as mg

# --- construction and dtypes ------------------------------------------------------------


@pytest.mark.parametrize("data, dtype", [
    (3, np.int64), (2.5, np.float32), ([1, 2, 3], np.int64), ([[1.0, 2.0], [3.0, 4.0]],
                                                              np.float32),
    ([[1], [2]], np.int64), ([1, 2.5], np.float32), (True, np.bool_), ([True, False], np.bool_),
    ([], np.float32)])
def test_python_data_gets_pytorchs_dtype(data, dtype):
    t = mg.tensor(data)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), np.array(data, dtype=dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_])
def test_numpy_arrays_keep_their_dtype(dtype):
    array = np.arange(6).reshape(2, 3).astype(dtype)
    t = mg.Tensor(array)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), array)


def test_numpy_scalar_keeps_its_dtype():
    assert mg.tensor(np.float64(1.5)).dtype == np.float64


def test_tensor_and_Tensor_are_the_same_constructor():
    a = mg.tensor([1.0, 2.0], requires_grad=True, label="a")
    b = mg.Tensor([1.0, 2.0], requires_grad=True, label="a")
    assert type(a) is type(b) is mg.Tensor
    assert (a.dtype, a.shape, a.requires_grad, a.label) == (b.dtype, b.shape, b.requires_grad,
                                                            b.label)


@pytest.mark.parametrize("name, expected", [("float32", np.float32), ("float64", np.float64),
                                            ("int64", np.int64), ("bool", np.bool_)])
def test_dtype_argument_accepts_strings(name, expected):
    assert mg.tensor([1, 0, 2], dtype=name).dtype == expected


@pytest.mark.parametrize("dtype", [np.float64, np.dtype("int64"), mg.float32, mg.long])
def test_dtype_argument_accepts_numpy_dtypes(dtype):
    assert mg.tensor([1, 2], dtype=dtype).dtype == np.dtype(dtype)


def test_dtype_argument_overrides_a_numpy_arrays_dtype():
    assert mg.Tensor(np.zeros(3, dtype=np.float64), dtype="float32").dtype == np.float32


def test_requires_grad_on_int64_raises_type_error():
    with pytest.raises(TypeError):
        mg.tensor([1, 2, 3], dtype="int64", requires_grad=True)


def test_requires_grad_on_float64_array_is_allowed():
    t = mg.Tensor(np.ones(2), requires_grad=True)
    assert t.requires_grad and t.dtype == np.float64


# --- factories ------------------------------------------------------------------------------


@pytest.mark.parametrize("factory, fill", [(mg.zeros, 0.0), (mg.ones, 1.0)])
def test_zeros_and_ones_take_sizes_as_arguments_or_a_tuple(factory, fill):
    for t in (factory(2, 3), factory((2, 3))):
        assert t.shape == (2, 3) and t.dtype == np.float32
        np.testing.assert_array_equal(t.numpy(), np.full((2, 3), fill, dtype=np.float32))


def test_factories_accept_dtype_and_requires_grad():
    t = mg.zeros(2, dtype="float64", requires_grad=True)
    assert t.dtype == np.float64 and t.requires_grad and t.is_leaf


def test_full_fills_with_the_value():
    t = mg.full((2, 3), 7.5)
    assert t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), np.full((2, 3), 7.5))


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_like_factories_copy_shape_and_dtype(dtype):
    source = mg.Tensor(np.arange(6, dtype=dtype).reshape(3, 2))
    for t, fill in ((mg.zeros_like(source), 0), (mg.ones_like(source), 1),
                    (mg.full_like(source, 4), 4)):
        assert t.shape == (3, 2) and t.dtype == dtype
        np.testing.assert_array_equal(t.numpy(), np.full((3, 2), fill, dtype=dtype))


def test_like_factories_accept_a_dtype_override():
    assert mg.zeros_like(mg.zeros(2), dtype="int64").dtype == np.int64


def test_arange_of_ints_is_int64_as_in_pytorch():
    t = mg.arange(5)
    assert t.dtype == np.int64
    np.testing.assert_array_equal(t.numpy(), np.arange(5))
    np.testing.assert_array_equal(mg.arange(2, 10, 3).numpy(), np.arange(2, 10, 3))


def test_arange_with_a_float_is_float32():
    t = mg.arange(0, 1, 0.25)
    assert t.dtype == np.float32
    np.testing.assert_allclose(t.numpy(), np.arange(0, 1, 0.25))


def test_linspace_includes_both_ends():
    t = mg.linspace(-1, 1, 5)
    assert t.dtype == np.float32
    np.testing.assert_allclose(t.numpy(), np.linspace(-1, 1, 5), rtol=1e-6)


def test_eye_is_the_identity_and_can_be_rectangular():
    np.testing.assert_array_equal(mg.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(mg.eye(2, 3).numpy(), np.eye(2, 3))
    assert mg.eye(3).dtype == np.float32


def test_rand_is_uniform_on_zero_one_float32():
    t = mg.rand(1000)
    assert t.shape == (1000,) and t.dtype == np.float32
    assert 0 <= t.numpy().min() and t.numpy().max() < 1
    assert 0.4 < t.numpy().mean() < 0.6


def test_randn_is_standard_normal_float32():
    t = mg.randn(100, 50)
    assert t.shape == (100, 50) and t.dtype == np.float32
    assert abs(t.numpy().mean()) < 0.05 and 0.95 < t.numpy().std() < 1.05


def test_randint_draws_int64_in_half_open_range():
    t = mg.randint(3, 7, (500,))
    assert t.dtype == np.int64 and t.shape == (500,)
    assert set(np.unique(t.numpy())) == {3, 4, 5, 6}


def test_randint_with_high_and_size_starts_at_zero():
    t = mg.randint(4, (200,))
    assert t.shape == (200,) and t.numpy().min() == 0 and t.numpy().max() == 3


@pytest.mark.parametrize("draw", [lambda: mg.rand(5), lambda: mg.randn(5),
                                  lambda: mg.randint(0, 1000, (5,))])
def test_manual_seed_makes_draws_reproducible(draw):
    mg.manual_seed(123)
    first = draw().numpy()
    mg.manual_seed(123)
    np.testing.assert_array_equal(draw().numpy(), first)


def test_different_seeds_give_different_draws():
    mg.manual_seed(1)
    first = mg.randn(8).numpy()
    mg.manual_seed(2)
    assert not np.array_equal(mg.randn(8).numpy(), first)


def test_consecutive_draws_differ():
    assert not np.array_equal(mg.randn(8).numpy(), mg.randn(8).numpy())


# --- attributes --------------------------------------------------------------------------------


def test_data_is_the_numpy_array():
    array = np.arange(6.0).reshape(2, 3)
    t = mg.Tensor(array)
    assert isinstance(t.numpy(), np.ndarray)
    np.testing.assert_array_equal(t.numpy(), array)


def test_shape_ndim_dtype_size_and_numel():
    t = mg.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
    assert t.ndim == 3
    assert t.dtype == np.float32
    assert t.size() == (2, 3, 4)
    assert (t.size(0), t.size(1), t.size(-1)) == (2, 3, 4)
    assert t.numel() == 24


def test_a_new_tensor_is_a_leaf_without_grad():
    t = mg.tensor([1.0, 2.0])
    assert t.grad is None and t.grad_fn is None and t.is_leaf and not t.requires_grad


def test_result_of_an_op_on_a_tensor_that_requires_grad_is_a_non_leaf():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    assert x.is_leaf and x.grad_fn is None


def test_result_of_an_op_without_grad_is_a_leaf():
    y = mg.tensor([1.0, 2.0]) * 2
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None


def test_label_is_kept_and_assignable():
    t = mg.tensor([1.0], label="weights")
    assert t.label == "weights"
    t.label = "w"
    assert t.label == "w"
    assert mg.tensor([1.0]).label is None


def test_grad_is_a_tensor_without_history():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert isinstance(x.grad, mg.Tensor)
    assert x.grad.grad_fn is None and not x.grad.requires_grad
    assert x.grad.shape == x.shape and x.grad.dtype == x.dtype


# --- conversions ----------------------------------------------------------------------------------


def test_item_returns_a_python_number():
    value = mg.tensor([[2.5]]).item()
    assert value == 2.5 and type(value) is float
    assert type(mg.tensor(3, dtype="int64").item()) is int


def test_numpy_returns_the_data_array():
    t = mg.tensor([1.0, 2.0])
    assert t.numpy() is t.numpy()


def test_tolist_returns_nested_python_lists():
    assert mg.tensor([[1, 2], [3, 4]]).tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_detach_shares_data_but_has_no_history():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    d = y.detach()
    assert d.grad_fn is None and not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.numpy(), y.numpy())
    np.testing.assert_array_equal(d.numpy(), y.numpy())


def test_clone_copies_and_is_differentiable():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = x.clone()
    assert not np.shares_memory(c.numpy(), x.numpy())
    assert c.grad_fn is not None
    (c * c).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


@pytest.mark.parametrize("convert, expected", [
    (lambda t: t.astype("float64"), np.float64), (lambda t: t.to(np.int64), np.int64),
    (lambda t: t.float(), np.float32), (lambda t: t.double(), np.float64),
    (lambda t: t.long(), np.int64),
])
def test_dtype_conversions(convert, expected):
    t = mg.Tensor(np.array([1.5, -2.5, 3.0], dtype=np.float64))
    result = convert(t)
    assert result.dtype == expected
    np.testing.assert_array_equal(result.numpy(), t.numpy().astype(expected))


def test_float_conversion_is_differentiable():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    x.double().sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(2))


def test_conversion_to_int_has_no_history():
    x = mg.tensor([1.5, 2.5], requires_grad=True)
    assert x.long().grad_fn is None and not x.long().requires_grad


# --- printing -----------------------------------------------------------------------------------


def test_repr_shows_values_like_pytorch():
    text = repr(mg.tensor([1.0, 2.5]))
    assert text.startswith("tensor(") and "1." in text and "2.5" in text


def test_repr_shows_grad_fn_requires_grad_dtype_and_label():
    x = mg.tensor([1.0], requires_grad=True, label="x")
    assert "requires_grad=True" in repr(x) and "label='x'" in repr(x)
    assert "grad_fn=<Mul>" in repr(x * 2)
    assert "dtype=float64" in repr(mg.arange(3.0, dtype=mg.float64))


def test_repr_leaves_out_default_dtypes_as_pytorch(torch):
    for data in ([1, 2], [1.0, 2.0], [True], np.array([1, 2], dtype=np.int32)):
        assert ("dtype=" in repr(mg.tensor(data))) == ("dtype=" in repr(torch.tensor(data)))


# --- comparisons and hashing --------------------------------------------------------------------


@pytest.mark.parametrize("compare", [operator.lt, operator.le, operator.gt, operator.ge,
                                     operator.eq, operator.ne])
def test_comparisons_return_bool_tensors_without_history(compare):
    a_data, b_data = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])
    a = mg.Tensor(a_data, requires_grad=True)
    b = mg.Tensor(b_data, requires_grad=True)
    result = compare(a, b)
    assert isinstance(result, mg.Tensor) and result.dtype == np.bool_
    assert result.grad_fn is None and not result.requires_grad
    np.testing.assert_array_equal(result.numpy(), compare(a_data, b_data))


def test_comparison_with_a_python_number():
    np.testing.assert_array_equal((mg.tensor([1.0, 5.0]) > 2).numpy(), [False, True])


def test_tensors_are_hashed_by_identity():
    a, b = mg.tensor([1.0]), mg.tensor([1.0])
    assert bool(a == b)  # equal values ...
    assert len({a, b}) == 2  # ... but two different keys
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b"
    assert a in {a} and b not in {a}


# --- max / min -----------------------------------------------------------------------------


def test_max_without_dim_returns_a_tensor():
    data = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], dtype=np.float32)
    result = mg.Tensor(data).max()
    assert isinstance(result, mg.Tensor) and result.shape == ()
    assert result.item() == data.max()


@pytest.mark.parametrize("keepdim", [False, True])
def test_max_with_dim_returns_values_and_indices(keepdim):
    data = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], dtype=np.float32)
    values, indices = mg.Tensor(data).max(1, keepdim=keepdim)
    np.testing.assert_array_equal(values.numpy(), data.max(1, keepdims=keepdim))
    np.testing.assert_array_equal(indices.numpy(), data.argmax(1, keepdims=keepdim))
    assert indices.dtype == np.int64


def test_max_with_dim_result_has_named_fields():
    data = np.array([[1.0, 5.0], [7.0, 0.0]], dtype=np.float32)
    result = mg.Tensor(data).max(dim=0)
    np.testing.assert_array_equal(result.values.numpy(), data.max(0))
    np.testing.assert_array_equal(result.indices.numpy(), data.argmax(0))


def test_min_with_dim_returns_values_and_indices():
    data = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], dtype=np.float32)
    values, indices = mg.Tensor(data).min(0)
    np.testing.assert_array_equal(values.numpy(), data.min(0))
    np.testing.assert_array_equal(indices.numpy(), data.argmin(0))


def test_max_indices_have_no_history_but_values_do():
    x = mg.tensor([[1.0, 5.0], [7.0, 0.0]], requires_grad=True)
    values, indices = x.max(1)
    assert values.grad_fn is not None
    assert indices.grad_fn is None and not indices.requires_grad


def test_squeeze_of_a_dim_that_is_not_one_returns_a_new_tensor_with_the_same_shape():
    x = mg.ones(2, 3, requires_grad=True)
    y = x.squeeze(0)
    assert y is not x and y.shape == (2, 3) and y.grad_fn is not None


@pytest.mark.parametrize("op", [lambda x, v: x + v, lambda x, v: v - x, lambda x, v: x * v,
                                lambda x, v: v / x, lambda x, v: x ** v])
def test_a_list_next_to_a_tensor_is_float32_like_the_constructor(op):
    x = mg.tensor([1.0, 2.0, 3.0])
    result = op(x, [1, 2, 3])
    assert result.dtype == np.float32
    np.testing.assert_allclose(result.numpy(), op(x.numpy(), np.array([1.0, 2.0, 3.0])))


# --- .data, as in PyTorch -------------------------------------------------------------


def test_data_is_a_tensor_without_history_that_shares_the_array():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    d = w.data
    assert isinstance(d, mg.Tensor) and not d.requires_grad and d.grad_fn is None
    assert np.shares_memory(d.numpy(), w.numpy())


def test_manual_sgd_through_data_updates_the_parameter_and_keeps_it_a_leaf():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    w.data += -0.1 * w.grad
    np.testing.assert_allclose(w.numpy(), [0.8, 1.6])
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    w.data.add_(w.grad, alpha=-0.5)
    np.testing.assert_allclose(w.numpy(), [-0.2, -0.4], rtol=1e-6)


def test_writes_through_data_are_not_seen_by_the_version_counter():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    before = w._version
    w.data.mul_(2)
    assert w._version == before  # PyTorch's .data: a new counter, unlike detach()


def test_assigning_data_replaces_the_values_and_keeps_requires_grad():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    w.data = mg.tensor([5.0, 6.0, 7.0])
    assert w.shape == (3,) and w.requires_grad
    np.testing.assert_allclose(w.numpy(), [5.0, 6.0, 7.0])


def test_assigning_integer_data_to_a_tensor_that_requires_grad_is_refused():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="requires grad.*int64"):
        w.data = np.array([1, 2])
