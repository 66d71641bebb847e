"""Chapter 14's checks (execution modes): a grad-mode switch written by the student, an
``evaluate`` loop, a checkpoint Function and a shape trace in lazy mode. Each check runs
the student's code in instrumented situations (nested blocks, an exception inside, a model
that records the grad mode and the train flag it ran in, a block that records how it was
called, a layer that counts its computations) and names the classic mistake it sees.

- ``check_grad_switch(my_no_grad)``; ``GRAD_SWITCH_MISTAKES``: wrong switches, each run
  through the same situations, ``{sentence: class}``.
- ``check_evaluate(evaluate)``.
- ``check_checkpoint(MyCheckpoint)``.
- ``check_layer_shapes(layer_shapes)``.
- ``activation_bytes(tensor, model)``: the bytes of activations (saved arrays that are
  not parameters) held by the graph behind ``tensor``, as the notebook measures them.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..factories import rand
from ..forward import array_key
from ..function import Function
from ..graph import grad_parents, walk
from ..state import (enable_grad, get_rng_state, inference_mode, is_grad_enabled, is_lazy,
                     manual_seed, no_grad, set_grad_enabled, set_rng_state, state)
from ..nn.module import Module
from ..tensor import Tensor
from .checks import _student_error, checker
from .compare import CheckFailed, Variant, compare, describe

# --- the graph's memory --------------------------------------------------------------------


def activation_bytes(tensor: Tensor, model: Any = None) -> int:
    """Bytes of the arrays saved for backward in the graph behind ``tensor`` (each array
    once), not counting the parameters of ``model`` (weights are there anyway)."""
    if tensor.grad_fn is None:
        return 0
    weights = {array_key(p.numpy(force=True)) for p in model.parameters()} \
        if model is not None else set()
    seen: dict[tuple, int] = {}  # (a saved input is a view of its array: the same key)
    for node in walk([tensor.grad_fn], grad_parents):
        for array in node.saved_arrays():
            if isinstance(array, np.ndarray) and array_key(array) not in weights:
                seen[array_key(array)] = array.nbytes
    return sum(seen.values())


def _held_by(node: Any) -> int:
    """Bytes saved in the graphs of the Tensors a node's context holds (attributes and
    saved tensors): what a checkpoint node keeps alive beyond its own input. (A node
    that stands for a call run in another process, as in grading, says what the call's
    graph holds there: ``held_bytes``.)"""
    found = [v for v in vars(node).values() if isinstance(v, Tensor)] if hasattr(
        node, "__dict__") else []
    found += [v for v in (node._saved or ()) if isinstance(v, Tensor)]
    roots = [t.grad_fn for t in found if t.grad_fn is not None]
    total: dict[tuple, int] = {}
    for inner in walk(roots, grad_parents):
        for array in inner.saved_arrays():
            if isinstance(array, np.ndarray):
                total[array_key(array)] = array.nbytes
    return sum(total.values()) + int(getattr(node, "held_bytes", 0) or 0)


@contextlib.contextmanager
def _grad_mode_kept() -> Any:
    """Whatever the student's code does to the grad and lazy modes, give them back."""
    grad, lazy = state.grad_enabled, state.lazy
    try:
        yield
    finally:
        state.grad_enabled, state.lazy = grad, lazy


# --- exercise 1: a grad-mode switch ------------------------------------------------------


def _situations(switch: Callable) -> list[tuple[str, Any]]:
    """What ``switch`` does in each situation: ``[(situation, what is seen)]``; a
    situation that raises is seen as ``"raised ExceptionName"``."""
    seen: list[tuple[str, Any]] = []
    weight = Tensor(np.ones(3, np.float32), requires_grad=True)

    def run(situation: str, probe: Callable) -> None:
        state.grad_enabled = True
        try:
            value = probe()
        except Exception as error:  # noqa: BLE001 - the student's code
            value = f"raised {type(error).__name__}"
            seen.append((situation, value))
            seen.append(("error", (error, probe.__doc__)))
            return
        finally:
            state.grad_enabled = True
        seen.append((situation, value))

    def inside() -> tuple:
        """in a `with my_no_grad():` block"""
        with switch():
            return is_grad_enabled(), (weight * 2).requires_grad

    run("inside `with my_no_grad():`, (is_grad_enabled(), (w * 2).requires_grad) with w "
        "requiring grad", inside)

    def after() -> bool:
        """in a `with my_no_grad():` block"""
        with switch():
            pass
        return is_grad_enabled()

    run("after a `with my_no_grad():` block, is_grad_enabled()", after)

    def in_no_grad() -> bool:
        """in a `with my_no_grad():` block inside `with mg.no_grad():`"""
        with no_grad():
            with switch():
                pass
            return is_grad_enabled()

    run("inside `with mg.no_grad():`, after an inner `with my_no_grad():` block, "
        "is_grad_enabled()", in_no_grad)

    def nested() -> tuple:
        """in two nested `with my_no_grad():` blocks"""
        with switch():
            with switch():
                pass
            between = is_grad_enabled()
        return between, is_grad_enabled()

    run("two nested `with my_no_grad():` blocks: is_grad_enabled() between the inner and "
        "the outer exit, and after both", nested)

    def in_enable_grad() -> tuple:
        """in a `with my_no_grad():` block inside enable_grad inside no_grad"""
        with no_grad():
            with enable_grad():
                with switch():
                    pass
                on = is_grad_enabled()
            return on, is_grad_enabled()

    run("`with mg.no_grad(): with mg.enable_grad(): with my_no_grad(): ...`: "
        "is_grad_enabled() after the my_no_grad block, then after the enable_grad block",
        in_enable_grad)

    def made_before() -> bool:
        """in a `with block:` block, block = my_no_grad() made earlier"""
        block = switch()  # made while recording is on ...
        with no_grad():
            with block:  # ... entered while it is off
                pass
            return is_grad_enabled()

    run("`block = my_no_grad()` made while recording is on, then `with mg.no_grad(): with "
        "block: ...`: is_grad_enabled() after the block", made_before)

    def raising() -> tuple:
        """in a `with my_no_grad():` block that raises"""
        reached = False
        try:
            with switch():
                raise KeyError("raised inside the block")
        except KeyError:
            reached = True
        return reached, is_grad_enabled()

    run("an exception raised inside `with my_no_grad():`: (did it reach the caller, "
        "is_grad_enabled() afterwards)", raising)
    return seen


