"""Matrix decompositions: the singular value decomposition, the QR decomposition and the
eigen-decomposition of symmetric matrices, batched over leading dims as PyTorch's are.

Each backward is the standard formula for the reduced form (as PyTorch's
FunctionsManual.cpp has it), written with ``@``, ``swapaxes`` and elementwise arithmetic
only, so the same lines run on NumPy arrays (``backward``) and, recorded, on Tensors
(``create_graph=True``: higher_order.py swaps the saved outputs for the graph's Tensors).
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ..higher_order import graph_output
from .linalg import Inverse, check_matrices
from .movement import Cat


def _t(x):
    """The transpose of the last two dims (a batch of matrices)."""
    return x.swapaxes(-1, -2)


def _inverse(x):
    """A matrix inverse: NumPy's on arrays, the recorded Inverse on Tensors."""
    return np.linalg.inv(x) if isinstance(x, np.ndarray) else Inverse.apply(x)


def _outputs(node, saved):
    """The node's outputs as the graph's Tensors (re-made if the user dropped them: the
    second derivative of S alone runs through U and Vh too)."""
    return [graph_output(node, value, index) for index, value in enumerate(saved)]


class Svd(Function):
    """A = U diag(S) Vh, S descending. For the reduced form (k = min(m, n)), with
    E_ij = S_j^2 - S_i^2 and skew(X) = X - X^T:
        grad_A = U [ (skew(U^T gU) S_j + S_i skew(V^T gV)) / E + diag(gS) ] Vh
                 + (I - U U^T) gU S^-1 Vh   (m > k)   + U S^-1 gV^T (I - V Vh)   (n > k)
    (finite only for distinct singular values, as in PyTorch)."""

    twice_differentiable = True  # its backward runs on Tensors (see the module docstring)

    @staticmethod
    def forward(ctx, a, full_matrices=True):
        check_matrices(a, "svd", square=False)
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        u, s, vh = u.astype(a.dtype), s.astype(a.dtype), vh.astype(a.dtype)
        ctx.full_matrices = full_matrices and a.shape[-1] != a.shape[-2]
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def output_shape(a, full_matrices=True):
        *batch, m, n = a.shape
        k = min(m, n)
        if full_matrices:
            return (*batch, m, m), (*batch, k), (*batch, n, n)
        return (*batch, m, k), (*batch, k), (*batch, k, n)

    @staticmethod
    def output_dtype(a, full_matrices=True):
        return a.dtype, a.dtype, a.dtype

    @staticmethod
    def backward(ctx, grad_u, grad_s, grad_vh):
        return Svd.formula(ctx, *ctx.saved_tensors, grad_u, grad_s, grad_vh)

    @staticmethod
    def tensor_backward(ctx, grad_u, grad_s, grad_vh):
        return Svd.formula(ctx, *_outputs(ctx, ctx.saved_tensors), grad_u, grad_s, grad_vh)

    @staticmethod
    def formula(ctx, u, s, vh, grad_u, grad_s, grad_vh):
        if ctx.full_matrices and (grad_u is not None or grad_vh is not None):
            raise RuntimeError(
                "svd: the gradient of U or Vh with full_matrices=True is not defined for a "
                f"non-square matrix (U {tuple(u.shape)}, Vh {tuple(vh.shape)}); use "
                "torch.linalg.svd(A, full_matrices=False)")
        k = s.shape[-1]
        u, vh = u[..., :, :k], vh[..., :k, :]
        m, n = u.shape[-2], vh.shape[-1]
        eye = np.eye(k, dtype=s.dtype)
        middle = 0 * eye if grad_s is None else grad_s[..., :, None] * eye
        if grad_u is not None or grad_vh is not None:
            squares = s * s
            gaps = squares[..., None, :] - squares[..., :, None] + eye  # 1 on the diagonal
            if grad_u is not None:
                inner = _t(u) @ grad_u
                middle = middle + (inner - _t(inner)) * s[..., None, :] / gaps
            if grad_vh is not None:
                inner = vh @ _t(grad_vh)
                middle = middle + s[..., :, None] * (inner - _t(inner)) / gaps
        grad_a = u @ middle @ vh
        if m > k and grad_u is not None:
            scaled = grad_u / s[..., None, :]
            grad_a = grad_a + (scaled - u @ (_t(u) @ scaled)) @ vh
        if n > k and grad_vh is not None:
            scaled = grad_vh / s[..., :, None]
            grad_a = grad_a + u @ (scaled - (scaled @ _t(vh)) @ vh)
        return grad_a


