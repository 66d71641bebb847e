"""Short training programs that use the issue-11 layers, optimizers and schedules, each
written once against a torch-like namespace and run with PyTorch and with minigrad from
the same weights: the losses agree step for step."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg


def gru_classifier(torch, steps=6):
    """A GRU reads a sequence; its last state goes through LayerNorm, SiLU and a Linear to
    NLL loss; RMSprop with momentum and a OneCycle schedule."""
    nn, F = torch.nn, torch.nn.functional

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(3, 8, num_layers=2, batch_first=True)
            self.norm = nn.LayerNorm(8)
            self.head = nn.Sequential(nn.SiLU(), nn.Linear(8, 4))

        def forward(self, x):
            _, h_n = self.gru(x)
            return F.log_softmax(self.head(self.norm(h_n[-1])), dim=-1)

    return Model, lambda params: torch.optim.RMSprop(params, lr=0.01, momentum=0.9), \
        lambda optimizer: torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01,
                                                              total_steps=steps), \
        lambda model, x, y: F.nll_loss(model(x), y)


def conv1d_regressor(torch, steps=6):
    """Conv1d, GroupNorm, LeakyReLU, MaxPool1d, AdaptiveAvgPool1d, Flatten to a Huber
    loss; NAdam with a LinearLR warm-up then ExponentialLR."""
    nn = torch.nn

    def model():
        return nn.Sequential(nn.Conv1d(3, 6, 3, padding=1), nn.GroupNorm(2, 6),
                             nn.LeakyReLU(0.1), nn.MaxPool1d(2), nn.Conv1d(6, 4, 3),
                             nn.Mish(), nn.AdaptiveAvgPool1d(1), nn.Flatten(),
                             nn.Linear(4, 2))

    def schedule(optimizer):
        schedulers = torch.optim.lr_scheduler
        return schedulers.SequentialLR(optimizer, [schedulers.LinearLR(optimizer, 0.2,
                                                                       total_iters=2),
                                                   schedulers.ExponentialLR(optimizer, 0.7)],
                                       milestones=[3])

    return model, lambda params: torch.optim.NAdam(params, lr=0.02, weight_decay=0.01), \
        schedule, lambda m, x, y: torch.nn.HuberLoss(delta=0.5)(m(x), y)


def transformer_tagger(torch, steps=6):
    """A TransformerEncoder (norm first, GELU) over embeddings with a causal mask, KL
    divergence to soft targets, Adamax, MultiStepLR."""
    nn, F = torch.nn, torch.nn.functional

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(5, 8)
            layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.out = nn.Linear(8, 3)

        def forward(self, x):
            mask = torch.triu(torch.ones(x.shape[1], x.shape[1]), 1) > 0 \
                if hasattr(torch, "triu") else np.triu(np.ones((x.shape[1],) * 2), 1) > 0
            return F.log_softmax(self.out(self.encoder(self.embed(x), mask=mask)), dim=-1)

    return Model, lambda params: torch.optim.Adamax(params, lr=0.01), \
        lambda optimizer: torch.optim.lr_scheduler.MultiStepLR(optimizer, [2, 4], 0.5), \
        lambda m, x, y: F.kl_div(m(x), y, reduction="batchmean")


def data(name, library):
    rng = np.random.default_rng(0)
    if name == "gru_classifier":
        x, y = rng.standard_normal((5, 7, 3)), np.array([0, 3, 1, 2, 1])
    elif name == "conv1d_regressor":
        x, y = rng.standard_normal((4, 3, 12)), rng.standard_normal((4, 2))
    else:
        x = rng.standard_normal((3, 6, 5))
        y = rng.dirichlet(np.ones(3), size=(3, 6))
    return library.tensor(x), library.tensor(y)


PROGRAMS = {"gru_classifier": gru_classifier, "conv1d_regressor": conv1d_regressor,
            "transformer_tagger": transformer_tagger}


@pytest.mark.parametrize("name", PROGRAMS)
def test_training_run_matches_pytorch(torch, name):
    steps = 6
    losses = {}
    for library in (torch, mg):
        make_model, make_optimizer, make_schedule, loss_of = PROGRAMS[name](library, steps)
        if library is torch:  # minigrad starts from PyTorch's weights, so these are the
            torch.manual_seed(0)  # run's: seeded, or whether the loss falls would be luck
        model = make_model().double()  # float64: float32 rounding would grow over the steps
        if library is torch:
            start = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        else:
            model.load_state_dict(start)
        optimizer = make_optimizer(model.parameters())
        scheduler = make_schedule(optimizer)
        x, y = data(name, library)
        history = []
        for _ in range(steps):
            optimizer.zero_grad()
            loss = loss_of(model, x, y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            history.append(loss.item())
        losses[library.__name__] = history
    np.testing.assert_allclose(losses["minigrad"], losses["torch"], rtol=1e-9, atol=1e-12)
    assert losses["minigrad"][-1] < losses["minigrad"][0]
