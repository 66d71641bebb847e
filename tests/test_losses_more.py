"""The ranking, metric and likelihood losses and pairwise distances of round 3 of the census
(nn/loss_more.py, nn/functional_losses_more.py), against PyTorch: each layer and each
functional for every reduction (values and gradients), the deprecated size_average/reduce,
reprs, the edge cases (zero margins, ties, equal inputs, targets other than -1/1,
broadcasting) and the errors, which name the loss and the shapes. The functionals' values,
gradients, second derivatives and lazy mode are also rows of the op table
(tests/op_cases_losses_more.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F

rng = np.random.default_rng(33)
X1, X2, X3 = (rng.standard_normal((5, 4)) for _ in range(3))
SIGNS = np.array([1, -1, 1, -1, -1])
SIGN_GRID = np.where(rng.standard_normal((5, 4)) > 0, 1.0, -1.0)
CLASSES = np.array([0, 3, 1, 1, 2])
MULTILABEL = np.array([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3], [-1, 0, 0, 0], [2, 2, -1, 0]])
COUNTS = rng.integers(0, 5, (5, 4)).astype(float)
CLASS_WEIGHTS = np.array([0.5, 2.0, 1.0, 1.5])
REDUCTIONS = ["mean", "sum", "none"]


class Grad:
    """An input that requires grad in both libraries (its gradients are compared)."""

    def __init__(self, array):
        self.array = np.asarray(array, dtype=np.float64)


def build(lib, args):
    """The arguments in ``lib`` (minigrad or torch): Grad inputs require grad, arrays are
    constant tensors (ints stay int64)."""
    built, leaves = [], []
    for arg in args:
        if isinstance(arg, Grad):
            tensor = lib.tensor(arg.array, requires_grad=True)
            leaves.append(tensor)
        else:
            tensor = lib.tensor(np.asarray(arg))
        built.append(tensor)
    return built, leaves


# (layer, functional, keyword arguments as a function of lib, the call's arguments)
SPECS = {
    "cosine_embedding": ("CosineEmbeddingLoss", "cosine_embedding_loss",
                         lambda lib: {"margin": 0.2}, (Grad(X1), Grad(X2), SIGNS)),
    "margin_ranking": ("MarginRankingLoss", "margin_ranking_loss",
                       lambda lib: {"margin": 0.3},
                       (Grad(X1[:, 0]), Grad(X2[:, 0]), Grad(SIGNS))),
    "triplet": ("TripletMarginLoss", "triplet_margin_loss",
                lambda lib: {"margin": 2.0, "p": 3, "swap": True},
                (Grad(X1), Grad(X2), Grad(X3))),
    "triplet_with_distance": ("TripletMarginWithDistanceLoss",
                              "triplet_margin_with_distance_loss",
                              lambda lib: {"swap": True, "margin": 1.5},
                              (Grad(X1), Grad(X2), Grad(X3))),
    "hinge_embedding": ("HingeEmbeddingLoss", "hinge_embedding_loss",
                        lambda lib: {"margin": 0.5}, (Grad(X1), SIGN_GRID)),
    "soft_margin": ("SoftMarginLoss", "soft_margin_loss", lambda lib: {},
                    (Grad(X1), SIGN_GRID)),
    "multilabel_soft_margin": ("MultiLabelSoftMarginLoss", "multilabel_soft_margin_loss",
                               lambda lib: {"weight": lib.tensor(CLASS_WEIGHTS)},
                               (Grad(X1), (SIGN_GRID > 0) * 1.0)),
    "multi_margin": ("MultiMarginLoss", "multi_margin_loss",
                     lambda lib: {"p": 2, "margin": 0.8, "weight": lib.tensor(CLASS_WEIGHTS)},
                     (Grad(X1), CLASSES)),
    "multilabel_margin": ("MultiLabelMarginLoss", "multilabel_margin_loss", lambda lib: {},
                          (Grad(X1), MULTILABEL)),
    "poisson_nll": ("PoissonNLLLoss", "poisson_nll_loss", lambda lib: {"full": True},
                    (Grad(X1), Grad(COUNTS))),
    "poisson_nll_rates": ("PoissonNLLLoss", "poisson_nll_loss",
                          lambda lib: {"log_input": False, "eps": 1e-3},
                          (Grad(np.abs(X1)), COUNTS)),
    "gaussian_nll": ("GaussianNLLLoss", "gaussian_nll_loss",
                     lambda lib: {"full": True, "eps": 0.1},
                     (Grad(X1), Grad(X2), Grad(np.abs(X3)))),
}


def assert_same(ours, theirs, our_leaves, their_leaves):
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-7,
                               atol=1e-10)
    upstream = rng.standard_normal(tuple(ours.shape))
    ours.backward(mg.tensor(upstream))
    theirs.backward(theirs.new_tensor(upstream))
    for mine, yours in zip(our_leaves, their_leaves):
        expected = np.zeros(yours.shape) if yours.grad is None else yours.grad.numpy()
        got = np.zeros(mine.shape) if mine.grad is None else mine.grad.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", SPECS)
def test_layer_matches_pytorch_for_each_reduction(torch, name, reduction):
    layer, _, kwargs, args = SPECS[name]
    ours_args, our_leaves = build(mg, args)
    their_args, their_leaves = build(torch, args)
    ours = getattr(nn, layer)(**kwargs(mg), reduction=reduction)(*ours_args)
    theirs = getattr(torch.nn, layer)(**kwargs(torch), reduction=reduction)(*their_args)
    assert_same(ours, theirs, our_leaves, their_leaves)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", SPECS)
def test_functional_matches_pytorch_for_each_reduction(torch, name, reduction):
    _, functional, kwargs, args = SPECS[name]
    ours_args, our_leaves = build(mg, args)
    their_args, their_leaves = build(torch, args)
    ours = getattr(F, functional)(*ours_args, **kwargs(mg), reduction=reduction)
    theirs = getattr(torch.nn.functional, functional)(*their_args, **kwargs(torch),
                                                      reduction=reduction)
    assert_same(ours, theirs, our_leaves, their_leaves)


def test_float32_losses_stay_float32():
    x = mg.tensor(X1.astype(np.float32), requires_grad=True)
    losses = [F.margin_ranking_loss(x, x * 2, SIGN_GRID), F.soft_margin_loss(x, SIGN_GRID),
              F.poisson_nll_loss(x, COUNTS, full=True), F.gaussian_nll_loss(x, X2, 0.5),
              F.multi_margin_loss(x, CLASSES), F.cosine_embedding_loss(x, x, SIGNS),
              F.pairwise_distance(x, X2.astype(np.float32))]
    assert [loss.dtype for loss in losses] == [mg.float32] * len(losses)


# --- distances ----------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [2.0, 1.0, 3, 0.5, 0, -1.0, np.inf, -np.inf])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance_matches_pytorch_for_each_p(torch, p, keepdim):
    for x1, x2 in [(X1, X2), (X1, X2[0]), (X1[None], X2), (X1[0], X2[0])]:
        (a, b), leaves = build(mg, (Grad(x1), Grad(x2)))
        (ta, tb), torch_leaves = build(torch, (Grad(x1), Grad(x2)))
        module = nn.PairwiseDistance(p=p, keepdim=keepdim)
        theirs = torch.nn.PairwiseDistance(p=p, keepdim=keepdim)
        assert_same(module(a, b), theirs(ta, tb), leaves, torch_leaves)


def test_pairwise_distance_of_numbers_is_a_0d_tensor(torch):
    (a, b), leaves = build(mg, (Grad(1.5), Grad(-0.5)))
    (ta, tb), torch_leaves = build(torch, (Grad(1.5), Grad(-0.5)))
    assert_same(F.pairwise_distance(a, b), torch.nn.functional.pairwise_distance(ta, tb),
                leaves, torch_leaves)


@pytest.mark.parametrize("eps", [1e-6, 0.0])
def test_pairwise_distance_of_equal_inputs_has_pytorchs_gradient(torch, eps):
    """eps is added to the difference: equal inputs are ||eps|| apart, and with eps = 0 the
    gradient at the zero distance is 0 (not NaN), as in PyTorch."""
    (a, b), leaves = build(mg, (Grad(X1), Grad(X1)))
    (ta, tb), torch_leaves = build(torch, (Grad(X1), Grad(X1)))
    ours = F.pairwise_distance(a, b, eps=eps)
    assert_same(ours, torch.nn.functional.pairwise_distance(ta, tb, eps=eps), leaves,
                torch_leaves)
    assert np.all(np.isfinite(leaves[0].grad.numpy()))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, np.inf])
def test_pdist_matches_pytorch_with_equal_rows(torch, p):
    rows = np.concatenate([X1, X1[:2]])  # rows 0, 1 twice: zero distances, gradient 0
    (x,), leaves = build(mg, (Grad(rows),))
    (tx,), torch_leaves = build(torch, (Grad(rows),))
    assert_same(F.pdist(x, p), torch.nn.functional.pdist(tx, p), leaves, torch_leaves)


def test_pdist_of_one_row_is_empty():
    assert F.pdist(mg.ones(1, 3)).shape == (0,)


# --- edge cases: margins, ties, targets, broadcasting --------------------------------------------


def compare(torch, functional, args, **kwargs):
    ours_args, leaves = build(mg, args)
    their_args, torch_leaves = build(torch, args)
    ours = getattr(F, functional)(*ours_args, **kwargs)
    theirs = getattr(torch.nn.functional, functional)(*their_args, **kwargs)
    assert_same(ours, theirs, leaves, torch_leaves)
    return ours, leaves


def test_margin_ranking_loss_at_a_tie_passes_the_gradient_as_pytorch(torch):
    """Equal inputs with margin 0: the loss is max(0, 0), where PyTorch's clamp_min passes
    the gradient (clamp_min's gradient is 1 where x >= min)."""
    loss, leaves = compare(torch, "margin_ranking_loss",
                           (Grad(X1[:, 0]), Grad(X1[:, 0]), SIGNS * 1.0), margin=0.0)
    assert loss.item() == 0
    assert np.any(leaves[0].grad.numpy() != 0)


@pytest.mark.parametrize("margin", [0.0, 0.5, -0.2])
def test_cosine_embedding_loss_margins_and_equal_inputs(torch, margin):
    compare(torch, "cosine_embedding_loss", (Grad(X1), Grad(X1), SIGNS), margin=margin,
            reduction="none")
    compare(torch, "cosine_embedding_loss", (Grad(X1), Grad(-X1), SIGNS), margin=margin)


def test_cosine_embedding_loss_of_a_zero_vector_is_finite(torch):
    loss, leaves = compare(torch, "cosine_embedding_loss",
                           (Grad(np.zeros((5, 4))), Grad(X2), SIGNS), reduction="sum")
    assert np.all(np.isfinite(leaves[0].grad.numpy()))


@pytest.mark.parametrize("target", [np.array([0, 2, 1, -1, 5]),
                                    np.array([1.0, -1.0, 1.0, -1.0, 1.0])])
def test_cosine_embedding_loss_targets_other_than_one_count_zero(torch, target):
    loss, _ = compare(torch, "cosine_embedding_loss", (Grad(X1), Grad(X2), target),
                      reduction="none")
    assert np.all(loss.detach().numpy()[(target != 1) & (target != -1)] == 0)


def test_cosine_embedding_loss_one_pair_with_a_0d_target(torch):
    compare(torch, "cosine_embedding_loss", (Grad(X1[0]), Grad(X2[0]), np.array(-1)),
            reduction="none")


def test_cosine_embedding_loss_broadcasts_the_inputs(torch):
    compare(torch, "cosine_embedding_loss", (Grad(X1), Grad(X2[:1]), SIGNS), reduction="none")


@pytest.mark.parametrize("margin", [0.0, 1.0])
def test_hinge_embedding_loss_targets_and_broadcasting(torch, margin):
    compare(torch, "hinge_embedding_loss", (Grad(np.abs(X1)), np.array([1, -1, 0, 2])),
            margin=margin, reduction="none")  # 0, 2: both terms, as PyTorch's where gives
    compare(torch, "hinge_embedding_loss", (Grad(np.array([0.5, 1.0, 2.0])), -np.ones(3)),
            margin=1.0)  # the kink at input = margin


def test_margin_ranking_loss_broadcasts_within_the_same_number_of_dims(torch):
    compare(torch, "margin_ranking_loss", (Grad(X1), Grad(X2[:1]), SIGNS[:, None] * 1.0),
            reduction="none")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # exp(1000) overflows, as in PyTorch
def test_soft_margin_loss_broadcasts_and_overflows_as_pytorch(torch):
    compare(torch, "soft_margin_loss", (Grad(X1), SIGN_GRID[0]), reduction="none")
    loss, _ = compare(torch, "soft_margin_loss", (Grad(np.array([1000.0])), np.array([-1.0])),
                      reduction="none")
    assert np.isinf(loss.item())


def test_multilabel_soft_margin_loss_of_one_example_and_a_class_weight_gradient(torch):
    compare(torch, "multilabel_soft_margin_loss", (Grad(X1[0]), (SIGN_GRID[0] > 0) * 1.0),
            reduction="none")
    compare(torch, "multilabel_soft_margin_loss", (Grad(X1), (SIGN_GRID > 0) * 1.0,
                                                   Grad(CLASS_WEIGHTS)))


@pytest.mark.parametrize("target", [np.array(2), np.array([2])])
def test_multi_margin_loss_of_one_example_is_shaped_as_its_target(torch, target):
    loss, _ = compare(torch, "multi_margin_loss", (Grad(X1[0]), target), reduction="none")
    assert loss.shape == target.shape


def test_multi_margin_loss_where_a_margin_is_exactly_zero_has_no_gradient_there(torch):
    """PyTorch counts a class only where margin - x[y] + x[i] > 0 (strictly)."""
    scores = np.array([[1.0, 0.0, 0.5], [2.0, 1.0, 0.0]])
    compare(torch, "multi_margin_loss", (Grad(scores), np.array([0, 0])), reduction="none")


def test_multilabel_margin_loss_of_one_example_and_of_all_classes_listed(torch):
    compare(torch, "multilabel_margin_loss", (Grad(X1[0]), MULTILABEL[0]), reduction="none")
    compare(torch, "multilabel_margin_loss", (Grad(X1[:2]), np.array([[0, 1, 2, 3],
                                                                      [3, 2, 1, 0]])))
    compare(torch, "multilabel_margin_loss", (Grad(np.array([1.0, 0.0, 0.5])),
                                              np.array([0, -1, 2])))  # a margin at 0


def test_triplet_losses_of_equal_inputs_and_broadcast_inputs(torch):
    compare(torch, "triplet_margin_loss", (Grad(X1), Grad(X1), Grad(X1)))
    compare(torch, "triplet_margin_loss", (Grad(X1), Grad(X2[:1]), Grad(X3)), reduction="none")
    compare(torch, "triplet_margin_loss", (Grad(X1[0]), Grad(X2[0]), Grad(X3[0])), p=1,
            swap=True, reduction="none")
    compare(torch, "triplet_margin_with_distance_loss", (Grad(X1), Grad(X1), Grad(X2)),
            swap=True)


def test_triplet_margin_with_distance_loss_takes_any_distance(torch):
    def ours(a, b):
        return 1 - F.cosine_similarity(a, b)

    def theirs(a, b):
        return 1 - torch.nn.functional.cosine_similarity(a, b)

    (a, p, n), leaves = build(mg, (Grad(X1), Grad(X2), Grad(X3)))
    (ta, tp, tn), torch_leaves = build(torch, (Grad(X1), Grad(X2), Grad(X3)))
    loss = nn.TripletMarginWithDistanceLoss(distance_function=ours, margin=0.4)(a, p, n)
    expected = torch.nn.TripletMarginWithDistanceLoss(distance_function=theirs,
                                                      margin=0.4)(ta, tp, tn)
    assert_same(loss, expected, leaves, torch_leaves)


def test_poisson_nll_loss_adds_stirlings_term_only_where_the_target_is_above_one(torch):
    """PyTorch's values and input gradient; the target's gradient too, except at target 0,
    where PyTorch's is NaN (0 log 0 in the masked-out Stirling term) and minigrad's is the
    derivative of the loss that is computed there, -input."""
    target = np.array([0.0, 1.0, 1.5, 2.0, 10.0])
    (x, t), leaves = build(mg, (Grad(X1[:, 0]), Grad(target)))
    (tx, tt), torch_leaves = build(torch, (Grad(X1[:, 0]), Grad(target)))
    loss = F.poisson_nll_loss(x, t, full=True, reduction="none")
    expected = torch.nn.functional.poisson_nll_loss(tx, tt, full=True, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), expected.detach().numpy(), rtol=1e-7)
    loss.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-7)
    np.testing.assert_allclose(t.grad.numpy()[1:], tt.grad.numpy()[1:], rtol=1e-7)
    assert np.isnan(tt.grad.numpy()[0]) and t.grad.numpy()[0] == -X1[0, 0]
    plain = F.poisson_nll_loss(x.detach(), target, reduction="none")
    added = loss.detach().numpy() - plain.numpy()
    assert np.all(added[:2] == 0) and np.all(added[2:] != 0)  # Stirling's term: target > 1


