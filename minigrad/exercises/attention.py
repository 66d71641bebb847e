"""Chapter 13's classic mistakes (attention, the causal mask, multi-head attention, a
pre-norm transformer block), out of the notebook so that its test cells do not show the
answers, and the reference layers its checks compare with.

- ``check_attention(MyAttentionFunction)``: exercise 1's check, ``check_function`` on
  three cases (no mask and L != S, a causal mask, two heads with a random mask) with
  ``attention_mistakes(mask)``: wrong outputs and gradients of scaled dot-product
  attention, ``{sentence: fn(q, k, v, mask[, grad_output])}``; the mask's own mistakes
  (forgotten, applied after the softmax, inverted, 0 instead of -inf) only when the case
  has a mask. Then scores in the thousands (``large_scores_case``): a softmax that does
  not subtract the row's maximum overflows, and is named. When the student's code raises
  on a matrix product (a missing transpose shows as a shape when L != S), the message
  gives the case's sizes and gradient shapes, names ``.T`` on a batched array, and runs
  the Function again on square shapes, where every product fits, to name the mistake.
- ``check_causal_mask(causal_mask)``: exercise 2's check, ``check_array_function`` with
  ``CAUSAL_MASK_MISTAKES`` (wrong masks, ``{sentence: fn(T) -> mask}``), after a mask
  that is not bool (float 0/1, which F.scaled_dot_product_attention would ADD to the
  scores, or the additive 0/-inf form) is named; ``causal_mask_reference(T)``.
- ``MULTIHEAD_MISTAKES``, ``BLOCK_MISTAKES``: wrong modules, ``{sentence: module class}``,
  for ``check_module(..., mistakes=...)``.
- ``ReferenceAttentionFunction``, ``causal_mask_reference``,
  ``ReferenceMultiheadAttention``: the answers of exercises 1-3, which the checks of the
  exercises built on them run on when the student's own is wrong (``uses=``, see
  prerequisites.py).
- ``SelfAttention``, ``PreNormBlock``: minigrad's ``nn.MultiheadAttention`` and
  ``nn.TransformerEncoderLayer(norm_first=True)`` called as the chapter's layers are
  (``layer(x, is_causal=False)``, batch first, no dropout), with every parameter moved
  away from its initial value (zero biases and unit norm weights would hide a forgotten
  bias or scale).
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from typing import Any

import numpy as np

from ..state import no_grad
from ..tensor import Tensor, cat
from .checks import check_array_function, check_function, checker
from .compare import CheckFailed, as_array, describe
from .losses import _softmax
from .prerequisites import reference_for

# --- scaled dot-product attention ---------------------------------------------------------


def _scores(q: np.ndarray, k: np.ndarray, scale: float | None = None) -> np.ndarray:
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    return np.matmul(q, np.swapaxes(k, -1, -2)) * scale


def _masked(scores: np.ndarray, mask: Any) -> np.ndarray:
    return scores if mask is None else np.where(mask, scores, -np.inf)


def _weights(q: np.ndarray, k: np.ndarray, mask: Any) -> np.ndarray:
    return _softmax(_masked(_scores(q, k), mask))


def attention_gradients(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: Any,
                        grad_output: np.ndarray, softmax_term: bool = True,
                        softmax_axis: int = -1, scaled: bool = True,
                        transpose_k: bool = True, transpose_a: bool = True,
                        transpose_v: bool = True, diagonal: bool = False) -> tuple:
    """The gradients of softmax(q k^T / sqrt(d) + mask) v for q, k, v (and None for the
    mask), or one of the named wrong ones."""
    a = _weights(q, k, mask)
    grad_v = np.matmul(np.swapaxes(a, -1, -2) if transpose_a else a, grad_output)
    grad_a = np.matmul(grad_output, np.swapaxes(v, -1, -2) if transpose_v else v)
    if diagonal:  # only the Jacobian's diagonal, s (1 - s)
        grad_s = a * (1 - a) * grad_a
    else:
        grad_s = a * (grad_a - (grad_a * a).sum(axis=softmax_axis, keepdims=True)) \
            if softmax_term else a * grad_a
    scale = 1 / math.sqrt(q.shape[-1]) if scaled else 1.0
    grad_q = np.matmul(grad_s, k) * scale
    grad_k = np.matmul(np.swapaxes(grad_s, -1, -2) if transpose_k else grad_s, q) * scale
    return grad_q, grad_k, grad_v, None


def _output(q, k, v, mask, scale=None, axis=-1, mask_after=False, inverted=False,
            fill=-np.inf):
    scores = _scores(q, k, scale)
    if fill != -np.inf:
        return np.matmul(_softmax(np.where(mask, scores, fill), axis), v)
    if mask_after:
        return np.matmul(_softmax(scores, axis) * mask, v)
    if inverted:
        return np.matmul(_softmax(np.where(mask, -np.inf, scores), axis), v)
    return np.matmul(_softmax(_masked(scores, mask), axis), v)


NOT_SCALED = (
    "the scores are not scaled: divide q k^T by sqrt(d) (d = q.shape[-1]) before the "
    "softmax. Without it the scores grow like sqrt(d) and the softmax saturates.")
SCALED_BY_D = (
    "the scores were divided by d instead of sqrt(d): q . k is a sum of d products, its "
    "standard deviation grows like sqrt(d), so the scale is 1 / sqrt(d) "
    "(1 / math.sqrt(q.shape[-1])).")
SCALED_BY_DV = (
    "the scores were scaled by 1/sqrt(d_v), the size of the VALUES (v.shape[-1]): the "
    "scale comes from the dot products q . k, sums of d = q.shape[-1] products, so it is "
    "1 / math.sqrt(q.shape[-1]).")
SOFTMAX_OVER_QUERIES = (
    "the softmax runs over the wrong axis (the queries, axis -2): each query's weights "
    "over the keys must sum to 1, so the softmax runs over the last axis (the keys, S) of "
    "the (..., L, S) scores.")
MASK_FORGOTTEN = (
    "the mask was not applied: where mask is False (may not attend), set the score to "
    "-inf before the softmax: np.where(mask, scores, -np.inf).")
MASK_AFTER_SOFTMAX = (
    "the mask was applied after the softmax (the weights were zeroed where mask is False): "
    "then a row's weights no longer sum to 1. Mask the SCORES with -inf before the "
    "softmax, so that the softmax shares the whole weight among the allowed keys.")
MASK_ZERO = (
    "the forbidden scores were set to 0 (or multiplied by the mask), not to -inf: e^0 = "
    "1, so the forbidden keys still get weight. Put -inf there, np.where(mask, scores, "
    "-np.inf): e^-inf = 0.")
MASK_INVERTED = (
    "the mask was used the wrong way round: here (as in F.scaled_dot_product_attention) "
    "True means 'may attend'; the scores where mask is False get -inf. (nn.MultiheadAttention's "
    "bool attn_mask is the opposite: True = masked out.)")
SOFTMAX_TERM_MISSING = (
    "the softmax's backward is missing its second term: dS = A * dA forgets that every "
    "weight of a row depends on every score of that row. Chapter 8's softmax backward, row "
    "by row: dS = A * (dA - sum(dA * A, axis=-1, keepdims=True)).")
SOFTMAX_DIAGONAL_ONLY = (
    "the softmax's backward keeps only the diagonal of its Jacobian, dS = A (1 - A) dA: "
    "every weight of a row depends on every score of that row (chapter 8), so dS = A * "
    "(dA - sum(dA * A, axis=-1, keepdims=True)).")
SOFTMAX_SUM_WRONG_AXIS = (
    "the softmax backward's sum runs over the wrong axis: the softmax was over the keys "
    "(the last axis), so dS = A * (dA - sum(dA * A, axis=-1, keepdims=True)).")
GRAD_NOT_SCALED = (
    "the gradients of q and k are missing the scale: S = q k^T / sqrt(d), so dq = dS k / "
    "sqrt(d) and dk = dS^T q / sqrt(d).")
GRAD_K_NOT_TRANSPOSED = (
    "dk uses dS instead of its transpose: S = q k^T is (L, S), so dk = dS^T q / sqrt(d) "
    "(np.swapaxes(dS, -1, -2) @ q: one row per key).")

GRAD_V_NOT_TRANSPOSED = (
    "dv uses the weights A instead of their transpose: out = A v with A (L, S), so dv = "
    "A^T G (np.swapaxes(A, -1, -2) @ grad_output: one row per key, (S, d_v)).")
GRAD_A_NOT_TRANSPOSED = (
    "dA uses v instead of its transpose: out = A v, so dA = G v^T (grad_output @ "
    "np.swapaxes(v, -1, -2): (L, d_v) @ (d_v, S), the weights' shape (L, S)).")


def attention_mistakes(mask: Any = None) -> dict:
    """The named wrong answers of scaled dot-product attention, for ``check_function``
    (inputs q, k, v, mask). The mask's mistakes only when ``mask`` is given."""
    from .checks import wrong_output

    mistakes = {
        NOT_SCALED: wrong_output(lambda q, k, v, m: _output(q, k, v, m, scale=1.0)),
        SCALED_BY_D: wrong_output(lambda q, k, v, m: _output(q, k, v, m,
                                                              scale=1 / q.shape[-1])),
        SCALED_BY_DV: wrong_output(lambda q, k, v, m: _output(
            q, k, v, m, scale=1 / math.sqrt(v.shape[-1]))),
        SOFTMAX_OVER_QUERIES: wrong_output(lambda q, k, v, m: _output(q, k, v, m, axis=-2)),
        SOFTMAX_TERM_MISSING: lambda q, k, v, m, g: attention_gradients(
            q, k, v, m, g, softmax_term=False),
        SOFTMAX_DIAGONAL_ONLY: lambda q, k, v, m, g: attention_gradients(
            q, k, v, m, g, diagonal=True),
        SOFTMAX_SUM_WRONG_AXIS: lambda q, k, v, m, g: attention_gradients(
            q, k, v, m, g, softmax_axis=-2),
        GRAD_NOT_SCALED: lambda q, k, v, m, g: attention_gradients(q, k, v, m, g,
                                                                   scaled=False),
        GRAD_K_NOT_TRANSPOSED: lambda q, k, v, m, g: attention_gradients(
            q, k, v, m, g, transpose_k=False),
        GRAD_V_NOT_TRANSPOSED: lambda q, k, v, m, g: attention_gradients(
            q, k, v, m, g, transpose_a=False),
        GRAD_A_NOT_TRANSPOSED: lambda q, k, v, m, g: attention_gradients(
            q, k, v, m, g, transpose_v=False),
    }
    if mask is not None:
        mistakes.update({
            MASK_FORGOTTEN: wrong_output(lambda q, k, v, m: _output(q, k, v, None)),
            MASK_AFTER_SOFTMAX: wrong_output(lambda q, k, v, m: _output(q, k, v, m,
                                                                        mask_after=True)),
            MASK_INVERTED: wrong_output(lambda q, k, v, m: _output(q, k, v, m,
                                                                   inverted=True)),
            MASK_ZERO: wrong_output(lambda q, k, v, m: _output(q, k, v, m, fill=0.0)),
        })
    return mistakes


