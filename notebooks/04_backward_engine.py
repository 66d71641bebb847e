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
# # Chapter 4: The backward engine
#
# Every `Function` you wrote so far knows its own little piece of the chain rule: given
# the gradient of its output, its `backward` returns the gradients of its inputs. What
# calls those `backward`s, in which order, and what happens to the gradients they return,
# is the job of the **backward engine**: the loop behind `loss.backward()`.
#
# In this chapter you write that loop yourself. You will:
#
# 1. read the graph the loop walks: `grad_fn` and `next_functions`;
# 2. see why a node must wait for **all** the nodes that use its output, and write a
#    topological sort of the graph (exercise 1);
# 3. see why a tensor used several times must **add up** its gradients, and the classic
#    bug that overwrites them, with the `BackwardStepper` (exercise 2);
# 4. see why a second `backward()` raises, and what `retain_graph=True` changes;
# 5. change a gradient on its way with a hook (`register_hook`), and keep a non-leaf's
#    gradient with `retain_grad()`;
# 6. write the whole backward loop and check it against `mg.backward_steps` and
#    `loss.backward()` (exercise 3);
# 7. find where minigrad keeps its own loop.
#
# Along the way come three **exercises** (6 points): a cell where you write code, and
# after it a test cell that checks your code. In the students' copy of this notebook, the
# places to write are marked by `raise NotImplementedError(...)`: replace each with your
# code. (The teacher's copy has the answers there instead, between two "SOLUTION" marker
# comments.) A check that passes prints one line; one that fails says what it called, what
# came back, what was expected, and which classic mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 4 topological-order` gives a hint for exercise `topological-order`
# (a nudge first; run it again for the next step), and
# `minigrad-course solution 4 topological-order` the reference answer. Each exercise's ID
# is in its stub's message; chapter 0, section 1, lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you will
# see exactly the numbers printed here.

# %%
import textwrap
import warnings

import numpy as np

import minigrad as mg
from minigrad.autograd import sum_to_shape
from minigrad.exercises.backward_engine import (check_accumulate_grad, check_backward_loop,
                                                check_topological_order)
from minigrad.widgets import BackwardStepper, GraphView

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)


V = np.array([[1.0, 2.0, -1.0], [0.5, -2.0, 3.0]])  # weights for the loss, not all ones


def build_diamond():
    """The graph of this chapter: `a` is used twice, by `sin` and by the product."""
    x = mg.tensor(np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]]), requires_grad=True,
                  label="x")
    v = mg.tensor(V, label="v")  # a constant: no gradient
    a = x.exp()
    b = a.sin()
    d = a * b
    loss = (d * v).sum()
    for tensor, name in [(a, "a"), (b, "b"), (d, "d"), (loss, "loss")]:
        tensor.label = name
    return x, a, b, d, loss


# %% [markdown]
# `build_diamond` makes the graph we use most: `x` of shape $(2, 3)$ (non-square, so a
# transposed gradient would show), $a = e^x$, $b = \sin a$, $d = a \cdot b$ and
# $L = \sum_{ij} d_{ij} v_{ij}$. `v` is a constant: it does not require a gradient, and its
# numbers are not all ones (with an all-ones upstream gradient, a backward that forgets
# `grad_output` would pass unnoticed; chapter 1 showed this).
#
# ## 1. The graph that backward walks
#
# Each tensor made by a `Function` remembers the node that made it, `grad_fn`. Each node
# remembers where its inputs came from in `next_functions`: one pair per positional
# input, `(node that made it, which of that node's outputs it is)`.

# %%
x, a, b, d, loss = build_diamond()
print(f"loss.grad_fn                = {loss.grad_fn}")
print(f"loss.grad_fn.next_functions = {loss.grad_fn.next_functions}")
print(f"d.grad_fn.next_functions    = {d.grad_fn.next_functions}")
print(f"a.grad_fn.next_functions    = {a.grad_fn.next_functions}")

