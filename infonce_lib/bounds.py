r"""Multi-sample bounds on mutual information from a batch of critic scores.

The scores of a critic on ``B`` batches of ``K`` pairs form an array ``F`` of shape
``(B, K, K)`` with

.. math::

    F_{bij} = f(x_{bj}, y_{bi}),

so row ``i`` of batch ``b`` holds the view :math:`y_i` scored against every candidate
:math:`x_j`, and the positives :math:`f(x_i, y_i)` sit on the diagonal. Poole et al. (2019)
bound the mutual information from both sides with these scores:

- InfoNCE, their multi-sample bound: :math:`I \ge I_{\mathrm{NCE}}`, a softmax over the
  :math:`x_j` of each row (``over="x"``), or, with the roles of :math:`x` and :math:`y`
  exchanged, over the :math:`y_i` of each column (``over="y"``);
- the leave-one-out bound, their upper bound for a known conditional density: with the
  optimal critic :math:`f = \log p(y \mid x)`, :math:`I \le I_{\mathrm{LOO}}`, the positive
  removed from its own denominator;
- the single-sample NWJ bound (Nguyen, Wainwright & Jordan, 2010), used in the proof.

Every function returns one value per batch (the bound's Monte Carlo estimate from that
batch); :func:`mean_and_se` turns them into a mean and its standard error. None of them
modifies its input or clips a score.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy.special import logsumexp

from ._validation import as_real_array, finite_or_raise
from .core import _positive_log_probs, _safe_mean

__all__ = ["infonce_bound", "leave_one_out_bound", "mean_and_se", "nwj_bound"]

Over = Literal["x", "y"]


def _check_scores(scores, name: str = "scores") -> np.ndarray:
    F = as_real_array(scores, name, ndim=3)
    _, K, K2 = F.shape
    if K != K2:
        raise ValueError(
            f"{name} must be square in its last two axes, shape (B, K, K) with "
            f"F[b, i, j] = f(x_j, y_i); got shape {F.shape}"
        )
    if K < 2:
        raise ValueError(
            f"{name} needs batches of K >= 2 pairs (at least one negative per positive); "
            f"got K = {K}"
        )
    return F


# Helpers on batches of scores, shared with infonce_lib.bound_family.


def _check_log_baseline(log_baseline, F: np.ndarray) -> np.ndarray:
    """``log a(y_i)`` broadcast to shape (B, K): a scalar, a (K,) or a (B, K) array."""
    b = as_real_array(log_baseline, "log_baseline", ndim=(0, 1, 2))
    B, K, _ = F.shape
    try:
        return np.broadcast_to(b, (B, K))
    except ValueError:
        raise ValueError(
            f"log_baseline must be a scalar or have shape (K,) or (B, K) = ({B}, {K}), one "
            f"log a(y_i) per row of scores; got shape {b.shape}"
        ) from None


def _off_diagonal(F: np.ndarray) -> np.ndarray:
    """A copy of F with the diagonal set to -inf (excluded by index)."""
    off = F.copy()
    idx = np.arange(F.shape[-1])
    off[..., idx, idx] = -np.inf
    return off


def _diag(F: np.ndarray) -> np.ndarray:
    return np.diagonal(F, axis1=-2, axis2=-1)


_RESCALE = "rescale the scores"


def _positive_mean(F: np.ndarray) -> np.ndarray:
    """Each batch's mean positive score (the diagonal), shape (B,), by
    :func:`~infonce_lib.core._safe_mean`: positives near ±1.8e308 whose sum overflows are
    averaged without overflow. ``ValueError`` only if the mean itself is beyond float64."""
    return finite_or_raise(
        _safe_mean(_diag(F), axis=-1), "the mean of the positive scores", _RESCALE
    )


def _off_diagonal_mean(X: np.ndarray, plain: np.ndarray | None = None) -> np.ndarray:
    """Each batch's mean of ``X`` (B, K, K) over the pairs ``i != j``, shape (B,).

    ``plain`` is the caller's own expression of that mean, kept (for its bits) wherever it
    is finite; where it is not (or if ``plain`` is None, everywhere) the mean is recomputed
    by :func:`~infonce_lib.core._safe_mean`, so terms that are each finite but whose sum
    overflows give their mean. An infinite term stays infinite.
    """
    if plain is not None:
        bad = ~np.isfinite(plain)
        if not bad.any():
            return plain
    K = X.shape[-1]
    Z = X.copy() if plain is None else X[bad]
    idx = np.arange(K)
    Z[:, idx, idx] = 0.0
    with np.errstate(over="ignore"):
        mean = _safe_mean(Z.reshape(Z.shape[0], K * K), axis=-1) * (K / (K - 1))
    if plain is None:
        return mean
    out = plain.copy()
    out[bad] = mean
    return out


def _lse(a: np.ndarray, axis, keepdims: bool = False) -> np.ndarray:
    """log sum exp over ``axis``, shifted by the maximum; every slice has a finite entry."""
    m = np.max(a, axis=axis, keepdims=True)
    with np.errstate(over="ignore"):  # a - m below -1.8e308 is -inf: a zero term
        out = np.log(np.exp(a - m).sum(axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _batch_mean(log_probs: np.ndarray, offset: float) -> np.ndarray:
    """``offset`` plus each batch's mean log-probability, without overflow where that mean
    is representable (terms near -1.8e308, from scores of that size, are averaged as
    :func:`~infonce_lib.core._safe_mean` does); otherwise ``ValueError``, never a warning."""
    with np.errstate(over="ignore"):
        out = offset + _safe_mean(log_probs, axis=-1)
    return finite_or_raise(out, "a batch's mean log-probability", "rescale the scores")


def _oriented(F: np.ndarray, over: str) -> np.ndarray:
    """A view whose last axis is the normalised side (rows = anchors)."""
    if over == "x":
        return F
    if over == "y":
        return np.swapaxes(F, -1, -2)
    raise ValueError(
        f"over must be 'x' (softmax over the x_j, Poole et al.'s InfoNCE) or 'y'; got {over!r}"
    )


def infonce_bound(scores, *, over: Over = "x") -> np.ndarray:
    r"""InfoNCE lower bound on :math:`I(X; Y)`, one value per batch.

    With ``over="x"`` (van den Oord et al., 2018; Poole et al., 2019, the orientation of
    their derivation of the multi-sample bound, whose normaliser averages over the
    candidates :math:`x_{1:K}` for a fixed :math:`y`, and of the notebook that accompanies
    their paper):

    .. math::

        I_{\mathrm{NCE}}^{(b)} = \frac1K \sum_{i=1}^{K}
        \log \frac{e^{F_{bii}}}{\frac1K \sum_{j=1}^{K} e^{F_{bij}}}
        = \log K + \frac1K \sum_i \log \operatorname{softmax}_j(F_{bi\cdot})_i ,

    the positive in its own denominator. A term :math:`c(y_i)` added to the critic cancels.
    With ``over="y"`` the softmax runs over the views :math:`y_i` of each column
    (:math:`\sum_i e^{F_{bij}}`), the orientation TensorFlow Probability's
    ``lower_bound_info_nce`` documents, and it is :math:`c(x_j)` that cancels. Each batch
    value is at
    most :math:`\log K`.

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = f(x_j, y_i)``; any real dtype, computed in float64. Not modified.
    over : {"x", "y"}
        The normalised side.

    Returns
    -------
    numpy.ndarray, shape (B,)
        Float64, each ``<= log K``.

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a finite 3-D array of square (K, K) batches with ``K >= 2``, or
        ``over`` is not ``"x"`` or ``"y"``; ``ValueError`` if a positive's log-probability
        overflows float64 (scores of a row spanning more than 1.8e308). Terms that are
        each finite are averaged without overflow.

    Examples
    --------
    A critic that cannot tell the candidates apart scores exactly 0; a batch of 2 can never
    certify more than log 2.

    >>> np.round(infonce_bound(np.zeros((1, 2, 2))), 6)
    array([0.])
    >>> np.round(infonce_bound([[[50.0, 0.0], [0.0, 50.0]]]), 6)  # log 2 = 0.693147
    array([0.693147])
    """
    F = _check_scores(scores)
    K = F.shape[-1]
    log_probs = _positive_log_probs(_oriented(F, over))
    return _batch_mean(log_probs, math.log(K))


def leave_one_out_bound(scores, *, over: Over = "x") -> np.ndarray:
    r"""Leave-one-out upper bound on :math:`I(X; Y)`, one value per batch.

    Poole et al. (2019, their upper bound for a known conditional density), for the critic
    :math:`f(x, y) = \log p(y \mid x)`
    (softmax over the :math:`x_j`, ``over="x"``):

    .. math::

        I_{\mathrm{LOO}}^{(b)} = \frac1K \sum_{i=1}^{K}
        \log \frac{e^{F_{bii}}}{\frac{1}{K-1} \sum_{j \ne i} e^{F_{bij}}} ,

    the positive removed from its own denominator. The positive is excluded by index and the
    remaining terms are shifted by their own maximum, so a dominant positive (high
    information) costs no precision. It is an upper bound only in expectation and only for
    the true conditional density; for other critics it is just a number.

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = f(x_j, y_i)``. Not modified.
    over : {"x", "y"}
        The normalised side (``"y"``: sums over :math:`i \ne j` of each column).

    Returns
    -------
    numpy.ndarray, shape (B,)
        Float64. Term by term it is at least :func:`infonce_bound` of the same scores
        exactly when :math:`e^{F_{bii}} \ge \frac{1}{K-1}\sum_{j \ne i} e^{F_{bij}}` (e.g.
        when every positive scores highest in its row); with the optimal critic,
        :math:`\mathbb{E}[I_{\mathrm{NCE}}] \le I \le \mathbb{E}[I_{\mathrm{LOO}}]`.

    Raises
    ------
    TypeError, ValueError
        As :func:`infonce_bound`.

    Examples
    --------
    >>> np.round(leave_one_out_bound(np.zeros((1, 2, 2))), 6)
    array([0.])
    >>> np.round(leave_one_out_bound([[[3.0, 0.0], [0.0, 3.0]]]), 6)  # log e^3 / e^0
    array([3.])
    """
    F = _check_scores(scores)
    K = F.shape[-1]
    log_probs = _positive_log_probs(_oriented(F, over), include_positive=False)
    return _batch_mean(log_probs, math.log(K - 1))


def _infonce_and_loo_terms(
    F: np.ndarray, over: str = "x", *, overwrite: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """InfoNCE and leave-one-out log-probability terms from one pass of exponentials.

    Unchecked, on clean float64 scores of shape (B, K, K). Returns two arrays of shape
    (B, K): ``log softmax`` of each positive with and without itself in the denominator.
    The diagonal is set to ``-inf`` (by index) in a work array, the off-diagonal maximum is
    subtracted, one ``exp`` gives the off-diagonal sum ``S``, and

    - leave-one-out term: ``F_ii - (m + log S)``;
    - InfoNCE term: ``F_ii - logaddexp(F_ii, m + log S)``,

    so the positive is never subtracted from a sum it dominates. With ``overwrite=True`` the
    array ``F`` is used as scratch space (its contents are destroyed).
    """
    V = _oriented(F, over)
    K = V.shape[-1]
    idx = np.arange(K)
    pos = V[..., idx, idx].copy()
    work = V if overwrite else V.copy()
    work[..., idx, idx] = -np.inf
    off_max = work.max(axis=-1, keepdims=True)
    np.subtract(work, off_max, out=work)
    np.exp(work, out=work)
    log_off = np.log(work.sum(axis=-1))
    log_off += off_max[..., 0]
    loo = pos - log_off
    nce = pos - np.logaddexp(pos, log_off)
    return nce, loo


def nwj_bound(scores) -> np.ndarray:
    r"""The NWJ lower bound on :math:`I(X; Y)`, one value per batch.

    Nguyen, Wainwright & Jordan (2010); in the notation of Poole et al. (2019, among their
    unnormalised lower bounds):

    .. math::

        I \ge \mathbb{E}_{p(x, y)}[f] - e^{-1}\, \mathbb{E}_{p(x)p(y)}[e^{f}],

    estimated from one batch with the positives (diagonal) as samples of :math:`p(x, y)`
    and the :math:`K(K-1)` off-diagonal pairs as samples of :math:`p(x)p(y)`:

    .. math::

        I_{\mathrm{NWJ}}^{(b)} = \frac1K \sum_i F_{bii}
        - \frac{e^{-1}}{K(K-1)} \sum_{i \ne j} e^{F_{bij}} .

    The bound is tight at :math:`f^\star = 1 + \log p(y \mid x) / p(y)`. The second term is
    computed as ``exp(logsumexp(...))``; when it exceeds the float64 range, or the value
    itself is below ``-1.8e308`` nats, the batch value is ``-inf``.

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = f(x_j, y_i)``. Not modified.

    Returns
    -------
    numpy.ndarray, shape (B,)

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a finite 3-D array of square (K, K) batches with ``K >= 2``.
        Positives whose sum overflows are averaged without overflow.

    Examples
    --------
    >>> np.round(nwj_bound(np.ones((1, 3, 3))), 6)  # 1 - e^{-1} e^{1}
    array([0.])
    """
    F = _check_scores(scores)
    K = F.shape[-1]
    idx = np.arange(K)
    joint = _safe_mean(F[:, idx, idx], axis=-1)
    off = F.copy()
    off[:, idx, idx] = -np.inf
    log_mean = logsumexp(off, axis=(1, 2)) - math.log(K * (K - 1)) - 1.0
    with np.errstate(over="ignore"):
        marginal = np.exp(log_mean)
        return joint - marginal  # -inf: below -1.8e308, as documented


def mean_and_se(values) -> tuple[float, float]:
    r"""Mean of per-batch values and its standard error.

    .. math::

        \bar v = \frac1B \sum_b v_b, \qquad
        \mathrm{SE} = \frac{s}{\sqrt B}, \quad
        s^2 = \frac{1}{B - 1} \sum_b (v_b - \bar v)^2

    (sample standard deviation with ``ddof = 1``).

    Parameters
    ----------
    values : array_like, shape (B,)
        At least two finite values.

    Returns
    -------
    (float, float)
        The mean and its standard error.

    Raises
    ------
    TypeError, ValueError
        If ``values`` is not a finite 1-D array of at least two numbers.

    Examples
    --------
    >>> m, se = mean_and_se([1.0, 2.0, 3.0, 4.0])
    >>> m, round(se, 6)
    (2.5, 0.645497)
    """
    v = as_real_array(values, "values", ndim=1)
    if v.size < 2:
        raise ValueError(f"values needs at least 2 batches for a standard error; got {v.size}")
    mean = float(_safe_mean(v))
    with np.errstate(over="ignore", invalid="ignore"):
        se = float(v.std(ddof=1) / math.sqrt(v.size))
        if not math.isfinite(se):  # squares of values near 1.8e308: scale them first
            top = float(np.abs(v).max())
            se = float((v / top).std(ddof=1) / math.sqrt(v.size)) * top
    finite_or_raise([se], "the standard error of values", "rescale values")
    return mean, se


# The leave-one-out log-means behind the interpolated bound of infonce_lib.bound_family.


def _loo_log_means(F: np.ndarray):
    r"""``L[..., i, j] = log( mean_{k != j} e^{F_ik} )`` for every row ``i`` and column ``j``;
    then ``E = e^{F - m}``, the row maxima ``m`` (shape (..., K, 1)), their columns ``a``
    (shape (..., K)) and ``top``, their flat indices in a C-contiguous array of F's shape.

    Off the maximum's column, :math:`S_i - e^{F_{ij} - m_i} \ge 1` loses no precision; the
    maximum's own column sums the other terms directly, re-shifted by their own maximum only
    where they underflow next to it, so a dominant positive costs nothing.
    """
    F = np.ascontiguousarray(F)  # so that every array below is too (flat indexing by top)
    K = F.shape[-1]
    m = F.max(axis=-1, keepdims=True)
    E = np.exp(F - m)
    S = E.sum(axis=-1, keepdims=True)
    a = F.argmax(axis=-1)
    top = np.arange(0, a.size * K, K) + a.ravel()  # flat positions of the maxima
    E.reshape(-1)[top] = 0.0
    rest = E.sum(axis=-1)  # the sum without the maximum, in units of e^m
    with np.errstate(divide="ignore"):  # the argmax column (S - 1 ~ 0) is replaced below
        L = m + np.log(S - E)
        L_top = m[..., 0] + np.log(rest)
    tiny = rest < _TINY_REST
    if tiny.any():  # shifting by m lost these sums to underflow: shift by their own maximum
        without = F[tiny]
        np.put_along_axis(without, a[tiny][:, None], -np.inf, axis=-1)
        L_top[tiny] = _lse(without, axis=-1)
    L.reshape(-1)[top] = L_top.ravel()
    E.reshape(-1)[top] = 1.0  # e^0, as computed above
    L -= math.log(K - 1)
    return L, E, m, a, top


#: Below this, a row's sum without its maximum (relative to it) may have lost digits.
_TINY_REST = 1e-290