def attention_reference(q: Tensor, k: Tensor, v: Tensor, mask: Any = None) -> Tensor:
    """minigrad's own attention, called as the exercise's Function is."""
    from ..nn import functional as F

    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def _reference_attention_function() -> type:
    from ..function import Function

    class ReferenceAttentionFunction(Function):
        """Exercise 1's answer: out = softmax(q k^T / sqrt(d), masked) v (the checks of
        code built on ``MyAttentionFunction`` use it)."""

        @staticmethod
        def forward(ctx: Any, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                    mask: Any) -> np.ndarray:
            weights = _weights(q, k, mask)
            ctx.save_for_backward(q, k, v)
            ctx.mask = mask
            return np.matmul(weights, v)

        @staticmethod
        def backward(ctx: Any, grad_output: np.ndarray) -> tuple:
            q, k, v = ctx.saved_tensors
            return attention_gradients(q, k, v, ctx.mask, grad_output)

    ReferenceAttentionFunction.__module__ = __name__
    ReferenceAttentionFunction.__qualname__ = "ReferenceAttentionFunction"
    return reference_for(1, "my_attention")(ReferenceAttentionFunction)


ReferenceAttentionFunction = _reference_attention_function()


def random_mask(shape: tuple, seed: int = 0) -> np.ndarray:
    """A bool mask (True = may attend) with at least one True in every row."""
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < 0.6
    rows = np.arange(shape[-2])
    mask[..., rows, rng.integers(0, shape[-1], shape[-2])] = True
    return mask