class Qr(Function):
    """A = Q R, Q with orthonormal columns, R upper triangular (the reduced form).
    For m >= n:  grad_A = [gQ + Q copyltu(M)] R^-T  with  M = R gR^T - gQ^T Q and
    copyltu(M) = tril(M) + tril(M, -1)^T (the symmetric matrix with M's lower triangle).
    For m < n, A = [X | Y] and R = [U | V]: grad_Y = Q gV, and grad_X is the square
    case's with gQ + Y gV^T for gQ."""

    twice_differentiable = True  # its backward runs on Tensors (see the module docstring)

    @staticmethod
    def forward(ctx, a, mode="reduced"):
        check_matrices(a, "qr", square=False)
        q, r = np.linalg.qr(a, mode=mode)
        q, r = q.astype(a.dtype), r.astype(a.dtype)
        ctx.mode = mode
        ctx.save_for_backward(a, q, r)
        return q, r

    @staticmethod
    def output_shape(a, mode="reduced"):
        *batch, m, n = a.shape
        k = m if mode == "complete" else min(m, n)
        return (*batch, m, k), (*batch, k, n)

    @staticmethod
    def output_dtype(a, mode="reduced"):
        return a.dtype, a.dtype

    @staticmethod
    def backward(ctx, grad_q, grad_r):
        a, q, r = ctx.saved_tensors
        return Qr.formula(ctx, a, q, r, grad_q, grad_r)

    @staticmethod
    def tensor_backward(ctx, grad_q, grad_r):
        a, q, r = ctx.saved_tensors
        return Qr.formula(ctx, a, *_outputs(ctx, (q, r)), grad_q, grad_r)

    @staticmethod
    def formula(ctx, a, q, r, grad_q, grad_r):
        m, n = a.shape[-2], a.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError(
                f"qr: the gradient of mode='complete' is not defined for a tall matrix "
                f"(shape {tuple(a.shape)}); use mode='reduced'")
        if m >= n:
            return _qr_square_backward(q, r, grad_q, grad_r)
        y = a[..., :, m:]
        grad_x = _qr_square_backward(q, r[..., :, :m], grad_q + y @ _t(grad_r[..., :, m:]),
                                     grad_r[..., :, :m])
        grad_y = q @ grad_r[..., :, m:]
        if isinstance(grad_x, np.ndarray):
            return np.concatenate([grad_x, grad_y], axis=-1)
        return Cat.apply(grad_x, grad_y, dim=grad_x.ndim - 1)  # recorded (create_graph)


def _qr_square_backward(q, r, grad_q, grad_r):
    """The m >= n formula of Qr's docstring."""
    k = r.shape[-1]
    lower = np.tril(np.ones((k, k), dtype=r.dtype))
    strictly_lower = np.tril(np.ones((k, k), dtype=r.dtype), -1)
    middle = r @ _t(grad_r) - _t(grad_q) @ q
    symmetric = middle * lower + _t(middle * strictly_lower)
    return (grad_q + q @ symmetric) @ _t(_inverse(r))


class Eigh(Function):
    """A = V diag(L) V^T for a symmetric A (only its lower triangle is read), L ascending:
        grad_A = V sym[ diag(gL) + (V^T gV) / E ] V^T,  E_ij = L_j - L_i (i != j),
    sym(M) = (M + M^T) / 2
    (finite only for distinct eigenvalues, as in PyTorch)."""

    twice_differentiable = True  # its backward runs on Tensors (see the module docstring)

    @staticmethod
    def forward(ctx, a, UPLO="L"):  # noqa: N803 - PyTorch's name
        check_matrices(a, "eigh", square=False)
        if a.shape[-1] != a.shape[-2]:
            raise ValueError(f"eigh: expected square matrices, shape (..., n, n), got shape "
                             f"{tuple(a.shape)}")
        values, vectors = np.linalg.eigh(a, UPLO=UPLO)
        values, vectors = values.astype(a.dtype), vectors.astype(a.dtype)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(values, vectors)
        return values, vectors

    @staticmethod
    def output_shape(a, UPLO="L"):  # noqa: N803
        return tuple(a.shape[:-1]), tuple(a.shape)

    @staticmethod
    def output_dtype(a, UPLO="L"):  # noqa: N803
        return a.dtype, a.dtype

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        return Eigh.formula(*ctx.saved_tensors, grad_values, grad_vectors)

    @staticmethod
    def tensor_backward(ctx, grad_values, grad_vectors):
        return Eigh.formula(*_outputs(ctx, ctx.saved_tensors), grad_values, grad_vectors)

    @staticmethod
    def formula(values, vectors, grad_values, grad_vectors):
        n = values.shape[-1]
        eye = np.eye(n, dtype=values.dtype)
        middle = 0 * eye if grad_values is None else grad_values[..., :, None] * eye
        if grad_vectors is not None:
            gaps = values[..., None, :] - values[..., :, None] + eye  # 1 on the diagonal
            middle = middle + (_t(vectors) @ grad_vectors) * (1 - eye) / gaps
        middle = (middle + _t(middle)) / 2  # symmetric, as PyTorch's: a step keeps A symmetric
        return vectors @ middle @ _t(vectors)


