"""Module: registration, walking the tree, state dicts, modes, groups and repr."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 4)
        self.fc2 = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


class Encoder(nn.Module):
    """A model with containers inside: paths go through them (layers.0.fc1)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([MLP(), nn.Sequential(nn.Linear(3, 2))])
        self.norm = nn.BatchNorm1d(2)

    def forward(self, x):
        x = self.layers[0](x)
        return self.norm(self.layers[1](x))


# --- registration ---------------------------------------------------------------------------


def test_assigned_parameters_and_modules_are_registered_in_order():
    model = MLP()
    assert [name for name, _ in model.named_parameters()] == [
        "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert list(model.children()) == [model.fc1, model.fc2]
    assert [name for name, _ in model.named_modules()] == ["", "fc1", "fc2"]


def test_parameters_require_grad_and_buffers_do_not():
    model = Encoder()
    assert all(p.requires_grad for p in model.parameters())
    assert [name for name, _ in model.named_buffers()] == [
        "norm.running_mean", "norm.running_var", "norm.num_batches_tracked"]
    assert not any(b.requires_grad for b in model.buffers())


def test_a_shared_module_is_listed_once():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(model.parameters())) == 2
    assert model.num_parameters() == 6


def test_num_parameters_counts_every_number():
    assert MLP().num_parameters() == (2 * 4 + 4) + (4 * 3 + 3)


def test_plain_attributes_are_not_registered():
    model = MLP()
    model.scale = 3.0
    model.cache = mg.ones(2)  # a Tensor that is not a Parameter: a plain attribute
    assert "scale" not in dict(model.named_parameters())
    assert len(list(model.parameters())) == 4


def test_assigning_before_super_init_says_what_to_do():
    class Broken(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Broken()


def test_a_missing_attribute_names_the_module_class():
    with pytest.raises(AttributeError, match="'MLP' object has no attribute 'fc3'"):
        MLP().fc3  # noqa: B018


def test_deleting_a_submodule_unregisters_it():
    model = MLP()
    del model.fc2
    assert [name for name, _ in model.named_modules()] == ["", "fc1"]


def test_module_dict_registers_its_values():
    heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Linear(2, 3)})
    assert "a" in heads and len(heads) == 2
    assert [name for name, _ in heads.named_parameters()] == [
        "a.weight", "a.bias", "b.weight", "b.bias"]


def test_sequential_runs_its_modules_in_order_and_indexes_like_a_list():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    x = mg.randn(5, 2)
    expected = model[2](model[1](model[0](x)))
    np.testing.assert_array_equal(model(x).numpy(), expected.numpy())
    assert len(model) == 3 and isinstance(model[-1], nn.Linear)
    assert len(model[:2]) == 2


# --- state dict -----------------------------------------------------------------------------


def test_state_dict_has_flat_keys_through_containers():
    assert list(Encoder().state_dict()) == [
        "layers.0.fc1.weight", "layers.0.fc1.bias", "layers.0.fc2.weight", "layers.0.fc2.bias",
        "layers.1.0.weight", "layers.1.0.bias", "norm.weight", "norm.bias",
        "norm.running_mean", "norm.running_var", "norm.num_batches_tracked"]


def test_state_dict_values_are_tensor_snapshots_without_history():
    model = MLP()
    state = model.state_dict()
    assert all(isinstance(v, mg.Tensor) and not v.requires_grad and v.grad_fn is None
               for v in state.values())
    assert state["fc1.weight"].size() == state["fc1.weight"].shape == model.fc1.weight.shape
    with mg.no_grad():
        model.fc1.weight.fill_(5.0)
    assert not np.any(state["fc1.weight"].numpy() == 5.0)


def test_state_dict_keep_vars_gives_the_parameters_themselves():
    model = MLP()
    assert model.state_dict(keep_vars=True)["fc1.weight"] is model.fc1.weight
    assert list(model.state_dict(prefix="net.")) == ["net." + k for k in model.state_dict()]


def test_load_state_dict_round_trips_into_a_fresh_model():
    source, target = Encoder(), Encoder()
    target.load_state_dict(source.state_dict())
    for (key, a), b in zip(source.state_dict().items(), target.state_dict().values()):
        np.testing.assert_array_equal(a, b, err_msg=key)
    x = mg.randn(6, 2)
    np.testing.assert_allclose(target(x).numpy(), source(x).numpy())


