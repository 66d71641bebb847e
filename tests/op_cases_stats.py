"""Op cases for the reductions, statistics, indexing and linear algebra of tensor_stats.py
/ functions_stats.py / linalg.py (round 3 of the census), each written once for both
libraries (``lib(x)`` is minigrad or torch). The NumPy references are written from the
definitions, the slow obvious way.

Singular vectors and eigenvectors are defined up to sign (LAPACK's choice may differ
between NumPy and PyTorch), so their cases look at sign-free functions of them: their
squares, and the rank-one matrix u_1 v_1^T.
"""

from __future__ import annotations

import math

import numpy as np
from op_cases import OpCase, distinct, real, torch
from op_cases_tensor_ops import const, lib

import minigrad as mg

# --- constants ----------------------------------------------------------------------------

NAN_MASK = np.array([[False, True, False, False, True],
                     [True, True, True, False, False],
                     [False, False, False, False, False]])  # 2, 3 and 0 NaNs per row
SELECT_MASK = np.array([[True, False, True, False], [False, False, True, True],
                        [True, True, False, False]])
TAKE_INDEX = np.array([[0, 11, 5], [5, 3, -1]])  # 5 twice: its gradients add up
FREQUENCIES = np.array([1, 3, 2, 1, 2])
WEIGHTS = np.array([0.5, 1.0, 2.0, 1.5, 0.25])
SPD_SHIFT = 3 * np.eye(3)  # added to a a^T: well conditioned, distinct eigenvalues


def linalg(x):
    return mg.linalg if isinstance(x, mg.Tensor) else torch.linalg


def with_nans(x):
    return x.masked_fill(const(x, NAN_MASK), math.nan)


def nan_reference(x):
    return np.where(NAN_MASK, np.nan, x)


# --- NumPy references -----------------------------------------------------------------------


