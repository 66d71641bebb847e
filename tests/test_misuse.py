"""The misuse catalogue (issue 16): the mistakes students make, each a clear error.

Every case is a mistake tried as a student would make it. Each asserts the error type,
that the message names the op or layer and the offending shapes, dtypes or values, and
afterwards that the engine is intact (``assert_engine_intact``): grad mode on, lazy and
anomaly modes off, no group left open, and a small forward/backward still right.
A few mistakes are made inside a mode (``with mg.lazy()``, ``mg.group``, ``no_grad``,
``detect_anomaly``), so that the mode's restoring on the way out is tested too.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim
from minigrad.data import DataLoader, TensorDataset


def assert_engine_intact() -> None:
    """The global state is back to its defaults, and a small forward/backward through a
    layer gives the gradients worked out by hand."""
    assert mg.is_grad_enabled(), "grad mode was left off"
    assert not mg.is_lazy(), "lazy mode was left on"
    assert not mg.is_anomaly_enabled(), "anomaly mode was left on"
    assert mg.current_group() is None, "a group was left open"
    x = mg.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
    w = mg.tensor([[0.5, 0.25, -1.0], [2.0, 0.0, 1.0]], requires_grad=True)
    y = (x @ w.T).relu()  # [[-3.0 -> 0, 5.0]]
    loss = (y * y).sum()  # 25
    loss.backward()
    assert loss.item() == 25.0
    # d loss / d y = 2y = [0, 10]; through relu the first unit is off
    np.testing.assert_allclose(w.grad.numpy(), [[0, 0, 0], [10, -20, 30]])
    np.testing.assert_allclose(x.grad.numpy(), [[20, 0, 10]])
    assert x.grad.dtype == np.float32


@dataclass
class Case:
    """``action()`` raises ``error``, whose message contains every one of ``words``."""

    id: str
    action: Callable[[], Any]
    error: type[BaseException]
    words: tuple[str, ...]
    marks: list = field(default_factory=list)


CASES: list[Case] = []


def case(id: str, error: type[BaseException], *words: str):
    def register(action):
        CASES.append(Case(id, action, error, words))
        return action
    return register


def leaf(*shape, requires_grad=True):
    return mg.ones(*shape, requires_grad=requires_grad)


# --- tensors ------------------------------------------------------------------------------


case("ragged nested lists", ValueError, "tensor", "ragged", "data[1] has 1 elements",
     "data[0] has 2")(lambda: mg.tensor([[1, 2], [3]]))
case("ragged deeper down", ValueError, "tensor", "ragged", "data[1][1]")(
    lambda: mg.tensor([[[1], [2]], [[3], [4, 5]]]))
case("a string as data", TypeError, "tensor", "str", "'abc'")(lambda: mg.tensor("abc"))
case("a list of tensors that require grad", TypeError, "tensor", "mg.stack", "shape ()")(
    lambda: mg.tensor([leaf(()) * 2, leaf(())]))
case("requires_grad=True on integers", TypeError, "int64", "(2,)", ".float()")(
    lambda: mg.tensor([1, 2], requires_grad=True))


@case("requires_grad set on an integer tensor", TypeError, "int64", "(3,)", ".float()")
def _():
    x = mg.arange(3)
    x.requires_grad = True


case("requires_grad_() on a bool tensor", TypeError, "bool", "(2,)")(
    lambda: mg.tensor([True, False]).requires_grad_())


@case("requires_grad = False on a non-leaf", RuntimeError, "leaf", "detach()")
def _():
    y = leaf(2) * 2
    y.requires_grad = False


case("requires_grad not a bool", TypeError, "requires_grad", "'yes'")(
    lambda: mg.tensor([1.0], requires_grad="yes"))
case("unknown dtype name", TypeError, "dtype", "'float33'", "float32")(
    lambda: mg.tensor([1.0], dtype="float33"))
case("np.asarray of a tensor that requires grad", RuntimeError, ".detach().numpy()",
     "(2, 3)", "float32")(lambda: np.asarray(leaf(2, 3)))
case("np.array of a list of such tensors", RuntimeError, ".detach().numpy()", "shape ()")(
    lambda: np.array([leaf(()), leaf(())]))
case("a NumPy ufunc minigrad lacks, on a tensor that requires grad", TypeError, "np.isnan",
     "(4,)", "float32", ".detach().numpy()")(lambda: np.isnan(leaf(4)))
case("a NumPy function minigrad lacks, on a tensor that requires grad", TypeError, "np.norm",
     "(3,)", ".detach().numpy()")(lambda: np.linalg.norm(leaf(3)))
case("np.sum with an argument minigrad lacks", TypeError, "np.sum", "(3,)", "requires grad")(
    lambda: np.sum(leaf(3), dtype=np.float64))
case("an out= array for a tensor that requires grad", TypeError, "np.add", "(2,)")(
    lambda: np.add(leaf(2), 1.0, out=np.zeros(2, np.float32)))
case("item of several elements", mg.ShapeError, "item", "(2, 2)")(
    lambda: mg.ones(2, 2).item())
case("float() of several elements", mg.ShapeError, "item", "(3,)")(lambda: float(mg.ones(3)))
case("if tensor: with several elements", RuntimeError, "ambiguous", "(3,)", ".any()")(
    lambda: bool(mg.ones(3)))
case("len of a 0-d tensor", TypeError, "len()", "0-d")(lambda: len(mg.tensor(1.0)))
case("shapes that do not broadcast", mg.ShapeError, "Add", "(2, 3)", "(4,)")(
    lambda: mg.ones(2, 3) + mg.ones(4))
case("matmul with mismatched sizes", mg.ShapeError, "matmul", "(2, 3)", "transpose")(
    lambda: mg.ones(2, 3) @ mg.ones(2, 3))
case("reshape to another number of elements", mg.ShapeError, "Reshape", "(6,)", "(4, 2)")(
    lambda: mg.ones(6).reshape(4, 2))
case("view with two unknown sizes", mg.ShapeError, "Reshape", "(-1, -1)")(
    lambda: mg.ones(6).view(-1, -1))
case("index out of range", IndexError, "GetItem", "5", "(3,)")(lambda: mg.ones(3)[5])
case("permute that repeats a dim", mg.ShapeError, "permute", "(0, 0)", "(2, 3)")(
    lambda: mg.ones(2, 3).permute(0, 0))
case("transpose of a dim that is not there", mg.DimensionError, "transpose", "dim 2",
     "2 dimension")(lambda: mg.ones(2, 3).transpose(0, 2))
case("sum over a dim that is not there", mg.DimensionError, "sum", "dim 2")(
    lambda: mg.ones(2, 3).sum(2))
case("softmax without dim", TypeError, "softmax", "dim")(lambda: mg.ones(2, 3).softmax())
case("cat of different ranks", mg.ShapeError, "cat", "(2, 3)", "(2,)")(
    lambda: mg.cat([mg.ones(2, 3), mg.ones(2)]))
case("cat of different sizes", mg.ShapeError, "Cat", "(2, 3)", "(2, 4)")(
    lambda: mg.cat([mg.ones(2, 3), mg.ones(2, 4)]))
case("stack of nothing", ValueError, "stack", "non-empty")(lambda: mg.stack([]))
case("stack of different shapes", mg.ShapeError, "Stack", "(2,)", "(3,)")(
    lambda: mg.stack([mg.ones(2), mg.ones(3)]))
case("masked_fill with an integer mask", TypeError, "masked_fill", "int64", "(3,)",
     "bool")(lambda: mg.ones(3).masked_fill(mg.tensor([1, 0, 1]), 0.0))
case("gather index out of range", IndexError, "gather", "5", "(2, 3)")(
    lambda: mg.gather(mg.ones(2, 3), 1, mg.tensor([[5]])))
case("expand a size that is not 1", mg.ShapeError, "Expand", "(2, 2)", "(3, 3)")(
    lambda: mg.ones(2, 2).expand(3, 3))
case("t() of a 3-D tensor", mg.ShapeError, "t:", "(2, 2, 2)")(lambda: mg.ones(2, 2, 2).t())
case("clamp without bounds", ValueError, "clamp", "min", "max")(lambda: mg.ones(2).clamp())
case("mean of integers", RuntimeError, "mean", "int64", "(4,)", ".float()")(
    lambda: mg.arange(4).mean())
case("var of integers", RuntimeError, "var", "int64", "(4,)", ".float()")(
    lambda: mg.arange(4).var())
case("std of integers", RuntimeError, "std", "int32", "(2, 2)", ".float()")(
    lambda: mg.tensor([[1, 2], [3, 4]], dtype="int32").std(0))
case("mg.mean of integers", RuntimeError, "mean", "int64")(lambda: mg.mean(mg.arange(4)))
case("a GPU", RuntimeError, "cuda", "CPU")(lambda: mg.ones(2).cuda())

# --- autograd -----------------------------------------------------------------------------

case("backward of a non-scalar", RuntimeError, "backward", "one element", "(3,)")(
    lambda: (leaf(3) * 2).backward())
case("backward of a tensor without grad", RuntimeError, "backward", "requires_grad=True")(
    lambda: mg.ones(3).sum().backward())
case("gradient= of the wrong shape", Exception, "(3,)", "(2,)")(
    lambda: (leaf(3) * 2).backward(mg.ones(2)))


@case("backward twice", RuntimeError, "Mul", "retain_graph=True")
def _():
    x = leaf(2)
    loss = (x * x).sum()
    loss.backward()
    loss.backward()


case("an in-place op on a leaf that requires grad", RuntimeError, "in-place", "leaf",
     "(3,)", "no_grad")(lambda: leaf(3).add_(1))


@case("item assignment on a leaf that requires grad", RuntimeError, "in-place", "leaf", "(3,)")
def _():
    x = leaf(3)
    x[0] = 5.0


case("an in-place op that would change the shape", mg.ShapeError, "in-place", "(2, 3)",
     "(3,)")(lambda: mg.ones(3).add_(mg.ones(2, 3)))


@case("an in-place op that would change the dtype", TypeError, "in-place", "float", "int64")
def _():
    counts = mg.arange(3)
    counts += 0.5


@case("a saved input modified in place before backward", RuntimeError, "Mul")
def _():
    x = leaf(3)
    y = x * 1.0
    z = y * y
    y.mul_(2)
    z.sum().backward()


case("a hook on a tensor without grad", RuntimeError, "register_hook", "does not require grad")(
    lambda: mg.ones(2).register_hook(print))
case("retain_grad on a tensor without grad", RuntimeError, "retain_grad")(
    lambda: mg.ones(2).retain_grad())


@case("autograd.grad of an unused input", RuntimeError, "grad", "input 0", "(2,)",
      "allow_unused")
def _():
    used, unused = leaf(2), leaf(2)
    mg.autograd.grad((used * 2).sum(), [unused])


class NumPyDoubler(mg.Function):  # an array-contract Function: backward on arrays
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return np.asarray(grad_output) * 2


case("autograd.grad with create_graph through a NumPy backward", RuntimeError,
     "create_graph=True", "NumPyDoubler", "twice_differentiable = True")(
    lambda: mg.autograd.grad(NumPyDoubler.apply(leaf(2)).sum(), [leaf(2)],
                             create_graph=True))


class TwoGrads(mg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2, grad_output


class WrongShape(mg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return np.ones((5, 7))


class NoBackward(mg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2


class BadForward(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x @ y


case("a Function's backward with too many gradients", Exception, "TwoGrads")(
    lambda: TwoGrads.apply(leaf(3)).sum().backward())
case("a Function's backward of the wrong shape", Exception, "WrongShape", "(5, 7)", "(3,)")(
    lambda: WrongShape.apply(leaf(3)).sum().backward())
case("a Function without backward", NotImplementedError, "backward")(
    lambda: NoBackward.apply(leaf(3)).sum().backward())
case("a NumPy error in a Function's forward", mg.ShapeError, "BadForward", "(2, 3)")(
    lambda: BadForward.apply(leaf(2, 3), leaf(2, 3)))


@case("saved tensors read after backward", RuntimeError, "Mul", "released",
      "retain_graph=True")
def _():
    x = leaf(2)
    y = x * x
    y.sum().backward()
    y.grad_fn.saved_tensors


# --- modes --------------------------------------------------------------------------------


@case("set_mode with an unknown mode", ValueError, "set_mode", "'fast'", "'lazy'")
def _():
    mg.set_mode("fast")


@case("set_grad_enabled with a string", TypeError, "set_grad_enabled", "'yes'")
def _():
    mg.set_grad_enabled("yes")


@case("a group without a name", TypeError, "group", "''")
def _():
    with mg.group(""):
        pass


@case("a shape error inside lazy mode", mg.ShapeError, "Add", "(2, 3)", "(4,)")
def _():
    with mg.lazy():
        mg.ones(2, 3) + mg.ones(4)


@case("a shape error inside a group", mg.ShapeError, "matmul", "(2, 3)")
def _():
    with mg.group("encoder"):
        mg.ones(2, 3) @ mg.ones(2, 3)


@case("an error inside no_grad", mg.ShapeError, "Reshape", "(6,)")
def _():
    with mg.no_grad():
        mg.ones(6).reshape(4, 2)


@case("an error inside detect_anomaly", FloatingPointError, "Log", "NaN", "(1,)")
def _():
    with mg.detect_anomaly():
        (mg.tensor([-1.0], requires_grad=True).log() * 2).sum().backward()


@case("an error inside a layer's forward inside lazy mode", mg.ShapeError, "Linear", "(3, 5)")
def _():
    with mg.lazy():
        nn.Linear(4, 2)(mg.ones(3, 5))


@case("mg.realize given something else", TypeError, "realize", "argument 1", "int")
def _():
    with mg.lazy():
        a = mg.ones(2) * 2
    mg.realize([a, 3])


# --- modules ------------------------------------------------------------------------------

case("a float layer size", TypeError, "Linear", "in_features", "392.0", "//")(
    lambda: nn.Linear(784 / 2, 10))
case("a zero layer size", ValueError, "Linear", "in_features", "0")(lambda: nn.Linear(0, 10))
case("a negative layer size", ValueError, "Linear", "out_features", "-3")(
    lambda: nn.Linear(4, -3))
case("a float channel count", TypeError, "Conv2d", "in_channels", "3.0")(
    lambda: nn.Conv2d(3.0, 8, 3))
case("a float embedding size", TypeError, "Embedding", "embedding_dim", "2.5")(
    lambda: nn.Embedding(10, 2.5))
case("a zero batch-norm size", ValueError, "BatchNorm1d", "num_features", "0")(
    lambda: nn.BatchNorm1d(0))
case("a string hidden size", ValueError, "LSTM", "hidden_size", "'8'")(
    lambda: nn.LSTM(4, "8"))
case("heads that do not divide the width", ValueError, "MultiheadAttention", "10", "3")(
    lambda: nn.MultiheadAttention(10, 3))
case("dropout probability above 1", ValueError, "Dropout", "1.5")(lambda: nn.Dropout(1.5))
case("input with the wrong feature size", mg.ShapeError, "Linear", "(3, 5)", "in_features=4")(
    lambda: nn.Linear(4, 2)(mg.ones(3, 5)))
case("integer input to a layer", TypeError, "Linear", "int64", "(1, 4)", ".float()")(
    lambda: nn.Linear(4, 2)(mg.tensor([[1, 2, 3, 4]])))
case("a list as a layer's input", TypeError, "Linear", "list", "mg.tensor")(
    lambda: nn.Linear(4, 2)([1.0, 2.0, 3.0, 4.0]))
case("a 2-D image to Conv2d", mg.ShapeError, "Conv2d", "(5, 5)")(
    lambda: nn.Conv2d(1, 2, 3)(mg.ones(5, 5)))
case("LayerNorm over the wrong size", mg.ShapeError, "LayerNorm", "(4,)", "(2, 3)")(
    lambda: nn.LayerNorm(4)(mg.ones(2, 3)))
case("float indices to an embedding", TypeError, "embedding", "float32", ".long()")(
    lambda: nn.Embedding(10, 3)(mg.tensor([1.0, 2.0])))
case("an embedding index out of range", IndexError, "embedding", "12", "10 rows")(
    lambda: nn.Embedding(10, 3)(mg.tensor([1, 12])))
case("a string in a Sequential", TypeError, "'1'", "Module", "str")(
    lambda: nn.Sequential(nn.Linear(2, 2), "relu"))


@case("a module without super().__init__()", AttributeError, "super().__init__()", "NoSuper")
def _():
    class NoSuper(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    NoSuper()


case("a state dict of the wrong shape", RuntimeError, "load_state_dict", "weight", "(3, 4)",
     "(2, 4)")(lambda: nn.Linear(4, 2).load_state_dict({"weight": mg.ones(3, 4),
                                                        "bias": mg.ones(2)}))
case("a state dict with a key missing", RuntimeError, "load_state_dict", "missing", "'bias'")(
    lambda: nn.Linear(4, 2).load_state_dict({"weight": mg.ones(2, 4)}))

# --- losses -------------------------------------------------------------------------------

case("a loss module given the data", TypeError, "CrossEntropyLoss", "(3, 4)", "(3,)",
     "loss_fn = nn.CrossEntropyLoss()")(
    lambda: nn.CrossEntropyLoss(mg.randn(3, 4), mg.tensor([0, 1, 2])))
case("MSELoss given the data", TypeError, "MSELoss", "(3,)", "loss_fn(input, target)")(
    lambda: nn.MSELoss(mg.randn(3), mg.randn(3)))
case("BCELoss given the data", TypeError, "BCELoss", "(2,)")(  # (one 1-D Tensor is a weight)
    lambda: nn.BCELoss(mg.rand(2), mg.rand(2)))
case("an unknown reduction", ValueError, "MSELoss", "'avg'", "'mean'")(
    lambda: nn.MSELoss(reduction="avg"))
case("a class index out of range", IndexError, "cross_entropy", "5", "(3, 4)", "C = 4")(
    lambda: F.cross_entropy(mg.randn(3, 4), mg.tensor([0, 1, 5])))
case("a target of the wrong length", mg.ShapeError, "cross_entropy", "(2,)", "(3, 4)")(
    lambda: F.cross_entropy(mg.randn(3, 4), mg.tensor([0, 1])))
case("float class indices", mg.ShapeError, "cross_entropy", "float32", ".long()")(
    lambda: F.cross_entropy(mg.randn(3, 4), mg.tensor([0.0, 1.0, 2.0])))
case("input and target swapped", TypeError, "cross_entropy", "int64", "(3,)")(
    lambda: F.cross_entropy(mg.tensor([0, 1, 2]), mg.randn(3, 4)))
case("MSE of shapes that would broadcast", mg.ShapeError, "mse_loss", "(3, 1)", "(3,)")(
    lambda: F.mse_loss(mg.randn(3, 1), mg.randn(3)))
case("BCE of values outside [0, 1]", ValueError, "binary_cross_entropy", "1.5", "sigmoid")(
    lambda: F.binary_cross_entropy(mg.tensor([1.5, 0.2]), mg.tensor([1.0, 0.0])))

# --- optimizers ---------------------------------------------------------------------------


def params():
    return nn.Linear(2, 1).parameters()


case("a string learning rate", TypeError, "SGD", "lr", "'0.1'", "lr=0.1")(
    lambda: optim.SGD(params(), lr="0.1"))
case("a string learning rate in a group", TypeError, "Adam", "lr", "'1e-3'")(
    lambda: optim.Adam([{"params": params(), "lr": "1e-3"}]))
case("string betas", TypeError, "Adam", "betas", "'0.9'")(
    lambda: optim.Adam(params(), betas=("0.9", 0.999)))
case("a negative learning rate", ValueError, "SGD", "lr=-0.1")(
    lambda: optim.SGD(params(), lr=-0.1))
case("betas out of range", ValueError, "Adam", "1.5")(
    lambda: optim.Adam(params(), betas=(0.9, 1.5)))
case("parameters not called", TypeError, "SGD", "method")(
    lambda: optim.SGD(nn.Linear(2, 1).parameters, lr=0.1))
case("one tensor instead of a list", TypeError, "SGD", "(2, 4)", "list")(
    lambda: optim.SGD(nn.Linear(4, 2).weight, lr=0.1))
case("no parameters", ValueError, "SGD", "empty")(lambda: optim.SGD([], lr=0.1))
case("a non-leaf to optimize", ValueError, "SGD", "non-leaf", "(2, 4)", "Mul")(
    lambda: optim.SGD([nn.Linear(4, 2).weight * 2], lr=0.1))
case("a scheduler given the model", TypeError, "StepLR", "optimizer", "Linear")(
    lambda: optim.lr_scheduler.StepLR(nn.Linear(2, 1), 10))

# --- data ---------------------------------------------------------------------------------

case("tensors of different lengths", ValueError, "TensorDataset", "3", "4")(
    lambda: TensorDataset(mg.ones(3, 2), mg.ones(4)))
case("batch_size 0", ValueError, "DataLoader", "batch_size", "0")(
    lambda: DataLoader(TensorDataset(mg.ones(3, 2)), batch_size=0))
case("a string batch size", TypeError, "DataLoader", "batch_size", "'32'")(
    lambda: DataLoader(TensorDataset(mg.ones(3, 2)), batch_size="32"))

# --- serialization ------------------------------------------------------------------------


def saved(tmp, name="model.pt"):
    path = tmp / name
    mg.save({"weight": mg.ones(3, 4), "step": 3}, path)
    return path


@case("loading a truncated file", ValueError, "model.pt", "not a minigrad checkpoint",
      "truncated")
def _(tmp):
    path = saved(tmp)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    mg.load(path)


@case("loading a corrupted file", ValueError, "model.pt", "not a minigrad checkpoint",
      "corrupted")
def _(tmp):
    path = saved(tmp)
    data = bytearray(path.read_bytes())
    data[120:160] = b"x" * 40
    path.write_bytes(bytes(data))
    mg.load(path)


@case("loading a web page saved instead of the file", ValueError, "model.pt", "HTML",
      "not a minigrad checkpoint")
def _(tmp):
    path = tmp / "model.pt"
    path.write_text("<!DOCTYPE html><html><body>Not Found</body></html>")
    mg.load(path)


@case("loading a text file", ValueError, "notes.txt", "not a minigrad checkpoint")
def _(tmp):
    path = tmp / "notes.txt"
    path.write_text("hello")
    mg.load(path)


@case("loading an empty file", ValueError, "empty.pt", "empty")
def _(tmp):
    path = tmp / "empty.pt"
    path.write_bytes(b"")
    mg.load(path)


@case("loading a zip of something else", ValueError, "other.zip", "not of NumPy arrays")
def _(tmp):
    path = tmp / "other.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "hi")
    mg.load(path)


@case("loading a pickle", ValueError, "model.pkl", "pickle", "never")
def _(tmp):
    import pickle

    path = tmp / "model.pkl"
    path.write_bytes(pickle.dumps({"a": 1}))
    mg.load(path)


@case("loading a single .npy array", ValueError, "weights.npy", "np.load")
def _(tmp):
    path = tmp / "weights.npy"
    np.save(path, np.ones(3))
    mg.load(path)


case("loading a file that is not there", FileNotFoundError, "load", "nowhere.pt")(
    lambda tmp: mg.load(tmp / "nowhere.pt"))
case("weights_only=False", ValueError, "load", "weights_only=False", "never")(
    lambda tmp: mg.load(saved(tmp), weights_only=False))
case("saving a function", TypeError, "save", "function")(
    lambda tmp: mg.save({"f": lambda: 0}, tmp / "x.pt"))

# --- widgets ------------------------------------------------------------------------------


def widgets():
    return pytest.importorskip("minigrad.widgets")


case("GraphView of None", TypeError, "GraphView", "NoneType")(
    lambda: widgets().GraphView(None))
case("GraphView of a model", TypeError, "GraphView", "Linear", "show(model)")(
    lambda: widgets().GraphView(nn.Linear(2, 2)))
case("BackwardStepper of None", TypeError, "BackwardStepper", "NoneType")(
    lambda: widgets().BackwardStepper(None))
case("BackwardStepper of the logits", ValueError, "BackwardStepper", "(4, 2)", "logits",
     "gradient=")(lambda: widgets().BackwardStepper(nn.Linear(3, 2)(mg.randn(4, 3))))
case("BackwardStepper of a leaf", ValueError, "BackwardStepper", "no graph")(
    lambda: widgets().BackwardStepper(leaf(())))
case("GradientFlow of None", TypeError, "GradientFlow", "NoneType")(
    lambda: widgets().GradientFlow(None))
case("GradientFlow of a tensor", TypeError, "GradientFlow", "Tensor")(
    lambda: widgets().GradientFlow(leaf(2)))
case("GradientFlow of a model without parameters", ValueError, "GradientFlow",
     "no parameters")(lambda: widgets().GradientFlow(nn.ReLU()))
case("TensorView of None", TypeError, "TensorView", "NoneType")(
    lambda: widgets().TensorView(None))
case("TensorView of a list", TypeError, "TensorView", "list")(
    lambda: widgets().TensorView([1, 2]))
case("ContextInspector of None", TypeError, "ContextInspector", "NoneType")(
    lambda: widgets().ContextInspector(None))


@pytest.mark.parametrize("misuse", CASES, ids=[c.id for c in CASES])
def test_misuse_raises_a_clear_error(misuse, tmp_path):
    takes_path = misuse.action.__code__.co_argcount == 1
    with pytest.raises(misuse.error) as raised:
        misuse.action(tmp_path) if takes_path else misuse.action()
    message = str(raised.value)
    for word in misuse.words:
        assert word in message, f"{word!r} is not in the message: {message}"
    assert "Traceback" not in message
    assert_engine_intact()


def test_the_catalogue_has_at_least_eighty_cases():
    assert len(CASES) >= 80
    assert len({c.id for c in CASES}) == len(CASES)


def test_no_load_error_suggests_unpickling(tmp_path):
    """Whatever the file, mg.load never tells a student to allow pickle."""
    import pickle

    files = {"page.pt": b"<html></html>", "text.pt": b"hello", "pickle.pt":
             pickle.dumps([1, 2]), "empty.pt": b"", "half.pt": saved(tmp_path).read_bytes()[:99]}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError) as raised:
            mg.load(tmp_path / name)
        assert name in str(raised.value)
        assert "allow_pickle" not in str(raised.value)
        assert "pickle.load" not in str(raised.value)


# --- mistakes that must behave as PyTorch does (no error, and the right numbers) -----------

FLOAT_ONLY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "log1p", "expm1", "erf",
              "rsqrt", "reciprocal", "log2", "log10"]


@pytest.mark.parametrize("name", FLOAT_ONLY)
@pytest.mark.parametrize("values", [[1, 2, 3], [True, False]], ids=["int64", "bool"])
def test_float_only_maths_of_integers_is_float32_as_in_pytorch(torch, name, values):
    ours = getattr(mg.tensor(values), name)()
    theirs = getattr(torch.tensor(values), name)()
    assert str(theirs.dtype) == "torch.float32"
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    assert getattr(mg, name)(mg.tensor(values)).dtype == np.float32  # mg.exp(x) too


@pytest.mark.parametrize("name", ["mean", "var", "std"])
def test_mean_var_std_of_integers_raise_as_in_pytorch(torch, name):
    with pytest.raises(RuntimeError):
        getattr(torch.arange(4), name)()
    with pytest.raises(RuntimeError, match=rf"{name}: .*int64.*\.float\(\)"):
        getattr(mg.arange(4), name)()
    # the fix the message gives works, and gives PyTorch's number
    ours = getattr(mg.arange(4).float(), name)()
    theirs = getattr(torch.arange(4).float(), name)()
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-6)
    assert_engine_intact()


def test_requires_grad_setter_on_floats_works_and_on_integers_raises_as_in_pytorch(torch):
    with pytest.raises(RuntimeError):
        torch.arange(3).requires_grad = True
    x = mg.tensor([1.0, 2.0])
    x.requires_grad = True
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    counts = mg.arange(3)
    with pytest.raises(TypeError):
        counts.requires_grad = True
    assert counts.requires_grad is False  # unchanged


def test_numpy_ufuncs_on_a_tensor_that_requires_grad_run_minigrads_ops():
    x = mg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = np.exp(x) * np.sin(x) + np.maximum(x, 0.0) ** 2 - np.ones(3) / 2
    assert isinstance(y, mg.Tensor) and y.grad_fn is not None
    y.sum().backward()
    v = x.detach().numpy().astype(np.float64)
    expected = np.exp(v) * (np.sin(v) + np.cos(v)) + 2 * np.maximum(v, 0)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_numpy_reductions_on_tensors_keep_numpys_meaning_and_the_gradient():
    x = mg.tensor([[1.0, 2.0, 4.0], [0.0, 3.0, 5.0]], requires_grad=True)
    a = x.detach().numpy()
    for ours, theirs in [(np.sum(x, axis=1), np.sum(a, axis=1)),
                         (np.mean(x, 0, keepdims=True), np.mean(a, 0, keepdims=True)),
                         (np.max(x), np.max(a)),
                         (np.var(x), np.var(a)),  # NumPy's ddof=0, not PyTorch's default
                         (np.std(x, axis=0, ddof=1), np.std(a, axis=0, ddof=1))]:
        assert isinstance(ours, mg.Tensor) and ours.requires_grad
        np.testing.assert_allclose(ours.detach().numpy(), theirs, rtol=1e-6)
    np.concatenate([x, x], axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 2.0))


def test_numpy_functions_work_on_tensors_without_grad():
    x = mg.tensor([3.0, 4.0])
    assert np.linalg.norm(x) == pytest.approx(5.0)
    assert np.isnan(x).tolist() == [False, False]
    assert isinstance(np.exp(x), mg.Tensor)
    np.testing.assert_allclose(np.asarray(x), [3.0, 4.0])
    np.testing.assert_allclose(np.asarray(leaf(2).detach()), [1.0, 1.0])
    assert (np.arange(2) + x).tolist() == [3.0, 5.0]


def test_data_of_a_lazy_tensor_gives_its_values():
    with mg.lazy():
        y = mg.tensor([1.0, 2.0]) * 3
        values = y.data
    assert values.tolist() == [3.0, 6.0] and values.grad_fn is None


def test_realize_takes_tensors_or_a_list_of_them():
    with mg.lazy():
        a, b = mg.ones(2) * 2, mg.ones(3) + 1
    assert not a.is_realized and not b.is_realized
    mg.realize([a, b])
    assert a.is_realized and b.is_realized and a.tolist() == [2.0, 2.0]


def test_checkpoint_passes_non_tensor_outputs_through_as_in_pytorch(torch):
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    def fn(x, lib):
        return x.exp() * 2, "note", 3, None

    start = np.array([0.5, -1.0, 2.0], dtype=np.float64)
    x = mg.tensor(start, requires_grad=True)
    t = torch.tensor(start, requires_grad=True)
    ours = mg.checkpoint(lambda x: fn(x, mg), x)
    theirs = torch_checkpoint(lambda x: fn(x, torch), t, use_reentrant=False)
    assert ours[1:] == theirs[1:] == ("note", 3, None)
    ours[0].sum().backward()
    theirs[0].sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    as_list = mg.checkpoint(lambda x: [x * 2, "a"], x)
    assert isinstance(as_list, list) and as_list[1] == "a"


def test_gradcheck_of_a_float32_model_says_to_use_double():
    model = nn.Linear(3, 2)
    x = mg.randn(4, 3, requires_grad=True)
    with pytest.raises(TypeError, match=r"gradcheck: .*float64.*model\.double\(\)"):
        mg.gradcheck(lambda x: model(x), [x])
    assert mg.gradcheck(lambda x: model.double()(x), [x])  # the advice works
    with pytest.raises(mg.GradcheckError, match=r"output is float32.*\.double\(\)"):
        mg.gradcheck(lambda x: (x.float() * 1.0001).exp(), [mg.randn(4, 3, requires_grad=True)])
    assert_engine_intact()


def test_mg_tensor_of_a_list_of_plain_tensors_still_works():
    assert mg.tensor([mg.tensor(1.0), mg.tensor(2.0)]).tolist() == [1.0, 2.0]
    assert mg.tensor([[1, 2], [3, 4]]).shape == (2, 2)


# --- widgets: views that must not say something false ------------------------------------


def test_show_of_a_model_after_backward_shows_its_gradients():
    widgets()
    from minigrad.widgets import show

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    model(mg.randn(5, 3)).pow(2).mean().backward()
    view = show(model)
    assert "no gradients yet" not in view.to_html()
    norms = {name: p.grad.numpy().astype(np.float64) for name, p in model.named_parameters()}
    for name, stats in view.stats.items():
        assert stats.norm == pytest.approx(np.linalg.norm(norms[name]), rel=1e-5)
    model(mg.randn(5, 3)).pow(2).mean().backward()
    view.update()  # later steps are recorded as before
    assert view.steps == 2 and all(len(h) == 2 for h in view.history.values())


def test_a_gradient_flow_made_before_backward_waits_for_update():
    widgets()
    view = widgets().GradientFlow(nn.Linear(2, 2))
    assert view.steps == 0 and "no gradients yet" in view.to_html()


def test_a_failed_backward_stepper_keeps_saying_why():
    widgets()
    x = leaf(3)
    y = x * 2

    def broken_hook(grad):
        raise ValueError("the hook broke")

    y.register_hook(broken_hook)
    stepper = widgets().BackwardStepper(y.sum())
    stepper.step()  # the Sum node: fine
    with pytest.raises(ValueError, match="the hook broke"):
        stepper.step()
    for move in (stepper.step, stepper.run):
        with pytest.raises(RuntimeError, match="failed at step 2.*the hook broke"):
            move()
    assert not stepper.done
    assert "Backward done" not in stepper.to_html()
    assert "Backward failed at step 2" in stepper.to_html()
    assert x.grad is None
    stepper.reset()  # a new pass starts clean (and fails again, at the same place)
    assert "failed" not in stepper.to_html()


def test_the_stepper_names_leaves_by_parameter_name():
    widgets()
    model = nn.Linear(3, 2)
    loss = model(mg.randn(4, 3)).sum()
    html = widgets().BackwardStepper(loss, names=model).to_html()
    assert "weight" in html and "bias" in html and "leaf 1" not in html


def test_the_readme_stepper_example_gives_what_backward_gives():
    """The README says that after Run every .grad is what loss.backward() gives: its
    example zeroes the gradients first, so that the claim holds."""
    widgets()
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = next(b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S)
                   if "BackwardStepper(" in b)
    names: dict = {}
    exec(compile(example, "README example", "exec"), names)
    model, x, target = names["model"], names["x"], names["target"]
    assert names["stepper"].done
    stepped = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    F.cross_entropy(model(x), target).backward()
    for got, param in zip(stepped, model.parameters()):
        np.testing.assert_allclose(got, param.grad.numpy(), rtol=1e-6)
    assert "zero_grad" in example and "names=model" in example


@pytest.mark.parametrize("thing", [None, "loss", 3.0, [1, 2]], ids=["None", "str", "float",
                                                                     "list"])
def test_show_of_something_it_cannot_draw_says_what_it_draws(thing):
    widgets()
    from minigrad.widgets import show

    view = show(thing)
    assert type(thing).__name__ in view.text and "Tensors" in view.text
    assert_engine_intact()
