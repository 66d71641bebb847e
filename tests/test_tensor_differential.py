"""Tensor semantics that once differed from PyTorch's: a test runs the same program on
``torch`` and on minigrad and compares values, dtypes and shapes, or checks that minigrad
raises a clear error where PyTorch does (or where PyTorch's answer is a bug)."""

import warnings

import numpy as np
import pytest

import minigrad as mg


def same(ours, theirs):
    """minigrad's tensor has torch's dtype, shape and values."""
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def both(program, *arrays):
    """``program(library, *tensors)`` run on torch and on minigrad."""
    torch = pytest.importorskip("torch")
    return (program(mg, *[mg.tensor(a) for a in arrays]),
            program(torch, *[torch.tensor(a) for a in arrays]))


# --- indexing: PyTorch reads ints before tensors ----------------------------------------------

X = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)


@pytest.mark.parametrize("index", [
    lambda L: (0, slice(None), L.tensor([1, 2])),
    lambda L: (slice(None), 1, slice(None), L.tensor([0, 4])),
    lambda L: (0, Ellipsis, L.tensor([0, 3])),
    lambda L: (L.tensor(1), slice(None), L.tensor([[0], [2]])),
    lambda L: (0, None, slice(1, 3), L.tensor([True, False, True, False])),
])
def test_an_int_apart_from_the_index_tensors_keeps_their_dimensions_in_place(index):
    torch = pytest.importorskip("torch")
    x, t = mg.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    ours, theirs = x[index(mg)], t[index(torch)]
    same(ours, theirs)
    weights = np.random.default_rng(0).normal(size=theirs.shape)
    (ours * mg.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_setitem_with_an_int_apart_from_the_index_tensor_takes_torchs_value_shape():
    torch = pytest.importorskip("torch")
    value = np.arange(6.0).reshape(3, 2)
    x, t = mg.tensor(np.zeros((2, 3, 4))), torch.tensor(np.zeros((2, 3, 4)))
    x[0, :, mg.tensor([0, 1])] = mg.tensor(value)
    t[0, :, torch.tensor([0, 1])] = torch.tensor(value)
    same(x, t)


def test_a_list_of_lists_index_is_read_as_a_tuple():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = both(lambda L, x: x[[[0, 1], [1, 0]]], X)
    same(ours, theirs)


def test_an_empty_list_index_selects_nothing():
    same(*both(lambda L, x: x[[]], X))


def test_a_uint8_index_tensor_is_a_mask():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = both(lambda L, x: x[L.tensor([1, 0], dtype=L.uint8)], X)
    same(ours, theirs)


def test_a_0d_integer_tensor_index_gives_a_view():
    x = mg.zeros(3, 4)
    x[mg.tensor(1)].add_(1)
    assert x.sum().item() == 4


# --- creation -------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [
    lambda L: [L.tensor(1.5, dtype=L.float64), L.tensor(2.5, dtype=L.float64)],
    lambda L: [1.5, np.float64(2.0)],
    lambda L: [np.int32(1), np.int32(2)],
    lambda L: [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    lambda L: [L.tensor(1), L.tensor(1.0, dtype=L.float16)],
    lambda L: [True, L.tensor(1.0, dtype=L.float64)],
])
@pytest.mark.filterwarnings("ignore:Creating a tensor from a list")
def test_tensor_of_a_list_infers_the_dtype_of_its_tensors_and_numpy_values(data):
    torch = pytest.importorskip("torch")
    same(mg.tensor(data(mg)), torch.tensor(data(torch)))


def test_full_like_fills_in_the_requested_dtype():
    same(*both(lambda L, x: L.full_like(x, 2.7, dtype=L.float64), np.array([1, 2])))


@pytest.mark.parametrize("args", [(0, 5, 1.5), (0.5, 5.7, 1.5), (0, 5.5, 1)])
def test_arange_with_an_integer_dtype_truncates_its_bounds(args):
    torch = pytest.importorskip("torch")
    same(mg.arange(*args, dtype=mg.int64), torch.arange(*args, dtype=torch.int64))


def test_arange_of_a_tensor_bound_keeps_its_integer_dtype():
    torch = pytest.importorskip("torch")
    same(mg.arange(mg.tensor(4)), torch.arange(torch.tensor(4)))


