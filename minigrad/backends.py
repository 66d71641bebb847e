"""``mg.cuda`` and ``mg.backends``: PyTorch's device modules, for device-picking code. There
is no CUDA or MPS here (device.py says why); seeding CUDA seeds the CPU generator.
"""

from __future__ import annotations

from typing import Any

import sys
import types

from . import amp as _amp
from .state import manual_seed

# torch.cuda.amp: the mixed-precision names under their older CUDA path (minigrad/amp.py)
_cuda_amp = types.SimpleNamespace(GradScaler=_amp.GradScaler, autocast=_amp.autocast)


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
        manual_seed(seed)

    manual_seed_all = manual_seed
    amp = _cuda_amp

    @staticmethod
    def synchronize(device: Any = None) -> None:
        """Nothing to wait for: NumPy computes synchronously."""

    @staticmethod
    def empty_cache() -> None:
        """Nothing to free."""

    @staticmethod
    def is_bf16_supported() -> bool:
        return False

    # memory statistics: nothing allocated on a GPU (what PyTorch answers without CUDA)
    @staticmethod
    def memory_allocated(device: Any = None) -> int:
        return 0

    max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"torch.cuda.{name} is not supported by minigrad: there is no "
                             "CUDA (it runs on the CPU); only is_available(), device_count(), "
                             "manual_seed(_all), synchronize(), empty_cache() and the memory "
                             "statistics (0) exist, for portable code")


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
    allow_tf32 = False

    @staticmethod
    def is_available() -> bool:
        return False


class _Matmul:
    """``mg.backends.cuda.matmul.allow_tf32 = True``: accepted, changes nothing (NumPy
    multiplies float32 in float32)."""

    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = False
    allow_bf16_reduced_precision_reduction = False


class _BackendsCuda:
    """``torch.backends.cuda``: the settings programs write before they train on a GPU."""

    matmul = _Matmul()

    @staticmethod
    def is_built() -> bool:
        return False

    @staticmethod
    def enable_flash_sdp(enabled: bool) -> None:
        """Nothing to enable: attention runs on NumPy."""

    enable_mem_efficient_sdp = enable_math_sdp = enable_flash_sdp


class _Backends:
    """``mg.backends.mps.is_available()`` (False), ``mg.backends.cudnn.deterministic``,
    for device-picking code."""

    mps = _Mps()
    cuda = _BackendsCuda()
    cudnn = _Cudnn()


class _Accelerator:
    """``torch.accelerator``: none here (``is_available()`` False, ``current_accelerator()``
    None), so programs that pick ``current_accelerator() or "cpu"`` pick the CPU."""

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def current_accelerator(check_available: bool = False) -> None:
        return None

    @staticmethod
    def device_count() -> int:
        return 0

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"torch.accelerator.{name} is not supported by minigrad: there "
                             "is no accelerator (it runs on the CPU)")


class _Version:
    """``torch.version``: no CUDA or ROCm build."""

    cuda = None
    hip = None
    __version__ = "2.0.0+minigrad"


cuda = _Cuda()
backends = _Backends()
accelerator = _Accelerator()
version = _Version()
_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted ("highest", "high", "medium") and remembered; NumPy multiplies float32 in
    float32 whatever it is."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"set_float32_matmul_precision: expected 'highest', 'high' or "
                           f"'medium', got {precision!r}")
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]

# PyTorch's module paths (``import torch.backends.cudnn as cudnn``) name these objects
for _name in ("cudnn", "cuda", "mps"):
    sys.modules.setdefault(f"{__name__}.{_name}", getattr(backends, _name))
sys.modules.setdefault(f"{__name__[:-len('.backends')]}.cuda.amp", _cuda_amp)
