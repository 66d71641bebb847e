"""Attention layers: ScaledDotProductAttention (the seed's) and MultiheadAttention.

Attention lets each of L query positions read a weighted mix of S value vectors, the
weights saying how well the query matches each key:

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d) + mask) V

Multi-head attention projects the inputs, splits the embedding into ``num_heads`` heads
of d = embed_dim / num_heads features, attends in each head separately, joins the heads
again and projects once more:

    head_h = Attention(query W_q,h^T + b_q,h,  key W_k,h^T + b_k,h,  value W_v,h^T + b_v,h)
    output = concat(head_1, ..., head_H) W_o^T + b_o

Mind the masks: ``F.scaled_dot_product_attention`` takes a bool ``attn_mask`` with True =
"may attend", while ``MultiheadAttention`` follows PyTorch's older convention, True = "may
NOT attend" (masked out), for both ``attn_mask`` and ``key_padding_mask``. Float masks
mean the same in both: they are added to the scores (use -inf to forbid).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..device import check_device
from ..tensor import Tensor
from . import functional as F
from . import init
from .linear import Linear
from .module import Module, new_parameter


class ScaledDotProductAttention(Module):
    """``F.scaled_dot_product_attention`` as a layer, with dropout on the attention weights
    in training mode only. A bool ``attn_mask`` is True where attention is allowed."""

    def __init__(self, dropout_p: float = 0.0) -> None:
        super().__init__()
        if not 0.0 <= dropout_p <= 1.0:
            raise ValueError(f"ScaledDotProductAttention: dropout_p must be between 0 and 1, "
                             f"got {dropout_p}")
        self.dropout_p = dropout_p

    def forward(self, query: Tensor, key: Tensor, value: Tensor, attn_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        return F.scaled_dot_product_attention(
            query, key, value, attn_mask=attn_mask, is_causal=is_causal,
            dropout_p=self.dropout_p if self.training else 0.0,
        )

    def extra_repr(self) -> str:
        return f"dropout_p={self.dropout_p}"


class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's parameters: the three input projections packed
    in ``in_proj_weight`` (3 * embed_dim, embed_dim) (rows: query, key, value) and
    ``in_proj_bias`` (3 * embed_dim,), and ``out_proj``, a Linear(embed_dim, embed_dim).
    When ``kdim`` or ``vdim`` differ from ``embed_dim``, the input projections are three
    separate weights ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` instead.

    ``mha(query, key, value)`` with query (L, N, embed_dim) and key, value (S, N, kdim /
    vdim) (batch first with ``batch_first=True``; (L, embed_dim) and (S, kdim) unbatched)
    returns ``(attn_output, attn_weights)``: attn_output shaped like query, attn_weights
    (N, L, S) averaged over the heads, (N, num_heads, L, S) with
    ``average_attn_weights=False``, or None with ``need_weights=False``.

    Masks (constants, no gradient), PyTorch's convention for this layer:

    - ``key_padding_mask`` (N, S): True marks a key to ignore (padding), for every query.
    - ``attn_mask`` (L, S), or (N * num_heads, L, S) for one mask per sequence and head
      (index n * num_heads + h): True marks a query-key pair that may NOT attend. This is
      the opposite of ``F.scaled_dot_product_attention``'s bool mask.
    - A float mask of either kind is added to the scores instead (-inf forbids).
    - ``is_causal=True`` is only a hint that ``attn_mask`` is the causal mask; as in
      PyTorch it needs ``attn_mask`` (the mask is what is used).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()  # (PyTorch's argument order: a positional call means the same)
        check_device(device, "MultiheadAttention")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError(
                "MultiheadAttention: add_bias_kv=True and add_zero_attn=True (an extra "
                "learned or zero key/value position) are not supported by minigrad; leave "
                "them False")
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be positive, "
                             f"got embed_dim={embed_dim}, num_heads={num_heads}")
        if embed_dim % num_heads != 0:
            raise ValueError(
                f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                f"({num_heads}), since each head gets embed_dim / num_heads features; try "
                f"num_heads in {[h for h in range(1, embed_dim + 1) if embed_dim % h == 0]}"
            )
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be between 0 and 1, got "
                             f"{dropout}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.dropout, self.batch_first = dropout, batch_first
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        # Registered in PyTorch's order, so state-dict keys come out in the same order.
        if self._qkv_same_embed_dim:
            self.in_proj_weight = new_parameter(3 * embed_dim, embed_dim, dtype=dtype)
        else:
            self.q_proj_weight = new_parameter(embed_dim, embed_dim, dtype=dtype)
            self.k_proj_weight = new_parameter(embed_dim, self.kdim, dtype=dtype)
            self.v_proj_weight = new_parameter(embed_dim, self.vdim, dtype=dtype)
        self.in_proj_bias = new_parameter(3 * embed_dim, dtype=dtype) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's: Xavier-uniform input projections, zero biases; out_proj.weight keeps
        Linear's initialisation."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def _projection_weights(self) -> tuple[Tensor, Tensor, Tensor]:
        """W_q, W_k, W_v: the three row blocks of in_proj_weight, or the separate weights."""
        if not self._qkv_same_embed_dim:
            return self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        # one op for the three blocks (three slices would each allocate a full gradient)
        e = self.embed_dim
        return self.in_proj_weight.reshape(3, e, e).unbind(0)

    # --- checks ------------------------------------------------------------------------------

    def _check_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> bool:
        """Check ranks and feature sizes; return whether the inputs have a batch dim."""
        for name, tensor in (("query", query), ("key", key), ("value", value)):
            self._check_input_type(tensor, self.out_proj.weight, name)
        layout = "(N, L, E)" if self.batch_first else "(L, N, E)"
        if query.ndim not in (2, 3):
            raise self._error(f"expected a 3-D query {layout} or a 2-D unbatched query "
                              f"(L, E), got a {query.ndim}-D query of shape "
                              f"{tuple(query.shape)}")
        if key.ndim != query.ndim or value.ndim != query.ndim:
            raise self._error(f"query, key and value need the same number of dimensions, got "
                              f"shapes {tuple(query.shape)}, {tuple(key.shape)} and "
                              f"{tuple(value.shape)}")
        for name, tensor, size, argument in (("query", query, self.embed_dim, "embed_dim"),
                                             ("key", key, self.kdim, "kdim"),
                                             ("value", value, self.vdim, "vdim")):
            if tensor.shape[-1] != size:
                raise self._error(f"expected {name}'s last size to be {argument}={size}, got "
                                  f"shape {tuple(tensor.shape)}")
        if key.shape[:-1] != value.shape[:-1]:
            raise self._error(f"key and value need the same sequence length and batch size, "
                              f"got shapes {tuple(key.shape)} and {tuple(value.shape)}")
        batch_dim = 0 if self.batch_first else 1
        if query.ndim == 3 and query.shape[batch_dim] != key.shape[batch_dim]:
            raise self._error(f"query and key have different batch sizes: shapes "
                              f"{tuple(query.shape)} and {tuple(key.shape)} (batch_first="
                              f"{self.batch_first})")
        return query.ndim == 3

    def _additive(self, mask: Any, name: str, dtype: np.dtype) -> np.ndarray:
        """A bool mask (True = masked out) as 0 / -inf; a float mask as is."""
        array = mask.numpy() if isinstance(mask, Tensor) else np.asarray(mask)
        if array.dtype == np.bool_:
            return np.where(array, -np.inf, 0.0).astype(dtype)
        if array.dtype.kind != "f":
            raise self._error(f"{name} must be bool (True = masked out) or float (added to "
                              f"the scores), got {array.dtype}", TypeError)
        return array.astype(dtype)

    def _additive_mask(self, attn_mask: Any, key_padding_mask: Any, batch: int, length: int,
                       source_length: int, batched: bool, dtype: np.dtype) -> np.ndarray | None:
        """Both masks as one float array added to the scores (N, num_heads, L, S): a bool
        True (masked out) becomes -inf, a float is kept as is."""
        mask = None
        if attn_mask is not None:
            array = self._additive(attn_mask, "attn_mask", dtype)
            heads_first = (batch * self.num_heads if batched else self.num_heads, length,
                           source_length)
            if array.shape == (length, source_length):
                mask = array  # the same for every sequence and head: broadcasts
            elif array.shape == heads_first:
                mask = array.reshape(batch, self.num_heads, length, source_length)
            else:
                raise self._error(f"expected attn_mask of shape {(length, source_length)} "
                                  f"(L, S) or {heads_first} (" + ("N * " if batched else "")
                                  + f"num_heads, L, S), got {array.shape}")
        if key_padding_mask is not None:
            array = self._additive(key_padding_mask, "key_padding_mask", dtype)
            expected = (batch, source_length) if batched else (source_length,)
            if array.shape != expected:
                raise self._error(f"expected key_padding_mask of shape {expected} ("
                                  + ("N, " if batched else "") + f"S), got {array.shape}")
            padding = array.reshape(batch, 1, 1, source_length)  # the same for every query
            mask = padding if mask is None else mask + padding
        return mask

    # --- the computation -----------------------------------------------------------------

    def _split_heads(self, x: Tensor) -> Tensor:
        """(N, L, embed_dim) -> (N, num_heads, L, head_dim)."""
        batch, length, _ = x.shape
        return x.reshape(batch, length, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = self._check_inputs(query, key, value)
        if is_causal and attn_mask is None:
            raise self._error("is_causal=True is only a hint that attn_mask is causal: pass "
                              "the mask too: attn_mask = np.triu(np.ones((L, L), dtype=bool), k=1) "
                              "(True above the diagonal: the future is masked out)",
                              RuntimeError)
        # Compute with the batch first: (N, L, E).
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        batch, length, _ = query.shape
        source_length = key.shape[1]
        mask = self._additive_mask(attn_mask, key_padding_mask, batch, length, source_length,
                                   batched, query.dtype)

        weight_q, weight_k, weight_v = self._projection_weights()
        bias_q = bias_k = bias_v = None
        if self.in_proj_bias is not None:
            bias_q, bias_k, bias_v = self.in_proj_bias.reshape(3, self.embed_dim).unbind(0)
        q = self._split_heads(F.linear(query, weight_q, bias_q))  # (N, heads, L, head_dim)
        k = self._split_heads(F.linear(key, weight_k, bias_k))  # (N, heads, S, head_dim)
        v = self._split_heads(F.linear(value, weight_v, bias_v))  # (N, heads, S, head_dim)

        dropout_p = self.dropout if self.training else 0.0
        heads, weights = F.attention(q, k, v, mask, dropout_p, 1.0 / math.sqrt(self.head_dim))
        output = self.out_proj(heads.permute(0, 2, 1, 3).reshape(batch, length, self.embed_dim))

        if not batched:
            output = output[0]
        elif not self.batch_first:
            output = output.transpose(0, 1)
        if not need_weights:
            return output, None
        if average_attn_weights:
            weights = weights.mean(dim=1)
        return output, (weights if batched else weights[0])

    def extra_repr(self) -> str:
        text = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.batch_first:
            text += ", batch_first=True"
        if not self._qkv_same_embed_dim:
            text += f", kdim={self.kdim}, vdim={self.vdim}"
        return text