def attention_cases() -> list:
    """Exercise 1's cases, ``(inputs, mask)``: no mask and L != S (a missing transpose
    shows as a shape), a causal mask with q and k of one shape (also tried as the same
    Tensor), a batch of two heads with a random mask that broadcasts to the scores."""
    causal, random = causal_mask_reference(4), random_mask((3, 5))
    return [([(2, 3, 4), (2, 5, 4), (2, 5, 6), None], None),
            ([(2, 4, 3), (2, 4, 3), (2, 4, 5), causal], causal),
            ([(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 2), random], random)]


SQUARE = [(2, 4, 4), (2, 4, 4), (2, 4, 4), None]  # L = S = d = d_v: every product fits


def large_scores_case(seed: int = 0) -> list:
    """q and k whose scores are in the thousands (q . k / sqrt(d) up to about 3000), so
    that e^score overflows to inf where the softmax does not subtract the row's maximum
    first; v of ordinary size."""
    rng = np.random.default_rng(seed + 100)
    return [rng.standard_normal((2, 3, 4)) * 60, rng.standard_normal((2, 5, 4)) * 60,
            rng.standard_normal((2, 5, 3)), None]


UNSTABLE_SOFTMAX = (
    "the softmax overflows on large scores: e^score is inf for a score over about 710 "
    "(and inf / inf is nan). Subtract each row's maximum from the scores before the "
    "exponential, e = np.exp(scores - scores.max(axis=-1, keepdims=True)): the weights "
    "are the same, and the largest exponent is e^0 = 1.")