def test_poisson_nll_loss_broadcasts_as_pytorch(torch):
    compare(torch, "poisson_nll_loss", (Grad(X1), COUNTS[0]), reduction="none")


@pytest.mark.parametrize("var_shape", [(5, 4), (5,), (5, 1), (1, 4)])
def test_gaussian_nll_loss_variance_shapes_are_pytorchs(torch, var_shape):
    var = np.abs(rng.standard_normal(var_shape)) + 0.1
    compare(torch, "gaussian_nll_loss", (Grad(X1), Grad(X2), Grad(var)), reduction="none")


def test_gaussian_nll_loss_with_a_float_variance(torch):
    compare(torch, "gaussian_nll_loss", (Grad(X1), Grad(X2)), var=0.25)
    loss = F.gaussian_nll_loss(mg.tensor(X1), X2, 0.25, reduction="sum")
    assert np.isclose(loss.item(), np.sum(0.5 * (np.log(0.25) + (X1 - X2) ** 2 / 0.25)))


def test_gaussian_nll_loss_clamps_var_without_changing_its_gradient(torch):
    """PyTorch clamps var to eps under no_grad: the value is eps, but the gradient is that
    of the clamped value passed straight through (not 0, as clamp's own gradient would)."""
    var = np.array([1e-9, 0.0, 2.0, 1e-6])
    loss, leaves = compare(torch, "gaussian_nll_loss",
                           (Grad(np.ones(4)), Grad(np.zeros(4)), Grad(var)))
    assert np.all(leaves[2].grad.numpy()[:2] != 0)


