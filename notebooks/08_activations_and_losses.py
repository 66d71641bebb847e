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
# # Chapter 8: Activations and losses
#
# A network is linear layers with **activations** between them, and it learns by
# lowering a **loss**. Both are simple formulas, but each has a trap: activations
# *saturate* (their gradient vanishes), and softmax and the losses built on it
# *overflow* if written the way the textbook writes them.
#
# You will:
#
# 1. compare ReLU, tanh, sigmoid and GELU and their derivatives, and see where they
#    saturate;
# 2. write GELU (the exact one, with `erf`) and meet its tanh approximation;
# 3. see the naive softmax overflow at logits of 1000, and write a stable `MySoftmax`
#    with its full backward (every output depends on every input);
# 4. derive the gradient of cross-entropy, $(\mathrm{softmax} - \mathrm{onehot}) / N$,
#    and write it with PyTorch's `ignore_index` and `label_smoothing` (their targets
#    first, then the backward);
# 5. write binary cross-entropy with logits so that it never overflows;
# 6. find where minigrad keeps its own versions.
#
# Five **exercises** (12 points): a cell where you write code (in your own workspace the
# answers are replaced by `raise NotImplementedError("exercise mygelu: write your code
# here")`, naming the exercise, and in a copy a teacher hands out by
# `raise NotImplementedError()`), and a test
# cell that checks it against minigrad's `F.*` and names the classic mistakes.
#
# Stuck on an exercise? In a terminal, in the repository, `minigrad-course hint 8 mygelu`
# gives a hint for exercise `mygelu` (a nudge first; run it again for the next step), and
# `minigrad-course solution 8 mygelu` the reference answer. Each exercise's ID is in its
# stub's message; chapter 0, section 1, lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator.

# %%
import math

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.exercises import check_array_function, check_function, check_loss
from minigrad.exercises.losses import (BCE_MISTAKES, CROSS_ENTROPY_MISTAKES, GELU_MISTAKES,
                                       SMOOTHED_TARGETS_MISTAKES, SOFTMAX_DIM0_MISTAKES,
                                       SOFTMAX_MISTAKES, ignore_index_mistakes,
                                       label_smoothing_mistakes, reference_smoothed_targets)
from minigrad.ops.activation import erf  # NumPy has no error function; this one is vectorised

mg.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)


def gradient_of(f, x):
    """f(x) and df/dx for an array x, each element on its own (f is elementwise)."""
    t = mg.tensor(x, requires_grad=True)
    f(t).sum().backward()
    return f(mg.tensor(x)).numpy(), t.grad.numpy()


# %% [markdown]
# `gradient_of` runs minigrad's own operation and gets the derivative from the engine.
# For an **elementwise** $f$, summing the outputs and calling `backward()` gives exactly
# $f'(x_i)$ in position $i$: each output depends on its own input only.
#
# ## 1. Four activations and their derivatives
#
# | name | $f(x)$ | $f'(x)$ |
# | --- | --- | --- |
# | ReLU | $\max(x, 0)$ | $1$ if $x > 0$, else $0$ |
# | sigmoid | $\sigma(x) = \dfrac{1}{1 + e^{-x}}$ | $\sigma(x)\,(1 - \sigma(x))$ |
# | tanh | $\tanh x$ | $1 - \tanh^2 x$ |
# | GELU | $x\,\Phi(x)$ | $\Phi(x) + x\,\varphi(x)$ |
#
# $\Phi$ is the cumulative distribution function of the standard normal and $\varphi$
# its density (section 2). Note that sigmoid's and tanh's derivatives are written with
# their **output**: their backward saves the output, not the input.
#
# **Predict, then run.** At $x = 5$, which of the four still passes on a useful gradient
# (say more than $0.1$)? And at $x = -5$?

# %%
xs = np.array([-5.0, -2.0, -0.5, 0.0, 0.5, 2.0, 5.0])
print(f"{'x':>10}" + "".join(f"{x:8.1f}" for x in xs))
for name, f in [("relu", F.relu), ("sigmoid", F.sigmoid), ("tanh", F.tanh), ("gelu", F.gelu)]:
    values, slopes = gradient_of(f, xs)
    print(f"{name:>7} f " + "".join(f"{v:8.4f}" for v in values))
    print(f"{'':>7} f'" + "".join(f"{s:8.4f}" for s in slopes))