# %% [markdown]
# Nodes print as `<Name #n>`: `n` counts the nodes in the order they were made. The
# numbers jump from one cell to the next, because every graph built in between counts
# too (the check cells build graphs of their own); if you ran cells out of order, your
# numbers differ from the ones printed here. Read the pairs:
#
# - `loss` is `Sum` of one tensor, made by a `Mul` (the `d * v`), output `0` of it (a
#   node with one output always has index `0`).
# - `d = a * b` has two inputs: `a`, made by `Exp`, and `b`, made by `Sin`.
# - `a = x.exp()` has one input, `x`, a **leaf**: no node made it, so its pair is
#   `(None, 0)`. A constant (like `v`, or a Python number such as the `2.0` in `x * 2.0`)
#   also gets `(None, 0)`.
#
# The tensors themselves are in `node.args`, in the same positions: `a.grad_fn.args[0]`
# is `x`. (PyTorch's `next_functions` differ in one way: for a leaf that requires a
# gradient they hold an `AccumulateGrad` node, whose job is to add into the leaf's `.grad`;
# in minigrad the loop does that itself, as you will.)
#
# `GraphView` draws the same graph: the gradients flow from `loss` at the bottom up to the
# leaf `x`. Notice the **diamond**: `a` has two arrows leaving it, into `Sin` and into the
# first `Mul`.

# %%
GraphView(loss)

# %% [markdown]
# ## 2. The order: a node waits for all its consumers
#
# Backward starts at the root with $\partial L / \partial L = 1$ and runs each node's
# `backward`, which turns the gradient of its output into gradients of its inputs. When
# may `Exp` (the node that made `a`) run? Its `backward` needs the gradient of its output
# $a$, and $a$ is used **twice**. By the chain rule, the gradient of $L$ with respect to
# $a$ adds up both uses (all shapes $(2, 3)$, element by element):
#
# $$\frac{\partial L}{\partial a} = \underbrace{\frac{\partial L}{\partial d}\, b}_{\text{from } d = a b}
# + \underbrace{\frac{\partial L}{\partial d}\, a \cdot \cos a}_{\text{from } b = \sin a
# \text{, through } d}.$$
#
# The first term arrives when `Mul` (of `d = a * b`) runs; the second only when `Sin`
# runs. So `Exp` may run only after **both** of them: a node must wait for every node that
# consumes its output. An order of the nodes with this property (each node before the
# nodes that made its inputs) is a **topological order** of the graph.
#
# **Predict, then run.** Here is the most natural walk: depth-first from the root,
# listing each node the first time it is reached (a *pre-order*), following
# `next_functions` in order. Does `Exp` come after `Sin` in its list?

# %%
def pre_order(root):
    """Depth-first, each node listed when first reached (NOT a topological order)."""
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        order.append(node)  # listed before its parents are visited
        for parent, _ in node.next_functions:
            if parent is not None and parent not in visited:
                visit(parent)

    visit(root)
    return order


print(pre_order(loss.grad_fn))

# %% [markdown]
# `Exp` comes before `Sin`. The walk went from `Mul` (of `d = a * b`) down its first
# input, `a`, and reached `Exp` before it ever saw `Sin`. A loop running the nodes in
# this order would run `Exp` with only the first of the two terms: a wrong gradient, and
# no error. (A breadth-first walk has the same flaw.)
#
# **The fix: list a node after its parents, then reverse.** Visit the parents first
# (recursively), and append a node only when all its parents are done: that is a
# *post-order*. In it, every node comes *after* all the nodes that made its inputs (they
# were appended during its visit, or before). Reversed, every node comes *before* them:
# the root first, and each node after all its consumers. (The `visited` set stays: a node
# reached along two paths, like `Exp`, is listed once.)
#
# ### Exercise 1 (2 points): `topological_order`
#
# Write `topological_order(root)`: the nodes a backward from `root` runs, each once, `root`
# first, every node before the nodes in its `next_functions`. Skip the `(None, 0)` entries
# (leaves and constants have no node). A recursive `visit` like `pre_order`'s is fine for
# the graphs here (minigrad's own walk uses an explicit stack, so it also handles chains
# longer than Python's recursion limit).

# %% tags=["solution:topological-order"]
def topological_order(root):
    """The nodes backward runs from `root`, root first, each before the nodes that made
    its inputs."""
    # BEGIN SOLUTION
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        for parent, _ in node.next_functions:
            if parent is not None and parent not in visited:
                visit(parent)
        order.append(node)  # after all its parents: a post-order

    visit(root)
    return order[::-1]  # reversed: the root first, each node after all its consumers
    # END SOLUTION


# %% [markdown]
# The check runs your function on five small graphs, built to catch the usual wrong
# walks: the diamond above and its mirror image (`b * a` instead of `a * b`, so the walk
# reaches `Exp` first along the other edge), a tensor used three times, a small network
# (a bias, a ReLU, a max over rows and a mean) and a node with two outputs. It checks that
# every node is there once, the root first, and each node before the nodes that made its
# inputs; it says which node came too early if one did.

