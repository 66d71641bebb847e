"""``torch.nn.modules``: PyTorch's paths to its layer classes (``torch.nn.modules.loss``,
``torch.nn.modules.module.Module``, ...), for programs that import a class from there.

minigrad's layers live in the files of ``minigrad/nn``; each path below is a small module
that names the same classes (``nn.modules.linear.Linear is nn.Linear``). They are made
here, once, rather than as files that would only repeat imports (each is registered in
``sys.modules``, so ``import torch.nn.modules.loss`` finds it).
"""

from __future__ import annotations

import sys
import types

from . import conv as _conv
from . import dropout as _dropout
from . import module as _module

_nn = sys.modules[__name__.rsplit(".", 1)[0]]
LAYERS = {name: getattr(_nn, name) for name in _nn.__all__
          if isinstance(getattr(_nn, name, None), type)}

# PyTorch's submodule names; each shows every nn layer (a superset of what PyTorch puts in
# that file), so ``from torch.nn.modules.batchnorm import BatchNorm2d`` works
SUBMODULES = ("activation", "batchnorm", "container", "conv", "distance", "dropout",
              "flatten", "linear", "loss", "module", "normalization", "padding",
              "pixelshuffle", "pooling", "rnn", "sparse", "transformer", "upsampling")


def _make(name: str, extra: dict) -> types.ModuleType:
    module = types.ModuleType(f"{__name__}.{name}",
                              f"torch.nn.modules.{name}: minigrad.nn's layers, by PyTorch's path")
    module.__dict__.update(LAYERS)
    module.__dict__.update(extra)
    sys.modules[module.__name__] = module
    globals()[name] = module
    return module


for _name in SUBMODULES:
    _make(_name, {})

module.__dict__.update({"Module": _module.Module})  # noqa: F821  (made by _make above)
module.__dict__.update({name: getattr(_module, name) for name in dir(_module)  # noqa: F821
                        if name.startswith("register_module_")})
conv.__dict__.update({"_ConvTransposeNd": _conv._ConvTransposeNd})  # noqa: F821
dropout.__dict__.update({"_DropoutNd": _dropout._DropoutNd})  # noqa: F821
globals().update(LAYERS)
