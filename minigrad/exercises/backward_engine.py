"""Chapter 04's checkers and classic mistakes (the backward engine), out of the notebook
so that its test cells do not show the answers.

The three exercises work on the recorded graph itself, so each gets a small checker of
its own, run on graphs where the classic mistakes give wrong answers: two diamonds
(mirror images: a node with two consumers, reached first along either edge), a tensor
used three times with non-square shapes, a small network with a bias, a constant input,
a max over rows and a mean, and a node with two outputs. Like every checker, they run
the student's code, never minigrad's own walk or backward in its place (those are
switched off while it runs), and raise an ``AssertionError`` naming the mistake.

- ``check_topological_order(topological_order)``: every node once, the root first,
  each node after all the nodes that consume its outputs.
- ``check_accumulate_grad(accumulate_grad)``: a leaf's ``.grad`` is the sum of the
  gradients it was given, as a Tensor of its own.
- ``check_backward_loop(my_backward_steps)``: the steps and every leaf's ``.grad``, as
  ``mg.backward_steps`` and ``loss.backward()`` give them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import autograd, graph
from ..function import Function, Node
from ..tensor import Tensor
from .checks import _student_error, checker
from .compare import CheckFailed, describe, preview, sum_to_shape
from .prerequisites import reference_for

# --- the graphs ----------------------------------------------------------------------------


class Halves(Function):
    """Two outputs: the first and the second half of the last dimension."""

    @staticmethod
    def forward(ctx, x):
        half = x.shape[-1] // 2
        return x[..., :half].copy(), x[..., half:].copy()

    @staticmethod
    def backward(ctx, grad_first, grad_second):
        return np.concatenate([grad_first, grad_second], axis=-1)


@dataclass
class Graph:
    """A small graph built for a check: its loss, its leaves by name, and how it reads."""

    title: str
    code: str
    loss: Tensor
    leaves: dict[str, Tensor] = field(default_factory=dict)


def _leaf(rng: np.random.Generator, name: str, shape: tuple, requires_grad: bool = True
          ) -> Tensor:
    return Tensor(rng.uniform(-1.0, 1.0, size=shape), requires_grad=requires_grad, label=name)


def diamond(mirrored: bool = False) -> Graph:
    """``a`` is used by ``sin`` and by the product: a diamond. Mirrored, the product lists
    its inputs the other way round, so a walk reaches ``a`` first along the other edge."""
    rng = np.random.default_rng(41 + mirrored)
    x = _leaf(rng, "x", (3, 2))
    v = _leaf(rng, "v", (3, 2), requires_grad=False)
    a = x.exp()
    b = a.sin()
    d = b * a if mirrored else a * b
    loss = (d * v).sum()
    code = ("a = x.exp(); b = a.sin(); d = " + ("b * a" if mirrored else "a * b")
            + "; loss = (d * v).sum()")
    return Graph("a diamond" + (", mirrored" if mirrored else ""), code, loss,
                 {"x": x, "v": v})


def used_three_times() -> Graph:
    """``x`` goes into three operations (a matrix product and a product with itself)."""
    rng = np.random.default_rng(43)
    x, w = _leaf(rng, "x", (2, 3)), _leaf(rng, "w", (3, 4))
    c1, c2 = _leaf(rng, "c1", (2, 4), False), _leaf(rng, "c2", (2, 3), False)
    loss = ((x @ w) * c1).sum() + (x * x * c2).sum()
    return Graph("x used three times", "loss = ((x @ w) * c1).sum() + (x * x * c2).sum()",
                 loss, {"x": x, "w": w, "c1": c1, "c2": c2})


def small_network() -> Graph:
    """A layer with a bias (broadcast), ReLU, a hidden tensor used twice, a max over rows
    (a node with two outputs, one of them indices), a constant 0.1 and a mean."""
    rng = np.random.default_rng(44)
    data = _leaf(rng, "data", (5, 3), requires_grad=False)
    w1, b1, w2 = _leaf(rng, "w1", (3, 4)), _leaf(rng, "b1", (4,)), _leaf(rng, "w2", (4, 2))
    target = _leaf(rng, "target", (5,), requires_grad=False)
    h = (data @ w1 + b1).relu()
    values, _ = (h @ w2).max(dim=1)
    loss = ((values - target) ** 2).mean() + 0.1 * (h * h).mean() + 2.0
    code = ("h = (data @ w1 + b1).relu(); values, _ = (h @ w2).max(dim=1); loss = "
            "((values - target) ** 2).mean() + 0.1 * (h * h).mean() + 2.0")
    return Graph("a small network", code, loss,
                 {"data": data, "w1": w1, "b1": b1, "w2": w2, "target": target})


def two_outputs() -> Graph:
    """A node with two outputs, both used (its backward needs both gradients)."""
    rng = np.random.default_rng(45)
    x, w = _leaf(rng, "x", (2, 4)), _leaf(rng, "w", (2, 4))
    first, second = Halves.apply(x * w)
    loss = (first.exp() * second).sum() + (second * 3.0).sum()
    code = ("first, second = Halves.apply(x * w); "
            "loss = (first.exp() * second).sum() + (second * 3.0).sum()")
    return Graph("a node with two outputs", code, loss, {"x": x, "w": w})


def residual_chain() -> Graph:
    """A skip connection: ``h`` feeds a chain of three operations and the sum at its end,
    so the walk meets ``h``'s node at the bottom of a long path and a short one."""
    rng = np.random.default_rng(47)
    x, w = _leaf(rng, "x", (4, 3)), _leaf(rng, "w", (3, 3))
    c = _leaf(rng, "c", (4, 3), requires_grad=False)
    h = (x @ w).tanh()
    out = (h * 2.0).sigmoid().exp() + h
    loss = (out * c).sum()
    code = "h = (x @ w).tanh(); out = (h * 2.0).sigmoid().exp() + h; loss = (out * c).sum()"
    return Graph("a skip connection", code, loss, {"x": x, "w": w, "c": c})


