"""The PyTorch surface of issue 11, part B, beyond the op-case table: out=, in-place
rules, sorting and selection results, random draws, conversions, and error messages."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minigrad as mg


def ints(*values):
    return mg.tensor(np.array(values, dtype=np.int64))


# --- out= ------------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda x, out: mg.exp(x, out=out),
    lambda x, out: mg.add(x, x, alpha=2, out=out),
    lambda x, out: mg.clamp(x, -0.5, 0.5, out=out),
    lambda x, out: mg.matmul(x, mg.eye(3), out=out),
    lambda x, out: mg.pow(x, 2, out=out),
])
def test_out_writes_the_result_into_out_and_returns_it(call):
    x = mg.randn(2, 3)
    out = mg.zeros(2, 3)
    expected = call(x, None).numpy()
    assert call(x, out) is out
    np.testing.assert_array_equal(out.numpy(), expected)


def test_out_is_refused_while_gradients_are_recorded_as_in_pytorch():
    x = mg.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"exp\(\): functions with out=.*requires grad"):
        mg.exp(x, out=mg.zeros(3))


def test_out_works_under_no_grad_and_counts_as_a_write():
    x, out = mg.randn(3, requires_grad=True), mg.zeros(3)
    with mg.no_grad():
        mg.mul(x, 2, out=out)
    np.testing.assert_allclose(out.numpy(), 2 * x.numpy())
    assert out._version == 1 and out.grad_fn is None


def test_out_of_another_shape_is_resized_with_a_warning_as_in_pytorch():
    out = mg.zeros(2)
    with pytest.warns(UserWarning, match="resized"):
        mg.sqrt(mg.ones(4), out=out)
    assert out.shape == (4,)


def test_out_of_an_integer_dtype_cannot_hold_a_float_result():
    with pytest.raises(TypeError, match="float32.*int64"):
        mg.exp(mg.ones(3), out=mg.zeros(3, dtype="int64"))


# --- in-place rules --------------------------------------------------------------------------

IN_PLACE = {
    "lerp_": lambda t: t.lerp_(mg.ones(3), 0.5),
    "addcmul_": lambda t: t.addcmul_(mg.ones(3), mg.ones(3), value=0.1),
    "addcdiv_": lambda t: t.addcdiv_(mg.ones(3), mg.ones(3)),
    "sqrt_": lambda t: t.sqrt_(),
    "exp_": lambda t: t.exp_(),
    "masked_fill_": lambda t: t.masked_fill_(mg.tensor([True, False, True]), 0.0),
    "unsqueeze_": lambda t: t.unsqueeze_(0),
    "t_": lambda t: t.t_(),
    "scatter_": lambda t: t.scatter_(0, ints(2), value=1.0),
}


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_ops_on_a_leaf_that_requires_grad_raise(name):
    leaf = mg.rand(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        IN_PLACE[name](leaf)


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_ops_on_a_leaf_work_under_no_grad_without_history(name):
    leaf = mg.rand(3, requires_grad=True)
    with mg.no_grad():
        assert IN_PLACE[name](leaf) is leaf
    assert leaf.is_leaf and leaf.requires_grad


@pytest.mark.parametrize("name", IN_PLACE)
def test_recorded_in_place_updates_bump_the_version_counter(name):
    x = mg.rand(3, requires_grad=True) * 1
    before = x._version
    IN_PLACE[name](x)
    assert x._version == before + 1 and x.grad_fn is not None


def test_in_place_unsqueeze_of_a_non_leaf_is_recorded():
    x = mg.randn(3, requires_grad=True)
    y = x * 2
    assert y.unsqueeze_(0) is y and y.shape == (1, 3)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_adam_written_with_in_place_updates_matches_pytorch(torch):
    """The update of torch.optim.Adam, written out by hand as tutorials do."""
    start = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)
    results = []
    for lib in (mg, torch):
        p = lib.tensor(start.copy(), requires_grad=True)
        m, v = lib.zeros(3, 2), lib.zeros(3, 2)
        for step in range(1, 4):
            loss = ((p * p).sum(1) - 1).pow(2).sum()
            p.grad = None
            loss.backward()
            with lib.no_grad():
                m.lerp_(p.grad, 0.1)
                v.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                denominator = (v / (1 - 0.999 ** step)).sqrt_().add_(1e-8)
                p.addcdiv_(m, denominator, value=-0.01 / (1 - 0.9 ** step))
        results.append(p.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


# --- reductions ------------------------------------------------------------------------------


def test_erf_of_integers_is_float32_as_in_pytorch():
    assert mg.erf(ints(0, 1)).dtype == np.float32
    np.testing.assert_allclose(mg.erf(ints(0, 1)).numpy(), [0.0, math.erf(1)], rtol=1e-6)


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "sign"])
def test_rounding_an_integer_tensor_keeps_its_dtype_as_in_pytorch(name):
    assert getattr(mg, name)(ints(-2, 3)).tolist() == ([-1, 1] if name == "sign" else [-2, 3])
    assert getattr(mg, name)(ints(-2, 3)).dtype == np.int64


def test_max_and_min_as_functions_return_values_and_indices_with_a_dim():
    x = mg.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = mg.max(x, 1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert mg.min(x, dim=0).indices.tolist() == [0, 1, 0]
    assert mg.max(x).item() == 7.0


def test_all_and_any_return_bool_tensors_also_along_a_dim():
    x = mg.tensor([[1.0, 0.0], [2.0, 3.0]])
    assert x.all().dtype == np.bool_ and not x.all()
    assert x.all(1).tolist() == [False, True]
    assert mg.any(x == 0, dim=0, keepdim=True).tolist() == [[False, True]]


def test_std_and_var_read_the_second_positional_argument_as_unbiased(torch):
    data = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    for unbiased in (True, False):
        np.testing.assert_allclose(mg.tensor(data).std(1, unbiased).numpy(),
                                   torch.tensor(data).std(1, unbiased).numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda t, x: x.cumsum(axis=0), lambda t, x: x.prod(axis=1), lambda t, x: x.amax(axis=0),
    lambda t, x: x.argsort(axis=0), lambda t, x: x.all(axis=1), lambda t, x: x.softmax(axis=0),
    lambda t, x: t.sum(x, axis=1), lambda t, x: t.cumsum(x, axis=1),
])
def test_axis_is_an_alias_of_dim_as_in_pytorch(call, torch):
    data = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    ours, theirs = call(mg, mg.tensor(data)), call(torch, torch.tensor(data))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op, call", [
    ("prod", lambda x: x.prod(2)), ("cumsum", lambda x: x.cumsum(-3)),
    ("argsort", lambda x: x.argsort(2)), ("argsort", lambda x: x.sort(5)),
    ("topk", lambda x: x.topk(1, dim=2)), ("split", lambda x: x.split(1, dim=2)),
    ("chunk", lambda x: x.chunk(2, dim=2)), ("index_select", lambda x: x.index_select(2, ints(0))),
    ("scatter", lambda x: x.scatter(2, ints(0).reshape(1, 1), value=1.0)),
    ("max", lambda x: x.amax(2)), ("all", lambda x: x.all(2)), ("norm", lambda x: x.norm(dim=2)),
    ("softmax", lambda x: mg.softmax(x, 2)),
    ("repeat_interleave", lambda x: x.repeat_interleave(2, 2)),
])
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_a_dim_out_of_range_names_the_op_and_the_dims_there_are(op, call, lazy):
    with mg.lazy(lazy), pytest.raises(mg.DimensionError, match=rf"{op}: dim -?\d+ is out of range "
                                                               r"for a tensor with 2 dim"):
        call(mg.ones(2, 3))


def test_norm_refuses_an_unsupported_p():
    with pytest.raises(ValueError, match="norm: p='nuc'"):
        mg.ones(3).norm(p="nuc")


# --- selection -------------------------------------------------------------------------------


def test_sort_values_have_history_and_indices_do_not():
    x = mg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, indices = x.sort(descending=True)
    assert values.tolist() == [3.0, 2.0, 1.0] and indices.tolist() == [0, 2, 1]
    assert values.grad_fn is not None and not indices.requires_grad
    values.backward(mg.tensor([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [1.0, 3.0, 2.0]


def test_stable_sort_keeps_equal_elements_in_order():
    x = mg.tensor([2.0, 1.0, 2.0, 1.0])
    assert x.argsort(stable=True).tolist() == [1, 3, 0, 2]
    assert x.sort(descending=True, stable=True).indices.tolist() == [0, 2, 1, 3]


def test_topk_refuses_k_larger_than_the_dimension():
    with pytest.raises(ValueError, match=r"topk: k=5 .* size 3"):
        mg.ones(2, 3).topk(5)


def test_nonzero_gives_one_row_per_element_or_a_tuple_of_indices():
    x = mg.tensor([[0.0, 1.0], [2.0, 0.0]])
    assert x.nonzero().tolist() == [[0, 1], [1, 0]] and x.nonzero().dtype == np.int64
    rows, cols = mg.nonzero(x, as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]


def test_where_with_only_a_condition_gives_the_indices_as_a_tuple():
    (indices,) = mg.where(mg.tensor([0.0, 3.0, 0.0, 1.0]) > 0)
    assert indices.tolist() == [1, 3]


def test_unique_sorts_and_gives_inverse_and_counts():
    values, inverse, counts = mg.unique(ints(3, 1, 1, 2), return_inverse=True,
                                        return_counts=True)
    assert values.tolist() == [1, 2, 3]
    assert inverse.tolist() == [2, 0, 0, 1] and counts.tolist() == [2, 1, 1]


def test_scatter_reads_only_the_part_of_src_that_the_index_covers():
    x = mg.zeros(2, 3, dtype="float64", requires_grad=True)
    src = mg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    index = ints(1, 0).reshape(1, 2)
    out = x.scatter(1, index, src)
    assert out.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert mg.gradcheck(lambda a, b: a.scatter(1, index, b), [x, src])


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_scatter_add_index_of_another_rank_is_reported_when_the_op_is_written(lazy):
    with mg.lazy(lazy), pytest.raises(mg.ShapeError, match=r"scatter_add: index has 1 dim"):
        mg.ones(2, 3).scatter_add(0, ints(0, 1), mg.ones(2, 3))


def test_repeat_interleave_needs_one_non_negative_count_per_slice():
    with pytest.raises(mg.ShapeError, match=r"repeat_interleave: .* \(3 along dim 0 .* \[1, 2\]"):
        mg.ones(3, 4).repeat_interleave(ints(1, 2), dim=0)
    with pytest.raises(mg.ShapeError, match="repeat_interleave: repeats must be a non-negative"):
        mg.ones(3).repeat_interleave(-1)


def test_masked_fill_needs_a_bool_mask():
    with pytest.raises(TypeError, match="masked_fill: mask must be a bool tensor, got float32"):
        mg.ones(2, 2).masked_fill(mg.ones(2, 2), 0.0)


def test_masked_fill_mask_must_broadcast_to_the_tensor():
    with pytest.raises(mg.ShapeError, match=r"masked_fill: a mask of shape \(3,\).*\(2, 2\)"):
        mg.ones(2, 2).masked_fill(mg.tensor([True, False, True]), 0.0)


def test_index_select_needs_a_1d_integer_index():
    with pytest.raises(mg.ShapeError, match="index_select: index must be a 1-D integer"):
        mg.ones(3, 2).index_select(0, mg.tensor([0.0, 1.0]))


def test_scatter_index_out_of_range_names_scatter_and_the_size():
    with pytest.raises(IndexError, match=r"scatter: index 4 is out of bounds for dim 1 with size"):
        mg.zeros(2, 3).scatter(1, ints(4).reshape(1, 1), value=1.0)


# --- shape -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_split_sizes_that_do_not_add_up_name_split_and_the_shape(lazy):
    message = r"split: sizes \[1, 1\] add up to 2.*\(3, 4\)"
    with mg.lazy(lazy), pytest.raises(mg.ShapeError, match=message):
        mg.ones(3, 4).split([1, 1])


def test_split_pieces_are_views_that_share_the_version_counter():
    x = mg.zeros(2, 6)
    first, _, _ = x.split(2, dim=1)
    first += 1
    assert x.sum().item() == 4.0 and x._version == 1


def test_a_split_piece_of_a_tensor_with_history_cannot_be_modified_in_place():
    first, _ = mg.randn(4, requires_grad=True).tanh().split(2)
    with pytest.raises(RuntimeError, match="view of another tensor with history"):
        first += 1


def test_chunk_gives_fewer_pieces_when_sizes_round_up_as_in_pytorch(torch):
    ours = [t.shape for t in mg.ones(5, 2).chunk(4)]
    theirs = [tuple(t.shape) for t in torch.ones(5, 2).chunk(4)]
    assert ours == theirs == [(2, 2), (2, 2), (1, 2)]


def test_tril_and_triu_need_a_matrix():
    with pytest.raises(mg.ShapeError, match=r"tril: expects a tensor of at least 2"):
        mg.ones(3).tril()


def test_t_refuses_more_than_two_dims():
    with pytest.raises(mg.ShapeError, match=r"t: expects .* at most 2 .*\(2, 3, 4\)"):
        mg.ones(2, 3, 4).t()


def test_contiguous_returns_itself_or_a_row_ordered_copy():
    x = mg.randn(3, 4)
    assert x.is_contiguous() and x.contiguous() is x
    y = x.T
    assert not y.is_contiguous() and y.contiguous().is_contiguous()
    np.testing.assert_array_equal(y.contiguous().numpy(), y.numpy())


# --- linear algebra --------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: mg.ones(3).mm(mg.ones(3, 2)), r"mm: expects 2-D matrices.*\(3,\) and \(3, 2\)"),
    (lambda: mg.ones(2, 3, 4).bmm(mg.ones(3, 4, 5)), r"bmm: the batch sizes differ"),
    (lambda: mg.dot(mg.ones(2, 2), mg.ones(2, 2)), r"dot: expects 1-D vectors"),
    (lambda: mg.outer(mg.ones(2, 2), mg.ones(2)), r"outer: expects 1-D vectors"),
])
def test_matrix_products_check_their_shapes(call, message):
    with pytest.raises(mg.ShapeError, match=message):
        call()


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_einsum_with_too_few_subscripts_names_einsum_the_operand_and_its_shape(lazy):
    with mg.lazy(lazy), pytest.raises(mg.ShapeError, match=r"einsum: operand 1 has shape \(3, 4\)"):
        mg.einsum("ij,j->i", mg.ones(2, 3), mg.ones(3, 4))


def test_einsum_refuses_a_repeated_letter_within_an_operand():
    with pytest.raises(ValueError, match="einsum: operand 0 repeats a letter in 'ii'"):
        mg.einsum("ii->i", mg.ones(3, 3))


def test_einsum_letters_of_different_sizes_name_both_sizes():
    with pytest.raises(mg.ShapeError, match="einsum: letter 'j' has size 3 .* and 4"):
        mg.einsum("ij,jk->ik", mg.ones(2, 3), mg.ones(4, 5))


# --- random ----------------------------------------------------------------------------------


class FakeGenerator:
    """Stands for mg.Generator until it exists: what generator= reads is its ``_rng``."""

    def __init__(self, seed):
        self._rng = np.random.default_rng(seed)


def make_generator(seed):
    return mg.Generator().manual_seed(seed) if hasattr(mg, "Generator") else FakeGenerator(seed)


def test_multinomial_draws_with_the_given_probabilities():
    counts = np.bincount(mg.multinomial(mg.tensor([0.2, 0.0, 0.8]), 4000, True).numpy(),
                         minlength=3)
    assert counts[1] == 0 and abs(counts[2] / 4000 - 0.8) < 0.03


def test_multinomial_without_replacement_draws_each_category_once():
    draws = mg.tensor([[1.0, 2.0, 3.0, 4.0]] * 5).multinomial(4)
    assert draws.shape == (5, 4) and draws.dtype == np.int64
    assert all(sorted(row) == [0, 1, 2, 3] for row in draws.tolist())


def test_multinomial_without_replacement_refuses_too_many_samples():
    with pytest.raises(RuntimeError, match="cannot draw 3 samples without replacement from 2"):
        mg.multinomial(mg.tensor([0.5, 0.0, 0.5]), 3)


def test_multinomial_refuses_negative_weights():
    with pytest.raises(RuntimeError, match="finite and non-negative"):
        mg.multinomial(mg.tensor([0.5, -0.1]), 1)


@pytest.mark.parametrize("draw", [
    lambda generator: mg.multinomial(mg.ones(5), 3, generator=generator),
    lambda generator: mg.normal(0.0, 1.0, (4,), generator=generator),
    lambda generator: mg.normal(mg.zeros(4), 2.0, generator=generator),
])
def test_random_draws_follow_the_seed_of_a_generator_or_the_global_one(draw):
    assert draw(make_generator(3)).tolist() == draw(make_generator(3)).tolist()
    mg.manual_seed(5)
    first = draw(None).tolist()
    mg.manual_seed(5)
    assert draw(None).tolist() == first


def test_a_generator_of_another_kind_is_refused():
    with pytest.raises(TypeError, match="normal: generator must be a minigrad Generator"):
        mg.normal(0.0, 1.0, (2,), generator=np.random.default_rng(0))


def test_normal_is_differentiable_in_mean_and_std_as_in_pytorch():
    mean = mg.zeros(1000, requires_grad=True)
    std = mg.full((1000,), 2.0, requires_grad=True)
    sample = mg.normal(mean, std)
    sample.sum().backward()
    assert mean.grad.tolist() == [1.0] * 1000
    np.testing.assert_allclose(std.grad.numpy(), sample.detach().numpy() / 2, rtol=1e-6)
    assert abs(float(sample.std()) - 2) < 0.2


# --- conversions and new tensors -------------------------------------------------------------


def test_type_without_a_dtype_gives_pytorchs_type_name():
    assert mg.ones(2).type() == "torch.FloatTensor"
    assert mg.ones(2, dtype="int64").type() == "torch.LongTensor"


def test_type_with_a_dtype_or_a_type_name_converts():
    assert mg.ones(2).type(mg.float64).dtype == np.float64
    assert mg.ones(2).type("torch.LongTensor").dtype == np.int64
    assert mg.ones(2).type_as(mg.zeros(1, dtype="float64")).dtype == np.float64


def test_new_factories_keep_the_dtype_unless_told_otherwise():
    x = mg.ones(2, dtype="float64")
    assert x.new_zeros(3).dtype == np.float64 and x.new_zeros(3).tolist() == [0.0] * 3
    assert x.new_ones((2, 2)).shape == (2, 2)
    assert x.new_full((2,), 7).tolist() == [7.0, 7.0]
    assert x.new_tensor([1, 2]).dtype == np.float64
    assert x.new_empty(2, dtype="int64").dtype == np.int64
    assert x.new_zeros(2, requires_grad=True).requires_grad
    assert x.nelement() == 2


def test_allclose_and_equal_return_python_bools():
    x = mg.tensor([1.0, 2.0])
    assert mg.allclose(x, x + 1e-9) is True and mg.equal(x, x.clone()) is True
    assert mg.equal(x, mg.tensor([1.0, 2.0, 3.0])) is False
    assert mg.isclose(x, mg.tensor([1.0, 2.5])).tolist() == [True, False]


def test_the_function_spellings_are_exported_from_mg():
    for name in ("exp", "log1p", "rsqrt", "clamp", "clip", "sum", "max", "amax", "logsumexp",
                 "einsum", "split", "tril", "masked_fill", "topk", "unique", "softmax",
                 "allclose", "normal", "multinomial", "scatter_add", "index_select", "eq"):
        assert callable(getattr(mg, name)) and name in mg.__all__
    assert math.isclose(float(mg.exp(mg.tensor(1.0))), math.e, rel_tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mg.sum(mg.ones(3))  # the builtin-like names work as tensor functions
