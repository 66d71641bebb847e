# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Chapter 1: Autograd from scratch
#
# A neural network learns by following gradients: how much does the loss change when
# each number inside it changes a little? Working them out by hand is slow and easy to
# get wrong, so every deep learning library computes them for you. The technique is
# called **automatic differentiation**, and its backward form (backpropagation) is only
# the chain rule, applied one small operation at a time.
#
# In this chapter you build that machinery yourself, on top of minigrad: a NumPy engine
# that uses PyTorch's names, so what you learn here carries over to PyTorch directly.
# You will:
#
# 1. meet the `Tensor` and the four attributes autograd uses;
# 2. write your own differentiable operations (`Mul` and `Exp`) as `Function`s;
# 3. follow the chain rule through a small graph;
# 4. look inside that graph, and draw it;
# 5. run the backward pass one step at a time;
# 6. see why broadcasting makes the engine *sum* gradients (chapter 2 goes deeper);
# 7. check a backward pass with `gradcheck`, and catch a wrong one;
# 8. see why gradients accumulate, and how to clear them;
# 9. switch recording off with `no_grad`;
# 10. write one more Function, `MySin`, on your own.
#
# Along the way come five **exercises**: a cell where you write code, and after it a test
# cell that checks your code and, when it is wrong, says which mistake it looks like. The
# checks come from `minigrad.exercises`. This notebook, as kept in the repository and on
# the course website, has the answers, between two "SOLUTION" marker comments. The copy
# you work in has them replaced by a line that raises an error until you write your
# code there:
#
# - in your own workspace (`minigrad-course workspace`, chapter 0), by
#   `raise NotImplementedError("exercise mymul: write your code here")`, which names the
#   exercise;
# - in a copy your teacher hands out, by `# YOUR CODE HERE` and `raise NotImplementedError()`.
#
# Either way, replace that line with your code.
#
# Stuck on an exercise? In a terminal, in the repository, `minigrad-course hint 1 mymul`
# gives a hint for exercise `mymul` (a nudge first; run it again for the next step), and
# `minigrad-course solution 1 mymul` the reference answer. Each exercise's ID is in its
# stub's message; chapter 0, section 1, lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import numpy as np

import minigrad as mg
from minigrad.exercises import check_function
from minigrad.exercises.autograd_from_scratch import (EXP_MISTAKES, EXP_MUL_PLUS_MISTAKES,
                                                      MUL_MISTAKES, SIN_MISTAKES)
from minigrad.exercises.context import check_needs_input_grad
from minigrad.widgets import GraphView

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)


def fmt(array):
    """A gradient as short text: rounded values, or None where no gradient was sent."""
    if array is None:
        return "None"
    array = np.asarray(array)
    if array.ndim == 0:
        return f"{array.item():.4f}"
    return np.array2string(array, precision=4, separator=", ")


# %% [markdown]
# ## 1. What a Tensor is
#
# A minigrad `Tensor` is a NumPy array plus four things autograd needs:
#
# | attribute | what it holds |
# | --- | --- |
# | values | the numbers themselves; `x.numpy()` gives them as a NumPy array |
# | `requires_grad` | should gradients be computed for this tensor? |
# | `grad` | the gradient of the loss with respect to this tensor, after `backward()` |
# | `grad_fn` | the graph node (operation) that made this tensor; `None` for a tensor you created |
#
# A tensor you create yourself is a **leaf**. Leaves with `requires_grad=True` are the
# things you want gradients for (later: the weights of a network).

# %%
x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
print("values        :", x.numpy(), x.dtype)
print("requires_grad :", x.requires_grad)
print("grad          :", x.grad)
print("grad_fn       :", x.grad_fn)
print("is_leaf       :", x.is_leaf)

# %% [markdown]
# Every operation on a tensor that requires grad returns a new tensor whose `grad_fn`
# remembers the operation and its inputs. `backward()` then walks those records back to
# the leaves. For $s = \sum_i x_i^2$ we expect $\partial s / \partial x_i = 2 x_i$:

# %%
y = x * x
s = y.sum()
print("y =", y)
print("s =", s)
print("y.grad_fn =", y.grad_fn, "  s.grad_fn =", s.grad_fn, "  y.is_leaf =", y.is_leaf)

s.backward()
print("x.grad =", x.grad, "   2 * x =", 2 * x.numpy())

