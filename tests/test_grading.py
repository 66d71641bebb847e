"""Grading the chapters' exercises with real nbgrader, through ``minigrad-course``.

One course holds every chapter with exercises and a whole class of returned notebooks:
the chapter itself (full marks), the blank copy students get (zero), one notebook per
classic mistake (partial marks, and the feedback names the mistake), one that loops
forever (cut off by the time limit), a truncated file and one with deleted and edited
test cells (a clear note for that student), and one saved with widget output. It is
built once (module fixture) and graded with one ``minigrad-course grade``.
"""

from __future__ import annotations

import copy
import csv
import html
import json
import os
import pathlib
import re
import sys

import pytest

from conftest import STRICT

if not STRICT:
    pytest.importorskip("nbgrader", reason="pip install -e '.[grading]'")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
from minigrad.course import authoring, cli  # noqa: E402

TIMEOUT = 10  # seconds a cell may run while grading, here

# Chapter 10's convolution and max pooling, each with one piece to be made wrong.
CONV2D = """
class MyConv2dFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, stride=1, padding=0):
        n, _, h, w = x.shape
        out_channels, channels, kh, kw = weight.shape
        out_h = conv_output_size(h, kh, stride, padding)
        out_w = conv_output_size(w, kw, stride, padding)
        cols = my_im2col(x, (kh, kw), stride, padding)
        ctx.save_for_backward(cols, weight)
        ctx.x_shape, ctx.stride, ctx.padding = x.shape, stride, padding
        out = cols @ weight.reshape(out_channels, -1).T + bias
        return out.reshape(n, out_h, out_w, out_channels).transpose(0, 3, 1, 2)

    @staticmethod
    def backward(ctx, grad_output):
        cols, weight = ctx.saved_tensors
        stride, padding = ctx.stride, ctx.padding
        n, channels, h, w = ctx.x_shape
        out_channels, _, kh, kw = weight.shape
        _, _, out_h, out_w = grad_output.shape
        g = grad_output.transpose(0, 2, 3, 1).reshape(-1, out_channels)
        grad_weight = ({grad_weight}).reshape(weight.shape)
        grad_bias = g.sum(axis=0)
        grad_windows = (g @ {weight}.reshape(out_channels, -1)).reshape(
            n, out_h, out_w, channels, kh, kw)
        grad_x = np.zeros((n, channels, h + 2 * padding, w + 2 * padding))
        for p in range(out_h):
            for q in range(out_w):
                grad_x[:, :, p * stride:p * stride + kh, q * stride:q * stride + kw] {add} \\
                    grad_windows[:, p, q]
        grad_x = grad_x[:, :, padding:padding + h, padding:padding + w]
        return grad_x, grad_weight, grad_bias
"""
MAXPOOL = """
class MyMaxPool2d(mg.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride=None):
        k = kernel_size
        s = k if stride is None else stride
        view = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::s, ::s]
        flat = view.reshape(view.shape[:4] + (k * k,))
        ctx.save_for_backward({share})
        ctx.x_shape, ctx.k, ctx.s = x.shape, k, s
        return flat.max(axis=-1)

    @staticmethod
    def backward(ctx, grad_output):
        (share,) = ctx.saved_tensors
        k, s = ctx.k, ctx.s
        grad_x = np.zeros(ctx.x_shape)
        _, _, out_h, out_w = grad_output.shape
        for p in range(out_h):
            for q in range(out_w):
                window = (share[:, :, p, q] * grad_output[:, :, p, q, None]).reshape(
                    grad_output.shape[:2] + (k, k))
                grad_x[:, :, p * s:p * s + k, q * s:q * s + k] += window
        return grad_x
"""