def shared_weight() -> Graph:
    """One weight used by two layers in a row (as tied weights are), a leaf of another
    dtype (float32) and a bias broadcast over the batch."""
    rng = np.random.default_rng(48)
    x = _leaf(rng, "x", (5, 2), requires_grad=False)
    w = _leaf(rng, "w", (2, 2))
    b = Tensor(rng.uniform(-1.0, 1.0, size=(2,)).astype(np.float32), requires_grad=True,
               label="b")
    h = (x @ w + b).relu()
    loss = ((h @ w).exp() * 0.5).mean() - h.sum() * 0.25
    code = "h = (x @ w + b).relu(); loss = ((h @ w).exp() * 0.5).mean() - h.sum() * 0.25"
    return Graph("a weight shared by two layers", code, loss, {"x": x, "w": w, "b": b})


ORDER_GRAPHS = (diamond, lambda: diamond(mirrored=True), used_three_times, small_network,
                two_outputs)
LOOP_GRAPHS = ORDER_GRAPHS
MORE_GRAPHS = (residual_chain, shared_weight)
"""Other graphs, for the checks that grading runs (hidden in the students' copy)."""


def nodes_of(loss: Tensor) -> list[Node]:
    """Every node a backward from ``loss`` runs, oldest first (the checker's own walk)."""
    return graph.walk([loss.grad_fn], graph.grad_parents)


def _name(node: Any) -> str:
    return node.describe() if isinstance(node, Node) else repr(node)


# --- minigrad's own walks and backward are off while the student's code runs -----------------

ENGINE_USED = (
    "your code called minigrad's own {what}. Write it yourself: that is the exercise "
    "(the engine's version is what the check compares with).")


@contextlib.contextmanager
def engine_off() -> Iterator[None]:
    def refuse(what: str) -> Callable:
        def refused(*args: Any, **kwargs: Any) -> Any:
            raise CheckFailed(ENGINE_USED.format(what=what))
        return refused

    saved = (autograd._backward, autograd.backward_order, graph.backward_order, graph.walk)
    autograd._backward = refuse("backward (tensor.backward(), mg.autograd.backward or "
                                "mg.backward_steps; on a leaf, its gradient goes into its "
                                ".grad with accumulate_grad instead)")
    autograd.backward_order = graph.backward_order = refuse("backward_order")
    graph.walk = refuse("graph walk (minigrad.graph.walk)")
    try:
        yield
    finally:
        autograd._backward, autograd.backward_order, graph.backward_order, graph.walk = saved


