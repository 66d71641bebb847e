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
# # Chapter 12: Sequences: embeddings, RNNs and LSTMs
#
# Text, sound and time series come as **sequences**: the meaning of a character depends
# on the ones before it. A recurrent network reads a sequence one step at a time and
# carries a **hidden state** from each step to the next, a summary of everything it has
# read so far. This chapter builds the pieces of a character-level language model, the
# network that reads "the small cat sat on the" and guesses the next character, and
# follows the gradient back through time. You will:
#
# 1. turn characters into vectors with an **embedding**, which is indexing, and write its
#    backward, a scatter-add over repeated tokens, `MyEmbeddingFunction` (exercise 1);
# 2. write an RNN layer with PyTorch's parameters, unrolled over the time steps,
#    `MyRNN` (exercise 2);
# 3. follow **backpropagation through time**: the gradient reaching the first step is a
#    product of one Jacobian per step, which vanishes or explodes ("predict, then run"
#    over 50 steps, `GradientFlow`), and see what gradient clipping does about it;
# 4. write one step of an **LSTM**, whose cell state gives the gradient a gentler path,
#    with PyTorch's gate order, `lstm_cell` (exercise 3);
# 5. build a small character model, write the sampler that makes it write text,
#    `generate` (exercise 4), and train the model on the built-in corpus with truncated
#    backpropagation through time, sampling as it learns.
#
# The four **exercises** (10 points) are cells where you write code (the teacher's copy
# has the answers between two "SOLUTION" marker comments; in the copy handed out to
# students they are replaced by `raise NotImplementedError()`), each followed by a test
# cell that checks your code and, when it is wrong, says which mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 12 lstm_cell` gives a hint for exercise `lstm_cell` (a nudge
# first; run it again for the next step), and `minigrad-course solution 12 lstm_cell` the
# reference answer. Each exercise's ID is in its stub's message; chapter 0, section 1,
# lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.data import CharTokenizer, make_char_corpus, make_char_lm_dataset
from minigrad.exercises import check_function
from minigrad.exercises.sequences import (EMBEDDING_MISTAKES, check_generate,
                                          check_lstm_cell, check_rnn)
from minigrad.widgets import GradientFlow

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. Characters as numbers
#
# minigrad has a small built-in corpus, sentences from a tiny grammar ("the [adjective]
# animal verb preposition the place."), so that a model small enough to train here in a
# few seconds has something to learn: spelling, word order, and where the full stop goes.
# A `CharTokenizer` numbers its characters (the sorted set of characters of the text):

# %%
text = make_char_corpus(500, seed=0)
tokenizer = CharTokenizer(text)
print(text[:120])
print(f"{len(text)} characters; {tokenizer}")
ids = tokenizer.encode("the cat")
print(f"encode('the cat') = {ids}, decode gives back {tokenizer.decode(ids)!r}")

# %% [markdown]
# A language model predicts the next character from the ones before it. Its training
# pairs come from sliding a window over the text: `make_char_lm_dataset(text, 8)` gives
# every run of 8 characters as an input, and the same run shifted by one character as its
# target, so that `y[i, t]` is the character that follows `x[i, :t + 1]`:

# %%
x_windows, y_windows = make_char_lm_dataset(text, block_size=8, tokenizer=tokenizer)
print(f"x {x_windows.shape}, y {y_windows.shape}")
print(f"x[0] {tokenizer.decode(x_windows[0])!r} -> y[0] {tokenizer.decode(y_windows[0])!r}")

# %% [markdown]
# ## 2. An embedding is indexing
#
# A character id is a name, not a quantity: id 14 is not "more" than id 7. So the first
# layer gives each id its own vector, a row of a learned table, the **embedding**
# `weight` of shape $(V, D)$ ($V$ = `num_embeddings`, the vocabulary's size; $D$ =
# `embedding_dim`). A batch of ids `indices` of shape $(N, L)$ becomes the vectors
# `weight[indices]`, of shape $(N, L, D)$: chapter 6's integer indexing, nothing more.
# (It is also the product of one-hot vectors with `weight`, without building them.)
#
# **Its backward** is chapter 6's rule: each row of `weight` gets the gradient of every
# place it was read, **added up**. In a sentence the same character comes back again and
# again ("the cat sat on the mat" reads `t` five times), so here repeated indices are
# the rule, not the exception:
#
# $$\frac{\partial L}{\partial\,\text{weight}[v]} = \sum_{(n, l)\,:\,\text{indices}[n, l] = v}
# \frac{\partial L}{\partial\,\text{out}[n, l]}.$$
#
# Rows of characters absent from the batch get zero.
#
# ### Exercise 1 (2 points): `MyEmbeddingFunction`
#
# Write `forward(ctx, weight, indices)` (the table first, as in `weight[indices]`;
# PyTorch's `F.embedding(input, weight)` takes them the other way round), where
# `indices` is an integer array of any shape, and `backward`, which returns the
# gradient for `weight` and `None` for the indices (integers have no gradient).

