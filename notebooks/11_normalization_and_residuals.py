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
# # Chapter 11: Normalisation, dropout, initialisation and residual connections
#
# A deep network trains only if the signal keeps a sensible size on its way forward
# (the activations) and on its way back (the gradients). This chapter is about the
# pieces that keep it so: normalisation layers, which rescale the activations at every
# step; the right initial weights, which start the network in that regime; residual
# connections, which give the gradient a path that no layer can shrink; and dropout, which
# regularises by switching units off at random. You will:
#
# 1. write batch norm's forward with PyTorch's exact rules (biased variance to normalise,
#    unbiased for the running variance, momentum 0.1);
# 2. derive its backward, shapes first, down to one compact formula, and write it as a
#    Function, `MyBatchNormFunction` (exercise 1);
# 3. see what changes between train and eval mode ("predict, then run" with a batch of
#    one), and write the layer with its running statistics, `MyBatchNorm1d` (exercise 2);
# 4. write layer norm, `MyLayerNorm`: the same normalisation over the other axis, with no
#    running statistics (exercise 3);
# 5. write inverted dropout, `MyDropout` (exercise 4);
# 6. derive Kaiming's initialisation from the variance of the activations, see 20 layers
#    with a too-small, a Kaiming and a too-large initialisation, and write `kaiming_std`
#    (exercise 5);
# 7. see residual blocks keep the gradient alive in a 20-layer network where a plain
#    network's gradient vanishes (`GradientFlow`).
#
# The five **exercises** (11 points) are cells where you write code (the teacher's copy
# has the answers between two "SOLUTION" marker comments; in the copy handed out to
# students they are replaced by `raise NotImplementedError()`), each followed by a test
# cell that checks your code and, when it is wrong, says which mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 11 my_batchnorm_backward` gives a hint for exercise
# `my_batchnorm_backward` (a nudge first; run it again for the next step), and
# `minigrad-course solution 11 my_batchnorm_backward` the reference answer. Each exercise's ID is in its stub's message; chapter 0, section 1,
# lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import math

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.exercises import check_array_function, check_function, check_module
from minigrad.exercises.normalization import (BATCHNORM1D_MISTAKES, BATCHNORM_MISTAKES,
                                              KAIMING_MISTAKES, LAYERNORM_MISTAKES,
                                              check_dropout, kaiming_reference,
                                              small_variance, with_random_affine)
from minigrad.widgets import GradientFlow

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. Batch norm, forward
#
# `nn.BatchNorm1d(C)` takes a batch $x$ of shape $(N, C)$: $N$ samples of $C$ features.
# It normalises **each feature over the batch**: for feature $c$, with the batch's mean
# and variance (sums over the $N$ rows, shapes $(C,)$),
#
# $$\mu_c = \frac{1}{N}\sum_{n=1}^{N} x_{nc}, \qquad
# \sigma_c^2 = \frac{1}{N}\sum_{n=1}^{N} (x_{nc} - \mu_c)^2, \qquad
# \hat{x}_{nc} = \frac{x_{nc} - \mu_c}{\sqrt{\sigma_c^2 + \varepsilon}}, \qquad
# y_{nc} = \gamma_c\,\hat{x}_{nc} + \beta_c.$$
#
# Each column of $\hat{x}$ has mean 0 and variance (almost) 1, whatever scale the layer
# before produced; then the learned `weight` $\gamma$ $(C,)$ and `bias` $\beta$ $(C,)$
# give the network back any scale and shift it wants. $\varepsilon = 10^{-5}$ keeps the
# division safe for a feature that is constant in the batch. Note the variance divides
# by $N$ (the **biased** estimate, `correction=0`).
#
# Let us check these formulas against `nn.BatchNorm1d` on a batch of 6 samples with 3
# features of very different scales:

# %%
x = mg.randn(6, 3) * mg.tensor([1.0, 10.0, 0.1]) + mg.tensor([5.0, -3.0, 0.0])
bn = nn.BatchNorm1d(3)
y = bn(x)

xs = x.numpy()
mean, var = xs.mean(axis=0), xs.var(axis=0)         # var divides by N (biased)
by_hand = (xs - mean) / np.sqrt(var + bn.eps)       # weight 1, bias 0 at the start
print(f"x: mean per feature {xs.mean(axis=0)}, std {xs.std(axis=0)}")
print(f"y: mean per feature {y.numpy().mean(axis=0)}, std {y.numpy().std(axis=0)}")
print(f"same as by hand: {np.allclose(y.numpy(), by_hand, atol=1e-5)}")

# %% [markdown]
# **Running statistics.** At test time there may be no batch (one image at a time), and
# a prediction should not depend on which other samples share its batch. So in training
# the layer also keeps exponential moving averages of the statistics, in two
# **buffers** (tensors saved in the `state_dict` but not trained): `running_mean`
# (starts at 0) and `running_var` (starts at 1). After each training batch, with
# `momentum` $= 0.1$:
#
# $$\text{running} \leftarrow (1 - \text{momentum})\cdot\text{running} +
# \text{momentum}\cdot\text{batch value}.$$
#
# PyTorch's momentum is the weight of the **new** value (10 %), the opposite of the
# momentum of an optimizer. And the running variance is updated with the **unbiased**
# variance, $\frac{N}{N-1}\sigma^2$, because it estimates the variance of the whole
# population from a sample; the batch itself is normalised with the biased one.
# `num_batches_tracked` counts the training batches. After our one batch:

