"""Chapter 14's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "no-grad-restores-true": ("my_no_grad", '''
class my_no_grad:
    def __enter__(self):
        mg.set_grad_enabled(False)

    def __exit__(self, exc_type, exc_value, traceback):
        mg.set_grad_enabled(True)
''', "switches recording back ON instead of restoring"),
    "no-grad-previous-on-the-class": ("my_no_grad", '''
class my_no_grad:
    previous = True

    def __enter__(self):
        my_no_grad.previous = mg.is_grad_enabled()
        mg.set_grad_enabled(False)

    def __exit__(self, exc_type, exc_value, traceback):
        mg.set_grad_enabled(my_no_grad.previous)
''', "the previous mode is kept on the class"),
    "no-grad-previous-in-init": ("my_no_grad", '''
class my_no_grad:
    def __init__(self):
        self.previous = mg.is_grad_enabled()

    def __enter__(self):
        mg.set_grad_enabled(False)

    def __exit__(self, exc_type, exc_value, traceback):
        mg.set_grad_enabled(self.previous)
''', "the previous mode is read in __init__"),
    "no-grad-swallows-the-exception": ("my_no_grad", '''
class my_no_grad:
    def __enter__(self):
        self.previous = mg.is_grad_enabled()
        mg.set_grad_enabled(False)

    def __exit__(self, exc_type, exc_value, traceback):
        mg.set_grad_enabled(self.previous)
        return True
''', "SWALLOW the exception"),
    "no-grad-generator-without-finally": ("my_no_grad", '''
import contextlib


@contextlib.contextmanager
def my_no_grad():
    previous = mg.is_grad_enabled()
    mg.set_grad_enabled(False)
    yield
    mg.set_grad_enabled(previous)
''', "an exception inside the block leaves recording off"),
    "evaluate-records-a-graph": ("evaluate", '''
def evaluate(model, batches):
    was_training = model.training
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    for x, y in batches:
        logits = model(x)
        total_loss += F.cross_entropy(logits, y).item() * len(y)
        correct += (logits.argmax(dim=1) == y).sum().item()
        count += len(y)
    model.train(was_training)
    return total_loss / count, correct / count
''', "the model ran with recording on"),
    "evaluate-in-training-mode": ("evaluate", '''
def evaluate(model, batches):
    total_loss, correct, count = 0.0, 0, 0
    with mg.no_grad():
        for x, y in batches:
            logits = model(x)
            total_loss += F.cross_entropy(logits, y).item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(y)
    return total_loss / count, correct / count
''', "the model ran in training mode"),
    "evaluate-left-in-eval-mode": ("evaluate", '''
def evaluate(model, batches):
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with mg.no_grad():
        for x, y in batches:
            logits = model(x)
            total_loss += F.cross_entropy(logits, y).item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(y)
    return total_loss / count, correct / count
''', "the model is left in eval mode"),
    "evaluate-train-at-the-end": ("evaluate", '''
def evaluate(model, batches):
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with mg.no_grad():
        for x, y in batches:
            logits = model(x)
            total_loss += F.cross_entropy(logits, y).item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(y)
    model.train()
    return total_loss / count, correct / count
''', "model.train() at the end switches a model that was in eval mode"),
    "evaluate-loss-total-as-tensors": ("evaluate", '''
def evaluate(model, batches):
    was_training = model.training
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with mg.no_grad():
        for x, y in batches:
            logits = model(x)
            total_loss = total_loss + F.cross_entropy(logits, y) * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(y)
    model.train(was_training)
    return total_loss / count, correct / count
''', "a total kept as Tensors"),
    "evaluate-mean-of-batch-means": ("evaluate", '''
def evaluate(model, batches):
    was_training = model.training
    model.eval()
    losses, accuracies = [], []
    with mg.no_grad():
        for x, y in batches:
            logits = model(x)
            losses.append(F.cross_entropy(logits, y).item())
            accuracies.append((logits.argmax(dim=1) == y).float().mean().item())
    model.train(was_training)
    return sum(losses) / len(losses), sum(accuracies) / len(accuracies)
''', "the mean of the batches' mean losses"),
    "checkpoint-keeps-the-graph": ("my_checkpoint", '''
class MyCheckpoint(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        ctx.x = x.detach().requires_grad_()
        with mg.enable_grad():
            ctx.out = fn(ctx.x)
        return ctx.out.detach()

    @staticmethod
    def backward(ctx, grad_output):
        ctx.out.backward(grad_output)
        return ctx.x.grad, None
''', "forward ran fn with recording on"),
    "checkpoint-recomputes-under-no-grad": ("my_checkpoint", '''
class MyCheckpoint(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        ctx.fn = fn
        ctx.rng_state = mg.get_rng_state()
        ctx.save_for_backward(x)
        return fn(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        now = mg.get_rng_state()
        mg.set_rng_state(ctx.rng_state)
        out = ctx.fn(x)
        mg.set_rng_state(now)
        out.backward(grad_output)
        return x.grad, None
''', "backward ran fn again with recording OFF"),
    "checkpoint-no-input-gradient": ("my_checkpoint", '''
class MyCheckpoint(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        ctx.fn = fn
        ctx.rng_state = mg.get_rng_state()
        ctx.save_for_backward(x)
        return fn(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        now = mg.get_rng_state()
        mg.set_rng_state(ctx.rng_state)
        with mg.enable_grad():
            out = ctx.fn(x)
        mg.set_rng_state(now)
        out.backward(grad_output)
        return None, None
''', "the input's gradient is not returned"),
    "checkpoint-autograd-grad-only": ("my_checkpoint", '''
class MyCheckpoint(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        ctx.fn = fn
        ctx.rng_state = mg.get_rng_state()
        ctx.save_for_backward(x)
        return fn(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        now = mg.get_rng_state()
        mg.set_rng_state(ctx.rng_state)
        with mg.enable_grad():
            out = ctx.fn(x)
        mg.set_rng_state(now)
        (grad_x,) = mg.autograd.grad(out, x, grad_output)
        return grad_x, None
''', "inside fn got no gradient"),
    "checkpoint-new-dropout-mask": ("my_checkpoint", '''
class MyCheckpoint(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        ctx.fn = fn
        ctx.save_for_backward(x)
        return fn(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        with mg.enable_grad():
            out = ctx.fn(x)
        out.backward(grad_output)
        return x.grad, None
''', "drew a NEW dropout mask"),
    "layer-shapes-computed": ("layer_shapes", '''
def layer_shapes(model, input_shape):
    shapes = []
    h = mg.zeros(*input_shape)
    for name, layer in model.named_children():
        h = layer(h)
        shapes.append((name, tuple(h.shape)))
    return shapes
''', "the layers were computed"),
    "layer-shapes-lazy-left-on": ("layer_shapes", '''
def layer_shapes(model, input_shape):
    shapes = []
    mg.set_mode("lazy")
    h = mg.zeros(*input_shape)
    for name, layer in model.named_children():
        h = layer(h)
        shapes.append((name, tuple(h.shape)))
    return shapes
''', "lazy mode was still on"),
    "layer-shapes-with-the-input": ("layer_shapes", '''
def layer_shapes(model, input_shape):
    shapes = [("input", tuple(input_shape))]
    with mg.lazy():
        h = mg.zeros(*input_shape)
        for name, layer in model.named_children():
            h = layer(h)
            shapes.append((name, tuple(h.shape)))
    return shapes
''', "the list starts with the input"),
    "no-grad-reads-after-switching": ("my_no_grad", '''
class my_no_grad:
    def __enter__(self):
        mg.set_grad_enabled(False)
        self.previous = mg.is_grad_enabled()

    def __exit__(self, exc_type, exc_value, traceback):
        mg.set_grad_enabled(self.previous)
''', "the previous mode is read AFTER switching recording off"),
    "evaluate-switches-recording-back-on": ("evaluate", '''
def evaluate(model, batches):
    was_training = model.training
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    mg.set_grad_enabled(False)
    if True:
        for x, y in batches:
            logits = model(x)
            total_loss += F.cross_entropy(logits, y).item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(y)
    mg.set_grad_enabled(True)
    model.train(was_training)
    return total_loss / count, correct / count
''', "it switched recording on at its end"),
    "evaluate-argmax-without-dim": ("evaluate", '''
def evaluate(model, batches):
    was_training = model.training
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with mg.no_grad():
        for x, y in batches:
            logits = model(x)
            total_loss += F.cross_entropy(logits, y).item() * len(y)
            correct += (logits.argmax() == y).sum().item()
            count += len(y)
    model.train(was_training)
    return total_loss / count, correct / count
''', "logits.argmax() without dim"),
    "checkpoint-fn-first": ("my_checkpoint", '''
class MyCheckpoint(mg.autograd.Function):
    @staticmethod
    def forward(ctx, fn, x):
        ctx.fn = fn
        ctx.rng_state = mg.get_rng_state()
        ctx.save_for_backward(x)
        return fn(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        now = mg.get_rng_state()
        mg.set_rng_state(ctx.rng_state)
        with mg.enable_grad():
            out = ctx.fn(x)
        mg.set_rng_state(now)
        out.backward(grad_output)
        return None, x.grad
''', "forward takes (fn, x)"),
    "checkpoint-ignores-grad-output": ("my_checkpoint", '''
class MyCheckpoint(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        ctx.fn = fn
        ctx.rng_state = mg.get_rng_state()
        ctx.save_for_backward(x)
        return fn(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        now = mg.get_rng_state()
        mg.set_rng_state(ctx.rng_state)
        with mg.enable_grad():
            out = ctx.fn(x)
            out.sum().backward()
        mg.set_rng_state(now)
        return x.grad, None
''', "backward ignores grad_output"),
    "checkpoint-reseeds-in-forward": ("my_checkpoint", '''
class MyCheckpoint(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        ctx.fn = fn
        mg.manual_seed(0)
        ctx.rng_state = mg.get_rng_state()
        ctx.save_for_backward(x)
        return fn(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        now = mg.get_rng_state()
        mg.set_rng_state(ctx.rng_state)
        with mg.enable_grad():
            out = ctx.fn(x)
        mg.set_rng_state(now)
        out.backward(grad_output)
        return x.grad, None
''', "forward changed the random generator"),
    "layer-shapes-named-modules": ("layer_shapes", '''
def layer_shapes(model, input_shape):
    shapes = []
    with mg.lazy():
        h = mg.zeros(*input_shape)
        for name, layer in list(model.named_modules())[1:]:
            h = layer(h)
            shapes.append((name, tuple(h.shape)))
    return shapes
''', "walk model.named_children()"),
    "layer-shapes-whole-model": ("layer_shapes", '''
def layer_shapes(model, input_shape):
    shapes = []
    with mg.lazy():
        h = mg.zeros(*input_shape)
        for name, layer in model.named_children():
            shapes.append((name, tuple(model(h).shape)))
    return shapes
''', "the output of the WHOLE model"),
    "evaluate-argmax-over-the-batch": ("evaluate", '''
def evaluate(model, batches):
    was_training = model.training
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with mg.no_grad():
        for x, y in batches:
            logits = model(x)
            total_loss += F.cross_entropy(logits, y).item() * len(y)
            correct += (logits.argmax(dim=0) == y).sum().item()
            count += len(y)
    model.train(was_training)
    return total_loss / count, correct / count
''', "logits.argmax(dim=1) (dim=0 gives one per class)"),
    "no-grad-toggles": ("my_no_grad", '''
class my_no_grad:
    def __enter__(self):
        mg.set_grad_enabled(False)

    def __exit__(self, exc_type, exc_value, traceback):
        mg.set_grad_enabled(not mg.is_grad_enabled())
''', "__exit__ flips the mode"),
}
