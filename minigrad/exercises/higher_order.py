"""Chapter 16's checks and classic mistakes (gradients of gradients), out of the notebook
so that its test cells do not show the answers.

- ``check_dual(Dual)``: forward mode by hand. ``Dual(value, tangent)`` with ``+``, ``*``
  (numbers on either side), ``.sin()`` and ``.exp()``; each op's value and tangent, then
  a function written once for Tensors and Duals, against ``mg.func.jvp``;
- ``check_double_backward(MyHypot)``: an ``mg.autograd.Function`` whose backward is
  made of Tensor operations, so that ``create_graph=True`` can differentiate it again:
  values, first derivatives, second derivatives (with respect to the inputs and to the
  upstream gradient), then ``gradcheck`` and ``gradgradcheck``;
- ``check_hvp(hvp)``: ``hvp(f, x, v)`` = H v without forming H: right values, no
  gradient left in ``x.grad``, and a constant number of backward passes however long x;
- ``check_gradient_penalty(gradient_penalty)``: WGAN-GP's penalty, its value and the
  gradients it gives the critic's weights (which need ``create_graph=True``).

While grading, each check runs in the judge's process and the student's objects are
proxies (course/judge.py); see the notes on each check for what it asks of them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import autograd_functional, nn
from ..autograd_function import Function as TensorFunction
from ..autograd_function import grad, gradcheck, gradgradcheck
from ..errors import GradcheckError
from ..func import jvp
from ..function import Function
from ..higher_order import NotTwiceDifferentiableError
from ..state import enable_grad, get_rng_state, set_rng_state
from ..tensor import Tensor
from .checks import IGNORES_GRAD_OUTPUT, _name, _student_error, checker
from .compare import CheckFailed, Variant, as_array, compare, describe
from .debugging import HYPOT_MISTAKES

# --- exercise 1: Dual ------------------------------------------------------------------

NO_VALUE_OR_TANGENT = (
    "{call} has no attribute {missing}: keep the two numbers a dual number carries as "
    "self.value and self.tangent (the cells after the exercise read them).")
NOT_A_DUAL = (
    "{call} returned {got}, not a Dual: each operation returns a NEW Dual(value, "
    "tangent), so that the next operation can carry the tangent on.")
NO_REFLECTED = (
    "{call} raised TypeError: Python tried the number's own {op} first, which does not "
    "know a Dual, then looked for Dual.{reflected}, which is missing. Define "
    "{reflected}(self, other) too (for + and *, the same as {forward}).")
REFLECTED_RECURSION = (
    "{call} raised RecursionError: Dual.{reflected} returns other {op} self, and for a "
    "number `other` Python answers that by calling Dual.{reflected} again, without end. "
    "Swap the operands: return self {op} other (for + and * the order does not matter), "
    "which calls your {forward}.")
NUMBER_NOT_HANDLED = (
    "{call} raised {error}: the other operand may be a plain number. Treat a number c "
    "as the dual number (c, 0): a constant does not change along any direction, so its "
    "tangent is 0.")
CONSTANT_TANGENT_ONE = (
    "a number was given the tangent 1: a number c is the dual number (c, 0), not (c, 1). "
    "Its tangent says how fast c moves when the inputs move along the direction, and a "
    "constant does not move (dc/dc = 1 is not what the tangent means).")
SUM_ONE_TANGENT = (
    "the tangent of a + b is the sum of BOTH tangents, a.tangent + b.tangent: each "
    "summand moves along the direction.")
CONSTANT_HAS_TANGENT = (
    "a number was added to the tangent too. A number c is a constant: its tangent is 0, "
    "so (a + c).tangent = a.tangent; add c to the value only.")
PRODUCT_OF_TANGENTS = (
    "the tangent of a * b is not a.tangent * b.tangent: by the product rule, "
    "(a b)' = a' b + a b', that is a.tangent * b.value + a.value * b.tangent.")
EPSILON_SQUARED_KEPT = (
    "the tangent of a * b has a third term, a.tangent * b.tangent: that is the "
    "coefficient of eps^2 in (a + a' eps)(b + b' eps), and eps^2 = 0. The tangent is "
    "a.tangent * b.value + a.value * b.tangent, nothing more.")
HALF_PRODUCT_RULE = (
    "only half of the product rule: (a b)' = a' b + a b' has two terms, one for each "
    "factor moving; you kept one.")
SCALED_VALUE_ONLY = (
    "multiplying by a number c scaled the value but not the tangent: (c a)' = c a', so "
    "the tangent is c * a.tangent.")
SIN_NO_CHAIN = (
    "the tangent of sin(a) is cos(a.value) TIMES a.tangent (the chain rule: how fast a "
    "moves, times how fast sin moves with a); the factor a.tangent is missing.")
SIN_SIGN = (
    "the derivative of sin is +cos, not -cos (that is the derivative of cos, with sin).")
SIN_NOT_COS = (
    "the tangent of sin(a) uses sin again: the derivative of sin is cos, so the tangent "
    "is cos(a.value) * a.tangent.")
EXP_NO_CHAIN = (
    "the tangent of exp(a) is exp(a.value) TIMES a.tangent (the chain rule); the factor "
    "a.tangent is missing.")
CHANGED_OPERAND = (
    "{call} changed its operand {which} in place: an operation returns a new Dual and "
    "leaves its operands as they were (the same Dual may be used again, as x is in "
    "x * x).")


def _dual_cases(rng: np.random.Generator) -> list:
    """(call, the op on Duals, value, tangent, {sentence: wrong tangent}) for each op."""
    a, b = rng.uniform(-2, 2, 4), rng.uniform(-2, 2, 4)
    ta, tb = rng.standard_normal(4), rng.standard_normal(4)
    c = 2.5
    return a, b, ta, tb, [
        ("Dual(a, ta) + Dual(b, tb)", lambda x, y: x + y, a + b, ta + tb,
         {SUM_ONE_TANGENT: ta}),
        ("Dual(a, ta) * Dual(b, tb)", lambda x, y: x * y, a * b, ta * b + a * tb,
         {PRODUCT_OF_TANGENTS: ta * tb, HALF_PRODUCT_RULE: ta * b,
          EPSILON_SQUARED_KEPT: ta * b + a * tb + ta * tb}),
        ("Dual(a, ta) * Dual(a, ta), the same Dual twice", lambda x, y: x * x, a * a,
         2 * a * ta, {PRODUCT_OF_TANGENTS: ta * ta, HALF_PRODUCT_RULE: ta * a,
                      EPSILON_SQUARED_KEPT: 2 * a * ta + ta * ta}),
        (f"Dual(a, ta) + {c}", lambda x, y: x + c, a + c, ta,
         {CONSTANT_HAS_TANGENT: ta + c, CONSTANT_TANGENT_ONE: ta + 1}),
        (f"{c} + Dual(a, ta)", lambda x, y: c + x, a + c, ta,
         {CONSTANT_HAS_TANGENT: ta + c, CONSTANT_TANGENT_ONE: ta + 1}),
        (f"Dual(a, ta) * {c}", lambda x, y: x * c, a * c, c * ta,
         {SCALED_VALUE_ONLY: ta, CONSTANT_TANGENT_ONE: c * ta + a}),
        (f"{c} * Dual(a, ta)", lambda x, y: c * x, a * c, c * ta,
         {SCALED_VALUE_ONLY: ta, CONSTANT_TANGENT_ONE: c * ta + a}),
        ("Dual(a, ta).sin()", lambda x, y: x.sin(), np.sin(a), np.cos(a) * ta,
         {SIN_NO_CHAIN: np.cos(a), SIN_SIGN: -np.cos(a) * ta, SIN_NOT_COS: np.sin(a) * ta}),
        ("Dual(a, ta).exp()", lambda x, y: x.exp(), np.exp(a), np.exp(a) * ta,
         {EXP_NO_CHAIN: np.exp(a)}),
    ]


def dual_example(x: Any, y: Any) -> Any:
    """A function written once, for Tensors and for Duals alike (+, *, sin, exp)."""
    return (x * y).sin() + x.exp() * y + 3.0 * x * x + 1.0


def _parts(dual: Any, call: str) -> tuple[np.ndarray, np.ndarray]:
    for attribute in ("value", "tangent"):
        if not hasattr(dual, attribute):
            if isinstance(dual, (int, float, np.ndarray, np.generic, tuple, list)):
                raise CheckFailed(NOT_A_DUAL.format(call=call, got=describe(dual)))
            raise CheckFailed(NO_VALUE_OR_TANGENT.format(call=call, missing=attribute))
    return np.asarray(dual.value, dtype=np.float64), np.asarray(dual.tangent,
                                                                dtype=np.float64)


def _dual_op(Dual: Any, call: str, op: Callable, arrays: list) -> Any:
    a, ta, b, tb = (v.copy() for v in arrays)
    x, y = Dual(a, ta), Dual(b, tb)
    try:
        out = op(x, y)
    except RecursionError as error:
        if not call[0].isdigit():
            raise _student_error(error, call) from None
        symbol = "+" if "+" in call else "*"
        forward, reflected = ("__add__", "__radd__") if symbol == "+" \
            else ("__mul__", "__rmul__")
        raise CheckFailed(REFLECTED_RECURSION.format(call=call, op=symbol, forward=forward,
                                                     reflected=reflected)) from None
    except TypeError as error:
        text = str(error)
        if "unsupported operand" in text and call[0].isdigit():
            symbol = "+" if "+" in call else "*"
            forward, reflected = ("__add__", "__radd__") if symbol == "+" \
                else ("__mul__", "__rmul__")
            raise CheckFailed(NO_REFLECTED.format(call=call, op=symbol, forward=forward,
                                                  reflected=reflected)) from None
        if any(ch.isdigit() for ch in call):
            raise CheckFailed(NUMBER_NOT_HANDLED.format(
                call=call, error=f"TypeError: {text}")) from None
        raise _student_error(error, call) from None
    except AttributeError as error:
        if any(ch.isdigit() for ch in call) and "float" in str(error):
            raise CheckFailed(NUMBER_NOT_HANDLED.format(
                call=call, error=f"AttributeError: {error}")) from None
        raise _student_error(error, call) from None
    except Exception as error:  # noqa: BLE001 - the student's code: report, don't crash
        raise _student_error(error, call) from None
    for name, before, now in (("a", arrays[0], x), ("b", arrays[2], y)):
        value = np.asarray(getattr(now, "value", before), dtype=np.float64)
        if value.shape == before.shape and not np.array_equal(value, before):
            raise CheckFailed(CHANGED_OPERAND.format(call=call, which=name))
    return out


@checker
def check_dual(Dual: Any, *, seed: int = 0) -> None:
    """``Dual(value, tangent)`` (NumPy arrays): each operation's value and tangent, then
    ``dual_example`` on Duals against ``mg.func.jvp`` of the same function on Tensors.

    Grading note: the check constructs the student's class and does arithmetic on its
    instances (``+``, ``*`` with numbers on either side, ``.sin()``, ``.exp()``): each
    operation runs in the student's process (course/judge.py's ``ARITHMETIC``), and the
    values and tangents that come back are compared with the check's own numbers."""
    name = _name(Dual)
    rng = np.random.default_rng(seed)
    a, b, ta, tb, cases = _dual_cases(rng)
    try:
        made = Dual(a.copy(), ta.copy())
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, f"{name}(value, tangent)") from None
    value, tangent = _parts(made, f"{name}(value, tangent)")
    compare(value, a, f"{name}(a, ta).value")
    compare(tangent, ta, f"{name}(a, ta).tangent")
    for call, op, right_value, right_tangent, mistakes in cases:
        out = _dual_op(Dual, call, op, [a, ta, b, tb])
        got_value, got_tangent = _parts(out, call)
        compare(got_value, right_value, f"{call}: the value")
        compare(got_tangent, right_tangent, f"{call}: the tangent",
                variants=[Variant(s, w) for s, w in mistakes.items()])
    # a function written once: forward mode by hand against mg.func.jvp
    x, y = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5)
    vx, vy = rng.standard_normal(5), rng.standard_normal(5)
    call = "f(Dual(x, vx), Dual(y, vy)), f(x, y) = sin(x*y) + exp(x)*y + 3*x*x + 1"
    try:
        out = dual_example(Dual(x.copy(), vx.copy()), Dual(y.copy(), vy.copy()))
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, call) from None
    got_value, got_tangent = _parts(out, call)
    with enable_grad():
        value, tangent = jvp(dual_example, (Tensor(x), Tensor(y)), (Tensor(vx), Tensor(vy)))
    compare(got_value, value.detach().numpy(), f"{call}: the value")
    compare(got_tangent, tangent.detach().numpy(),
            f"{call}: the tangent (mg.func.jvp's directional derivative)")
    print(f"{name}: each operation carries its tangent (sum, product, numbers on either "
          "side, sin, exp), and f's tangent is mg.func.jvp's directional derivative.")


