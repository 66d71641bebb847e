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
# # Chapter 6: Shapes and indexing
#
# Many operations in a network do no arithmetic at all. They **move numbers around**:
# `reshape` regroups them, `transpose` and `permute` reorder the dimensions, `x[idx]`
# picks some of them (an embedding table is exactly that), `cat` and `stack` glue
# tensors together, and `gather` picks one number per position (cross-entropy picks
# the score of each sample's label this way).
#
# Their backward passes all follow one rule:
#
# > Each gradient goes back to the place its number came from. A number that was
# > copied to several places gets the **sum** of their gradients.
#
# In this chapter you write each of these operations as an `mg.Function` (NumPy arrays
# in, NumPy arrays out, as in chapter 1) and check it. You will:
#
# 1. build `reshape` (and see why `view` has the same backward);
# 2. write the backward of `permute`: the **inverse** permutation (exercise 1);
# 3. write the backward of indexing: a **scatter-add**, where repeated indices
#    accumulate (exercise 2), after a "predict, then run" on a NumPy trap;
# 4. write `cat`, whose backward is a **split** at the right offsets (exercise 3), and
#    see `stack` as a `cat`;
# 5. write the backward of `gather`, with PyTorch's meaning of `gather` (exercise 4).
#
# Each Function is checked twice: with `mg.gradcheck` in float64 (finite differences,
# chapter 1) and against minigrad's own operation. The four **exercises** are cells
# where you write code (in your copy a `raise NotImplementedError(...)` marks the place:
# replace it with your code; the teacher's copy and the course website have the answers
# there, between two "SOLUTION" marker comments), each followed by a test cell that
# checks your code and, when it is wrong, says which mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 6 mypermute` gives a hint for exercise `mypermute` (a nudge
# first; run it again for the next step), and `minigrad-course solution 6 mypermute` the
# reference answer. Each exercise's ID is in its stub's message; chapter 0, section 1,
# lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import functools

import numpy as np

import minigrad as mg
from minigrad.exercises import check_function
from minigrad.widgets import BackwardStepper

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)


def same_as_builtin(mine, builtin, *inputs):
    """Run `mine` and `builtin` on copies of the same inputs, backward through both with
    the same random upstream gradient, and print whether outputs and gradients agree."""
    copies = [[mg.tensor(x.numpy().copy(), requires_grad=True) for x in inputs]
              for _ in range(2)]
    outputs = [mine(*copies[0]), builtin(*copies[1])]
    v = mg.tensor(np.random.default_rng(1).standard_normal(outputs[1].shape))
    for output in outputs:
        (output * v).sum().backward()
    same_output = outputs[0].shape == outputs[1].shape and np.allclose(
        outputs[0].numpy(), outputs[1].numpy())
    same_grads = all(a.grad.shape == b.grad.shape and np.allclose(a.grad.numpy(), b.grad.numpy())
                     for a, b in zip(*copies))
    print(f"same output: {same_output}, same gradients: {same_grads}")


# %% [markdown]
# `same_as_builtin` does not differentiate `output.sum()`. That would send an upstream
# gradient of all ones, and with all ones a backward that puts gradients in the wrong
# places can still look right (every place receives the same 1). It differentiates
# $\sum_k v_k\, \text{output}_k$ with a random $v$ instead, so each position's
# gradient is different and must land in the right place.
#
# ## 1. `reshape` and `view`
#
# `reshape` keeps the elements in their reading order (row by row, "C order") and
# only changes how they are grouped into dimensions. Number the elements of $x$ in
# that order, $x_0, x_1, \dots$; then element $k$ of $y = \text{reshape}(x)$ is element
# $k$ of $x$:
#
# $$y_k = x_k \quad\Longrightarrow\quad \frac{\partial L}{\partial x_k} =
# \frac{\partial L}{\partial y_k}.$$
#
# So the gradient of $x$ is `grad_output` itself, read in $x$'s shape:
# `grad_output.reshape(x.shape)`. Backward needs only that shape. A shape is not an
# array, so keep it as a plain attribute of `ctx` (`save_for_backward` is for arrays).
#
# `forward` receives the target shape as a second argument. It is not a tensor, so
# backward returns `None` for it: one gradient per forward input, always.

# %%
class MyReshape(mg.Function):
    """y = x with a new shape; backward reshapes the gradient back"""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.reshape(ctx.input_shape), None


# %% [markdown]
# Check it with `gradcheck` (float64) and against minigrad's `x.reshape`. A `-1` in
# the shape means "whatever size makes the count right", in NumPy as in PyTorch:

# %%
x = mg.randn(2, 3, 4, dtype=mg.float64, requires_grad=True)

print("gradcheck:", mg.gradcheck(lambda t: MyReshape.apply(t, (4, 6)), [x]))
print("gradcheck with -1:", mg.gradcheck(lambda t: MyReshape.apply(t, (-1, 2)), [x]))
same_as_builtin(lambda t: MyReshape.apply(t, (4, 6)), lambda t: t.reshape(4, 6), x)

# %% [markdown]
# In PyTorch, `view` is a `reshape` that never copies: it shares memory with its input
# and refuses when the memory layout does not allow it (after a `transpose`, for
# example). Which numbers go where is the same, so the backward is the same. minigrad
# does not model memory layout: its `x.view(...)` never refuses, and both `x.view(...)`
# and `x.reshape(...)` make a `Reshape` node.
#
# **Predict, then run.** `x` below has shape `(2, 3)`. Is `x.reshape(3, 2)` the same as
# its transpose `x.T`, which also has shape `(3, 2)`? Decide before you run the cell.

# %%
x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print("x =\n", x.numpy())
print("x.reshape(3, 2) =\n", x.reshape(3, 2).numpy())
print("x.T =\n", x.T.numpy())

