"""TrainingMonitor: a progress bar and live curves of what the training loop logs.

    with TrainingMonitor(total=epochs * len(loader)) as monitor:
        for epoch in range(epochs):
            for xb, yb in monitor(loader):           # one step per batch
                loss = F.cross_entropy(model(xb), yb)
                ...
                monitor.log(loss=loss)               # a float or a one-element Tensor

In Jupyter the bar is tqdm's notebook widget and the curves are an SVG picture in an HTML
widget; both change in place (the picture at most every ``min_interval`` seconds, at a
``log`` or at the end of an epoch, so logging every batch and short epochs stay cheap; and
once more when the monitor is closed). In a terminal or a script, the bar is tqdm's text bar
(on stderr) showing the latest metrics, and a line per epoch is printed (on stdout) once
the epoch's metrics are in: when the next pass through ``monitor(loader)`` starts, and
when the monitor is closed.

Steps and epochs: ``total`` counts steps over the whole run (``epochs * len(loader)``),
so the bar fills once and its ETA is for the whole training. Left out, it grows as you
go: each ``monitor(loader)`` adds ``len(loader)`` when the bar would run past its end.

The saved notebook keeps a static picture that nbval can compare: the curves, the step
count and the latest value of each metric, never the rate, ETA or elapsed time. It is the
state at the moment the monitor was displayed: in a notebook the monitor shows itself
when it starts (``with``, the first step or the first ``log``), as tqdm does, unless the
notebook displayed it already, and ``close()`` updates that output with the final state,
so the saved notebook keeps the final curves. (nbval does not follow display updates: a
cell that closes a monitor it displayed itself needs ``# NBVAL_IGNORE_OUTPUT``.)
(``text=True`` in a notebook prints the rate: its output changes from run to run.)
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

import ipywidgets as widgets
import numpy as np
import tqdm.std
from matplotlib.figure import Figure

from minigrad.tensor import Tensor

from ._base import FONT, StaticRendering, escape, html_widget
from .plotting import figure_svg, style
from .trace import format_number

Item = TypeVar("Item")
CURVE_COLOUR = "#4477AA"


class TrainingMonitor(StaticRendering, widgets.VBox):
    """A progress bar (rate, ETA) plus live curves of the logged metrics.

    ``total``: steps in the whole run (default: ``len`` of what ``monitor(...)`` is
    given, growing by one pass at a time). ``metrics``: the names to plot, in this order
    (default: every metric, in the order first logged; others are still recorded and
    shown as text). ``text``: force the plain-text fallback (True) or the widget (False);
    by default the widget inside a Jupyter kernel, text elsewhere. ``min_interval``:
    seconds between redraws of the curves (at a ``log`` or an epoch's end; ``close``
    always draws the final state). ``desc``: a label before the bar.

    Read ``.n`` (steps done), ``.total``, ``.history`` (metric -> [(step, value), ...])
    and ``.latest`` (metric -> last value).

    ``log`` and ``close`` are the monitor's own, as in tqdm; they hide ipywidgets' logger
    attribute and ``Widget.close``: ``close()`` finishes the run and leaves the view on
    screen, where ``Widget.close`` would remove it."""

    def __init__(self, total: int | None = None, metrics: Sequence[str] | None = None, *,
                 text: bool | None = None, min_interval: float = 0.2,
                 desc: str | None = None) -> None:
        self.metrics = None if metrics is None else list(metrics)
        self.text = not in_kernel() if text is None else bool(text)
        self.min_interval = min_interval
        self.history: dict[str, list[tuple[int, float]]] = {}
        self._started = False  # the bar's clock starts at the first step
        self._closed = False
        self._shown = False  # has the notebook displayed this monitor yet?
        self._display = None  # the output it displayed itself in (updated on close)
        self._last_draw = -math.inf
        self._unprinted = False  # text mode: logged since the last printed line
        if self.text:
            self._bar = tqdm.std.tqdm(total=total, desc=desc, unit="step")
            super().__init__()
        else:
            from tqdm.notebook import tqdm as notebook_tqdm  # needs ipywidgets

            self._bar = notebook_tqdm(total=total, desc=desc, unit="step", display=False)
            self._status = html_widget()
            self._curves = html_widget()
            super().__init__(children=[self._bar.container, self._status, self._curves])
            self._draw()

    @property
    def n(self) -> int:
        """Steps done so far."""
        return self._bar.n

    @property
    def total(self) -> int | None:
        """Steps in the run, as far as the monitor knows (None: unknown)."""
        return self._bar.total

    # --- counting ---------------------------------------------------------------------

    def __call__(self, iterable: Iterable[Item]) -> Iterator[Item]:
        """Go through ``iterable`` (a DataLoader, a range...), one step per item. Call it
        again for the next epoch: the bar goes on from where it is."""
        if self.text:
            self._print_line()  # what the last epoch logged, its epoch-end metrics included
        try:
            length = len(iterable)  # type: ignore[arg-type]
        except TypeError:  # a generator: the bar counts without an end
            length = None
        if length is not None and (self.total is None or self.n + length > self.total):
            self._set_total(self.n + length)
        return self._steps(iterable)

    def _steps(self, iterable: Iterable[Item]) -> Iterator[Item]:
        for item in iterable:
            self.update()  # counted when handed out: log() in the body sees this step
            yield item
        if not self.text:
            self._draw_if_due()  # the end of an epoch: show where it got to (bounded
            # like log(): with short epochs, drawing at each end would cost more than them)

    def update(self, n: int = 1) -> None:
        """Advance the bar by ``n`` steps."""
        if not self._started:
            self._started = True
            self._bar.reset(total=self.total)  # restart the clock: the rate is training's
            self._show()
        self._bar.update(n)

    def _set_total(self, total: int) -> None:
        self._bar.total = total
        if not self.text:  # the notebook bar keeps its own copy (and was narrow if unknown)
            progress = self._bar.container.children[1]
            progress.max, progress.bar_style, progress.layout.width = total, "", None
        self._bar.refresh()

    # --- metrics ----------------------------------------------------------------------

    def log(self, step: int | None = None, **metrics: Any) -> None:
        """Record metrics (floats or one-element Tensors) at ``step`` (default: the steps
        done so far): ``monitor.log(loss=loss, accuracy=acc)``."""
        if not metrics:
            raise TypeError("TrainingMonitor.log: give at least one metric, "
                            "e.g. monitor.log(loss=loss)")
        step = self.n if step is None else int(step)
        values = {name: _number(name, value) for name, value in metrics.items()}
        for name, value in values.items():
            self.history.setdefault(name, []).append((step, value))
        if self.text:
            self._unprinted = True
            self._bar.set_postfix_str(self._metrics_text(), refresh=False)
        else:
            self._show()
            self._draw_if_due()

    @property
    def latest(self) -> dict[str, float]:
        """The last value logged of each metric."""
        return {name: points[-1][1] for name, points in self.history.items()}

    def close(self) -> None:
        """Finish: draw the final state (print the last line) and stop the bar."""
        if self._closed:
            return
        self._closed = True
        if self.text:
            self._print_line()
        else:
            self._draw()
            if self._display is not None:  # the saved notebook shows the final state
                self._display.update(self)
        self._bar.close()

    def __enter__(self) -> TrainingMonitor:
        self._show()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # --- rendering --------------------------------------------------------------------

    def _show(self) -> None:
        """In a notebook, display the monitor the first time it has something to show,
        as tqdm does, unless the notebook displayed it already."""
        if not self.text and not self._shown and in_kernel():
            from IPython.display import display

            self._display = display(self, display_id=True)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        self._shown = True
        return super()._repr_mimebundle_(**kwargs)

    def _draw_if_due(self) -> None:
        """Draw unless the last drawing ended less than ``min_interval`` seconds ago."""
        if time.monotonic() - self._last_draw >= self.min_interval:
            self._draw()

    def _draw(self) -> None:
        self._status.value = self._status_html()
        self._curves.value = self._curves_svg()
        # timed from the end: a drawing (~0.3 s) longer than min_interval must not make
        # the next log() draw again, which would redraw at every step
        self._last_draw = time.monotonic()

    def _print_line(self) -> None:
        if self._unprinted:
            self._unprinted = False
            self._bar.write(f"step {self._progress_text()}: {self._metrics_text()}")

    def _progress_text(self) -> str:
        return f"{self.n}" if self.total is None else f"{self.n}/{self.total}"

    def _metrics_text(self) -> str:
        return ", ".join(f"{name} {format_number(value)}" for name, value in self.latest.items())

    def _status_html(self) -> str:
        text = f"step {self._progress_text()}"
        if self.history:
            text += f": {self._metrics_text()}"
        return f'<div style="{FONT}">{escape(text)}</div>'

    def _curves_svg(self) -> str:
        names = list(self.history) if self.metrics is None else self.metrics
        return curves_chart(self.history, names) if names else ""

    def to_html(self) -> str:
        bar = ""
        if self.total:  # a drawn bar: the fraction done, nothing that depends on time
            done = min(self.n / self.total, 1.0)
            bar = ('<div style="width: 240px; height: 8px; background: #e0e0e0">'
                   f'<div style="width: {100 * done:.1f}%; height: 100%; '
                   f'background: {CURVE_COLOUR}"></div></div>')
        return f"<div>{bar}{self._status_html()}{self._curves_svg()}</div>"

    def summary(self) -> str:
        parts = [f"{self._progress_text()} steps"]
        parts += [f"{name} {format_number(value)}" for name, value in self.latest.items()]
        return f"TrainingMonitor({', '.join(parts)})"


def in_kernel() -> bool:
    """Are we running inside a Jupyter kernel (not a terminal, not plain IPython)?"""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _number(name: str, value: Any) -> float:
    if isinstance(value, Tensor):
        return float(value.item())
    array = np.asarray(value)
    if array.size != 1 or array.dtype.kind not in "biuf":
        raise TypeError(f"TrainingMonitor.log: {name} must be a number or a one-element "
                        f"Tensor, got {type(value).__name__} {value!r:.60}")
    return float(array.item())


# --- the picture ------------------------------------------------------------------------------

WIDTH = 6.4  # inches


def curves_chart(history: dict[str, list[tuple[int, float]]], names: list[str]) -> str:
    """One small plot per metric (value against step), three to a row, as SVG."""
    columns = min(len(names), 3)
    rows = math.ceil(len(names) / columns)
    left, right, gap = 0.55, 0.15, 0.65  # inches: room for the tick labels
    top, bottom, row_gap, plot_height = 0.25, 0.4, 0.55, 1.3
    plot_width = (WIDTH - left - right - gap * (columns - 1)) / columns
    height = top + rows * plot_height + (rows - 1) * row_gap + bottom
    with style():
        fig = Figure(figsize=(WIDTH, height))
        for index, name in enumerate(names):
            row, column = divmod(index, columns)
            x = left + column * (plot_width + gap)
            y = height - top - (row + 1) * plot_height - row * row_gap
            ax = fig.add_axes((x / WIDTH, y / height, plot_width / WIDTH,
                               plot_height / height))
            points = history.get(name, [])
            ax.set_title(name, loc="left")
            if not points:
                ax.text(0.5, 0.5, "not logged yet", transform=ax.transAxes,
                        ha="center", va="center", color="#666")
                continue
            steps, values = zip(*points)
            ax.plot(steps, values, color=CURVE_COLOUR, linewidth=1,
                    marker="o" if len(points) <= 30 else None, markersize=2)
            ax.set_title(format_number(values[-1]), loc="right")
            ax.set_xlabel("step", labelpad=1)
        return figure_svg(fig)
