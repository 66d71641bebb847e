"""Chapter 15's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

# MyHypot with its forward's saving and its backward's return made wrong.
HYPOT = '''
class MyHypot(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = np.hypot(x, y)
        {save}
        return r

    @staticmethod
    def backward(ctx, grad_output):
        {load}
        return {grads}
'''
SAVED = "ctx.save_for_backward(x, y, r)"
LOADED = "x, y, r = ctx.saved_tensors"


def _hypot(save=SAVED, load=LOADED, grads="grad_output * x / r, grad_output * y / r"):
    return HYPOT.format(save=save, load=load, grads=grads)


CHECKPOINT = '''
def checkpoint_training(model, optimizer, path):
    mg.save({saved}, path)


def resume(model, optimizer, path):
    checkpoint = mg.load(path)
    {loads}
'''


def _checkpoint(saved='{"model": model.state_dict(), "optimizer": optimizer.state_dict()}',
                loads='model.load_state_dict(checkpoint["model"])\n    '
                      'optimizer.load_state_dict(checkpoint["optimizer"])'):
    return CHECKPOINT.format(saved=saved, loads=loads)


CLIP = '''
def clip_hook(max_norm):
    def hook(grad):
        norm = grad.norm()
        if norm > max_norm:
            {clip}
        return grad

    return hook
'''

MISTAKES = {
    # (issue 30: "hypot-saves-a-view" is no longer a mistake: the version check
    # compares memory, so an edit of x after forward is caught)
    "hypot-kept-as-attribute": ("myhypot", _hypot(
        save="ctx.x, ctx.y, ctx.r = x, y, r", load="x, y, r = ctx.x, ctx.y, ctx.r"),
        "kept input 0 (x) as a ctx attribute"),
    "hypot-forgets-grad-output": ("myhypot", _hypot(grads="x / r, y / r"),
                                  "backward ignores grad_output"),
    "hypot-upside-down": ("myhypot", _hypot(grads="grad_output * r / x, grad_output * r / y"),
                          "the derivative is upside down"),
    "hypot-swapped": ("myhypot", _hypot(grads="grad_output * y / r, grad_output * x / r"),
                      "the gradient for x uses y"),
    "hypot-y-uses-x": ("myhypot", _hypot(grads="grad_output * x / r, grad_output * x / r"),
                       "the gradient for y uses x"),
    "hypot-chain-rule-halfway": ("myhypot", _hypot(
        grads="grad_output / (2 * r), grad_output / (2 * r)"),
        "the chain rule stopped halfway"),
    "safe-norm-no-second-where": ("safe_norm", '''
def safe_norm(x):
    s = (x * x).sum(dim=-1)
    return mg.where(s > 0, s, 1.0).sqrt()
''', "the harmless value the square root was given there shows through"),
    "safe-norm-safe-value-zero": ("safe_norm", '''
def safe_norm(x):
    s = (x * x).sum(dim=-1)
    safe_s = mg.where(s > 0, s, 0.0)
    return mg.where(s > 0, safe_s.sqrt(), 0.0)
''', "Give the square root a POSITIVE value where s = 0"),
    "safe-norm-mask": ("safe_norm", '''
def safe_norm(x):
    s = (x * x).sum(dim=-1)
    return s.sqrt() * (s > 0)
''', "Multiplying by a mask (or by s > 0) is the where trap"),
    "safe-norm-one-where": ("safe_norm", '''
def safe_norm(x):
    s = (x * x).sum(dim=-1)
    return mg.where(s > 0, s.sqrt(), 0.0)
''', "A where after the square root is not enough"),
    "safe-norm-unfixed": ("safe_norm", '''
def safe_norm(x):
    return (x * x).sum(dim=-1).sqrt()
''', "the backward of Sqrt"),
    "safe-norm-eps": ("safe_norm", '''
def safe_norm(x):
    return ((x * x).sum(dim=-1) + 1e-12).sqrt()
''', "an eps added inside (or after) the square root"),
    "clip-hook-does-not-return": ("clip_hook", '''
def clip_hook(max_norm):
    def hook(grad):
        norm = grad.norm()
        if norm > max_norm:
            grad = grad * (max_norm / norm)

    return hook
''', "the hook returned None, so backward kept the gradient it had, unclipped"),
    "clip-hook-in-place": ("clip_hook", CLIP.format(clip="grad.mul_(max_norm / norm)"),
                           "the hook changed the gradient it was given, in place"),
    "clip-hook-values": ("clip_hook", CLIP.format(
        clip="return grad.clamp(-max_norm, max_norm)"), "(that is clip_grad_value_)"),
    "clip-hook-scales-up": ("clip_hook", '''
def clip_hook(max_norm):
    def hook(grad):
        return grad * (max_norm / grad.norm())

    return hook
''', "was scaled UP to max_norm"),
    "clip-hook-per-row": ("clip_hook", '''
def clip_hook(max_norm):
    def hook(grad):
        norm = grad.norm(dim=-1, keepdim=True)
        return mg.where(norm > max_norm, grad * (max_norm / norm), grad)

    return hook
''', "each row was clipped by its own norm"),
    "clip-hook-norm-squared": ("clip_hook", CLIP.format(
        clip="return grad * (max_norm / (grad * grad).sum())").replace(
        "norm = grad.norm()", "norm = (grad * grad).sum()"), "that is ||g||^2"),
    "clip-hook-not-a-factory": ("clip_hook", '''
def clip_hook(grad, max_norm=1.0):
    norm = grad.norm()
    if norm > max_norm:
        return grad * (max_norm / norm)
    return grad
''', "it must return the hook, a function of one gradient"),
    "checkpoint-saved-twice": ("checkpoint", '''
def checkpoint_training(model, optimizer, path):
    mg.save(model.state_dict(), path)
    mg.save(optimizer.state_dict(), path)


def resume(model, optimizer, path):
    model.load_state_dict(mg.load(path))
    optimizer.load_state_dict(mg.load(path))
''', "a second mg.save to the same path replaces the first file"),
    "checkpoint-other-keys": ("checkpoint", _checkpoint(
        saved='{"weights": model.state_dict(), "adam": optimizer.state_dict()}',
        loads='model.load_state_dict(checkpoint["weights"])\n    '
              'optimizer.load_state_dict(checkpoint["adam"])'),
        "not a dict with the keys 'model' and 'optimizer'"),
    "checkpoint-no-optimizer": ("checkpoint", _checkpoint(
        saved='{"model": model.state_dict()}',
        loads='model.load_state_dict(checkpoint["model"])'),
        "the checkpoint holds no optimizer state"),
    "checkpoint-optimizer-not-loaded": ("checkpoint", _checkpoint(
        loads='model.load_state_dict(checkpoint["model"])'),
        "optimizer.load_state_dict(...) with it in resume"),
    "checkpoint-keys-renamed": ("checkpoint", _checkpoint(
        loads='model.load_state_dict(checkpoint["model_state"])\n    '
              'optimizer.load_state_dict(checkpoint["optimizer_state"])'),
        "resume looked for a key the checkpoint does not have"),
    "checkpoint-model-not-loaded": ("checkpoint", _checkpoint(
        loads='optimizer.load_state_dict(checkpoint["optimizer"])'),
        "the model's parameters are not those saved"),
}
