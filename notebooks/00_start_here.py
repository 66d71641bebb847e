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
# # Chapter 0: Start here
#
# Welcome. This course takes a deep learning library apart and has you build it again,
# one piece at a time, until nothing in it is magic.
#
# The library is **minigrad**: a small autograd engine written in NumPy. Three things
# make it good to learn from:
#
# - **It speaks PyTorch.** `Tensor`, `requires_grad`, `backward()`, `nn.Linear`,
#   `optim.Adam`, `zero_grad()`: the same names, with the same meaning. What you learn
#   here carries over to PyTorch line by line.
# - **NumPy inside.** Every operation is a forward and a backward written with NumPy
#   arrays, a few lines each. No C++, no GPU kernels to wade through.
# - **Built to be read.** Each file is short and says what it does. The chapters point
#   you to the file where the real thing lives.
#
# **Who it is for.** You know Python and NumPy (arrays, shapes, `a @ b`), and the
# derivative of a function of one variable. The chain rule is used from the start and
# recalled where it is needed; no PyTorch or autograd is assumed. A chapter takes an
# hour or two to work through, exercises included; this first one, less.
#
# This first chapter shows you how the chapters work, then takes you on a five-minute
# tour: you train a small classifier, look at the graph of operations it records, step
# through its backward pass and see its gradients. It ends with four small exercises.

# %%
import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.data import DataLoader, TensorDataset, make_moons
from minigrad.exercises import check_training_step, check_value
from minigrad.exercises.start_here import (TRAIN_STEP_MISTAKES, accumulation_mistakes,
                                           batch_losses, epoch_mistakes,
                                           hand_gradient_mistakes)
from minigrad.widgets import BackwardStepper, GradientFlow, show

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. How to use the chapters
#
# **Run them from top to bottom, from a fresh kernel.** Each chapter is a Jupyter
# notebook; its first code cell (the one above) imports what the chapter needs and seeds
# the random generator, so you see exactly the numbers printed on the page. If you get
# lost, use *Kernel → Restart Kernel and Run All Cells*, and you are back at a known state.
# Running a whole chapter takes well under a minute (this one, about 15 seconds).
#
# **Exercises.** Each chapter has graded exercises. An exercise is two cells: one where
# you write code, and a *check* right after it that runs your code and tells you whether
# it is right. In your copy, the place to write says `# YOUR CODE HERE` followed by
# `raise NotImplementedError("exercise ...: write your code here")`: replace those two
# lines with your answer. (On the course website you see the answers too, folded away
# under each exercise.)
#
# **Run All while exercises are open.** Until you write its answer, an exercise's cell
# raises that `NotImplementedError`, and *Run All Cells* stops at the first cell that
# raises: the cells below it do not run. In this chapter, Run All runs the whole tour and
# stops at exercise 1. That is expected: write the answer, run its cell and its check;
# Run All then goes on to the next open exercise. A check run before its exercise is done
# says what to write.
#
# **Learning alone.** The copy that `bash scripts/lab.sh` (or the Binder link) opens is
# your workspace, the folder `my-course/`: every chapter, without the answers. (The
# chapters in `notebooks/` have the answers filled in.) Its notebooks run in the kernel
# *Python 3 (minigrad)*, set up to give the numbers printed on the pages. The course's
# commands run in a terminal: in JupyterLab, *File → New → Terminal* (or the *Terminal*
# tile of the Launcher, the **+** button above the file list). There, on Binder as with
# `lab.sh`, `minigrad-course` is ready to use; in a terminal of your own, outside
# JupyterLab, go to the repository and activate its environment first
# (`source .venv/bin/activate`).
#
# - `minigrad-course status`: which exercises pass, chapter by chapter;
# - `minigrad-course next`: the first exercise still to do, and where it is;
# - `minigrad-course hint 00 start_neuron_grad`: a hint for that exercise, a nudge
#   first; run it again for the next step;
# - `minigrad-course solution 00 start_neuron_grad`: the answer, when you want it;
# - `minigrad-course reset 00 start_neuron_grad`: that exercise as it was at the start
#   (your version is backed up).
#
# The same table as `status`, without leaving the notebook: save the notebook (the
# checks run the saved file, each chapter in a fresh kernel), then in a new cell
#
# ```python
# from minigrad.course import status
# status()
# ```
#
# It lists each chapter's exercises that pass, with a button to check again.
#
# Each exercise's id (`start_neuron_grad` here) is in its stub's message. **Teachers**:
# the README's section "For teachers" explains how to hand the chapters out and grade
# them.
#
# A check that passes prints one line:

