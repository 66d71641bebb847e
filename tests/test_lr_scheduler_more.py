"""The schedulers added for issue 11: PyTorch's values step for step."""

from __future__ import annotations

import numpy as np
import pytest
from test_lr_scheduler import lr_sequence, one_group, two_groups

import minigrad as mg
from minigrad import optim
from minigrad.optim import lr_scheduler

SCHEDULERS = {
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[3, 7, 7, 20]),
    "MultiStepLR-gamma": lambda s, o: s.MultiStepLR(o, [5, 10], gamma=0.5),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "LinearLR": lambda s, o: s.LinearLR(o),
    "LinearLR-decay": lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.1,
                                              total_iters=12),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=5),
    "CosineAnnealingWarmRestarts-T_mult": lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=40),
    "OneCycleLR-linear-three-phase": lambda s, o: s.OneCycleLR(
        o, max_lr=[0.5, 0.2] if len(o.param_groups) == 2 else 0.5, epochs=4,
        steps_per_epoch=8, pct_start=0.25, anneal_strategy="linear", three_phase=True),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=4), s.ExponentialLR(o, gamma=0.8)],
        milestones=[5]),
    "SequentialLR-three": lambda s, o: s.SequentialLR(
        o, [s.ExponentialLR(o, gamma=0.5), s.StepLR(o, 3, gamma=0.3),
            s.CosineAnnealingLR(o, T_max=6)], milestones=[4, 11]),
}


@pytest.mark.parametrize("groups", [one_group, two_groups], ids=["one-group", "two-groups"])
@pytest.mark.parametrize("name", SCHEDULERS)
def test_lr_sequence_matches_pytorch(torch, name, groups):
    ours = lr_sequence(mg, SCHEDULERS[name], groups)
    theirs = lr_sequence(torch, SCHEDULERS[name], groups)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


def momenta(library, optimizer_name, options):
    params, _ = one_group(library)
    optimizer = getattr(library.optim, optimizer_name)(params, lr=0.1, **options)
    scheduler = library.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=20)
    key = "betas" if optimizer_name == "Adam" else "momentum"
    values = []
    for _ in range(19):
        optimizer.step()
        scheduler.step()
        value = optimizer.param_groups[0][key]
        values.append(value[0] if key == "betas" else value)
    return values


@pytest.mark.parametrize("optimizer_name, options", [("SGD", {"momentum": 0.9}), ("Adam", {})])
def test_one_cycle_cycles_momentum_or_beta1_as_pytorch(torch, optimizer_name, options):
    np.testing.assert_allclose(momenta(mg, optimizer_name, options),
                               momenta(torch, optimizer_name, options), rtol=1e-12)


def test_one_cycle_refuses_to_step_past_total_steps():
    params, _ = one_group(mg)
    scheduler = lr_scheduler.OneCycleLR(optim.SGD(params, lr=0.1), max_lr=1.0, total_steps=3)
    for _ in range(3):
        scheduler.step()
    with pytest.raises(ValueError, match="total_steps is 3"):
        scheduler.step()


def test_warm_restarts_with_fractional_epochs_match_pytorch(torch):
    def run(library):
        params, _ = one_group(library)
        optimizer = library.optim.SGD(params, lr=0.1)
        scheduler = library.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=2,
                                                                           T_mult=2)
        lrs = []
        for epoch in range(8):
            for batch in range(4):
                optimizer.step()
                scheduler.step(epoch + batch / 4)
                lrs.append(scheduler.get_last_lr()[0])
        return lrs

    np.testing.assert_allclose(run(mg), run(torch), rtol=1e-12)


METRICS = [1.0, 0.9, 0.95, 0.93, 0.94, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8, 0.9, 0.91, 0.92, 0.93,
           0.94, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]


@pytest.mark.parametrize("options", [
    {"patience": 2},
    {"patience": 1, "factor": 0.5, "cooldown": 2, "min_lr": 0.004},
    {"mode": "max", "patience": 0, "threshold": 0.05, "threshold_mode": "abs"},
], ids=["patience", "cooldown-min_lr", "max-abs"])
def test_reduce_on_plateau_matches_pytorch(torch, options):
    def run(library):
        params, _ = two_groups(library)
        optimizer = library.optim.SGD(params, lr=0.1)
        scheduler = library.optim.lr_scheduler.ReduceLROnPlateau(optimizer, **options)
        lrs = []
        for metric in METRICS:
            optimizer.step()
            scheduler.step(metric)
            lrs.append(scheduler.get_last_lr())
        return lrs

    np.testing.assert_allclose(run(mg), run(torch), rtol=1e-12)


def test_reduce_on_plateau_takes_a_tensor_metric():
    params, _ = one_group(mg)
    optimizer = optim.SGD(params, lr=0.1)
    scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, patience=0)
    scheduler.step(mg.tensor(1.0))
    scheduler.step(mg.tensor(2.0))
    assert scheduler.get_last_lr() == [pytest.approx(0.01)]


def test_sequential_lr_refuses_reduce_on_plateau_and_mismatched_milestones():
    params, _ = one_group(mg)
    optimizer = optim.SGD(params, lr=0.1)
    plateau = lr_scheduler.ReduceLROnPlateau(optimizer)
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        lr_scheduler.SequentialLR(optimizer, [plateau], milestones=[])
    with pytest.raises(ValueError, match="one milestone fewer"):
        lr_scheduler.SequentialLR(optimizer, [lr_scheduler.ExponentialLR(optimizer, 0.9)],
                                  milestones=[3])


def test_sequential_lr_state_dict_round_trip_continues_the_same_schedule():
    def make():
        params, _ = one_group(mg)
        optimizer = optim.SGD(params, lr=0.1)
        return optimizer, lr_scheduler.SequentialLR(
            optimizer, [lr_scheduler.LinearLR(optimizer, 0.1, total_iters=3),
                        lr_scheduler.ExponentialLR(optimizer, 0.5)], milestones=[3])

    optimizer, scheduler = make()
    for _ in range(5):
        scheduler.step()
    saved, saved_optimizer = scheduler.state_dict(), optimizer.state_dict()
    expected = [scheduler.step() or scheduler.get_last_lr() for _ in range(3)]
    optimizer, restored = make()
    restored.load_state_dict(saved)
    optimizer.load_state_dict(saved_optimizer)  # the schedules go on from the group's lr
    assert [restored.step() or restored.get_last_lr() for _ in range(3)] == expected
