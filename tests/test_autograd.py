"""Autograd semantics: accumulation, retain_graph, hooks, grad modes, in-place checks,
releasing saved arrays, long graphs, and the backward iterator."""

from __future__ import annotations

import gc
import sys
import weakref

import numpy as np
import pytest

import minigrad as mg


def leaf(*shape, seed=0, dtype=np.float64):
    data = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return mg.Tensor(data, requires_grad=True)


# --- accumulation and retain_graph ---------------------------------------------------------


def test_gradients_accumulate_across_backward_calls():
    x = leaf(3)
    (x * x).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (2 * x.numpy()))


def test_setting_grad_to_none_starts_afresh():
    x = leaf(3)
    (x * x).sum().backward()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 3.0))


def test_zero_on_grad_resets_it_in_place():
    x = leaf(3)
    (x * x).sum().backward()
    grad = x.grad
    x.grad.zero_()
    (x * 3).sum().backward()
    assert x.grad is grad
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 3.0))


def test_second_backward_without_retain_graph_raises():
    x = leaf(3)
    loss = (x.exp() * x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        loss.backward()


def test_retain_graph_allows_a_second_backward_that_accumulates():
    x = leaf(3)
    loss = (x.exp() * x).sum()
    loss.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)
    np.testing.assert_allclose(first, np.exp(x.numpy()) * (x.numpy() + 1))


def test_non_scalar_backward_without_gradient_raises():
    x = leaf(2, 3)
    with pytest.raises(RuntimeError, match=r"\(2, 3\)"):
        (x * 2).backward()


def test_backward_with_gradient_works_for_non_scalars():
    x = leaf(2, 3)
    upstream = np.random.default_rng(5).standard_normal((2, 3))
    (x * x).backward(gradient=mg.Tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), upstream * 2 * x.numpy())


def test_backward_of_a_leaf_sets_its_grad_to_the_seed():
    x = mg.tensor(3.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


def test_a_tensor_used_twice_accumulates_both_gradients():
    x = leaf(4)
    (x * x.exp()).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.numpy()) * (1 + x.numpy()))


def test_a_tensor_used_in_two_branches_of_a_diamond():
    x = leaf(4)
    h = x * 2
    (h.sin() + h.cos()).sum().backward()
    expected = 2 * (np.cos(2 * x.numpy()) - np.sin(2 * x.numpy()))
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_leaf_that_does_not_require_grad_gets_no_grad():
    x, c = leaf(3), mg.Tensor(np.ones(3))
    (x * c).sum().backward()
    assert c.grad is None


# --- non-leaf grads, retain_grad, hooks ----------------------------------------------------


def test_non_leaf_grad_is_none_by_default():
    x = leaf(3)
    h = x * 2
    h.sum().backward()
    assert h.grad is None


def test_retain_grad_keeps_a_non_leaf_gradient():
    x = leaf(3)
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    assert h.retains_grad
    np.testing.assert_allclose(h.grad.numpy(), 2 * h.numpy())
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * h.numpy())


def test_hook_on_a_leaf_is_called_with_its_gradient():
    x = leaf(3)
    seen = []
    x.register_hook(lambda grad: seen.append(grad.numpy().copy()))
    (x * 3).sum().backward()
    (seen_grad,) = seen
    np.testing.assert_allclose(seen_grad, np.full(3, 3.0))


def test_hook_on_a_non_leaf_is_called_with_its_gradient():
    x = leaf(3)
    h = x.exp()
    seen = []
    h.register_hook(lambda grad: seen.append(grad.numpy().copy()))
    (h * 5).sum().backward()
    (seen_grad,) = seen
    np.testing.assert_allclose(seen_grad, np.full(3, 5.0))


def test_a_tensor_returned_by_a_hook_replaces_the_gradient():
    x = leaf(3)
    h = x * 2
    h.register_hook(lambda grad: grad * 10)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 20.0))


def test_a_hook_on_a_leaf_can_replace_what_is_accumulated():
    x = leaf(3)
    x.register_hook(lambda grad: grad * 0)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))


def test_a_removed_hook_is_not_called():
    x = leaf(3)
    h = x * 2
    calls = []
    handle = h.register_hook(lambda grad: calls.append(1) or grad * 10)
    handle.remove()
    h.sum().backward()
    assert calls == []
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))


def test_hooks_run_in_registration_order_and_chain():
    x = leaf(2)
    order = []
    x.register_hook(lambda grad: order.append("first") or grad + 1)
    x.register_hook(lambda grad: order.append("second") or grad * 10)
    x.sum().backward()
    assert order == ["first", "second"]
    np.testing.assert_allclose(x.grad.numpy(), np.full(2, 20.0))


