"""Reductions, statistics, indexing and linear algebra of round 3 (tensor_stats.py,
functions_stats.py, linalg.py) where the op table (op_cases_stats.py) does not reach:
results without gradient (indices, counts, histograms, searches), return types, NumPy's
keyword aliases, argument checks and their messages. Each compares with PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg

RNG = np.random.default_rng(7)


def both(torch, fn, *arrays):
    """``fn(library, *tensors)`` on minigrad and on torch, for the same arrays."""
    ours = fn(mg, *(mg.tensor(a) for a in arrays))
    theirs = fn(torch, *(torch.tensor(a) for a in arrays))
    return ours, theirs


def assert_same(ours, theirs, rtol=1e-5, atol=1e-6):
    """The same structure, shapes, dtypes (by name) and values."""
    if isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, rtol, atol)
        return
    expected = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    got = ours.numpy() if isinstance(ours, mg.Tensor) else np.asarray(ours)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


# --- medians: values, indices, NaN ----------------------------------------------------------

WITH_NAN = np.array([[1.0, 2, 2, 3], [4, np.nan, 1, 0], [5, 1, 7, 2]], np.float32)


def test_median_of_all_elements_is_the_lower_middle_value(torch):
    x = RNG.standard_normal((4, 6)).astype(np.float32)  # 24 elements: the 12th smallest
    assert_same(*both(torch, lambda L, t: L.median(t), x))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_median_along_a_dim_returns_values_and_int64_indices(torch, dim):
    x = RNG.permutation(20).reshape(4, 5).astype(np.float32)
    ours, theirs = both(torch, lambda L, t: t.median(dim, keepdim=True), x)
    assert_same(tuple(ours), tuple(theirs))
    assert ours.values is ours[0] and ours.indices is ours[1]


def test_median_is_nan_where_a_row_has_a_nan_and_nanmedian_skips_them(torch):
    assert_same(*both(torch, lambda L, t: (t.median(), tuple(t.median(1)),
                                           t.nanmedian(), tuple(L.nanmedian(t, 1))), WITH_NAN))


def test_median_sends_the_gradient_to_the_chosen_element():
    x = mg.tensor([3.0, 1.0, 2.0, 5.0], requires_grad=True)
    x.median().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 0.0]


def test_median_of_an_empty_tensor_says_so():
    with pytest.raises(IndexError, match="median.*empty"):
        mg.zeros(0).median()


# --- counting and NaN-aware reductions ---------------------------------------------------


def test_count_nonzero_counts_per_dim_as_int64(torch):
    x = np.array([[1.0, 0, 3, 0], [0, 0, 2, 5]], np.float32)
    assert_same(*both(torch, lambda L, t: (L.count_nonzero(t), t.count_nonzero(1),
                                           L.count_nonzero(t, (0, 1))), x))


def test_nansum_and_nanmean_ignore_nans(torch):
    assert_same(*both(torch, lambda L, t: (L.nansum(t), t.nansum(0), L.nanmean(t, 1),
                                           t.nanmean(axis=1, keepdims=True)), WITH_NAN))


def test_nansum_gives_nans_a_zero_gradient():
    x = mg.tensor([1.0, math.nan, 2.0], requires_grad=True)
    x.nansum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def test_std_mean_and_var_mean_return_both_as_pytorch(torch):
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    assert_same(*both(torch, lambda L, t: (L.std_mean(t), L.var_mean(t, 1, unbiased=False),
                                           L.std_mean(t, dim=0, keepdim=True),
                                           L.var_mean(t, 1, correction=2)), x))


# --- NumPy's axis= and keepdims= on reductions ---------------------------------------------

ALIASES = ["sum", "mean", "max", "min", "std", "var", "prod", "amax", "amin", "argmax",
           "argmin", "all", "any", "logsumexp", "nansum", "nanmean", "median", "nanmedian"]


@pytest.mark.parametrize("name", ALIASES)
@pytest.mark.parametrize("form", ["function", "method"])
def test_reductions_take_numpys_axis_and_keepdims_as_pytorch_does(torch, name, form):
    x = RNG.permutation(12).reshape(3, 4).astype(np.float32) + 1

    def call(library, t):
        f = getattr(library, name) if form == "function" else getattr(t, name)
        args = (t,) if form == "function" else ()
        results = [f(*args, axis=1), f(*args, dim=0, keepdims=True),
                   f(*args, axis=1, keepdims=True)]
        return [tuple(r) if isinstance(r, tuple) else r for r in results]

    assert_same(*both(torch, call, x))


@pytest.mark.parametrize("name", ["std_mean", "var_mean", "cummax", "cummin", "logcumsumexp",
                                  "diff", "count_nonzero"])
def test_the_new_functions_take_axis_for_dim_as_pytorch_does(torch, name):
    x = RNG.standard_normal((3, 4)).astype(np.float32)

    def call(library, t):
        result = getattr(library, name)(t, axis=1)
        return tuple(result) if isinstance(result, tuple) else result

    assert_same(*both(torch, call, x))


def test_a_scan_without_a_dim_says_so():
    with pytest.raises(TypeError, match="cummax: give the dim"):
        mg.zeros(3).cummax()


# --- running extremes ------------------------------------------------------------------------


def test_cummax_and_cummin_move_the_index_on_ties_as_pytorch(torch):
    x = np.array([1.0, 3, 3, 2, 5, 5, 1, 1], np.float32)
    assert_same(*both(torch, lambda L, t: (tuple(t.cummax(0)), tuple(L.cummin(t, 0))), x))


def test_cummax_carries_a_nan_forward(torch):
    x = np.array([[1.0, np.nan, 3, 5], [2, 1, 4, 0]], np.float32)
    assert_same(*both(torch, lambda L, t: (tuple(t.cummax(1)), tuple(t.cummin(1))), x))


def test_logcumsumexp_is_exact_for_values_far_apart(torch):
    x = np.array([-1000.0, 0, 1000, -np.inf, 3], np.float32)
    assert_same(*both(torch, lambda L, t: L.logcumsumexp(t, 0), x))


# --- searching and counting ------------------------------------------------------------------

SEQUENCE = np.array([1.0, 3, 5, 7, 9], np.float32)
VALUES = np.array([[3.0, 6, 9], [1, 10, 0]], np.float32)


def test_searchsorted_left_right_and_side(torch):
    assert_same(*both(torch, lambda L, s, v: (
        L.searchsorted(s, v), L.searchsorted(s, v, right=True),
        L.searchsorted(s, v, side="right"), L.searchsorted(s, v, out_int32=True)),
        SEQUENCE, VALUES))


def test_searchsorted_works_row_by_row_on_a_batch_of_sequences(torch):
    rows = np.array([[1.0, 3, 5], [2, 4, 6]], np.float32)
    values = np.array([[3.0, 6], [1, 5]], np.float32)
    assert_same(*both(torch, lambda L, s, v: L.searchsorted(s, v, right=True), rows, values))


def test_searchsorted_refuses_right_with_side_left():
    with pytest.raises(ValueError, match="searchsorted: right=True and side='left'"):
        mg.searchsorted(mg.tensor(SEQUENCE), mg.tensor(VALUES), right=True, side="left")


def test_bucketize_puts_each_value_in_its_bucket(torch):
    assert_same(*both(torch, lambda L, v, b: (L.bucketize(v, b), L.bucketize(v, b, right=True)),
                      VALUES, SEQUENCE))


def test_histc_counts_in_equal_bins(torch):
    x = np.array([1.0, 2, 1, 2.5, 4, 7, 0.5, -3], np.float32)
    assert_same(*both(torch, lambda L, t: (L.histc(t, bins=4, min=0, max=4), t.histc(3),
                                           L.histc(t, 5, 1, 1)), x))


def test_bincount_with_weights_and_minlength(torch):
    index = np.array([0, 1, 1, 3, 4])
    weights = np.array([0.5, 1, 2, 3, 4], np.float32)
    assert_same(*both(torch, lambda L, i, w: (L.bincount(i), L.bincount(i, w),
                                              i.bincount(minlength=7)), index, weights))


def test_bincount_refuses_negative_values():
    with pytest.raises(ValueError, match=r"bincount: .*non-negative.*shape \(2,\)"):
        mg.bincount(mg.tensor([1, -1]))


def test_histogram_returns_counts_and_edges(torch):
    x = np.array([1.0, 2, 1, 2.5, 4, 7, 0.5], np.float32)
    ours, theirs = both(torch, lambda L, t: (
        L.histogram(t, 3), t.histogram(4, range=(0.0, 8.0), density=True),
        L.histogram(t, L.tensor([0.0, 1, 5, 8]), weight=t)), x)
    assert_same([tuple(r) for r in ours], [tuple(r) for r in theirs])
    assert ours[0].hist is ours[0][0] and ours[0].bin_edges is ours[0][1]


@pytest.mark.parametrize("row, col, offset", [(3, 4, 0), (4, 3, -1), (3, 3, 1), (2, 4, -1)])
def test_tril_and_triu_indices(torch, row, col, offset):
    assert_same(*both(torch, lambda L: (L.tril_indices(row, col, offset),
                                        L.triu_indices(row, col, offset))))


# --- selection, movement, shapes -------------------------------------------------------------


def test_stride_counts_elements_as_pytorch(torch):
    x = np.zeros((3, 4, 5), np.float32)
    assert_same(*both(torch, lambda L, t: (t.stride(), t.transpose(0, 2).stride(),
                                           t[:, ::2].stride(), t.stride(1), t.stride(-1),
                                           t.unsqueeze(1).stride()), x))


def test_take_and_masked_select_check_their_arguments():
    x = mg.zeros(2, 3)
    with pytest.raises(IndexError, match=r"take: .*shape \(2, 3\)"):
        x.take(mg.tensor([6]))
    with pytest.raises(TypeError, match="masked_select: mask must be a bool"):
        x.masked_select(mg.tensor([1, 0, 1]))
    with pytest.raises(mg.ShapeError, match=r"masked_select: .*\(2,\).*\(2, 3\)"):
        x.masked_select(mg.tensor([True, False]))


def test_movedim_checks_its_dims():
    with pytest.raises(ValueError, match="movedim: source .* same number"):
        mg.zeros(2, 3, 4).movedim((0, 1), 2)
    with pytest.raises(ValueError, match="movedim: repeated dim"):
        mg.zeros(2, 3, 4).movedim((0, 0), (1, 2))


def test_diff_of_bools_and_ints_as_pytorch(torch):
    assert_same(*both(torch, lambda L, b, i: (b.diff(), L.diff(b, append=b[:1]), i.diff(),
                                              L.diff(i, 2, prepend=i[:1])),
                      np.array([True, False, False, True]), np.array([1, 4, 9, 16])))


def test_rot90_any_k(torch):
    x = np.arange(6.0).reshape(2, 3)
    assert_same(*both(torch, lambda L, t: [L.rot90(t, k) for k in range(-3, 6)], x))


def test_block_diag_promotes_and_cartesian_prod_of_three(torch):
    assert_same(*both(torch, lambda L, a, b: L.block_diag(a, b), np.array([[1, 2]]),
                      np.array([3.5], np.float32)))
    assert_same(*both(torch, lambda L, a, b, c: L.cartesian_prod(a, b, c), np.array([1, 2]),
                      np.array([3, 4]), np.array([5])))


def test_cov_of_one_variable_and_corrcoef(torch):
    x = np.array([1.0, 2, 4, 7], np.float32)
    assert_same(*both(torch, lambda L, t: (t.cov(), L.corrcoef(t), L.cov(t, correction=0)), x))


def test_cov_checks_its_weights():
    with pytest.raises(mg.ShapeError, match=r"cov: fweights .*\(4\).*\(3,\)"):
        mg.cov(mg.zeros(2, 4), fweights=mg.tensor([1, 2, 3]))


def test_dist_with_p_zero_and_inf(torch):
    a, b = np.array([1.0, 2, 3], np.float32), np.array([1.0, 0, 0], np.float32)
    assert_same(*both(torch, lambda L, x, y: (L.dist(x, y, 0), L.dist(x, y, math.inf),
                                              x.dist(y, 3)), a, b))


def test_cdist_checks_the_shapes():
    with pytest.raises(mg.ShapeError, match=r"cdist: .*\(3, 2\) and \(4, 3\)"):
        mg.cdist(mg.zeros(3, 2), mg.zeros(4, 3))


# --- random ------------------------------------------------------------------------------------


def test_bernoulli_draws_from_the_seeded_generator():
    p = mg.full((1000,), 0.3)
    mg.manual_seed(0)
    first = mg.bernoulli(p)
    mg.manual_seed(0)
    again = p.bernoulli()
    assert first.dtype == np.float32 and set(np.unique(first.numpy())) <= {0.0, 1.0}
    assert np.array_equal(first.numpy(), again.numpy())
    assert 0.2 < first.numpy().mean() < 0.4


def test_bernoulli_in_place_fills_with_p():
    x = mg.zeros(2000)
    x.bernoulli_(0.75)
    assert 0.7 < x.numpy().mean() < 0.8
    assert x.bernoulli_(mg.ones(2000)).numpy().min() == 1.0


def test_bernoulli_refuses_probabilities_outside_0_1():
    with pytest.raises(ValueError, match=r"bernoulli: probabilities must be in \[0, 1\]"):
        mg.bernoulli(mg.tensor([0.5, 1.5]))


# --- linear algebra ----------------------------------------------------------------------------


def test_mg_linalg_is_a_module_and_importable():
    import minigrad.linalg

    assert mg.linalg is minigrad.linalg
    assert callable(mg.linalg.svd) and callable(mg.linalg.solve)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 4)])
def test_svd_shapes_and_reconstruction_as_pytorch(torch, shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    for full in (True, False):
        ours, theirs = both(torch, lambda L, t, f=full: L.linalg.svd(t, full_matrices=f), a)
        assert [tuple(o.shape) for o in ours] == [tuple(t.shape) for t in theirs]
        np.testing.assert_allclose(ours.S.numpy(), theirs.S.numpy(), rtol=1e-5, atol=1e-6)
    u, s, vh = mg.linalg.svd(mg.tensor(a), full_matrices=False)
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ vh).numpy(), a, rtol=1e-4, atol=1e-5)


def test_torch_svd_returns_v_not_vh_and_zeros_without_uv(torch):
    a = RNG.standard_normal((4, 3)).astype(np.float32)
    u, s, v = mg.svd(mg.tensor(a))
    np.testing.assert_allclose((u * s @ v.t()).numpy(), a, rtol=1e-4, atol=1e-5)
    ours, theirs = both(torch, lambda L, t: tuple(L.svd(t, some=False, compute_uv=False)), a)
    assert_same(ours, theirs, rtol=1e-5)


def test_svd_gradient_of_full_u_of_a_wide_matrix_is_refused():
    a = mg.randn(2, 3, requires_grad=True)
    u, s, vh = mg.linalg.svd(a)  # full_matrices=True
    with pytest.raises(RuntimeError, match=r"svd: .*full_matrices=True.*\(3, 3\)"):
        vh.sum().backward()
    s.sum().backward()  # the singular values alone have their gradient
    assert a.grad.shape == (2, 3)


def test_qr_modes_as_pytorch(torch):
    a = RNG.standard_normal((5, 3)).astype(np.float32)
    ours, theirs = both(torch, lambda L, t: (tuple(L.linalg.qr(t, "complete")),
                                             L.linalg.qr(t, "r").R, L.linalg.qr(t, "r").Q), a)
    assert_same(ours, theirs, rtol=1e-4, atol=1e-5)


def test_qr_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="linalg.qr: mode must be"):
        mg.linalg.qr(mg.zeros(2, 2), "full")


def test_eigh_reads_the_triangle_named_by_uplo(torch):
    a = np.array([[2.0, 1], [0, 3]], np.float32)
    assert_same(*both(torch, lambda L, t: (L.linalg.eigvalsh(t), L.linalg.eigvalsh(t, "U"),
                                           L.linalg.eigh(t, UPLO="U").eigenvalues), a))


def test_slogdet_sign_and_logdet_of_a_negative_determinant(torch):
    a = np.array([[0.0, 2], [1, 0]], np.float32)
    assert_same(*both(torch, lambda L, t: (tuple(L.linalg.slogdet(t)), tuple(t.slogdet()),
                                           L.logdet(t)), a))


def test_norms_as_pytorch(torch):
    a = np.array([[1.0, -2, 3], [4, 5, -6]], np.float32)
    assert_same(*both(torch, lambda L, t: (
        L.linalg.matrix_norm(t, -2), L.linalg.matrix_norm(t, -1),
        L.linalg.matrix_norm(t, -math.inf), L.linalg.norm(t), L.linalg.norm(t, 2),
        L.linalg.norm(t, 1, dim=1), L.linalg.vector_norm(t, 0), L.linalg.vector_norm(t, -1),
        L.linalg.vector_norm(t, 3, dim=(0, 1), keepdim=True)), a), rtol=1e-5)


def test_matrix_norm_refuses_an_unknown_ord():
    with pytest.raises(ValueError, match="linalg.matrix_norm: ord=3"):
        mg.linalg.matrix_norm(mg.zeros(2, 2), 3)


def test_solve_from_the_right_and_checks_the_shapes(torch):
    a = np.array([[2.0, 1], [1, 3]], np.float32)
    b = np.array([[1.0, 2], [3, 4], [5, 6]], np.float32)
    assert_same(*both(torch, lambda L, x, y: L.linalg.solve(x, y, left=False), a, b),
                rtol=1e-5)
    with pytest.raises(ValueError, match=r"linalg.solve: .*\(2, 2\).*\(3, 2\)"):
        mg.linalg.solve(mg.tensor(a), mg.tensor(b))


def test_matrix_exp_of_a_large_rotation(torch):
    a = np.array([[0.0, 20], [-20, 0]], np.float32)
    assert_same(*both(torch, lambda L, t: L.matrix_exp(t), a), rtol=1e-4, atol=1e-5)


def test_decompositions_refuse_integer_and_1d_inputs():
    with pytest.raises(TypeError, match="svd: expected a floating point tensor"):
        mg.linalg.svd(mg.tensor([[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match=r"linalg.qr: expected a matrix.*\(3,\)"):
        mg.linalg.qr(mg.zeros(3))
    with pytest.raises(ValueError, match=r"eigh: expected square matrices.*\(2, 3\)"):
        mg.linalg.eigh(mg.zeros(2, 3))


def test_matrix_rank_and_pinv_of_a_rank_deficient_matrix(torch):
    a = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]], np.float32)  # rank 2
    assert_same(*both(torch, lambda L, t: (L.linalg.matrix_rank(t), L.linalg.pinv(t)), a),
                rtol=1e-4, atol=1e-5)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_says_so():
    with pytest.raises(np.linalg.LinAlgError, match=r"cholesky: .*\(2, 2\).*positive definite"):
        mg.linalg.cholesky(mg.tensor([[1.0, 2], [2, 1]]))


def test_matrix_power_zero_is_the_identity(torch):
    a = RNG.standard_normal((2, 3, 3)).astype(np.float32)
    assert_same(*both(torch, lambda L, t: L.linalg.matrix_power(t, 0), a))


def test_cross_needs_three_components():
    with pytest.raises(ValueError, match=r"linalg.cross: .*\(2, 2\)"):
        mg.linalg.cross(mg.zeros(2, 2), mg.zeros(2, 2))


def test_slogdet_of_a_large_matrix_does_not_overflow(torch):
    a = RNG.standard_normal((120, 120)).astype(np.float32)  # |det| far beyond float32
    assert_same(*both(torch, lambda L, t: tuple(L.linalg.slogdet(t)), a), rtol=1e-4)


def test_a_left_out_linalg_function_says_what_to_use():
    with pytest.raises(AttributeError, match="torch.linalg.eig is not supported.*eigh"):
        mg.linalg.eig(mg.zeros(2, 2))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_function'"):
        mg.linalg.no_such_function


# --- order statistics: kthvalue, mode, quantile -----------------------------------------------


def test_mode_picks_the_smallest_of_the_most_frequent_and_its_last_place(torch):
    x = np.array([[1.0, 2, 2, 3, 3, 0], [5, 5, 1, 1, 7, 1]], np.float32)
    assert_same(*both(torch, lambda L, t: (tuple(t.mode(1)), tuple(L.mode(t, 0, True))), x))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_and_nanquantile_interpolate_as_pytorch(torch, interpolation):
    x = RNG.standard_normal((3, 7)).astype(np.float32)
    x[0, 2] = np.nan
    assert_same(*both(torch, lambda L, t: (
        L.quantile(t, 0.3, dim=1, interpolation=interpolation),
        L.nanquantile(t, L.tensor([0.0, 0.45, 1.0]), dim=1, keepdim=True,
                      interpolation=interpolation),
        t.nanquantile(0.8, interpolation=interpolation),
        t[1:].quantile(0.5, keepdim=True, interpolation=interpolation)), x))


def test_quantile_checks_q_and_interpolation():
    with pytest.raises(ValueError, match=r"quantile: q must be .*\[1.5\]"):
        mg.quantile(mg.zeros(3), mg.tensor([1.5]))
    with pytest.raises(ValueError, match="nanquantile: interpolation must be one of"):
        mg.nanquantile(mg.zeros(3), 0.5, interpolation="cubic")


def test_kthvalue_checks_k():
    with pytest.raises(IndexError, match=r"kthvalue: k=4 .*size 3 \(shape \(2, 3\)\)"):
        mg.zeros(2, 3).kthvalue(4)


def test_aminmax_of_all_elements(torch):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    assert_same(*both(torch, lambda L, t: tuple(L.aminmax(t)), x))


def test_eigh_vector_gradient_is_symmetric_as_pytorch_s_and_var_of_one_element():
    torch = pytest.importorskip("torch")
    a = [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]
    weights = [1.0, 2.0, 3.0]
    x = mg.tensor(a, dtype=mg.float64, requires_grad=True)
    (mg.linalg.eigh(x).eigenvectors[:, 0] ** 2 * mg.tensor(weights, dtype=mg.float64)).sum() \
        .backward()
    t = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    (torch.linalg.eigh(t).eigenvectors[:, 0] ** 2 * torch.tensor(weights, dtype=torch.float64)) \
        .sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)
    # var of one element: NaN, and a NaN gradient (it raised ZeroDivisionError)
    one = mg.tensor([2.0], requires_grad=True)
    variance, mean = mg.var_mean(one)
    (variance + mean).backward()
    assert np.isnan(variance.numpy()) and np.isnan(one.grad.numpy()).all()


def test_torch_cross_and_diff_past_the_size_match_pytorch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((3, 2))
    b = np.random.default_rng(1).standard_normal((3, 2))
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim"):
        ours = mg.cross(mg.tensor(a), mg.tensor(b))  # the first dim of size 3
    with pytest.warns(UserWarning):
        theirs = torch.cross(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    np.testing.assert_allclose(mg.tensor(a.T).cross(mg.tensor(b.T), dim=1).numpy(),
                               theirs.numpy().T, rtol=1e-12)
    assert mg.diff(mg.tensor([1.0, 2.0]), n=3).shape == tuple(
        torch.diff(torch.tensor([1.0, 2.0]), n=3).shape) == (0,)


def test_quantile_of_a_zero_dim_input_keeps_its_shape_as_pytorch():
    torch = pytest.importorskip("torch")
    for q in (0.3, [0.1, 0.5, 0.9]):
        ours = mg.quantile(mg.tensor(2.0), mg.tensor(q) if isinstance(q, list) else q, dim=0,
                           keepdim=True)
        theirs = torch.quantile(torch.tensor(2.0), torch.tensor(q) if isinstance(q, list)
                                else q, dim=0, keepdim=True)
        assert ours.shape == tuple(theirs.shape)
