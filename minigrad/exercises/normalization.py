"""Chapter 11's classic mistakes (batch norm, layer norm, dropout, initialisation), out of
the notebook so that its test cells do not show the answers, and ``check_dropout``, the
training-mode check of a dropout layer (``check_module`` compares a random layer only in
eval mode).

- ``BATCHNORM_MISTAKES``: wrong gradients of batch norm over the batch, ``{sentence:
  fn(x, weight, bias, grad_output) -> (grad_x, grad_weight, grad_bias)}``, for
  ``check_function``.
- ``BATCHNORM1D_MISTAKES``, ``LAYERNORM_MISTAKES``, ``DROPOUT_MISTAKES``: wrong modules,
  ``{sentence: module class}``, for ``check_module(..., mistakes=...)``.
- ``KAIMING_MISTAKES``: wrong standard deviations, ``{sentence: fn(shape) -> std}``, for
  ``check_array_function``.
- ``with_random_affine(nn.LayerNorm)``: the reference layer with a random weight and bias
  (ones and zeros would hide a forgotten scale or shift).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..function import Function
from ..state import enable_grad, get_rng_state, manual_seed, no_grad, set_rng_state
from ..tensor import Tensor
from .checks import _student_error, check_module, checker, wrong_output
from .compare import CheckFailed
from .prerequisites import reference_for

EPS = 1e-5


def _parts(x: np.ndarray, weight: np.ndarray, g: np.ndarray, eps: str = "inside") -> tuple:
    """xhat, 1/std, the batch size and g * weight, for batch norm over axis 0 (``eps``:
    "outside" or "missing" for two mistakes)."""
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    inv_std = 1 / {"inside": np.sqrt(var + EPS), "outside": np.sqrt(var) + EPS,
                   "missing": np.sqrt(var)}[eps]
    return (x - mean) * inv_std, inv_std, x.shape[0], g * weight


def _dx(xhat: np.ndarray, inv_std: np.ndarray, n: int, g: np.ndarray, mean_term: bool = True,
        var_term: bool = True) -> np.ndarray:
    out = n * g
    if mean_term:
        out = out - g.sum(axis=0)
    if var_term:
        out = out - xhat * (g * xhat).sum(axis=0)
    return inv_std / n * out


def _mean_and_var_constant(x, weight, bias, g):
    xhat, inv_std, n, gw = _parts(x, weight, g)
    return gw * inv_std, (g * xhat).sum(axis=0), g.sum(axis=0)


def _no_mean_term(x, weight, bias, g):
    xhat, inv_std, n, gw = _parts(x, weight, g)
    return _dx(xhat, inv_std, n, gw, mean_term=False), (g * xhat).sum(axis=0), g.sum(axis=0)


def _no_var_term(x, weight, bias, g):
    xhat, inv_std, n, gw = _parts(x, weight, g)
    return _dx(xhat, inv_std, n, gw, var_term=False), (g * xhat).sum(axis=0), g.sum(axis=0)


def _no_gamma(x, weight, bias, g):
    xhat, inv_std, n, _ = _parts(x, weight, g)
    return _dx(xhat, inv_std, n, g), (g * xhat).sum(axis=0), g.sum(axis=0)


def _weight_grad_without_xhat(x, weight, bias, g):
    xhat, inv_std, n, gw = _parts(x, weight, g)
    return _dx(xhat, inv_std, n, gw), g.sum(axis=0), g.sum(axis=0)


def _weight_grad_with_x(x, weight, bias, g):
    xhat, inv_std, n, gw = _parts(x, weight, g)
    return _dx(xhat, inv_std, n, gw), (g * x).sum(axis=0), g.sum(axis=0)


def _bias_grad_averaged(x, weight, bias, g):
    xhat, inv_std, n, gw = _parts(x, weight, g)
    return _dx(xhat, inv_std, n, gw), (g * xhat).sum(axis=0), g.mean(axis=0)


def small_variance(shape: tuple, seed: int = 0, std: float = 0.01) -> np.ndarray:
    """An input of standard deviation ``std`` around 0 (variance 1e-4): there eps = 1e-5
    changes the output by 5%, so a missing or misplaced eps shows (with a variance near 1
    it hides below the tolerance)."""
    return np.random.default_rng(seed).normal(0.0, std, size=shape)


def _normalised_wrongly(x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
                        eps: str) -> np.ndarray:
    mean, var = x.mean(axis=0), x.var(axis=0)
    std = np.sqrt(var) + EPS if eps == "outside" else np.sqrt(var)
    return (x - mean) / std * weight + bias


EPS_OUTSIDE = ("eps is added outside the square root, sqrt(var) + eps: PyTorch adds it to "
               "the variance, sqrt(var + eps). (It matters most where the variance is "
               "small: the check's first batch has a variance of about 1e-4.)")
EPS_MISSING = ("eps is missing: divide by sqrt(var + eps), not sqrt(var). It keeps a "
               "feature of (nearly) constant values from a division by (nearly) zero, and "
               "matters most where the variance is small: the check's first batch has a "
               "variance of about 1e-4.")

def _eps_wrong(eps: str) -> Callable:
    def gradients(x, weight, bias, g):
        xhat, inv_std, n, gw = _parts(x, weight, g, eps)
        return _dx(xhat, inv_std, n, gw), (g * xhat).sum(axis=0), g.sum(axis=0)
    return gradients


BATCHNORM_MISTAKES = {
    EPS_OUTSIDE: wrong_output(lambda x, w, b: _normalised_wrongly(x, w, b, "outside")),
    EPS_MISSING: wrong_output(lambda x, w, b: _normalised_wrongly(x, w, b, "missing")),
    # the same two, seen in the gradients first (backward uses the saved 1/std)
    EPS_OUTSIDE.replace("sqrt(var) + eps:", "sqrt(var) + eps (in the std backward "
                        "uses):"): _eps_wrong("outside"),
    EPS_MISSING.replace("eps is missing:", "eps is missing (from the std backward "
                        "uses):"): _eps_wrong("missing"),
    "the mean and the variance were treated as constants: grad_x = grad_output * weight "
    "/ std forgets that every x_i also moves the batch's mean and variance. Add the two "
    "terms through them: dx = inv_std / N * (N*g - sum(g) - xhat * sum(g * xhat)), with "
    "g = grad_output * weight and the sums over the batch (axis 0).": _mean_and_var_constant,
    "the term through the mean is missing: subtract sum(g) (over the batch, axis 0) in "
    "dx = inv_std / N * (N*g - sum(g) - xhat * sum(g * xhat)).": _no_mean_term,
    "the term through the variance is missing: subtract xhat * sum(g * xhat) (sum over "
    "the batch, axis 0) in dx = inv_std / N * (N*g - sum(g) - xhat * sum(g * xhat)).":
        _no_var_term,
    "the weight (gamma) is missing from grad_x: the output is xhat * weight + bias, so "
    "the gradient reaching xhat is g = grad_output * weight; use that g in the formula.":
        _no_gamma,
    "the weight's gradient is sum(grad_output): the weight multiplies xhat, so its "
    "gradient is sum(grad_output * xhat) over the batch (that sum(grad_output) is the "
    "bias's).": _weight_grad_without_xhat,
    "the weight's gradient uses x instead of the normalised xhat: the weight multiplies "
    "xhat = (x - mean) / std, so its gradient is sum(grad_output * xhat) over the batch.":
        _weight_grad_with_x,
    "the bias's gradient was averaged over the batch: the bias is added to every row, so "
    "its gradient is the SUM of grad_output over axis 0.": _bias_grad_averaged,
}


# --- wrong modules ---------------------------------------------------------------------


def _batch_norm_module(biased_running: bool = False, momentum_swapped: bool = False,
                       count: bool = True, eps_outside: bool = False,
                       eps_missing: bool = False) -> type:
    """A BatchNorm1d over (N, C), right except for the named mistake."""
    from .. import nn

    class WrongBatchNorm1d(nn.Module):
        def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
            super().__init__()
            self.eps, self.momentum = eps, momentum
            self.weight = nn.Parameter(Tensor(np.ones(num_features, np.float32)))
            self.bias = nn.Parameter(Tensor(np.zeros(num_features, np.float32)))
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, np.float32)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, np.float32)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, np.int64)))

        def forward(self, x: Tensor) -> Tensor:
            if self.training:
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                n, m = x.shape[0], self.momentum
                with no_grad():
                    new_var = var if biased_running else var * n / (n - 1)
                    for buffer, value in ((self.running_mean, mean),
                                          (self.running_var, new_var)):
                        keep = m if momentum_swapped else 1 - m
                        buffer.copy_(keep * buffer + (1 - keep) * value)
                    if count:
                        self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            else:
                mean, var = self.running_mean, self.running_var
            scale = var.sqrt() + self.eps if eps_outside else (var + self.eps).sqrt()
            scale = var.sqrt() if eps_missing else scale
            return (x - mean) / scale * self.weight + self.bias

    return WrongBatchNorm1d


BATCHNORM1D_MISTAKES = {
    "the running variance was updated with the biased variance (divided by N): PyTorch "
    "normalises the batch with the biased variance but keeps the UNBIASED one, "
    "var * N / (N - 1), in running_var.": _batch_norm_module(biased_running=True),
    "the momentum is applied the wrong way round (0.9 on the new batch value): "
    "PyTorch's momentum is the weight of the NEW value, running = (1 - momentum) * "
    "running + momentum * batch_value, so with momentum = 0.1 the running estimate keeps "
    "90% of its old value.": _batch_norm_module(momentum_swapped=True),
    "num_batches_tracked was not counted: add 1 to it at every training-mode forward "
    "(under mg.no_grad(), like the running statistics).": _batch_norm_module(count=False),
    EPS_OUTSIDE: _batch_norm_module(eps_outside=True),
    EPS_MISSING: _batch_norm_module(eps_missing=True),
}


def _layer_norm_module(dims: str = "last", unbiased: bool = False, scale: bool = True,
                       shift: bool = True, eps: str = "inside") -> type:
    from .. import nn

    class WrongLayerNorm(nn.Module):
        def __init__(self, normalized_shape: int, eps: float = 1e-5):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(Tensor(np.ones(normalized_shape, np.float32)))
            self.bias = nn.Parameter(Tensor(np.zeros(normalized_shape, np.float32)))

        def forward(self, x: Tensor) -> Tensor:
            dim = {"last": -1, "batch": 0, "all": tuple(range(x.ndim))}[dims]
            mean = x.mean(dim=dim, keepdim=True)
            var = x.var(dim=dim, keepdim=True, correction=1 if unbiased else 0)
            std = {"inside": (var + self.eps).sqrt(), "outside": var.sqrt() + self.eps,
                   "missing": var.sqrt()}[eps]
            out = (x - mean) / std
            out = out * self.weight if scale else out
            return out + self.bias if shift else out

    return WrongLayerNorm


LAYERNORM_MISTAKES = {
    "LayerNorm normalised over the wrong axis (dim 0, the batch, as batch norm does): "
    "layer norm normalises each sample on its own, over its last dimension: "
    "mean(dim=-1, keepdim=True).": _layer_norm_module(dims="batch"),
    "LayerNorm normalised over the whole tensor (one mean for all samples): normalise "
    "each sample over its last dimension only, mean(dim=-1, keepdim=True).":
        _layer_norm_module(dims="all"),
    "the variance is the unbiased one (divided by D - 1): LayerNorm, like batch norm, "
    "normalises with the biased variance, var(dim=-1, correction=0).":
        _layer_norm_module(unbiased=True),
    "the weight is not applied: after normalising, multiply by self.weight (then add "
    "self.bias), so that the layer can learn any scale.": _layer_norm_module(scale=False),
    "the bias is not added: after normalising and scaling, add self.bias.":
        _layer_norm_module(shift=False),
    EPS_OUTSIDE: _layer_norm_module(eps="outside"),
    EPS_MISSING: _layer_norm_module(eps="missing"),
}


def _dropout_module(in_eval: str) -> type:
    from .. import nn

    class WrongDropout(nn.Module):
        def __init__(self, p: float = 0.5):
            super().__init__()
            self.p = p

        def forward(self, x: Tensor) -> Tensor:
            if self.training:
                keep = Tensor((np.random.default_rng(0).random(x.shape) >= self.p)
                              .astype(np.float32))
                return x * keep / (1 - self.p)
            return x * (1 - self.p) if in_eval == "scaled" else x / (1 - self.p)

    return WrongDropout


DROPOUT_MISTAKES = {
    "the output is scaled by (1 - p) in eval mode: that is the old, non-inverted dropout. "
    "With inverted dropout the kept values are divided by (1 - p) in TRAINING, so eval mode "
    "is the identity: return x unchanged.": _dropout_module("scaled"),
    "the output is divided by (1 - p) in eval mode too: the scaling belongs to training "
    "(it makes up for the zeroed values); in eval mode return x unchanged.":
        _dropout_module("divided"),
}


def with_random_affine(layer: Callable) -> Callable:
    """``layer(*args)`` with its weight and bias drawn at random (N(1, 0.5) and N(0, 0.5)),
    so that a forgotten scale or shift shows; a batch norm's running variance is small
    (0.0005 to 0.002) and its running mean near 0, so that eps matters in eval mode."""

    def make(*args: Any, **kwargs: Any) -> Any:
        module = layer(*args, **kwargs)
        with no_grad():
            if hasattr(module, "running_var"):
                rng = np.random.default_rng(3)
                module.running_var.copy_(Tensor(rng.uniform(
                    5e-4, 2e-3, module.running_var.shape).astype(np.float32)))
                module.running_mean.copy_(Tensor(rng.normal(
                    0, 0.01, module.running_mean.shape).astype(np.float32)))
            module.weight.copy_(module.weight + Tensor(
                np.random.default_rng(1).normal(0, 0.5, module.weight.shape)
                .astype(np.float32)))
            module.bias.copy_(Tensor(np.random.default_rng(2).normal(
                0, 0.5, module.bias.shape).astype(np.float32)))
        return module

    make.__name__ = getattr(layer, "__name__", "layer")
    return make


# --- Kaiming -----------------------------------------------------------------------------


def _fans(shape: tuple) -> tuple[int, int]:
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


KAIMING_MISTAKES = {
    "fan_out was used instead of fan_in: for a weight of shape (out, in, ...), fan_in = "
    "shape[1] times the kernel's size; with mode='fan_in' the forward pass keeps the "
    "variance of the activations.": lambda shape: math.sqrt(2 / _fans(shape)[1]),
    "the ReLU gain sqrt(2) is missing: ReLU zeroes half of its inputs and halves the "
    "second moment, so Kaiming's variance is 2 / fan_in, std = sqrt(2 / fan_in).":
        lambda shape: math.sqrt(1 / _fans(shape)[0]),
    "that is the variance, 2 / fan_in, not the standard deviation: take its square root.":
        lambda shape: 2 / _fans(shape)[0],
    "that is Xavier's std, sqrt(2 / (fan_in + fan_out)), made for tanh: for ReLU, "
    "Kaiming's is sqrt(2 / fan_in).": lambda shape: math.sqrt(2 / sum(_fans(shape))),
    "the kernel's size is missing from fan_in: for a convolution weight (out, in, kh, kw), "
    "each output adds in * kh * kw terms, so fan_in = in * kh * kw.":
        lambda shape: math.sqrt(2 / shape[1]),
}


def kaiming_reference(shape: tuple) -> float:
    """Kaiming's standard deviation for ReLU, mode='fan_in'."""
    return math.sqrt(2 / _fans(shape)[0])