# %% tags=["tests:topological-order:2"]
check_topological_order(topological_order)
### BEGIN HIDDEN TESTS
from minigrad.exercises.backward_engine import MORE_GRAPHS  # noqa: E402

check_topological_order(topological_order, graphs=MORE_GRAPHS)
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-topological-order"]
# ### Question (3 points, graded by your teacher)
#
# Why may a node's backward run only after every node that consumes its output has run?
# Use the diamond, where $a = e^x$ is used by `Sin` and by the product $d = a \cdot b$:
# what goes wrong when the nodes run in the pre-order of `pre_order`, and why does a
# reversed post-order (your `topological_order`) avoid it? Answer in the cell below, in
# a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that $\partial L/\partial a$ is the sum of one term per use of $a$
#   and `Exp`'s backward needs the complete sum; that the pre-order reaches `Exp` before
#   `Sin`, so `Exp` would run with only one term (a wrong gradient, no error); and that
#   a post-order appends a node after all the nodes that made its inputs, so reversed,
#   every node comes after all its consumers.
# - 2 points: the first two, or the first and the third.
# - 1 point: only "the order matters" with the sum over uses, or only the post-order
#   rule.
# - 0 points: none of them.
#
# A full answer names: (1) $a$ feeds two nodes, so $\partial L/\partial a$ is the sum of
# the term arriving from the `Mul` of $d = ab$ and the term arriving through `Sin`;
# `Exp` must have both before it passes the gradient to $x$; (2) the pre-order goes from
# the `Mul` down its first input and lists `Exp` before `Sin`: run in that order, `Exp`
# fires with only the first term, a wrong gradient and no error; (3) in a post-order a
# node is appended only after all its parents, so in the reversed list each node comes
# before the nodes that made its inputs, that is after all its consumers; the visited
# set lists `Exp` once although it is reached twice. Accept "newest first" (nodes
# numbered in creation order) as another correct order; do not accept "breadth-first" or
# "any order, the engine adds".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-topological-order:3"]
# The tensor $a$ is used twice, so $\partial L/\partial a$ is the sum of two terms: one
# that the product $d = a\,b$ sends back directly and one that arrives through $\sin a$.
# `Exp`'s backward turns that sum into $x$'s gradient, so it must wait until both terms
# have arrived, that is until every consumer of $a$ has run. The pre-order walk goes
# from the `Mul` straight down its first input and lists `Exp` before `Sin`; a loop
# running in that order would fire `Exp` with only the first term and give a wrong
# gradient without any error. A post-order appends a node only after all the nodes that
# made its inputs, so after reversing it every node comes before its inputs' nodes,
# which means after all the nodes that use its output, and the visited set keeps the
# shared `Exp` to one entry.

# %% [markdown]
# minigrad finds its order differently: it numbers nodes as they are made, and a node's
# inputs are always made before it, so **newest first** (the highest number first) is
# also a topological order. That is `backward_order`, in `minigrad/graph.py`. Topological
# orders are not unique: where two branches do not depend on each other, they may come in
# either order. Compare yours with minigrad's:
#
# *Stuck on `topological_order`? `from minigrad.course import use_reference; use_reference("topological-order")`
# in a new cell loads the reference answer, so the cells below (and exercise 3, which uses it)
# run (then it is not counted as yours).*

# %%
print(f"yours   : {topological_order(loss.grad_fn)}")
print(f"minigrad: {mg.autograd.backward_order(loss.grad_fn)}")

# %% [markdown]
# The same here, whatever right order you wrote: the diamond has only one topological
# order, since each node there consumes the output of the next (`Exp` must come after both
# `Sin` and the `Mul` of `d = a * b`). On a graph with two branches that do not depend on
# each other, right orders can differ. Below, `q` is made first (its number is smaller)
# but is the *second* input of the product: minigrad (newest first) runs `p`'s `Mul`
# before `q`'s `Exp`; the reversed post-order of the solution runs them the other way
# round (if you wrote another walk, yours may agree with minigrad's instead).

# %%
w = mg.tensor(np.array([1.0, -2.0, 0.5]), requires_grad=True, label="w")
q = w.exp()
p = w * 2.0
two_branches = (p * q).sum()
print(f"yours   : {topological_order(two_branches.grad_fn)}")
print(f"minigrad: {mg.autograd.backward_order(two_branches.grad_fn)}")