# %% [markdown]
# **Saturation.** sigmoid and tanh flatten out on both sides: at $|x| = 5$ their
# derivatives are $0.0066$ and $0.0002$, so almost no gradient flows back through a unit
# whose input is that large, whatever the loss says. Through ten such layers it is
# multiplied ten times (sigmoid's derivative is at most $0.25$): this is the *vanishing
# gradient*. ReLU does not saturate for $x > 0$ (slope exactly 1), but is flat for every
# $x < 0$: a unit whose input is always negative never learns again ("dead ReLU").
# GELU is a smooth ReLU: nearly $x$ for large $x$, nearly $0$ for very negative $x$,
# with a small dip below zero around $x \approx -0.75$ and a gradient that is not
# exactly zero for $x < 0$: at $x = -5$ it is about $-7 \times 10^{-6}$, which the table
# rounds to `-0.0000` (the minus sign is the only trace of it).
#
# minigrad says `0` for ReLU's derivative at exactly $x = 0$, as PyTorch does (any
# value in $[0, 1]$ would be a valid "subgradient").
#
# ## 2. GELU, exact and approximate
#
# $\Phi(x) = P(Z \le x)$ for a standard normal $Z$: with the error function,
#
# $$\Phi(x) = \tfrac12\bigl(1 + \operatorname{erf}(x / \sqrt 2)\bigr), \qquad
#   \varphi(x) = \Phi'(x) = \frac{e^{-x^2/2}}{\sqrt{2\pi}}.$$
#
# GELU is $f(x) = x\,\Phi(x)$: a **product** of $x$ and a function of $x$, so the
# product rule gives two terms,
#
# $$f'(x) = \Phi(x) + x\,\varphi(x).$$
#
# Before `erf` was fast everywhere, GELU's authors also gave a cheaper approximation,
# which PyTorch computes with `F.gelu(x, approximate='tanh')`:
#
# $$f(x) \approx \tfrac12 x\Bigl(1 + \tanh\bigl(\sqrt{2/\pi}\,(x + 0.044715\,x^3)
#   \bigr)\Bigr).$$
#
# It is close, but not equal: models trained with one give slightly different numbers
# with the other, so it matters which one a checkpoint was trained with.

# %%
x = np.linspace(-3, 3, 7)
exact = F.gelu(mg.tensor(x)).numpy()
approx = F.gelu(mg.tensor(x), approximate="tanh").numpy()
print(f"x      {x}")
print(f"exact  {exact}")
print(f"tanh   {approx}")
print(f"largest difference: {np.abs(exact - approx).max():.1e}")

# %% [markdown]
# A difference of about $10^{-4}$ to $10^{-3}$: far too large to pass a check at
# $10^{-6}$, so an exact GELU whose backward uses the tanh formula's derivative is a
# bug the check below finds.
#
# ### Exercise 1 (2 points): `MyGELU`
#
# Write the exact GELU as a `Function`: `forward` computes $x\,\Phi(x)$ with `erf` and
# saves what backward needs; `backward` returns `grad_output` times
# $\Phi(x) + x\,\varphi(x)$. `math.sqrt` and `math.pi` are there for the constants.

# %% tags=["solution:mygelu"]
class MyGELU(mg.Function):
    """y = x Phi(x);  dy/dx = Phi(x) + x phi(x)"""

    @staticmethod
    def forward(ctx, x):
        # BEGIN SOLUTION
        cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
        ctx.save_for_backward(x, cdf)
        return x * cdf
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, cdf = ctx.saved_tensors
        pdf = np.exp(-0.5 * x**2) / math.sqrt(2 * math.pi)
        return grad_output * (cdf + x * pdf)
        # END SOLUTION


# %% [markdown]
# The check compares your `MyGELU` with `F.gelu` (the exact one) on inputs in
# $[-4, 4]$, with a random upstream gradient, and names the mistakes listed in
# `GELU_MISTAKES` (in `minigrad/exercises/losses.py`; read it after solving).

# %% tags=["tests:mygelu:2"]
check_function(MyGELU, inputs=[[(4, 5)], [(7,)]], reference=lambda x: F.gelu(x),
               domain=(-4.0, 4.0), mistakes=GELU_MISTAKES)