def test_arange_end_by_keyword():
    torch = pytest.importorskip("torch")
    same(mg.arange(end=4), torch.arange(end=4))


def test_arange_against_the_sign_of_its_step_raises():
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        mg.arange(0, 5, -1)


def test_logspace():
    torch = pytest.importorskip("torch")
    ours, theirs = mg.logspace(0, 3, 4, base=2), torch.logspace(0, 3, 4, base=2)
    same(ours, theirs)


# --- reductions -----------------------------------------------------------------------------


@pytest.mark.parametrize("reduce", [lambda x: x.sum(), lambda x: x.prod(1),
                                    lambda x: x.cumprod(0), lambda x: x.sum(dtype=None)])
def test_sums_and_products_of_uint8_are_int64(reduce):
    same(*both(lambda L, x: reduce(x), np.arange(6, dtype=np.uint8).reshape(2, 3)))


def test_sum_over_an_empty_dim_list_reduces_everything():
    same(*both(lambda L, x: x.sum(dim=[]), np.ones((2, 3), np.float32)))


def test_sum_and_mean_take_a_dtype():
    same(*both(lambda L, x: x.sum(dtype=L.float64), np.ones((2, 3), np.float32)))
    same(*both(lambda L, x: x.mean(dtype=L.float64), np.arange(6).reshape(2, 3)))


@pytest.mark.parametrize("reduce", [lambda x: x.sum(1), lambda x: x.amin((0, 1)),
                                    lambda x: x.prod(1), lambda x: x.any(1)])
def test_reducing_a_0d_tensor_over_a_missing_dim_raises(reduce):
    torch = pytest.importorskip("torch")
    with pytest.raises(IndexError):
        reduce(torch.tensor(2.0))
    with pytest.raises(IndexError):
        reduce(mg.tensor(2.0))


def test_cumprod_of_a_0d_tensor_is_0d():
    same(*both(lambda L, x: x.cumprod(0), np.array(2.0, np.float32)))


def test_logsumexp_of_integers_is_float32_and_of_nothing_minus_infinity():
    same(*both(lambda L, x: x.logsumexp(0), np.arange(6).reshape(2, 3)))
    same(*both(lambda L, x: x.logsumexp(0), np.zeros((0, 3), np.float32)))


def test_max_along_a_nonempty_dim_of_an_empty_tensor():
    ours, theirs = both(lambda L, x: x.max(1, keepdim=True), np.zeros((0, 3), np.float32))
    same(ours[0], theirs[0])
    same(ours[1], theirs[1])


def test_any_of_uint8_is_uint8():
    same(*both(lambda L, x: x.any(), np.array([0, 2], np.uint8)))


# --- type promotion -------------------------------------------------------------------------


def test_comparison_with_a_0d_float64_tensor_happens_in_float32():
    same(*both(lambda L, x: x == L.tensor(0.1, dtype=L.float64), np.array([0.1], np.float32)))


def test_tensor_equals_none_is_false():
    assert (mg.tensor([1, 2]) == None) is False  # noqa: E711 (the point of the test)
    assert (mg.tensor([1, 2]) != None) is True  # noqa: E711


def test_where_of_two_numbers_has_torchs_dtype():
    same(*both(lambda L, c: L.where(c, 1.0, 0), np.array([True, False])))


def test_clamp_of_integers_to_float_bounds_is_float32():
    same(*both(lambda L, x: x.clamp(0.5, 2.5), np.array([1, 5])))
    same(*both(lambda L, x: x.clamp(min=1.5), np.array([1, 5])))


def test_in_place_add_of_int8_into_uint8_wraps_as_torch():
    ours, theirs = both(lambda L, x, y: x.add_(y), np.array([1, 200], np.uint8),
                        np.array([-3, 100], np.int8))
    same(ours, theirs)


def test_in_place_power_operator_writes_into_the_tensor_and_its_views():
    x = mg.tensor([1.0, 2.0, 3.0])
    view = x[1:]
    x **= 2
    np.testing.assert_array_equal(view.numpy(), [4.0, 9.0])


# --- views ------------------------------------------------------------------------------------


def test_flip_is_a_copy():
    x = mg.tensor([1.0, 2.0])
    x.flip(0).add_(1)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


