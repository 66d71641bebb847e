"""Layers that act on the last dimension: Linear, Embedding, Dropout, Flatten, Identity."""

from __future__ import annotations

import math
from typing import Any


from ..device import check_device
from ..tensor import Tensor
from . import functional as F
from . import init
from .functional_layers_more import refuse_sparse
from .module import Module, Parameter, check_sizes, new_parameter


class Identity(Module):
    """Returns its input (a placeholder layer)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x W^T + b, with ``weight`` of shape (out_features, in_features) and ``bias``
    (out_features,); both start uniform in +-1/sqrt(in_features), as in PyTorch."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if device is not None:
            check_device(device, "Linear")
        in_features, out_features = check_sizes("Linear", in_features=in_features,
                                                out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        self.weight = new_parameter(out_features, in_features, dtype=dtype)
        self.bias = new_parameter(out_features, dtype=dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # = U(+-1/sqrt(in_features))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_type(input, self.weight)
        if input.ndim == 0 or input.shape[-1] != self.in_features:
            raise self._error(
                f"expected input of shape (..., {self.in_features}) (in_features="
                f"{self.in_features}), got shape {tuple(input.shape)}"
            )
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``; integer indices
    pick rows. ``weight`` starts N(0, 1), as in PyTorch. ``max_norm``: rows looked up are
    first scaled down (in place) to that ``norm_type``-norm; ``scale_grad_by_freq``: each
    row's gradient is divided by how often its index occurs in the batch."""

    def __init__(self, num_embeddings: int, embedding_dim: int,
                 padding_idx: int | None = None, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Any = None, _freeze: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if device is not None:
            check_device(device, "Embedding")
        refuse_sparse(sparse, "Embedding")
        num_embeddings, embedding_dim = check_sizes("Embedding", num_embeddings=num_embeddings,
                                                    embedding_dim=embedding_dim)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} must be within the "
                                 f"{num_embeddings} rows")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = new_parameter(num_embeddings, embedding_dim, dtype=dtype)
            self.reset_parameters()
            self.weight.requires_grad = not _freeze
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight must have shape ({num_embeddings}, "
                                 f"{embedding_dim}), got {tuple(_weight.shape)}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:  # the padding row starts at zero, as in PyTorch
            self.weight._data[self.padding_idx] = 0.0

    def forward(self, input: Any) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (2-D, its array shared, as PyTorch
        does); ``freeze``: without gradient, so an optimizer leaves it unchanged."""
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D "
                             f"(num_embeddings, embedding_dim), got shape "
                             f"{tuple(embeddings.shape)}")
        return cls(*embeddings.shape, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                   sparse=sparse, _weight=embeddings, _freeze=freeze)

    def extra_repr(self) -> str:  # PyTorch's
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return text + (", sparse=True" if self.sparse is not False else "")


class Dropout(Module):
    """In training, zero each element with probability ``p`` and scale the others by
    1/(1-p); in eval mode, the identity."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be between 0 and 1, got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"  # (PyTorch shows inplace=False too)


class Flatten(Module):
    """Flattens dims ``start_dim`` to ``end_dim`` (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size`` (the inverse of Flatten):
    ``Unflatten(1, (2, 5))`` turns (N, 10) into (N, 2, 5)."""

    def __init__(self, dim: int, unflattened_size: tuple[int, ...]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        dim = self.dim % input.ndim if input.ndim else 0
        size = input.shape[dim] if input.ndim else 1
        known = math.prod(s for s in self.unflattened_size if s != -1)
        if (-1 not in self.unflattened_size and known != size) or \
                (-1 in self.unflattened_size and (known == 0 or size % known)):
            raise self._error(f"cannot unflatten dim {self.dim} of size {size} (input shape "
                              f"{tuple(input.shape)}) into {self.unflattened_size}: the sizes "
                              f"must multiply to {size}")
        return input.reshape(*input.shape[:dim], *self.unflattened_size,
                             *input.shape[dim + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