_EXPECTED = [(False, False), True, False, (False, True), (True, False), False, (True, True)]


class _RestoresTrue:
    def __enter__(self):
        set_grad_enabled(False)

    def __exit__(self, *exc):
        set_grad_enabled(True)


class _PreviousOnTheClass:
    previous = True

    def __enter__(self):
        type(self).previous = is_grad_enabled()
        set_grad_enabled(False)

    def __exit__(self, *exc):
        set_grad_enabled(type(self).previous)


class _PreviousInInit:
    def __init__(self):
        self.previous = is_grad_enabled()

    def __enter__(self):
        set_grad_enabled(False)

    def __exit__(self, *exc):
        set_grad_enabled(self.previous)


class _Swallows:
    def __enter__(self):
        self.previous = is_grad_enabled()
        set_grad_enabled(False)

    def __exit__(self, *exc):
        set_grad_enabled(self.previous)
        return True


@contextlib.contextmanager
def _generator_without_finally():
    previous = is_grad_enabled()
    set_grad_enabled(False)
    yield
    set_grad_enabled(previous)


class _ReadsAfterSwitching:
    def __enter__(self):
        set_grad_enabled(False)
        self.previous = is_grad_enabled()  # always False: read after switching

    def __exit__(self, *exc):
        set_grad_enabled(self.previous)


class _Toggles:
    def __enter__(self):
        set_grad_enabled(False)

    def __exit__(self, *exc):
        set_grad_enabled(not is_grad_enabled())


class _NeverOff:
    def __enter__(self):
        self.previous = is_grad_enabled()
        no_grad()  # made, never entered

    def __exit__(self, *exc):
        set_grad_enabled(self.previous)


GRAD_SWITCH_MISTAKES = {
    "the exit switches recording back ON instead of restoring the mode found on entry: "
    "inside an outer mg.no_grad() that turns recording on again. Save "
    "self.previous = mg.is_grad_enabled() in __enter__ and restore it in __exit__.":
        _RestoresTrue,
    "the previous mode is kept on the class (or in a global), shared by every block: an "
    "inner block overwrites the outer one's, so leaving the outer block restores the wrong "
    "mode. Keep it on the instance, self.previous.": _PreviousOnTheClass,
    "the previous mode is read in __init__, when the object is made, not in __enter__, "
    "when the block starts: a block made earlier (or reused) restores a stale mode. Read "
    "mg.is_grad_enabled() in __enter__.": _PreviousInInit,
    "__exit__ returns a true value (True, or an object such as the one "
    "`return mg.set_grad_enabled(...)` gives back), which tells Python to SWALLOW the "
    "exception raised inside the block: the caller never sees it. Return nothing (None) "
    "from __exit__.": _Swallows,
    "an exception inside the block leaves recording off: the restore did not run when "
    "the block raised. In a @contextmanager the code after `yield` is skipped then: put "
    "the restore in `finally:`; in a class, __exit__ is called in every case, so restore "
    "there whatever exc_type says.": _generator_without_finally,
    "the previous mode is read AFTER switching recording off, so it is always False and "
    "every block leaves recording off. In __enter__, first self.previous = "
    "mg.is_grad_enabled(), then mg.set_grad_enabled(False).": _ReadsAfterSwitching,
    "__exit__ flips the mode (not mg.is_grad_enabled()) instead of restoring the one found "
    "on entry: inside an outer no_grad, or in nested blocks, it ends up on when it should "
    "be off. Save self.previous = mg.is_grad_enabled() in __enter__ and restore it in "
    "__exit__.": _Toggles,
    "recording stays on inside the block: mg.no_grad() made without `with` switches "
    "nothing. Switch it off yourself with mg.set_grad_enabled(False).": _NeverOff,
}


