"""The graph model every view reads: a trace of the graph behind a tensor.

``Trace.of(tensor)`` walks the engine's graph once (with the engine's own walk) and
keeps, for drawing and inspecting:

- one ``Vertex`` per recorded op (its Function, ``oper``, group, label, its number in
  this graph, output shapes and dtypes, whether it was freed or is still pending in lazy
  mode) and one per leaf tensor (parameters, inputs, constants);
- one ``Edge`` per use of a tensor: which output of which vertex feeds which input of
  which op, with the tensor's shape and dtype;
- gradients, once known: a leaf's ``.grad``, and, for a view made before ``backward()``,
  the gradient that travelled along every edge (recorded by hooks on the nodes).

The ops of a graph are numbered 1, 2, ... oldest first (``Mul #3``, key ``n3``), and
leaves by their first use (``t0``, ``t1``, ...): never by ``id()`` nor by the engine's
counter (``node.id``, which counts every op of the session, so ``<Mul #812>`` in a repr
depends on the cells run before). A graph is drawn with the same labels whatever ran
before it.
So are the groups of a backward recorded with ``create_graph=True``: the engine puts the
ops that one op's backward made in group ``backward of Mul #812`` (its session number);
a drawing calls it ``backward of Mul #3`` after the op drawn as ``Mul #3``
(``drawing_groups``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import minigrad as mg
from minigrad.autograd import grad_parents, lazy_parents, pending_node, walk
from minigrad.function import Node
from minigrad.tensor import Tensor

# How gradients are judged (also by GradientFlow): below VANISHING a gradient carries
# almost no signal; above EXPLODING one step of SGD would throw the weights far away.
VANISHING = 1e-7
EXPLODING = 1e3


@dataclass(frozen=True)
class GradStats:
    """What a view shows of one gradient array: its size, and whether it is healthy."""

    shape: tuple
    norm: float  # the L2 norm (NaN if the array holds NaN/Inf)
    max_abs: float
    nan: bool
    inf: bool

    @property
    def status(self) -> str:
        """``'nonfinite'``, ``'zero'``, ``'vanishing'``, ``'exploding'`` or ``'ok'``."""
        if self.nan or self.inf:
            return "nonfinite"
        if self.max_abs == 0:
            return "zero"
        if self.norm < VANISHING:
            return "vanishing"
        if self.norm > EXPLODING:
            return "exploding"
        return "ok"

    def describe(self) -> str:
        """``'norm 0.1234'``, ``'zero'``, ``'NaN!'``...: a few words for a label."""
        if self.nan:
            return "NaN!"
        if self.inf:
            return "Inf!"
        if self.max_abs == 0:
            return "zero"
        return f"norm {format_number(self.norm)}"


def grad_stats(array: Any) -> GradStats:
    """``GradStats`` of a gradient (a NumPy array, a Tensor or a number)."""
    array = np.asarray(array.numpy() if isinstance(array, Tensor) else array)
    if array.dtype.kind not in "fc":
        array = array.astype(np.float64)
    finite = np.isfinite(array)
    all_finite = bool(finite.all())
    nan = not all_finite and bool(np.isnan(array).any())
    inf = not all_finite and bool(np.isinf(array).any())
    wide = array.astype(np.float64)  # float32 squares of big gradients would overflow
    norm = float(np.sqrt(np.sum(wide * wide))) if all_finite else math.nan
    max_abs = float(np.max(np.abs(wide))) if array.size and all_finite else (
        math.inf if inf else 0.0 if array.size == 0 else math.nan)
    return GradStats(tuple(array.shape), norm, max_abs, nan, inf)


def format_number(value: float) -> str:
    """A short, stable rendering of a float: 4 significant digits."""
    if value != value:
        return "nan"
    if value in (math.inf, -math.inf):
        return "inf" if value > 0 else "-inf"
    return f"{value:.4g}"


def format_shape(shape: Iterable[int]) -> str:
    """``(4, 3)``; a 0-d shape is ``()``; a 1-d one ``(5,)``."""
    return str(tuple(int(s) for s in shape))


def format_meta(shape: Iterable[int], dtype: Any) -> str:
    """``(4, 3) float32``: how every view names a tensor's shape and dtype."""
    return f"{format_shape(shape)} {np.dtype(dtype).name}"


