"""PyTorch's ``torch.autograd`` names, found under ``mg.autograd``: the Tensor form of
``Function``, ``grad``, ``backward``, ``gradcheck`` and anomaly mode.

Two ways to write a custom differentiable operation, on the one backward engine:

- ``mg.Function`` (function.py): ``forward`` and ``backward`` work on NumPy arrays. The
  built-in ops use it: it is the fast path, and it shows the maths with nothing between
  you and NumPy. Use it to learn how an op is differentiated, or to add a new primitive.
- ``mg.autograd.Function`` (here): PyTorch's contract. ``forward`` and ``backward``
  receive and return Tensors, with recording off inside, so PyTorch code such as
  ``input.mm(weight.t())`` runs unchanged. Use it to run PyTorch code, or to build an op
  out of Tensor operations. It is ``mg.Function`` with the arrays wrapped as Tensors
  (sharing memory) on the way in and unwrapped on the way out.

    class LinearFunction(mg.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight):
            ctx.save_for_backward(input, weight)
            return input @ weight.T

        @staticmethod
        def backward(ctx, grad_output):
            input, weight = ctx.saved_tensors
            return grad_output @ weight, grad_output.T @ input

    y = LinearFunction.apply(x, w)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import function
from .autograd import gradients_of
from .autograd import backward  # noqa: F401  (mg.autograd.backward is the engine's)
from .function import Context
from .gradcheck import gradcheck as _gradcheck
from .gradients import roots
from .state import (detect_anomaly, enable_grad, lazy, no_grad,  # noqa: F401
                    set_detect_anomaly, set_grad_enabled, state)
from .tensor import Tensor

FunctionCtx = Context

__all__ = ["Function", "FunctionCtx", "Variable", "backward", "detect_anomaly",
           "enable_grad", "grad", "gradcheck", "gradgradcheck", "no_grad",
           "once_differentiable", "set_detect_anomaly", "set_grad_enabled"]


class Function(function.Function):
    """PyTorch's ``torch.autograd.Function``: write static ``forward(ctx, *inputs)`` and
    ``backward(ctx, *grad_outputs)`` on Tensors (or ``forward(*inputs)`` plus
    ``setup_context(ctx, inputs, output)``), and call ``apply``.

    ``ctx`` is the same context as ``mg.Function``'s: ``save_for_backward(*tensors)``,
    ``saved_tensors`` (Tensors), ``needs_input_grad``, ``mark_non_differentiable``,
    ``set_materialize_grads``. ``backward`` returns one gradient (a Tensor, or None) per
    input of ``forward``; gradients of broadcast inputs are summed to their shape.
    """

    _tensor_contract = True
    # its backward uses Tensor ops: run with recording on, it is differentiable again
    # (higher_order.py), unless marked @once_differentiable
    twice_differentiable = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if getattr(cls.backward, "once_differentiable", False):
            cls.twice_differentiable = False
        # the engine calls forward and backward with arrays: wrap them as Tensors here
        for name in ("forward", "setup_context", "backward"):
            if name in cls.__dict__:
                setattr(cls, name, staticmethod(_with_tensors(getattr(cls, name))))

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if state.lazy:  # only running forward tells its output's shape: run it now
            with lazy(False):
                return super().apply(*args, **kwargs)
        return super().apply(*args, **kwargs)


def _with_tensors(method: Callable) -> Callable:
    """``method`` called with every NumPy array argument as a Tensor sharing it (no
    history), and with recording off, as PyTorch runs forward and backward."""

    @functools.wraps(method)
    def on_tensors(*args: Any, **kwargs: Any) -> Any:
        args = tuple(_as_tensors(a) for a in args)
        with no_grad():
            return method(*args, **kwargs)

    on_tensors.takes_tensors = True
    return on_tensors


def _as_tensors(value: Any) -> Any:
    if type(value) is np.ndarray:
        return Tensor._make(value)
    if type(value) is tuple:  # setup_context's inputs
        return tuple(_as_tensors(v) for v in value)
    return value


def once_differentiable(backward: Callable) -> Callable:
    """PyTorch's mark for a backward that cannot itself be differentiated (it computes
    outside the graph, with NumPy say): asked for ``create_graph=True``, the engine then
    raises an error naming the Function instead of giving a detached second derivative."""
    backward.once_differentiable = True
    return backward


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None,
         materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs`` (one Tensor or a sequence;
    leaves or intermediate results), as a tuple, without touching any ``.grad``.

    ``grad_outputs``: the gradient of each output (None for a one-element output).
    An input that the outputs do not depend on raises, unless ``allow_unused=True``
    (then its gradient is None, or zeros with ``materialize_grads=True``).
    ``create_graph=True``: the gradients are Tensors with history, differentiable again
    (``retain_graph`` then defaults to True, as in PyTorch). ``only_inputs`` is
    accepted and ignored, as PyTorch does (deprecated there)."""
    tensors, gradients = roots(outputs, grad_outputs, "grad")
    retain_graph = create_graph if retain_graph is None else retain_graph  # as PyTorch
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(
                f"grad: input {i} does not require grad, so there is no gradient to take "
                "with respect to it; create it with requires_grad=True")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(
                f"grad: output {i} does not require grad and has no grad_fn: it does not "
                "depend on any tensor that requires grad (or was computed under no_grad)")
    captured = gradients_of(inputs, tensors, gradients, bool(retain_graph), "grad",
                            create_graph)
    results = []
    for i, t in enumerate(inputs):
        found = captured[id(t)]
        if found is None and not (allow_unused or materialize_grads):
            raise RuntimeError(
                f"grad: input {i} (shape {tuple(t.shape)}) was not used to compute the "
                "outputs, so its gradient is undefined. Pass allow_unused=True to get None "
                "for it (or materialize_grads=True for zeros).")
        if found is None:
            results.append(Tensor._make(np.zeros(t.shape, t.dtype)) if materialize_grads
                           else None)
        elif create_graph:  # the gradient itself, with its history
            results.append(found)
        else:  # a copy: the engine's arrays may be shared with a graph or a .grad
            results.append(Tensor._make(np.array(found, dtype=t.dtype)))
    return tuple(results)


