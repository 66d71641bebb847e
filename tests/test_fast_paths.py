"""What the engine's speed-ups must not change (bench/ measures the speed; this checks
the behaviour they could break):

- backward reuses big gradient arrays it made itself (no copy into a leaf's ``.grad``,
  in-place sums) but never an array someone else holds: two leaves never share a
  ``.grad``, a user's ``gradient=`` and a Function's saved arrays are never written, and
  an array a step of ``mg.backward_steps`` showed never changes afterwards (the step
  iterator runs the same branches as ``backward()``);
- the graph clock that replaced per-op version records still catches every in-place
  edit of a saved array (through a view, a detached copy, an optimizer step);
- a graph node is its Function's ctx, as in PyTorch;
- optimizers update parameters in place and move their version on;
- the fused ``Linear`` is one node; max pooling with NaN in a window; ReLU's two paths;
- backward looks for hooks on a node's outputs only when one has some (a flag the tensor
  sets on its node): hooks and ``retain_grad`` still run, whenever they were registered,
  and around an in-place op as in PyTorch (hooks from before on the old value's gradient,
  once);
- a gradient of the wrong shape or dtype is still fitted (the usual one passes one check);
- a node's fields are slots: a Function can still keep anything on its ctx.
- a training step's arrays are not page-faulted in again every step (allocator.py).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.reuse import ADOPT_MIN_SIZE

BIG = (ADOPT_MIN_SIZE + 100,)  # big enough for backward to reuse arrays


def leaf(shape=BIG, seed=0, dtype=np.float32):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype),
                     requires_grad=True)


class SameGradientTwice(mg.Function):
    """f(a, b) = a + b, whose backward returns ONE new array for both inputs."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad_output):
        grad = grad_output * 1.0  # new, and given to both inputs
        return grad, grad


class ReturnsWhatItSaved(mg.Function):
    """f(x) = x * c with c saved; backward returns the saved array itself when the
    incoming gradient is all ones (correct then, and a trap for array reuse)."""

    @staticmethod
    def forward(ctx, x, c):
        ctx.save_for_backward(c)
        return x * c

    @staticmethod
    def backward(ctx, grad_output):
        (c,) = ctx.saved_tensors
        return c, None


# --- reuse of gradient arrays ------------------------------------------------------------------


def test_two_leaves_given_the_same_new_array_get_separate_grads():
    a, b = leaf(seed=1), leaf(seed=2)
    SameGradientTwice.apply(a, b).sum().backward()
    assert a.grad.numpy() is not b.grad.numpy()
    a.grad.numpy()[0] = 99.0  # editing one must not edit the other
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(BIG))


def test_a_saved_array_returned_as_a_gradient_is_not_taken_over_by_the_leaf():
    x, c = leaf(seed=1), np.full(BIG, 3.0, dtype=np.float32)
    y = ReturnsWhatItSaved.apply(x, c)
    y.backward(np.ones(BIG, dtype=np.float32), retain_graph=True)
    assert x.grad.numpy() is not c
    y.backward(np.ones(BIG, dtype=np.float32))  # accumulates into x.grad in place
    np.testing.assert_array_equal(c, np.full(BIG, 3.0))  # the saved array is untouched
    np.testing.assert_array_equal(x.grad.numpy(), np.full(BIG, 6.0))


def test_a_users_gradient_array_is_never_written():
    x = leaf()
    gradient = np.full(BIG, 2.0, dtype=np.float32)
    (x + 1.0).backward(gradient, retain_graph=True)  # Add passes the gradient on as is
    (x + 1.0).backward(gradient)
    assert x.grad.numpy() is not gradient
    np.testing.assert_array_equal(gradient, np.full(BIG, 2.0))
    np.testing.assert_array_equal(x.grad.numpy(), np.full(BIG, 4.0))


def test_sums_of_big_gradients_are_right_with_fan_out_and_a_second_backward():
    x, w = leaf(seed=1), leaf(seed=2)
    loss = ((x * w) + (x * 2.0) + x.exp() + (x * w)).sum()
    loss.backward(retain_graph=True)
    expected = 2 * w.numpy() + 2.0 + np.exp(x.numpy())
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), 2 * x.numpy(), rtol=1e-6)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * expected, rtol=1e-6, atol=2e-6)


def test_backward_steps_show_arrays_that_later_steps_do_not_change():
    x = leaf()
    h = x * 2.0
    loss = (h * 3.0 + h * 4.0).sum()  # h's gradient is a sum of two
    shown = [(step.node.name, [None if g is None else g.copy() for g in step.grad_inputs],
              step.grad_inputs) for step in mg.backward_steps(loss)]
    for name, copies, arrays in shown:
        for copy, array in zip(copies, arrays):
            if copy is not None:
                np.testing.assert_array_equal(array, copy, err_msg=name)