# %%
n = xs.shape[0]
print(f"running_mean {bn.running_mean.numpy()}  by hand {0.9 * 0 + 0.1 * mean}")
print(f"running_var  {bn.running_var.numpy()}  by hand {0.9 * 1 + 0.1 * var * n / (n - 1)}")
print(f"num_batches_tracked {bn.num_batches_tracked.item()}")

# %% [markdown]
# ## 2. Batch norm, backward
#
# **Shapes first.** $x$, $\hat{x}$, $y$ and the upstream gradient $G = \partial L/\partial y$
# are $(N, C)$; $\mu$, $\sigma^2$, $\gamma$, $\beta$ are $(C,)$. So $\partial L/\partial\gamma$
# and $\partial L/\partial\beta$ are $(C,)$ (sums over the batch), and
# $\partial L/\partial x$ is $(N, C)$. Each feature $c$ is independent of the others, so
# we can work on one column and drop the index $c$.
#
# **The parameters** are easy: $y_n = \gamma\hat{x}_n + \beta$, and $\gamma$, $\beta$ are
# used by every row, so their gradients add up over the batch:
#
# $$\frac{\partial L}{\partial \gamma} = \sum_n G_n \hat{x}_n, \qquad
# \frac{\partial L}{\partial \beta} = \sum_n G_n.$$
#
# **The input** is the interesting part. Write $g_n = G_n\gamma$, the gradient reaching
# $\hat{x}_n$, and $s = 1/\sqrt{\sigma^2 + \varepsilon}$. The trap is that
# $\hat{x}_n = (x_n - \mu)s$ depends on $x_k$ not only directly (when $k = n$) but also
# through $\mu$ and $\sigma^2$, which every $x_k$ moves. With
# $\partial\mu/\partial x_k = 1/N$ and
# $\partial\sigma^2/\partial x_k = \frac{2}{N}(x_k - \mu)$ (the sum of the $(x_n - \mu)$
# is 0, which kills the term through $\mu$ inside $\sigma^2$):
#
# $$\frac{\partial \hat{x}_n}{\partial x_k} = s\Big(\delta_{nk} - \frac{1}{N}\Big)
# - (x_n - \mu)\,\frac{s^3}{2}\cdot\frac{2}{N}(x_k - \mu)
# = \frac{s}{N}\Big(N\delta_{nk} - 1 - \hat{x}_n\hat{x}_k\Big).$$
#
# Summing $g_n\,\partial\hat{x}_n/\partial x_k$ over $n$ gives the compact formula
# (the sums over the batch, each of shape $(C,)$):
#
# $$\boxed{\frac{\partial L}{\partial x_k} = \frac{s}{N}\Big(N g_k - \sum_n g_n -
# \hat{x}_k\sum_n g_n\hat{x}_n\Big)}, \qquad g = G\gamma.$$
#
# Three terms: the direct one, the one through the mean ($-\sum g$), the one through the
# variance ($-\hat{x}_k\sum g\hat{x}$). Treating $\mu$ and $\sigma^2$ as constants keeps
# only the first, $s\,g_k$: the classic mistake. A consequence worth seeing: the gradient
# for $x$ sums to zero over the batch (shifting every $x_n$ by the same amount changes
# nothing after normalisation, so the loss cannot care).
#
# ### Exercise 1 (3 points): `MyBatchNormFunction`
#
# Write `forward(ctx, x, weight, bias)` for $x$ of shape $(N, C)$ (statistics over axis 0,
# the biased variance, `EPS` below; save what backward needs) and `backward`, which
# returns the gradients for `x`, `weight` and `bias`, in that order.

# %%
EPS = 1e-5

# %% tags=["solution:my_batchnorm_backward"]
class MyBatchNormFunction(mg.Function):
    """y = xhat * weight + bias, xhat = (x - mean) / sqrt(var + EPS) over the batch (axis 0)"""

    @staticmethod
    def forward(ctx, x, weight, bias):
        # BEGIN SOLUTION
        mean = x.mean(axis=0)
        var = x.var(axis=0)
        inv_std = 1 / np.sqrt(var + EPS)
        xhat = (x - mean) * inv_std
        ctx.save_for_backward(xhat, inv_std, weight)
        return xhat * weight + bias
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        xhat, inv_std, weight = ctx.saved_tensors
        n = grad_output.shape[0]
        g = grad_output * weight
        grad_x = inv_std / n * (n * g - g.sum(axis=0) - xhat * (g * xhat).sum(axis=0))
        return grad_x, (grad_output * xhat).sum(axis=0), grad_output.sum(axis=0)
        # END SOLUTION


# %% [markdown]
# The check compares with minigrad's `F.batch_norm` in training mode (batch statistics)
# on two shapes, then on a batch of small variance (about $10^{-4}$, where $\epsilon$
# changes the output by 5%), with a random upstream gradient, and names the usual
# mistakes.

