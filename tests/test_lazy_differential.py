"""Lazy mode against eager mode (and PyTorch where the program is plain PyTorch): the
same program inside ``with mg.lazy():`` must give the same values, gradients, errors and
graph as it does eagerly."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn


def _leaf(*shape, seed=0, dtype=np.float64):
    values = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return mg.tensor(values, requires_grad=True)


def _eager_and_lazy(program):
    """``program()``'s results, run eagerly and in lazy mode, as arrays."""
    results = []
    for lazy in (False, True):
        mg.manual_seed(0)
        with mg.lazy(lazy):
            out = program()
        results.append([o.detach().numpy() if isinstance(o, mg.Tensor) else o for o in out])
    return results


def _assert_same(program):
    eager, lazy = _eager_and_lazy(program)
    for e, la in zip(eager, lazy):
        np.testing.assert_array_equal(e, la)


# --- in-place writes and the deferred ops that read the memory ---------------------------


def test_a_deferred_op_on_a_view_runs_before_the_base_is_written():
    def program():
        x = _leaf(3, 4)
        y = x * 2
        z = y.t().exp()  # reads y's memory through a view that is itself deferred
        y[0, 0] = 100.0
        return [y, z]

    _assert_same(program)


def test_a_copy_of_grad_taken_lazily_keeps_the_value_before_the_next_backward():
    torch = pytest.importorskip("torch")

    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * 2).sum().backward()
        first = x.grad.clone()
        (x * 3).sum().backward()  # adds into x.grad in place
        return first

    expected = program(torch).numpy()
    with mg.lazy():
        first = program(mg)
    np.testing.assert_array_equal(first.numpy(), expected)


def test_module_double_after_a_lazy_forward_leaves_that_result_in_float32():
    torch = pytest.importorskip("torch")
    weights = {"weight": np.arange(6, dtype=np.float32).reshape(2, 3) / 7,
               "bias": np.array([0.1, -0.2], np.float32)}
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    linear = torch.nn.Linear(3, 2)
    linear.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    expected = linear(torch.tensor(x)).detach().numpy()
    m = nn.Linear(3, 2)
    m.load_state_dict(weights)
    with mg.lazy():
        y = m(mg.tensor(x))
        m.double()  # gives the weights new float64 arrays
    assert y.numpy().dtype == np.float32
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)


def test_an_in_place_op_on_a_piece_of_a_lazy_split_is_refused_as_in_eager_mode():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        y = torch.ones(4, 3, requires_grad=True) * 2
        y.split(2)[0].mul_(2)
    x = _leaf(4, 3)
    with mg.lazy():
        first, _ = (x * 2).split(2)
        with pytest.raises(RuntimeError, match="several views that split"):
            first.mul_(2)


def test_an_in_place_op_on_a_piece_of_a_lazy_unbind_is_refused_as_in_eager_mode():
    x = _leaf(2, 3)
    with mg.lazy():
        first, _ = (x * 2).unbind(0)
        with pytest.raises(RuntimeError, match="several views that unbind"):
            first += 1


def test_a_view_made_lazily_with_grad_on_may_be_written_after_a_realize_in_no_grad():
    def program():
        x = _leaf(3, 4)
        y = x * 2
        row = y[0]
        with mg.no_grad():
            row.sum().item()  # realizes row here, inside no_grad
        row.mul_(3)  # a view made with grad mode on: allowed, recorded
        (y * y).sum().backward()
        return [y, x.grad]

    _assert_same(program)


# --- a deferred forward that fails -----------------------------------------------------------


def test_a_failed_deferred_forward_leaves_its_inputs_writable():
    x = _leaf(3, 4)
    with mg.lazy():
        a = x * 2
        bad = a.gather(1, mg.tensor([[0, 9]] * 3))  # index 9: found only when it runs
        with pytest.raises(IndexError, match="gather"):
            bad.realize()
        with mg.no_grad():
            a += 1  # must not raise the gather error again
    np.testing.assert_array_equal(a.numpy(), x.detach().numpy() * 2 + 1)


def test_a_deferred_forward_failing_before_a_write_raises_once_then_only_for_its_results():
    x = _leaf(3, 4)
    with mg.lazy():
        bad = x.gather(1, mg.tensor([[0, 9]] * 3))
        after = bad.exp()
        with mg.no_grad():
            with pytest.raises(IndexError, match="gather"):
                x.detach().add_(1)  # the first time the error shows: a write waits for it
            x.detach().add_(1)  # the second write goes through
        with pytest.raises(IndexError, match="gather"):
            after.numpy()


@pytest.mark.parametrize("build", [
    lambda x: mg.cat([x, mg.ones(2, 5, dtype=mg.float64)]),
    lambda x: mg.stack([x, mg.ones(2, 4, dtype=mg.float64)]),
    lambda x: x.expand(5, 4),
    lambda x: x.repeat(2),
    lambda x: x.roll(1, 5),
    lambda x: nn.functional.linear(x, mg.ones(5, 4, dtype=mg.float64),
                                   mg.ones(4, dtype=mg.float64)),
], ids=["cat", "stack", "expand", "repeat", "roll", "linear_bias"])
def test_a_shape_error_is_raised_where_the_op_is_called_as_in_eager_mode(build):
    x = _leaf(3, 4)
    with pytest.raises((ValueError, IndexError)) as eager:
        build(x)
    with mg.lazy(), pytest.raises(type(eager.value)) as lazy:
        build(x)
    assert str(eager.value).split(":")[0] == str(lazy.value).split(":")[0]  # the op


