"""Short PyTorch programs, written once, run twice: with PyTorch and with minigrad.

Each program is the kind of code taught in PyTorch's tutorials, d2l.ai, the makemore and
micrograd lectures or minGPT, written against a ``torch`` namespace that the test passes
in: ``torch`` itself, or ``minigrad`` (as ``import minigrad as torch`` would). Where
randomness would differ between the two libraries, the program takes its starting
weights and data from NumPy, so both runs compute the same numbers, which the test
compares.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import minigrad

# --- helpers shared by the programs -------------------------------------------------------


def numpy_weights(model, seed: int, scale: float = 0.3) -> dict:
    """Seeded NumPy values for each of ``model``'s parameters, by name."""
    rng = np.random.default_rng(seed)
    return {k: (rng.standard_normal(tuple(v.shape)) * scale).astype(np.float32)
            for k, v in model.named_parameters()}


def load_numpy_weights(torch, model, seed: int, scale: float = 0.3) -> None:
    weights = numpy_weights(model, seed, scale)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)


def as_array(value):
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return np.asarray(value)


# --- the programs ---------------------------------------------------------------------------


def makemore_mlp(torch):
    """Karpathy's makemore part 2: an embedding table, a tanh layer, manual SGD."""
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    X = torch.tensor(rng.integers(0, 27, size=(32, 3)))
    Y = torch.tensor(rng.integers(0, 27, size=(32,)))
    C = torch.tensor(rng.standard_normal((27, 2)).astype(np.float32))
    W1 = torch.tensor(rng.standard_normal((6, 100)).astype(np.float32)) * 0.2
    b1 = torch.tensor(rng.standard_normal(100).astype(np.float32)) * 0.01
    W2 = torch.tensor(rng.standard_normal((100, 27)).astype(np.float32)) * 0.01
    b2 = torch.zeros(27)
    parameters = [C, W1, b1, W2, b2]
    for p in parameters:
        p.requires_grad = True
    assert sum(p.nelement() for p in parameters) == 27 * 2 + 600 + 100 + 2700 + 27
    losses = []
    for step in range(20):
        ix = torch.tensor(rng.integers(0, X.shape[0], size=(8,)))
        emb = C[X[ix]]
        h = torch.tanh(emb.view(-1, 6) @ W1 + b1)
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, Y[ix])
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if step < 10 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        losses.append(loss.item())
    # sampling: the values differ between libraries, the shapes and ranges do not
    g = torch.Generator().manual_seed(2147483647)
    probs = F.softmax(logits, dim=1)
    sample = torch.multinomial(probs[0], num_samples=5, replacement=True, generator=g)
    assert tuple(sample.shape) == (5,) and 0 <= int(sample.min()) and int(sample.max()) < 27
    return {"losses": np.array(losses), "C": C, "W2": W2.grad}


def polynomial_with_custom_function(torch):
    """PyTorch's "defining new autograd functions" tutorial, with a cubic of our own."""

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input ** 3 - 2 * input

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * (3 * input ** 2 - 2)

    x = torch.linspace(-1, 1, 200, dtype=torch.float64)
    y = torch.sin(x * 1.5)
    a = torch.full((), 0.1, dtype=torch.float64, requires_grad=True)
    b = torch.full((), -0.5, dtype=torch.float64, requires_grad=True)
    c = torch.full((), 0.3, dtype=torch.float64, requires_grad=True)
    lr = 1e-3
    for _ in range(50):
        y_pred = a + Cube.apply(b + c * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c):
                p -= lr * p.grad
                p.grad = None
    return {"loss": loss.item(), "abc": np.array([a.item(), b.item(), c.item()])}


