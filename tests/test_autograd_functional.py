"""``mg.autograd.functional`` against ``torch.autograd.functional``: the same functions,
the same inputs, the same values and the same shapes of answer (Tensor or tuple)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.functional as F  # noqa: F401 (the import form works too)

torch = pytest.importorskip("torch")

rng = np.random.default_rng(28)
X = rng.standard_normal((3,))
Y = rng.standard_normal((2, 3))
V3 = rng.standard_normal((3,))
V23 = rng.standard_normal((2, 3))
VOUT = rng.standard_normal((2,))


def scalar_fn(lib):
    return lambda x: (x.exp() * x.sin()).sum() + (x ** 3).sum()


def two_input_scalar_fn(lib):
    return lambda x, y: ((y @ x).tanh() * (y ** 2).sum()).sum()


def vector_fn(lib):
    return lambda x, y: (y @ x).sigmoid() * x.sum()


def two_output_fn(lib):
    return lambda x, y: ((y * x).sum(1), (x ** 2).exp())


def ours(*arrays):
    return tuple(mg.tensor(a, dtype=mg.float64) for a in arrays)


def theirs(*arrays):
    return tuple(torch.tensor(a, dtype=torch.float64) for a in arrays)


def same(a, b):
    """Structures of Tensors (tuples of tuples) with the same shape and values."""
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    assert isinstance(a, mg.Tensor)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-12)


def both(name, fn, arrays, *args, **kwargs):
    """Run ``name`` on both libraries (a tuple of arrays: a tuple of inputs, or of vs)."""
    point = arrays if len(arrays) > 1 else arrays[0]
    mine = getattr(mg.autograd.functional, name)(fn(mg), _ours(point),
                                                 *[_ours(a) for a in args], **kwargs)
    reference = getattr(torch.autograd.functional, name)(fn(torch), _theirs(point),
                                                         *[_theirs(a) for a in args], **kwargs)
    same(mine, reference)
    return mine


def _ours(a):
    return ours(*a) if isinstance(a, tuple) else ours(a)[0]


def _theirs(a):
    return theirs(*a) if isinstance(a, tuple) else theirs(a)[0]


def test_vjp_of_a_vector_function_matches_pytorch():
    both("vjp", vector_fn, (X, Y), VOUT)


def test_vjp_of_a_scalar_function_with_v_omitted_matches_pytorch():
    both("vjp", scalar_fn, (X,))


def test_jvp_matches_pytorch():
    both("jvp", vector_fn, (X, Y), (V3, V23))


def test_jacobian_of_one_input_one_output_is_a_tensor_as_in_pytorch():
    result = both("jacobian", lambda lib: lambda x: x.tanh() * x.sum(), (X,))
    assert isinstance(result, mg.Tensor) and tuple(result.shape) == (3, 3)


def test_jacobian_of_two_inputs_and_two_outputs_is_a_tuple_of_tuples():
    both("jacobian", two_output_fn, (X, Y))


def test_hessian_of_one_input_matches_pytorch():
    both("hessian", scalar_fn, (X,))


def test_hessian_of_two_inputs_matches_pytorch():
    both("hessian", two_input_scalar_fn, (X, Y))


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hessian_vector_products_match_pytorch(name):
    both(name, scalar_fn, (X,), V3)
    both(name, two_input_scalar_fn, (X, Y), (V3, V23))


def test_create_graph_makes_the_results_differentiable_again():
    x = mg.tensor(X, dtype=mg.float64, requires_grad=True)
    _, product = mg.autograd.functional.hvp(scalar_fn(mg), x, mg.tensor(V3), create_graph=True)
    product.sum().backward()
    tx = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    _, tproduct = torch.autograd.functional.hvp(scalar_fn(torch), tx, torch.tensor(V3),
                                                create_graph=True)
    tproduct.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9)


def test_without_create_graph_the_results_have_no_history():
    x = mg.tensor(X, dtype=mg.float64, requires_grad=True)
    value, product = mg.autograd.functional.vhp(scalar_fn(mg), x, mg.tensor(V3))
    assert not value.requires_grad and not product.requires_grad


def test_strict_names_an_input_the_outputs_do_not_use():
    def fn(x, y):
        return (x * 2).sum()

    with pytest.raises(RuntimeError, match="input 1"):
        mg.autograd.functional.vjp(fn, ours(X, Y), strict=True)
    _, (gx, gy) = mg.autograd.functional.vjp(fn, ours(X, Y))
    assert gy.tolist() == np.zeros((2, 3)).tolist()
