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
# # Chapter 2: Tensors and broadcasting
#
# Chapter 1 used tensors without looking closely at them. Three of their properties
# decide what a backward pass must do, and each hides a classic bug:
#
# - the **dtype** of the numbers: integers have no gradient, and float32 is too coarse
#   to check a gradient numerically;
# - whether two tensors **share memory** (a view) or not (a copy): writing into one can
#   change the other;
# - **broadcasting**: `x + b` with `x` of shape $(2, 3)$ and `b` of shape $(3,)$ uses
#   each number of `b` twice, so its gradient is a *sum*, and must come back with `b`'s
#   shape.
#
# You will:
#
# 1. see which dtype a tensor gets, and which one an operation returns;
# 2. see why gradients need floating point, and why checks use float64;
# 3. tell views from copies;
# 4. learn the broadcasting rules, with pictures, and write them (exercise 1);
# 5. derive why a gradient must be summed back to its input's shape, and write
#    `unbroadcast` (exercise 2);
# 6. use it in a `MyMul` that broadcasts (exercise 3).
#
# The three **exercises** (8 points) are cells where you write code (in your copy a
# `raise NotImplementedError(...)` marks the place: replace it with your code; the
# teacher's copy and the course website have the answers there, between two "SOLUTION"
# marker comments), each followed by a test cell that checks your code and, when it is
# wrong, says which mistake it looks like. The checks come from `minigrad.exercises`.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 2 unbroadcast` gives a hint for exercise `unbroadcast` (a nudge
# first; run it again for the next step), and `minigrad-course solution 2 unbroadcast`
# the reference answer. Each exercise's ID is in its stub's message; chapter 0,
# section 1, lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import textwrap
from xml.etree import ElementTree

import numpy as np
from IPython.display import HTML

import minigrad as mg
from minigrad.exercises import check_array_function, check_function
from minigrad.exercises.broadcasting import (MUL_MISTAKES, UNBROADCAST_MISTAKES,
                                             builtin_unbroadcast, check_broadcast_shape,
                                             check_incompatible_shapes)
from minigrad.widgets import TensorView

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)


def draw_broadcast(*shapes, cell=22):
    """A picture (SVG) of broadcasting shapes of at most 2 dimensions: each input lined up
    from the right and stretched to the result's shape. Dark cells hold the input's own
    numbers; pale cells are the same numbers reused (nothing is copied in memory)."""
    result = np.broadcast_shapes(*shapes)
    rows, cols = ((1, 1) + result)[-2:]
    panels = [(f"{shape}", ((1, 1) + shape)[-2:]) for shape in shapes]
    panels.append((f"result {result}", (rows, cols)))
    width = max(cols * cell, 8 * max(len(title) for title, _ in panels)) + 36
    height = rows * cell + 30
    picture = ElementTree.Element("svg", xmlns="http://www.w3.org/2000/svg",
                                  width=str(width * len(panels)), height=str(height))

    def add(tag, text=None, **attributes):
        element = ElementTree.SubElement(picture, tag, {k.replace("_", "-"): str(v)
                                                        for k, v in attributes.items()})
        element.text = text

    for k, (title, (own_rows, own_cols)) in enumerate(panels):
        left = k * width
        add("text", title, x=left, y=12, font_size=12, font_family="monospace")
        for i in range(rows):
            for j in range(cols):
                own = (i < own_rows and j < own_cols) or k == len(shapes)
                add("rect", x=left + j * cell, y=18 + i * cell, width=cell - 2,
                    height=cell - 2, fill="#4a7bd0" if own else "#d5e1f5")
        if k < len(shapes):
            add("text", "+" if k < len(shapes) - 1 else "=", x=left + width - 24,
                y=18 + rows * cell / 2 + 5, font_size=16)
    return HTML(ElementTree.tostring(picture, encoding="unicode"))


# %% [markdown]
# `draw_broadcast` draws a picture of broadcasting (section 4); you do not need to read
# it.
#
# ## 1. dtypes: what the numbers are
#
# Every tensor holds numbers of one **dtype**. minigrad infers it from the data the way
# PyTorch does:
#
# | data | dtype |
# | --- | --- |
# | Python ints | `int64` |
# | Python floats | `float32` (the *default* float dtype) |
# | Python bools | `bool` |
# | a NumPy array | its own dtype (NumPy's floats are `float64`) |
#
# `dtype=` overrides it. NumPy differs in one place: `np.array([1.0])` is float64, so a
# tensor made from a NumPy array of floats is float64 too.

# %%
for data in ([1, 2], [1.0, 2.0], [True, False], np.array([1.0, 2.0]), np.array([1, 2])):
    made = f"mg.tensor({data!r})"
    print(f"{made:30} -> {mg.tensor(data).dtype}")