# %% tags=["solution:my_embedding"]
class MyEmbeddingFunction(mg.Function):
    """out = weight[indices]; backward scatter-adds each vector's gradient to its row"""

    @staticmethod
    def forward(ctx, weight, indices):
        # BEGIN SOLUTION
        ctx.weight_shape, ctx.indices = weight.shape, indices
        return weight[indices]
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        grad_weight = np.zeros(ctx.weight_shape, dtype=grad_output.dtype)
        np.add.at(grad_weight, ctx.indices, grad_output)
        return grad_weight, None
        # END SOLUTION


# %% [markdown]
# The check reads a $(6, 4)$ table with a batch of two sequences that repeat tokens
# (within a sequence and across the two), and with a 1-D index that reads one row three
# times, against minigrad's `F.embedding`:

# %% tags=["tests:my_embedding:2"]
check_function(MyEmbeddingFunction,
               inputs=[[(6, 4), np.array([[1, 3, 1, 5], [0, 0, 2, 1]])],
                       [(6, 4), np.array([2, 2, 2, 0])]],
               reference=lambda weight, indices: F.embedding(indices, weight),
               mistakes=EMBEDDING_MISTAKES, exact_shapes=True)
### BEGIN HIDDEN TESTS
check_function(MyEmbeddingFunction,
               inputs=[[(9, 3), np.array([[8, 0, 8], [4, 4, 4], [1, 8, 2]])],
                       [(5, 7), np.array([3])],
                       [(4, 2), np.array([[[0, 1], [1, 1]], [[3, 3], [2, 0]]])]],
               reference=lambda weight, indices: F.embedding(indices, weight),
               mistakes=EMBEDDING_MISTAKES, exact_shapes=True, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyEmbeddingFunction`? `from minigrad.course import use_reference; use_reference("my_embedding")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Your Function on the ids of "the cat sat" (`t` three times, `a` twice): the
# gradient of the table's row for `t`, for a loss that sums every vector, is 3 in each
# column, and `gradcheck` agrees in float64:

# %%
table = mg.randn(tokenizer.vocab_size, 4, dtype=mg.float64, requires_grad=True)
sentence = tokenizer.encode("the cat sat")
MyEmbeddingFunction.apply(table, sentence).sum().backward()
for ch in "tac":
    print(f"row of {ch!r}: gradient {table.grad.numpy()[tokenizer.stoi[ch]]}")
print(f"gradcheck: {mg.gradcheck(lambda w: MyEmbeddingFunction.apply(w, sentence), [table])}")

# %% [markdown]
# ## 3. A recurrent layer, unrolled
#
# An **RNN** (Elman's) reads $x_1, \dots, x_L$ one step at a time. At step $t$ it mixes
# the new input with its previous hidden state:
#
# $$h_t = \tanh\big(x_t W_{ih}^{\top} + b_{ih} + h_{t-1} W_{hh}^{\top} + b_{hh}\big),
# \qquad h_0 = 0 \text{ unless given.}$$
#
# **Shapes first**, for a batch of $N$ sequences: $x_t$ is $(N, I)$ (`input_size` $I$),
# $h_t$ is $(N, H)$ (`hidden_size` $H$), so $W_{ih}$ is $(H, I)$ and $W_{hh}$ is
# $(H, H)$, in chapter 7's layout (out, in), and both biases are $(H,)$. The **same**
# weights serve every step: that is what lets one layer read sequences of any length.
# PyTorch names them `weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0` (`l0`:
# layer 0 of a possible stack). Two biases are one too many (only their sum matters), but
# PyTorch has both, so a state dict from PyTorch has both.
#
# `nn.RNN(I, H, batch_first=True)` takes $x$ as $(N, L, I)$ and returns **two** things:
# `output`, every step's hidden state, $(N, L, H)$, and `h_n`, the last one, shaped
# $(\text{num\_layers}, N, H)$ = $(1, N, H)$ (so that a stack of layers can return one
# per layer). The loop over time is written out ("unrolled"): one step, then the next,
# each reading the state the one before it wrote. The graph that autograd records is this
# unrolled loop, $L$ copies of the cell sharing one set of weights.
#
# ### Exercise 2 (3 points): `MyRNN`
#
# Write `__init__`: the four parameters with PyTorch's names and shapes, each drawn
# uniform in $\pm 1/\sqrt{H}$ (`mg.empty(...).uniform_(-k, k)`, as PyTorch); and
# `forward(x, h0=None)` for `batch_first` input $(N, L, I)$: start from `h0[0]` (or zeros
# $(N, H)$), loop over the $L$ steps with the formula above, and return
# `(output, h_n)`, with `output` the steps' hidden states stacked along dim 1
# (`mg.stack(..., dim=1)`; `output[:, t]` is the state after reading `x[:, t]`, so
# `output[:, -1]` is the last state) and `h_n` of shape $(1, N, H)$. Every weight is
# used transposed, `x @ W.T`, as in chapter 7's `Linear`.

# %% tags=["solution:my_rnn"]
class MyRNN(nn.Module):
    """h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), one layer, as nn.RNN"""

    def __init__(self, input_size, hidden_size, batch_first=True):
        super().__init__()
        self.hidden_size = hidden_size
        # BEGIN SOLUTION
        k = 1 / hidden_size ** 0.5
        self.weight_ih_l0 = nn.Parameter(mg.empty(hidden_size, input_size).uniform_(-k, k))
        self.weight_hh_l0 = nn.Parameter(mg.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.bias_ih_l0 = nn.Parameter(mg.empty(hidden_size).uniform_(-k, k))
        self.bias_hh_l0 = nn.Parameter(mg.empty(hidden_size).uniform_(-k, k))
        # END SOLUTION

    def forward(self, x, h0=None):
        # BEGIN SOLUTION
        h = h0[0] if h0 is not None else mg.zeros(x.shape[0], self.hidden_size)
        outputs = []
        for t in range(x.shape[1]):
            h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0
                 + h @ self.weight_hh_l0.T + self.bias_hh_l0).tanh()
            outputs.append(h)
        return mg.stack(outputs, dim=1), h.unsqueeze(0)
        # END SOLUTION


# %% [markdown]
# The check gives your layer the state dict of an `nn.RNN(3, 5, batch_first=True)`, then
# compares `output`, `h_n` and the gradients of the four parameters, of the input and of
# `h0` (random upstream gradients for both outputs), on a batch without `h0` and one with:

# %% tags=["tests:my_rnn:3"]
check_rnn(MyRNN)
### BEGIN HIDDEN TESTS
check_rnn(MyRNN, input_size=6, hidden_size=2, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyRNN`? `from minigrad.course import use_reference; use_reference("my_rnn")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Loaded with the same weights, your layer and minigrad's `nn.RNN` agree on a longer
# sequence too (minigrad's computes every step's $x_t W_{ih}^\top$ in one product before
# the loop, since it does not depend on $h$; only $h_{t-1} W_{hh}^\top$ has to wait):

# %%
rnn = nn.RNN(3, 5, batch_first=True)
mine = MyRNN(3, 5)
mine.load_state_dict(rnn.state_dict())
x = mg.randn(2, 20, 3)
(out_mine, h_mine), (out_theirs, h_theirs) = mine(x), rnn(x)
print(f"output {tuple(out_mine.shape)}, h_n {tuple(h_mine.shape)}")
print(f"same output: {np.allclose(out_mine.detach().numpy(), out_theirs.detach().numpy(), atol=1e-6)}, "
      f"same h_n: {np.allclose(h_mine.detach().numpy(), h_theirs.detach().numpy(), atol=1e-6)}")

# %% [markdown]
# ## 4. Backpropagation through time
#
# Backward through the unrolled loop is called **backpropagation through time** (BPTT),
# but it is nothing new: the engine walks the graph of the $L$ steps back from the loss,
# as it walks any graph. What is worth seeing is what happens to the gradient on the way.
#
# Step $t$ computes $h_t = \tanh(z_t)$ with $z_t = h_{t-1} W_{hh}^\top + \dots$, so, for
# one row of the batch, its Jacobian with respect to the previous state is
#
# $$J_t = \frac{\partial h_t}{\partial h_{t-1}} = \operatorname{diag}(1 - h_t^2)\, W_{hh}
# \quad (H \times H),$$
#
# and a loss that reads only the last state sends back to the first one the product of
# all of them (the chain rule, once per step):
#
# $$\frac{\partial L}{\partial h_1} = \frac{\partial L}{\partial h_L}\, J_L\, J_{L-1}
# \cdots J_2 .$$
#
# For row vectors that is, from the end: $g \leftarrow (g \odot (1 - h_t^2))\, W_{hh}$,
# for $t = L, \dots, 2$. Let us do it by hand on 6 steps, and compare with what the
# engine leaves in `h_1.grad` (`retain_grad()`, chapter 4, keeps a non-leaf's gradient):

# %%
mg.manual_seed(1)
H = 4
W_hh = mg.randn(H, H) * 0.6
W_hh.requires_grad = True
inputs = mg.randn(6, 1, H)
h, states = mg.zeros(1, H), []
for t in range(6):
    h = (inputs[t] + h @ W_hh.T).tanh()
    h.retain_grad()
    states.append(h)
target = mg.randn(1, H)
loss = (states[-1] * target).sum()          # dL/dh_6 = target
loss.backward()

g = target.numpy()
W = W_hh.detach().numpy()
for t in range(5, 0, -1):                   # h_6 -> h_5 -> ... -> h_1: one Jacobian each
    g = (g * (1 - states[t].detach().numpy() ** 2)) @ W
print(f"by hand, product of 5 Jacobians: {g[0]}")
print(f"the engine's h_1.grad:           {states[0].grad.numpy()[0]}")

# %% [markdown]
# **The size of a product.** Each factor $J_t$ multiplies the gradient's norm by at most
# $\|W_{hh}\|$ times the largest $1 - h_t^2$ (at most 1). Over 50 steps that is about
# 50 factors of the same size: a factor a bit below 1 to the power 50 is tiny, and a bit
# above 1 is huge. Chapter 11 saw this through 20 layers; a recurrent network has a
# "layer" per time step, all with the **same** weight, so the effect is as regular as a
# power.
#
# **Predict, then run.** An RNN with 16 hidden units reads 50 steps of random inputs;
# the loss reads only $h_{50}$. Its recurrent weight is an orthogonal matrix times a
# `gain` (so every direction is stretched by exactly `gain`): $0.5$, then $4$. What is
# the norm of $\partial L/\partial h_1$ compared with that of $\partial L/\partial h_{50}$
# in each case? Ten times smaller? A million times?

# %%
def hidden_state_gradients(gain, steps=50, size=16):
    """Run a tanh RNN whose recurrent weight is gain * (an orthogonal matrix) for `steps`
    steps; the loss reads the last state. Returns the weight and every state, with .grad."""
    rng = np.random.default_rng(0)
    orthogonal, _ = np.linalg.qr(rng.standard_normal((size, size)))
    weight = mg.tensor(gain * orthogonal, requires_grad=True)
    xs = mg.tensor(0.5 * rng.standard_normal((steps, 1, size)))
    h, hs = mg.zeros(1, size, dtype=mg.float64), []
    for t in range(steps):
        h = (xs[t] + h @ weight.T).tanh()
        h.retain_grad()
        hs.append(h)
    (hs[-1] * mg.tensor(rng.standard_normal((1, size)))).sum().backward()
    return weight, hs


norms = {}
for gain in (0.5, 4.0):
    _, hs = hidden_state_gradients(gain)
    norms[gain] = [h.grad.norm().item() for h in hs]
    shown = ", ".join(f"h_{t}: {norms[gain][t - 1]:.1e}" for t in (50, 40, 30, 20, 10, 1))
    print(f"gain {gain}: gradient norm at {shown}")

# %% [markdown]
# With gain $0.5$, $\partial L/\partial h_1$ is about $10^{-19}$ of the gradient at the end:
# the **vanishing gradient**. Whatever the first steps read cannot change the loss in a
# way the gradient can see, so the network cannot learn a dependence over 50 steps. With
# gain $4$ it is $10^{5}$ times larger: the **exploding gradient**; one step of SGD with
# that gradient throws the weights far away. (Not $4^{49}$: the states saturate, and
# $1 - h^2$ shrinks each factor; without tanh the growth would be exactly geometric.)
# On a log scale, both are nearly straight lines, the signature of a power:

# %%
figure, ax = plt.subplots(figsize=(6, 2.8))
for gain, values in norms.items():
    ax.semilogy(range(1, 51), values, marker=".", label=f"gain {gain}")
ax.set_xlabel("step t")
ax.set_ylabel("norm of dL/dh_t")
ax.invert_xaxis()  # backward runs from step 50 to step 1
ax.legend()
ax.grid(alpha=0.3)
plt.show()

# %% [markdown]
# `GradientFlow` (chapter 9) draws any named tensors' gradients, not only a model's:
# here every fifth hidden state, for each gain, with its warnings (a norm below
# $10^{-7}$ or above $10^{3}$):

# %%
_, hs = hidden_state_gradients(0.5)
GradientFlow({f"h_{t}": hs[t - 1] for t in (50, 45, 40, 35, 30, 25, 20, 15, 10, 5, 1)})

# %%
weight, hs = hidden_state_gradients(4.0)
GradientFlow({f"h_{t}": hs[t - 1] for t in (50, 45, 40, 35, 30, 25, 20, 15, 10, 5, 1)})

# %% [markdown]
# **Clipping.** Exploding gradients have a blunt cure, chapter 9's
# `clip_grad_norm_(parameters, max_norm)`: if the gradients' total norm is above
# `max_norm`, scale them all down to it. The direction of the step is kept (all
# gradients are scaled by the same factor), only its length is capped. The recurrent
# weight of the gain-4 network above got a gradient of norm:

# %%
before = weight.grad.numpy().copy()
total = nn.utils.clip_grad_norm_([weight], max_norm=1.0)
after = weight.grad.numpy()
cosine = (before * after).sum() / np.linalg.norm(before) / np.linalg.norm(after)
print(f"norm before clipping {total.item():.3g}, after {np.linalg.norm(after):.3g}, "
      f"cosine between the two {cosine:.4f}")

# %% [markdown]
# The same direction, a step of a sensible length. Clipping by the **total** norm, not
# each parameter on its own, is what keeps the direction when there are several
# parameters (chapter 9). Clipping does nothing for vanishing gradients: there is nothing
# to scale up. For those the cure is in the architecture, as chapter 11's residual
# connections were for depth: the LSTM.
#
# ## 5. The LSTM
#
# A **long short-term memory** cell carries a second state, the **cell** $c_t$, that is
# changed only by multiplying it by a gate and adding to it, with no weight matrix and no
# squashing on the way from $c_{t-1}$ to $c_t$. From one matrix product of the same kind
# as the RNN's, $4H$ pre-activations are split into four blocks of $H$ columns:
#
# $$\begin{aligned}
# a &= x_t W_{ih}^\top + b_{ih} + h_{t-1} W_{hh}^\top + b_{hh} \quad (N, 4H)
#   = [\,a_i \mid a_f \mid a_g \mid a_o\,],\\
# i &= \sigma(a_i),\quad f = \sigma(a_f),\quad g = \tanh(a_g),\quad o = \sigma(a_o),\\
# c_t &= f \odot c_{t-1} + i \odot g, \qquad h_t = o \odot \tanh(c_t).
# \end{aligned}$$
#
# $i$ (input gate) decides how much of the candidate $g$ to write, $f$ (forget gate) how
# much of the old cell to keep, $o$ (output gate) how much of the cell to show as $h$.
# The gates are sigmoids, between 0 and 1 (how much); the candidate is a tanh, between
# $-1$ and $1$ (what). **PyTorch's order of the blocks is $i, f, g, o$**: rows
# $0{:}H$ of `weight_ih_l0` (shape $(4H, I)$) belong to the input gate, $H{:}2H$ to the
# forget gate, $2H{:}3H$ to the candidate, $3H{:}4H$ to the output gate, and the same
# for `weight_hh_l0` $(4H, H)$ and both biases $(4H,)$. Other libraries pack them
# differently (Keras: $i, f, c, o$; TensorFlow's old `LSTMCell`: $i, g, f, o$), and
# weights read in the wrong order give a network that runs without any error and
# computes something else.
#
# Along the cell, $\partial c_t / \partial c_{t-1} = \operatorname{diag}(f)$ (plus
# smaller paths through the gates): a forget gate near 1 passes the gradient on almost
# unchanged, like the identity path of a residual connection.
#
# ### Exercise 3 (3 points): `lstm_cell`
#
# Write one step, `lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh)`, with
# minigrad operations on the Tensors you are given ($x$ $(N, I)$, $h$ and $c$ $(N, H)$,
# the weights in PyTorch's layout), returning `(h_new, c_new)`. Slice the blocks with
# `a[:, k * H:(k + 1) * H]`.

# %% tags=["solution:lstm_cell"]
def lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh):
    """One LSTM step with PyTorch's gate order (i, f, g, o); returns (h_new, c_new)"""
    # BEGIN SOLUTION
    H = h.shape[-1]
    a = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
    i = a[:, :H].sigmoid()
    f = a[:, H:2 * H].sigmoid()
    g = a[:, 2 * H:3 * H].tanh()
    o = a[:, 3 * H:].sigmoid()
    c_new = f * c + i * g
    h_new = o * c_new.tanh()
    return h_new, c_new
    # END SOLUTION


# %% [markdown]
# The check runs one step on a batch of 3 with $I = 4$, $H = 5$ in float64 against
# minigrad's own LSTM step (the one `nn.LSTM` uses), compares `h_new`, `c_new` and the
# gradients of all seven inputs, and names a wrong gate order by the order you used:

# %% tags=["tests:lstm_cell:3"]
check_lstm_cell(lstm_cell)
### BEGIN HIDDEN TESTS
check_lstm_cell(lstm_cell, input_size=2, hidden_size=3, batch=5, seed=8)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-bptt-vanishes"]
# ### Question (3 points, graded by your teacher)
#
# Why does the gradient that reaches the first step of an RNN vanish or explode with the
# length of the sequence? Why can gradient clipping help with the explosion but not with
# the vanishing, and what in the LSTM gives the gradient a gentler path? Answer in the
# cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that $\partial L/\partial h_1$ is a product of one Jacobian
#   $\operatorname{diag}(1 - h_t^2)\,W_{hh}$ per step with the same $W_{hh}$, so it
#   behaves like a power of the length (shrinks below 1, grows above); that clipping
#   scales a too-large gradient down while keeping its direction but has nothing to
#   scale up when it vanished; and that the cell state $c_t = f \odot c_{t-1} + i \odot
#   g$ has no weight matrix and no squashing on its path, $\partial c_t/\partial c_{t-1}
#   = \operatorname{diag}(f)$, so a forget gate near 1 passes the gradient on almost
#   unchanged.
# - 2 points: two of the three.
# - 1 point: one of the three.
# - 0 points: none.
#
# A full answer names: (1) backpropagation through time multiplies the gradient by $J_t
# = \operatorname{diag}(1 - h_t^2)\,W_{hh}$ at every step, and the same $W_{hh}$ comes
# back at each step, so over 50 steps the effect is like a 49th power (gain $0.5$: about
# $10^{-19}$; gain 4: about $10^{5}$, tempered by tanh's saturation); (2)
# `clip_grad_norm_` rescales all gradients by one factor when their total norm is above
# `max_norm`: it caps an exploding step and keeps its direction, but a vanished gradient
# carries no information to scale back up; (3) along the LSTM's cell the gradient is
# multiplied by the forget gate $f$ only, with no $W_{hh}$ and no tanh, like a residual
# identity path. Do not accept "the LSTM has more parameters" or "clipping sets small
# gradients to a minimum".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-bptt-vanishes:3"]
# Backpropagation through time multiplies the gradient by one Jacobian
# $\operatorname{diag}(1 - h_t^2)\,W_{hh}$ per step, and it is the same $W_{hh}$ every
# time, so over $L$ steps the gradient behaves like a power: factors a little below 1
# make it vanish geometrically (about $10^{-19}$ after 50 steps with gain $0.5$),
# factors above 1 make it explode. Clipping rescales the gradients when their total norm
# is too large, which caps an exploding step while keeping its direction; a vanished
# gradient has lost its information, and there is nothing to scale back up. The LSTM's
# cell state is updated as $c_t = f \odot c_{t-1} + i \odot g$, with no weight matrix
# and no squashing between $c_{t-1}$ and $c_t$, so along that path the gradient is only
# multiplied by the forget gate, and a forget gate near 1 carries it back almost
# unchanged, like a residual connection.

# %% [markdown]
# *Stuck on `lstm_cell`? `from minigrad.course import use_reference; use_reference("lstm_cell")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Unrolled over a sequence with an `nn.LSTM`'s weights, your cell gives that layer's
# outputs and final states (the tests of this chapter check the same against PyTorch's
# `nn.LSTM`):

# %%
lstm = nn.LSTM(3, 5, batch_first=True)
x = mg.randn(2, 7, 3)
output, (h_n, c_n) = lstm(x)
weights = [getattr(lstm, name + "_l0") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
h, c, steps = mg.zeros(2, 5), mg.zeros(2, 5), []
for t in range(7):
    h, c = lstm_cell(x[:, t], h, c, *weights)
    steps.append(h)
print(f"same output: {np.allclose(mg.stack(steps, dim=1).detach().numpy(), output.detach().numpy(), atol=1e-6)}, "
      f"same h_n: {np.allclose(h.detach().numpy(), h_n[0].detach().numpy(), atol=1e-6)}, "
      f"same c_n: {np.allclose(c.detach().numpy(), c_n[0].detach().numpy(), atol=1e-6)}")

# %% [markdown]
# ## 6. A character model
#
# The model: an embedding of the 23 characters in 16 dimensions, an LSTM with 48 hidden
# units, and a `Linear` head that turns each hidden state into 23 logits, the scores of
# the next character. It returns its state with the logits, so that a caller can go on
# reading from where it stopped:

# %%
class CharModel(nn.Module):
    """ids (N, L) -> logits (N, L, V) for the next character, and the LSTM's state"""

    def __init__(self, vocab_size, embedding_dim=16, hidden_size=48):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, ids, state=None):
        output, state = self.lstm(self.embed(ids), state)
        return self.head(output), state


mg.manual_seed(0)
model = CharModel(tokenizer.vocab_size)
print(model)
print(f"{sum(p.numel() for p in model.parameters())} parameters")

# %% [markdown]
# **Truncated BPTT.** The corpus is one long text of 14,472 characters. We cut it into
# 32 streams, read side by side as a batch, and read each stream 32 characters at a time.
# The state at the end of one chunk is the start of the next, so the model carries what
# it read across chunks; but the gradient stops at the chunk's start: we **detach** the
# state (chapter 2: a Tensor with the same values and no history) before the next chunk.
# Backward then costs 32 steps, not the whole text.
#
# **Predict, then run.** What happens if the state is not detached, for the second
# chunk's `backward()`?

# %%
batch, chunk = 32, 32
length = len(text) // batch
streams = tokenizer.encode(text)[:batch * length].reshape(batch, length)


def chunk_loss(model, start, state):
    inputs = mg.tensor(streams[:, start:start + chunk])
    targets = mg.tensor(streams[:, start + 1:start + chunk + 1])
    logits, state = model(inputs, state)
    return F.cross_entropy(logits.reshape(-1, tokenizer.vocab_size), targets.reshape(-1)), state


loss, state = chunk_loss(model, 0, None)
loss.backward()
loss, state = chunk_loss(model, chunk, state)  # state NOT detached
try:
    loss.backward()
except RuntimeError as error:
    print(f"RuntimeError: {str(error).split('. Call')[0]}.")
model.zero_grad()

# %% [markdown]
# The second chunk's graph starts at the first chunk's state, so backward walks on into
# the first chunk, whose saved arrays were released by the first `backward()` (chapter
# 4). With `retain_graph=True` it would run, and each chunk's backward would go back to
# the start of the text: ever slower, and with ever longer products of Jacobians. Hence
# `tuple(s.detach() for s in state)` between chunks.

# %% [markdown] tags=["question:why-detach-state"]
# ### Question (2 points, graded by your teacher)
#
# In truncated backpropagation through time, why is the state detached between chunks?
# What happens at the second chunk's `backward()` without the `detach`, and what would
# `retain_graph=True` cost instead? Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: explains that the state carries the first chunk's graph, so without
#   `detach` the second backward walks into the first chunk, whose saved arrays the
#   first backward released (an error), and that `retain_graph=True` would make every
#   backward go back to the start of the text (ever slower, ever longer products of
#   Jacobians); AND that `detach` keeps the values but cuts the history, so the gradient
#   stops at the chunk's start.
# - 1 point: one of the two.
# - 0 points: neither.
#
# A full answer names: (1) the state at the end of chunk 1 is the output of chunk 1's
# graph; chunk 2's graph starts from it, so its backward continues into chunk 1; (2) the
# first `backward()` released chunk 1's saved arrays (chapter 4), so the second one
# raises a `RuntimeError`; (3) with `retain_graph=True` it would run, but every chunk's
# backward would go back to the beginning of the text: more time and memory each chunk,
# and ever longer products of Jacobians; (4) `detach()` gives a tensor with the same
# values and no history: the model still carries what it read across chunks, but
# backward costs one chunk of 32 steps. Do not accept "detach resets the state to zero".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-detach-state:2"]
# The state at the end of a chunk is the output of that chunk's graph, so if it is
# passed on as it is, the next chunk's graph is attached to the previous one and its
# backward walks on into the first chunk. The first `backward()` has already released
# the arrays saved in that chunk, so the second one raises an error. With
# `retain_graph=True` it would run, but then every chunk's backward would go back to the
# very start of the text, getting slower and longer each time, with ever longer products
# of Jacobians. `detach()` keeps the state's values, so the model still carries what it
# has read from one chunk to the next, but cuts its history, so each backward stops at
# the start of its own chunk of 32 steps.

# %% [markdown]
# ## 7. Sampling
#
# Before training it, let us make the model write. It gives, at each position, logits
# for the next character. To **generate**, run the prompt through the model, turn the
# logits at the last position into probabilities, draw a character, append it, and feed
# it back with the state, one character at a time:
#
# $$p = \operatorname{softmax}(\text{logits} / T), \qquad \text{next} \sim p.$$
#
# The **temperature** $T$ divides the logits: $T < 1$ sharpens the distribution (closer
# to always taking the most likely character), $T > 1$ flattens it (more surprising
# choices). Drawing from the seeded global generator, `mg.multinomial(p, num_samples=1)`,
# makes the text reproducible: the same seed gives the same text.
#
# ### Exercise 4 (2 points): `generate`
#
# Write `generate(model, tokenizer, prompt, n, temperature=1.0)`, returning the prompt
# followed by `n` sampled characters (a `str`). The `model` is called as
# `logits, state = model(ids, state)` with `ids` an int tensor of shape $(1, L)$ and
# returns `logits` of shape $(1, L, V)$. Under `mg.no_grad()` (no training here): run the
# whole prompt once; then for each new character, take
# `F.softmax(logits[0, -1] / temperature, dim=-1)`, draw with
# `mg.multinomial(probs, num_samples=1).item()`, and feed that one character back with
# the state.

# %% tags=["solution:generate"]
def generate(model, tokenizer, prompt, n, temperature=1.0):
    """The prompt followed by n characters sampled from the model, one at a time"""
    # BEGIN SOLUTION
    ids = list(tokenizer.encode(prompt))
    with mg.no_grad():
        logits, state = model(mg.tensor([ids]), None)
        for _ in range(n):
            probs = F.softmax(logits[0, -1] / temperature, dim=-1)
            next_id = mg.multinomial(probs, num_samples=1).item()
            ids.append(next_id)
            logits, state = model(mg.tensor([[next_id]]), state)
    return tokenizer.decode(ids)
    # END SOLUTION


# %% [markdown]
# The check runs your sampler and a reference one under the same seed on a small LSTM
# model of its own, for three prompts and temperatures, and wants the same text,
# character for character:

# %% tags=["tests:generate:2"]
check_generate(generate)
### BEGIN HIDDEN TESTS
check_generate(generate, seed=8, cases=(("mat", 20, 0.8), ("the dog", 9, 1.5), ("s", 30, 0.3)))
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `generate`? `from minigrad.course import use_reference; use_reference("generate")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# The untrained model (seeded, so you see the same line) knows nothing yet: every
# character is about as likely as any other.

# %%
mg.manual_seed(0)
model = CharModel(tokenizer.vocab_size)
mg.manual_seed(12)
print(repr(generate(model, tokenizer, "the ", 60)))

# %% [markdown]
# ## 8. Training
#
# Adam at `lr=0.01`, gradients clipped to a total norm of 1 at every step, truncated
# BPTT over the 32 streams: `train(epochs)` makes that many passes over the text, 14
# steps of $32 \times 32$ characters each, and prints each pass's mean loss. Two passes
# at a time, with a line of text after each:

# %%
optimizer = mg.optim.Adam(model.parameters(), lr=0.01)
history, seconds = [], 0.0


def train(epochs):
    """`epochs` passes over the streams, the state carried and detached between chunks"""
    global seconds
    started = time.perf_counter()
    for _ in range(epochs):
        state, losses = None, []
        for start in range(0, length - chunk - 1, chunk):
            if state is not None:
                state = tuple(s.detach() for s in state)   # truncated BPTT
            loss, state = chunk_loss(model, start, state)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            losses.append(loss.item())
        history.append(np.mean(losses))
        print(f"epoch {len(history)}: mean loss {history[-1]:.3f}, last {losses[-1]:.3f}")
    seconds += time.perf_counter() - started


train(2)
mg.manual_seed(12)
print(repr(generate(model, tokenizer, "the ", 60)))

# %% [markdown]
# It has found the frequent characters, the spaces, the full stop and the line break,
# and the word "the". Two more passes:

# %%
train(2)
mg.manual_seed(12)
print(repr(generate(model, tokenizer, "the ", 60)))

# %% [markdown]
# Real words now ("the", "box", "sat", "stood", "on"), some misspelled, not yet in the
# grammar's order. Four more passes, in two cells:

# %%
train(2)

# %%
train(2)
mg.manual_seed(12)
print(repr(generate(model, tokenizer, "the ", 60)))

# %%
# NBVAL_IGNORE_OUTPUT
print(f"trained in {seconds:.1f} s")

# %% [markdown]
# The loss started at $\ln 23 \approx 3.1$ (a uniform guess among 23 characters) and is
# now below 0.3 nats per character. The grammar itself leaves about 0.25: after "the "
# the next word is one of 4 adjectives or 5 animals, which no model can guess; the rest
# (spelling, spaces, "the" before each place, the full stop) is learnable. A longer
# sample:

# %%
mg.manual_seed(12)
print(generate(model, tokenizer, "the small ", 150, temperature=0.8))

# %% [markdown]
# New sentences of the grammar, correctly spelled, with "the" and a full stop in their
# places: in 112 steps the LSTM learned the spelling of its 23 words and where each kind of
# word goes. The temperature decides how adventurous it is:

# %%
for temperature in (0.3, 2.0):
    mg.manual_seed(12)
    print(f"T = {temperature}: {generate(model, tokenizer, 'the ', 60, temperature)!r}")

# %% [markdown]
# At $T = 0.3$ it keeps to its favourite sentences; at $T = 2$ the distribution is so
# flat that unlikely characters come up all the time, and the spelling falls apart.
# $T = 1$ samples from what the model learned.

# %% [markdown]
# ## Summary
#
# - An **embedding** is indexing, `weight[indices]`; its backward adds each vector's
#   gradient to its token's row (`np.add.at`), so a token read many times gets the sum.
# - An **RNN** carries $h_t = \tanh(x_t W_{ih}^\top + b_{ih} + h_{t-1} W_{hh}^\top +
#   b_{hh})$ from step to step with the same weights; PyTorch's layer returns every
#   step's state and $h_n$ $(1, N, H)$.
# - **BPTT** is backward through the unrolled loop. The gradient reaching step 1 is a
#   product of one Jacobian $\operatorname{diag}(1 - h_t^2)\,W_{hh}$ per step: it
#   vanishes or explodes geometrically with the length. Clipping the total norm caps an
#   exploding step without changing its direction; it cannot revive a vanished one.
# - An **LSTM** splits $4H$ pre-activations into gates $i, f, o$ (sigmoid) and a
#   candidate $g$ (tanh), **in PyTorch's order i, f, g, o**, with two biases;
#   $c_t = f c_{t-1} + i g$, $h_t = o \tanh(c_t)$. The cell's path has no weight matrix
#   and no squashing, so its gradient lasts.
# - **Truncated BPTT** carries the state across chunks and detaches it, so that each
#   backward stops at its chunk. **Sampling** divides the logits by the temperature,
#   draws from the softmax, and feeds each character back with the state.
#
# ## Where this lives in minigrad
#
# | yours | minigrad | PyTorch |
# | --- | --- | --- |
# | `MyEmbeddingFunction` | `GetItem` in `minigrad/ops/indexing.py` (its backward is `np.add.at`), used by `F.embedding` in `minigrad/nn/functional.py` and `Embedding` in `minigrad/nn/linear.py` | `nn.Embedding`, `F.embedding` |
# | `MyRNN` | `RNN` (and `RNNCell`) in `minigrad/nn/recurrent.py` | `nn.RNN` |
# | `lstm_cell` | `lstm_step`, used by `LSTM` and `LSTMCell`, in `minigrad/nn/recurrent.py` | `nn.LSTM`, `nn.LSTMCell` |
# | the corpus and tokenizer | `make_char_corpus`, `CharTokenizer`, `make_char_lm_dataset` in `minigrad/data/datasets.py` | (torchtext, Hugging Face tokenizers) |
# | clipping | `clip_grad_norm_` in `minigrad/nn/utils.py` | `nn.utils.clip_grad_norm_` |
# | `generate` | (yours) `mg.multinomial` in `minigrad/tensor.py` | `torch.multinomial` |
# | the gradients drawn | `GradientFlow` in `widgets/gradient_flow.py` | |
#
# Open `minigrad/nn/recurrent.py`: `_run_direction` is your loop, with every step's input
# part computed in one product before it, and `GRU`, a lighter cousin of the LSTM with
# three blocks, is there too. The next chapter replaces the recurrence by attention,
# where every position reads every other one directly, with no product of Jacobians in
# between.
