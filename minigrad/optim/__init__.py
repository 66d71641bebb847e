"""``minigrad.optim``: optimizers and learning-rate schedules, with PyTorch's names.

    optimizer = mg.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = mg.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)

One file per idea: ``optimizer`` (the base class: param groups, state, saving), ``sgd``,
``adam`` (Adam and AdamW), ``adam_variants`` (Adamax, NAdam, RAdam), ``rmsprop``
(RMSprop, Adagrad, Adadelta), ``rprop``, ``lbfgs``, ``lr_scheduler``; ``sgd`` has ASGD too.
"""

from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import ASGD, SGD

# --- more of PyTorch's optimizers (issue 11) ---
from .adam_variants import Adamax, NAdam, RAdam
from .lbfgs import LBFGS
from .rmsprop import Adadelta, Adagrad, RMSprop
from .rprop import Rprop
from ..unsupported import module_getattr as _module_getattr

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler",
           # issue 11
           "Adadelta", "Adagrad", "Adamax", "LBFGS", "NAdam", "RAdam", "RMSprop",
           "ASGD", "Rprop"]

# a name PyTorch has and minigrad leaves out on purpose says why (minigrad/unsupported.py)
__getattr__ = _module_getattr("torch.optim")
