"""Learning-rate schedulers: PyTorch's values step for step, saving, and WarmupCosineLR."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import optim
from minigrad.optim import lr_scheduler


def one_group(library, lr=0.1):
    return [library.tensor([1.0, 2.0], requires_grad=True)], lr


def two_groups(library, lr=0.1):
    a = library.tensor([1.0, 2.0], requires_grad=True)
    b = library.tensor([3.0], requires_grad=True)
    return [{"params": [a]}, {"params": [b], "lr": 0.02}], lr


def lr_sequence(library, make_scheduler, groups=one_group, steps=30):
    """``get_last_lr()`` after construction and after each of ``steps`` steps."""
    params, lr = groups(library)
    optimizer = library.optim.SGD(params, lr=lr)
    scheduler = make_scheduler(library.optim.lr_scheduler, optimizer)
    sequence = [scheduler.get_last_lr()]
    for _ in range(steps):
        optimizer.step()
        scheduler.step()
        sequence.append(scheduler.get_last_lr())
        assert sequence[-1] == [group["lr"] for group in optimizer.param_groups]
    return sequence


SCHEDULERS = {
    "StepLR": lambda schedulers, optimizer: schedulers.StepLR(optimizer, step_size=4),
    "StepLR-gamma": lambda schedulers, optimizer: schedulers.StepLR(optimizer, 3, gamma=0.5),
    "CosineAnnealingLR": lambda schedulers, optimizer: schedulers.CosineAnnealingLR(
        optimizer, T_max=10),
    "CosineAnnealingLR-eta_min": lambda schedulers, optimizer: schedulers.CosineAnnealingLR(
        optimizer, T_max=7, eta_min=0.01),
    "CosineAnnealingLR-T_max=1": lambda schedulers, optimizer: schedulers.CosineAnnealingLR(
        optimizer, T_max=1),
    "LambdaLR": lambda schedulers, optimizer: schedulers.LambdaLR(
        optimizer, lambda t: 0.9**t + 0.01 * t),
}


@pytest.mark.parametrize("groups", [one_group, two_groups], ids=["one-group", "two-groups"])
@pytest.mark.parametrize("name", SCHEDULERS)
def test_lr_sequence_matches_pytorch(torch, name, groups):
    ours = lr_sequence(mg, SCHEDULERS[name], groups)
    theirs = lr_sequence(torch, SCHEDULERS[name], groups)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


def test_lambda_lr_takes_one_function_per_group_and_matches_pytorch(torch):
    def make(schedulers, optimizer):
        return schedulers.LambdaLR(optimizer, [lambda t: 1 / (t + 1), lambda t: 0.8**t])

    ours = lr_sequence(mg, make, two_groups)
    np.testing.assert_allclose(ours, lr_sequence(torch, make, two_groups), rtol=1e-12)
    assert ours[3] == pytest.approx([0.1 / 4, 0.02 * 0.8**3])


def test_making_a_scheduler_sets_step_zero_and_remembers_the_initial_lr():
    params, _ = two_groups(mg)
    optimizer = optim.SGD(params, lr=0.1)
    scheduler = lr_scheduler.LambdaLR(optimizer, lambda t: 0.5)
    assert scheduler.last_epoch == 0
    assert [group["initial_lr"] for group in optimizer.param_groups] == [0.1, 0.02]
    assert [group["lr"] for group in optimizer.param_groups] == [0.05, 0.01]
    assert scheduler.base_lrs == [0.1, 0.02]


def test_the_optimizer_steps_with_the_scheduled_lr():
    param = mg.tensor([1.0], requires_grad=True)
    optimizer = optim.SGD([param], lr=1.0)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    moves = []
    for _ in range(3):
        param.grad = mg.tensor([1.0])
        before = param.item()
        optimizer.step()
        moves.append(before - param.item())
        scheduler.step()
    assert moves == [1.0, 0.5, 0.25]


@pytest.mark.parametrize("name", SCHEDULERS)
def test_saved_and_loaded_scheduler_continues_the_same_lrs(tmp_path, name):
    params, _ = two_groups(mg)
    optimizer = optim.SGD(params, lr=0.1)
    scheduler = SCHEDULERS[name](lr_scheduler, optimizer)
    for _ in range(5):
        scheduler.step()
    mg.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()},
            tmp_path / "checkpoint.npz")

    checkpoint = mg.load(tmp_path / "checkpoint.npz")
    resumed_params, _ = two_groups(mg)
    resumed_optimizer = optim.SGD(resumed_params, lr=0.1)
    resumed = SCHEDULERS[name](lr_scheduler, resumed_optimizer)
    resumed.load_state_dict(checkpoint["scheduler"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])  # after, as in PyTorch
    assert resumed.last_epoch == 5
    assert resumed.get_last_lr() == scheduler.get_last_lr()
    for _ in range(10):
        scheduler.step()
        resumed.step()
        assert resumed.get_last_lr() == scheduler.get_last_lr()
        assert [g["lr"] for g in resumed_optimizer.param_groups] == scheduler.get_last_lr()


def test_state_dict_leaves_out_the_optimizer():
    optimizer = optim.SGD(*one_group(mg))
    state = lr_scheduler.StepLR(optimizer, step_size=3).state_dict()
    assert "optimizer" not in state
    assert state["last_epoch"] == 0 and state["step_size"] == 3 and state["base_lrs"] == [0.1]


def test_lambda_lr_saves_no_functions_but_the_attributes_of_callable_objects():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, t):
            return self.rate**t

    params, _ = two_groups(mg)
    decay = Decay()
    scheduler = lr_scheduler.LambdaLR(optim.SGD(params, lr=0.1), [lambda t: 1.0, decay])
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [None, {"rate": 0.5}]
    state["lr_lambdas"][1]["rate"] = 0.25
    scheduler.load_state_dict(state)
    assert decay.rate == 0.25


# --- WarmupCosineLR -------------------------------------------------------------------------


def warmup_cosine(warmup_steps, decay_steps, min_lr=0.0, steps=12, groups=one_group):
    def make(schedulers, optimizer):
        return schedulers.WarmupCosineLR(optimizer, warmup_steps, decay_steps, min_lr)

    return [lrs if len(lrs) > 1 else lrs[0] for lrs in lr_sequence(mg, make, groups, steps)]


def test_warmup_cosine_follows_its_formula():
    # base_lr 0.1, 3 warm-up steps, 4 decay steps, min_lr 0.01, worked out by hand:
    # warm-up 0.1 * (t + 1) / 4; then 0.01 + 0.09 * (1 + cos(pi * (t - 3) / 4)) / 2
    expected = [0.025, 0.05, 0.075,
                0.1, 0.0868198051533946, 0.055, 0.0231801948466054,
                0.01, 0.01, 0.01, 0.01]
    np.testing.assert_allclose(warmup_cosine(3, 4, min_lr=0.01, steps=10), expected,
                               rtol=1e-14)


def test_warmup_cosine_first_step_already_learns_and_reaches_base_lr_after_warmup():
    lrs = warmup_cosine(warmup_steps=5, decay_steps=10)
    assert lrs[0] == pytest.approx(0.1 / 6) and lrs[0] > 0
    assert all(earlier < later for earlier, later in zip(lrs[:6], lrs[1:6]))
    assert lrs[5] == 0.1


def test_warmup_cosine_without_warmup_starts_at_base_lr():
    lrs = warmup_cosine(warmup_steps=0, decay_steps=4)
    assert lrs[:5] == pytest.approx([0.1, 0.1 * (1 + math.cos(math.pi / 4)) / 2, 0.05,
                                     0.1 * (1 - math.cos(math.pi / 4)) / 2, 0.0])


def test_warmup_cosine_without_decay_drops_to_min_lr_after_warmup():
    assert warmup_cosine(2, 0, min_lr=0.003, steps=4) == pytest.approx(
        [0.1 / 3, 0.2 / 3, 0.003, 0.003, 0.003])


def test_warmup_cosine_stays_at_min_lr_after_the_decay():
    lrs = warmup_cosine(warmup_steps=2, decay_steps=5, min_lr=1e-3, steps=100)
    assert lrs[7:] == [1e-3] * 94


def test_warmup_cosine_scales_each_group_from_its_own_lr():
    lrs = warmup_cosine(warmup_steps=1, decay_steps=2, min_lr=0.0, steps=3, groups=two_groups)
    np.testing.assert_allclose(lrs, [[0.05, 0.01], [0.1, 0.02], [0.05, 0.01], [0.0, 0.0]],
                               atol=1e-15)


# --- errors ---------------------------------------------------------------------------------


def sgd():
    return optim.SGD(*one_group(mg))


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: lr_scheduler.StepLR([], 3), TypeError, "StepLR: the first argument must be an "
                                                    "optimizer.*got list"),
    (lambda: lr_scheduler.StepLR(sgd(), 0), ValueError, "step_size must be a positive int, "
                                                        "got 0"),
    (lambda: lr_scheduler.CosineAnnealingLR(sgd(), T_max=0), ValueError,
     "T_max must be a positive int, got 0"),
    (lambda: lr_scheduler.LambdaLR(sgd(), [abs, abs]), ValueError,
     "Expected 1 lr_lambdas .one per param group., but got 2"),
    (lambda: lr_scheduler.LambdaLR(sgd(), 0.5), TypeError, "lr_lambda must be a function.*"
                                                           "got float"),
    (lambda: lr_scheduler.LambdaLR("sgd", abs), TypeError, "LambdaLR: the first argument"),
    (lambda: lr_scheduler.WarmupCosineLR(sgd(), -1, 10), ValueError,
     "warmup_steps must be an int >= 0, got -1"),
    (lambda: lr_scheduler.WarmupCosineLR(sgd(), 10, 2.5), ValueError,
     "decay_steps must be an int >= 0, got 2.5"),
    (lambda: lr_scheduler.WarmupCosineLR(sgd(), 10, 100, min_lr=-0.1), ValueError,
     "min_lr must be >= 0, got -0.1"),
])
def test_invalid_arguments_are_refused_with_a_clear_message(make, error, message):
    with pytest.raises(error, match=message):
        make()
