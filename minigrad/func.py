"""``mg.func``: PyTorch's ``torch.func`` function transforms, built on ``grad`` with
``create_graph``.

A transform takes a function and returns a new function: ``grad(f)`` is the function
``x -> df/dx``, so ``grad(grad(f))`` is the second derivative, and
``vmap(grad(f), in_dims=(None, 0, 0))(params, xs, ys)`` gives one gradient per sample.

How they are computed here (the values are PyTorch's; the machinery is the one engine):

- Each call differentiates ``func`` at its arguments with ``mg.autograd.grad``. The
  arguments it differentiates by become new nodes of the graph: a fresh leaf when nothing
  outside differentiates through the argument, else a recorded copy (``clone``) linked to
  it. When something outside does (an outer transform, or an outer ``backward`` through
  tensors that require grad, the MAML pattern), the gradient is taken with
  ``create_graph=True``, so it keeps its history and the outer level differentiates it
  again. That is how transforms compose: ``grad(grad(f))``, ``jacrev(jacrev(f))``,
  ``jvp(grad(f), ...)``.
- ``vjp``, ``grad``, ``jacrev``: reverse mode, one backward pass per cotangent (``jacrev``:
  one per element of the output).
- ``jvp``, ``jacfwd``: forward mode, computed by the double-vjp trick (minigrad has no
  tangent rules): the vjp ``u -> u^T J`` is recorded once (a backward with
  ``create_graph=True``); it is linear in ``u``, so its gradient with respect to ``u``
  along the tangent ``v`` is ``J v``. Exact, but it costs a forward plus two backward
  passes, where PyTorch's forward mode costs about one forward pass carrying tangents.
- ``vmap``: a loop over the batch, calling ``func`` once per sample and stacking the
  results; exact, not vectorized (PyTorch batches the ops instead).

Arguments and results may be Tensors or nests of tuples, lists and dicts of Tensors
(``{name: parameter}`` dicts, as ``functional_call`` takes), as in PyTorch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .autograd import grad_parents, walk
from .autograd_function import grad as _autograd_grad
from .state import enable_grad, get_rng_state, is_grad_enabled, set_rng_state
from .tensor import Tensor, stack

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "vjp", "vmap"]


# --- nests of Tensors (PyTorch's pytrees) ----------------------------------------------------


def _leaves(tree: Any) -> list:
    """The leaves of a nest of tuples, lists and dicts, in order."""
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    if isinstance(tree, dict):
        return [leaf for item in tree.values() for leaf in _leaves(item)]
    return [tree]


def _rebuilt(tree: Any, leaves: Iterator) -> Any:
    """``tree`` with its leaves replaced, in order, by those of the iterator ``leaves``."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuilt(item, leaves) for item in tree)
    if isinstance(tree, dict):
        return {key: _rebuilt(item, leaves) for key, item in tree.items()}
    return next(leaves)


def _mapped(function: Callable, tree: Any) -> Any:
    return _rebuilt(tree, iter([function(leaf) for leaf in _leaves(tree)]))


