"""Tests for infonce_lib.confidence: Hoeffding's bound on InfoNCE and Fisher's within the family."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from infonce_lib import confidence, infonce_bound
from infonce_lib.confidence import (
    correlated_gaussian_confidence_bound,
    infonce_confidence_bound,
    infonce_value_range,
)
from infonce_lib.limits import (
    correlated_gaussian_critic,
    correlated_gaussian_information,
    correlated_gaussian_rho,
    sample_binary_channel,
    sample_correlated_gaussian,
)

# ---------------------------------------------------------------- the range of a batch value


def _lower_end(k, m):
    return math.log(k) - math.log1p((k - 1) * math.exp(m))


@pytest.mark.parametrize(("k", "m"), [(2, 0.0), (16, 4.0), (1000, 0.5), (7, 30.0)])
def test_value_range_is_the_closed_form(k, m):
    a, b = infonce_value_range(k, m)
    assert b == math.log(k)
    assert a == pytest.approx(_lower_end(k, m), rel=1e-14, abs=1e-14)


def test_value_range_of_a_huge_score_range_does_not_overflow():
    a, _ = infonce_value_range(4, 1e6)
    assert a == pytest.approx(math.log(4) - math.log(3) - 1e6, rel=1e-15)


def test_every_batch_value_lies_in_the_range_the_bound_assumes():
    # Scores clipped to a range of M: each batch value lies in [a, log K], the ends included.
    rng = np.random.default_rng(3)
    k, m = 6, 2.5
    F = np.clip(rng.normal(scale=4.0, size=(2000, k, k)), -m, 0.0)
    v = infonce_bound(F)
    lo, hi = infonce_value_range(k, m)
    assert v.min() >= lo - 1e-12 and v.max() <= hi + 1e-12
    worst = np.zeros((1, k, k))
    worst[0] -= np.eye(k) * m  # every positive at -M, every negative at 0: the lower end
    assert infonce_bound(worst)[0] == pytest.approx(lo, abs=1e-12)
    infonce_confidence_bound(np.append(v, infonce_bound(worst)), k, m)  # accepted


# ---------------------------------------------------------------- Hoeffding's bound


def test_confidence_bound_is_hoeffdings_formula():
    v = np.linspace(-1.0, 2.0, 400)
    k, m, delta = 16, 4.0, 0.05
    span = math.log(k) - _lower_end(k, m)
    want = v.mean() - span * math.sqrt(math.log(1 / delta) / (2 * v.size))
    assert infonce_confidence_bound(v, k, m, delta) == pytest.approx(want, rel=1e-13)
    # smaller delta, fewer batches, a wider score range: each lowers the bound
    b = infonce_confidence_bound(v, k, m, delta)
    assert infonce_confidence_bound(v, k, m, 0.01) < b
    assert infonce_confidence_bound(v[::4], k, m, delta) < v[::4].mean() - (v.mean() - b)
    assert infonce_confidence_bound(v, k, m + 1, delta) < b


def test_confidence_bound_is_capped_at_log_k():
    k = 8
    v = np.full(50, math.log(k))  # the largest value a batch can take
    assert infonce_confidence_bound(v, k, 3.0) < math.log(k)


@pytest.mark.parametrize("k", [2, 3, 8, 16, 100, 128, 1000, 4096, 2**20])
def test_float32_values_at_both_ends_are_accepted(k):
    # float32(log K) exceeds log K by up to half a float32 ulp (about 1e-7 at K = 1000);
    # the same holds for the lower end. Both are valid batch values in float32.
    m = 2.0
    lo, hi = infonce_value_range(k, m)
    for end in (lo, hi):
        v32 = np.full(20, end, dtype=np.float32)
        b = infonce_confidence_bound(v32, k, m)
        b64 = infonce_confidence_bound(np.full(20, end), k, m)
        assert b == pytest.approx(b64, abs=1e-6) and b < math.log(k)
    assert float(np.float32(math.log(1000))) > math.log(1000)  # the case once refused


def test_rounding_tolerance_follows_the_dtype():
    # 1e-6 above log 4 is rounding for float16 values, not for float64 ones.
    with pytest.raises(ValueError, match="values must lie in"):
        infonce_confidence_bound([math.log(4) + 1e-6, 0.0], 4, 1.0)
    top16 = np.array([math.log(4), 0.0], dtype=np.float16)  # log 4 rounded in float16
    assert abs(float(top16[0]) - math.log(4)) > 1e-5
    assert infonce_confidence_bound(top16, 4, 1.0) < math.log(4)
    # float32 values clearly above log K are still refused
    with pytest.raises(ValueError, match="values must lie in"):
        infonce_confidence_bound(np.array([math.log(4) + 1e-3], np.float32), 4, 1.0)


@pytest.mark.parametrize("delta", [0.05, 0.01])
def test_confidence_bound_covers_the_mean_at_least_one_minus_delta(delta):
    # The hardest case for Hoeffding's inequality: values at the two ends, half and half.
    # Coverage must be at least 1 - delta; with half the margin it would fall below.
    k, m, n, reps = 16, 4.0, 50, 4000
    lo, hi = infonce_value_range(k, m)
    rng = np.random.default_rng(11)
    v = np.where(rng.random((reps, n)) < 0.5, lo, hi)
    mean = 0.5 * (lo + hi)
    bounds = np.array([infonce_confidence_bound(row, k, m, delta) for row in v])
    coverage = np.mean(bounds <= mean)
    assert coverage >= 1 - delta
    half_margin = 0.5 * (v.mean(axis=1) - bounds)
    assert np.mean(v.mean(axis=1) - half_margin <= mean) < 1 - delta


def test_confidence_bound_on_infonce_batches_covers_their_expectation():
    # Clipped optimal critic on a 1-d Gaussian: the bound is at or below E[V] in at least
    # 1 - delta of the repetitions, and E[V] <= I.
    rho, k, m, n, reps, delta = correlated_gaussian_rho(0.5, 1), 8, 3.0, 200, 60, 0.1
    rng = np.random.default_rng(5)
    X, Y = sample_correlated_gaussian(reps * n * k, rho, 1, rng)
    F = correlated_gaussian_critic(X.reshape(reps * n, k, 1), Y.reshape(reps * n, k, 1), rho)
    v = infonce_bound(np.clip(F, -m, 0.0)).reshape(reps, n)
    bounds = [infonce_confidence_bound(row, k, m, delta) for row in v]
    assert np.mean(np.array(bounds) <= v.mean()) >= 1 - delta
    assert v.mean() < 0.5


def test_confidence_bound_rejects_bad_input():
    ok = np.array([0.1, 0.2])
    with pytest.raises(ValueError, match="values must lie in"):
        infonce_confidence_bound([_lower_end(4, 1.0) - 1e-6], 4, 1.0)
    with pytest.raises(ValueError, match="delta"):
        infonce_confidence_bound(ok, 4, 1.0, delta=1.0)
    with pytest.raises(ValueError, match="delta"):
        infonce_confidence_bound(ok, 4, 1.0, delta=0.0)
    with pytest.raises(ValueError, match="score_range"):
        infonce_confidence_bound(ok, 4, -1.0)
    with pytest.raises(ValueError, match="batch_size"):
        infonce_confidence_bound(ok, 1, 1.0)
    with pytest.raises(TypeError, match="batch_size"):
        infonce_value_range(4.0, 1.0)
    with pytest.raises(ValueError, match="values"):
        infonce_confidence_bound([], 4, 1.0)
    with pytest.raises(ValueError, match="values"):
        infonce_confidence_bound([0.1, np.nan], 4, 1.0)
    with pytest.raises(TypeError, match="values"):
        infonce_confidence_bound(["a"], 4, 1.0)


# ---------------------------------------------------------------- Fisher's bound in the family


def _fisher_reference(X, Y, delta):
    """Fisher's bound, spelled out with scipy and plain sums (zero means known)."""
    x, y = np.ravel(X), np.ravel(Y)
    r = float(np.sum(x * y) / math.sqrt(np.sum(x * x) * np.sum(y * y)))
    m, d = x.size, X.shape[-1]
    z = max(abs(math.atanh(r)) - scipy.stats.norm.ppf(1 - delta / 2) / math.sqrt(m - 3), 0.0)
    return -d / 2 * math.log1p(-(math.tanh(z) ** 2))


