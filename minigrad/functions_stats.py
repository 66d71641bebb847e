"""More of PyTorch's ``torch.*`` functions for reductions, statistics, indexing and
linear algebra (round 3 of the census)."""

from __future__ import annotations

__all__: list[str] = []
