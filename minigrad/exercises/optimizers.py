"""Chapter 09's classic mistakes (optimizers, schedules, clipping), out of the notebook so
that its test cells do not show the answers.

An optimizer's mistake needs memory (a momentum buffer kept wrongly is only wrong from the
second step on), so each one is a small wrong optimizer run alongside the check on the
same gradients: ``check_optimizer_step`` calls it once per parameter per step, in order,
and it keeps one state per parameter. ``*_mistakes(...)`` builds a fresh set for one check.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..optim.optimizer import Optimizer
from ..state import no_grad
from ..tensor import Tensor
from .checks import _student_error, check_value, checker
from .compare import CheckFailed, Variant, compare, describe
from .prerequisites import reference_for


NOT_IN_PLACE = (
    "the parameter did not change: `param = param - ...` makes a new array and binds the "
    "name to it, leaving the optimizer's array as it was. Change it in place: "
    "param -= lr * ... (or param[...] = ...).")


def _unchanged(param: np.ndarray, grad: np.ndarray, state: dict, lr: float) -> None:
    """What an update that rebinds ``param`` instead of changing it leaves."""


class _WrongOptimizer:
    """``update(param, grad, state, lr)`` changes ``param`` (a copy) in place, as a wrong
    ``update_param`` would; called as ``fn(param, grad, step)`` by the check."""

    def __init__(self, update: Callable, lrs: Sequence[float], n_params: int) -> None:
        self.update, self.lrs = update, list(lrs)
        self.states: list[dict[str, Any]] = [{} for _ in range(n_params)]
        self.calls = 0

    def __call__(self, param: np.ndarray, grad: np.ndarray, step: int) -> np.ndarray:
        state = self.states[self.calls % len(self.states)]
        self.calls += 1
        param = param.astype(np.float64)
        with np.errstate(all="ignore"):
            self.update(param, grad.astype(np.float64), state, self.lrs[step - 1])
        return param


# --- SGD with momentum -----------------------------------------------------------------


def sgd_momentum_mistakes(lrs: Sequence[float], momentum: float, weight_decay: float,
                          n_params: int = 2) -> dict[str, _WrongOptimizer]:
    """Wrong SGD-with-momentum updates, for ``check_optimizer_step(..., lrs=lrs,
    momentum=momentum, weight_decay=weight_decay)``."""

    def decayed(param: np.ndarray, grad: np.ndarray) -> np.ndarray:
        return grad + weight_decay * param

    def buffer_recreated(param, grad, state, lr):
        param -= lr * decayed(param, grad)  # b = g at every step: no momentum at all

    def lr_in_buffer(param, grad, state, lr):
        g = lr * decayed(param, grad)
        state["b"] = g if "b" not in state else momentum * state["b"] + g
        param -= state["b"]

    def averaged(param, grad, state, lr):
        g = decayed(param, grad)
        state["b"] = momentum * state.get("b", 0.0) + (1 - momentum) * g
        param -= lr * state["b"]

    def no_decay(param, grad, state, lr):
        state["b"] = grad if "b" not in state else momentum * state["b"] + grad
        param -= lr * state["b"]

    def decay_after_momentum(param, grad, state, lr):
        state["b"] = grad if "b" not in state else momentum * state["b"] + grad
        param -= lr * (state["b"] + weight_decay * param)

    def ascent(param, grad, state, lr):
        g = decayed(param, grad)
        state["b"] = g if "b" not in state else momentum * state["b"] + g
        param += lr * state["b"]

    wrong = {
        "the momentum buffer is not kept between steps: it is made anew from the gradient "
        "at every step, so this is plain SGD. Keep it in state (the dict the optimizer gives "
        "you for this parameter): state['momentum_buffer'] = b on the first step, and on "
        "later steps update that same buffer.": buffer_recreated,
        "the learning rate is inside the buffer (b = momentum * b + lr * g; p -= b). That is "
        "the same as PyTorch's form while lr is constant, but not once a scheduler changes "
        "lr (as here: the old steps keep their old lr). PyTorch's form keeps lr out: "
        "b = momentum * b + g, then p -= lr * b.": lr_in_buffer,
        "the buffer is an average, b = momentum * b + (1 - momentum) * g (that is "
        "dampening = momentum). PyTorch's SGD adds the whole gradient: b = momentum * b + g "
        "(and b = g on the first step).": averaged,
        "the weight decay is missing: add weight_decay * param to the gradient first, before "
        "it goes into the buffer.": no_decay,
        "the weight decay is added after the momentum (p -= lr * (b + weight_decay * p)): in "
        "PyTorch's SGD it is added to the gradient first, g = g + weight_decay * p, and then "
        "goes into the buffer with it.": decay_after_momentum,
        "the parameter moves up the gradient (p += ...): descent subtracts, p -= lr * b.":
            ascent,
    }
    return {sentence: _WrongOptimizer(update, lrs, n_params)
            for sentence, update in [*wrong.items(), (NOT_IN_PLACE, _unchanged)]}


# --- steps without zero_grad: the gradients accumulate in .grad -------------------------


BUFFER_IS_THE_GRADIENT = (
    "the momentum buffer is the gradient array itself (state['momentum_buffer'] = grad, "
    "without a copy): when zero_grad() is not called between two steps (gradient "
    "accumulation), backward adds the next gradient into that same array, and so into your "
    "buffer. `grad` belongs to p.grad and is read only: store a copy, grad.copy().")
GRADIENT_CHANGED = (
    "step() changed p.grad: `grad` is the parameter's gradient array and is read only. "
    "Was the momentum buffer the gradient array itself (state['momentum_buffer'] = grad, "
    "without a copy), then updated in place (buffer *= momentum)? Store a copy, "
    "grad.copy(), and make new arrays from grad (grad = grad + ..., not grad += ...).")


def _buffer_aliased(grads: list[np.ndarray], lr: float, momentum: float) -> list[np.ndarray]:
    """The updates (new minus old) of SGD whose first buffer is p.grad's own array: at
    the second step that array already holds the accumulated gradient of step 2."""
    updates, buffer = [], None
    for step, grad in enumerate(grads):
        if step == 0:
            buffer = grad
        elif step == 1:
            buffer = momentum * grad + grad
        else:
            buffer = momentum * buffer + grad
        updates.append(-lr * buffer)
    return updates


@checker
def check_steps_without_zero_grad(optimizer: Callable, reference: Callable, *,
                                  shapes: Sequence[tuple] = ((3, 4), (4,)), steps: int = 3,
                                  seed: int = 0, lr: float = 0.1, momentum: float = 0.9,
                                  atol: float = 1e-6, rtol: float = 1e-4) -> None:
    """``steps`` rounds of backward and ``step()`` with no ``zero_grad()`` between them (the
    gradients add up in .grad, in place, as for gradient accumulation), against
    ``reference`` built with the same ``lr`` and ``momentum``: each update, and that
    ``step()`` leaves p.grad alone. Catches a momentum buffer that is p.grad's own array."""
    name = getattr(optimizer, "__name__", repr(optimizer))
    rng = np.random.default_rng(seed)
    starts = [rng.uniform(-1, 1, size=s).astype(np.float32) for s in shapes]
    weights = [[rng.standard_normal(s).astype(np.float32) for s in shapes]
               for _ in range(steps)]
    built = f"{name}(lr={lr!r}, momentum={momentum!r})"
    mine_params = [Tensor(s.copy(), requires_grad=True) for s in starts]
    right_params = [Tensor(s.copy(), requires_grad=True) for s in starts]
    try:
        mine = optimizer(mine_params, lr=lr, momentum=momentum)
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, built) from None
    right = reference(right_params, lr=lr, momentum=momentum)
    seen: list[list[np.ndarray]] = [[] for _ in shapes]  # p.grad after each backward
    for step in range(steps):
        for params in (mine_params, right_params):
            sum(((p * p) * Tensor(w)).sum() for p, w in zip(params, weights[step])).backward()
        before = [p.detach().numpy().copy() for p in mine_params]
        grads = [p.grad.numpy().copy() for p in mine_params]
        for i, grad in enumerate(grads):
            seen[i].append(grad)
        try:
            mine.step()
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, f"{built}.step()") from None
        right.step()
        where = (f"{built}, backward and step() {step + 1} times without zero_grad() (the "
                 "gradients add up in .grad)")
        for i, p in enumerate(mine_params):
            if not np.array_equal(p.grad.numpy(), grads[i]):
                raise CheckFailed(f"{where}: step() {step + 1} changed the gradient of "
                                  f"parameter {i}.\n  It looks like {GRADIENT_CHANGED}")
        for i, (p, q) in enumerate(zip(mine_params, right_params)):
            compare(p.detach().numpy() - before[i], q.detach().numpy() - before[i],
                    f"{where}: the update of parameter {i} at step {step + 1}",
                    atol=atol, rtol=rtol,
                    variants=[Variant(BUFFER_IS_THE_GRADIENT,
                                      _buffer_aliased(seen[i], lr, momentum)[-1])])
    print(f"{name}: {steps} steps without zero_grad() (gradients accumulating) match "
          f"{getattr(reference, '__name__', 'the reference')}'s.")