# %% [markdown]
# They differ. `reshape` reads $1, 2, 3, 4, 5, 6$ in order and refills the new shape;
# the transpose *moves* each number: row $i$, column $j$ goes to row $j$, column $i$.
# That matters for backward: undoing a transpose with a reshape gives a gradient of the
# right shape and the wrong values, and no shape check can catch it. Only a check like
# `gradcheck` can.
#
# ## 2. `transpose` and `permute`
#
# `y = x.permute(dims)` reorders the dimensions: dimension `dims[k]` of $x$ becomes
# dimension $k$ of $y$. For `dims = (1, 2, 0)` and $x$ of shape $(2, 3, 4)$:
#
# $$y_{b,c,a} = x_{a,b,c}, \qquad y \text{ has shape } (3, 4, 2).$$
#
# Every number moves to exactly one new place and none is copied, so
# $\frac{\partial L}{\partial x_{a,b,c}} = \frac{\partial L}{\partial y_{b,c,a}}$:
# the gradient of $x$ is `grad_output` **moved back**. Moving back is the permutation
# that undoes `dims`: its **inverse**, `inverse` with `inverse[dims[k]] = k` ("dimension
# `dims[k]` of $x$ went to place $k$; bring it back"). NumPy computes it as
# `np.argsort(dims)`: for each dimension $0, 1, 2, \dots$ of $x$, the place in `dims`
# where it sits. (Why sorting gives it: sorting `dims` lists $0, 1, 2, \dots$ in order,
# and `argsort` returns the position each of them was taken from, which is exactly
# where each dimension of $x$ went.) Here `np.argsort((1, 2, 0))` is `(2, 0, 1)`, and it takes shape
# $(3, 4, 2)$ back to $(2, 3, 4)$.
#
# `x.transpose(d0, d1)` is the permutation that swaps two dimensions (`x.T` swaps the
# two of a matrix). A swap is its own inverse: swapping twice gives back the start.
# That is why a classic mistake goes unnoticed on matrices: applying **the same
# permutation again** in backward happens to be right for a swap, and is wrong for
# a cycle such as `(1, 2, 0)`.
#
# **Predict, then run.** `grad_output` has shape $(3, 4, 2)$, the output's shape for
# `dims = (1, 2, 0)`. What shape does `np.transpose(grad_output, dims)` have, and what
# shape does `np.transpose(grad_output, np.argsort(dims))` have?

# %%
dims = (1, 2, 0)
grad_output = np.zeros((3, 4, 2))
print("np.argsort(dims):", tuple(int(d) for d in np.argsort(dims)))
print("shape of np.transpose(grad_output, dims)            :",
      np.transpose(grad_output, dims).shape)
print("shape of np.transpose(grad_output, np.argsort(dims)):",
      np.transpose(grad_output, np.argsort(dims)).shape)

# %% [markdown]
# Applying `dims` again turns one more step of the cycle, $(4, 2, 3)$, instead of going
# back to $(2, 3, 4)$. Here the shape gives it away. On a cube, say $(3, 3, 3)$, the
# wrong gradient has the right shape, and only its values are wrong.
#
# ### Exercise 1 (2 points): `MyPermute.backward`
#
# `forward` is written: it keeps `dims` on `ctx` and moves the dimensions with
# `np.transpose`. Write `backward`: move `grad_output`'s dimensions back, and return one
# gradient per forward input (`None` for `dims`).

# %% tags=["solution:mypermute"]
class MyPermute(mg.Function):
    """y = x with its dimensions reordered: dimension dims[k] of x is dimension k of y"""

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        inverse = np.argsort(ctx.dims)
        return np.transpose(grad_output, inverse), None
        # END SOLUTION


# %% [markdown]
# The check runs `MyPermute` on a $(2, 3, 4)$ input with a 3-cycle, on a cube (where a
# wrong permutation keeps the shape), on a matrix and on a 4-D input with the 4-cycle
# `[1, 2, 3, 0]` (for a 3-cycle, applying `dims` twice happens to be the inverse; for a
# 4-cycle it is not), and compares with minigrad's `x.permute(dims)`. It knows the
# classic mistakes: the functions defined in the test cell are known-wrong backwards
# (`dims` applied again or twice, reversed, a reshape), and when yours gives the same
# numbers as one of them, the message names that mistake.
# `ctx.dims` is whatever the caller passed, a list here and a tuple elsewhere:
# `np.transpose` and `np.argsort` accept both.

# %% tags=["tests:mypermute:2"]
def permutes_again(x, dims, grad_output):
    """A known-wrong backward: the forward permutation applied a second time."""
    return np.transpose(grad_output, dims), None


def reverses_all_dims(x, dims, grad_output):
    """A known-wrong backward: np.transpose without dims reverses every dimension."""
    return np.transpose(grad_output), None


def reverses_dims(x, dims, grad_output):
    """A known-wrong backward: dims read backwards, dims[::-1]."""
    return np.transpose(grad_output, list(dims)[::-1]), None


def permutes_twice(x, dims, grad_output):
    """A known-wrong backward: dims applied twice (also [dims[d] for d in dims])."""
    return np.transpose(np.transpose(grad_output, dims), dims), None


def reshapes_back(x, dims, grad_output):
    """A known-wrong backward: reshape to x's shape instead of moving dimensions back."""
    return grad_output.reshape(x.shape), None


check_function(
    MyPermute, inputs=[[(2, 3, 4), [1, 2, 0]], [(3, 3, 3), [2, 0, 1]], [(2, 5), [1, 0]],
                       [(2, 3, 4, 5), [1, 2, 3, 0]]],
    reference=lambda x, dims: x.permute(dims),
    mistakes={"reshape was used to undo the permutation: reshape keeps the reading order "
              "and does not move dimensions, so the shape is right and the values are "
              "not. Transpose back instead, with np.argsort(dims).": reshapes_back,
              "dims was applied twice (or [dims[d] for d in dims]). There is no matrix "
              "product here: applying dims twice moves nothing back for a swap, happens "
              "to undo a 3-cycle, and is wrong for a 4-cycle such as [1, 2, 3, 0]. Use "
              "the inverse, np.argsort(dims).": permutes_twice,
              "the dims were reversed (dims[::-1]): that is not the inverse permutation. "
              "Use np.argsort(dims).": reverses_dims,
              "the forward permutation was applied again in backward. To move the "
              "gradient back, use the inverse permutation, np.argsort(dims): a swap of two "
              "dimensions is its own inverse, a cycle such as (1, 2, 0) is not.":
              permutes_again,
              "all dimensions were reversed (np.transpose(grad_output) without dims, or "
              ".T): that undoes a permutation of a matrix, not of more dimensions. Use the "
              "inverse permutation, np.argsort(dims).": reverses_all_dims})
