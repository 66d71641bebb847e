"""Drawing a trace as SVG: Graphviz's ``dot`` when it is installed, a pure-Python layout
(grandalf) when it is not. Both draw the same boxes, colours and clusters.

The drawing is made in two steps:

1. ``view_graph`` (this file) decides *what* to draw: one box per op and per leaf,
   groups (a module's ops) as nested clusters, or as one box each when collapsed; a
   very large graph is collapsed automatically, its loops folded, then cut to the ops
   nearest the output, and the drawing says so in its ``notes``.
2. a backend (``layout.py``) decides *where*: ``dot`` (via the ``graphviz`` package) or
   grandalf's Sugiyama layout, and writes the SVG. ``layout.draw(trace)`` does both.

Every box is an SVG group whose ``id`` is the trace key (``n3`` for ``Mul #3``, the
graph's third op) and whose ``class`` says what it is (``mg_op``, ``mg_current``, ...),
so a browser (or a test) can find it. Nothing in the output depends on memory addresses,
timing, or the ops made before the graph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .trace import GradStats, Trace, Vertex

# --- the look, shared by both backends -------------------------------------------------------

FONT = "Helvetica,Arial,sans-serif"
FONT_SIZE = 11
BOX_FILL = {  # fill, stroke
    "op": ("#dbeafe", "#1e40af"),
    "parameter": ("#dcfce7", "#15803d"),
    "leaf": ("#fef9c3", "#a16207"),
    "constant": ("#f3f4f6", "#6b7280"),
    "group": ("#ede9fe", "#6d28d9"),
    "more": ("#ffffff", "#9ca3af"),
}
CURRENT = ("#fed7aa", "#c2410c")  # the stepper's node
DONE_STROKE = "#16a34a"  # the stepper has run it: its gradients are computed
SELECTED_STROKE = "#7c3aed"
CLUSTER_STROKE = "#a78bfa"
EDGE_COLOUR = {  # by gradient status; no gradient recorded: plain grey
    None: "#6b7280",
    "ok": "#2563eb",
    "zero": "#9ca3af",
    "vanishing": "#93c5fd",
    "exploding": "#ea580c",
    "nonfinite": "#dc2626",
}
STATUS_WORDS = {
    "ok": "gradient (thicker: larger norm)",
    "zero": "zero gradient",
    "vanishing": "vanishing gradient (norm < 1e-7)",
    "exploding": "exploding gradient (norm > 1e3)",
    "nonfinite": "NaN or Inf in the gradient",
}
MAX_NODES = 150  # past this many boxes, groups collapse, then the graph is cut
EDGE_LABELS_UP_TO = 40  # boxes; larger drawings show gradient norms in tooltips only


@dataclass
class Box:
    key: str
    kind: str  # op, parameter, leaf, constant, group, more
    oper: str  # the op's name ("Mul"); for other boxes their kind
    lines: list[str]
    cluster: str | None  # the (expanded) group it is drawn inside
    classes: list[str] = field(default_factory=list)
    fill: str = ""
    stroke: str = ""
    width: float = 1.0  # stroke width
    dashed: bool = False


@dataclass
class Arrow:
    source: str
    target: str
    tooltip: str
    grad: GradStats | None = None
    label: str = ""


@dataclass
class ViewGraph:
    boxes: dict[str, Box]
    arrows: list[Arrow]
    clusters: list[str]  # expanded groups that hold boxes (and their parents), sorted
    notes: list[str]
    owner: dict[str, str]  # trace key -> the key of the box that shows it (or itself)


# --- what to draw ------------------------------------------------------------------------------


def view_graph(trace: Trace, collapse=False, current=None, selected=None, done=frozenset(),
               max_nodes: int = MAX_NODES) -> ViewGraph:
    notes: list[str] = []
    collapsed = _collapsed_groups(trace, collapse)
    if not collapsed and collapse is False and len(trace.vertices) > max_nodes and trace.groups:
        collapsed = _automatic_collapse(trace, max_nodes)
        notes.append(f"{len(trace.ops)} ops: groups were collapsed automatically to fit "
                     f"(GraphView(..., collapse_groups=False, max_nodes={len(trace.vertices)}) "
                     "shows every op)")
    owner = {key: _container(vertex, collapsed) or key for key, vertex in trace.vertices.items()}

    boxes: dict[str, Box] = {}
    members: dict[str, list[Vertex]] = {}
    for key, vertex in trace.vertices.items():
        box_key = owner[key]
        if box_key != key:
            members.setdefault(box_key, []).append(vertex)
        else:
            boxes[key] = _vertex_box(vertex)
    for box_key, inside in members.items():
        boxes[box_key] = _group_box(box_key, inside)

    arrows = _arrows(trace, owner)
    if len(boxes) > max_nodes:
        boxes, arrows = _fold_chains(trace, boxes, arrows, owner, notes)
    boxes, arrows = _cut_to_fit(trace, boxes, arrows, owner, max_nodes, notes)
    _mark(boxes, owner, current, selected, done)
    if len(boxes) <= EDGE_LABELS_UP_TO:
        for arrow in arrows:
            if arrow.grad is not None:
                arrow.label = arrow.grad.describe()
    clusters = sorted({prefix for box in boxes.values() if box.cluster
                       for prefix in _prefixes(box.cluster)})
    return ViewGraph(boxes, arrows, clusters, notes, owner)


def _prefixes(group: str) -> list[str]:
    parts = group.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _collapsed_groups(trace: Trace, collapse) -> set[str]:
    groups = trace.groups
    if collapse is False or collapse is None:
        return set()
    if collapse is True:  # innermost groups: those with no group inside them
        return {g for g in groups if not any(other.startswith(g + ".") for other in groups)}
    if isinstance(collapse, int):
        if collapse < 1:
            raise ValueError(f"collapse_groups: a depth must be 1 or more, got {collapse}")
        return {g for g in groups if len(g.split(".")) == collapse}
    names = set(collapse)
    unknown = sorted(names - set(groups))
    if unknown:
        raise ValueError(f"collapse_groups: no group named {', '.join(map(repr, unknown))} in "
                         f"this graph; its groups are {', '.join(groups) or '(none)'}")
    return names


def _automatic_collapse(trace: Trace, max_nodes: int) -> set[str]:
    """The least collapsing that fits: each layer one box, then ever shallower depths."""
    depth = max(len(g.split(".")) for g in trace.groups)
    options = [True] + list(range(depth, 0, -1))
    for option in options:
        collapsed = _collapsed_groups(trace, option)
        owners = {_container(v, collapsed) or v.key for v in trace.vertices.values()}
        if len(owners) <= max_nodes:
            return collapsed
    return _collapsed_groups(trace, 1)


def _container(vertex: Vertex, collapsed: set[str]) -> str | None:
    """The key of the collapsed group box that ``vertex`` is drawn in, if any."""
    if not collapsed or not vertex.group:
        return None
    for prefix in _prefixes(vertex.group):  # outermost first
        if prefix in collapsed:
            return f"g_{prefix}"
    return None


def _vertex_box(vertex: Vertex) -> Box:
    fill, stroke = BOX_FILL[vertex.kind]
    lines = [vertex.title, vertex.shape_text()]
    if vertex.kind == "op":
        if vertex.label:
            lines.append(f"label {vertex.label}")
        if vertex.pending:
            lines.append("not computed yet (lazy)")
    else:
        if vertex.label and vertex.label != vertex.title:
            lines.append(f"label {vertex.label}")
        grad = vertex.grad
        if grad is not None:
            lines.append(f"grad {grad.describe()}")
    box = Box(vertex.key, vertex.kind, vertex.oper, lines, vertex.group, [f"mg_{vertex.kind}"],
              fill, stroke)
    if vertex.is_root:
        box.width = 2.5
        box.classes.append("mg_root")
    if vertex.pending:
        box.dashed = True
        box.classes.append("mg_pending")
    elif vertex.freed:
        box.classes.append("mg_freed")
    grad = vertex.grad if vertex.kind != "op" else None
    if grad is not None and grad.status != "ok":
        box.stroke = EDGE_COLOUR[grad.status]
        box.width = 2.5
    return box


def _group_box(key: str, inside: list[Vertex]) -> Box:
    name = key[2:]
    ops = [v for v in inside if v.kind == "op"]
    kinds = []
    for v in ops:
        if v.oper not in kinds:
            kinds.append(v.oper)
    summary = ", ".join(kinds[:3]) + (", ..." if len(kinds) > 3 else "")
    lines = [name, f"{len(ops)} op{'s' * (len(ops) != 1)}: {summary}"]
    params = sum(v.kind == "parameter" for v in inside)
    if params:
        lines.append(f"{params} parameter{'s' * (params != 1)}")
    fill, stroke = BOX_FILL["group"]
    parent = ".".join(name.split(".")[:-1]) or None  # drawn in its parent group's cluster
    box = Box(key, "group", "group", lines, parent, ["mg_group"], fill, stroke, width=1.5)
    if any(v.is_root for v in inside):
        box.width = 2.5
        box.classes.append("mg_root")
    return box


def _arrows(trace: Trace, owner: dict[str, str]) -> list[Arrow]:
    """One arrow per (source box, target box), merging the edges a collapse joined; the
    merged gradient is the worst (non-finite first) or else the largest."""
    merged: dict[tuple[str, str], list] = {}
    for edge in trace.edges:
        source, target = owner[edge.source], owner[edge.target]
        if source == target:
            continue
        joined = source != edge.source or target != edge.target  # a collapse joined them
        merged.setdefault((source, target, None if joined else edge.position), []).append(edge)
    arrows = []
    for (source, target, _), edges in merged.items():
        shapes = sorted({f"{tuple(e.shape)} {e.dtype.name}" for e in edges})
        tooltip = ", ".join(shapes)
        grads = [e.grad for e in edges if e.grad is not None]
        grad = max(grads, key=_severity) if grads else None
        if grad is not None:
            tooltip += f"; gradient {grad.describe()}"
        arrows.append(Arrow(source, target, tooltip, grad))
    return arrows


def _severity(grad: GradStats) -> tuple:
    order = {"nonfinite": 3, "exploding": 2, "ok": 1, "vanishing": 0, "zero": 0}
    return order[grad.status], 0.0 if math.isnan(grad.norm) else grad.norm


def _fold_chains(trace: Trace, boxes: dict, arrows: list, owner: dict,
                 notes: list) -> tuple[dict, list]:
    """Fold each run of three or more ops of one kind, each feeding only the next (``y =
    y * 0.99`` in a loop), into one box ``Mul x 5000``: a long chain reads as a loop."""
    into: dict[str, list[Arrow]] = {}
    out_of: dict[str, list[Arrow]] = {}
    for arrow in arrows:
        into.setdefault(arrow.target, []).append(arrow)
        out_of.setdefault(arrow.source, []).append(arrow)

    def next_in_run(key: str) -> str | None:
        """The op that ``key`` alone feeds, if it is of the same kind and fed by no other op."""
        box = boxes[key]
        outs = out_of.get(key, [])
        if box.kind != "op" or len(outs) != 1 or "mg_root" in box.classes:
            return None
        following = boxes[outs[0].target]
        op_inputs = [a for a in into.get(following.key, []) if boxes[a.source].kind == "op"]
        if following.kind != "op" or following.oper != box.oper or len(op_inputs) != 1 \
                or "mg_root" in following.classes:  # the output's op stays in view
            return None
        return following.key

    starts = set(boxes)
    for key in list(boxes):
        following = next_in_run(key)
        if following is not None:
            starts.discard(following)  # it continues a run
    folded: dict[str, str] = {}  # box key -> the key of the run box that replaces it
    for key in [k for k in boxes if k in starts]:
        run = [key]
        while (following := next_in_run(run[-1])) is not None:
            run.append(following)
        if len(run) >= 3:
            first, last = trace.vertices[run[0]], trace.vertices[run[-1]]
            run_key = f"run_{run[0]}"
            boxes[run_key] = Box(run_key, "op", first.oper, [
                f"{first.oper} x {len(run)}",
                f"#{trace.numbers[first.node]} ... #{trace.numbers[last.node]}",
                last.shape_text()], first.group, ["mg_op", "mg_run"], *BOX_FILL["op"],
                width=2.0)
            for member in run:
                folded[member] = run_key
    if not folded:
        return boxes, arrows
    merged: dict[tuple[str, str], Arrow] = {}
    for arrow in arrows:
        source, target = folded.get(arrow.source, arrow.source), folded.get(arrow.target,
                                                                            arrow.target)
        if source != target and (source, target) not in merged:
            merged[(source, target)] = Arrow(source, target, arrow.tooltip, arrow.grad)
    for key, box_key in owner.items():
        owner[key] = folded.get(box_key, box_key)
    runs = len(set(folded.values()))
    notes.append(f"{len(folded)} ops forming {runs} chain{'s' * (runs != 1)} of one kind of "
                 f"op (a loop) are drawn as one box per chain")
    return ({k: b for k, b in boxes.items() if k not in folded}, list(merged.values()))


def _cut_to_fit(trace: Trace, boxes: dict, arrows: list, owner: dict, max_nodes: int,
                notes: list) -> tuple[dict, list]:
    """Keep the ``max_nodes`` boxes nearest the output (breadth first against the
    arrows); the rest becomes one "... more" box."""
    if len(boxes) <= max_nodes:
        return boxes, arrows
    sources: dict[str, list[str]] = {}
    for arrow in arrows:
        sources.setdefault(arrow.target, []).append(arrow.source)
    root = owner[trace.root_key]
    keep, queue = {root}, [root]
    while queue and len(keep) < max_nodes:
        next_queue = []
        for key in queue:
            for source in sources.get(key, []):
                if source not in keep and len(keep) < max_nodes:
                    keep.add(source)
                    next_queue.append(source)
        queue = next_queue
    hidden = len(boxes) - len(keep)
    kept_boxes = {k: b for k, b in boxes.items() if k in keep}  # stable order
    more = Box("more", "more", "more", [f"... {hidden} more",
                                         "earlier ops and leaves not shown"],
               None, ["mg_more"], *BOX_FILL["more"], dashed=True)
    kept_boxes["more"] = more
    kept_arrows, into_from_more = [], set()
    for arrow in arrows:
        if arrow.source in keep and arrow.target in keep:
            kept_arrows.append(arrow)
        elif arrow.target in keep and arrow.target not in into_from_more:
            into_from_more.add(arrow.target)
            kept_arrows.append(Arrow("more", arrow.target, "from the ops not shown"))
    for key, box_key in owner.items():
        if box_key not in keep:
            owner[key] = "more"
    notes.append(f"{len(boxes)} boxes: showing the {len(keep)} nearest the output "
                 f"(GraphView(..., max_nodes={len(boxes)}) shows all)")
    return kept_boxes, kept_arrows


def _mark(boxes: dict, owner: dict, current, selected, done) -> None:
    for key in done:
        box = boxes.get(owner.get(key, key))
        if box is not None and box.kind in ("op", "group"):
            box.stroke, box.width = DONE_STROKE, max(box.width, 2.0)
            box.classes.append("mg_done")
    if selected is not None and owner.get(selected, selected) in boxes:
        box = boxes[owner.get(selected, selected)]
        box.stroke, box.width = SELECTED_STROKE, 3.0
        box.classes.append("mg_selected")
    if current is not None and owner.get(current, current) in boxes:
        box = boxes[owner.get(current, current)]
        box.fill, box.stroke, box.width = CURRENT[0], CURRENT[1], 3.0
        box.classes.append("mg_current")


def legend_html(recorded: bool) -> str:
    """The colours and line styles, as a small HTML legend under a drawing."""
    def swatch(fill: str, stroke: str, text: str, width: int = 1) -> str:
        return (f'<span style="display:inline-block;margin-right:10px">'
                f'<span style="display:inline-block;width:12px;height:10px;background:{fill};'
                f'border:{width}px solid {stroke};vertical-align:middle"></span> {text}</span>')

    def line(colour: str, text: str, dashed: bool = False) -> str:
        style = "dashed" if dashed else "solid"
        return (f'<span style="display:inline-block;margin-right:10px">'
                f'<span style="display:inline-block;width:18px;border-top:3px {style} '
                f'{colour};vertical-align:middle"></span> {text}</span>')

    items = [swatch(*BOX_FILL["op"], "op (Function)"),
             swatch(*BOX_FILL["parameter"], "parameter"),
             swatch(*BOX_FILL["leaf"], "leaf with requires_grad"),
             swatch(*BOX_FILL["constant"], "tensor without grad"),
             swatch(*BOX_FILL["group"], "collapsed group (a layer)"),
             swatch(CURRENT[0], CURRENT[1], "current step", 2),
             swatch("#ffffff", DONE_STROKE, "backward done", 2),
             swatch("#ffffff", SELECTED_STROKE, "selected", 2)]
    if recorded:
        items += [line(EDGE_COLOUR[s], w, dashed=s == "zero") for s, w in STATUS_WORDS.items()]
    else:
        items.append(line(EDGE_COLOUR[None], "tensor flowing forward"))
    return ('<div class="mg_legend" style="font-family:' + FONT + ';font-size:11px;'
            'line-height:1.8">' + "".join(items) + "</div>")
