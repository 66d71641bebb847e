"""RMSprop, Adagrad and Adadelta: each coordinate's step scaled by a running measure of
its own past gradients, so steep and flat directions move at similar speeds.

For each parameter p with gradient g (PyTorch's updates, step for step; ``maximize``
negates g and ``weight_decay`` adds weight_decay * p to it first, in all three):

    RMSprop:  v <- alpha v + (1 - alpha) g^2                        ("square_avg")
              avg <- sqrt(v) + eps   (centered: sqrt(v - m^2) + eps, with
                                      m <- alpha m + (1 - alpha) g   "grad_avg")
              p <- p - lr g / avg    (momentum: b <- momentum b + g / avg, p <- p - lr b)
    Adagrad:  s <- s + g^2                                          ("sum")
              p <- p - lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)
    Adadelta: v <- rho v + (1 - rho) g^2                            ("square_avg")
              delta = sqrt(u + eps) / sqrt(v + eps) * g
              u <- rho u + (1 - rho) delta^2                        ("acc_delta")
              p <- p - lr delta
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, kernel_options, lerp_


def _check_non_negative(name: str, group: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if not group[key] >= 0:
            raise ValueError(f"{name}: invalid {key}={group[key]!r}; it must be >= 0")


def _gradient(param: np.ndarray, grad: np.ndarray, group: dict[str, Any]) -> np.ndarray:
    """g, negated if ``maximize``, plus the L2 penalty weight_decay * p (a new array when
    changed: the parameter's own grad is never written)."""
    if group["maximize"]:
        grad = -grad
    weight_decay = float(group["weight_decay"])
    if weight_decay != 0:
        grad = grad + weight_decay * param
    return grad


class RMSprop(Optimizer):
    """RMSprop (Hinton, 2012): divide by a running root mean square of the gradient."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-2,
                 alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, *,
                 maximize: bool = False,
                 capturable: bool = False, foreach: bool | None = None,
                 differentiable: bool = False) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
                    "momentum": momentum, "centered": centered, "maximize": maximize}
        super().__init__(params, defaults)

    def check_options(self, group: dict[str, Any]) -> None:
        _check_non_negative("RMSprop", group, ("lr", "alpha", "eps", "weight_decay",
                                               "momentum"))

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        lr, alpha, eps = float(group["lr"]), float(group["alpha"]), float(group["eps"])
        momentum = float(group["momentum"])
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(param)
            if momentum > 0:
                state["momentum_buffer"] = np.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        state["step"] += 1
        grad = _gradient(param, grad, group)
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"]
            lerp_(grad_avg, grad, 1 - alpha)
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += eps
        if momentum > 0:
            buffer = state["momentum_buffer"]
            buffer *= momentum
            buffer += grad / avg
            param -= lr * buffer
        else:
            param -= lr * (grad / avg)


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011): divide by the root of the sum of all past squared
    gradients, so each coordinate's steps shrink as it accumulates gradient."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-2,
                 lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, *,
                 maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "eps": eps,
                    "maximize": maximize}
        super().__init__(params, defaults)

    def check_options(self, group: dict[str, Any]) -> None:
        _check_non_negative("Adagrad", group, ("lr", "lr_decay", "weight_decay",
                                               "initial_accumulator_value", "eps"))

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        lr, lr_decay, eps = float(group["lr"]), float(group["lr_decay"]), float(group["eps"])
        if not state:
            state["step"] = 0
            state["sum"] = np.full_like(param, group["initial_accumulator_value"])
        state["step"] += 1
        grad = _gradient(param, grad, group)
        clr = lr / (1 + (state["step"] - 1) * lr_decay)
        state["sum"] += grad * grad
        std = np.sqrt(state["sum"])
        std += eps
        param -= clr * (grad / std)


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012): the step's size comes from a running average of past
    steps, so ``lr`` (1.0 by default) only scales it."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1.0,
                 rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0, *,
                 maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize}
        super().__init__(params, defaults)

    def check_options(self, group: dict[str, Any]) -> None:
        _check_non_negative("Adadelta", group, ("lr", "eps", "weight_decay"))
        if not 0 <= group["rho"] <= 1:
            raise ValueError(f"Adadelta: invalid rho={group['rho']!r}; it must be in [0, 1]")

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        lr, rho, eps = float(group["lr"]), float(group["rho"]), float(group["eps"])
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(param)
            state["acc_delta"] = np.zeros_like(param)
        state["step"] += 1
        grad = _gradient(param, grad, group)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        delta = np.sqrt(acc_delta + eps)
        delta /= np.sqrt(square_avg + eps)
        delta *= grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        param -= lr * delta
