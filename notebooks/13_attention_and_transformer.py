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
# # Chapter 13: Attention and a tiny transformer
#
# In a sequence, a position often needs what another position holds: to reverse a
# sequence, the first output must read the last input; to guess the next letter of
# "the ca", the model must read the letters before. **Attention** lets every position
# read a weighted average of all the others, with weights that the model computes from
# the data itself. Stacked with a small feed-forward network, residual connections and
# layer norm (chapter 11), it makes the **transformer**. You will:
#
# 1. derive scaled dot-product attention, $\mathrm{softmax}(QK^\top/\sqrt{d})\,V$, see
#    why the scores are divided by $\sqrt{d}$ ("predict, then run") and why a mask goes
#    in *before* the softmax, then write it, forward and backward, as a Function,
#    `MyAttentionFunction` (exercise 1);
# 2. write the causal mask, which keeps a position from reading the future,
#    `causal_mask` (exercise 2);
# 3. write multi-head attention with PyTorch's packed projection, `MyMultiheadAttention`
#    (exercise 3), and load `nn.MultiheadAttention`'s `state_dict` into it;
# 4. write a pre-norm transformer block, `MyTransformerBlock` (exercise 4), equal to
#    `nn.TransformerEncoderLayer(norm_first=True)`;
# 5. train a tiny transformer to reverse sequences, look at its graph collapsed by layer
#    and at its attention weights as a heatmap;
# 6. train a causal character model on a tiny corpus and sample a few sentences from it.
#
# The four **exercises** (10 points) are cells where you write code (the teacher's copy
# has the answers between two "SOLUTION" marker comments; in the copy handed out to
# students they are replaced by `raise NotImplementedError()`), each followed by a test
# cell that checks your code and, when it is wrong, says which mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 13 my_attention` gives a hint for exercise `my_attention` (a
# nudge first; run it again for the next step), and
# `minigrad-course solution 13 my_attention` the reference answer. Each exercise's ID is
# in its stub's message; chapter 0, section 1, lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.data import (CharTokenizer, make_char_corpus, make_char_lm_dataset,
                           make_sequence_task)
from minigrad.exercises import check_module
from minigrad.exercises.attention import (BLOCK_MISTAKES, MULTIHEAD_MISTAKES, PreNormBlock,
                                          SelfAttention, causal_mask_reference,
                                          check_attention, check_causal_mask, random_mask)
from minigrad.widgets import show

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. Attention: an average whose weights the data chooses
#
# **Shapes first.** $L$ queries, $S$ keys and $S$ values, each a row vector:
# $Q$ is $(L, d)$, $K$ is $(S, d)$ (the same $d$: a query is compared with a key), $V$
# is $(S, d_v)$. Then
#
# $$\underbrace{S_c = \frac{QK^\top}{\sqrt{d}}}_{(L,\,S)}, \qquad
# \underbrace{A = \mathrm{softmax}(S_c)}_{(L,\,S)\text{, over the last axis}}, \qquad
# \underbrace{\mathrm{out} = A\,V}_{(L,\,d_v)}.$$
#
# Row $i$ of the **scores** $S_c$ holds the dot products of query $i$ with every key: how
# well they match. The softmax turns each row into **weights** that are positive and sum
# to 1 over the keys, and output row $i$ is the average of the value rows with those
# weights. In self-attention $Q$, $K$ and $V$ are all computed from the same sequence,
# so each position reads the others.
#
# Two queries and three keys, by hand and with minigrad's
# `F.scaled_dot_product_attention`:

# %%
q = mg.tensor([[1.0, 0.0], [0.0, 2.0]])                # L = 2 queries, d = 2
k = mg.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])    # S = 3 keys
v = mg.tensor([[10.0, 0.0], [0.0, 10.0], [5.0, 5.0]])  # S = 3 values
scores = q @ k.T / math.sqrt(2)
weights = F.softmax(scores, dim=-1)
print(f"scores (L, S):\n{scores.numpy()}")
print(f"weights, each row sums to 1: {weights.numpy().sum(axis=-1)}\n{weights.numpy()}")
print(f"output = weights @ v:\n{(weights @ v).numpy()}")
print(f"F.scaled_dot_product_attention:\n{F.scaled_dot_product_attention(q, k, v).numpy()}")

# %% [markdown]
# Query 0 points along the first axis: it matches keys 0 and 2 best, and its output
# leans towards their values. Query 1 is longer: its scores are further apart and its
# weights more peaked.
#
# **Why divide by $\sqrt{d}$?** A score $q \cdot k = \sum_{j=1}^{d} q_j k_j$ is a sum of
# $d$ products. If the entries are independent with mean 0 and variance 1, each product
# has variance 1 and the sum has variance $d$: its standard deviation grows like
# $\sqrt{d}$.
#
# **Predict, then run.** For $d = 4$, $64$ and $1024$, with 16 keys: what is the
# standard deviation of the raw scores $q \cdot k$, and what is, on average, the largest
# weight of a row (1/16 would be uniform, 1 one-hot)? And once the scores are divided
# by $\sqrt{d}$? By $d$?

