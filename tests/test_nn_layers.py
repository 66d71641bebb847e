"""Every layer against PyTorch's, with PyTorch's own weights loaded: outputs, input
gradients, parameter gradients and running statistics; plus default initialisation,
train/eval behaviour and the errors a student meets first."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_reference import assert_parameter_gradients_match, load_torch_weights

import minigrad as mg
from minigrad import nn


def compare_with_torch(torch, ours, theirs, *shapes, integer_input=None, steps=1,
                       rtol=1e-10, atol=1e-12):
    """Run both modules in float64 on the same inputs ``steps`` times (the same upstream
    gradient each time) and compare outputs, input and parameter gradients and buffers."""
    theirs = theirs.double()
    load_torch_weights(ours, theirs)
    ours.double()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        arrays = [rng.standard_normal(shape) for shape in shapes]
        if integer_input is not None:
            arrays = [integer_input]
        ours_in = [mg.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        theirs_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        out, expected = ours(*ours_in), theirs(*theirs_in)
        np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol, atol)
        upstream = rng.standard_normal(tuple(expected.shape))
        out.backward(upstream)
        expected.backward(torch.tensor(upstream))
        for a, b in zip(ours_in, theirs_in):
            if b.grad is not None:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol, atol)
    assert_parameter_gradients_match(ours, theirs, rtol, atol)
    ours_buffers = dict(ours.named_buffers())
    for name, buffer in theirs.named_buffers():
        np.testing.assert_allclose(ours_buffers[name].numpy(), buffer.numpy(), rtol, atol,
                                   err_msg=name)
    return out


# --- against PyTorch ------------------------------------------------------------------------


def test_linear_matches_pytorch(torch):
    compare_with_torch(torch, nn.Linear(4, 3), torch.nn.Linear(4, 3), (5, 4))


def test_linear_without_bias_on_a_3d_input_matches_pytorch(torch):
    compare_with_torch(torch, nn.Linear(4, 3, bias=False), torch.nn.Linear(4, 3, bias=False),
                       (2, 5, 4))


@pytest.mark.parametrize("kwargs", [
    {}, {"stride": 2}, {"padding": 1}, {"padding": "same"}, {"padding": "valid"},
    {"bias": False, "stride": (2, 1), "padding": (0, 2)}, {"dilation": 2, "padding": "same"},
], ids=str)
def test_conv2d_matches_pytorch(torch, kwargs):
    compare_with_torch(torch, nn.Conv2d(3, 4, 3, **kwargs), torch.nn.Conv2d(3, 4, 3, **kwargs),
                       (2, 3, 7, 6))


def test_conv2d_with_a_rectangular_kernel_on_an_unbatched_input_matches_pytorch(torch):
    compare_with_torch(torch, nn.Conv2d(2, 3, (2, 3)), torch.nn.Conv2d(2, 3, (2, 3)), (2, 5, 6))


@pytest.mark.parametrize("kwargs", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 1},
                                    {"kernel_size": 3, "stride": 2, "padding": 1}], ids=str)
def test_pooling_matches_pytorch(torch, kwargs):
    compare_with_torch(torch, nn.MaxPool2d(**kwargs), torch.nn.MaxPool2d(**kwargs), (2, 3, 6, 6))
    compare_with_torch(torch, nn.AvgPool2d(**kwargs), torch.nn.AvgPool2d(**kwargs), (2, 3, 6, 6))


def test_flatten_matches_pytorch(torch):
    compare_with_torch(torch, nn.Flatten(), torch.nn.Flatten(), (2, 3, 4, 5))
    compare_with_torch(torch, nn.Flatten(0, 1), torch.nn.Flatten(0, 1), (2, 3, 4))


def test_embedding_matches_pytorch_and_accumulates_repeated_rows(torch):
    indices = np.array([[1, 2, 1], [4, 1, 0]])
    compare_with_torch(torch, nn.Embedding(5, 3), torch.nn.Embedding(5, 3),
                       integer_input=indices)


@pytest.mark.parametrize("shape, normalized", [((4, 6), 6), ((2, 3, 4), (3, 4))])
def test_layer_norm_matches_pytorch(torch, shape, normalized):
    theirs = torch.nn.LayerNorm(normalized)
    with torch.no_grad():  # not the default ones and zeros, so a mixed-up weight shows
        theirs.weight.normal_()
        theirs.bias.normal_()
    compare_with_torch(torch, nn.LayerNorm(normalized), theirs, shape)


def test_layer_norm_without_affine_matches_pytorch(torch):
    compare_with_torch(torch, nn.LayerNorm(5, elementwise_affine=False),
                       torch.nn.LayerNorm(5, elementwise_affine=False), (3, 5))


@pytest.mark.parametrize("module, shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)),
                                           ("BatchNorm2d", (4, 3, 5, 2))])
def test_batch_norm_in_training_matches_pytorch_with_running_statistics(torch, module, shape):
    ours, theirs = getattr(nn, module)(3), getattr(torch.nn, module)(3)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    compare_with_torch(torch, ours, theirs, shape, steps=3)
    assert int(ours.num_batches_tracked.item()) == 3


def test_batch_norm_in_eval_mode_uses_the_running_statistics_like_pytorch(torch):
    ours, theirs = nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)
    with torch.no_grad():
        theirs.running_mean.normal_()
        theirs.running_var.uniform_(0.5, 2.0)
    compare_with_torch(torch, ours.eval(), theirs.eval(), (5, 3))


def test_batch_norm_with_cumulative_momentum_matches_pytorch(torch):
    compare_with_torch(torch, nn.BatchNorm1d(3, momentum=None),
                       torch.nn.BatchNorm1d(3, momentum=None), (6, 3), steps=3)


def test_batch_norm_without_running_statistics_matches_pytorch(torch):
    ours = nn.BatchNorm2d(2, track_running_stats=False, affine=False)
    theirs = torch.nn.BatchNorm2d(2, track_running_stats=False, affine=False)
    assert ours.state_dict() == {}
    compare_with_torch(torch, ours.eval(), theirs.eval(), (3, 2, 2, 2))


@pytest.mark.parametrize("name, args", [("ReLU", ()), ("GELU", ()), ("Tanh", ()),
                                        ("Sigmoid", ()), ("Softmax", (1,)),
                                        ("LogSoftmax", (-1,))])
def test_activation_modules_match_pytorch(torch, name, args):
    compare_with_torch(torch, getattr(nn, name)(*args), getattr(torch.nn, name)(*args), (4, 5))


def test_gelu_tanh_module_matches_pytorch(torch):
    compare_with_torch(torch, nn.GELU("tanh"), torch.nn.GELU("tanh"), (4, 5))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_modules_match_pytorch(torch, reduction):
    rng = np.random.default_rng(1)
    logits, labels = rng.standard_normal((6, 4)), rng.integers(0, 4, 6)
    probabilities, bits = rng.uniform(0.1, 0.9, (6, 4)), rng.integers(0, 2, (6, 4)) * 1.0
    cases = [
        ("MSELoss", logits, rng.standard_normal((6, 4))),
        ("CrossEntropyLoss", logits, labels),
        ("BCELoss", probabilities, bits),
        ("BCEWithLogitsLoss", logits, bits),
    ]
    for name, x, target in cases:
        ours = getattr(nn, name)(reduction=reduction)
        theirs = getattr(torch.nn, name)(reduction=reduction)
        a, b = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, expected = ours(a, mg.tensor(target)), theirs(b, torch.tensor(target))
        np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), 1e-10, err_msg=name)
        out.sum().backward()
        expected.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), 1e-10, err_msg=name)


def test_cross_entropy_loss_module_passes_label_smoothing_and_ignore_index(torch):
    logits = np.random.default_rng(2).standard_normal((5, 3))
    labels = np.array([0, 2, -1, 1, 2])
    ours = nn.CrossEntropyLoss(ignore_index=-1, label_smoothing=0.2)
    theirs = torch.nn.CrossEntropyLoss(ignore_index=-1, label_smoothing=0.2)
    np.testing.assert_allclose(ours(mg.tensor(logits), labels).item(),
                               theirs(torch.tensor(logits), torch.tensor(labels)).item(), 1e-10)


class TorchResidualBlock:
    """The seed's residual block written with torch.nn, to compare against."""

    @staticmethod
    def build(torch, in_channels, out_channels, stride):
        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = torch.nn.Conv2d(in_channels, out_channels, 3, stride, 1,
                                             bias=False)
                self.bn1 = torch.nn.BatchNorm2d(out_channels)
                self.conv2 = torch.nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
                self.bn2 = torch.nn.BatchNorm2d(out_channels)
                self.shortcut = torch.nn.Sequential()
                if stride != 1 or in_channels != out_channels:
                    self.shortcut = torch.nn.Sequential(
                        torch.nn.Conv2d(in_channels, out_channels, 1, stride, bias=False),
                        torch.nn.BatchNorm2d(out_channels))

            def forward(self, x):
                out = torch.relu(self.bn1(self.conv1(x)))
                out = self.bn2(self.conv2(out))
                return torch.relu(out + self.shortcut(x))

        return Block()