# --- Adam and AdamW --------------------------------------------------------------------


@reference_for(2, "my_adam")
class ReferenceAdam(Optimizer):
    """Exercise 2's answer (Adam, weight decay as an L2 penalty), for the checks of code
    built on ``MyAdam`` (``MyAdamW``)."""

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param: np.ndarray, grad: np.ndarray, state: dict,
                     group: dict) -> None:
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        state["step"] += 1
        t = state["step"]
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad * grad
        m_hat = state["exp_avg"] / (1 - beta1**t)
        v_hat = state["exp_avg_sq"] / (1 - beta2**t)
        param -= group["lr"] * m_hat / (np.sqrt(v_hat) + group["eps"])



def _adam(param: np.ndarray, grad: np.ndarray, state: dict, lr: float, betas: tuple,
          eps: float, weight_decay: float, *, decoupled: bool = False, lr_in_decay: bool = True,
          decay_after: bool = False, correct_m: bool = True, correct_v: bool = True,
          step_offset: int = 0, stuck_t: bool = False, eps_inside: bool = False,
          also_l2: bool = False) -> None:
    """Adam (or AdamW) with switches for the classic mistakes; the defaults are PyTorch's.
    ``stuck_t``: t is 1 at every step (the count never stored back); ``also_l2``: AdamW
    that also adds the decay to the gradient (decayed twice)."""
    beta1, beta2 = betas
    state["t"] = state.get("t", 0) + 1
    t = 1 if stuck_t else state["t"] + step_offset
    if weight_decay and decoupled and not decay_after:
        param *= 1 - (lr if lr_in_decay else 1) * weight_decay
    if weight_decay and (also_l2 or not decoupled):
        grad = grad + weight_decay * param
    state["m"] = beta1 * state.get("m", 0.0) + (1 - beta1) * grad
    state["v"] = beta2 * state.get("v", 0.0) + (1 - beta2) * grad * grad
    m_hat = state["m"] / (1 - beta1**t) if correct_m else state["m"]
    v_hat = state["v"] / (1 - beta2**t) if correct_v else state["v"]
    denominator = np.sqrt(v_hat + eps) if eps_inside else np.sqrt(v_hat) + eps
    param -= lr * m_hat / denominator
    if weight_decay and decoupled and decay_after:  # the Adam step, then the shrinking
        param *= 1 - (lr if lr_in_decay else 1) * weight_decay


