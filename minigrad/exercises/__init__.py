"""Checkers for graded exercises: they run a student's code and name the mistake.

An exercise's test cell calls one checker, never bare asserts::

    from minigrad.exercises import check_function
    check_function(MyMul, inputs=[(3, 4), (4,)], reference=lambda x, y: x * y)

A check that fails raises an ``AssertionError`` whose short message says what was called
(shapes, dtypes), what came back, what was expected and, when the answer matches a
known-wrong variant of the right one, which classic mistake it looks like (wrong sign, a
constant factor, transposed, not summed over broadcast dimensions, summed without
keepdim, a gradient not accumulated for an input used twice, grad_output ignored,
overflow at +-1000, an array modified in place, a forgotten zero_grad, dropout or batch
statistics in eval mode). A check that passes prints one line.

- ``check_function(fn, inputs, reference)``: a Function (or a function on Tensors):
  output and gradients, with a random upstream gradient, an input used twice.
- ``check_loss(loss, inputs, reference)``: the same, plus logits of +-1000 and a
  batch-size factor named as a mean/sum mix-up.
- ``check_module(Module, reference=nn.Linear, args=(4, 3), inputs=[(5, 4)])``: train
  and eval mode, parameter gradients, buffers.
- ``check_optimizer_step(MySGD, reference=optim.SGD, lr=0.1, momentum=0.9)``.
- ``check_training_step(train_step, model, optimizer, batches, loss)``.
- ``check_array_function(fn, cases, reference)``: a plain NumPy function
  (e.g. ``unbroadcast(grad, shape)``).
- ``check_value(value, expected, name)``: any value.

Every checker takes ``mistakes``: exercise-specific known-wrong answers, each with the
sentence that names the mistake (see ``MATMUL_MISTAKES``); for ``check_function`` and
``check_loss``, an entry wrapped in ``wrong_output`` names a wrong forward output. How to
write an exercise: notebooks/README.md, section "Writing an exercise".
"""

from .checks import (MATMUL_MISTAKES, check_array_function, check_function, check_loss,
                     check_module, check_optimizer_step, check_training_step, check_value,
                     wrong_output)
from .compare import CheckFailed

__all__ = ["MATMUL_MISTAKES", "CheckFailed", "check_array_function", "check_function",
           "check_loss", "check_module", "check_optimizer_step", "check_training_step",
           "check_value", "wrong_output"]
