"""The optimizers added for issue 11 (RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam,
LBFGS): the same trajectory as PyTorch's from the same start, step for step."""

from __future__ import annotations

import numpy as np
import pytest
from test_optim import MATRIX, assert_same_trajectory, minigrad_params, torch_params

import minigrad as mg
from minigrad import optim

TRAJECTORY_CASES = [
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.05, "alpha": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.02, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.02, "centered": True, "momentum": 0.5, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1,
                 "initial_accumulator_value": 0.3}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {"lr": 0.1}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.95), "weight_decay": 0.2}),
    ("NAdam", {"lr": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.2, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.2, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.1}),  # rho_t passes 5 at step 6: both branches run
    ("RAdam", {"lr": 0.1, "weight_decay": 0.2, "betas": (0.8, 0.9)}),
    ("RAdam", {"lr": 0.1, "weight_decay": 0.2, "decoupled_weight_decay": True,
               "maximize": True}),
]


@pytest.mark.parametrize(("name", "options"), TRAJECTORY_CASES,
                         ids=[f"{n}-{'-'.join(o) or 'defaults'}" for n, o in TRAJECTORY_CASES])
def test_trajectory_matches_pytorch(torch, name, options):
    assert_same_trajectory(torch, name, options, steps=12)


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_param_groups_with_their_own_lr_match_pytorch(torch, name):
    def groups(params):
        return [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.01}]

    assert_same_trajectory(torch, name, {"lr": 0.2}, groups)


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_float32_parameters_and_state_stay_float32(name):
    param = mg.tensor(np.array([0.5, -1.0, 2.0], dtype=np.float32), requires_grad=True)
    optimizer = getattr(optim, name)([param], lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        (param.sin() * param).sum().backward()
        optimizer.step()
    assert param.dtype == np.float32
    arrays = [v for v in optimizer.state[param].values() if isinstance(v, np.ndarray)]
    assert arrays and all(array.dtype == np.float32 for array in arrays)


@pytest.mark.parametrize("name, option", [("RMSprop", "alpha"), ("Adagrad", "lr_decay"),
                                          ("Adamax", "eps"), ("NAdam", "momentum_decay"),
                                          ("RAdam", "weight_decay"), ("Adadelta", "rho")])
def test_a_negative_option_is_refused_with_its_name(name, option):
    with pytest.raises(ValueError, match=f"{name}: invalid {option}"):
        getattr(optim, name)(minigrad_params(), **{option: -1.0})


# --- LBFGS: the closure form ---------------------------------------------------------------


def bounded_loss_of(a, b, matmul):
    """A loss with a minimum (the other one is unbounded below, and L-BFGS's long steps
    would run off to where float rounding decides): a Rosenbrock valley in a[:2] plus a
    least-squares term and b^4 + b tanh(b)."""
    valley = 100 * (a[1] - a[0] * a[0]) ** 2 + (1 - a[0]) ** 2
    return valley + ((matmul(MATRIX, a) - 1) ** 2).sum() + (b ** 4 + b.tanh() * b).sum()

LBFGS_CASES = [
    {},
    {"lr": 0.5, "max_iter": 4, "history_size": 3},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.8, "max_iter": 7, "history_size": 2, "line_search_fn": "strong_wolfe"},
]


@pytest.mark.parametrize("options", LBFGS_CASES, ids=lambda o: "-".join(o) or "defaults")
def test_lbfgs_matches_pytorch_over_several_steps(torch, options):
    ours, theirs = minigrad_params(), torch_params(torch)
    our_optimizer = optim.LBFGS(ours, **options)
    their_optimizer = torch.optim.LBFGS(theirs, **options)
    our_calls, their_calls = [], []

    def our_closure():
        our_optimizer.zero_grad()
        loss = bounded_loss_of(*ours, lambda m, x: mg.tensor(m) @ x)
        loss.backward()
        our_calls.append(loss.item())
        return loss

    def their_closure():
        their_optimizer.zero_grad()
        loss = bounded_loss_of(*theirs, lambda m, x: torch.tensor(m) @ x)
        loss.backward()
        their_calls.append(loss.item())
        return loss

    for step in range(3):
        our_loss = our_optimizer.step(our_closure)
        their_loss = their_optimizer.step(their_closure)
        assert our_loss.item() == pytest.approx(their_loss.item(), rel=1e-9)
        for mine, reference in zip(ours, theirs):
            np.testing.assert_allclose(mine.numpy(), reference.detach().numpy(), rtol=1e-8,
                                       atol=1e-10, err_msg=f"step {step}")
    np.testing.assert_allclose(our_calls, their_calls, rtol=1e-8)
    assert our_optimizer.state[ours[0]]["func_evals"] == len(our_calls)


