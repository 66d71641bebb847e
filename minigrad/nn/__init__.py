"""``minigrad.nn``: modules, layers and losses with PyTorch's names and layouts.

    import minigrad as mg
    from minigrad import nn
    import minigrad.nn.functional as F

    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    loss = F.cross_entropy(model(x), y)

One file per family: ``module`` (Module, Parameter, containers), ``linear``, ``conv``,
``normalization``, ``activation``, ``loss``, ``recurrent``, ``attention``; the
computations themselves are in ``functional``, and initialisations in ``init``.
"""

from . import functional, init, utils
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .attention import MultiheadAttention, ScaledDotProductAttention
from .conv import AvgPool2d, Conv2d, MaxPool2d, ResidualBlock
from .linear import Dropout, Embedding, Flatten, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HingeLoss, MSELoss
from .module import Module, ModuleDict, ModuleList, Parameter, Sequential
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .recurrent import LSTM, RNN

__all__ = [
    "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Conv2d",
    "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GELU", "HingeLoss", "Identity",
    "LSTM", "LayerNorm", "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "Module",
    "ModuleDict", "ModuleList", "MultiheadAttention", "Parameter", "RNN", "ReLU",
    "ResidualBlock", "ScaledDotProductAttention", "Sequential", "Sigmoid", "Softmax", "Tanh",
    "functional", "init", "utils",
]