@pytest.mark.parametrize("in_channels, out_channels, stride", [(3, 3, 1), (2, 4, 2)])
def test_residual_block_matches_the_same_block_in_pytorch(torch, in_channels, out_channels,
                                                          stride):
    theirs = TorchResidualBlock.build(torch, in_channels, out_channels, stride)
    ours = nn.ResidualBlock(in_channels, out_channels, stride)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    compare_with_torch(torch, ours, theirs, (2, in_channels, 6, 6), steps=2)


# --- default initialisation, as PyTorch's ---------------------------------------------------


def test_linear_and_conv_weights_start_uniform_within_one_over_sqrt_fan_in():
    for layer, fan_in in [(nn.Linear(50, 40), 50), (nn.Conv2d(4, 8, 3), 36)]:
        bound = 1 / math.sqrt(fan_in)
        for param in (layer.weight, layer.bias):
            values = param.numpy()
            assert values.min() >= -bound and values.max() <= bound
            assert values.max() - values.min() > 1.5 * bound  # spread over the range


def test_embedding_starts_standard_normal():
    weight = nn.Embedding(1000, 20).weight.numpy()
    assert abs(weight.mean()) < 0.02 and abs(weight.std() - 1) < 0.02


def test_norm_layers_start_as_the_identity_transform():
    for layer in (nn.LayerNorm(3), nn.BatchNorm1d(3)):
        np.testing.assert_array_equal(layer.weight.numpy(), 1.0)
        np.testing.assert_array_equal(layer.bias.numpy(), 0.0)