class Cholesky(Function):
    """A = L L^T, L lower triangular with a positive diagonal (A symmetric positive
    definite; only its lower triangle is read). With Phi(X) = the lower triangle of X with
    its diagonal halved:
        grad_A = 1/2 (S + S^T),  S = L^-T Phi(L^T gL) L^-1   (as PyTorch's)."""

    twice_differentiable = True  # its backward runs on Tensors (see the module docstring)

    @staticmethod
    def forward(ctx, a, upper=False):
        check_matrices(a, "cholesky", square=False)
        if a.shape[-1] != a.shape[-2]:
            raise ValueError(f"cholesky: expected square matrices, shape (..., n, n), got "
                             f"shape {tuple(a.shape)}")
        try:
            lower = np.linalg.cholesky(np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2))
        except np.linalg.LinAlgError:
            error = np.linalg.LinAlgError(
                f"cholesky: a matrix of the input (shape {tuple(a.shape)}) is not positive "
                "definite; check that it is symmetric with positive eigenvalues (for a "
                "covariance, add a small multiple of the identity)")
            error.minigrad = True
            raise error from None
        lower = lower.astype(a.dtype)
        ctx.upper = upper
        out = np.ascontiguousarray(np.swapaxes(lower, -1, -2)) if upper else lower
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def output_shape(a, upper=False):
        return tuple(a.shape)

    @staticmethod
    def backward(ctx, grad_output):
        return Cholesky.formula(ctx, ctx.saved_tensors[0], grad_output)

    @staticmethod
    def tensor_backward(ctx, grad_output):
        return Cholesky.formula(ctx, _outputs(ctx, ctx.saved_tensors)[0], grad_output)

    @staticmethod
    def formula(ctx, out, grad_output):
        lower, grad = (_t(out), _t(grad_output)) if ctx.upper else (out, grad_output)
        n = lower.shape[-1]
        phi = np.tril(np.ones((n, n), dtype=lower.dtype)) - 0.5 * np.eye(n, dtype=lower.dtype)
        inverse = _inverse(lower)
        middle = _t(inverse) @ ((_t(lower) @ grad) * phi) @ inverse
        return 0.5 * (middle + _t(middle))


class SlogDet(Function):
    """f(A) = log|det A|, with no overflow for large matrices (LAPACK's LU, as NumPy's
    slogdet);  df/dA = A^-T. (linalg.slogdet adds the sign, which has no gradient.)"""

    twice_differentiable = True  # tensor_backward: a recorded Inverse

    @staticmethod
    def forward(ctx, a):
        check_matrices(a, "slogdet")
        ctx.save_for_backward(a)
        return np.asarray(np.linalg.slogdet(a)[1], dtype=a.dtype)

    @staticmethod
    def output_shape(a):
        return tuple(a.shape[:-2])

    @staticmethod
    def backward(ctx, grad_output):
        (a,) = ctx.saved_tensors
        try:
            inverse_t = _t(np.linalg.inv(a))
        except np.linalg.LinAlgError:  # a singular matrix: log|det| is -inf, no slope
            error = np.linalg.LinAlgError(
                f"slogdet backward: a matrix of the input (shape {tuple(a.shape)}) is "
                "singular, so log|det| = -inf has no gradient")
            error.minigrad = True
            raise error from None
        return np.asarray(grad_output)[..., None, None] * inverse_t

    @staticmethod
    def tensor_backward(ctx, grad_output):
        (a,) = ctx.saved_tensors
        return grad_output.unsqueeze(-1).unsqueeze(-1) * _t(Inverse.apply(a))
