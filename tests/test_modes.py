"""Lazy mode, graph groups and anomaly detection."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg

# --- lazy mode --------------------------------------------------------------------------------


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = mg.Tensor(rng.standard_normal((4, 3)).astype(np.float32))
    w1 = mg.Tensor(rng.standard_normal((3, 5)).astype(np.float32), requires_grad=True)
    b1 = mg.Tensor(rng.standard_normal(5).astype(np.float32), requires_grad=True)
    w2 = mg.Tensor(rng.standard_normal((5, 2)).astype(np.float32), requires_grad=True)
    return x, (w1, b1, w2)


def mlp_loss(x, w1, b1, w2):
    hidden = (x @ w1 + b1).relu()
    logits = hidden @ w2
    return (logits.logsumexp(dim=1) - logits[:, 0]).mean() + 0.1 * (w2 ** 2).sum()


def test_lazy_results_have_no_data_but_known_shape_and_dtype():
    x, (w1, b1, w2) = inputs()
    with mg.lazy():
        hidden = (x @ w1 + b1).relu()
        total = hidden.sum(dim=1, keepdim=True)
        assert not hidden.is_realized and not total.is_realized
        assert hidden.shape == (4, 5) and total.shape == (4, 1)
        assert hidden.dtype == np.float32 and total.dtype == np.float32
        assert (x.long() * 2).dtype == np.int64


def test_realize_computes_and_returns_the_tensor():
    x, (w1, b1, _) = inputs()
    with mg.lazy():
        y = x @ w1 + b1
        assert y.realize() is y
    np.testing.assert_allclose(y.numpy(), x.numpy() @ w1.numpy() + b1.numpy(), rtol=1e-6)


def test_lazy_tensor_stays_unrealized_after_leaving_the_context():
    x, (w1, _, _) = inputs()
    with mg.lazy():
        y = x @ w1
    assert not y.is_realized
    np.testing.assert_allclose(y.numpy(), x.numpy() @ w1.numpy(), rtol=1e-6)


@pytest.mark.parametrize("read", [lambda t: t.item(), lambda t: t.numpy(), lambda t: t.tolist(),
                                  lambda t: float(t)])
def test_reading_a_lazy_tensor_realizes_it(read):
    x, _ = inputs()
    with mg.lazy():
        y = (x * 2).sum()
        value = read(y)
    assert y.is_realized
    np.testing.assert_allclose(np.asarray(value), (x.numpy() * 2).sum(), rtol=1e-6)


def test_backward_realizes_a_lazy_graph():
    x, params = inputs()
    with mg.lazy():
        loss = mlp_loss(x, *params)
        assert not loss.is_realized
        loss.backward()
    assert loss.is_realized
    assert all(p.grad is not None for p in params)


def test_lazy_values_and_gradients_equal_eager_ones():
    x, params = inputs()
    eager = mlp_loss(x, *params)
    eager.backward()
    eager_grads = [p.grad.numpy().copy() for p in params]
    for p in params:
        p.grad = None
    with mg.lazy():
        lazy = mlp_loss(x, *params)
    lazy.backward()
    np.testing.assert_array_equal(lazy.numpy(), eager.numpy())
    for p, expected in zip(params, eager_grads):
        np.testing.assert_array_equal(p.grad.numpy(), expected)


def test_set_mode_switches_between_eager_and_lazy():
    x, _ = inputs()
    mg.set_mode("lazy")
    try:
        assert mg.is_lazy()
        assert not (x * 2).is_realized
    finally:
        mg.set_mode("eager")
    assert not mg.is_lazy()
    assert (x * 2).is_realized


def test_set_mode_rejects_an_unknown_mode():
    with pytest.raises(ValueError, match=r"'bogus'.*'eager'.*'lazy'"):
        mg.set_mode("bogus")
    assert not mg.is_lazy()


def test_lazy_context_restores_the_previous_mode_after_an_exception():
    with pytest.raises(KeyError):
        with mg.lazy():
            raise KeyError("inside")
    assert not mg.is_lazy()


def test_lazy_shape_errors_are_reported_before_realizing():
    x, _ = inputs()
    with mg.lazy():
        with pytest.raises(ValueError, match=r"matmul"):
            x @ x


# --- groups -------------------------------------------------------------------------------


def test_nodes_made_inside_a_group_belong_to_it():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.group("enc"):
        assert mg.current_group() == "enc"
        y = (x * 2).exp()
    assert y.grad_fn.group == "enc" and y.grad_fn.inputs[0].grad_fn.group == "enc"
    assert (y + 1).grad_fn.group is None


def test_nested_groups_join_names_with_dots():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.group("enc"):
        with mg.group("attn") as name:
            y = x * 2
        z = y + 1
    assert name == "enc.attn"
    assert y.grad_fn.group == "enc.attn"
    assert z.grad_fn.group == "enc"


def test_group_is_restored_after_an_exception():
    with mg.group("outer"):
        with pytest.raises(KeyError):
            with mg.group("inner"):
                raise KeyError("inside")
        assert mg.current_group() == "outer"
    assert mg.current_group() is None


def test_lazy_nodes_keep_the_group_they_were_made_in():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.lazy(), mg.group("enc"):
        y = x * 2
    y.realize()
    assert y.grad_fn.group == "enc"


# --- anomaly detection -----------------------------------------------------------------------


def test_detect_anomaly_names_the_function_that_made_nan_in_forward():
    x = mg.tensor([1.0, -1.0], requires_grad=True)
    with mg.detect_anomaly():
        with pytest.raises(FloatingPointError, match=r"Log.*NaN"):
            x.log()


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_detect_anomaly_catches_zero_times_inf():
    with mg.detect_anomaly():
        with pytest.raises(FloatingPointError, match=r"Mul"):
            mg.tensor([0.0]) * mg.tensor([np.inf])


def test_detect_anomaly_names_the_group():
    x = mg.tensor([-1.0], requires_grad=True)
    with mg.detect_anomaly(), mg.group("head"):
        with pytest.raises(FloatingPointError, match=r"Log.*head"):
            x.log()


def test_detect_anomaly_names_the_function_whose_backward_made_nan():
    x = mg.tensor([0.0, 4.0], requires_grad=True)
    with mg.detect_anomaly():
        loss = (x.sqrt() * 0).sum()  # forward is finite: sqrt(0) * 0 = 0
        assert np.isfinite(loss.item())
        with pytest.raises(FloatingPointError, match=r"backward of Sqrt"):
            loss.backward()  # d sqrt / dx at 0 times a zero gradient: 0 / 0


def test_no_anomaly_error_outside_the_context():
    x = mg.tensor([0.0, -1.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()).any()
    assert np.isnan(x.log().numpy()[1])


def test_detect_anomaly_lets_finite_computations_through():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.detect_anomaly():
        (x.log() * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.log(x.numpy()) + 1, rtol=1e-6)