def adam_mistakes(lrs: Sequence[float], betas: tuple, eps: float, weight_decay: float,
                  n_params: int = 2) -> dict[str, _WrongOptimizer]:
    """Wrong Adam updates (Adam with L2 weight decay, as ``mg.optim.Adam``)."""
    def wrong(**switches: Any) -> Callable:
        return lambda p, g, s, lr: _adam(p, g, s, lr, betas, eps, weight_decay, **switches)

    named = {
        "the bias correction is missing: m and v start at zero, so in the first steps they "
        "are far too small (m is (1 - beta1) g at step 1). Divide m by 1 - beta1**t and v by "
        "1 - beta2**t, with t the number of this step (1, 2, ...). (If you did write one: "
        "at step 1 it was not applied. Was t 0 there, and a guard such as `if t` skipped "
        "it? The first step must have t = 1.)":
            wrong(correct_m=False, correct_v=False),
        "the step count t does not advance: the bias correction uses t = 1 at every step "
        "(step 1 was right, the later ones are not). Store the count back in the state, "
        "state['step'] = t (or state['step'] += 1), so that the next step has t = 2, "
        "then 3, and so on.": wrong(stuck_t=True),
        "the bias correction uses the wrong step: t counts from 0 (1 - beta**0 = 0 at the "
        "first step: a division by zero, hence nan or inf). Add 1 to the step count in "
        "state BEFORE using it, so the first step has t = 1.": wrong(step_offset=-1),
        "the bias correction uses t + 1 (the step counted twice, or from 1 and then "
        "incremented before use): the first step must use t = 1, so 1 - beta1**1.":
            wrong(step_offset=1),
        "only m is bias-corrected: divide v by 1 - beta2**t as well (or, as PyTorch does, "
        "divide sqrt(v) by sqrt(1 - beta2**t)).": wrong(correct_v=False),
        "only v is bias-corrected: divide m by 1 - beta1**t as well.": wrong(correct_m=False),
        "eps is inside the square root, sqrt(v_hat + eps): PyTorch's Adam adds it outside, "
        "sqrt(v_hat) + eps (it matters where v is small, and with eps this large).":
            wrong(eps_inside=True),
        "the weight decay is decoupled (p *= 1 - lr * weight_decay): that is AdamW. Adam's "
        "weight_decay is an L2 penalty: add weight_decay * p to the gradient, before the "
        "averages.": wrong(decoupled=True),
    }
    return {sentence: _WrongOptimizer(update, lrs, n_params)
            for sentence, update in [*named.items(), (NOT_IN_PLACE, _unchanged)]}