def test_node_hook_sees_the_gradients_a_node_received_and_produced():
    x, w = leaf(3), leaf(3, seed=1)
    y = x * w
    seen = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(
        ([g.numpy().copy() for g in grad_inputs], [g.numpy().copy() for g in grad_outputs])))
    (y * 3).sum().backward()
    (grad_x, grad_w), (grad_y,) = seen[0]
    np.testing.assert_allclose(grad_y, np.full(3, 3.0))
    np.testing.assert_allclose(grad_x, 3 * w.numpy())
    np.testing.assert_allclose(grad_w, 3 * x.numpy())


def test_node_hook_can_replace_what_the_node_sends_to_its_inputs():
    x = leaf(2)
    y = x.exp()
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 0,))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(2))


def test_node_hook_with_the_wrong_number_of_gradients_names_the_node():
    x = leaf(2)
    y = x * 2.0
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (None, None, None))
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' on Mul #\d+ returned 3 "
                                           r"gradient\(s\), but forward received 2 "
                                           r"positional input\(s\)"):
        y.sum().backward()


def test_removed_node_hook_is_not_called_and_retain_graph_is_remembered():
    x = leaf(2)
    y = x.exp()
    calls = []
    handle = y.grad_fn.register_hook(lambda *grads: calls.append(1))
    y.sum().backward(retain_graph=True)
    handle.remove()
    y.sum().backward()
    assert calls == [1]
    assert y.grad_fn.retained and y.grad_fn.released


def test_input_meta_gives_none_for_a_none_constant_and_shapes_for_freed_inputs():
    x = leaf(1, 1, 4, 4, dtype=np.float32)
    y = mg.nn.Conv2d(1, 2, 3, bias=False)(x)  # the bias argument is a None constant
    z = y.exp().sum()
    assert y.grad_fn.input_meta[2] is None
    z.backward()  # frees Exp: its input (y) is gone, its shape is not
    exp_node = z.grad_fn.next_functions[0][0]
    assert exp_node.args[0] is None and exp_node.input_meta[0] == ((1, 2, 2, 2), np.float32)


# --- grad modes ----------------------------------------------------------------------------


def test_no_grad_records_nothing():
    x = leaf(3)
    with mg.no_grad():
        y = x * 2
        assert not mg.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad
    assert mg.is_grad_enabled()


def test_enable_grad_inside_no_grad_records():
    x = leaf(3)
    with mg.no_grad():
        with mg.enable_grad():
            y = x * 2
            assert mg.is_grad_enabled()
        assert not mg.is_grad_enabled()
    assert y.grad_fn is not None


def test_set_grad_enabled_as_a_context_manager_restores_the_previous_mode():
    with mg.set_grad_enabled(False):
        assert not mg.is_grad_enabled()
        with mg.set_grad_enabled(True):
            assert mg.is_grad_enabled()
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()


def test_set_grad_enabled_as_a_function_switches_until_switched_back():
    mg.set_grad_enabled(False)
    try:
        assert not mg.is_grad_enabled()
        assert (leaf(2) * 2).grad_fn is None
    finally:
        mg.set_grad_enabled(True)
    assert mg.is_grad_enabled()


def test_grad_modes_restore_the_previous_mode_after_an_exception():
    with pytest.raises(KeyError):
        with mg.no_grad():
            raise KeyError("inside")
    assert mg.is_grad_enabled()


@pytest.mark.parametrize("make_decorator, inside", [
    (mg.no_grad, False), (lambda: mg.set_grad_enabled(False), False), (mg.enable_grad, True),
])
def test_grad_modes_work_as_decorators(make_decorator, inside):
    @make_decorator()
    def mode_inside():
        return mg.is_grad_enabled()

    assert mg.is_grad_enabled()  # decorating switches nothing
    with mg.set_grad_enabled(not inside):
        assert mode_inside() is inside
        assert mg.is_grad_enabled() is (not inside)  # restored after the call


def test_decorating_with_set_grad_enabled_switches_nothing_until_called():
    @mg.set_grad_enabled(False)
    def compute(x):
        return x * 2

    assert mg.is_grad_enabled()
    assert (leaf(2) * 2).grad_fn is not None
    assert compute(leaf(2)).grad_fn is None


def test_a_recursive_function_decorated_with_no_grad_restores_grad_mode():
    @mg.no_grad()
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    assert depth(3) == 3
    assert mg.is_grad_enabled()


def test_detach_cuts_the_graph():
    x = leaf(3)
    y = (x * 2).detach() * x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


# --- long graphs -------------------------------------------------------------------------


