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
# # Chapter 3: Function and Context in depth
#
# In chapter 1 you wrote `MyMul` and `MyExp`: a `forward(ctx, ...)` that computes the
# result and a `backward(ctx, grad_output)` that applies the chain rule. Between the
# two sits `ctx`, the **context**: the one object that both halves see. This chapter is
# about what you can put on it and what the engine puts there for you. You will:
#
# 1. see that `ctx` is the graph node, `y.grad_fn`;
# 2. decide **what to save** with `ctx.save_for_backward`: the input or the output, and
#    what that costs in memory;
# 3. use `ctx.needs_input_grad` to skip gradients nobody will use;
# 4. write a Function with **two outputs**, whose backward gets one gradient per output,
#    and use `ctx.set_materialize_grads(False)` to tell an unused output from a zero;
# 5. return integer indices with `ctx.mark_non_differentiable`;
# 6. see how the **version counter** catches an array that was edited in place between
#    forward and backward, and the one case it cannot catch;
# 7. find all of this in minigrad's own files.
#
# Along the way come four **exercises** (8 points): a cell where you write code (the
# teacher's copy has the answers between two "SOLUTION" marker comments; in the copy
# handed out to students they are replaced by `raise NotImplementedError(...)`), and after
# it a test cell that checks your code with the checks of `minigrad.exercises`. A check
# that passes prints one line; one that fails says what it called, what came back, what
# was expected, and which classic mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 3 mysincos` gives a hint for exercise `mysincos` (a nudge first;
# run it again for the next step), and `minigrad-course solution 3 mysincos` the
# reference answer. Each exercise's ID is in its stub's message; chapter 0, section 1,
# lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see the same numbers as printed here. The widgets' titles number the nodes of the
# graph they show (`MyMul #1`) in the order they were made, so they match the page too,
# even if a check failed or you ran a cell twice (a node's `repr`, `<MyMul #...>`, shows
# the session-wide id of chapter 1 instead, which does shift).

# %%
import textwrap

import numpy as np

import minigrad as mg
from minigrad.exercises import MATMUL_MISTAKES, check_function
from minigrad.exercises.context import (SCALE_ROWS_MISTAKES, SIGMOID_MISTAKES,
                                        SINCOS_MISTAKES, check_in_place_safety,
                                        check_multi_output, check_needs_input_grad,
                                        check_saves_output)
from minigrad.widgets import ContextInspector

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)


def new_bytes(node):
    """Bytes of memory the node's saved arrays hold beyond its inputs' and outputs' own
    arrays (a saved input or output is the memory its Tensor holds anyway: it is free).
    The node keeps only weak references to its outputs, so an output counts as free only
    while its Tensor is still alive."""
    tensors = [*node.inputs, *node.outputs]  # a dead output is None
    held = [t.detach().numpy() for t in tensors if t is not None]
    return sum(a.nbytes for a in node.saved_tensors if isinstance(a, np.ndarray)
               and not any(np.shares_memory(a, h) for h in held))


def message(error):
    """An error's message, in short lines and without the traceback."""
    return textwrap.fill(f"{type(error).__name__}: {error}", width=88)


# %% [markdown]
# `new_bytes` counts the memory a Function's saved arrays add; `message` prints an
# error's message in short lines instead of a long traceback. Both come back below.
#
# ## 1. The context is the node
#
# Here is chapter 1's multiplication again. `apply` makes a fresh context, calls
# `forward(ctx, x, y)` with the Tensors' NumPy arrays, and records the context in the
# graph: it *is* the node that `z.grad_fn` returns (as in PyTorch). So whatever forward
# put on `ctx` you can read back from `z.grad_fn`.

# %%
class MyMul(mg.Function):
    """z = x * y"""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        ctx.note = "anything you assign is kept"
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x


x = mg.randn(2, 3, requires_grad=True)
y = mg.randn(2, 3, requires_grad=True)
z = MyMul.apply(x, y)
print(f"z.grad_fn                  : {z.grad_fn}")
print(f"z.grad_fn.note             : {z.grad_fn.note}")
print(f"z.grad_fn.needs_input_grad : {z.grad_fn.needs_input_grad}")
saved_x = z.grad_fn.saved_tensors[0]
print(f"saved array 0 is x's memory: {np.shares_memory(saved_x, x.detach().numpy())}")

# %% [markdown]
# Three kinds of things live on a context:
#
# - what forward **saves** with `ctx.save_for_backward(...)` and backward reads back as
#   `ctx.saved_tensors` (a tuple, in the order saved);
# - what the **engine** sets before forward runs: `ctx.needs_input_grad`, one bool per
#   positional input;
# - any **attribute** forward assigns (`ctx.note`, `ctx.dim`, `ctx.input_shape`): numbers,
#   shapes, settings.
#
# The last line says something about memory: the saved `x` is not a copy, it is the very
# memory the Tensor `x` holds (seen through a read-only view: your Function can read the
# arrays it is given and saves, not write into them). The `ContextInspector` widget shows
# all of this for one node; in its "saved tensors" table, the column "is" says which
# saved array is an input or an output.