### BEGIN HIDDEN TESTS
check_function(
    MyPermute, inputs=[[(3, 2, 2, 4), [3, 0, 2, 1]], [(4, 1, 3), [2, 1, 0]], [(5,), [0]],
                       [(2, 2, 3), [0, 2, 1]]],
    reference=lambda x, dims: x.permute(dims), seed=6)
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-inverse-permute"]
# ### Question (2 points, graded by your teacher)
#
# Why is the backward of `x.permute(dims)` a permutation of `grad_output` by the inverse
# permutation, `np.argsort(dims)`, and why does the mistake of applying `dims` again go
# unnoticed for a matrix transpose (and, for a cycle, on a cube of shape $(3, 3, 3)$)?
# Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: explains that each number moves to exactly one place and is not copied, so
#   its gradient must be moved back to where the number came from (the inverse
#   permutation); AND why the wrong version hides: a swap is its own inverse, and when
#   all sizes are equal a wrong permutation keeps the shape.
# - 1 point: one of the two.
# - 0 points: neither.
#
# A full answer names: (1) $y_{b,c,a} = x_{a,b,c}$: every element of $x$ goes to one
# place of $y$ and none is copied, so $\partial L/\partial x_{a,b,c} = \partial
# L/\partial y_{b,c,a}$, `grad_output` moved back by the permutation that undoes `dims`;
# (2) a transpose swaps two dimensions, and a swap undone is the same swap, so applying
# `dims` again happens to be right there; for a cycle such as $(1, 2, 0)$ it turns one
# step further; (3) on a cube every permutation of the dimensions has the same shape, so
# a wrong one raises nothing and only the values (a check with a random upstream
# gradient, `gradcheck`) show it. Do not accept "transpose `grad_output`" for a general
# `dims`.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-inverse-permute:2"]
# A permutation only moves numbers: each element of $x$ goes to exactly one place of $y$
# and none is copied, so the gradient of each element of $x$ is the gradient of the
# place it was moved to, and backward must move `grad_output` back. Moving back is the
# permutation that undoes `dims`, whose entry for dimension `dims[k]` is `k`, and that
# is `np.argsort(dims)`. For a matrix transpose the permutation is a swap, which is its
# own inverse, so applying `dims` again happens to give the right answer and the mistake
# stays hidden until a cycle like $(1, 2, 0)$ turns one step too far. On a cube every
# arrangement of the dimensions has the same shape $(3, 3, 3)$, so the wrong permutation
# raises no error; only the values are wrong.

# %% [markdown]
# Now `gradcheck`, on the 4-cycle. In minigrad, `x.transpose(d0, d1)`, `x.T` and
# `x.permute(...)` all make the same node, `Permute`, with the order of the dimensions as
# its argument:
#
# *Stuck on `MyPermute`? `from minigrad.course import use_reference; use_reference("mypermute")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x4 = mg.randn(2, 3, 4, 5, dtype=mg.float64, requires_grad=True)
print("gradcheck of MyPermute:", mg.gradcheck(lambda t: MyPermute.apply(t, (1, 2, 3, 0)), [x4]))
x = mg.randn(2, 3, 4, dtype=mg.float64, requires_grad=True)
print("x.transpose(0, 2) makes a", x.transpose(0, 2).grad_fn.name, "node")
print("x.permute(1, 2, 0) makes a", x.permute(1, 2, 0).grad_fn.name, "node")

# %% [markdown]
# ## 3. Slicing and indexing
#
# ### Slices: each number is read at most once
#
# `y = x[1:, ::2]` reads some numbers of `x`, each at most once. Backward puts every
# gradient back where its number was read, and zero where nothing was read:
#
# ```python
# grad = np.zeros(x.shape)
# grad[index] = grad_output
# ```
#
# Here is minigrad's own indexing, with an upstream gradient of $1, 2, 3, 4$ so you can
# see where each one lands:

# %%
x = mg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
y = x[1:, ::2]
print("y = x[1:, ::2] =\n", y.numpy())

v = mg.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]))
(y * v).sum().backward()
print("x.grad =\n", x.grad.numpy())

# %% [markdown]
# ### Integer indices: a number can be read twice
#
# An index can also be an array of integers (NumPy's "advanced indexing"; PyTorch
# takes an integer tensor). `x[idx]` with `idx = [0, 2, 0]` reads row 0, row 2 and
# row 0 **again**:
#
# $$y_k = x_{\text{idx}_k} \quad\Longrightarrow\quad \frac{\partial L}{\partial x_i} =
# \sum_{k\,:\,\text{idx}_k = i} \frac{\partial L}{\partial y_k}.$$
#
# Row 0 is used twice, so it gets the sum of two gradients: the rule "used twice,
# gradients add" from chapter 1. The backward is a **scatter-add**: start from zeros
# and *add* each gradient at its index.
#
# **Predict, then run.** Here is the obvious way to write that in NumPy. Three
# gradients, $1$, $10$ and $100$, go to positions $0$, $2$ and $0$. What will `grad[0]`
# be?

# %%
grad = np.zeros(4)
idx = np.array([0, 2, 0])
g = np.array([1.0, 10.0, 100.0])
grad[idx] += g
print("grad[idx] += g          gives", grad)

