"""Broadcasting, as properties over random shapes.

For any two shapes that broadcast, an elementwise op and the batch dimensions of matmul
give NumPy's values, and each input's gradient is the upstream gradient (times the local
derivative) summed back to that input's shape. Shapes that do not broadcast raise
``mg.ShapeError``, whose message names the op and both shapes.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg

PROPERTY = settings(max_examples=50, deadline=None)

# nonzero (we divide by them) and exact in float32; few, so that maximum() often ties
VALUES = st.sampled_from([-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 2.0])
GRADIENTS = st.floats(-2, 2, width=32)


def sum_to_shape(gradient: np.ndarray, shape: tuple) -> np.ndarray:
    """Reference reduction: sum over the leading dimensions that broadcasting added,
    then over every dimension where ``shape`` has size 1 (keeping it)."""
    gradient = gradient.sum(axis=tuple(range(gradient.ndim - len(shape))))
    ones = tuple(axis for axis, size in enumerate(shape) if size == 1)
    return np.asarray(gradient.sum(axis=ones, keepdims=True))


def maximum_share(x, y):
    """maximum's gradient goes to the larger input, half to each on a tie (documented)."""
    return np.where(x > y, 1.0, np.where(x == y, 0.5, 0.0))


# name, minigrad op, NumPy op, local derivatives (d out / d x, d out / d y)
ELEMENTWISE = [
    ("add", operator.add, np.add, lambda x, y: (1.0, 1.0)),
    ("sub", operator.sub, np.subtract, lambda x, y: (1.0, -1.0)),
    ("mul", operator.mul, np.multiply, lambda x, y: (y, x)),
    ("div", operator.truediv, np.divide, lambda x, y: (1 / y, -x / (y * y))),
    ("maximum", lambda a, b: a.maximum(b), np.maximum,
     lambda x, y: (maximum_share(x, y), 1 - maximum_share(x, y))),
]
each_elementwise_op = pytest.mark.parametrize("name, op, numpy_op, derivatives", ELEMENTWISE,
                                              ids=[row[0] for row in ELEMENTWISE])


@st.composite
def broadcastable_operands(draw, signature=None, max_dims=4):
    """Two float32 arrays whose shapes broadcast, and an upstream gradient for the result."""
    if signature:
        shapes = draw(hnp.mutually_broadcastable_shapes(signature=signature, max_dims=max_dims,
                                                        max_side=4))
    else:
        shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0,
                                                        max_dims=max_dims, max_side=4))
    x, y = (draw(hnp.arrays(np.float32, shape, elements=VALUES))
            for shape in shapes.input_shapes)
    upstream = draw(hnp.arrays(np.float32, shapes.result_shape, elements=GRADIENTS))
    return x, y, upstream


# --- elementwise ops --------------------------------------------------------------------------


@each_elementwise_op
@PROPERTY
@given(operands=broadcastable_operands())
def test_elementwise_values_broadcast_like_numpy(name, op, numpy_op, derivatives, operands):
    x, y, _ = operands
    result = op(mg.tensor(x), mg.tensor(y))
    expected = numpy_op(x, y)
    assert result.shape == expected.shape
    assert result.dtype == np.float32
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


@each_elementwise_op
@PROPERTY
@given(operands=broadcastable_operands())
def test_elementwise_gradients_are_summed_back_to_each_input_shape(name, op, numpy_op,
                                                                    derivatives, operands):
    x, y, upstream = operands
    a, b = mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)
    op(a, b).backward(upstream)
    dx, dy = derivatives(x.astype(np.float64), y.astype(np.float64))
    np.testing.assert_allclose(a.grad.numpy(), sum_to_shape(upstream * dx, x.shape),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), sum_to_shape(upstream * dy, y.shape),
                               rtol=1e-5, atol=1e-6)


# --- matmul: the batch dimensions broadcast -------------------------------------------------------


MATRICES = "(m,n),(n,p)->(m,p)"