# %% [markdown]
# Either way, the product runs before both branches; neither branch feeds the other, so
# their order does not matter.
#
# ## 3. A tensor used several times: add, never overwrite
#
# The rule behind the diamond holds for leaves too: a tensor used in several places gets
# the **sum** of the gradients from all its uses. Take $y = x \cdot x \cdot x$, computed as
# `(x * x) * x`: $x$ is used three times, and the three gradients are $x^2$ each (one per
# factor, the product of the other two), so $\frac{dy}{dx} = x^2 + x^2 + x^2 = 3x^2$.
#
# **Predict, then run.** For $x = 2$, `loss.backward()` gives `x.grad` $= 3 \cdot 2^2 = 12$.
# A backward engine whose leaves keep only the **last** gradient they receive
# (`leaf.grad = grad` instead of adding) would give what?

# %%
x = mg.tensor(np.array([2.0, -1.0]), requires_grad=True, label="x")
cube = (x * x * x).sum()
cube.label = "loss"
for step in mg.backward_steps(cube):
    for position, grad in enumerate(step.grad_inputs):
        if step.node.args[position] is x:
            print(f"{step.node} sends x the gradient {grad}")
print(f"x.grad = {x.grad.numpy()} (3 x^2 = {3 * np.array([2.0, -1.0]) ** 2})")

# %% [markdown]
# `mg.backward_steps(loss)` is the engine's own loop, one node at a time (the same code
# `loss.backward()` runs to the end); each step has the `node`, the `grad_outputs` that
# arrived at it and the `grad_inputs` it sent. The outer `Mul` sends $x$ one gradient,
# $x^2 = (4, 1)$. To the inner `Mul` (the `x * x`) it sends $x$ (the gradient of
# `(x * x) * x` with respect to its first factor, `x * x`), so the inner `Mul` sends two
# more, one per input, each $x$ times the $x$ it received: $x^2 = (4, 1)$ again.
# Overwriting would keep only the last of the three, $(4, 1)$:
# a third of the right answer, with no error. The engine adds them: $(12, 3)$.
#
# The `BackwardStepper` shows the same pass on the graph. Below, it has run two steps:
# `Sum`, then the outer `Mul` (highlighted), whose table shows the gradient it sends to
# `x`, now in `x.grad`: $(4, 1)$. Run the notebook and press **Step** once more: the
# inner `Mul` sends two more, each added to `x.grad`, which ends at $(12, 3)$.

# %%
x = mg.tensor(np.array([2.0, -1.0]), requires_grad=True, label="x")
cube = (x * x * x).sum()
cube.label = "loss"
stepper = BackwardStepper(cube)
for _ in range(2):  # Sum, then the outer Mul
    stepper.step()
stepper

# %% [markdown]
# The same rule holds **across** backward passes: each `backward()` adds into `.grad`, so a
# training loop clears the gradients before each pass (`optimizer.zero_grad()`, or
# `x.grad = None`), as chapter 1 showed.
#
# ### Exercise 2 (1 point): `accumulate_grad`
#
# Write `accumulate_grad(leaf, grad)`: the step that puts a gradient `grad` (a NumPy
# array with the leaf's shape) into a leaf's `.grad`. If `leaf.grad` is `None`, it becomes
# a Tensor holding `grad` (`mg.tensor(grad)` makes one, copying the array); otherwise add
# `grad` to it. (PyTorch's `AccumulateGrad` node does exactly this.)

# %% tags=["solution:accumulate-grad"]
def accumulate_grad(leaf, grad):
    """Add the array `grad` into `leaf.grad` (a Tensor; None until the first gradient)."""
    # BEGIN SOLUTION
    if leaf.grad is None:
        leaf.grad = mg.tensor(grad)  # a copy: the array may be another leaf's too
    else:
        leaf.grad = leaf.grad + grad
    # END SOLUTION


# %% [markdown]
# The check gives one leaf three gradients in a row, and gives a second leaf the very same
# array as the first (as `Add`'s backward does: it passes `grad_output` on to both its
# inputs), so a `.grad` that keeps the array itself and later adds into it in place would
# change the other leaf's gradient too.

