"""The layers added for issue 11 against PyTorch's, with PyTorch's weights loaded
(outputs, input gradients, every parameter gradient), their state-dict keys, and the
errors a student meets first."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_reference import assert_parameter_gradients_match, load_torch_weights

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn


def flat(result) -> list:
    """A tensor, or nested tuples of tensors, as a flat list."""
    if isinstance(result, (tuple, list)):
        return [t for part in result for t in flat(part)]
    return [result]


def compare_with_torch(torch, ours, theirs, input_shapes, *, args=(), kwargs=None,
                       rtol=1e-10, atol=1e-12):
    """Both modules in float64 with the same weights on the same inputs: every output,
    then (after a backward with a random upstream gradient) every input and parameter
    gradient. ``input_shapes`` may hold None for an argument left out (None)."""
    kwargs = kwargs or {}
    theirs = theirs.double()
    load_torch_weights(ours, theirs)
    ours.double()
    rng = np.random.default_rng(0)
    arrays = [None if shape is None else rng.standard_normal(shape) for shape in input_shapes]
    ours_in = [None if a is None else mg.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]

    def run(module, inputs, library):
        converted = [library(a) if isinstance(a, np.ndarray) else a for a in args]
        return flat(module(*inputs, *converted, **{
            k: library(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}))

    ours_out = run(ours, ours_in, mg.tensor)
    theirs_out = run(theirs, theirs_in, torch.tensor)
    assert len(ours_out) == len(theirs_out)
    for a, b in zip(ours_out, theirs_out):
        assert a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol, atol)
    upstream = [rng.standard_normal(tuple(b.shape)) for b in theirs_out]
    sum((a * g).sum() for a, g in zip(ours_out, upstream)).backward()
    sum((b * torch.tensor(g)).sum() for b, g in zip(theirs_out, upstream)).backward()
    for a, b in zip(ours_in, theirs_in):
        if a is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol, atol)
    assert_parameter_gradients_match(ours, theirs, rtol, atol)


def twins(torch, name, *args, **kwargs):
    """The same layer from both libraries (minigrad first)."""
    return getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)


# --- recurrent: GRU and the cells ------------------------------------------------------------

GRU_CASES = [
    ({}, (5, 3, 4), ()),
    ({"num_layers": 2}, (5, 3, 4), ((2, 3, 6),)),
    ({"batch_first": True, "bidirectional": True}, (3, 5, 4), ()),
    ({"bias": False}, (5, 4), ((1, 6),)),  # unbatched
    ({"num_layers": 2, "bidirectional": True}, (4, 2, 4), ((4, 2, 6),)),
]


@pytest.mark.parametrize("options, input_shape, state_shapes", GRU_CASES,
                         ids=["plain", "two-layers-h0", "batch-first-bidirectional",
                              "no-bias-unbatched", "two-layers-bidirectional-h0"])
def test_gru_matches_pytorch(torch, options, input_shape, state_shapes):
    ours, theirs = twins(torch, "GRU", 4, 6, **options)
    compare_with_torch(torch, ours, theirs, (input_shape, *state_shapes))


@pytest.mark.parametrize("name, options", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                           ("LSTMCell", {}), ("GRUCell", {}),
                                           ("GRUCell", {"bias": False})])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("with_state", [True, False], ids=["state", "no-state"])
def test_cells_match_pytorch(torch, name, options, batched, with_state):
    ours, theirs = twins(torch, name, 4, 5, **options)
    lead = (3,) if batched else ()
    state = None
    if with_state:
        state = (lead + (5,), lead + (5,)) if name == "LSTMCell" else (lead + (5,),)
    if name == "LSTMCell" and with_state:
        # the states go in as a pair
        theirs_double = theirs.double()
        load_torch_weights(ours, theirs_double)
        ours.double()
        rng = np.random.default_rng(1)
        x, h, c = (rng.standard_normal(lead + (n,)) for n in (4, 5, 5))
        ours_out = ours(mg.tensor(x), (mg.tensor(h), mg.tensor(c)))
        theirs_out = theirs_double(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
        for a, b in zip(ours_out, theirs_out):
            np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
        return
    compare_with_torch(torch, ours, theirs, (lead + (4,), *(state or ())))


def test_a_cell_unrolled_by_hand_equals_the_layer(torch):
    """GRUCell in a loop gives GRU's outputs (the same weights, without the _l0 suffix)."""
    layer, cell = nn.GRU(3, 4), nn.GRUCell(3, 4)
    cell.load_state_dict({k.removesuffix("_l0"): v for k, v in layer.state_dict().items()})
    x = mg.randn(5, 2, 3)
    output, h_n = layer(x)
    h = None
    for t in range(5):
        h = cell(x[t], h)
        np.testing.assert_allclose(h.numpy(), output[t].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, args", [("GRU", (3, 4)), ("GRU", (3, 4, 2)),
                                        ("RNNCell", (3, 4)), ("LSTMCell", (3, 4)),
                                        ("GRUCell", (3, 4, False))])
