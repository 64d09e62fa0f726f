"""Tests for infonce_lib.critics: forward passes against plain formulas, backward passes
against central finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest

from infonce_lib import (
    JointCritic,
    SeparableCritic,
    flatten_grads,
    mlp_backward,
    mlp_forward,
    mlp_init,
)


def objective(F, W):
    """A scalar objective of the scores with a generic gradient W."""
    return float(np.sum(W * F) + 0.5 * np.sum(F**2))


def d_objective(F, W):
    return W + F


def numeric_grads(critic, X, Y, W, h=1e-6):
    grads = []
    for p in critic.params:
        g = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            old = p[idx]
            p[idx] = old + h
            up = objective(critic.forward(X, Y)[0], W)
            p[idx] = old - h
            down = objective(critic.forward(X, Y)[0], W)
            p[idx] = old
            g[idx] = (up - down) / (2 * h)
        grads.append(g)
    return grads


def data(rng, K=5, dx=3, dy=4):
    return rng.normal(size=(K, dx)), rng.normal(size=(K, dy)), rng.normal(size=(K, K))


@pytest.mark.parametrize("layers", [0, 1, 2])
def test_separable_gradients(layers, rng):
    X, Y, W = data(rng)
    critic = SeparableCritic(3, 4, hidden=6, embed=3, layers=layers, out_scale=1.0, seed=1)
    F, cache = critic.forward(X, Y)
    grads = critic.backward(cache, d_objective(F, W))
    for g, n in zip(grads, numeric_grads(critic, X, Y, W), strict=True):
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-8)


def test_separable_stack_gradients_and_independence(rng):
    X, Y, _ = data(rng)
    W = rng.normal(size=(3, 5, 5))
    critic = SeparableCritic(3, 4, hidden=6, embed=3, copies=3, out_scale=1.0, seed=2)
    F, cache = critic.forward(X, Y)
    grads = critic.backward(cache, d_objective(F, W))
    for g, n in zip(grads, numeric_grads(critic, X, Y, W), strict=True):
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-8)
    # copy c's scores depend only on copy c's weights
    for p in critic.params:
        p[1] += 0.3
    F2, _ = critic.forward(X, Y)
    np.testing.assert_array_equal(F2[0], F[0])
    np.testing.assert_array_equal(F2[2], F[2])
    assert not np.allclose(F2[1], F[1])


@pytest.mark.parametrize("layers", [1, 2])
def test_joint_gradients(layers, rng):
    X, Y, W = data(rng)
    critic = JointCritic(3, 4, hidden=5, layers=layers, out_scale=1.0, seed=3)
    F, cache = critic.forward(X, Y)
    grads = critic.backward(cache, d_objective(F, W))
    for g, n in zip(grads, numeric_grads(critic, X, Y, W), strict=True):
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("layers", [1, 2])
def test_joint_stack_gradients(layers, rng):
    # a stack of copies: one hidden layer takes the summed path of _joint_backward, and all
    # copies write their activations into one shared buffer
    X, Y, _ = data(rng)
    W = rng.normal(size=(3, 5, 5))
    critic = JointCritic(3, 4, hidden=5, layers=layers, copies=3, out_scale=1.0, seed=4)
    for p in critic.params[1::2]:  # biases away from zero: no ReLU kink at the test point
        p += rng.normal(scale=0.5, size=p.shape)
    F, cache = critic.forward(X, Y)
    grads = critic.backward(cache, d_objective(F, W))
    for g, n in zip(grads, numeric_grads(critic, X, Y, W), strict=True):
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-8)


def relu_mlp_reference(params, x):
    h = np.asarray(x, dtype=float)
    for k in range(0, len(params), 2):
        h = h @ params[k] + params[k + 1]
        if k < len(params) - 2:
            h = np.maximum(h, 0)
    return h


def test_forward_matches_formulas(rng):
    X, Y, _ = data(rng)
    sep = SeparableCritic(3, 4, hidden=6, embed=3, seed=4)
    n = len(sep.params) // 2
    G = relu_mlp_reference(sep.params[:n], X)
    H = relu_mlp_reference(sep.params[n:], Y)
    F, _ = sep.forward(X, Y)
    for i in range(5):
        for j in range(5):
            assert np.isclose(F[i, j], G[j] @ H[i], rtol=1e-13)
    joint = JointCritic(3, 4, hidden=5, seed=5)
    F, _ = joint.forward(X, Y)
    for i in range(5):
        for j in range(5):
            ref = relu_mlp_reference(joint.params, np.concatenate([X[j], Y[i]]))[0]
            assert np.isclose(F[i, j], ref, rtol=1e-12, atol=1e-14)


def test_mlp_functions(rng):
    params = mlp_init([3, 7, 2], seed=0)
    X = rng.normal(size=(4, 3))
    out, cache = mlp_forward(params, X)
    np.testing.assert_allclose(out, relu_mlp_reference(params, X))
    D = rng.normal(size=out.shape)
    grads, dX = mlp_backward(params, cache, D)
    h = 1e-6
    num = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        Xp, Xm = X.copy(), X.copy()
        Xp[idx] += h
        Xm[idx] -= h
        num[idx] = np.sum(D * (relu_mlp_reference(params, Xp) - relu_mlp_reference(params, Xm)))
        num[idx] /= 2 * h
    np.testing.assert_allclose(dX, num, rtol=1e-6, atol=1e-9)
    assert [g.shape for g in grads] == [p.shape for p in params]


def test_params_are_views_of_flat(rng):
    critic = SeparableCritic(2, 2, hidden=4, embed=2, seed=0)
    critic.flat[:] = 0.0
    assert all(np.all(p == 0) for p in critic.params)
    X, Y, _ = data(rng, dx=2, dy=2)
    F, cache = critic.forward(X, Y)
    g = flatten_grads(critic.backward(cache, np.ones_like(F)))
    assert g.shape == critic.flat.shape


def test_init_and_seed():
    a = mlp_init([3, 5, 1], seed=7)
    b = mlp_init([3, 5, 1], seed=7)
    for p, q in zip(a, b, strict=True):
        np.testing.assert_array_equal(p, q)
    small = mlp_init([3, 5, 1], seed=7, out_scale=0.1)
    np.testing.assert_allclose(small[2], 0.1 * a[2])
    with pytest.raises(TypeError, match="seed"):
        mlp_init([3, 1], seed=None)
    with pytest.raises(TypeError, match="sizes"):
        mlp_init(3, seed=0)
    with pytest.raises(ValueError, match="out_scale"):
        mlp_init([3, 1], seed=0, out_scale=0.0)


def test_validation():
    critic = SeparableCritic(3, 4, hidden=4, embed=2, seed=0)
    with pytest.raises(ValueError, match="X and Y"):
        critic.forward(np.zeros((5, 3)), np.zeros((5, 3)))
    with pytest.raises(ValueError, match="X and Y"):
        critic.forward(np.zeros((5, 3)), np.zeros((4, 4)))
    with pytest.raises(ValueError, match="finite"):
        critic.forward(np.full((2, 3), np.nan), np.zeros((2, 4)))
    _, cache = critic.forward(np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="d_scores"):
        critic.backward(cache, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="copies"):
        SeparableCritic(3, 4, copies=0, seed=0)
    with pytest.raises(ValueError, match="layers"):
        JointCritic(3, 4, layers=0, seed=0)
    with pytest.raises(ValueError, match="features"):
        mlp_forward(mlp_init([3, 2], seed=0), np.zeros((2, 4)))


def test_overflow_is_a_clear_error():
    critic = SeparableCritic(3, 3, hidden=4, embed=2, seed=0)
    with pytest.raises(ValueError, match="scores"):
        critic.forward(np.full((4, 3), 1.7e308), np.full((4, 3), 1.7e308))
    _, cache = critic.forward(np.ones((4, 3)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="gradient"):
        critic.backward(cache, np.full((4, 4), 1.7e308))
    joint = JointCritic(3, 3, hidden=4, seed=0)
    with pytest.raises(ValueError, match="scores"):
        joint.forward(np.full((4, 3), 1.7e308), np.full((4, 3), -1.7e308))


def test_mlp_backward_names_a_wrong_d_out_or_cache(rng):
    params = mlp_init([2, 3, 1], seed=0)
    out, cache = mlp_forward(params, rng.normal(size=(4, 2)))
    # d_out of the wrong shape reached NumPy's matmul ("mismatch in its core dimension")
    with pytest.raises(ValueError, match=r"d_out must have the shape .*\(4, 1\).*got \(3, 1\)"):
        mlp_backward(params, cache, np.ones((3, 1)))
    # a garbage cache raised IndexError
    with pytest.raises(TypeError, match="cache must be the list of 2 layer inputs"):
        mlp_backward(params, "x", np.ones_like(out))
    with pytest.raises(TypeError, match="got 1 entries"):
        mlp_backward(params, cache[:1], np.ones_like(out))
    with pytest.raises(ValueError, match=r"cache\[1\] must have shape \(4, 3\)"):
        mlp_backward(params, [cache[0], cache[0]], np.ones_like(out))


def test_flatten_grads_says_what_it_expects():
    # it raised NumPy's "need at least one array to concatenate"
    with pytest.raises(ValueError, match="grads must hold at least one gradient array"):
        flatten_grads([])
    with pytest.raises(TypeError, match="grads must be a list of gradient arrays"):
        flatten_grads(np.ones(3))
    with pytest.raises(TypeError, match=r"grads\[1\]"):
        flatten_grads([np.ones(2), "x"])