def test_gaussian_nll_loss_leaves_the_callers_variance_unchanged():
    var = mg.tensor([0.0, 2.0])
    F.gaussian_nll_loss(mg.ones(2), mg.zeros(2), var)
    assert var.tolist() == [0.0, 2.0]


# --- layers: settings, repr, deprecated arguments ------------------------------------------

CONSTRUCTIONS = [
    "PairwiseDistance()", "PairwiseDistance(p=1.0, eps=0.0, keepdim=True)",
    "CosineEmbeddingLoss(margin=0.5, reduction='sum')", "MarginRankingLoss()",
    "TripletMarginLoss(margin=2.0, p=1, swap=True)", "TripletMarginWithDistanceLoss()",
    "HingeEmbeddingLoss(margin=2.0)", "SoftMarginLoss(reduction='none')",
    "MultiLabelSoftMarginLoss()", "MultiMarginLoss(p=2, margin=0.5)",
    "MultiLabelMarginLoss()", "PoissonNLLLoss(log_input=False, full=True)",
    "GaussianNLLLoss(full=True, eps=1e-3)", "CTCLoss()",
    "CTCLoss(blank=3, reduction='sum', zero_infinity=True)",
]


@pytest.mark.parametrize("construction", CONSTRUCTIONS)
def test_repr_is_pytorchs(torch, construction):
    assert repr(eval("nn." + construction)) == repr(eval("torch.nn." + construction))


