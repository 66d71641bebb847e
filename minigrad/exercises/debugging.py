"""Chapter 15's checks and classic mistakes (custom Functions and debugging), out of the
notebook so that its test cells do not show the answers.

- ``HYPOT_MISTAKES``: wrong gradients of ``r = hypot(x, y)``, for
  ``check_in_place_safety`` (chapter 03's check: the Function must also be safe from an
  in-place edit of an input after forward, which a ctx attribute is not);
- ``check_safe_norm(fn)``: a norm over the last dimension whose value AND gradient are
  finite at a row of zeros (run under ``detect_anomaly``, which names the op that made the
  first NaN or Inf), and right elsewhere;
- ``check_clip_hook(clip_hook)``: ``clip_hook(max_norm)`` returns a tensor hook that
  returns the clipped gradient, leaves its argument alone, and clips inside backward;
- ``check_save_and_resume(checkpoint_training, resume)``: training resumed from the file goes
  on exactly as if it had never stopped (model AND optimizer state saved and loaded).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import nn
from ..optim import Adam
from ..serialization import load
from ..state import detect_anomaly, enable_grad, get_rng_state, set_rng_state
from ..tensor import Tensor
from .checks import _name, _student_error, check_function, checker
from .compare import CheckFailed, as_array, compare, describe

# --- exercise 1: MyHypot ---------------------------------------------------------------

HYPOT_MISTAKES = {  # fn(x, y, grad_output) -> (grad_x, grad_y) for r = sqrt(x^2 + y^2)
    "the derivative is upside down: dr/dx = x / r (and dr/dy = y / r), not r / x.":
        lambda x, y, g: (g * np.hypot(x, y) / x, g * np.hypot(x, y) / y),
    "the gradient for x uses y: each input's gradient is grad_output times ITS OWN value "
    "over r (x / r for x, y / r for y).":
        lambda x, y, g: (g * y / np.hypot(x, y), g * y / np.hypot(x, y)),
    "the gradient for y uses x: each input's gradient is grad_output times ITS OWN value "
    "over r (x / r for x, y / r for y).":
        lambda x, y, g: (g * x / np.hypot(x, y), g * x / np.hypot(x, y)),
    "the square root's derivative was dropped: d(x^2 + y^2)/dx = 2x is the derivative "
    "under the root; the root adds 1 / (2r), so dr/dx = x / r.":
        lambda x, y, g: (2 * g * x, 2 * g * y),
    "the chain rule stopped halfway: 1 / (2r) is the square root's derivative with "
    "respect to what is under it, s = x^2 + y^2; multiply by ds/dx = 2x (and ds/dy = 2y): "
    "dr/dx = 2x / (2r) = x / r.":
        lambda x, y, g: (g / (2 * np.hypot(x, y)), g / (2 * np.hypot(x, y))),
}


def hypot_reference(x: Tensor, y: Tensor) -> Tensor:
    """sqrt(x^2 + y^2) from minigrad's own operations (for checks and gradcheck)."""
    return (x * x + y * y).sqrt()


# --- exercise 2: safe_norm -------------------------------------------------------------

UNFIXED = (
    "the gradient at the row of zeros is not finite. detect_anomaly says: {anomaly}. "
    "The square root's derivative 1 / (2 sqrt(s)) is infinite at s = 0, and x * (that) "
    "is 0 * inf = NaN. Make the square root never see the zero (see section 3).")
WHERE_TRAP = (
    "the gradient at the row of zeros is NaN: detect_anomaly says: {anomaly}. The where "
    "picked 0 for the value, but backward still runs through the square root of 0 on "
    "the other branch: where sends it a gradient of 0, and 0 / (2 sqrt(0)) = 0 / 0 = "
    "NaN. A where after the square root is not enough: the square root's INPUT must be "
    "safe too (where(s > 0, s, 1) before the square root), then where again after it.")
