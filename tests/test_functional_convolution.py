"""conv2d, max_pool2d and avg_pool2d beyond the op table (tests/op_cases_convolution.py):
the wrappers' error messages, PyTorch's rule for tied maxima, and realistic sizes."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.errors import ShapeError


def randn(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def assert_close(ours, theirs, rtol=1e-4):
    """float32 sums of thousands of terms: relative to the size of the values."""
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    ours = ours.numpy() if isinstance(ours, mg.Tensor) else ours
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol * np.abs(theirs).max())


# --- errors from the wrappers ----------------------------------------------------------------


def test_conv2d_rejects_an_input_of_the_wrong_rank_naming_its_shape():
    with pytest.raises(ShapeError, match=r"conv2d: expected a 3-D .* got shape \(5, 5\)"):
        F.conv2d(mg.randn(5, 5), mg.randn(2, 1, 3, 3))


def test_conv2d_rejects_a_weight_of_the_wrong_rank():
    with pytest.raises(ShapeError, match=r"weight must be 4-D .* got shape \(2, 3, 3\)"):
        F.conv2d(mg.randn(1, 3, 5, 5), mg.randn(2, 3, 3))


def test_conv2d_names_both_shapes_when_the_channels_do_not_match():
    with pytest.raises(ShapeError, match=r"input has 3 channels \(shape \(1, 3, 5, 5\)\) but "
                                         r"the weight of shape \(2, 4, 3, 3\) expects 4"):
        F.conv2d(mg.randn(1, 3, 5, 5), mg.randn(2, 4, 3, 3))


def test_conv2d_rejects_a_kernel_bigger_than_the_padded_input():
    with pytest.raises(ShapeError, match=r"H size 2 \(padded: 2\) is smaller than the kernel "
                                         r"\(3\); input shape \(1, 1, 2, 4\)"):
        F.conv2d(mg.randn(1, 1, 2, 4), mg.randn(1, 1, 3, 3))


def test_conv2d_counts_dilation_in_the_kernel_size():
    with pytest.raises(ShapeError, match=r"W size 4 .* smaller than the kernel \(5\)"):
        F.conv2d(mg.randn(1, 1, 6, 4), mg.randn(1, 1, 3, 3), dilation=2)


def test_conv2d_padding_same_needs_stride_1():
    with pytest.raises(ValueError, match="padding='same' needs stride 1"):
        F.conv2d(mg.randn(1, 1, 5, 5), mg.randn(1, 1, 3, 3), stride=2, padding="same")


def test_conv2d_rejects_an_unknown_padding_string():
    with pytest.raises(ValueError, match="padding must be an int, a pair, 'same' or 'valid', "
                                         "got 'full'"):
        F.conv2d(mg.randn(1, 1, 5, 5), mg.randn(1, 1, 3, 3), padding="full")


def test_conv2d_rejects_a_bias_that_is_not_one_per_output_channel():
    with pytest.raises(ShapeError, match=r"bias must have shape \(2,\) .* got \(3,\)"):
        F.conv2d(mg.randn(1, 1, 5, 5), mg.randn(2, 1, 3, 3), mg.randn(3))


@pytest.mark.parametrize("name", ["stride", "dilation"])
def test_conv2d_rejects_a_stride_or_dilation_below_1(name):
    with pytest.raises(ValueError, match=f"{name} must be at least 1, got 0"):
        F.conv2d(mg.randn(1, 1, 5, 5), mg.randn(1, 1, 3, 3), **{name: 0})


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
def test_pooling_rejects_an_input_of_the_wrong_rank(pool):
    with pytest.raises(ShapeError, match=r"pool2d: expected a 3-D .* got shape \(4, 4\)"):
        pool(mg.randn(4, 4), 2)


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
def test_pooling_rejects_a_kernel_bigger_than_the_input(pool):
    with pytest.raises(ShapeError, match=r"W size 2 is smaller than the kernel 3; input "
                                         r"shape \(1, 1, 4, 2\)"):
        pool(mg.randn(1, 1, 4, 2), 3)


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
def test_pooling_padding_is_at_most_half_the_kernel(pool):
    with pytest.raises(ValueError, match=r"padding \(2, 2\) must be between 0 and half the "
                                         r"kernel size \(3, 3\)"):
        pool(mg.randn(1, 1, 6, 6), 3, padding=2)


# --- max_pool2d: tied maxima -------------------------------------------------------------------


def max_pool_gradients(torch, x, **kwargs):
    """The input gradients of minigrad's and PyTorch's max_pool2d for one upstream gradient."""
    ours = mg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out = F.max_pool2d(ours, **kwargs)
    upstream = randn(*out.shape, seed=1)
    out.backward(upstream)
    torch.nn.functional.max_pool2d(theirs, **kwargs).backward(torch.tensor(upstream))
    return ours.grad.numpy(), theirs.grad.numpy()


def assert_same_winners(ours, theirs):
    """Equal up to the order in which overlapping windows' gradients were added."""
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kwargs", [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 1, "padding": 1},
    {"kernel_size": 3, "stride": 2},
], ids=["kernel_2", "overlap_padding", "kernel_3_stride_2"])
def test_max_pool2d_sends_the_gradient_of_all_zero_windows_to_their_first_element_like_torch(
        torch, kwargs):
    ours, theirs = max_pool_gradients(torch, np.zeros((2, 2, 6, 6), np.float32), **kwargs)
    assert_same_winners(ours, theirs)


