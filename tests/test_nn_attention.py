"""MultiheadAttention and ScaledDotProductAttention against PyTorch's, with PyTorch's
weights loaded: outputs, attention weights, input and parameter gradients, for every mask
kind; plus parameter names and initialisation, the mask conventions, dropout, gradcheck
and the errors a student meets first."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_reference import assert_parameter_gradients_match, load_torch_weights

import minigrad as mg
from minigrad import nn

E, HEADS = 6, 2  # embed_dim, num_heads (head_dim 3)


def causal_mask(length):
    """PyTorch's MHA convention: True above the diagonal, where a query may NOT look."""
    return np.triu(np.ones((length, length), dtype=bool), k=1)


def padding_mask(batch, source_length):
    """(N, S), True = padding: sequence n has its last n keys padded (never all of them)."""
    mask = np.zeros((batch, source_length), dtype=bool)
    for n in range(batch):
        mask[n, source_length - n:] = n > 0
    return mask


def as_torch_mask(torch, mask):
    return None if mask is None else torch.tensor(mask)


def compare_mha_with_torch(torch, query_shape, key_shape=None, rtol=1e-10, atol=1e-12,
                           module_kwargs=None, **call_kwargs):
    """Run both layers in float64 on the same query, key and value (self-attention when
    ``key_shape`` is None: one tensor for all three) and compare the output, the weights
    and, after a backward pass with a random upstream gradient, every gradient."""
    module_kwargs = module_kwargs or {}
    theirs = torch.nn.MultiheadAttention(E, HEADS, **module_kwargs).double()
    ours = nn.MultiheadAttention(E, HEADS, **module_kwargs)
    load_torch_weights(ours, theirs)
    ours.double()
    rng = np.random.default_rng(0)
    shapes = [query_shape] if key_shape is None else [query_shape, key_shape, key_shape]
    arrays = [rng.standard_normal(shape) for shape in shapes]
    if key_shape is not None:
        arrays[2] = rng.standard_normal(key_shape[:-1] + (module_kwargs.get("vdim", E),))
    ours_in = [mg.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    masks = {name: call_kwargs.pop(name) for name in ("key_padding_mask", "attn_mask")
             if name in call_kwargs}
    ours_qkv = ours_in * 3 if key_shape is None else ours_in
    theirs_qkv = theirs_in * 3 if key_shape is None else theirs_in
    output, weights = ours(*ours_qkv, **masks, **call_kwargs)
    expected, expected_weights = theirs(
        *theirs_qkv, **{k: as_torch_mask(torch, m) for k, m in masks.items()}, **call_kwargs)
    assert output.shape == tuple(expected.shape)
    np.testing.assert_allclose(output.numpy(), expected.detach().numpy(), rtol, atol)
    if expected_weights is None:
        assert weights is None
    else:
        assert weights.shape == tuple(expected_weights.shape)
        np.testing.assert_allclose(weights.numpy(), expected_weights.detach().numpy(), rtol,
                                   atol)
    upstream = rng.standard_normal(tuple(expected.shape))
    (output * upstream).sum().backward()
    (expected * torch.tensor(upstream)).sum().backward()
    for a, b in zip(ours_in, theirs_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol, atol)
    assert_parameter_gradients_match(ours, theirs, rtol, atol)
    return output, weights


# --- MultiheadAttention against PyTorch -----------------------------------------------------


def test_self_attention_matches_pytorch(torch):
    compare_mha_with_torch(torch, (5, 2, E))


def test_self_attention_batch_first_matches_pytorch(torch):
    compare_mha_with_torch(torch, (2, 5, E), module_kwargs={"batch_first": True})


def test_cross_attention_with_different_lengths_matches_pytorch(torch):
    compare_mha_with_torch(torch, (4, 2, E), (7, 2, E))


def test_cross_attention_batch_first_matches_pytorch(torch):
    compare_mha_with_torch(torch, (2, 4, E), (2, 7, E), module_kwargs={"batch_first": True})


def test_attention_on_unbatched_inputs_matches_pytorch(torch):
    compare_mha_with_torch(torch, (4, E), (7, E))


def test_key_padding_mask_matches_pytorch(torch):
    compare_mha_with_torch(torch, (4, 3, E), (7, 3, E), key_padding_mask=padding_mask(3, 7))


def test_float_key_padding_mask_matches_pytorch(torch):
    mask = np.where(padding_mask(3, 7), -np.inf, 0.0)
    compare_mha_with_torch(torch, (4, 3, E), (7, 3, E), key_padding_mask=mask)


def test_bool_attn_mask_matches_pytorch(torch):
    mask = np.random.default_rng(1).random((4, 7)) < 0.4
    mask[:, 0] = False  # every query keeps at least one key
    compare_mha_with_torch(torch, (4, 2, E), (7, 2, E), attn_mask=mask)


def test_float_attn_mask_matches_pytorch(torch):
    mask = np.random.default_rng(1).standard_normal((4, 7))
    compare_mha_with_torch(torch, (4, 2, E), (7, 2, E), attn_mask=mask)


def test_a_mask_per_sequence_and_head_matches_pytorch(torch):
    mask = np.random.default_rng(1).standard_normal((2 * HEADS, 4, 7))
    compare_mha_with_torch(torch, (4, 2, E), (7, 2, E), attn_mask=mask)


def test_attn_mask_together_with_key_padding_mask_matches_pytorch(torch):
    compare_mha_with_torch(torch, (2, 5, E), attn_mask=causal_mask(5),
                           key_padding_mask=padding_mask(2, 5),
                           module_kwargs={"batch_first": True})


def test_masks_on_unbatched_inputs_match_pytorch(torch):
    mask = np.random.default_rng(1).standard_normal((HEADS, 4, 7))
    padding = np.where(padding_mask(2, 7)[1], -np.inf, 0.0)  # float, like attn_mask
    compare_mha_with_torch(torch, (4, E), (7, E), attn_mask=mask, key_padding_mask=padding)


@pytest.mark.parametrize("need_weights", [True, False])
def test_is_causal_with_its_mask_matches_pytorch(torch, need_weights):
    compare_mha_with_torch(torch, (5, 2, E), attn_mask=causal_mask(5), is_causal=True,
                           need_weights=need_weights)


def test_a_sequence_whose_keys_are_all_padding_gets_zero_attention_like_pytorch(torch):
    mask = padding_mask(3, 7)
    mask[1] = True  # sequence 1 may attend to nothing: PyTorch's fast path gives zeros
    compare_mha_with_torch(torch, (4, 3, E), (7, 3, E), key_padding_mask=mask,
                           need_weights=False)


def test_need_weights_false_returns_no_weights_and_matches_pytorch(torch):
    _, weights = compare_mha_with_torch(torch, (4, 2, E), (7, 2, E), need_weights=False)
    assert weights is None


def test_per_head_weights_match_pytorch(torch):
    _, weights = compare_mha_with_torch(torch, (4, 2, E), (7, 2, E),
                                        average_attn_weights=False)
    assert weights.shape == (2, HEADS, 4, 7)


def test_per_head_weights_of_an_unbatched_input_match_pytorch(torch):
    _, weights = compare_mha_with_torch(torch, (4, E), average_attn_weights=False)
    assert weights.shape == (HEADS, 4, 4)


def test_without_bias_matches_pytorch(torch):
    compare_mha_with_torch(torch, (4, 2, E), (7, 2, E), module_kwargs={"bias": False})


def test_different_key_and_value_sizes_match_pytorch(torch):
    compare_mha_with_torch(torch, (4, 2, E), (7, 2, 5), module_kwargs={"kdim": 5, "vdim": 3})


# --- parameters -----------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"bias": False}, {"kdim": 5, "vdim": 3},
                                    {"batch_first": True, "dropout": 0.1}], ids=str)