grad = np.zeros(4)
np.add.at(grad, idx, g)
print("np.add.at(grad, idx, g) gives", grad)

# %% [markdown]
# `grad[0]` is $100$, not $101$, and NumPy says nothing. `grad[idx] += g` means
# `grad[idx] = grad[idx] + g`: NumPy reads `grad[[0, 2, 0]]` (all zeros), adds `g`, and
# writes $1, 10, 100$ to positions $0, 2, 0$. Position $0$ is written twice and the last
# write wins: the gradient $1$ is lost. `grad[idx] = g` loses it the same way.
#
# `np.add.at(grad, idx, g)` adds one element at a time, so repeated indices
# accumulate: $1 + 100 = 101$. (PyTorch's names for this are `index_add_` and
# `index_put_(..., accumulate=True)`.)
#
# ### Seeing it: an embedding lookup
#
# An embedding table `E` holds one row of numbers per token; a sentence is a list of
# token ids, and its vectors are `E[ids]` (PyTorch's `nn.Embedding` does exactly this).
# Below, token 1 appears twice. The `BackwardStepper` (chapter 4) runs backward one
# node at a time; after three steps it has run the indexing node, and shows the
# gradient that arrived (one row per lookup, weighted $1$, $10$ and $100$ so you can
# tell them apart) and the gradient it sent to `E`.

# %%
E = mg.tensor(np.round(np.random.default_rng(0).standard_normal((4, 3)), 1),
              requires_grad=True, label="E")
ids = mg.tensor(np.array([1, 3, 1]))  # token ids: an int64 tensor
rows = E[ids]
rows.label = "rows"
weights = mg.tensor(np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [100.0, 200.0, 300.0]]),
                    label="weights")
loss = (rows * weights).sum()
loss.label = "loss"

stepper = BackwardStepper(loss)
for _ in range(3):  # Sum, then Mul, then GetItem (the indexing node)
    stepper.step()
stepper

# %% [markdown]
# Read the two small tables under the drawing. The arriving gradient has one row per
# lookup; its first and last rows, $(1, 2, 3)$ and $(100, 200, 300)$, belong to the two
# lookups of token 1. In the gradient sent to `E`, row 1 is their sum,
# $(101, 202, 303)$. Row 3 (token 3, read once) gets $(10, 20, 30)$, and rows 0 and 2
# (never read) get zero.
#
# ### Exercise 2 (3 points): `MyIndex.backward`
#
# `forward` is written: it keeps the input's shape and the index, and reads `x[index]`.
# `index` is a NumPy integer array (or anything NumPy accepts as an index). Write
# `backward`: a gradient of `x`'s shape, zero where nothing was read, with **every**
# gradient of `grad_output` added at its index. Return it and `None` for the index.

# %% tags=["solution:myindex"]
class MyIndex(mg.Function):
    """y = x[index]; backward scatter-adds the gradient (repeated indices accumulate)"""

    @staticmethod
    def forward(ctx, x, index):
        ctx.input_shape = x.shape
        ctx.index = index
        return x[index]

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        grad = np.zeros(ctx.input_shape, dtype=grad_output.dtype)
        np.add.at(grad, ctx.index, grad_output)
        return grad, None
        # END SOLUTION


# %% [markdown]
# The check uses indices with repeats (7 rows read from a matrix of 5, a 2-D index into a
# vector, and columns: `x[:, [0, 3, 0]]`) and one without, and compares with minigrad's
# `x[index]`. A loop over the index (`for k, i in enumerate(index): grad[i] += ...`) is
# right for a 1-D index and not for a 2-D one, where each `grad[i]` is again a fancy write:

# %% tags=["tests:myindex:3"]
def keeps_last_write(x, index, grad_output):
    """A known-wrong backward: grad[index] = grad_output (or +=) keeps one gradient."""
    grad = np.zeros(x.shape)
    grad[index] = grad_output
    return grad, None


def returns_grad_output(x, index, grad_output):
    """A known-wrong backward: grad_output itself, of the output's shape."""
    return grad_output, None


def scatters_into_output_shape(x, index, grad_output):
    """A known-wrong backward: the scatter-add done into zeros of the output's shape."""
    grad = np.zeros(grad_output.shape)
    np.add.at(grad, index, grad_output)
    return grad, None


def loops_over_index(x, index, grad_output):
    """A known-wrong backward: a loop over the first axis of index, grad[i] += ..."""
    grad = np.zeros(x.shape)
    for k, i in enumerate(index):
        grad[i] += grad_output[k]
    return grad, None


check_function(
    MyIndex, inputs=[[(5, 3), np.array([0, 2, 0, 4, 2, 1, 2])], [(6,), np.array([[1, 1], [5, 0]])],
                     [(3, 4), (slice(None), np.array([0, 3, 0]))], [(4, 2), np.array([3, 1])]],
    reference=lambda x, index: x[index],
    mistakes={"backward returned grad_output itself, which has the output's shape (one "
              "row per lookup). The gradient of x has x's shape: start from "
              "np.zeros(x.shape) and add each gradient at its index.": returns_grad_output,
              "a loop over the index wrote grad[i] += ... for each row of it: with a 2-D "
              "index each grad[i] is again a fancy write, and a repeat inside it keeps only "
              "the last write. Use np.add.at(grad, index, grad_output), which handles any "
              "index.": loops_over_index,
              "a repeated index kept only one of its gradients: grad[index] = grad_output "
              "and grad[index] += grad_output write each position once (the last write "
              "wins). Use np.add.at(grad, index, grad_output), which adds every gradient.":
              keeps_last_write,
              "the gradients were scatter-added into zeros of the output's shape "
              "(np.zeros(grad_output.shape) or zeros_like(grad_output)). The gradient of x "
              "has x's shape: start from np.zeros(ctx.input_shape).":
              scatters_into_output_shape})