def gradcheck(func: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, **unchecked: Any) -> bool:
    """PyTorch's call form of ``mg.gradcheck``: analytic against finite-difference
    gradients, in float64. PyTorch's extra checks (``check_undefined_grad``,
    ``fast_mode``, ...) are accepted and not run."""
    unknown = set(unchecked) - _UNCHECKED
    if unknown:
        raise TypeError(f"gradcheck: unexpected argument(s) {', '.join(sorted(unknown))}")
    return _gradcheck(func, inputs, eps=eps, atol=atol, rtol=rtol,
                      raise_exception=raise_exception)


_UNCHECKED = {"nondet_tol", "check_undefined_grad", "check_grad_dtypes", "check_batched_grad",
              "check_batched_forward_grad", "check_forward_ad", "check_backward_ad",
              "fast_mode", "masked"}


def gradgradcheck(func: Callable, inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  **unchecked: Any) -> bool:
    """PyTorch's ``gradgradcheck``: gradcheck of the gradient. The first-order gradients
    of ``func`` (with ``create_graph=True``), for ``grad_outputs`` (random ones that
    require grad if not given), are checked against finite differences, with respect to
    the inputs and to ``grad_outputs``. True, or a GradcheckError naming where they differ."""
    unknown = set(unchecked) - _UNCHECKED - {"check_fwd_over_rev", "check_rev_over_rev"}
    if unknown:
        raise TypeError(f"gradgradcheck: unexpected argument(s) {', '.join(sorted(unknown))}")
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    with enable_grad():
        outputs = func(*inputs)
    outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    outputs = [o for o in outputs if isinstance(o, Tensor) and o.dtype.kind == "f"]
    if grad_outputs is None:
        random = np.random.default_rng(4321)
        grad_outputs = [Tensor(random.standard_normal(o.shape), dtype=np.float64,
                               requires_grad=True) for o in outputs]
    grad_outputs = list(grad_outputs) if isinstance(grad_outputs, (tuple, list)) \
        else [grad_outputs]
    count = len(inputs)

    def first_derivatives(*values: Any) -> tuple:
        leaves, weights = values[:count], values[count:]
        with enable_grad():  # gradcheck's finite differences run under no_grad
            results = func(*leaves)
        results = results if isinstance(results, (tuple, list)) else (results,)
        results = [r for r in results if isinstance(r, Tensor) and r.dtype.kind == "f"]
        differentiated = [(r, w) for r, w in zip(results, weights) if r.requires_grad]
        wrt = [t for t in leaves if isinstance(t, Tensor) and t.requires_grad]
        if not differentiated:
            return ()
        grads = grad([r for r, _ in differentiated], wrt, [w for _, w in differentiated],
                     create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return _gradcheck(first_derivatives, (*inputs, *grad_outputs), eps=eps, atol=atol,
                      rtol=rtol, raise_exception=raise_exception)


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Tensor:  # noqa: N802
    """PyTorch's old wrapper (before 0.4): a Variable is simply a Tensor now."""
    tensor = data if isinstance(data, Tensor) else Tensor(data)
    return tensor.requires_grad_(True) if requires_grad else tensor