# %%
ContextInspector(z)

# %% [markdown]
# (The title names the Function and its node's number in the graph behind `z`: `MyMul
# #1`, its first and only node.)
#
# ## 2. What to save: the input or the output?
#
# Backward needs the local derivative. Write it down, and look at what it is made of:
#
# | $f$ | $f'(x)$ | written with | so save |
# | --- | --- | --- | --- |
# | $x^2$ | $2x$ | the input | `x` |
# | $e^x$ | $e^x = y$ | the output | `y` |
# | $\tanh x$ | $1 - \tanh^2 x = 1 - y^2$ | the output | `y` |
# | $\sigma(x) = \dfrac{1}{1 + e^{-x}}$ | $\sigma(x)\,(1 - \sigma(x)) = y\,(1 - y)$ | the output | `y` |
#
# The sigmoid's derivative, in two lines. With $s = \sigma(x) = (1 + e^{-x})^{-1}$,
#
# $$\frac{ds}{dx} = \frac{e^{-x}}{(1 + e^{-x})^2}
# = \underbrace{\frac{1}{1 + e^{-x}}}_{s}\cdot\underbrace{\frac{e^{-x}}{1 + e^{-x}}}_{1 - s}
# = s\,(1 - s).$$
#
# So backward needs only $s$, which forward has just computed. Saving the input instead
# would work too, but backward would have to compute $e^{-x}$ and the division all over
# again.
#
# **Memory.** Saving costs memory only for a *new* array. An input is kept alive anyway,
# by its Tensor, so saving it is free. An output is free too, as long as its Tensor is
# alive, and in a network it is: the next operation takes it as an input, and that
# operation's node keeps its inputs until backward. The node that *made* the output does
# not keep the output's Tensor alive itself: it holds only a *weak reference* to it, a
# pointer that lets the node find the Tensor while it exists without stopping Python
# from freeing it (otherwise the output and its node, which point at each other, would
# never be freed). So when nothing else holds an output's Tensor, the array saved from
# it is all that is left of it, and then it costs memory (section 2's exercise shows
# both cases). An intermediate that is neither an input nor an output (say, a
# $\sigma(x)$ computed inside a bigger formula) is extra memory held until backward
# runs. That is the trade every Function makes: keep the intermediate, or
# recompute it in backward. (Gradient checkpointing, `mg.checkpoint`, makes the
# same trade for whole blocks of layers.)
#
# **Predict, then run.** Softplus, $f(x) = \log(1 + e^x)$, has the derivative
# $f'(x) = \sigma(x)$, which is *not* its output. Two ways to write it follow: one saves
# $\sigma(x)$ in forward, the other saves $x$ and recomputes $\sigma(x)$ in backward.
# For an input of shape $(1000, 1000)$ in float64 (8 MB), how many extra bytes does each
# keep between forward and backward?

# %%
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class SoftplusKeeps(mg.Function):
    """y = log(1 + e^x);  dy/dx = sigmoid(x), computed in forward and kept"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(sigmoid(x))
        return np.logaddexp(0.0, x)  # log(e^0 + e^x), without overflow

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s


class SoftplusRecomputes(mg.Function):
    """y = log(1 + e^x);  dy/dx = sigmoid(x), recomputed in backward from x"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.logaddexp(0.0, x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * sigmoid(x)


big = mg.randn(1000, 1000, dtype=mg.float64, requires_grad=True)
for function in (SoftplusKeeps, SoftplusRecomputes):
    out = function.apply(big)
    print(f"{function.__name__:18}: {new_bytes(out.grad_fn):>9,} extra bytes saved")

# %% [markdown]
# Keeping $\sigma(x)$ holds another 8 MB for every softplus in the network until
# backward; recomputing it holds nothing extra but pays for the exponential twice. Both
# give the same gradient (check it with `mg.gradcheck` if you like). For the sigmoid
# itself there is no trade at all: what backward needs *is* the output, free to keep.
#
# ### Exercise 1 (2 points): `MySigmoid` saves its output
#
# Write `MySigmoid`: forward computes $s = \sigma(x)$ (the `sigmoid` helper above),
# saves **that array** with `ctx.save_for_backward`, and returns it; backward computes
# the gradient from the saved $s$ alone, without `np.exp`. The check tests the values and
# gradient, and that what forward saved is the array it returned.