# For each chapter with exercises, classic mistakes a student makes, each as a solution
# cell (by grade_id) rewritten with the mistake, and words the feedback must show.
# A chapter that gains exercises adds its mistakes here (a test checks there are some).
MISTAKES = {
    "00_start_here": {
        "hand-gradient-without-the-2": ("start_neuron_grad", '''
grad_w = (2 * 3 + 1 - 4) * 3
grad_b = 2 * 3 + 1 - 4
''', "the factor 2 of the square is missing"),
        "hand-gradient-without-the-inner-derivative": ("start_neuron_grad", '''
grad_w = 2 * (2 * 3 + 1 - 4)
grad_b = 2 * (2 * 3 + 1 - 4)
''', "the inner derivative is missing for w"),
        "predicted-one-backward-only": ("start_grad_piles_up", '''
predicted_grad = [3.0, 1.0, 2.0]
''', "backward() ADDS to .grad"),
        "predicted-two-backward-calls": ("start_grad_piles_up", '''
predicted_grad = [6.0, 2.0, 4.0]
''', "2 backward() calls' worth"),
        "train-step-without-return": ("start_train_step", '''
def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
''', "returned None, expected the loss"),
        "train-step-returns-the-number": ("start_train_step", '''
def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
''', "not loss.item()"),
        "train-step-without-zero-grad": ("start_train_step", '''
def train_step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss
''', "zero_grad was forgotten"),
        "train-step-steps-before-backward": ("start_train_step", '''
def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    optimizer.step()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return loss
''', "the parameters did not move"),
        "epoch-total-of-loss-tensors": ("start_train_epoch", '''
def train_epoch(model, optimizer, batches):
    total = 0.0
    for x, y in batches:
        total += train_step(model, optimizer, mg.tensor(x), mg.tensor(y))
    return total / len(batches)
''', "take the number out with .item()"),
        "epoch-sum-not-mean": ("start_train_epoch", '''
def train_epoch(model, optimizer, batches):
    total = 0.0
    for x, y in batches:
        total += train_step(model, optimizer, mg.tensor(x), mg.tensor(y)).item()
    return total
''', "not divided by the number of batches"),
        "epoch-total-overwritten": ("start_train_epoch", '''
def train_epoch(model, optimizer, batches):
    total = 0.0
    for x, y in batches:
        total = train_step(model, optimizer, mg.tensor(x), mg.tensor(y)).item()
    return total / len(batches)
''', "only the last batch"),
        "epoch-divided-by-the-batch-size": ("start_train_epoch", '''
def train_epoch(model, optimizer, batches):
    total = 0.0
    for x, y in batches:
        total += train_step(model, optimizer, mg.tensor(x), mg.tensor(y)).item()
    return total / len(x)
''', "divided by the batch size"),
    },
    "01_autograd_from_scratch": {
        "grad-output-ignored": ("mymul", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return y, x
''', "backward ignores grad_output"),
        "wrong-sign": ("myexp", '''
class MyExp(mg.Function):
    @staticmethod
    def forward(ctx, x):
        z = np.exp(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, grad_output):
        (z,) = ctx.saved_tensors
        return -grad_output * z
''', "it has the wrong sign"),
        "not-accumulated": ("myexpmulplus", '''
class MyExpMulPlus(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        u = np.exp(x * y)
        ctx.save_for_backward(x, y, u)
        return u + x

    @staticmethod
    def backward(ctx, grad_output):
        x, y, u = ctx.saved_tensors
        return grad_output * u * y, grad_output * u * x
''', "used 2 times in the formula"),
        "in-place": ("mydiv", '''
class MyDiv(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x / y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        grad_output /= y
        return grad_output, -grad_output * x / y
''', "changed grad_output in place"),
        "needs-input-grad-ignored": ("mymul", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x
''', "ctx.needs_input_grad[1] is False: nobody will use it. Skip that work and return None"),
        "x-and-y-swapped": ("mymul", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        grad_x = grad_output * x if ctx.needs_input_grad[0] else None
        grad_y = grad_output * y if ctx.needs_input_grad[1] else None
        return grad_x, grad_y
''', "the gradients of x and y are swapped"),
        "saved-tensors-not-unpacked": ("myexp", '''
class MyExp(mg.Function):
    @staticmethod
    def forward(ctx, x):
        z = np.exp(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, grad_output):
        z = ctx.saved_tensors
        return grad_output * z
''', "ctx.saved_tensors is a tuple, even with one array saved: unpack it"),
        "saved-tensors-called": ("myexp", '''
class MyExp(mg.Function):
    @staticmethod
    def forward(ctx, x):
        z = np.exp(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, grad_output):
        (z,) = ctx.saved_tensors()
        return grad_output * z
''', "ctx.saved_tensors is an attribute, not a method"),
        "exp-of-the-input-x": ("myexp", '''
class MyExp(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.exp(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x
''', "the derivative of exp is exp(x) = z"),
        "plus-one-not-multiplied": ("myexpmulplus", '''
class MyExpMulPlus(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        u = np.exp(x * y)
        ctx.save_for_backward(x, y, u)
        return u + x

    @staticmethod
    def backward(ctx, grad_output):
        x, y, u = ctx.saved_tensors
        return grad_output * u * y + 1, grad_output * u * x
''', "is not multiplied by grad_output"),
        "sin-wrong-sign": ("mysin", '''
class MySin(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return -grad_output * np.cos(x)
''', "it has the wrong sign"),
    },
    "02_tensors_and_broadcasting": {
        "aligned-from-the-left": ("broadcast-shape", '''
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
    return tuple(max(x, y) for x, y in zip(a, b))
''', "lined up from the left"),
        "leading-dimensions-dropped": ("broadcast-shape", '''
def broadcast_shape(a, b):
    return tuple(max(x, y) for x, y in zip(a[::-1], b[::-1]))[::-1]
''', "leading dimensions of the longer shape were dropped"),
        "no-error-for-shapes-that-do-not-fit": ("broadcast-shape", '''
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) for x, y in zip(a, b))
''', "these shapes do not broadcast"),
        "not-summed": ("unbroadcast", '''
def unbroadcast(grad, shape):
    return grad
''', "not summed over the broadcast dimensions"),
        "no-keepdim": ("unbroadcast", '''
def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    axes = tuple(i for i, size in enumerate(shape) if size == 1)
    return grad.sum(axis=axes) if axes else grad
''', "summed without keepdims=True"),
        "only-leading-dimensions": ("unbroadcast", '''
def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad
''', "only the leading dimensions were summed away"),
        "size-1-axes-counted-from-the-left": ("unbroadcast", '''
def unbroadcast(grad, shape):
    for axis, size in enumerate(shape):
        if size == 1:
            grad = grad.sum(axis=axis, keepdims=True)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad
''', "summed at the wrong axes"),
        "scalar-shape-kept-as-1-1": ("unbroadcast", '''
def unbroadcast(grad, shape):
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1)
    return grad.sum(axis=axes, keepdims=True)
''', "a 0-d input (shape ()) a (1, 1) one"),
        "mul-summed-before-multiplying": ("mymul-broadcast", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return unbroadcast(grad_output, x.shape) * y, unbroadcast(grad_output, y.shape) * x
''', "summed back before multiplying"),
        "compatibility-checked-in-the-last-dimension-only": ("broadcast-shape", '''
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    if pa and pa[-1] != pb[-1] and 1 not in (pa[-1], pb[-1]):
        raise ValueError(f"shapes {a} and {b} do not broadcast")
    return tuple(max(x, y) for x, y in zip(pa, pb))
''', "broadcast_shape((4, 3), (2, 3)) returned (4, 3), but these shapes do not broadcast"),
        "mul-x-and-y-swapped": ("mymul-broadcast", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return unbroadcast(grad_output * x, x.shape), unbroadcast(grad_output * y, y.shape)
''', "x and y are swapped"),
        "mul-not-summed": ("mymul-broadcast", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x
''', "not summed over the broadcast dimensions"),
    },
    "03_function_and_context": {
        "sigmoid-applied-twice": ("mysigmoid-saves-output", '''
class MySigmoid(mg.Function):
    @staticmethod
    def forward(ctx, x):
        s = sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * sigmoid(s) * (1 - sigmoid(s))
''', "applied the sigmoid again to what forward saved"),
        "sigmoid-saves-the-input": ("mysigmoid-saves-output", '''
class MySigmoid(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * sigmoid(x) * (1 - sigmoid(x))
''', "saved its input x, not its output"),
        "matmul-ignores-needs-input-grad": ("mymatmul-needs-input-grad", '''
class MyMatMul(mg.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output @ b.T, a.T @ grad_output
''', "returning None still does the work"),
        "sincos-ignores-grad-cos": ("mysincos", '''
class MySinCos(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return np.sin(x), np.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return grad_sin * np.cos(x)
''', "backward ignores grad_cos"),
        "sincos-none-not-handled": ("mysincos", '''
class MySinCos(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return np.sin(x), np.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return grad_sin * np.cos(x) - grad_cos * np.sin(x)
''', "arrives as None"),
        "scale-rows-saves-a-view": ("myscalerows", '''
class MyScaleRows(mg.Function):
    @staticmethod
    def forward(ctx, x, s):
        column = s[:, None]
        ctx.save_for_backward(x, column)
        return x * column

    @staticmethod
    def backward(ctx, grad_output):
        x, column = ctx.saved_tensors
        return grad_output * column, (grad_output * x).sum(axis=1)
''', "saved a NumPy view of input 1"),
        "scale-rows-saves-a-transpose-of-x": ("myscalerows", '''
class MyScaleRows(mg.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(x.T, s)
        return x * s[:, None]

    @staticmethod
    def backward(ctx, grad_output):
        xt, s = ctx.saved_tensors
        return grad_output * s[:, None], (grad_output * xt.T).sum(axis=1)
''', "saved a NumPy view of input 0"),
        "scale-rows-keeps-ctx-attributes": ("myscalerows", '''
class MyScaleRows(mg.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.x, ctx.s = x, s
        return x * s[:, None]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.s[:, None], (grad_output * ctx.x).sum(axis=1)
''', "as a ctx attribute"),
        "sigmoid-saves-output-and-input": ("mysigmoid-saves-output", '''
class MySigmoid(mg.Function):
    @staticmethod
    def forward(ctx, x):
        s = sigmoid(x)
        ctx.save_for_backward(s, x)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        s, x = ctx.saved_tensors
        e = np.exp(-x)
        return grad_output * e / (1 + e) ** 2
''', "as well as its output s"),
    },
    "04_backward_engine": {
        "pre-order-walk": ("topological-order", '''
def topological_order(root):
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        order.append(node)
        for parent, _ in node.next_functions:
            if parent is not None and parent not in visited:
                visit(parent)

    visit(root)
    return order
''', "A node must wait for ALL its consumers"),
        "order-not-reversed": ("topological-order", '''
def topological_order(root):
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        for parent, _ in node.next_functions:
            if parent is not None and parent not in visited:
                visit(parent)
        order.append(node)

    visit(root)
    return order
''', "the order is reversed"),
        "grad-overwritten": ("accumulate-grad", '''
def accumulate_grad(leaf, grad):
    leaf.grad = mg.tensor(grad)
''', "REPLACED the one already in .grad"),
        "grad-added-twice": ("accumulate-grad", '''
def accumulate_grad(leaf, grad):
    if leaf.grad is None:
        leaf.grad = mg.tensor(grad)
    leaf.grad = leaf.grad + grad
''', "the new gradient was added twice"),
        "loop-added-in-place": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
    pending[(root, 0)] = np.ones(loss.shape, dtype=loss.dtype)
    for node in topological_order(root):
        grad_outputs = [pending.pop((node, i), None) for i in range(len(node.output_meta))]
        if all(grad is None for grad in grad_outputs):
            continue
        grad_inputs = run_backward(node, grad_outputs)
        for (parent, index), arg, grad in zip(node.next_functions, node.args, grad_inputs):
            if grad is None:
                continue
            if parent is None:
                accumulate_grad(arg, grad)
            elif (parent, index) in pending:
                pending[(parent, index)] += grad
            else:
                pending[(parent, index)] = grad
        yield node, grad_outputs, grad_inputs


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "was changed in place later"),
        "loop-not-seeded": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
    for node in topological_order(root):
        grad_outputs = [pending.pop((node, i), None) for i in range(len(node.output_meta))]
        if all(grad is None for grad in grad_outputs):
            continue
        grad_inputs = run_backward(node, grad_outputs)
        for (parent, index), arg, grad in zip(node.next_functions, node.args, grad_inputs):
            if grad is None:
                continue
            if parent is None:
                accumulate_grad(arg, grad)
            elif (parent, index) in pending:
                pending[(parent, index)] = pending[(parent, index)] + grad
            else:
                pending[(parent, index)] = grad
        yield node, grad_outputs, grad_inputs


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "your loop ran no node. Seed the root's gradient"),
        "loop-seeded-with-loss": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
    pending[(root, 0)] = loss.numpy()
    for node in topological_order(root):
        grad_outputs = [pending.pop((node, i), None) for i in range(len(node.output_meta))]
        if all(grad is None for grad in grad_outputs):
            continue
        grad_inputs = run_backward(node, grad_outputs)
        for (parent, index), arg, grad in zip(node.next_functions, node.args, grad_inputs):
            if grad is None:
                continue
            if parent is None:
                accumulate_grad(arg, grad)
            elif (parent, index) in pending:
                pending[(parent, index)] = pending[(parent, index)] + grad
            else:
                pending[(parent, index)] = grad
        yield node, grad_outputs, grad_inputs


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "seeded with the loss's value"),
        "loop-paths-not-summed": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
    pending[(root, 0)] = np.ones(loss.shape, dtype=loss.dtype)
    for node in topological_order(root):
        grad_outputs = [pending.pop((node, i), None) for i in range(len(node.output_meta))]
        if all(grad is None for grad in grad_outputs):
            continue
        grad_inputs = run_backward(node, grad_outputs)
        for (parent, index), arg, grad in zip(node.next_functions, node.args, grad_inputs):
            if grad is None:
                continue
            if parent is None:
                accumulate_grad(arg, grad)
            else:
                pending[(parent, index)] = grad
        yield node, grad_outputs, grad_inputs


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "the SUM of what each sends"),
        "loop-leaf-as-node": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
    pending[(root, 0)] = np.ones(loss.shape, dtype=loss.dtype)
    for node in topological_order(root):
        grad_outputs = [pending.pop((node, i), None) for i in range(len(node.output_meta))]
        if all(grad is None for grad in grad_outputs):
            continue
        grad_inputs = run_backward(node, grad_outputs)
        for (parent, index), arg, grad in zip(node.next_functions, node.args, grad_inputs):
            if grad is None:
                continue
            if (parent, index) in pending:
                pending[(parent, index)] = pending[(parent, index)] + grad
            else:
                pending[(parent, index)] = grad
        yield node, grad_outputs, grad_inputs


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "no gradient reached any leaf"),
    },
    "05_reductions": {
        "sum-broadcast-along-the-wrong-dimension": ("mysum", '''
class MySum(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        ctx.dims = dims_of(dim, x.ndim)
        ctx.keepdim = keepdim
        ctx.input_shape = x.shape
        return np.sum(x, axis=ctx.dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        return np.broadcast_to(grad_output, ctx.input_shape)
''', "broadcast along the wrong dimension"),
        "mean-without-1-over-n": ("mymean", '''
class MyMean(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        return np.mean(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        return np.broadcast_to(unreduce(grad_output, ctx), ctx.input_shape)
''', "the 1/N is missing"),
        "max-whole-gradient-to-each-tie": ("mymax", '''
class MyMax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        biggest = np.max(x, axis=dims, keepdims=True)
        ctx.save_for_backward(x, biggest)
        return biggest if keepdim else np.squeeze(biggest, axis=dims)

    @staticmethod
    def backward(ctx, grad_output):
        x, biggest = ctx.saved_tensors
        return unreduce(grad_output, ctx) * (x == biggest)
''', "each tied element got the WHOLE upstream gradient"),
        "variance-without-correction": ("variance", '''
def variance(x, dim=None, keepdim=False, correction=1):
    dims = dims_of(dim, x.ndim)
    return np.var(x, axis=dims, keepdims=keepdim)
''', "the correction was ignored"),
        "var-gradient-without-the-2": ("myvar", '''
class MyVar(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, correction=1):
        dims = remember(ctx, x, dim, keepdim)
        ctx.denominator = int(np.prod([x.shape[d] for d in dims])) - correction
        ctx.save_for_backward(x - x.mean(axis=dims, keepdims=True))
        return variance(x, dim, keepdim, correction)

    @staticmethod
    def backward(ctx, grad_output):
        (centered,) = ctx.saved_tensors
        return unreduce(grad_output, ctx) * centered / ctx.denominator
''', "the 2 from the square is missing"),
        "logsumexp-overflows": ("mylogsumexp", '''
class MyLogSumExp(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        out = np.log(np.sum(np.exp(x), axis=dims, keepdims=True))
        ctx.save_for_backward(x, out)
        return out if keepdim else np.squeeze(out, axis=dims)

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        return unreduce(grad_output, ctx) * np.exp(x - out)
''', "something overflowed"),
        "max-maxima-without-keepdims": ("mymax", '''
class MyMax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        biggest = np.max(x, axis=dims)
        ctx.save_for_backward(x, biggest)
        return np.expand_dims(biggest, dims) if keepdim else biggest

    @staticmethod
    def backward(ctx, grad_output):
        x, biggest = ctx.saved_tensors
        winners = x == biggest
        return unreduce(grad_output, ctx) * winners / winners.sum(axis=ctx.dims, keepdims=True)
''', "lost their dimension"),
    },
    "06_shapes_and_indexing": {
        "permute-applied-again": ("mypermute", '''
class MyPermute(mg.Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad_output):
        return np.transpose(grad_output, ctx.dims), None
''', "the forward permutation was applied again"),
        "permute-applied-twice": ("mypermute", '''
class MyPermute(mg.Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad_output):
        return np.transpose(np.transpose(grad_output, ctx.dims), ctx.dims), None
''', "dims was applied twice"),
        "index-loop-over-rows": ("myindex", '''
class MyIndex(mg.Function):
    @staticmethod
    def forward(ctx, x, index):
        ctx.input_shape = x.shape
        ctx.index = index
        return x[index]

    @staticmethod
    def backward(ctx, grad_output):
        grad = np.zeros(ctx.input_shape)
        for k, i in enumerate(ctx.index):
            grad[i] += grad_output[k]
        return grad, None
''', "a loop over the index"),
        "cat-returns-a-list": ("mycat", '''
class MyCat(mg.Function):
    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        ctx.sizes = [x.shape[dim] for x in xs]
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        return np.split(grad_output, np.cumsum(ctx.sizes)[:-1], axis=ctx.dim)
''', "Return a tuple"),
        "index-last-write-wins": ("myindex", '''
class MyIndex(mg.Function):
    @staticmethod
    def forward(ctx, x, index):
        ctx.input_shape = x.shape
        ctx.index = index
        return x[index]

    @staticmethod
    def backward(ctx, grad_output):
        grad = np.zeros(ctx.input_shape)
        grad[ctx.index] += grad_output
        return grad, None
''', "a repeated index kept only one of its gradients"),
        "cat-split-at-sizes": ("mycat", '''
class MyCat(mg.Function):
    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        ctx.sizes = [x.shape[dim] for x in xs]
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(np.split(grad_output, ctx.sizes[:-1], axis=ctx.dim))
''', "split at the wrong offsets"),
        "cat-split-along-dim-0": ("mycat", '''
class MyCat(mg.Function):
    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        ctx.sizes = [x.shape[dim] for x in xs]
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(np.split(grad_output, np.cumsum(ctx.sizes)[:-1]))
''', "split along the wrong dimension"),
        "gather-put-along-axis": ("mygather", '''
class MyGather(mg.Function):
    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.input_shape = x.shape
        ctx.dim = dim
        ctx.save_for_backward(index)
        return np.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad = np.zeros(ctx.input_shape)
        np.put_along_axis(grad, index, grad_output, axis=ctx.dim)
        return grad, None, None
''', "the gradient of a repeated index was not accumulated"),
    },
    "07_matmul_and_linear": {
        "matmul-b-not-transposed": ("mymatmul", '''
class MyMatMul(mg.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output @ b, a.T @ grad_output
''', "b is not transposed in grad_a"),
        "matmul-swapped": ("mymatmul", '''
class MyMatMul(mg.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return b.T @ grad_output, grad_output @ a.T
''', "the operands of a matrix product are swapped"),
        "matmul-gradient-transposed": ("mymatmul", '''
class MyMatMul(mg.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output @ b.T, grad_output.T @ a
''', "the gradient is transposed"),
        "linear-forward-weight-not-transposed": ("mylinearfunction", '''
class MyLinearFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight.T, x.T @ grad_output, grad_output.sum(axis=0)
''', "the forward uses weight without its transpose"),
        "linear-bias-gradient-not-summed": ("mylinearfunction", '''
class MyLinearFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output
''', "not summed over the batch"),
        "linear-weight-gradient-transposed": ("mylinearfunction", '''
class MyLinearFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, x.T @ grad_output, grad_output.sum(axis=0)
''', "the weight's gradient is transposed"),
        "linear-bias-gradient-averaged": ("mylinearfunction", '''
class MyLinearFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output.mean(axis=0)
''', "averaged over the batch"),
        "linear-init-one-over-in": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / in_features
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))

    def forward(self, x):
        return MyLinearFunction.apply(x, self.weight, self.bias)
