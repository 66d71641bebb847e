"""Op cases for minigrad/ops/activation.py and minigrad/ops/loss.py: softmax, log_softmax,
GELU, cross entropy and the binary cross entropies, each called through
``minigrad.nn.functional`` as a user would (and through ``torch.nn.functional`` on the
PyTorch side).

The references are NumPy float64 code written from the definitions, position by
position where that reads more plainly than the vectorised form in minigrad/ops/.
Class-index targets are constants (integers are never differentiated); probability
targets are inputs, so their gradients are checked too.
"""

from __future__ import annotations

import math

import numpy as np
from op_cases import OpCase, as_torch, positive, real, sigmoid_reference, torch

import minigrad as mg
import minigrad.nn.functional as F

TF = torch.nn.functional if torch is not None else None

# --- constants: class indices and 0/1 labels -------------------------------------------------

TARGETS = np.array([0, 2, 1, 2])  # for logits (4, 3)
CLASS_WEIGHTS = np.array([0.5, 2.0, 1.25])  # one per class of those logits
TARGETS_IGNORED = np.array([0, -100, 1, 2])  # one position left out (PyTorch's default)
TARGETS_SPATIAL = np.array([[1, 0, 2, 2], [0, 0, 1, 2]])  # for logits (2, 3, 4)
TARGETS_IMAGE = np.array([[[0, 2], [1, -100]], [[2, 2], [-100, 1]]])  # for (2, 3, 2, 2)
PROBABILITIES = np.array([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0], [0.1, 0.1, 0.8],
                          [0.25, 0.25, 0.5]])  # a constant probability target for (4, 3)
