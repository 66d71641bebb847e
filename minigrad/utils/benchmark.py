"""``mg.utils.benchmark`` (PyTorch's ``torch.utils.benchmark``): ``Timer``, Python's
``timeit`` with PyTorch's interface, so a tutorial that compares two ways of computing
something (``Timer(stmt, globals=globals()).timeit(100)``) runs unchanged.

On the CPU there is nothing to synchronise, so a Timer is ``timeit.Timer`` plus a warm-up
and the block size rule of ``blocked_autorange``; what it returns is a ``Measurement``
(seconds per run: ``times``, ``mean``, ``median``).
"""

from __future__ import annotations

import timeit as _timeit
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(repr=False)
class Measurement:
    """The result of a Timer: ``raw_times`` (seconds) of blocks of ``number_per_run`` runs
    each; ``times`` are per run."""

    number_per_run: int
    raw_times: list[float]
    stmt: str = "pass"
    setup: str = "pass"
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    metadata: dict | None = field(default=None)

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    @property
    def median(self) -> float:
        return float(np.quantile(self.times, 0.5))

    @property
    def iqr(self) -> float:
        return float(np.quantile(self.times, 0.75) - np.quantile(self.times, 0.25))

    def __repr__(self) -> str:
        lines = [f"<{type(self).__module__}.Measurement object at {hex(id(self))}>"]
        lines += [text for text in (self.label, self.sub_label, self.description) if text] \
            or [self.stmt]
        if self.setup != "pass":
            lines.append(f"setup: {self.setup}")
        unit, scale = _unit(self.median)
        measurements = len(self.raw_times)
        if measurements >= 4:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit}")
        elif measurements > 1:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
        else:
            lines.append(f"  {self.median / scale:.2f} {unit}")
        per_run = "runs per measurement" if measurements > 1 else "runs "
        lines.append(f"  {measurements} measurement{'s' * (measurements > 1)}, "
                     f"{self.number_per_run} {per_run}, 1 thread")
        return "\n".join(lines)


def _unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3)):
        if seconds < scale * 1000:
            return unit, scale
    return "s", 1.0


class Timer:
    """``Timer(stmt, setup, globals=...)``: ``stmt`` (Python source, or a callable) run in
    a copy of ``globals``, after ``setup`` once. As in PyTorch, ``torch`` is defined there
    (here: minigrad)."""

    def __init__(self, stmt: str | Callable = "pass", setup: str | Callable = "pass",
                 timer: Callable[[], float] = _timeit.default_timer,
                 globals: dict[str, Any] | None = None, label: str | None = None,  # noqa: A002
                 sub_label: str | None = None, description: str | None = None) -> None:
        import minigrad

        namespace = dict(globals or {})
        namespace.setdefault("torch", minigrad)
        self._timer = _timeit.Timer(stmt, setup, timer, namespace)
        self._about = {"stmt": stmt if isinstance(stmt, str) else repr(stmt),
                       "setup": setup if isinstance(setup, str) else repr(setup),
                       "label": label, "sub_label": sub_label, "description": description}

    def _measure(self, number_per_run: int, raw_times: list[float]) -> Measurement:
        return Measurement(number_per_run, raw_times, **self._about)

    def timeit(self, number: int = 1000000) -> Measurement:
        """``stmt`` run ``number`` times, after a warm-up of a hundredth of that."""
        self._timer.timeit(max(number // 100, 2))
        return self._measure(number, [self._timer.timeit(number)])

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of runs until ``min_run_time`` seconds are spent; a block is long enough
        (at least ``min_run_time / 1000``) that reading the clock costs next to nothing."""
        number = self._block_size(min_run_time)
        times: list[float] = []
        while sum(times) < min_run_time:
            times.append(self._timer.timeit(number))
            if callback is not None:
                callback(number, times[-1])
        return self._measure(number, times)

    def _block_size(self, min_run_time: float) -> int:
        overhead = float(np.median([self._timer.timeit(0) for _ in range(5)]))
        number = 1
        while True:
            taken = self._timer.timeit(number)
            if (0 < taken and overhead / taken <= 1e-4 and taken >= min_run_time / 1000) \
                    or taken > min_run_time or number * 10 > 2147483647:
                return number
            number *= 10


__all__ = ["Measurement", "Timer"]
