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
# # Chapter 5: Reductions and their gradients
#
# A **reduction** turns many numbers into fewer: a sum, a mean, a maximum, a variance.
# Every loss ends with one (a mean over the batch), and layers use them inside
# (softmax, layer norm, pooling). Their backward passes all do the same thing first:
# the gradient arrives with the *small* shape of the output, and has to be spread back
# over the *large* shape of the input.
#
# In this chapter you write five reductions yourself, as `mg.Function`s, and check each
# one. You will:
#
# 1. see what `dim` and `keepdim` do to shapes;
# 2. write `sum`, and see why its gradient must be broadcast back *along the right
#    dimension*;
# 3. write `mean`, and see that its gradient is **not** "$1/N$ everywhere";
# 4. write `max`, and decide what happens when two elements tie for the maximum;
# 5. write `var` (with its `correction`) and build `std` on it;
# 6. write `logsumexp` so that it does not overflow at $x = 1000$;
# 7. find where minigrad keeps its own versions.
#
# Each piece follows the same steps: the maths (shapes first), your `Function`, then a
# check with `mg.gradcheck` in float64 and against minigrad's built-in operation.
#
# Along the way come seven **exercises** (12 points): a cell where you write code (the
# teacher's copy has the answers between two "SOLUTION" marker comments; in your own
# workspace they are replaced by `raise NotImplementedError("exercise mysum: write your
# code here")`, naming the exercise, and in a copy a teacher hands out by
# `raise NotImplementedError()`), and after
# it a test cell that checks your code. A check that passes prints one line; one that fails says what
# it called, what came back, what was expected, and which classic mistake it looks like.
# The checks come from `minigrad.exercises`.
#
# Stuck on an exercise? In a terminal, in the repository, `minigrad-course hint 5 mysum`
# gives a hint for exercise `mysum` (a nudge first; run it again for the next step), and
# `minigrad-course solution 5 mysum` the reference answer. Each exercise's ID is in its
# stub's message; chapter 0, section 1, lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import numpy as np

import minigrad as mg
from minigrad.exercises import check_array_function, check_function, check_value
from minigrad.exercises.reductions import (LOGSUMEXP_MISTAKES, MAX_MISTAKES, MEAN_MISTAKES,
                                           MEAN_OVER_0_2_MISTAKES, SUM_MISTAKES, VAR_MISTAKES,
                                           VARIANCE_MISTAKES, builtin_var,
                                           check_tie_prediction)
from minigrad.widgets import ContextInspector

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)