def test_load_state_dict_keeps_the_parameter_objects_and_dtype():
    model = MLP()
    weight = model.fc1.weight
    state = {k: v.astype(np.float64) for k, v in MLP().state_dict().items()}
    model.load_state_dict(state)
    assert model.fc1.weight is weight and weight.dtype == np.float32
    np.testing.assert_array_equal(weight.numpy(), state["fc1.weight"].astype(np.float32))


def test_load_state_dict_lists_every_problem_at_once_and_changes_nothing():
    model = MLP()
    before = model.state_dict()
    state = dict(before)
    del state["fc2.bias"]
    state["fc1.weight"] = np.zeros((5, 2), np.float32)
    state["fc3.weight"] = np.zeros(1, np.float32)
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(state)
    message = str(info.value)
    assert "3 problems" in message
    assert "missing key 'fc2.bias'" in message
    assert "unexpected key 'fc3.weight'" in message
    assert "fc1.weight: the checkpoint has shape (5, 2), the model has shape (4, 2)" in message
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[key])


def test_load_state_dict_not_strict_returns_missing_and_unexpected_keys():
    model = MLP()
    state = {"fc1.weight": np.ones((4, 2), np.float32), "extra": np.zeros(1)}
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["fc1.bias", "fc2.weight", "fc2.bias"]
    assert result.unexpected_keys == ["extra"]
    np.testing.assert_array_equal(model.fc1.weight.numpy(), 1.0)


def test_load_state_dict_rejects_a_shape_mismatch_even_when_not_strict():
    state = MLP().state_dict()
    state["fc2.weight"] = np.zeros((2, 2), np.float32)
    with pytest.raises(RuntimeError, match="fc2.weight: the checkpoint has shape"):
        MLP().load_state_dict(state, strict=False)


def test_load_state_dict_rejects_floats_for_an_integer_buffer():
    state = nn.BatchNorm1d(2).state_dict()
    state["num_batches_tracked"] = np.array(1.5)
    with pytest.raises(RuntimeError, match="num_batches_tracked: the checkpoint holds float64"):
        nn.BatchNorm1d(2).load_state_dict(state)


def test_load_state_dict_needs_a_dict():
    with pytest.raises(TypeError, match="expected a dict of arrays, got list"):
        MLP().load_state_dict([1, 2])


def test_a_saved_state_dict_loads_back_through_mg_save(tmp_path):
    model = Encoder()
    mg.save(model.state_dict(), tmp_path / "model.npz")
    fresh = Encoder()
    fresh.load_state_dict(mg.load(tmp_path / "model.npz"))
    x = mg.randn(3, 2)
    model.eval(), fresh.eval()
    np.testing.assert_array_equal(fresh(x).numpy(), model(x).numpy())


def test_state_dict_keys_match_pytorch_for_the_same_architecture(torch):
    ours = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                         nn.Linear(4, 2), nn.LayerNorm(2), nn.Embedding(3, 2))
    theirs = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4),
                                 torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4, 2),
                                 torch.nn.LayerNorm(2), torch.nn.Embedding(3, 2))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert ours.state_dict()[key].shape == tuple(value.shape), key
        assert ours.state_dict()[key].dtype == value.numpy().dtype, key


def test_a_pytorch_state_dict_loads_as_torch_tensors_too(torch):
    theirs = torch.nn.Linear(3, 2)
    ours = nn.Linear(3, 2)
    ours.load_state_dict(theirs.state_dict())
    np.testing.assert_array_equal(ours.weight.numpy(), theirs.weight.detach().numpy())


# --- modes, grads, apply --------------------------------------------------------------------