# %%
print(f"{'d':>5} {'std of q.k':>11} {'max weight: raw':>16} {'/ sqrt(d)':>10} {'/ d':>7}")
for d in (4, 64, 1024):
    queries, keys = mg.randn(2000, d), mg.randn(16, d)
    raw = queries @ keys.T
    largest = [F.softmax(raw / c, dim=-1).max(dim=-1)[0].mean().item()
               for c in (1.0, math.sqrt(d), d)]
    print(f"{d:5} {raw.std().item():11.2f} {largest[0]:16.3f} {largest[1]:10.3f} "
          f"{largest[2]:7.3f}")

# %% [markdown]
# Raw scores spread like $\sqrt{d}$ (2, 8, 32): at $d = 1024$ almost every row puts
# all its weight on one key. A softmax that saturates has a vanishing gradient (chapter
# 8): the weights could not learn. Divided by $\sqrt{d}$, the scores have a standard
# deviation of 1 whatever $d$, and the weights stay soft. Divided by $d$, they shrink
# towards 0 as $d$ grows and the weights become uniform: every query reads the same
# average.
#
# ## 2. The backward, shapes first
#
# Backward gets $G = \partial L/\partial\,\mathrm{out}$, shape $(L, d_v)$, and goes
# back through the three steps, each a piece you already know ($dA$, $dS$, ... are the
# gradients of the loss for $A$, the scores $S_c$, ...; $S$ alone is the number of keys):
#
# 1. $\mathrm{out} = AV$ is a matrix product (chapter 7):
#    $\;dV = A^\top G\;$ $(S, d_v)$ and $\;dA = G V^\top\;$ $(L, S)$.
# 2. $A = \mathrm{softmax}(S_c)$, row by row over the keys (chapter 8):
#    $\;dS = A \odot \big(dA - \textstyle\sum_{\text{keys}} dA \odot A\big)$, the sum
#    over the last axis with `keepdims=True`, $(L, S)$.
# 3. $S_c = QK^\top/\sqrt{d}$, a matrix product again:
#    $\;dQ = dS\,K/\sqrt{d}\;$ $(L, d)$ and $\;dK = dS^\top Q/\sqrt{d}\;$ $(S, d)$.
#
# Check each shape against its input's: that is how a missing transpose shows. With a
# batch, or a batch and heads, every array gets leading dimensions $(\dots, L, S)$:
# `np.matmul` (`@`) works on the last two and broadcasts the others, and "transpose"
# means swapping the **last two** axes, `np.swapaxes(a, -1, -2)`; `a.T` would reverse
# all of them.
#
# ## 3. Masks: -inf before the softmax
#
# A **mask** says which keys each query may see: a bool array of shape $(L, S)$ (or
# anything that broadcasts to the scores), True where query $i$ may attend to key $j$.
# That is the convention of `F.scaled_dot_product_attention`; `nn.MultiheadAttention`
# uses the opposite one (True = masked out), a classic source of bugs. The scores of the
# forbidden pairs are set to $-\infty$ **before** the softmax: $e^{-\infty} = 0$, so
# those weights are exactly 0, and the softmax shares the whole weight among the allowed
# keys. The backward then needs nothing more: where $A = 0$, $dS = A\odot(\dots) = 0$.
#
# **Predict, then run.** What if the mask were applied *after* the softmax, by zeroing
# the forbidden weights? What do the rows of the weights sum to then?

# %%
scores = mg.randn(4, 4)
allowed = np.tril(np.ones((4, 4), dtype=bool))        # query i may see keys 0..i
before = F.softmax(mg.tensor(np.where(allowed, scores.numpy(), -np.inf)), dim=-1)
after = F.softmax(scores, dim=-1) * mg.tensor(allowed.astype(np.float32))
print(f"masked before the softmax:\n{before.numpy()}\nrow sums {before.numpy().sum(-1)}")
print(f"masked after the softmax:\n{after.numpy()}\nrow sums {after.numpy().sum(-1)}")

# %% [markdown]
# Masked after the softmax, the first rows keep only a part of their weight: the output
# is an average that does not sum to 1, smaller for the early positions (and its
# gradient is wrong too). Masked before, every row sums to 1.
#
# ### Exercise 1 (3 points): `MyAttentionFunction`
#
# Write `forward(ctx, q, k, v, mask)`: `q` $(\dots, L, d)$, `k` $(\dots, S, d)$, `v`
# $(\dots, S, d_v)$ and `mask`, either `None` or a bool array that broadcasts to the
# scores $(\dots, L, S)$ (True = may attend). Scale by `1 / math.sqrt(d)`, put $-\infty$
# where the mask is False (`np.where`), take a stable softmax over the keys (subtract the
# row's maximum, as in chapter 8), and return the weights times `v`; save what backward
# needs. `backward` returns the gradients of `q`, `k` and `v` from section 2, and `None`
# for the mask (a constant).

