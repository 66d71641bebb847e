"""Make notebooks/data/torch_mlp.npz, the PyTorch side of chapter 15's bridge.

A small PyTorch MLP, ``nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))``,
seeded, its ``state_dict`` saved as NumPy arrays under PyTorch's own keys (``0.weight``,
``0.bias``, ``2.weight``, ``2.bias``), with an input batch ``input`` (5, 4), class
targets ``target`` (5,), and what PyTorch computed from them: the logits ``output``, the
cross-entropy ``loss`` and each parameter's gradient (``grad.0.weight``, ...). A plain
``np.savez`` archive: no pickle, so ``mg.load`` reads it and Binder needs no PyTorch.

Run it from the repository root, with PyTorch 2.13.0 for the CPU installed
(``pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu``)::

    .venv/bin/python scripts/make_torch_reference.py

tests/test_chapter_15_debugging.py calls ``make_reference()`` and checks that the
committed file holds the same numbers, so the file cannot go stale.
"""

from __future__ import annotations

import pathlib

import numpy as np

PATH = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "data" / "torch_mlp.npz"
SEED = 15


def make_reference() -> dict[str, np.ndarray]:
    """The arrays of torch_mlp.npz, computed with PyTorch (imported here, not at the top:
    the rest of the course never needs it)."""
    import torch

    torch.manual_seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    x = torch.randn(5, 4)
    target = torch.tensor([0, 2, 1, 2, 0])
    output = model(x)
    loss = torch.nn.functional.cross_entropy(output, target)
    loss.backward()
    arrays = {key: value.detach().numpy().copy() for key, value in model.state_dict().items()}
    arrays.update(input=x.numpy().copy(), target=target.numpy().copy(),
                  output=output.detach().numpy().copy(), loss=loss.detach().numpy().copy())
    arrays.update({f"grad.{name}": p.grad.numpy().copy()
                   for name, p in model.named_parameters()})
    return arrays


def main() -> None:
    PATH.parent.mkdir(parents=True, exist_ok=True)
    np.savez(PATH, **make_reference())
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
