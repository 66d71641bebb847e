"""Real graphs for the widget tests: an MLP loss, a small conv net, and a graph where
one tensor feeds two Functions. Each builder makes a fresh graph from the same seed, so
a test can build one for a widget and an identical one for ``backward()``."""

from __future__ import annotations

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn


def mlp_loss():
    """(model, loss): cross-entropy of a 4-8-3 MLP on 5 samples."""
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = mg.randn(5, 4)
    target = mg.tensor([0, 1, 2, 0, 1]).long()
    return model, F.cross_entropy(model(x), target)


def conv_loss():
    """(model, loss): a conv-ReLU-pool-linear net on two 1x6x6 images."""
    mg.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(2 * 3 * 3, 3))
    x = mg.randn(2, 1, 6, 6)
    return model, F.cross_entropy(model(x), mg.tensor([0, 2]).long())


def reused_loss():
    """(leaves, loss): h = x * w feeds both exp and sin, and x feeds two ops too."""
    mg.manual_seed(0)
    x = mg.tensor(mg.randn(3, 2).numpy(), requires_grad=True, label="x")
    w = mg.tensor(mg.randn(3, 2).numpy(), requires_grad=True, label="w")
    h = x * w
    loss = (h.exp() + h.sin() * x).sum()
    return {"x": x, "w": w}, loss


BUILDERS = {"mlp": mlp_loss, "conv": conv_loss, "reused": reused_loss}


def leaves_of(thing) -> list:
    """The leaf tensors a builder returned (a model's parameters, or a dict of leaves)."""
    return list(thing.parameters()) if isinstance(thing, nn.Module) else list(thing.values())
