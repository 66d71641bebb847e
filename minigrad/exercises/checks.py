"""The checkers an exercise's test cell calls.

Each runs the student's code (never minigrad's own op in its place) on fixed random
inputs, compares with a reference, and raises an ``AssertionError`` whose message says
what was called, what came back, what was expected and which classic mistake it looks
like; on success it prints one line. Backward passes are checked with a random upstream
gradient, ``(out * v).sum()``: with ``.sum()`` alone a backward that forgets
``grad_output`` would pass.
"""

from __future__ import annotations

import copy
import functools
import re
import textwrap
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..function import Context, Function
from ..state import enable_grad, get_rng_state, manual_seed, no_grad, set_rng_state
from ..tensor import Tensor
from .compare import CheckFailed, Variant, as_array, close, compare, describe, sum_to_shape
from .prerequisites import check_on_its_own

ENGINE = str(Path(__file__).resolve().parents[1])  # minigrad's own files
IGNORES_GRAD_OUTPUT = (
    "backward ignores grad_output: your gradient is the local derivative alone. By the "
    "chain rule, multiply it by grad_output (the gradient that arrived from above).")
NOT_ACCUMULATED = (
    "this input is used {uses} times in the formula, and your gradient has only some of "
    "its contributions. A value used several times gets the SUM of one contribution per "
    "use: add them up.")
SCALED_NOTE = " with the inputs scaled to +-1000"


class WrongOutput:
    """A ``mistakes`` entry about forward: ``make(*arrays) -> the wrong output``.

    ``check_function`` and ``check_loss`` compare the output first, so a mistake in forward
    can only be named there: wrap its maker in ``wrong_output`` and put it in the same
    ``mistakes`` dict as the gradient mistakes."""

    def __init__(self, make: Callable) -> None:
        self.make = make


def wrong_output(make: Callable) -> WrongOutput:
    """Mark a mistake maker as giving a wrong forward output (see ``WrongOutput``)."""
    return WrongOutput(make)


def checker(check: Callable) -> Callable:
    """Public checkers raise a plain AssertionError with a short traceback. Each takes
    ``uses={name: "module:qualname"}``: the earlier exercises' code that the object under
    test (the first argument) calls, judged apart (see ``prerequisites``)."""

    def once(*args: Any, **kwargs: Any) -> None:
        with np.errstate(all="ignore"):  # an overflow is diagnosed, not warned about
            check(*args, **kwargs)

    @functools.wraps(check)
    def run(*args: Any, uses: dict | None = None, **kwargs: Any) -> None:
        try:
            if args:
                check_on_its_own(once, *args, uses=uses, **kwargs)
            else:  # the object under test given by keyword: swapped, not rebuilt
                subject = next(iter(kwargs.values()), None)
                check_on_its_own(lambda _, **options: once(**options), subject,
                                 uses=uses, **kwargs)
        except CheckFailed as failure:
            raise AssertionError(wrap(str(failure))) from None

    return run


def wrap(message: str, width: int = 78) -> str:
    """Lines short enough for a notebook's error box and nbgrader's reports."""
    lines = []
    for line in message.splitlines():
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        lines += textwrap.wrap(line, width=width, subsequent_indent=indent,
                               break_on_hyphens=False) or [""]
    return "\n".join(lines)


# --- inputs ----------------------------------------------------------------------------


def _cases(inputs: Any) -> list[list]:
    """``inputs`` is one case (a list of input specs) or several (a list of lists). A bare
    shape ``(3, 4)`` is a case with one input."""
    if isinstance(inputs, tuple) and all(isinstance(d, int) for d in inputs):
        return [[inputs]]
    inputs = list(inputs)
    if inputs and all(isinstance(case, list) for case in inputs):
        return inputs
    return [inputs]


def _make_input(spec: Any, rng: np.random.Generator, domain: tuple[float, float]) -> Any:
    """A shape becomes a random float64 array that wants a gradient; a float array or a
    Tensor is used as given (a copy); integer arrays and Python numbers are constants."""
    if isinstance(spec, tuple) and all(isinstance(d, int) for d in spec):
        low, high = domain
        return rng.uniform(low, high, size=spec)
    if isinstance(spec, Tensor):
        return spec.detach().numpy().copy()
    if isinstance(spec, np.ndarray):
        return spec.copy()
    return spec


def _wants_grad(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def _tensors(arrays: Sequence[Any], reuse: dict[int, int] | None = None) -> list[Any]:
    """Fresh leaf Tensors for the array inputs (constants stay); ``reuse`` maps a
    position to an earlier one whose Tensor it gets (an input used twice)."""
    made: list[Any] = []
    for i, a in enumerate(arrays):
        if reuse and i in reuse:
            made.append(made[reuse[i]])
        elif isinstance(a, np.ndarray):
            made.append(Tensor(a.copy(), requires_grad=_wants_grad(a)))
        else:
            made.append(a)
    return made


def _signature(name: str, arrays: Sequence[Any], kwargs: dict | None = None) -> str:
    parts = [f"array{tuple(a.shape)} {a.dtype}" if isinstance(a, np.ndarray) else repr(a)
             for a in arrays]
    parts += [f"{k}={v!r}" for k, v in (kwargs or {}).items()]
    return f"{name}({', '.join(parts)})"


def _name(thing: Any) -> str:
    return getattr(thing, "__name__", None) or type(thing).__name__


# libraries are not the student's code either: a bad shape in np.broadcast_to should
# point at the student's line, not NumPy's
LIBRARIES = ("/site-packages/", "/dist-packages/")


def _where(error: BaseException) -> str:
    """`` (line N: code)``, the last line of the student's own code in the traceback
    (or, for an error raised in the student's process while grading, the line that
    process named: ``student_where``)."""
    if getattr(error, "student_where", None):
        return error.student_where
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith(ENGINE)  # the last line that is theirs
              and not any(part in f.filename.replace("\\", "/") for part in LIBRARIES)]
    return f" (line {frames[-1].lineno}: {frames[-1].line})" if frames and frames[-1].line \
        else ""