# %% tags=["solution:mysigmoid-saves-output"]
class MySigmoid(mg.Function):
    """s = 1 / (1 + e^-x);  ds/dx = s (1 - s)"""

    @staticmethod
    def forward(ctx, x):
        # BEGIN SOLUTION
        s = sigmoid(x)
        ctx.save_for_backward(s)
        return s
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        (s,) = ctx.saved_tensors
        return grad_output * s * (1 - s)
        # END SOLUTION


# %% tags=["tests:mysigmoid-saves-output:2"]
check_function(MySigmoid, inputs=[[(3, 4)], [(5,)]], reference=lambda x: x.sigmoid(),
               mistakes=SIGMOID_MISTAKES)
check_saves_output(MySigmoid, inputs=[(3, 4)])
### BEGIN HIDDEN TESTS
check_function(MySigmoid, inputs=[[(2, 5, 3)], [()]], reference=lambda x: x.sigmoid(),
               mistakes=SIGMOID_MISTAKES, domain=(-6.0, 6.0), seed=3)
check_saves_output(MySigmoid, inputs=[(4, 2)], seed=3)
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-save-output"]
# ### Question (2 points, graded by your teacher)
#
# `MySigmoid` saves its output $s$, and `SoftplusKeeps` saves $\sigma(x)$, which is
# neither its input nor its output. Why does saving the output cost the sigmoid no extra
# memory and no extra computation, while `SoftplusKeeps` holds another 8 MB until
# backward for a $(1000, 1000)$ float64 input? What does `SoftplusRecomputes` pay
# instead? Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: names that the sigmoid's derivative $s(1 - s)$ is written with the output,
#   which forward has computed anyway and whose memory its Tensor holds (a saved input
#   or output is not a copy); AND that an intermediate such as $\sigma(x)$ in softplus
#   is a new array held until backward, which recomputing it avoids at the price of
#   computing the exponential again in backward.
# - 1 point: one of the two halves.
# - 0 points: neither, or "saving the output is faster" with no reason.
#
# A full answer names: (1) $\sigma'(x) = s\,(1 - s)$: backward needs only $s$, so
# nothing is recomputed; (2) what `save_for_backward` keeps of an input or an output is
# the same memory the Tensor holds (a read-only view), free while that Tensor is alive
# (in a network the next operation keeps it); (3) $\sigma(x)$ in softplus is a new
# $(1000, 1000)$ array of float64, 8 MB, held until backward runs; (4)
# `SoftplusRecomputes` saves only $x$ (free) and computes $\sigma(x)$, an exponential
# and a division, again in backward. Accept the refinement that a dropped output's saved
# array does cost memory (the node holds its output only by a weak reference); do not
# accept "saving the output copies less data" without saying that the input or output
# memory exists anyway.
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-save-output:2"]
# The sigmoid's derivative is $s\,(1 - s)$, written with its output, so backward needs
# nothing but the $s$ forward has just computed: no exponential is computed again.
# Saving it costs no memory either, because `save_for_backward` keeps the very array the
# output Tensor holds, not a copy, and that Tensor is alive anyway as long as the next
# operation holds it. Softplus's derivative $\sigma(x)$ is neither its input nor its
# output, so `SoftplusKeeps` keeps a brand-new array, 8 MB for a million float64
# numbers, alive until backward. `SoftplusRecomputes` saves only $x$, which is free, and
# pays with computation instead: it evaluates $\sigma(x)$ a second time in backward.
# That is the memory-or-compute trade every Function makes.

# %% [markdown]
# The inspector confirms it: saved array 0 *is* output 0.
#
# *Stuck on `MySigmoid`? `from minigrad.course import use_reference; use_reference("mysigmoid-saves-output")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x = mg.randn(2, 3, requires_grad=True)
ContextInspector(MySigmoid.apply(x))

# %% [markdown]
# And `new_bytes` on the 8 MB input from section 2: nothing extra while the output's
# Tensor is alive (here `s_big`; in a network, the next operation). The second line drops
# the output at once, keeping only its node: then the saved `s` is the only thing holding
# those 8 MB, and it counts.

# %%
s_big = MySigmoid.apply(big)
print(f"output kept (s_big)   : {new_bytes(s_big.grad_fn):>9,} extra bytes saved")
dropped = MySigmoid.apply(big).grad_fn  # the output Tensor is gone after this line
print(f"output dropped at once: {new_bytes(dropped):>9,} extra bytes saved")

# %% [markdown]
# ## 3. `needs_input_grad`: skip what nobody needs
#
# Before calling forward, `apply` looks at its inputs and records one bool per
# positional input in `ctx.needs_input_grad`: `True` if that input requires a gradient
# (a leaf with `requires_grad=True`, or the result of one). A layer's weight needs one;
# the data going into the first layer does not. Here is a matrix product that prints
# what backward is told.
#
# **Predict, then run.** `data` is a batch of inputs (no `requires_grad`), `weight` is
# a parameter. What does backward print?

