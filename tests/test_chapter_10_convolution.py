"""Chapter 10 (convolution and pooling): the chapter's reference answers against PyTorch
(values, gradients, the tie rule of max pooling), and the checks of its exercises, each
of which must name its classic mistakes (minigrad/exercises/convolution.py)."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest
from conftest import fails

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.function import Context
from minigrad.exercises import check_array_function, check_function
from minigrad.exercises.checks import WrongOutput
from minigrad.exercises.convolution import (IM2COL_MISTAKES, OUTPUT_SIZE_MISTAKES,
                                            check_conv_init, col2im, conv2d_gradients,
                                            conv2d_mistakes, im2col, max_pool2d_gradient,
                                            max_pool2d_mistakes, output_size, tied_images)

CHAPTER = (pathlib.Path(__file__).resolve().parents[1] / "notebooks"
           / "10_convolution_and_pooling.ipynb")


def _answers() -> dict:
    """The chapter's solution cells, run: conv_output_size, my_im2col, MyConv2dFunction,
    MyMaxPool2d, MyConv2d."""
    namespace = {"mg": mg, "np": np, "nn": nn, "math": math}
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)
    return namespace


ANSWERS = _answers()
SETTINGS = [(1, 0), (2, 1), (1, 1), (2, 0), (3, 2)]


def _torch_conv(x, w, b, g, stride, padding):
    torch = pytest.importorskip("torch")
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    out = torch.nn.functional.conv2d(tx, tw, tb, stride=stride, padding=padding)
    out.backward(torch.tensor(g))
    return out.detach().numpy(), tx.grad.numpy(), tw.grad.numpy(), tb.grad.numpy()


def _conv_case(stride, padding, seed=0):
    rng = np.random.default_rng(seed)
    x, w, b = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 2)), \
        rng.standard_normal(4)
    shape = (2, 4, output_size(7, 3, stride, padding), output_size(6, 2, stride, padding))
    return x, w, b, rng.standard_normal(shape)


# --- the reference answers, against PyTorch -------------------------------------------------


@pytest.mark.parametrize("stride, padding", SETTINGS)
def test_the_conv2d_answer_has_pytorch_s_values_and_gradients(stride, padding):
    x, w, b, g = _conv_case(stride, padding)
    expected = _torch_conv(x, w, b, g, stride, padding)
    tensors = [mg.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = ANSWERS["MyConv2dFunction"].apply(*tensors, stride=stride, padding=padding)
    (out * mg.tensor(g)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), expected[0], rtol=1e-10, atol=1e-12)
    for tensor, right in zip(tensors, expected[1:]):
        np.testing.assert_allclose(tensor.grad.numpy(), right, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("stride, padding", SETTINGS)
def test_the_checker_s_references_are_pytorch_s(stride, padding):
    x, w, b, g = _conv_case(stride, padding, seed=1)
    expected = _torch_conv(x, w, b, g, stride, padding)
    cols = im2col(x, (3, 2), stride, padding)
    out = (cols @ w.reshape(4, -1).T + b).reshape(
        2, expected[0].shape[2], expected[0].shape[3], 4).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(out, expected[0], rtol=1e-10)
    for mine, right in zip(conv2d_gradients(x, w, b, g, stride, padding), expected[1:]):
        np.testing.assert_allclose(mine, right, rtol=1e-10, atol=1e-12)


def test_col2im_adds_overlapping_windows_and_assigning_loses_them():
    x = np.zeros((1, 1, 4, 4))
    ones = np.ones((9, 4))  # 3x3 windows of 2x2, stride 1: the centre is in 4 windows
    added = col2im(ones, x.shape, (2, 2))
    assert added[0, 0, 1, 1] == 4 and added[0, 0, 0, 0] == 1
    assert col2im(ones, x.shape, (2, 2), assign=True).max() == 1


def test_the_input_gradient_is_a_full_correlation_with_the_flipped_kernel():
    rng = np.random.default_rng(2)
    x, w, g = rng.standard_normal((1, 1, 5, 6)), rng.standard_normal((1, 1, 3, 2)), \
        rng.standard_normal((1, 1, 3, 5))
    grad_x = conv2d_gradients(x, w, np.zeros(1), g)[0]
    padded = np.pad(g[0, 0], ((2, 2), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 2))
    np.testing.assert_allclose(grad_x[0, 0], (windows * w[0, 0, ::-1, ::-1]).sum(axis=(-2, -1)))
    assert not np.allclose(grad_x[0, 0], (windows * w[0, 0]).sum(axis=(-2, -1)))


@pytest.mark.parametrize("kernel, stride", [(2, 2), (3, 2), (2, 1), (3, 1)])
def test_max_pool_gives_a_tied_window_s_gradient_to_its_first_maximum_as_pytorch(kernel, stride):
    torch = pytest.importorskip("torch")
    x = tied_images((2, 2, 7, 6), seed=3)
    rng = np.random.default_rng(4)
    tx = torch.tensor(x, requires_grad=True)
    out = torch.nn.functional.max_pool2d(tx, kernel, stride)
    g = rng.standard_normal(tuple(out.shape))
    out.backward(torch.tensor(g))
    assert (np.diff(np.sort(x.reshape(-1))) == 0).any()  # there are ties
    np.testing.assert_allclose(max_pool2d_gradient(x, g, kernel, stride), tx.grad.numpy())
    mine = mg.tensor(x, requires_grad=True)
    result = ANSWERS["MyMaxPool2d"].apply(mine, kernel_size=kernel, stride=stride)
    (result * mg.tensor(g)).sum().backward()
    np.testing.assert_allclose(result.detach().numpy(), out.detach().numpy())
    np.testing.assert_allclose(mine.grad.numpy(), tx.grad.numpy())
    builtin = mg.tensor(x, requires_grad=True)
    (F.max_pool2d(builtin, kernel, stride) * mg.tensor(g)).sum().backward()
    np.testing.assert_allclose(builtin.grad.numpy(), tx.grad.numpy())


def test_the_conv_module_answer_matches_torch_s_with_the_same_weights():
    torch = pytest.importorskip("torch")
    mine = ANSWERS["MyConv2d"](2, 3, (3, 2), stride=2, padding=1)
    theirs = torch.nn.Conv2d(2, 3, (3, 2), stride=2, padding=1).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(mine.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(mine.bias.detach().numpy()))
    x = np.random.default_rng(5).standard_normal((2, 2, 5, 6)).astype(np.float32)
    np.testing.assert_allclose(mine(mg.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x, dtype=torch.float64)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_output_size_is_pytorch_s():
    torch = pytest.importorskip("torch")
    for size, kernel, stride, padding in [(10, 3, 1, 2), (8, 3, 2, 1), (7, 3, 2, 1), (28, 5, 3, 0)]:
        out = torch.nn.functional.conv2d(torch.zeros(1, 1, size, size),
                                         torch.zeros(1, 1, kernel, kernel), stride=stride,
                                         padding=padding)
        assert ANSWERS["conv_output_size"](size, kernel, stride, padding) == out.shape[-1] \
            == output_size(size, kernel, stride, padding)


# --- the checks name each mistake ------------------------------------------------------------

OUTPUT_CASES = [(10, 3, 1, 2), (8, 3, 2, 1), (7, 3, 2, 1), (8, 8, 1, 0)]


@pytest.mark.parametrize("mistake", list(OUTPUT_SIZE_MISTAKES))
def test_the_output_size_check_names_each_mistake(mistake):
    message = fails(check_array_function, OUTPUT_SIZE_MISTAKES[mistake], cases=OUTPUT_CASES,
                    reference=output_size, mistakes=OUTPUT_SIZE_MISTAKES)
    assert "It looks like " + mistake[:40] in message


@pytest.mark.parametrize("mistake", list(IM2COL_MISTAKES))
def test_the_im2col_check_names_each_mistake(mistake):
    rng = np.random.default_rng(0)
    cases = [(rng.standard_normal((2, 3, 4, 5)), (2, 3), 1, 0)]
    message = fails(check_array_function, IM2COL_MISTAKES[mistake], cases=cases,
                    reference=im2col, mistakes=IM2COL_MISTAKES)
    assert mistake[:40] in message


def _wrong_conv(gradients, output=None):
    """A Function with the right forward (or ``output.make``, a ``wrong_output``) and the
    given (wrong) gradients."""

    class WrongConv(mg.Function):
        @staticmethod
        def forward(ctx, x, weight, bias, stride=1, padding=0):
            ctx.save_for_backward(x, weight, bias)
            ctx.stride, ctx.padding = stride, padding
            if output is not None:
                return output.make(x, weight, bias)
            return ANSWERS["MyConv2dFunction"].forward(Context(), x, weight,
                                                       bias, stride, padding)

        @staticmethod
        def backward(ctx, grad_output):
            return gradients(*ctx.saved_tensors, grad_output)

    return WrongConv


def _reference_conv(x, weight, bias, stride=1, padding=0):
    return F.conv2d(x, weight, bias, stride=stride, padding=padding)


@pytest.mark.parametrize("stride, padding", [(1, 0), (2, 1)])
@pytest.mark.parametrize("mistake", list(conv2d_mistakes()))
def test_the_conv_check_names_each_mistake(mistake, stride, padding):
    wrong = conv2d_mistakes(stride, padding)[mistake]
    if isinstance(wrong, WrongOutput):  # a mistake in forward, with the right gradients
        wrong = _wrong_conv(lambda x, w, b, g: conv2d_gradients(x, w, b, g, stride, padding),
                            output=wrong)
    else:
        wrong = _wrong_conv(wrong)
    message = fails(check_function, wrong, inputs=[[(2, 3, 5, 6), (4, 3, 3, 2), (4,)]],
                    kwargs={"stride": stride, "padding": padding},
                    reference=_reference_conv, mistakes=conv2d_mistakes(stride, padding))
    assert mistake[:40] in message


def test_the_conv_check_passes_the_right_gradients_and_fails_a_blank_stub():
    check_function(_wrong_conv(lambda x, w, b, g: conv2d_gradients(x, w, b, g, 2, 1)),
                   inputs=[[(2, 3, 5, 6), (4, 3, 3, 2), (4,)]],
                   kwargs={"stride": 2, "padding": 1}, reference=_reference_conv)

    def blank(*arrays):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="NotImplementedError"):
        check_function(_wrong_conv(blank), inputs=[[(2, 3, 5, 6), (4, 3, 3, 2), (4,)]],
                       reference=_reference_conv)


def _wrong_pool(gradient):
    class WrongPool(mg.Function):
        @staticmethod
        def forward(ctx, x, kernel_size, stride=None):
            ctx.save_for_backward(x)
            return ANSWERS["MyMaxPool2d"].forward(Context(), x, kernel_size,
                                                  stride)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return gradient(x, grad_output)

    return WrongPool


@pytest.mark.parametrize("kernel, stride", [(2, 2), (3, 2)])
def test_the_max_pool_check_names_each_mistake(kernel, stride):
    mistakes = max_pool2d_mistakes(kernel, stride)
    assert len(mistakes) == (6 if stride < kernel else 5)  # overlaps: "assigned" too
    for mistake, wrong in mistakes.items():
        message = fails(check_function, _wrong_pool(wrong),
                        inputs=[[tied_images((2, 2, 7, 6))]],
                        kwargs={"kernel_size": kernel, "stride": stride},
                        reference=lambda x, kernel_size, stride: F.max_pool2d(
                            x, kernel_size, stride), mistakes=mistakes)
        assert mistake[:40] in message


def _conv_layer(bound_for_weight, bound_for_bias=None):
    class Layer(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size):
            super().__init__()
            kh, kw = kernel_size
            fans = (in_channels, out_channels, kh, kw)
            wb = bound_for_weight(*fans)
            bb = (bound_for_bias or bound_for_weight)(*fans)
            self.weight = nn.Parameter(mg.empty(out_channels, in_channels, kh, kw)
                                       .uniform_(-wb, wb))
            self.bias = nn.Parameter(mg.empty(out_channels).uniform_(-bb, bb))

    return Layer


def test_the_init_check_passes_pytorch_s_bound_and_names_the_wrong_ones():
    check_conv_init(_conv_layer(lambda i, o, kh, kw: 1 / math.sqrt(i * kh * kw)))
    wrong = {"the bound is 1/sqrt(in_channels) (the fan-in":
             lambda i, o, kh, kw: 1 / math.sqrt(i),
             "(the fan-out)": lambda i, o, kh, kw: 1 / math.sqrt(o * kh * kw),
             "Kaiming's bound": lambda i, o, kh, kw: math.sqrt(6 / (i * kh * kw))}
    for words, bound in wrong.items():
        assert words in fails(check_conv_init, _conv_layer(bound))
    with pytest.raises(AssertionError, match="zero"):
        check_conv_init(_conv_layer(lambda i, o, kh, kw: 1 / math.sqrt(i * kh * kw),
                                    lambda *fans: 0.0))