def _student_error(error: BaseException, doing: str) -> CheckFailed:
    """The student's code raised: say where (the last line of theirs) and what."""
    said = f": {error}" if str(error) else ""
    text = f"{doing} raised {type(error).__name__}{said}{_where(error)}"
    if isinstance(error, ValueError) and "matmul" in str(error):
        text += ("\n  It looks like the operands of a matrix product are swapped or one "
                 "needs a transpose: for z = a @ b with a (m, n), b (n, k) and "
                 "grad_output (m, k), grad_a = grad_output @ b.T (shapes (m, k) @ (k, n)) "
                 "and grad_b = a.T @ grad_output ((n, m) @ (m, k)). The order matters.")
    elif isinstance(error, ValueError) and "truth value of an array" in str(error):
        text += ("\n  An array was used as a condition (if grad: ...). To test whether a "
                 "gradient is there, write `if grad is not None:`; NumPy's .any() or .all() "
                 "would skip a gradient whose values happen to be zero.")
    elif isinstance(error, TypeError) and "'tuple' object is not callable" in str(error) \
            and "saved_tensors(" in _where(error):
        text += ("\n  ctx.saved_tensors is an attribute, not a method: read it without (), "
                 "as in `x, y = ctx.saved_tensors` (or `z, = ctx.saved_tensors` for one).")
    elif isinstance(error, UnboundLocalError):
        text += ("\n  A variable set only inside an `if` was used when the `if` was not "
                 "taken: give it a value on every path (e.g. `else: grad_b = None`).")
    elif isinstance(error, ValueError) and (lost := _lost_dimension(str(error))):
        text += (f"\n  Shapes {lost[0]} and {lost[1]}: the second is the first without one "
                 "dimension, as a .sum(axis=...) or .max(axis=...) gives. Reduce with "
                 "keepdims=True so that the result keeps a size-1 dimension and lines up "
                 "with what it came from.")
    elif isinstance(error, ValueError) and ("more dimensions than allowed by the axis "
                                            "remapping" in str(error)
                                            or "remapped shapes" in str(error)) \
            and "broadcast_to" in _where(error):
        text += ("\n  np.broadcast_to got an array with more dimensions than the shape it "
                 "must fill: a dimension was put back where one already was. With "
                 "keepdim=True the reduced dimensions are still there (size 1): add them "
                 "with np.expand_dims only when keepdim is False (as the unreduce helper "
                 "does).")
    elif isinstance(error, (ValueError, IndexError)) and "squeeze" in _where(error) and (
            "out of bounds" in str(error) or "squeeze out" in str(error)):
        text += ("\n  np.squeeze(a, axis=...) found no dimension of size 1 there: `a` was "
                 "already reduced without keepdims=True, so the reduced dimension is gone. "
                 "Reduce with keepdims=True (and save that), then squeeze only what you "
                 "return.")
    elif isinstance(error, TypeError) and "'NoneType' object cannot be interpreted as an " \
            "integer" in str(error):
        text += ("\n  It looks like dim=None was used as an axis: None means every "
                 "dimension, and NumPy's expand_dims (or a sum over a tuple) cannot take "
                 "it. Keep the reduced dimensions on ctx as a tuple of ints, "
                 "dims_of(dim, x.ndim), not the raw dim, and use those.")
    elif isinstance(error, (ValueError, IndexError)) and "add.at" in _where(error):
        text += _add_at_hint(error)
    elif isinstance(error, NotImplementedError):
        text += "\n  Write your solution where the exercise says so, then run its cell."
        if (stub := re.search(r"exercise (\w+): write your code here", str(error))):
            text += (f" This is the stub of exercise {stub[1]}: if this check is for "
                     f"another exercise that uses it, do {stub[1]} first, or load its "
                     "reference answer with `from minigrad.course import use_reference; "
                     f"use_reference(\"{stub[1]}\")`.")
    return CheckFailed(text)


def _add_at_hint(error: BaseException) -> str:
    """What went wrong in an ``np.add.at(grad, position, values)`` (a scatter-add)."""
    line = _where(error)
    if "sequence" in str(error) or "inhomogeneous" in str(error):
        return ("\n  np.add.at read your list of coordinate arrays as ONE array of "
                "indices. Give it a tuple, one coordinate array per dimension of grad "
                "(tuple(where)): like x[...], NumPy reads a tuple as coordinates and a list "
                "as something else.")
    if re.search(r"add\.at\([^,]+,\s*\w*index\w*\s*,", line):
        return ("\n  np.add.at read the index alone as coordinates along the FIRST "
                "dimension of grad (and grad must have the input's shape). That is right "
                "for x[index]; a gather along dim needs the full position of every element: "
                "one coordinate array per dimension (np.indices(index.shape, sparse=True)), "
                "with index in place of the one at dim, as a tuple.")
    if re.search(r"add\.at\([^,]+,\s*\(", line):
        return ("\n  The position given to np.add.at is written for one dim: (rows, "
                "index) is right for dim = 1 of a matrix only. Build it for any dim: the "
                "coordinate arrays of np.indices(index.shape, sparse=True), as a list, "
                "with index put in place of the one at dim, then tuple(...).")
    return ("\n  np.add.at(grad, position, values) needs the full position of every value "
            "in grad: a tuple of one coordinate array per dimension of grad, each "
            "broadcasting to the values' shape.")


def _lost_dimension(message: str) -> tuple[tuple, tuple] | None:
    """The two shapes of NumPy's "could not be broadcast" when the second is the first
    with one dimension dropped (a reduction without keepdims), else None."""
    found = re.search(r"broadcast together with shapes \(([\d, ]*)\) \(([\d, ]*)\)", message)
    if not found:
        return None
    a, b = (tuple(int(n) for n in part.split(",") if n.strip()) for part in found.groups())
    if len(a) < len(b):
        a, b = b, a
    if len(a) == len(b) + 1 and any(a[:i] + a[i + 1:] == b for i in range(len(a))):
        return a, b
    return None


def _try(make: Callable, *args: Any) -> Any:
    """A known-wrong answer, or None where it cannot be formed (e.g. shapes don't fit)."""
    try:
        return make(*args)
    except (ValueError, IndexError, TypeError):
        return None


# --- running a Function ----------------------------------------------------------------


def _is_array_function(function: Any) -> bool:
    """An ``mg.Function`` subclass: forward and backward on NumPy arrays. (An
    ``mg.autograd.Function`` works on Tensors: it is checked through ``apply``.)"""
    from ..autograd_function import Function as TensorFunction

    return isinstance(function, type) and issubclass(function, Function) \
        and not issubclass(function, TensorFunction)