@pytest.mark.parametrize("layer, settings", [
    ("PairwiseDistance", ("norm", "eps", "keepdim")),
    ("TripletMarginLoss", ("margin", "p", "eps", "swap", "reduction")),
    ("MultiMarginLoss", ("p", "margin", "weight", "reduction")),
    ("PoissonNLLLoss", ("log_input", "full", "eps", "reduction")),
    ("GaussianNLLLoss", ("full", "eps", "reduction")),
])
def test_layers_keep_their_settings_under_pytorchs_names(torch, layer, settings):
    ours, theirs = getattr(nn, layer)(), getattr(torch.nn, layer)()
    for setting in settings:
        assert getattr(ours, setting) == getattr(theirs, setting), setting


def test_class_weights_are_buffers_as_in_pytorch(torch):
    for layer in ("MultiMarginLoss", "MultiLabelSoftMarginLoss"):
        ours = getattr(nn, layer)(weight=mg.tensor(CLASS_WEIGHTS))
        theirs = getattr(torch.nn, layer)(weight=torch.tensor(CLASS_WEIGHTS))
        assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]


@pytest.mark.parametrize("size_average, reduce", [(False, None), (None, False), (True, True),
                                                  (False, True), (True, None)])
@pytest.mark.parametrize("name", ["cosine_embedding", "margin_ranking", "triplet",
                                  "hinge_embedding", "soft_margin", "multilabel_soft_margin",
                                  "multi_margin", "multilabel_margin", "poisson_nll"])
