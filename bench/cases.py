"""The benchmark cases. Each ``build_*`` returns ``{contender: step}``: a function that
runs one training step (or one pass of the measured work) for that contender.

minigrad and PyTorch run *the same model code*: the functions below take the library
(``mg`` or ``torch``) as an argument and use only names the two share, which is also a
test that minigrad's API matches PyTorch's. The hand-written NumPy versions are what a
careful student would write by hand: forward, backward by the chain rule, update.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from types import SimpleNamespace

import numpy as np

Step = Callable[[], object]


def libraries(with_torch: bool) -> dict[str, SimpleNamespace]:
    """The libraries to compare, each as ``lib.nn``, ``lib.F``, ``lib.optim``,
    ``lib.tensor(array)``, ``lib.checkpoint``."""
    import minigrad as mg
    import minigrad.nn.functional as mg_F

    libs = {"minigrad": SimpleNamespace(name="minigrad", nn=mg.nn, F=mg_F, optim=mg.optim,
                                        tensor=mg.tensor, manual_seed=mg.manual_seed,
                                        checkpoint=mg.checkpoint)}
    if with_torch:
        import torch
        import torch.nn.functional as torch_F
        import torch.utils.checkpoint

        torch.set_num_threads(1)

        def checkpoint(fn, *args):
            return torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False)

        libs["torch"] = SimpleNamespace(name="torch", nn=torch.nn, F=torch_F, optim=torch.optim,
                                        tensor=torch.from_numpy, manual_seed=torch.manual_seed,
                                        checkpoint=checkpoint)
    return libs


def _same_weights(lib: SimpleNamespace, model, reference: dict | None) -> dict:
    """Give ``model`` the weights of the first contender's model (``reference``, a
    minigrad state dict), so every contender computes the same numbers; returns the
    state dict to use as the reference."""
    if reference is None:
        return model.state_dict()
    model.load_state_dict({key: lib.tensor(np.array(value)) for key, value in reference.items()})
    return reference


def _training_step(lib: SimpleNamespace, model, optimizer, loss_fn: Callable,
                   inputs: tuple) -> Step:
    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(*inputs[:-1]), inputs[-1])
        loss.backward()
        optimizer.step()
        return loss

    step.model = model  # for cases that watch it (gradient_flow)
    return step


# --- MLP 784-256-256-10 ------------------------------------------------------------------


MLP_SIZES = (784, 256, 256, 10)  # input, two hidden layers, classes
OVERHEAD_SIZES = (8, 8, 8, 10)  # the same layers with almost no arithmetic in them


def mlp_model(lib: SimpleNamespace, sizes: tuple = MLP_SIZES):
    nn = lib.nn
    inputs, hidden, hidden2, classes = sizes
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden2),
                         nn.ReLU(), nn.Linear(hidden2, classes))


class NumpyMLP:
    """The same MLP by hand: ReLU layers, softmax cross-entropy, plain SGD."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], lr: float) -> None:
        self.layers = [(w.copy(), b.copy()) for w, b in layers]  # (out, in) like nn.Linear
        self.lr = lr

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        # forward, keeping each layer's input for the backward pass
        inputs, h = [], x
        for i, (w, b) in enumerate(self.layers):
            inputs.append(h)
            h = h @ w.T + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0)
        n = len(y)
        shifted = h - h.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -log_probs[np.arange(n), y].mean()
        # backward: d loss / d logits = (softmax - onehot) / n
        grad = np.exp(log_probs)
        grad[np.arange(n), y] -= 1
        grad /= n
        for i in reversed(range(len(self.layers))):
            w, b = self.layers[i]
            grad_w, grad_b = grad.T @ inputs[i], grad.sum(axis=0)
            if i > 0:
                grad = (grad @ w) * (inputs[i] > 0)  # through the ReLU that made inputs[i]
            w -= self.lr * grad_w
            b -= self.lr * grad_b
        return loss


def build_mlp(libs: dict, batch: int = 128, sizes: tuple = MLP_SIZES) -> dict[str, Step]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)
    steps, reference = {}, None
    for name, lib in libs.items():
        lib.manual_seed(0)
        model = mlp_model(lib, sizes)
        reference = _same_weights(lib, model, reference)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
        steps[name] = _training_step(lib, model, optimizer, lib.F.cross_entropy,
                                     (lib.tensor(x), lib.tensor(y)))
        if name == "minigrad":
            layers = [(m.weight.numpy(), m.bias.numpy()) for m in model if hasattr(m, "weight")]
            steps["numpy"] = partial(NumpyMLP(layers, lr=0.01).step, x, y)
    return steps