# %% [markdown]
# `<Mul #1>` is a graph node: the operation's name and its **id**, a counter that grows
# by one for every node made in this session. This is the first, so it is `#1`; further
# down you will see larger ids (`<MyMul #113>` in section 2), because the test cells in
# between make nodes too, so an id depends on the cells run before. The pictures do not
# use it: a drawing numbers the nodes of its own graph 1, 2, ... in the order they were
# made, so the `Mul #3` in a picture is that graph's third node, whatever ran before.
# Only leaves keep a `.grad`; `y` was a step on the way.
#
# ## 2. Writing your own Function
#
# Each differentiable operation is a subclass of `mg.Function` with two static methods
# that work on plain NumPy arrays:
#
# - `forward(ctx, *inputs)` computes the result, and keeps on `ctx` (the *context*)
#   whatever backward will need: `ctx.save_for_backward(...)`.
# - `backward(ctx, grad_output)` receives $\frac{\partial L}{\partial z}$, the gradient of
#   the final loss $L$ with respect to this operation's output $z$, and returns one
#   gradient per input: $\frac{\partial L}{\partial x} = \frac{\partial L}{\partial z}
#   \cdot \frac{\partial z}{\partial x}$. That is the chain rule, one step of it.
#
# You never call them directly: `MyMul.apply(a, b)` unwraps the tensors, runs `forward`,
# wraps the result and records a graph node.
#
# For $z = x \cdot y$: $\frac{\partial L}{\partial x} = \frac{\partial L}{\partial z}\, y$
# and $\frac{\partial L}{\partial y} = \frac{\partial L}{\partial z}\, x$. So backward
# needs both inputs: save them. `ctx.needs_input_grad` says which inputs want a
# gradient, so backward can skip work (and return `None`) for the others.
#
# ### Exercise 1 (2 points): `MyMul.backward`
#
# `forward` is written. Write `backward`: read the saved inputs back from
# `ctx.saved_tensors` and return the two gradients as a tuple `(grad_x, grad_y)`. Where
# `ctx.needs_input_grad` says an input needs no gradient (a tensor without
# `requires_grad`, or a Python number like `2.0`), return `None` in its place: the check
# expects `None` there, not an array.
#
# You need not handle broadcasting: when an input was broadcast (a `(4,)` times a
# `(3, 4)`), return `grad_output * y` with the output's shape, and the engine sums it back
# to the input's shape for you (section 6 shows how).

# %% tags=["solution:mymul"]
class MyMul(mg.Function):
    """z = x * y"""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, y = ctx.saved_tensors
        grad_x = grad_output * y if ctx.needs_input_grad[0] else None
        grad_y = grad_output * x if ctx.needs_input_grad[1] else None
        return grad_x, grad_y
        # END SOLUTION


# %% [markdown]
# The check below runs your `MyMul` on random inputs (one of them broadcast, one a Python
# number) and compares its output and gradients with minigrad's own `x * y`. It does not
# differentiate `z.sum()`: that sends an upstream gradient of all ones, and a backward
# that forgets to multiply by `grad_output` would pass. It uses $\sum_i v_i z_i$ with a
# fixed random $v$ instead, so `grad_output` is $v$. A second check calls your backward
# with each setting of `ctx.needs_input_grad` and expects `None` for an input whose flag
# is False.

# %% tags=["tests:mymul:2"]
check_function(MyMul, inputs=[[(3, 4), (3, 4)], [(3, 4), (4,)], [(2, 3), 2.0]],
               reference=lambda x, y: x * y, mistakes=MUL_MISTAKES)
check_needs_input_grad(MyMul, inputs=[(3, 4), (3, 4)], reference=lambda x, y: x * y)
### BEGIN HIDDEN TESTS
check_function(MyMul, inputs=[[(2, 5), (2, 5)], [(4, 1, 3), (3,)], [(5,), -1.5]],
               reference=lambda x, y: x * y, mistakes=MUL_MISTAKES, seed=1)
check_needs_input_grad(MyMul, inputs=[(2, 5), (2, 5)], reference=lambda x, y: x * y, seed=1)
### END HIDDEN TESTS


