"""Tests for infonce_lib.temperature (the cosine cap, I_NCE(beta), its derivatives, the best
temperature, softmax weights, the tau -> 0 limit, margin losses). The cosine-temperature
experiment is tested in tests/test_experiments.py."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
import scipy.special
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from infonce_lib import (
    _concave_search,
    best_temperature,
    cosine_cap,
    cosine_scores,
    gaussian_field,
    hadsell_contrastive_loss,
    hardest_negative_triplet_loss,
    infonce_at_beta,
    infonce_beta_derivatives,
    infonce_bound,
    positive_margins,
    sample_patch_pairs,
    sigma_for_information,
    softmax_weights,
    tau_scaled_loss,
    temperature,
)


def decimal_cap(K, tau):
    """The cap in 50-digit decimal arithmetic: a reference for every K and tau."""
    getcontext().prec = 50
    K, tau = Decimal(K), Decimal(tau)
    return float(K.ln() - (1 + (K - 1) * (Decimal(-2) / tau).exp()).ln())


def scores_cases(max_k=8, max_b=3):
    """(K, cosines of shape (B, K, K) in [-1, 1]) for hypothesis."""
    return st.integers(2, max_k).flatmap(
        lambda K: st.tuples(
            st.just(K),
            st.integers(1, max_b).flatmap(
                lambda B: arrays(np.float64, (B, K, K), elements=st.floats(-1, 1))
            ),
        )
    )


log_taus = st.floats(-3, 3).map(lambda u: 10.0**u)  # tau from 1e-3 to 1e3


# ---------------------------------------------------------------- the cap


def test_cap_values_at_k_256():
    got = [round(cosine_cap(256, t), 3) for t in (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)]
    assert got == [5.545, 5.545, 5.545, 5.534, 3.810, 1.975]


@pytest.mark.parametrize("K", [2, 3, 17, 256, 10**6, 10**15])
@pytest.mark.parametrize("tau", [1e-3, 0.05, 0.3, 1.0, 1.99, 2.0, 2.01, 5.0, 40.0, 1e6])
def test_cap_matches_a_high_precision_reference(K, tau):
    assert cosine_cap(K, tau) == pytest.approx(decimal_cap(K, tau), rel=1e-13, abs=1e-300)


def test_cap_extremes_are_stable():
    assert cosine_cap(256, 1e-300) == math.log(256)  # exp(-2/tau) underflows harmlessly
    assert cosine_cap(256, 5e-324) == math.log(256)  # 2/tau overflows to inf: no warning
    big = 1e30
    assert cosine_cap(256, big) == pytest.approx(2 * 255 / (256 * big), rel=1e-12)
    assert cosine_cap(2, 1e300) > 0.0
    taus = np.array([1e-3, 0.1, 1.0, 10.0, 1e20])
    arr = cosine_cap(64, taus)
    assert arr.shape == (5,) and np.all(np.diff(arr) < 0) and np.all(arr > 0)
    np.testing.assert_array_equal(arr, [cosine_cap(64, t) for t in taus])
    assert cosine_cap(64, np.array([[0.5]])).shape == (1, 1)


@given(scores_cases(max_k=12), log_taus)
def test_cap_never_exceeded_by_bounded_scores(case, tau):
    K, S = case
    assert np.all(infonce_at_beta(S, 1 / tau) <= cosine_cap(K, tau) + 1e-12)


@given(st.integers(2, 4096), log_taus, st.integers(0, 2**32 - 1))
def test_cap_never_exceeded_at_any_batch_size(K, tau, seed):
    # One row of K cosines per batch would need K x K scores; a positive at +1 and random
    # negatives in [-1, 1] is the hardest case short of the extreme critic.
    rng = np.random.default_rng(seed)
    k = min(K, 64)
    S = rng.uniform(-1, 1, size=(1, k, k))
    np.fill_diagonal(S[0], 1.0)
    assert infonce_at_beta(S, 1 / tau)[0] <= cosine_cap(k, tau) + 1e-12
    assert cosine_cap(K, tau) <= math.log(K) + 1e-15


def test_cap_is_attained_by_the_extreme_critic():
    K = 8
    S = 2 * np.eye(K)[None] - 1  # positives +1, negatives -1
    for tau in (0.05, 0.5, 3.0):
        assert infonce_at_beta(S, 1 / tau)[0] == pytest.approx(cosine_cap(K, tau), rel=1e-13)


# ---------------------------------------------------------------- I_NCE(beta)


def patch_cosines(M=4096, K=64, I=6.0):
    f = gaussian_field()
    sigma = sigma_for_information(I, f.eigenvalues)
    x, y = sample_patch_pairs(f, sigma, M, seed=2)
    return cosine_scores(x, y, K)


def test_infonce_at_beta_is_infonce_of_the_scaled_critic():
    S = patch_cosines()
    for beta in (0.5, 7.0, 33.0, 500.0):
        np.testing.assert_allclose(infonce_at_beta(S, beta), infonce_bound(beta * S), atol=1e-12)


def test_infonce_at_beta_leaves_its_input_alone():
    S = patch_cosines(M=512)
    before = S.copy()
    infonce_at_beta(S, 3.0)
    infonce_beta_derivatives(S, 3.0)
    softmax_weights(S, 0.1, negatives_only=True)
    tau_scaled_loss(S, 0.1)
    np.testing.assert_array_equal(S, before)


def test_cosine_scores_layout():
    x = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [3.0, 4.0]])
    y = np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 5.0], [-4.0, 3.0]])
    S = cosine_scores(x, y, 2)
    assert S.shape == (2, 2, 2)
    assert S[0, 1, 0] == pytest.approx(1 / math.sqrt(2))  # y_1 against x_0
    assert S[1, 1, 1] == pytest.approx(0.0)  # y_3 against x_3: orthogonal
    assert S[1, 0, 1] == pytest.approx(4 / 5)  # y_2 against x_3


# ---------------------------------------------------------------- derivatives in beta


@given(scores_cases(), st.floats(-1, 2.7).map(lambda u: 10.0**u))
def test_second_derivative_is_never_positive(case, beta):
    _, S = case
    d = infonce_beta_derivatives(S, beta)
    assert np.all(d.second <= 0.0)  # exactly: a centred, weighted sum of squares
    np.testing.assert_array_equal(d.value, infonce_at_beta(S, beta))


@given(scores_cases(), st.floats(0.2, 30.0))
def test_derivatives_match_central_differences(case, beta):
    _, S = case
    h = 1e-4 * beta
    d = infonce_beta_derivatives(S, beta)
    up, down = infonce_beta_derivatives(S, beta + h), infonce_beta_derivatives(S, beta - h)
    fd1 = (up.value - down.value) / (2 * h)
    fd2 = (up.first - down.first) / (2 * h)
    # Central differences err by O(h^2) times the next derivatives (scores in [-1, 1]).
    np.testing.assert_allclose(d.first, fd1, rtol=0, atol=1e-6)
    np.testing.assert_allclose(d.second, fd2, rtol=0, atol=1e-6)


def test_derivatives_by_hand():
    # One row [0.2 | 0.5] at beta = 3: p = softmax(3 * [0.2, 0.5]).
    S = np.array([[[0.2, 0.5], [0.5, 0.2]]])
    p = scipy.special.softmax(3 * np.array([0.2, 0.5]))
    mean = p @ [0.2, 0.5]
    var = p @ (np.array([0.2, 0.5]) - mean) ** 2
    d = infonce_beta_derivatives(S, 3.0)
    assert d.first[0] == pytest.approx(0.2 - mean, rel=1e-14)
    assert d.second[0] == pytest.approx(-var, rel=1e-13)


def test_concave_on_patches_and_the_slope_falls():
    S = patch_cosines(M=2048)
    betas = np.geomspace(0.5, 2000, 40)
    d = [infonce_beta_derivatives(S, b) for b in betas]
    mean_first = np.array([x.first.mean() for x in d])
    assert all(np.all(x.second <= 0) for x in d)
    assert np.all(np.diff(mean_first) <= 1e-15)  # a concave function's slope never rises


def test_unbounded_fall_when_a_negative_wins():
    # Row 0: a negative (0.5) beats the positive (0.2); row 1: the positive wins.
    S = np.array([[[0.2, 0.5, -0.1], [0.3, 0.9, 0.0], [0.1, -0.4, 0.6]]])
    limit = -hardest_negative_triplet_loss(S)[0]
    assert limit == pytest.approx(-0.1, abs=1e-15)
    slopes = [infonce_beta_derivatives(S, b).first[0] for b in (10.0, 100.0, 1e3, 1e4)]
    assert np.all(np.diff(slopes) <= 0) and abs(slopes[-1] - limit) < 1e-12
    v1, v2 = infonce_at_beta(S, 1e4)[0], infonce_at_beta(S, 2e4)[0]
    assert (v2 - v1) / 1e4 == pytest.approx(limit, abs=1e-12)  # linear fall
    assert infonce_at_beta(S, 1e308)[0] < -1e306  # still finite-or-minus-infinity, no warning


def test_no_negative_wins_the_bound_rises_to_log_k():
    S = np.full((1, 4, 4), 0.1) + 0.8 * np.eye(4)
    d = infonce_beta_derivatives(S, 200.0)
    assert np.all(d.first > 0) and d.value[0] == pytest.approx(math.log(4), abs=1e-12)


# ---------------------------------------------------------------- best temperature


def test_best_temperature_equals_a_fine_grid_search():
    S = patch_cosines()
    best = best_temperature(S)

    def objective(b):
        return infonce_at_beta(S, b).mean()

    coarse = np.geomspace(0.5, 500, 401)
    k = int(np.argmax([objective(b) for b in coarse]))
    assert 0 < k < len(coarse) - 1  # an interior maximum
    fine = np.linspace(coarse[k - 1], coarse[k + 1], 401)
    values = np.array([objective(b) for b in fine])
    j = int(np.argmax(values))
    assert abs(best.beta - fine[j]) <= fine[1] - fine[0]
    assert best.infonce >= values[j] - 1e-9
    assert best.tau == pytest.approx(1 / best.beta)
    assert best.infonce == pytest.approx(infonce_at_beta(S, best.beta).mean(), abs=1e-14)
    # The first-order condition: the mean slope vanishes at the optimum.
    assert abs(infonce_beta_derivatives(S, best.beta).first.mean()) < 1e-5


def test_best_temperature_at_the_boundary():
    # Positives 0.9, negatives 0.1: the bound rises with beta all the way.
    S = np.full((2, 4, 4), 0.1) + 0.8 * np.eye(4)
    assert best_temperature(S, (0.5, 5.0)).beta == pytest.approx(5.0, abs=1e-3)


def _brent(S, lo=0.5, hi=500.0):
    """The previous search, derivative-free Brent on the mean bound, to a tight tolerance."""
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(
        lambda b: -infonce_at_beta(S, b).mean(),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return res.x, -res.fun


@pytest.mark.parametrize("I", [1.0, 3.0, 6.0, 12.0])
@pytest.mark.parametrize("M", [1024, 8192])  # 1024 rows: no warm start; 8192: warm start
def test_newton_agrees_with_brent_on_patches(I, M):
    S = patch_cosines(M=M, K=64, I=I)
    best = best_temperature(S)
    beta, value = _brent(S)
    assert best.beta == pytest.approx(beta, rel=2e-6)
    assert best.infonce >= value - 1e-12  # never worse than Brent, to round-off
    d = infonce_beta_derivatives(S, best.beta)
    # Newton's own criterion: the step from the returned beta is below 1e-6 beta.
    assert abs(d.first.mean() / d.second.mean()) <= 1e-6 * best.beta
    assert best.evaluations <= (12 if M == 8192 else 9)  # Brent needed 15 to 17


def _count_passes(monkeypatch):
    """Count the passes over the scores of every _BetaObjective (full or warm start)."""
    calls = []
    original = temperature._BetaObjective._row_derivatives

    def counted(self, beta, rows=None):
        calls.append(rows)
        return original(self, beta, rows)

    monkeypatch.setattr(temperature._BetaObjective, "_row_derivatives", counted)
    return calls


@pytest.mark.parametrize("M", [1024, 8192])
def test_evaluations_are_counted_honestly(monkeypatch, M):
    S = patch_cosines(M=M, K=64)
    calls = _count_passes(monkeypatch)
    best = best_temperature(S)
    assert best.evaluations == len(calls)
    warm = [r for r in calls if r is not None]
    assert all(r == M // 16 for r in warm) and bool(warm) == (M >= 4096)
    # The whole set: a few Newton steps from the warm start, a few more from the middle
    assert len(calls) - len(warm) <= (5 if warm else 10)


@given(scores_cases(max_k=6, max_b=3), st.floats(-1, 2), st.floats(0.2, 3))
def test_best_temperature_beats_a_grid(case, log_lo, log_width):
    _, S = case
    lo, hi = 10.0**log_lo, 10.0 ** (log_lo + log_width)
    best = best_temperature(S, (lo, hi))
    assert lo <= best.beta <= hi
    grid = np.geomspace(lo, hi, 60)
    values = [infonce_at_beta(S, b).mean() for b in grid]
    assert best.infonce >= max(values) - 1e-9
    assert best.infonce == pytest.approx(infonce_at_beta(S, best.beta).mean(), abs=1e-13)
    d = infonce_beta_derivatives(S, best.beta)
    g, h = d.first.mean(), d.second.mean()
    if lo < best.beta < hi:
        assert g == 0.0 or abs(g) <= 1e-6 * best.beta * abs(h) or hi / lo < 1 + 1e-6
    elif best.beta == hi:
        assert g >= 0.0 or abs(g) <= 1e-6 * hi * abs(h)
    else:
        assert g <= 0.0 or abs(g) <= 1e-6 * lo * abs(h)


def test_best_temperature_at_the_lower_end():
    # Every positive below its negatives: the slope is negative at every beta.
    S = np.full((1, 3, 3), 0.5) - 0.4 * np.eye(3)
    best = best_temperature(S, (0.5, 50.0))
    assert best.beta == 0.5 and best.evaluations <= 5  # exactly the end, in a few steps
    assert best.at_end and best.slope < 0  # and the result says it is the end


def test_best_temperature_of_a_flat_bound():
    # Every score equal: the bound is 0 at every beta, slope and curvature 0; any beta is
    # best, and a flat stretch sends the search to the upper end, where it stops.
    best = best_temperature(np.zeros((3, 4, 4)), (0.5, 50.0))
    assert best.infonce == 0.0 and best.evaluations == 2 and best.beta == 50.0
    assert best.at_end and best.slope == 0.0


def test_best_temperature_when_the_slope_underflows_on_a_rising_bound():
    # Every positive wins by far: the slope is positive but underflows to 0 at large
    # beta. The maximiser on the interval is its upper end, and the result says so.
    S = np.full((1, 3, 3), -0.5) + 1.5 * np.eye(3)
    assert infonce_beta_derivatives(S, 1e4).first[0] == 0.0  # underflowed
    best = best_temperature(S, (0.5, 1e6))
    assert best.beta == 1e6 and best.at_end and best.slope >= 0.0
    assert best.infonce == pytest.approx(math.log(3), abs=1e-12)


def test_best_temperature_over_a_huge_interval_without_warnings():
    S = patch_cosines(M=512, K=16)
    best = best_temperature(S, (1e-3, 1e300))
    assert best.beta == pytest.approx(_brent(S)[0], rel=2e-6)
    assert best.evaluations < 30


def test_newton_search_safeguards_on_a_creeping_slope():
    # Slope e^(-b/5) - e^(-12): convex and falling, root at 60. Newton from the left creeps
    # by about 5 per step; the safeguard bisects instead and still converges.
    points = []

    def evaluate(b):
        points.append(b)
        return 0.0, math.exp(-b / 5) - math.exp(-12.0), -math.exp(-b / 5) / 5

    beta, _, n = _concave_search._newton_search(evaluate, 0.5, 1e4, 1.0, 1e-10)
    assert beta == pytest.approx(60.0, rel=1e-9) and n == len(points) < 25
    assert max(points) > 60  # a bisection step went past the root


@pytest.mark.parametrize("beta", [700.0, 1e4, 1e300])
def test_arguments_below_exp_underflow_give_the_same_bits(beta):
    # The objective sets exp arguments below -746 to -inf (a faster exact 0): the values
    # must be those of the plain formula, bit for bit.
    S = patch_cosines(M=256, K=16)
    D = S - S.max(axis=-1, keepdims=True)
    with np.errstate(under="ignore", over="ignore"):
        E = np.exp(D * beta)
    assert E.min() == 0.0  # some arguments did underflow
    obj = temperature._BetaObjective(S.copy())
    value, first, _ = obj.derivatives(beta)
    den = E @ np.ones(16)
    idx = np.arange(16)
    with np.errstate(over="ignore"):
        want = math.log(16) + (beta * D[:, idx, idx] - np.log(den)).mean(axis=-1)
    assert np.array_equal(value, want)
    assert np.array_equal(first, (D[:, idx, idx] - (E * D) @ np.ones(16) / den).mean(-1))
    tau = 1 / beta
    with np.errstate(under="ignore", over="ignore"):
        E_tau = np.exp(D / tau)
    want_log = np.log(E_tau @ np.ones(16))
    assert np.array_equal(
        temperature._BetaObjective(S.copy()).log_denominators_at_tau(tau), want_log
    )


def test_remembered_values_are_the_computed_ones_bit_for_bit():
    S = patch_cosines(M=1024, K=32)
    fresh = temperature._BetaObjective(S.copy(), overwrite=True)
    values = fresh.batch_values_many([2.0, 33.0])
    d = temperature._BetaObjective(S.copy()).derivatives(33.0)
    assert np.array_equal(values[1], d[0])  # the two routes to the value agree exactly
    again = temperature._BetaObjective(S.copy(), overwrite=True)
    first = again.derivatives(33.0)
    assert np.array_equal(again.batch_values(33.0), values[1])  # from memory
    assert np.array_equal(again.batch_values_many([2.0, 33.0]), values)  # 2.0 computed now
    first[0][:] = 0.0  # a caller's copy: the memory is untouched
    assert np.array_equal(again.derivatives(33.0)[0], d[0])


# ---------------------------------------------------------------- softmax weights


@given(scores_cases(), log_taus, st.booleans())
def test_softmax_weights_sum_to_one(case, tau, negatives_only):
    K, S = case
    W = softmax_weights(S, tau, negatives_only=negatives_only)
    assert W.shape == S.shape and np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    if negatives_only:
        assert np.all(W[:, np.arange(K), np.arange(K)] == 0.0)


def test_softmax_weights_against_the_formula_and_the_limits():
    rng = np.random.default_rng(5)
    S = rng.uniform(-1, 1, size=(2, 5, 5))
    tau = 0.3
    P = np.exp(S / tau) / np.exp(S / tau).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(softmax_weights(S, tau), P, rtol=1e-13)
    Q = np.exp(S / tau) * (1 - np.eye(5))
    Q /= Q.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(softmax_weights(S, tau, negatives_only=True), Q, rtol=1e-13)
    # tau -> 0: all the weight on each row's largest score; tau -> inf: uniform.
    cold = softmax_weights(S, 1e-300)
    np.testing.assert_array_equal(cold, np.eye(5)[S.argmax(axis=-1)])
    np.testing.assert_allclose(softmax_weights(S, 1e12), 0.2, rtol=1e-10)


def test_softmax_weights_split_ties_equally():
    S = np.array([[[0.5, 0.9, 0.9], [0.0, 1.0, 0.0], [0.2, 0.2, 0.2]]])
    W = softmax_weights(S, 1e-9, negatives_only=True)
    np.testing.assert_allclose(W[0, 0], [0.0, 0.5, 0.5])
    np.testing.assert_allclose(W[0, 2], [0.5, 0.5, 0.0])


# ---------------------------------------------------------------- the limit tau -> 0


def test_margins_and_triplet_by_hand():
    S = np.array([[[0.2, 0.5, -0.1], [0.3, 0.9, 0.0], [0.1, -0.4, 0.6]]])
    np.testing.assert_allclose(positive_margins(S), [[-0.3, 0.6, 0.5]], atol=1e-15)
    assert hardest_negative_triplet_loss(S)[0] == pytest.approx(0.1, abs=1e-15)


@given(scores_cases(), log_taus)
def test_tau_scaled_loss_is_sandwiched_by_the_triplet_loss(case, tau):
    K, S = case
    T = hardest_negative_triplet_loss(S)
    scaled = tau_scaled_loss(S, tau)
    assert np.all(scaled >= T - 1e-12)
    assert np.all(scaled <= T + tau * math.log(K) + 1e-12)


@given(scores_cases(), st.floats(0.05, 20.0))
def test_tau_scaled_loss_is_tau_times_the_loss(case, tau):
    K, S = case
    loss = math.log(K) - infonce_at_beta(S, 1 / tau)
    np.testing.assert_allclose(tau_scaled_loss(S, tau), tau * loss, rtol=1e-10, atol=1e-12)


def test_tau_scaled_loss_converges_to_the_triplet_loss():
    S = patch_cosines(M=1024)
    T = hardest_negative_triplet_loss(S)
    K = S.shape[-1]
    gaps = []
    for tau in (1.0, 0.1, 1e-2, 1e-3, 1e-4, 1e-6):
        gap = np.abs(tau_scaled_loss(S, tau) - T).max()
        assert gap <= tau * math.log(K) + 1e-12
        gaps.append(gap)
    assert np.all(np.diff(gaps) < 0) and gaps[-1] < 1e-5
    np.testing.assert_allclose(tau_scaled_loss(S, 1e-300), T, rtol=0, atol=1e-15)


# ---------------------------------------------------------------- Hadsell's margin loss


def test_hadsell_by_hand():
    # Positives at cosine 0.9 (D^2 = 0.2), one negative at cosine 0.5 (D = 1).
    S = np.array([[[0.9, 0.5], [-1.0, 0.9]]])
    m = 1.5
    row0 = 0.5 * 0.2 + 0.5 * (m - 1.0) ** 2
    row1 = 0.5 * 0.2 + 0.0  # D = 2 > m
    assert hadsell_contrastive_loss(S, m)[0] == pytest.approx((row0 + row1) / 2, rel=1e-14)


def test_hadsell_ignores_negatives_beyond_the_margin_infonce_does_not():
    S = np.array([[[1.0, 0.1, -0.2], [0.1, 1.0, 0.0], [-0.2, 0.0, 1.0]]])
    farther = S.copy()
    farther[0, 0, 2] = farther[0, 2, 0] = -0.9  # a negative already beyond m = 1 moves away
    assert hadsell_contrastive_loss(S, 1.0)[0] == 0.0
    assert hadsell_contrastive_loss(farther, 1.0)[0] == 0.0
    assert infonce_at_beta(farther, 10.0)[0] > infonce_at_beta(S, 10.0)[0]
    assert np.all(softmax_weights(S, 0.1, negatives_only=True)[0] > 0 - np.eye(3))


def test_hadsell_at_cosine_one_has_zero_distance():
    S = np.array([[[1.0 + 1e-13, 1.0], [1.0, 1.0]]])  # round-off above 1
    # Each anchor: its positive at D = 0 pays 0, its negative at D = 0 pays (0.5 - 0)^2 / 2.
    assert hadsell_contrastive_loss(S, 0.5)[0] == pytest.approx(0.5 * 0.5**2, rel=1e-15)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: cosine_cap(1, 1.0), ValueError, "batch_size must be >= 2"),
        (lambda: cosine_cap(0, 1.0), ValueError, "batch_size must be >= 2"),
        (lambda: cosine_cap(2.0, 1.0), TypeError, "batch_size must be an integer"),
        (lambda: cosine_cap(4, 0.0), ValueError, "tau must be > 0"),
        (lambda: cosine_cap(4, -1.0), ValueError, "tau must be > 0"),
        (lambda: cosine_cap(4, [1.0, -1.0]), ValueError, "tau must be > 0"),
        (lambda: cosine_cap(4, float("inf")), ValueError, "tau must be finite"),
        (lambda: cosine_cap(4, [0.1, float("nan")]), ValueError, "tau must be finite"),
        (lambda: infonce_at_beta(np.full((1, 2, 2), 1.5), 1.0), ValueError, r"\[-1, 1\]"),
        (lambda: infonce_at_beta(np.zeros((1, 2, 3)), 1.0), ValueError, r"shape \(B, K, K\)"),
        (lambda: infonce_at_beta(np.zeros((2, 2)), 1.0), ValueError, "cosines must be 3-D"),
        (lambda: infonce_at_beta(np.zeros((3, 1, 1)), 1.0), ValueError, "K >= 2"),
        (lambda: infonce_at_beta(np.zeros((1, 2, 2)), -1.0), ValueError, "beta must be > 0"),
        (lambda: infonce_at_beta(np.zeros((1, 2, 2)), "2"), TypeError, "beta must be a real"),
        (
            lambda: infonce_beta_derivatives(np.full((1, 2, 2), -1.01), 1.0),
            ValueError,
            r"\[-1, 1\]",
        ),
        (lambda: infonce_beta_derivatives(np.zeros((1, 2, 2)), 0.0), ValueError, "beta must"),
        (
            lambda: infonce_beta_derivatives(np.full((1, 2, 2), np.nan), 1.0),
            ValueError,
            "cosines must be finite",
        ),
        (lambda: best_temperature(np.zeros((1, 2, 2)), (5.0, 1.0)), ValueError, "low < high"),
        (lambda: best_temperature(np.zeros((1, 2, 2)), (0.0, 1.0)), ValueError, r"\[0\] must"),
        (lambda: softmax_weights(np.zeros((1, 2, 2)), 0.0), ValueError, "tau must be > 0"),
        (lambda: softmax_weights(np.full((1, 2, 2), 2.0), 1.0), ValueError, r"\[-1, 1\]"),
        (lambda: tau_scaled_loss(np.zeros((1, 2, 2)), -0.1), ValueError, "tau must be > 0"),
        (lambda: tau_scaled_loss(np.zeros((1, 1, 1)), 0.1), ValueError, "K >= 2"),
        (lambda: positive_margins(np.ones((1, 2, 2), dtype=bool)), TypeError, "booleans"),
        (lambda: hardest_negative_triplet_loss([[[0.0, 3.0], [0.0, 0.0]]]), ValueError, r"\[-1"),
        (lambda: hadsell_contrastive_loss(np.zeros((1, 2, 2)), 0.0), ValueError, "margin"),
        (lambda: cosine_scores(np.zeros((2, 2)), np.ones((2, 2)), 2), ValueError, "zero rows"),
        (
            lambda: cosine_scores(np.ones((6, 2)), np.ones((6, 2)), 4),
            ValueError,
            "batch_size must divide",
        ),
    ],
)
def test_bad_inputs_raise(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_tau_scaled_loss_at_subnormal_tau():
    S = np.array([[[0.2, 0.5, -0.1], [0.3, 0.9, 0.0], [0.1, -0.4, 0.6]]])
    T = hardest_negative_triplet_loss(S)
    np.testing.assert_array_equal(tau_scaled_loss(S, 5e-324), T)  # 1/tau = inf: no NaN
    assert np.all(np.isfinite(softmax_weights(S, 5e-324)))


# ---------------------------------------------------------------- means near the float64 limit


def _one_sided(K=20, B=1):
    """Every positive at -1 and every negative at +1: each row's gap is 2."""
    return np.ones((B, K, K)) - 2.0 * np.eye(K)