def _run(function: Callable, doing: str, *args: Any) -> Any:
    """Call the student's function with the engine off; their error, explained."""
    try:
        with engine_off():
            return function(*args)
    except CheckFailed:
        raise
    except Exception as error:  # noqa: BLE001 (the student's code may raise anything)
        raise _explained(error, doing) from None


def _explained(error: Exception, doing: str) -> CheckFailed:
    failure = _student_error(error, doing)
    text = str(error)
    node_fields = ("next_functions", "function", "output_meta", "args", "needs_input_grad",
                   "name", "id", "input_shape_dtype")
    if isinstance(error, AttributeError) and "'NoneType'" in text \
            and any(f"'{name}'" in text for name in node_fields):
        failure = CheckFailed(
            f"{failure}\n  It looks like your code treated a leaf (or a constant) as a "
            "node: next_functions gives (None, 0) for them, and there is no node to run or "
            "walk into. Skip None parents; a leaf's gradient goes into its .grad "
            "(node.args[position]).")
    elif isinstance(error, AttributeError) and ("'float'" in text or "'int'" in text):
        failure = CheckFailed(
            f"{failure}\n  It looks like a gradient was routed to a constant input (a "
            "number, not a Tensor). Skip the inputs whose gradient is None: constants, and "
            "tensors that do not require grad.")
    elif "None" in text:
        failure = CheckFailed(
            f"{failure}\n  It looks like a gradient that is None was used: run_backward "
            "gives None for inputs that need no gradient (constants, tensors that do not "
            "require grad). Skip those.")
    elif isinstance(error, RecursionError):
        failure = CheckFailed(f"{failure}\n  A walk that never ends: keep a set of the "
                              "nodes already visited, and visit each node once.")
    return failure


# --- exercise 1: a topological order -------------------------------------------------------------


def order_mistake(order: Any, loss: Tensor) -> str | None:
    """What is wrong with ``order`` as the order backward runs the nodes of ``loss``'s
    graph (None: nothing)."""
    if not (hasattr(order, "__len__") and hasattr(order, "__getitem__")):
        if hasattr(order, "__next__"):
            return (f"it returned a {type(order).__name__}, an iterator that can be read "
                    "only once (a second loop over it finds nothing, and it prints as "
                    "<... object at 0x...>). Return a list: order[::-1] or "
                    "list(reversed(order)).")
        return (f"it returned {type(order).__name__}, not a list of nodes. Return a list "
                "(or any sequence) of the graph's nodes, the root first.")
    order = list(order)
    nodes = nodes_of(loss)
    known = set(nodes)
    root = loss.grad_fn
    if any(n is None for n in order):
        return ("the order contains None: next_functions gives (None, 0) for a leaf or a "
                "constant, which has no node. Skip those entries.")
    strangers = [n for n in order if n not in known]
    if strangers:
        return (f"the order contains {strangers[0]!r}, which is not a node of this graph "
                f"(a {type(strangers[0]).__name__}). List the nodes (grad_fn, and the "
                "parents in next_functions), not tensors or pairs.")
    seen: set = set()
    for n in order:
        if n in seen:
            return (f"{_name(n)} is listed twice. A node reached along two paths must be "
                    "visited once: keep a set of visited nodes.")
        seen.add(n)
    missing = [n for n in nodes if n not in seen]
    if missing:
        return (f"{len(missing)} node(s) are missing, e.g. {_name(missing[0])}. Follow "
                "every entry of next_functions, not only the first.")
    position = {n: i for i, n in enumerate(order)}
    if order[-1] is root and len(order) > 1:
        return ("the root comes last: the order is reversed. A depth-first search that "
                "appends a node after its parents gives the order oldest first; reverse it "
                "so the root (loss.grad_fn) comes first.")
    if order[0] is not root:
        return (f"the order starts with {_name(order[0])}, not the root {_name(root)}: "
                "backward starts at loss.grad_fn.")
    for consumer in nodes:
        for parent, _ in consumer.next_functions:
            if parent is not None and position[parent] < position[consumer]:
                return (f"{_name(parent)} comes before {_name(consumer)}, which consumes "
                        f"its output: when {_name(parent)} runs, the gradient from "
                        f"{_name(consumer)} has not arrived yet. A node must wait for ALL "
                        "its consumers. Appending a node as soon as you reach it "
                        "(pre-order, or breadth-first) does not ensure that: append it "
                        "after all its parents (post-order), then reverse the list.")
    return None