# %% tags=["solution:my_attention"]
class MyAttentionFunction(mg.Function):
    """out = softmax(q k^T / sqrt(d), masked) v, the softmax over the keys (last axis)"""

    @staticmethod
    def forward(ctx, q, k, v, mask):
        # BEGIN SOLUTION
        scale = 1 / math.sqrt(q.shape[-1])
        scores = q @ np.swapaxes(k, -1, -2) * scale
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = e / e.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(q, k, v, weights)
        ctx.scale = scale
        return weights @ v
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        q, k, v, weights = ctx.saved_tensors
        grad_v = np.swapaxes(weights, -1, -2) @ grad_output
        grad_weights = grad_output @ np.swapaxes(v, -1, -2)
        grad_scores = weights * (grad_weights
                                 - (grad_weights * weights).sum(axis=-1, keepdims=True))
        grad_q = grad_scores @ k * ctx.scale
        grad_k = np.swapaxes(grad_scores, -1, -2) @ q * ctx.scale
        return grad_q, grad_k, grad_v, None
        # END SOLUTION


# %% [markdown]
# The check compares with `F.scaled_dot_product_attention` on three cases, with a random
# upstream gradient: no mask and $L \ne S$ (a missing transpose shows as a shape: the
# check then gives you the case's sizes and the shape of each gradient, and runs your
# Function again where all sizes are equal, to name the mistake), a causal mask with `q`
# and `k` of one shape (also tried as the same Tensor, as in self-attention), and a batch
# of two heads with a random mask that broadcasts to the scores.

# %% tags=["tests:my_attention:3"]
check_attention(MyAttentionFunction)
### BEGIN HIDDEN TESTS
hidden_mask = random_mask((4, 6), seed=8)
check_attention(MyAttentionFunction, seed=8,
                cases=[([(3, 4, 2), (3, 6, 2), (3, 6, 5), None], None),
                       ([(1, 5, 6), (1, 5, 6), (1, 5, 3), causal_mask_reference(5)],
                        causal_mask_reference(5)),
                       ([(2, 1, 4, 3), (2, 1, 6, 3), (2, 1, 6, 4), hidden_mask], hidden_mask)])
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-scale-sqrt-d"]
# ### Question (3 points, graded by your teacher)
#
# Why does attention divide the scores $QK^\top$ by $\sqrt{d}$, and not by $d$, nor by
# nothing at all? Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that a score is a sum of $d$ products, whose variance grows like $d$
#   (standard deviation $\sqrt{d}$); that unscaled scores make the softmax saturate
#   (rows nearly one-hot) so its gradient vanishes and the weights cannot learn; and
#   that $\sqrt{d}$ keeps the spread at 1 whatever $d$, while $d$ shrinks the scores to
#   0 and the weights become uniform.
# - 2 points: two of the three.
# - 1 point: one of the three.
# - 0 points: none.
#
# A full answer names: (1) $q \cdot k = \sum_{j=1}^{d} q_j k_j$: with independent
# entries of mean 0 and variance 1 its variance is $d$, standard deviation $\sqrt{d}$
# (2, 8, 32 for $d$ = 4, 64, 1024); (2) scores that far apart make the softmax nearly
# one-hot, and a saturated softmax has a vanishing gradient (chapter 8), so the
# attention weights cannot learn; (3) dividing by $\sqrt{d}$ gives scores of standard
# deviation 1 for any $d$, soft weights; dividing by $d$ makes them shrink like
# $1/\sqrt{d}$, so the weights become uniform and every query reads the same average. Do
# not accept "to normalise the weights so they sum to 1" (the softmax does that).
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-scale-sqrt-d:3"]
# A score $q \cdot k$ adds up $d$ products; if the entries are independent with mean 0
# and variance 1, the sum has variance $d$, so its spread grows like $\sqrt{d}$ (about
# 32 for $d = 1024$). With such spread the softmax puts almost all the weight on one
# key, and a saturated softmax passes back almost no gradient, so the attention weights
# could not learn. Dividing by $\sqrt{d}$ brings the standard deviation back to 1 for
# any $d$, so the weights stay soft and trainable. Dividing by $d$ would overdo it: the
# scores would shrink towards 0 as $d$ grows, the weights would become uniform, and
# every query would read the same plain average of the values.

# %% [markdown]
# *Stuck on `MyAttentionFunction`? `from minigrad.course import use_reference; use_reference("my_attention")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# `gradcheck` compares your backward with finite differences in float64, here on a batch
# of 2 with a mask, and your Function gives what minigrad's gives:

# %%
q64, k64, v64 = (mg.randn(2, 5, 3, dtype=mg.float64, requires_grad=True) for _ in range(3))
lower = np.tril(np.ones((5, 5), dtype=bool))
print(f"gradcheck: {mg.gradcheck(lambda q, k, v: MyAttentionFunction.apply(q, k, v, lower), [q64, k64, v64])}")
same = np.allclose(MyAttentionFunction.apply(q64, k64, v64, lower).detach().numpy(),
                   F.scaled_dot_product_attention(q64, k64, v64, attn_mask=lower).detach().numpy())
print(f"same as F.scaled_dot_product_attention: {same}")