@pytest.mark.parametrize("kwargs", [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 1, "padding": 1},
    {"kernel_size": (2, 3), "stride": (1, 2)},
], ids=["kernel_2", "overlap_padding", "non_square"])
def test_max_pool2d_gradient_of_relu_ties_matches_torch(torch, kwargs):
    x = np.maximum(randn(2, 3, 7, 8, seed=2), 0)  # about half the elements tie at zero
    x[0, 0, :3, :3] = 1.0  # and some tie at the maximum
    ours, theirs = max_pool_gradients(torch, x, **kwargs)
    assert_same_winners(ours, theirs)


def test_max_pool2d_picks_one_winner_where_the_max_reduction_splits_a_tie():
    x = mg.tensor(np.array([[[[1.0, 3.0], [3.0, 0.0]]]], np.float32), requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[0.0, 1.0], [0.0, 0.0]])
    x.grad = None
    x.max().backward()  # minigrad's max reduction shares the gradient evenly
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[0.0, 0.5], [0.5, 0.0]])


# --- realistic sizes against PyTorch, in float32 --------------------------------------------


@pytest.mark.parametrize("kwargs", [
    {"padding": 1},
    {"stride": 2, "dilation": 2},
    {"padding": "same", "dilation": (1, 2)},
], ids=["padding_1", "stride_2_dilation_2", "same_dilated"])
def test_a_medium_conv2d_matches_torch_in_float32(torch, kwargs):
    x, weight, bias = randn(8, 16, 28, 28, seed=3), randn(32, 16, 3, 3, seed=4), randn(32, seed=5)
    ours = [mg.tensor(a, requires_grad=True) for a in (x, weight, bias)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, weight, bias)]
    out = F.conv2d(*ours, **kwargs)
    torch_out = torch.nn.functional.conv2d(*theirs, **kwargs)
    assert out.dtype == np.float32
    assert_close(out, torch_out)
    upstream = randn(*out.shape, seed=6)
    out.backward(upstream)
    torch_out.backward(torch.tensor(upstream))
    for name, a, b in zip(("input", "weight", "bias"), ours, theirs):
        assert a.grad.dtype == np.float32, name
        assert_close(a.grad, b.grad)



