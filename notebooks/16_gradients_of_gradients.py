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
# # Chapter 16: Gradients of gradients
#
# Every chapter so far ran backward once: a loss, its gradient, a step. This one
# differentiates the gradient itself. That is what a whole family of programs needs: a
# gradient penalty that keeps a critic's slopes near 1 (WGAN-GP), a physics-informed
# network whose loss contains $du/dx$ of its own output, a Newton step, meta-learning
# (MAML), and PyTorch's own "double backward" of a custom Function. The idea behind all
# of them: **the backward pass is itself a program made of ordinary operations, so the
# engine can record it and differentiate it again.** You will:
#
# 1. compute derivatives the other way round, forward, by carrying a tangent along with
#    every value: dual numbers, `Dual` (exercise 1);
# 2. see what each mode costs: one forward pass per *input*, one backward pass per
#    *output*, and why a scalar loss makes reverse mode win;
# 3. ask backward for a graph (`create_graph=True`), draw it, and differentiate it again;
# 4. write a custom Function that can be differentiated twice, PyTorch's way,
#    `MyHypot` (exercise 2), and check it with `gradcheck` AND `gradgradcheck`;
# 5. multiply a Hessian by a vector without forming the Hessian, `hvp` (exercise 3);
# 6. write WGAN-GP's gradient penalty, `gradient_penalty` (exercise 4), and train a small
#    critic with it.
#
# The four **exercises** (10 points) are cells where you write code (the teacher's copy
# has the answers between two "SOLUTION" marker comments; in the copy handed out to
# students they are replaced by `raise NotImplementedError()`), each followed by a test
# cell that checks your code and, when it is wrong, says which mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 16 hvp` gives a hint for exercise `hvp` (a nudge first; run it
# again for the next step), and `minigrad-course solution 16 hvp` the reference answer.
# Each exercise's ID is in its stub's message; chapter 0, section 1, lists the other
# commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import numpy as np

import minigrad as mg
import minigrad.nn as nn
from minigrad.errors import GradcheckError
from minigrad.exercises.higher_order import (check_double_backward, check_dual,
                                             check_gradient_penalty, check_hvp, dual_example)
from minigrad.widgets import GraphView

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. Forward mode: dual numbers
#
# Backward (reverse mode) starts at the loss and walks the graph from the end. There is
# another way, as old as the first: walk *with* the computation, from the inputs, and
# carry along with every value $a$ its **tangent** $\dot a$, how fast $a$ changes when
# the inputs move in a chosen direction $v$. Each operation computes its value and its
# tangent from those of its operands, by the rules you know:
#
# $$\dot{(a + b)} = \dot a + \dot b, \qquad \dot{(a\,b)} = \dot a\, b + a\, \dot b,
# \qquad \dot{(\sin a)} = \cos(a)\, \dot a, \qquad \dot{(e^a)} = e^a\, \dot a.$$
#
# A neat way to see it: write a number as $a + \dot a\,\varepsilon$ with a new symbol
# $\varepsilon$ whose square is 0 (a **dual number**). Then
# $(a + \dot a \varepsilon)(b + \dot b \varepsilon) = ab + (\dot a b + a \dot b)\varepsilon$,
# the product rule falls out of the algebra, and for any smooth $f$,
# $f(a + \dot a \varepsilon) = f(a) + f'(a)\,\dot a\,\varepsilon$ (Taylor, with every term
# in $\varepsilon^2$ gone). A number $c$ is the dual number $c + 0\varepsilon$: a
# constant does not move.
#
# Start the inputs at $x$ with tangent $v$ and run the function: the tangent that comes
# out is the **directional derivative** $J v$ (the Jacobian times $v$), exact, not a
# finite difference. PyTorch calls it a Jacobian-vector product, `torch.func.jvp`;
# minigrad has it as `mg.func.jvp`.
#
# ### Exercise 1 (3 points): `Dual`
#
# Write the class `Dual(value, tangent)`: it keeps the two as `self.value` and
# `self.tangent` (NumPy arrays, or numbers), and has `+` and `*` with a Dual or a plain
# number on either side (`__add__`, `__radd__`, `__mul__`, `__rmul__`), and the methods
# `sin()` and `exp()` (use `np.sin`, `np.cos`, `np.exp`). Each returns a new `Dual`.

