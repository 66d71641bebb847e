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
# # Chapter 14: Execution modes
#
# Every operation you have run so far did two things at once: it computed its result,
# and it **recorded** a node in the graph, with the arrays its backward will need. That
# is right for training and wasteful everywhere else. This chapter is about the switches
# that change how operations run: whether they are recorded (grad mode), whether they
# are computed now or later (lazy mode), what the graph keeps for backward
# (checkpointing), and how its nodes are named (groups). You will:
#
# 1. see what recording costs, switch it off with `mg.no_grad()` and on again with
#    `mg.enable_grad()`, and write the switch yourself, `my_no_grad` (exercise 1);
# 2. separate the two switches of evaluation, grad mode and `model.eval()`, compare
#    `no_grad` with `inference_mode`, and write `evaluate(model, batches)` (exercise 2);
# 3. measure the activation memory a deep network keeps for backward, trade it for
#    computation with checkpointing, and write the checkpoint Function, `MyCheckpoint`
#    (exercise 3);
# 4. build a graph in lazy mode, read every shape before anything runs, and write
#    `layer_shapes(model, input_shape)` (exercise 4);
# 5. name parts of the graph with groups, and draw a model's graph one box per layer.
#
# The four **exercises** (10 points) are cells where you write code (the teacher's copy
# has the answers between two "SOLUTION" marker comments; in the copy handed out to
# students they are replaced by `raise NotImplementedError()`), each followed by a test
# cell that checks your code and, when it is wrong, says which mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 14 my_no_grad` gives a hint for exercise
# `my_no_grad` (a nudge first; run it again for the next step), and
# `minigrad-course solution 14 my_no_grad` the reference answer. Each exercise's ID is in its stub's message; chapter 0, section 1,
# lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import tracemalloc

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.data import DataLoader, TensorDataset, make_moons
from minigrad.exercises.modes import (activation_bytes, check_checkpoint, check_evaluate,
                                      check_grad_switch, check_grad_switch_deeply,
                                      check_layer_shapes)
from minigrad.widgets import show

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. Grad mode: recording or not
#
# When an input requires grad, `Function.apply` makes a graph node for the operation
# and its forward saves what backward needs (chapter 3). Those saved arrays stay alive
# as long as the output does. Here is a small MLP on a batch of 64; `activation_bytes`
# (from this chapter's checker module) walks the graph behind a tensor with
# `mg.autograd.walk` and adds up the bytes of every node's `saved_arrays()`, leaving out
# the parameters (they are in memory anyway):

# %%
model = nn.Sequential(nn.Linear(100, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 10))
x = mg.randn(64, 100)
out = model(x)
print(f"recorded: grad_fn {out.grad_fn}, requires_grad {out.requires_grad}, "
      f"{activation_bytes(out, model):,} bytes of activations kept for backward")
with mg.no_grad():
    out = model(x)
print(f"no_grad:  grad_fn {out.grad_fn}, requires_grad {out.requires_grad}, "
      f"{activation_bytes(out, model):,} bytes")

# %% [markdown]
# Inside `with mg.no_grad():` the same forward computes the same numbers and records
# nothing: no node, nothing saved, an output that does not require grad. That is what
# you want whenever no backward will follow: evaluating, updating parameters by hand
# (the optimizer's `step` runs under `no_grad`), computing a metric.
#
# The switch is one flag, `mg.is_grad_enabled()`, kept in `minigrad/state.py` with the
# other global modes. Three context managers change it and **restore the previous value
# on exit**: `mg.no_grad()` (off), `mg.enable_grad()` (on, even inside `no_grad`) and
# `mg.set_grad_enabled(flag)`, which also works as a plain call.
#
# **Predict, then run.** What does each `print` show?

# %%
w = mg.randn(3, requires_grad=True)
with mg.no_grad():
    print("1:", mg.is_grad_enabled(), (w * 2).requires_grad)
    with mg.enable_grad():
        print("2:", mg.is_grad_enabled(), (w * 2).requires_grad)
        with mg.no_grad():
            print("3:", mg.is_grad_enabled())
        print("4:", mg.is_grad_enabled())
    print("5:", mg.is_grad_enabled())
print("6:", mg.is_grad_enabled())