# %% [markdown]
# ### Exercise 2 (2 points): `MyExp`
#
# For $z = e^x$ the derivative is $e^x$ again, which is the output itself. Write both
# methods of `MyExp`: `forward` computes $z$ with `np.exp` and saves the *output* `z`, so
# that backward needs no second `np.exp`. With one input, backward may return the
# gradient alone or a tuple of one (`return grad,` with its comma); both are accepted.
# `ctx.saved_tensors` is always a tuple, even with one array in it: unpack it. (Saving
# `x` and calling `np.exp` again in backward would also give the right numbers, and this
# check accepts it; but it computes the exponential twice. Chapter 3 checks which one a
# Function saves.)

# %% tags=["solution:myexp"]
class MyExp(mg.Function):
    """z = exp(x),  dz/dx = exp(x) = z"""

    @staticmethod
    def forward(ctx, x):
        # BEGIN SOLUTION
        z = np.exp(x)
        ctx.save_for_backward(z)
        return z
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        (z,) = ctx.saved_tensors
        return grad_output * z
        # END SOLUTION


# %% tags=["tests:myexp:2"]
check_function(MyExp, inputs=[(3, 4)], reference=lambda x: x.exp(), mistakes=EXP_MISTAKES,
               exact_shapes=True)
### BEGIN HIDDEN TESTS
check_function(MyExp, inputs=[[(2, 3, 2)], [(5,)], [()]], reference=lambda x: x.exp(),
               mistakes=EXP_MISTAKES, exact_shapes=True, seed=1)
### END HIDDEN TESTS


# %% [markdown]
# Use them like any operation, and look at what the context kept. The saved values are
# plain NumPy arrays, and `needs_input_grad` has one entry per input: a Python number
# (here `2.0`) never needs a gradient.
#
# *Stuck on `MyMul` or `MyExp`? `from minigrad.course import use_reference; use_reference("mymul")`
# (and `use_reference("myexp")`) in a new cell loads the reference answer, so the cells below
# run (then it is not counted as yours).*

# %%
a = mg.randn(3, requires_grad=True)
b = mg.randn(3, requires_grad=True)

z = MyMul.apply(a, b)
print("z =", z)
print("z.grad_fn =", z.grad_fn)
saved_x, saved_y = z.grad_fn.ctx.saved_tensors
print("saved:", type(saved_x).__name__, saved_x, saved_y)
print("needs_input_grad, a * b  :", z.grad_fn.ctx.needs_input_grad)
print("needs_input_grad, a * 2.0:", MyMul.apply(a, 2.0).grad_fn.ctx.needs_input_grad)

# %% [markdown]
# minigrad's own `Mul` and `Exp` (in `minigrad/ops/elementwise.py`) are written the same
# way. Let us compare ours with them once more by hand, for
# $L = \sum_i v_i\, e^{a_i b_i}$ with random weights $v$ (with plain $\sum_i$, every
# upstream gradient would be 1, and a backward that ignores `grad_output` would agree):

# %%
v = mg.randn(3)
mine = (MyExp.apply(MyMul.apply(a, b)) * v).sum()
mine.backward()
mine_grads = a.grad.numpy().copy(), b.grad.numpy().copy()

a.grad = b.grad = None  # start again from no gradient (section 8 explains why)
builtin = ((a * b).exp() * v).sum()
builtin.backward()

print(f"value : mine {mine.item():.4f}   built-in {builtin.item():.4f}")
print("a.grad: mine", fmt(mine_grads[0]), "  built-in", fmt(a.grad.numpy()))
print("b.grad: mine", fmt(mine_grads[1]), "  built-in", fmt(b.grad.numpy()))
print("same gradients:", np.allclose(mine_grads[0], a.grad.numpy())
      and np.allclose(mine_grads[1], b.grad.numpy()))

# %% [markdown]
# ## 3. The chain rule through a small graph
#
# Take $f(x, y) = e^{xy} + x$ at $x = 2$, $y = 0.5$. Name the steps:
#
# $$p = x y, \qquad u = e^{p}, \qquad f = u + x.$$
#
# Backward goes from $f$ to the leaves, multiplying local derivatives:
#
# - $\frac{\partial f}{\partial u} = 1$, and $\frac{\partial f}{\partial p} =
#   \frac{\partial f}{\partial u} \cdot e^{p} = u$;
# - $\frac{\partial f}{\partial y} = \frac{\partial f}{\partial p} \cdot x = u\,x$;
# - $x$ is used **twice** (in $p$ and in $f$), so its two contributions add up:
#   $\frac{\partial f}{\partial x} = \frac{\partial f}{\partial p} \cdot y + 1 = u\,y + 1$.
#
# Here is the same function built from our two Functions and the built-in `+`. Labels
# make the graph easier to read.

