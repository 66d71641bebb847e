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


class MemoryFormat:
    """PyTorch's memory formats and layout (``torch.contiguous_format``,
    ``torch.channels_last``, ``torch.preserve_format``, ``torch.strided``): how a tensor's
    elements are ordered in memory. minigrad's arrays are NumPy's, strided, in row order
    unless a view made them otherwise; a format changes strides, never values, so
    ``contiguous(memory_format=...)`` and ``to(memory_format=...)`` accept each and keep
    row order."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


contiguous_format = MemoryFormat("contiguous_format")
channels_last = MemoryFormat("channels_last")
preserve_format = MemoryFormat("preserve_format")
strided = MemoryFormat("strided")  # (a layout: the only one, dense and strided)
MEMORY_FORMATS = (contiguous_format, channels_last, preserve_format)


def check_memory_format(value: Any, who: str) -> None:
    if value is not None and value not in MEMORY_FORMATS:
        raise TypeError(f"{who}: memory_format must be one of torch.contiguous_format, "
                        f"torch.channels_last, torch.preserve_format, got {value!r}")