def logistic_regression_with_dataloader(torch):
    """An nn.Module, a DataLoader over a TensorDataset, SGD, BCE with logits."""
    nn = torch.nn
    from importlib import import_module

    data = import_module(torch.__name__ + ".utils.data")
    rng = np.random.default_rng(1)
    features = rng.standard_normal((64, 3)).astype(np.float32)
    labels = (features @ np.array([1.0, -2.0, 0.5]) > 0).astype(np.float32)

    class LogisticRegression(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(3, 1)

        def forward(self, x):
            return self.linear(x).squeeze(1)

    model = LogisticRegression()
    load_numpy_weights(torch, model, seed=1)
    dataset = data.TensorDataset(torch.from_numpy(features), torch.from_numpy(labels))
    loader = data.DataLoader(dataset, batch_size=16, shuffle=False)
    criterion = nn.BCEWithLogitsLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    losses = []
    for _ in range(3):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        predicted = (torch.sigmoid(model(torch.from_numpy(features))) > 0.5).float()
        accuracy = (predicted == torch.from_numpy(labels)).float().mean().item()
    return {"losses": np.array(losses), "accuracy": accuracy, "weight": model.linear.weight}


def cnn_classifier(torch):
    """The CIFAR tutorial's shape of network, on 8x8 images."""
    nn = torch.nn
    F = torch.nn.functional
    from importlib import import_module

    data = import_module(torch.__name__ + ".utils.data")

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(4, 8, 3)
            self.fc1 = nn.Linear(8 * 2 * 2, 16)
            self.fc2 = nn.Linear(16, 3)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = F.relu(self.conv2(x))
            x = torch.flatten(x, 1)
            return self.fc2(F.relu(self.fc1(x)))

    rng = np.random.default_rng(2)
    images = torch.from_numpy(rng.standard_normal((24, 1, 8, 8)).astype(np.float32))
    targets = torch.from_numpy(rng.integers(0, 3, size=24))
    net = Net()
    load_numpy_weights(torch, net, seed=2)
    loader = data.DataLoader(data.TensorDataset(images, targets), batch_size=8)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        for inputs, labels in loader:
            optimizer.zero_grad()
            loss = criterion(net(inputs), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    correct = total = 0
    with torch.no_grad():
        for inputs, labels in loader:
            outputs = net(inputs)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    return {"losses": np.array(losses), "correct": correct, "total": total}


def lstm_sequence_model(torch):
    """A sequence classifier: LSTM (batch first), the last hidden state, a linear head."""
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(input_size=4, hidden_size=8, num_layers=1, batch_first=True)
            self.gru = nn.GRU(8, 6, batch_first=True)
            self.head = nn.Linear(6, 2)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            out, h = self.gru(out)
            return self.head(h[-1])

    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.standard_normal((5, 7, 4)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 2, size=5))
    model = Model()
    load_numpy_weights(torch, model, seed=3)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(4):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return {"losses": np.array(losses)}


def mingpt_attention_block(torch):
    """minGPT's CausalSelfAttention and Block, trained a few steps with AdamW and weight
    decay on the matrices only."""
    nn = torch.nn
    F = torch.nn.functional
    n_embd, n_head, block_size = 16, 4, 8

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / np.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd),
                                          c_proj=nn.Linear(4 * n_embd, n_embd),
                                          act=nn.GELU()))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            m = self.mlp
            return x + m.c_proj(m.act(m.c_fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(11, n_embd)
            self.wpe = nn.Embedding(block_size, n_embd)
            self.block = Block()
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, 11, bias=False)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
            x = self.block(self.wte(idx) + self.wpe(pos))
            logits = self.lm_head(self.ln_f(x))
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
            return logits, loss

    model = GPT()
    load_numpy_weights(torch, model, seed=4, scale=0.2)
    decay, no_decay = set(), set()
    for mn, m in model.named_modules():
        for pn, _ in m.named_parameters():
            fpn = f"{mn}.{pn}" if mn else pn
            if pn.endswith("bias"):
                no_decay.add(fpn)
            elif pn.endswith("weight") and isinstance(m, nn.Linear):
                decay.add(fpn)
            elif pn.endswith("weight") and isinstance(m, (nn.LayerNorm, nn.Embedding)):
                no_decay.add(fpn)
    assert not decay & no_decay and decay | no_decay == set(dict(model.named_parameters()))
    params = dict(model.named_parameters())
    groups = [{"params": [params[n] for n in sorted(decay)], "weight_decay": 0.1},
              {"params": [params[n] for n in sorted(no_decay)], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=3e-3, betas=(0.9, 0.95))
    rng = np.random.default_rng(4)
    idx = torch.from_numpy(rng.integers(0, 11, size=(3, block_size)))
    targets = torch.roll(idx, -1, 1)
    losses = []
    for _ in range(4):
        logits, loss = model(idx, targets)
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"losses": np.array(losses), "logits": logits}


def state_dict_round_trip(torch, tmp_path, other):
    """A model saved by one library loads into the same model of the other."""
    nn = torch.nn

    def make(lib):
        return lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.ReLU(), lib.nn.Linear(5, 2))

    model = make(torch)
    load_numpy_weights(torch, model, seed=5)
    path = tmp_path / f"{torch.__name__}.pt"
    torch.save(model.state_dict(), path)
    loaded = torch.load(path, weights_only=True, map_location="cpu")
    assert list(loaded) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert tuple(loaded["0.weight"].size()) == (5, 3)
    twin = make(other)
    if other is minigrad:
        twin.load_state_dict(model.state_dict())  # PyTorch's tensors, as they are
    else:  # PyTorch takes only its own tensors
        twin.load_state_dict({k: other.as_tensor(np.asarray(v))
                              for k, v in model.state_dict().items()})
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    ours, theirs = model(torch.from_numpy(x)), twin(other.from_numpy(x))
    np.testing.assert_allclose(as_array(ours), as_array(theirs), rtol=1e-5, atol=1e-6)
    again = make(torch)
    again.load_state_dict(loaded)
    assert isinstance(nn.Module(), nn.Module)
    return {"out": again(torch.from_numpy(x))}


