"""Optimizers: the same trajectory as PyTorch, param groups, state dicts, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim

START = {"a": np.array([0.5, -1.0, 2.0]), "b": np.array([[0.3, -0.7, 1.1], [-1.4, 0.2, 0.9]])}
MATRIX = np.array([[0.9, -0.4, 0.3], [0.2, 1.1, -0.6], [-0.5, 0.7, 0.8]])


def loss_of(a, b, matmul):
    """sum(sin(M a) * a^2) + sum(tanh(b) * b): the same loss in either library."""
    return ((matmul(MATRIX, a)).sin() * a * a).sum() + (b.tanh() * b).sum()


def minigrad_params():
    return [mg.tensor(START[name].copy(), requires_grad=True) for name in ("a", "b")]


def torch_params(torch):
    return [torch.tensor(START[name].copy(), requires_grad=True) for name in ("a", "b")]


def minigrad_step(optimizer, params):
    optimizer.zero_grad()
    loss_of(*params, lambda m, x: mg.tensor(m) @ x).backward()
    optimizer.step()


def torch_step(torch, optimizer, params):
    optimizer.zero_grad()
    loss_of(*params, lambda m, x: torch.tensor(m) @ x).backward()
    optimizer.step()


def assert_same_trajectory(torch, name, options, groups=lambda params: params, steps=10):
    """``steps`` steps of ``name`` (SGD, Adam, AdamW) in both libraries from the same start:
    the parameters agree after every step."""
    ours, theirs = minigrad_params(), torch_params(torch)
    our_optimizer = getattr(optim, name)(groups(ours), **options)
    their_optimizer = getattr(torch.optim, name)(groups(theirs), **options)
    for step in range(steps):
        minigrad_step(our_optimizer, ours)
        torch_step(torch, their_optimizer, theirs)
        for mine, reference in zip(ours, theirs):
            np.testing.assert_allclose(mine.numpy(), reference.detach().numpy(), rtol=1e-10,
                                       atol=1e-12, err_msg=f"{name}({options}), step {step}")
    return our_optimizer, their_optimizer


# --- the same updates as PyTorch ------------------------------------------------------------

TRAJECTORY_CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.2}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.1, "nesterov": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "maximize": True}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.2}),
    ("Adam", {"lr": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.95), "eps": 1e-3, "maximize": True}),
    ("AdamW", {"lr": 0.1}),
    ("AdamW", {"lr": 0.1, "weight_decay": 0.5, "amsgrad": True}),
]


@pytest.mark.parametrize(("name", "options"), TRAJECTORY_CASES,
                         ids=[f"{n}-{'-'.join(o)}" for n, o in TRAJECTORY_CASES])
def test_trajectory_matches_pytorch(torch, name, options):
    assert_same_trajectory(torch, name, options)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_param_groups_with_their_own_lr_match_pytorch(torch, name):
    def groups(params):
        return [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.01}]

    options = {"lr": 0.2, "momentum": 0.9} if name == "SGD" else {"lr": 0.2}
    ours, _ = assert_same_trajectory(torch, name, options, groups)
    assert [group["lr"] for group in ours.param_groups] == [0.2, 0.01]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_parameters_without_grad_are_skipped(torch, name):
    unused = mg.tensor([1.0, 2.0], requires_grad=True)
    their_unused = torch.tensor([1.0, 2.0], requires_grad=True)
    options = {"lr": 0.1, "weight_decay": 0.5}  # decay would move it if it were stepped
    if name == "SGD":
        options["momentum"] = 0.9  # so that SGD keeps state too
    ours, theirs = assert_same_trajectory(
        torch, name, options, groups=lambda params: params + [
            unused if isinstance(params[0], mg.Tensor) else their_unused])
    np.testing.assert_array_equal(unused.numpy(), [1.0, 2.0])
    assert unused.grad is None and not ours.state.get(unused)
    assert len(ours.state_dict()["state"]) == len(theirs.state_dict()["state"]) == 2


def test_float32_parameters_and_state_stay_float32(torch):
    for name, options in [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.1})]:
        ours = [mg.tensor(START["a"], dtype="float32", requires_grad=True)]
        theirs = [torch.tensor(START["a"], dtype=torch.float32, requires_grad=True)]
        our_optimizer = getattr(optim, name)(ours, **options)
        their_optimizer = getattr(torch.optim, name)(theirs, **options)
        for _ in range(5):
            our_optimizer.zero_grad()
            (ours[0].sin() * ours[0]).sum().backward()
            our_optimizer.step()
            their_optimizer.zero_grad()
            (theirs[0].sin() * theirs[0]).sum().backward()
            their_optimizer.step()
        assert ours[0].dtype == np.float32
        arrays = [v for v in our_optimizer.state[ours[0]].values() if isinstance(v, np.ndarray)]
        assert arrays and all(array.dtype == np.float32 for array in arrays)
        np.testing.assert_allclose(ours[0].numpy(), theirs[0].detach().numpy(), rtol=1e-5)


def test_step_writes_into_the_parameter_and_a_graph_that_saved_it_notices():
    param = mg.tensor([1.0, 2.0], requires_grad=True)
    array = param.numpy(force=True)
    optimizer = optim.SGD([param], lr=0.5)
    loss = (param * param).sum()
    loss.backward(retain_graph=True)
    optimizer.step()
    assert param.numpy(force=True) is array  # updated in place, not replaced
    np.testing.assert_array_equal(array, [0.0, 0.0])
    assert param.is_leaf and param.grad_fn is None  # the update is not recorded
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()


def test_step_calls_the_closure_with_grad_mode_on_and_returns_its_loss():
    param = mg.tensor([3.0], requires_grad=True)
    optimizer = optim.SGD([param], lr=0.1)

    def closure():
        optimizer.zero_grad()
        loss = (param * param).sum()
        assert mg.is_grad_enabled()
        loss.backward()
        return loss

    with mg.no_grad():
        loss = optimizer.step(closure)
    assert loss.item() == 9.0
    np.testing.assert_allclose(param.numpy(), [3.0 - 0.1 * 6.0])


def test_params_can_be_a_generator_such_as_model_parameters():
    model = nn.Linear(3, 2)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    first, second = optimizer.param_groups[0]["params"]
    assert first is model.weight and second is model.bias


def test_every_group_gets_the_defaults_it_does_not_set():
    a, b = mg.tensor([1.0], requires_grad=True), mg.tensor([2.0], requires_grad=True)
    optimizer = optim.SGD([{"params": [a]}, {"params": b, "momentum": 0.5}], lr=0.1)
    first, second = optimizer.param_groups
    assert first["params"][0] is a and second["params"][0] is b  # a lone tensor is listed
    assert {key: value for key, value in first.items() if key != "params"} == {
        "lr": 0.1, "momentum": 0, "dampening": 0, "weight_decay": 0, "nesterov": False,
        "maximize": False}
    assert second["momentum"] == 0.5 and second["lr"] == 0.1


def test_add_param_group_adds_parameters_that_the_next_step_updates():
    a, b = mg.tensor([1.0], requires_grad=True), mg.tensor([2.0], requires_grad=True)
    optimizer = optim.SGD([a], lr=0.1)
    optimizer.add_param_group({"params": [b], "lr": 1.0})
    (a * b).sum().backward()
    optimizer.step()
    np.testing.assert_allclose([a.item(), b.item()], [1.0 - 0.1 * 2.0, 2.0 - 1.0 * 1.0])


# --- zero_grad ------------------------------------------------------------------------------


def test_zero_grad_sets_grads_to_none_by_default():
    params = minigrad_params()
    optimizer = optim.SGD(params, lr=0.1)
    minigrad_step(optimizer, params)
    assert all(p.grad is not None for p in params)
    optimizer.zero_grad()
    assert all(p.grad is None for p in params)


def test_zero_grad_without_set_to_none_gives_zeros_of_the_right_shape():
    params = minigrad_params()
    optimizer = optim.SGD(params, lr=0.1)
    minigrad_step(optimizer, params)
    optimizer.zero_grad(set_to_none=False)
    for param in params:
        np.testing.assert_array_equal(param.grad.numpy(), np.zeros(param.shape))
        assert param.grad.dtype == param.dtype


# --- state_dict and load_state_dict ---------------------------------------------------------


@pytest.mark.parametrize(("name", "options"), [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.1}),
])
def test_state_dict_has_pytorchs_layout(torch, name, options):
    def groups(params):
        return [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.01}]

    ours, theirs = assert_same_trajectory(torch, name, options, groups, steps=3)
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert set(mine) == set(reference) == {"state", "param_groups"}
    assert len(mine["param_groups"]) == len(reference["param_groups"])
    for my_group, their_group in zip(mine["param_groups"], reference["param_groups"]):
        assert set(my_group) <= set(their_group)
        assert {key: their_group[key] for key in my_group} == my_group
    assert list(mine["state"]) == list(reference["state"])
    for index, state in mine["state"].items():
        assert set(state) == set(reference["state"][index])
        for key, value in state.items():
            np.testing.assert_allclose(value, reference["state"][index][key], rtol=1e-10)


def test_state_dict_is_a_snapshot_that_later_steps_do_not_change():
    params = minigrad_params()
    optimizer = optim.Adam(params, lr=0.1)
    minigrad_step(optimizer, params)
    saved = optimizer.state_dict()
    assert isinstance(saved["state"][0]["exp_avg"], mg.Tensor)
    exp_avg = saved["state"][0]["exp_avg"].numpy().copy()
    minigrad_step(optimizer, params)
    np.testing.assert_array_equal(saved["state"][0]["exp_avg"].numpy(), exp_avg)
    assert saved["state"][0]["step"] == 1


@pytest.mark.parametrize(("name", "options"), [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.1}),
])
def test_saved_and_loaded_state_continues_the_same_trajectory(tmp_path, name, options):
    params = minigrad_params()
    optimizer = getattr(optim, name)(params, **options)
    for _ in range(3):
        minigrad_step(optimizer, params)
    mg.save({"params": [p.numpy() for p in params], "optimizer": optimizer.state_dict()},
            tmp_path / "checkpoint.npz")

    checkpoint = mg.load(tmp_path / "checkpoint.npz")
    resumed_params = [mg.tensor(array, requires_grad=True) for array in checkpoint["params"]]
    resumed = getattr(optim, name)(resumed_params, lr=123.0)  # the checkpoint's lr wins
    resumed.load_state_dict(checkpoint["optimizer"])
    assert resumed.param_groups[0]["lr"] == 0.1
    for _ in range(5):
        minigrad_step(optimizer, params)
        minigrad_step(resumed, resumed_params)
        for mine, original in zip(resumed_params, params):
            np.testing.assert_array_equal(mine.numpy(), original.numpy())


def test_loaded_state_is_copied_and_takes_the_parameters_dtype():
    param = mg.tensor([1.0, 2.0], dtype="float32", requires_grad=True)
    optimizer = optim.SGD([param], lr=0.1, momentum=0.9)
    buffer = np.array([0.5, 0.5])  # float64
    optimizer.load_state_dict({"state": {0: {"momentum_buffer": buffer}},
                               "param_groups": [{"lr": 0.1, "params": [0]}]})
    loaded = optimizer.state[param]["momentum_buffer"]
    assert loaded.dtype == np.float32 and loaded is not buffer


def two_group_optimizer():
    a, b = mg.tensor([1.0, 2.0], requires_grad=True), mg.tensor([3.0], requires_grad=True)
    return optim.Adam([{"params": [a]}, {"params": [b]}], lr=0.1), a, b


def test_load_state_dict_refuses_a_different_number_of_groups():
    optimizer, a, b = two_group_optimizer()
    other = optim.Adam([a, b], lr=0.1)
    with pytest.raises(ValueError, match=r"different number of parameter groups \(1\).*\(2\)"):
        optimizer.load_state_dict(other.state_dict())


def test_load_state_dict_refuses_a_group_of_another_size():
    optimizer, a, b = two_group_optimizer()
    other = optim.Adam([{"params": [a, b]}, {"params": [mg.tensor([0.0])]}], lr=0.1)
    with pytest.raises(ValueError, match="group 0 has 2 parameters there but 1 here"):
        optimizer.load_state_dict(other.state_dict())


def test_load_state_dict_refuses_state_of_another_shape_and_changes_nothing():
    optimizer, a, b = two_group_optimizer()
    saved = optimizer.state_dict()
    saved["param_groups"][0]["lr"] = 0.5
    saved["state"] = {1: {"step": 1, "exp_avg": np.zeros(4), "exp_avg_sq": np.zeros(1)}}
    with pytest.raises(ValueError, match=r"'exp_avg' of parameter 1 has shape \(4,\).*\(1,\)"):
        optimizer.load_state_dict(saved)
    assert optimizer.param_groups[0]["lr"] == 0.1 and len(optimizer.state) == 0


def test_load_state_dict_refuses_something_that_is_not_a_state_dict():
    optimizer, _, _ = two_group_optimizer()
    with pytest.raises(ValueError, match="'state' and 'param_groups'.*keys"):
        optimizer.load_state_dict({"weight": np.zeros(2)})


def test_load_state_dict_refuses_invalid_options():
    optimizer, _, _ = two_group_optimizer()
    saved = optimizer.state_dict()
    saved["param_groups"][1]["lr"] = -1.0
    with pytest.raises(ValueError, match="Adam: invalid lr=-1.0"):
        optimizer.load_state_dict(saved)


# --- errors ---------------------------------------------------------------------------------


def test_an_empty_parameter_list_is_refused():
    with pytest.raises(ValueError, match="SGD: optimizer got an empty parameter list. Pass "
                                         "model.parameters()"):
        optim.SGD([], lr=0.1)


def test_a_used_up_generator_is_explained():
    model = nn.Linear(2, 2)
    parameters = model.parameters()
    list(parameters)
    with pytest.raises(ValueError, match="generator: it can be used only once"):
        optim.Adam(parameters)


def test_a_single_tensor_instead_of_a_list_is_refused():
    param = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got "
                                        r"Tensor.*SGD\(\[tensor\]"):
        optim.SGD(param, lr=0.1)


def test_a_non_tensor_parameter_is_named_with_its_type_and_position():
    param = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="can only optimize Tensors, but the parameter at "
                                        "param group 0, position 1 is a ndarray"):
        optim.SGD([param, np.zeros(2)], lr=0.1)


def test_a_parameter_in_two_groups_is_refused():
    a, b = mg.tensor([1.0], requires_grad=True), mg.tensor([2.0], requires_grad=True)
    with pytest.raises(ValueError, match="more than one parameter group.*param group 1, "
                                         "position 1"):
        optim.Adam([{"params": [a]}, {"params": [b, a]}])


def test_the_same_parameter_twice_in_one_group_warns():
    a = mg.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="the same parameter twice"):
        optim.SGD([a, a], lr=0.1)


def test_a_set_of_parameters_is_refused_because_its_order_changes():
    with pytest.raises(TypeError, match="ordering of tensors in sets"):
        optim.SGD([{"params": {mg.tensor([1.0], requires_grad=True)}}], lr=0.1)


def test_a_group_without_params_is_refused():
    with pytest.raises(ValueError, match="param group 0 has no 'params' entry"):
        optim.SGD([{"lr": 0.1}], lr=0.1)


def test_a_non_leaf_tensor_is_refused():
    leaf = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor.*position 0"):
        optim.SGD([leaf * 2], lr=0.1)


def test_a_leaf_that_does_not_require_grad_is_accepted_and_never_moves():
    frozen = mg.tensor([1.0])
    optimizer = optim.SGD([frozen], lr=0.1)
    optimizer.step()
    assert frozen.item() == 1.0


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: optim.SGD(p, lr=-0.1), "SGD: invalid lr=-0.1"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=-0.5), "SGD: invalid momentum=-0.5"),
    (lambda p: optim.SGD(p, lr=0.1, weight_decay=-1), "SGD: invalid weight_decay=-1"),
    (lambda p: optim.SGD(p, lr=0.1, nesterov=True), "Nesterov momentum requires a momentum "
                                                    "and zero dampening.*momentum=0,"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
     "Nesterov.*dampening=0.1"),
    (lambda p: optim.Adam(p, lr=-1e-3), "Adam: invalid lr=-0.001"),
    (lambda p: optim.Adam(p, eps=-1e-8), "Adam: invalid eps=-1e-08"),
    (lambda p: optim.Adam(p, weight_decay=-0.1), "Adam: invalid weight_decay=-0.1"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.999)),
     r"Adam: invalid beta parameter at index 0: betas=\(1.0, 0.999\)"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), "Adam: invalid beta parameter at index 1"),
    (lambda p: optim.Adam(p, betas=0.9), "Adam: betas must be a pair.*got 0.9"),
    (lambda p: optim.AdamW(p, lr=-0.1), "AdamW: invalid lr=-0.1"),
    (lambda p: optim.SGD([{"params": p, "lr": -2.0}], lr=0.1), "SGD: invalid lr=-2.0"),
])
def test_invalid_options_are_refused_naming_the_optimizer_option_and_value(make, message):
    with pytest.raises(ValueError, match=message):
        make([mg.tensor([1.0], requires_grad=True)])
