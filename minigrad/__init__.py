"""minigrad: automatic differentiation and neural networks you can read.

    import minigrad as mg
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([2., 4., 6.])
"""

import numpy as _np

# process-wide, once: freed arrays' memory is kept for the next step instead of handed back
# to the OS and page-faulted in again (allocator.py says why; issue 33's CNN step)
from .allocator import keep_freed_memory as _keep_freed_memory

_keep_freed_memory()

from .unsupported import module_getattr as _module_getattr

from .autograd import BackwardStep, backward_steps, walk
from .checkpoint import checkpoint
from .errors import DimensionError, GradcheckError, ShapeError
from .factories import (arange, eye, full, full_like, linspace, ones, ones_like, rand, randint,
                        randn, randperm, tensor, zeros, zeros_like)
from .function import Context, Function, FunctionCtx, Node
from .gradcheck import gradcheck
from .serialization import load, save
from .state import (current_group, detect_anomaly, enable_grad,
                    get_rng_state, group, is_anomaly_enabled, is_grad_enabled, is_lazy, lazy,
                    manual_seed, no_grad, set_grad_enabled, set_mode, set_rng_state)
from .tensor import Tensor, cat, gather, pad_tensor, realize, stack, where

from . import data, nn, optim, utils  # noqa: E402  (they build on everything above)

float32 = _np.dtype(_np.float32)
float64 = _np.dtype(_np.float64)
int64 = _np.dtype(_np.int64)
int32 = _np.dtype(_np.int32)
bool_ = _np.dtype(_np.bool_)
float = float32  # noqa: A001 - PyTorch's spelling
double = float64
long = int64

# --- issue 11, part B: PyTorch's function spellings of the Tensor operations (mg.exp(x), ...)
from . import torch_functions as _torch_functions  # noqa: E402
from .torch_functions import *  # noqa: E402, F401, F403
# --- end of part B -------------------------------------------------------------------------

# --- issue 11, part A: PyTorch's semantics and infrastructure (dtypes, devices, random
# generators, the autograd namespace, factories) --------------------------------------------
from .backends import backends, cuda  # noqa: E402
from .device import (channels_last, contiguous_format, device,  # noqa: E402
                     preserve_format, strided)
from .dtypes import get_default_dtype, result_type, set_default_dtype  # noqa: E402
from .factories import (BoolTensor, ByteTensor, DoubleTensor, FloatTensor,  # noqa: E402
                        IntTensor, LongTensor, as_tensor, empty, empty_like, from_numpy,
                        is_tensor, logspace, numel, rand_like, randint_like,
                        randn_like)
from .state import (Generator, inference_mode, initial_seed, seed,  # noqa: E402
                    set_detect_anomaly, state as _state)

# mg.autograd is also PyTorch's torch.autograd namespace: Function (the Tensor form), grad,
# gradcheck ... are written in autograd_function.py, which builds on the engine's autograd.py
import sys as _sys  # noqa: E402

from . import autograd, autograd_function  # noqa: E402

for _name in autograd_function.__all__:
    setattr(autograd, _name, getattr(autograd_function, _name))
del _name
# torch.autograd.function, the module PyTorch's Function is defined in (import it, or
# `from torch.autograd.function import once_differentiable`)
autograd.function = _sys.modules["minigrad.autograd.function"] = type(_sys)(
    "minigrad.autograd.function", "torch.autograd.function: Function, FunctionCtx, "
    "once_differentiable (the same objects as in mg.autograd)")
autograd.function.__dict__.update({_name: getattr(autograd_function, _name) for _name in
                                   ("Function", "FunctionCtx", "once_differentiable")})
# mg.autograd.functional (torch.autograd.functional): jacobian, hessian, vjp, jvp, hvp, vhp
from . import autograd_functional  # noqa: E402

autograd.functional = autograd_functional
_sys.modules["minigrad.autograd.functional"] = autograd_functional
# mg.func (torch.func): grad, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call
from . import func  # noqa: E402
from .func import vmap  # noqa: E402  (torch.vmap is torch.func.vmap)

bool = bool_  # noqa: A001 - PyTorch's spelling
float16 = half = _np.dtype(_np.float16)
int16 = short = _np.dtype(_np.int16)
int8 = _np.dtype(_np.int8)
uint8 = _np.dtype(_np.uint8)
int = int32  # noqa: A001 - PyTorch's spelling
default_generator = _state.generator  # what mg.manual_seed seeds


def set_default_device(device_name) -> None:
    """Only the CPU: ``set_default_device("cpu")`` is accepted, anything else explains."""
    from .device import check_device

    check_device(device_name, "set_default_device")


