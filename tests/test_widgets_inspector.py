"""ContextInspector: what a Function's context holds, before and after backward."""

from __future__ import annotations

import re

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn

ipywidgets = pytest.importorskip("ipywidgets")

from minigrad.widgets.inspector import ContextInspector  # noqa: E402
from minigrad.widgets.trace import Trace  # noqa: E402


def text_of(html: str) -> str:
    """The visible text, one space between pieces (tags dropped)."""
    text = re.sub(r"<[^>]+>", " ", html).replace("&middot;", "|")
    return re.sub(r"\s+", " ", text)


def section(html: str, heading: str) -> str:
    """The text from ``heading`` up to the next section heading (or the end)."""
    text = text_of(html)
    start = text.index(heading)
    ends = [text.find(h, start + len(heading)) for h in
            ("inputs", "context attributes", "saved tensors")]
    ends = [e for e in ends if e > start]
    return text[start:min(ends) if ends else len(text)]


def input_rows(inspector: ContextInspector) -> list[list[str]]:
    """The inputs table, as the text of each cell, without the header."""
    table = inspector.to_html().split("inputs</div>")[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in rows]


@pytest.fixture
def product():
    """``x * w`` with x requiring grad and w not."""
    x = mg.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True, label="x")
    w = mg.tensor([[0.5, 0.25, 2.0], [-1.5, 1.0, 8.0]])
    return x, w, x * w


def mlp_loss():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    return F.cross_entropy(model(mg.randn(5, 4)), mg.tensor([0, 1, 2, 0, 1]).long())


# --- what a context holds -------------------------------------------------------------------


def test_mul_shows_both_saved_arrays_with_shapes_and_min_max(product):
    x, w, y = product
    saved = section(ContextInspector(y).to_html(), "saved tensors")
    assert "input 0 (x) (2, 3) float32 | min -6 | max 5" in saved
    assert "input 1 (2, 3) float32 | min -1.5 | max 8" in saved


def test_small_saved_arrays_are_previewed_as_numbers(product):
    saved = ContextInspector(product[2]).to_html().split("saved tensors")[1]
    for number in ["-2", "3", "0.25", "-1.5", "8"]:
        assert f">{number}</td>" in saved


def test_large_saved_arrays_are_previewed_as_heatmaps():
    conv = nn.Conv2d(3, 4, 3)
    out = conv(mg.randn(2, 3, 8, 8))
    html = ContextInspector(out).to_html()
    saved = section(html, "saved tensors")
    assert "(2, 3, 8, 8) float32" in saved and "(4, 3, 3, 3) float32" in saved
    assert html.split("saved tensors")[1].count("<svg") == 2


def test_needs_input_grad_is_true_false_when_one_input_does_not_require_grad(product):
    rows = input_rows(ContextInspector(product[2]))
    assert [(r[0], r[1], r[2], r[4], r[5]) for r in rows] == [
        ("0", "x", "(2, 3)", "True", "True"), ("1", "", "(2, 3)", "False", "False")]


def test_sum_shows_the_dims_it_reduced_over():
    x = mg.randn(2, 3, requires_grad=True)
    attributes = section(ContextInspector(x.sum(dim=1)).to_html(), "context attributes")
    assert "dims (1,)" in attributes and "keepdim False" in attributes


def test_softmax_shows_its_axis_and_saved_output():
    x = mg.randn(2, 3, requires_grad=True)
    y = F.softmax(x, dim=1)
    html = ContextInspector(y).to_html()
    assert "axis 1" in section(html, "context attributes")
    assert "output 0 (2, 3) float32" in section(html, "saved tensors")


def test_an_intermediate_input_names_the_op_that_made_it():
    x = mg.randn(3, requires_grad=True)
    e = x.exp()
    rows = input_rows(ContextInspector(e * 2))
    assert rows[0][6] == "intermediate: Exp #1"  # numbered in the graph behind e * 2


def test_a_leaf_input_and_a_constant_argument_are_said_to_be_so():
    x = mg.randn(3, requires_grad=True)
    rows = input_rows(ContextInspector(x * 2.5))
    assert rows[0][6] == "leaf" and rows[1][6] == "constant 2.5"
    assert rows[1][5] == "False"


def test_mlp_loss_shows_cross_entropy_settings_and_saved_log_probabilities():
    loss = mlp_loss()
    inspector = ContextInspector(loss)
    html = inspector.to_html()
    assert "CrossEntropy" in text_of(html)
    assert "reduction 'mean'" in section(html, "context attributes")
    assert "(5, 3) float32" in section(html, "saved tensors")
    rows = input_rows(inspector)
    assert rows[0][6].startswith("intermediate: Linear #") and "(group 2)" in rows[0][6]
    assert rows[1][6] == "constant array (5,) int64"


def test_mlp_layer_shows_its_group_and_parameter_inputs():
    loss = mlp_loss()
    linear = loss.grad_fn.next_functions[0][0]
    inspector = ContextInspector(linear)
    assert "group 2" in text_of(inspector.to_html())
    assert [r[6] for r in input_rows(inspector)][1:] == ["leaf (a Parameter)"] * 2


def test_a_tensor_feeding_two_functions_is_an_input_of_each():
    x = mg.tensor([1.0, 2.0], requires_grad=True, label="x")
    doubled, squared = x * 2, x * x
    assert input_rows(ContextInspector(doubled))[0][:2] == ["0", "x"]
    assert [r[1] for r in input_rows(ContextInspector(squared))] == ["x", "x"]


