"""Chapter 10's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

# Chapter 10's convolution and max pooling, each with one piece to be made wrong.
CONV2D = """
class MyConv2dFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, stride=1, padding=0):
        n, _, h, w = x.shape
        out_channels, channels, kh, kw = weight.shape
        out_h = conv_output_size(h, kh, stride, padding)
        out_w = conv_output_size(w, kw, stride, padding)
        cols = my_im2col(x, (kh, kw), stride, padding)
        ctx.save_for_backward(cols, weight)
        ctx.x_shape, ctx.stride, ctx.padding = x.shape, stride, padding
        out = cols @ weight.reshape(out_channels, -1).T + bias
        return out.reshape(n, out_h, out_w, out_channels).transpose(0, 3, 1, 2)

    @staticmethod
    def backward(ctx, grad_output):
        cols, weight = ctx.saved_tensors
        stride, padding = ctx.stride, ctx.padding
        n, channels, h, w = ctx.x_shape
        out_channels, _, kh, kw = weight.shape
        _, _, out_h, out_w = grad_output.shape
        g = grad_output.transpose(0, 2, 3, 1).reshape(-1, out_channels)
        grad_weight = ({grad_weight}).reshape(weight.shape)
        grad_bias = g.sum(axis=0)
        grad_windows = (g @ {weight}.reshape(out_channels, -1)).reshape(
            n, out_h, out_w, channels, kh, kw)
        grad_x = np.zeros((n, channels, h + 2 * padding, w + 2 * padding))
        for p in range(out_h):
            for q in range(out_w):
                grad_x[:, :, p * stride:p * stride + kh, q * stride:q * stride + kw] {add} \\
                    grad_windows[:, p, q]
        grad_x = grad_x[:, :, padding:padding + h, padding:padding + w]
        return grad_x, grad_weight, grad_bias
"""
MAXPOOL = """
class MyMaxPool2d(mg.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride=None):
        k = kernel_size
        s = k if stride is None else stride
        view = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::s, ::s]
        flat = view.reshape(view.shape[:4] + (k * k,))
        ctx.save_for_backward({share})
        ctx.x_shape, ctx.k, ctx.s = x.shape, k, s
        return flat.max(axis=-1)

    @staticmethod
    def backward(ctx, grad_output):
        (share,) = ctx.saved_tensors
        k, s = ctx.k, ctx.s
        grad_x = np.zeros(ctx.x_shape)
        _, _, out_h, out_w = grad_output.shape
        for p in range(out_h):
            for q in range(out_w):
                window = (share[:, :, p, q] * grad_output[:, :, p, q, None]).reshape(
                    grad_output.shape[:2] + (k, k))
                grad_x[:, :, p * s:p * s + k, q * s:q * s + k] += window
        return grad_x
"""

MISTAKES = {
    "output-size-ceil": ("conv_output_size", """
def conv_output_size(size, kernel, stride=1, padding=0):
    return math.ceil((size + 2 * padding - kernel) / stride) + 1
""", "it rounds up (ceil) instead of down"),
    "output-size-padding-once": ("conv_output_size", """
def conv_output_size(size, kernel, stride=1, padding=0):
    return (size + padding - kernel) // stride + 1
""", "the padding is counted once"),
    "im2col-channels-last": ("my_im2col", """
def my_im2col(x, kernel_size, stride=1, padding=0):
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    view = np.lib.stride_tricks.sliding_window_view(x, kernel_size, axis=(2, 3))
    view = view[:, :, ::stride, ::stride]
    n, c, out_h, out_w, kh, kw = view.shape
    return view.transpose(0, 2, 3, 4, 5, 1).reshape(n * out_h * out_w, c * kh * kw)
""", "the columns are in (i, j, c) order"),
    "conv-flipped-kernel": ("my_conv2d", CONV2D.format(
        weight="weight[:, :, ::-1, ::-1]", grad_weight="g.T @ cols", add="+="),
        "flipped kernel"),
    "conv-windows-assigned": ("my_conv2d", CONV2D.format(
        weight="weight", grad_weight="g.T @ cols", add="="),
        "overlapping windows were not accumulated"),
    "conv-weight-gradient-transposed": ("my_conv2d", CONV2D.format(
        weight="weight", grad_weight="cols.T @ g", add="+="),
        "scrambles it"),
    "conv-grad-output-reshaped-without-transpose": ("my_conv2d", CONV2D.format(
        weight="weight", grad_weight="g.T @ cols", add="+=").replace(
        "grad_output.transpose(0, 2, 3, 1).reshape(", "grad_output.reshape("),
        "without moving O last first"),
    "conv-output-reshaped-without-transpose": ("my_conv2d", CONV2D.format(
        weight="weight", grad_weight="g.T @ cols", add="+=").replace(
        "out.reshape(n, out_h, out_w, out_channels).transpose(0, 3, 1, 2)",
        "out.reshape(n, out_channels, out_h, out_w)"),
        "the output was reshaped straight"),
    "maxpool-gradient-to-every-element": ("my_maxpool2d", MAXPOOL.format(
        share="np.ones_like(flat)"), "the gradient went to EVERY element of the window"),
    "maxpool-gradient-divided-evenly": ("my_maxpool2d", MAXPOOL.format(
        share="np.full(flat.shape, 1 / (k * k))"), "that is avg-pool"),
    "maxpool-tie-to-the-last": ("my_maxpool2d", MAXPOOL.format(
        share="np.eye(k * k)[k * k - 1 - flat[..., ::-1].argmax(axis=-1)]"),
        "the LAST tied maximum"),
    # a wrong MyConv2dFunction under a right MyConv2d: the layer's check passes with the
    # reference Function and says to fix exercise 3 first
    "conv-bias-gradient-averaged": ("my_conv2d", CONV2D.format(
        weight="weight", grad_weight="g.T @ cols", add="+=").replace(
        "grad_bias = g.sum(axis=0)", "grad_bias = g.mean(axis=0)"),
        "fix exercise 3 (`my_conv2d`) first"),
}