def test_a_100000_node_chain_backpropagates_without_recursion():
    # (its speed is measured by `python -m bench chain`, not asserted here: a timed
    # assertion fails on a busy machine)
    limit = sys.getrecursionlimit()
    x0 = mg.tensor([1.0], requires_grad=True)
    x = x0
    for _ in range(100_000):
        x = x * 1.0001
    x.sum().backward()
    assert sys.getrecursionlimit() == limit
    factor = float(np.float32(1.0001))
    np.testing.assert_allclose(x0.grad.numpy(), [factor ** 100_000], rtol=1e-2)


# --- releasing saved arrays ------------------------------------------------------------------


def make_saves_fresh_array(refs: list):
    class SavesFreshArray(mg.Function):
        """f(x) = 3x, saving a freshly allocated array only backward uses"""

        @staticmethod
        def forward(ctx, x):
            scratch = np.full_like(x, 3.0)
            refs.append(weakref.ref(scratch))
            ctx.save_for_backward(scratch)
            return x * 3

        @staticmethod
        def backward(ctx, grad_output):
            (scratch,) = ctx.saved_tensors
            return grad_output * scratch

    return SavesFreshArray


def test_saved_arrays_are_released_after_backward():
    refs = []
    x = leaf(3)
    y = make_saves_fresh_array(refs).apply(x)
    loss = y.sum()
    assert refs[0]() is not None
    loss.backward()
    gc.collect()
    assert refs[0]() is None
    assert y.grad_fn.ctx.saved_tensors_released


def test_saved_arrays_are_kept_with_retain_graph():
    refs = []
    x = leaf(3)
    y = make_saves_fresh_array(refs).apply(x)
    y.sum().backward(retain_graph=True)
    gc.collect()
    assert refs[0]() is not None
    assert len(y.grad_fn.ctx.saved_tensors) == 1


def test_reading_saved_tensors_after_backward_raises_mentioning_retain_graph():
    x = leaf(3)
    y = make_saves_fresh_array([]).apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        y.grad_fn.ctx.saved_tensors


# --- in-place edits ---------------------------------------------------------------------------


def test_in_place_edit_of_a_saved_output_makes_backward_raise_naming_the_function():
    x = leaf(3)
    y = x.exp()
    y[0] = 5
    with pytest.raises(RuntimeError, match=r"Exp"):
        y.sum().backward()


def test_in_place_edit_of_a_saved_input_makes_backward_raise():
    x = leaf(3)
    h = x * 1
    y = h.sin()  # saves h
    h += 1
    with pytest.raises(RuntimeError, match=r"Sin.*in-place"):
        y.sum().backward()


def test_in_place_edit_of_an_unsaved_tensor_is_fine():
    x = leaf(3)
    y = x * 1
    y += 1
    (y * y).sum().backward()
    np.testing.assert_allclose(y.numpy(), x.numpy() + 1)
    np.testing.assert_allclose(x.grad.numpy(), 2 * (x.numpy() + 1))


def test_setitem_on_a_non_leaf_is_a_recorded_in_place_op():
    x, v = leaf(4), leaf(seed=1)
    y = x * 2
    y[1] = v
    assert y.grad_fn.name == "SetItem"
    (y * mg.Tensor(np.arange(1.0, 5.0))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 0.0, 6.0, 8.0])
    np.testing.assert_allclose(v.grad.numpy(), 2.0)


def test_in_place_on_a_leaf_that_requires_grad_raises():
    x = leaf(3)
    with pytest.raises(RuntimeError, match=r"leaf"):
        x += 1
    with pytest.raises(RuntimeError, match=r"leaf"):
        x[0] = 2.0


def test_in_place_on_a_leaf_works_under_no_grad():
    x = leaf(3)
    before = x.numpy().copy()
    with mg.no_grad():
        x -= 0.5
        x[0] = 7.0
    np.testing.assert_allclose(x.numpy()[1:], before[1:] - 0.5)
    assert x.numpy()[0] == 7.0 and x.is_leaf and x.requires_grad


# --- the backward iterator ----------------------------------------------------------------------


def small_network(seed=0):
    rng = np.random.default_rng(seed)
    x = mg.Tensor(rng.standard_normal((4, 3)))
    w1 = mg.Tensor(rng.standard_normal((3, 5)), requires_grad=True)
    b1 = mg.Tensor(rng.standard_normal(5), requires_grad=True)
    w2 = mg.Tensor(rng.standard_normal((5, 1)), requires_grad=True)
    hidden = (x @ w1 + b1).tanh()
    loss = ((hidden @ w2) ** 2).mean() + (w1 * w1).sum() * 0.01
    return loss, (w1, b1, w2)


