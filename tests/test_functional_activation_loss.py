"""Activations and losses of minigrad.nn.functional: what the op table
(tests/op_cases_activation_loss.py) cannot express. Extreme logits, NaN where PyTorch
gives NaN, the clamps of binary_cross_entropy, every error a student may meet, the
accuracy of erf, and that none of them loops over elements in Python."""

from __future__ import annotations

import math
import gc
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.errors import ShapeError
from minigrad.ops.activation import _normal_cdf_chunks, erf, erfc

LOGITS = np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 999.0],
                   [-1000.0, -1000.0, -1000.0], [0.5, -0.25, 1000.0]])
TARGETS = np.array([0, 2, 1, 1])


def with_grad(array, dtype=np.float64):
    return mg.tensor(np.asarray(array, dtype=dtype), requires_grad=True)


def torch_with_grad(torch, array, dtype=np.float64):
    return torch.tensor(np.asarray(array, dtype=dtype), requires_grad=True)


def backward_both(output, torch_output, seed=0):
    """Backpropagate the same random upstream gradient through both results."""
    upstream = np.random.default_rng(seed).standard_normal(output.shape)
    output.backward(upstream.astype(output.dtype))
    torch_output.backward(torch_output.new_tensor(upstream))


def assert_same(ours, theirs, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


# --- stability at logits of +-1000 -----------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_and_log_softmax_are_exact_at_logits_of_1000(torch, name, dim, dtype):
    x, tx = with_grad(LOGITS, dtype), torch_with_grad(torch, LOGITS, dtype)
    output = getattr(F, name)(x, dim)
    torch_output = getattr(torch.nn.functional, name)(tx, dim)
    assert np.isfinite(output.numpy()).all()
    assert_same(output, torch_output)
    backward_both(output, torch_output)
    assert np.isfinite(x.grad.numpy()).all()
    assert_same(x.grad, tx.grad, atol=1e-5)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_is_finite_and_equal_to_pytorch_at_logits_of_1000(torch, label_smoothing,
                                                                       reduction):
    x, tx = with_grad(LOGITS), torch_with_grad(torch, LOGITS)
    loss = F.cross_entropy(x, TARGETS, label_smoothing=label_smoothing, reduction=reduction)
    torch_loss = torch.nn.functional.cross_entropy(
        tx, torch.as_tensor(TARGETS), label_smoothing=label_smoothing, reduction=reduction)
    assert np.isfinite(loss.numpy()).all()
    assert_same(loss, torch_loss)
    backward_both(loss, torch_loss)
    assert np.isfinite(x.grad.numpy()).all()
    assert_same(x.grad, tx.grad)


def test_cross_entropy_with_probability_targets_is_finite_at_logits_of_1000(torch):
    probabilities = np.full(LOGITS.shape, 1 / 3)
    x, tx = with_grad(LOGITS), torch_with_grad(torch, LOGITS)
    t, tt = with_grad(probabilities), torch_with_grad(torch, probabilities)
    loss = F.cross_entropy(x, t, label_smoothing=0.2)
    torch_loss = torch.nn.functional.cross_entropy(tx, tt, label_smoothing=0.2)
    assert np.isfinite(loss.item())
    assert_same(loss, torch_loss)
    backward_both(loss, torch_loss)
    assert_same(x.grad, tx.grad)
    assert_same(t.grad, tt.grad)


def test_binary_cross_entropy_with_logits_is_finite_at_logits_of_1000(torch):
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 30.0]], dtype=np.float32)
    labels = np.array([[1.0, 0.0, 1.0], [1.0, 0.0, 0.5]], dtype=np.float32)
    x, tx = with_grad(logits, np.float32), torch_with_grad(torch, logits, np.float32)
    y, ty = with_grad(labels, np.float32), torch_with_grad(torch, labels, np.float32)
    loss = F.binary_cross_entropy_with_logits(x, y, reduction="none")
    torch_loss = torch.nn.functional.binary_cross_entropy_with_logits(tx, ty, reduction="none")
    assert np.isfinite(loss.numpy()).all()
    assert_same(loss, torch_loss)
    backward_both(loss, torch_loss)
    assert_same(x.grad, tx.grad)
    assert_same(y.grad, ty.grad, rtol=1e-5)


