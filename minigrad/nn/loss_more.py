"""More of PyTorch's loss layers (round 3 of the census): the ranking, metric and
likelihood losses, and pairwise distance."""

from __future__ import annotations

__all__: list[str] = []