def test_backward_steps_visits_every_node_once():
    loss, _ = small_network()
    nodes = mg.walk([loss.grad_fn], lambda n: (p for p, _ in n.next_functions if p))
    steps = list(mg.backward_steps(loss))
    assert all(isinstance(s, mg.BackwardStep) for s in steps)
    assert sorted(s.node.id for s in steps) == sorted(n.id for n in nodes)


def test_backward_steps_run_each_node_after_every_node_that_uses_it():
    loss, _ = small_network()
    steps = list(mg.backward_steps(loss))
    position = {s.node: i for i, s in enumerate(steps)}
    for step in steps:
        for parent, _ in step.node.next_functions:
            if parent is not None:
                assert position[parent] > position[step.node]


def test_backward_steps_run_to_the_end_give_the_same_grads_as_backward():
    loss, params = small_network()
    for _ in mg.backward_steps(loss):
        pass
    reference_loss, reference_params = small_network()
    reference_loss.backward()
    for param, reference in zip(params, reference_params):
        np.testing.assert_array_equal(param.grad.numpy(), reference.grad.numpy())


def test_backward_steps_report_the_gradients_each_node_received_and_sent():
    x = leaf(3)
    sum_step, exp_step = mg.backward_steps(x.exp().sum())
    assert (sum_step.node.name, exp_step.node.name) == ("Sum", "Exp")
    np.testing.assert_array_equal(sum_step.grad_outputs[0], 1.0)
    np.testing.assert_array_equal(sum_step.grad_inputs[0], np.ones(3))
    np.testing.assert_array_equal(exp_step.grad_outputs[0], np.ones(3))
    np.testing.assert_allclose(exp_step.grad_inputs[0], np.exp(x.numpy()))


def test_a_second_backward_through_ops_that_saved_nothing_works_as_in_pytorch(torch):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x + x  # Add saves nothing, so there is nothing to release
    y.sum().backward()
    y.sum().backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx + tx
    ty.sum().backward()
    ty.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_a_second_backward_through_an_op_that_saved_arrays_still_raises():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError, match=r"Mul.*retain_graph=True"):
        y.sum().backward()


def test_backward_frees_intermediate_results_so_their_memory_can_go():
    x = mg.randn(100, requires_grad=True)
    hidden = x.exp()
    alive = weakref.ref(hidden)
    loss = (hidden * 2).sum()
    del hidden  # only the graph refers to it now
    gc.collect()
    assert alive() is not None
    loss.backward()
    gc.collect()
    assert alive() is None
    assert loss.grad_fn.freed and loss.grad_fn.next_functions[0][0] is not None  # edges stay


def test_retain_graph_keeps_intermediate_results_alive():
    x = mg.randn(100, requires_grad=True)
    hidden = x.exp()
    alive = weakref.ref(hidden)
    loss = (hidden * 2).sum()
    del hidden
    loss.backward(retain_graph=True)
    gc.collect()
    assert alive() is not None and not loss.grad_fn.freed


def test_a_freed_node_keeps_its_leaves_and_the_shapes_of_its_inputs():
    w = mg.randn(3, requires_grad=True)
    y = w.exp() * w
    y.sum().backward()
    node = y.grad_fn
    assert node.args[1] is w and node.args[0] is None
    assert node.input_meta == (((3,), np.dtype("float32")), ((3,), np.dtype("float32")))


def test_a_second_backward_through_freed_save_free_ops_sums_gradients_to_the_input_shapes():
    x = mg.ones(2, 3, requires_grad=True)
    y = (x + 1) + mg.ones(3)  # the outer Add broadcasts; its first input is freed
    y.sum().backward()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2.0))


@pytest.mark.parametrize("clip", [5.0, 100.0])
def test_a_leaf_hook_runs_once_on_the_sum_of_its_gradients_as_in_pytorch(clip):
    # x is used three times: PyTorch sums the three gradients before the leaf's hooks run,
    # so a hook that clips sees 3 x**2 once (a per-gradient hook would clip each x**2)
    torch = pytest.importorskip("torch")
    seen = {}
    for lib in (mg, torch):
        calls = []
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        x.register_hook(lambda g, calls=calls: (calls.append(g.detach().numpy().copy()),
                                                 g.clamp(max=clip))[1])
        (x * x * x).sum().backward()
        seen[lib.__name__] = (calls, x.grad.detach().numpy().copy())
    (ours, our_grad), (theirs, their_grad) = seen["minigrad"], seen["torch"]
    assert len(ours) == len(theirs) == 1
    np.testing.assert_allclose(ours[0], theirs[0])
    np.testing.assert_allclose(our_grad, their_grad)
    np.testing.assert_allclose(our_grad, np.minimum(3 * np.array([1.0, 4.0, 9.0]), clip))