def get_default_device() -> device:
    return device("cpu")


_PART_A = [
    "BoolTensor", "ByteTensor", "DoubleTensor", "FloatTensor", "Generator", "IntTensor",
    "LongTensor", "as_tensor", "backends", "bool", "cuda", "default_generator", "device",
    "empty", "empty_like", "float16", "from_numpy", "get_default_device", "get_default_dtype",
    "half", "inference_mode", "initial_seed", "int", "int16", "int8", "is_tensor",
    "logspace", "numel", "rand_like", "randint_like", "randn_like", "result_type", "seed",
    "set_default_device", "set_default_dtype", "set_detect_anomaly", "short", "uint8",
    "utils",
    "func", "vmap",  # issue 28
]
# --- end of part A ---------------------------------------------------------------------------


# --- issue 29: names the census of teaching code found programs using (constants, print
# options, dtype names, module paths) ----------------------------------------------------------
import math as _math  # noqa: E402
import types as _types  # noqa: E402

from . import amp, distributed, serialization, testing  # noqa: E402
from . import distributions  # noqa: E402  (torch.distributions)
from .amp import autocast  # noqa: E402
from .backends import (accelerator, get_float32_matmul_precision,  # noqa: E402
                       set_float32_matmul_precision, version)
from .dtypes import bfloat16  # noqa: E402
from .printing import set_printoptions  # noqa: E402
from . import functions_more as _functions_more  # noqa: E402
from .functions_more import *  # noqa: E402, F401, F403
from . import functions_math as _functions_math  # noqa: E402
from .functions_math import *  # noqa: E402, F401, F403
from . import special  # noqa: E402  (torch.special)
from . import functions_stats as _functions_stats  # noqa: E402
from .functions_stats import *  # noqa: E402, F401, F403

inf, nan, pi, e = _math.inf, _math.nan, _math.pi, _math.e
newaxis = None
finfo, iinfo = _np.finfo, _np.iinfo  # finfo(mg.float32).eps: dtypes are NumPy's


def compile(model=None, **options):  # noqa: A001 - PyTorch's name
    """``torch.compile(model)``: no compiler here, so the model itself, unchanged (compiling
    changes speed, not results); also usable as a decorator."""
    if model is None:
        return lambda function: function
    return model


# torch.random: the generator functions under their module's name
random = _types.SimpleNamespace(manual_seed=manual_seed, seed=seed, initial_seed=initial_seed,
                                get_rng_state=get_rng_state, set_rng_state=set_rng_state)


class Size(tuple):
    """``torch.Size``: a shape, a tuple of ints (minigrad's ``t.shape`` is a plain tuple)."""

    def numel(self) -> int:
        return int(_math.prod(self))

_ISSUE_29 = ["Size", "random", "accelerator", "amp", "autocast", "bfloat16", "compile",
             "distributed", "distributions", "e",
             "finfo", "get_float32_matmul_precision", "iinfo", "inf", "nan", "newaxis", "pi",
             "serialization", "set_float32_matmul_precision", "set_printoptions", "testing",
             "version", "special", "channels_last", "contiguous_format", "preserve_format",
             "strided",
             ] + _functions_more.__all__ + _functions_math.__all__ + _functions_stats.__all__
# --- end of issue 29 -------------------------------------------------------------------------

__version__ = "0.1.0"

__all__ = [
    "BackwardStep", "Context", "DimensionError", "Function", "FunctionCtx", "GradcheckError",
    "Node",
    "ShapeError", "Tensor", "arange", "backward_steps", "cat", "checkpoint", "current_group",
    "data", "default_generator", "detect_anomaly", "enable_grad", "eye", "full", "full_like",
    "gather", "get_rng_state", "gradcheck", "group", "is_anomaly_enabled", "is_grad_enabled",
    "is_lazy", "lazy", "linspace", "load", "manual_seed", "nn", "no_grad", "ones", "ones_like",
    "optim", "pad_tensor", "rand", "randint", "randn", "randperm", "realize", "save",
    "set_grad_enabled", "set_mode", "set_rng_state", "stack", "tensor", "walk", "where",
    "zeros", "zeros_like",
    "bool_", "double", "float", "float32", "float64", "int32", "int64", "long",
] + _torch_functions.__all__ + _PART_A + _ISSUE_29  # issue 11 (parts B and A), issue 29

# a name PyTorch has and minigrad leaves out on purpose says why (minigrad/unsupported.py)
__getattr__ = _module_getattr("torch")
