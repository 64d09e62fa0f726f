"""Tests for the mean-gap caps (infonce_lib.caps): the population cap of an encoder applied to
i.i.d. batches, the mean-gap bound every cap is an instance of, and the per-row gaps; and for
best_temperature's report of an answer at the end of its interval (infonce_lib.temperature),
with the condition for an interior maximum; and for the slope of Hadsell et al.'s loss."""

from __future__ import annotations

import math

import numpy as np
import pytest

import infonce_lib as il


def _phi(K, tau, g):
    # the row bound, straight from its definition (float64, no library code)
    return math.log(K) - math.log(1.0 + (K - 1) * math.exp(-g / tau))


# ---------------------------------------------------------------- the population cap


def test_population_cap_values_and_its_place_among_the_caps():
    assert il.population_cosine_cap(8, 1.0) == pytest.approx(_phi(8, 1.0, 1.0), rel=1e-15)
    assert round(il.population_cosine_cap(8, 1.0), 3) == 0.805  # the figure
    for K in (2, 3, 8, 256, 10**6):
        for tau in (0.01, 0.1, 0.5, 1.0, 10.0):
            pop = il.population_cosine_cap(K, tau)
            assert pop == pytest.approx(il.mean_gap_cap(K, tau, 1.0), rel=1e-15)
            att = il.attainable_cosine_cap(K, tau)
            assert pop <= att <= il.cosine_cap(K, tau)
            if tau >= 0.1:  # below, both are log K to the last bit
                assert pop < att
            assert pop < (K - 1) / (K * tau)  # the linear bound at a mean gap of 1


def test_population_cap_extremes():
    assert il.population_cosine_cap(256, 1e-300) == math.log(256)
    assert il.population_cosine_cap(256, 1e300) == pytest.approx(255 / 256 * 1e-300, rel=1e-12)
    taus = np.array([1e-3, 1.0, 1e3])
    np.testing.assert_allclose(
        il.population_cosine_cap(16, taus), [_phi(16, t, 1.0) for t in taus], rtol=1e-12
    )


def _uniform_batches(rng, n, K, d):
    U = rng.normal(size=(n, K, d))
    U /= np.linalg.norm(U, axis=-1, keepdims=True)
    return U


def test_no_encoder_beats_the_population_cap_on_average():
    # Several encoders applied to i.i.d. pairs: each one's mean over batches stays below
    # the cap (4 SE one-sided), though single batches may pass it.
    rng = np.random.default_rng(0)
    K, tau, n = 8, 1.0, 3000
    cap = il.population_cosine_cap(K, tau)
    encoders = {
        "uniform, d = 256": lambda: (lambda u: (u, u))(_uniform_batches(rng, n, K, 256)),
        "noisy views, d = 16": lambda: _noisy(rng, n, K, 16, 0.3),
        "shifted mean, d = 32": lambda: _shifted(rng, n, K, 32),
    }
    for name, draw in encoders.items():
        x, y = draw()
        values = il.infonce_at_beta(y @ np.swapaxes(x, -1, -2), 1 / tau)
        se = values.std(ddof=1) / math.sqrt(n)
        assert values.mean() <= cap + 4 * se, name


def _noisy(rng, n, K, d, s):
    x = _uniform_batches(rng, n, K, d)
    y = x + s * rng.normal(size=x.shape)
    return x, y / np.linalg.norm(y, axis=-1, keepdims=True)


def _shifted(rng, n, K, d):
    x = rng.normal(size=(n, K, d))
    x[..., 0] += 2.0  # a common direction: the mean embedding is not 0
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    return x, x


def test_the_uniform_map_approaches_the_cap_as_the_dimension_grows():
    rng = np.random.default_rng(1)
    K, tau, n = 8, 1.0, 2000
    cap = il.population_cosine_cap(K, tau)
    deficits, above = [], []
    for d in (4, 32, 256):
        U = _uniform_batches(rng, n, K, d)
        v = il.infonce_at_beta(U @ np.swapaxes(U, -1, -2), 1 / tau)
        deficits.append(cap - v.mean())
        above.append(np.mean(v > cap))
    assert deficits[0] > deficits[1] > deficits[2] > 0
    assert deficits[2] < 0.01 and above[2] > 0.25  # close on average; single batches pass it


