"""Chapter 5's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "sum-broadcast-along-the-wrong-dimension": ("mysum", '''
class MySum(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        ctx.dims = dims_of(dim, x.ndim)
        ctx.keepdim = keepdim
        ctx.input_shape = x.shape
        return np.sum(x, axis=ctx.dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        return np.broadcast_to(grad_output, ctx.input_shape)
''', "broadcast along the wrong dimension"),
    "mean-without-1-over-n": ("mymean", '''
class MyMean(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        return np.mean(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        return np.broadcast_to(unreduce(grad_output, ctx), ctx.input_shape)
''', "the 1/N is missing"),
    "max-whole-gradient-to-each-tie": ("mymax", '''
class MyMax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        biggest = np.max(x, axis=dims, keepdims=True)
        ctx.save_for_backward(x, biggest)
        return biggest if keepdim else np.squeeze(biggest, axis=dims)

    @staticmethod
    def backward(ctx, grad_output):
        x, biggest = ctx.saved_tensors
        return unreduce(grad_output, ctx) * (x == biggest)
''', "each tied element got the WHOLE upstream gradient"),
    "variance-without-correction": ("variance", '''
def variance(x, dim=None, keepdim=False, correction=1):
    dims = dims_of(dim, x.ndim)
    return np.var(x, axis=dims, keepdims=keepdim)
''', "the correction was ignored"),
    "var-gradient-without-the-2": ("myvar", '''
class MyVar(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, correction=1):
        dims = remember(ctx, x, dim, keepdim)
        ctx.denominator = int(np.prod([x.shape[d] for d in dims])) - correction
        ctx.save_for_backward(x - x.mean(axis=dims, keepdims=True))
        return variance(x, dim, keepdim, correction)

    @staticmethod
    def backward(ctx, grad_output):
        (centered,) = ctx.saved_tensors
        return unreduce(grad_output, ctx) * centered / ctx.denominator
''', "the 2 from the square is missing"),
    "logsumexp-overflows": ("mylogsumexp", '''
class MyLogSumExp(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        out = np.log(np.sum(np.exp(x), axis=dims, keepdims=True))
        ctx.save_for_backward(x, out)
        return out if keepdim else np.squeeze(out, axis=dims)

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        return unreduce(grad_output, ctx) * np.exp(x - out)
''', "something overflowed"),
    "max-maxima-without-keepdims": ("mymax", '''
class MyMax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        biggest = np.max(x, axis=dims)
        ctx.save_for_backward(x, biggest)
        return np.expand_dims(biggest, dims) if keepdim else biggest

    @staticmethod
    def backward(ctx, grad_output):
        x, biggest = ctx.saved_tensors
        winners = x == biggest
        return unreduce(grad_output, ctx) * winners / winners.sum(axis=ctx.dims, keepdims=True)
''', "lost their dimension"),
    "prediction-all-to-one-tie": ("max-prediction", '''
max_grad_prediction = [0.0, 2.0, 0.0, 0.0]
''', "that is what torch.max(x, dim) does"),
    "variance-divided-by-x-size": ("variance", '''
def variance(x, dim=None, keepdim=False, correction=1):
    dims = dims_of(dim, x.ndim)
    centered = x - x.mean(axis=dims, keepdims=True)
    return np.sum(centered**2, axis=dims, keepdims=keepdim) / (x.size - correction)
''', "you divided by x.size - correction"),
    "var-gradient-with-a-spurious-mean-term": ("myvar", '''
class MyVar(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, correction=1):
        dims = remember(ctx, x, dim, keepdim)
        ctx.count = int(np.prod([x.shape[d] for d in dims]))
        ctx.denominator = ctx.count - correction
        ctx.save_for_backward(x - x.mean(axis=dims, keepdims=True))
        return variance(x, dim, keepdim, correction)

    @staticmethod
    def backward(ctx, grad_output):
        (centered,) = ctx.saved_tensors
        return unreduce(grad_output, ctx) * 2 * (centered - 1 / ctx.count) / ctx.denominator
''', "there is an extra term -1/N"),
    "var-gradient-divided-by-x-size": ("myvar", '''
class MyVar(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, correction=1):
        dims = remember(ctx, x, dim, keepdim)
        ctx.denominator = x.size - correction
        ctx.save_for_backward(x - x.mean(axis=dims, keepdims=True))
        return variance(x, dim, keepdim, correction)

    @staticmethod
    def backward(ctx, grad_output):
        (centered,) = ctx.saved_tensors
        return unreduce(grad_output, ctx) * 2 * centered / ctx.denominator
''', "backward divides by x.size - correction"),
    "logsumexp-max-not-added-back": ("mylogsumexp", '''
class MyLogSumExp(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        biggest = np.max(x, axis=dims, keepdims=True)
        out = np.log(np.sum(np.exp(x - biggest), axis=dims, keepdims=True))
        ctx.save_for_backward(x, out)
        return out if keepdim else np.squeeze(out, axis=dims)

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        return unreduce(grad_output, ctx) * np.exp(x - out)
''', "the maximum was not added back"),
    "sum-expand-dims-also-with-keepdim": ("mysum", '''
class MySum(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        ctx.dims = dims_of(dim, x.ndim)
        ctx.keepdim = keepdim
        ctx.input_shape = x.shape
        return np.sum(x, axis=ctx.dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        return np.broadcast_to(np.expand_dims(grad_output, ctx.dims), ctx.input_shape)
''', "a dimension was put back where one already was"),
    "sum-raw-dim-stored": ("mysum", '''
class MySum(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        ctx.dims = dim
        ctx.keepdim = keepdim
        ctx.input_shape = x.shape
        return np.sum(x, axis=dim, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        if not ctx.keepdim:
            grad_output = np.expand_dims(grad_output, ctx.dims)
        return np.broadcast_to(grad_output, ctx.input_shape)
''', "dim=None was used as an axis"),
    "max-squeezed-without-keepdims": ("mymax", '''
class MyMax(mg.Function):
    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        dims = remember(ctx, x, dim, keepdim)
        biggest = np.max(x, axis=dims)
        ctx.save_for_backward(x, biggest)
        return biggest if keepdim else np.squeeze(biggest, axis=dims)

    @staticmethod
    def backward(ctx, grad_output):
        x, biggest = ctx.saved_tensors
        winners = x == biggest
        return unreduce(grad_output, ctx) * winners / winners.sum(axis=ctx.dims, keepdims=True)
''', "found no dimension of size 1 there"),
}