def dims_of(dim, ndim):
    """The reduced dimensions as a sorted tuple of non-negative ints (None: all of them)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(d % ndim for d in dim))


def compare_with_builtin(mine, builtin, x):
    """Run `mine` and `builtin` on copies of the array `x`, backward through both with
    the same random upstream gradient v, and say whether values and gradients agree."""
    ours = mg.tensor(x, requires_grad=True)
    theirs = mg.tensor(x, requires_grad=True)
    out_ours, out_theirs = mine(ours), builtin(theirs)
    v = mg.randn(*out_ours.shape, dtype=mg.float64)  # random, never all ones (chapter 1)
    (out_ours * v).sum().backward()
    (out_theirs * v).sum().backward()
    same_values = np.allclose(out_ours.numpy(), out_theirs.numpy())
    same_grads = np.allclose(ours.grad.numpy(), theirs.grad.numpy())
    print(f"values agree: {same_values}, gradients agree: {same_grads}")


# %% [markdown]
# `dims_of` turns the many ways of naming dimensions (`None`, `1`, `-1`, `(0, 2)`) into
# one: a sorted tuple such as `(0, 2)`. `compare_with_builtin` runs your Function and
# minigrad's own operation side by side. Its upstream gradient `v` is random: with
# `.sum()` alone every upstream gradient would be $1$, and a backward that forgets
# `grad_output` would pass (chapter 1 showed this).
#
# ## 1. Reductions and shapes
#
# A reduction takes `dim`, the dimension(s) to reduce over, and `keepdim`. Take $x$ of
# shape $(2, 3, 4)$:
#
# - `dim=1` removes dimension 1: the result has shape $(2, 4)$;
# - `keepdim=True` keeps it with size 1 instead: $(2, 1, 4)$;
# - `dim=(0, 2)` reduces two dimensions at once: $(3,)$;
# - `dim=None` (the default) reduces everything to one number: shape $()$.
#
# NumPy calls them `axis` and `keepdims`; PyTorch and minigrad `dim` and `keepdim`
# (and accept NumPy's names too).

# %%
x = mg.randn(2, 3, 4)
for dim, keepdim in [(1, False), (1, True), ((0, 2), False), (-1, False), (None, False)]:
    shape = x.sum(dim=dim, keepdim=keepdim).shape
    print(f"x.sum(dim={str(dim):6}, keepdim={keepdim!s:5}) has shape {shape}")

# %% [markdown]
# `-1` means the last dimension, as in indexing.
#
# ## 2. Sum: copy the gradient back
#
# Shapes first. Let $x$ have shape $(m, n)$ and $y$ = `x.sum(dim=1)`, shape $(m,)$:
#
# $$y_i = \sum_{j} x_{ij}.$$
#
# Each $x_{ij}$ is used exactly once, by $y_i$, with weight $1$: $\partial y_i /
# \partial x_{ij} = 1$, and $y_k$ does not depend on it for $k \ne i$. By the chain
# rule,
#
# $$\frac{\partial L}{\partial x_{ij}} = \frac{\partial L}{\partial y_i}.$$
#
# So backward receives `grad_output` of shape $(m,)$ and must return shape $(m, n)$:
# row $i$ filled with `grad_output[i]`. Two steps do it:
#
# 1. put the summed dimension back, with size 1: `np.expand_dims(grad_output, dims)`
#    gives shape $(m, 1)$ (with `keepdim=True` it is already there);
# 2. stretch it to the input's shape: `np.broadcast_to(g, x.shape)` gives $(m, n)$.
#
# **Predict, then run.** Is step 1 really needed? NumPy can broadcast a vector of
# shape $(3,)$ to $(3, 3)$ directly. Take $x$ of shape $(3, 3)$, summed over `dim=1`,
# and an upstream gradient `[1., 2., 3.]`, one number per row. Row 0 of the gradient
# should be all 1s, row 1 all 2s, row 2 all 3s. Before you run the cell: which of the
# two lines gives that?

# %%
grad_output = np.array([1.0, 2.0, 3.0])
directly = np.broadcast_to(grad_output, (3, 3))
expanded_first = np.broadcast_to(np.expand_dims(grad_output, 1), (3, 3))
print(f"broadcast directly:\n{directly}")
print(f"expand_dims, then broadcast:\n{expanded_first}")

# %% [markdown]
# Broadcasting lines shapes up **from the right**, so a bare $(3,)$ becomes a row
# $(1, 3)$ and is copied *down the columns*: the wrong way round, and without any error
# (with a non-square $x$ you would at least get one). `expand_dims` says which
# dimension the numbers belong to.
#
# ### Exercise 1 (2 points): `MySum`
#
# Write `forward` and `backward` for `MySum.apply(x, dim=..., keepdim=...)`:
#
# - `forward` gets `x` as a NumPy array. Keep on `ctx` what backward needs (the reduced
#   dimensions `dims_of(dim, x.ndim)`, `keepdim` and `x.shape`, as `ctx.dims`,
#   `ctx.keepdim` and `ctx.input_shape`), and return the sum (`np.sum` takes a tuple
#   `axis` and `keepdims`).
# - `backward` gets `grad_output` with the output's shape and returns the gradient for
#   `x`, with `x`'s shape: the two steps above.
#
# `dim` and `keepdim` are passed by keyword, so `backward` returns one gradient: the one
# for `x`.

# %% tags=["solution:mysum"]
class MySum(mg.Function):
    """y = x summed over dim;  dL/dx = dL/dy copied back along dim"""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        # BEGIN SOLUTION
        ctx.dims = dims_of(dim, x.ndim)
        ctx.keepdim = keepdim
        ctx.input_shape = x.shape
        return np.sum(x, axis=ctx.dims, keepdims=keepdim)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        if not ctx.keepdim:
            grad_output = np.expand_dims(grad_output, ctx.dims)  # step 1: (m,) -> (m, 1)
        return np.broadcast_to(grad_output, ctx.input_shape)    # step 2: (m, 1) -> (m, n)
        # END SOLUTION


# %% [markdown]
# The check runs your `MySum` on a square $x$ (where broadcasting the wrong way gives
# no error), on a non-square one, and with other `dim` and `keepdim` settings, each time
# with a random upstream gradient. `SUM_MISTAKES` (in `minigrad/exercises/reductions.py`,
# read it after you have solved the exercise: it holds the wrong answers *and* the right
# shapes) lists the classic mistakes it can name; the checks of the next exercises have
# such a table too.

# %% tags=["tests:mysum:2"]
check_function(MySum, inputs=[[(3, 3)], [(4, 3)]], kwargs={"dim": 1, "keepdim": False},
               reference=lambda x, dim, keepdim: x.sum(dim, keepdim),
               mistakes=SUM_MISTAKES,
               more=[({"dim": 0, "keepdim": True}, [(2, 3, 4)]),
                     ({"dim": (0, 2), "keepdim": False}, [(2, 3, 4)]),
                     ({"dim": -1, "keepdim": True}, [(2, 3, 4)]),
                     ({"dim": None, "keepdim": False}, [(2, 3, 4)])])
### BEGIN HIDDEN TESTS
check_function(MySum, inputs=[[(5, 2)]], kwargs={"dim": 0, "keepdim": False},
               reference=lambda x, dim, keepdim: x.sum(dim, keepdim), seed=5,
               mistakes=SUM_MISTAKES,
               more=[({"dim": (1, 2), "keepdim": True}, [(3, 2, 4)]),
                     ({"dim": -2, "keepdim": False}, [(2, 5, 3)]),
                     ({"dim": None, "keepdim": True}, [(4, 2)])])
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-expand-dims"]
# ### Question (2 points, graded by your teacher)
#
# The backward of $y$ = `x.sum(dim=1)`, for $x$ of shape $(m, n)$, receives
# `grad_output` of shape $(m,)$. Why must it first put the summed dimension back with
# size 1 (`np.expand_dims`) before broadcasting to $x$'s shape, and why does skipping
# that step raise no error when $x$ is square? Answer in the cell below, in a few
# sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: explains that row $i$ of the gradient must be filled with
#   `grad_output[i]`, that broadcasting lines shapes up from the right so a bare $(m,)$
#   becomes a row and is copied down the columns (the wrong way round), and that for a
#   square $x$ the wrong result has the right shape.
# - 1 point: the right-alignment of broadcasting or the square case, but not both.
# - 0 points: only "the shapes must match".
#
# A full answer names: (1) each $x_{ij}$ is used once, by $y_i$, with weight 1, so
# $\partial L/\partial x_{ij} = \partial L/\partial y_i$: row $i$ gets `grad_output[i]`;
# (2) broadcasting aligns shapes from the right, so $(m,)$ is read as $(1, m)$ and
# `grad_output[j]` lands in column $j$; `expand_dims` to $(m, 1)$ says the numbers
# belong to dimension 0; (3) when $m = n$ the wrong broadcast has the right shape, so
# nothing complains; with $m \ne n$ NumPy would refuse. Accept "the reduced dimension
# must be restored where it was" for (2) if the row/column mix-up is named; do not
# accept "expand_dims is needed for `keepdim=True`" (there it is already there).
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-expand-dims:2"]
# Each $x_{ij}$ enters only $y_i$, with weight 1, so its gradient is $\partial
# L/\partial y_i$: the whole row $i$ must hold `grad_output[i]`. NumPy lines shapes up
# from the right, so a bare $(m,)$ array is treated as a row of shape $(1, m)$ and
# copied down the columns: column $j$ would get `grad_output[j]`, the wrong way round.
# Putting the summed dimension back as $(m, 1)$ says the numbers belong to the rows, and
# then broadcasting copies each along its own row. When $x$ is square, $(m,)$ also fits
# the last dimension, so the wrong broadcast has exactly the right shape and no error is
# raised; only a check with a random upstream gradient shows the wrong values.

# %% [markdown]
# Now the two checks you will run on every Function you write: `mg.gradcheck` in float64
# (finite differences, as in chapter 1) and a comparison with minigrad's own `sum`.
#
# *Stuck on `MySum`? `from minigrad.course import use_reference; use_reference("mysum")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x64 = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
print(f"gradcheck, dim=1         : {mg.gradcheck(lambda t: MySum.apply(t, dim=1), [x64])}")
kept = mg.gradcheck(lambda t: MySum.apply(t, dim=0, keepdim=True), [x64])
print(f"gradcheck, dim=0, keepdim: {kept}")
compare_with_builtin(lambda t: MySum.apply(t, dim=1), lambda t: t.sum(dim=1),
                     x64.numpy())

# %% [markdown]
# Every reduction's backward starts with the same two moves: remember the reduced
# dimensions in `forward`, and put them back in `backward`. Here they are as two small
# helpers (minigrad's own `reduce.py` has the same pair), so the next exercises can
# concentrate on what is new.

# %%
def remember(ctx, x, dim, keepdim):
    """Keep on ctx what every reduction's backward needs; return the reduced dims."""
    ctx.dims = dims_of(dim, x.ndim)
    ctx.keepdim = keepdim
    ctx.input_shape = x.shape
    return ctx.dims


