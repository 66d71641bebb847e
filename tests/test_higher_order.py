"""Gradients of gradients (issue 28): ``create_graph=True``, ``gradgradcheck`` over the op
table, double backward of both Function contracts, and the clear error for a backward
that cannot be differentiated."""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest
from all_cases import CASES

import minigrad as mg
import minigrad.ops
from minigrad.function import Function
from minigrad.higher_order import NotTwiceDifferentiableError

# --- the op table: every differentiable op passes gradgradcheck, or is listed here ----------

# Built-in Functions whose backward is not recorded yet: create_graph=True through them
# raises NotTwiceDifferentiableError naming them. This list only shrinks: an op leaves it
# by declaring ``twice_differentiable = True`` and passing gradgradcheck below.
NOT_YET_TWICE_DIFFERENTIABLE: set[str] = set()  # (empty: every op is)


def differentiable_functions() -> dict[str, type]:
    found = {}
    for module in pkgutil.walk_packages(minigrad.ops.__path__, "minigrad.ops."):
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, type) and issubclass(value, Function) \
                    and value.__module__ == module.name and value.differentiable \
                    and "forward" in value.__dict__:
                found[value.__name__] = value
    return found


def functions_in_graph(result) -> set[str]:
    outputs = list(result) if isinstance(result, tuple) else [result]
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(parent for parent, _ in node.next_functions if parent is not None)
    return {node.function.__name__ for node in seen}


DIFFERENTIABLE = [case for case in CASES if case.differentiable]


def test_the_not_yet_list_is_exactly_the_ops_without_a_recorded_backward():
    functions = differentiable_functions()
    assert NOT_YET_TWICE_DIFFERENTIABLE <= set(functions)
    missing = {name for name, cls in functions.items() if not cls.twice_differentiable}
    assert missing == NOT_YET_TWICE_DIFFERENTIABLE


@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=lambda case: case.id)
def test_second_derivatives_match_finite_differences_in_float64(case):
    inputs = [mg.tensor(a, requires_grad=True) for a in case.make_inputs(np.float64)]
    blocked = functions_in_graph(case.fn(*inputs)) & NOT_YET_TWICE_DIFFERENTIABLE
    if blocked:  # the clear error, naming one of them, never a wrong second derivative
        with pytest.raises(NotTwiceDifferentiableError, match="|".join(sorted(blocked))):
            mg.autograd.gradgradcheck(case.fn, inputs, eps=case.gradcheck_eps, atol=1e-4)
        return
    assert mg.autograd.gradgradcheck(case.fn, inputs, eps=case.gradcheck_eps, atol=1e-4)


# --- the engine -------------------------------------------------------------------------------


def leaf(*values):
    return mg.tensor(list(values), dtype=mg.float64, requires_grad=True)


def test_create_graph_gives_gradients_with_history_to_any_order():
    x = leaf(0.5, 1.5)
    y = (x ** 4).sum()
    (first,) = mg.autograd.grad(y, x, create_graph=True)
    (second,) = mg.autograd.grad(first.sum(), x, create_graph=True)
    (third,) = mg.autograd.grad(second.sum(), x)
    np.testing.assert_allclose(first.numpy(), 4 * x.numpy() ** 3)
    np.testing.assert_allclose(second.numpy(), 12 * x.numpy() ** 2)
    np.testing.assert_allclose(third.numpy(), 24 * x.numpy())
    assert not third.requires_grad