def lower_median(x, axis):
    """(values, indices): the element at position (n - 1) // 2 of the sorted slice."""
    order = np.argsort(x, axis=axis, kind="stable")
    middle = np.take(order, [(x.shape[axis] - 1) // 2], axis=axis)
    values = np.take_along_axis(x, middle, axis=axis)
    return values.squeeze(axis), middle.squeeze(axis)


def nan_lower_median(row):
    numbers = np.sort(row[~np.isnan(row)])
    return numbers[(len(numbers) - 1) // 2]


def cov_reference(x, correction=1, fweights=None, aweights=None):
    w = np.ones(x.shape[1])
    w = w * fweights if fweights is not None else w
    w = w * aweights if aweights is not None else w
    mean = (x * w).sum(1, keepdims=True) / w.sum()
    divisor = w.sum() - (correction * (w * aweights).sum() / w.sum() if aweights is not None
                         else correction)
    out = np.zeros((x.shape[0], x.shape[0]))
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            out[i, j] = np.sum(w * (x[i] - mean[i]) * (x[j] - mean[j])) / divisor
    return out


def running(x, better):
    """(values, indices) of a running extreme along the last dim; a tie moves the index."""
    values, indices = np.empty_like(x), np.zeros(x.shape, dtype=np.int64)
    for row in np.ndindex(x.shape[:-1]):
        best = 0
        for j in range(x.shape[-1]):
            if not better(x[row][best], x[row][j]):
                best = j
            values[row][j], indices[row][j] = x[row][best], best
    return values, indices


def cdist_reference(a, b, p):
    out = np.zeros(a.shape[:-1] + (b.shape[-2],))
    for index in np.ndindex(out.shape):
        *batch, i, j = index
        d = np.abs(a[(*batch, i)] - b[(*batch, j)])
        out[index] = d.max() if p == math.inf else (d ** p).sum() ** (1 / p)
    return out


def diag_embed_reference(x, offset):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n))
    for k in range(x.shape[-1]):
        out[..., k + max(-offset, 0), k + max(offset, 0)] = x[..., k]
    return out


def block_diag_reference(*blocks):
    blocks = [b.reshape(1, -1) if b.ndim < 2 else b for b in blocks]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
    row = column = 0
    for b in blocks:
        out[row:row + b.shape[0], column:column + b.shape[1]] = b
        row, column = row + b.shape[0], column + b.shape[1]
    return out


def renorm_reference(x, p, dim, maxnorm):
    out = x.copy()
    for i in range(x.shape[dim]):
        part = np.take(x, i, axis=dim)
        norm = (np.abs(part) ** p).sum() ** (1 / p)
        if norm > maxnorm:
            index = [slice(None)] * x.ndim
            index[dim] = i
            out[tuple(index)] = part * maxnorm / (norm + 1e-7)
    return out


def svd_reference(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return s, u ** 2, vh ** 2, u[..., :, :1] @ vh[..., :1, :]


def svd_parts(result):
    """Sign-free functions of (U, S, Vh): S, U^2, Vh^2 and u_1 v_1^T."""
    u, s, vh = result
    return s, u ** 2, vh ** 2, u[..., :, :1] @ vh[..., :1, :]


def symmetric(a):
    return a + a.swapaxes(-1, -2)


def eigh_reference(a):
    values, vectors = np.linalg.eigh(symmetric(a))
    return values, vectors ** 2, vectors[..., :, -1:] @ vectors[..., :, -1:].swapaxes(-1, -2)


def eigh_parts(values, vectors):
    return values, vectors ** 2, vectors[..., :, -1:] @ vectors[..., :, -1:].swapaxes(-1, -2)


def matrix_exp_reference(a):
    total, term = np.eye(a.shape[-1]), np.eye(a.shape[-1])
    for k in range(1, 40):
        term = term @ a / k
        total = total + term
    return total


def spd(a):
    shift = SPD_SHIFT if isinstance(a, np.ndarray) else const(a, SPD_SHIFT)
    return a @ a.swapaxes(-1, -2) + shift


LINALG = dict(rtol=1e-4, atol=1e-5)


CASES = [
    # --- medians: the gradient goes to the chosen element ---
    OpCase("median_all", lambda x: x.median(), lambda x: np.sort(x.ravel())[(x.size - 1) // 2],
           (distinct(3, 4),)),
    OpCase("median_dim", lambda x: lib(x).median(x, 1), lambda x: lower_median(x, 1),
           (distinct(3, 6),), dtypes=("float32", "int64")),
    OpCase("median_dim_keepdim", lambda x: x.median(0, keepdim=True),
           lambda x: tuple(np.expand_dims(r, 0) for r in lower_median(x, 0)),
           (distinct(5, 3),), dtypes=("float32", "int64")),
    OpCase("nanmedian_dim", lambda x: with_nans(x).nanmedian(1).values,
           lambda x: np.array([nan_lower_median(r) for r in nan_reference(x)]),
           (distinct(3, 5),)),
    OpCase("nanmedian_all", lambda x: lib(x).nanmedian(with_nans(x)),
           lambda x: nan_lower_median(nan_reference(x).ravel()), (distinct(3, 5),)),
    OpCase("nansum", lambda x: with_nans(x).nansum(1), lambda x: np.nansum(nan_reference(x), 1),
           (real(3, 5),)),
    OpCase("nanmean_keepdim", lambda x: lib(x).nanmean(with_nans(x), 0, keepdim=True),
           lambda x: np.nanmean(nan_reference(x), 0, keepdims=True), (real(3, 5),)),
    OpCase("std_mean", lambda x: lib(x).std_mean(x, 1), lambda x: (x.std(1, ddof=1), x.mean(1)),
           (real(3, 5),), dtypes=("float32", "float32")),
    OpCase("var_mean_correction", lambda x: lib(x).var_mean(x, 0, correction=0, keepdim=True),
           lambda x: (x.var(0, keepdims=True), x.mean(0, keepdims=True)), (real(4, 3),),
           dtypes=("float32", "float32")),
    OpCase("sum_axis_keepdims", lambda x: lib(x).sum(x, axis=0, keepdims=True),
           lambda x: x.sum(0, keepdims=True), (real(3, 4),)),
    OpCase("amax_axis_keepdims", lambda x: x.amax(axis=1, keepdims=True),
           lambda x: x.max(1, keepdims=True), (distinct(3, 4),)),

    # --- covariance and distances ---
    OpCase("cov", lambda x: x.cov(), lambda x: cov_reference(x), (real(3, 6),)),
    OpCase("cov_weights", lambda x: lib(x).cov(
        x, correction=0, fweights=const(x, FREQUENCIES), aweights=const(x, WEIGHTS)),
        lambda x: cov_reference(x, 0, FREQUENCIES, WEIGHTS), (real(2, 5),)),
    OpCase("corrcoef", lambda x: lib(x).corrcoef(x), lambda x: np.corrcoef(x), (real(3, 6),),
           **LINALG),
    OpCase("dist", lambda x, y: lib(x).dist(x, y), lambda x, y: np.sqrt(((x - y) ** 2).sum()),
           (real(3, 4), real(4))),
    OpCase("dist_p1", lambda x, y: x.dist(y, 1), lambda x, y: np.abs(x - y).sum(),
           (real(3, 4), real(3, 4), )),
    OpCase("cdist", lambda a, b: lib(a).cdist(a, b), lambda a, b: cdist_reference(a, b, 2),
           (real(4, 3), real(5, 3))),
    OpCase("cdist_p1_batched", lambda a, b: lib(a).cdist(a, b, p=1),
           lambda a, b: cdist_reference(a, b, 1), (real(2, 3, 4), real(2, 2, 4))),
    OpCase("cdist_inf", lambda a, b: lib(a).cdist(a, b, p=math.inf),
           lambda a, b: cdist_reference(a, b, math.inf), (real(3, 2), real(4, 2))),
    OpCase("renorm", lambda x: x.renorm(2, 0, 1.5), lambda x: renorm_reference(x, 2, 0, 1.5),
           (real(4, 3),)),

    # --- running extremes and sums ---
    OpCase("cummax", lambda x: x.cummax(1), lambda x: running(x, lambda best, new: new < best),
           (distinct(3, 5),), dtypes=("float32", "int64")),
    OpCase("cummin_dim0", lambda x: lib(x).cummin(x, 0),
           lambda x: tuple(np.swapaxes(r, 0, 1) for r in running(
               np.swapaxes(x, 0, 1), lambda best, new: new > best)),
           (distinct(4, 3),), dtypes=("float32", "int64")),
    OpCase("logcumsumexp", lambda x: lib(x).logcumsumexp(x, 1),
           lambda x: np.logaddexp.accumulate(x, 1), (real(3, 5),)),
    OpCase("diff", lambda x: x.diff(), lambda x: x[:, 1:] - x[:, :-1], (real(3, 5),)),
    OpCase("diff_twice_prepend", lambda x, p: lib(x).diff(x, n=2, dim=0, prepend=p),
           lambda x, p: np.diff(x, 2, 0, prepend=p), (real(4, 3), real(2, 3))),

    # --- selection and movement ---
    OpCase("masked_select", lambda x: x.masked_select(const(x, SELECT_MASK)),
           lambda x: x[SELECT_MASK], (real(3, 4),)),
    OpCase("masked_select_broadcast", lambda x: lib(x).masked_select(x, const(x, [True, False,
                                                                                 True, True])),
           lambda x: x[:, [0, 2, 3]].ravel(), (real(3, 4),)),
    OpCase("take", lambda x: x.take(const(x, TAKE_INDEX)),
           lambda x: x.ravel()[TAKE_INDEX], (real(3, 4),)),
    OpCase("movedim", lambda x: lib(x).movedim(x, (0, 1), (2, 0)),
           lambda x: np.moveaxis(x, (0, 1), (2, 0)), (real(2, 3, 4),)),
    OpCase("moveaxis_method", lambda x: x.moveaxis(-1, 0), lambda x: np.moveaxis(x, -1, 0),
           (real(2, 3, 4),)),
    OpCase("rot90", lambda x: x.rot90(), lambda x: np.rot90(x), (real(3, 4),)),
    OpCase("rot90_k3_dims", lambda x: lib(x).rot90(x, 3, (1, 2)),
           lambda x: np.rot90(x, 3, (1, 2)), (real(2, 3, 4),)),
    OpCase("rot90_k2", lambda x: x.rot90(-2), lambda x: np.rot90(x, 2), (real(3, 4),)),
    OpCase("diag_embed", lambda x: x.diag_embed(), lambda x: diag_embed_reference(x, 0),
           (real(2, 3),)),
    OpCase("diag_embed_offset_dims", lambda x: lib(x).diag_embed(x, -1, 0, 2),
           lambda x: np.moveaxis(diag_embed_reference(x, -1), (-2, -1), (0, 2)),
           (real(2, 3),)),
    OpCase("kron", lambda a, b: lib(a).kron(a, b), np.kron, (real(2, 3), real(3, 2))),
    OpCase("kron_mixed_ndim", lambda a, b: a.kron(b), np.kron, (real(3), real(2, 2))),
    OpCase("block_diag", lambda a, b, c: lib(a).block_diag(a, b, c), block_diag_reference,
           (real(2, 3), real(3), real(2, 2))),
    OpCase("cartesian_prod", lambda a, b: lib(a).cartesian_prod(a, b),
           lambda a, b: np.array([[p, q] for p in a for q in b]), (real(3), real(2))),

    # --- linear algebra ---
    OpCase("linalg_svd_tall", lambda a: svd_parts(linalg(a).svd(a, full_matrices=False)),
           svd_reference, (real(5, 3),), dtypes=("float32",) * 4, **LINALG),
    OpCase("linalg_svd_wide_batched", lambda a: svd_parts(linalg(a).svd(a, False)),
           svd_reference, (real(2, 3, 4),), dtypes=("float32",) * 4, **LINALG),
    OpCase("svd_legacy", lambda a: svd_parts((lambda u, s, v: (u, s, v.mT))(*lib(a).svd(a))),
           svd_reference, (real(4, 4),), dtypes=("float32",) * 4, **LINALG),
    OpCase("linalg_svdvals", lambda a: linalg(a).svdvals(a),
           lambda a: np.linalg.svd(a, compute_uv=False), (real(3, 5),), **LINALG),
    OpCase("linalg_qr_tall", lambda a: tuple(linalg(a).qr(a)), lambda a: np.linalg.qr(a),
           (real(5, 3),), dtypes=("float32", "float32"), **LINALG),
    OpCase("linalg_qr_wide", lambda a: tuple(linalg(a).qr(a)), lambda a: np.linalg.qr(a),
           (real(3, 5),), dtypes=("float32", "float32"), **LINALG),
    OpCase("qr_legacy_batched", lambda a: tuple(lib(a).qr(a)), lambda a: np.linalg.qr(a),
           (real(2, 4, 4),), dtypes=("float32", "float32"), **LINALG),
    OpCase("linalg_eigh", lambda a: eigh_parts(*linalg(a).eigh(symmetric(a))), eigh_reference,
           (real(4, 4),), dtypes=("float32",) * 3, **LINALG),
    OpCase("linalg_eigvalsh_batched", lambda a: linalg(a).eigvalsh(symmetric(a)),
           lambda a: np.linalg.eigvalsh(symmetric(a)), (real(2, 3, 3),), **LINALG),
    OpCase("linalg_vector_norm_3", lambda x: linalg(x).vector_norm(x, 3, dim=1),
           lambda x: (np.abs(x) ** 3).sum(1) ** (1 / 3), (real(3, 4),)),
    OpCase("linalg_vector_norm_inf", lambda x: linalg(x).vector_norm(x, math.inf),
           lambda x: np.abs(x).max(), (real(3, 4),)),
    OpCase("linalg_matrix_norm_fro", lambda a: linalg(a).matrix_norm(a),
           lambda a: np.linalg.norm(a, "fro", (-2, -1)), (real(2, 3, 4),)),
    OpCase("linalg_matrix_norm_nuc", lambda a: linalg(a).matrix_norm(a, "nuc"),
           lambda a: np.linalg.norm(a, "nuc"), (real(3, 4),), **LINALG),
    OpCase("linalg_matrix_norm_2", lambda a: linalg(a).matrix_norm(a, 2),
           lambda a: np.linalg.norm(a, 2), (real(4, 3),), **LINALG),
    OpCase("linalg_matrix_norm_1_keepdim", lambda a: linalg(a).matrix_norm(a, 1, keepdim=True),
           lambda a: np.abs(a).sum(-2).max(-1)[..., None, None], (real(2, 3, 4),)),
    OpCase("linalg_matrix_norm_inf", lambda a: linalg(a).matrix_norm(a, math.inf),
           lambda a: np.abs(a).sum(-1).max(-1), (real(3, 4),)),
    OpCase("linalg_norm_vector", lambda x: linalg(x).norm(x, dim=1),
           lambda x: np.sqrt((x ** 2).sum(1)), (real(3, 4),)),
    OpCase("linalg_norm_matrix_nuc", lambda a: linalg(a).norm(a, "nuc"),
           lambda a: np.linalg.norm(a, "nuc"), (real(3, 3),), **LINALG),
    OpCase("linalg_solve", lambda a, b: linalg(a).solve(spd(a), b),
           lambda a, b: np.linalg.solve(spd(a), b), (real(3, 3), real(3, 2)), **LINALG),
    OpCase("linalg_solve_vector", lambda a, b: linalg(a).solve(spd(a), b),
           lambda a, b: np.linalg.solve(spd(a), b), (real(3, 3), real(3)), **LINALG),
    OpCase("linalg_slogdet", lambda a: linalg(a).slogdet(a).logabsdet,
           lambda a: np.linalg.slogdet(a)[1], (real(2, 3, 3),), **LINALG),
    OpCase("logdet", lambda a: lib(a).logdet(spd(a)),
           lambda a: np.log(np.linalg.det(spd(a))), (real(3, 3),), **LINALG),
    OpCase("matrix_exp", lambda a: lib(a).matrix_exp(a), matrix_exp_reference, (real(3, 3),),
           **LINALG),
    OpCase("linalg_matrix_exp_batched", lambda a: linalg(a).matrix_exp(a * 2),
           lambda a: np.stack([matrix_exp_reference(m * 2) for m in a]), (real(2, 3, 3),),
           rtol=1e-4, atol=1e-4),
]

CASES += [
    OpCase("linalg_cholesky", lambda a: linalg(a).cholesky(spd(a)),
           lambda a: np.linalg.cholesky(spd(a)), (real(3, 3),), **LINALG),
    OpCase("linalg_cholesky_upper_batched", lambda a: linalg(a).cholesky(spd(a), upper=True),
           lambda a: np.linalg.cholesky(spd(a)).swapaxes(-1, -2), (real(2, 3, 3),), **LINALG),
    OpCase("linalg_matrix_power", lambda a: linalg(a).matrix_power(a, 3),
           lambda a: a @ a @ a, (real(3, 3),)),
    OpCase("linalg_matrix_power_negative", lambda a: linalg(a).matrix_power(spd(a), -2),
           lambda a: np.linalg.matrix_power(spd(a), -2), (real(3, 3),), **LINALG),
    OpCase("linalg_multi_dot", lambda a, b, c: linalg(a).multi_dot([a, b, c]),
           lambda a, b, c: a @ b @ c, (real(4), real(4, 3), real(3, 2))),
    OpCase("linalg_vecdot", lambda x, y: linalg(x).vecdot(x, y, dim=0),
           lambda x, y: (x * y).sum(0), (real(3, 4), real(3, 1))),
    OpCase("linalg_cross", lambda x, y: linalg(x).cross(x, y),
           lambda x, y: np.cross(x, y), (real(4, 3), real(4, 3))),
    OpCase("linalg_cross_dim0", lambda x, y: linalg(x).cross(x, y, dim=0),
           lambda x, y: np.cross(x, y, axis=0), (real(3, 2), real(3, 2))),
    OpCase("linalg_pinv", lambda a: linalg(a).pinv(a), np.linalg.pinv, (real(4, 3),),
           **LINALG),
]

MODE_ROWS = np.array([[0.5, 1.5, 0.5, -1, 1.5, 1.5], [2, -2, -2, 2, 0.25, 0.25]])  # repeats


def mode_reference(x):
    """The most frequent value of each row of MODE_ROWS * x (smallest on a tie), last place."""
    rows = MODE_ROWS * x[:, :1]
    indices = []
    for row in rows:
        uniques, counts = np.unique(row, return_counts=True)
        indices.append(np.flatnonzero(row == uniques[np.argmax(counts)])[-1])
    indices = np.array(indices)
    return rows[np.arange(len(rows)), indices], indices


def quantile_reference(x, q, axis):
    """Rank q (n - 1) of the sorted slice, linear between its neighbours."""
    ordered = np.sort(x, axis=axis)
    rank = q * (x.shape[axis] - 1)
    low, high = np.take(ordered, int(np.floor(rank)), axis), np.take(ordered, int(np.ceil(rank)),
                                                                     axis)
    return low + (high - low) * (rank - np.floor(rank))


CASES += [
    OpCase("kthvalue", lambda x: lib(x).kthvalue(x, 2, 1), lambda x: (
        np.sort(x, 1)[:, 1], np.argsort(x, 1)[:, 1]), (distinct(3, 5),),
        dtypes=("float32", "int64")),
    OpCase("kthvalue_keepdim", lambda x: x.kthvalue(3, 0, keepdim=True), lambda x: (
        np.sort(x, 0)[2:3], np.argsort(x, 0)[2:3]), (distinct(4, 3),),
        dtypes=("float32", "int64")),
    OpCase("mode", lambda x: (const(x, MODE_ROWS) * x[:, :1]).mode(1),
           mode_reference, (real(2, 1),), dtypes=("float32", "int64")),
    OpCase("aminmax", lambda x: tuple(lib(x).aminmax(x, dim=1)),
           lambda x: (x.min(1), x.max(1)), (distinct(3, 4),), dtypes=("float32", "float32")),
    OpCase("quantile", lambda x: lib(x).quantile(x, 0.3, dim=1),
           lambda x: quantile_reference(x, 0.3, 1), (distinct(3, 6),)),
    OpCase("quantile_of_all", lambda x: x.quantile(0.62), lambda x: quantile_reference(
        x.ravel(), 0.62, 0), (distinct(3, 4),)),
    OpCase("quantile_several_keepdim", lambda x: lib(x).quantile(
        x, const(x, [0.1, 0.5, 0.85]), dim=0, keepdim=True),
        lambda x: np.stack([quantile_reference(x, q, 0)[None] for q in (0.1, 0.5, 0.85)]),
        (distinct(5, 3),)),
    OpCase("nanquantile", lambda x: with_nans(x).nanquantile(0.4, 1),
           lambda x: np.nanquantile(nan_reference(x), 0.4, 1), (distinct(3, 5),)),
]
