r"""Finite batches against Wang & Isola's limit: their losses, and the deviation taken apart.

:func:`~infonce_lib.contrastive_loss_limit` gives the limit of Wang & Isola's (2020)
Theorem 1 for a finite set of :math:`n` positive pairs (rows of ``Zx`` and ``Zy``), with
:math:`p_{\mathrm{pos}}` uniform over the pairs and :math:`p_{\mathrm{data}}` uniform over
the rows of ``Zx``. This module draws finite batches of :math:`K` pairs from that set,
indices with replacement, so that the :math:`M = K - 1` negatives of every anchor are
independent draws from :math:`p_{\mathrm{data}}` as in the theorem:
:func:`sampled_contrastive_losses` gives each batch's InfoNCE loss, and
:func:`contrastive_limit_deviation` takes each batch's deviation from the limit apart into
the positive's own term in the denominator, the bias of a logarithm of an average (Jensen's
inequality), the offset between :math:`\log K` and :math:`\log M`, and the anchors' own
sampling noise. Both draw the same batches from the same seed.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._validation import as_generator, as_int, as_positive_scalar, finite_or_raise
from .core import _positive_log_probs, _safe_mean
from .hypersphere import _MAX_ENTRIES, _SPAN, _limit_and_log_sums, _pair_arrays

__all__ = ["LimitDeviation", "contrastive_limit_deviation", "sampled_contrastive_losses"]


def _batches(Zx, Zy, temperature, batch_size, n_batches, seed):
    """The clean pairs, temperature and the batches' pair indices, shape (n_batches, K)."""
    A, B = _pair_arrays(Zx, Zy)
    tau = as_positive_scalar(temperature, "temperature")
    k = as_int(batch_size, "batch_size", minimum=2)
    nb = as_int(n_batches, "n_batches", minimum=1)
    rng = as_generator(seed)
    index = rng.integers(0, A.shape[0], size=(nb, k))
    return A, B, tau, index


def _batch_scores(A, B, tau, idx) -> np.ndarray:
    """The scores ``Zy[a_i] . Zx[a_j] / tau`` of a block of batches, shape (m, K, K)."""
    with np.errstate(over="ignore", invalid="ignore"):
        F = np.matmul(B[idx], np.swapaxes(A[idx], -1, -2))
        F /= tau
    return finite_or_raise(F, "the scores Zy @ Zx.T / temperature")