print(f"{'mg.tensor([1, 2], dtype=mg.float64)':30} -> "
      f"{mg.tensor([1, 2], dtype=mg.float64).dtype}")

# %% [markdown]
# An operation on two dtypes returns one dtype, by PyTorch's **promotion** rules:
#
# 1. the higher *kind* wins: bool < integer < floating point;
# 2. a Python number never raises the precision of a tensor of its kind
#    (`float32 tensor * 0.5` stays float32);
# 3. within one kind, a tensor with dimensions beats a 0-d one, and then the wider
#    type wins (`float32` with `float64` gives `float64`);
# 4. when the kind is raised by a **Python number** (an int64 tensor times `0.5`) or by
#    **true division** `/` (an integer tensor divided by an integer, tensor or number),
#    there is no float tensor to take the precision from: the result gets the *default*
#    float dtype, **float32** (the same default as `mg.tensor([1.0])` in the table
#    above).
#
# NumPy's rules differ: `int64` times `0.5` and `int64 / 2` are float64 there, as NumPy's
# default float is float64. `mg.result_type(...)` answers the question without computing
# anything.
#
# **Predict, then run.** Before running the next cell, write down the dtype of each
# result: an int64 tensor divided by 2 (true division), an int64 tensor times 0.5, an
# int64 tensor plus a float32 one, a float32 tensor plus a float64 one, and a float32
# vector plus a 0-d float64 tensor.

# %%
ints = mg.tensor([1, 2])
floats = mg.tensor([1.0, 2.0])
doubles = mg.tensor(np.array([1.0, 2.0]))
scalar64 = mg.tensor(3.0, dtype=mg.float64)

print("ints / 2          :", (ints / 2).dtype)
print("ints * 0.5        :", (ints * 0.5).dtype)
print("ints + floats     :", (ints + floats).dtype)
print("floats + doubles  :", (floats + doubles).dtype)
print("floats + scalar64 :", (floats + scalar64).dtype)
print("mg.result_type(ints, 0.5) =", mg.result_type(ints, 0.5))

# %% [markdown]
# Division always gives floating point (use `//` for integer division), and the 0-d
# float64 tensor did not turn the float32 vector into float64: a 0-d tensor behaves
# like a number. This is why a model's float32 weights stay float32 when you multiply
# them by a learning rate.
#
# ## 2. Why gradients need floating point
#
# A gradient says how the output changes when an input changes *a little*. An integer
# cannot change a little, so only floating-point tensors can require gradients:

# %%
try:
    mg.tensor([1, 2, 3], requires_grad=True)
except TypeError as error:
    print("TypeError:", error)

# %% [markdown]
# How much is "a little"? A **float32** number has 24 bits of mantissa, about 7
# significant digits; **float64** has 53 bits, about 16. That matters when we check a
# gradient with central differences (chapter 1's `gradcheck`):
#
# $$f'(x) \approx \frac{f(x + \varepsilon) - f(x - \varepsilon)}{2 \varepsilon}.$$
#
# The approximation's error has two parts: the formula's own error, about
# $\varepsilon^2$, which shrinks with $\varepsilon$; and the rounding error of
# $f(x \pm \varepsilon)$, about $\text{(machine precision)} / \varepsilon$, which
# *grows* as $\varepsilon$ shrinks. Here is $f(x) = x^3$ at $x = 1.1$, where
# $f'(x) = 3x^2 = 3.63$:

# %%
def cube(x):
    return x * x * x  # one multiplication at a time: rounded the same way on every machine


for dtype in (np.float32, np.float64):
    x = dtype(1.1)
    exact = 3 * float(x) ** 2
    for eps in (1e-2, 1e-4, 1e-6):
        step = dtype(eps)
        estimate = (cube(x + step) - cube(x - step)) / (2 * step)
        print(f"{dtype.__name__}, eps = {eps:.0e}: estimate {float(estimate):.6f}, "
              f"error {abs(float(estimate) - exact):.1e}")

# %% [markdown]
# In float64 the estimate gets better as $\varepsilon$ shrinks; in float32 it gets
# *worse* below $10^{-2}$, and at $10^{-6}$ it is wrong in the first decimal (a float32
# near 1.1 cannot even move by $10^{-6}$ precisely: its spacing there is about
# $1.2 \cdot 10^{-7}$). A check in float32 would have to accept errors of $10^{-3}$ or
# more, too loose to catch small mistakes. (At $\varepsilon = 10^{-2}$ float32 even looks
# slightly better than float64: there both errors are the formula's own, about
# $\varepsilon^2 = 10^{-4}$, and rounding only moves it a little either way. The
# difference shows where rounding matters, at small $\varepsilon$.)
# So:
#
# - train in **float32** (fast, half the memory, precise enough for gradient descent);
# - check gradients in **float64**. `mg.gradcheck` does its differences in float64:
#   it copies float inputs to float64 before it starts, so create them as float64
#   (`dtype=mg.float64`) to check the Function on the dtype it is really checked in.