@checker
def check_attention(function: Any, *, seed: int = 0, cases: list | None = None) -> None:
    """Exercise 1's check: ``check_function`` against ``F.scaled_dot_product_attention``
    on ``cases`` (``[(inputs, mask), ...]``, by default ``attention_cases()``), each with
    its ``attention_mistakes``, then on ``large_scores_case(seed)`` (scores in the
    thousands: an unstable softmax gives inf or nan, and is named). When the student's
    code raises on a matrix product, or indexes the scores with a mask that does not fit
    them, the message says more (``_explain``)."""
    (first, _), *others = attention_cases() if cases is None else cases
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check_function.__wrapped__(
                function, inputs=[first], reference=attention_reference,
                mistakes=attention_mistakes(), seed=seed,
                more=[({}, [case], attention_mistakes(mask)) for case, mask in others])
    except CheckFailed as failure:
        raise CheckFailed(_explain(function, str(failure), seed)) from None
    large = large_scores_case(seed)
    call = ("with scores in the thousands (q and k of size about 60, "
            f"{_function_name(function)}(array{large[0].shape}, array{large[1].shape}, "
            f"array{large[2].shape}, None))")
    try:
        with no_grad():
            out = as_array(function.apply(*(Tensor(a) for a in large[:3]), None))
    except Exception:  # noqa: BLE001 - check_function below says what raised, and where
        out = None
    if out is not None and not np.isfinite(out).all():
        raise CheckFailed(f"{call}: the output has {int((~np.isfinite(out)).sum())} of "
                          f"{out.size} values inf or nan.\n  It looks like {UNSTABLE_SOFTMAX}")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check_function.__wrapped__(function, inputs=[large],
                                       reference=attention_reference,
                                       mistakes=attention_mistakes(), seed=seed)
    except CheckFailed as failure:
        raise CheckFailed(f"{call}:\n  {failure}") from None
    print(f"{_function_name(function)}: forward and backward are right ({len(others) + 2} "
          "settings: with and without a mask, L != S, scores in the thousands).")


def _function_name(function: Any) -> str:
    return getattr(function, "__name__", None) or type(function).__name__


