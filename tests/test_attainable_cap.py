"""Tests for infonce_lib.caps.attainable_cosine_cap: the largest InfoNCE that unit-norm
embeddings can reach with the cosine critic s/tau.

Checked against an independent high-precision evaluation of the formula (decimal), against
each step of its proof on random embeddings, against the regular simplex that attains it, and
against a numerical maximisation of InfoNCE over free unit embeddings
(infonce_lib.maximise_infonce_over_unit_embeddings, whose objective and gradient are checked
against an independent route through info_nce_loss_and_grad and finite differences).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import check_grad

from infonce_lib import (
    attainable_cosine_cap,
    cosine_cap,
    info_nce_loss_and_grad,
    infonce_at_beta,
    infonce_bound,
    maximise_infonce_over_unit_embeddings,
    mean_gap_cap,
    population_cosine_cap,
)
from infonce_lib.caps import _minus_infonce_on_spheres
from tests.conftest import scaled_examples


def decimal_cap(K: int, tau: float) -> float:
    """log K - log(1 + (K-1) exp(-K/((K-1) tau))) in 60-digit decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 60
        k, t = Decimal(K), Decimal(tau)
        inner = 1 + (k - 1) * (-(k / ((k - 1) * t))).exp()
        return float(k.ln() - inner.ln())


def simplex(K: int, dim: int | None = None) -> np.ndarray:
    """K unit vectors with sum 0 and pairwise dot -1/(K-1), in R^dim (dim >= K - 1)."""
    V = np.eye(K) - 1.0 / K  # rows sum to 0 column-wise; they span a (K-1)-dim subspace
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    if dim is None:
        return V
    # rotate into an orthonormal basis of the subspace, dimension K - 1, then pad
    _, _, Wt = np.linalg.svd(V)
    W = V @ Wt[: K - 1].T
    return np.hstack([W, np.zeros((K, dim - (K - 1)))])


def random_unit(rng, K: int, d: int) -> np.ndarray:
    Z = rng.normal(size=(K, d))
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


# ---------------------------------------------------------------- the formula


@pytest.mark.parametrize("K", [2, 3, 8, 256, 4096, 10**6])
@pytest.mark.parametrize("tau", [0.01, 0.07, 0.1, 0.5, 1.0, 3.0, 100.0])
def test_formula_against_decimal(K, tau):
    assert math.isclose(attainable_cosine_cap(K, tau), decimal_cap(K, tau), rel_tol=1e-13)


def test_the_values_of_the_text_against_decimal():
    # K = 8 and K = 256 at tau = 1: both caps, each against its own decimal formula.
    for K in (8, 256):
        att, rng_cap = attainable_cosine_cap(K, 1.0), cosine_cap(K, 1.0)
        assert math.isclose(att, decimal_cap(K, 1.0), rel_tol=1e-14)
        with localcontext() as ctx:
            ctx.prec = 50
            k = Decimal(K)
            want = float(k.ln() - (1 + (k - 1) * Decimal(-2).exp()).ln())
        assert math.isclose(rng_cap, want, rel_tol=1e-14)
    # At tau = 1, unit-norm embeddings cannot certify one nat with K = 256; scores in
    # [-1, 1] could certify almost two.
    assert attainable_cosine_cap(256, 1.0) < 1.0
    assert 1.9 < cosine_cap(256, 1.0) < 2.0


def test_array_input_matches_scalars_and_keeps_shape():
    taus = np.array([[0.05, 0.2], [1.0, 7.0]])
    out = attainable_cosine_cap(16, taus)
    assert out.shape == (2, 2)
    for t, v in zip(taus.ravel(), out.ravel(), strict=True):
        assert v == attainable_cosine_cap(16, float(t))


@pytest.mark.parametrize("K", [2, 3, 5, 64, 10**9])
def test_below_the_score_range_cap_and_equal_at_k2(K):
    taus = np.geomspace(1e-3, 1e3, 61)
    att, rng_cap = attainable_cosine_cap(K, taus), cosine_cap(K, taus)
    if K == 2:
        np.testing.assert_allclose(att, rng_cap, rtol=1e-15)
    else:
        assert np.all(att <= rng_cap)
        mid = (taus > 0.05) & (taus < 100)
        assert np.all(att[mid] < rng_cap[mid])


