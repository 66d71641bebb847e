"""``minigrad.utils``: where PyTorch code looks for ``torch.utils.data``.

``from minigrad.utils.data import DataLoader`` is ``from minigrad.data import DataLoader``:
one package under two names, so code written for ``torch.utils.data`` runs unchanged.
"""

import sys

from .. import data

sys.modules[__name__ + ".data"] = data

__all__ = ["data"]
