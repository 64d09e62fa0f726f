"""Tests for infonce_lib.temperature: the cosine cap, I_NCE(beta) and the best temperature."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from infonce_lib import (
    best_temperature,
    cosine_cap,
    cosine_scores,
    gaussian_field,
    infonce_at_beta,
    infonce_bound,
    sample_patch_pairs,
    sigma_for_information,
)


def naive_cap(K, tau):
    return math.log(K) - math.log(1 + (K - 1) * math.exp(-2 / tau))


# ---------------------------------------------------------------- the cap


def test_cap_values_at_k_256():
    got = [round(cosine_cap(256, t), 3) for t in (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)]
    assert got == [5.545, 5.545, 5.545, 5.534, 3.810, 1.975]


@pytest.mark.parametrize("K", [1, 2, 17, 256, 10**6])
@pytest.mark.parametrize("tau", [0.05, 0.3, 1.0, 1.99, 2.0, 2.01, 5.0, 40.0])
def test_cap_matches_the_formula_where_it_is_safe(K, tau):
    assert cosine_cap(K, tau) == pytest.approx(naive_cap(K, tau), rel=1e-12, abs=1e-15)


def test_cap_extremes_are_stable():
    assert cosine_cap(256, 1e-300) == math.log(256)  # exp(-2/tau) underflows harmlessly
    big = 1e30
    assert cosine_cap(256, big) == pytest.approx(2 * 255 / (256 * big), rel=1e-12)
    assert cosine_cap(1, 0.1) == 0.0
    taus = np.array([1e-3, 0.1, 1.0, 10.0, 1e20])
    arr = cosine_cap(64, taus)
    assert arr.shape == (5,) and np.all(np.diff(arr) < 0) and np.all(arr > 0)
    np.testing.assert_array_equal(arr, [cosine_cap(64, t) for t in taus])


@given(
    st.integers(2, 6).flatmap(
        lambda K: st.tuples(
            st.just(K),
            arrays(np.float64, (2, K, K), elements=st.floats(-1, 1)),
            st.floats(0.01, 100.0),
        )
    )
)
def test_cap_never_exceeded_by_bounded_scores(case):
    K, S, tau = case
    assert np.all(infonce_at_beta(S, 1 / tau) <= cosine_cap(K, tau) + 1e-12)


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


def test_infonce_is_concave_in_beta():
    S = patch_cosines(M=1024)
    betas = np.linspace(0.5, 200, 41)
    means = np.array([infonce_at_beta(S, b).mean() for b in betas])
    assert np.all(np.diff(means, 2) <= 1e-12)


def test_cosine_scores_layout():
    x = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [3.0, 4.0]])
    y = np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 5.0], [-4.0, 3.0]])
    S = cosine_scores(x, y, 2)
    assert S.shape == (2, 2, 2)
    assert S[0, 1, 0] == pytest.approx(1 / math.sqrt(2))  # y_1 against x_0
    assert S[1, 1, 1] == pytest.approx(0.0)  # y_3 against x_3: orthogonal
    assert S[1, 0, 1] == pytest.approx(4 / 5)  # y_2 against x_3


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


def test_best_temperature_at_the_boundary():
    # Positives 0.9, negatives 0.1: the bound rises with beta all the way.
    S = np.full((2, 4, 4), 0.1) + 0.8 * np.eye(4)
    assert best_temperature(S, (0.5, 5.0)).beta == pytest.approx(5.0, abs=1e-3)


# ---------------------------------------------------------------- errors


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="tau must be > 0"):
        cosine_cap(4, 0.0)
    with pytest.raises(ValueError, match="tau must be > 0"):
        cosine_cap(4, [1.0, -1.0])
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        cosine_cap(0, 1.0)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        infonce_at_beta(np.full((1, 2, 2), 1.5), 1.0)
    with pytest.raises(ValueError, match=r"shape \(B, K, K\)"):
        infonce_at_beta(np.zeros((1, 2, 3)), 1.0)
    with pytest.raises(ValueError, match="beta must be > 0"):
        infonce_at_beta(np.zeros((1, 2, 2)), -1.0)
    with pytest.raises(ValueError, match="low < high"):
        best_temperature(np.zeros((1, 2, 2)), (5.0, 1.0))
    with pytest.raises(ValueError, match="zero rows"):
        cosine_scores(np.zeros((2, 2)), np.ones((2, 2)), 2)
    with pytest.raises(ValueError, match="batch_size must divide"):
        cosine_scores(np.ones((6, 2)), np.ones((6, 2)), 4)
