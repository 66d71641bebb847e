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
# # Chapter 7: Matrix multiplication and the Linear layer
#
# Almost all the arithmetic of a neural network is matrix multiplication: a `Linear`
# layer is one matrix product plus a bias, and an MLP is a few of them with activations
# in between. This chapter derives the backward pass of `a @ b`, builds `Linear` from it,
# first as an `mg.Function` and then as an `nn.Module` with PyTorch's parameters and
# initialisation, and ends with a two-layer network written by hand that gives the same
# numbers as `nn.Sequential`. You will:
#
# 1. derive the gradients of `a @ b` from the **shapes** alone, then check them element
#    by element;
# 2. see why a square matrix hides a missing transpose ("predict, then run");
# 3. write `MyMatMul.backward` (exercise 1);
# 4. see batched matrix products, where a shared matrix's gradient is summed over the
#    batch;
# 5. write `y = x W^T + b` as a Function, `MyLinearFunction` (exercise 2);
# 6. write the layer, `MyLinear`, as an `nn.Module` with `nn.Parameter`s and PyTorch's
#    initialisation (exercise 3), and save and load it with `state_dict`;
# 7. build a two-layer MLP by hand and compare it with `nn.Sequential`.
#
# The three **exercises** (7 points) are cells where you write code (the teacher's copy
# has the answers between two "SOLUTION" marker comments; in your own workspace they are
# replaced by `raise NotImplementedError("exercise mymatmul: write your code here")`,
# naming the exercise, and in a copy a teacher hands out by
# `raise NotImplementedError()`), each followed by a test
# cell that checks your code and, when it is wrong, says which mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository, `minigrad-course hint 7 mymatmul`
# gives a hint for exercise `mymatmul` (a nudge first; run it again for the next step), and
# `minigrad-course solution 7 mymatmul` the reference answer. Each exercise's ID is in its
# stub's message; chapter 0, section 1, lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import math

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.exercises import check_function, check_module
from minigrad.exercises.linear import (MATMUL_NOT_SQUARE_MISTAKES, check_linear_function,
                                       check_linear_init)
from minigrad.widgets import GraphView

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)


def same_as_builtin(mine, builtin, *arrays):
    """Run `mine` and `builtin` on copies of the same arrays, backward through both with
    the same random upstream gradient, and print whether outputs and gradients agree."""
    copies = [[mg.tensor(a, requires_grad=True) for a in arrays] for _ in range(2)]
    outputs = [mine(*copies[0]), builtin(*copies[1])]
    v = mg.tensor(np.random.default_rng(1).standard_normal(outputs[1].shape))
    for output in outputs:
        (output * v).sum().backward()
    same_output = outputs[0].shape == outputs[1].shape and np.allclose(
        outputs[0].numpy(), outputs[1].numpy())
    same_grads = all(np.allclose(a.grad.numpy(), b.grad.numpy()) for a, b in zip(*copies))
    print(f"same output: {same_output}, same gradients: {same_grads}")


# %% [markdown]
# `same_as_builtin` runs your Function and minigrad's own operation side by side, with a
# random upstream gradient `v` (with `.sum()` alone it would be all ones, and a backward
# that forgets `grad_output` would pass, as chapter 1 showed).
#
# ## 1. The gradients of `a @ b`, from the shapes
#
# Let $A$ have shape $(m, n)$ and $B$ shape $(n, k)$. Their product $Z = AB$ has shape
# $(m, k)$:
#
# $$Z_{ij} = \sum_{p} A_{ip} B_{pj}.$$
#
# Backward receives $G = \partial L / \partial Z$, of $Z$'s shape $(m, k)$, and must
# return $\partial L / \partial A$ of shape $(m, n)$ and $\partial L / \partial B$ of
# shape $(n, k)$. Each gradient is linear in $G$ and in the *other* operand (the product
# is linear in each operand), so it is a matrix product of $G$ with $B$ or with $A$,
# possibly transposed. Only one arrangement fits each shape:
#
# $$\underbrace{\frac{\partial L}{\partial A}}_{(m,\,n)} =
# \underbrace{G}_{(m,\,k)}\;\underbrace{B^{\top}}_{(k,\,n)},
# \qquad
# \underbrace{\frac{\partial L}{\partial B}}_{(n,\,k)} =
# \underbrace{A^{\top}}_{(n,\,m)}\;\underbrace{G}_{(m,\,k)}.$$
#
# $G B$ does not even multiply ($k$ against $n$), and $B G$ neither. The shapes are a
# quick way to *find* the formula; the chain rule *proves* it. $A_{ip}$ appears in every
# $Z_{ij}$ of row $i$, with weight $B_{pj}$:
#
# $$\frac{\partial L}{\partial A_{ip}} = \sum_j \frac{\partial L}{\partial Z_{ij}}
# \frac{\partial Z_{ij}}{\partial A_{ip}} = \sum_j G_{ij} B_{pj} = (G B^{\top})_{ip},$$
#
# and in the same way $\partial L / \partial B_{pj} = \sum_i A_{ip} G_{ij} =
# (A^{\top} G)_{pj}$.
#
# Check it on a small example, $A$ of shape $(2, 3)$ and $B$ of shape $(3, 2)$: minigrad's
# gradients after `backward()`, then the two formulas, then one element by hand.

