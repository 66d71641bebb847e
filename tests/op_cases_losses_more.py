"""Op cases for the losses of nn/loss_more.py and nn/functional_losses_more.py (round 3 of
the census): pairwise distances, the ranking and embedding losses, the multi-class margin
losses and the Poisson and Gaussian likelihoods. Each is a composite of Tensor ops; the
NumPy references are written from PyTorch's documented formulas, the slow obvious way
(loops over examples and classes). Targets that only pick a branch are constants of the
case; targets that enter the formula are inputs, so their gradients are checked too.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from op_cases import OpCase, as_torch, distinct, positive, real, torch

import minigrad as mg
import minigrad.nn.functional as F

TF = torch.nn.functional if torch is not None else None


def reduce_reference(losses, reduction):
    losses = np.asarray(losses, dtype=float)
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


# --- references -------------------------------------------------------------------------------


def pairwise_distance_reference(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    difference = x1 - x2 + eps
    norm = np.sum(np.abs(difference) ** p, axis=-1, keepdims=keepdim) ** (1 / p)
    return norm


def pdist_reference(x, p=2.0):
    n = x.shape[0]
    return np.array([np.sum(np.abs(x[i] - x[j]) ** p) ** (1 / p)
                     for i in range(n) for j in range(i + 1, n)])


def cosine_embedding_reference(x1, x2, target, margin=0.0, reduction="mean"):
    losses = []
    for a, b, y in zip(x1, x2, target):
        cosine = a @ b / math.sqrt((a @ a + 1e-12) * (b @ b + 1e-12))
        losses.append(1 - cosine if y == 1 else max(0.0, cosine - margin) if y == -1 else 0.0)
    return reduce_reference(losses, reduction)


def margin_ranking_reference(x1, x2, target, margin=0.0, reduction="mean"):
    return reduce_reference(np.maximum(0, -target * (x1 - x2) + margin), reduction)


def triplet_reference(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                      reduction="mean", distance=None):
    distance = distance or (lambda u, v: pairwise_distance_reference(u, v, p, eps))
    to_positive, to_negative = distance(anchor, positive), distance(anchor, negative)
    if swap:
        to_negative = np.minimum(to_negative, distance(positive, negative))
    return reduce_reference(np.maximum(0, margin + to_positive - to_negative), reduction)


def cosine_distance_reference(u, v):
    return 1 - np.sum(u * v, -1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))


def hinge_embedding_reference(x, target, margin=1.0, reduction="mean"):
    losses = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        y = target[index]
        losses[index] = (x[index] if y == 1 else max(0.0, margin - x[index]) if y == -1
                         else x[index] + max(0.0, margin - x[index]))  # neither: both terms
    return reduce_reference(losses, reduction)


def soft_margin_reference(x, target, reduction="mean"):
    return reduce_reference(np.log(1 + np.exp(-target * x)), reduction)


def multilabel_soft_margin_reference(x, target, weight=None, reduction="mean"):
    weight = np.ones(x.shape[-1]) if weight is None else weight
    sigmoid = 1 / (1 + np.exp(-x))
    terms = -(target * np.log(sigmoid) + (1 - target) * np.log(1 - sigmoid)) * weight
    return reduce_reference(terms.mean(-1), reduction)


def multi_margin_reference(x, target, p=1, margin=1.0, weight=None, reduction="mean"):
    losses = []
    for scores, y in zip(x, target):
        w = 1.0 if weight is None else weight[y]
        losses.append(sum(w * max(0.0, margin - scores[y] + scores[i]) ** p
                          for i in range(len(scores)) if i != y) / len(scores))
    return reduce_reference(losses, reduction)


def multilabel_margin_reference(x, target, reduction="mean"):
    losses = []
    for scores, row in zip(x, target):
        listed = []
        for y in row:
            if y < 0:
                break
            listed.append(y)
        others = [i for i in range(len(scores)) if i not in listed]
        losses.append(sum(max(0.0, 1 - (scores[j] - scores[i]))
                          for j in listed for i in others) / len(scores))
    return reduce_reference(losses, reduction)


def poisson_nll_reference(x, target, log_input=True, full=False, eps=1e-8, reduction="mean"):
    losses = np.exp(x) - target * x if log_input else x - target * np.log(x + eps)
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = target * np.log(target) - target + 0.5 * np.log(2 * np.pi * target)
        losses = losses + np.where(target > 1, stirling, 0.0)
    return reduce_reference(losses, reduction)


def gaussian_nll_reference(x, target, var, full=False, eps=1e-6, reduction="mean"):
    if var.shape != x.shape and var.shape == x.shape[:-1]:
        var = var[..., None]
    var = np.maximum(var, eps)
    losses = 0.5 * (np.log(var) + (x - target) ** 2 / var)
    if full:
        losses = losses + 0.5 * np.log(2 * np.pi)
    return reduce_reference(losses, reduction)


def log_softmax_reference(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def ctc_reference(logits, targets, input_lengths, target_lengths, blank=0, reduction="mean"):
    """Every path of classes through the frames, by brute force: a path whose repeats merged
    and blanks dropped give the target adds its probability."""
    log_probs = log_softmax_reference(logits, 2)
    losses = []
    for b, (frames, length) in enumerate(zip(input_lengths, target_lengths)):
        target = list(targets[b][:length])
        total = 0.0
        for path in itertools.product(range(log_probs.shape[2]), repeat=frames):
            merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
            if [c for c in merged if c != blank] == target:
                total += np.exp(sum(log_probs[t, b, c] for t, c in enumerate(path)))
        losses.append(-np.log(total))
    losses = np.array(losses)
    if reduction == "mean":
        return np.mean(losses / np.maximum(np.asarray(target_lengths), 1))
    return reduce_reference(losses, reduction)


# --- constants --------------------------------------------------------------------------------

SIGNS = np.array([1, -1, 1, -1, -1])
SIGN_GRID = np.array([[1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, -1.0, -1.0, 1.0]])
HINGE_TARGETS = np.array([[1, -1, 1, 0], [-1, -1, 1, 2], [1, -1, -1, 1]])  # 0, 2: both terms
LABELS_01 = (SIGN_GRID > 0).astype(float)
CLASSES = np.array([0, 3, 1])
MULTILABEL = np.array([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3]])  # after -1: ignored
CLASS_WEIGHTS = np.array([0.5, 2.0, 1.0, 1.5])
CTC_TARGETS = np.array([[1, 1, 2], [2, 1, 0]])  # padded; row 1's 0 is past its length
CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS = [5, 4], [2, 2]
COUNTS = np.array([[0.0, 1.0, 2.0, 3.0], [5.0, 0.0, 1.0, 7.0], [4.0, 2.0, 0.0, 1.0]])


def torch_weights(x):
    return torch.tensor(CLASS_WEIGHTS, dtype=x.dtype)


def mg_weights(x):
    return mg.tensor(CLASS_WEIGHTS, dtype=x.dtype)


CASES = [
    # --- distances ---
    OpCase("pairwise_distance", lambda a, b: F.pairwise_distance(a, b),
           pairwise_distance_reference, (real(4, 5), real(4, 5)),
           torch_fn=lambda a, b: TF.pairwise_distance(a, b)),
    OpCase("pairwise_distance_p3_keepdim_broadcast",
           lambda a, b: F.pairwise_distance(a, b, 3, keepdim=True),
           lambda a, b: pairwise_distance_reference(a, b, 3, keepdim=True),
           (real(2, 4, 5), real(5)),
           torch_fn=lambda a, b: TF.pairwise_distance(a, b, 3, keepdim=True)),
    OpCase("pairwise_distance_p1_eps", lambda a, b: F.pairwise_distance(a, b, 1.0, eps=0.1),
           lambda a, b: pairwise_distance_reference(a, b, 1.0, eps=0.1),
           (distinct(3, 4), distinct(3, 4)),
           torch_fn=lambda a, b: TF.pairwise_distance(a, b, 1.0, eps=0.1)),
    OpCase("pdist", lambda x: F.pdist(x), pdist_reference, (real(5, 3),),
           torch_fn=lambda x: TF.pdist(x)),
    OpCase("pdist_p3", lambda x: F.pdist(x, 3), lambda x: pdist_reference(x, 3),
           (real(4, 3),), torch_fn=lambda x: TF.pdist(x, 3)),

    # --- ranking and embedding losses ---
    OpCase("cosine_embedding_loss",
           lambda a, b: F.cosine_embedding_loss(a, b, SIGNS, margin=0.1),
           lambda a, b: cosine_embedding_reference(a, b, SIGNS, 0.1),
           (real(5, 3), real(5, 3)),
           torch_fn=lambda a, b: TF.cosine_embedding_loss(a, b, as_torch(SIGNS), margin=0.1)),
    OpCase("cosine_embedding_loss_none",
           lambda a, b: F.cosine_embedding_loss(a, b, SIGNS, reduction="none"),
           lambda a, b: cosine_embedding_reference(a, b, SIGNS, reduction="none"),
           (real(5, 4), real(5, 4)),
           torch_fn=lambda a, b: TF.cosine_embedding_loss(a, b, as_torch(SIGNS),
                                                          reduction="none")),
    OpCase("margin_ranking_loss",
           lambda a, b: F.margin_ranking_loss(a, b, SIGNS, margin=0.5),
           lambda a, b: margin_ranking_reference(a, b, SIGNS, 0.5), (real(5), real(5)),
           torch_fn=lambda a, b: TF.margin_ranking_loss(a, b, as_torch(SIGNS).to(a.dtype),
                                                        margin=0.5)),
    OpCase("margin_ranking_loss_target_gradient_sum",
           lambda a, b, t: F.margin_ranking_loss(a, b, t, reduction="sum"),
           lambda a, b, t: margin_ranking_reference(a, b, t, reduction="sum"),
           (real(3, 4), real(1, 4), real(3, 1)),
           torch_fn=lambda a, b, t: TF.margin_ranking_loss(a, b, t, reduction="sum")),
    OpCase("triplet_margin_loss_swap_none",
           lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=2.0, swap=True,
                                                 reduction="none"),
           lambda a, p, n: triplet_reference(a, p, n, 2.0, swap=True, reduction="none"),
           (real(6, 3), real(6, 3), real(6, 3))),
    OpCase("triplet_margin_loss_p1",
           lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=1.5, p=1),
           lambda a, p, n: triplet_reference(a, p, n, 1.5, p=1),
           (distinct(4, 3), distinct(4, 3), distinct(4, 3))),
    OpCase("triplet_margin_with_distance_loss_cosine",
           lambda a, p, n: F.triplet_margin_with_distance_loss(
               a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v),
               margin=0.5, reduction="sum"),
           lambda a, p, n: triplet_reference(a, p, n, 0.5, reduction="sum",
                                             distance=cosine_distance_reference),
           (real(5, 3), real(5, 3), real(5, 3)),
           torch_fn=lambda a, p, n: TF.triplet_margin_with_distance_loss(
               a, p, n, distance_function=lambda u, v: 1 - TF.cosine_similarity(u, v),
               margin=0.5, reduction="sum")),
    OpCase("hinge_embedding_loss",
           lambda x: F.hinge_embedding_loss(x, HINGE_TARGETS),
           lambda x: hinge_embedding_reference(x, HINGE_TARGETS), (real(3, 4, away_from=(1.0,)),),
           torch_fn=lambda x: TF.hinge_embedding_loss(x, as_torch(HINGE_TARGETS))),
    OpCase("hinge_embedding_loss_margin_none",
           lambda x: F.hinge_embedding_loss(x, SIGN_GRID, margin=0.5, reduction="none"),
           lambda x: hinge_embedding_reference(x, SIGN_GRID, 0.5, "none"),
           (real(3, 4, away_from=(0.5,)),),
           torch_fn=lambda x: TF.hinge_embedding_loss(x, as_torch(SIGN_GRID).to(x.dtype),
                                                      margin=0.5, reduction="none")),
    OpCase("soft_margin_loss", lambda x: F.soft_margin_loss(x, SIGN_GRID),
           lambda x: soft_margin_reference(x, SIGN_GRID), (real(3, 4),),
           torch_fn=lambda x: TF.soft_margin_loss(x, as_torch(SIGN_GRID).to(x.dtype))),
    OpCase("soft_margin_loss_broadcast_sum",
           lambda x: F.soft_margin_loss(x, SIGN_GRID[0], reduction="sum"),
           lambda x: soft_margin_reference(x, SIGN_GRID[0], "sum"), (real(3, 4),),
           torch_fn=lambda x: TF.soft_margin_loss(x, as_torch(SIGN_GRID[0]).to(x.dtype),
                                                  reduction="sum")),
    OpCase("multilabel_soft_margin_loss_weight",
           lambda x, w: F.multilabel_soft_margin_loss(x, LABELS_01, weight=w),
           lambda x, w: multilabel_soft_margin_reference(x, LABELS_01, w),
           (real(3, 4), real(4)),
           torch_fn=lambda x, w: TF.multilabel_soft_margin_loss(
               x, as_torch(LABELS_01).to(x.dtype), weight=w)),
    OpCase("multilabel_soft_margin_loss_target_gradient_none",
           lambda x, t: F.multilabel_soft_margin_loss(x, t, reduction="none"),
           lambda x, t: multilabel_soft_margin_reference(x, t, reduction="none"),
           (real(3, 4), positive(3, 4)),
           torch_fn=lambda x, t: TF.multilabel_soft_margin_loss(x, t, reduction="none")),

    # --- multi-class margin losses ---
    OpCase("multi_margin_loss", lambda x: F.multi_margin_loss(x, CLASSES),
           lambda x: multi_margin_reference(x, CLASSES), (real(3, 4),),
           torch_fn=lambda x: TF.multi_margin_loss(x, as_torch(CLASSES))),
    OpCase("multi_margin_loss_p2_weight_none",
           lambda x: F.multi_margin_loss(x, CLASSES, p=2, margin=0.7, weight=mg_weights(x),
                                         reduction="none"),
           lambda x: multi_margin_reference(x, CLASSES, 2, 0.7, CLASS_WEIGHTS, "none"),
           (real(3, 4),),
           torch_fn=lambda x: TF.multi_margin_loss(x, as_torch(CLASSES), p=2, margin=0.7,
                                                   weight=torch_weights(x), reduction="none")),
    OpCase("multilabel_margin_loss", lambda x: F.multilabel_margin_loss(x, MULTILABEL),
           lambda x: multilabel_margin_reference(x, MULTILABEL), (real(3, 4),),
           torch_fn=lambda x: TF.multilabel_margin_loss(x, as_torch(MULTILABEL))),
    OpCase("multilabel_margin_loss_one_example_sum",
           lambda x: F.multilabel_margin_loss(x, MULTILABEL[0], reduction="sum"),
           lambda x: multilabel_margin_reference(x[None], MULTILABEL[:1], "sum"),
           (real(4),),
           torch_fn=lambda x: TF.multilabel_margin_loss(x, as_torch(MULTILABEL[0]),
                                                        reduction="sum")),

    # --- likelihoods ---
    OpCase("poisson_nll_loss", lambda x: F.poisson_nll_loss(x, COUNTS),
           lambda x: poisson_nll_reference(x, COUNTS), (real(3, 4),),
           torch_fn=lambda x: TF.poisson_nll_loss(x, as_torch(COUNTS).to(x.dtype))),
    OpCase("poisson_nll_loss_full_target_gradient",
           lambda x, t: F.poisson_nll_loss(x, t * 3, full=True, reduction="sum"),
           lambda x, t: poisson_nll_reference(x, t * 3, full=True, reduction="sum"),
           (real(3, 4), positive(3, 4)),
           torch_fn=lambda x, t: TF.poisson_nll_loss(x, t * 3, full=True, reduction="sum")),
    OpCase("poisson_nll_loss_full_counts_none",
           lambda x: F.poisson_nll_loss(x, COUNTS, full=True, reduction="none"),
           lambda x: poisson_nll_reference(x, COUNTS, full=True, reduction="none"),
           (real(3, 4),),
           torch_fn=lambda x: TF.poisson_nll_loss(x, as_torch(COUNTS).to(x.dtype), full=True,
                                                  reduction="none")),
    OpCase("poisson_nll_loss_rate_input",
           lambda x, t: F.poisson_nll_loss(x, t, log_input=False),
           lambda x, t: poisson_nll_reference(x, t, log_input=False),
           (positive(3, 4), positive(3, 4)),
           torch_fn=lambda x, t: TF.poisson_nll_loss(x, t, log_input=False)),
    OpCase("gaussian_nll_loss_full",
           lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True),
           lambda x, t, v: gaussian_nll_reference(x, t, v, full=True),
           (real(3, 4), real(3, 4), positive(3, 4)),
           torch_fn=lambda x, t, v: TF.gaussian_nll_loss(x, t, v, full=True)),
    OpCase("gaussian_nll_loss_one_variance_per_row_sum",
           lambda x, t, v: F.gaussian_nll_loss(x, t, v, reduction="sum"),
           lambda x, t, v: gaussian_nll_reference(x, t, v, reduction="sum"),
           (real(3, 4), real(3, 4), positive(3)),
           torch_fn=lambda x, t, v: TF.gaussian_nll_loss(x, t, v, reduction="sum")),
    OpCase("gaussian_nll_loss_shared_variance_none",
           lambda x, t, v: F.gaussian_nll_loss(x, t, v, reduction="none"),
           lambda x, t, v: gaussian_nll_reference(x, t, v, reduction="none"),
           (real(2, 3, 4), real(2, 3, 4), positive(2, 1, 4)),
           torch_fn=lambda x, t, v: TF.gaussian_nll_loss(x, t, v, reduction="none")),

    # --- connectionist temporal classification (through log_softmax, as it is used: there
    # PyTorch's gradient is the true one, see ctc_loss's docstring) ---
    OpCase("ctc_loss",
           lambda x: F.ctc_loss(F.log_softmax(x, 2), CTC_TARGETS, CTC_INPUT_LENGTHS,
                                CTC_TARGET_LENGTHS),
           lambda x: ctc_reference(x, CTC_TARGETS, CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS),
           (real(5, 2, 3),),
           torch_fn=lambda x: TF.ctc_loss(TF.log_softmax(x, 2), as_torch(CTC_TARGETS),
                                          CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS)),
    OpCase("ctc_loss_blank_last_none",
           lambda x: F.ctc_loss(F.log_softmax(x, 2), CTC_TARGETS - 1, [4, 5], [3, 1], blank=2,
                                reduction="none"),
           lambda x: ctc_reference(x, CTC_TARGETS - 1, [4, 5], [3, 1], 2, "none"),
           (real(5, 2, 3),),
           torch_fn=lambda x: TF.ctc_loss(TF.log_softmax(x, 2), as_torch(CTC_TARGETS - 1),
                                          [4, 5], [3, 1], blank=2, reduction="none")),
]
