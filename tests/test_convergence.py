"""Tests for infonce_lib.convergence: finite batches against Wang & Isola's limit.

The batch losses of ``sampled_contrastive_losses`` (against chapter 2's loss, by every route
of the score table, in blocks, at the float64 limits) and the parts of their deviation from
the limit, ``contrastive_limit_deviation`` (against loops in Python floats).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from infonce_lib import convergence, info_nce_loss
from infonce_lib.convergence import contrastive_limit_deviation, sampled_contrastive_losses
from infonce_lib.hypersphere import contrastive_loss_limit, sample_sphere_pairs
from tests.reference import logsumexp_list


def _unit(rng, n, m):
    Z = rng.normal(size=(n, m))
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


# ---------------------------------------------------------------- the batch losses


def test_sampled_losses_equal_info_nce_loss_of_chapter_2(rng):
    Zx, Zy = _unit(rng, 20, 3), _unit(rng, 20, 3)
    got = sampled_contrastive_losses(Zx, Zy, 0.5, 6, 4, seed=42)
    idx = np.random.default_rng(42).integers(0, 20, size=(4, 6))
    for b in range(4):
        ref = info_nce_loss(Zy[idx[b]], Zx[idx[b]], temperature=0.5)  # anchors y, candidates x
        assert got[b] == pytest.approx(ref, rel=1e-13)


def test_sampled_losses_blocking_does_not_change_values(monkeypatch, rng):
    Zx, Zy = _unit(rng, 20, 3), _unit(rng, 20, 3)
    a = sampled_contrastive_losses(Zx, Zy, 0.5, 5, 7, seed=1)
    monkeypatch.setattr(convergence, "_MAX_ENTRIES", 30)  # one batch per block
    np.testing.assert_allclose(sampled_contrastive_losses(Zx, Zy, 0.5, 5, 7, seed=1), a, 1e-14)


def _batch_by_batch_losses(Zx, Zy, tau, k, nb, seed):
    """Reference: each batch's K x K scores and its InfoNCE loss, one batch at a time."""
    idx = np.random.default_rng(seed).integers(0, Zx.shape[0], size=(nb, k))
    return np.array([info_nce_loss(Zy[i], Zx[i], temperature=tau) for i in idx])


@pytest.mark.parametrize(
    "n, k, route",
    [(60, 3, "gathered"), (60, 4, "gathered"), (30, 3, "counts"), (12, 40, "counts")],
)
def test_sampled_losses_from_the_score_table_match_batch_by_batch(rng, n, k, route):
    # 100 k^2 >= n^2 routes to the counts product, below it to gathered entries.
    assert (100 * k * k >= n * n) == (route == "counts")
    Zx, Zy = _unit(rng, n, 3), _unit(rng, n, 3)
    got = sampled_contrastive_losses(Zx, Zy, 0.3, k, 9, seed=7)
    want = _batch_by_batch_losses(Zx, Zy, 0.3, k, 9, seed=7)
    np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("n, k, nb, max_entries", [(12, 40, 30, 150), (60, 3, 900, 3_600)])
def test_sampled_losses_from_the_score_table_in_blocks(monkeypatch, rng, n, k, nb, max_entries):
    # The n x n table just fits; the batches go in blocks of 12 (counts) or 400 (gathered).
    Zx, Zy = _unit(rng, n, 3), _unit(rng, n, 3)
    want = _batch_by_batch_losses(Zx, Zy, 0.5, k, nb, seed=3)
    monkeypatch.setattr(convergence, "_MAX_ENTRIES", max_entries)
    got = sampled_contrastive_losses(Zx, Zy, 0.5, k, nb, seed=3)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_sampled_losses_fall_back_when_a_positive_is_far_below_its_row_max(rng):
    # At tau = 1e-5 a noisy positive lies hundreds of nats below a closer candidate, where
    # exp(S - max) could underflow: batch-by-batch scores are used, and the answer is exact.
    Zx = _unit(rng, 30, 3)
    Zy = Zx + 0.3 * rng.normal(size=Zx.shape)
    Zy /= np.linalg.norm(Zy, axis=1, keepdims=True)
    S = Zy @ Zx.T / 1e-5
    assert (np.diagonal(S) - S.max(axis=1)).min() < -600
    got = sampled_contrastive_losses(Zx, Zy, 1e-5, 6, 5, seed=2)
    np.testing.assert_allclose(got, _batch_by_batch_losses(Zx, Zy, 1e-5, 6, 5, 2), rtol=1e-13)