@pytest.mark.parametrize("beta", [2e307, 8.5e307])
def test_infonce_at_huge_beta_whose_terms_add_up_beyond_float64(beta):
    # Each term beta * (-2) - log 19 is finite, their sum over 20 rows is not, the mean is:
    # about -2 beta (it raised "the bound is below -1.8e308 there" before, falsely).
    S = _one_sided()
    want = math.log(20) - 2.0 * beta - math.log(19)
    assert infonce_at_beta(S, beta)[0] == pytest.approx(want, rel=1e-15)
    d = infonce_beta_derivatives(S, beta)
    assert d.value[0] == pytest.approx(want, rel=1e-15)
    assert d.first[0] == pytest.approx(-2.0, rel=1e-15) and d.second[0] == 0.0


def test_infonce_at_beta_whose_term_overflows_but_mean_does_not():
    # One row with a gap of 2 at beta = 1.5e308: that term is beyond float64, the mean over
    # 20 rows (-1.5e307) is not.
    S = np.ones((1, 20, 20))
    S[0, 0, 0] = -1.0
    assert infonce_at_beta(S, 1.5e308)[0] == pytest.approx(-1.5e307, rel=1e-15)
    assert infonce_beta_derivatives(S, 1.5e308).value[0] == pytest.approx(-1.5e307, rel=1e-15)


