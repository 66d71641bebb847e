"""Chapter 00's classic mistakes (start here), out of the notebook so that its test cells
do not show the answers. Each table maps the sentence that names a mistake to the wrong
answer it gives, as the checkers' ``mistakes=`` take them (read it after solving)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..nn.functional import cross_entropy
from ..state import no_grad
from ..tensor import Tensor
from .checks import _student_error, wrap
from .compare import describe


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
        f"u is wrong: b is left out. u = w * x + b - y = {error:g} here, and both "
        "gradients use it.": (2 * (error - b) * x, 2 * (error - b)),
        f"u is wrong: y is left out. u = w * x + b - y = {error:g} here, and both "
        "gradients use it.": (2 * (error + y) * x, 2 * (error + y)),
        "these are L = u**2 itself, not its derivatives: dL/dw = 2 * u * x and "
        "dL/db = 2 * u.": (error ** 2, error ** 2),
    }


def accumulation_mistakes(w: np.ndarray, x: np.ndarray, calls: int) -> dict:
    """Wrong predictions of ``w.grad`` after ``calls`` backward passes of ``(w * x).sum()``
    without clearing the gradient in between."""
    wrong_counts = {
        f"that is {k} backward() calls' worth of gradient; the loop runs {calls} times, and "
        f"each call adds x to w.grad.": k * x
        for k in range(2, 2 * calls + 1) if k != calls}
    return {
        f"the gradient of one backward pass: backward() ADDS to .grad, it does not replace "
        f"it, so after {calls} calls w.grad holds {calls} of them.": x,
        **wrong_counts,
        "the derivative of w * x with respect to w is x (the other factor), not w.":
            calls * w,
        "these are the values of w * x, not its gradient: d(w * x)/dw = x, and each "
        "backward() adds it to w.grad.": w * x,
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


def batch_losses(train_step: Callable, model, optimizer, batches: Sequence[tuple],
                 steps_per_batch: int = 1) -> list:
    """The loss ``train_step`` returns for each batch in turn, as plain numbers: what an
    epoch's running total adds up (with the student's own step, so that exercise 4 is
    checked on its own even when exercise 3 is not right yet). With ``steps_per_batch``
    > 1, the step runs that many times per batch and the last loss is kept."""
    losses = []
    for step, (x, y) in enumerate(batches, start=1):
        for _ in range(steps_per_batch):
            try:
                loss = train_step(model, optimizer, Tensor(np.asarray(x)),
                                  Tensor(np.asarray(y)))
            except Exception as error:  # noqa: BLE001 - the student's code: report it
                failure = _student_error(error, f"your train_step (exercise 3), batch {step}")
                raise AssertionError(wrap(f"{failure}\n  train_epoch calls train_step: make "
                                          "exercise 3 run first.")) from None
            if not isinstance(loss, Tensor):
                raise AssertionError(wrap(
                    f"your train_step (exercise 3) returned {describe(loss)} at batch "
                    f"{step}, and train_epoch needs the loss Tensor it returns. Fix exercise "
                    "3 first: end it with `return loss` (its check says what is wrong)."))
        losses.append(loss.item())
    return losses


def epoch_mistakes(train_step: Callable, model: Callable, optimizer: Callable,
                   batches: Sequence[tuple]) -> dict:
    """Wrong averages of an epoch's batch losses, each made with the student's own
    ``train_step`` on a fresh ``model()`` with ``optimizer(parameters)``."""
    def trained(steps_per_batch: int = 1) -> list:
        fresh = model()
        return batch_losses(train_step, fresh, optimizer(fresh.parameters()), batches,
                            steps_per_batch)

    losses = trained()
    count = len(losses)
    untrained = model()
    with no_grad():
        before = [cross_entropy(untrained(Tensor(np.asarray(x))), Tensor(np.asarray(y))).item()
                  for x, y in batches]
    batch_size = len(batches[-1][0])
    overwritten = ("only the last batch's loss was kept{}: add each batch's loss to the "
                   "total (total += ...), do not overwrite it (total = ...).")
    return {
        "the running total was not divided by the number of batches: a mean is the "
        "total / len(batches).": float(np.sum(losses)),
        f"the total was divided by the batch size ({batch_size} points, len(x)), not by the "
        "number of batches: a mean of the batch losses is total / len(batches).":
            float(np.sum(losses)) / batch_size,
        overwritten.format(""): losses[-1],
        overwritten.format(" (and divided by the number of batches)"): losses[-1] / count,
        "only the first batch's loss was kept: add up every batch's loss, inside the loop, "
        "and return after the loop.": losses[0],
        "only the first batch's loss was kept, divided by the number of batches: the "
        "return is inside the loop; return after it.": losses[0] / count,
        "these are the losses of the model before any training: call train_step (it "
        "trains, then returns the loss) on each batch instead of computing the loss "
        "yourself.": float(np.mean(before)),
        "train_step ran twice per batch: each call is one more training step. Call it once "
        "per batch and add up the loss it returns.": float(np.mean(trained(2))),
    }