SAFE_INPUT_IS_ZERO = (
    "the gradient at the row of zeros is NaN: detect_anomaly says: {anomaly}. There is a "
    "where before the square root, but at the row of zeros it still gives the square "
    "root 0 (or something that is 0 there): its derivative 1 / (2 sqrt(0)) is infinite "
    "whatever where does after it. Give the square root a POSITIVE value where s = 0 "
    "(any, 1 for instance), then pick 0 with the second where.")
MASK_TRAP = (
    "the gradient at the row of zeros is NaN: detect_anomaly says: {anomaly}. Multiplying "
    "by a mask (or by s > 0) is the where trap of section 3 in another form: the square "
    "root of 0 still runs, and backward multiplies its infinite derivative by the mask's "
    "0, which is NaN. The square root's input must be safe at the row of zeros.")
NOT_FINITE_FORWARD = (
    "the value is not finite at a row of zeros: detect_anomaly says: {anomaly}.")
SAFE_VALUE_SHOWS = (
    "the norm of a row of zeros is {value:.3g}, not 0: the harmless value the square root "
    "was given there shows through. After the square root, pick 0 at the rows of zeros "
    "with a second where.")
EPS_IN_SQRT = (
    "the norm of a row of zeros is {value:.3g}, not 0: an eps added inside (or after) "
    "the square root changes every value a little, and this one a lot. Keep the value "
    "exact: where(s > 0, sqrt(safe s), 0).")
NONZERO_GRADIENT_AT_ZERO = (
    "the gradient at the row of zeros is {got}, not 0. Take the gradient of the norm at "
    "0 to be 0, as PyTorch does (any vector of length at most 1 is a subgradient there; "
    "0 is the one that does not push the zero vector anywhere).")
USED_OWN_NORM = (
    "safe_norm calls minigrad's own {op}: this exercise asks for the norm written with "
    "the square root of a sum of squares, made safe at zero yourself.")


def _anomaly(error: BaseException) -> str:
    """The first line of detect_anomaly's message, without its prefix."""
    return str(error).splitlines()[0].removeprefix("detect_anomaly: ")


def _ops(output: Any) -> set[str]:
    """The names of the Functions in ``output``'s graph."""
    seen, names, stack = set(), set(), [getattr(output, "grad_fn", None)]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(getattr(node, "name", type(node).__name__))
        names.update(_inner_ops(node))
        stack += [n for n, _ in (getattr(node, "next_functions", None) or ())]
    return names


def _inner_ops(node: Any) -> list[str]:
    """The ops of a node that stands for a whole call run elsewhere (while grading, the
    student's function runs in the student's process and is one node of the judge's
    graph, which lists the ops of the call's own graph)."""
    names = getattr(node, "inner_ops", None)
    return [str(n) for n in names] if isinstance(names, list) else []


def _count_ops(output: Any, name: str) -> int:
    """How many nodes called ``name`` ``output``'s graph holds."""
    seen, count, stack = set(), 0, [getattr(output, "grad_fn", None)]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        count += getattr(node, "name", type(node).__name__) == name
        count += _inner_ops(node).count(name)
        stack += [n for n, _ in (getattr(node, "next_functions", None) or ())]
    return count