# --- exercise 2: a Function differentiable twice ---------------------------------------

ARRAY_CONTRACT = (
    "{name} is an mg.Function: its backward computes with NumPy arrays, which have no "
    "history, so a second derivative through it is impossible (section 3 shows the "
    "error). Write it as an mg.autograd.Function, whose forward and backward receive "
    "and return Tensors.")
RETURNED_ARRAYS = (
    "backward returned NumPy arrays (.numpy() somewhere): the first derivative is right, "
    "but it was computed outside the graph, so create_graph=True has nothing to record "
    "and cannot differentiate it again. The engine says: {error}. Compute backward with "
    "Tensor operations on ctx.saved_tensors and grad_output (*, /, ...), never .numpy().")
ONCE_DIFFERENTIABLE = (
    "backward is marked @once_differentiable, which tells the engine it cannot be "
    "differentiated again. Remove the mark: a backward made of Tensor operations can be.")
NO_HISTORY = (
    "the gradients backward returned have no history at all (requires_grad is False "
    "under create_graph=True): they were computed outside the graph (with .numpy(), "
    "then mg.tensor(...), or from detached values). Compute them with Tensor operations "
    "on grad_output and ctx.saved_tensors, so the engine can record them.")
INPUTS_DETACHED = (
    "the second derivatives with respect to x and y are 0: backward used x, y and r as "
    "constants (detached, .numpy() then mg.tensor(...), or copies). The derivative of "
    "grad_output * x / r with respect to x needs x and r as the graph's Tensors: save "
    "them with ctx.save_for_backward(x, y, r) and use ctx.saved_tensors as they are.")
