"""BackwardStepper walks the engine's own backward pass; show() picks the fitting view."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("grandalf")

from widget_graphs import BUILDERS, leaves_of, mlp_loss, reused_loss  # noqa: E402

import minigrad as mg  # noqa: E402
from minigrad.widgets import (BackwardStepper, ContextInspector, GraphView, Message,  # noqa: E402
                              TensorView, show)


def grads(tensors) -> list:
    return [None if t.grad is None else t.grad.numpy().copy() for t in tensors]


def current_box(svg: str) -> str | None:
    match = re.search(r'<g id="([^"]+)" class="[^"]*mg_current', svg.replace("&#45;", "-"))
    return match.group(1) if match else None


@pytest.mark.parametrize("build", sorted(BUILDERS))
def test_run_gives_every_leaf_the_gradient_backward_gives(build):
    thing, loss = BUILDERS[build]()
    stepper = BackwardStepper(loss)
    stepper.run()
    assert stepper.done
    reference_thing, reference_loss = BUILDERS[build]()
    reference_loss.backward()
    for mine, theirs in zip(grads(leaves_of(thing)), grads(leaves_of(reference_thing))):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-7)


def test_steps_are_the_engine_s_backward_steps_in_order():
    _, loss = mlp_loss()
    stepper = BackwardStepper(loss)
    names = []
    while stepper.step() is not None:
        names.append(stepper.current.node.name)
    _, reference = mlp_loss()
    assert names == [step.node.name for step in mg.backward_steps(reference)]
    assert stepper.position == stepper.total == len(names)


def test_step_button_moves_the_highlight_and_the_shown_gradient():
    _, loss = mlp_loss()
    stepper = BackwardStepper(loss)
    assert current_box(stepper.canvas.svg) is None and stepper.position == 0
    stepper.buttons["Step"].click()
    first = (current_box(stepper.canvas.svg), stepper.detail.value)
    assert first[0] == "n4" and "the seed" in first[1]  # the graph's 4th op, its last
    stepper.buttons["Step"].click()
    assert current_box(stepper.canvas.svg) not in (None, first[0])
    assert stepper.detail.value != first[1]
    assert stepper.slider.value == 2


def test_back_replays_from_the_start_to_the_step_before():
    model, loss = mlp_loss()
    stepper = BackwardStepper(loss)
    for _ in range(3):
        stepper.step()
    after_two = BackwardStepper(mlp_loss()[1])
    after_two.go_to(2)
    stepper.buttons["Back"].click()
    assert stepper.position == 2
    assert stepper.current.node.name == after_two.current.node.name
    np.testing.assert_array_equal(stepper.current.grad_inputs[0],
                                  after_two.current.grad_inputs[0])


def test_reset_restores_the_gradients_the_leaves_had_before():
    model, loss = mlp_loss()
    for p in model.parameters():
        p.grad = mg.ones_like(p)  # gradients from an earlier pass
    stepper = BackwardStepper(loss)
    stepper.run()
    assert not np.allclose(model[0].weight.grad.numpy(), 1.0)
    stepper.buttons["Reset"].click()
    assert stepper.position == 0 and not stepper.done
    for p in model.parameters():
        np.testing.assert_array_equal(p.grad.numpy(), np.ones(p.shape))
    stepper.run()  # accumulates on top of them, as backward() would
    reference_model, reference_loss = mlp_loss()
    reference_loss.backward()
    np.testing.assert_allclose(model[0].weight.grad.numpy(),
                               reference_model[0].weight.grad.numpy() + 1, rtol=1e-6)


def test_slider_goes_to_a_position_forward_and_back():
    _, loss = reused_loss()
    stepper = BackwardStepper(loss)
    stepper.slider.value = 4
    assert stepper.position == 4
    stepper.slider.value = 1
    assert stepper.position == 1 and stepper.current.node is loss.grad_fn


def test_accumulation_is_shown_when_a_tensor_feeds_two_functions():
    _, loss = reused_loss()  # h = x * w feeds both exp and sin
    stepper = BackwardStepper(loss)
    stepper.run()  # the last node to run is the Mul that made h
    assert stepper.current.node.name == "Mul"
    assert "accumulated: the sum of 2 gradients" in stepper.detail.value


def test_a_leaf_used_twice_shows_its_second_contribution_being_summed():
    leaves, loss = reused_loss()
    stepper = BackwardStepper(loss)
    stepper.run()
    assert "contribution 2: summed with the earlier ones" in stepper.detail.value
    assert "accumulated into <code>x.grad</code>" in stepper.detail.value


def test_done_disables_step_and_run_and_says_so():
    _, loss = mlp_loss()
    stepper = BackwardStepper(loss)
    stepper.buttons["Run"].click()
    assert stepper.done and stepper.buttons["Step"].disabled and stepper.buttons["Run"].disabled
    assert "Backward done" in stepper.status.value
    assert stepper.step() is None


def test_edges_carry_the_gradients_that_travelled_so_far():
    _, loss = mlp_loss()
    stepper = BackwardStepper(loss)
    assert all(e.grad is None for e in stepper.trace.edges)
    stepper.step()
    carried = [e for e in stepper.trace.edges if e.grad is not None]
    assert [e.target for e in carried] == ["n4"]
    stepper.back()
    assert all(e.grad is None for e in stepper.trace.edges)


def test_stepper_of_a_freed_graph_says_how_to_keep_it():
    _, loss = mlp_loss()
    loss.backward()
    with pytest.raises(RuntimeError, match="already freed.*retain_graph=True"):
        BackwardStepper(loss)


def test_stepper_of_a_leaf_says_there_is_nothing_to_step():
    with pytest.raises(ValueError, match="no graph"):
        BackwardStepper(mg.tensor([1.0], requires_grad=True))


def test_stepper_leaves_a_static_picture_and_a_short_text():
    _, loss = mlp_loss()
    stepper = BackwardStepper(loss)
    stepper.step()
    bundle = stepper._repr_mimebundle_()
    assert bundle["text/html"] == stepper.to_html() and "<svg" in bundle["text/html"]
    assert bundle["text/plain"] == "BackwardStepper(step 1 of 4, at CrossEntropy #4)"
    assert "CrossEntropy #4" in stepper.status.value and "CrossEntropy #4" in stepper.detail.value


def test_stepper_on_a_3000_step_loop_draws_the_part_around_the_current_step():
    # issue 30: Graphviz used to fail on the whole 6000-op graph ("longer than 16384?")
    x = mg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0001 + 0.001
    stepper = BackwardStepper(y)
    html = stepper.to_html()
    assert "<svg" in html and "Add #6000" in html
    shown = len(re.findall(r'class="node', stepper.to_html()))
    assert 20 < shown < 400
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert re.search(r"\d+ more earlier ops and leaves not shown", text)
    stepper.step()
    stepper.step()
    assert "Mul #5999" in stepper.status.value and "Mul #5999" in stepper.to_html()
    stepper.run()
    assert x.grad is not None and np.isclose(float(x.grad), 1.0001 ** 3000, rtol=1e-4)


def test_stepper_on_a_1000_step_rnn_starts_with_a_readable_cut():
    mg.manual_seed(0)
    rnn = mg.nn.RNN(4, 8)
    out, _ = rnn(mg.randn(1000, 1, 4))
    stepper = BackwardStepper(out.sum())
    html = stepper.to_html()
    assert "<svg" in html and "not shown" in html
    assert len(re.findall(r'class="node', html)) < 400


# --- show ------------------------------------------------------------------------------------


def test_show_picks_the_fitting_view():
    model, loss = mlp_loss()
    assert isinstance(show(loss), GraphView)
    assert isinstance(show(loss.grad_fn), ContextInspector)
    assert isinstance(show(model[0].weight), TensorView)
    assert isinstance(show(np.eye(3)), TensorView)
    assert type(show(model)).__name__ == "GradientFlow"


def test_show_of_something_else_is_a_message_not_a_traceback():
    view = show("a string")
    assert isinstance(view, Message) and "this is a str" in view.text


def test_show_of_a_freed_graph_is_its_drawing_with_a_note():
    _, loss = mlp_loss()
    loss.backward()
    view = show(loss)
    assert isinstance(view, GraphView) and "retain_graph=True" in view.to_html()


def test_show_of_a_lazy_tensor_draws_it_without_computing_it():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.lazy():
        y = (x * 2).exp().sum()
    view = show(y)
    assert isinstance(view, GraphView) and not y.is_realized
    assert "not computed yet" in view.to_html()


def test_show_of_a_5000_node_graph_is_a_readable_cut():
    x = mg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y + 1.0
    view = show(y)
    assert isinstance(view, GraphView)
    assert view.svg.count('class="node') == 3
    assert "Add x 4999" in view.to_html() and "(a loop)" in view.to_html()


def test_show_turns_an_error_inside_a_view_into_a_message(monkeypatch):
    from minigrad.widgets import graph_view

    def broken(*args, **kwargs):
        raise RuntimeError("the drawing failed")

    monkeypatch.setattr(graph_view, "draw", broken)
    view = show(mlp_loss()[1])
    assert isinstance(view, Message) and "RuntimeError: the drawing failed" in view.text
