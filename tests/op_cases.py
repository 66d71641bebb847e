"""The table of op cases that drives tests/test_ops.py (in the spirit of minitorch's MathTest).

One row per use of an op: the minigrad function, the same function for PyTorch, a NumPy
reference for the values, and the inputs (shape and domain). From each row the tests
check the values against NumPy, the gradients against PyTorch, the gradients against
finite differences (``mg.gradcheck`` in float64), and that float32 stays float32.

The PyTorch function defaults to the minigrad one: minigrad spells things as PyTorch
does, so the same code runs on both. A row gives ``torch_fn=`` only where PyTorch's
spelling differs (module-level functions, ``F.pad``, ``amax``, index arrays as tensors).

Constants that are not differentiated (index arrays, masks, conditions) live in the
functions themselves; the inputs listed in a row are the float tensors, and every one of
them requires grad in the gradient tests.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad.ops.indexing import IndexBackward

try:
    import torch
except ImportError:  # the tests that need PyTorch skip (or fail, in strict mode)
    torch = None

# --- inputs ---------------------------------------------------------------------------------

KINK_GAP = 0.2  # how far values keep from a kink, so finite differences see one slope


@dataclass(frozen=True)
class Arg:
    """One float input: its shape and where its values come from.

    ``domain`` is ``"real"`` (uniform in [-2, 2]), ``"positive"`` (uniform in [0.5, 2],
    for log, sqrt and fractional powers) or ``"distinct"`` (all the distinct inputs of a
    case share one shuffled grid, so max, min and maximum never tie, not even after a
    finite-difference nudge). ``away_from`` lists kinks (of abs, relu, clamp) that values
    keep ``KINK_GAP`` away from.
    """

    shape: tuple[int, ...]
    domain: str = "real"
    away_from: tuple[float, ...] = ()


def real(*shape: int, away_from: tuple[float, ...] = ()) -> Arg:
    return Arg(shape, "real", away_from)


def positive(*shape: int) -> Arg:
    return Arg(shape, "positive")


def distinct(*shape: int) -> Arg:
    return Arg(shape, "distinct")


# --- the case -------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpCase:
    """One row of the table.

    - ``fn``: minigrad tensors -> a tensor (or a tuple such as ``(values, indices)``).
    - ``reference``: the same on float64 NumPy arrays.
    - ``torch_fn``: the same on torch tensors; ``None`` means ``fn`` runs as is.
    - ``dtypes``: the dtype of each output for float32 inputs.
    - ``differentiable``: False for ops without gradient (comparisons, argmax).
    - ``gradcheck_eps``: the finite-difference step (larger where an output is float32).
    """

    id: str
    fn: Callable
    reference: Callable
    inputs: tuple[Arg, ...]
    torch_fn: Callable | None = None
    rtol: float = 1e-5
    atol: float = 1e-6
    dtypes: tuple[str, ...] = ("float32",)
    differentiable: bool = True
    gradcheck_eps: float = 1e-6

    def __repr__(self) -> str:
        return f"OpCase({self.id})"

    def run_torch(self, *tensors):
        return (self.torch_fn or self.fn)(*tensors)

    def make_inputs(self, dtype=np.float32) -> list[np.ndarray]:
        """The case's input arrays: the same values every run (seeded by the id)."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        sizes = [math.prod(arg.shape) for arg in self.inputs]
        grid = _shuffled_grid(sum(n for n, arg in zip(sizes, self.inputs)
                                  if arg.domain == "distinct"), rng)
        arrays = []
        for n, arg in zip(sizes, self.inputs):
            if arg.domain == "distinct":
                values, grid = grid[:n].reshape(arg.shape), grid[n:]
            else:
                values = _draw(arg, rng)
            arrays.append(values.astype(dtype))
        return arrays

    def upstream_gradients(self, shapes) -> list[np.ndarray]:
        """A fixed random gradient for each float output, by shape (not ones: with ones
        a wrong transpose or a wrong sum in a backward would go unnoticed)."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()) + 1)
        return [rng.standard_normal(shape) for shape in shapes]


def _shuffled_grid(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` values evenly spread over [-2, 2] (4 / count apart), in random order."""
    return -2 + 4 * (rng.permutation(count) + 0.5) / max(count, 1)


def _draw(arg: Arg, rng: np.random.Generator) -> np.ndarray:
    low, high = (0.5, 2.0) if arg.domain == "positive" else (-2.0, 2.0)
    values = np.asarray(rng.uniform(low, high, arg.shape))
    for _ in range(100):  # redraw the values too close to a kink
        near = np.zeros(arg.shape, dtype=bool)
        for kink in arg.away_from:
            near |= np.abs(values - kink) < KINK_GAP
        if not near.any():
            return values
        values[near] = rng.uniform(low, high, int(near.sum()))
    raise AssertionError(f"could not draw values away from {arg.away_from}")


# --- NumPy references that need more than one line ---------------------------------------


def sigmoid_reference(x):
    return 1 / (1 + np.exp(-x))


def logsumexp_reference(x, axis=None, keepdims=False):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


def gather_reference(x, dim, index):
    """PyTorch's definition: out[i][j] = x[index[i][j]][j] for dim 0, and so on."""
    where = list(np.indices(index.shape))
    where[dim] = index
    return x[tuple(where)]