def unreduce(grad_output, ctx):
    """Put the reduced dimensions back with size 1, so the gradient broadcasts along
    the right dimensions (with keepdim=True they are already there)."""
    return grad_output if ctx.keepdim else np.expand_dims(grad_output, ctx.dims)


# %% [markdown]
# ## 3. Mean: the sum, divided by $N$
#
# For $y$ = `x.mean(dim=1)` with $x$ of shape $(m, n)$, each output averages $N = n$
# numbers:
#
# $$y_i = \frac{1}{N}\sum_{j} x_{ij}, \qquad
# \frac{\partial L}{\partial x_{ij}} = \frac{1}{N}\,\frac{\partial L}{\partial y_i}.$$
#
# $N$ is the number of elements that go into **one** output: the product of the sizes of
# the reduced dimensions. It is `x.size` only when you reduce over everything.
#
# **Predict, then run.** "The gradient of a mean is $1/N$ everywhere." Take $x$ of shape
# $(2, 4)$, $y$ = `x.mean(dim=1)` (two numbers) and $L = 3 y_0 - y_1$. What is
# `x.grad`: $1/8$ everywhere? $1/4$ everywhere? Something else?

# %%
x = mg.randn(2, 4, requires_grad=True)
y = x.mean(dim=1)
loss = 3.0 * y[0] - y[1]
loss.backward()
print(f"x.grad =\n{x.grad.numpy()}")

# %% [markdown]
# Row 0 gets $3/4$ and row 1 gets $-1/4$: the upstream gradient of each output
# ($3$ and $-1$), divided by $N = 4$, the row length (not $8$, the size of $x$). "$1/N$
# everywhere" is only what you see when the upstream gradient is all ones, as with
# `y.sum().backward()`: one more reason never to check a backward that way.
#
# ### Exercise 2 (2 points): `MyMean`
#
# `remember` is already called for you. In `forward`, keep $N$ on `ctx` (call it
# `ctx.count`) and return the mean. In `backward`, use `unreduce`, divide by $N$, and
# broadcast to `ctx.input_shape`.

# %% tags=["solution:mymean"]
class MyMean(mg.Function):
    """y = x averaged over dim;  dL/dx = dL/dy / N, copied back along dim"""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        # BEGIN SOLUTION
        ctx.count = int(np.prod([x.shape[d] for d in dims]))
        return np.mean(x, axis=dims, keepdims=keepdim)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        return np.broadcast_to(unreduce(grad_output, ctx) / ctx.count, ctx.input_shape)
        # END SOLUTION


# %% tags=["tests:mymean:2"]
check_function(MyMean, inputs=[[(4, 4)], [(2, 5)]], kwargs={"dim": 1, "keepdim": False},
               reference=lambda x, dim, keepdim: x.mean(dim, keepdim),
               mistakes=MEAN_MISTAKES,
               more=[({"dim": (0, 2), "keepdim": True}, [(3, 2, 4)], MEAN_OVER_0_2_MISTAKES),
                     ({"dim": None, "keepdim": False}, [(2, 3, 4)])])
