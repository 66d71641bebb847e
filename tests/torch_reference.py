"""Helpers for comparing a minigrad module with the same torch.nn module."""

from __future__ import annotations

import numpy as np


def load_torch_weights(ours, theirs) -> None:
    """Copy a torch module's state dict, as NumPy arrays, into the minigrad module."""
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def assert_parameter_gradients_match(ours, theirs, rtol: float, atol: float) -> None:
    """Every parameter of ``theirs`` has a twin of the same name in ``ours`` with the same
    gradient."""
    ours_params = dict(ours.named_parameters())
    for name, param in theirs.named_parameters():
        np.testing.assert_allclose(ours_params[name].grad.numpy(), param.grad.numpy(), rtol,
                                   atol, err_msg=name)
