"""Chapter 2's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "aligned-from-the-left": ("broadcast-shape", '''
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
    return tuple(max(x, y) for x, y in zip(a, b))
''', "lined up from the left"),
    "leading-dimensions-dropped": ("broadcast-shape", '''
def broadcast_shape(a, b):
    return tuple(max(x, y) for x, y in zip(a[::-1], b[::-1]))[::-1]
''', "leading dimensions of the longer shape were dropped"),
    "no-error-for-shapes-that-do-not-fit": ("broadcast-shape", '''
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) for x, y in zip(a, b))
''', "these shapes do not broadcast"),
    "not-summed": ("unbroadcast", '''
def unbroadcast(grad, shape):
    return grad
''', "not summed over the broadcast dimensions"),
    "no-keepdim": ("unbroadcast", '''
def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    axes = tuple(i for i, size in enumerate(shape) if size == 1)
    return grad.sum(axis=axes) if axes else grad
''', "summed without keepdims=True"),
    "only-leading-dimensions": ("unbroadcast", '''
def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad
''', "only the leading dimensions were summed away"),
    "size-1-axes-counted-from-the-left": ("unbroadcast", '''
def unbroadcast(grad, shape):
    for axis, size in enumerate(shape):
        if size == 1:
            grad = grad.sum(axis=axis, keepdims=True)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad
''', "summed at the wrong axes"),
    "scalar-shape-kept-as-1-1": ("unbroadcast", '''
def unbroadcast(grad, shape):
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1)
    return grad.sum(axis=axes, keepdims=True)
''', "a 0-d input (shape ()) a (1, 1) one"),
    "only-one-added-leading-dimension": ("unbroadcast", '''
def unbroadcast(grad, shape):
    if grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad
''', "only one of the added leading dimensions was summed away"),
    "mul-summed-before-multiplying": ("mymul-broadcast", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return unbroadcast(grad_output, x.shape) * y, unbroadcast(grad_output, y.shape) * x
''', "summed back before multiplying"),
    "compatibility-checked-in-the-last-dimension-only": ("broadcast-shape", '''
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    if pa and pa[-1] != pb[-1] and 1 not in (pa[-1], pb[-1]):
        raise ValueError(f"shapes {a} and {b} do not broadcast")
    return tuple(max(x, y) for x, y in zip(pa, pb))
''', "broadcast_shape((4, 3), (2, 3)) returned (4, 3), but these shapes do not broadcast"),
    "mul-x-and-y-swapped": ("mymul-broadcast", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return unbroadcast(grad_output * x, x.shape), unbroadcast(grad_output * y, y.shape)
''', "x and y are swapped"),
    "mul-not-summed": ("mymul-broadcast", '''
class MyMul(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y, grad_output * x
''', "not summed over the broadcast dimensions"),
}
