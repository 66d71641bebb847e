"""An SVG drawing in a widget, whose boxes can be clicked.

ipywidgets' HTML widget shows an SVG but cannot tell the kernel where it was clicked.
With ``anywidget`` installed (part of the ``jupyter`` extra), ``SvgCanvas`` is a tiny
custom widget: a few lines of JavaScript put the SVG in the page and, on a click inside
a graph box (an SVG ``<g class="node">`` whose ``id`` is the box's key), send that key
back as the ``clicked`` trait. Without anywidget it is an HTML widget: the drawing is
the same, and the views' dropdowns do the selecting.
"""

from __future__ import annotations

import ipywidgets as widgets

try:
    import anywidget
    import traitlets
except ImportError:  # pragma: no cover - anywidget is in the jupyter extra
    anywidget = None


if anywidget is not None:

    class SvgCanvas(anywidget.AnyWidget):
        """``svg``: the drawing (an ``<svg>`` string); ``clicked``: the key of the box
        clicked last (set by the page; the view reads it and sets it back to "")."""

        _esm = """
        function render({ model, el }) {
          const draw = () => {
            el.innerHTML = model.get("svg");
            for (const node of el.querySelectorAll("g.node")) node.style.cursor = "pointer";
          };
          el.classList.add("mg_canvas");
          el.addEventListener("click", (event) => {
            const node = event.target.closest("g.node");
            if (node && node.id) {
              model.set("clicked", node.id);
              model.save_changes();
            }
          });
          model.on("change:svg", draw);
          draw();
        }
        export default { render };
        """
        svg = traitlets.Unicode("").tag(sync=True)
        clicked = traitlets.Unicode("").tag(sync=True)

        def __init__(self, svg: str = "") -> None:
            super().__init__(svg=svg)

        @property
        def clickable(self) -> bool:
            return True

else:  # pragma: no cover

    class SvgCanvas(widgets.HTML):  # type: ignore[no-redef]
        """Without anywidget: the drawing only (select boxes with the dropdown)."""

        def __init__(self, svg: str = "") -> None:
            super().__init__(value=svg)

        @property
        def svg(self) -> str:
            return self.value

        @svg.setter
        def svg(self, value: str) -> None:
            self.value = value

        @property
        def clickable(self) -> bool:
            return False
