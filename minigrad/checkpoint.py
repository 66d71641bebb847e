"""Gradient checkpointing: trade compute for memory.

``checkpoint(fn, *tensors)`` runs ``fn`` without recording its graph, so none of its
intermediate results are kept. During backward it runs ``fn`` again, this time
recording, and backpropagates through that fresh graph. The random state is restored
for the second run, so dropout inside draws the same mask.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import autograd
from .function import Function
from .state import enable_grad, get_rng_state, lazy, no_grad, set_rng_state, state
from .tensor import Tensor


def _as_tensors(values: Any) -> tuple[tuple, tuple | None]:
    """The Tensors among fn's results, and the layout to put them back in: None for a
    single Tensor, else fn's container type and one entry per result (``TENSOR`` for a
    Tensor's place, the value itself for anything else, which passes through as in
    PyTorch)."""
    if isinstance(values, Tensor):
        return (values,), None
    if isinstance(values, (tuple, list)):
        tensors = tuple(v for v in values if isinstance(v, Tensor))
        if tensors:
            return tensors, (type(values), [TENSOR if isinstance(v, Tensor) else v
                                            for v in values])
    raise TypeError(f"checkpoint: fn must return a Tensor or a tuple holding at least one "
                    f"Tensor, got {type(values).__name__} {values!r:.60}")


TENSOR = object()  # a Tensor's place in the layout of fn's results


class Checkpoint(Function):
    """f(x...) = fn(x...), recomputed in backward instead of stored"""

    @staticmethod
    def forward(ctx, fn, *arrays, anchored=False, layout=None, preserve_rng_state=True):
        if anchored:
            arrays = arrays[:-1]  # the anchor only made the output require grad
        ctx.fn, ctx.anchored = fn, anchored
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.save_for_backward(*arrays)
        with no_grad():
            outputs, found = _as_tensors(fn(*(_wrap(a) for a in arrays)))
        layout.append(found)  # for checkpoint() to put the results back in place
        result = tuple(o.realize()._data for o in outputs)  # (fn may use mg.lazy())
        return result if found is not None else result[0]

    @staticmethod
    def backward(ctx, *grad_outputs):
        arrays = ctx.saved_tensors
        needs = ctx.needs_input_grad[1:len(arrays) + 1]
        inputs = [Tensor._make(a, requires_grad=bool(n)) if isinstance(a, np.ndarray) else a
                  for a, n in zip(arrays, needs)]
        rng_state = get_rng_state()
        if ctx.rng_state is not None:  # (preserve_rng_state=False: draw on, as PyTorch)
            set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                outputs, _ = _as_tensors(ctx.fn(*inputs))
        finally:
            if ctx.rng_state is not None:
                set_rng_state(rng_state)
        for output, grad in zip(outputs, grad_outputs):
            if output.requires_grad and grad is not None:
                # the recomputed graph is this call's own: free it as the pass goes
                autograd.backward(output, grad, retain_graph=len(outputs) > 1)
        grads = [t.grad._data if isinstance(t, Tensor) and t.grad is not None else None
                 for t in inputs]
        return (None, *grads) + ((None,) if ctx.anchored else ())


def _wrap(value: Any) -> Any:
    return Tensor._make(value) if isinstance(value, np.ndarray) else value


def checkpoint(fn: Callable, *tensors: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """``fn(*tensors, **kwargs)`` with the same value and gradients, but without keeping
    its intermediate results: they are recomputed during backward. PyTorch's
    ``torch.utils.checkpoint.checkpoint``, whose ``use_reentrant`` picks one of its two
    implementations; they differ where minigrad follows them: only the non-reentrant one
    passes keyword arguments on to ``fn``, and the reentrant one gives no gradient to the
    parameters used inside ``fn`` when no input tensor requires grad (it warns)."""
    if kwargs:
        if use_reentrant:
            raise ValueError(f"checkpoint: unexpected keyword arguments {sorted(kwargs)}: "
                             "with use_reentrant=True fn gets only positional arguments, "
                             "as in PyTorch; pass use_reentrant=False to give it keywords")
        fn = functools.partial(fn, **kwargs)
    no_input_requires_grad = not any(isinstance(t, Tensor) and t.requires_grad
                                     for t in tensors)
    if use_reentrant and no_input_requires_grad and state.grad_enabled:
        warnings.warn("checkpoint: None of the inputs have requires_grad=True. Gradients "
                      "will be None (use_reentrant=True, as in PyTorch; use_reentrant=False "
                      "gives the parameters inside fn their gradients)", stacklevel=2)
    anchored = state.grad_enabled and no_input_requires_grad and not use_reentrant
    # parameters used inside fn still need a gradient when no input requires one
    extra = (Tensor._make(np.zeros((), np.float32), requires_grad=True),) if anchored else ()
    layout: list = []
    with lazy(False):
        results = Checkpoint.apply(fn, *tensors, *extra, anchored=anchored, layout=layout,
                                   preserve_rng_state=preserve_rng_state)
    if layout[0] is None:
        return results
    kind, entries = layout[0]
    results = iter(results if isinstance(results, tuple) else (results,))
    return kind(next(results) if value is TENSOR else value for value in entries)
