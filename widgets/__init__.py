"""minigrad.widgets: the Jupyter layer (installed from the top-level ``widgets/`` folder).

Views that show, inline in a notebook, what the engine does:

- ``ContextInspector(t)``: what a Function's context holds (inputs, needs_input_grad,
  attributes, saved tensors) and whether backward released it.
- ``GraphView(loss)``: the computation graph, gradients on its edges after backward, and
  the selected node's inspector.
- ``BackwardStepper(loss)``: the backward pass one node at a time.
- ``GradientFlow(model)``: gradient norms per parameter, over training.
- ``TrainingMonitor(total)``: a progress bar and live metric curves.
- ``TensorView(t)``: values and gradient as heatmaps.
- ``show(obj)``: the fitting view for a tensor, a graph node or a module.

Every view is an ipywidgets widget that also leaves a static HTML/SVG picture in a saved
notebook. It depends on the engine; the engine never imports it.
"""

from importlib import import_module
from typing import Any

# Each view is imported when first used, so ``import minigrad.widgets`` stays light (no
# matplotlib or tqdm until a GradientFlow or TrainingMonitor is made).
_WHERE = {"BackwardStepper": "stepper", "ContextInspector": "inspector",
          "GradientFlow": "gradient_flow", "GraphView": "graph_view", "Message": "showing",
          "TensorView": "tensor_view", "Trace": "trace", "TrainingMonitor": "monitor",
          "show": "showing"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'minigrad.widgets' has no attribute {name!r}")
    value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value  # next time, found directly
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
