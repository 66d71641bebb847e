"""Chapter 16's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

# Dual with one of its operations made wrong.
DUAL = '''
class Dual:
    def __init__(self, value, tangent):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        other = other if isinstance(other, Dual) else Dual(other, 0.0)
        return Dual(self.value + other.value, {add})

    {radd}

    def __mul__(self, other):
        other = other if isinstance(other, Dual) else Dual(other, 0.0)
        return Dual(self.value * other.value, {mul})

    {rmul}

    def sin(self):
        return Dual(np.sin(self.value), {sin})

    def exp(self):
        return Dual(np.exp(self.value), {exp})
'''


def _dual(add="self.tangent + other.tangent", radd="__radd__ = __add__",
          mul="self.tangent * other.value + self.value * other.tangent",
          rmul="__rmul__ = __mul__", sin="np.cos(self.value) * self.tangent",
          exp="np.exp(self.value) * self.tangent"):
    return DUAL.format(add=add, radd=radd, mul=mul, rmul=rmul, sin=sin, exp=exp)


# MyHypot (the Tensor form) with its backward made wrong.
HYPOT = '''
class MyHypot(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = (x * x + y * y).sqrt()
        {save}
        return r

    @staticmethod
    def backward(ctx, grad_output):
        {load}
        return {grads}
'''


def _hypot(save="ctx.save_for_backward(x, y, r)", load="x, y, r = ctx.saved_tensors",
           grads="grad_output * x / r, grad_output * y / r"):
    return HYPOT.format(save=save, load=load, grads=grads)


HVP = '''
def hvp(f, x, v):
    {body}
'''
FIRST = "(g,) = mg.autograd.grad(f(x), x, create_graph=True)\n    "
SECOND = "(hv,) = mg.autograd.grad((g * v).sum(), x)\n    "

PENALTY = '''
def gradient_penalty(critic, real, fake, epsilon):
    x_hat = ({mix}){requires}
    scores = critic(x_hat)
    (grads,) = mg.autograd.grad(scores.sum(), x_hat{create})
    return {penalty}
'''


def _penalty(mix="epsilon * real + (1 - epsilon) * fake", requires=".requires_grad_(True)",
             create=", create_graph=True", penalty="((grads.norm(dim=1) - 1) ** 2).mean()"):
    return PENALTY.format(mix=mix, requires=requires, create=create, penalty=penalty)


MISTAKES = {
    "dual-product-of-tangents": ("dual", _dual(mul="self.tangent * other.tangent"),
                                 "(a b)' = a' b + a b'"),
    "dual-half-product-rule": ("dual", _dual(mul="self.tangent * other.value"),
                               "only half of the product rule"),
    "dual-no-radd": ("dual", _dual(radd="pass"), "Dual.__radd__, which is missing"),
    "dual-no-rmul": ("dual", _dual(rmul="pass"), "Dual.__rmul__, which is missing"),
    "dual-sin-no-chain": ("dual", _dual(sin="np.cos(self.value)"),
                          "the factor a.tangent is missing"),
    "dual-sin-sign": ("dual", _dual(sin="-np.cos(self.value) * self.tangent"),
                      "the derivative of sin is +cos"),
    "dual-exp-no-chain": ("dual", _dual(exp="np.exp(self.value)"),
                          "the tangent of exp(a) is exp(a.value) TIMES a.tangent"),
    "dual-constant-tangent": ("dual", _dual().replace("Dual(other, 0.0)", "Dual(other, other)",
                                                      1),  # (in __add__ only)
                              "a number was added to the tangent too"),
    "dual-number-not-handled": ("dual", _dual().replace(
        "        other = other if isinstance(other, Dual) else Dual(other, 0.0)\n", ""),
        "Treat a number c as the dual number (c, 0)"),
    "dual-radd-recursion": ("dual", _dual(radd="def __radd__(self, other):\n"
                                            "        return other + self"),
                            "calling Dual.__radd__ again, without end"),
    "dual-number-tangent-one": ("dual", _dual().replace("Dual(other, 0.0)", "Dual(other, 1.0)"),
                                "a number was given the tangent 1"),
    "dual-epsilon-squared-kept": ("dual", _dual(
        mul="self.tangent * other.value + self.value * other.tangent"
            " + self.tangent * other.tangent"), "and eps^2 = 0"),
    "dual-returns-tuple": ("dual", _dual().replace("return Dual(", "return ("), "not a Dual"),
    "hypot-numpy-backward": ("hypot_twice", _hypot(
        grads="(grad_output.numpy() * x.numpy() / r.numpy(), "
              "grad_output.numpy() * y.numpy() / r.numpy())"),
        "backward returned NumPy arrays (.numpy() somewhere)"),
    "hypot-numpy-wrapped": ("hypot_twice", _hypot(
        grads="(mg.tensor(grad_output.numpy() * x.numpy() / r.numpy()), "
              "mg.tensor(grad_output.numpy() * y.numpy() / r.numpy()))"),
        "the gradients backward returned have no history at all"),
    "hypot-saved-numpy": ("hypot_twice", _hypot(
        load="x, y, r = (mg.tensor(t.numpy()) for t in ctx.saved_tensors)"),
        "backward used x, y and r as constants"),
    "hypot-output-as-attribute": ("hypot_twice", _hypot(
        save="ctx.save_for_backward(x, y)\n        ctx.r = r",
        load="x, y = ctx.saved_tensors\n        r = ctx.r"),
        "r = hypot(x, y) was used as a constant in backward"),
    "hypot-once-differentiable": ("hypot_twice", _hypot().replace(
        "    @staticmethod\n    def backward",
        "    @staticmethod\n    @mg.autograd.once_differentiable\n    def backward"),
        "backward is marked @once_differentiable"),
    "hypot-upside-down": ("hypot_twice", _hypot(
        grads="grad_output * r / x, grad_output * r / y"), "the derivative is upside down"),
    "hypot-array-contract": ("hypot_twice", '''
class MyHypot(mg.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = np.hypot(x, y)
        ctx.save_for_backward(x, y, r)
        return r

    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, grad_output * y / r
''', "Write it as an mg.autograd.Function"),
    "hvp-no-create-graph": ("hvp", HVP.format(body='''(g,) = mg.autograd.grad(f(x), x)
    (hv,) = mg.autograd.grad((g * v).sum(), x)
    return hv'''), "was taken without create_graph=True"),
    "hvp-not-reduced": ("hvp", HVP.format(body=FIRST + '''(hv,) = mg.autograd.grad(g * v, x)
    return hv'''), "Reduce g * v to the dot product"),
    "hvp-gradient-times-v": ("hvp", HVP.format(body=FIRST + "return g * v"),
                             "that is the gradient times v, elementwise"),
    "hvp-sum-not-dot": ("hvp", HVP.format(body=FIRST + '''(hg,) = mg.autograd.grad(g.sum(), x)
    return hg * v'''), "that is (H 1) * v"),
    "hvp-accumulated": ("hvp", HVP.format(body='''f(x).backward(create_graph=True)
    (x.grad * v).sum().backward()
    return x.grad'''), "that is the gradient PLUS H v"),
    "hvp-forms-hessian": ("hvp", HVP.format(
        body="return mg.autograd.functional.hessian(f, x) @ v"), "it formed the Hessian"),
    "hvp-grad-not-unpacked": ("hvp", HVP.format(
        body=FIRST.replace("(g,) =", "g =") + SECOND + "return hv"),
        "mg.autograd.grad returns a tuple"),
    "hvp-finite-difference": ("hvp", HVP.format(body='''(g,) = mg.autograd.grad(f(x), x)
    moved = (x.detach() + 1e-6 * v).requires_grad_(True)
    (g_moved,) = mg.autograd.grad(f(moved), moved)
    return (g_moved - g) / 1e-6'''), "close, but not exact"),
    "penalty-no-create-graph": ("gradient_penalty", _penalty(create=""),
                                "the penalty has no history"),
    "penalty-x-hat-no-grad": ("gradient_penalty", _penalty(requires=""),
                              "x_hat, the points between real and fake, must require grad"),
    "penalty-wrong-dim": ("gradient_penalty", _penalty(
        penalty="((grads.norm(dim=0) - 1) ** 2).mean()"),
        "the norm was taken over the wrong dimension"),
    "penalty-no-minus-one": ("gradient_penalty", _penalty(
        penalty="(grads.norm(dim=1) ** 2).mean()"), "not towards 0"),
    "penalty-at-real": ("gradient_penalty", _penalty(mix="real"),
                        "the gradient was taken at the real samples"),
    "penalty-mean-of-scores": ("gradient_penalty", _penalty().replace("scores.sum()",
                                                                       "scores.mean()"),
                               "the gradients are N times too small"),
    "penalty-abs": ("gradient_penalty", _penalty(penalty="(grads.norm(dim=1) - 1).abs().mean()"),
                    "WGAN-GP's penalty squares it"),
    "penalty-one-sided": ("gradient_penalty", _penalty(
        penalty="((grads.norm(dim=1) - 1).clamp(min=0) ** 2).mean()"), "a one-sided penalty"),
    "penalty-grad-not-unpacked": ("gradient_penalty", _penalty().replace(
        "(grads,) = mg.autograd.grad", "grads = mg.autograd.grad"),
        "mg.autograd.grad returns a tuple"),
    "penalty-sum": ("gradient_penalty", _penalty(
        penalty="((grads.norm(dim=1) - 1) ** 2).sum()"),
        "the penalties of the samples were summed"),
}