# %% tags=["tests:accumulate-grad:1"]
check_accumulate_grad(accumulate_grad)
### BEGIN HIDDEN TESTS
check_accumulate_grad(accumulate_grad, shape=(4,), seed=49, dtype=np.float32)
### END HIDDEN TESTS

# %% [markdown]
# ## 4. `retain_graph`, and why a second backward raises
#
# A node's `backward` needs what its `forward` saved (`Exp` saved its output, `Mul` its two
# inputs). After a backward pass, minigrad **releases** those saved arrays, as PyTorch does:
# a network's saved activations are most of its memory, and a training loop builds a new
# graph for every batch anyway. So the graph can be walked backward once.

# %%
x, a, b, d, loss = build_diamond()
print(f"before backward: Exp released its saved arrays? {a.grad_fn.released}")
loss.backward()
print(f"after backward:  Exp released its saved arrays? {a.grad_fn.released}")
try:
    loss.backward()
except RuntimeError as error:
    print("second backward raised RuntimeError:")
    print(textwrap.fill(str(error), width=88))

# %% [markdown]
# When you do need two passes through the same graph (two losses that share a part, say),
# pass `retain_graph=True` to every backward but the last: the saved arrays stay. The
# second pass then **adds** to the first, as section 3 said, so `x.grad` doubles:

# %%
x, a, b, d, loss = build_diamond()
loss.backward(retain_graph=True)
first = x.grad.numpy().copy()
loss.backward()
print(f"x.grad after two passes is twice that after one: {np.allclose(x.grad.numpy(), 2 * first)}")

# %% [markdown]
# (Nodes that saved nothing, like `Add` or `Sum`, have nothing to release: as in PyTorch,
# a graph made only of those could be walked again.)

# %% [markdown] tags=["question:why-retain-graph"]
# ### Question (2 points, graded by your teacher)
#
# Why does a second `loss.backward()` on the same graph raise, and what does
# `retain_graph=True` change? After two passes, the first with `retain_graph=True`, why
# is `x.grad` twice the gradient of one pass? Answer in the cell below, in a few
# sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: names that backward releases the arrays the nodes saved (to free the
#   memory of the activations), so a second pass has nothing to compute with, and that
#   `retain_graph=True` keeps them; AND that each pass adds into `.grad`, hence the
#   doubling.
# - 1 point: one of the two.
# - 0 points: neither.
#
# A full answer names: (1) after a node's backward has run, minigrad (like PyTorch)
# releases what its forward saved: the saved activations are most of a network's memory
# and a training loop builds a new graph for every batch; (2) a second backward reaches
# nodes whose saved arrays are gone and raises a `RuntimeError`; `retain_graph=True`
# keeps them, so the graph can be walked again; (3) backward accumulates into `.grad`,
# so the second pass adds the same gradient again. Accept the remark that nodes that
# saved nothing (`Add`, `Sum`) could be walked twice anyway; do not accept "the graph is
# deleted" without saying what backward would miss.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-retain-graph:2"]
# After a node's backward has used what its forward saved, minigrad releases those
# arrays, as PyTorch does: saved activations are most of a network's memory, and a
# training loop builds a fresh graph for every batch anyway. A second backward through
# the same graph therefore reaches nodes such as `Exp` whose saved arrays are gone, and
# raises. `retain_graph=True` tells the first pass to keep them, so the graph can be
# walked again. Each pass adds its gradient into the leaves' `.grad`, and nothing
# cleared it in between, so after two passes `x.grad` holds the gradient twice.

# %% [markdown]
# ## 5. Hooks and `retain_grad`: looking at, and changing, a gradient on its way
#
# After `loss.backward()`, only the **leaves** have a `.grad`. The gradients of the
# tensors in between (`a`, `b`, `d`) were only passed along: keeping them all would cost as
# much memory as the activations. Ask for one with `retain_grad()` before the backward:

# %%
x, a, b, d, loss = build_diamond()
b.retain_grad()
loss.backward()
with warnings.catch_warnings(record=True) as caught:  # reading it warns, as in PyTorch
    warnings.simplefilter("always")
    print(f"a.grad = {a.grad}  (not kept)")
print(f"  (and a warning: {str(caught[0].message)[:60]}...)")
print(f"b.grad =\n{b.grad.numpy()}  (kept: b.retain_grad() was called)")
print(f"b.grad is dL/db = v * a (from d = a * b): {np.allclose(b.grad.numpy(), V * a.numpy())}")

