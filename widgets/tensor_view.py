"""TensorView: a tensor's values and its gradient, side by side.

Seeing both at once answers the usual questions of a first network: which weights are
large, which gradients are zero (a dead ReLU), where a NaN came from. Small tensors show
their numbers, larger ones a heatmap (blue negative, white zero, red positive), each with
one line of statistics underneath.
"""

from __future__ import annotations

import ipywidgets as widgets

from minigrad.tensor import Tensor

from ._base import FONT, StaticRendering, escape, html_widget
from .render import preview_html, stats_html
from .trace import describe, format_meta, grad_stats, graph_numbers

PANEL = "flex: 0 1 auto; min-width: 160px; padding: 4px 8px; border: 1px solid #ddd"
PANEL_TITLE = "font-weight: bold; margin-bottom: 4px"
MESSAGE = "color: #666; font-style: italic"


class TensorView(StaticRendering, widgets.VBox):
    """Values (left) and ``.grad`` (right) of one tensor. ``.refresh()`` reads them again,
    after a backward or an optimizer step. A lazy tensor that is not computed yet is
    left alone: looking at it does not compute it."""

    def __init__(self, tensor: Tensor) -> None:
        if not isinstance(tensor, Tensor):
            raise TypeError(f"TensorView: expected a minigrad Tensor, got {type(tensor).__name__}")
        self.tensor = tensor
        self._view = html_widget()
        refresh = widgets.Button(description="refresh", tooltip="read values and .grad again")
        refresh.on_click(lambda _: self.refresh())
        super().__init__(children=[self._view, refresh])
        self.refresh()

    def refresh(self) -> None:
        """Redraw with the tensor's current values and gradient."""
        self._view.value = self.to_html()

    @property
    def name(self) -> str:
        return self.tensor.label or "tensor"

    def summary(self) -> str:
        t = self.tensor
        shape = format_meta(t.shape, t.dtype)
        if not t.is_realized:
            state = "not computed yet"
        elif t.grad is None:
            state = "no grad"
        else:
            state = f"grad {grad_stats(t.grad).describe()}"
        return f"TensorView({self.name}: {shape}, {state})"

    def to_html(self) -> str:
        t = self.tensor
        details = [format_meta(t.shape, t.dtype)]
        if t.grad_fn is not None:
            node = t.grad_fn  # numbered as the drawing of its graph numbers it
            details.append(f"made by {describe(node, graph_numbers(node))}")
        details.append(f"requires_grad={t.requires_grad}")
        header = (f'<div style="font-size: 14px; font-weight: bold">{escape(self.name)}</div>'
                  f'<div style="color: #555">{escape(" | ".join(details))}</div>')
        panels = (_panel("values", self._values_html()) + _panel("gradient (.grad)",
                                                                 self._gradient_html()))
        return (f'<div class="mg-tensor-view" style="{FONT}">{header}'
                f'<div style="display: flex; flex-wrap: wrap; gap: 8px; margin-top: 4px">'
                f"{panels}</div></div>")

    def _values_html(self) -> str:
        if not self.tensor.is_realized:
            return _message("not computed yet (lazy mode): .realize() computes it")
        values = self.tensor.numpy()
        return preview_html(values) + "<div>" + stats_html(values) + "</div>"

    def _gradient_html(self) -> str:
        t = self.tensor
        if t.grad is not None:
            grad = t.grad.numpy()
            return preview_html(grad) + "<div>" + stats_html(grad) + "</div>"
        text = "no gradient yet (call backward())"
        if not t.requires_grad:
            text += "; requires_grad=False, so backward() will not give it one"
        elif not t.is_leaf:
            text += "; a non-leaf keeps its .grad only after retain_grad()"
        return _message(text)


def _panel(title: str, body: str) -> str:
    return f'<div style="{PANEL}"><div style="{PANEL_TITLE}">{escape(title)}</div>{body}</div>'


def _message(text: str) -> str:
    return f'<div style="{MESSAGE}">{escape(text)}</div>'
