"""Matrix multiplication, batched and 1-D, with NumPy's (and PyTorch's) broadcasting;
and einsum, the general form of it."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..function import Function


def matmul_shape(a_shape: tuple, b_shape: tuple) -> tuple:
    """The result shape of ``a @ b``, or a ShapeError that says which sizes disagree."""
    if len(a_shape) == 0 or len(b_shape) == 0:
        raise ShapeError(
            f"matmul: both inputs need at least 1 dimension, got shapes {a_shape} and "
            f"{b_shape}; use * to multiply by a scalar"
        )
    inner_b = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    if a_shape[-1] != inner_b:
        raise ShapeError(
            f"matmul: input 0 has shape {a_shape} and input 1 has shape {b_shape}: the last "
            f"size of input 0 ({a_shape[-1]}) must equal the "
            f"{'size' if len(b_shape) == 1 else 'second-to-last size'} of input 1 "
            f"({inner_b}). Check the layer sizes, or transpose one input (x.T / x.mT)."
        )
    batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    rows = a_shape[-2:-1] if len(a_shape) > 1 else ()
    cols = b_shape[-1:] if len(b_shape) > 1 else ()
    return tuple(batch) + tuple(rows) + tuple(cols)


class MatMul(Function):
    """f(A, B) = A @ B,  df/dA = G @ B^T,  df/dB = A^T @ G
    (1-D inputs are treated as a row / a column and the extra size dropped again)"""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    hint = "batch dimensions (all but the last two) broadcast like elementwise ops"

    @staticmethod
    def forward(ctx, a, b):
        matmul_shape(a.shape, b.shape)
        ctx.save_for_backward(a, b)
        return np.matmul(a, b)

    @staticmethod
    def output_shape(a, b):
        return matmul_shape(tuple(a.shape), tuple(b.shape))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:  # a dot product
            return (grad_output * b if needs_a else None), (grad_output * a if needs_b else None)
        a2 = a[None, :] if a.ndim == 1 else a  # (n,) -> (1, n)
        b2 = b[:, None] if b.ndim == 1 else b  # (n,) -> (n, 1)
        grad = grad_output
        if a.ndim == 1:
            grad = np.expand_dims(grad, -2)
        if b.ndim == 1:
            grad = np.expand_dims(grad, -1)
        grad_a = np.matmul(grad, np.swapaxes(b2, -1, -2)) if needs_a else None
        grad_b = np.matmul(np.swapaxes(a2, -1, -2), grad) if needs_b else None
        if grad_a is not None and a.ndim == 1:
            grad_a = grad_a.reshape(grad_a.shape[:-2] + a.shape)  # engine sums any batch
        if grad_b is not None and b.ndim == 1:
            grad_b = grad_b.reshape(grad_b.shape[:-2] + b.shape)
        return grad_a, grad_b


class Linear(Function):
    """f(x, W, b) = x W^T + b, with W of shape (out, in) (``nn.Linear``; PyTorch's addmm):
    df/dx = G W,  df/dW = G^T x,  df/db = G summed over every dim but the last.
    One Function instead of transpose, matmul and add: one graph node, and each
    gradient is one BLAS call, already of the weight's shape (no batched products to
    sum, no transposed copy)."""

    twice_differentiable = True  # its backward runs on Tensors: higher_order.py

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        if x.ndim == 2:
            out = x @ weight.T
        else:  # leading dims flattened: one matrix product, whatever the batch shape
            out = np.matmul(x.reshape(-1, x.shape[-1]), weight.T)
            out = out.reshape(x.shape[:-1] + (weight.shape[0],))
        if bias is None:
            return out
        if out.dtype == bias.dtype:
            out += bias  # out is new: add in place, no second array
            return out
        return out + bias

    @staticmethod
    def output_shape(x, weight, bias=None):
        shape = tuple(x.shape[:-1]) + (weight.shape[0],)
        if bias is not None:  # forward's `out += bias` check, before it runs (lazy mode)
            np.broadcast_shapes(shape, bias.shape)
        return shape

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        needs_x, needs_weight, needs_bias = ctx.needs_input_grad
        grad_2d = grad_output.reshape(-1, weight.shape[0])
        grad_x = np.matmul(grad_2d, weight).reshape(x.shape) if needs_x else None
        grad_weight = np.matmul(grad_2d.T, x.reshape(-1, x.shape[-1])) if needs_weight else None
        grad_bias = grad_2d.sum(axis=0) if needs_bias else None
        return grad_x, grad_weight, grad_bias


# --- einsum ------------------------------------------------------------------------------


def parse_einsum(equation: str, shapes: list) -> tuple[list[str], str, dict]:
    """``"bij,bjk->bik"`` and the operands' shapes -> the subscripts of each operand, of
    the output, and the size of every letter. ``...`` becomes letters of its own; no
    ``->`` means PyTorch's implicit output (the letters used once, in alphabetical order);
    a letter of size 1 in one operand broadcasts against a larger size in another."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: the equation {equation!r} names {len(terms)} operand(s) "
                         f"but {len(shapes)} were given")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation]
    widest = max([len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)
                  if "..." in t], default=0)
    ellipsis = "".join(spare[:widest])
    subscripts = []
    for position, (term, shape) in enumerate(zip(terms, shapes)):
        if "..." in term:
            term = term.replace("...", ellipsis[widest - (len(shape) - len(term) + 3):])
        if not term.isalpha() and term:
            raise ValueError(f"einsum: subscripts are letters, got {term!r} in {equation!r}")
        if len(term) != len(shape):
            raise ShapeError(f"einsum: operand {position} has shape {tuple(shape)} but the "
                             f"equation {equation!r} gives it {len(term)} subscript(s)")
        if len(set(term)) != len(term):
            raise ValueError(f"einsum: operand {position} repeats a letter in {term!r} (a "
                             "trace or diagonal); minigrad's einsum does not support that, "
                             "take the diagonal with diag() or indexing first")
        subscripts.append(term)
    if arrow:
        output = output.replace("...", ellipsis)
    else:
        letters = "".join(subscripts)
        output = ellipsis + "".join(sorted(c for c in set(letters)
                                           if letters.count(c) == 1 and c not in ellipsis))
    sizes: dict = {}
    for position, (term, shape) in enumerate(zip(subscripts, shapes)):
        for letter, size in zip(term, shape):
            known = sizes.get(letter, 1)
            if size != known and 1 not in (size, known):
                raise ShapeError(f"einsum: letter {letter!r} has size {known} in one operand "
                                 f"and {size} in operand {position} (shape {tuple(shape)}); "
                                 "the sizes of a letter must match (or be 1)")
            sizes[letter] = max(size, known)
    unknown = set(output) - set(sizes)
    if unknown or len(set(output)) != len(output):
        raise ValueError(f"einsum: the output {output!r} of {equation!r} must name each "
                         "letter of the inputs at most once")
    return subscripts, output, sizes