# --- softmax ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_sums_to_one_along_dim(dim, dtype):
    x = mg.tensor(np.random.default_rng(0).normal(0, 5, (5, 7)).astype(dtype))
    total = F.softmax(x, dim).numpy().sum(axis=dim)
    assert F.softmax(x, dim).dtype == dtype
    np.testing.assert_allclose(total, 1.0, rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_log_softmax_is_log_of_softmax():
    x = mg.tensor(np.random.default_rng(1).standard_normal((3, 5)))
    np.testing.assert_allclose(F.log_softmax(x, 1).numpy(), np.log(F.softmax(x, 1).numpy()),
                               rtol=1e-14)


# --- cross entropy: ignore_index and label_smoothing -----------------------------------------


def test_cross_entropy_mean_over_only_ignored_targets_is_nan_with_zero_gradients(torch):
    logits = np.random.default_rng(2).standard_normal((3, 4))
    ignored = np.array([-100, -100, -100])
    x, tx = with_grad(logits), torch_with_grad(torch, logits)
    loss = F.cross_entropy(x, ignored)
    torch_loss = torch.nn.functional.cross_entropy(tx, torch.as_tensor(ignored))
    assert math.isnan(loss.item()) and math.isnan(torch_loss.item())
    loss.backward()
    torch_loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert not x.grad.numpy().any()


def test_cross_entropy_sum_over_only_ignored_targets_is_zero():
    x = with_grad(np.ones((2, 3)))
    assert F.cross_entropy(x, [-100, -100], reduction="sum").item() == 0.0


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 0])
def test_label_smoothing_with_ignore_index_matches_pytorch(torch, reduction, ignore_index):
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((2, 4, 3, 2))
    targets = rng.integers(0, 4, (2, 3, 2))
    targets[0, 1, 0] = targets[1, 2, 1] = ignore_index
    x, tx = with_grad(logits), torch_with_grad(torch, logits)
    loss = F.cross_entropy(x, targets, ignore_index=ignore_index, label_smoothing=0.3,
                           reduction=reduction)
    torch_loss = torch.nn.functional.cross_entropy(
        tx, torch.as_tensor(targets), ignore_index=ignore_index, label_smoothing=0.3,
        reduction=reduction)
    assert_same(loss, torch_loss, rtol=1e-12)
    backward_both(loss, torch_loss)
    assert_same(x.grad, tx.grad, rtol=1e-12, atol=1e-14)


def test_cross_entropy_accepts_a_tensor_target_and_keeps_float32(torch):
    logits = np.random.default_rng(4).standard_normal((4, 3)).astype(np.float32)
    loss = F.cross_entropy(mg.tensor(logits), mg.tensor(TARGETS))
    assert loss.dtype == np.float32 and loss.shape == ()
    expected = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.as_tensor(TARGETS))
    assert_same(loss, expected)


def test_cross_entropy_is_deferred_in_lazy_mode():
    x = with_grad(np.random.default_rng(5).standard_normal((4, 3)))
    with mg.lazy():
        loss = F.cross_entropy(x * 2, TARGETS, reduction="none")
    assert not loss.is_realized and loss.shape == (4,) and loss.dtype == np.float64
    eager = F.cross_entropy(x * 2, TARGETS, reduction="none")
    np.testing.assert_array_equal(loss.numpy(), eager.numpy())


# --- binary cross entropy at 0 and 1 ---------------------------------------------------------

PROBABILITIES = np.array([0.0, 1.0, 0.0, 1.0, 0.5], dtype=np.float32)
LABELS = np.array([0.0, 1.0, 1.0, 0.0, 1.0], dtype=np.float32)


def test_binary_cross_entropy_at_0_and_1_clamps_the_logs_at_minus_100_like_pytorch(torch):
    p, tp = with_grad(PROBABILITIES, np.float32), torch_with_grad(torch, PROBABILITIES,
                                                                    np.float32)
    loss = F.binary_cross_entropy(p, LABELS, reduction="none")
    torch_loss = torch.nn.functional.binary_cross_entropy(tp, torch.tensor(LABELS),
                                                          reduction="none")
    np.testing.assert_allclose(loss.numpy(), [0, 0, 100, 100, math.log(2)], rtol=1e-6)
    assert_same(loss, torch_loss)
    backward_both(loss, torch_loss)
    assert np.isfinite(p.grad.numpy()).all()  # (p - y) / max(p (1 - p), 1e-12)
    assert_same(p.grad, tp.grad, rtol=1e-6)