### BEGIN HIDDEN TESTS
check_function(MyGELU, inputs=[[(2, 3, 4)], [(9,)]], reference=lambda x: F.gelu(x),
               domain=(-6.0, 6.0), mistakes=GELU_MISTAKES, seed=8)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-saturation"]
# ### Question (2 points, graded by your teacher)
#
# Why do sigmoid and tanh make the gradient vanish in a deep network, and why does ReLU
# not, for positive inputs? What is a "dead" ReLU? Answer in the cell below, in a few
# sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: names that the derivatives of sigmoid and tanh go to zero for large $|x|$
#   (and sigmoid's is at most $0.25$), that backward multiplies the gradient by one such
#   factor per layer so the product shrinks geometrically, and that ReLU's slope is
#   exactly 1 for $x > 0$ but 0 for $x < 0$, so a unit whose input is always negative
#   never gets a gradient again.
# - 1 point: the saturation of sigmoid and tanh, or the dead ReLU, but not both; or
#   saturation without the product over layers.
# - 0 points: neither.
#
# A full answer names: (1) $\sigma' = \sigma(1 - \sigma) \le 0.25$ and $\tanh' = 1 -
# \tanh^2$ both tend to 0 as $|x|$ grows (about $0.0066$ and $0.0002$ at $|x| = 5$): the
# units saturate; (2) the chain rule multiplies the gradient by $f'$ at every layer, so
# many factors below 1 make it vanish; (3) ReLU's derivative is exactly 1 for $x > 0$
# (no shrinking) and 0 for $x < 0$; (4) a ReLU whose input is negative for every example
# passes no gradient back, so its weights never change: it is dead. Accept "the gradient
# is multiplied by the activation's slope at each layer" for (2); do not accept
# "sigmoid's output is between 0 and 1" as the reason.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-saturation:2"]
# Backward multiplies the gradient by the activation's derivative at every layer. The
# sigmoid's derivative $\sigma(1 - \sigma)$ is at most $0.25$ and tanh's $1 - \tanh^2$
# is at most 1, and both fall towards 0 when $|x|$ is large (about $0.007$ and $0.0002$
# at $|x| = 5$), so a saturated unit lets almost nothing through, and a product of many
# such factors shrinks geometrically with depth: the vanishing gradient. ReLU's
# derivative is exactly 1 for every positive input, so it does not shrink the gradient
# at all there. For negative inputs it is 0, though: a unit whose input is negative for
# every example passes no gradient back, its weights never change, and it stays off for
# good, which is what a dead ReLU is.

# %% [markdown]
# ## 3. Softmax, and why the textbook formula overflows
#
# Softmax turns a row of $K$ scores (logits) into probabilities:
#
# $$s_j = \frac{e^{x_j}}{\sum_k e^{x_k}}.$$
#
# **Predict, then run.** The logits `[1000, 1001, 1002]` are perfectly ordinary
# numbers. What does the formula above give for them in float64?

# %%
logits = np.array([1000.0, 1001.0, 1002.0])
with np.errstate(over="ignore", invalid="ignore"):
    exps = np.exp(logits)
    naive = exps / exps.sum()
print(f"exp(logits):   {exps}")
print(f"naive softmax: {naive}")

# %% [markdown]
# $e^{1000}$ is far beyond float64's largest number (about $1.8 \times 10^{308}$, that is
# $e^{709.8}$), so every exponential is `inf`, and `inf / inf` is `nan`.
#
# The fix: softmax does not change when the same number $c$ is subtracted from every
# logit, because $e^{x_j - c} / \sum_k e^{x_k - c} = e^{-c} e^{x_j} / (e^{-c}
# \sum_k e^{x_k})$. Take $c = \max_k x_k$: then the largest exponent is $e^0 = 1$ (no
# overflow), and the sum is at least $1$ (no division by zero).

# %%
shifted = logits - logits.max()
stable = np.exp(shifted) / np.exp(shifted).sum()
print(f"logits - max: {shifted}")
print(f"stable softmax: {stable}")
print(f"F.softmax:      {F.softmax(mg.tensor(logits), dim=-1).numpy()}")

