"""Learning-rate schedules: change each param group's ``lr`` as training goes on.

    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    scheduler = mg.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train_one_epoch(model, optimizer)   # optimizer.step() inside
        scheduler.step()                    # after optimizer.step(), as in PyTorch

A scheduler counts its ``step()`` calls in ``last_epoch``. Making it sets ``last_epoch = 0``
and the lr of step 0; each ``step()`` adds one and sets the lr of the new step. The
group's starting lr ``base_lr`` is saved in the group as ``initial_lr``.

As in PyTorch, most schedules are *chainable*: ``get_lr`` changes the group's *current*
lr by a factor (StepLR: times gamma every step_size steps) rather than computing it from
base_lr. So two schedulers on one optimizer multiply their effects (ChainedScheduler,
or stepping both), and an lr changed by hand carries on. Each also has its closed form
(``_get_closed_form_lr``), used by the deprecated ``step(epoch)``.
Making a scheduler with ``last_epoch=n`` (resuming) needs ``initial_lr`` in every group,
which the optimizer's state_dict brings back.
"""

from __future__ import annotations

import bisect
import math
import types
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

from .optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the "
    "new chainable form, where available (the same warning as PyTorch's).")


class LRScheduler:
    """Base class: a subclass gives ``get_lr()``, the lr of each group at ``last_epoch``
    (from the groups' current lrs, or from ``base_lrs``)."""

    _is_initial = False  # True during the step that __init__ makes
    _get_lr_called_within_step = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(type(self).__name__, optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])  # kept if a scheduler set it before
        else:
            _check_resumable(type(self).__name__, optimizer, last_epoch)
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The step that making the scheduler takes (to step 0, or last_epoch + 1)."""
        self._step_count = 0  # (as PyTorch's: the step below is number 1)
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

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

    def step(self, epoch: int | None = None) -> None:
        """Move to the next step and set every group's lr. (``step(epoch)`` jumps to that
        step with the closed form: deprecated in PyTorch, kept for old code.)"""
        self._count_step()
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", self.get_lr)
                values = closed_form()
        finally:
            self._get_lr_called_within_step = False
        self._set_lrs(values)

    def _set_lrs(self, values: list[float]) -> None:
        groups = self.optimizer.param_groups
        if len(values) != len(groups):  # zip would leave the new group's lr unscheduled
            raise ValueError(
                f"{type(self).__name__}.step(): the optimizer has {len(groups)} param groups "
                f"but the scheduler computed {len(values)} lrs (one per group it was made "
                "with): was a group added with add_param_group after making the scheduler? "
                "Make the scheduler after adding every group")
        for group, lr in zip(groups, values):
            group["lr"] = lr
        self._last_lr = self._current_lrs()

    def _warn_if_called_by_hand(self) -> None:
        """``get_lr()`` is the next step's lr, computed from the current one: called
        outside ``step()`` it is not the current lr (the same warning as PyTorch's)."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please "
                          "use `get_last_lr()`.", UserWarning, stacklevel=3)

    def _current_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

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


class _LRScheduler(LRScheduler):
    """PyTorch's old name for LRScheduler, still found in tutorials' own schedulers."""


