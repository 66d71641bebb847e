"""The graph model (Trace), its drawing (dot and pure Python) and GraphView."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("grandalf")

from conftest import need, output_of_two_fresh_processes  # noqa: E402
from widget_graphs import conv_loss, mlp_loss, reused_loss  # noqa: E402

import minigrad as mg  # noqa: E402
from minigrad import nn  # noqa: E402
from minigrad.widgets import ContextInspector, GraphView, TensorView  # noqa: E402
from minigrad.widgets.drawing import EDGE_COLOUR, view_graph  # noqa: E402
from minigrad.widgets.layout import dot_available, draw  # noqa: E402
from minigrad.widgets.trace import Trace, grad_stats  # noqa: E402


@pytest.fixture
def no_dot(monkeypatch, tmp_path):
    """Graphviz's dot hidden from PATH (what a pip-only install or Binder without apt has)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not dot_available()


@pytest.fixture
def dot():
    if not dot_available():
        need("Graphviz dot", "apt-get install graphviz")


def box_ids(svg: str) -> list[str]:
    """The keys of the boxes drawn, from the SVG (both backends mark them class="node ...")."""
    return sorted(re.findall(r'<g id="([^"]+)" class="node', svg))


def classes_of(svg: str, key: str) -> str:
    match = re.search(rf'<g id="{re.escape(key)}" class="([^"]+)"', svg)
    return match.group(1).replace("&#45;", "-") if match else ""


# --- the trace ------------------------------------------------------------------------------


def test_trace_has_one_vertex_per_op_numbered_in_the_graph_oldest_first():
    model, loss = mlp_loss()
    trace = Trace.of(loss, model)
    nodes = mg.walk([loss.grad_fn], lambda n: [p for p, _ in n.next_functions if p is not None])
    assert [v.title for v in trace.ops] == [f"{n.name} #{i}" for i, n in enumerate(nodes, 1)]
    assert [v.key for v in trace.ops] == [f"n{i}" for i in range(1, len(nodes) + 1)]
    assert trace.root_key == f"n{len(nodes)}" and trace.vertices[trace.root_key].is_root


def test_drawn_labels_do_not_depend_on_what_ran_before():
    model, loss = mlp_loss()
    first = draw(Trace.of(loss, model), backend="python").svg
    for _ in range(50):  # nodes made elsewhere move the session's counter (node.id) on
        (mg.randn(3, requires_grad=True) * 2).sum()
    model, loss = mlp_loss()
    assert draw(Trace.of(loss, model), backend="python").svg == first
    assert "CrossEntropy #4" in first and f"#{loss.grad_fn.id}" not in first
    assert repr(loss.grad_fn) == f"<CrossEntropy #{loss.grad_fn.id}>"  # the repr keeps it


def test_trace_names_parameters_after_the_model_and_puts_them_in_their_layer_group():
    model, loss = mlp_loss()
    trace = Trace.of(loss, model)
    parameters = {v.title: v.group for v in trace.leaves if v.kind == "parameter"}
    assert parameters == {"0.weight": "0", "0.bias": "0", "2.weight": "2", "2.bias": "2"}
    assert [v.kind for v in trace.leaves if v.title.startswith("input")] == ["constant"]


def test_trace_edges_say_which_output_feeds_which_input():
    x = mg.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    values, _ = x.max(1)  # output 0 of a two-output op
    y = (values * values.exp()).sum()
    mul = y.grad_fn.inputs[0]
    exp = mul.grad_fn.inputs[1]
    trace = Trace.of(y)
    max_key, mul_key, exp_key = (trace.vertex(t).key for t in (values, mul, exp))
    assert [(e.source, e.source_output, e.position) for e in trace.edges_into(mul_key)] == \
        [(max_key, 0, 0), (exp_key, 0, 1)]
    assert sorted(e.target for e in trace.edges_out_of(max_key)) == sorted([mul_key, exp_key])
    assert trace.vertices[max_key].outputs[0] == ((2,), np.dtype("float32"))