def test_diagonal_is_a_view_with_gradients():
    torch = pytest.importorskip("torch")
    x, t = mg.tensor(X[0], requires_grad=True), torch.tensor(X[0], requires_grad=True)
    ours, theirs = x * 1, t * 1
    ours.diagonal(1, 0, 2).mul_(3)
    theirs.diagonal(1, 0, 2).mul_(3)
    same(ours, theirs)
    (ours * ours).sum().backward()
    (theirs * theirs).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_flatten_with_start_after_end_raises():
    with pytest.raises(ValueError, match="start_dim"):
        mg.zeros(2, 3, 4).flatten(2, 1)


@pytest.mark.parametrize("cuts", [3, [1, 5], (3, 2), [-3, 20]])
def test_tensor_split(cuts):
    ours, theirs = both(lambda L, x: x.tensor_split(cuts), np.arange(7.0))
    assert len(ours) == len(theirs)
    for piece, reference in zip(ours, theirs):
        same(piece, reference)


def test_view_as_another_dtype_shares_the_bytes():
    ours, theirs = both(lambda L, x: x.view(L.int32), np.array([1.0, -2.0], np.float32))
    same(ours, theirs)


def test_in_operator_looks_for_an_element():
    assert 3.0 in mg.tensor([1.0, 3.0])
    assert 2.0 not in mg.tensor([1.0, 3.0])


# --- indexing ops PyTorch has -------------------------------------------------------------

A = np.random.default_rng(0).normal(size=(3, 4))
B = np.random.default_rng(1).normal(size=12)


@pytest.mark.parametrize("program", [
    lambda L, a, b: a.put(L.tensor([0, -1, 5]), b[:3]),
    lambda L, a, b: a.put(L.tensor([[0, 0], [5, 11]]), b[:4].reshape(2, 2), accumulate=True),
    lambda L, a, b: (a * 1).put_(L.tensor([1, 1]), b[:2], accumulate=True) * a,
    lambda L, a, b: a.masked_scatter(L.tensor([True, False, True, False]), b),
    lambda L, a, b: a.index_fill(1, L.tensor([0, 2]), -1.0) * b[:4],
    lambda L, a, b: (a * 1).index_copy_(0, L.tensor([2, 0]), b[:8].reshape(2, 4)),
    lambda L, a, b: L.take_along_dim(a, L.tensor([[2, 0, 1, 1]]), dim=0),
    lambda L, a, b: L.take_along_dim(a, L.tensor([[0, 11]])),
])
def test_put_masked_scatter_index_fill_index_copy_take_along_dim(program):
    torch = pytest.importorskip("torch")
    results = []
    for library in (mg, torch):
        a = library.tensor(A, requires_grad=True)
        b = library.tensor(B, requires_grad=True)
        out = program(library, a, b)
        (out * library.tensor(np.arange(out.numel(), dtype=np.float64).reshape(
            tuple(out.shape)))).sum().backward()
        results.append((out, a.grad, b.grad))
    for ours, theirs in zip(*results):
        if theirs is None:
            assert ours is None
        else:
            np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())


def test_argwhere():
    same(*both(lambda L, x: L.argwhere(x > 0), A))


def test_bitwise_and_of_uint8_with_a_0d_int8_tensor_stays_uint8():
    ours, theirs = both(lambda L, x, y: x & y, np.array([3, 250], np.uint8),
                        np.array(-2, np.int8))
    same(ours, theirs)


def test_a_negative_python_int_wraps_around_into_uint8():
    same(*both(lambda L, x: x + (-3), np.array([1, 200], np.uint8)))
    same(*both(lambda L, x: x < -3, np.array([1, 200], np.uint8)))


def test_uint8_to_a_negative_power_raises():
    with pytest.raises(ValueError, match="negative integer powers"):
        mg.tensor([2], dtype=mg.uint8) ** -1


def test_a_bool_tensor_to_the_power_true_stays_bool():
    same(*both(lambda L, x: x ** True, np.array([True, False])))


@pytest.mark.parametrize("scan", ["cumsum", "cumprod"])
def test_float16_running_sums_and_products_accumulate_in_float32(scan):
    data = (1 + np.random.default_rng(0).random(3000) / 1000).astype(np.float16)
    same(*both(lambda L, x: getattr(x, scan)(0), data))