def _explain(function: Any, message: str, seed: int) -> str:
    """The message, with more words for a product that raised (the case's sizes, ``.T``
    on a batch, the mistake the Function makes where every product fits, which then
    replaces the general words on matrix products) or a mask used as an index."""
    raised = re.search(r"\(line \d+: (.*)\)(?:\n|$)", message)
    line = raised[1] if raised else ""
    if "raised IndexError" in message and "boolean index" in message:
        return message + (
            "\n  The mask does not have the scores' shape: it BROADCASTS to them (here it "
            "has fewer dimensions), and a boolean index does not broadcast. Use "
            "np.where(mask, scores, -np.inf).")
    if not re.search(r"raised (ValueError|ShapeError): matmul", message):
        return message
    general = re.search(r"\n  It looks like the operands of a matrix product.*?The order "
                        r"matters\.", message, re.S)
    words = ""
    shapes = re.findall(r"array\(([\d, ]+)\)", message.split(":")[0])
    if len(shapes) >= 3:
        q, k, v = (tuple(int(n) for n in found.split(",") if n.strip())
                   for found in shapes[:3])
        length, d, keys, dv = q[-2], q[-1], k[-2], v[-1]
        words += (f"\n  Here q is {q}, k {k}, v {v}: L = {length} queries, S = {keys} "
                  f"keys, d = {d}, d_v = {dv}. The scores, the weights A and their "
                  f"gradients are (..., {length}, {keys}), the output and grad_output G "
                  f"(..., {length}, {dv}); each gradient has its input's shape: dq (..., "
                  f"{length}, {d}), dk (..., {keys}, {d}), dv (..., {keys}, {dv}).")
    if re.search(r"\.T\b", line):
        words += ("\n  `.T` on an array with a batch dimension reverses ALL its axes (a "
                  "(2, 5, 4) array becomes (4, 5, 2)): swap the last two only, "
                  "np.swapaxes(a, -1, -2).")
    square = _on_square_shapes(function, seed)
    if square:
        words += ("\n  Run on square shapes, L = S = d = d_v = 4 (where every product "
                  f"fits), your Function looks like this mistake: {square}")
    if general and ("forward raised" in message or square):
        # a forward has no grad_output, and a named mistake says more than the general rule
        message = message.replace(general[0], "")
    return message + words


def _on_square_shapes(function: Any, seed: int) -> str:
    """The named mistake the student's Function makes on SQUARE inputs, or ''."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check_function.__wrapped__(function, inputs=[SQUARE],
                                       reference=attention_reference,
                                       mistakes=attention_mistakes(), seed=seed)
    except CheckFailed as failure:
        if " raised " in str(failure).split("\n")[0]:
            return ""  # it raised there too: the first message says it
        found = re.search(r"It looks like (.*?)(\n  \S|$)", str(failure), re.S)
        return " ".join(found[1].split()) if found else ""
    except Exception:  # noqa: BLE001 (the diagnosis must never hide the first message)
        return ""
    return ""


# --- the causal mask ------------------------------------------------------------------------


@reference_for(2, "causal_mask")
def causal_mask_reference(size: int) -> np.ndarray:
    """True where query i may attend to key j: j <= i."""
    return np.tril(np.ones((size, size), dtype=bool))


CAUSAL_MASK_MISTAKES = {
    "the diagonal is masked too: a position may attend to itself (and must: the first "
    "position has nothing else to look at). Keep j <= i: np.tril(..., k=0).":
        lambda size: np.tril(np.ones((size, size), dtype=bool), k=-1),
    "this mask lets each position see the FUTURE (j >= i) and not the past: the upper "
    "triangle is what must be masked. Row i (a query) may attend to the columns (keys) "
    "j <= i: the lower triangle, np.tril.":
        lambda size: np.triu(np.ones((size, size), dtype=bool)),
    "the mask is inverted (True = masked out, nn.MultiheadAttention's convention): here, "
    "as in F.scaled_dot_product_attention, True means 'may attend', so the lower "
    "triangle with its diagonal is True.":
        lambda size: np.triu(np.ones((size, size), dtype=bool), k=1),
    "every position may attend everywhere: the mask must forbid the future, key j > "
    "query i.": lambda size: np.ones((size, size), dtype=bool),
}


CAUSAL_MASK_ADDITIVE = (
    "this is the ADDITIVE form of the causal mask, 0 where a query may attend and -inf "
    "where it may not (nn.Transformer.generate_square_subsequent_mask's, added to the "
    "scores). The exercise asks for a bool mask, True where query i may attend to key j "
    "(j <= i), as F.scaled_dot_product_attention's bool attn_mask.")
CAUSAL_MASK_NOT_BOOL = (
    "the mask must be a bool array (dtype=bool), not numbers: F.scaled_dot_product_attention "
    "(as PyTorch's) ADDS a float mask to the scores, so a mask of 1.0 and 0.0 would mask "
    "nothing. Build it from True/False, e.g. np.tril(np.ones((size, size), dtype=bool)).")


@checker
def check_causal_mask(function: Any, sizes: tuple = (4, 6, 1)) -> None:
    """Exercise 2's check: a bool array first (a float 0/1 mask has the right values but
    would be added to the scores by F.scaled_dot_product_attention; the additive 0/-inf
    form is named), then ``check_array_function`` with ``CAUSAL_MASK_MISTAKES``."""
    try:
        got = as_array(function(4))
    except Exception:  # noqa: BLE001 (check_array_function says what raised, and where)
        got = None
    if got is not None and got.dtype != bool:
        sentence = CAUSAL_MASK_ADDITIVE if got.dtype.kind == "f" and np.isneginf(got).any() \
            else CAUSAL_MASK_NOT_BOOL
        raise CheckFailed(f"causal_mask(4) returned {describe(got)}.\n  It looks like "
                          f"{sentence}")
    check_array_function.__wrapped__(function, [(size,) for size in sizes],
                                     causal_mask_reference, mistakes=CAUSAL_MASK_MISTAKES)


# --- reference layers -------------------------------------------------------------------


def _blocked(length: int) -> np.ndarray:
    """nn.MultiheadAttention's causal mask: True = may NOT attend (the future)."""
    return np.triu(np.ones((length, length), dtype=bool), k=1)