def adamw_mistakes(lrs: Sequence[float], betas: tuple, eps: float, weight_decay: float,
                   n_params: int = 2) -> dict[str, _WrongOptimizer]:
    """Wrong AdamW updates (decoupled weight decay, as ``mg.optim.AdamW``)."""
    def wrong(**switches: Any) -> Callable:
        return lambda p, g, s, lr: _adam(p, g, s, lr, betas, eps, **switches)

    def group_changed() -> Callable:
        changed = []  # the shared group's weight_decay is 0 after the first call

        def update(p, g, s, lr):
            _adam(p, g, s, lr, betas, eps, 0.0 if changed else weight_decay, decoupled=True)
            changed.append(True)
        return update

    named = {
        "the decay is applied twice: the parameter is shrunk (p *= 1 - lr * weight_decay, "
        "right) and MyAdam's update then adds weight_decay * p to the gradient as well, "
        "because the group it was given still has weight_decay. Pass MyAdam a copy of the "
        "group without it: {**group, \"weight_decay\": 0.0}.":
            wrong(weight_decay=weight_decay, decoupled=True, also_l2=True),
        "the group's weight_decay was set to 0 in the group itself (group[\"weight_decay\"] "
        "= 0.0): the first parameter was decayed, then every later parameter and step had "
        "no decay, because the optimizer keeps that same dict. Leave the group alone and "
        "pass MyAdam a copy: {**group, \"weight_decay\": 0.0}.": group_changed(),
        "the decay is applied to the gradient (g + weight_decay * p): that is Adam with an "
        "L2 penalty, and Adam then divides the decay by sqrt(v) like the rest of the "
        "gradient. AdamW's decay leaves the gradient alone and shrinks the parameter "
        "itself: p *= 1 - lr * weight_decay.":
            wrong(weight_decay=weight_decay, decoupled=False),
        "the decay is missing its learning rate (p *= 1 - weight_decay): PyTorch's AdamW "
        "shrinks by lr * weight_decay, so the decay follows a schedule of lr.":
            wrong(weight_decay=weight_decay, decoupled=True, lr_in_decay=False),
        "the decay is applied after the Adam step (super().update_param(...) first, then "
        "p *= 1 - lr * weight_decay): that shrinks the update too. PyTorch's AdamW shrinks "
        "the parameter first, p *= 1 - lr * weight_decay, then subtracts the Adam update "
        "(MyAdam's, with weight_decay=0).":
            wrong(weight_decay=weight_decay, decoupled=True, decay_after=True),
        "there is no weight decay at all: shrink the parameter, p *= 1 - lr * weight_decay, "
        "before the Adam update (with weight_decay=0 in the Adam part).":
            wrong(weight_decay=0.0),
    }
    return {sentence: _WrongOptimizer(update, lrs, n_params)
            for sentence, update in [*named.items(), (NOT_IN_PLACE, _unchanged)]}


# --- gradient clipping -----------------------------------------------------------------


