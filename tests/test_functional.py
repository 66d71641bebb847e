"""The composed functions of nn.functional (those without a Function of their own)
against torch.nn.functional, and their argument checks. The single-Function ones are rows
of the op tables (tests/op_cases_*.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal((5, 3))
B = RNG.standard_normal(5)


def both(torch, *arrays):
    return ([mg.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def assert_same_values_and_gradients(ours_out, theirs_out, ours_in, theirs_in):
    np.testing.assert_allclose(ours_out.numpy(), theirs_out.detach().numpy(), rtol=1e-12)
    upstream = np.random.default_rng(1).standard_normal(tuple(theirs_out.shape))
    ours_out.backward(upstream)
    theirs_out.backward(theirs_out.new_tensor(upstream))
    for a, b in zip(ours_in, theirs_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_linear_matches_pytorch(torch):
    ours, theirs = both(torch, X, W, B)
    assert_same_values_and_gradients(F.linear(*ours), torch.nn.functional.linear(*theirs),
                                     ours, theirs)


def test_linear_names_both_shapes_when_they_do_not_fit():
    with pytest.raises(mg.ShapeError, match=r"linear: input of shape \(4, 3\) does not fit "
                                            r"weight of shape \(5, 4\)"):
        F.linear(mg.tensor(X), mg.zeros(5, 4))


def test_embedding_matches_pytorch(torch):
    indices = np.array([[0, 4, 4], [2, 1, 0]])
    (ours,), (theirs,) = both(torch, W)
    assert_same_values_and_gradients(F.embedding(mg.tensor(indices, dtype="int64"), ours),
                                     torch.nn.functional.embedding(torch.tensor(indices), theirs),
                                     [ours], [theirs])


def test_embedding_rejects_float_and_out_of_range_indices():
    with pytest.raises(TypeError, match="embedding: indices must be integers, got float64"):
        F.embedding(np.array([0.0]), mg.tensor(W))
    with pytest.raises(IndexError, match="embedding: index 5 is out of range for an embedding "
                                         "with 5 rows"):
        F.embedding(np.array([5]), mg.tensor(W))


@pytest.mark.parametrize("padding", [(1, 2), (1, 0, 2, 1)])
def test_pad_matches_pytorch(torch, padding):
    (ours,), (theirs,) = both(torch, X)
    assert_same_values_and_gradients(F.pad(ours, padding, value=0.5),
                                     torch.nn.functional.pad(theirs, padding, value=0.5),
                                     [ours], [theirs])


def test_unfold_gives_the_strided_windows():
    x = mg.arange(6.0)
    np.testing.assert_array_equal(F.unfold(x, 0, 3, 2).numpy(), [[0, 1, 2], [2, 3, 4]])


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_pytorch_and_updates_running_statistics(torch, training):
    x = RNG.standard_normal((6, 3, 2))
    mean, var = RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    ours_stats, theirs_stats = [mg.tensor(mean), mg.tensor(var)], [torch.tensor(mean),
                                                                   torch.tensor(var)]
    ours, theirs = both(torch, x, RNG.standard_normal(3), RNG.standard_normal(3))
    assert_same_values_and_gradients(
        F.batch_norm(ours[0], *ours_stats, ours[1], ours[2], training, 0.2),
        torch.nn.functional.batch_norm(theirs[0], *theirs_stats, theirs[1], theirs[2],
                                       training, 0.2), ours, theirs)
    for a, b in zip(ours_stats, theirs_stats):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_batch_norm_in_training_needs_more_than_one_value_per_channel():
    with pytest.raises(ValueError, match="expected more than 1 value per channel"):
        F.batch_norm(mg.randn(1, 3), None, None, training=True)


def test_dropout_checks_p_and_is_the_identity_when_not_training():
    x = mg.randn(3)
    assert F.dropout(x, 0.5, training=False) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), 0.0)
    with pytest.raises(ValueError, match="dropout: p must be between 0 and 1, got -0.1"):
        F.dropout(x, -0.1)


def test_dropout_keeps_float32():
    assert F.dropout(mg.randn(10), 0.5).dtype == np.float32


def test_a_bad_reduction_is_named():
    with pytest.raises(ValueError, match=r"mse_loss: reduction must be one of \('mean', "
                                         r"'sum', 'none'\), got 'avg'"):
        F.mse_loss(mg.randn(2), mg.randn(2), reduction="avg")


# --- attention edge cases -------------------------------------------------------------------


def test_attention_to_nothing_gives_zeros_like_pytorch_and_finite_gradients(torch):
    q, k, v = (RNG.standard_normal((2, 3, 4)) for _ in range(3))
    mask = np.array([[True, True, False], [False, False, False], [True, False, True]])
    ours, theirs = both(torch, q, k, v)
    out = F.scaled_dot_product_attention(*ours, attn_mask=mask)
    expected = torch.nn.functional.scaled_dot_product_attention(*theirs,
                                                                attn_mask=torch.tensor(mask))
    np.testing.assert_array_equal(out.numpy()[:, 1], 0.0)
    assert_same_values_and_gradients(out, expected, ours, theirs)


def test_a_float_attention_mask_tensor_gets_a_gradient(torch):
    q, k, v, bias = (RNG.standard_normal((3, 4)) for _ in range(4))
    bias = bias[:, :3]
    ours, theirs = both(torch, q, k, v, bias)
    out = F.scaled_dot_product_attention(*ours[:3], attn_mask=ours[3])
    expected = torch.nn.functional.scaled_dot_product_attention(*theirs[:3], attn_mask=theirs[3])
    assert_same_values_and_gradients(out, expected, ours, theirs)


def test_an_attention_mask_that_does_not_fit_names_l_and_s():
    q = mg.randn(2, 3, 4)
    with pytest.raises(mg.ShapeError, match=r"attn_mask of shape \(4, 3\) does not broadcast "
                                            r"to the scores' shape \(2, 3, 3\) \(\.\.\., L=3, "
                                            r"S=3\)"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((4, 3), dtype=bool))