def test_the_expected_mean_gap_is_a_covariance():
    # For i.i.d. pairs the mean gap of a batch is, on average, sum_k Cov(x_k, y_k) <= 1.
    rng = np.random.default_rng(2)
    n, K, d = 4000, 6, 5
    x, y = _noisy(rng, n, K, d, 0.5)
    g = il.mean_gaps(y @ np.swapaxes(x, -1, -2)).mean(axis=-1)
    flat_x, flat_y = x.reshape(-1, d), y.reshape(-1, d)
    cov = np.sum((flat_x - flat_x.mean(0)) * (flat_y - flat_y.mean(0)), axis=1).mean()
    assert g.mean() == pytest.approx(cov, abs=4 * g.std(ddof=1) / math.sqrt(n))
    assert cov < 1


# ---------------------------------------------------------------- the mean-gap bound


def test_mean_gap_cap_is_every_cap_at_its_gap():
    for K in (2, 5, 256):
        for tau in (0.05, 1.0, 7.0):
            assert il.mean_gap_cap(K, tau, 2.0) == pytest.approx(il.cosine_cap(K, tau), rel=1e-15)
            assert il.mean_gap_cap(K, tau, K / (K - 1)) == pytest.approx(
                il.attainable_cosine_cap(K, tau), rel=1e-15
            )
            for g in (-2.0, -0.3, 0.0, 0.4, 2.0):
                want = _phi(K, tau, g)
                got = il.mean_gap_cap(K, tau, g)
                assert got == pytest.approx(want, rel=1e-12, abs=1e-300)
                assert got <= (K - 1) / K * g / tau + 1e-15  # the linear bound, any sign


def test_mean_gap_cap_bounds_every_batch_by_its_own_gap():
    rng = np.random.default_rng(3)
    S = rng.uniform(-1, 1, size=(300, 7, 7))
    gbar = il.mean_gaps(S).mean(axis=-1)
    for tau in (0.1, 1.0, 5.0):
        values = il.infonce_at_beta(S, 1 / tau)
        assert np.all(values <= il.mean_gap_cap(7, tau, gbar) + 1e-12)


def test_mean_gap_cap_broadcasts_and_refuses_what_it_must():
    out = il.mean_gap_cap(8, np.array([[0.5], [1.0]]), np.array([0.0, 1.0, 2.0]))
    assert out.shape == (2, 3) and np.all(out[:, 0] == 0.0)
    assert isinstance(il.mean_gap_cap(8, 1.0, 0.5), float)
    assert il.mean_gap_cap(8, 1e-300, 0.5) == math.log(8)  # tau -> 0, positive gap: log K
    small = il.mean_gap_cap(8, 1.0, 1e-12)  # near 0: relative accuracy kept
    assert small == pytest.approx(7 / 8 * 1e-12, rel=1e-9)
    with pytest.raises(ValueError, match="temperature"):
        il.mean_gap_cap(8, 5e-324, -1.0)  # log K - inf: below float64
    with pytest.raises(ValueError, match="mean_gap"):
        il.mean_gap_cap(8, np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match="mean_gap"):
        il.mean_gap_cap(8, 1.0, math.nan)


def test_mean_gaps_by_hand_and_as_the_slope_at_beta_zero():
    S = np.array([[[0.9, 0.1, -0.3], [0.2, 0.5, 0.4], [0.0, 0.6, 0.2]]])
    np.testing.assert_allclose(il.mean_gaps(S), [[1.0, 0.2, -0.1]], atol=1e-15)
    rng = np.random.default_rng(4)
    S = rng.uniform(-1, 1, size=(5, 6, 6))
    slope = il.infonce_beta_derivatives(S, 1e-9).first
    np.testing.assert_allclose(slope, 5 / 6 * il.mean_gaps(S).mean(axis=-1), atol=1e-8)