# %%
check_value(2.0 * 3.0, 6.0, "2 * 3")

# %% [markdown]
# A check that fails raises an `AssertionError` (a red box in JupyterLab) that says what
# came back, what was expected and, when your answer matches a classic mistake, which
# one. Here is one on purpose (we print its message instead of raising it, so that the
# page reads cleanly):

# %%
try:
    check_value(2.0 + 3.0, 6.0, "2 * 3", mistakes={
        "you added the two numbers instead of multiplying them.": 5.0})
except AssertionError as failure:
    print(f"AssertionError: {failure}")

# %% [markdown]
# Read the sentence after "It looks like": it is usually the whole answer.
#
# **Widgets.** Some cells draw a picture of what the engine does: the graph of a
# computation, the backward pass one node at a time, the gradients of a model. When you
# run the notebook in JupyterLab they are live (buttons, a node selector); when you read
# the saved notebook on the course website, you see the picture they drew.
#
# ## 2. Where the course goes
#
# The first half builds the engine; the second half builds networks on it.
#
# | chapter | what you build |
# | --- | --- |
# | 0 Start here | this page: how the chapters work, a tour |
# | [1 Autograd from scratch](01_autograd_from_scratch.ipynb) | the whole idea in one sitting: your own `Function`s, the chain rule, the backward pass |
# | [2 Tensors and broadcasting](02_tensors_and_broadcasting.ipynb) | dtypes, shapes, views, broadcasting, and why a gradient is summed back to its input's shape |
# | [3 Function and Context in depth](03_function_and_context.ipynb) | what to save for backward, skipping work, in-place edits |
# | [4 The backward engine](04_backward_engine.ipynb) | topological order, gradients that add up, hooks |
# | [5 Reductions and their gradients](05_reductions.ipynb) | `sum`, `mean`, `max`, `var`, `logsumexp` |
# | [6 Shapes and indexing](06_shapes_and_indexing.ipynb) | `reshape`, `permute`, indexing, `cat`, `gather` |
# | [7 Matrix multiplication and the Linear layer](07_matmul_and_linear.ipynb) | `matmul`'s backward, `nn.Linear` |
# | [8 Activations and losses](08_activations_and_losses.ipynb) | ReLU, GELU, softmax, cross-entropy without overflow |
# | [9 Optimizers and training](09_optimizers_and_training.ipynb) | SGD, momentum, Adam, AdamW, a training loop |
# | [10 Convolution and pooling](10_convolution_and_pooling.ipynb) | `Conv2d` as windows and one matrix product |
# | [11 Normalisation, dropout, initialisation](11_normalization_and_residuals.ipynb) | BatchNorm, LayerNorm, Dropout, residual connections |
# | [12 Sequences](12_sequences.ipynb) | `Embedding`, RNN, LSTM, a character model that writes text |
# | [13 Attention and a tiny transformer](13_attention_and_transformer.ipynb) | scaled dot-product attention, a transformer block |
# | [14 Execution modes](14_execution_modes.ipynb) | `no_grad`, `inference_mode`, checkpointing, lazy mode, groups |
# | [15 Custom Functions and debugging](15_custom_functions_and_debugging.ipynb) | your own `Function`, `gradcheck`, anomaly mode, hooks, the PyTorch bridge |
# | [16 Gradients of gradients](16_gradients_of_gradients.ipynb) | forward mode with dual numbers, `create_graph`, double backward, Hessian-vector products, a gradient penalty |
#
# ## 3. A five-minute tour
#
# ### Data: two moons
#
# Two interleaving half-circles of points, one class each. `make_moons` returns NumPy
# arrays: 200 points with two coordinates, and a label 0 or 1 for each.

