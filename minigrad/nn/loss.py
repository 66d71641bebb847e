"""Loss layers: each the module form of a loss in ``nn.functional``; called as
``loss_fn(input, target)``."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import functional as F
from .functional_ext import KL_REDUCTIONS
from .module import Module


class _LossSettings:
    """A loss module is made first, with its settings, and then called with the data:
    ``loss_fn = nn.MSELoss(); loss = loss_fn(input, target)``. Tensors given to the
    constructor (``nn.MSELoss(input, target)``) say so, instead of a puzzling error about
    a setting."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        code = cls.__init__.__code__
        names = code.co_varnames[1:code.co_argcount]
        given = list(zip(names, args)) + list(kwargs.items())
        tensors = [value for name, value in given if isinstance(value, Tensor)
                   and (name not in ("weight", "pos_weight") or value.ndim != 1)]
        if tensors or len(args) > len(names):
            shapes = ", ".join(str(t.shape) if isinstance(t, Tensor) else type(t).__name__
                               for t in args)
            name = cls.__name__
            raise TypeError(
                f"{name}: got the data ({shapes}) when the loss module is being made. Make "
                f"it first, then call it: loss_fn = nn.{name}(); loss = loss_fn(input, "
                "target). (The functional form takes the data at once, e.g. "
                "F.cross_entropy(input, target).)")
        return super().__new__(cls)


class _Loss(_LossSettings, Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        F._check_reduction(reduction, type(self).__name__)
        self.reduction = reduction


class MSELoss(_Loss):
    """mean((input - target)^2)"""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.mse_loss(input, target, self.reduction)


class CrossEntropyLoss(_Loss):
    """Cross entropy of logits (N, C, ...) against class indices or probabilities;
    ``weight`` (C,) weighs the classes (a buffer, as in PyTorch)."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction,
                                             "CrossEntropyLoss"))
        _check_weight_argument(weight, "CrossEntropyLoss")
        self.register_buffer("weight", weight)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        F._class_weight(self.weight, input, "CrossEntropyLoss")  # errors name the layer
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


def _check_weight_argument(weight: Any, layer: str) -> None:
    """A class weight is a 1-D Tensor (its length is checked against the input's classes
    when the loss is called)."""
    if weight is not None and not isinstance(weight, Tensor):
        raise TypeError(f"{layer}: weight must be a Tensor of shape (C,) (one weight per "
                        f"class), got {type(weight).__name__}; wrap it: "
                        "weight=mg.tensor(...)")


class BCELoss(_Loss):
    """Binary cross entropy of probabilities in [0, 1]; ``weight`` (a buffer, as in
    PyTorch) multiplies each loss."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction, "BCELoss"))
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (sigmoid inside, computed stably); ``pos_weight``
    (one per class) weighs the positive examples, ``weight`` each loss (buffers, as in
    PyTorch)."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction,
                                             "BCEWithLogitsLoss"))
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class HingeLoss(_Loss):
    """The seed's max-margin loss for labels in {-1, +1}: max(0, margin - y * score)."""

    def __init__(self, margin: float = 1.0, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.hinge_loss(input, target, self.margin, self.reduction)


# --- more of PyTorch's losses (issue 11) ------------------------------------------------------


class NLLLoss(_Loss):
    """Negative log-likelihood of log-probabilities (N, C, ...) (the output of
    LogSoftmax) against class indices; ``weight`` (C,) weighs the classes (a buffer, as in
    PyTorch)."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction, "NLLLoss"))
        _check_weight_argument(weight, "NLLLoss")
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:
        F._class_weight(self.weight, input, "NLLLoss")  # errors name the layer
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class L1Loss(_Loss):
    """mean(|input - target|)"""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.l1_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    """Squared below ``beta`` (divided by beta), absolute above."""

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class HuberLoss(_Loss):
    """Squared below ``delta``, absolute (times delta) above."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.huber_loss(input, target, self.reduction, self.delta)


class KLDivLoss(_LossSettings, Module):
    """KL divergence of the target distribution from the input's; ``input`` holds
    log-probabilities (``log_target``: the target too). Use ``reduction="batchmean"`` for
    the true KL divergence ("mean" averages over every element, as PyTorch does)."""

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__()
        if reduction not in KL_REDUCTIONS:
            raise ValueError(f"KLDivLoss: reduction must be one of {KL_REDUCTIONS}, got "
                             f"{reduction!r}")
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
