"""widgets.render: statistics lines, number tables and heatmaps of arrays."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

import minigrad as mg

ipywidgets = pytest.importorskip("ipywidgets")

from minigrad.widgets.render import (  # noqa: E402
    Html,
    heatmap_svg,
    preview_html,
    short_repr,
    stats_html,
    stats_text,
    table_html,
)

SVG = "{http://www.w3.org/2000/svg}"


def text_of(html: str) -> str:
    """The visible text of an HTML snippet (tags dropped, entities kept simple)."""
    return re.sub(r"<[^>]+>", " ", html).replace("&middot;", "|")


def fills(svg: str) -> set[str]:
    """Colours of the heatmap's cells."""
    root = ElementTree.fromstring(svg)
    return {p.get("fill") for p in root.iter(f"{SVG}path")}


# --- stats_html -----------------------------------------------------------------------------


def test_stats_give_shape_dtype_min_max_and_mean():
    line = text_of(stats_html(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], dtype=np.float32)))
    for part in ["(2, 3) float32", "min 1", "max 6.5", "mean 3.583"]:
        assert part in line


def test_stats_count_nan_and_inf_in_red():
    html = stats_html(np.array([1.0, np.nan, np.nan, np.inf, -2.0]))
    assert re.search(r'<span style="color: #c00000[^"]*">2 NaN</span>', html)
    assert re.search(r'<span style="color: #c00000[^"]*">1 Inf</span>', html)
    assert "min -2" in html and "max 1" in html  # of the finite values


def test_stats_of_an_array_without_nan_mention_none():
    assert "NaN" not in stats_html(np.ones(3)) and "Inf" not in stats_html(np.ones(3))


def test_stats_work_for_0d_empty_int_and_bool_arrays():
    assert "() float64" in stats_html(np.array(2.5)) and "min 2.5" in stats_html(np.array(2.5))
    assert "(0, 3) float32" in stats_html(np.zeros((0, 3), np.float32))
    assert "empty" in stats_html(np.zeros((0, 3), np.float32))
    assert "max 12345" in stats_html(np.array([12345, -7]))  # integers stay exact
    line = text_of(stats_html(np.array([True, False, True, True])))
    assert "min False" in line and "max True" in line and "mean 0.75" in line


def test_stats_of_a_tensor_read_its_array():
    assert "min -1" in stats_html(mg.tensor([-1.0, 3.0]))
    assert "(2,) float32" in stats_html(mg.tensor([-1.0, 3.0]))


def test_stats_text_is_the_same_line_without_html():
    assert stats_text(np.array([1.0, np.nan])) == "(2,) float64, min 1, max 1, mean 1, 1 NaN"


# --- preview_html -------------------------------------------------------------------------


def test_preview_of_a_2x3_array_is_a_table_of_its_numbers():
    html = preview_html(np.array([[1.5, -2.0, 3.25], [0.0, 7.0, -0.125]]))
    rows = re.findall(r"<tr>(.*?)</tr>", html)
    assert len(rows) == 2
    assert [re.findall(r">([^<]+)</td>", row) for row in rows] == [
        ["1.5", "-2", "3.25"], ["0", "7", "-0.125"]]


def test_preview_of_0d_and_1d_arrays_is_one_row():
    assert re.findall(r">([^<]+)</td>", preview_html(np.array(4.0))) == ["4"]
    assert re.findall(r">([^<]+)</td>", preview_html(np.arange(3))) == ["0", "1", "2"]


def test_preview_of_a_small_3d_array_says_which_slice_each_table_is():
    html = preview_html(np.arange(12).reshape(2, 3, 2))
    assert "[0, :, :]" in html and "[1, :, :]" in html
    assert html.count("<table") == 2


def test_preview_of_many_small_slices_shows_the_first_few_and_says_so():
    html = preview_html(np.zeros((10, 1, 2)))
    assert html.count("<table") == 4 and "the first 4 of 10 slices" in html


def test_preview_of_a_large_array_is_a_heatmap():
    assert preview_html(np.ones((7, 6))).startswith("<svg")
    assert preview_html(np.ones((6, 6))).startswith("<table")
    assert preview_html(np.ones((7, 6)), max_numbers=100).startswith("<table")


def test_preview_marks_a_nan_number():
    html = preview_html(np.array([1.0, np.nan]))
    assert re.search(r'<td style="[^"]*#ffd400[^"]*color: #c00000[^"]*">nan</td>', html)


def test_preview_of_an_empty_array_says_it_is_empty():
    assert "empty" in preview_html(np.zeros((0, 4)))


# --- heatmap_svg --------------------------------------------------------------------------


def test_heatmap_of_the_same_array_is_the_same_string():
    array = np.random.default_rng(1).standard_normal((30, 20)).astype(np.float32)
    assert heatmap_svg(array) == heatmap_svg(array.copy())