@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")
def test_deprecated_size_average_and_reduce_map_to_reduction_as_in_pytorch(torch, name,
                                                                           size_average,
                                                                           reduce):
    layer, functional, kwargs, args = SPECS[name]
    legacy = {"size_average": size_average, "reduce": reduce}
    ours_args, our_leaves = build(mg, args)
    their_args, their_leaves = build(torch, args)
    ours = getattr(nn, layer)(**kwargs(mg), **legacy)
    theirs = getattr(torch.nn, layer)(**kwargs(torch), **legacy)
    assert ours.reduction == theirs.reduction
    assert_same(ours(*ours_args), theirs(*their_args), our_leaves, their_leaves)
    ours_args, our_leaves = build(mg, args)
    their_args, their_leaves = build(torch, args)
    assert_same(getattr(F, functional)(*ours_args, **kwargs(mg), **legacy),
                getattr(torch.nn.functional, functional)(*their_args, **kwargs(torch),
                                                         **legacy),
                our_leaves, their_leaves)


def test_a_loss_layer_given_the_data_says_make_it_first():
    with pytest.raises(TypeError, match="MarginRankingLoss: got the data"):
        nn.MarginRankingLoss(mg.tensor(X1), mg.tensor(X2))


# --- errors: they name the loss and the shapes -------------------------------------------------


def raises(kind, pattern, function, *args, **kwargs):
    with pytest.raises(kind, match=pattern):
        function(*args, **kwargs)


A, B = mg.tensor(X1), mg.tensor(X2)


def test_distances_refuse_shapes_that_do_not_broadcast():
    raises(ValueError, r"pairwise_distance: x1 of shape \(5, 4\), x2 of shape \(3,\) do not "
           "broadcast", F.pairwise_distance, A, mg.ones(3, dtype=mg.float64))
    raises(RuntimeError, r"pdist: only supports 2D tensors.*shape \(4,\)", F.pdist, A[0])
    raises(RuntimeError, r"pdist: only supports non-negative p values, got p=-1", F.pdist,
           A, -1)