@checker
def check_grad_switch(switch: Callable, *, mistakes: dict | None = None) -> None:
    """Check a context manager that switches recording off (``with switch(): ...``) and
    restores the mode it found, in seven situations: inside, after, nested in
    ``mg.no_grad()``, nested in itself, inside ``enable_grad`` inside ``no_grad``, made
    before it is entered, and an exception raised inside (which must reach the caller)."""
    name = getattr(switch, "__name__", type(switch).__name__)
    if switch in (no_grad, inference_mode, set_grad_enabled) or (
            isinstance(switch, type) and issubclass(switch, (no_grad, inference_mode,
                                                            set_grad_enabled))):
        raise CheckFailed(f"{name} is minigrad's own switch: write the class yourself, with "
                          "mg.is_grad_enabled() and mg.set_grad_enabled(flag).")
    wrong = {sentence: made for sentence, made in
             (GRAD_SWITCH_MISTAKES if mistakes is None else mistakes).items()}
    with _grad_mode_kept():
        seen = _situations(switch)
        traces = {sentence: [v for s, v in _situations(made) if s != "error"]
                  for sentence, made in wrong.items()}
    mine = [v for s, v in seen if s != "error"]
    error, where = next((v for s, v in seen if s == "error"), (None, None))
    situations = [s for s, _ in seen if s != "error"]
    named = next((sentence for sentence, trace in traces.items() if trace == mine), None)
    for situation, got, expected in zip(situations, mine, _EXPECTED):
        if got == expected:
            continue
        if isinstance(got, str) and got.startswith("raised") and error is not None \
                and not isinstance(error, KeyError):
            raise _student_error(error, f"{name}, {where}") from None
        message = f"{name}, {situation}: got {got}, expected {expected}."
        if named:
            message += f"\n  It looks like {named}"
        elif isinstance(got, str) and "KeyError" in got:
            message += ("\n  The exception raised inside the block came out of it, but "
                        "check the mode it left.")
        raise CheckFailed(message)
    print(f"{name}: right in {len(_EXPECTED)} situations (nested, reused, with an "
          "exception).")


@checker
def check_grad_switch_deeply(switch: Callable, *, depth: int = 3, seed: int = 0) -> None:
    """``switch`` nested ``depth`` levels deep, alternating with ``enable_grad`` (switch,
    enable_grad, switch, ...) and entered with recording on and off (``seed`` picks which
    first): at every level recording is off inside a switch and on inside enable_grad, a
    product of a Tensor that requires grad records exactly then, and each exit gives back
    the mode of the level around it."""
    name = getattr(switch, "__name__", type(switch).__name__)
    weight = Tensor(np.ones(2, np.float32), requires_grad=True)
    with _grad_mode_kept():
        for start in ((True, False) if seed % 2 == 0 else (False, True)):
            set_grad_enabled(start)
            where = (f"{name} nested {depth} levels deep (alternating with mg.enable_grad()), "
                     f"entered with recording {'on' if start else 'off'}")
            entered, modes = [], [start]
            for level in range(depth):
                off = level % 2 == 0
                manager = switch() if off else enable_grad()
                try:
                    manager.__enter__()
                except Exception as error:  # noqa: BLE001 - the student's code
                    raise _student_error(error, where) from None
                entered.append(manager)
                inside = (is_grad_enabled(), (weight * 2).requires_grad)
                if inside != (not off, not off):
                    raise CheckFailed(
                        f"{where}: inside level {level + 1} "
                        f"({'your switch' if off else 'enable_grad'}), (is_grad_enabled(), "
                        f"(w * 2).requires_grad) is {inside}, expected {(not off, not off)}.")
                modes.append(not off)
            for level in reversed(range(depth)):
                try:
                    entered[level].__exit__(None, None, None)
                except Exception as error:  # noqa: BLE001 - the student's code
                    raise _student_error(error, where) from None
                if is_grad_enabled() != modes[level]:
                    raise CheckFailed(
                        f"{where}: after leaving level {level + 1}, is_grad_enabled() is "
                        f"{is_grad_enabled()}, expected {modes[level]} (the mode of the level "
                        "around it): __exit__ must give back the mode found on entry.")
    print(f"{name}: right nested {depth} levels deep, entered with recording on and off.")


# --- exercise 2: evaluate ----------------------------------------------------------------


class RecordingClassifier(Module):
    """A small classifier with dropout that records, at every forward, the grad mode and
    whether it was in training mode (``.calls``). (A class of the module's own, so that a
    grader can hand it to the student's code in another process.)"""

    def __init__(self) -> None:
        from .. import nn

        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5),
                                  nn.Linear(16, 3))
        self.calls: list[tuple[bool, bool]] = []

    def forward(self, x: Tensor) -> Tensor:
        self.calls.append((is_grad_enabled(), self.training))
        return self.body(x)


