"""Chapter 09's checks: ``check_optimizer_step`` with ``lrs`` (a schedule between steps)
and the mistakes of ``minigrad/exercises/optimizers.py``, each named for a wrong optimizer,
clip or schedule written as a student would."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import fails

import minigrad as mg
from minigrad import optim
from minigrad.exercises import check_array_function, check_optimizer_step
from minigrad.exercises.optimizers import (WARMUP_COSINE_MISTAKES, adam_mistakes,
                                           adamw_mistakes, check_clip_grad_norm,
                                           reference_warmup_cosine, sgd_momentum_mistakes)

LRS = [0.1, 0.1, 0.05, 0.02]


class LrInBuffer(optim.Optimizer):
    """The textbook momentum, v = mu v + lr g; p -= v."""

    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "momentum": momentum, "weight_decay": weight_decay})

    def update_param(self, param, grad, state, group):
        grad = grad + group["weight_decay"] * param
        v = group["lr"] * grad
        state["v"] = v if "v" not in state else group["momentum"] * state["v"] + v
        param -= state["v"]


class FirstLr(optim.Optimizer):
    """Plain SGD that keeps the lr it was built with (ignores the param group's)."""

    def __init__(self, params, lr=1e-3):
        super().__init__(params, {"lr": lr})
        self.first_lr = lr

    def update_param(self, param, grad, state, group):
        param -= self.first_lr * grad


def test_lr_inside_the_buffer_passes_at_a_constant_lr_and_is_named_when_it_changes():
    check_optimizer_step(LrInBuffer, optim.SGD, lr=0.1, momentum=0.9, weight_decay=0.1)
    message = fails(check_optimizer_step, LrInBuffer, optim.SGD, lrs=LRS, momentum=0.9,
                    weight_decay=0.1, mistakes=sgd_momentum_mistakes(LRS, 0.9, 0.1))
    assert "step 3 (lr=0.05)" in message
    assert "the learning rate is inside the buffer" in message


def test_lrs_catch_an_optimizer_that_ignores_its_param_group():
    check_optimizer_step(FirstLr, optim.SGD, lr=0.1)
    assert "step 3 (lr=0.05)" in fails(check_optimizer_step, FirstLr, optim.SGD,
                                       lr=0.1, lrs=LRS)


def adam_class(bias_correction=True, decoupled=False, store_t=True, guarded_t0=False):
    class Adam(optim.Optimizer):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
            super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                      "weight_decay": weight_decay})

        def update_param(self, param, grad, state, group):
            (b1, b2), lr, wd = group["betas"], group["lr"], group["weight_decay"]
            t = state.get("t", 0) + 1
            if store_t:
                state["t"] = t
            if guarded_t0:  # counted from 0, with a guard against 1 - beta**0
                state["t"] = t
                t -= 1
            if decoupled:
                param *= 1 - lr * wd
            else:
                grad = grad + wd * param
            state["m"] = b1 * state.get("m", 0) + (1 - b1) * grad
            state["v"] = b2 * state.get("v", 0) + (1 - b2) * grad * grad
            m, v = state["m"], state["v"]
            if bias_correction and (t or not guarded_t0):
                m, v = m / (1 - b1**t), v / (1 - b2**t)
            param -= lr * m / (np.sqrt(v) + group["eps"])

    return Adam


def test_a_right_adam_and_adamw_pass():
    options = {"betas": (0.9, 0.999), "eps": 0.01, "weight_decay": 0.1}
    check_optimizer_step(adam_class(), optim.Adam, lrs=LRS, **options,
                         mistakes=adam_mistakes(LRS, **options))
    check_optimizer_step(adam_class(decoupled=True), optim.AdamW, lrs=LRS, **options,
                         mistakes=adamw_mistakes(LRS, **options))


def test_adam_without_bias_correction_is_named():
    options = {"betas": (0.9, 0.999), "eps": 0.01, "weight_decay": 0.1}
    assert "the bias correction is missing" in fails(
        check_optimizer_step, adam_class(bias_correction=False), optim.Adam, lrs=LRS,
        **options, mistakes=adam_mistakes(LRS, **options))


def test_adamw_with_the_decay_on_the_gradient_is_named_adam_with_l2():
    options = {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.5}
    assert "that is Adam with an L2 penalty" in fails(
        check_optimizer_step, adam_class(), optim.AdamW, lrs=LRS, **options,
        mistakes=adamw_mistakes(LRS, **options))