# %%
def build_f():
    """Fresh leaves x, y and f = exp(x * y) + x, built with our own Functions."""
    x = mg.tensor(2.0, requires_grad=True, label="x")
    y = mg.tensor(0.5, requires_grad=True, label="y")
    p = MyMul.apply(x, y)
    p.label = "p"
    u = MyExp.apply(p)
    u.label = "u"
    f = u + x
    f.label = "f"
    return x, y, f


x, y, f = build_f()
f.backward()

u = np.exp(2.0 * 0.5)
print(f"f      = {f.item():.4f}")
print(f"x.grad = {x.grad.item():.4f}   by hand: u*y + 1 = {u * 0.5 + 1:.4f}")
print(f"y.grad = {y.grad.item():.4f}   by hand: u*x     = {u * 2.0:.4f}")


# %% [markdown]
# ### Exercise 3 (3 points): one Function for the whole of $f$
#
# Write $f(x, y) = e^{xy} + x$ as a single `mg.Function`, `MyExpMulPlus`: `forward`
# computes it with NumPy (and saves what backward needs), `backward` returns
# $\frac{\partial L}{\partial x}$ and $\frac{\partial L}{\partial y}$ by the rules above.
# Inside one Function the engine cannot add up the two uses of $x$ for you: that is now
# your job.

# %% tags=["solution:myexpmulplus"]
class MyExpMulPlus(mg.Function):
    """f(x, y) = exp(x * y) + x"""

    @staticmethod
    def forward(ctx, x, y):
        # BEGIN SOLUTION
        u = np.exp(x * y)
        ctx.save_for_backward(x, y, u)
        return u + x
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, y, u = ctx.saved_tensors
        return grad_output * (u * y + 1), grad_output * u * x
        # END SOLUTION


# %% tags=["tests:myexpmulplus:3"]
check_function(MyExpMulPlus, inputs=[[(3, 4), (3, 4)], [(3, 4), (4,)]],
               reference=lambda x, y: (x * y).exp() + x, mistakes=EXP_MUL_PLUS_MISTAKES)