### BEGIN HIDDEN TESTS
check_function(MyMean, inputs=[[(3, 6)]], kwargs={"dim": 0, "keepdim": False},
               reference=lambda x, dim, keepdim: x.mean(dim, keepdim), seed=5,
               more=[({"dim": -1, "keepdim": True}, [(2, 3, 5)]),
                     ({"dim": (0, 1), "keepdim": False}, [(2, 3, 4)]),
                     ({"dim": None, "keepdim": True}, [(5, 2)])])
### END HIDDEN TESTS

# %% [markdown]
# Your `MyMean`, with `gradcheck` and against minigrad's `mean`.
#
# *Stuck on `MyMean`? `from minigrad.course import use_reference; use_reference("mymean")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x64 = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
print(f"gradcheck, dim=1       : {mg.gradcheck(lambda t: MyMean.apply(t, dim=1), [x64])}")
print(f"gradcheck, all elements: {mg.gradcheck(lambda t: MyMean.apply(t), [x64])}")
compare_with_builtin(lambda t: MyMean.apply(t, dim=(0, 1)), lambda t: t.mean(), x64.numpy())

# %% [markdown]
# ## 4. Max: the gradient goes to the winner
#
# For $y$ = `x.max(dim=1)`, $y_i = \max_j x_{ij}$. Nudge an element that is *not* the
# maximum a little, and $y_i$ does not move: its derivative is $0$. Nudge the maximum,
# and $y_i$ moves with it: derivative $1$. So the whole upstream gradient goes to the
# position of the maximum:
#
# $$\frac{\partial L}{\partial x_{ij}} = \frac{\partial L}{\partial y_i}\,
# [\,x_{ij} = y_i\,].$$
#
# The bracket $[\,P\,]$ (Iverson's) is $1$ when $P$ is true and $0$ when it is false:
# here, $1$ at the maximum of row $i$ and $0$ elsewhere.
#
# **Ties.** If $k$ elements share the maximum, the max has a kink there and no single
# derivative; any split of the upstream gradient that adds up to it is a valid choice,
# and libraries do not all make the same one (PyTorch's own functions differ). Which one
# does minigrad make?
#
# ### Exercise 3 (1 point): predict the gradient of a tie
#
# Take $x$ = `[1., 3., 3., 2.]` and $L = 2 \cdot \max(x)$, so the max's upstream gradient is
# $2$. Predict `x.grad` in minigrad, as a list of four floats, before the next cell shows
# it: write `max_grad_prediction = [...]`. The check says whether your prediction is
# right and, if not, what looks wrong, without showing the answer (grading checks the
# same; the answer is not in the check cell either: the check asks minigrad's own `max`).

# %% tags=["solution:max-prediction"]
# BEGIN SOLUTION
max_grad_prediction = [0.0, 1.0, 1.0, 0.0]
# END SOLUTION

# %% tags=["tests:max-prediction:1"]
check_tie_prediction(max_grad_prediction)

# %%
x = mg.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
(2.0 * x.max()).backward()
print(f"minigrad: x.grad = {x.grad.numpy()}")

# %% [markdown]
# Each of the two 3s gets half of the $2$: minigrad splits the upstream gradient
# **evenly** between ties, each of the $k$ tied elements getting $1/k$ of it. In PyTorch,
# `(2 * x.max()).backward()` and `torch.amax(x, 0)` give the same `[0., 1., 1., 0.]`, while
# `(2 * torch.max(x, dim=0).values).backward()` gives `[0., 2., 0., 0.]`. Neither is wrong
# (both add up to $2$), but they differ: if you compare with PyTorch, compare like with
# like. (`torch.max(x, dim)` also returns the index of a maximum, and sends the whole
# gradient to that one element, as chapter 3's `MyMaxWithIndex` does.)
#
# ### Exercise 4 (2 points): `MyMax`
#
# `forward`: take the maximum over `dims` **with** `keepdims=True` and save it together with
# `x` (`ctx.save_for_backward(x, biggest)`); return it with the reduced dimensions removed
# unless `keepdim` (`np.squeeze(biggest, axis=dims)`). Saving it with `keepdims=True` is
# what lets `x == biggest` compare each row with its own maximum.
#
# `backward`: `winners = (x == biggest)` marks the maxima; divide by the number of winners
# in each reduced slice (each row, for `dim=1`: `winners.sum(axis=ctx.dims, keepdims=True)`) to get each one's share, and
# multiply by the upstream gradient, unreduced.
#
# (minigrad's `x.max(dim)` also returns the indices, as PyTorch's does; yours returns only
# the values.)

# %% tags=["solution:mymax"]
class MyMax(mg.Function):
    """y = max of x over dim;  the gradient goes to the maxima, split evenly between ties"""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        # BEGIN SOLUTION
        biggest = np.max(x, axis=dims, keepdims=True)
        ctx.save_for_backward(x, biggest)
        return biggest if keepdim else np.squeeze(biggest, axis=dims)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, biggest = ctx.saved_tensors
        winners = x == biggest
        share = winners / winners.sum(axis=ctx.dims, keepdims=True)
        return unreduce(grad_output, ctx) * share
        # END SOLUTION


# %% [markdown]
# The check uses a matrix with ties in it (two 3s in row 0, four 2s in row 1, two 0.5s
# in row 3), and a random one.

# %% tags=["tests:mymax:2"]
with_ties = np.array([[1.0, 3.0, 3.0, 0.0],
                      [2.0, 2.0, 2.0, 2.0],
                      [-1.0, 5.0, 0.0, 4.0],
                      [0.5, -2.0, 0.5, 0.0]])