def _classifier(seed: int) -> Any:
    manual_seed(seed)
    return RecordingClassifier()


def _batches(seed: int) -> list[tuple[Tensor, Tensor]]:
    rng = np.random.default_rng(seed)
    batches = []
    for size in (8, 8, 5):  # a smaller last batch: a mean of batch means is wrong
        x = rng.standard_normal((size, 6)).astype(np.float32)
        y = rng.integers(0, 3, size=size).astype(np.int64)
        batches.append((Tensor(x), Tensor(y)))
    return batches


def _evaluation(model: Any, batches: list) -> dict[str, float]:
    """The right numbers, and the wrong ones of the classic mistakes."""
    from ..nn import functional as F

    losses, corrects, flat, sizes = [], [], [], []
    with no_grad():
        for x, y in batches:
            logits = model(x)
            losses.append(F.cross_entropy(logits, y).item())
            corrects.append(int((logits.argmax(dim=1) == y).sum().item()))
            flat.append(int((y.numpy() == logits.numpy().argmax()).sum()))
            sizes.append(len(y))
    n = sum(sizes)
    return {"loss": float(np.dot(losses, sizes) / n), "accuracy": sum(corrects) / n,
            "loss of batch means": float(np.mean(losses)),
            "accuracy of batch means": float(np.mean([c / s for c, s in
                                                      zip(corrects, sizes)])),
            "loss sum": float(np.dot(losses, sizes)), "correct": float(sum(corrects)),
            "loss of summed means": float(np.sum(losses)),
            "accuracy of a flat argmax": sum(flat) / n}