def unfold_reference(x, dim, size, step):
    """Windows of ``size`` along ``dim``, ``step`` apart; the window becomes the last dim."""
    starts = range(0, x.shape[dim] - size + 1, step)
    windows = [np.take(x, np.arange(s, s + size), axis=dim) for s in starts]
    return np.moveaxis(np.stack(windows, axis=dim), dim + 1, -1)


def as_torch(array):
    """An index, mask or condition as a torch tensor (``torch_fn`` side)."""
    return torch.as_tensor(array)


# --- constants: index arrays, masks, conditions ---------------------------------------------

ROWS = np.array([0, 2, 2, 1, 2])  # row 2 three times: its gradients must add up


def _scatter_rows(g):
    out = np.zeros((3, 4), dtype=g.dtype)
    np.add.at(out, ROWS, g)
    return out
COLS = np.array([3, 0, 0, 1, 3])  # with ROWS, the element (2, 0) twice and (2, 3) once
MASK = np.array([[True, False, True, True],
                 [False, False, True, False],
                 [True, True, False, False]])
COLUMN_MASK = np.array([True, False, False, True])
CONDITION_COLUMN = np.array([[True], [False], [True]])
GATHER_ROWS = np.array([[0, 2, 1, 0], [2, 2, 0, 1]])  # dim 0 of a (3, 4) input, repeats
GATHER_COLUMNS = np.array([[3, 0, 3], [1, 1, 2], [0, 2, 2]])  # dim 1 of a (3, 4) input
GATHER_CORNER = np.array([[1, 1], [3, 0]])  # dim 1, and only the first 2 of 3 rows


# --- in-place helpers (they work alike on minigrad and torch tensors and NumPy arrays) -------


def assign(y, index, value):
    """``y[index] = value``, then ``y`` (an assignment cannot stand in a lambda)."""
    y[index] = value
    return y


def add_in_place(y, value):
    y += value
    return y


def multiply_in_place(y, value):
    y *= value
    return y


def row_view_tripled(y):
    """``y[0] *= 3``, an in-place op on a view, then ``y`` (its base's history: CopySlices)."""
    multiply_in_place(y[0], 3.0)
    return y


def column_view_shifted(y, value):
    """``view = y[:, 1:]; view += value``, then the view (it reads its new base: AsStrided)."""
    view = y[:, 1:]
    return add_in_place(view, value)


def assigned_through_flat_view(y, value):
    """``y.reshape(-1)[2] = value`` (a view of y), then ``y``."""
    assign(y.reshape(-1), 2, value)
    return y


# --- the table -----------------------------------------------------------------------------