check_function(MyMax, inputs=[[with_ties], [(3, 5)]], kwargs={"dim": 1, "keepdim": False},
               reference=lambda x, dim, keepdim:
                   x.max() if dim is None else x.max(dim, keepdim).values,
               mistakes=MAX_MISTAKES,
               more=[({"dim": 0, "keepdim": True}, [[with_ties], [(2, 3, 4)]]),
                     ({"dim": None, "keepdim": False},
                      [[with_ties], [np.array([[1.0, 5.0], [5.0, 5.0]])]])])
### BEGIN HIDDEN TESTS
more_ties = np.array([[4.0, -1.0, 4.0], [0.0, 0.0, 0.0], [2.0, 7.0, 7.0], [-3.0, -3.0, 1.0],
                      [6.0, 6.0, 6.0]])
check_function(MyMax, inputs=[[more_ties], [(4, 2)]], kwargs={"dim": 0, "keepdim": False},
               reference=lambda x, dim, keepdim:
                   x.max() if dim is None else x.max(dim, keepdim).values, seed=5,
               more=[({"dim": -1, "keepdim": True}, [[more_ties], [(2, 3, 4)]]),
                     ({"dim": None, "keepdim": False}, [[more_ties]])])
### END HIDDEN TESTS

# %% [markdown]
# What did your `MyMax` keep for backward? The `ContextInspector` widget shows a
# Function's context: its input, `needs_input_grad`, the attributes set by `remember`, and
# the two saved arrays. Look at the shape of the second one: $(2, 1)$, the maximum of each
# row with its dimension kept.
#
# *Stuck on `MyMax`? `from minigrad.course import use_reference; use_reference("mymax")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x = mg.tensor([[1.0, 3.0, 3.0, 0.0],
               [2.0, 5.0, 4.0, 5.0]], requires_grad=True)
y = MyMax.apply(x, dim=1)
ContextInspector(y)

# %% [markdown]
# The title names the Function and its node's number (`MyMax #` and a number): nodes are
# numbered in the order they are made, so yours may differ if you ran other cells first.
# Saved array 0 *is* the input (`input 0`): keeping it costs no memory, it is the same
# array. Saved array 1 is new: the two row maxima, 3 and 5, in shape $(2, 1)$.
# Both rows have a tie (two 3s, two 5s): in backward, each of those gets half of its
# row's upstream gradient.
#
# `gradcheck` compares with finite differences, which need a smooth function: at a tie
# the max has a kink, so we gradcheck on random numbers (no ties). The comparison with
# minigrad's `max` uses the matrix with ties of the check, `with_ties`.

# %%
x64 = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
print(f"gradcheck, dim=1: {mg.gradcheck(lambda t: MyMax.apply(t, dim=1), [x64])}")
print(f"gradcheck, all  : {mg.gradcheck(lambda t: MyMax.apply(t), [x64])}")
compare_with_builtin(lambda t: MyMax.apply(t, dim=1), lambda t: t.max(dim=1).values,
                     with_ties)

# %% [markdown]
# ## 5. Variance and standard deviation
#
# Over the $N$ elements that go into one output, with mean $\bar{x} = \frac{1}{N}\sum_j
# x_j$:
#
# $$\operatorname{var}(x) = \frac{1}{N - c}\sum_{j} \left(x_j - \bar{x}\right)^2,
# \qquad \operatorname{std}(x) = \sqrt{\operatorname{var}(x)}.$$
#
# $c$ is the **correction**. With $c = 1$ (Bessel's correction) the variance of a sample
# estimates the variance of the population it came from without bias; $c = 0$ is the
# plain average of the squared deviations. Watch out: the libraries disagree on the
# default. PyTorch and minigrad use `correction=1`; NumPy's `np.var` uses `ddof=0`.

# %%
sample = np.array([1.0, 2.0, 3.0, 6.0])
print(f"np.var(sample)                      = {np.var(sample):.4f}")
print(f"mg.tensor(sample).var()             = {mg.tensor(sample).var().item():.4f}")
print(f"mg.tensor(sample).var(correction=0) = {mg.tensor(sample).var(correction=0).item():.4f}")

# %% [markdown]
# The deviations from the mean are $-2, -1, 0, 3$; their squares add up to $14$. Divided
# by $N = 4$ that is $3.5$; by $N - 1 = 3$, $4.6667$.
#
# ### Exercise 5 (1 point): the variance, in NumPy
#
# Write `variance(x, dim, keepdim, correction)` on plain arrays: subtract the mean over
# `dims` (kept with `keepdims=True`, so it lines up with `x`), square, sum over `dims`,
# divide by $N - c$. Use the `correction` you are given.

# %% tags=["solution:variance"]
def variance(x, dim=None, keepdim=False, correction=1):
    """The variance of x over dim, dividing by N - correction."""
    dims = dims_of(dim, x.ndim)
    # BEGIN SOLUTION
    count = int(np.prod([x.shape[d] for d in dims]))
    centered = x - x.mean(axis=dims, keepdims=True)
    return np.sum(centered**2, axis=dims, keepdims=keepdim) / (count - correction)
    # END SOLUTION


# %% tags=["tests:variance:1"]
matrix = np.random.default_rng(5).standard_normal((3, 5))
check_array_function(
    variance, cases=[(matrix, 1, False, 1), (matrix, 0, True, 0), (matrix, None, False, 1)],
    reference=builtin_var, mistakes=VARIANCE_MISTAKES)