@checker
def check_safe_norm(fn: Callable, *, seed: int = 0) -> None:
    """``fn(x)``: the Euclidean norm of ``x`` over its last dimension, a function on
    Tensors. Right values and gradients on random inputs; then, on a batch with a row of
    zeros, run under ``detect_anomaly``: the value 0 there, the gradient finite and 0
    there, and right on the other rows."""
    name = _name(fn)
    check_function.__wrapped__(fn, [[(3, 4)], [(2, 3, 5)]],
                               lambda x: (x * x).sum(dim=-1).sqrt(), seed=seed)
    rng = np.random.default_rng(seed)
    x = np.array([[0.0, 0.0, 0.0, 0.0], [3.0, 4.0, 0.0, 12.0], [0.0, -2.0, 0.0, 0.0]])
    v = rng.standard_normal(3)
    call = f"{name}(x), x = {describe(x)} whose first row is zeros"
    tensor = Tensor(x.copy(), requires_grad=True)
    with enable_grad(), detect_anomaly():
        try:
            out = fn(tensor)
        except FloatingPointError as error:
            raise CheckFailed(f"{call}: " + NOT_FINITE_FORWARD.format(
                anomaly=_anomaly(error))) from None
        except Exception as error:  # noqa: BLE001 - the student's code: report, don't crash
            raise _student_error(error, call) from None
        if not isinstance(out, Tensor):
            raise CheckFailed(f"{call} returned {describe(out)}; expected a Tensor.")
        own = {op for op in _ops(out) if "norm" in op.lower()}
        if own:
            raise CheckFailed(USED_OWN_NORM.format(op=", ".join(sorted(own))))
        value = out.detach().numpy()
        if value.shape != (3,):
            raise CheckFailed(f"{call} has shape {value.shape}; expected (3,), one norm a "
                              "row.")
        if not np.all(np.isfinite(value)):
            raise CheckFailed(f"{call}: the value is {describe(value)}, not finite.")
        if abs(value[0]) > 1e-7:
            sentence = SAFE_VALUE_SHOWS if abs(value[0]) > 1e-3 else EPS_IN_SQRT
            raise CheckFailed(f"{call}: " + sentence.format(value=value[0]))
        compare(value, np.sqrt((x * x).sum(axis=-1)), f"{call}: the value")
        try:
            (out * Tensor(v)).sum().backward()
        except FloatingPointError as error:
            anomaly = _anomaly(error)
            wheres = _count_ops(out, "Where")
            if "NaN" in anomaly and "Sqrt" in anomaly:
                sentence = (MASK_TRAP if wheres == 0 else WHERE_TRAP if wheres == 1
                            else SAFE_INPUT_IS_ZERO)
            else:
                sentence = UNFIXED
            raise CheckFailed(f"{call}, then backward: "
                              + sentence.format(anomaly=anomaly)) from None
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, f"{call}, then backward") from None
    grad = tensor.grad.numpy() if tensor.grad is not None else np.zeros_like(x)
    if not np.allclose(grad[0], 0.0, atol=1e-7):
        raise CheckFailed(f"{call}, then backward: " + NONZERO_GRADIENT_AT_ZERO.format(
            got=describe(grad[0])))
    norms = np.sqrt((x[1:] * x[1:]).sum(axis=-1, keepdims=True))
    compare(grad[1:], x[1:] / norms * v[1:, None],
            f"{call}, then backward: the gradient of the other rows")
    print(f"{name}: right values and gradients, and at a row of zeros the value 0 and the "
          "gradient 0, with no NaN or Inf anywhere (checked under detect_anomaly).")


# --- exercise 3: clip_hook -------------------------------------------------------------

NO_RETURN = (
    "the hook returned None, so backward kept the gradient it had, unclipped. A tensor "
    "hook changes a gradient only by RETURNING the new one: `grad = grad * scale` makes "
    "a new tensor, and the name `grad` inside the hook is forgotten when it ends. "
    "Return it.")
IN_PLACE = (
    "the hook changed the gradient it was given, in place ({how}). A hook must not "
    "modify its argument (PyTorch's documentation says so too): backward may hand it a "
    "read-only array (the gradient of a sum or a mean is broadcast from one number "
    "without a copy: that is the 'read-only view' an in-place edit then complains "
    "about), and in PyTorch it may be shared with other gradients. Compute a new tensor "
    "and return it.")
PER_ROW = (
    "each row was clipped by its own norm: clip by the norm of the WHOLE gradient, "
    "||g|| = sqrt of the sum of ALL its squares (grad.norm() with no dim), so that the "
    "direction of g is kept.")
NORM_SQUARED = (
    "the gradient was scaled by max_norm / (sum of squares): that is ||g||^2; take its "
    "square root, ||g|| = sqrt(sum g^2).")
NOT_A_FACTORY = (
    "clip_hook(max_norm) is called with the number max_norm only, once; it must return "
    "the hook, a function of one gradient: def clip_hook(max_norm): def hook(grad): ... "
    "return hook. (backward then calls hook(grad).)")
