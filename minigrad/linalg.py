"""``mg.linalg``: PyTorch's ``torch.linalg`` functions that teaching code uses.

The decompositions (svd, qr, eigh) are Functions in minigrad/ops/linalg_more.py; the rest
are composites of existing ops (matmul, the inverse and determinant of ops/linalg.py,
reductions), so their gradients come from those. Batched over leading dims, as PyTorch's.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .ops.linalg import Det, Inverse, check_matrices
from .ops.linalg_more import Cholesky, Eigh, Qr, SlogDet, Svd
from .tensor import Tensor, stack, where

# PyTorch's named tuples (torch.return_types.*): fields by name, or unpacked in order
SVDResult = namedtuple("svd", ["U", "S", "Vh"])
USV = namedtuple("svd", ["U", "S", "V"])  # torch.svd's
QR = namedtuple("qr", ["Q", "R"])
SignLogabsdet = namedtuple("slogdet", ["sign", "logabsdet"])
EighResult = namedtuple("eigh", ["eigenvalues", "eigenvectors"])


def _matrices(a: Tensor, op: str) -> None:
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(a).__name__}")
    if a.ndim < 2:
        raise ValueError(f"{op}: expected a matrix or a batch of matrices, shape (..., m, n), "
                         f"got shape {tuple(a.shape)}")


# --- decompositions ---------------------------------------------------------------------


def svd(A: Tensor, full_matrices: bool = True, *, driver=None) -> SVDResult:  # noqa: N803
    """(U, S, Vh) with A = U diag(S) Vh, S descending. The gradient is defined for
    ``full_matrices=False`` (or square A) and distinct singular values."""
    _matrices(A, "linalg.svd")
    return SVDResult(*Svd.apply(A, full_matrices=full_matrices))


def svdvals(A: Tensor, *, driver=None) -> Tensor:  # noqa: N803
    """The singular values, descending (gradient U diag(gS) Vh)."""
    _matrices(A, "linalg.svdvals")
    return Svd.apply(A, full_matrices=False)[1]


def svd_legacy(input: Tensor, some: bool = True, compute_uv: bool = True) -> USV:
    """``torch.svd``: (U, S, V) with A = U diag(S) V^T (V, not Vh); ``some=True`` is the
    reduced form. Without ``compute_uv``, U and V are zeros (as in PyTorch)."""
    _matrices(input, "svd")
    u, s, vh = Svd.apply(input, full_matrices=not some)
    if not compute_uv:
        return USV(Tensor._make(np.zeros(u.shape, u.dtype)), s,
                   Tensor._make(np.zeros(vh.shape, vh.dtype)))
    return USV(u, s, vh.swapaxes(-1, -2))


def qr(A: Tensor, mode: str = "reduced") -> QR:  # noqa: N803
    """(Q, R) with A = Q R: ``mode="reduced"`` Q (m, k), R (k, n), k = min(m, n);
    ``"complete"`` Q (m, m); ``"r"`` only R (Q is an empty tensor, as in PyTorch)."""
    _matrices(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    if mode == "r":
        _, r = Qr.apply(A, mode="reduced")
        return QR(Tensor._make(np.zeros((0,), A.dtype)), r)
    return QR(*Qr.apply(A, mode=mode))


def eigh(A: Tensor, UPLO: str = "L") -> EighResult:  # noqa: N803
    """(eigenvalues, eigenvectors) of symmetric matrices (only the ``UPLO`` triangle is
    read), eigenvalues ascending, eigenvectors in the columns."""
    _matrices(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return EighResult(*Eigh.apply(A, UPLO=UPLO))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    return eigh(A, UPLO).eigenvalues


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """L, lower triangular, with A = L L^T (``upper=True``: U = L^T, A = U^T U), for
    symmetric positive definite A (only its lower triangle is read)."""
    _matrices(A, "linalg.cholesky")
    return Cholesky.apply(A, upper=upper)


# --- norms ------------------------------------------------------------------------------


def vector_norm(x: Tensor, ord: float = 2, dim=None, keepdim: bool = False, *,  # noqa: A002
                dtype=None) -> Tensor:
    """(sum |x|^ord)^(1/ord) over ``dim`` (all elements by default, as one vector);
    ``inf``: max |x|, ``-inf``: min |x|, 0: the number of nonzero elements."""
    x = x if dtype is None else x.to(dtype)
    if x.dtype.kind != "f":
        raise TypeError(f"linalg.vector_norm: expected a floating point tensor, got {x.dtype}")
    if ord == 0:  # a count: its gradient is 0, but it is in the graph, as PyTorch's
        return (x != 0).to(x.dtype).sum(dim, keepdim) + _zero_with_history(x).sum(dim, keepdim)
    if ord == math.inf:
        return x.abs().amax(() if dim is None else dim, keepdim)
    if ord == -math.inf:
        return x.abs().amin(() if dim is None else dim, keepdim)
    if ord < 0:
        return (x.abs() ** ord).sum(dim, keepdim) ** (1 / ord)
    return x.norm(ord, dim, keepdim)


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *,  # noqa: N803, A002
                dtype=None) -> Tensor:
    """A matrix norm over the two ``dim``: ``"fro"`` sqrt(sum a^2), ``"nuc"`` the sum of
    the singular values, 2 / -2 the largest / smallest singular value, 1 / -1 the max / min
    column sum of |a|, inf / -inf the max / min row sum."""
    A = A if dtype is None else A.to(dtype)
    _matrices(A, "linalg.matrix_norm")
    rows, columns = (d % A.ndim for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (rows, columns), keepdim)
    if ord in ("nuc", 2, -2):
        moved = A.movedim((rows, columns), (-2, -1))
        values = svdvals(moved)
        out = values.sum(-1) if ord == "nuc" else values.amax(-1) if ord == 2 \
            else values.amin(-1)
        if keepdim:
            out = out.unsqueeze(min(rows, columns)).unsqueeze(max(rows, columns))
        return out
    if ord in (1, -1, math.inf, -math.inf):
        summed, across = (rows, columns) if ord in (1, -1) else (columns, rows)
        sums = A.abs().sum(summed, keepdim=True)
        out = sums.amax(across, keepdim=True) if ord > 0 else sums.amin(across, keepdim=True)
        return out if keepdim else out.squeeze((rows, columns))
    raise ValueError(f"linalg.matrix_norm: ord={ord!r} is not supported; use 'fro', 'nuc', "
                     "1, -1, 2, -2, inf or -inf")


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *,  # noqa: N803, A002
         dtype=None) -> Tensor:
    """``vector_norm`` for a 1-D ``dim`` (or ``ord=None``), ``matrix_norm`` for a 2-D one
    (and for a matrix with ``ord`` given and no ``dim``)."""
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise ValueError(f"linalg.norm: with ord={ord!r} and no dim the input must be 1-D or 2-D, "
                     f"got shape {tuple(A.shape)}")


# --- determinants, inverses, solving ------------------------------------------------------


def det(A: Tensor) -> Tensor:  # noqa: N803
    return Det.apply(A)


def inv(A: Tensor) -> Tensor:  # noqa: N803
    return Inverse.apply(A)


def slogdet(A: Tensor) -> SignLogabsdet:  # noqa: N803
    """(sign, logabsdet) with det(A) = sign exp(logabsdet), without the overflow of det
    for large matrices; the gradient of logabsdet is A^-T, the sign has none."""
    logabsdet = SlogDet.apply(A)
    sign = np.linalg.slogdet(A.numpy())[0]  # no history: the sign is piecewise constant
    return SignLogabsdet(Tensor._make(np.asarray(sign, dtype=A.dtype)), logabsdet)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """X with A X = B (``left=False``: X A = B); B may be a vector (..., n). Through the
    inverse, so its gradient is Inverse's and matmul's."""
    check_matrices(A, "linalg.solve")
    if not left:
        return B @ Inverse.apply(A)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if B.shape[-1 if vector else -2] != A.shape[-1]:
        raise ValueError(f"linalg.solve: A of shape {tuple(A.shape)} and B of shape "
                         f"{tuple(B.shape)} do not fit (A X = B needs B's rows to be "
                         f"{A.shape[-1]})")
    if vector:
        return (Inverse.apply(A) @ B.unsqueeze(-1)).squeeze(-1)
    return Inverse.apply(A) @ B


def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """exp(A) = I + A + A^2 / 2! + ...: scaled by 2^-s so its norm is at most 1/2, the
    Taylor series to 18 terms, then squared s times (a composite of matmuls)."""
    check_matrices(A, "matrix_exp")
    norms = np.abs(A.numpy()).sum(-2).max(-1) if A.numel() else np.zeros(1)
    squarings = int(max(0, np.ceil(np.log2(max(float(np.max(norms)), 1e-300) * 2))))
    scaled = A / 2 ** squarings
    eye = Tensor._make(np.eye(A.shape[-1], dtype=A.dtype))
    term, total = eye, eye
    for k in range(1, 19):
        term = term @ scaled / k
        total = total + term
    for _ in range(squarings):
        total = total @ total
    return total


def matmul(input: Tensor, other: Tensor) -> Tensor:
    return input @ other


def _zero_with_history(x: Tensor) -> Tensor:
    """Zeros of x's shape that depend on x with gradient 0 (x * 0 would be NaN at inf)."""
    return where(Tensor(np.zeros(x.shape, dtype=bool)), x, 0.0)


def matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803
    """A^n by repeated squaring (n = 0: the identity; n < 0: the inverse's power)."""
    check_matrices(A, "linalg.matrix_power")
    if n < 0:
        A, n = Inverse.apply(A), -n
    result, power = None, A
    while n:
        if n & 1:
            result = power if result is None else result @ power
        n >>= 1
        if n:
            power = power @ power
    if result is None:  # the identity, in the graph with gradient 0 (as PyTorch's)
        return Tensor._make(np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype),
                                            A.shape).copy()) + _zero_with_history(A)
    return result


def multi_dot(tensors) -> Tensor:
    """tensors[0] @ tensors[1] @ ... (the first may be 1-D: a row; the last: a column)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ValueError(f"linalg.multi_dot: expected at least 2 tensors, got {len(tensors)}")
    result = tensors[0]
    for t in tensors[1:]:
        result = result @ t
    return result


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """sum(x * y) over ``dim`` (broadcast first)."""
    return (x * y).sum(dim)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (broadcast first)."""
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise ValueError(f"linalg.cross: dim {dim} must have size 3 in both inputs, got "
                         f"shapes {tuple(input.shape)} and {tuple(other.shape)}")
    a, b = input.movedim(dim, -1), other.movedim(dim, -1)
    parts = [a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
             a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
             a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]]
    return stack(parts, -1).movedim(-1, dim)


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:  # noqa: N803
    """The pseudo-inverse V diag(1/s) U^T, over the singular values above
    max(atol, rtol * s_max) (rtol defaults to eps * max(m, n), as PyTorch's)."""
    _matrices(A, "linalg.pinv")
    u, s, vh = Svd.apply(A, full_matrices=False)
    largest = s.numpy().max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else \
            np.finfo(A.dtype).eps * max(A.shape[-2:])
    cutoff = np.maximum(atol or 0.0, rtol * largest)
    keep = s.numpy() > cutoff
    inverse_s = (1 / s.masked_fill(~keep, 1.0)).masked_fill(~keep, 0.0)
    return (vh.swapaxes(-1, -2) * inverse_s.unsqueeze(-2)) @ u.swapaxes(-1, -2)


