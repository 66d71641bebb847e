"""The Functions, grouped by family. Each file reads on its own."""

from .elementwise import (Abs, Add, Cast, Clamp, Compare, Cos, Div, Exp, Log, Maximum,
                          Minimum, Mul, Neg, Pow, ReLU, Sigmoid, Sin, Sqrt, Sub, Tanh, Where)
from .indexing import Gather, GetItem, SetItem
from .matmul import MatMul
from .movement import Cat, Clone, Expand, Pad, Permute, Repeat, Reshape, Roll, Stack, Unfold
from .reduce import ArgMax, ArgMin, LogSumExp, Max, Mean, Min, Sum, Var

__all__ = [
    "Abs", "Add", "ArgMax", "ArgMin", "Cast", "Cat", "Clamp", "Clone", "Compare", "Cos", "Div",
    "Exp", "Expand", "Gather", "GetItem", "Log", "LogSumExp", "MatMul", "Max", "Maximum",
    "Mean", "Min", "Minimum", "Mul", "Neg", "Pad", "Permute", "Pow", "ReLU", "Repeat",
    "Reshape", "Roll", "SetItem", "Sigmoid", "Sin", "Sqrt", "Stack", "Sub", "Sum", "Tanh",
    "Unfold", "Var", "Where",
]
