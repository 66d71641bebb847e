"""``mg.autograd.functional``: PyTorch's ``torch.autograd.functional``, built on ``grad``.

Each function takes ``func`` (Tensors in, a Tensor or a tuple of Tensors out) and the
point ``inputs`` (a Tensor or a tuple), and answers in the same shapes PyTorch does: a
Tensor where a Tensor was given, a tuple where a tuple was.

- ``vjp``: v^T J, one backward pass.
- ``jvp``: J v, by the double-backward trick (PyTorch's too): the vjp ``u -> u^T J`` is
  linear in ``u``, so its gradient with respect to ``u`` is ``J v``. Two reverse passes,
  the first with ``create_graph=True``; no separate forward mode.
- ``jacobian``: one backward pass per output element (reverse mode: cheap when the
  outputs are few).
- ``hessian``: the jacobian of the gradient (computed with ``create_graph=True``).
- ``vhp`` / ``hvp``: v^T H and H v without forming H: the gradient of ``grad . v``.
  (H is symmetric for the twice-differentiable functions minigrad has, so they agree.)

``create_graph=True`` makes the results differentiable again; ``strict=True`` raises
when an output does not depend on an input (instead of giving zeros there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .autograd_function import grad
from .state import enable_grad
from .tensor import Tensor
from .tensor import stack

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(value: Any, what: str, who: str) -> tuple[bool, tuple]:
    is_tuple = isinstance(value, (tuple, list))
    values = tuple(value) if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            raise TypeError(f"{who}: {what} {i} must be a Tensor, got {type(v).__name__}")
    return is_tuple, values


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """The inputs to differentiate at: as they are (keeping their history) for
    ``create_graph``, else fresh leaves sharing their values."""
    return tuple(x if create_graph and x.requires_grad else x.detach().requires_grad_(True)
                 for x in inputs)


def _done(values: tuple, create_graph: bool) -> tuple:
    return tuple(v if create_graph or v is None else v.detach() for v in values)


def _gradients(outputs: tuple, inputs: tuple, grad_outputs: tuple, create_graph: bool,
               strict: bool, who: str) -> tuple:
    """``grad`` of ``outputs`` for ``inputs``, zeros (or, ``strict``, an error) where an
    input was not used; outputs without history contribute nothing."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    found = grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                 create_graph=create_graph, allow_unused=True) if pairs \
        else (None,) * len(inputs)
    results = []
    for i, (x, g) in enumerate(zip(inputs, found)):
        if g is None:
            if strict:
                raise RuntimeError(f"{who} (strict=True): the output(s) of func do not "
                                   f"depend on input {i} (shape {tuple(x.shape)})")
            g = Tensor._make(np.zeros(x.shape, dtype=x.dtype))
        results.append(g)
    return tuple(results)


