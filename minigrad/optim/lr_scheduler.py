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

import bisect
import math
import types
import warnings
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
        self._step_count = 0  # (as PyTorch's: the step below is number 1)
        self.step()  # step 0: the lr before the first optimizer.step()

    def get_lr(self) -> list[float]:
        """The lr of every param group at step ``self.last_epoch``."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def _count_step(self) -> None:
        """Count a ``step()``; the first one after ``__init__``'s warns if the optimizer
        has not stepped yet, as in PyTorch (the first lr of the schedule is skipped)."""
        self._step_count = getattr(self, "_step_count", 0) + 1
        if self._step_count == 2 and not self.optimizer._opt_called:
            warnings.warn(
                f"{type(self).__name__}.step() was called before optimizer.step(). Call "
                "them in this order: optimizer.step() first, then scheduler.step(); "
                "otherwise the first value of the learning rate schedule is skipped (the "
                "same warning as PyTorch's).", UserWarning, stacklevel=3)

    def step(self) -> None:
        """Move to the next step and set every group's lr."""
        self._count_step()
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
        # a float is accepted, as PyTorch does (lr = base_lr * gamma ** (t // 1.0))
        if isinstance(step_size, bool) or not (isinstance(step_size, (int, float))
                                               and step_size > 0):
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r} "
                             "(a float such as 1.0 is accepted too, as in PyTorch)")
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


# --- more of PyTorch's schedules (issue 11) --------------------------------------------------
#
# MultiStepLR, ExponentialLR and LinearLR are formulas in t, like the ones above.
# CosineAnnealingWarmRestarts and OneCycleLR keep a little state of their own, SequentialLR
# hands the steps to one scheduler after another, and ReduceLROnPlateau watches a metric
# instead of counting steps.


class MultiStepLR(LRScheduler):
    """``lr = base_lr * gamma ** (number of milestones <= t)``: multiplied by ``gamma`` at
    each milestone (a milestone listed twice counts twice, as in PyTorch)."""

    def __init__(self, optimizer: Optimizer, milestones: list[int], gamma: float = 0.1) -> None:
        self.milestones = sorted(milestones)
        self.gamma = gamma
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        passed = bisect.bisect_right(self.milestones, self.last_epoch)
        return [base_lr * self.gamma ** passed for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """``lr = base_lr * gamma ** t``: multiplied by ``gamma`` every step."""

    def __init__(self, optimizer: Optimizer, gamma: float) -> None:
        self.gamma = gamma
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """``lr = base_lr * factor``, the factor going in a straight line from
    ``start_factor`` to ``end_factor`` over ``total_iters`` steps, then staying (a
    linear warm-up with the defaults)."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor!r}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor!r}")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * progress
        return [base_lr * factor for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``base_lr`` to ``eta_min`` over ``T_i`` steps, then a restart
    at ``base_lr`` (SGDR, Loshchilov & Hutter, 2016); the first cycle is ``T_0`` steps
    long and each next one ``T_mult`` times longer:
    ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``.
    ``step(epoch)`` with a (fractional) epoch also works, as in PyTorch."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,
                 eta_min: float = 0.0) -> None:
        if not (isinstance(T_0, int) and T_0 > 0):
            raise ValueError(f"CosineAnnealingWarmRestarts: T_0 must be a positive int, got "
                             f"{T_0!r}")
        if not (isinstance(T_mult, int) and T_mult >= 1):
            raise ValueError(f"CosineAnnealingWarmRestarts: T_mult must be an int >= 1, got "
                             f"{T_mult!r}")
        self.T_0 = self.T_i = T_0
        self.T_mult, self.eta_min = T_mult, eta_min
        self.T_cur = -1
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        cosine = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * cosine for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        self._count_step()
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:  # one more step of the current cycle, or a restart
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: epoch must be >= 0, got {epoch}")
        elif epoch >= self.T_0:  # which cycle the epoch falls in
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith, 2018), meant to be stepped after every batch: the lr
    climbs from ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start`` of
    ``total_steps``, then anneals to ``initial_lr / final_div_factor`` (``"cos"`` or
    ``"linear"``); momentum (or Adam's beta1) cycles the other way, between
    ``max_momentum`` and ``base_momentum``. ``three_phase``: up, back down to the
    initial lr, then down to the minimum."""

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False) -> None:
        _check_optimizer("OneCycleLR", optimizer)
        if total_steps is not None:
            if not (isinstance(total_steps, int) and total_steps > 0):
                raise ValueError(f"OneCycleLR: total_steps must be a positive int, got "
                                 f"{total_steps!r}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            for key, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if not (isinstance(value, int) and value > 0):
                    raise ValueError(f"OneCycleLR: {key} must be a positive int, got {value!r}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
        if not (isinstance(pct_start, float) and 0 <= pct_start <= 1):
            raise ValueError(f"OneCycleLR: pct_start must be a float in [0, 1], got "
                             f"{pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        up = float(pct_start * self.total_steps) - 1
        # each phase: (its last step, lr from, lr to, momentum from, momentum to)
        if three_phase:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (float(2 * pct_start * self.total_steps) - 2, "max_lr",
                            "initial_lr", "base_momentum", "max_momentum"),
                           (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                            "max_momentum")]
        else:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                            "max_momentum")]
        groups = optimizer.param_groups
        for group, top in zip(groups, _per_group("max_lr", max_lr, groups)):
            group["initial_lr"] = top / div_factor
            group["max_lr"] = top
            group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("OneCycleLR: cycle_momentum=True needs an optimizer with "
                                 "momentum or betas (SGD, Adam, ...); pass cycle_momentum="
                                 "False")
            self.use_beta1 = "betas" in optimizer.defaults
            for group, high, low in zip(groups, _per_group("max_momentum", max_momentum, groups),
                                        _per_group("base_momentum", base_momentum, groups)):
                self._set_momentum(group, high)
                group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer)

    def _set_momentum(self, group: dict[str, Any], momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times, but total_steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for index, (end_step, lr_from, lr_to, m_from, m_to) in enumerate(self.phases):
                if step <= end_step or index == len(self.phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m_from], group[m_to], pct))
                    break
                start_step = end_step
        return lrs


