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
# # Chapter 9: Optimizers and training
#
# `loss.backward()` gives every parameter its gradient; the **optimizer** decides what to
# do with it. Plain gradient descent takes a step against the gradient; momentum, Adam and
# AdamW remember something of earlier steps, and a **schedule** and **gradient clipping**
# keep the steps in check. Each rule is one or two lines, and each has a classic way to
# get it subtly wrong.
#
# You will:
#
# 1. see how `mg.optim.Optimizer` keeps parameters (`param_groups`) and what it
#    remembers between steps (`state`);
# 2. write SGD with momentum in PyTorch's form, with weight decay;
# 3. derive Adam's bias correction, write Adam, then AdamW and its *decoupled* decay;
# 4. write a linear warm-up plus cosine schedule and use it with `LambdaLR`;
# 5. write `clip_grad_norm_`, clipping by the global norm;
# 6. train an MLP on two moons (with `TrainingMonitor` and `GradientFlow`), see what a
#    too-large learning rate does, and train on the 8x8 digits to a stated test accuracy;
# 7. find where minigrad keeps its own versions.
#
# Five **exercises** (10 points): a cell where you write code (in the copy handed out
# to students the answers are replaced by `raise NotImplementedError()`), and a test
# cell that runs your optimizer step for step next to minigrad's and names the classic
# mistakes.
#
# Stuck on an exercise? In a terminal, in the repository, `minigrad-course hint 9 my_adam`
# gives a hint for exercise `my_adam` (a nudge first; run it again for the next step), and
# `minigrad-course solution 9 my_adam` the reference answer. Each exercise's ID is in its
# stub's message; chapter 0, section 1, lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.data import DataLoader, TensorDataset, load_digits, make_moons, train_test_split
from minigrad.exercises import check_array_function, check_optimizer_step
from minigrad.exercises.optimizers import (WARMUP_COSINE_MISTAKES, adam_mistakes,
                                           adamw_mistakes, check_clip_grad_norm,
                                           check_steps_without_zero_grad,
                                           reference_warmup_cosine, sgd_momentum_mistakes)
from minigrad.widgets import GradientFlow, TrainingMonitor

mg.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. What an optimizer is made of
#
# An optimizer is built from the parameters and its options. It keeps them in
# **param groups**: dicts with a `"params"` list and the options for those parameters
# (so that, say, the last layer can have its own `lr`). The options you do not give a
# group come from the optimizer's `defaults`.

# %%
layer = nn.Linear(3, 2)
optimizer = mg.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
print([key for key in optimizer.param_groups[0] if key != "params"])
print(f"{len(optimizer.param_groups)} group, {len(optimizer.param_groups[0]['params'])} "
      f"parameters; lr = {optimizer.param_groups[0]['lr']}")

# %% [markdown]
# What the optimizer remembers between steps is in `optimizer.state[p]`, one dict per
# parameter `p`: empty before the first step, then (for momentum) the buffer.

# %%
F.mse_loss(layer(mg.randn(4, 3)), mg.zeros(4, 2)).backward()
print("before the step:", dict(optimizer.state[layer.bias]))
optimizer.step()
print("after the step: ", {k: v.round(4) for k, v in optimizer.state[layer.bias].items()})

# %% [markdown]
# `step()` is written once, in the base class (`minigrad/optim/optimizer.py`): for every
# group and every parameter that has a gradient, it calls
#
# ```python
# self.update_param(param, grad, self.state[p], group)
# ```
#
# with `param` the parameter's own NumPy array, `grad` its gradient's array, `state` the
# parameter's dict and `group` its options. A subclass says only how one parameter moves,
# **changing `param` in place** (`param -= ...`). The update is not part of the graph:
# the engine records nothing here, as with PyTorch's `with torch.no_grad(): p -= ...`.
# Every optimizer in this chapter is such a subclass; so are minigrad's own.
#
# ## 2. Momentum
#
# Gradient descent steps against the gradient: $p \leftarrow p - \eta\, g$. In a long
# narrow valley the gradient points mostly across the valley, and the steps zig-zag.
# **Momentum** keeps a running sum of the gradients, a *buffer* $b$, and steps along it;
# the zig-zags cancel in the sum, the steady direction adds up. PyTorch's form, with
# momentum $\mu$:
#
# $$b_1 = g_1, \qquad b_t = \mu\, b_{t-1} + g_t, \qquad p \leftarrow p - \eta\, b_t.$$
#
# With a constant gradient the buffer grows to $g / (1 - \mu)$: momentum $0.9$ makes the
# steps up to ten times longer. Some textbooks put the learning rate inside,
# $v_t = \mu v_{t-1} + \eta g_t$, $p \leftarrow p - v_t$. That is the same while
# $\eta$ is constant ($v_t = \eta b_t$), but not once a schedule changes $\eta$: the
# textbook's buffer keeps the old steps at their old learning rate. PyTorch also has
# `dampening` $d$ ($b_t = \mu b_{t-1} + (1 - d)\, g_t$, default 0) and `nesterov`
# (step along $g_t + \mu b_t$, a look-ahead); we leave both out.
#
# **Weight decay** in SGD is an L2 penalty $\tfrac{\lambda}{2}\lVert p\rVert^2$ added to
# the loss: its gradient $\lambda p$ is added to $g$ *before* the buffer,
# $g \leftarrow g + \lambda p$.
#
# ### Exercise 1 (2 points): `MySGD`
#
# Write `update_param`: weight decay, then the momentum buffer, kept in
# `state["momentum_buffer"]` (the name PyTorch uses), then the step. Read the options
# from `group` at every step (a scheduler changes `group["lr"]`). With `momentum=0` it
# is plain gradient descent, with no buffer. `grad` is the parameter's own `.grad` array,
# read only: a buffer made from it is a copy (backward adds into that array when
# `zero_grad()` is not called between two steps, and the check tries that too).

