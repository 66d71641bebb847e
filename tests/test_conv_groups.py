"""Grouped and depthwise convolutions (``groups=``) in ``nn.Conv1d``, ``nn.Conv2d``,
``nn.ConvTranspose1d/2d`` and their functional forms, as in PyTorch (the functional
forms' values and gradients are rows of the op tables, tests/op_cases_convolution.py and
tests/op_cases_census.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F


def torch_or_skip():
    return pytest.importorskip("torch")


LAYERS = [  # (layer, input shape, constructor arguments)
    ("Conv2d", (2, 4, 6, 5), dict(in_channels=4, out_channels=6, kernel_size=3, groups=2)),
    ("Conv2d", (2, 3, 6, 6), dict(in_channels=3, out_channels=3, kernel_size=3, padding=1,
                                  groups=3)),  # depthwise
    ("Conv2d", (1, 3, 7, 7), dict(in_channels=3, out_channels=6, kernel_size=3, stride=2,
                                  groups=3, bias=False)),  # depthwise, channel multiplier 2
    ("Conv1d", (2, 4, 9), dict(in_channels=4, out_channels=8, kernel_size=3, dilation=2,
                               groups=4)),
    ("ConvTranspose2d", (2, 4, 3, 4), dict(in_channels=4, out_channels=6, kernel_size=3,
                                           stride=2, padding=1, groups=2)),
    ("ConvTranspose1d", (2, 3, 5), dict(in_channels=3, out_channels=6, kernel_size=2,
                                        stride=2, groups=3)),
]


@pytest.mark.parametrize("layer, shape, arguments", LAYERS,
                         ids=[f"{layer}-{a['groups']}" for layer, _, a in LAYERS])
def test_grouped_layer_matches_pytorch(layer, shape, arguments):
    torch = torch_or_skip()
    ours, theirs = getattr(nn, layer)(**arguments), getattr(torch.nn, layer)(**arguments)
    assert ours.weight.shape == tuple(theirs.weight.shape)  # PyTorch's layout
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    mx, tx = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, torch_out = ours(mx), theirs(tx)
    np.testing.assert_allclose(out.detach().numpy(), torch_out.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    upstream = np.random.default_rng(1).standard_normal(out.shape).astype(np.float32)
    (out * mg.tensor(upstream)).sum().backward()
    (torch_out * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-4, atol=1e-5)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("stride, dilation", [(1, 1), (2, 1), (1, 2)])
def test_grouped_conv2d_passes_float64_gradcheck(stride, dilation):
    rng = np.random.default_rng(2)
    x = mg.tensor(rng.standard_normal((2, 6, 6, 5)), requires_grad=True)
    weight = mg.tensor(rng.standard_normal((9, 2, 3, 2)), requires_grad=True)
    bias = mg.tensor(rng.standard_normal(9), requires_grad=True)
    assert mg.gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride, 1, dilation, groups=3),
                        (x, weight, bias))


def test_depthwise_conv1d_and_transposed_pass_float64_gradcheck():
    rng = np.random.default_rng(3)
    x = mg.tensor(rng.standard_normal((2, 4, 7)), requires_grad=True)
    assert mg.gradcheck(lambda x, w: F.conv1d(x, w, padding=1, groups=4),
                        (x, mg.tensor(rng.standard_normal((8, 1, 3)), requires_grad=True)))
    assert mg.gradcheck(lambda x, w: F.conv_transpose1d(x, w, stride=2, groups=2),
                        (x, mg.tensor(rng.standard_normal((4, 3, 3)), requires_grad=True)))
    image = mg.tensor(rng.standard_normal((1, 4, 3, 3)), requires_grad=True)
    assert mg.gradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, groups=4),
                        (image, mg.tensor(rng.standard_normal((4, 2, 3, 3)),
                                          requires_grad=True)))


def test_groups_split_the_channels_into_independent_convolutions():
    """Group g of the output is the ungrouped convolution of input block g with weight
    block g: the definition."""
    rng = np.random.default_rng(4)
    x, weight = mg.tensor(rng.standard_normal((2, 6, 5, 5))), mg.tensor(
        rng.standard_normal((4, 3, 3, 3)))
    grouped = F.conv2d(x, weight, groups=2)
    separate = mg.cat([F.conv2d(x[:, :3], weight[:2]), F.conv2d(x[:, 3:], weight[2:])], dim=1)
    np.testing.assert_allclose(grouped.numpy(), separate.numpy(), rtol=1e-12)


def test_lazy_mode_knows_the_grouped_output_shape():
    layer = nn.Conv2d(4, 8, 3, groups=4)
    with mg.lazy():
        out = layer(mg.randn(2, 4, 5, 5))
        assert out.shape == (2, 8, 3, 3)
    assert out.numpy().shape == (2, 8, 3, 3)


# --- mistakes: PyTorch's checks and its message content, with the layer's name ------------


@pytest.mark.parametrize("layer", ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"])
@pytest.mark.parametrize("in_channels, out_channels, which", [
    (3, 6, "in_channels must be divisible by groups"),
    (4, 6, "out_channels must be divisible by groups"),
])
def test_channels_not_divisible_by_groups_raise_like_pytorch(layer, in_channels, out_channels,
                                                             which):
    torch = torch_or_skip()
    with pytest.raises(ValueError, match=which):
        getattr(torch.nn, layer)(in_channels, out_channels, 3, groups=4 if in_channels == 4
                                 else 2)
    with pytest.raises(ValueError, match=f"{layer}: {which}, got"):
        getattr(nn, layer)(in_channels, out_channels, 3, groups=4 if in_channels == 4 else 2)


def test_non_positive_groups_are_refused():
    with pytest.raises(ValueError, match="Conv2d: groups must be a positive integer"):
        nn.Conv2d(4, 4, 3, groups=0)
    with pytest.raises(RuntimeError, match="conv2d: non-positive groups is not supported"):
        F.conv2d(mg.randn(1, 4, 5, 5), mg.randn(4, 4, 3, 3), groups=-1)


def test_functional_input_channels_that_do_not_fit_the_groups_name_all_shapes():
    torch = torch_or_skip()
    with pytest.raises(RuntimeError, match="expected input.*to have 6 channels, but got 4"):
        torch.nn.functional.conv2d(torch.randn(1, 4, 5, 5), torch.randn(4, 3, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match=r"conv2d: Given groups=2, weight of size "
                                           r"\[4, 3, 3, 3\], expected input\[1, 4, 5, 5\] to "
                                           r"have 6 channels, but got 4 channels instead"):
        F.conv2d(mg.randn(1, 4, 5, 5), mg.randn(4, 3, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match="divisible by 2 at dimension 0"):
        torch.nn.functional.conv2d(torch.randn(1, 4, 5, 5), torch.randn(3, 2, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match=r"conv2d: Given groups=2, expected weight to be "
                                           r"divisible by 2 at dimension 0"):
        F.conv2d(mg.randn(1, 4, 5, 5), mg.randn(3, 2, 3, 3), groups=2)


def test_layer_given_an_input_with_other_channels_names_the_layer():
    with pytest.raises(RuntimeError, match=r"Conv2d.*in_channels=4.*\(1, 3, 5, 5\)"):
        nn.Conv2d(4, 8, 3, groups=4)(mg.randn(1, 3, 5, 5))


def test_conv1d_groups_message_shows_the_sequence_shape():
    with pytest.raises(RuntimeError, match=r"conv1d: Given groups=2, weight of size "
                                           r"\[4, 3, 3\], expected input\[2, 4, 9\] to have 6"):
        F.conv1d(mg.randn(2, 4, 9), mg.randn(4, 3, 3), groups=2)