### BEGIN HIDDEN TESTS
check_function(
    MyIndex, inputs=[[(6, 2), np.array([5, 5, 0, 1, 5])],
                     [(4, 3), (np.array([0, 3, 3]), np.array([2, 2, 1]))],
                     [(2, 3, 4), (slice(None), np.array([[2, 2], [0, 1]]))],
                     [(5,), np.array([4, 0])]],
    reference=lambda x, index: x[index], seed=6)
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-scatter-add"]
# ### Question (3 points, graded by your teacher)
#
# Why must the backward of `x[idx]` with integer indices *add* each gradient at its
# index (`np.add.at`), and why does `grad[idx] += g` give a wrong gradient, without any
# error, when `idx` repeats an index? Use the embedding lookup `E[ids]`, where token 1
# is read twice. Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that a row read $k$ times is used $k$ times, so it gets the sum of
#   the $k$ gradients (for token 1, $(1, 2, 3) + (100, 200, 300)$); that `grad[idx] +=
#   g` reads all the positions first and then writes, so a repeated position is written
#   twice and the last write wins; and that `np.add.at` adds one element at a time, so
#   repeats accumulate (rows never read get zero).
# - 2 points: two of the three.
# - 1 point: only "indices can repeat, so gradients add", with no reason for the failure
#   of `+=`.
# - 0 points: none of them.
#
# A full answer names: (1) $\partial L/\partial x_i = \sum_{k: idx_k = i} \partial
# L/\partial y_k$: a number read several times is used several times, and its gradients
# add (chapter 1's rule), so `E`'s row 1 gets $(101, 202, 303)$; (2) `grad[idx] += g`
# means `grad[idx] = grad[idx] + g`: NumPy reads the (zero) values at all the indices,
# adds `g`, and writes the results back one after another, so for a repeated index only
# the last write survives and the other gradients are lost silently; (3) `np.add.at` is
# unbuffered: it adds each element in turn, so repeats accumulate. Accept a correct
# Python loop for 1-D indices as an alternative to `np.add.at`; do not accept `grad[idx]
# = g`.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-scatter-add:3"]
# When `ids` holds token 1 twice, row 1 of `E` is used twice, and like any number used
# in several places it must get the sum of the gradients of its uses: $(1, 2, 3) + (100,
# 200, 300) = (101, 202, 303)$, while row 3 gets its one gradient and the rows never
# read get zero. `grad[idx] += g` looks like that but is `grad[idx] = grad[idx] + g`:
# NumPy first reads the current values at all the indices (zeros), adds `g`, and then
# writes the results back one by one, so the second write to a repeated index replaces
# the first and that gradient is lost. No error is raised, because every write is legal.
# `np.add.at` does the addition element by element, so repeated indices accumulate as
# the chain rule requires.

# %% [markdown]
# Your `MyIndex` on the embedding table of the picture, with `gradcheck` and against
# minigrad's `E[ids]`, then on a batch of two sentences (a 2-D index, with repeats in
# each sentence):
#
# *Stuck on `MyIndex`? `from minigrad.course import use_reference; use_reference("myindex")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
token_ids = np.array([1, 3, 1])
print("gradcheck:", mg.gradcheck(lambda t: MyIndex.apply(t, token_ids), [E]))
same_as_builtin(lambda t: MyIndex.apply(t, token_ids), lambda t: t[token_ids], E)
batch_ids = np.array([[1, 3, 1], [0, 0, 2]])
print("gradcheck, 2-D index:", mg.gradcheck(lambda t: MyIndex.apply(t, batch_ids), [E]))
same_as_builtin(lambda t: MyIndex.apply(t, batch_ids), lambda t: t[batch_ids], E)

# %% [markdown]
# minigrad's own indexing node, `GetItem` (in `minigrad/ops/indexing.py`), does both:
# when the index is made only of integers and slices (no element can be read twice) it
# writes `grad[index] = grad_output`, which avoids `np.add.at`'s element-by-element
# loop; otherwise it uses `np.add.at`. Both give the same numbers, so no cell here can
# show the difference.
#
# ## 4. `cat` and `stack`
#
# ### `cat`: backward is a split
#
# `mg.cat([a, b, c], dim=1)` (PyTorch's `torch.cat`) joins tensors along an existing
# dimension. With shapes $(2, 2)$, $(2, 3)$ and $(2, 4)$ the result is $(2, 9)$: columns
# $0$ to $1$ are `a`, $2$ to $4$ are `b`, $5$ to $8$ are `c`. Each number is copied
# once, so each input's gradient is its own block of `grad_output` (written $g$):
#
# $$\frac{\partial L}{\partial a} = g_{:,\,0:2}, \qquad
# \frac{\partial L}{\partial b} = g_{:,\,2:5}, \qquad
# \frac{\partial L}{\partial c} = g_{:,\,5:9}.$$
#
# The cut points, $2$ and $5$, are the **running sums** of the sizes $2, 3, 4$ (the
# offset where each input starts), not the sizes themselves:
# `np.cumsum(sizes)[:-1]`. `np.split(g, cut_points, axis=dim)` then cuts `g` into the
# blocks. Mind `axis=`: `np.split` cuts along axis 0 unless told otherwise.

# %%
sizes = [2, 3, 4]
g = np.arange(18.0).reshape(2, 9)
print("cut points np.cumsum(sizes)[:-1]:", np.cumsum(sizes)[:-1])
blocks = np.split(g, np.cumsum(sizes)[:-1], axis=1)
print("blocks cut there               :", [block.shape for block in blocks])
blocks = np.split(g, sizes[:-1], axis=1)
print("blocks cut at the sizes instead:", [block.shape for block in blocks])

# %% [markdown]
# ### Exercise 3 (3 points): `MyCat`
#
# `forward` takes any number of arrays and the dimension as a keyword
# (`MyCat.apply(a, b, c, dim=1)`). Write both methods:
#
# - `forward` joins the arrays with `np.concatenate` and keeps on `ctx` what backward
#   will need (plain attributes are fine: `dim`, and each input's size along it);
# - `backward` cuts `grad_output` into one block per input and returns them as a tuple,
#   one gradient per input, in order. `np.split` returns a **list**, and the engine
#   reads a list as one gradient: return `tuple(np.split(...))`.

