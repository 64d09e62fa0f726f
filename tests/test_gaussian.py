"""Tests for infonce_lib.gaussian: the patch field, its exact information and densities."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import multivariate_normal

from infonce_lib import (
    GaussianField,
    field_covariance,
    gaussian_field,
    gaussian_mutual_information,
    log_density_ratio_scores,
    log_p_y,
    log_p_y_given_x,
    mean_and_se,
    optimal_critic_scores,
    patch_information,
    patch_information_logdet,
    sample_patch_pairs,
    sigma_for_information,
)

FIELD = gaussian_field()

# ---------------------------------------------------------------- the field


def test_covariance_is_row_major_squared_exponential():
    C = field_covariance(8, 1.5)
    assert C.shape == (64, 64)
    np.testing.assert_array_equal(np.diag(C), 1.0)
    np.testing.assert_array_equal(C, C.T)
    one = math.exp(-1 / (2 * 1.5**2))
    assert C[0, 1] == pytest.approx(one)  # (0, 0) and (0, 1)
    assert C[0, 8] == pytest.approx(one)  # (0, 0) and (1, 0): row-major
    assert C[0, 9] == pytest.approx(math.exp(-2 / (2 * 1.5**2)))
    assert C[7, 8] == pytest.approx(math.exp(-(1 + 49) / (2 * 1.5**2)))  # (0, 7) and (1, 0)


def test_field_factor_and_read_only_arrays():
    f = FIELD
    assert isinstance(f, GaussianField) and f.dim == 64
    assert np.all(f.eigenvalues >= 0)
    assert np.all(np.diff(f.eigenvalues) >= 0)  # eigh order
    np.testing.assert_allclose(f.factor @ f.factor.T, f.covariance, atol=1e-12)
    U = f.eigenvectors
    np.testing.assert_allclose(f.factor, (U * np.sqrt(f.eigenvalues)) @ U.T)
    np.testing.assert_allclose(f.factor, f.factor.T, atol=1e-15)  # the symmetric square root
    with pytest.raises(ValueError, match="read-only"):
        f.covariance[0, 0] = 2.0


def test_factor_does_not_depend_on_the_eigenbasis():
    # The 8 x 8 grid's symmetries give C repeated eigenvalues; eigh may return any orthonormal
    # basis of each repeated eigenspace (it differs between LAPACK builds and processors).
    # Rotate every such basis at random: the sampler's factor must not move.
    lam, U = FIELD.eigenvalues, FIELD.eigenvectors
    rng = np.random.default_rng(0)
    V = U.copy()
    groups, start = [], 0
    for k in range(1, len(lam) + 1):
        if k == len(lam) or lam[k] - lam[k - 1] > 1e-9 * max(lam[k], 1e-300):
            groups.append(slice(start, k))
            start = k
    assert any(g.stop - g.start > 1 for g in groups)  # the field does have repeated eigenvalues
    for g in groups:
        Q, _ = np.linalg.qr(rng.normal(size=(g.stop - g.start,) * 2))
        V[:, g] = U[:, g] @ Q
    rotated = (V * np.sqrt(lam)) @ V.T
    np.testing.assert_allclose(rotated, FIELD.factor, rtol=0, atol=1e-12)
    assert np.abs(V * np.sqrt(lam) - U * np.sqrt(lam)).max() > 1e-3  # the old factor would move


def test_negative_round_off_eigenvalues_are_clipped():
    # A very long correlation length makes C nearly rank one: eigh returns tiny negatives.
    f = gaussian_field(4, 200.0)
    raw = np.linalg.eigvalsh(f.covariance)
    assert raw.min() < 0
    assert f.eigenvalues.min() == 0.0


# ---------------------------------------------------------------- information


@pytest.mark.parametrize("target", [1.0, 3.0, 6.0, 12.0])
def test_information_by_eigenvalues_and_by_logdets_agree(target):
    sigma = sigma_for_information(target, FIELD.eigenvalues)
    assert patch_information(sigma, FIELD.eigenvalues) == pytest.approx(target, abs=1e-12)
    assert abs(patch_information_logdet(sigma, FIELD) - target) < 1e-9


@given(st.floats(0.2, 50.0))
def test_information_formulas_agree_for_any_sigma(sigma):
    assert (
        abs(patch_information(sigma, FIELD.eigenvalues) - patch_information_logdet(sigma, FIELD))
        < 1e-9
    )


def test_bivariate_information():
    for rho in (0.1, 0.5, 0.9, -0.7):
        J = [[1.0, rho], [rho, 1.0]]
        assert gaussian_mutual_information(J, 1) == pytest.approx(-0.5 * math.log(1 - rho**2))


def test_independent_blocks_add_no_information():
    # Lemma 1 of chapter 3: I(X1; Y) = I(X1, X2; Y) when X2 is independent of (X1, Y).
    f = gaussian_field(2)
    C, d, s2 = f.covariance, 4, 0.3
    J2 = np.block([[C, C], [C, C + s2 * np.eye(d)]])
    J3 = np.zeros((3 * d, 3 * d))
    J3[:d, :d] = C  # X1
    J3[d : 2 * d, d : 2 * d] = C  # X2, independent
    J3[2 * d :, 2 * d :] = C + s2 * np.eye(d)  # Y
    J3[:d, 2 * d :] = C
    J3[2 * d :, :d] = C
    assert gaussian_mutual_information(J3, 2 * d) == pytest.approx(
        gaussian_mutual_information(J2, d), abs=1e-12
    )


@pytest.mark.parametrize("target", [1e-6, 0.5, 12.0, 200.0])
def test_sigma_for_information_is_the_root(target):
    sigma = sigma_for_information(target, FIELD.eigenvalues)
    assert patch_information(sigma, FIELD.eigenvalues) == pytest.approx(target, rel=1e-12)


def test_information_falls_with_sigma():
    sig = np.geomspace(0.1, 10, 20)
    I = [patch_information(s, FIELD.eigenvalues) for s in sig]
    assert np.all(np.diff(I) < 0)


# ---------------------------------------------------------------- sampling


def test_sampler_follows_the_protocol():
    sigma = 1.3
    x, y = sample_patch_pairs(FIELD, sigma, 100, seed=2)
    rng = np.random.default_rng(2)
    z = rng.standard_normal((100, 64))  # z first
    eps = rng.standard_normal((100, 64))  # epsilon second
    np.testing.assert_allclose(x, z @ FIELD.factor.T, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(y, x + sigma * eps, rtol=1e-13, atol=1e-13)
    x2, _ = sample_patch_pairs(FIELD, sigma, 100, seed=np.random.default_rng(2))
    np.testing.assert_array_equal(x, x2)


def test_sample_covariance_converges_to_C():
    errors = []
    for n in (2**10, 2**13, 2**16):
        x, _ = sample_patch_pairs(FIELD, 1.0, n, seed=0)
        errors.append(np.abs(np.cov(x, rowvar=False) - FIELD.covariance).max())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 6 * math.sqrt(2 / 2**16)


def test_mean_log_ratio_estimates_the_information():
    sigma = sigma_for_information(3.0, FIELD.eigenvalues)
    x, y = sample_patch_pairs(FIELD, sigma, 2**14, seed=5)
    mean, se = mean_and_se(log_p_y_given_x(y, x, sigma) - log_p_y(y, FIELD, sigma))
    assert abs(mean - 3.0) < 4 * se


# ---------------------------------------------------------------- densities and scores


def test_densities_match_scipy(rng):
    sigma = 0.8
    x, y = sample_patch_pairs(FIELD, sigma, 5, seed=1)
    ref = [multivariate_normal(x[m], sigma**2 * np.eye(64)).logpdf(y[m]) for m in range(5)]
    np.testing.assert_allclose(log_p_y_given_x(y, x, sigma), ref, rtol=1e-12)
    Cy = FIELD.covariance + sigma**2 * np.eye(64)
    np.testing.assert_allclose(
        log_p_y(y, FIELD, sigma), multivariate_normal(np.zeros(64), Cy).logpdf(y), rtol=1e-10
    )


def test_optimal_critic_scores_layout():
    sigma = 0.7
    x, y = sample_patch_pairs(gaussian_field(3), sigma, 12, seed=4)
    F = optimal_critic_scores(x, y, sigma, 4)
    assert F.shape == (3, 4, 4)
    for b in range(3):
        for i in range(4):
            for j in range(4):
                expected = log_p_y_given_x(y[[4 * b + i]], x[[4 * b + j]], sigma)[0]
                assert F[b, i, j] == pytest.approx(expected, rel=1e-12)
    f3 = gaussian_field(3)
    R = log_density_ratio_scores(x, y, f3, sigma, 4)
    np.testing.assert_allclose(
        F - R, np.broadcast_to(log_p_y(y, f3, sigma).reshape(3, 4, 1), F.shape)
    )


# ---------------------------------------------------------------- errors


def test_bad_inputs_raise():
    x = np.zeros((12, 64))
    with pytest.raises(ValueError, match="batch_size must divide"):
        optimal_critic_scores(x, x, 1.0, 5)
    with pytest.raises(ValueError, match="batch_size must be >= 2"):
        optimal_critic_scores(x, x, 1.0, 1)
    with pytest.raises(ValueError, match="same shape"):
        optimal_critic_scores(x, x[:6], 1.0, 2)
    with pytest.raises(ValueError, match="sigma must be > 0"):
        log_p_y_given_x(x, x, 0.0)
    with pytest.raises(ValueError, match="finite"):
        log_p_y_given_x(np.full((2, 3), np.inf), np.zeros((2, 3)), 1.0)
    with pytest.raises(ValueError, match="64 columns"):
        log_p_y(np.zeros((2, 3)), FIELD, 1.0)
    with pytest.raises(TypeError, match="GaussianField"):
        log_p_y(x, FIELD.covariance, 1.0)
    with pytest.raises(ValueError, match="target must be > 0"):
        sigma_for_information(0.0, FIELD.eigenvalues)
    with pytest.raises(ValueError, match=">= 0"):
        patch_information(1.0, [-1.0, 2.0])
    with pytest.raises(ValueError, match="positive definite"):
        gaussian_mutual_information([[1.0, 1.0], [1.0, 1.0]], 1)
    with pytest.raises(ValueError, match="n_x must be smaller"):
        gaussian_mutual_information(np.eye(2), 2)
    with pytest.raises(ValueError, match="length_scale must be > 0"):
        field_covariance(8, -1.0)
    with pytest.raises(TypeError, match="side must be an integer"):
        field_covariance(8.0)
    with pytest.raises(ValueError, match="n_pairs must be >= 1"):
        sample_patch_pairs(FIELD, 1.0, 0, seed=0)