# %% tags=["tests:my_batchnorm_backward:3"]
check_function(MyBatchNormFunction,
               inputs=[[small_variance((6, 3)), (3,), (3,)], [(8, 3), (3,), (3,)],
                       [(5, 4), (4,), (4,)]],
               reference=lambda x, weight, bias: F.batch_norm(x, None, None, weight, bias,
                                                              training=True, eps=EPS),
               mistakes=BATCHNORM_MISTAKES, exact_shapes=True)
### BEGIN HIDDEN TESTS
check_function(MyBatchNormFunction,
               inputs=[[small_variance((9, 2), seed=8), (2,), (2,)], [(3, 6), (6,), (6,)],
                       [(12, 1), (1,), (1,)]],
               reference=lambda x, weight, bias: F.batch_norm(x, None, None, weight, bias,
                                                              training=True, eps=EPS),
               mistakes=BATCHNORM_MISTAKES, exact_shapes=True, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyBatchNormFunction`? `from minigrad.course import use_reference; use_reference("my_batchnorm_backward")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# `gradcheck` compares your backward with finite differences, and the gradient for $x$
# indeed sums to zero over the batch:

# %%
x64 = mg.randn(6, 3, dtype=mg.float64, requires_grad=True)
w64 = mg.randn(3, dtype=mg.float64, requires_grad=True)
b64 = mg.randn(3, dtype=mg.float64, requires_grad=True)
print(f"gradcheck: {mg.gradcheck(MyBatchNormFunction.apply, [x64, w64, b64])}")
out = MyBatchNormFunction.apply(x64, w64, b64)
(out * mg.randn(6, 3, dtype=mg.float64)).sum().backward()
print(f"x.grad summed over the batch: {x64.grad.numpy().sum(axis=0).round(12) + 0.0}")

# %% [markdown]
# ## 3. Train mode and eval mode
#
# `model.train()` and `model.eval()` set the flag `self.training` on every module. Batch
# norm reads it: in **train** mode it normalises with the batch's statistics and updates
# the running ones; in **eval** mode it normalises with `running_mean` and `running_var`
# and changes nothing.
#
# **Predict, then run.** A batch norm layer has seen 200 training batches. We take one
# sample $x_0$ and pass it alone (a batch of one), then inside a batch of 8 other samples.
# In eval mode, are the two outputs for $x_0$ the same? And in train mode?

# %%
mg.manual_seed(1)
bn = nn.BatchNorm1d(3)
for _ in range(200):                                   # training batches
    bn(mg.randn(16, 3) * 2.0 + 1.0)
sample = mg.tensor([[0.5, 1.0, 3.0]])
batch = mg.cat([sample, mg.randn(8, 3) * 2.0 + 1.0])

bn.eval()
print(f"eval, alone:         {bn(sample).numpy()[0]}")
print(f"eval, in a batch:    {bn(batch).numpy()[0]}")
bn.train()
print(f"train, in a batch:   {bn(batch).numpy()[0]}")
try:
    bn(sample)
except ValueError as error:
    print(f"train, alone: ValueError: {error}")

# %% [markdown]
# In eval mode the sample's output does not depend on its batch: the running statistics
# (close to the data's true mean 1 and variance 4) are fixed numbers. In train mode it
# does, and a batch of one cannot be normalised at all (its variance is 0; PyTorch and
# minigrad refuse). That is why forgetting `model.eval()` before testing gives results
# that change with the batch size, and why a layer that uses the batch's statistics in
# eval mode is a bug.
#
# ### Exercise 2 (3 points): `MyBatchNorm1d`
#
# Write the layer. In `__init__`: `weight` (ones) and `bias` (zeros) as `nn.Parameter`s,
# and three buffers registered with `self.register_buffer(name, tensor)`:
# `running_mean` (zeros), `running_var` (ones), `num_batches_tracked` (`mg.tensor(0)`).
# In `forward`, when `self.training`: apply your `MyBatchNormFunction`, and update the
# buffers under `mg.no_grad()` (they are not part of the graph; `buffer.copy_(value)`
# writes into one). In eval mode: normalise with the running statistics (minigrad
# operations, so that the gradient flows to `x`, `weight` and `bias`).
#
# *`forward` uses your `MyBatchNormFunction` of exercise 1: if it is not done yet,
# `from minigrad.course import use_reference; use_reference("my_batchnorm_backward")` loads the reference one.
# The check judges this exercise on its own: with a wrong `MyBatchNormFunction` it runs on the
# reference one and tells you to fix exercise 1 first.*

# %% tags=["solution:my_batchnorm1d"]
class MyBatchNorm1d(nn.Module):
    """Batch norm over (N, C), with running statistics for eval mode, as nn.BatchNorm1d"""

    def __init__(self, num_features, eps=EPS, momentum=0.1):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        # BEGIN SOLUTION
        self.weight = nn.Parameter(mg.ones(num_features))
        self.bias = nn.Parameter(mg.zeros(num_features))
        self.register_buffer("running_mean", mg.zeros(num_features))
        self.register_buffer("running_var", mg.ones(num_features))
        self.register_buffer("num_batches_tracked", mg.tensor(0))
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        if self.training:
            n, m = x.shape[0], self.momentum
            with mg.no_grad():
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                self.running_mean.copy_((1 - m) * self.running_mean + m * mean)
                self.running_var.copy_((1 - m) * self.running_var + m * var * n / (n - 1))
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            return MyBatchNormFunction.apply(x, self.weight, self.bias)
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt() \
            * self.weight + self.bias
        # END SOLUTION


# %% [markdown]
# The check gives your layer the state of an `nn.BatchNorm1d(4)` with a random weight and
# bias, runs a batch in train mode (output, gradients, the three buffers), then the same
# batch in eval mode (output with the running statistics, buffers unchanged), on two
# batch sizes and on a batch of small variance. The running variance it starts from is
# small too, so that $\epsilon$ matters in eval mode as well.

# %% tags=["tests:my_batchnorm1d:3"]
uses = {"MyBatchNormFunction": "minigrad.exercises.normalization:ReferenceBatchNormFunction"}
check_module(MyBatchNorm1d, with_random_affine(nn.BatchNorm1d), args=(4,),
             inputs=[[small_variance((6, 4))], [(8, 4)], [(5, 4)]],
             mistakes=BATCHNORM1D_MISTAKES, uses=uses)
### BEGIN HIDDEN TESTS
check_module(MyBatchNorm1d, with_random_affine(nn.BatchNorm1d), args=(3,),
             kwargs={"momentum": 0.3},
             inputs=[[small_variance((9, 3), seed=8)], [(4, 3)], [(7, 3)]],
             mistakes=BATCHNORM1D_MISTAKES, seed=8, uses=uses)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-batchnorm-eval"]
# ### Question (3 points, graded by your teacher)
#
# Why does batch norm normalise with the batch's own mean and variance in train mode,
# but with `running_mean` and `running_var` in eval mode? What goes wrong if you forget
# `model.eval()` before testing, and why can a batch of one not be normalised in train
# mode? Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that in training the batch statistics make each sample's output
#   depend on the other samples of its batch, while at test time a prediction must not
#   depend on its batch (and there may be no batch), so eval mode uses the fixed running
#   statistics gathered during training; that forgetting `eval()` gives outputs that
#   change with the batch and its size (and keeps updating the running statistics with
#   test data); and that a batch of one has variance 0, so every output would be the
#   bias.
# - 2 points: two of the three.
# - 1 point: one of the three.
# - 0 points: none.
#
# A full answer names: (1) in train mode $\mu$ and $\sigma^2$ are the batch's (biased
# variance), so a sample's output depends on which other samples share its batch; (2)
# the running statistics are exponential moving averages (momentum 0.1, unbiased
# variance) kept during training; in eval mode they are fixed numbers, so a prediction
# depends on its sample only and works one sample at a time; (3) without `eval()` the
# outputs change with the batch and batch size, and the buffers go on being updated by
# the test data; (4) a single sample is its own mean: $x - \mu = 0$ and $\sigma^2 = 0$,
# there is nothing to normalise (PyTorch and minigrad refuse). Do not accept "eval mode
# is faster" as the reason.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-batchnorm-eval:3"]
# In training, batch norm normalises each feature with the mean and variance of the
# current batch, so what it outputs for one sample depends on the other samples in that
# batch. At test time that would be wrong: a prediction should depend only on its input,
# and there may be a single image to classify. So during training the layer keeps
# running averages of the statistics, and in eval mode it normalises with those fixed
# numbers instead. If you forget `model.eval()`, the same sample gets different outputs
# in different batches and batch sizes, and the running statistics keep being updated
# with the test data. A batch of one is its own mean, so $x - \mu$ is 0 and the variance
# is 0: every output would just be the bias, which is why minigrad and PyTorch refuse it
# in train mode.

# %% [markdown]
# *Stuck on `MyBatchNorm1d`? `from minigrad.course import use_reference; use_reference("my_batchnorm1d")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Your layer and `nn.BatchNorm1d` side by side over 50 training batches, then in eval
# mode on a new batch:

# %%
mg.manual_seed(2)
mine, theirs = MyBatchNorm1d(3), nn.BatchNorm1d(3)
for _ in range(50):
    batch = mg.randn(10, 3) * 3.0 - 2.0
    mine(batch), theirs(batch)
mine.eval(), theirs.eval()
test = mg.randn(4, 3)
print(f"running_var: mine {mine.running_var.numpy()}, nn's {theirs.running_var.numpy()}")
print(f"eval outputs equal: {np.allclose(mine(test).numpy(), theirs(test).numpy(), atol=1e-5)}")

# %% [markdown]
# ## 4. Layer norm
#
# Batch norm ties the samples of a batch together, which is awkward for sequences of
# different lengths and for batches of one. **Layer norm** normalises each sample on its
# own, over its **last** dimension (the features): for $x$ of shape $(\dots, D)$, the mean
# and the (biased) variance are taken over the $D$ features of each row, and the
# `weight` and `bias` have shape $(D,)$:
#
# $$\hat{x}_{n,:} = \frac{x_{n,:} - \mu_n}{\sqrt{\sigma_n^2 + \varepsilon}}, \qquad
# \mu_n = \frac{1}{D}\sum_{d} x_{nd}, \qquad y_{n,:} = \gamma\odot\hat{x}_{n,:} + \beta.$$
#
# No running statistics: train and eval mode compute the same thing. Its backward is
# batch norm's formula with the sums taken over the **last** axis (the $D$ features of a
# sample) instead of the batch: $\partial L/\partial x = \frac{s}{D}(D g - \sum_d g -
# \hat{x}\sum_d g\hat{x})$ with $g = G\gamma$; the parameters' gradients still sum over
# all the leading dimensions. Checked here against minigrad's `F.layer_norm` on a
# $(2, 3, 5)$ input:

# %%
x = mg.randn(2, 3, 5, requires_grad=True)
gamma = mg.randn(5, requires_grad=True)
out = F.layer_norm(x, (5,), gamma, mg.zeros(5))
G = mg.randn(2, 3, 5)
(out * G).sum().backward()

xv, Gv, D = x.detach().numpy(), G.numpy(), 5
s = 1 / np.sqrt(xv.var(axis=-1, keepdims=True) + 1e-5)
xhat = (xv - xv.mean(axis=-1, keepdims=True)) * s
g = Gv * gamma.detach().numpy()
grad_x = s / D * (D * g - g.sum(axis=-1, keepdims=True)
                  - xhat * (g * xhat).sum(axis=-1, keepdims=True))
print(f"dx by the formula = x.grad: {np.allclose(grad_x, x.grad.numpy(), atol=1e-5)}")
print(f"dweight = sum over (0, 1) of G * xhat: "
      f"{np.allclose((Gv * xhat).sum(axis=(0, 1)), gamma.grad.numpy(), atol=1e-5)}")

# %% [markdown]
# ### Exercise 3 (2 points): `MyLayerNorm`
#
# Write `MyLayerNorm(normalized_shape)` for one normalised dimension (the last one), with
# `weight` (ones) and `bias` (zeros) of shape `(normalized_shape,)`, and its forward from
# minigrad operations (`mean`, `var(..., correction=0)`, `sqrt`), so that the engine
# derives the backward for you.

# %% tags=["solution:my_layernorm"]
class MyLayerNorm(nn.Module):
    """Normalise each sample over its last dimension, then scale and shift, as nn.LayerNorm"""

    def __init__(self, normalized_shape, eps=EPS):
        super().__init__()
        self.eps = eps
        # BEGIN SOLUTION
        self.weight = nn.Parameter(mg.ones(normalized_shape))
        self.bias = nn.Parameter(mg.zeros(normalized_shape))
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, correction=0)
        return (x - mean) / (var + self.eps).sqrt() * self.weight + self.bias
        # END SOLUTION