def _moved(module: Any, seed: int = 1) -> Any:
    """Every parameter plus N(0, 0.3) noise (fixed seed), so that zero biases and unit
    norm weights do not hide a forgotten bias or scale."""
    rng = np.random.default_rng(seed)
    with no_grad():
        for _, parameter in module.named_parameters():
            parameter.copy_(parameter + Tensor(
                rng.normal(0.0, 0.3, parameter.shape).astype(parameter.dtype)))
    return module


def _self_attention_class() -> type:
    from .. import nn

    class SelfAttention(nn.MultiheadAttention):
        """``nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)`` as
        self-attention, ``layer(x, is_causal=False)`` -> the output alone."""

        def __init__(self, embed_dim: int, num_heads: int) -> None:
            super().__init__(embed_dim, num_heads, batch_first=True)
            _moved(self)

        def forward(self, x: Tensor, is_causal: bool = False) -> Tensor:
            mask = _blocked(x.shape[1]) if is_causal else None
            return super().forward(x, x, x, attn_mask=mask, need_weights=False)[0]

    return SelfAttention


def _pre_norm_block_class() -> type:
    from .. import nn

    class PreNormBlock(nn.TransformerEncoderLayer):
        """``nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0,
        batch_first=True, norm_first=True)``, ``block(x, is_causal=False)``."""

        def __init__(self, d_model: int, nhead: int, dim_feedforward: int) -> None:
            super().__init__(d_model, nhead, dim_feedforward, dropout=0.0, batch_first=True,
                             norm_first=True)
            _moved(self)

        def forward(self, x: Tensor, is_causal: bool = False) -> Tensor:
            mask = _blocked(x.shape[1]) if is_causal else None
            return super().forward(x, src_mask=mask, is_causal=is_causal)

    return PreNormBlock


SelfAttention = _self_attention_class()
PreNormBlock = _pre_norm_block_class()


# --- wrong multi-head attention -------------------------------------------------------------


def _nn_module() -> type:
    from .. import nn

    return nn.Module



def _multihead(split: str = "right", merge: str = "right", scale: str = "head",
               causal: bool | str = True, out_proj: bool = True, transposed_in: bool = False,
               in_bias: bool = True, packed: str = "blocks") -> type:
    """A self-attention layer with PyTorch's parameters, right except for the named
    mistake (written out with minigrad operations)."""
    from .. import nn
    from ..nn import functional as F

    class WrongMultiheadAttention(nn.Module):
        def __init__(self, embed_dim: int, num_heads: int) -> None:
            super().__init__()
            self.embed_dim, self.num_heads = embed_dim, num_heads
            self.in_proj_weight = nn.Parameter(Tensor(np.zeros((3 * embed_dim, embed_dim),
                                                               np.float32)))
            self.in_proj_bias = nn.Parameter(Tensor(np.zeros(3 * embed_dim, np.float32)))
            self.out_proj = nn.Linear(embed_dim, embed_dim)

        def forward(self, x: Tensor, is_causal: bool = False) -> Tensor:
            n, length, e = x.shape
            h, d = self.num_heads, e // self.num_heads
            weight = self.in_proj_weight
            if transposed_in:  # x @ W for each (E, E) block, not x @ W^T
                qkv = cat([x @ weight[i * e:(i + 1) * e] for i in range(3)], dim=-1)
            else:
                qkv = x @ weight.T
            if in_bias:
                qkv = qkv + self.in_proj_bias

            def heads(t: Tensor) -> Tensor:
                if split == "reshape":
                    return t.reshape(n, h, length, d)
                return t.reshape(n, length, h, d).transpose(1, 2)

            if packed == "interleaved":  # qkv[..., 0::3], qkv[..., 1::3], qkv[..., 2::3]
                q, k, v = (heads(qkv[..., i::3]) for i in range(3))
            else:
                q, k, v = (heads(qkv[..., i * e:(i + 1) * e]) for i in range(3))
            if is_causal and causal == "inverted":  # nn.MultiheadAttention's bool mask
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=_blocked(length))
            else:
                root = {"embed": math.sqrt(e), "twice": d}.get(scale, math.sqrt(d))
                scores = q @ k.transpose(-2, -1) / root
                if is_causal and causal:
                    scores = scores + Tensor(np.where(_blocked(length), -np.inf, 0.0)
                                             .astype(np.float32))
                out = F.softmax(scores, dim=-1) @ v  # (n, h, L, d)
            out = out.reshape(n, length, e) if merge == "reshape" else \
                out.transpose(1, 2).reshape(n, length, e)
            return self.out_proj(out) if out_proj else out

    return WrongMultiheadAttention


