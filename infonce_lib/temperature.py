r"""Temperature: the cap that a bounded critic puts on InfoNCE.

A cosine critic scores :math:`f(x, y) = s(x, y) / \tau = \beta\, s(x, y)` with
:math:`s \in [-1, 1]` and :math:`\beta = 1/\tau`. The positive scores at most :math:`\beta`
and every negative at least :math:`-\beta`, so each term of :math:`I_{\mathrm{NCE}}` is at most

.. math::

    \log K - \log\big(1 + (K - 1)\, e^{-2/\tau}\big),

whatever the encoder. For fixed scores, :math:`I_{\mathrm{NCE}}(\beta)` is a linear term
minus a log-sum-exp of linear terms, hence concave in :math:`\beta`: any local maximum is the
global one.

This module holds what chapter 5's cosine-critic table needs (the cap, the bound as a
function of :math:`\beta` for fixed cosine scores, the best temperature); chapter 5 extends it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from ._validation import as_int, as_positive_scalar, as_real_array, check_same_shape

__all__ = [
    "BestTemperature",
    "best_temperature",
    "cosine_cap",
    "cosine_scores",
    "infonce_at_beta",
]


def cosine_cap(batch_size: int, tau):
    r"""The largest value any cosine critic at temperature :math:`\tau` can give InfoNCE.

    .. math::

        \mathrm{cap}(K, \tau) = \log K - \log\big(1 + (K - 1)\, e^{-2/\tau}\big)

    Every batch value of :math:`I_{\mathrm{NCE}}` with scores :math:`s/\tau`,
    :math:`s \in [-1, 1]`, is at most this (the positive at :math:`+1/\tau`, all negatives at
    :math:`-1/\tau`). Computed stably at both ends: for :math:`\tau < 2` as
    :math:`\log K - \operatorname{logaddexp}(0, \log(K-1) - 2/\tau)` (so :math:`\tau \to 0`
    gives :math:`\log K` without overflow); for :math:`\tau \ge 2` as
    :math:`-\operatorname{log1p}\big(\tfrac{K-1}{K}\operatorname{expm1}(-2/\tau)\big)`, which keeps
    its relative accuracy as :math:`\tau \to \infty` (cap :math:`\approx 2(K-1)/(K\tau)`).

    Parameters
    ----------
    batch_size : int
        :math:`K \ge 1` (``K = 1`` gives 0).
    tau : float or array_like
        Temperatures :math:`\tau > 0`, finite.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar ``tau``, else an array of ``tau``'s shape; in
        :math:`[0, \log K]`.

    Raises
    ------
    TypeError, ValueError
        If ``batch_size`` is not an integer ``>= 1`` or a temperature is not finite and
        positive.

    Examples
    --------
    >>> [round(cosine_cap(256, t), 3) for t in (0.1, 0.2, 0.5, 1.0)]
    [5.545, 5.534, 3.81, 1.975]
    >>> cosine_cap(256, 1e-3) == math.log(256), f"{cosine_cap(256, 1e20):.4e}"
    (True, '1.9922e-20')
    """
    K = as_int(batch_size, "batch_size", minimum=1)
    scalar = np.ndim(tau) == 0
    if scalar:
        t = np.array([as_positive_scalar(tau, "tau")])
    else:
        t = as_real_array(tau, "tau")
        if (t <= 0).any():
            raise ValueError(f"tau must be > 0; got minimum {t.min()}")
    out = np.empty_like(t)
    small = t < 2.0
    if K == 1:
        out[:] = 0.0
    else:
        ts = t[small]
        out[small] = math.log(K) - np.logaddexp(0.0, math.log(K - 1) - 2.0 / ts)
        tl = t[~small]
        out[~small] = -np.log1p(((K - 1) / K) * np.expm1(-2.0 / tl))
    return float(out[0]) if scalar else out


def cosine_scores(x, y, batch_size: int) -> np.ndarray:
    r"""Cosine similarities of a pool of pairs cut into batches: the scores :math:`s`.

    .. math::

        S_{bij} = \frac{y_{bK+i} \cdot x_{bK+j}}
        {\lVert y_{bK+i} \rVert \, \lVert x_{bK+j} \rVert}

    for ``M / K`` consecutive batches of ``K`` pairs, in the layout of
    :mod:`infonce_lib.bounds` (row ``i``: view :math:`y_i`; column ``j``: candidate
    :math:`x_j`). The critic at temperature :math:`\tau` is ``S / tau``.

    Parameters
    ----------
    x, y : array_like, shape (M, d)
        Paired samples (e.g. raw patches and their noisy views); no row may be zero.
    batch_size : int
        :math:`K \ge 2`, a divisor of ``M``.

    Returns
    -------
    numpy.ndarray, shape (M // K, K, K)
        Values in :math:`[-1, 1]` up to round-off (not clipped).

    Raises
    ------
    TypeError, ValueError
        If the arrays are not finite 2-D arrays of the same shape, a row has zero norm,
        ``K < 2`` or ``K`` does not divide ``M``.

    Examples
    --------
    >>> S = cosine_scores([[1.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [1.0, 1.0]], 2)
    >>> np.round(S[0], 4)
    array([[1.    , 0.    ],
           [0.7071, 0.7071]])
    """
    X = as_real_array(x, "x", ndim=2)
    Y = as_real_array(y, "y", ndim=2)
    check_same_shape(X, "x", Y, "y")
    M, d = X.shape
    K = as_int(batch_size, "batch_size", minimum=2)
    if M % K:
        raise ValueError(
            f"batch_size must divide the number of pairs: {M} pairs cannot be cut into "
            f"batches of {K} (remainder {M % K})"
        )
    nx = np.sqrt(np.einsum("md,md->m", X, X))
    ny = np.sqrt(np.einsum("md,md->m", Y, Y))
    if (nx == 0).any() or (ny == 0).any():
        raise ValueError("x and y must have no zero rows (the cosine is undefined)")
    Xn = (X / nx[:, None]).reshape(M // K, K, d)
    Yn = (Y / ny[:, None]).reshape(M // K, K, d)
    return np.matmul(Yn, Xn.transpose(0, 2, 1))


_ROUND_OFF = 1e-12  # cosines from a matrix product may exceed 1 by a few ulps; never clipped


def _check_cosines(cosines) -> np.ndarray:
    S = as_real_array(cosines, "cosines", ndim=3)
    _, K, K2 = S.shape
    if K != K2:
        raise ValueError(f"cosines must have shape (B, K, K); got {S.shape}")
    if K < 2:
        raise ValueError(f"cosines needs batches of K >= 2; got K = {K}")
    largest = float(np.abs(S).max())
    if largest > 1.0 + _ROUND_OFF:
        raise ValueError(
            f"cosines must lie in [-1, 1] (the cap assumes it); got max |s| = {largest}"
        )
    return S


class _BetaObjective:
    """Batch values of InfoNCE for the critic ``beta * S``, for many ``beta``, fast.

    The row maxima of ``S`` are subtracted once (``D = S - max_j S``, so ``D <= 0`` and the
    row maximum of ``beta * D`` is 0 for every ``beta > 0``); each evaluation is then one
    multiply, one ``exp`` and one sum (a BLAS matrix-vector product), in cache-sized chunks
    of a scratch buffer. With ``overwrite=True``, ``S`` itself becomes ``D``.
    """

    _CHUNK = 1 << 18  # doubles per chunk (2 MiB): about a core's L2 cache

    def __init__(self, S: np.ndarray, *, overwrite: bool = False) -> None:
        B, K, _ = S.shape
        self.K = K
        idx = np.arange(K)
        row_max = S.max(axis=-1, keepdims=True)
        D = np.subtract(S, row_max, out=S if overwrite else None)
        self.pos = D[:, idx, idx].copy()  # (B, K), <= 0
        self.D = D.reshape(B * K, K)
        self.B = B
        rows = max(1, self._CHUNK // K)
        self.rows = rows
        self.buf = np.empty((min(rows, B * K), K))

    def batch_values(self, beta: float) -> np.ndarray:
        """Batch values at one ``beta``: shape (B,)."""
        return self.batch_values_many([beta])[0]

    def batch_values_many(self, betas) -> np.ndarray:
        """Batch values at several ``beta`` in one pass over ``D``: shape (len(betas), B)."""
        betas = [float(b) for b in betas]
        n = self.D.shape[0]
        den = np.empty((len(betas), n))
        ones = np.ones(self.K)
        for start in range(0, n, self.rows):
            block = self.D[start : start + self.rows]  # read once, reused for every beta
            stop = start + block.shape[0]
            buf = self.buf[: block.shape[0]]
            for q, beta in enumerate(betas):
                np.multiply(block, beta, out=buf)
                np.exp(buf, out=buf)
                np.matmul(buf, ones, out=den[q, start:stop])
        np.log(den, out=den)
        terms = np.multiply.outer(betas, self.pos.reshape(-1))
        terms -= den
        return math.log(self.K) + terms.reshape(len(betas), self.B, self.K).mean(axis=-1)


def infonce_at_beta(cosines, beta: float) -> np.ndarray:
    r"""InfoNCE of the cosine critic :math:`f = \beta s` as a function of :math:`\beta = 1/\tau`.

    .. math::

        I_{\mathrm{NCE}}^{(b)}(\beta) = \log K + \frac1K \sum_i
        \Big(\beta S_{bii} - \log \sum_j e^{\beta S_{bij}}\Big),

    the softmax over the candidates :math:`x_j` (Poole et al., 2019, eq. 12). Concave in
    :math:`\beta`; each batch value is at most :func:`cosine_cap` ``(K, 1/beta)``.

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores :math:`S_{bij} \in [-1, 1]` (:func:`cosine_scores`). Not modified.
    beta : float
        Inverse temperature :math:`\beta > 0`.

    Returns
    -------
    numpy.ndarray, shape (B,)
        One value per batch.

    Raises
    ------
    TypeError, ValueError
        If ``cosines`` is not a finite (B, K, K) array in [-1, 1] with ``K >= 2``, or
        ``beta`` is not finite and positive.

    Examples
    --------
    >>> S = np.array([[[1.0, -1.0], [-1.0, 1.0]]])
    >>> float(np.round(infonce_at_beta(S, 2.0)[0], 6))  # equals the cap at tau = 1/2
    0.674997
    >>> round(cosine_cap(2, 0.5), 6)
    0.674997
    """
    S = _check_cosines(cosines)
    b = as_positive_scalar(beta, "beta")
    return _BetaObjective(S).batch_values(b)


@dataclass(frozen=True)
class BestTemperature:
    """The result of :func:`best_temperature`.

    Attributes
    ----------
    tau : float
        The best temperature :math:`\\tau^\\star = 1/\\beta^\\star`.
    beta : float
        The best inverse temperature.
    infonce : float
        The mean over batches of :math:`I_{\\mathrm{NCE}}` at :math:`\\beta^\\star`.
    evaluations : int
        Number of evaluations of the mean bound.
    """

    tau: float
    beta: float
    infonce: float
    evaluations: int


def best_temperature(cosines, beta_bounds: tuple[float, float] = (0.5, 500.0)) -> BestTemperature:
    r"""The temperature that maximises the mean InfoNCE of a fixed cosine critic.

    .. math::

        \beta^\star = \operatorname*{arg\,max}_{\beta \in [\beta_{\min}, \beta_{\max}]}
        \frac1B \sum_b I_{\mathrm{NCE}}^{(b)}(\beta), \qquad \tau^\star = 1/\beta^\star,

    by bounded scalar optimisation (``scipy.optimize.minimize_scalar``,
    ``method="bounded"``, default tolerance). The objective is concave in :math:`\beta`, so
    a local maximum in the interval is the global one there.

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1].
    beta_bounds : (float, float), default (0.5, 500)
        The search interval for :math:`\beta`, ``0 < low < high``.

    Returns
    -------
    BestTemperature
        :math:`\tau^\star`, :math:`\beta^\star`, the mean bound there and the number of
        evaluations.

    Raises
    ------
    TypeError, ValueError
        If ``cosines`` is invalid (see :func:`infonce_at_beta`) or the bounds are not
        ``0 < low < high``.

    Examples
    --------
    With every positive at 0.9 and every negative at 0.1 the bound rises with
    :math:`\beta` all the way, so the optimum sits at the upper end of the interval:

    >>> S = np.full((2, 4, 4), 0.1) + 0.8 * np.eye(4)
    >>> best = best_temperature(S, (0.5, 5.0))
    >>> round(best.beta, 3), round(best.infonce, 4)
    (5.0, 1.3328)
    """
    S = _check_cosines(cosines)
    if len(beta_bounds) != 2:
        raise ValueError(f"beta_bounds must be (low, high); got {beta_bounds!r}")
    lo = as_positive_scalar(beta_bounds[0], "beta_bounds[0]")
    hi = as_positive_scalar(beta_bounds[1], "beta_bounds[1]")
    if not lo < hi:
        raise ValueError(f"beta_bounds must satisfy low < high; got {beta_bounds!r}")
    return _best_beta(_BetaObjective(S), lo, hi)


def _best_beta(objective: _BetaObjective, lo: float, hi: float) -> BestTemperature:
    res = minimize_scalar(
        lambda b: -float(objective.batch_values(b).mean()), bounds=(lo, hi), method="bounded"
    )
    beta = float(res.x)
    return BestTemperature(tau=1.0 / beta, beta=beta, infonce=float(-res.fun), evaluations=res.nfev)