# %%
points, labels = make_moons(n_samples=200, noise=0.1)
print(f"points: shape {points.shape}, {points.dtype}; labels: shape {labels.shape}")
print(f"the first three points:\n{points[:3]}\nand their labels: {labels[:3]}")

# %% [markdown]
# A `DataLoader` cuts the data set into shuffled batches of 40, as PyTorch's does.

# %%
loader = DataLoader(TensorDataset(points, labels), batch_size=40, shuffle=True)
print(f"{len(loader)} batches per epoch")

# %% [markdown]
# ### A model
#
# A small network: a linear layer from 2 numbers to 16, a `tanh`, and a linear layer
# from 16 to 2 scores, one per class. `nn.Sequential` runs them in order.

# %%
model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
print(model)
print(f"{sum(p.numel() for p in model.parameters())} parameters")

# %% [markdown]
# ### Training
#
# Training repeats one step per batch:
#
# 1. `optimizer.zero_grad()` clears the gradients of the last step;
# 2. `loss = F.cross_entropy(model(batch), batch_labels)` computes the loss, and minigrad
#    records every operation on the way;
# 3. `loss.backward()` walks that record backwards and puts in each parameter's `.grad`
#    how the loss changes when that parameter changes;
# 4. `optimizer.step()` moves each parameter a little against its gradient.
#
# `GradientFlow` keeps the size of the gradients every other epoch (we look at it below);
# the running total adds `loss.item()`, the plain Python number, once per batch.

# %%
optimizer = mg.optim.Adam(model.parameters(), lr=0.05)
flow = GradientFlow(model)

print("epoch   mean loss   accuracy")
for epoch in range(1, 21):
    total, correct = 0.0, 0
    for batch, batch_labels in loader:
        optimizer.zero_grad()
        scores = model(batch)
        loss = F.cross_entropy(scores, batch_labels)
        loss.backward()
        optimizer.step()
        total += loss.item()
        correct += (scores.argmax(dim=1) == batch_labels).sum().item()
    if epoch % 2 == 0:
        flow.update()  # every other epoch: the gradients of its last batch
    if epoch in (1, 2, 5, 10, 20):
        print(f"{epoch:5}   {total / len(loader):9.4f}   {correct / len(points):8.1%}")

# %% [markdown]
# The loss goes down and the accuracy up. Here is what the model learned: the colour is
# the class it predicts at each place, the dots are the training points.

# %%
grid_x, grid_y = np.meshgrid(np.linspace(-1.5, 2.5, 120), np.linspace(-1.0, 1.5, 80))
grid = np.stack([grid_x.ravel(), grid_y.ravel()], axis=1).astype(np.float32)
with mg.no_grad():  # no training here: nothing to record for backward
    predicted = model(mg.tensor(grid)).argmax(dim=1).numpy().reshape(grid_x.shape)

figure, axes = plt.subplots(figsize=(6, 3.5))
axes.contourf(grid_x, grid_y, predicted, levels=[-0.5, 0.5, 1.5], colors=["#cfe3f7", "#f9d9c4"])
axes.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=12)
axes.set_title("two moons: the classifier's decision regions")
plt.show()

# %% [markdown]
# ### The graph behind the loss
#
# Every operation on tensors that need gradients is recorded as a node of a graph:
# that is how `backward()` knows where to send the gradients. `show` draws it. With
# `collapse_groups=True` each layer of the model is one box (named as in the model:
# `0`, `1`, `2`); the batch goes in at the top and the loss, `CrossEntropy`, comes out
# at the bottom. Green boxes are parameters. (The line above the picture is there because
# the parameters still hold the `.grad` of the last training step; ignore it for now.)

# %%
sample_loss = F.cross_entropy(model(mg.tensor(points[:5])), mg.tensor(labels[:5]))
show(sample_loss, collapse_groups=True, names=model)

# %% [markdown]
# ### The backward pass, one node at a time
#
# The same thing on a graph small enough to follow by eye: one neuron,
# $p = \tanh(w_1 x_1 + w_2 x_2 + b)$, and its squared error against a target $t$,
# $L = (p - t)^2$. `BackwardStepper` runs the backward pass one node at a time: the
# node being worked on is orange, and below the drawing you see the gradient that
# arrived at the node and what it sent on to each input. In JupyterLab, press Step to
# go on; here we take three steps in code. A box is named by its operation and its
# number in this graph, in the order the operations ran (`Tanh #4` is the fourth).

