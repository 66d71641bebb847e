"""Op cases for the PyTorch surface of issue 11, part B: the Tensor methods and ``mg.*``
functions added for it (unary maths, reductions, linear algebra, shape, selection,
in-place updates), each row written once for both libraries.

``lib(x)`` is the library of ``x`` (minigrad or torch), so ``lib(x).exp(x)`` is
``mg.exp`` on one side and ``torch.exp`` on the other; ``const(x, array)`` makes a
constant (an index, a mask) in the library and float dtype of ``x``.
"""

from __future__ import annotations

import math

import numpy as np
from op_cases import (OpCase, ROWS, distinct, positive, real, sigmoid_reference, torch)

import minigrad as mg


def lib(x):
    """minigrad for a minigrad tensor, torch for a torch tensor."""
    return mg if isinstance(x, mg.Tensor) else torch


def const(x, array):
    """A constant in x's library: float arrays get x's dtype, others keep theirs."""
    array = np.asarray(array)
    if array.dtype.kind == "f":
        return lib(x).tensor(array, dtype=x.dtype)
    return lib(x).tensor(array)


# --- constants --------------------------------------------------------------------------------

MASK = np.array([[True, False, True, True],
                 [False, False, True, False],
                 [True, True, False, False]])  # every row keeps one element unmasked
ZERO_ROW = np.array([[1.0], [0.0], [1.0]])
ZEROS_IN_ROW_1 = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 1.0]])
SCATTER_COLUMNS = np.array([[3, 0], [1, 2], [0, 1]])  # dim 1 of (3, 4), distinct per row
SCATTER_REPEATS = np.array([[0, 2, 2, 1], [2, 2, 0, 0]])  # dim 0 of (3, 4), rows repeat
REPEATS = np.array([1, 0, 2])


# --- NumPy references -------------------------------------------------------------------------

erf_reference = np.vectorize(math.erf)


