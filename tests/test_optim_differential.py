"""minigrad.optim against PyTorch, program for program: optimizers over odd parameters
(0-d, empty, grads missing on some steps, groups added mid-run, state saved and loaded
mid-run) and learning-rate schedulers (chained, resumed, changed by hand)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

SHAPES = [(3,), (2, 3), (), (1,), (0,)]


def _start_and_gradients(seed, steps):
    """Starting values for one parameter per shape, and each step's gradients (None now
    and then: that parameter has no gradient on that step)."""
    rng = np.random.default_rng(seed)
    start = [rng.standard_normal(shape) for shape in SHAPES]
    grads = [[None if rng.random() < 0.15 else rng.standard_normal(shape) for shape in SHAPES]
             for _ in range(steps)]
    return start, grads


def _trajectory(library, name, options, start, grads, groups=None, add_group_at=None,
                reload_at=None, set_to_none=True):
    """The parameters after running optimizer ``name`` over ``grads``; ``groups`` splits
    the parameters into param groups, the second added at step ``add_group_at``;
    ``reload_at``: the state goes through state_dict()/load_state_dict() into a new
    optimizer after that step."""
    params = [library.tensor(values.copy(), requires_grad=True) for values in start]
    make = getattr(library.optim, name)
    param_groups = groups(params) if groups else params
    optimizer = make(param_groups[:1] if add_group_at is not None else param_groups, **options)
    for step, step_grads in enumerate(grads):
        if step == add_group_at:
            optimizer.add_param_group(param_groups[1])
        optimizer.zero_grad(set_to_none=set_to_none)
        for param, grad in zip(params, step_grads):
            if grad is not None:
                param.grad = library.tensor(grad.copy())
        optimizer.step()
        if step == reload_at:
            saved = optimizer.state_dict()
            optimizer = make(groups(params) if groups else params, **options)
            optimizer.load_state_dict(saved)
    return [param.detach().numpy().copy() for param in params]


def assert_same_trajectory(name, options, steps=20, seed=0, **kwargs):
    start, grads = _start_and_gradients(seed, steps)
    theirs = _trajectory(torch, name, options, start, grads, **kwargs)
    ours = _trajectory(mg, name, options, start, grads, **kwargs)
    for index, (mine, expected) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(mine, expected, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name}{options}: parameter {index} "
                                           f"(shape {SHAPES[index]})")


def two_groups(params):
    return [{"params": params[:2]}, {"params": params[2:], "lr": 0.01, "weight_decay": 0.3}]


# --- optimizers ----------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1},
    {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "maximize": True},
    {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True},
], ids=["weight_decay", "dampening-maximize", "nesterov-maximize"])
def test_sgd_momentum_on_a_0d_parameter_matches_pytorch(options):
    # -g or g + wd p of a 0-d parameter is a NumPy scalar: the momentum buffer copied
    # from it was never updated in place
    assert_same_trajectory("SGD", options)


# SGD for its 0-d parameter; Rprop and ASGD are new
OPTIMIZER_CASES = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Rprop", {"etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2), "maximize": True}),
    ("ASGD", {"lr": 0.1, "lambd": 0.01, "t0": 5, "weight_decay": 0.1}),
]
OPTIMIZER_IDS = [name for name, _ in OPTIMIZER_CASES]


@pytest.mark.parametrize(("name", "options"), OPTIMIZER_CASES, ids=OPTIMIZER_IDS)
def test_groups_with_their_own_options_match_pytorch(name, options):
    assert_same_trajectory(name, options, groups=two_groups, set_to_none=False)


@pytest.mark.parametrize(("name", "options"), OPTIMIZER_CASES, ids=OPTIMIZER_IDS)
def test_a_group_added_mid_run_matches_pytorch(name, options):
    assert_same_trajectory(name, options, groups=two_groups, add_group_at=6)


@pytest.mark.parametrize(("name", "options"), OPTIMIZER_CASES, ids=OPTIMIZER_IDS)
def test_state_dict_round_trip_mid_run_continues_as_pytorch(name, options):
    assert_same_trajectory(name, options, groups=two_groups, reload_at=7)


@pytest.mark.parametrize(("name", "options"), [
    ("NAdam", {"lr": 0.05, "decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.1, "lambd": 0.01, "t0": 5, "weight_decay": 0.1}),
], ids=["NAdam", "ASGD"])
def test_a_pytorch_state_dict_loads_and_continues_the_same(name, options):
    # PyTorch keeps NAdam's mu_product and ASGD's eta and mu as 0-d tensors
    start, grads = _start_and_gradients(1, 16)
    halfway = _trajectory(torch, name, options, start, grads[:8])
    torch_params = [torch.tensor(values, requires_grad=True) for values in halfway]
    torch_optimizer = getattr(torch.optim, name)(torch_params, **options)
    ours = [mg.tensor(values, requires_grad=True) for values in halfway]
    our_optimizer = getattr(mg.optim, name)(ours, **options)
    torch_optimizer.load_state_dict(_torch_state_after(name, options, start, grads[:8]))
    our_optimizer.load_state_dict(_torch_state_after(name, options, start, grads[:8]))
    for step_grads in grads[8:]:
        for library, optimizer, params in ((torch, torch_optimizer, torch_params),
                                           (mg, our_optimizer, ours)):
            optimizer.zero_grad()
            for param, grad in zip(params, step_grads):
                if grad is not None:
                    param.grad = library.tensor(grad)
            optimizer.step()
    for mine, expected in zip(ours, torch_params):
        np.testing.assert_allclose(mine.numpy(), expected.detach().numpy(), rtol=1e-10)


def _torch_state_after(name, options, start, grads):
    params = [torch.tensor(values, requires_grad=True) for values in start]
    optimizer = getattr(torch.optim, name)(params, **options)
    for step_grads in grads:
        optimizer.zero_grad()
        for param, grad in zip(params, step_grads):
            if grad is not None:
                param.grad = torch.tensor(grad)
        optimizer.step()
    return optimizer.state_dict()


def test_named_parameters_are_accepted_and_their_names_saved_as_in_pytorch():
    def run(library):
        library.manual_seed(0)
        model = library.nn.Linear(3, 2)
        optimizer = library.optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            optimizer.zero_grad()
            (model(library.ones(4, 3)) ** 2).sum().backward()
            optimizer.step()
        return optimizer.state_dict()["param_groups"][0]

    ours, theirs = run(mg), run(torch)
    assert ours["param_names"] == theirs["param_names"] == ["weight", "bias"]
    assert ours["params"] == theirs["params"] == [0, 1]


def test_named_and_plain_parameters_in_one_group_are_refused():
    param = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="SGD: all optimizer params should be with/without "
                                         "names"):
        mg.optim.SGD([("a", param), mg.tensor([2.0], requires_grad=True)], lr=0.1)


@pytest.mark.parametrize(("name", "options", "message"), [
    ("Rprop", {"etas": (1.5, 1.2)}, "Rprop: invalid etas"),
    ("Rprop", {"lr": -1.0}, "Rprop: invalid lr"),
    ("ASGD", {"lr": -1.0}, "ASGD: invalid lr"),
    ("ASGD", {"weight_decay": -1.0}, "ASGD: invalid weight_decay"),
])
def test_rprop_and_asgd_refuse_bad_options_as_pytorch(name, options, message):
    with pytest.raises(ValueError):
        getattr(torch.optim, name)([torch.ones(1, requires_grad=True)], **options)
    with pytest.raises(ValueError, match=message):
        getattr(mg.optim, name)([mg.ones(1, requires_grad=True)], **options)


# --- learning-rate schedulers -------------------------------------------------------------

def _lr_trace(library, make_scheduler, steps=24, optimizer_name="SGD", metrics=None,
              change_lr_at=None, momentum=False):
    """get_last_lr() (and each group's lr, momentum) after making and after every step;
    ``change_lr_at``: the lrs are scaled by hand (times 0.3) after that step."""
    a = library.tensor(np.ones(2), requires_grad=True)
    b = library.tensor(np.ones(1), requires_grad=True)
    options = {"momentum": 0.9} if optimizer_name == "SGD" else {}
    optimizer = getattr(library.optim, optimizer_name)(
        [{"params": [a], "lr": 0.1}, {"params": [b], "lr": 0.02}], **options)
    scheduler = make_scheduler(library.optim.lr_scheduler, optimizer)

    def record():
        groups = optimizer.param_groups
        values = list(scheduler.get_last_lr()) + [group["lr"] for group in groups]
        if momentum:
            values += [group.get("momentum", group.get("betas", (0,))[0]) for group in groups]
        return values

    trace = [record()]
    for step in range(steps):
        optimizer.step()
        scheduler.step() if metrics is None else scheduler.step(metrics[step])
        trace.append(record())
        if step == change_lr_at:
            for group in optimizer.param_groups:
                group["lr"] *= 0.3
    return np.array(trace, dtype=float)


def assert_same_lrs(make_scheduler, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _lr_trace(torch, make_scheduler, **kwargs)
        ours = _lr_trace(mg, make_scheduler, **kwargs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-15)


class _BothStep:
    """Two schedulers on one optimizer, stepped together (PyTorch: "chaining")."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def step(self):
        self.first.step()
        self.second.step()

    def get_last_lr(self):
        return self.second.get_last_lr()


@pytest.mark.parametrize("make", [
    lambda s, o: _BothStep(s.StepLR(o, 3, 0.5), s.ExponentialLR(o, 0.9)),
    lambda s, o: _BothStep(s.ExponentialLR(o, 0.9), s.CosineAnnealingLR(o, 10)),
    lambda s, o: _BothStep(s.LinearLR(o, 0.2, total_iters=4), s.MultiStepLR(o, [3, 6])),
], ids=["step+exponential", "exponential+cosine", "linear+multistep"])
def test_two_schedulers_on_one_optimizer_multiply_as_in_pytorch(make):
    assert_same_lrs(make)


@pytest.mark.parametrize("make", [
    lambda s, o: s.StepLR(o, 3, 0.5),
    lambda s, o: s.CosineAnnealingLR(o, 10, eta_min=0.001),
    lambda s, o: s.LinearLR(o, 0.2, total_iters=10),
    lambda s, o: s.MultiStepLR(o, [8, 12]),
], ids=["StepLR", "CosineAnnealingLR", "LinearLR", "MultiStepLR"])
def test_an_lr_changed_by_hand_carries_on_as_in_pytorch(make):
    assert_same_lrs(make, change_lr_at=4)


def test_step_lr_with_a_float_step_size_matches_pytorch():
    assert_same_lrs(lambda s, o: s.StepLR(o, step_size=2.5, gamma=0.5))


def test_linear_lr_with_zero_total_iters_matches_pytorch():
    assert_same_lrs(lambda s, o: s.LinearLR(o, start_factor=0.5, total_iters=0))


@pytest.mark.parametrize("make", [
    lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=3),
    lambda s, o: s.PolynomialLR(o, total_iters=10, power=2.0),
    lambda s, o: s.MultiplicativeLR(o, [lambda t: 0.9, lambda t: 1 + 0.01 * t]),
    lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=5,
                            mode="triangular2"),
    lambda s, o: s.CyclicLR(o, [0.01, 0.001], [0.1, 0.05], step_size_up=4, mode="exp_range",
                            gamma=0.9),
    lambda s, o: s.ChainedScheduler([s.ConstantLR(o, 0.1, total_iters=2),
                                     s.ExponentialLR(o, 0.9)]),
    lambda s, o: s.SequentialLR(o, [s.ConstantLR(o, 0.1, total_iters=2),
                                    s.PolynomialLR(o, 10)], milestones=[3]),
], ids=["ConstantLR", "PolynomialLR", "MultiplicativeLR", "CyclicLR-triangular2",
        "CyclicLR-exp_range", "ChainedScheduler", "SequentialLR-constant-polynomial"])
