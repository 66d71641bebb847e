"""Running a Function's forward, and turning what it returned into output Tensors.

``Function.apply`` (and ``lazy_mode.realize``, later) call ``run_forward``; a forward
that returns one array takes apply's short path, anything else comes here to be checked
(``as_output_tuple``) and wrapped (``wrap_outputs``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tensor_class
from .messages import check_finite, explain
from .state import state
from .versions import share_version

NUMBERS = (np.generic, bool, int, float, complex)


def run_forward(cls: type, ctx: Any, arrays: list, kwargs: dict, args: tuple) -> Any:
    """Call ``cls``'s forward (either form); a NumPy error comes out explained."""
    try:
        if cls._uses_setup_context:
            outputs = cls.forward(*arrays, **kwargs)
            cls.setup_context(ctx, tuple(arrays), outputs)
        else:
            outputs = cls.forward(ctx, *arrays, **kwargs)
    except (ValueError, IndexError, TypeError, RuntimeError) as error:
        if getattr(error, "minigrad", False):
            raise
        raise explain(cls, error, args) from error
    if state.anomaly:
        where = f"{cls.oper} (forward" + (f", group {state.group})" if state.group else ")")
        check_finite(outputs, where, args, received=arrays)
    return outputs


def wrap_outputs(cls: type, ctx: Any, node: Any, args: tuple, arrays: list,
                 outputs: Any) -> Any:
    """``apply`` for any other result: several outputs, NumPy scalars, or outputs marked
    non-differentiable (those get no history)."""
    several = isinstance(outputs, tuple)
    outputs, marked = as_output_tuple(cls, outputs, ctx)
    results = []
    for i, out in enumerate(outputs):
        recorded = node is not None and not marked[i]
        results.append(tensor_class.Tensor._make(out, recorded, node if recorded else None, i))
        if node is not None:
            node.record_output(results[i], out.shape, out.dtype)
    if cls.view and isinstance(args[0], tensor_class.Tensor):
        share_version(results[0], args[0], arrays[0])
    return tuple(results) if several else results[0]


def as_output_tuple(cls: type, outputs: Any, ctx: Any) -> tuple[tuple, tuple]:
    """A forward's result (one array or a tuple of them; NumPy scalars and numbers too)
    as a tuple of arrays, and which of them were marked non-differentiable (asked before
    numbers become arrays, which makes new objects). Anything else is an error that names
    the Function and what its forward returned."""
    raw = outputs if isinstance(outputs, tuple) else (outputs,)
    if not raw:
        raise _bad_result(cls, outputs, "an empty tuple")
    marked = tuple(any(o is nd for nd in ctx._non_differentiable) for o in raw)
    arrays = []
    for o in raw:
        if isinstance(o, tensor_class.Tensor):  # mg.autograd.Function's forward
            o = o._data
        elif type(o) is not np.ndarray:
            if not isinstance(o, (np.ndarray, *NUMBERS)):
                what = f"a {type(o).__name__}" if len(raw) == 1 else \
                    f"a tuple whose output {len(arrays)} is a {type(o).__name__}"
                raise _bad_result(cls, outputs, what)
            o = np.asarray(o)
        if o.dtype.kind not in "biufc":
            raise _bad_result(cls, outputs, f"an array of dtype {o.dtype}")
        arrays.append(o)
    return tuple(arrays), marked


def _bad_result(cls: type, outputs: Any, what: str) -> TypeError:
    hint = ("; for several outputs return a tuple of arrays, or np.stack them into one "
            "array" if isinstance(outputs, list) else "")
    error = TypeError(
        f"{cls.__name__}.forward returned {what} ({outputs!r:.60}), but a forward must "
        f"return a NumPy array of numbers, or a tuple of them (one per output){hint}."
    )
    error.minigrad = True
    return error
