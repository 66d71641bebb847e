"""Chapter 00's classic mistakes (start here), out of the notebook so that its test cells
do not show the answers. Each table maps the sentence that names a mistake to the wrong
answer it gives, as the checkers' ``mistakes=`` take them (read it after solving)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..tensor import Tensor


def hand_gradient_mistakes(w: float, x: float, b: float, y: float) -> dict:
    """Wrong ``(dL/dw, dL/db)`` for ``L = (w * x + b - y) ** 2``."""
    error = w * x + b - y
    return {
        "the factor 2 of the square is missing: the derivative of u**2 is 2 * u.":
            (error * x, error),
        "the inner derivative is missing for w: by the chain rule dL/dw = dL/du * du/dw, "
        "and du/dw = x for u = w * x + b - y.": (2 * error, 2 * error),
        "the sign is flipped: u = w * x + b - y grows with w and b, so du/dw = +x and "
        "du/db = +1.": (-2 * error * x, -2 * error),
        "the two gradients are swapped: the one for w has the factor x, the one for b "
        "does not.": (2 * error, 2 * error * x),
    }


def accumulation_mistakes(w: np.ndarray, x: np.ndarray, calls: int) -> dict:
    """Wrong predictions of ``w.grad`` after ``calls`` backward passes of ``(w * x).sum()``
    without clearing the gradient in between."""
    return {
        f"the gradient of one backward pass: backward() ADDS to .grad, it does not replace "
        f"it, so after {calls} calls w.grad holds {calls} of them.": x,
        "the derivative of w * x with respect to w is x (the other factor), not w.":
            calls * w,
        "nothing clears .grad between the calls: the loop never calls zero_grad() or sets "
        "w.grad = None.": np.zeros_like(x),
    }


TRAIN_STEP_MISTAKES = {
    "the parameters did not move: optimizer.step() found no gradients. The order is "
    "zero_grad(), then loss.backward(), then step(); a step() before backward() (or a "
    "zero_grad() between backward() and step(), or no step() at all) updates nothing.":
        lambda model, optimizer, x, y: None,
}
"""Wrong training steps for ``check_training_step(..., mistakes=...)``; a step that updates
nothing leaves the model as it was, which is what this stand-in does."""


def batch_losses(train_step: Callable, model, optimizer, batches: Sequence[tuple]) -> list:
    """The loss ``train_step`` returns for each batch in turn, as plain numbers: what an
    epoch's running total adds up (with the student's own step, so that exercise 4 is
    checked on its own even when exercise 3 is not right yet)."""
    losses = []
    for step, (x, y) in enumerate(batches, start=1):
        loss = train_step(model, optimizer, Tensor(np.asarray(x)), Tensor(np.asarray(y)))
        if loss is None:
            raise AssertionError(f"train_step returned None at step {step}: it must return "
                                 "the loss (exercise 3).")
        losses.append(float(np.asarray(loss.detach().numpy() if isinstance(loss, Tensor)
                                       else loss)))
    return losses


def epoch_mistakes(losses: Sequence[float]) -> dict:
    """Wrong averages of an epoch's batch losses."""
    count = len(losses)
    overwritten = ("only the last batch's loss was kept{}: add each batch's loss to the "
                   "total (total += ...), do not overwrite it (total = ...).")
    return {
        "the running total was not divided by the number of batches: a mean is the "
        "total / len(batches).": float(np.sum(losses)),
        overwritten.format(""): losses[-1],
        overwritten.format(" (and divided by the number of batches)"): losses[-1] / count,
        "only the first batch's loss was kept: add up every batch's loss, inside the loop, "
        "and return after the loop.": losses[0],
        "only the first batch's loss was kept, divided by the number of batches: the "
        "return is inside the loop; return after it.": losses[0] / count,
    }
