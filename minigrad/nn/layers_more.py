"""More of PyTorch's layers (round 3 of the census): pooling with indices, unpooling,
adaptive max pooling, local response norm, alpha dropout, bilinear, embedding bags.
The computations are in ``functional_layers_more.py``."""

from __future__ import annotations

import math
from typing import Any

from ..device import check_device
from ..tensor import Tensor
from . import functional as F
from . import init
from .dropout import _DropoutNd
from .functional_checks import _single
from .functional_layers_more import EMBEDDING_BAG_MODES, refuse_sparse
from .module import Module, Parameter, check_sizes, new_parameter
from .normalization import _BatchNorm

__all__: list[str] = [
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AlphaDropout", "BatchNorm3d", "Bilinear",
    "EmbeddingBag",
    "FeatureAlphaDropout", "LocalResponseNorm", "MaxUnpool1d", "MaxUnpool2d", "Softmax2d",
    "ChannelShuffle", "Fold", "Unfold",
]


# --- unpooling and adaptive max pooling -------------------------------------------------------


class MaxUnpool2d(Module):
    """The inverse of ``MaxPool2d(return_indices=True)``: ``forward(input, indices,
    output_size=None)`` puts each value back where its index says, zeros elsewhere."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = F._pair(kernel_size, "MaxUnpool2d", "kernel_size")
        self.stride = self.kernel_size if stride is None else \
            F._pair(stride, "MaxUnpool2d", "stride")
        self.padding = F._pair(padding, "MaxUnpool2d", "padding")

    def forward(self, input: Tensor, indices: Any, output_size: Any = None) -> Tensor:
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(MaxUnpool2d):
    """The inverse of ``MaxPool1d(return_indices=True)``, along the last dimension."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        Module.__init__(self)
        self.kernel_size = (_single(kernel_size, "MaxUnpool1d", "kernel_size", 1),)
        self.stride = self.kernel_size if stride is None else \
            (_single(stride, "MaxUnpool1d", "stride", 1),)
        self.padding = (_single(padding, "MaxUnpool1d", "padding"),)

    def forward(self, input: Tensor, indices: Any, output_size: Any = None) -> Tensor:
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed ``output_size`` (h, w) whatever the input's size; with
    ``return_indices`` forward returns (values, indices)."""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Max pooling to a fixed length ``output_size``."""

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


# --- embedding bags ---------------------------------------------------------------------------


class EmbeddingBag(Module):
    """An Embedding that reduces each bag of looked-up rows at once: ``mode`` "mean" (the
    default), "sum" or "max". ``forward(input, offsets=None, per_sample_weights=None)``:
    a 2-D input is one bag per row; a 1-D input is cut into bags where ``offsets`` say.
    ``weight`` (num_embeddings, embedding_dim) starts N(0, 1), as in PyTorch."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Any = None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if device is not None:
            check_device(device, "EmbeddingBag")
        refuse_sparse(sparse, "EmbeddingBag")
        if mode not in EMBEDDING_BAG_MODES:
            raise ValueError(f"EmbeddingBag: mode must be one of {EMBEDDING_BAG_MODES}, got "
                             f"{mode!r}")
        num_embeddings, embedding_dim = check_sizes(
            "EmbeddingBag", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"EmbeddingBag: padding_idx {padding_idx} must be within "
                                 f"the {num_embeddings} rows")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            self.weight = new_parameter(num_embeddings, embedding_dim, dtype=dtype)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"EmbeddingBag: _weight must have shape ({num_embeddings}, "
                                 f"{embedding_dim}), got {tuple(_weight.shape)}")
            self.weight = Parameter(_weight)  # its array shared, as in PyTorch

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:  # the padding row starts at zero, as in PyTorch
            self.weight._data[self.padding_idx] = 0.0

    def forward(self, input: Any, offsets: Any = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is (a copy-free Parameter of) ``embeddings``;
        ``freeze``: without gradient."""
        if embeddings.ndim != 2:
            raise ValueError(f"EmbeddingBag.from_pretrained: embeddings must be 2-D, got "
                             f"shape {tuple(embeddings.shape)}")
        bag = cls(*embeddings.shape, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self) -> str:  # PyTorch's
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx!r}"
        return text


# --- normalisation, dropout, softmax, bilinear ------------------------------------------------


class LocalResponseNorm(Module):
    """AlexNet's normalisation across channels: x / (k + alpha / size * the sum of x^2
    over ``size`` neighbouring channels) ** beta."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) inputs (volumes, video): ``F.batch_norm`` works for
    any number of dims after the channels."""

    expected_ranks = (5,)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps a SELU network's mean and variance (``F.alpha_dropout``); in eval
    mode, the identity."""

    function = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """``AlphaDropout`` of whole channels of (N, C, ...) (``F.feature_alpha_dropout``)."""

    function = staticmethod(F.feature_alpha_dropout)


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W): at every position the
    channels' values sum to 1."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise self._error(f"expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got "
                              f"shape {tuple(input.shape)}")
        return F.softmax(input, -3)


class Bilinear(Module):
    """y_k = x1^T A_k x2 + b_k: ``weight`` (out_features, in1_features, in2_features) and
    ``bias`` (out_features,), both uniform in +-1/sqrt(in1_features), as in PyTorch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if device is not None:
            check_device(device, "Bilinear")
        self.in1_features, self.in2_features, self.out_features = check_sizes(
            "Bilinear", in1_features=in1_features, in2_features=in2_features,
            out_features=out_features)
        self.weight = new_parameter(out_features, in1_features, in2_features, dtype=dtype)
        self.bias = new_parameter(out_features, dtype=dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


# --- fold, unfold, channel shuffle ------------------------------------------------------------


class Unfold(Module):
    """Every ``kernel_size`` window of (N, C, H, W) as a column: (N, C kH kW, L)
    (``F.unfold``'s PyTorch form, im2col)."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, kernel_size=self.kernel_size, dilation=self.dilation,
                        padding=self.padding, stride=self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Unfold):
    """Columns (N, C kH kW, L) added back into an (N, C, *output_size) image (``F.fold``,
    col2im): the adjoint of ``Unfold``."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1,
                 padding: Any = 0, stride: Any = 1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()


class ChannelShuffle(Module):
    """The channels in ``groups`` groups, interleaved (``F.channel_shuffle``)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