def test_backward_with_create_graph_leaves_a_grad_with_history():
    x = leaf(1.0, 2.0)
    (x.exp() * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (hessian_diagonal,) = mg.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(hessian_diagonal.numpy(), np.exp(x.numpy()) * (x.numpy() + 2))


def test_create_graph_retains_the_graph_by_default_as_in_pytorch():
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    mg.autograd.grad(y, x, create_graph=True)
    (again,) = mg.autograd.grad(y, x)  # the graph is still there
    np.testing.assert_allclose(again.numpy(), [2.0, 4.0])


def test_without_create_graph_gradients_have_no_history():
    x = leaf(1.0, 2.0)
    (g,) = mg.autograd.grad((x * x).sum(), x)
    assert not g.requires_grad and g.grad_fn is None


def test_create_graph_records_even_inside_no_grad_as_pytorch_does():
    x = leaf(1.0, 2.0)
    y = (x * x * x).sum()
    with mg.no_grad():
        (g,) = mg.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad


def test_grad_outputs_with_history_are_differentiated_too():
    x = leaf(1.0, 2.0)
    v = leaf(3.0, 4.0)
    (g,) = mg.autograd.grad(x * x, x, grad_outputs=v, create_graph=True)  # 2 x v
    (dv,) = mg.autograd.grad(g.sum(), v)
    np.testing.assert_allclose(dv.numpy(), 2 * x.numpy())


def test_second_derivatives_match_pytorch_through_broadcasting_and_matmul():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w_np, x_np, b_np = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), \
        rng.standard_normal(3)

    def run(lib, w, x, b):
        y = (x @ w.T + b).tanh()
        loss = (y * y).sum() + (w ** 2).mean()
        (gw,) = lib.autograd.grad(loss, w, create_graph=True)
        (gw * gw).sum().backward()
        return gw.detach().numpy(), w.grad.numpy(), b.grad.numpy()

    ours = run(mg, *(mg.tensor(a, requires_grad=True) for a in (w_np, x_np, b_np)))
    theirs = run(torch, *(torch.tensor(a, requires_grad=True) for a in (w_np, x_np, b_np)))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# --- the two Function contracts -------------------------------------------------------------


class Cube(mg.autograd.Function):
    """PyTorch's "double backward with custom functions" tutorial: backward in Tensor ops."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x ** 2


def test_a_tensor_contract_function_is_twice_differentiable():
    x = leaf(0.5, -1.5)
    assert mg.autograd.gradgradcheck(Cube.apply, [x])
    (g,) = mg.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * x.numpy())


def test_a_once_differentiable_backward_refuses_create_graph_by_name():
    class Opaque(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @mg.autograd.once_differentiable
        def backward(ctx, grad_output):
            return grad_output * 2

    x = leaf(1.0)
    with pytest.raises(NotTwiceDifferentiableError, match="Opaque.*once_differentiable"):
        mg.autograd.grad(Opaque.apply(x).sum(), x, create_graph=True)
    (g,) = mg.autograd.grad(Opaque.apply(x).sum(), x)  # first order still works
    assert g.tolist() == [2.0]


class NumPySquare(mg.Function):
    """An array-contract Function whose NumPy backward also runs on Tensors."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * grad_output * x


def test_an_array_contract_function_refuses_create_graph_unless_declared():
    x = leaf(1.0, 3.0)
    with pytest.raises(NotTwiceDifferentiableError, match="NumPySquare.*twice_differentiable"):
        mg.autograd.grad(NumPySquare.apply(x).sum(), x, create_graph=True)

    class Declared(NumPySquare):
        twice_differentiable = True

    assert mg.autograd.gradgradcheck(Declared.apply, [x])


def test_a_declared_backward_that_leaves_the_graph_is_refused_by_name():
    class Leaky(mg.Function):
        twice_differentiable = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * np.asarray(grad_output.detach()) * x.detach().numpy()

    x = leaf(1.0, 3.0)
    with pytest.raises(NotTwiceDifferentiableError, match="Leaky.*NumPy array"):
        mg.autograd.grad(Leaky.apply(x).sum(), x, grad_outputs=None, create_graph=True)


@pytest.mark.parametrize("order", ["C", "F"])
def test_gradcheck_and_gradgradcheck_perturb_an_input_of_any_memory_order(order):
    # a Fortran-ordered leaf (mg.tensor(a.T)): a reshape(-1) of it is a copy, and
    # perturbing that copy gave a numerical gradient of 0 (a false failure)
    values = np.asarray(np.random.default_rng(0).random((3, 2)), order=order)
    x = mg.tensor(values, requires_grad=True)
    assert x.numpy().flags[f"{order}_CONTIGUOUS"]
    assert mg.gradcheck(lambda x: (x * x * x).sum(), (x,))
    assert mg.autograd.gradgradcheck(lambda x: (x * x * x).sum(), (x,))
    with pytest.raises(mg.GradcheckError):  # and a wrong gradient is still caught
        mg.gradcheck(lambda x: WrongSquare.apply(x).sum(), (x,))


class WrongSquare(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x  # (2x is right)