# %%
A = mg.tensor([[1.0, 2.0, 0.0],
               [0.0, 1.0, 3.0]], requires_grad=True)
B = mg.tensor([[1.0, -1.0],
               [2.0, 0.0],
               [0.0, 1.0]], requires_grad=True)
G = np.array([[1.0, 0.0],
              [0.0, 2.0]])              # the upstream gradient, shape (2, 2)
Z = A @ B
(Z * mg.tensor(G)).sum().backward()     # so that dL/dZ = G
print(f"A.grad =\n{A.grad.numpy()}\nG @ B.T =\n{G @ B.detach().numpy().T}")
print(f"B.grad =\n{B.grad.numpy()}\nA.T @ G =\n{A.detach().numpy().T @ G}")

# %% [markdown]
# One element by hand: $\partial L / \partial A_{0,1} = \sum_j G_{0j} B_{1j} = 1 \cdot 2 +
# 0 \cdot 0 = 2$, as printed. And $\partial L / \partial A_{1,1} = G_{1,0}B_{1,0} +
# G_{1,1}B_{1,1} = 0 + 2 \cdot 0 = 0$: $Z_{1,0}$ gets no upstream gradient ($G_{1,0} = 0$),
# and $A_{1,1}$ does not reach $Z_{1,1}$ at all, since $B_{1,1} = 0$.
#
# ## 2. Predict, then run: a missing transpose
#
# Here is a backward that forgot both transposes: `grad_output @ b` and `a @ grad_output`.
# On $3 \times 3$ matrices it runs, and its gradients have the right shapes.
#
# **Predict, then run.** Are its gradients right? (If the shapes are right, is the
# backward right?) And what happens on a $(2, 3) @ (3, 4)$ product?