### BEGIN HIDDEN TESTS
check_function(MyExpMulPlus, inputs=[[(2, 5), (2, 5)], [(3, 1), (1, 4)], [(5,), ()]],
               reference=lambda x, y: (x * y).exp() + x, mistakes=EXP_MUL_PLUS_MISTAKES,
               seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ## 4. Inspecting the graph
#
# `f.grad_fn` is a graph node. It exposes:
#
# - `name`: the operation's label. It comes from the Function's class attribute `oper`,
#   which is the class name (`"MyMul"`) unless the class sets one itself, as in
#   `oper = "mul"`;
# - `id`: a counter, growing as nodes are made (so it depends on the cells run
#   before; it is never a memory address; the drawings number each graph's nodes 1, 2,
#   ... instead);
# - `inputs`: the input tensors;
# - `next_functions`: for each input, `(node that made it, output index)`, or
#   `(None, 0)` for a leaf or a constant: those are the edges backward travels along;
# - `ctx`: the context its `forward` filled in. As in PyTorch, the node *is* that
#   context (`node.ctx is node`): `f.grad_fn.saved_tensors` works too.
#
# `build_f()` makes a fresh graph each time: the `backward()` above released the old
# graph's saved arrays. A few lines of code walk the whole graph, from the output back
# to the leaves:

# %%
def print_graph(tensor, indent=""):
    """Print the graph that made `tensor`, from the output back to the leaves."""
    node = tensor.grad_fn
    if node is None:
        print(f"{indent}{tensor.label}  (leaf, requires_grad={tensor.requires_grad})")
        return
    print(f"{indent}{tensor.label} = {node.name} #{node.id}")
    for t in node.inputs:
        print_graph(t, indent + "    ")


x, y, f = build_f()
print_graph(f)

# %%
node = f.grad_fn
print("node           :", node)
print("name, id       :", node.name, node.id)
print("inputs         :", node.inputs)
print("next_functions :", node.next_functions)

exp_node = node.next_functions[0][0]
print("exp node       :", exp_node, " its ctx saved", fmt(exp_node.ctx.saved_tensors[0]))
print("exp node's ctx :", exp_node.ctx, "(the node itself:", exp_node.ctx is exp_node, ")")
print("needs_input_grad:", exp_node.needs_input_grad)

# %% [markdown]
# `next_functions` pairs each input with the node that made it and that node's output
# number (0: a Function with one output). `GraphView` draws the same graph: `x` has two
# arrows, one into `p` and one straight into `f`. That is the "used twice, gradients
# add" rule from section 3, seen in the graph. (The widget's legend lists every kind of
# node and edge it can draw; this graph has only leaves and operations. Parameters,
# collapsed layers and the colours for a backward in progress come in later chapters.)

# %%
GraphView(f)

# %% [markdown]
# ## 5. The backward pass, step by step
#
# `loss.backward()` is a loop over the graph's nodes, newest first (a node runs only
# when every gradient for its output has arrived). minigrad exposes that very loop as an
# iterator, `mg.backward_steps(loss)`: each step runs one node's `backward` and reports
# the gradient it **received** (for its output) and the gradients it **sent** (one per
# input). Gradients that reach a leaf are added to its `.grad` as they are produced.

# %%
x, y, f = build_f()
for number, step in enumerate(mg.backward_steps(f), start=1):
    received = ", ".join(fmt(g) for g in step.grad_outputs)
    sent = ", ".join(f"{t.label}: {fmt(g)}" for t, g in zip(step.node.inputs, step.grad_inputs))
    print(f"step {number}: {str(step.node):<11} received {received:<7} sent {sent}")

print(f"\nx.grad = {x.grad.item():.4f}, y.grad = {y.grad.item():.4f}")

# %% [markdown]
# Read it from the top. The first node receives $\frac{\partial f}{\partial f} = 1$:
# `f.backward()` starts from a gradient of 1, as $f$ is a single number. `+` passes it
# unchanged to both inputs; `MyExp` multiplies by $u = e^{1} = 2.7183$; `MyMul` sends
# $2.7183 \cdot y$ to $x$ and $2.7183 \cdot x$ to $y$. The leaf `x` received $1$ and $1.3591$: its `.grad` is their
# sum, $2.3591$.
#
# `backward()` runs exactly this iterator to the end, so on a fresh graph it gives the
# same gradients:

# %%
x2, y2, f2 = build_f()
f2.backward()
print("same x.grad:", np.allclose(x.grad.numpy(), x2.grad.numpy()), f"({x2.grad.item():.4f})")
print("same y.grad:", np.allclose(y.grad.numpy(), y2.grad.numpy()), f"({y2.grad.item():.4f})")

# %% [markdown]
# ## 6. Broadcasting, and why the engine sums gradients
#
# NumPy broadcasting lets a vector $b$ of shape `(3,)` multiply every row of a matrix
# $X$ of shape `(2, 3)`: $z_{ij} = X_{ij}\, b_j$. Each $b_j$ is *used once per row*, and
# we know what happens to something used several times: its gradients add up,
#
# $$\frac{\partial L}{\partial b_j} = \sum_i \frac{\partial L}{\partial z_{ij}}\, X_{ij}.$$
#
# `MyMul.backward` knows nothing about broadcasting: `grad_output * X` has the output's
# shape `(2, 3)`. The engine sums such a gradient over the broadcast dimensions back to
# the input's shape, so no Function has to. A variant of `MyMul` that prints the shapes
# its backward returns shows it:

# %%
class MyMulShowingShapes(MyMul):
    @staticmethod
    def backward(ctx, grad_output):
        grads = MyMul.backward(ctx, grad_output)
        print("MyMul.backward returns shapes", [g.shape for g in grads])
        return grads


X = mg.randn(2, 3, requires_grad=True)
b = mg.randn(3, requires_grad=True)
MyMulShowingShapes.apply(X, b).sum().backward()

# L = sum(z), so dL/dz = 1 everywhere and dL/db_j = sum_i X_ij: X summed over its rows
print("b.grad.shape     =", b.grad.shape)
print("b.grad           =", fmt(b.grad.numpy()))
print("X summed over i  =", fmt(X.numpy().sum(axis=0)))

# %% [markdown] tags=["question:why-sum"]
# ### Question (2 points, graded by your teacher)
#
# Why does the gradient of the broadcast input `b` need a *sum* over the rows of `X`,
# rather than, say, the gradient of the first row alone, or the whole `(2, 3)` array
# that `MyMul.backward` returns? Answer in the cell below, in a few sentences; name the
# rule of calculus you use.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
#
# - **2 points**: the answer gives both reasons: (1) broadcasting *uses* each $b_j$ once
#   per row, in every $z_{ij}$, and by the chain rule a variable that feeds several
#   outputs gets the *sum* of the gradients through each of its uses (the same rule as
#   for a variable used twice in a graph); (2) a gradient has the shape of its input,
#   `(3,)`, while `grad_output * X` has the output's shape `(2, 3)`: summing over the
#   stretched dimension (the rows, `axis=0`) is what brings it back.
# - **1 point**: only one of the two: e.g. "the shapes must match, so sum" without saying
#   why a sum (and not a mean or one row) is the right number, or "each $b_j$ is used
#   several times, so its gradients add up" without linking it to the shape.
# - **0 points**: neither; or a wrong reason ("to average the rows", "because NumPy
#   cannot store a `(2, 3)` gradient", "to save memory").
#
# A full answer names: each $b_j$ used once per row; the chain rule summing over every
# use (the multivariable chain rule); the input's shape `(3,)` against the output's
# `(2, 3)`; the sum over the broadcast dimension, $\partial L / \partial b_j = \sum_i
# \partial L / \partial z_{ij} \, X_{ij}$. Taking the first row only counts one use
# (wrong by a factor of about the number of rows); the `(2, 3)` array keeps the uses
# apart and cannot be added to `b`.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-sum:2"]
# Broadcasting uses each $b_j$ once per row of $X$: it appears in $z_{0j}$ and in
# $z_{1j}$. The chain rule for a variable that feeds several outputs says its gradient is
# the sum of the gradients through each use, $\partial L/\partial b_j = \sum_i
# \partial L/\partial z_{ij}\, X_{ij}$, just as for a variable used twice in a graph.
# `MyMul.backward` returns `grad_output * X`, one gradient per use, with the output's
# shape `(2, 3)`; `b` has shape `(3,)`, and its gradient must have that shape. Summing
# over the broadcast dimension (the rows) adds the uses together and gives that shape.
# The first row alone would count only one of the uses.

# %% [markdown]
# Chapter 2 (tensors and broadcasting) works this out in full: the broadcasting rules,
# why the sum runs over exactly the stretched dimensions (leading ones summed away,
# size-1 ones kept with size 1), and an exercise where you write that sum,
# `unbroadcast(grad, shape)`, and use it in a `MyMul` that broadcasts.
#
# A gradient that cannot be summed to the input's shape is a bug in a backward, and the
# engine says which Function and which input:

# %%
class TransposedBackward(mg.Function):
    """z = 2 x, with a buggy backward that returns the gradient transposed"""

    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad_output):
        return 2 * grad_output.T  # bug: shape (3, 2) for an input of shape (2, 3)


