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
    with pytest.raises(TypeError, match="float16"):
        Adam([np.zeros(2, dtype=np.float16)])
    with pytest.raises(TypeError, match="params"):
        Adam([np.zeros(2, dtype=int)])
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


def test_float32_parameters_train_in_float32_like_float64():
    rng = np.random.default_rng(3)
    grads = rng.normal(size=(20, 6))
    p64, p32 = np.zeros(6), np.zeros(6, dtype=np.float32)
    o64, o32 = Adam([p64], lr=0.01), Adam([p32], lr=0.01)
    for g in grads:
        o64.step([g])  # float64 gradients are cast to the float32 parameter
        o32.step([g.astype(np.float32)])
    assert p32.dtype == np.float32 and o32._m[0].dtype == o32._v[0].dtype == np.float32
    np.testing.assert_allclose(p32, p64, rtol=1e-5)
    # and a float64 gradient on a float32 parameter gives the same step as its float32 copy
    q = np.zeros(6, dtype=np.float32)
    Adam([q], lr=0.01).step([grads[0]])
    r = np.zeros(6, dtype=np.float32)
    Adam([r], lr=0.01).step([grads[0].astype(np.float32)])
    np.testing.assert_array_equal(q, r)


def test_float32_gradients_are_checked():
    opt = Adam([np.zeros(2, dtype=np.float32)])
    with pytest.raises(ValueError, match="finite"):
        opt.step([np.array([np.inf, 0.0], dtype=np.float32)])
    with pytest.raises(ValueError, match="float32"):  # finite in float64, not in float32
        opt.step([np.array([1e39, 0.0])])
    with pytest.raises(ValueError, match="shape"):
        opt.step([np.zeros(3, dtype=np.float32)])


def test_a_large_parameter_is_updated_as_a_whole_would_be():
    # Arrays above the block size are updated block by block: the same numbers, and a
    # non-contiguous parameter is still updated in place.
    from infonce_lib import optim

    rng = np.random.default_rng(5)
    n = 2 * optim._BLOCK + 123
    grads = rng.normal(size=(3, n))
    big = np.zeros(n)
    opt = Adam([big], lr=0.01)
    expected, m, v = np.zeros(n), np.zeros(n), np.zeros(n)
    for t, g in enumerate(grads, start=1):
        opt.step([g])
        m = 0.9 * m + (1 - 0.9) * g
        v = 0.999 * v + (1 - 0.999) * g * g
        step = 0.01 * math.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        expected -= step * m / (np.sqrt(v) + 1e-8 * math.sqrt(1 - 0.999**t))
    np.testing.assert_array_equal(big, expected)
    strided = np.zeros((2, n))[:, ::2]  # not contiguous
    Adam([strided], lr=0.01).step([np.ones(strided.shape)])
    np.testing.assert_allclose(strided, -0.01)


def test_gradient_errors_read_the_same_on_every_path():
    opt = Adam([np.zeros(2, dtype=np.float32)])
    msgs = []
    for g in (np.array([np.nan, 0.0], dtype=np.float32), np.array([np.nan, 0.0]), [np.nan, 0.0]):
        with pytest.raises(ValueError, match="NaN") as err:
            opt.step([g])
        msgs.append(str(err.value))
    assert len(set(msgs)) == 1, msgs
    for g in (np.zeros(0, dtype=np.float32), np.zeros(0)):  # empty: refused on both paths
        with pytest.raises(ValueError, match="empty"):
            Adam([np.zeros(0, dtype=np.float32)]).step([g])
    with pytest.raises(ValueError, match="float32") as err:
        opt.step([np.array([3.4028236e38, 0.0])])  # just above float32's largest
    assert "<= 3.40282347e+38); got entries up to 3.4028236e+38" in str(err.value)
