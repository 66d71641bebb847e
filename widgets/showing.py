"""``show(obj)``: the fitting view for whatever a student has in hand.

- a tensor made by ops (a loss): its ``GraphView``;
- a lazy tensor not computed yet: the ``GraphView`` of the recorded ops (drawn dashed);
- a leaf tensor (or a NumPy array): its ``TensorView``, values and gradient;
- a graph node (``t.grad_fn``): its ``ContextInspector``;
- a Module: its ``GradientFlow`` (gradient norms per parameter).

It never raises: anything it cannot show becomes a message that says why.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np

import minigrad as mg
from minigrad.function import Node
from minigrad.tensor import Tensor

from ._base import FONT, StaticRendering, escape, html_widget


class Message(StaticRendering, widgets.VBox):
    """A short note in place of a view (what ``show`` gives for what it cannot draw)."""

    def __init__(self, text: str) -> None:
        self.text = text
        super().__init__(children=[html_widget(self.to_html())])

    def summary(self) -> str:
        return f"Message({self.text})"

    def to_html(self) -> str:
        return (f'<div class="mg_message" style="{FONT};padding:6px;border-left:3px solid '
                f'#a78bfa;background:#f5f3ff">{escape(self.text)}</div>')


def show(obj: Any, **options: Any) -> Any:
    """The view that fits ``obj`` (see the module's docstring); ``options`` go to a
    GraphView or a GradientFlow (e.g. ``collapse_groups=True``, ``names=model``)."""
    try:
        return _view_for(obj, **options)
    except Exception as error:  # a view in a notebook: a message, never a traceback
        return Message(f"show(): could not show this {type(obj).__name__}: "
                       f"{type(error).__name__}: {error}")


def _view_for(obj: Any, **options: Any) -> Any:
    if isinstance(obj, np.ndarray):
        obj = mg.tensor(obj)
    if isinstance(obj, Tensor):
        if obj.grad_fn is None and obj.is_realized:
            from .tensor_view import TensorView

            return TensorView(obj)  # (graph options do not apply)
        from .graph_view import GraphView

        return GraphView(obj, **options)
    if isinstance(obj, Node):
        from .inspector import ContextInspector

        return ContextInspector(obj)
    if isinstance(obj, mg.nn.Module):
        from .gradient_flow import GradientFlow

        return GradientFlow(obj, **options)
    return Message(f"show() draws minigrad Tensors (their graph, or their values and gradient), "
                   f"graph nodes (t.grad_fn: what their context holds) and Modules (gradient "
                   f"norms per parameter); this is a {type(obj).__name__}.")