MULTIHEAD_MISTAKES = {
    "the heads were split by a reshape alone, (N, L, E) -> (N, H, L, d): that cuts the "
    "(L, E) block of a sequence into H pieces of consecutive numbers, mixing positions and "
    "features. Reshape to (N, L, H, d) (each position's E features cut into H heads), then "
    "transpose(1, 2) to (N, H, L, d).": _multihead(split="reshape"),
    "the heads were joined by a reshape alone, (N, H, L, d) -> (N, L, E): transpose(1, 2) "
    "back to (N, L, H, d) first, so that each position's E features are its H heads side "
    "by side, then reshape to (N, L, E).": _multihead(merge="reshape"),
    "the scores were scaled by 1/sqrt(embed_dim): each head works in d = embed_dim / "
    "num_heads dimensions, so the scale is 1/sqrt(head_dim) (F.scaled_dot_product_attention "
    "does it for you).": _multihead(scale="embed"),
    "the scores were scaled twice (by 1/head_dim): F.scaled_dot_product_attention already "
    "divides q k^T by sqrt(head_dim), so do not scale q or k yourself.":
        _multihead(scale="twice"),
    "the causal mask was forgotten: with is_causal=True a position must not attend to the "
    "positions after it. Pass is_causal on to F.scaled_dot_product_attention.":
        _multihead(causal=False),
    "the causal mask is the wrong way round: a bool attn_mask of "
    "F.scaled_dot_product_attention is True where a query MAY attend (nn.MultiheadAttention's "
    "is the opposite, True = masked out). Simplest: pass is_causal=is_causal.":
        _multihead(causal="inverted"),
    "out_proj was not applied: after joining the heads, the output goes through "
    "self.out_proj (a Linear(E, E)), which mixes what the heads found.":
        _multihead(out_proj=False),
    "the packed projection was applied as x @ W (each (E, E) block not transposed): "
    "in_proj_weight holds PyTorch Linear weights (out, in), so q, k, v = x @ W^T + b, e.g. "
    "F.linear(x, self.in_proj_weight, self.in_proj_bias).": _multihead(transposed_in=True),
    "in_proj_bias was not added: q, k, v = x @ in_proj_weight^T + in_proj_bias.":
        _multihead(in_bias=False),
    "q, k and v were taken interleaved (qkv[..., 0::3], qkv[..., 1::3], qkv[..., 2::3]): "
    "the packed projection holds them as three BLOCKS of embed_dim features one after the "
    "other (in_proj_weight's rows 0..E-1 make q, E..2E-1 make k, 2E..3E-1 make v), so "
    "q = qkv[..., :E], k = qkv[..., E:2 * E], v = qkv[..., 2 * E:] (or qkv.chunk(3, dim=-1)).":
        _multihead(packed="interleaved"),
}


