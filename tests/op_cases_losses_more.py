"""Op cases for the losses of nn/loss_more.py and nn/functional_losses_more.py (round 3 of
the census)."""

from __future__ import annotations

CASES: list = []