def hooks_and_retain_grad(torch):
    """Tensor hooks that read and change a gradient, and retain_grad on a non-leaf."""
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    seen = []
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda grad: seen.append(grad.clone()))
    handle = x.register_hook(lambda grad: grad * 10)
    y = (h.exp() * h).sum()
    y.backward()
    first = x.grad.clone()
    handle.remove()
    x.grad.zero_()
    (x ** 2).sum().backward()
    return {"h.grad": h.grad, "seen": seen[0], "first": first, "second": x.grad}


def autograd_grad(torch):
    """torch.autograd.grad for the gradient of a function without touching .grad."""
    x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    w = torch.tensor([1.5, -0.5], requires_grad=True)
    out = torch.tanh(x @ w).sum()
    gx, gw = torch.autograd.grad(out, (x, w), retain_graph=True)
    (gw_again,) = torch.autograd.grad([out], [w], grad_outputs=[torch.tensor(2.0)])
    assert x.grad is None and w.grad is None
    return {"gx": gx, "gw": gw, "gw_again": gw_again}


def learning_rate_schedules(torch):
    """The rates a few schedulers give, step by step."""
    sched = torch.optim.lr_scheduler
    w = torch.nn.Parameter(torch.zeros(2))
    rates = {}
    for name, make in {
        "step": lambda o: sched.StepLR(o, step_size=3, gamma=0.5),
        "multistep": lambda o: sched.MultiStepLR(o, milestones=[2, 5], gamma=0.1),
        "exponential": lambda o: sched.ExponentialLR(o, gamma=0.9),
        "cosine": lambda o: sched.CosineAnnealingLR(o, T_max=6),
        "onecycle": lambda o: sched.OneCycleLR(o, max_lr=0.5, total_steps=10),
    }.items():
        optimizer = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        scheduler = make(optimizer)
        values = []
        for _ in range(8):
            optimizer.step()
            scheduler.step()
            values.append(scheduler.get_last_lr()[0])
        rates[name] = np.array(values)
    return rates


def no_grad_evaluation(torch):
    """Evaluation as tutorials write it: eval(), no_grad, torch.max(out.data, 1)."""
    nn = torch.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.ReLU(), nn.Linear(8, 3),
                          nn.LogSoftmax(dim=1))
    load_numpy_weights(torch, model, seed=6)
    rng = np.random.default_rng(6)
    x = torch.from_numpy(rng.standard_normal((10, 4)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 3, size=10))
    model.eval()
    with torch.no_grad():
        out = model(x)
        loss = nn.NLLLoss()(out, y)
        _, predicted = torch.max(out.data, 1)
        correct = (predicted == y).sum().item()
    assert not out.requires_grad
    return {"loss": loss.item(), "correct": correct, "out": out}