def test_more_schedulers_match_pytorch(make):
    assert_same_lrs(make, momentum=True)


@pytest.mark.parametrize("optimizer_name", ["SGD", "Adam"])
def test_cyclic_lr_cycles_momentum_or_beta1_as_pytorch(optimizer_name):
    assert_same_lrs(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3),
                    optimizer_name=optimizer_name, momentum=True)


RESUMABLE = {
    "StepLR": lambda s, o, last: s.StepLR(o, 3, 0.5, last_epoch=last),
    "CosineAnnealingLR": lambda s, o, last: s.CosineAnnealingLR(o, 10, last_epoch=last),
    "LinearLR": lambda s, o, last: s.LinearLR(o, 0.1, total_iters=10, last_epoch=last),
    "LambdaLR": lambda s, o, last: s.LambdaLR(o, lambda t: 1 / (1 + t), last_epoch=last),
    "CosineAnnealingWarmRestarts": lambda s, o, last: s.CosineAnnealingWarmRestarts(
        o, 3, 2, last_epoch=last),
    "OneCycleLR": lambda s, o, last: s.OneCycleLR(o, 1.0, total_steps=30, last_epoch=last),
}


@pytest.mark.parametrize("name", RESUMABLE)
def test_resuming_with_last_epoch_matches_pytorch(name):
    def run(library):
        def optimizer():
            return library.optim.SGD([library.tensor(np.ones(2), requires_grad=True)],
                                     lr=0.1, momentum=0.9)

        first = optimizer()
        scheduler = RESUMABLE[name](library.optim.lr_scheduler, first, -1)
        for _ in range(7):
            first.step()
            scheduler.step()
        resumed = optimizer()
        resumed.load_state_dict(first.state_dict())  # brings back initial_lr
        scheduler = RESUMABLE[name](library.optim.lr_scheduler, resumed, 7)
        lrs = [scheduler.get_last_lr()]
        for _ in range(10):
            resumed.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr())
        return lrs

    np.testing.assert_allclose(run(mg), run(torch), rtol=1e-10)