def test_binary_cross_entropy_target_gradient_uses_the_clamped_logs(torch):
    # PyTorch differentiates the unclamped logit here (-inf, inf at p = 0, 1); minigrad
    # differentiates the loss it computed, whose logs are clamped at -100
    p = with_grad(PROBABILITIES, np.float32)
    y, ty = with_grad(LABELS, np.float32), torch_with_grad(torch, LABELS, np.float32)
    F.binary_cross_entropy(p, y, reduction="sum").backward()
    torch.nn.functional.binary_cross_entropy(torch.tensor(PROBABILITIES), ty,
                                             reduction="sum").backward()
    np.testing.assert_allclose(y.grad.numpy(), [100, -100, 100, -100, 0], atol=1e-6)
    assert np.isinf(ty.grad.numpy()[:4]).all()


# --- errors: which function, which shapes and dtypes, what to try ----------------------------


def logits(*shape, dtype=np.float32):
    return mg.tensor(np.zeros(shape, dtype=dtype))


@pytest.mark.parametrize("call, kind, match", [
    (lambda: F.cross_entropy(logits(4, 3), np.zeros(4, np.float32)), ShapeError,
     r"cross_entropy: target has dtype float32 and shape \(4,\); class-index targets must be "
     r"integers \(use \.long\(\)\), probability targets must have the input's shape \(4, 3\)"),
    (lambda: F.cross_entropy(logits(4, 3), mg.tensor([0.0, 1.0, 2.0, 1.0])), ShapeError,
     r"dtype float32 and shape \(4,\).*\.long\(\)"),
    (lambda: F.cross_entropy(logits(4, 3), [0, 3, 1, 2]), IndexError,
     r"cross_entropy: target holds class index 3.*\(4, 3\) has C = 3 classes.*0 to 2"),
    (lambda: F.cross_entropy(logits(4, 3), [0, -1, 1, 2]), IndexError,
     r"class index -1.*C = 3.*ignore_index=-100"),
    (lambda: F.cross_entropy(logits(4, 3), [0, 1, 2], ignore_index=2), ShapeError,
     r"target of shape \(3,\) does not fit input of shape \(4, 3\).*need shape \(4,\)"),
    (lambda: F.cross_entropy(logits(4, 3), np.zeros(5, np.int64)), ShapeError,
     r"target of shape \(5,\) does not fit input of shape \(4, 3\).*\(4,\).*same batch"),
    (lambda: F.cross_entropy(logits(2, 3, 5), np.zeros((2, 3), np.int64)), ShapeError,
     r"target of shape \(2, 3\).*input of shape \(2, 3, 5\).*need shape \(2, 5\).*class dim 1"),
    (lambda: F.cross_entropy(logits(4, 3, dtype=np.int64), [0, 1, 2, 0]), TypeError,
     r"cross_entropy: input \(the logits\) has dtype int64 \(shape \(4, 3\)\).*\.float\(\)"),
    (lambda: F.cross_entropy(logits(4, 3, dtype=np.bool_), [0, 1, 2, 0]), TypeError,
     r"has dtype bool \(shape \(4, 3\)\).*floating point"),
    (lambda: F.cross_entropy(logits(4, 3), np.array([True, False, True, True])), TypeError,
     r"target has dtype bool \(shape \(4,\)\); class indices must be integers"),
    (lambda: F.cross_entropy(logits(), 0), ShapeError, r"class dim.*0-d"),
    (lambda: F.cross_entropy(logits(4, 3), [0, 1, 2, 0], label_smoothing=1.5), ValueError,
     r"label_smoothing must be in \[0, 1\], got 1.5"),
    (lambda: F.cross_entropy(logits(4, 3), [0, 1, 2, 0], reduction="avg"), ValueError,
     r"reduction must be one of"),
    (lambda: F.binary_cross_entropy(logits(4, 1) + 0.5, np.zeros(4)), ShapeError,
     r"binary_cross_entropy: target shape \(4,\) differs from input shape \(4, 1\).*reshape"),
    (lambda: F.binary_cross_entropy_with_logits(logits(4), mg.zeros(2, 2)), ShapeError,
     r"binary_cross_entropy_with_logits: target shape \(2, 2\) differs from input shape \(4,\)"),
    (lambda: F.binary_cross_entropy_with_logits(logits(4), mg.tensor(np.zeros(4, np.int64))),
     TypeError, r"target has dtype int64 \(shape \(4,\)\).*\.float\(\)"),
    (lambda: F.binary_cross_entropy_with_logits(logits(4, dtype=np.int32), np.zeros(4)),
     TypeError, r"binary_cross_entropy_with_logits: input has dtype int32"),
    (lambda: F.binary_cross_entropy(mg.tensor([0.5, 1.5, -0.5]), [1.0, 0.0, 1.0]), ValueError,
     r"binary_cross_entropy: the input must hold probabilities in \[0, 1\], but it holds 1.5 "
     r"\(input shape \(3,\)\); apply sigmoid first.*with_logits"),
    (lambda: F.binary_cross_entropy(mg.tensor([0.5, float("nan")]), [1.0, 0.0]), ValueError,
     r"holds nan"),
    (lambda: F.binary_cross_entropy(mg.tensor([0.5, 0.5]), [1.0, 2.0]), ValueError,
     r"the target must hold probabilities in \[0, 1\], but it holds 2.0"),
    (lambda: F.softmax(mg.tensor(np.arange(3)), 0), TypeError,
     r"softmax: input has dtype int64 \(shape \(3,\)\).*\.float\(\)"),
    (lambda: F.log_softmax(logits(2, 3), 2), IndexError, r"log_softmax: dim 2 is out of range"),
    (lambda: F.gelu(logits(3), approximate="erf"), ValueError,
     r"approximate must be 'none' or 'tanh'"),
], ids=["cross_entropy_float_target_of_another_shape", "cross_entropy_float_tensor_target",
        "cross_entropy_index_too_large", "cross_entropy_negative_index",
        "cross_entropy_batch_too_small", "cross_entropy_batch_too_large",
        "cross_entropy_spatial_shape", "cross_entropy_int_logits", "cross_entropy_bool_logits",
        "cross_entropy_bool_target", "cross_entropy_0d_logits", "cross_entropy_label_smoothing",
        "cross_entropy_reduction", "bce_target_shape", "bce_with_logits_target_shape",
        "bce_with_logits_int_target", "bce_with_logits_int_input", "bce_input_range",
        "bce_input_nan", "bce_target_range", "softmax_int_input", "log_softmax_dim",
        "gelu_approximate"])