def test_conv_without_bias_shows_the_missing_bias_as_a_constant_none():
    out = nn.Conv2d(1, 2, 3, bias=False)(mg.randn(1, 1, 5, 5))
    assert input_rows(ContextInspector(out))[2][6] == "constant None"


# --- after backward -------------------------------------------------------------------------


def test_released_message_after_backward():
    loss = mlp_loss()
    loss.backward()
    inspector = ContextInspector(loss)
    text = text_of(inspector.to_html())
    assert "saved tensors were released by backward()" in text
    assert "backward(retain_graph=True) keeps them" in text
    assert "saved tensors released" in inspector.summary()


def test_retained_message_after_backward_with_retain_graph():
    loss = mlp_loss()
    loss.backward(retain_graph=True)
    text = text_of(ContextInspector(loss).to_html())
    assert "retained because backward ran with retain_graph=True" in text
    assert "(5, 3) float32" in text  # still there


def test_refresh_reads_the_node_again_after_backward(product):
    x, w, y = product
    inspector = ContextInspector(y)
    assert "min -6" in inspector.children[0].value
    y.sum().backward()
    inspector.refresh()
    assert "released by backward()" in inspector.children[0].value
    assert "min -6" not in inspector.children[0].value


def test_refresh_button_does_what_refresh_does(product):
    inspector = ContextInspector(product[2])
    product[2].sum().backward()
    button = next(c for c in inspector.children if isinstance(c, ipywidgets.Button))
    button.click()
    assert "released by backward()" in inspector.children[0].value


def test_a_freed_node_still_gives_the_shapes_of_its_intermediate_inputs():
    x = mg.randn(2, 3, requires_grad=True)
    y = x.exp().sum(dim=1)
    y.sum().backward()
    inspector = ContextInspector(y)
    assert y.grad_fn.args == (None,)
    row = input_rows(inspector)[0]
    assert row[2:4] == ["(2, 3)", "float32"] and row[6].endswith("(freed by backward)")


# --- lazy mode and leaves -------------------------------------------------------------------


def test_pending_message_for_a_lazy_tensor():
    x = mg.randn(2, 3, requires_grad=True)
    with mg.lazy():
        y = (x * 2).sum()
    inspector = ContextInspector(y)
    text = text_of(inspector.to_html())
    assert "Not computed yet" in text and ".realize()" in text
    multiply = y.grad_fn.args[0]._lazy_node
    assert multiply is not None and "waits for input 0 (from Mul #1)" in text
    assert "not computed yet" in inspector.summary()
    assert not y.is_realized  # looking did not compute it


def test_realize_then_refresh_shows_what_forward_saved():
    x = mg.tensor([1.0, -3.0], requires_grad=True)
    with mg.lazy():
        y = x * x
    inspector = ContextInspector(y)
    y.realize()
    inspector.refresh()
    assert "min -3 | max 1" in section(inspector.to_html(), "saved tensors")


def test_a_leaf_tensor_gets_an_explanation_and_no_node():
    w = mg.tensor([1.0, 2.0], requires_grad=True, label="w")
    inspector = ContextInspector(w)
    assert inspector.node is None
    text = text_of(inspector.to_html())
    assert "a leaf: no Function made this tensor" in text and "show(tensor)" in text
    assert "Its .grad is None" in text
    (w * w).sum().backward()
    inspector.refresh()
    assert "Its .grad is a (2,) array, norm 4.472" in text_of(inspector.to_html())
    assert inspector.summary() == "ContextInspector(leaf w: no Function)"


# --- the widget -------------------------------------------------------------------------------


def test_static_bundle_has_html_plain_text_and_the_widget_view(product):
    inspector = ContextInspector(product[2])
    bundle = inspector._repr_mimebundle_()
    assert bundle["text/html"] == inspector.to_html()
    assert bundle["text/plain"] == "ContextInspector(Mul #1: 2 inputs, 2 saved tensors)"
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_html_is_marked_for_browser_tests_and_the_live_view_shows_it(product):
    inspector = ContextInspector(product[2])
    html = inspector.to_html()
    assert html.startswith('<div class="mg-inspector"')
    assert inspector.children[0].value == html
    assert not any(isinstance(c, ipywidgets.Output) for c in inspector.children)


def test_same_node_renders_the_same_html_without_addresses(product):
    first = ContextInspector(product[2]).to_html()
    assert first == ContextInspector(product[2].grad_fn).to_html()
    assert "0x" not in first


def test_inspect_switches_to_another_node(product):
    x, w, y = product
    total = y.exp().sum()
    inspector = ContextInspector(y)
    inspector.inspect(total)
    assert inspector.node is total.grad_fn
    view = inspector.children[0].value
    assert "Sum #3</div>" in view and "Mul #" not in view  # Mul #1, Exp #2, Sum #3
    assert inspector.summary().startswith("ContextInspector(Sum #3")


def test_a_node_is_numbered_as_the_drawing_it_was_picked_from_numbers_it():
    x = mg.randn(3, requires_grad=True)
    early, late = x.exp(), x.sin()
    trace = Trace.of((early + late).sum())
    assert ContextInspector(late).summary().startswith("ContextInspector(Sin #1")
    inspector = ContextInspector(late, trace)  # Exp #1, Sin #2, Add #3, Sum #4
    assert inspector.summary().startswith("ContextInspector(Sin #2")
    inspector.inspect(early)
    assert inspector.summary().startswith("ContextInspector(Exp #1")


def test_anything_but_a_tensor_or_node_is_a_type_error():
    with pytest.raises(TypeError, match="expected a minigrad Tensor"):
        ContextInspector(np.ones(3))