def test_lbfgs_step_without_a_closure_says_what_the_closure_does():
    optimizer = optim.LBFGS(minigrad_params())
    with pytest.raises(ValueError, match="needs a closure"):
        optimizer.step()


def test_lbfgs_refuses_several_param_groups_and_unknown_line_searches():
    a, b = minigrad_params()
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match="line_search_fn"):
        optim.LBFGS([a], line_search_fn="backtracking")


# --- saving and loading ------------------------------------------------------------------------


def run_steps(optimizer, params, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        bounded_loss_of(*params, lambda m, x: mg.tensor(m) @ x).backward()
        optimizer.step()


@pytest.mark.parametrize("name, options", [
    ("RMSprop", {"momentum": 0.9, "centered": True}), ("Adagrad", {}), ("Adadelta", {}),
    ("Adamax", {}), ("NAdam", {}), ("RAdam", {})])
def test_state_dict_round_trip_continues_the_same_trajectory(name, options):
    params = minigrad_params()
    optimizer = getattr(optim, name)(params, lr=0.01, **options)
    run_steps(optimizer, params, 3)
    saved, values = optimizer.state_dict(), [p.numpy().copy() for p in params]
    run_steps(optimizer, params, 3)
    copies = [mg.tensor(v, requires_grad=True) for v in values]
    restored = getattr(optim, name)(copies, lr=0.5, **options)
    restored.load_state_dict(saved)
    assert restored.param_groups[0]["lr"] == 0.01
    run_steps(restored, copies, 3)
    for p, q in zip(params, copies):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_lbfgs_state_dict_round_trip_continues_the_same_trajectory():
    params = minigrad_params()
    optimizer = optim.LBFGS(params, max_iter=3, history_size=4)

    def closure_for(optimizer, params):
        def closure():
            optimizer.zero_grad()
            loss = bounded_loss_of(*params, lambda m, x: mg.tensor(m) @ x)
            loss.backward()
            return loss
        return closure

    optimizer.step(closure_for(optimizer, params))
    saved, values = optimizer.state_dict(), [p.numpy().copy() for p in params]
    optimizer.step(closure_for(optimizer, params))
    copies = [mg.tensor(v, requires_grad=True) for v in values]
    restored = optim.LBFGS(copies, max_iter=3, history_size=4)
    restored.load_state_dict(saved)
    restored.step(closure_for(restored, copies))
    for p, q in zip(params, copies):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-12)


KERNEL_OPTIONS = ("foreach", "fused", "capturable", "differentiable")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "Adamax", "NAdam", "RAdam"])
def test_pytorch_s_kernel_options_are_taken_and_differentiable_is_refused(torch, name):
    """foreach/fused/capturable pick PyTorch's kernels: each optimizer takes the ones
    PyTorch's takes, and steps the same; differentiable=True would need a recorded step."""
    import inspect

    theirs = [o for o in KERNEL_OPTIONS
              if o in inspect.signature(getattr(torch.optim, name)).parameters]
    ours = [o for o in KERNEL_OPTIONS
            if o in inspect.signature(getattr(optim, name)).parameters]
    assert ours == theirs
    settings = {o: False for o in theirs if o != "differentiable"}
    plain = mg.tensor(np.ones(3), requires_grad=True)
    tuned = mg.tensor(np.ones(3), requires_grad=True)
    for param, options in ((plain, {}), (tuned, settings)):
        (param * mg.tensor([1.0, 2.0, 3.0])).sum().backward()
        getattr(optim, name)([param], lr=0.1, **options).step()
    np.testing.assert_array_equal(tuned.numpy(), plain.numpy())
    with pytest.raises(NotImplementedError, match=rf"{name}\(differentiable=True\): minigrad's "
                                                  "optimizers update the parameters in place"):
        getattr(optim, name)([plain], lr=0.1, differentiable=True)