OUTPUT_DETACHED = (
    "the second derivatives miss how r changes: r = hypot(x, y) was used as a constant "
    "in backward (kept as a ctx attribute such as ctx.r = r, detached, or remade with "
    "mg.tensor(...)). Save the output with ctx.save_for_backward(x, y, r): the engine then "
    "hands backward the graph's own r, whose history leads back to x and y.")


def _hypot_twice(detach_inputs: bool = False, detach_output: bool = False) -> type:
    """The reference (both flags False), or one of its classic mistakes, for naming."""

    class Hypot(TensorFunction):
        @staticmethod
        def forward(ctx, x, y):
            r = (x * x + y * y).sqrt()
            ctx.save_for_backward(x, y, r)
            return r

        @staticmethod
        def backward(ctx, grad_output):
            x, y, r = ctx.saved_tensors
            if detach_inputs:
                x, y = x.detach(), y.detach()
            if detach_output:
                r = r.detach()
            return grad_output * x / r, grad_output * y / r

    return Hypot


def _second_derivatives(apply: Callable, x: np.ndarray, y: np.ndarray, v: np.ndarray,
                        w: tuple[np.ndarray, np.ndarray]) -> tuple:
    """(first derivatives gx, gy; the gradient of sum(gx * wx + gy * wy) with respect to
    x, y and the upstream gradient v), through ``apply`` with create_graph=True."""
    tx, ty = Tensor(x.copy(), requires_grad=True), Tensor(y.copy(), requires_grad=True)
    tv = Tensor(v.copy(), requires_grad=True)
    with enable_grad():
        r = apply(tx, ty)
        gx, gy = grad(r, (tx, ty), grad_outputs=tv, create_graph=True)
        if not (gx.requires_grad or gy.requires_grad):
            return gx, gy, None
        total = (gx * Tensor(w[0])).sum() + (gy * Tensor(w[1])).sum()
        second = grad(total, (tx, ty, tv), allow_unused=True, materialize_grads=True)
    return gx, gy, [s.numpy() for s in second]