def test_recurrent_state_dict_keys_and_shapes_match_pytorch_in_order(torch, name, args):
    ours, theirs = twins(torch, name, *args)
    assert [(k, v.shape) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_gru_weights_start_uniform_within_one_over_sqrt_hidden_size():
    for layer in (nn.GRU(3, 16), nn.GRUCell(3, 16), nn.LSTMCell(3, 16)):
        for p in layer.parameters():
            assert np.abs(p.numpy()).max() <= 1 / 4


def test_a_cell_names_input_size_and_the_shape_it_got():
    model = nn.Sequential(nn.GRUCell(3, 4))
    with pytest.raises(mg.ShapeError, match=r"GRUCell '0': expected an input of shape "
                                            r"\(N, 3\) or \(3,\) \(input_size=3\), got shape "
                                            r"\(2, 5\)"):
        model(mg.randn(2, 5))


def test_a_cell_names_the_state_shape_it_expected():
    cell = nn.LSTMCell(3, 4)
    with pytest.raises(mg.ShapeError, match=r"LSTMCell: expected c of shape \(2, 4\), got "
                                            r"\(2, 5\)"):
        cell(mg.randn(2, 3), (mg.zeros(2, 4), mg.zeros(2, 5)))
    with pytest.raises(TypeError, match=r"expected hx to be a pair \(h, c\)"):
        cell(mg.randn(2, 3), mg.zeros(2, 4))


def test_gru_names_input_size_and_the_shape():
    with pytest.raises(mg.ShapeError, match=r"GRU: expected the input's last size to be "
                                            r"input_size=4, got shape \(5, 3, 2\)"):
        nn.GRU(4, 6)(mg.randn(5, 3, 2))


# --- transformer encoder -----------------------------------------------------------------------

ENCODER_CASES = [
    ({}, (5, 2, 8), {}),
    ({"norm_first": True, "activation": "gelu"}, (5, 2, 8), {}),
    ({"batch_first": True}, (2, 5, 8),
     {"src_key_padding_mask": np.array([[False] * 5, [False, False, False, True, True]])}),
    ({"norm_first": True}, (5, 2, 8),
     {"src_mask": np.triu(np.ones((5, 5), dtype=bool), 1), "is_causal": True}),
    ({"bias": False}, (5, 8), {}),  # unbatched
]


@pytest.mark.parametrize("options, input_shape, kwargs", ENCODER_CASES,
                         ids=["post-norm", "norm-first-gelu", "batch-first-padding",
                              "causal-mask", "no-bias-unbatched"])
def test_transformer_encoder_layer_matches_pytorch(torch, options, input_shape, kwargs):
    ours, theirs = twins(torch, "TransformerEncoderLayer", 8, 2, dim_feedforward=16,
                         dropout=0.0, **options)
    compare_with_torch(torch, ours, theirs, (input_shape,), kwargs=kwargs, rtol=1e-9,
                       atol=1e-11)


def test_transformer_encoder_with_a_final_norm_matches_pytorch(torch):
    def make(library):
        layer = library.nn.TransformerEncoderLayer(8, 4, 12, dropout=0.0, batch_first=True)
        return library.nn.TransformerEncoder(layer, 3, norm=library.nn.LayerNorm(8),
                                             enable_nested_tensor=False)

    mask = np.triu(np.full((6, 6), -np.inf), 1)  # a float causal mask
    compare_with_torch(torch, make(mg), make(torch), ((2, 6, 8),), kwargs={"mask": mask},
                       rtol=1e-9, atol=1e-11)


def test_transformer_state_dict_keys_and_shapes_match_pytorch_in_order(torch):
    def make(library):
        layer = library.nn.TransformerEncoderLayer(8, 2, 16)
        return library.nn.TransformerEncoder(layer, 2, norm=library.nn.LayerNorm(8),
                                             enable_nested_tensor=False)

    ours, theirs = make(mg), make(torch)
    assert [(k, v.shape) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_transformer_encoder_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    encoder = nn.TransformerEncoder(layer, 2)
    first, second = encoder.layers
    assert first.linear1.weight is not second.linear1.weight
    assert first.linear1.weight is not layer.linear1.weight
    np.testing.assert_array_equal(first.linear1.weight.numpy(), second.linear1.weight.numpy())
    assert len(list(encoder.parameters())) == 2 * len(list(layer.parameters()))


def test_transformer_dropout_is_off_in_eval_mode():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = mg.randn(4, 2, 8)
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(), layer(x).numpy())
    layer.train()
    assert not np.array_equal(layer(x).numpy(), layer(x).numpy())


def test_transformer_refuses_an_unknown_activation():
    with pytest.raises(ValueError, match="activation should be 'relu' or 'gelu'"):
        nn.TransformerEncoderLayer(8, 2, activation="swish")


def test_transformer_layer_error_names_the_attention_layer_path():
    model = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    with pytest.raises(mg.ShapeError) as caught:
        model(mg.randn(5, 2, 6))
    assert "layers.0" in str(caught.value) + "".join(getattr(caught.value, "__notes__", []))


# --- convolution, pooling, normalisation layers ---------------------------------------------


@pytest.mark.parametrize("options", [{}, {"stride": 2, "padding": 1}, {"padding": "same",
                                                                       "dilation": 2},
                                     {"bias": False}])
def test_conv1d_matches_pytorch(torch, options):
    ours, theirs = twins(torch, "Conv1d", 3, 4, 3, **options)
    compare_with_torch(torch, ours, theirs, ((2, 3, 9),))


def test_conv1d_on_one_unbatched_sequence_matches_pytorch(torch):
    ours, theirs = twins(torch, "Conv1d", 2, 3, 2)
    compare_with_torch(torch, ours, theirs, ((2, 7),))


@pytest.mark.parametrize("options", [{}, {"affine": False}])
def test_group_norm_matches_pytorch(torch, options):
    ours, theirs = twins(torch, "GroupNorm", 2, 6, **options)
    if options == {}:
        with torch.no_grad():  # not ones and zeros, so a swapped weight and bias would show
            theirs.weight.uniform_(0.5, 1.5)
            theirs.bias.uniform_(-0.5, 0.5)
    compare_with_torch(torch, ours, theirs, ((3, 6, 4, 2),), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name, args, shape", [
    ("MaxPool1d", (3, 2, 1), (2, 3, 9)), ("AvgPool1d", (2,), (2, 3, 8)),
    ("AdaptiveAvgPool2d", ((3, 2),), (2, 3, 7, 5)), ("AdaptiveAvgPool2d", (1,), (2, 3, 4, 4)),
    ("AdaptiveAvgPool1d", (4,), (2, 3, 9)), ("Upsample", (None, 2), (1, 2, 3, 4)),
    ("Upsample", ((5, 7), None, "bilinear", True), (1, 2, 3, 4)),
    ("Unflatten", (1, (2, 3)), (4, 6, 5)), ("Unflatten", (-1, (2, -1)), (4, 6)),
])
def test_parameterless_layers_match_pytorch(torch, name, args, shape):
    ours, theirs = twins(torch, name, *args)
    compare_with_torch(torch, ours, theirs, (shape,))


