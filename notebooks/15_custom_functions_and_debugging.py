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
# # Chapter 15: Custom Functions and debugging
#
# You have rebuilt the engine piece by piece. This last chapter is about working with it,
# and with PyTorch, when something is missing or something is wrong: an operation the
# library does not have, a gradient that disagrees with finite differences, a NaN that
# appears somewhere in a backward pass, a gradient that must be looked at or clipped on
# its way, a training run that must stop and resume, and a model that must give the
# same numbers as its PyTorch twin. You will:
#
# 1. write a Function for an operation minigrad lacks, `hypot`, safe from an in-place
#    edit of its inputs, `MyHypot` (exercise 1);
# 2. check it with `gradcheck`, and read the report of a wrong one (which input, which
#    element, analytic against numerical), and see why `gradcheck` wants float64;
# 3. let `detect_anomaly` find the op where a NaN was born, see the classic `where`
#    trap, and write a norm that is safe at zero, `safe_norm` (exercise 2);
# 4. look at gradients with hooks, and write a hook that clips them, `clip_hook`
#    (exercise 3);
# 5. save and resume a training run, model and optimizer, `checkpoint_training` and
#    `resume` (exercise 4);
# 6. load a PyTorch model's weights into the same model built with minigrad, and compare
#    outputs and gradients with PyTorch's own.
#
# The four **exercises** (10 points) are cells where you write code (the teacher's copy
# has the answers between two "SOLUTION" marker comments; in the copy handed out to
# students they are replaced by `raise NotImplementedError()`), each followed by a test
# cell that checks your code and, when it is wrong, says which mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 15 safe_norm` gives a hint for exercise
# `safe_norm` (a nudge first; run it again for the next step), and
# `minigrad-course solution 15 safe_norm` the reference answer. Each exercise's ID is in its stub's message; chapter 0, section 1,
# lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import os
import tempfile
import warnings

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.errors import GradcheckError
from minigrad.exercises.context import check_in_place_safety
from minigrad.exercises.debugging import (HYPOT_MISTAKES, check_clip_hook, check_safe_norm,
                                          check_save_and_resume, hypot_reference)

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. A Function for something minigrad lacks
#
# `hypot(x, y)` $= \sqrt{x^2 + y^2}$, the length of the vector $(x, y)$, elementwise.
# PyTorch has `torch.hypot`; minigrad does not:

# %%
print(hasattr(mg, "hypot"), hasattr(mg.Tensor, "hypot"))

# %% [markdown]
# You could compose it, `(x * x + y * y).sqrt()`, and minigrad would differentiate the
# three ops for you. A Function of its own is better in two ways: NumPy's `np.hypot`
# does not overflow where $x^2$ would (try $x = 10^{200}$), and one node with a
# two-line backward is cheaper than three nodes that each save their inputs.
#
# Shapes first: $x$ and $y$ have the same shape (no broadcasting here), and so have $r$
# and the upstream gradient $G = \partial L / \partial r$. Each element of $r$ depends only
# on the elements of $x$ and $y$ at the same place, with
#
# $$\frac{\partial r}{\partial x} = \frac{2x}{2\sqrt{x^2 + y^2}} = \frac{x}{r}, \qquad
# \frac{\partial r}{\partial y} = \frac{y}{r},$$
#
# so backward returns $G \cdot x / r$ and $G \cdot y / r$, elementwise.
#
# The contract is chapter 03's: forward receives NumPy arrays and returns one; it keeps
# what backward needs with `ctx.save_for_backward(...)`, which is what lets the **version
# counter** (`minigrad/versions.py`) notice when one of those arrays is edited in place
# before backward runs, and raise instead of returning a silently wrong gradient.
# Save them with `save_for_backward` (a view of an input counts as the input: the
# counter compares memory); an attribute (`ctx.x = x`) is outside the counter's sight.
#
# ### Exercise 1 (3 points): `MyHypot`
#
# Write `forward(ctx, x, y)` with `np.hypot`, saving what backward needs, and
# `backward(ctx, grad_output)`, returning the gradients for `x` and `y`, in that order.

