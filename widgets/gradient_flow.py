"""GradientFlow: how big is each parameter's gradient, and is it healthy?

Call ``flow.update()`` after ``loss.backward()``, before or after ``optimizer.step()``
(which leaves ``.grad`` alone) but before the next ``zero_grad()``: it reads every
parameter's ``.grad``, keeps its L2 norm in ``flow.history``, and the two pictures show:

- a horizontal bar per parameter (or per layer), on a log scale, coloured by how
  ``grad_stats`` judges it: the same thresholds (``VANISHING``, ``EXPLODING``) as
  every other view of gradients;
- once there are two updates or more, the norms over the updates, one line each.

A line under the pictures names what vanished, exploded or turned NaN at the latest
update. Recording an update costs a fraction of a millisecond (a sum of squares per
parameter); drawing costs about a hundred, so the pictures are drawn only when they can be
seen: in a notebook, at most once every ``min_interval`` seconds while a loop runs, and
once more when the cell ends; elsewhere, when ``to_html()`` is asked for. So updating at
every step of a loop is fine (``python -m bench gradient_flow`` measures both costs).

    flow = GradientFlow(model)
    flow                       # show it, then train
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        flow.update()
        optimizer.step()
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterable, Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib import ticker
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from minigrad.nn import Module
from minigrad.tensor import Tensor

from ._base import FONT, StaticRendering, escape, html_widget
from .monitor import in_kernel
from .plotting import figure_svg, style, text_width
from .trace import EXPLODING, VANISHING, GradStats, format_number, grad_stats

# Bar colours by status (colour-blind safe): healthy, too small, too big or broken.
OK_COLOUR = "#4477AA"
SMALL_COLOUR = "#DDAA33"
LARGE_COLOUR = "#CC3311"
COLOURS = {"ok": OK_COLOUR, "zero": SMALL_COLOUR, "vanishing": SMALL_COLOUR,
           "exploding": LARGE_COLOUR, "nonfinite": LARGE_COLOUR}
# How a warning names each status.
WARNING_WORDS = {"zero": "zero", "vanishing": "vanishing", "exploding": "exploding",
                 "nonfinite": "non-finite"}
TOP_LEVEL = "(model)"  # the layer name of parameters that belong to the model itself


class GradientFlow(StaticRendering, widgets.VBox):
    """Gradient norms of a model's parameters, as bars, updated after each backward.

    ``model``: a Module, or (name, tensor) pairs such as ``model.named_parameters()``.
    ``per="layer"`` draws one bar per module instead (``"0"``, ``"encoder.1"``): the norm
    of all its parameters' gradients together.

    After each ``update()``: ``.stats`` (name -> ``GradStats``, None where there is no
    grad), ``.history`` (name -> one norm per update, NaN where there was no grad or it
    held NaN/Inf), ``.steps`` (updates so far) and ``.warnings``. ``min_interval``: the
    least time, in seconds, between two drawings of the live view during a loop (from the
    end of one to the start of the next, and at least four times what a drawing takes; 0:
    every update)."""

    def __init__(self, model: Module | Iterable[tuple[str, Tensor]],
                 per: str = "parameter", min_interval: float = 1.0) -> None:
        if per not in ("parameter", "layer"):
            raise ValueError(f"GradientFlow: per must be 'parameter' or 'layer', got {per!r}")
        self.per = per
        self.min_interval = float(min_interval)
        self._drawn_steps, self._drawn_at, self._catch_up_queued = -1, -math.inf, False
        self._drawing_took = 0.0  # seconds, the last drawing
        # bar name -> the tensors it measures, in named_parameters() order
        self.groups: dict[str, list[Tensor]] = {}
        for name, tensor in _named_tensors(model):
            key = name if per == "parameter" else layer_of(name)
            self.groups.setdefault(key, []).append(tensor)
        if not self.groups:
            raise ValueError("GradientFlow: the model has no parameters to watch")
        self.names = list(self.groups)
        self.stats: dict[str, GradStats | None] = dict.fromkeys(self.names)  # latest
        self.history: dict[str, list[float]] = {name: [] for name in self.names}
        self.steps = 0
        self._bars = html_widget()
        self._trend = html_widget()
        self._warning_line = html_widget()
        super().__init__(children=[self._bars, self._trend, self._warning_line])
        if any(t.grad is not None for group in self.groups.values() for t in group):
            self.update()  # made after a backward: show the gradients already there
        else:
            self._redraw()

    def update(self) -> None:
        """Read every ``.grad`` now and record the norms; the pictures follow (see the
        module's docstring for when)."""
        for name, tensors in self.groups.items():
            grads = [t.grad.numpy() for t in tensors if t.grad is not None]
            stats = group_stats(grads) if grads else None
            self.stats[name] = stats
            self.history[name].append(math.nan if stats is None else stats.norm)
        self.steps += 1
        if in_kernel():  # a live view may be on screen
            # the gap counts from the end of the last drawing, and is at least four times
            # what that drawing took: on a loaded machine one drawing took as long as the
            # interval (281 ms against 70 ms quiet, more under a heavier load), and the
            # loop redrew at almost every step (117 drawings in 300 steps of chapter 9);
            # min_interval=0 asks for every update
            gap = max(self.min_interval, 4 * self._drawing_took) if self.min_interval else 0
            if time.monotonic() - self._drawn_at >= gap:
                self._redraw()
            else:
                self._catch_up_when_the_cell_ends()

    def _catch_up_when_the_cell_ends(self) -> None:
        """The kernel's event loop runs callbacks only between cells: so the live view
        shows the last update once the training cell is done."""
        if self._catch_up_queued:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._catch_up_queued = True
        loop.call_soon(self._catch_up)

    def _catch_up(self) -> None:
        self._catch_up_queued = False
        if self._drawn_steps != self.steps:
            self._redraw()

    @property
    def warnings(self) -> list[str]:
        """What was wrong at the latest update, one line per parameter (or layer):
        ``'vanishing: 0.weight (norm 3e-09)'``."""
        lines = []
        for name, stats in self.stats.items():
            if stats is not None and stats.status != "ok":
                detail = "all zeros" if stats.status == "zero" else stats.describe()
                lines.append(f"{WARNING_WORDS[stats.status]}: {name} ({detail})")
        return lines

    # --- rendering --------------------------------------------------------------------

    def _redraw(self) -> None:
        started = time.monotonic()
        self._drawn_steps = self.steps
        self._bars.value = bar_chart(self.names, self.stats, self.per, self.steps)
        self._trend.value = history_chart(self.history) if self.steps >= 2 else ""
        self._warning_line.value = self._warning_html()
        self._drawn_at = time.monotonic()
        self._drawing_took = self._drawn_at - started

    def _warning_html(self) -> str:
        if self.steps == 0:
            text, colour = "no gradients yet: call .update() after loss.backward()", "#666"
        elif self.warnings:
            text, colour = "; ".join(self.warnings), LARGE_COLOUR
        else:
            text, colour = f"no vanishing or exploding gradients at update {self.steps}", "#666"
        return f'<div style="{FONT}; color: {colour}">{escape(text)}</div>'

    def to_html(self) -> str:
        self._catch_up()
        return f"<div>{self._bars.value}{self._trend.value}{self._warning_line.value}</div>"

    def summary(self) -> str:
        count = len(self.names)
        things = f"{self.per}{'s' * (count != 1)}"
        return (f"GradientFlow({count} {things}, "
                f"{self.steps} update{'s' * (self.steps != 1)})")


def group_stats(arrays: list[np.ndarray]) -> GradStats:
    """``grad_stats`` of the arrays taken together, without joining them: one sum of
    squares and the extremes per array, no copy (this runs at every step of a loop).
    Anything unusual (NaN or Inf, integers, no numbers at
    all) goes to ``grad_stats``, which is exact but slower."""
    squares, max_abs, size = 0.0, 0.0, 0
    for array in arrays:
        flat = array.ravel()
        # summed in float64 (no copy): float32 sums would change the drawings' last digits
        # from one machine to the next
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow: Inf, handled below
            square = float(np.einsum("i,i->", flat, flat, dtype=np.float64)) \
                if flat.dtype.kind == "f" and flat.size else math.nan
        if not math.isfinite(square):  # a finite sum of squares: every element is finite
            return grad_stats(np.concatenate([a.ravel() for a in arrays]))
        squares += square
        max_abs = max(max_abs, float(flat.max()), -float(flat.min()))
        size += flat.size
    return GradStats((size,), math.sqrt(squares), max_abs, False, False)


def layer_of(name: str) -> str:
    """The module a parameter belongs to: ``'encoder.1.weight'`` -> ``'encoder.1'``."""
    return name.rpartition(".")[0] or TOP_LEVEL


def _named_tensors(model: Any) -> list[tuple[str, Tensor]]:
    if isinstance(model, Module):
        return list(model.named_parameters())
    if isinstance(model, Mapping):
        model = model.items()
    if isinstance(model, (Tensor, str, bytes)) or not hasattr(model, "__iter__"):
        raise TypeError(f"GradientFlow: expected a Module (or its named_parameters()), got "
                        f"{type(model).__name__}")
    pairs = list(model)
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Tensor)):
            raise TypeError("GradientFlow: expected a Module or (name, tensor) pairs such as "
                            f"model.named_parameters(), got an item {pair!r}")
    return [(str(name), tensor) for name, tensor in pairs]


