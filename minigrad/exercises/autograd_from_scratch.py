"""Chapter 01's classic mistakes (autograd from scratch), out of the notebook so that its
test cells do not show the answers. Each table is ``{sentence naming the mistake:
fn(*arrays, grad_output) -> the wrong gradient(s)}``, as ``check_function(...,
mistakes=...)`` takes them. The generic ones (grad_output ignored, a wrong sign, a
gradient not accumulated for a value used twice) are recognised by ``check_function``
itself; ``needs_input_grad`` is checked by ``context.check_needs_input_grad``."""

from __future__ import annotations

import numpy as np

MUL_MISTAKES = {  # z = x * y
    "the gradients of x and y are swapped: dz/dx = y, so grad_x = grad_output * y, and "
    "grad_y = grad_output * x.":
        lambda x, y, g: (g * x, g * y),
}

EXP_MISTAKES = {  # z = exp(x); check with exact_shapes=True, or the engine hides the first
    "ctx.saved_tensors is a tuple, even with one array saved: unpack it with "
    "`z, = ctx.saved_tensors` (or `(z,) = ctx.saved_tensors`). grad_output times the "
    "tuple (z,) gives a gradient with an extra leading axis of size 1.":
        lambda x, g: (g * np.exp(x))[np.newaxis],
    "your gradient is grad_output * x: the derivative of exp is exp(x) = z, the output "
    "itself, not x. Save z in forward (ctx.save_for_backward(z)) and return "
    "grad_output * z.":
        lambda x, g: g * x,
    "np.exp was applied again to what forward saved: z is already exp(x), so np.exp(z) "
    "is exp(exp(x)). Use the saved z as it is: grad_output * z.":
        lambda x, g: g * np.exp(np.exp(x)),
}

EXP_MUL_PLUS_MISTAKES = {  # f = exp(x * y) + x, u = exp(x * y)
    "the +1 (from the direct use of x in f = u + x) is not multiplied by grad_output. "
    "The chain rule multiplies the whole local derivative, both terms: grad_x = "
    "grad_output * (u * y + 1).":
        lambda x, y, g: (g * np.exp(x * y) * y + 1, g * np.exp(x * y) * x),
    "the gradients of x and y are swapped: df/dx = u * y + 1 and df/dy = u * x.":
        lambda x, y, g: (g * np.exp(x * y) * x, g * (np.exp(x * y) * y + 1)),
}

SIN_MISTAKES = {  # z = sin(x)
    "backward used sin(x): the derivative of sin is cos, so return grad_output * "
    "np.cos(x) (save the input x in forward, not the output).":
        lambda x, g: g * np.sin(x),
    "that is the derivative of cos (-sin(x)); the derivative of sin is cos: "
    "grad_output * np.cos(x).":
        lambda x, g: -g * np.sin(x),
}