def _run_directly(function: type, arrays: list, kwargs: dict, v_for: Callable,
                  call: str) -> tuple[np.ndarray, list, np.ndarray]:
    """Call an ``mg.Function``'s own forward and backward (no engine in between), so
    what backward returns is seen as it is, and watch for in-place edits."""
    ctx = Context()
    ctx.needs_input_grad = tuple(_wants_grad(a) for a in arrays)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    try:
        if getattr(function, "_uses_setup_context", False):
            out = function.forward(*arrays, **kwargs)
            function.setup_context(ctx, tuple(arrays), out)
        else:
            out = function.forward(ctx, *arrays, **kwargs)
    except Exception as error:  # noqa: BLE001 - the student's code: report, don't crash
        raise _student_error(error, f"{call}: forward") from None
    for i, (a, b) in enumerate(zip(arrays, before)):
        if isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=True):
            raise CheckFailed(
                f"{call}: forward changed its input {i} in place (x *= ..., x[...] = ..., "
                "np.exp(x, out=x)?). The caller's tensor is now different, and so is any "
                "array saved from it: compute into a new array instead.")
    if out is None:
        raise CheckFailed(f"{call}: forward returned None. Did you forget `return`?")
    out = as_array(out)
    saved = ctx.saved_tensors or ()
    saved_before = [np.array(s, copy=True) if isinstance(s, np.ndarray) else s for s in saved]
    v = v_for(out)
    grad_output = v.copy()
    try:
        raw = function.backward(ctx, grad_output)
    except Exception as error:  # noqa: BLE001
        if isinstance(error, ValueError) and "not enough values to unpack" in str(error) \
                and not saved:
            raise CheckFailed(
                f"{call}: backward found nothing saved ({error}). Call "
                "ctx.save_for_backward(...) in forward with what backward needs.") from None
        raise _student_error(error, f"{call}: backward") from None
    if not np.array_equal(grad_output, v):
        raise CheckFailed(
            f"{call}: backward changed grad_output in place (grad_output *= ...?). The "
            "engine may hand the same array to other nodes: write grad_output * ... into a "
            "new array.")
    for i, (s, b) in enumerate(zip(saved, saved_before)):
        if isinstance(s, np.ndarray) and not np.array_equal(s, b, equal_nan=True):
            raise CheckFailed(
                f"{call}: backward modified saved array {i} in place (x *= ..., "
                "x -= ...?). A saved array must stay as forward left it: a second backward "
                "(retain_graph=True) would use the changed one. Compute into a new array.")
    if isinstance(raw, list) and len(arrays) > 1:
        raise CheckFailed(
            f"{call}: backward returned a list of {len(raw)} item(s), and the engine reads "
            "a list as one gradient. Return a tuple: `return grad_x, None`, or "
            "tuple(np.split(...)) since np.split returns a list.")
    grads = list(raw) if isinstance(raw, (tuple, list)) else [raw]
    if len(grads) != len(arrays):
        raise CheckFailed(
            f"{call}: backward returned {len(grads)} gradient(s) ({describe(raw)}), but "
            f"forward has {len(arrays)} input(s). Return one gradient per input, in order "
            "(None for an input that needs none); a tuple for several." + (
                f" Keyword arguments ({', '.join(kwargs)}) are not inputs and get no "
                "gradient." if kwargs else ""))
    return out, [as_array(g) for g in grads], v


def _run_through_engine(function: Any, arrays: list, kwargs: dict, v_for: Callable,
                        call: str, reuse: dict[int, int] | None = None
                        ) -> tuple[np.ndarray, list, np.ndarray]:
    """Apply the student's Function (or call their function on Tensors) and backward
    ``(out * v).sum()`` with the real engine."""
    tensors = _tensors(arrays, reuse)
    run = function.apply if hasattr(function, "apply") else function
    doing = f"{call}" if hasattr(function, "apply") else f"{call}, forward"
    try:
        with enable_grad():
            out = run(*tensors, **kwargs)
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, doing) from None
    if not isinstance(out, Tensor):
        raise CheckFailed(f"{call} returned {describe(out)}, expected a Tensor (build it "
                          "with minigrad operations so that backward can go through it).")
    v = v_for(out.detach().numpy())
    if out.requires_grad:
        try:
            (out * Tensor(v.astype(out.dtype))).sum().backward()
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, f"{call}: backward") from None
    grads = [t.grad.numpy() if isinstance(t, Tensor) and t.grad is not None else None
             for t in tensors]
    return out.detach().numpy(), grads, v


def _reference(reference: Callable, arrays: list, kwargs: dict, v: np.ndarray
               ) -> tuple[np.ndarray, list, list, list[list]]:
    """The reference's output; its gradients for upstream gradient ``v`` and for an
    all-ones one; and, per input, the contribution of each use of it (from the
    engine's own steps), to recognise a gradient that was not accumulated."""
    from ..autograd import backward_steps

    tensors = _tensors(arrays)
    with enable_grad():
        out = reference(*tensors, **kwargs)
        if out.shape != v.shape:  # v has the student's output's shape: compare names it
            return out.detach().numpy(), [], [], []
        contributions: list[list] = [[] for _ in arrays]
        if out.requires_grad:
            for step in backward_steps((out * Tensor(v.astype(out.dtype))).sum()):
                for t, g in zip(step.node.inputs, step.grad_inputs):
                    for i, leaf in enumerate(tensors):
                        if t is leaf and g is not None:
                            contributions[i].append(sum_to_shape(np.asarray(g), leaf.shape))
    grads = [t.grad.numpy() if isinstance(t, Tensor) and t.grad is not None else None
             for t in tensors]
    ones = _tensors(arrays)
    with enable_grad():
        out_ones = reference(*ones, **kwargs)
        if out_ones.requires_grad:
            out_ones.sum().backward()
    grads_ones = [t.grad.numpy() if isinstance(t, Tensor) and t.grad is not None else None
                  for t in ones]
    return out.detach().numpy(), grads, grads_ones, contributions


def _numerical(function: Any, arrays: list, kwargs: dict, v: np.ndarray,
               reuse: dict[int, int] | None = None, eps: float = 1e-6) -> list:
    """Central differences of ``sum(student_output * v)``, per array input (float64).
    ``reuse``: positions that get an earlier position's Tensor (and no gradient of their
    own: the earlier one gets the total)."""
    run = function.apply if hasattr(function, "apply") else function

    def objective(values: list) -> float:
        with no_grad():
            return float(np.sum(as_array(run(*_tensors(values, reuse), **kwargs)) * v))

    grads: list = []
    for i, a in enumerate(arrays):
        if not _wants_grad(a) or (reuse and i in reuse):
            grads.append(None)
            continue
        grad = np.zeros(a.shape)
        for k in range(a.size):
            values = [x.copy() if isinstance(x, np.ndarray) else x for x in arrays]
            flat = values[i].reshape(-1)
            flat[k] += eps
            plus = objective(values)
            flat[k] -= 2 * eps
            grad.reshape(-1)[k] = (plus - objective(values)) / (2 * eps)
        grads.append(grad)
    return grads


# --- check_function --------------------------------------------------------------------