def test_train_and_eval_set_every_submodule():
    model = Encoder()
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_zero_grad_sets_gradients_to_none_by_default():
    model = MLP()
    model(mg.randn(3, 2)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_apply_visits_children_before_the_parent():
    visited = []
    Encoder().apply(lambda m: visited.append(type(m).__name__))
    assert visited == ["Linear", "Linear", "MLP", "Linear", "Sequential", "ModuleList",
                       "BatchNorm1d", "Encoder"]


def test_apply_can_reinitialise_weights():
    model = MLP()

    def init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.zeros_(module.bias)

    model.apply(init_weights)
    assert all(np.all(m.bias.numpy() == 0) for m in (model.fc1, model.fc2))


def test_double_converts_parameters_and_keeps_the_objects():
    model = MLP()
    weight = model.fc1.weight
    model.double()
    assert model.fc1.weight is weight and weight.dtype == np.float64
    assert model(mg.randn(2, 2, dtype="float64")).dtype == np.float64


# --- containers used like lists, and layers replaced: PyTorch's order -----------------------


def container_edits(lib, kind):
    """The same edits on a Sequential or ModuleList of minigrad or PyTorch; what each
    container holds after each edit, as (name, layer class, out_features) triples."""
    nn = lib.nn

    def listing(container):
        return [(name, type(m).__name__, getattr(m, "out_features", None))
                for name, m in container._modules.items()]

    def make(*layers):
        return nn.Sequential(*layers) if kind == "Sequential" else nn.ModuleList(layers)

    box = make(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 4), nn.Tanh())
    seen = [listing(box)]
    box[0] = nn.Linear(2, 5)  # replaced in place: still first
    box[-1] = nn.Sigmoid()
    seen.append(listing(box))
    del box[1]  # renumbered 0, 1, 2
    seen.append(listing(box))
    box.insert(1, nn.Linear(5, 6))
    box.insert(0, nn.Identity())
    seen.append(listing(box))
    popped = box.pop(2)
    seen.append(listing(box) + [("popped", type(popped).__name__, popped.out_features)])
    del box[1:3]
    seen.append(listing(box))
    box.extend([nn.Linear(1, 7), nn.ReLU()])
    box.append(nn.Linear(7, 8))
    seen.append(listing(box))
    seen.append(listing(box[1:3]) + [(type(box[1:3]).__name__, None, None)])
    return seen


@pytest.mark.parametrize("kind", ["Sequential", "ModuleList"])
def test_list_like_edits_of_containers_match_pytorch(torch, kind):
    assert container_edits(mg, kind) == container_edits(torch, kind)


def test_a_replaced_item_is_the_one_indexed_and_run():
    """Replacing an item of a ModuleList once moved it to the end: layers[0] then gave
    the old second layer, silently."""
    layers = nn.ModuleList([nn.Linear(2, 3), nn.Linear(3, 4)])
    new = nn.Linear(2, 3)
    layers[0] = new
    assert layers[0] is new and list(layers) == [new, layers[1]]
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    model[0] = nn.Linear(2, 5)
    assert model(mg.randn(4, 2)).shape == (4, 5)


def test_reassigned_layers_parameters_and_buffers_keep_their_place(torch):
    """``model.a = Linear(...)`` (transfer learning's ``model.fc = ...``) keeps a's place
    among the modules, and so in parameters() and state_dict(), as in PyTorch."""

    def keys(lib):
        nn = lib.nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = nn.Linear(1, 1), nn.Linear(1, 1)
                self.w, self.v = nn.Parameter(lib.zeros(1)), nn.Parameter(lib.zeros(2))
                self.register_buffer("s", lib.zeros(1))
                self.register_buffer("t", lib.zeros(1))

        model = Model()
        model.a = nn.Linear(1, 2)
        model.w = nn.Parameter(lib.ones(3))
        model.s = lib.ones(2)
        model.register_buffer("t", lib.zeros(3), persistent=False)
        model.register_buffer("t", lib.zeros(3))
        return list(model.state_dict()), [name for name, _ in model.named_parameters()]

    assert keys(mg) == keys(torch)


def test_module_dict_updates_pops_and_clears_as_pytorch_s(torch):
    def edits(lib):
        nn = lib.nn
        box = nn.ModuleDict([("a", nn.Linear(1, 2)), ("b", nn.ReLU())])
        box.update({"c": nn.Tanh(), "a": nn.Linear(1, 3)})  # a replaced in place
        box.update(nn.ModuleDict({"d": nn.Identity()}))
        seen = [[(k, type(m).__name__, getattr(m, "out_features", None))
                 for k, m in box.items()]]
        popped = box.pop("b")
        seen.append((type(popped).__name__, list(box), [n for n, _ in box.named_parameters()]))
        box.clear()
        seen.append((len(box), list(box.parameters())))
        return seen

    assert edits(mg) == edits(torch)
    with pytest.raises(TypeError, match=r"ModuleDict.update: expected \(name, module\) pairs, "
                                        r"but element 0 is str 'ab'"):
        nn.ModuleDict().update(["ab"])


