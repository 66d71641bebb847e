"""Tools: checkpoint, gradcheck, save/load."""

from __future__ import annotations

import pathlib
import re
import tracemalloc

import numpy as np
import pytest

import minigrad as mg

ENGINE = pathlib.Path(__file__).resolve().parents[1] / "minigrad"


def leaf(*shape, seed=0, dtype=np.float64, requires_grad=True):
    data = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return mg.Tensor(data, requires_grad=requires_grad)


# --- checkpoint ---------------------------------------------------------------------------------


def block(x, w):
    return ((x @ w).tanh() * x).exp().sum(dim=1)


def test_checkpoint_gives_the_same_value_and_input_gradients():
    x, w = leaf(4, 3), leaf(3, 3, seed=1)
    plain = block(x, w)
    plain.sum().backward()
    expected = plain.numpy(), x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    checkpointed = mg.checkpoint(block, x, w)
    checkpointed.sum().backward()
    np.testing.assert_allclose(checkpointed.numpy(), expected[0], rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), expected[1], rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), expected[2], rtol=1e-12)


@pytest.mark.parametrize("input_requires_grad", [False, True])
def test_checkpoint_gives_gradients_to_parameters_used_inside_fn(input_requires_grad):
    x, w = leaf(4, 3, requires_grad=input_requires_grad), leaf(3, 3, seed=1)
    block(x, w).sum().backward()
    expected = w.grad.numpy().copy(), x.grad.numpy().copy() if x.grad is not None else None
    w.grad = x.grad = None
    result = mg.checkpoint(lambda inputs: block(inputs, w), x)
    assert result.requires_grad
    result.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), expected[0], rtol=1e-12)
    if input_requires_grad:
        np.testing.assert_allclose(x.grad.numpy(), expected[1], rtol=1e-12)
    else:
        assert x.grad is None


def test_checkpoint_restores_the_random_state_so_dropout_masks_match():
    def dropout_block(x):
        keep = mg.rand(*x.shape) > 0.5  # draws from mg's global generator
        return x.exp() * keep * 2

    x = leaf(50)
    mg.manual_seed(7)
    dropout_block(x).sum().backward()
    expected = x.grad.numpy().copy()
    x.grad = None
    mg.manual_seed(7)
    out = mg.checkpoint(dropout_block, x)
    mg.randn(10)  # moves the generator on before backward recomputes
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    np.testing.assert_array_equal(x.grad.numpy() != 0, out.numpy() != 0)


def test_checkpoint_keeps_no_intermediate_nodes_in_the_graph():
    x, w = leaf(4, 3), leaf(3, 3, seed=1)
    out = mg.checkpoint(block, x, w)
    assert out.grad_fn.name == "Checkpoint"
    assert all(t is x or t is w for t in out.grad_fn.inputs)


def test_checkpoint_keeps_fewer_bytes_alive_during_forward():
    def chain(x):
        for _ in range(10):
            x = (x * 1.01).tanh()  # 20 ops, each output and saved array 800 kB
        return x

    def bytes_kept(run):
        x = leaf(1000, 100)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            out = run(x)
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        out.sum().backward()  # the graph is still usable
        return kept

    plain, checkpointed = bytes_kept(chain), bytes_kept(lambda x: mg.checkpoint(chain, x))
    one_array = 1000 * 100 * 8
    assert plain > 10 * one_array
    assert checkpointed < 3 * one_array


# --- gradcheck ------------------------------------------------------------------------------------


class Cube(mg.Function):
    """f(x) = x^3,  f'(x) = 3 x^2"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x ** 2


class WrongCube(Cube):
    """f'(x) = 3 x^2, but backward forgets the 3 at element 2"""

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad = grad_output * 3 * x ** 2
        grad[2] /= 3
        return grad