@pytest.mark.parametrize(("rho", "n", "d", "delta"), [(0.5, 40, 6, 0.05), (-0.3, 7, 3, 0.2)])
def test_fisher_bound_is_the_formula(rho, n, d, delta):
    X, Y = sample_correlated_gaussian(n, rho, d, seed=4)
    got = correlated_gaussian_confidence_bound(X, Y, delta)
    assert got == pytest.approx(_fisher_reference(X, Y, delta), rel=1e-12, abs=1e-15)


def test_fisher_bound_of_stacked_samples_is_each_sample_bounded_alone():
    X, Y = sample_correlated_gaussian(5 * 30, 0.6, 4, seed=2)
    X, Y = X.reshape(5, 30, 4), Y.reshape(5, 30, 4)
    stacked = correlated_gaussian_confidence_bound(X, Y)
    assert stacked.shape == (5,)
    alone = [correlated_gaussian_confidence_bound(X[i], Y[i]) for i in range(5)]
    np.testing.assert_allclose(stacked, alone, rtol=1e-14)


def test_fisher_bound_ignores_scale_and_sign_conventions():
    X, Y = sample_correlated_gaussian(60, 0.7, 3, seed=6)
    b = correlated_gaussian_confidence_bound(X, Y)
    assert correlated_gaussian_confidence_bound(1e-200 * X, 1e200 * Y) == pytest.approx(b)
    assert correlated_gaussian_confidence_bound(X, -Y) == pytest.approx(b)  # rho -> -rho
    assert correlated_gaussian_confidence_bound(X.astype(np.float32), Y) == pytest.approx(
        b, rel=1e-5
    )