def test_trace_of_a_leaf_is_that_leaf_alone():
    w = mg.tensor([1.0, 2.0], requires_grad=True, label="w")
    trace = Trace.of(w)
    assert [(v.title, v.kind) for v in trace.vertices.values()] == [("w", "leaf")]
    assert trace.edges == []


def test_recorded_edge_gradients_are_the_gradients_backward_computes():
    model, loss = mlp_loss()
    trace = Trace.of(loss, model)
    recorder = trace.record_gradients()
    hidden = loss.grad_fn.inputs[0]  # the logits
    hidden.retain_grad()
    loss.backward()
    for leaf in trace.leaves:
        if leaf.kind == "parameter":
            (edge,) = trace.edges_out_of(leaf.key)
            assert edge.grad.norm == pytest.approx(np.linalg.norm(leaf.tensor.grad.numpy()))
    (logits_edge,) = trace.edges_into(trace.root_key)
    assert logits_edge.grad.norm == pytest.approx(np.linalg.norm(hidden.grad.numpy()))
    assert trace.backwards == 1 and trace.recorded
    recorder.remove()


@pytest.mark.parametrize("values, status", [
    ([0.0, 0.0], "zero"), ([1e-9, 0.0], "vanishing"), ([3.0, 4.0], "ok"),
    ([1e4, 0.0], "exploding"), ([np.nan, 1.0], "nonfinite"), ([np.inf, 1.0], "nonfinite"),
])
def test_gradients_are_judged_by_their_norm(values, status):
    stats = grad_stats(np.array(values, dtype=np.float32))
    assert stats.status == status
    if status == "ok":
        assert stats.norm == pytest.approx(5.0)


# --- the drawing -------------------------------------------------------------------------------


def test_dot_and_python_layouts_draw_the_same_boxes_with_the_same_marks(dot):
    model, loss = mlp_loss()
    trace = Trace.of(loss, model)
    key = trace.vertex(loss.grad_fn.inputs[0]).key
    drawings = [draw(trace, current=key, selected=trace.root_key, backend=b)
                for b in ("dot", "python")]
    assert box_ids(drawings[0].svg) == box_ids(drawings[1].svg) == sorted(trace.vertices)
    for drawing in drawings:
        assert "mg_current" in classes_of(drawing.svg, key)
        assert "mg_selected" in classes_of(drawing.svg, trace.root_key)
        assert 'id="cluster_0"' in drawing.svg  # layer 0 drawn as a cluster


@pytest.mark.parametrize("backend", ["dot", "python"])
def test_drawing_the_same_graph_twice_gives_identical_svg(backend, request):
    if backend == "dot":
        request.getfixturevalue("dot")
    _, loss = conv_loss()
    first = GraphView(loss, backend=backend).svg
    assert GraphView(loss, backend=backend).svg == first
    assert "0x" not in first


def test_drawings_are_identical_from_one_fresh_process_to_the_next():
    code = ("import sys; sys.path.insert(0, 'tests'); from widget_graphs import mlp_loss; "
            "from minigrad.widgets import GraphView; model, loss = mlp_loss(); "
            "print(GraphView(loss, names=model, backend='python').to_html())")
    first, second = output_of_two_fresh_processes(code)
    assert first == second and "<svg" in first


def test_graph_view_draws_with_dot_when_it_is_installed(dot):
    _, loss = mlp_loss()
    assert GraphView(loss).drawing.backend == "dot"


def test_graph_view_draws_in_pure_python_when_dot_is_not_on_the_path(no_dot):
    model, loss = mlp_loss()
    view = GraphView(loss, names=model)
    assert view.drawing.backend == "python"
    assert box_ids(view.svg) == sorted(view.trace.vertices)