def test_initialisation_is_reproducible_under_manual_seed():
    mg.manual_seed(3)
    first = nn.Linear(3, 3).weight.numpy()
    mg.manual_seed(3)
    np.testing.assert_array_equal(nn.Linear(3, 3).weight.numpy(), first)


# --- train / eval ---------------------------------------------------------------------------


def test_dropout_in_training_zeroes_about_p_and_scales_the_rest():
    x = mg.ones(100_000)
    out = nn.Dropout(0.3)(x).numpy()
    assert abs((out == 0).mean() - 0.3) < 0.01
    np.testing.assert_allclose(out[out != 0], 1 / 0.7, rtol=1e-6)


def test_dropout_in_eval_mode_is_the_identity():
    x = mg.randn(10)
    assert nn.Dropout(0.5).eval()(x) is x


def test_dropout_masks_are_reproducible_under_manual_seed():
    x = mg.ones(20)
    mg.manual_seed(7)
    first = nn.Dropout()(x).numpy()
    mg.manual_seed(7)
    np.testing.assert_array_equal(nn.Dropout()(x).numpy(), first)


def test_dropout_gradient_flows_only_through_kept_elements():
    x = mg.ones(1000, requires_grad=True)
    out = nn.Dropout(0.5)(x)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.numpy())


def test_batch_norm_in_eval_mode_leaves_running_statistics_alone():
    layer = nn.BatchNorm1d(3).eval()
    layer(mg.randn(8, 3) * 5 + 2)
    np.testing.assert_array_equal(layer.running_mean.numpy(), 0.0)
    assert int(layer.num_batches_tracked.item()) == 0


# --- errors that name the layer, the expected and the actual shape --------------------------