# %% [markdown]
# minigrad's own attention is the same Function, in `minigrad/ops/attention.py`, with
# dropout on the weights added; it is one node of the graph instead of six (two matrix
# products, a scale, a mask, a softmax and a dropout), and works on the scores in place.
#
# ## 4. The causal mask
#
# A language model predicts each next token from the tokens before it. Trained on whole
# sentences at once, position $i$ must not read positions after $i$, or it would just
# copy the answer. The **causal mask** allows query $i$ to attend to key $j$ only when
# $j \le i$: the lower triangle of an $L \times L$ matrix, diagonal included.
#
# ### Exercise 2 (1 point): `causal_mask`
#
# Write `causal_mask(size)`: a bool array (`dtype=bool`) of shape `(size, size)`, True
# where query $i$ (row) may attend to key $j$ (column). Bool, not 1.0 and 0.0:
# `F.scaled_dot_product_attention`, as PyTorch's, *adds* a float mask to the scores.

# %% tags=["solution:causal_mask"]
def causal_mask(size):
    """True where key j <= query i: the lower triangle with its diagonal"""
    # BEGIN SOLUTION
    return np.tril(np.ones((size, size), dtype=bool))
    # END SOLUTION


# %% tags=["tests:causal_mask:1"]
check_causal_mask(causal_mask)
### BEGIN HIDDEN TESTS
check_causal_mask(causal_mask, sizes=(3, 9, 2))
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-mask-before-softmax"]
# ### Question (3 points, graded by your teacher)
#
# Why is a mask applied by putting $-\infty$ in the scores *before* the softmax, rather
# than by zeroing the forbidden weights after it? And why does a language model trained
# on whole sentences at once need the causal mask? Answer in the cell below, in a few
# sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that $e^{-\infty} = 0$, so forbidden weights are exactly 0 and the
#   softmax shares the whole weight among the allowed keys (each row still sums to 1,
#   and backward needs nothing more); that zeroing after the softmax leaves rows that
#   sum to less than 1 (a smaller output for early positions, and a wrong gradient); and
#   that without the causal mask position $i$ could read the token it must predict and
#   learn to copy it, which is no use when generating.
# - 2 points: two of the three.
# - 1 point: one of the three.
# - 0 points: none.
#
# A full answer names: (1) masking before: the forbidden scores become $-\infty$, their
# exponentials 0, and the normalisation runs over the allowed keys only, so every row of
# weights sums to 1; in backward $dS = A \odot (\dots)$ is 0 where $A$ is 0; (2) masking
# after: the weight the forbidden keys had is simply lost, rows sum to less than 1,
# early positions get a shrunken average, and the gradient is that of another function;
# (3) a causal model predicts token $i + 1$ at position $i$; if position $i$ could
# attend to later positions it could read the answer, the training loss would fall by
# copying, and at generation time the next token is not there yet. Accept "softmax
# renormalises over the allowed keys" for (1); do not accept "the two are the same up to
# a constant".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-mask-before-softmax:3"]
# Putting $-\infty$ in a forbidden score makes its exponential exactly 0, so the softmax
# divides only among the allowed keys: the forbidden weights are 0 and every row still
# sums to 1, and backward needs no special case because the gradient through a zero
# weight is zero. Zeroing the weights after the softmax instead throws away the share
# the forbidden keys had, so rows sum to less than 1 and the early positions get a
# shrunken average, with a gradient that belongs to that wrong function. A language
# model trained on a whole sentence predicts, at every position, the next token; without
# the causal mask a position could read that next token and simply copy it, so the
# training loss would drop without the model learning anything useful for generation,
# where the next token does not exist yet.

# %% [markdown]
# *Stuck on `causal_mask` or `MyAttentionFunction`? `from minigrad.course import use_reference; use_reference("causal_mask")`
# (or `use_reference("my_attention")`) in a new cell loads the reference answer, so the
# cells below run (then it is not counted as yours).*
#
# **Predict, then run.** Self-attention over a sequence of 5 positions ($Q = K = V = x$).
# We change the **last** position of $x$. Which output rows change without a mask? And
# with the causal mask?

# %%
print(causal_mask(5).astype(int))
x = mg.randn(5, 3)
changed = x.numpy().copy()
changed[-1] += 1.0
for name, mask in (("no mask", None), ("causal mask", causal_mask(5))):
    out = MyAttentionFunction.apply(x, x, x, mask).numpy()
    out2 = MyAttentionFunction.apply(*[mg.tensor(changed)] * 3, mask).numpy()
    print(f"{name:>12}: rows that changed {np.flatnonzero(~np.isclose(out, out2).all(axis=1))}")

