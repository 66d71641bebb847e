"""``mg.func`` against ``torch.func``: the same transforms of the same functions give the
same numbers, in the same form (Tensor, tuple, dict), and compose as PyTorch's do."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.func as func  # the import form works (import torch.func)
from minigrad import nn

torch = pytest.importorskip("torch")
import torch.func as tfunc  # noqa: E402

rng = np.random.default_rng(28)
X = rng.standard_normal((3,))
Y = rng.standard_normal((2, 3))
V3 = rng.standard_normal((3,))
V2 = rng.standard_normal((2,))
XS = rng.standard_normal((5, 3))
YS = rng.standard_normal((5,))


def ours(*arrays):
    return tuple(mg.tensor(a, dtype=mg.float64) for a in arrays)


def theirs(*arrays):
    return tuple(torch.tensor(a, dtype=torch.float64) for a in arrays)


def same(a, b, atol=1e-10):
    """Nests of Tensors (tuples, dicts) of the same form, shapes and values."""
    if isinstance(b, (tuple, list)):
        assert isinstance(a, type(b)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y, atol)
    elif isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b)
        for key in b:
            same(a[key], b[key], atol)
    else:
        assert isinstance(a, mg.Tensor), type(a)
        assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), atol=atol, rtol=1e-9)


def scalar(x):
    return (x.exp() * x.sin()).sum() + (x ** 3).sum()


def two_inputs(x, y):
    return ((y @ x).tanh() * (y ** 2).sum()).sum()


def vector(x, y):
    return (y @ x).sigmoid() * x.sum()


def two_outputs(x, y):
    return (y * x).sum(1), (x ** 2).exp()


# --- the import forms ------------------------------------------------------------------------


def test_func_is_a_module_of_minigrad_and_vmap_is_at_the_top_as_in_torch():
    assert mg.func is func
    assert mg.vmap is func.vmap
    assert set(func.__all__) >= {"grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
                                 "hessian", "functional_call", "vmap"}


# --- grad ------------------------------------------------------------------------------------


def test_grad_matches_torch():
    same(func.grad(scalar)(*ours(X)), tfunc.grad(scalar)(*theirs(X)))


def test_grad_of_a_plain_call_has_no_history():
    assert not func.grad(scalar)(*ours(X)).requires_grad


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,), -1])
def test_grad_argnums_matches_torch(argnums):
    same(func.grad(two_inputs, argnums=argnums)(*ours(X, Y)),
         tfunc.grad(two_inputs, argnums=argnums)(*theirs(X, Y)))


def test_grad_and_value_and_has_aux_match_torch():
    def with_aux(lib):
        return lambda x, y: (two_inputs(x, y), {"norm": (x * x).sum()})

    same(func.grad_and_value(two_inputs)(*ours(X, Y)),
         tfunc.grad_and_value(two_inputs)(*theirs(X, Y)))
    same(func.grad(with_aux(mg), has_aux=True)(*ours(X, Y)),
         tfunc.grad(with_aux(torch), has_aux=True)(*theirs(X, Y)))
    same(func.grad_and_value(with_aux(mg), argnums=(0, 1), has_aux=True)(*ours(X, Y)),
         tfunc.grad_and_value(with_aux(torch), argnums=(0, 1), has_aux=True)(*theirs(X, Y)))


def test_grad_with_respect_to_a_dict_of_tensors_gives_a_dict():
    def loss(params, x):
        return (x @ params["w"] + params["b"]).tanh().sum()

    w, b = rng.standard_normal((3,)), rng.standard_normal(())
    same(func.grad(loss)({"w": ours(w)[0], "b": ours(b)[0]}, *ours(Y)),
         tfunc.grad(loss)({"w": theirs(w)[0], "b": theirs(b)[0]}, *theirs(Y)))


def test_grad_of_grad_is_the_second_derivative():
    def cubic_sum(x):
        return (x.sin() * x ** 3).sum()

    def gradient_sum(x, grad):
        return grad(cubic_sum)(x).sum()

    same(func.grad(lambda x: gradient_sum(x, func.grad))(*ours(X)),
         tfunc.grad(lambda x: gradient_sum(x, tfunc.grad))(*theirs(X)))
    point = (mg.tensor(0.7, dtype=mg.float64),)
    third = func.grad(func.grad(func.grad(lambda x: x.sin() * x.exp())))(*point)
    expected = tfunc.grad(tfunc.grad(tfunc.grad(lambda x: x.sin() * x.exp())))(
        torch.tensor(0.7, dtype=torch.float64))
    same(third, expected)


def test_grad_keeps_history_for_an_outer_backward():
    """Tensors that require grad outside the transform (a model's parameters): the
    gradient is differentiable again, as PyTorch's is."""
    x_ours = mg.tensor(X, dtype=mg.float64, requires_grad=True)
    x_theirs = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    g_ours, g_theirs = func.grad(scalar)(x_ours), tfunc.grad(scalar)(x_theirs)
    assert g_ours.requires_grad and g_theirs.requires_grad
    (g_ours ** 2).sum().backward()
    (g_theirs ** 2).sum().backward()
    same(x_ours.grad, x_theirs.grad)


def test_grad_works_under_no_grad_and_gives_no_history_there():
    x = mg.tensor(X, dtype=mg.float64, requires_grad=True)
    with mg.no_grad():
        gradient = func.grad(scalar)(x)
    with torch.no_grad():
        expected = tfunc.grad(scalar)(*theirs(X))
    same(gradient, expected)
    assert not gradient.requires_grad


def test_grad_says_which_function_returned_a_non_scalar():
    with pytest.raises(RuntimeError, match=r"grad\(vector\): expected f to return a 0-dim "
                                           r"Tensor .*got shape \(2,\).*jacrev"):
        func.grad(vector)(*ours(X, Y))


def test_has_aux_says_what_f_must_return():
    with pytest.raises(RuntimeError, match=r"grad\(scalar\): with has_aux=True, f must "
                                           r"return a pair \(output, aux\), got a Tensor"):
        func.grad(scalar, has_aux=True)(*ours(X))


def test_grad_says_when_argnums_is_out_of_range():
    with pytest.raises(RuntimeError, match=r"grad\(two_inputs\): argnums=2 is out of range"
                                           r".*2 positional argument"):
        func.grad(two_inputs, argnums=2)(*ours(X, Y))
    with pytest.raises(TypeError, match="argnums must be an int"):
        func.grad(two_inputs, argnums=(0.5,))(*ours(X, Y))


def test_grad_refuses_an_integer_argument_with_its_shape():
    with pytest.raises(TypeError, match=r"floating-point.*int64.*\(3,\)"):
        func.grad(lambda x: x.sum())(mg.tensor([1, 2, 3]))


# --- vjp and jvp -----------------------------------------------------------------------------


def test_vjp_matches_torch_for_one_and_two_outputs():
    out, vjp_fn = func.vjp(vector, *ours(X, Y))
    out_t, vjp_fn_t = tfunc.vjp(vector, *theirs(X, Y))
    same(out, out_t)
    same(vjp_fn(*ours(V2)), vjp_fn_t(*theirs(V2)))
    same(vjp_fn(*ours(-V2)), vjp_fn_t(*theirs(-V2)))  # callable again
    out, vjp_fn = func.vjp(two_outputs, *ours(X, Y))
    out_t, vjp_fn_t = tfunc.vjp(two_outputs, *theirs(X, Y))
    same(out, out_t)
    same(vjp_fn(ours(V2, V3)), vjp_fn_t(theirs(V2, V3)))


def test_vjp_fn_says_when_the_cotangent_has_the_wrong_shape():
    _, vjp_fn = func.vjp(vector, *ours(X, Y))
    with pytest.raises(RuntimeError, match=r"vjp\(vector\)'s vjp_fn: the cotangents have "
                                           r"shapes \[\(3,\)\], but the outputs .*\[\(2,\)\]"):
        vjp_fn(*ours(V3))


def test_jvp_matches_torch():
    same(func.jvp(vector, ours(X, Y), ours(V3, Y * 0.5)),
         tfunc.jvp(vector, theirs(X, Y), theirs(V3, Y * 0.5)))
    same(func.jvp(two_outputs, ours(X, Y), ours(V3, Y)),
         tfunc.jvp(two_outputs, theirs(X, Y), theirs(V3, Y)))


def test_jvp_of_grad_is_a_hessian_vector_product():
    same(func.jvp(func.grad(scalar), ours(X), ours(V3)),
         tfunc.jvp(tfunc.grad(scalar), theirs(X), theirs(V3)))


def test_jvp_says_when_a_tangent_has_the_wrong_shape():
    with pytest.raises(RuntimeError, match=r"jvp\(vector\): the tangents have shapes "
                                           r"\[\(2,\), \(2, 3\)\], but the primals have "
                                           r"shapes \[\(3,\), \(2, 3\)\]"):
        func.jvp(vector, ours(X, Y), ours(V2, Y))
    with pytest.raises(RuntimeError, match="must be tuples"):
        func.jvp(vector, ours(X, Y)[0], ours(V3)[0])


# --- Jacobians and Hessians ------------------------------------------------------------------


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacobians_match_torch(transform, argnums):
    for f in (vector, two_outputs):
        same(getattr(func, transform)(f, argnums=argnums)(*ours(X, Y)),
             getattr(tfunc, transform)(f, argnums=argnums)(*theirs(X, Y)))


def test_jacrev_of_jacrev_matches_torch():
    same(func.jacrev(func.jacrev(vector))(*ours(X, Y)),
         tfunc.jacrev(tfunc.jacrev(vector))(*theirs(X, Y)))


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_hessian_matches_torch(argnums):
    same(func.hessian(two_inputs, argnums=argnums)(*ours(X, Y)),
         tfunc.hessian(two_inputs, argnums=argnums)(*theirs(X, Y)))


# --- vmap ------------------------------------------------------------------------------------


def test_vmap_maps_over_the_batch_and_stacks():
    def model(x, w):
        return (x * w).sum().tanh(), x.exp()

    same(func.vmap(model, in_dims=(0, None))(*ours(XS, X)),
         tfunc.vmap(model, in_dims=(0, None))(*theirs(XS, X)))
    same(func.vmap(lambda x: x * 2, in_dims=1, out_dims=1)(*ours(Y)),
         tfunc.vmap(lambda x: x * 2, in_dims=1, out_dims=1)(*theirs(Y)))


def test_vmap_of_grad_gives_per_sample_gradients():
    def loss(params, x, y):
        return ((x @ params["w"] + params["b"]).tanh() - y) ** 2

    w, b = rng.standard_normal((3,)), rng.standard_normal(())
    params_ours = {"w": ours(w)[0], "b": ours(b)[0]}
    params_theirs = {"w": theirs(w)[0], "b": theirs(b)[0]}
    per_sample = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params_ours, *ours(XS, YS))
    same(per_sample, tfunc.vmap(tfunc.grad(loss), in_dims=(None, 0, 0))(
        params_theirs, *theirs(XS, YS)))
    assert per_sample["w"].shape == (5, 3) and per_sample["b"].shape == (5,)