# %% [markdown]
# The same trick makes **log-softmax** stable, with $m = \max_k x_k$:
#
# $$\log s_j = x_j - \log\sum_k e^{x_k} = (x_j - m) - \log\sum_k e^{x_k - m}.$$
#
# Never compute `log(softmax(x))`: for logits far apart, $s_j$ underflows to $0$ and its
# log is $-\infty$, while the formula above gives the right finite number.

# %%
far = np.array([0.0, 800.0])
with np.errstate(divide="ignore"):
    print(f"log(softmax(x)): {np.log(F.softmax(mg.tensor(far), dim=-1).numpy())}")
print(f"log_softmax(x):  {F.log_softmax(mg.tensor(far), dim=-1).numpy()}")

# %% [markdown]
# ### The backward of softmax
#
# Shapes first: one row $x$ of $K$ logits gives a row $s$ of $K$ probabilities, and
# *each* $s_j$ depends on *every* $x_i$ through the shared denominator. So the
# derivative is a $K \times K$ matrix (the Jacobian):
#
# $$\frac{\partial s_j}{\partial x_i} = s_j\,(\delta_{ij} - s_i),$$
#
# where $\delta_{ij}$ is $1$ if $i = j$ and $0$ otherwise. On the diagonal that is
# $s_i(1 - s_i)$, the sigmoid-like term; off the diagonal it is $-s_i s_j$. Backward
# gets $g = \partial L / \partial s$ (shape $(K,)$) and must return
#
# $$\frac{\partial L}{\partial x_i} = \sum_j g_j\, s_j (\delta_{ij} - s_i)
#   = s_i\Bigl(g_i - \sum_j g_j s_j\Bigr).$$
#
# No $K \times K$ matrix is needed: one sum per row. For a batch of rows, the sum runs
# over the softmax dimension, with `keepdims=True` so it lines up with its row.
#
# ### Exercise 2 (3 points): `MySoftmax`
#
# Write `MySoftmax.apply(x, dim=-1)`: a stable forward (subtract the maximum along
# `dim`, with `keepdims=True`) that saves the output, and the backward above.

# %% tags=["solution:mysoftmax"]
class MySoftmax(mg.Function):
    """s = exp(x - max) / sum exp(x - max) along dim;  dL/dx = s (g - sum(g s))"""

    @staticmethod
    def forward(ctx, x, dim=-1):
        # BEGIN SOLUTION
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        s = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(s)
        ctx.dim = dim
        return s
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        (s,) = ctx.saved_tensors
        return s * (grad_output - (grad_output * s).sum(axis=ctx.dim, keepdims=True))
        # END SOLUTION


# %% [markdown]
# The check tries rows of ordinary logits and the same rows scaled to $\pm 1000$ (an
# overflow is named, and the message says "with the inputs scaled to +-1000"), with
# `dim=-1` and then `dim=0` (a fixed `axis=-1` somewhere is named there), and names the
# mistakes of `SOFTMAX_MISTAKES`. The upstream gradient is random: with $g$ all ones the gradient of
# softmax is exactly zero (the probabilities always sum to 1), and nearly every wrong
# backward would pass.

# %% tags=["tests:mysoftmax:3"]
check_function(MySoftmax, inputs=[[(4, 5)], [(5, 5)]], kwargs={"dim": -1},
               reference=lambda x, dim: F.softmax(x, dim=dim), large_inputs=True,
               mistakes=SOFTMAX_MISTAKES, more=[({"dim": 0}, [(4, 5)], SOFTMAX_DIM0_MISTAKES)])