def _vectors(v: Any, like: tuple, who: str, what: str) -> tuple:
    """``v`` as one Tensor per tensor of ``like`` (None: ones, for one-element ones)."""
    if v is None:
        if any(t.numel() != 1 for t in like):
            raise RuntimeError(f"{who}: v can be omitted only when each of the {what} has "
                               "one element; give v, with their shapes")
        return tuple(Tensor._make(np.ones(t.shape, dtype=t.dtype)) for t in like)
    _, vs = _as_tuple(v, "v", who)
    if len(vs) != len(like) or any(tuple(a.shape) != tuple(b.shape) for a, b in zip(vs, like)):
        raise RuntimeError(f"{who}: v has shapes {[tuple(a.shape) for a in vs]}, but the "
                           f"{what} have shapes {[tuple(b.shape) for b in like]}")
    return vs


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "input", "vjp")
        inputs = _prepare(inputs, create_graph)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "output", "vjp")
        vs = _vectors(v, outputs, "vjp", "outputs")
        result = _gradients(outputs, inputs, vs, create_graph, strict, "vjp")
    outputs, result = _done(outputs, create_graph), _done(result, create_graph)
    return (outputs if outputs_tuple else outputs[0]), (result if inputs_tuple else result[0])


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "input", "jvp")
        inputs = _prepare(inputs, create_graph)
        vs = _vectors(v, inputs, "jvp", "inputs")
        outputs_tuple, outputs = _as_tuple(func(*inputs), "output", "jvp")
        dummies = tuple(Tensor._make(np.zeros(o.shape, dtype=o.dtype), True)
                        for o in outputs)  # u: the vjp u^T J is linear in u
        vjps = _gradients(outputs, inputs, dummies, True, strict, "jvp")
        linked = [(g, w) for g, w in zip(vjps, vs) if g.requires_grad]
        if linked:
            found = grad([g for g, _ in linked], dummies, [w for _, w in linked],
                         create_graph=create_graph, allow_unused=True)
        else:
            found = (None,) * len(dummies)
        result = tuple(Tensor._make(np.zeros(o.shape, dtype=o.dtype)) if g is None else g
                       for g, o in zip(found, outputs))
    outputs, result = _done(outputs, create_graph), _done(result, create_graph)
    return (outputs if outputs_tuple else outputs[0]), \
        (result if outputs_tuple else result[0])


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: for output i and input j, a Tensor of shape
    ``output_i.shape + input_j.shape``; a Tensor, a tuple or a tuple of tuples, as
    PyTorch (``vectorize`` is accepted and changes nothing; reverse mode only)."""
    if strategy != "reverse-mode":
        raise NotImplementedError("jacobian: only strategy='reverse-mode' is implemented")
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "input", "jacobian")
        inputs = _prepare(inputs, create_graph)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "output", "jacobian")
        table = []
        for output in outputs:
            rows = []  # one backward pass per element of the output: a row of J
            for k in range(output.numel()):
                basis = np.zeros(output.numel(), dtype=output.dtype)
                basis[k] = 1
                rows.append(_gradients((output,), inputs,
                                       (Tensor._make(basis.reshape(output.shape)),),
                                       create_graph, strict, "jacobian"))
            table.append(tuple(
                _stacked([row[j] for row in rows], tuple(output.shape) + tuple(x.shape), x)
                for j, x in enumerate(inputs)))
    table = [_done(row, create_graph) for row in table]
    if not outputs_tuple:
        return table[0] if inputs_tuple else table[0][0]
    return tuple(row if inputs_tuple else row[0] for row in table)


def _stacked(rows: list, shape: tuple, like: Tensor) -> Tensor:
    if not rows:  # an output with no elements
        return Tensor._make(np.zeros(shape, dtype=like.dtype))
    return stack(rows).reshape(shape)


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of ``func`` (one-element output) at ``inputs``: the Jacobian of its
    gradient. A Tensor of shape ``x.shape + x.shape``, or a tuple of tuples for tuples."""
    inputs_tuple, inputs = _as_tuple(inputs, "input", "hessian")

    def gradient(*points: Tensor) -> tuple:
        output = func(*points)
        if not isinstance(output, Tensor) or output.numel() != 1:
            raise RuntimeError("hessian: func must return a Tensor with one element")
        return _gradients((output,), points, (None,), True, strict, "hessian")

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      strategy=outer_jacobian_strategy)
    return result if inputs_tuple else result[0][0]


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T H)``, without forming H: the gradient of ``grad(func) . v``."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), H v)``; H is symmetric here, so it is ``vhp``'s product."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool,
                     who: str) -> tuple:
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "input", who)
        inputs = _prepare(inputs, create_graph)
        vs = _vectors(v, inputs, who, "inputs")
        output = func(*inputs)
        if not isinstance(output, Tensor) or output.numel() != 1:
            raise RuntimeError(f"{who}: func must return a Tensor with one element")
        gradients = _gradients((output,), inputs, (None,), True, strict, who)
        linked = [(g, w) for g, w in zip(gradients, vs) if g.requires_grad]
        found = grad([g for g, _ in linked], inputs, [w for _, w in linked],
                     create_graph=create_graph, allow_unused=True) if linked \
            else (None,) * len(inputs)
        result = tuple(Tensor._make(np.zeros(x.shape, dtype=x.dtype)) if g is None else g
                       for g, x in zip(found, inputs))
    output, result = _done((output,), create_graph)[0], _done(result, create_graph)
    return output, (result if inputs_tuple else result[0])