# --- the pictures ---------------------------------------------------------------------------
# Margins are measured from the labels rather than left to matplotlib's layout engine,
# which would draw each figure twice: drawing is most of what update() costs.

WIDTH = 6.4  # inches, both pictures
ROW = 0.22  # inches per bar


def bar_chart(names: list[str], stats: dict[str, GradStats | None], per: str,
              steps: int) -> str:
    """One horizontal bar per name (the first at the top), log scale, as SVG."""
    positive = [s.norm for s in stats.values() if s is not None and s.status
                not in ("zero", "nonfinite")]
    low = min([VANISHING / 10, *(norm / 3 for norm in positive)])
    high = max([EXPLODING * 10, *(norm * 3 for norm in positive)])
    values = [_value_label(stats[name]) for name in names]
    left = max(text_width(name) for name in names) + 0.15
    right = max(text_width(value) for value in values) + 0.15
    top, bottom = 0.3, 0.6  # the title; the tick labels and the legend
    height = top + ROW * len(names) + bottom
    with style():
        fig = Figure(figsize=(WIDTH, height))
        ax = fig.add_axes((left / WIDTH, bottom / height, 1 - (left + right) / WIDTH,
                           ROW * len(names) / height))
        for row, name in enumerate(names):
            s = stats[name]
            if s is None or s.status == "zero":
                continue  # nothing to draw: the label on the right says why
            if s.status == "nonfinite":  # no length to show: the whole row, hatched
                ax.barh(row, high - low, left=low, height=0.7, color=COLOURS[s.status],
                        hatch="///", edgecolor="white", linewidth=0)
            else:
                ax.barh(row, s.norm - low, left=low, height=0.7, color=COLOURS[s.status])
        for threshold, colour in ((VANISHING, SMALL_COLOUR), (EXPLODING, LARGE_COLOUR)):
            ax.axvline(threshold, color=colour, linestyle="--", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, numticks=8))
        ax.xaxis.set_minor_locator(ticker.NullLocator())  # a tick per decade is plenty
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(_power_of_ten))
        ax.set_yticks(range(len(names)), labels=names)
        ax.set_ylim(len(names) - 0.5, -0.5)  # the first parameter at the top
        for row, value in enumerate(values):  # the numbers, in a column on the right
            ax.text(1.02, row, value, transform=ax.get_yaxis_transform(), va="center")
        ax.set_title(f"gradient norm per {per}, update {steps}", loc="left")
        fig.legend(handles=[
            Patch(color=OK_COLOUR, label="ok"),
            Patch(color=SMALL_COLOUR, label=f"zero / vanishing (< {VANISHING:g})"),
            Patch(color=LARGE_COLOUR, label=f"exploding (> {EXPLODING:g}) / NaN / Inf"),
        ], loc="lower center", ncols=3, frameon=False, borderaxespad=0.2)
        return figure_svg(fig)


