"""What every minigrad widget shares: a static rendering next to the live one.

A widget shown in JupyterLab is a live view that talks to the kernel. A saved notebook
(on GitHub, in nbviewer, or opened without a kernel) has no kernel, so each widget also
puts into its output a deterministic ``text/html`` picture of itself (tables and inline
SVG) and a short, stable ``text/plain``. nbval compares those two, so they must not
contain anything that changes from run to run (addresses, ``id()``, timings).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

# One look for every widget's static HTML: small, readable, and the same in JupyterLab,
# nbviewer and GitHub (which keeps inline styles but drops <style> blocks).
FONT = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px"


class StaticRendering:
    """Mixin for an ipywidgets widget: ``to_html()`` (the static picture) and
    ``summary()`` (one line of plain text) go into the output next to the live view.

    Subclasses write ``to_html`` and ``summary``; the mixin does the rest."""

    def to_html(self) -> str:  # pragma: no cover - every widget writes its own
        raise NotImplementedError

    def summary(self) -> str:  # pragma: no cover - every widget writes its own
        raise NotImplementedError

    @property
    def css_class(self) -> str:
        """The live view's CSS class: ``mg_graph_view`` for a GraphView (what a browser
        test, or a stylesheet, finds it by)."""
        name = type(self).__name__
        return "mg" + "".join(f"_{c.lower()}" if c.isupper() else c for c in name)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        self.add_class(self.css_class)
        bundle = super()._repr_mimebundle_(**kwargs)  # text/plain + the live widget view
        if isinstance(bundle, tuple):  # (data, metadata)
            bundle = bundle[0]
        bundle = dict(bundle or {})
        bundle["text/plain"] = self.summary()
        bundle["text/html"] = self.to_html()
        return bundle

    def __repr__(self) -> str:
        return self.summary()


def html_widget(value: str = "") -> widgets.HTML:
    """An HTML widget for content (never an ``Output`` widget: its captured prints end
    up in the saved notebook and differ from run to run)."""
    return widgets.HTML(value=value)


def escape(text: Any) -> str:
    """``text`` made safe to put inside HTML or SVG."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))