@checker
def check_evaluate(evaluate: Callable, seed: int = 0) -> None:
    """Check ``evaluate(model, batches) -> (mean loss, accuracy)`` on a classifier with
    dropout, in train mode and in eval mode, over batches of 8, 8 and 5 samples: no graph
    recorded (every forward under no_grad), dropout off (eval mode) during, the model's
    mode and the grad mode given back, two Python floats, each a mean over the samples."""
    name = getattr(evaluate, "__name__", "evaluate")
    rng_state = get_rng_state()
    try:
        for start_in_training in (True, False):
            model, batches = _classifier(seed), _batches(seed)
            model.train(start_in_training)
            grads_before = [p.grad for p in model.parameters()]
            mode = "training" if start_in_training else "eval"
            call = f"{name}(model, batches) on a model in {mode} mode"
            with _grad_mode_kept():
                try:
                    result = evaluate(model, batches)
                except Exception as error:  # noqa: BLE001
                    failure = _student_error(error, call)
                    if isinstance(error, ShapeError) and "Compare" in str(error):
                        failure = CheckFailed(
                            f"{failure}\n  Comparing the predictions with y needs one class "
                            "per sample, shape (batch,): the largest logit of each row, "
                            "logits.argmax(dim=1) (dim=0 gives one per class).")
                    raise failure from None
                grad_after = is_grad_enabled()
            calls = model.calls
            if len(calls) != len(batches):
                raise CheckFailed(f"{call}: the model was called {len(calls)} time(s) for "
                                  f"{len(batches)} batches; call it once on each batch.")
            if any(recording for recording, _ in calls):
                raise CheckFailed(
                    f"{call}: the model ran with recording on (mg.is_grad_enabled() was "
                    "True in its forward): every batch built a graph, with the activations "
                    "saved for a backward that never comes. Run the loop inside "
                    "`with mg.no_grad():`.")
            if any(training for _, training in calls):
                raise CheckFailed(
                    f"{call}: the model ran in training mode, so its dropout zeroed half "
                    "of the hidden units (and batch norm would use the batch's "
                    "statistics). Call model.eval() before the loop.")
            if not grad_after:
                raise CheckFailed(f"{call}: recording was still off after {name} returned: "
                                  "mg.set_grad_enabled(False) without restoring it switches "
                                  "it off for the rest of the program; use `with "
                                  "mg.no_grad():`, which restores it.")
            if any(p.grad is not g for p, g in zip(model.parameters(), grads_before)):
                raise CheckFailed(f"{call}: the parameters' .grad changed: evaluation "
                                  "computes no gradients (no backward()).")
            if model.training != start_in_training or any(
                    m.training != start_in_training for m in model.modules()):
                was, now = mode, "training" if model.training else "eval"
                hint = ("the model is left in eval mode: the training loop that called "
                        f"{name} would go on without dropout. Remember "
                        "was_training = model.training before model.eval(), and end with "
                        "model.train(was_training)." if start_in_training else
                        "model.train() at the end switches a model that was in eval mode "
                        "into training: restore the mode it had, "
                        "model.train(was_training).")
                raise CheckFailed(f"{call}: the model went in in {was} mode and came out in "
                                  f"{now} mode.\n  It looks like {hint}")
            if not isinstance(result, tuple) or len(result) != 2:
                raise CheckFailed(f"{call}: returned {describe(result)}, expected a tuple "
                                  "(mean loss, accuracy).")
            model.eval()
            right = _evaluation(model, batches)
            for what, value in zip(("mean loss", "accuracy"), result):
                if isinstance(value, Tensor):
                    raise CheckFailed(
                        f"{call}: the {what} is a {describe(value)}, expected a Python "
                        "float. It looks like a total kept as Tensors (total += loss): take "
                        "each batch's number out with .item(), and add up floats.")
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    how = ".item()" if hasattr(value, "item") else "float()"
                    raise CheckFailed(f"{call}: the {what} is {describe(value)}, expected "
                                      f"a Python float; take it out with {how}.")
            loss_variants = [
                Variant("the mean of the batches' mean losses: the last batch is smaller (5 "
                        "samples, not 8), so each batch's mean must count len(y) times. Add "
                        "loss.item() * len(y), divide by the number of samples.",
                        right["loss of batch means"]),
                Variant("the total, not the mean: divide by the number of samples.",
                        right["loss sum"]),
                Variant("the sum of the batches' mean losses: weight each by its batch size "
                        "and divide by the number of samples.", right["loss of summed means"]),
            ]
            accuracy_variants = [
                Variant("the mean of the batches' accuracies: the last batch is smaller, so "
                        "count the correct predictions over all samples, then divide by the "
                        "number of samples.", right["accuracy of batch means"]),
                Variant("the number of correct predictions, not the fraction: divide by the "
                        "number of samples.", right["correct"]),
                Variant("a percentage: return the fraction, between 0 and 1.",
                        100 * right["accuracy"]),
                Variant("logits.argmax() without dim: one index into the flattened (batch, "
                        "classes) array, not one class per sample. Take "
                        "logits.argmax(dim=1).", right["accuracy of a flat argmax"]),
            ]
            compare(result[0], right["loss"], f"{call}: the mean loss", atol=1e-5, rtol=1e-4,
                    variants=loss_variants)
            compare(result[1], right["accuracy"], f"{call}: the accuracy", atol=1e-6,
                    rtol=1e-6, variants=accuracy_variants)
        # called where recording is already off: it must be off again afterwards
        model, batches = _classifier(seed), _batches(seed)
        call = f"{name}(model, batches) called inside `with mg.no_grad():`"
        with _grad_mode_kept():
            with no_grad():
                try:
                    evaluate(model, batches)
                except Exception as error:  # noqa: BLE001
                    raise _student_error(error, call) from None
                switched_on = is_grad_enabled()
        if switched_on:
            raise CheckFailed(
                f"{call}: recording was ON after it returned, inside its caller's no_grad: "
                "it switched recording on at its end (mg.set_grad_enabled(True)?) instead of "
                "restoring the mode it found. Run the loop inside `with mg.no_grad():`, "
                "which gives back whatever mode it found (your my_no_grad does too).")
    finally:
        set_rng_state(rng_state)
    print(f"{name}: right (a model in training and in eval mode, batches of 8, 8 and 5).")


# --- exercise 3: a checkpoint Function ------------------------------------------------------


class _Block:
    """``fn`` for the checkpoint: three Linear+tanh layers (with dropout after the first
    if ``dropout``), recording how it is called: ``calls`` is a list of ``(grad mode,
    does x require grad)``."""

    def __init__(self, seed: int, dropout: bool = False) -> None:
        from .. import nn

        manual_seed(seed)
        layers: list = [nn.Linear(6, 7), nn.Tanh()]
        if dropout:
            layers.append(nn.Dropout(0.5))
        layers += [nn.Linear(7, 7), nn.Tanh(), nn.Linear(7, 5)]
        self.net = nn.Sequential(*layers)
        self.calls: list[tuple[bool, bool]] = []
        self.rng_states: list = []  # the generator's state at each call

    def __call__(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"fn(x) was called with {describe(x)}, not with the input "
                            "Tensor x")
        self.calls.append((is_grad_enabled(), bool(x.requires_grad)))
        self.rng_states.append(get_rng_state())
        return self.net(x)

    def __repr__(self) -> str:
        return "fn (a block of " + ", ".join(type(m).__name__ for m in self.net) + ")"


def _plain_run(seed: int, dropout: bool, x: np.ndarray, v: np.ndarray) -> tuple:
    """The block run and backpropagated without checkpointing (upstream gradient ``v``)."""
    block = _Block(seed, dropout)
    manual_seed(seed + 1)
    xt = Tensor(x.copy(), requires_grad=True)
    out = block(xt)
    (out * Tensor(v)).sum().backward()
    return out.detach().numpy(), xt.grad.numpy(), [p.grad.numpy() for p in
                                                   block.net.parameters()]