CLIPPED_VALUES = (
    "each element was clamped to [-max_norm, max_norm] (that is clip_grad_value_); "
    "clip the NORM: if ||g|| > max_norm, return g * (max_norm / ||g||), the same "
    "direction, shorter.")
FORGOT_MAX_NORM = (
    "the gradient was divided by its norm, to length 1, not max_norm: multiply by "
    "max_norm / ||g||.")
SCALED_UP = (
    "a gradient whose norm is already below max_norm was scaled UP to max_norm. Clip "
    "only when ||g|| > max_norm; a smaller gradient passes unchanged.")


def _clip(g: np.ndarray, max_norm: float) -> np.ndarray:
    norm = np.sqrt((g * g).sum())
    return g * (max_norm / norm) if norm > max_norm else g


def _call_hook(hook: Any, given: np.ndarray, call: str) -> np.ndarray:
    """Call ``hook`` on a Tensor of ``given``: what it returned (``given`` itself when it
    returned None), after checking that it left its argument alone."""
    argument = Tensor(given.copy())
    try:
        result = hook(argument)
    except Exception as error:  # noqa: BLE001
        if "in-place" in str(error) or "read-only" in str(error):
            raise CheckFailed(f"{call}: " + IN_PLACE.format(how=str(error).splitlines()[0])) \
                from None
        raise _student_error(error, call) from None
    if not np.array_equal(argument.numpy(), given):
        raise CheckFailed(f"{call}: " + IN_PLACE.format(
            how=f"its values became {describe(argument.numpy())}"))
    if result is None:
        return given
    got = as_array(result)
    if got is None or got.shape != given.shape:
        raise CheckFailed(f"{call} returned {describe(result)}; a tensor hook returns a "
                          f"Tensor of the gradient's shape {given.shape} (or None).")
    return got


@checker
def check_clip_hook(clip_hook: Callable, *, seed: int = 0) -> None:
    """``clip_hook(max_norm)`` returns ``hook(grad)``: called directly, on a gradient
    longer than ``max_norm`` it returns ``grad * max_norm / ||grad||`` and on a shorter
    one the gradient unchanged (or None), without modifying its argument; registered
    with ``register_hook`` on an intermediate tensor, the gradients that flow on to the
    leaves are the clipped ones."""
    name = _name(clip_hook)
    rng = np.random.default_rng(seed)
    max_norm = 2.0
    try:
        hook = clip_hook(max_norm)
    except Exception as error:  # noqa: BLE001
        failure = _student_error(error, f"{name}({max_norm})")
        raise CheckFailed(f"{failure}\n  {NOT_A_FACTORY}") from None
    if not callable(hook):
        raise CheckFailed(f"{name}({max_norm}) returned {describe(hook)}; it must return "
                          "the hook, a function of one gradient (def hook(grad): ... "
                          "return hook).")
    big = rng.standard_normal((3, 4))
    big *= 5.0 / np.sqrt((big * big).sum())
    call = f"{name}({max_norm}) called on a gradient of norm 5.0, shape (3, 4)"
    got = _call_hook(hook, big, call)
    if got is big:
        raise CheckFailed(f"{call}: " + NO_RETURN)
    rows = np.sqrt((big * big).sum(axis=-1, keepdims=True))
    mistakes = [(CLIPPED_VALUES, np.clip(big, -max_norm, max_norm)),
                (FORGOT_MAX_NORM, big / 5.0),
                (PER_ROW, np.where(rows > max_norm, big * max_norm / rows, big)),
                (NORM_SQUARED, big * max_norm / 25.0)]
    for sentence, wrong in mistakes:
        if np.allclose(got, wrong, atol=1e-6) and not np.allclose(wrong, _clip(big, 2.0)):
            raise CheckFailed(f"{call}: {sentence}")
    compare(got, _clip(big, max_norm), f"{call}: the returned gradient", atol=1e-5)
    small = big * 0.1
    call = f"{name}({max_norm}) called on a gradient of norm 0.5"
    got = _call_hook(hook, small, call)
    if np.allclose(got, small * max_norm / 0.5, atol=1e-6):
        raise CheckFailed(f"{call}: " + SCALED_UP)
    compare(got, small, f"{call}: the returned gradient (it needs no clipping)", atol=1e-7)
    # inside backward: the clipped gradient of h flows on to a and w
    a = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = Tensor(rng.standard_normal((4, 5)), requires_grad=True)
    upstream = rng.standard_normal((3, 5)) * 3.0
    call = (f"h = a @ w; h.register_hook({name}({max_norm})); (h * v).sum().backward(), "
            f"with ||v|| = {np.sqrt((upstream * upstream).sum()):.3g}")
    try:
        with enable_grad():
            h = a @ w
            h.register_hook(clip_hook(max_norm))
            (h * Tensor(upstream)).sum().backward()
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, call) from None
    clipped = _clip(upstream, max_norm)
    compare(a.grad, clipped @ w.numpy().T, f"{call}: a.grad (it should see h's CLIPPED "
                                           "gradient)")
    compare(w.grad, a.numpy().T @ clipped, f"{call}: w.grad")
    print(f"{name}: the hook returns the clipped gradient (norm {max_norm}), leaves a "
          "short one alone, modifies nothing in place, and clips inside backward.")