# %%
w = mg.tensor([0.5, -1.0], requires_grad=True, label="w")
b = mg.tensor(0.1, requires_grad=True, label="b")
x = mg.tensor([2.0, 1.0], label="x")
p = ((w * x).sum() + b).tanh()
neuron_loss = (p - 0.5) ** 2

stepper = BackwardStepper(neuron_loss)
for _ in range(3):
    stepper.step()
stepper

# %% [markdown]
# Running it to the end fills `w.grad` and `b.grad`, exactly as `neuron_loss.backward()`
# would:

# %%
stepper.run()
print(f"w.grad = {w.grad.numpy()}, b.grad = {b.grad.item():.4f}")

# %% [markdown]
# ### The gradients while training
#
# `GradientFlow` kept the size (the norm) of each parameter's gradient every other epoch
# during the training above: the bars are the last update, the curves all of them. Each
# point is one batch's gradient, so the curves are noisy; what to look for is a
# parameter whose gradient sits near zero (its layer does not learn) or shoots up
# (the training blows up). The widget would say so under the picture.

# %%
flow

# %% [markdown]
# ## 4. Coming from PyTorch
#
# minigrad uses PyTorch's names, so an ordinary PyTorch snippet runs with
# `import minigrad as torch` in place of `import torch`:

# %%
import minigrad as torch  # noqa: E402

torch.manual_seed(0)
layer = torch.nn.Linear(3, 2)
inputs = torch.randn(4, 3)
targets = torch.tensor([0, 1, 1, 0])
loss = torch.nn.functional.cross_entropy(layer(inputs), targets)
loss.backward()
print(f"loss {loss.item():.4f}; layer.weight.grad has shape {tuple(layer.weight.grad.shape)}")

# %% [markdown]
# It is a teaching engine, not a replacement: it runs on the CPU with NumPy, and it
# covers the parts of PyTorch a course needs (tensors, autograd, `nn`, `optim`, data).
#
# ## 5. Exercises
#
# Four small ones, 6 points.
#
# ### Exercise 1 (2 points): a gradient by hand
#
# Before we let `backward()` do it, do it once yourself. One neuron without the `tanh`
# this time, and its squared error:
#
# $$u = w x + b - y, \qquad L = u^2.$$
#
# At $w = 2$, $x = 3$, $b = 1$, $y = 4$, what are $\partial L / \partial w$ and
# $\partial L / \partial b$? Use the chain rule: $\dfrac{\partial L}{\partial w} =
# \dfrac{\partial L}{\partial u} \, \dfrac{\partial u}{\partial w}$, and the same for $b$.
# Work it out on paper, then write the two numbers as **`grad_w = ...`** and
# **`grad_b = ...`** (plain numbers, or a Python expression with plain numbers that
# computes them).

# %% tags=["solution:start_neuron_grad"]
# grad_w = dL/dw and grad_b = dL/db, each a plain number
# BEGIN SOLUTION
grad_w = 2 * (2 * 3 + 1 - 4) * 3
grad_b = 2 * (2 * 3 + 1 - 4)
# END SOLUTION

# %% [markdown]
# The check lets minigrad compute the same two gradients with `backward()` and
# compares them with yours.

# %% tags=["tests:start_neuron_grad:2"]
assert "grad_w" in globals() and "grad_b" in globals(), (
    "exercise start_neuron_grad is not done yet: in the cell above, replace the line "
    "raise NotImplementedError(...) with grad_w = ... and grad_b = ... (two numbers), run "
    "that cell, then this check")
w_check, b_check = mg.tensor(2.0, requires_grad=True), mg.tensor(1.0, requires_grad=True)
((w_check * 3.0 + b_check - 4.0) ** 2).backward()
check_value((grad_w, grad_b), (w_check.grad.item(), b_check.grad.item()), "(grad_w, grad_b)",
            mistakes=hand_gradient_mistakes(w=2.0, x=3.0, b=1.0, y=4.0))

