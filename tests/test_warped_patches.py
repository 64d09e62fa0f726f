"""Tests for infonce_lib.warped_patches: the densities of cube-warped Gaussian patches."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.stats
from scipy.integrate import quad

from infonce_lib import (
    cube_root_log_jacobian,
    gaussian_field,
    log_density_ratio_scores,
    log_p_y,
    log_p_y_given_x,
    sample_patch_pairs,
    warped_density_mistakes,
    warped_log_p_v,
    warped_log_p_v_given_u,
    warped_log_ratio_scores,
)

FIELD = gaussian_field(2)  # 4 pixels


def _pairs(seed=0, n=6, sigma=0.6):
    x, y = sample_patch_pairs(FIELD, sigma, n, seed=seed)
    return x, y, x**3, y**3, sigma


def _mass(log_density):
    """The integral over one pixel v of exp(log_density), split at 0 (where |v|^(-2/3) is
    integrable)."""

    def density(t):
        return math.exp(log_density(np.array([[t]]))[0])

    return quad(density, -np.inf, 0.0)[0] + quad(density, 0.0, np.inf)[0]


def test_jacobian_hand_values_and_a_loop_reference():
    assert cube_root_log_jacobian([[1.0]])[0] == pytest.approx(-math.log(3), rel=1e-15)
    assert cube_root_log_jacobian([[-27.0]])[0] == pytest.approx(-3 * math.log(3), rel=1e-15)
    rng = np.random.default_rng(1)
    v = rng.normal(size=(5, 3)) ** 3
    # d cbrt(v)/dv = 1 / (3 cbrt(v)^2), by loops
    want = [math.fsum(-math.log(3 * abs(np.cbrt(t)) ** 2) for t in row) for row in v]
    np.testing.assert_allclose(cube_root_log_jacobian(v), want, rtol=1e-13)


def test_the_jacobian_is_the_log_slope_of_the_cube_root():
    # Central differences of cbrt at a few points match exp(J) for one pixel.
    for t in (-5.0, -0.3, 0.02, 1.0, 40.0):
        h = 1e-6 * abs(t)
        slope = (np.cbrt(t + h) - np.cbrt(t - h)) / (2 * h)
        assert math.exp(cube_root_log_jacobian([[t]])[0]) == pytest.approx(slope, rel=1e-8)


def test_conditional_matches_scipy_at_the_cube_roots_plus_the_jacobian():
    *_, u, v, sigma = _pairs()
    want = [
        math.fsum(
            scipy.stats.norm.logpdf(np.cbrt(vk), np.cbrt(uk), sigma)
            for uk, vk in zip(a, b, strict=True)
        )
        - math.fsum(math.log(3) + 2 / 3 * math.log(abs(vk)) for vk in b)
        for a, b in zip(u, v, strict=True)
    ]
    np.testing.assert_allclose(warped_log_p_v_given_u(v, u, sigma), want, rtol=1e-12)


def test_marginal_matches_scipy_at_the_cube_roots_plus_the_jacobian():
    *_, v, sigma = _pairs(seed=2)
    Cy = FIELD.covariance + sigma**2 * np.eye(4)
    want = scipy.stats.multivariate_normal(np.zeros(4), Cy).logpdf(np.cbrt(v))
    want = want + cube_root_log_jacobian(v)
    np.testing.assert_allclose(warped_log_p_v(v, FIELD, sigma), want, rtol=1e-11)


def test_each_density_integrates_to_one_only_with_the_jacobian_of_v():
    pixel, sigma, u0 = gaussian_field(1), 0.5, np.array([[0.7**3]])
    assert _mass(lambda w: warped_log_p_v_given_u(w, u0, sigma)) == pytest.approx(1, abs=1e-7)
    assert _mass(lambda w: warped_log_p_v(w, pixel, sigma)) == pytest.approx(1, abs=1e-7)

    # The same Gaussians without the Jacobian, or with the Jacobian at u, are not densities.
    def gauss(w):
        return log_p_y_given_x(np.cbrt(w), np.cbrt(u0), sigma)

    assert abs(_mass(gauss) - 1) > 0.1
    assert abs(_mass(lambda w: gauss(w) + cube_root_log_jacobian(u0)) - 1) > 0.1
    assert abs(_mass(lambda w: log_p_y(np.cbrt(w), pixel, sigma)) - 1) > 0.1


def test_the_ratio_is_the_raw_pairs_density_ratio():
    # The two Jacobians cancel in log p(v | u) - log p(v), for every view against every
    # patch, leaving log p(y | x) - log p(y) of the raw pair.
    x, y, u, v, sigma = _pairs(seed=3, n=5)
    views, patches = np.repeat(v, 5, axis=0), np.tile(u, (5, 1))
    warped = warped_log_p_v_given_u(views, patches, sigma) - np.repeat(
        warped_log_p_v(v, FIELD, sigma), 5
    )
    raw = log_p_y_given_x(np.repeat(y, 5, axis=0), np.tile(x, (5, 1)), sigma) - np.repeat(
        log_p_y(y, FIELD, sigma), 5
    )
    np.testing.assert_allclose(warped, raw, rtol=0, atol=1e-11)
    assert np.ptp(cube_root_log_jacobian(v)) > 1  # so a missing Jacobian would show


def test_batched_ratio_scores_match_the_two_densities_and_the_raw_pair():
    x, y, u, v, sigma = _pairs(seed=5, n=6)
    F = warped_log_ratio_scores(u, v, FIELD, sigma, 3)
    assert F.shape == (2, 3, 3)
    for b in range(2):
        for i in range(3):
            for j in range(3):
                m, n = 3 * b + i, 3 * b + j  # view m against candidate patch n
                want = warped_log_p_v_given_u(v[m : m + 1], u[n : n + 1], sigma)[0]
                want -= warped_log_p_v(v[m : m + 1], FIELD, sigma)[0]
                assert F[b, i, j] == pytest.approx(want, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(F, log_density_ratio_scores(x, y, FIELD, sigma, 3), atol=1e-11)


def test_a_zero_in_u_is_fine_and_u_brings_no_jacobian():
    v = np.array([[0.5, -2.0]])
    a = warped_log_p_v_given_u(v, [[0.0, 1.0]], 0.7)
    b = log_p_y_given_x(np.cbrt(v), [[0.0, 1.0]], 0.7) + cube_root_log_jacobian(v)
    np.testing.assert_allclose(a, b, rtol=1e-15)


def test_extreme_but_valid_values_are_finite_and_exact():
    # Entries near 5e-324 and 1.7e308: their cube roots and logs are in range.
    v = np.array([[5e-324, 1.7e308], [-1e-300, -1e300]])
    u = np.array([[1e-200, 1e200], [2.0, -1e-300]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jac = cube_root_log_jacobian(v)
        cond = warped_log_p_v_given_u(v, u, 1e90)
        marg = warped_log_p_v(v[:, :1], gaussian_field(1), 1e-3)
    for row, j in zip(v, jac, strict=True):
        assert j == pytest.approx(-math.fsum(math.log(3) + 2 / 3 * math.log(abs(t)) for t in row))
    cy, cx = np.cbrt(v), np.cbrt(u)
    want = [
        -math.fsum((a - b) ** 2 for a, b in zip(yy, xx, strict=True)) / (2 * 1e180)
        - math.log(2 * math.pi * 1e180)
        + j
        for yy, xx, j in zip(cy, cx, jac, strict=True)
    ]
    np.testing.assert_allclose(cond, want, rtol=1e-12)
    var = 1 + 1e-6
    want = [-cy[m, 0] ** 2 / (2 * var) - 0.5 * math.log(2 * math.pi * var) + jac_m
            for m, jac_m in enumerate(cube_root_log_jacobian(v[:, :1]))]  # fmt: skip
    np.testing.assert_allclose(marg, want, rtol=1e-12)


def test_a_density_beyond_float64_raises():
    with pytest.raises(ValueError, match=r"log p\(v \| u\) of v and u at sigma overflowed"):
        warped_log_p_v_given_u([[1e300]], [[-1e300]], 1e-200)


def test_the_checkers_right_answer_is_the_librarys():
    *_, u, v, sigma = _pairs(seed=4)
    right = warped_density_mistakes()["right"](u, v, sigma)
    np.testing.assert_array_equal(right, warped_log_p_v_given_u(v, u, sigma))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: cube_root_log_jacobian([[1.0, 0.0]]), ValueError, "v must have no zero entries"),
        (lambda: cube_root_log_jacobian([1.0, 2.0]), ValueError, "v must be 2-D"),
        (lambda: cube_root_log_jacobian([[np.nan]]), ValueError, "v must be finite"),
        (lambda: warped_log_p_v_given_u([[0.0]], [[1.0]], 1.0), ValueError, "v must have no zero"),
        (lambda: warped_log_p_v_given_u([[1.0]], [[1.0, 2.0]], 1.0), ValueError, "same shape"),
        (lambda: warped_log_p_v_given_u([[1.0]], [["a"]], 1.0), TypeError, "u must hold real"),
        (lambda: warped_log_p_v_given_u([[1.0]], [[1.0]], 0.0), ValueError, "sigma must be > 0"),
        (lambda: warped_log_p_v([[1.0, 2.0]], FIELD, 1.0), ValueError, "v must have 4 columns"),
        (lambda: warped_log_p_v([[0.0]], gaussian_field(1), 1.0), ValueError, "no zero entries"),
        (lambda: warped_log_p_v([[1.0]], "field", 1.0), TypeError, "field"),
        (lambda: warped_log_p_v([[1.0]], gaussian_field(1), -1.0), ValueError, "sigma"),
        (
            lambda: warped_log_ratio_scores(np.ones((4, 4)), np.ones((4, 4)), FIELD, 1.0, 3),
            ValueError,
            "batch_size must divide",
        ),
        (
            lambda: warped_log_ratio_scores(np.ones((4, 4)), np.zeros((4, 4)), FIELD, 1.0, 2),
            ValueError,
            "no zero entries",
        ),
        (
            lambda: warped_log_ratio_scores(np.ones((4, 2)), np.ones((4, 2)), FIELD, 1.0, 2),
            ValueError,
            "v must have 4 columns",
        ),
    ],
)
def test_bad_inputs_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