def test_infonce_at_beta_below_the_float64_range_raises_truthfully():
    with pytest.raises(ValueError, match=r"beta = 1e\+308.*below -1.8e308"):
        infonce_at_beta(_one_sided(), 1e308)  # the mean itself is -2e308


def test_best_temperature_reports_a_mean_bound_near_the_float64_limit():
    # three batches whose values, about -1.6e308, add up beyond float64
    best = best_temperature(_one_sided(B=3), (8e307, 8.5e307))
    assert best.beta == 8e307  # the slope is -2 everywhere: the lower end
    assert best.infonce == pytest.approx(math.log(20 / 19) - 1.6e308, rel=1e-15)


def test_hadsell_with_violations_whose_sum_overflows():
    # margin 4e153: each squared violation (about 1.6e307) is finite, a row's sum of 19 is
    # not, the batch's loss (19/2 of them, 1.52e308) is.
    S = _one_sided(B=2)
    S[1] = 0.3
    m = 4e153
    want = 9.5 * m * m + 2.0  # (19 (m - 0)^2 + D^2 = 4) / 2 per row, the same in every row
    np.testing.assert_allclose(hadsell_contrastive_loss(S, m)[0], want, rtol=1e-14)
    np.testing.assert_array_equal(
        hadsell_contrastive_loss(S, m)[1:], hadsell_contrastive_loss(S[1:], m)
    )


def test_hadsell_loss_beyond_float64_raises_without_a_warning():
    # margin 1.3e154, K = 20: the batch's loss is about 1.6e309 (it leaked a RuntimeWarning)
    with pytest.raises(ValueError, match=r"Hadsell loss at margin = 1.3e\+154"):
        hadsell_contrastive_loss(_one_sided(), 1.3e154)