def test_containers_add_and_repeat_as_pytorch_s(torch):
    def results(lib):
        nn = lib.nn
        relu, tanh = nn.ReLU(), nn.Tanh()
        seq = nn.Sequential(relu) + nn.Sequential(tanh)
        seq += nn.Sequential(nn.Identity())
        repeated = nn.Sequential(relu, tanh) * 2
        twice = 2 * nn.Sequential(relu)
        grown = nn.Sequential(relu)
        grown *= 3
        listed = nn.ModuleList([relu]) + [tanh]
        listed += nn.ModuleList([nn.Identity()])
        return [[(name, type(m).__name__) for name, m in box.named_children()]
                + [(len(box), box[0] is box[-1])]
                for box in (seq, repeated, twice, grown, listed)]

    assert results(mg) == results(torch)
    with pytest.raises(ValueError, match=r"Sequential \+ ModuleList: only a Sequential"):
        nn.Sequential() + nn.ModuleList()
    with pytest.raises(ValueError, match=r"Sequential \* 0: the factor must be positive"):
        nn.Sequential(nn.ReLU()) * 0


def test_get_submodule_parameter_and_buffer_as_pytorch_s(torch):
    def model(lib):
        nn = lib.nn
        return nn.Sequential(OrderedDict(body=nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)),
                                         head=nn.Linear(3, 1)))

    ours, theirs = model(mg), model(torch)
    for path in ("", "body", "body.1", "head"):
        assert type(ours.get_submodule(path)).__name__ == type(theirs.get_submodule(path)).__name__
    assert ours.get_submodule("body.0") is ours.body[0]
    for name in ("body.0.weight", "head.bias"):
        assert ours.get_parameter(name) is dict(ours.named_parameters())[name]
        assert ours.get_parameter(name).shape == tuple(theirs.get_parameter(name).shape)
    assert ours.get_buffer("body.1.running_mean") is ours.body[1].running_mean
    with pytest.raises(AttributeError, match=r"Sequential.get_submodule\('body.5'\): "
                                             r"Sequential 'body' has no submodule '5' "
                                             r"\(it has: 0, 1\)"):
        ours.get_submodule("body.5")
    with pytest.raises(AttributeError, match=r"get_parameter\('head.scale'\): Linear 'head' "
                                             r"has no parameter 'scale' \(its parameters: "
                                             r"weight, bias\)"):
        ours.get_parameter("head.scale")
    with pytest.raises(AttributeError, match=r"get_buffer\('head.weight'\): Linear 'head' has "
                                             r"no buffer 'weight' \(its buffers: none\)"):
        ours.get_buffer("head.weight")


@pytest.mark.parametrize("register", [
    lambda m, name: m.add_module(name, nn.ReLU()),
    lambda m, name: m.register_parameter(name, nn.Parameter(mg.zeros(1))),
    lambda m, name: m.register_buffer(name, mg.zeros(1)),
    lambda m, name: nn.ModuleDict({name: nn.ReLU()}),
])
@pytest.mark.parametrize("name, error", [("a.b", KeyError), ("", KeyError), (3, TypeError)])
def test_a_name_with_a_dot_or_empty_is_refused_as_in_pytorch(register, name, error):
    """A "." would make state_dict keys ambiguous (they are paths)."""
    model = nn.Sequential(nn.Linear(1, 1))
    before = list(model.state_dict())
    with pytest.raises(error, match=r"the name (must be a str|must not be empty or contain)"):
        register(model, name)
    assert list(model.state_dict()) == before and len(model) == 1


@pytest.mark.parametrize("edit, error, message", [
    (lambda box: box[2], IndexError, r"ModuleList.__getitem__: index 2 is out of range for 2"),
    (lambda box: box.__setitem__(-3, nn.ReLU()), IndexError, r"index -3 is out of range"),
    (lambda box: box.__delitem__("0"), TypeError, r"indices are ints \(or slices\), got str"),
    (lambda box: box.insert(5, nn.ReLU()), IndexError, r"insert: index 5 is out of range"),
    (lambda box: box.__setitem__(0, "relu"), TypeError, r"must be a Module, got str"),
])
def test_a_container_edit_out_of_range_says_so_and_changes_nothing(edit, error, message):
    box = nn.ModuleList([nn.Linear(2, 3), nn.ReLU()])
    before = list(box._modules.items())
    with pytest.raises(error, match=message):
        edit(box)
    assert list(box._modules.items()) == before


# --- groups: graph nodes carry the module path ----------------------------------------------


