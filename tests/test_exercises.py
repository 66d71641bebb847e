"""The exercise checkers (minigrad.exercises) pass right answers and name wrong ones.

Each classic mistake is written out as a deliberately wrong implementation: the check
must fail, and its message must name that mistake; the right implementation passes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import fails, raw_failure

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim
from minigrad.exercises import (MATMUL_MISTAKES, check_array_function, check_function,
                                check_loss, check_module, check_optimizer_step,
                                check_training_step, check_value, wrong_output)


# --- Functions: a right one, and one wrong one per mistake -----------------------------


def mul_function(backward):
    """An mg.Function z = x * y whose backward is ``backward(x, y, grad_output)``."""

    class MyMul(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return backward(x, y, grad_output)

    return MyMul


MUL_CASES = [[(3, 4), (4,)], [(2, 3), (2, 3)]]


def mul(x, y):
    return x * y


def test_right_mul_passes(capsys):
    check_function(mul_function(lambda x, y, g: (g * y, g * x)), MUL_CASES, mul)
    assert "forward and backward are right (3 case(s) checked)" in capsys.readouterr().out


def test_a_backward_returning_the_output_shape_passes_because_the_engine_sums():
    check_function(mul_function(lambda x, y, g: (g * y, g * x)), [(3, 4), (4,)], mul)


def test_without_a_reference_gradients_are_compared_with_finite_differences():
    check_function(mul_function(lambda x, y, g: (g * y, g * x)), MUL_CASES)
    message = fails(check_function, mul_function(lambda x, y, g: (g * y, -g * x)), MUL_CASES)
    assert "gradient for input 1" in message and "numerical" in message


def tensor_mul_function(sign):
    """z = x * y in PyTorch's form, mg.autograd.Function: forward and backward on Tensors."""

    class MyMul(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return sign * grad_output * y, sign * grad_output * x

    return MyMul


def test_an_autograd_function_in_pytorch_s_form_is_checked_through_apply():
    check_function(tensor_mul_function(1.0), MUL_CASES, mul)
    assert "wrong sign" in fails(check_function, tensor_mul_function(-1.0), MUL_CASES, mul)


def test_wrong_sign_is_named():
    message = fails(check_function, mul_function(lambda x, y, g: (-g * y, -g * x)),
                    MUL_CASES, mul)
    assert "wrong sign" in message and "gradient for input 0" in message


def test_constant_factor_is_named():
    message = fails(check_function, mul_function(lambda x, y, g: (2 * g * y, g * x)),
                    MUL_CASES, mul)
    assert "off by a constant factor" in message and "2 times" in message


def test_ignoring_grad_output_is_named():
    message = fails(check_function, mul_function(lambda x, y, g: (y + 0 * g, x + 0 * g)),
                    MUL_CASES, mul)
    assert "ignores grad_output" in message


def test_the_upstream_gradient_is_random_not_all_ones():
    # with an all-ones upstream gradient this backward would pass
    message = fails(check_function,
                    mul_function(lambda x, y, g: (np.ones_like(g) * y, np.ones_like(g) * x)),
                    [(2, 3), (2, 3)], mul)
    assert "ignores grad_output" in message


def test_a_list_or_a_missing_gradient_is_explained():
    message = fails(check_function, mul_function(lambda x, y, g: g * y), MUL_CASES, mul)
    assert "returned 1 gradient(s)" in message and "one gradient per input" in message


def test_gradients_returned_as_a_list_ask_for_a_tuple():
    # the engine would read the list as one gradient; say so before it does
    message = fails(check_function, mul_function(lambda x, y, g: [g * y, g * x]),
                    MUL_CASES, mul)
    assert "a list of 2" in message and "Return a tuple" in message
    assert "raised" not in message


def test_a_missing_solution_says_where_to_write_it():
    def not_written(x, y, g):
        raise NotImplementedError

    message = fails(check_function, mul_function(not_written), MUL_CASES, mul)
    assert "NotImplementedError" in message and "Write your solution" in message
    assert "NotImplementedError:" not in message  # no empty ": " after the name


def test_the_stub_of_another_exercise_says_which_and_how_to_load_its_answer():
    def uses_another(x, y, g):
        raise NotImplementedError("exercise helperid: write your code here")

    message = fails(check_function, mul_function(uses_another), MUL_CASES, mul)
    assert "Write your solution" in message
    assert "stub of exercise helperid" in message and 'use_reference("helperid")' in message
    # a stub without an exercise id gets no such sentence
    message = fails(check_function, mul_function(lambda x, y, g: (_ for _ in ()).throw(
        NotImplementedError("later"))), MUL_CASES, mul)
    assert "Write your solution" in message and "stub of exercise" not in message


def test_a_reduction_without_keepdims_that_cannot_broadcast_asks_for_keepdims():
    class RowShift(mg.Function):  # x - x.max(axis=1): shapes (4, 5) and (4,) do not broadcast
        @staticmethod
        def forward(ctx, x):
            return x - x.max(axis=1)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    message = fails(check_function, RowShift, [(4, 5)],
                    lambda x: x - x.max(dim=1, keepdim=True)[0])
    assert "(4, 5) and (4,)" in message and "keepdims=True" in message
    # shapes that differ otherwise get no keepdims advice
    def bad_add(x, y, g):
        return g + np.ones((7,)), g
    message = fails(check_function, mul_function(bad_add), [[(3, 4), (3, 4)]], mul)
    assert "keepdims" not in message


def test_a_wrong_output_mistake_names_a_mistake_in_forward():
    def cube_forward_squared(x):
        return x * x

    mistakes = {"forward squared x instead of cubing it.": wrong_output(lambda x: x**2),
                "never built": wrong_output(lambda x: None)}
    message = fails(check_function, cube_forward_squared, [(3, 4)], lambda x: x * x * x,
                    mistakes=mistakes)
    assert "the output: wrong values" in message
    assert "It looks like forward squared x instead of cubing it." in message
    # an output mistake is never taken for a gradient mistake (or called with grad_output)
    def cube_wrong_gradient(x):
        return x * x * x.detach()

    message = fails(check_function, cube_wrong_gradient, [(3, 4)], lambda x: x * x * x,
                    mistakes=mistakes)
    assert "the gradient for input 0" in message and "squared" not in message


def test_a_failure_at_inputs_scaled_to_a_thousand_says_so():
    message = fails(check_function, naive_softmax, [(4, 5)], lambda x: F.softmax(x, dim=-1),
                    large_inputs=True)
    assert "with the inputs scaled to +-1000: the output" in message
    # an ordinary case does not
    message = fails(check_function, mul_function(lambda x, y, g: (-g * y, -g * x)),
                    MUL_CASES, mul)
    assert "scaled" not in message


def test_an_error_inside_numpy_points_at_the_student_s_line_not_numpy_s():
    class SumOverRows(mg.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape = x.shape
            return x.sum(axis=1)

        @staticmethod
        def backward(ctx, grad_output):
            return np.broadcast_to(grad_output, ctx.shape)  # (3,) cannot become (3, 4)

    message = fails(check_function, SumOverRows, [(3, 4)], lambda x: x.sum(1))
    assert "np.broadcast_to(grad_output, ctx.shape)" in message


def test_nothing_saved_is_explained():
    class Forgetful(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return grad_output * y, grad_output * x

    assert "save_for_backward" in fails(check_function, Forgetful, MUL_CASES, mul)


def test_backward_modifying_a_saved_array_in_place_is_named():
    def in_place(x, y, g):
        x *= 2  # reusing a saved array as scratch space: right numbers, ruined array
        return g * y, g * x / 2

    message = fails(check_function, mul_function(in_place), MUL_CASES, mul)
    assert "modified saved array 0 in place" in message


def test_backward_modifying_grad_output_in_place_is_named():
    def in_place(x, y, g):
        g *= y
        return g, None

    assert "changed grad_output in place" in fails(
        check_function, mul_function(in_place), MUL_CASES, mul)


def test_forward_modifying_its_input_in_place_is_named():
    class ExpInPlace(mg.Function):
        @staticmethod
        def forward(ctx, x):
            np.exp(x, out=x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            (z,) = ctx.saved_tensors
            return grad_output * z

    message = fails(check_function, ExpInPlace, [(3, 4)], lambda x: x.exp())
    assert "forward changed its input 0 in place" in message


def exp_mul_plus(backward):
    """f(x, y) = exp(x * y) + x as one Function: x is used twice."""

    class MyExpMulPlus(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            e = np.exp(x * y)
            ctx.save_for_backward(x, y, e)
            return e + x

        @staticmethod
        def backward(ctx, grad_output):
            x, y, e = ctx.saved_tensors
            return backward(x, y, e, grad_output)

    return MyExpMulPlus


def test_gradient_of_an_input_used_twice_must_be_accumulated():
    reference = lambda x, y: (x * y).exp() + x  # noqa: E731
    check_function(exp_mul_plus(lambda x, y, e, g: (g * (e * y + 1), g * e * x)),
                   [(3, 4), (3, 4)], reference)
    message = fails(check_function, exp_mul_plus(lambda x, y, e, g: (g * e * y, g * e * x)),
                    [(3, 4), (3, 4)], reference)
    assert "used 2 times" in message and "SUM" in message


def test_an_input_passed_twice_gets_the_sum_of_both_gradients():
    # the same Tensor as both inputs: the engine adds both gradients; a Function whose
    # backward overwrites grad_output breaks that, and the check runs that case
    class Square(mg.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return grad_output * y, grad_output * x

    check_function(Square, [(2, 3), (2, 3)], mul)


# --- matrix products -------------------------------------------------------------------


def matmul_function(backward):
    class MyMatMul(mg.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return backward(a, b, grad_output)

    return MyMatMul


def matmul(a, b):
    return a @ b


RIGHT_MATMUL = matmul_function(lambda a, b, g: (g @ b.T, a.T @ g))


def test_right_matmul_passes():
    check_function(RIGHT_MATMUL, [[(3, 4), (4, 5)], [(3, 3), (3, 3)]], matmul,
                   mistakes=MATMUL_MISTAKES)


def test_transposed_matmul_gradient_is_named_from_its_shape():
    wrong = matmul_function(lambda a, b, g: (b @ g.T, a.T @ g))  # (4, 3) for a (3, 4)
    message = fails(check_function, wrong, [(3, 4), (4, 5)], matmul)
    assert "transposed" in message and "wrong shape" in message


def test_swapped_matmul_operands_are_named():
    wrong = matmul_function(lambda a, b, g: (b.T @ g, g @ a.T))
    # non-square: NumPy refuses the product, and the message says why
    assert "operands of a matrix product are swapped" in fails(
        check_function, wrong, [(3, 4), (4, 5)], matmul)
    # square: it runs, and gives values that the named variant recognises
    assert "operands of a matrix product are swapped" in fails(
        check_function, wrong, [(3, 3), (3, 3)], matmul, mistakes=MATMUL_MISTAKES)


def test_transposed_values_on_square_inputs_are_named():
    wrong = matmul_function(lambda a, b, g: ((g @ b.T).T, a.T @ g))
    assert "transposed" in fails(check_function, wrong, [(3, 3), (3, 3)], matmul)


# --- un-broadcasting a gradient (a plain NumPy function) -------------------------------


def unbroadcast_right(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


UNBROADCAST_CASES = [(np.arange(24.0).reshape(2, 3, 4), (3, 1)),
                     (np.arange(12.0).reshape(3, 4), (4,)),
                     (np.arange(6.0).reshape(2, 3), (2, 3))]


def test_right_unbroadcast_passes():
    check_array_function(unbroadcast_right, UNBROADCAST_CASES, unbroadcast_right)


def test_not_summing_over_broadcast_dimensions_is_named():
    message = fails(check_array_function, lambda grad, shape: grad, UNBROADCAST_CASES,
                    unbroadcast_right)
    assert "not summed over the broadcast dimensions" in message


def test_summing_without_keepdim_is_named():
    def no_keepdim(grad, shape):
        while grad.ndim > len(shape):
            grad = grad.sum(axis=0)
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
        return grad.sum(axis=axes) if axes else grad

    assert "without keepdim" in fails(check_array_function, no_keepdim, UNBROADCAST_CASES,
                                      unbroadcast_right)


def test_editing_the_given_array_in_place_is_named():
    def in_place(grad, shape):
        grad += 0
        grad *= 2
        return unbroadcast_right(grad, shape) / 2

    assert "in place" in fails(check_array_function, in_place, UNBROADCAST_CASES,
                               unbroadcast_right)


# --- softmax and losses ----------------------------------------------------------------


def naive_softmax(x):
    e = x.exp()
    return e / e.sum(dim=-1, keepdim=True)


def stable_softmax(x):
    e = (x - x.max(dim=-1, keepdim=True)[0].detach()).exp()
    return e / e.sum(dim=-1, keepdim=True)


def test_a_stable_softmax_passes_with_logits_of_a_thousand():
    check_function(stable_softmax, [(4, 5)], lambda x: F.softmax(x, dim=-1),
                   large_inputs=True)


def test_softmax_overflow_at_a_thousand_is_named():
    message = fails(check_function, naive_softmax, [(4, 5)], lambda x: F.softmax(x, dim=-1),
                    large_inputs=True)
    assert "overflowed" in message and "subtract the maximum" in message


TARGET = np.array([0, 2, 1, 4])


def my_cross_entropy(logits, target, reduce=lambda losses: losses.mean()):
    shifted = logits - logits.max(dim=1, keepdim=True)[0].detach()
    log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
    return reduce(-log_probs[mg.arange(logits.shape[0]).long(), target])


def test_a_right_cross_entropy_passes():
    check_loss(my_cross_entropy, [(4, 5), TARGET], F.cross_entropy)


def test_a_sum_instead_of_a_mean_is_named_by_the_batch_size():
    def summed(logits, target):
        return my_cross_entropy(logits, target, reduce=lambda losses: losses.sum())

    message = fails(check_loss, summed, [(4, 5), TARGET], F.cross_entropy)
    assert "4 times too large" in message and "batch size" in message


def test_a_cross_entropy_that_overflows_is_named():
    def naive(logits, target):
        probs = logits.exp() / logits.exp().sum(dim=1, keepdim=True)
        return -probs[mg.arange(logits.shape[0]).long(), target].log().mean()

    assert "overflowed" in fails(check_loss, naive, [(4, 5), TARGET], F.cross_entropy)


# --- modules ---------------------------------------------------------------------------


class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(mg.randn(out_features, in_features))
        self.bias = nn.Parameter(mg.zeros(out_features))

    def forward(self, x):
        return x @ self.weight.T + self.bias


def test_a_right_linear_module_passes():
    check_module(MyLinear, nn.Linear, args=(4, 3), inputs=[(5, 4)])


def test_a_module_whose_forward_raises_is_reported_with_its_line():
    class Broken(MyLinear):
        def forward(self, x):
            return x @ self.weight + self.bias  # (5, 4) @ (3, 4): the transpose is missing

    message = fails(check_module, Broken, nn.Linear, args=(4, 3), inputs=[(5, 4)])
    assert "raised" in message and "x @ self.weight + self.bias" in message


def test_a_cut_graph_is_named():
    def detached(x):
        return mg.tensor(np.exp(x.numpy()))  # NumPy on the way: no gradient flows back

    message = fails(check_function, detached, [(2, 3)], lambda x: x.exp())
    assert "no gradient reached this input" in message


def test_parameter_names_other_than_pytorch_s_are_named():
    class Named(MyLinear):
        def __init__(self, i, o):
            nn.Module.__init__(self)
            self.W = nn.Parameter(mg.randn(o, i))
            self.b = nn.Parameter(mg.zeros(o))

    assert "PyTorch's names" in fails(check_module, Named, nn.Linear, args=(4, 3))


def dropout_module(active_in_eval: bool):
    class MyDropout(nn.Module):
        def __init__(self, p=0.5):
            super().__init__()
            self.p = p

        def forward(self, x):
            if not (self.training or active_in_eval):
                return x
            keep = (mg.rand(*x.shape) >= self.p).float()
            return x * keep / (1 - self.p)

    return MyDropout


def test_a_right_dropout_passes():
    check_module(dropout_module(False), nn.Dropout, args=(0.5,), inputs=[(6, 5)])


def test_dropout_active_in_eval_mode_is_named():
    message = fails(check_module, dropout_module(True), nn.Dropout, args=(0.5,),
                    inputs=[(6, 5)])
    assert "dropout active in eval mode" in message


def batch_norm_module(batch_stats_in_eval: bool):
    class MyBatchNorm1d(nn.Module):
        def __init__(self, num_features, eps=1e-5, momentum=0.1):
            super().__init__()
            self.eps, self.momentum = eps, momentum
            self.weight = nn.Parameter(mg.ones(num_features))
            self.bias = nn.Parameter(mg.zeros(num_features))
            self.register_buffer("running_mean", mg.zeros(num_features))
            self.register_buffer("running_var", mg.ones(num_features))
            self.register_buffer("num_batches_tracked", mg.tensor(0).long())

        def forward(self, x):
            if self.training or batch_stats_in_eval:
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                if self.training:
                    n, m = x.shape[0], self.momentum
                    with mg.no_grad():
                        self.running_mean.copy_((1 - m) * self.running_mean + m * mean)
                        self.running_var.copy_((1 - m) * self.running_var
                                               + m * var * n / (n - 1))
                        self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            else:
                mean, var = self.running_mean, self.running_var
            return (x - mean) / (var + self.eps).sqrt() * self.weight + self.bias

    return MyBatchNorm1d


def test_a_right_batch_norm_passes():
    check_module(batch_norm_module(False), nn.BatchNorm1d, args=(4,), inputs=[(6, 4)])


def test_batch_statistics_in_eval_mode_are_named():
    message = fails(check_module, batch_norm_module(True), nn.BatchNorm1d, args=(4,),
                    inputs=[(6, 4)])
    assert "batch statistics are used in eval mode" in message


def test_module_mistakes_are_named_and_the_right_module_passes():
    """check_module(..., mistakes=...): each wrong module, run alongside, names its
    mistake where the student's output, gradient or buffer equals its own; the right
    module passes with the mistakes given."""
    from minigrad.exercises.normalization import (BATCHNORM1D_MISTAKES, EPS_MISSING,
                                                  EPS_OUTSIDE, with_random_affine)

    reference = with_random_affine(nn.BatchNorm1d)
    check_module(batch_norm_module(False), reference, args=(4,), inputs=[(6, 4)],
                 mistakes=BATCHNORM1D_MISTAKES)
    for sentence, wrong in BATCHNORM1D_MISTAKES.items():
        if sentence in (EPS_OUTSIDE, EPS_MISSING):  # seen on a batch of small variance:
            continue  # tests/test_chapter_11_normalization.py
        message = fails(check_module, wrong, reference, args=(4,), inputs=[(6, 4)],
                        mistakes=BATCHNORM1D_MISTAKES)
        assert "in train mode: buffer" in message
        assert " ".join(sentence.split()[:8]) in " ".join(message.split()), (sentence, message)


def test_module_mistakes_are_named_in_eval_mode_and_for_gradients():
    class Halved(MyLinear):  # right in train mode, wrong in eval mode
        def forward(self, x):
            out = super().forward(x)
            return out if self.training else out * 0.5

    class NoBiasGradient(MyLinear):  # right values, the bias cut from the graph
        def forward(self, x):
            return x @ self.weight.T + self.bias.detach()

    mistakes = {"halved in eval mode (a test sentence).": Halved,
                "the bias gets no gradient (a test sentence).": NoBiasGradient}
    check_module(MyLinear, nn.Linear, args=(4, 3), inputs=[(5, 4)], mistakes=mistakes)
    message = fails(check_module, Halved, nn.Linear, args=(4, 3), inputs=[(5, 4)],
                    mistakes=mistakes)
    assert "in eval mode: the output" in message and "halved in eval mode" in message
    message = fails(check_module, NoBiasGradient, nn.Linear, args=(4, 3), inputs=[(5, 4)],
                    mistakes=mistakes)
    assert "gradient of bias" in message


def test_a_mistake_that_cannot_run_on_the_inputs_matches_nothing():
    class Raises(MyLinear):
        def forward(self, x):
            raise ValueError("cannot")

    check_module(MyLinear, nn.Linear, args=(4, 3), inputs=[(5, 4)],
                 mistakes={"never shown": Raises})
    message = fails(check_module, Raises, nn.Linear, args=(4, 3), inputs=[(5, 4)],
                    mistakes={"never shown": Raises})
    assert "raised ValueError" in message and "never shown" not in message


def test_a_batch_norm_with_its_own_mistake_list_still_names_batch_stats_in_eval():
    from minigrad.exercises.normalization import BATCHNORM1D_MISTAKES

    message = fails(check_module, batch_norm_module(True), nn.BatchNorm1d, args=(4,),
                    inputs=[(6, 4)], mistakes=BATCHNORM1D_MISTAKES)
    assert "batch statistics are used in eval mode" in message


def test_the_chapter_11_references_agree_with_pytorch():
    """What chapter 11's checks hold as right: batch norm's running statistics (unbiased
    variance, momentum 0.1) and Kaiming's std, as PyTorch has them."""
    torch = pytest.importorskip("torch")
    from minigrad.exercises.normalization import kaiming_reference

    rng = np.random.default_rng(0)
    mine, theirs = batch_norm_module(False)(3), torch.nn.BatchNorm1d(3)
    for _ in range(5):
        batch = rng.normal(2.0, 3.0, size=(7, 3)).astype(np.float32)
        mine(mg.tensor(batch)), theirs(torch.tensor(batch))
    assert np.allclose(mine.running_var.numpy(), theirs.running_var.numpy(), atol=1e-5)
    assert np.allclose(mine.running_mean.numpy(), theirs.running_mean.numpy(), atol=1e-5)
    for shape in [(300, 400), (64, 32, 3, 3)]:
        fan_in = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))[0]
        gain = torch.nn.init.calculate_gain("relu")
        assert math.isclose(kaiming_reference(shape), gain / math.sqrt(fan_in))


def dropout_class(scale=True, mask_in_backward="same"):
    class MyDropout(nn.Module):
        def __init__(self, p=0.5):
            super().__init__()
            self.p = p

        def forward(self, x):
            if not self.training:
                return x
            keep = (mg.rand(*x.shape) >= self.p).float()
            factor = 1 / (1 - self.p) if scale else 1.0
            if mask_in_backward == "same":
                return x * keep * factor
            fresh = (mg.rand(*x.shape) >= self.p).float()  # backward through another mask
            return (x * fresh * factor) + (x * (keep - fresh) * factor).detach()

    return MyDropout


def test_check_dropout_passes_a_right_dropout_and_names_its_mistakes():
    from minigrad.exercises.normalization import check_dropout

    check_dropout(dropout_class(), p=0.25)
    assert "not scaled" in fails(check_dropout, dropout_class(scale=False), p=0.25)
    message = fails(check_dropout, dropout_class(mask_in_backward="new"), p=0.25)
    assert "does not use the forward's mask" in message
    assert "dropout active in eval mode" in fails(check_dropout, dropout_module(True),
                                                  p=0.5)


# --- optimizers and training steps -----------------------------------------------------


def sgd_class(sign=1.0, clears=True):
    class MySGD(optim.Optimizer):
        def __init__(self, params, lr, momentum=0.0):
            super().__init__(params, dict(lr=lr, momentum=momentum))

        def zero_grad(self):
            if clears:
                super().zero_grad()

        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    grad = p.grad.numpy()
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    buf = grad.copy() if buf is None else group["momentum"] * buf + grad
                    state["momentum_buffer"] = buf
                    with mg.no_grad():
                        p -= sign * group["lr"] * mg.tensor(buf)

    return MySGD


def test_a_right_sgd_with_momentum_passes():
    check_optimizer_step(sgd_class(), optim.SGD, lr=0.1, momentum=0.9)


def test_an_update_with_the_wrong_sign_is_named():
    assert "wrong sign" in fails(check_optimizer_step, sgd_class(sign=-1.0), optim.SGD,
                                 lr=0.1, momentum=0.9)


def test_a_zero_grad_that_does_not_clear_is_named():
    assert "zero_grad was forgotten" in fails(check_optimizer_step, sgd_class(clears=False),
                                              optim.SGD, lr=0.1)


def model():
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


BATCHES = [(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3) * k,
            np.array([0, 1, 1, 0, 1])) for k in (1.0, -0.5, 2.0)]


def test_a_right_training_step_passes():
    def train_step(model, optimizer, x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    check_training_step(train_step, model, lambda p: optim.SGD(p, lr=0.5), BATCHES,
                        F.cross_entropy)


def test_a_training_step_without_zero_grad_is_named():
    def train_step(model, optimizer, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    message = fails(check_training_step, train_step, model, lambda p: optim.SGD(p, lr=0.5),
                    BATCHES, F.cross_entropy)
    assert "zero_grad was forgotten" in message and "step 2" in message


def test_a_training_step_that_steps_before_backward_is_named_by_the_exercise():
    def train_step(model, optimizer, x, y):
        optimizer.zero_grad()
        optimizer.step()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    def updates_nothing(model, optimizer, x, y):
        return None

    message = fails(check_training_step, train_step, model, lambda p: optim.SGD(p, lr=0.5),
                    BATCHES, F.cross_entropy,
                    mistakes={"the parameters did not move.": updates_nothing})
    assert "the parameters did not move" in message and "step 1" in message
    assert "zero_grad was forgotten" not in message


def test_a_right_training_step_passes_with_exercise_mistakes_given(capsys):
    def train_step(model, optimizer, x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    check_training_step(train_step, model, lambda p: optim.SGD(p, lr=0.5), BATCHES,
                        F.cross_entropy, mistakes={"nothing moves.": lambda *args: None})
    assert capsys.readouterr().out == "train_step: 3 steps are right.\n"


def right_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


@pytest.mark.parametrize("returns, words", [
    (lambda loss, model, x, y: None, "returned None, expected the loss"),
    (lambda loss, model, x, y: loss.item(), "not loss.item()"),
    (lambda loss, model, x, y: F.cross_entropy(model(x), y),
     "the loss of the model after optimizer.step()"),
])
def test_a_training_step_must_return_the_loss_it_called_backward_on(returns, words):
    def train_step(model, optimizer, x, y):
        return returns(right_step(model, optimizer, x, y), model, x, y)

    message = fails(check_training_step, train_step, model,
                    lambda p: optim.SGD(p, lr=0.5), BATCHES, F.cross_entropy)
    assert words in message and "step 1" in message


# --- plain values ----------------------------------------------------------------------


def test_check_value_passes_and_names_a_given_mistake(capsys):
    check_value(np.array([1.0, 2.0]), np.array([1.0, 2.0]), "x.grad")
    assert capsys.readouterr().out == "x.grad: right.\n"
    message = fails(check_value, 2.0, 3.0, "df/dx", mistakes={
        "the +1 from the second use of x is missing.": 2.0})
    assert "the +1 from the second use of x is missing" in message


def test_check_value_refuses_a_tensor_in_a_graph_where_a_number_is_expected():
    weight = mg.tensor([1.5, -2.0], requires_grad=True)
    total = 0.0
    for _ in range(2):
        total += (weight * weight).sum()  # a running total of loss tensors, not .item()
    message = fails(check_value, total, 12.5, "the mean loss")
    assert "requires grad" in message and ".item()" in message
    check_value(total.item(), 12.5, "the mean loss")  # the number itself passes
    check_value(mg.tensor(12.5), 12.5, "a tensor outside any graph")


def test_no_constant_factor_is_guessed_for_a_single_number():
    # one wrong number is always some factor times the right one: no clue in that
    message = fails(check_value, 0.8434, 0.5959, "the mean loss")
    assert "constant factor" not in message and "wrong values" in message
    assert "wrong sign" in fails(check_value, -2.5, 2.5, "the slope")
    assert "2 times" in fails(check_value, [2.0, 4.0, -6.0], [1.0, 2.0, -3.0], "w.grad")


def test_an_exercise_s_own_mistake_is_named_before_a_generic_factor():
    message = fails(check_value, [6.0, 2.0, 4.0], [9.0, 3.0, 6.0], "w.grad", mistakes={
        "that is 2 backward() calls' worth.": [6.0, 2.0, 4.0]})
    assert "2 backward() calls' worth" in message and "constant factor" not in message


def test_text_is_refused_where_numbers_are_expected():
    message = fails(check_value, ("18", "6"), (18.0, 6.0), "(grad_w, grad_b)")
    assert "got text" in message and "without quotes" in message
    assert "got text" in fails(check_value, "18", 18.0, "grad_w")


def test_each_item_of_a_tuple_of_numbers_must_be_one_number():
    message = fails(check_value, ([18.0], [6.0]), (18.0, 6.0), "(grad_w, grad_b)")
    assert message.startswith("grad_w: got [18.0], expected a single number")
    assert "keepdim" not in message
    message = fails(check_value, (18.0, np.array([6.0])), (18.0, 6.0), "the pair")
    assert message.startswith("the pair[1]: got array([6.]), expected a single number")
    check_value((np.float64(18.0), mg.tensor(6.0)), (18.0, 6.0), "(grad_w, grad_b)")


def test_a_python_number_is_required_when_asked(capsys):
    message = fails(check_value, np.float32(0.5), 0.5, "the mean", python_number=True)
    assert "numpy.float32" in message and "plain Python number" in message
    assert "plain Python number" in fails(check_value, mg.tensor(0.5), 0.5, "the mean",
                                          python_number=True)
    check_value(np.float32(0.5), 0.5, "the mean")  # not asked: a NumPy scalar is fine
    check_value(0.5, 0.5, "the mean", python_number=True)
    assert capsys.readouterr().out == "the mean: right.\nthe mean: right.\n"


def test_check_value_names_a_wrong_dtype_when_asked():
    message = fails(check_value, np.array([1, 2]), np.array([1.0, 2.0]), "t",
                    check_dtype=True)
    assert "wrong dtype" in message


def test_messages_are_short():
    message = raw_failure(check_function, mul_function(lambda x, y, g: (-g * y, -g * x)),
                    MUL_CASES, mul)
    assert len(message.splitlines()) <= 12 and max(map(len, message.splitlines())) <= 78


def test_an_exercise_s_own_mistake_is_named_before_the_generic_overflow_guess():
    # a max whose maxima lost their dimension divides 0/0: nan, but nothing overflowed
    wrong = np.array([np.nan, 1.0, np.nan, 0.0])
    message = fails(check_value, wrong, [0.0, 1.0, 1.0, 0.0],
                    mistakes={"the maxima lost their dimension": wrong})
    assert "lost their dimension" in message and "overflowed" not in message
    assert "overflowed" in fails(check_value, wrong, [0.0, 1.0, 1.0, 0.0])


def test_chapter_5_s_max_without_keepdims_is_named_not_blamed_on_an_overflow():
    from minigrad.exercises.reductions import MAX_MISTAKES

    class MyMax(mg.Function):  # the maxima saved without keepdims: 0/0 in some rows
        @staticmethod
        def forward(ctx, x, dim=None, keepdim=False):
            biggest = np.max(x, axis=1)
            ctx.save_for_backward(x, biggest)
            return biggest

        @staticmethod
        def backward(ctx, grad_output):
            x, biggest = ctx.saved_tensors
            winners = x == biggest
            return grad_output[:, None] * winners / winners.sum(axis=1, keepdims=True)

    ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [-1.0, 5.0, 0.0]])
    with np.errstate(invalid="ignore"):
        message = fails(check_function, MyMax, [[ties]], lambda x, dim: x.max(dim).values,
                        kwargs={"dim": 1}, mistakes=MAX_MISTAKES)
    assert "lost their dimension" in message and "overflowed" not in message


def test_a_gradient_returned_for_a_keyword_argument_is_explained():
    class MySum(mg.Function):
        @staticmethod
        def forward(ctx, x, dim=None):
            ctx.shape = x.shape
            return x.sum(axis=dim)

        @staticmethod
        def backward(ctx, grad_output):
            return np.broadcast_to(grad_output[:, None], ctx.shape), None

    message = fails(check_function, MySum, [(3, 4)], lambda x, dim: x.sum(dim),
                    kwargs={"dim": 1})
    assert "returned 2 gradient(s)" in message and "(dim) are not inputs" in message


def test_other_settings_are_checked_in_the_same_call_with_one_line(capsys):
    class MySum(mg.Function):  # right for dim=1 only: always sums over dimension 1
        @staticmethod
        def forward(ctx, x, dim=None):
            ctx.shape = x.shape
            return x.sum(axis=1)

        @staticmethod
        def backward(ctx, grad_output):
            return np.broadcast_to(grad_output[:, None], ctx.shape)

    check_function(MySum, [(3, 4)], lambda x, dim: x.sum(dim), kwargs={"dim": 1},
                   more=[({"dim": 1}, [(2, 5)])])
    assert capsys.readouterr().out.count("\n") == 1
    assert "dim=0" in fails(check_function, MySum, [(3, 4)], lambda x, dim: x.sum(dim),
                            kwargs={"dim": 1}, more=[({"dim": 0}, [(3, 3)])])


def test_a_setting_in_more_can_bring_its_own_mistakes():
    from minigrad.exercises.reductions import MEAN_OVER_0_2_MISTAKES

    class MyMean(mg.Function):  # N from the first reduced dimension only
        @staticmethod
        def forward(ctx, x, dim=None, keepdim=False):
            ctx.shape, ctx.count = x.shape, x.shape[dim[0]]
            return x.mean(axis=dim, keepdims=keepdim)

        @staticmethod
        def backward(ctx, grad_output):
            return np.broadcast_to(grad_output, ctx.shape) / ctx.count

    message = fails(check_function, MyMean, [(3, 1, 1)], lambda x, dim, keepdim:
                    x.mean(dim, keepdim), kwargs={"dim": (0, 2), "keepdim": True},
                    more=[({"dim": (0, 2), "keepdim": True}, [(3, 2, 4)],
                           MEAN_OVER_0_2_MISTAKES)])
    assert "the size of only one reduced dimension" in message


# --- chapter 2: a backward that must do the broadcast sum itself -----------------------


def test_a_gradient_of_the_output_shape_is_summed_for_the_student_by_default():
    unsummed = mul_function(lambda x, y, g: (g * y, g * x))
    check_function(unsummed, [(3, 4), (4,)], lambda x, y: x * y)


def test_exact_shapes_names_a_gradient_not_summed_back_to_its_input():
    unsummed = mul_function(lambda x, y, g: (g * y, g * x))
    message = fails(check_function, unsummed, [(3, 1), (1, 4)], lambda x, y: x * y,
                    exact_shapes=True)
    assert "gradient for input 0 (shape (3, 1))" in message
    assert "not summed over the broadcast dimensions" in message


def test_exact_shapes_passes_a_backward_that_sums_itself():
    from minigrad.autograd import sum_to_shape

    summed = mul_function(lambda x, y, g: (sum_to_shape(g * y, x.shape),
                                           sum_to_shape(g * x, y.shape)))
    check_function(summed, [[(3, 1), (1, 4)], [(2, 3, 1), (3, 4)], [(3, 4), ()]],
                   lambda x, y: x * y, exact_shapes=True)


def test_a_returned_shape_tuple_is_shown_with_its_values():
    def aligned_left(a, b):
        return (max(a[0], b[0]), *a[1:])

    message = fails(check_array_function, aligned_left, [((3, 4), (4,))],
                    lambda a, b: tuple(np.broadcast_shapes(a, b)))
    assert "returned tuple (4, 4)" in message


# --- chapter 0's own mistakes (minigrad/exercises/start_here.py) -------------------------


def test_chapter_0_s_epoch_mistakes_are_named():
    from minigrad.exercises.start_here import batch_losses, epoch_mistakes

    def small_model():
        mg.manual_seed(3)
        return model()

    def sgd(parameters):
        return optim.SGD(parameters, lr=0.5)

    reference = small_model()
    losses = batch_losses(right_step, reference, sgd(reference.parameters()), BATCHES)
    mistakes = epoch_mistakes(right_step, small_model, sgd, BATCHES)

    def epoch(evaluate_only=False, twice=False, divide=None):
        trained = small_model()
        optimizer, total = sgd(trained.parameters()), 0.0
        for x, y in BATCHES:
            x, y = mg.tensor(x), mg.tensor(y)
            if evaluate_only:
                total += F.cross_entropy(trained(x), y).item()
                continue
            if twice:
                right_step(trained, optimizer, x, y)
            total += right_step(trained, optimizer, x, y).item()
        return total / (divide or len(BATCHES))

    check_value(epoch(), float(np.mean(losses)), "the mean", mistakes=mistakes)
    for wrong, words in ((epoch(evaluate_only=True), "before any training"),
                         (epoch(twice=True), "twice per batch"),
                         (epoch(divide=5), "divided by the batch size (5 points")):
        message = fails(check_value, wrong, float(np.mean(losses)), "the mean",
                        mistakes=mistakes)
        assert words in message


def test_chapter_0_s_epoch_check_sends_a_step_that_returns_no_tensor_to_exercise_3():
    from minigrad.exercises.start_here import batch_losses

    def returns_the_number(model, optimizer, x, y):
        return right_step(model, optimizer, x, y).item()

    trained = model()
    message = fails(batch_losses, returns_the_number, trained,
                    optim.SGD(trained.parameters(), lr=0.5), BATCHES)
    assert "exercise 3" in message and "returned float" in message


def test_a_forward_of_the_wrong_shape_is_named_as_such_not_a_crash_in_the_check():
    class SumRows(mg.Function):  # sums over the wrong axis: (4,) where (3,) is expected
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sum(axis=0)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return np.broadcast_to(grad_output, x.shape).copy()

    message = fails(check_function, SumRows, [(3, 4)], lambda x: x.sum(dim=1))
    assert "the output: wrong shape" in message and "expected shape (3,)" in message


def test_running_statistics_updated_in_eval_mode_are_named_not_called_dropout():
    class UpdatesInEval(nn.BatchNorm1d):
        def forward(self, x):
            out = super().forward(x)
            if not self.training:  # the mistake: the running mean moves in eval mode too
                with mg.no_grad():
                    self.running_mean.mul_(0.9).add_(0.1 * x.mean(dim=0))
            return out

    message = fails(check_module, UpdatesInEval, nn.BatchNorm1d, args=(4,), inputs=[(6, 4)])
    assert "changed running_mean" in message and "only when self.training" in message
    assert "dropout" not in message