def d2l_linear_regression_from_scratch(torch):
    """d2l.ai 3.2: a linear model, minibatch SGD written by hand."""
    rng = np.random.default_rng(7)
    true_w, true_b = torch.tensor([2, -3.4]), 4.2
    X = torch.from_numpy(rng.standard_normal((100, 2)).astype(np.float32))
    y = torch.matmul(X, true_w) + true_b
    y = y.reshape((-1, 1))
    w = torch.tensor(rng.normal(0, 0.01, (2, 1)).astype(np.float32), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)

    def sgd(params, lr, batch_size):
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    for _epoch in range(3):
        for start in range(0, 100, 10):
            Xb, yb = X[start:start + 10], y[start:start + 10]
            loss = ((torch.matmul(Xb, w) + b - yb) ** 2 / 2).sum()
            loss.backward()
            sgd([w, b], 0.03, 10)
    return {"w": w, "b": b}


def micrograd_style_scalars(torch):
    """The micrograd README's check against PyTorch: scalars and double precision."""
    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    assert y.dtype == torch.float64
    return {"y": y.data.item(), "x.grad": x.grad.item(), "g": g.data.item(),
            "a.grad": a.grad.item(), "b.grad": b.grad.item()}


def tensor_basics(torch):
    """The "tensors" tutorial: dtypes, creation, indexing, joining, in-place updates."""
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    x_ones = torch.ones_like(x_data)
    x_rand = torch.rand_like(x_data, dtype=torch.float)
    assert x_data.dtype == torch.int64 and x_rand.dtype == torch.float32
    assert torch.is_tensor(x_ones) and x_ones.dtype == torch.int64
    tensor = torch.ones(4, 4)
    tensor[:, 1] = 0
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)
    z1 = tensor * tensor
    agg = tensor.sum()
    tensor.add_(5)
    n = tensor.numpy()
    tensor.add_(1)  # the NumPy array shares memory with the tensor
    t = torch.from_numpy(np.ones(3))
    np.add(t.numpy(), 1, out=t.numpy())
    mixed = torch.tensor([1, 2, 3]) * 0.5  # int64 tensor times a float: float32
    assert mixed.dtype == torch.float32
    assert (torch.tensor([1.0, 2.0]) + torch.tensor([1, 2])).dtype == torch.float32
    return {"t1": t1, "y1": y1, "y2": y2, "y3": y3, "z1": z1, "agg": agg.item(), "n": n,
            "t": t, "tril": torch.tril(torch.ones(3, 3)),
            "exp": torch.exp(torch.tensor([0.0, 1.0])), "mixed": mixed}


PROGRAMS = [makemore_mlp, polynomial_with_custom_function, logistic_regression_with_dataloader,
            cnn_classifier, lstm_sequence_model, mingpt_attention_block,
            hooks_and_retain_grad, autograd_grad, learning_rate_schedules,
            no_grad_evaluation, d2l_linear_regression_from_scratch, micrograd_style_scalars,
            tensor_basics]


def assert_same(ours: dict, theirs: dict, rtol: float = 2e-4, atol: float = 1e-5) -> None:
    assert ours.keys() == theirs.keys()
    for key in theirs:
        assert np.isfinite(as_array(theirs[key])).all(), f"{key}: the program diverged"

        np.testing.assert_allclose(as_array(ours[key]), as_array(theirs[key]), rtol=rtol,
                                   atol=atol, err_msg=key)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_a_pytorch_program_gives_pytorch_numbers_on_minigrad(program, torch):
    assert_same(program(minigrad), program(torch))


@pytest.mark.parametrize("direction", ["minigrad to torch", "torch to minigrad"])
def test_a_state_dict_saved_by_one_library_loads_into_the_other(direction, torch, tmp_path):
    first, second = (minigrad, torch) if direction == "minigrad to torch" else (torch, minigrad)
    state_dict_round_trip(first, tmp_path, second)


def test_minigrad_utils_data_is_the_data_package():
    assert importlib.import_module("minigrad.utils.data").DataLoader is minigrad.data.DataLoader