@checker
def check_double_backward(function: Any, *, seed: int = 0) -> None:
    """``function``: ``MyHypot``, r = sqrt(x^2 + y^2) as an ``mg.autograd.Function``.
    The values, the first derivatives for a random upstream gradient, then, with
    ``create_graph=True``, the second derivatives with respect to x, y and the upstream
    gradient (each classic way of stepping out of the graph named), and last PyTorch's
    own two checks, ``gradcheck`` and ``gradgradcheck``, in float64.

    Grading note: ``apply`` of the student's class is called under
    ``mg.autograd.grad(..., create_graph=True)`` and the gradients it returns are
    differentiated again (``grad`` of their weighted sum, and ``gradgradcheck``): the
    judge's ``GraphCall`` then runs the student's backward recorded (create_graph) in the
    student's process, and its gradients are themselves one differentiable op of the
    judge's graph (``StudentGraph``), whose backward runs there too."""
    name = _name(function)
    if isinstance(function, type) and issubclass(function, Function) \
            and not issubclass(function, TensorFunction):
        raise CheckFailed(ARRAY_CONTRACT.format(name=name))
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(-2.0, -0.5, (3, 4))
    v = rng.standard_normal((3, 4))
    w = (rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))
    call = f"{name}.apply(x, y), x and y of shape (3, 4)"
    r = np.hypot(x, y)
    tx, ty = Tensor(x.copy(), requires_grad=True), Tensor(y.copy(), requires_grad=True)
    try:
        with enable_grad():
            out = function.apply(tx, ty)
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, call) from None
    compare(out, r, f"{call}: the value")
    try:
        with enable_grad():
            (out * Tensor(v)).sum().backward()
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, f"{call}, then backward") from None
    for index, (leaf, right) in enumerate(((tx, v * x / r), (ty, v * y / r))):
        variants = [Variant(s, wrong(x, y, v)[index]) for s, wrong in HYPOT_MISTAKES.items()]
        variants.append(Variant(IGNORES_GRAD_OUTPUT, (x, y)[index] / r))
        compare(leaf.grad, right, f"{call}, then backward: the gradient of "
                f"{'xy'[index]} (upstream gradient v random)", variants=variants)
    # the second derivatives
    call = (f"mg.autograd.grad({name}.apply(x, y), (x, y), grad_outputs=v, "
            "create_graph=True)")
    try:
        gx, gy, second = _second_derivatives(function.apply, x, y, v, w)
    except NotTwiceDifferentiableError as error:
        text = str(error)
        if "once_differentiable" in text:
            raise CheckFailed(f"{call}: {ONCE_DIFFERENTIABLE}") from None
        if "NumPy array" in text:
            raise CheckFailed(f"{call}: " + RETURNED_ARRAYS.format(
                error=text.split(": ", 1)[-1])) from None
        if "mg.Function" in text:
            raise CheckFailed(ARRAY_CONTRACT.format(name=name)) from None
        raise _student_error(error, call) from None
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, call) from None
    if second is None:
        raise CheckFailed(f"{call}: {NO_HISTORY}")
    expected = _second_derivatives(_hypot_twice().apply, x, y, v, w)[2]
    names = ("x", "y", "v (the upstream gradient)")
    if all(np.allclose(g, e, atol=1e-6) for g, e in zip(second, expected)):
        pass
    else:
        for sentence, flags in ((INPUTS_DETACHED, (True, True)),
                                (INPUTS_DETACHED, (True, False)),
                                (OUTPUT_DETACHED, (False, True))):
            wrong = _second_derivatives(_hypot_twice(*flags).apply, x, y, v, w)[2]
            if all(np.allclose(g, e, atol=1e-6) for g, e in zip(second, wrong)):
                raise CheckFailed(f"{call}, then grad of sum(gx * wx + gy * wy): "
                                  f"{sentence}")
        for got, right, what in zip(second, expected, names):
            compare(got, right, f"{call}, then grad of sum(gx * wx + gy * wy) with "
                    f"respect to {what}")
    # PyTorch's own two checks, as the chapter runs them
    inputs = (Tensor(x.copy(), requires_grad=True), Tensor(y.copy(), requires_grad=True))
    for check in (gradcheck, gradgradcheck):
        try:
            check(function.apply, inputs)
        except GradcheckError as error:
            raise CheckFailed(f"mg.autograd.{check.__name__}({name}.apply, (x, y)): "
                              f"{error}") from None
    print(f"{name}: right values, first derivatives and second derivatives (with respect "
          "to x, y and the upstream gradient); gradcheck and gradgradcheck pass.")