def test_like_factories_take_memory_format():
    torch = pytest.importorskip("torch")
    same(mg.zeros_like(mg.ones(2, 3), memory_format=mg.preserve_format),
         torch.zeros_like(torch.ones(2, 3), memory_format=torch.preserve_format))


def test_random_floats_of_an_integer_dtype_raise():
    with pytest.raises(TypeError, match="randint"):
        mg.randn_like(mg.tensor([1, 2]))


def test_cat_leaves_out_empty_1d_tensors_as_torchs_legacy_rule():
    torch = pytest.importorskip("torch")
    same(mg.cat([mg.tensor([]), mg.ones(2, 3, dtype=mg.int64)]),
         torch.cat([torch.tensor([]), torch.ones(2, 3, dtype=torch.int64)]))


@pytest.mark.parametrize("data", [2 ** 63, [1, 2 ** 63], [[2 ** 63], [1]]])
def test_python_ints_beyond_int64_raise(data):
    with pytest.raises(OverflowError, match="int64"):
        mg.tensor(data)


@pytest.mark.parametrize("write", [lambda x: x.add_(300), lambda x: x.mul_(-1),
                                   lambda x: x.fill_(-1), lambda x: x.__setitem__(0, -1)])
def test_in_place_python_ints_wrap_around_into_small_integer_dtypes(write):
    torch = pytest.importorskip("torch")
    ours, theirs = mg.tensor([1, 100], dtype=mg.uint8), torch.tensor([1, 100], dtype=torch.uint8)
    write(ours)
    write(theirs)
    same(ours, theirs)


def test_in_place_or_writes_into_the_mask_and_its_views():
    mask = mg.tensor([True, False, False])
    view = mask[1:]
    mask |= mg.tensor([False, True, False])
    np.testing.assert_array_equal(view.numpy(), [True, False])


@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((5, 2), False), ((7, 3), True),
                                         ((3, 3, 3), False)])
def test_fill_diagonal_(shape, wrap):
    torch = pytest.importorskip("torch")
    ours, theirs = mg.zeros(*shape), torch.zeros(*shape)
    ours.fill_diagonal_(1.0, wrap=wrap)
    theirs.fill_diagonal_(1.0, wrap=wrap)
    same(ours, theirs)


def test_pythons_float_as_a_dtype_is_float64():
    torch = pytest.importorskip("torch")
    same(mg.zeros(2, dtype=float), torch.zeros(2, dtype=float))
    same(mg.tensor([1, 2]).to(float), torch.tensor([1, 2]).to(float))


def test_mean_and_var_of_no_elements_are_nan_without_numpys_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = [mg.zeros(3, 0).mean(1), mg.zeros(3, 0).var(1), mg.zeros(0).mean()]
    for value in values:
        assert np.isnan(value.numpy()).all()


def test_clone_takes_memory_format():
    torch = pytest.importorskip("torch")
    same(mg.ones(2, 3).clone(memory_format=mg.contiguous_format),
         torch.ones(2, 3).clone(memory_format=torch.contiguous_format))


@pytest.mark.parametrize("method", ["asin", "acos", "atan"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64"])
def test_inverse_trigonometry_of_integers_is_float32(method, dtype):
    same(*both(lambda L, x: getattr(x, method)(), np.array([0, 1, 1]).astype(dtype)))


@pytest.mark.parametrize("method", ["isfinite", "sign", "square"])
def test_isfinite_sign_and_square_of_bools(method):
    same(*both(lambda L, x: getattr(x, method)(), np.array([False, True])))


@pytest.mark.parametrize("reduce, include_self", [
    ("sum", True), ("sum", False), ("mean", True), ("mean", False), ("amax", True),
    ("amin", True)])
def test_scatter_reduce_values_and_gradients(reduce, include_self):
    index = np.array([[1, 1, 2, 0], [0, 1, 1, 1]])
    torch = pytest.importorskip("torch")
    source = np.array([[1.0, 3.0, 3.0, -2.0], [2.0, 3.0, 0.0, 5.0]])
    results = []
    for library in (mg, torch):
        x = library.tensor(np.arange(12.0).reshape(3, 4) % 4, requires_grad=True)
        src = library.tensor(source, requires_grad=True)
        out = x.scatter_reduce(0, library.tensor(index), src, reduce,
                               include_self=include_self)
        (out * library.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
        results.append((out, x.grad, src.grad))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())


@pytest.mark.parametrize("reduce, value", [("add", 2.0), ("multiply", 3.0)])
def test_scatter_with_the_older_reduce_argument(reduce, value):
    index = np.array([[0, 0, 1]])
    same(*both(lambda L, x: x.scatter(1, L.tensor(index), value, reduce=reduce),
               np.arange(6.0).reshape(2, 3)))


def test_scatter_reduce_amax_without_self_gives_the_source_its_whole_gradient():
    # (PyTorch 2.13 halves it here: it counts self's left-out 3 as a tie)
    x = mg.tensor([[3.0, 7.0]], requires_grad=True)
    src = mg.tensor([[3.0]], requires_grad=True)
    out = x.scatter_reduce(1, mg.tensor([[0]]), src, "amax", include_self=False)
    (out * mg.tensor([[10.0, 1.0]])).sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), [[10.0]])
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 1.0]])


