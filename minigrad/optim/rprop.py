"""Rprop: resilient backpropagation (Riedmiller & Braun, 1993), PyTorch's update step for
step. Only the *sign* of the gradient is used; each coordinate has its own step size,
which grows while the gradient keeps its sign and shrinks when it flips:

    g <- -g                                        if maximize
    s = sign(g * g_prev)
    step_size <- clip(step_size * (etaplus if s > 0, etaminus if s < 0, 1 if s == 0),
                      step_size_min, step_size_max)
    g <- 0 where s < 0                              (after a flip: no move, and no flip next)
    p <- p - sign(g) * step_size
    g_prev <- g

``step_size`` starts at lr ("step_size"), ``g_prev`` at zero ("prev").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, kernel_options


class Rprop(Optimizer):
    """Rprop: a step of ``step_size`` against the sign of each gradient coordinate."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        kernel_options(type(self).__name__, differentiable=differentiable)
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "maximize": maximize}
        super().__init__(params, defaults)

    def check_options(self, group: dict[str, Any]) -> None:
        if not group["lr"] >= 0:
            raise ValueError(f"Rprop: invalid lr={group['lr']!r}; it must be >= 0")
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(f"Rprop: invalid etas={tuple(group['etas'])!r}; they must be "
                             "(etaminus, etaplus) with 0 < etaminus < 1 < etaplus, such as "
                             "(0.5, 1.2)")

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        etaminus, etaplus = (float(eta) for eta in group["etas"])
        step_size_min, step_size_max = (float(size) for size in group["step_sizes"])
        if not state:
            state["step"] = 0
            state["prev"] = np.zeros_like(param)
            state["step_size"] = np.full_like(param, float(group["lr"]))
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        sign = np.sign(grad * state["prev"])
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0))
        step_size = state["step_size"]
        step_size *= factor
        np.clip(step_size, step_size_min, step_size_max, out=step_size)
        grad = np.where(sign < 0, 0.0, grad).astype(param.dtype)  # a flip: wait one step
        param -= np.sign(grad) * step_size
        state["prev"][...] = grad