def test_sampled_losses_minus_log_k_converge_to_the_limit():
    Zx, Zy = sample_sphere_pairs(500, 3, concentration=2.0, noise=0.2, seed=0)
    lim = contrastive_loss_limit(Zx, Zy, 0.5).value
    rms = []
    for k, nb in ((4, 4000), (64, 400), (1024, 40)):
        dev = sampled_contrastive_losses(Zx, Zy, 0.5, k, nb, seed=k) - math.log(k) - lim
        rms.append(math.sqrt(np.mean(dev**2)))
    assert rms[0] > 2 * rms[1] > 4 * rms[2]
    assert rms[2] < 0.03


def test_collapsed_embeddings_give_log_k_on_every_batch():
    Z = np.tile([[1.0, 0.0]], (5, 1))
    L = sampled_contrastive_losses(Z, Z, 0.05, 16, 3, seed=0)
    np.testing.assert_allclose(L, math.log(16), rtol=1e-14)


def test_sampled_losses_bad_inputs_raise_clear_errors():
    Z = np.eye(3)
    with pytest.raises(ValueError, match="batch_size must be >= 2"):
        sampled_contrastive_losses(Z, Z, 0.5, 1, 3, seed=0)
    with pytest.raises(ValueError, match="n_batches must be >= 1"):
        sampled_contrastive_losses(Z, Z, 0.5, 2, 0, seed=0)
    with pytest.raises(TypeError, match="seed"):
        sampled_contrastive_losses(Z, Z, 0.5, 2, 3, seed=None)
    with pytest.raises(ValueError, match="overflowed"):
        sampled_contrastive_losses(Z * 1e200, Z * 1e200, 1e-100, 2, 3, seed=0)
    with pytest.raises(ValueError, match="at least 2 pairs"):
        sampled_contrastive_losses([[1.0, 0.0]], [[1.0, 0.0]], 0.5, 2, 3, seed=0)


# ---------------------------------------------------------------- near the float64 limit


