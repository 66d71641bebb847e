"""Every op, driven by the table in tests/op_cases.py: values against NumPy, gradients
against PyTorch and against finite differences, dtypes, and a check that no
differentiable Function in minigrad.ops is left without a case."""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest
from all_cases import CASES

import minigrad as mg
import minigrad.ops

DIFFERENTIABLE = [case for case in CASES if case.differentiable]

each_case = pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
each_differentiable_case = pytest.mark.parametrize("case", DIFFERENTIABLE,
                                                   ids=lambda case: case.id)


def outputs_of(result) -> list:
    """A result as a list of outputs: one tensor, or a tuple like ``(values, indices)``."""
    return list(result) if isinstance(result, tuple) else [result]


def float_outputs(result) -> list[mg.Tensor]:
    return [output for output in outputs_of(result) if output.dtype.kind == "f"]


def run(case, dtype=np.float32, requires_grad=True):
    """The case's inputs as minigrad tensors, and its result on them."""
    inputs = [mg.tensor(a, requires_grad=requires_grad) for a in case.make_inputs(dtype)]
    return inputs, case.fn(*inputs)


def backward_with_upstream_gradients(case, outputs) -> list[np.ndarray]:
    gradients = case.upstream_gradients([output.shape for output in outputs])
    for output, gradient in zip(outputs, gradients):
        output.backward(gradient.astype(output.dtype), retain_graph=True)
    return gradients


# --- the table itself ----------------------------------------------------------------------


def test_case_ids_are_unique():
    ids = [case.id for case in CASES]
    assert sorted({i for i in ids if ids.count(i) > 1}) == []


# --- values --------------------------------------------------------------------------------


@pytest.mark.parametrize("requires_grad", [False, True], ids=["untracked", "recorded"])
@each_case
def test_values_match_numpy(case, requires_grad):
    _, result = run(case, np.float32, requires_grad)
    expected = outputs_of(case.reference(*(a.astype(np.float64) for a in case.make_inputs())))
    outputs = outputs_of(result)
    assert len(outputs) == len(expected)
    for index, (output, want) in enumerate(zip(outputs, expected)):
        want = np.asarray(want)
        assert output.shape == want.shape, f"output {index}"
        np.testing.assert_allclose(output.numpy(), want, rtol=case.rtol, atol=case.atol,
                                   err_msg=f"output {index}")


# --- gradients -----------------------------------------------------------------------------


@each_differentiable_case
def test_gradients_match_pytorch(case, torch):
    arrays = case.make_inputs(np.float32)
    inputs = [mg.tensor(a, requires_grad=True) for a in arrays]
    torch_inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    outputs = float_outputs(case.fn(*inputs))
    torch_outputs = [o for o in outputs_of(case.run_torch(*torch_inputs))
                     if o.is_floating_point()]
    assert len(outputs) == len(torch_outputs)
    for output, torch_output in zip(outputs, torch_outputs):  # the twin is the same function
        np.testing.assert_allclose(output.numpy(), torch_output.detach().numpy(),
                                   rtol=case.rtol, atol=case.atol)

    gradients = backward_with_upstream_gradients(case, outputs)
    torch.autograd.backward(torch_outputs, [torch.tensor(g, dtype=o.dtype)
                                            for g, o in zip(gradients, torch_outputs)])

    for index, (x, torch_x) in enumerate(zip(inputs, torch_inputs)):
        assert x.grad is not None, f"input {index} got no gradient"
        np.testing.assert_allclose(x.grad.numpy(), torch_x.grad.numpy(), rtol=case.rtol,
                                   atol=case.atol, err_msg=f"gradient of input {index}")


@each_differentiable_case
def test_gradients_match_finite_differences_in_float64(case):
    inputs = [mg.tensor(a, requires_grad=True) for a in case.make_inputs(np.float64)]
    assert all(x.dtype == np.float64 for x in inputs)
    assert mg.gradcheck(case.fn, inputs, eps=case.gradcheck_eps)


# --- dtypes: float32 stays float32 ------------------------------------------------------------


@each_case
def test_outputs_have_the_expected_dtype_for_float32_inputs(case):
    _, result = run(case, np.float32)
    assert tuple(str(output.dtype) for output in outputs_of(result)) == case.dtypes