# %% tags=["solution:mycat"]
class MyCat(mg.Function):
    """y = the inputs joined along dim; backward splits the gradient into their blocks"""

    @staticmethod
    def forward(ctx, *xs, dim=0):
        # BEGIN SOLUTION
        ctx.dim = dim
        ctx.sizes = [x.shape[dim] for x in xs]
        return np.concatenate(xs, axis=dim)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        cut_points = np.cumsum(ctx.sizes)[:-1]
        return tuple(np.split(grad_output, cut_points, axis=ctx.dim))
        # END SOLUTION


# %% [markdown]
# The check joins along `dim=1` (three inputs of sizes $2, 3, 4$, two 3-D inputs, two
# inputs of the same shape), then along `dim=0` and along `dim=-1`. Where two inputs
# have the same shape, it also passes one tensor in both places (`cat([x, x])`: its
# gradient is the sum of both blocks, which the engine adds up for you); that is the
# fourth case it counts for `dim=1`.

# %% tags=["tests:mycat:3"]
def split_at_sizes(*inputs_and_grad, dim):
    """A known-wrong backward: the sizes used as cut points instead of their running sum."""
    *xs, grad_output = inputs_and_grad
    return tuple(np.split(grad_output, [x.shape[dim] for x in xs][:-1], axis=dim))


def split_along_dim_0(*inputs_and_grad, dim):
    """A known-wrong backward: np.split without axis=, which cuts along dimension 0."""
    if dim == 0:
        return None  # right along dimension 0
    *xs, grad_output = inputs_and_grad
    return tuple(np.split(grad_output, np.cumsum([x.shape[dim] for x in xs])[:-1]))


def split_into_equal_blocks(*inputs_and_grad, dim):
    """A known-wrong backward: np.split(g, n) cuts n blocks of equal size."""
    *xs, grad_output = inputs_and_grad
    return tuple(np.array_split(grad_output, len(xs), axis=dim))


CAT_CASES = {1: [[(2, 2), (2, 3), (2, 4)], [(3, 1, 2), (3, 4, 2)], [(2, 3), (2, 3)]],
             0: [[(1, 3), (4, 3)], [(2, 2, 3), (1, 2, 3), (3, 2, 3)]],
             -1: [[(2, 3, 1), (2, 3, 4)]]}
for dim, cases in CAT_CASES.items():
    check_function(
        MyCat, inputs=cases, kwargs={"dim": dim}, reference=lambda *xs, dim: mg.cat(xs, dim=dim),
        mistakes={"the gradient was split at the wrong offsets: the cut points are the running "
                  "sums of the sizes, np.cumsum(sizes)[:-1] (where each input starts), not "
                  "the sizes themselves.":
                  functools.partial(split_at_sizes, dim=dim),
                  "the gradient was split along the wrong dimension: np.split cuts along axis "
                  "0 unless you pass axis=ctx.dim.":
                  functools.partial(split_along_dim_0, dim=dim),
                  "the gradient was cut into blocks of equal size (np.split(g, n) with a number "
                  "n), but the inputs have different sizes along dim: give the cut points, "
                  "np.cumsum(sizes)[:-1].":
                  functools.partial(split_into_equal_blocks, dim=dim)})
### BEGIN HIDDEN TESTS
for dim, cases in {2: [[(2, 1, 3), (2, 1, 1), (2, 1, 2)]], 0: [[(3,), (1,), (2,)]],
                   -2: [[(2, 4, 3), (2, 1, 3)], [(3, 2), (3, 2)]]}.items():
    check_function(MyCat, inputs=cases, kwargs={"dim": dim}, seed=6,
                   reference=lambda *xs, dim: mg.cat(xs, dim=dim))
### END HIDDEN TESTS

# %% [markdown]
# And `gradcheck`, with an input used twice, `cat([a, b, a])`:
#
# *Stuck on `MyCat`? `from minigrad.course import use_reference; use_reference("mycat")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
a = mg.randn(2, 2, dtype=mg.float64, requires_grad=True)
b = mg.randn(2, 3, dtype=mg.float64, requires_grad=True)
print("gradcheck of MyCat:", mg.gradcheck(lambda p, q: MyCat.apply(p, q, p, dim=1), [a, b]))

# %% [markdown]
# ### `stack` is a `cat` of unsqueezed inputs
#
# `mg.stack([a, b], dim=1)` (PyTorch's `torch.stack`) joins tensors of the *same* shape
# along a **new** dimension: for two $(3, 4)$ tensors the result is $(3, 2, 4)$, and
# `y[:, k, :]` is input $k$. Backward hands each input its slice,
# `np.take(grad_output, k, axis=dim)`:

