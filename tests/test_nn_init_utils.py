"""nn.init (the distributions' parameters, as PyTorch computes them) and nn.utils
(gradient clipping, against PyTorch)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

LARGE = (400, 300)  # enough samples that the sample statistics pin the distribution


def sample(fn, shape=LARGE, **kwargs):
    tensor = mg.zeros(*shape, requires_grad=True)  # init works on a leaf that requires grad
    assert fn(tensor, **kwargs) is tensor
    return tensor.numpy()


def test_fans_count_the_kernel_too():
    assert nn.init._calculate_fan_in_and_fan_out(mg.zeros(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="at least 2 dimensions, got shape \\(5,\\)"):
        nn.init._calculate_fan_in_and_fan_out(mg.zeros(5))


@pytest.mark.parametrize("nonlinearity, param, gain", [
    ("linear", None, 1.0), ("relu", None, math.sqrt(2)), ("tanh", None, 5 / 3),
    ("leaky_relu", None, math.sqrt(2 / (1 + 0.01**2))), ("leaky_relu", 0.2,
                                                        math.sqrt(2 / 1.04))])
def test_calculate_gain_matches_pytorch_table(nonlinearity, param, gain):
    assert nn.init.calculate_gain(nonlinearity, param) == pytest.approx(gain)


def test_calculate_gain_rejects_an_unknown_nonlinearity():
    with pytest.raises(ValueError, match="unknown nonlinearity 'swish'"):
        nn.init.calculate_gain("swish")


def test_xavier_uniform_fills_plus_minus_sqrt_6_over_fans():
    values = sample(nn.init.xavier_uniform_)
    bound = math.sqrt(6 / sum(LARGE))
    assert values.max() <= bound and values.min() >= -bound
    assert values.max() > 0.99 * bound and values.min() < -0.99 * bound


def test_xavier_normal_has_std_sqrt_2_over_fans():
    assert sample(nn.init.xavier_normal_).std() == pytest.approx(math.sqrt(2 / sum(LARGE)),
                                                                 rel=0.01)


def test_kaiming_normal_for_relu_has_std_sqrt_2_over_fan_in():
    values = sample(nn.init.kaiming_normal_, nonlinearity="relu")
    assert values.std() == pytest.approx(math.sqrt(2 / LARGE[1]), rel=0.01)


def test_kaiming_uniform_fan_out_uses_the_first_dimension():
    values = sample(nn.init.kaiming_uniform_, mode="fan_out", nonlinearity="relu")
    bound = math.sqrt(2) * math.sqrt(3 / LARGE[0])
    assert values.max() <= bound and values.max() > 0.99 * bound


def test_kaiming_rejects_an_unknown_mode():
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out', got 'fan'"):
        nn.init.kaiming_uniform_(mg.zeros(2, 2), mode="fan")


def test_constant_fills():
    np.testing.assert_array_equal(sample(nn.init.zeros_, (2, 3)), 0.0)
    np.testing.assert_array_equal(sample(nn.init.ones_, (2, 3)), 1.0)
    np.testing.assert_array_equal(sample(nn.init.constant_, (2, 3), val=0.5), 0.5)


def test_normal_and_uniform_use_their_arguments():
    assert sample(nn.init.normal_, mean=3.0, std=0.5).mean() == pytest.approx(3.0, abs=0.01)
    values = sample(nn.init.uniform_, a=-2.0, b=-1.0)
    assert values.min() >= -2.0 and values.max() <= -1.0


def test_init_does_not_record_history_and_keeps_the_dtype():
    weight = nn.Parameter(mg.zeros(3, 3, dtype="float64"))
    nn.init.xavier_uniform_(weight)
    assert weight.is_leaf and weight.dtype == np.float64


# --- gradient clipping ----------------------------------------------------------------------


def parameters_with_gradients(library, scale):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    params = [library.tensor(a, requires_grad=True) for a in arrays]
    for p, a in zip(params, arrays):
        p.grad = library.tensor(a * scale)
    return params


@pytest.mark.parametrize("scale, max_norm, norm_type", [
    (10.0, 1.0, 2.0), (0.01, 1.0, 2.0), (10.0, 2.0, 1.0), (10.0, 2.0, float("inf"))])
def test_clip_grad_norm_matches_pytorch(torch, scale, max_norm, norm_type):
    ours, theirs = parameters_with_gradients(mg, scale), parameters_with_gradients(torch, scale)
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert total.item() == pytest.approx(expected.item(), rel=1e-12)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_leaves_small_gradients_alone():
    params = parameters_with_gradients(mg, 0.001)
    before = [p.grad.numpy().copy() for p in params]
    nn.utils.clip_grad_norm_(params, 1.0)
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.grad.numpy(), b)


def test_clip_grad_norm_skips_parameters_without_gradients_and_can_refuse_nan():
    params = parameters_with_gradients(mg, 1.0) + [mg.zeros(2, requires_grad=True)]
    nn.utils.clip_grad_norm_(params, 1.0)
    params[0].grad.numpy()[0, 0] = np.nan
    with pytest.raises(RuntimeError, match="total norm of order 2.0 of the gradients is nan"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)


def test_clip_grad_value_clamps_each_element():
    (weight, bias) = parameters_with_gradients(mg, 3.0)
    nn.utils.clip_grad_value_([weight, bias], 0.5)
    assert np.abs(weight.grad.numpy()).max() == 0.5
