r"""The Gaussian-patch experiment of chapter 3 (and the cosine-critic table of chapter 5).

Protocol (``LESSONS.md``, chapter 3): 8 x 8 patches of the squared-exponential field of
:mod:`infonce_lib.gaussian` (:math:`\ell = 1.5`), views :math:`y = x + \sigma\varepsilon` with
:math:`\sigma` set so that :math:`I(X; Y) \in \{1, 3, 6, 12\}` nats, :math:`M = 65\,536` pairs
per level drawn with ``numpy.random.default_rng(level index)`` (``z`` first, then
:math:`\varepsilon`). For :math:`K \in \{4, 16, 64, 256, 1024\}` the pairs are cut into
:math:`M/K` consecutive batches; the optimal critic :math:`f(x, y) = \log p(y \mid x)` gives
InfoNCE (Poole et al., 2019, eq. 12) and the leave-one-out bound (eq. 13) per batch, reported
as the mean over batches and its standard error (``ddof = 1``). At :math:`I = 6`,
:math:`K = 256` the cosine critic :math:`s/\tau` of the raw patches is evaluated at six
temperatures and at the best one (:mod:`infonce_lib.temperature`).

:func:`run_gaussian_patches` computes everything once per process (cached; arrays are
read-only); :func:`reproduce_gaussian_patches` turns it into the tables and checks printed by
``python -m infonce_lib reproduce gaussian-patches``. :func:`run_cosine_temperature` computes
the cosine-critic cell alone, with the same code on the same pairs
(:func:`patch_level_pairs`), so its numbers are those of ``gaussian-patches``' Table 3
digit for digit; :func:`reproduce_cosine_temperature` prints it as chapter 5's table
(``python -m infonce_lib reproduce cosine-temperature``).

How it is fast. The straightforward way (``benchmarks/baseline_gaussian_patches.py``) builds
a ``(B, K, K)`` array for every quantity and runs a log-sum-exp over each. Here, for each batch
of the largest :math:`K` (1024 pairs):

1. one matrix product of ``[y, 1, a]`` and ``[x / \sigma^2, b, 1]`` (with
   :math:`a_i = -\lVert y_i \rVert^2 / 2\sigma^2`, :math:`b_j = -\lVert x_j \rVert^2 / 2\sigma^2`)
   gives :math:`G_{ij} = \log p(y_i \mid x_j) - \log \mathcal{N}(0; 0, \sigma^2 I)
   = -\lVert y_i - x_j \rVert^2 / 2\sigma^2 \le 0`. The Gaussian log-density's own maximum
   is the shift of every log-sum-exp, so no max pass is needed, and every row and every
   column keeps a term no smaller than its positive :math:`G_{ii} \approx -d/2` (no
   underflow);
2. in panels of 128 rows (so the data stay in cache): one ``exp`` in place, the positives
   zeroed by index, then row sums and column sums (BLAS matrix-vector products) over the
   diagonal sub-blocks, which are exactly the consecutive batches of every smaller
   :math:`K`;
3. the density-ratio critic :math:`\log p(y \mid x) - \log p(y)` reuses the same
   exponentials: its column sums weight row :math:`i` by :math:`e^{-\log p(y_i) - T}`
   (:math:`T` a per-batch shift), and its row sums are that weight times the row sum,
   since :math:`c(y_i) = -\log p(y_i)` is constant along the row (the experiment's check
   that the two critics agree with the softmax over :math:`x` therefore confirms this
   cancellation to round-off; the tests and the chapter also compare fully separate
   computations with :func:`~infonce_lib.bounds.infonce_bound`);
4. InfoNCE's denominator is the off-diagonal sum plus the positive's own term (an addition);
   the leave-one-out bound uses the off-diagonal sum alone, so a dominant positive is never
   subtracted from a sum.

If a positive's exponent or an off-diagonal sum would leave the normal float64 range (not
the case at the book's levels), that batch is redone with the generic max-shifted
computation of :mod:`infonce_lib.bounds`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ._validation import as_int, as_positive_scalar, as_sequence
from .bounds import _infonce_and_loo_terms, mean_and_se
from .gaussian import (
    _log_p_y,
    _log_p_y_given_x,
    gaussian_field,
    patch_information,
    patch_information_logdet,
    sample_patch_pairs,
    sigma_for_information,
)
from .reproduce import Check, Report, format_table
from .temperature import _best_beta, _BetaObjective, cosine_cap, cosine_scores

__all__ = [
    "CosineTemperature",
    "PatchExperiment",
    "patch_level_pairs",
    "reproduce_cosine_temperature",
    "reproduce_gaussian_patches",
    "run_cosine_temperature",
    "run_gaussian_patches",
]

LEVELS = (1.0, 3.0, 6.0, 12.0)
BATCH_SIZES = (4, 16, 64, 256, 1024)
TAUS = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
M_PAIRS = 65_536

_EXP_FLOOR = -700.0  # exp(-700) = 9.9e-305 is still a normal float64
_TINY = np.finfo(np.float64).tiny
_PANEL_ROWS = 128  # rows per panel: 128 x 1024 doubles = 1 MiB, one core's L2 cache


@dataclass(frozen=True)
class PatchExperiment:
    """Results of :func:`run_gaussian_patches` (all arrays read-only, float64).

    Per level ``l`` (the information levels, in nats):

    Attributes
    ----------
    levels : tuple of float
        Target informations :math:`I`.
    batch_sizes : tuple of int
        The :math:`K`.
    m_pairs : int
        :math:`M`, pairs per level.
    sigma : numpy.ndarray, shape (L,)
        Noise level giving :math:`I` (root of the eigenvalue formula).
    mean_log_ratio, log_ratio_se, log_ratio_z : numpy.ndarray, shape (L,)
        Mean of :math:`\\log p(y|x) - \\log p(y)` over the M pairs, its SE, and
        ``(mean - I) / SE``.
    mi_gap : numpy.ndarray, shape (L,)
        :math:`I` by eigenvalues minus :math:`I` by log-determinants at ``sigma`` (nats).
    max_cov_error : numpy.ndarray, shape (L,)
        :math:`\\max_{ab} |\\hat C_{ab} - C_{ab}|`, ``numpy.cov`` of the M patches (ddof 1)
        against the field covariance.
    infonce, infonce_se, loo, loo_se : numpy.ndarray, shape (L, nK)
        Mean and SE over batches of InfoNCE and of the leave-one-out bound, critic
        :math:`\\log p(y|x)`, softmax over x.
    infonce_max_minus_log_k : numpy.ndarray, shape (L, nK)
        Largest batch value of InfoNCE minus :math:`\\log K`.
    ratio_over_x_max_diff : numpy.ndarray, shape (L, nK)
        Largest absolute difference between the batch values of InfoNCE over x with the critics
        :math:`\\log p(y|x)` and :math:`\\log p(y|x)/p(y)`.
    infonce_y, infonce_y_se, infonce_y_ratio, infonce_y_ratio_se : numpy.ndarray, shape (L, nK)
        InfoNCE with the softmax over y, for the critics :math:`\\log p(y|x)` and
        :math:`\\log p(y|x)/p(y)`.
    cosine_level, cosine_batch_size : float, int
        The cell of the cosine table.
    taus : tuple of float
        Temperatures of the cosine table.
    cosine_infonce, cosine_se, cosine_cap, cosine_max_minus_cap : numpy.ndarray, shape (T,)
        Mean and SE of InfoNCE for the critic ``cos / tau``, the cap, and the largest batch
        value minus the cap.
    best_tau, best_beta, best_infonce, best_max_minus_cap : float
        The best temperature over beta in [0.5, 500], its mean bound, and its largest batch
        value minus its cap.
    optimal_critic : float
        Mean InfoNCE of :math:`\\log p(y|x)` in the same cell.
    config : mapping
        The field (``side``, ``length_scale``) and the seeds, read-only.

    Examples
    --------
    >>> r = run_gaussian_patches(m_pairs=2048, levels=(2.0,), batch_sizes=(4, 64),
    ...                          cosine_level=2.0, cosine_batch_size=64)
    >>> r.levels, r.batch_sizes, r.infonce.shape, r.infonce.flags.writeable
    ((2.0,), (4, 64), (1, 2), False)
    """

    levels: tuple
    batch_sizes: tuple
    m_pairs: int
    sigma: np.ndarray
    mean_log_ratio: np.ndarray
    log_ratio_se: np.ndarray
    log_ratio_z: np.ndarray
    mi_gap: np.ndarray
    max_cov_error: np.ndarray
    infonce: np.ndarray
    infonce_se: np.ndarray
    loo: np.ndarray
    loo_se: np.ndarray
    infonce_max_minus_log_k: np.ndarray
    ratio_over_x_max_diff: np.ndarray
    infonce_y: np.ndarray
    infonce_y_se: np.ndarray
    infonce_y_ratio: np.ndarray
    infonce_y_ratio_se: np.ndarray
    cosine_level: float
    cosine_batch_size: int
    taus: tuple
    cosine_infonce: np.ndarray
    cosine_se: np.ndarray
    cosine_cap: np.ndarray
    cosine_max_minus_cap: np.ndarray
    best_tau: float
    best_beta: float
    best_infonce: float
    best_max_minus_cap: float
    optimal_critic: float
    config: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def results(self) -> dict:
        """The JSON-able results of ``reproduce gaussian-patches --json`` (unrounded)."""
        levels = [
            {
                "I": float(I),
                "sigma": float(self.sigma[li]),
                "mean_log_ratio": float(self.mean_log_ratio[li]),
                "se": float(self.log_ratio_se[li]),
                "z": float(self.log_ratio_z[li]),
                "mi_gap": float(self.mi_gap[li]),
                "max_cov_error": float(self.max_cov_error[li]),
            }
            for li, I in enumerate(self.levels)
        ]
        bounds = [
            {
                "I": float(I),
                "K": int(K),
                "infonce": float(self.infonce[li, ki]),
                "infonce_se": float(self.infonce_se[li, ki]),
                "loo": float(self.loo[li, ki]),
                "loo_se": float(self.loo_se[li, ki]),
            }
            for li, I in enumerate(self.levels)
            for ki, K in enumerate(self.batch_sizes)
        ]
        rows = [
            {
                "tau": float(t),
                "infonce": float(self.cosine_infonce[ti]),
                "se": float(self.cosine_se[ti]),
                "cap": float(self.cosine_cap[ti]),
            }
            for ti, t in enumerate(self.taus)
        ]
        cosine = {
            "I": float(self.cosine_level),
            "K": int(self.cosine_batch_size),
            "rows": rows,
            "best_tau": float(self.best_tau),
            "best_infonce": float(self.best_infonce),
            "optimal_critic": float(self.optimal_critic),
        }
        return {"levels": levels, "bounds": bounds, "cosine": cosine}


# ---------------------------------------------------------------- the fast engine


def _generic_block_terms(Ya, Xa, log_py, K):
    """Fallback for one block: the max-shifted computation of :mod:`infonce_lib.bounds`."""
    n = Ya.shape[0] // K
    e = Ya.shape[1]
    F = np.matmul(Ya.reshape(n, K, e), Xa.reshape(n, K, e).transpose(0, 2, 1))
    R = F - log_py.reshape(n, K)[:, :, None]
    nce_x, loo_x = _infonce_and_loo_terms(F, "x")
    nce_xr = _infonce_and_loo_terms(R, "x")[0]
    nce_y = _infonce_and_loo_terms(F, "y", overwrite=True)[0]
    nce_yr = _infonce_and_loo_terms(R, "y", overwrite=True)[0]
    return np.stack([nce_x, loo_x, nce_xr, nce_y, nce_yr])


def _augmented(x, y, sigma):
    """``[y, 1, a]`` and ``[x / sigma^2, b, 1]``: their product is -|y_i - x_j|^2 / 2 sigma^2."""
    M, d = x.shape
    inv = 1.0 / (sigma * sigma)
    Ya = np.empty((M, d + 2))
    Ya[:, :d] = y
    Ya[:, d] = 1.0
    np.einsum("md,md->m", y, y, out=Ya[:, d + 1])
    Ya[:, d + 1] *= -0.5 * inv
    Xa = np.empty((M, d + 2))
    Xa[:, :d] = x
    Xa[:, :d] *= inv
    np.einsum("md,md->m", x, x, out=Xa[:, d])
    Xa[:, d] *= -0.5 * inv
    Xa[:, d + 1] = 1.0
    return Ya, Xa


def _level_batch_values(x, y, sigma, log_py, batch_sizes, panel_rows=_PANEL_ROWS):
    """Per-batch values for one level: {K: array (5, M // K)}.

    Rows: InfoNCE over x, leave-one-out over x, InfoNCE over x with the density-ratio
    critic, InfoNCE over y, InfoNCE over y with the density-ratio critic. The module
    docstring explains the method; ``panel_rows`` rows of scores are processed at a time
    so that they, their exponentials and their sums stay in a core's cache.
    """
    M = x.shape[0]
    Ks = tuple(batch_sizes)
    kmax = Ks[-1]
    P = min(panel_rows, kmax)
    Ya, Xa = _augmented(x, y, sigma)
    # Density-ratio critic R = log p(y|x) - log p(y). Its exponentials, shifted by the same
    # s as G's plus T = max over the block of -log p(y_i), are exp(G_ij) * exp(lw_i), <= 1.
    lw = -log_py.reshape(M // kmax, kmax)
    lw -= lw.max(axis=1, keepdims=True)
    lw = lw.reshape(M)
    wexp = np.exp(lw)
    pos = np.empty(M)  # G_ii, the positives' scores (shifted), <= 0
    # Off-diagonal sums of exp(G) per K: along each row (softmax over x); down each column
    # (softmax over y); and down each column weighted by exp(lw_i) (the density-ratio
    # critic, softmax over y). Along a row the density-ratio critic's sum is exp(lw_i)
    # times the row's sum: c(y_i) is a constant of the row, which is why it cancels.
    row = {K: np.empty(M) for K in Ks}
    col = {K: np.zeros((2, M)) for K in Ks}
    G = np.empty((kmax, kmax))  # scores of one batch of the largest K
    weights = np.empty((2, P))  # [1, exp(lw_i)] for the column sums
    weights[0] = 1.0
    ones = np.ones(kmax)
    ar = np.arange(P)
    for g0 in range(0, M, kmax):
        # One matrix product per batch (few BLAS calls: cheap with several BLAS threads too)
        np.matmul(Ya[g0 : g0 + kmax], Xa[g0 : g0 + kmax].T, out=G)
        pos[g0 : g0 + kmax] = np.diagonal(G)
        for r0 in range(0, kmax, P):
            r1 = r0 + P
            rows = slice(g0 + r0, g0 + r1)
            E = G[r0:r1]  # a panel of rows, exponentiated in place
            np.exp(E, out=E)
            E[ar, r0 + ar] = 0.0  # the positives, excluded by index
            weights[1] = wexp[rows]
            for K in Ks:
                if K >= P:  # every row of the panel is in the batch of columns c0..c0+K
                    c0 = r0 - r0 % K
                    block = E[:, c0 : c0 + K]
                    np.matmul(block, ones[:K], out=row[K][rows])
                    col[K][:, g0 + c0 : g0 + c0 + K] += weights @ block
                else:  # P / K whole batches on the panel's diagonal
                    n = P // K
                    blocks = np.diagonal(
                        E[:, r0:r1].reshape(n, K, n, K), axis1=0, axis2=2
                    ).transpose(2, 0, 1)  # (n, K, K): [batch, i, j]
                    row[K][rows] = blocks.sum(axis=2).reshape(P)
                    col[K][0, rows] = blocks.sum(axis=1).reshape(P)
                    col[K][1, rows] = np.matmul(weights[1].reshape(n, 1, K), blocks).reshape(P)
    pos_w = pos + lw
    fast_ok = (pos > _EXP_FLOOR) & (pos_w > _EXP_FLOOR)
    with np.errstate(under="ignore"):
        ep = np.exp(pos)  # the positives' own terms, normal floats where fast_ok
        epw = ep * wexp
    out = {}
    for K in Ks:
        re_, (ce, cw) = row[K], col[K]
        rw = re_ * wexp
        ok = fast_ok & (rw >= _TINY) & (ce >= _TINY) & (cw >= _TINY)
        with np.errstate(divide="ignore", invalid="ignore"):
            # InfoNCE's denominator = off-diagonal sum + positive (an addition, never a
            # subtraction); leave-one-out's = the off-diagonal sum alone.
            terms = np.stack(
                [
                    pos - np.log(re_ + ep),
                    pos - np.log(re_),
                    pos_w - np.log(rw + epw),
                    pos - np.log(ce + ep),
                    pos_w - np.log(cw + epw),
                ]
            )
            values = terms.reshape(5, M // K, K).mean(axis=2)
        n = kmax // K
        for blk in np.flatnonzero(~ok.reshape(M // kmax, kmax).all(axis=1)):
            sl = slice(blk * kmax, (blk + 1) * kmax)
            fixed = _generic_block_terms(Ya[sl], Xa[sl], log_py[sl], K)
            values[:, blk * n : (blk + 1) * n] = fixed.mean(axis=2)
        values[[0, 2, 3, 4]] += math.log(K)
        values[1] += math.log(K - 1)  # leave-one-out: log(K - 1) + mean
        out[K] = values
    return out


# ---------------------------------------------------------------- the experiment


def _check_config(m_pairs, levels, batch_sizes, taus, cosine_level, cosine_batch_size):
    M = as_int(m_pairs, "m_pairs", minimum=4)
    levels = tuple(as_positive_scalar(v, "levels") for v in as_sequence(levels, "levels"))
    if not levels:
        raise ValueError("levels must hold at least one information level")
    Ks = tuple(as_int(k, "batch_sizes", minimum=2) for k in as_sequence(batch_sizes, "batch_sizes"))
    if not Ks or list(Ks) != sorted(set(Ks)):
        raise ValueError(f"batch_sizes must be distinct and increasing; got {batch_sizes!r}")
    kmax = Ks[-1]
    if M % kmax or M // kmax < 2:
        raise ValueError(
            f"the largest batch size must divide m_pairs at least twice (for a standard "
            f"error): {M} pairs, K = {kmax}"
        )
    bad = [k for k in Ks if kmax % k]
    if bad:
        raise ValueError(f"every batch size must divide the largest, {kmax}; got {bad}")
    taus = tuple(as_positive_scalar(t, "taus") for t in as_sequence(taus, "taus"))
    if not taus:
        raise ValueError("taus must hold at least one temperature for the cosine table")
    cl = as_positive_scalar(cosine_level, "cosine_level")
    if cl not in levels:
        raise ValueError(f"cosine_level must be one of the levels {levels}; got {cl}")
    ck = as_int(cosine_batch_size, "cosine_batch_size", minimum=2)
    if ck not in Ks:
        raise ValueError(f"cosine_batch_size must be one of the batch sizes {Ks}; got {ck}")
    return M, levels, Ks, taus, cl, ck


def run_gaussian_patches(
    *,
    m_pairs: int = M_PAIRS,
    levels=LEVELS,
    batch_sizes=BATCH_SIZES,
    taus=TAUS,
    cosine_level: float = 6.0,
    cosine_batch_size: int = 256,
    side: int = 8,
    length_scale: float = 1.5,
) -> PatchExperiment:
    r"""Run the Gaussian-patch experiment (cached per process).

    For level ``l`` with target :math:`I_l`: :math:`\sigma_l` by
    :func:`~infonce_lib.gaussian.sigma_for_information`, ``m_pairs`` pairs by
    :func:`~infonce_lib.gaussian.sample_patch_pairs` with ``seed = l``; the data checks; and
    for every :math:`K`, the per-batch values

    .. math::

        I_{\mathrm{NCE}} = \frac1K \sum_i \log
        \frac{e^{F_{ii}}}{\frac1K \sum_j e^{F_{ij}}}, \qquad
        I_{\mathrm{LOO}} = \frac1K \sum_i \log
        \frac{e^{F_{ii}}}{\frac1{K-1} \sum_{j \ne i} e^{F_{ij}}}

    with :math:`F_{ij} = \log p(y_i \mid x_j)` (Poole et al., 2019, eqs. 12-13), the same with
    :math:`\log p(y \mid x)/p(y)` and with the softmax over :math:`y`; their means and
    standard errors (:func:`~infonce_lib.bounds.mean_and_se`). Then the cosine table at
    ``cosine_level``, ``cosine_batch_size`` (chapter 5).

    The numbers equal those of :func:`~infonce_lib.bounds.infonce_bound` and
    :func:`~infonce_lib.bounds.leave_one_out_bound` on
    :func:`~infonce_lib.gaussian.optimal_critic_scores` (tested to 1e-12); the module
    docstring explains the faster route.

    Parameters
    ----------
    m_pairs : int, default 65536
        Pairs per level.
    levels : sequence of float, default (1, 3, 6, 12)
        Target informations in nats; level index = seed.
    batch_sizes : sequence of int, default (4, 16, 64, 256, 1024)
        Increasing; each divides the largest, which divides ``m_pairs`` at least twice.
    taus : sequence of float, default (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
        Temperatures of the cosine table.
    cosine_level : float, default 6
        Level of the cosine table (one of ``levels``).
    cosine_batch_size : int, default 256
        Batch size of the cosine table (one of ``batch_sizes``).
    side, length_scale : int, float
        The field (:func:`~infonce_lib.gaussian.gaussian_field`).

    Returns
    -------
    PatchExperiment
        Shared by every caller with the same arguments; its arrays are read-only.

    Raises
    ------
    TypeError, ValueError
        If an argument is out of range (messages name it).

    Examples
    --------
    >>> r = run_gaussian_patches(m_pairs=2048, levels=(2.0,), batch_sizes=(4, 64),
    ...                          cosine_level=2.0, cosine_batch_size=64)
    >>> bool(np.all(r.infonce_max_minus_log_k <= 0)), bool(np.all(r.loo >= r.infonce))
    (True, True)
    """
    M, lv, Ks, ts, cl, ck = _check_config(
        m_pairs, levels, batch_sizes, taus, cosine_level, cosine_batch_size
    )
    side = as_int(side, "side", minimum=1)
    ell = as_positive_scalar(length_scale, "length_scale")
    _check_field(side, ell, lv)
    return _run_cached(M, lv, Ks, ts, cl, ck, side, ell)


def _check_field(side: int, ell: float, levels: tuple) -> None:
    """Fail early, naming ``length_scale``, if the field is too smooth for the experiment.

    A long length scale makes the squared-exponential covariance numerically singular
    (its smallest eigenvalues fall below round-off), and the log-determinant check of the
    information would then fail deep inside the run. Cheap: one 64 x 64 eigendecomposition
    and one Cholesky factorisation per level.
    """
    field_ = gaussian_field(side, ell)
    for target in levels:
        try:
            patch_information_logdet(sigma_for_information(target, field_.eigenvalues), field_)
        except ValueError as exc:
            raise ValueError(
                f"length_scale = {ell:g} (side = {side}) makes the field's covariance singular "
                f"in float64, so the information of level {target:g} cannot be checked by "
                "log-determinants; use a shorter length_scale (the book uses 1.5)"
            ) from exc


@functools.lru_cache(maxsize=4)
def _run_cached(M, levels, Ks, taus, cosine_level, cosine_k, side, ell) -> PatchExperiment:
    field_ = gaussian_field(side, ell)
    C = field_.covariance
    L, nK = len(levels), len(Ks)
    per_level = {k: np.empty(L) for k in ("sigma", "mean", "se", "z", "mi_gap", "cov_err")}
    cells = {
        k: np.empty((L, nK))
        for k in (
            "nce", "nce_se", "loo", "loo_se", "max_minus", "ratio_diff",
            "nce_y", "nce_y_se", "nce_yr", "nce_yr_se",
        )
    }  # fmt: skip
    cosine = None
    for li, target in enumerate(levels):
        lam = field_.eigenvalues
        sigma, x, y = _level_pairs(field_, target, li, M)
        per_level["sigma"][li] = sigma
        per_level["cov_err"][li] = np.abs(_sample_covariance(x) - C).max()
        per_level["mi_gap"][li] = patch_information(sigma, lam) - patch_information_logdet(
            sigma, field_
        )
        log_py = _log_p_y(y, field_, sigma)
        mean, se = mean_and_se(_log_p_y_given_x(y, x, sigma) - log_py)
        per_level["mean"][li], per_level["se"][li] = mean, se
        per_level["z"][li] = (mean - target) / se
        values = _level_batch_values(x, y, sigma, log_py, Ks)
        for ki, K in enumerate(Ks):
            v = values[K]
            cells["nce"][li, ki], cells["nce_se"][li, ki] = mean_and_se(v[0])
            cells["loo"][li, ki], cells["loo_se"][li, ki] = mean_and_se(v[1])
            cells["max_minus"][li, ki] = v[0].max() - math.log(K)
            cells["ratio_diff"][li, ki] = np.abs(v[2] - v[0]).max()
            cells["nce_y"][li, ki], cells["nce_y_se"][li, ki] = mean_and_se(v[3])
            cells["nce_yr"][li, ki], cells["nce_yr_se"][li, ki] = mean_and_se(v[4])
        if target == cosine_level:
            cosine = _cosine_table(x, y, cosine_k, taus)
            cosine["optimal"] = float(cells["nce"][li, Ks.index(cosine_k)])
            cosine.pop("objective")  # the chapter 5 command's extra checks need it; not here
        del x, y, log_py, values

    def ro(a):
        a = np.asarray(a, dtype=np.float64)
        a.setflags(write=False)
        return a

    return PatchExperiment(
        levels=levels,
        batch_sizes=Ks,
        m_pairs=M,
        sigma=ro(per_level["sigma"]),
        mean_log_ratio=ro(per_level["mean"]),
        log_ratio_se=ro(per_level["se"]),
        log_ratio_z=ro(per_level["z"]),
        mi_gap=ro(per_level["mi_gap"]),
        max_cov_error=ro(per_level["cov_err"]),
        infonce=ro(cells["nce"]),
        infonce_se=ro(cells["nce_se"]),
        loo=ro(cells["loo"]),
        loo_se=ro(cells["loo_se"]),
        infonce_max_minus_log_k=ro(cells["max_minus"]),
        ratio_over_x_max_diff=ro(cells["ratio_diff"]),
        infonce_y=ro(cells["nce_y"]),
        infonce_y_se=ro(cells["nce_y_se"]),
        infonce_y_ratio=ro(cells["nce_yr"]),
        infonce_y_ratio_se=ro(cells["nce_yr_se"]),
        cosine_level=cosine_level,
        cosine_batch_size=cosine_k,
        taus=taus,
        cosine_infonce=ro(cosine["mean"]),
        cosine_se=ro(cosine["se"]),
        cosine_cap=ro(cosine["cap"]),
        cosine_max_minus_cap=ro(cosine["max_minus_cap"]),
        best_tau=cosine["best"].tau,
        best_beta=cosine["best"].beta,
        best_infonce=cosine["best"].infonce,
        best_max_minus_cap=cosine["best_max_minus_cap"],
        optimal_critic=cosine["optimal"],
        config=MappingProxyType(
            {"side": side, "length_scale": ell, "seeds": tuple(range(len(levels)))}
        ),
    )


def _sample_covariance(x: np.ndarray) -> np.ndarray:
    """``numpy.cov(x, rowvar=False)`` (mean removed, ddof 1) without a centred copy of x."""
    M = x.shape[0]
    mean = x.mean(axis=0)
    cov = x.T @ x
    cov -= M * np.outer(mean, mean)
    cov /= M - 1
    return cov


def _level_pairs(field_, target: float, seed: int, M: int):
    """Noise level and the ``M`` pairs of one information level (seed = level index)."""
    sigma = sigma_for_information(target, field_.eigenvalues)
    x, y = sample_patch_pairs(field_, sigma, M, seed=seed)
    return sigma, x, y


def patch_level_pairs(
    level: float = 6.0,
    *,
    levels=LEVELS,
    m_pairs: int = M_PAIRS,
    side: int = 8,
    length_scale: float = 1.5,
) -> tuple[float, np.ndarray, np.ndarray]:
    r"""The pairs of one level of the Gaussian-patch experiment, exactly as it draws them.

    :math:`\sigma` from :func:`~infonce_lib.gaussian.sigma_for_information` for
    :math:`I = ` ``level``, then ``m_pairs`` pairs :math:`(x, y = x + \sigma\varepsilon)` from
    :func:`~infonce_lib.gaussian.sample_patch_pairs` with ``seed`` = the index of ``level``
    in ``levels`` (chapter 3's protocol), so that a chapter can look at the very data behind
    a table of :func:`run_gaussian_patches` or :func:`run_cosine_temperature`.

    Parameters
    ----------
    level : float, default 6
        The information level in nats; one of ``levels``.
    levels : sequence of float, default (1, 3, 6, 12)
        The experiment's levels (they fix the seed).
    m_pairs : int, default 65536
        Pairs per level.
    side, length_scale : int, float
        The field (:func:`~infonce_lib.gaussian.gaussian_field`).

    Returns
    -------
    sigma : float
        The noise level.
    x, y : numpy.ndarray, shape (m_pairs, side**2)
        Patches and their noisy views.

    Raises
    ------
    TypeError, ValueError
        If an argument is out of range or ``level`` is not one of ``levels``.

    Examples
    --------
    >>> sigma, x, y = patch_level_pairs(6.0, m_pairs=8)
    >>> round(sigma, 4), x.shape
    (1.8236, (8, 64))
    """
    M = as_int(m_pairs, "m_pairs", minimum=1)
    lv = tuple(as_positive_scalar(v, "levels") for v in as_sequence(levels, "levels"))
    target = as_positive_scalar(level, "level")
    if target not in lv:
        raise ValueError(f"level must be one of the levels {lv}; got {target}")
    field_ = gaussian_field(as_int(side, "side", minimum=1), length_scale)
    return _level_pairs(field_, target, lv.index(target), M)


def _cosine_table(x, y, K, taus) -> dict:
    """The cosine cell: the six temperatures, the cap and the best temperature.

    The one computation behind Table 3 of ``gaussian-patches`` and the table of
    ``cosine-temperature``; it also returns the objective (the shifted scores) so that the
    latter can evaluate derivatives without recomputing them.
    """
    objective = _BetaObjective(cosine_scores(x, y, K), overwrite=True)
    means, ses, caps, excess = [], [], [], []
    table = objective.batch_values_many([1.0 / tau for tau in taus])
    for tau, v in zip(taus, table, strict=True):
        m, s = mean_and_se(v)
        cap = cosine_cap(K, tau)
        means.append(m)
        ses.append(s)
        caps.append(cap)
        excess.append(float(v.max()) - cap)
    best = _best_beta(objective, 0.5, 500.0)
    best_values = objective.batch_values(best.beta)
    return {
        "mean": means,
        "se": ses,
        "cap": caps,
        "max_minus_cap": excess,
        "best": best,
        "best_max_minus_cap": float(best_values.max()) - cosine_cap(K, best.tau),
        "objective": objective,
    }


# ---------------------------------------------------------------- tables and checks


def _f4(v: float) -> str:
    """Four decimals, never '-0.0000'."""
    return f"{round(float(v), 4) + 0.0:.4f}"


def _below(v: float, threshold: float) -> str:
    """A tiny round-off figure, printed the same on every machine: '< threshold'."""
    return f"< {threshold:.0e}" if abs(v) < threshold else f"{v:.1e}"


def patch_tables(r: PatchExperiment) -> str:
    """The three tables of the experiment as text (4 decimals)."""
    t1 = format_table(
        ["I", "sigma", "mean log r", "SE", "z", "I_eig - I_det", "max|cov - C|"],
        [
            [I, r.sigma[li], r.mean_log_ratio[li], r.log_ratio_se[li], r.log_ratio_z[li],
             _below(r.mi_gap[li], 1e-9), r.max_cov_error[li]]
            for li, I in enumerate(r.levels)
        ],
        ["g", ".4f", ".4f", ".4f", ".2f", "", ".4f"],
    )  # fmt: skip
    t2 = format_table(
        ["I", "K", "log K", "InfoNCE", "SE", "leave-one-out", "SE"],
        [
            [I, K, math.log(K), r.infonce[li, ki], r.infonce_se[li, ki],
             r.loo[li, ki], r.loo_se[li, ki]]
            for li, I in enumerate(r.levels)
            for ki, K in enumerate(r.batch_sizes)
        ],
        ["g", "d", ".4f", ".4f", ".4f", ".4f", ".4f"],
    )  # fmt: skip
    t3 = format_table(
        ["tau", "InfoNCE", "SE", "cap", "max batch - cap"],
        [
            [t, r.cosine_infonce[ti], r.cosine_se[ti], r.cosine_cap[ti],
             _f4(r.cosine_max_minus_cap[ti])]
            for ti, t in enumerate(r.taus)
        ],
        ["g", ".4f", ".4f", ".4f", ""],
    )  # fmt: skip
    K = r.cosine_batch_size
    side = r.config["side"]
    return "\n".join(
        [
            f"Gaussian patches: {side}x{side} field, length scale "
            f"{r.config['length_scale']:g}, M = {r.m_pairs} pairs per level,",
            "seed = level index",
            "",
            "Table 1. Data checks per level (log r = log p(y|x) - log p(y), mean over M pairs)",
            t1,
            "",
            "Table 2. Optimal critic log p(y|x), softmax over x: mean over M/K batches, SE",
            t2,
            "",
            f"Table 3. Cosine critic cos(x, y)/tau at I = {r.cosine_level:g}, K = {K}",
            t3,
            f"best tau = {r.best_tau:.4f} (beta = {r.best_beta:.2f}; bounded search, beta in "
            "[0.5, 500])",
            f"  InfoNCE = {r.best_infonce:.4f}, cap = {cosine_cap(K, r.best_tau):.4f}",
            f"optimal critic log p(y|x) at the same K: InfoNCE = {r.optimal_critic:.4f}",
        ]
    )


def patch_checks(r: PatchExperiment) -> list[Check]:
    """The summary checks of LESSONS.md chapter 3 (and the cosine table's)."""
    levels, Ks = r.levels, r.batch_sizes
    checks = []
    gap = float(np.abs(r.mi_gap).max())
    checks.append(
        Check(
            "I(sigma) by eigenvalues and by log-determinants agree to 1e-9 at every level",
            gap < 1e-9,
            f"max |difference| {_below(gap, 1e-9)}",
        )
    )
    cov_tol = 6 * math.sqrt(2 / r.m_pairs)
    cov = float(r.max_cov_error.max())
    checks.append(
        Check(
            f"sample covariance of x matches C: max |cov - C| < 6 sqrt(2/M) = {cov_tol:.4f}",
            cov < cov_tol,
            f"largest {_f4(cov)}",
        )
    )
    z = r.log_ratio_z
    checks.append(
        Check(
            "mean of log p(y|x)/p(y) matches I: |z| < 3 at every level",
            bool(np.all(np.abs(z) < 3)),
            "z = " + ", ".join(f"{v:.2f}" for v in z),
        )
    )
    worst = float(r.infonce_max_minus_log_k.max())
    checks.append(
        Check(
            "every batch value of InfoNCE is <= log K",
            worst <= 0.0,
            f"largest batch value - log K = {_f4(worst)}",
        )
    )
    I = np.asarray(levels)[:, None]
    z_nce = (r.infonce - I) / r.infonce_se
    z_loo = (r.loo - I) / r.loo_se
    checks.append(
        Check(
            "z-scores of the means against I: (InfoNCE - I)/SE < 3 and (LOO - I)/SE > -3 in "
            "every cell",
            bool(np.all(z_nce < 3) and np.all(z_loo > -3)),
            f"largest InfoNCE z = {z_nce.max():.2f}, smallest LOO z = {z_loo.min():.2f}",
        )
    )
    gap_lo = I - r.infonce
    gap_hi = r.loo - I
    checks.append(
        Check(
            "I - InfoNCE falls as K grows, at every level",
            bool(np.all(np.diff(gap_lo, axis=1) < 0)),
            "; ".join(
                f"I={lv:g}: " + " > ".join(_f4(v) for v in gap_lo[li])
                for li, lv in enumerate(levels)
            ),
        )
    )
    checks.append(
        Check(
            "leave-one-out - I falls as K grows, at every level",
            bool(np.all(np.diff(gap_hi, axis=1) < 0)),
            "; ".join(
                f"I={lv:g}: " + " > ".join(_f4(v) for v in gap_hi[li])
                for li, lv in enumerate(levels)
            ),
        )
    )
    top = int(np.argmax(levels))
    sat = np.log(np.asarray(Ks, dtype=float)) - r.infonce[top]
    checks.append(
        Check(
            f"saturation at I = {levels[top]:g}: log K - InfoNCE < 0.1 nats at every K",
            bool(np.all(sat < 0.1)),
            ", ".join(f"K={K}: {_f4(v)}" for K, v in zip(Ks, sat, strict=True)),
        )
    )
    diff = float(r.ratio_over_x_max_diff.max())
    checks.append(
        Check(
            "softmax over x: log p(y|x) and log p(y|x)/p(y) give the same batch values "
            "(c(y) cancels)",
            diff < 1e-12,
            f"max |difference| {_below(diff, 1e-12)}",
        )
    )
    margin = r.infonce_y_ratio - r.infonce_y
    li, ki = np.unravel_index(np.argmin(margin), margin.shape)
    checks.append(
        Check(
            "softmax over y: the density-ratio critic beats log p(y|x) in every cell",
            bool(np.all(margin > 0)),
            f"smallest margin {_f4(margin[li, ki])} nats at I={levels[li]:g}, K={Ks[ki]}",
        )
    )
    checks += _cosine_checks(
        r.cosine_max_minus_cap, r.best_max_minus_cap, r.cosine_infonce, r.best_infonce,
        r.optimal_critic,
    )  # fmt: skip
    return checks


def _cosine_checks(max_minus_cap, best_max_minus_cap, infonce, best_infonce, optimal):
    """The checks of the cosine table that both commands assert: the cap holds in every
    batch, the best tau beats the table's, and the optimal critic beats the best cosine."""
    excess = max(float(np.max(max_minus_cap)), best_max_minus_cap)
    return [
        Check(
            "cosine critic: no batch exceeds the cap, at any tau or the best",
            excess <= 0.0,
            f"largest batch value - cap {_f4(excess)}",
        ),
        Check(
            "the best tau does at least as well as every tau of the table",
            bool(best_infonce >= np.max(infonce)),
            f"{best_infonce:.4f} >= {np.max(infonce):.4f}",
        ),
        Check(
            "the optimal critic beats the best cosine critic at the same K",
            optimal > best_infonce,
            f"{optimal:.4f} > {best_infonce:.4f}",
        ),
    ]


def reproduce_gaussian_patches(**config) -> Report:
    """``python -m infonce_lib reproduce gaussian-patches``: tables, checks, results.

    Parameters
    ----------
    **config
        Passed to :func:`run_gaussian_patches` (the defaults are the book's protocol).

    Returns
    -------
    Report
        ``results`` has the documented JSON schema::

            {"levels": [{"I", "sigma", "mean_log_ratio", "se", "z", "mi_gap",
                         "max_cov_error"}, ...],
             "bounds": [{"I", "K", "infonce", "infonce_se", "loo", "loo_se"}, ...],
             "cosine": {"I", "K", "rows": [{"tau", "infonce", "se", "cap"}, ...],
                        "best_tau", "best_infonce", "optimal_critic"}}

        with ``mi_gap`` = I by eigenvalues minus I by log-determinants at ``sigma`` (nats)
        and ``max_cov_error`` = the largest absolute entry of ``numpy.cov(x) - C``.

    Examples
    --------
    A reduced configuration (the book's protocol is the default):

    >>> report = reproduce_gaussian_patches(m_pairs=2048, levels=(2.0,), batch_sizes=(4, 64),
    ...                                     cosine_level=2.0, cosine_batch_size=64)
    >>> sorted(report.results), [row["K"] for row in report.results["bounds"]]
    (['bounds', 'cosine', 'levels'], [4, 64])
    """
    r = run_gaussian_patches(**config)
    return Report(results=r.results(), tables=patch_tables(r), checks=patch_checks(r))


# ---------------------------------------------------------------- chapter 5: the cosine cell

#: The lesson plan's cap values at K = 256 (LESSONS.md, chapter 5), to three decimals.
LESSON_CAPS_256 = {0.1: 5.545, 0.2: 5.534, 0.5: 3.810, 1.0: 1.975}
BETA_BOUNDS = (0.5, 500.0)


@dataclass(frozen=True)
class CosineTemperature:
    """Results of :func:`run_cosine_temperature` (arrays read-only, float64).

    Attributes
    ----------
    level : float
        The information level :math:`I` in nats.
    batch_size : int
        :math:`K`.
    m_pairs : int
        :math:`M`, pairs of the level; there are ``M // K`` batches.
    sigma : float
        The level's noise.
    taus : tuple of float
        The temperatures of the table.
    infonce, se, cap, max_minus_cap : numpy.ndarray, shape (T,)
        Mean and SE over batches of InfoNCE for the critic ``cos / tau``; the cap
        :func:`~infonce_lib.temperature.cosine_cap`; the largest batch value minus the cap.
    best_tau, best_beta, best_infonce, best_cap, best_max_minus_cap : float
        The best temperature over :math:`\\beta \\in [0.5, 500]`, its mean bound, its cap and
        its largest batch value minus the cap.
    slope_at_best, curvature_at_best : float
        Mean over batches of :math:`\\mathrm{d}I_{\\mathrm{NCE}}/\\mathrm{d}\\beta` and
        :math:`\\mathrm{d}^2 I_{\\mathrm{NCE}}/\\mathrm{d}\\beta^2` at :math:`\\beta^\\star`.
    optimal_critic, optimal_critic_se : float
        Mean InfoNCE of :math:`\\log p(y|x)` at the same :math:`K`, and its SE.
    config : mapping
        The field, the levels and the seed, read-only.

    Examples
    --------
    >>> r = run_cosine_temperature(m_pairs=2048, levels=(2.0,), batch_sizes=(4, 64),
    ...                            cosine_level=2.0, cosine_batch_size=64)
    >>> r.level, r.batch_size, len(r.taus) == len(r.infonce), bool(np.all(r.max_minus_cap <= 0))
    (2.0, 64, True, True)
    """

    level: float
    batch_size: int
    m_pairs: int
    sigma: float
    taus: tuple
    infonce: np.ndarray
    se: np.ndarray
    cap: np.ndarray
    max_minus_cap: np.ndarray
    best_tau: float
    best_beta: float
    best_infonce: float
    best_cap: float
    best_max_minus_cap: float
    slope_at_best: float
    curvature_at_best: float
    optimal_critic: float
    optimal_critic_se: float
    config: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def results(self) -> dict:
        """The JSON-able results of ``reproduce cosine-temperature --json`` (unrounded)."""
        rows = [
            {
                "tau": float(t),
                "infonce": float(self.infonce[ti]),
                "se": float(self.se[ti]),
                "cap": float(self.cap[ti]),
                "max_minus_cap": float(self.max_minus_cap[ti]),
            }
            for ti, t in enumerate(self.taus)
        ]
        return {
            "I": float(self.level),
            "K": int(self.batch_size),
            "m_pairs": int(self.m_pairs),
            "sigma": float(self.sigma),
            "rows": rows,
            "best_tau": float(self.best_tau),
            "best_beta": float(self.best_beta),
            "best_infonce": float(self.best_infonce),
            "best_cap": float(self.best_cap),
            "best_max_minus_cap": float(self.best_max_minus_cap),
            "slope_at_best": float(self.slope_at_best),
            "curvature_at_best": float(self.curvature_at_best),
            "optimal_critic": float(self.optimal_critic),
            "optimal_critic_se": float(self.optimal_critic_se),
        }


def run_cosine_temperature(
    *,
    m_pairs: int = M_PAIRS,
    levels=LEVELS,
    batch_sizes=BATCH_SIZES,
    taus=TAUS,
    cosine_level: float = 6.0,
    cosine_batch_size: int = 256,
    side: int = 8,
    length_scale: float = 1.5,
) -> CosineTemperature:
    r"""The cosine-critic cell of the Gaussian-patch experiment, alone (cached per process).

    Takes the configuration of :func:`run_gaussian_patches` and computes only its cosine
    cell, with the same code on the same pairs: the level ``cosine_level`` drawn by
    :func:`patch_level_pairs`; for each :math:`\tau` the batch values of
    :func:`~infonce_lib.temperature.infonce_at_beta` at :math:`\beta = 1/\tau` on the
    cosines of the raw patches (mean, SE, and the largest minus
    :func:`~infonce_lib.temperature.cosine_cap`); the best temperature by bounded scalar
    optimisation over :math:`\beta \in [0.5, 500]`
    (:func:`~infonce_lib.temperature.best_temperature`), with the slope and curvature there
    (:func:`~infonce_lib.temperature.infonce_beta_derivatives`); and the optimal critic
    :math:`\log p(y|x)` at the same :math:`K` from the same engine as chapter 3 (run over
    all ``batch_sizes`` of the level, so its digits are Table 2's). Every number of
    ``gaussian-patches``' Table 3 comes out identical, in about a third of its time
    (the other levels are not drawn).

    Parameters
    ----------
    m_pairs, levels, batch_sizes, taus, cosine_level, cosine_batch_size, side, length_scale
        As :func:`run_gaussian_patches` (the same defaults: :math:`I = 6`, :math:`K = 256`,
        :math:`\tau \in \{0.02, 0.05, 0.1, 0.2, 0.5, 1\}`).

    Returns
    -------
    CosineTemperature
        Shared by every caller with the same arguments; its arrays are read-only.

    Raises
    ------
    TypeError, ValueError
        If an argument is out of range (as :func:`run_gaussian_patches`).

    Examples
    --------
    >>> r = run_cosine_temperature(m_pairs=2048, levels=(2.0,), batch_sizes=(4, 64),
    ...                            cosine_level=2.0, cosine_batch_size=64)
    >>> bool(np.all(r.max_minus_cap <= 0)), bool(r.curvature_at_best < 0)
    (True, True)
    """
    M, lv, Ks, ts, cl, ck = _check_config(
        m_pairs, levels, batch_sizes, taus, cosine_level, cosine_batch_size
    )
    side = as_int(side, "side", minimum=1)
    ell = as_positive_scalar(length_scale, "length_scale")
    return _cosine_cached(M, lv, Ks, ts, cl, ck, side, ell)


@functools.lru_cache(maxsize=4)
def _cosine_cached(M, levels, Ks, taus, cosine_level, cosine_k, side, ell) -> CosineTemperature:
    field_ = gaussian_field(side, ell)
    li = levels.index(cosine_level)
    sigma, x, y = _level_pairs(field_, cosine_level, li, M)
    log_py = _log_p_y(y, field_, sigma)
    optimal = mean_and_se(_level_batch_values(x, y, sigma, log_py, Ks)[cosine_k][0])
    del log_py
    table = _cosine_table(x, y, cosine_k, taus)
    del x, y
    best = table["best"]
    _, slope, curvature = table["objective"].derivatives(best.beta)
    del table["objective"]

    def ro(a):
        a = np.asarray(a, dtype=np.float64)
        a.setflags(write=False)
        return a

    return CosineTemperature(
        level=cosine_level,
        batch_size=cosine_k,
        m_pairs=M,
        sigma=float(sigma),
        taus=taus,
        infonce=ro(table["mean"]),
        se=ro(table["se"]),
        cap=ro(table["cap"]),
        max_minus_cap=ro(table["max_minus_cap"]),
        best_tau=best.tau,
        best_beta=best.beta,
        best_infonce=best.infonce,
        best_cap=cosine_cap(cosine_k, best.tau),
        best_max_minus_cap=table["best_max_minus_cap"],
        slope_at_best=float(slope.mean()),
        curvature_at_best=float(curvature.mean()),
        optimal_critic=optimal[0],
        optimal_critic_se=optimal[1],
        config=MappingProxyType(
            {"side": side, "length_scale": ell, "levels": levels, "seed": li, "batch_sizes": Ks}
        ),
    )


def _slope(v: float) -> str:
    """The slope at the optimum, printed the same on every machine."""
    return "|dI/dbeta| < 1e-04" if abs(v) < 1e-4 else f"dI/dbeta = {v:.1e}"


def cosine_temperature_table(r: CosineTemperature) -> str:
    """Chapter 5's table as text (4 decimals)."""
    table = format_table(
        ["tau", "InfoNCE", "SE", "cap", "max batch - cap"],
        [
            [t, r.infonce[ti], r.se[ti], r.cap[ti], _f4(r.max_minus_cap[ti])]
            for ti, t in enumerate(r.taus)
        ],
        ["g", ".4f", ".4f", ".4f", ""],
    )
    side = r.config["side"]
    return "\n".join(
        [
            f"Cosine critic cos(x, y)/tau on raw {side}x{side} Gaussian patches: "
            f"I = {r.level:g} nats, K = {r.batch_size},",
            f"M = {r.m_pairs} pairs ({r.m_pairs // r.batch_size} batches), "
            f"sigma = {r.sigma:.4f}, seed = {r.config['seed']} (the level's index)",
            table,
            f"best tau = {r.best_tau:.4f} (beta = {r.best_beta:.2f}; bounded search, beta in "
            f"[{BETA_BOUNDS[0]:g}, {BETA_BOUNDS[1]:g}])",
            f"  InfoNCE = {r.best_infonce:.4f}, cap = {r.best_cap:.4f}, "
            f"max batch - cap = {_f4(r.best_max_minus_cap)}",
            f"  slope {_slope(r.slope_at_best)}, curvature d2I/dbeta2 = {r.curvature_at_best:.2e}",
            f"optimal critic log p(y|x) at the same K: InfoNCE = {r.optimal_critic:.4f} "
            f"(SE {r.optimal_critic_se:.4f})",
        ]
    )


def cosine_temperature_checks(r: CosineTemperature) -> list[Check]:
    """The checks of chapter 5's experiment."""
    checks = []
    if r.batch_size == 256:
        got = {t: round(cosine_cap(256, t), 3) for t in LESSON_CAPS_256}
        checks.append(
            Check(
                "the cap at K = 256 rounds to the lesson plan's 5.545, 5.534, 3.810, 1.975 at "
                "tau = 0.1, 0.2, 0.5, 1",
                got == LESSON_CAPS_256,
                ", ".join(f"tau={t:g}: {v:.3f}" for t, v in got.items()),
            )
        )
    cap_ok, best_ok, optimal_ok = _cosine_checks(
        r.max_minus_cap, r.best_max_minus_cap, r.infonce, r.best_infonce, r.optimal_critic
    )
    lo, hi = BETA_BOUNDS
    interior = lo * 1.01 < r.best_beta < hi / 1.01
    interior_ok = Check(
        "the best beta is an interior maximum: inside the interval, |dI/dbeta| < 1e-4, "
        "d2I/dbeta2 < 0",
        bool(interior and abs(r.slope_at_best) < 1e-4 and r.curvature_at_best < 0),
        f"beta = {r.best_beta:.2f}, slope {_slope(r.slope_at_best)}, "
        f"curvature {r.curvature_at_best:.2e}",
    )
    return [*checks, cap_ok, best_ok, interior_ok, optimal_ok]


def reproduce_cosine_temperature(**config) -> Report:
    """``python -m infonce_lib reproduce cosine-temperature``: chapter 5's table and checks.

    Parameters
    ----------
    **config
        Passed to :func:`run_cosine_temperature` (the defaults are the book's protocol).

    Returns
    -------
    Report
        ``results`` is :meth:`CosineTemperature.results`::

            {"I", "K", "m_pairs", "sigma",
             "rows": [{"tau", "infonce", "se", "cap", "max_minus_cap"}, ...],
             "best_tau", "best_beta", "best_infonce", "best_cap", "best_max_minus_cap",
             "slope_at_best", "curvature_at_best", "optimal_critic", "optimal_critic_se"}

    Examples
    --------
    >>> report = reproduce_cosine_temperature(m_pairs=2048, levels=(2.0,), batch_sizes=(4, 64),
    ...                                       cosine_level=2.0, cosine_batch_size=64)
    >>> report.results["K"], [row["tau"] for row in report.results["rows"]][:2]
    (64, [0.02, 0.05])
    """
    r = run_cosine_temperature(**config)
    return Report(
        results=r.results(), tables=cosine_temperature_table(r), checks=cosine_temperature_checks(r)
    )
