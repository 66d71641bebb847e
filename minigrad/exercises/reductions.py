"""Chapter 05's classic mistakes (reductions), out of the notebook so that its test cells
do not show the answers: ``{sentence naming the mistake: fn(x, g) -> wrong gradient}``
for ``dim=1, keepdim=False`` on a 2-D ``x`` (``g`` is the upstream gradient, shape
``(m,)``), as ``check_function(..., mistakes=...)`` takes them."""

from __future__ import annotations

import numpy as np

from .checks import check_value, checker, wrong_output
from .prerequisites import reference_for

BROADCAST_WRONG_WAY = (
    "the gradient was broadcast along the wrong dimension: put the reduced dimension back "
    "with np.expand_dims (the unreduce helper) before multiplying.")


def _column(g: np.ndarray) -> np.ndarray:
    return g[:, None]


def _winners(x: np.ndarray) -> np.ndarray:
    return x == x.max(axis=1, keepdims=True)


def _share(winners: np.ndarray, count: np.ndarray | int) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 is the mistake
        return winners / count


def _deviations(x: np.ndarray) -> np.ndarray:
    return x - x.mean(axis=1, keepdims=True)


def _numerator(x: np.ndarray) -> np.ndarray:  # softmax's
    return np.exp(x - x.max(axis=1, keepdims=True))


def _dims(dim, ndim: int) -> tuple:
    if dim is None:
        return tuple(range(ndim))
    return tuple(sorted(d % ndim for d in ((dim,) if isinstance(dim, int) else dim)))


def _count(x: np.ndarray, dim) -> int:
    return int(np.prod([x.shape[d] for d in _dims(dim, x.ndim)]))


def builtin_var(x: np.ndarray, dim, keepdim: bool, correction: int) -> np.ndarray:
    """minigrad's own var, on and to arrays: the reference for the ``variance`` exercise."""
    import minigrad as mg

    return mg.tensor(x).var(dim, keepdim=keepdim, correction=correction).numpy()


@reference_for(5, "variance")
def reference_variance(x: np.ndarray, dim=None, keepdim: bool = False,
                       correction: int = 1) -> np.ndarray:
    """The reference answer of exercise 5, ``variance``, with its signature: what
    ``MyVar``'s check swaps in for the student's (``uses={"variance": ...}``)."""
    dims = _dims(dim, x.ndim)
    centered = x - x.mean(axis=dims, keepdims=True)
    return np.sum(centered**2, axis=dims, keepdims=keepdim) / (_count(x, dim) - correction)


# for the plain-NumPy variance(x, dim, keepdim, correction): fn(x, dim, keepdim, correction)
VARIANCE_MISTAKES = {
    "the correction was ignored: you divided by N. Divide by N - correction (the "
    "default, correction=1, gives N - 1).":
        lambda x, dim, keepdim, correction: None if correction == 0 else
        builtin_var(x, dim, keepdim, correction) * (_count(x, dim) - correction)
        / _count(x, dim),
    "you divided by N - 1 whatever the correction: with correction=0, divide by N.":
        lambda x, dim, keepdim, correction: None if correction == 1 else
        builtin_var(x, dim, keepdim, 1),
    "the mean was not subtracted: that is the average of the squares, not of the "
    "squared deviations from the mean.":
        lambda x, dim, keepdim, correction:
        np.sum(x**2, axis=_dims(dim, x.ndim), keepdims=keepdim)
        / (_count(x, dim) - correction),
    "you divided by x.size - correction, with x.size the number of ALL elements: N is "
    "the number of elements that go into one output, the product of the reduced "
    "dimensions' sizes.":
        lambda x, dim, keepdim, correction: None if _count(x, dim) == x.size else
        builtin_var(x, dim, keepdim, correction) * (_count(x, dim) - correction)
        / (x.size - correction),
}

SUM_MISTAKES = {
    "the gradient was not broadcast back: it still has the output's shape. Put the "
    "summed dimension back (np.expand_dims) and stretch it to x's shape "
    "(np.broadcast_to).": lambda x, g: g,
    "the gradient was broadcast along the wrong dimension: a bare (m,) broadcasts as a "
    "row, so each row got the whole upstream vector. Put the summed dimension back with "
    "np.expand_dims(grad_output, dims) before broadcasting.":
        lambda x, g: np.broadcast_to(g, x.shape),
    "the summed dimension is back with size 1, but the gradient was not stretched to "
    "x's shape: finish with np.broadcast_to(..., x.shape).":
        lambda x, g: _column(g),
}

