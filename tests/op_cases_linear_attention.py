"""Op cases for the fused layer Functions: ``Linear`` (minigrad/ops/matmul.py) and
``ScaledDotProductAttention`` (minigrad/ops/attention.py), called through
``minigrad.nn.functional`` as a user would (and ``torch.nn.functional`` for PyTorch).

The references are the definitions in plain NumPy float64: x W^T + b, and
softmax(q k^T * scale + mask) v.
"""

from __future__ import annotations

from op_cases import OpCase, real, torch

import minigrad.nn.functional as F

TF = torch.nn.functional if torch is not None else None


def linear_reference(x, weight, bias=None):
    return x @ weight.T + (0 if bias is None else bias)


CASES = [
    # --- linear: every leading shape goes through one matrix product ---
    OpCase("linear_2d", lambda x, w, b: F.linear(x, w, b), linear_reference,
           (real(4, 3), real(5, 3), real(5)), torch_fn=lambda x, w, b: TF.linear(x, w, b)),
    OpCase("linear_no_bias", lambda x, w: F.linear(x, w), linear_reference,
           (real(4, 3), real(2, 3)), torch_fn=lambda x, w: TF.linear(x, w)),
    OpCase("linear_1d_input", lambda x, w, b: F.linear(x, w, b), linear_reference,
           (real(3), real(4, 3), real(4)), torch_fn=lambda x, w, b: TF.linear(x, w, b)),
    OpCase("linear_3d_input", lambda x, w, b: F.linear(x, w, b), linear_reference,
           (real(2, 3, 4), real(5, 4), real(5)), torch_fn=lambda x, w, b: TF.linear(x, w, b)),
    OpCase("linear_4d_input", lambda x, w: F.linear(x, w), linear_reference,
           (real(2, 1, 3, 2), real(3, 2)), torch_fn=lambda x, w: TF.linear(x, w)),
    OpCase("linear_non_contiguous_input", lambda x, w, b: F.linear(x.transpose(0, 1), w, b),
           lambda x, w, b: linear_reference(x.swapaxes(0, 1), w, b),
           (real(3, 2, 4), real(2, 4), real(2)),
           torch_fn=lambda x, w, b: TF.linear(x.transpose(0, 1), w, b)),
]