def _clip_case(seed: int) -> list[np.ndarray]:
    """Gradients of three parameters with different norms (so per-parameter clipping
    shows); total norms 8.7, 4.0 and 4.8 for seeds 0, 1, 2."""
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(s) for s in ((3, 4), (4,), (2, 2))]
    grads[1] *= 3.0  # one much larger than the others
    return [g.astype(np.float32) for g in grads]


def _clip_reference(grads: list[np.ndarray], max_norm: float) -> tuple[float, list]:
    total = math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in grads))
    coef = min(max_norm / (total + 1e-6), 1.0)
    return total, [g * coef for g in grads]


def _clip_mistakes(grads: list[np.ndarray], max_norm: float) -> tuple[dict, dict]:
    """(mistakes for the gradients, mistakes for the returned norm)."""
    total, clipped = _clip_reference(grads, max_norm)
    per_param = [g * min(max_norm / (np.linalg.norm(g) + 1e-6), 1.0) for g in grads]
    scaled_up = [g * max_norm / (total + 1e-6) for g in grads]
    grad_mistakes = {
        "each parameter was clipped on its own (its gradient's norm against max_norm). "
        "clip_grad_norm_ clips by the GLOBAL norm: sqrt of the sum of the squares of ALL "
        "gradients together, then one factor max_norm / total for every gradient (the "
        "direction of the whole step is kept).": per_param,
        "the gradients were not changed: clip_grad_norm_ must scale the gradients of the "
        "parameters themselves, in place (p.grad.mul_(factor) under mg.no_grad()); scaling "
        "a copy or a local variable does nothing to p.grad. (Or the "
        "parameters were gone through twice: like model.parameters(), they come as a "
        "generator, empty the second time; make a list of them first.)":
            [g.copy() for g in grads],
    }
    if total < max_norm:
        grad_mistakes["the gradients were scaled UP to max_norm: clipping only ever shrinks. "
                      "The factor is min(max_norm / (total + 1e-6), 1)."] = scaled_up
    norm_mistakes = {
        "the norm returned is the one after clipping; clip_grad_norm_ returns the total "
        "norm BEFORE clipping (useful to log: it shows how often clipping happens).":
            float(np.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in clipped))),
        "the norm returned is the sum of squares: take its square root.": total**2,
        "the norm returned is a sum of the parameters' norms: the global norm is the square "
        "root of the sum of the SQUARES of all entries, sqrt(n1**2 + n2**2 + ...).":
            float(sum(np.linalg.norm(g.astype(np.float64)) for g in grads)),
    }
    return grad_mistakes, norm_mistakes


@checker
def check_clip_grad_norm(clip: Callable, max_norms: Sequence[float] = (1.0, 2.0, 100.0),
                         seed: int = 0) -> None:
    """Check ``clip(parameters, max_norm)`` (a ``clip_grad_norm_``) on three parameters with
    gradients of total norm 4 to 9: the gradients after the call (scaled in place, all by
    one factor) and the returned norm (the total before clipping, a Tensor), for each
    ``max_norm``; then with a parameter whose ``.grad`` is None among them (skipped). The
    parameters come as a generator, as from ``model.parameters()``."""
    name = getattr(clip, "__name__", repr(clip))
    for case, max_norm in enumerate(max_norms):
        _check_clip_case(clip, name, _clip_case(seed + case), max_norm, with_unused=False)
    # then once more with a parameter the loss did not reach (.grad None) among them
    _check_clip_case(clip, name, _clip_case(seed), max_norms[0], with_unused=True)
    norms = [_clip_reference(_clip_case(seed + case), 1.0)[0] for case in range(len(max_norms))]
    print(f"{name}: right for max_norm in {tuple(max_norms)} (total norms "
          f"{min(norms):.0f} to {max(norms):.0f}), skipping a parameter without .grad.")