def test_state_dict_keys_and_shapes_match_pytorch_in_order(torch, kwargs):
    ours = nn.MultiheadAttention(E, HEADS, **kwargs)
    theirs = torch.nn.MultiheadAttention(E, HEADS, **kwargs)
    assert [(k, v.shape) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_the_packed_in_projection_and_out_proj_have_pytorch_names():
    mha = nn.MultiheadAttention(E, HEADS)
    assert list(mha.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                      "out_proj.bias"]
    assert mha.in_proj_weight.shape == (3 * E, E)
    assert isinstance(mha.out_proj, nn.Linear)


def test_initialisation_is_xavier_uniform_with_zero_biases():
    mha = nn.MultiheadAttention(48, 4)
    bound = math.sqrt(6 / (48 + 3 * 48))  # fan_in 48, fan_out 3 * 48
    weight = mha.in_proj_weight.numpy()
    assert np.abs(weight).max() <= bound
    assert np.abs(weight).max() > 0.9 * bound
    assert not mha.in_proj_bias.numpy().any()
    assert not mha.out_proj.bias.numpy().any()


# --- behaviour ------------------------------------------------------------------------------


def test_a_bool_attn_mask_true_means_masked_out():
    mha = nn.MultiheadAttention(E, HEADS).eval()
    query, key = mg.randn(3, 1, E), mg.randn(4, 1, E)
    value = mg.randn(4, 1, E)
    mask = np.zeros((3, 4), dtype=bool)
    mask[:, 2] = True  # no query may look at key 2
    changed = value.numpy().copy()
    changed[2] += 100.0
    output, weights = mha(query, key, value, attn_mask=mask)
    again, _ = mha(query, key, mg.tensor(changed), attn_mask=mask)
    assert not weights.numpy()[..., 2].any()
    np.testing.assert_allclose(output.numpy(), again.numpy(), atol=1e-5)


def test_a_bool_key_padding_mask_true_means_ignored():
    mha = nn.MultiheadAttention(E, HEADS, batch_first=True)
    _, weights = mha(mg.randn(2, 3, E), mg.randn(2, 4, E), mg.randn(2, 4, E),
                     key_padding_mask=np.array([[False, False, False, True],
                                                [False, True, True, True]]))
    assert not weights.numpy()[0, :, 3].any()
    assert not weights.numpy()[1, :, 1:].any()
    np.testing.assert_allclose(weights.numpy()[1, :, 0], 1.0, rtol=1e-6)


def test_weights_sum_to_one_over_the_keys():
    _, weights = nn.MultiheadAttention(E, HEADS)(mg.randn(3, 2, E), mg.randn(5, 2, E),
                                                 mg.randn(5, 2, E))
    np.testing.assert_allclose(weights.numpy().sum(-1), 1.0, rtol=1e-6)


def test_mha_passes_gradcheck_for_its_query_and_the_in_projection():
    mha = nn.MultiheadAttention(4, 2).double()
    query = mg.randn(3, 2, 4, dtype=mg.float64, requires_grad=True)
    key = mg.randn(5, 2, 4, dtype=mg.float64)
    weight = mg.tensor(mha.in_proj_weight.numpy(), requires_grad=True)

    def run(query, in_proj_weight):
        mha._parameters["in_proj_weight"] = in_proj_weight  # the checked copy stands in
        return mha(query, key, key)

    assert mg.gradcheck(run, (query, weight))


def test_dropout_is_off_in_eval_mode():
    mha = nn.MultiheadAttention(E, HEADS, dropout=0.5).eval()
    x = mg.randn(4, 2, E)
    np.testing.assert_array_equal(mha(x, x, x)[0].numpy(), mha(x, x, x)[0].numpy())


def test_dropout_changes_the_output_in_training_mode():
    mha = nn.MultiheadAttention(E, HEADS, dropout=0.5)
    x = mg.randn(4, 2, E)
    assert not np.allclose(mha(x, x, x)[0].numpy(), mha(x, x, x)[0].numpy())


def test_dropout_in_training_mode_is_reproducible_under_manual_seed():
    mha = nn.MultiheadAttention(E, HEADS, dropout=0.5)
    x = mg.randn(4, 2, E)
    mg.manual_seed(7)
    first = mha(x, x, x)[0].numpy()
    mg.manual_seed(7)
    np.testing.assert_array_equal(first, mha(x, x, x)[0].numpy())


def test_repr_shows_the_arguments():
    assert repr(nn.MultiheadAttention(E, HEADS, batch_first=True)) == (
        "MultiheadAttention(\n  embed_dim=6, num_heads=2, batch_first=True\n"
        "  (out_proj): Linear(in_features=6, out_features=6, bias=True)\n)")


# --- errors ---------------------------------------------------------------------------------


def test_embed_dim_must_be_divisible_by_num_heads():
    with pytest.raises(ValueError, match=r"embed_dim \(6\) must be divisible by num_heads "
                       r"\(4\).*\[1, 2, 3, 6\]"):
        nn.MultiheadAttention(6, 4)


def test_a_wrong_embedding_size_names_embed_dim_and_the_shape():
    mha = nn.MultiheadAttention(E, HEADS)
    with pytest.raises(mg.ShapeError, match=r"MultiheadAttention: expected query's last size "
                       r"to be embed_dim=6, got shape \(4, 2, 5\)"):
        mha(mg.randn(4, 2, 5), mg.randn(4, 2, E), mg.randn(4, 2, E))


def test_a_4d_query_is_rejected():
    x = mg.randn(4, 2, 1, E)
    with pytest.raises(mg.ShapeError, match=r"expected a 3-D query \(L, N, E\).*got a 4-D"):
        nn.MultiheadAttention(E, HEADS)(x, x, x)


def test_key_and_value_ranks_must_match_the_query():
    with pytest.raises(mg.ShapeError, match="the same number of dimensions"):
        nn.MultiheadAttention(E, HEADS)(mg.randn(4, 2, E), mg.randn(4, E), mg.randn(4, E))


def test_a_wrong_attn_mask_shape_says_expected_and_got():
    x = mg.randn(4, 2, E)
    with pytest.raises(mg.ShapeError, match=r"expected attn_mask of shape \(4, 4\) \(L, S\) "
                       r"or \(4, 4, 4\) \(N \* num_heads, L, S\), got \(4, 5\)"):
        nn.MultiheadAttention(E, HEADS)(x, x, x, attn_mask=np.zeros((4, 5), dtype=bool))


def test_a_wrong_key_padding_mask_shape_says_expected_and_got():
    x = mg.randn(4, 2, E)
    with pytest.raises(mg.ShapeError, match=r"expected key_padding_mask of shape \(2, 4\) "
                       r"\(N, S\), got \(4, 2\)"):
        nn.MultiheadAttention(E, HEADS)(x, x, x, key_padding_mask=np.zeros((4, 2), bool))


def test_an_integer_mask_is_rejected():
    x = mg.randn(4, 2, E)
    with pytest.raises(TypeError, match="attn_mask must be bool .* or float .* got int64"):
        nn.MultiheadAttention(E, HEADS)(x, x, x, attn_mask=np.zeros((4, 4), dtype=np.int64))


def test_is_causal_needs_the_mask():
    x = mg.randn(4, 2, E)
    with pytest.raises(RuntimeError, match="is_causal=True is only a hint"):
        nn.MultiheadAttention(E, HEADS)(x, x, x, is_causal=True)


# --- ScaledDotProductAttention against PyTorch ----------------------------------------------


def compare_sdpa_with_torch(torch, mask=None, length=4, source_length=6, **kwargs):
    """The layer against torch.nn.functional.scaled_dot_product_attention, in float64:
    output and the gradients of query, key and value."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3, n, 5)) for n in (length, source_length,
                                                            source_length)]
    ours_in = [mg.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    output = nn.ScaledDotProductAttention()(*ours_in, attn_mask=mask, **kwargs)
    expected = torch.nn.functional.scaled_dot_product_attention(
        *theirs_in, attn_mask=None if mask is None else torch.tensor(mask), **kwargs)
    np.testing.assert_allclose(output.numpy(), expected.detach().numpy(), 1e-10, 1e-12)
    upstream = rng.standard_normal(tuple(expected.shape))
    (output * upstream).sum().backward()
    (expected * torch.tensor(upstream)).sum().backward()
    for a, b in zip(ours_in, theirs_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), 1e-10, 1e-12)


def test_scaled_dot_product_attention_matches_pytorch(torch):
    compare_sdpa_with_torch(torch)


def test_scaled_dot_product_attention_with_a_bool_mask_matches_pytorch(torch):
    mask = np.random.default_rng(1).random((4, 6)) < 0.6
    mask[:, 0] = True  # here True = may attend: every query keeps key 0
    compare_sdpa_with_torch(torch, mask)


def test_scaled_dot_product_attention_with_a_float_mask_matches_pytorch(torch):
    compare_sdpa_with_torch(torch, np.random.default_rng(1).standard_normal((4, 6)))


def test_scaled_dot_product_attention_is_causal_matches_pytorch(torch):
    compare_sdpa_with_torch(torch, length=5, source_length=5, is_causal=True)


def test_scaled_dot_product_attention_dropout_is_off_in_eval_mode():
    attention = nn.ScaledDotProductAttention(dropout_p=0.5).eval()
    q = mg.randn(2, 4, 5)
    np.testing.assert_array_equal(attention(q, q, q).numpy(), attention(q, q, q).numpy())


def test_scaled_dot_product_attention_dropout_changes_the_output_in_training_mode():
    attention = nn.ScaledDotProductAttention(dropout_p=0.5)
    q = mg.randn(2, 4, 5)
    assert not np.allclose(attention(q, q, q).numpy(), attention(q, q, q).numpy())


def test_scaled_dot_product_attention_dropout_is_reproducible_under_manual_seed():
    attention = nn.ScaledDotProductAttention(dropout_p=0.5)
    q = mg.randn(2, 4, 5)
    mg.manual_seed(7)
    first = attention(q, q, q).numpy()
    mg.manual_seed(7)
    np.testing.assert_array_equal(first, attention(q, q, q).numpy())


def test_multihead_attention_takes_pytorch_s_positional_order():
    torch = pytest.importorskip("torch")
    # (embed_dim, num_heads, dropout, bias, add_bias_kv, add_zero_attn, kdim, vdim, batch_first)
    args = (8, 2, 0.0, True, False, False, 4, 6, True)
    ours, theirs = nn.MultiheadAttention(*args), torch.nn.MultiheadAttention(*args)
    assert (ours.kdim, ours.vdim, ours.batch_first) == (theirs.kdim, theirs.vdim, True)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    with pytest.raises(NotImplementedError, match="MultiheadAttention: add_bias_kv=True"):
        nn.MultiheadAttention(8, 2, add_bias_kv=True)
    with pytest.raises(RuntimeError, match="MultiheadAttention"):
        nn.MultiheadAttention(8, 2, device="cuda")
