"""``nn.parallel``: PyTorch's wrappers that spread a model over devices.

With no GPU, PyTorch's ``DataParallel`` runs the wrapped module as it is, and so does
minigrad's: ``DataParallel(model)(x)`` is ``model(x)``, its parameters are ``model``'s
(under ``module.``, as PyTorch's state-dict keys are). ``DistributedDataParallel`` needs
a process group, which one process on the CPU does not have; making one says so.
"""

from __future__ import annotations

from typing import Any

from .module import Module


class DataParallel(Module):
    """``DataParallel(module, device_ids=None, output_device=None, dim=0)``: on the CPU,
    ``module`` itself (``.module``), called directly."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids, self.output_device, self.dim = [], None, dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Not available: needs ``torch.distributed``'s process group (see mg.distributed)."""

    def __init__(self, module: Module, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("nn.parallel.DistributedDataParallel is not supported by "
                           "minigrad: it runs in one process (no process group); use the "
                           "module itself")


__all__ = ["DataParallel", "DistributedDataParallel"]