@checker
def check_function(function: Any, inputs: Any, reference: Callable | None = None, *,
                   kwargs: dict | None = None, domain: tuple[float, float] = (-2.0, 2.0),
                   large_inputs: bool = False, mistakes: dict | None = None,
                   batch_size: int | None = None, atol: float = 1e-6, rtol: float = 1e-4,
                   seed: int = 0, more: Sequence[tuple[dict, Any]] = (),
                   exact_shapes: bool = False) -> None:
    """Check a differentiable operation: its output and the gradient for every input.

    ``function``: an ``mg.Function`` subclass (its forward and backward are called
    directly, then through ``apply`` and the engine), or any callable on Tensors that
    returns a Tensor (its gradients come from the engine).
    ``inputs``: one case, a list of input specs, or several cases (a list of such
    lists). A spec is a shape ``(3, 4)`` (random float64 values in ``domain``, wants a
    gradient), an array or a Tensor (used as given; float arrays want a gradient,
    integer ones are constants) or a Python number (a constant).
    ``reference``: the right answer, a callable on Tensors built from minigrad's own
    operations (``lambda x, y: x * y``); without it the forward is not checked and the
    gradient is compared with finite differences of the student's forward.
    ``large_inputs``: also run each case with the inputs scaled to +-1000 (softmax and
    log-softmax overflow). ``mistakes``: exercise-specific wrong answers,
    ``{sentence naming the mistake: fn(*arrays, grad_output) -> wrong gradients}``; an
    entry ``wrong_output(fn)``, ``fn(*arrays) -> wrong output``, names a mistake in forward.
    ``batch_size``: names an off-by-N factor as a mean/sum mix-up.
    ``more``: other settings, ``[(kwargs, inputs), ...]``, checked in the same call (so
    that a cell prints one line) without ``mistakes``, which are written for ``kwargs``;
    ``(kwargs, inputs, mistakes)`` gives a setting mistakes of its own.
    ``exact_shapes``: an ``mg.Function``'s backward must itself return each gradient with
    its input's shape. By default a gradient of the broadcast output's shape is summed
    back first, as the engine does for every Function; an exercise on doing that sum
    (chapter 2's ``unbroadcast``) sets this.

    Each case is also run with an input used twice (the same Tensor in two positions
    of equal shape), where it has them.
    """
    kwargs = kwargs or {}
    name = _name(function)
    rng = np.random.default_rng(seed)
    def with_large(specs: Any) -> list[tuple[list, str]]:
        made = [[_make_input(spec, rng, domain) for spec in case] for case in _cases(specs)]
        scaled = [[a * (1000.0 / np.abs(a).max()) if _wants_grad(a) and a.size else a
                   for a in case] for case in made] if large_inputs else []
        return [(case, "") for case in made] + [(case, SCALED_NOTE) for case in scaled]

    runs = [(arrays, kwargs, mistakes or {}, note) for arrays, note in with_large(inputs)]
    for other, other_inputs, *other_mistakes in more:
        runs += [(arrays, other, other_mistakes[0] if other_mistakes else {}, note)
                 for arrays, note in with_large(other_inputs)]
    checked = 0
    for arrays, settings, case_mistakes, note in runs:
        _check_case(function, name, arrays, reference, settings, rng, case_mistakes,
                    batch_size, atol, rtol, exact_shapes, note)
        checked += 1
        same = [i for i in range(1, len(arrays)) if _wants_grad(arrays[i])
                and _wants_grad(arrays[0]) and arrays[i].shape == arrays[0].shape]
        if same:
            _check_reused_input(function, name, arrays, same[0], reference, settings, rng,
                                atol, rtol, note)
            checked += 1
    print(f"{name}: forward and backward are right ({checked} case(s) checked).")


def _check_case(function: Any, name: str, arrays: list, reference: Callable | None,
                kwargs: dict, rng: np.random.Generator, mistakes: dict,
                batch_size: int | None, atol: float, rtol: float,
                exact_shapes: bool = False, note: str = "") -> None:
    call = _signature(name, arrays, kwargs) + note
    output_mistakes = {s: m for s, m in mistakes.items() if isinstance(m, WrongOutput)}
    mistakes = {s: m for s, m in mistakes.items() if not isinstance(m, WrongOutput)}
    vs: list[np.ndarray] = []

    def v_for(out: np.ndarray) -> np.ndarray:
        if not vs:
            vs.append(rng.standard_normal(np.shape(out)))
        return vs[0]

    if _is_array_function(function):
        out, grads, v = _run_directly(function, arrays, kwargs, v_for, call)
        if not exact_shapes:  # the engine sums over broadcast dimensions for every Function
            grads = [g if g is None or not isinstance(a, np.ndarray) or g.shape == a.shape
                     or sum_to_shape(g, a.shape) is None else sum_to_shape(g, a.shape)
                     for g, a in zip(grads, arrays)]
    else:
        out, grads, v = _run_through_engine(function, arrays, kwargs, v_for, call)
    if reference is not None:
        expected, expected_grads, grads_ones, contributions = \
            _reference(reference, arrays, kwargs, v)
        if out.dtype.kind != expected.dtype.kind:
            raise CheckFailed(f"{call} returned {describe(out)}; expected dtype "
                              f"{expected.dtype} ({describe(expected)}).")
        compare(out, expected, f"{call}: the output", atol=atol, rtol=rtol,
                batch_size=batch_size,
                variants=[Variant(sentence, wrong) for sentence, m in output_mistakes.items()
                          if (wrong := _try(m.make, *arrays)) is not None])
    else:
        expected_grads = _numerical(function, arrays, kwargs, v)
        grads_ones = _numerical(function, arrays, kwargs, np.ones_like(v))
        contributions = [[] for _ in arrays]
    wrong = [Variant(sentence, wrong_answer) for sentence, make in mistakes.items()
             if (wrong_answer := _try(make, *arrays, v)) is not None]
    for i, a in enumerate(arrays):
        if not _wants_grad(a):
            continue
        variants = [Variant(w.mistake, w.value[i] if isinstance(w.value, (tuple, list))
                            else w.value) for w in wrong]
        if grads_ones[i] is not None and not close(grads_ones[i], expected_grads[i], atol,
                                                   rtol):
            variants.append(Variant(IGNORES_GRAD_OUTPUT, grads_ones[i]))
        uses = contributions[i]
        if len(uses) > 1:
            for k in range(len(uses)):
                variants.append(Variant(NOT_ACCUMULATED.format(uses=len(uses)), uses[k]))
                variants.append(Variant(NOT_ACCUMULATED.format(uses=len(uses)),
                                        sum(u for j, u in enumerate(uses) if j != k)))
        what = (f"{call}, backward with a random grad_output of shape {v.shape}: the "
                f"gradient for input {i} (shape {a.shape})")
        if grads[i] is None:
            raise CheckFailed(f"{what} is None: " + (
                "backward returned None for an input that needs a gradient (see "
                "ctx.needs_input_grad)." if _is_array_function(function) else
                "no gradient reached this input. Was the graph cut, by numpy(), detach() "
                "or a NumPy function on the way?"))
        compare(grads[i], expected_grads[i], what, atol=atol, rtol=rtol, variants=variants,
                summed_from=out.shape, batch_size=batch_size,
                right="expected" if reference is not None else "numerical")
    if _is_array_function(function):  # and through the engine, as it will be used
        _, grads2, _ = _run_through_engine(function, arrays, kwargs, lambda o: v, call)
        for i, a in enumerate(arrays):
            if _wants_grad(a):
                compare(grads2[i], expected_grads[i], f"{call}.apply, then backward: the "
                        f"gradient for input {i}", atol=atol, rtol=rtol)