def matrix_rank(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:  # noqa: N803
    """The number of singular values above the tolerance of ``pinv`` (int64, no gradient)."""
    _matrices(A, "linalg.matrix_rank")
    s = np.linalg.svd(A.numpy(), compute_uv=False)
    largest = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else \
            np.finfo(A.dtype).eps * max(A.shape[-2:])
    cutoff = np.maximum(atol or 0.0, rtol * largest)
    return Tensor._make(np.asarray((s > cutoff).sum(-1), dtype=np.int64))


# the rest of torch.linalg, and what to use instead (a name not here: Python's own error)
_LEFT_OUT = {
    "eig": "no complex tensors, so no general eigen-decomposition: for a symmetric matrix "
           "use mg.linalg.eigh",
    "eigvals": "no complex tensors: for a symmetric matrix use mg.linalg.eigvalsh",
    "lstsq": "solve the normal equations, mg.linalg.solve(A.mT @ A, A.mT @ B), or use "
             "mg.linalg.pinv(A) @ B",
    "lu": "no LU factorisation: mg.linalg.solve and mg.linalg.det use one inside NumPy",
    "lu_factor": "no LU factorisation: use mg.linalg.solve",
    "lu_solve": "no LU factorisation: use mg.linalg.solve",
    "solve_triangular": "use mg.linalg.solve (it does not exploit the triangle)",
    "cond": "compute it from the singular values: s = mg.linalg.svdvals(A); s[0] / s[-1]",
    "tensorinv": "reshape to a matrix and use mg.linalg.inv",
    "tensorsolve": "reshape to a matrix and use mg.linalg.solve",
}


def __getattr__(name: str):
    if name in _LEFT_OUT:
        raise AttributeError(f"torch.linalg.{name} is not supported by minigrad: "
                             f"{_LEFT_OUT[name]}")
    raise AttributeError(f"module 'minigrad.linalg' has no attribute {name!r}")


__all__ = ["cholesky", "cross", "det", "eigh", "eigvalsh", "inv", "matmul", "matrix_exp",
           "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
           "slogdet", "solve", "svd", "svdvals", "vecdot", "vector_norm"]