### BEGIN HIDDEN TESTS
check_function(MySoftmax, inputs=[[(3, 7)], [(2, 3, 6)]], kwargs={"dim": -1},
               reference=lambda x, dim: F.softmax(x, dim=dim), large_inputs=True,
               mistakes=SOFTMAX_MISTAKES, seed=8,
               more=[({"dim": 0}, [(6, 2)], SOFTMAX_DIM0_MISTAKES), ({"dim": 1}, [(2, 4, 3)])])
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-stable-softmax"]
# ### Question (3 points, graded by your teacher)
#
# Why does `MySoftmax` subtract each row's maximum from the logits before taking the
# exponentials, why does that not change the result, and why should log-softmax never be
# computed as `log(softmax(x))`? Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names the overflow ($e^{1000}$ is `inf` in float64, and `inf / inf` is
#   `nan`); that a common shift cancels between numerator and denominator, and with the
#   maximum the largest exponential is $e^0 = 1$ and the sum is at least 1; and that
#   `softmax` can underflow to 0 for logits far apart, so its log is $-\infty$, while
#   $(x_j - m) - \log\sum_k e^{x_k - m}$ stays finite.
# - 2 points: two of the three.
# - 1 point: one of the three.
# - 0 points: none.
#
# A full answer names: (1) float64 holds numbers up to about $e^{709.8}$, so the
# textbook formula on logits like $1000$ gives `inf / inf = nan`; (2) $e^{x_j - c} /
# \sum_k e^{x_k - c} = e^{x_j} / \sum_k e^{x_k}$ for any $c$, since $e^{-c}$ cancels;
# with $c = \max_k x_k$ every exponent is at most 0 (no overflow) and one term is
# exactly 1 (the sum is at least 1: no division by zero, no log of zero); (3) a
# probability like $e^{-800}$ rounds to 0 and $\log 0 = -\infty$, whereas the
# log-softmax formula with the maximum taken out computes the same value without ever
# forming that tiny number. Accept any constant shift argument for (2) that says why the
# maximum is chosen; do not accept "to normalise the logits" without the overflow.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-stable-softmax:3"]
# The exponentials overflow: float64 cannot hold $e^{1000}$, so softmax of ordinary
# logits like $[1000, 1001, 1002]$ becomes `inf / inf`, which is `nan`. Subtracting the
# same number $c$ from every logit multiplies the numerator and the denominator by the
# same $e^{-c}$, so the probabilities do not change. Choosing $c$ = the row's maximum
# makes every exponent at most 0, so nothing overflows, and the largest term is exactly
# $e^0 = 1$, so the sum is at least 1. For log-softmax, `log(softmax(x))` fails when the
# logits are far apart: the small probability underflows to 0 and its log is $-\infty$,
# while $(x_j - m) - \log \sum_k e^{x_k - m}$ gives the right finite number (for example
# $-800$).

# %% [markdown]
# ## 4. Cross-entropy and its gradient
#
# For a batch of $N$ rows of logits $x$ (shape $(N, K)$) and class indices $y$ (shape
# $(N,)$), cross-entropy is the mean of minus the log-probability of the right class:
#
# $$L = \frac1N \sum_{n} \ell_n, \qquad \ell_n = -\log s_{n, y_n}
#   = -\sum_k q_{nk} \log s_{nk},$$
#
# with $q_n$ the one-hot row of $y_n$. Its gradient comes from log-softmax's: for one
# row, $\partial \log s_j / \partial x_i = \delta_{ij} - s_i$, so
#
# $$\frac{\partial \ell_n}{\partial x_{ni}} = -\sum_k q_{nk}(\delta_{ki} - s_{ni})
#   = s_{ni}\sum_k q_{nk} - q_{ni} = s_{ni} - q_{ni},$$
#
# because each $q_n$ sums to $1$. With the mean's $1/N$:
#
# $$\frac{\partial L}{\partial x} = \frac{\mathrm{softmax}(x) - \mathrm{onehot}(y)}{N},
#   \qquad \text{shape } (N, K).$$
#
# Everything that makes the exponentials dangerous has cancelled: the gradient is a
# difference of probabilities, between $-1/N$ and $1/N$.
#
# PyTorch's `F.cross_entropy` has two options that change $q$ and $N$:
#
# - **`ignore_index`** (default $-100$): rows whose target equals it are left out: no
#   loss, no gradient, and they are **not counted** in the mean. $N$ becomes the number
#   of kept rows. (Padding tokens in a batch of sentences are the usual use.)
# - **`label_smoothing`** $= \varepsilon$: the target is not one-hot but
#   $q = (1 - \varepsilon)\,\mathrm{onehot}(y) + \varepsilon / K$, that is
#   $\varepsilon/K$ on *every* class, the right one included. The gradient is still
#   $(s - q) / N$, since the derivation above only used $\sum_k q_{nk} = 1$.

# %%
x = mg.tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3], [1.0, 1.0, 1.0]])
y = np.array([0, 1, -100])
print(f"all three rows:      {F.cross_entropy(x, np.array([0, 1, 2])).item():.4f}")
print(f"third row ignored:   {F.cross_entropy(x, y).item():.4f}")
print(f"mean of rows 0, 1:   {F.cross_entropy(x[:2], y[:2]).item():.4f}")
print(f"label_smoothing=0.1: {F.cross_entropy(x, y, label_smoothing=0.1).item():.4f}")

