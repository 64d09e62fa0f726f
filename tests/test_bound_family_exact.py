"""Tests for infonce_lib.bound_family_exact: the closed forms against simulation and the bound."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import infonce_lib as il


# Small batches, where the swap term is a large part of the variance, and the book's
# setting (d = 20, K = 64) at 1 nat. Each with |rho| < 1/3 per coordinate, where E r^4 over
# p(x)p(y) is finite, so that the sample variance of the simulated batches converges at
# 1/sqrt(n).
@pytest.mark.parametrize(
    ("rho", "dim", "K", "n", "rel"),
    [(0.3, 1, 3, 200_000, 0.02), (0.25, 4, 3, 200_000, 0.02), (0.2, 8, 4, 200_000, 0.02),
     (0.3084, 20, 64, 6_000, 0.05)],
)  # fmt: skip
def test_nwj_variance_matches_simulation(rho, dim, K, n, rel):
    info = il.correlated_gaussian_information(rho, dim)
    est = il.optimal_critic_estimates(info, dim=dim, batch_size=K, n_batches=n, seed=11)
    values = est["nwj"]
    want = il.nwj_optimal_variance(info, dim=dim, batch_size=K)
    # the estimate is unbiased, and its sample variance agrees with the closed form
    assert abs(values.mean() - info) < 4 * math.sqrt(want / n)
    assert values.var(ddof=1) == pytest.approx(want, rel=rel)
    # the swap covariance is needed: without it the small batches would be further off
    swap = (math.exp(2 * info) * (1 + rho**2) ** -dim - 1) / (K * (K - 1))
    assert K == 64 or abs(values.var(ddof=1) - want) < 0.5 * swap


def test_the_swap_moment_is_one_over_one_minus_rho_to_the_fourth():
    # E[r(x_j, y_i) r(x_i, y_j)] over two independent positive pairs, d = 1
    rho, n = 0.6, 400_000
    rng = np.random.default_rng(3)
    X, Y = il.sample_correlated_gaussian(2 * n, rho, 1, rng)
    R = il.correlated_gaussian_log_ratio(X.reshape(n, 2, 1), Y.reshape(n, 2, 1), rho)
    swap = np.exp(R[:, 0, 1] + R[:, 1, 0])
    assert swap.mean() == pytest.approx(1 / (1 - rho**4), rel=0.02)


def test_nwj_variance_values_and_limits():
    assert il.nwj_optimal_variance(0.0, dim=5, batch_size=4) == 0.0
    sd = math.sqrt(il.nwj_optimal_variance(10.0, dim=20, batch_size=64))
    assert 340 < sd < 355
    values = [il.nwj_optimal_variance(i, dim=20, batch_size=64) for i in range(0, 40, 2)]
    assert np.all(np.diff(values) > 0)
    # past the float64 range: inf, silently; just below it: finite and continuous
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert il.nwj_optimal_variance(400.0, dim=20, batch_size=64) == math.inf
        below, above = (il.nwj_optimal_variance(v, dim=20, batch_size=64) for v in (349.99, 350.01))
    assert math.isfinite(above) and above / below == pytest.approx(math.exp(0.04), rel=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        (dict(information=-1.0, dim=2, batch_size=4), ValueError, "information"),
        (dict(information=float("nan"), dim=2, batch_size=4), ValueError, "information"),
        (dict(information=1.0, dim=0, batch_size=4), ValueError, "dim"),
        (dict(information=1.0, dim=2, batch_size=1), ValueError, "batch_size"),
        (dict(information=1.0, dim=2.0, batch_size=4), TypeError, "dim"),
        (dict(information="1", dim=2, batch_size=4), TypeError, "information"),
    ],
)
def test_nwj_variance_validates(kwargs, error, words):
    info = kwargs.pop("information")
    with pytest.raises(error, match=words):
        il.nwj_optimal_variance(info, **kwargs)


def test_interpolated_cap_bounds_every_batch_and_is_approached():
    K, alpha = 8, 0.05
    cap = il.interpolated_bound_cap(K, alpha)
    rng = np.random.default_rng(0)
    F = rng.normal(scale=4.0, size=(500, K, K)) + 6 * np.eye(K)
    assert np.all(il.interpolated_bound(F, rng.normal(size=(500, K)), alpha) <= cap)
    # positives far above the negatives and the baseline: the batch value reaches the cap
    near = np.where(np.eye(K, dtype=bool), 40.0, -40.0)[None]
    value = il.interpolated_bound(near, 0.0, alpha)[0]
    assert cap - 1e-9 < value <= cap


def test_interpolated_cap_at_alpha_one_is_log_k_minus_one():
    # at alpha = 1 the marginal term is exactly 1, so the supremum is log(K - 1): approached
    # by positives far above the negatives, and never exceeded
    K = 6
    near = np.where(np.eye(K, dtype=bool), 40.0, -40.0)[None]
    value = il.interpolated_bound(near, 0.0, 1.0)[0]
    cap = il.interpolated_bound_cap(K, 1.0)
    assert cap - 1e-9 < value <= cap + 1e-12
    F = np.random.default_rng(1).normal(scale=4.0, size=(300, K, K))
    assert np.all(il.interpolated_bound(F, 0.0, 1.0) <= cap + 1e-12)


def test_interpolated_cap_ends_and_validation():
    assert il.interpolated_bound_cap(64, 0.01) == pytest.approx(1 + math.log(6300))
    assert il.interpolated_bound_cap(5, 1.0) == pytest.approx(math.log(4))
    assert il.interpolated_bound_cap(5, 0.0) == math.inf
    with pytest.raises(ValueError, match="alpha"):
        il.interpolated_bound_cap(5, 1.5)
    with pytest.raises(ValueError, match="batch_size"):
        il.interpolated_bound_cap(2, 0.5)
    with pytest.raises(TypeError, match="alpha"):
        il.interpolated_bound_cap(5, None)
