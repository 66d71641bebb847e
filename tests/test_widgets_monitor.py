"""TrainingMonitor: the bar's counting over epochs, the metric history, the widget and
the plain-text fallback, and a static picture that is the same on every run."""

from __future__ import annotations

import textwrap
import time
import types

import numpy as np
import pytest
from conftest import output_of_two_fresh_processes

pytest.importorskip("ipywidgets", reason="pip install -e .[jupyter]")
pytest.importorskip("matplotlib", reason="pip install -e .[jupyter]")
pytest.importorskip("tqdm", reason="pip install tqdm")

import ipywidgets  # noqa: E402
from ipywidgets.widgets import widget as widget_module  # noqa: E402

import minigrad as mg  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from minigrad import nn  # noqa: E402
from minigrad.data import DataLoader, TensorDataset, make_moons  # noqa: E402
from minigrad.widgets import monitor as monitor_module  # noqa: E402
from minigrad.widgets.monitor import TrainingMonitor  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")  # a warning would land in a notebook


def widget_monitor(**options):
    """The Jupyter version, made outside a kernel (it is not displayed)."""
    return TrainingMonitor(text=False, **options)


# --- counting steps ----------------------------------------------------------------------------


def test_iterating_advances_the_bar_to_the_length():
    monitor = widget_monitor()
    assert list(monitor(range(10))) == list(range(10))
    assert (monitor.n, monitor.total) == (10, 10)


def test_each_item_is_counted_when_it_is_handed_out():
    monitor = widget_monitor()
    seen = [monitor.n for _ in monitor(range(3))]
    assert seen == [1, 2, 3]


def test_without_total_each_epoch_adds_its_length():
    monitor = widget_monitor()
    for _epoch in range(2):
        for _ in monitor(range(10)):
            pass
        assert monitor.n == monitor.total
    assert (monitor.n, monitor.total) == (20, 20)


def test_a_total_can_cover_several_epochs():
    monitor = widget_monitor(total=30)
    for _epoch in range(3):
        for _ in monitor(range(10)):
            pass
    assert (monitor.n, monitor.total) == (30, 30)
    assert monitor._bar.container.children[1].max == 30


def test_an_iterable_without_length_leaves_the_total_unknown():
    monitor = widget_monitor()
    for _ in monitor(i for i in range(5)):
        pass
    assert (monitor.n, monitor.total) == (5, None)
    assert monitor.summary() == "TrainingMonitor(5 steps)"


def test_update_advances_by_n():
    monitor = widget_monitor(total=100)
    monitor.update()
    monitor.update(4)
    assert monitor.n == 5


def test_counts_the_batches_of_a_data_loader():
    x, y = make_moons(n_samples=100, noise=0.1)
    loader = DataLoader(TensorDataset(x, y), batch_size=32)
    monitor = widget_monitor()
    batches = [xb.shape[0] for xb, _ in monitor(loader)]
    assert batches == [32, 32, 32, 4]
    assert (monitor.n, monitor.total) == (4, 4)


# --- metrics -----------------------------------------------------------------------------------


def test_history_records_tensors_and_floats_as_floats():
    mg.manual_seed(0)
    x, y = make_moons(n_samples=64, noise=0.1)
    loader = DataLoader(TensorDataset(x, y), batch_size=32)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    monitor = widget_monitor()
    losses = []
    for xb, yb in monitor(loader):
        loss = F.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        monitor.log(loss=loss, lr=0.1, batch=np.int64(xb.shape[0]))
        losses.append(loss.item())
    assert monitor.history["loss"] == [(1, losses[0]), (2, losses[1])]
    assert monitor.history["lr"] == [(1, 0.1), (2, 0.1)]
    assert monitor.history["batch"] == [(1, 32.0), (2, 32.0)]
    assert all(type(value) is float for points in monitor.history.values()
               for _, value in points)


def test_log_takes_an_explicit_step():
    monitor = widget_monitor()
    monitor.log(step=7, accuracy=0.5)
    assert monitor.history == {"accuracy": [(7, 0.5)]}


