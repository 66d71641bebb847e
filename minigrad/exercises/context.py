"""Chapter 03's checks and classic mistakes (Function and Context in depth), out of the
notebook so that its test cells do not show the answers.

``check_function`` checks one output's value and gradient; this chapter's exercises
also need checks of *how* a Function uses its context, each running the student's own
forward and backward:

- ``check_saves_output(fn, inputs)``: forward saves its own result (and not the input);
- ``check_multi_output(fn, inputs, reference)``: a Function with several outputs, its
  backward given one gradient per output (``None`` for unused ones, after
  ``ctx.set_materialize_grads(False)``);
- ``check_needs_input_grad(fn, inputs, reference, saved_only_for=...)``: backward
  returns ``None`` for the inputs whose ``ctx.needs_input_grad`` is False, and skips the
  work (a saved array only such a gradient needs must not be touched);
- ``check_in_place_safety(fn, inputs, reference, modified=...)``: each input in turn,
  edited in place after forward, either makes backward raise (the version counter saw
  it) or leaves the gradient right; a silently wrong one is a saved NumPy view or an
  array kept as a ctx attribute.

The ``*_MISTAKES`` tables are ``{sentence naming the mistake: fn(*arrays, grad_output(s))
-> wrong gradient(s)}``, as ``check_function(..., mistakes=...)`` takes them.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..function import Context
from ..state import enable_grad, no_grad
from ..tensor import Tensor
from .checks import (_make_input, _name, _signature, _student_error, _try, _where,
                     check_function, checker)
from .compare import CheckFailed, Variant, as_array, compare, describe


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# --- the mistakes ----------------------------------------------------------------------

SIGMOID_MISTAKES = {
    "backward applied the sigmoid again to what forward saved: s is already sigmoid(x), "
    "so sigmoid(s) is sigmoid(sigmoid(x)). Use the saved output as it is: "
    "grad_output * s * (1 - s).":
        lambda x, g: g * _sigmoid(_sigmoid(x)) * (1 - _sigmoid(_sigmoid(x))),
    "the input x was used in the output's formula: x * (1 - x) is right only when x is "
    "the OUTPUT s = sigmoid(x). Save the output in forward and use s * (1 - s).":
        lambda x, g: g * x * (1 - x),
    "the factor (1 - s) is missing: d sigmoid(x)/dx = s * (1 - s), not s (that would be "
    "the derivative of exp).":
        lambda x, g: g * _sigmoid(x),
    "the factor s is missing: d sigmoid(x)/dx = s * (1 - s), not (1 - s).":
        lambda x, g: g * (1 - _sigmoid(x)),
    "the derivative has (1 + s) where it needs (1 - s): d sigmoid/dx = s * (1 - s).":
        lambda x, g: g * _sigmoid(x) * (1 + _sigmoid(x)),
}

SINCOS_MISTAKES = {  # fn(x, grad_sin, grad_cos)
    "backward ignores grad_cos, the gradient of the second output: the loss reaches x "
    "through both sin(x) and cos(x), so add both paths: grad_sin * cos(x) - grad_cos * "
    "sin(x).":
        lambda x, gs, gc: gs * np.cos(x),
    "backward ignores grad_sin, the gradient of the first output: add both paths, "
    "grad_sin * cos(x) - grad_cos * sin(x).":
        lambda x, gs, gc: -gc * np.sin(x),
    "the cosine's path has the wrong sign: d cos(x)/dx = -sin(x), so that term is "
    "- grad_cos * sin(x).":
        lambda x, gs, gc: gs * np.cos(x) + gc * np.sin(x),
    "the two gradients are paired with the wrong derivatives: grad_sin goes with "
    "cos(x) (the derivative of sin), grad_cos with -sin(x).":
        lambda x, gs, gc: -gs * np.sin(x) + gc * np.cos(x),
    "the two paths were multiplied instead of added: a value used by two outputs gets "
    "the SUM of the gradients through each.":
        lambda x, gs, gc: (gs * np.cos(x)) * (-gc * np.sin(x)),
}

SCALE_ROWS_MISTAKES = {  # fn(x, s, grad_output) for out = x * s[:, None]
    "the gradient for s was summed over the wrong axis (axis=0, down each column, one "
    "number per column): s[i] scales the whole row i, so its gradient adds up row i, "
    "(grad_output * x).sum(axis=1), one number per row.":
        lambda x, s, g: (g * s[:, None], (g * x).sum(axis=0)),
    "the gradient for s was not summed: grad_output * x has x's shape (m, n), one number "
    "per element. s[i] scales the whole row i, so its gradient adds up row i: "
    "(grad_output * x).sum(axis=1).":
        lambda x, s, g: (g * s[:, None], g * x),
    "the gradient for s was summed over everything (one number): s[i] scales only row i, "
    "so its gradient adds up row i alone: (grad_output * x).sum(axis=1).":
        lambda x, s, g: (g * s[:, None], (g * x).sum()),
    "the gradients are swapped: the gradient for x is grad_output * s[:, None], the one "
    "for s is (grad_output * x).sum(axis=1).":
        lambda x, s, g: ((g * x).sum(axis=1), g * s[:, None]),
}

NOT_WATCHED = (
    "backward read input {i} ({name}) from somewhere the version counter does not watch "
    "(not from ctx.saved_tensors: a global, a closure, another object), so it could not "
    "see the in-place edit, and backward silently used the edited numbers. Save it: "
    "ctx.save_for_backward({inputs}), and read it back from ctx.saved_tensors.")
KEPT_AS_ATTRIBUTE = (
    "your Function kept input {i} ({name}) as a ctx attribute (ctx.{attribute} = ...), "
    "not with ctx.save_for_backward. The version counter watches only the arrays saved "
    "with ctx.save_for_backward, so it could not see the in-place edit, and backward "
    "silently used the edited numbers. Save it: ctx.save_for_backward({inputs}), and read "
    "it back from ctx.saved_tensors.")


def _input_names(function: type, count: int) -> list[str]:
    """The names of forward's inputs (after ctx), or x0, x1, ... if they can't be read."""
    try:
        names = [p.name for p in inspect.signature(function.forward).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][1:]
    except (TypeError, ValueError):
        names = []
    return names[:count] if len(names) >= count else [f"x{i}" for i in range(count)]


def _list_returned(call: str, raw: Any) -> CheckFailed:
    return CheckFailed(
        f"{call}: backward returned a list ({len(raw)} item(s)); return a tuple "
        "(`return grad_a, grad_b`), or the array itself for a single input. The engine, "
        "like PyTorch's, reads a list as ONE gradient.")


# --- check_saves_output -----------------------------------------------------------------


@checker
def check_saves_output(function: type, inputs: Any, *, seed: int = 0) -> None:
    """``function``'s forward (an ``mg.Function`` on arrays) saves its own result with
    ``ctx.save_for_backward``, the same array it returns, and not its input."""
    name = _name(function)
    rng = np.random.default_rng(seed)
    arrays = [_make_input(spec, rng, (-2.0, 2.0)) for spec in inputs]
    call = _signature(name, arrays)
    ctx = Context()
    ctx.needs_input_grad = (True,) * len(arrays)
    try:
        out = function.forward(ctx, *arrays)
    except Exception as error:  # noqa: BLE001 - the student's code: report, don't crash
        raise _student_error(error, f"{call}: forward") from None
    saved = ctx.saved_tensors or ()
    if not saved:
        raise CheckFailed(f"{call}: forward saved nothing. Call ctx.save_for_backward(...) "
                          "with the output you return.")
    saved_input = any(isinstance(s, np.ndarray) and s is a for s in saved for a in arrays)
    if any(s is out for s in saved) and saved_input:
        raise CheckFailed(
            f"{call}: forward saved its input x as well as its output s. Backward needs s "
            "alone (ds/dx = s * (1 - s)): save only the output, and compute the gradient "
            "from it without np.exp.")
    if any(s is out for s in saved):
        print(f"{name}: forward saves its output ({describe(out)}).")
        return
    if saved_input:
        raise CheckFailed(
            f"{call}: forward saved its input x, not its output. This exercise's backward "
            "needs the output s (ds/dx = s * (1 - s)); recomputing it from x in backward "
            "works but repeats forward's work. Save the array you return.")
    if any(isinstance(s, np.ndarray) and s.shape == np.shape(out)
           and np.array_equal(s, out) for s in saved):
        raise CheckFailed(
            f"{call}: forward saved a copy of its output, computed twice (or copied): save "
            "the very array you return (out = ...; ctx.save_for_backward(out); return "
            "out), which costs no extra memory.")
    raise CheckFailed(f"{call}: forward saved {describe(saved)}, not the output it "
                      f"returns ({describe(out)}).")


# --- check_multi_output -----------------------------------------------------------------


def _reference_grads(reference: Callable, arrays: list, grads_out: list) -> tuple[list, list]:
    """The reference's outputs, and the gradients of sum_k sum(out_k * v_k) over the
    outputs whose ``v_k`` is not None, for each array input."""
    tensors = [Tensor(a.copy(), requires_grad=True) if isinstance(a, np.ndarray) else a
               for a in arrays]
    with enable_grad():
        outs = reference(*tensors)
        total = None
        for out, v in zip(outs, grads_out):
            if v is not None:
                term = (out * Tensor(v)).sum()
                total = term if total is None else total + term
        total.backward()
    return ([o.detach().numpy() for o in outs],
            [t.grad.numpy() if isinstance(t, Tensor) and t.grad is not None
             else np.zeros(np.shape(a)) for t, a in zip(tensors, arrays)])


def _backward_directly(function: type, ctx: Context, grads_out: list, call: str,
                       saw: str) -> list:
    try:
        raw = function.backward(ctx, *[None if g is None else g.copy() for g in grads_out])
    except TypeError as error:
        if _signature_error(error, len(grads_out)):
            raise CheckFailed(
                f"{call}: backward raised TypeError: {error}. It gets one gradient per "
                f"output, {len(grads_out)} here: backward(ctx, "
                + ", ".join(f"grad_{k}" for k in range(len(grads_out))) + ").") from None
        if any(g is None for g in grads_out) and "NoneType" in str(error):
            raise CheckFailed(
                f"{call}: backward was given {saw} and raised TypeError: {error}. After "
                "ctx.set_materialize_grads(False), the gradient of an output the loss did "
                "not use arrives as None: skip that output's term (if grad is not None: "
                "...).") from None
        raise _student_error(error, f"{call}: backward") from None
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, f"{call}: backward") from None
    if isinstance(raw, list):
        raise _list_returned(call, raw)
    grads = list(raw) if isinstance(raw, tuple) else [raw]
    return [as_array(g) for g in grads]


def _signature_error(error: TypeError, count: int) -> bool:
    """backward was written for another number of gradients than the outputs."""
    return "positional argument" in str(error) and count > 1


@checker
def check_multi_output(function: type, inputs: Any, reference: Callable, *,
                       mistakes: dict | None = None, materialize_grads: bool | None = None,
                       seed: int = 0) -> None:
    """Check an ``mg.Function`` that returns several arrays: each output's value, and
    the gradient its backward makes from one gradient per output, when the loss uses
    all outputs and when it uses only one (the others' gradients then arrive as None,
    or as zeros unless ``ctx.set_materialize_grads(False)``); then the same through
    ``apply`` and the engine. ``reference``: a callable on Tensors returning a tuple of
    Tensors. ``materialize_grads``: the setting forward must leave on ``ctx`` (None:
    either). ``mistakes``: ``{sentence: fn(*arrays, *grad_outputs) -> wrong gradient}``."""
    name = _name(function)
    rng = np.random.default_rng(seed)
    arrays = [_make_input(spec, rng, (-2.0, 2.0)) for spec in inputs]
    call = _signature(name, arrays)
    ctx = Context()
    ctx.needs_input_grad = (True,) * len(arrays)
    try:
        outs = function.forward(ctx, *arrays)
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, f"{call}: forward") from None
    with no_grad():
        expected_outs = [o.numpy() for o in reference(*[Tensor(a) for a in arrays])]
    if not isinstance(outs, tuple) or len(outs) != len(expected_outs):
        raise CheckFailed(f"{call}: forward returned {describe(outs)}; expected a tuple of "
                          f"{len(expected_outs)} arrays (return a, b).")
    for k, (out, right) in enumerate(zip(outs, expected_outs)):
        compare(out, right, f"{call}: output {k}")
    if materialize_grads is not None and ctx.materialize_grads != materialize_grads:
        raise CheckFailed(
            f"{call}: forward left ctx.materialize_grads = {ctx.materialize_grads}; this "
            f"exercise asks for ctx.set_materialize_grads({materialize_grads}) in forward.")
    unused = None if not ctx.materialize_grads else "zeros"
    count = len(outs)
    settings = [list(range(count))] + [[k] for k in range(count)]
    for used in settings:
        grads_out = [rng.standard_normal(np.shape(o)) if k in used
                     else (None if unused is None else np.zeros(np.shape(o)))
                     for k, o in enumerate(outs)]
        saw = ("a random gradient for every output" if len(used) == count else
               f"a random gradient for output {used[0]} only (the others: {unused})")
        # a fresh forward: backward may only read what this one saved
        ctx = Context()
        ctx.needs_input_grad = (True,) * len(arrays)
        function.forward(ctx, *[a.copy() for a in arrays])
        grads = _backward_directly(function, ctx, grads_out, call, saw)
        _, expected = _reference_grads(reference, arrays, grads_out)
        filled = [np.zeros(np.shape(o)) if g is None else g for g, o in zip(grads_out, outs)]
        variants = [Variant(sentence, wrong) for sentence, make in (mistakes or {}).items()
                    if (wrong := _try(make, *arrays, *filled)) is not None]
        if len(grads) != len(arrays):
            raise CheckFailed(f"{call}: backward returned {len(grads)} gradient(s); forward "
                              f"has {len(arrays)} input(s).")
        for i, (got, right) in enumerate(zip(grads, expected)):
            if got is None:
                raise CheckFailed(
                    f"{call}: backward, given {saw}, returned None for input {i}. An "
                    "output whose gradient is None adds nothing, but the paths through "
                    "the other outputs still count: return their sum.")
            compare(got, right, f"{call}, backward given {saw}: the gradient for input {i}",
                    variants=[Variant(v.mistake, v.value[i] if isinstance(v.value, tuple)
                                      else v.value) for v in variants])
    # through the engine: the loss uses every output, then only the first
    for used in settings[:2]:
        tensors = [Tensor(a.copy(), requires_grad=True) for a in arrays]
        try:
            with enable_grad():
                results = function.apply(*tensors)
                vs = [rng.standard_normal(r.shape) for r in results]
                loss = sum((results[k] * Tensor(vs[k])).sum() for k in used)
                loss.backward()
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, f"{call}.apply, then backward") from None
        grads_out = [vs[k] if k in used else None for k in range(count)]
        _, expected = _reference_grads(reference, arrays, grads_out)
        for i, (t, right) in enumerate(zip(tensors, expected)):
            compare(t.grad, right, f"{call}.apply, a loss using output(s) {used}, then "
                    f"backward: the gradient for input {i}")
    print(f"{name}: every output and its gradient are right ({len(settings) + 2} "
          "backward(s) checked).")


# --- check_needs_input_grad -------------------------------------------------------------


class _UsedUnneeded(Exception):
    """Backward touched a saved array that no needed gradient uses."""


class _Unneeded:
    """Stands in for saved array ``position`` when the only gradient that needs it (that
    of input ``for_input``) is not needed: any use of it raises ``_UsedUnneeded``."""

    def __init__(self, position: int, for_input: int) -> None:
        self.position, self.for_input = position, for_input

    def _used(self, *args: Any, **kwargs: Any) -> Any:
        raise _UsedUnneeded(self.position)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._used()

    __array__ = __array_ufunc__ = __array_function__ = _used
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _used
    __matmul__ = __rmatmul__ = __truediv__ = __rtruediv__ = __pow__ = __rpow__ = _used
    __neg__ = __getitem__ = __len__ = __iter__ = __float__ = _used


@checker
def check_needs_input_grad(function: type, inputs: Any, reference: Callable, *,
                           mistakes: dict | None = None,
                           saved_only_for: dict[int, int] | None = None,
                           seed: int = 0) -> None:
    """Call ``function``'s forward and backward directly, once for each combination of
    ``ctx.needs_input_grad`` with at least one True: the gradient of each input that
    needs one must be right, and that of each input that needs none must be None.
    ``reference``: a callable on Tensors. ``saved_only_for``: ``{k: i}``, saved array
    ``k`` is needed only for input ``i``'s gradient (for z = a @ b, which saves a and b:
    ``{0: 1, 1: 0}``); when ``needs_input_grad[i]`` is False it is replaced by an object
    that fails when used, so that a backward that computes the gradient anyway and then
    returns None is caught: the work must be skipped, not thrown away."""
    name = _name(function)
    rng = np.random.default_rng(seed)
    arrays = [_make_input(spec, rng, (-2.0, 2.0)) for spec in inputs]
    call = _signature(name, arrays)
    names = _input_names(function, len(arrays))
    tried = 0
    for needs in itertools.product((True, False), repeat=len(arrays)):
        if True not in needs:
            continue
        ctx = Context()
        ctx.needs_input_grad = needs
        given = [a.copy() for a in arrays]
        try:
            out = function.forward(ctx, *given)
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, f"{call}: forward") from None
        v = rng.standard_normal(np.shape(out))
        saved = list(ctx.saved_tensors or ())
        unneeded = {k: i for k, i in (saved_only_for or {}).items()
                    if k < len(saved) and not needs[i]}
        what = {k: next((f"{names[j]} (input {j}, saved as array {k})"
                         for j, a in enumerate(given) if saved[k] is a), f"saved array {k}")
                for k in unneeded}
        for k, i in unneeded.items():
            saved[k] = _Unneeded(k, i)
        ctx.save_for_backward(*saved)
        try:
            raw = function.backward(ctx, v.copy())
        except _UsedUnneeded as error:
            k = error.args[0]
            i = unneeded[k]
            raise CheckFailed(
                f"{call}, backward with ctx.needs_input_grad = {needs}: it used {what[k]}"
                f"{_where(error)}, which only the gradient for input {i} ({names[i]}) "
                f"needs, and ctx.needs_input_grad[{i}] is False. Computing that gradient "
                "and then returning None still does the work: compute it only inside "
                f"`if ctx.needs_input_grad[{i}]:` (else None), the flag of input {i} "
                "itself, not another input's.") from None
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, f"{call}: backward with ctx.needs_input_grad = "
                                        f"{needs}") from None
        if isinstance(raw, list):
            raise _list_returned(call, raw)
        grads = list(raw) if isinstance(raw, tuple) else [raw]
        if len(grads) != len(arrays):
            raise CheckFailed(f"{call}: backward returned {len(grads)} gradient(s); forward "
                              f"has {len(arrays)} input(s). Return one per input (None "
                              "where it is not needed), as a tuple.")
        tensors = [Tensor(a.copy(), requires_grad=True) for a in arrays]
        with enable_grad():
            (reference(*tensors) * Tensor(v)).sum().backward()
        variants = [Variant(s, wrong) for s, make in (mistakes or {}).items()
                    if (wrong := _try(make, *arrays, v)) is not None]
        for i, (got, needed) in enumerate(zip(grads, needs)):
            what = f"{call}, backward with ctx.needs_input_grad = {needs}: the gradient for " \
                   f"input {i}"
            if not needed and got is not None:
                swapped = " (did you read another input's flag?)" if any(
                    g is None for g, n in zip(grads, needs) if n) else ""
                raise CheckFailed(
                    f"{what} is {describe(got)}, but ctx.needs_input_grad[{i}] is False: "
                    f"nobody will use it. Skip that work and return None{swapped}.")
            if needed and got is None:
                raise CheckFailed(
                    f"{what} is None, but ctx.needs_input_grad[{i}] is True: compute it. "
                    f"(Check needs_input_grad[{i}] for input {i}, not another index.)")
            if needed:
                compare(got, tensors[i].grad.numpy(), what,
                        variants=[Variant(w.mistake, w.value[i]) for w in variants])
        tried += 1
    skipped = ", the work skipped" if saved_only_for else ""
    print(f"{name}: right gradients, and None where none is needed{skipped} ({tried} "
          "settings of needs_input_grad checked).")


# --- check_in_place_safety --------------------------------------------------------------


@checker
def check_in_place_safety(function: type, inputs: Any, reference: Callable, *,
                          modified: int | Sequence[int], mistakes: dict | None = None,
                          seed: int = 0) -> None:
    """``check_function``-like first (values and gradients), then, for each input in
    ``modified`` in turn: apply ``function``, edit that input in place (``mul_`` under
    ``no_grad``, as an optimizer step does), and backward. Right: backward raises the
    version counter's error (a saved NumPy view of an input counts as the input), or
    gives the gradient of the values forward saw (it saved a copy). Wrong: a gradient
    computed from the edited numbers, which is what keeping the input as a ctx attribute
    (or anywhere but ``save_for_backward``) gives."""
    name = _name(function)
    rng = np.random.default_rng(seed)
    arrays = [_make_input(spec, rng, (0.5, 2.0)) for spec in inputs]
    call = _signature(name, arrays)
    names = _input_names(function, len(arrays))
    edited = [modified] if isinstance(modified, int) else list(modified)

    def run(m: int) -> tuple[list | None, str | None]:
        """Edit input ``m`` after forward, then backward: the gradients (None if the
        version counter caught the edit), and what forward kept of input m, if wrong."""
        tensors = [Tensor(a.copy(), requires_grad=True) for a in arrays]
        try:
            with enable_grad():
                out = function.apply(*tensors)
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, f"{call}.apply") from None
        if not isinstance(out, Tensor):
            raise CheckFailed(f"{call} returned {describe(out)}, expected one Tensor.")
        kept = _how_kept(out.grad_fn, tensors[m].numpy(), m, names)
        v = np.random.default_rng(seed + 1).standard_normal(out.shape)
        with no_grad():
            tensors[m].mul_(3.0)
        try:
            (out * Tensor(v)).sum().backward()
        except RuntimeError as error:
            if "in-place" in str(error):
                return None, kept
            raise _student_error(error, f"{call}: backward") from None
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, f"{call}: backward") from None
        return [t.grad.numpy() for t in tensors], kept

    tensors = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    with enable_grad():
        expected_out = reference(*tensors)
        v = np.random.default_rng(seed + 1).standard_normal(expected_out.shape)
        (expected_out * Tensor(v)).sum().backward()
    expected = [t.grad.numpy() for t in tensors]
    check_function.__wrapped__(function, [arrays], reference, mistakes=mistakes, seed=seed)
    how = []
    for m in edited:
        grads, kept = run(m)
        if grads is None:
            how.append(f"input {m}, {names[m]}: caught by the version counter")
            continue
        for i, (got, right) in enumerate(zip(grads, expected)):
            if not np.allclose(got, right, atol=1e-6, rtol=1e-4):
                raise CheckFailed(
                    f"{call}, then input {m} ({names[m]}) multiplied by 3 in place (under "
                    f"no_grad), then backward: no error, and the gradient for input {i} is "
                    "wrong. It looks like " + (kept or NOT_WATCHED.format(
                        i=m, name=names[m], inputs=", ".join(names))))
        how.append(f"input {m}, {names[m]}: the gradient stays right, backward does not "
                   "read the edited array")
    print(f"{name}: right, and safe from in-place edits after forward ("
          + "; ".join(how) + ").")


def _how_kept(node: Any, array: np.ndarray, m: int, names: list[str]) -> str | None:
    """Say how forward kept input ``m``'s ``array`` out of the version counter's sight: a
    ctx attribute holding it (or a view of it), alone or in a tuple or list. (A saved NumPy
    view of it is in sight: the version counter compares memory, not array objects.)"""
    if node is None:
        return None
    for attribute, value in vars(node).items():
        held = value if isinstance(value, (tuple, list)) else (value,)
        if not attribute.startswith("_") and any(
                isinstance(a, np.ndarray) and np.shares_memory(a, array) for a in held):
            return KEPT_AS_ATTRIBUTE.format(i=m, name=names[m], attribute=attribute,
                                            inputs=", ".join(names))
    return None


__all__ = ["KEPT_AS_ATTRIBUTE", "NOT_WATCHED", "SCALE_ROWS_MISTAKES", "SIGMOID_MISTAKES",
           "SINCOS_MISTAKES", "check_in_place_safety", "check_multi_output",
           "check_needs_input_grad", "check_saves_output"]