''', "the bound is 1/in_features"),
        "linear-weight-in-out": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(in_features, out_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))

    def forward(self, x):
        return x @ self.weight + self.bias
''', "the layout of y = x @ W"),
        "linear-bias-not-a-parameter": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = mg.empty(out_features).uniform_(-bound, bound).requires_grad_()

    def forward(self, x):
        return MyLinearFunction.apply(x, self.weight, self.bias)
''', "self.bias is a Tensor, not an nn.Parameter"),
        "linear-bias-forgotten": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))

    def forward(self, x):
        return x @ self.weight.T
''', "the bias was forgotten"),
        "linear-forward-without-bias": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))

    def forward(self, x):
        return x @ self.weight.T
''', "forward returns x @ weight.T without the bias"),
        "linear-parameters-in-a-list": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.params = [
            nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound)),
            nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))]

    def forward(self, x):
        return MyLinearFunction.apply(x, self.params[0], self.params[1])
''', "are not registered"),
    },
    "08_activations_and_losses": {
        "gelu-without-x-phi": ("mygelu", '''
class MyGELU(mg.Function):
    @staticmethod
    def forward(ctx, x):
        cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
        ctx.save_for_backward(cdf)
        return x * cdf

    @staticmethod
    def backward(ctx, grad_output):
        (cdf,) = ctx.saved_tensors
        return grad_output * cdf
''', "x * phi(x) term is missing"),
        "gelu-tanh-derivative": ("mygelu", '''
class MyGELU(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 0.5 * (1 + erf(x / math.sqrt(2)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        c = math.sqrt(2 / math.pi)
        t = np.tanh(c * (x + 0.044715 * x**3))
        du = c * (1 + 3 * 0.044715 * x**2)
        return grad_output * (0.5 * (1 + t) + 0.5 * x * (1 - t**2) * du)
''', "derivative of the tanh approximation"),
        "softmax-unstable": ("mysoftmax", '''
class MySoftmax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(x)
        s = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(s)
        ctx.dim = dim
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return s * (grad_output - (grad_output * s).sum(axis=ctx.dim, keepdims=True))
''', "overflowed"),
        "softmax-diagonal-only": ("mysoftmax", '''
class MySoftmax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        s = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s * (1 - s)
''', "only the diagonal of the Jacobian"),
        "smoothing-over-k-minus-1": ("smoothedtargets", '''
def smoothed_targets(target, n_classes, ignore_index, label_smoothing):
    keep = target != ignore_index
    onehot = np.eye(n_classes)[np.where(keep, target, 0)]
    q = (1 - label_smoothing) * onehot + label_smoothing / (n_classes - 1) * (1 - onehot)
    return q * keep[:, None]
''', "K - 1 wrong classes"),
        "ignored-rows-not-zero": ("smoothedtargets", '''
def smoothed_targets(target, n_classes, ignore_index, label_smoothing):
    onehot = np.eye(n_classes)[target]
    return (1 - label_smoothing) * onehot + label_smoothing / n_classes
''', "are not all zero"),
        "cross-entropy-sum-not-mean": ("mycrossentropy", '''
class MyCrossEntropy(mg.Function):
    @staticmethod
    def forward(ctx, x, target, ignore_index=-100, label_smoothing=0.0):
        shifted = x - x.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        q = smoothed_targets(target, x.shape[1], ignore_index, label_smoothing)
        ctx.keep = target != ignore_index
        ctx.count = max(int(ctx.keep.sum()), 1)
        ctx.save_for_backward(np.exp(log_probs), q)
        return -(q * log_probs).sum() / ctx.count

    @staticmethod
    def backward(ctx, grad_output):
        probs, q = ctx.saved_tensors
        return grad_output * (probs * ctx.keep[:, None] - q), None
''', "being the batch size"),
        "cross-entropy-ignored-rows-in-mean": ("mycrossentropy", '''
class MyCrossEntropy(mg.Function):
    @staticmethod
    def forward(ctx, x, target, ignore_index=-100, label_smoothing=0.0):
        shifted = x - x.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        q = smoothed_targets(target, x.shape[1], ignore_index, label_smoothing)
        ctx.keep = target != ignore_index
        ctx.count = max(int(ctx.keep.sum()), 1)
        ctx.save_for_backward(np.exp(log_probs), q)
        return -(q * log_probs).sum() / ctx.count

    @staticmethod
    def backward(ctx, grad_output):
        probs, q = ctx.saved_tensors
        return grad_output * (probs * ctx.keep[:, None] - q) / len(probs), None
''', "ignored rows were counted in the mean"),
        "cross-entropy-ignored-rows-get-gradient": ("mycrossentropy", '''
class MyCrossEntropy(mg.Function):
    @staticmethod
    def forward(ctx, x, target, ignore_index=-100, label_smoothing=0.0):
        shifted = x - x.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        q = smoothed_targets(target, x.shape[1], ignore_index, label_smoothing)
        ctx.keep = target != ignore_index
        ctx.count = max(int(ctx.keep.sum()), 1)
        ctx.save_for_backward(np.exp(log_probs), q)
        return -(q * log_probs).sum() / ctx.count

    @staticmethod
    def backward(ctx, grad_output):
        probs, q = ctx.saved_tensors
        return grad_output * (probs - q) / ctx.count, None
''', "ignored rows got a gradient"),
        "bce-textbook-overflows": ("mybcewithlogits", '''
def my_bce_with_logits(x, y):
    p = x.sigmoid()
    return -(y * p.log() + (1 - y) * (1 - p).log()).mean()
''', "overflowed"),
        "bce-sum-not-mean": ("mybcewithlogits", '''
def my_bce_with_logits(x, y):
    return (x.relu() - x * y + (-x.abs()).exp().log1p()).sum()
''', "summed over all elements"),
        "gelu-erf-without-sqrt2": ("mygelu", '''
class MyGELU(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 0.5 * (1 + erf(x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (0.5 * (1 + erf(x)) + x * np.exp(-x**2) / math.sqrt(math.pi))
''', "erf(x) instead of erf(x / sqrt 2)"),
        "softmax-fixed-axis-in-backward": ("mysoftmax", '''
class MySoftmax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        s = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return s * (grad_output - (grad_output * s).sum(axis=-1, keepdims=True))
''', "summed along the last axis, not along dim"),
    },
    "10_convolution_and_pooling": {
        "output-size-ceil": ("conv_output_size", """
def conv_output_size(size, kernel, stride=1, padding=0):
    return math.ceil((size + 2 * padding - kernel) / stride) + 1
""", "it rounds up (ceil) instead of down"),
        "output-size-padding-once": ("conv_output_size", """
def conv_output_size(size, kernel, stride=1, padding=0):
    return (size + padding - kernel) // stride + 1
""", "the padding is counted once"),
        "im2col-channels-last": ("my_im2col", """
def my_im2col(x, kernel_size, stride=1, padding=0):
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    view = np.lib.stride_tricks.sliding_window_view(x, kernel_size, axis=(2, 3))
    view = view[:, :, ::stride, ::stride]
    n, c, out_h, out_w, kh, kw = view.shape
    return view.transpose(0, 2, 3, 4, 5, 1).reshape(n * out_h * out_w, c * kh * kw)
""", "the columns are in (i, j, c) order"),
        "conv-flipped-kernel": ("my_conv2d", CONV2D.format(
            weight="weight[:, :, ::-1, ::-1]", grad_weight="g.T @ cols", add="+="),
            "flipped kernel"),
        "conv-windows-assigned": ("my_conv2d", CONV2D.format(
            weight="weight", grad_weight="g.T @ cols", add="="),
            "overlapping windows were not accumulated"),
        "conv-weight-gradient-transposed": ("my_conv2d", CONV2D.format(
            weight="weight", grad_weight="cols.T @ g", add="+="),
            "scrambles it"),
        "maxpool-gradient-to-every-element": ("my_maxpool2d", MAXPOOL.format(
            share="np.ones_like(flat)"), "the gradient went to EVERY element of the window"),
        "maxpool-gradient-divided-evenly": ("my_maxpool2d", MAXPOOL.format(
            share="np.full(flat.shape, 1 / (k * k))"), "that is avg-pool"),
        "maxpool-tie-to-the-last": ("my_maxpool2d", MAXPOOL.format(
            share="np.eye(k * k)[k * k - 1 - flat[..., ::-1].argmax(axis=-1)]"),
            "the LAST tied maximum"),
    },
    "11_normalization_and_residuals": {
        "batchnorm-mean-and-var-constant": ("my_batchnorm_backward", '''
class MyBatchNormFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        inv_std = 1 / np.sqrt(x.var(axis=0) + EPS)
        xhat = (x - x.mean(axis=0)) * inv_std
        ctx.save_for_backward(xhat, inv_std, weight)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        xhat, inv_std, weight = ctx.saved_tensors
        return (grad_output * weight * inv_std, (grad_output * xhat).sum(axis=0),
                grad_output.sum(axis=0))
''', "the mean and the variance were treated as constants"),
        "batchnorm-no-variance-term": ("my_batchnorm_backward", '''
class MyBatchNormFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        inv_std = 1 / np.sqrt(x.var(axis=0) + EPS)
        xhat = (x - x.mean(axis=0)) * inv_std
        ctx.save_for_backward(xhat, inv_std, weight)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        xhat, inv_std, weight = ctx.saved_tensors
        n = grad_output.shape[0]
        g = grad_output * weight
        grad_x = inv_std / n * (n * g - g.sum(axis=0))
        return grad_x, (grad_output * xhat).sum(axis=0), grad_output.sum(axis=0)
''', "the term through the variance is missing"),
        "batchnorm-no-gamma": ("my_batchnorm_backward", '''
class MyBatchNormFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        inv_std = 1 / np.sqrt(x.var(axis=0) + EPS)
        xhat = (x - x.mean(axis=0)) * inv_std
        ctx.save_for_backward(xhat, inv_std)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        xhat, inv_std = ctx.saved_tensors
        n, g = grad_output.shape[0], grad_output
        grad_x = inv_std / n * (n * g - g.sum(axis=0) - xhat * (g * xhat).sum(axis=0))
        return grad_x, (grad_output * xhat).sum(axis=0), grad_output.sum(axis=0)
''', "the weight (gamma) is missing from grad_x"),
        "batchnorm1d-batch-stats-in-eval": ("my_batchnorm1d", '''
class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=EPS, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(mg.ones(num_features))
        self.bias = nn.Parameter(mg.zeros(num_features))
        self.register_buffer("running_mean", mg.zeros(num_features))
        self.register_buffer("running_var", mg.ones(num_features))
        self.register_buffer("num_batches_tracked", mg.tensor(0))

    def forward(self, x):
        if self.training:
            n, m = x.shape[0], self.momentum
            with mg.no_grad():
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                self.running_mean.copy_((1 - m) * self.running_mean + m * mean)
                self.running_var.copy_((1 - m) * self.running_var + m * var * n / (n - 1))
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
        return MyBatchNormFunction.apply(x, self.weight, self.bias)
''', "batch statistics are used in eval mode"),
        "batchnorm1d-biased-running-var": ("my_batchnorm1d", '''
class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=EPS, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(mg.ones(num_features))
        self.bias = nn.Parameter(mg.zeros(num_features))
        self.register_buffer("running_mean", mg.zeros(num_features))
        self.register_buffer("running_var", mg.ones(num_features))
        self.register_buffer("num_batches_tracked", mg.tensor(0))

    def forward(self, x):
        if self.training:
            m = self.momentum
            with mg.no_grad():
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                self.running_mean.copy_((1 - m) * self.running_mean + m * mean)
                self.running_var.copy_((1 - m) * self.running_var + m * var)
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            return MyBatchNormFunction.apply(x, self.weight, self.bias)
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt() \\
            * self.weight + self.bias
''', "updated with the biased variance"),
        "batchnorm1d-momentum-swapped": ("my_batchnorm1d", '''
class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=EPS, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(mg.ones(num_features))
        self.bias = nn.Parameter(mg.zeros(num_features))
        self.register_buffer("running_mean", mg.zeros(num_features))
        self.register_buffer("running_var", mg.ones(num_features))
        self.register_buffer("num_batches_tracked", mg.tensor(0))

    def forward(self, x):
        if self.training:
            n, m = x.shape[0], self.momentum
            with mg.no_grad():
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                self.running_mean.copy_(m * self.running_mean + (1 - m) * mean)
                self.running_var.copy_(m * self.running_var + (1 - m) * var * n / (n - 1))
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            return MyBatchNormFunction.apply(x, self.weight, self.bias)
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt() \\
            * self.weight + self.bias
''', "the momentum is applied the wrong way round"),
        "layernorm-over-the-batch": ("my_layernorm", '''
class MyLayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(mg.ones(normalized_shape))
        self.bias = nn.Parameter(mg.zeros(normalized_shape))

    def forward(self, x):
        mean = x.mean(dim=0, keepdim=True)
        var = x.var(dim=0, keepdim=True, correction=0)
        return (x - mean) / (var + self.eps).sqrt() * self.weight + self.bias
''', "LayerNorm normalised over the wrong axis"),
        "dropout-not-scaled": ("my_dropout", '''
class MyDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        return x * (mg.rand(*x.shape) >= self.p).float()
''', "the kept values are not scaled"),
        "dropout-scaled-by-p": ("my_dropout", '''
class MyDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        return x * (mg.rand(*x.shape) >= self.p).float() / self.p
''', "divided by p instead of (1 - p)"),
        "dropout-in-eval": ("my_dropout", '''
class MyDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return x * (mg.rand(*x.shape) >= self.p).float() / (1 - self.p)
''', "dropout active in eval mode"),
        "kaiming-fan-out": ("kaiming_std", '''
def kaiming_std(shape):
    return math.sqrt(2 / (shape[0] * math.prod(shape[2:])))
''', "fan_out was used instead of fan_in"),
    },
    "09_optimizers_and_training": {
        "sgd-momentum-buffer-recreated": ("my_sgd_momentum", '''
class MySGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        grad = grad + group["weight_decay"] * param
        buffer = np.zeros_like(param)
        buffer = group["momentum"] * buffer + grad
        param -= group["lr"] * buffer
''', "momentum buffer is not kept between steps"),
        "sgd-lr-inside-buffer": ("my_sgd_momentum", '''
class MySGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        grad = grad + group["weight_decay"] * param
        velocity = state.get("velocity", np.zeros_like(param))
        velocity = group["momentum"] * velocity + group["lr"] * grad
        state["velocity"] = velocity
        param -= velocity
''', "the learning rate is inside the buffer"),
        "sgd-buffer-averaged": ("my_sgd_momentum", '''
class MySGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        momentum = group["momentum"]
        grad = grad + group["weight_decay"] * param
        buffer = state.setdefault("momentum_buffer", np.zeros_like(param))
        buffer[...] = momentum * buffer + (1 - momentum) * grad
        param -= group["lr"] * buffer
''', "the buffer is an average"),
        "sgd-param-rebound": ("my_sgd_momentum", '''
class MySGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        grad = grad + group["weight_decay"] * param
        if "momentum_buffer" in state:
            grad = group["momentum"] * state["momentum_buffer"] + grad
        state["momentum_buffer"] = grad
        param = param - group["lr"] * grad
''', "the parameter did not change"),
        "adam-without-bias-correction": ("my_adam", '''
class MyAdam(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad**2
        param -= group["lr"] * state["exp_avg"] / (np.sqrt(state["exp_avg_sq"]) + group["eps"])
''', "the bias correction is missing"),
        "adam-step-counted-from-zero": ("my_adam", '''
class MyAdam(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        t = state["step"]
        grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad**2
        m_hat = state["exp_avg"] / (1 - beta1**t)
        v_hat = state["exp_avg_sq"] / (1 - beta2**t)
        param -= group["lr"] * m_hat / (np.sqrt(v_hat) + group["eps"])
        state["step"] += 1
''', "t counts from 0"),
        "adam-eps-inside-sqrt": ("my_adam", '''
class MyAdam(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        state["step"] += 1
        t = state["step"]
        grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad**2
        m_hat = state["exp_avg"] / (1 - beta1**t)
        v_hat = state["exp_avg_sq"] / (1 - beta2**t)
        param -= group["lr"] * m_hat / np.sqrt(v_hat + group["eps"])
''', "eps is inside the square root"),
        "adamw-decay-on-the-gradient": ("my_adamw", '''
class MyAdamW(MyAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def update_param(self, param, grad, state, group):
        super().update_param(param, grad + group["weight_decay"] * param, state,
                             {**group, "weight_decay": 0.0})
''', "that is Adam with an L2 penalty"),
        "adamw-decay-without-lr": ("my_adamw", '''
class MyAdamW(MyAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def update_param(self, param, grad, state, group):
        param *= 1 - group["weight_decay"]
        super().update_param(param, grad, state, {**group, "weight_decay": 0.0})
''', "the decay is missing its learning rate"),
        "warmup-from-zero": ("warmup_cosine", '''
def warmup_cosine(step, warmup_steps, decay_steps):
    if step < warmup_steps:
        return step / warmup_steps
    if step >= warmup_steps + decay_steps:
        return 0.0
    return 0.5 * (1 + math.cos(math.pi * (step - warmup_steps) / decay_steps))
''', "the warm-up starts at 0"),
        "cosine-from-step-zero": ("warmup_cosine", '''
def warmup_cosine(step, warmup_steps, decay_steps):
    if step < warmup_steps:
        return (step + 1) / (warmup_steps + 1)
    if step >= warmup_steps + decay_steps:
        return 0.0
    return 0.5 * (1 + math.cos(math.pi * step / decay_steps))
''', "measured from step 0"),
        "clip-each-parameter": ("my_clip_grad_norm", '''
def my_clip_grad_norm_(parameters, max_norm):
    norms = []
    with mg.no_grad():
        for p in parameters:
            norm = float(np.sqrt((p.grad.numpy() ** 2).sum()))
            norms.append(norm)
            p.grad.mul_(min(max_norm / (norm + 1e-6), 1.0))
    return mg.tensor(math.sqrt(sum(n * n for n in norms)))
''', "each parameter was clipped on its own"),
        "clip-not-in-place": ("my_clip_grad_norm", '''
def my_clip_grad_norm_(parameters, max_norm):
    grads = [p.grad.numpy() for p in parameters]
    total = math.sqrt(sum(float((g ** 2).sum()) for g in grads))
    factor = min(max_norm / (total + 1e-6), 1.0)
    grads = [g * factor for g in grads]
    return mg.tensor(total)
''', "the gradients were not changed"),
        "clip-returns-norm-after": ("my_clip_grad_norm", '''
def my_clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = math.sqrt(sum(float((g.numpy() ** 2).sum()) for g in grads))
    factor = min(max_norm / (total + 1e-6), 1.0)
    with mg.no_grad():
        for g in grads:
            g.mul_(factor)
    return mg.tensor(total * factor)
''', "the one after clipping"),
    },
}