def test_resuming_without_initial_lr_says_what_is_missing():
    optimizer = mg.optim.SGD([mg.tensor([1.0], requires_grad=True)], lr=0.1)
    with pytest.raises(KeyError, match="StepLR.last_epoch=5.: param group 0 has no "
                                       "'initial_lr'"):
        mg.optim.lr_scheduler.StepLR(optimizer, 3, last_epoch=5)


def test_step_with_an_epoch_jumps_with_the_closed_form_and_warns_as_pytorch():
    def run(library):
        optimizer = library.optim.SGD([library.tensor(np.ones(2), requires_grad=True)], lr=0.1)
        scheduler = library.optim.lr_scheduler.StepLR(optimizer, 3, 0.5)
        lrs = []
        for epoch in [1, 2, 5, 3, 9, 10]:
            optimizer.step()
            with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step"):
                scheduler.step(epoch)
            lrs.append(scheduler.get_last_lr())
        return lrs

    np.testing.assert_allclose(run(mg), run(torch), rtol=1e-12)


def test_a_scheduler_refuses_a_group_added_after_it_was_made():
    first, second = mg.tensor([1.0], requires_grad=True), mg.tensor([2.0], requires_grad=True)
    optimizer = mg.optim.SGD([first], lr=0.1)
    scheduler = mg.optim.lr_scheduler.LambdaLR(optimizer, lambda t: 0.5**t)
    optimizer.step()
    scheduler.step()
    optimizer.add_param_group({"params": [second]})
    with pytest.raises(ValueError, match="LambdaLR.step.*2 param groups.*computed 1 lrs"):
        scheduler.step()