def copies_of(steps):
    return [[None if g is None else g.copy() for g in step.grad_outputs + step.grad_inputs]
            for step in steps]


def assert_unchanged(steps, copies):
    for step, saved in zip(steps, copies):
        for array, copy in zip(step.grad_outputs + step.grad_inputs, saved):
            if copy is not None:
                np.testing.assert_array_equal(array, copy, err_msg=step.node.name)


def test_a_leaf_used_twice_does_not_change_the_array_a_step_showed():
    x = leaf()
    loss = (x * 3.0 + x.exp()).sum()  # x's .grad: Mul's new array, then Exp's added
    steps = list(mg.backward_steps(loss))
    copies = copies_of(steps)
    np.testing.assert_allclose(x.grad.numpy(), 3.0 + np.exp(x.numpy()), rtol=1e-6)
    assert_unchanged(steps, copies)


def test_a_later_backward_does_not_change_the_arrays_an_earlier_pass_showed():
    x, w = leaf(seed=1), leaf(seed=2)
    loss = (x * w).sum()  # the leaves take the new arrays Mul's backward made
    steps = list(mg.backward_steps(loss, retain_graph=True))
    copies = copies_of(steps)
    loss.backward()  # accumulates into both .grad
    np.testing.assert_allclose(x.grad.numpy(), 2 * w.numpy(), rtol=1e-6)
    assert_unchanged(steps, copies)


def test_the_step_iterator_reuses_arrays_as_backward_does():
    x, w = leaf(seed=1), leaf(seed=2)
    steps = list(mg.backward_steps((x * w).sum()))
    assert x.grad.numpy() is steps[-1].grad_inputs[0]  # no copy: the same branch as backward()
    x2, w2 = leaf(seed=1), leaf(seed=2)
    (x2 * w2).sum().backward()
    np.testing.assert_array_equal(x2.grad.numpy(), x.grad.numpy())


def test_a_grad_from_before_the_pass_is_added_into_in_place():
    x = leaf()
    (x * 2.0).sum().backward()
    array = x.grad.numpy()
    x.grad.zero_()
    (x * 3.0).sum().backward()
    assert x.grad.numpy() is not array  # a step showed that one: the sum is a new array
    first = x.grad.numpy()
    (x * 4.0).sum().backward()
    assert x.grad.numpy() is first  # a sum the engine made: added into in place
    np.testing.assert_allclose(x.grad.numpy(), np.full(BIG, 7.0))


def test_a_leaf_used_twice_by_one_op_gets_both_gradients():
    x = leaf()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy(), rtol=1e-6)


# --- in-place edits of saved arrays, caught by the graph clock -----------------------------------


def test_an_edit_through_a_detached_copy_is_caught():
    x = leaf(shape=(3,))
    y = x.exp()  # Exp saves its output
    loss = y.sum()
    alias = y.detach()  # shares y's data and version counter
    del y
    alias.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"Exp.*modified by an in-place operation"):
        loss.backward()


def test_an_edit_through_a_view_under_no_grad_is_caught():
    x = leaf(shape=(2, 3))
    y = x.exp()
    loss = y.sum()
    view = y.reshape(6)
    with mg.no_grad():
        view.add_(1.0)
    assert y._version == view._version == 1
    with pytest.raises(RuntimeError, match=r"Exp.*saved tensor 0 \(shape \(2, 3\)\)"):
        loss.backward()


def test_an_optimizer_step_between_forward_and_backward_is_caught():
    w = mg.nn.Parameter(mg.ones(3))
    loss = (w * mg.tensor([1.0, 2.0, 3.0])).sum()  # Mul saves w
    w.grad = mg.ones(3)
    mg.optim.SGD([w], lr=0.1).step()
    with pytest.raises(RuntimeError, match=r"Mul.*modified by an in-place operation"):
        loss.backward()


def test_edits_before_the_op_or_of_unsaved_inputs_are_fine():
    x = leaf(shape=(3,))
    base = mg.ones(3)
    base.add_(1.0)  # before: fine
    y = x * base  # Mul saves x and base
    other = mg.ones(3)
    z = (y + other).sum()  # Add saves nothing
    other.add_(5.0)  # not saved by anyone: fine, as in PyTorch
    z.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_version_counts_in_place_writes():
    t = mg.zeros(3)
    assert t._version == 0
    t.add_(1.0)
    t[0] = 5.0
    assert t._version == 2


