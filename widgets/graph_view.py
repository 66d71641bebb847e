"""GraphView: the computation graph behind a tensor, drawn inline, with a node selector
that shows what the selected node's context holds.

    view = GraphView(loss)        # before backward: it records every edge's gradient
    view
    loss.backward()               # the view redraws after the cell: edges by gradient norm
    view.select(loss.grad_fn)     # or pick a node in the dropdown, or click it

Gradients: the view puts a hook on every node (``Node.register_hook``), so a backward
that runs after the view was made records the gradient that travelled along each edge;
edges are then drawn thicker for larger norms and coloured when a gradient is zero,
vanishing, exploding or not finite. A view made after backward knows only the leaves'
``.grad``.
"""

from __future__ import annotations

import weakref
from typing import Any

import ipywidgets as widgets

from minigrad.function import Node
from minigrad.nn import Module
from minigrad.tensor import Tensor

from ._base import FONT, StaticRendering, escape, html_widget
from .canvas import SvgCanvas
from .drawing import MAX_NODES, legend_html
from .layout import Drawing, draw
from .trace import Trace, Vertex


class GraphView(StaticRendering, widgets.VBox):
    """The graph behind ``root`` (a Tensor). ``collapse_groups``: False, True (each
    layer one box), a depth, or a list of group names. ``names``: a Module (or a dict
    ``{name: tensor}``) naming the parameters. Past ``max_nodes`` boxes, groups collapse
    and then the drawing is cut to the ops nearest the output (it says so).
    ``backend``: "auto" (Graphviz's dot when installed, else pure Python), "dot",
    "python"."""

    def __init__(self, root: Tensor, collapse_groups: Any = False, names: Any = None,
                 max_nodes: int = MAX_NODES, backend: str = "auto") -> None:
        if not isinstance(root, Tensor):
            hint = (" To see a model, draw the graph of its output (GraphView(model(x)) or of "
                    "the loss), or its gradients with show(model)"
                    if isinstance(root, Module) else "")
            raise TypeError(f"GraphView: expected a minigrad Tensor (a loss, or any result of "
                            f"ops), got {type(root).__name__}.{hint}")
        self.collapse_groups = collapse_groups
        self.names = names
        self.max_nodes = max_nodes
        self.backend = backend
        self._selected: str | None = None
        self._recorder = None
        self.canvas = SvgCanvas()
        self.header = html_widget()
        self.legend = html_widget()
        self.selector = widgets.Dropdown(description="node", options=[("(none)", "")],
                                         value="", layout=widgets.Layout(width="420px"))
        self.collapse_box = widgets.Checkbox(value=collapse_groups not in (False, None),
                                             description="collapse groups", indent=False)
        self.panel = widgets.VBox()  # the selected node's inspector or tensor view
        super().__init__(children=[self.header, widgets.HBox([self.selector, self.collapse_box]),
                                   self.canvas, self.legend, self.panel])
        self.selector.observe(self._on_select, names="value")
        self.collapse_box.observe(self._on_collapse, names="value")
        if getattr(self.canvas, "clickable", False):
            self.canvas.observe(self._on_click, names="clicked")
        self._trace_root(root)

    # --- public ---------------------------------------------------------------------

    @property
    def trace(self) -> Trace:
        return self._trace

    @property
    def svg(self) -> str:
        """The current drawing, an ``<svg>`` string."""
        return self.drawing.svg

    @property
    def selected(self) -> Node | Tensor | None:
        """The selected node (or leaf Tensor), or None."""
        if self._selected is None:
            return None
        vertex = self._trace.vertices[self._selected]
        return vertex.node if vertex.node is not None else vertex.tensor

    def select(self, item: Node | Tensor | str | None) -> None:
        """Select a node (a Node, a Tensor of this graph, or a key such as ``'n3'``) and
        show its ContextInspector (a leaf: its TensorView). ``None`` clears."""
        key = None if item is None else self._trace.vertex(item).key
        if self.selector.value != (key or ""):
            self.selector.value = key or ""  # -> _on_select
        else:
            self._show_selected(key)

    def refresh(self, root: Tensor | None = None) -> None:
        """Redraw: after a backward (edges by gradient), after ``realize()`` (lazy), or
        with a new ``root`` (e.g. the next training step's loss)."""
        if root is not None and root is not self._trace.root:
            self._trace_root(root)
            return
        self._redraw()
        if self.panel.children:
            self.panel.children[0].refresh()

    def summary(self) -> str:
        text = f"GraphView({self._trace.summary()}"
        if self._selected is not None:
            text += f", selected {self._trace.vertices[self._selected].title}"
        return text + ")"

    def to_html(self) -> str:
        panel = self.panel.children[0].to_html() if self.panel.children else ""
        return (f'<div class="mg_graph_view" style="{FONT}">{self.header.value}'
                f'<div class="mg_graph">{self.drawing.svg}</div>{self.legend.value}'
                f"{panel}</div>")

    # --- inside -------------------------------------------------------------------------

    def _trace_root(self, root: Tensor) -> None:
        if self._recorder is not None:
            self._recorder.remove()
        self._trace = Trace.of(root, self.names)
        # record the gradients of a backward still to come (a freed graph has had its)
        self._recorder = None if self._trace.freed else self._trace.record_gradients()
        if self._recorder is not None:
            _redraw_after_cell(self)
        self._selected = None
        options = [("(none)", "")] + [(_option_text(v), v.key) for v in self._options()]
        with self.selector.hold_trait_notifications():
            self.selector.options = options
            self.selector.value = ""
        self.panel.children = []
        self._redraw()

    def _options(self) -> list[Vertex]:
        """Ops newest first (the output's op on top), then the leaves."""
        return list(reversed(self._trace.ops)) + self._trace.leaves

    def _redraw(self) -> None:
        self.drawing: Drawing = draw(self._trace, self._collapse(), selected=self._selected,
                                     max_nodes=self.max_nodes, backend=self.backend)
        self._drawn_backwards = self._trace.backwards
        self.canvas.svg = self.drawing.svg
        self.header.value = _header_html(self._trace, self.drawing)
        self.legend.value = legend_html(self._trace.recorded)

    def _collapse(self) -> Any:
        if self.collapse_box.value:
            return self.collapse_groups if self.collapse_groups not in (False, None) else True
        return False

    def _show_selected(self, key: str | None) -> None:
        self._selected = key
        if key is None:
            self.panel.children = []
        else:
            vertex = self._trace.vertices[key]
            if vertex.node is not None:
                from .inspector import ContextInspector

                current = self.panel.children[0] if self.panel.children else None
                if isinstance(current, ContextInspector):
                    current.inspect(vertex.node, self._trace)
                else:
                    self.panel.children = [ContextInspector(vertex.node, self._trace)]
            else:
                from .tensor_view import TensorView

                self.panel.children = [TensorView(vertex.tensor)]
        self._redraw()

    def _on_select(self, change: dict) -> None:
        self._show_selected(change["new"] or None)

    def _on_collapse(self, change: dict) -> None:
        self._redraw()

    def _on_click(self, change: dict) -> None:
        key = change["new"]
        if not key:
            return
        self.canvas.clicked = ""  # so that a second click on the same box is seen too
        if key in self._trace.vertices:
            self.select(key)


