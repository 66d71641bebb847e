"""Class weights of ``nn.CrossEntropyLoss`` / ``F.cross_entropy`` and ``nn.NLLLoss`` /
``F.nll_loss``, as in PyTorch: "mean" divides by the sum of the weights of the targets
that are not ignored (the functional forms' values and gradients are rows of the op table,
tests/op_cases_activation_loss.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F

LOGITS = np.random.default_rng(5).standard_normal((6, 4)).astype(np.float32)
TARGETS = np.array([0, 3, -100, 1, 3, 2])
WEIGHTS = np.array([0.5, 2.0, 1.0, 3.0], dtype=np.float32)


def torch_or_skip():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.25])
def test_cross_entropy_loss_module_with_weight_matches_pytorch(reduction, label_smoothing):
    torch = torch_or_skip()
    ours = nn.CrossEntropyLoss(weight=mg.tensor(WEIGHTS), reduction=reduction,
                               label_smoothing=label_smoothing)
    theirs = torch.nn.CrossEntropyLoss(weight=torch.tensor(WEIGHTS), reduction=reduction,
                                       label_smoothing=label_smoothing)
    x, tx = mg.tensor(LOGITS, requires_grad=True), torch.tensor(LOGITS, requires_grad=True)
    loss, torch_loss = ours(x, mg.tensor(TARGETS)), theirs(tx, torch.tensor(TARGETS))
    np.testing.assert_allclose(loss.detach().numpy(), torch_loss.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    loss.sum().backward()
    torch_loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert loss.dtype == mg.float32


def test_mean_divides_by_the_kept_targets_weights():
    log_p = F.log_softmax(mg.tensor(LOGITS), 1).numpy()
    kept = TARGETS != -100
    rows, labels = np.arange(len(TARGETS))[kept], TARGETS[kept]
    expected = -np.sum(WEIGHTS[labels] * log_p[rows, labels]) / WEIGHTS[labels].sum()
    loss = F.cross_entropy(mg.tensor(LOGITS), TARGETS, weight=mg.tensor(WEIGHTS))
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-5)


def test_probability_targets_with_weight_match_pytorch():
    torch = torch_or_skip()
    probabilities = np.random.default_rng(1).dirichlet(np.ones(4), 6).astype(np.float32)
    x, tx = mg.tensor(LOGITS, requires_grad=True), torch.tensor(LOGITS, requires_grad=True)
    loss = nn.CrossEntropyLoss(mg.tensor(WEIGHTS), label_smoothing=0.1)(x, mg.tensor(probabilities))
    torch_loss = torch.nn.CrossEntropyLoss(torch.tensor(WEIGHTS), label_smoothing=0.1)(
        tx, torch.tensor(probabilities))
    loss.backward()
    torch_loss.backward()
    np.testing.assert_allclose(loss.item(), torch_loss.item(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", [TARGETS, np.random.default_rng(2).dirichlet(np.ones(4), 6)])
def test_weighted_cross_entropy_passes_float64_gradcheck(target):
    x = mg.tensor(LOGITS.astype(np.float64), requires_grad=True)
    weight = mg.tensor(WEIGHTS.astype(np.float64))
    assert mg.gradcheck(lambda x: F.cross_entropy(x, target, weight=weight,
                                                  label_smoothing=0.2), (x,))


def test_nll_loss_module_with_weight_matches_pytorch():
    torch = torch_or_skip()
    log_p = np.log(np.random.default_rng(4).dirichlet(np.ones(4), 6)).astype(np.float32)
    x, tx = mg.tensor(log_p, requires_grad=True), torch.tensor(log_p, requires_grad=True)
    loss = nn.NLLLoss(weight=mg.tensor(WEIGHTS))(x, mg.tensor(TARGETS))
    torch_loss = torch.nn.NLLLoss(weight=torch.tensor(WEIGHTS))(tx, torch.tensor(TARGETS))
    loss.backward()
    torch_loss.backward()
    np.testing.assert_allclose(loss.item(), torch_loss.item(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    x64 = mg.tensor(log_p.astype(np.float64), requires_grad=True)
    weight = mg.tensor(WEIGHTS.astype(np.float64))
    assert mg.gradcheck(lambda x: F.nll_loss(x, TARGETS, weight=weight), (x64,))


def test_weight_is_a_buffer_in_the_state_dict_as_in_pytorch():
    loss_fn = nn.CrossEntropyLoss(weight=mg.tensor(WEIGHTS))
    assert list(loss_fn.state_dict()) == ["weight"]
    assert "weight" not in dict(loss_fn.named_parameters())


def test_positional_arguments_follow_pytorchs_order():
    """(weight, size_average, ignore_index, reduce, reduction, label_smoothing)."""
    loss_fn = nn.CrossEntropyLoss(mg.tensor(WEIGHTS), None, 3, None, "sum", 0.1)
    assert (loss_fn.ignore_index, loss_fn.reduction, loss_fn.label_smoothing) == (3, "sum", 0.1)
    loss = F.cross_entropy(mg.tensor(LOGITS), TARGETS, None, None, -100, None, "sum")
    np.testing.assert_allclose(
        loss.item(), F.cross_entropy(mg.tensor(LOGITS), TARGETS, reduction="sum").item())


def test_legacy_size_average_and_reduce_map_as_in_pytorch():
    assert nn.CrossEntropyLoss(reduce=False).reduction == "none"
    assert nn.CrossEntropyLoss(size_average=False).reduction == "sum"
    assert nn.NLLLoss(size_average=True).reduction == "mean"


# --- mistakes: each names the layer (or op), the weight's shape and the input's ----------


def test_weight_of_the_wrong_length_names_layer_and_shapes():
    torch = torch_or_skip()
    with pytest.raises(RuntimeError, match="for all 4 classes"):
        torch.nn.CrossEntropyLoss(weight=torch.ones(3))(torch.tensor(LOGITS),
                                                        torch.tensor(TARGETS))
    with pytest.raises(RuntimeError, match=r"CrossEntropyLoss.*all 4 classes.*\(3,\).*\(6, 4\)"):
        nn.CrossEntropyLoss(weight=mg.ones(3))(mg.tensor(LOGITS), mg.tensor(TARGETS))
    with pytest.raises(RuntimeError, match=r"nll_loss.*\(5,\).*\(6, 4\)"):
        F.nll_loss(mg.tensor(LOGITS), TARGETS, weight=mg.ones(5))


def test_weight_of_another_dtype_names_both_dtypes():
    torch = torch_or_skip()
    with pytest.raises(RuntimeError):
        torch.nn.functional.cross_entropy(torch.tensor(LOGITS), torch.tensor(TARGETS),
                                          weight=torch.ones(4, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=r"NLLLoss.*float64.*float32.*weight.to\(float32\)"):
        nn.NLLLoss(weight=mg.tensor(np.ones(4)))(mg.tensor(LOGITS), mg.tensor(TARGETS))
    with pytest.raises(RuntimeError, match=r"cross_entropy.*int64.*floating point"):
        F.cross_entropy(mg.tensor(LOGITS), TARGETS, weight=mg.tensor([1, 2, 3, 4]))


def test_weight_that_is_not_a_tensor_says_to_wrap_it():
    with pytest.raises(TypeError, match=r"CrossEntropyLoss: weight must be a Tensor.*list"):
        nn.CrossEntropyLoss(weight=[1.0, 2.0, 1.0, 1.0])
    with pytest.raises(TypeError, match=r"cross_entropy: weight must be a Tensor"):
        F.cross_entropy(mg.tensor(LOGITS), TARGETS, weight=np.ones(4, dtype=np.float32))


def test_weight_that_requires_grad_is_refused_as_in_pytorch():
    torch = torch_or_skip()
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
        torch.nn.functional.cross_entropy(torch.tensor(LOGITS), torch.tensor(TARGETS),
                                          weight=torch.ones(4, requires_grad=True))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                                           "'weight'.*detach"):
        F.cross_entropy(mg.tensor(LOGITS), TARGETS, weight=mg.ones(4, requires_grad=True))
