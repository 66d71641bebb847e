"""More of PyTorch's ``torch.*`` elementwise functions (round 3 of the census)."""

from __future__ import annotations

__all__: list[str] = []