# %%
class ShowMatMul(mg.Function):
    """z = a @ b, printing ctx.needs_input_grad in backward"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        print(f"backward: ctx.needs_input_grad = {ctx.needs_input_grad}")
        a, b = ctx.saved_tensors
        return grad_output @ b.T, a.T @ grad_output


data = mg.randn(4, 3)
weight = mg.randn(3, 2, requires_grad=True)
ShowMatMul.apply(data, weight).sum().backward()
print(f"data.grad = {data.grad}, weight.grad has shape {weight.grad.shape}")

# %% [markdown]
# `(False, True)`: the gradient for `data` is not needed. Backward computed
# `grad_output @ b.T` anyway, and the engine threw it away (`data.grad` is `None`). For
# a first layer of shape $(784, 512)$ and a batch of 256 that is a wasted matrix product
# of $256 \times 512 \times 784 \approx 10^8$ multiply-adds per step. The fix is one `if`
# per input, returning `None` where no gradient is needed:
#
# ```python
# grad_a = grad_output @ b.T if ctx.needs_input_grad[0] else None
# ```
#
# And when *no* input needs a gradient (all `False`, or inside `with mg.no_grad():`),
# `apply` records no node at all, so backward is never called:

# %%
out = ShowMatMul.apply(data, mg.randn(3, 2))  # neither input requires grad
print(f"out.requires_grad = {out.requires_grad}, out.grad_fn = {out.grad_fn}")

# %% [markdown]
# ### Exercise 2 (2 points): `MyMatMul` skips unneeded gradients
#
# Write `MyMatMul` for $z = a\,b$ with $a$ of shape $(m, n)$ and $b$ of shape $(n, k)$.
# The gradients, shapes first:
#
# $$\underbrace{\frac{\partial L}{\partial a}}_{(m, n)} =
# \underbrace{g}_{(m, k)}\;\underbrace{b^\top}_{(k, n)}, \qquad
# \underbrace{\frac{\partial L}{\partial b}}_{(n, k)} =
# \underbrace{a^\top}_{(n, m)}\;\underbrace{g}_{(m, k)},$$
#
# with $g$ = `grad_output`. Compute each one only if `ctx.needs_input_grad` says so, and
# return `None` in its place otherwise. The check calls your backward directly with every
# setting of `needs_input_grad`: `(True, True)`, `(True, False)` and `(False, True)`.
# Skipping means *not computing*: `b` is needed only for the gradient of `a`, so when
# `needs_input_grad[0]` is `False` the check hands your backward, in place of the saved
# `b`, a stand-in that fails if it is used; and likewise for `a`. (That is what
# `saved_only_for={0: 1, 1: 0}` in the test cell says: saved array 0, `a`, serves only
# the gradient of input 1, and saved array 1, `b`, only that of input 0.)

# %% tags=["solution:mymatmul-needs-input-grad"]
class MyMatMul(mg.Function):
    """z = a @ b;  dL/da = g @ b.T, dL/db = a.T @ g, each only if needed"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        # BEGIN SOLUTION
        grad_a = grad_output @ b.T if ctx.needs_input_grad[0] else None
        grad_b = a.T @ grad_output if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
        # END SOLUTION


# %% tags=["tests:mymatmul-needs-input-grad:2"]
check_needs_input_grad(MyMatMul, inputs=[(3, 4), (4, 2)], reference=lambda a, b: a @ b,
                       mistakes=MATMUL_MISTAKES, saved_only_for={0: 1, 1: 0})
check_function(MyMatMul, inputs=[(3, 4), (4, 2)], reference=lambda a, b: a @ b,
               mistakes=MATMUL_MISTAKES)
### BEGIN HIDDEN TESTS
check_needs_input_grad(MyMatMul, inputs=[(5, 2), (2, 3)], reference=lambda a, b: a @ b,
                       mistakes=MATMUL_MISTAKES, saved_only_for={0: 1, 1: 0}, seed=3)
check_function(MyMatMul, inputs=[[(1, 6), (6, 4)], [(4, 3), (3, 3)]],
               reference=lambda a, b: a @ b, mistakes=MATMUL_MISTAKES, seed=3)
### END HIDDEN TESTS

# %% [markdown]
# ## 4. Several outputs
#
# A Function may return a tuple of arrays: `apply` then returns a tuple of Tensors, all
# made by the same node. Backward gets **one gradient per output**, in order:
# `backward(ctx, grad_u, grad_v)`. The chain rule adds the paths. If $u$ and $v$ both
# depend on $x$,
#
# $$\frac{\partial L}{\partial x} = \frac{\partial L}{\partial u}\,\frac{du}{dx}
# + \frac{\partial L}{\partial v}\,\frac{dv}{dx}.$$
#
# **Predict, then run.** The loss below uses only `u`. What does backward receive as
# `grad_v`, the gradient of an output that nothing used?