# %% [markdown] tags=["question:why-float64-check"]
# ### Question (3 points, graded by your teacher)
#
# Why does a gradient check by central differences, $\big(f(x + \varepsilon) - f(x -
# \varepsilon)\big) / 2\varepsilon$, need float64, when float32 is precise enough to
# train with? Name the two errors of the estimate and how each depends on $\varepsilon$,
# and use the table for $f(x) = x^3$ at $x = 1.1$. Answer in the cell below, in a few
# sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names the formula's own error, about $\varepsilon^2$, which shrinks with
#   $\varepsilon$; the rounding error, about (machine precision)$/\varepsilon$, which
#   grows as $\varepsilon$ shrinks; and that float32's precision (about 7 digits) makes
#   the rounding error win already around $\varepsilon = 10^{-4}$ (an error of
#   $10^{-3}$, and wrong in the first decimal at $10^{-6}$), too loose to catch small
#   mistakes, while float64 (about 16 digits) gets errors of $10^{-8}$ and below.
# - 2 points: both errors and their opposite dependence on $\varepsilon$, without what
#   float32's precision makes of them; or float32's failure in the table with only one
#   of the two errors explained.
# - 1 point: only "float64 is more precise".
# - 0 points: nothing correct, or "the gradient itself must be float64 to train".
#
# A full answer names: (1) the central difference is off by a term of order
# $\varepsilon^2$ (Taylor), smaller for smaller $\varepsilon$; (2) $f(x \pm
# \varepsilon)$ are rounded, and their difference, divided by $2\varepsilon$, carries an
# error of order (machine precision)$/\varepsilon$, larger for smaller $\varepsilon$;
# (3) float32 has a 24-bit mantissa, about $10^{-7}$ relative (its spacing near 1.1 is
# about $1.2 \cdot 10^{-7}$), so no $\varepsilon$ gives both errors small: the table's
# float32 error grows from $10^{-4}$ to $10^{-3}$ to $0.17$ as $\varepsilon$ shrinks;
# float64, about $10^{-16}$, reaches $10^{-8}$ and $3 \cdot 10^{-10}$; (4) a check that
# had to accept errors of $10^{-3}$ would miss small mistakes, so check in float64 and
# train in float32 (faster, half the memory, and precise enough for a step of gradient
# descent). Accept "catastrophic cancellation" for (2); do not accept "float32 cannot
# represent small numbers" (it can; it cannot represent small *differences* of numbers
# near 1).
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-float64-check:3"]
# The central difference has two errors pulling in opposite directions. Its own error,
# from the Taylor expansion, is of order $\varepsilon^2$ and shrinks with $\varepsilon$;
# but $f(x + \varepsilon)$ and $f(x - \varepsilon)$ are each rounded, and dividing their
# nearly equal difference by a tiny $2\varepsilon$ blows the rounding up into an error
# of order (machine precision)$/\varepsilon$, which grows as $\varepsilon$ shrinks. With
# float32's 7 or so significant digits there is no good $\varepsilon$: in the table its
# error grows from $10^{-4}$ to $10^{-3}$ and then to $0.17$, wrong in the first
# decimal, while float64 with 16 digits gets down to $10^{-8}$ and below. A check in
# float32 would have to accept errors of $10^{-3}$ and would let small mistakes through,
# so gradients are checked in float64, while training, which only needs a good enough
# direction, runs in float32.

# %% [markdown]
# ## 3. Shapes, views and copies
#
# A tensor's **shape** is a tuple: `x.shape`, `x.ndim` (its length), `x.numel()` (the
# product: how many numbers), and PyTorch's `x.size()` (the shape) or `x.size(d)` (one
# size).

# %%
x = mg.zeros(2, 3, 4)
print("shape", x.shape, " ndim", x.ndim, " numel", x.numel(), " size(1)", x.size(1))

# %% [markdown]
# Under every tensor lies one NumPy array, a block of memory plus a shape and
# **strides** (how many bytes to step for the next element along each dimension). Many
# operations make a new tensor that is a **view**: the same memory seen with another
# shape or strides, nothing copied. `view` and `reshape` (when the memory allows it),
# slicing `x[0]` and `x[:, 1:]`, `transpose`/`permute`, `.data` and `detach()` all
# return views; `x.numpy()` returns the very array. `clone()` copies.
#
# **Predict, then run.** Take `a`, a $(2, 3)$ tensor holding 0 to 5, and `row = a[0]`,
# `twin = a.clone()`. Then write `a[0, 1] = 100.0`. What do `row` and `twin` show?