def test_errors_name_the_function_the_shapes_and_what_to_try(call, kind, match):
    with pytest.raises(kind, match=match) as caught:
        call()
    assert getattr(caught.value, "minigrad", False)


def test_binary_cross_entropy_checks_its_input_range_when_lazy_mode_computes_it():
    with mg.lazy():
        loss = F.binary_cross_entropy(mg.tensor([0.5, 2.0]) * 1, [1.0, 0.0])
    with pytest.raises(ValueError, match=r"must hold probabilities in \[0, 1\].*2.0"):
        loss.realize()


# --- erf, GELU -------------------------------------------------------------------------------


def test_erf_is_accurate_to_float64_precision():
    x = np.linspace(-7, 7, 140_001)
    expected = np.array([math.erf(v) for v in x])
    assert np.max(np.abs(erf(x) - expected)) < 5e-16


def test_erfc_has_a_small_relative_error_also_in_its_tail():
    x = np.linspace(-6, 26, 160_001)
    expected = np.array([math.erfc(v) for v in x])
    assert np.max(np.abs(erfc(x) - expected) / expected) < 5e-15


def test_erf_and_erfc_at_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, 30.0, -30.0])
    np.testing.assert_array_equal(erf(x), [0, -0.0, 1, -1, 1, -1])
    np.testing.assert_array_equal(erfc(x), [1, 1, 0, 2, 0, 2])
    assert np.isnan(erf(np.array([np.nan]))).all() and np.isnan(erfc(np.array([np.nan]))).all()


def test_the_float32_normal_cdf_is_within_float32_resolution_everywhere():
    # several chunks (the pass works chunk by chunk), odd length, both tails, x = 0
    x = np.linspace(-12, 12, 300_001)
    cdf = np.empty(x.shape, dtype=np.float32)
    for _ in _normal_cdf_chunks(x.astype(np.float32), cdf):  # (GELU's pass, Phi alone)
        pass
    x32 = x.astype(np.float32).astype(np.float64)  # what the float32 pass was given
    expected = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x32])
    assert cdf.dtype == np.float32 and cdf.shape == x.shape
    assert np.max(np.abs(cdf - expected)) < 4e-7  # A&S's 1.5e-7 plus float32 rounding


