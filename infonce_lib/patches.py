r"""The Gaussian-patch computation behind chapters 3 and 6: the pairs and the fast engine.

Protocol (chapter 3): 8 x 8 patches of the squared-exponential field of
:mod:`infonce_lib.gaussian` (:math:`\ell = 1.5`), views :math:`y = x + \sigma\varepsilon` with
:math:`\sigma` set so that :math:`I(X; Y) \in \{1, 3, 6, 12\}` nats, :math:`M = 65\,536` pairs
per level drawn with ``numpy.random.default_rng(level index)`` (``z`` first, then
:math:`\varepsilon`). For :math:`K \in \{4, 16, 64, 256, 1024\}` the pairs are cut into
:math:`M/K` consecutive batches; the optimal critic :math:`f(x, y) = \log p(y \mid x)` gives
InfoNCE and the leave-one-out bound (Poole et al., 2019) per batch. At
:math:`I = 6`, :math:`K = 256` the cosine critic :math:`s/\tau` of the raw patches is
evaluated at six temperatures and at the best one (:mod:`infonce_lib.temperature`).

:func:`patch_level_pairs` draws the pairs of one level exactly as the experiments do. The
experiments themselves (the tables and checks) live in
:mod:`infonce_lib.experiments.gaussian_patches` and
:mod:`infonce_lib.experiments.cosine_temperature`; this module holds their mathematics.


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
   computations with :func:`~infonce_lib.infonce_bound`);
4. InfoNCE's denominator is the off-diagonal sum plus the positive's own term (an addition);
   the leave-one-out bound uses the off-diagonal sum alone, so a dominant positive is never
   subtracted from a sum.

If a positive's exponent or an off-diagonal sum would leave the normal float64 range (not
the case at the book's levels), that batch is redone with the generic max-shifted
computation of :mod:`infonce_lib.bounds`.
"""

from __future__ import annotations

import math

import numpy as np

from ._blas import product as _product  # A @ B (SciPy's BLAS in the browser: _blas.py)
from ._validation import as_int, as_positive_scalar, as_sequence
from .bounds import _infonce_and_loo_terms, mean_and_se
from .caps import cosine_cap
from .gaussian import (
    gaussian_field,
    patch_information_logdet,
    sample_patch_pairs,
    sigma_for_information,
)
from .temperature import BETA_BOUNDS, _best_beta, _BetaObjective, cosine_scores

__all__ = ["patch_level_pairs"]

#: Chapter 3's protocol: information levels (nats), batch sizes, the temperatures of the
#: cosine table, pairs per level, and the field (side, length scale).
LEVELS = (1.0, 3.0, 6.0, 12.0)
BATCH_SIZES = (4, 16, 64, 256, 1024)
TAUS = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
M_PAIRS = 65_536
SIDE = 8
LENGTH_SCALE = 1.5

_EXP_FLOOR = -700.0  # exp(-700) = 9.9e-305 is still a normal float64
_TINY = np.finfo(np.float64).tiny
_PANEL_ROWS = 128  # rows per panel: 128 x 1024 doubles = 1 MiB, one core's L2 cache


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
    Ya, Xa = _augmented(x, y, sigma)
    # Density-ratio critic R = log p(y|x) - log p(y). Its exponentials, shifted by the same
    # s as G's plus T = max over the block of -log p(y_i), are exp(G_ij) * exp(lw_i), <= 1.
    lw = -log_py.reshape(M // kmax, kmax)
    lw -= lw.max(axis=1, keepdims=True)
    lw = lw.reshape(M)
    wexp = np.exp(lw)
    pos, row, col = _off_diagonal_sums(Ya, Xa, wexp, Ks, min(panel_rows, kmax))
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


def _off_diagonal_sums(Ya, Xa, wexp, Ks, P):
    """The positives' scores G_ii and, per K, the off-diagonal sums of exp(G) of each row
    and each column (and each column weighted by ``wexp``), in panels of ``P`` rows."""
    M, kmax = Ya.shape[0], Ks[-1]
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
    return pos, row, col


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


def _sample_covariance(x: np.ndarray) -> np.ndarray:
    """``numpy.cov(x, rowvar=False)`` (mean removed, ddof 1) without a centred copy of x."""
    M = x.shape[0]
    mean = x.mean(axis=0)
    cov = _product(x.T, x)
    cov -= M * np.outer(mean, mean)
    cov /= M - 1
    return cov


def _level_pairs(field_, target: float, seed, M: int):
    """Noise level and the ``M`` pairs of one information level; ``seed`` is what
    :func:`_level_seed` gives (the level index in the book's protocol)."""
    sigma = sigma_for_information(target, field_.eigenvalues)
    x, y = sample_patch_pairs(field_, sigma, M, seed=seed)
    return sigma, x, y


def _level_seed(seed: int, level_index: int):
    """The random stream of one level: ``level_index`` itself when ``seed`` is 0 (the book's
    protocol, ``numpy.random.default_rng(level index)``), otherwise
    ``numpy.random.default_rng([seed, level_index])``, a stream of its own for every
    ``seed`` and level.

    Examples
    --------
    >>> _level_seed(0, 2)
    2
    >>> _level_seed(5, 2).random() == np.random.default_rng([5, 2]).random()
    True
    """
    seed = as_int(seed, "seed", minimum=0)
    level_index = as_int(level_index, "level_index", minimum=0)
    return level_index if seed == 0 else np.random.default_rng([seed, level_index])


def patch_level_pairs(
    level: float = 6.0,
    *,
    levels=LEVELS,
    m_pairs: int = M_PAIRS,
    side: int = SIDE,
    length_scale: float = LENGTH_SCALE,
    seed: int = 0,
) -> tuple[float, np.ndarray, np.ndarray]:
    r"""The pairs of one level of the Gaussian-patch experiment, exactly as it draws them.

    :math:`\sigma` from :func:`~infonce_lib.sigma_for_information` for
    :math:`I = ` ``level``, then ``m_pairs`` pairs :math:`(x, y = x + \sigma\varepsilon)` from
    :func:`~infonce_lib.sample_patch_pairs` with the level's stream: the index of ``level``
    in ``levels`` as the seed when ``seed`` is 0 (chapter 3's protocol), and
    ``numpy.random.default_rng([seed, index])`` otherwise, as the experiment's
    ``Config(seed=...)`` draws them; so that a chapter can look at the very data behind a
    table of :mod:`infonce_lib.experiments.gaussian_patches` or
    :mod:`infonce_lib.experiments.cosine_temperature`.

    Parameters
    ----------
    level : float, default 6
        The information level in nats; one of ``levels``.
    levels : sequence of float, default (1, 3, 6, 12)
        The experiment's levels (they fix the seed).
    m_pairs : int, default 65536
        Pairs per level.
    side, length_scale : int, float
        The field (:func:`~infonce_lib.gaussian_field`).
    seed : int, default 0
        ``>= 0``; 0 is the book's protocol (seed = level index).

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
    return _level_pairs(field_, target, _level_seed(seed, lv.index(target)), M)


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
    best = _best_beta(objective, *BETA_BOUNDS)
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
