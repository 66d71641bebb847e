"""More of PyTorch's functionals (round 3 of the census): pooling with indices, unpooling,
adaptive max pooling, local response norm, alpha dropout, bilinear, embedding bags."""

from __future__ import annotations

__all__: list[str] = []