# %% [markdown]
# Each block gives back exactly the mode it found: line 4 is on again because the
# inner `no_grad` restored the `enable_grad` it was nested in, and line 5 is off again
# for the same reason. A switch that simply turned recording on at its end would have
# printed `True` at line 5: the outer `no_grad` would stop working halfway through its
# block. `enable_grad` inside `no_grad` is how a function that must record (a training
# step, the recomputation of a checkpoint in section 3) works even when its caller
# switched recording off.
#
# Two tensor methods act on one tensor instead of on every operation:
#
# - `t.detach()` returns a tensor that shares `t`'s array and has no history: a
#   constant, from which nothing flows back into `t`'s graph.
# - `t.requires_grad_()` switches recording on for a leaf, in place: from now on, what
#   is computed from it is recorded. It is how you ask for the gradient with respect to
#   an input, or start again from a detached value.

# %%
h = (w * 3).exp()
c = h.detach()
print(f"detach: shares the array {np.shares_memory(c.numpy(), h.detach().numpy())}, "
      f"grad_fn {c.grad_fn}, requires_grad {c.requires_grad}")
c.requires_grad_()
print(f"requires_grad_: a leaf {c.is_leaf}, requires_grad {c.requires_grad}, "
      f"(c * c).grad_fn {(c * c).grad_fn}")

# %% [markdown]
# ### Exercise 1 (2 points): `my_no_grad`
#
# Write `my_no_grad`, a context manager that switches recording off and restores the
# mode it found, with only `mg.is_grad_enabled()` and `mg.set_grad_enabled(flag)`
# (called as a function it just sets the flag). A class is a context manager when it has
# two methods: `__enter__(self)`, run when the `with` block starts, and
# `__exit__(self, exc_type, exc_value, traceback)`, run when it ends, **also when the
# block raises** (the three arguments describe the exception, or are `None`). If
# `__exit__` returns a true value, Python swallows the exception; return nothing.

# %% tags=["solution:my_no_grad"]
class my_no_grad:
    """Recording off inside the block; the mode found on entry restored on exit."""

    def __enter__(self):
        # BEGIN SOLUTION
        self.previous = mg.is_grad_enabled()
        mg.set_grad_enabled(False)
        # END SOLUTION

    def __exit__(self, exc_type, exc_value, traceback):
        # BEGIN SOLUTION
        mg.set_grad_enabled(self.previous)
        # END SOLUTION


# %% [markdown]
# The check runs your block in seven situations (alone, after it, inside `mg.no_grad()`,
# inside itself, inside `enable_grad` inside `no_grad`, made before it is entered, and
# with an exception raised inside) and compares what `mg.is_grad_enabled()` says.

# %% tags=["tests:my_no_grad:2"]
check_grad_switch(my_no_grad)
### BEGIN HIDDEN TESTS
check_grad_switch_deeply(my_no_grad, depth=5, seed=1)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `my_no_grad`? `from minigrad.course import use_reference; use_reference("my_no_grad")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Your switch and minigrad's are interchangeable:

# %%
with mg.no_grad():
    with my_no_grad():
        inner = (w * 2).requires_grad
    print(f"inside: {inner}, after your block (still in no_grad): {mg.is_grad_enabled()}")
print(f"after both: {mg.is_grad_enabled()}")

# %% [markdown]
# Open `minigrad/state.py`: `no_grad` is your class (it also works as a decorator,
# `@mg.no_grad()` on a function), and lazy mode, groups and anomaly mode are built the
# same way, each flag with a context manager that restores the previous value.
#
# ## 2. Evaluating a model: two independent switches
#
# Evaluation needs two switches, and they do different things:
#
# | switch | what it changes | forgetting it |
# | --- | --- | --- |
# | `with mg.no_grad():` | whether operations are **recorded** (the engine's flag) | the same numbers, but a graph and its saved activations for every batch |
# | `model.eval()` | what **layers** compute: `self.training` on every module (chapter 11) | dropout keeps zeroing units, batch norm uses the batch's statistics: other numbers |
#
# **Predict, then run.** A network with dropout is run four ways on the same input.
# Which outputs are equal to each other?

# %%
mg.manual_seed(1)
net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 2))
sample = mg.randn(1, 4)
with mg.no_grad():
    print(f"train mode, no_grad:     {net(sample).numpy()[0]}")
    print(f"train mode, no_grad:     {net(sample).numpy()[0]}")
net.eval()
print(f"eval mode, recording:    {net(sample).detach().numpy()[0]}")
with mg.no_grad():
    print(f"eval mode, no_grad:      {net(sample).numpy()[0]}")
_ = net.train()

# %% [markdown]
# `no_grad` does not touch dropout: in training mode two runs under `no_grad` still draw
# two masks and disagree. Only `eval()` makes the output deterministic, and then
# recording or not gives the same numbers. So an evaluation loop uses both, and, since a
# training loop usually calls it between epochs, it should give the model back in the
# mode it found it (`model.train(was_training)`), just as `no_grad` gives back the grad
# mode: a training loop that goes on in eval mode trains without dropout, silently.
#
# **`no_grad` or `inference_mode`?** PyTorch has a stricter switch,
# `torch.inference_mode()`. Inside it nothing is recorded either, and in addition the
# tensors it makes are *inference tensors*: PyTorch skips their version counters (a
# little faster), and in exchange refuses to save them for backward in a later recorded
# operation (`w * t` with `w` requiring grad raises `RuntimeError: Inference tensors
# cannot be saved for backward`; `w + t`, whose backward needs neither, is allowed) and
# to change them in place outside the block. Use `inference_mode` for pure inference,
# where nothing computed will ever meet autograd; use `no_grad` when the results may be
# used with recording later (a target computed by another network, a parameter update).
#
# **In minigrad, `mg.inference_mode()` is just `no_grad`**: it switches recording off
# and gives back the mode it found, nothing more. Its results are ordinary tensors, so
# the product PyTorch refuses runs here:

# %%
wi = mg.ones(3, requires_grad=True)
with mg.inference_mode():
    ti = mg.ones(3) * 2
    print(f"inside inference_mode: recording {mg.is_grad_enabled()}")
(wi * ti).sum().backward()  # PyTorch: RuntimeError: Inference tensors cannot be saved ...
print(f"after: recording {mg.is_grad_enabled()}; wi * ti recorded, wi.grad {wi.grad}")

# %% [markdown]
# So minigrad code that uses `inference_mode` can fail once moved to PyTorch: keep it for
# results that never go back into training, and use `no_grad` elsewhere.
#
# ### Exercise 2 (3 points): `evaluate`
#
# Write `evaluate(model, batches)`: `batches` is a list of `(x, y)` pairs (`y` the class
# indices); return `(mean_loss, accuracy)`, two Python floats, each a mean **over the
# samples** (the last batch may be smaller): the mean cross-entropy (`F.cross_entropy`
# gives a batch's mean) and the fraction of samples whose largest logit is the true
# class. Run the model in eval mode and without recording, and give back what you
# changed as you found it: the model's mode, and the grad mode (`evaluate` may itself be
# called where recording is off).

# %% tags=["solution:evaluate"]
def evaluate(model, batches):
    """(mean cross-entropy, accuracy) over all the samples, without recording a graph."""
    # BEGIN SOLUTION
    was_training = model.training
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with mg.no_grad():
        for x, y in batches:
            logits = model(x)
            total_loss += F.cross_entropy(logits, y).item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(y)
    model.train(was_training)
    return total_loss / count, correct / count
    # END SOLUTION


# %% [markdown]
# The check gives your function a classifier with dropout that records, at each
# forward, the grad mode and its training flag; once in training mode and once in eval
# mode, over batches of 8, 8 and 5 samples; then once more inside `mg.no_grad()`.

# %% tags=["tests:evaluate:3"]
check_evaluate(evaluate)
### BEGIN HIDDEN TESTS
check_evaluate(evaluate, seed=8)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-two-switches"]
# ### Question (3 points, graded by your teacher)
#
# Evaluating a model needs both `model.eval()` and `mg.no_grad()`. What does each of
# them change, what goes wrong if you forget one or the other, and why should `evaluate`
# give back both modes as it found them? Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that `no_grad` switches off recording (no graph, no saved
#   activations: same numbers, less memory and time) and that `eval()` changes what
#   layers compute (dropout off, batch norm's running statistics: other numbers), with
#   what forgetting each costs; and that `evaluate` is called in the middle of training,
#   so leaving the model in eval mode (or recording off) silently changes the training
#   that follows.
# - 2 points: what each switch changes, with the consequences, but not why the modes
#   must be given back.
# - 1 point: one switch only, or both without their consequences.
# - 0 points: "both turn off gradients" or nothing correct.
#
# A full answer names: (1) `no_grad` decides whether operations are recorded: forgetting
# it gives the same numbers but builds a graph and keeps its saved activations for every
# batch; (2) `eval()` sets `self.training` to False on every module: dropout stops
# zeroing units, batch norm uses its running statistics; forgetting it gives different,
# random or batch-dependent numbers (`no_grad` does not touch dropout); (3) a training
# loop calls `evaluate` between epochs: a model left in eval mode trains without dropout
# and with frozen batch-norm statistics, silently, and a grad mode left off would record
# nothing; so save `model.training` and the grad mode and restore them. Do not accept
# "`no_grad` also disables dropout".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-two-switches:3"]
# `mg.no_grad()` only decides whether operations are recorded: without it evaluation
# gives the same numbers but builds a graph and keeps the saved activations of every
# batch, wasting memory and time. `model.eval()` changes what the layers compute:
# dropout stops zeroing units and batch norm uses its running statistics; without it the
# outputs are random (dropout) or depend on the batch, even under `no_grad`, which does
# not touch dropout. Both are needed, for different reasons. Because `evaluate` is
# usually called between training epochs, it must put things back as it found them: a
# model left in eval mode would go on training without dropout and with frozen
# batch-norm statistics, with no error to tell you.

