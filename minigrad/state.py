"""All of minigrad's global state, in one place.

Each flag has a context manager that restores the previous value on exit, so nested
use works (``with no_grad(): with enable_grad(): ...``).

- grad mode: are new operations recorded in the graph?
- lazy mode: are new operations computed now, or deferred until ``realize()``?
- group: the name given to graph nodes made now (modules set it to their path).
- anomaly mode: check every forward and backward result for NaN/Inf.
- the random generator that every random thing in minigrad draws from (and the
  ``Generator`` class, for code that keeps its own).
- the default float dtype (``float32``).

The modes (grad, lazy, group, anomaly) are per thread, as in PyTorch: a ``no_grad()`` in
a widget's or a data loader's thread never changes what the main thread records, and a
new thread starts with the defaults. The generator, the default dtype and the clock of
in-place writes are shared by all threads (as PyTorch's are).
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from .device import check_device


class Modes:
    """One thread's modes. The engine's hot path reads them as
    ``modes = thread.modes`` once per op (one thread-local lookup), then plain slots."""

    __slots__ = ("grad_enabled", "lazy", "group", "anomaly", "module")

    def __init__(self) -> None:
        self.grad_enabled = True
        self.lazy = False
        self.group: str | None = None
        self.anomaly = False
        self.module = None  # the nn.Module whose forward is running (nn/module.py)


class _Thread(threading.local):
    """``thread.modes``: the calling thread's ``Modes``, made with the defaults the first
    time a thread asks."""

    def __init__(self) -> None:
        self.modes = Modes()


thread = _Thread()


def _per_thread(name: str) -> property:
    """``state.<name>``: the calling thread's mode (read and assigned as before)."""
    return property(lambda self: getattr(thread.modes, name),
                    lambda self, value: setattr(thread.modes, name, value),
                    doc=f"This thread's ``{name}`` (see ``Modes``).")


class _State:
    """The flags themselves. Read them as ``state.grad_enabled`` etc.; change them
    with the context managers below. The modes are the calling thread's own; the rest
    is shared by all threads."""

    __slots__ = ("generator", "last_write", "default_dtype")

    grad_enabled = _per_thread("grad_enabled")
    lazy = _per_thread("lazy")
    group = _per_thread("group")
    anomaly = _per_thread("anomaly")
    module = _per_thread("module")

    def __init__(self) -> None:
        self.generator = Generator()  # the global one: mg.manual_seed seeds it
        self.last_write = 0  # when the latest in-place write happened (function.record_write)
        self.default_dtype = np.dtype(np.float32)

    @property
    def rng(self) -> np.random.Generator:
        """The global generator's NumPy generator: what random ops draw from."""
        return self.generator.rng


class Generator:
    """A source of random numbers, as PyTorch's ``torch.Generator``: random functions
    take ``generator=`` to draw from it instead of from the global one.

        g = mg.Generator().manual_seed(42)
        mg.randn(3, generator=g)     # the same numbers every run, whatever else draws

    ``rng`` is the NumPy generator underneath (minigrad's numbers are NumPy's, so a seed
    gives other numbers than in PyTorch)."""

    def __init__(self, device: Any = "cpu") -> None:
        self.device = check_device(device, "Generator")
        self.seed()

    def manual_seed(self, seed: int) -> Generator:
        """Restart from ``seed``; returns the generator (so ``Generator().manual_seed(0)``)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"manual_seed: the seed must be an int, got "
                            f"{type(seed).__name__} {seed!r}")
        if not -2**63 <= seed < 2**64:  # PyTorch: "Overflow when unpacking long long"
            raise ValueError(
                f"manual_seed: the seed {seed} does not fit in 64 bits; give an int from "
                f"-2**63 to 2**64 - 1 (a larger one would silently wrap around to another "
                f"seed's numbers: 2**64 + 7 would repeat manual_seed(7))")
        self._initial_seed = int(seed) % 2**64  # as in PyTorch, negative seeds wrap around
        self.rng = np.random.default_rng(self._initial_seed)
        return self

    def seed(self) -> int:
        """Restart from a fresh, unpredictable seed and return it."""
        self.manual_seed(secrets.randbits(63))
        return self._initial_seed

    def initial_seed(self) -> int:
        """The seed the generator was last started from."""
        return self._initial_seed

    def get_state(self) -> dict:
        """The state to come back to with ``set_state`` (NumPy's bit generator state)."""
        return self.rng.bit_generator.state

    def set_state(self, new_state: dict) -> Generator:
        self.rng.bit_generator.state = new_state
        return self

    def __repr__(self) -> str:
        return f"<minigrad.Generator seeded with {self._initial_seed}>"


state = _State()


# --- grad mode ------------------------------------------------------------------------


def is_grad_enabled() -> bool:
    return state.grad_enabled


class set_grad_enabled(contextlib.ContextDecorator):
    """``set_grad_enabled(False)`` switches recording off; as a context manager (or a
    decorator) it restores the previous mode on exit, like PyTorch's."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, (bool, np.bool_)):
            raise TypeError(f"set_grad_enabled: mode must be True or False, got "
                            f"{type(mode).__name__} {mode!r}")
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


class inference_mode(contextlib.ContextDecorator):
    """PyTorch's faster ``no_grad`` for evaluation; here it is ``no_grad`` (with
    ``mode=False`` it changes nothing)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self.previous = state.grad_enabled
        if self.mode:
            state.grad_enabled = False

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self.previous

    def _recreate_cm(self) -> inference_mode:
        return inference_mode(self.mode)


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


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` switches anomaly mode on; as a context manager it
    restores the previous mode on exit (PyTorch's ``torch.autograd.set_detect_anomaly``)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.previous = state.anomaly
        state.anomaly = bool(mode) and bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        state.anomaly = self.previous


def is_anomaly_enabled() -> bool:
    return state.anomaly


# --- randomness -----------------------------------------------------------------------


def manual_seed(seed: int) -> Generator:
    """Reseed the one global generator; every random thing in minigrad draws from it
    (unless given its own ``generator=``). Returns that generator, as PyTorch does."""
    return state.generator.manual_seed(seed)


def seed() -> int:
    """Reseed the global generator unpredictably; returns the seed."""
    return state.generator.seed()


def initial_seed() -> int:
    return state.generator.initial_seed()


def rng_for(generator: Generator | None, who: str = "generator") -> np.random.Generator:
    """The NumPy generator that a random op given ``generator=`` draws from: the global
    one for ``None``, else the ``Generator``'s own."""
    if generator is None:
        return state.generator.rng
    if not isinstance(generator, Generator):
        raise TypeError(f"{who}: generator must be a minigrad Generator "
                        f"(mg.Generator().manual_seed(0)), got {type(generator).__name__}")
    return generator.rng


def get_rng_state() -> dict:
    """The global generator's state (NumPy's bit generator state, a dict)."""
    return state.generator.get_state()


def set_rng_state(rng_state: dict) -> None:
    state.generator.set_state(rng_state)