def _check_reused_input(function: Any, name: str, arrays: list, position: int,
                        reference: Callable | None, kwargs: dict, rng: np.random.Generator,
                        atol: float, rtol: float, note: str = "") -> None:
    """The same Tensor as input 0 and input ``position``: its gradient is the sum."""
    arrays = list(arrays)
    arrays[position] = arrays[0]
    call = (f"{_signature(name, arrays, kwargs)}{note} with input {position} the same Tensor "
            "as input 0")
    v = rng.standard_normal(np.shape(_forward_value(function, arrays, kwargs, call)))
    _, grads, _ = _run_through_engine(function, arrays, kwargs, lambda o: v, call,
                                      reuse={position: 0})
    if reference is not None:
        tensors = _tensors(arrays, reuse={position: 0})
        with enable_grad():
            out = reference(*tensors, **kwargs)
            (out * Tensor(v.astype(out.dtype))).sum().backward()
        expected = tensors[0].grad.numpy()
    else:
        expected = _numerical(function, arrays, kwargs, v, reuse={position: 0})[0]
    compare(grads[0], expected, f"{call}: the gradient of the shared input", atol=atol,
            rtol=rtol)


def _forward_value(function: Any, arrays: list, kwargs: dict, call: str) -> np.ndarray:
    run = function.apply if hasattr(function, "apply") else function
    try:
        with no_grad():
            return as_array(run(*_tensors(arrays), **kwargs))
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, call) from None


# --- check_loss ------------------------------------------------------------------------


@checker
def check_loss(loss: Callable, inputs: Any, reference: Callable, *, kwargs: dict | None = None,
               large_inputs: bool = True, mistakes: dict | None = None,
               more: Sequence[tuple[dict, Any]] = (), atol: float = 1e-6, rtol: float = 1e-4,
               seed: int = 0) -> None:
    """Check a loss function (a callable on Tensors, e.g. ``my_cross_entropy(logits,
    target)``) against ``reference`` (e.g. ``F.cross_entropy``): its value and the
    gradient for its float inputs, also for logits of +-1000 (overflow), with a factor of
    the batch size (the first dimension of input 0) named as a mean/sum mix-up.
    ``mistakes`` and ``more`` (other settings, e.g. ``ignore_index``) as for
    ``check_function``."""
    cases = _cases(inputs)
    first = cases[0][0]
    batch = first[0] if isinstance(first, tuple) and first else None
    check_function.__wrapped__(loss, cases, reference, kwargs=kwargs, large_inputs=large_inputs,
                               mistakes=mistakes, more=more, batch_size=batch, atol=atol,
                               rtol=rtol, seed=seed)


# --- check_value and check_array_function ----------------------------------------------


@checker
def check_value(value: Any, expected: Any, name: str = "your answer", *,
                mistakes: dict | None = None, check_dtype: bool = False,
                python_number: bool = False, atol: float = 1e-6, rtol: float = 1e-4,
                reveal: bool = True) -> None:
    """Check a value (a number, an array, a Tensor) against the expected one.
    ``reveal=False`` for a prediction or an answer worked out by hand: a wrong one is told
    what is wrong (the named mistake, how many values are off), never the answer.
    ``mistakes``: ``{sentence naming the mistake: the wrong value it gives}``. Where a
    plain Python number is expected, a Tensor still in a graph is refused by name; with
    ``python_number``, anything but a Python ``int`` or ``float`` is (a NumPy scalar, a
    Tensor). Where a tuple of numbers is expected, each item must be one number; a
    ``name`` like ``"(grad_w, grad_b)"`` names the items."""
    variants = [Variant(sentence, wrong) for sentence, wrong in (mistakes or {}).items()]
    number = isinstance(expected, (int, float)) and not isinstance(expected, bool)
    if number and isinstance(value, Tensor) and value.requires_grad:
        raise CheckFailed(f"{name}: got a {describe(value)} that requires grad, expected a "
                          "plain Python number" + (f" ({expected!r})" if reveal else "")
                          + ". A Tensor computed from "
                          "parameters keeps its whole graph alive (and adding such Tensors "
                          "up builds an ever longer one): take the number out with .item().")
    if number and python_number and (isinstance(value, bool)
                                     or not isinstance(value, (int, float))):
        how = ".item()" if isinstance(value, Tensor) or hasattr(value, "item") else "float()"
        raise CheckFailed(f"{name}: got {describe(value)}, expected a plain Python number "
                          f"(a float). Take the number out with {how}.")
    if isinstance(expected, (tuple, list)) and isinstance(value, (tuple, list)) and \
            expected and all(isinstance(e, (int, float)) for e in expected) and \
            len(value) == len(expected):
        items = _item_names(name, len(expected))
        for item, got in zip(items, value):
            if np.ndim(as_array(got)) != 0 and isinstance(got, (tuple, list, np.ndarray,
                                                                Tensor)):
                shown = repr(got) if len(repr(got)) <= 30 else describe(got)
                raise CheckFailed(f"{item}: got {shown}, expected a single number. "
                                  "Write the number itself, not a list or an array holding "
                                  "it (6.0, not [6.0]).")
    if isinstance(expected, (tuple, list)) and isinstance(value, (tuple, list)) and \
            not all(isinstance(e, (int, float)) for e in expected):
        if len(value) != len(expected):
            raise CheckFailed(f"{name}: got {len(value)} values, expected {len(expected)}.")
        for i, (got, right) in enumerate(zip(value, expected)):
            compare(got, right, f"{name}[{i}]", atol=atol, rtol=rtol,
                    variants=[Variant(w.mistake, w.value[i]) for w in variants],
                    check_dtype=check_dtype, reveal=reveal)
    else:
        compare(value, expected, name, atol=atol, rtol=rtol, variants=variants,
                check_dtype=check_dtype, reveal=reveal)
    print(f"{name}: right.")