def test_a_nan_made_inside_detect_anomaly_is_reported_when_realized_outside():
    x = _leaf(3)
    with mg.lazy():
        with mg.autograd.detect_anomaly():
            y = (x - 100).log()
        with pytest.raises(FloatingPointError, match="Log"):
            y.numpy()


# --- user Functions -------------------------------------------------------------------------


class _ValueAndIndex(mg.Function):
    """x * 3, and the index of each column's maximum as floats, marked non-differentiable"""

    @staticmethod
    def forward(ctx, x):
        index = np.argmax(x, 0).astype(x.dtype)
        ctx.mark_non_differentiable(index)
        return x * 3, index

    @staticmethod
    def output_shape(x):
        return tuple(x.shape), tuple(x.shape[1:])

    @staticmethod
    def backward(ctx, grad, grad_index):
        return grad * 3


def test_a_lazy_op_on_an_output_marked_non_differentiable_records_no_history():
    x = _leaf(3, 4)
    with mg.lazy():
        _, index = _ValueAndIndex.apply(x)
        doubled = index * 2
        assert not doubled.requires_grad
        with pytest.raises(RuntimeError, match="does not require grad"):
            doubled.sum().backward()


def test_an_integer_output_of_a_user_function_has_no_history_in_lazy_mode():
    class Rounded(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return np.round(x).astype(np.int64)  # output_dtype's default promised float

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = _leaf(3)
    eager = Rounded.apply(x)
    with mg.lazy():
        lazy = Rounded.apply(x).realize()
    assert (lazy.requires_grad, lazy.grad_fn) == (eager.requires_grad, eager.grad_fn) \
        == (False, None)


class _LinearFunction(mg.autograd.Function):
    """PyTorch's custom-Function tutorial, unchanged"""

    @staticmethod
    def forward(ctx, input, weight):
        ctx.save_for_backward(input, weight)
        return input.mm(weight.t())

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        return grad_output.mm(weight), grad_output.t().mm(input)


def test_an_autograd_function_backward_runs_inside_lazy_mode():
    def program():
        x, w = _leaf(3, 4), _leaf(5, 4, seed=1)
        _LinearFunction.apply(x, w).sum().backward()
        return [x.grad, w.grad]

    _assert_same(program)


def test_a_grad_fn_hook_returning_a_tensor_works_inside_lazy_mode():
    def program():
        x = _leaf(3, 4)
        y = x * 2
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 10, None))
        y.exp().sum().backward()
        return [x.grad]

    _assert_same(program)


def test_an_autograd_function_whose_forward_uses_lazy_mode_inside():
    class Double(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with mg.lazy():
                return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = _leaf(3)
    Double.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0))


def test_checkpoint_of_a_function_that_uses_lazy_mode_inside():
    def inner(t):
        with mg.lazy():
            return (t * 3).exp()

    x = _leaf(2, 3)
    y = mg.checkpoint(inner, x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp(3 * x.detach().numpy()))