# %% tags=["solution:dual"]
class Dual:
    """A value and its tangent: value + tangent * eps, with eps^2 = 0."""

    def __init__(self, value, tangent):
        self.value = value
        self.tangent = tangent

    def __add__(self, other):
        # BEGIN SOLUTION
        other = other if isinstance(other, Dual) else Dual(other, 0.0)
        return Dual(self.value + other.value, self.tangent + other.tangent)
        # END SOLUTION

    def __radd__(self, other):  # other + self, when other is a number
        # BEGIN SOLUTION
        return self + other
        # END SOLUTION

    def __mul__(self, other):
        # BEGIN SOLUTION
        other = other if isinstance(other, Dual) else Dual(other, 0.0)
        return Dual(self.value * other.value,
                    self.tangent * other.value + self.value * other.tangent)
        # END SOLUTION

    def __rmul__(self, other):  # other * self, when other is a number
        # BEGIN SOLUTION
        return self * other
        # END SOLUTION

    def sin(self):
        # BEGIN SOLUTION
        return Dual(np.sin(self.value), np.cos(self.value) * self.tangent)
        # END SOLUTION

    def exp(self):
        # BEGIN SOLUTION
        return Dual(np.exp(self.value), np.exp(self.value) * self.tangent)
        # END SOLUTION


# %% [markdown]
# The check tries each operation on random values and tangents (a Dual used twice,
# numbers on the left and on the right), then runs one function on Duals,
# $f(x, y) = \sin(xy) + e^x y + 3x^2 + 1$, and compares its tangent with `mg.func.jvp`.