def test_cosine_embedding_loss_errors_name_the_shapes():
    raises(RuntimeError, r"cosine_embedding_loss: 0D or 1D target.*shape \(5, 1\)",
           F.cosine_embedding_loss, A, B, SIGNS[:, None])
    raises(RuntimeError, r"cosine_embedding_loss: a 1D target \(shape \(4,\)\) expects 2D "
           r"inputs, but got input1 of shape \(4,\)", F.cosine_embedding_loss, A[0], B[0],
           SIGNS[:4])
    raises(ValueError, r"cosine_embedding_loss: cosine_of_the_inputs of shape \(5,\), target "
           r"of shape \(3,\)", F.cosine_embedding_loss, A, B, SIGNS[:3])


def test_ranking_losses_errors_name_the_shapes():
    raises(RuntimeError, r"margin_ranking_loss: .*same number of dimensions.*input1 of shape "
           r"\(5, 4\), input2 of shape \(5, 4\) and target of shape \(5,\)",
           F.margin_ranking_loss, A, B, SIGNS)
    raises(ValueError, r"margin_ranking_loss: input1 of shape \(5, 4\), input2 of shape "
           r"\(3, 4\)", F.margin_ranking_loss, A, B[:3], SIGN_GRID)
    raises(ValueError, r"hinge_embedding_loss: input of shape \(5, 4\), target of shape "
           r"\(3,\)", F.hinge_embedding_loss, A, SIGNS[:3])
    raises(ValueError, r"soft_margin_loss: input of shape \(5, 4\), target of shape \(5,\)",
           F.soft_margin_loss, A, SIGNS)
    raises(RuntimeError, "soft_margin_loss: the loss is not differentiable with respect to "
           "target", F.soft_margin_loss, A, mg.tensor(SIGN_GRID, requires_grad=True))


def test_triplet_losses_refuse_a_margin_that_is_not_positive_and_mismatched_dims():
    for margin in (0.0, -1.0):
        raises(ValueError, "triplet_margin_loss: margin must be greater than 0",
               F.triplet_margin_loss, A, B, A, margin=margin)
        raises(ValueError, "triplet_margin_with_distance_loss: margin must be greater than 0",
               F.triplet_margin_with_distance_loss, A, B, A, margin=margin)
        raises(ValueError, "TripletMarginLoss: margin must be greater than 0",
               nn.TripletMarginLoss, margin=margin)
        raises(ValueError, "TripletMarginWithDistanceLoss: margin must be greater than 0",
               nn.TripletMarginWithDistanceLoss, margin=margin)
    raises(RuntimeError, r"triplet_margin_loss: .*same number of dimensions.*anchor of shape "
           r"\(5, 4\), positive \(4,\) and negative \(5, 4\)", F.triplet_margin_loss, A, B[0],
           A)
    raises(RuntimeError, "triplet_margin_with_distance_loss: .*same number of dimensions",
           F.triplet_margin_with_distance_loss, A, B[0], A)


def test_multi_margin_loss_errors_name_the_shapes_and_classes():
    raises(ValueError, "multi_margin_loss: only p == 1 and p == 2 supported, got p=3",
           F.multi_margin_loss, A, CLASSES, p=3)
    raises(ValueError, "MultiMarginLoss: only p == 1 and p == 2 supported",
           nn.MultiMarginLoss, p=3)
    raises(ValueError, r"MultiMarginLoss: expected weight to be None or 1D tensor, got 2D",
           nn.MultiMarginLoss, weight=mg.ones(2, 2))
    raises(RuntimeError, r"multi_margin_loss: target should be 1-D.*expected target of shape "
           r"\(5,\), but got \(3,\) for input of shape \(5, 4\)", F.multi_margin_loss, A,
           CLASSES[:3])
    raises(IndexError, r"multi_margin_loss: target out of range: it holds class index 4, but "
           r"the input of shape \(5, 4\) has C = 4 classes", F.multi_margin_loss, A,
           np.array([0, 4, 1, 1, 2]))
    raises(TypeError, "multi_margin_loss: target has dtype float64", F.multi_margin_loss, A,
           CLASSES * 1.0)
    raises(RuntimeError, r"multi_margin_loss: expected non-empty vector or matrix.*\(2, 5, 4\)",
           F.multi_margin_loss, mg.ones(2, 5, 4), CLASSES[:2])
    raises(ValueError, r"multi_margin_loss: weight tensor should be defined.*weight of shape "
           r"\(3,\)", F.multi_margin_loss, A, CLASSES, weight=mg.ones(3, dtype=mg.float64))