# --- check_dropout -----------------------------------------------------------------------


def _ratio_words(value: float, p: float) -> str | None:
    """What a kept value's factor ``value`` (instead of 1/(1-p)) looks like."""
    for words, factor in (
            ("the kept values are not scaled: divide them by (1 - p), so that the "
             "expected output equals the input (inverted dropout).", 1.0),
            ("the kept values are divided by p instead of (1 - p): p is the probability "
             "of dropping, so the kept ones (a fraction 1 - p) are divided by 1 - p.", 1 / p),
            ("the kept values are multiplied by (1 - p) instead of divided by it: divide "
             "by (1 - p) in training so that the expected output equals the input.", 1 - p),
            ("the kept values are multiplied by p: divide them by (1 - p).", p)):
        if abs(value - factor) <= 1e-4 * max(1.0, factor):
            return words
    return None


@checker
def check_dropout(module: Callable, p: float = 0.25, *, mistakes: dict | None = None,
                  seed: int = 0) -> None:
    """Check a dropout layer ``module(p)``: in training mode every value is either zeroed
    or scaled by 1/(1-p), about a fraction p are zeroed, two calls draw different masks,
    and the gradient goes through the same mask as the forward (with the same scale);
    then ``check_module`` against ``nn.Dropout`` (eval mode: the identity) with
    ``mistakes`` (default ``DROPOUT_MISTAKES``)."""
    from .. import nn

    name = getattr(module, "__name__", type(module).__name__)
    built = f"{name}({p})"
    state = get_rng_state()
    manual_seed(seed)
    try:
        try:
            layer = module(p)
        except Exception as error:  # noqa: BLE001 - the student's code
            raise _student_error(error, built) from None
        rng = np.random.default_rng(seed)
        x_values = rng.uniform(1.0, 2.0, size=(200, 50)).astype(np.float32)
        v = rng.standard_normal(x_values.shape).astype(np.float32)
        layer.train()
        x = Tensor(x_values.copy(), requires_grad=True)
        call = f"{built} in training mode on an input of shape {x_values.shape}"
        try:
            with enable_grad():
                out = layer(x)
                if isinstance(out, Tensor) and out.requires_grad:
                    (out * Tensor(v)).sum().backward()
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, call) from None
        if not isinstance(out, Tensor):
            raise CheckFailed(f"{call}: returned {type(out).__name__}, expected a Tensor.")
        if tuple(out.shape) != x_values.shape:
            raise CheckFailed(f"{call}: the output has shape {tuple(out.shape)}, expected "
                              f"{x_values.shape} (dropout keeps the shape).")
        ratio = out.detach().numpy().astype(np.float64) / x_values
        zeroed = np.abs(ratio) < 1e-6
        if not zeroed.any():
            raise CheckFailed(f"{call}: no value was zeroed. Dropout zeroes each value with "
                              "probability p in training mode (self.training is True).")
        kept = ratio[~zeroed]
        scale = 1 / (1 - p)
        if np.ptp(kept) > 1e-4 * scale:
            raise CheckFailed(f"{call}: the kept values were multiplied by different "
                              f"factors (from {kept.min():.4g} to {kept.max():.4g}); each "
                              f"kept value must be multiplied by 1/(1 - p) = {scale:.4g}.")
        if abs(kept[0] - scale) > 1e-4 * scale:
            words = _ratio_words(float(kept[0]), p)
            raise CheckFailed(f"{call}: the kept values were multiplied by {kept[0]:.4g}, "
                              f"expected 1/(1 - p) = {scale:.4g}." +
                              (f"\n  It looks like {words}" if words else ""))
        fraction = float(zeroed.mean())
        if abs(fraction - p) > 0.03:
            words = ("\n  It looks like p was taken as the probability of KEEPING a value: "
                     "p is the probability of zeroing it, keep = (rand >= p)."
                     if abs(fraction - (1 - p)) <= 0.03 else "")
            raise CheckFailed(f"{call}: {fraction:.1%} of the values were zeroed, expected "
                              f"about p = {p:.0%}.{words}")
        with no_grad():
            again = layer(Tensor(x_values.copy())).numpy()
        if np.array_equal(again, out.detach().numpy()):
            raise CheckFailed(f"{call}: two calls zeroed the same values. Draw a new mask "
                              "at every forward (not once in __init__ or with a fixed "
                              "seed).")
        grad = x.grad.numpy() if x.grad is not None else None
        if grad is None:
            raise CheckFailed(f"{call}: no gradient reached the input. Build the output "
                              "with minigrad operations (x * mask), or return a gradient "
                              "from your Function's backward.")
        expected = ratio * v
        if not np.allclose(grad, expected, atol=1e-5, rtol=1e-4):
            if np.allclose(grad, (~zeroed) * v, atol=1e-5, rtol=1e-4):
                hint = ("the gradient is not scaled: it goes through the kept values "
                        "times 1/(1 - p), as the forward did.")
            elif np.allclose(grad, v, atol=1e-5, rtol=1e-4):
                hint = ("the gradient ignores the mask: the zeroed values had no effect on "
                        "the output, so their gradient is 0.")
            else:
                hint = ("the gradient does not use the forward's mask: save the mask in "
                        "forward (ctx.save_for_backward) and multiply grad_output by "
                        "mask / (1 - p); a new mask drawn in backward differs.")
            raise CheckFailed(f"{call}, backward with a random upstream gradient: the "
                              f"gradient of the input is wrong.\n  It looks like {hint}")
    finally:
        set_rng_state(state)
    check_module.__wrapped__(module, nn.Dropout, args=(p,), inputs=[[(6, 5)], [(1, 7)]],
                             mistakes=DROPOUT_MISTAKES if mistakes is None else mistakes,
                             seed=seed)


@reference_for(1, "my_batchnorm_backward")
class ReferenceBatchNormFunction(Function):
    """Exercise 1's answer: y = xhat * weight + bias over the batch (axis 0), eps 1e-5
    (the checks of code built on ``MyBatchNormFunction``, the layer ``MyBatchNorm1d``,
    use it)."""

    @staticmethod
    def forward(ctx: Any, x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
        xhat, inv_std, _, _ = _parts(x, weight, np.zeros_like(x))
        ctx.save_for_backward(xhat, inv_std, weight)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx: Any, grad_output: np.ndarray) -> tuple:
        xhat, inv_std, weight = ctx.saved_tensors
        n = grad_output.shape[0]
        return (_dx(xhat, inv_std, n, grad_output * weight), (grad_output * xhat).sum(axis=0),
                grad_output.sum(axis=0))


__all__ = ["BATCHNORM1D_MISTAKES", "BATCHNORM_MISTAKES", "DROPOUT_MISTAKES",
           "KAIMING_MISTAKES", "LAYERNORM_MISTAKES", "ReferenceBatchNormFunction",
           "check_dropout", "kaiming_reference",
           "small_variance", "with_random_affine"]