def _per_group(name: str, value: Any, groups: list) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"expected {len(groups)} values for {name} (one per param "
                             f"group), got {len(value)}")
        return list(value)
    return [value] * len(groups)


class SequentialLR(LRScheduler):
    """Several schedulers one after another: ``schedulers[i]`` runs from
    ``milestones[i - 1]`` on, restarted at its step 0 there (a warm-up, then a decay)."""

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int]) -> None:
        _check_optimizer("SequentialLR", optimizer)
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler")
        for index, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"SequentialLR does not support ReduceLROnPlateau (index "
                                 f"{index}): its step() needs the metric")
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise ValueError(f"SequentialLR: the scheduler at index {index} "
                                 f"({type(scheduler).__name__}) belongs to another optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR expects one milestone fewer than schedulers, got "
                             f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        self.optimizer = optimizer
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = 0
        for group in optimizer.param_groups:  # undo what making the schedulers did
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect.bisect_right(self._milestones, 0)]
        first.step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        index = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler.last_epoch = -1  # its step 0, now
        scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        state = {key: _copy(value) for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        for scheduler, saved in zip(self._schedulers, state_dict.pop("_schedulers")):
            scheduler.load_state_dict(saved)
        super().load_state_dict(state_dict)


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` once a metric has stopped improving for more than
    ``patience`` calls of ``step(metric)`` (improving: by more than ``threshold``,
    relative or absolute; ``mode="max"`` for metrics such as accuracy). After a
    reduction, ``cooldown`` calls are ignored; the lr never goes below ``min_lr``."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0,
                 eps: float = 1e-8) -> None:
        _check_optimizer("ReduceLROnPlateau", optimizer)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0, got {factor!r}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        self.optimizer = optimizer
        self.factor, self.patience, self.cooldown, self.eps = factor, patience, cooldown, eps
        self.min_lrs = _per_group("min_lr", min_lr, optimizer.param_groups)
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self.best = math.inf if mode == "min" else -math.inf
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def _is_better(self, value: float, best: float) -> bool:
        if self.mode == "min":
            return value < (best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                            else best - self.threshold)
        return value > (best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                        else best + self.threshold)

    def step(self, metrics: Any) -> None:  # type: ignore[override]
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown do not count
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                old_lr = float(group["lr"])
                new_lr = max(old_lr * self.factor, min_lr)
                if old_lr - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

__all__ = ["CosineAnnealingLR", "CosineAnnealingWarmRestarts", "ExponentialLR", "LRScheduler",
           "LambdaLR", "LinearLR", "MultiStepLR", "OneCycleLR", "ReduceLROnPlateau",
           "SequentialLR", "StepLR", "WarmupCosineLR"]
