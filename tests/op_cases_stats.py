"""Op cases for the reductions, statistics, indexing and linear algebra of tensor_stats.py
/ functions_stats.py (round 3 of the census)."""

from __future__ import annotations

CASES: list = []