def _swapped(error: BaseException) -> bool:
    """Did forward take its arguments as (fn, x), PyTorch's checkpoint order?"""
    return isinstance(error, TypeError) and (
        "'Tensor' object is not callable" in str(error) or "fn(x) was called with" in str(error))


_SWAPPED = ("\n  It looks like forward takes (fn, x), the order of mg.checkpoint(fn, x) and "
            "PyTorch's checkpoint(fn, x). This Function is called as "
            "MyCheckpoint.apply(x, fn): apply hands forward its arguments in that order, so "
            "forward(ctx, x, fn), and backward returns (x's gradient, None).")


def _recomputation(block: _Block, call: str, error: BaseException | None = None) -> None:
    """Name what is wrong with how backward ran fn again (``error``: what backward
    raised, if it did)."""
    said = f"\n  (backward raised {type(error).__name__}: {error})" if error else ""
    if len(block.calls) < 2:
        if error is not None:
            return
        raise CheckFailed(f"{call}: backward did not run fn again. A checkpoint "
                          "recomputes fn's activations in backward (with recording "
                          "on) instead of keeping them from forward.")
    recording, wants_grad = block.calls[1]
    if not recording:
        raise CheckFailed(
            f"{call}: backward ran fn again with recording OFF (recording is off "
            "inside backward, as in forward), so the recomputation built no graph "
            "and no gradient can flow through it. Recompute inside `with "
            f"mg.enable_grad():`.{said}")
    if not wants_grad:
        raise CheckFailed(
            f"{call}: backward ran fn again on an input that does not require "
            "grad, so the recomputed graph stops before x and x gets no gradient. "
            f"Start from a fresh leaf: x = x.detach().requires_grad_().{said}")
    if error is not None and "does not require grad and has no grad_fn" in str(error):
        raise CheckFailed(
            f"{call}: backward called .backward() on something computed outside `with "
            "mg.enable_grad():` (out.sum()?), which recording-off backward did not record. "
            "Backpropagate grad_output through the recomputed output itself: "
            f"out.backward(grad_output).{said}")