@reference_for(1, "topological-order")
def reference_topological_order(root: Node) -> list[Node]:
    """The reference answer of exercise 1: a depth-first post-order, reversed (an explicit
    stack, not minigrad's own walk, which the loop's check switches off)."""
    order, visited = [], {root}
    stack = [(root, iter(root.next_functions))]
    while stack:
        node, parents = stack[-1]
        for parent, _ in parents:
            if parent is not None and parent not in visited:
                visited.add(parent)
                stack.append((parent, iter(parent.next_functions)))
                break
        else:
            stack.pop()
            order.append(node)
    return order[::-1]


@reference_for(2, "accumulate-grad")
def reference_accumulate_grad(leaf: Tensor, grad: np.ndarray) -> None:
    """The reference answer of exercise 2: the first gradient becomes ``.grad`` (a copy),
    the next ones are added to it."""
    if leaf.grad is None:
        leaf.grad = Tensor(np.array(grad, copy=True))
    else:
        leaf.grad = Tensor(leaf.grad.numpy() + grad)


@checker
def check_topological_order(topological_order: Callable,
                            graphs: tuple[Callable, ...] = ORDER_GRAPHS) -> None:
    """``topological_order(root)`` on each graph: the nodes backward runs, each once, the
    root first, every node before the nodes that made its inputs."""
    for build in graphs:
        g = build()
        order = _run(topological_order, f"topological_order(loss.grad_fn) on {g.title}",
                     g.loss.grad_fn)
        mistake = order_mistake(order, g.loss)
        if mistake:
            raise CheckFailed(f"topological_order(loss.grad_fn) on {g.title} ({g.code}):"
                              f"\n  {mistake}")
    print(f"topological_order: right ({len(graphs)} graphs checked).")


# --- exercise 2: accumulating into a leaf's .grad --------------------------------------------


def _grad_of(leaf: Tensor, doing: str) -> np.ndarray:
    grad = leaf.grad
    if grad is None:
        raise CheckFailed(f"after {doing}, {leaf.label}.grad is still None: the first "
                          "gradient becomes the leaf's .grad, as a Tensor (mg.tensor(grad)).")
    if not isinstance(grad, Tensor):
        raise CheckFailed(f"after {doing}, .grad is {describe(grad)}, not a Tensor: a "
                          ".grad is a Tensor (mg.tensor(grad) makes one, copying the "
                          "array).")
    return grad.numpy()


