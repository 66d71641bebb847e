"""Scaled dot-product attention as one Function with an analytic backward.

Composed from Tensor ops, attention is a matmul, a scale, a mask, a softmax, a dropout
and a second matmul: six graph nodes and as many arrays of the scores' size (..., L, S).
Fused, it is one node; the forward works on one scores array in place, and the backward
is the chain rule through the same steps, written out. For gradients of gradients
(``create_graph=True``) the steps are recomputed as recorded Tensor ops instead.
"""

from __future__ import annotations

import numpy as np

from ..autograd import sum_to_shape
from ..function import Function
from ..higher_order import recomputed
from ..state import state
from .matmul import matmul_shape
from .reduce import row_sums


def attention_shapes(q_shape: tuple, k_shape: tuple, v_shape: tuple,
                     mask_shape: tuple | None) -> tuple[tuple, tuple]:
    """The shapes of the output and of the weights: the scores (..., L, S) broadcast
    with the mask, then the weights times v."""
    weights = matmul_shape(tuple(q_shape), tuple(k_shape[:-2]) + (k_shape[-1], k_shape[-2]))
    if mask_shape is not None:
        weights = tuple(np.broadcast_shapes(weights, tuple(mask_shape)))
    return matmul_shape(weights, tuple(v_shape)), weights


class ScaledDotProductAttention(Function):
    """f(q, k, v, mask) = (W * D) v,  W = softmax(S),  S = q k^T * scale + mask,
    over the last two dims (..., L, d) x (..., S, d); the leading dims broadcast as in
    matmul. D is the dropout: keep / (1 - dropout_p) (0 or 1 / (1 - p) per weight), or 1.
    Returns (output, W * D), the attention weights after dropout. With G the gradient of
    the output, Gw that of the weights (may be absent):

        dv = (W D)^T G,  dW = (G v^T + Gw) * D,  dS = W * (dW - sum(dW * W, -1))
        dq = dS k * scale,  dk = dS^T q * scale,  dmask = dS

    ``mask``: None, bool (True = may attend) or float (added to the scores; -inf blocks).
    A row (query) that may attend to nothing gets weights 0 and output 0, not NaN.
    ``keep``: the dropout's keep-mask of the weights' shape, drawn by the caller (so a
    lazy graph draws it when it is built, as ``F.dropout`` does); None with dropout_p
    in (0, 1) draws it here from ``state.rng``.
    """

    hint = ("query (..., L, d), key (..., S, d), value (..., S, dv); the mask broadcasts to "
            "the scores (..., L, S)")

    @staticmethod
    def forward(ctx, q, k, v, mask=None, scale=1.0, dropout_p=0.0, keep=None):
        scale = float(scale)  # a NumPy float64 scale would make float32 scores float64
        scores = np.matmul(q, np.swapaxes(k, -1, -2))
        scores *= scale  # a fresh array: scale it in place
        if mask is not None:
            if mask.dtype == np.bool_:  # 0 / -inf built on the small mask, then one add
                mask = np.where(mask, 0.0, -np.inf).astype(scores.dtype)
            if mask.dtype == scores.dtype and \
                    np.broadcast_shapes(mask.shape, scores.shape) == scores.shape:
                scores += mask
            else:  # the mask widens the scores (or promotes them, like Tensor addition)
                scores = scores + mask
        # softmax over S, in place: scores become the weights
        row_max = scores.max(axis=-1, keepdims=True)
        blocked = None
        if mask is not None:
            blocked = np.isneginf(row_max)  # rows where every key is blocked
            if blocked.any():
                row_max[blocked] = 0.0  # -inf - -inf would be NaN; exp(-inf - 0) is 0
            else:
                blocked = None
        scores -= row_max
        np.exp(scores, out=scores)
        total = row_sums(scores)[..., None]  # (BLAS: reduce.row_sums)
        if blocked is not None:
            total[blocked] = 1.0  # 0 / 1: those rows get weights 0
        scores /= total
        weights = scores

        factor = None  # D = keep * factor
        if dropout_p > 0:
            if dropout_p >= 1:
                keep, factor = None, weights.dtype.type(0.0)
            else:
                if keep is None:
                    keep = state.rng.random(weights.shape) >= dropout_p
                factor = weights.dtype.type(1.0 / (1.0 - dropout_p))
        else:
            keep = None
        dropped = weights if factor is None else _drop(weights, factor, keep)

        ctx.save_for_backward(q, k, v, weights, keep)
        ctx.scale, ctx.factor = scale, factor
        ctx.set_materialize_grads(False)  # no zeros of the weights' size when unused
        needs = ctx.needs_input_grad
        if True in needs and not (needs[0] or needs[1] or len(needs) > 3 and needs[3]):
            ctx.mark_non_differentiable(dropped)  # only v needs a gradient: W has none
        return np.matmul(dropped, v), dropped

    @staticmethod
    def output_shape(q, k, v, mask=None, scale=1.0, dropout_p=0.0, keep=None):
        return attention_shapes(q.shape, k.shape, v.shape,
                                None if mask is None else mask.shape)

    @staticmethod
    def output_dtype(q, k, v, mask=None, scale=1.0, dropout_p=0.0, keep=None):
        dtypes = [q.dtype, k.dtype]
        if mask is not None and mask.dtype != np.bool_:
            dtypes.append(mask.dtype)
        weights = np.result_type(*dtypes)
        return np.result_type(weights, v.dtype), weights

    @staticmethod
    def backward(ctx, grad_output, grad_weights):
        q, k, v, weights, keep = ctx.saved_tensors
        needs = ctx.needs_input_grad
        needs_q, needs_k, needs_v = needs[:3]
        needs_mask = len(needs) > 3 and needs[3]
        factor = ctx.factor
        grad_q = grad_k = grad_v = grad_mask = None
        if needs_v and grad_output is not None:
            dropped = weights if factor is None else _drop(weights, factor, keep)
            grad_v = np.matmul(np.swapaxes(dropped, -1, -2), grad_output)
        if (needs_q or needs_k or needs_mask) and (grad_output is not None
                                                   or grad_weights is not None):
            # dW: the gradient of the weights after dropout ...
            if grad_output is None:
                grad = grad_weights.copy()  # not ours to edit in place
            else:
                grad = np.matmul(grad_output, np.swapaxes(v, -1, -2))
                if grad.shape != weights.shape:  # v's batch dims widened the output
                    grad = sum_to_shape(grad, weights.shape)
                if grad_weights is not None:
                    grad += grad_weights
            if factor is not None:  # ... then through the dropout
                grad = _drop(grad, factor, keep, in_place=True)
            # softmax: dS = W * (dW - sum(dW * W)), in place (einsum sums the products
            # without an array of them: 95 us against 283 us for 16x4x64x64 float32)
            grad -= np.einsum("...s,...s->...", grad, weights)[..., None]
            grad *= weights
            if needs_mask:
                grad_mask = grad
            if needs_q or needs_k:
                # dS * scale, once: the gradient of q k^T (a copy where dS is dmask too)
                if needs_mask:
                    grad = grad * ctx.scale
                else:
                    grad *= ctx.scale
                grad_q = np.matmul(grad, k) if needs_q else None
                grad_k = np.matmul(np.swapaxes(grad, -1, -2), q) if needs_k else None
        # one gradient per positional input: q, k, v, mask, then None for the constants
        return (grad_q, grad_k, grad_v, grad_mask, None, None, None)[:len(needs)]

    # create_graph=True: the gradients of the same steps written with recorded ops
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output, grad_weights):
        keep = ctx.saved_tensors[4]  # the dropout drawn in forward, a constant

        def attention(q, k, v, mask=None, *constants):
            return _attention_recorded(q, k, v, mask, ctx.scale, ctx.factor, keep)

        return recomputed(ctx, (grad_output, grad_weights), attention)