@each_differentiable_case
def test_gradients_of_float32_inputs_are_float32(case):
    inputs, result = run(case, np.float32)
    backward_with_upstream_gradients(case, float_outputs(result))
    assert [x.grad.dtype for x in inputs] == [np.float32] * len(inputs)


# --- coverage: a new Function without a case fails the suite ------------------------------------


def differentiable_functions() -> set[type]:
    """Every differentiable Function subclass defined in a module under minigrad.ops
    (leaving out abstract bases like ``_Reduction``, which have no forward of their own)."""
    for module in pkgutil.walk_packages(minigrad.ops.__path__, "minigrad.ops."):
        importlib.import_module(module.name)
    found, stack = set(), list(mg.Function.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("minigrad.ops.") and cls.differentiable \
                and cls.forward is not mg.Function.forward:
            found.add(cls)
    return found


def functions_in_graph(result) -> set[type]:
    """The Function of every node in the graph that made ``result``."""
    stack = [output.grad_fn for output in outputs_of(result) if output.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(parent for parent, _ in node.next_functions if parent is not None)
    return {node.function for node in seen}


def names(functions) -> list[str]:
    return sorted(f.__name__ for f in functions)


def test_the_function_finder_sees_the_ops():
    found = differentiable_functions()
    assert {mg.ops.Add, mg.ops.MatMul, mg.ops.Min, mg.ops.GetItem} <= found
    assert not {mg.ops.Compare, mg.ops.ArgMax} & found  # not differentiable


def test_every_differentiable_function_has_a_case():
    exercised = set().union(*(functions_in_graph(run(case)[1]) for case in CASES))
    missing = differentiable_functions() - exercised
    assert not missing, f"no case in tests/op_cases.py uses {names(missing)}; add one"


def test_every_differentiable_function_is_gradchecked():
    # the graphs that test_gradients_match_finite_differences_in_float64 checks
    checked = set().union(*(functions_in_graph(run(case, np.float64)[1])
                            for case in DIFFERENTIABLE))
    # (leaving out the ops whose backward raises, as PyTorch's does: ``no_derivative``)
    missing = {function for function in differentiable_functions()
               if not getattr(function, "no_derivative", False)} - checked
    assert not missing, f"no differentiable case gradchecks {names(missing)}; add one"


# --- ties: documented behaviour that differs from PyTorch's max(dim) ---------------------------


@pytest.mark.parametrize("op, wins", [("maximum", np.greater), ("minimum", np.less)])
def test_maximum_and_minimum_split_the_gradient_evenly_where_the_inputs_tie(op, wins):
    x = np.array([1.0, 2.0, 3.0, -1.0, 0.5], dtype=np.float32)
    y = np.array([2.0, 2.0, 1.0, -1.0, 0.5], dtype=np.float32)
    upstream = np.random.default_rng(0).standard_normal(5).astype(np.float32)
    a, b = mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)
    getattr(a, op)(b).backward(upstream)
    share_of_x = np.where(wins(x, y), 1.0, np.where(x == y, 0.5, 0.0))
    np.testing.assert_allclose(a.grad.numpy(), upstream * share_of_x)
    np.testing.assert_allclose(b.grad.numpy(), upstream * (1 - share_of_x))


@pytest.mark.parametrize("op, extreme", [("max", np.max), ("min", np.min)])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_max_and_min_split_the_gradient_evenly_between_tied_elements(op, extreme, dim):
    # a tie for the maximum and the minimum, overall and in some row and some column
    x = np.array([[3.0, 3.0, 0.0], [0.0, 1.0, 0.0], [3.0, 0.0, 2.0]], dtype=np.float32)
    t = mg.tensor(x, requires_grad=True)
    result = getattr(t, op)() if dim is None else getattr(t, op)(dim).values
    upstream = np.random.default_rng(0).standard_normal(result.shape).astype(np.float32)
    result.backward(upstream)
    winners = x == extreme(x, axis=dim, keepdims=True)
    share = winners / winners.sum(axis=dim, keepdims=True)
    reduced_upstream = upstream if dim is None else np.expand_dims(upstream, dim)
    np.testing.assert_allclose(t.grad.numpy(), reduced_upstream * share, rtol=1e-6)