# %%
a = mg.arange(6.0).reshape(2, 3)
row = a[0]
twin = a.clone()
a[0, 1] = 100.0
print("a    =", a.numpy().tolist())
print("row  =", row.numpy().tolist())
print("twin =", twin.numpy().tolist())

# %% [markdown]
# `row` is a view of `a`: the write shows through it. `twin` is a copy and kept the old
# value. `np.shares_memory` tells them apart for each way of making a tensor from `a`:

# %%
made_from_a = {
    "a.view(3, 2)": a.view(3, 2),
    "a.reshape(6)": a.reshape(6),
    "a[0]": a[0],
    "a[:, 1:]": a[:, 1:],
    "a.transpose(0, 1)": a.transpose(0, 1),
    "a.data": a.data,
    "a.detach()": a.detach(),
    "a.clone()": a.clone(),
    "a * 1": a * 1,
}
for how, b in made_from_a.items():
    print(f"{how:18} shares memory with a: {np.shares_memory(a.numpy(), b.numpy())}")

# %% [markdown]
# Even `a * 1` is a copy: arithmetic always makes new memory. And `x.numpy()` is the
# tensor's own array, so writing into it writes into the tensor:

# %%
array = a.numpy()
array[1, 2] = -1.0
print("a after writing into a.numpy():", a.numpy().tolist())

# %% [markdown]
# Why this matters for autograd: a Function saves arrays for its backward
# (`ctx.save_for_backward`). If you then write into a view of one of them, the saved
# array changes too, and backward computes with the wrong numbers. PyTorch and minigrad
# count writes to catch this (the *version counter*, chapter 3). Clone first when you
# want to change a copy.
#
# ### Contiguous or not
#
# A transpose is a view with swapped strides: stepping along a row of `a.T` jumps
# through `a`'s memory. Such a tensor is not **contiguous** (its elements are not stored
# in row order). `contiguous()` returns the tensor itself if it already is, else a copy
# that is:

# %%
at = a.transpose(0, 1)
print("a  strides", a.numpy().strides, " contiguous:", a.is_contiguous())
print("aT strides", at.numpy().strides, " contiguous:", at.is_contiguous())
print("a.contiguous() is a    :", a.contiguous() is a)
print("aT.contiguous() copies :", not np.shares_memory(at.contiguous().numpy(), a.numpy()))

# %% [markdown]
# In PyTorch, `view` never copies: on a non-contiguous tensor it raises and tells you to
# use `reshape` (or `contiguous()` first). minigrad's `view` is `reshape`: it returns a
# view when the memory allows it and copies silently when it does not
# (`a.transpose(0, 1).view(6)` is a copy). Use `reshape` when you do not care, and do not
# count on `view` to share memory.
#
# ## 4. Broadcasting
#
# Adding a bias $b$ of shape $(3,)$ to every row of $X$ of shape $(2, 3)$ needs no loop
# and no copy: NumPy, PyTorch and minigrad **broadcast** $b$, as if it had been stacked
# twice. The rules, for two shapes:
#
# 1. line the shapes up **from the right** (the last dimensions together);
# 2. where one shape is shorter, count its missing leading dimensions as size 1;
# 3. each pair of sizes must be equal, or one of them must be 1: then the result has the
#    larger size, and the size-1 input is **stretched** along that dimension (its numbers
#    are reused, not copied).
#
# For $(2, 3)$ and $(3,)$: $(3,)$ becomes $(1, 3)$, then is stretched to $(2, 3)$. In the
# pictures, dark cells are an input's own numbers, pale cells the same numbers reused.

# %%
draw_broadcast((2, 3), (3,))

# %% [markdown]
# A column $(3, 1)$ and a row $(4,)$ are both stretched, into a $(3, 4)$ table (every
# sum $c_i + r_j$; an "outer sum"):

# %%
draw_broadcast((3, 1), (4,))

# %% [markdown]
# **Predict, then run.** For each pair of shapes below, write down the result's shape,
# or "error". Pay attention to $(3, 4)$ with $(3,)$.

# %%
pairs = [((3, 4), (4,)), ((3, 4), (3,)), ((3, 4), (3, 1)), ((2, 3, 4), (3, 1)),
         ((5,), ()), ((2, 1, 4), (3, 1)), ((4, 3), (2, 3))]
for left, right in pairs:
    try:
        shape = (mg.zeros(*left) + mg.zeros(*right)).shape
        print(f"{str(left):10} with {str(right):7} -> {shape}")
    except mg.ShapeError:
        print(f"{str(left):10} with {str(right):7} -> error: they do not broadcast")