# --- exercise 4: checkpoint_training and resume ----------------------------------------

OPTIMIZER_NOT_SAVED = (
    "the checkpoint holds no optimizer state (no dict with 'state' and 'param_groups'), "
    "so resume starts Adam afresh: its step counter back at 0 and its moving averages "
    "at zero, and the resumed training takes other steps than the uninterrupted one. "
    "Save optimizer.state_dict() next to model.state_dict().")
OPTIMIZER_NOT_LOADED = (
    "the checkpoint holds the optimizer's state, but after resume the optimizer has none "
    "(Adam would restart its step counter and moving averages). Call "
    "optimizer.load_state_dict(...) with it in resume.")
MODEL_NOT_LOADED = (
    "after resume, the model's parameters are not those saved: {which}. Load the saved "
    "state dict into the model you were given: model.load_state_dict(...).")
KEYS_CHANGED = (
    "resume looked for a key the checkpoint does not have ({error}). Read the file back "
    "with the keys checkpoint_training wrote, 'model' and 'optimizer'.")
NOT_THE_KEYS = (
    "the file holds {got}, not a dict with the keys 'model' and 'optimizer' (the cells "
    "after this exercise read checkpoint['model'] and checkpoint['optimizer']). Save one "
    "dict: {{'model': model.state_dict(), 'optimizer': optimizer.state_dict()}}.")
SAVED_TWICE = (
    "the file holds the optimizer's state dict only, not the model's: a second mg.save "
    "to the same path replaces the first file. Save both in ONE dict, with one mg.save.")
DIVERGED = (
    "three steps after resume, {which} differs from the same three steps taken without "
    "stopping: something of the training state was not saved or not restored.")


def _model(seed: int) -> nn.Module:
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    model.load_state_dict({k: rng.standard_normal(p.shape).astype(np.float32) * 0.5
                           for k, p in model.state_dict().items()})
    return model


def _train(model: nn.Module, optimizer: Any, batches: list) -> None:
    for x, y in batches:
        optimizer.zero_grad()
        loss = ((model(Tensor(x)) - Tensor(y)) ** 2).mean()
        loss.backward()
        optimizer.step()