@pytest.mark.parametrize("min_lr", [0.01, 0.0])
def test_reduce_on_plateau_reduces_a_group_added_later_as_pytorch(min_lr):
    def run(library):
        first = library.tensor(np.ones(2), requires_grad=True)
        second = library.tensor(np.ones(1), requires_grad=True)
        optimizer = library.optim.SGD([first], lr=0.1)
        scheduler = library.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, patience=0, factor=0.5, min_lr=min_lr)
        lrs = []
        for step, metric in enumerate([1.0, 2, 3, 0.5, 4, 5, 6, 7]):
            if step == 2:
                optimizer.add_param_group({"params": [second], "lr": 0.2})
            optimizer.step()
            scheduler.step(metric)
            lrs.append(scheduler.get_last_lr()[-1])
        return lrs

    np.testing.assert_allclose(run(mg), run(torch), rtol=1e-12)


def test_reduce_on_plateau_with_a_min_lr_list_refuses_a_group_added_later():
    optimizer = mg.optim.SGD([mg.tensor([1.0], requires_grad=True)], lr=0.1)
    scheduler = mg.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, min_lr=[0.01])
    optimizer.add_param_group({"params": [mg.tensor([2.0], requires_grad=True)]})
    scheduler.step(1.0)
    with pytest.raises(RuntimeError, match="2 param groups now but min_lr lists 1"):
        scheduler.step(2.0)


def test_chained_scheduler_state_dict_round_trip_continues_the_same():
    def make():
        optimizer = mg.optim.SGD([mg.tensor([1.0], requires_grad=True)], lr=0.1)
        schedulers = mg.optim.lr_scheduler
        return optimizer, schedulers.ChainedScheduler(
            [schedulers.LinearLR(optimizer, 0.1, total_iters=3),
             schedulers.ExponentialLR(optimizer, 0.5)])

    optimizer, scheduler = make()
    for _ in range(4):
        optimizer.step()
        scheduler.step()
    saved, saved_optimizer = scheduler.state_dict(), optimizer.state_dict()
    expected = [scheduler.step() or scheduler.get_last_lr() for _ in range(4)]
    optimizer, restored = make()
    restored.load_state_dict(saved)
    optimizer.load_state_dict(saved_optimizer)
    assert [restored.step() or restored.get_last_lr() for _ in range(4)] == expected


def test_reduce_on_plateau_names_itself_when_the_metric_is_not_a_number():
    optimizer = mg.optim.SGD([mg.tensor([1.0], requires_grad=True)], lr=0.1)
    scheduler = mg.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
    with pytest.raises(TypeError, match="ReduceLROnPlateau.step.metrics.: metrics must be one "
                                        "number.*got NoneType"):
        scheduler.step(None)


def test_chained_scheduler_refuses_what_is_not_a_scheduler():
    with pytest.raises(TypeError, match="ChainedScheduler: schedulers.0. is a int"):
        mg.optim.lr_scheduler.ChainedScheduler([1, 2])


def test_cosine_annealing_takes_a_float_t_max_as_pytorch():
    assert_same_lrs(lambda s, o: s.CosineAnnealingLR(o, T_max=7.5, eta_min=0.001))


def test_a_scheduler_written_on_the_old_base_class_name_runs_as_in_pytorch():
    def make(schedulers, optimizer):
        class Warmup(schedulers._LRScheduler):
            def get_lr(self):
                return [base_lr * min(1.0, (self.last_epoch + 1) / 4) for base_lr in self.base_lrs]

        return Warmup(optimizer)

    assert_same_lrs(make)