@checker
def check_accumulate_grad(accumulate_grad: Callable, shape: tuple = (2, 3), seed: int = 46,
                          dtype: Any = np.float64) -> None:
    """A leaf given gradients g1, g2, g3 holds g1 + g2 + g3, as a Tensor whose array is
    its own: two leaves given the same array (as Add's backward returns) stay apart.
    ``shape``, ``seed`` and ``dtype``: the leaves' and gradients'."""
    rng = np.random.default_rng(seed)
    g1, g2, g3 = (rng.uniform(-1.0, 1.0, size=shape).astype(dtype) for _ in range(3))
    kept = {id(g): g.copy() for g in (g1, g2, g3)}  # g1 itself may be changed in place
    x = Tensor(np.zeros(shape, dtype), requires_grad=True, label="x")
    y = Tensor(np.zeros(shape, dtype), requires_grad=True, label="y")
    steps = [(x, g1, "accumulate_grad(x, g1) (x.grad was None)"),
             (y, g1, "accumulate_grad(y, g1) (the same array g1, for a second leaf)"),
             (x, g2, "accumulate_grad(x, g2)"),
             (x, g3, "accumulate_grad(x, g3)")]
    expected = {id(x): np.zeros(shape, dtype), id(y): np.zeros(shape, dtype)}
    calls = {id(x): 0, id(y): 0}
    for leaf, grad, doing in steps:
        _run(accumulate_grad, doing, leaf, grad)
        expected[id(leaf)] = expected[id(leaf)] + kept[id(grad)]
        calls[id(leaf)] += 1
        got = _grad_of(leaf, doing)
        if got.shape != grad.shape:
            raise CheckFailed(f"after {doing}, {leaf.label}.grad has shape {got.shape}, "
                              f"expected {grad.shape}.")
        if got.dtype != leaf.dtype:
            raise CheckFailed(
                f"after {doing}, {leaf.label}.grad has dtype {got.dtype}, but "
                f"{leaf.label} is {leaf.dtype} (and so is the gradient given): a .grad has "
                "its leaf's dtype, or digits are lost without any error. mg.tensor(grad) "
                "keeps the array's dtype; a Python list (grad.tolist()) becomes float32.")
        if np.allclose(got, expected[id(leaf)]):
            continue
        message = (f"after {doing}, {leaf.label}.grad is wrong: {preview(got)}, expected "
                   f"{preview(expected[id(leaf)])}.")
        if np.allclose(got, expected[id(leaf)] + kept[id(grad)]):
            message += ("\n  It looks like the new gradient was added twice: when .grad was "
                        "None you set it to the gradient, then added the gradient again "
                        "(an if without an else?). Do one or the other.")
        if calls[id(leaf)] > 1 and np.allclose(got, kept[id(grad)]):
            message += ("\n  It looks like the new gradient REPLACED the one already in "
                        ".grad. A leaf used several times (or backpropagated into twice) "
                        "gets the SUM of its gradients: add to .grad when it is not None.")
        raise CheckFailed(message)
    if not np.allclose(_grad_of(y, "the last call"), kept[id(g1)]):
        raise CheckFailed(
            "accumulating into x.grad changed y.grad too: x and y were given the same array "
            "g1 (as Add's backward gives both its inputs the same array), and your .grad "
            "kept that array itself, then added into it in place. Keep a copy the first "
            "time (mg.tensor(grad) copies), or add out of place "
            "(leaf.grad = leaf.grad + grad).")
    if np.shares_memory(y.grad.numpy(), g1):
        raise CheckFailed(
            "y.grad is the very array its gradient came in (g1): a later in-place edit of "
            "either changes the other. Keep a copy the first time (mg.tensor(grad) copies).")
    print("accumulate_grad: right (3 gradients into one leaf, one array into two leaves).")


# --- exercise 3: the whole loop -----------------------------------------------------------------


def run_node(node: Node, grad_outputs: list) -> tuple:
    """One node's backward, as the notebook's ``run_backward``: one gradient per input,
    summed to the input's shape and cast to its dtype (None where none is needed)."""
    grad_outputs = [np.zeros(shape, dtype) if g is None else g
                    for g, (shape, dtype) in zip(grad_outputs, node.output_meta)]
    grads = node.function.backward(node, *grad_outputs)
    grads = grads if isinstance(grads, tuple) else (grads,)
    fitted = []
    for position, grad in enumerate(grads):
        if grad is None or not node.needs_input_grad[position]:
            fitted.append(None)
            continue
        grad = np.asarray(grad)
        shape, dtype = node.input_shape_dtype(position)
        grad = grad if grad.shape == shape else sum_to_shape(grad, shape)
        fitted.append(grad.astype(dtype, copy=False))
    return tuple(fitted)


def reference_steps(loss: Tensor, seed: str = "ones", sum_paths: bool = True,
                    sum_uses: bool = True) -> list:
    """The loop of the exercise, right (the defaults) or with one classic mistake: the
    seed (``"ones"``, ``"value"``: the loss itself, ``"zeros"``), gradients of two paths
    into a node not summed, a leaf's gradients not summed (the last one kept)."""
    root = loss.grad_fn
    seeds = {"ones": np.ones, "zeros": np.zeros}
    first = loss.numpy().copy() if seed == "value" else seeds[seed](loss.shape, loss.dtype)
    pending = {(root, 0): first}
    steps = []
    for node in sorted(nodes_of(loss), key=lambda n: n.id, reverse=True):
        grad_outputs = [pending.pop((node, i), None) for i in range(len(node.output_meta))]
        if all(g is None for g in grad_outputs):
            continue
        grad_inputs = run_node(node, grad_outputs)
        for (parent, index), arg, grad in zip(node.next_functions, node.args, grad_inputs):
            if grad is None:
                continue
            if parent is None:
                arg.grad = Tensor(grad.copy() if arg.grad is None or not sum_uses
                                  else arg.grad.numpy() + grad)
            elif (parent, index) in pending and sum_paths:
                pending[(parent, index)] = pending[(parent, index)] + grad
            else:
                pending[(parent, index)] = grad
        steps.append((node, grad_outputs))
    return steps


