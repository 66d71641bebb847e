"""Devices: minigrad runs on the CPU, and says so.

Device-agnostic PyTorch code runs unchanged: ``mg.device("cpu")``, ``t.device``,
``t.to(device)``, ``device=`` on factories, ``mg.cuda.is_available()`` (False). Asking for
another device ("cuda", "mps") raises an error saying that minigrad computes with NumPy
on the CPU, and what to write instead.
"""

from __future__ import annotations

from typing import Any

DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "meta")


class device:  # noqa: N801 - PyTorch's name
    """Where a tensor lives: ``device("cpu")``, ``device("cuda", 0)``, ``device("cuda:0")``.
    Only the CPU can hold tensors; another device can be named (so that
    ``mg.device("cuda" if mg.cuda.is_available() else "cpu")`` runs) but not used."""

    __slots__ = ("type", "index")

    def __init__(self, type: Any, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        elif not isinstance(type, str):
            raise TypeError(f"device: expected a string such as 'cpu', got "
                            f"{type.__class__.__name__} {type!r}")
        elif ":" in type:
            type, _, number = type.partition(":")
            index = int(number)
        if type not in DEVICE_TYPES:
            raise RuntimeError(f"device: unknown device type {type!r}; expected one of "
                               f"{', '.join(DEVICE_TYPES)} (minigrad runs on 'cpu')")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("device objects are immutable")

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{index})"


CPU = device("cpu")


def check_device(value: Any, who: str) -> device:
    """``value`` (None, a string or a device) as a device, which must be the CPU."""
    if value is None:
        return CPU
    if isinstance(value, int) and not isinstance(value, bool):  # a CUDA ordinal, as PyTorch
        value = device("cuda", value)
    found = value if isinstance(value, device) else device(value)
    if found.type != "cpu":
        raise RuntimeError(not_on_cpu(found, who))
    return CPU


def not_on_cpu(found: Any, who: str) -> str:
    return (f"{who}: minigrad runs on the CPU only (it computes with NumPy), so it cannot "
            f"use device {str(found)!r}. Use 'cpu', or write device-agnostic code: "
            "device = 'cuda' if mg.cuda.is_available() else 'cpu' (is_available() is "
            "False here).")


class _Cuda:
    """``mg.cuda``: no CUDA here. ``is_available()`` is False; seeding seeds the CPU
    generator, so PyTorch code that seeds every device gives repeatable runs."""

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def device_count() -> int:
        return 0

    @staticmethod
    def manual_seed(seed: int) -> None:
        from .state import manual_seed

        manual_seed(seed)

    manual_seed_all = manual_seed

    @staticmethod
    def synchronize(device: Any = None) -> None:
        """Nothing to wait for: NumPy computes synchronously."""

    @staticmethod
    def empty_cache() -> None:
        """Nothing to free."""

    @staticmethod
    def is_bf16_supported() -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"mg.cuda.{name}: minigrad has no CUDA (it runs on the CPU); "
                             "only is_available(), device_count(), manual_seed(_all), "
                             "synchronize() and empty_cache() exist, for portable code")


class _Mps:
    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def is_built() -> bool:
        return False


class _Cudnn:
    """``mg.backends.cudnn.deterministic = True`` and the like are accepted and change
    nothing: NumPy on the CPU is deterministic already."""

    enabled = False
    deterministic = False
    benchmark = False

    @staticmethod
    def is_available() -> bool:
        return False


class _Backends:
    """``mg.backends.mps.is_available()`` (False), ``mg.backends.cudnn.deterministic``,
    for device-picking code."""

    mps = _Mps()
    cuda = _Cuda()
    cudnn = _Cudnn()


cuda = _Cuda()
backends = _Backends()
