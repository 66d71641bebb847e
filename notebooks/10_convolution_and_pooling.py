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
# # Chapter 10: Convolution and pooling
#
# A `Linear` layer looks at all 64 pixels of an 8x8 digit at once, with its own weight
# for each. A **convolution** slides one small kernel over the image instead: the same
# few weights are used at every position, so a stroke is found wherever it is. This
# chapter builds `Conv2d` and `MaxPool2d` from NumPy, with their backward passes, and
# trains a small CNN on the 8x8 digits. You will:
#
# 1. compute a convolution by hand, every output position of a 5x5 image and a 3x3
#    kernel, and see that PyTorch's "convolution" is a cross-correlation;
# 2. find how many outputs there are, with stride and padding (exercise 1);
# 3. turn the image into its windows, one row per window ("im2col", exercise 2), so that
#    the whole convolution, for a batch with channels, is ONE matrix product;
# 4. derive the backward: the weight's gradient is another matrix product, the input's
#    is "col2im", a scatter-add into overlapping windows, which is also a convolution
#    with the flipped kernel ("predict, then run": flipped or not?);
# 5. write the convolution as an `mg.Function`, with stride and padding (exercise 3);
# 6. write max pooling and its backward, where the gradient goes to one element per
#    window, and which one when there are ties (exercise 4);
# 7. write `Conv2d` as an `nn.Module` with PyTorch's weight layout and initialisation
#    (exercise 5);
# 8. train a small CNN on the digits, and look at its filters and feature maps.
#
# The five **exercises** (10 points) are cells where you write code (the teacher's copy
# has the answers between two "SOLUTION" marker comments; in the copy handed out to
# students they are replaced by `raise NotImplementedError()`), each followed by a test
# cell that checks your code and, when it is wrong, says which mistake it looks like.
#
# Stuck on an exercise? In a terminal, in the repository,
# `minigrad-course hint 10 my_im2col` gives a hint for exercise `my_im2col` (a nudge first;
# run it again for the next step), and `minigrad-course solution 10 my_im2col` the
# reference answer. Each exercise's ID is in its stub's message; chapter 0, section 1,
# lists the other commands.
#
# Run the cells from top to bottom. The first cell seeds the random generator, so you
# will see exactly the numbers printed here.

# %%
import math
import time

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.data import load_digits, train_test_split
from minigrad.exercises import check_array_function, check_function, check_module
from minigrad.exercises.convolution import (IM2COL_MISTAKES, OUTPUT_SIZE_MISTAKES,
                                            check_conv_init, conv2d_mistakes, im2col,
                                            max_pool2d_mistakes, output_size, tied_images)

mg.manual_seed(0)  # every random number in minigrad comes from this one generator
np.set_printoptions(precision=4, suppress=True)
rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. A convolution by hand
#
# One image of $5 \times 5$ pixels, one kernel of $3 \times 3$ weights. Lay the kernel on
# the image's top-left corner, multiply the nine pairs of numbers that lie on top of each
# other and add them up: that is output $(0, 0)$. Move the kernel one pixel right for
# $(0, 1)$, and so on, over every position where it fits entirely inside the image:
#
# $$\text{out}[p, q] = \sum_{i=0}^{2}\sum_{j=0}^{2} \text{kernel}[i, j]\;
# \text{image}[p + i,\, q + j].$$
#
# This is what PyTorch's `conv2d` computes. Mathematicians call it a
# **cross-correlation**: a convolution in their sense flips the kernel first
# ($\text{image}[p - i, q - j]$). Deep learning keeps the name "convolution" and does not
# flip (the kernel is learnt, so a flipped one would learn the flipped weights). Every
# output position, with small whole numbers:

# %%
image = np.array([[1, 2, 0, 1, 3],
                  [0, 1, 3, 2, 1],
                  [2, 0, 1, 0, 2],
                  [1, 3, 2, 1, 0],
                  [0, 1, 0, 2, 1]], dtype=np.float64)
kernel = np.array([[1, 0, -1],
                   [2, 0, -2],
                   [1, 0, -1]], dtype=np.float64)   # a vertical-edge detector (Sobel)
by_hand = np.zeros((3, 3))
for p in range(3):
    for q in range(3):
        window = image[p:p + 3, q:q + 3]
        by_hand[p, q] = (window * kernel).sum()
        print(f"out[{p}, {q}]: window rows {p}..{p + 2}, columns {q}..{q + 2} "
              f"{window.astype(int).tolist()} -> {by_hand[p, q]:+.0f}")

# %% [markdown]
# The same with minigrad's `F.conv2d`, which takes a batch of images with channels,
# $(N, C, H, W)$, and a weight $(\text{out channels}, \text{in channels}, kH, kW)$: here
# $(1, 1, 5, 5)$ and $(1, 1, 3, 3)$.

# %%
builtin = F.conv2d(mg.tensor(image[None, None]), mg.tensor(kernel[None, None]))
print(f"F.conv2d:\n{builtin.numpy()[0, 0]}\nsame as by hand: {np.allclose(builtin.numpy()[0, 0], by_hand)}")
flipped = kernel[::-1, ::-1]
print(f"with the kernel flipped (a convolution in the maths sense), out[0, 0] would be "
      f"{(image[:3, :3] * flipped).sum():+.0f}")