LABELS = np.array([[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


# --- NumPy references ------------------------------------------------------------------------


def softmax_reference(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax_reference(x, axis):
    return np.log(softmax_reference(x, axis))


_erf = np.vectorize(math.erf)


def gelu_reference(x):
    return x * 0.5 * (1 + _erf(x / math.sqrt(2)))


def gelu_tanh_reference(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def reduce_reference(losses, reduction, count=None):
    if reduction == "none":
        return losses
    total = np.sum(losses)
    return total if reduction == "sum" else total / (losses.size if count is None else count)


def cross_entropy_reference(x, target, ignore_index=-100, label_smoothing=0.0,
                            reduction="mean", weight=None):
    """The definition, one position (one row of logits) at a time. Class weights w: a
    class-index loss is -(1 - eps) w[y] log p[y] - eps/C sum_c w_c log p_c, and "mean"
    divides by the sum of w[y] over the targets kept (PyTorch's definition)."""
    class_dim = 1 if x.ndim > 1 else 0
    rows = np.moveaxis(x, class_dim, -1)  # the classes last
    positions, classes = rows.shape[:-1], rows.shape[-1]
    log_p = [np.log(softmax_reference(row, 0)) for row in rows.reshape(-1, classes)]
    eps = label_smoothing
    w = np.ones(classes) if weight is None else np.asarray(weight, dtype=np.float64)
    if target.dtype.kind == "f":  # probabilities, mixed with the uniform distribution
        probabilities = np.moveaxis(target, class_dim, -1).reshape(-1, classes)
        losses = [-np.sum(w * (t * (1 - eps) + eps / classes) * lp)
                  for t, lp in zip(probabilities, log_p)]
        count = len(losses)
    else:
        labels = np.asarray(target).reshape(-1)
        losses = [0.0 if y == ignore_index else
                  -(1 - eps) * w[y] * lp[y] - eps / classes * np.sum(w * lp)
                  for y, lp in zip(labels, log_p)]
        count = sum(w[y] for y in labels if y != ignore_index)
    return reduce_reference(np.array(losses).reshape(positions), reduction, count)


def binary_cross_entropy_reference(p, y, reduction="mean", weight=None):
    losses = -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log(1 - p), -100))
    return reduce_reference(losses * (1.0 if weight is None else weight), reduction)


def binary_cross_entropy_with_logits_reference(x, y, reduction="mean", weight=None,
                                               pos_weight=None):
    p = sigmoid_reference(x)
    positive_weight = 1.0 if pos_weight is None else pos_weight
    losses = -(positive_weight * y * np.log(p) + (1 - y) * np.log(1 - p))
    return reduce_reference(losses * (1.0 if weight is None else weight), reduction)


POS_WEIGHT = np.array([0.5, 2.0, 4.0, 1.0])  # one per class (the last dim)
BCE_WEIGHT = np.array([[1.5], [0.5], [2.0]])  # one per row, broadcast


# --- the table -------------------------------------------------------------------------------


def weighted_case(id, target, inputs, **kwargs) -> OpCase:
    """cross_entropy(x, target, weight=CLASS_WEIGHTS in x's dtype, **kwargs) on minigrad,
    PyTorch and the reference."""
    return OpCase(
        id, lambda x: F.cross_entropy(x, target, weight=mg.tensor(CLASS_WEIGHTS, dtype=x.dtype),
                                      **kwargs),
        lambda x: cross_entropy_reference(x, target, weight=CLASS_WEIGHTS, **kwargs), inputs,
        torch_fn=lambda x: TF.cross_entropy(
            x, as_torch(target), weight=torch.tensor(CLASS_WEIGHTS, dtype=x.dtype), **kwargs))

CASES: list[OpCase] = [
    # --- softmax and log_softmax ---
    OpCase("softmax_dim_0", lambda x: F.softmax(x, 0), lambda x: softmax_reference(x, 0),
           (real(3, 4),), torch_fn=lambda x: TF.softmax(x, 0)),
    OpCase("softmax_dim_1", lambda x: F.softmax(x, dim=1), lambda x: softmax_reference(x, 1),
           (real(3, 4),), torch_fn=lambda x: TF.softmax(x, dim=1)),
    OpCase("softmax_dim_negative_3d", lambda x: F.softmax(x, -1),
           lambda x: softmax_reference(x, -1), (real(2, 3, 4),),
           torch_fn=lambda x: TF.softmax(x, -1)),
    OpCase("softmax_middle_dim_3d", lambda x: F.softmax(x, 1),
           lambda x: softmax_reference(x, 1), (real(2, 3, 4),),
           torch_fn=lambda x: TF.softmax(x, 1)),
    OpCase("softmax_1d", lambda x: F.softmax(x * 3, 0), lambda x: softmax_reference(x * 3, 0),
           (real(5),), torch_fn=lambda x: TF.softmax(x * 3, 0)),
    OpCase("softmax_0d", lambda x: F.softmax(x, 0) * x, lambda x: x, (real(),),
           torch_fn=lambda x: TF.softmax(x, 0) * x),
    OpCase("log_softmax_dim_0", lambda x: F.log_softmax(x, 0),
           lambda x: log_softmax_reference(x, 0), (real(3, 4),),
           torch_fn=lambda x: TF.log_softmax(x, 0)),
    OpCase("log_softmax_dim_1", lambda x: F.log_softmax(x, dim=1),
           lambda x: log_softmax_reference(x, 1), (real(3, 4),),
           torch_fn=lambda x: TF.log_softmax(x, dim=1)),
    OpCase("log_softmax_dim_negative_3d", lambda x: F.log_softmax(x, -1),
           lambda x: log_softmax_reference(x, -1), (real(2, 3, 4),),
           torch_fn=lambda x: TF.log_softmax(x, -1)),
    OpCase("log_softmax_first_dim_3d", lambda x: F.log_softmax(x * 4, 0),
           lambda x: log_softmax_reference(x * 4, 0), (real(2, 3, 4),),
           torch_fn=lambda x: TF.log_softmax(x * 4, 0)),

    # --- GELU ---
    OpCase("gelu", lambda x: F.gelu(x), gelu_reference, (real(3, 4),),
           torch_fn=lambda x: TF.gelu(x)),
    OpCase("gelu_wide_range", lambda x: F.gelu(x * 4, approximate="none"),
           lambda x: gelu_reference(x * 4), (real(2, 3, 4),),
           torch_fn=lambda x: TF.gelu(x * 4, approximate="none")),
    OpCase("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), gelu_tanh_reference,
           (real(3, 4),), torch_fn=lambda x: TF.gelu(x, approximate="tanh")),
    OpCase("gelu_tanh_wide_range", lambda x: F.gelu(x * 4, "tanh"),
           lambda x: gelu_tanh_reference(x * 4), (real(2, 3, 4),),
           torch_fn=lambda x: TF.gelu(x * 4, approximate="tanh")),

    # --- cross entropy with class indices ---
    OpCase("cross_entropy", lambda x: F.cross_entropy(x, TARGETS),
           lambda x: cross_entropy_reference(x, TARGETS), (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS))),
    OpCase("cross_entropy_tensor_target", lambda x: F.cross_entropy(x, mg.tensor(TARGETS)),
           lambda x: cross_entropy_reference(x, TARGETS), (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS))),
    OpCase("cross_entropy_list_target", lambda x: F.cross_entropy(x * 3, [0, 2, 1, 2]),
           lambda x: cross_entropy_reference(x * 3, TARGETS), (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x * 3, as_torch([0, 2, 1, 2]))),
    OpCase("cross_entropy_ignore_index", lambda x: F.cross_entropy(x, TARGETS_IGNORED),
           lambda x: cross_entropy_reference(x, TARGETS_IGNORED), (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS_IGNORED))),
    OpCase("cross_entropy_ignore_a_real_class",
           lambda x: F.cross_entropy(x, TARGETS, ignore_index=2),
           lambda x: cross_entropy_reference(x, TARGETS, ignore_index=2), (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS), ignore_index=2)),
    OpCase("cross_entropy_label_smoothing",
           lambda x: F.cross_entropy(x, TARGETS, label_smoothing=0.2),
           lambda x: cross_entropy_reference(x, TARGETS, label_smoothing=0.2), (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS), label_smoothing=0.2)),
    OpCase("cross_entropy_label_smoothing_ignore_index",
           lambda x: F.cross_entropy(x, TARGETS_IGNORED, label_smoothing=0.1),
           lambda x: cross_entropy_reference(x, TARGETS_IGNORED, label_smoothing=0.1),
           (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS_IGNORED),
                                               label_smoothing=0.1)),
    OpCase("cross_entropy_sum", lambda x: F.cross_entropy(x, TARGETS_IGNORED, reduction="sum"),
           lambda x: cross_entropy_reference(x, TARGETS_IGNORED, reduction="sum"),
           (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS_IGNORED), reduction="sum")),
    OpCase("cross_entropy_none",
           lambda x: F.cross_entropy(x, TARGETS_IGNORED, label_smoothing=0.3, reduction="none"),
           lambda x: cross_entropy_reference(x, TARGETS_IGNORED, label_smoothing=0.3,
                                             reduction="none"),
           (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS_IGNORED),
                                               label_smoothing=0.3, reduction="none")),
    OpCase("cross_entropy_1d_input", lambda x: F.cross_entropy(x, 3),
           lambda x: cross_entropy_reference(x, np.array(3)), (real(5),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(3))),
    OpCase("cross_entropy_1d_input_none",
           lambda x: F.cross_entropy(x, mg.tensor(1).long(), label_smoothing=0.2, reduction="none"),
           lambda x: cross_entropy_reference(x, np.array(1), label_smoothing=0.2,
                                             reduction="none"),
           (real(5),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(1), label_smoothing=0.2,
                                               reduction="none")),
    # class weights: "mean" divides by the sum of the kept targets' weights
    weighted_case("cross_entropy_weight", TARGETS, (real(4, 3),)),
    weighted_case("cross_entropy_weight_ignore_index", TARGETS_IGNORED, (real(4, 3),)),
    weighted_case("cross_entropy_weight_label_smoothing", TARGETS_IGNORED, (real(4, 3),),
                  label_smoothing=0.2),
    weighted_case("cross_entropy_weight_sum", TARGETS_IGNORED, (real(4, 3),),
                  label_smoothing=0.1, reduction="sum"),
    weighted_case("cross_entropy_weight_none", TARGETS_IGNORED, (real(4, 3),),
                  label_smoothing=0.3, reduction="none"),
    weighted_case("cross_entropy_weight_spatial", TARGETS_SPATIAL, (real(2, 3, 4),)),
    weighted_case("cross_entropy_weight_image_smoothing", TARGETS_IMAGE, (real(2, 3, 2, 2),),
                  label_smoothing=0.1),
    weighted_case("cross_entropy_weight_probabilities", PROBABILITIES, (real(4, 3),)),
    weighted_case("cross_entropy_weight_probabilities_smoothing", PROBABILITIES,
                  (real(4, 3),), label_smoothing=0.2, reduction="none"),
    weighted_case("cross_entropy_weight_1d_input", np.array(2), (real(3),),
                  label_smoothing=0.1),
    OpCase("nll_loss_weight_ignore_index",
           lambda x: F.nll_loss(x, TARGETS_IGNORED, weight=mg.tensor(CLASS_WEIGHTS, dtype=x.dtype)),
           lambda x: reduce_reference(
               np.array([0.0 if y == -100 else -CLASS_WEIGHTS[y] * x[i, y]
                         for i, y in enumerate(TARGETS_IGNORED)]), "mean",
               sum(CLASS_WEIGHTS[y] for y in TARGETS_IGNORED if y != -100)),
           (real(4, 3),),
           torch_fn=lambda x: TF.nll_loss(x, as_torch(TARGETS_IGNORED),
                                          weight=torch.tensor(CLASS_WEIGHTS, dtype=x.dtype))),
    OpCase("cross_entropy_spatial", lambda x: F.cross_entropy(x, TARGETS_SPATIAL),
           lambda x: cross_entropy_reference(x, TARGETS_SPATIAL), (real(2, 3, 4),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS_SPATIAL))),
    OpCase("cross_entropy_spatial_none",
           lambda x: F.cross_entropy(x, TARGETS_SPATIAL, reduction="none"),
           lambda x: cross_entropy_reference(x, TARGETS_SPATIAL, reduction="none"),
           (real(2, 3, 4),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS_SPATIAL), reduction="none")),
    OpCase("cross_entropy_image_ignore_smoothing",
           lambda x: F.cross_entropy(x, TARGETS_IMAGE, label_smoothing=0.1),
           lambda x: cross_entropy_reference(x, TARGETS_IMAGE, label_smoothing=0.1),
           (real(2, 3, 2, 2),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(TARGETS_IMAGE),
                                               label_smoothing=0.1)),

    # --- cross entropy with class probabilities (the target's gradient is checked too) ---
    OpCase("cross_entropy_probabilities", lambda x, t: F.cross_entropy(x, F.softmax(t, 1)),
           lambda x, t: cross_entropy_reference(x, softmax_reference(t, 1)),
           (real(4, 3), real(4, 3)),
           torch_fn=lambda x, t: TF.cross_entropy(x, TF.softmax(t, 1))),
    OpCase("cross_entropy_unnormalised_probabilities_sum",
           lambda x, t: F.cross_entropy(x, t, reduction="sum"),
           lambda x, t: cross_entropy_reference(x, t, reduction="sum"),
           (real(4, 3), positive(4, 3)),
           torch_fn=lambda x, t: TF.cross_entropy(x, t, reduction="sum")),
    OpCase("cross_entropy_probabilities_smoothing_none",
           lambda x, t: F.cross_entropy(x, t, label_smoothing=0.2, reduction="none"),
           lambda x, t: cross_entropy_reference(x, t, label_smoothing=0.2, reduction="none"),
           (real(2, 3, 4), positive(2, 3, 4)),
           torch_fn=lambda x, t: TF.cross_entropy(x, t, label_smoothing=0.2, reduction="none")),
    OpCase("cross_entropy_probabilities_1d", lambda x, t: F.cross_entropy(x, t / 4),
           lambda x, t: cross_entropy_reference(x, t / 4), (real(5), positive(5)),
           torch_fn=lambda x, t: TF.cross_entropy(x, t / 4)),
    OpCase("cross_entropy_constant_probabilities",
           lambda x: F.cross_entropy(x, PROBABILITIES, label_smoothing=0.1),
           lambda x: cross_entropy_reference(x, PROBABILITIES, label_smoothing=0.1),
           (real(4, 3),),
           torch_fn=lambda x: TF.cross_entropy(x, as_torch(PROBABILITIES).to(x.dtype),
                                               label_smoothing=0.1)),

    # --- binary cross entropy from logits ---
    OpCase("bce_with_logits", lambda x, y: F.binary_cross_entropy_with_logits(x * 3, y / 2.5),
           lambda x, y: binary_cross_entropy_with_logits_reference(x * 3, y / 2.5),
           (real(3, 4), positive(3, 4)),
           torch_fn=lambda x, y: TF.binary_cross_entropy_with_logits(x * 3, y / 2.5)),
    OpCase("bce_with_logits_sum",
           lambda x, y: F.binary_cross_entropy_with_logits(x, y / 2.5, reduction="sum"),
           lambda x, y: binary_cross_entropy_with_logits_reference(x, y / 2.5, "sum"),
           (real(3, 4), positive(3, 4)),
           torch_fn=lambda x, y: TF.binary_cross_entropy_with_logits(x, y / 2.5,
                                                                     reduction="sum")),
    OpCase("bce_with_logits_none",
           lambda x, y: F.binary_cross_entropy_with_logits(x, y / 2.5, reduction="none"),
           lambda x, y: binary_cross_entropy_with_logits_reference(x, y / 2.5, "none"),
           (real(2, 3), positive(2, 3)),
           torch_fn=lambda x, y: TF.binary_cross_entropy_with_logits(x, y / 2.5,
                                                                     reduction="none")),
    OpCase("bce_with_logits_constant_labels",
           lambda x: F.binary_cross_entropy_with_logits(x * 2, LABELS),
           lambda x: binary_cross_entropy_with_logits_reference(x * 2, LABELS), (real(3, 4),),
           torch_fn=lambda x: TF.binary_cross_entropy_with_logits(
               x * 2, as_torch(LABELS).to(x.dtype))),
    OpCase("bce_with_logits_tensor_labels_1d",
           lambda x: F.binary_cross_entropy_with_logits(x, mg.tensor(LABELS[0]).float()),
           lambda x: binary_cross_entropy_with_logits_reference(x, LABELS[0]), (real(4),),
           torch_fn=lambda x: TF.binary_cross_entropy_with_logits(
               x, as_torch(LABELS[0]).to(x.dtype))),

    OpCase("bce_with_logits_pos_weight",
           lambda x, y: F.binary_cross_entropy_with_logits(
               x * 3, y / 2.5, pos_weight=mg.tensor(POS_WEIGHT).to(x.dtype)),
           lambda x, y: binary_cross_entropy_with_logits_reference(x * 3, y / 2.5,
                                                                   pos_weight=POS_WEIGHT),
           (real(3, 4), positive(3, 4)),
           torch_fn=lambda x, y: TF.binary_cross_entropy_with_logits(
               x * 3, y / 2.5, pos_weight=as_torch(POS_WEIGHT).to(x.dtype))),
    OpCase("bce_with_logits_weight_and_pos_weight_none",
           lambda x, y: F.binary_cross_entropy_with_logits(
               x, y / 2.5, weight=mg.tensor(BCE_WEIGHT).to(x.dtype),
               pos_weight=mg.tensor(POS_WEIGHT).to(x.dtype), reduction="none"),
           lambda x, y: binary_cross_entropy_with_logits_reference(
               x, y / 2.5, "none", weight=BCE_WEIGHT, pos_weight=POS_WEIGHT),
           (real(3, 4), positive(3, 4)),
           torch_fn=lambda x, y: TF.binary_cross_entropy_with_logits(
               x, y / 2.5, weight=as_torch(BCE_WEIGHT).to(x.dtype),
               pos_weight=as_torch(POS_WEIGHT).to(x.dtype), reduction="none")),

    # --- binary cross entropy from probabilities (positive / 2.5 lies in [0.2, 0.8]) ---
    OpCase("bce_weight",
           lambda p, y: F.binary_cross_entropy(p / 2.5, y / 2.5, reduction="sum",
                                               weight=mg.tensor(BCE_WEIGHT).to(p.dtype)),
           lambda p, y: binary_cross_entropy_reference(p / 2.5, y / 2.5, "sum", BCE_WEIGHT),
           (positive(3, 4), positive(3, 4)),
           torch_fn=lambda p, y: TF.binary_cross_entropy(
               p / 2.5, y / 2.5, reduction="sum", weight=as_torch(BCE_WEIGHT).to(p.dtype))),
    OpCase("bce", lambda p, y: F.binary_cross_entropy(p / 2.5, y / 2.5),
           lambda p, y: binary_cross_entropy_reference(p / 2.5, y / 2.5),
           (positive(3, 4), positive(3, 4)),
           torch_fn=lambda p, y: TF.binary_cross_entropy(p / 2.5, y / 2.5)),
    OpCase("bce_sum", lambda p, y: F.binary_cross_entropy(p / 2.5, y / 2.5, reduction="sum"),
           lambda p, y: binary_cross_entropy_reference(p / 2.5, y / 2.5, "sum"),
           (positive(3, 4), positive(3, 4)),
           torch_fn=lambda p, y: TF.binary_cross_entropy(p / 2.5, y / 2.5, reduction="sum")),
    OpCase("bce_none", lambda p, y: F.binary_cross_entropy(p / 2.5, y / 2.5, reduction="none"),
           lambda p, y: binary_cross_entropy_reference(p / 2.5, y / 2.5, "none"),
           (positive(2, 3), positive(2, 3)),
           torch_fn=lambda p, y: TF.binary_cross_entropy(p / 2.5, y / 2.5, reduction="none")),
    OpCase("bce_of_sigmoid_constant_labels",
           lambda x: F.binary_cross_entropy(x.sigmoid(), LABELS),
           lambda x: binary_cross_entropy_reference(sigmoid_reference(x), LABELS),
           (real(3, 4),),
           torch_fn=lambda x: TF.binary_cross_entropy(x.sigmoid(),
                                                      as_torch(LABELS).to(x.dtype))),
    OpCase("bce_tensor_labels_1d",
           lambda p: F.binary_cross_entropy(p / 2.5, mg.tensor(LABELS[1]).float()),
           lambda p: binary_cross_entropy_reference(p / 2.5, LABELS[1]), (positive(4),),
           torch_fn=lambda p: TF.binary_cross_entropy(p / 2.5,
                                                      as_torch(LABELS[1]).to(p.dtype))),
]
