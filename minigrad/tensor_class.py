"""Where the engine finds the Tensor class: tensor.py hands it over here, once.

tensor.py imports the engine (each Tensor method calls a Function), so no engine module
can import tensor.py back. This module imports nothing; tensor.py calls ``register`` right
after defining ``Tensor``, and every engine module that makes or recognises a tensor
reads it as ``tensor_class.Tensor`` (the attribute, at call time: a name imported with
``from .tensor_class import Tensor`` would keep the placeholder below).
"""


class Tensor:
    """Placeholder until ``minigrad.tensor`` registers the real class (on import)."""


def register(cls: type) -> None:
    """Called once, by tensor.py: from now on ``tensor_class.Tensor`` is ``cls``."""
    global Tensor
    Tensor = cls
