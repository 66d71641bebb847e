"""Chapter 1's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "grad-output-ignored": ("mymul", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return y, x
''', "backward ignores grad_output"),
    "wrong-sign": ("myexp", '''
class MyExp(mg.Function):
    @staticmethod
    def forward(ctx, x):
        z = np.exp(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, grad_output):
        (z,) = ctx.saved_tensors
        return -grad_output * z
''', "it has the wrong sign"),
    "not-accumulated": ("myexpmulplus", '''
class MyExpMulPlus(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        u = np.exp(x * y)
        ctx.save_for_backward(x, y, u)
        return u + x

    @staticmethod
    def backward(ctx, grad_output):
        x, y, u = ctx.saved_tensors
        return grad_output * u * y, grad_output * u * x
''', "used 2 times in the formula"),
    "in-place": ("mydiv", '''
class MyDiv(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x / y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        grad_output /= y
        return grad_output, -grad_output * x / y
''', "changed grad_output in place"),
    "needs-input-grad-ignored": ("mymul", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x
''', "ctx.needs_input_grad[1] is False: nobody will use it. Skip that work and return None"),
    "x-and-y-swapped": ("mymul", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        grad_x = grad_output * x if ctx.needs_input_grad[0] else None
        grad_y = grad_output * y if ctx.needs_input_grad[1] else None
        return grad_x, grad_y
''', "the gradients of x and y are swapped"),
    "saved-tensors-not-unpacked": ("myexp", '''
class MyExp(mg.Function):
    @staticmethod
    def forward(ctx, x):
        z = np.exp(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, grad_output):
        z = ctx.saved_tensors
        return grad_output * z
''', "ctx.saved_tensors is a tuple, even with one array saved: unpack it"),
    "saved-tensors-called": ("myexp", '''
class MyExp(mg.Function):
    @staticmethod
    def forward(ctx, x):
        z = np.exp(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, grad_output):
        (z,) = ctx.saved_tensors()
        return grad_output * z
''', "ctx.saved_tensors is an attribute, not a method"),
    "exp-of-the-input-x": ("myexp", '''
class MyExp(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.exp(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x
''', "the derivative of exp is exp(x) = z"),
    "plus-one-not-multiplied": ("myexpmulplus", '''
class MyExpMulPlus(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        u = np.exp(x * y)
        ctx.save_for_backward(x, y, u)
        return u + x

    @staticmethod
    def backward(ctx, grad_output):
        x, y, u = ctx.saved_tensors
        return grad_output * u * y + 1, grad_output * u * x
''', "is not multiplied by grad_output"),
    "sin-wrong-sign": ("mysin", '''
class MySin(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return -grad_output * np.cos(x)
''', "it has the wrong sign"),
}