# %% [markdown]
# *Stuck on `evaluate`? `from minigrad.course import use_reference; use_reference("evaluate")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# A short training on the two moons, evaluated after each epoch: the model is in
# training mode again after every call, and the numbers are those of eval mode.

# %%
mg.manual_seed(2)
xs, ys = make_moons(n_samples=300, noise=0.15)
train_loader = DataLoader(TensorDataset(xs[:200], ys[:200]), batch_size=32, shuffle=True)
test_batches = [(mg.tensor(xs[200:264]), mg.tensor(ys[200:264])),
                (mg.tensor(xs[264:]), mg.tensor(ys[264:]))]
classifier = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 2))
optimizer = mg.optim.Adam(classifier.parameters(), lr=0.05)
for epoch in range(1, 6):
    for xb, yb in train_loader:
        optimizer.zero_grad()
        F.cross_entropy(classifier(xb), yb).backward()
        optimizer.step()
    loss, accuracy = evaluate(classifier, test_batches)
    print(f"epoch {epoch}: test loss {loss:.4f}, accuracy {accuracy:.1%}, "
          f"training mode after evaluate: {classifier.training}")

# %% [markdown]
# ## 3. Checkpointing: memory for computation
#
# During training, the forward pass keeps, for every layer, what its backward needs: a
# `Linear` keeps its input, a `ReLU` its output. All of it stays alive until backward
# has gone through that layer, so the memory **peaks at the end of the forward pass**,
# and grows with depth and batch size. For a deep MLP (16 blocks of `Linear(128, 128)`
# and `ReLU`, a batch of 512) the bytes held after forward:

# %%
mg.manual_seed(3)
depth, width, batch = 16, 128, 512
blocks = [nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)]
deep = nn.Sequential(*blocks)
inputs = mg.randn(batch, width)
one_activation = batch * width * 4  # a float32 (512, 128) array: 256 KiB
out = deep(inputs)
plain_bytes = activation_bytes(out, deep)
print(f"one activation: {one_activation:,} bytes; kept after forward: {plain_bytes:,} bytes "
      f"= {plain_bytes // one_activation} activations")

# %% [markdown]
# 17 activations: each `Linear` keeps its input and each `ReLU` its output, and a
# `ReLU`'s output *is* the next `Linear`'s input (one array, counted once), so the 16
# `Linear` inputs plus the last `ReLU`'s output. Memory linear in depth (and in batch
# size) is what limits the batch or the depth that fits on a GPU.
#
# **Checkpointing** keeps less and computes more. Cut the network into segments; in the
# forward pass run each segment **without recording**, keeping only its input (the
# *checkpoint*). In the backward pass, when the gradient reaches a segment, run that
# segment's forward again from its saved input, **with** recording, and backpropagate
# through this fresh graph; it is freed before the next segment is recomputed. So at any
# time the memory holds the checkpoints plus one segment's activations. With $L$ blocks
# in segments of $k$: about $L/k + k$ activations instead of $L$, smallest for
# $k \approx \sqrt{L}$. The price: every segment's forward runs twice.
#
# `mg.checkpoint(fn, x)` is minigrad's (PyTorch: `torch.utils.checkpoint.checkpoint`).
# The same network in 4 segments of 4 blocks:

# %%
def checkpointed(layers, size):
    """A function of x that runs `layers` in segments of `size`, each one checkpointed."""
    def run(x):
        for start in range(0, len(layers), size):
            x = mg.checkpoint(nn.Sequential(*layers[start:start + size]), x)
        return x
    return run