@dataclass
class Vertex:
    """One box in the drawing: a recorded op, or a leaf tensor."""

    key: str  # "n3" for the graph's op #3, "t0", "t1", ... for leaves in order of first use
    kind: str  # "op"; leaves: "parameter" (nn.Parameter or named), "leaf" (requires
    # grad), "constant" (no grad: data, targets)
    title: str  # "Mul #3" (the graph's third op), "0.weight", "x", "input 1"
    group: str | None
    outputs: list[tuple[tuple, np.dtype]]  # each output's (shape, dtype)
    node: Node | None = None  # for ops
    tensor: Tensor | None = None  # for leaves
    is_root: bool = False  # made the tensor the trace starts from

    # what changes after the trace was made (a backward, realize(), a new label) is read
    # from the node or tensor each time

    @property
    def label(self) -> str | None:
        return self.node.label if self.node is not None else self.tensor.label

    @property
    def pending(self) -> bool:
        """Lazy mode: not computed yet."""
        return self.node is not None and self.node.pending

    @property
    def freed(self) -> bool:
        """A backward without ``retain_graph=True`` freed it."""
        return self.node is not None and self.node.freed

    @property
    def shape(self) -> tuple:
        return self.outputs[0][0]

    @property
    def dtype(self) -> np.dtype:
        return self.outputs[0][1]

    @property
    def oper(self) -> str:
        return self.node.name if self.node is not None else self.kind

    @property
    def grad(self) -> GradStats | None:
        """A leaf's ``.grad`` (accumulated over every backward so far)."""
        if self.tensor is None or self.tensor.grad is None:
            return None
        return grad_stats(self.tensor.grad)

    def shape_text(self) -> str:
        return " | ".join(format_meta(shape, dtype) for shape, dtype in self.outputs)


@dataclass
class Edge:
    """A tensor going from ``source`` (output ``source_output``) into input ``position``
    of the op ``target``. ``grad`` is the gradient that travelled back along it, when a
    backward was recorded."""

    source: str
    source_output: int
    target: str
    position: int
    shape: tuple
    dtype: np.dtype
    grad: GradStats | None = None


