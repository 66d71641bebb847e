"""The Functions, grouped by family. Each file reads on its own."""

from .activation import GELU, LogSoftmax, Softmax
from .activation_pointwise import ELU, Hardtanh, LeakyReLU, Mish, SiLU, Softplus  # issue 11
from .attention import ScaledDotProductAttention
from .convolution import AvgPool2d, Conv2d, MaxPool2d
from .elementwise import (Abs, Add, Cast, Clamp, Compare, Cos, Div, Exp, Log, Maximum,
                          Minimum, Mul, Neg, Pow, ReLU, Sigmoid, Sin, Sqrt, Sub, Tanh, Where)
from .indexing import Gather, GetItem, SetItem
from .loss import BinaryCrossEntropy, BinaryCrossEntropyWithLogits, CrossEntropy
from .matmul import Linear, MatMul
from .movement import (Cat, Clone, Expand, Pad, Permute, Repeat, Reshape, Roll, Stack, Unbind,
                       Unfold)
from .normalization import LayerNorm
from .reduce import ArgMax, ArgMin, LogSumExp, Max, Mean, Min, Sum, Var

__all__ = [
    "Abs", "Add", "ArgMax", "ArgMin", "AvgPool2d", "BinaryCrossEntropy",
    "BinaryCrossEntropyWithLogits", "Cast", "Cat", "Clamp", "Clone", "Compare", "Conv2d", "Cos",
    "CrossEntropy", "Div", "Exp", "Expand", "GELU", "Gather", "GetItem", "LayerNorm", "Linear",
    "Log", "LogSoftmax", "LogSumExp", "MatMul", "Max", "MaxPool2d", "Maximum", "Mean", "Min",
    "Minimum", "Mul", "Neg", "Pad", "Permute", "Pow", "ReLU", "Repeat", "Reshape", "Roll",
    "ScaledDotProductAttention", "SetItem", "Sigmoid", "Sin", "Softmax", "Sqrt", "Stack", "Sub",
    "Sum", "Tanh", "Unbind", "Unfold", "Var", "Where",
    # issue 11
    "ELU", "Hardtanh", "LeakyReLU", "Mish", "SiLU", "Softplus",
]