def _option_text(vertex: Vertex) -> str:
    text = f"{vertex.title}  {vertex.shape_text()}"
    if vertex.group:
        text += f"  [{vertex.group}]"
    return text


def _header_html(trace: Trace, drawing: Drawing) -> str:
    lines = [f"<b>{escape(trace.summary())}</b>"]
    if trace.pending:
        lines.append("Lazy mode: the ops drawn dashed are recorded but not computed yet; "
                     "<code>.realize()</code> (or backward, <code>item()</code>, "
                     "<code>numpy()</code>) computes them.")
    if trace.freed:
        lines.append("This graph was freed by <code>backward()</code>: its saved tensors and "
                     "intermediate results are gone (the edges and shapes remain). "
                     "<code>backward(retain_graph=True)</code> keeps them for inspection.")
    if trace.recorded:
        lines.append("Edges show the gradient that flowed back along them in the last "
                     "backward.")
    elif any(v.tensor is not None and v.tensor.grad is not None for v in trace.leaves):
        lines.append("The leaves show their <code>.grad</code>; make the view before "
                     "<code>backward()</code> to see the gradient on every edge.")
    lines += [escape(note) for note in drawing.notes]
    return (f'<div class="mg_graph_header" style="{FONT};margin-bottom:4px">'
            + "<br>".join(lines) + "</div>")


# --- redrawing after the cell that ran backward -------------------------------------------

_views_to_redraw: weakref.WeakSet = weakref.WeakSet()
_hooked_into_ipython = False


def _redraw_after_cell(view: GraphView) -> None:
    """In IPython, redraw ``view`` after each cell that ran a backward through its graph,
    so ``loss.backward()`` in the next cell updates the drawing without ``refresh()``."""
    global _hooked_into_ipython
    _views_to_redraw.add(view)
    if _hooked_into_ipython:
        return
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return
    shell = get_ipython()
    if shell is None:
        return
    shell.events.register("post_run_cell", _redraw_views)
    _hooked_into_ipython = True


def _redraw_views(*_: Any) -> None:
    for view in list(_views_to_redraw):
        if view.trace.backwards != view._drawn_backwards:
            view.refresh()
