"""nn.Module semantics, containers, nn.utils and mg.save/mg.load, each checked against
what PyTorch does (the differences a differential review found)."""

from __future__ import annotations

import copy
import io
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


def torch_or_skip():
    return pytest.importorskip("torch")


# --- Module ------------------------------------------------------------------------------


def test_zero_grad_without_set_to_none_zeroes_the_gradient_tensor_in_place():
    layer = nn.Linear(2, 2)
    layer.weight.grad = mg.ones(2, 2)
    kept = layer.weight.grad
    layer.zero_grad(set_to_none=False)
    assert layer.weight.grad is kept
    np.testing.assert_array_equal(kept.numpy(), np.zeros((2, 2)))


@pytest.mark.parametrize("who", ["module", "optimizer"])
def test_zero_grad_keeps_the_gradient_tensor_and_leaves_arrays_a_backward_made_alone(who):
    layer = nn.Linear(100, 100)  # big enough that backward's weight gradient is adopted
    optimizer = mg.optim.SGD(layer.parameters(), lr=0.1)
    layer(mg.randn(3, 100)).sum().backward()
    kept = layer.weight.grad
    made_by_backward = kept.numpy()  # what a backward step showed (BackwardStepper)
    shown = made_by_backward.copy()
    (layer if who == "module" else optimizer).zero_grad(set_to_none=False)
    assert layer.weight.grad is kept and layer.bias.grad is not None
    assert not kept.numpy().any() and not layer.bias.grad.numpy().any()
    np.testing.assert_array_equal(made_by_backward, shown)
    x = mg.randn(3, 100)
    layer(x).sum().backward()  # adds into the zeros: the gradient of this pass alone
    np.testing.assert_allclose(kept.numpy(), np.tile(x.sum(0).numpy(), (100, 1)), rtol=1e-5)


def test_load_state_dict_assign_puts_the_state_dicts_tensors_in_place():
    torch = torch_or_skip()
    results = []
    for lib in (torch, mg):
        layer = lib.nn.Linear(2, 2)
        weight = lib.ones(2, 2, dtype=lib.float64)
        running_mean = lib.ones(2) * 5
        norm = lib.nn.BatchNorm1d(2)
        state = norm.state_dict()
        state["running_mean"] = running_mean
        layer.load_state_dict({"weight": weight, "bias": lib.zeros(2)}, assign=True)
        norm.load_state_dict(state, assign=True)
        weight.add_(1)  # the parameter shares the state dict's memory
        results.append((str(layer.weight.dtype).removeprefix("torch."),
                        type(layer.weight).__name__, layer.weight.requires_grad,
                        layer.weight.tolist(), norm.running_mean is running_mean))
    assert results[0] == results[1]


def test_load_state_dict_assign_keeps_the_models_requires_grad():
    layer = nn.Linear(2, 2)
    layer.weight.requires_grad_(False)
    given = nn.Parameter(mg.ones(2, 2))
    layer.load_state_dict({"weight": given, "bias": mg.zeros(2)}, assign=True)
    assert layer.weight is given and not given.requires_grad and layer.bias.requires_grad


def test_load_state_dict_result_prints_as_pytorchs_when_all_keys_match():
    layer = nn.Linear(2, 2)
    assert repr(layer.load_state_dict(layer.state_dict())) == "<All keys matched successfully>"
    result = layer.load_state_dict({"weight": mg.ones(2, 2)}, strict=False)
    assert "missing_keys=['bias']" in repr(result)


def test_module_to_an_integer_dtype_is_an_error_not_a_silent_no_op():
    with pytest.raises(TypeError, match="only accepts floating point"):
        nn.Linear(2, 2).to(mg.int32)


def test_module_half_and_type_convert_as_in_pytorch():
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert model.half() is model and model[0].weight.dtype == np.float16
    assert model[1].num_batches_tracked.dtype == np.int64  # half: floating ones only
    model.type(mg.float64)  # type: every tensor, integer buffers too
    assert {str(v.dtype) for v in model.state_dict().values()} == {"float64"}
    with pytest.raises(TypeError, match="bfloat16"):
        model.bfloat16()


def test_deepcopy_of_a_module_leaves_the_gradients_behind():
    layer = nn.Linear(2, 2)
    layer.weight.grad = mg.ones(2, 2)
    twin = copy.deepcopy(layer)
    assert twin.weight.grad is None and isinstance(twin.weight, nn.Parameter)
    assert twin.weight.requires_grad and twin.weight is not layer.weight
    np.testing.assert_array_equal(twin.weight.numpy(), layer.weight.numpy())


def test_named_modules_memo_holds_modules():
    model = nn.Sequential(nn.Linear(1, 1), nn.ReLU(), nn.Sequential(nn.Linear(1, 1)))
    names = [name for name, _ in model.named_modules(memo={model[2]})]
    assert names == ["", "0", "1"]


@pytest.mark.parametrize("register", ["register_buffer", "register_parameter", "add_module"])
@pytest.mark.parametrize("existing", ["plain", "method", "other_registry"])
def test_registering_over_an_existing_attribute_is_a_key_error(register, existing):
    module = nn.Module()
    module.plain = 3
    module.other_registry = nn.Identity() if register != "add_module" else \
        nn.Parameter(mg.zeros(1))
    name = {"plain": "plain", "method": "train", "other_registry": "other_registry"}[existing]
    value = {"register_buffer": mg.zeros(1), "register_parameter": nn.Parameter(mg.zeros(1)),
             "add_module": nn.ReLU()}[register]
    with pytest.raises(KeyError, match="already exists"):
        getattr(module, register)(name, value)


def test_module_dict_refuses_a_key_that_is_a_method_name():
    with pytest.raises(KeyError, match="already exists"):
        nn.ModuleDict({"keys": nn.ReLU()})


