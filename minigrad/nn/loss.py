"""Loss layers: each the module form of a loss in ``nn.functional``; called as
``loss_fn(input, target)``."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import functional as F
from .module import Module


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        F._check_reduction(reduction, type(self).__name__)
        self.reduction = reduction

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}" if self.reduction != "mean" else ""


class MSELoss(_Loss):
    """mean((input - target)^2)"""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.mse_loss(input, target, self.reduction)


class CrossEntropyLoss(_Loss):
    """Cross entropy of logits (N, C, ...) against class indices or probabilities."""

    def __init__(self, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.cross_entropy(input, target, self.ignore_index, self.label_smoothing,
                               self.reduction)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities in [0, 1]."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy(input, target, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (sigmoid inside, computed stably)."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.reduction)


class HingeLoss(_Loss):
    """The seed's max-margin loss for labels in {-1, +1}: max(0, margin - y * score)."""

    def __init__(self, margin: float = 1.0, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.hinge_loss(input, target, self.margin, self.reduction)
