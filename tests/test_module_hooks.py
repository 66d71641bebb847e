"""Module hooks: forward (pre-)hooks, full backward (pre-)hooks, the old-style backward
hook and the global ones, each run the same way on minigrad and on PyTorch."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn.modules import module as modules_module


def plain(value):
    """Tensors (also in tuples, lists, dicts) as nested lists, for comparing records."""
    if hasattr(value, "detach"):
        return value.detach().numpy().astype(np.float64).tolist()
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if hasattr(value, "__len__") and type(value).__name__ == "Size":
        return list(value)
    return value


def both(scenario):
    """``scenario(lib)`` on minigrad, and on torch when it is installed: the records
    (plain lists) must be equal. Returns minigrad's."""
    ours = plain(scenario(mg))
    try:
        import torch
    except ImportError:
        return ours
    assert_same(ours, plain(scenario(torch)))
    return ours


def assert_same(ours, theirs, where="record"):
    if isinstance(ours, float) or isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-5, abs=1e-6), where
    elif isinstance(ours, list) and isinstance(theirs, list):
        assert len(ours) == len(theirs), f"{where}: {ours} != {theirs}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert ours == theirs, where


class Scale:
    """A module class built per library: forward(x, factor=2, shift=None)."""

    @staticmethod
    def make(lib):
        class ScaleModule(lib.nn.Module):
            def forward(self, x, factor=2.0, shift=None):
                y = x * factor
                return y if shift is None else y + shift

        return ScaleModule()


# --- forward hooks ----------------------------------------------------------------------


def test_forward_hook_sees_args_and_output_to_record_activations():
    def scenario(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
        with lib.no_grad():
            for p in model.parameters():
                p.copy_(lib.arange(p.numel(), dtype=lib.float32).reshape(p.shape) / 5 - 0.5)
        seen = []
        for layer in model:
            layer.register_forward_hook(
                lambda m, args, out: seen.append((type(m).__name__, len(args), args[0], out)))
        model(lib.tensor([[1.0, -2.0]]))
        return seen

    seen = both(scenario)
    assert [s[0] for s in seen] == ["Linear", "ReLU"]


def test_forward_hook_result_replaces_the_output():
    def scenario(lib):
        layer = lib.nn.Tanh()
        layer.register_forward_hook(lambda m, args, out: out * 10)
        layer.register_forward_hook(lambda m, args, out: out + 1)  # sees the replaced one
        return layer(lib.tensor([0.5, -1.0]))

    both(scenario)


def test_forward_pre_hook_replaces_args_and_a_single_value_becomes_a_tuple():
    def scenario(lib):
        layer = Scale.make(lib)
        seen = []
        layer.register_forward_pre_hook(lambda m, args: args[0] + 1)  # not a tuple
        layer.register_forward_pre_hook(lambda m, args: seen.append(args))
        return layer(lib.tensor([1.0, 2.0]), 3.0), seen

    both(scenario)


def test_forward_pre_hook_with_kwargs_gets_and_replaces_them():
    def scenario(lib):
        layer = Scale.make(lib)
        seen = []

        def hook(module, args, kwargs):
            seen.append((args, dict(kwargs)))
            return args, {**kwargs, "shift": 100.0}

        layer.register_forward_pre_hook(hook, with_kwargs=True)
        return layer(lib.tensor([1.0]), factor=3.0), seen

    both(scenario)


def test_forward_pre_hook_with_kwargs_returning_something_else_is_an_error():
    for lib in _libraries():
        layer = Scale.make(lib)
        layer.register_forward_pre_hook(lambda m, args, kwargs: args, with_kwargs=True)
        with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple "
                                               r"of \(new_args, new_kwargs\)"):
            layer(lib.tensor([1.0]), factor=3.0)


