"""Drawing a trace as SVG: Graphviz's ``dot`` when it is installed, a pure-Python layout
(grandalf) when it is not. Both draw the same boxes, colours and clusters.

The drawing is made in two steps:

1. ``view_graph`` decides *what* to draw: one box per op and per leaf, groups (a
   module's ops) as nested clusters, or as one box each when collapsed; a very large
   graph is collapsed automatically, then cut to the ops nearest the output, and the
   drawing says so in its ``notes``.
2. a backend decides *where*: ``dot`` (via the ``graphviz`` package) or grandalf's
   Sugiyama layout, and writes the SVG.

Every box is an SVG group whose ``id`` is the trace key (``n12`` for ``Mul #12``) and
whose ``class`` says what it is (``mg_op``, ``mg_current``, ...), so a browser (or a
test) can find it. Nothing in the output depends on memory addresses or timing.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, field

from ._base import escape
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


@dataclass
class Drawing:
    """An SVG drawing of a trace, and what was done to make it fit."""

    svg: str
    backend: str  # "dot" or "python"
    notes: list[str]
    owner: dict[str, str]  # trace key -> key of the box that shows it


def dot_available() -> bool:
    """Is Graphviz's ``dot`` program on the PATH (and the ``graphviz`` package installed)?"""
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None


def draw(trace: Trace, collapse: bool | int | list | None = False, current: str | None = None,
         selected: str | None = None, done: frozenset | set = frozenset(),
         max_nodes: int = MAX_NODES, backend: str = "auto") -> Drawing:
    """Draw ``trace``. ``collapse``: False (every op), True (each innermost group, i.e.
    each layer, becomes one box), an int depth (groups collapse to their first ``depth``
    path parts), or a list of group names. ``current``/``selected``/``done``: trace keys
    to highlight (the stepper's node, the selected node, the nodes already stepped).
    ``backend``: "auto" (dot when installed), "dot" or "python"."""
    view = view_graph(trace, collapse, current, selected, done, max_nodes)
    if backend == "auto":
        backend = "dot" if dot_available() else "python"
    if backend == "dot":
        svg = _draw_with_dot(view)
    elif backend == "python":
        svg = _draw_with_python(view)
    else:
        raise ValueError(f"draw: backend must be 'auto', 'dot' or 'python', got {backend!r}")
    return Drawing(svg, backend, view.notes, view.owner)


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