@pytest.mark.parametrize("K", [2, 7, 256])
def test_monotone_and_between_0_and_min_logk_one_over_tau(K):
    taus = np.geomspace(1e-4, 1e4, 200)
    cap = attainable_cosine_cap(K, taus)
    assert np.all(np.diff(cap) <= 0)  # flat at log K in float64 for the smallest tau
    assert np.all(np.diff(cap[taus > 0.1]) < 0)
    assert np.all(cap > 0)
    assert np.all(cap <= math.log(K))
    # log is concave: log((1 + (K-1) e^(-a)) / K) >= -((K-1)/K) a, so the cap <= 1/tau,
    # tighter than K / ((K-1) tau); close to it for large tau, where cap ~ 1/tau.
    assert np.all(cap <= 1 / taus)
    assert np.all(cap[taus > 100] > (1 - 1e-2) / taus[taus > 100])


@pytest.mark.parametrize("K", [2, 3, 256])
def test_one_over_tau_against_decimal(K):
    # The inequality cap <= 1/tau in 60-digit arithmetic, where it is tightest (large tau).
    for tau in (0.5, 1.0, 10.0, 1e3, 1e6):
        assert Decimal(decimal_cap(K, tau)) <= 1 / Decimal(tau)


def test_tends_to_one_over_tau_for_large_batches():
    for tau in (0.5, 1.0, 2.0):
        gaps = [abs(attainable_cosine_cap(K, tau) - 1 / tau) for K in (10**2, 10**4, 10**6)]
        assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-4


def test_extreme_temperatures_finite_without_warnings():
    K = 256
    assert attainable_cosine_cap(K, 5e-324) == math.log(K)
    assert attainable_cosine_cap(K, 1e-8) == math.log(K)
    big = attainable_cosine_cap(K, 1e300)
    assert math.isclose(big, 1e-300, rel_tol=1e-12)  # first order: ((K-1)/K) * K/((K-1) tau)
    assert attainable_cosine_cap(2**62, 1.0) > 0
    out = attainable_cosine_cap(K, np.array([5e-324, 1.0, 1.7e308]))
    assert np.all(np.isfinite(out)) and out[-1] > 0


@pytest.mark.parametrize(
    ("K", "tau", "error", "needle"),
    [
        (1, 1.0, ValueError, "batch_size"),
        (0, 1.0, ValueError, "batch_size"),
        (2.0, 1.0, TypeError, "batch_size"),
        (True, 1.0, TypeError, "batch_size"),
        (8, 0.0, ValueError, "temperature"),
        (8, -1.0, ValueError, "temperature"),
        (8, float("nan"), ValueError, "temperature"),
        (8, float("inf"), ValueError, "temperature"),
        (8, "0.1", TypeError, "temperature"),
        (8, [0.1, 0.0], ValueError, "temperature"),
        (8, [0.1, float("nan")], ValueError, "temperature"),
    ],
)
def test_bad_input(K, tau, error, needle):
    with pytest.raises(error, match=needle):
        attainable_cosine_cap(K, tau)


@pytest.mark.parametrize(
    ("fn", "name"),
    [
        (cosine_cap, "tau"),
        (attainable_cosine_cap, "temperature"),
        (population_cosine_cap, "temperature"),
        (lambda K, t: mean_gap_cap(K, t, 1.0), "temperature"),
        (lambda K, g: mean_gap_cap(K, 0.5, g), "mean_gap"),
    ],
)
def test_a_ragged_list_is_refused_naming_the_argument(fn, name):
    # NumPy's own "inhomogeneous shape" error names no argument; the library's does
    with pytest.raises(ValueError, match=f"^{name} must be a rectangular array"):
        fn(8, [[0.1, 0.2], [0.3]])


# ---------------------------------------------------------------- the proof, step by step


