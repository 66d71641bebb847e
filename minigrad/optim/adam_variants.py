"""Adamax, NAdam and RAdam: three variations on Adam (see adam.py), PyTorch's updates step
for step. Each keeps Adam's first moment m ("exp_avg", m <- beta1 m + (1 - beta1) g);
``maximize`` negates g and ``weight_decay`` adds weight_decay * p to it first (NAdam and
RAdam: with ``decoupled_weight_decay`` p shrinks by lr * weight_decay instead, as AdamW).

    Adamax: u <- max(beta2 u, |g| + eps)                     ("exp_inf", an infinity norm)
            p <- p - lr / (1 - beta1^t) * m / u
    NAdam:  v as Adam's ("exp_avg_sq"); Nesterov momentum with a schedule
            mu_t = beta1 (1 - 0.96^(t momentum_decay) / 2) and
            P_t = mu_1 ... mu_t ("mu_product"):
            p <- p - lr (1 - mu_t) / (1 - P_t) * g / d - lr mu_{t+1} / (1 - P_t mu_{t+1}) * m / d,
            d = sqrt(v / (1 - beta2^t)) + eps
    RAdam:  v as Adam's; rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t) with
            rho_inf = 2 / (1 - beta2) - 1.
            While rho_t <= 5 the variance estimate is unreliable: p <- p - lr m / (1 - beta1^t)
            (momentum SGD); after, Adam's step times the rectification
            r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t)).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tensor import Tensor
from .adam import Adam
from .optimizer import Optimizer, kernel_options, lerp_


def _gradient(param: np.ndarray, grad: np.ndarray, group: dict[str, Any],
              lr: float) -> np.ndarray:
    """g after ``maximize`` and weight decay (decoupled: p itself shrinks, in place)."""
    if group["maximize"]:
        grad = -grad
    weight_decay = float(group["weight_decay"])
    if weight_decay != 0:
        if group.get("decoupled_weight_decay"):
            param *= 1 - lr * weight_decay
        else:
            grad = grad + weight_decay * param
    return grad


def _moments(state: dict[str, Any], param: np.ndarray, second: str) -> None:
    if not state:
        state["step"] = 0
        state["exp_avg"] = np.zeros_like(param)
        state[second] = np.zeros_like(param)


class Adamax(Optimizer):
    """Adam with the infinity norm in place of the second moment (Kingma & Ba, 2014)."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 capturable: bool = False) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize}
        super().__init__(params, defaults)

    check_options = Adam.check_options

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(beta) for beta in group["betas"])
        _moments(state, param, "exp_inf")
        state["step"] += 1
        grad = _gradient(param, grad, group, lr)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        lerp_(exp_avg, grad, 1 - beta1)
        exp_inf *= beta2
        np.maximum(exp_inf, np.abs(grad) + eps, out=exp_inf)
        clr = lr / (1 - beta1 ** state["step"])
        param -= clr * (exp_avg / exp_inf)


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat, 2016)."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def check_options(self, group: dict[str, Any]) -> None:
        Adam.check_options(self, group)
        if not group["momentum_decay"] >= 0:
            raise ValueError(f"NAdam: invalid momentum_decay={group['momentum_decay']!r}; "
                             "it must be >= 0")

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(beta) for beta in group["betas"])
        momentum_decay = float(group["momentum_decay"])
        if not state:
            _moments(state, param, "exp_avg_sq")
            state["mu_product"] = 1.0
        state["step"] += 1
        step = state["step"]
        grad = _gradient(param, grad, group, lr)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # PyTorch keeps the product in float32: rounded the same way, the steps agree
        state["mu_product"] = mu_product = float(np.float32(state["mu_product"]) * np.float32(mu))
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        denominator = np.sqrt(exp_avg_sq / (1 - beta2 ** step))
        denominator += eps
        param += (-lr * (1.0 - mu) / (1.0 - mu_product)) * (grad / denominator)
        param += ((-lr * mu_next) / (1.0 - mu_product * mu_next)) * (exp_avg / denominator)


class RAdam(Optimizer):
    """Adam with a rectified (warm-up-free) adaptive learning rate (Liu et al., 2019)."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    check_options = Adam.check_options

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(beta) for beta in group["betas"])
        _moments(state, param, "exp_avg_sq")
        state["step"] += 1
        step = state["step"]
        grad = _gradient(param, grad, group, lr)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = np.sqrt(exp_avg_sq)
            adaptive += eps
            param -= corrected * lr * (bias_correction2 ** 0.5 / adaptive) * rect
        else:
            param -= corrected * lr
