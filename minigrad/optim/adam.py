"""Adam and AdamW: gradient steps scaled by running averages of the gradient and its square.

For each parameter p with gradient g, at step t = 1, 2, ... (PyTorch's update):

    g <- -g                                    if maximize
    g <- g + weight_decay * p                  Adam: L2 penalty, added to the gradient
    p <- p * (1 - lr * weight_decay)           AdamW: decoupled weight decay, instead
    m <- beta1 * m + (1 - beta1) * g           first moment  ("exp_avg")
    v <- beta2 * v + (1 - beta2) * g * g       second moment ("exp_avg_sq")
    v_max <- max(v_max, v)                     if amsgrad    ("max_exp_avg_sq")
    p <- p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

m and v start at zero, so early on they are too small: dividing by 1 - beta**t (the bias
correction) undoes that. With amsgrad, v_max takes the place of v in the last line.
The state of each parameter is ``optimizer.state[p]``: ``step`` (t), ``exp_avg``,
``exp_avg_sq`` (and ``max_exp_avg_sq``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, kernel_options


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014); ``weight_decay`` is an L2 penalty added to the gradient."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, maximize: bool = False,
                 decoupled_weight_decay: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def check_options(self, group: dict[str, Any]) -> None:
        name = type(self).__name__
        for key in ("lr", "eps", "weight_decay"):
            if not group[key] >= 0:
                raise ValueError(f"{name}: invalid {key}={group[key]!r}; it must be >= 0")
        betas = group["betas"]
        if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2) such as (0.9, 0.999), "
                             f"but got {betas!r}")
        for index, beta in enumerate(betas):
            if not 0 <= beta < 1:
                raise ValueError(
                    f"{name}: invalid beta parameter at index {index}: betas={tuple(betas)!r}; "
                    "each beta must be in [0, 1), for example (0.9, 0.999)"
                )

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        # Python floats, so that float32 arithmetic stays float32
        lr, eps = float(group["lr"]), float(group["eps"])
        weight_decay = float(group["weight_decay"])
        beta1, beta2 = (float(beta) for beta in group["betas"])
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        step = state["step"]

        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        # the running averages are updated in place: m <- beta1 m + (1 - beta1) g, ...
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg *= beta1  # (PyTorch's lerp_ rounds differently: ~1e-16 in float64; the
        exp_avg += (1 - beta1) * grad  # chapters' committed training runs use this form)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        second_moment = exp_avg_sq
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
            second_moment = state["max_exp_avg_sq"]

        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        denominator = np.sqrt(second_moment)
        denominator /= math.sqrt(bias_correction2)
        denominator += eps
        param -= step_size * exp_avg / denominator


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2017): the parameters shrink
    by ``lr * weight_decay`` each step, outside the running averages."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True, differentiable=differentiable)