def _attention_recorded(q, k, v, mask, scale, factor, keep):
    """Attention from recorded ops (matmul, scale, mask, softmax, dropout, matmul), the
    same steps as the forward, for its second derivatives (higher_order.recomputed)."""
    scores = (q @ k.transpose(-2, -1)) * scale
    if mask is not None:
        if mask.dtype == np.bool_:
            mask = np.where(mask, 0.0, -np.inf).astype(scores.dtype)
        scores = scores + mask
        # a row that may attend to nothing gets weights 0 (a softmax of -inf only is NaN)
        blocked = np.isneginf(scores.detach().numpy().max(axis=-1, keepdims=True))
        if blocked.any():
            scores = scores.where(~blocked, 0.0)
        weights = scores.softmax(-1) * ~blocked if blocked.any() else scores.softmax(-1)
    else:
        weights = scores.softmax(-1)
    if factor is not None:  # the dropout: keep * factor (0 for dropout_p = 1)
        weights = weights * factor if keep is None else weights * (keep * factor)
    return weights @ v, weights


def _drop(array: np.ndarray, factor: np.generic, keep: np.ndarray | None,
          in_place: bool = False) -> np.ndarray:
    """array * keep * factor (keep None: the factor alone, 0 for dropout_p = 1)."""
    out = np.multiply(array, factor, out=array if in_place else None)
    if keep is not None:
        out *= keep
    return out

