"""What minigrad deliberately leaves out of PyTorch's surface, and what to use instead.

Asking for one of these names (``mg.fft``, ``nn.Conv3d``, ...) raises an
``AttributeError`` that says so at once, rather than Python's bare "has no attribute".
The README's "PyTorch coverage" table is generated from this list.
"""

from __future__ import annotations

import importlib.abc
import sys

_CPU = "minigrad runs on the CPU with NumPy; there is no GPU or other device to use"
_NUMPY = "call NumPy on the values instead (t.detach().numpy())"
_HYPOT = ("left out on purpose: chapter 15 has you write it, as the Function MyHypot; "
          "meanwhile, (x * x + y * y).sqrt()")
_PROFILER = ("no profiler: time steps with mg.utils.benchmark.Timer or time.perf_counter(), "
             "or profile the Python with cProfile")

ABSENT: dict[str, dict[str, str]] = {
    "torch": {
        "fft": f"no Fourier transforms: {_NUMPY}, e.g. numpy.fft",
        "sparse": "no sparse tensors: every tensor is a dense NumPy array",
        "jit": "no compiler: minigrad runs Python eagerly (or defers with mg.lazy())",
        "complex64": "no complex tensors: real float32/float64 only",
        "complex128": "no complex tensors: real float32/float64 only",
        "hub": "nothing is downloaded: build the model in code and load a state dict "
               "with mg.load",
        "onnx": "no export formats: save a state dict with mg.save",
        "quantization": "no quantized tensors: float32/float64 only",
        "multiprocessing": "minigrad runs in one process; run the work in a loop (or use "
                           "Python's multiprocessing on NumPy arrays)",
        "fx": "no graph capture: minigrad's graph is the autograd graph (t.grad_fn, drawn "
              "by the widgets)",
        "profiler": _PROFILER,
        "futures": "no asynchronous work: every op runs when it is called",
        "export": "no export formats: save a state dict with mg.save",
        "ao": "no quantized tensors: float32/float64 only",
        "hypot": _HYPOT,
    },
    "torch.Tensor": {
        "hypot": _HYPOT,
        "hypot_": _HYPOT,
        "share_memory_": "one process: nothing to share between processes",
        "to_sparse": "no sparse tensors: every tensor is a dense NumPy array",
        "indices": "no sparse tensors (indices() is a sparse tensor's); the indices that "
                   "max(dim), min(dim), sort and topk return are their result's .indices",
    },
    "torch.nn": {
        "Conv3d": "2-D and 1-D convolution only: reshape volumes into 2-D slices",
    },
    "torch.nn.functional": {
        "conv3d": "2-D and 1-D convolution only",
        "grid_sample": "not implemented: F.interpolate resizes images",
    },
    "torch.optim": {
        "SparseAdam": "no sparse tensors: use Adam",
    },
    "torch.autograd": {
        "profiler": _PROFILER,
    },
}


# module paths below a refused name: importing one says why (``import torch.fx``,
# ``from torch.utils.tensorboard import SummaryWriter``, ``torch.distributed.rpc``)
REFUSED_MODULES = {
    **{f"torch.{name}": reason for name, reason in ABSENT["torch"].items()},
    "torch.distributed": _CPU + " in one process (mg.distributed.is_available() is False)",
    "torch.utils.tensorboard": "no TensorBoard: print the values, or plot them with "
                               "matplotlib",
    "torch.utils.data.distributed": _CPU + " in one process: use a RandomSampler",
}


def refused_module(torch_name: str) -> str | None:
    """Why ``torch_name`` (or the package it is in) is left out, or None."""
    for path, reason in REFUSED_MODULES.items():
        if torch_name == path or torch_name.startswith(path + "."):
            return reason
    return None


class _RefusedModuleFinder(importlib.abc.MetaPathFinder):
    """Consulted last, for a minigrad module that does not exist: if it is PyTorch's and
    left out on purpose, the import error says why (and what to use)."""

    def find_spec(self, fullname, path, target=None):
        if fullname.startswith("minigrad."):
            torch_name = "torch" + fullname[len("minigrad"):]
            reason = refused_module(torch_name)
            if reason:
                raise ModuleNotFoundError(f"{torch_name} is not supported by minigrad: "
                                          f"{reason}", name=fullname)
        return None


if not any(isinstance(f, _RefusedModuleFinder) for f in sys.meta_path):
    sys.meta_path.append(_RefusedModuleFinder())


def absent(namespace: str, name: str) -> AttributeError:
    """The error for ``namespace.name``: why minigrad lacks it and what to use."""
    reason = ABSENT.get(namespace, {}).get(name)
    if reason is None:
        return AttributeError(f"minigrad ({namespace}) has no attribute {name!r}")
    return AttributeError(f"{namespace}.{name} is not supported by minigrad: {reason}")


class Refused:
    """A class attribute for a name of ``ABSENT[namespace]``: reading it raises the
    error that says why (``Tensor``'s, where a ``__getattr__`` would slow down every
    attribute read of every tensor: Python's fast attribute paths skip a class that has
    one; callgrind, a dispatch step 2.6% fewer instructions without it)."""

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace, self.name = namespace, name

    def __get__(self, instance: object, owner: type | None = None) -> None:
        raise absent(self.namespace, self.name)


def refuse_names(cls: type, namespace: str) -> None:
    """Give ``cls`` a ``Refused`` attribute for each name of ``ABSENT[namespace]``."""
    for name in ABSENT[namespace]:
        setattr(cls, name, Refused(namespace, name))


def module_getattr(namespace: str):
    """A module-level ``__getattr__`` that explains the names of ``ABSENT[namespace]``."""

    def __getattr__(name: str):
        raise absent(namespace, name)

    return __getattr__
