"""Tests for infonce_lib.optim.Adam."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from infonce_lib import Adam


def test_converges_on_a_quadratic(rng):
    A = rng.normal(size=(5, 5))
    H = A @ A.T + np.eye(5)  # positive definite
    target = rng.normal(size=5)
    theta = np.zeros(5)
    opt = Adam([theta], lr=0.05)
    for _ in range(3000):
        opt.step([H @ (theta - target)])
    np.testing.assert_allclose(theta, target, atol=1e-4)


def test_first_steps_match_the_algorithm():
    # Kingma & Ba, Algorithm 1, by hand for two steps on one scalar
    theta = np.array([1.0])
    opt = Adam([theta], lr=0.1, betas=(0.9, 0.99), eps=1e-8)
    expected, m, v = 1.0, 0.0, 0.0
    for t, g in enumerate([0.5, -2.0], start=1):
        opt.step([np.array([g])])
        m = 0.9 * m + 0.1 * g
        v = 0.99 * v + 0.01 * g * g
        mhat, vhat = m / (1 - 0.9**t), v / (1 - 0.99**t)
        expected -= 0.1 * mhat / (math.sqrt(vhat) + 1e-8)
        assert math.isclose(theta[0], expected, rel_tol=1e-12)
    # the first step moves every coordinate by about lr, whatever the gradient's scale
    p = np.zeros(3)
    Adam([p], lr=0.01).step([np.array([1e-3, 1.0, 1e3])])
    np.testing.assert_allclose(p, -0.01, rtol=1e-4)


def test_updates_in_place_and_independently():
    a, b = np.zeros(2), np.ones(3)
    opt = Adam([a, b], lr=0.1)
    opt.step([np.ones(2), np.zeros(3)])
    assert np.all(a < 0) and np.all(b == 1.0)


def test_validation():
    with pytest.raises(TypeError, match="params"):
        Adam([])
    with pytest.raises(TypeError, match="params"):
        Adam([np.zeros(2, dtype=np.float32)])
    with pytest.raises(ValueError, match="lr"):
        Adam([np.zeros(2)], lr=-1.0)
    with pytest.raises(ValueError, match="betas"):
        Adam([np.zeros(2)], betas=(0.9, 1.0))
    opt = Adam([np.zeros(2)])
    with pytest.raises(TypeError, match="grads"):
        opt.step([np.zeros(2), np.zeros(2)])
    with pytest.raises(ValueError, match="shape"):
        opt.step([np.zeros(3)])
    with pytest.raises(ValueError, match="finite"):
        opt.step([np.array([np.nan, 0.0])])


def test_masked_parameters_are_refused_and_a_matrix_is_updated_elementwise():
    with pytest.raises(TypeError, match=r"params\[1\] is a numpy.ma.MaskedArray"):
        Adam([np.zeros(2), np.ma.masked_array(np.zeros(2), mask=[True, False])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        M = np.matrix(np.zeros((2, 2)))
    A = np.zeros((2, 2))
    g = np.array([[1.0, -2.0], [3.0, 0.5]])
    for p in (M, A):
        opt = Adam([p], lr=0.1)
        for _ in range(3):
            opt.step([g])
    np.testing.assert_array_equal(np.asarray(M), A)
