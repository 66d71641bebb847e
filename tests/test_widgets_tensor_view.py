"""TensorView: a tensor's values and gradient side by side."""

from __future__ import annotations

import re

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

ipywidgets = pytest.importorskip("ipywidgets")

from minigrad.widgets.tensor_view import TensorView  # noqa: E402


def panels(view: TensorView) -> tuple[str, str]:
    """The HTML of the values panel and of the gradient panel."""
    html = view.to_html()
    values = html.split(">values</div>")[1].split(">gradient (.grad)</div>")[0]
    return values, html.split(">gradient (.grad)</div>")[1]


def numbers(html: str) -> list[str]:
    return re.findall(r"<td[^>]*>([^<]+)</td>", html)


def test_small_tensor_shows_its_numbers_and_stats():
    w = mg.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, 4.0]], requires_grad=True)
    values, _ = panels(TensorView(w))
    assert numbers(values) == ["1", "-2", "3", "0.5", "0", "4"]
    assert "(2, 3) float32 &middot; min -2 &middot; max 4" in values


def test_without_grad_the_gradient_panel_says_to_call_backward():
    view = TensorView(mg.tensor([1.0, 2.0], requires_grad=True))
    assert "no gradient yet (call backward())" in panels(view)[1]
    assert view.summary() == "TensorView(tensor: (2,) float32, no grad)"


def test_after_backward_refresh_shows_the_gradient_and_its_norm():
    w = mg.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True, label="w")
    view = TensorView(w)
    (w * w).sum().backward()  # grad = 2 w
    view.refresh()
    _, gradient = panels(view)
    assert numbers(gradient) == ["2", "-4", "6", "1"]
    assert "min -4" in gradient and "max 6" in gradient
    assert view.summary() == "TensorView(w: (2, 2) float32, grad norm 7.55)"
    assert view.children[0].value == view.to_html()


def test_large_tensor_and_its_gradient_are_heatmaps():
    layer = nn.Linear(20, 10)
    layer(mg.randn(4, 20)).sum().backward()
    values, gradient = panels(TensorView(layer.weight))
    assert values.startswith("<svg") and "(10, 20) float32" in values
    assert gradient.startswith("<svg") and "min" in gradient


def test_the_title_is_the_label():
    view = TensorView(mg.tensor([0.0, 0.0, 0.0], label="bias"))
    assert ">bias</div>" in view.to_html()
    assert view.summary().startswith("TensorView(bias: (3,) float32")


def test_a_lazy_tensor_is_shown_as_not_computed_and_stays_so():
    x = mg.randn(2, 3, requires_grad=True)
    with mg.lazy():
        y = x * 2
    view = TensorView(y)
    assert "not computed yet" in panels(view)[0]
    assert view.summary() == "TensorView(tensor: (2, 3) float32, not computed yet)"
    assert not y.is_realized


def test_a_tensor_that_needs_no_grad_says_it_will_get_none():
    assert "requires_grad=False" in panels(TensorView(mg.ones(2)))[1]


def test_a_non_leaf_mentions_retain_grad():
    y = mg.ones(2, requires_grad=True) * 3
    assert "retain_grad()" in panels(TensorView(y))[1]


def test_a_nan_gradient_shows_in_the_summary_and_the_panel():
    x = mg.tensor([0.0, 1.0], requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        (x.log() * 0).sum().backward()  # 0 * inf = nan in the gradient of log at 0
    view = TensorView(x)
    assert "NaN" in panels(view)[1] and view.summary().endswith("grad NaN!)")


def test_refresh_button_does_what_refresh_does():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    view = TensorView(w)
    (w * 3).sum().backward()
    next(c for c in view.children if isinstance(c, ipywidgets.Button)).click()
    assert numbers(panels(view)[1]) == ["3", "3"]


def test_static_bundle_has_html_plain_text_and_the_widget_view():
    view = TensorView(mg.tensor([1.0, 2.0], label="v"))
    bundle = view._repr_mimebundle_()
    assert bundle["text/html"] == view.to_html()
    assert bundle["text/plain"] == "TensorView(v: (2,) float32, no grad)"
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert 'class="mg-tensor-view"' in bundle["text/html"]


def test_same_tensor_renders_the_same_html():
    w = mg.tensor(np.linspace(-1, 1, 100).reshape(10, 10), requires_grad=True)
    assert TensorView(w).to_html() == TensorView(w).to_html()


def test_anything_but_a_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="expected a minigrad Tensor"):
        TensorView(np.ones(3))