### BEGIN HIDDEN TESTS
tensor_3d = np.random.default_rng(6).standard_normal((2, 3, 4))
check_array_function(
    variance, cases=[(tensor_3d, (0, 2), False, 1), (tensor_3d, -1, True, 0)],
    reference=lambda x, dim, keepdim, correction:
        np.var(x, axis=dims_of(dim, x.ndim), ddof=correction, keepdims=keepdim))
### END HIDDEN TESTS

# %% [markdown]
# **The gradient.** Write $d_j = x_j - \bar{x}$ for the deviations. The variance is
# $\frac{1}{N-c}\sum_j d_j^2$, and $x_k$ enters every $d_j$: directly in its own $d_k$,
# and through the mean $\bar{x}$ in all of them. So
# $\partial d_j / \partial x_k = \delta_{jk} - 1/N$ ($\delta_{jk}$ is $1$ if $j = k$,
# else $0$), and the chain rule sums over the $d_j$:
#
# $$\frac{\partial \operatorname{var}}{\partial x_k}
# = \frac{1}{N-c}\sum_j 2\,d_j\,\frac{\partial d_j}{\partial x_k}
# = \frac{2}{N-c}\sum_j d_j\Big(\delta_{jk} - \frac{1}{N}\Big)
# = \frac{2}{N-c}\Big(d_k - \frac{1}{N}\sum_j d_j\Big)
# = \frac{2\,(x_k - \bar{x})}{N - c},$$
#
# because deviations from the mean always add up to zero: $\sum_j d_j = 0$. The path
# through the mean contributes nothing, and backward only needs the deviations $d$:
#
# $$\frac{\partial L}{\partial x_{k}} = \frac{\partial L}{\partial y}\cdot
# \frac{2\,(x_k - \bar{x})}{N - c}.$$
#
# The $2$ comes from the square, and the $N - c$ is the same denominator as in forward.
#
# ### Exercise 6 (2 points): `MyVar`
#
# `forward`: save the deviations `x - mean` (the mean over `dims`, with `keepdims=True`)
# with `ctx.save_for_backward`, keep $N - c$ on `ctx` (call it `ctx.denominator`), and
# return `variance(x, dim, keepdim, correction)`. `backward`: the formula above, with
# `unreduce` for `grad_output`.
#
# *`forward` uses your `variance` of exercise 5: if it is not done yet,
# `from minigrad.course import use_reference; use_reference("variance")` loads the reference one.
# If your `variance` still has a mistake, the check below says so and tries your `MyVar`
# with the reference `variance` instead: this exercise is judged on its own.*

# %% tags=["solution:myvar"]
class MyVar(mg.Function):
    """y = sum((x - mean)^2) / (N - correction);  dy/dx = 2 (x - mean) / (N - correction)"""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, correction=1):
        dims = remember(ctx, x, dim, keepdim)
        # BEGIN SOLUTION
        count = int(np.prod([x.shape[d] for d in dims]))
        ctx.denominator = count - correction
        ctx.save_for_backward(x - x.mean(axis=dims, keepdims=True))
        return variance(x, dim, keepdim, correction)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        (centered,) = ctx.saved_tensors
        return unreduce(grad_output, ctx) * 2 * centered / ctx.denominator
        # END SOLUTION


# %% tags=["tests:myvar:2"]
check_function(MyVar, inputs=[[(3, 3)], [(4, 6)]],
               kwargs={"dim": 1, "keepdim": False, "correction": 1},
               reference=lambda x, dim, keepdim, correction:
                   x.var(dim, keepdim=keepdim, correction=correction),
               mistakes=VAR_MISTAKES,
               more=[({"dim": 0, "keepdim": True, "correction": 0}, [(5, 4)]),
                     ({"dim": None, "keepdim": False, "correction": 1}, [(5, 4)])],
               uses={"variance": "minigrad.exercises.reductions:reference_variance"})
### BEGIN HIDDEN TESTS
check_function(MyVar, inputs=[[(6, 3)]],
               kwargs={"dim": 0, "keepdim": False, "correction": 1},
               reference=lambda x, dim, keepdim, correction:
                   x.var(dim, keepdim=keepdim, correction=correction), seed=5,
               more=[({"dim": (0, 2), "keepdim": True, "correction": 0}, [(2, 3, 4)]),
                     ({"dim": -1, "keepdim": False, "correction": 2}, [(3, 5)])],
               uses={"variance": "minigrad.exercises.reductions:reference_variance"})
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-var-mean-path"]
# ### Question (2 points, graded by your teacher)
#
# The mean $\bar{x}$ inside the variance depends on every $x_k$, yet `MyVar`'s backward
# is only $2\,(x_k - \bar{x})/(N - c)$ times the upstream gradient, with no term for the
# path through the mean. Why does that path contribute nothing, so that backward needs
# only the saved deviations? Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: says that the path exists ($x_k$ moves $\bar{x}$ and with it every
#   deviation $d_j$, by $-1/N$) and that its total is $-\frac{2}{N(N-c)}\sum_j d_j$,
#   which is zero because deviations from the mean add up to zero (or, equivalently,
#   that $\bar{x}$ minimises $\sum_j (x_j - a)^2$ over $a$, so moving it a little does
#   not change the sum).
# - 1 point: names one of the two: the extra path, or that the deviations sum to zero,
#   without joining them.
# - 0 points: "the mean is a constant" or no reason.
#
# A full answer names: (1) $\partial d_j/\partial x_k = \delta_{jk} - 1/N$: $x_k$
# reaches every deviation through $\bar{x}$; (2) the chain rule sums over $j$, and the
# mean's part is proportional to $\sum_j d_j$; (3) $\sum_j (x_j - \bar{x}) = 0$, so that
# part vanishes and only $2 d_k/(N - c)$ is left. Accept the argument that $a = \bar{x}$
# minimises $\sum_j (x_j - a)^2$, so its derivative in $a$ is zero there; do not accept
# "the mean does not depend on $x$" (it does; its contribution cancels).
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-var-mean-path:2"]
# The path through the mean is there: $x_k$ moves $\bar{x}$ by $1/N$, so it changes
# every deviation $d_j = x_j - \bar{x}$, and $\partial d_j/\partial x_k = \delta_{jk} -
# 1/N$. Summing over $j$ with the chain rule, the direct part gives $2 d_k/(N - c)$ and
# the part through the mean gives $-\frac{2}{N (N - c)} \sum_j d_j$. Deviations from the
# mean always add up to zero, so that second part is exactly zero. (Another way to see
# it: $\bar{x}$ is the point that minimises $\sum_j (x_j - a)^2$, so nudging it does not
# change the sum to first order.) Backward therefore needs only the deviations, which
# forward saves.