def test_log_rejects_what_is_not_a_number():
    monitor = widget_monitor()
    with pytest.raises(TypeError, match="loss must be a number"):
        monitor.log(loss=np.ones(3))
    with pytest.raises(TypeError, match="loss must be a number"):
        monitor.log(loss="low")
    with pytest.raises(TypeError, match="at least one metric"):
        monitor.log()
    assert monitor.history == {}


def test_latest_is_the_last_value_of_each_metric():
    monitor = widget_monitor()
    monitor.log(loss=1.0)
    monitor.log(loss=0.5, accuracy=0.75)
    assert monitor.latest == {"loss": 0.5, "accuracy": 0.75}


# --- the widget --------------------------------------------------------------------------------


def test_widget_holds_the_notebook_bar_and_html_children():
    monitor = widget_monitor(total=10)
    bar, status, curves = monitor.children
    assert bar is monitor._bar.container
    assert isinstance(status, ipywidgets.HTML) and isinstance(curves, ipywidgets.HTML)


def test_logging_updates_the_existing_html_in_place():
    monitor = widget_monitor(total=10, min_interval=0)
    children = monitor.children
    for _ in monitor(range(3)):
        monitor.log(loss=0.5)
    assert monitor.children == children
    assert "step 3/10: loss 0.5" in children[1].value
    assert children[2].value.startswith("<svg")


def test_curves_are_redrawn_at_most_every_min_interval_and_on_close():
    monitor = widget_monitor(total=10, min_interval=3600)
    curves = monitor.children[2]
    monitor.update()
    monitor.log(loss=1.0)
    assert curves.value == ""  # drawn when made, not again within the hour
    monitor.close()
    assert curves.value.startswith("<svg") and ">1<" in curves.value


def test_a_drawing_slower_than_min_interval_does_not_redraw_at_every_step(monkeypatch):
    clock = [0.0]  # a fake clock: only drawing takes time, 1 s per drawing
    monkeypatch.setattr(monitor_module.time, "monotonic", lambda: clock[0])
    monitor = widget_monitor(total=10, min_interval=0.5)
    drawings = []
    slow_svg = monitor._curves_svg

    def curves_svg():
        clock[0] += 1.0
        drawings.append(clock[0])
        return slow_svg()

    monkeypatch.setattr(monitor, "_curves_svg", curves_svg)
    clock[0] = 1.0
    for step in range(8):
        monitor.log(step=step, loss=1.0)
        clock[0] += 0.1  # a training step
    # drawn at step 0 (ending at 2.0 s) and at step 5 (2.5 s: 0.5 s of training later),
    # not at every step, as when the interval was timed from the drawing's start
    assert drawings == pytest.approx([2.0, 3.5])


def test_the_end_of_an_epoch_draws_at_most_every_min_interval_and_close_draws(monkeypatch):
    clock = [0.0]  # a fake clock: a step takes 0.1 s, drawing takes no time
    monkeypatch.setattr(monitor_module.time, "monotonic", lambda: clock[0])
    monitor = widget_monitor(total=40, min_interval=0.9)
    drawings = []
    fast_svg = monitor._curves_svg

    def curves_svg():
        drawings.append(round(clock[0], 1))
        return fast_svg()

    monkeypatch.setattr(monitor, "_curves_svg", curves_svg)
    clock[0] = 10.0
    for _ in range(20):  # 20 epochs of 2 steps: an epoch ends every 0.2 s
        for _ in monitor(range(2)):
            clock[0] += 0.1
    assert drawings == pytest.approx([10.2, 11.2, 12.2, 13.2])  # not 20 (one an epoch)
    monitor.close()
    assert drawings[-1] == pytest.approx(14.0) and len(drawings) == 5  # the final state


def test_metrics_chooses_what_is_plotted():
    monitor = widget_monitor(metrics=["loss"])
    monitor.log(loss=0.5, lr=0.01)
    html = monitor.to_html()
    assert "lr 0.01" in html  # in the text line
    assert html.count("<svg") == 1 and ">lr<" not in html  # but not plotted
    assert monitor.history["lr"] == [(0, 0.01)]


