"""Tests for infonce_lib.hypersphere: Wang & Isola's metrics and the large-K limit.

Finite batches drawn from a set of pairs (infonce_lib.convergence) are in test_convergence.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from infonce_lib import hypersphere
from infonce_lib.hypersphere import (
    ContrastiveLimit,
    alignment,
    contrastive_loss_limit,
    sample_sphere_pairs,
    sphere_log_partition,
    uniformity,
    unwarp_sphere,
    warp_sphere,
)


def _unit(rng, n, m):
    Z = rng.normal(size=(n, m))
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


# ---------------------------------------------------------------- alignment


def test_alignment_hand_cases():
    e1, e2 = [1.0, 0.0], [0.0, 1.0]
    assert alignment([e1, e2], [e1, e2]) == 0.0
    assert alignment([e1], [[-1.0, 0.0]]) == pytest.approx(4.0, rel=1e-15)  # distance 2
    assert alignment([e1], [[-1.0, 0.0]], alpha=1) == pytest.approx(2.0, rel=1e-15)
    assert alignment([e1], [e2], alpha=2) == pytest.approx(2.0, rel=1e-15)  # sqrt(2)^2
    assert alignment([e1], [e2], alpha=3) == pytest.approx(2**1.5, rel=1e-15)
    assert alignment([e1, e1], [e1, e2]) == pytest.approx(1.0, rel=1e-15)  # mean of 0, 2


def test_alignment_of_unit_vectors_is_two_minus_twice_the_mean_cosine(rng):
    Zx, Zy = _unit(rng, 50, 4), _unit(rng, 50, 4)
    mean_cos = np.mean(np.sum(Zx * Zy, axis=1))
    assert alignment(Zx, Zy) == pytest.approx(2 - 2 * mean_cos, rel=1e-13)


# ---------------------------------------------------------------- uniformity


def _uniformity_reference(Z, t):
    n = len(Z)
    vals = [
        -t * float(np.sum((np.asarray(Z[i]) - np.asarray(Z[j])) ** 2))
        for i in range(n)
        for j in range(i + 1, n)
    ]
    return float(scipy.special.logsumexp(vals) - math.log(len(vals)))


def test_uniformity_hand_cases():
    # Two antipodal points: one distinct pair at squared distance 4.
    assert uniformity([[1.0, 0.0], [-1.0, 0.0]]) == pytest.approx(-8.0, rel=1e-15)
    assert uniformity([[1.0, 0.0], [-1.0, 0.0]], t=0.5) == pytest.approx(-2.0, rel=1e-15)
    # An orthonormal basis: every distinct pair at squared distance 2.
    assert uniformity(np.eye(5)) == pytest.approx(-4.0, rel=1e-14)
    # A regular tetrahedron on S^2: pairwise cosine -1/3, squared distance 8/3.
    T = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / math.sqrt(3)
    assert uniformity(T) == pytest.approx(-16.0 / 3.0, rel=1e-14)
    # All embeddings equal: the worst value, 0.
    assert uniformity(np.tile([[0.6, 0.8]], (7, 1))) == 0.0


def test_uniformity_averages_over_distinct_pairs_only():
    # With self-pairs included the two-point value would be log((2 + 2 e^{-8}) / 4).
    Z = [[1.0, 0.0], [-1.0, 0.0]]
    assert uniformity(Z) != pytest.approx(math.log((2 + 2 * math.exp(-8)) / 4), abs=1e-3)


def test_uniformity_matches_loop_reference(rng):
    Z = _unit(rng, 12, 3)
    for t in (0.1, 2.0, 50.0):
        assert uniformity(Z, t) == pytest.approx(_uniformity_reference(Z.tolist(), t), rel=1e-12)


def test_uniformity_large_t_is_finite_and_exact():
    # e^{-1000 * 4} underflows to 0 in float64; the log-sum-exp form does not.
    assert uniformity([[1.0, 0.0], [-1.0, 0.0]], t=1000.0) == pytest.approx(-4000.0, rel=1e-15)


unit_rows = st.integers(2, 10).flatmap(
    lambda n: arrays(
        np.float64,
        (n, 3),
        elements=st.floats(-5, 5, allow_nan=False, allow_infinity=False),
    )
)


@given(unit_rows, st.floats(0.01, 20))
def test_uniformity_properties(Z, t):
    val = uniformity(Z, t)
    assert val <= 1e-12
    # Invariant under a rotation of the space and a permutation of the rows.
    R = np.linalg.qr(np.arange(1.0, 10.0).reshape(3, 3) ** 2)[0]
    assert uniformity(Z[::-1] @ R.T, t) == pytest.approx(val, rel=1e-9, abs=1e-9)


@given(unit_rows, st.floats(0.1, 4))
def test_alignment_is_non_negative_and_zero_on_itself(Z, alpha):
    assert alignment(Z, Z, alpha) == 0.0
    assert alignment(Z, Z[::-1], alpha) >= 0.0


# ---------------------------------------------------------------- sphere log-partition


@pytest.mark.parametrize("tau", [1e-3, 0.05, 0.5, 1.0, 10.0, 1e4])
def test_sphere_log_partition_closed_forms(tau):
    k = 1.0 / tau
    # S^2 (m = 3): E e^{k s} with s uniform on [-1, 1] is sinh(k) / k, computed stably.
    s2 = (
        k - math.log(2 * k) + math.log1p(-math.exp(-2 * k))
        if k > 1e-3
        else math.log(math.sinh(k) / k)
    )
    assert sphere_log_partition(3, tau) == pytest.approx(s2, rel=1e-10, abs=1e-15)
    # S^0 (m = 1): u = +-1, so the mean is cosh(k).
    c0 = k + math.log1p(math.exp(-2 * k)) - math.log(2)
    assert sphere_log_partition(1, tau) == pytest.approx(c0, rel=1e-10, abs=1e-15)
    # S^1 (m = 2): the mean of e^{k cos(theta)} over the circle is I_0(k).
    i0 = math.log(scipy.special.ive(0, k)) + k
    assert sphere_log_partition(2, tau) == pytest.approx(i0, rel=1e-10, abs=1e-15)


def test_sphere_log_partition_matches_monte_carlo(rng):
    m, tau = 6, 0.4
    U = _unit(rng, 400_000, m)
    vals = np.exp(U[:, 0] / tau)
    mc = math.log(vals.mean())
    se = vals.std(ddof=1) / math.sqrt(vals.size) / vals.mean()
    assert abs(sphere_log_partition(m, tau) - mc) < 4 * se


@pytest.mark.parametrize("dim", [2, 3, 10, 100, 1000, 100_000])
@pytest.mark.parametrize("tau", [1e-3, 0.07, 1.0, 1e3])
def test_sphere_log_partition_is_finite_in_range_and_continuous(dim, tau):
    val = sphere_log_partition(dim, tau)
    assert math.isfinite(val)
    assert 0.0 <= val < 1.0 / tau
    # Large dimension: u.v ~ N(0, 1/m), so log E e^{k u.v} ~ k^2 / (2 m) when k^2 << m.
    k = 1.0 / tau
    if k * k < dim / 100:
        assert val == pytest.approx(k * k / (2 * dim), rel=0.05)


def test_sphere_log_partition_routes_agree_where_they_switch():
    # Three routes: the series (z <= m/2), log(ive) + kappa, and a log-space series where
    # ive underflows. Each pair must agree where the function hands over between them.
    ive_route = lambda m, k: (  # noqa: E731
        math.lgamma(m / 2)
        + (m / 2 - 1) * math.log(2 / k)
        + math.log(scipy.special.ive(m / 2 - 1, k))
        + k
    )
    for m in (3, 10, 200):
        k = math.sqrt(2.0 * m) * (1 + 1e-12)  # just past z = kappa^2 / 4 = m / 2
        series = math.log1p(hypersphere._hyp0f1_minus_one(m / 2, k * k / 4))
        assert ive_route(m, k) == pytest.approx(series, rel=1e-12)
        assert sphere_log_partition(m, 1 / k) == pytest.approx(series, rel=1e-12)
    k = 300.0
    m = 1422  # the last even dimension at kappa = 300 before ive underflows (1e-290)
    assert scipy.special.ive(m / 2 - 1, k) > 1e-290 > scipy.special.ive(m / 2, k)
    assert hypersphere._log_hyp0f1(m / 2, k * k / 4) == pytest.approx(ive_route(m, k), rel=1e-12)
    assert sphere_log_partition(m + 2, 1 / k) == pytest.approx(
        hypersphere._log_hyp0f1(m / 2 + 1, k * k / 4), rel=1e-15
    )


def test_sphere_log_partition_tiny_temperature_overflow_raises():
    with pytest.raises(ValueError, match="overflows"):
        sphere_log_partition(3, 1e-320)


# ---------------------------------------------------------------- the large-K limit


def _limit_reference(Zx, Zy, tau):
    n = len(Zx)
    align = -sum(float(np.dot(Zx[i], Zy[i])) for i in range(n)) / (n * tau)
    unif = (
        sum(
            scipy.special.logsumexp([float(np.dot(Zx[j], Zy[i])) / tau for j in range(n)])
            - math.log(n)
            for i in range(n)
        )
        / n
    )
    return align, unif


def test_limit_matches_loop_reference(rng):
    Zx, Zy = _unit(rng, 15, 4), _unit(rng, 15, 4)
    lim = contrastive_loss_limit(Zx, Zy, 0.3)
    assert isinstance(lim, ContrastiveLimit)
    a, u = _limit_reference(Zx, Zy, 0.3)
    assert lim.alignment_term == pytest.approx(a, rel=1e-13)
    assert lim.uniformity_term == pytest.approx(u, rel=1e-13)
    assert lim.value == pytest.approx(a + u, rel=1e-13)


def test_limit_of_collapsed_embeddings_is_zero():
    Z = np.tile([[0.0, 0.0, 1.0]], (6, 1))
    lim = contrastive_loss_limit(Z, Z, 0.1)
    assert lim.alignment_term == pytest.approx(-10.0, rel=1e-15)
    assert lim.value == pytest.approx(0.0, abs=1e-12)


def test_alignment_term_is_affine_in_the_alignment_metric(rng):
    Zx, Zy = sample_sphere_pairs(200, 5, concentration=1.0, noise=0.5, seed=rng)
    tau = 0.2
    lim = contrastive_loss_limit(Zx, Zy, tau)
    assert alignment(Zx, Zy) == pytest.approx(2 + 2 * tau * lim.alignment_term, rel=1e-12)


def test_limit_uniformity_term_of_uniform_embeddings_approaches_the_sphere_value():
    tau, m = 0.5, 3
    Zx, Zy = sample_sphere_pairs(4000, m, concentration=0.0, noise=0.3, seed=1)
    lim = contrastive_loss_limit(Zx, Zy, tau)
    assert lim.uniformity_term == pytest.approx(sphere_log_partition(m, tau), abs=0.02)


def test_limit_is_blockwise_exact(monkeypatch, rng):
    Zx, Zy = _unit(rng, 30, 3), _unit(rng, 30, 3)
    whole = contrastive_loss_limit(Zx, Zy, 0.25)
    monkeypatch.setattr(hypersphere, "_MAX_ENTRIES", 70)  # blocks of 2 anchors
    assert contrastive_loss_limit(Zx, Zy, 0.25) == pytest.approx(whole, rel=1e-14)


def test_limit_small_temperature_is_finite():
    Z = np.eye(3)
    lim = contrastive_loss_limit(Z, Z, 1e-4)  # scores up to 1e4
    assert math.isfinite(lim.value)
    # Each anchor's own candidate dominates its log-sum-exp: -1/tau + (1/tau - log 3).
    assert lim.value == pytest.approx(-math.log(3), abs=1e-9)


# ---------------------------------------------------------------- sampler


def test_sphere_pairs():
    Zx, Zy = sample_sphere_pairs(20_000, 4, concentration=0.0, noise=0.0, seed=3)
    np.testing.assert_allclose(np.linalg.norm(Zx, axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(Zy, Zx, rtol=1e-14)  # no noise: identical views
    assert np.abs(Zx.mean(axis=0)).max() < 0.02  # uniform: mean near 0
    Cx, _ = sample_sphere_pairs(20_000, 4, concentration=5.0, noise=0.1, seed=3)
    assert Cx[:, 0].mean() > 0.9  # bunched around e_1
    a, b = sample_sphere_pairs(5, 3, concentration=1.0, noise=0.3, seed=np.random.default_rng(9))
    c, d = sample_sphere_pairs(5, 3, concentration=1.0, noise=0.3, seed=9)
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(b, d)


# ---------------------------------------------------------------- warping the sphere


@given(
    st.integers(1, 20),
    st.integers(1, 6),
    st.floats(-0.99, 0.99, allow_nan=False),
    st.integers(0, 2**32 - 1),
)
def test_warp_is_a_bijection_of_the_sphere(n, m, c, seed):
    Z = _unit(np.random.default_rng(seed), n, m)
    W = warp_sphere(Z, c)
    np.testing.assert_allclose(np.linalg.norm(W, axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(unwarp_sphere(W, c), Z, atol=1e-9)
    np.testing.assert_allclose(warp_sphere(unwarp_sphere(Z, c), c), Z, atol=1e-9)


def test_warp_hand_cases_and_identity():
    Z = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(warp_sphere(Z, 0.0), Z)
    W = warp_sphere(Z, 0.75)
    np.testing.assert_allclose(W[:2], Z[:2], rtol=1e-15)  # the poles stay put
    np.testing.assert_allclose(W[2], [0.6, 0.8], rtol=1e-15)  # (0.75, 1) / 1.25
    np.testing.assert_allclose(unwarp_sphere([[0.6, 0.8]], 0.75), [[0.0, 1.0]], atol=1e-15)


def test_warp_changes_geometry_but_not_the_pairing():
    Zx, Zy = sample_sphere_pairs(800, 3, concentration=0.0, noise=0.2, seed=2)
    Wx, Wy = warp_sphere(Zx, 0.9), warp_sphere(Zy, 0.9)
    assert uniformity(Wx) > uniformity(Zx) + 0.3  # bunched: less uniform
    before = contrastive_loss_limit(Zx, Zy, 0.5).value
    assert contrastive_loss_limit(Wx, Wy, 0.5).value > before + 0.3


# ---------------------------------------------------------------- bad input


def test_bad_inputs_raise_clear_errors():
    Z = np.eye(3)
    with pytest.raises(ValueError, match="same shape"):
        alignment(Z, Z[:2])
    with pytest.raises(ValueError, match="alpha"):
        alignment(Z, Z, alpha=0)
    with pytest.raises(ValueError, match="Zx must be 2-D"):
        alignment([1.0, 0.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="at least 2 embeddings"):
        uniformity([[1.0, 0.0]])
    with pytest.raises(ValueError, match="t must be > 0"):
        uniformity(Z, t=-1)
    with pytest.raises(ValueError, match="Z must be finite"):
        uniformity([[np.nan, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="at least 2 pairs"):
        contrastive_loss_limit([[1.0, 0.0]], [[1.0, 0.0]], 0.5)
    with pytest.raises(ValueError, match="temperature"):
        contrastive_loss_limit(Z, Z, 0.0)
    with pytest.raises(ValueError, match="overflowed"):
        contrastive_loss_limit(Z * 1e200, Z * 1e200, 1e-100)
    with pytest.raises(ValueError, match="dim must be >= 1"):
        sphere_log_partition(0, 0.5)
    with pytest.raises(ValueError, match="temperature"):
        sphere_log_partition(3, float("inf"))
    with pytest.raises(ValueError, match="dim must be >= 2"):
        sample_sphere_pairs(3, 1, concentration=0.0, noise=0.1, seed=0)
    with pytest.raises(ValueError, match="noise"):
        sample_sphere_pairs(3, 3, concentration=0.0, noise=-0.1, seed=0)
    with pytest.raises(TypeError, match="Zy"):
        alignment(Z, [["a", "b", "c"]] * 3)
    with pytest.raises(ValueError, match="unit vectors"):
        warp_sphere(2 * Z, 0.5)
    with pytest.raises(ValueError, match="shift"):
        warp_sphere(Z, 1.0)
    with pytest.raises(ValueError, match="shift"):
        unwarp_sphere(Z, float("nan"))
    with pytest.raises(TypeError, match="shift"):
        warp_sphere(Z, True)


# ---------------------------------------------------------------- near the float64 limit


def _opposite_pairs(n=20):
    """Rows +-e_1 in turn, each paired with its opposite: scores of +-1/tau."""
    Zx = np.tile([[1.0, 0.0], [-1.0, 0.0]], (n // 2, 1))
    return Zx, -Zx


def test_limit_whose_terms_add_up_beyond_float64():
    Zx, Zy = _opposite_pairs()
    lim = contrastive_loss_limit(Zx, Zy, 1 / 1.7e307)
    assert lim.alignment_term == pytest.approx(1.7e307, rel=1e-15)
    assert lim.uniformity_term == pytest.approx(1.7e307, rel=1e-15)
    assert lim.value == pytest.approx(3.4e307, rel=1e-15)


def test_alignment_of_distances_whose_powers_add_up_beyond_float64():
    # each distance 1.3e154, its square 1.69e308: finite; the sum of 20 is not
    Zx = np.zeros((20, 2))
    Zx[:, 0] = 6.5e153
    assert alignment(Zx, -Zx, 2.0) == pytest.approx(1.3e154**2, rel=1e-15)


def test_alignment_of_distances_beyond_float64_whose_powers_are_not():
    Zx = np.full((4, 3), 1.7e308)
    # distance 2 sqrt(3) 1.7e308, beyond float64; its square root is not
    want = math.sqrt(2 * math.sqrt(3)) * math.sqrt(1.7e308)
    assert alignment(Zx, -Zx, 0.5) == pytest.approx(want, rel=1e-15)
    Zx = np.full((4, 3), 1e154)  # distance 3.5e154: its square's sum overflows in the norm
    assert alignment(Zx, -Zx, 1.0) == pytest.approx(2e154 * math.sqrt(3), rel=1e-15)
    with pytest.raises(ValueError, match=r"distances .* to the power alpha overflowed"):
        alignment(Zx, -Zx, 2.0)  # 1.2e309: the powers themselves overflow


@pytest.mark.parametrize("tau", [1e-300, 1e-100, 1e-12, 5.6e-309])
def test_sphere_log_partition_at_tiny_temperatures(tau):
    # kappa = 1/tau beyond scipy.special.ive's range (about 1e9): closed forms for m = 1, 3
    k = 1.0 / tau
    want = k - (math.log(2.0) + math.log(k))
    assert sphere_log_partition(3, tau) == pytest.approx(want, rel=1e-15)
    assert sphere_log_partition(1, tau) == pytest.approx(k - math.log(2.0), rel=1e-15)
    for m in (2, 10, 10**5, 10**9):
        assert 0.0 < sphere_log_partition(m, tau) <= k  # below k, up to its rounding


@pytest.mark.parametrize("dim", [2, 4, 10, 1000, 30_000, 10**5, 10**6])
def test_large_argument_expansions_agree_with_ive_where_both_work(dim):
    # Hankel's expansion (nu^2 <= kappa / 4) or Debye's: against log(ive) + kappa at the
    # largest kappa scipy evaluates (1e9), and a little below.
    nu = dim / 2 - 1
    for k in (1e9, 5e8):
        ref = math.log(scipy.special.ive(nu, k)) + k
        assert hypersphere._log_bessel_i_large(nu, k) == pytest.approx(ref, rel=1e-15)


def test_debye_replaces_a_series_of_millions_of_terms():
    # A dimension of 1e8 at tau = 1e-9: ive underflows and the log-space series would need
    # about 5e8 terms (it raised "needs more than 4 million series terms"). At the handover
    # (the series' largest term the millionth) both routes agree.
    assert math.isfinite(sphere_log_partition(10**8, 1e-9))
    for b in (1e5, 1e6):
        z = 1e6 * (b + 1e6)  # k (b + k) = z at k = 1e6
        k = 2 * math.sqrt(z)
        debye = math.lgamma(b) + (b - 1) * math.log(2 / k)
        debye += hypersphere._log_bessel_i_large(b - 1, k)
        assert debye == pytest.approx(hypersphere._log_hyp0f1(b, z), rel=1e-13)