# %%
class TwoOutputs(mg.Function):
    """u = 2x, v = 3x"""

    @staticmethod
    def forward(ctx, x):
        return 2 * x, 3 * x

    @staticmethod
    def backward(ctx, grad_u, grad_v):
        print(f"backward: grad_u = {grad_u}, grad_v = {grad_v}")
        return 2 * grad_u + 3 * grad_v


x = mg.tensor([1.0, 2.0], requires_grad=True)
u, v = TwoOutputs.apply(x)
(5 * u).sum().backward()
print(f"x.grad = {x.grad.numpy()}")

# %% [markdown]
# An array of **zeros**: by default the engine *materializes* the missing gradient, so
# that a backward written for all outputs works unchanged. (PyTorch does the same, and
# for the same reason: its `ctx.set_materialize_grads` is `True` by default.) The price: backward cannot
# tell "not used" from "used, with a zero gradient", and it multiplies zeros for nothing.
# Call `ctx.set_materialize_grads(False)` in forward, and the unused output's gradient
# arrives as `None` instead:

# %%
class TwoOutputsNone(mg.Function):
    """u = 2x, v = 3x, with unused outputs' gradients left as None"""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return 2 * x, 3 * x

    @staticmethod
    def backward(ctx, grad_u, grad_v):
        print(f"backward: grad_u = {grad_u}, grad_v = {grad_v}")
        grad_x = 0
        if grad_u is not None:
            grad_x = grad_x + 2 * grad_u
        if grad_v is not None:
            grad_x = grad_x + 3 * grad_v
        return grad_x


x = mg.tensor([1.0, 2.0], requires_grad=True)
u, v = TwoOutputsNone.apply(x)
(5 * u).sum().backward()
print(f"x.grad = {x.grad.numpy()}")

# %% [markdown]
# With `set_materialize_grads(False)` every backward must check for `None` before using
# a gradient: `None * 2` raises a `TypeError`.
#
# ### Exercise 3 (2 points): `MySinCos`
#
# Write a Function that returns both $\sin x$ and $\cos x$ (a rotation needs both, and
# computing them together shares the work). Forward: save what backward needs, call
# `ctx.set_materialize_grads(False)`, and return the pair. Backward gets `grad_sin` and
# `grad_cos`, either of which may be `None`; with $\frac{d}{dx}\sin x = \cos x$ and
# $\frac{d}{dx}\cos x = -\sin x$ it returns the sum of the paths that were used. The
# check runs your backward with both gradients, then with only one of them.

# %% tags=["solution:mysincos"]
class MySinCos(mg.Function):
    """(sin x, cos x);  dL/dx = grad_sin * cos(x) - grad_cos * sin(x)"""

    @staticmethod
    def forward(ctx, x):
        # BEGIN SOLUTION
        ctx.set_materialize_grads(False)
        sin, cos = np.sin(x), np.cos(x)
        ctx.save_for_backward(sin, cos)
        return sin, cos
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        # BEGIN SOLUTION
        sin, cos = ctx.saved_tensors
        grad_x = np.zeros_like(sin)
        if grad_sin is not None:
            grad_x = grad_x + grad_sin * cos
        if grad_cos is not None:
            grad_x = grad_x - grad_cos * sin
        return grad_x
        # END SOLUTION


# %% tags=["tests:mysincos:2"]
check_multi_output(MySinCos, inputs=[(3, 4)], reference=lambda x: (x.sin(), x.cos()),
                   mistakes=SINCOS_MISTAKES, materialize_grads=False)
### BEGIN HIDDEN TESTS
check_multi_output(MySinCos, inputs=[(2, 3, 2)], reference=lambda x: (x.sin(), x.cos()),
                   mistakes=SINCOS_MISTAKES, materialize_grads=False, seed=3)
### END HIDDEN TESTS

# %% [markdown]
# Through the engine, and against minigrad's own `sin` and `cos`, with a loss that uses
# only the cosine:
#
# *Stuck on `MySinCos`? `from minigrad.course import use_reference; use_reference("mysincos")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x64 = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
print(f"gradcheck, both outputs: {mg.gradcheck(lambda t: sum(MySinCos.apply(t)), [x64])}")
print(f"gradcheck, cos only    : {mg.gradcheck(lambda t: MySinCos.apply(t)[1], [x64])}")
mine = mg.tensor(x64.numpy(), requires_grad=True)
(3.0 * MySinCos.apply(mine)[1]).sum().backward()
theirs = mg.tensor(x64.numpy(), requires_grad=True)
(3.0 * theirs.cos()).sum().backward()
print(f"same gradient as 3 * x.cos(): {np.allclose(mine.grad.numpy(), theirs.grad.numpy())}")