# %% [markdown]
# ### Exercise 2 (1 point): predict, then run
#
# `backward()` does not *replace* a parameter's `.grad`: it *adds* to it. That is why
# every training step starts with `optimizer.zero_grad()`. Take this loop, which forgets
# to clear the gradient:
#
# ```python
# w = mg.tensor([1.0, -2.0, 0.5], requires_grad=True)
# x = mg.tensor([3.0, 1.0, 2.0])
# for _ in range(3):
#     loss = (w * x).sum()
#     loss.backward()
# ```
#
# **Without running it**: what is `w.grad` at the end? Write your prediction as a list of
# three numbers, **`predicted_grad = [..., ..., ...]`**. (The check runs the loop.)

# %% tags=["solution:start_grad_piles_up"]
# predicted_grad = your prediction of w.grad, a list of three numbers
# BEGIN SOLUTION
predicted_grad = [9.0, 3.0, 6.0]
# END SOLUTION

# %% tags=["tests:start_grad_piles_up:1"]
assert "predicted_grad" in globals(), (
    "exercise start_grad_piles_up is not done yet: in the cell above, replace the line "
    "raise NotImplementedError(...) with predicted_grad = [..., ..., ...] (your three "
    "numbers), run that cell, then this check")
w_check = mg.tensor([1.0, -2.0, 0.5], requires_grad=True)
x_check = mg.tensor([3.0, 1.0, 2.0])
for _ in range(3):
    (w_check * x_check).sum().backward()
check_value(predicted_grad, w_check.grad, "your predicted w.grad",
            mistakes=accumulation_mistakes(w_check.detach().numpy(), x_check.numpy(), calls=3))

# %% [markdown] tags=["question:why-zero-grad"]
# ### Question (2 points, graded by your teacher)
#
# `backward()` adds into a parameter's `.grad` instead of replacing it (exercise 2). Why
# must a training step therefore call `optimizer.zero_grad()`, and why must that call
# come before `loss.backward()`, not between `loss.backward()` and `optimizer.step()`?
# Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: says that without clearing, each backward adds the new gradient to the old
#   ones, so `step()` moves the parameters by the sum of the gradients of every batch so
#   far instead of this batch's; AND that a `zero_grad()` between backward and step
#   throws away the gradient just computed, so the step updates nothing.
# - 1 point: explains only one of the two (the pile-up, or why the place of the call
#   matters).
# - 0 points: neither, or only "it resets the gradients" with no consequence named.
#
# A full answer names: (1) `.grad` after $k$ backward calls without clearing is the sum
# of $k$ gradients (exercise 2's loop gives three times $x$); (2) the step then uses
# gradients of earlier batches, so it is not a step of gradient descent on this batch;
# (3) `zero_grad()` after backward erases the fresh gradients (minigrad sets `.grad` to
# `None`, and `step()` skips a parameter without one), so the parameters do not move.
# Accept "the gradients accumulate / pile up" for (1) and (2), and a remark that adding
# is what makes a tensor used twice, or several batches on purpose, work; do not accept
# "backward overwrites `.grad`".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-zero-grad:2"]
# Because `backward()` adds its result into `.grad`, a second step without clearing
# would use the sum of this batch's gradient and every earlier one: after three backward
# passes `.grad` is three times the gradient, and the step goes in a direction that
# belongs to no single batch. `zero_grad()` clears the gradients so that the next
# backward leaves exactly this batch's gradient. It must come before the backward:
# called between `loss.backward()` and `optimizer.step()` it erases the gradient that
# was just computed (in minigrad `.grad` becomes `None`), and `step()` then finds
# nothing to apply, so the parameters do not move.

# %% [markdown]
# ### Exercise 3 (2 points): one training step
#
# Write the body of a training step: given a model, its optimizer and one batch `x`
# with its labels `y`, take one step of gradient descent on the cross-entropy loss, and
# return the loss: the `Tensor` you called `backward()` on (not `loss.item()`; exercise 4
# takes the number out itself). The four lines are in section 3; their order matters.

# %% tags=["solution:start_train_step"]
def train_step(model, optimizer, x, y):
    # BEGIN SOLUTION
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss
    # END SOLUTION


