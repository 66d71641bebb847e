"""Short programs in the style of the courses minigrad follows, each written once against
a ``torch``-like namespace and run with PyTorch and with minigrad: they use the tensor
operations of issue 11, part B (function spellings, masked_fill, split, tril, softmax,
contiguous().view(), in-place updates, sampling) the way those lessons do.

Weights are given as NumPy arrays, so both runs start from the same numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg


def weights(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape) * 0.5).astype(np.float32) for shape in shapes]


def causal_self_attention(torch, x, w_qkv, w_proj, n_head):
    """minGPT's CausalSelfAttention.forward, with the projections as plain matrices."""
    B, T, C = x.size()
    q, k, v = (x @ w_qkv).split(C, dim=2)
    k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
    q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
    v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    bias = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
    att = att.masked_fill(bias[:, :, :T, :T] == 0, float("-inf"))
    att = torch.softmax(att, dim=-1)
    y = att @ v
    y = y.transpose(1, 2).contiguous().view(B, T, C)
    return y @ w_proj


def run_attention(torch):
    x, w_qkv, w_proj = weights((2, 5, 8), (8, 24), (8, 8))
    x = torch.tensor(x)
    w_qkv = torch.tensor(w_qkv, requires_grad=True)
    w_proj = torch.tensor(w_proj, requires_grad=True)
    y = causal_self_attention(torch, x, w_qkv, w_proj, n_head=2)
    loss = y.pow(2).mean()
    loss.backward()
    return [y.detach().numpy(), w_qkv.grad.numpy(), w_proj.grad.numpy()]


def run_makemore_mlp(torch):
    """A character MLP trained by hand (makemore part 2): an embedding table indexed by
    integer contexts, tanh hidden layer, log_softmax loss, p.data += -lr * p.grad."""
    C, W1, b1, W2, b2 = (torch.tensor(w) for w in weights((27, 4), (12, 16), (16,), (16, 27),
                                                          (27,)))
    parameters = [C, W1, b1, W2, b2]
    for p in parameters:
        p.requires_grad = True
    rng = np.random.default_rng(1)
    X = torch.tensor(rng.integers(0, 27, (32, 3)))
    Y = torch.tensor(rng.integers(0, 27, 32))
    losses = []
    for _ in range(5):
        emb = C[X]
        h = torch.tanh(emb.view(-1, 12) @ W1 + b1)
        logits = h @ W2 + b2
        loss = -torch.log_softmax(logits, dim=1)[torch.arange(32), Y].mean()
        for p in parameters:
            p.grad = None
        loss.backward()
        for p in parameters:
            p.data += -0.1 * p.grad
        losses.append(loss.item())
    with torch.no_grad():
        probs = torch.softmax(logits, dim=1)
        top = torch.topk(probs, 3, dim=1)
    return [np.array(losses), C.detach().numpy(), top.values.numpy(), top.indices.numpy()]


def run_softmax_regression(torch):
    """d2l's softmax regression from scratch: exp / sum, cross entropy by indexing with
    range(), accuracy with argmax(axis=1) and type(), and the SGD step in no_grad."""
    features, W, b = weights((20, 6), (6, 3), (3,))
    X = torch.tensor(features)
    y = torch.tensor(np.arange(20) % 3)
    W, b = torch.tensor(W, requires_grad=True), torch.tensor(b, requires_grad=True)

    def softmax(X):
        X_exp = torch.exp(X)
        partition = X_exp.sum(1, keepdim=True)
        return X_exp / partition

    def cross_entropy(y_hat, y):
        return -torch.log(y_hat[range(len(y_hat)), y])

    def accuracy(y_hat, y):
        y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())

    for _ in range(3):
        y_hat = softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)
        loss = cross_entropy(y_hat, y)
        loss.sum().backward()
        with torch.no_grad():
            for param in (W, b):
                param -= 0.1 * param.grad / 20
                param.grad.zero_()
    return [W.detach().numpy(), np.array(accuracy(y_hat, y)),
            torch.norm(W.detach(), dim=0).numpy(), torch.clamp(b.detach(), max=0.1).numpy()]


def run_hand_written_rmsprop_with_cumsum_and_sort(torch):
    """A hand-written optimizer (RMSprop with in-place updates) on a loss built from
    cumsum, sort, prod and einsum."""
    (start,) = weights((4, 3))
    p = torch.tensor(start, requires_grad=True)
    square_avg = torch.zeros(4, 3)
    for _ in range(4):
        values, _ = torch.sort(p, dim=1, descending=True)
        loss = (torch.cumsum(values, dim=1) ** 2).sum() + torch.einsum("ij,ij->", p, p)
        loss = loss + p.prod(dim=0).abs().sum()
        p.grad = None
        loss.backward()
        with torch.no_grad():
            square_avg.mul_(0.9).addcmul_(p.grad, p.grad, value=0.1)
            p.addcdiv_(p.grad, square_avg.sqrt().add_(1e-8), value=-0.01)
    return [p.detach().numpy(), square_avg.numpy()]


@pytest.mark.parametrize("program", [run_attention, run_makemore_mlp, run_softmax_regression,
                                     run_hand_written_rmsprop_with_cumsum_and_sort],
                         ids=lambda f: f.__name__.removeprefix("run_"))
def test_program_gives_pytorchs_numbers(program, torch):
    ours, theirs = program(mg), program(torch)
    for index, (a, b) in enumerate(zip(ours, theirs)):
        assert np.shape(a) == np.shape(b), f"result {index}"
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"result {index}")


def test_cumprod_takes_numpy_s_axis_as_pytorch_does_and_needs_a_dim():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    np.testing.assert_array_equal(mg.cumprod(mg.tensor(x), axis=1).numpy(), np.cumprod(x, 1))
    np.testing.assert_array_equal(mg.tensor(x).cumprod(axis=0).numpy(), np.cumprod(x, 0))
    with pytest.raises(TypeError, match=r"cumprod: give dim .* shape \(2, 3\)"):
        mg.tensor(x).cumprod()