# %% [markdown]
# ## 2. How many outputs: stride and padding
#
# A kernel of size $k$ fits in $n - k + 1$ positions along a dimension of size $n$ (here
# $5 - 3 + 1 = 3$). Two settings change this:
#
# - **padding** $p$ adds $p$ zeros on *both* sides (top and bottom, left and right), so
#   the kernel slides over $n + 2p$ pixels; `padding=1` with a $3 \times 3$ kernel keeps
#   the size;
# - **stride** $s$ moves the kernel $s$ pixels at a time, so only every $s$-th position is
#   taken; a last window that would stick out past the padded image is dropped.
#
# The first window starts at 0 and the last must start at most at $n + 2p - k$; windows
# start at $0, s, 2s, \dots$, so
#
# $$\text{out} = \left\lfloor \frac{n + 2p - k}{s} \right\rfloor + 1.$$
#
# ### Exercise 1 (1 point): `conv_output_size`
#
# Return the number of outputs along one dimension, a Python `int`, for an input of size
# `size`, a kernel of size `kernel`, and the given `stride` and `padding`.

# %% tags=["solution:conv_output_size"]
def conv_output_size(size, kernel, stride=1, padding=0):
    # BEGIN SOLUTION
    return (size + 2 * padding - kernel) // stride + 1
    # END SOLUTION


# %% [markdown]
# The check tries sizes with and without padding and stride, against PyTorch's formula
# (`output_size` in `minigrad/exercises/convolution.py`), and names an off-by-one.

# %% tags=["tests:conv_output_size:1"]
check_array_function(conv_output_size,
                     cases=[(10, 3, 1, 2), (8, 3, 2, 1), (7, 3, 2, 1), (8, 8, 1, 0),
                            (28, 5, 3, 0), (6, 2, 2, 0)],
                     reference=output_size, mistakes=OUTPUT_SIZE_MISTAKES)
### BEGIN HIDDEN TESTS
check_array_function(conv_output_size,
                     cases=[(13, 4, 3, 2), (9, 5, 2, 0), (32, 7, 4, 3), (5, 5, 1, 2),
                            (11, 2, 3, 1), (1, 1, 1, 0)],
                     reference=output_size, mistakes=OUTPUT_SIZE_MISTAKES)
### END HIDDEN TESTS


# %% [markdown]
# ## 3. All windows at once, and one matrix product
#
# Python loops over positions are slow. NumPy can give *every* window at once, without
# copying: `np.lib.stride_tricks.sliding_window_view` returns a view whose two new last
# dimensions index inside a window. For our image, 3 x 3 windows of 3 x 3 pixels:

# %%
windows = np.lib.stride_tricks.sliding_window_view(image, (3, 3))
print(f"windows: shape {windows.shape}, a view of the image: "
      f"{np.shares_memory(windows, image)}")
print(f"window (1, 2) =\n{windows[1, 2]}")
print(f"the convolution is one sum over the last two dimensions: "
      f"{np.allclose((windows * kernel).sum(axis=(-2, -1)), by_hand)}")

# %% [markdown]
# A stride of $s$ keeps every $s$-th window: `windows[::s, ::s]`. Padding is
# `np.pad` first.
#
# **Batches and channels.** A real layer gets $x$ of shape $(N, C, H, W)$ and has a weight
# of shape $(O, C, kH, kW)$: $O$ kernels, each as deep as the input has channels. Output
# channel $o$ at position $(p, q)$ of image $n$ is
#
# $$\text{out}[n, o, p, q] = b_o + \sum_{c, i, j} W[o, c, i, j]\;
# x_{\text{pad}}[n, c,\, sp + i,\, sq + j].$$
#
# Flatten each window (its $C \cdot kH \cdot kW$ numbers in the order $(c, i, j)$) into
# one **row**, and stack the rows of all windows of all images: a matrix of shape
# $(N \cdot OH \cdot OW,\; C \cdot kH \cdot kW)$. This is **im2col** ("image to
# columns"; here windows are rows, as in `x @ W.T`). The weight, reshaped to
# $(O,\; C \cdot kH \cdot kW)$, has its numbers in the same $(c, i, j)$ order, so
#
# $$\underbrace{\text{out}}_{(N\,OH\,OW,\;O)} =
# \underbrace{\text{cols}}_{(N\,OH\,OW,\;C\,kH\,kW)}\;
# \underbrace{W_{\text{mat}}^{\top}}_{(C\,kH\,kW,\;O)} + b,$$
#
# a `Linear` layer applied to every window (chapter 7), then reshaped to
# $(N, OH, OW, O)$ and transposed to $(N, O, OH, OW)$.
#
# ### Exercise 2 (2 points): `my_im2col`
#
# Write `my_im2col(x, kernel_size, stride=1, padding=0)`: `x` is a NumPy array
# $(N, C, H, W)$, `kernel_size` a pair $(kH, kW)$, `stride` and `padding` ints. Return
# the matrix of shape $(N \cdot OH \cdot OW,\; C \cdot kH \cdot kW)$ with one row per
# window, rows in the order $(n, p, q)$ and each row in the order $(c, i, j)$.
# (`sliding_window_view(x, kernel_size, axis=(2, 3))` gives
# $(N, C, \cdot, \cdot, kH, kW)$; think about which dimensions must be next to each
# other before a `reshape`.)

# %% tags=["solution:my_im2col"]
def my_im2col(x, kernel_size, stride=1, padding=0):
    # BEGIN SOLUTION
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    view = np.lib.stride_tricks.sliding_window_view(x, kernel_size, axis=(2, 3))
    view = view[:, :, ::stride, ::stride]                      # (N, C, OH, OW, kH, kW)
    n, c, out_h, out_w, kh, kw = view.shape
    return view.transpose(0, 2, 3, 1, 4, 5).reshape(n * out_h * out_w, c * kh * kw)
    # END SOLUTION


# %% [markdown]
# The check runs your function on non-square images and kernels, with stride 2 and
# padding 1, against `im2col` of `minigrad/exercises/convolution.py`.

# %% tags=["tests:my_im2col:2"]
check_array_function(my_im2col,
                     cases=[(rng.standard_normal((2, 3, 4, 5)), (2, 3), 1, 0),
                            (rng.standard_normal((2, 2, 5, 6)), (3, 2), 2, 1),
                            (rng.standard_normal((1, 3, 6, 5)), (3, 3), 1, 1)],
                     reference=im2col, mistakes=IM2COL_MISTAKES)