def build_mlp_overhead(libs: dict) -> dict[str, Step]:
    """The MLP case's step at batch 4 with 8 features: what a training step costs
    besides its arithmetic (module calls, recording the graph, the backward walk, the
    optimizer's loop). The MLP case's ratio to NumPy is this cost over NumPy's BLAS time."""
    return build_mlp(libs, batch=4, sizes=OVERHEAD_SIZES)


def build_mlp_minigrad() -> tuple[Step, object]:
    """The MLP case's minigrad step alone, and its model (for the gradient_flow case)."""
    lib = libraries(with_torch=False)["minigrad"]
    steps = build_mlp({"minigrad": lib})
    return steps["minigrad"], steps["minigrad"].model


# --- CNN on 1x28x28 ----------------------------------------------------------------------


def cnn_model(lib: SimpleNamespace):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


def build_cnn(libs: dict) -> dict[str, Step]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 32)
    steps, reference = {}, None
    for name, lib in libs.items():
        lib.manual_seed(0)
        model = cnn_model(lib)
        reference = _same_weights(lib, model, reference)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
        steps[name] = _training_step(lib, model, optimizer, lib.F.cross_entropy,
                                     (lib.tensor(x), lib.tensor(y)))
    return steps


# --- one pre-norm transformer block ---------------------------------------------------------


def transformer_block(lib: SimpleNamespace, width: int = 128, heads: int = 4):
    nn, F = lib.nn, lib.F

    class Block(nn.Module):
        """x + attention(LN(x)), then x + MLP(LN(x)): GPT's block."""

        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(width)
            self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
            self.ln2 = nn.LayerNorm(width)
            self.fc1 = nn.Linear(width, 4 * width)
            self.fc2 = nn.Linear(4 * width, width)

        def forward(self, x, mask):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    return Block()


def build_transformer(libs: dict) -> dict[str, Step]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 64, 128)).astype(np.float32)
    target = rng.standard_normal((16, 64, 128)).astype(np.float32)
    causal = np.triu(np.ones((64, 64), dtype=bool), k=1)  # True = may not attend
    steps, reference = {}, None
    for name, lib in libs.items():
        lib.manual_seed(0)
        block = transformer_block(lib)
        reference = _same_weights(lib, block, reference)
        optimizer = lib.optim.AdamW(block.parameters(), lr=1e-3)
        steps[name] = _training_step(lib, block, optimizer, lib.F.mse_loss,
                                     (lib.tensor(x), lib.tensor(causal), lib.tensor(target)))
    return steps


# --- dispatch overhead: 200 tiny ops ----------------------------------------------------------


def tiny_ops(lib: SimpleNamespace, x) -> None:
    """200 elementwise ops on a 4x4 tensor, then backward: almost all overhead."""
    y = x
    for _ in range(50):
        y = (y * 0.5 + 0.25).tanh().relu()
    y.sum().backward()


def build_dispatch(libs: dict) -> dict[str, Step]:
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    return {name: (lambda lib=lib: tiny_ops(lib, lib.tensor(x).requires_grad_()))
            for name, lib in libs.items()}


# --- a 100,000-node chain ---------------------------------------------------------------------


def long_chain(lib: SimpleNamespace, x, length: int = 100_000) -> None:
    y = x
    for _ in range(length // 2):
        y = y * 0.999 + 0.001
    y.sum().backward()


def build_chain(libs: dict) -> dict[str, Step]:
    x = np.ones(4, dtype=np.float32)
    return {name: (lambda lib=lib: long_chain(lib, lib.tensor(x).requires_grad_()))
            for name, lib in libs.items()}


# --- peak memory with and without checkpoint ---------------------------------------------------


def deep_mlp(lib: SimpleNamespace, blocks: int = 8, width: int = 512):
    nn = lib.nn
    return nn.ModuleList([nn.Sequential(nn.Linear(width, width), nn.GELU(),
                                        nn.Linear(width, width), nn.GELU())
                          for _ in range(blocks)])


def memory_steps(lib: SimpleNamespace) -> dict[str, Step]:
    """A forward and backward pass through 8 blocks, plain and with every block
    checkpointed. Gradients already exist (zeros, accumulated in place), so the peak
    measured above the starting point is the activations' memory."""
    lib.manual_seed(0)
    model = deep_mlp(lib)
    x = lib.tensor(np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32))

    def run(use_checkpoint: bool) -> None:
        h = x
        for block in model:
            h = lib.checkpoint(block, h) if use_checkpoint else block(h)
        h.pow(2).mean().backward()

    run(False)  # creates every .grad
    for p in model.parameters():
        p.grad.zero_()
    return {"plain": lambda: run(False), "checkpoint": lambda: run(True)}