# --- exercise 3: a Hessian-vector product ----------------------------------------------

NO_CREATE_GRAPH = (
    "{call} raised {error}. The first gradient g was taken without create_graph=True, "
    "so it is a plain result with no history, and differentiating g . v again finds "
    "nothing to differentiate. Take g with mg.autograd.grad(f(x), x, create_graph=True).")
NOT_REDUCED = (
    "{call} raised {error}: the second gradient must start from one number. Reduce "
    "g * v to the dot product (g * v).sum() first (or pass grad_outputs=v).")
FORMED_HESSIAN = (
    "for x of {n} elements your hvp ran f's backward {count} times: it formed the "
    "Hessian (one backward pass per row) and multiplied it by v. The point of a "
    "Hessian-vector product is to need no Hessian: two passes, g = grad(f(x), x, "
    "create_graph=True), then grad((g * v).sum(), x), whatever the size of x.")
GRADIENT_TIMES_V = (
    "that is the gradient times v, elementwise: g * v is only the function to "
    "differentiate; H v is the gradient OF (g * v).sum() with respect to x.")
ACCUMULATED = (
    "that is the gradient PLUS H v: x.grad accumulates, so after f(x).backward("
    "create_graph=True) and a second backward it holds g + H v. Use mg.autograd.grad, "
    "which returns the gradients and leaves x.grad alone.")
SUM_NOT_DOT = (
    "that is (H 1) * v: the gradient of g.sum(), the sum of the Hessian's rows, times v. "
    "Differentiate the dot product (g * v).sum(), with v inside, not outside.")
USED_OWN_HVP = (
    "your hvp calls minigrad's own mg.autograd.functional.{name}: this exercise asks you "
    "to write the two passes yourself (grad with create_graph=True, the dot product with "
    "v, grad again).")
GRAD_GIVES_A_TUPLE = (
    "mg.autograd.grad returns a tuple, one gradient per input, even for a single "
    "input: unpack it, (g,) = mg.autograd.grad(...), before computing with g.")
RETURNED_TUPLE = (
    "{call} returned {got}: the tuple mg.autograd.grad returns (one gradient per input), "
    "not the gradient in it. Unpack it, (hv,) = mg.autograd.grad(...), and return hv.")
NOT_A_TENSOR = (
    "{call} returned {got}; return H v as a Tensor (the cells after the exercise call "
    ".numpy() and .norm() on it): no .numpy() at the end.")
NOT_EXACT = (
    "H v is close, but not exact: off by up to {error:.1e}, where two backward passes "
    "agree with the exact H v to about 1e-12. A finite difference of the gradient, "
    "(grad f(x + eps v) - grad f(x)) / eps, gives such an approximation. This exercise "
    "asks for the exact product: g = grad(f(x), x) with create_graph=True, then the "
    "gradient of (g * v).sum().")
F_NOT_DIFFERENTIATED = (
    "H v has the right numbers, but no backward pass went through f: they were not "
    "computed by differentiating f (a formula for this f's Hessian?). hvp must work for "
    "any f it is given: g = grad(f(x), x) with create_graph=True, then the gradient of "
    "(g * v).sum().")
LEFT_IN_GRAD = (
    "your hvp left a gradient in x.grad ({got}): it ran backward(), which accumulates "
    "into .grad (and, with create_graph=True, keeps the graph alive through it). Use "
    "mg.autograd.grad, which returns the gradients without touching .grad.")


class _Counted(TensorFunction):
    """The identity, counting how many times its backward runs (how many backward passes
    went through f), on the class: ``_Counted.calls``."""

    calls = 0

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad_output):
        _Counted.calls += 1
        return grad_output * 1.0


def hvp_example(x: Tensor) -> Tensor:
    """f(x) = sum(x sin x) + (sum x)^2 / 4 + sum(x_i x_{i+1}): its Hessian is full (the
    square of the sum) and has a diagonal and neighbours of its own."""
    y = _Counted.apply(x)
    return (y.sin() * y).sum() + 0.25 * y.sum() ** 2 + (y[:-1] * y[1:]).sum()


def _hessian(x: np.ndarray) -> np.ndarray:
    n = x.size
    h = np.diag(2 * np.cos(x) - x * np.sin(x)) + 0.5
    h[np.arange(n - 1), np.arange(1, n)] += 1.0
    h[np.arange(1, n), np.arange(n - 1)] += 1.0
    return h


def _gradient(x: np.ndarray) -> np.ndarray:
    neighbours = np.zeros_like(x)
    neighbours[:-1] += x[1:]
    neighbours[1:] += x[:-1]
    return np.sin(x) + x * np.cos(x) + 0.5 * x.sum() + neighbours


