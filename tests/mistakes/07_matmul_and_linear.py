"""Chapter 7's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "matmul-b-not-transposed": ("mymatmul", '''
class MyMatMul(mg.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output @ b, a.T @ grad_output
''', "b is not transposed in grad_a"),
    "matmul-swapped": ("mymatmul", '''
class MyMatMul(mg.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return b.T @ grad_output, grad_output @ a.T
''', "the operands of a matrix product are swapped"),
    "matmul-gradient-transposed": ("mymatmul", '''
class MyMatMul(mg.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output @ b.T, grad_output.T @ a
''', "the gradient is transposed"),
    "linear-forward-weight-not-transposed": ("mylinearfunction", '''
class MyLinearFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight.T, x.T @ grad_output, grad_output.sum(axis=0)
''', "the forward uses weight without its transpose"),
    "linear-bias-gradient-not-summed": ("mylinearfunction", '''
class MyLinearFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output
''', "not summed over the batch"),
    "linear-weight-gradient-transposed": ("mylinearfunction", '''
class MyLinearFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, x.T @ grad_output, grad_output.sum(axis=0)
''', "the weight's gradient is transposed"),
    "linear-bias-gradient-averaged": ("mylinearfunction", '''
class MyLinearFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output.mean(axis=0)
''', "averaged over the batch"),
    "linear-init-one-over-in": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / in_features
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))

    def forward(self, x):
        return MyLinearFunction.apply(x, self.weight, self.bias)
''', "the bound is 1/in_features"),
    "linear-weight-in-out": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(in_features, out_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))

    def forward(self, x):
        return x @ self.weight + self.bias
''', "the layout of y = x @ W"),
    "linear-bias-not-a-parameter": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = mg.empty(out_features).uniform_(-bound, bound).requires_grad_()

    def forward(self, x):
        return MyLinearFunction.apply(x, self.weight, self.bias)
''', "self.bias is a Tensor, not an nn.Parameter"),
    "linear-forward-without-the-function": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))

    def forward(self, x):
        return x @ self.weight.T + self.bias
''', "forward does not use your MyLinearFunction"),
    "linear-bias-forgotten": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))

    def forward(self, x):
        return x @ self.weight.T
''', "the bias was forgotten"),
    "linear-forward-without-bias": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))

    def forward(self, x):
        return x @ self.weight.T
''', "forward returns x @ weight.T without the bias"),
    "linear-parameters-in-a-list": ("mylinear", '''
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.params = [
            nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound)),
            nn.Parameter(mg.empty(out_features).uniform_(-bound, bound))]

    def forward(self, x):
        return MyLinearFunction.apply(x, self.params[0], self.params[1])
''', "are not registered"),
}