def _read(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


CHAPTERS = [p for p in sorted(NOTEBOOKS.glob("[0-9]*_*.ipynb"))
            if authoring.graded_cells(_read(p))]
chapters = pytest.mark.parametrize("chapter", [p.stem for p in CHAPTERS])


def _without_outputs(notebook: dict) -> dict:
    notebook = copy.deepcopy(notebook)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return notebook


def _with_cell(notebook: dict, grade_id: str, source: str) -> dict:
    notebook = copy.deepcopy(notebook)
    (cell,) = [c for c in notebook["cells"]
               if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
    cell["source"] = source.lstrip("\n")
    return notebook


def _cells(notebook: dict, solution: bool) -> list[str]:
    return [c["metadata"]["nbgrader"]["grade_id"] for c in notebook["cells"]
            if c["metadata"].get("nbgrader", {}).get("solution" if solution else "grade")]


def _class(chapter: pathlib.Path, release: pathlib.Path) -> dict[str, str | dict]:
    """``{student: notebook}``: what each student of this chapter returns."""
    number = chapter.stem.split("_")[0]
    source = _read(chapter)
    solved = _without_outputs(source)
    blank = _read(release / chapter.stem / chapter.name)
    returned = {"perfect": solved, "blank": blank}
    for name, (grade_id, wrong, _) in MISTAKES.get(chapter.stem, {}).items():
        returned[name] = _with_cell(solved, grade_id, wrong)
    last_solution = _cells(source, solution=True)[-1]
    returned["loop"] = _with_cell(solved, last_solution, "while True:\n    pass\n")
    returned["truncated"] = json.dumps(solved)[:len(json.dumps(solved)) // 2]
    tampered = copy.deepcopy(solved)
    first_test, *other_tests = _cells(source, solution=False)
    tampered["cells"] = [c for c in tampered["cells"]
                         if c["metadata"].get("nbgrader", {}).get("grade_id") != first_test]
    if other_tests:
        tampered = _with_cell(tampered, other_tests[0], "pass  # the test is gone")
    returned["tampered"] = tampered
    widgets = copy.deepcopy(source)  # the executed chapter, plus a live widget's output
    view = {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": "VBox()", "application/vnd.jupyter.widget-view+json":
                     {"model_id": "0" * 32, "version_major": 2, "version_minor": 0}}}
    next(c for c in widgets["cells"] if c["cell_type"] == "code")["outputs"].append(view)
    widgets["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {}, "version_major": 2, "version_minor": 0}}
    returned["widgets"] = widgets
    return {f"c{number}-{name}": notebook for name, notebook in returned.items()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A course with every chapter that has exercises, released, a class returned in
    the one-folder-per-student layout, collected and graded once."""
    root = tmp_path_factory.mktemp("course")
    course = root / "course"
    run = _runner(course)
    assert run("init", str(course), "--timeout", str(TIMEOUT),
               "--chapters", ",".join(str(int(p.stem.split("_")[0])) for p in CHAPTERS)) == 0
    assert run("release") == 0
    submissions = root / "returned"
    students = {}
    for chapter in CHAPTERS:
        for student, notebook in _class(chapter, course / "release").items():
            folder = submissions / student
            folder.mkdir(parents=True)
            text = notebook if isinstance(notebook, str) else json.dumps(notebook)
            (folder / chapter.name).write_text(text, encoding="utf-8")
            students[student] = chapter.stem
    assert run("collect", str(submissions)) == 0
    assert run("grade") == 0
    assert run("export", str(root / "grades.csv")) == 0
    with open(root / "grades.csv", newline="", encoding="utf-8") as file:
        rows = {(r["student"], r["assignment"]): r for r in csv.DictReader(file)}
    return {"course": course, "rows": rows, "students": students, "run": run}


def _runner(course: pathlib.Path):
    def run(*args: str) -> int:
        command = list(args)
        if command[0] not in ("init", "check"):
            command += ["--course", str(course)]
        return cli.main(command)

    return run


def _row(graded, chapter: str, name: str) -> dict:
    number = chapter.split("_")[0]
    return graded["rows"][(f"c{number}-{name}", chapter)]


def _feedback(graded, chapter: str, name: str) -> str:
    """The feedback page's text, without tags and with whitespace collapsed."""
    number = chapter.split("_")[0]
    path = graded["course"] / "feedback" / f"c{number}-{name}" / chapter / f"{chapter}.html"
    text = re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))
    return " ".join(html.unescape(text).split())


def _max(chapter: str) -> float:
    return sum(authoring.graded_cells(_read(NOTEBOOKS / f"{chapter}.ipynb")).values())


@chapters
def test_the_chapter_itself_gets_full_marks(graded, chapter):
    row = _row(graded, chapter, "perfect")
    assert (row["status"], float(row["score"]), row["note"]) == ("graded", _max(chapter), "")
    assert "right" in _feedback(graded, chapter, "perfect")


@chapters
def test_the_blank_copy_gets_zero_and_says_where_to_write(graded, chapter):
    row = _row(graded, chapter, "blank")
    assert (row["status"], float(row["score"])) == ("graded", 0.0)
    assert "Write your solution where the exercise says so" in _feedback(graded, chapter,
                                                                         "blank")


def _mistakes():
    return [(chapter, name) for chapter, table in MISTAKES.items() for name in table]


def _cell_scores(graded, chapter: str, name: str) -> dict[str, float]:
    """``{test cell: score}`` of one returned notebook, from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    number = chapter.split("_")[0]
    with Gradebook(f"sqlite:///{graded['course'] / 'gradebook.db'}") as gradebook:
        submitted = gradebook.find_submission_notebook(chapter, chapter, f"c{number}-{name}")
        return {grade.name: grade.score for grade in submitted.grades}


@pytest.mark.parametrize("chapter, mistake", _mistakes())
def test_a_classic_mistake_gets_partial_marks_and_its_name_in_the_feedback(graded, chapter,
                                                                           mistake):
    row = _row(graded, chapter, mistake)
    assert row["status"] == "graded"
    assert 0 < float(row["score"]) < _max(chapter)
    words = MISTAKES[chapter][mistake][2]
    assert words in _feedback(graded, chapter, mistake)


@pytest.mark.parametrize("chapter, mistake", _mistakes())
def test_a_classic_mistake_loses_points_on_its_own_exercise_s_checks_only(graded, chapter,
                                                                          mistake):
    # Part of the exercise gate (tests/test_exercise_gate.py), graded here so that each
    # mistake runs once under nbgrader: the gate's own rule says which checks belong to
    # the exercise and which may lose points with it (an exercise whose answer uses this
    # one's), so the checks are seen to test what the student wrote.
    from test_exercise_gate import _allowed_to_lose

    exercise = MISTAKES[chapter][mistake][0]
    must, may = _allowed_to_lose(chapter, exercise)
    points = authoring.graded_cells(_read(NOTEBOOKS / f"{chapter}.ipynb"))
    scores = _cell_scores(graded, chapter, mistake)
    assert set(scores) == set(points)
    lost = {cell: points[cell] - scores[cell] for cell in points if scores[cell] < points[cell]}
    assert set(lost) & must, f"{mistake}: the checks of {exercise} ({sorted(must)}) kept " \
        "all their points"
    assert set(lost) <= must | may, f"{mistake}: other exercises' checks lost points " \
        f"{ {c: p for c, p in lost.items() if c not in must | may} }"


@chapters
def test_every_chapter_with_exercises_has_classic_mistakes_to_grade(chapter):
    solutions = _cells(_read(NOTEBOOKS / f"{chapter}.ipynb"), solution=True)
    table = MISTAKES.get(chapter, {})
    assert table, f"add {chapter}'s classic mistakes to MISTAKES in {__file__}"
    assert {grade_id for grade_id, _, _ in table.values()} <= set(solutions)


@chapters
def test_an_endless_loop_is_cut_off_and_the_rest_is_graded(graded, chapter):
    row = _row(graded, chapter, "loop")
    assert row["status"] == "graded" and 0 < float(row["score"]) < _max(chapter)
    assert "CellTimeoutError" in _feedback(graded, chapter, "loop")
    # the teacher's table and the student's page say which cell was stopped, and why
    last = _cells(_read(NOTEBOOKS / f"{chapter}.ipynb"), solution=True)[-1]
    assert f"'{last}' ran past the time limit" in row["note"]
    assert f"Note from grading: '{last}' ran past the time limit" in _feedback(graded, chapter,
                                                                              "loop")


@chapters
def test_a_truncated_notebook_gets_a_note_and_the_class_is_still_graded(graded, chapter):
    row = _row(graded, chapter, "truncated")
    assert row["status"] == "not graded" and row["score"] == ""
    assert "not a readable notebook" in row["note"] and "new copy" in row["note"]
    assert _row(graded, chapter, "perfect")["status"] == "graded"


@chapters
def test_deleted_and_edited_test_cells_are_noted_and_the_teacher_s_tests_run(graded,
                                                                              chapter):
    row = _row(graded, chapter, "tampered")
    assert (row["status"], float(row["score"])) == ("graded", _max(chapter))
    assert "was deleted" in row["note"]
    if len(authoring.graded_cells(_read(NOTEBOOKS / f"{chapter}.ipynb"))) > 1:
        assert "was edited" in row["note"]
    assert "Note from grading: " + row["note"] in _feedback(graded, chapter, "tampered")


@chapters
def test_widget_output_in_a_returned_notebook_does_not_break_grading(graded, chapter):
    row = _row(graded, chapter, "widgets")
    assert (row["status"], float(row["score"])) == ("graded", _max(chapter))


def test_export_writes_one_row_per_student_and_assignment(graded):
    assignments = {p.stem for p in CHAPTERS}
    expected = {(s, a) for s in graded["students"] for a in assignments}
    assert set(graded["rows"]) == expected
    for (student, assignment), row in graded["rows"].items():
        if graded["students"][student] != assignment:
            assert row["status"] == "not returned"


def test_students_check_their_notebook(graded, tmp_path, capsys):
    chapter = CHAPTERS[0]
    release = graded["course"] / "release" / chapter.stem / chapter.name
    blank = tmp_path / chapter.name
    blank.write_text(release.read_text(encoding="utf-8"), encoding="utf-8")
    assert cli.main(["check", str(blank), "--timeout", str(TIMEOUT)]) == 1
    assert "Write your solution where the exercise says so" in capsys.readouterr().out


def test_collect_accepts_one_notebook_per_student_named_after_them(graded, tmp_path):
    # STUDENT.ipynb, as an LMS exports a single assignment; a name with spaces is made
    # into a valid student id
    # (with several chapters in the course, --assignment says which one they are for)
    course = graded["course"]
    chapter = CHAPTERS[0]
    returned = tmp_path / "flat"
    returned.mkdir()
    (returned / "Ada Lovelace.ipynb").write_text(chapter.read_text(encoding="utf-8"))
    assert cli.main(["collect", str(returned), "--course", str(course),
                     "--assignment", chapter.stem]) == 0
    assert (course / "submitted" / "Ada_Lovelace" / chapter.stem / chapter.name).exists()


def test_collect_understands_moodle_and_canvas_downloads(tmp_path):
    # no nbgrader needed: collect only files notebooks
    course = tmp_path / "course"
    assert cli.main(["init", str(course), "--chapters", "1"]) == 0
    chapter = course / "source" / "01_autograd_from_scratch" / "01_autograd_from_scratch.ipynb"
    returned = tmp_path / "returned"
    moodle = returned / "Ada Lovelace_1234_assignsubmission_file_"
    moodle.mkdir(parents=True)
    (moodle / "my homework.ipynb").write_text(chapter.read_text())
    canvas = returned / "hopper_LATE_77_9001_01_autograd_from_scratch.ipynb"
    canvas.write_text(chapter.read_text())
    assert cli.main(["collect", str(returned), "--course", str(course)]) == 0
    filed = sorted(p.relative_to(course / "submitted").parts[:2]
                   for p in (course / "submitted").rglob("*.ipynb"))
    assert filed == [("Ada_Lovelace", "01_autograd_from_scratch"),
                     ("hopper", "01_autograd_from_scratch")]


def test_without_nbgrader_the_command_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "nbgrader", None)  # import nbgrader now fails
    (tmp_path / "nbgrader_config.py").write_text("")
    (tmp_path / "source").mkdir()
    assert cli.main(["release", "--course", str(tmp_path)]) == 0  # nothing to release
    (tmp_path / "source" / "01_x").mkdir()
    assert cli.main(["release", "--course", str(tmp_path)]) == 2
    assert "grading extra" in capsys.readouterr().err


def test_the_command_is_installed():
    scripts = pathlib.Path(sys.executable).parent
    assert (scripts / ("minigrad-course" + (".exe" if os.name == "nt" else ""))).exists()


def test_init_refuses_an_unknown_chapter(tmp_path, capsys):
    assert cli.main(["init", str(tmp_path / "c"), "--chapters", "99"]) == 2
    assert "no chapter [99]" in capsys.readouterr().err
