"""Chapter 3's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "sigmoid-applied-twice": ("mysigmoid-saves-output", '''
class MySigmoid(mg.Function):
    @staticmethod
    def forward(ctx, x):
        s = sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * sigmoid(s) * (1 - sigmoid(s))
''', "applied the sigmoid again to what forward saved"),
    "sigmoid-saves-the-input": ("mysigmoid-saves-output", '''
class MySigmoid(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * sigmoid(x) * (1 - sigmoid(x))
''', "saved its input x, not its output"),
    "matmul-ignores-needs-input-grad": ("mymatmul-needs-input-grad", '''
class MyMatMul(mg.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output @ b.T, a.T @ grad_output
''', "returning None still does the work"),
    "sincos-ignores-grad-cos": ("mysincos", '''
class MySinCos(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return np.sin(x), np.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return grad_sin * np.cos(x)
''', "backward ignores grad_cos"),
    "sincos-none-not-handled": ("mysincos", '''
class MySinCos(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return np.sin(x), np.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return grad_sin * np.cos(x) - grad_cos * np.sin(x)
''', "arrives as None"),
    # (issue 30: saving a NumPy view of an input, s[:, None] or x.T, is no longer a
    # mistake: the version check compares memory, so an edit of the input is caught)
    "scale-rows-summed-over-the-wrong-axis": ("myscalerows", '''
class MyScaleRows(mg.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(x, s)
        return x * s[:, None]

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * s[:, None], (grad_output * x).sum(axis=0)
''', "summed over the wrong axis"),
    "scale-rows-keeps-ctx-attributes": ("myscalerows", '''
class MyScaleRows(mg.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.x, ctx.s = x, s
        return x * s[:, None]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.s[:, None], (grad_output * ctx.x).sum(axis=1)
''', "as a ctx attribute"),
    "sigmoid-saves-output-and-input": ("mysigmoid-saves-output", '''
class MySigmoid(mg.Function):
    @staticmethod
    def forward(ctx, x):
        s = sigmoid(x)
        ctx.save_for_backward(s, x)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        s, x = ctx.saved_tensors
        e = np.exp(-x)
        return grad_output * e / (1 + e) ** 2
''', "as well as its output s"),
}