def test_state_dict_keys_of_the_new_layers_match_pytorch(torch):
    for name, args in [("Conv1d", (3, 4, 2)), ("GroupNorm", (2, 4)),
                       ("GroupNorm", (2, 4, 1e-5, False))]:
        ours, theirs = twins(torch, name, *args)
        assert [(k, v.shape) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_conv1d_names_in_channels_and_suggests_unsqueeze_for_2d_input():
    model = nn.Sequential(nn.Conv1d(1, 4, 3))
    with pytest.raises(mg.ShapeError, match=r"Conv1d '0': expected input with 1 channels "
                                            r"\(in_channels=1, dim 0\), got shape \(8, 20\); "
                                            r"a 2-D input is one sequence .* x.unsqueeze\(1\)"):
        model(mg.randn(8, 20))


def test_group_norm_names_num_channels_and_the_shape():
    with pytest.raises(mg.ShapeError, match=r"GroupNorm: expected an input \(N, 6, \.\.\.\) "
                                            r"\(num_channels=6 in dim 1\), got shape \(2, 4\)"):
        nn.GroupNorm(3, 6)(mg.randn(2, 4))
    with pytest.raises(ValueError, match="num_channels=6 must split into num_groups=4"):
        nn.GroupNorm(4, 6)


def test_unflatten_names_the_sizes_that_do_not_multiply():
    with pytest.raises(mg.ShapeError, match=r"Unflatten: cannot unflatten dim 1 of size 6 "
                                            r"\(input shape \(4, 6\)\) into \(4, 2\)"):
        nn.Unflatten(1, (4, 2))(mg.randn(4, 6))


# --- activation and loss modules ---------------------------------------------------------------

ACTIVATIONS = [("LeakyReLU", (0.2,)), ("ELU", (0.7,)), ("Softplus", (2.0, 3.0)), ("SiLU", ()),
               ("Mish", ()), ("Hardtanh", (-0.5, 0.5)), ("ReLU6", ())]


@pytest.mark.parametrize("name, args", ACTIVATIONS, ids=[n for n, _ in ACTIVATIONS])
def test_activation_modules_match_pytorch(torch, name, args):
    ours, theirs = twins(torch, name, *args)
    rng = np.random.default_rng(0)
    x = rng.uniform(-8, 8, (4, 5)).astype(np.float32)
    np.testing.assert_allclose(ours(mg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "softplus", "silu", "mish", "hardtanh",
                                  "relu6"])
def test_activations_of_extreme_inputs_match_pytorch_without_overflow_warnings(torch, name):
    x = np.array([-1000.0, -30.0, -1.0, 0.5, 1.0, 30.0, 1000.0], dtype=np.float32)
    ours = mg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in exp would warn
        output = getattr(F, name)(ours)
        output.sum().backward()
    their_output = getattr(torch.nn.functional, name)(theirs)
    their_output.sum().backward()
    np.testing.assert_allclose(output.numpy(), their_output.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_inplace_activation_writes_into_its_input_and_keeps_the_gradient(torch):
    x = mg.tensor(np.array([-2.0, -0.5, 1.0, 3.0]), requires_grad=True)
    hidden = x * 2
    out = nn.LeakyReLU(0.1, inplace=True)(hidden)
    assert out is hidden
    (out * out).sum().backward()
    t = torch.tensor([-2.0, -0.5, 1.0, 3.0], dtype=torch.float64, requires_grad=True)
    t_out = torch.nn.LeakyReLU(0.1, inplace=True)(t * 2)
    (t_out * t_out).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_inplace_activation_on_a_leaf_that_requires_grad_raises_as_in_pytorch():
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        F.silu(mg.randn(3, requires_grad=True), inplace=True)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "softplus", "silu", "mish", "hardtanh",
                                  "relu6"])