def _has_optimizer_state(obj: Any) -> bool:
    if isinstance(obj, dict):
        if {"state", "param_groups"} <= set(obj):
            return True
        return any(_has_optimizer_state(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_has_optimizer_state(v) for v in obj)
    return False


@checker
def check_save_and_resume(checkpoint_training: Callable, resume: Callable, *,
                     seed: int = 0) -> None:
    """Train a small model with Adam for 3 steps, ``checkpoint_training(model,
    optimizer, path)``, 3 more steps; then a new model (other weights) and a new Adam,
    ``resume(model, optimizer, path)``, the same 3 steps: the parameters must end where
    the uninterrupted run ended. minigrad's random generator is left as it was found (the
    layers it builds draw from it), so the chapter's later numbers do not depend on the
    check."""
    rng_state = get_rng_state()
    try:
        _check_save_and_resume(checkpoint_training, resume, seed)
    finally:
        set_rng_state(rng_state)


def _check_save_and_resume(checkpoint_training: Callable, resume: Callable,
                           seed: int) -> None:
    rng = np.random.default_rng(seed)
    batches = [(rng.standard_normal((6, 3)).astype(np.float32),
                rng.standard_normal((6, 2)).astype(np.float32)) for _ in range(6)]
    model = _model(seed)
    optimizer = Adam(model.parameters(), lr=0.05)
    _train(model, optimizer, batches[:3])
    saved = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "checkpoint.pt")
        call = f"{_name(checkpoint_training)}(model, optimizer, path)"
        try:
            checkpoint_training(model, optimizer, path)
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, call) from None
        if not os.path.exists(path):
            raise CheckFailed(f"{call} wrote no file at path: save with mg.save(..., path).")
        _train(model, optimizer, batches[3:])
        content = load(path)
        if isinstance(content, dict) and {"state", "param_groups"} <= set(content):
            raise CheckFailed(f"{call}: " + SAVED_TWICE)
        saved_as = call
        again = _model(seed + 1)
        again_optimizer = Adam(again.parameters(), lr=0.05)
        call = f"{_name(resume)}(new_model, new_optimizer, path)"
        try:
            resume(again, again_optimizer, path)
        except KeyError as error:
            raise CheckFailed(f"{call}: " + KEYS_CHANGED.format(error=f"KeyError: {error}")) \
                from None
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, call) from None
    loaded = {k: v.numpy() for k, v in again.state_dict().items()}
    wrong = [k for k in saved if not np.array_equal(loaded[k], saved[k])]
    if wrong:
        raise CheckFailed(f"{call}: " + MODEL_NOT_LOADED.format(which=", ".join(wrong)))
    if not again_optimizer.state_dict()["state"]:
        sentence = OPTIMIZER_NOT_LOADED if _has_optimizer_state(content) \
            else OPTIMIZER_NOT_SAVED
        raise CheckFailed(f"{call}: {sentence}")
    _train(again, again_optimizer, batches[3:])
    for (key, right), got in zip(model.state_dict().items(), again.state_dict().values()):
        if not np.allclose(got.numpy(), right.numpy(), atol=1e-6):
            raise CheckFailed(f"{call}: " + DIVERGED.format(which=key))
    if not isinstance(content, dict) or not {"model", "optimizer"} <= set(content):
        got = (f"a dict with the keys {sorted(content)}" if isinstance(content, dict)
               else describe(content))
        raise CheckFailed(f"{saved_as}: resume works, but " + NOT_THE_KEYS.format(got=got))
    print(f"{_name(checkpoint_training)} and {_name(resume)}: the resumed training takes "
          "exactly the steps of the uninterrupted one (model and Adam's state restored).")


__all__ = ["CLIPPED_VALUES", "DIVERGED", "EPS_IN_SQRT", "FORGOT_MAX_NORM", "HYPOT_MISTAKES",
           "IN_PLACE", "KEYS_CHANGED", "MASK_TRAP", "MODEL_NOT_LOADED",
           "NONZERO_GRADIENT_AT_ZERO", "NORM_SQUARED", "NOT_A_FACTORY", "NOT_THE_KEYS",
           "NO_RETURN", "OPTIMIZER_NOT_LOADED", "OPTIMIZER_NOT_SAVED", "PER_ROW",
           "SAFE_INPUT_IS_ZERO", "SAFE_VALUE_SHOWS", "SAVED_TWICE", "SCALED_UP", "UNFIXED",
           "USED_OWN_NORM", "WHERE_TRAP", "check_clip_hook", "check_safe_norm",
           "check_save_and_resume", "hypot_reference"]