@dataclass
class Trace:
    """The graph behind one tensor. Build it with ``Trace.of(tensor)``."""

    root: Tensor
    vertices: dict[str, Vertex]  # in a stable order: ops oldest first, leaves by first use
    edges: list[Edge]
    root_key: str
    numbers: dict = field(default_factory=dict, repr=False)  # op Node -> 1, 2, ...
    group_names: dict = field(default_factory=dict, repr=False)  # drawing_groups(numbers)
    backwards: int = 0  # how many recorded backward passes started at the root
    _edge_index: dict = field(default_factory=dict, repr=False)

    # --- building ---------------------------------------------------------------------

    @classmethod
    def of(cls, tensor: Tensor, names: Any = None) -> Trace:
        """Trace the graph that made ``tensor``. ``names``: a Module, or a dict
        ``{name: tensor}``, naming leaves (a model's parameters: ``0.weight``)."""
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Trace.of: expected a minigrad Tensor, got {type(tensor).__name__}")
        named = _leaf_names(names)
        root_node = tensor.grad_fn if tensor.grad_fn is not None else pending_node(tensor)
        if root_node is None:  # a leaf: one vertex, no edges
            vertex = _leaf_vertex("t0", tensor, named, 0)
            vertex.is_root = True
            return cls(tensor, {"t0": vertex}, [], "t0")
        parents = lazy_parents if root_node.pending else _all_parents
        nodes = walk([root_node], parents)  # oldest first: the engine's own walk
        numbers = number_ops(nodes)
        group_names = drawing_groups(numbers)
        vertices: dict[str, Vertex] = {}
        edges: list[Edge] = []
        leaves: dict[int, str] = {}  # id(tensor) -> key; lookup only, never shown
        leaf_vertices: list[Vertex] = []
        for node in nodes:
            key = f"n{numbers[node]}"
            vertices[key] = _op_vertex(key, node, numbers[node], group_names)
        for node in nodes:
            for position, arg in enumerate(node.args):
                parent, index = node.next_functions[position]
                if parent is None and isinstance(arg, Tensor) and pending_node(arg) is not None:
                    parent = pending_node(arg)  # not recorded for backward, but still to compute
                    index = next(i for i, t in enumerate(parent.outputs) if t is arg)
                if parent is not None:
                    source = f"n{numbers[parent]}"
                    shape, dtype = parent.output_meta[index]
                elif isinstance(arg, Tensor):
                    source = leaves.get(id(arg))
                    if source is None:
                        source = leaves[id(arg)] = f"t{len(leaves)}"
                        leaf_vertices.append(_leaf_vertex(source, arg, named, len(leaves) - 1))
                    shape, dtype, index = tuple(arg.shape), arg.dtype, 0
                else:
                    continue  # a constant number or option: shown by the inspector
                edges.append(Edge(source, index, f"n{numbers[node]}", position, tuple(shape),
                                  np.dtype(dtype)))
        # a parameter used only inside one group is drawn inside that group's box
        consumers: dict[str, set] = {}
        for edge in edges:
            consumers.setdefault(edge.source, set()).add(vertices[edge.target].group)
        for vertex in leaf_vertices:
            groups = consumers.get(vertex.key, set())
            if vertex.kind == "parameter" and len(groups) == 1:
                vertex.group = next(iter(groups))
            vertices[vertex.key] = vertex
        root_key = f"n{numbers[root_node]}"
        vertices[root_key].is_root = True
        trace = cls(tensor, vertices, edges, root_key, numbers, group_names)
        trace._edge_index = {(e.target, e.position): e for e in edges}
        return trace

    # --- reading ----------------------------------------------------------------------

    def key_of(self, node: Node) -> str:
        """The key of an op of this graph: ``'n3'`` for its third op."""
        return f"n{self.numbers[node]}"

    def describe(self, node: Node) -> str:
        """``'Mul #3 (group encoder, label h)'``: how the views name an op of this graph
        (its number in this graph, not the session's ``node.id``)."""
        return describe(node, self.numbers, self.group_names)

    @property
    def ops(self) -> list[Vertex]:
        return [v for v in self.vertices.values() if v.kind == "op"]

    @property
    def leaves(self) -> list[Vertex]:
        return [v for v in self.vertices.values() if v.kind != "op"]

    @property
    def groups(self) -> list[str]:
        """Every group name that a vertex is in, with the groups that contain it
        (``encoder.0`` brings ``encoder``), sorted."""
        names = set()
        for vertex in self.vertices.values():
            if vertex.group:
                parts = vertex.group.split(".")
                names.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        return sorted(names)

    @property
    def recorded(self) -> bool:
        """Do edges carry gradients (recorded during a backward, or set by a stepper)?"""
        return any(e.grad is not None for e in self.edges)

    @property
    def freed(self) -> bool:
        """Did a backward without ``retain_graph=True`` free (part of) this graph?"""
        return any(v.freed for v in self.ops)

    @property
    def pending(self) -> bool:
        """Lazy mode: are some ops not computed yet?"""
        return any(v.pending for v in self.ops)

    def vertex(self, key_or_node: Any) -> Vertex:
        """The vertex for a key (``'n3'``), a Node, or a Tensor of this graph."""
        key = key_or_node
        if isinstance(key_or_node, Node):
            key = self.key_of(key_or_node) if key_or_node in self.numbers else None
        elif isinstance(key_or_node, Tensor):
            node = key_or_node.grad_fn or pending_node(key_or_node)
            if node is not None:
                key = self.key_of(node) if node in self.numbers else None
            else:
                key = next((v.key for v in self.leaves if v.tensor is key_or_node), None)
        if key not in self.vertices:
            raise KeyError(f"{key_or_node!r} is not in this graph")
        return self.vertices[key]

    def edges_into(self, key: str) -> list[Edge]:
        return [e for e in self.edges if e.target == key]

    def edges_out_of(self, key: str) -> list[Edge]:
        return [e for e in self.edges if e.source == key]

    def edge(self, target: str, position: int) -> Edge | None:
        return self._edge_index.get((target, position))

    def summary(self) -> str:
        ops, leaves = len(self.ops), len(self.leaves)
        text = (f"graph of {ops} op{'s' * (ops != 1)} and "
                f"{leaves} lea{'ves' if leaves != 1 else 'f'}")
        if self.pending:
            text += " (lazy: not computed yet)"
        elif self.freed:
            text += " (freed by backward)"
        return text

    # --- gradients ----------------------------------------------------------------------

    def record_gradients(self) -> GradientRecorder:
        """Start recording the gradient on every edge during the next backward passes
        (hooks on the nodes); returns the recorder, whose ``remove()`` stops it."""
        return GradientRecorder(self)