# %% [markdown]
# What did your `MySinCos` keep? Its attributes show `materialize_grads` set to `False`.
# If you saved `sin` and `cos`, the saved arrays are its two outputs, free to keep (the
# column "is" can name an output only while that Tensor is alive, so we keep both); if
# you saved `x`, it is input 0, and backward recomputes both.

# %%
sin_x, cos_x = MySinCos.apply(mg.randn(2, 3, requires_grad=True))
ContextInspector(sin_x)

# %% [markdown]
# ## 5. Outputs without a gradient: `mark_non_differentiable`
#
# `x.max(dim=1)` returns two things: the values, and the **indices** where they are.
# The values have a gradient; the indices are integers, and a small change of $x$ does
# not change them smoothly: they have no derivative at all. A Function says so with
# `ctx.mark_non_differentiable(indices)` (the very array it returns). That output then
# gets no history (`requires_grad=False`, no `grad_fn`), and backward still receives a
# gradient slot for it (zeros, or `None` after `set_materialize_grads(False)`), which it
# ignores.
#
# It must be the very array: marking `indices.copy()`, or leaving the call out, raises
# no error in minigrad, but the indices come back with `requires_grad=True` and a
# `grad_fn`, as if integers had a gradient. (PyTorch never lets an integer tensor
# require a gradient; minigrad leaves that to `mark_non_differentiable`.)
#
# Here the whole gradient of each row's maximum goes to the element at the returned
# index, as PyTorch's `torch.max(x, dim)` does. (minigrad's own `x.max(dim=1)` returns the
# same values and indices, but its backward does not follow the index: where a row has
# several equal maxima, it splits the gradient between them, and `MyMaxWithIndex` gives
# it all to the one index `np.argmax` returned. Chapter 5 works out the split.)

# %%
class MyMaxWithIndex(mg.Function):
    """(values, indices) of the max along dim 1;  the gradient goes to the index"""

    @staticmethod
    def forward(ctx, x):
        indices = np.argmax(x, axis=1)
        values = np.take_along_axis(x, indices[:, None], axis=1)[:, 0]
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.input_shape = x.shape
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):  # grad_indices: zeros, ignored
        (indices,) = ctx.saved_tensors
        grad_x = np.zeros(ctx.input_shape)
        np.put_along_axis(grad_x, indices[:, None], grad_values[:, None], axis=1)
        return grad_x


x = mg.tensor([[1.0, 5.0, 2.0],
               [7.0, 0.0, 3.0]], requires_grad=True)
values, indices = MyMaxWithIndex.apply(x)
print(f"values : {values.numpy()}, requires_grad={values.requires_grad}, "
      f"grad_fn={values.grad_fn}")
print(f"indices: {indices.numpy()}, requires_grad={indices.requires_grad}, "
      f"grad_fn={indices.grad_fn}")
(values * mg.tensor([10.0, -1.0])).sum().backward()
print(f"x.grad =\n{x.grad.numpy()}")
print(f"minigrad's own x.max(dim=1): {x.max(dim=1)}")

# %% [markdown]
# A whole operation without any gradient, such as `argmax`, is simpler still: its
# Function sets the class attribute `differentiable = False`, and `apply` never records
# it.
#
# ## 6. In-place edits and the version counter
#
# A saved array must still hold, at backward time, the numbers forward saw. An
# **in-place** edit between the two breaks that. Take $y = x^2$, which saves $x$, and
# then change $x$ (as an optimizer step does, under `no_grad`):

# %%
class MySquare(mg.Function):
    """y = x^2;  dy/dx = 2x"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = MySquare.apply(x)
print(f"x._version before: {x._version}")
with mg.no_grad():
    x.mul_(10)  # x is now [10, 20, 30]: the saved array too, it is the same array
print(f"x._version after : {x._version}")
try:
    y.sum().backward()
except RuntimeError as error:
    print(message(error))

# %% [markdown]
# Without the error, backward would have returned $2 \cdot 10 = 20$ for the first
# element instead of $2 \cdot 1 = 2$: a wrong gradient, and nothing to tell you. minigrad,
# like PyTorch, keeps a **version counter** per tensor: every in-place operation
# (`add_`, `mul_`, `x[i] = v`, `+=` on a Tensor, an optimizer's update) increments it
# (`x._version`). A node remembers when it saved its arrays; before running a node's
# backward, the engine checks whether any of its saved inputs or outputs was written
# since. The fix is what the message says: edit a `clone()`, or edit before the op.
#
# Outputs are watched too: `x.exp()` saves its output, so `y = x.exp(); y.add_(1)` makes
# its backward raise the same way.
#
# **Predict, then run.** The counter belongs to the *Tensor*, and forward saves NumPy
# arrays. What if forward saves a NumPy **view** of its input, `x.reshape(-1)`, which
# shares the input's memory but is another array object?

# %%
class MySquareFlat(mg.Function):
    """y = x^2, saving a flattened view of x (backward reshapes it back)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.reshape(-1))  # a view: same memory, another array
        ctx.input_shape = x.shape
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (flat,) = ctx.saved_tensors
        return 2 * flat.reshape(ctx.input_shape) * grad_output