@contextlib.contextmanager
def _watched(module: Any, names: tuple[str, ...]) -> Iterator[list[str]]:
    """The names of ``module``'s functions called while the block runs (in this process:
    while grading, the student's code runs in another, where integrity.py's reading of
    the answer is what can tell)."""
    used: list[str] = []
    originals = {name: getattr(module, name) for name in names}

    def watching(name: str) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            used.append(name)
            return originals[name](*args, **kwargs)

        return call

    for name in names:
        setattr(module, name, watching(name))
    try:
        yield used
    finally:
        for name, original in originals.items():
            setattr(module, name, original)


@checker
def check_hvp(hvp: Callable, *, seed: int = 0) -> None:
    """``hvp(f, x, v)``: the Hessian of the scalar function ``f`` at ``x`` times ``v``,
    for ``f`` = ``hvp_example`` (a full Hessian), on x of 5 elements then of 40; right
    values, nothing left in ``x.grad``, and f's backward run a constant number of times.

    Grading note: the student's ``hvp`` is called with a function of the check's (``f``,
    which counts its backward passes) and differentiates through it twice: f is lent to
    the student's process and runs here each time it is called there (``JudgeOp``), its
    backward too, recorded here under ``create_graph=True``; so f stays the check's, and
    its counter counts here. A call of minigrad's own hvp there is found by reading the
    answer (course/integrity.py)."""
    name = _name(hvp)
    rng = np.random.default_rng(seed)
    for n in (5, 40):
        x = rng.uniform(-2, 2, n)
        v = rng.standard_normal(n)
        call = f"{name}(f, x, v), x and v of {n} elements"
        tx = Tensor(x.copy(), requires_grad=True)
        _Counted.calls = 0
        try:
            with enable_grad(), _watched(autograd_functional, ("hvp", "vhp")) as used:
                got = hvp(hvp_example, tx, Tensor(v.copy()))
        except Exception as error:  # noqa: BLE001
            text = str(error)
            said = f"{type(error).__name__} ({text.splitlines()[0] if text else ''})"
            if "does not require grad" in text or "no grad_fn" in text:
                raise CheckFailed(NO_CREATE_GRAPH.format(call=call, error=said)) from None
            if "one element" in text or "scalar" in text:
                raise CheckFailed(NOT_REDUCED.format(call=call, error=said)) from None
            failure = _student_error(error, call)
            if "'tuple' object" in text or "the list holds a tensor" in text:
                failure = CheckFailed(f"{failure}\n  {GRAD_GIVES_A_TUPLE}")
            raise failure from None
        calls = _Counted.calls
        if used:
            raise CheckFailed(f"{call}: " + USED_OWN_HVP.format(name=used[0]))
        if got is None or as_array(got) is None:
            raise CheckFailed(f"{call} returned None: return H v, a Tensor of x's shape.")
        if isinstance(got, (tuple, list)) and len(got) == 1:
            raise CheckFailed(RETURNED_TUPLE.format(call=call, got=describe(got)))
        h, g = _hessian(x), _gradient(x)
        compare(got, h @ v, f"{call}: H v", atol=1e-6, variants=[
            Variant(GRADIENT_TIMES_V, g * v), Variant(ACCUMULATED, g + h @ v),
            Variant(SUM_NOT_DOT, (h @ np.ones(n)) * v)])
        error = float(np.abs(as_array(got) - h @ v).max())
        if error > 1e-9:
            raise CheckFailed(f"{call}: " + NOT_EXACT.format(error=error))
        if not isinstance(got, Tensor):
            raise CheckFailed(NOT_A_TENSOR.format(call=call, got=describe(got)))
        if tx.grad is not None:
            raise CheckFailed(f"{call}: " + LEFT_IN_GRAD.format(got=describe(tx.grad)))
        if calls > 4:
            raise CheckFailed(f"{call}: " + FORMED_HESSIAN.format(n=n, count=calls))
        if calls == 0:
            raise CheckFailed(f"{call}: " + F_NOT_DIFFERENTIATED)
    print(f"{name}: right H v for x of 5 and of 40 elements, with two backward passes "
          "whatever the size (the Hessian never formed), and x.grad left alone.")


# --- exercise 4: a gradient penalty ----------------------------------------------------

PENALTY_NO_HISTORY = (
    "the penalty has no history (requires_grad is False), so penalty.backward() cannot "
    "reach the critic's weights: the gradient of the scores with respect to x_hat was "
    "taken without create_graph=True (or detached, or computed with .numpy()). Pass "
    "create_graph=True to mg.autograd.grad, and compute the norms with Tensor operations: "
    "the penalty is then a function of the weights, as training needs.")
X_HAT_NO_GRAD = (
    "{call} raised {error}: x_hat, the points between real and fake, must require grad "
    "to take the critic's gradient with respect to them: x_hat.requires_grad_(True) "
    "after computing it (it is a new leaf: real and fake do not require grad).")
NO_MINUS_ONE = (
    "the penalty is the mean of ||grad||^2: WGAN-GP pulls the norm towards 1, "
    "(||grad|| - 1)^2, not towards 0.")
