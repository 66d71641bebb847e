"""``minigrad.utils``: where PyTorch code looks for ``torch.utils.data`` (and
``torch.utils.benchmark``'s Timer, and ``torch.utils.checkpoint``'s checkpoint).

``from minigrad.utils.data import DataLoader`` is ``from minigrad.data import DataLoader``:
one package under two names, so code written for ``torch.utils.data`` runs unchanged.
"""

import sys

from .. import data
from . import benchmark, checkpoint

sys.modules[__name__ + ".data"] = data
# and its modules under PyTorch's paths (torch.utils.data.dataset.IterableDataset), the
# same module objects, so a class is the same class under either name
for _name in ("dataset", "dataloader", "sampler", "collate"):
    sys.modules[f"{__name__}.data.{_name}"] = getattr(data, _name)

__all__ = ["benchmark", "checkpoint", "data"]