# %%
class MyStack(mg.Function):
    """y = the inputs stacked along a new dimension dim; backward takes their slices"""

    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        return np.stack(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        count = grad_output.shape[ctx.dim]
        return tuple(np.take(grad_output, k, axis=ctx.dim) for k in range(count))


# %% [markdown]
# Checked like `MyReshape`, stacking two $(3, 4)$ tensors along `dim=1`, then along
# `dim=0` and `dim=-1`:

# %%
a = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
b = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
print("shape:", MyStack.apply(a, b, dim=1).shape)
print("gradcheck:", mg.gradcheck(lambda p, q: MyStack.apply(p, q, dim=1), [a, b]))
same_as_builtin(lambda p, q: MyStack.apply(p, q, dim=1),
                lambda p, q: mg.stack([p, q], dim=1), a, b)
for dim in (0, -1):
    print(f"dim={dim}: gradcheck:",
          mg.gradcheck(lambda p, q: MyStack.apply(p, q, dim=dim), [a, b]), end=", ")
    same_as_builtin(lambda p, q: MyStack.apply(p, q, dim=dim),
                    lambda p, q: mg.stack([p, q], dim=dim), a, b)

# %% [markdown]
# Another way to see it: adding a dimension of size 1 to each input (`unsqueeze`, a
# reshape) and joining them with `cat` gives the same tensor. The chain rule then gives
# the same gradients too: `cat` splits, each `Reshape` reshapes back. Composing
# operations whose backward you trust is often the easiest way to get a new one right.

# %%
same_as_builtin(lambda p, q: mg.cat([p.unsqueeze(1), q.unsqueeze(1)], dim=1),
                lambda p, q: mg.stack([p, q], dim=1), a, b)

# %% [markdown]
# ## 5. `gather`
#
# `mg.gather(input, dim, index)` is PyTorch's `torch.gather`. The result has the
# shape of `index`; along `dim` it picks the position `index` names, elsewhere it stays
# where it is. For 2-D tensors:
#
# $$\text{dim} = 1:\ \ y_{ij} = x_{i,\ \text{index}_{ij}}, \qquad
# \text{dim} = 0:\ \ y_{ij} = x_{\text{index}_{ij},\ j}.$$
#
# With `dim=1`, row $i$ of the result is made of numbers from row $i$ of $x$, at the
# columns that row $i$ of `index` lists. A classifier's loss uses it to pick each
# sample's score for its label: `scores.gather(1, labels[:, None])`.
#
# A column may be listed twice in a row of `index`, so once more the backward is a
# scatter-add (PyTorch's `scatter_add_`), along `dim`:
#
# $$\frac{\partial L}{\partial x_{ic}} = \sum_{j\,:\,\text{index}_{ij} = c}
# \frac{\partial L}{\partial y_{ij}} \qquad (\text{dim} = 1).$$
#
# Here is minigrad's own `gather`: in row 0, column 3 is picked twice; in row 1,
# column 1 is.

# %%
x = mg.tensor(np.arange(8.0).reshape(2, 4), requires_grad=True)
index = mg.tensor(np.array([[3, 0, 3], [1, 1, 2]]))  # an int64 tensor
y = mg.gather(x, 1, index)
print("x =\n", x.numpy())
print("y = gather(x, 1, index) =\n", y.numpy())

v = mg.tensor(np.array([[1.0, 10.0, 100.0], [1.0, 10.0, 100.0]]))
(y * v).sum().backward()
print("x.grad =\n", x.grad.numpy())

# %% [markdown]
# $x_{0,3}$ received $1 + 100$ and $x_{1,1}$ received $1 + 10$.
#
# ### Gather and scatter-add in NumPy
#
# NumPy's `np.take_along_axis(x, index, axis=dim)` is `gather`'s forward (when `index`
# has `x`'s size in the other dimensions). Its partner `np.put_along_axis` **assigns**,
# so repeated indices overwrite each other: the trap of section 3 again.
#
# To add instead, `np.add.at` needs the full position of every element of `index`:
# its own row (and other coordinates), with the coordinate along `dim` replaced by the
# value of `index`. `np.indices(index.shape, sparse=True)` gives each coordinate as an
# array that broadcasts over `index`:

# %%
index = np.array([[3, 0, 3], [1, 1, 2]])
rows, columns = np.indices(index.shape, sparse=True)
print("rows    =", rows.tolist(), "  (the row of each element of index)")
print("columns =", columns.tolist(), "  (its column)")

# for dim = 1 the columns are replaced by the values of index: element (i, j) goes to
# (rows[i], index[i, j]), the place gather read it from
grad = np.zeros((2, 4))
np.add.at(grad, (rows, index), v.numpy())
print("scatter-added gradient =\n", grad)

# %% [markdown]
# For `dim = 0` it is the other way round: the rows are replaced by the values of
# `index`, and the columns stay. And a 3-D `index` has three coordinate arrays.
#
# ### Exercise 4 (3 points): `MyGather.backward`
#
# `forward` is written: `MyGather.apply(x, index, dim)` keeps the input's shape, `dim`
# and the index (saved with `save_for_backward`, since it is an array), and reads with
# `np.take_along_axis`. Write `backward`: the scatter-add of `grad_output` into a
# gradient of the input's shape, for **any** `dim` and any number of dimensions (start
# from the coordinate arrays of `np.indices(index.shape, sparse=True)`, as a list so you
# can put `index` in place of the one at `dim`, then turn it into a **tuple**: like
# `x[...]`, `np.add.at` reads a tuple as one coordinate array per dimension, and a
# list as something else). `index` alone is not enough: it gives only the coordinate
# along `dim`. Return one gradient per forward input: the gradient of `x`, then `None`
# for `index` and for `dim`.
#
# Mind the order of the arguments: `MyGather.apply(x, index, dim)` takes the index
# before `dim`, the other way round from `mg.gather(x, dim, index)`. And the
# `(rows, index)` of the cell above is the position for `dim = 1` only: the check also
# gathers along `dim = 0`.

# %% tags=["solution:mygather"]
class MyGather(mg.Function):
    """y = gather(x, dim, index) (PyTorch's meaning); backward scatter-adds along dim"""

    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.input_shape = x.shape
        ctx.dim = dim
        ctx.save_for_backward(index)
        return np.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        (index,) = ctx.saved_tensors
        grad = np.zeros(ctx.input_shape, dtype=grad_output.dtype)
        where = list(np.indices(index.shape, sparse=True))
        where[ctx.dim] = index
        np.add.at(grad, tuple(where), grad_output)
        return grad, None, None
        # END SOLUTION


# %% [markdown]
# The check gathers along `dim=1` and `dim=0` of matrices and along the middle
# dimension of a 3-D tensor, always with repeated indices, and compares with minigrad's
# `mg.gather`:

# %% tags=["tests:mygather:3"]
def puts_along_axis(x, index, dim, grad_output):
    """A known-wrong backward: np.put_along_axis assigns, so repeats overwrite."""
    grad = np.zeros(x.shape)
    np.put_along_axis(grad, index, grad_output, axis=dim)
    return grad, None, None


def returns_grad_output_gather(x, index, dim, grad_output):
    """A known-wrong backward: grad_output itself, of index's shape."""
    return grad_output, None, None


check_function(
    MyGather,
    inputs=[[(3, 4), np.array([[0, 0, 3, 1, 0], [1, 2, 1, 1, 2], [3, 3, 3, 0, 3]]), 1],
            [(4, 2), np.array([[0, 1], [0, 0], [3, 1]]), 0],
            [(2, 3, 2), np.array([[[2, 0], [2, 2]], [[1, 1], [0, 1]]]), 1]],
    reference=lambda x, index, dim: mg.gather(x, dim, index),
    mistakes={"backward returned grad_output itself, which has index's shape. The "
              "gradient of x has x's shape: start from np.zeros(x.shape) and scatter-add "
              "into it.": returns_grad_output_gather,
              "the gradient of a repeated index was not accumulated: np.put_along_axis "
              "(like grad[...] = ...) writes each position once, the last write wins. "
              "Scatter-ADD instead, with np.add.at and the full position of every "
              "element.": puts_along_axis})
### BEGIN HIDDEN TESTS
check_function(
    MyGather,
    inputs=[[(2, 3, 4), np.array([[[3, 3, 0], [1, 1, 1], [0, 2, 3]],
                                  [[2, 2, 2], [0, 3, 0], [1, 0, 0]]]), 2],
            [(3, 2, 2), np.array([[[2, 2], [0, 1]], [[2, 0], [2, 2]]]), 0],
            [(2, 5), np.array([[4, 4, 1], [0, 3, 3]]), -1]],
    reference=lambda x, index, dim: mg.gather(x, dim, index), seed=6)
### END HIDDEN TESTS

# %% [markdown]
# Here is `MyGather` picking one score per row, at each row's label, as a classifier's
# loss does, checked with `gradcheck` and against `mg.gather`. One label per row never
# repeats a position, so this first check cannot catch a backward that loses repeated
# gradients; the second one gathers along `dim=0` with repeats, and can:
#
# *Stuck on `MyGather`? `from minigrad.course import use_reference; use_reference("mygather")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
labels = np.array([[2], [0], [2]])  # one label per row, as for a classifier's loss
print("gradcheck of MyGather:", mg.gradcheck(lambda t: MyGather.apply(t, labels, 1), [x]))
same_as_builtin(lambda t: MyGather.apply(t, labels, 1), lambda t: mg.gather(t, 1, labels), x)
repeats = np.array([[2, 0, 2, 2], [1, 1, 0, 2]])  # rows read twice in each column
print("gradcheck, dim=0 with repeats:",
      mg.gradcheck(lambda t: MyGather.apply(t, repeats, 0), [x]))
same_as_builtin(lambda t: MyGather.apply(t, repeats, 0), lambda t: mg.gather(t, 0, repeats), x)

# %% [markdown]
# minigrad's `Gather` (in `minigrad/ops/indexing.py`) also accepts an `index` that is
# *smaller* than the input in the other dimensions, as PyTorch does: only the first
# rows or columns are read. It cuts the input to `index`'s size before
# `np.take_along_axis`:

# %%
small = np.array([[1], [3]])  # 2 rows of 1 column, from a (3, 4) input
print("gather(x, 1, small) has shape", mg.gather(x, 1, small).shape)

# %% [markdown]
# ## Summary
#
# - Movement operations do no arithmetic, and their backward **puts each gradient back
#   where its number came from**. A number copied to several places gets the **sum**.
# - `reshape` / `view`: reshape the gradient back to the input's shape.
# - `permute` / `transpose`: apply the **inverse** permutation, `np.argsort(dims)`. A
#   swap is its own inverse, a cycle is not: applying `dims` again is wrong.
# - Indexing: scatter the gradient into zeros of the input's shape. With integer
#   indices a position can be read twice: **add** with `np.add.at`;
#   `grad[idx] = g` and `grad[idx] += g` silently keep only the last gradient.
# - `cat`: split the gradient at the **running sums** of the sizes, along `dim`.
#   `stack` is `cat` of unsqueezed inputs: each input gets its slice.
# - `gather`: scatter-add along `dim` (not `np.put_along_axis`, which overwrites).
# - Check backward passes with a **random** upstream gradient (`gradcheck` does): with
#   all ones, a gradient in the wrong place can look right.
#
# ## Where this lives in minigrad
#
# | operation | PyTorch | minigrad `Function` | file |
# | --- | --- | --- | --- |
# | `x.reshape(...)`, `x.view(...)`, `flatten`, `squeeze`, `unsqueeze` | same names | `Reshape` | `minigrad/ops/movement.py` |
# | `x.permute(...)`, `x.transpose(d0, d1)`, `x.T` | same names | `Permute` | `minigrad/ops/movement.py` |
# | `x[index]` | `x[index]` | `GetItem` | `minigrad/ops/indexing.py` |
# | `mg.cat(tensors, dim)` | `torch.cat` | `Cat` | `minigrad/ops/movement.py` |
# | `mg.stack(tensors, dim)` | `torch.stack` | `Stack` | `minigrad/ops/movement.py` |
# | `mg.gather(input, dim, index)`, `x.gather(dim, index)` | `torch.gather` | `Gather` | `minigrad/ops/indexing.py` |
#
# The `Tensor` methods that create these nodes (`reshape`, `permute`, `__getitem__`,
# ...) and the functions `mg.cat`, `mg.stack` and `mg.gather` are in
# `minigrad/tensor.py`. The same two files hold the other movements: `expand` (backward:
# sum, chapter 2), `repeat`, `pad` (backward: cut the border off), `roll` (roll back),
# `unbind`, `unfold` (overlapping windows: scatter-add again), and `x[index] = value`
# (`SetItem`). Read `Permute.backward` and `GetItem.backward` now: you have written
# both.