def test_activations_refuse_integer_input_naming_op_dtype_and_shape(name):
    with pytest.raises(TypeError, match=rf"{name}: input has dtype int64 \(shape \(2, 3\)\) "
                                        r"but must be floating point; convert it with "
                                        r"\.float\(\)"):
        getattr(F, name)(mg.tensor(np.zeros((2, 3), dtype=np.int64)))


LOSSES = [("L1Loss", {}), ("SmoothL1Loss", {"beta": 0.5}), ("HuberLoss", {"delta": 0.5}),
          ("KLDivLoss", {"reduction": "batchmean"}),
          ("KLDivLoss", {"reduction": "sum", "log_target": True})]


@pytest.mark.parametrize("name, options", LOSSES,
                         ids=[f"{n}-{'-'.join(map(str, o.values()))}" for n, o in LOSSES])
def test_loss_modules_match_pytorch(torch, name, options):
    ours, theirs = twins(torch, name, **options)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 4, 3)), rng.uniform(0.1, 1, (4, 3))
    a, b = mg.tensor(x[0], requires_grad=True), torch.tensor(x[0], requires_grad=True)
    ours(a, mg.tensor(y)).backward()
    theirs(b, torch.tensor(y)).backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)


def test_nll_loss_module_with_weight_matches_pytorch_and_keeps_weight_as_a_buffer(torch):
    weight = np.array([0.5, 2.0, 1.0, 0.1])
    ours = nn.NLLLoss(weight=mg.tensor(weight), ignore_index=1)
    theirs = torch.nn.NLLLoss(weight=torch.tensor(weight), ignore_index=1)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    logits = np.random.default_rng(0).standard_normal((6, 4))
    target = np.array([0, 1, 3, 2, 2, 0])
    a = mg.tensor(logits, requires_grad=True)
    b = torch.tensor(logits, requires_grad=True)
    loss, their_loss = ours(F.log_softmax(a, 1), target), theirs(
        torch.log_softmax(b, 1), torch.tensor(target))
    assert loss.item() == pytest.approx(their_loss.item(), rel=1e-12)
    loss.backward()
    their_loss.backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)


