"""End to end: small models learn their task with fixed seeds, in a few seconds each,
through the same loop a PyTorch user writes (DataLoader, model, loss, backward, step)."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.data import (DataLoader, TensorDataset, load_digits, make_moons,
                           make_sequence_task, train_test_split)


def train(model, loader, optimizer, epochs, loss_fn=F.cross_entropy, scheduler=None):
    model.train()
    for _ in range(epochs):
        for x, y in loader:
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
    return loss.item()


def accuracy(model, x, y):
    model.eval()
    with mg.no_grad():
        predictions = model(mg.tensor(x)).argmax(dim=-1).numpy()
    return float((predictions == y).mean())


def test_an_mlp_separates_two_moons():
    mg.manual_seed(0)
    x, y = make_moons(n_samples=400, noise=0.1, seed=0)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 2))
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    train(model, loader, mg.optim.Adam(model.parameters(), lr=1e-2), epochs=30)
    assert accuracy(model, x, y) > 0.97


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(32 * 2 * 2, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def test_a_small_cnn_reads_held_out_8x8_digits():
    mg.manual_seed(0)
    x, y = load_digits()
    x = (x / 16.0).reshape(-1, 1, 8, 8).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, seed=0)
    model = SmallCNN()
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True)
    optimizer = mg.optim.AdamW(model.parameters(), lr=3e-3)
    train(model, loader, optimizer, epochs=8)
    assert accuracy(model, x_test, y_test) > 0.95


class TinyTransformer(nn.Module):
    """Token and position embeddings, one pre-norm attention block, a linear read-out."""

    def __init__(self, vocab_size, seq_len, dim=48, heads=4):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, dim)
        self.positions = nn.Embedding(seq_len, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, ids):
        positions = np.arange(ids.shape[1])
        h = self.tokens(ids) + self.positions(positions)
        x = self.norm1(h)
        h = h + self.attn(x, x, x, need_weights=False)[0]
        h = h + self.mlp(self.norm2(h))
        return self.head(h)


def test_a_one_block_transformer_learns_to_reverse_sequences():
    mg.manual_seed(0)
    seq_len, vocab = 6, 8
    inputs, targets = make_sequence_task(n_samples=3000, seq_len=seq_len, vocab_size=vocab,
                                         task="reverse", seed=0)
    test_inputs, test_targets = make_sequence_task(n_samples=500, seq_len=seq_len,
                                                   vocab_size=vocab, task="reverse", seed=1)
    model = TinyTransformer(vocab, seq_len)
    loader = DataLoader(TensorDataset(inputs, targets), batch_size=64, shuffle=True)
    optimizer = mg.optim.Adam(model.parameters(), lr=3e-3)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))

    train(model, loader, optimizer, epochs=6, loss_fn=loss_fn)
    assert accuracy(model, test_inputs, test_targets) > 0.95
