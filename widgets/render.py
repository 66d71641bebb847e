"""Small HTML and SVG pictures of arrays, shared by every widget.

Three ways to look at an array, from the cheapest to the richest:

- ``stats_html``: one line (shape, dtype, min / max / mean, NaN and Inf counts);
- ``preview_html``: the numbers themselves when there are few, a heatmap otherwise;
- ``heatmap_svg``: every value as a coloured cell, blue for negative, white for zero, red
  for positive, so that the sign and the size of thousands of numbers show at a glance.

Everything here is deterministic (the same array gives the same bytes: no random ids, no
timestamps), because saved notebooks are compared by nbval, and styled inline, because
GitHub keeps inline styles but drops ``<style>`` blocks.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from minigrad.tensor import Tensor

from ._base import FONT, escape
from .trace import format_number, format_meta, format_shape

# The diverging colour map: white at 0, these at -scale and +scale.
NEGATIVE = (33, 102, 172)
POSITIVE = (178, 24, 43)
NAN_COLOUR = "#ffd400"  # neither blue, white nor red: a NaN must stand out
INF_COLOUR = "#000000"
ALERT = "color: #c00000; font-weight: bold"
LEVELS = 16  # colour steps per sign: cells of one colour are drawn as one SVG path
HEATMAP_WIDTH = 288  # pixels the grid aims for when no cell size is given
CHAR_WIDTH = 6.6  # an 11px monospace character, to size the SVG around its text
MAX_SLICES = 4  # how many 2-d slices of a small >2-d array preview_html lists

TABLE = f"border-collapse: collapse; {FONT}; margin: 2px 0"
CELL = "border: 1px solid #ccc; padding: 1px 6px; text-align: left; vertical-align: top"
NUMBER = "border: 1px solid #ddd; padding: 1px 5px; text-align: right"


class Html(str):
    """Text that is already HTML: ``table_html`` puts it into a cell as it is."""


# --- one line of statistics ---------------------------------------------------------------


def stats_html(array: Any) -> str:
    """One line: shape, dtype, min / max / mean, and NaN / Inf counts (in red)."""
    parts = [escape(text) if not alert else f'<span style="{ALERT}">{escape(text)}</span>'
             for text, alert in _stats_parts(_to_array(array))]
    return f'<span style="{FONT}">' + " &middot; ".join(parts) + "</span>"


def stats_text(array: Any) -> str:
    """The same line as ``stats_html``, as plain text (for tooltips)."""
    return ", ".join(text for text, _ in _stats_parts(_to_array(array)))


def _stats_parts(array: np.ndarray) -> list[tuple[str, bool]]:
    """``(text, alert)`` pairs: alert marks the NaN and Inf counts."""
    parts = [(format_meta(array.shape, array.dtype), False)]
    if array.size == 0:
        return parts + [("empty", False)]
    values = _as_float(array)
    finite = values[np.isfinite(values)]
    if finite.size:
        parts += [(f"min {_number_text(finite.min(), array.dtype)}", False),
                  (f"max {_number_text(finite.max(), array.dtype)}", False),
                  (f"mean {format_number(float(finite.mean()))}", False)]
    nan, inf = int(np.isnan(values).sum()), int(np.isinf(values).sum())
    if nan:
        parts.append((f"{nan} NaN", True))
    if inf:
        parts.append((f"{inf} Inf", True))
    return parts


# --- the numbers, or a heatmap ------------------------------------------------------------


def preview_html(array: Any, max_numbers: int = 36) -> str:
    """The numbers as a table when there are at most ``max_numbers`` of them, otherwise
    ``heatmap_svg``. A small >2-d array shows its last two dims, slice by slice."""
    array = _to_array(array)
    if array.size > max_numbers:
        return heatmap_svg(array)
    if array.size == 0:
        return f'<div style="{FONT}">(empty: shape {format_shape(array.shape)})</div>'
    if array.ndim <= 2:
        return _number_table(array)
    leading = list(np.ndindex(*array.shape[:-2]))
    pieces = []
    for index in leading[:MAX_SLICES]:
        where = "[" + ", ".join([str(i) for i in index] + [":", ":"]) + "]"
        pieces.append(f'<div style="{FONT}">{where}</div>' + _number_table(array[index]))
    if len(leading) > MAX_SLICES:
        pieces.append(f'<div style="{FONT}">(the first {MAX_SLICES} of {len(leading)} '
                      "slices shown)</div>")
    return "<div>" + "".join(pieces) + "</div>"


def _number_table(array: np.ndarray) -> str:
    """A 0-, 1- or 2-d array as a table of numbers, each cell tinted by its value."""
    grid = array.reshape(1, -1) if array.ndim < 2 else array
    values = _as_float(grid)
    scale = _scale(values)
    rows = []
    for row, row_values in zip(grid, values):
        cells = []
        for item, value in zip(row, row_values):
            if np.isfinite(value):
                style = f"{NUMBER}; background: {_colour(value / scale if scale else 0, 0.5)}"
            else:
                style = f"{NUMBER}; background: {NAN_COLOUR if np.isnan(value) else INF_COLOUR}"
                style += f"; {ALERT if np.isnan(value) else 'color: #ffffff'}"
            cells.append(f'<td style="{style}">{escape(_number_text(item, array.dtype))}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table style="{TABLE}">' + "".join(rows) + "</table>"


# --- heatmaps -----------------------------------------------------------------------------


def heatmap_svg(array: Any, title: str | None = None, cell: int | None = None,
                max_cells: int = 48) -> str:
    """An inline ``<svg>`` heatmap. Blue is negative, white 0, red positive; the scale is
    the largest finite ``|value|`` shown. NaN and Inf cells get their own colours. An
    array with more than ``max_cells`` rows or columns is shown as block averages (a
    block with a NaN or Inf in it shows that), a >2-d array as (leading dims, last dim),
    a 1-d array as one row; the caption says which."""
    array = _to_array(array)
    values = _as_float(array)
    caption = format_meta(array.shape, array.dtype)
    if array.ndim > 2:
        values = values.reshape(-1, array.shape[-1])
        caption += f" as {values.shape[0]}x{values.shape[1]} (leading dims flattened)"
    elif array.ndim < 2:
        values = values.reshape(1, -1)
    if title:
        caption = f"{title}: {caption}"
    if values.size == 0:
        return _svg(caption + " (empty)", stats_text(array), [], 0, 0)
    if max(values.shape) > max_cells:
        values = _block_average(values, max_cells)
        caption += f" shown as {values.shape[0]}x{values.shape[1]} averages"
    rows, cols = values.shape
    cell = cell or max(3, min(24, HEATMAP_WIDTH // max(rows, cols)))
    scale = _scale(values)
    paths: dict[str, list[str]] = {}  # colour -> cells; one path per colour keeps it small
    for r in range(rows):
        for c in range(cols):
            paths.setdefault(_cell_colour(values[r, c], scale), []).append(
                f"M{c * cell} {r * cell}h{cell}v{cell}h-{cell}z")
    body = [f'<path fill="{colour}" d="{"".join(cells)}"/>' for colour, cells in paths.items()]
    body.append(f'<rect width="{cols * cell}" height="{rows * cell}" fill="none" '
                'stroke="#999" stroke-width="0.5"/>')
    legend = [(_colour(-1), f"-{format_number(scale)}"), (_colour(0), "0"),
              (_colour(1), f"+{format_number(scale)}")]
    if np.isnan(values).any():
        legend.append((NAN_COLOUR, "NaN"))
    if np.isinf(values).any():
        legend.append((INF_COLOUR, "Inf"))
    return _svg(caption, stats_text(array), body, cols * cell, rows * cell, legend)


def _svg(caption: str, tooltip: str, grid: list[str], width: int, height: int,
         legend: list[tuple[str, str]] = ()) -> str:
    """Put a caption above the grid and a legend (colour, text) below it."""
    top, legend_y = 16, 16 + height + 6
    x, keys = 0.0, []
    for colour, text in legend:
        keys.append(f'<rect x="{x:g}" y="{legend_y}" width="10" height="10" fill="{colour}" '
                    f'stroke="#999" stroke-width="0.5"/><text x="{x + 13:g}" '
                    f'y="{legend_y + 9}">{escape(text)}</text>')
        x += 13 + len(text) * CHAR_WIDTH + 10
    total_width = int(max(width, x, len(caption) * CHAR_WIDTH)) + 4
    total_height = legend_y + (14 if legend else 0)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="mg-heatmap" width="{total_width}" '
            f'height="{total_height}" viewBox="0 0 {total_width} {total_height}" '
            f'style="font-family: monospace; font-size: 11px">'
            f"<title>{escape(tooltip)}</title>"
            f'<text x="0" y="11">{escape(caption)}</text>'
            f'<g transform="translate(0,{top})" shape-rendering="crispEdges">{"".join(grid)}</g>'
            + "".join(keys) + "</svg>")


def _block_average(values: np.ndarray, max_cells: int) -> np.ndarray:
    """Average ``values`` down to at most ``max_cells`` rows and columns. A block with a
    NaN in it becomes NaN, one with an Inf (and no NaN) Inf: a bad value must not hide."""
    row_starts = _block_starts(values.shape[0], max_cells)
    col_starts = _block_starts(values.shape[1], max_cells)

    def block_sums(x: np.ndarray) -> np.ndarray:
        return np.add.reduceat(np.add.reduceat(x, row_starts, axis=0), col_starts, axis=1)

    finite = np.isfinite(values)
    sums = block_sums(np.where(finite, values, 0.0))
    counts = block_sums(finite.astype(np.int64))
    averages = sums / np.maximum(counts, 1)
    averages[block_sums(np.isinf(values).astype(np.int64)) > 0] = np.inf
    averages[block_sums(np.isnan(values).astype(np.int64)) > 0] = np.nan
    return averages


def _block_starts(size: int, blocks: int) -> np.ndarray:
    """Where each of ``min(size, blocks)`` nearly equal blocks of ``range(size)`` starts."""
    blocks = min(size, blocks)
    return np.arange(blocks) * size // blocks


# --- tables -------------------------------------------------------------------------------


def table_html(header: list[Any], rows: list[list[Any]]) -> str:
    """A plain bordered table. Cells are escaped, except ``Html`` ones."""
    head = "".join(f'<th style="{CELL}; background: #f0f0f0">{_cell(h)}</th>' for h in header)
    body = ["<tr>" + "".join(f'<td style="{CELL}">{_cell(c)}</td>' for c in row) + "</tr>"
            for row in rows]
    return (f'<table style="{TABLE}">' + (f"<tr>{head}</tr>" if header else "")
            + "".join(body) + "</table>")


def _cell(value: Any) -> str:
    return value if isinstance(value, Html) else escape(value)


def short_repr(value: Any, limit: int = 60) -> str:
    """A short, stable description of any value: arrays and tensors by shape and dtype,
    the rest by ``repr`` cut at ``limit`` characters, without memory addresses."""
    if isinstance(value, (np.ndarray, Tensor)):
        kind = "array" if isinstance(value, np.ndarray) else "tensor"
        return f"{kind} {format_meta(value.shape, value.dtype)}"
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))
    return text if len(text) <= limit else text[:limit - 3] + "..."


# --- helpers ------------------------------------------------------------------------------


def _to_array(array: Any) -> np.ndarray:
    return np.asarray(array.numpy() if isinstance(array, Tensor) else array)


def _as_float(array: np.ndarray) -> np.ndarray:
    """float64 values to measure and colour (complex numbers by their magnitude)."""
    return (np.abs(array) if array.dtype.kind == "c" else array).astype(np.float64)


def _scale(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(np.abs(finite).max()) if finite.size else 0.0


def _number_text(value: Any, dtype: np.dtype) -> str:
    if dtype.kind == "b":
        return str(bool(value))
    if dtype.kind in "iu":
        return str(int(value))
    if dtype.kind == "c":
        return str(complex(value))
    return format_number(float(value))


def _cell_colour(value: float, scale: float) -> str:
    if np.isnan(value):
        return NAN_COLOUR
    if np.isinf(value):
        return INF_COLOUR
    return _colour(value / scale if scale else 0.0)


def _colour(t: float, strength: float = 1.0) -> str:
    """The map's colour for ``t`` in [-1, 1], in LEVELS steps per sign; ``strength`` < 1
    makes it paler (a tint behind numbers that must stay readable)."""
    level = round(min(abs(t), 1.0) * LEVELS) / LEVELS * strength
    end = NEGATIVE if t < 0 else POSITIVE
    rgb = [round(255 + (e - 255) * level) for e in end]
    return "#{:02x}{:02x}{:02x}".format(*rgb)