run_checkpointed = checkpointed(blocks, 4)
inputs.requires_grad_()  # (see below: a checkpoint needs an input that requires grad)
out = run_checkpointed(inputs)
checkpointed_bytes = activation_bytes(out, deep)
print(f"kept after forward: {checkpointed_bytes:,} bytes "
      f"= {checkpointed_bytes // one_activation} activations (one per segment)")

# %% [markdown]
# That is what is held between forward and backward. The true peak is reached during
# backward, when one segment is recomputed on top of the checkpoints. Python's
# `tracemalloc` records every allocation NumPy makes, and its peak: we run forward and
# backward each way, with the same weights, and compare the peaks and the gradients.

# %%
def peak_and_grads(forward):
    for p in deep.parameters():
        p.grad = None
    x = inputs.detach().requires_grad_()
    tracemalloc.start()
    forward(x).sum().backward()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, [p.grad.numpy().copy() for p in deep.parameters()] + [x.grad.numpy()]


plain_peak, plain_grads = peak_and_grads(deep)
ckpt_peak, ckpt_grads = peak_and_grads(run_checkpointed)
print(f"peak, plain:          {plain_peak / 2**20:5.1f} MiB")
print(f"peak, checkpointed:   {ckpt_peak / 2**20:5.1f} MiB")
print("same gradients:", all(np.allclose(a, b, atol=1e-6) for a, b in zip(plain_grads, ckpt_grads)))

# %% [markdown]
# The peak falls to well under half (4 checkpoints and one recomputed segment of 4
# blocks, against 17 activations, plus in both cases the gradients and temporaries of
# the backward pass), and the gradients are the same. What it
# costs is computation: each block's forward runs twice. A `Linear` that counts its
# forwards shows it:

# %%
class CountingLinear(nn.Linear):
    """A Linear that counts its forwards in a class attribute."""

    calls = 0

    def forward(self, x):
        CountingLinear.calls += 1
        return super().forward(x)


counting_blocks = [nn.Sequential(CountingLinear(width, width), nn.ReLU()) for _ in range(depth)]
for name, forward in (("plain", nn.Sequential(*counting_blocks)),
                      ("checkpointed", checkpointed(counting_blocks, 4))):
    CountingLinear.calls = 0
    forward(inputs.detach().requires_grad_()).sum().backward()
    print(f"{name:>12}: {CountingLinear.calls} Linear forwards for one training step")


# %% [markdown]
# 16 forwards plain, 32 checkpointed. A backward costs about two forwards (a
# matrix product for the input's gradient and one for the weight's), so a training step
# goes from 3 to 4 forward-equivalents: about a third more computation for well under
# half the memory. (To see it on a clock, time a step of each with `time.process_time()`;
# the notebook does not print times, which change from machine to machine and run to
# run.)
#
# ### Exercise 3 (3 points): `MyCheckpoint`
#
# Write the checkpoint as an `mg.autograd.Function` (chapter 3's Function, in PyTorch's
# form: `forward` and `backward` receive and return Tensors, and **recording is off
# inside both**), called as `MyCheckpoint.apply(x, fn)`.
#
# **Mind the order: the tensor first, then `fn`**, the reverse of `mg.checkpoint(fn, x)`
# above and of PyTorch's `checkpoint(fn, x)` (and of minigrad's own
# `Checkpoint.apply(fn, ...)` in `minigrad/checkpoint.py`). `apply` hands its arguments
# to `forward` in the order it gets them, and `backward` returns one gradient per
# argument, in the same order.
#
# What it must do (the section above gives the idea; `minigrad-course hint 14 my_checkpoint`
# gives the steps, one at a time):
#
# - **The output** is `fn(x)`: the same values as calling `fn` yourself.
# - **What the context keeps** between forward and backward: `fn`, the input `x`
#   (saved with `ctx.save_for_backward`, the only tensor saved) and what is needed to
#   replay `fn`'s random numbers; **nothing that `fn` computes**.
# - **The gradients**: backward returns one gradient per argument of `apply`, `x`'s and
#   `None` for `fn` (not a tensor), and leaves in the `.grad` of every parameter inside
#   `fn` what a plain backward through `fn(x)` with the same `grad_output` would leave
#   there. `x`'s gradient is the plain run's too, and it reaches the caller's `x` only through what backward returns.
# - **Randomness**: `fn` may contain dropout, so the recomputation must draw the same
#   mask as the forward did (`mg.get_rng_state()` reads the generator's state,
#   `mg.set_rng_state(state)` sets it). After backward the generator must be where it
#   was before backward started, so that the program's next random numbers are new
#   ones, not the forward's again.