# %% [markdown]
# The loss with the third row ignored is the mean over the two kept rows only.
#
# ### Exercise 3 (2 points): `smoothed_targets`
#
# Write the targets $q$ as PyTorch defines them, as a plain NumPy function:
# `smoothed_targets(target, n_classes, ignore_index, label_smoothing)` gets the class
# indices `target` (shape $(N,)$, integers) and returns $q$ of shape $(N, K)$:
# $(1 - \varepsilon)\,\mathrm{onehot} + \varepsilon / K$ on each kept row, and a row of
# zeros where `target == ignore_index`. `np.eye(K)[labels]` gives one-hot rows; mind that
# an ignored target like $-1$ or $-100$ is not a class you can index with.

# %% tags=["solution:smoothedtargets"]
def smoothed_targets(target, n_classes, ignore_index, label_smoothing):
    """q = (1 - eps) onehot(target) + eps / K, zero rows where target == ignore_index"""
    # BEGIN SOLUTION
    keep = target != ignore_index
    onehot = np.eye(n_classes)[np.where(keep, target, 0)]
    q = (1 - label_smoothing) * onehot + label_smoothing / n_classes
    return q * keep[:, None]
    # END SOLUTION


# %% [markdown]
# The check tries plain targets, ignored rows (with `ignore_index` $-1$ and $-100$), and
# a smoothing of $0.1$ and $0.3$, against PyTorch's definition
# (`reference_smoothed_targets` in `minigrad/exercises/losses.py`).

# %% tags=["tests:smoothedtargets:2"]
plain, ignored = np.array([1, 0, 4, 2, 3, 1]), np.array([1, -1, 4, -1, 3, 1])
check_array_function(smoothed_targets, [(plain, 5, -100, 0.0), (ignored, 5, -1, 0.0),
                                        (plain, 5, -100, 0.1), (ignored, 5, -1, 0.3),
                                        (np.array([2, -100, 0]), 3, -100, 0.1)],
                     reference=reference_smoothed_targets, mistakes=SMOOTHED_TARGETS_MISTAKES)
### BEGIN HIDDEN TESTS
check_array_function(smoothed_targets, [(np.array([6, 0, 3, 3, 5, 1, 2]), 7, -100, 0.25),
                                        (np.array([0, 9, 2, 9, 1]), 4, 9, 0.05),
                                        (np.array([3, 3]), 4, -100, 0.0)],
                     reference=reference_smoothed_targets, mistakes=SMOOTHED_TARGETS_MISTAKES)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `smoothed_targets`? `from minigrad.course import use_reference; use_reference("smoothedtargets")`
# in a new cell loads the reference answer: `MyCrossEntropy` below uses it.*
#
# ### Exercise 4 (3 points): the backward of `MyCrossEntropy`
#
# The forward below is written for you: it computes log-softmax stably, takes the
# targets `q` from your `smoothed_targets` (zero rows where the target is ignored), and
# saves the probabilities `probs`, `q`, the mask of kept rows `ctx.keep` and their
# number `ctx.count`. Write `backward`: the gradient for the logits is
# $g\,(s - q) / N_\text{kept}$, with zero rows where the target is ignored (`q` is zero
# there already, `probs` is not). Here $g$ is `grad_output`: the loss is one number, so
# `grad_output` is a 0-d array (shape `()`) that multiplies the whole $(N, K)$ gradient.
# `target` is a constant: its gradient is `None`.

# %% tags=["solution:mycrossentropy"]
class MyCrossEntropy(mg.Function):
    """mean over kept rows of -sum q log softmax(x);  dL/dx = (softmax - q) / N_kept"""

    @staticmethod
    def forward(ctx, x, target, ignore_index=-100, label_smoothing=0.0):
        shifted = x - x.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        q = smoothed_targets(target, x.shape[1], ignore_index, label_smoothing)
        ctx.keep = target != ignore_index
        ctx.count = max(int(ctx.keep.sum()), 1)  # PyTorch gives nan when all are ignored
        ctx.save_for_backward(np.exp(log_probs), q)
        return -(q * log_probs).sum() / ctx.count

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        probs, q = ctx.saved_tensors
        grad = grad_output * (probs * ctx.keep[:, None] - q) / ctx.count
        return grad, None
        # END SOLUTION