MEAN_MISTAKES = {
    "the 1/N is missing: this is the gradient of the sum (or you divided by 1, e.g. by "
    "len(dims), the number of reduced dimensions). Divide by N, the number of elements "
    "averaged into each output: the product of the reduced dimensions' sizes.":
        lambda x, g: np.broadcast_to(_column(g), x.shape),
    "it was divided by x.size, the number of ALL elements, instead of N, the number "
    "averaged into each output (the product of the reduced dimensions' sizes).":
        lambda x, g: np.broadcast_to(_column(g), x.shape) / x.size,
    "the gradient was broadcast along the wrong dimension: put the reduced dimension "
    "back with np.expand_dims (the unreduce helper) before broadcasting.":
        lambda x, g: np.broadcast_to(g, x.shape) / x.shape[1],
    "the reduced dimension is back with size 1, but the gradient was not stretched to "
    "x's shape: finish with np.broadcast_to(..., x.shape), as in MySum.":
        lambda x, g: _column(g) / x.shape[1],
}

# MyMean with dim=(0, 2), keepdim=True on a 3-D x of shape (3, m, 4): g is (1, m, 1)
ONE_SIZE = (
    "it was divided by the size of only one reduced dimension: for dim=(0, 2), N is the "
    "product of both sizes (x.shape[0] * x.shape[2]), the number of elements averaged "
    "into each output.")
MEAN_OVER_0_2_MISTAKES = {
    ONE_SIZE: lambda x, g: np.broadcast_to(g, x.shape) / x.shape[0],
    ONE_SIZE + " ": lambda x, g: np.broadcast_to(g, x.shape) / x.shape[2],
    "it was divided by len(dims), the number of reduced dimensions: N is the product of "
    "their sizes.": lambda x, g: np.broadcast_to(g, x.shape) / 2,
}

MAX_MISTAKES = {
    "every element got the upstream gradient, as for a sum. Only the maximal elements "
    "affect a max: the others get 0.": lambda x, g: np.broadcast_to(_column(g), x.shape),
    "each tied element got the WHOLE upstream gradient. With k ties, each gets 1/k of it "
    "(divide by the number of winners in its reduced slice).":
        lambda x, g: _column(g) * _winners(x),
    "only the first of the tied elements got the gradient (argmax picks one; "
    "torch.max(x, dim) does this). minigrad splits it evenly between ties.":
        lambda x, g: _column(g) * np.eye(x.shape[1])[x.argmax(axis=1)],
    BROADCAST_WRONG_WAY:
        lambda x, g: g[None, :] * _share(_winners(x), _winners(x).sum(axis=1, keepdims=True)),
    "the saved maxima lost their dimension (np.max without keepdims=True), so x == "
    "biggest compared each row with the wrong maxima: some rows had no winner and "
    "divided 0 by 0. Save biggest with keepdims=True.":
        lambda x, g: _column(g) * _share(x == x.max(axis=1)[None, :],
                                         (x == x.max(axis=1)[None, :]).sum(axis=1,
                                                                           keepdims=True)),
    "the count of winners lost its dimension (sum without keepdims=True), so it divided "
    "along the wrong axis. Count them with winners.sum(axis=ctx.dims, keepdims=True).":
        lambda x, g: _column(g) * _share(_winners(x), _winners(x).sum(axis=1)[None, :]),
    "the winners were counted in the whole array (winners.sum()), not per reduced slice: "
    "count them with winners.sum(axis=ctx.dims, keepdims=True).":
        lambda x, g: _column(g) * _share(_winners(x), _winners(x).sum()),
}