def add(a, b):
    return a + b


def test_vmap_says_when_the_batch_sizes_differ():
    with pytest.raises(ValueError, match=r"vmap\(add\): the mapped dimensions have different "
                                         r"sizes: argument 0 \(shape \(5, 3\)\) has 5, "
                                         r"argument 1 \(shape \(2, 3\)\) has 2"):
        func.vmap(add)(*ours(XS, Y))


def test_vmap_refuses_random_numbers_unless_asked():
    def noisy(x):
        return x + mg.randn(3, dtype=mg.float64)

    with pytest.raises(RuntimeError, match=r"vmap\(noisy\): f drew random numbers"):
        func.vmap(noisy)(*ours(XS))
    same_noise = func.vmap(noisy, randomness="same")(*ours(XS)).numpy() - XS
    assert np.allclose(same_noise, same_noise[0])
    different = func.vmap(noisy, randomness="different")(*ours(XS)).numpy() - XS
    assert not np.allclose(different, different[0])


# --- functional_call, and MAML ---------------------------------------------------------------


def models():
    mg.manual_seed(0)
    ours_model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    theirs_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                       torch.nn.Linear(4, 1)).double()
    with torch.no_grad():
        for (_, p), (_, q) in zip(ours_model.named_parameters(),
                                  theirs_model.named_parameters()):
            q.copy_(torch.tensor(p.numpy()))
    return ours_model, theirs_model