@PROPERTY
@given(operands=broadcastable_operands(signature=MATRICES, max_dims=2))
def test_matmul_batch_dimensions_broadcast_like_numpy(operands):
    a, b, _ = operands
    result = mg.tensor(a) @ mg.tensor(b)
    expected = np.matmul(a, b)
    assert result.shape == expected.shape
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5, atol=1e-6)


@PROPERTY
@given(operands=broadcastable_operands(signature=MATRICES, max_dims=2))
def test_matmul_gradients_are_summed_over_broadcast_batch_dimensions(operands):
    a, b, upstream = operands
    ta, tb = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
    (ta @ tb).backward(upstream)
    a64, b64, upstream64 = (v.astype(np.float64) for v in (a, b, upstream))
    expected_a = sum_to_shape(upstream64 @ np.swapaxes(b64, -1, -2), a.shape)
    expected_b = sum_to_shape(np.swapaxes(a64, -1, -2) @ upstream64, b.shape)
    np.testing.assert_allclose(ta.grad.numpy(), expected_a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tb.grad.numpy(), expected_b, rtol=1e-5, atol=1e-5)


@PROPERTY
@given(operands=broadcastable_operands(signature=np.matmul.signature, max_dims=2))
def test_matmul_gradients_match_pytorch_for_1d_and_batched_operands(operands, torch):
    a, b, upstream = operands
    ta, tb = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
    (ta @ tb).backward(upstream)
    pa, pb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (pa @ pb).backward(torch.tensor(upstream))
    np.testing.assert_allclose(ta.grad.numpy(), pa.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tb.grad.numpy(), pb.grad.numpy(), rtol=1e-5, atol=1e-5)


# --- shapes that do not broadcast ---------------------------------------------------------------


@st.composite
def clashing_shapes(draw, min_dims=1):
    """Two shapes that clash in one dimension (different sizes, neither 1). Elsewhere they
    broadcast: the second may have 1s, or fewer leading dimensions."""
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=4, min_side=1, max_side=4))
    axis = draw(st.integers(0, len(shape) - 1))
    size_x, size_y = draw(st.lists(st.integers(2, 4), min_size=2, max_size=2, unique=True))
    x = shape[:axis] + (size_x,) + shape[axis + 1:]
    y = tuple(size_y if i == axis else 1 if draw(st.booleans()) else s
              for i, s in enumerate(shape))
    y = y[draw(st.integers(0, axis)):]
    return (x, y) if draw(st.booleans()) else (y, x)


BINARY = [("Add", operator.add), ("Sub", operator.sub), ("Mul", operator.mul),
          ("Div", operator.truediv), ("Maximum", lambda a, b: a.maximum(b)),
          ("Minimum", lambda a, b: a.minimum(b)), ("Pow", operator.pow)]


@pytest.mark.parametrize("name, op", BINARY, ids=[row[0] for row in BINARY])
@PROPERTY
@given(shapes=clashing_shapes())
def test_shapes_that_do_not_broadcast_raise_a_shape_error_naming_op_and_shapes(name, op,
                                                                               shapes):
    x_shape, y_shape = shapes
    x, y = mg.ones(x_shape, requires_grad=True), mg.ones(y_shape)
    with pytest.raises(mg.ShapeError) as error:
        op(x, y)
    message = str(error.value)
    assert name in message
    assert str(x_shape) in message
    assert str(y_shape) in message


@PROPERTY
@given(batch_shapes=clashing_shapes())
def test_matmul_batch_dimensions_that_do_not_broadcast_raise_a_shape_error(batch_shapes):
    a_shape, b_shape = batch_shapes[0] + (2, 3), batch_shapes[1] + (3, 2)
    with pytest.raises(mg.ShapeError) as error:
        mg.ones(a_shape) @ mg.ones(b_shape)
    message = str(error.value)
    assert "MatMul" in message
    assert str(a_shape) in message
    assert str(b_shape) in message
