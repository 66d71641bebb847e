"""Op cases for the layers of nn/layers_more.py and nn/functional_layers_more.py (round 3
of the census)."""

from __future__ import annotations

CASES: list = []