def test_index_put_accumulates_repeated_indices():
    indices = (np.array([0, 0, 2]), np.array([1, 1, 3]))
    ours, theirs = both(lambda L, x, v: x.index_put_(tuple(L.tensor(i) for i in indices), v,
                                                     accumulate=True),
                        np.zeros((3, 4)), np.array([1.0, 2.0, 3.0]))
    same(ours, theirs)


def test_clamping_uint8_to_a_negative_bound_raises():
    with pytest.raises(ValueError, match="does not fit"):
        mg.tensor([1, 200], dtype=mg.uint8).clamp(min=-2)


@pytest.mark.parametrize("args", [(0, 5, 1.5), (0.5, 5.7, 1.5), (0, 5.5, 1)])
def test_arange_with_a_small_integer_dtype_counts_with_the_bounds_as_given(args):
    torch = pytest.importorskip("torch")
    same(mg.arange(*args, dtype=mg.int32), torch.arange(*args, dtype=torch.int32))


@pytest.mark.parametrize("move", [lambda x: x.flip(0), lambda x: x.transpose(0, -1)])
def test_flip_and_transpose_of_a_0d_tensor(move):
    same(*both(lambda L, x: move(x), np.array(5.0)))


@pytest.mark.parametrize("other", [lambda L, b: L.tensor(b, dtype=L.float64),
                                   lambda L, b: np.float64(b)])
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
def test_in_place_ops_with_a_0d_float64_compute_in_float32(op, other):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(0).normal(size=1000).astype(np.float32)
    b = 0.37123456789
    ours = getattr(mg.tensor(data), op)(other(mg, b))
    theirs = getattr(torch.tensor(data), op)(other(torch, b))
    same(ours, theirs)


def test_reversed_is_a_flipped_tensor():
    same(*both(lambda L, x: reversed(x), np.arange(6.0).reshape(3, 2)))


@pytest.mark.parametrize("dtype, number", [("uint8", 300), ("int8", 200), ("int8", -129)])
def test_writing_a_number_that_does_not_fit_raises(dtype, number):
    x = mg.tensor([1, 2], dtype=dtype)
    with pytest.raises(OverflowError, match="cannot be converted"):
        x[0] = number
    with pytest.raises(OverflowError, match="cannot be converted"):
        x.fill_(number)


@pytest.mark.parametrize("method", [lambda x: x.msort(), lambda x: x.mH, lambda x: x.greater(5),
                                    lambda x: x.hsplit(3)[1], lambda x: x.isposinf(),
                                    lambda x: x.split_with_sizes([1, 3], 2)[1]])
def test_more_of_pytorchs_tensor_methods(method):
    same(*both(lambda L, x: method(x), np.arange(24.0).reshape(2, 3, 4)))


@pytest.mark.parametrize("reduce", [lambda x: x.var(0), lambda x: x.std(1),
                                    lambda x: x.norm(dim=0)])
def test_float16_variance_and_norm_are_summed_in_float32(reduce):
    data = (np.random.default_rng(0).random((50, 40)) * 100).astype(np.float16)
    same(*both(lambda L, x: reduce(x), data))


def test_float16_sum_does_not_overflow_on_the_way():
    same(*both(lambda L, x: x.sum(), np.array([60000, 60000, -60000, -50000], np.float16)))