def _item_names(name: str, count: int) -> list[str]:
    """``"(grad_w, grad_b)"`` -> ``["grad_w", "grad_b"]``; otherwise ``name[i]``."""
    inner = name.strip()
    if inner.startswith("(") and inner.endswith(")"):
        parts = [part.strip() for part in inner[1:-1].split(",")]
        if len(parts) == count and all(parts):
            return parts
    return [f"{name}[{i}]" for i in range(count)]


@checker
def check_array_function(function: Callable, cases: Sequence[tuple], reference: Callable, *,
                         mistakes: dict | None = None, atol: float = 1e-6,
                         rtol: float = 1e-4) -> None:
    """Check a plain function (NumPy in, NumPy out; e.g. ``unbroadcast(grad, shape)``)
    on each argument tuple in ``cases`` against ``reference``. Arrays passed in must
    not be modified. ``mistakes``: ``{sentence: fn(*args) -> the wrong result}``."""
    name = _name(function)
    for args in cases:
        call = _signature(name, args)
        before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        try:
            got = function(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, call) from None
        mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        got_again = function(*mine)
        if any(isinstance(a, np.ndarray) and not np.array_equal(a, b)
               for a, b in zip(mine, before)):
            raise CheckFailed(f"{call} changed an array it was given in place; return a new "
                              "array instead.")
        del got_again
        expected = reference(*args)
        summed_from = next((a.shape for a in args if isinstance(a, np.ndarray)), None)
        variants = [Variant(s, wrong) for s, make in (mistakes or {}).items()
                    if (wrong := _try(make, *args)) is not None]
        compare(got, expected, f"{call} returned {describe(got)}", atol=atol, rtol=rtol,
                variants=variants, summed_from=summed_from)
    print(f"{name}: right ({len(cases)} case(s) checked).")


# --- check_module ----------------------------------------------------------------------


def _snapshot(module: Any) -> dict:
    return {k: as_array(v).copy() for k, v in module.state_dict().items()}


@checker
def check_module(module: Callable, reference: Callable, *, args: tuple = (),
                 kwargs: dict | None = None, inputs: Any = ((5, 4),),
                 mistakes: dict | None = None, atol: float = 1e-5, rtol: float = 1e-4,
                 seed: int = 0) -> None:
    """Check a module class against ``reference`` (e.g. ``nn.Linear``): both are built
    with ``args``/``kwargs``, the student's gets the reference's state dict (so parameter
    names must be PyTorch's), then each case of ``inputs`` runs in train and in eval mode:
    outputs, the gradients of every parameter and of the input (random upstream
    gradient), and the buffers (running statistics) after a training-mode forward.
    Random layers (dropout) are compared in eval mode, and must be deterministic there.
    ``mistakes``: ``{sentence naming the mistake: a class (or factory) of the wrong module}``,
    built with the same ``args``/``kwargs`` and state dict and run alongside on the same
    inputs and upstream gradients: where the student's output, a gradient or a buffer
    equals a wrong module's, the check says that sentence."""
    kwargs = kwargs or {}
    name = _name(module)
    rng = np.random.default_rng(seed)
    rng_state = get_rng_state()
    manual_seed(seed)
    try:
        right = reference(*args, **kwargs)
        try:
            mine = module(*args, **kwargs)
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, _signature(name, args, kwargs)) from None
        built = _signature(name, args, kwargs)
        wanted = right.state_dict()
        have = mine.state_dict() if hasattr(mine, "state_dict") else {}
        if set(have) != set(wanted):
            raise CheckFailed(
                f"{built}: its parameters and buffers are {sorted(have)}, expected "
                f"{sorted(wanted)} (PyTorch's names; register them as attributes: "
                "self.weight = nn.Parameter(...), self.register_buffer(...)).")
        for key, value in wanted.items():
            if as_array(have[key]).shape != as_array(value).shape:
                raise CheckFailed(f"{built}: {key} has shape {as_array(have[key]).shape}, "
                                  f"expected {as_array(value).shape} (PyTorch's layout).")
        mine.load_state_dict(wanted)
        wrong = []
        for sentence, make in (mistakes or {}).items():
            wrong_module = make(*args, **kwargs)
            wrong_module.load_state_dict(wanted)
            wrong.append((sentence, wrong_module))
        for case in _cases(inputs):
            arrays = [_make_input(spec, rng, (-2.0, 2.0)) for spec in case]
            arrays = [a.astype(np.float32) if _wants_grad(a) else a for a in arrays]
            try:
                _check_module_case(mine, right, built, arrays, rng, atol, rtol, wrong)
            except CheckFailed:
                raise
            except Exception as error:  # noqa: BLE001 - the student's forward or backward
                raise _student_error(error, _signature(built, arrays)) from None
    finally:
        set_rng_state(rng_state)
    print(f"{name}: outputs, gradients and buffers are right in train and eval mode.")


def _module_run(module: Any, arrays: list, v: np.ndarray | None, seed: int
                ) -> tuple[np.ndarray, list, dict]:
    tensors = _tensors(arrays)
    manual_seed(seed)
    with enable_grad():
        out = module(*tensors)
        if v is not None and out.requires_grad:
            (out * Tensor(v.astype(out.dtype))).sum().backward()
    grads = {k: (p.grad.numpy() if p.grad is not None else None)
             for k, p in module.named_parameters()}
    grads["input"] = tensors[0].grad.numpy() if isinstance(tensors[0], Tensor) and \
        tensors[0].grad is not None else None
    return out.detach().numpy(), grads, _snapshot(module)


def _wrong_runs(wrong: list, arrays: list, v: np.ndarray, seed: int) -> list:
    """Each wrong module's (sentence, output, gradients, buffers) on the same inputs; a
    wrong module that raises on them gives nothing to match."""
    runs = []
    for sentence, module in wrong:
        module.zero_grad()
        try:
            runs.append((sentence, *_module_run(module, arrays, v, seed)))
        except Exception:  # noqa: BLE001, S112 - a mistake that cannot run matches nothing
            continue
    return runs


def _variants(runs: list, part: int, key: str | None = None) -> list[Variant]:
    """Variants from ``_wrong_runs``: the output (part 1), a gradient (2) or a buffer (3)."""
    found = []
    for run in runs:
        value = run[part] if key is None else run[part].get(key)
        if value is not None:
            found.append(Variant(run[0], value))
    return found