@pytest.mark.parametrize("layer, x, message", [
    (nn.Linear(4, 3), mg.randn(2, 5),
     r"Linear: expected input of shape \(\.\.\., 4\) \(in_features=4\), got shape \(2, 5\)"),
    (nn.Conv2d(3, 8, 3), mg.randn(2, 1, 8, 8),
     r"Conv2d: expected input with 3 channels \(in_channels=3, dim 1\), got shape "
     r"\(2, 1, 8, 8\)"),
    (nn.Conv2d(3, 8, 3), mg.randn(3, 8),
     r"Conv2d: expected a 4-D input \(N, C, H, W\) or a 3-D one \(C, H, W\), got shape \(3, 8\)"),
    (nn.LayerNorm(4), mg.randn(2, 5),
     r"LayerNorm: expected input whose last dimensions are \(4,\) \(normalized_shape\), got "
     r"shape \(2, 5\)"),
    (nn.BatchNorm2d(3), mg.randn(2, 3, 4),
     r"BatchNorm2d: expected a 4-D input, got shape \(2, 3, 4\)"),
    (nn.BatchNorm1d(3), mg.randn(2, 4),
     r"BatchNorm1d: expected 3 channels in dim 1 \(num_features=3\), got shape \(2, 4\)"),
])
def test_a_bad_input_names_the_layer_and_both_shapes(layer, x, message):
    with pytest.raises(mg.ShapeError, match=message):
        layer(x)


def test_embedding_rejects_float_indices_and_out_of_range_ones_naming_the_layer():
    model = nn.Sequential(nn.Embedding(5, 2))
    with pytest.raises(TypeError, match=r"embedding: indices must be integers, got float32") \
            as caught:
        model(mg.tensor([1.0, 2.0]))
    assert caught.value.__notes__ == ["(raised in layer Embedding '0')"]
    with pytest.raises(IndexError, match=r"embedding: index 5 is out of range for an "
                                         r"embedding with 5 rows") as caught:
        model(mg.tensor([1, 5], dtype="int64"))
    assert caught.value.__notes__ == ["(raised in layer Embedding '0')"]


def test_an_error_inside_a_custom_forward_gets_a_note_naming_the_innermost_layer():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return self.fc(x) @ mg.zeros(2, 2)  # a shape bug in the user's own code

    model = nn.Sequential(nn.Linear(3, 3), Block())
    with pytest.raises(mg.ShapeError, match="matmul") as caught:
        model(mg.randn(4, 3))
    assert caught.value.__notes__ == ["(raised in layer Block '1')"]


def test_an_error_message_that_names_its_layer_gets_no_note():
    with pytest.raises(mg.ShapeError) as caught:
        nn.Sequential(nn.Linear(3, 3))(mg.randn(4, 2))
    assert not hasattr(caught.value, "__notes__")


def test_a_layer_error_inside_a_model_names_the_layer_path():
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(10, 2))
    with pytest.raises(mg.ShapeError, match=r"Linear '3': expected input of shape \(\.\.\., 10\)"
                                            r" \(in_features=10\), got shape \(2, 144\)"):
        model(mg.randn(2, 1, 8, 8))


def test_bad_constructor_arguments_say_what_is_allowed():
    with pytest.raises(ValueError, match="Dropout: p must be between 0 and 1, got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="padding must be an int, a pair, 'same' or 'valid'"):
        nn.Conv2d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match="CrossEntropyLoss: reduction must be one of"):
        nn.CrossEntropyLoss(reduction="average")


# --- a whole model --------------------------------------------------------------------------


def small_cnn(library):
    nn_ = library.nn
    return nn_.Sequential(
        nn_.Conv2d(1, 4, 3, padding=1), nn_.BatchNorm2d(4), nn_.ReLU(), nn_.MaxPool2d(2),
        nn_.Conv2d(4, 6, 3, padding="same"), nn_.ReLU(), nn_.AvgPool2d(2), nn_.Flatten(),
        nn_.Dropout(0.5), nn_.Linear(6 * 2 * 2, 8), nn_.LayerNorm(8), nn_.GELU(),
        nn_.Linear(8, 3), nn_.LogSoftmax(dim=1))


def test_a_pytorch_cnn_state_dict_gives_the_same_outputs_and_gradients_in_eval_mode(torch):
    compare_with_torch(torch, small_cnn(mg).eval(), small_cnn(torch).eval(), (5, 1, 8, 8))


