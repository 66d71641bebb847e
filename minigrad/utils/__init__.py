"""``minigrad.utils.data`` is ``minigrad.data``, under PyTorch's path (``torch.utils.data``),
so ``from minigrad.utils.data import DataLoader`` works too."""

import sys

from .. import data

sys.modules[__name__ + ".data"] = data

__all__ = ["data"]