# %%
class ForgotTheTranspose(mg.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output @ b, a @ grad_output   # both transposes forgotten


square_a = mg.randn(3, 3, dtype=mg.float64, requires_grad=True)
square_b = mg.randn(3, 3, dtype=mg.float64, requires_grad=True)
ForgotTheTranspose.apply(square_a, square_b).sum().backward()
print(f"3x3: gradient shapes {square_a.grad.shape} and {square_b.grad.shape}")
right = mg.gradcheck(ForgotTheTranspose.apply, [square_a, square_b], raise_exception=False)
print(f"3x3: gradcheck says {right}")

# %% [markdown]
# The shapes are right and the numbers are wrong: nothing complained until `gradcheck`
# compared with finite differences. On a product whose matrices are not square, the same
# mistake cannot even run:

# %%
wide_a = mg.randn(2, 3, requires_grad=True)
wide_b = mg.randn(3, 4, requires_grad=True)
try:
    ForgotTheTranspose.apply(wide_a, wide_b).sum().backward()
except ValueError as error:
    print(f"{type(error).__name__}: {error}")

# %% [markdown]
# The error is NumPy's, raised inside the backward by `grad_output @ b`: the $(2, 4)$
# gradient cannot multiply the $(3, 4)$ matrix $b$ (its "operand 1"), since $4 \ne 3$.
#
# So test a matrix Function on shapes where every size differs, such as
# $(2, 3) @ (3, 4)$: a transpose in the wrong place then either fails loudly or gives a
# gradient of the wrong shape. A square matrix lets it through silently. (The checks of
# this chapter use both: square shapes to *name* the mistake, non-square ones to catch
# every one.)
#
# ### Exercise 1 (2 points): `MyMatMul.backward`
#
# `forward` is written: it saves both operands. Write `backward`: return the gradients
# for `a` and for `b`, in that order, from the formulas of section 1. Here `a` and `b` are
# 2-D NumPy arrays; in NumPy, `b.T` is the transpose.

# %% tags=["solution:mymatmul"]
class MyMatMul(mg.Function):
    """z = a @ b;  dL/da = G @ b.T,  dL/db = a.T @ G"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        # BEGIN SOLUTION
        return grad_output @ b.T, a.T @ grad_output
        # END SOLUTION


# %% [markdown]
# The check runs your `MyMatMul` on three products: $(3, 3) @ (3, 3)$ first (there a
# missing transpose runs, and the check can name it), then $(2, 3) @ (3, 4)$ and
# $(4, 2) @ (2, 5)$, where no size repeats. On the square product it also passes the
# same matrix as both operands (`a @ a`, whose gradient is the sum of the two), so it
# reports 4 cases. `MATMUL_NOT_SQUARE_MISTAKES`
# (in `minigrad/exercises/linear.py`; read it once you have solved the exercise) lists the
# mistakes it can name.

# %% tags=["tests:mymatmul:2"]
check_function(MyMatMul, inputs=[[(3, 3), (3, 3)], [(2, 3), (3, 4)], [(4, 2), (2, 5)]],
               reference=lambda a, b: a @ b, mistakes=MATMUL_NOT_SQUARE_MISTAKES)
### BEGIN HIDDEN TESTS
check_function(MyMatMul, inputs=[[(5, 2), (2, 3)], [(1, 4), (4, 1)], [(2, 2), (2, 2)]],
               reference=lambda a, b: a @ b, mistakes=MATMUL_NOT_SQUARE_MISTAKES, seed=7)
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-matmul-transposes"]
# ### Question (2 points, graded by your teacher)
#
# For $Z = AB$ with $A$ of shape $(m, n)$ and $B$ of shape $(n, k)$, why are the
# gradients $G B^\top$ and $A^\top G$ (with $G = \partial L/\partial Z$), and why does a
# backward that forgets both transposes (`grad_output @ b`, `a @ grad_output`) pass
# unnoticed on $3 \times 3$ matrices but not on a $(2, 3) @ (3, 4)$ product? Answer in
# the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: justifies the formula (by the chain rule on $Z_{ij} = \sum_p A_{ip}
#   B_{pj}$, or by the shapes: the only product of $G$ with $B$ that has $A$'s shape)
#   AND explains that on square matrices every arrangement has the right shape, so the
#   wrong one runs, while with all sizes different it cannot even multiply.
# - 1 point: one of the two.
# - 0 points: neither.
#
# A full answer names: (1) $A_{ip}$ appears in every $Z_{ij}$ of row $i$ with weight
# $B_{pj}$, so $\partial L/\partial A_{ip} = \sum_j G_{ij} B_{pj} = (G B^\top)_{ip}$,
# and likewise $\partial L/\partial B_{pj} = (A^\top G)_{pj}$; or: the gradient must
# have $A$'s shape $(m, n)$, and $G B^\top$, $(m, k)(k, n)$, is the only product that
# fits; (2) with $3 \times 3$ matrices $G B$ is also $3 \times 3$: right shapes, wrong
# numbers, no error (only `gradcheck` sees it); (3) with $(2, 3)$ and $(3, 4)$,
# `grad_output @ b` multiplies $(2, 4)$ by $(3, 4)$ and NumPy raises. So test matrix
# code where every size differs. Accept the shape argument alone for (1) if it says the
# shapes leave one choice; do not accept "transpose because it is a matrix".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-matmul-transposes:2"]
# $A_{ip}$ enters every $Z_{ij}$ of row $i$, with weight $B_{pj}$, so the chain rule
# gives $\partial L/\partial A_{ip} = \sum_j G_{ij} B_{pj}$, which is element $(i, p)$
# of $G B^\top$; in the same way $\partial L/\partial B = A^\top G$. The shapes agree:
# $G B^\top$ is $(m, k)(k, n) = (m, n)$, $A$'s shape, and it is the only product of $G$
# and $B$ that fits. On $3 \times 3$ matrices every product of $G$ with $B$ or $A$ is $3
# \times 3$, so the version without transposes runs and gives gradients of the right
# shape with the wrong numbers, which only `gradcheck` notices. On $(2, 3) @ (3, 4)$,
# `grad_output @ b` is $(2, 4)$ times $(3, 4)$, which NumPy refuses, so non-square
# shapes expose the mistake at once.

# %% [markdown]
# Now `gradcheck` in float64, and a comparison with minigrad's own `@`.
#
# *Stuck on `MyMatMul`? `from minigrad.course import use_reference; use_reference("mymatmul")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
a64 = mg.randn(2, 3, dtype=mg.float64, requires_grad=True)
b64 = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
print(f"gradcheck: {mg.gradcheck(MyMatMul.apply, [a64, b64])}")
same_as_builtin(MyMatMul.apply, lambda a, b: a @ b, a64.numpy(), b64.numpy())

# %% [markdown]
# ## 3. Batched matrix products
#
# `a @ b` also takes more than two dimensions: the last two are the matrices, and the
# dimensions before them are a **batch** that broadcasts like an elementwise operation.
# A batch of 4 matrices $(4, 2, 3)$ times one matrix $(3, 5)$ multiplies each of the 4 by
# the same $(3, 5)$:

# %%
batch = mg.randn(4, 2, 3, requires_grad=True)
shared = mg.randn(3, 5, requires_grad=True)
out = batch @ shared
print(f"(4, 2, 3) @ (3, 5) -> {out.shape}")

# %% [markdown]
# For each matrix of the batch the formulas of section 1 hold, with the transpose now of
# the **last two** dimensions: `np.swapaxes(x, -1, -2)` in NumPy, `x.mT` in minigrad and
# PyTorch. (Careful: on an array of more than two dimensions, NumPy's `x.T` reverses *all*
# of them, $(4, 2, 3) \to (3, 2, 4)$.)
#
# `shared` was used by all 4 products, so, as for any value used several times, its
# gradient is the **sum** of the 4 contributions $A_i^{\top} G_i$. That is chapter 2's
# rule again: the batched product broadcast `shared` from $(3, 5)$ to $(4, 3, 5)$, and the
# gradient must be summed back over the broadcast dimension (`unbroadcast`).

# %%
G = mg.randn(*out.shape)
(out * G).sum().backward()
batch_np, G_np = batch.detach().numpy(), G.numpy()
per_matrix = np.swapaxes(batch_np, -1, -2) @ G_np   # (4, 3, 5): one per matrix
print(f"per-matrix gradients: {per_matrix.shape}, summed over the batch: "
      f"{per_matrix.sum(axis=0).shape}")
print(f"shared.grad is their sum: {np.allclose(shared.grad.numpy(), per_matrix.sum(axis=0))}")
print(f"batch.grad is G @ shared.T, matrix by matrix: "
      f"{np.allclose(batch.grad.numpy(), G_np @ shared.detach().numpy().T)}")

# %% [markdown]
# minigrad's `MatMul` computes the $(4, 3, 5)$ product and lets the engine sum it back
# to $(3, 5)$, as it does for every Function whose gradient has the broadcast shape
# (chapter 2). In a `Linear` layer the batch is the rows of $x$ and the shared matrix is
# the weight; the sum over the batch then happens *inside* one matrix product, as the
# next section shows.
#
# ## 4. `Linear` as a Function: $y = x W^{\top} + b$
#
# PyTorch's `nn.Linear(in_features, out_features)` keeps its weight $W$ with shape
# $(\text{out}, \text{in})$, one row per output unit, and its bias $b$ with shape
# $(\text{out},)$. For a batch $x$ of shape $(N, \text{in})$:
#
# $$\underbrace{y}_{(N,\,\text{out})} = \underbrace{x}_{(N,\,\text{in})}\,
# \underbrace{W^{\top}}_{(\text{in},\,\text{out})} + \underbrace{b}_{(\text{out},)}.$$
#
# This is $Z = AB$ with $A = x$ and $B = W^{\top}$, plus $b$ broadcast over the $N$ rows.
# With $G = \partial L / \partial y$ of shape $(N, \text{out})$, section 1 gives
# $\partial L / \partial x = G B^{\top}$ and, for $B = W^{\top}$, $\partial L / \partial
# W^{\top} = A^{\top} G = x^{\top} G$, of shape $(\text{in}, \text{out})$. Element
# $(i, o)$ of $W^{\top}$ *is* element $(o, i)$ of $W$, so the gradient for $W$ is that
# matrix transposed, $(x^{\top} G)^{\top} = G^{\top} x$:
#
# $$\frac{\partial L}{\partial x} = G\,(W^{\top})^{\top} = \underbrace{G}_{(N,\,\text{out})}
# \underbrace{W}_{(\text{out},\,\text{in})},
# \qquad
# \frac{\partial L}{\partial W} = \Big(x^{\top} G\Big)^{\top} =
# \underbrace{G^{\top}}_{(\text{out},\,N)} \underbrace{x}_{(N,\,\text{in})},
# \qquad
# \frac{\partial L}{\partial b} = \sum_{n=1}^{N} G_{n,:}.$$
#
# The weight's gradient has the weight's layout $(\text{out}, \text{in})$ and already sums
# over the batch: $(G^{\top} x)_{oi} = \sum_n G_{no} x_{ni}$. The bias was added to every
# one of the $N$ rows, so its gradient is the sum of the $N$ rows of $G$ (not their
# mean), with the bias's shape $(\text{out},)$. Returning $G$ itself, of shape
# $(N, \text{out})$, would be a mistake that hides: minigrad's engine, like PyTorch's,
# sums a gradient with extra leading dimensions down to the input's shape, so training
# would still work. The check below does not accept it. The sum is the gradient, and
# NumPy code without an engine behind it has nobody to do it.
#
# ### Exercise 2 (2 points): `MyLinearFunction`
#
# Write `forward(ctx, x, weight, bias)` (save what backward needs, return $x W^{\top} + b$)
# and `backward`, which returns three gradients, for `x`, `weight` and `bias`, in that
# order, each with its input's shape. As in exercise 1, `x`, `weight`, `bias` and
# `grad_output` are NumPy arrays; `x` has shape $(N, \text{in})$: two dimensions.

# %% tags=["solution:mylinearfunction"]
class MyLinearFunction(mg.Function):
    """y = x @ W.T + b, W (out, in);  dL/dx = G @ W,  dL/dW = G.T @ x,  dL/db = sum of G's rows"""

    @staticmethod
    def forward(ctx, x, weight, bias):
        # BEGIN SOLUTION
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, weight = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output.sum(axis=0)
        # END SOLUTION


# %% [markdown]
# `check_linear_function` (in `minigrad/exercises/linear.py`) compares your Function with
# minigrad's `F.linear`. It uses a square weight $(4, 4)$ first, so that a layout mistake
# runs and can be named, then $(3, 4)$ and $(7, 2)$. It checks the forward alone first
# (a weight without `.T`, a bias forgotten), then every gradient, each of which must have
# its input's shape: $(\text{out},)$ for the bias.

# %% tags=["tests:mylinearfunction:2"]
check_linear_function(MyLinearFunction,
                      inputs=[[(5, 4), (4, 4), (4,)], [(5, 4), (3, 4), (3,)], [(6, 2), (7, 2), (7,)]])
### BEGIN HIDDEN TESTS
check_linear_function(MyLinearFunction, inputs=[[(3, 5), (2, 5), (2,)], [(1, 3), (4, 3), (4,)]],
                      seed=7)
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-bias-sum"]
# ### Question (2 points, graded by your teacher)
#
# In `MyLinearFunction`, $y = x W^\top + b$ with $x$ of shape $(N, \text{in})$. Why is
# the bias's gradient the sum of the $N$ rows of $G$, not their mean and not $G$ itself?
# And why does the weight's gradient $G^\top x$ need no explicit sum over the batch?
# Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: explains that $b$ is added to every one of the $N$ rows, so its gradient
#   is the sum of $N$ contributions (a mean would divide by $N$ again), with $b$'s shape
#   $(\text{out},)$; AND either that the product $G^\top x$ already sums over $n$, or
#   that returning $G$ only works because the engine sums it to $b$'s shape (a
#   Function's backward must return its input's shape).
# - 1 point: the sum for the bias with its reason, and nothing else; or the other half
#   alone.
# - 0 points: the mean, or $G$ itself, or no reason.
#
# A full answer names: (1) the bias is broadcast over the batch, used once per row, so
# $\partial L/\partial b = \sum_n G_{n,:}$ (chapter 2's rule); any averaging of the loss
# is already inside $G$, so a mean would divide by $N$ twice; (2) $(G^\top x)_{oi} =
# \sum_n G_{no} x_{ni}$: the matrix product adds the contribution of every sample; (3)
# returning $G$ of shape $(N, \text{out})$ would still train, because minigrad's engine
# (like PyTorch's) sums a gradient with extra leading dimensions down to the input's
# shape, but the Function's contract is one gradient of each input's shape, and NumPy
# code without an engine behind it would be wrong. Do not accept "the mean, because the
# loss is a mean".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-bias-sum:2"]
# The bias is added to every row of $x W^\top$, so each $b_o$ is used $N$ times and its
# gradient is the sum of the $N$ contributions $G_{n,o}$, with the bias's shape
# $(\text{out},)$. It is not a mean: if the loss averages over the batch, that $1/N$ is
# already inside $G$, and averaging again would shrink the gradient by $N$. Returning
# $G$ itself would only seem to work, because the engine sums an over-long gradient back
# to the input's shape; a backward has to return each input's own shape. The weight
# needs no extra sum: $(G^\top x)_{oi} = \sum_n G_{no} x_{ni}$, so the matrix product
# itself adds up the contributions of all $N$ samples.

# %% [markdown]
# *Stuck on `MyLinearFunction`? `from minigrad.course import use_reference; use_reference("mylinearfunction")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x64 = mg.randn(5, 4, dtype=mg.float64, requires_grad=True)
w64 = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
bias64 = mg.randn(3, dtype=mg.float64, requires_grad=True)
print(f"gradcheck: {mg.gradcheck(MyLinearFunction.apply, [x64, w64, bias64])}")
same_as_builtin(MyLinearFunction.apply, F.linear, x64.numpy(), w64.numpy(), bias64.numpy())

# %% [markdown]
# One graph node does the whole layer. Built from `@`, `.T` and `+` it would be three
# nodes (a transpose, a product, an addition), each saving its inputs; minigrad's own
# `F.linear` is one Function, like yours.
#
# ## 5. `Linear` as a Module
#
# A layer is a Function plus the **parameters** it owns. In `nn.Module`, an attribute
# that is an `nn.Parameter` (a Tensor with `requires_grad=True`) is *registered* when it
# is assigned: it then appears in `parameters()` (what an optimizer updates) and in
# `state_dict()` (what is saved), under the attribute's name.

# %%
class TwoParameters(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(mg.zeros(2, 3))   # registered, as "weight"
        self.scale = mg.ones(3)                      # a plain Tensor: not registered
        self.extra = [nn.Parameter(mg.zeros(3))]     # in a plain list: not registered


module = TwoParameters()
print(f"parameters: {[name for name, _ in module.named_parameters()]}")
print(f"state_dict keys: {list(module.state_dict())}")

# %% [markdown]
# Only `weight` is registered: a plain Tensor or a Parameter inside a Python list is
# invisible to `parameters()`, so an optimizer would never train it, and `state_dict()`
# would not save it. (`nn.ParameterList` exists for a list of parameters.)
#
# **PyTorch's initialisation.** `nn.Linear` draws its weight with
# `kaiming_uniform_(weight, a=math.sqrt(5))`. Kaiming's rule wants weights of standard
# deviation $\text{gain} / \sqrt{\text{in}}$, and a uniform on $(-\beta, \beta)$ has
# variance $\beta^2 / 3$, so its bound is $\sqrt{3}$ times the standard deviation:
# $\beta = \text{gain} \cdot \sqrt{3 / \text{in}}$, with the gain of a leaky ReLU of slope
# $a$, $\text{gain} = \sqrt{2 / (1 + a^2)}$. With $a = \sqrt{5}$ the gain is
# $\sqrt{2/6} = 1/\sqrt{3}$, so
#
# $$\beta = \frac{1}{\sqrt{3}} \cdot \sqrt{\frac{3}{\text{in}}} = \frac{1}{\sqrt{\text{in}}}.$$
#
# The bias is uniform in the same $(-1/\sqrt{\text{in}}, 1/\sqrt{\text{in}})$. Why
# $1/\sqrt{\text{in}}$: an output $y_o = \sum_i W_{oi} x_i + b_o$ adds up $\text{in}$
# terms, so its variance grows with $\text{in}$; weights of size $1/\sqrt{\text{in}}$
# keep the outputs about as large as the inputs, whatever the layer's width. (Chapter 11
# compares initialisations.) minigrad's `nn.Linear` does exactly this:

# %%
layer = nn.Linear(400, 300)
bound = 1 / math.sqrt(400)
weight = layer.weight.detach().numpy()
print(f"bound 1/sqrt(400) = {bound}")
print(f"weight {weight.shape}: from {weight.min():.4f} to {weight.max():.4f}, "
      f"std {weight.std():.4f} (a uniform's is bound/sqrt(3) = {bound / math.sqrt(3):.4f})")
print(f"bias {tuple(layer.bias.shape)}: from {layer.bias.min().item():.4f} "
      f"to {layer.bias.max().item():.4f}")

# %% [markdown]
# ### Exercise 3 (3 points): `MyLinear`
#
# Write the layer. In `__init__`, create `self.weight` of shape
# $(\text{out}, \text{in})$ and `self.bias` of shape $(\text{out},)$ as `nn.Parameter`s,
# both uniform in $(-1/\sqrt{\text{in}}, 1/\sqrt{\text{in}})$
# (`mg.empty(*shape).uniform_(low, high)` fills a new tensor). In `forward`, apply your
# `MyLinearFunction`.
#
# *`forward` uses your `MyLinearFunction` of exercise 2: if it is not done yet,
# `from minigrad.course import use_reference; use_reference("mylinearfunction")` loads the reference one.
# If your `MyLinearFunction` still has a mistake, the checks of this exercise say so and
# try your `MyLinear` with the reference one instead: this exercise is judged on its own.*

# %% tags=["solution:mylinear"]
class MyLinear(nn.Module):
    """y = x W^T + b, weight (out_features, in_features), as nn.Linear"""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        # BEGIN SOLUTION
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        return MyLinearFunction.apply(x, self.weight, self.bias)
        # END SOLUTION


# %% [markdown]
# Two checks. `check_linear_init` builds a `MyLinear(400, 300)` and measures its
# parameters: names, shapes, registration, and the spread of their values (120,000
# weights show the range clearly); it also names a `forward` that leaves the bias out,
# and one that does not call your `MyLinearFunction` (right numbers from minigrad's own
# ops would pass every value check, but then the backward that runs is not yours).
# `check_module` then gives your layer the weights of an `nn.Linear(4, 3)` (through
# `load_state_dict`, so the names must be PyTorch's) and compares outputs and every
# gradient, in train and in eval mode.

# %% tags=["tests:mylinear:3"]
check_linear_init(MyLinear, function=MyLinearFunction,
                  uses={"MyLinearFunction": "minigrad.exercises.linear:ReferenceLinearFunction"})
check_module(MyLinear, nn.Linear, args=(4, 3), inputs=[[(5, 4)], [(1, 4)]],
             uses={"MyLinearFunction": "minigrad.exercises.linear:ReferenceLinearFunction"})
### BEGIN HIDDEN TESTS
check_linear_init(MyLinear, function=MyLinearFunction, seed=7,
                  uses={"MyLinearFunction": "minigrad.exercises.linear:ReferenceLinearFunction"})
check_module(MyLinear, nn.Linear, args=(3, 5), inputs=[[(2, 3)], [(6, 3)]], seed=7,
             uses={"MyLinearFunction": "minigrad.exercises.linear:ReferenceLinearFunction"})
### END HIDDEN TESTS

# %% [markdown]
# **Saving and loading.** `state_dict()` maps each registered name to its tensor;
# `load_state_dict` copies such a dictionary into a module with the same names and
# shapes. That is how the check above copied `nn.Linear`'s weights into your layer, and
# how a trained network is saved (`mg.save(model.state_dict(), path)`).
#
# *Stuck on `MyLinear`? `from minigrad.course import use_reference; use_reference("mylinear")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
mine = MyLinear(4, 3)
theirs = nn.Linear(4, 3)
print(f"state_dict: {[(k, tuple(v.shape)) for k, v in mine.state_dict().items()]}")
theirs.load_state_dict(mine.state_dict())
x = mg.randn(5, 4)
print(f"same outputs after load_state_dict: {np.allclose(mine(x).numpy(), theirs(x).numpy())}")

# %% [markdown]
# ## 6. A two-layer MLP by hand, and with `nn.Sequential`
#
# A two-layer perceptron is `Linear`, an activation, `Linear`:
# $\hat{y} = \operatorname{relu}(x W_1^{\top} + b_1)\,W_2^{\top} + b_2$. By hand, with your
# Function and four tensors of our own:
#
# *This section uses your `MyLinearFunction`. If exercise 2 is not done yet,
# `from minigrad.course import use_reference; use_reference("mylinearfunction")` in a new
# cell loads the reference one.*

# %%
mg.manual_seed(1)
W1 = mg.randn(8, 4, requires_grad=True)   # (hidden, in)
b1 = mg.randn(8, requires_grad=True)
W2 = mg.randn(2, 8, requires_grad=True)   # (out, hidden)
b2 = mg.randn(2, requires_grad=True)


def mlp_by_hand(x):
    hidden = MyLinearFunction.apply(x, W1, b1).relu()
    return MyLinearFunction.apply(hidden, W2, b2)


x = mg.randn(6, 4)
target = mg.randn(6, 2)
loss_by_hand = ((mlp_by_hand(x) - target) ** 2).mean()
loss_by_hand.backward()
print(f"loss by hand: {loss_by_hand.item():.4f}")

# %% [markdown]
# The same network with modules. `nn.Sequential` names its layers `0`, `1`, `2`, so the
# first layer's weight is `0.weight` in the state dict; load our four tensors into it and
# run the same batch:

# %%
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
print(f"state_dict keys: {list(model.state_dict())}")
model.load_state_dict({"0.weight": W1.detach(), "0.bias": b1.detach(),
                       "2.weight": W2.detach(), "2.bias": b2.detach()})
loss_sequential = F.mse_loss(model(x), target)   # the same mean of squares as above
x.label, target.label = "x", "target"           # how the graph below names them
view = GraphView(loss_sequential, names=model)   # made before backward: it records the gradients
loss_sequential.backward(retain_graph=True)      # keep the graph's saved tensors for the view
print(f"loss with nn.Sequential: {loss_sequential.item():.4f}")
pairs = [(W1, model[0].weight), (b1, model[0].bias), (W2, model[2].weight), (b2, model[2].bias)]
same = all(np.allclose(ours.grad.numpy(), theirs.grad.numpy()) for ours, theirs in pairs)
print(f"same gradients: {same}")

# %% [markdown]
# The same loss and the same four gradients. Here is the graph of the `nn.Sequential`
# version, its nodes grouped by the layer that made them (`names=model` labels the
# parameters by their names in the model; `x` and `target` are named by their `label`).
# The view was made before `backward()`, so it recorded the gradient that flowed along
# every edge (thicker where it is larger), and each parameter shows the norm of its
# `.grad`:

# %%
view.refresh()
view

# %% [markdown]
# Each `Linear` is one node (minigrad's `Linear` Function, as yours is one node), with
# three inputs: the layer's input, its weight and its bias.
#
# ## Summary
#
# - For $Z = AB$ with $A$ $(m, n)$ and $B$ $(n, k)$: $\partial L/\partial A = G B^{\top}$
#   and $\partial L/\partial B = A^{\top} G$, the only products whose shapes fit.
# - A square matrix hides a missing transpose: the shapes are right and the numbers
#   wrong. Test matrix code on shapes where every size differs.
# - A batched product broadcasts the leading dimensions; a matrix shared across the batch
#   gets the sum of its gradients (chapter 2's rule). Transpose the last two dimensions
#   with `x.mT` / `np.swapaxes(x, -1, -2)`, not `x.T`.
# - `Linear` is $y = x W^{\top} + b$ with PyTorch's layout $W$ $(\text{out}, \text{in})$:
#   $\partial L/\partial x = G W$, $\partial L/\partial W = G^{\top} x$ (summed over the
#   batch by the product itself), $\partial L/\partial b = \sum_n G_{n,:}$ (a sum, not a
#   mean).
# - A Module registers the `nn.Parameter`s assigned to its attributes (not plain Tensors,
#   not Parameters in a Python list); `state_dict`/`load_state_dict` save and copy them by
#   name.
# - `nn.Linear` starts its weight and bias uniform in $\pm 1/\sqrt{\text{in}}$
#   (`kaiming_uniform_` with $a = \sqrt{5}$).
#
# ## Where this lives in minigrad
#
# | yours | minigrad | PyTorch |
# | --- | --- | --- |
# | `MyMatMul` | `MatMul` in `minigrad/ops/matmul.py` (also 1-D and batched operands) | `torch.matmul`, `@` |
# | `MyLinearFunction` | `Linear` in `minigrad/ops/matmul.py` (any number of leading dimensions) | `F.linear` |
# | `MyLinear` | `Linear` in `minigrad/nn/linear.py` (and `bias=False`) | `nn.Linear` |
# | `nn.Parameter`, registration, `state_dict` | `minigrad/nn/module.py` | `torch.nn.Module` |
# | `kaiming_uniform_`, `uniform_` | `minigrad/nn/init.py` | `torch.nn.init` |
#
# Open `minigrad/ops/matmul.py`: `MatMul.backward` is the formula of section 1 with
# `np.swapaxes` for batches, and `Linear.backward` flattens the leading dimensions of $x$
# into one batch so that each gradient is one matrix product. The next chapter puts
# activations and losses between and after these layers.