def test_a_metric_named_but_not_logged_yet_gets_an_empty_panel():
    monitor = widget_monitor(metrics=["loss", "accuracy"])
    monitor.log(loss=0.5)
    assert "not logged yet" in monitor.to_html()


def test_context_manager_closes_the_monitor():
    with widget_monitor(total=4) as monitor:
        for _ in monitor(range(4)):
            monitor.log(loss=0.25)
    assert monitor._closed
    assert monitor._bar.container.children[1].bar_style == "success"


def test_widget_mode_prints_nothing(capfd):
    monitor = widget_monitor(min_interval=0)
    for _ in monitor(range(5)):
        monitor.log(loss=1.0)
    monitor.close()
    assert capfd.readouterr() == ("", "")


# --- the plain-text fallback -------------------------------------------------------------------


def test_outside_a_kernel_the_monitor_is_text():
    assert not monitor_module.in_kernel()
    assert TrainingMonitor().text


def test_inside_a_kernel_the_monitor_is_a_widget(monkeypatch):
    import IPython

    shell = types.SimpleNamespace(kernel=object())
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    assert monitor_module.in_kernel()
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace())
    assert not monitor_module.in_kernel()  # a terminal IPython has no kernel


def test_text_fallback_prints_a_line_per_epoch_and_the_bar_on_stderr(capsys):
    monitor = TrainingMonitor(text=True)
    for epoch in range(2):
        for _ in monitor(range(4)):
            monitor.log(loss=1.0 / (1 + monitor.n))
        monitor.log(accuracy=0.5 + epoch / 4)
    monitor.close()
    out, err = capsys.readouterr()
    assert out.splitlines() == ["step 4/4: loss 0.2, accuracy 0.5",
                                "step 8/8: loss 0.1111, accuracy 0.75"]
    assert "8/8" in err


def test_text_fallback_creates_no_widgets_of_its_own():
    before = set(widget_module._instances)
    monitor = TrainingMonitor(text=True)
    for _ in monitor(range(3)):
        monitor.log(loss=1.0)
    monitor.close()
    created = {widget_module._instances[key] for key in set(widget_module._instances) - before}
    assert created == {monitor, monitor.layout}  # the (empty) box itself and its layout
    assert monitor.children == ()


# --- the static picture ------------------------------------------------------------------------


def test_summary_is_short_and_stable():
    monitor = widget_monitor(total=200)
    monitor.update(120)
    monitor.log(loss=0.34123)
    assert monitor.summary() == "TrainingMonitor(120/200 steps, loss 0.3412)"


def test_static_bundle_has_the_html_the_summary_and_the_widget_view():
    monitor = widget_monitor(total=10)
    for _ in monitor(range(5)):
        monitor.log(loss=0.5)
    bundle = monitor._repr_mimebundle_()
    assert bundle["text/html"] == monitor.to_html()
    assert bundle["text/plain"] == "TrainingMonitor(5/10 steps, loss 0.5)"
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert 'style="width: 50.0%' in bundle["text/html"]  # the drawn bar, half full


def test_static_html_leaves_out_rate_eta_and_elapsed_time():
    pictures = []
    for pause in (0.0, 0.05):
        monitor = widget_monitor(total=10)
        for step in monitor(range(4)):
            time.sleep(pause)
            monitor.log(loss=1.0 / (step + 1))
        pictures.append(monitor.to_html())
    assert pictures[0] == pictures[1]
    assert "step/s" not in pictures[0] and "00:0" not in pictures[0]


SCRIPT = textwrap.dedent("""
    from minigrad.widgets.monitor import TrainingMonitor

    monitor = TrainingMonitor(total=30, text=False)
    for epoch in range(3):
        for step in monitor(range(10)):
            monitor.log(loss=1.0 / (1 + monitor.n))
        monitor.log(accuracy=0.5 + epoch / 10)
    monitor.close()
    print(monitor.to_html(), end="")
""")


def test_html_is_identical_in_two_processes():
    first, second = output_of_two_fresh_processes(SCRIPT)
    assert "<svg" in first and first == second