class MulWrongForSecondInput(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x * 2


def test_gradcheck_returns_true_for_a_correct_function():
    assert mg.gradcheck(Cube.apply, [leaf(5)]) is True


def test_gradcheck_checks_builtin_composites():
    x, w = leaf(3, 4), leaf(4, 2, seed=1)
    assert mg.gradcheck(lambda a, b: (a @ b).tanh().sum(dim=0), [x, w]) is True


def test_gradcheck_raises_for_a_wrong_function():
    with pytest.raises(mg.GradcheckError):
        mg.gradcheck(WrongCube.apply, [leaf(5)])


def test_gradcheck_returns_false_without_raise_exception():
    assert mg.gradcheck(WrongCube.apply, [leaf(5)], raise_exception=False) is False


def test_gradcheck_report_names_the_input_the_element_and_both_values():
    with pytest.raises(mg.GradcheckError) as info:
        mg.gradcheck(WrongCube.apply, [leaf(5)])
    message = str(info.value)
    assert "input 0 (shape (5,))" in message and "1 of 5 element(s) differ" in message
    (analytic, numerical), = re.findall(
        r"at \(2,\): analytic (\S+), numerical (\S+),", message)
    # backward dropped a factor 3 there: the numerical value is three times the analytic one
    np.testing.assert_allclose(float(numerical), 3 * float(analytic), rtol=1e-4)


def test_gradcheck_report_says_which_input_is_wrong():
    with pytest.raises(mg.GradcheckError) as info:
        mg.gradcheck(MulWrongForSecondInput.apply, [leaf(3), leaf(3, seed=1)])
    message = str(info.value)
    assert re.search(r"input 0 \(shape \(3,\)\): ok", message)
    assert "input 1 (shape (3,)): 3 of 3 element(s) differ" in message


def test_gradcheck_works_in_float64_even_for_float32_inputs():
    with pytest.warns(UserWarning, match="float32"):
        assert mg.gradcheck(Cube.apply, [leaf(4, dtype=np.float32)]) is True


def test_gradcheck_warns_about_float32_inputs_and_names_them():
    # as PyTorch's gradcheck: a warning, not an error; the check still runs (in float64)
    x64, x32 = leaf(3), leaf(3, seed=1, dtype=np.float32)
    with pytest.warns(UserWarning) as caught:
        assert mg.gradcheck(lambda a, b: a * b, [x64, x32]) is True
    message = str(caught[0].message)
    assert "input 1 (float32)" in message and "input 0" not in message
    assert "float64 copy" in message and "unreliable" in message
    assert caught[0].filename == __file__  # it points at the caller's line
    with pytest.warns(UserWarning, match="float32"):  # PyTorch's call form too
        mg.autograd.gradcheck(Cube.apply, [leaf(4, dtype=np.float32)])


def test_gradcheck_does_not_warn_for_float64_or_inputs_without_grad(recwarn):
    constant = mg.tensor(np.ones(3, dtype=np.float32))  # needs no gradient: not checked
    assert mg.gradcheck(lambda a, c: a * c, [leaf(3), constant]) is True
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


# --- save / load ------------------------------------------------------------------------------


def nested_state():
    return {
        "model": {"weight": mg.Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True),
                  "bias": np.array([0.5, -0.5], dtype=np.float32),
                  "steps": np.arange(3, dtype=np.int64)},
        "optimizer": {"lr": 0.001, "betas": [0.9, 0.999], "name": "adam",
                      "state": {0: {"step": 12, "exp_avg": np.ones(3)}, 1: {"step": 7}}},
        "shape": (2, 3),
        "epoch": 3,
        "done": False,
        "note": None,
    }


def test_save_and_load_round_trip_a_nested_state(tmp_path):
    path = tmp_path / "state.npz"
    mg.save(nested_state(), path)
    loaded = mg.load(path)
    original = nested_state()
    weight = loaded["model"]["weight"]
    assert isinstance(weight, mg.Tensor) and weight.requires_grad
    np.testing.assert_array_equal(weight.numpy(), original["model"]["weight"].numpy())
    for key in ("bias", "steps"):
        array = loaded["model"][key]
        assert isinstance(array, np.ndarray) and array.dtype == original["model"][key].dtype
        np.testing.assert_array_equal(array, original["model"][key])
    optimizer = loaded["optimizer"]
    assert optimizer["lr"] == 0.001 and isinstance(optimizer["lr"], float)
    assert optimizer["betas"] == [0.9, 0.999] and optimizer["name"] == "adam"
    assert set(optimizer["state"]) == {0, 1}  # int keys stay ints
    assert optimizer["state"][1] == {"step": 7} and type(optimizer["state"][0]["step"]) is int
    np.testing.assert_array_equal(optimizer["state"][0]["exp_avg"], np.ones(3))
    assert loaded["shape"] == (2, 3) and loaded["epoch"] == 3
    assert loaded["done"] is False and loaded["note"] is None


@pytest.mark.parametrize("name", ["checkpoint.bin", "weights"])
def test_save_writes_exactly_the_given_path(tmp_path, name):
    mg.save({"w": np.ones(2)}, tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    np.testing.assert_array_equal(mg.load(str(tmp_path / name))["w"], np.ones(2))


def test_a_plain_numpy_savez_file_loads_as_a_dict_of_arrays(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, weight=np.eye(2), bias=np.zeros(2, dtype=np.float32))
    loaded = mg.load(path)
    assert set(loaded) == {"weight", "bias"}
    np.testing.assert_array_equal(loaded["weight"], np.eye(2))
    assert loaded["bias"].dtype == np.float32


def test_an_object_array_cannot_be_saved(tmp_path):
    with pytest.raises(TypeError, match=r"pickle"):
        mg.save({"bad": np.array([1, "two", None], dtype=object)}, tmp_path / "bad.npz")


def test_an_arbitrary_object_cannot_be_saved(tmp_path):
    with pytest.raises(TypeError, match=r"set"):
        mg.save({"bad": {1, 2}}, tmp_path / "bad.npz")


def test_load_refuses_a_file_that_needs_pickle(tmp_path):
    path = tmp_path / "pickled.npz"
    np.savez(path, payload=np.array([{"a": 1}], dtype=object))  # np.savez pickles this
    with pytest.raises(ValueError, match=r"pickle"):
        mg.load(path)


def test_load_calls_np_load_without_pickle(tmp_path, monkeypatch):
    path = tmp_path / "state.npz"
    mg.save(nested_state(), path)
    calls = []
    real_load = np.load

    def recording_load(*args, **kwargs):
        calls.append(kwargs)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(np, "load", recording_load)
    mg.load(path)
    assert calls and all(kwargs.get("allow_pickle", False) is False for kwargs in calls)


def test_no_engine_source_enables_pickle():
    offenders = [str(path.relative_to(ENGINE)) for path in ENGINE.rglob("*.py")
                 if re.search(r"allow_pickle\s*=\s*True|import pickle|pickle\.load",
                              path.read_text())]
    assert offenders == []