# --- a node is its Function's ctx -----------------------------------------------------------


def test_the_node_is_the_ctx():
    a, b = leaf(shape=(2,), seed=1), mg.tensor([1.0, 2.0])
    node = (a * b).grad_fn
    assert node.ctx is node and isinstance(node, mg.Context)
    assert node.needs_input_grad == (True, False)
    saved_a, saved_b = node.saved_tensors
    np.testing.assert_array_equal(saved_a, a.numpy())
    assert "needs_input_grad" in repr(mg.Context())


# --- optimizers, Linear, max pooling ---------------------------------------------------------


@pytest.mark.parametrize("make", [lambda p: mg.optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda p: mg.optim.AdamW(p, lr=0.1)])
def test_optimizers_update_parameters_in_place(make):
    w = mg.nn.Parameter(mg.ones(4))
    array, version = w.numpy(force=True), w._version
    w.grad = mg.ones(4)
    make([w]).step()
    assert w.numpy(force=True) is array and w._version == version + 1
    assert (w.numpy() < 1).all()


def test_linear_is_one_graph_node():
    x, w, b = leaf(shape=(4, 3)), leaf(shape=(2, 3), seed=1), leaf(shape=(2,), seed=2)
    node = F.linear(x, w, b).grad_fn
    assert node.name == "Linear" and len(node.next_functions) == 3
    assert F.linear(x, w).grad_fn.name == "Linear"


RELU_CASES = [(shape, dtype) for shape in [(4, 4), (64, 128), (2, 3, 40, 40)]
              for dtype in (np.float32, np.float64)]


def relu_case(shape, dtype):
    """Values with NaN, infinities and signed zeros, and a gradient to send back."""
    values = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    values.reshape(-1)[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30]
    return values, np.random.default_rng(1).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape, dtype", RELU_CASES)
def test_relu_is_the_same_below_and_above_its_fast_path_size(shape, dtype):
    """ReLU takes the maximum with a row of zeros from 4096 elements on (faster than with
    the number 0) and multiplies by its mask as numbers: the values and gradients are
    those of the plain formulas (the gradient passes where the output is NaN)."""
    values, seed = relu_case(shape, dtype)
    x = mg.tensor(values, requires_grad=True)
    out = x.relu()
    out.backward(mg.tensor(seed))
    expected = np.maximum(values, 0)
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out.dtype == dtype and not np.signbit(out.numpy()).any()
    np.testing.assert_array_equal(x.grad.numpy(), seed * ((expected > 0) | np.isnan(expected)))
    assert x.grad.dtype == dtype


@pytest.mark.parametrize("shape", [(4, 4), (64, 128)])
def test_relu_s_backward_runs_on_tensors_below_and_above_its_fast_path_size(shape):
    """With create_graph the backward runs on Tensors (both mask paths):
    d/dx sum(relu(x) x) = 2x where x > 0, and its own derivative is 2 there."""
    values = np.random.default_rng(0).standard_normal(shape)
    x = mg.tensor(values, requires_grad=True)
    (grad,) = mg.autograd.grad((x.relu() * x).sum(), x, create_graph=True)
    np.testing.assert_array_equal(grad.numpy(), 2 * values * (values > 0))
    grad.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2.0 * (values > 0))


@pytest.mark.parametrize("shape, dtype", RELU_CASES)
def test_relu_gives_pytorch_s_values_and_gradients_at_nan_infinities_and_zeros(torch, shape,
                                                                               dtype):
    values, seed = relu_case(shape, dtype)
    x, t = mg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    x.relu().backward(mg.tensor(seed))
    expected = t.relu()
    expected.backward(torch.tensor(seed))
    np.testing.assert_array_equal(x.relu().numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_max_pool2d_window_with_nan_outputs_nan_and_sends_the_gradient_to_the_first_nan():
    x = mg.tensor(np.array([[[[1.0, np.nan], [np.nan, 5.0]]]], dtype=np.float32),
                  requires_grad=True)
    out = F.max_pool2d(x, 2)
    assert np.isnan(out.item())
    out.backward(np.ones((1, 1, 1, 1), dtype=np.float32))
    np.testing.assert_array_equal(x.grad.numpy().reshape(-1), [0.0, 1.0, 0.0, 0.0])


def test_pooling_windows_that_tile_the_image_are_the_same_view_without_sliding_windows():
    from minigrad.ops.convolution import tiles, windows
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 8)).astype(np.float32)
    for kernel in [(2, 2), (3, 2), (1, 4)]:
        np.testing.assert_array_equal(tiles(x, kernel, kernel), windows(x, kernel, kernel))
    assert tiles(x, (2, 2), (1, 1)) is None  # overlapping windows
    assert tiles(x, (4, 3), (4, 3)) is None  # not a multiple of H, W: the last row is left out
    assert tiles(x[:, :, :, ::2], (2, 2), (2, 2)) is None  # not contiguous
    # max pooling over such windows: the largest of each, the gradient to one winner each
    t = mg.tensor(x, requires_grad=True)
    F.max_pool2d(t, 2).sum().backward()
    np.testing.assert_array_equal(F.max_pool2d(t, 2).numpy(),
                                  x.reshape(2, 3, 3, 2, 4, 2).max(axis=(3, 5)))
    assert t.grad.numpy().sum() == 2 * 3 * 3 * 4  # one winner per window


