"""GradientFlow: per-parameter gradient norms, their history and the warnings, read from
real training (two moons, a small MLP, SGD)."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from conftest import output_of_two_fresh_processes

pytest.importorskip("ipywidgets", reason="pip install -e .[jupyter]")
pytest.importorskip("matplotlib", reason="pip install -e .[jupyter]")

import ipywidgets  # noqa: E402

import minigrad as mg  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from minigrad import nn  # noqa: E402
from minigrad.data import make_moons  # noqa: E402
from minigrad.widgets.gradient_flow import GradientFlow  # noqa: E402
from minigrad.widgets.trace import EXPLODING  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")  # a warning would land in a notebook


def moons_model():
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    x, y = make_moons(n_samples=64, noise=0.1)
    return model, mg.tensor(x), mg.tensor(y)


def train(model, x, y, flow, steps, loss_scale=1.0):
    """A few SGD steps, with flow.update() between backward and step."""
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y) * loss_scale
        optimizer.zero_grad()
        loss.backward()
        flow.update()
        optimizer.step()


def test_norms_equal_the_numpy_norm_of_each_gradient():
    model, x, y = moons_model()
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=3)
    for name, p in model.named_parameters():
        expected = np.linalg.norm(p.grad.numpy().astype(np.float64))
        assert flow.stats[name].norm == pytest.approx(expected, rel=1e-6)
        assert flow.history[name][-1] == pytest.approx(expected, rel=1e-6)


def test_bars_follow_named_parameters_order():
    model, _, _ = moons_model()
    flow = GradientFlow(model)
    names = [name for name, _ in model.named_parameters()]
    assert flow.names == names
    html = flow.to_html()
    positions = [html.index(f">{name}<") for name in names]
    assert positions == sorted(positions)


def test_parameters_without_grad_are_shown_as_no_grad_not_zero():
    model, _, _ = moons_model()
    flow = GradientFlow(model)
    flow.update()  # before any backward
    assert all(stats is None for stats in flow.stats.values())
    assert all(math.isnan(norms[0]) for norms in flow.history.values())
    assert flow.warnings == []
    assert flow.to_html().count(">no grad<") == 4


def test_a_zero_weight_makes_the_gradients_before_it_zero_and_warns():
    model, x, y = moons_model()
    model[2].weight.data[...] = 0  # nothing flows back through the last layer
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=1)
    assert flow.stats["0.weight"].status == "zero"
    assert flow.stats["0.bias"].status == "zero"
    assert flow.stats["2.weight"].status == "ok"
    assert "zero: 0.weight (all zeros)" in flow.warnings
    assert "zero: 0.weight (all zeros)" in flow.to_html()


def test_a_tiny_weight_makes_the_gradients_before_it_vanish():
    model, x, y = moons_model()
    model[2].weight.data[...] *= 1e-9
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=1)
    assert flow.stats["0.weight"].status == "vanishing"
    norm = flow.stats["0.weight"].norm
    assert f"vanishing: 0.weight (norm {norm:.4g})" in flow.warnings


def test_a_huge_loss_makes_gradients_explode():
    model, x, y = moons_model()
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=1, loss_scale=1e8)
    assert flow.stats["2.weight"].status == "exploding"
    assert flow.stats["2.weight"].norm > EXPLODING
    assert any(w.startswith("exploding: 2.weight (norm ") for w in flow.warnings)


def test_a_nan_gradient_is_marked_non_finite():
    model, x, y = moons_model()
    x.data[0, 0] = np.nan  # one bad sample poisons every gradient
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=1)
    assert flow.stats["0.weight"].status == "nonfinite"
    assert "non-finite: 0.weight (NaN!)" in flow.warnings
    assert math.isnan(flow.history["0.weight"][0])
    assert ">NaN!<" in flow.to_html()


def test_no_warnings_when_gradients_are_healthy():
    model, x, y = moons_model()
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=2)
    assert flow.warnings == []
    assert "no vanishing or exploding gradients at update 2" in flow.to_html()


def test_per_layer_norm_is_the_norm_of_the_layers_gradients_together():
    model, x, y = moons_model()
    flow = GradientFlow(model, per="layer")
    train(model, x, y, flow, steps=1)
    assert flow.names == ["0", "2"]
    for layer in ("0", "2"):
        weight, bias = model[int(layer)].weight.grad.numpy(), model[int(layer)].bias.grad.numpy()
        expected = math.sqrt(np.sum(weight.astype(np.float64) ** 2)
                             + np.sum(bias.astype(np.float64) ** 2))
        assert flow.history[layer] == [pytest.approx(expected, rel=1e-6)]


def test_per_layer_groups_by_module_path():
    model = nn.Sequential(nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 3)), nn.Linear(3, 1))
    assert GradientFlow(model, per="layer").names == ["0.0", "0.1", "1"]
    assert GradientFlow(nn.Linear(2, 2), per="layer").names == ["(model)"]


def test_history_has_one_entry_per_update():
    model, x, y = moons_model()
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=3)
    assert flow.steps == 3
    assert {name: len(norms) for name, norms in flow.history.items()} == dict.fromkeys(
        flow.names, 3)


def test_history_panel_appears_from_the_second_update():
    model, x, y = moons_model()
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=1)
    assert flow.to_html().count("<svg") == 1
    train(model, x, y, flow, steps=1)
    assert flow.to_html().count("<svg") == 2
    assert "gradient norm over updates" in flow.to_html()


def test_update_changes_the_existing_html_children_in_place():
    model, x, y = moons_model()
    flow = GradientFlow(model)
    children, before = flow.children, [child.value for child in flow.children]
    train(model, x, y, flow, steps=1)
    flow.to_html()  # outside a kernel, the pictures are drawn when asked for
    assert flow.children == children
    assert all(isinstance(child, ipywidgets.HTML) for child in children)
    assert [child.value for child in children] != before


def test_accepts_name_tensor_pairs():
    model, x, y = moons_model()
    flow = GradientFlow(model.named_parameters())
    train(model, x, y, flow, steps=1)
    assert flow.names == ["0.weight", "0.bias", "2.weight", "2.bias"]
    only_first = GradientFlow([("first", model[0].weight)])
    only_first.update()
    assert only_first.stats["first"].norm == pytest.approx(flow.stats["0.weight"].norm)


def test_rejects_what_is_not_a_model_or_pairs():
    with pytest.raises(TypeError, match="named_parameters"):
        GradientFlow([1, 2, 3])
    with pytest.raises(ValueError, match="per must be"):
        GradientFlow(nn.Linear(2, 2), per="module")
    with pytest.raises(ValueError, match="no parameters"):
        GradientFlow(nn.ReLU())


def test_summary_is_short_and_stable():
    model, x, y = moons_model()
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=3)
    assert flow.summary() == "GradientFlow(4 parameters, 3 updates)"
    assert repr(flow) == flow.summary()
    # made after a backward, it shows the gradients already there: its first update
    assert GradientFlow(model, per="layer").summary() == "GradientFlow(2 layers, 1 update)"
    assert GradientFlow(moons_model()[0]).summary() == "GradientFlow(4 parameters, 0 updates)"


def test_static_bundle_has_the_html_the_summary_and_the_widget_view():
    model, x, y = moons_model()
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=2)
    bundle = flow._repr_mimebundle_()
    assert bundle["text/html"] == flow.to_html()
    assert bundle["text/plain"] == "GradientFlow(4 parameters, 2 updates)"
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "<?xml" not in bundle["text/html"] and "DOCTYPE" not in bundle["text/html"]


def test_update_prints_nothing(capfd):
    model, x, y = moons_model()
    flow = GradientFlow(model)
    train(model, x, y, flow, steps=2)
    flow.to_html()
    assert capfd.readouterr() == ("", "")


# --- determinism -----------------------------------------------------------------------------

SCRIPT = textwrap.dedent("""
    import minigrad as mg
    import minigrad.nn.functional as F
    from minigrad import nn
    from minigrad.data import make_moons
    from minigrad.widgets.gradient_flow import GradientFlow

    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    x, y = make_moons(n_samples=64, noise=0.1)
    x, y = mg.tensor(x), mg.tensor(y)
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    flow = GradientFlow(model)
    for _ in range(3):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        flow.update()
        optimizer.step()
    print(flow.to_html(), end="")
