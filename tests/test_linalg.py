"""The inverse and the determinant (minigrad/ops/linalg.py) where the op table does not
reach: singular matrices, and the errors a student meets. Values and gradients of
invertible matrices are in the op table (tests/op_cases_census.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg


@pytest.mark.parametrize("matrix", [np.zeros((3, 3)),
                                    np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0])],
                         ids=["zeros", "rank_one"])
def test_det_gradient_of_a_singular_matrix_matches_pytorch(torch, matrix):
    x = mg.tensor(matrix, requires_grad=True)
    x.det().backward()
    theirs = torch.tensor(matrix, requires_grad=True)
    theirs.det().backward()
    np.testing.assert_allclose(x.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_det_gradient_of_a_rank_deficient_matrix_is_the_adjugate():
    # rank n-1: the derivative adj(A)^T is not zero (PyTorch's LU-based backward gives 0)
    x = mg.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=mg.float64, requires_grad=True)
    x.det().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]])
    assert mg.gradcheck(lambda a: a.det(), [x])


def test_det_of_a_batch_has_the_batch_shape(torch):
    batch = np.random.default_rng(0).uniform(-1, 1, (2, 3, 4, 4))
    assert mg.det(mg.tensor(batch)).shape == tuple(torch.det(torch.tensor(batch)).shape)


def test_inverse_of_a_singular_matrix_says_so():
    with pytest.raises(np.linalg.LinAlgError, match="inverse: .*singular"):
        mg.zeros(2, 2).inverse()


@pytest.mark.parametrize("op", ["inverse", "det"])
def test_a_non_square_input_is_refused_with_its_shape(op):
    with pytest.raises(mg.ShapeError, match=rf"{op}: expected square matrices.*\(2, 3\)"):
        getattr(mg.ones(2, 3), op)()


def test_an_integer_matrix_is_refused_as_in_pytorch():
    with pytest.raises(TypeError, match="det: expected a floating point tensor"):
        mg.eye(2, dtype=mg.int64).det()