def test_log_softmax_then_nll_loss_equals_cross_entropy():
    logits = mg.randn(5, 3)
    target = mg.tensor(np.array([0, 2, 1, 1, 0]))
    np.testing.assert_allclose(F.nll_loss(F.log_softmax(logits, 1), target).item(),
                               F.cross_entropy(logits, target).item(), rtol=1e-6)


def test_nll_loss_of_only_ignored_targets_is_nan_with_zero_gradients_as_in_pytorch():
    x = mg.randn(2, 3, requires_grad=True)
    loss = F.nll_loss(x, np.array([-100, -100]))
    loss.backward()
    assert np.isnan(loss.item())
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3)))


def test_nll_loss_names_the_class_that_is_out_of_range():
    with pytest.raises(IndexError, match=r"nll_loss: target holds class index 3, but the "
                                         r"input of shape \(2, 3\) has C = 3 classes"):
        F.nll_loss(mg.randn(2, 3), np.array([0, 3]))
    with pytest.raises(mg.ShapeError, match=r"nll_loss: weight tensor should be defined either "
                                            r"for all 3 classes.*\(4,\).*shape \(3,\)"):
        F.nll_loss(mg.randn(2, 3), np.array([0, 1]), weight=mg.ones(4))


def test_regression_losses_refuse_mismatched_shapes_naming_both():
    for name in ("l1_loss", "smooth_l1_loss", "huber_loss", "kl_div"):
        with pytest.raises(mg.ShapeError, match=rf"{name}: input shape \(3, 1\) and target "
                                                r"shape \(3,\) differ"):
            getattr(F, name)(mg.randn(3, 1), mg.randn(3))


def test_kl_div_refuses_an_unknown_reduction():
    with pytest.raises(ValueError, match="kl_div: reduction must be one of"):
        F.kl_div(mg.randn(3), mg.rand(3), reduction="average")
    with pytest.raises(ValueError, match="KLDivLoss: reduction must be one of"):
        nn.KLDivLoss(reduction="average")


def test_cosine_similarity_module_matches_pytorch(torch):
    x1, x2 = np.random.default_rng(0).standard_normal((2, 4, 6))
    np.testing.assert_allclose(
        nn.CosineSimilarity(dim=0)(mg.tensor(x1), mg.tensor(x2)).numpy(),
        torch.nn.CosineSimilarity(dim=0)(torch.tensor(x1), torch.tensor(x2)).numpy(),
        rtol=1e-12)


def test_cosine_similarity_of_shapes_that_do_not_broadcast_names_both():
    with pytest.raises(mg.ShapeError, match=r"cosine_similarity: x1 of shape \(3, 4\) and x2 "
                                            r"of shape \(3, 5\) do not broadcast"):
        F.cosine_similarity(mg.randn(3, 4), mg.randn(3, 5))