def _check_module_case(mine: Any, right: Any, built: str, arrays: list,
                       rng: np.random.Generator, atol: float, rtol: float,
                       wrong: list = ()) -> None:
    call = _signature(built, arrays)
    for module in (mine, right):
        module.zero_grad()
    for _, module in wrong:  # each starts the case where the reference does
        module.load_state_dict(right.state_dict())
        module.train()
    # training mode: a random layer (dropout) differs between two seeds: then only eval
    # mode is compared value by value
    right.train()
    mine.train()
    before = _snapshot(right)
    random_layer = not close(_module_run(copy.deepcopy(right), arrays, None, 1)[0],
                             _module_run(copy.deepcopy(right), arrays, None, 2)[0], 0, 0)
    reference_train = copy.deepcopy(right)
    expected, _, _ = _module_run(reference_train, arrays, None, 7)  # batch-stat output
    if not random_layer:
        v = rng.standard_normal(expected.shape)
        got, grads, buffers = _module_run(mine, arrays, v, 7)
        in_graph = [k for k, b in (mine.named_buffers() if hasattr(mine, "named_buffers")
                                   else ()) if getattr(b, "grad_fn", None) is not None]
        if in_graph:
            raise CheckFailed(
                f"{call} in train mode: after a forward, "
                + (f"buffer {in_graph[0]} is" if len(in_graph) == 1 else
                   f"buffers {', '.join(in_graph)} are")
                + " part of the autograd graph (with a grad_fn): computed from the "
                "input while the graph was recorded, so the next backward would go back "
                "through this batch's graph too. Update running statistics under "
                "`with mg.no_grad():` (they are not trained, only counted).")
        want, want_grads, want_buffers = _module_run(right, arrays, v, 7)
        runs = _wrong_runs(wrong, arrays, v, 7)
        compare(got, want, f"{call} in train mode: the output", atol=atol, rtol=rtol,
                variants=_variants(runs, 1))
        for key, grad in want_grads.items():
            if grad is not None:
                compare(grads.get(key), grad, f"{call} in train mode, backward with a random "
                        f"upstream gradient: the gradient of {key}", atol=atol, rtol=rtol,
                        variants=_variants(runs, 2, key))
        for key in want_buffers:
            if not close(want_buffers[key], before[key], 0, 0):
                compare(buffers[key], want_buffers[key],
                        f"{call} in train mode: buffer {key} after one forward",
                        atol=atol, rtol=rtol,
                        variants=[*_variants(runs, 3, key),
                                  Variant("the buffer was not updated in training mode.",
                                          before[key])])
        mine.load_state_dict(right.state_dict())
    for _, module in wrong:
        module.load_state_dict(right.state_dict())
        module.eval()
    right.eval()
    mine.eval()
    state_before = _snapshot(mine)
    first, _, state_after = _module_run(mine, arrays, None, 3)
    second, _, _ = _module_run(mine, arrays, None, 4)
    changed = [key for key in state_before
               if not close(state_after.get(key), state_before[key], 0, 0)]
    if not close(first, second, 0, 0) and changed:
        raise CheckFailed(
            f"{call} in eval mode gives different outputs on two calls because a forward "
            f"in eval mode changed {', '.join(changed)}: the running statistics are updated "
            "in eval mode; update them only when self.training is True.")
    if not close(first, second, 0, 0):
        raise CheckFailed(
            f"{call} in eval mode gives different outputs on two calls: something random "
            "is still active in eval mode. It looks like dropout active in eval mode: "
            "apply the mask only when self.training is True.")
    v = rng.standard_normal(first.shape)
    got, grads, buffers = _module_run(mine, arrays, v, 5)
    want, want_grads, want_buffers = _module_run(right, arrays, v, 5)
    runs = _wrong_runs(wrong, arrays, v, 5)
    variants = _variants(runs, 1)
    if not close(expected, want, atol, rtol) and not random_layer:
        variants.append(Variant(
            "batch statistics are used in eval mode: in eval mode, normalize with the "
            "running estimates (running_mean, running_var), not the batch's mean and "
            "variance.", expected))
    compare(got, want, f"{call} in eval mode: the output", atol=atol, rtol=rtol,
            variants=variants)
    for key in want_buffers:
        compare(buffers[key], want_buffers[key], f"{call} in eval mode: buffer {key} after a "
                "forward", atol=atol, rtol=rtol,
                variants=[*_variants(runs, 3, key),
                          Variant("the running statistics are updated in eval mode; update "
                                  "them only when self.training is True.",
                                  _module_run(copy.deepcopy(right).train(), arrays, None, 5)[2]
                                  [key])])
    for key, grad in want_grads.items():
        if grad is not None:
            compare(grads.get(key), grad, f"{call} in eval mode, backward: the gradient of "
                    f"{key}", atol=atol, rtol=rtol, variants=_variants(runs, 2, key))


# --- check_optimizer_step --------------------------------------------------------------


@checker
def check_optimizer_step(optimizer: Callable, reference: Callable, *,
                         shapes: Sequence[tuple] = ((3, 4), (4,)), steps: int = 3,
                         mistakes: dict | None = None, atol: float = 1e-6, rtol: float = 1e-4,
                         seed: int = 0, lrs: Sequence[float] | None = None,
                         **options: Any) -> None:
    """Check an optimizer class against ``reference`` (e.g. ``optim.SGD``), both built
    with ``options`` (``lr=0.1, momentum=0.9``) on parameters of ``shapes``: ``steps``
    rounds of ``zero_grad()``, a backward of a quadratic loss and ``step()``, comparing the
    gradients after each backward (a broken ``zero_grad`` makes them pile up) and each
    parameter's update (wrong sign, a factor, a missing momentum...).
    ``mistakes``: ``{sentence: fn(param, grad, step) -> the wrong new param}``.
    ``lrs``: the ``lr`` of every param group before each step (``steps`` is then their
    number), set as a scheduler sets it: an optimizer that does not read ``lr`` from its
    group at each step, or keeps an old one in its state, is caught."""
    name = _name(optimizer)
    if lrs is not None:
        steps = len(lrs)
    rng = np.random.default_rng(seed)
    starts = [rng.uniform(-1, 1, size=s).astype(np.float32) for s in shapes]
    weights = [[rng.standard_normal(s).astype(np.float32) for s in shapes]
               for _ in range(steps)]
    targets = [rng.uniform(-1, 1, size=s).astype(np.float32) for s in shapes]
    built = f"{name}({', '.join(f'{k}={v!r}' for k, v in options.items())})"
    mine_params = [Tensor(s.copy(), requires_grad=True) for s in starts]
    right_params = [Tensor(s.copy(), requires_grad=True) for s in starts]
    try:
        mine = optimizer(mine_params, **options)
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, built) from None
    right = reference(right_params, **options)
    previous_grads = [np.zeros(s) for s in shapes]
    for step in range(steps):
        before = [p.detach().numpy().copy() for p in mine_params]
        for params, opt in ((mine_params, mine), (right_params, right)):
            try:
                opt.zero_grad()
            except Exception as error:  # noqa: BLE001
                raise _student_error(error, f"{built}.zero_grad()") from None
            loss = sum(((p - Tensor(t)) * (p - Tensor(t)) * Tensor(w)).sum()
                       for p, t, w in zip(params, targets, weights[step]))
            loss.backward()
        for i, (p, q) in enumerate(zip(mine_params, right_params)):
            fresh = q.grad.numpy()
            got = p.grad.numpy() if p.grad is not None else np.zeros_like(fresh)
            compare(got, fresh, f"{built}, step {step + 1}: after zero_grad() and backward, "
                    f"the gradient of parameter {i}", atol=atol, rtol=rtol,
                    variants=[Variant("zero_grad was forgotten (or does not clear): the "
                                      "gradients of earlier steps pile up in .grad. Set each "
                                      "p.grad to None (or zero it) in zero_grad().",
                                      fresh + previous_grads[i])])
            previous_grads[i] = got.copy()
        if lrs is not None:
            for group in (*mine.param_groups, *right.param_groups):
                group["lr"] = lrs[step]
        try:
            mine.step()
        except Exception as error:  # noqa: BLE001
            raise _student_error(error, f"{built}.step()") from None
        right.step()
        for i, (p, q) in enumerate(zip(mine_params, right_params)):
            variants = [Variant(s, make(before[i], previous_grads[i], step + 1) - before[i])
                        for s, make in (mistakes or {}).items()]
            if step == 0:
                variants.append(Variant("the update is not what the first step should be: "
                                        "the parameter did not change.", np.zeros_like(before[i])))
            compare(p.detach().numpy() - before[i], q.detach().numpy() - before[i],
                    f"{built}, step {step + 1}"
                    + (f" (lr={lrs[step]!r})" if lrs is not None else "")
                    + f": the update of parameter {i} (new value minus old)",
                    atol=atol, rtol=rtol, variants=variants)
    print(f"{name}: {steps} steps match {_name(reference)}'s.")