# %% [markdown]
# Without a mask every row reads the last position, so every row changes. With the
# causal mask only the last row does: the first four positions cannot see it. That is
# what lets a model be trained to predict every next token of a sentence in one pass.
#
# ## 5. Multi-head attention
#
# One attention averages with one set of weights per query. **Multi-head** attention runs
# $H$ of them side by side, each on its own projections of the input, so that one head
# can follow, say, the previous token while another finds a matching word. For an
# input $x$ of shape $(N, L, E)$ (a batch of $N$ sequences of $L$ vectors of $E$
# features, `batch_first=True`) and $H$ heads of $d = E/H$ features:
#
# 1. project: $q = xW_q^\top + b_q$, $k = xW_k^\top + b_k$, $v = xW_v^\top + b_v$, each
#    $(N, L, E)$;
# 2. split each into heads: $(N, L, E) \to (N, L, H, d) \to (N, H, L, d)$;
# 3. attend in every head at once (the leading $(N, H)$ broadcast): $(N, H, L, d)$, with
#    the scale $1/\sqrt{d}$ of a head;
# 4. join the heads: $(N, H, L, d) \to (N, L, H, d) \to (N, L, E)$;
# 5. project once more with `out_proj`, a `Linear(E, E)`, which mixes what the heads
#    found.
#
# **PyTorch's packed projection.** `nn.MultiheadAttention` keeps $W_q$, $W_k$, $W_v$ in
# one parameter, `in_proj_weight` of shape $(3E, E)$, rows $[0, E)$ for the queries,
# $[E, 2E)$ for the keys, $[2E, 3E)$ for the values (each block a `Linear` weight,
# (out, in)), and their biases in `in_proj_bias` $(3E,)$: one matrix product projects all
# three at once.

# %%
mha = nn.MultiheadAttention(8, 2, batch_first=True)
for name, value in mha.state_dict().items():
    print(f"{name:>18}: {tuple(value.shape)}")

# %% [markdown]
# **Splitting the heads.** Each position's $E$ features must be cut into $H$ groups of
# $d$: that is `reshape(N, L, H, d)`, which keeps the position axis where it is; then
# `transpose(1, 2)` brings the heads forward.
#
# **Predict, then run.** One sequence of $L = 3$ positions with $E = 4$ features
# (position $p$ holds $10p, 10p+1, 10p+2, 10p+3$), $H = 2$ heads. What does head 0 hold
# after `reshape(1, 3, 2, 2).transpose(1, 2)`? And after the tempting shortcut,
# `reshape(1, 2, 3, 2)`, straight to $(N, H, L, d)$?

# %%
positions = (10 * np.arange(3)[:, None] + np.arange(4)).reshape(1, 3, 4)
print(f"x (1, 3, 4):\n{positions[0]}")
print(f"head 0, reshape then transpose:\n{positions.reshape(1, 3, 2, 2).transpose(0, 2, 1, 3)[0, 0]}")
print(f"head 0, reshape alone:\n{positions.reshape(1, 2, 3, 2)[0, 0]}")

# %% [markdown]
# With the transpose, head 0 holds features 0 and 1 of each of the 3 positions: 3 rows,
# one per position, as attention expects. The bare reshape has the same shape but cuts
# the numbers in reading order: its "position 1" row is the second half of position 0,
# its "position 2" row the first half of position 1, and head 1 gets the rest. Nothing
# fails, the shapes fit: the layer just computes something else. The same goes for
# joining the heads back.
#
# ### Exercise 3 (3 points): `MyMultiheadAttention`
#
# Write `MyMultiheadAttention(embed_dim, num_heads)`, self-attention with PyTorch's
# parameters: in `__init__`, `in_proj_weight` $(3E, E)$ (as PyTorch:
# `nn.init.xavier_uniform_`), `in_proj_bias` $(3E,)$ (zeros) as `nn.Parameter`s, and
# `out_proj = nn.Linear(embed_dim, embed_dim)`. `forward(x, is_causal=False)` takes
# $x$ $(N, L, E)$ and returns the output $(N, L, E)$: the five steps above, from minigrad
# operations (`F.linear` does $xW^\top + b$; slicing `t[..., a:b]`; `reshape`,
# `transpose`). For step 3 use `F.scaled_dot_product_attention(q, k, v,
# is_causal=is_causal)`, minigrad's version of your exercise 1, which takes the causal
# mask as a flag and divides the scores by $\sqrt{d}$ itself.

