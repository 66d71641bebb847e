"""More of PyTorch's elementwise Tensor methods (round 3 of the census): ...

``Tensor`` (tensor.py) inherits them, as it inherits tensor_compat.py's.
"""

from __future__ import annotations


class TensorMath:
    """Methods that ``Tensor`` inherits (it has the data; this class only forwards)."""

    __slots__ = ()
