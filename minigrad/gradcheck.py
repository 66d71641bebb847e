"""gradcheck: compare the gradients backward computes with finite differences.

For a fixed random ``v`` (one per output), both sides compute the gradient of
``sum(output * v)`` with respect to every input that requires grad: analytically with
one backward pass, numerically with central differences
``(f(x + eps) - f(x - eps)) / 2 eps`` element by element, all in float64.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .errors import GradcheckError
from .state import enable_grad, get_rng_state, no_grad, set_rng_state
from .tensor import Tensor

SHOWN_PER_INPUT = 5


def _outputs(result: Any) -> list[Tensor]:
    results = result if isinstance(result, (tuple, list)) else (result,)
    return [r for r in results if isinstance(r, Tensor) and r.dtype.kind == "f"]


def gradcheck(fn: Callable, inputs: Any, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """True if analytic and numerical gradients agree for every input that requires
    grad; otherwise raise GradcheckError with a per-input report (or return False)."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    coarse_inputs = [f"input {i} ({t.dtype})" for i, t in enumerate(inputs)
                     if isinstance(t, Tensor) and t.requires_grad and t.dtype.kind == "f"
                     and t.dtype != np.float64]
    if coarse_inputs:  # as PyTorch's gradcheck does: warn, then check anyway
        warnings.warn(
            f"gradcheck: {', '.join(coarse_inputs)} requires grad and is not float64. The "
            "check runs in float64, on a float64 copy of each input, so its result may be "
            "unreliable for the float32 computation you meant to check (and wrong where fn "
            "mixes in float32 values of its own). Create the inputs with dtype=mg.float64 "
            "(or x.double()).", UserWarning, stacklevel=2)
    leaves = tuple(
        Tensor._make(np.array(t.numpy(), dtype=np.float64), requires_grad=t.requires_grad)
        if isinstance(t, Tensor) and t.dtype.kind == "f" else t
        for t in inputs
    )
    checked = [i for i, t in enumerate(leaves) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise GradcheckError("gradcheck: no input requires grad; create the inputs you want "
                             "checked with requires_grad=True")
    rng_state = get_rng_state()

    def evaluate() -> list[Tensor]:
        set_rng_state(rng_state)  # the same random draws (e.g. dropout masks) every time
        return _outputs(fn(*leaves))

    with enable_grad():
        try:
            outputs = evaluate()
        except TypeError as error:
            if "float32" not in str(error):
                raise
            raise TypeError(
                f"gradcheck: fn failed on the float64 copies of the inputs that gradcheck "
                f"uses ({error}). Finite differences need float64 throughout, float32 is too "
                "coarse: convert the model first with model.double() (and the inputs with "
                ".double()).") from error
    if not any(o.requires_grad for o in outputs):
        raise GradcheckError("gradcheck: no output requires grad: fn's result does not "
                             "depend on any input that requires grad")
    projection = np.random.default_rng(1234)
    weights = [projection.standard_normal(o.shape) for o in outputs]
    for output, weight in zip(outputs, weights):
        if output.requires_grad:
            output.backward(weight.astype(output.dtype), retain_graph=True)

    def objective() -> float:
        return sum(float(np.sum(o.numpy().astype(np.float64) * w))
                   for o, w in zip(evaluate(), weights))

    reports, passed = [], True
    for i in checked:
        leaf = leaves[i]
        analytic = leaf.grad.numpy() if leaf.grad is not None else np.zeros(leaf.shape)
        numerical = np.zeros(leaf.shape)
        flat = leaf._data.flat  # the input itself, in C order whatever its layout (a
        # reshape(-1) of a Fortran-ordered array is a copy: perturbing it changed nothing)
        with no_grad():
            for k in range(leaf._data.size):
                original = flat[k]
                flat[k] = original + eps
                plus = objective()
                flat[k] = original - eps
                minus = objective()
                flat[k] = original
                numerical.reshape(-1)[k] = (plus - minus) / (2 * eps)
        ok, report = _compare(i, leaf.shape, analytic, numerical, atol, rtol)
        passed &= ok
        reports.append(report)
    set_rng_state(rng_state)
    if passed:
        return True
    message = ("gradcheck failed: analytic and numerical gradients of sum(output * v), "
               "v fixed and random, differ\n" + "\n".join(reports))
    coarse = sorted({str(o.dtype) for o in outputs if o.dtype != np.float64})
    if coarse:
        message += (f"\n  note: fn's output is {', '.join(coarse)}, not float64: finite "
                    "differences in single precision are too coarse for these tolerances. "
                    "Compute in float64 (model.double(), x.double()).")
    if raise_exception:
        raise GradcheckError(message)
    return False


def _compare(index: int, shape: Sequence[int], analytic: np.ndarray, numerical: np.ndarray,
             atol: float, rtol: float) -> tuple[bool, str]:
    difference = np.abs(analytic - numerical)
    bad = difference > atol + rtol * np.abs(numerical)
    if not bad.any():
        return True, f"  input {index} (shape {tuple(shape)}): ok, largest difference " \
                     f"{difference.max(initial=0):.3g}"
    lines = [f"  input {index} (shape {tuple(shape)}): {int(bad.sum())} of {bad.size} "
             f"element(s) differ (atol={atol}, rtol={rtol})"]
    worst = np.argsort(-(difference * bad).reshape(-1))[:SHOWN_PER_INPUT]
    for flat_index in worst:
        if not bad.reshape(-1)[flat_index]:
            continue
        where = np.unravel_index(flat_index, shape) if len(shape) else ()
        lines.append(f"    at {tuple(int(w) for w in where)}: analytic "
                     f"{analytic.reshape(-1)[flat_index]:.6g}, numerical "
                     f"{numerical.reshape(-1)[flat_index]:.6g}, difference "
                     f"{difference.reshape(-1)[flat_index]:.3g}")
    return False, "\n".join(lines)