# %% tags=["solution:my_checkpoint"]
class MyCheckpoint(mg.autograd.Function):
    """f(x) = fn(x), with fn's activations recomputed in backward instead of kept"""

    @staticmethod
    def forward(ctx, x, fn):
        # BEGIN SOLUTION
        ctx.fn = fn
        ctx.rng_state = mg.get_rng_state()
        ctx.save_for_backward(x)
        return fn(x)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        now = mg.get_rng_state()
        mg.set_rng_state(ctx.rng_state)
        with mg.enable_grad():
            out = ctx.fn(x)
        mg.set_rng_state(now)
        out.backward(grad_output)
        return x.grad, None
        # END SOLUTION


# %% [markdown]
# The check runs a block of three `Linear` layers, once without and once with a dropout
# inside, and records how your Function calls it (recording on or off, on an input that
# requires grad or not); it compares the output and the gradients of `x` and of every
# parameter inside with a plain run.

# %% tags=["tests:my_checkpoint:3"]
check_checkpoint(MyCheckpoint)
### BEGIN HIDDEN TESTS
check_checkpoint(MyCheckpoint, seed=8)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-checkpoint-trade"]
# ### Question (3 points, graded by your teacher)
#
# Why does checkpointing trade computation for memory? Say what the forward pass keeps
# and does not keep, what backward recomputes and what that costs, and why the
# recomputation must replay the random generator's state. Answer in the cell below, in a
# few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that normally every layer's saved activations stay alive until
#   backward reaches it (memory grows with depth), while a checkpoint runs its segment
#   without recording and keeps only its input; that backward reruns the segment's
#   forward with recording on and backpropagates through that fresh graph, so each
#   forward runs twice (about a third more work per training step); and that the
#   recomputation must draw the same dropout mask as the forward, or the gradient would
#   belong to a different computation than the output.
# - 2 points: two of the three.
# - 1 point: one of the three.
# - 0 points: none.
#
# A full answer names: (1) without checkpointing, memory peaks at the end of forward,
# with every layer's saved arrays (17 activations for the 16-block MLP); (2) a
# checkpointed segment runs under no recording and keeps only its input (and `fn` and
# the random state); in backward it is run again from that input with recording on, and
# the gradient goes through the new graph, which is freed before the next segment: at
# any time the checkpoints plus one segment (about $L/k + k$ activations); (3) the cost
# is a second forward of every segment (16 forwards become 32; a step goes from about 3
# to 4 forward-equivalents); (4) a dropout inside must draw the same mask in the
# recomputation as in the forward, so the random state is saved and restored, and
# afterwards put back where it was so later random numbers are new. Do not accept
# "checkpointing saves the gradients to disk".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-checkpoint-trade:3"]
# Normally every layer keeps what its backward needs until backward reaches it, so the
# memory peaks at the end of forward and grows with depth. A checkpoint runs its segment
# without recording and keeps only the segment's input; in backward it runs the
# segment's forward again from that input, this time recording, and backpropagates
# through the fresh graph, which is freed before the next segment. So memory holds only
# the checkpoints and one segment's activations, and the price is a second forward of
# every segment: 32 forwards instead of 16 in the chapter, about a third more work per
# training step. If the segment contains dropout, the recomputation must draw exactly
# the mask the forward drew, otherwise the gradient would be that of another function
# than the one whose output we used; that is why the random generator's state is saved
# in forward, replayed in backward, and then restored so later random numbers stay new.

# %% [markdown]
# *Stuck on `MyCheckpoint`? `from minigrad.course import use_reference; use_reference("my_checkpoint")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Your checkpoint in place of `mg.checkpoint` on the deep network: the same memory after
# forward, the same gradients.

# %%
def run_mine(x, size=4):
    for start in range(0, depth, size):
        x = MyCheckpoint.apply(x, nn.Sequential(*blocks[start:start + size]))
    return x


out = run_mine(inputs)
print(f"kept after forward: {activation_bytes(out, deep) // one_activation} activations")
mine_peak, mine_grads = peak_and_grads(run_mine)
print(f"peak: {mine_peak / 2**20:.1f} MiB; same gradients as the plain run: "
      f"{all(np.allclose(a, b, atol=1e-6) for a, b in zip(plain_grads, mine_grads))}")

