"""Learning-rate schedules: change each param group's ``lr`` as training goes on.

    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    scheduler = mg.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train_one_epoch(model, optimizer)   # optimizer.step() inside
        scheduler.step()                    # after optimizer.step(), as in PyTorch

A scheduler counts its ``step()`` calls in ``last_epoch``. Making it sets ``last_epoch = 0``
and the lr of step 0; each ``step()`` adds one and sets the lr of the new step. Each
schedule is a formula in the step number ``t`` and the group's starting lr ``base_lr``
(saved in the group as ``initial_lr``), written in ``get_lr``.

One difference from PyTorch: its StepLR and CosineAnnealingLR multiply the *current* lr
("chainable" form), so another change to ``group["lr"]`` carries on; here every lr comes
from the formula. The values are the same (to rounding) when only the scheduler sets lr.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

from .optimizer import Optimizer


class LRScheduler:
    """Base class: a subclass gives ``get_lr()``, the lr of each group at ``last_epoch``."""

    def __init__(self, optimizer: Optimizer) -> None:
        _check_optimizer(type(self).__name__, optimizer)
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])  # kept if a scheduler set it before
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = -1
        self.step()  # step 0: the lr before the first optimizer.step()

    def get_lr(self) -> list[float]:
        """The lr of every param group at step ``self.last_epoch``."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def step(self) -> None:
        """Move to the next step and set every group's lr."""
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The lrs that the last ``step()`` set, one per param group."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer (save that one with its own state_dict)."""
        return {key: _copy(value) for key, value in self.__dict__.items()
                if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the attributes that ``state_dict()`` returned."""
        self.__dict__.update({key: _copy(value) for key, value in state_dict.items()})


def _check_optimizer(scheduler: str, optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{scheduler}: the first argument must be an optimizer (such as "
                        f"mg.optim.SGD(...)), but got {type(optimizer).__name__}")


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value  # no list shared with a saved dict


class StepLR(LRScheduler):
    """``lr = base_lr * gamma ** (t // step_size)``: multiplied by ``gamma`` every
    ``step_size`` steps."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1) -> None:
        if not (isinstance(step_size, int) and step_size > 0):
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``: half a
    cosine from ``base_lr`` down to ``eta_min`` at step ``T_max``, then back up (periodic,
    as in PyTorch)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0) -> None:
        if not (isinstance(T_max, int) and T_max > 0):
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive int, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        cosine = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * cosine for base_lr in self.base_lrs]


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(t)``, with one function for all groups or one per group."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]]) -> None:
        _check_optimizer("LambdaLR", optimizer)
        groups = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != groups:
                raise ValueError(f"LambdaLR: Expected {groups} lr_lambdas (one per param "
                                 f"group), but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * groups
        for function in self.lr_lambdas:
            if not callable(function):
                raise TypeError(f"LambdaLR: lr_lambda must be a function of the step, such as "
                                f"lambda t: 0.95 ** t, but got {type(function).__name__}")
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        return [base_lr * function(self.last_epoch)
                for function, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """As PyTorch: functions are not saved (None); callable objects save their
        ``__dict__``."""
        state = {key: _copy(value) for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(function, types.FunctionType)
                               else dict(function.__dict__) for function in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        saved_lambdas = state_dict.pop("lr_lambdas", [])
        super().load_state_dict(state_dict)
        for function, saved in zip(self.lr_lambdas, saved_lambdas):
            if saved is not None:
                function.__dict__.update(saved)


class WarmupCosineLR(LRScheduler):
    """Linear warm-up, then a cosine decay to ``min_lr``, then ``min_lr`` (minigrad's own;
    PyTorch would chain LinearLR and CosineAnnealingLR). With W = ``warmup_steps`` and
    D = ``decay_steps``, at step t::

        t < W:           lr = base_lr * (t + 1) / (W + 1)
        W <= t < W + D:  lr = min_lr + (base_lr - min_lr) * (1 + cos(pi * (t - W) / D)) / 2
        t >= W + D:      lr = min_lr

    The warm-up climbs in W equal steps from base_lr / (W + 1) and reaches base_lr at
    t = W, where the cosine starts; the first step already learns (its lr is not 0).
    With W = 0 there is no warm-up; with D = 0 the lr drops to ``min_lr`` after it.
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, decay_steps: int,
                 min_lr: float = 0.0) -> None:
        for key, value in (("warmup_steps", warmup_steps), ("decay_steps", decay_steps)):
            if not (isinstance(value, int) and value >= 0):
                raise ValueError(f"WarmupCosineLR: {key} must be an int >= 0, got {value!r}")
        if not min_lr >= 0:
            raise ValueError(f"WarmupCosineLR: min_lr must be >= 0, got {min_lr!r}")
        self.warmup_steps = warmup_steps
        self.decay_steps = decay_steps
        self.min_lr = min_lr
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        t, warmup, decay = self.last_epoch, self.warmup_steps, self.decay_steps
        if t < warmup:
            return [base_lr * (t + 1) / (warmup + 1) for base_lr in self.base_lrs]
        if t >= warmup + decay:
            return [self.min_lr for _ in self.base_lrs]
        cosine = (1 + math.cos(math.pi * (t - warmup) / decay)) / 2
        return [self.min_lr + (base_lr - self.min_lr) * cosine for base_lr in self.base_lrs]