class GradientRecorder:
    """Hooks on every op of a trace that note, during backward, the gradient each op
    sent along each of its input edges."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._handles = [vertex.node.register_hook(self._hook_for(vertex.key))
                         for vertex in trace.ops if vertex.node is not None]

    def _hook_for(self, key: str):
        def hook(grad_inputs, grad_outputs):
            if key == self.trace.root_key:
                self.trace.backwards += 1
            for position, grad in enumerate(grad_inputs):
                edge = self.trace.edge(key, position)
                if edge is not None and grad is not None:
                    edge.grad = grad_stats(grad)
            return None
        return hook

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []


# --- helpers ------------------------------------------------------------------------------


def number_ops(nodes: Iterable[Node]) -> dict[Node, int]:
    """The ops of one graph numbered 1, 2, ... in the order they were made: the ``#3``
    of ``Mul #3`` in a drawing, the same whatever ran before the graph was built."""
    return {node: number for number, node in enumerate(sorted(nodes, key=lambda n: n.id), 1)}


def graph_numbers(node: Node) -> dict[Node, int]:
    """``number_ops`` over the graph behind ``node`` (what a view of one op shows when it
    is not given a whole graph)."""
    return number_ops(walk([node], _all_parents))


def _all_parents(node: Node) -> list[Node]:
    """Every op that made an input of ``node``: the gradient edges, and (in lazy mode)
    the ops an input still waits for."""
    parents = list(grad_parents(node))
    parents.extend(p for p in lazy_parents(node) if p not in parents)
    return parents


def _leaf_names(names: Any) -> dict[int, str]:
    if names is None:
        return {}
    if isinstance(names, mg.nn.Module):
        names = dict(names.named_parameters())
    return {id(t): name for name, t in dict(names).items()}


def _op_vertex(key: str, node: Node, number: int, groups: dict[str, str]) -> Vertex:
    return Vertex(key, "op", f"{node.name} #{number}", groups.get(node.group, node.group),
                  [(tuple(s), np.dtype(d)) for s, d in node.output_meta], node=node)


def describe(node: Node, numbers: dict[Node, int], groups: dict[str, str] | None = None) -> str:
    """``node.describe()`` as a drawing of the ops ``numbers`` numbers names it: numbered
    in that graph, its group named by ``groups`` (``drawing_groups(numbers)``)."""
    text = node.describe(numbers.get(node))
    groups = drawing_groups(numbers) if groups is None else groups
    if node.group and groups.get(node.group, node.group) != node.group:
        text = text.replace(f"group {node.group}", f"group {groups[node.group]}", 1)
    return text


# the engine's name for the group of one op's recorded backward (higher_order.backward_group)
BACKWARD_GROUP = re.compile(r"backward of (?P<op>.+) #(?P<id>\d+)")


def drawing_groups(numbers: dict[Node, int]) -> dict[str, str]:
    """The groups of the ops ``numbers`` numbers, as a drawing of them names them: the
    group of a recorded backward, ``backward of Mul #812`` (the session's number of the op
    whose backward it is), becomes ``backward of Mul #3`` when that op is in the drawing
    as ``Mul #3``, else ``backward of Mul`` (``backward of Mul [1]``, ``[2]``, ... oldest
    first, when the backwards of several Muls not drawn are). Other groups keep their
    names."""
    drawn = {node.id: number for node, number in numbers.items()}
    parts = {part for node in numbers if node.group for part in node.group.split(".")}
    found = [(int(m["id"]), m["op"], part) for part in parts
             if (m := BACKWARD_GROUP.fullmatch(part))]
    undrawn: dict[str, list[str]] = {}  # op name -> its groups, oldest first
    for session_id, op, part in sorted(found):
        if session_id not in drawn:
            undrawn.setdefault(op, []).append(part)
    renamed = {part: f"backward of {op} #{drawn[session_id]}"
               for session_id, op, part in found if session_id in drawn}
    for op, names in undrawn.items():
        for index, part in enumerate(names, 1):
            renamed[part] = f"backward of {op}" + (f" [{index}]" if len(names) > 1 else "")
    return {node.group: ".".join(renamed.get(p, p) for p in node.group.split("."))
            for node in numbers if node.group}


def _leaf_vertex(key: str, tensor: Tensor, named: dict[int, str], order: int) -> Vertex:
    name = named.get(id(tensor)) or tensor.label
    if tensor.requires_grad and (isinstance(tensor, mg.nn.Parameter) or id(tensor) in named):
        kind = "parameter"
    else:
        kind = "leaf" if tensor.requires_grad else "constant"
    if name is None:
        name = f"leaf {order}" if tensor.requires_grad else f"input {order}"
    return Vertex(key, kind, name, None, [(tuple(tensor.shape), tensor.dtype)], tensor=tensor)