### BEGIN HIDDEN TESTS
hidden_rng = np.random.default_rng(8)
check_array_function(my_im2col,
                     cases=[(hidden_rng.standard_normal((3, 1, 7, 4)), (4, 2), 3, 2),
                            (hidden_rng.standard_normal((1, 4, 5, 5)), (1, 1), 1, 0),
                            (hidden_rng.standard_normal((2, 2, 6, 7)), (2, 4), 2, 0)],
                     reference=im2col, mistakes=IM2COL_MISTAKES)
### END HIDDEN TESTS


# %% [markdown]
# With it, a whole convolution is one matrix product. Compare with `F.conv2d` on a batch
# of 2 images with 3 channels, 4 output channels, stride 2 and padding 1:
#
# *Stuck on `my_im2col`? `from minigrad.course import use_reference; use_reference("my_im2col")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*

# %%
x = rng.standard_normal((2, 3, 7, 6))
weight = rng.standard_normal((4, 3, 3, 3))
bias = rng.standard_normal(4)
cols = my_im2col(x, (3, 3), stride=2, padding=1)
out_h, out_w = conv_output_size(7, 3, 2, 1), conv_output_size(6, 3, 2, 1)
out = (cols @ weight.reshape(4, -1).T + bias).reshape(2, out_h, out_w, 4).transpose(0, 3, 1, 2)
expected = F.conv2d(mg.tensor(x), mg.tensor(weight), mg.tensor(bias), stride=2, padding=1)
print(f"cols {cols.shape} @ W.T {weight.reshape(4, -1).T.shape} -> out {out.shape}")
print(f"same as F.conv2d: {np.allclose(out, expected.numpy())}")

# %% [markdown]
# ## 4. The backward pass
#
# Call the im2col matrix $X_c$ $(M, K)$, with $M = N \cdot OH \cdot OW$ windows and
# $K = C \cdot kH \cdot kW$ numbers per window, and the upstream gradient as $G$ $(M, O)$,
# one row per window like $X_c$. `grad_output` arrives as $(N, O, OH, OW)$, the layout of
# the output, which forward made from the product's $(M, O)$ by a reshape to
# $(N, OH, OW, O)$ and a transpose. $G$ undoes both, in reverse order: first move $O$
# back last, then reshape, `grad_output.transpose(0, 2, 3, 1).reshape(-1, O)`. (A plain
# `grad_output.reshape(-1, O)` has the right shape but mixes channels and positions.)
# The forward is $Y = X_c W_{\text{mat}}^{\top} + b$: chapter 7's `Linear` with the
# windows as the batch. So, shapes first:
#
# $$\underbrace{\frac{\partial L}{\partial W_{\text{mat}}}}_{(O,\,K)} =
# \underbrace{G^{\top}}_{(O,\,M)}\;\underbrace{X_c}_{(M,\,K)},\qquad
# \underbrace{\frac{\partial L}{\partial X_c}}_{(M,\,K)} =
# \underbrace{G}_{(M,\,O)}\;\underbrace{W_{\text{mat}}}_{(O,\,K)},\qquad
# \frac{\partial L}{\partial b} = \sum_{\text{rows}} G.$$
#
# The weight's gradient sums over every window of every image, as a weight shared by all
# positions must (chapter 4: a value used many times gets the sum); reshape it to
# $(O, C, kH, kW)$. The bias is added at every position, so its gradient is $G$ summed
# over $(N, OH, OW)$.
#
# **The input's gradient: col2im.** Row $m$ of $\partial L / \partial X_c$ is the
# gradient of window $m$'s numbers. But the windows *overlap*: with a $3 \times 3$ kernel
# and stride 1, a pixel in the middle of the image is in 9 windows. The pixel's gradient
# is the **sum** over all the windows it is in; each window's gradient is added back
# where the window came from. This is chapter 6's scatter-add (`grad[idx] += g` with
# repeated indices): **col2im**. With `=` instead of `+=`, each pixel keeps only the last
# window written.
#
# Where padding was added, cut it off the gradient at the end (the zeros of the padding
# are not inputs); with a stride, the windows start $s$ pixels apart, and a pixel that is
# in no window (the ones a stride skips at the edge) gets 0.
#
# Here is col2im for one channel, a loop over the windows, with $G$ of a $3 \times 3$
# output:

# %%
def col2im_one_channel(grad_windows, image_shape, stride=1):
    """grad_windows (OH, OW, kH, kW): each window's gradient, added back into the image."""
    out_h, out_w, kh, kw = grad_windows.shape
    grad = np.zeros(image_shape)
    for p in range(out_h):
        for q in range(out_w):
            grad[p * stride:p * stride + kh, q * stride:q * stride + kw] += grad_windows[p, q]
    return grad


G = np.array([[1.0, 0.0, 2.0],
              [0.0, -1.0, 0.0],
              [1.0, 0.0, 1.0]])
grad_windows = G[:, :, None, None] * kernel          # window (p, q) gets G[p, q] * kernel
grad_col2im = col2im_one_channel(grad_windows, image.shape)
x_t = mg.tensor(image[None, None], requires_grad=True)
(F.conv2d(x_t, mg.tensor(kernel[None, None])) * mg.tensor(G[None, None])).sum().backward()
print(f"col2im:\n{grad_col2im}\nsame as minigrad's backward: {np.allclose(grad_col2im, x_t.grad.numpy()[0, 0])}")