x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = MySquareFlat.apply(x)
with mg.no_grad():
    x.mul_(10)
try:
    y.sum().backward()
except RuntimeError as error:
    print(message(error))

# %% [markdown]
# Caught as well. The engine compares the *memory* a saved array uses with the memory of
# the node's inputs and outputs (`np.shares_memory`), so a view of an input saved in
# forward counts as that input. What it cannot see is what never goes through
# `ctx.save_for_backward`: an array kept as a ctx attribute (`ctx.x = x`) is not checked,
# and an edit of a leaf's data done straight through NumPy (`x.numpy()[0] = 5`) is not
# counted. Hence the rule: save what backward needs with `ctx.save_for_backward`,
# **inputs and outputs as they are**, and do the reshaping, slicing or transposing
# wherever it reads best (a view is free to make).
#
# Your forward cannot edit an input by mistake either: the arrays a Function of yours
# receives, and the ones it saved, are read-only, so a write such as `x[x < 0] = 0`
# raises at once, naming the Function (`np.maximum(x, 0)` makes a new array instead). A
# Function that *means* to write into its input, as PyTorch's in-place ops do, says so
# with `ctx.mark_dirty(x)` and returns that input, as in PyTorch; minigrad's own
# in-place methods (`add_`, `mul_`, `x[i] = v`, in `minigrad/tensor.py`) count the write
# themselves.
#
# ### Exercise 4 (2 points): `MyScaleRows`, safe from in-place edits
#
# Write `MyScaleRows.apply(x, s)` with $x$ of shape $(m, n)$ and $s$ of shape $(m,)$:
# row $i$ of $x$ multiplied by $s_i$,
#
# $$y_{ij} = x_{ij}\,s_i, \qquad
# \frac{\partial L}{\partial x_{ij}} = g_{ij}\,s_i, \qquad
# \frac{\partial L}{\partial s_i} = \sum_j g_{ij}\,x_{ij}.$$
#
# In NumPy, $s_i$ next to every element of its row is `s[:, None]`, shape $(m, 1)$. Save
# what backward needs **so that the version counter can watch it**. The check first tests
# values and gradients; then it multiplies `x` by 3 in place after forward, and then
# (after a fresh forward) `s`, and each time expects either the version counter's error
# or the gradient of the original numbers.

# %% tags=["solution:myscalerows"]
class MyScaleRows(mg.Function):
    """y = x * s[:, None];  dL/dx = g * s[:, None], dL/ds = (g * x).sum(1)"""

    @staticmethod
    def forward(ctx, x, s):
        # BEGIN SOLUTION
        ctx.save_for_backward(x, s)
        return x * s[:, None]
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        x, s = ctx.saved_tensors
        return grad_output * s[:, None], (grad_output * x).sum(axis=1)
        # END SOLUTION


# %% tags=["tests:myscalerows:2"]
check_in_place_safety(MyScaleRows, inputs=[(3, 4), (3,)],
                      reference=lambda x, s: x * s.unsqueeze(1), modified=(0, 1),
                      mistakes=SCALE_ROWS_MISTAKES)
### BEGIN HIDDEN TESTS
check_in_place_safety(MyScaleRows, inputs=[(5, 2), (5,)],
                      reference=lambda x, s: x * s.unsqueeze(1), modified=(1, 0),
                      mistakes=SCALE_ROWS_MISTAKES, seed=3)
### END HIDDEN TESTS