def test_functional_call_uses_the_given_tensors_and_leaves_the_module_alone():
    model, reference = models()
    before = {n: p.numpy().copy() for n, p in model.named_parameters()}
    new = {"0.weight": mg.tensor(rng.standard_normal((4, 3)))}
    new_theirs = {"0.weight": torch.tensor(new["0.weight"].numpy())}
    same(func.functional_call(model, new, ours(XS)), tfunc.functional_call(
        reference, new_theirs, theirs(XS)))
    assert all(np.array_equal(p.numpy(), before[n]) for n, p in model.named_parameters())
    assert isinstance(model[0].weight, nn.Parameter)


def test_functional_call_replaces_a_tied_weight_under_both_names():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False)).double()
    model[1].weight = model[0].weight  # tied: one Parameter under two names
    w = mg.tensor(rng.standard_normal((3, 3)))
    x, = ours(XS)
    expected = x @ w.T @ w.T
    same(func.functional_call(model, {"0.weight": w}, x), torch.tensor(expected.numpy()))
    untied = func.functional_call(model, {"0.weight": w}, x, tie_weights=False)
    same(untied, torch.tensor((x @ w.T @ model[0].weight.T).detach().numpy()))


def test_functional_call_says_which_names_are_unknown():
    model, _ = models()
    with pytest.raises(KeyError, match=r"no parameter or buffer named '0\.wieght'"):
        func.functional_call(model, {"0.wieght": mg.zeros(4, 3)}, ours(XS))


