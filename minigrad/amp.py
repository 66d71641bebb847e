"""``mg.amp``: PyTorch's mixed-precision names, for programs that turn it off on the CPU.

minigrad computes in the dtype it is given (float32, or float64 for gradcheck); it has no
lower-precision kernels to switch to. So ``autocast(..., enabled=False)`` and
``GradScaler(enabled=False)`` (what teaching code passes when there is no GPU) run as in
PyTorch, doing nothing; ``autocast`` enabled says so at once, and an enabled
``GradScaler`` disables itself with a warning, as PyTorch's does without CUDA.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

ADVICE = ("minigrad has no mixed precision (it computes in float32, or float64); pass "
          "enabled=False, or use contextlib.nullcontext() on the CPU")


class autocast:  # noqa: N801 - PyTorch's name
    """``with autocast(device_type, dtype=None, enabled=True, cache_enabled=None):``; also
    a decorator. Only ``enabled=False`` is accepted (it changes nothing)."""

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if enabled:
            raise RuntimeError(f"autocast(device_type={device_type!r}, enabled=True) is not "
                               f"supported by minigrad: {ADVICE}")
        self.device_type, self.dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        return None

    def __call__(self, function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            with self:
                return function(*args, **kwargs)
        return wrapped


class GradScaler:
    """Loss scaling for float16 training. Here there is nothing to scale: ``scale(loss)``
    is ``loss``, ``step(optimizer)`` is ``optimizer.step()``, as PyTorch's scaler does when
    disabled (and, with a warning, when enabled without CUDA)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if enabled:
            warnings.warn("GradScaler is enabled, but minigrad has no CUDA and no float16 "
                          "training: disabling (scale() returns the loss unchanged).",
                          UserWarning, stacklevel=2)
        self._enabled = False

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        return None


def is_autocast_available(device_type: str) -> bool:
    return False