@pytest.mark.parametrize(
    ("rho", "n", "d"), [(0.0, 10, 5), (0.0, 2, 2), (0.3, 5, 2), (-0.9, 20, 3), (0.5, 128, 16)]
)
def test_fisher_bound_covers_the_information_at_least_one_minus_delta(rho, n, d):
    # Coverage over 4000 samples, from tiny ones (m = 4 coordinate pairs) to large ones;
    # the Monte Carlo allowance is 3 standard errors of a proportion at 1 - delta.
    delta, trials = 0.1, 4000
    X, Y = sample_correlated_gaussian(trials * n, rho, d, np.random.default_rng([7, n, d]))
    bounds = correlated_gaussian_confidence_bound(
        X.reshape(trials, n, d), Y.reshape(trials, n, d), delta
    )
    info = correlated_gaussian_information(rho, d)
    allowance = 3 * math.sqrt(delta * (1 - delta) / trials)
    assert np.mean(bounds <= info) >= 1 - delta - allowance
    assert np.all(bounds >= 0)


def test_fisher_bound_passes_ln_n_in_the_family_and_fails_outside_it():
    # Table 1's second row: from one batch of N = 128 pairs the bound is far above ln N.
    X, Y = sample_correlated_gaussian(128, 0.5, 128, seed=8)
    info = correlated_gaussian_information(0.5, 128)
    assert math.log(128) + 10 < correlated_gaussian_confidence_bound(X, Y) < info
    # Binary inputs with the same correlation carry less information: the bound overshoots.
    from infonce_lib.limits import binary_channel_information

    Xb, Yb = sample_binary_channel(20_000, 0.5, 8, seed=9)
    assert correlated_gaussian_confidence_bound(Xb, Yb) > binary_channel_information(0.5, 8) + 1


def test_fisher_bound_is_zero_without_correlation_and_grows_with_the_sample():
    rng = np.random.default_rng(12)
    X, Y = rng.normal(size=(2, 50, 2))
    assert correlated_gaussian_confidence_bound(X, Y, 0.05) >= 0.0
    small = correlated_gaussian_confidence_bound(*sample_correlated_gaussian(20, 0.8, 4, 3))
    large = correlated_gaussian_confidence_bound(*sample_correlated_gaussian(2000, 0.8, 4, 3))
    assert small < large < correlated_gaussian_information(0.8, 4)


def test_fisher_bound_rejects_bad_input():
    X, Y = sample_correlated_gaussian(10, 0.5, 2, seed=0)
    with pytest.raises(ValueError, match="same shape"):
        correlated_gaussian_confidence_bound(X, Y[:9])
    with pytest.raises(ValueError, match="at least 2-D"):
        correlated_gaussian_confidence_bound(X[0], Y[0])
    with pytest.raises(ValueError, match="n d >= 4"):
        correlated_gaussian_confidence_bound(X[:1, :1].repeat(3, 0), Y[:3, :1])
    with pytest.raises(ValueError, match="all zeros"):
        correlated_gaussian_confidence_bound(np.zeros_like(X), Y)
    with pytest.raises(ValueError, match="perfectly correlated"):
        correlated_gaussian_confidence_bound(X, 2 * X)
    with pytest.raises(ValueError, match="delta"):
        correlated_gaussian_confidence_bound(X, Y, delta=1.0)
    with pytest.raises(ValueError, match="X"):
        correlated_gaussian_confidence_bound(np.where(X > 0, np.inf, X), Y)
    with pytest.raises(TypeError, match="Y"):
        correlated_gaussian_confidence_bound(X, Y.astype(complex))
    assert confidence.__all__ == sorted(confidence.__all__)
