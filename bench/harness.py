"""Timing and memory measurement shared by the benchmark cases.

Each case gives one *step* function per contender (minigrad, hand-written NumPy,
PyTorch). ``time_steps`` runs them interleaved: every round times each contender for a
batch of steps, so a slow moment of the machine hits all of them alike, and the figure
reported is the median over rounds of the time per step.
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable


def _calibrate(step: Callable[[], object], budget: float) -> int:
    """How many steps fit in ``budget`` seconds (at least one)."""
    start = time.perf_counter()
    step()
    once = time.perf_counter() - start
    return max(1, int(budget / max(once, 1e-9)))


def time_steps(steps: dict[str, Callable[[], object]], rounds: int = 7,
               round_seconds: float = 0.25, warmup: int = 2) -> dict[str, float]:
    """Median seconds per step for each contender, measured in interleaved rounds."""
    for step in steps.values():
        for _ in range(warmup):
            step()
    batch = {name: _calibrate(step, round_seconds) for name, step in steps.items()}
    samples: dict[str, list[float]] = {name: [] for name in steps}
    gc_was_enabled = gc.isenabled()
    try:
        for _ in range(rounds):
            for name, step in steps.items():
                gc.collect()
                gc.disable()  # a collection in the middle of one contender's round is noise
                start = time.perf_counter()
                for _ in range(batch[name]):
                    step()
                samples[name].append((time.perf_counter() - start) / batch[name])
                gc.enable()
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}


def peak_memory(step: Callable[[], object]) -> int:
    """Peak bytes allocated above what was allocated before, while ``step`` runs.

    NumPy reports its array buffers to ``tracemalloc``, so this counts the arrays a
    forward and backward pass create (activations, saved tensors, gradients)."""
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before