# %% [markdown]
# **The standard deviation** needs no Function of its own: it is the square root of the
# variance, and the chain rule does the rest,
#
# $$\frac{\partial \operatorname{std}}{\partial x_k} =
# \frac{1}{2\sqrt{\operatorname{var}}}\cdot\frac{\partial \operatorname{var}}{\partial x_k}.$$
#
# minigrad's `x.std()` is built exactly so, `x.var(...).sqrt()`. Build yours on `MyVar`
# and check it against the built-in `std`, in float64:
#
# *Stuck on `MyVar`? `from minigrad.course import use_reference; use_reference("myvar")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
def my_std(t, dim=None, keepdim=False, correction=1):
    return MyVar.apply(t, dim=dim, keepdim=keepdim, correction=correction).sqrt()


x64 = mg.randn(3, 5, dtype=mg.float64, requires_grad=True)
print(f"gradcheck var, dim=1: {mg.gradcheck(lambda t: MyVar.apply(t, dim=1), [x64])}")
print(f"gradcheck std, dim=0: {mg.gradcheck(lambda t: my_std(t, dim=0, correction=0), [x64])}")
compare_with_builtin(lambda t: my_std(t, dim=1), lambda t: t.std(dim=1), x64.numpy())

# %% [markdown]
# One edge case: if all the elements are equal, the variance is $0$ and
# $\frac{1}{2\sqrt{0}}$ is infinite, so the gradient of `std` there is `nan` (in PyTorch
# too):

# %%
flat = mg.tensor([2.0, 2.0, 2.0], dtype=mg.float64, requires_grad=True)
flat.std().backward()
print(f"std of [2, 2, 2] = {flat.std().item()}, its gradient: {flat.grad.numpy()}")

# %% [markdown]
# Layer norm and batch norm add a small $\varepsilon$ under the square root for exactly
# this reason.
#
# ## 6. Log-sum-exp, without overflow
#
# $$\operatorname{LSE}(x) = \log \sum_j e^{x_j}$$
#
# is a smooth maximum (it is close to $\max_j x_j$ when one element stands out) and the
# heart of softmax and cross-entropy. Written as it reads, it breaks on large numbers:
# $e^{1000}$ does not fit in a float64 (the largest is about $1.8 \cdot 10^{308}$, that is
# $e^{709.8}$), so it becomes `inf`; and $e^{-1000}$ rounds to $0$, whose log is $-\infty$.
# (NumPy also warns about the overflow; the `errstate` line keeps those warnings out of
# the way.)

# %%
def naive_logsumexp(x):
    return np.log(np.sum(np.exp(x)))


with np.errstate(over="ignore", divide="ignore"):
    for values in ([1.0, 2.0, 3.0], [1000.0, 1000.0], [-1000.0, -1000.0]):
        print(f"naive logsumexp({values}) = {naive_logsumexp(np.array(values)):.4f}")

# %% [markdown]
# The right answers are $3.4076$, $1000 + \log 2 = 1000.6931$ and $-1000 + \log 2 =
# -999.3069$. The fix is to take the maximum $M = \max_j x_j$ out first:
#
# $$\log \sum_j e^{x_j} = \log \Big(e^{M} \sum_j e^{x_j - M}\Big)
# = M + \log \sum_j e^{x_j - M}.$$
#
# Now every exponent $x_j - M$ is at most $0$, so nothing overflows, and the largest term
# is exactly $e^0 = 1$, so the sum is at least $1$ and its log is finite.
#
# **The gradient** is the softmax:
#
# $$\frac{\partial \operatorname{LSE}}{\partial x_k} = \frac{e^{x_k}}{\sum_j e^{x_j}}
# = e^{\,x_k - \operatorname{LSE}(x)}.$$
#
# The last form is safe as well: $x_k - \operatorname{LSE}(x) \le 0$. So forward saves
# `x` and its output (with the reduced dimensions kept, so they line up), and backward is
# one line.
#
# ### Exercise 7 (2 points): `MyLogSumExp`
#
# `forward`: the maximum `biggest = np.max(x, axis=dims, keepdims=True)`, then
# `out = biggest + np.log(...)`, summing over `dims` with `keepdims=True`; save `x` and
# `out`; return `out`, squeezed unless `keepdim`. `backward`: `unreduce(grad_output, ctx)`
# times $e^{x - \text{out}}$. The check also runs your Function with inputs scaled up
# to $\pm 1000$.