try:
    TransposedBackward.apply(X).sum().backward()
except mg.ShapeError as error:
    print("ShapeError:", error)

# %% [markdown]
# The engine can catch this only because the shapes differ: on a square input a
# transposed gradient has the right shape and goes through silently. That is why checks
# use non-square shapes. Try it: fix the bug above, then check your fix with
# `check_function(TransposedBackward, inputs=[(2, 3)], reference=lambda x: 2 * x)`,
# which also notices a dropped factor 2.
#
# ## 7. Checking a backward with `gradcheck`
#
# A wrong backward does not crash: it quietly returns wrong numbers, and training just
# goes badly. So test every new Function against the definition of the derivative,
# computed numerically with central differences:
#
# $$\frac{\partial f}{\partial x_k} \approx \frac{f(x + \varepsilon e_k) - f(x -
# \varepsilon e_k)}{2 \varepsilon},$$
#
# where $e_k$ is all zeros except a 1 at position $k$ (only $x_k$ moves).
#
# `mg.gradcheck(fn, inputs)` does this for every input element (for a tensor output it
# checks $\sum \text{output} \cdot v$ with a fixed random $v$) and compares with one
# backward pass. Use **float64**: with $\varepsilon = 10^{-6}$, float32's 7 significant
# digits would make the difference quotient mostly rounding noise.