def sampled_contrastive_losses(
    Zx, Zy, temperature: float, batch_size: int, n_batches: int, seed
) -> np.ndarray:
    r"""InfoNCE losses of random batches of positive pairs drawn from a finite set.

    Each batch draws :math:`K` pair indices :math:`a_1, \dots, a_K` uniformly with
    replacement (so the negatives of every anchor are i.i.d. draws from
    :math:`p_{\mathrm{data}}`, as in Wang & Isola's Theorem 1) and returns

    .. math::

        \hat{\mathcal{L}}_K = -\frac1K \sum_{i=1}^{K}
        \log \frac{e^{z^{x\top}_{a_i} z^y_{a_i} / \tau}}
        {\sum_{j=1}^{K} e^{z^{x\top}_{a_j} z^y_{a_i} / \tau}},

    the loss of chapter 2 with anchors :math:`z^y` and candidates :math:`z^x` (positive in the
    denominator; van den Oord et al., 2018, eq. 4). Its expectation is the loss with
    :math:`M = K - 1` negatives, and :math:`\hat{\mathcal{L}}_K - \log K` tends to
    :func:`~infonce_lib.contrastive_loss_limit` as :math:`K` grows;
    :func:`contrastive_limit_deviation` takes the difference apart.

    Parameters
    ----------
    Zx, Zy : array_like, shape (n, m)
        Embeddings of the positive pairs, ``n >= 2``.
    temperature : float
        :math:`\tau > 0`.
    batch_size : int
        :math:`K \ge 2`.
    n_batches : int
        Number of independent batches, ``>= 1``.
    seed : int or numpy.random.Generator
        Source of randomness (explicit). The indices are
        ``rng.integers(0, n, size=(n_batches, K))``, row ``b`` for batch ``b``.

    Notes
    -----
    Every score of every batch is an entry of the :math:`n \times n` matrix
    :math:`S = Z_y Z_x^\top / \tau`. When that matrix fits in 32 MB, it is computed and
    exponentiated once, each row shifted by its maximum :math:`m_a`, and a batch's
    denominators are sums of entries of :math:`E = e^{S - m}`: gathered by index for small
    :math:`K`, or, for :math:`K^2 \gtrsim n^2 / 100`, as one matrix product of :math:`E` with
    the batch's counts of each pair (:math:`\sum_j E_{a_i a_j} = \sum_c E_{a_i c}\, n_c`).
    A batch's values are the same as from its own :math:`K \times K` scores, to rounding.
    Otherwise (a larger :math:`n`, or a positive more than 600 nats below its row's
    maximum, where :math:`E` could underflow) the scores are computed batch by batch, a
    block of batches at a time (at most 32 MB).

    Returns
    -------
    numpy.ndarray, shape (n_batches,)
        One loss per batch, in nats.

    Raises
    ------
    TypeError, ValueError
        On bad arrays (as :func:`~infonce_lib.contrastive_loss_limit`), ``batch_size < 2``,
        ``n_batches < 1``, a bad temperature or a missing seed; ``ValueError`` if the
        scores overflow float64 or a term does (a positive more than 1.8e308 below its
        row's maximum). Terms whose sum overflows are averaged without overflow.

    Examples
    --------
    >>> Z = np.tile([[0.0, 1.0]], (4, 1))      # one point: every loss is log K
    >>> L = sampled_contrastive_losses(Z, Z, 0.5, 8, 3, seed=0)
    >>> np.round(L - np.log(8), 12)
    array([0., 0., 0.])
    """
    return _batch_losses(*_batches(Zx, Zy, temperature, batch_size, n_batches, seed))


