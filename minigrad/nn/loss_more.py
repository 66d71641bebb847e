"""More of PyTorch's loss layers (round 3 of the census): the ranking, metric and
likelihood losses, and pairwise distance. Each is the module form of a functional in
``functional_losses_more.py``: made with its settings, then called with the data. As in
PyTorch, a loss's repr is its name alone (``TripletMarginLoss()``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor import Tensor
from . import functional_losses_more as F
from .functional_checks import _legacy_reduction
from .loss import _check_weight_argument, _Loss
from .module import Module

__all__ = [
    "CTCLoss", "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss",
    "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PairwiseDistance",
    "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
]


class PairwiseDistance(Module):
    """||x1 - x2 + eps||_p along the last dim: one distance per row."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim  # PyTorch's attribute names

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class _NamedLoss(_Loss):
    """A loss whose deprecated ``size_average``/``reduce`` map to ``reduction``, and whose
    repr is its name alone, as in PyTorch."""

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(_legacy_reduction(size_average, reduce, reduction,
                                           type(self).__name__))

    def extra_repr(self) -> str:
        return ""


class CosineEmbeddingLoss(_NamedLoss):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, self.margin,
                                       reduction=self.reduction)


class MarginRankingLoss(_NamedLoss):
    """max(0, -target (input1 - input2) + margin) for targets -1/1."""

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class TripletMarginLoss(_NamedLoss):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        F._positive_margin(margin, "TripletMarginLoss")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p,
                                     self.eps, self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_NamedLoss):
    """The triplet loss with any ``distance_function(x1, x2)`` (default: pairwise_distance);
    e.g. ``lambda a, b: 1 - F.cosine_similarity(a, b)``."""

    def __init__(self, *, distance_function: Callable | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        F._positive_margin(margin, "TripletMarginWithDistanceLoss")
        # a module (a child in the repr, as in PyTorch) or any function of two tensors
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class HingeEmbeddingLoss(_NamedLoss):
    """input for target 1, max(0, margin - input) for target -1 (input: a distance)."""

    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_NamedLoss):
    """log(1 + exp(-target input)) for targets -1/1."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_NamedLoss):
    """Binary cross entropy of logits (N, C) against 0/1 targets, averaged over the C
    classes; ``weight`` (C,) weighs the classes (a buffer, as in PyTorch)."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        _check_weight_argument(weight, "MultiLabelSoftMarginLoss")
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class MultiMarginLoss(_NamedLoss):
    """The multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])^p / C,
    ``weight`` (C,) weighs each example by its class (a buffer, as in PyTorch)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        weight = kwargs.get("weight", args[2] if len(args) > 2 else None)
        if isinstance(weight, Tensor) and weight.ndim != 1:  # before the check for data
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.ndim}D instead (shape {tuple(weight.shape)})")
        return super().__new__(cls, *args, **kwargs)

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got p={p}")
        _check_weight_argument(weight, "MultiMarginLoss")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.multi_margin_loss(input, target, self.p, self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_NamedLoss):
    """The multi-label hinge loss; each target row lists the classes, ended by -1."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class PoissonNLLLoss(_NamedLoss):
    """exp(input) - target input (``log_input``), else input - target log(input + eps);
    ``full`` adds Stirling's term for targets > 1."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None,
                 eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Any) -> Tensor:
        return F.poisson_nll_loss(log_input, target, self.log_input, self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_NamedLoss):
    """(log var + (input - target)^2 / var) / 2, var clamped to at least ``eps``."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Any, var: Tensor | float) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)



class CTCLoss(_NamedLoss):
    """Connectionist temporal classification: -log p(target | log_probs (T, N, C)), summed
    over the target's alignments to the frames; ``blank`` is the class of "no label"."""

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Any, input_lengths: Any,
                target_lengths: Any) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)