# %%
X64 = mg.randn(2, 3, dtype=mg.float64, requires_grad=True)
b64 = mg.randn(3, dtype=mg.float64, requires_grad=True)

print("MyMul          :", mg.gradcheck(lambda u, v: MyMul.apply(u, v), [X64, b64]))
print("MyExp          :", mg.gradcheck(lambda u: MyExp.apply(u), [X64]))
print("exp(X * b) + X :", mg.gradcheck(lambda u, v: MyExp.apply(MyMul.apply(u, v)) + u,
                                       [X64, b64]))

# %% [markdown]
# Now a classic mistake: `MyExpWrong` saves its *input* and returns
# `grad_output * x` instead of `grad_output * exp(x)`. It runs without complaint, but
# `gradcheck` raises `mg.GradcheckError` with a report: for each input, how many
# elements disagree, and the worst ones with both values. The cell catches the error and
# prints its report.

# %%
class MyExpWrong(mg.Function):
    """z = exp(x), with a wrong backward"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.exp(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x  # should be grad_output * np.exp(x)


# %%
try:
    mg.gradcheck(lambda u: MyExpWrong.apply(u), [X64])
except mg.GradcheckError as error:
    print(error)

# %% [markdown]
# All 6 elements are wrong (the report lists the worst five), and the "analytic" values
# (our backward) next to the "numerical" ones (finite differences) show by how much.
# Every element wrong usually means a wrong formula; only a few wrong ones point to an
# edge case (a zero, a tie, a boundary).
#
# ### Exercise 4 (2 points): `MyDiv`
#
# Write `MyDiv`, $z = x / y$, with $\frac{\partial z}{\partial x} = 1/y$ and
# $\frac{\partial z}{\partial y} = -x/y^2$. Check it yourself with `mg.gradcheck` first
# (float64 inputs, one of them broadcast), then run the test cell.

# %% tags=["solution:mydiv"]
class MyDiv(mg.Function):
    """z = x / y"""

    @staticmethod
    def forward(ctx, x, y):
        # BEGIN SOLUTION
        ctx.save_for_backward(x, y)
        return x / y
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, y = ctx.saved_tensors
        return grad_output / y, -grad_output * x / (y * y)
        # END SOLUTION


print("MyDiv:", mg.gradcheck(lambda u, w: MyDiv.apply(u, w), [X64, b64.abs() + 0.5]))

# %% tags=["tests:mydiv:2"]
check_function(MyDiv, inputs=[[(3, 4), (3, 4)], [(3, 4), (4,)]], reference=lambda x, y: x / y,
               domain=(0.5, 2.0))
### BEGIN HIDDEN TESTS
check_function(MyDiv, inputs=[[(2, 5), (2, 5)], [(5,), (3, 5)], [(4, 2), 3.0]],
               reference=lambda x, y: x / y, domain=(0.5, 2.0), seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ## 8. Gradients accumulate
#
# `backward()` **adds** into `.grad`; it never overwrites. That is the "used twice, add
# up" rule again, and it is useful (gradients of several losses, or of several small
# batches, simply add). But it means you must clear gradients before the next step. For
# $L = \sum_i w_i^2$, $\nabla L = 2w$:

# %%
w = mg.tensor([1.0, -2.0], requires_grad=True)
for call in range(1, 4):
    loss = (w * w).sum()
    loss.backward()
    print(f"after backward #{call}: w.grad = {fmt(w.grad.numpy())}")

# %% [markdown]
# Two ways to clear it, as in PyTorch: set `w.grad = None` (the next backward starts
# afresh), or zero it in place with `w.grad.zero_()`. (Optimizers' `zero_grad()` does
# this for all parameters.)

# %%
w.grad.zero_()
print("after zero_()     :", fmt(w.grad.numpy()))
w.grad = None
loss = (w * w).sum()
loss.backward()
print("after None + 1 call:", fmt(w.grad.numpy()))

# %% [markdown]
# ## 9. `no_grad`: computing without recording
#
# Recording the graph costs memory (every context keeps its saved arrays until
# backward). When you only want values (evaluating a model) or when you *change* the
# leaves (a gradient-descent step), switch recording off with `mg.no_grad()`:

# %%
with mg.no_grad():
    doubled = w * 2
    print("inside no_grad : grad enabled?", mg.is_grad_enabled())
print("doubled        :", doubled, " requires_grad:", doubled.requires_grad,
      " grad_fn:", doubled.grad_fn)
print("after the block: grad enabled?", mg.is_grad_enabled())

# %% [markdown]
# Updating a leaf in place while recording would change a value the graph depends on,
# so minigrad (like PyTorch) refuses:

# %%
try:
    w -= 0.1 * w.grad
except RuntimeError as error:
    print("RuntimeError:", error)

# %% [markdown]
# Inside `no_grad` the update is allowed, and `w` stays a leaf. Here are three steps of
# gradient descent, $w \leftarrow w - \eta\, \nabla L$ with $\eta = 0.25$, each starting
# from a cleared gradient. Since $\nabla L = 2w$, each step halves $w$:

# %%
learning_rate = 0.25
for step in range(1, 4):
    w.grad = None
    loss = (w * w).sum()
    loss.backward()
    with mg.no_grad():
        w -= learning_rate * w.grad
    print(f"step {step}: loss before {loss.item():.4f}, w after {fmt(w.numpy())}, "
          f"leaf: {w.is_leaf}")

# %% [markdown]
# ## 10. One more Function, on your own
#
# ### Exercise 5 (1 point): `MySin`
#
# Write `MySin`, $z = \sin x$, on your own: $\frac{d}{dx}\sin x = \cos x$. Decide what
# forward must save for backward (the input or the output?), and check it with
# `mg.gradcheck` on float64 inputs before you run the test cell.

# %% tags=["solution:mysin"]
class MySin(mg.Function):
    """z = sin(x),  dz/dx = cos(x)"""

    @staticmethod
    def forward(ctx, x):
        # BEGIN SOLUTION
        ctx.save_for_backward(x)
        return np.sin(x)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        (x,) = ctx.saved_tensors
        return grad_output * np.cos(x)
        # END SOLUTION


print("MySin:", mg.gradcheck(lambda u: MySin.apply(u), [X64]))

# %% tags=["tests:mysin:1"]
check_function(MySin, inputs=[(3, 4)], reference=lambda x: x.sin(), mistakes=SIN_MISTAKES,
               exact_shapes=True)
### BEGIN HIDDEN TESTS
check_function(MySin, inputs=[[(2, 5)], [(4,)], [()]], reference=lambda x: x.sin(),
               mistakes=SIN_MISTAKES, exact_shapes=True, domain=(-4.0, 4.0), seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - A `Tensor` holds its values (`x.numpy()`), and for autograd `requires_grad`, `grad` and `grad_fn`.
# - A `Function` is a `forward` and a `backward` on NumPy arrays; the context carries
#   what backward needs (`save_for_backward` / `saved_tensors`) and which inputs want a
#   gradient (`needs_input_grad`).
# - Backward is the chain rule, one node at a time, newest first
#   (`mg.backward_steps` shows each step); a value used several times (including by
#   broadcasting) gets the *sum* of its gradients.
# - Check every new backward with `mg.gradcheck` in float64.
# - `.grad` accumulates: clear it before each step. Use `mg.no_grad()` for updates and
#   evaluation.
#
# ## Where this lives in minigrad
#
# | in this chapter | in minigrad |
# | --- | --- |
# | `Tensor`: `requires_grad`, `grad`, `grad_fn`, `is_leaf` | `minigrad/tensor.py`, class `Tensor` |
# | `mg.Function`, `apply`, the context (`save_for_backward`, `needs_input_grad`) and the graph node | `minigrad/function.py` |
# | minigrad's own `Mul`, `Exp`, `Div` | `minigrad/ops/elementwise.py` |
# | `backward()`, `mg.backward_steps`, the sum of a gradient back to its input's shape | `minigrad/autograd.py` |
# | `mg.gradcheck` | `minigrad/gradcheck.py` |
# | `mg.no_grad`, `mg.is_grad_enabled` | `minigrad/state.py` |
#
# Next: [Chapter 2, Tensors and broadcasting](02_tensors_and_broadcasting.ipynb), where a
# tensor's dtype, its memory and broadcasting decide what a backward must do.
