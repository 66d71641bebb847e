"""The Functions, grouped by family. Each file reads on its own."""

from .activation import GELU, Erf, LogSoftmax, Softmax
from .activation_pointwise import ELU, Hardtanh, LeakyReLU, Mish, SiLU, Softplus
from .attention import ScaledDotProductAttention
from .convolution import AvgPool2d, Conv2d, ConvTranspose2d, MaxPool2d
from .logical import Bitwise, BitwiseNot, Logical, LogicalNot
from .trigonometry import Acos, Asin, Atan, Cumprod
from .elementwise import (Abs, Add, Cast, Ceil, Clamp, Compare, Cos, Div, Exp, Expm1, Floor,
                          FloorDivide, Fmod, Log, Log1p, Maximum, Minimum, Mul, Neg, Pow, ReLU,
                          Remainder, Round, RoundedDiv, ScalarRemainder, Sigmoid, Sign, Sin,
                          Sqrt, Sub, Tanh, Where)
from .indexing import ArgSort, Gather, GetItem, Scatter, ScatterAdd, SetItem
from .linalg import Det, Inverse
from .loss import BinaryCrossEntropy, BinaryCrossEntropyWithLogits, CrossEntropy
from .matmul import Einsum, Linear, MatMul
from .movement import (Cat, Clone, Expand, Pad, Permute, Repeat, RepeatInterleave, Reshape,
                       Roll, Split, Stack, Unbind, Unfold)
from .normalization import LayerNorm
from .reduce import (AllTrue, AnyTrue, ArgMax, ArgMin, Cumsum, LogSumExp, Max, Mean, Min, Norm,
                     Prod, Sum, Var)

__all__ = [
    "Abs", "Add", "AllTrue", "AnyTrue", "ArgMax", "ArgMin", "ArgSort", "AvgPool2d",
    "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits", "Cast", "Cat", "Ceil", "Clamp",
    "Clone", "Compare", "Conv2d", "Cos", "CrossEntropy", "Cumsum", "Div", "Einsum", "Erf",
    "Exp", "Expand", "Expm1", "Floor", "Gather", "GELU", "GetItem", "LayerNorm", "Linear",
    "Log", "Log1p", "LogSoftmax", "LogSumExp", "MatMul", "Max", "Maximum", "MaxPool2d",
    "Mean", "Min", "Minimum", "Mul", "Neg", "Norm", "Pad", "Permute", "Pow", "Prod", "ReLU",
    "Repeat", "RepeatInterleave", "Reshape", "Roll", "Round", "ScaledDotProductAttention",
    "Scatter", "ScatterAdd", "SetItem", "Sigmoid", "Sign", "Sin", "Softmax", "Split", "Sqrt",
    "Stack", "Sub", "Sum", "Tanh", "Unbind", "Unfold", "Var", "Where",
    "ELU", "Hardtanh", "LeakyReLU", "Mish", "SiLU", "Softplus",
    "Acos", "Asin", "Atan", "Bitwise", "BitwiseNot", "ConvTranspose2d", "Cumprod", "Logical",
    "LogicalNot", "FloorDivide", "Fmod", "Remainder", "RoundedDiv", "ScalarRemainder",
    "Det", "Inverse",
]