def test_forward_hook_with_kwargs_gets_the_kwargs():
    def scenario(lib):
        layer = Scale.make(lib)
        seen = []
        layer.register_forward_hook(lambda m, args, kwargs, out: seen.append(
            (args, dict(kwargs), out)), with_kwargs=True)
        layer(lib.tensor([1.0]), shift=lib.tensor([5.0]))
        return seen

    both(scenario)


def test_prepend_and_global_hooks_run_in_pytorchs_order():
    def scenario(lib):
        order = []
        layer = lib.nn.ReLU()
        register = lib.nn.modules.module
        handles = [
            layer.register_forward_hook(lambda *a: order.append("forward 1")),
            layer.register_forward_hook(lambda *a: order.append("forward 0"), prepend=True),
            layer.register_forward_pre_hook(lambda *a: order.append("pre 1")),
            layer.register_forward_pre_hook(lambda *a: order.append("pre 0"), prepend=True),
            register.register_module_forward_hook(lambda *a: order.append("global forward")),
            register.register_module_forward_pre_hook(lambda *a: order.append("global pre")),
        ]
        try:
            layer(lib.tensor([1.0]))
        finally:
            for handle in handles:
                handle.remove()
        return order

    assert both(scenario) == ["global pre", "pre 0", "pre 1", "global forward",
                              "forward 0", "forward 1"]


def test_always_call_hook_runs_when_forward_raises_and_others_do_not():
    def scenario(lib):
        class Broken(lib.nn.Module):
            def forward(self, x):
                raise ValueError("broken forward")

        layer, ran = Broken(), []
        layer.register_forward_hook(lambda m, args, out: ran.append(("always", out)),
                                    always_call=True)
        layer.register_forward_hook(lambda m, args, out: ran.append("normal"))
        with pytest.raises(ValueError, match="broken forward"):
            layer(lib.tensor([1.0]))
        return ran

    assert both(scenario) == [["always", None]]


def test_always_call_hook_that_raises_too_is_a_warning_and_the_first_error_wins():
    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("broken forward")

    layer = Broken()
    layer.register_forward_hook(lambda m, args, out: 1 / 0, always_call=True)
    with pytest.warns(UserWarning, match="always_call=True.*division by zero"):
        with pytest.raises(ValueError, match="broken forward"):
            layer(mg.tensor([1.0]))


def test_error_in_a_forward_hook_gets_the_layer_note():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    model[1].register_forward_hook(lambda m, args, out: out.reshape(7))
    with pytest.raises(Exception) as raised:
        model(mg.ones(1, 2))
    assert raised.value.layer == "ReLU '1'"


def test_ops_in_a_hooked_layer_keep_its_group():
    model = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    model[1].register_forward_hook(lambda m, args, out: out * 2)
    model[1].register_full_backward_hook(lambda m, gi, go: None)
    out = model(mg.ones(1, 2, requires_grad=True))
    assert out.grad_fn.group == "1"


# --- handles and the fast path ------------------------------------------------------------


def test_handle_remove_and_context_manager():
    for lib in _libraries():
        layer, calls = lib.nn.ReLU(), []
        handle = layer.register_forward_hook(lambda *a, calls=calls: calls.append(1),
                                             with_kwargs=False, always_call=True)
        layer(lib.tensor([1.0]))
        handle.remove()
        handle.remove()  # twice: nothing
        layer(lib.tensor([1.0]))
        with layer.register_forward_pre_hook(lambda *a, calls=calls: calls.append(2)) as inner:
            layer(lib.tensor([1.0]))
        layer(lib.tensor([1.0]))
        assert calls == [1, 2]
        assert inner.id > handle.id
        assert not layer._forward_hooks and not layer._forward_hooks_always_called
        assert not layer._forward_pre_hooks


def test_hooks_live_in_pytorchs_ordered_dicts():
    layer = nn.ReLU()
    handle = layer.register_forward_pre_hook(lambda *a: None, with_kwargs=True)
    first = layer.register_full_backward_hook(lambda *a: None)
    prepended = layer.register_full_backward_hook(lambda *a: None, prepend=True)
    assert list(layer._forward_pre_hooks) == [handle.id]
    assert layer._forward_pre_hooks_with_kwargs == {handle.id: True}
    assert list(layer._backward_hooks) == [prepended.id, first.id]