@settings(max_examples=scaled_examples(60), deadline=None)
@given(
    K=st.integers(2, 12),
    d=st.integers(1, 14),
    seed=st.integers(0, 2**32 - 1),
    aligned=st.booleans(),
)
def test_each_step_of_the_proof_on_random_embeddings(K, d, seed, aligned):
    rng = np.random.default_rng(seed)
    X = random_unit(rng, K, d)
    Y = X.copy() if aligned else random_unit(rng, K, d)
    S = Y @ X.T  # S[i, j] = y_i . x_j
    off = ~np.eye(K, dtype=bool)
    xbar, ybar = X.mean(axis=0), Y.mean(axis=0)
    trace = np.trace(S)
    # the identity on the off-diagonal sum
    assert math.isclose(S[off].sum(), K**2 * xbar @ ybar - trace, abs_tol=1e-11)
    # the mean gap as a centred covariance
    gaps = np.diag(S) - S.sum(axis=1, where=off) / (K - 1)
    centred = np.sum((X - xbar) * (Y - ybar)) / K
    assert math.isclose(gaps.mean(), K / (K - 1) * centred, abs_tol=1e-12)
    # Cauchy-Schwarz, and the centred mean square of unit vectors
    assert math.isclose(np.sum((X - xbar) ** 2) / K, 1 - xbar @ xbar, abs_tol=1e-12)
    assert centred <= math.sqrt((1 - xbar @ xbar) * (1 - ybar @ ybar)) + 1e-12 <= 1 + 1e-12
    # the bound itself, at several temperatures
    for tau in (0.05, 0.3, 1.0, 4.0):
        value = infonce_at_beta(S[None], 1 / tau)[0]
        assert value <= attainable_cosine_cap(K, tau) + 1e-12


# ---------------------------------------------------------------- the simplex attains it


@pytest.mark.parametrize("K", [2, 3, 8, 100, 256])
@pytest.mark.parametrize("tau", [0.05, 0.1, 0.5, 1.0, 10.0])
def test_regular_simplex_attains_the_cap(K, tau):
    V = simplex(K, dim=K - 1)  # the smallest dimension that holds it
    S = V @ V.T
    off = ~np.eye(K, dtype=bool)
    np.testing.assert_allclose(np.diag(S), 1.0, atol=1e-14)
    np.testing.assert_allclose(S[off], -1 / (K - 1), atol=1e-14)
    want = attainable_cosine_cap(K, tau)
    assert abs(infonce_at_beta(S[None], 1 / tau)[0] - want) < 1e-12
    assert abs(infonce_bound((S / tau)[None])[0] - want) < 1e-12


# ---------------------------------------------------------------- free unit embeddings


def _minus_bound_and_grad(params, K, d, tau):
    """An independent reference: -I_NCE of x = u/|u|, y = v/|v| and its gradient in (u, v),
    through info_nce_loss_and_grad (anchors y_i, candidates x_j) and the chain rule."""
    U, V = params.reshape(2, K, d)
    nu = np.linalg.norm(U, axis=1, keepdims=True)
    nv = np.linalg.norm(V, axis=1, keepdims=True)
    X, Y = U / nu, V / nv
    loss, gY, gX = info_nce_loss_and_grad(Y, X, tau)  # anchors y_i, candidates x_j
    gU = (gX - np.sum(gX * X, axis=1, keepdims=True) * X) / nu
    gV = (gY - np.sum(gY * Y, axis=1, keepdims=True) * Y) / nv
    return loss - math.log(K), np.concatenate([gU.ravel(), gV.ravel()])