def test_multilabel_losses_errors_name_the_shapes():
    raises(RuntimeError, r"multilabel_margin_loss: inconsistent target size: target of shape "
           r"\(5,\) for input of shape \(5, 4\)", F.multilabel_margin_loss, A, CLASSES)
    raises(IndexError, "multilabel_margin_loss: target is out of range",
           F.multilabel_margin_loss, A, MULTILABEL - 1)
    raises(IndexError, "multilabel_soft_margin_loss: input needs a class dim",
           F.multilabel_soft_margin_loss, mg.tensor(1.0), mg.tensor(1.0))
    raises(ValueError, r"multilabel_soft_margin_loss: input of shape \(5, 4\), target of "
           r"shape \(3,\)", F.multilabel_soft_margin_loss, A, np.ones(3))


def test_likelihood_losses_errors_name_the_shapes():
    raises(ValueError, r"gaussian_nll_loss: var is of incorrect size: var of shape \(4,\) for "
           r"input of shape \(5, 4\)", F.gaussian_nll_loss, A, B, mg.ones(4, dtype=mg.float64))
    raises(ValueError, "gaussian_nll_loss: var has negative entry", F.gaussian_nll_loss, A, B,
           -mg.ones(5, 4, dtype=mg.float64))
    raises(ValueError, "gaussian_nll_loss: var has negative entry", F.gaussian_nll_loss, A, B,
           -1.0)
    raises(ValueError, r"poisson_nll_loss: input of shape \(5, 4\), target of shape \(3,\)",
           F.poisson_nll_loss, A, np.ones(3))


@pytest.mark.parametrize("functional, args", [
    ("poisson_nll_loss", (A, COUNTS)), ("gaussian_nll_loss", (A, B, 1.0)),
    ("soft_margin_loss", (A, SIGN_GRID)), ("margin_ranking_loss", (A, B, SIGN_GRID)),
    ("triplet_margin_with_distance_loss", (A, B, A)),
])
def test_an_unknown_reduction_is_refused_by_name(functional, args):
    raises(ValueError, f"{functional}: reduction must be one of", getattr(F, functional), *args,
           reduction="average")


# --- CTC --------------------------------------------------------------------------------------

LOGITS = rng.standard_normal((6, 3, 5))  # (T, N, C)
CTC_TARGETS = np.array([[1, 1, 4], [2, 3, 3], [4, 1, 2]])
CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS = [6, 5, 4], [2, 3, 0]


def ctc_pair(torch, targets, input_lengths, target_lengths, logits=LOGITS, **kwargs):
    """Our loss and PyTorch's, of log_softmax(logits), and the two logits leaves."""
    (x,), leaves = build(mg, (Grad(logits),))
    (tx,), torch_leaves = build(torch, (Grad(logits),))
    dim = logits.ndim - 1
    ours = nn.CTCLoss(**kwargs)(F.log_softmax(x, dim), mg.tensor(targets), input_lengths,
                                target_lengths)
    theirs = torch.nn.CTCLoss(**kwargs)(tx.log_softmax(dim), torch.tensor(targets),
                                        torch.tensor(input_lengths),
                                        torch.tensor(target_lengths))
    return ours, theirs, leaves, torch_leaves


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_loss_matches_pytorch_for_each_reduction(torch, reduction):
    assert_same(*ctc_pair(torch, CTC_TARGETS, CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS,
                          reduction=reduction))


def test_ctc_loss_takes_concatenated_targets_and_another_blank(torch):
    concatenated = np.array([1, 1, 2, 3, 3, 4])
    assert_same(*ctc_pair(torch, concatenated, [6, 5, 4], [2, 3, 1], reduction="none"))
    assert_same(*ctc_pair(torch, CTC_TARGETS - 1, [6, 5, 4], [3, 1, 2], blank=4))


def test_ctc_loss_of_one_sequence(torch):
    assert_same(*ctc_pair(torch, np.array([1, 3]), 6, 2, logits=LOGITS[:, 0],
                          reduction="none"))


def test_ctc_loss_of_an_impossible_target_is_infinite_or_zero_with_zero_infinity(torch):
    """Three 1s need 5 frames (a blank between the repeats); 4 cannot hold them."""
    targets, lengths = np.array([[1, 1, 1], [2, 3, 3], [4, 1, 2]]), ([4, 5, 4], [3, 3, 3])
    ours, theirs, _, _ = ctc_pair(torch, targets, *lengths, reduction="none")
    assert np.isinf(ours[0].item()) and np.isinf(theirs[0].item())
    np.testing.assert_allclose(ours.detach().numpy()[1:], theirs.detach().numpy()[1:])
    assert_same(*ctc_pair(torch, targets, *lengths, reduction="none", zero_infinity=True))


def test_ctc_loss_of_an_empty_input_and_target_is_zero(torch):
    assert_same(*ctc_pair(torch, CTC_TARGETS, [0, 5, 4], [0, 3, 0], reduction="none"))