""")


def test_same_training_gives_identical_html():
    pictures = []
    for _ in range(2):
        mg.manual_seed(0)
        model, x, y = moons_model()
        flow = GradientFlow(model)
        train(model, x, y, flow, steps=3)
        pictures.append(flow.to_html())
    assert pictures[0] == pictures[1]


def test_html_is_identical_in_two_processes():
    first, second = output_of_two_fresh_processes(SCRIPT)
    assert first.startswith("<div><svg") and first == second


def test_outside_a_kernel_update_only_records_and_the_picture_is_drawn_when_asked_for():
    model, x, y = moons_model()
    flow = GradientFlow(model)
    before = [child.value for child in flow.children]
    train(model, x, y, flow, steps=3)
    assert [child.value for child in flow.children] == before  # nothing drawn yet
    assert flow.steps == 3 and all(len(norms) == 3 for norms in flow.history.values())
    assert "update 3" in flow.to_html()  # drawn now, with every update


def test_in_a_kernel_the_live_view_is_drawn_at_a_bounded_rate_then_catches_up(monkeypatch):
    import asyncio

    from minigrad.widgets import gradient_flow

    monkeypatch.setattr(gradient_flow, "in_kernel", lambda: True)
    drawn = []

    async def a_cell(min_interval):  # as in ipykernel: a cell runs inside the event loop
        model, x, y = moons_model()
        flow = GradientFlow(model, min_interval=min_interval)  # drawn once, empty
        real_redraw = flow._redraw
        monkeypatch.setattr(flow, "_redraw", lambda: (drawn.append(flow.steps), real_redraw()))
        train(model, x, y, flow, steps=20)
        return flow

    async def the_kernel(min_interval):
        flow = await a_cell(min_interval)
        during = list(drawn)
        await asyncio.sleep(0)  # the cell is over: the loop runs what was queued
        return flow, during

    flow, during = asyncio.run(the_kernel(3600))
    assert during == []  # every update came within the interval: none was drawn
    assert drawn == [20]  # then one catch-up drawing, of the last update
    assert "update 20" in flow._bars.value
    drawn.clear()
    flow, during = asyncio.run(the_kernel(0))
    assert during == list(range(1, 21)) and drawn == during  # no interval: every update


def test_a_slow_drawing_is_not_repeated_at_every_step(monkeypatch):
    """On a loaded machine one drawing took as long as min_interval, and chapter 9's loop
    redrew at almost every step: the gap now counts from a drawing's end and is at least
    four times what the drawing took."""
    from minigrad.widgets import gradient_flow

    clock = [0.0]  # a fake clock: a step takes 0.125 s, a drawing 1 s
    monkeypatch.setattr(gradient_flow.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(gradient_flow, "in_kernel", lambda: True)
    slow_chart, drawings = gradient_flow.bar_chart, []

    def bar_chart(*args):
        drawings.append(clock[0])
        clock[0] += 1.0
        return slow_chart(*args)

    monkeypatch.setattr(gradient_flow, "bar_chart", bar_chart)
    model, x, y = moons_model()
    flow = GradientFlow(model, min_interval=0.5)  # drawn once, empty: 0 s to 1 s
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(80):  # 10 s of training
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        flow.update()
        optimizer.step()
        clock[0] += 0.125
    # each drawing starts 4 s after the previous one ended (not 0.5 s): three in the 13
    # s, where timing from the drawing's start redrew at all 80 steps
    assert drawings == [0.0, 5.0, 10.0]
    assert flow.steps == 80


def test_recording_an_update_takes_the_norms_without_copying_the_gradients():
    # group_stats (the fast path) gives what grad_stats of the joined arrays gives
    from minigrad.widgets.gradient_flow import group_stats
    from minigrad.widgets.trace import grad_stats

    rng = np.random.default_rng(0)
    for arrays in ([rng.normal(size=(30, 20)).astype(np.float32)],
                   [rng.normal(size=(4, 5)), rng.normal(size=7) * 1e-9],
                   [np.zeros((3, 3), np.float32)],
                   [np.array([1.0, np.nan], np.float32), np.ones(2, np.float32)],
                   [np.array([3e30, 1.0], np.float32)]):  # squares beyond float32
        fast = group_stats(arrays)
        exact = grad_stats(np.concatenate([a.ravel() for a in arrays]))
        assert fast.status == exact.status and fast.shape == exact.shape
        assert fast.nan == exact.nan and fast.inf == exact.inf
        assert fast.max_abs == pytest.approx(exact.max_abs, rel=1e-6, nan_ok=True)
        assert fast.norm == pytest.approx(exact.norm, rel=1e-5, nan_ok=True)