class Einsum(Function):
    """f(A, B, ...) = np.einsum(equation, A, B, ...); the gradient of each operand is
    another einsum: the gradient with the other operands, back to that operand's letters
    (broadcast along a letter that only it had, which the forward summed away)"""

    hint = "each operand needs one letter per dimension, e.g. einsum('bij,bjk->bik', a, b)"

    @staticmethod
    def forward(ctx, *operands, equation):
        subscripts, output, sizes = parse_einsum(equation, [o.shape for o in operands])
        # size-1 dims broadcast as in PyTorch: expand them first (read-only views)
        operands = [np.broadcast_to(o, tuple(sizes[c] for c in s))
                    for o, s in zip(operands, subscripts)]
        ctx.subscripts, ctx.output, ctx.sizes = subscripts, output, sizes
        ctx.save_for_backward(*operands)
        return np.einsum(f"{','.join(subscripts)}->{output}", *operands,
                         optimize=len(operands) > 1)

    @staticmethod
    def output_shape(*operands, equation):
        _, output, sizes = parse_einsum(equation, [o.shape for o in operands])
        return tuple(sizes[c] for c in output)

    @staticmethod
    def output_dtype(*operands, equation):
        return np.result_type(*(o.dtype for o in operands))

    @staticmethod
    def backward(ctx, grad_output):
        operands = ctx.saved_tensors
        grads = []
        for k, term, equation, present in _gradient_einsums(ctx):
            if equation is None:
                grads.append(None)
                continue
            grad = np.einsum(equation, *[o for i, o in enumerate(operands) if i != k],
                             grad_output, optimize=True)
            missing = [i for i, c in enumerate(term) if c not in present]
            if missing:  # summed away in the forward: every element got the same gradient
                grad = np.broadcast_to(np.expand_dims(grad, missing),
                                       tuple(ctx.sizes[c] for c in term))
            grads.append(grad)
        return tuple(grads)

    # create_graph=True: the same einsums, recorded, on the graph's operands (higher_order.py)
    twice_differentiable = True

    @staticmethod
    def tensor_backward(ctx, grad_output):
        # the saved operands are broadcast views, not the inputs' arrays: expand the inputs
        operands = [o.expand(*(ctx.sizes[c] for c in s))
                    for o, s in zip(ctx.args, ctx.subscripts)]
        grads = []
        for k, term, equation, present in _gradient_einsums(ctx):
            if equation is None:
                grads.append(None)
                continue
            grad = Einsum.apply(*[o for i, o in enumerate(operands) if i != k], grad_output,
                                equation=equation)
            if len(present) < len(term):  # summed away in the forward: broadcast back
                grad = grad.reshape(tuple(ctx.sizes[c] if c in present else 1 for c in term))
                grad = grad.expand(*(ctx.sizes[c] for c in term))
            grads.append(grad)
        return tuple(grads)


def _gradient_einsums(ctx) -> list[tuple]:
    """For each operand k of an einsum: ``(k, its subscripts, the einsum of the other
    operands and the output's gradient that gives its gradient, the subscripts that
    einsum keeps)``; the einsum is None where no gradient is needed. The subscripts
    summed away in the forward (in no other term) are not kept: the gradient is the same
    for each of their elements (both backwards broadcast it back)."""
    plans = []
    for k, (term, needed) in enumerate(zip(ctx.subscripts, ctx.needs_input_grad)):
        others = [s for i, s in enumerate(ctx.subscripts) if i != k] + [ctx.output]
        present = "".join(c for c in term if c in "".join(others))
        plans.append((k, term, f"{','.join(others)}->{present}" if needed else None,
                      present))
    return plans
