"""Op cases for the fused layer Functions: ``Linear`` (minigrad/ops/matmul.py) and
``ScaledDotProductAttention`` (minigrad/ops/attention.py), called through
``minigrad.nn.functional`` as a user would (and ``torch.nn.functional`` for PyTorch).

The references are the definitions in plain NumPy float64: x W^T + b, and
softmax(q k^T * scale + mask) v.
"""

from __future__ import annotations

import numpy as np
from op_cases import OpCase, as_torch, real, torch

import minigrad as mg
import minigrad.nn.functional as F

TF = torch.nn.functional if torch is not None else None


def linear_reference(x, weight, bias=None):
    return x @ weight.T + (0 if bias is None else bias)


CASES = [
    # --- linear: every leading shape goes through one matrix product ---
    OpCase("linear_2d", lambda x, w, b: F.linear(x, w, b), linear_reference,
           (real(4, 3), real(5, 3), real(5)), torch_fn=lambda x, w, b: TF.linear(x, w, b)),
    OpCase("linear_no_bias", lambda x, w: F.linear(x, w), linear_reference,
           (real(4, 3), real(2, 3)), torch_fn=lambda x, w: TF.linear(x, w)),
    OpCase("linear_1d_input", lambda x, w, b: F.linear(x, w, b), linear_reference,
           (real(3), real(4, 3), real(4)), torch_fn=lambda x, w, b: TF.linear(x, w, b)),
    OpCase("linear_3d_input", lambda x, w, b: F.linear(x, w, b), linear_reference,
           (real(2, 3, 4), real(5, 4), real(5)), torch_fn=lambda x, w, b: TF.linear(x, w, b)),
    OpCase("linear_4d_input", lambda x, w: F.linear(x, w), linear_reference,
           (real(2, 1, 3, 2), real(3, 2)), torch_fn=lambda x, w: TF.linear(x, w)),
    OpCase("linear_non_contiguous_input", lambda x, w, b: F.linear(x.transpose(0, 1), w, b),
           lambda x, w, b: linear_reference(x.swapaxes(0, 1), w, b),
           (real(3, 2, 4), real(2, 4), real(2)),
           torch_fn=lambda x, w, b: TF.linear(x.transpose(0, 1), w, b)),
]


# --- scaled dot-product attention: one Function, with or without mask and dropout ---


def attention_reference(q, k, v, mask=None, scale=None, weights_too=False):
    """softmax(q k^T * scale + mask) v in float64; a bool mask is True where attention is
    allowed. A row that may attend to nothing gets weights 0 (and output 0)."""
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == np.bool_ else scores + mask
    blocked = np.all(np.isneginf(scores), axis=-1, keepdims=True)
    scores = np.where(blocked, 0.0, scores)
    exp = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = np.where(blocked, 0.0, exp / exp.sum(axis=-1, keepdims=True))
    out = weights @ v
    return (out, weights) if weights_too else out


def torch_attention_with_weights(q, k, v, mask, scale):
    """F.attention's (output, weights) written out in torch, for a float mask; a row of
    only -inf gets weights 0 (softmax alone would give NaN there)."""
    scores = q @ k.transpose(-2, -1) * scale + mask
    blocked = torch.isneginf(mask).all(dim=-1, keepdim=True)
    weights = torch.softmax(torch.where(blocked, 0.0, scores), dim=-1)
    weights = torch.where(blocked, 0.0, weights)
    return weights @ v, weights


def with_dropout(q, k, v, mask, p, scale, keep, torch_side=False):
    """The attention weights after dropout with the given keep-mask, and the output, by
    hand in torch (``torch_side``) or NumPy (``mask``: bool, True = may attend)."""
    if torch_side:
        scores = (q @ k.transpose(-2, -1) * scale).masked_fill(~as_torch(mask), -np.inf)
        weights = torch.softmax(scores, dim=-1) * as_torch(keep / (1 - p)).float()
        return weights @ v, weights
    _, weights = attention_reference(q, k, v, mask, scale, weights_too=True)
    weights = weights * keep / (1 - p)
    return weights @ v, weights


def output_times_weights(output, weights):
    """One result that needs both outputs' gradients in the same backward pass."""
    return output.sum(-1, keepdims=True) * weights


DROPOUT_P, DROPOUT_SEED = 0.4, 5
DROPOUT_KEEP = np.random.default_rng(DROPOUT_SEED).random((2, 3, 4)) >= DROPOUT_P  # as drawn


def attention_with_dropout(q, k, v):
    """F.attention with dropout on the weights, the same keep-mask every call (it reseeds
    the generator F.dropout draws from), so gradients can be checked."""
    mg.manual_seed(DROPOUT_SEED)
    return output_times_weights(*F.attention(q, k, v, KEYS, DROPOUT_P, 0.5))