def test_heatmap_is_well_formed_svg_with_one_cell_per_value():
    svg = heatmap_svg(np.arange(12.0).reshape(3, 4))
    root = ElementTree.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    cells = "".join(p.get("d") for p in root.iter(f"{SVG}path"))
    assert cells.count("M") == 12


def test_heatmap_colours_negative_blue_zero_white_positive_red():
    assert fills(heatmap_svg(np.array([-1.0, 0.0, 1.0]))) == {"#2166ac", "#ffffff", "#b2182b"}


def test_heatmap_scale_is_the_largest_absolute_value():
    svg = heatmap_svg(np.array([-4.0, 2.0]))
    assert ">-4<" in svg and ">+4<" in svg  # the legend
    assert fills(svg) == {"#2166ac", "#d88c95"}  # -4 is full blue, 2 half red


def test_heatmap_downsamples_a_large_array_and_says_so():
    svg = heatmap_svg(np.ones((256, 784), np.float32))
    assert "(256, 784) float32 shown as 48x48 averages" in svg
    cells = "".join(p.get("d") for p in ElementTree.fromstring(svg).iter(f"{SVG}path"))
    assert cells.count("M") == 48 * 48


def test_heatmap_averages_blocks():
    array = np.zeros((100, 4))
    array[:50] = -1.0  # the top half averages to -1, the bottom half to +1
    array[50:] = 1.0
    svg = heatmap_svg(array, max_cells=10)
    assert "shown as 10x4 averages" in svg
    assert fills(svg) == {"#2166ac", "#b2182b"}


def test_heatmap_block_with_a_nan_shows_the_nan():
    array = np.ones((200, 200))
    array[123, 45] = np.nan
    svg = heatmap_svg(array)
    assert "#ffd400" in fills(svg) and ">NaN<" in svg


def test_heatmap_marks_nan_and_inf_cells_in_their_own_colours_with_a_legend():
    svg = heatmap_svg(np.array([[1.0, np.nan], [np.inf, -1.0]]))
    assert fills(svg) == {"#b2182b", "#2166ac", "#ffd400", "#000000"}
    assert ">NaN<" in svg and ">Inf<" in svg
    assert "NaN" not in heatmap_svg(np.ones((2, 2))).split("</title>")[1]


def test_heatmap_of_a_4d_array_flattens_the_leading_dims_and_says_so():
    svg = heatmap_svg(np.zeros((2, 3, 4, 5)))
    assert "(2, 3, 4, 5) float64 as 24x5 (leading dims flattened)" in svg


def test_heatmap_of_a_1d_array_is_one_row():
    cells = "".join(p.get("d") for p in ElementTree.fromstring(
        heatmap_svg(np.arange(5.0), cell=10)).iter(f"{SVG}path"))
    assert re.findall(r"M(\d+) (\d+)", cells) == [("0", "0"), ("10", "0"), ("20", "0"),
                                                   ("30", "0"), ("40", "0")]


def test_heatmap_tooltip_holds_the_stats_and_the_caption_the_title():
    svg = heatmap_svg(np.array([[1.0, 3.0]]), title="w <1>")
    assert "<title>(1, 2) float64, min 1, max 3, mean 2</title>" in svg
    assert "w &lt;1&gt;: (1, 2) float64" in svg


def test_heatmap_of_an_empty_array_says_so():
    svg = heatmap_svg(np.zeros((0, 5)))
    assert "(empty)" in svg
    ElementTree.fromstring(svg)


def test_heatmap_works_for_int_bool_and_0d_arrays():
    assert fills(heatmap_svg(np.array([0, 3]))) == {"#ffffff", "#b2182b"}
    assert fills(heatmap_svg(np.array([True, False]))) == {"#ffffff", "#b2182b"}
    assert fills(heatmap_svg(np.array(-2.0))) == {"#2166ac"}


def test_outputs_use_inline_styles_only_and_no_addresses():
    outputs = [stats_html(np.ones(3)), preview_html(np.ones(3)), heatmap_svg(np.ones((60, 2))),
               table_html(["a"], [[1]])]
    for html in outputs:
        assert "<style" not in html and "0x" not in html and "id=" not in html


# --- table_html and short_repr ------------------------------------------------------------


def test_table_escapes_cells_except_html_ones():
    html = table_html(["name", "value"], [["<b>", Html("<i>kept</i>")]])
    assert "<th" in html and "&lt;b&gt;" in html and "<i>kept</i>" in html


def test_table_without_header_has_no_header_row():
    assert "<th" not in table_html([], [[1, 2]])


def test_short_repr_names_arrays_by_shape_and_cuts_long_text():
    assert short_repr(np.zeros((2, 3), np.int64)) == "array (2, 3) int64"
    assert short_repr(mg.zeros(4)) == "tensor (4,) float32"
    assert short_repr(tuple(range(100)), limit=20) == "(0, 1, 2, 3, 4, 5..."
    assert "0x" not in short_repr(object())