def test_collapsed_groups_draw_each_layer_as_one_box():
    model, loss = mlp_loss()
    trace = Trace.of(loss, model)
    view = view_graph(trace, collapse=True)
    assert sorted(view.boxes) == sorted(["g_0", "g_1", "g_2", trace.root_key, "t0"])
    assert view.boxes["g_0"].lines == ["0", "1 op: Linear", "2 parameters"]
    assert view.owner[trace.vertex(loss.grad_fn.inputs[0]).key] == "g_2"


def test_collapse_by_depth_and_by_name():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Sequential(nn.Linear(2, 3), nn.ReLU()), nn.Linear(3, 1))
    loss = model(mg.randn(4, 2)).sum()
    trace = Trace.of(loss, model)
    assert trace.groups == ["0", "0.0", "0.1", "1"]
    assert {k for k in view_graph(trace, collapse=1).boxes if k.startswith("g_")} == {"g_0", "g_1"}
    assert {k for k in view_graph(trace, collapse=["0.1"]).boxes if k.startswith("g_")} == {"g_0.1"}
    with pytest.raises(ValueError, match="no group named 'decoder'.*its groups are 0, 0.0"):
        view_graph(trace, collapse=["decoder"])


def test_a_large_model_graph_collapses_its_layers_automatically_and_says_so():
    mg.manual_seed(0)
    model = nn.Sequential(*[layer for _ in range(40) for layer in (nn.Linear(3, 3), nn.ReLU())])
    loss = model(mg.randn(2, 3)).sum()
    view = GraphView(loss, names=model)
    assert len(view.trace.vertices) > 150
    boxes = box_ids(view.svg)
    assert len(boxes) <= 150 and "g_0" in boxes and "g_79" in boxes
    assert "collapsed automatically" in view.header.value


def test_a_5000_op_loop_is_drawn_as_one_box_for_the_chain():
    x = mg.tensor([1.0, 2.0], requires_grad=True, label="start")
    y = x
    for _ in range(5000):
        y = y * 1.0001
    view = GraphView(y.sum())
    assert len(box_ids(view.svg)) == 3  # start, the chain, the sum
    assert "Mul x 5000" in view.svg
    assert "5000 ops forming 1 chain of one kind of op (a loop)" in view.header.value


def test_a_5000_op_graph_that_does_not_fold_is_cut_to_the_ops_nearest_the_output():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(2500):
        y = y * 1.0001 + 0.001  # Mul, Add, Mul, ...: no run of one kind of op
    view = GraphView(y.sum(), backend="python")
    boxes = box_ids(view.svg)
    assert len(boxes) == 151 and "more" in boxes and view.trace.root_key in boxes
    assert "showing the 150 nearest the output" in view.header.value
    assert "max_nodes=5002" in view.header.value


def test_edges_are_coloured_by_the_gradient_that_flowed_along_them():
    x = mg.tensor([1.0, 2.0], requires_grad=True, label="x")
    zero = (x * 0.0).sum()
    huge = (x * 1e6).sum()
    broken = (x - 1.0).sqrt()  # d sqrt(0) = inf
    loss = zero + huge + broken.sum()
    view = GraphView(loss)
    loss.backward()
    view.refresh()
    statuses = {a.grad.status for a in view_graph(view.trace).arrows if a.grad is not None}
    assert {"zero", "exploding", "nonfinite", "ok"} <= statuses
    for status in ("zero", "exploding", "nonfinite"):
        assert EDGE_COLOUR[status] in view.svg
    assert "NaN or Inf in the gradient" in view.legend.value


# --- GraphView ---------------------------------------------------------------------------------


def test_graph_view_made_before_backward_shows_every_edge_s_gradient_after_it():
    model, loss = mlp_loss()
    view = GraphView(loss, names=model)
    assert "Edges show the gradient" not in view.header.value
    loss.backward()
    view.refresh()
    assert "Edges show the gradient" in view.header.value
    assert all(e.grad is not None for e in view.trace.edges if e.source != "t0")
    assert "norm " in view.svg  # edge labels