# %% [markdown]
# A **hook** is a function that the engine calls with a tensor's gradient when it is
# computed: `t.register_hook(fn)` calls `fn(grad)`. If `fn` returns a tensor, that
# replaces the gradient from there on; it returns a handle whose `remove()` takes the hook
# away.
#
# **Predict, then run.** `a` is used twice, so two gradients arrive for it. How many times
# is a hook on `a` called?

# %%
x, a, b, d, loss = build_diamond()
calls = []
handle = a.register_hook(lambda grad: calls.append(grad.numpy().copy()))
loss.backward()
handle.remove()
print(f"the hook on a was called {len(calls)} time(s)")
print(f"with the summed gradient dL/da: {np.allclose(calls[0] * a.numpy(), x.grad.numpy())}")

# %% [markdown]
# Once: the engine adds the two contributions first (while `a`'s node waits for both of its
# consumers), then calls the hook with the sum, just before `Exp` runs. The last line
# checks it with the chain rule through $a = e^x$: $\partial L/\partial x = \partial L /
# \partial a \cdot e^x$.
#
# A hook that returns a tensor **changes** the gradient for everything upstream. Here one
# zeroes the gradient through `b`, which cuts the path through `sin`: `x` then gets only
# the contribution of the direct use of `a` in `d = a * b`.

# %%
x, a, b, d, loss = build_diamond()
b.register_hook(lambda grad: grad * 0.0)  # nothing flows back through b = sin(a)
loss.backward()
only_direct = V * b.numpy() * a.numpy()  # dL/da from d = a * b alone, times da/dx = a
print(f"x.grad with the path through sin cut:\n{x.grad.numpy()}")
print(f"= the direct path alone: {np.allclose(x.grad.numpy(), only_direct)}")

# %% [markdown]
# Hooks are how gradient clipping per tensor, logging, and debugging tools (like the
# widgets) look inside a backward pass without changing the engine. A hook on a **leaf**
# runs before its gradient is added into `.grad`.
#
# The loop you write in section 6 leaves hooks and `retain_grad` out: they are not needed
# to get the gradients right. minigrad's own loop has both (see the table at the end).
#
# ## 6. Your own backward loop
#
# Now all the pieces fit together. The loop keeps, for every node output that gradients
# have reached, their running sum: `pending[(node, index)]`, the same pairs as in
# `next_functions`. Then:
#
# 1. **seed** the root: `pending[(loss.grad_fn, 0)]` is $\partial L/\partial L = 1$, an
#    array of ones with the loss's shape (`backward()` without an argument allows only a
#    one-element loss for that reason);
# 2. for each node in topological order: take (`pop`) the gradients for its outputs from
#    `pending`, skip the node if none arrived, and run its `backward`;
# 3. **route** each gradient it returns by `next_functions`: to a leaf's `.grad` (parent
#    `None`, the leaf is `node.args[position]`), or into `pending[(parent, index)]`,
#    **added** to what is there (the diamond); skip `None` (constants, and tensors that
#    need no gradient).
#
# Calling one node's `backward` has a few details of its own, which `run_backward` below
# takes care of: a node is its own `ctx`, so it is called as
# `node.function.backward(node, *grad_outputs)`; a single gradient may come back bare
# instead of in a tuple; a gradient of a broadcast input must be summed back to the input's
# shape (chapter 2's `unbroadcast`, minigrad's `sum_to_shape`); and an output that got no
# gradient gets zeros.

# %%
def run_backward(node, grad_outputs):
    """Call one node's backward: one gradient per positional input, with that input's
    shape and dtype (None where the input needs no gradient)."""
    grad_outputs = [np.zeros(shape, dtype) if grad is None else grad
                    for grad, (shape, dtype) in zip(grad_outputs, node.output_meta)]
    grads = node.function.backward(node, *grad_outputs)  # the node is the ctx
    if not isinstance(grads, tuple):
        grads = (grads,)  # one input: a bare array is allowed
    grad_inputs = []
    for position, grad in enumerate(grads):
        if grad is None or not node.needs_input_grad[position]:
            grad_inputs.append(None)
            continue
        shape, dtype = node.input_shape_dtype(position)
        grad_inputs.append(sum_to_shape(np.asarray(grad), shape).astype(dtype))
    return tuple(grad_inputs)


