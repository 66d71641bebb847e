"""Matplotlib figures as inline SVG that is byte-identical on every run.

A widget's static picture is compared by nbval, so a plot must come out the same from
run to run and from process to process. Three things would change otherwise: the date
and the creator written into the SVG, the random ids of clip paths (fixed by a hash salt)
and the user's own matplotlib settings (the figure is built under matplotlib's defaults
plus ``STYLE``). Figures are made with ``matplotlib.figure.Figure``, never with pyplot:
nothing pops up, nothing is printed, and no global list of open figures grows.

    with plotting.style():
        fig = Figure(figsize=(4, 2))
        fig.add_subplot().plot([1, 2, 3])
        svg = figure_svg(fig)
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import matplotlib
import matplotlib.style
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import text_to_path

# Read by the SVG writer when a figure is saved.
SVG_SETTINGS = {
    "svg.fonttype": "none",  # text stays text: smaller, searchable, selectable
    "svg.hashsalt": "minigrad",  # ids of clip paths etc. from the content, not at random
    "svg.id": None,
}

FONT = "DejaVu Sans"  # ships with matplotlib: the same text metrics everywhere
FONT_SIZE = 8

# Read while a figure is built (fonts, sizes, colours): matplotlib's defaults plus these.
STYLE = {
    **SVG_SETTINGS,
    "font.family": FONT,
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE + 1,
    "axes.formatter.use_mathtext": False,  # plain "1e-08" labels: no TeX parsing (slow)
    "axes.unicode_minus": False,  # "1e-05" as typed, not with a typographic minus
    "text.usetex": False,
}


@contextmanager
def style() -> Iterator[None]:
    """Build figures inside this block: they ignore the user's matplotlib settings
    (``plt.style.use(...)``, a matplotlibrc) and look the same on every machine."""
    with matplotlib.style.context(["default", STYLE]):
        yield


def figure_svg(fig: Figure) -> str:
    """``fig`` as an ``<svg>`` element to put inline in HTML (no XML prolog, no doctype),
    the same bytes on every run; the figure is closed afterwards."""
    buffer = io.StringIO()
    with matplotlib.rc_context(SVG_SETTINGS):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    _close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg"):].strip()


def _close(fig: Figure) -> None:
    # A Figure made directly is not registered anywhere; one made with pyplot is, so let
    # pyplot forget it (only if the user imported pyplot: importing it here would pick a
    # backend and hook into the notebook).
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(fig)
    fig.clear()


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """The width of ``text`` in inches, in the house font: to leave room for labels
    without asking matplotlib to lay the figure out (which costs a second drawing)."""
    width, _height, _descent = text_to_path.get_text_width_height_descent(
        text, FontProperties(family=FONT, size=size), ismath=False)
    return width / 72