def _batch_losses(A, B, tau: float, index: np.ndarray) -> np.ndarray:
    """The loss of each batch of clean pairs (the body of sampled_contrastive_losses)."""
    if A.shape[0] ** 2 <= _MAX_ENTRIES:
        out = _losses_from_score_table(A, B, tau, index)
        if out is not None:
            return out
    nb, k = index.shape
    chunk = max(1, min(nb, _MAX_ENTRIES // (k * k)))
    out = np.empty(nb)
    for s in range(0, nb, chunk):
        F = _batch_scores(A, B, tau, index[s : s + chunk])
        log_probs = _positive_log_probs(F, overwrite=True, hint=_SPAN)
        out[s : s + chunk] = -_safe_mean(log_probs, axis=-1)  # terms near 1.8e308: no overflow
    return finite_or_raise(out, "a batch's mean loss", "rescale Zx and Zy")


def _losses_from_score_table(A, B, tau: float, index: np.ndarray) -> np.ndarray | None:
    """Batch losses from the exponentiated table of all n x n scores; ``None`` if unsafe.

    ``S[a, c] = Zy[a] . Zx[c] / tau`` is computed once and each row shifted by its maximum
    ``m_a``, so ``E = exp(S - m)`` lies in ``[0, 1]``. The loss of anchor ``a_i`` in a batch is
    ``-(S[a_i, a_i] - m_{a_i}) + log sum_j E[a_i, a_j]``; the sum includes the positive, so it
    is at least ``exp(S[a_i, a_i] - m_{a_i})``, kept above ``e^-600`` (no underflow) or the
    caller falls back to batch-by-batch scores, as it does when a score is not finite.
    """
    n = A.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        S = B @ A.T
        S /= tau
    if not np.isfinite(S).all():
        return None
    row_max = S.max(axis=1)
    # A score more than 1.8e308 below its row's maximum gives -inf in the differences, and
    # exp(-inf) = 0 is right (e^-600 already underflows); a positive that far below gives
    # gap = -inf, below the -600 of the fallback.
    with np.errstate(over="ignore"):
        gap = np.diagonal(S) - row_max  # log E[a, a] <= 0
        if gap.min() < -600.0:
            return None
        S -= row_max[:, None]
    E = np.exp(S, out=S)
    index = index.astype(np.intp, copy=False)  # bincount and take want intp (int32 in Pyodide)
    nb, k = index.shape
    by_counts = 100 * k * k >= n * n  # then n^2 multiply-adds per batch beat k^2 gathers
    chunk = max(1, _MAX_ENTRIES // (n if by_counts else k * k))
    out = np.empty(nb)
    for s in range(0, nb, chunk):
        idx = index[s : s + chunk]
        m = idx.shape[0]
        if by_counts:  # counts[b, c]: how often pair c is in batch b
            flat = (idx + n * np.arange(m)[:, None]).ravel()
            counts = np.bincount(flat, minlength=m * n).reshape(m, n).astype(np.float64)
            denom = np.take_along_axis(counts @ E.T, idx, axis=1)
        else:
            denom = E.ravel().take((idx * n)[:, :, None] + idx[:, None, :]).sum(axis=-1)
        out[s : s + chunk] = (np.log(denom) - gap[idx]).mean(axis=-1)
    return out


class LimitDeviation(NamedTuple):
    """A batch's deviation from Wang & Isola's limit, in parts (nats, one entry per batch).

    ``deviation = positive + jensen + offset + anchor_noise`` for every batch, to rounding;
    see :func:`contrastive_limit_deviation` for the equation.

    Attributes
    ----------
    batch_size : int
        :math:`K`; each anchor has :math:`M = K - 1` negatives.
    losses : numpy.ndarray, shape (n_batches,)
        The batch losses :math:`\\hat{\\mathcal{L}}_K`, those of
        :func:`sampled_contrastive_losses` for the same seed, bit for bit.
    limit : float
        The limit, :func:`~infonce_lib.contrastive_loss_limit` ``.value``.
    deviation : numpy.ndarray, shape (n_batches,)
        ``losses - log K - limit``.
    positive : numpy.ndarray, shape (n_batches,)
        The positive's own term in its denominator, averaged over the batch's anchors:
        :math:`\\log(1 + e^{s^+} / (M \\hat m))`, positive.
    jensen : numpy.ndarray, shape (n_batches,)
        The Jensen term, :math:`\\log \\hat m - \\log \\mu(y)` averaged over the anchors:
        negative on average.
    offset : float
        :math:`-\\log(K / M)`, the same for every batch; absent from
        :math:`\\hat{\\mathcal{L}}_K - \\log M`.
    anchor_noise : numpy.ndarray, shape (n_batches,)
        The mean over the anchors of :math:`-s^+ + \\log \\mu(y)`, less the limit: the
        anchors' own sampling noise, of mean zero over batches.
    c_positive, c_jensen : float
        The first-order coefficients over the whole set of pairs: the positive's term is
        about :math:`c_+ / M` and the Jensen term about :math:`-c_J / M`, with
        :math:`c_+ = \\mathbb{E}\\big[e^{s^+}/\\mu(y)\\big]` and
        :math:`c_J = \\frac12\\big(\\mathbb{E}_y \\mathbb{E}_{x^-}\\big[e^{2s}\\big] / \\mu(y)^2
        - 1\\big)`.

    Examples
    --------
    >>> from infonce_lib import sample_sphere_pairs
    >>> Zx, Zy = sample_sphere_pairs(40, 3, concentration=1.0, noise=0.3, seed=0)
    >>> d = contrastive_limit_deviation(Zx, Zy, 0.5, 4, 3, seed=1)
    >>> d.batch_size, d.positive.shape, round(d.offset, 6)   # -log(4/3)
    (4, (3,), -0.287682)
    """

    batch_size: int
    losses: np.ndarray
    limit: float
    deviation: np.ndarray
    positive: np.ndarray
    jensen: np.ndarray
    offset: float
    anchor_noise: np.ndarray
    c_positive: float
    c_jensen: float


def contrastive_limit_deviation(
    Zx, Zy, temperature: float, batch_size: int, n_batches: int, seed
) -> LimitDeviation:
    r"""Each batch's deviation from Wang & Isola's limit, taken apart into its three parts.

    Draws the batches of :func:`sampled_contrastive_losses` (the same indices from the same
    seed) and writes each anchor's loss :math:`\ell` against the limit of Wang & Isola's
    (2020) Theorem 1. With the positive's score :math:`s^+ = z^{x\top}_{a} z^y_{a} / \tau`,
    the scores :math:`s_1, \dots, s_M` of its :math:`M = K - 1` negatives, their mean
    exponential :math:`\hat m = \frac1M \sum_{j=1}^{M} e^{s_j}`, and its expectation over
    :math:`p_{\mathrm{data}}` (the rows of ``Zx``),
    :math:`\mu(y) = \frac1n \sum_{c=1}^{n} e^{z^{x\top}_c z^y / \tau}`, exactly

    .. math::

        \begin{aligned}
        \ell - \log K - \big(-s^+ + \log \mu(y)\big)
        &= \underbrace{\log\Big(1 + \frac{e^{s^+}}{M \hat m}\Big)}_{\text{positive}}
        + \underbrace{\log \hat m - \log \mu(y)}_{\text{Jensen}} \\
        &\quad - \underbrace{\log \frac{K}{M}}_{\log K \text{ against } \log M} .
        \end{aligned}

    Averaged over a batch's anchors, the bracket on the left is the limit
    (:func:`~infonce_lib.contrastive_loss_limit`) plus the anchors' sampling noise, of mean
    zero. So each batch's ``losses - log K - limit`` is the sum of four parts, returned
    batch by batch: the positive's own term in its denominator (positive, to first order
    :math:`c_+/M`), the bias of the logarithm of an average (negative on average by Jensen's
    inequality, to first order :math:`-c_J/M`), the offset :math:`-\log(K/M)` between the
    book's :math:`\hat{\mathcal{L}}_K - \log K` and the theorem's
    :math:`\hat{\mathcal{L}}_K - \log M`, and the noise. Wang & Isola's theorem bounds the
    deviation of the expected loss by :math:`O(M^{-1/2})`; the first two parts show why it
    is of order :math:`1/M` here.

    Parameters
    ----------
    Zx, Zy : array_like, shape (n, m)
        Embeddings of the positive pairs, ``n >= 2``.
    temperature : float
        :math:`\tau > 0`.
    batch_size : int
        :math:`K \ge 2`.
    n_batches : int
        Number of independent batches, ``>= 1``.
    seed : int or numpy.random.Generator
        Source of randomness (explicit); the indices are
        ``rng.integers(0, n, size=(n_batches, K))``, as in
        :func:`sampled_contrastive_losses`, so a generator in the same state gives the same
        batches and the same losses.

    Returns
    -------
    LimitDeviation
        The losses, the limit, the deviation and its parts, batch by batch, and the
        first-order coefficients :math:`c_+` and :math:`c_J`.

    Raises
    ------
    TypeError, ValueError
        As :func:`sampled_contrastive_losses`; ``ValueError`` if a part overflows float64
        (the scores of an anchor then span more than 1.8e308).

    Examples
    --------
    The parts add up to the deviation, and the losses are those of
    :func:`sampled_contrastive_losses`:

    >>> from infonce_lib import sample_sphere_pairs
    >>> Zx, Zy = sample_sphere_pairs(50, 3, concentration=2.0, noise=0.2, seed=0)
    >>> d = contrastive_limit_deviation(Zx, Zy, 0.5, 8, 100, seed=1)
    >>> parts = d.positive + d.jensen + d.offset + d.anchor_noise
    >>> bool(np.allclose(parts, d.deviation, rtol=0, atol=1e-12))
    True
    >>> bool(np.array_equal(d.losses, sampled_contrastive_losses(Zx, Zy, 0.5, 8, 100, seed=1)))
    True
    >>> bool(np.all(d.positive > 0)), bool(d.jensen.mean() < 0)
    (True, True)
    """
    A, B, tau, index = _batches(Zx, Zy, temperature, batch_size, n_batches, seed)
    k = index.shape[1]
    losses = _batch_losses(A, B, tau, index)
    limit, lse = _limit_and_log_sums(A, B, tau)
    log_mu = lse - math.log(A.shape[0])
    positive, jensen, anchors = _anchor_parts(A, B, tau, index, log_mu)
    with np.errstate(over="ignore", invalid="ignore"):
        deviation = losses - math.log(k) - limit.value
        anchors -= limit.value
    c_positive, c_jensen = _first_order(A, B, tau, log_mu)
    out = LimitDeviation(
        batch_size=k,
        losses=losses,
        limit=limit.value,
        deviation=deviation,
        positive=positive,
        jensen=jensen,
        offset=-math.log(k / (k - 1)),
        anchor_noise=anchors,
        c_positive=c_positive,
        c_jensen=c_jensen,
    )
    for part in out:
        finite_or_raise(part, "a part of the deviation from the limit", _SPAN)
    return out


def _anchor_parts(A, B, tau: float, index: np.ndarray, log_mu: np.ndarray):
    """Per batch, the means over its anchors of the positive's term, the Jensen term and
    ``-s+ + log mu``; computed from each batch's K x K scores, a block of batches at a time.

    Each anchor's negatives are its row without the diagonal; their log-sum-exp is shifted
    by their maximum (no overflow). A score more than 1.8e308 below that maximum gives -inf
    in the shift and 0 in the sum, which is right; a part beyond float64 is reported by
    the caller.
    """
    nb, k = index.shape
    log_m = math.log(k - 1)
    off_diagonal = ~np.eye(k, dtype=bool)
    out = np.empty((3, nb))
    chunk = max(1, min(nb, _MAX_ENTRIES // (k * k)))
    for s in range(0, nb, chunk):
        idx = index[s : s + chunk]
        F = _batch_scores(A, B, tau, idx)
        pos = np.diagonal(F, axis1=-2, axis2=-1).copy()
        neg = F[:, off_diagonal].reshape(idx.shape[0], k, k - 1)  # the negatives' scores
        top = neg.max(axis=-1)
        mu = log_mu[idx]
        with np.errstate(over="ignore", invalid="ignore"):
            neg -= top[..., None]
            np.exp(neg, out=neg)
            lse_neg = np.log(neg.sum(axis=-1)) + top  # log(M m-hat)
            terms = (np.logaddexp(0.0, pos - lse_neg), lse_neg - log_m - mu, mu - pos)
        for row, term in enumerate(terms):
            out[row, s : s + chunk] = _safe_mean(term, axis=-1)  # terms near 1.8e308
    return out[0], out[1], out[2]


def _first_order(A, B, tau: float, log_mu: np.ndarray) -> tuple[float, float]:
    """``c+ = mean_a e^{S_aa} / mu_a`` and ``c_J = (mean_{a,c} e^{2 S_ac} / mu_a^2 - 1) / 2``
    over the whole set, a block of anchors at a time (each ratio is at most n, no overflow).
    """
    n = A.shape[0]
    rows = max(1, _MAX_ENTRIES // n)
    with np.errstate(over="ignore", invalid="ignore"):
        pos = np.einsum("ij,ij->i", A, B) / tau
        c_positive = float(np.mean(np.exp(pos - log_mu)))
    total = 0.0
    for s in range(0, n, rows):
        with np.errstate(over="ignore", invalid="ignore"):
            F = B[s : s + rows] @ A.T
            F /= tau
            F -= log_mu[s : s + rows, None]  # at most log n; -inf far below: e^-inf = 0
            F *= 2.0
            total += float(np.exp(F, out=F).sum())
    return c_positive, 0.5 * (total / (n * n) - 1.0)