def test_call_takes_the_short_path_again_once_hooks_are_removed():
    layer = nn.ReLU()
    handle = layer.register_forward_hook(lambda *a: None)
    assert layer._hooked
    handle.remove()
    layer(mg.tensor([1.0]))
    assert not layer._hooked
    handle = modules_module.register_module_forward_hook(lambda *a: None)
    assert nn.Module._hooked
    handle.remove()
    layer(mg.tensor([1.0]))
    assert not nn.Module._hooked


def test_a_hook_must_be_callable():
    with pytest.raises(TypeError, match="ReLU: a hook must be callable, got int"):
        nn.ReLU().register_forward_hook(3)


# --- full backward hooks --------------------------------------------------------------------


def test_full_backward_hook_sees_the_module_inputs_and_outputs_gradients():
    def scenario(lib):
        class Two(lib.nn.Module):  # two outputs (one unused), a non-Tensor output and input
            def forward(self, x, k=2.0):
                y = x.exp()
                return y * k, x * 3, 5

        module, seen = Two(), []
        module.register_full_backward_pre_hook(lambda m, go: seen.append(("pre", go)))
        module.register_full_backward_hook(lambda m, gi, go: seen.append(("full", gi, go)))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b, c = module(x, 3.0)
        (a * a).sum().backward()
        seen.append(x.grad)
        return seen

    both(scenario)


def test_full_backward_hook_result_replaces_grad_input():
    def scenario(lib):
        model = lib.nn.Sequential(lib.nn.Tanh(), lib.nn.Sigmoid())
        model[1].register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        model(x * 1).sum().backward()
        return x.grad

    both(scenario)


def test_full_backward_pre_hook_result_replaces_grad_output():
    def scenario(lib):
        layer, seen = lib.nn.Tanh(), []
        layer.register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))
        layer.register_full_backward_hook(lambda m, gi, go: seen.append(go))
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        layer(x).sum().backward()
        return seen, x.grad

    both(scenario)


def test_full_backward_hook_with_no_input_needing_grad_fires_with_the_outputs():
    def scenario(lib):
        layer, seen = lib.nn.Linear(2, 1), []
        layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go[0].shape)))
        with pytest.warns(UserWarning, match="Full backward hook is firing when gradients "
                                             "are computed with respect to module outputs"):
            layer(lib.ones(3, 2)).sum().backward()
        return seen

    assert both(scenario) == [[[None], [3, 1]]]


def test_full_backward_hooks_on_every_layer_leave_the_gradients_unchanged():
    def scenario(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        x = lib.randn(5, 3)
        model(x).pow(2).sum().backward()
        plain_grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        names = []
        for layer in model:
            layer.register_full_backward_hook(lambda m, gi, go: names.append(
                (type(m).__name__, gi[0] is None)))
        with pytest.warns(UserWarning, match="Full backward hook is firing"):
            model(x).pow(2).sum().backward()  # (the first Linear's input needs no grad)
        return names, [(p.grad - g).abs().max().item() < 1e-6
                       for p, g in zip(model.parameters(), plain_grads)]

    names, same = both(scenario)
    assert names == [["Linear", False], ["ReLU", False], ["Linear", True]] and all(same)


def test_full_backward_hook_in_double_backward():
    def scenario(lib):
        layer, seen = lib.nn.Tanh(), []
        layer.register_full_backward_hook(lambda m, gi, go: seen.append(len(gi)))
        x = lib.tensor([0.3, -0.7], dtype=lib.float64, requires_grad=True)
        (grad,) = lib.autograd.grad(layer(x).sum(), x, create_graph=True)
        grad.sum().backward()
        return seen, grad, x.grad

    both(scenario)


def test_full_backward_hook_returning_the_wrong_number_is_an_error():
    for lib in _libraries():
        layer = lib.nn.Tanh()
        layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        x = lib.tensor([0.5], requires_grad=True)
        with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of "
                                               "grad_input, got 2, but expected 1"):
            layer(x).sum().backward()