# %% tags=["solution:mylogsumexp"]
class MyLogSumExp(mg.Function):
    """y = log(sum(exp(x))) over dim, as M + log(sum(exp(x - M))), M the max;  dy/dx = softmax(x)"""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        # BEGIN SOLUTION
        biggest = np.max(x, axis=dims, keepdims=True)
        out = biggest + np.log(np.sum(np.exp(x - biggest), axis=dims, keepdims=True))
        ctx.save_for_backward(x, out)
        return out if keepdim else np.squeeze(out, axis=dims)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, out = ctx.saved_tensors
        return unreduce(grad_output, ctx) * np.exp(x - out)
        # END SOLUTION


# %% tags=["tests:mylogsumexp:2"]
check_function(MyLogSumExp, inputs=[[(3, 3)], [(2, 5)]], kwargs={"dim": 1, "keepdim": False},
               reference=lambda x, dim, keepdim: x.logsumexp(dim, keepdim),
               large_inputs=True, mistakes=LOGSUMEXP_MISTAKES,
               more=[({"dim": 0, "keepdim": True}, [(4, 3)]),
                     ({"dim": None, "keepdim": False}, [(4, 3)])])
### BEGIN HIDDEN TESTS
check_function(MyLogSumExp, inputs=[[(5, 2)]], kwargs={"dim": 0, "keepdim": False},
               reference=lambda x, dim, keepdim: x.logsumexp(dim, keepdim), seed=5,
               large_inputs=True,
               more=[({"dim": -1, "keepdim": True}, [(2, 3, 4)]),
                     ({"dim": (0, 2), "keepdim": False}, [(2, 3, 4)])])
### END HIDDEN TESTS

# %% [markdown]
# Your `MyLogSumExp`, with `gradcheck`, against minigrad's `logsumexp`, and at $\pm 1000$.
#
# *Stuck on `MyLogSumExp`? `from minigrad.course import use_reference; use_reference("mylogsumexp")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x64 = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
print(f"gradcheck, dim=1: {mg.gradcheck(lambda t: MyLogSumExp.apply(t, dim=1), [x64])}")
compare_with_builtin(lambda t: MyLogSumExp.apply(t, dim=1), lambda t: t.logsumexp(dim=1),
                     x64.numpy())

big = mg.tensor([[1000.0, 1000.0], [-1000.0, -1000.0]], dtype=mg.float64)
print(f"MyLogSumExp at +-1000: {MyLogSumExp.apply(big, dim=1).numpy()}")
compare_with_builtin(lambda t: MyLogSumExp.apply(t, dim=1), lambda t: t.logsumexp(dim=1),
                     big.numpy())

# %% [markdown]
# ## Summary
#
# - A reduction's output has the input's shape with the reduced dimensions removed
#   (`keepdim=False`) or kept with size 1 (`keepdim=True`).
# - Its backward receives the gradient in the output's shape and must return the
#   input's: first put the reduced dimensions back with size 1 (`np.expand_dims`), then
#   broadcast. Skipping the first step broadcasts along the wrong dimension, silently
#   when the input is square.
# - `sum` copies the gradient back; `mean` also divides by $N$, the number of elements
#   in **one** output; "$1/N$ everywhere" only holds for an all-ones upstream gradient.
# - `max` sends the gradient to the maximal elements; minigrad splits it evenly between
#   ties, as PyTorch's `x.max()` and `torch.amax` do, while `torch.max(x, dim)` gives it all
#   to the element at the returned index.
# - `var` divides by $N - c$ (`correction`, default $1$ in PyTorch and minigrad, $0$ in
#   NumPy); its gradient is $2(x - \bar{x})/(N - c)$, because the path through the mean
#   adds up to zero. `std` is `var(...).sqrt()`, and the chain rule gives its gradient.
# - `logsumexp` takes the maximum out first so it never overflows; its gradient is the
#   softmax, $e^{x - \operatorname{LSE}(x)}$.
#
# ## Where this lives in minigrad
#
# Open `minigrad/ops/reduce.py`: minigrad's reductions are written as yours are, one
# short `Function` each, with the maths in the docstring.
#
# | yours | minigrad (`minigrad/ops/reduce.py`) | tensor method | PyTorch |
# | --- | --- | --- | --- |
# | `dims_of` | `normalize_dims` | | |
# | `remember`, `unreduce` | `_remember`, `_unreduce` | | |
# | `MySum` | `Sum` | `x.sum(dim, keepdim)` | `torch.sum` |
# | `MyMean` | `Mean` | `x.mean(dim, keepdim)` | `torch.mean` |
# | `MyMax` | `Max` (and `Min`, its mirror) | `x.max()`, `x.max(dim)` | `torch.amax`, `torch.max` |
# | `MyVar` | `Var` | `x.var(dim, correction=1)` | `torch.var` |
# | `my_std` | `Tensor.std` (`minigrad/tensor.py`): `var(...).sqrt()` | `x.std()` | `torch.std` |
# | `MyLogSumExp` | `LogSumExp` | `x.logsumexp(dim, keepdim)` | `torch.logsumexp` |
#
# `std` has no Function of its own in minigrad either: `Tensor.std`, in
# `minigrad/tensor.py`, is `self.var(...).sqrt()`. minigrad's `Max` also returns the
# indices when asked (`x.max(dim)` gives
# `(values, indices)`, as in PyTorch), marking them non-differentiable; chapter 3 shows
# how. The next chapter does the same for the operations that move elements around
# without changing them: reshaping, transposing, indexing.