def test_hooks_and_retain_grad_run_however_the_tensor_got_its_node():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    y = x * 2
    y.register_hook(lambda g: seen.append(("y", g.numpy().copy())))
    z = y * 3
    z.retain_grad()
    z.add_(1)  # an in-place op: z gets a new node; its retain_grad goes with it
    w = z.exp()
    w.register_hook(lambda g: g * 0)  # registered after w was made: replaces its gradient
    (w.sum() + z.sum()).backward()
    np.testing.assert_array_equal(seen[0][1], [3.0, 3.0, 3.0])  # d(z.sum())/dy only
    np.testing.assert_array_equal(z.grad.numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0, 6.0])


def test_a_hook_on_one_output_of_a_two_output_op_runs():
    x = mg.tensor([[1.0, 5.0], [4.0, 2.0]], requires_grad=True)
    values, _ = x.max(dim=1)
    values.register_hook(lambda g: g * 10)
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 10.0], [10.0, 0.0]])


class WrongShapeAndDtype(mg.Function):
    """f(x) = 2x, whose backward returns its gradient broadcast to (3,) + x's shape, in
    float64."""

    @staticmethod
    def forward(ctx, x):
        ctx.anything = "kept"  # a node's own fields are slots; the rest still works
        return 2 * x

    @staticmethod
    def backward(ctx, grad):
        assert ctx.anything == "kept"
        return np.broadcast_to(2 * grad, (3,) + grad.shape).astype(np.float64)


def test_a_gradient_of_a_broadcast_shape_and_another_dtype_is_still_fitted():
    x = mg.tensor(np.ones((2, 2), np.float32), requires_grad=True)
    WrongShapeAndDtype.apply(x).sum().backward()
    assert x.grad.dtype == mg.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 6.0))


def _hooks_around_in_place(lib, in_place):
    """Which hooks see which gradient when a tensor with hooks is modified in place."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    z = x * 3
    z.register_hook(lambda g: seen.append(("before", g.tolist())))
    z.retain_grad()
    z = in_place(lib, z)
    z.register_hook(lambda g: seen.append(("after", g.tolist())))
    (z * z).sum().backward()
    return seen, z.grad.tolist(), x.grad.tolist()


def _double_in_place(lib, z):
    class DoubleInPlace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.mark_dirty(t)
            return t.mul_(2)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return DoubleInPlace.apply(z)


@pytest.mark.parametrize("in_place", [lambda lib, z: z.mul_(2), _double_in_place],
                         ids=["mul_", "mark_dirty"])
def test_hooks_registered_before_an_in_place_op_see_the_old_value_s_gradient(torch, in_place):
    # PyTorch: each hook runs once, those registered before on the old value's gradient,
    # those after on the new one's; retain_grad keeps the new value's
    assert _hooks_around_in_place(mg, in_place) == _hooks_around_in_place(torch, in_place)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc's thresholds")
def test_a_training_step_does_not_page_fault_its_arrays_in_again():
    """minigrad/allocator.py: freed arrays' memory stays in the process for the next step
    (before, the CNN step page-faulted about 1,200 fresh pages a step in most processes)."""
    code = """if True:
        import resource
        import numpy as np
        import minigrad as mg
        nn = mg.nn
        mg.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
        optimizer = mg.optim.SGD(model.parameters(), lr=0.01)
        x = mg.tensor(np.random.default_rng(0).standard_normal((32, 1, 28, 28), np.float32))
        y = mg.tensor(np.arange(32) % 10)
        def step():
            optimizer.zero_grad()
            mg.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        for _ in range(3):
            step()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(10):
            step()
        print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
    """
    faults_per_step = float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                           text=True, check=True).stdout)
    assert faults_per_step < 50
