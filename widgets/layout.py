"""Where the boxes go: the two backends that turn a ``ViewGraph`` (what ``drawing.py``
decided to draw) into SVG, and ``draw(trace)``, which runs both steps.

- ``draw_with_dot``: Graphviz's ``dot`` lays the graph out (via the ``graphviz``
  package), groups as nested clusters.
- ``draw_with_python``: grandalf's Sugiyama layout (pure Python, so it works where no
  program can be installed), and the SVG written here, in the same colours and shapes;
  a cluster is drawn as the rectangle around its boxes.

Both give every box an SVG group ``<g id="KEY" class="node mg_...">``, and nothing in
the output depends on addresses or timing.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass

from ._base import escape
from .drawing import (CLUSTER_STROKE, EDGE_COLOUR, FONT, FONT_SIZE, MAX_NODES, Arrow, Box,
                      ViewGraph, view_graph)
from .trace import Trace


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
        svg = draw_with_dot(view)
    elif backend == "python":
        svg = draw_with_python(view)
    else:
        raise ValueError(f"draw: backend must be 'auto', 'dot' or 'python', got {backend!r}")
    return Drawing(svg, backend, view.notes, view.owner)


# --- shared by both backends -------------------------------------------------------------------


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


# --- backend 1: Graphviz's dot ------------------------------------------------------------------


def draw_with_dot(view: ViewGraph) -> str:
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


def draw_with_python(view: ViewGraph) -> str:
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
