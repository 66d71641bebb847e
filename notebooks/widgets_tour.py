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
# # A tour of the widgets: seeing autograd at work
#
# minigrad's widgets show, right here in the notebook, what the engine does: the graph
# that a computation records, what each Function saved for its backward pass, and how
# the gradient travels back through the graph, one node at a time. Each one is a live
# widget in JupyterLab (buttons, a node selector) and also leaves a picture in the saved
# notebook, so this page reads the same on GitHub.
#
# | widget | shows |
# | --- | --- |
# | `GraphView(loss)` | the computation graph, with the gradient on every edge after backward |
# | `ContextInspector(t)` | what a Function's `ctx` holds: inputs, `needs_input_grad`, saved tensors |
# | `BackwardStepper(loss)` | the backward pass, one node at a time |
# | `TensorView(t)` | a tensor's values and gradient as heatmaps |
# | `GradientFlow(model)` | gradient norms per parameter, over training |
# | `TrainingMonitor(total)` | a progress bar and live curves of the loss |
# | `show(obj)` | whichever of these fits `obj` |

# %%
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.widgets import (BackwardStepper, ContextInspector, GradientFlow, GraphView,
                              TensorView, TrainingMonitor, show)

mg.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. The graph behind a loss
#
# A small classifier: one linear layer, a ReLU, a second linear layer, and the
# cross-entropy loss over three classes. Calling the model records one graph node per
# operation; `Module.__call__` puts each layer's nodes in a group named after the layer
# (`0`, `1`, `2`), drawn as a dashed box. Green boxes are parameters, grey ones tensors
# that need no gradient (the input), blue ones the operations, with their output's shape.

# %%
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
x = mg.randn(6, 4)
target = mg.tensor([0, 1, 2, 2, 1, 0]).long()
loss = F.cross_entropy(model(x), target)

view = GraphView(loss, names=model)
view

# %% [markdown]
# The view was made *before* `backward()`, so it records the gradient that flows back
# along every edge. Run the backward pass (keeping the graph, so that the saved tensors
# can still be inspected) and look again: edges are now thicker where the gradient is
# larger, and each parameter shows the norm of its `.grad`.

# %%
loss.backward(retain_graph=True)
view.refresh()
view

# %% [markdown]
# Pick a node in the dropdown (or click it in the drawing) to see what its Function saved
# for backward. From code, `view.select(...)` does the same:

# %%
view.select(loss.grad_fn)
print(view.selected)
view

# %% [markdown]
# ## 2. What a Function's context holds
#
# `ContextInspector` shows one node on its own. The cross-entropy node saved the
# softmax probabilities and the targets, the two things its backward needs
# (`softmax - one_hot`); the linear layer saved its input and weight.

# %%
ContextInspector(loss.grad_fn)

# %%
logits = loss.grad_fn.inputs[0]
ContextInspector(logits)

# %% [markdown]
# ## 3. The backward pass, one node at a time
#
# `BackwardStepper` drives the engine's own backward iterator (`mg.backward_steps`, the
# same code `loss.backward()` runs to the end). Each Step runs one node's backward: the
# node turns orange, the edges the gradient has travelled along so far turn blue, and
# below the drawing you see the gradient that arrived at the node and what it sent to
# each of its inputs. Try Step, Back (which replays from the start), Run and Reset.
#
# Here the hidden activations `h` feed two Functions, so their gradient is the *sum* of
# the two gradients that come back: the stepper says so when it reaches the node that
# made `h`.

# %%
mg.manual_seed(1)
w = mg.tensor(mg.randn(3, 2).numpy(), requires_grad=True, label="w")
inputs = mg.tensor(mg.randn(4, 3).numpy(), label="inputs")
h = (inputs @ w).tanh()
h.label = "h"
y = (h.exp() + h * h).sum()

stepper = BackwardStepper(y)
stepper.step()
stepper.step()
stepper

# %% [markdown]
# Running to the end gives every leaf exactly the gradient that `y.backward()` gives:

# %%
stepper.run()
by_hand = mg.tensor(w.numpy(), requires_grad=True)
hh = (inputs @ by_hand).tanh()
(hh.exp() + hh * hh).sum().backward()
print("stepper:   ", w.grad.numpy().ravel())
print("backward():", by_hand.grad.numpy().ravel())

# %% [markdown]
# ## 4. A tensor's values and gradient
#
# `TensorView` draws the values and the gradient side by side. Blue is negative, red
# positive, white zero.

# %%
TensorView(model[0].weight)

# %% [markdown]
# ## 5. Gradients during training
#
# `GradientFlow(model)` shows the norm of every parameter's gradient; call `.update()`
# after each backward and it keeps the history and warns when gradients vanish or
# explode. `TrainingMonitor` is a progress bar with the curves of what you log (in a
# terminal it prints text instead). Here the classifier learns the two-moons data set.

# %%
# NBVAL_IGNORE_OUTPUT
# (the monitor shows itself when training starts and updates that output when closed,
# so the saved notebook keeps the final curves; nbval does not follow such updates)
from minigrad.data import DataLoader, TensorDataset, make_moons  # noqa: E402

mg.manual_seed(0)
points, labels = make_moons(n_samples=200, noise=0.1)
loader = DataLoader(TensorDataset(points, labels), batch_size=40, shuffle=True)
classifier = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
optimizer = mg.optim.SGD(classifier.parameters(), lr=0.5)

flow = GradientFlow(classifier)
monitor = TrainingMonitor(total=10 * len(loader))
for epoch in range(10):
    for batch, batch_labels in monitor(loader):
        loss = F.cross_entropy(classifier(batch), batch_labels)
        optimizer.zero_grad()
        loss.backward()
        flow.update()
        optimizer.step()
        monitor.log(loss=loss)
monitor.close()

# %%
flow

# %% [markdown]
# ## 6. `show()` picks the view
#
# `show` returns the view that fits: a graph for a computed tensor, values for a leaf,
# the context for a graph node, gradient norms for a model. It never fails with a
# traceback; what it cannot draw, it explains. A graph that `backward()` has already
# freed is still drawn (its edges and shapes remain), with a note on how to keep it:

# %%
mg.manual_seed(0)
freed = F.cross_entropy(model(mg.randn(2, 4)), mg.tensor([0, 1]).long())
freed.backward()
show(freed)

# %% [markdown]
# In lazy mode, ops are recorded but not computed until `realize()`; the graph is drawn
# with dashed boxes, and showing it computes nothing:

# %%
with mg.lazy():
    pending = (model(mg.randn(2, 4)) ** 2).mean()
show(pending)

# %% [markdown]
# A very long graph is cut to the ops nearest the output (and the view says how to see
# all of them); a model with many layers is drawn with each layer collapsed into one box.

# %%
chain = mg.tensor([1.0, 2.0], requires_grad=True, label="start")
for _ in range(5000):
    chain = chain * 1.0001
show(chain.sum())

# %%
show(loss, collapse_groups=True, names=classifier)