def groups_in_graph(output):
    nodes = mg.walk([output.grad_fn], mg.autograd.grad_parents)
    return {node.group for node in nodes}


def test_calling_a_model_groups_nodes_by_module_path():
    model = Encoder()
    output = model(mg.randn(4, 2))
    # the relu in MLP.forward belongs to the MLP itself: "layers.0"
    assert groups_in_graph(output) == {"layers.0", "layers.0.fc1", "layers.0.fc2",
                                       "layers.1.0", "norm"}


def test_module_groups_nest_inside_a_user_group():
    model = MLP()
    with mg.group("model"):
        output = model(mg.randn(4, 2))
    assert groups_in_graph(output) == {"model", "model.fc1", "model.fc2"}


def test_a_submodule_called_on_its_own_has_no_stale_path():
    model = MLP()
    model(mg.randn(1, 2))
    output = model.fc1(mg.randn(1, 2))
    assert groups_in_graph(output) == {None}


class Calls(nn.Module):
    """Calls the layers at the paths it is given, in order."""

    def __init__(self, **layers):
        super().__init__()
        for name, layer in layers.items():
            setattr(self, name, layer)
        self.order = list(layers)

    def forward(self, x):
        for path in self.order:
            layer = self
            for name in path.split("."):
                layer = getattr(layer, name) if not name.isdigit() else layer[int(name)]
            x = layer(x)
        return x


def test_paths_stay_right_when_the_model_changes_between_calls():
    """Paths are remembered after the first call: a layer moved, replaced, deleted or
    put back deeper must still be found where it is now."""
    first = MLP()
    model = Calls(layers=nn.ModuleList([first, nn.Linear(3, 2)]))
    model.order = ["layers.0", "layers.1"]
    model(mg.randn(4, 2))
    model.layers[0] = MLP()  # replaced: the new layer's path; the old one is not below
    assert groups_in_graph(model(mg.randn(4, 2))) == {"layers.0", "layers.0.fc1",
                                                     "layers.0.fc2", "layers.1"}
    model.extra = first  # the old layer, now elsewhere
    model.order = ["extra", "layers.1"]
    assert groups_in_graph(model(mg.randn(4, 2))) == {"extra", "extra.fc1", "extra.fc2",
                                                     "layers.1"}
    del model.extra
    model.layers[1] = nn.Sequential(first, nn.Linear(3, 2))  # deeper than before
    model.order = ["layers.1"]
    assert groups_in_graph(model(mg.randn(4, 2))) == {"layers.1.0", "layers.1.0.fc1",
                                                     "layers.1.0.fc2", "layers.1.1"}


def test_each_layer_of_a_long_sequential_finds_its_path_at_once():
    """A layer's path is remembered: a 300-layer Sequential does not search its siblings
    for each layer (counted: the search runs once per layer, on the first call)."""
    model = nn.Sequential(*[nn.Identity() for _ in range(300)])
    searches = []
    search = nn.Module._search_path_of

    def counted(self, descendant):
        searches.append(descendant)
        return search(self, descendant)

    nn.Module._search_path_of = counted
    try:
        x = mg.randn(2, 2, requires_grad=True)
        with mg.group("net"):
            model(x).sum()
            model(x).sum()
    finally:
        nn.Module._search_path_of = search
    assert len(searches) == 300


def test_errors_inside_a_module_name_its_path():
    model = Encoder()
    with pytest.raises(mg.ShapeError, match=r"Linear 'layers.0.fc1': expected input of shape "
                                            r"\(\.\.\., 2\) \(in_features=2\), got shape "
                                            r"\(4, 5\)"):
        model(mg.randn(4, 5))


# --- repr -----------------------------------------------------------------------------------


def test_repr_is_nested_and_shows_arguments():
    text = repr(Encoder())
    assert text.startswith("Encoder(\n  (layers): ModuleList(\n    (0): MLP(\n")
    assert "(fc1): Linear(in_features=2, out_features=4, bias=True)" in text
    assert "(norm): BatchNorm1d(2, eps=1e-05, momentum=0.1" in text


def test_parameter_repr_says_it_is_a_parameter():
    assert repr(nn.Parameter(mg.zeros(2))).startswith("Parameter containing:\n")


def test_sequential_given_a_list_says_to_unpack_it():
    with pytest.raises(TypeError, match=r"Sequential\(\*layers\), not Sequential\(layers\)"):
        nn.Sequential([nn.Linear(1, 1)])