CASES: list[OpCase] = [
    # --- unary ---
    OpCase("neg", lambda x: -x, lambda x: -x, (real(3, 4),)),
    OpCase("neg_method", lambda x: x.neg(), lambda x: -x, (real(3, 4),)),
    OpCase("abs", lambda x: x.abs(), np.abs, (real(3, 4, away_from=(0,)),)),
    OpCase("abs_builtin", lambda x: abs(x), np.abs, (real(2, 3, away_from=(0,)),)),
    OpCase("exp", lambda x: x.exp(), np.exp, (real(3, 4),)),
    OpCase("log", lambda x: x.log(), np.log, (positive(3, 4),)),
    OpCase("sqrt", lambda x: x.sqrt(), np.sqrt, (positive(3, 4),)),
    OpCase("sin", lambda x: x.sin(), np.sin, (real(3, 4),)),
    OpCase("cos", lambda x: x.cos(), np.cos, (real(3, 4),)),
    OpCase("tanh", lambda x: x.tanh(), np.tanh, (real(3, 4),)),
    OpCase("sigmoid", lambda x: x.sigmoid(), sigmoid_reference, (real(3, 4),)),
    OpCase("relu", lambda x: x.relu(), lambda x: np.maximum(x, 0),
           (real(3, 4, away_from=(0,)),)),
    OpCase("clamp_min", lambda x: x.clamp(min=-0.5), lambda x: np.maximum(x, -0.5),
           (real(3, 4, away_from=(-0.5,)),)),
    OpCase("clamp_max", lambda x: x.clamp(max=0.5), lambda x: np.minimum(x, 0.5),
           (real(3, 4, away_from=(0.5,)),)),
    OpCase("clamp_both", lambda x: x.clamp(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5),
           (real(3, 4, away_from=(-0.5, 0.5)),)),
    OpCase("clip_alias", lambda x: x.clip(-1.0, 0.5), lambda x: np.clip(x, -1.0, 0.5),
           (real(3, 4, away_from=(-1.0, 0.5)),)),

    # --- binary, with broadcasting and Python numbers on either side ---
    OpCase("add_broadcast_both", lambda x, y: x + y, lambda x, y: x + y,
           (real(3, 1), real(1, 4))),
    OpCase("add_trailing_dim", lambda x, y: x + y, lambda x, y: x + y, (real(2, 3, 4), real(4))),
    OpCase("add_0d_tensor", lambda x, y: x + y, lambda x, y: x + y, (real(3, 4), real())),
    OpCase("add_number_right", lambda x: x + 2.5, lambda x: x + 2.5, (real(3, 4),)),
    OpCase("add_number_left", lambda x: 2.5 + x, lambda x: 2.5 + x, (real(3, 4),)),
    OpCase("add_method", lambda x, y: x.add(y), lambda x, y: x + y, (real(3, 4), real(4))),
    OpCase("sub_broadcast", lambda x, y: x - y, lambda x, y: x - y, (real(3, 4), real(3, 1))),
    OpCase("sub_smaller_first", lambda x, y: x - y, lambda x, y: x - y,
           (real(4), real(2, 3, 4))),
    OpCase("sub_number_right", lambda x: x - 1.5, lambda x: x - 1.5, (real(3, 4),)),
    OpCase("sub_number_left", lambda x: 1.5 - x, lambda x: 1.5 - x, (real(3, 4),)),
    OpCase("sub_method", lambda x, y: x.sub(y), lambda x, y: x - y, (real(3, 4), real(3, 4))),
    OpCase("mul_broadcast", lambda x, y: x * y, lambda x, y: x * y, (real(2, 3, 1), real(3, 4))),
    OpCase("mul_same_tensor", lambda x: x * x, lambda x: x * x, (real(3, 4),)),
    OpCase("mul_number_right", lambda x: x * 3, lambda x: x * 3, (real(3, 4),)),
    OpCase("mul_number_left", lambda x: 3 * x, lambda x: 3 * x, (real(3, 4),)),
    OpCase("mul_method", lambda x, y: x.mul(y), lambda x, y: x * y, (real(3, 4), real(1, 4))),
    OpCase("div_broadcast", lambda x, y: x / y, lambda x, y: x / y,
           (real(3, 4), real(4, away_from=(0,)))),
    OpCase("div_broadcast_numerator", lambda x, y: x / y, lambda x, y: x / y,
           (real(3, 1), real(3, 4, away_from=(0,)))),
    OpCase("div_number_right", lambda x: x / 2, lambda x: x / 2, (real(3, 4),)),
    OpCase("div_number_left", lambda x: 2 / x, lambda x: 2 / x,
           (real(3, 4, away_from=(0,)),)),
    OpCase("div_method", lambda x, y: x.div(y), lambda x, y: x / y,
           (real(3, 4), positive(3, 4))),
    OpCase("pow_square", lambda x: x ** 2, lambda x: x ** 2, (real(3, 4),)),
    OpCase("pow_cube", lambda x: x ** 3, lambda x: x ** 3, (real(3, 4),)),
    OpCase("pow_half", lambda x: x ** 0.5, np.sqrt, (positive(3, 4),)),
    OpCase("pow_negative_fraction", lambda x: x ** -1.5, lambda x: x ** -1.5, (positive(3, 4),)),
    OpCase("pow_number_base", lambda x: 2 ** x, lambda x: 2 ** x, (real(3, 4),)),
    OpCase("pow_tensor_exponent", lambda x, y: x ** y, lambda x, y: x ** y,
           (positive(3, 4), real(3, 4))),
    OpCase("pow_tensor_exponent_broadcast", lambda x, y: x.pow(y), lambda x, y: x ** y,
           (positive(3, 1), real(4))),
    OpCase("maximum", lambda x, y: x.maximum(y), np.maximum, (distinct(3, 4), distinct(3, 4))),
    OpCase("maximum_broadcast", lambda x, y: x.maximum(y), np.maximum,
           (distinct(3, 1), distinct(1, 4))),
    OpCase("max_of_two_tensors", lambda x, y: x.max(y), np.maximum,
           (distinct(3, 4), distinct(4))),
    OpCase("maximum_0d", lambda x, y: x.maximum(y), np.maximum, (distinct(), distinct())),
    OpCase("minimum", lambda x, y: x.minimum(y), np.minimum, (distinct(3, 4), distinct(3, 4))),
    OpCase("minimum_broadcast", lambda x, y: x.minimum(y), np.minimum,
           (distinct(2, 3, 4), distinct(3, 1))),

    # --- matmul ---
    OpCase("matmul_1d_1d", lambda a, b: a @ b, np.matmul, (real(4), real(4))),
    OpCase("matmul_1d_2d", lambda a, b: a @ b, np.matmul, (real(3), real(3, 4))),
    OpCase("matmul_2d_1d", lambda a, b: a @ b, np.matmul, (real(3, 4), real(4))),
    OpCase("matmul_2d_2d", lambda a, b: a @ b, np.matmul, (real(2, 3), real(3, 4))),
    OpCase("matmul_method", lambda a, b: a.matmul(b), np.matmul, (real(2, 3), real(3, 2))),
    OpCase("matmul_batched", lambda a, b: a @ b, np.matmul, (real(2, 3, 4), real(2, 4, 2))),
    OpCase("matmul_batched_2d", lambda a, b: a @ b, np.matmul, (real(2, 3, 4), real(4, 2))),
    OpCase("matmul_2d_batched", lambda a, b: a @ b, np.matmul, (real(3, 4), real(2, 4, 2))),
    OpCase("matmul_batch_dims_broadcast", lambda a, b: a @ b, np.matmul,
           (real(2, 1, 2, 3), real(3, 3, 2))),
    OpCase("matmul_1d_batched", lambda a, b: a @ b, np.matmul, (real(3), real(2, 3, 2))),
    OpCase("matmul_batched_1d", lambda a, b: a @ b, np.matmul, (real(2, 2, 3), real(3))),

    # --- reductions ---
    OpCase("sum_all", lambda x: x.sum(), np.sum, (real(3, 4),)),
    OpCase("sum_dim", lambda x: x.sum(1), lambda x: x.sum(1), (real(3, 4),)),
    OpCase("sum_negative_dim", lambda x: x.sum(-1), lambda x: x.sum(-1), (real(2, 3, 4),)),
    OpCase("sum_dim_tuple", lambda x: x.sum((0, 2)), lambda x: x.sum((0, 2)), (real(2, 3, 4),)),
    OpCase("sum_keepdim", lambda x: x.sum(0, keepdim=True), lambda x: x.sum(0, keepdims=True),
           (real(3, 4),)),
    OpCase("sum_dim_tuple_keepdim", lambda x: x.sum(dim=(-1, 0), keepdim=True),
           lambda x: x.sum((-1, 0), keepdims=True), (real(2, 3, 4),)),
    OpCase("sum_0d", lambda x: x.sum(), np.sum, (real(),)),
    OpCase("mean_all", lambda x: x.mean(), np.mean, (real(3, 4),)),
    OpCase("mean_dim", lambda x: x.mean(0), lambda x: x.mean(0), (real(3, 4),)),
    OpCase("mean_negative_dim", lambda x: x.mean(-2), lambda x: x.mean(-2), (real(2, 3, 4),)),
    OpCase("mean_dim_tuple", lambda x: x.mean((1, 2)), lambda x: x.mean((1, 2)),
           (real(2, 3, 4),)),
    OpCase("mean_keepdim", lambda x: x.mean(1, keepdim=True), lambda x: x.mean(1, keepdims=True),
           (real(3, 4),)),
    OpCase("max_all", lambda x: x.max(), np.max, (distinct(3, 4),)),
    OpCase("max_dim", lambda x: x.max(1), lambda x: (x.max(1), x.argmax(1)), (distinct(3, 4),),
           dtypes=("float32", "int64")),
    OpCase("max_dim_values", lambda x: x.max(dim=0).values, lambda x: x.max(0),
           (distinct(3, 4),)),
    OpCase("max_negative_dim_keepdim", lambda x: x.max(-1, keepdim=True).values,
           lambda x: x.max(-1, keepdims=True), (distinct(2, 3, 4),)),
    OpCase("max_dim_tuple", lambda x: x.max((0, 2)), lambda x: x.max((0, 2)), (distinct(2, 3, 4),),
           torch_fn=lambda x: x.amax((0, 2))),
    OpCase("max_dim_0d", lambda x: x.max(0), lambda x: (x, np.argmax(x)), (distinct(),),
           dtypes=("float32", "int64")),
    OpCase("min_all", lambda x: x.min(), np.min, (distinct(3, 4),)),
    OpCase("min_dim", lambda x: x.min(0), lambda x: (x.min(0), x.argmin(0)), (distinct(3, 4),),
           dtypes=("float32", "int64")),
    OpCase("min_dim_values", lambda x: x.min(dim=1).values, lambda x: x.min(1),
           (distinct(3, 4),)),
    OpCase("min_negative_dim_keepdim", lambda x: x.min(-2, keepdim=True)[0],
           lambda x: x.min(-2, keepdims=True), (distinct(2, 3, 4),)),
    OpCase("var_all", lambda x: x.var(), lambda x: x.var(ddof=1), (real(3, 4),)),
    OpCase("var_dim_correction_0", lambda x: x.var(1, correction=0), lambda x: x.var(1),
           (real(3, 4),)),
    OpCase("var_dim_correction_1", lambda x: x.var(0, correction=1), lambda x: x.var(0, ddof=1),
           (real(3, 4),)),
    OpCase("var_dim_tuple_keepdim", lambda x: x.var((0, 2), keepdim=True),
           lambda x: x.var((0, 2), ddof=1, keepdims=True), (real(2, 3, 4),)),
    OpCase("var_unbiased_false", lambda x: x.var(-1, unbiased=False), lambda x: x.var(-1),
           (real(2, 3, 4),)),
    OpCase("std_all", lambda x: x.std(), lambda x: x.std(ddof=1), (real(3, 4),)),
    OpCase("std_dim_correction_0", lambda x: x.std(0, correction=0), lambda x: x.std(0),
           (real(3, 4),)),
    OpCase("std_dim_keepdim", lambda x: x.std(-1, keepdim=True),
           lambda x: x.std(-1, ddof=1, keepdims=True), (real(3, 4),)),
    OpCase("logsumexp_all", lambda x: x.logsumexp(), logsumexp_reference, (real(3, 4),),
           torch_fn=lambda x: x.logsumexp(dim=(0, 1))),
    OpCase("logsumexp_dim", lambda x: x.logsumexp(1), lambda x: logsumexp_reference(x, 1),
           (real(3, 4),)),
    OpCase("logsumexp_negative_dim_keepdim", lambda x: x.logsumexp(-1, keepdim=True),
           lambda x: logsumexp_reference(x, -1, keepdims=True), (real(2, 3, 4),)),
    OpCase("logsumexp_dim_tuple", lambda x: x.logsumexp((0, 2)),
           lambda x: logsumexp_reference(x, (0, 2)), (real(2, 3, 4),)),
    OpCase("argmax_all", lambda x: x.argmax(), np.argmax, (distinct(3, 4),),
           dtypes=("int64",), differentiable=False),
    OpCase("argmax_dim", lambda x: x.argmax(1), lambda x: x.argmax(1), (distinct(3, 4),),
           dtypes=("int64",), differentiable=False),
    OpCase("argmin_dim_keepdim", lambda x: x.argmin(0, keepdim=True),
           lambda x: x.argmin(0, keepdims=True), (distinct(3, 4),),
           dtypes=("int64",), differentiable=False),

    # --- comparisons (bool results without history) ---
    OpCase("less_than", lambda x, y: x < y, np.less, (distinct(3, 4), distinct(4)),
           dtypes=("bool",), differentiable=False),
    OpCase("greater_equal_number", lambda x: x >= 0.5, lambda x: x >= 0.5, (distinct(3, 4),),
           dtypes=("bool",), differentiable=False),
    OpCase("equal", lambda x, y: x == y, np.equal, (distinct(3, 1), distinct(4)),
           dtypes=("bool",), differentiable=False),

    # --- shape ---
    OpCase("reshape_infer", lambda x: x.reshape(2, -1), lambda x: x.reshape(2, -1),
           (real(3, 4),)),
    OpCase("reshape_tuple", lambda x: x.reshape((4, 3)), lambda x: x.reshape(4, 3),
           (real(3, 4),)),
    OpCase("reshape_flat", lambda x: x.reshape(-1), lambda x: x.reshape(-1), (real(2, 3, 4),)),
    OpCase("reshape_transposed", lambda x: x.T.reshape(-1), lambda x: x.T.reshape(-1),
           (real(3, 4),)),
    OpCase("view", lambda x: x.view(4, 3), lambda x: x.reshape(4, 3), (real(3, 4),)),
    OpCase("view_infer", lambda x: x.view(-1, 2, 2), lambda x: x.reshape(-1, 2, 2),
           (real(2, 3, 4),)),
    OpCase("flatten", lambda x: x.flatten(), lambda x: x.reshape(-1), (real(2, 3, 4),)),
    OpCase("flatten_start_dim", lambda x: x.flatten(1), lambda x: x.reshape(2, 12),
           (real(2, 3, 4),)),
    OpCase("flatten_start_end", lambda x: x.flatten(0, 1), lambda x: x.reshape(6, 4),
           (real(2, 3, 4),)),
    OpCase("flatten_negative_dims", lambda x: x.flatten(-3, -2), lambda x: x.reshape(2, 6, 2),
           (real(2, 3, 2, 2),)),
    OpCase("squeeze_all", lambda x: x.squeeze(), np.squeeze, (real(3, 1, 4, 1),)),
    OpCase("squeeze_dim", lambda x: x.squeeze(1), lambda x: x.squeeze(1), (real(3, 1, 4, 1),)),
    OpCase("squeeze_negative_dim", lambda x: x.squeeze(-1), lambda x: x.squeeze(-1),
           (real(3, 1, 4, 1),)),
    OpCase("squeeze_dim_tuple", lambda x: x.squeeze((0, 3)), lambda x: x.squeeze((0, 3)),
           (real(1, 3, 4, 1),)),
    OpCase("squeeze_dim_not_1", lambda x: x.squeeze(0), lambda x: x, (real(3, 1, 4),)),
    OpCase("unsqueeze_front", lambda x: x.unsqueeze(0), lambda x: x[None], (real(3, 4),)),
    OpCase("unsqueeze_middle", lambda x: x.unsqueeze(1), lambda x: x[:, None], (real(3, 4),)),
    OpCase("unsqueeze_negative", lambda x: x.unsqueeze(-1), lambda x: x[..., None],
           (real(3, 4),)),
    OpCase("transpose", lambda x: x.transpose(0, 2), lambda x: x.swapaxes(0, 2),
           (real(2, 3, 4),)),
    OpCase("transpose_negative", lambda x: x.transpose(-1, -2), lambda x: x.swapaxes(-1, -2),
           (real(2, 3, 4),)),
    OpCase("permute", lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1),
           (real(2, 3, 4),)),
    OpCase("permute_tuple_negative", lambda x: x.permute((-1, 0, 1)),
           lambda x: x.transpose(2, 0, 1), (real(2, 3, 4),)),
    OpCase("T", lambda x: x.T, lambda x: x.T, (real(3, 4),)),
    OpCase("mT", lambda x: x.mT, lambda x: x.swapaxes(-1, -2), (real(2, 3, 4),)),
    OpCase("expand", lambda x: x.expand(3, 4), lambda x: np.broadcast_to(x, (3, 4)),
           (real(3, 1),)),
    OpCase("expand_new_dims", lambda x: x.expand(2, 3, 4),
           lambda x: np.broadcast_to(x, (2, 3, 4)), (real(3, 1),)),
    OpCase("expand_keep_size", lambda x: x.expand(-1, 4), lambda x: np.broadcast_to(x, (3, 4)),
           (real(3, 1),)),
    OpCase("expand_as", lambda x, y: x.expand_as(y) * y, lambda x, y: x * y,
           (real(1, 4), real(3, 4))),
    OpCase("repeat", lambda x: x.repeat(2, 3), lambda x: np.tile(x, (2, 3)), (real(2, 3),)),
    OpCase("repeat_new_dims", lambda x: x.repeat(2, 1, 2), lambda x: np.tile(x, (2, 1, 2)),
           (real(2, 3),)),
    OpCase("pad_int", lambda x: x.pad(1), lambda x: np.pad(x, 1), (real(3, 4),),
           torch_fn=lambda x: torch.nn.functional.pad(x, (1, 1, 1, 1))),
    OpCase("pad_last_dim", lambda x: x.pad((1, 2)), lambda x: np.pad(x, ((0, 0), (1, 2))),
           (real(3, 4),), torch_fn=lambda x: torch.nn.functional.pad(x, (1, 2))),
    OpCase("pad_last_two_dims", lambda x: x.pad((1, 0, 2, 1)),
           lambda x: np.pad(x, ((0, 0), (2, 1), (1, 0))), (real(2, 3, 4),),
           torch_fn=lambda x: torch.nn.functional.pad(x, (1, 0, 2, 1))),
    OpCase("pad_pairs_per_dim", lambda x: x.pad(((1, 0), (0, 2))),
           lambda x: np.pad(x, ((1, 0), (0, 2))), (real(3, 4),),
           torch_fn=lambda x: torch.nn.functional.pad(x, (0, 2, 1, 0))),
    OpCase("pad_value", lambda x: x.pad((2, 1), value=0.5),
           lambda x: np.pad(x, ((0, 0), (2, 1)), constant_values=0.5), (real(3, 4),),
           torch_fn=lambda x: torch.nn.functional.pad(x, (2, 1), value=0.5)),
    OpCase("roll_flattened", lambda x: x.roll(5), lambda x: np.roll(x, 5), (real(3, 4),)),
    OpCase("roll_dim", lambda x: x.roll(-1, 1), lambda x: np.roll(x, -1, 1), (real(3, 4),)),
    OpCase("roll_dims_tuple", lambda x: x.roll((1, -2), (0, 2)),
           lambda x: np.roll(x, (1, -2), (0, 2)), (real(2, 3, 4),)),
    OpCase("roll_dims_list", lambda x: x.roll([2, 1], [1, 0]),
           lambda x: np.roll(x, (2, 1), (1, 0)), (real(2, 3, 4),)),

    # --- indexing ---
    OpCase("index_int", lambda x: x[1], lambda x: x[1], (real(3, 4),)),
    OpCase("index_negative_int", lambda x: x[-1], lambda x: x[-1], (real(3, 4),)),
    OpCase("index_two_ints", lambda x: x[1, -1], lambda x: x[1, -1], (real(3, 4),)),
    OpCase("index_slices_with_steps", lambda x: x[1:, ::2], lambda x: x[1:, ::2], (real(3, 4),)),
    OpCase("index_slices_3d", lambda x: x[:, ::2, 1::2], lambda x: x[:, ::2, 1::2],
           (real(2, 3, 4),)),
    OpCase("index_none", lambda x: x[None, 1:], lambda x: x[None, 1:], (real(3, 4),)),
    OpCase("index_none_middle", lambda x: x[:, None, 2], lambda x: x[:, None, 2],
           (real(3, 4),)),
    OpCase("index_ellipsis", lambda x: x[..., 1], lambda x: x[..., 1], (real(2, 3, 4),)),
    OpCase("index_int_ellipsis_slice", lambda x: x[0, ..., ::3], lambda x: x[0, ..., ::3],
           (real(2, 3, 4),)),
    OpCase("index_list", lambda x: x[[0, 2]], lambda x: x[[0, 2]], (real(3, 4),)),
    OpCase("index_repeated_rows", lambda x: x[ROWS], lambda x: x[ROWS], (real(3, 4),),
           torch_fn=lambda x: x[as_torch(ROWS)]),
    OpCase("index_backward_scatter",  # GetItem's gradient as an op (create_graph=True)
           lambda g: IndexBackward.apply(g, input_shape=(3, 4), index=ROWS),
           lambda g: _scatter_rows(g), (real(5, 4),),
           torch_fn=lambda g: torch.zeros(3, 4, dtype=g.dtype).index_add(
               0, as_torch(ROWS), g)),
    OpCase("index_int_tensor", lambda x: x[mg.tensor(ROWS)], lambda x: x[ROWS], (real(3, 4),),
           torch_fn=lambda x: x[as_torch(ROWS)]),
    OpCase("index_repeated_points", lambda x: x[ROWS, COLS], lambda x: x[ROWS, COLS],
           (real(3, 4),), torch_fn=lambda x: x[as_torch(ROWS), as_torch(COLS)]),
    OpCase("index_repeated_columns", lambda x: x[:, COLS], lambda x: x[:, COLS],
           (real(3, 4),), torch_fn=lambda x: x[:, as_torch(COLS)]),
    OpCase("index_broadcast_arrays", lambda x: x[np.array([[0], [2]]), np.array([1, 1, 3])],
           lambda x: x[np.array([[0], [2]]), np.array([1, 1, 3])], (real(3, 4),),
           torch_fn=lambda x: x[as_torch([[0], [2]]), as_torch([1, 1, 3])]),
    OpCase("index_arrays_around_slice", lambda x: x[np.array([1, 1]), :, np.array([0, 3])],
           lambda x: x[np.array([1, 1]), :, np.array([0, 3])], (real(2, 3, 4),),
           torch_fn=lambda x: x[as_torch([1, 1]), :, as_torch([0, 3])]),
    OpCase("index_2d_int_tensor", lambda x: x[mg.tensor(np.array([[0, 2], [2, 2]]))],
           lambda x: x[np.array([[0, 2], [2, 2]])], (real(3, 4),),
           torch_fn=lambda x: x[as_torch([[0, 2], [2, 2]])]),
    OpCase("index_slice_and_list", lambda x: x[1:, [0, 0, 3]], lambda x: x[1:, [0, 0, 3]],
           (real(3, 4),)),
    OpCase("index_bool_mask", lambda x: x[MASK], lambda x: x[MASK], (real(3, 4),),
           torch_fn=lambda x: x[as_torch(MASK)]),
    OpCase("index_bool_tensor", lambda x: x[mg.tensor(MASK)], lambda x: x[MASK],
           (real(3, 4),), torch_fn=lambda x: x[as_torch(MASK)]),
    OpCase("index_column_mask", lambda x: x[:, COLUMN_MASK], lambda x: x[:, COLUMN_MASK],
           (real(3, 4),), torch_fn=lambda x: x[:, as_torch(COLUMN_MASK)]),
    OpCase("index_comparison_mask", lambda x: x[x > 0], lambda x: x[x > 0],
           (real(3, 4, away_from=(0,)),)),

    # --- recorded in-place assignment on a non-leaf: gradients reach x and v ---
    OpCase("setitem_slices", lambda x, v: assign(x * 1, np.s_[1:, ::2], v),
           lambda x, v: assign(x.copy(), np.s_[1:, ::2], v), (real(3, 4), real(2, 2))),
    OpCase("setitem_broadcast_value", lambda x, v: assign(x * 1, np.s_[:, 1], v),
           lambda x, v: assign(x.copy(), np.s_[:, 1], v), (real(3, 4), real())),
    OpCase("setitem_int_array", lambda x, v: assign(x * 1, np.array([2, 0]), v),
           lambda x, v: assign(x.copy(), np.array([2, 0]), v), (real(3, 4), real(2, 4)),
           torch_fn=lambda x, v: assign(x * 1, as_torch([2, 0]), v)),
    OpCase("setitem_bool_mask", lambda x, v: assign(x * 1, MASK, v),
           lambda x, v: assign(x.copy(), MASK, v), (real(3, 4), real(6)),
           torch_fn=lambda x, v: assign(x * 1, as_torch(MASK), v)),
    OpCase("setitem_then_use", lambda x, v: assign(x * 1, 1, v).tanh() * x,
           lambda x, v: np.tanh(assign(x.copy(), 1, v)) * x, (real(3, 4), real(4))),
    OpCase("setitem_number", lambda x: assign(x * 1, 0, 0.5),
           lambda x: assign(x.copy(), 0, 0.5), (real(3, 4),)),
    # a tensor without history gets history from the value assigned into it
    OpCase("setitem_into_constant", lambda v: assign(mg.zeros(3, 4, dtype=v.dtype), 1, v),
           lambda v: assign(np.zeros((3, 4)), 1, v), (real(4),),
           torch_fn=lambda v: assign(torch.zeros(3, 4, dtype=v.dtype), 1, v)),
    OpCase("iadd_non_leaf", lambda x, v: add_in_place(x * 2, v), lambda x, v: x * 2 + v,
           (real(3, 4), real(4))),
    OpCase("imul_non_leaf", lambda x, v: multiply_in_place(x * 2, v), lambda x, v: x * 2 * v,
           (real(3, 4), real(3, 1))),
    OpCase("clamp_non_leaf", lambda x, v: (x * 2).clamp_(-1, 1) * v,
           lambda x, v: np.clip(x * 2, -1, 1) * v, (real(3, 4, away_from=(-0.5, 0.5)), real(4))),
    # in place through a view of a tensor with history: recorded on the base, as in PyTorch
    OpCase("imul_row_view", lambda x: row_view_tripled(x * 2),
           lambda x: row_view_tripled(x * 2), (real(3, 4),)),
    OpCase("iadd_column_view", lambda x, v: column_view_shifted(x * 1, v),
           lambda x, v: column_view_shifted(x * 1, v), (real(3, 4), real(3))),
    OpCase("setitem_flat_view", lambda x, v: assigned_through_flat_view(x * 1, v),
           lambda x, v: assigned_through_flat_view(x * 1, v), (real(3, 4), real())),

    # --- joining, selecting, gathering ---
    OpCase("cat", lambda a, b: mg.cat([a, b]), lambda a, b: np.concatenate([a, b]),
           (real(2, 3), real(1, 3)), torch_fn=lambda a, b: torch.cat([a, b])),
    OpCase("cat_dim_1_three", lambda a, b, c: mg.cat((a, b, c), dim=1),
           lambda a, b, c: np.concatenate([a, b, c], axis=1), (real(2, 1), real(2, 3), real(2, 2)),
           torch_fn=lambda a, b, c: torch.cat((a, b, c), dim=1)),
    OpCase("cat_negative_dim", lambda a, b: mg.cat([a, b], dim=-1),
           lambda a, b: np.concatenate([a, b], axis=-1), (real(2, 2, 3), real(2, 2, 1)),
           torch_fn=lambda a, b: torch.cat([a, b], dim=-1)),
    OpCase("stack", lambda a, b: mg.stack([a, b]), lambda a, b: np.stack([a, b]),
           (real(2, 3), real(2, 3)), torch_fn=lambda a, b: torch.stack([a, b])),
    OpCase("stack_dim_1_three", lambda a, b, c: mg.stack((a, b, c), dim=1),
           lambda a, b, c: np.stack([a, b, c], axis=1), (real(2, 3), real(2, 3), real(2, 3)),
           torch_fn=lambda a, b, c: torch.stack((a, b, c), dim=1)),
    OpCase("stack_negative_dim", lambda a, b: mg.stack([a, b], dim=-1),
           lambda a, b: np.stack([a, b], axis=-1), (real(3,), real(3,)),
           torch_fn=lambda a, b: torch.stack([a, b], dim=-1)),
    OpCase("unbind", lambda x: x.unbind(0), lambda x: tuple(x), (real(3, 4),),
           dtypes=("float32",) * 3),
    # only two of the four slices used: the others' gradients are zeros
    OpCase("unbind_some_used", lambda x: x.unbind(-1)[0] * x.unbind(-1)[3],
           lambda x: x[:, 0] * x[:, 3], (real(3, 4),)),
    OpCase("where", lambda a, b: mg.where(MASK, a, b), lambda a, b: np.where(MASK, a, b),
           (real(3, 4), real(3, 4)), torch_fn=lambda a, b: torch.where(as_torch(MASK), a, b)),
    OpCase("where_tensor_condition_broadcast",
           lambda a, b: mg.where(mg.tensor(CONDITION_COLUMN), a, b),
           lambda a, b: np.where(CONDITION_COLUMN, a, b), (real(3, 4), real(4)),
           torch_fn=lambda a, b: torch.where(as_torch(CONDITION_COLUMN), a, b)),
    OpCase("where_number", lambda a: mg.where(a > 0, a, 0.0), lambda a: np.where(a > 0, a, 0.0),
           (real(3, 4, away_from=(0,)),), torch_fn=lambda a: torch.where(a > 0, a, 0.0)),
    OpCase("gather_dim_0", lambda x: mg.gather(x, 0, mg.tensor(GATHER_ROWS)),
           lambda x: gather_reference(x, 0, GATHER_ROWS), (real(3, 4),),
           torch_fn=lambda x: torch.gather(x, 0, as_torch(GATHER_ROWS))),
    OpCase("gather_dim_1", lambda x: mg.gather(x, 1, mg.tensor(GATHER_COLUMNS)),
           lambda x: gather_reference(x, 1, GATHER_COLUMNS), (real(3, 4),),
           torch_fn=lambda x: torch.gather(x, 1, as_torch(GATHER_COLUMNS))),
    OpCase("gather_smaller_index", lambda x: x.gather(-1, mg.tensor(GATHER_CORNER)),
           lambda x: gather_reference(x, 1, GATHER_CORNER), (real(3, 4),),
           torch_fn=lambda x: x.gather(-1, as_torch(GATHER_CORNER))),

    # --- strided windows (Tensor.unfold) ---
    OpCase("unfold_overlapping", lambda x: x.unfold(0, 3, 1),
           lambda x: unfold_reference(x, 0, 3, 1), (real(7),)),
    OpCase("unfold_tiling", lambda x: x.unfold(0, 2, 2), lambda x: unfold_reference(x, 0, 2, 2),
           (real(7),)),
    OpCase("unfold_with_gaps", lambda x: x.unfold(0, 2, 3),
           lambda x: unfold_reference(x, 0, 2, 3), (real(8),)),
    OpCase("unfold_middle_dim", lambda x: x.unfold(1, 3, 2),
           lambda x: unfold_reference(x, 1, 3, 2), (real(2, 7, 3),)),
    OpCase("unfold_negative_dim", lambda x: x.unfold(-1, 2, 1),
           lambda x: unfold_reference(x, 1, 2, 1), (real(3, 4),)),
    OpCase("unfold_twice", lambda x: x.unfold(0, 2, 1).unfold(1, 3, 1),
           lambda x: unfold_reference(unfold_reference(x, 0, 2, 1), 1, 3, 1), (real(3, 5),)),

    # --- copies and casts ---
    OpCase("clone", lambda x: x.clone(), lambda x: x.copy(), (real(3, 4),)),
    OpCase("double", lambda x: x.double(), lambda x: x, (real(3, 4),), dtypes=("float64",)),
    OpCase("astype_float64", lambda x: x.astype("float64") * x, lambda x: x * x, (real(3, 4),),
           torch_fn=lambda x: x.to(torch.float64) * x, dtypes=("float64",)),
    # in float64 (gradcheck) the float() is a real cast, so its float32 output needs a
    # larger finite-difference step
    OpCase("double_then_float", lambda x: x.double().float(), lambda x: x, (real(3, 4),),
           gradcheck_eps=1e-3),
]