def test_repr_puts_a_multi_line_extra_repr_on_its_own_lines():
    torch = torch_or_skip()
    texts = []
    for lib in (torch, mg):
        class Block(lib.nn.Module):
            def extra_repr(self):
                return "a=1\nb=2"
        model = lib.nn.Module()
        model.block = Block()
        model.fc = lib.nn.Linear(1, 1)
        texts.append(repr(model))
    assert texts[0] == texts[1]


def test_module_list_repr_groups_repeated_modules():
    torch = torch_or_skip()
    texts = [repr(lib.nn.ModuleList([lib.nn.Linear(1, 1) for _ in range(3)]
                                    + [lib.nn.ReLU(), lib.nn.Linear(1, 1)]))
             for lib in (torch, mg)]
    assert texts[0] == texts[1]


# --- ParameterDict -----------------------------------------------------------------------


def test_parameter_dict_takes_a_plain_dicts_parameters_in_sorted_order():
    torch = torch_or_skip()
    orders = []
    for lib in (torch, mg):
        params = lib.nn.ParameterDict({"b": lib.ones(2), "a": lib.zeros(3)})
        params.update({"z": lib.ones(1), "y": lib.ones(1)})
        params.update(OrderedDict([("q", lib.ones(1)), ("p", lib.ones(1))]))
        orders.append((list(params), list(params.state_dict())))
    assert orders[0] == orders[1] == (["a", "b", "y", "z", "q", "p"],) * 2


def test_parameter_dict_has_pytorchs_dict_methods():
    params = nn.ParameterDict(OrderedDict([("b", mg.ones(2)), ("a", mg.zeros(3))]))
    assert list(params.copy()) == ["b", "a"] and params.copy()["a"] is params["a"]
    assert params.setdefault("c", mg.ones(1)) is params["c"]
    assert list(params | nn.ParameterDict({"d": mg.ones(1)})) == ["b", "a", "c", "d"]
    assert params.popitem()[0] == "c"
    with pytest.raises(KeyError):
        del params["missing"]
    params.clear()
    assert len(params) == 0 and list(params.parameters()) == []


# --- nn.utils ------------------------------------------------------------------------------


def _gradients(lib, shapes=((3, 4), (5,), ())):
    rng = np.random.default_rng(0)
    params = []
    for shape in shapes:
        param = lib.nn.Parameter(lib.tensor(rng.normal(size=shape).astype(np.float32)))
        param.grad = lib.tensor(rng.normal(size=shape).astype(np.float32))
        params.append(param)
    return params


@pytest.mark.parametrize("norm_type", [0, -1, float("-inf"), float("inf"), 0.5, 2])
def test_clip_grad_norm_matches_pytorch_for_every_norm_type(norm_type):
    torch = torch_or_skip()
    results = []
    for lib in (torch, mg):
        params = _gradients(lib)
        total = lib.nn.utils.clip_grad_norm_(params, 0.1, norm_type=norm_type, foreach=None)
        results.append((float(total), [p.grad.numpy().copy() for p in params]))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    for mine, theirs in zip(results[1][1], results[0][1]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_of_an_empty_gradient_with_the_inf_norm_says_why():
    params = _gradients(mg, shapes=((2,), (2, 0)))
    with pytest.raises(RuntimeError, match=r"inf norm of gradient 1 \(shape \(2, 0\)\)"):
        nn.utils.clip_grad_norm_(params, 1.0, norm_type="inf")


def test_get_total_norm_and_clip_grads_with_norm_split_clip_grad_norm():
    torch = torch_or_skip()
    results = []
    for lib in (torch, mg):
        params = _gradients(lib)
        total = lib.nn.utils.get_total_norm([p.grad for p in params], 2.0)
        lib.nn.utils.clip_grads_with_norm_(params, 0.5, total)
        lib.nn.utils.clip_grad_value_(params, 0.05, foreach=True)
        results.append((float(total), [p.grad.numpy().copy() for p in params]))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    for mine, theirs in zip(results[1][1], results[0][1]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5)


def test_unpad_sequence_undoes_pad_sequence():
    rnn = nn.utils.rnn
    sequences = [mg.arange(float(n * 2)).reshape(n, 2) for n in (3, 5, 1)]
    for batch_first in (False, True):
        padded = rnn.pad_sequence(sequences, batch_first=batch_first)
        back = rnn.unpad_sequence(padded, mg.tensor([3, 5, 1]), batch_first=batch_first)
        for got, want in zip(back, sequences):
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_pad_sequence_of_0d_tensors_says_a_length_dim_is_needed():
    with pytest.raises(ValueError, match="0-d"):
        nn.utils.rnn.pad_sequence([mg.tensor(1.0), mg.tensor(2.0)])


# --- mg.save / mg.load ---------------------------------------------------------------------


def _round_trip(obj):
    buffer = io.BytesIO()
    mg.save(obj, buffer)
    buffer.seek(0)
    return mg.load(buffer)


def test_load_gives_one_tensor_for_a_tensor_saved_under_two_names():
    x = mg.arange(3.0)
    loaded = _round_trip({"x": x, "y": x, "z": mg.arange(3.0)})
    assert loaded["x"] is loaded["y"] and loaded["x"] is not loaded["z"]


def test_load_keeps_parameters_and_ordered_dicts():
    layer = nn.Linear(2, 2)
    loaded = _round_trip(layer.state_dict(keep_vars=True))
    assert type(loaded) is OrderedDict and list(loaded) == ["weight", "bias"]
    assert isinstance(loaded["weight"], nn.Parameter) and loaded["weight"].requires_grad
    assert type(_round_trip({"a": mg.ones(1)})["a"]) is mg.Tensor
    assert type(_round_trip({"a": 1})) is dict
