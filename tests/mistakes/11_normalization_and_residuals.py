"""Chapter 11's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "batchnorm-mean-and-var-constant": ("my_batchnorm_backward", '''
class MyBatchNormFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        inv_std = 1 / np.sqrt(x.var(axis=0) + EPS)
        xhat = (x - x.mean(axis=0)) * inv_std
        ctx.save_for_backward(xhat, inv_std, weight)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        xhat, inv_std, weight = ctx.saved_tensors
        return (grad_output * weight * inv_std, (grad_output * xhat).sum(axis=0),
                grad_output.sum(axis=0))
''', "the mean and the variance were treated as constants"),
    "batchnorm-no-variance-term": ("my_batchnorm_backward", '''
class MyBatchNormFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        inv_std = 1 / np.sqrt(x.var(axis=0) + EPS)
        xhat = (x - x.mean(axis=0)) * inv_std
        ctx.save_for_backward(xhat, inv_std, weight)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        xhat, inv_std, weight = ctx.saved_tensors
        n = grad_output.shape[0]
        g = grad_output * weight
        grad_x = inv_std / n * (n * g - g.sum(axis=0))
        return grad_x, (grad_output * xhat).sum(axis=0), grad_output.sum(axis=0)
''', "the term through the variance is missing"),
    "batchnorm-no-gamma": ("my_batchnorm_backward", '''
class MyBatchNormFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        inv_std = 1 / np.sqrt(x.var(axis=0) + EPS)
        xhat = (x - x.mean(axis=0)) * inv_std
        ctx.save_for_backward(xhat, inv_std)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        xhat, inv_std = ctx.saved_tensors
        n, g = grad_output.shape[0], grad_output
        grad_x = inv_std / n * (n * g - g.sum(axis=0) - xhat * (g * xhat).sum(axis=0))
        return grad_x, (grad_output * xhat).sum(axis=0), grad_output.sum(axis=0)
''', "the weight (gamma) is missing from grad_x"),
    "batchnorm1d-batch-stats-in-eval": ("my_batchnorm1d", '''
class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=EPS, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(mg.ones(num_features))
        self.bias = nn.Parameter(mg.zeros(num_features))
        self.register_buffer("running_mean", mg.zeros(num_features))
        self.register_buffer("running_var", mg.ones(num_features))
        self.register_buffer("num_batches_tracked", mg.tensor(0))

    def forward(self, x):
        if self.training:
            n, m = x.shape[0], self.momentum
            with mg.no_grad():
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                self.running_mean.copy_((1 - m) * self.running_mean + m * mean)
                self.running_var.copy_((1 - m) * self.running_var + m * var * n / (n - 1))
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
        return MyBatchNormFunction.apply(x, self.weight, self.bias)
''', "batch statistics are used in eval mode"),
    "batchnorm1d-biased-running-var": ("my_batchnorm1d", '''
class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=EPS, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(mg.ones(num_features))
        self.bias = nn.Parameter(mg.zeros(num_features))
        self.register_buffer("running_mean", mg.zeros(num_features))
        self.register_buffer("running_var", mg.ones(num_features))
        self.register_buffer("num_batches_tracked", mg.tensor(0))

    def forward(self, x):
        if self.training:
            m = self.momentum
            with mg.no_grad():
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                self.running_mean.copy_((1 - m) * self.running_mean + m * mean)
                self.running_var.copy_((1 - m) * self.running_var + m * var)
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            return MyBatchNormFunction.apply(x, self.weight, self.bias)
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt() \\
            * self.weight + self.bias
''', "updated with the biased variance"),
    "batchnorm1d-momentum-swapped": ("my_batchnorm1d", '''
class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=EPS, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(mg.ones(num_features))
        self.bias = nn.Parameter(mg.zeros(num_features))
        self.register_buffer("running_mean", mg.zeros(num_features))
        self.register_buffer("running_var", mg.ones(num_features))
        self.register_buffer("num_batches_tracked", mg.tensor(0))

    def forward(self, x):
        if self.training:
            n, m = x.shape[0], self.momentum
            with mg.no_grad():
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                self.running_mean.copy_(m * self.running_mean + (1 - m) * mean)
                self.running_var.copy_(m * self.running_var + (1 - m) * var * n / (n - 1))
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            return MyBatchNormFunction.apply(x, self.weight, self.bias)
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt() \\
            * self.weight + self.bias
''', "the momentum is applied the wrong way round"),
    "layernorm-over-the-batch": ("my_layernorm", '''
class MyLayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(mg.ones(normalized_shape))
        self.bias = nn.Parameter(mg.zeros(normalized_shape))

    def forward(self, x):
        mean = x.mean(dim=0, keepdim=True)
        var = x.var(dim=0, keepdim=True, correction=0)
        return (x - mean) / (var + self.eps).sqrt() * self.weight + self.bias
''', "LayerNorm normalised over the wrong axis"),
    "batchnorm-eps-outside-sqrt": ("my_batchnorm_backward", '''
class MyBatchNormFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        inv_std = 1 / (np.sqrt(x.var(axis=0)) + EPS)
        xhat = (x - x.mean(axis=0)) * inv_std
        ctx.save_for_backward(xhat, inv_std, weight)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        xhat, inv_std, weight = ctx.saved_tensors
        n = grad_output.shape[0]
        g = grad_output * weight
        grad_x = inv_std / n * (n * g - g.sum(axis=0) - xhat * (g * xhat).sum(axis=0))
        return grad_x, (grad_output * xhat).sum(axis=0), grad_output.sum(axis=0)
''', "eps is added outside the square root"),
    "batchnorm1d-running-stats-in-the-graph": ("my_batchnorm1d", '''
class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=EPS, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(mg.ones(num_features))
        self.bias = nn.Parameter(mg.zeros(num_features))
        self.register_buffer("running_mean", mg.zeros(num_features))
        self.register_buffer("running_var", mg.ones(num_features))
        self.register_buffer("num_batches_tracked", mg.tensor(0))

    def forward(self, x):
        if self.training:
            n, m = x.shape[0], self.momentum
            if True:  # no mg.no_grad()
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                self.running_mean.copy_((1 - m) * self.running_mean + m * mean)
                self.running_var.copy_((1 - m) * self.running_var + m * var * n / (n - 1))
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            return MyBatchNormFunction.apply(x, self.weight, self.bias)
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt() \\
            * self.weight + self.bias
''',
        "part of the autograd graph"),
    "batchnorm1d-eval-without-eps": ("my_batchnorm1d", '''
class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=EPS, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(mg.ones(num_features))
        self.bias = nn.Parameter(mg.zeros(num_features))
        self.register_buffer("running_mean", mg.zeros(num_features))
        self.register_buffer("running_var", mg.ones(num_features))
        self.register_buffer("num_batches_tracked", mg.tensor(0))

    def forward(self, x):
        if self.training:
            n, m = x.shape[0], self.momentum
            with mg.no_grad():
                mean, var = x.mean(dim=0), x.var(dim=0, correction=0)
                self.running_mean.copy_((1 - m) * self.running_mean + m * mean)
                self.running_var.copy_((1 - m) * self.running_var + m * var * n / (n - 1))
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            return MyBatchNormFunction.apply(x, self.weight, self.bias)
        return (x - self.running_mean) / self.running_var.sqrt() \\
            * self.weight + self.bias
''', "eps is missing"),
    "layernorm-eps-outside-sqrt": ("my_layernorm", '''
class MyLayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(mg.ones(normalized_shape))
        self.bias = nn.Parameter(mg.zeros(normalized_shape))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, correction=0)
        return (x - mean) / (var.sqrt() + self.eps) * self.weight + self.bias
''', "eps is added outside the square root"),
    "dropout-not-scaled": ("my_dropout", '''
class MyDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        return x * (mg.rand(*x.shape) >= self.p).float()
''', "the kept values are not scaled"),
    "dropout-scaled-by-p": ("my_dropout", '''
class MyDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        return x * (mg.rand(*x.shape) >= self.p).float() / self.p
''', "divided by p instead of (1 - p)"),
    "dropout-in-eval": ("my_dropout", '''
class MyDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return x * (mg.rand(*x.shape) >= self.p).float() / (1 - self.p)
''', "dropout active in eval mode"),
    "kaiming-fan-out": ("kaiming_std", '''
def kaiming_std(shape):
    return math.sqrt(2 / (shape[0] * math.prod(shape[2:])))
''', "fan_out was used instead of fan_in"),
    # a wrong MyBatchNormFunction under a right MyBatchNorm1d: the layer's check passes
    # with the reference Function and says to fix exercise 1 first
    "batchnorm-bias-gradient-averaged": ("my_batchnorm_backward", '''
class MyBatchNormFunction(mg.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        inv_std = 1 / np.sqrt(x.var(axis=0) + EPS)
        xhat = (x - x.mean(axis=0)) * inv_std
        ctx.save_for_backward(xhat, inv_std, weight)
        return xhat * weight + bias

    @staticmethod
    def backward(ctx, grad_output):
        xhat, inv_std, weight = ctx.saved_tensors
        n = grad_output.shape[0]
        g = grad_output * weight
        grad_x = inv_std / n * (n * g - g.sum(axis=0) - xhat * (g * xhat).sum(axis=0))
        return grad_x, (grad_output * xhat).sum(axis=0), grad_output.mean(axis=0)
''', "fix exercise 1 (`my_batchnorm_backward`) first"),
}