def _parent_cluster(group: str | None, collapsed_name: str | None = None) -> str | None:
    if collapsed_name is not None:  # a collapsed group sits in its parent's cluster
        parts = collapsed_name.split(".")
        return ".".join(parts[:-1]) or None
    return group


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
    box = Box(vertex.key, vertex.kind, lines, vertex.group, [f"mg_{vertex.kind}"], fill, stroke)
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
    box = Box(key, "group", lines, _parent_cluster(None, name), ["mg_group"], fill, stroke,
              width=1.5)
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
        if following.kind != "op" or following.lines[0].split(" #")[0] != \
                box.lines[0].split(" #")[0] or len(op_inputs) != 1 \
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
            first, last = boxes[run[0]], boxes[run[-1]]
            oper = first.lines[0].split(" #")[0]
            run_key = f"run_{run[0]}"
            boxes[run_key] = Box(run_key, "op", [
                f"{oper} x {len(run)}", f"{first.lines[0].split(' ')[-1]} ... "
                f"{last.lines[0].split(' ')[-1]}", last.lines[1]], first.cluster,
                ["mg_op", "mg_run"], *BOX_FILL["op"], width=2.0)
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
    more = Box("more", "more", [f"... {hidden} more", "earlier ops and leaves not shown"],
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


def _edge_width(arrow: Arrow, arrows: list[Arrow]) -> float:
    """1 to 5 by the gradient's norm, on a log scale across this drawing's arrows."""
    if arrow.grad is None or arrow.grad.status != "ok":
        return 1.5 if arrow.grad is not None else 1.0
    logs = [math.log10(a.grad.norm) for a in arrows
            if a.grad is not None and a.grad.status == "ok"]
    low, high = min(logs), max(logs)
    if high - low < 1e-12:
        return 3.0
    return round(1.0 + 4.0 * (math.log10(arrow.grad.norm) - low) / (high - low), 2)


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


# --- backend 1: Graphviz's dot ------------------------------------------------------------------


def _draw_with_dot(view: ViewGraph) -> str:
    import graphviz

    graph = graphviz.Digraph(graph_attr={"rankdir": "TB", "nodesep": "0.25", "ranksep": "0.35",
                                         "fontname": FONT, "bgcolor": "transparent"},
                             node_attr={"shape": "box", "style": "rounded,filled",
                                        "fontname": FONT, "fontsize": str(FONT_SIZE),
                                        "margin": "0.08,0.04"},
                             edge_attr={"fontname": FONT, "fontsize": "9",
                                        "arrowsize": "0.6"})
    # clusters nest by group path: build each one's subgraph, innermost first
    subgraphs = {name: graphviz.Digraph(name=f"cluster_{_dot_id(name)}", graph_attr={
        "label": name, "id": f"cluster_{_dot_id(name)}", "style": "dashed,rounded",
        "color": CLUSTER_STROKE, "fontcolor": "#5b21b6", "fontsize": "10"})
        for name in view.clusters}
    for key, box in view.boxes.items():
        target = subgraphs[box.cluster] if box.cluster in subgraphs else graph
        style = "rounded,filled" + (",dashed" if box.dashed else "")
        target.node(key, label="\n".join(box.lines), id=key, fillcolor=box.fill,
                    color=box.stroke, penwidth=str(box.width), style=style,
                    shape="box3d" if box.kind == "group" else "box",
                    **{"class": " ".join(box.classes)})
    for name in sorted(view.clusters, key=lambda n: -n.count(".")):  # innermost first
        parent = ".".join(name.split(".")[:-1])
        (subgraphs[parent] if parent in subgraphs else graph).subgraph(subgraphs[name])
    for index, arrow in enumerate(view.arrows):
        colour = EDGE_COLOUR[arrow.grad.status if arrow.grad is not None else None]
        graph.edge(arrow.source, arrow.target, id=f"e{index}", color=colour,
                   penwidth=str(_edge_width(arrow, view.arrows)), label=arrow.label,
                   fontcolor=colour, style="dashed" if arrow.grad is not None
                   and arrow.grad.status == "zero" or arrow.source == "more" else "solid",
                   **{"class": "mg_edge"})
    svg = graph.pipe(format="svg", encoding="utf-8")
    return _inline_svg(svg)


def _dot_id(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _inline_svg(svg: str) -> str:
    """The ``<svg>`` element alone (no XML prolog or version comment), ready for HTML."""
    svg = svg[svg.index("<svg"):]
    return svg.strip() + "\n"


# --- backend 2: pure Python (grandalf's Sugiyama layout) -----------------------------------------

CHAR_WIDTH = 6.6  # average width of a character at FONT_SIZE, in px
LINE_HEIGHT = 14
PAD_X, PAD_Y = 10, 6
CLUSTER_PAD = 12


class _Size:
    """grandalf's view of a vertex: its size in, its centre out."""

    def __init__(self, w: float, h: float) -> None:
        self.w, self.h = w, h
        self.xy = (0.0, 0.0)


class _Path:
    """grandalf's view of an edge: the routed points out."""

    def __init__(self) -> None:
        self.points: list = []

    def setpath(self, points: list) -> None:
        self.points = points


def _box_size(box: Box) -> tuple[float, float]:
    width = max(len(line) for line in box.lines) * CHAR_WIDTH + 2 * PAD_X
    return round(width, 1), len(box.lines) * LINE_HEIGHT + 2 * PAD_Y


def _layout(view: ViewGraph) -> tuple[dict[str, tuple], dict[int, list]]:
    """Centres of the boxes and the routed points of the arrows, laid out by grandalf
    (one connected component after another, left to right)."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout
    from grandalf.routing import route_with_lines

    vertices = {key: Vertex(key) for key in view.boxes}
    for key, vertex in vertices.items():
        vertex.view = _Size(*_box_size(view.boxes[key]))
    edges = []
    for index, arrow in enumerate(view.arrows):
        edge = Edge(vertices[arrow.source], vertices[arrow.target])
        edge.view = _Path()
        edge.index = index
        edges.append(edge)
    graph = Graph(list(vertices.values()), edges)
    centres: dict[str, tuple] = {}
    paths: dict[int, list] = {}
    offset = 0.0
    for component in graph.C:
        layout = SugiyamaLayout(component)
        layout.xspace, layout.yspace = 24, 40
        layout.route_edge = route_with_lines
        # optimize: leaves move down next to the op that uses them, as dot places them
        layout.init_all(roots=[v for v in component.sV if not v.e_in()] or None,
                        optimize=True)
        layout.draw()
        xs = [v.view.xy[0] - v.view.w / 2 for v in component.sV]
        left = min(xs)
        right = max(v.view.xy[0] + v.view.w / 2 for v in component.sV)
        for v in component.sV:
            centres[v.data] = (v.view.xy[0] - left + offset, v.view.xy[1])
        for e in component.sE:
            paths[e.index] = [(x - left + offset, y) for x, y in e.view.points]
        offset += right - left + 40
    return centres, paths


def _draw_with_python(view: ViewGraph) -> str:
    centres, paths = _layout(view)
    sizes = {key: _box_size(box) for key, box in view.boxes.items()}
    top = min(centres[k][1] - sizes[k][1] / 2 for k in view.boxes)
    margin = CLUSTER_PAD * (1 + max([c.count(".") + 1 for c in view.clusters] or [0])) + 8
    shift_y = margin + 14 - top  # room for the outermost cluster labels

    def at(x: float, y: float) -> tuple[float, float]:
        return round(x + margin, 1), round(y + shift_y, 1)

    rects = {}
    for key in view.boxes:
        (cx, cy), (w, h) = at(*centres[key]), sizes[key]
        rects[key] = (cx - w / 2, cy - h / 2, w, h)
    cluster_rects = _cluster_rects(view, rects)
    width = max([x + w for x, _, w, _ in rects.values()] +
                [x + w for x, _, w, _ in cluster_rects.values()]) + margin
    height = max([y + h for _, y, _, h in rects.values()] +
                 [y + h for _, y, _, h in cluster_rects.values()]) + margin
    parts = [f'<svg width="{width:.0f}pt" height="{height:.0f}pt" '
             f'viewBox="0 0 {width:.1f} {height:.1f}" xmlns="http://www.w3.org/2000/svg">',
             '<defs><marker id="mg_arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto">'
             '<path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>',
             f'<g id="graph0" class="graph" font-family="{FONT}" font-size="{FONT_SIZE}">']
    for name in view.clusters:  # outer clusters first, so inner ones draw on top
        x, y, w, h = cluster_rects[name]
        parts.append(f'<g id="cluster_{_dot_id(name)}" class="cluster"><title>{escape(name)}'
                     f'</title><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                     f'rx="6" fill="none" stroke="{CLUSTER_STROKE}" stroke-dasharray="5,3"/>'
                     f'<text x="{x + w / 2:.1f}" y="{y + 12:.1f}" text-anchor="middle" '
                     f'fill="#5b21b6" font-size="10">{escape(name)}</text></g>')
    for index, arrow in enumerate(view.arrows):
        points = [at(x, y) for x, y in paths.get(index, [])]
        if len(points) < 2:
            continue
        points[0] = _on_border(rects[arrow.source], points[1] if len(points) > 1 else points[0],
                               bottom=True)
        points[-1] = _on_border(rects[arrow.target], points[-2], bottom=False)
        colour = EDGE_COLOUR[arrow.grad.status if arrow.grad is not None else None]
        dashed = arrow.source == "more" or (arrow.grad is not None
                                            and arrow.grad.status == "zero")
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        parts.append(f'<g id="e{index}" class="edge mg_edge"><title>{escape(arrow.tooltip)}'
                     f'</title><polyline points="{path}" fill="none" stroke="{colour}" '
                     f'stroke-width="{_edge_width(arrow, view.arrows)}"'
                     + (' stroke-dasharray="4,3"' if dashed else "")
                     + ' marker-end="url(#mg_arrow)"/>')
        if arrow.label:
            (x0, y0), (x1, y1) = points[len(points) // 2 - 1], points[len(points) // 2]
            parts.append(f'<text x="{(x0 + x1) / 2 + 4:.1f}" y="{(y0 + y1) / 2:.1f}" '
                         f'font-size="9" fill="{colour}">{escape(arrow.label)}</text>')
        parts.append("</g>")
    for key, box in view.boxes.items():
        x, y, w, h = rects[key]
        classes = " ".join(["node"] + box.classes)
        dash = ' stroke-dasharray="4,3"' if box.dashed else ""
        parts.append(f'<g id="{escape(key)}" class="{classes}"><title>{escape(key)}</title>')
        if box.kind == "group":  # a 3-D look, as dot's box3d
            parts.append(f'<rect x="{x + 4:.1f}" y="{y - 4:.1f}" width="{w:.1f}" '
                         f'height="{h:.1f}" rx="4" fill="{box.fill}" stroke="{box.stroke}"/>')
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="4" '
                     f'fill="{box.fill}" stroke="{box.stroke}" stroke-width="{box.width}"{dash}/>')
        for i, line in enumerate(box.lines):
            parts.append(f'<text x="{x + w / 2:.1f}" y="{y + PAD_Y + (i + 0.8) * LINE_HEIGHT:.1f}"'
                         f' text-anchor="middle">{escape(line)}</text>')
        parts.append("</g>")
    parts.append("</g></svg>\n")
    return "\n".join(parts)


def _on_border(rect: tuple, towards: tuple, bottom: bool) -> tuple[float, float]:
    """Where a line to ``towards`` leaves the box ``rect`` (its top or bottom side)."""
    x, y, w, h = rect
    cx = min(max(towards[0], x + 6), x + w - 6)
    return round(cx, 1), round(y + h if bottom else y, 1)


def _cluster_rects(view: ViewGraph, rects: dict) -> dict[str, tuple]:
    """Each cluster's rectangle: around its boxes and its inner clusters, with padding
    growing outward (innermost computed first)."""
    result: dict[str, tuple] = {}
    for name in sorted(view.clusters, key=lambda n: -n.count(".")):
        inside = [rects[k] for k, b in view.boxes.items()
                  if b.cluster == name or (b.cluster or "").startswith(name + ".")]
        inside += [r for n, r in result.items() if n.startswith(name + ".")]
        if not inside:
            continue
        left = min(r[0] for r in inside) - CLUSTER_PAD
        top = min(r[1] for r in inside) - CLUSTER_PAD - 10
        right = max(r[0] + r[2] for r in inside) + CLUSTER_PAD
        bottom = max(r[1] + r[3] for r in inside) + CLUSTER_PAD
        result[name] = (left, top, right - left, bottom - top)
    return result
