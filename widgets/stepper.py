"""BackwardStepper: the backward pass, one node at a time.

It drives the engine's own backward iterator, ``mg.backward_steps(loss,
retain_graph=True)`` (the same code ``loss.backward()`` runs to the end), and shows
at each step the node being run (highlighted in the drawing), the gradient that arrived
at it (summed, when its output fed several ops) and the gradients it sends to its
inputs; gradients reaching a leaf are accumulated into its ``.grad`` as they arrive,
exactly as ``backward()`` does.

    stepper = BackwardStepper(loss)
    stepper.step()      # one node
    stepper.back()      # one node back: replays the pass from the start
    stepper.run()       # to the end: every leaf's .grad is what loss.backward() gives
    stepper.reset()     # leaves' .grad as they were before the first step
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

import minigrad as mg
from minigrad.autograd import BackwardStep, backward_order, pending_node
from minigrad.tensor import Tensor

from ._base import FONT, StaticRendering, escape, html_widget
from .canvas import SvgCanvas
from .drawing import MAX_NODES, legend_html
from .layout import draw
from .trace import Trace, grad_stats


class BackwardStepper(StaticRendering, widgets.VBox):
    """Step through the backward pass from ``loss`` (a one-element tensor, or any
    tensor with ``gradient=`` as in ``backward``). Buttons Reset / Back / Step / Run and
    a position slider call ``reset()``, ``back()``, ``step()``, ``run()`` and
    ``go_to(position)``."""

    def __init__(self, loss: Tensor, gradient: Any = None, names: Any = None,
                 collapse_groups: Any = False, max_nodes: int = MAX_NODES,
                 backend: str = "auto") -> None:
        if not isinstance(loss, Tensor):
            raise TypeError(f"BackwardStepper: expected a minigrad Tensor, got "
                            f"{type(loss).__name__}")
        if loss.grad_fn is None and pending_node(loss) is None:
            raise ValueError("BackwardStepper: this tensor has no graph (it is a leaf, made by "
                             "no Function): there is no backward pass to step through.")
        if gradient is None and loss.numel() != 1:
            raise ValueError(
                f"BackwardStepper: the tensor has shape {loss.shape}, not one element: is it "
                "the model's output (logits) rather than the loss? Step from the loss (e.g. "
                "F.cross_entropy(logits, target)), or pass gradient= a tensor of shape "
                f"{loss.shape}, as loss.backward(gradient) needs.")
        self.loss, self.gradient = loss, gradient
        self._error: Exception | None = None  # a failed step: every later move says so
        self.collapse_groups, self.max_nodes, self.backend = collapse_groups, max_nodes, backend
        if not loss.is_realized:
            loss.realize()  # the backward pass needs the forward's values
        self.trace = Trace.of(loss, names)
        if self.trace.freed:
            raise RuntimeError(
                "BackwardStepper: the graph behind this tensor was already freed by a "
                "backward() (its saved tensors are gone). Build the loss again, or call that "
                "backward(retain_graph=True) to keep the graph.")
        self.total = len(backward_order(loss.grad_fn))  # at most; exact once the pass ends
        # every leaf that can receive a gradient, and its .grad before the first step
        self._leaves = [v for v in self.trace.leaves if v.tensor.requires_grad]
        self._initial = {v.key: None if v.tensor.grad is None else v.tensor.grad.numpy().copy()
                         for v in self._leaves}
        self.steps: list[BackwardStep] = []
        self._iterator = None
        self._finished = False
        self._moving_slider = False  # _show moves the slider: that is not a user's move

        buttons = [("Reset", self.reset), ("Back", self.back), ("Step", self.step),
                   ("Run", self.run)]
        self.buttons = {}
        for text, action in buttons:
            button = widgets.Button(description=text, layout=widgets.Layout(width="70px"))
            button.on_click(lambda _, action=action: action())
            self.buttons[text] = button
        self.slider = widgets.IntSlider(value=0, min=0, max=self.total, description="step",
                                        continuous_update=False)
        self.slider.observe(self._on_slider, names="value")
        self.status = html_widget()
        self.canvas = SvgCanvas()
        self.detail = html_widget()
        self.legend = html_widget(legend_html(False))
        super().__init__(children=[widgets.HBox(list(self.buttons.values()) + [self.slider]),
                                   self.status, self.canvas, self.legend, self.detail])
        self.reset()

    # --- the steps ------------------------------------------------------------------

    @property
    def position(self) -> int:
        """How many nodes have run their backward."""
        return len(self.steps)

    @property
    def done(self) -> bool:
        """Has the whole pass run?"""
        return self._finished

    @property
    def current(self) -> BackwardStep | None:
        """The step shown: the last one run (None before the first)."""
        return self.steps[-1] if self.steps else None

    def step(self) -> BackwardStep | None:
        """Run the next node's backward; returns its step (None when the pass is over)."""
        step = self._advance()
        self._show()
        return step

    def back(self) -> None:
        """One step back: reset, then replay the pass up to the step before."""
        self.go_to(self.position - 1)

    def run(self) -> None:
        """Run the rest of the pass."""
        while self._advance() is not None:
            pass
        self._show()

    def reset(self) -> None:
        """Back to the start: a fresh pass, and every leaf's .grad as it was before."""
        for vertex in self._leaves:
            initial = self._initial[vertex.key]
            vertex.tensor.grad = None if initial is None else Tensor(initial)  # (a copy)
        self.steps = []
        self._finished = False
        self._error = None
        self._iterator = mg.backward_steps(self.loss, self.gradient, retain_graph=True)
        self._show()

    def go_to(self, position: int) -> None:
        """Show the pass after ``position`` steps (replaying from the start to go back)."""
        position = max(0, int(position))
        if position < self.position:
            self.reset()
        while self.position < position and self._advance() is not None:
            pass
        self._show()

    # --- views -----------------------------------------------------------------------

    def summary(self) -> str:
        step = self.current
        where = f", at {self.trace.vertex(step.node).title}" if step is not None else ""
        state = "done" if self.done else f"step {self.position} of {self.total}"
        return f"BackwardStepper({state}{where})"

    def to_html(self) -> str:
        return (f'<div class="mg_stepper" style="{FONT}">{self.status.value}'
                f'<div class="mg_graph">{self.canvas.svg}</div>{self.legend.value}'
                f"{self.detail.value}</div>")

    # --- inside -------------------------------------------------------------------------

    def _advance(self) -> BackwardStep | None:
        if self._error is not None:
            raise RuntimeError(f"BackwardStepper: the backward pass failed at step "
                               f"{self.position + 1}, so it cannot go on: "
                               f"{self._error}") from self._error
        if self._finished:
            return None
        try:
            step = next(self._iterator)
        except StopIteration:
            self._finished = True
            self.total = self.position
            return None
        except Exception as error:
            self._error = error
            self.status.value = self._status_html()
            raise
        self.steps.append(step)
        if self.position == self.total:  # every node of the graph ran: let the pass end
            self._finished = next(self._iterator, None) is None
        return step

    def _show(self) -> None:
        current = self.current
        done = {self.trace.key_of(s.node) for s in self.steps[:-1]}
        if self._finished and current is not None:
            done.add(self.trace.key_of(current.node))
            current = None
        self._mark_travelled_edges()
        drawing = draw(self.trace, self.collapse_groups,
                       current=None if current is None else self.trace.key_of(current.node),
                       done=done, max_nodes=self.max_nodes, backend=self.backend)
        self.canvas.svg = drawing.svg
        self.slider.max = max(self.total, 1)
        with self.slider.hold_trait_notifications():
            self._moving_slider = True
            self.slider.value = self.position
            self._moving_slider = False
        self.buttons["Back"].disabled = self.buttons["Reset"].disabled = self.position == 0
        self.buttons["Step"].disabled = self.buttons["Run"].disabled = self._finished
        self.status.value = self._status_html()
        self.detail.value = self._detail_html()

    def _mark_travelled_edges(self) -> None:
        """The edges a gradient has travelled back along so far carry it (the drawing
        colours and thickens them by its norm); the others carry none yet."""
        for edge in self.trace.edges:
            edge.grad = None
        for step in self.steps:
            for position, grad in enumerate(step.grad_inputs):
                edge = self.trace.edge(self.trace.key_of(step.node), position)
                if grad is not None and edge is not None:
                    edge.grad = grad_stats(grad)
        self.legend.value = legend_html(self.trace.recorded)

    def _on_slider(self, change: dict) -> None:
        if not self._moving_slider and change["new"] != self.position:
            self.go_to(change["new"])

    def _status_html(self) -> str:
        if self._error is not None:
            text = (f"Backward failed at step {self.position + 1}: "
                    f"{escape(str(self._error))}")
        elif self._finished:
            text = (f"Backward done: {self.position} node{'s' * (self.position != 1)} ran; every "
                    "leaf's <code>.grad</code> is what <code>loss.backward()</code> gives.")
        elif not self.steps:
            text = (f"Ready: {self.total} node{'s' * (self.total != 1)} to run, newest first. "
                    "Press Step.")
        else:
            node = self.current.node
            text = (f"Step {self.position} of {self.total}: "
                    f"<b>{escape(self.trace.describe(node))}</b> "
                    "ran its backward.")
        return f'<div class="mg_step_status" style="margin:4px 0">{text}</div>'

    def _detail_html(self) -> str:
        from .render import preview_html, stats_html

        step = self.current
        if step is None:
            return '<div class="mg_step_info"></div>'
        node = step.node
        key = self.trace.key_of(node)
        parts = [f"<h4 style='margin:6px 0'>{escape(self.trace.describe(node))}</h4>"]
        # what arrived: from which ops, and their sum
        senders = self._senders(key)
        for index, grad in enumerate(step.grad_outputs):
            title = "gradient arriving" + (f" at output {index}" if len(step.grad_outputs) > 1
                                           else "")
            if grad is None:
                parts.append(f"<p><b>{title}</b>: none (this output was not used)</p>")
                continue
            sources = senders.get(index, [])
            if len(sources) > 1:
                title += (f" (accumulated: the sum of {len(sources)} gradients, from "
                          + ", ".join(escape(s) for s in sources) + ")")
            elif sources:
                title += f" (from {escape(sources[0])})"
            elif node.outputs[index] is self.loss:
                title += " (the seed: d loss / d loss = 1)" if self.gradient is None else \
                    " (the seed: the gradient= you passed)"
            parts.append(f"<p><b>{title}</b><br>{stats_html(grad)}</p>{preview_html(grad)}")
        # what it sends to each input
        for position, grad in enumerate(step.grad_inputs):
            target = self._input_name(node, position)
            if grad is None:
                parts.append(f"<p><b>to input {position}</b> ({escape(target)}): no gradient "
                             "(it does not require grad)</p>")
                continue
            extra = ""
            parent = node.next_functions[position][0]
            if parent is None:  # a leaf: accumulated into .grad now
                leaf = node.args[position]
                count = self._leaf_contributions(leaf)
                stats = grad_stats(leaf.grad)
                extra = (f"<br>accumulated into <code>{escape(target)}.grad</code>"
                         + (f" (contribution {count}: summed with the earlier ones)"
                            if count > 1 else "") + f", now {stats.describe()}")
            parts.append(f"<p><b>to input {position}</b> ({escape(target)}): "
                         f"{stats_html(grad)}{extra}</p>{preview_html(grad)}")
        return f'<div class="mg_step_info">{"".join(parts)}</div>'

    def _senders(self, key: str) -> dict[int, list[str]]:
        """For each output of the node ``key``: the earlier steps that sent it a gradient."""
        senders: dict[int, list[str]] = {}
        for step in self.steps[:-1]:
            for position, grad in enumerate(step.grad_inputs):
                parent, index = step.node.next_functions[position]
                if grad is not None and parent is not None and self.trace.key_of(parent) == key:
                    senders.setdefault(index, []).append(
                        f"{self.trace.vertex(step.node).title} (its input {position})")
        return senders

    def _leaf_contributions(self, leaf: Tensor) -> int:
        return sum(1 for step in self.steps
                   for position, grad in enumerate(step.grad_inputs)
                   if grad is not None and step.node.next_functions[position][0] is None
                   and step.node.args[position] is leaf)

    def _input_name(self, node, position: int) -> str:
        parent = node.next_functions[position][0]
        if parent is not None:
            return self.trace.describe(parent)
        arg = node.args[position]
        if isinstance(arg, Tensor):
            return self.trace.vertex(arg).title
        return "a constant"

