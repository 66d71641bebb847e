"""Chapter 8's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "gelu-without-x-phi": ("mygelu", '''
class MyGELU(mg.Function):
    @staticmethod
    def forward(ctx, x):
        cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
        ctx.save_for_backward(cdf)
        return x * cdf

    @staticmethod
    def backward(ctx, grad_output):
        (cdf,) = ctx.saved_tensors
        return grad_output * cdf
''', "x * phi(x) term is missing"),
    "gelu-tanh-derivative": ("mygelu", '''
class MyGELU(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 0.5 * (1 + erf(x / math.sqrt(2)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        c = math.sqrt(2 / math.pi)
        t = np.tanh(c * (x + 0.044715 * x**3))
        du = c * (1 + 3 * 0.044715 * x**2)
        return grad_output * (0.5 * (1 + t) + 0.5 * x * (1 - t**2) * du)
''', "derivative of the tanh approximation"),
    "softmax-unstable": ("mysoftmax", '''
class MySoftmax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(x)
        s = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(s)
        ctx.dim = dim
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return s * (grad_output - (grad_output * s).sum(axis=ctx.dim, keepdims=True))
''', "overflowed"),
    "softmax-diagonal-only": ("mysoftmax", '''
class MySoftmax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        s = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s * (1 - s)
''', "only the diagonal of the Jacobian"),
    "smoothing-over-k-minus-1": ("smoothedtargets", '''
def smoothed_targets(target, n_classes, ignore_index, label_smoothing):
    keep = target != ignore_index
    onehot = np.eye(n_classes)[np.where(keep, target, 0)]
    q = (1 - label_smoothing) * onehot + label_smoothing / (n_classes - 1) * (1 - onehot)
    return q * keep[:, None]
''', "K - 1 wrong classes"),
    "ignored-rows-not-zero": ("smoothedtargets", '''
def smoothed_targets(target, n_classes, ignore_index, label_smoothing):
    onehot = np.eye(n_classes)[target]
    return (1 - label_smoothing) * onehot + label_smoothing / n_classes
''', "are not all zero"),
    "cross-entropy-sum-not-mean": ("mycrossentropy", '''
class MyCrossEntropy(mg.Function):
    @staticmethod
    def forward(ctx, x, target, ignore_index=-100, label_smoothing=0.0):
        shifted = x - x.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        q = smoothed_targets(target, x.shape[1], ignore_index, label_smoothing)
        ctx.keep = target != ignore_index
        ctx.count = max(int(ctx.keep.sum()), 1)
        ctx.save_for_backward(np.exp(log_probs), q)
        return -(q * log_probs).sum() / ctx.count

    @staticmethod
    def backward(ctx, grad_output):
        probs, q = ctx.saved_tensors
        return grad_output * (probs * ctx.keep[:, None] - q), None
''', "being the batch size"),
    "cross-entropy-ignored-rows-in-mean": ("mycrossentropy", '''
class MyCrossEntropy(mg.Function):
    @staticmethod
    def forward(ctx, x, target, ignore_index=-100, label_smoothing=0.0):
        shifted = x - x.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        q = smoothed_targets(target, x.shape[1], ignore_index, label_smoothing)
        ctx.keep = target != ignore_index
        ctx.count = max(int(ctx.keep.sum()), 1)
        ctx.save_for_backward(np.exp(log_probs), q)
        return -(q * log_probs).sum() / ctx.count

    @staticmethod
    def backward(ctx, grad_output):
        probs, q = ctx.saved_tensors
        return grad_output * (probs * ctx.keep[:, None] - q) / len(probs), None
''', "ignored rows were counted in the mean"),
    "cross-entropy-ignored-rows-get-gradient": ("mycrossentropy", '''
class MyCrossEntropy(mg.Function):
    @staticmethod
    def forward(ctx, x, target, ignore_index=-100, label_smoothing=0.0):
        shifted = x - x.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        q = smoothed_targets(target, x.shape[1], ignore_index, label_smoothing)
        ctx.keep = target != ignore_index
        ctx.count = max(int(ctx.keep.sum()), 1)
        ctx.save_for_backward(np.exp(log_probs), q)
        return -(q * log_probs).sum() / ctx.count

    @staticmethod
    def backward(ctx, grad_output):
        probs, q = ctx.saved_tensors
        return grad_output * (probs - q) / ctx.count, None
''', "ignored rows got a gradient"),
    "bce-textbook-overflows": ("mybcewithlogits", '''
def my_bce_with_logits(x, y):
    p = x.sigmoid()
    return -(y * p.log() + (1 - y) * (1 - p).log()).mean()
''', "overflowed"),
    "bce-sum-not-mean": ("mybcewithlogits", '''
def my_bce_with_logits(x, y):
    return (x.relu() - x * y + (-x.abs()).exp().log1p()).sum()
''', "summed over all elements"),
    "gelu-erf-without-sqrt2": ("mygelu", '''
class MyGELU(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 0.5 * (1 + erf(x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (0.5 * (1 + erf(x)) + x * np.exp(-x**2) / math.sqrt(math.pi))
''', "erf(x) instead of erf(x / sqrt 2)"),
    "softmax-fixed-axis-in-backward": ("mysoftmax", '''
class MySoftmax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        s = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return s * (grad_output - (grad_output * s).sum(axis=-1, keepdims=True))
''', "summed along the last axis, not along dim"),
    # a wrong smoothed_targets under a right MyCrossEntropy: the cross-entropy's check
    # passes with the reference's targets and says to fix exercise 3 first
    "smoothing-not-divided-by-k": ("smoothedtargets", '''
def smoothed_targets(target, n_classes, ignore_index, label_smoothing):
    keep = target != ignore_index
    onehot = np.eye(n_classes)[np.where(keep, target, 0)]
    q = (1 - label_smoothing) * onehot + label_smoothing
    return q * keep[:, None]
''', "fix exercise 3 (`smoothedtargets`) first"),
}