# %% [markdown]
# **Predict, then run.** The input's gradient can also be written as one convolution:
# pad $G$ with $k - 1$ zeros on every side (a "full" convolution) and slide a kernel over
# it. Is that kernel the *same* kernel as the forward's, or the *flipped* one,
# `kernel[::-1, ::-1]`? Think of the top-left pixel: it is in only one window, $(0, 0)$,
# at kernel offset $(0, 0)$, so its gradient is $G[0, 0]\,\text{kernel}[0, 0]$. Where is
# $G[0, 0]$ in the padded $G$ when the sliding kernel sits at the top-left corner?

# %%
padded_G = np.pad(G, 2)                                # k - 1 = 2 zeros on every side
full_windows = np.lib.stride_tricks.sliding_window_view(padded_G, (3, 3))
with_same = (full_windows * kernel).sum(axis=(-2, -1))
with_flipped = (full_windows * kernel[::-1, ::-1]).sum(axis=(-2, -1))
print(f"full correlation with the same kernel equals col2im:    {np.allclose(with_same, grad_col2im)}")
print(f"full correlation with the flipped kernel equals col2im: {np.allclose(with_flipped, grad_col2im)}")

# %% [markdown]
# **Flipped.** At the top-left corner of the padded $G$, $G[0, 0]$ sits under the
# kernel's *bottom-right* weight, so the kernel there must be
# $\text{kernel}[::-1, ::-1]$ for $G[0, 0]$ to meet $\text{kernel}[0, 0]$. In general,
# pixel $(r, c)$ gets $\sum_{p, q} G[p, q]\,\text{kernel}[r - p, c - q]$: the indices run
# backwards, which is a convolution in the maths sense, that is a cross-correlation with
# the flipped kernel. The two views, side by side:
#
# | view | input gradient |
# | --- | --- |
# | col2im | each window's gradient $G[p, q] \cdot \text{kernel}$ (kernel **as it is**), added back into the window |
# | one convolution | full cross-correlation of $G$ with the **flipped** kernel (for stride 1) |
#
# A backward that flips in the first view, or forgets to flip in the second, is the
# classic **flipped kernel** mistake: a symmetric kernel hides it, which is why tests use
# random ones. (With a stride, the second view needs zeros inserted between $G$'s
# entries; col2im handles stride and padding with no extra thought, so the exercise uses
# it.)
#
# ### Exercise 3 (3 points): `MyConv2dFunction`
#
# Write the convolution as an `mg.Function`: `forward(ctx, x, weight, bias, stride=1,
# padding=0)` with `x` $(N, C, H, W)$, `weight` $(O, C, kH, kW)$ and `bias` $(O,)$ NumPy
# arrays, returning $(N, O, OH, OW)$ (use your `my_im2col`); and `backward`, returning the
# gradients for `x`, `weight` and `bias` (stride and padding are passed as keywords,
# `MyConv2dFunction.apply(x, weight, bias, stride=2, padding=1)`: settings, not inputs,
# so they get no gradient). For the input's gradient, scatter-add each window's gradient
# back into a zero array of the *padded* image's shape with a loop over the
# $OH \times OW$ windows (`+=` on a slice), then cut the padding off.
#
# *`forward` uses your `my_im2col` of exercise 2: if it is not done yet,
# `from minigrad.course import use_reference; use_reference("my_im2col")` loads the reference one.
# The check judges this exercise on its own: with a wrong `my_im2col` it runs on the
# reference one and tells you to fix exercise 2 first.*

# %% tags=["solution:my_conv2d"]
class MyConv2dFunction(mg.Function):
    """out = im2col(x) @ W.T + b;  dW = G.T @ im2col(x),  dx = col2im(G @ W),  db = sum of G"""

    @staticmethod
    def forward(ctx, x, weight, bias, stride=1, padding=0):
        # BEGIN SOLUTION
        n, _, h, w = x.shape
        out_channels, channels, kh, kw = weight.shape
        out_h = conv_output_size(h, kh, stride, padding)
        out_w = conv_output_size(w, kw, stride, padding)
        cols = my_im2col(x, (kh, kw), stride, padding)               # (N OH OW, C kH kW)
        ctx.save_for_backward(cols, weight)
        ctx.x_shape, ctx.stride, ctx.padding = x.shape, stride, padding
        out = cols @ weight.reshape(out_channels, -1).T + bias       # (N OH OW, O)
        return out.reshape(n, out_h, out_w, out_channels).transpose(0, 3, 1, 2)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        cols, weight = ctx.saved_tensors
        stride, padding = ctx.stride, ctx.padding
        n, channels, h, w = ctx.x_shape
        out_channels, _, kh, kw = weight.shape
        _, _, out_h, out_w = grad_output.shape
        g = grad_output.transpose(0, 2, 3, 1).reshape(-1, out_channels)   # (N OH OW, O)
        grad_weight = (g.T @ cols).reshape(weight.shape)
        grad_bias = g.sum(axis=0)
        grad_windows = (g @ weight.reshape(out_channels, -1)).reshape(
            n, out_h, out_w, channels, kh, kw)
        grad_x = np.zeros((n, channels, h + 2 * padding, w + 2 * padding))
        for p in range(out_h):
            for q in range(out_w):
                grad_x[:, :, p * stride:p * stride + kh, q * stride:q * stride + kw] += \
                    grad_windows[:, p, q]
        grad_x = grad_x[:, :, padding:padding + h, padding:padding + w]
        return grad_x, grad_weight, grad_bias
        # END SOLUTION


# %% [markdown]
# The check runs your Function on non-square images and kernels with stride 1 and no
# padding, then with stride 2 and padding 1, then with padding 1, against `F.conv2d`,
# with a random upstream gradient; `conv2d_mistakes` (in
# `minigrad/exercises/convolution.py`) lists the mistakes it can name.

# %% tags=["tests:my_conv2d:3"]
def reference_conv2d(x, weight, bias, stride=1, padding=0):
    return F.conv2d(x, weight, bias, stride=stride, padding=padding)