# %% [markdown]
# One trap remains, the reason for `inputs.requires_grad_()` above. If no input of the
# checkpoint requires grad (the first segment of a network gets the data, which does
# not), `apply` records no node at all, backward never reaches the checkpoint, and the
# parameters inside get **no gradient**, silently. PyTorch's original
# (`use_reentrant=True`) checkpoint has exactly this problem and warns about it;
# `mg.checkpoint` adds a hidden input that requires grad when needed (read
# `minigrad/checkpoint.py`, `anchored`).

# %%
x_data = mg.randn(8, width)  # data: does not require grad
for p in deep.parameters():
    p.grad = None
out = MyCheckpoint.apply(x_data, deep[0])
print(f"MyCheckpoint: grad_fn {out.grad_fn}, requires_grad {out.requires_grad}")
out = mg.checkpoint(deep[0], x_data)
out.sum().backward()
print(f"mg.checkpoint: grad_fn {out.grad_fn}, first weight's grad set: "
      f"{blocks[0][0].weight.grad is not None}")

# %% [markdown]
# ## 4. Lazy mode: the graph before the numbers
#
# In **lazy mode** an operation records its node, works out its output's shape and
# dtype (each Function's `output_shape`), and returns a tensor **without data**. Nothing
# is computed until a value is needed: `t.realize()`, `backward()`, `item()`,
# `numpy()`. Then every pending node that the value depends on runs, oldest first
# (`minigrad/lazy_mode.py`). tinygrad works this way all the time; PyTorch's `meta`
# device and `torch.compile`'s tracing use the same idea: shapes without data.

# %%
mg.manual_seed(4)
mlp = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
with mg.lazy():
    xl = mg.randn(5, 3)
    yl = mlp(xl)
    loss = (yl ** 2).mean()
print(f"shape {yl.shape}, realized {yl.is_realized}; loss realized {loss.is_realized}, "
      f"pending node {mg.autograd.pending_node(loss)}")

# %% [markdown]
# `show` draws the recorded graph; the nodes that have not run yet are dashed, with the
# shapes they will produce:

# %%
show(loss)

# %% [markdown]
# **Predict, then run.** `loss.item()` asks for a value. Which of the tensors are
# realized afterwards?

# %%
value = loss.item()
print(f"loss {value:.4f}; realized: yl {yl.is_realized}, loss {loss.is_realized}")

# %% [markdown]
# Both: the loss depends on `yl`, so the walk from the loss ran every pending node,
# oldest first. A graph can also be built on shapes alone, which is how a wrong shape
# is found **before any computation**: `Linear` checks its input's last dimension when
# it is called, and in lazy mode that costs nothing. Here the second layer expects 6
# features and gets 8:

# %%
broken = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(6, 2))
try:
    with mg.lazy():
        broken(mg.randn(100_000, 3))
except mg.ShapeError as error:
    print(f"ShapeError: {error}")

# %% [markdown]
# ### Exercise 4 (2 points): `layer_shapes`
#
# Write `layer_shapes(model, input_shape)`, to read a model's shapes before paying for a
# run. `model` is an `nn.Sequential`, `input_shape` the shape of an input batch (a tuple,
# such as `(1000, 1, 8, 8)`). It returns the list of `(name, output shape)` pairs, one
# per child of `model`, in order: its direct children, named as
# `model.named_children()` names them (a child that is itself a `Sequential` is one
# pair), each shape a tuple. What must hold: **nothing is computed**, no layer's
# forward really runs, and when the function returns, lazy mode is off again. What the
# section just showed is all it needs: in lazy mode an operation knows its output's
# shape at once, and computes only when a value is asked for.

# %% tags=["solution:layer_shapes"]
def layer_shapes(model, input_shape):
    """[(name, output shape) of each child of the Sequential `model`], nothing computed."""
    # BEGIN SOLUTION
    shapes = []
    with mg.lazy():
        h = mg.zeros(*input_shape)
        for name, layer in model.named_children():
            h = layer(h)
            shapes.append((name, tuple(h.shape)))
    return shapes
    # END SOLUTION


# %% [markdown]
# The check runs an MLP (one of its children is itself a `Sequential`) and a small CNN,
# each with a first layer that counts how many times it is really computed (it must be
# zero), and compares with the shapes of a real run.