def test_maml_step_with_functional_call_matches_torch():
    """One MAML meta-gradient: an inner SGD step taken with grad(create_graph=True), the
    adapted parameters evaluated by functional_call, and the outer loss differentiated
    through the inner step (second derivatives included)."""
    inner_lr = 0.1
    support, query = (XS[:3], YS[:3, None]), (XS[3:], YS[3:, None])

    def meta_gradients(lib, f, model, grad_fn):
        params = dict(model.named_parameters())

        def loss(p, batch):
            x, y = (lib.tensor(a, dtype=lib.float64) for a in batch)
            return ((f.functional_call(model, p, (x,)) - y) ** 2).mean()

        grads = grad_fn(loss, params, support)
        adapted = {n: p - inner_lr * g for (n, p), g in zip(params.items(), grads)}
        loss(adapted, query).backward()
        return {n: p.grad for n, p in params.items()}

    model, reference = models()
    ours_grads = meta_gradients(
        mg, func, model,
        lambda loss, p, batch: mg.autograd.grad(loss(p, batch), list(p.values()),
                                                create_graph=True))
    theirs_grads = meta_gradients(
        torch, tfunc, reference,
        lambda loss, p, batch: torch.autograd.grad(loss(p, batch), list(p.values()),
                                                   create_graph=True))
    same(ours_grads, theirs_grads)
    # the same meta-gradient with the inner gradient taken by func.grad
    model, _ = models()
    same(meta_gradients(mg, func, model,
                        lambda loss, p, batch: list(func.grad(loss)(p, batch).values())),
         theirs_grads)
