"""ContextInspector: what one Function's context holds, between forward and backward.

A Function's forward leaves on its context (the graph node, ``ctx``) everything its
backward will need: the inputs it came from, which of them need a gradient
(``needs_input_grad``), settings such as ``ctx.dim``, and the saved arrays
(``save_for_backward``). This view lays all of that out for one node, and says what
happened to it since: still waiting to be computed (lazy mode), or saved tensors released
by ``backward()`` (kept with ``retain_graph=True``).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np

from minigrad.autograd import pending_node
from minigrad.forward import same_array
from minigrad.function import Node
from minigrad.nn import Parameter
from minigrad.tensor import Tensor

from ._base import FONT, StaticRendering, escape, html_widget
from .render import Html, preview_html, short_repr, stats_html, table_html
from .trace import (Trace, describe, drawing_groups, format_meta, format_shape, grad_stats,
                    graph_numbers)

NOTE = "padding: 4px 8px; margin: 4px 0; border-left: 4px solid {}; background: {}"
INFO, WARNING = ("#4a90d9", "#eef5fc"), ("#d98f00", "#fff6e5")
HEADING = "font-weight: bold; margin: 8px 0 2px 0"


class ContextInspector(StaticRendering, widgets.VBox):
    """The context of the Function that made a tensor (or of a graph ``Node``):
    its inputs, ``needs_input_grad``, attributes and saved tensors.

    ``ContextInspector(y)`` shows ``y.grad_fn`` (or, in lazy mode, the node that will
    compute ``y``); a leaf tensor gets a short explanation instead, and ``.node`` is None.
    ``.inspect(other)`` switches to another tensor or node; ``.refresh()`` reads the
    node again (after a backward, say).

    Ops are named as the drawings name them, numbered in their graph (``Mul #3``): the
    graph behind the node, or ``trace``'s (a GraphView passes the graph it draws)."""

    def __init__(self, tensor_or_node: Any, trace: Trace | None = None) -> None:
        self._trace = trace
        self._view = html_widget()
        refresh = widgets.Button(description="refresh", tooltip="read the context again")
        refresh.on_click(lambda _: self.refresh())
        super().__init__(children=[self._view, refresh])
        self.inspect(tensor_or_node)

    def inspect(self, tensor_or_node: Any, trace: Trace | None = None) -> None:
        """Show another tensor's Function, or another node (numbered in ``trace``, when
        given, from now on)."""
        if trace is not None:
            self._trace = trace
        if isinstance(tensor_or_node, Node):
            self.node, self.tensor = tensor_or_node, None
        elif isinstance(tensor_or_node, Tensor):
            self.node = tensor_or_node.grad_fn or pending_node(tensor_or_node)
            self.tensor = tensor_or_node
        else:
            raise TypeError("ContextInspector: expected a minigrad Tensor or a graph Node "
                            f"(tensor.grad_fn), got {type(tensor_or_node).__name__}")
        if self.node is None:
            self.numbers = {}
        elif self._trace is not None and self.node in self._trace.numbers:
            self.numbers = self._trace.numbers
        else:
            self.numbers = graph_numbers(self.node)
        self.refresh()

    def refresh(self) -> None:
        """Read the node again and redraw (its state changes with backward and realize)."""
        self._view.value = self.to_html()

    # --- the static picture -------------------------------------------------------------

    def summary(self) -> str:
        node = self.node
        if node is None:
            return f"ContextInspector(leaf {_tensor_name(self.tensor)}: no Function)"
        inputs = f"{len(node.args)} input{'s' * (len(node.args) != 1)}"
        if node.pending:
            state = "not computed yet"
        elif node.released:
            state = "saved tensors released"
        else:
            count = len(node.saved_arrays())
            state = f"{count} saved tensor{'s' * (count != 1)}"
        return f"ContextInspector({node.name} #{self.numbers[node]}: {inputs}, {state})"

    def to_html(self) -> str:
        if self.node is None:
            body = _leaf_html(self.tensor)
        else:
            node = self.node
            body = "".join([_header_html(node, self.numbers),
                            _state_html(node, self.numbers),
                            f'<div style="{HEADING}">inputs</div>',
                            _inputs_html(node, self.numbers),
                            f'<div style="{HEADING}">context attributes</div>',
                            _attributes_html(node),
                            f'<div style="{HEADING}">saved tensors (save_for_backward)</div>',
                            _saved_html(node)])
        return f'<div class="mg-inspector" style="{FONT}">{body}</div>'


# --- the parts of the page ------------------------------------------------------------------


def _header_html(node: Node, numbers: dict) -> str:
    """``Mul #3``, the maths from its docstring, its group, label and outputs."""
    lines = [f'<div style="font-size: 14px; font-weight: bold">{escape(node.name)} '
             f"#{numbers[node]}</div>"]
    doc = (node.function.__doc__ or "").strip().splitlines()
    if doc:
        lines.append(f"<div>{escape(doc[0])}</div>")
    group = drawing_groups(numbers).get(node.group, node.group)  # as the drawing names it
    details = [f"group {group}"] if group else []
    if node.label:
        details.append(f"label {node.label}")
    outputs = ", ".join(format_meta(s, d) for s, d in node.output_meta)
    details.append(f"output{'s' * (len(node.output_meta) != 1)} {outputs}")
    lines.append(f'<div style="color: #555">{escape(" | ".join(details))}</div>')
    return "".join(lines)


def _state_html(node: Node, numbers: dict) -> str:
    """Where the node stands: waiting (lazy), released, retained, or ready for backward."""
    if node.pending:
        waiting = [f"input {i} (from {_describe(pending_node(arg), numbers)})"
                   for i, arg in enumerate(node.args)
                   if isinstance(arg, Tensor) and pending_node(arg) is not None]
        text = ("Not computed yet: lazy mode recorded this op but its forward has not run, "
                "so nothing is saved yet. .realize() (or backward(), item(), numpy()) "
                "computes it.")
        if waiting:
            text += " It waits for " + ", ".join(waiting) + "."
        return _note(text, WARNING)
    if node.released:
        text = ("The saved tensors were released by backward() to free their memory (which "
                "shapes they had is not known any more). backward(retain_graph=True) keeps "
                "them, for a second backward or to look at them here.")
        if node.freed:
            text += _freed_text(node)
        return _note(text, WARNING)
    if node.retained:
        return _note("The saved tensors were retained because backward ran with "
                     "retain_graph=True: another backward() can go through this op again.",
                     INFO)
    if node.freed:
        return _note("backward() went through this op." + _freed_text(node), INFO)
    return _note("Forward has run; backward() will use what is saved here, then release it "
                 "(unless retain_graph=True).", INFO)


def _freed_text(node: Node) -> str:
    if any(arg is None and parent is not None
           for arg, (parent, _) in zip(node.args, node.next_functions)):
        return (" Its intermediate inputs (results of other ops) were let go too; their "
                "shapes below are remembered from the graph.")
    return ""


def _inputs_html(node: Node, numbers: dict) -> str:
    rows = []
    for position, arg in enumerate(node.args):
        parent, output = node.next_functions[position]
        needs = node.needs_input_grad[position]
        if isinstance(arg, Tensor) or (arg is None and parent is not None):
            shape, dtype = node.input_shape_dtype(position)
            name = arg.label if arg is not None and arg.label else ""
            requires_grad = arg.requires_grad if arg is not None else True
            rows.append([position, name, format_shape(shape), np.dtype(dtype).name,
                         requires_grad, needs, _origin(arg, parent, output, numbers)])
        else:
            rows.append([position, "", "", "", "", needs, f"constant {short_repr(arg)}"])
    header = ["#", "label", "shape", "dtype", "requires_grad", "needs_input_grad", "what it is"]
    return table_html(header, rows)


def _origin(arg: Tensor | None, parent: Node | None, output: int, numbers: dict) -> str:
    """Where an input tensor comes from: another op, a pending op, or nowhere (a leaf)."""
    if arg is not None and pending_node(arg) is not None:
        return f"intermediate, not computed yet: from {_describe(pending_node(arg), numbers)}"
    if parent is not None:
        where = f"output {output} of " if len(parent.output_meta) > 1 else ""
        gone = " (freed by backward)" if arg is None else ""
        return f"intermediate: {where}{_describe(parent, numbers)}{gone}"
    if isinstance(arg, Parameter):
        return "leaf (a Parameter)"
    return "leaf" if arg.requires_grad else "leaf (a constant: no gradient)"


def _describe(node: Node, numbers: dict) -> str:
    """``'Mul #3 (label h)'``: an op numbered in the graph shown."""
    return describe(node, numbers)


def _attributes_html(node: Node) -> str:
    if node.pending:  # forward sets them when it runs
        arguments = ", ".join(f"{k}={short_repr(v)}" for k, v in node.pending_kwargs.items())
        return ("<div>(none yet: forward sets them when it runs"
                + escape(f"; it will get {arguments}" if arguments else "") + ")</div>")
    attributes = [(name, value) for name, value in vars(node).items()
                  if not name.startswith("_") and name != "needs_input_grad"]
    if not attributes:
        return "<div>(none: this op keeps no settings on its context)</div>"
    return table_html(["ctx.", "value"], [[name, short_repr(value)] for name, value in attributes])


def _saved_html(node: Node) -> str:
    if node.pending:
        return "<div>(nothing yet: forward has not run)</div>"
    if node.released:
        return "<div>(released by backward())</div>"
    if not node.saved_arrays():
        return "<div>(none: this op's backward needs no saved arrays)</div>"
    rows = []
    for position, value in enumerate(node.saved_arrays()):
        if value is None:
            rows.append([position, "", "None", ""])
            continue
        array = np.asarray(value)
        rows.append([position, _saved_identity(node, value), Html(stats_html(array)),
                     Html(preview_html(array))])
    return table_html(["#", "is", "shape, dtype, min / max / mean", "values"], rows)


def _saved_identity(node: Node, value: Any) -> str:
    """``'input 0 (x)'`` or ``'output 0'`` when a saved array is one of those, else ''."""
    for position, arg in enumerate(node.args):
        if isinstance(arg, Tensor) and arg.is_realized \
                and same_array(value, arg.numpy(force=True)):
            return f"input {position}" + (f" ({arg.label})" if arg.label else "")
    for position, output in enumerate(node.outputs):
        if output is not None and output.is_realized \
                and same_array(value, output.numpy(force=True)):
            return f"output {position}"
    return ""


def _leaf_html(tensor: Tensor) -> str:
    name = _tensor_name(tensor)
    if tensor.grad is not None:
        grad = f"a {format_shape(tensor.grad.shape)} array, {grad_stats(tensor.grad).describe()}"
    elif tensor.requires_grad:
        grad = "None until backward() runs through a result that uses it"
    else:
        grad = "None: it does not require grad (requires_grad=False)"
    values = stats_html(tensor) if tensor.is_realized else ""
    return (f'<div style="font-size: 14px; font-weight: bold">{escape(name)}</div>'
            + _note(f"{name} is a leaf: no Function made this tensor, so there is no context "
                    f"to inspect. Its .grad is {grad}. show(tensor) gives a TensorView of its "
                    "values and gradient.", INFO)
            + values)


def _tensor_name(tensor: Tensor) -> str:
    return tensor.label or f"tensor {format_meta(tensor.shape, tensor.dtype)}"


def _note(text: str, colours: tuple[str, str]) -> str:
    return f'<div style="{NOTE.format(*colours)}">{escape(text)}</div>'
