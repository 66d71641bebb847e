"""The inverse and the determinant of square matrices (``t.inverse()``, ``mg.det(t)``),
batched over any leading dimensions, as PyTorch's are. The rest of ``torch.linalg`` is
left out on purpose (minigrad/unsupported.py)."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..function import Function


def check_matrices(a, op: str, square: bool = True) -> None:
    """A ShapeError (or TypeError) that says what ``op`` needs: float (square) matrices."""
    if a.ndim < 2 or square and a.shape[-1] != a.shape[-2]:
        needed = "square matrices, a tensor of shape (..., n, n)" if square else \
            "a matrix or a batch of matrices, shape (..., m, n)"
        raise ShapeError(f"{op}: expected {needed}, got shape {tuple(a.shape)}")
    if a.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating point tensor, got {a.dtype}; convert "
                        "it first (t.float())")


class Inverse(Function):
    """f(A) = A^-1,  df = -A^-1 dA A^-1, so  grad_A = -f^T G f^T
    (the backward uses only the output: it runs on Tensors as written)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, a):
        check_matrices(a, "inverse")
        try:
            out = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            error = np.linalg.LinAlgError(
                f"inverse: a matrix of the input (shape {tuple(a.shape)}) is singular (its "
                "determinant is 0), so it has no inverse; check for rows that depend on "
                "each other, or add a small multiple of the identity")
            error.minigrad = True  # says all there is to say: raised as it is
            raise error from None
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        out_t = out.swapaxes(-1, -2)
        return -(out_t @ grad_output @ out_t)


class Det(Function):
    """f(A) = det(A),  df/dA = adj(A)^T  (= det(A) A^-T where A is invertible)

    backward: adj(A)^T from an SVD, A = U S V^T gives adj(A)^T = det(U) det(V) U P V^T
    with P = diag(prod of the singular values but the i-th): no inverse, so a singular
    matrix has its gradient too. (At a matrix of rank n-1, PyTorch's LU-based backward
    gives 0; adj(A)^T is the derivative, which gradcheck confirms.)"""

    @staticmethod
    def forward(ctx, a):
        check_matrices(a, "det")
        out = np.asarray(np.linalg.det(a), dtype=a.dtype)  # an array, even for one matrix
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def output_shape(a):
        return tuple(a.shape[:-2])

    @staticmethod
    def backward(ctx, grad_output):
        a, _ = ctx.saved_tensors
        u, s, vh = np.linalg.svd(a)
        ones = np.ones(s.shape[:-1] + (1,), dtype=s.dtype)
        before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
        after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        sign = np.linalg.det(u) * np.linalg.det(vh)
        adjugate_t = sign[..., None, None] * ((u * (before * after)[..., None, :]) @ vh)
        return np.asarray(grad_output)[..., None, None] * adjugate_t

    # create_graph=True: det(A) A^-T with a recorded Inverse (so second derivatives need
    # an invertible matrix; a singular one raises Inverse's error)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        scale = (grad_output * out).unsqueeze(-1).unsqueeze(-1)
        return scale * Inverse.apply(a).swapaxes(-1, -2)
