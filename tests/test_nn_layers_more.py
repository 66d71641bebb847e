"""The layers of round 3 of the census (nn/layers_more.py, and the changed MaxPool,
Embedding and Softmax layers) against PyTorch's: outputs and gradients with PyTorch's
weights, repr, state-dict keys, parameter initialisation, and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_reference import load_torch_weights

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn


def twins(torch, ours, theirs):
    """The torch module in float64 with its weights loaded into ours (float64 too)."""
    theirs = theirs.double()
    load_torch_weights(ours, theirs)
    return ours.double(), theirs


def as_tensors(torch, array, requires_grad=False):
    return (mg.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


# --- repr and state dicts -------------------------------------------------------------------------

REPR_CASES = [
    "MaxPool2d(2)", "MaxPool2d(3, 2, 1, dilation=2, return_indices=True, ceil_mode=True)",
    "MaxPool1d(3, return_indices=True)", "MaxUnpool2d(2)", "MaxUnpool2d((2, 3), 1, 1)",
    "MaxUnpool1d(2)", "AdaptiveMaxPool2d((3, None))", "AdaptiveMaxPool1d(3, True)",
    "Softmax()", "LogSoftmax()", "Softmin()", "Softmax(dim=1)",
    "Embedding(10, 3, padding_idx=1, max_norm=2, norm_type=1.0, scale_grad_by_freq=True)",
    "Embedding(10, 3)", "EmbeddingBag(10, 3)",
    "EmbeddingBag(10, 3, max_norm=1.0, mode='sum', padding_idx=0, scale_grad_by_freq=True, "
    "include_last_offset=True, norm_type=3.0)",
    "EmbeddingBag(10, 3, mode='max')",
    "LocalResponseNorm(3)", "LocalResponseNorm(2, alpha=0.5, beta=0.5, k=2.0)",
    "AlphaDropout(0.2)", "FeatureAlphaDropout()", "Softmax2d()", "Bilinear(2, 3, 4)",
    "Bilinear(2, 3, 4, bias=False)",
]


@pytest.mark.parametrize("construction", REPR_CASES)
def test_repr_is_pytorchs(torch, construction):
    assert repr(eval("nn." + construction)) == repr(eval("torch.nn." + construction))


@pytest.mark.parametrize("construction", ["EmbeddingBag(10, 3)", "Bilinear(2, 3, 4)",
                                          "Bilinear(2, 3, 4, bias=False)",
                                          "Embedding(5, 2, max_norm=1.0)",
                                          "LocalResponseNorm(3)", "MaxUnpool2d(2)"])
def test_state_dict_keys_and_shapes_are_pytorchs(torch, construction):
    ours = eval("nn." + construction).state_dict()
    theirs = eval("torch.nn." + construction).state_dict()
    assert {k: tuple(v.shape) for k, v in ours.items()} == \
        {k: tuple(v.shape) for k, v in theirs.items()}


def test_bilinear_starts_uniform_within_one_over_sqrt_in1_features():
    mg.manual_seed(0)
    layer = nn.Bilinear(16, 3, 200)
    bound = 1 / 4
    for parameter in (layer.weight, layer.bias):
        values = parameter.numpy()
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.9 * bound  # spread over the whole interval
    assert abs(layer.weight.numpy().std() - bound / np.sqrt(3)) < 0.01


def test_embedding_bag_starts_standard_normal_with_a_zero_padding_row():
    mg.manual_seed(0)
    bag = nn.EmbeddingBag(400, 50, padding_idx=3)
    values = np.delete(bag.weight.numpy(), 3, axis=0)
    assert abs(values.mean()) < 0.02 and abs(values.std() - 1) < 0.02
    assert (bag.weight.numpy()[3] == 0).all()


# --- max pooling with indices, unpooling ----------------------------------------------------------


@pytest.mark.parametrize("arguments", [dict(kernel_size=2), dict(kernel_size=3, stride=2,
                                                                   padding=1, ceil_mode=True),
                                       dict(kernel_size=(2, 3), dilation=(2, 1))])
def test_max_pool2d_layer_with_indices_is_pytorchs(torch, arguments):
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 8))
    ours, theirs = as_tensors(torch, x, requires_grad=True)
    (values, indices) = nn.MaxPool2d(**arguments, return_indices=True)(ours)
    (t_values, t_indices) = torch.nn.MaxPool2d(**arguments, return_indices=True)(theirs)
    np.testing.assert_array_equal(values.numpy(), t_values.detach().numpy())
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    assert indices.dtype == np.int64 and not indices.requires_grad
    upstream = np.random.default_rng(1).standard_normal(values.shape)
    values.backward(upstream)
    t_values.backward(torch.tensor(upstream))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())


def test_max_pool_indices_follow_pytorch_on_ties_and_nan(torch):
    x = np.array([[[[1.0, 1.0, 2.0, 2.0], [1.0, 0.0, np.nan, 2.0], [0.0, 0.0, 5, 5],
                    [0.0, 0.0, 5, np.nan]]]])
    values, indices = F.max_pool2d(mg.tensor(x), 2, return_indices=True)
    t_values, t_indices = torch.nn.functional.max_pool2d(torch.tensor(x), 2,
                                                         return_indices=True)
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    np.testing.assert_array_equal(values.numpy(), t_values.numpy())


def test_max_pool1d_layer_with_indices_round_trips_through_max_unpool1d(torch):
    x = np.random.default_rng(0).standard_normal((2, 3, 10))
    ours, theirs = as_tensors(torch, x, requires_grad=True)
    values, indices = nn.MaxPool1d(2, return_indices=True)(ours)
    t_values, t_indices = torch.nn.MaxPool1d(2, return_indices=True)(theirs)
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    restored = nn.MaxUnpool1d(2)(values, indices)
    t_restored = torch.nn.MaxUnpool1d(2)(t_values, t_indices)
    np.testing.assert_array_equal(restored.numpy(), t_restored.detach().numpy())
    restored.sum().backward()
    t_restored.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_max_unpool2d_layer_takes_output_size_like_pytorch(torch):
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 7))
    values, indices = F.max_pool2d(mg.tensor(x), 2, return_indices=True)
    t_values, t_indices = torch.nn.functional.max_pool2d(torch.tensor(x), 2,
                                                         return_indices=True)
    for size in ((5, 7), (1, 2, 5, 7)):
        ours = nn.MaxUnpool2d(2)(values, indices, output_size=size)
        theirs = torch.nn.MaxUnpool2d(2)(t_values, t_indices, output_size=size)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    unbatched = F.max_unpool2d(values[0], indices[0], 2, output_size=(5, 7))
    np.testing.assert_array_equal(unbatched.numpy(), ours.numpy()[0])


def test_max_unpool2d_errors_name_the_op_and_the_shapes():
    values, indices = F.max_pool2d(mg.randn(1, 2, 4, 4), 2, return_indices=True)
    with pytest.raises(ValueError, match=r"max_unpool2d: output_size \(9, 9\) must be between"):
        F.max_unpool2d(values, indices, 2, output_size=(9, 9))
    with pytest.raises(mg.ShapeError, match=r"max_unpool2d: indices of shape \(1, 2, 1, 2\) "
                                            r"must have the input's shape \(1, 2, 2, 2\)"):
        F.max_unpool2d(values, indices[..., :1, :], 2)
    with pytest.raises(IndexError, match=r"max_unpool2d: index 16 is out of range"):
        F.max_unpool2d(values, indices * 0 + 16, 2)
    with pytest.raises(TypeError, match="max_unpool2d: indices must be integers"):
        F.max_unpool2d(values, values, 2)


def test_max_pool2d_with_dilation_too_small_input_names_the_shape():
    with pytest.raises(mg.ShapeError, match=r"max_pool2d: the input of shape \(1, 1, 3, 3\) "
                                            r"is too small for a kernel \(2, 2\) with "
                                            r"dilation \(3, 3\)"):
        F.max_pool2d(mg.randn(1, 1, 3, 3), 2, dilation=3)


# --- adaptive max pooling -------------------------------------------------------------------------


@pytest.mark.parametrize("output_size", [(3, 4), 1, (None, 2), (7, 10), (5, 6)])
def test_adaptive_max_pool2d_layer_is_pytorchs(torch, output_size):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 10))
    ours, theirs = as_tensors(torch, x, requires_grad=True)
    values, indices = nn.AdaptiveMaxPool2d(output_size, return_indices=True)(ours)
    t_values, t_indices = torch.nn.AdaptiveMaxPool2d(output_size, return_indices=True)(theirs)
    np.testing.assert_array_equal(values.numpy(), t_values.detach().numpy())
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    values.sum().backward()
    t_values.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_adaptive_max_pool1d_layer_is_pytorchs_unbatched_too(torch):
    x = np.random.default_rng(0).standard_normal((3, 11))
    ours = nn.AdaptiveMaxPool1d(4)(mg.tensor(x))
    theirs = torch.nn.AdaptiveMaxPool1d(4)(torch.tensor(x))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_adaptive_max_pool_errors_name_the_op_and_the_shape():
    with pytest.raises(mg.ShapeError, match=r"adaptive_max_pool2d: expected a 3-D .* got "
                                            r"shape \(4, 4\)"):
        F.adaptive_max_pool2d(mg.randn(4, 4), 2)
    with pytest.raises(ValueError, match="adaptive_max_pool1d: output_size must be positive"):
        F.adaptive_max_pool1d(mg.randn(2, 4), 0)


# --- softmax without dim --------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax", "Softmin"])
def test_softmax_layers_without_dim_use_pytorchs_implicit_dim_and_warn(torch, name, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    function = {"Softmax": "softmax", "LogSoftmax": "log_softmax", "Softmin": "softmin"}[name]
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {function} has "
                                         "been deprecated") as record:
        ours = getattr(nn, name)()(mg.tensor(x))
    assert record[0].filename == __file__  # the warning names the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch.nn, name)()(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_functional_softmax_without_dim_warns_like_pytorch(torch, name):
    x = np.random.default_rng(0).standard_normal((3,))
    with warnings.catch_warnings(record=True) as ours_warnings:
        warnings.simplefilter("always")
        ours = getattr(F, name)(mg.tensor(x))
    with warnings.catch_warnings(record=True) as theirs_warnings:
        warnings.simplefilter("always")
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x))
    assert [str(w.message) for w in ours_warnings] == [str(w.message) for w in theirs_warnings]
    assert ours_warnings[0].filename == __file__
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_softmax_with_dtype_casts_first(torch):
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    ours = F.softmax(mg.tensor(x), 1, dtype=mg.float64)
    theirs = torch.nn.functional.softmax(torch.tensor(x), 1, dtype=torch.float64)
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_softmax2d_is_pytorchs_and_refuses_2d_input(torch):
    x = np.random.default_rng(0).standard_normal((3, 4, 2))
    np.testing.assert_allclose(nn.Softmax2d()(mg.tensor(x)).numpy(),
                               torch.nn.Softmax2d()(torch.tensor(x)).numpy(), rtol=1e-12)
    with pytest.raises(mg.ShapeError, match=r"Softmax2d.*3-D .* or 4-D .* got shape \(3, 4\)"):
        nn.Softmax2d()(mg.randn(3, 4))


# --- embeddings -----------------------------------------------------------------------------------


def test_embedding_max_norm_renormalises_the_looked_up_rows_in_place_as_pytorch(torch):
    weight = np.random.default_rng(0).standard_normal((6, 4)) * 2
    indices = np.array([[0, 2, 2], [5, 1, 0]])
    for norm_type in (2.0, 1.0, 3.0):
        ours = nn.Embedding(6, 4, max_norm=1.5, norm_type=norm_type).double()
        theirs = torch.nn.Embedding(6, 4, max_norm=1.5, norm_type=norm_type).double()
        ours.load_state_dict({"weight": weight})
        theirs.load_state_dict({"weight": torch.tensor(weight)})
        out, t_out = ours(mg.tensor(indices)), theirs(torch.tensor(indices))
        np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(ours.weight.numpy(), theirs.weight.detach().numpy(),
                                   rtol=1e-12)  # rows 3 and 4 untouched, the rest scaled
        assert np.allclose(ours.weight.numpy()[3:5], weight[3:5])
        out.sum().backward()
        t_out.sum().backward()
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy())


def test_embedding_scale_grad_by_freq_divides_by_the_count_as_pytorch(torch):
    ours, theirs = twins(torch, nn.Embedding(5, 3, scale_grad_by_freq=True, padding_idx=4),
                         torch.nn.Embedding(5, 3, scale_grad_by_freq=True, padding_idx=4))
    indices = np.array([[1, 2, 1, 4], [1, 0, 2, 4]])
    upstream = np.random.default_rng(0).standard_normal((2, 4, 3))
    ours(mg.tensor(indices)).backward(upstream)
    theirs(torch.tensor(indices)).backward(torch.tensor(upstream))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-12)


def test_embedding_from_pretrained_shares_the_weights_and_freezes_like_pytorch(torch):
    weights = mg.tensor(np.arange(12.0).reshape(4, 3))
    frozen = nn.Embedding.from_pretrained(weights)
    trained = nn.Embedding.from_pretrained(weights, freeze=False, padding_idx=1, max_norm=50.0)
    t_frozen = torch.nn.Embedding.from_pretrained(torch.tensor(weights.numpy()))
    assert not frozen.weight.requires_grad and trained.weight.requires_grad
    assert repr(trained) == repr(torch.nn.Embedding.from_pretrained(
        torch.tensor(weights.numpy()), freeze=False, padding_idx=1, max_norm=50.0))
    np.testing.assert_array_equal(frozen(mg.tensor([2, 0])).numpy(),
                                  t_frozen(torch.tensor([2, 0])).numpy())
    assert np.shares_memory(frozen.weight.numpy(), weights.numpy())
    with pytest.raises(ValueError, match=r"from_pretrained: embeddings must be 2-D .*\(12,\)"):
        nn.Embedding.from_pretrained(mg.zeros(12))


def test_sparse_embeddings_are_refused_with_a_reason():
    with pytest.raises(NotImplementedError, match="Embedding: sparse=True is not supported "
                                                  "by minigrad .*no sparse tensors"):
        nn.Embedding(5, 2, sparse=True)
    with pytest.raises(NotImplementedError, match="embedding_bag: sparse=True"):
        F.embedding_bag(mg.tensor([[0]]), mg.randn(3, 2), sparse=True)
    with pytest.raises(NotImplementedError, match="embedding: sparse=True"):
        F.embedding(mg.tensor([0]), mg.randn(3, 2), sparse=True)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_layer_with_offsets_is_pytorchs(torch, mode, padding_idx):
    ours, theirs = twins(torch, nn.EmbeddingBag(10, 4, mode=mode, padding_idx=padding_idx,
                                                include_last_offset=True),
                         torch.nn.EmbeddingBag(10, 4, mode=mode, padding_idx=padding_idx,
                                               include_last_offset=True))
    indices = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2, 2])  # the last bag: padding only
    offsets = np.array([0, 4, 4, 8, 10])  # the second bag empty
    out = ours(mg.tensor(indices), mg.tensor(offsets))
    t_out = theirs(torch.tensor(indices), torch.tensor(offsets))
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-12)
    upstream = np.random.default_rng(0).standard_normal(out.shape)
    out.backward(upstream)
    t_out.backward(torch.tensor(upstream))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-12)


def test_embedding_bag_2d_input_per_sample_weights_and_max_norm_are_pytorchs(torch):
    ours, theirs = twins(torch, nn.EmbeddingBag(6, 3, mode="sum", max_norm=1.0,
                                                scale_grad_by_freq=True),
                         torch.nn.EmbeddingBag(6, 3, mode="sum", max_norm=1.0,
                                               scale_grad_by_freq=True))
    indices = np.array([[0, 1, 1], [5, 0, 3]])
    weights = np.random.default_rng(0).standard_normal((2, 3))
    ours_w, theirs_w = as_tensors(torch, weights, requires_grad=True)
    out = ours(mg.tensor(indices), per_sample_weights=ours_w)
    t_out = theirs(torch.tensor(indices), per_sample_weights=theirs_w)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.weight.numpy(), theirs.weight.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(ours_w.grad.numpy(), theirs_w.grad.numpy(), rtol=1e-12)
    # PyTorch 2.13's CPU embedding_bag divides some rows by another index's count
    # (pytorch/pytorch#190063); its F.embedding has the documented scaling: compare with that
    weight = theirs.weight.detach().clone().requires_grad_(True)
    looked_up = torch.nn.functional.embedding(torch.tensor(indices), weight,
                                              scale_grad_by_freq=True)
    (looked_up * theirs_w.detach()[..., None]).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), weight.grad.numpy(), rtol=1e-12)


def test_embedding_bag_from_pretrained_is_pytorchs(torch):
    weights = np.arange(12.0).reshape(4, 3)
    ours = nn.EmbeddingBag.from_pretrained(mg.tensor(weights), mode="max")
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(weights), mode="max")
    assert not ours.weight.requires_grad
    indices = np.array([[0, 3], [1, 2]])
    np.testing.assert_array_equal(ours(mg.tensor(indices)).numpy(),
                                  theirs(torch.tensor(indices)).numpy())


def test_embedding_bag_errors_say_what_is_wrong():
    weight = mg.randn(5, 2)
    with pytest.raises(ValueError, match="embedding_bag: a 1-D input needs offsets"):
        F.embedding_bag(mg.tensor([0, 1]), weight)
    with pytest.raises(ValueError, match=r"embedding_bag: offsets must be None for a 2-D "
                                         r"input .*\(2, 1\)"):
        F.embedding_bag(mg.tensor([[0], [1]]), weight, mg.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"include_last_offset=True the last offset must be "
                                         r"the input's length 3 .*\[0, 2\]"):
        F.embedding_bag(mg.tensor([0, 1, 2]), weight, mg.tensor([0, 2]),
                        include_last_offset=True)
    with pytest.raises(NotImplementedError, match="per_sample_weights only go with "
                                                  "mode='sum', got mode='mean'"):
        F.embedding_bag(mg.tensor([[0, 1]]), weight, per_sample_weights=mg.ones(1, 2))
    with pytest.raises(ValueError, match="EmbeddingBag: mode must be one of"):
        nn.EmbeddingBag(5, 2, mode="median")
    with pytest.raises(IndexError, match="embedding_bag: index 7 is out of range for an "
                                         "embedding with 5 rows"):
        F.embedding_bag(mg.tensor([[0, 7]]), weight)


# --- local response norm, alpha dropout, bilinear -------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7])
def test_local_response_norm_layer_is_pytorchs(torch, size):
    x = np.random.default_rng(0).standard_normal((2, 5, 3, 4))
    ours, theirs = as_tensors(torch, x, requires_grad=True)
    out = nn.LocalResponseNorm(size, alpha=0.3, beta=0.6, k=1.5)(ours)
    t_out = torch.nn.LocalResponseNorm(size, alpha=0.3, beta=0.6, k=1.5)(theirs)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)


def test_local_response_norm_needs_a_channel_dim():
    with pytest.raises(mg.ShapeError, match=r"local_response_norm: expected a 3-D or higher "
                                            r"input .* got shape \(2, 5\)"):
        nn.LocalResponseNorm(2)(mg.randn(2, 5))


@pytest.mark.parametrize("layer", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_keeps_mean_and_variance_and_is_the_identity_in_eval(layer):
    mg.manual_seed(0)
    module = getattr(nn, layer)(0.3)
    x = mg.randn(400, 500, 1)
    out = module(x).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    dropped = -1.7580993408473766  # SELU's lowest value, then scaled and shifted
    a = ((1 - 0.3) * (1 + 0.3 * dropped ** 2)) ** -0.5
    is_dropped = np.isclose(out, a * dropped + a * 0.3 * -dropped, atol=1e-6)
    assert 0.28 < is_dropped.mean() < 0.32
    if layer == "FeatureAlphaDropout":  # whole channels (dim 1 of (N, C, ...)): here size 1
        assert is_dropped.shape == (400, 500, 1)
    module.eval()
    assert module(x) is x


def test_feature_alpha_dropout_drops_whole_channels():
    mg.manual_seed(0)
    out = F.feature_alpha_dropout(mg.ones(4, 6, 5, 5), 0.5, training=True).numpy()
    per_channel = out.reshape(4, 6, -1)
    assert (per_channel == per_channel[..., :1]).all()
    assert len(np.unique(per_channel[..., 0])) == 2


def test_alpha_dropout_probability_is_checked():
    with pytest.raises(ValueError, match="AlphaDropout: p must be between 0 and 1, got 1.5"):
        nn.AlphaDropout(1.5)
    with pytest.raises(ValueError, match="alpha_dropout: p must be between 0 and 1, got -1"):
        F.alpha_dropout(mg.ones(2), -1, True)


def test_bilinear_layer_is_pytorchs(torch):
    ours, theirs = twins(torch, nn.Bilinear(3, 4, 5), torch.nn.Bilinear(3, 4, 5))
    rng = np.random.default_rng(0)
    x1, t_x1 = as_tensors(torch, rng.standard_normal((2, 6, 3)), requires_grad=True)
    x2, t_x2 = as_tensors(torch, rng.standard_normal((2, 6, 4)), requires_grad=True)
    out, t_out = ours(x1, x2), theirs(t_x1, t_x2)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    t_out.sum().backward()
    for mine, torchs in ((x1, t_x1), (x2, t_x2), (ours.weight, theirs.weight),
                         (ours.bias, theirs.bias)):
        np.testing.assert_allclose(mine.grad.numpy(), torchs.grad.numpy(), rtol=1e-12)


def test_bilinear_error_names_both_inputs_and_the_weight():
    layer = nn.Bilinear(3, 4, 5)
    with pytest.raises(mg.ShapeError, match=r"bilinear: input1 of shape \(2, 3\) and input2 "
                                            r"of shape \(2, 3\) do not fit the weight of "
                                            r"shape \(5, 3, 4\)"):
        layer(mg.randn(2, 3), mg.randn(2, 3))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm3d_is_pytorchs(torch, training):
    ours, theirs = twins(torch, nn.BatchNorm3d(3), torch.nn.BatchNorm3d(3))
    # (no repr check: PyTorch 2.13's batch norms show a bias= that minigrad's lack)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.train(training)
    theirs.train(training)
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 3, 4)) * 2 + 1
    mine, torchs = as_tensors(torch, x, requires_grad=True)
    out, t_out = ours(mine), theirs(torchs)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(),
                               rtol=1e-12)
    upstream = np.random.default_rng(1).standard_normal(x.shape)
    out.backward(upstream)
    t_out.backward(torch.tensor(upstream))
    np.testing.assert_allclose(mine.grad.numpy(), torchs.grad.numpy(), rtol=1e-8, atol=1e-10)
    with pytest.raises(mg.ShapeError, match=r"BatchNorm3d.*expected a 5-D input, got shape "
                                            r"\(2, 3, 4, 4\)"):
        ours(mg.randn(2, 3, 4, 4).double())


# --- init -----------------------------------------------------------------------------------------


def test_trunc_normal_stays_within_the_bounds_with_the_truncated_distribution():
    mg.manual_seed(0)
    t = nn.init.trunc_normal_(mg.zeros(200, 500), mean=0.5, std=1.0, a=-1.0, b=1.5)
    values = t.numpy()
    assert values.min() >= -1.0 and values.max() <= 1.5
    # the mean of N(0.5, 1) truncated to [-1.5, 1] (in units of std, around the mean)
    from math import erf, exp, pi, sqrt

    def pdf(z):
        return exp(-z * z / 2) / sqrt(2 * pi)

    def cdf(z):
        return (1 + erf(z / sqrt(2))) / 2

    expected = 0.5 + (pdf(-1.5) - pdf(1.0)) / (cdf(1.0) - cdf(-1.5))
    assert abs(values.mean() - expected) < 0.01


def test_trunc_normal_far_bounds_warn_as_pytorch_and_still_fill_within_them(torch):
    with pytest.raises(ValueError, match="trunc_normal_: need a < b"):
        nn.init.trunc_normal_(mg.zeros(3), a=1.0, b=0.0)
    mg.manual_seed(0)
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        values = nn.init.trunc_normal_(mg.zeros(20000), mean=0.0, a=5.0, b=6.0).numpy()
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        theirs = torch.nn.init.trunc_normal_(torch.zeros(20000), mean=0.0, a=5.0, b=6.0)
    assert 5.0 <= values.min() and values.max() <= 6.0
    assert abs(values.mean() - theirs.mean().item()) < 0.01  # both about 5.18


@pytest.mark.parametrize("old, args", [("uniform", ()), ("normal", ()), ("constant", (0.3,)),
                                       ("xavier_uniform", ()), ("xavier_normal", ()),
                                       ("kaiming_uniform", ()), ("kaiming_normal", ())])
def test_deprecated_init_names_warn_as_pytorch_and_call_the_new_one(torch, old, args):
    mg.manual_seed(0)
    with pytest.warns(FutureWarning) as ours_warning:
        ours = getattr(nn.init, old)(mg.zeros(4, 5), *args)
    with pytest.warns(FutureWarning) as theirs_warning:
        getattr(torch.nn.init, old)(torch.zeros(4, 5), *args)
    assert str(ours_warning[0].message) == str(theirs_warning[0].message)
    assert ours_warning[0].filename == __file__
    mg.manual_seed(0)
    np.testing.assert_array_equal(ours.numpy(),
                                  getattr(nn.init, old + "_")(mg.zeros(4, 5), *args).numpy())


# --- in-place functional activations --------------------------------------------------------------


@pytest.mark.parametrize("name, args", [("relu_", ()), ("elu_", (0.5,)),
                                        ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.5))])
def test_inplace_functionals_write_into_the_input_as_pytorch(torch, name, args):
    x = np.random.default_rng(0).standard_normal((3, 4))
    ours, theirs = as_tensors(torch, x)
    result = getattr(F, name)(ours, *args)
    getattr(torch.nn.functional, name)(theirs, *args)
    assert result is ours
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


# --- fold, unfold (PyTorch's im2col form), channel shuffle ------------------------------------


@pytest.mark.parametrize("make, shape", [
    (lambda nn: nn.Unfold(2), (2, 3, 4, 4)),
    (lambda nn: nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2)), (1, 2, 5, 6)),
    (lambda nn: nn.Fold((4, 4), 2), (2, 12, 9)),
    (lambda nn: nn.Fold(5, 3, padding=1, stride=2), (1, 9, 9)),
    (lambda nn: nn.ChannelShuffle(3), (2, 6, 2, 2)),
])
def test_fold_unfold_and_channel_shuffle_layers_match_pytorch(torch, make, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(ours(mg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                               rtol=1e-12, atol=1e-12)


def test_functional_unfold_keeps_the_seed_form_and_takes_pytorch_s():
    x = mg.arange(5.0)
    np.testing.assert_array_equal(F.unfold(x, 0, 3, 2).numpy(), [[0, 1, 2], [2, 3, 4]])
    image = mg.arange(16.0).reshape(1, 1, 4, 4)
    np.testing.assert_array_equal(F.unfold(x, dimension=0, size=2, step=3).numpy(),
                                  [[0, 1], [3, 4]])
    assert F.unfold(image, 2).shape == (1, 4, 9)  # not three arguments: PyTorch's form
    assert F.unfold(image, 2, 1, 0, 2).shape == (1, 4, 4)
    np.testing.assert_array_equal(F.unfold(image, kernel_size=2, stride=2).numpy()[0, :, 0],
                                  [0, 1, 4, 5])


def test_fold_and_unfold_errors_name_the_function_and_the_shapes():
    with pytest.raises(ValueError, match=r"fold: the input of shape \(1, 4, 5\) has 5 columns"):
        F.fold(mg.randn(1, 4, 5), (3, 3), 2)
    with pytest.raises(ValueError, match=r"fold: dim 1 of the input of shape \(1, 5, 4\)"):
        F.fold(mg.randn(1, 5, 4), (3, 3), 2)
    with pytest.raises(ValueError, match=r"unfold: expected a 3-D \(C, H, W\) or 4-D"):
        F.unfold(mg.randn(4, 4), kernel_size=2)
    with pytest.raises(ValueError, match=r"unfold: a kernel \(5, 5\)"):
        F.unfold(mg.randn(1, 1, 3, 3), kernel_size=5)
    with pytest.raises(ValueError, match=r"channel_shuffle: groups must be a positive int "
                                         r"dividing the 5 channels"):
        F.channel_shuffle(mg.randn(1, 5, 2), 2)


def test_embedding_freeze_leaves_the_weight_without_gradient_as_pytorch(torch):
    for freeze in (False, True):
        assert nn.Embedding(3, 2, _freeze=freeze).weight.requires_grad == \
            torch.nn.Embedding(3, 2, _freeze=freeze).weight.requires_grad == (not freeze)