def _tensors(tree: Any, what: str, who: str) -> list:
    """The leaves of ``tree``, each checked to be a Tensor."""
    leaves = _leaves(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise TypeError(f"{who}: {what} must be Tensors (or tuples, lists and dicts of "
                            f"them), got a {type(leaf).__name__}")
    return leaves


def _shapes(tensors: list) -> list:
    return [tuple(t.shape) for t in tensors]


# --- differentiating at a point --------------------------------------------------------------


def _point(tensor: Tensor, outer: bool, who: str) -> Tensor:
    """The tensor to differentiate by: a recorded copy linked to ``tensor`` if something
    outside differentiates through it (``outer``: grad mode was on), else a fresh leaf
    with its values."""
    if tensor.dtype.kind != "f":
        raise TypeError(f"{who}: can only differentiate with respect to floating-point "
                        f"Tensors, got one of dtype {tensor.dtype} and shape "
                        f"{tuple(tensor.shape)}; convert it with .double() or .float()")
    if tensor.requires_grad and outer:
        return tensor.clone()
    return tensor.detach().requires_grad_(True)


def _reaches_outside(outputs: list, points: list, extra: list = ()) -> bool:
    """Does anything outside this transform feed ``outputs`` (a tensor that requires grad,
    other than its own fresh leaves ``points``), or ``extra`` (cotangents) require grad?
    Then the results keep their history (``create_graph``), so an outer level (a
    transform, or a ``backward``) can differentiate them."""
    if any(t.requires_grad for t in extra):
        return True
    own = {id(p) for p in points if p.is_leaf}
    outputs = [o for o in outputs if o.requires_grad]
    if any(o.is_leaf and id(o) not in own for o in outputs):
        return True
    for node in walk([o.grad_fn for o in outputs], grad_parents):
        for arg in node.inputs:
            if arg.is_leaf and arg.requires_grad and id(arg) not in own:
                return True
    return False


def _gradients(outputs: list, points: list, cotangents: list, create_graph: bool) -> list:
    """``grad`` of ``outputs`` for ``points`` (zeros where a point was not used); outputs
    that do not require grad contribute nothing. The graph is kept (vjp_fn, jacrev call
    it again)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    found = _autograd_grad([o for o, _ in pairs], points, [c for _, c in pairs],
                           retain_graph=True, create_graph=create_graph,
                           allow_unused=True) if pairs else [None] * len(points)
    return [_zeros_like(p) if g is None else g for g, p in zip(found, points)]


def _zeros_like(tensor: Tensor) -> Tensor:
    return Tensor(np.zeros(tensor.shape, dtype=tensor.dtype))


def _result(tree: Any, keep_history: bool) -> Any:
    """What a transform returns: Tensors with their history only when an outer level
    differentiates them."""
    if keep_history:
        return tree
    return _mapped(lambda t: t.detach() if isinstance(t, Tensor) else t, tree)


def _argnums(argnums: Any, args: tuple, who: str) -> tuple[int, ...]:
    """``argnums`` (an int or a tuple of ints, negative ones from the end) as positions."""
    numbers = argnums if isinstance(argnums, tuple) else (argnums,)
    if not numbers or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise TypeError(f"{who}: argnums must be an int or a non-empty tuple of ints, "
                        f"got {argnums!r}")
    positions = []
    for n in numbers:
        if not -len(args) <= n < len(args):
            raise RuntimeError(f"{who}: argnums={argnums!r} is out of range: the function was "
                               f"called with {len(args)} positional argument(s)")
        positions.append(n % len(args))
    if len(set(positions)) != len(positions):
        raise RuntimeError(f"{who}: argnums={argnums!r} names an argument twice")
    return tuple(positions)


def _with_points(args: tuple, argnums: tuple, outer: bool, who: str) -> tuple[list, list]:
    """``args`` with those at ``argnums`` made into points to differentiate by (nests of
    Tensors allowed), and the list of those points."""
    args = list(args)
    points: list = []
    for n in argnums:
        _tensors(args[n], f"the arguments to differentiate by (argument {n})", who)
        args[n] = _mapped(lambda t: _point(t, outer, who), args[n])
        points += _leaves(args[n])
    return args, points


def _split_aux(result: Any, has_aux: bool, who: str) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not isinstance(result, tuple) or len(result) != 2:
        raise RuntimeError(f"{who}: with has_aux=True, f must return a pair (output, aux), "
                           f"got a {type(result).__name__}")
    return result


# --- grad ------------------------------------------------------------------------------------


def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """``grad_and_value(f)(*args)`` is ``(gradient, f(*args))``: the gradient of ``f``'s
    output (a 0-dim Tensor) with respect to argument ``argnums`` (a tuple of them for a
    tuple of argnums). With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the
    result is ``(gradient, (output, aux))``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> tuple:
        return _grad_and_value(func, argnums, has_aux, "grad_and_value", args, kwargs)

    return wrapper


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """``grad(f)`` is the function computing the gradient of ``f`` (which returns a 0-dim
    Tensor) with respect to argument ``argnums`` (0: the first; a tuple gives a tuple of
    gradients). An argument may be a Tensor or a dict/tuple/list of Tensors (the gradient
    has the same form). ``has_aux=True``: ``f`` returns ``(output, aux)`` and the result is
    ``(gradient, aux)``. Composes: ``grad(grad(f))`` is the second derivative."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gradient, value = _grad_and_value(func, argnums, has_aux, "grad", args, kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def _grad_and_value(func: Callable, argnums: Any, has_aux: bool, transform: str,
                    args: tuple, kwargs: dict) -> tuple:
    who = f"{transform}({getattr(func, '__name__', 'f')})"
    positions = _argnums(argnums, args, who)
    outer = is_grad_enabled()
    with enable_grad():
        args_at, points = _with_points(args, positions, outer, who)
        output, aux = _split_aux(func(*args_at, **kwargs), has_aux, who)
        if not isinstance(output, Tensor) or output.ndim != 0:
            what = f"shape {tuple(output.shape)}" if isinstance(output, Tensor) \
                else f"a {type(output).__name__}"
            raise RuntimeError(
                f"{who}: expected f to return a 0-dim Tensor (a scalar), got {what}. "
                "Reduce it (.sum(), .mean()), or use mg.func.vjp or mg.func.jacrev for a "
                "non-scalar output.")
        keep = outer and _reaches_outside([output], points)
        gradients = iter(_gradients([output], points, [None], keep))
    per_argument = tuple(_rebuilt(args_at[n], gradients) for n in positions)
    gradient = per_argument if isinstance(argnums, tuple) else per_argument[0]
    value = _result(output, keep)
    return _result(gradient, keep), ((value, _result(aux, keep)) if has_aux else value)


# --- vjp and jvp -----------------------------------------------------------------------------


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(output, vjp_fn)``: ``func(*primals)``, and the function ``vjp_fn(cotangents)``
    giving the vector-Jacobian product ``cotangents^T J``, a tuple with one entry per
    primal (reverse mode: one backward pass per call; call it as often as you like).
    ``cotangents`` has the output's form and shapes. ``has_aux=True``: ``func`` returns
    ``(output, aux)`` and ``vjp`` returns ``(output, vjp_fn, aux)``."""
    who = f"vjp({getattr(func, '__name__', 'f')})"
    outer = is_grad_enabled()
    with enable_grad():
        primals_at, points = _with_points(primals, tuple(range(len(primals))), outer, who)
        output, aux = _split_aux(func(*primals_at), has_aux, who)
        outputs = _tensors(output, "the outputs of func", who)
        keep = outer and _reaches_outside(outputs, points)

    def vjp_fn(cotangents: Any) -> tuple:
        given = _tensors(cotangents, "cotangents", f"{who}'s vjp_fn")
        if _shapes(given) != _shapes(outputs):
            raise RuntimeError(f"{who}'s vjp_fn: the cotangents have shapes {_shapes(given)}, "
                               f"but the outputs of func have shapes {_shapes(outputs)}")
        differentiable = keep or (is_grad_enabled() and any(c.requires_grad for c in given))
        with enable_grad():
            gradients = iter(_gradients(outputs, points, given, differentiable))
        return _result(tuple(_rebuilt(p, gradients) for p in primals_at), differentiable)

    if has_aux:
        return _result(output, keep), vjp_fn, _result(aux, keep)
    return _result(output, keep), vjp_fn


def _linearized(outputs: list, points: list) -> tuple[list, list]:
    """The vjp as a graph: ``u`` (zeros that require grad, one per output) and
    ``u^T J`` for each point, recorded (``create_graph``). It is linear in ``u``, so its
    gradient with respect to ``u`` along a tangent ``v`` is ``J v``."""
    us = [Tensor(np.zeros(o.shape, dtype=o.dtype), requires_grad=True) for o in outputs]
    return us, _gradients(outputs, points, us, True)


def _tangent_products(us: list, vjps: list, tangents: list, keep: bool) -> list:
    """``J v`` per output, from ``_linearized``'s graph: one backward pass through it."""
    linked = [(g, v) for g, v in zip(vjps, tangents) if g.requires_grad]
    found = _autograd_grad([g for g, _ in linked], us, [v for _, v in linked],
                           retain_graph=True, create_graph=keep,
                           allow_unused=True) if linked else [None] * len(us)
    return [_zeros_like(u) if f is None else f for f, u in zip(found, us)]


def jvp(func: Callable, primals: tuple, tangents: tuple, has_aux: bool = False) -> tuple:
    """``(func(*primals), J v)``: the Jacobian-vector product along ``tangents`` (the same
    form and shapes as ``primals``), PyTorch's forward-mode entry point.

    How it is computed: minigrad has no forward mode (no tangent rule per op), so by the
    double-vjp trick: the vjp ``u -> u^T J`` is recorded as a graph (a backward with
    ``create_graph=True``) and differentiated with respect to ``u`` along the tangents.
    The values are exact. The cost: one forward and two backward passes (the first one
    recorded), where PyTorch's forward mode costs about one forward pass that carries the
    tangents along (and, unlike reverse mode, keeps no graph). ``has_aux=True``: ``func``
    returns ``(output, aux)``, and ``jvp`` returns ``(output, J v, aux)``."""
    who = f"jvp({getattr(func, '__name__', 'f')})"
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError(f"{who}: primals and tangents must be tuples (f is called as "
                           f"f(*primals)), got {type(primals).__name__} and "
                           f"{type(tangents).__name__}; for one Tensor x write (x,)")
    given = _tensors(tangents, "tangents", who)
    primal_leaves = _tensors(primals, "primals", who)
    if _shapes(given) != _shapes(primal_leaves):
        raise RuntimeError(f"{who}: the tangents have shapes {_shapes(given)}, but the "
                           f"primals have shapes {_shapes(primal_leaves)}: each tangent must "
                           "have its primal's shape")
    outer = is_grad_enabled()
    with enable_grad():
        primals_at, points = _with_points(primals, tuple(range(len(primals))), outer, who)
        output, aux = _split_aux(func(*primals_at), has_aux, who)
        outputs = _tensors(output, "the outputs of func", who)
        keep = outer and _reaches_outside(outputs, points, given)
        us, vjps = _linearized(outputs, points)
        products = _tangent_products(us, vjps, given, keep)
    result = (_result(output, keep), _result(_rebuilt(output, iter(products)), keep))
    return result + (_result(aux, keep),) if has_aux else result


# --- Jacobians and Hessians ------------------------------------------------------------------


def _jacobian_of(func: Callable, argnums: Any, has_aux: bool, who: str, forward: bool,
                 args: tuple, kwargs: dict) -> Any:
    """``jacrev`` (``forward=False``: one backward per output element, a row of J each) or
    ``jacfwd`` (``forward=True``: one jvp per input element, a column of J each)."""
    positions = _argnums(argnums, args, who)
    outer = is_grad_enabled()
    with enable_grad():
        args_at, points = _with_points(args, positions, outer, who)
        output, aux = _split_aux(func(*args_at, **kwargs), has_aux, who)
        outputs = _tensors(output, "the outputs of func", who)
        keep = outer and _reaches_outside(outputs, points)
        if forward:
            blocks = _columns(outputs, points, keep)
        else:
            blocks = _rows(outputs, points, keep)
    # J as PyTorch gives it: the output's form, each output leaf holding one Jacobian
    # (of shape output.shape + input.shape) per argument in argnums' form
    per_output = []
    for i in range(len(outputs)):
        jacobians = iter(blocks[i])
        per_argument = tuple(_rebuilt(args_at[n], jacobians) for n in positions)
        per_output.append(per_argument if isinstance(argnums, tuple) else per_argument[0])
    jacobian = _result(_rebuilt(output, iter(per_output)), keep)
    return (jacobian, _result(aux, keep)) if has_aux else jacobian


def _rows(outputs: list, points: list, keep: bool) -> list:
    """``blocks[i][j]``: d output i / d point j, one backward pass per element of output i."""
    blocks = []
    for output in outputs:
        rows = []
        for k in range(output.numel()):
            basis = np.zeros(output.numel(), dtype=output.dtype)
            basis[k] = 1
            cotangent = Tensor(basis.reshape(output.shape))
            rows.append(_gradients([output], points, [cotangent], keep))
        blocks.append([_stacked([row[j] for row in rows], output, point, rows_first=True)
                       for j, point in enumerate(points)])
    return blocks


def _columns(outputs: list, points: list, keep: bool) -> list:
    """``blocks[i][j]``: d output i / d point j, one jvp per element of point j (the vjp
    graph is recorded once, ``_linearized``; each column is one backward through it)."""
    us, vjps = _linearized(outputs, points)
    columns = []  # columns[j][k]: J e_k for element k of point j, one Tensor per output
    for j, point in enumerate(points):
        columns.append([])
        for k in range(point.numel()):
            basis = np.zeros(point.numel(), dtype=point.dtype)
            basis[k] = 1
            tangent = Tensor(basis.reshape(point.shape))
            columns[j].append(_tangent_products(us, [vjps[j]], [tangent], keep))
    return [[_stacked([column[i] for column in columns[j]], output, point, rows_first=False)
             for j, point in enumerate(points)] for i, output in enumerate(outputs)]


def _stacked(parts: list, output: Tensor, point: Tensor, rows_first: bool) -> Tensor:
    """One Jacobian block, shape ``output.shape + point.shape``, from its rows (each of
    the point's shape) or its columns (each of the output's shape)."""
    shape = tuple(output.shape) + tuple(point.shape)
    if not parts:  # an output or a point with no elements
        return Tensor(np.zeros(shape, dtype=point.dtype))
    if rows_first:
        return stack(parts).reshape(shape)
    return stack([p.reshape(-1) for p in parts], dim=1).reshape(shape)


def jacrev(func: Callable, argnums: int | tuple = 0, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable:
    """``jacrev(f)(*args)``: the Jacobian of ``f`` with respect to argument ``argnums``, by
    reverse mode: one backward pass per element of the output (cheap when the outputs are
    few). For an output of shape S and an argument of shape T it has shape ``S + T``; for
    several outputs or arguments it takes their form, as PyTorch's. ``chunk_size`` is
    accepted and changes nothing (the rows are computed one at a time)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        who = f"jacrev({getattr(func, '__name__', 'f')})"
        return _jacobian_of(func, argnums, has_aux, who, False, args, kwargs)

    return wrapper


def jacfwd(func: Callable, argnums: int | tuple = 0, has_aux: bool = False,
           randomness: str = "error") -> Callable:
    """``jacfwd(f)(*args)``: the same Jacobian as ``jacrev``, a column at a time: one jvp
    per element of the argument (in PyTorch, cheap when the inputs are few). Here each
    jvp is one backward pass through the recorded vjp graph (see ``jvp``), so it costs
    about what ``jacrev`` does; it is here for PyTorch's code and its shapes."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        who = f"jacfwd({getattr(func, '__name__', 'f')})"
        return _jacobian_of(func, argnums, has_aux, who, True, args, kwargs)

    return wrapper


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """``hessian(f)(*args)``: the second derivatives of ``f`` (a scalar output), shape
    ``x.shape + x.shape``: PyTorch's definition, ``jacfwd(jacrev(f, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)


# --- vmap ------------------------------------------------------------------------------------


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error",
         chunk_size: int | None = None) -> Callable:
    """``vmap(f)(xs)``: ``f`` applied to each sample of the batch ``xs`` (along dimension
    ``in_dims`` of each argument; ``None``: the argument is passed whole to every call),
    the results stacked along ``out_dims``. ``vmap(grad(loss), in_dims=(None, 0, 0))(
    params, xs, ys)`` gives per-sample gradients.

    It loops: ``f`` runs once per sample, in Python, and the results are stacked (exact,
    differentiable, and as slow as the loop; PyTorch instead runs each op once on the
    whole batch). ``randomness``: ``"error"`` (PyTorch's default) raises if ``f`` draws
    random numbers, ``"different"`` lets each sample draw its own, ``"same"`` gives every
    sample the same ones. ``chunk_size`` is accepted and changes nothing."""
    if randomness not in ("error", "different", "same"):
        raise ValueError(f"vmap: randomness must be 'error', 'different' or 'same', got "
                         f"{randomness!r}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        who = f"vmap({getattr(func, '__name__', 'f')})"
        dims = _in_dims(in_dims, args, who)
        size = _batch_size(args, dims, who)
        rng = get_rng_state()
        results = []
        for index in range(size):
            if randomness == "same":
                set_rng_state(rng)
            sample = [arg if dim is None else
                      _mapped(lambda t, d=dim, i=index: t.select(d, i), arg)
                      for arg, dim in zip(args, dims)]
            results.append(func(*sample, **kwargs))
            if randomness == "error" and repr(get_rng_state()) != repr(rng):
                raise RuntimeError(
                    f"{who}: f drew random numbers (dropout, randn, ...) with "
                    "randomness='error' (the default, as in PyTorch). Pass "
                    "randomness='different' for different numbers per sample, or 'same'.")
        return _stacked_results(results, out_dims, who)

    return wrapper


def _in_dims(in_dims: Any, args: tuple, who: str) -> list:
    """One dimension (or None) per argument."""
    if isinstance(in_dims, int) or in_dims is None:
        dims = [in_dims] * len(args)
    elif isinstance(in_dims, (tuple, list)) and len(in_dims) == len(args):
        dims = list(in_dims)
    else:
        raise ValueError(f"{who}: in_dims must be an int, None, or a tuple with one entry "
                         f"per argument ({len(args)}), got {in_dims!r}")
    for i, (arg, dim) in enumerate(zip(args, dims)):
        if dim is None:
            continue
        if not isinstance(dim, int):
            raise ValueError(f"{who}: in_dims[{i}] must be an int or None, got {dim!r}")
        for tensor in _tensors(arg, f"mapped arguments (argument {i})", who):
            if not -tensor.ndim <= dim < tensor.ndim:
                raise ValueError(f"{who}: in_dim={dim} for argument {i} is out of range: it "
                                 f"has shape {tuple(tensor.shape)}")
    return dims


def _batch_size(args: tuple, dims: list, who: str) -> int:
    sizes = {(i, tuple(t.shape)): t.shape[dim] for i, (arg, dim) in enumerate(zip(args, dims))
             if dim is not None for t in _leaves(arg)}
    if not sizes:
        raise ValueError(f"{who}: no argument is mapped: in_dims is None for all of them, "
                         "so there is no batch dimension to loop over")
    if len(set(sizes.values())) != 1:
        found = ", ".join(f"argument {i} (shape {shape}) has {size}"
                          for (i, shape), size in sizes.items())
        raise ValueError(f"{who}: the mapped dimensions have different sizes: {found}")
    return next(iter(sizes.values()))


def _stacked_results(results: list, out_dims: Any, who: str) -> Any:
    first = results[0]
    if isinstance(out_dims, (tuple, list)):
        if not isinstance(first, tuple) or len(out_dims) != len(first):
            raise ValueError(f"{who}: out_dims {out_dims!r} must have one entry per output")
        return tuple(_stacked_results([r[i] for r in results], d, who)
                     for i, d in enumerate(out_dims))
    columns = [_tensors(result, "the outputs of f", who) for result in results]

    def stacked(position: int) -> Tensor:
        parts = [column[position] for column in columns]
        ndim = parts[0].ndim + 1
        if not -ndim <= out_dims < ndim:
            raise ValueError(f"{who}: out_dims={out_dims} is out of range for an output of "
                             f"shape {tuple(parts[0].shape)} (stacked: {ndim} dimensions)")
        return stack(parts, dim=out_dims % ndim)

    return _rebuilt(first, iter([stacked(i) for i in range(len(columns[0]))]))


# --- functional_call -------------------------------------------------------------------------


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` computed with the given tensors in place of the
    parameters and buffers they name (``{"0.weight": w, ...}``, the names of
    ``named_parameters()``; a tuple of such dicts is merged). The module itself is left
    unchanged. Differentiable with respect to the given tensors: the MAML inner step
    ``functional_call(model, {n: p - lr * g ...}, x)``.

    Names it is not given keep the module's own tensors (``strict=True``: an error). With
    ``tie_weights`` a tensor shared under two names is replaced under both. Unlike
    PyTorch, a name that is neither a parameter nor a buffer is an error (PyTorch would
    silently set a new attribute, so a misspelt name would change nothing)."""
    dicts = parameter_and_buffer_dicts
    dicts = list(dicts) if isinstance(dicts, (tuple, list)) else [dicts]
    given: dict = {}
    for d in dicts:
        if not isinstance(d, dict):
            raise TypeError(f"functional_call: expected a dict of name -> Tensor (or a tuple of "
                            f"them), got a {type(d).__name__}")
        repeated = sorted(set(given) & set(d))
        if repeated:
            raise ValueError(f"functional_call: {', '.join(repeated)} appear(s) in more than "
                             "one of the dictionaries")
        given.update(d)
    members = [(f"{prefix}.{name}" if prefix else name, owner, registry, name, value)
               for prefix, owner in module.named_modules(remove_duplicate=False)
               for registry in (owner._parameters, owner._buffers)
               for name, value in registry.items() if value is not None]
    names = {path for path, *_ in members}
    unknown = sorted(set(given) - names)
    if unknown:
        raise KeyError(f"functional_call: {type(module).__name__} has no parameter or buffer "
                       f"named {', '.join(map(repr, unknown))}; its names are "
                       f"{', '.join(sorted(names))}")
    if strict and names - set(given):
        raise RuntimeError(f"functional_call (strict=True): missing "
                           f"{', '.join(sorted(names - set(given)))}")
    for name, value in given.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"functional_call: the value for {name!r} must be a Tensor, got "
                            f"a {type(value).__name__}")
    by_original = {id(value): given[path] for path, _, _, _, value in members
                   if path in given} if tie_weights else {}
    swapped = []
    try:
        for path, owner, registry, name, value in members:
            replacement = given.get(path, by_original.get(id(value)))
            if replacement is not None:
                owner._set_member(registry, name, replacement)
                swapped.append((owner, registry, name, value))
        args = args if isinstance(args, tuple) else () if args is None else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, registry, name, value in reversed(swapped):
            owner._set_member(registry, name, value)
