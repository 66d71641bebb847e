"""All of minigrad's global state, in one place.

Each flag has a context manager that restores the previous value on exit, so nested
use works (``with no_grad(): with enable_grad(): ...``).

- grad mode: are new operations recorded in the graph?
- lazy mode: are new operations computed now, or deferred until ``realize()``?
- group: the name given to graph nodes made now (modules set it to their path).
- anomaly mode: check every forward and backward result for NaN/Inf.
- the random generator that every random thing in minigrad draws from.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np


class _State:
    """The flags themselves. Read them as ``state.grad_enabled`` etc.; change them
    with the context managers below."""

    __slots__ = ("grad_enabled", "lazy", "group", "anomaly", "rng", "last_write", "module")

    def __init__(self) -> None:
        self.grad_enabled = True
        self.lazy = False
        self.group: str | None = None
        self.anomaly = False
        self.rng = np.random.default_rng()
        self.last_write = 0  # when the latest in-place write happened (function.record_write)
        self.module = None  # the nn.Module whose forward is running (nn/module.py)


state = _State()


# --- grad mode ------------------------------------------------------------------------


def is_grad_enabled() -> bool:
    return state.grad_enabled


class set_grad_enabled(contextlib.ContextDecorator):
    """``set_grad_enabled(False)`` switches recording off; as a context manager (or a
    decorator) it restores the previous mode on exit, like PyTorch's."""

    def __init__(self, mode: bool) -> None:
        self.previous = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __enter__(self) -> None:
        state.grad_enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self.previous

    def __call__(self, function):
        state.grad_enabled = self.previous  # as a decorator it switches only during calls
        return super().__call__(function)

    def _recreate_cm(self) -> set_grad_enabled:
        return set_grad_enabled(self.mode)  # one per call, so recursive calls restore right


class no_grad(contextlib.ContextDecorator):
    """Operations inside are not recorded: results have no ``grad_fn``."""

    def __enter__(self) -> None:
        self.previous = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self.previous

    def _recreate_cm(self) -> no_grad:
        return no_grad()  # as a decorator: one per call, so recursive calls restore right


class enable_grad(contextlib.ContextDecorator):
    """Operations inside are recorded, even within ``no_grad``."""

    def __enter__(self) -> None:
        self.previous = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self.previous

    def _recreate_cm(self) -> enable_grad:
        return enable_grad()  # as a decorator: one per call, so recursive calls restore right


# --- lazy mode ------------------------------------------------------------------------

MODES = ("eager", "lazy")


def set_mode(mode: str) -> None:
    """``"eager"`` computes each operation at once; ``"lazy"`` records it and computes
    on ``realize()`` (or ``backward()``, ``item()``, ``numpy()``)."""
    if mode not in MODES:
        raise ValueError(
            f"set_mode: unknown mode {mode!r}; expected one of {', '.join(map(repr, MODES))}"
        )
    state.lazy = mode == "lazy"


def is_lazy() -> bool:
    return state.lazy


@contextlib.contextmanager
def lazy(enabled: bool = True) -> Iterator[None]:
    """Inside, operations build the graph without computing; shapes are known at once."""
    previous = state.lazy
    state.lazy = bool(enabled)
    try:
        yield
    finally:
        state.lazy = previous


# --- groups ---------------------------------------------------------------------------


@contextlib.contextmanager
def group(name: str) -> Iterator[str]:
    """Graph nodes made inside belong to group ``name``. Groups nest with dots:
    ``group("encoder")`` inside ``group("model")`` is ``"model.encoder"``."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"group: the name must be a non-empty string, got {name!r}")
    previous = state.group
    state.group = name if previous is None else f"{previous}.{name}"
    try:
        yield state.group
    finally:
        state.group = previous


def current_group() -> str | None:
    return state.group


# --- anomaly mode ---------------------------------------------------------------------


@contextlib.contextmanager
def detect_anomaly(check_nan: bool = True) -> Iterator[None]:
    """The first NaN or Inf produced inside, in forward or backward, raises an error
    naming the Function (and its group and label) that produced it."""
    previous = state.anomaly
    state.anomaly = bool(check_nan)
    try:
        yield
    finally:
        state.anomaly = previous


def is_anomaly_enabled() -> bool:
    return state.anomaly


# --- randomness -----------------------------------------------------------------------


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed the one global generator; every random thing in minigrad draws from it."""
    state.rng = np.random.default_rng(seed)
    return state.rng


def default_generator() -> np.random.Generator:
    return state.rng


def get_rng_state() -> dict:
    return state.rng.bit_generator.state


def set_rng_state(rng_state: dict) -> None:
    state.rng.bit_generator.state = rng_state