VAR_MISTAKES = {  # correction=1, so N - c = x.shape[1] - 1
    "the 2 from the square is missing: d(u^2)/du = 2u.":
        lambda x, g: _column(g) * _deviations(x) / (x.shape[1] - 1),
    "backward divides by N, but forward divided by N - correction: use the same "
    "denominator in both (keep it on ctx).":
        lambda x, g: _column(g) * 2 * _deviations(x) / x.shape[1],
    "the mean was not subtracted: the gradient is 2 (x - mean) / (N - c), with the "
    "deviations from the mean, not x itself.":
        lambda x, g: _column(g) * 2 * x / (x.shape[1] - 1),
    BROADCAST_WRONG_WAY: lambda x, g: g[None, :] * 2 * _deviations(x) / (x.shape[1] - 1),
    "backward divides by x.size - correction, with x.size the number of ALL elements: N "
    "is the number of elements that go into one output (the product of the reduced "
    "dimensions' sizes), the same N - correction as in forward (keep it on ctx).":
        lambda x, g: _column(g) * 2 * _deviations(x) / (x.size - 1),
    "there is an extra term -1/N in (x - mean - 1/N): the path through the mean adds "
    "(1/N) * sum_j d_j, which is zero because deviations from the mean add up to zero. "
    "The gradient is 2 (x - mean) / (N - c), nothing more.":
        lambda x, g: _column(g) * 2 * (_deviations(x) - 1 / x.shape[1]) / (x.shape[1] - 1),
    "there is an extra term -2 (x - mean) / N (2/N times the deviations, from the path "
    "through the mean): that path adds (1/N) * sum_j d_j, which is zero because "
    "deviations from the mean add up to zero. The gradient is 2 (x - mean) / (N - c), "
    "nothing more.":
        lambda x, g: _column(g) * 2 * _deviations(x) * (1 / (x.shape[1] - 1)
                                                        - 1 / x.shape[1]),
}

LOGSUMEXP_MISTAKES = {
    "the maximum was not added back: log(sum(exp(x - M))) is LSE(x) - M. Taking M out of "
    "the exponent must be undone outside the log: out = M + log(sum(exp(x - M))).":
        wrong_output(lambda x: np.log(np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1))),
    "the gradient is exp(x - max), softmax's numerator only: divide by the sum over the "
    "dimension (or use exp(x - out), with out the logsumexp itself).":
        lambda x, g: _column(g) * _numerator(x),
    BROADCAST_WRONG_WAY:
        lambda x, g: g[None, :] * _numerator(x) / _numerator(x).sum(axis=1, keepdims=True),
    "out was saved without its reduced dimension, so x - out lined each row up with the "
    "wrong outputs: save out with the dimension kept (keepdims=True), then squeeze only "
    "what you return.":
        lambda x, g: _column(g) * np.exp(
            x - np.log(np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1))[None, :]
            - x.max(axis=1)[None, :]),
}

# --- exercise 3: predict the gradient of a tie ----------------------------------------

TIE = [1.0, 3.0, 3.0, 2.0]  # x, with L = 2 * max(x)
TIE_PREDICTION_MISTAKES = {  # wrong predictions, never the right one
    "each tied element got the whole upstream gradient (2 each). A tie has no single "
    "derivative: the shares of the tied elements must add up to the upstream gradient.":
        [0.0, 2.0, 2.0, 0.0],
    "only one of the tied elements got it: that is what torch.max(x, dim) does (it "
    "follows the returned index). minigrad's max does not pick one of the tied elements.":
        [0.0, 2.0, 0.0, 0.0],
    "every element got the upstream gradient, as for a sum. A max only depends on its "
    "maximal elements; the others get 0.": [2.0, 2.0, 2.0, 2.0],
    "the shares add up to 1, but the upstream gradient is 2 (L = 2 * max(x)): a max "
    "passes all of it on, so the shares of x's elements add up to 2.":
        [0.0, 1.0, 0.0, 0.0],
    "the shares add up to 1, but the upstream gradient is 2 (L = 2 * max(x)): a max "
    "passes all of it on, so the shares of x's elements add up to 2. ":
        [0.0, 0.5, 0.5, 0.0],
}


@checker
def check_tie_prediction(prediction: object) -> None:
    """Exercise 3: the predicted ``x.grad`` for ``x = [1, 3, 3, 2]`` and ``L = 2 *
    max(x)``, against what minigrad's own max gives. A wrong prediction is told what is
    wrong, never the answer (``reveal=False``), and the answer is not written here."""
    from ..tensor import Tensor

    x = Tensor(np.array(TIE), requires_grad=True)
    (x.max() * 2.0).backward()
    check_value.__wrapped__(prediction, x.grad.numpy().tolist(), "your predicted gradient",
                            reveal=False, mistakes=TIE_PREDICTION_MISTAKES)


__all__ = ["LOGSUMEXP_MISTAKES", "MAX_MISTAKES", "MEAN_MISTAKES", "MEAN_OVER_0_2_MISTAKES",
           "SUM_MISTAKES", "TIE_PREDICTION_MISTAKES", "VARIANCE_MISTAKES", "VAR_MISTAKES",
           "builtin_var", "check_tie_prediction", "reference_variance"]