# %% tags=["solution:my_sgd_momentum"]
class MySGD(mg.optim.Optimizer):
    """p <- p - lr * b,  b = momentum * b + (g + weight_decay * p)"""

    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        # BEGIN SOLUTION
        lr, momentum, weight_decay = group["lr"], group["momentum"], group["weight_decay"]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = grad.copy()
            else:
                state["momentum_buffer"] = momentum * state["momentum_buffer"] + grad
            grad = state["momentum_buffer"]
        param -= lr * grad
        # END SOLUTION


# %% [markdown]
# The check builds your `MySGD` and `mg.optim.SGD` on the same two parameters, and for
# four steps runs `zero_grad()`, a backward and `step()` on both, comparing every update.
# Before each step it sets `lr` in every param group, as a scheduler would:
# $0.1, 0.1, 0.05, 0.02$. The classic mistakes (in `sgd_momentum_mistakes`, in
# `minigrad/exercises/optimizers.py`) run alongside on the same gradients, so the message
# can name the one your update matches.

# %% tags=["tests:my_sgd_momentum:2"]
lrs = [0.1, 0.1, 0.05, 0.02]
check_optimizer_step(MySGD, mg.optim.SGD, lrs=lrs, momentum=0.9, weight_decay=0.1,
                     mistakes=sgd_momentum_mistakes(lrs, momentum=0.9, weight_decay=0.1))
check_optimizer_step(MySGD, mg.optim.SGD, lr=0.1)
check_steps_without_zero_grad(MySGD, mg.optim.SGD, lr=0.1, momentum=0.9)
### BEGIN HIDDEN TESTS
hidden_lrs = [0.2, 0.05, 0.05, 0.1, 0.01]
check_optimizer_step(MySGD, mg.optim.SGD, lrs=hidden_lrs, momentum=0.5, weight_decay=0.3,
                     shapes=((2, 5), (3,), (1, 1)), seed=8,
                     mistakes=sgd_momentum_mistakes(hidden_lrs, momentum=0.5,
                                                    weight_decay=0.3, n_params=3))