# --- one_hot, normalize, interpolate and the 1-D functionals: values and errors ----------------


def test_one_hot_matches_pytorch(torch):
    labels = np.array([[0, 2], [1, 4]])
    for num_classes in (-1, 6):
        ours = F.one_hot(mg.tensor(labels), num_classes)
        theirs = torch.nn.functional.one_hot(torch.tensor(labels), num_classes)
        assert ours.dtype == np.int64 and not ours.requires_grad
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_one_hot_errors_name_the_index_and_the_dtype():
    with pytest.raises(IndexError, match=r"one_hot: class index 3 is out of range for "
                                         r"num_classes=3 \(valid: 0 to 2\)"):
        F.one_hot(mg.tensor(np.array([0, 3])), 3)
    with pytest.raises(TypeError, match=r"one_hot: expected integer class indices .* got "
                                        r"float32"):
        F.one_hot(mg.randn(3))


def test_conv1d_errors_name_the_op_and_the_shapes():
    with pytest.raises(mg.ShapeError, match=r"conv1d: weight must be 3-D .*got shape "
                                            r"\(4, 3, 2, 2\)"):
        F.conv1d(mg.randn(2, 3, 8), mg.randn(4, 3, 2, 2))
    with pytest.raises(mg.ShapeError, match=r"conv1d: input has 2 channels \(shape \(1, 2, 8\)\) "
                                            r"but the weight of shape \(4, 3, 2\) expects 3"):
        F.conv1d(mg.randn(1, 2, 8), mg.randn(4, 3, 2))
    with pytest.raises(mg.ShapeError, match=r"conv1d: the input's length 2 .*is smaller than "
                                            r"the kernel \(3\)"):
        F.conv1d(mg.randn(1, 3, 2), mg.randn(4, 3, 3))
    with pytest.raises(mg.ShapeError, match=r"conv1d: expected a 2-D \(C, L\) or 3-D "
                                            r"\(N, C, L\) input, got shape \(1, 1, 3, 8\)"):
        F.conv1d(mg.randn(1, 1, 3, 8), mg.randn(4, 1, 3))
    with pytest.raises(ValueError, match="conv1d: padding='same' needs stride 1"):
        F.conv1d(mg.randn(1, 3, 8), mg.randn(4, 3, 3), stride=2, padding="same")


def test_pool1d_errors_name_the_op():
    with pytest.raises(mg.ShapeError, match=r"max_pool1d: the input's length 2 is smaller "
                                            r"than the kernel 3"):
        F.max_pool1d(mg.randn(1, 2, 2), 3)
    with pytest.raises(ValueError, match=r"avg_pool1d: padding 2 must be at most half"):
        F.avg_pool1d(mg.randn(1, 2, 8), 3, padding=2)


def test_adaptive_pool_and_interpolate_errors_name_the_op():
    with pytest.raises(mg.ShapeError, match=r"adaptive_avg_pool2d: expected a 3-D \(C, H, W\) "
                                            r"or 4-D \(N, C, H, W\) input, got shape \(4, 4\)"):
        F.adaptive_avg_pool2d(mg.randn(4, 4), 2)
    with pytest.raises(ValueError, match="interpolate: give exactly one of size and "
                                         "scale_factor"):
        F.interpolate(mg.randn(1, 1, 4, 4), size=8, scale_factor=2)
    with pytest.raises(NotImplementedError, match="interpolate: mode 'bicubic' is not "
                                                  "supported"):
        F.interpolate(mg.randn(1, 1, 4, 4), scale_factor=2, mode="bicubic")
    with pytest.raises(ValueError, match="align_corners only goes with the linear modes"):
        F.interpolate(mg.randn(1, 1, 4, 4), scale_factor=2, align_corners=True)


def test_group_norm_error_names_channels_and_groups():
    with pytest.raises(ValueError, match=r"group_norm: the 6 channels of the input of shape "
                                         r"\(2, 6, 3\) do not split into num_groups=4"):
        F.group_norm(mg.randn(2, 6, 3), 4)


