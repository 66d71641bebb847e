"""Drawing a gradient recorded with ``create_graph=True``: the ops that one op's backward
recorded form a group, ``backward of Exp #1``, so the forward's ops and the backward's
are told apart, in the graph's data and in the drawing."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("grandalf")

from conftest import need  # noqa: E402

import minigrad as mg  # noqa: E402
from minigrad.higher_order import backward_group  # noqa: E402
from minigrad.widgets import ContextInspector  # noqa: E402
from minigrad.widgets.layout import dot_available, draw  # noqa: E402
from minigrad.widgets.trace import Trace  # noqa: E402


@pytest.fixture
def dot():
    if not dot_available():
        need("Graphviz dot", "apt-get install graphviz")


def exp_times_x():
    """(x, y, g): y = sum(exp(x) * x) and its gradient g, recorded. Exp's backward uses
    Exp's output, so the graph of g holds the forward's Exp and the backward's ops."""
    x = mg.tensor([0.5, -1.0], requires_grad=True, label="x")
    y = (x.exp() * x).sum()
    g, = mg.autograd.grad(y, x, create_graph=True)
    return x, y, g


def groups_by_title(trace: Trace) -> dict:
    return {v.title: v.group for v in trace.ops}


def cluster_labels(svg: str) -> list[str]:
    """The labels drawn on the clusters (both backends give them an id cluster_...)."""
    return sorted(re.findall(r'<g id="cluster_[^"]*" class="cluster">.*?<text[^>]*>([^<]+)'
                             r"</text>", svg, re.DOTALL))


# --- the engine ------------------------------------------------------------------------------


def test_ops_a_recorded_backward_makes_are_in_the_group_of_the_op_whose_backward_it_is():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    cube = x ** 3
    g, = mg.autograd.grad(cube.sum(), x, create_graph=True)
    assert backward_group(cube.grad_fn) == f"backward of Pow #{cube.grad_fn.id}"
    assert g.grad_fn.group == backward_group(cube.grad_fn)
    assert cube.grad_fn.group is None  # the forward's ops keep theirs


def test_a_backward_inside_a_group_nests_its_groups_there():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    cube = x ** 3
    with mg.group("inner_step"):
        g, = mg.autograd.grad(cube.sum(), x, create_graph=True)
    assert g.grad_fn.group == f"inner_step.{backward_group(cube.grad_fn)}"
    assert mg.current_group() is None


# --- the trace: the groups as the drawing numbers them ---------------------------------------


def test_the_group_names_the_forward_op_as_the_drawing_numbers_it():
    _, _, g = exp_times_x()
    groups = groups_by_title(Trace.of(g))
    assert groups["Exp #1"] is None  # the forward's op
    assert groups["Mul #4"] == "backward of Exp #1"  # grad_output * exp(x)
    assert groups["Mul #2"] == groups["Mul #3"] == "backward of Mul"  # its Mul is not drawn
    assert "backward of Exp #1" in Trace.of(g).groups


def test_the_backward_of_an_op_not_drawn_is_named_by_the_op_alone():
    """The issue's example: g = grad((x**3).sum(), x) is 3 x**2 * grad_output, all of it
    made by Pow's backward; the forward's Pow is not in g's graph."""
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    g, = mg.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert set(groups_by_title(Trace.of(g)).values()) == {"backward of Pow"}


def test_the_backwards_of_several_ops_not_drawn_are_told_apart_oldest_first():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    g, = mg.autograd.grad((x ** 3).sum() + (x ** 2).sum(), x, create_graph=True)
    assert {"backward of Pow [1]", "backward of Pow [2]"} <= set(Trace.of(g).groups)


def test_drawn_group_names_do_not_depend_on_what_ran_before():
    first = draw(Trace.of(exp_times_x()[2]), backend="python").svg
    for _ in range(30):  # nodes made elsewhere move the session's counter (node.id) on
        (mg.randn(3, requires_grad=True) * 2).sum()
    _, y, g = exp_times_x()
    assert draw(Trace.of(g), backend="python").svg == first
    assert f"#{y.grad_fn.id}" not in first


# --- the drawing -----------------------------------------------------------------------------


def test_python_drawing_labels_the_backward_clusters():
    svg = draw(Trace.of(exp_times_x()[2]), backend="python").svg
    assert cluster_labels(svg) == ["backward of Exp #1", "backward of Mul"]


def test_dot_drawing_labels_the_backward_clusters(dot):
    svg = draw(Trace.of(exp_times_x()[2]), backend="dot").svg
    assert cluster_labels(svg) == ["backward of Exp #1", "backward of Mul"]


def test_collapsed_each_backward_is_one_box_named_after_its_op():
    svg = draw(Trace.of(exp_times_x()[2]), collapse=True, backend="python").svg
    assert "g_backward of Exp #1" in svg and ">backward of Exp #1</text>" in svg
    assert ">1 op: Mul</text>" in svg and ">2 ops: Mul</text>" in svg


def test_inspector_names_the_group_as_the_drawing_does():
    _, _, g = exp_times_x()
    trace = Trace.of(g)
    html = ContextInspector(g, trace).to_html()
    assert "(group backward of Exp #1)" in html and "(group backward of Mul)" in html
    node = trace.vertex("n4").node
    assert "group backward of Exp #1 " in ContextInspector(node, trace).to_html()
    assert trace.describe(node) == "Mul #4 (group backward of Exp #1)"


def test_the_sum_of_two_gradients_for_one_tensor_is_part_of_its_op_s_backward():
    # h feeds two ops: the engine adds their gradients before Mul's backward; that Add is
    # drawn in Mul's group, not loose between the groups
    x = mg.tensor([0.5, -1.0], requires_grad=True)
    h = x * 2.0
    g, = mg.autograd.grad((h.exp() + h.sin()).sum(), x, create_graph=True)
    groups = [v.group for v in Trace.of(g).ops]
    adds = [v for v in Trace.of(g).ops if v.title.startswith("Add")
            and v.group and v.group.startswith("backward of Mul")]
    assert adds, groups
    assert all(group is None or group.startswith("backward of") for group in groups)
    # the values are those of the sum: d/dx (exp(2x) + sin(2x)) = 2 exp(2x) + 2 cos(2x)
    values = np.array([0.5, -1.0])
    np.testing.assert_allclose(g.numpy(), 2 * np.exp(2 * values) + 2 * np.cos(2 * values),
                               rtol=1e-6)