uses = {"conv_output_size": "minigrad.exercises.convolution:output_size",
        "my_im2col": "minigrad.exercises.convolution:im2col"}
check_function(MyConv2dFunction, inputs=[[(2, 3, 5, 6), (4, 3, 3, 2), (4,)]],
               reference=reference_conv2d, mistakes=conv2d_mistakes(1, 0), uses=uses,
               more=[({"stride": 2, "padding": 1}, [[(2, 2, 6, 5), (3, 2, 3, 3), (3,)]],
                      conv2d_mistakes(2, 1)),
                     ({"padding": 1}, [[(1, 2, 4, 5), (2, 2, 2, 3), (2,)]],
                      conv2d_mistakes(1, 1))])
### BEGIN HIDDEN TESTS
check_function(MyConv2dFunction, inputs=[[(3, 1, 6, 4), (2, 1, 2, 2), (2,)]],
               reference=reference_conv2d, mistakes=conv2d_mistakes(1, 0), seed=8, uses=uses,
               more=[({"stride": 3, "padding": 2}, [[(1, 3, 7, 8), (4, 3, 4, 3), (4,)]],
                      conv2d_mistakes(3, 2)),
                     ({"stride": 2}, [[(2, 2, 7, 7), (1, 2, 3, 3), (1,)]],
                      conv2d_mistakes(2, 0))])
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-col2im-adds"]
# ### Question (3 points, graded by your teacher)
#
# In `MyConv2dFunction`'s backward, why is the input's gradient a scatter-*add* of every
# window's gradient back into the (padded) image, and why does the weight's gradient,
# $G^\top X_c$, add up contributions from every window of every image? What goes wrong
# with `=` instead of `+=` in the col2im loop? Answer in the cell below, in a few
# sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (3 points).**
# - 3 points: names that windows overlap, so a pixel is used by several outputs and its
#   gradient is the sum over the windows that contain it; that `=` keeps only the last
#   window's contribution (a wrong gradient, no error); and that the same kernel weights
#   are used at every position, so their gradient sums over all windows (which the
#   product $G^\top X_c$ does).
# - 2 points: two of the three.
# - 1 point: one of the three.
# - 0 points: none.
#
# A full answer names: (1) with a $3 \times 3$ kernel and stride 1 a pixel in the middle
# of the image lies in 9 windows, so it is used 9 times, and its gradient is the sum of
# what each window sends back (chapter 6's scatter-add, chapter 4's rule); (2) with `=`
# each pixel keeps only the last window written into it, silently; (3) the weight is
# shared by all $N \cdot OH \cdot OW$ positions, so $\partial L/\partial W_{\text{mat}}
# = G^\top X_c$ sums over the $M$ rows, one per window; the bias likewise sums $G$ over
# $(N, OH, OW)$; (4) optionally: the padding's zeros are not inputs, so their part of
# the gradient is cut off. Accept the equivalent view as a full correlation of $G$ with
# the flipped kernel for (1); do not accept "the gradient is copied back to each
# window".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-col2im-adds:3"]
# The windows overlap: with a $3 \times 3$ kernel and stride 1 a pixel in the middle of
# the image is part of 9 windows, so it contributes to 9 outputs. Like any number used
# several times, its gradient is the sum of the gradients of all those uses, so each
# window's gradient must be added back where the window came from. With `=` instead of
# `+=`, every pixel would keep only the contribution of the last window written into it,
# and the gradient would be wrong without any error. The weight is shared in the same
# way: one kernel is used at every position of every image, so its gradient is the sum
# of the contributions of all windows, which the product $G^\top X_c$ computes because
# it sums over the $M$ rows of $X_c$, one per window.

# %% [markdown]
# *Stuck on `MyConv2dFunction`? `from minigrad.course import use_reference; use_reference("my_conv2d")`
# in a new cell loads the reference answer, so the cells below run (then it is not counted as yours).*
#
# `gradcheck` in float64 with stride 2 and padding 1:

# %%
x64 = mg.randn(2, 2, 5, 6, dtype=mg.float64, requires_grad=True)
w64 = mg.randn(3, 2, 3, 2, dtype=mg.float64, requires_grad=True)
b64 = mg.randn(3, dtype=mg.float64, requires_grad=True)
print("gradcheck:", mg.gradcheck(lambda x, w, b: MyConv2dFunction.apply(x, w, b, stride=2,
                                                                        padding=1),
                                 [x64, w64, b64]))

# %% [markdown]
# ## 5. Max pooling
#
# `MaxPool2d(kernel_size)` keeps the largest number of each window (by default the
# windows do not overlap: the stride is the kernel size). It halves an image's height
# and width with `kernel_size=2`, and lets a feature move a pixel without changing the
# output much.
#
# **Its backward.** $\text{out} = \max(a_1, \dots, a_m)$ changes only with the largest
# $a_j$ (move any other a little and the max stays), so the window's gradient goes
# entirely to the **argmax** of the window, and every other element gets 0. Not to every
# element, and not divided among them (that is average pooling, whose output *does*
# depend on each element equally). Where windows overlap (stride smaller than the
# kernel), a pixel can be the maximum of several windows: it gets the sum.
#
# **Predict, then run: ties.** In the window `[[1, 3], [3, 0]]` two elements are the
# maximum. Which gets the gradient: the first `3` (row by row), the second, or half each?

# %%
tie = mg.tensor([[[[1.0, 3.0],
                   [3.0, 0.0]]]], requires_grad=True)
F.max_pool2d(tie, 2).sum().backward()
print(f"max_pool2d's gradient:\n{tie.grad.numpy()[0, 0]}")
tie_reduction = mg.tensor([[1.0, 3.0], [3.0, 0.0]], requires_grad=True)
tie_reduction.max().backward()
print(f"x.max()'s gradient (chapter 5):\n{tie_reduction.grad.numpy()}")