def test_ctc_loss_gradient_is_the_true_one_where_pytorchs_is_that_of_the_logits(torch):
    """Given log_probs directly, PyTorch returns exp(log_probs) - occupancy (the gradient
    with respect to the logits); minigrad returns -occupancy, the derivative of the loss
    (so both agree once the gradient goes through log_softmax)."""
    log_probs = LOGITS - np.log(np.exp(LOGITS).sum(2, keepdims=True))
    lp = mg.tensor(log_probs, requires_grad=True)
    tlp = torch.tensor(log_probs, requires_grad=True)
    F.ctc_loss(lp, CTC_TARGETS, CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS, reduction="sum").backward()
    torch.nn.functional.ctc_loss(tlp, torch.tensor(CTC_TARGETS), CTC_INPUT_LENGTHS,
                                 CTC_TARGET_LENGTHS, reduction="sum").backward()
    frames = np.arange(6)[:, None] < np.array(CTC_INPUT_LENGTHS)[None, :]  # (T, N)
    np.testing.assert_allclose(tlp.grad.numpy() - lp.grad.numpy(),
                               np.exp(log_probs) * frames[..., None], atol=1e-10)
    assert mg.gradcheck(lambda x: F.ctc_loss(x, CTC_TARGETS, CTC_INPUT_LENGTHS,
                                             CTC_TARGET_LENGTHS), [lp])


def test_ctc_loss_errors_name_the_problem():
    log_probs = F.log_softmax(mg.tensor(LOGITS), 2)
    raises(RuntimeError, r"ctc_loss: blank must be in label range: blank=5, but log_probs of "
           r"shape \(6, 3, 5\) has C = 5", F.ctc_loss, log_probs, CTC_TARGETS,
           CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS, blank=5)
    raises(RuntimeError, r"ctc_loss: expected input_lengths to have value at most 6 .*got "
           "value 7", F.ctc_loss, log_probs, CTC_TARGETS, [7, 5, 4], CTC_TARGET_LENGTHS)
    raises(RuntimeError, r"ctc_loss: input_lengths must hold 3 integer length\(s\)",
           F.ctc_loss, log_probs, CTC_TARGETS, [6, 5], CTC_TARGET_LENGTHS)
    raises(RuntimeError, r"ctc_loss: padded targets of shape \(3, 3\) do not hold "
           r"target_lengths \[4, 3, 0\]", F.ctc_loss, log_probs, CTC_TARGETS,
           CTC_INPUT_LENGTHS, [4, 3, 0])
    raises(RuntimeError, r"ctc_loss: 1-D targets .*sum\(target_lengths\) = 5, but targets "
           r"has shape \(4,\)", F.ctc_loss, log_probs, np.array([1, 2, 3, 4]),
           CTC_INPUT_LENGTHS, [2, 3, 0])
    raises(IndexError, r"ctc_loss: targets hold class 5, but log_probs of shape \(6, 3, 5\) "
           "has C = 5", F.ctc_loss, log_probs, CTC_TARGETS + 3, CTC_INPUT_LENGTHS,
           CTC_TARGET_LENGTHS)
    raises(ValueError, "ctc_loss: a target holds the blank class 0", F.ctc_loss, log_probs,
           CTC_TARGETS - 1, CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS)
    raises(RuntimeError, r"ctc_loss: log_probs must be \(T, N, C\)", F.ctc_loss,
           log_probs[0, 0], CTC_TARGETS, CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS)


@pytest.mark.parametrize("zero_infinity", [True, False])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_a_target_every_alignment_of_which_has_probability_0_is_infinite(
        zero_infinity, reduction):
    torch = pytest.importorskip("torch")
    generator = torch.Generator().manual_seed(0)
    log_probs = torch.log_softmax(torch.randn(8, 2, 5, dtype=torch.float64,
                                              generator=generator), -1)
    log_probs[:, :, 3] = -float("inf")  # class 3 never: the second target is impossible
    targets, lengths = torch.tensor([[1, 2], [3, 4]]), (torch.tensor([8, 8]), torch.tensor([2, 2]))
    ours_in = mg.tensor(log_probs.numpy(), requires_grad=True)
    theirs_in = log_probs.clone().requires_grad_()
    ours = F.ctc_loss(ours_in, mg.tensor(targets.numpy()), *(mg.tensor(x.numpy()) for x in lengths),
                      reduction=reduction, zero_infinity=zero_infinity)
    theirs = torch.nn.functional.ctc_loss(theirs_in, targets, *lengths, reduction=reduction,
                                          zero_infinity=zero_infinity)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-10)
    if zero_infinity:  # the impossible sequence adds nothing to the gradient
        ours.sum().backward()
        theirs.sum().backward()
        assert np.isfinite(ours_in.grad.numpy()).all()
        assert not ours_in.grad.numpy()[:, 1].any()