# %% tags=["solution:my_multihead_attention"]
class MyMultiheadAttention(nn.Module):
    """Self-attention with nn.MultiheadAttention's parameters (batch_first=True)"""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        # BEGIN SOLUTION
        self.in_proj_weight = nn.Parameter(
            nn.init.xavier_uniform_(mg.empty(3 * embed_dim, embed_dim)))
        self.in_proj_bias = nn.Parameter(mg.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        # END SOLUTION

    def forward(self, x, is_causal=False):
        # BEGIN SOLUTION
        n, length, e = x.shape
        qkv = F.linear(x, self.in_proj_weight, self.in_proj_bias)  # (N, L, 3E)

        def split(t):  # (N, L, E) -> (N, L, H, d) -> (N, H, L, d)
            return t.reshape(n, length, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = split(qkv[..., :e]), split(qkv[..., e:2 * e]), split(qkv[..., 2 * e:])
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
        return self.out_proj(heads.transpose(1, 2).reshape(n, length, e))
        # END SOLUTION


# %% [markdown]
# The check loads the `state_dict` of an `nn.MultiheadAttention(8, 2, batch_first=True)`
# (its parameters moved away from their initial values, so a forgotten bias shows) into
# your layer and compares outputs and gradients on a batch of 2 sequences of 5, without
# and with `is_causal=True`.

# %% tags=["tests:my_multihead_attention:3"]
uses = {"MyAttentionFunction": "minigrad.exercises.attention:ReferenceAttentionFunction",
        "causal_mask": "minigrad.exercises.attention:causal_mask_reference"}
check_module(MyMultiheadAttention, SelfAttention, args=(8, 2),
             inputs=[[(2, 5, 8)], [(2, 5, 8), True]], mistakes=MULTIHEAD_MISTAKES, uses=uses)
### BEGIN HIDDEN TESTS
check_module(MyMultiheadAttention, SelfAttention, args=(12, 3),
             inputs=[[(3, 4, 12)], [(1, 6, 12), True]], mistakes=MULTIHEAD_MISTAKES, seed=8,
             uses=uses)
check_module(MyMultiheadAttention, SelfAttention, args=(6, 1), inputs=[[(2, 3, 6), True]],
             seed=9, uses=uses)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyMultiheadAttention`? `from minigrad.course import use_reference; use_reference("my_multihead_attention")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Your layer holds exactly PyTorch's parameters, so a state dict goes both ways: here
# `mha`'s loads into yours, and the two agree. `nn.MultiheadAttention` also returns the
# attention weights, averaged over the heads, $(N, L, S)$:

# %%
mine = MyMultiheadAttention(8, 2)
mine.load_state_dict(mha.state_dict())
x = mg.randn(2, 5, 8)
theirs, attention_weights = mha(x, x, x)
print(f"same output: {np.allclose(mine(x).detach().numpy(), theirs.detach().numpy(), atol=1e-6)}")
print(f"weights {tuple(attention_weights.shape)}, each row sums to 1: "
      f"{np.allclose(attention_weights.detach().numpy().sum(-1), 1)}")

# %% [markdown]
# ## 6. A pre-norm transformer block
#
# A transformer block is attention, where the positions exchange information, followed
# by a small **feed-forward** network,
# $\mathrm{mlp}(h) = W_2\,\mathrm{relu}(W_1 h + b_1) + b_2$, applied to each position on
# its own (usually with $4E$ hidden units). Each of the two
# is wrapped in a residual connection with a layer norm (chapter 11). In the **pre-norm**
# block, used by GPT-2 and most transformers since, the norm is applied to the input of
# each sublayer, and the residual adds to $x$ itself:
#
# $$x \leftarrow x + \mathrm{attn}(\mathrm{norm}_1(x)), \qquad
# x \leftarrow x + \mathrm{mlp}(\mathrm{norm}_2(x)).$$
#
# The original Transformer (2017) was **post-norm**, $x \leftarrow \mathrm{norm}_1(x +
# \mathrm{attn}(x))$: there every block renormalises the sum, so the gradient must go
# through a layer norm at each block on its way down. In pre-norm, the path
# $x \to x + \dots \to x + \dots$ is a pure identity from the first block to the last (a
# residual path as in chapter 11), which is why deep pre-norm stacks train without
# careful warm-up. PyTorch's `nn.TransformerEncoderLayer` does both: post-norm by default,
# pre-norm with `norm_first=True`.
#
# ### Exercise 4 (3 points): `MyTransformerBlock`
#
# Write `MyTransformerBlock(d_model, nhead, dim_feedforward)` with PyTorch's names, so
# that `nn.TransformerEncoderLayer`'s state dict loads: `self_attn` (your
# `MyMultiheadAttention`), `linear1` (from $E$ to `dim_feedforward` features), `linear2`
# (back to $E$), `norm1`, `norm2` (`nn.LayerNorm(d_model)`). `forward(x, is_causal=False)`: the two
# pre-norm steps above, with a ReLU between `linear1` and `linear2`, passing `is_causal`
# on to the attention.
#
# *`self_attn` is your `MyMultiheadAttention` of exercise 3: if it is not done yet,
# `from minigrad.course import use_reference; use_reference("my_multihead_attention")` loads the reference one.
# The check judges this exercise on its own: with a wrong `MyMultiheadAttention` it runs on the
# reference one and tells you to fix exercise 3 first.*

# %% tags=["solution:my_transformer_block"]
class MyTransformerBlock(nn.Module):
    """x = x + self_attn(norm1(x)); x = x + linear2(relu(linear1(norm2(x))))"""

    def __init__(self, d_model, nhead, dim_feedforward):
        super().__init__()
        # BEGIN SOLUTION
        self.self_attn = MyMultiheadAttention(d_model, nhead)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        # END SOLUTION

    def forward(self, x, is_causal=False):
        # BEGIN SOLUTION
        x = x + self.self_attn(self.norm1(x), is_causal)
        return x + self.linear2(F.relu(self.linear1(self.norm2(x))))
        # END SOLUTION


# %% [markdown]
# The check compares with `nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
# batch_first=True, norm_first=True)` (parameters moved, state dict loaded into yours),
# without and with `is_causal=True`.

# %% tags=["tests:my_transformer_block:3"]
uses = {"MyMultiheadAttention": "minigrad.exercises.attention:ReferenceMultiheadAttention"}
check_module(MyTransformerBlock, PreNormBlock, args=(8, 2, 16),
             inputs=[[(2, 5, 8)], [(2, 5, 8), True]], mistakes=BLOCK_MISTAKES, uses=uses)
### BEGIN HIDDEN TESTS
check_module(MyTransformerBlock, PreNormBlock, args=(12, 3, 20),
             inputs=[[(3, 4, 12)], [(1, 6, 12), True]], mistakes=BLOCK_MISTAKES, seed=8,
             uses=uses)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyTransformerBlock`? `from minigrad.course import use_reference; use_reference("my_transformer_block")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# ## 7. A tiny transformer that reverses sequences
#
# `make_sequence_task` makes random sequences of 8 digits (0-9), and the target of
# `"reverse"` at position $i$ is the input at position $7 - i$. Every output position
# must read exactly one other position: a job for attention.
#
# The model: each token becomes a vector (`nn.Embedding`, chapter 12), to which a
# learned vector of its **position** is added, since attention itself does not know the
# order (it averages a set); one of your blocks; a final layer norm; and a `Linear` that
# gives the scores of the 10 digits at every position. $E = 32$, 2 heads.
#
# *The model is built from your `MyTransformerBlock`: if it is not done yet,
# `from minigrad.course import use_reference; use_reference("my_transformer_block")` loads the reference one
# (and `use_reference("my_multihead_attention")` the layer inside it).*

# %%
class TinyTransformer(nn.Module):
    """tokens (N, L) -> embeddings + positions -> blocks -> norm -> scores (N, L, vocab)"""

    def __init__(self, vocab_size, max_len, d_model=32, nhead=2, num_layers=1,
                 causal=False):
        super().__init__()
        self.causal = causal
        self.token = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([MyTransformerBlock(d_model, nhead, 4 * d_model)
                                     for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def embed(self, ids):
        return self.token(ids) + self.position(mg.arange(ids.shape[1]))

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, self.causal)
        return self.head(self.norm(x))


def train(model, inputs, targets, steps, batch_size, lr=0.01, every=20):
    """Adam on random batches (seeded), cross-entropy at every position."""
    optimizer = mg.optim.Adam(model.parameters(), lr=lr)
    vocab = model.head.out_features
    for step in range(steps + 1):
        rows = np.random.default_rng(step).integers(0, len(inputs), batch_size)
        scores = model(mg.tensor(inputs[rows]))
        loss = F.cross_entropy(scores.reshape(-1, vocab), mg.tensor(targets[rows].reshape(-1)))
        if step % every == 0:
            print(f"step {step:4}: loss {loss.item():.4f}")
        if step < steps:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss


inputs, targets = make_sequence_task(2000, seq_len=8, vocab_size=10, task="reverse", seed=0)
test_inputs, test_targets = make_sequence_task(500, seq_len=8, vocab_size=10,
                                               task="reverse", seed=1)
print(f"an input {inputs[0]} and its target {targets[0]}")
mg.manual_seed(0)
reverser = TinyTransformer(vocab_size=10, max_len=8)
loss = train(reverser, inputs, targets, steps=100, batch_size=64)
with mg.no_grad():
    predicted = reverser(mg.tensor(test_inputs)).argmax(dim=-1).numpy()
print(f"test accuracy per token {(predicted == test_targets).mean():.1%}, "
      f"whole sequences right {(predicted == test_targets).all(axis=1).mean():.1%}")

# %% [markdown]
# A hundred steps, about a second, and the 500 test sequences (never seen in training)
# come out reversed. Here is the graph of one loss, grouped by layer
# (`show(..., collapse_groups=True)`): `Module.__call__` puts the nodes each module makes
# into a group named by its path. A layer made of operations only (an `Embedding`, a
# `Linear`, a `LayerNorm`) is collapsed into one box; the groups that hold other modules,
# `blocks`, `blocks.0` and `blocks.0.self_attn`, are frames around their nodes. Inside
# the attention you can follow your exercise 3 step by step: the packed projection (one
# `Linear` for q, k and v, $(64, 8, 96)$), the three slices, each split into heads
# (`Reshape`, `Permute`), the one attention node, the heads joined, and `out_proj`. Then
# the two residual `Add`s of the block, and the feed-forward part.

# %%
show(loss, collapse_groups=True, names=reverser)

# %% [markdown]
# **Predict, then run.** Which key will query 0 attend to? And query 7? We give the
# trained block's attention parameters to an `nn.MultiheadAttention` (the same state
# dict) to get its weights per head (`average_attn_weights=False`), averaged over 200
# test sequences, and draw them: rows are queries (output positions), columns keys
# (input positions).

# %%
block = reverser.blocks[0]
viewer = nn.MultiheadAttention(32, 2, batch_first=True)
viewer.load_state_dict(block.self_attn.state_dict())
with mg.no_grad():
    h = block.norm1(reverser.embed(mg.tensor(test_inputs[:200])))
    _, per_head = viewer(h, h, h, average_attn_weights=False)  # (200, 2, 8, 8)
mean_weights = per_head.numpy().mean(axis=0)

figure, axes = plt.subplots(1, 2, figsize=(7, 3.2))
for head, axis in enumerate(axes):
    image = axis.imshow(mean_weights[head], cmap="Blues", vmin=0, vmax=1)
    axis.set_title(f"head {head}")
    axis.set_xlabel("key (input position)")
axes[0].set_ylabel("query (output position)")
figure.colorbar(image, ax=axes, shrink=0.8)
plt.show()

# %% [markdown]
# The anti-diagonal: query $i$ puts nearly all its weight on key $7 - i$, exactly the
# input it must output. Nobody told the model; the gradient found it, through the
# softmax's backward you wrote in exercise 1. Both heads learned the same pattern here
# (one would do); on harder tasks heads specialise.
#
# ## 8. A causal character model
#
# The same model with `causal=True` becomes a small **language model**: trained to
# predict, at every position, the next character of a text, each position seeing only
# the characters up to itself. `make_char_corpus` writes sentences from a tiny grammar
# ("the small cat sat on the mat."), `CharTokenizer` turns characters into ids, and
# `make_char_lm_dataset` cuts the text into windows of 32 characters whose target is the
# same window shifted by one.

# %%
text = make_char_corpus(400, seed=0)
tokenizer = CharTokenizer(text)
windows, next_chars = make_char_lm_dataset(text, 32, tokenizer)
print(f"{len(text)} characters, {tokenizer.vocab_size} distinct, {len(windows)} windows")
print(f"a window: {tokenizer.decode(windows[0])!r}\nits target: {tokenizer.decode(next_chars[0])!r}")
mg.manual_seed(0)
writer = TinyTransformer(tokenizer.vocab_size, max_len=32, causal=True)
loss = train(writer, windows, next_chars, steps=300, batch_size=32, every=50)

# %% [markdown]
# To write, the model predicts the next character of "the ", we draw one from its
# softmax, append it, and repeat, always feeding the last 32 characters (seeded, so the
# text is the same at every run):

# %%
ids = list(tokenizer.encode("the "))
sampler = np.random.default_rng(0)
with mg.no_grad():
    for _ in range(120):
        scores = writer(mg.tensor(np.array([ids[-32:]])))[0, -1]
        probabilities = F.softmax(scores.double(), dim=-1).numpy()
        ids.append(int(sampler.choice(len(probabilities), p=probabilities / probabilities.sum())))
print(tokenizer.decode(ids))

# %% [markdown]
# After 300 steps, real words in the grammar's order (other seeds still show slips). Without
# the causal mask, each position could read the next character, the very one it must
# predict: the training loss would fall towards 0 by copying, which is no help for
# writing, where the next character is not there yet. Try `causal=False`.
#
# ## Summary
#
# - Attention: $\mathrm{softmax}(QK^\top/\sqrt{d})\,V$, the softmax over the keys, each
#   row of weights summing to 1. The $\sqrt{d}$ keeps the scores' spread at 1 whatever
#   the dimension, so the softmax does not saturate.
# - Its backward is chapter 7's matmul twice and chapter 8's softmax: $dV = A^\top G$,
#   $dA = GV^\top$, $dS = A\odot(dA - \sum dA\odot A)$, $dQ = dS\,K/\sqrt{d}$,
#   $dK = dS^\top Q/\sqrt{d}$.
# - A mask puts $-\infty$ in the scores **before** the softmax. The causal mask (lower
#   triangle, diagonal included) keeps each position from seeing the future. Mind the
#   convention: True = may attend in `F.scaled_dot_product_attention`, True = masked out
#   in `nn.MultiheadAttention`.
# - Multi-head attention: the packed `in_proj_weight` $(3E, E)$, heads split by
#   `reshape(N, L, H, d).transpose(1, 2)` and joined back the same way, then `out_proj`.
# - A pre-norm block: $x + \mathrm{attn}(\mathrm{norm}_1(x))$, then
#   $x + \mathrm{mlp}(\mathrm{norm}_2(x))$; the residual path is an identity.
# - With positions added to the token embeddings, one block learns to reverse
#   sequences (its attention is the anti-diagonal), and a causal one learns to spell.
#
# ## Where this lives in minigrad
#
# | yours | minigrad | PyTorch |
# | --- | --- | --- |
# | `MyAttentionFunction` | `ScaledDotProductAttention` in `minigrad/ops/attention.py` (with dropout, in place), `F.scaled_dot_product_attention` in `minigrad/nn/functional.py` | `F.scaled_dot_product_attention` |
# | `causal_mask` | `is_causal=True` in `F.scaled_dot_product_attention` | `is_causal=True`, `nn.Transformer.generate_square_subsequent_mask` |
# | `MyMultiheadAttention` | `MultiheadAttention` in `minigrad/nn/attention.py` (cross-attention, padding masks, weights) | `nn.MultiheadAttention` |
# | `MyTransformerBlock` | `TransformerEncoderLayer(norm_first=True)` in `minigrad/nn/transformer.py` | `nn.TransformerEncoderLayer` |
# | the data | `make_sequence_task`, `make_char_corpus`, `CharTokenizer`, `make_char_lm_dataset` in `minigrad/data/datasets.py` | |
#
# Open `minigrad/ops/attention.py`: its `backward` is section 2's three steps, with
# dropout's mask in the middle. The next chapter, **14 Execution modes**, looks at how
# minigrad runs all this: `no_grad`, `inference_mode` and lazy mode.