def test_normalize_gives_unit_rows_and_matches_pytorch(torch):
    x = np.random.default_rng(0).standard_normal((3, 4))
    ours = F.normalize(mg.tensor(x), dim=1)
    np.testing.assert_allclose(np.linalg.norm(ours.numpy(), axis=1), 1.0)
    np.testing.assert_allclose(ours.numpy(), torch.nn.functional.normalize(
        torch.tensor(x), dim=1).numpy(), rtol=1e-12)


# --- containers and utils ------------------------------------------------------------------------


def with_containers(library):
    """The same model with a ParameterList and a ParameterDict, in either library."""
    model = library.nn.Module()
    model.scales = library.nn.ParameterList([library.nn.Parameter(library.ones(3)),
                                             library.nn.Parameter(library.zeros(2, 2))])
    model.extra = library.nn.ParameterDict({"bias": library.nn.Parameter(library.zeros(4))})
    return model


def test_parameter_containers_register_under_pytorch_keys(torch):
    ours, theirs = with_containers(mg), with_containers(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == \
        ["scales.0", "scales.1", "extra.bias"]
    assert len(list(ours.parameters())) == 3
    ours.load_state_dict({k: v.detach().numpy() + 1 for k, v in theirs.state_dict().items()})
    np.testing.assert_array_equal(ours.extra["bias"].numpy(), np.ones(4))


def test_parameter_list_wraps_tensors_and_behaves_like_a_list():
    params = nn.ParameterList([mg.zeros(2)])
    params.append(mg.ones(3))
    params.extend([nn.Parameter(mg.ones(1))])
    assert len(params) == 3 and all(isinstance(p, nn.Parameter) for p in params)
    assert params[1].requires_grad and params[-1].shape == (1,)
    params[0] = mg.full((2,), 5.0)
    assert params[0].numpy().tolist() == [5.0, 5.0]
    assert "(1): Parameter containing: [float32 of size 3]" in repr(params)
    with pytest.raises(TypeError, match="ParameterList: expected a Parameter or a Tensor"):
        params.append([1.0])


def test_parameter_dict_behaves_like_a_dict():
    params = nn.ParameterDict({"a": mg.zeros(2)})
    params["b"] = nn.Parameter(mg.ones(1))
    assert list(params) == list(params.keys()) == ["a", "b"] and "a" in params
    assert params.pop("a").shape == (2,) and len(params) == 1
    assert [name for name, _ in params.named_parameters()] == ["b"]


def test_parameters_to_vector_and_back_match_pytorch(torch):
    ours, theirs = twins(torch, "Linear", 3, 2)
    load_torch_weights(ours, theirs)
    vector = nn.utils.parameters_to_vector(ours.parameters())
    their_vector = torch.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_allclose(vector.numpy(), their_vector.detach().numpy())
    (vector * mg.arange(8).float()).sum().backward()  # differentiable, as in PyTorch
    np.testing.assert_array_equal(ours.bias.grad.numpy(), [6.0, 7.0])
    nn.utils.vector_to_parameters(mg.arange(8).float(), ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.arange(8).float(), theirs.parameters())
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.detach().numpy(), err_msg=name)


def test_vector_to_parameters_names_the_sizes_that_differ():
    with pytest.raises(ValueError, match="the vector has 7 elements but the parameters hold 8"):
        nn.utils.vector_to_parameters(mg.zeros(7), nn.Linear(3, 2).parameters())


def test_clip_grad_value_matches_pytorch(torch):
    ours, theirs = twins(torch, "Linear", 3, 2)
    ours, theirs = ours.double(), theirs.double()  # float32 sums differ with thread counts
    load_torch_weights(ours, theirs)
    x = np.random.default_rng(0).standard_normal((5, 3)) * 10
    (ours(mg.tensor(x)) ** 2).sum().backward()
    (theirs(torch.tensor(x)) ** 2).sum().backward()
    nn.utils.clip_grad_value_(ours.parameters(), 0.5)
    torch.nn.utils.clip_grad_value_(theirs.parameters(), 0.5)
    assert_parameter_gradients_match(ours, theirs, 1e-6, 1e-6)
