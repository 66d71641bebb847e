"""More of PyTorch's Tensor methods for reductions, statistics, indexing and linear
algebra (round 3 of the census): ...

``Tensor`` (tensor.py) inherits them, as it inherits tensor_compat.py's.
"""

from __future__ import annotations


class TensorStats:
    """Methods that ``Tensor`` inherits (it has the data; this class only forwards)."""

    __slots__ = ()