# %% [markdown]
# `max_pool2d` gives the whole gradient to the **first** maximal element, in row-major
# order inside the window, as PyTorch does (its CPU kernel keeps the first maximum and
# replaces it only by a strictly larger value; the tests of this chapter compare with
# PyTorch). `np.argmax` also returns the first maximum, so it picks the same element.
# Chapter 5's `x.max()` reduction splits the gradient evenly between ties instead, as
# PyTorch's `amax` does: a different function, a different convention.
#
# ### Exercise 4 (2 points): `MyMaxPool2d`
#
# Write max pooling as an `mg.Function`: `forward(ctx, x, kernel_size, stride=None)`
# with `x` $(N, C, H, W)$, square windows of `kernel_size` (an int) and `stride`
# (default: `kernel_size`), no padding; save what backward needs (the index of each
# window's winner is enough: `np.argmax` over the window flattened to $kH \cdot kW$
# numbers). `backward` returns the gradient for `x` only: `kernel_size` and `stride` are
# passed as keywords (`MyMaxPool2d.apply(x, kernel_size=2)`), settings and not inputs.
#
# In `backward`, a window's winner is a flat index `j` in $0 \dots k^2 - 1$ (row by row),
# so its place inside the window is `divmod(j, k)`, that is row `j // k` and column
# `j % k`; both work on whole arrays of indices too. To add values at places given by
# arrays of indices, with repeats added up (where windows overlap), NumPy has
# `np.add.at`; a small example on a 1-d array:

# %%
winners = np.array([3, 1, 3])                   # flat indices in 2 x 2 windows
print("row, column inside the window:", *divmod(winners, 2))
total = np.zeros(5)
np.add.at(total, [0, 2, 2], [1.0, 10.0, 100.0])  # index 2 twice: both are added
print("np.add.at:", total, "(total[[0, 2, 2]] += ... would keep only 100 at index 2)")

# %% [markdown]
# With images, index `grad_x` with one array per axis (batch, channel, row, column);
# `np.ogrid[:n, :c]` gives batch and channel index arrays that broadcast against the
# others.

# %% tags=["solution:my_maxpool2d"]
class MyMaxPool2d(mg.Function):
    """out = the max of each window;  dx: each window's gradient to its first maximum"""

    @staticmethod
    def forward(ctx, x, kernel_size, stride=None):
        # BEGIN SOLUTION
        k = kernel_size
        s = k if stride is None else stride
        view = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::s, ::s]
        flat = view.reshape(view.shape[:4] + (k * k,))       # (N, C, OH, OW, k k)
        winner = flat.argmax(axis=-1)                        # the first maximum
        ctx.save_for_backward(winner)
        ctx.x_shape, ctx.k, ctx.s = x.shape, k, s
        return flat.max(axis=-1)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # BEGIN SOLUTION
        (winner,) = ctx.saved_tensors
        k, s = ctx.k, ctx.s
        grad_x = np.zeros(ctx.x_shape)
        n, c, out_h, out_w = grad_output.shape
        rows, cols = winner // k, winner % k                 # the winner inside its window
        images, channels = np.ogrid[:n, :c]
        for p in range(out_h):
            for q in range(out_w):
                np.add.at(grad_x, (images, channels, p * s + rows[:, :, p, q],
                                   q * s + cols[:, :, p, q]), grad_output[:, :, p, q])
        return grad_x
        # END SOLUTION


# %% [markdown]
# The check uses images of a few whole numbers, so that most windows hold ties, with
# windows of 2 (no overlap) and of 3 with stride 2 (overlapping), against `F.max_pool2d`;
# then random images.

# %% tags=["tests:my_maxpool2d:2"]
check_function(MyMaxPool2d, inputs=[[tied_images((2, 2, 4, 6))]],
               reference=lambda x, kernel_size, stride=None: F.max_pool2d(x, kernel_size,
                                                                          stride),
               kwargs={"kernel_size": 2}, mistakes=max_pool2d_mistakes(2),
               more=[({"kernel_size": 3, "stride": 2}, [[tied_images((2, 1, 7, 5), seed=1)]],
                      max_pool2d_mistakes(3, 2)),
                     ({"kernel_size": 2, "stride": 1}, [[(1, 2, 4, 5)]])])
### BEGIN HIDDEN TESTS
check_function(MyMaxPool2d, inputs=[[tied_images((1, 3, 6, 9), seed=8)]],
               reference=lambda x, kernel_size, stride=None: F.max_pool2d(x, kernel_size,
                                                                          stride),
               kwargs={"kernel_size": 3}, mistakes=max_pool2d_mistakes(3), seed=8,
               more=[({"kernel_size": 2, "stride": 3}, [[tied_images((2, 2, 8, 7), seed=9)]],
                      max_pool2d_mistakes(2, 3)),
                     ({"kernel_size": 4, "stride": 1}, [[(2, 1, 5, 6)]])])
### END HIDDEN TESTS


# %% [markdown] tags=["question:why-maxpool-gradient"]
# ### Question (2 points, graded by your teacher)
#
# Why does max pooling's backward send each window's whole gradient to one element, and
# not spread it over the window as average pooling does? Which element gets it when two
# are tied for the maximum, and why is that not a bug even though chapter 5's `x.max()`
# splits ties evenly? Answer in the cell below, in a few sentences.
#
# === BEGIN MARK SCHEME ===
#
# **Rubric (2 points).**
# - 2 points: explains that moving a non-maximal element a little does not change the
#   maximum (derivative 0) while the maximum moves with its element (derivative 1), so
#   the gradient goes to the argmax only; AND that at a tie the max has a kink, no
#   single derivative, so any split adding up to the upstream gradient is valid:
#   `max_pool2d` gives it all to the first maximum (as PyTorch), `x.max()` splits it,
#   two conventions.
# - 1 point: one of the two.
# - 0 points: neither.
#
# A full answer names: (1) $\partial \max/\partial a_j$ is 1 for the maximal element and
# 0 for the others, so the window's gradient goes entirely to its argmax; (2) average
# pooling's output depends on every element with weight $1/k^2$, which is why it spreads
# the gradient; (3) at a tie the maximum is not differentiable; any split that adds up
# to the upstream gradient is a valid choice; minigrad's `max_pool2d`, like PyTorch's,
# gives it to the first maximum in row-major order, while `x.max()` (like `torch.amax`)
# splits it evenly; compare like with like. Accept the overlap remark (a pixel that wins
# several windows gets the sum); do not accept "the gradient is divided by the window
# size".
#
# === END MARK SCHEME ===

