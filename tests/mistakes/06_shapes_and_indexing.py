"""Chapter 6's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "permute-applied-again": ("mypermute", '''
class MyPermute(mg.Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad_output):
        return np.transpose(grad_output, ctx.dims), None
''', "the forward permutation was applied again"),
    "permute-applied-twice": ("mypermute", '''
class MyPermute(mg.Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad_output):
        return np.transpose(np.transpose(grad_output, ctx.dims), ctx.dims), None
''', "dims was applied twice"),
    "index-loop-over-rows": ("myindex", '''
class MyIndex(mg.Function):
    @staticmethod
    def forward(ctx, x, index):
        ctx.input_shape = x.shape
        ctx.index = index
        return x[index]

    @staticmethod
    def backward(ctx, grad_output):
        grad = np.zeros(ctx.input_shape)
        for k, i in enumerate(ctx.index):
            grad[i] += grad_output[k]
        return grad, None
''', "a loop over the index"),
    "cat-returns-a-list": ("mycat", '''
class MyCat(mg.Function):
    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        ctx.sizes = [x.shape[dim] for x in xs]
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        return np.split(grad_output, np.cumsum(ctx.sizes)[:-1], axis=ctx.dim)
''', "Return a tuple"),
    "index-last-write-wins": ("myindex", '''
class MyIndex(mg.Function):
    @staticmethod
    def forward(ctx, x, index):
        ctx.input_shape = x.shape
        ctx.index = index
        return x[index]

    @staticmethod
    def backward(ctx, grad_output):
        grad = np.zeros(ctx.input_shape)
        grad[ctx.index] += grad_output
        return grad, None
''', "a repeated index kept only one of its gradients"),
    "cat-split-at-sizes": ("mycat", '''
class MyCat(mg.Function):
    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        ctx.sizes = [x.shape[dim] for x in xs]
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(np.split(grad_output, ctx.sizes[:-1], axis=ctx.dim))
''', "split at the wrong offsets"),
    "cat-split-along-dim-0": ("mycat", '''
class MyCat(mg.Function):
    @staticmethod
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        ctx.sizes = [x.shape[dim] for x in xs]
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(np.split(grad_output, np.cumsum(ctx.sizes)[:-1]))
''', "split along the wrong dimension"),
    "gather-put-along-axis": ("mygather", '''
class MyGather(mg.Function):
    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.input_shape = x.shape
        ctx.dim = dim
        ctx.save_for_backward(index)
        return np.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad = np.zeros(ctx.input_shape)
        np.put_along_axis(grad, index, grad_output, axis=ctx.dim)
        return grad, None, None
''', "the gradient of a repeated index was not accumulated"),
    "gather-position-as-a-list": ("mygather", '''
class MyGather(mg.Function):
    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.input_shape = x.shape
        ctx.dim = dim
        ctx.save_for_backward(index)
        return np.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad = np.zeros(ctx.input_shape)
        where = list(np.indices(index.shape, sparse=True))
        where[ctx.dim] = index
        np.add.at(grad, where, grad_output)
        return grad, None, None
''', "read your list of coordinate arrays as ONE array"),
    "gather-index-alone": ("mygather", '''
class MyGather(mg.Function):
    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.input_shape = x.shape
        ctx.dim = dim
        ctx.save_for_backward(index)
        return np.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad = np.zeros(ctx.input_shape)
        np.add.at(grad, index, grad_output)
        return grad, None, None
''', "a gather along dim needs the full position of every element"),
    "gather-position-for-dim-1-only": ("mygather", '''
class MyGather(mg.Function):
    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.input_shape = x.shape
        ctx.dim = dim
        ctx.save_for_backward(index)
        return np.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad = np.zeros(ctx.input_shape)
        rows, _ = np.indices(index.shape, sparse=True)[:2]
        np.add.at(grad, (rows, index), grad_output)
        return grad, None, None
''', "is right for dim = 1 of a matrix only"),
    "index-scattered-into-the-output-s-shape": ("myindex", '''
class MyIndex(mg.Function):
    @staticmethod
    def forward(ctx, x, index):
        ctx.input_shape = x.shape
        ctx.index = index
        return x[index]

    @staticmethod
    def backward(ctx, grad_output):
        grad = np.zeros_like(grad_output)
        np.add.at(grad, ctx.index, grad_output)
        return grad, None
''', "scatter-added into zeros of the output's shape"),
}