def test_graph_view_redraws_after_the_cell_that_ran_backward():
    from minigrad.widgets import graph_view

    model, loss = mlp_loss()
    view = GraphView(loss, names=model)
    before = view.svg
    loss.backward()
    graph_view._redraw_views()  # what IPython's post_run_cell event calls
    assert view.svg != before and "norm " in view.svg


def test_graph_view_of_a_freed_graph_says_retain_graph_keeps_it():
    _, loss = mlp_loss()
    loss.backward()
    view = GraphView(loss)
    assert view.trace.freed
    assert "freed by <code>backward()</code>" in view.header.value
    assert "retain_graph=True" in view.header.value
    assert "make the view before" in view.header.value  # leaves still show their .grad


def test_selecting_a_node_shows_its_context_inspector_and_marks_it():
    _, loss = mlp_loss()
    view = GraphView(loss)
    view.select(loss.grad_fn)
    assert view.selected is loss.grad_fn
    assert view.selector.value == view.trace.root_key
    (inspector,) = view.panel.children
    assert isinstance(inspector, ContextInspector) and inspector.node is loss.grad_fn
    assert "mg_selected" in classes_of(view.svg, view.trace.root_key)
    assert "saved tensors" in view.to_html()


def test_choosing_in_the_dropdown_selects_and_a_second_choice_reuses_the_inspector():
    _, loss = mlp_loss()
    view = GraphView(loss)
    keys = [key for _, key in view.selector.options if key.startswith("n")]
    assert keys[0] == view.trace.root_key  # the output's op first
    view.selector.value = keys[0]
    inspector = view.panel.children[0]
    view.selector.value = keys[1]
    assert view.panel.children[0] is inspector and inspector.node is view.selected
    view.selector.value = ""
    assert view.selected is None and view.panel.children == ()


def test_selecting_a_leaf_shows_its_tensor_view():
    model, loss = mlp_loss()
    view = GraphView(loss, names=model)
    view.select(model[0].weight)
    assert view.selected is model[0].weight
    assert isinstance(view.panel.children[0], TensorView)


def test_clicking_a_box_in_the_drawing_selects_it():
    _, loss = mlp_loss()
    view = GraphView(loss)
    if not view.canvas.clickable:
        need("anywidget", "pip install anywidget (part of the jupyter extra)")
    view.canvas.clicked = view.trace.root_key  # what the page sends on a click
    assert view.selected is loss.grad_fn
    assert view.canvas.clicked == ""  # ready for the next click


def test_collapse_checkbox_redraws_with_one_box_per_layer():
    model, loss = mlp_loss()
    view = GraphView(loss, names=model)
    view.collapse_box.value = True
    assert "g_0" in box_ids(view.svg)
    view.collapse_box.value = False
    assert "g_0" not in box_ids(view.svg)


def test_refresh_with_a_new_root_draws_the_new_graph():
    model, loss = mlp_loss()
    view = GraphView(loss, names=model)
    second = (model(mg.randn(2, 4)) ** 2).mean()
    view.refresh(second)
    assert view.trace.root is second and view.selected is None
    assert view.trace.vertex(second.grad_fn).is_root


def test_lazy_graph_is_drawn_dashed_until_realized():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.lazy():
        y = (x * 2).exp().sum()
    view = GraphView(y)
    assert not y.is_realized  # the view did not compute it
    assert "not computed yet" in view.header.value
    assert "mg_pending" in classes_of(view.svg, view.trace.root_key)
    y.realize()
    view.refresh()
    assert "mg_pending" not in classes_of(view.svg, view.trace.root_key)


def test_graph_view_leaves_a_static_picture_and_a_short_text_in_the_notebook():
    _, loss = reused_loss()
    view = GraphView(loss)
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"] == view.to_html() and "<svg" in bundle["text/html"]
    assert bundle["text/plain"] == "GraphView(graph of 6 ops and 2 leaves)"