# %% [markdown] tags=["answer:why-maxpool-gradient:2"]
# The output of a window is its largest element. Moving any other element a little does
# not change that maximum, so their derivative is 0, while the maximum moves one for one
# with its own element, derivative 1: the whole gradient of the window goes to the
# element that won. Average pooling is different because its output depends on every
# element equally, so each gets a share. When two elements tie, the maximum has a kink
# and no single derivative, so any split that adds up to the upstream gradient is a
# valid choice. `max_pool2d` gives everything to the first maximum in row order, as
# PyTorch does, and `x.max()` splits it evenly, as `torch.amax` does: two conventions,
# so one must compare like with like.

# %% [markdown]
# ## 6. `Conv2d` as a Module
#
# The layer owns a weight of shape $(\text{out\_channels}, \text{in\_channels}, kH, kW)$
# (PyTorch's layout: one kernel per output channel, as deep as the input) and a bias of
# shape $(\text{out\_channels},)$. PyTorch initialises them as `nn.Linear` (chapter 7),
# with the **fan-in** of one output, the number of inputs each output adds up:
# $\text{in\_channels} \cdot kH \cdot kW$. Both are uniform in
# $\pm 1/\sqrt{\text{fan\_in}}$ (`kaiming_uniform_` with $a = \sqrt{5}$ for the weight):

# %%
layer = nn.Conv2d(16, 20, (5, 4))
fan_in = 16 * 5 * 4
weights = layer.weight.detach().numpy()
print(f"weight {weights.shape}, bias {tuple(layer.bias.shape)}")
print(f"1/sqrt(fan_in) = 1/sqrt({fan_in}) = {1 / math.sqrt(fan_in):.4f}; weights from "
      f"{weights.min():.4f} to {weights.max():.4f}")

# %% [markdown]
# ### Exercise 5 (2 points): `MyConv2d`
#
# Write the layer: `__init__(in_channels, out_channels, kernel_size, stride=1,
# padding=0)` with `kernel_size` an int or a pair; create `self.weight` and `self.bias`
# as `nn.Parameter`s with PyTorch's shapes and initialisation
# (`mg.empty(*shape).uniform_(low, high)`); `forward` applies your `MyConv2dFunction`
# with the layer's stride and padding.
#
# *`forward` uses your `MyConv2dFunction` of exercise 3: if it is not done yet,
# `from minigrad.course import use_reference; use_reference("my_conv2d")` loads the reference one.
# The check judges this exercise on its own: with a wrong `MyConv2dFunction` it runs on the
# reference one and tells you to fix exercise 3 first.*

# %% tags=["solution:my_conv2d_layer"]
class MyConv2d(nn.Module):
    """y = conv2d(x, weight, bias), weight (out_channels, in_channels, kH, kW)"""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__()
        self.stride, self.padding = stride, padding
        # BEGIN SOLUTION
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        bound = 1 / math.sqrt(in_channels * kh * kw)
        self.weight = nn.Parameter(
            mg.empty(out_channels, in_channels, kh, kw).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_channels).uniform_(-bound, bound))
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        return MyConv2dFunction.apply(x, self.weight, self.bias, stride=self.stride,
                                      padding=self.padding)
        # END SOLUTION


# %% [markdown]
# Two checks: `check_conv_init` builds a `MyConv2d(16, 20, (5, 4))` and measures its
# parameters (names, shapes, the spread of 6,400 weights); `check_module` gives your
# layer the weights of an `nn.Conv2d` and compares outputs and gradients.

# %% tags=["tests:my_conv2d_layer:2"]
uses = {"MyConv2dFunction": "minigrad.exercises.convolution:ReferenceConv2dFunction"}
check_conv_init(MyConv2d)
check_module(MyConv2d, nn.Conv2d, args=(2, 3, (3, 2)), kwargs={"stride": 2, "padding": 1},
             inputs=[[(2, 2, 5, 6)]], uses=uses)
check_module(MyConv2d, nn.Conv2d, args=(1, 2, 3), inputs=[[(1, 1, 5, 4)]],  # an int kernel_size
             uses=uses)
### BEGIN HIDDEN TESTS
check_conv_init(MyConv2d, args=(12, 24, (3, 6)), seed=8)
check_module(MyConv2d, nn.Conv2d, args=(3, 2, (2, 4)), kwargs={"stride": 3, "padding": 2},
             inputs=[[(2, 3, 7, 6)]], seed=8, uses=uses)
check_module(MyConv2d, nn.Conv2d, args=(2, 4, 2), kwargs={"padding": 1},
             inputs=[[(3, 2, 4, 4)]], seed=9, uses=uses)
### END HIDDEN TESTS


# %% [markdown]
# ## 7. A small CNN on the 8x8 digits
#
# `load_digits(images=True)` gives the 1,797 digits as $(1797, 8, 8)$ images, pixels
# 0 to 16. Two convolution blocks (3 x 3 kernels with padding 1 keep the size, max
# pooling halves it: $8 \to 4 \to 2$), then a `Linear` layer on the $16 \cdot 2 \cdot 2$
# features. It uses minigrad's own `nn.Conv2d` and `nn.MaxPool2d` (the same maths as
# yours, with the loops replaced by a loop over the kernel's offsets), so it trains in a
# few seconds.

