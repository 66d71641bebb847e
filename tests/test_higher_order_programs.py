"""Programs that differentiate a gradient, written as PyTorch code and run on both
libraries with only the import changed (``lib`` is ``minigrad`` or ``torch``): a WGAN-GP
gradient penalty (with and without layer norm), a Hessian-vector product of a loss, and a
physics-informed loss. Each must give PyTorch's numbers."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

rng = np.random.default_rng(16)


def mlp(lib, sizes, activation):
    """An MLP with the same weights in both libraries (drawn here, loaded into each)."""
    nn = lib.nn
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(getattr(nn, activation)())
    model = nn.Sequential(*layers).double()
    state = {}
    for name, value in model.state_dict().items():
        array = np.random.default_rng(zlib.crc32(name.encode())).standard_normal(
            tuple(value.shape)) * 0.7
        state[name] = lib.tensor(array, dtype=lib.float64)
    model.load_state_dict(state)
    return model


def tensor(lib, array, requires_grad=False):
    return lib.tensor(array, dtype=lib.float64, requires_grad=requires_grad)


def gradients(model):
    return [p.grad.numpy() for p in model.parameters()]


def same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


# --- WGAN-GP: the norm of dD/dx in the critic's loss -----------------------------------------

REAL, FAKE = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
ALPHA = rng.uniform(size=(6, 1))


def wgan_gp_critic_step(lib):
    critic = mlp(lib, [2, 16, 16, 1], "LeakyReLU")
    real, fake, alpha = tensor(lib, REAL), tensor(lib, FAKE), tensor(lib, ALPHA)
    interpolated = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interpolated)
    (slopes,) = lib.autograd.grad(outputs=scores, inputs=interpolated,
                                  grad_outputs=lib.ones_like(scores),
                                  create_graph=True, retain_graph=True)
    penalty = ((slopes.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
    loss.backward()
    return [loss.item(), penalty.item()], gradients(critic)


def test_a_wgan_gp_critic_step_matches_pytorch():
    (loss, penalty), grads = wgan_gp_critic_step(mg)
    (torch_loss, torch_penalty), torch_grads = wgan_gp_critic_step(torch)
    np.testing.assert_allclose([loss, penalty], [torch_loss, torch_penalty], rtol=1e-10)
    same(grads, torch_grads)


def layer_norm_critic_step(lib):
    """The same step with the critic the WGAN-GP paper recommends: layer norm, not batch
    norm, between the layers (the penalty differentiates through it twice)."""
    nn = lib.nn
    critic = nn.Sequential(nn.Linear(2, 16), nn.LayerNorm(16), nn.LeakyReLU(0.2),
                           nn.Linear(16, 1)).double()
    critic.load_state_dict({name: tensor(lib, np.random.default_rng(
        zlib.crc32(name.encode())).standard_normal(tuple(value.shape)) * 0.7)
        for name, value in critic.state_dict().items()})
    interpolated = tensor(lib, ALPHA * REAL + (1 - ALPHA) * FAKE, requires_grad=True)
    scores = critic(interpolated)
    (slopes,) = lib.autograd.grad(scores, interpolated, lib.ones_like(scores),
                                  create_graph=True)
    penalty = ((slopes.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(tensor(lib, FAKE)).mean() - critic(tensor(lib, REAL)).mean() + 10 * penalty
    loss.backward()
    return [loss.item(), penalty.item()], gradients(critic)


def test_a_wgan_gp_critic_with_layer_norm_matches_pytorch():
    (loss, penalty), grads = layer_norm_critic_step(mg)
    (torch_loss, torch_penalty), torch_grads = layer_norm_critic_step(torch)
    np.testing.assert_allclose([loss, penalty], [torch_loss, torch_penalty], rtol=1e-10)
    same(grads, torch_grads)


# --- a Hessian-vector product of a training loss (Pearlmutter's trick) --------------------------

X, Y = rng.standard_normal((8, 3)), rng.standard_normal((8, 2))


def hessian_vector_product(lib):
    model = mlp(lib, [3, 5, 2], "Tanh")
    params = list(model.parameters())
    vectors = [tensor(lib, np.random.default_rng(i).standard_normal(tuple(p.shape)))
               for i, p in enumerate(params)]
    loss = lib.nn.functional.mse_loss(model(tensor(lib, X)), tensor(lib, Y))
    grads = lib.autograd.grad(loss, params, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(grads, vectors))
    products = lib.autograd.grad(dot, params)
    return [p.numpy() for p in products]


def test_a_hessian_vector_product_of_a_loss_matches_pytorch():
    same(hessian_vector_product(mg), hessian_vector_product(torch))


def test_the_hessian_vector_product_matches_the_full_hessian():
    def loss_of(w):
        return ((tensor(mg, X) @ w).tanh() ** 2).sum()

    w = tensor(mg, rng.standard_normal((3, 2)))
    v = tensor(mg, rng.standard_normal((3, 2)))
    _, product = mg.autograd.functional.hvp(loss_of, w, v)
    hessian = mg.autograd.functional.hessian(loss_of, w).numpy().reshape(6, 6)
    np.testing.assert_allclose(product.numpy().reshape(6), hessian @ v.numpy().reshape(6),
                               rtol=1e-10, atol=1e-12)


# --- a physics-informed loss: u'' + u = 0 on [0, pi], u(0) = 0, u'(0) = 1 -------------------

POINTS = np.linspace(0, np.pi, 7).reshape(7, 1)


def physics_informed_step(lib):
    net = mlp(lib, [1, 12, 12, 1], "Tanh")
    x = tensor(lib, POINTS, requires_grad=True)
    u = net(x)
    (du,) = lib.autograd.grad(u, x, lib.ones_like(u), create_graph=True)
    (d2u,) = lib.autograd.grad(du, x, lib.ones_like(du), create_graph=True)
    residual = ((d2u + u) ** 2).mean()
    x0 = tensor(lib, np.zeros((1, 1)), requires_grad=True)
    u0 = net(x0)
    (du0,) = lib.autograd.grad(u0.sum(), x0, create_graph=True)
    loss = residual + (u0 ** 2).sum() + ((du0 - 1) ** 2).sum()
    loss.backward()
    return [loss.item(), residual.item()], gradients(net)


def test_a_physics_informed_loss_matches_pytorch():
    (loss, residual), grads = physics_informed_step(mg)
    (torch_loss, torch_residual), torch_grads = physics_informed_step(torch)
    np.testing.assert_allclose([loss, residual], [torch_loss, torch_residual], rtol=1e-10)
    same(grads, torch_grads)
