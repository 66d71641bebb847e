"""SGD: stochastic gradient descent, with momentum, Nesterov momentum and weight decay.

For each parameter p with gradient g (PyTorch's update, step for step):

    g <- -g                                   if maximize
    g <- g + weight_decay * p                 (L2 penalty, added to the gradient)
    b <- g                                    on the first step (no dampening)
    b <- momentum * b + (1 - dampening) * g   on later steps
    g <- g + momentum * b   if nesterov  else  g <- b        (only when momentum != 0)
    p <- p - lr * g

The momentum buffer ``b`` is ``optimizer.state[p]["momentum_buffer"]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, kernel_options


class SGD(Optimizer):
    """Gradient descent: ``p <- p - lr * g``, optionally with momentum and weight decay."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-3,
                 momentum: float = 0, dampening: float = 0, weight_decay: float = 0,
                 nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize}
        super().__init__(params, defaults)

    def check_options(self, group: dict[str, Any]) -> None:
        for key in ("lr", "momentum", "weight_decay"):
            if not group[key] >= 0:
                raise ValueError(f"SGD: invalid {key}={group[key]!r}; it must be >= 0")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(
                f"SGD: Nesterov momentum requires a momentum and zero dampening, but got "
                f"momentum={group['momentum']!r}, dampening={group['dampening']!r}; pass "
                "momentum=0.9 (say) and leave dampening at 0, or nesterov=False"
            )

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        # Python floats, so that float32 arithmetic stays float32
        lr, momentum = float(group["lr"]), float(group["momentum"])
        dampening, weight_decay = float(group["dampening"]), float(group["weight_decay"])
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = buffer = grad.copy()  # the first step: g as it is
            else:
                buffer = state["momentum_buffer"]
                buffer *= momentum
                buffer += (1 - dampening) * grad
            grad = grad + momentum * buffer if group["nesterov"] else buffer
        param -= lr * grad