@pytest.mark.parametrize("layer, shape", [
    (nn.Linear(3, 2), (4, 3)), (nn.Conv2d(1, 2, 3), (1, 1, 5, 5)), (nn.LayerNorm(3), (2, 3)),
    (nn.BatchNorm1d(3), (4, 3)), (nn.LSTM(3, 2), (5, 1, 3)), (nn.RNN(3, 2), (5, 1, 3))])
def test_a_float64_input_into_float32_weights_says_how_to_convert(layer, shape):
    x = mg.tensor(np.zeros(shape))  # NumPy arrays are float64
    with pytest.raises(TypeError, match=rf"{type(layer).__name__}: expected a float32 input "
                                        r"\(the dtype of the layer's weights\), got float64 of "
                                        rf"shape \({shape[0]}, .*\); convert it with \.float\(\), "
                                        r"or the model with \.to\('float64'\)"):
        layer(x)


def test_an_integer_input_into_a_layer_says_to_use_float():
    with pytest.raises(TypeError, match=r"Linear: expected a float32 input .*got int64 of "
                                        r"shape \(2, 3\); convert it with \.float\(\)$"):
        nn.Linear(3, 1)(mg.tensor(np.ones((2, 3), dtype=np.int64)))


def test_multihead_attention_names_the_input_with_the_wrong_dtype():
    attention = nn.MultiheadAttention(4, 2)
    q = mg.randn(3, 1, 4)
    with pytest.raises(TypeError, match=r"MultiheadAttention: expected a float32 key"):
        attention(q, q.double(), q)


def test_a_model_moved_to_float64_takes_float64_input():
    model = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2)).to("float64")
    assert model(mg.tensor(np.ones((2, 3)))).dtype == np.float64


@pytest.mark.parametrize("value", [np.ones((2, 3), np.float32), [[1.0, 2.0, 3.0]]],
                         ids=["array", "list"])
def test_a_layer_given_a_non_tensor_says_to_wrap_it(value):
    with pytest.raises(TypeError, match=r"Linear: expected the input to be a Tensor, got "
                                        r"(ndarray|list); wrap it: mg.tensor\(x\)"):
        nn.Linear(3, 1)(value)


def test_conv2d_on_a_batch_of_one_channel_images_without_the_channel_dim_says_unsqueeze():
    with pytest.raises(mg.ShapeError, match=r"for a batch of one-channel images \(N, H, W\) use "
                                            r"x.unsqueeze\(1\)"):
        nn.Conv2d(1, 2, 3)(mg.randn(4, 8, 8))


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("dims, padding, dilation", [
    (2, 1, 1), (2, (2, 1), 1), (2, "same", 2), (2, "valid", 1), (1, 2, 1), (1, "same", 2)])
def test_convolution_padding_modes_match_pytorch(torch, mode, dims, padding, dilation):
    """padding_mode pads the input first (F.pad), then convolves without padding, as
    PyTorch does: values, gradients of input and weight, and the repr agree."""
    shape = (2, 3, 7, 6) if dims == 2 else (2, 3, 9)
    ours = (nn.Conv2d if dims == 2 else nn.Conv1d)(3, 4, 3, padding=padding, dilation=dilation,
                                                   padding_mode=mode).double()
    theirs = (torch.nn.Conv2d if dims == 2 else torch.nn.Conv1d)(
        3, 4, 3, padding=padding, dilation=dilation, padding_mode=mode).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    values = np.random.default_rng(0).standard_normal(shape)
    x, t = mg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, expected = ours(x), theirs(t)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-10, atol=1e-12)
    assert repr(ours) == repr(theirs)


def test_an_unknown_padding_mode_is_named():
    with pytest.raises(ValueError, match=r"Conv2d: padding_mode must be one of \('zeros', "
                                         r"'reflect', 'replicate', 'circular'\), got 'mirror'"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")


@pytest.mark.parametrize("name, args", [
    ("Hardsigmoid", ()), ("Hardswish", ()), ("SELU", ()), ("CELU", (0.5,)), ("Softsign", ()),
    ("Tanhshrink", ()), ("Threshold", (0.1, 20.0)), ("LogSigmoid", ()), ("Softmin", (1,)),
    ("GLU", ()), ("Hardswish", (True,)), ("SELU", (True,)), ("CELU", (1.0, True)),
    ("Threshold", (0.1, 20.0, True)), ("Hardsigmoid", (True,))])
def test_the_other_activation_layers_match_pytorch(torch, name, args):
    """Values, input gradients and repr, beside PyTorch's; in place on a non-leaf too.
    (PyTorch's hardsigmoid gradient uses 1/6 in float32 even for float64: rtol 1e-7.)"""
    values = np.random.default_rng(0).standard_normal((3, 4)) * 4
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    x, t = mg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, expected = ours(x * 1), theirs(t * 1)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-12)
    assert repr(ours) == repr(theirs)


