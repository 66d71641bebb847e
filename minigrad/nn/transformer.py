"""TransformerEncoderLayer and TransformerEncoder, with PyTorch's parameter names, so a
PyTorch state dict loads as is (``self_attn.in_proj_weight``, ``linear1.weight``,
``norm1.weight``, ... and ``layers.0.`` ... in the encoder).

One layer is self-attention and a feed-forward block, each with dropout, a residual
connection and a LayerNorm:

    post-norm (default):  x = norm1(x + sa(x));        x = norm2(x + ff(x))
    norm_first=True:      x = x + sa(norm1(x));        x = x + ff(norm2(x))

    sa(x) = dropout1(self_attn(x, x, x))
    ff(x) = dropout2(linear2(dropout(activation(linear1(x)))))
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..tensor import Tensor
from . import functional as F
from .attention import MultiheadAttention
from .linear import Dropout, Linear
from .module import Module, ModuleList
from .normalization import LayerNorm

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class TransformerEncoderLayer(Module):
    """One encoder layer: ``layer(src, src_mask=None, src_key_padding_mask=None,
    is_causal=False)`` with src (S, N, d_model) ((N, S, d_model) with ``batch_first``,
    (S, d_model) unbatched) returns the same shape. The masks follow MultiheadAttention's
    convention (True = may NOT attend); ``activation`` is ``"relu"``, ``"gelu"`` or a
    function."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(activation, str):
            if activation not in ACTIVATIONS:
                raise ValueError(f"TransformerEncoderLayer: activation should be 'relu' or "
                                 f"'gelu' (or a function), not {activation!r}")
            activation = ACTIVATIONS[activation]
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation
        self.batch_first = batch_first

    def forward(self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                  is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (deep copies: each has its own weights,
    as in PyTorch), then ``norm`` if given. ``encoder(src, mask=None,
    src_key_padding_mask=None, is_causal=None)``."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(f"TransformerEncoder: encoder_layer must be a Module (a "
                            f"TransformerEncoderLayer), got {type(encoder_layer).__name__}")
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Tensor:
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=bool(is_causal))
        return self.norm(output) if self.norm is not None else output