def test_gelu_in_float32_matches_pytorch_within_float32_rounding(torch):
    grid = np.linspace(-12, 12, 201_000).reshape(1000, 201)
    x, tx = with_grad(grid, np.float32), torch_with_grad(torch, grid, np.float32)
    output = F.gelu(x)
    torch_output = torch.nn.functional.gelu(tx)
    assert output.dtype == np.float32
    assert_same(output, torch_output, rtol=2e-6, atol=2e-6)
    backward_both(output, torch_output)
    assert_same(x.grad, tx.grad, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_pytorch_in_float64_across_a_wide_range(torch, approximate):
    grid = np.linspace(-40, 40, 8001)
    x, tx = with_grad(grid), torch_with_grad(torch, grid)
    output = F.gelu(x, approximate)
    torch_output = torch.nn.functional.gelu(tx, approximate=approximate)
    assert_same(output, torch_output, rtol=1e-13, atol=1e-15)
    backward_both(output, torch_output)
    assert_same(x.grad, tx.grad, rtol=1e-12, atol=1e-14)


# --- mse_loss and hinge_loss -----------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_pytorch(torch, reduction):
    rng = np.random.default_rng(6)
    prediction, target = rng.standard_normal((2, 3, 4))
    x, tx = with_grad(prediction), torch_with_grad(torch, prediction)
    loss = F.mse_loss(x, mg.tensor(target), reduction=reduction)
    torch_loss = torch.nn.functional.mse_loss(tx, torch.tensor(target), reduction=reduction)
    assert_same(loss, torch_loss, rtol=1e-12)
    backward_both(loss, torch_loss)
    assert_same(x.grad, tx.grad, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_hinge_loss_is_the_max_margin_formula(reduction):
    scores = np.array([2.0, 0.5, -0.3, -2.0, 1.0])
    labels = np.array([1.0, 1.0, -1.0, 1.0, -1.0])
    per_sample = np.maximum(0, 0.8 - labels * scores)
    expected = {"mean": per_sample.mean(), "sum": per_sample.sum(), "none": per_sample}
    loss = F.hinge_loss(mg.tensor(scores), labels, margin=0.8, reduction=reduction)
    np.testing.assert_allclose(loss.numpy(), expected[reduction], rtol=1e-12)


# --- no Python loop over elements ------------------------------------------------------------


def python_calls(fn) -> int:
    """How many Python-level function calls ``fn()`` makes."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event in ("call", "c_call")

    gc.collect()
    gc.disable()  # a collection could run finalizers of other tests' objects in between
    sys.setprofile(count)
    try:
        fn()
    finally:
        sys.setprofile(None)
        gc.enable()
    return calls


def forward_and_backward(loss_of):
    def run(n):
        x = with_grad(np.random.default_rng(n).normal(0, 3, (n, 5)))
        loss_of(x, n).sum().backward()
    return run


@pytest.mark.parametrize("name, loss_of", [
    ("gelu", lambda x, n: F.gelu(x)),
    ("gelu_tanh", lambda x, n: F.gelu(x, "tanh")),
    ("softmax", lambda x, n: F.softmax(x, 1)),
    ("log_softmax", lambda x, n: F.log_softmax(x, 0)),
    ("cross_entropy", lambda x, n: F.cross_entropy(x, np.arange(n) % 5, label_smoothing=0.1)),
    ("cross_entropy_probabilities", lambda x, n: F.cross_entropy(x, F.softmax(x * 2, 1))),
    ("bce_with_logits", lambda x, n: F.binary_cross_entropy_with_logits(x, (x > 0).float())),
    ("bce", lambda x, n: F.binary_cross_entropy(x.sigmoid(), (x > 0).float())),
])
def test_no_python_work_per_element(name, loss_of):
    run = forward_and_backward(loss_of)
    run(1000)  # warm up: first calls may import or cache
    # 5,000 and 50,000 elements: both past the size from which backward reuses big arrays
    # (one more check), both within one chunk of GELU's float32 pass (65,536 elements)
    assert python_calls(lambda: run(1000)) == python_calls(lambda: run(10_000)), name