@pytest.mark.parametrize(("K", "d", "tau"), [(2, 1, 1.0), (5, 3, 0.2), (8, 8, 1.0), (6, 2, 7.0)])
def test_the_objective_and_its_gradient_against_the_reference(K, d, tau):
    rng = np.random.default_rng(K * d)
    for _ in range(3):
        params = rng.normal(size=2 * K * d)
        value, grad = _minus_infonce_on_spheres(params, K, d, tau)
        want_value, want_grad = _minus_bound_and_grad(params, K, d, tau)
        assert value == pytest.approx(want_value, abs=1e-13)
        np.testing.assert_allclose(grad, want_grad, atol=1e-13)
        err = check_grad(
            lambda p: _minus_infonce_on_spheres(p, K, d, tau)[0],
            lambda p: _minus_infonce_on_spheres(p, K, d, tau)[1],
            params,
        )
        assert err < 1e-6 * max(1.0, np.linalg.norm(grad))
        # The gradient is tangent: a radial change of u_j or w_i changes nothing.
        U, W = params.reshape(2, K, d)
        gU, gW = grad.reshape(2, K, d)
        np.testing.assert_allclose(np.sum(gU * U, axis=1), 0.0, atol=1e-13)
        np.testing.assert_allclose(np.sum(gW * W, axis=1), 0.0, atol=1e-13)


def _maximise(K, d, tau, seed):
    """The value reached, recomputed from the embeddings (not the optimiser's own figure)."""
    value, X, Y = maximise_infonce_over_unit_embeddings(K, tau, d, seed=seed)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(Y, axis=1), 1.0, atol=1e-14)
    recomputed = infonce_at_beta((Y @ X.T)[None], 1 / tau)[0]
    assert value == pytest.approx(recomputed, abs=1e-13)
    return recomputed


@pytest.mark.parametrize("seed", range(5))
def test_optimised_unit_embeddings_reach_the_cap_and_no_further_k8(seed):
    K, tau = 8, 1.0
    cap = attainable_cosine_cap(K, tau)
    found = _maximise(K, K, tau, seed)
    assert found <= cap + 1e-12
    assert cap - found < 1e-9
    assert found < cosine_cap(K, tau) - 0.5  # far below the score-range cap


@pytest.mark.parametrize(("K", "tau"), [(5, 0.2), (12, 0.5), (16, 2.0)])
def test_optimised_unit_embeddings_other_sizes(K, tau):
    cap = attainable_cosine_cap(K, tau)
    found = [_maximise(K, K, tau, seed) for seed in range(2)]
    assert max(found) <= cap + 1e-12
    assert cap - max(found) < 1e-8


def test_too_few_dimensions_stay_strictly_below():
    # The simplex needs K - 1 dimensions; in fewer the cap is not reached.
    K, tau = 8, 1.0
    cap = attainable_cosine_cap(K, tau)
    for d in (2, 4):
        found = max(_maximise(K, d, tau, seed) for seed in range(3))
        assert found < cap - 1e-3


def test_the_seed_is_the_start():
    a = maximise_infonce_over_unit_embeddings(5, 0.5, 3, seed=4)
    b = maximise_infonce_over_unit_embeddings(5, 0.5, 3, seed=np.random.default_rng(4))
    assert a[0] == b[0] and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])


@pytest.mark.parametrize("tau", [1e-4, 1e4])
def test_the_ends_of_the_temperature_range(tau):
    value, X, Y = maximise_infonce_over_unit_embeddings(4, tau, 3, seed=1)
    assert math.isfinite(value) and value <= attainable_cosine_cap(4, tau) + 1e-12
    assert np.all(np.isfinite(X)) and np.all(np.isfinite(Y))


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"batch_size": 1}, ValueError, "batch_size"),
        ({"batch_size": 8.0}, TypeError, "batch_size"),
        ({"temperature": 0.0}, ValueError, "temperature"),
        ({"temperature": float("nan")}, ValueError, "temperature"),
        ({"temperature": 5e-5}, ValueError, "temperature"),
        ({"temperature": 2e4}, ValueError, "temperature"),
        ({"temperature": "1"}, TypeError, "temperature"),
        ({"dim": 0}, ValueError, "dim"),
        ({"dim": 2.0}, TypeError, "dim"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": None}, TypeError, "seed"),
    ],
)
def test_maximiser_bad_input(kwargs, error, needle):
    args = {"batch_size": 4, "temperature": 1.0, "dim": 3, **kwargs}
    seed = args.pop("seed", 0)
    with pytest.raises(error, match=needle):
        maximise_infonce_over_unit_embeddings(**args, seed=seed)