@reference_for(3, "my_multihead_attention")
class ReferenceMultiheadAttention(_nn_module()):
    """Exercise 3's answer: self-attention with nn.MultiheadAttention's parameters
    (batch first), ``layer(x, is_causal=False)``; the checks of code built on
    ``MyMultiheadAttention`` (``MyTransformerBlock``) use it."""

    def __init__(self, embed_dim: int, num_heads: int) -> None:
        from .. import nn

        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(
            nn.init.xavier_uniform_(Tensor(np.zeros((3 * embed_dim, embed_dim), np.float32))))
        self.in_proj_bias = nn.Parameter(Tensor(np.zeros(3 * embed_dim, np.float32)))
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: Tensor, is_causal: bool = False) -> Tensor:
        from ..nn import functional as F

        n, length, e = x.shape
        qkv = F.linear(x, self.in_proj_weight, self.in_proj_bias)

        def split(t: Tensor) -> Tensor:  # (N, L, E) -> (N, H, L, d)
            return t.reshape(n, length, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = split(qkv[..., :e]), split(qkv[..., e:2 * e]), split(qkv[..., 2 * e:])
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
        return self.out_proj(heads.transpose(1, 2).reshape(n, length, e))


# --- wrong transformer blocks -------------------------------------------------------------


def _block(order: str = "pre", attention_residual: bool = True, mlp_residual: bool = True,
           causal: bool = True, activation: bool | str = True, residual_from: str = "x",
           mlp_norm: str = "norm2") -> type:
    from .. import nn
    from ..nn import functional as F

    class WrongBlock(nn.Module):
        def __init__(self, d_model: int, nhead: int, dim_feedforward: int) -> None:
            super().__init__()
            self.self_attn = SelfAttention(d_model, nhead)
            self.linear1 = nn.Linear(d_model, dim_feedforward)
            self.linear2 = nn.Linear(dim_feedforward, d_model)
            self.norm1 = nn.LayerNorm(d_model)
            self.norm2 = nn.LayerNorm(d_model)

        def _mlp(self, x: Tensor) -> Tensor:
            hidden = self.linear1(x)
            if activation == "gelu":
                return self.linear2(F.gelu(hidden))
            return self.linear2(F.relu(hidden) if activation else hidden)

        def forward(self, x: Tensor, is_causal: bool = False) -> Tensor:
            causal_here = is_causal and causal
            if order == "post":
                x = self.norm1(x + self.self_attn(x, causal_here))
                return self.norm2(x + self._mlp(x))
            h = self.norm1(x)
            a = self.self_attn(h, causal_here)
            x = ((h if residual_from == "normed" else x) + a) if attention_residual else a
            h = getattr(self, mlp_norm)(x)
            m = self._mlp(h)
            return ((h if residual_from == "normed" else x) + m) if mlp_residual else m

    return WrongBlock


BLOCK_MISTAKES = {
    "that is a post-norm block, norm(x + sublayer(x)) (the original Transformer's, "
    "nn.TransformerEncoderLayer's default): a pre-norm block normalises the sublayer's "
    "INPUT and adds to the untouched x, x = x + self_attn(norm1(x)), then x = x + "
    "mlp(norm2(x)), so the residual path stays an identity from the first block to the "
    "last.": _block(order="post"),
    "the residual connection around the attention was forgotten: x = x + "
    "self_attn(norm1(x)), not self_attn(norm1(x)) alone.": _block(attention_residual=False),
    "the residual connection around the feed-forward part was forgotten: return x + "
    "mlp(norm2(x)), not mlp(norm2(x)) alone.": _block(mlp_residual=False),
    "the residual adds the NORMALISED input, norm1(x) + self_attn(norm1(x)): the skip "
    "path must carry x itself, x = x + self_attn(norm1(x)) (otherwise every block "
    "renormalises the residual stream).": _block(residual_from="normed"),
    "the causal mask was forgotten: pass is_causal on to self.self_attn(..., is_causal).":
        _block(causal=False),
    "the ReLU between linear1 and linear2 is missing: without it the two Linear layers "
    "are one linear map. mlp(h) = linear2(relu(linear1(h))).": _block(activation=False),
    "the activation is GELU: nn.TransformerEncoderLayer's default, and this block's, is "
    "ReLU, mlp(h) = linear2(relu(linear1(h))).": _block(activation="gelu"),
    "the feed-forward part was given norm1(x): each sublayer has its own LayerNorm, norm1 "
    "before the attention, norm2 before the feed-forward, x = x + mlp(norm2(x)).":
        _block(mlp_norm="norm1"),
}


__all__ = ["BLOCK_MISTAKES", "CAUSAL_MASK_MISTAKES", "MULTIHEAD_MISTAKES", "PreNormBlock",
           "ReferenceAttentionFunction", "ReferenceMultiheadAttention", "SelfAttention",
           "large_scores_case", "attention_cases", "attention_gradients", "attention_mistakes",
           "attention_reference", "causal_mask_reference", "check_attention",
           "check_causal_mask", "random_mask"]
