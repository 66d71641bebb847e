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
                # the first step: g as it is (np.array, not grad.copy(): for a 0-d parameter
                # -grad or grad + ... is a NumPy scalar, and a scalar can't be updated in place)
                state["momentum_buffer"] = buffer = np.array(grad, dtype=param.dtype)
            else:
                buffer = state["momentum_buffer"]
                buffer *= momentum
                buffer += (1 - dampening) * grad
            grad = grad + momentum * buffer if group["nesterov"] else buffer
        param -= lr * grad


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky, 1992), PyTorch's update step for step. With
    g <- -g if maximize, g <- g + weight_decay * p, at step t = 1, 2, ...:

        p <- p * (1 - lambd * eta) - eta * g
        ax <- ax + mu * (p - ax)          (ax: the running average of p, "ax")
        eta <- lr / (1 + lambd * lr * t) ** alpha
        mu <- 1 / max(1, t - t0)          (averaging starts after t0 steps)

    ``eta`` starts at lr and ``mu`` at 1. The average ``optimizer.state[p]["ax"]`` is
    what ASGD offers at the end; ``p`` itself is the plain SGD iterate.
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-2,
                 lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def check_options(self, group: dict[str, Any]) -> None:
        for key in ("lr", "weight_decay"):
            if not group[key] >= 0:
                raise ValueError(f"ASGD: invalid {key}={group[key]!r}; it must be >= 0")

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        lr, lambd, alpha = float(group["lr"]), float(group["lambd"]), float(group["alpha"])
        weight_decay = float(group["weight_decay"])
        if not state:
            # PyTorch keeps eta and mu as float32 numbers: rounded the same, steps agree
            state.update(step=0, eta=_float32(lr), mu=1.0, ax=np.zeros_like(param))
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        step = state["step"]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        eta = float(state["eta"])
        param *= 1 - lambd * eta
        param -= eta * grad
        ax = state["ax"]
        if state["mu"] != 1:
            ax += (param - ax) * state["mu"]
        else:
            ax[...] = param
        state["eta"] = _float32(lr / ((1 + lambd * lr * step) ** alpha))
        state["mu"] = _float32(1 / max(1, step - float(group["t0"])))


def _float32(value: float) -> float:
    return float(np.float32(value))