# %% [markdown]
# ### Exercise 3 (3 points): `my_backward_steps`
#
# Write two pieces: the seed (before the loop) and the routing (inside it, after
# `run_backward`); in the students' copy each is a `raise NotImplementedError(...)` line:
# replace both. The rest is given: the loop over your `topological_order`, taking a node's
# gradients from `pending`, calling `run_backward`, and handing out each step as
# `(node, grad_outputs, grad_inputs)`, like `mg.backward_steps` (a generator: `yield`
# hands one step out and the loop goes on when the next one is asked for). Use your
# `accumulate_grad` for the leaves.
#
# *The loop uses your `topological_order` of exercise 1 and your `accumulate_grad` of
# exercise 2: if one is not done yet,
# `from minigrad.course import use_reference; use_reference("accumulate-grad")` loads the reference one
# (and `use_reference("topological-order")` the other). If one still has a mistake, the
# loop's check says which, and tries your loop with the reference instead: this exercise
# is judged on its own.*
#
# For the routing, three sequences line up, one entry per positional input of the node:
# `node.next_functions` (the pair `(parent, index)`), `node.args` (the input itself: a
# tensor, or a constant such as the `2.0` of `x * 2.0`; keyword arguments such as `dim`
# are not in it) and the `grad_inputs` that `run_backward` returned. Walk them together
# with `zip`. The key of `pending` is the pair `(parent, index)` as `next_functions`
# gives it: `index` says which output of `parent` the input is, not where the input sits
# among the node's inputs.
#
# One trap: a step you handed out still holds the arrays in `grad_inputs`, and the same
# arrays may sit in `pending`. Add into `pending` out of place
# (`pending[key] = pending[key] + grad`), or `+=` would change a step already handed out.

# %% tags=["solution:backward-loop"]
def my_backward_steps(loss):
    """The backward pass from the one-element tensor `loss`, one node at a time."""
    root = loss.grad_fn
    pending = {}  # (node, output index) -> the sum of the gradients that arrived for it
    # BEGIN SOLUTION
    pending[(root, 0)] = np.ones(loss.shape, dtype=loss.dtype)  # dL/dL = 1
    # END SOLUTION
    for node in topological_order(root):
        grad_outputs = [pending.pop((node, i), None) for i in range(len(node.output_meta))]
        if all(grad is None for grad in grad_outputs):
            continue  # no gradient reached this node
        grad_inputs = run_backward(node, grad_outputs)
        # BEGIN SOLUTION
        for (parent, index), arg, grad in zip(node.next_functions, node.args, grad_inputs):
            if grad is None:
                continue  # a constant, or a tensor that needs no gradient
            if parent is None:
                accumulate_grad(arg, grad)  # a leaf
            elif (parent, index) in pending:
                pending[(parent, index)] = pending[(parent, index)] + grad  # a second path
            else:
                pending[(parent, index)] = grad
        # END SOLUTION
        yield node, grad_outputs, grad_inputs


def my_backward(loss):
    """`loss.backward()`, with your loop: run it to the end."""
    for _ in my_backward_steps(loss):
        pass


# %% [markdown]
# The check runs your loop on the five graphs of exercise 1 (with minigrad's own backward
# switched off while it runs) and compares each step with `mg.backward_steps` (the same
# nodes, each once, in a topological order; the same gradients arriving at each node and
# sent on from it), then every leaf's `.grad` with what `loss.backward()` gives. Its
# messages name the usual mistakes: a missing seed, two paths not added up, a leaf's
# gradients overwritten, a leaf treated as a node, a wrong key in `pending`, an array
# changed in place after its step was handed out.

# %% tags=["tests:backward-loop:3"]
check_backward_loop(my_backward_steps, uses={
    "topological_order": "minigrad.exercises.backward_engine:reference_topological_order",
    "accumulate_grad": "minigrad.exercises.backward_engine:reference_accumulate_grad"})
### BEGIN HIDDEN TESTS
from minigrad.exercises.backward_engine import MORE_GRAPHS  # noqa: E402

check_backward_loop(my_backward_steps, graphs=MORE_GRAPHS, uses={
    "topological_order": "minigrad.exercises.backward_engine:reference_topological_order",
    "accumulate_grad": "minigrad.exercises.backward_engine:reference_accumulate_grad"})
### END HIDDEN TESTS

