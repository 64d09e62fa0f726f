"""Tests for infonce_lib.bounds: InfoNCE, leave-one-out and NWJ on (B, K, K) critic scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from infonce_lib import (
    contrastive_log_probs,
    gaussian_field,
    infonce_bound,
    leave_one_out_bound,
    log_density_ratio_scores,
    mean_and_se,
    nwj_bound,
    optimal_critic_scores,
    patch_information,
    sample_patch_pairs,
)
from infonce_lib.bounds import _infonce_and_loo_terms
from tests.reference import logsumexp_list

# ---------------------------------------------------------------- references


def infonce_reference(F, over="x"):
    """Plain loops: (1/K) sum_i log(e^{F_ii} / ((1/K) sum_j e^{F_ij})), per batch."""
    out = []
    for batch in np.asarray(F, dtype=float).tolist():
        K = len(batch)
        terms = []
        for i in range(K):
            den = [batch[i][j] if over == "x" else batch[j][i] for j in range(K)]
            terms.append(batch[i][i] - (logsumexp_list(den) - math.log(K)))
        out.append(math.fsum(terms) / K)
    return np.array(out)


def loo_reference(F, over="x"):
    out = []
    for batch in np.asarray(F, dtype=float).tolist():
        K = len(batch)
        terms = []
        for i in range(K):
            den = [batch[i][j] if over == "x" else batch[j][i] for j in range(K) if j != i]
            terms.append(batch[i][i] - (logsumexp_list(den) - math.log(K - 1)))
        out.append(math.fsum(terms) / K)
    return np.array(out)


scores_strategy = st.integers(2, 7).flatmap(
    lambda K: arrays(
        np.float64,
        st.tuples(st.integers(1, 3), st.just(K), st.just(K)),
        elements=st.floats(-50, 50, allow_nan=False),
    )
)


# ---------------------------------------------------------------- values


@pytest.mark.parametrize("over", ["x", "y"])
def test_infonce_and_loo_match_loop_references(rng, over):
    F = rng.normal(scale=3.0, size=(4, 6, 6))
    np.testing.assert_allclose(infonce_bound(F, over=over), infonce_reference(F, over), rtol=1e-13)
    np.testing.assert_allclose(
        leave_one_out_bound(F, over=over), loo_reference(F, over), rtol=1e-13
    )


def test_over_y_is_over_x_of_the_transpose(rng):
    F = rng.normal(size=(3, 5, 5))
    np.testing.assert_array_equal(
        infonce_bound(F, over="y"), infonce_bound(F.transpose(0, 2, 1), over="x")
    )


def test_agrees_with_the_core(rng):
    F = rng.normal(size=(2, 8, 8))
    expected = math.log(8) + contrastive_log_probs(F, anchors="rows").mean(axis=-1)
    np.testing.assert_allclose(infonce_bound(F), expected, rtol=1e-14)
    expected = math.log(7) + contrastive_log_probs(
        F, anchors="columns", include_positive=False
    ).mean(axis=-1)
    np.testing.assert_allclose(leave_one_out_bound(F, over="y"), expected, rtol=1e-14)


def test_dominant_positive_costs_no_precision():
    # I = 12 nats: positives far above the negatives. log(sum - positive) would lose it all.
    F = np.array([[[1000.0, 0.0, 1.0], [0.0, 1000.0, 2.0], [3.0, 1.0, 1000.0]]])
    loo = leave_one_out_bound(F)[0]
    expected = (
        math.log(2)
        + (
            (1000 - math.log(1 + math.e))
            + (1000 - math.log(1 + math.e**2))
            + (1000 - math.log(math.e**3 + math.e))
        )
        / 3
    )
    assert loo == pytest.approx(expected, rel=1e-15)
    assert infonce_bound(F)[0] == pytest.approx(math.log(3), abs=1e-15)


def test_huge_scores_stay_finite_without_warnings():
    F = np.array([[[1e300, -1e300], [-1e300, 1e300]]])
    assert infonce_bound(F)[0] == pytest.approx(math.log(2))
    assert np.isfinite(leave_one_out_bound(F)[0])


def test_float32_and_lists_accepted(rng):
    F = rng.normal(size=(2, 3, 3))
    np.testing.assert_allclose(infonce_bound(F.astype(np.float32)), infonce_bound(F), rtol=1e-6)
    np.testing.assert_array_equal(infonce_bound(F.tolist()), infonce_bound(F))


@pytest.mark.parametrize("fn", [infonce_bound, leave_one_out_bound, nwj_bound])
def test_input_not_modified(rng, fn):
    F = rng.normal(size=(2, 4, 4))
    before = F.copy()
    fn(F)
    np.testing.assert_array_equal(F, before)


# ---------------------------------------------------------------- properties


@given(scores_strategy)
def test_every_batch_value_is_at_most_log_k(F):
    K = F.shape[-1]
    for over in ("x", "y"):
        values = infonce_bound(F, over=over)
        assert values.shape == (F.shape[0],)
        assert np.all(values <= math.log(K))


@given(scores_strategy)
def test_leave_one_out_is_at_least_infonce_when_positives_win(F):
    # Term by term, LOO >= InfoNCE exactly when e^{F_ii} >= the mean of the negatives'
    # e^{F_ij}; it holds when every positive scores highest in its row (and column).
    K = F.shape[-1]
    idx = np.arange(K)
    F = F.copy()
    F[:, idx, idx] = F.max(axis=(1, 2))[:, None]
    for over in ("x", "y"):
        assert np.all(leave_one_out_bound(F, over=over) >= infonce_bound(F, over=over) - 1e-12)


def test_leave_one_out_can_fall_below_infonce_for_a_poor_critic():
    # A negative outscoring its positive: the inequality is not a law of any critic.
    F = np.array([[[0.0, 1.0], [0.0, 0.0]]])
    assert leave_one_out_bound(F)[0] < infonce_bound(F)[0]


def test_leave_one_out_sandwiches_the_information_with_the_optimal_critic():
    field = gaussian_field(2)
    sigma = 0.5
    I = patch_information(sigma, field.eigenvalues)
    x, y = sample_patch_pairs(field, sigma, 2**14, seed=8)
    F = optimal_critic_scores(x, y, sigma, 16)
    nce, nce_se = mean_and_se(infonce_bound(F))
    loo, loo_se = mean_and_se(leave_one_out_bound(F))
    assert nce < I - 4 * nce_se and loo > I + 4 * loo_se


@given(scores_strategy, st.data())
def test_eq12_is_invariant_to_c_of_y_and_the_other_side_to_c_of_x(F, data):
    B, K, _ = F.shape
    c = data.draw(arrays(np.float64, (B, K), elements=st.floats(-1e3, 1e3)))
    plus_c_y = F + c[:, :, None]  # row i holds y_i: c(y_i) constant along the row
    plus_c_x = F + c[:, None, :]  # column j holds x_j
    np.testing.assert_allclose(infonce_bound(plus_c_y), infonce_bound(F), atol=1e-9)
    np.testing.assert_allclose(leave_one_out_bound(plus_c_y), leave_one_out_bound(F), atol=1e-9)
    np.testing.assert_allclose(
        infonce_bound(plus_c_x, over="y"), infonce_bound(F, over="y"), atol=1e-9
    )


def test_the_other_side_is_not_invariant(rng):
    # The invariance tests above could fail: c(x) does change the eq.-12 bound.
    F = rng.normal(size=(1, 5, 5))
    c = rng.normal(scale=3, size=(1, 5))
    assert abs(infonce_bound(F + c[:, None, :])[0] - infonce_bound(F)[0]) > 1e-3


@given(scores_strategy)
def test_fused_terms_match_the_core(F):
    for over, side in (("x", "rows"), ("y", "columns")):
        nce, loo = _infonce_and_loo_terms(F, over)
        np.testing.assert_allclose(nce, contrastive_log_probs(F, anchors=side), atol=1e-12)
        np.testing.assert_allclose(
            loo, contrastive_log_probs(F, anchors=side, include_positive=False), atol=1e-12
        )


def test_fused_terms_overwrite_only_when_asked(rng):
    F = rng.normal(size=(2, 4, 4))
    G = F.copy()
    _infonce_and_loo_terms(G, "x")
    np.testing.assert_array_equal(G, F)
    _infonce_and_loo_terms(G, "x", overwrite=True)
    assert not np.array_equal(G, F)


# ---------------------------------------------------------------- NWJ


def test_nwj_reference(rng):
    F = rng.normal(size=(3, 4, 4))
    for b in range(3):
        off = [math.exp(F[b, i, j]) for i in range(4) for j in range(4) if i != j]
        expected = np.mean(np.diag(F[b])) - math.exp(-1) * math.fsum(off) / 12
        assert nwj_bound(F)[b] == pytest.approx(expected, rel=1e-13)


def test_nwj_is_tight_at_the_optimal_critic():
    # f* = 1 + log p(y|x)/p(y) on Gaussian patches with I = 1 nat: the estimate is I.
    field = gaussian_field(2)
    sigma = 0.5
    I = patch_information(sigma, field.eigenvalues)
    x, y = sample_patch_pairs(field, sigma, 2**15, seed=3)
    F = 1.0 + log_density_ratio_scores(x, y, field, sigma, 64)
    mean, se = mean_and_se(nwj_bound(F))
    assert abs(mean - I) < 4 * se
    worse, se2 = mean_and_se(nwj_bound(F + 0.5))  # a shifted critic is strictly worse
    assert worse < I - 4 * se2


def test_nwj_overflow_gives_minus_infinity_without_warnings():
    F = np.array([[[0.0, 800.0], [800.0, 0.0]]])
    assert nwj_bound(F)[0] == -np.inf


# ---------------------------------------------------------------- mean and SE


def test_mean_and_se_uses_ddof_1():
    v = np.array([1.0, 4.0, 2.0, 8.0, 5.0])
    mean, se = mean_and_se(v)
    assert mean == pytest.approx(4.0)
    assert se == pytest.approx(math.sqrt(np.var(v, ddof=1) / 5), rel=1e-15)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("fn", [infonce_bound, leave_one_out_bound, nwj_bound])
def test_bad_scores_raise(fn):
    with pytest.raises(ValueError, match="square"):
        fn(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="K >= 2"):
        fn(np.zeros((2, 1, 1)))
    with pytest.raises(ValueError, match="3-D"):
        fn(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="finite"):
        fn(np.full((1, 2, 2), np.nan))
    with pytest.raises(ValueError, match="empty"):
        fn(np.zeros((0, 2, 2)))
    with pytest.raises(TypeError):
        fn([[["a", "b"], ["c", "d"]]])


def test_bad_side_raises():
    with pytest.raises(ValueError, match="over must be"):
        infonce_bound(np.zeros((1, 2, 2)), over="rows")


def test_mean_and_se_needs_two_values():
    with pytest.raises(ValueError, match="at least 2"):
        mean_and_se([1.0])


# ---------------------------------------------------------------- edges an outside suite found


def test_finite_terms_whose_sum_overflows_still_give_the_batch_mean():
    # Positives 1.6e308 below the negatives: every term about -1.6e308, their sum beyond
    # float64, their mean not (it failed with "overflowed" before).
    big = 8e307
    F = np.where(np.eye(3, dtype=bool), -big, big)[None]
    want = math.log(3) - 2 * big  # log terms are far below an ulp of 1.6e308
    assert infonce_bound(F)[0] == pytest.approx(want, rel=1e-15)
    assert infonce_bound(F, over="y")[0] == pytest.approx(want, rel=1e-15)
    assert leave_one_out_bound(F)[0] == pytest.approx(-2 * big, rel=1e-15)


def test_mean_and_se_of_values_near_the_float64_limit():
    m, se = mean_and_se([1.5e308, 1.5e308, 1.2e308])  # the sum overflows, the mean does not
    assert m == pytest.approx(1.4e308, rel=1e-15)
    assert se == pytest.approx(1e307, rel=1e-12)  # sd 1.732e307 / sqrt(3)


def test_a_batch_near_the_float64_limit_leaves_the_others_bit_for_bit(rng):
    # The mean of batch 0 needs the overflow-free route; batch 1 keeps its plain mean, the
    # same bits as on its own (each batch's value is independent of the others).
    F = rng.normal(size=(2, 5, 5))
    F[0] += np.where(np.eye(5, dtype=bool), -8e307, 8e307)
    both = infonce_bound(F)
    assert both[0] == pytest.approx(math.log(5) - 1.6e308, rel=1e-15)
    np.testing.assert_array_equal(both[1:], infonce_bound(F[1:]))
    np.testing.assert_array_equal(nwj_bound(F)[1:], nwj_bound(F[1:]))


def test_nwj_below_the_float64_range_is_minus_inf_without_a_warning():
    # mean positive -1.7e308 minus a marginal term e^708: below -1.8e308, so -inf
    # (documented); pytest turns a RuntimeWarning into an error.
    F = np.full((1, 4, 4), 709.0)
    F[0, np.arange(4), np.arange(4)] = -1.7e308
    assert nwj_bound(F)[0] == -math.inf