def _check_optimizer(scheduler: str, optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{scheduler}: the first argument must be an optimizer (such as "
                        f"mg.optim.SGD(...)), but got {type(optimizer).__name__}")


def _check_resumable(scheduler: str, optimizer: Optimizer, last_epoch: int) -> None:
    for index, group in enumerate(optimizer.param_groups):
        if "initial_lr" not in group:
            raise KeyError(
                f"{scheduler}(last_epoch={last_epoch}): param group {index} has no "
                "'initial_lr', which resuming a schedule needs. Load the optimizer's "
                "state_dict (saved while a scheduler ran) before making the scheduler, or "
                "use last_epoch=-1 for a fresh run")


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value  # no list shared with a saved dict


def _lambdas(scheduler: str, optimizer: Optimizer, lr_lambda: Any) -> list[Callable]:
    """One function per param group (LambdaLR, MultiplicativeLR)."""
    _check_optimizer(scheduler, optimizer)
    groups = len(optimizer.param_groups)
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != groups:
            raise ValueError(f"{scheduler}: Expected {groups} lr_lambdas (one per param "
                             f"group), but got {len(lr_lambda)}")
        functions = list(lr_lambda)
    else:
        functions = [lr_lambda] * groups
    for function in functions:
        if not callable(function):
            raise TypeError(f"{scheduler}: lr_lambda must be a function of the step, such as "
                            f"lambda t: 0.95 ** t, but got {type(function).__name__}")
    return functions


class _SavesLambdas:
    """state_dict for LambdaLR and MultiplicativeLR, as PyTorch's: functions are not saved
    (None); callable objects save their ``__dict__``."""

    def state_dict(self) -> dict[str, Any]:
        state = {key: _copy(value) for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(function, types.FunctionType)
                               else dict(function.__dict__) for function in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        saved_lambdas = state_dict.pop("lr_lambdas", [])
        LRScheduler.load_state_dict(self, state_dict)
        for function, saved in zip(self.lr_lambdas, saved_lambdas):
            if saved is not None:
                function.__dict__.update(saved)


class StepLR(LRScheduler):
    """``lr = base_lr * gamma ** (t // step_size)``: multiplied by ``gamma`` every
    ``step_size`` steps (at each t > 0 with t % step_size == 0)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        # a float is accepted, as PyTorch does (lr *= gamma when t % step_size == 0)
        if isinstance(step_size, bool) or not (isinstance(step_size, (int, float))
                                               and step_size > 0):
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r} "
                             "(a float such as 1.0 is accepted too, as in PyTorch)")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``: half a
    cosine from ``base_lr`` down to ``eta_min`` at step ``T_max``, then back up (periodic,
    as in PyTorch). Chainable: each step scales ``lr - eta_min`` by the ratio of two
    consecutive cosine factors."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        # a float is accepted, as PyTorch does (T_max = total_steps / 2, say)
        if isinstance(T_max, bool) or not (isinstance(T_max, (int, float)) and T_max > 0):
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive int, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        t, period, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and t > 0:  # resumed at last_epoch = t: the closed form
            return self._get_closed_form_lr()
        if (t - 1 - period) % (2 * period) == 0:  # leaving the bottom (the ratio is 0 / 0)
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / period)) / 2
                    for lr, base_lr in zip(self._current_lrs(), self.base_lrs)]
        ratio = ((1 + math.cos(math.pi * t / period))
                 / (1 + math.cos(math.pi * (t - 1) / period)))
        return [ratio * (lr - eta_min) + eta_min for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        cosine = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * cosine for base_lr in self.base_lrs]


class LambdaLR(_SavesLambdas, LRScheduler):
    """``lr = base_lr * lr_lambda(t)``, with one function for all groups or one per group."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.lr_lambdas = _lambdas("LambdaLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        return [base_lr * function(self.last_epoch)
                for function, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_SavesLambdas, LRScheduler):
    """``lr <- lr * lr_lambda(t)`` at every step after the first: the factors multiply."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.lr_lambdas = _lambdas("MultiplicativeLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        if self._is_initial:
            return self._current_lrs()
        return [lr * function(self.last_epoch)
                for function, lr in zip(self.lr_lambdas, self._current_lrs())]


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
    Not chainable: each step sets the lr from this formula.
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, decay_steps: int,
                 min_lr: float = 0.0, last_epoch: int = -1) -> None:
        for key, value in (("warmup_steps", warmup_steps), ("decay_steps", decay_steps)):
            if not (isinstance(value, int) and value >= 0):
                raise ValueError(f"WarmupCosineLR: {key} must be an int >= 0, got {value!r}")
        if not min_lr >= 0:
            raise ValueError(f"WarmupCosineLR: min_lr must be >= 0, got {min_lr!r}")
        self.warmup_steps = warmup_steps
        self.decay_steps = decay_steps
        self.min_lr = min_lr
        super().__init__(optimizer, last_epoch)

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
# MultiStepLR, ConstantLR, ExponentialLR, LinearLR and PolynomialLR are chainable factors,
# like StepLR. CosineAnnealingWarmRestarts, OneCycleLR and CyclicLR set the lr from their
# formula (and keep a little state of their own), SequentialLR hands the steps to one
# scheduler after another, ChainedScheduler steps several at once, and ReduceLROnPlateau
# watches a metric instead of counting steps.


class MultiStepLR(LRScheduler):
    """``lr = base_lr * gamma ** (number of milestones <= t)``: multiplied by ``gamma`` at
    each milestone (a milestone listed twice counts twice, as in PyTorch)."""

    def __init__(self, optimizer: Optimizer, milestones: list[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        passed = bisect.bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma ** passed for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """``lr = base_lr * factor`` for the first ``total_iters`` steps, then ``base_lr``."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1], got {factor!r}")
        if factor == 0:  # PyTorch accepts it, then divides by it at step total_iters
            raise ValueError("ConstantLR: factor=0 can't be undone at total_iters (the lr "
                             "is divided by the factor there); use a tiny factor such as "
                             "1e-8")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current_lrs()]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [lr * (1.0 / self.factor) for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        factor = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base_lr * factor for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """``lr = base_lr * gamma ** t``: multiplied by ``gamma`` every step."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """``lr = base_lr * factor``, the factor going in a straight line from
    ``start_factor`` to ``end_factor`` over ``total_iters`` steps, then staying (a
    linear warm-up with the defaults). Chainable: step t multiplies the lr by
    factor(t) / factor(t - 1). (With total_iters=0 that never happens: the lr stays at
    base_lr * start_factor, as in PyTorch.)"""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor!r}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor!r}")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        start, end, t = self.start_factor, self.end_factor, self.last_epoch
        if t == 0:
            return [lr * start for lr in self._current_lrs()]
        if self._is_initial or t > self.total_iters:
            return self._current_lrs()
        ratio = 1.0 + (end - start) / (self.total_iters * start + (t - 1) * (end - start))
        return [lr * ratio for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * progress
        return [base_lr * factor for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = base_lr * (1 - min(t, total_iters) / total_iters) ** power``: a polynomial
    decay to 0 at step ``total_iters``."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        t, total = self.last_epoch, self.total_iters
        if self._is_initial or t > total:
            return self._current_lrs()
        decay = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power
        return [lr * decay for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * left ** self.power for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``base_lr`` to ``eta_min`` over ``T_i`` steps, then a restart
    at ``base_lr`` (SGDR, Loshchilov & Hutter, 2016); the first cycle is ``T_0`` steps
    long and each next one ``T_mult`` times longer:
    ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``.
    ``step(epoch)`` with a (fractional) epoch also works, as in PyTorch."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if not (isinstance(T_0, int) and T_0 > 0):
            raise ValueError(f"CosineAnnealingWarmRestarts: T_0 must be a positive int, got "
                             f"{T_0!r}")
        if not (isinstance(T_mult, int) and T_mult >= 1):
            raise ValueError(f"CosineAnnealingWarmRestarts: T_mult must be an int >= 1, got "
                             f"{T_mult!r}")
        self.T_0 = self.T_i = T_0
        self.T_mult, self.eta_min = T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

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
                self.T_cur %= self.T_i
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
        self._set_lrs(self.get_lr())


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
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
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
        max_lrs = _per_group("max_lr", max_lr, groups)
        if last_epoch == -1:  # (resuming: the groups have them from the optimizer's state)
            for group, top in zip(groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _check_momentum("OneCycleLR", optimizer)
            self.use_beta1 = "betas" in optimizer.defaults
            highs = _per_group("max_momentum", max_momentum, groups)
            lows = _per_group("base_momentum", base_momentum, groups)
            if last_epoch == -1:
                for group, high, low in zip(groups, highs, lows):
                    _set_momentum(group, high, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

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
                        momentum = self._anneal(group[m_from], group[m_to], pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = end_step
        return lrs


def _set_momentum(group: dict[str, Any], momentum: float, use_beta1: bool) -> None:
    """SGD's momentum, or Adam's beta1 (``betas[0]``), of a param group."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _check_momentum(scheduler: str, optimizer: Optimizer) -> None:
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(f"{scheduler}: cycle_momentum=True needs an optimizer with momentum "
                         "or betas (SGD, Adam, ...); pass cycle_momentum=False")


def _per_group(name: str, value: Any, groups: list) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"expected {len(groups)} values for {name} (one per param "
                             f"group), got {len(value)}")
        return list(value)
    return [value] * len(groups)


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, 2017), stepped after every batch: the lr goes from
    ``base_lr`` up to ``max_lr`` in ``step_size_up`` steps and back in ``step_size_down``;
    the height of cycle c (or at step t) is scaled by ``scale_fn``: 1 ("triangular"),
    1 / 2^(c - 1) ("triangular2"), gamma^t ("exp_range"). Momentum cycles the other way."""

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float = 0.8, max_momentum: float = 0.9,
                 last_epoch: int = -1) -> None:
        _check_optimizer("CyclicLR", optimizer)
        groups = optimizer.param_groups
        base_lrs = _per_group("base_lr", base_lr, groups)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", max_lr, groups)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        if not (step_size_up > 0 and step_size_down >= 0):
            raise ValueError(f"CyclicLR: step_size_up must be > 0 and step_size_down >= 0, "
                             f"got {step_size_up} and {step_size_down}")
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"CyclicLR: mode must be 'triangular', 'triangular2' or "
                             f"'exp_range' (or give scale_fn), got {mode!r}")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        if scale_fn is None:  # the mode decides what the scale is a function of
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _check_momentum("CyclicLR", optimizer)
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", base_momentum, groups)
            self.max_momentums = _per_group("max_momentum", max_momentum, groups)
            if last_epoch == -1:
                for high, low, group in zip(self.max_momentums, self.base_momentums, groups):
                    _set_momentum(group, high, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_hand()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # where in the cycle, in [0, 1)
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                momentum = high - (high - low) * scale_factor * scale
                _set_momentum(group, momentum, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """As PyTorch's: a custom scale_fn is not saved (None), a callable object's
        ``__dict__`` is."""
        state = super().state_dict()
        function = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (None if function is None
                                     or isinstance(function, types.FunctionType)
                                     else dict(function.__dict__))
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        saved = state_dict.pop("_scale_fn_custom", None)
        super().load_state_dict(state_dict)
        if saved is not None:
            self._scale_fn_custom.__dict__.update(saved)


def _check_schedulers(name: str, optimizer: Optimizer, schedulers: list) -> None:
    if len(schedulers) < 1:
        raise ValueError(f"{name} expects at least one scheduler")
    for index, scheduler in enumerate(schedulers):
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support ReduceLROnPlateau (index "
                             f"{index}): its step() needs the metric")
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name}: schedulers[{index}] is a {type(scheduler).__name__}, "
                            "not a learning-rate scheduler (it has no optimizer)")
        if scheduler.optimizer is not optimizer:
            raise ValueError(f"{name}: the scheduler at index {index} "
                             f"({type(scheduler).__name__}) belongs to another optimizer")


class _SavesSchedulers:
    """state_dict for SequentialLR and ChainedScheduler: their schedulers' too."""

    def state_dict(self) -> dict[str, Any]:
        state = {key: _copy(value) for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        for scheduler, saved in zip(self._schedulers, state_dict.pop("_schedulers")):
            scheduler.load_state_dict(saved)
        LRScheduler.load_state_dict(self, state_dict)


class SequentialLR(_SavesSchedulers, LRScheduler):
    """Several schedulers one after another: ``schedulers[i]`` runs from
    ``milestones[i - 1]`` on, restarted at its step 0 there (with its closed form, as in
    PyTorch): a warm-up, then a decay."""

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int], last_epoch: int = -1) -> None:
        _check_optimizer("SequentialLR", optimizer)
        _check_schedulers("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR expects one milestone fewer than schedulers, got "
                             f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        self.optimizer = optimizer
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:  # undo what making the schedulers did
            group["lr"] = group["initial_lr"]
        _undo_steps(self)
        first = self._schedulers[bisect.bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        index = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)  # its step 0, now
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _undo_steps(scheduler: Any) -> None:
    """One step back for every scheduler inside (SequentialLR's, nested ones too)."""
    if hasattr(scheduler, "_schedulers"):
        for inner in scheduler._schedulers:
            _undo_steps(inner)
    elif hasattr(scheduler, "last_epoch"):
        scheduler.last_epoch -= 1


class ChainedScheduler(_SavesSchedulers, LRScheduler):
    """Steps several schedulers at once; as they are chainable, their factors multiply
    (say ExponentialLR's decay with a ConstantLR warm-up)."""

    def __init__(self, schedulers: list[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler")
        optimizer = optimizer or getattr(schedulers[0], "optimizer", None)
        _check_schedulers("ChainedScheduler", optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = self._current_lrs()

    def step(self) -> None:  # type: ignore[override]
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._current_lrs()


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
        # a single min_lr also covers groups added later (a list: one per group, fixed)
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else min_lr
        self.min_lrs = _per_group("min_lr", min_lr, optimizer.param_groups)
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.last_epoch = 0
        self._last_lr = self._current_lrs()
        self.best = math.inf if mode == "min" else -math.inf
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def _is_better(self, value: float, best: float) -> bool:
        if self.mode == "min":
            return value < (best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                            else best - self.threshold)
        return value > (best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                        else best + self.threshold)

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        try:
            current = float(metrics)
        except (TypeError, ValueError) as error:
            raise type(error)(f"ReduceLROnPlateau.step(metrics): metrics must be one number "
                              f"(the validation loss, say), got {type(metrics).__name__}: "
                              f"{error}") from None
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current_lrs()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):  # a param group was added since
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"ReduceLROnPlateau: the optimizer has {len(groups)} param groups now "
                    f"but min_lr lists {len(self.min_lrs)} (a group was added after making "
                    "the scheduler); set scheduler.min_lrs to one value per group")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR",
           "MultiStepLR", "MultiplicativeLR", "OneCycleLR", "PolynomialLR",
           "ReduceLROnPlateau", "SequentialLR", "StepLR", "WarmupCosineLR"]