SQUARED_NORM = (
    "||grad||^2 was used where the norm ||grad|| belongs (a sum of squares without its "
    "square root): the penalty is (||grad|| - 1)^2, with ||grad|| = sqrt(sum grad^2).")
WRONG_DIM = (
    "the norm was taken over the wrong dimension: one norm per SAMPLE, over the features "
    "(dim=1 of the (N, D) gradient), not one per feature over the batch (dim=0).")
WHOLE_NORM = (
    "one norm of the whole batch's gradient was taken: the penalty wants one norm per "
    "sample (dim=1), each pulled towards 1, then their mean.")
SUM_NOT_MEAN = (
    "the penalties of the samples were summed: take their mean (the batch's size must "
    "not change the penalty's scale).")
AT_REAL = (
    "the gradient was taken at the real samples: WGAN-GP takes it at random points "
    "BETWEEN real and fake, x_hat = epsilon * real + (1 - epsilon) * fake.")
AT_FAKE = (
    "the gradient was taken at the fake samples: WGAN-GP takes it at random points "
    "BETWEEN real and fake, x_hat = epsilon * real + (1 - epsilon) * fake.")
EPSILON_SWAPPED = (
    "epsilon and 1 - epsilon are swapped: x_hat = epsilon * real + (1 - epsilon) * fake.")
MEAN_OF_SCORES = (
    "the gradients are N times too small: they are those of scores.mean(), which divides "
    "each sample's gradient by the batch size N. Take the gradient of scores.sum(): each "
    "score depends on its own sample only, so that gives each sample its own gradient.")
ABS_NOT_SQUARE = (
    "|(||grad|| - 1)| was averaged: WGAN-GP's penalty squares it, (||grad|| - 1)^2.")
ONE_SIDED = (
    "only the norms above 1 were penalised (a one-sided penalty): WGAN-GP's penalty is "
    "two-sided, (||grad|| - 1)^2 for every sample, below 1 too.")
LEFT_IN_CRITIC = (
    "after {call}, the critic's parameters hold gradients ({which}): the penalty function "
    "ran backward(). Take the gradient with respect to x_hat with mg.autograd.grad (it "
    "touches no .grad), and return the penalty: training calls backward() on it, once.")


def _critic(seed: int) -> nn.Module:
    rng = np.random.default_rng(seed + 100)
    critic = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1)).double()
    critic.load_state_dict({k: rng.standard_normal(p.shape) * 0.7
                            for k, p in critic.state_dict().items()})
    return critic


def _score_gradients(critic: nn.Module, points: np.ndarray) -> np.ndarray:
    x = Tensor(points.copy(), requires_grad=True)
    with enable_grad():
        (found,) = grad(critic(x).sum(), x)
    return found.numpy()


def penalty_reference(critic: nn.Module, real: Tensor, fake: Tensor,
                      epsilon: Tensor) -> Tensor:
    """WGAN-GP's penalty (Gulrajani et al., 2017), for the check's reference numbers."""
    x_hat = (epsilon * real + (1 - epsilon) * fake).requires_grad_(True)
    (found,) = grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return ((found.norm(dim=1) - 1) ** 2).mean()


@checker
def check_gradient_penalty(gradient_penalty: Callable, *, seed: int = 0) -> None:
    """``gradient_penalty(critic, real, fake, epsilon)``: the mean over the batch of
    (||d critic(x_hat) / d x_hat|| - 1)^2 at x_hat = epsilon real + (1 - epsilon) fake;
    its value, then the gradients its backward gives the critic's weights (which exist
    only if the inner gradient was taken with create_graph=True).

    Grading note: the check hands the student's function a critic (a module of the
    check's) and calls ``backward()`` on the penalty it returns: a double backward
    through the critic, inside the student's process, whose gradients for the critic's
    parameters come back to the judge's copy of the critic (course/judge.py's
    ``StudentGraph``). The expected numbers come from a critic the student's code never
    saw."""
    name = _name(gradient_penalty)
    rng_state = get_rng_state()
    try:
        _check_gradient_penalty(gradient_penalty, name, seed)
    finally:
        set_rng_state(rng_state)