@checker
def check_checkpoint(checkpoint: Any, seed: int = 0) -> None:
    """Check ``checkpoint.apply(x, fn)`` (an ``mg.autograd.Function``): the same output
    and gradients (for ``x`` and for the parameters inside ``fn``) as ``fn(x)`` run
    plainly, with ``fn`` run once in forward with recording off (nothing of it held) and
    once in backward with recording on, on a fresh leaf; with dropout inside, the same
    mask in the recomputation, and the random generator given back."""
    name = getattr(checkpoint, "__name__", "MyCheckpoint")
    if not (isinstance(checkpoint, type) and issubclass(checkpoint, Function)):
        raise CheckFailed(f"{name} is {describe(checkpoint)}, expected a Function class "
                          "(class MyCheckpoint(mg.autograd.Function))")
    rng = np.random.default_rng(seed)
    x_values = rng.standard_normal((4, 6)).astype(np.float32)
    v = rng.standard_normal((4, 5)).astype(np.float32)
    rng_state = get_rng_state()
    try:
        for dropout in (False, True):
            out_right, x_grad_right, param_grads_right = _plain_run(seed, dropout, x_values, v)
            ones_grad = _plain_run(seed, dropout, x_values, np.ones_like(v))[1]
            block = _Block(seed, dropout)
            manual_seed(seed + 1)
            x = Tensor(x_values.copy(), requires_grad=True)
            call = f"{name}.apply(x, fn), fn = " + ("Linear, Tanh, Dropout, Linear, Tanh, "
                                                    "Linear" if dropout else
                                                    "Linear, Tanh, Linear, Tanh, Linear")
            with _grad_mode_kept():
                state_before = get_rng_state()
                try:
                    out = checkpoint.apply(x, block)
                except Exception as error:  # noqa: BLE001
                    failure = _student_error(error, call)
                    if _swapped(error):
                        failure = CheckFailed(str(failure) + _SWAPPED)
                    raise failure from None
            if not isinstance(out, Tensor):
                raise CheckFailed(f"{call}: returned {describe(out)}, expected a Tensor "
                                  "(return fn(x) from forward).")
            if not block.calls:
                raise CheckFailed(f"{call}: forward did not call fn; return fn(x).")
            if len(block.calls) > 1 and not any(recording for recording, _ in block.calls):
                raise CheckFailed(f"{call}: forward called fn {len(block.calls)} times: call "
                                  "it once, return fn(x), and keep nothing else.")
            if block.calls[0][0] or len(block.calls) > 1:
                raise CheckFailed(
                    f"{call}: forward ran fn with recording on, so fn's graph and every "
                    "intermediate activation it saved are kept until backward: exactly "
                    "what a checkpoint must not do. Run fn(x) with recording off (it is off "
                    "inside an mg.autograd.Function's forward) and save only x.")
            held = _held_by(out.grad_fn) if out.grad_fn is not None else 0
            if held:
                raise CheckFailed(
                    f"{call}: after forward, the checkpoint's context holds a graph with "
                    f"{held} bytes of saved arrays: the intermediate activations of fn are "
                    "kept anyway. Save only the input (ctx.save_for_backward(x)) and "
                    "recompute the rest in backward.")
            if dropout and block.rng_states[0] != state_before:
                raise CheckFailed(
                    f"{call}: forward changed the random generator before calling fn "
                    "(mg.manual_seed or mg.set_rng_state?), so fn's dropout drew another mask "
                    "than the same code without a checkpoint would, and the program's random "
                    "numbers change. In forward only READ the state, ctx.rng_state = "
                    "mg.get_rng_state(); set it in backward, for the recomputation.")
            compare(out, out_right, f"{call}: the output", atol=1e-5, rtol=1e-4)
            if out.grad_fn is None:
                raise CheckFailed(f"{call}: the output has no grad_fn, so backward can "
                                  "never reach the checkpoint.")
            rand(3)  # something random between forward and backward, as in a real program
            before_backward = get_rng_state()
            try:
                (out * Tensor(v)).sum().backward()
            except Exception as error:  # noqa: BLE001
                _recomputation(block, call, error)
                raise _student_error(error, f"{call}, then backward") from None
            _recomputation(block, call)
            got = x.grad
            if got is None:
                raise CheckFailed(f"{call}: x.grad is None after backward: the input's "
                                  "gradient is not returned. backward returns one gradient "
                                  "per forward input: (x's gradient, None for fn).")
            if dropout and not np.allclose(got.numpy(), x_grad_right, atol=1e-5, rtol=1e-4):
                raise CheckFailed(
                    f"{call}: x's gradient differs from a plain run's: the recomputation "
                    "drew a NEW dropout mask, so backward went through other units than "
                    "forward. Save mg.get_rng_state() in forward and set it back "
                    "(mg.set_rng_state) just before recomputing.")
            compare(got, x_grad_right, f"{call}, backward with a random upstream gradient: "
                    "x's gradient", atol=1e-5, rtol=1e-4, variants=[Variant(
                        "the gradient of fn(x).sum(): backward ignores grad_output. "
                        "Backpropagate it through the recomputed output: "
                        "out.backward(grad_output).", ones_grad)])
            for (pname, p), right in zip(block.net.named_parameters(), param_grads_right):
                if p.grad is None:
                    raise CheckFailed(
                        f"{call}: the parameter {pname} inside fn got no gradient. Call "
                        "out.backward(grad_output) on the recomputed output, so that every "
                        "leaf inside fn (x and the parameters) accumulates its gradient "
                        "(mg.autograd.grad(out, x, ...) gives x's only).")
                compare(p.grad, right, f"{call}: the gradient of the parameter {pname} "
                        "inside fn", atol=1e-5, rtol=1e-4)
            if dropout and get_rng_state() != before_backward:
                raise CheckFailed(
                    f"{call}: after backward, the random generator was not where it was "
                    "before: the state set for the recomputation was left in place, so the "
                    "program's next random numbers repeat earlier ones. Take "
                    "now = mg.get_rng_state() before setting forward's, and "
                    "mg.set_rng_state(now) after the recomputation.")
    finally:
        set_rng_state(rng_state)
    print(f"{name}: right (fn run once in forward without recording, recomputed in "
          "backward; gradients for x and the parameters; dropout's mask kept).")


# --- exercise 4: shapes in lazy mode --------------------------------------------------------