def history_chart(history: dict[str, list[float]]) -> str:
    """The norms over the updates, one line per name, log scale, as SVG."""
    columns = math.ceil(len(history) / 12)
    legend = columns * (max(text_width(name, 7) for name in history) + 0.55)
    left, right, top, bottom, plot_height = 0.6, legend + 0.1, 0.3, 0.45, 1.5
    height = top + plot_height + bottom
    with style():
        fig = Figure(figsize=(WIDTH, height))
        ax = fig.add_axes((left / WIDTH, bottom / height, 1 - (left + right) / WIDTH,
                           plot_height / height))
        plotted = False
        for name, norms in history.items():
            values = np.array(norms, dtype=np.float64)
            values[~(values > 0)] = np.nan  # zero or no grad: a gap (log scale)
            plotted |= bool(np.isfinite(values).any())
            ax.plot(np.arange(1, len(values) + 1), values, label=name, linewidth=1,
                    marker="o" if len(values) <= 20 else None, markersize=2)
        if plotted:  # a log scale with nothing positive on it would warn
            ax.set_yscale("log")
            # plain labels ("0.2", "1e-05"), on the minor ticks too when the range is narrow
            ax.yaxis.set_minor_locator(ticker.LogLocator(base=10, subs=(2.0, 5.0)))
            ax.yaxis.set_major_formatter(ticker.LogFormatter())
            ax.yaxis.set_minor_formatter(ticker.LogFormatter(minor_thresholds=(1, 0.5)))
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.set_xlabel("update", labelpad=1)
        ax.set_title("gradient norm over updates", loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), ncols=columns, frameon=False,
                  fontsize=7, borderaxespad=0)  # to the right of the plot
        return figure_svg(fig)


def _value_label(stats: GradStats | None) -> str:
    if stats is None:
        return "no grad"
    if stats.nan or stats.inf:
        return "NaN!" if stats.nan else "Inf!"
    return "zero" if stats.status == "zero" else format_number(stats.norm)


def _power_of_ten(value: float, _position: Any) -> str:
    """Tick label for a power of ten: ``1e-8``, ``1``, ``1e3``."""
    exponent = round(math.log10(value))
    return "1" if exponent == 0 else f"1e{exponent}"