# %% [markdown]
# $(3, 4)$ with $(3,)$ fails: lined up from the right, $4$ meets $3$. To add one number
# per **row**, make it a column, $(3, 1)$: `v.reshape(3, 1)`, `v.unsqueeze(1)` or
# `v[:, None]`. This is the most common broadcasting mistake, and on a *square*
# $(3, 3)$ matrix it raises nothing: a $(3,)$ vector meant as one number per row is
# silently added along each row instead (its number $j$ to column $j$). Here is
# minigrad's message when the shapes do not fit:

# %%
try:
    mg.zeros(3, 4) + mg.zeros(3)
except mg.ShapeError as error:
    for line in f"ShapeError: {error}".splitlines():
        print(textwrap.fill(line, 90, subsequent_indent="    "))  # long lines, cut to fit

# %% [markdown]
# ### Exercise 1 (2 points): `broadcast_shape`
#
# Write `broadcast_shape(a, b)`: the shape (a tuple) that broadcasting two tensors of
# shapes `a` and `b` gives, by the three rules above, without using NumPy's
# `np.broadcast_shapes`. When the shapes do not broadcast, raise a `ValueError` that
# names both shapes.

# %% tags=["solution:broadcast-shape"]
def broadcast_shape(a, b):
    """The shape that broadcasting shapes a and b gives (ValueError if they do not fit)."""
    # BEGIN SOLUTION
    n = max(len(a), len(b))
    padded_a = (1,) * (n - len(a)) + tuple(a)  # missing leading dimensions count as 1
    padded_b = (1,) * (n - len(b)) + tuple(b)
    result = []
    for size_a, size_b in zip(padded_a, padded_b):
        if size_a != size_b and 1 not in (size_a, size_b):
            raise ValueError(f"shapes {a} and {b} do not broadcast: {size_a} against "
                             f"{size_b}")
        result.append(max(size_a, size_b))
    return tuple(result)
    # END SOLUTION