# %% tags=["tests:dual:3"]
check_dual(Dual)
### BEGIN HIDDEN TESTS
check_dual(Dual, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `Dual`? `from minigrad.course import use_reference; use_reference("dual")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# The function the check used is written once, with `+`, `*`, `.sin()` and `.exp()`, so
# it runs on Tensors and on your Duals alike (Python calls whatever `*` the operands
# have: that is all "operator overloading" means):

# %%
x, y = np.array([0.5, -1.0]), np.array([2.0, 0.3])
v_x, v_y = np.array([1.0, 1.0]), np.array([0.0, 0.0])  # move x only
out = dual_example(Dual(x, v_x), Dual(y, v_y))
print("value:  ", out.value)
print("tangent:", out.tangent)
value, tangent = mg.func.jvp(dual_example, (mg.tensor(x), mg.tensor(y)),
                             (mg.tensor(v_x), mg.tensor(v_y)))
print("mg.func.jvp's tangent:", tangent.detach().numpy())

# %% [markdown]
# With the tangent of $x$ set to 1 and that of $y$ to 0, the tangent is
# $\partial f / \partial x = y\cos(xy) + e^x y + 6x$, element by element. (minigrad's
# `mg.func.jvp` gets the same numbers another way: it has no tangent rules, and computes
# $Jv$ with two backward passes, `minigrad/func.py` says how. PyTorch's carries tangents,
# as your `Dual` does.)
#
# ## 2. What each mode costs
#
# One forward pass with dual numbers gives ONE directional derivative: $J v$ for one
# $v$. For the whole gradient of a loss $L(x_1, \dots, x_n)$ you need every
# $\partial L / \partial x_i$: one pass per input, with $v = e_i$ (1 at place $i$, 0
# elsewhere). Here is that, for $L(x) = \sum_i x_i \sin x_i$ with 200 inputs:

# %%
def loss_of(x):
    terms = x * x.sin()
    return Dual(terms.value.sum(), terms.tangent.sum())  # the sum, for a Dual


n = 200
point = np.linspace(-2.0, 2.0, n)
passes, forward_gradient = 0, np.zeros(n)
for i in range(n):
    direction = np.zeros(n)
    direction[i] = 1.0
    forward_gradient[i] = loss_of(Dual(point, direction)).tangent
    passes += 1

leaf = mg.tensor(point, requires_grad=True)
(leaf * leaf.sin()).sum().backward()  # reverse mode: one forward, one backward
print(f"forward mode: {passes} passes; reverse mode: 1 forward + 1 backward pass")
print("the same gradient:", np.allclose(forward_gradient, leaf.grad.numpy()))

# %% [markdown]
# The general rule, for $f: \mathbb{R}^n \to \mathbb{R}^m$ with Jacobian $J$ ($m \times n$):
#
# | mode | one pass gives | passes for all of $J$ |
# | --- | --- | --- |
# | forward (tangents, `jvp`) | $J v$: one column's worth | $n$, one per input |
# | reverse (backward, `vjp`) | $u^\top J$: one row's worth | $m$, one per output |
#
# A training loss has $m = 1$ output and $n$ = millions of parameters: reverse mode gets
# the whole gradient in one backward pass (which costs a small multiple of the forward),
# where forward mode would need millions of passes. That is why every deep learning
# library is built around backward. Forward mode wins the other way round (few inputs,
# many outputs), and it costs no memory for saved activations: it forgets each value
# as soon as the next is computed, where backward must keep them all.

# %% [markdown] tags=["question:why-reverse-mode"]
# ### Question (2 points, graded by your teacher)
#
# Use the table above on two problems. (a) A classifier maps an image of $n = 784$
# pixels to $m = 10$ class scores, and you want the whole Jacobian of the scores with
# respect to the pixels (which pixels move which score). (b) A simulation has 3 input
# parameters and 10,000 outputs, and you want how every output moves with every
# parameter. For each: how many passes does forward mode need, how many does reverse
# mode need, and which would you use? Then say in one sentence why training, with a
# loss of millions of parameters, always uses reverse mode. Answer in the cell below.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: (a) 784 forward passes against 10 backward passes: reverse mode; (b) 3
#   forward passes against 10,000 backward passes: forward mode; and training: a loss
#   is one output ($m = 1$), so one backward pass gives the gradient for all parameters,
#   where forward mode would need one pass per parameter.
# - 1 point: the pass counts right for one of (a), (b), or both choices right without
#   the counts, with or without the training sentence.
# - 0 points: neither.
#
# A full answer names: forward mode needs $n$ passes (one per input, $v = e_i$),
# reverse mode $m$ (one per output, $u = e_j$); picks the smaller; and for training,
# $m = 1$. Accept also noting that forward mode keeps no saved activations (a reason to
# prefer it in (b) besides the count). Do not accept "forward mode is approximate" (it is
# exact, not a finite difference).
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-reverse-mode:2"]
# (a) Forward mode gives one column of the $10 \times 784$ Jacobian per pass, so it
# needs 784 passes; reverse mode gives one row per pass and needs 10. Reverse mode.
# (b) Forward mode needs 3 passes (one per parameter), reverse mode 10,000 (one per
# output): forward mode, which also keeps no saved activations. A training loss is a
# single number ($m = 1$), so one backward pass gives its gradient with respect to all
# the millions of parameters, where forward mode would need one pass per parameter.

# %% [markdown]
# ## 3. The backward pass is a graph
#
# Take $y = x \sin x$. Its derivative is $y' = \sin x + x \cos x$, and its second
# derivative $y'' = 2\cos x - x \sin x$. Ask backward for the first one with
# `mg.autograd.grad`, which returns the gradients instead of adding them to `.grad`:

# %%
x = mg.tensor(1.5, dtype=mg.float64, requires_grad=True, label="x")
y = x * x.sin()
(first,) = mg.autograd.grad(y, x)
print(first, "requires grad:", first.requires_grad)

# %% [markdown]
# A number, with no history: backward computed it with NumPy arrays, so there is
# nothing to differentiate. With `create_graph=True` the engine runs every node's
# backward formula on Tensors, *recording* it, so the gradient comes out as a Tensor
# with a graph of its own (`minigrad/higher_order.py`):

# %%
y = x * x.sin()
(first,) = mg.autograd.grad(y, x, create_graph=True)
print(first)
GraphView(first)

# %% [markdown]
# Read the drawing from the top: the leaf $x$; the forward's `Sin`, because a backward
# formula uses it; and `input 1`, the seed gradient $\partial y / \partial y = 1$ that
# backward starts from. Each dashed box holds the ops that ONE node's backward recorded:
# "backward of Mul" made `grad_output * sin(x)` and `grad_output * x` (one for each
# input of the product), "backward of Sin" made `cos(x)` and multiplied the gradient
# arriving at $\sin x$ by it. The forward's `Mul` is not drawn at all: its backward needs
# its inputs, not its output. And the `Add` at the bottom sums
# the two ways $x$ reaches $y$. An ordinary graph: differentiate it like any other.

# %%
(second,) = mg.autograd.grad(first, x)
value = 1.5
print(f"second derivative: {second.item():.6f}")
print(f"2 cos x - x sin x: {2 * np.cos(value) - value * np.sin(value):.6f}")

# %% [markdown]
# `create_graph=True` also keeps the graph (its `retain_graph` default follows
# `create_graph`, as in PyTorch), since the second pass goes through it again. It works
# the same with `loss.backward(create_graph=True)`: then each `.grad` is a Tensor with
# history. Without it, nothing changes: the fast array path of chapters 1-15.
#
# ## 4. A custom Function, differentiated twice
#
# Chapter 15's `MyHypot` was an `mg.Function`: forward and backward on NumPy arrays.
# Ask for a second derivative through it:

# %%
class ArrayHypot(mg.Function):  # chapter 15's MyHypot
    @staticmethod
    def forward(ctx, x, y):
        r = np.hypot(x, y)
        ctx.save_for_backward(x, y, r)
        return r

    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, grad_output * y / r


a = mg.tensor([3.0, 1.0], dtype=mg.float64, requires_grad=True)
b = mg.tensor([4.0, 2.0], dtype=mg.float64, requires_grad=True)
try:
    mg.autograd.grad(ArrayHypot.apply(a, b).sum(), (a, b), create_graph=True)
except RuntimeError as error:
    print(f"{type(error).__name__}: {error}")

# %% [markdown]
# The engine refuses, and says why, rather than hand you a gradient whose own derivative
# would be silently missing: NumPy arrays have no history. PyTorch's answer is its
# `torch.autograd.Function`, whose forward and backward take and return Tensors:
# minigrad's is `mg.autograd.Function` (`minigrad/autograd_function.py`). A backward
# written with Tensor operations can be recorded. The rules (PyTorch's "double backward
# with custom functions" tutorial):
#
# - compute backward from `grad_output` and `ctx.saved_tensors` with Tensor operations
#   (`*`, `/`, `.sqrt()`, ...), never `.numpy()`;
# - save what backward needs, inputs AND outputs, with `ctx.save_for_backward`: the
#   engine then hands backward the graph's own tensors, whose history leads back to the
#   inputs. An attribute (`ctx.r = r`) or a `.detach()` is a constant to the second pass.
#
# The second derivative of $r = \sqrt{x^2 + y^2}$ is the derivative of backward's
# formula $G\,x / r$: with respect to $x$ it is $G\,(1/r - x^2/r^3)$, and the
# $-x^2/r^3$ term comes from $r$ itself depending on $x$, which only the graph's $r$
# knows.
#
# ### Exercise 2 (3 points): `MyHypot`, differentiable twice
#
# Write `MyHypot`, $r = \sqrt{x^2 + y^2}$ elementwise, as an `mg.autograd.Function`:
# `forward(ctx, x, y)` with Tensor operations, saving what backward needs, and
# `backward(ctx, grad_output)` returning the gradients for `x` and `y`, with Tensor
# operations only.

# %% tags=["solution:hypot_twice"]
class MyHypot(mg.autograd.Function):
    """r = sqrt(x^2 + y^2), elementwise, differentiable twice"""

    @staticmethod
    def forward(ctx, x, y):
        # BEGIN SOLUTION
        r = (x * x + y * y).sqrt()
        ctx.save_for_backward(x, y, r)
        return r
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, grad_output * y / r
        # END SOLUTION


# %% [markdown]
# The check compares values and first derivatives (for a random upstream gradient), then
# takes the gradients with `create_graph=True` and differentiates their weighted sum
# with respect to $x$, $y$ and the upstream gradient itself; last, it runs PyTorch's own
# pair of checks, `gradcheck` and `gradgradcheck`.

# %% tags=["tests:hypot_twice:3"]
check_double_backward(MyHypot)
### BEGIN HIDDEN TESTS
check_double_backward(MyHypot, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyHypot`? `from minigrad.course import use_reference; use_reference("hypot_twice")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# `gradcheck` alone is not enough. Here is a backward whose first derivative is right
# but which uses $r$ as a constant: **predict** what each check says, then run.

# %%
class ConstantR(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = (x * x + y * y).sqrt()
        ctx.save_for_backward(x, y, r)
        return r

    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        r = r.detach()  # the mistake: r is a constant to the second pass
        return grad_output * x / r, grad_output * y / r


inputs = (mg.randn(2, 3, dtype=mg.float64, requires_grad=True),
          mg.randn(2, 3, dtype=mg.float64, requires_grad=True))
print("gradcheck:", mg.autograd.gradcheck(ConstantR.apply, inputs))
try:
    mg.autograd.gradgradcheck(ConstantR.apply, inputs)
except GradcheckError as error:
    print("gradgradcheck:", "\n".join(str(error).splitlines()[:4]))

# %% [markdown]
# `gradgradcheck` differentiates the first derivatives again, with respect to $x$ and $y$
# (its inputs 0 and 1) and to the upstream gradient (its inputs 2 and 3), and compares
# with finite differences of the first derivatives. Inputs 2 and 3 would agree: the
# first derivatives $G\,x/r$ are linear in $G$, and a constant $r$ gets that part
# right. Inputs 0 and 1 fail (the report names the first), by the terms that come from
# $r$ depending on $x$ and $y$, such as $-x^2/r^3$. Run both checks on any Function you
# mean to differentiate twice.
#
# ## 5. Hessian-vector products
#
# The Hessian $H$ of a scalar function $f(x)$ is the matrix of its second derivatives,
# $H_{ij} = \partial^2 f / \partial x_i \partial x_j$: the Jacobian of the gradient.
# Forming it costs one backward pass per row, $n$ passes and $n^2$ numbers: for a
# network of a million parameters, a million passes and $10^{12}$ numbers. But many
# methods only need $H v$ for some vectors $v$ (Newton steps solved by conjugate
# gradients, the sharpness of a minimum, influence functions). And for a constant $v$,
#
# $$H v = \nabla_x \big( \nabla_x f(x) \cdot v \big),$$
#
# because $\partial_j (\sum_i g_i v_i) = \sum_i H_{ij} v_i$ and $H$ is symmetric. Two
# backward passes, whatever $n$: one to get $g = \nabla f$, one through $g \cdot v$.
# (What must the first pass do, for the second to go through $g$? Section 3 showed it.)
#
# ### Exercise 3 (2 points): `hvp`
#
# Write `hvp(f, x, v)`: `f` takes a Tensor and returns a one-element Tensor, `x`
# requires grad, `v` has `x`'s shape; return $H v$, a Tensor of `x`'s shape, without
# forming $H$, with `mg.autograd.grad` (which leaves `x.grad` alone).

# %% tags=["solution:hvp"]
def hvp(f, x, v):
    # BEGIN SOLUTION
    (g,) = mg.autograd.grad(f(x), x, create_graph=True)
    (hv,) = mg.autograd.grad((g * v).sum(), x)
    return hv
    # END SOLUTION


# %% [markdown]
# The check compares with the Hessian of a function whose Hessian it knows, for $x$ of
# 5 and of 40 elements, and counts how many backward passes went through `f`.

# %% tags=["tests:hvp:2"]
check_hvp(hvp)
### BEGIN HIDDEN TESTS
check_hvp(hvp, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `hvp`? `from minigrad.course import use_reference; use_reference("hvp")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Against the Hessian formed by `mg.autograd.functional.hessian` (one pass per row) and
# PyTorch's own `hvp` (`mg.autograd.functional.hvp`), on a small function:

# %%
def f(x):
    return (x * x.sin()).sum() + 0.25 * x.sum() ** 2


x = mg.randn(5, dtype=mg.float64, requires_grad=True)
v = mg.randn(5, dtype=mg.float64)
H = mg.autograd.functional.hessian(f, x)
print("yours:              ", hvp(f, x, v).numpy())
print("H @ v, H formed:    ", (H @ v).numpy())
print("functional.hvp:     ", mg.autograd.functional.hvp(f, x, v)[1].numpy())

# %% [markdown]
# One use: the largest eigenvalue of $H$ (how sharp the minimum is) by power iteration,
# $v \leftarrow Hv / \|Hv\|$, which needs $Hv$ only:

# %%
v = mg.ones(5, dtype=mg.float64)
for step in range(100):
    hv = hvp(f, x, v)
    v = hv / hv.norm()
eigenvalue = (v * hvp(f, x, v)).sum().item()
largest = np.abs(np.linalg.eigvalsh(H.numpy())).max()
print(f"power iteration: {eigenvalue:.4f}; numpy on the formed H: {largest:.4f}")

# %% [markdown]
# ## 6. A gradient penalty
#
# A Wasserstein GAN trains a **critic** $D$ that scores real samples high and generated
# ones low; the theory asks $D$ to be 1-Lipschitz, its slope nowhere above 1. WGAN-GP
# (Gulrajani et al., 2017) enforces it softly, with a penalty on the norm of $D$'s
# gradient with respect to its *input*, at random points between a real sample and a
# fake one:
#
# $$\hat x = \epsilon\, x_{\text{real}} + (1 - \epsilon)\, x_{\text{fake}}, \qquad
# \text{penalty} = \frac1N \sum_{n} \big(\|\nabla_{\hat x} D(\hat x_n)\| - 1\big)^2,$$
#
# one $\epsilon \in [0, 1]$ per sample, one norm per sample (over its features). The
# penalty is added to the critic's loss, and the optimizer needs its gradient with
# respect to the critic's **weights**: the gradient of a function of a gradient. So the
# inner gradient must be taken with `create_graph=True`. (A physics-informed network is
# the same pattern: its loss contains $du/dx$ of the network's output $u$, taken with
# `create_graph=True`, and training differentiates it with respect to the weights.)
#
# ### Exercise 4 (2 points): `gradient_penalty`
#
# Write `gradient_penalty(critic, real, fake, epsilon)`: `real` and `fake` of shape
# $(N, D)$, `epsilon` of shape $(N, 1)$, `critic` a module from $(N, D)$ to $(N, 1)$.
# Build $\hat x$ and make it require grad, take the gradient of the critic's scores
# with respect to it (the gradient of `scores.sum()` gives each sample's own), and
# return the penalty, a one-element Tensor that `backward()` can take to the weights.

# %% tags=["solution:gradient_penalty"]
def gradient_penalty(critic, real, fake, epsilon):
    # BEGIN SOLUTION
    x_hat = (epsilon * real + (1 - epsilon) * fake).requires_grad_(True)
    scores = critic(x_hat)
    (grads,) = mg.autograd.grad(scores.sum(), x_hat, create_graph=True)
    return ((grads.norm(dim=1) - 1) ** 2).mean()
    # END SOLUTION


# %% [markdown]
# The check compares the penalty with the reference for a small critic, then calls
# `backward()` on it and compares the gradients of the critic's weights.

# %% tags=["tests:gradient_penalty:2"]
check_gradient_penalty(gradient_penalty)
### BEGIN HIDDEN TESTS
check_gradient_penalty(gradient_penalty, seed=8)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-create-graph"]
# ### Question (3 points, graded by your teacher)
#
# Why does `gradient_penalty` (and `hvp`) take its inner gradient with
# `create_graph=True`? What happens without it, and why does a backward pass with
# `create_graph=True` cost more time and memory than an ordinary one? Answer in the cell
# below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that an ordinary backward computes with NumPy arrays, so the
#   gradient has no history and the penalty is a constant to `loss.backward()` (the
#   critic's weights get nothing from it); that `create_graph=True` records each node's
#   backward formula as Tensor operations, so the gradient has a graph leading back to
#   the weights (or to $x$) that a second backward can differentiate; and that this
#   recording builds new nodes with their saved tensors and keeps the forward graph
#   (retain_graph follows), hence the cost.
# - 2 points: two of the three.
# - 1 point: one of the three.
# - 0 points: none.
#
# A full answer names: (1) without `create_graph` the gradient is computed on arrays: a
# Tensor with `requires_grad` False, no `grad_fn`; a penalty built from it is a
# constant, its gradient with respect to the weights is zero, and the critic's slopes
# grow without bound; (2) with it, every node's backward runs on Tensors and is
# recorded, so the gradient is a function of the weights and of $x$ with its own graph,
# and the second pass differentiates the gradient ($Hv = \nabla(\nabla f \cdot v)$, the
# penalty's gradient for the weights); (3) recording makes a node per backward operation
# and saves what those need, and the forward graph must be kept for the second pass
# (`retain_graph` defaults to `create_graph`), so both passes hold more memory and do
# more bookkeeping than the plain array path. Do not accept "create_graph makes the
# gradient more precise".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-create-graph:3"]
# The penalty is a function of the critic's gradient with respect to its input, and the
# optimizer needs the derivative of that penalty with respect to the weights: a gradient
# of a gradient. An ordinary backward computes the gradient with NumPy arrays, so it
# comes out with no history, and the penalty built from it is a constant to
# `loss.backward()`: the weights would get nothing from it. With `create_graph=True`
# every node's backward formula runs on Tensors and is recorded, so the gradient has a
# graph of its own leading back to the weights and to $\hat x$, and a second backward
# can go through it (in `hvp`, through $\nabla f \cdot v$). That recording is what costs
# more: each backward operation becomes a node that saves its inputs, and the forward
# graph is kept for the second pass instead of being released.

# %% [markdown]
# *Stuck on `gradient_penalty`? `from minigrad.course import use_reference; use_reference("gradient_penalty")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Train a critic with it: real samples on a circle of radius 2, fake ones (a generator
# that does not learn, here) from a small Gaussian at the centre. The critic's loss is
# WGAN's, $\text{mean}\,D(\text{fake}) - \text{mean}\,D(\text{real})$, plus 10 times
# the penalty. Watch the gradient norms at the $\hat x$ points move to 1:

# %%
def gradient_norms(critic, real, fake, epsilon):
    x_hat = (epsilon * real + (1 - epsilon) * fake).requires_grad_(True)
    (grads,) = mg.autograd.grad(critic(x_hat).sum(), x_hat)
    return grads.norm(dim=1).numpy()


angles = mg.rand(64, 1) * 2 * np.pi
real = mg.cat([angles.cos(), angles.sin()], dim=1) * 2.0
fake = mg.randn(64, 2) * 0.3
critic = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                       nn.Linear(32, 1))
optimizer = mg.optim.Adam(critic.parameters(), lr=0.01)
for step in range(301):
    epsilon = mg.rand(64, 1)
    if step % 100 == 0:
        norms = gradient_norms(critic, real, fake, epsilon)
        print(f"step {step:3}: gradient norms at x_hat: mean {norms.mean():.3f}, "
              f"from {norms.min():.3f} to {norms.max():.3f}")
    penalty = gradient_penalty(critic, real, fake, epsilon)
    loss = critic(fake).mean() - critic(real).mean() + 10.0 * penalty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% [markdown]