# %% [markdown]
# The check runs a $(5, 4)$ and a $(2, 3, 4)$ input, then one of small variance, against
# `nn.LayerNorm(4)` with a random weight and bias.

# %% tags=["tests:my_layernorm:2"]
check_module(MyLayerNorm, with_random_affine(nn.LayerNorm), args=(4,),
             inputs=[[small_variance((3, 4))], [(5, 4)], [(2, 3, 4)]],
             mistakes=LAYERNORM_MISTAKES)
### BEGIN HIDDEN TESTS
check_module(MyLayerNorm, with_random_affine(nn.LayerNorm), args=(6,),
             inputs=[[small_variance((2, 6), seed=8)], [(7, 6)], [(3, 2, 2, 6)]],
             mistakes=LAYERNORM_MISTAKES, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyLayerNorm`? `from minigrad.course import use_reference; use_reference("my_layernorm")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Unlike batch norm, a sample's output does not depend on the rest of the batch:

# %%
layer = MyLayerNorm(3)
alone = layer(sample).detach().numpy()[0]
in_batch = layer(mg.cat([sample, mg.randn(8, 3)])).detach().numpy()[0]
print(f"alone {alone}, in a batch {in_batch}")

# %% [markdown]
# ## 5. Dropout
#
# **Dropout** regularises a network by zeroing each activation with probability $p$ in
# training, so that no unit can rely on one particular other unit. If nothing else were
# done, the next layer would see, on average, only a fraction $1 - p$ of its usual input
# in training and all of it at test time. **Inverted dropout** (PyTorch's) fixes that in
# training: the kept values are divided by $1 - p$, so the expected output equals the
# input, $\mathbb{E}[y] = (1-p)\cdot\frac{x}{1-p} + p\cdot 0 = x$, and eval mode is the
# identity. The backward multiplies `grad_output` by the **same** mask and scale as the
# forward (the mask is saved; a new one would drop other units).
#
# **Predict, then run.** With $p = 0.5$ on an input of ones: what values appear in the
# output in train mode, and what is their mean? And in eval mode?

# %%
drop = nn.Dropout(p=0.5)
ones = mg.ones(2, 8)
print(f"train:\n{drop(ones).numpy()}")
print(f"train, mean over 10,000 values: {drop(mg.ones(100, 100)).mean().item():.3f}")
drop.eval()
print(f"eval:\n{drop(ones).numpy()}")

# %% [markdown]
# Zeros and twos in training (mean about 1), the input unchanged in eval mode.
#
# ### Exercise 4 (2 points): `MyDropout`
#
# Write `MyDropout(p)`: in training, keep each value with probability $1 - p$
# (`mg.rand(*x.shape) >= p` is True with that probability) and divide the kept ones by
# $1 - p$; in eval mode return `x` itself. Build it from minigrad operations (`x * mask`):
# the engine then saves the mask for the backward.

# %% tags=["solution:my_dropout"]
class MyDropout(nn.Module):
    """Inverted dropout, as nn.Dropout"""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        # BEGIN SOLUTION
        if not self.training:
            return x
        mask = (mg.rand(*x.shape) >= self.p).float()
        return x * mask / (1 - self.p)
        # END SOLUTION


# %% [markdown]
# The check runs $p = 0.25$ on a $(200, 50)$ input in train mode (every value zeroed or
# times $1/(1-p)$, about a quarter zeroed, a new mask at each call, the gradient through
# the same mask), then compares with `nn.Dropout` in eval mode.

# %% tags=["tests:my_dropout:2"]
check_dropout(MyDropout, p=0.25)
### BEGIN HIDDEN TESTS
check_dropout(MyDropout, p=0.6, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyDropout`? `from minigrad.course import use_reference; use_reference("my_dropout")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# ## 6. Initialisation: keep the variance of the activations
#
# Take a `Linear` layer without bias, $y_o = \sum_{i=1}^{n} W_{oi} x_i$, with $n$ =
# `fan_in` inputs, the weights independent with mean 0 and variance $\sigma_W^2$, and
# independent of the inputs. The variance of a sum of independent terms is the sum of
# their variances:
#
# $$\operatorname{Var}(y_o) = n\,\sigma_W^2\,\mathbb{E}[x_i^2].$$
#
# If the $x_i$ are outputs of a ReLU, $x = \max(0, z)$ with $z$ symmetric around 0, then
# half of $z$'s second moment survives: $\mathbb{E}[x^2] = \frac{1}{2}\operatorname{Var}(z)$.
# So from one layer's pre-activations $z$ to the next,
#
# $$\operatorname{Var}(z^{(l+1)}) = \frac{n\,\sigma_W^2}{2}\operatorname{Var}(z^{(l)}).$$
#
# Over $L$ layers that factor is raised to the power $L$: below 1 the signal dies out,
# above 1 it explodes. It is exactly 1 for **Kaiming (He) initialisation**,
#
# $$\sigma_W = \sqrt{\frac{2}{\text{fan\_in}}}\quad\text{(ReLU)};$$
#
# `nn.init.kaiming_normal_(w, nonlinearity='relu')`. The 2 is the ReLU's *gain*; for tanh
# (which, near 0, passes its input unchanged) the same argument gives $1/\text{fan\_in}$,
# and **Xavier (Glorot)** initialisation, $\sigma_W = \sqrt{2/(\text{fan\_in} +
# \text{fan\_out})}$, compromises between the forward pass (fan_in) and the backward pass
# (fan_out), for tanh and sigmoid. For a weight of shape $(\text{out}, \text{in})$,
# fan_in is `shape[1]`; for a convolution's $(\text{out}, \text{in}, k_h, k_w)$, each
# output adds $\text{in}\cdot k_h k_w$ terms, so fan_in $= \text{in}\cdot k_h k_w$.
#
# Here are 20 ReLU layers of width 256 on a batch of 1,000 random inputs, with three
# standard deviations for the weights: $0.01$ (too small), Kaiming's
# $\sqrt{2/256} = 0.088$, and $0.2$ (too large). The table shows the std of the
# activations after some of the layers:

# %%
mg.manual_seed(3)
width, depth = 256, 20
inputs = mg.randn(1000, width)
stds = {"0.01 (too small)": 0.01, "Kaiming sqrt(2/256)": math.sqrt(2 / width),
        "0.2 (too large)": 0.2}
shown = (1, 2, 5, 10, 15, 20)
print(f"{'layer':>28}" + "".join(f"{k:>10}" for k in shown))
for label, std in stds.items():
    h, row = inputs, []
    for layer_index in range(1, depth + 1):
        weight = nn.init.normal_(mg.empty(width, width), 0.0, std)
        h = F.relu(h @ weight.T)
        if layer_index in shown:
            row.append(h.std().item())
    print(f"{'std with init ' + label.split()[0]:>28}" + "".join(f"{v:10.3g}" for v in row))

# %% [markdown]
# With 0.01 each layer multiplies the std by $\sqrt{256\cdot 0.01^2/2} \approx 0.11$:
# after 20 layers the activations are $10^{-19}$ of the input, and so are the gradients
# (a dead network). With 0.2 the factor is about $2.3$: $10^{7}$ after 20 layers. With
# Kaiming's the factor is 1 on average, and the std stays near 0.8 (that of a ReLU output
# whose second moment is 1), drifting only slowly: a finite width adds a little noise at
# each layer.
#
# ### Exercise 5 (1 point): `kaiming_std`
#
# Write `kaiming_std(shape)`: the standard deviation Kaiming's initialisation (ReLU,
# `mode='fan_in'`) gives a weight of `shape`, $(\text{out}, \text{in})$ for `Linear` or
# $(\text{out}, \text{in}, k_h, k_w)$ for a convolution. Return a Python float.

# %% tags=["solution:kaiming_std"]
def kaiming_std(shape):
    """sqrt(2 / fan_in), fan_in = shape[1] times the kernel's size"""
    # BEGIN SOLUTION
    fan_in = shape[1] * math.prod(shape[2:])
    return math.sqrt(2 / fan_in)
    # END SOLUTION


# %% tags=["tests:kaiming_std:1"]
check_array_function(kaiming_std, [((300, 400),), ((64, 32, 3, 3),), ((10, 20),)],
                     kaiming_reference, mistakes=KAIMING_MISTAKES)
### BEGIN HIDDEN TESTS
check_array_function(kaiming_std, [((50, 7),), ((16, 3, 5, 5),), ((8, 6, 2, 4, 3),)],
                     kaiming_reference, mistakes=KAIMING_MISTAKES)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-kaiming"]
# ### Question (2 points, graded by your teacher)
#
# Why does Kaiming's initialisation draw the weights of a ReLU layer with standard
# deviation $\sqrt{2/\text{fan\_in}}$? What happens to the activations, and with them
# the gradients, of a 20-layer ReLU network of width 256 whose weights have a standard
# deviation of 0.01, or of 0.2, instead? Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: derives the per-layer factor $\text{fan\_in}\,\sigma_W^2/2$ on the
#   variance (a sum of fan_in independent terms, and a ReLU keeps half the second
#   moment), says it is 1 for $\sigma_W = \sqrt{2/\text{fan\_in}}$, and that another
#   factor is raised to the 20th power: the activations die out for 0.01 (about $0.11$
#   per layer on the standard deviation) and explode for 0.2 (about $2.3$ per layer).
# - 1 point: "it keeps the variance constant" without the fan_in and ReLU reasoning, or
#   the consequence without the derivation.
# - 0 points: neither.
#
# A full answer names: (1) $\operatorname{Var}(y_o) = n\,\sigma_W^2\, \mathbb{E}[x^2]$
# for $n$ = fan_in independent terms; (2) after a ReLU, $\mathbb{E}[x^2] = \tfrac12
# \operatorname{Var}(z)$, so each layer multiplies the variance by $n\sigma_W^2/2$; (3)
# that factor is 1 exactly when $\sigma_W^2 = 2/\text{fan\_in}$ (the 2 is the ReLU's
# gain); (4) over $L$ layers the factor is raised to the power $L$: with 0.01 the
# standard deviation shrinks by about $0.11$ a layer, $10^{-19}$ after 20 (and the
# gradients vanish with it); with 0.2 it grows by about $2.3$ a layer, about $10^{7}$.
# Accept "geometrically" for (4) without the numbers; do not accept "small weights are
# safer".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-kaiming:2"]
# An output of a layer is a sum of fan_in independent products $W_{oi} x_i$, so its
# variance is $\text{fan\_in}\,\sigma_W^2\,\mathbb{E}[x^2]$, and after a ReLU only half
# of the previous layer's variance survives as $\mathbb{E}[x^2]$. Each layer therefore
# multiplies the variance by $\text{fan\_in}\,\sigma_W^2/2$, which is exactly 1 when
# $\sigma_W = \sqrt{2/\text{fan\_in}}$. Any other choice is raised to the power of the
# depth: with 0.01 and width 256 the standard deviation shrinks by about $0.11$ per
# layer, to about $10^{-19}$ after 20 layers, and the gradients shrink in the same way,
# so the network cannot learn; with 0.2 it grows by about $2.3$ per layer, to about
# $10^{7}$.

# %% [markdown]
# *Stuck on `kaiming_std`? `from minigrad.course import use_reference; use_reference("kaiming_std")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# minigrad's `nn.init.kaiming_normal_` draws with that std:

# %%
for shape in [(300, 400), (64, 32, 3, 3)]:
    w = nn.init.kaiming_normal_(mg.empty(*shape), nonlinearity="relu")
    print(f"{shape}: kaiming_std {kaiming_std(shape):.4f}, "
          f"std of kaiming_normal_'s draw {w.std().item():.4f}")

# %% [markdown]
# ## 7. Residual connections
#
# A **residual block** adds its input to what its layers compute: $y = x + F(x)$. Its
# backward, by the chain rule, is
#
# $$\frac{\partial L}{\partial x} = \frac{\partial L}{\partial y} +
# \Big(\frac{\partial F}{\partial x}\Big)^{\!\top}\frac{\partial L}{\partial y}:$$
#
# the gradient from above reaches $x$ **unchanged** through the identity, whatever $F$'s
# Jacobian does to the second term. In a plain stack the gradient reaching the first
# layer is a product of 20 Jacobians, and a product of 20 factors a bit below 1 is tiny;
# in a residual stack, each block adds to the gradient instead of multiplying it.
# Normalising inside the block ($F(x) = \mathrm{Linear}(\tanh(\mathrm{BatchNorm}(x)))$)
# keeps the input of each $F$ at a steady scale while the sum grows.
#
# Networks of 20 layers of width 32, with PyTorch's default initialisation (that of
# chapter 7: uniform in $\pm 1/\sqrt{32}$, a std of $1/\sqrt{3\cdot 32}$: fine for one
# layer, too small for 20 tanh layers), one backward of the same loss each. The plain
# stack and the residual one with batch norm differ in two ways, so two more networks
# change one thing at a time: the plain stack with a batch norm before each tanh, and
# the residual stack without its batch norm.

# %%
class ResidualBlock(nn.Module):
    """y = x + Linear(tanh(BatchNorm(x))) (without the BatchNorm if norm is False)"""

    def __init__(self, width, norm=True):
        super().__init__()
        self.norm = nn.BatchNorm1d(width) if norm else nn.Identity()
        self.linear = nn.Linear(width, width)

    def forward(self, x):
        return x + self.linear(self.norm(x).tanh())


mg.manual_seed(4)
width, depth = 32, 20
plain = nn.Sequential(*[module for _ in range(depth)
                        for module in (nn.Linear(width, width), nn.Tanh())])
residual = nn.Sequential(*[ResidualBlock(width) for _ in range(depth)])
x, target = mg.randn(64, width), mg.randn(64, width)
mg.manual_seed(5)
plain_bn = nn.Sequential(*[module for _ in range(depth)
                           for module in (nn.Linear(width, width), nn.BatchNorm1d(width),
                                          nn.Tanh())])
residual_only = nn.Sequential(*[ResidualBlock(width, norm=False) for _ in range(depth)])
# each network, with its first and its last Linear layer
networks = {"plain": (plain, plain[0], plain[-2]),
            "plain + batch norm": (plain_bn, plain_bn[0], plain_bn[-3]),
            "residual": (residual_only, residual_only[0].linear, residual_only[-1].linear),
            "residual + batch norm": (residual, residual[0].linear, residual[-1].linear)}
print("gradient norm of the weight of the first layer / of the last layer")
for name, (model, first, last) in networks.items():
    F.mse_loss(model(x), target).backward()
    print(f"{name:>22}: {first.weight.grad.norm().item():.2e} / "
          f"{last.weight.grad.norm().item():.2e}")

# %% [markdown]
# `GradientFlow` draws the gradient norm of each layer's parameters, first layer at the
# top. The plain network first (its layers are numbered `0, 2, 4, ...`: the odd ones are
# the `Tanh`s, which have no parameters):

# %%
GradientFlow(plain, per="layer")

# %% [markdown]
# The gradient shrinks by a roughly constant factor at each layer: the first layer gets
# nearly 10,000 times less than the last (the printed $5.5 \cdot 10^{-6}$ against
# $5.4 \cdot 10^{-2}$) and would barely learn (**vanishing gradients**). The
# widget's own warning line stays quiet: it flags only a norm below $10^{-7}$, a gradient
# that is numerically zero; what matters here is the slope from layer to layer, which
# ten more layers would take below that line too. The residual network:

# %%
GradientFlow(residual, per="layer")

# %% [markdown]
# Every block gets a gradient of the same order. Which of the two changes did it? The
# printed lines above say: **each one alone** is enough at this depth. The skip alone
# (`residual`) carries the loss's gradient to the first block through the identity
# paths; batch norm alone (`plain + batch norm`) rescales each tanh's input so that tanh
# works where its slope is large, and the Jacobians are no longer all a bit below 1
# (here the first layer even gets about 5 times more than the last). What batch norm
# alone does not give is the identity path, and that is what keeps working at hundreds
# of layers: the plain networks of the ResNet paper had batch norm too, and the deeper
# ones trained worse than the shallower ones. ResNets and Transformers, whose every
# sub-layer is `x + F(norm(x))`, use both.
#
# ## Summary
#
# - Batch norm normalises each feature over the batch with the **biased** variance, then
#   scales and shifts by `weight` and `bias`. In training it updates `running_mean` and
#   `running_var` (the **unbiased** variance) by `running = 0.9 running + 0.1 batch`; in
#   eval mode it uses them, so a prediction does not depend on its batch.
# - Its backward has three terms, the direct one and those through the mean and the
#   variance: $\partial L/\partial x = \frac{s}{N}(N g - \sum g - \hat{x}\sum g\hat{x})$,
#   $g = G\gamma$. Layer norm's is the same with the sums over the features.
# - Layer norm normalises each sample over its last dimension; no running statistics, the
#   same in train and eval mode.
# - Inverted dropout zeroes with probability $p$ and divides the rest by $1 - p$ in
#   training; it is the identity in eval mode; the backward uses the forward's mask.
# - Kaiming's $\sqrt{2/\text{fan\_in}}$ keeps the variance of ReLU activations constant
#   through depth; smaller dies out, larger explodes, geometrically.
# - A residual block $x + F(x)$ passes the gradient through unchanged; with a
#   normalisation inside, a 20-layer network gets useful gradients in every layer.
#
# ## Where this lives in minigrad
#
# | yours | minigrad | PyTorch |
# | --- | --- | --- |
# | `MyBatchNormFunction` | `F.batch_norm` in `minigrad/nn/functional.py` (also $(N, C, L)$ and images) | `F.batch_norm` |
# | `MyBatchNorm1d` | `BatchNorm1d`, `BatchNorm2d` in `minigrad/nn/normalization.py` | `nn.BatchNorm1d` |
# | `MyLayerNorm` and its backward | `LayerNorm` in `minigrad/ops/normalization.py` (one Function, the formula above) and `minigrad/nn/normalization.py` | `nn.LayerNorm` |
# | `MyDropout` | `Dropout` in `minigrad/nn/linear.py`, `F.dropout` in `minigrad/nn/functional.py` | `nn.Dropout` |
# | `kaiming_std` | `kaiming_normal_`, `kaiming_uniform_`, `xavier_*`, `calculate_gain` in `minigrad/nn/init.py` | `torch.nn.init` |
#
# Open `minigrad/ops/normalization.py`: `LayerNorm.backward` is the boxed formula of
# section 2 written with means, over the normalised dimensions.