def _check_clip_case(clip: Callable, name: str, grads: list, max_norm: float,
                     with_unused: bool) -> None:
    params = []
    for g in grads:
        p = Tensor(np.ones_like(g), requires_grad=True)
        p.grad = Tensor(g.copy())
        params.append(p)
    originals = [p.grad for p in params]
    unused = Tensor(np.ones(3), requires_grad=True)  # a parameter backward never reached
    given = [params[0], unused, *params[1:]] if with_unused else params
    call = (f"{name}(params, max_norm={max_norm!r})" if not with_unused else
            f"{name}(params, max_norm={max_norm!r}) with a parameter whose .grad is None")
    try:
        returned = clip((p for p in given), max_norm)  # a generator, as model.parameters()
    except Exception as error:  # noqa: BLE001
        message = str(_student_error(error, call))
        if with_unused:
            message += ("\n\nA parameter the loss does not use has .grad None: skip it, "
                        "as clip_grad_norm_ does (if p.grad is not None).")
        raise CheckFailed(message) from None
    total, clipped = _clip_reference(grads, max_norm)
    grad_mistakes, norm_mistakes = _clip_mistakes(grads, max_norm)
    if any(p.grad is None for p in params):
        raise CheckFailed(f"{call}: a parameter's .grad is None afterwards; scale the "
                          "gradients, do not remove them.")
    if unused.grad is not None:
        raise CheckFailed(f"{call}: the parameter whose .grad was None has a .grad "
                          "afterwards; leave such parameters alone.")
    if any(p.grad is not g for p, g in zip(params, originals)):
        raise CheckFailed(f"{call}: .grad was replaced by a new Tensor; clip_grad_norm_ "
                          "scales each gradient in place (the trailing _): "
                          "p.grad.mul_(factor), not p.grad = p.grad * factor.")
    with no_grad():
        after = [p.grad.numpy() for p in params]
    with contextlib.redirect_stdout(io.StringIO()):  # one line at the end, not six
        check_value.__wrapped__(after, clipped, f"{call}: the gradients afterwards",
                                mistakes=grad_mistakes, atol=1e-5)
        if not isinstance(returned, Tensor):
            raise CheckFailed(f"{call} returned {describe(returned)}; return the total "
                              "norm as a 0-d Tensor (mg.tensor(total)), as clip_grad_norm_ "
                              "does: the training loop calls .item() on it.")
        check_value.__wrapped__(returned, total, f"{call}: the returned norm",
                                mistakes=norm_mistakes, atol=1e-4)



# --- the warm-up + cosine schedule -----------------------------------------------------


def reference_warmup_cosine(step: int, warmup_steps: int, decay_steps: int) -> float:
    """The factor of ``mg.optim.lr_scheduler.WarmupCosineLR`` (min_lr 0) at ``step``."""
    if step < warmup_steps:
        return (step + 1) / (warmup_steps + 1)
    if step >= warmup_steps + decay_steps:
        return 0.0
    return (1 + math.cos(math.pi * (step - warmup_steps) / decay_steps)) / 2


def _cosine(step: int, warmup: int, decay: int, **change: Any) -> float:
    if step < warmup:
        return change.get("warm", lambda t: (t + 1) / (warmup + 1))(step)
    if step >= warmup + decay and not change.get("periodic"):
        return 0.0
    t = step if change.get("from_zero") else step - warmup
    return change.get("half", 0.5) * (1 + math.cos(math.pi * t / decay))


WARMUP_COSINE_MISTAKES = {
    "the warm-up starts at 0 (step / warmup_steps): the first step then does not learn at "
    "all. Climb in warmup_steps equal steps from 1 / (warmup_steps + 1): "
    "(step + 1) / (warmup_steps + 1).":
        lambda t, w, d: _cosine(t, w, d, warm=lambda s: s / w),
    "the warm-up ends one step late or early ((step + 1) / warmup_steps reaches 1 before the "
    "cosine starts): use (step + 1) / (warmup_steps + 1), so that the cosine's 1 at "
    "step = warmup_steps is the next value.":
        lambda t, w, d: _cosine(t, w, d, warm=lambda s: (s + 1) / w),
    "the cosine is measured from step 0, not from the end of the warm-up: use "
    "step - warmup_steps inside the cosine (it must be 1 right after the warm-up).":
        lambda t, w, d: _cosine(t, w, d, from_zero=True),
    "the factor 1/2 is missing: (1 + cos(...)) goes from 2 to 0; the factor must go from 1 "
    "to 0, (1 + cos(pi * progress)) / 2.":
        lambda t, w, d: _cosine(t, w, d, half=1.0),
    "after warmup_steps + decay_steps the cosine climbs again (it is periodic); the "
    "schedule must stay at 0 from there on.":
        lambda t, w, d: _cosine(t, w, d, periodic=True),
}
"""Wrong ``warmup_cosine(step, warmup_steps, decay_steps)``, for ``check_array_function``."""