def test_a_user_function_whose_shape_is_not_the_default_says_to_give_output_shape():
    class Total(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()  # not the inputs' broadcast shape (the default output_shape)

        @staticmethod
        def backward(ctx, grad):
            return np.ones(3) * grad

    x = _leaf(3)
    with mg.lazy():
        total = Total.apply(x)  # API.md: deferred with the default shape, (3,)
        with pytest.raises(mg.ShapeError, match=r"output_shape\(\) promised shape \(3,\).*"
                                                r"returned \(\); fix Total.output_shape"):
            total.backward()
    assert x.grad is None


class _LastRows(mg.Function):
    """x[1:], a view of its input"""

    @staticmethod
    def forward(ctx, x):
        ctx.rows = x.shape[0]
        return x[1:]

    @staticmethod
    def output_shape(x):
        return (x.shape[0] - 1, *x.shape[1:])

    @staticmethod
    def backward(ctx, grad):
        return np.concatenate([np.zeros((1, *grad.shape[1:])), grad])


def test_a_lazy_user_function_returning_a_view_shares_its_input_s_version():
    x = _leaf(3, 2)
    with mg.lazy():
        y = x * 2
        rows = _LastRows.apply(y)
        product = rows * rows  # saves rows
        y.add_(1)  # so rows changed too
        with pytest.raises(RuntimeError, match="modified by an in-place operation"):
            product.sum().backward()


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_a_view_returned_by_a_user_function_is_not_modified_in_place_as_in_pytorch(lazy):
    torch = pytest.importorskip("torch")

    class TorchLastRows(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[1:]

        @staticmethod
        def backward(ctx, grad):
            return torch.cat([grad[:1] * 0, grad])

    with pytest.raises(RuntimeError, match="view and is being modified inplace"):
        TorchLastRows.apply(torch.ones(3, 2, requires_grad=True) * 2).mul_(3)
    x = _leaf(3, 2)
    with mg.lazy(lazy):
        rows = _LastRows.apply(x * 2)
        with pytest.raises(RuntimeError, match="_LastRows, which returned"):
            rows.mul_(3)  # it would bypass _LastRows.backward


@pytest.mark.parametrize("write", [
    lambda x, index: (x.gather(1, index), index.__setitem__((0, 0), 3)),
    lambda x, index: (x[index[:, 0]], index.__setitem__((0, 0), 2)),
    lambda x, index: (nn.functional.cross_entropy(x, index[:, 0], reduction="none"),
                      index.__setitem__((0, 0), 3)),
], ids=["gather", "getitem", "cross_entropy"])
def test_a_deferred_op_reads_an_index_tensor_as_it_was_before_an_in_place_write(write):
    def program():
        x = _leaf(3, 4)
        index = mg.tensor([[0, 1], [1, 0], [2, 2]])
        result, _ = write(x, index)
        return [result]

    _assert_same(program)


@pytest.mark.parametrize("index", [
    lambda x, rows: x[rows, :], lambda x, rows: x[:, rows], lambda x, rows: x[rows, rows],
    lambda x, rows: x.index_select(1, rows),
], ids=["rows", "columns", "pairs", "index_select"])
def test_a_deferred_index_in_a_tuple_reads_the_index_as_it_was_before_a_write(index):
    def program():
        x = _leaf(3, 4)
        rows = mg.tensor([0, 2])
        result = index(x, rows)
        rows[0] = 1
        return [result]

    _assert_same(program)


def test_a_deferred_masked_fill_reads_the_mask_as_it_was_before_an_in_place_write():
    def program():
        x = _leaf(3, 4)
        mask = mg.tensor(x.detach().numpy() > 0)
        result = x.masked_fill(mask, 0.0)
        mask[0] = False
        return [result]

    _assert_same(program)


# --- mg.checkpoint with PyTorch's keyword arguments ------------------------------------------


def test_checkpoint_takes_pytorch_s_keywords_and_passes_the_others_to_fn():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    start = np.array([0.5, -1.0, 2.0])
    expected = torch.tensor(start, requires_grad=True)
    torch_checkpoint(lambda t, scale: t.exp() * scale, expected, use_reentrant=False,
                     preserve_rng_state=True, scale=3.0).sum().backward()
    x = mg.tensor(start, requires_grad=True)
    with mg.lazy():
        mg.checkpoint(lambda t, scale: t.exp() * scale, x, use_reentrant=False,
                      preserve_rng_state=True, scale=3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected.grad.numpy(), rtol=1e-12)


def test_checkpoint_with_use_reentrant_refuses_keywords_for_fn_as_pytorch_does():
    x = _leaf(3)
    with pytest.raises(ValueError, match="use_reentrant=False"):
        mg.checkpoint(lambda t, scale: t * scale, x, use_reentrant=True, scale=3.0)


def test_checkpoint_is_found_where_pytorch_code_imports_it():
    from minigrad.utils.checkpoint import checkpoint

    assert checkpoint is mg.utils.checkpoint.checkpoint is mg.checkpoint


# --- writes that bypass the Tensor ops (into .grad, into buffers) ----------------------------


@pytest.mark.parametrize("clip", [
    lambda params: nn.utils.clip_grad_norm_(params, 0.1),
    lambda params: nn.utils.clip_grad_value_(params, 0.1),
], ids=["clip_grad_norm_", "clip_grad_value_"])
def test_a_gradient_read_lazily_before_clipping_keeps_its_unclipped_value(clip):
    def program():
        m = nn.Linear(3, 2)
        m(_leaf(4, 3, dtype=np.float32)).pow(2).sum().backward()
        before = m.weight.grad * 1
        clip(m.parameters())
        return [before, m.weight.grad]

    _assert_same(program)


def test_num_batches_tracked_read_lazily_before_a_batch_norm_step_keeps_its_value():
    def program():
        m = nn.BatchNorm1d(3)
        before = m.num_batches_tracked + 0
        m(_leaf(4, 3, dtype=np.float32))
        return [before, m.num_batches_tracked]

    _assert_same(program)


def test_a_complex_result_is_recorded_in_lazy_mode_as_in_eager_mode():
    def program():
        x = mg.tensor(np.array([1 + 2j, 3 - 1j]), requires_grad=True)
        doubled = x * 2
        doubled.abs().sum().backward()
        return [doubled.requires_grad, x.grad]

    _assert_same(program)


def test_reentrant_checkpoint_gives_parameters_no_gradient_without_an_input_needing_one():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    layer = torch.nn.Linear(3, 2)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
        out = torch_checkpoint(layer, torch.ones(4, 3), use_reentrant=True)
    assert not out.requires_grad
    m = nn.Linear(3, 2)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
        out = mg.checkpoint(m, mg.ones(4, 3), use_reentrant=True)
    assert not out.requires_grad
    assert mg.checkpoint(m, mg.ones(4, 3), use_reentrant=False).requires_grad
