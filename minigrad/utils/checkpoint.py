"""``minigrad.utils.checkpoint``: where PyTorch code looks for ``checkpoint``
(``torch.utils.checkpoint.checkpoint``); it is ``mg.checkpoint`` (``minigrad/checkpoint.py``)."""

from ..checkpoint import checkpoint

__all__ = ["checkpoint"]
