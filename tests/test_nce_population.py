"""Tests for infonce_lib.nce_population: the population NCE objective (Theorem 1's functional)
and the asymptotic covariance of the estimate (Gutmann & Hyvärinen, 2012, Theorem 3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

import infonce_lib as il

SIGMA = np.array([[1.0, 0.6], [0.6, 1.0]])
LAM = np.linalg.inv(SIGMA)
LAM = (LAM + LAM.T) / 2


# ---------------------------------------------------------------- the population objective


def _grid(lo=-12.0, hi=12.0, n=24_001):
    u = np.linspace(lo, hi, n)
    return u, np.full(n, u[1] - u[0])


def test_population_objective_is_the_large_sample_limit_of_nce_objective():
    # data N(0, 1), noise N(0, 4), nu = 2, model log p_d + 0.3: quadrature against the
    # sample objective on many draws (within 4 standard errors of its per-sample terms)
    u, w = _grid()
    p_d, p_n = norm.pdf(u), norm.pdf(u, scale=2.0)
    f = norm.logpdf(u) + 0.3
    J_pop = il.nce_population_objective(f, p_d, p_n, w, nu=2.0)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=200_000), 2.0 * rng.normal(size=400_000)
    terms_x = -np.logaddexp(0, -(norm.logpdf(x) + 0.3 - norm.logpdf(x, scale=2) - math.log(2)))
    terms_y = -np.logaddexp(0, norm.logpdf(y) + 0.3 - norm.logpdf(y, scale=2) - math.log(2))
    J_sample = il.nce_objective(
        norm.logpdf(x) + 0.3, norm.logpdf(x, scale=2), norm.logpdf(y) + 0.3,
        norm.logpdf(y, scale=2), nu=2.0,
    )  # fmt: skip
    assert J_sample == pytest.approx(terms_x.mean() + 2 * terms_y.mean(), rel=1e-9)
    se = math.sqrt(terms_x.var() / x.size + 4 * terms_y.var() / y.size)
    assert abs(J_pop - J_sample) < 4 * se


def test_population_objective_is_largest_at_the_data_density():
    # Theorem 1: J~ peaks at f_m = log p_d, here among shifts and rescalings of it
    u, w = _grid()
    p_d, p_n = norm.pdf(u), norm.pdf(u, scale=1.5)
    base = il.nce_population_objective(norm.logpdf(u), p_d, p_n, w, nu=0.5)
    for shift in (-0.2, 0.2):
        assert il.nce_population_objective(norm.logpdf(u) + shift, p_d, p_n, w, 0.5) < base
    for scale in (0.9, 1.1):
        assert il.nce_population_objective(norm.logpdf(u, scale=scale), p_d, p_n, w, 0.5) < base


def test_population_objective_ignores_the_model_where_the_noise_is_zero():
    p_d, p_n, w = np.array([0.5, 0.5]), np.array([1.0, 0.0]), np.ones(2)
    b = np.linspace(-50, 50, 11)
    models = np.stack([np.full_like(b, math.log(0.5)), b], axis=1)
    J = il.nce_population_objective(models, p_d, p_n, w)
    assert np.ptp(J) == 0.0
    # and the uncovered part contributes nothing at all
    only = il.nce_population_objective(models[:, 1:], p_d[1:], p_n[1:], w[1:])
    assert np.all(only == 0.0)


def test_population_objective_noise_only_points_and_pointwise_values():
    # p_d = 0: only the noise term, nu p_n log sigma(-g)
    g = 1.3
    got = il.nce_population_objective([g + math.log(0.2)], [0.0], [0.2], [2.0], nu=1.0)
    assert got == pytest.approx(2.0 * 0.2 * -math.log1p(math.exp(g)), rel=1e-14)
    # both: the integrand at one point, compared with its definition
    f, pd_, pn_, nu = 0.4, 0.3, 0.7, 3.0
    z = f - math.log(pn_) - math.log(nu)
    want = -pd_ * math.log1p(math.exp(-z)) - nu * pn_ * math.log1p(math.exp(z))
    assert il.nce_population_objective([f], [pd_], [pn_], [1.0], nu) == pytest.approx(want)


def test_population_objective_is_finite_for_extreme_models():
    J = il.nce_population_objective([[800.0, -800.0]], [0.5, 0.5], [0.5, 0.5], [1.0, 1.0])
    assert np.isfinite(J).all() and J[0] < -300


def test_population_objective_rejects_bad_input():
    with pytest.raises(ValueError, match="noise_density must be >= 0"):
        il.nce_population_objective([0.0], [1.0], [-1.0], [1.0])
    with pytest.raises(ValueError, match="weights must be >= 0"):
        il.nce_population_objective([0.0], [1.0], [1.0], [-1.0])
    with pytest.raises(ValueError, match="data_density must have shape"):
        il.nce_population_objective([0.0, 1.0], [1.0], [1.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="data_density must be finite"):
        il.nce_population_objective([0.0], [np.inf], [1.0], [1.0])
    with pytest.raises(ValueError, match="nu"):
        il.nce_population_objective([0.0], [1.0], [1.0], [1.0], nu=0.0)


# ---------------------------------------------------------------- Theorem 3


@pytest.mark.parametrize("nu", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_noise_equal_to_the_data_costs_a_factor_one_plus_one_over_nu(nu, d):
    # Theorem 3 with p_n = p_d against the inverse-Wishart first-order MSE of ML
    rng = np.random.default_rng(d)
    A = rng.normal(size=(d, d))
    lam = A @ A.T + d * np.eye(d)
    cov = np.linalg.inv(lam)
    cov = (cov + cov.T) / 2
    nce = il.gaussian_nce_precision_mse(lam, cov, 500, nu)
    ml = il.gaussian_ml_precision_mse(lam, 500, exact=False)
    assert nce == pytest.approx((1 + 1 / nu) * ml, rel=1e-10)


@pytest.mark.parametrize("s", [0.65, 8.0])
def test_quadrature_has_converged(s):
    a = il.gaussian_nce_precision_mse(LAM, s**2 * SIGMA, 500, nodes=64)
    b = il.gaussian_nce_precision_mse(LAM, s**2 * SIGMA, 500, nodes=96)
    assert a == pytest.approx(b, rel=1e-6)


def test_asymptotic_mse_scales_with_the_precision():
    # Lambda -> c Lambda with the noise covariance -> noise / c: every entry of the
    # estimate scales by c, so the MSE by c^2; and it falls as 1 / T_d.
    base = il.gaussian_nce_precision_mse(LAM, 4 * SIGMA, 500)
    assert il.gaussian_nce_precision_mse(3 * LAM, 4 * SIGMA / 3, 500) == pytest.approx(
        9 * base, rel=1e-9
    )
    assert il.gaussian_nce_precision_mse(LAM, 4 * SIGMA, 1000) == pytest.approx(base / 2)


def test_monte_carlo_samples_and_quadrature_give_the_same_covariance():
    # the general function with equal weights on draws of p_d (1-D model (lambda, c),
    # noise N(0, 4)): close to the quadrature's value
    rng = np.random.default_rng(0)
    u = rng.normal(size=400_000)
    g = np.stack([-(u**2) / 2, np.ones_like(u)], axis=1)
    mc = il.nce_asymptotic_covariance(g, norm.logpdf(u), norm.logpdf(u, scale=2.0), nu=1.0)
    quad = il.gaussian_nce_precision_mse([[1.0]], [[4.0]], 1)
    assert mc[0, 0] == pytest.approx(quad, rel=0.02)


def test_theorem_3_predicts_the_monte_carlo_variance():
    # 1-D, noise twice as wide as the data, T_d = 2000: the variance of lambda-hat over
    # 300 fits against Theorem 3 (the SE of a variance from R draws is about var sqrt(2/R))
    sim = il.simulate_gaussian_nce(np.eye(1), 2000, noise_cov=[[4.0]], reps=300, seed=7)
    errors = sim.precision_nce[:, 0, 0] - 1.0
    mc = np.mean(errors**2)
    theory = il.gaussian_nce_precision_mse([[1.0]], [[4.0]], 2000)
    assert abs(mc - theory) < 3 * theory * math.sqrt(2 / errors.size)


def test_asymptotic_covariance_rejects_bad_input():
    g = np.ones((3, 2))  # the two columns are equal: I_nu is singular
    z = np.zeros(3)
    with pytest.raises(ValueError, match="singular"):
        il.nce_asymptotic_covariance(g, z, z)
    with pytest.raises(ValueError, match="weights"):
        il.nce_asymptotic_covariance(np.ones((3, 1)), z, z, weights=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="log_noise must have shape"):
        il.nce_asymptotic_covariance(np.ones((3, 1)), z, np.zeros(2))
    with pytest.raises(ValueError, match="log_data must be finite"):
        il.nce_asymptotic_covariance(np.ones((3, 1)), [0.0, -np.inf, 0.0], z)


def test_precision_mse_rejects_bad_input():
    with pytest.raises(ValueError, match="nodes"):
        il.gaussian_nce_precision_mse(np.eye(4), np.eye(4), 10, nodes=64)
    with pytest.raises(ValueError, match="same size"):
        il.gaussian_nce_precision_mse(np.eye(2), np.eye(3), 10)
    with pytest.raises(ValueError, match="noise_cov must be positive definite"):
        il.gaussian_nce_precision_mse(np.eye(2), -np.eye(2), 10)
    with pytest.raises(ValueError, match="n_data"):
        il.gaussian_nce_precision_mse(np.eye(2), np.eye(2), 0)
