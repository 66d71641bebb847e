"""``minigrad.nn``: modules, layers and losses with PyTorch's names and layouts.

    import minigrad as mg
    from minigrad import nn
    import minigrad.nn.functional as F

    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    loss = F.cross_entropy(model(x), y)

One file per family: ``module`` (Module, Parameter, containers), ``containers``
(ParameterList, ParameterDict), ``linear``, ``conv``, ``normalization``, ``activation``,
``loss``, ``distance``, ``recurrent``, ``attention``, ``transformer``; the
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

# --- more of PyTorch's nn (issue 11) ---
from .activation import ELU, Hardtanh, LeakyReLU, Mish, ReLU6, SiLU, Softplus
from .activation import (CELU, GLU, SELU, Hardsigmoid, Hardswish, LogSigmoid, Softmin,
                         Softsign, Tanhshrink, Threshold)
from .containers import ParameterDict, ParameterList
from .conv import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, Conv1d, MaxPool1d, Upsample
from .distance import CosineSimilarity
from .linear import Unflatten
from .loss import HuberLoss, KLDivLoss, L1Loss, NLLLoss, SmoothL1Loss
from .normalization import GroupNorm
from .recurrent import GRU, GRUCell, LSTMCell, RNNCell
from .transformer import TransformerEncoder, TransformerEncoderLayer
from . import parallel  # noqa: E402
from .activation import PReLU  # noqa: E402
from .conv import ConvTranspose1d, ConvTranspose2d, UpsamplingNearest2d  # noqa: E402
from .dropout import Dropout1d, Dropout2d, Dropout3d  # noqa: E402
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d,  # noqa: E402
                   LazyLinear)
from .normalization import InstanceNorm1d, InstanceNorm2d, RMSNorm  # noqa: E402
from .padding import (ConstantPad1d, ConstantPad2d, ReflectionPad1d,  # noqa: E402
                      ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, ZeroPad1d,
                      ZeroPad2d)
from .parallel import DataParallel  # noqa: E402
from .transformer import (Transformer, TransformerDecoder,  # noqa: E402
                          TransformerDecoderLayer)
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: E402
from . import layers_more as _layers_more  # noqa: E402
from .layers_more import *  # noqa: E402, F401, F403
from . import loss_more as _loss_more  # noqa: E402
from .loss_more import *  # noqa: E402, F401, F403
from ..unsupported import module_getattr as _module_getattr

__all__ = [
    "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Conv2d",
    "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GELU", "HingeLoss", "Identity",
    "LSTM", "LayerNorm", "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "Module",
    "ModuleDict", "ModuleList", "MultiheadAttention", "Parameter", "RNN", "ReLU",
    "ResidualBlock", "ScaledDotProductAttention", "Sequential", "Sigmoid", "Softmax", "Tanh",
    "functional", "init", "utils",
    # issue 11
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "Conv1d", "CosineSimilarity", "ELU",
    "GRU", "GRUCell", "GroupNorm", "Hardtanh", "HuberLoss", "KLDivLoss", "L1Loss", "LSTMCell",
    "LeakyReLU", "MaxPool1d", "Mish", "NLLLoss", "ParameterDict", "ParameterList", "RNNCell",
    "ReLU6", "SiLU", "SmoothL1Loss", "Softplus", "TransformerEncoder", "TransformerEncoderLayer",
    "Unflatten", "Upsample",
    # issue 29
    "ConvTranspose1d", "ConvTranspose2d", "DataParallel", "Dropout1d", "Dropout2d",
    "Dropout3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyConv1d", "LazyConv2d", "LazyLinear",
    "PixelShuffle", "PixelUnshuffle", "parallel", "ConstantPad1d", "ConstantPad2d",
    "InstanceNorm1d", "InstanceNorm2d", "RMSNorm", "ReflectionPad1d", "ReflectionPad2d",
    "ReplicationPad1d", "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d", "Transformer",
    "TransformerDecoder", "TransformerDecoderLayer", "PReLU", "UpsamplingNearest2d",
    # the rest of the pointwise activations
    "CELU", "GLU", "SELU", "Hardsigmoid", "Hardswish", "LogSigmoid", "Softmin", "Softsign",
    "Tanhshrink", "Threshold",
] + _layers_more.__all__ + _loss_more.__all__  # round 3 of the census

from . import modules  # noqa: E402, F401  (PyTorch's torch.nn.modules.* paths)

# a name PyTorch has and minigrad leaves out on purpose says why (minigrad/unsupported.py)
__getattr__ = _module_getattr("torch.nn")