# %% [markdown] tags=["question:why-version-counter"]
# ### Question (3 points, graded by your teacher)
#
# `MySquare` saves $x$; after forward, `x.mul_(10)` under `no_grad` changes $x$, and
# then `backward()` raises instead of returning a gradient. Why would backward's result
# be wrong without the error, how does the engine notice the edit, and why must
# `MyScaleRows` save $x$ and $s$ with `ctx.save_for_backward` rather than as attributes
# (`ctx.x = x`) for that protection to work? Answer in the cell below, in a few
# sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that the saved array shares the tensor's memory, so the edit changes
#   what backward reads (a wrong gradient, $2 \cdot 10$ instead of $2 \cdot 1$, with no
#   error); that in-place operations increment the tensor's version counter and the
#   engine compares it with the version at save time before running the node's backward;
#   and that only arrays saved with `save_for_backward` are checked.
# - 2 points: two of the three.
# - 1 point: only that the gradient would be wrong.
# - 0 points: none of them.
#
# A full answer names: (1) saving does not copy: the saved array is the tensor's memory,
# so an in-place edit between forward and backward changes the numbers backward computes
# with, silently; (2) every in-place write (`mul_`, `add_`, `x[i] = v`, an optimizer
# step) increments `x._version`; the node remembers the versions when it saved its
# arrays, and the engine checks them before calling its backward; (3) the check covers
# what went through `ctx.save_for_backward` (compared by memory with the node's inputs
# and outputs, so a view counts too); an attribute is invisible to it, and the edit
# passes unnoticed. Accept "clone before editing" as the fix; do not accept "the engine
# copies the saved arrays".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-version-counter:3"]
# `save_for_backward` does not copy: the saved array is the memory of the tensor $x$
# itself, so `x.mul_(10)` also changes what backward reads, and backward would return $2
# \cdot 10 = 20$ instead of $2 \cdot 1 = 2$ with no sign that anything is wrong. To
# catch this, every in-place operation increments the tensor's version counter
# (`x._version`); the node records the versions of what it saved, and before running its
# backward the engine checks that none of them changed, raising if one did. That check
# only knows about the arrays saved with `ctx.save_for_backward`, which it matches by
# memory with the node's inputs and outputs; an array kept as `ctx.x` is just an
# attribute, so an edit of it would go unnoticed and give the wrong gradient. Hence
# `MyScaleRows` saves $x$ and $s$ with `save_for_backward`, as they are.

# %% [markdown]
# ## Summary
#
# - `ctx` is the graph node: what forward puts on it, `y.grad_fn` shows, and the
#   `ContextInspector` draws.
# - `ctx.save_for_backward(...)` / `ctx.saved_tensors`: save what the derivative is
#   written with. $e^x$, $\tanh$ and $\sigma$ need their **output**, $x^2$ its input.
#   Inputs and outputs are free to save (an output while its Tensor is alive, which the
#   next operation ensures); a new intermediate costs memory until backward (or
#   recompute it in backward instead).
# - `ctx.needs_input_grad[i]` is `False` for an input that needs no gradient: return
#   `None` for it and skip the work (don't compute it and then drop it). If no input
#   needs one, backward is never called.
# - A Function with several outputs gets one gradient per output, and adds the paths.
#   An unused output's gradient is zeros, or `None` after
#   `ctx.set_materialize_grads(False)`: then check for `None`.
# - `ctx.mark_non_differentiable(out)` gives an output (indices) no history: pass the
#   very array forward returns.
# - Every in-place write increments a tensor's version counter (`x._version`); backward
#   raises if a node's saved input or output was written after forward. It compares
#   memory, so a saved view of an input counts; it cannot see an array kept as a ctx
#   attribute: save what backward needs with `ctx.save_for_backward`. A Function's
#   inputs and saved arrays are read-only (`ctx.mark_dirty` for one that writes into
#   its input).
#
# ## Where this lives in minigrad
#
# | what | where |
# | --- | --- |
# | `Context` (`save_for_backward`, `saved_tensors`, `needs_input_grad`, `mark_non_differentiable`, `set_materialize_grads`) | `minigrad/function.py`, class `Context` |
# | the node that is the context (`y.grad_fn`) | `minigrad/function.py`, class `Node` |
# | `needs_input_grad` filled in, no node when nothing needs a gradient, several outputs, non-differentiable ones | `minigrad/function.py`, `Function.apply` |
# | a node's backward called: unused outputs' gradients materialized, saved versions checked first | `minigrad/autograd.py`, the backward engine |
# | the version counter, and the check | `minigrad/versions.py`, `VersionCounter` and `check_saved_versions` |
# | in-place methods that count their writes (`add_`, `mul_`, `x[i] = v`) | `minigrad/tensor.py`, class `Tensor` |
# | minigrad's own `Sigmoid`, `Sin`, `Cos` / `Max` (values and indices) | `minigrad/ops/elementwise.py` / `minigrad/ops/reduce.py` |
#
# The Functions you use with Tensors inside (PyTorch's style, where `forward` gets
# Tensors and `ctx.save_for_backward` saves Tensors) are `mg.autograd.Function`, in
# `minigrad/autograd_function.py`; the context is the same.
#
# Next: [Chapter 4, The backward engine](04_backward_engine.ipynb), which follows the
# gradients from node to node.