class _Counted(Function):
    """f(x) = x, noting in ``runs`` (a list of its Watch) each time its forward really
    runs"""

    oper = "Watch"

    @staticmethod
    def forward(ctx, x, runs):
        runs.append(x.shape)
        return x.copy()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class Watch(Module):
    """Passes its input on, through a Function that notes each time it is computed."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list = []

    def forward(self, x: Tensor) -> Tensor:
        return _Counted.apply(x, self.runs)


def _models(seed: int = 0) -> list[tuple[Any, tuple]]:
    """An MLP (with a Sequential child) and a CNN, with their input shapes; another
    ``seed`` gives other widths, image size and batch."""
    from .. import nn

    if seed:
        return _other_models(seed)

    manual_seed(0)
    mlp = nn.Sequential(OrderedDict([
        ("watch", Watch()), ("hidden", nn.Linear(10, 32)), ("act", nn.ReLU()),
        ("block", nn.Sequential(nn.Linear(32, 16), nn.Tanh())),  # a child with children
        ("out", nn.Linear(16, 4))]))
    cnn = nn.Sequential(Watch(), nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(4, 6, 3), nn.Flatten(), nn.Linear(6 * 2 * 2, 10))
    return [(mlp, (3, 10)), (cnn, (2, 1, 8, 8))]


def _other_models(seed: int) -> list[tuple[Any, tuple]]:
    from .. import nn

    rng = np.random.default_rng(seed)
    inputs, hidden, batch = (int(n) for n in rng.integers(5, 13, size=3))
    manual_seed(seed)
    mlp = nn.Sequential(OrderedDict([
        ("watch", Watch()), ("first", nn.Linear(inputs, hidden)), ("act", nn.Tanh()),
        ("block", nn.Sequential(nn.Linear(hidden, 7), nn.ReLU(), nn.Linear(7, 5))),
        ("out", nn.Linear(5, 3))]))
    size = 2 * int(rng.integers(5, 8))  # an even image side: 10, 12 or 14
    side = (size // 2 - 2) // 2
    cnn = nn.Sequential(Watch(), nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(3, 5, 3), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(5 * side * side, 6))
    return [(mlp, (batch, inputs)), (cnn, (batch, 2, size, size))]


@checker
def check_layer_shapes(layer_shapes: Callable, *, seed: int = 0) -> None:
    """Check ``layer_shapes(model, input_shape) -> [(name, output shape), ...]`` on an MLP
    and a CNN: one pair per child of the Sequential, shapes as tuples, the same as a real
    run gives, with nothing computed (a layer counts its forwards) and lazy mode off
    afterwards."""
    name = getattr(layer_shapes, "__name__", "layer_shapes")
    rng_state = get_rng_state()
    try:
        for model, input_shape in _models(seed):
            call = f"{name}(model, {input_shape})"
            watches = [m for m in model.modules() if isinstance(m, Watch)]
            for watch in watches:
                watch.runs.clear()
            with _grad_mode_kept():
                try:
                    got = layer_shapes(model, input_shape)
                except Exception as error:  # noqa: BLE001
                    failure = _student_error(error, call)
                    if isinstance(error, ShapeError):
                        failure = CheckFailed(
                            f"{failure}\n  Each child must get the previous child's output "
                            "(h = layer(h)), once: walk model.named_children(), not "
                            "named_modules() or modules(), which also yield the layers "
                            "inside a child (this model has a Sequential child).")
                    raise failure from None
                lazy_after = is_lazy()
            runs = sum(len(watch.runs) for watch in watches)
            if lazy_after:
                raise CheckFailed(f"{call}: lazy mode was still on after it returned: "
                                  "mg.set_mode('lazy') stays on for the rest of the program. "
                                  "Use `with mg.lazy():`, which switches it back.")
            if runs:
                raise CheckFailed(
                    f"{call}: the layers were computed (the first layer's forward ran "
                    f"{runs} time(s)). Build the graph inside `with mg.lazy():` and read "
                    "each output's .shape, which lazy mode knows without computing; "
                    ".numpy(), .item() or realize() would run everything.")
            expected, x = [], Tensor(np.zeros(input_shape, np.float32))
            with no_grad():
                for child_name, layer in model.named_children():
                    x = layer(x)
                    expected.append((child_name, tuple(x.shape)))
            if not isinstance(got, list):
                raise CheckFailed(f"{call}: returned {describe(got)}, expected a list of "
                                  "(name, shape) pairs.")
            if len(got) == len(expected) + 1 and [tuple(p) for p in got[1:]] == expected:
                raise CheckFailed(f"{call}: the list starts with the input: give one pair "
                                  "per layer, (its name, its output's shape).")
            if len(got) != len(expected):
                raise CheckFailed(f"{call}: returned {len(got)} pair(s), expected "
                                  f"{len(expected)}, one per child of the model "
                                  "(model.named_children()).")
            for i, (pair, right) in enumerate(zip(got, expected)):
                if not isinstance(pair, tuple) or len(pair) != 2:
                    raise CheckFailed(f"{call}: item {i} is {describe(pair)}, expected a "
                                      f"pair (name, shape) like {right!r}.")
                if pair[0] != right[0]:
                    raise CheckFailed(f"{call}: item {i}'s name is {pair[0]!r}, expected "
                                      f"{right[0]!r} (the names of model.named_children()).")
                shape = pair[1]
                if not isinstance(shape, tuple) or shape != right[1]:
                    hint, before = "", expected[i - 1][1] if i else tuple(input_shape)
                    if shape == before and before != right[1]:
                        hint = ("\n  It looks like the shape of the layer's INPUT: record "
                                "the shape after calling the layer.")
                    elif shape == expected[-1][1] and i < len(expected) - 1:
                        hint = ("\n  It looks like the output of the WHOLE model: call "
                                "each child on the previous child's output, h = layer(h).")
                    raise CheckFailed(f"{call}: layer {right[0]!r}: got {describe(shape)}, "
                                      f"expected the tuple {right[1]}.{hint}")
    finally:
        set_rng_state(rng_state)
    print(f"{name}: right (an MLP and a CNN, nothing computed).")


__all__ = ["GRAD_SWITCH_MISTAKES", "activation_bytes", "check_checkpoint", "check_evaluate",
           "check_grad_switch", "check_grad_switch_deeply", "check_layer_shapes"]