def test_error_in_a_backward_hook_names_the_layer():
    layer = nn.Tanh()
    layer.register_full_backward_hook(lambda m, gi, go: gi[5])
    with pytest.raises(IndexError) as raised:
        layer(mg.tensor([0.5], requires_grad=True)).sum().backward()
    assert any("backward hook '<lambda>' of layer Tanh" in n for n in raised.value.__notes__)


def test_full_and_old_style_backward_hooks_do_not_mix():
    for lib in _libraries():
        layer = lib.nn.Tanh()
        layer.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and "
                                               "full backward hooks on a single Module"):
            layer.register_backward_hook(lambda *a: None)
        assert len(layer._backward_hooks) == 1  # the refused one is not kept


def test_full_backward_hooks_in_lazy_mode():
    layer, seen = nn.Tanh(), []
    layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0], go[0])))
    x = mg.tensor([0.5, -1.0], requires_grad=True)
    with mg.lazy():
        layer(x).sum().backward()
    np.testing.assert_allclose(seen[0][0].numpy(), 1 - np.tanh([0.5, -1.0]) ** 2, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), seen[0][0].numpy())


# --- the old-style backward hook ------------------------------------------------------------


def test_old_style_backward_hook_on_a_one_op_module():
    def scenario(lib):
        layer, seen = lib.nn.Tanh(), []
        layer.register_backward_hook(lambda m, gi, go: seen.append((gi, go)))
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        layer(x * 1).sum().backward()
        return seen

    both(scenario)


def test_old_style_backward_hook_warns_when_forward_is_several_ops():
    class TwoOps(nn.Module):
        def forward(self, x):
            return x.exp().sin()

    layer = TwoOps()
    layer.register_backward_hook(lambda *a: None)
    with pytest.warns(FutureWarning, match="register_full_backward_hook"):
        layer(mg.tensor([0.5], requires_grad=True) * 1)


# --- global hooks -------------------------------------------------------------------------


def test_global_forward_hook_runs_for_every_module():
    def scenario(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
        names = []
        with lib.nn.modules.module.register_module_forward_hook(
                lambda m, args, out: names.append(type(m).__name__)):
            model(lib.ones(1, 2))
        model(lib.ones(1, 2))
        return names

    assert both(scenario) == ["Linear", "ReLU", "Sequential"]


def test_global_full_backward_hook_runs_before_the_modules_own():
    def scenario(lib):
        layer, order = lib.nn.Tanh(), []
        layer.register_full_backward_hook(lambda *a: order.append("own"))
        handles = [lib.nn.modules.module.register_module_full_backward_hook(
            lambda *a: order.append("global")),
            lib.nn.modules.module.register_module_full_backward_pre_hook(
            lambda *a: order.append("global pre"))]
        try:
            layer(lib.tensor([0.5], requires_grad=True)).sum().backward()
        finally:
            for handle in handles:
                handle.remove()
        return order

    assert both(scenario) == ["global pre", "global", "own"]


# --- copies, pickles, state dicts ------------------------------------------------------------


def record_output(module, args, output):
    module.recorded = output


def test_deepcopy_and_pickle_keep_hooks_and_state_dict_has_none():
    layer = nn.Linear(2, 2)
    layer.register_forward_hook(record_output)
    assert list(layer.state_dict()) == ["weight", "bias"]
    for clone in (copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        clone(mg.ones(1, 2))
        assert clone.recorded.shape == (1, 2)
        assert not hasattr(layer, "recorded")


def test_a_lambda_hook_cannot_be_pickled_as_in_pytorch():
    layer = nn.ReLU()
    layer.register_forward_hook(lambda *a: None)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(layer)


def test_a_module_pickled_without_hook_dicts_gets_them():
    layer = nn.ReLU()
    state = {k: v for k, v in layer.__dict__.items() if "hooks" not in k}
    old = nn.ReLU.__new__(nn.ReLU)
    old.__setstate__(state)
    old.register_forward_hook(record_output)
    old(mg.tensor([-1.0]))
    assert old.recorded.tolist() == [0.0]


def test_state_dict_pre_and_post_hooks_run_in_pytorchs_order_with_prefixes():
    def scenario(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.ReLU()))
        calls = []
        for module in (model, model[0], model[1], model[1][0]):
            module.register_state_dict_pre_hook(
                lambda m, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))
            module.register_state_dict_post_hook(
                lambda m, sd, prefix, meta: calls.append(("post", prefix)))

        def drop_bias(module, state_dict, prefix, local_metadata):
            del state_dict[prefix + "bias"]

        model[0].register_state_dict_post_hook(drop_bias)
        keys = list(model.state_dict())
        return calls, keys

    both(scenario)