def test_adam_step_counts_that_do_not_advance_or_start_at_0_are_named():
    options = {"betas": (0.9, 0.999), "eps": 0.01, "weight_decay": 0.1}
    stuck = fails(check_optimizer_step, adam_class(store_t=False), optim.Adam, lrs=LRS,
                  **options, mistakes=adam_mistakes(LRS, **options))
    assert "step 2" in stuck and "the step count t does not advance" in stuck
    assert "counts from 0" not in stuck
    guarded = fails(check_optimizer_step, adam_class(guarded_t0=True), optim.Adam, lrs=LRS,
                    **options, mistakes=adam_mistakes(LRS, **options))
    assert "at step 1 it was not applied. Was t 0 there" in guarded


class AdamW(optim.Optimizer):
    """The exercise's MyAdamW on minigrad's Adam (``update_param`` is Adam's)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 mistake=None):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})
        self.adam, self.mistake = adam_class(), mistake

    def update_param(self, param, grad, state, group):
        param *= 1 - group["lr"] * group["weight_decay"]
        if self.mistake == "group unchanged":
            return self.adam.update_param(self, param, grad, state, group)
        if self.mistake == "group changed":
            group["weight_decay"] = 0.0
            return self.adam.update_param(self, param, grad, state, group)
        return self.adam.update_param(self, param, grad, state, {**group, "weight_decay": 0.0})


@pytest.mark.parametrize("mistake, named", [
    ("group unchanged", "the decay is applied twice"),
    ("group changed", "the group's weight_decay was set to 0 in the group itself")])
def test_adamw_decayed_twice_or_through_the_shared_group_is_named(mistake, named):
    options = {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.5}
    check_optimizer_step(AdamW, optim.AdamW, lrs=LRS, **options,
                         mistakes=adamw_mistakes(LRS, **options))
    assert named in fails(check_optimizer_step,
                          lambda params, **o: AdamW(params, mistake=mistake, **o),
                          optim.AdamW, lrs=LRS, **options,
                          mistakes=adamw_mistakes(LRS, **options))


def clip(per_parameter=False, in_place=True, skip_none=True, replace=False,
         to_float=False):
    def my_clip_grad_norm_(parameters, max_norm):
        parameters = [p for p in parameters if p.grad is not None or not skip_none]
        grads = [p.grad for p in parameters]
        norms = [float(np.sqrt((g.numpy().astype(np.float64) ** 2).sum())) for g in grads]
        total = math.sqrt(sum(n * n for n in norms))
        for p, g, n in zip(parameters, grads, norms):
            factor = min(max_norm / ((n if per_parameter else total) + 1e-6), 1.0)
            if replace:
                p.grad = g * factor
            elif in_place:
                with mg.no_grad():
                    g.mul_(factor)
        return total if to_float else mg.tensor(total)

    return my_clip_grad_norm_


def test_clip_grad_norm_check_passes_minigrads_own_and_names_the_mistakes():
    check_clip_grad_norm(clip())
    check_clip_grad_norm(mg.nn.utils.clip_grad_norm_)
    assert "each parameter was clipped on its own" in fails(check_clip_grad_norm,
                                                            clip(per_parameter=True))
    assert "the gradients were not changed" in fails(check_clip_grad_norm,
                                                     clip(in_place=False))
    assert "skip it" in fails(check_clip_grad_norm, clip(skip_none=False))
    assert "scales each gradient in place" in fails(check_clip_grad_norm, clip(replace=True))
    assert "return the total norm as a 0-d Tensor" in fails(check_clip_grad_norm,
                                                             clip(to_float=True))


@pytest.mark.parametrize("warmup, decay", [(5, 20), (0, 8), (3, 1), (4, 0)])
def test_the_reference_schedule_is_warmup_cosine_lr(warmup, decay):
    opt = optim.SGD([mg.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = optim.lr_scheduler.WarmupCosineLR(opt, warmup_steps=warmup,
                                                  decay_steps=decay)
    for step in range(warmup + decay + 3):
        assert opt.param_groups[0]["lr"] == pytest.approx(
            reference_warmup_cosine(step, warmup, decay), abs=1e-12)
        opt.step()
        scheduler.step()


def test_a_warmup_from_zero_is_named():
    def warmup_cosine(step, warmup_steps, decay_steps):
        if step < warmup_steps:
            return step / warmup_steps
        if step >= warmup_steps + decay_steps:
            return 0.0
        return 0.5 * (1 + math.cos(math.pi * (step - warmup_steps) / decay_steps))

    cases = [(t, 5, 20) for t in range(30)]
    check_array_function(reference_warmup_cosine, cases, reference=reference_warmup_cosine,
                         mistakes=WARMUP_COSINE_MISTAKES)
    assert "the warm-up starts at 0" in fails(check_array_function, warmup_cosine, cases,
                                              reference=reference_warmup_cosine,
                                              mistakes=WARMUP_COSINE_MISTAKES)


def test_a_clip_that_goes_through_the_parameters_twice_is_told_they_are_a_generator():
    def my_clip_grad_norm_(parameters, max_norm):
        total = math.sqrt(sum(float((p.grad.numpy() ** 2).sum()) for p in parameters))
        with mg.no_grad():
            for p in parameters:  # empty: the generator is used up
                p.grad.mul_(min(max_norm / (total + 1e-6), 1.0))
        return mg.tensor(total)

    message = fails(check_clip_grad_norm, my_clip_grad_norm_)
    assert "the gradients were not changed" in message and "generator" in message


# --- a momentum buffer that is p.grad's own array (issue 31) -----------------------------


def sgd_class(copy=True, in_place=False):
    class SGD(optim.Optimizer):
        def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
            super().__init__(params, {"lr": lr, "momentum": momentum,
                                      "weight_decay": weight_decay})

        def update_param(self, param, grad, state, group):
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = grad.copy() if copy else grad
            elif in_place:
                buffer = state["momentum_buffer"]
                buffer *= group["momentum"]
                buffer += grad
            else:
                state["momentum_buffer"] = group["momentum"] * state["momentum_buffer"] + grad
            param -= group["lr"] * state["momentum_buffer"]

    return SGD


def test_a_momentum_buffer_that_is_the_gradient_passes_the_usual_check_and_is_named_here():
    from minigrad.exercises.optimizers import check_steps_without_zero_grad

    check_optimizer_step(sgd_class(copy=False), optim.SGD, lr=0.1, momentum=0.9)
    check_steps_without_zero_grad(sgd_class(), optim.SGD)
    check_steps_without_zero_grad(sgd_class(in_place=True), optim.SGD)
    check_steps_without_zero_grad(optim.SGD, optim.SGD, lr=0.05, momentum=0.5, steps=4)
    assert "the momentum buffer is the gradient array itself" in fails(
        check_steps_without_zero_grad, sgd_class(copy=False), optim.SGD)
    message = fails(check_steps_without_zero_grad, sgd_class(copy=False, in_place=True),
                    optim.SGD)
    assert "step() changed p.grad" in message and "grad.copy()" in message


def test_adamw_decay_after_the_adam_step_is_named():
    class DecayAfter(AdamW):
        def update_param(self, param, grad, state, group):
            self.adam.update_param(self, param, grad, state, {**group, "weight_decay": 0.0})
            param *= 1 - group["lr"] * group["weight_decay"]

    options = {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.5}
    assert "the decay is applied after the Adam step" in fails(
        check_optimizer_step, DecayAfter, optim.AdamW, lrs=LRS, **options,
        mistakes=adamw_mistakes(LRS, **options))


def test_the_clipping_messages_agree_that_the_gradients_are_scaled_in_place():
    not_changed = fails(check_clip_grad_norm, clip(in_place=False))
    replaced = fails(check_clip_grad_norm, clip(replace=True))
    assert "p.grad = p.grad * factor" not in not_changed
    assert "not p.grad = p.grad * factor" in replaced


def test_adamw_on_a_wrong_adam_passes_with_a_note_to_fix_adam_first(capsys):
    from minigrad.exercises import check_optimizer_step as checked

    wrong_adam = adam_class(bias_correction=False)

    class MyAdamW(wrong_adam):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
            super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

        def update_param(self, param, grad, state, group):
            param *= 1 - group["lr"] * group["weight_decay"]
            super().update_param(param, grad, state, {**group, "weight_decay": 0.0})

    options = {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.5}
    uses = {wrong_adam.__name__: "minigrad.exercises.optimizers:ReferenceAdam"}
    # the base class is found in the globals of MyAdamW's methods under its own name
    MyAdamW.update_param.__globals__[wrong_adam.__name__] = wrong_adam
    try:
        assert "wrong values" in fails(check_optimizer_step, MyAdamW, optim.AdamW, lrs=LRS,
                                       **options, mistakes=adamw_mistakes(LRS, **options))
        checked(MyAdamW, optim.AdamW, lrs=LRS, **options,
                mistakes=adamw_mistakes(LRS, **options), uses=uses)
    finally:
        del MyAdamW.update_param.__globals__[wrong_adam.__name__]
    assert "fix exercise 2 (`my_adam`) first" in capsys.readouterr().out
    assert MyAdamW.__mro__[1] is wrong_adam  # the student's class is left as it was
