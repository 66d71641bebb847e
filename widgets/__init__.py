"""minigrad.widgets: the Jupyter layer (installed from the top-level ``widgets/`` folder).

It depends on the engine; the engine never imports it. The widgets themselves
(ContextInspector, GraphView, BackwardStepper, GradientFlow, TrainingMonitor, TensorView,
show) arrive with their own issue; this package is here so that the layout and the
install mapping are in place from the start.
"""

__all__: list[str] = []
