"""Second derivatives through each op whose backward is recorded by a ``tensor_backward``
(convolution, pooling, products, einsum, indexing, attention, the piecewise-constant ops),
against PyTorch in float64. Each case is written once, as PyTorch code (``lib`` is
``minigrad`` or ``torch``), and differentiated twice in both libraries: a gradient
penalty (``grad(create_graph=True)``, then backward of a function of that gradient), and
a Hessian-vector product. The op table's ``gradgradcheck`` (tests/test_higher_order.py)
checks the same ops against finite differences; this file checks the numbers PyTorch gives.
"""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

rng = np.random.default_rng(28)


def real(*shape):
    return rng.standard_normal(shape)


def with_zeros(*shape, zeros=((0, 1), (1, 0), (1, 2))):
    """Values with zeros at ``zeros`` (row 1 has two: the product of the others is 0 too)."""
    array = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    for position in zeros:
        array[position] = 0.0
    return array


def index(lib, values):
    return lib.tensor(np.array(values), dtype=lib.int64)


# name -> (function of lib and the inputs, the input arrays). Each output goes through tanh
# in ``penalty``, so that the gradient depends on the inputs through the op's forward too.
CASES = {
    "conv2d_stride_padding_dilation": (
        lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2, padding=2, dilation=2),
        (real(2, 3, 7, 6), real(4, 3, 3, 2), real(4))),
    "conv2d_groups_same_padding": (
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same", groups=2),
        (real(1, 4, 5, 5), real(6, 2, 2, 3))),
    "conv_transpose2d_stride_output_padding": (
        lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(
            x, w, b, stride=2, padding=1, output_padding=1),
        (real(2, 3, 4, 3), real(3, 2, 3, 3), real(2))),
    "conv_transpose2d_groups_dilation": (
        lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, groups=2, dilation=(2, 1)),
        (real(1, 4, 3, 4), real(4, 3, 2, 2))),
    "max_pool2d_overlapping_padded": (
        lambda lib, x: lib.nn.functional.max_pool2d(x, 3, stride=2, padding=1),
        (real(2, 3, 6, 5),)),
    "avg_pool2d_padding_excluded": (
        lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, stride=2, padding=1,
                                                    count_include_pad=False),
        (real(2, 2, 5, 6),)),
    "prod_dim_with_zeros": (lambda lib, x: x.prod(dim=1), (with_zeros(3, 4),)),
    "prod_all_one_zero": (lambda lib, x: x.prod(), (with_zeros(2, 3, zeros=((1, 1),)),)),
    "cumprod_with_zeros": (lambda lib, x: x.cumprod(1), (with_zeros(3, 4),)),
    "einsum_batched_matmul": (
        lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), (real(2, 3, 4), real(2, 4, 2))),
    "einsum_letter_summed_in_one_operand": (
        lambda lib, a, b: lib.einsum("ij,kl->ik", a, b), (real(3, 4), real(2, 5))),
    "repeat_interleave_counts": (
        lambda lib, x: x.repeat_interleave(index(lib, [2, 0, 3]), dim=0), (real(3, 2),)),
    "unfold_overlapping": (lambda lib, x: x.unfold(1, 3, 2), (real(2, 7),)),
    "scatter": (
        lambda lib, x, src: x.scatter(1, index(lib, [[2, 0], [1, 3]]), src),
        (real(2, 4), real(2, 2))),  # (a larger src: PyTorch's double backward fails)
    "scatter_add_repeats": (
        lambda lib, x, src: x.scatter_add(0, index(lib, [[1, 0, 1], [1, 1, 0]]), src),
        (real(2, 3), real(2, 3))),
    "attention_causal": (
        lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=True),
        (real(2, 4, 3), real(2, 4, 3), real(2, 4, 2))),
    "attention_float_mask_input": (
        lambda lib, q, k, v, mask: lib.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask),
        (real(3, 2), real(4, 2), real(4, 3), real(3, 4))),
}


def penalty(lib, fn, arrays):
    """The gradient of sum(w * tanh(fn(inputs))), kept with its graph, then the backward
    of a gradient penalty sum(gradient^2): returns the gradients and the inputs' .grad."""
    inputs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    weight = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)),
                        dtype=lib.float64)
    grads = lib.autograd.grad((out.tanh() * weight).sum(), inputs, create_graph=True)
    sum((g * g).sum() for g in grads).backward()
    return [g.detach().numpy() for g in grads] + [x.grad.numpy() for x in inputs]


def hessian_vector_product(lib, fn, arrays):
    """H v for the loss sum(tanh(fn(inputs))^2), v a fixed direction per input."""
    inputs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    loss = (fn(lib, *inputs).tanh() ** 2).sum()
    grads = lib.autograd.grad(loss, inputs, create_graph=True)
    directions = [lib.tensor(np.random.default_rng(2).standard_normal(a.shape),
                             dtype=lib.float64) for a in arrays]
    dot = sum((g * v).sum() for g, v in zip(grads, directions))
    return [h.numpy() for h in lib.autograd.grad(dot, inputs)]


def assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_a_gradient_penalty_through_the_op_matches_pytorch(name):
    fn, arrays = CASES[name]
    ours, theirs = penalty(mg, fn, arrays), penalty(torch, fn, arrays)
    assert any(np.abs(g).max() > 1e-3 for g in theirs[len(arrays):])  # not all zeros
    assert_same(ours, theirs)


@pytest.mark.parametrize("name", CASES)
def test_a_hessian_vector_product_through_the_op_matches_pytorch(name):
    fn, arrays = CASES[name]
    assert_same(hessian_vector_product(mg, fn, arrays), hessian_vector_product(torch, fn, arrays))


def test_third_derivatives_through_pooling_and_prod_match_pytorch():
    x_array = with_zeros(1, 1, 4, 4, zeros=((0, 0, 1, 1),))

    def third(lib):
        x = lib.tensor(x_array, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.max_pool2d(x * x.sin(), 2, stride=1).prod(dim=-1)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sin().sum(), x)
        return [g.detach().numpy(), gg.detach().numpy(), ggg.numpy()]

    assert_same(third(mg), third(torch))


def test_a_small_cnn_hessian_vector_product_matches_pytorch():
    """H v of a CNN's loss with respect to its weights: conv, tanh, max pool, average pool."""
    x_array, w1, w2 = real(2, 1, 8, 8), real(3, 1, 3, 3) * 0.5, real(2, 3, 2, 2) * 0.5
    directions = [np.ones_like(w1), np.linspace(-1, 1, w2.size).reshape(w2.shape)]

    def run(lib):
        F = lib.nn.functional
        x = lib.tensor(x_array, dtype=lib.float64)
        weights = [lib.tensor(w, dtype=lib.float64, requires_grad=True) for w in (w1, w2)]
        hidden = F.max_pool2d(F.conv2d(x, weights[0], padding=1).tanh(), 2)
        out = F.avg_pool2d(F.conv2d(hidden, weights[1], stride=2).tanh(), 2)
        loss = (out ** 2).sum()
        grads = lib.autograd.grad(loss, weights, create_graph=True)
        dot = sum((g * lib.tensor(v, dtype=lib.float64)).sum()
                  for g, v in zip(grads, directions))
        return [h.numpy() for h in lib.autograd.grad(dot, weights)]

    assert_same(run(mg), run(torch))


@pytest.mark.parametrize("step", ["floor", "ceil", "round", "sign"])
def test_piecewise_constant_ops_have_zero_second_derivatives_as_in_pytorch(step):
    x_array = np.array([-1.7, -0.5, 0.0, 0.4, 2.5])

    def run(lib):
        x = lib.tensor(x_array, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((x * getattr(x, step)()).sum(), x, create_graph=True)
        assert g.requires_grad  # through x * step(x): the product's gradient has history
        g.sum().backward()
        return [g.detach().numpy(), x.grad.numpy()]

    ours, theirs = run(mg), run(torch)
    assert_same(ours, theirs)
    np.testing.assert_array_equal(ours[1], 0.0)
    assert mg.autograd.gradgradcheck(getattr(mg.Tensor, step),
                                     [mg.tensor(x_array + 0.1, requires_grad=True)])


def test_a_built_in_op_without_a_recorded_backward_is_refused_by_name(monkeypatch):
    """The path every op took before it had a recorded backward (and SetItem still does)."""
    from minigrad.higher_order import NotTwiceDifferentiableError
    from minigrad.ops.convolution import Conv2d

    monkeypatch.setattr(Conv2d, "twice_differentiable", False)
    x = mg.tensor(real(1, 1, 4, 4), requires_grad=True)
    out = mg.nn.functional.conv2d(x, mg.tensor(real(1, 1, 2, 2))).tanh().sum()
    with pytest.raises(NotTwiceDifferentiableError, match="Conv2d.*no differentiable backward"):
        mg.autograd.grad(out, x, create_graph=True)
    (g,) = mg.autograd.grad(out, x)  # first order still works
    assert g.shape == (1, 1, 4, 4)


def test_recorded_gradients_keep_float32():
    F = mg.nn.functional
    x = mg.tensor(real(1, 2, 6, 6), dtype=mg.float32, requires_grad=True)
    w = mg.tensor(real(2, 2, 3, 3), dtype=mg.float32, requires_grad=True)
    out = F.avg_pool2d(F.max_pool2d(F.conv2d(x, w, padding=1), 2).tanh(), 3).prod()
    gx, gw = mg.autograd.grad(out, (x, w), create_graph=True)
    assert gx.dtype == mg.float32 and gw.dtype == mg.float32
    ((gx * gx).sum() + (gw * gw).sum()).backward()
    assert x.grad.dtype == mg.float32 and w.grad.dtype == mg.float32