# %% tags=["tests:layer_shapes:2"]
check_layer_shapes(layer_shapes)
### BEGIN HIDDEN TESTS
check_layer_shapes(layer_shapes, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `layer_shapes`? `from minigrad.course import use_reference; use_reference("layer_shapes")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Chapter 10's CNN, traced for a batch of 1,000 digits without computing a single
# convolution:

# %%
cnn = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Flatten(), nn.Linear(16 * 2 * 2, 10))
for name, shape in layer_shapes(cnn, (1000, 1, 8, 8)):
    print(f"{name:>2} {type(cnn[int(name)]).__name__:>9} -> {shape}")

# %% [markdown]
# ## 5. Groups: names for parts of the graph
#
# A graph of a real model has hundreds of nodes. Each node remembers the **group** it
# was made in (`node.group`): `with mg.group("name"):` sets it for everything made
# inside, and groups nest with dots. `Module.__call__` does this for you with the
# module's path in the model (`"0"`, `"encoder.1"`), so every node knows which layer
# made it; error messages and anomaly mode use it too.

# %%
class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 4), nn.Tanh(), nn.Linear(4, 2))
        self.decoder = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 6))

    def forward(self, x):
        return self.decoder(self.encoder(x))


mg.manual_seed(5)
autoencoder = AutoEncoder()
xa = mg.randn(10, 6)
reconstruction = autoencoder(xa)
with mg.group("loss"):
    reconstruction_loss = F.mse_loss(reconstruction, xa)
for node in mg.autograd.walk([reconstruction_loss.grad_fn], mg.autograd.grad_parents):
    print(f"{node!r:>14} group {node.group}")

# %% [markdown]
# `show(..., collapse_groups=True)` draws each layer as one box (the ops it made, and
# its parameters), framed by the module it belongs to; the `GraphView` has a checkbox for
# it. That is how a large model stays readable:

# %%
show(reconstruction_loss, collapse_groups=True, names=autoencoder)

# %% [markdown]
# `collapse_groups=1` stops at the first level of the paths: the encoder, the decoder and
# the loss, one box each.

# %%
show(reconstruction_loss, collapse_groups=1, names=autoencoder)

# %% [markdown]
# ## Summary
#
# - Grad mode decides whether operations are **recorded**. `mg.no_grad()` switches it
#   off, `mg.enable_grad()` on, and each restores the mode it found, so they nest; a
#   switch must save the previous mode when its block starts and restore it in
#   `__exit__` (or a `finally:`), which runs even when the block raises.
# - `t.detach()` cuts one tensor from the graph (sharing its array);
#   `t.requires_grad_()` starts recording from a leaf.
# - Evaluation needs `model.eval()` (what layers compute) **and** `no_grad` (what is
#   recorded); means over samples, numbers taken out with `.item()`, and the model given
#   back in its mode. `inference_mode` is PyTorch's stricter `no_grad`, whose tensors
#   cannot be saved for backward later; minigrad's `mg.inference_mode()` is plain
#   `no_grad`.
# - The activations kept for backward grow with depth; **checkpointing** keeps only
#   each segment's input and recomputes the segment in backward, with recording on and
#   the same random state: here less than half the peak memory for a third more
#   computation.
# - **Lazy mode** records nodes with their shapes and computes on demand: shapes, and
#   shape errors, before any computation.
# - **Groups** name the nodes by the module that made them; a graph drawn one box per
#   layer.
#
# ## Where this lives in minigrad
#
# | yours | minigrad | PyTorch |
# | --- | --- | --- |
# | `my_no_grad` | `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode` (here `no_grad` under another name) in `minigrad/state.py` | `torch.no_grad`, `torch.enable_grad`, `torch.inference_mode` |
# | `evaluate` | `Module.train` / `eval` in `minigrad/nn/module.py` | `model.eval()`, `torch.no_grad()` |
# | `MyCheckpoint` | `Checkpoint` (called as `Checkpoint.apply(fn, *tensors)`), `checkpoint` in `minigrad/checkpoint.py` | `torch.utils.checkpoint.checkpoint` |
# | `layer_shapes` | `lazy`, `set_mode` in `minigrad/state.py`; `defer`, `realize` in `minigrad/lazy_mode.py`; each Function's `output_shape` (the default in `minigrad/function.py`) | the `meta` device |
# | groups | `group` in `minigrad/state.py`, `Module.__call__` in `minigrad/nn/module.py`; drawn by `widgets/graph_view.py` | (module names in profiler traces) |
#
# The graph walk that realizes a lazy tensor, runs backward and draws the graph is one
# function, `walk` in `minigrad/graph.py`. Next, chapter 15, custom Functions and debugging.