# %% [markdown]
# Now compare with the engine yourself, on the diamond: the order of the steps (the
# diamond has only one topological order, so they must agree), the gradient that arrived
# at each node, and `x.grad`. (These last two cells run your loop: if its check failed,
# they fail too; fix the loop first.)
#
# *Stuck on `my_backward_steps`? `from minigrad.course import use_reference; use_reference("backward-loop")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x, a, b, d, loss = build_diamond()
yours = list(my_backward_steps(loss))
x_mine = x.grad.numpy().copy()
x, a, b, d, loss = build_diamond()
engine = list(mg.backward_steps(loss))
print(f"your order    : {[node.name for node, _, _ in yours]}")
print(f"engine's order: {[step.node.name for step in engine]}")
same = all(np.allclose(g, h) for (_, mine, _), step in zip(yours, engine)
           for g, h in zip(mine, step.grad_outputs))
print(f"same gradient arriving at every node: {same}")
print(f"same x.grad: {np.allclose(x_mine, x.grad.numpy())}")

# %% [markdown]
# And on a real network: a two-layer classifier with a cross-entropy loss. `my_backward`
# fills every parameter's `.grad`; `loss.backward()` on the same batch gives the same.

# %%
model = mg.nn.Sequential(mg.nn.Linear(3, 4), mg.nn.Tanh(), mg.nn.Linear(4, 2))
inputs = mg.randn(6, 3)
targets = mg.tensor(np.array([0, 1, 1, 0, 1, 0]))

my_backward(mg.nn.functional.cross_entropy(model(inputs), targets))
mine = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
model.zero_grad()
mg.nn.functional.cross_entropy(model(inputs), targets).backward()
for name, p in model.named_parameters():
    print(f"{name:9} {str(p.shape):7} same gradient: {np.allclose(mine[name], p.grad.numpy())}")

# %% [markdown]
# ## Summary
#
# - The graph is made of nodes (`tensor.grad_fn`); each node's `next_functions` says,
#   per input, which node made it and which of that node's outputs it is, or
#   `(None, 0)` for a leaf or a constant (the tensor is `node.args[position]`).
# - A node may run only when **all** the nodes that consume its output have run: a
#   topological order. A depth-first walk that lists a node when it first reaches it is
#   not one; listing each node after its parents and reversing is (and so is "newest
#   first", minigrad's own order).
# - Gradients **add up**: where a tensor feeds several operations (a diamond, a leaf used
#   three times) and across backward passes. Overwriting instead of adding gives a wrong
#   gradient and no error.
# - Backward starts from a seed, $\partial L/\partial L = 1$.
# - After a backward the saved arrays are released, so a second backward raises;
#   `retain_graph=True` keeps them (and the second pass adds to `.grad`).
# - `register_hook(fn)` sees (and may replace) a tensor's gradient: for `a`, used twice,
#   the sum of both; `retain_grad()` keeps a non-leaf's gradient in `.grad`.
#
# ## Where this lives in minigrad
#
# | yours | minigrad | file |
# | --- | --- | --- |
# | `topological_order` | `backward_order` (newest first), and `walk` | `minigrad/graph.py` |
# | `accumulate_grad` | `_accumulate_into_leaf`, which calls `accumulate_into_grad` (with `accumulate`, which adds in place only into arrays the pass made itself) | `minigrad/autograd.py`, `minigrad/reuse.py` |
# | `run_backward` | `_run_backward` (also hooks, the gradients of tensors that retain theirs, the saved-array version check), and `fit_gradients`, which sums each gradient back to its input's shape (`sum_to_shape`) | `minigrad/autograd.py`, `minigrad/gradients.py` |
# | `my_backward_steps` | `_backward`, behind `backward_steps` and `backward` | `minigrad/autograd.py` |
# | the seed | `seed_gradient` | `minigrad/gradients.py` |
# | `pending` | the dictionary `pending` in `_backward`: node -> the gradient for each of its outputs | `minigrad/autograd.py` |
# | `next_functions` | `Node.next_functions` (also `Node.free`, what a backward releases; `Node.pending` is another thing: in lazy mode, chapter 14, a forward not run yet) | `minigrad/function.py` |
#
# Open `minigrad/autograd.py` and find `_backward`: it is your loop, with a dictionary of
# pending gradients per node, a few lines for leaves, and one speed trick (adding in place
# into arrays nobody else has seen). `backward()` and the `BackwardStepper` both run it:
# there is no second implementation.
#
# Next: [Chapter 5, Reductions and their gradients](05_reductions.ipynb), where you write
# the backward of `sum`, `mean` and `max`, whose gradient goes back from a small shape to a
# large one.