LOOP_MISTAKES = {
    "the gradients of two paths into one node were not summed: where a tensor feeds two "
    "operations, the gradient for the node that made it is the SUM of what both send "
    "(pending[key] = pending[key] + grad when key is already there; yours kept only one).":
        {"sum_paths": False},
    "a leaf used several times kept only its last gradient: accumulate_grad must add "
    "into .grad (or your loop set .grad itself instead of calling accumulate_grad).":
        {"sum_uses": False},
    "every gradient is multiplied by the loss's value: the root's gradient was seeded with "
    "the loss itself. Seed it with ones (dloss/dloss = 1): "
    "np.ones(loss.shape, dtype=loss.dtype).": {"seed": "value"},
    "every gradient is zero: the root's gradient was seeded with zeros. Seed it with ones "
    "(dloss/dloss = 1).": {"seed": "zeros"},
}


def _leaf_grads(g: Graph) -> dict[str, np.ndarray | None]:
    return {name: None if t.grad is None else np.asarray(t.grad.numpy()
                                                         if isinstance(t.grad, Tensor)
                                                         else t.grad)
            for name, t in g.leaves.items()}


def _same(got: dict, expected: dict) -> bool:
    return all((got[k] is None) == (expected[k] is None)
               and (expected[k] is None or (got[k].shape == expected[k].shape
                                            and np.allclose(got[k], expected[k])))
               for k in expected)


@checker
def check_backward_loop(my_backward_steps: Callable,
                        graphs: tuple[Callable, ...] = LOOP_GRAPHS) -> None:
    """``my_backward_steps(loss)`` on each graph: the nodes it runs (each once, in a
    topological order), the gradients that arrive at each (as ``mg.backward_steps``
    gives them) and every leaf's ``.grad`` (as ``loss.backward()`` gives it)."""
    for build in graphs:
        mine = build()
        doing = f"my_backward_steps(loss) on {mine.title} ({mine.code})"
        steps, handed_out = _run(_collect, doing, my_backward_steps, mine.loss)
        engine = build()
        with_engine = {n.id: step for step in autograd.backward_steps(engine.loss)
                       for n in [step.node]}
        engine_nodes = nodes_of(engine.loss)
        expected = _leaf_grads(engine)
        got = _leaf_grads(mine)
        _check_steps(steps, handed_out, mine, engine_nodes, with_engine, doing)
        if _same(got, expected):
            continue
        for name in expected:
            if expected[name] is None and got[name] is not None:
                raise CheckFailed(f"{doing}:\n  {name} does not require grad, but your "
                                  f"loop gave it a .grad. Skip the inputs whose gradient is "
                                  "None.")
        if all(v is None for v in got.values()):
            raise CheckFailed(
                f"{doing}:\n  your loop ran {len(steps)} node(s), but no gradient reached "
                "any leaf: every .grad is still None. A leaf's gradient (parent None in "
                "next_functions) goes into its .grad: accumulate_grad(node.args[position], "
                "grad).")
        for mistake, options in LOOP_MISTAKES.items():
            wrong = build()
            reference_steps(wrong.loss, **options)
            if _same(got, _leaf_grads(wrong)):
                raise CheckFailed(f"{doing}:\n  It looks like {mistake}")
        name = next(k for k in expected if not _same({k: got[k]}, {k: expected[k]}))
        said = "None" if got[name] is None else preview(got[name])
        raise CheckFailed(f"{doing}:\n  {name}.grad is wrong: {said}, expected "
                          f"{preview(expected[name])}.")
    print(f"my_backward_steps: right ({len(graphs)} graphs: same steps as "
          "mg.backward_steps, same .grad as loss.backward()).")