# --- check_training_step ---------------------------------------------------------------


@checker
def check_training_step(train_step: Callable, model: Callable, optimizer: Callable,
                        batches: Sequence[tuple], loss: Callable, *,
                        mistakes: dict | None = None, atol: float = 1e-5,
                        rtol: float = 1e-4, seed: int = 0) -> None:
    """Check a training step ``train_step(model, optimizer, x, y) -> loss``: the model
    made by ``model()`` and the optimizer by ``optimizer(params)`` take the same steps on
    ``batches`` (pairs of arrays) as ``zero_grad(); loss(model(x), y).backward(); step()``.
    ``mistakes``: ``{sentence naming the mistake: a wrong train_step}``, each run on its
    own copy of the model alongside."""
    rng_state = get_rng_state()
    try:
        manual_seed(seed)
        mine = model()
        manual_seed(seed)
        right = model()
        lazy = copy.deepcopy(right)  # the same steps without zero_grad: a known mistake
        opts = [optimizer(m.parameters()) for m in (mine, right, lazy)]
        wrong_steps = [(sentence, wrong_step, copy.deepcopy(right))
                       for sentence, wrong_step in (mistakes or {}).items()]
        wrong_steps = [(sentence, wrong_step, m, optimizer(m.parameters()))
                       for sentence, wrong_step, m in wrong_steps]
        for step, (x, y) in enumerate(batches, start=1):
            try:
                returned = train_step(mine, opts[0], Tensor(np.asarray(x)),
                                      Tensor(np.asarray(y)))
            except Exception as error:  # noqa: BLE001
                raise _student_error(error, f"{_name(train_step)}, step {step}") from None
            for m, opt, clear in ((right, opts[1], True), (lazy, opts[2], False)):
                if clear:
                    opt.zero_grad()
                step_loss = loss(m(Tensor(np.asarray(x))), Tensor(np.asarray(y)))
                step_loss.backward()
                opt.step()
                if clear:
                    right_loss = step_loss.item()
            for _, wrong_step, m, opt in wrong_steps:
                wrong_step(m, opt, Tensor(np.asarray(x)), Tensor(np.asarray(y)))
            named = [(sentence, _snapshot(m)) for sentence, _, m, _ in wrong_steps]
            for (key, got), want, wrong in zip(_snapshot(mine).items(),
                                               _snapshot(right).values(),
                                               _snapshot(lazy).values()):
                variants = [Variant(sentence, params[key]) for sentence, params in named]
                compare(got, want, f"{_name(train_step)}, after step {step}: {key}",
                        atol=atol, rtol=rtol,
                        variants=[*variants,
                                  Variant("zero_grad was forgotten: gradients pile up "
                                          "across steps, so each step uses the sum of all "
                                          "gradients so far. Call optimizer.zero_grad() "
                                          "before loss.backward().", wrong)])
            _check_returned_loss(returned, right_loss, right, loss, x, y,
                                 f"{_name(train_step)}, step {step}", atol, rtol)
    finally:
        set_rng_state(rng_state)
    print(f"{_name(train_step)}: {len(batches)} steps are right.")


def _check_returned_loss(returned: Any, right_loss: float, model: Any, loss: Callable,
                         x: Any, y: Any, call: str, atol: float, rtol: float) -> None:
    """A training step returns the loss it called backward() on, as a Tensor (the
    caller takes .item() when it wants the number)."""
    if returned is None:
        raise CheckFailed(f"{call}: returned None, expected the loss (a Tensor). End the "
                          "step with `return loss`.")
    if not isinstance(returned, Tensor):
        raise CheckFailed(f"{call}: returned {describe(returned)}, expected the loss "
                          "itself, a Tensor. Return loss, not loss.item(): the caller takes "
                          "the number out when it needs one.")
    with no_grad():
        after = loss(model(Tensor(np.asarray(x))), Tensor(np.asarray(y))).item()
    compare(returned, right_loss, f"{call}: the loss it returned", atol=atol, rtol=rtol,
            variants=[Variant("the loss of the model after optimizer.step(), computed again: "
                              "return the loss you called backward() on, computed before "
                              "the step.", after)])


MATMUL_MISTAKES = {
    "the operands of a matrix product are swapped: for z = a @ b, grad_a = grad_output @ "
    "b.T and grad_b = a.T @ grad_output (a @ b is not b @ a: the order matters).":
        lambda a, b, grad_output: (b.T @ grad_output, grad_output @ a.T),
    "the gradient is transposed: for z = a @ b, grad_a = grad_output @ b.T (shape of a) and "
    "grad_b = a.T @ grad_output (shape of b).":
        lambda a, b, grad_output: ((grad_output @ b.T).T, (a.T @ grad_output).T),
}
"""Wrong gradients of ``z = a @ b`` (2-D) for ``check_function(..., mistakes=...)``."""

__all__ = ["MATMUL_MISTAKES", "check_array_function", "check_function", "check_loss",
           "check_module", "check_optimizer_step", "check_training_step", "check_value"]