@pytest.mark.parametrize("padding", [0, 1])
def test_conv2d_weight_gradient_is_finite_where_torchs_is_when_the_input_holds_inf(torch,
                                                                                   padding):
    """The stride-1 path computes junk columns (ops/convolution.py, _wide_im2col) whose
    zero gradient times an inf copied into them must not make the weight gradient NaN."""
    x, weight = randn(2, 3, 6, 6, seed=11), randn(4, 3, 3, 3, seed=12)
    x[0, 1, 2, 0] = np.inf  # in column 0: kernel columns after 0 + padding never read it
    ours = mg.tensor(weight, requires_grad=True)
    theirs = torch.tensor(weight, requires_grad=True)
    F.conv2d(mg.tensor(x), ours, padding=padding).sum().backward()
    torch.nn.functional.conv2d(torch.tensor(x), theirs, padding=padding).sum().backward()
    expected = theirs.grad.numpy()
    assert np.isfinite(expected[:, :, :, 1 + padding:]).all()
    np.testing.assert_allclose(ours.grad.numpy(), expected, rtol=1e-4, atol=1e-4)

def test_conv2d_then_max_pool2d_then_mean_has_torch_gradients(torch):
    x, weight, bias = randn(4, 3, 12, 12, seed=7), randn(6, 3, 3, 3, seed=8), randn(6, seed=9)
    ours = [mg.tensor(a, requires_grad=True) for a in (x, weight, bias)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, weight, bias)]
    loss = F.max_pool2d(F.conv2d(*ours, padding=1), 2).relu().mean()
    torch_loss = torch.nn.functional.max_pool2d(
        torch.nn.functional.conv2d(*theirs, padding=1), 2).relu().mean()
    loss.backward()
    torch_loss.backward()
    assert_close(loss, torch_loss)
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad)


def test_avg_pool2d_without_padding_counts_is_the_mean_of_the_real_elements(torch):
    x = randn(2, 3, 9, 9, seed=10)
    ours = F.avg_pool2d(mg.tensor(x), 3, stride=2, padding=1, count_include_pad=False)
    theirs = torch.nn.functional.avg_pool2d(torch.tensor(x), 3, stride=2, padding=1,
                                            count_include_pad=False)
    assert_close(ours, theirs, rtol=1e-5)
    corner = x[:, :, :2, :2].mean(axis=(2, 3))  # the padded top-left window holds 2 x 2
    np.testing.assert_allclose(ours.numpy()[:, :, 0, 0], corner, rtol=1e-5)


# --- the autograd contract ------------------------------------------------------------------


def test_conv2d_backward_notices_its_input_was_changed_in_place():
    x = mg.randn(1, 2, 5, 5, requires_grad=True)
    hidden = x * 1.0
    out = F.conv2d(hidden, mg.randn(3, 2, 3, 3, requires_grad=True))
    hidden += 1.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        out.sum().backward()


def test_conv2d_saves_the_input_and_weight_not_the_windows():
    x, weight = mg.randn(2, 3, 8, 8, requires_grad=True), mg.randn(4, 3, 3, 3)
    node = F.conv2d(x, weight, padding=1).grad_fn
    assert [a.shape for a in node.ctx.saved_tensors] == [(2, 3, 8, 8), (4, 3, 3, 3)]


def test_lazy_conv2d_and_pooling_know_their_shapes_before_computing():
    x = mg.randn(2, 3, 9, 10)
    weight = mg.randn(4, 3, 3, 2)
    with mg.lazy():
        out = F.conv2d(x, weight, stride=(2, 3), padding=(1, 2), dilation=(1, 2))
        pooled = F.max_pool2d(out, 2, padding=1)
        averaged = F.avg_pool2d(out, (3, 1), stride=1)
    assert not out.is_realized and not pooled.is_realized and not averaged.is_realized
    assert out.shape == (2, 4, 5, 4) and pooled.shape == (2, 4, 3, 3)
    assert averaged.shape == (2, 4, 3, 4)
    assert averaged.realize().shape == (2, 4, 3, 4)