def _copied(value: Any) -> Any:
    """A copy of a step's gradients as they are now (None and odd values kept)."""
    if isinstance(value, (tuple, list)):
        return [np.array(g, copy=True) if isinstance(g, np.ndarray) else g for g in value]
    return value


def _collect(my_backward_steps: Callable, loss: Tensor) -> tuple[list, list]:
    """The steps, and a copy of each step's gradients taken when it was handed out (an
    array changed in place later shows as a difference between the two)."""
    steps, handed_out = [], []
    for step in my_backward_steps(loss):
        steps.append(step)
        handed_out.append(tuple(_copied(part) for part in step[1:])
                          if isinstance(step, tuple) else None)
    return steps, handed_out


def _contributions(engine_steps: dict) -> dict:
    """(node id, output index) -> the gradients the engine's consumers sent to it."""
    sent: dict = {}
    for step in engine_steps.values():
        for (parent, index), grad in zip(step.node.next_functions, step.grad_inputs):
            if parent is not None and grad is not None:
                sent.setdefault((parent.id, index), []).append(grad)
    return sent


def _same_array(got: Any, expected: np.ndarray) -> bool:
    got = np.asarray(got)
    return got.shape == expected.shape and bool(np.allclose(got, expected))


KEY_HINT = ("Each input's gradient goes to pending[(parent, index)], parent and index from "
            "the same entry of next_functions: index says which output of parent the input "
            "is (0 for a node with one output), not the input's position in node.args.")


def _check_steps(steps: list, handed_out: list, mine: Graph, engine_nodes: list,
                 with_engine: dict, doing: str) -> None:
    """Each step is (node, grad_outputs, grad_inputs); the nodes come in a topological
    order; every node the engine runs runs; the gradients that arrived at each, and those
    it sent, are the engine's."""
    nodes = []
    for step in steps:
        if not (isinstance(step, tuple) and len(step) == 3 and isinstance(step[0], Node)):
            raise CheckFailed(f"{doing}:\n  each step must be (node, grad_outputs, "
                              f"grad_inputs); one was {step!r:.80}. Keep the given yield "
                              "line.")
        nodes.append(step[0])
    if not nodes:
        raise CheckFailed(
            f"{doing}:\n  your loop ran no node. Seed the root's gradient, "
            "pending[(loss.grad_fn, 0)] = np.ones(loss.shape, dtype=loss.dtype), before the "
            "loop: a node with no pending gradient is skipped.")
    mine_nodes = nodes_of(mine.loss)
    ran = set(nodes)
    if len(ran) == len(nodes) and ran == set(mine_nodes):
        mistake = order_mistake(nodes, mine.loss)
        if mistake:
            raise CheckFailed(f"{doing}: the nodes did not run in a topological order "
                              f"(check your topological_order):\n  {mistake}")
    elif len(ran) < len(nodes):
        again = next(n for i, n in enumerate(nodes) if n in nodes[:i])
        raise CheckFailed(f"{doing}:\n  {_name(again)} ran twice: pop its gradients from "
                          "pending when it runs, and run each node once.")
    missing = [n for n in mine_nodes if n not in ran]
    missing = [n for n in missing if engine_nodes[mine_nodes.index(n)].id in with_engine]
    if missing:
        consumers = ", ".join(_name(n) for n in mine_nodes
                              if any(parent is missing[0] for parent, _ in n.next_functions))
        raise CheckFailed(f"{doing}:\n  a node that should have run never ran: "
                          f"{_name(missing[0])} (its output is used by {consumers}). No "
                          "gradient for it was in pending when its turn came, so it was "
                          "skipped: the gradients sent to it were stored under another key, "
                          f"or not stored. {KEY_HINT}")
    root = mine.loss.grad_fn
    sent = _contributions(with_engine)
    for (node, grad_outputs, grad_inputs), first_seen in zip(steps, handed_out):
        twin = engine_nodes[mine_nodes.index(node)]
        if twin.id not in with_engine:
            continue
        right = with_engine[twin.id].grad_outputs
        where = f"{node.name} (the root, loss.grad_fn)" if node is root else node.name
        for index, expected in enumerate(right):
            if expected is None:
                continue
            got = grad_outputs[index] if index < len(grad_outputs) else None
            if got is None:
                raise CheckFailed(
                    f"{doing}:\n  no gradient arrived at {where} for its output {index}, "
                    f"expected {preview(expected)}. Take each output's gradient from "
                    "pending[(node, index)], one per output (index 0, 1, ...), and send "
                    "each input's gradient to pending[(parent, index)], the pair "
                    "next_functions gives.")
            got = np.asarray(got)
            if not _same_array(got, expected):
                raise CheckFailed(
                    f"{doing}:\n  the gradient that arrived at {where} for its output "
                    f"{index} is wrong: {preview(got)}, expected {preview(expected)}."
                    + _arrival_hint(node, root, got, mine.loss, right,
                                    sent.get((twin.id, index), [])))
        _check_sent(node, grad_inputs, first_seen, with_engine[twin.id].grad_inputs, doing)