# The critic's slopes start small (a freshly initialised network is nearly flat), and the
# two terms of the loss pull against each other: the WGAN term steepens the critic
# between fake and real, the penalty holds the slope at 1. Without `create_graph=True`
# the penalty would be a constant to `loss.backward()` and the slopes would grow
# without bound.
#
# ## Summary
#
# - Forward mode carries a tangent with every value (dual numbers, $\varepsilon^2 = 0$):
#   one pass gives one directional derivative $Jv$. Reverse mode gives one row
#   $u^\top J$ per pass: for a scalar loss, the whole gradient in one backward pass,
#   where forward mode needs one pass per input.
# - `create_graph=True` (on `backward` or `mg.autograd.grad`) records each node's
#   backward formula as ordinary ops: the gradient is a Tensor with history, and a
#   drawing groups each node's backward ("backward of Mul").
# - A custom Function is differentiable twice when its backward uses Tensor operations
#   on `grad_output` and `ctx.saved_tensors` (inputs and outputs saved with
#   `save_for_backward`): no `.numpy()`, no `.detach()`, no ctx attributes. Check it
#   with `gradcheck` AND `gradgradcheck`.
# - $Hv = \nabla(\nabla f \cdot v)$: two backward passes, whatever the size, and no
#   Hessian.
# - A gradient penalty (or a physics-informed loss) is a function of a gradient; the
#   weights get its gradient only through a gradient taken with `create_graph=True`.
#
# ## Where this lives in minigrad
#
# | yours | minigrad | PyTorch |
# | --- | --- | --- |
# | `Dual` | `jvp` and `jacfwd` in `minigrad/func.py` (by two backward passes, not tangents) | `torch.func.jvp`, `torch.autograd.forward_ad` |
# | the backward as a graph | `run_backward` and `backward_group` in `minigrad/higher_order.py`; `grad` in `minigrad/autograd_function.py` | `torch.autograd.grad(create_graph=True)` |
# | `MyHypot` | `Function`, `gradgradcheck` and `once_differentiable` in `minigrad/autograd_function.py`; `NotTwiceDifferentiableError` in `minigrad/higher_order.py` | `torch.autograd.Function`, `torch.autograd.gradgradcheck` |
# | `hvp` | `hvp`, `hessian` in `minigrad/autograd_functional.py`; `hessian` in `minigrad/func.py` | `torch.autograd.functional.hvp`, `torch.func.hessian` |
# | `gradient_penalty` | `grad` in `minigrad/autograd_function.py` | `torch.autograd.grad` |
#
# Open `minigrad/higher_order.py`: its docstring explains how one backward engine serves
# both passes, and `run_backward` is where a node's backward formula is recorded.
#
# This is the last chapter. You have built, and can now read, every part of an autograd
# engine, and seen that its backward pass is a program like any other: PyTorch's
# `torch/autograd/` and `torch/func/` will now read like old friends.
