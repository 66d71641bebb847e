"""Chapter 9's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "sgd-momentum-buffer-recreated": ("my_sgd_momentum", '''
class MySGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        grad = grad + group["weight_decay"] * param
        buffer = np.zeros_like(param)
        buffer = group["momentum"] * buffer + grad
        param -= group["lr"] * buffer
''', "momentum buffer is not kept between steps"),
    "sgd-lr-inside-buffer": ("my_sgd_momentum", '''
class MySGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        grad = grad + group["weight_decay"] * param
        velocity = state.get("velocity", np.zeros_like(param))
        velocity = group["momentum"] * velocity + group["lr"] * grad
        state["velocity"] = velocity
        param -= velocity
''', "the learning rate is inside the buffer"),
    "sgd-buffer-averaged": ("my_sgd_momentum", '''
class MySGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        momentum = group["momentum"]
        grad = grad + group["weight_decay"] * param
        buffer = state.setdefault("momentum_buffer", np.zeros_like(param))
        buffer[...] = momentum * buffer + (1 - momentum) * grad
        param -= group["lr"] * buffer
''', "the buffer is an average"),
    "sgd-param-rebound": ("my_sgd_momentum", '''
class MySGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        grad = grad + group["weight_decay"] * param
        if "momentum_buffer" in state:
            grad = group["momentum"] * state["momentum_buffer"] + grad
        state["momentum_buffer"] = grad
        param = param - group["lr"] * grad
''', "the parameter did not change"),
    "adam-without-bias-correction": ("my_adam", '''
class MyAdam(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad**2
        param -= group["lr"] * state["exp_avg"] / (np.sqrt(state["exp_avg_sq"]) + group["eps"])
''', "the bias correction is missing"),
    "adam-step-counted-from-zero": ("my_adam", '''
class MyAdam(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        t = state["step"]
        grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad**2
        m_hat = state["exp_avg"] / (1 - beta1**t)
        v_hat = state["exp_avg_sq"] / (1 - beta2**t)
        param -= group["lr"] * m_hat / (np.sqrt(v_hat) + group["eps"])
        state["step"] += 1
''', "t counts from 0"),
    "adam-step-not-stored": ("my_adam", '''
class MyAdam(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        t = state["step"] + 1
        grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad**2
        m_hat = state["exp_avg"] / (1 - beta1**t)
        v_hat = state["exp_avg_sq"] / (1 - beta2**t)
        param -= group["lr"] * m_hat / (np.sqrt(v_hat) + group["eps"])
''', "the step count t does not advance"),
    "adam-eps-inside-sqrt": ("my_adam", '''
class MyAdam(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        state["step"] += 1
        t = state["step"]
        grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad**2
        m_hat = state["exp_avg"] / (1 - beta1**t)
        v_hat = state["exp_avg_sq"] / (1 - beta2**t)
        param -= group["lr"] * m_hat / np.sqrt(v_hat + group["eps"])
''', "eps is inside the square root"),
    "adamw-decay-on-the-gradient": ("my_adamw", '''
class MyAdamW(MyAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def update_param(self, param, grad, state, group):
        super().update_param(param, grad + group["weight_decay"] * param, state,
                             {**group, "weight_decay": 0.0})
''', "that is Adam with an L2 penalty"),
    "adamw-decay-without-lr": ("my_adamw", '''
class MyAdamW(MyAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def update_param(self, param, grad, state, group):
        param *= 1 - group["weight_decay"]
        super().update_param(param, grad, state, {**group, "weight_decay": 0.0})
''', "the decay is missing its learning rate"),
    "adamw-decayed-twice": ("my_adamw", '''
class MyAdamW(MyAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def update_param(self, param, grad, state, group):
        param *= 1 - group["lr"] * group["weight_decay"]
        super().update_param(param, grad, state, group)
''', "the decay is applied twice"),
    "adamw-shared-group-changed": ("my_adamw", '''
class MyAdamW(MyAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def update_param(self, param, grad, state, group):
        param *= 1 - group["lr"] * group["weight_decay"]
        group["weight_decay"] = 0.0
        super().update_param(param, grad, state, group)
''', "set to 0 in the group itself"),
    "warmup-from-zero": ("warmup_cosine", '''
def warmup_cosine(step, warmup_steps, decay_steps):
    if step < warmup_steps:
        return step / warmup_steps
    if step >= warmup_steps + decay_steps:
        return 0.0
    return 0.5 * (1 + math.cos(math.pi * (step - warmup_steps) / decay_steps))
''', "the warm-up starts at 0"),
    "cosine-from-step-zero": ("warmup_cosine", '''
def warmup_cosine(step, warmup_steps, decay_steps):
    if step < warmup_steps:
        return (step + 1) / (warmup_steps + 1)
    if step >= warmup_steps + decay_steps:
        return 0.0
    return 0.5 * (1 + math.cos(math.pi * step / decay_steps))
''', "measured from step 0"),
    "clip-each-parameter": ("my_clip_grad_norm", '''
def my_clip_grad_norm_(parameters, max_norm):
    norms = []
    with mg.no_grad():
        for p in parameters:
            norm = float(np.sqrt((p.grad.numpy() ** 2).sum()))
            norms.append(norm)
            p.grad.mul_(min(max_norm / (norm + 1e-6), 1.0))
    return mg.tensor(math.sqrt(sum(n * n for n in norms)))
''', "each parameter was clipped on its own"),
    "clip-not-in-place": ("my_clip_grad_norm", '''
def my_clip_grad_norm_(parameters, max_norm):
    grads = [p.grad.numpy() for p in parameters]
    total = math.sqrt(sum(float((g ** 2).sum()) for g in grads))
    factor = min(max_norm / (total + 1e-6), 1.0)
    grads = [g * factor for g in grads]
    return mg.tensor(total)
''', "the gradients were not changed"),
    "clip-returns-norm-after": ("my_clip_grad_norm", '''
def my_clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = math.sqrt(sum(float((g.numpy() ** 2).sum()) for g in grads))
    factor = min(max_norm / (total + 1e-6), 1.0)
    with mg.no_grad():
        for g in grads:
            g.mul_(factor)
    return mg.tensor(total * factor)
''', "the one after clipping"),
    "sgd-buffer-is-the-gradient": ("my_sgd_momentum", '''
class MySGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        lr, momentum, weight_decay = group["lr"], group["momentum"], group["weight_decay"]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = grad
            else:
                state["momentum_buffer"] = momentum * state["momentum_buffer"] + grad
            grad = state["momentum_buffer"]
        param -= lr * grad
''', "the momentum buffer is the gradient array itself"),
    "adamw-decay-after-the-step": ("my_adamw", '''
class MyAdamW(MyAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def update_param(self, param, grad, state, group):
        super().update_param(param, grad, state, {**group, "weight_decay": 0.0})
        param *= 1 - group["lr"] * group["weight_decay"]
''', "the decay is applied after the Adam step"),
    # a wrong MyAdam under a right MyAdamW: MyAdamW's check passes with the reference Adam
    # and says to fix exercise 2 first
    "adam-only-m-corrected": ("my_adam", '''
class MyAdam(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        state["step"] += 1
        t = state["step"]
        grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad**2
        m_hat = state["exp_avg"] / (1 - beta1**t)
        param -= group["lr"] * m_hat / (np.sqrt(state["exp_avg_sq"]) + group["eps"])
''', "fix exercise 2 (`my_adam`) first"),
    "clip-grad-replaced": ("my_clip_grad_norm", '''
def my_clip_grad_norm_(parameters, max_norm):
    parameters = [p for p in parameters if p.grad is not None]
    total = math.sqrt(sum(float((p.grad.numpy() ** 2).sum()) for p in parameters))
    factor = min(max_norm / (total + 1e-6), 1.0)
    for p in parameters:
        p.grad = p.grad * factor
    return mg.tensor(total)
''', "scales each gradient in place"),
}