SDPA = F.scaled_dot_product_attention
TSDPA = TF.scaled_dot_product_attention if TF is not None else None
KEYS = np.array([[True, False, True, True],  # (L, S) = (3, 4), True = may attend
                 [False, True, True, False],
                 [True, True, False, True]])
CAUSAL = np.tril(np.ones((3, 3), dtype=bool))
NOTHING_IN_ROW_1 = np.array([[True, True, False, False],  # query 1 may attend to no key
                             [False, False, False, False],
                             [True, False, True, True]])
BIAS = np.array([[0.5, -np.inf, 0.0, -1.0],  # added to the scores; -inf blocks
                 [-np.inf, 1.5, -0.5, 0.0],
                 [0.0, 0.25, -np.inf, 2.0]])
ROW_BLOCKED_BIAS = np.where(NOTHING_IN_ROW_1, 0.0, -np.inf).astype(np.float32)

CASES += [
    OpCase("sdpa_no_mask", lambda q, k, v: SDPA(q, k, v), attention_reference,
           (real(2, 3, 4), real(2, 4, 4), real(2, 4, 3)), torch_fn=TSDPA),
    OpCase("sdpa_bool_mask_over_heads", lambda q, k, v: SDPA(q, k, v, attn_mask=KEYS),
           lambda q, k, v: attention_reference(q, k, v, KEYS),
           (real(2, 2, 3, 4), real(2, 2, 4, 4), real(2, 2, 4, 3)),
           torch_fn=lambda q, k, v: TSDPA(q, k, v, attn_mask=as_torch(KEYS))),
    OpCase("sdpa_causal", lambda q, k, v: SDPA(q, k, v, is_causal=True),
           lambda q, k, v: attention_reference(q, k, v, CAUSAL),
           (real(2, 3, 4), real(2, 3, 4), real(2, 3, 2)),
           torch_fn=lambda q, k, v: TSDPA(q, k, v, is_causal=True)),
    OpCase("sdpa_float_mask_constant", lambda q, k, v: SDPA(q, k, v, attn_mask=BIAS),
           lambda q, k, v: attention_reference(q, k, v, BIAS),
           (real(2, 3, 4), real(2, 4, 4), real(2, 4, 3)),
           torch_fn=lambda q, k, v: TSDPA(q, k, v, attn_mask=as_torch(BIAS).float())),
    OpCase("sdpa_float_mask_input", lambda q, k, v, m: SDPA(q, k, v, attn_mask=m),
           attention_reference, (real(2, 3, 4), real(2, 4, 4), real(2, 4, 3), real(3, 4)),
           torch_fn=lambda q, k, v, m: TSDPA(q, k, v, attn_mask=m)),
    OpCase("sdpa_batch_dims_broadcast", lambda q, k, v: SDPA(q, k, v, scale=0.7),
           lambda q, k, v: attention_reference(q, k, v, scale=0.7),
           (real(2, 3, 3, 4), real(3, 4, 4), real(1, 3, 4, 2)),
           torch_fn=lambda q, k, v: TSDPA(q, k, v, scale=0.7)),
    OpCase("sdpa_row_with_nothing_to_attend", lambda q, k, v: SDPA(q, k, v,
                                                                   attn_mask=NOTHING_IN_ROW_1),
           lambda q, k, v: attention_reference(q, k, v, NOTHING_IN_ROW_1),
           (real(2, 3, 4), real(2, 4, 4), real(2, 4, 3)),
           torch_fn=lambda q, k, v: TSDPA(q, k, v, attn_mask=as_torch(NOTHING_IN_ROW_1))),
    # MultiheadAttention's call: the weights are an output too, and the float mask (with a
    # row of only -inf) is made from an input, so its gradient flows back through it
    OpCase("attention_output_and_weights",
           lambda q, k, v, m: F.attention(q, k, v, m + ROW_BLOCKED_BIAS, 0.0, 0.5),
           lambda q, k, v, m: attention_reference(q, k, v, m + ROW_BLOCKED_BIAS, 0.5, True),
           (real(2, 3, 4), real(2, 4, 4), real(2, 4, 3), real(3, 4)),
           torch_fn=lambda q, k, v, m: torch_attention_with_weights(
               q, k, v, m + as_torch(ROW_BLOCKED_BIAS), 0.5),
           dtypes=("float32", "float32")),
    # dropout on the weights (drawn from minigrad's generator, given to the others), and
    # both outputs' gradients arriving in the same backward pass, the output's wider
    OpCase("attention_dropout_both_outputs_in_one_result", attention_with_dropout,
           lambda q, k, v: output_times_weights(
               *with_dropout(q, k, v, KEYS, DROPOUT_P, 0.5, DROPOUT_KEEP)),
           (real(2, 3, 4), real(2, 4, 4), real(2, 2, 4, 3)),  # v widens the output's batch
           torch_fn=lambda q, k, v: output_times_weights(
               *with_dropout(q, k, v, KEYS, DROPOUT_P, 0.5, DROPOUT_KEEP, torch_side=True))),
]