# %% tags=["tests:broadcast-shape:2"]
check_broadcast_shape(broadcast_shape, [((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((3, 1), (1, 4)),
                                        ((5,), ()), ((), (2, 3)), ((1,), (2, 3)),
                                        ((2, 3), (2, 3))])
check_incompatible_shapes(broadcast_shape, (3, 4), (3,))
check_incompatible_shapes(broadcast_shape, (4, 3), (2, 3))
check_incompatible_shapes(broadcast_shape, (2, 3, 4), (5, 1, 4))
### BEGIN HIDDEN TESTS
check_broadcast_shape(broadcast_shape, [((6, 1, 5), (7, 1)), ((1, 2), (4, 3, 1)),
                                        ((2, 1, 3, 1), (5, 1, 4)), ((), ()), ((1, 1), (6,))])
check_incompatible_shapes(broadcast_shape, (5, 2), (3, 2))
check_incompatible_shapes(broadcast_shape, (6, 4, 2), (4, 3))
### END HIDDEN TESTS

# %% [markdown]
# ## 5. Why backward sums a gradient back to its input's shape
#
# Take $z = X + b$ with $X$ of shape $(2, 3)$ and $b$ of shape $(3,)$, then a loss $L$.
# Shapes first: $z$ has shape $(2, 3)$, so `grad_output` $= \partial L / \partial z$
# has shape $(2, 3)$. Element by element,
#
# $$z_{ij} = X_{ij} + b_j .$$
#
# Each $X_{ij}$ is used once, by $z_{ij}$: $\partial L / \partial X_{ij} = \partial L /
# \partial z_{ij}$, shape $(2, 3)$, as $X$. But $b_j$ is used **by every row**, in
# $z_{0j}$ and $z_{1j}$, and a number used several times gets the sum of the gradients
# of its uses (chapter 1's rule for $x$ used twice):
#
# $$\frac{\partial L}{\partial b_j} = \sum_{i} \frac{\partial L}{\partial z_{ij}}
# \qquad \text{shape } (3,).$$
#
# So broadcasting in the forward pass becomes a **sum** in the backward pass, over
# exactly the dimensions that were stretched, and the result has $b$'s shape again. The
# engine does it, and `TensorView` shows $b$ with its gradient. With the loss
# $L = \sum_{ij} v_{ij} z_{ij}$ for a random $v$, `grad_output` is $v$ and $b$'s gradient
# must be $v$ summed over its rows:

# %%
X = mg.randn(2, 3, requires_grad=True)
b = mg.randn(3, requires_grad=True)
b.label = "b"  # the name TensorView shows
v = mg.randn(2, 3)  # random, never all ones (chapter 1)
((X + b) * v).sum().backward()
print("b.grad          :", b.grad.numpy(), " shape", b.grad.shape)
print("v summed over i :", v.numpy().sum(axis=0))
TensorView(b)

# %% [markdown]
# Broadcasting does two things to an input's shape, and the sum must undo both:
#
# - it **adds leading dimensions**: $(3,)$ against $(2, 3)$. Sum them away (no size-1
#   dimension is left in their place);
# - it **stretches dimensions of size 1**: $(2, 1)$ against $(2, 3)$. Sum along them,
#   *keeping* them with size 1 (`keepdims=True`), so that $(2, 1)$ stays $(2, 1)$.
#
# A $(3, 1)$ input against a $(2, 3, 4)$ output has both: dimension 0 was added, and
# the input's second dimension (size 1) was stretched to 4. Its gradient is
# `grad_output.sum(axis=0)` (shape $(3, 4)$), then `.sum(axis=1, keepdims=True)`
# (shape $(3, 1)$). Note the axis numbers: `shape`'s dimension $i$ is the gradient's
# dimension $i + (\text{grad.ndim} - \text{len(shape)})$, as the shapes are lined up from
# the right.
#
# ### Exercise 2 (3 points): `unbroadcast`
#
# Write `unbroadcast(grad, shape)`: `grad` is the gradient of a broadcast output, and
# `shape` is the shape of one input; return `grad` summed back to `shape`. Use NumPy
# (`grad.sum(axis=..., keepdims=...)`), and do not change `grad` in place. A shape of
# `()` (a 0-d input, such as a scalar tensor) must give a 0-d result.

# %% tags=["solution:unbroadcast"]
def unbroadcast(grad, shape):
    """grad summed over the dimensions broadcasting added or stretched, to `shape`."""
    # BEGIN SOLUTION
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad
    # END SOLUTION


# %% [markdown]
# The first check tries cases you can work out by hand:
# `grad = [[0, 1, 2], [3, 4, 5]]` summed back to $(3,)$ (over the rows, giving
# `[3, 5, 7]`), to $(2, 1)$ (along each row, keeping the column: `[[3], [12]]`) and to
# $()$ (a 0-d input: everything added up, `15`, with no dimension left), the $(2, 3, 4)$
# to $(3, 1)$ case worked above, where the axis numbers matter, and a $(2, 3, 4)$ summed
# back to $(4,)$, where broadcasting added two leading dimensions. It also makes sure
# `grad` comes back unchanged (no writing into it in place).

# %% tags=["tests:unbroadcast-example:1"]
grad = np.arange(6.0).reshape(2, 3)
check_array_function(unbroadcast, reference=builtin_unbroadcast, mistakes=UNBROADCAST_MISTAKES,
                     cases=[(grad, (3,)), (grad, (2, 1)), (grad, ()),
                            (np.arange(24.0).reshape(2, 3, 4), (3, 1)),
                            (np.arange(24.0).reshape(2, 3, 4), (4,))])

# %% [markdown]
# The next check, worth 2 points, tries other shapes and values (among them 3-D and 4-D
# ones, and 0-d inputs). In the copy you work in, its cases are hidden (they would give the answer
# away) and the cell below is empty: your teacher's grading runs it. If the check above
# passes and your `unbroadcast` follows §5's two steps for any shape, it will pass too.

# %% tags=["tests:unbroadcast:2"]
# more cases, hidden in the copy students get (they would give the answer away)
### BEGIN HIDDEN TESTS
hidden = np.random.default_rng(22)
check_array_function(
    unbroadcast, reference=builtin_unbroadcast, mistakes=UNBROADCAST_MISTAKES,
    cases=[(hidden.standard_normal((4, 5)), (5,)), (hidden.standard_normal((5, 2)), (5, 1)),
           (hidden.standard_normal((3, 2)), (3, 2)),
           (hidden.standard_normal((3, 2, 5)), (3, 1, 5)),
           (hidden.standard_normal((2, 4, 3)), (1, 4, 1)),
           (hidden.standard_normal((2, 3, 5, 4)), (5, 1)),
           (hidden.standard_normal((3, 1, 2)), (1, 2)),
           (hidden.standard_normal((2, 2, 3)), ()), (hidden.standard_normal(5), ())])
### END HIDDEN TESTS

# %% [markdown]
# Your `unbroadcast` gives what the engine gave `b` above:
#
# *Stuck on `unbroadcast`? `from minigrad.course import use_reference; use_reference("unbroadcast")`
# in a new cell loads the reference answer, so the cells below (and exercise 3, which uses it)
# run (then it is not counted as yours).*

# %%
print("unbroadcast(v, (3,)) :", unbroadcast(v.numpy(), (3,)))
print("b.grad               :", b.grad.numpy())

# %% [markdown]
# ## 6. A `MyMul` that broadcasts
#
# For $z = x \cdot y$ (elementwise, with broadcasting), chapter 1 gave
# $\partial L / \partial x = $ `grad_output * y` and $\partial L / \partial y = $
# `grad_output * x`. With broadcasting, both products have the **output's** shape. Each
# must then be summed back to its own input's shape:
#
# $$\frac{\partial L}{\partial x} = \text{unbroadcast}\big(\text{grad\_output} \cdot y,\
# \text{shape of } x\big), \qquad \frac{\partial L}{\partial y} =
# \text{unbroadcast}\big(\text{grad\_output} \cdot x,\ \text{shape of } y\big).$$
#
# Multiply first, then sum: summing `grad_output` first would add numbers that belong to
# different elements of $y$.
#
# ### Exercise 3 (3 points): `MyMul` with broadcasting
#
# `forward` is written. Write `backward` so that it returns each gradient with its input's
# shape, using your `unbroadcast`. (If your `unbroadcast` still has a mistake, the check
# below says so and tries your `MyMul` with the reference `unbroadcast` instead: this
# exercise is judged on its own.)

# %% tags=["solution:mymul-broadcast"]
class MyMul(mg.Function):
    """z = x * y, with broadcasting; backward returns gradients of the inputs' shapes"""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, y = ctx.saved_tensors
        return unbroadcast(grad_output * y, x.shape), unbroadcast(grad_output * x, y.shape)
        # END SOLUTION


# %% [markdown]
# The check calls your `forward` and `backward` directly and wants each gradient with its
# input's shape (`exact_shapes=True`), on shapes where $x$, $y$ or both are broadcast,
# including a 0-d $y$; then it runs `MyMul` through the engine.

# %% tags=["tests:mymul-broadcast:3"]
check_function(MyMul, inputs=[[(3, 1), (1, 4)], [(3, 4), (4,)], [(2, 3, 1), (3, 4)],
                              [(3, 1), (2, 3, 4)], [(3, 4), ()], [(3, 4), (3, 4)]],
               reference=lambda x, y: x * y, mistakes=MUL_MISTAKES, exact_shapes=True,
               uses={"unbroadcast": "minigrad.exercises.broadcasting:builtin_unbroadcast"})
### BEGIN HIDDEN TESTS
check_function(MyMul, inputs=[[(2, 1, 5), (4, 1)], [(5,), (3, 2, 5)], [(), (2, 3)],
                              [(1, 1), (2, 3)], [(4, 2), (4, 2)]],
               reference=lambda x, y: x * y, mistakes=MUL_MISTAKES, exact_shapes=True,
               seed=7,
               uses={"unbroadcast": "minigrad.exercises.broadcasting:builtin_unbroadcast"})
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-multiply-then-sum"]
# ### Question (2 points, graded by your teacher)
#
# In the broadcasting `MyMul`, $\partial L/\partial y$ = `unbroadcast(grad_output * x,
# y.shape)`: multiply first, then sum back to $y$'s shape. Take $x$ of shape $(3, 4)$
# and $y$ of shape $(4,)$. Why would `unbroadcast(grad_output, y.shape) * x` be wrong,
# even where its shape could be made to fit? Answer in the cell below, in a few
# sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: explains that $y_j$ is used once per row $i$, each use with its own local
#   derivative $x_{ij}$, so the chain rule's sum is $\sum_i g_{ij}\,x_{ij}$: every
#   gradient must be multiplied by its own $x_{ij}$ before the uses are added; summing
#   $g$ first adds numbers that belong to different $x_{ij}$ and cannot be weighted
#   correctly afterwards (and the result does not even have $y$'s shape).
# - 1 point: says the order matters, or names the sum over uses, without the per-use
#   factor $x_{ij}$.
# - 0 points: neither, or "the two are equal because multiplication commutes".
#
# A full answer names: (1) $z_{ij} = x_{ij}\,y_j$: $y_j$ is used by every row, and the
# use in row $i$ has the local derivative $x_{ij}$; (2) so $\partial L/\partial y_j =
# \sum_i g_{ij}\,x_{ij}$, a sum of products, with $g$ = `grad_output`; (3) summing first
# gives $\sum_i g_{ij}$, and multiplying that by $x$ gives $(\sum_i g_{ij})\, x_{kj}$
# for each row $k$: a $(3, 4)$ array, not $y$'s shape, and no way of summing it back
# gives $\sum_i g_{ij} x_{ij}$ unless every row of $x$ is the same. Accept "the sum of
# products is not the product of sums"; do not accept "it is only a matter of the
# shape".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-multiply-then-sum:2"]
# Each $y_j$ is used once in every row, $z_{ij} = x_{ij}\,y_j$, and each of those uses
# has its own local derivative, $x_{ij}$. The chain rule adds the contributions of the
# uses, so $\partial L/\partial y_j = \sum_i g_{ij}\,x_{ij}$: each upstream gradient has
# to be multiplied by its own $x_{ij}$ before the sum. Summing `grad_output` first
# throws away which row each number came from, and multiplying the sum $\sum_i g_{ij}$
# by $x$ afterwards weights it with the wrong numbers (it even gives back a $(3, 4)$
# array); a sum of products is not a product of sums unless all rows of $x$ are equal.
# So the product, with the output's shape, comes first and `unbroadcast` second.

# %% [markdown]
# And `gradcheck` in float64, on a column times a row:
#
# *Stuck on `MyMul`? `from minigrad.course import use_reference; use_reference("mymul-broadcast")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
column = mg.randn(3, 1, dtype=mg.float64, requires_grad=True)
row = mg.randn(4, dtype=mg.float64, requires_grad=True)
print("gradcheck of MyMul:", mg.gradcheck(lambda c, r: MyMul.apply(c, r), [column, row]))

# %% [markdown]
# **The engine sums too.** If a backward returns a gradient with the output's shape,
# minigrad's engine (and PyTorch's) sums it back to the input's shape before passing it
# on, so chapter 1's `MyMul` worked on broadcast inputs without an `unbroadcast`. Here is
# a backward that forgets it, through the engine and called directly. Called directly,
# `backward` needs the `ctx` that `forward` filled in: that is the output's `grad_fn`,
# the engine's record of the call, which holds the saved tensors (as in PyTorch, where
# `grad_fn` is the ctx), so `output.grad_fn` is passed as `ctx`:

# %%
class MyMulWithoutSum(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x  # both of the output's shape


column.grad = row.grad = None
MyMulWithoutSum.apply(column, row).sum().backward()
print("through the engine: row.grad has shape", row.grad.shape)
output = MyMulWithoutSum.apply(column, row)
print("called directly   : backward returns shapes",
      [g.shape for g in MyMulWithoutSum.backward(output.grad_fn, np.ones((3, 4)))])

# %% [markdown]
# The sum in the engine is exactly your `unbroadcast`: minigrad calls it `sum_to_shape`
# (PyTorch: `sum_to`). You need it yourself whenever a backward combines gradients
# before returning them: one Function for a whole layer (`x @ W + b`: the bias's
# gradient is `unbroadcast(grad_output, b.shape)`), a reduction's backward (chapter 5),
# or `expand`, whose whole backward is this sum. And when the shapes cannot be summed
# back (a transposed gradient, say), the engine raises a `ShapeError` naming the
# Function and the input (chapter 1).
#
# ## Summary
#
# - Tensors get PyTorch's dtypes: Python ints `int64`, floats `float32`, bools `bool`;
#   NumPy arrays keep theirs. Operations **promote**: the higher kind wins, numbers and
#   0-d tensors do not widen a tensor of their kind; `mg.result_type` tells.
# - Only floating-point tensors have gradients. Train in float32, **check in float64**:
#   finite differences in float32 drown in rounding.
# - Views (`view`, `reshape`, slicing, `transpose`, `.data`, `detach()`, `numpy()`)
#   share memory; `clone()`, `contiguous()` of a non-contiguous tensor, and arithmetic
#   copy. A write into a view changes the original.
# - Broadcasting lines shapes up **from the right**; sizes must match or be 1; a missing
#   or size-1 dimension is stretched. A $(3,)$ vector meets the *last* dimension: make it
#   $(3, 1)$ to go along the first.
# - A number used many times gets the sum of their gradients: backward **sums over the
#   broadcast dimensions**, leading ones away, size-1 ones with `keepdims=True`, back to
#   the input's shape (`unbroadcast`).
#
# ## Where this lives in minigrad
#
# | what | where |
# | --- | --- |
# | dtype inference, `mg.result_type`, `set_default_dtype` | `minigrad/dtypes.py` |
# | `view`, `reshape`, `transpose`, `clone`, `contiguous`, `.data`, `numpy()` | `minigrad/tensor.py` (the Functions: `minigrad/ops/movement.py`) |
# | broadcasting of elementwise operations (`Add`, `Mul`, ...) | NumPy, inside `minigrad/ops/elementwise.py` |
# | the engine's sum back to an input's shape, `sum_to_shape` | `minigrad/gradients.py` |
# | `expand` (broadcast without arithmetic; backward: the same sum) | `Expand` in `minigrad/ops/movement.py` |
#
# Read `sum_to_shape` in `minigrad/gradients.py` now: it does in one `sum` call what your
# `unbroadcast` does, and returns `None` when the shapes cannot be summed back (the
# engine then raises the `ShapeError`).
#
# Next: [Chapter 3, Function and Context in depth](03_function_and_context.ipynb), where
# you decide what a Function saves for its backward, and what the engine checks for you.