# ---------------------------------------------------------------- the best temperature's end


@pytest.mark.parametrize("seed", range(40))
def test_the_search_stops_inside_exactly_when_the_mean_gap_and_triplet_loss_are_positive(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 6))
    S = rng.uniform(-1, 1, size=(int(rng.integers(1, 4)), K, K))
    S[:, np.arange(K), np.arange(K)] += rng.uniform(-0.5, 1.5)  # all cases occur
    S = np.clip(S, -1, 1)
    gbar = il.mean_gaps(S).mean()
    T = il.hardest_negative_triplet_loss(S).mean()
    best = il.best_temperature(S, (1e-3, 1e4))
    # an interior stationary point if and only if gbar > 0 and T > 0 (unless the
    # maximiser lies outside this wide interval, which the slopes at its ends rule out)
    lo = il.infonce_beta_derivatives(S, 1e-3).first.mean()
    hi = il.infonce_beta_derivatives(S, 1e4).first.mean()
    if gbar > 0 and T > 0 and lo > 0 > hi:
        assert not best.at_end and abs(best.slope) < 1e-6
    if gbar <= 0:
        assert best.at_end and best.beta == 1e-3 and best.slope <= 0
    if T == 0:
        assert best.at_end and best.beta == 1e4 and best.slope >= 0


def test_a_beaten_positive_alone_gives_no_interior_maximum():
    S = np.array([[[0.0, 0.5], [0.1, 0.2]]])
    assert il.hardest_negative_triplet_loss(S)[0] == pytest.approx(0.25)
    assert il.mean_gaps(S).mean() == pytest.approx(-0.2)
    best = il.best_temperature(S)
    assert best.at_end and best.beta == il.BETA_BOUNDS.low and best.slope < 0
    # the bound falls from beta = 0 on: it is below 0 at every beta of the interval
    assert np.all([il.infonce_at_beta(S, b)[0] < 0 for b in (0.5, 1.0, 10.0, 100.0)])


def test_beta_bounds_is_a_documented_pair():
    lo, hi = il.BETA_BOUNDS
    assert (lo, hi) == (il.BETA_BOUNDS.low, il.BETA_BOUNDS.high) == (0.5, 500.0)
    assert il.BETA_BOUNDS == (0.5, 500.0) and il.BETA_BOUNDS[1] == 500.0
    assert "search interval" in type(il.BETA_BOUNDS).__doc__  # what the API page shows


# ---------------------------------------------------------------- Hadsell's slope


def test_hadsell_slope_matches_central_differences_and_vanishes_beyond_the_margin():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2, 5, 3))
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    S = np.clip(X @ np.swapaxes(X, -1, -2) * 0.9, -1, 1)
    for m in (0.5, 1.0, 1.8):
        G = il.hadsell_contrastive_grad(S, margin=m)
        eps = 1e-6
        for b, i, j in [(0, 0, 1), (0, 2, 2), (1, 3, 4), (1, 4, 0)]:
            up, down = S.copy(), S.copy()
            up[b, i, j] += eps
            down[b, i, j] -= eps
            fd = (
                il.hadsell_contrastive_loss(up, m)[b] - il.hadsell_contrastive_loss(down, m)[b]
            ) / (2 * eps)
            assert fd == pytest.approx(G[b, i, j], abs=1e-7)
        D = np.sqrt(2 - 2 * S)
        off = ~np.eye(5, dtype=bool)
        assert np.all(G[:, off][D[:, off] >= m] == 0.0)
        assert np.all(G[:, off][D[:, off] < m] > 0.0)
        assert np.all(np.diagonal(G, axis1=1, axis2=2) == -1 / 5)


def test_hadsell_slope_refuses_a_negative_at_distance_zero():
    S = np.array([[[1.0, 1.0], [0.0, 1.0]]])
    with pytest.raises(ValueError, match="cosines"):
        il.hadsell_contrastive_grad(S)