def _check_sent(node: Node, grad_inputs: Any, first_seen: tuple | None, right: tuple,
                doing: str) -> None:
    """The gradients a step hands out as sent are the engine's, and stayed as they were
    when the step was handed out."""
    grad_inputs = tuple(grad_inputs) if isinstance(grad_inputs, (tuple, list)) else ()
    then = first_seen[1] if first_seen is not None else None
    for position, expected in enumerate(right):
        got = grad_inputs[position] if position < len(grad_inputs) else None
        if expected is None or got is None:
            if (expected is None) != (got is None):
                raise CheckFailed(
                    f"{doing}:\n  the step of {_name(node)} says it sent {describe(got)} to "
                    f"its input {position}, expected {describe(expected)}. Hand out "
                    "what run_backward returned: keep the given yield line.")
            continue
        if _same_array(got, expected):
            continue
        was = then[position] if isinstance(then, list) and position < len(then) else None
        if was is not None and _same_array(was, expected):
            raise CheckFailed(
                f"{doing}:\n  the gradient {_name(node)} sent to its input {position} was "
                f"right when its step was handed out, {preview(was)}, but is "
                f"{preview(got)} at the end: an array you stored in pending was changed "
                "in place later (pending[key] += grad adds into the very array a step "
                "handed out, and another leaf or node may hold it too). Add out of place: "
                "pending[key] = pending[key] + grad.")
        raise CheckFailed(
            f"{doing}:\n  the gradient {_name(node)} sent to its input {position} is "
            f"{preview(got)}, expected {preview(expected)}. Hand out what run_backward "
            "returned, unchanged: keep the given yield line.")


def _arrival_hint(node: Node, root: Node, got: np.ndarray, loss: Tensor, right: tuple,
                  sent: list) -> str:
    if node is root:
        if np.allclose(got, loss.numpy()):
            return ("\n  The root's gradient was seeded with the loss's value. Seed it "
                    "with ones (dloss/dloss = 1): np.ones(loss.shape, dtype=loss.dtype).")
        return ("\n  The root's gradient is the seed: ones (dloss/dloss = 1), "
                "np.ones(loss.shape, dtype=loss.dtype).")
    outputs = [g for g in right if g is not None]
    if len(outputs) > 1 and all(g.shape == got.shape for g in outputs) \
            and np.allclose(got, sum(outputs)):
        return (f"\n  It is the sum of the gradients for all {len(outputs)} outputs of "
                f"{node.name}: they were all stored under one key. {KEY_HINT}")
    if len(sent) > 1 and any(_same_array(got, g) for g in sent):
        others = "the other was" if len(sent) == 2 else "the others were"
        return (f"\n  Its output feeds {len(sent)} operations, and what arrived is what "
                f"only one of them sent: {others} REPLACED. The gradient for it is the "
                "SUM of what each sends: add into pending[(parent, index)] when the key is "
                "already there, never replace.")
    if len(sent) > 1:
        return (f"\n  Its output feeds {len(sent)} operations: the gradient for it is the "
                f"SUM of what each sends. {KEY_HINT}")
    return f"\n  {KEY_HINT}"


__all__ = ["MORE_GRAPHS", "Halves", "check_accumulate_grad", "check_backward_loop",
           "check_topological_order", "diamond", "order_mistake",
           "reference_accumulate_grad", "reference_steps", "reference_topological_order",
           "residual_chain", "run_node", "shared_weight", "small_network", "two_outputs",
           "used_three_times"]