def test_state_dict_post_hook_must_return_none():
    for lib in _libraries():
        layer = lib.nn.Linear(2, 2)
        layer.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd)
        with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
            layer.state_dict()


def test_load_state_dict_post_hook_can_forgive_missing_keys():
    def scenario(lib):
        layer = lib.nn.Linear(2, 1)
        seen = []

        def forgive(module, incompatible):
            seen.append((list(incompatible.missing_keys), list(incompatible.unexpected_keys)))
            incompatible.missing_keys.clear()

        with layer.register_load_state_dict_post_hook(forgive):
            result = layer.load_state_dict({"weight": lib.ones(1, 2), "extra": lib.ones(1)},
                                           strict=False)
            layer.load_state_dict({"weight": lib.full((1, 2), 2.0)})  # strict, forgiven
        loaded = layer.weight.detach().clone()
        with pytest.raises(RuntimeError):
            layer.load_state_dict({"weight": lib.ones(1, 2)})  # the hook is gone
        return seen, list(result.missing_keys), loaded

    both(scenario)


def test_load_state_dict_pre_hook_can_rename_old_keys():
    def scenario(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 1, bias=False))
        seen = []

        def rename(module, state_dict, prefix, local_metadata, strict, missing, unexpected,
                   error_msgs):
            seen.append((type(module).__name__, prefix, strict))
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")

        model[0].register_load_state_dict_pre_hook(rename)
        given = {"0.w": lib.full((1, 2), 3.0)}
        result = model.load_state_dict(given)
        return seen, list(result.missing_keys), list(given), model[0].weight

    both(scenario)


def test_load_state_dict_pre_hook_error_messages_stop_the_load():
    for lib in _libraries():
        layer = lib.nn.Linear(2, 1)
        layer.register_load_state_dict_pre_hook(
            lambda module, sd, prefix, meta, strict, missing, unexpected, errors:
            errors.append("old checkpoint format"))
        with pytest.raises(RuntimeError, match="old checkpoint format"):
            layer.load_state_dict(layer.state_dict())


def _libraries():
    libraries = [mg]
    try:
        import torch
    except ImportError:
        return libraries
    return libraries + [torch]


@pytest.fixture(autouse=True)
def no_warnings_left_over():
    with warnings.catch_warnings():
        yield


def test_hooks_registered_on_a_lazy_layer_run_from_its_first_call():
    def scenario(lib):
        layer = lib.nn.LazyLinear(2)
        seen = []
        handle = layer.register_forward_hook(lambda m, args, out: seen.append(out.shape))
        lib.manual_seed(0)
        layer(lib.ones(3, 4))
        layer(lib.ones(1, 4))
        handle.remove()
        layer(lib.ones(5, 4))
        return [list(shape) for shape in seen]

    assert both(scenario) == [[3, 2], [1, 2]]