# --- the normalization layers' signatures: torch 2.13's keyword-only bias, and device --------


NORMALIZATION_LAYERS = [
    ("BatchNorm1d", (3,), {}, (4, 3)), ("BatchNorm2d", (3,), {}, (2, 3, 4, 4)),
    ("BatchNorm1d", (3,), {"bias": False}, (4, 3)),
    ("BatchNorm2d", (3,), {"affine": False}, (2, 3, 4, 4)),
    ("GroupNorm", (1, 3), {}, (2, 3, 5)), ("GroupNorm", (3, 3), {"bias": False}, (2, 3, 5)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 5)),
    ("InstanceNorm2d", (3,), {"affine": True, "bias": False}, (2, 3, 4, 4)),
    ("LayerNorm", (5,), {}, (2, 3, 5)), ("LayerNorm", (5,), {"bias": False}, (2, 3, 5)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", NORMALIZATION_LAYERS,
                         ids=[f"{n}-{k}" for n, _, k, _ in NORMALIZATION_LAYERS])
def test_normalization_layers_match_pytorch_with_and_without_bias(name, args, kwargs, shape):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, name)(*args, device="cpu", **kwargs)
    theirs = getattr(torch.nn, name)(*args, device="cpu", **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    with torch.no_grad():
        for parameter in theirs.parameters():  # weights other than ones and zeros
            parameter.uniform_(0.5, 1.5)
    load_torch_weights(ours, theirs)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ours_out, theirs_out = ours(mg.tensor(x)), theirs(torch.from_numpy(x))
    np.testing.assert_allclose(ours_out.numpy(), theirs_out.detach().numpy(), rtol=1e-5,
                               atol=1e-5)


def test_normalization_layers_refuse_other_devices_by_name():
    for layer in (lambda: nn.BatchNorm1d(3, device="cuda"), lambda: nn.LayerNorm(3, device="cuda"),
                  lambda: nn.GroupNorm(1, 3, device="cuda")):
        with pytest.raises(RuntimeError, match="Norm"):
            layer()


INPLACE_LAYERS = ["ReLU", "SiLU", "Mish", "ELU", "LeakyReLU", "ReLU6", "Hardtanh", "Hardsigmoid",
                  "Hardswish", "SELU", "CELU", "Dropout", "Dropout1d", "Dropout2d", "AlphaDropout"]


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("name", INPLACE_LAYERS)
def test_layers_with_an_inplace_flag_print_as_pytorch_s(name, inplace):
    torch = pytest.importorskip("torch")
    assert repr(getattr(nn, name)(inplace=inplace)) == \
        repr(getattr(torch.nn, name)(inplace=inplace))


PRINTED_LAYERS = [
    ("ZeroPad2d", (1,), {}), ("ConstantPad2d", (1, 0.0), {}), ("ConstantPad1d", ((1, 2), 3), {}),
    ("ReflectionPad1d", (2,), {}), ("ReplicationPad2d", ((1, 2, 3, 4),), {}),
    ("Upsample", (), {"size": 4}), ("Upsample", (), {"scale_factor": (2, 3)}),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear", "align_corners": True}),
]


@pytest.mark.parametrize("name, args, kwargs", PRINTED_LAYERS,
                         ids=[f"{n}{a}{k}" for n, a, k in PRINTED_LAYERS])
def test_padding_and_upsampling_layers_print_as_pytorch_s(name, args, kwargs):
    torch = pytest.importorskip("torch")
    assert repr(getattr(nn, name)(*args, **kwargs)) == \
        repr(getattr(torch.nn, name)(*args, **kwargs))