def _check_gradient_penalty(gradient_penalty: Callable, name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 8
    real, fake = rng.standard_normal((n, 3)), rng.standard_normal((n, 3)) + 1.0
    epsilon = rng.uniform(0, 1, (n, 1))
    critic = _critic(seed)
    call = f"{name}(critic, real, fake, epsilon), real and fake of shape ({n}, 3)"
    try:
        with enable_grad():
            penalty = gradient_penalty(critic, Tensor(real.copy()), Tensor(fake.copy()),
                                       Tensor(epsilon.copy()))
    except Exception as error:  # noqa: BLE001
        text = str(error)
        if "does not require grad" in text and "input" in text:
            said = f"{type(error).__name__} ({text.splitlines()[0]})"
            raise CheckFailed(X_HAT_NO_GRAD.format(call=call, error=said)) from None
        failure = _student_error(error, call)
        if "'tuple' object" in text:
            failure = CheckFailed(f"{failure}\n  {GRAD_GIVES_A_TUPLE}")
        raise failure from None
    held = [k for k, p in critic.named_parameters() if p.grad is not None]
    if held:
        raise CheckFailed(LEFT_IN_CRITIC.format(call=call, which=", ".join(held)))
    if not isinstance(penalty, Tensor):
        raise CheckFailed(f"{call} returned {describe(penalty)}; expected a Tensor with "
                          "one element (training calls backward() on it).")
    if penalty.numel() != 1:
        raise CheckFailed(f"{call} returned {describe(penalty)}; expected one number, the "
                          "mean over the batch.")

    def mean_penalty(grads: np.ndarray, norms_of: Callable = None) -> float:
        norms = np.sqrt((grads ** 2).sum(axis=1)) if norms_of is None else norms_of(grads)
        return float(((norms - 1) ** 2).mean())

    reference = _critic(seed)  # (the numbers from a critic of the check's own, untouched)
    at = _score_gradients(reference, epsilon * real + (1 - epsilon) * fake)
    right = mean_penalty(at)
    variants = [
        Variant(NO_MINUS_ONE, float((at ** 2).sum(axis=1).mean())),
        Variant(SQUARED_NORM, mean_penalty(at, lambda g: (g ** 2).sum(axis=1))),
        Variant(WRONG_DIM, mean_penalty(at, lambda g: np.sqrt((g ** 2).sum(axis=0)))),
        Variant(WHOLE_NORM, mean_penalty(at, lambda g: np.sqrt((g ** 2).sum()))),
        Variant(SUM_NOT_MEAN, right * n),
        Variant(AT_REAL, mean_penalty(_score_gradients(reference, real))),
        Variant(AT_FAKE, mean_penalty(_score_gradients(reference, fake))),
        Variant(EPSILON_SWAPPED, mean_penalty(
            _score_gradients(reference, (1 - epsilon) * real + epsilon * fake))),
        Variant(MEAN_OF_SCORES, mean_penalty(at / n)),
        Variant(ABS_NOT_SQUARE, float(np.abs(np.sqrt((at ** 2).sum(axis=1)) - 1).mean())),
        Variant(ONE_SIDED, float((np.maximum(np.sqrt((at ** 2).sum(axis=1)) - 1, 0) ** 2)
                                 .mean()))]
    compare(penalty.detach().numpy().reshape(()), right, f"{call}: the penalty",
            variants=variants)
    if not penalty.requires_grad:
        raise CheckFailed(f"{call}: {PENALTY_NO_HISTORY}")
    try:
        with enable_grad():
            penalty.sum().backward()
    except Exception as error:  # noqa: BLE001
        raise _student_error(error, f"{call}, then penalty.backward()") from None
    with enable_grad():
        penalty_reference(reference, Tensor(real), Tensor(fake), Tensor(epsilon)).backward()
    for (key, parameter), expected in zip(critic.named_parameters(), reference.parameters()):
        if expected.grad is None:  # the last bias: it does not change the gradient in x
            continue
        if parameter.grad is None:
            raise CheckFailed(f"{call}, then penalty.backward(): the critic's {key} got no "
                              f"gradient. {PENALTY_NO_HISTORY}")
        compare(parameter.grad, expected.grad, f"{call}, then penalty.backward(): the "
                f"gradient of the critic's {key}")
    print(f"{name}: the right penalty, and penalty.backward() gives the critic's weights "
          "their gradients (through the gradient taken with create_graph=True).")


__all__ = ["ABS_NOT_SQUARE", "ACCUMULATED", "ARRAY_CONTRACT", "AT_FAKE", "AT_REAL",
           "CHANGED_OPERAND", "CONSTANT_HAS_TANGENT", "CONSTANT_TANGENT_ONE",
           "EPSILON_SQUARED_KEPT", "EPSILON_SWAPPED", "EXP_NO_CHAIN", "F_NOT_DIFFERENTIATED",
           "FORMED_HESSIAN",
           "GRAD_GIVES_A_TUPLE", "GRADIENT_TIMES_V", "HALF_PRODUCT_RULE", "INPUTS_DETACHED",
           "LEFT_IN_CRITIC", "LEFT_IN_GRAD", "MEAN_OF_SCORES", "NO_CREATE_GRAPH",
           "NO_HISTORY", "NO_MINUS_ONE", "NO_REFLECTED", "NO_VALUE_OR_TANGENT", "NOT_A_DUAL",
           "NOT_A_TENSOR", "NOT_EXACT", "NOT_REDUCED", "NUMBER_NOT_HANDLED", "ONCE_DIFFERENTIABLE",
           "ONE_SIDED", "OUTPUT_DETACHED", "PENALTY_NO_HISTORY", "PRODUCT_OF_TANGENTS",
           "REFLECTED_RECURSION", "RETURNED_ARRAYS", "RETURNED_TUPLE", "SCALED_VALUE_ONLY",
           "SIN_NOT_COS", "SIN_NO_CHAIN", "SIN_SIGN", "SQUARED_NORM", "SUM_NOT_DOT",
           "SUM_NOT_MEAN", "SUM_ONE_TANGENT", "USED_OWN_HVP", "WHOLE_NORM", "WRONG_DIM",
           "X_HAT_NO_GRAD",
           "check_double_backward", "check_dual", "check_gradient_penalty", "check_hvp",
           "dual_example", "hvp_example", "penalty_reference"]
