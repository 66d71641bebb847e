"""``mg.distributed``: PyTorch's ``torch.distributed``, for programs that check for it.

minigrad runs in one process on the CPU, so ``is_available()`` is False, as in a PyTorch
built without distributed support, and ``is_initialized()`` is False. Programs import
``init_process_group`` and friends and call them only when launched with several
processes; here calling one says why it cannot work.
"""

from __future__ import annotations

from typing import Any

__path__: list[str] = []  # a package without files: ``import torch.distributed.rpc`` reaches
# the refusal in minigrad/unsupported.py, which says why

REASON = ("minigrad runs in one process (no process groups); run the program without "
          "torchrun, as a single process")


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def _refuse(name: str):
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"torch.distributed.{name} is not supported by minigrad: {REASON}")

    refused.__name__ = refused.__qualname__ = name
    refused.__doc__ = f"Not available: {REASON}."
    return refused


init_process_group = _refuse("init_process_group")
destroy_process_group = _refuse("destroy_process_group")
get_rank = _refuse("get_rank")
get_world_size = _refuse("get_world_size")
barrier = _refuse("barrier")
all_reduce = _refuse("all_reduce")
broadcast = _refuse("broadcast")
all_gather = _refuse("all_gather")


class ReduceOp:
    SUM, PRODUCT, MIN, MAX, AVG = "sum", "product", "min", "max", "avg"


def __getattr__(name: str) -> Any:
    """Every other name (``rpc``, ``fsdp``, ``all_gather_object`` ...) says why at once."""
    raise AttributeError(f"torch.distributed.{name} is not supported by minigrad: {REASON}")