# %% [markdown]
# `check_loss` compares with `F.cross_entropy` (also at logits of $\pm 1000$) and
# names a factor of the batch size as a sum/mean mix-up; then it tries a target with
# ignored rows (with their own classic mistakes) and a label smoothing of $0.1$.

# %% tags=["tests:mycrossentropy:3"]
target = np.array([1, 0, 4, 2, 3, 1])
with_ignored = np.array([1, -1, 4, -1, 3, 1])
uses = {"smoothed_targets": "minigrad.exercises.losses:reference_smoothed_targets"}
check_loss(MyCrossEntropy, inputs=[(6, 5), target],
           reference=lambda x, t, **kw: F.cross_entropy(x, t, **kw),
           mistakes=CROSS_ENTROPY_MISTAKES, uses=uses,
           more=[({"ignore_index": -1}, [(6, 5), with_ignored], ignore_index_mistakes(-1)),
                 ({"label_smoothing": 0.1}, [(6, 5), target], label_smoothing_mistakes(0.1))])
### BEGIN HIDDEN TESTS
other_target, other_ignored = np.array([2, 0, 3, 3, 1, 0, 2, 1, 3]), np.array([2, 7, 3, 7, 1])
check_loss(MyCrossEntropy, inputs=[(9, 4), other_target],
           reference=lambda x, t, **kw: F.cross_entropy(x, t, **kw),
           mistakes=CROSS_ENTROPY_MISTAKES, seed=8, uses=uses,
           more=[({"ignore_index": 7}, [(5, 4), other_ignored], ignore_index_mistakes(7)),
                 ({"label_smoothing": 0.3}, [(9, 4), other_target],
                  label_smoothing_mistakes(0.3))])
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyCrossEntropy`? `from minigrad.course import use_reference; use_reference("mycrossentropy")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# One step of gradient descent on the logits should raise the right class's
# probability in every kept row, and leave the ignored row alone:

# %%
logits = mg.tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3], [1.0, 1.0, 1.0]], requires_grad=True)
labels = np.array([2, 0, -100])
MyCrossEntropy.apply(logits, labels).backward()
print(f"gradient:\n{logits.grad.numpy()}")
with mg.no_grad():
    before = F.softmax(logits, dim=1).numpy()
    after = F.softmax(logits - 1.0 * logits.grad, dim=1).numpy()
print(f"p(right class) before: {before[[0, 1], [2, 0]]}, after: {after[[0, 1], [2, 0]]}")
print(f"row 2 (ignored) before: {before[2]}, after: {after[2]}")

# %% [markdown]
# Each kept row of the gradient sums to zero (both $s$ and $q$ sum to one), and its
# only negative entry is the right class: a step *against* the gradient pushes that
# logit up and the others down.
#
# ## 5. Binary cross-entropy with logits
#
# For one output per example, a logit $x$ and a label $y \in [0, 1]$, with
# $p = \sigma(x)$:
#
# $$\ell = -\bigl(y \log p + (1 - y)\log(1 - p)\bigr).$$
#
# Written like that it breaks for large $|x|$: $\sigma(40) = 1$ in float64, so
# $\log(1 - p) = -\infty$. Use $\log\sigma(x) = -\log(1 + e^{-x})$ and
# $\log(1 - \sigma(x)) = -x - \log(1 + e^{-x})$:
#
# $$\ell = (1 - y)\,x + \log(1 + e^{-x}).$$
#
# That still overflows for very negative $x$ ($e^{-x}$ with $x = -1000$). Since
# $\log(1 + e^{-x}) = \max(-x, 0) + \log(1 + e^{-|x|})$, for every $x$:
#
# $$\ell = \max(x, 0) - x\,y + \log\bigl(1 + e^{-|x|}\bigr),$$
#
# where $e^{-|x|} \le 1$: nothing can overflow. Its gradient is short too:
# $\partial \ell / \partial x = \sigma(x) - y$, the binary twin of softmax $-$ onehot.

# %%
x = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
y = np.array([1.0, 1.0, 0.5, 0.0, 0.0])
with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
    p = 1 / (1 + np.exp(-x))
    textbook = -(y * np.log(p) + (1 - y) * np.log(1 - p))