# %%
images, labels = load_digits(images=True)
images = images[:, None] / 16.0                       # (N, 1, 8, 8), pixels in 0..1
x_train, x_test, y_train, y_test = train_test_split(images, labels, test_size=0.25, seed=0)
print(f"train {x_train.shape}, test {x_test.shape}")

mg.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # (N, 8, 4, 4)
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # (N, 16, 2, 2)
    nn.Flatten(), nn.Linear(16 * 2 * 2, 10))
optimizer = mg.optim.Adam(model.parameters(), lr=0.01)
order = np.random.default_rng(0)


def accuracy(x, y):
    with mg.no_grad():
        return float((model(mg.tensor(x)).argmax(dim=1).numpy() == y).mean())


start = time.perf_counter()
for epoch in range(8):
    for batch in np.array_split(order.permutation(len(x_train)), len(x_train) // 64):
        loss = F.cross_entropy(model(mg.tensor(x_train[batch])), mg.tensor(y_train[batch]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch + 1}: last loss {loss.item():.3f}, "
          f"test accuracy {accuracy(x_test, y_test):.3f}")
seconds = time.perf_counter() - start

# %%
# NBVAL_IGNORE_OUTPUT
print(f"trained in {seconds:.1f} s")
print(f"parameters: {sum(p.numel() for p in model.parameters())}")

# %% [markdown]
# 96.9% of the 450 test digits are right after 8 epochs, with 1,898 parameters in all
# (one `Linear` layer from the 64 pixels to 32 hidden units alone has 2,080). **Its filters**: the 8 kernels of
# the first layer, each a $3 \times 3$ picture (blue negative, red positive):

# %%
filters = model[0].weight.detach().numpy()[:, 0]        # (8, 3, 3)
figure, axes = plt.subplots(1, 8, figsize=(8, 1.3))
limit = np.abs(filters).max()
for k, ax in enumerate(axes):
    ax.imshow(filters[k], cmap="bwr", vmin=-limit, vmax=limit)
    ax.set_title(f"filter {k}", fontsize=8)
    ax.axis("off")
plt.show()

# %% [markdown]
# **Its feature maps**: one test digit, and what each of the 8 filters makes of it after
# the ReLU (bright where the filter's pattern is found):

# %%
digit = x_test[:1]
with mg.no_grad():
    maps = model[1](model[0](mg.tensor(digit))).numpy()[0]   # (8, 8, 8)
figure, axes = plt.subplots(1, 9, figsize=(9, 1.3))
axes[0].imshow(digit[0, 0], cmap="gray_r")
axes[0].set_title(f"digit {y_test[0]}", fontsize=8)
for k in range(8):
    axes[k + 1].imshow(maps[k], cmap="magma")
    axes[k + 1].set_title(f"map {k}", fontsize=8)
for ax in axes:
    ax.axis("off")
plt.show()

# %% [markdown]
# ## Summary
#
# - PyTorch's convolution is a cross-correlation: $\text{out}[p, q] = \sum_{i,j}
#   W[i, j]\, x[sp + i, sq + j]$, the kernel not flipped.
# - Outputs per dimension: $\lfloor (n + 2p - k)/s \rfloor + 1$ (padding on both sides,
#   rounded down).
# - im2col turns the windows into the rows of a $(N\,OH\,OW,\; C\,kH\,kW)$ matrix; the
#   convolution is then one product with the weight reshaped to $(O,\; C\,kH\,kW)$.
# - Backward: $\partial L/\partial W = G^{\top} X_c$ (summed over every window),
#   $\partial L/\partial b = $ the sum of $G$ over $(N, OH, OW)$, and the input's gradient
#   is col2im of $G\,W_{\text{mat}}$: each window's gradient *added* back where it came
#   from (overlaps accumulate), padding cut off; the same as a full correlation of $G$
#   with the **flipped** kernel (stride 1).
# - Max pooling sends each window's gradient to one element, the first maximum (as
#   PyTorch); average pooling divides it over the window.
# - `Conv2d`'s weight is $(\text{out}, \text{in}, kH, kW)$, uniform in
#   $\pm 1/\sqrt{\text{in} \cdot kH \cdot kW}$ like its bias.
#
# ## Where this lives in minigrad
#
# | yours | minigrad | PyTorch |
# | --- | --- | --- |
# | `conv_output_size` | `output_size` in `minigrad/ops/convolution.py` (with dilation) | the formula in `nn.Conv2d`'s docs |
# | `my_im2col` | `windows` and `_im2col` in `minigrad/ops/convolution.py` | `F.unfold` |
# | `MyConv2dFunction` | `Conv2d` in `minigrad/ops/convolution.py`; `F.conv2d` in `minigrad/nn/functional.py` | `F.conv2d` |
# | the col2im loop | `add_windows_back` in `minigrad/ops/convolution.py` | `F.fold` |
# | `MyMaxPool2d` | `MaxPool2d` in `minigrad/ops/convolution.py`; `F.max_pool2d` in `minigrad/nn/functional.py` | `F.max_pool2d` |
# | `MyConv2d` | `Conv2d` in `minigrad/nn/conv.py` | `nn.Conv2d` |
#
# Open `minigrad/ops/convolution.py`: `add_windows_back` is your col2im with the loop
# turned inside out: over the $kH \cdot kW$ kernel offsets (each one strided slab of the
# image), not over the $OH \cdot OW$ windows, so it runs 9 NumPy operations for a
# $3 \times 3$ kernel whatever the image's size. `MaxPool2d` keeps a running maximum
# over the same offsets, where a later element wins only if strictly larger: the first
# maximum, as here. The next chapter normalises what flows through these layers.