# %% [markdown]
# The check builds two copies of a small model, lets your `train_step` train one and
# the four right lines train the other on the same three batches, and compares every
# parameter and the loss your function returns after each step. It also makes
# `batches`, those three batches (a list of `(x, y)` pairs of NumPy arrays, 20 points
# each), which exercise 4 uses.

# %% tags=["tests:start_train_step:2"]
batches = [(points[i:i + 20], labels[i:i + 20]) for i in (0, 20, 40)]
check_training_step(train_step,
                    model=lambda: nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2)),
                    optimizer=lambda parameters: mg.optim.SGD(parameters, lr=0.5),
                    batches=batches, loss=F.cross_entropy, mistakes=TRAIN_STEP_MISTAKES)

# %% [markdown]
# ### Exercise 4 (1 point): the running total
#
# Now a whole epoch: call your `train_step` on each batch of `batches` (the list of
# `(x, y)` pairs that exercise 3's check made, as NumPy arrays: turn them into tensors
# with `mg.tensor`), and return the mean of the batch losses **as a plain Python
# number** (a `float`). That is what the table in section 3 printed.
#
# A classic slip is to add up the loss tensors themselves (`total += loss`). The number
# is the same, but the total is then a `Tensor` that is part of the graph: it keeps the
# graph of *every* batch alive in memory, for nothing. `loss.item()` takes the number out.

# %% tags=["solution:start_train_epoch"]
def train_epoch(model, optimizer, batches):
    # BEGIN SOLUTION
    total = 0.0
    for x, y in batches:
        loss = train_step(model, optimizer, mg.tensor(x), mg.tensor(y))
        total += loss.item()
    return total / len(batches)
    # END SOLUTION


# %% [markdown]
# The check trains two copies of a small model on the same batches: one with your
# `train_epoch`, the other by calling your `train_step` batch after batch, and compares
# your mean with the losses `train_step` returned. So this exercise is checked on its
# own, even if exercise 3 is not right yet, as long as your `train_step` runs and
# returns a loss `Tensor`.

# %% tags=["tests:start_train_epoch:1"]
def small_model():
    mg.manual_seed(3)
    return nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))


def sgd(parameters):
    return mg.optim.SGD(parameters, lr=0.5)


reference, yours = small_model(), small_model()
losses = batch_losses(train_step, reference, sgd(reference.parameters()),
                      batches)  # what your train_step returns, batch after batch
try:
    average = train_epoch(yours, sgd(yours.parameters()), batches)
except NotImplementedError as error:
    raise AssertionError(
        f"train_epoch raised NotImplementedError ({error}): exercise start_train_epoch is "
        "not done yet. Write the body of train_epoch in the cell above, in place of its "
        "raise line, run that cell, then this check") from None
check_value(average, float(np.mean(losses)), "train_epoch's mean loss", python_number=True,
            mistakes=epoch_mistakes(train_step, small_model, sgd, batches))

# %% [markdown]
# ## Summary
#
# - minigrad is PyTorch's interface over NumPy: `Tensor`, `backward()`, `nn`, `optim`,
#   `DataLoader`, with the same names and meaning.
# - Training is one step repeated: `zero_grad()`, compute the loss, `backward()`,
#   `step()`. Gradients add up until they are cleared, so the order matters.
# - Every operation on tensors that need gradients is recorded in a graph; `backward()`
#   walks it from the loss back to the parameters, applying the chain rule at each node.
# - Keep numbers as numbers: `loss.item()` for anything you log or add up.
# - `show`, `BackwardStepper` and `GradientFlow` (from `minigrad.widgets`) let you look
#   inside.
#
# ### Where this lives in minigrad
#
# - `minigrad/tensor.py`: the `Tensor` and its methods; `minigrad/autograd.py`: the
#   backward pass.
# - `minigrad/nn/`: the layers (`linear.py`, `activation.py`, `loss.py`, `containers.py`
#   for `Sequential`); `minigrad/optim/`: `sgd.py`, `adam.py`.
# - `minigrad/data/`: `DataLoader` and the built-in data sets.
# - `widgets/`: the pictures (imported as `minigrad.widgets`).
#
# Next: [Chapter 1, Autograd from scratch](01_autograd_from_scratch.ipynb), where you
# write your first differentiable operations yourself.