stable = np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))
print(f"textbook: {textbook}")
print(f"stable:   {stable}")
print(f"minigrad: {F.binary_cross_entropy_with_logits(mg.tensor(x), y, reduction='none').numpy()}")

# %% [markdown]
# ### Exercise 5 (2 points): `my_bce_with_logits`
#
# Write the stable formula with minigrad's Tensor operations (so the engine makes the
# backward): `x.relu()` is $\max(x, 0)$, and `.abs()`, `.exp()`, `.log1p()` and
# `.mean()` exist as in PyTorch. Return the **mean** over all elements, as
# `F.binary_cross_entropy_with_logits` does.

# %% tags=["solution:mybcewithlogits"]
def my_bce_with_logits(x, y):
    """mean of max(x, 0) - x y + log(1 + exp(-|x|))"""
    # BEGIN SOLUTION
    return (x.relu() - x * y + (-x.abs()).exp().log1p()).mean()
    # END SOLUTION


# %% [markdown]
# The check calls your function with `x` a float Tensor of shape $(4, 3)$ and `y` an
# **integer Tensor** of the same shape holding 0s and 1s: use it as it is (`x * y` and
# `1 - y` work). `y` is a constant, so only `x` gets a gradient. It compares with
# `F.binary_cross_entropy_with_logits`, then again with the logits scaled to $\pm 1000$,
# where the textbook formula gives `inf` or `nan`, and names the mistakes of
# `BCE_MISTAKES`.

# %% tags=["tests:mybcewithlogits:2"]
labels = np.array([[1, 0, 1], [0, 0, 1], [0, 1, 0], [1, 1, 0]])
check_loss(my_bce_with_logits, inputs=[(4, 3), labels],
           reference=lambda x, y: F.binary_cross_entropy_with_logits(x, y.double()),
           mistakes=BCE_MISTAKES)
### BEGIN HIDDEN TESTS
check_loss(my_bce_with_logits, inputs=[(7,), np.array([0, 1, 1, 0, 1, 0, 0])],
           reference=lambda x, y: F.binary_cross_entropy_with_logits(x, y.double()),
           mistakes=BCE_MISTAKES, seed=8)
check_loss(my_bce_with_logits, inputs=[(2, 5), np.array([[1, 1, 0, 0, 1], [0, 1, 0, 1, 1]])],
           reference=lambda x, y: F.binary_cross_entropy_with_logits(x, y.double()),
           mistakes=BCE_MISTAKES, seed=9)
### END HIDDEN TESTS


# %% [markdown]
# ## Summary
#
# - Activations: ReLU ($f' \in \{0, 1\}$, dead for $x < 0$), sigmoid and tanh (their
#   derivatives written with their output; they **saturate**, $f' \to 0$ for large
#   $|x|$), GELU $= x\,\Phi(x)$ with $f' = \Phi + x\varphi$, and its tanh approximation
#   (`approximate='tanh'`), close but not equal.
# - Softmax and log-softmax: subtract the maximum first; never `log(softmax(x))`. The
#   backward of softmax involves the whole row: $s \odot (g - \sum g \odot s)$.
# - Cross-entropy from logits has the gradient $(\mathrm{softmax} - q) / N$; with
#   `ignore_index`, $N$ counts only the kept rows and ignored rows get zero; with
#   `label_smoothing` $\varepsilon$, $q = (1 - \varepsilon)\,\mathrm{onehot} +
#   \varepsilon / K$.
# - Binary cross-entropy with logits: $\max(x, 0) - xy + \log(1 + e^{-|x|})$, gradient
#   $\sigma(x) - y$.
#
# ## Where this lives in minigrad
#
# - `minigrad/ops/activation.py`: `Softmax`, `LogSoftmax` and `GELU` as Functions (and
#   the vectorised `erf` you used);
# - `minigrad/nn/functional.py`: `F.relu`, `F.sigmoid`, `F.tanh`, `F.gelu`,
#   `F.softmax`, `F.log_softmax`, `F.cross_entropy`, `F.binary_cross_entropy_with_logits`;
# - `minigrad/nn/loss.py`: the same losses as Modules (`nn.CrossEntropyLoss`, ...), and
#   `minigrad/nn/activation.py` the activations (`nn.GELU`, ...).