def softmax_reference(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def prod_reference(x, axis=None, keepdims=False):
    return np.prod(x, axis=axis, keepdims=keepdims)


def norm_reference(x, p, axis=None):
    if p == math.inf:
        return np.abs(x).max(axis=axis)
    return (np.abs(x) ** p).sum(axis=axis) ** (1 / p)


def scatter_reference(x, dim, index, src):
    out = x.copy()
    for position in np.ndindex(*index.shape):
        target = list(position)
        target[dim] = index[position]
        out[tuple(target)] = src[position] if np.ndim(src) else src
    return out


def scatter_add_reference(x, dim, index, src):
    out = x.copy()
    for position in np.ndindex(*index.shape):
        target = list(position)
        target[dim] = index[position]
        out[tuple(target)] += src[position]
    return out


def sort_reference(x, axis, descending=False):
    indices = np.argsort(-x if descending else x, axis=axis, kind="stable")
    return np.take_along_axis(x, indices, axis), indices


def topk_reference(x, k, axis=-1, largest=True):
    values, indices = sort_reference(x, axis, largest)
    keep = (slice(None),) * (axis % x.ndim) + (slice(0, k),)
    return values[keep], indices[keep]


def diag_matrix_reference(v, offset):
    return np.diag(v, offset)


def split_reference(x, sizes, axis):
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


# --- the table --------------------------------------------------------------------------------

UNARY_FUNCTIONS = [  # name, NumPy reference, domain of the input
    ("exp", np.exp, real(3, 4)), ("log", np.log, positive(3, 4)),
    ("log1p", np.log1p, positive(3, 4)), ("expm1", np.expm1, real(3, 4)),
    ("log2", np.log2, positive(3, 4)), ("log10", np.log10, positive(3, 4)),
    ("sqrt", np.sqrt, positive(3, 4)), ("rsqrt", lambda x: 1 / np.sqrt(x), positive(3, 4)),
    ("sin", np.sin, real(3, 4)), ("cos", np.cos, real(3, 4)), ("tanh", np.tanh, real(3, 4)),
    ("sigmoid", sigmoid_reference, real(3, 4)),
    ("relu", lambda x: np.maximum(x, 0), real(3, 4, away_from=(0,))),
    ("abs", np.abs, real(3, 4, away_from=(0,))), ("neg", np.negative, real(3, 4)),
    ("sign", np.sign, real(3, 4, away_from=(0,))),
    ("floor", np.floor, real(3, 4, away_from=(-2, -1, 0, 1))),
    ("ceil", np.ceil, real(3, 4, away_from=(-2, -1, 0, 1))),
    ("round", np.round, real(3, 4, away_from=(-1.5, -0.5, 0.5, 1.5))),
    ("erf", erf_reference, real(3, 4)), ("square", np.square, real(3, 4)),
    ("reciprocal", np.reciprocal, real(3, 4, away_from=(0,))),
]

CASES: list[OpCase] = [
    # --- unary maths: the method and the mg.* function of each ---
    *[OpCase(f"{name}_method", lambda x, name=name: getattr(x, name)(), reference, (arg,))
      for name, reference, arg in UNARY_FUNCTIONS if name not in ("exp", "log", "sqrt", "sin",
                                                                    "cos", "tanh", "sigmoid",
                                                                    "relu", "abs", "neg")],
    *[OpCase(f"{name}_function", lambda x, name=name: getattr(lib(x), name)(x), reference,
             (arg,)) for name, reference, arg in UNARY_FUNCTIONS],
    # --- rounded division and remainders: div(rounding_mode=) has a zero gradient; //
    # (floor_divide) has none in PyTorch 2, so it is a no-gradient case; % and fmod carry
    # df/dx = 1, df/dy = -floor(x / y) or -trunc(x / y)
    OpCase("div_rounding_floor", lambda x, y: x.div(y, rounding_mode="floor"),
           lambda x, y: np.floor(x / y), (real(3, 4), positive(4))),
    OpCase("div_rounding_trunc_function",
           lambda x, y: lib(x).div(x * 3, y, rounding_mode="trunc"),
           lambda x, y: np.trunc(x * 3 / y), (real(3, 4), real(3, 1, away_from=(0.0,)))),
    OpCase("floor_divide_operator", lambda x, y: (x * 4) // y,
           lambda x, y: np.floor_divide(x * 4, y), (real(2, 5), real(5, away_from=(0.0,))),
           differentiable=False),
    OpCase("floor_divide_function_scalar", lambda x: lib(x).floor_divide(x * 5, 1.5),
           lambda x: np.floor_divide(x * 5, 1.5), (real(6),), differentiable=False),
    OpCase("rfloordiv_scalar", lambda x: 3.0 // x, lambda x: np.floor_divide(3.0, x),
           (positive(5),), differentiable=False),
    OpCase("remainder_operator", lambda x, y: (x * 4) % y,
           lambda x, y: np.remainder(x * 4, y), (real(3, 4), real(4, away_from=(0.0,)))),
    OpCase("remainder_function_scalar", lambda x: lib(x).remainder(x * 3, -1.5),
           lambda x: np.remainder(x * 3, -1.5), (real(2, 3),)),
    OpCase("rmod_scalar", lambda x: 5.0 % x, lambda x: np.remainder(5.0, x), (positive(4),),
           differentiable=False),
    OpCase("fmod_method", lambda x, y: (x * 4).fmod(y), lambda x, y: np.fmod(x * 4, y),
           (real(3, 4), real(3, 1, away_from=(0.0,)))),
    OpCase("fmod_function_scalar", lambda x: lib(x).fmod(x * 3, 1.25),
           lambda x: np.fmod(x * 3, 1.25), (real(5),)),
    OpCase("round_decimals", lambda x: x.round(decimals=1), lambda x: np.round(x, 1),
           (real(3, 4),)),
    OpCase("clamp_function", lambda x: lib(x).clamp(x, -0.5, 0.5),
           lambda x: np.clip(x, -0.5, 0.5), (real(3, 4, away_from=(-0.5, 0.5)),)),
    OpCase("clip_function", lambda x: lib(x).clip(x, min=-0.5),
           lambda x: np.maximum(x, -0.5), (real(3, 4, away_from=(-0.5,)),)),
    OpCase("clamp_min_method", lambda x: x.clamp_min(0.25), lambda x: np.maximum(x, 0.25),
           (real(3, 4, away_from=(0.25,)),)),
    OpCase("clamp_max_function", lambda x: lib(x).clamp_max(x, -0.25),
           lambda x: np.minimum(x, -0.25), (real(3, 4, away_from=(-0.25,)),)),
    OpCase("clamp_tensor_bounds", lambda x, low, high: x.clamp(low, high),
           lambda x, low, high: np.minimum(np.maximum(x, low), high),
           (distinct(3, 4), distinct(4), distinct(3, 1))),
    OpCase("pow_function", lambda x: lib(x).pow(x, 3), lambda x: x ** 3, (real(3, 4),)),
    OpCase("pow_function_number_base", lambda x: lib(x).pow(2.0, x), lambda x: 2.0 ** x,
           (real(3, 4),)),

    # --- binary maths functions ---
    OpCase("add_function_alpha", lambda x, y: lib(x).add(x, y, alpha=2), lambda x, y: x + 2 * y,
           (real(3, 4), real(4))),
    OpCase("sub_function_alpha", lambda x, y: lib(x).sub(x, y, alpha=0.5),
           lambda x, y: x - 0.5 * y, (real(3, 4), real(3, 1))),
    OpCase("mul_function", lambda x, y: lib(x).mul(x, y), np.multiply, (real(3, 4), real(4))),
    OpCase("div_function", lambda x, y: lib(x).div(x, y), np.divide,
           (real(3, 4), positive(3, 4))),
    OpCase("maximum_function", lambda x, y: lib(x).maximum(x, y), np.maximum,
           (distinct(3, 4), distinct(4))),
    OpCase("minimum_function", lambda x, y: lib(x).minimum(x, y), np.minimum,
           (distinct(3, 4), distinct(3, 1))),
    OpCase("lerp", lambda x, y: x.lerp(y, 0.3), lambda x, y: x + 0.3 * (y - x),
           (real(3, 4), real(3, 4))),
    OpCase("addcmul", lambda x, y, z: x.addcmul(y, z, value=0.5), lambda x, y, z: x + 0.5 * y * z,
           (real(3, 4), real(3, 4), real(4))),
    OpCase("addcdiv", lambda x, y, z: x.addcdiv(y, z, value=-2), lambda x, y, z: x - 2 * y / z,
           (real(3, 4), real(3, 4), positive(3, 4))),

    # --- reductions ---
    OpCase("prod_all", lambda x: x.prod(), prod_reference, (real(3, 4),)),
    OpCase("prod_dim", lambda x: x.prod(1), lambda x: prod_reference(x, 1), (real(3, 4),)),
    OpCase("prod_keepdim", lambda x: x.prod(-2, keepdim=True),
           lambda x: prod_reference(x, -2, True), (real(2, 3, 4),)),
    OpCase("prod_with_zeros", lambda x: (x * const(x, ZEROS_IN_ROW_1)).prod(1),
           lambda x: prod_reference(x * ZEROS_IN_ROW_1, 1), (real(3, 4),)),
    OpCase("prod_function", lambda x: lib(x).prod(x, 0), lambda x: prod_reference(x, 0),
           (real(3, 4),)),
    OpCase("cumsum", lambda x: x.cumsum(1), lambda x: np.cumsum(x, 1), (real(3, 4),)),
    OpCase("cumsum_negative_dim", lambda x: lib(x).cumsum(x, dim=-3),
           lambda x: np.cumsum(x, 0), (real(2, 3, 4),)),
    OpCase("amax_dims", lambda x: x.amax((0, 2)), lambda x: x.max((0, 2)), (distinct(2, 3, 4),)),
    OpCase("amax_all", lambda x: x.amax(), np.max, (distinct(3, 4),)),
    OpCase("amin_function_keepdim", lambda x: lib(x).amin(x, 1, keepdim=True),
           lambda x: x.min(1, keepdims=True), (distinct(3, 4),)),
    OpCase("sum_function", lambda x: lib(x).sum(x, 1), lambda x: x.sum(1), (real(3, 4),)),
    OpCase("mean_function_keepdim", lambda x: lib(x).mean(x, (0, 2), keepdim=True),
           lambda x: x.mean((0, 2), keepdims=True), (real(2, 3, 4),)),
    OpCase("std_unbiased_positional", lambda x: x.std(1, False), lambda x: x.std(1),
           (real(3, 4),)),
    OpCase("var_function_correction", lambda x: lib(x).var(x, 0, correction=0),
           lambda x: x.var(0), (real(3, 4),)),
    OpCase("std_function_keepdim", lambda x: lib(x).std(x, -1, keepdim=True),
           lambda x: x.std(-1, ddof=1, keepdims=True), (real(3, 4),)),
    OpCase("logsumexp_function", lambda x: lib(x).logsumexp(x, 1),
           lambda x: np.log(np.exp(x).sum(1)), (real(3, 4),)),
    OpCase("max_function_dim", lambda x: lib(x).max(x, 1), lambda x: (x.max(1), x.argmax(1)),
           (distinct(3, 4),), dtypes=("float32", "int64")),
    OpCase("min_function_dim_keepdim", lambda x: lib(x).min(x, 0, keepdim=True),
           lambda x: (x.min(0, keepdims=True), x.argmin(0, keepdims=True)),
           (distinct(3, 4),), dtypes=("float32", "int64")),
    OpCase("max_function_all", lambda x: lib(x).max(x), np.max, (distinct(3, 4),)),
    OpCase("max_function_of_two", lambda x, y: lib(x).max(x, y), np.maximum,
           (distinct(3, 4), distinct(3, 4))),
    OpCase("norm_all", lambda x: x.norm(), lambda x: np.sqrt((x * x).sum()), (real(3, 4),)),
    OpCase("norm_dim", lambda x: lib(x).norm(x, dim=1), lambda x: np.sqrt((x * x).sum(1)),
           (real(3, 4),)),
    OpCase("norm_p1", lambda x: x.norm(p=1, dim=0), lambda x: norm_reference(x, 1, 0),
           (real(3, 4, away_from=(0,)),)),
    OpCase("norm_p3", lambda x: x.norm(p=3, dim=1), lambda x: norm_reference(x, 3, 1),
           (real(3, 4, away_from=(0,)),)),
    # a zero vector: PyTorch's gradient there is 0 (sqrt's slope would give NaN)
    OpCase("norm_of_a_zero_row", lambda x: (x * const(x, ZERO_ROW)).norm(dim=1),
           lambda x: np.sqrt(((x * ZERO_ROW) ** 2).sum(1)), (real(3, 4),)),
    OpCase("norm_p3_with_zeros", lambda x: (x * const(x, ZEROS_IN_ROW_1)).norm(3, dim=0),
           lambda x: norm_reference(x * ZEROS_IN_ROW_1, 3, 0), (real(3, 4, away_from=(0,)),)),
    OpCase("norm_inf", lambda x: x.norm(p=math.inf), lambda x: norm_reference(x, math.inf),
           (real(3, 4),)),  # random, so no two |x| tie (a distinct grid has x and -x)
    OpCase("all_dim", lambda x: (x > -1).all(1), lambda x: (x > -1).all(1), (real(3, 4),),
           dtypes=("bool",), differentiable=False),
    OpCase("any_function_keepdim", lambda x: lib(x).any(x > 1, 0, keepdim=True),
           lambda x: (x > 1).any(0, keepdims=True), (real(3, 4),), dtypes=("bool",),
           differentiable=False),
    OpCase("argmax_function", lambda x: lib(x).argmax(x, 1), lambda x: x.argmax(1),
           (distinct(3, 4),), dtypes=("int64",), differentiable=False),

    # --- linear algebra ---
    OpCase("mm", lambda a, b: a.mm(b), np.matmul, (real(2, 3), real(3, 4))),
    OpCase("mm_function", lambda a, b: lib(a).mm(a, b.t()), lambda a, b: a @ b.T,
           (real(2, 3), real(4, 3))),
    OpCase("bmm", lambda a, b: lib(a).bmm(a, b), np.matmul, (real(2, 3, 4), real(2, 4, 5))),
    OpCase("mv", lambda a, b: a.mv(b), np.matmul, (real(3, 4), real(4))),
    OpCase("dot", lambda a, b: lib(a).dot(a, b), np.dot, (real(4), real(4))),
    OpCase("outer", lambda a, b: a.outer(b), np.outer, (real(3), real(4))),
    OpCase("outer_function", lambda a, b: lib(a).outer(a, b), np.outer, (real(3), real(2))),
    OpCase("matmul_function", lambda a, b: lib(a).matmul(a, b), np.matmul,
           (real(2, 3, 4), real(4, 2))),
    *[OpCase(f"einsum_{name}", lambda *xs, eq=eq: lib(xs[0]).einsum(eq, *xs),
             lambda *xs, eq=eq: np.einsum(eq, *xs), shapes)
      for name, eq, shapes in [
          ("matmul", "ij,jk->ik", (real(2, 3), real(3, 4))),
          ("batched", "bij,bjk->bik", (real(2, 3, 4), real(2, 4, 5))),
          ("attention_scores", "bhqd,bhkd->bhqk", (real(2, 2, 3, 4), real(2, 2, 5, 4))),
          ("outer", "i,j->ij", (real(3), real(4))),
          ("transpose", "ij->ji", (real(3, 4),)),
          ("implicit_output", "ij,j", (real(3, 4), real(4))),
          ("ellipsis", "...ij,...jk->...ik", (real(2, 3, 4), real(4, 2))),
          ("full_contraction", "ij,ij->", (real(3, 4), real(3, 4))),
          ("rowwise_dot", "bi,bi->b", (real(3, 4), real(3, 4))),
          ("letters_summed_in_one_operand", "ij,k->i", (real(3, 4), real(5))),
      ]],
    # NumPy's einsum broadcasts only under ..., PyTorch's (and minigrad's) any size-1 letter
    OpCase("einsum_size_1_broadcast", lambda a, b: lib(a).einsum("bij,bjk->bik", a, b),
           np.matmul, (real(1, 3, 4), real(2, 4, 5))),
    OpCase("einsum_operand_list", lambda a, b: lib(a).einsum("ij,jk->ik", [a, b]), np.matmul,
           (real(2, 3), real(3, 4))),

    # --- shape ---
    OpCase("split_size", lambda x: x.split(2, dim=1), lambda x: split_reference(x, [2, 2, 1], 1),
           (real(3, 5),), dtypes=("float32",) * 3),
    OpCase("split_sections_function", lambda x: lib(x).split(x, [1, 3], dim=-1),
           lambda x: split_reference(x, [1, 3], -1), (real(2, 3, 4),), dtypes=("float32",) * 2),
    OpCase("split_one_piece_used", lambda x: x.split(2)[1] * 2,
           lambda x: x[2:4] * 2, (real(5, 3),)),
    OpCase("chunk", lambda x: x.chunk(3), lambda x: split_reference(x, [2, 2, 2], 0),
           (real(6, 2),), dtypes=("float32",) * 3),
    OpCase("chunk_uneven_function", lambda x: lib(x).chunk(x, 3, dim=1),
           lambda x: split_reference(x, [2, 2], 1), (real(3, 4),), dtypes=("float32",) * 2),
    OpCase("repeat_interleave_dim", lambda x: x.repeat_interleave(2, dim=1),
           lambda x: np.repeat(x, 2, axis=1), (real(3, 4),)),
    OpCase("repeat_interleave_flat", lambda x: lib(x).repeat_interleave(x, 3),
           lambda x: np.repeat(x, 3), (real(2, 3),)),
    OpCase("repeat_interleave_counts", lambda x: x.repeat_interleave(const(x, REPEATS), dim=0),
           lambda x: np.repeat(x, REPEATS, axis=0), (real(3, 4),)),
    OpCase("broadcast_to_function", lambda x: lib(x).broadcast_to(x, (2, 3, 4)),
           lambda x: np.broadcast_to(x, (2, 3, 4)), (real(3, 1),)),
    OpCase("tril", lambda x: x.tril(), np.tril, (real(3, 4),)),
    OpCase("tril_below_batched", lambda x: lib(x).tril(x, -1), lambda x: np.tril(x, -1),
           (real(2, 3, 4),)),
    OpCase("triu", lambda x: x.triu(), np.triu, (real(4, 3),)),
    OpCase("triu_above_function", lambda x: lib(x).triu(x, diagonal=1),
           lambda x: np.triu(x, 1), (real(2, 3, 4),)),
    OpCase("diag_of_vector", lambda x: x.diag(), np.diag, (real(3),)),
    OpCase("diag_of_vector_offset", lambda x: lib(x).diag(x, 1),
           lambda x: diag_matrix_reference(x, 1), (real(3),)),
    OpCase("diag_of_matrix", lambda x: x.diag(), np.diag, (real(3, 4),)),
    OpCase("diag_of_matrix_below", lambda x: x.diag(-1), lambda x: np.diag(x, -1),
           (real(3, 4),)),
    OpCase("t", lambda x: x.t(), np.transpose, (real(3, 4),)),
    OpCase("t_function_vector", lambda x: lib(x).t(x), lambda x: x, (real(3),)),
    OpCase("view_as", lambda x, y: x.view_as(y) * y, lambda x, y: x.reshape(4, 3) * y,
           (real(3, 4), real(4, 3))),
    OpCase("contiguous_after_transpose", lambda x: x.T.contiguous().view(-1),
           lambda x: x.T.reshape(-1), (real(3, 4),)),
    OpCase("reshape_function", lambda x: lib(x).reshape(x, (4, 3)), lambda x: x.reshape(4, 3),
           (real(3, 4),)),
    OpCase("flatten_function", lambda x: lib(x).flatten(x, 1), lambda x: x.reshape(2, 12),
           (real(2, 3, 4),)),
    OpCase("transpose_function", lambda x: lib(x).transpose(x, 0, 2),
           lambda x: x.swapaxes(0, 2), (real(2, 3, 4),)),
    OpCase("permute_function", lambda x: lib(x).permute(x, (2, 0, 1)),
           lambda x: x.transpose(2, 0, 1), (real(2, 3, 4),)),
    OpCase("squeeze_unsqueeze_functions", lambda x: lib(x).unsqueeze(lib(x).squeeze(x, 1), 0),
           lambda x: x.squeeze(1)[None], (real(3, 1, 4),)),
    OpCase("unsqueeze_in_place", lambda x: (x * 2).unsqueeze_(1), lambda x: (x * 2)[:, None],
           (real(3, 4),)),
    OpCase("squeeze_in_place", lambda x: (x * 2).squeeze_(), lambda x: (x * 2).squeeze(),
           (real(3, 1, 4),)),
    OpCase("t_in_place", lambda x: (x * 2).t_() * 1, lambda x: (x * 2).T, (real(3, 4),)),
    OpCase("transpose_in_place", lambda x: (x * 2).transpose_(0, 2),
           lambda x: (x * 2).swapaxes(0, 2), (real(2, 3, 4),)),

    # --- selection ---
    OpCase("masked_fill", lambda x: x.masked_fill(const(x, MASK), 0.5),
           lambda x: np.where(MASK, 0.5, x), (real(3, 4),)),
    OpCase("masked_fill_minus_inf_softmax",
           lambda x: x.masked_fill(const(x, MASK), float("-inf")).softmax(-1),
           lambda x: softmax_reference(np.where(MASK, -np.inf, x), -1), (real(3, 4),)),
    OpCase("masked_fill_broadcast_mask_function",
           lambda x: lib(x).masked_fill(x, const(x, MASK[0]), -1.0),
           lambda x: np.where(MASK[0], -1.0, x), (real(2, 3, 4),)),
    OpCase("masked_fill_tensor_value", lambda x, v: x.masked_fill(const(x, MASK), v),
           lambda x, v: np.where(MASK, v, x), (real(3, 4), real())),
    OpCase("masked_fill_in_place", lambda x: (x * 2).masked_fill_(const(x, MASK), 0.0),
           lambda x: np.where(MASK, 0.0, x * 2), (real(3, 4),)),
    OpCase("index_select", lambda x: x.index_select(0, const(x, ROWS)), lambda x: x[ROWS],
           (real(3, 4),)),
    OpCase("index_select_function", lambda x: lib(x).index_select(x, -1, const(x, [3, 0])),
           lambda x: x[..., [3, 0]], (real(2, 3, 4),)),
    OpCase("scatter", lambda x, s: x.scatter(1, const(x, SCATTER_COLUMNS), s),
           lambda x, s: scatter_reference(x, 1, SCATTER_COLUMNS, s), (real(3, 4), real(3, 2))),
    OpCase("scatter_value", lambda x: x.scatter(1, const(x, SCATTER_COLUMNS), value=1.5),
           lambda x: scatter_reference(x, 1, SCATTER_COLUMNS, 1.5), (real(3, 4),)),
    OpCase("scatter_add_repeats", lambda x, s: x.scatter_add(0, const(x, SCATTER_REPEATS), s),
           lambda x, s: scatter_add_reference(x, 0, SCATTER_REPEATS, s), (real(3, 4), real(2, 4))),
    OpCase("scatter_add_function",
           lambda x, s: lib(x).scatter_add(x, 1, const(x, SCATTER_COLUMNS), s),
           lambda x, s: scatter_add_reference(x, 1, SCATTER_COLUMNS, s), (real(3, 4), real(3, 2))),
    OpCase("scatter_in_place", lambda x, s: (x * 1).scatter_(1, const(x, SCATTER_COLUMNS), s),
           lambda x, s: scatter_reference(x, 1, SCATTER_COLUMNS, s), (real(3, 4), real(3, 2))),
    OpCase("scatter_add_in_place",
           lambda x, s: (x * 1).scatter_add_(0, const(x, SCATTER_REPEATS), s),
           lambda x, s: scatter_add_reference(x, 0, SCATTER_REPEATS, s), (real(3, 4), real(2, 4))),
    OpCase("sort", lambda x: x.sort(), lambda x: sort_reference(x, -1), (distinct(3, 4),),
           dtypes=("float32", "int64")),
    OpCase("sort_descending_function", lambda x: lib(x).sort(x, 0, descending=True),
           lambda x: sort_reference(x, 0, True), (distinct(3, 4),), dtypes=("float32", "int64")),
    OpCase("argsort", lambda x: x.argsort(dim=0), lambda x: np.argsort(x, 0),
           (distinct(3, 4),), dtypes=("int64",), differentiable=False),
    OpCase("argsort_descending_function", lambda x: lib(x).argsort(x, descending=True),
           lambda x: np.argsort(-x, -1), (distinct(3, 4),), dtypes=("int64",),
           differentiable=False),
    OpCase("topk", lambda x: x.topk(2), lambda x: topk_reference(x, 2), (distinct(3, 4),),
           dtypes=("float32", "int64")),
    OpCase("topk_smallest_dim_0_function", lambda x: lib(x).topk(x, 2, dim=0, largest=False),
           lambda x: topk_reference(x, 2, 0, False), (distinct(3, 4),),
           dtypes=("float32", "int64")),
    OpCase("where_method", lambda x, y: x.where(const(x, MASK), y),
           lambda x, y: np.where(MASK, x, y), (real(3, 4), real(4))),
    OpCase("softmax_method", lambda x: x.softmax(-1), lambda x: softmax_reference(x, -1),
           (real(3, 4),)),
    OpCase("softmax_function", lambda x: lib(x).softmax(x, 0), lambda x: softmax_reference(x, 0),
           (real(3, 4),)),
    OpCase("log_softmax_method", lambda x: x.log_softmax(1),
           lambda x: np.log(softmax_reference(x, 1)), (real(2, 3, 4),)),
    OpCase("log_softmax_function", lambda x: lib(x).log_softmax(x, dim=-1),
           lambda x: np.log(softmax_reference(x, -1)), (real(3, 4),)),

    # --- comparisons (bool results without history) ---
    OpCase("eq_method", lambda x, y: x.eq(y), np.equal, (distinct(3, 4), distinct(4)),
           dtypes=("bool",), differentiable=False),
    OpCase("lt_method_number", lambda x: x.lt(0.5), lambda x: x < 0.5, (real(3, 4),),
           dtypes=("bool",), differentiable=False),
    OpCase("ge_function", lambda x, y: lib(x).ge(x, y), np.greater_equal,
           (distinct(3, 4), distinct(3, 1)), dtypes=("bool",), differentiable=False),
    OpCase("ne_function", lambda x: lib(x).ne(x, x * 1), lambda x: x != x, (real(3, 4),),
           dtypes=("bool",), differentiable=False),
    OpCase("isclose_function", lambda x: lib(x).isclose(x, x + 1e-9), lambda x: x == x,
           (real(3, 4),), dtypes=("bool",), differentiable=False),

    # --- recorded in-place updates on a non-leaf (what hand-written optimizers use) ---
    OpCase("lerp_in_place", lambda x, y: (x * 1).lerp_(y, 0.25), lambda x, y: x + 0.25 * (y - x),
           (real(3, 4), real(3, 4))),
    OpCase("addcmul_in_place", lambda x, y, z: (x * 1).addcmul_(y, z, value=2),
           lambda x, y, z: x + 2 * y * z, (real(3, 4), real(3, 4), real(3, 4))),
    OpCase("addcdiv_in_place", lambda x, y, z: (x * 1).addcdiv_(y, z),
           lambda x, y, z: x + y / z, (real(3, 4), real(3, 4), positive(3, 4))),
    OpCase("sqrt_in_place", lambda x: (x * 1).sqrt_(), np.sqrt, (positive(3, 4),)),
    OpCase("exp_in_place", lambda x: (x * 1).exp_(), np.exp, (real(3, 4),)),
    OpCase("add_in_place_alpha", lambda x, y: (x * 1).add_(y, alpha=-0.5),
           lambda x, y: x - 0.5 * y, (real(3, 4), real(4))),
    OpCase("copy_in_place", lambda x, y: (x * 1).copy_(y) * x, lambda x, y: y * x,
           (real(3, 4), real(4))),
]