# %% tags=["solution:myhypot"]
class MyHypot(mg.Function):
    """r = sqrt(x^2 + y^2), elementwise"""

    @staticmethod
    def forward(ctx, x, y):
        # BEGIN SOLUTION
        r = np.hypot(x, y)
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
# The check compares your values and gradients with `(x * x + y * y).sqrt()` for a
# random upstream gradient, then applies your Function, multiplies each input by 3 in
# place (as an optimizer's step would), and runs backward: the version counter must
# catch it, or the gradient must stay right.

# %% tags=["tests:myhypot:3"]
check_in_place_safety(MyHypot, inputs=[(3, 4), (3, 4)], reference=hypot_reference,
                      modified=[0, 1], mistakes=HYPOT_MISTAKES)
### BEGIN HIDDEN TESTS
check_in_place_safety(MyHypot, inputs=[(2, 5, 2), (2, 5, 2)], reference=hypot_reference,
                      modified=[1, 0], mistakes=HYPOT_MISTAKES, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `MyHypot`? `from minigrad.course import use_reference; use_reference("myhypot")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# Here is what the version counter does for you: an edit after forward, then backward.

# %%
x = mg.tensor([3.0, 5.0], requires_grad=True)
y = mg.tensor([4.0, 12.0], requires_grad=True)
r = MyHypot.apply(x, y)
print(r)
with mg.no_grad():
    x.mul_(2.0)  # an in-place edit of an input that forward saved
try:
    r.sum().backward()
except RuntimeError as error:
    print(f"{type(error).__name__}: {str(error).splitlines()[0]}")

# %% [markdown]
# ## 2. `gradcheck`, and how to read its report
#
# `mg.gradcheck(fn, inputs)` (`minigrad/gradcheck.py`) computes the gradient of
# $\sum_k r_k v_k$ for a fixed random $v$ twice: once with your backward, once with
# central differences $\big(f(x + \epsilon) - f(x - \epsilon)\big) / 2\epsilon$, one
# element of each input at a time. It returns True when they agree:

# %%
x = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
y = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
print(mg.gradcheck(MyHypot.apply, (x, y)))

# %% [markdown]
# When they disagree it raises `GradcheckError` with a report. Here is a backward with
# a classic slip: the gradient for `y` is computed from `x`. **Predict** what the report
# says about input 0 and about input 1, then run:

# %%
class SlippedHypot(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = np.hypot(x, y)
        ctx.save_for_backward(x, y, r)
        return r

    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, grad_output * x / r  # the slip: x where y belongs


try:
    mg.gradcheck(SlippedHypot.apply, (x, y))
except GradcheckError as error:
    print(error)

# %% [markdown]
# Read it line by line:
#
# - **which input**: input 0 is `ok` (its gradient is right), input 1 is not, so look at
#   the second value backward returns;
# - **which elements**: the index of each wrong element (up to five, the worst first),
#   here every one of the 12; a wrong gradient at a single place would point at an edge
#   case instead (a zero, a tie, a boundary);
# - **analytic against numerical**: the analytic number is your backward's, the
#   numerical one is the truth up to about $10^{-8}$. Here they do not differ by a
#   sign or a constant factor (which would point at a sign or a missing 2): they are
#   unrelated, even of opposite signs, so the formula of the second gradient is
#   wrong. Its analytic values are in fact those of input 0's gradient, $G x / r$.
#
# Why float64? Finite differences divide a tiny difference of two nearly equal numbers
# by a tiny $2\epsilon$. In float32 (about 7 significant digits) $f(x + \epsilon)$ and
# $f(x - \epsilon)$ for $\epsilon = 10^{-6}$ are nearly the same float32 number, and
# the quotient is mostly rounding noise. By hand, for $f(x) = x^2$ at $x = 1.3$ (the
# derivative is 2.6):

# %%
for dtype in (np.float32, np.float64):
    point, eps = dtype(1.3), dtype(1e-6)
    estimate = ((point + eps) ** 2 - (point - eps) ** 2) / (2 * eps)
    print(f"{dtype.__name__}: {float(estimate):.6f}")

# %% [markdown]
# So `gradcheck` always computes in float64: given a float32 input it checks a float64
# copy of it, and warns you that this is not the float32 computation you meant to check
# (PyTorch's `gradcheck` warns the same way). Read the warning:

# %%
x32 = mg.randn(3, 4, requires_grad=True)  # float32, the default
y32 = mg.randn(3, 4, requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(mg.gradcheck(MyHypot.apply, (x32, y32)))
for warning in caught:
    print(warning.message)

# %% [markdown]
# Make the inputs float64 (`dtype=mg.float64`, or `x.double()`, `model.double()`), as in
# the cells above, and the warning goes away.
#
# ## 3. Where was the NaN born? `detect_anomaly`
#
# A NaN in a gradient is usually made in one op and then spreads: every op after it
# turns it into more NaNs, and by the time you see `.grad` it is everywhere. Anomaly
# mode finds the op that made it. The example: the length of each row of a batch, the
# norm over the last dimension, $\|x\| = \sqrt{\sum_j x_j^2}$, shapes $(N, D) \to (N,)$,
# written the direct way, on a batch whose first row is zeros (a padded sample, say):

# %%
def naive_norm(x):
    return (x * x).sum(dim=-1).sqrt()


x = mg.tensor([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]], dtype=mg.float64, requires_grad=True)
n = naive_norm(x)
with np.errstate(invalid="ignore"):  # NumPy's own warning, "invalid value encountered"
    n.sum().backward()
print("value:   ", n.numpy())
print("gradient:", x.grad.numpy())

# %% [markdown]
# The value is right (0 and 5); the gradient of the zero row is NaN. NumPy would also
# warn "invalid value encountered in multiply" (silenced above): it says that a NaN was
# made, in a line of minigrad's, not which op of yours made it. With
# `mg.detect_anomaly()`, every op's forward and backward result is checked for NaN and
# Inf, and the first one found raises an error naming the op (`minigrad/messages.py`,
# `check_finite`; PyTorch's is `torch.autograd.detect_anomaly()`):

# %%
x.grad = None
with mg.detect_anomaly():
    try:
        naive_norm(x).sum().backward()
    except FloatingPointError as error:
        print(str(error).split("\n  the op was created")[0])

# %% [markdown]
# (The full message also shows the line of your code that created the op.) The Inf is
# born in the square root's backward: $\frac{d}{ds}\sqrt{s} = \frac{1}{2\sqrt{s}}$ is
# $1/0 = \infty$ at $s = 0$. The next op back, `x * x`, multiplies it by $x = 0$, and
# $0 \cdot \infty$ is NaN: that is where the NaN you saw came from. (PyTorch's
# `detect_anomaly` looks for NaN only, not Inf, so on the same code it names the
# multiplication, `MulBackward0`, one op later: the Inf before it is yours to find.)
#
# The obvious fix is to choose 0 where $s = 0$, with `mg.where(condition, a, b)`, which
# takes `a` where the condition holds and `b` elsewhere. **Predict**: is the gradient
# of the zero row still NaN?

# %%
def norm_with_one_where(x):
    s = (x * x).sum(dim=-1)
    return mg.where(s > 0, s.sqrt(), 0.0)


x.grad = None
with np.errstate(invalid="ignore"):
    norm_with_one_where(x).sum().backward()
print("gradient:", x.grad.numpy())

# %% [markdown]
# Still NaN. `where` sends the gradient 0 to the branch it did not pick, but that branch
# still runs its backward: the square root's backward computes $0 / (2\sqrt{0}) = 0/0$,
# which is NaN, and $0 \cdot \text{NaN}$ is NaN again. PyTorch does exactly the same (a
# famous issue): in backward, a branch that was not chosen is multiplied by zero, and
# zero times NaN or Inf is not zero. So a choice made *after* the square root comes too
# late: the trouble is the square root's own backward at $s = 0$, and nothing after it
# can undo it. That is exercise 2's puzzle: what can you change *before* the square root,
# so that its backward never meets $s = 0$, while the value at a row of zeros is still
# exactly 0?
#
# ### Exercise 2 (3 points): `safe_norm`
#
# Write `safe_norm(x)`, the norm of `x` over its last dimension, with minigrad's
# operations on Tensors (`*`, `.sum(dim=-1)`, `.sqrt()`, `mg.where` as often as you need;
# not `x.norm()`): exactly 0 with the gradient 0 at a row of zeros (at zero the norm has
# no derivative; like PyTorch, take its gradient there to be 0), and $x / \|x\|$ times
# the upstream gradient elsewhere, with no NaN or Inf anywhere, in forward or backward.

# %% tags=["solution:safe_norm"]
def safe_norm(x):
    # BEGIN SOLUTION
    s = (x * x).sum(dim=-1)
    nonzero = s > 0
    safe_s = mg.where(nonzero, s, 1.0)  # the square root never sees a 0
    return mg.where(nonzero, safe_s.sqrt(), 0.0)
    # END SOLUTION


# %% [markdown]
# The check compares with `naive_norm` on random inputs, then runs your function and
# its backward under `mg.detect_anomaly()` on a batch with a row of zeros: if an op makes
# a NaN or an Inf, its message names the op.

# %% tags=["tests:safe_norm:3"]
check_safe_norm(safe_norm)
### BEGIN HIDDEN TESTS
check_safe_norm(safe_norm, seed=8)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-double-where"]
# ### Question (3 points, graded by your teacher)
#
# Why does `norm_with_one_where`, which chooses 0 with `mg.where` *after* the square
# root, still give a NaN gradient for a row of zeros, and why does the second `where` of
# `safe_norm`, *before* the square root, fix it? Answer in the cell below, in a few
# sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that the square root's backward at $s = 0$ divides by $2\sqrt{0} =
#   0$ (giving Inf, or $0/0$ = NaN with a zero upstream gradient); that `where` sends 0
#   to the branch it did not pick but that branch's backward still runs, and zero times
#   Inf or NaN is NaN, so a choice after the unsafe op comes too late; and that the
#   inner `where` gives the square root a safe input (such as 1) where $s = 0$, so its
#   backward never meets 0, while the outer `where` still returns exactly 0 there.
# - 2 points: two of the three.
# - 1 point: one of the three.
# - 0 points: none.
#
# A full answer names: (1) $\frac{d}{ds}\sqrt{s} = \frac{1}{2\sqrt{s}}$ is infinite at
# $s = 0$: the square root's backward computes $g/(2\sqrt{s})$, $0/0$ = NaN when `where`
# has sent it $g = 0$; (2) `where`'s backward multiplies the unpicked branch by 0, but
# the NaN (or Inf) is made inside the square root's own backward, and $0 \cdot
# \text{NaN}$ and $0 \cdot \infty$ are NaN; it then spreads back through `x * x`; (3)
# `safe_norm` replaces $s$ by 1 (any positive number) where it is 0 before the square
# root, so both the square root and its backward see a harmless number, and the outer
# `where` picks 0, whose gradient is 0 all the way back. Accept `detect_anomaly` naming
# the square root's backward as evidence; do not accept "add a small epsilon" as the
# same fix (it changes the value at 0).
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-double-where:3"]
# The square root's backward divides the incoming gradient by $2\sqrt{s}$, and for a row
# of zeros $s = 0$, so it divides by 0. `where` does send the gradient 0 to the branch
# it did not choose, but that branch's backward still runs: the square root computes
# $0/0$, which is NaN, and NaN times anything, including 0, stays NaN, so it flows back
# to $x$. Choosing after the square root is too late, because the damage happens inside
# the square root's own backward. `safe_norm` adds a `where` before it that replaces $s$
# by 1 wherever $s$ is 0, so neither the square root nor its backward ever sees a 0, and
# the outer `where` still returns exactly 0 for that row, with a gradient of 0 that
# stays finite all the way back.

# %% [markdown]
# *Stuck on `safe_norm`? `from minigrad.course import use_reference; use_reference("safe_norm")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# The same batch as before, now without a NaN:

# %%
x.grad = None
with mg.detect_anomaly():
    n = safe_norm(x)
    n.sum().backward()
print("value:   ", n.numpy())
print("gradient:", x.grad.numpy())

# %% [markdown]
# The same two-`where` pattern makes other functions safe at their awkward points:
# $x \log x$ at 0 (the limit is 0), $\log(1 + e^x)$ for large $x$ (overflow: write it
# $\max(x, 0) + \log(1 + e^{-|x|})$), $1/x$ at 0. First let `detect_anomaly` tell you
# which op it is.
#
# ## 4. Hooks: looking at a gradient, and changing it
#
# Chapter 04's hooks: `t.register_hook(hook)` (`minigrad/hooks.py`) makes backward call
# `hook(grad)` when `t`'s gradient is known, before it flows on to the ops that made `t`.
# A hook that only looks returns nothing:

# %%
w = mg.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
inputs = mg.tensor([[1.0, 1.0], [2.0, 0.0]])
h = inputs @ w
h.register_hook(lambda grad: print("the gradient reaching h:\n", grad.numpy()))
(h * mg.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
print("w.grad:\n", w.grad.numpy())

# %% [markdown]
# A hook that **returns** a tensor replaces the gradient: backward carries the returned
# one on, to `w` here. This is how you clip (or scale, or zero) a gradient in the middle
# of backward, before the parameters that come earlier in the network ever see it:
# unlike chapter 09's `clip_grad_norm_`, which clips the parameters' gradients after
# backward.
#
# **Predict**: this hook halves the gradient, but returns nothing. What is `w.grad`?

# %%
def halve(grad):
    grad = grad * 0.5  # a new tensor, under the old name


w.grad = None
h = inputs @ w
h.register_hook(halve)
(h * mg.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
print("w.grad:\n", w.grad.numpy())

# %% [markdown]
# Unchanged. `grad * 0.5` is a new tensor; assigning it to the local name `grad` changes
# nothing outside the hook, and a hook that returns None leaves the gradient as it was
# (in PyTorch too).
#
# What about changing `grad` in place, `grad.mul_(0.5)`? On the example above it even
# seems to work. But a hook must not modify its argument: backward hands it an array it
# does not own. With the loss `h.sum()`, for one, the gradient reaching `h` is the
# upstream 1 stretched to `h`'s shape by `np.broadcast_to` (chapter 05's backward of
# a sum), a read-only view with no copy made, so the edit fails:

# %%
def halve_in_place(grad):
    grad.mul_(0.5)  # don't: an in-place edit of the gradient backward handed over
    return grad


w.grad = None
h = inputs @ w
h.register_hook(halve_in_place)
try:
    h.sum().backward()
except Exception as error:
    print(f"{type(error).__name__}: {error}")

# %% [markdown]
# The message names the hook and the tensor it was registered on: the read-only array is
# backward's own broadcast, not yours. In a hook, do not edit at all: compute a new tensor
# and return it. (In PyTorch the same edit can instead silently change another gradient
# that shares the array.)
#
# ### Exercise 3 (2 points): `clip_hook`
#
# Write `clip_hook(max_norm)`, which returns a hook: given a gradient $g$ whose norm
# $\|g\| = \sqrt{\sum g^2}$ (over all its elements) is above `max_norm`, the hook returns
# $g \cdot \text{max\_norm} / \|g\|$ (the same direction, shorter); otherwise $g$
# unchanged. It must not modify $g$ in place.

# %% tags=["solution:clip_hook"]
def clip_hook(max_norm):
    # BEGIN SOLUTION
    def hook(grad):
        norm = grad.norm()
        if norm > max_norm:
            return grad * (max_norm / norm)
        return grad

    return hook
    # END SOLUTION


# %% [markdown]
# The check calls your hook on a long and a short gradient, then registers it on an
# intermediate tensor and checks the gradients that reach the leaves.

# %% tags=["tests:clip_hook:2"]
check_clip_hook(clip_hook)
### BEGIN HIDDEN TESTS
check_clip_hook(clip_hook, seed=8)
### END HIDDEN TESTS


# %% [markdown]
# *Stuck on `clip_hook`? `from minigrad.course import use_reference; use_reference("clip_hook")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# On the example above, with `max_norm=1`: `register_hook` returns a handle, and
# `handle.remove()` takes the hook away again.

# %%
w.grad = None
h = inputs @ w
handle = h.register_hook(clip_hook(1.0))
(h * mg.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
print("w.grad:\n", w.grad.numpy())
handle.remove()

# %% [markdown]
# ## 5. Saving and resuming a training run
#
# `mg.save(obj, path)` and `mg.load(path)` (`minigrad/serialization.py`) write and read
# nested dicts, lists, numbers and tensors as a NumPy `.npz` archive. PyTorch's
# `torch.save` uses pickle, which can run any code hidden in a file when it is loaded;
# minigrad never pickles, and `load` only reads arrays back. What you save is a
# **state dict**: `model.state_dict()` maps each parameter's name to its tensor;
# `optimizer.state_dict()` (chapter 09) holds its options and, for Adam, the step count
# and the two moving averages of every parameter.

# %%
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
optimizer = mg.optim.Adam(model.parameters(), lr=0.05)
print(list(model.state_dict()))
print(optimizer.state_dict()["param_groups"][0]["lr"], optimizer.state_dict()["state"])

# %% [markdown]
# The optimizer's `state` is empty until its first step. To resume a run where it
# stopped, the model is not enough: Adam restarted from an empty state takes its first
# step again (its bias correction makes that a step of about `lr` on every parameter),
# not the step the run would have taken.
#
# ### Exercise 4 (2 points): `checkpoint_training` and `resume`
#
# Write `checkpoint_training(model, optimizer, path)`, which saves both state dicts to
# `path` with `mg.save`, in one dict under the keys `"model"` and `"optimizer"` (the
# cells after the exercise read them), and `resume(model, optimizer, path)`, which loads
# that file into the model and the optimizer it is given.

# %% tags=["solution:checkpoint"]
def checkpoint_training(model, optimizer, path):
    # BEGIN SOLUTION
    mg.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
    # END SOLUTION


def resume(model, optimizer, path):
    # BEGIN SOLUTION
    checkpoint = mg.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    # END SOLUTION


# %% [markdown]
# The check trains a small model with Adam for 3 steps, checkpoints it, trains 3 more;
# then resumes a new model and a new Adam from the file and takes the same 3 steps: they
# must end exactly where the uninterrupted run did.

# %% tags=["tests:checkpoint:2"]
check_save_and_resume(checkpoint_training, resume)
### BEGIN HIDDEN TESTS
check_save_and_resume(checkpoint_training, resume, seed=8)
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-optimizer-state"]
# ### Question (2 points, graded by your teacher)
#
# Why must a training checkpoint hold the optimizer's state dict as well as the model's?
# What does a new Adam do at its first step after resuming from the model's state alone?
# Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: names that Adam keeps per-parameter state (the step count and the two
#   moving averages $m$ and $v$) that the next update depends on; AND that a new Adam's
#   first step, bias-corrected, is $\eta\,g/\sqrt{g^2} = \pm\eta$: every parameter jumps
#   by the learning rate whatever its gradient, instead of the step the run would have
#   taken.
# - 1 point: one of the two.
# - 0 points: neither.
#
# A full answer names: (1) the update of Adam (and of SGD with momentum, its buffer)
# depends on state accumulated over all earlier steps: `step`, `exp_avg`, `exp_avg_sq`;
# without it the resumed run is a different run; (2) a fresh Adam has $t = 1$, so $\hat
# m = g$ and $\hat v = g^2$, and moves every parameter by about `lr` (0.05 in the
# chapter) in the direction of $-g$, whatever $g$'s size; after a long training such a
# jump on every weight can undo much of what was learned; (3) with the optimizer's state
# the resumed run continues exactly as the uninterrupted one (what the check verifies).
# Do not accept "the learning rate is lost" as the main reason.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-optimizer-state:2"]
# Adam's update depends on more than the current gradient: it keeps, for every
# parameter, a step count and two moving averages of the gradient and of its square,
# built up over the whole run. Those live in the optimizer's state dict, not the
# model's, so a checkpoint without them cannot continue the same run. A new Adam starts
# at step 1, where the bias-corrected averages are exactly $g$ and $g^2$, so its step is
# $\eta\, g/\sqrt{g^2}$, that is plus or minus the learning rate on every parameter,
# whatever its gradient. After a long training such a jump of `lr` on every weight at
# once can undo much of what was learned, while the resumed optimizer takes exactly the
# step the run would have taken.

# %% [markdown]
# *Stuck on `checkpoint_training`? `from minigrad.course import use_reference; use_reference("checkpoint")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# What the file holds, read back (in a temporary folder, so nothing is left behind):

# %%
inputs, targets = mg.randn(8, 3), mg.randn(8, 2)
for step in range(3):
    optimizer.zero_grad()
    F.mse_loss(model(inputs), targets).backward()
    optimizer.step()
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "checkpoint.pt")
    checkpoint_training(model, optimizer, path)
    checkpoint = mg.load(path)
print(list(checkpoint), list(checkpoint["optimizer"]))
print("Adam's step counter for the first weight:", checkpoint["optimizer"]["state"][0]["step"])

# %% [markdown]
# **Predict**: resume from this checkpoint twice, once with the optimizer's state and
# once with a new Adam (the model's state only, the classic mistake), and take one step
# each. Which one moves the parameters more, and by how much?

# %%
def one_step_from(checkpoint, with_optimizer_state):
    resumed = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    resumed.load_state_dict(checkpoint["model"])
    adam = mg.optim.Adam(resumed.parameters(), lr=0.05)
    if with_optimizer_state:
        adam.load_state_dict(checkpoint["optimizer"])
    before = [p.detach().numpy().copy() for p in resumed.parameters()]
    adam.zero_grad()
    F.mse_loss(resumed(inputs), targets).backward()
    adam.step()
    return np.concatenate([np.abs(p.detach().numpy() - b).ravel()
                           for p, b in zip(resumed.parameters(), before)])


for with_state in (True, False):
    moves = one_step_from(checkpoint, with_state)
    print(f"optimizer state loaded: {with_state!s:5}: each parameter moved by "
          f"{moves.min():.4f} to {moves.max():.4f}")

# %% [markdown]
# The new Adam moves **every** parameter by `lr` = 0.05, whatever its gradient: at its
# first step the bias-corrected averages are $g$ and $g^2$, and $g / \sqrt{g^2} = \pm 1$.
# The resumed one takes the step the run would have taken. After a long training, a
# jump of `lr` on every weight at once can undo much of what was learned.

# %% [markdown]
# ## 6. The bridge to PyTorch: the same model, the same numbers
#
# minigrad uses PyTorch's names on purpose: a model written with `minigrad.nn` has the
# same state dict keys as the same model written with `torch.nn`, so weights can cross
# over. `data/torch_mlp.npz` was made with PyTorch 2.13 by `scripts/make_torch_reference.py`
# (read it): a seeded `torch.nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))`,
# its state dict under PyTorch's keys, a batch of 5 inputs with their classes, and what
# PyTorch computed: the logits, the cross-entropy loss and each parameter's gradient. It
# is a plain `.npz` of arrays, not a pickle, so `mg.load` reads it without PyTorch:

# %%
reference = mg.load("data/torch_mlp.npz")
print(sorted(reference))

# %% [markdown]
# Build the same model with minigrad, load PyTorch's weights into it, and run the same
# batch forward and backward:

# %%
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
model.load_state_dict({key: reference[key] for key in model.state_dict()})
output = model(mg.tensor(reference["input"]))
loss = F.cross_entropy(output, mg.tensor(reference["target"]))
loss.backward()
print(f"loss: minigrad {loss.item():.6f}, PyTorch {reference['loss'].item():.6f}")

# %% [markdown]
# Both compute in float32, so expect differences of the order of float32's rounding,
# $10^{-7}$, not zero: the two libraries add the same numbers in other orders.

# %%
def largest_difference(mine, theirs):
    return float(np.abs(mine.detach().numpy() - theirs).max())


print(f"output: largest difference {largest_difference(output, reference['output']):.5f}")
for name, parameter in model.named_parameters():
    difference = largest_difference(parameter.grad, reference[f"grad.{name}"])
    print(f"gradient of {name:9}: largest difference {difference:.5f}")

# %% [markdown]
# The same numbers, to five decimals (printed rounded so that this page is the same on
# every machine). The other way works too: in PyTorch,
# `torch_model.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in
# model.state_dict().items()})` takes a minigrad model's weights. When a model of yours
# misbehaves, this is the test that settles whose fault it is: the same weights, the
# same batch, the outputs and gradients compared layer by layer.
#
# ## Summary
#
# - A Function for a missing op is forward and backward on NumPy arrays; save inputs with
#   `ctx.save_for_backward` (never as a ctx attribute), so that the version
#   counter catches an in-place edit before backward.
# - `gradcheck` compares backward with central differences, in float64; its report names
#   the input, the elements, and the analytic and numerical values: compare them to see
#   what your backward computed instead.
# - `detect_anomaly` names the first op that made a NaN or Inf, in forward or backward.
#   A `where` after an unsafe op does not stop its backward from making NaN: make the
#   op's input safe too (two `where`s).
# - A tensor hook changes a gradient only by returning the new one; returning None
#   leaves it as it was, and it must not edit its argument in place.
# - A checkpoint holds the model's AND the optimizer's state dict; without the optimizer's,
#   Adam restarts. `mg.save`/`mg.load` use `.npz`, never pickle.
# - PyTorch's state dict keys are minigrad's: the same model, the same weights, the same
#   outputs and gradients up to float32 rounding.
#
# ## Where this lives in minigrad
#
# | yours | minigrad | PyTorch |
# | --- | --- | --- |
# | `MyHypot` | `Function`, `Context` in `minigrad/function.py`; the version counter in `minigrad/versions.py` | `torch.autograd.Function`, `torch.hypot` |
# | the gradcheck report | `gradcheck` in `minigrad/gradcheck.py` | `torch.autograd.gradcheck` |
# | `safe_norm` | `detect_anomaly` in `minigrad/state.py`, its check in `minigrad/messages.py`; `Tensor.norm` in `minigrad/tensor.py` | `torch.autograd.detect_anomaly`, `torch.linalg.vector_norm` |
# | `clip_hook` | `Tensor.register_hook` in `minigrad/tensor.py`, `RemovableHandle` in `minigrad/hooks.py` | `Tensor.register_hook` |
# | `checkpoint_training`, `resume` | `save`, `load` in `minigrad/serialization.py`; `state_dict` in `minigrad/nn/module.py` and `minigrad/optim/optimizer.py` | `torch.save`, `torch.load(weights_only=True)` |
# | the bridge | `load_state_dict` with PyTorch's keys | `Module.state_dict()` |
#
# Open `minigrad/function.py` to see how `Function.apply` runs your forward and
# records the node that will call your backward, and `minigrad/gradcheck.py`: its report
# is `_compare`, twenty lines.
#
# Next: [Chapter 16, Gradients of gradients](16_gradients_of_gradients.ipynb), where the
# backward pass you have been writing turns out to be a program of ordinary operations
# that the engine can record and differentiate again: forward mode, a `MyHypot`
# differentiable twice, Hessian-vector products and a gradient penalty.