def _opposite_pairs(n=20):
    """Rows +-e_1 in turn, each paired with its opposite: scores of +-1/tau."""
    Zx = np.tile([[1.0, 0.0], [-1.0, 0.0]], (n // 2, 1))
    return Zx, -Zx


def _loop_losses(Zx, Zy, tau, index):
    """Each batch's loss from its scores in Python floats: every score less its row's
    maximum first (a score 1.8e308 below it gives -inf, whose exponential is 0), so that
    log K is not lost beside a score of 1e308."""
    out = []
    for idx in index:
        terms = []
        for i, a in enumerate(idx):
            row = [math.fsum(Zy[a] * Zx[c]) / tau for c in idx]
            shifted = [v - max(row) for v in row]
            terms.append(math.log(math.fsum(math.exp(v) for v in shifted)) - shifted[i])
        out.append(math.fsum(terms) / len(idx))
    return out


def _span_beyond_float64(seed=4):
    """The unit pairs of rng(seed) with one entry of Zy set to 1.7e308: anchor 1's scores
    are finite (-8.8e307 and 1.25e308 at tau = 0.5) but span more than 1.8e308."""
    rng = np.random.default_rng(seed)
    Zx, Zy = _unit(rng, 2, 2), _unit(rng, 2, 2)
    Zy.flat[3] = 1.7e308
    return Zx, Zy


@pytest.mark.parametrize("route", ["score table", "batch by batch"])
@pytest.mark.parametrize("seed", [0, 1, 5])
def test_sampled_losses_of_scores_spanning_more_than_float64(monkeypatch, route, seed):
    # Scores more than 1.8e308 below their row's maximum contribute e^-inf = 0 to the
    # denominators, which is right; no RuntimeWarning (the subtraction once overflowed).
    Zx, Zy = _span_beyond_float64()
    S = Zy @ Zx.T / 0.5
    assert np.isfinite(S).all() and S[1, 1] > 0 > S[1, 0] and S[1, 1] > S[1, 0] + 1.7e308
    if route == "batch by batch":
        monkeypatch.setattr(convergence, "_MAX_ENTRIES", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = sampled_contrastive_losses(Zx, Zy, 0.5, 3, 2, seed=seed)
    index = np.random.default_rng(seed).integers(0, 2, size=(2, 3))
    want = _loop_losses(Zx, Zy, 0.5, index)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    assert seed != 1 or len(set(index[0])) == 2  # one of the seeds mixes the two pairs


def test_sampled_losses_whose_terms_add_up_beyond_float64():
    # tau = 1/1.7e307: each term is about 3.4e307 (the scores span 3.4e307, not 1.8e308),
    # 20 of them overflow in sum, their mean does not.
    Zx, Zy = _opposite_pairs()
    tau = 1 / 1.7e307
    losses = sampled_contrastive_losses(Zx, Zy, tau, 20, 3, seed=0)
    np.testing.assert_allclose(losses, 2 * 1.7e307, rtol=1e-15)


# ---------------------------------------------------------------- the deviation taken apart


def _loop_parts(Zx, Zy, tau, index):
    """Per batch: the positive's term, the Jensen term and -s+ + log mu, means over the
    anchors, from loops in Python floats."""
    n = len(Zx)
    log_mu = [logsumexp_list([math.fsum(Zy[a] * Zx[c]) / tau for c in range(n)]) - math.log(n)
              for a in range(n)]  # fmt: skip
    out = []
    for idx in index:
        k = len(idx)
        parts = []
        for i, a in enumerate(idx):
            s_pos = math.fsum(Zy[a] * Zx[a]) / tau
            negs = [math.fsum(Zy[a] * Zx[c]) / tau for j, c in enumerate(idx) if j != i]
            lse = logsumexp_list(negs)
            parts.append((math.log1p(math.exp(s_pos - lse)), lse - math.log(k - 1) - log_mu[a],
                          log_mu[a] - s_pos))  # fmt: skip
        out.append([math.fsum(p[r] for p in parts) / k for r in range(3)])
    return np.array(out).T


@pytest.mark.parametrize("k", [2, 3, 8])
def test_deviation_parts_match_a_loop_reference(rng, k):
    Zx, Zy = _unit(rng, 9, 3), _unit(rng, 9, 3)
    d = contrastive_limit_deviation(Zx, Zy, 0.3, k, 5, seed=11)
    index = np.random.default_rng(11).integers(0, 9, size=(5, k))
    positive, jensen, bracket = _loop_parts(Zx, Zy, 0.3, index)
    limit = contrastive_loss_limit(Zx, Zy, 0.3).value
    np.testing.assert_allclose(d.positive, positive, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(d.jensen, jensen, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(d.anchor_noise, bracket - limit, rtol=1e-13, atol=1e-14)
    assert d.limit == limit and d.batch_size == k
    assert d.offset == -math.log(k / (k - 1))
    np.testing.assert_allclose(d.losses, _loop_losses(Zx, Zy, 0.3, index), rtol=1e-13)


def test_deviation_parts_add_up_and_the_losses_are_the_sampled_ones(rng):
    Zx, Zy = sample_sphere_pairs(60, 3, concentration=2.0, noise=0.2, seed=rng)
    gen_a, gen_b = np.random.default_rng(3), np.random.default_rng(3)
    for k, nb in ((4, 50), (16, 20)):  # one generator, drawn from twice, in step
        d = contrastive_limit_deviation(Zx, Zy, 0.5, k, nb, gen_a)
        same = sampled_contrastive_losses(Zx, Zy, 0.5, k, nb, gen_b)
        np.testing.assert_array_equal(d.losses, same)
        np.testing.assert_array_equal(d.deviation, d.losses - math.log(k) - d.limit)
        parts = d.positive + d.jensen + d.offset + d.anchor_noise
        np.testing.assert_allclose(parts, d.deviation, rtol=0, atol=1e-13)
        assert np.all(d.positive > 0) and d.positive.shape == (nb,)


def test_deviation_of_collapsed_embeddings_is_zero_in_every_part_but_two():
    # Every score equal: the positive's term is log(K/M) and cancels the offset; Jensen's
    # term and the anchors' noise vanish; the deviation is 0.
    Z = np.tile([[0.6, 0.8]], (5, 1))
    d = contrastive_limit_deviation(Z, Z, 0.2, 4, 3, seed=0)
    np.testing.assert_allclose(d.positive, math.log(4 / 3), rtol=1e-14)
    np.testing.assert_allclose(d.positive + d.offset, 0.0, atol=1e-15)
    np.testing.assert_allclose([d.jensen, d.anchor_noise, d.deviation], 0.0, atol=1e-14)
    assert d.c_positive == pytest.approx(1.0, rel=1e-14)
    assert d.c_jensen == pytest.approx(0.0, abs=1e-14)


def test_first_order_coefficients_match_a_loop_and_the_large_k_parts(rng):
    Zx, Zy = sample_sphere_pairs(200, 3, concentration=2.0, noise=0.2, seed=rng)
    tau, n = 0.5, 200
    d = contrastive_limit_deviation(Zx, Zy, tau, 256, 64, seed=5)
    S = [[math.fsum(Zy[a] * Zx[c]) / tau for c in range(n)] for a in range(n)]
    log_mu = [logsumexp_list(row) - math.log(n) for row in S]
    c_pos = math.fsum(math.exp(S[a][a] - log_mu[a]) for a in range(n)) / n
    c_j = 0.5 * (math.fsum(math.exp(2 * (v - log_mu[a])) for a in range(n) for v in S[a])
                 / n**2 - 1)  # fmt: skip
    assert d.c_positive == pytest.approx(c_pos, rel=1e-12)
    assert d.c_jensen == pytest.approx(c_j, rel=1e-12)
    # At K = 256 the positive's term is c+/M to first order. (The Jensen term, -c_J/M to
    # first order, is lost in its noise there; at K = 4 it is clearly negative.)
    assert 255 * d.positive.mean() == pytest.approx(d.c_positive, rel=0.05)
    small = contrastive_limit_deviation(Zx, Zy, tau, 4, 4000, seed=6)
    assert small.jensen.mean() < -3 * small.jensen.std(ddof=1) / math.sqrt(4000)


def test_anchor_noise_has_mean_zero(rng):
    Zx, Zy = sample_sphere_pairs(300, 3, concentration=1.0, noise=0.3, seed=rng)
    d = contrastive_limit_deviation(Zx, Zy, 0.5, 8, 4000, seed=2)
    se = d.anchor_noise.std(ddof=1) / math.sqrt(4000)
    assert abs(d.anchor_noise.mean()) < 4 * se and d.anchor_noise.std() > 0.05


def test_deviation_blocking_does_not_change_values(monkeypatch, rng):
    Zx, Zy = _unit(rng, 20, 3), _unit(rng, 20, 3)
    a = contrastive_limit_deviation(Zx, Zy, 0.5, 5, 7, seed=1)
    monkeypatch.setattr(convergence, "_MAX_ENTRIES", 30)  # one batch (or anchor row) per block
    b = contrastive_limit_deviation(Zx, Zy, 0.5, 5, 7, seed=1)
    for name in ("losses", "positive", "jensen", "anchor_noise", "c_positive", "c_jensen"):
        np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=1e-13, atol=1e-15)


def test_deviation_of_scores_spanning_more_than_float64_raises_without_a_warning():
    # The losses are finite (test above), but the Jensen term and the anchors' noise of
    # anchor 1 are differences of its scores, which span more than 1.8e308.
    Zx, Zy = _span_beyond_float64()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"deviation from the limit overflowed.*Zx and Zy"):
            contrastive_limit_deviation(Zx, Zy, 0.5, 3, 2, seed=1)


def test_deviation_at_small_temperatures_is_finite_and_adds_up(rng):
    # tau = 1e-3: scores up to 1000 and spans of 2000 nats; every part stays finite.
    Zx, Zy = sample_sphere_pairs(30, 3, concentration=0.0, noise=0.1, seed=rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = contrastive_limit_deviation(Zx, Zy, 1e-3, 6, 10, seed=0)
    parts = d.positive + d.jensen + d.offset + d.anchor_noise
    np.testing.assert_allclose(parts, d.deviation, rtol=0, atol=1e-9 * (1 + abs(d.limit)))


def test_deviation_bad_inputs_raise_clear_errors():
    Z = np.eye(3)
    with pytest.raises(ValueError, match="batch_size must be >= 2"):
        contrastive_limit_deviation(Z, Z, 0.5, 1, 3, seed=0)
    with pytest.raises(ValueError, match="n_batches must be >= 1"):
        contrastive_limit_deviation(Z, Z, 0.5, 2, 0, seed=0)
    with pytest.raises(TypeError, match="seed"):
        contrastive_limit_deviation(Z, Z, 0.5, 2, 3, seed=None)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        contrastive_limit_deviation(Z, Z, 0.0, 2, 3, seed=0)
    with pytest.raises(ValueError, match="same shape"):
        contrastive_limit_deviation(Z, Z[:2], 0.5, 2, 3, seed=0)
    with pytest.raises(ValueError, match="Zy must be finite"):
        contrastive_limit_deviation(Z, Z * np.nan, 0.5, 2, 3, seed=0)