check_optimizer_step(MySGD, mg.optim.SGD, lr=0.05, weight_decay=0.2, shapes=((5,),), seed=9)
check_steps_without_zero_grad(MySGD, mg.optim.SGD, lr=0.05, momentum=0.6,
                              shapes=((2, 3), (5,)), steps=4, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MySGD`? `from minigrad.course import use_reference; use_reference("my_sgd_momentum")`
# in a new cell loads the reference answer: the cells below use it.*
#
# ### Predict, then run: how large may the learning rate be?
#
# Take the simplest loss, $f(p) = \tfrac{h}{2} p^2$ with curvature $h = 1$: the gradient is
# $p$, so one step of gradient descent is $p \leftarrow (1 - \eta)\, p$. Starting from
# $p = 1$, what happens with $\eta = 0.5$, $\eta = 1.5$ and $\eta = 2.5$? Decide before
# running the cell.

# %%
for lr in (0.5, 1.5, 2.5):
    p = mg.tensor([1.0], requires_grad=True)
    sgd = MySGD([p], lr=lr)
    path = []
    for _ in range(8):
        sgd.zero_grad()
        (0.5 * p * p).sum().backward()
        sgd.step()
        path.append(p.item())
    print(f"lr = {lr}: " + " ".join(f"{value:7.3f}" for value in path))

# %% [markdown]
# Each step multiplies $p$ by $1 - \eta$. With $\eta = 0.5$ it shrinks smoothly; with
# $\eta = 1.5$ the factor is $-0.5$: $p$ jumps over the minimum at every step, from one
# side to the other, but still gets closer; with $\eta = 2.5$ the factor is $-1.5$: every
# jump overshoots by more than it corrects, and $p$ **diverges**. Gradient descent is
# stable only for $\eta < 2 / h$, where $h$ is the largest curvature of the loss. A
# network's loss has a curvature of its own in every direction; the learning rate must
# suit the steepest one. Section 6 shows what that looks like when training a network.
#
# ## 3. Adam
#
# Adam gives every parameter entry its own step size. It keeps two running averages, of
# the gradient and of its square (elementwise), both starting at zero:
#
# $$m_t = \beta_1 m_{t-1} + (1 - \beta_1)\, g_t, \qquad
#   v_t = \beta_2 v_{t-1} + (1 - \beta_2)\, g_t^2,$$
#
# and steps by $m / \sqrt{v}$: roughly the sign of a steady gradient, of size $\eta$,
# whatever the gradient's scale.
#
# **Bias correction.** Unrolled, $m_t = (1 - \beta_1) \sum_{k=1}^{t} \beta_1^{t-k} g_k$.
# If the gradients have a steady mean $\bar g$, the weights sum to
# $(1 - \beta_1)(1 + \beta_1 + \dots + \beta_1^{t-1}) = 1 - \beta_1^t$, so
# $\mathbb{E}[m_t] = (1 - \beta_1^t)\, \bar g$: too small by the factor $1 - \beta_1^t$,
# because of the zeros it started from (at $t = 1$, $m_1 = 0.1\, g_1$ with $\beta_1 = 0.9$).
# The same holds for $v$ with $\beta_2$. Dividing undoes it:
#
# $$\hat m_t = \frac{m_t}{1 - \beta_1^t}, \qquad \hat v_t = \frac{v_t}{1 - \beta_2^t},
#   \qquad p \leftarrow p - \eta\, \frac{\hat m_t}{\sqrt{\hat v_t} + \varepsilon},$$
#
# with $t = 1$ at the first step. $\varepsilon$ (default $10^{-8}$) keeps the division
# finite where $v$ is zero; it is added *outside* the square root. Adam's `weight_decay`
# is, as in SGD, an L2 penalty: $g \leftarrow g + \lambda p$ first.
#
# ### Predict, then run: Adam without bias correction
#
# $m$ starts too small, so without the correction, are Adam's first steps too small? With
# the default betas $(0.9, 0.999)$, how long is the very first step, compared with $\eta$?

# %%
g = 2.0  # any gradient: Adam's first step does not depend on its size
for betas in ((0.9, 0.999), (0.9, 0.9)):
    beta1, beta2 = betas
    m, v = (1 - beta1) * g, (1 - beta2) * g * g  # after the first step, from zeros
    uncorrected = m / math.sqrt(v)
    corrected = (m / (1 - beta1)) / math.sqrt(v / (1 - beta2))
    print(f"betas {betas}: first step without correction {uncorrected:.3f} * lr, "
          f"with it {corrected:.3f} * lr")

# %% [markdown]
# Both averages start too small, and the step is their *ratio*: without the correction,
# the first step is $\eta (1 - \beta_1) / \sqrt{1 - \beta_2}$ times the sign of $g$. With the
# default betas, $v$ is shrunk more than $m$ ($\sqrt{0.001} \approx 0.032$ against $0.1$),
# and the first steps come out about **three times too long**, not too short; only with
# equal betas is the step too short, and then by $\sqrt{1 - \beta}$. The corrected first step
# is exactly $\eta$ times the sign. Early in training, when the network is furthest from
# good, uncorrected Adam takes its wildest steps; the correction fades as
# $\beta^t \to 0$ (after a few thousand steps for $\beta_2 = 0.999$).
#
# ### Exercise 2 (3 points): `MyAdam`
#
# Write `update_param`. On the first call `state` is empty: set `state["step"] = 0` and
# the two averages `state["exp_avg"]`, `state["exp_avg_sq"]` to zeros like `param`. Then
# count this step, add the L2 term, update both averages, and step. `group["betas"]` is
# the pair $(\beta_1, \beta_2)$.

# %% tags=["solution:my_adam"]
class MyAdam(mg.optim.Optimizer):
    """p <- p - lr * m_hat / (sqrt(v_hat) + eps), with bias-corrected running averages"""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        # BEGIN SOLUTION
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        state["step"] += 1
        t = state["step"]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad * grad
        m_hat = state["exp_avg"] / (1 - beta1**t)
        v_hat = state["exp_avg_sq"] / (1 - beta2**t)
        param -= lr * m_hat / (np.sqrt(v_hat) + eps)
        # END SOLUTION


# %% [markdown]
# The check runs three steps next to `mg.optim.Adam` with `eps=0.01` (large, so that
# where it goes shows) and a weight decay of $0.1$, changing `lr` between steps.

# %% tags=["tests:my_adam:3"]
lrs = [0.05, 0.05, 0.02]
check_optimizer_step(MyAdam, mg.optim.Adam, lrs=lrs, betas=(0.9, 0.999), eps=0.01,
                     weight_decay=0.1,
                     mistakes=adam_mistakes(lrs, (0.9, 0.999), eps=0.01, weight_decay=0.1))
check_optimizer_step(MyAdam, mg.optim.Adam, lr=0.01, betas=(0.8, 0.9), steps=5)
### BEGIN HIDDEN TESTS
hidden_lrs = [0.1, 0.03, 0.03, 0.01]
check_optimizer_step(MyAdam, mg.optim.Adam, lrs=hidden_lrs, betas=(0.7, 0.95), eps=0.05,
                     weight_decay=0.2, shapes=((2, 5), (3,), (1, 1)), seed=8,
                     mistakes=adam_mistakes(hidden_lrs, (0.7, 0.95), eps=0.05,
                                            weight_decay=0.2, n_params=3))
check_optimizer_step(MyAdam, mg.optim.Adam, lr=0.002, betas=(0.95, 0.99), shapes=((6,),),
                     steps=6, seed=9)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-bias-correction"]
# ### Question (3 points, graded by your teacher)
#
# Why does Adam divide $m_t$ by $1 - \beta_1^t$ and $v_t$ by $1 - \beta_2^t$? With the
# default betas $(0.9, 0.999)$, how long would the very first step be without the
# correction, compared with $\eta$, and why is it too long rather than too short? Answer
# in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that the running averages start at zero, so $m_t$ is on average
#   $(1 - \beta_1^t)$ times the gradient (and $v_t$ likewise with $\beta_2$), which the
#   division undoes; that the step is the ratio $m/\sqrt{v}$, so without correction the
#   first step is $\eta (1 - \beta_1)/\sqrt{1 - \beta_2} \approx 3.2\,\eta$, because $v$
#   is shrunk more than $m$; and that the corrected first step is $\eta$ times the sign
#   of $g$.
# - 2 points: the bias from the zero start, and a first step that is too long without
#   the ratio explained; or the ratio and the number without where the bias comes from.
# - 1 point: only that the averages start at zero and are too small (for example
#   concluding that the first steps would be too short).
# - 0 points: none of this.
#
# A full answer names: (1) unrolled, $m_t = (1 - \beta_1)\sum_k \beta_1^{t-k} g_k$,
# whose weights sum to $1 - \beta_1^t$, so $\mathbb{E}[m_t] = (1 - \beta_1^t)\bar g$:
# too small because of the zeros it started from (at $t = 1$, $m_1 = 0.1\,g_1$); the
# same for $v$ with $\beta_2$; dividing by $1 - \beta^t$ removes it; (2) Adam steps by
# the ratio $\hat m/\sqrt{\hat v}$: uncorrected, the first step is $\eta \cdot 0.1 /
# \sqrt{0.001} \approx 3.16\,\eta$, since $\sqrt{1 - \beta_2} \approx 0.032$ is smaller
# than $1 - \beta_1 = 0.1$; (3) corrected, $\hat m_1 = g$ and $\hat v_1 = g^2$, a step
# of exactly $\eta$ (up to $\varepsilon$); the correction fades as $\beta^t \to 0$.
# Accept "about three times too long"; do not accept "the steps would be too short" as
# the conclusion.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-bias-correction:3"]
# Both running averages start at zero, so early on they are pulled towards zero: the
# weights of $m_t = (1 - \beta_1)\sum_k \beta_1^{t-k} g_k$ add up to only $1 -
# \beta_1^t$, so $m_t$ is on average that fraction of the gradient, and $v_t$ is the
# fraction $1 - \beta_2^t$ of the squared gradient. Dividing by those factors removes
# the bias; at $t = 1$ it gives exactly $\hat m = g$ and $\hat v = g^2$, a step of
# $\eta$ in the direction of $-g$. Without the correction the step is the ratio
# $m_1/\sqrt{v_1} = 0.1\,g / \sqrt{0.001\,g^2}$, about $3.2$ times $\eta$: $v$ is shrunk
# much more than $m$ because $\beta_2$ is closer to 1, and the square root does not make
# up for that. So uncorrected Adam takes its longest steps at the start, when the
# network is furthest from good; the difference fades as $\beta^t$ goes to 0.

# %% [markdown]
# *Stuck on `MyAdam`? `from minigrad.course import use_reference; use_reference("my_adam")`
# in a new cell loads the reference answer, so the cells below run (then it is not
# counted as yours).*
#
# ### AdamW: decoupled weight decay
#
# In Adam, the L2 term $\lambda p$ joins the gradient, and so is divided by
# $\sqrt{\hat v}$ like the rest of it: where the gradients are large, the decay is divided
# by a large number and hardly acts; where they are small, a tiny $\lambda p$ becomes a
# full step of size $\eta$. The decay no longer shrinks every weight by the same fraction,
# which is what weight decay was meant to do (for plain SGD the two are the same thing).
# Loshchilov and Hutter's **AdamW** takes the decay out of the gradient and applies it to
# the parameter directly, before the Adam step:
#
# $$p \leftarrow p\,(1 - \eta \lambda), \qquad \text{then the Adam update with } g
#   \text{ alone}.$$
#
# The cell below shows the difference on two weights of the same value, $1$: one with
# large gradients ($\pm 10$, alternating, averaging zero), one with none at all.

# %%
for name, make in (("Adam + L2", mg.optim.Adam), ("AdamW", mg.optim.AdamW)):
    weights = mg.tensor([1.0, 1.0], requires_grad=True)
    opt = make([weights], lr=0.01, weight_decay=0.1)
    for step in range(100):
        opt.zero_grad()
        weights.grad = mg.tensor([10.0 * (-1) ** step, 0.0])
        opt.step()
    print(f"{name:9}: after 100 steps, noisy weight {weights[0].item():.3f}, "
          f"idle weight {weights[1].item():.3f}")

# %% [markdown]
# With Adam + L2, the idle weight's only gradient is $\lambda p$, and Adam turns it into a
# step of size about $\eta$ every time: it falls by nearly $0.01$ a step, whatever
# $\lambda$ is, while the noisy weight barely decays. AdamW shrinks both by the same
# factor, $(1 - 0.001)^{100} \approx 0.905$ (the noisy weight also moves a little with its
# own gradient).
#
# ### Exercise 3 (2 points): `MyAdamW`
#
# `MyAdamW` is a `MyAdam`: write its `update_param` so that it first shrinks `param` in
# place, then calls `MyAdam.update_param` (that is `super().update_param(...)`) with a
# group whose weight decay is 0: `{**group, "weight_decay": 0.0}` is a copy of `group`
# with that one entry changed. The check judges this exercise on its own: with a wrong
# `MyAdam` it runs your `MyAdamW` on the reference Adam and tells you to fix exercise 2
# first.

# %% tags=["solution:my_adamw"]
class MyAdamW(MyAdam):
    """p <- p * (1 - lr * weight_decay), then Adam's step with the gradient alone"""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def update_param(self, param, grad, state, group):
        # BEGIN SOLUTION
        param *= 1 - group["lr"] * group["weight_decay"]
        super().update_param(param, grad, state, {**group, "weight_decay": 0.0})
        # END SOLUTION


# %% tags=["tests:my_adamw:2"]
lrs = [0.05, 0.05, 0.02]
check_optimizer_step(MyAdamW, mg.optim.AdamW, lrs=lrs, betas=(0.9, 0.999), eps=1e-8,
                     weight_decay=0.5,
                     mistakes=adamw_mistakes(lrs, (0.9, 0.999), eps=1e-8, weight_decay=0.5),
                     uses={"MyAdam": "minigrad.exercises.optimizers:ReferenceAdam"})
### BEGIN HIDDEN TESTS
hidden_lrs = [0.1, 0.1, 0.03, 0.01]
check_optimizer_step(MyAdamW, mg.optim.AdamW, lrs=hidden_lrs, betas=(0.8, 0.99), eps=1e-6,
                     weight_decay=0.3, shapes=((2, 5), (3,), (1, 1)), seed=8,
                     mistakes=adamw_mistakes(hidden_lrs, (0.8, 0.99), eps=1e-6,
                                             weight_decay=0.3, n_params=3),
                     uses={"MyAdam": "minigrad.exercises.optimizers:ReferenceAdam"})
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-decoupled-decay"]
# ### Question (2 points, graded by your teacher)
#
# Why is Adam's `weight_decay` (the L2 term $\lambda p$ added to the gradient) not the
# same as AdamW's decoupled decay, $p \leftarrow p\,(1 - \eta\lambda)$ before the Adam
# step? Use the chapter's two weights of value 1: one with large alternating gradients,
# one with no gradient at all. Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: explains that in Adam the $\lambda p$ term is divided by $\sqrt{\hat v}$
#   like the rest of the gradient, so it hardly acts where gradients are large and
#   becomes a full step of about $\eta$ where they are small (the idle weight falls by
#   nearly $\eta$ a step whatever $\lambda$); AND that AdamW shrinks every weight by the
#   same factor, outside the adaptive scaling.
# - 1 point: one of the two halves.
# - 0 points: "AdamW decays more" or no reason.
#
# A full answer names: (1) in Adam + L2 the decay joins $g$ and goes through
# $m/\sqrt{v}$: for the noisy weight $\sqrt{\hat v}$ is large (about 10) and the decay
# is divided away; for the idle weight the only gradient is $\lambda p$, which Adam
# normalises into a step of about $\eta$, independent of $\lambda$; (2) so the decay is
# no longer proportional to the weight, which is what weight decay means; (3) AdamW
# applies $p(1 - \eta\lambda)$ to the parameter directly: both weights shrink by the
# same factor (about $0.905$ after 100 steps in the chapter). Accept the remark that for
# plain SGD the two are the same; do not accept "AdamW uses a larger $\lambda$".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-decoupled-decay:2"]
# In Adam the L2 term $\lambda p$ is added to the gradient, so it goes through the same
# normalisation by $\sqrt{\hat v}$ as everything else. For the weight with large
# alternating gradients, $\sqrt{\hat v}$ is large and the small $\lambda p$ is divided
# away, so it barely decays; for the weight with no gradient, $\lambda p$ is the whole
# gradient, and Adam turns it into a step of about $\eta$ each time, whatever $\lambda$
# is. The decay is then no longer a fixed fraction of the weight. AdamW takes it out of
# the gradient and multiplies the parameter by $1 - \eta\lambda$ directly, so both
# weights shrink by the same factor, which is what weight decay is meant to do.

# %% [markdown]
# *Stuck on `MyAdamW`? `from minigrad.course import use_reference; use_reference("my_adamw")`
# in a new cell loads the reference answer (it needs `MyAdam`): the training below uses it.*
#
# ## 4. A learning-rate schedule: warm-up, then cosine
#
# Early in training the gradients are large and Adam's averages are new: a common recipe
# starts with a small learning rate, raises it linearly over $W$ **warm-up** steps, then
# lowers it along half a cosine over $D$ steps, to zero:
#
# $$\text{factor}(t) = \begin{cases}
#   \dfrac{t + 1}{W + 1} & t < W \\[1ex]
#   \tfrac12 \left(1 + \cos\left(\pi\, \dfrac{t - W}{D}\right)\right) & W \le t < W + D \\[1ex]
#   0 & t \ge W + D
# \end{cases}$$
#
# The warm-up climbs from $1/(W + 1)$ (so the very first step already learns), and the
# cosine takes over at $t = W$ with the value 1. The cosine part is PyTorch's
# `CosineAnnealingLR` formula, $\eta_{\min} + (\eta_0 - \eta_{\min})
# \tfrac12 (1 + \cos(\pi t / T_{\max}))$, with $\eta_{\min} = 0$, started after the
# warm-up; in PyTorch you would chain `LinearLR` and `CosineAnnealingLR` with
# `SequentialLR`, or write the factor as a function of the step and give it to
# `LambdaLR`, which sets `lr = base_lr * factor(t)`. minigrad has the whole schedule as
# `WarmupCosineLR`.
#
# ### Exercise 4 (1 point): `warmup_cosine`
#
# Write the factor as a function of the step (an `int`, from 0).

# %% tags=["solution:warmup_cosine"]
def warmup_cosine(step, warmup_steps, decay_steps):
    """The lr factor at `step`: linear warm-up, then half a cosine down to 0, then 0."""
    # BEGIN SOLUTION
    if step < warmup_steps:
        return (step + 1) / (warmup_steps + 1)
    if step >= warmup_steps + decay_steps:
        return 0.0
    progress = (step - warmup_steps) / decay_steps
    return 0.5 * (1 + math.cos(math.pi * progress))
    # END SOLUTION


# %% [markdown]
# The check compares every step of three schedules with `WarmupCosineLR`'s formula
# (`reference_warmup_cosine` in `minigrad/exercises/optimizers.py`).

# %% tags=["tests:warmup_cosine:1"]
cases = [(t, 5, 20) for t in range(30)] + [(t, 0, 8) for t in range(10)] + \
    [(t, 3, 1) for t in range(6)]
check_array_function(warmup_cosine, cases, reference=reference_warmup_cosine,
                     mistakes=WARMUP_COSINE_MISTAKES)
### BEGIN HIDDEN TESTS
hidden_cases = [(t, 7, 13) for t in range(25)] + [(t, 1, 4) for t in range(7)] + \
    [(t, 2, 30) for t in (0, 1, 2, 3, 16, 31, 32, 40)]
check_array_function(warmup_cosine, hidden_cases, reference=reference_warmup_cosine,
                     mistakes=WARMUP_COSINE_MISTAKES)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `warmup_cosine`? `from minigrad.course import use_reference; use_reference("warmup_cosine")`
# in a new cell loads the reference answer: the training below uses it.*
#
# With `LambdaLR`, your function drives any optimizer; the learning rates it sets are
# those of minigrad's `WarmupCosineLR`:

# %%
def lrs_of(make_scheduler, steps=40):
    opt = mg.optim.SGD([mg.zeros(1, requires_grad=True)], lr=0.1)
    scheduler = make_scheduler(opt)
    rates = []
    for _ in range(steps):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return np.array(rates)


mine = lrs_of(lambda opt: mg.optim.lr_scheduler.LambdaLR(
    opt, lambda t: warmup_cosine(t, warmup_steps=5, decay_steps=30)))
theirs = lrs_of(lambda opt: mg.optim.lr_scheduler.WarmupCosineLR(
    opt, warmup_steps=5, decay_steps=30))
print("the same learning rates as WarmupCosineLR:", np.allclose(mine, theirs, rtol=1e-12, atol=0))

figure, axes = plt.subplots(figsize=(6, 2.5))
axes.plot(mine, marker=".")
axes.set_xlabel("step")
axes.set_ylabel("lr")
axes.set_title("base lr 0.1, warm-up 5 steps, cosine over 30")
plt.show()

# %% [markdown]
# ## 5. Gradient clipping by the global norm
#
# One bad batch can give a huge gradient, and one huge step can undo hours of training.
# `clip_grad_norm_(parameters, max_norm)` treats *all* the gradients as one long vector:
# its norm is
#
# $$\lVert g \rVert = \sqrt{\textstyle\sum_{\text{params}} \sum_{\text{entries}} g^2},$$
#
# and if it is larger than `max_norm`, every gradient is multiplied by the same factor
# $\text{max\_norm} / (\lVert g \rVert + 10^{-6})$ (never by more than 1). One factor for all
# keeps the *direction* of the step; clipping each parameter on its own would change it.
# The trailing underscore is PyTorch's sign for "in place": the gradients are changed
# where they are, and the function **returns the total norm before clipping** (a Tensor),
# the number worth logging.
#
# ### Exercise 5 (2 points): `my_clip_grad_norm_`
#
# Skip parameters whose `.grad` is None. `p.grad` is a Tensor: `p.grad.numpy()` gives its
# values, and `p.grad.mul_(factor)` scales it in place (do it under `mg.no_grad()`).
# Return `mg.tensor(total_norm)`. `parameters` may be a generator such as
# `model.parameters()`: it can be gone through only once.

# %% tags=["solution:my_clip_grad_norm"]
def my_clip_grad_norm_(parameters, max_norm):
    # BEGIN SOLUTION
    grads = [p.grad for p in parameters if p.grad is not None]
    total = math.sqrt(sum(float((g.numpy().astype(np.float64) ** 2).sum()) for g in grads))
    factor = min(max_norm / (total + 1e-6), 1.0)
    with mg.no_grad():
        for g in grads:
            g.mul_(factor)
    return mg.tensor(total)
    # END SOLUTION


# %% [markdown]
# The check gives three parameters gradients, one of them much larger than the others,
# and calls your function three times: with `max_norm` 1 and 2 (total norms of 8.7 and
# 4.0, so it must clip) and with `max_norm` 100 (total 4.8: it must leave them alone).
# A fourth call adds a parameter whose `.grad` is None (one the loss did not use), which
# must be skipped. It also checks that each `.grad` is scaled in place (the same Tensor
# afterwards) and that the norm comes back as a Tensor, as PyTorch's does.

# %% tags=["tests:my_clip_grad_norm:2"]
check_clip_grad_norm(my_clip_grad_norm_)
### BEGIN HIDDEN TESTS
check_clip_grad_norm(my_clip_grad_norm_, max_norms=(0.5, 3.0, 50.0), seed=7)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `my_clip_grad_norm_`? `from minigrad.course import use_reference; use_reference("my_clip_grad_norm")`
# in a new cell loads the reference answer: the training below uses it.*
#
# It returns what `nn.utils.clip_grad_norm_` returns, and leaves the same gradients:

# %%
model = nn.Linear(4, 3)
F.cross_entropy(model(mg.randn(8, 4) * 10), mg.tensor([0, 1, 2, 0, 1, 2, 0, 1])).backward()
saved = [p.grad.numpy().copy() for p in model.parameters()]
norm = my_clip_grad_norm_(model.parameters(), max_norm=0.5)
mine = [p.grad.numpy().copy() for p in model.parameters()]
for p, grad in zip(model.parameters(), saved):
    p.grad = mg.tensor(grad)
theirs_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
print(f"norm before clipping: yours {norm.item():.4f}, nn.utils {theirs_norm.item():.4f}")
print("same gradients after:", all(np.allclose(a, p.grad.numpy())
                                   for a, p in zip(mine, model.parameters())))

# %% [markdown]
# ## 6. Training on two moons
#
# Now everything together, with your own pieces: `MyAdamW`, the `warmup_cosine` schedule
# through `LambdaLR`, and `my_clip_grad_norm_`, training a small MLP to separate two
# interleaving half-moons. `TrainingMonitor` draws the loss as it goes (a progress bar and
# a curve) and `GradientFlow` records the norm of every parameter's gradient at each
# step; both cost next to nothing per step.

# %%
# NBVAL_IGNORE_OUTPUT
# (the monitor shows itself when training starts and updates that output when closed,
# so the saved notebook keeps the final curves; nbval does not follow such updates)
mg.manual_seed(0)
points, labels = make_moons(n_samples=300, noise=0.15, seed=0)
loader = DataLoader(TensorDataset(points, labels), batch_size=30, shuffle=True)
moons_model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                            nn.Linear(32, 2))
epochs = 30
total_steps = epochs * len(loader)
optimizer = MyAdamW(moons_model.parameters(), lr=0.02, weight_decay=1e-3)
scheduler = mg.optim.lr_scheduler.LambdaLR(
    optimizer, lambda t: warmup_cosine(t, warmup_steps=20, decay_steps=total_steps - 20))
flow = GradientFlow(moons_model)
# drawing the curves costs about 0.3 s here, so redraw them at most every 5 s while training
monitor = TrainingMonitor(total=total_steps, min_interval=5)
norms = []
for epoch in range(epochs):
    for batch, batch_labels in loader:
        loss = F.cross_entropy(moons_model(batch), batch_labels)
        optimizer.zero_grad()
        loss.backward()
        flow.update()
        norms.append(my_clip_grad_norm_(moons_model.parameters(), max_norm=1.0).item())
        optimizer.step()
        scheduler.step()
        monitor.update()
        monitor.log(loss=loss, lr=optimizer.param_groups[0]["lr"])
monitor.close()

# %%
with mg.no_grad():
    predicted = moons_model(mg.tensor(points)).argmax(dim=1).numpy()
print(f"training accuracy {np.mean(predicted == labels):.1%}, final loss "
      f"{monitor.latest['loss']:.4f}")
print(f"gradient norm before clipping: first step {norms[0]:.2f}, largest "
      f"{max(norms):.2f}, clipped in {sum(n > 1.0 for n in norms)} of {len(norms)} steps")

# %% [markdown]
# The gradient norms over training, one line per parameter (the bars are the last step).
# Each point is one batch's gradient, so the lines are noisy; what matters is that none
# of them sinks towards zero (a layer that no longer learns) or shoots up (a step that
# would throw the weights away): they stay between about $10^{-3}$ and $1$ throughout,
# except the output bias's (`4.bias`), which dips to about $10^{-4}$ now and then. That
# dip is no problem: that gradient is the batch's mean of (predicted probability minus
# true one), so in a batch where the model's errors towards one class and towards the
# other balance, they cancel.

# %%
flow

# %% [markdown]
# What the model learned: the colour is the class it predicts at each place of the plane,
# the dots are the training points.

# %%
def plot_boundary(model, title):
    grid_x, grid_y = np.meshgrid(np.linspace(-1.6, 2.6, 140), np.linspace(-1.1, 1.6, 90))
    grid = np.stack([grid_x.ravel(), grid_y.ravel()], axis=1).astype(np.float32)
    with mg.no_grad():
        regions = model(mg.tensor(grid)).argmax(dim=1).numpy().reshape(grid_x.shape)
    figure, axes = plt.subplots(figsize=(6, 3.5))
    axes.contourf(grid_x, grid_y, regions, levels=[-0.5, 0.5, 1.5],
                  colors=["#cfe3f7", "#f9d9c4"])
    axes.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=10)
    axes.set_title(title)
    plt.show()


plot_boundary(moons_model, "two moons: MyAdamW + warm-up/cosine + clipping")

# %% [markdown]
# ### Predict, then run: a learning rate far too large
#
# The same network, with plain SGD (your `MySGD`, no momentum) for 30 epochs: once with
# `lr=0.5`, once with `lr=50`. Both runs start from the same weights. What will the loss
# of the second one do?

# %%
def train_sgd(lr, epochs=30):
    mg.manual_seed(1)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 2))
    sgd = MySGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        total = 0.0
        for batch, batch_labels in loader:
            loss = F.cross_entropy(model(batch), batch_labels)
            sgd.zero_grad()
            loss.backward()
            sgd.step()
            total += loss.item()
        losses.append(total / len(loader))
    return model, losses


for lr in (0.5, 50.0):
    with np.errstate(all="ignore"):  # lr=50 overflows on the way: we look at the loss
        sgd_model, losses = train_sgd(lr)
    shown = " ".join(f"{value:.3g}" for value in losses[::3])
    print(f"lr = {lr}: mean loss every 3rd epoch: {shown}")

# %% [markdown]
# With `lr=0.5` the loss falls (with a few bumps: each value is a mean over shuffled
# batches). With `lr=50` the first steps throw the weights so far that the mean loss of
# the first epoch is in the billions. After that it does not end in `nan`, nor come down:
# it wanders between about 9 and 16, far above the $\ln 2 \approx 0.69$ of a coin toss.
# Why? Not because each step still overshoots a valley, as in section 2: those first huge
# steps pushed every ReLU of the second layer below zero, for every input. A ReLU below
# zero passes no gradient back (its derivative is 0 there), so nothing before it learns
# any more, and the network gives the same logits whatever the input. Only the last
# layer's bias still moves, and the loss wanders with it. Look inside the trained network:

# %%
with mg.no_grad(), np.errstate(all="ignore"):  # its weights are huge: products overflow
    hidden = sgd_model[:4](mg.tensor(points)).numpy()  # after the second ReLU
    logits = sgd_model(mg.tensor(points)).numpy()
active = (hidden > 0).any(axis=0)  # a unit above zero on at least one training point
print(f"second-layer ReLUs active on some training point: {active.sum()} of {active.size}")
print("logits of the first three points:")
print(logits[:3])
print(f"largest weight: {max(np.abs(p.numpy()).max() for p in sgd_model.parameters()):.3g}")

# %% [markdown]
# Dead units, weights of about $10^{31}$, and the same logits for every point. What is
# left of the classifier puts nearly the whole plane in one class (the corner that differs
# is away from every training point):

# %%
with np.errstate(all="ignore"):  # its weights are huge: the products overflow
    plot_boundary(sgd_model, "two moons: plain SGD with lr = 50")

# %% [markdown]
# When a loss curve looks like that (or turns into `nan`), lower the learning rate first.
# A `GradientFlow` of such a run would show it too: every gradient norm but the output
# bias's drops to 0, the "layer that no longer learns" of section 6. A warm-up and
# gradient clipping help with the rare large step, not with a rate that is wrong
# throughout.
#
# ## 7. The 8x8 digits
#
# A real data set: 1797 handwritten digits of 8x8 pixels (values 0 to 16), ten classes.
# We keep a quarter of them aside as a test set, which the training never sees, scale
# the pixels to $[0, 1]$, and train an MLP with 64 inputs, one hidden layer of 64, and 10
# outputs, with your optimizer and schedule.

# %%
mg.manual_seed(0)
images, digits = load_digits()
x_train, x_test, y_train, y_test = train_test_split(images / 16.0, digits, test_size=0.25,
                                                    seed=0)
digit_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True)
digit_model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
epochs = 12
total_steps = epochs * len(digit_loader)
optimizer = MyAdamW(digit_model.parameters(), lr=0.01, weight_decay=1e-2)
scheduler = mg.optim.lr_scheduler.LambdaLR(
    optimizer, lambda t: warmup_cosine(t, warmup_steps=20, decay_steps=total_steps - 20))

print(f"{len(x_train)} training images, {len(x_test)} test images")
print("epoch   train loss   test accuracy")
for epoch in range(1, epochs + 1):
    total = 0.0
    for batch, batch_labels in digit_loader:
        loss = F.cross_entropy(digit_model(batch), batch_labels)
        optimizer.zero_grad()
        loss.backward()
        my_clip_grad_norm_(digit_model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        total += loss.item()
    if epoch in (1, 2, 4, 8, 12):
        with mg.no_grad():
            guesses = digit_model(mg.tensor(x_test)).argmax(dim=1).numpy()
        print(f"{epoch:5}   {total / len(digit_loader):10.4f}   "
              f"{np.mean(guesses == y_test):13.1%}")

# %% [markdown]
# After 12 epochs (264 steps of up to 64 images, a few seconds), the MLP classifies
# **98.0% of the 450 test images** correctly. The test accuracy is measured on images the
# training never used, so it estimates how well the network reads digits it has not
# seen; the training loss alone would not tell (a network can learn its training images
# by heart).
#
# ## Summary
#
# - An optimizer keeps its parameters in `param_groups` (options per group) and what it
#   remembers in `state[p]`; `step()` moves each parameter in place, outside the graph.
# - SGD with momentum, PyTorch's form: $b = \mu b + g$, $p \leftarrow p - \eta b$ (the
#   learning rate outside the buffer); weight decay $g + \lambda p$ first.
# - Adam: running averages $m$, $v$ from zero, divided by $1 - \beta^t$ with $t = 1$ at
#   the first step; $\varepsilon$ outside the square root. Without the correction the
#   first steps are off by $(1 - \beta_1)/\sqrt{1 - \beta_2}$ (about 3 times too long
#   with the default betas).
# - AdamW: decoupled decay, $p \leftarrow p (1 - \eta\lambda)$ and then Adam with the
#   gradient alone; Adam's L2 decay is divided by $\sqrt{\hat v}$ and is not the same.
# - A linear warm-up then a cosine, as a `LambdaLR` factor; `clip_grad_norm_` scales all
#   gradients by one factor when their global norm is above `max_norm` and returns that
#   norm.
# - A learning rate above about $2/h$ (for the steepest curvature $h$) makes the loss
#   oscillate or diverge.
#
# ## Where this lives in minigrad
#
# - `minigrad/optim/optimizer.py`: the `Optimizer` base class (`param_groups`, `state`,
#   `step`, `zero_grad`, `state_dict`);
# - `minigrad/optim/sgd.py`: `SGD` with momentum, dampening, Nesterov and weight decay;
#   `minigrad/optim/adam.py`: `Adam` and `AdamW` (and `amsgrad`);
#   `minigrad/optim/adam_variants.py` and `rmsprop.py` more of PyTorch's;
# - `minigrad/optim/lr_scheduler.py`: `LambdaLR`, `CosineAnnealingLR`, `WarmupCosineLR`,
#   `SequentialLR` and the others;
# - `minigrad/nn/utils.py`: `clip_grad_norm_` and `clip_grad_value_`;
# - `widgets/monitor.py` (`TrainingMonitor`) and `widgets/gradient_flow.py`
#   (`GradientFlow`).
