"""Op cases for the elementwise functions of tensor_math.py / functions_math.py (round 3 of
the census)."""

from __future__ import annotations

CASES: list = []
