r"""The variational family of bounds on mutual information, from a batch of critic scores.

Poole et al. (2019) derive the estimators used with trained critics from one
inequality, :math:`\log u \le u / a - 1 + \log a` for any :math:`a > 0`, applied at
different places. This module holds the members that chapter 3's :mod:`~infonce_lib.bounds`
does not (that module has InfoNCE, the leave-one-out bound and NWJ), the gradients of every
member with respect to the score matrix (to train a critic on its own objective), and the
estimates of the optimal critic on the correlated Gaussian of :mod:`~infonce_lib.limits`.

Scores follow the book's convention: an array ``F`` of shape ``(B, K, K)`` with
:math:`F_{bij} = f(x_{bj}, y_{bi})`, rows the views :math:`y_i`, columns the candidates
:math:`x_j`, positives on the diagonal; the :math:`K(K-1)` off-diagonal pairs stand in for
samples of :math:`p(x)p(y)`. Every function returns one value per batch.

==================  ==========================  ========================================
member              needs                       what it is
==================  ==========================  ========================================
Barber–Agakov       a density :math:`q(y|x)`    lower bound (needs :math:`h(Y)` known)
                    and :math:`h(Y)`
DV (MINE's bound)   a critic                    bound in expectation only with the true
                                                normaliser; the batch value is biased up
NWJ                 a critic                    lower bound, unbiased, high variance
TUBA                a critic and a baseline     lower bound, unbiased, high variance
                    :math:`a(y)`
JS                  a critic (trained on the    lower bound (NWJ of :math:`1 + f`); the
                    JS objective)               training objective bounds JS, not I
InfoNCE             a critic                    lower bound, at most :math:`\log K`
:math:`I_\alpha`    a critic and a baseline     lower bound, each batch at most
                                                :math:`1 + \log((K-1)/\alpha)`
==================  ==========================  ========================================
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ._validation import (
    as_generator,
    as_int,
    as_name_subset,
    as_positive_scalar,
    as_real_scalar,
    finite_or_raise,
)
from .bounds import (
    _RESCALE,
    _check_log_baseline,
    _check_scores,
    _diag,
    _loo_log_means,
    _lse,
    _off_diagonal,
    _off_diagonal_mean,
    _positive_mean,
)
from .core import _safe_mean
from .limits import correlated_gaussian_critic, correlated_gaussian_rho, sample_correlated_gaussian

__all__ = [
    "ESTIMATORS",
    "barber_agakov_bound",
    "bound_and_score_grad",
    "correlated_gaussian_log_ratio",
    "dv_bound",
    "interpolated_bound",
    "js_bound",
    "js_objective",
    "optimal_critic_estimates",
    "tuba_bound",
]

#: The estimators of the staircase, in the order of the book's tables.
ESTIMATORS = ("infonce", "nwj", "dv", "js", "alpha")


# --------------------------------------------------------------------------- the bounds


def barber_agakov_bound(scores, entropy: float) -> np.ndarray:
    r"""The Barber–Agakov lower bound, for a critic that is a normalised log density.

    Poole et al. (2019), with the variational density :math:`q(y \mid x)`:

    .. math::

        I(X; Y) \ge h(Y) + \mathbb{E}_{p(x, y)}[\log q(y \mid x)], \qquad
        I_{\mathrm{BA}}^{(b)} = h(Y) + \frac1K \sum_i F_{bii},

    with :math:`F_{bij} = \log q(y_{bi} \mid x_{bj})`. Only the positives are used. It is a
    lower bound for every normalised :math:`q`, exact when :math:`q = p(y \mid x)`; it needs
    the entropy :math:`h(Y)` in closed form, which is why it is rarely usable with data.

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = log q(y_i | x_j)``; only the diagonal is read. Not modified.
    entropy : float
        The differential entropy :math:`h(Y)` in nats.

    Returns
    -------
    numpy.ndarray, shape (B,)

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a finite 3-D array of square (K, K) batches with ``K >= 2``, or
        ``entropy`` is not a finite real; ``ValueError`` if ``entropy`` plus a batch's mean
        positive score is beyond float64. Positives whose sum overflows are averaged
        without overflow.

    Examples
    --------
    A one-dimensional standard normal has :math:`h = \tfrac12 \log(2\pi e)`; scoring its
    own density gives the entropy term back with the opposite sign:

    >>> h = 0.5 * np.log(2 * np.pi * np.e)
    >>> F = np.full((1, 2, 2), -h)
    >>> np.round(barber_agakov_bound(F, h), 6)
    array([0.])
    """
    F = _check_scores(scores)
    h = as_real_scalar(entropy, "entropy")
    joint = _positive_mean(F)
    with np.errstate(over="ignore"):
        out = h + joint
    return finite_or_raise(
        out, "entropy plus the mean of the positive scores", "rescale the scores or entropy"
    )


def dv_bound(scores) -> np.ndarray:
    r"""The Donsker–Varadhan (MINE) estimate of :math:`I(X; Y)`, one value per batch.

    Poole et al. (2019), after Donsker & Varadhan (1983) and Belghazi et al.
    (2018):

    .. math::

        I &\ge \mathbb{E}_{p(x, y)}[f] - \log \mathbb{E}_{p(x)p(y)}[e^{f}], \\
        I_{\mathrm{DV}}^{(b)} &= \frac1K \sum_i F_{bii}
        - \log \frac{1}{K(K-1)} \sum_{i \ne j} e^{F_{bij}} .

    The inequality holds for every critic, tight at :math:`f = \log p(x,y)/(p(x)p(y)) + c`.
    The batch value is **not** a lower bound: the logarithm of a batch mean underestimates
    the logarithm of the expectation (Jensen), so the estimate is biased upwards, and can
    exceed the true information. A constant added to the critic cancels.

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
        If ``scores`` is not a finite 3-D array of square (K, K) batches with ``K >= 2``;
        ``ValueError`` if the estimate (the mean positive score minus the log-mean-exp of
        the others) is beyond float64. Positives whose sum overflows are averaged without
        overflow.

    Examples
    --------
    >>> np.round(dv_bound(np.zeros((1, 3, 3))), 6)
    array([0.])
    >>> np.round(dv_bound(np.ones((1, 3, 3)) + 5.0), 6)  # a constant cancels
    array([0.])
    """
    F = _check_scores(scores)
    K = F.shape[-1]
    joint = _positive_mean(F)
    log_mean = _lse(_off_diagonal(F), axis=(1, 2)) - math.log(K * (K - 1))
    with np.errstate(over="ignore"):
        out = joint - log_mean
    return finite_or_raise(
        out,
        "the DV estimate (the mean positive score minus the log-mean-exp of the other scores)",
        _RESCALE,
    )


def tuba_bound(scores, log_baseline) -> np.ndarray:
    r"""The tractable unnormalised Barber–Agakov bound (TUBA) with a baseline :math:`a(y)`.

    Poole et al. (2019):

    .. math::

        I \ge 1 + \mathbb{E}_{p(x, y)}\!\left[\log \frac{e^{f(x, y)}}{a(y)}\right]
        - \mathbb{E}_{p(x)p(y)}\!\left[\frac{e^{f(x, y)}}{a(y)}\right],

    estimated from one batch as

    .. math::

        I_{\mathrm{TUBA}}^{(b)} = 1 + \frac1K \sum_i (F_{bii} - \log a(y_{bi}))
        - \frac{1}{K(K-1)} \sum_{i \ne j} e^{F_{bij} - \log a(y_{bi})} .

    Both terms are plain means, so the batch value is an unbiased estimate of a lower bound;
    the exponential term makes its variance grow like :math:`e^{I}` for a good critic.
    With :math:`\log a = 1` it is :func:`~infonce_lib.nwj_bound`.

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = f(x_j, y_i)``. Not modified.
    log_baseline : float or array_like, shape (K,) or (B, K)
        :math:`\log a(y_i)` for each row ``i``.

    Returns
    -------
    numpy.ndarray, shape (B,)
        ``-inf`` if the exponential term overflows float64 or the value is below -1.8e308.

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a finite 3-D array of square (K, K) batches with ``K >= 2``, or
        ``log_baseline`` has the wrong shape; ``ValueError`` if ``scores - log_baseline``
        overflows float64. Positives whose sum overflows are averaged without overflow.

    Examples
    --------
    >>> from infonce_lib import nwj_bound
    >>> F = np.random.default_rng(0).normal(size=(2, 4, 4))
    >>> bool(np.allclose(tuba_bound(F, 1.0), nwj_bound(F)))
    True
    """
    F = _check_scores(scores)
    b = _check_log_baseline(log_baseline, F)
    K = F.shape[-1]
    with np.errstate(over="ignore"):
        G = F - b[:, :, None]
    finite_or_raise(G, "the scores minus log_baseline", "rescale the scores or log_baseline")
    joint = finite_or_raise(
        _safe_mean(_diag(G), axis=-1),
        "the mean of the positive scores minus log_baseline",
        "rescale the scores or log_baseline",
    )
    log_mean = _lse(_off_diagonal(G), axis=(1, 2)) - math.log(K * (K - 1))
    with np.errstate(over="ignore"):
        return 1.0 + joint - np.exp(log_mean)


def js_objective(scores) -> np.ndarray:
    r"""The f-GAN lower bound on the Jensen–Shannon divergence, used to train a critic.

    Nowozin et al. (2016), as used by Poole et al. (2019) and Hjelm et al.
    (2019): with :math:`\operatorname{sp}(t) = \log(1 + e^{t})`,

    .. math::

        \hat J^{(b)} = -\frac1K \sum_i \operatorname{sp}(-F_{bii})
        - \frac{1}{K(K-1)} \sum_{i \ne j} \operatorname{sp}(F_{bij}),

    the log-likelihood of a logistic classifier that tells positives from mismatched pairs.
    Its maximiser is :math:`f^\star = \log p(x, y) / (p(x)p(y))`. It bounds
    :math:`2\,\mathrm{JS} - 2 \log 2`, **not** the mutual information: to estimate
    :math:`I`, evaluate the trained critic with :func:`js_bound`. It is bounded, so its
    gradients stay small where NWJ's explode.

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = f(x_j, y_i)``. Not modified.

    Returns
    -------
    numpy.ndarray, shape (B,)
        Each value is at most 0.

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a finite 3-D array of square (K, K) batches with ``K >= 2``;
        ``ValueError`` if a batch's objective is below -1.8e308. Softplus terms whose sum
        overflows are averaged without overflow.

    Examples
    --------
    A critic that cannot tell pairs apart scores :math:`-2 \log 2`:

    >>> np.round(js_objective(np.zeros((1, 3, 3))), 6), round(-2 * math.log(2), 6)
    (array([-1.386294]), -1.386294)
    """
    F = _check_scores(scores)
    values, _ = _grad_js(F)
    return finite_or_raise(values, "the JS objective", _RESCALE)


def js_bound(scores) -> np.ndarray:
    r"""The mutual information of a JS-trained critic: NWJ evaluated at :math:`1 + f`.

    Poole et al. (2019) train the critic on :func:`js_objective` and estimate
    :math:`I` with the NWJ bound. The JS maximiser is :math:`\log r`,
    :math:`r = p(x, y)/(p(x)p(y))`, while NWJ is tight at :math:`1 + \log r`, so the critic
    is shifted by 1 before NWJ:

    .. math::

        I_{\mathrm{JS}}^{(b)} = I_{\mathrm{NWJ}}^{(b)}(F + 1)
        = 1 + \frac1K \sum_i F_{bii} - \frac{1}{K(K-1)} \sum_{i \ne j} e^{F_{bij}} .

    It is a lower bound for every critic (it is NWJ); without the shift the optimal JS
    critic would give :math:`I - e^{-1}` instead of :math:`I`. The authors' demonstration
    notebook (their Colab) evaluates NWJ at :math:`f` itself; the shift by 1 is this
    library's choice, the one that makes the bound tight at the JS optimum.

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = f(x_j, y_i)``. Not modified.

    Returns
    -------
    numpy.ndarray, shape (B,)
        ``-inf`` if the exponential term overflows float64 or the value is below -1.8e308,
        as for NWJ.

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a finite 3-D array of square (K, K) batches with ``K >= 2``.
        Positives whose sum overflows are averaged without overflow (a value below
        -1.8e308 is ``-inf``, as documented above).

    Examples
    --------
    >>> np.round(js_bound(np.zeros((1, 3, 3))), 6)  # 1 + 0 - e^0
    array([0.])
    """
    F = _check_scores(scores)
    K = F.shape[-1]
    joint = 1.0 + _positive_mean(F)
    with np.errstate(over="ignore"):
        return joint - np.exp(_lse(_off_diagonal(F), axis=(1, 2)) - math.log(K * (K - 1)))


def _alpha_parts(F: np.ndarray, b: np.ndarray, alpha: float, *, weights: bool = True, loo=None):
    """L, A, w (with ``weights``; see :func:`interpolated_bound`), E, m, a, top. With
    ``p = log(alpha) + L``, ``q = log(1 - alpha) + b`` and ``e = exp(-|p - q|)``:
    ``A = logaddexp(p, q) = max(p, q) + log1p(e)``, ``w = exp(p - A) = σ(p - q)``."""
    L, E, m, a, top = _loo_log_means(F) if loo is None else loo
    log_alpha = math.log(alpha) if alpha > 0 else -math.inf
    log_1m = math.log1p(-alpha) if alpha < 1 else -math.inf
    p = log_alpha + L
    q = log_1m + b[..., :, None]
    d = p - q
    e = np.exp(-np.abs(d))
    A = np.maximum(p, q)
    A += np.log1p(e)
    if not weights:
        return L, A, None, E, m, a, top
    w = np.where(d >= 0, 1.0, e)
    w /= 1.0 + e
    return L, A, w, E, m, a, top


def _check_alpha(alpha) -> float:
    a = as_real_scalar(alpha, "alpha")
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"alpha must be in [0, 1] (0: TUBA/NWJ end, 1: InfoNCE end); got {a}")
    return a


def interpolated_bound(scores, log_baseline, alpha: float) -> np.ndarray:
    r"""The interpolated bound :math:`I_\alpha` between NWJ/TUBA and InfoNCE.

    Poole et al. (2019) apply the multi-sample TUBA bound with the baseline

    .. math::

        a(y; x_{1:M}) = \alpha\, \frac1M \sum_{k=1}^{M} e^{f(x_k, y)}
        + (1 - \alpha)\, q(y), \qquad \alpha \in [0, 1],

    a mixture of InfoNCE's batch average and a fixed baseline :math:`q(y)` (here
    :math:`\log q(y_i)` is ``log_baseline``). From one batch of :math:`K` pairs, each pair
    :math:`j` is held out in turn as the independent sample of :math:`p(y)`, the other
    :math:`M = K - 1` candidates form the baseline, and everything is averaged:

    .. math::

        I_\alpha^{(b)} = 1 + \frac{1}{K(K-1)} \sum_{i \ne j}
        \left[ F_{ii} - \log a(y_i; x_{\ne j}) \right]
        - \frac{1}{K(K-1)} \sum_{i \ne j} \frac{e^{F_{ij}}}{a(y_i; x_{\ne i})},

    (batch index :math:`b` dropped). It is a lower bound for every critic and baseline.
    For :math:`\alpha > 0` each batch value is at most :math:`1 + \log((K-1)/\alpha)`
    (:func:`~infonce_lib.interpolated_bound_cap`), so a small :math:`\alpha` lifts
    InfoNCE's ceiling of :math:`\log K` while the batch average still tames the
    exponential term. At :math:`\alpha = 1` the second term is exactly 1 and :math:`I_1`
    is InfoNCE with :math:`K - 1` candidates averaged over the held-out pair; at
    :math:`\alpha = 0` it is :func:`tuba_bound` (and with ``log_baseline = 1``, NWJ).

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = f(x_j, y_i)``, ``K >= 3``. Not modified.
    log_baseline : float or array_like, shape (K,) or (B, K)
        :math:`\log q(y_i)` for each row.
    alpha : float
        The weight of the batch average, in ``[0, 1]``.

    Returns
    -------
    numpy.ndarray, shape (B,)
        ``-inf`` if, at small :math:`\alpha`, the exponential term overflows float64, or
        the value is below -1.8e308.

    Raises
    ------
    TypeError, ValueError
        As :func:`~infonce_lib.infonce_bound` for bad ``scores``; if ``K < 3``, ``alpha``
        is outside ``[0, 1]`` or ``log_baseline`` has the wrong shape; ``ValueError`` if
        the joint term is above 1.8e308. Terms whose sums overflow are averaged without
        overflow.

    Examples
    --------
    >>> from infonce_lib import nwj_bound
    >>> F = np.random.default_rng(1).normal(size=(3, 5, 5))
    >>> bool(np.allclose(interpolated_bound(F, 1.0, 0.0), nwj_bound(F)))
    True
    >>> bool(np.all(interpolated_bound(F, 0.0, 0.01) <= 1 + np.log(4 / 0.01)))
    True
    """
    F = _check_scores(scores)
    if F.shape[-1] < 3:
        raise ValueError(f"scores needs K >= 3 pairs per batch (a held-out pair); got {F.shape}")
    b = _check_log_baseline(log_baseline, F)
    values, _ = _interpolated(F, b, _check_alpha(alpha), grad=False)
    if not np.all(np.isfinite(values) | np.isneginf(values)):
        raise ValueError(
            "the joint term of the interpolated bound (the mean positive score minus the "
            "mean log-baseline mixture) overflowed float64; rescale the scores"
        )
    return values


def _interpolated(F: np.ndarray, b: np.ndarray, a: float, *, grad: bool, loo=None):
    """Unchecked I_alpha per batch and, with ``grad``, its gradient with respect to F
    (``loo``: the result of :func:`_loo_log_means` for F, if already computed)."""
    F = np.ascontiguousarray(F)  # the flat indices of _loo_log_means address C order
    K = F.shape[-1]
    idx = np.arange(K)
    with np.errstate(over="ignore", invalid="ignore"):  # NaN is caught by the callers
        L, A, w, E, m, col, top = _alpha_parts(F, b, a, weights=grad, loo=loo)
        pos = _diag(F)
        A_sum = A.sum(axis=-1) - _diag(A)  # sum over j != i of A_ij, per row i
        joint = ((K - 1) * pos.sum(axis=-1) - A_sum.sum(axis=-1)) / (K * (K - 1))
        bad = ~np.isfinite(joint)
        if bad.any():  # sums near 1.8e308 overflowed: the same mean of pos minus that of A
            joint[bad] = (_safe_mean(pos, axis=-1) - _off_diagonal_mean(A))[bad]
        ratio = np.exp(_diag(L) - _diag(A))  # (1/(K-1)) sum_{j != i} e^{F_ij} / a_ii
        values = 1.0 + joint - _safe_mean(ratio, axis=-1)
    if not grad:
        return values, None
    KK = K * (K - 1)
    with np.errstate(over="ignore", invalid="ignore"):
        # d joint / dF_ik = [k = i]/K - G_ik / (K (K-1)^2), G_ik = sum_{j not in {i,k}}
        # w_ij e^{F_ik - L_ij}; each row's argmax column is split off so no factor overflows.
        u = w * np.exp(m - L)
        u[..., idx, idx] = 0.0
        u.reshape(-1)[top] = 0.0
        G = E * (u.sum(axis=-1, keepdims=True) - u)  # E = e^{F - m}, from _loo_log_means
        L_top = L.reshape(-1)[top].reshape(col.shape)[..., None]
        w_top = w.reshape(-1)[top].reshape(col.shape)[..., None]
        extra = w_top * np.exp(F - L_top)
        extra.reshape(-1)[top] = 0.0
        extra[col == idx] = 0.0  # rows whose positive is the maximum: no such term
        G += extra
        dF = -G / (KK * (K - 1))
        dF[..., idx, idx] += 1.0 / K
        # d marginal / dF_ik = (1 - w_ii) e^{F_ik - A_ii} / (K (K-1)), k != i
        Mg = (1.0 - _diag(w))[..., None] * np.exp(F - _diag(A)[..., None]) / KK
        Mg[..., idx, idx] = 0.0
        dF -= Mg
    return values, dF


# ---------------------------------------------------------------- gradients for training
# Unchecked: clean float64 scores of shape (B, K, K); each returns (values, d values / dF).


def _grad_infonce(F, **_):
    K = F.shape[-1]
    lse = _lse(F, axis=-1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        values = math.log(K) + _safe_mean(_diag(F) - lse[..., 0], axis=-1)
        dF = np.exp(F - lse)
    dF *= -1.0 / K
    idx = np.arange(K)
    dF[..., idx, idx] += 1.0 / K
    return values, dF


def _grad_tuba_like(F, b):
    """TUBA with log-baseline b (shape (B, K)); NWJ is b = 1."""
    K = F.shape[-1]
    idx = np.arange(K)
    with np.errstate(over="ignore", invalid="ignore"):
        E = np.exp(F - b[..., :, None])
        E[..., idx, idx] = 0.0
        joint = _safe_mean(_diag(F) - b, axis=-1)
        values = 1.0 + joint - _off_diagonal_mean(E, E.sum(axis=(-2, -1)) / (K * (K - 1)))
    dF = E
    dF *= -1.0 / (K * (K - 1))
    dF[..., idx, idx] = 1.0 / K
    return values, dF


def _grad_nwj(F, **_):
    return _grad_tuba_like(F, np.ones(F.shape[:-1]))


def _grad_tuba(F, *, log_baseline, **_):
    return _grad_tuba_like(F, _check_log_baseline(log_baseline, F))


def _grad_dv(F, **_):
    K = F.shape[-1]
    off = _off_diagonal(F)
    lse = _lse(off, axis=(-2, -1), keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        values = _safe_mean(_diag(F), axis=-1) - lse[..., 0, 0] + math.log(K * (K - 1))
        dF = np.exp(off - lse)
    dF *= -1.0
    idx = np.arange(K)
    dF[..., idx, idx] = 1.0 / K
    return values, dF


def _grad_js(F, **_):
    K = F.shape[-1]
    idx = np.arange(K)
    pos = _diag(F)
    # softplus(±F) = max(±F, 0) + log1p(e) and sigmoid(±F), all from one e = exp(-|F|)
    e = np.exp(-np.abs(F))
    log1p_e = np.log1p(e)
    sp = np.maximum(F, 0.0) + log1p_e
    e_pos = _diag(e)
    with np.errstate(over="ignore", invalid="ignore"):
        sp_neg_pos = np.maximum(-pos, 0.0) + _diag(log1p_e)
        off = (sp.sum(axis=(-2, -1)) - _diag(sp).sum(axis=-1)) / (K * (K - 1))
        values = -_safe_mean(sp_neg_pos, axis=-1) - _off_diagonal_mean(sp, off)
    dF = np.where(F >= 0, 1.0, e)
    dF /= 1.0 + e
    dF *= -1.0 / (K * (K - 1))
    dF[..., idx, idx] = np.where(pos >= 0, e_pos, 1.0) / (1.0 + e_pos) / K
    return values, dF


def _grad_alpha(F, *, log_baseline, alpha, **_):
    return _interpolated(F, _check_log_baseline(log_baseline, F), _check_alpha(alpha), grad=True)


_GRADS: dict[str, Callable] = {
    "infonce": _grad_infonce,
    "nwj": _grad_nwj,
    "dv": _grad_dv,
    "tuba": _grad_tuba,
    "js": _grad_js,
    "alpha": _grad_alpha,
}


def bound_and_score_grad(
    scores, estimator: str, *, log_baseline=None, alpha: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""A training objective per batch and its gradient with respect to the scores.

    Each estimator's critic is trained by gradient ascent on its own objective (Poole et
    al., 2019, section 4): the bound itself for ``"infonce"``
    (:func:`~infonce_lib.infonce_bound`), ``"nwj"``
    (:func:`~infonce_lib.nwj_bound`), ``"dv"`` (:func:`dv_bound`), ``"tuba"``
    (:func:`tuba_bound`) and ``"alpha"`` (:func:`interpolated_bound`), and the
    Jensen–Shannon objective :func:`js_objective` for ``"js"``. The gradient
    :math:`\partial v_b / \partial F_{bij}` is analytic; back-propagate it through the
    critic. For ``"dv"`` it is the gradient of the biased batch value (MINE corrects it
    with a moving average; this does not).

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = f(x_j, y_i)``. Not modified.
    estimator : {"infonce", "nwj", "dv", "tuba", "js", "alpha"}
    log_baseline : float or array_like, shape (K,) or (B, K), optional
        :math:`\log a(y_i)`; required for ``"tuba"`` and ``"alpha"``.
    alpha : float, optional
        Required for ``"alpha"``.

    Returns
    -------
    values : numpy.ndarray, shape (B,)
        The objective of each batch (``-inf`` where an exponential term overflows or the
        objective is below -1.8e308).
    grad : numpy.ndarray, shape (B, K, K)
        Its gradient with respect to that batch's scores.

    Raises
    ------
    TypeError, ValueError
        On bad scores, an unknown ``estimator`` or a missing ``log_baseline``/``alpha``;
        ``ValueError`` if a batch's objective is NaN or above 1.8e308, or the gradient
        overflows float64 (scores near ±1.8e308, or :math:`e^{F}` beyond float64). Terms
        whose sums overflow are averaged without overflow.

    Examples
    --------
    The InfoNCE gradient of a row sums to zero (a constant added to a row cancels):

    >>> F = np.random.default_rng(0).normal(size=(1, 4, 4))
    >>> v, g = bound_and_score_grad(F, "infonce")
    >>> bool(np.allclose(g.sum(axis=-1), 0.0))
    True
    """
    if estimator not in _GRADS:
        raise ValueError(f"estimator must be one of {sorted(_GRADS)}; got {estimator!r}")
    F = _check_scores(scores)
    kwargs = {}
    if estimator in ("tuba", "alpha"):
        if log_baseline is None:
            raise ValueError(f"estimator {estimator!r} needs log_baseline (log a(y_i))")
        kwargs["log_baseline"] = log_baseline
    if estimator == "alpha":
        if alpha is None:
            raise ValueError("estimator 'alpha' needs alpha in [0, 1]")
        if F.shape[-1] < 3:
            raise ValueError(f"scores needs K >= 3 pairs for estimator 'alpha'; got {F.shape}")
        kwargs["alpha"] = alpha
    values, grad = _GRADS[estimator](F, **kwargs)
    if np.isnan(values).any() or np.isposinf(values).any():
        raise ValueError(
            f"the {estimator} objective of a batch is not representable in float64 (above "
            "1.8e308, or an infinite term met another of the opposite sign: scores near "
            "±1.8e308); rescale the scores"
        )
    if not np.isfinite(grad).all():
        raise ValueError(
            f"the gradient of the {estimator} objective with respect to the scores overflowed "
            "float64 (e^scores too large); rescale the scores"
        )
    return values, grad


# ------------------------------------------------------ the optimal critic on a Gaussian


def correlated_gaussian_log_ratio(X, Y, rho: float) -> np.ndarray:
    r"""The log density ratio :math:`\log p(y \mid x) / p(y)` for every pairing in a batch.

    For the correlated Gaussian of :func:`~infonce_lib.sample_correlated_gaussian`
    (:math:`y \sim \mathcal{N}(0, I_d)` marginally),

    .. math::

        F_{ij} = \log p(y_i \mid x_j) + \frac{d}{2}\log(2\pi) + \frac{\lVert y_i \rVert^2}{2},

    the critic that is optimal for DV and JS (and, plus 1, for NWJ); its mean on the
    positives is the information. Built on
    :func:`~infonce_lib.correlated_gaussian_critic`.

    Parameters
    ----------
    X, Y : array_like, shape (..., K, d)
        Pairs drawn with correlation ``rho``.
    rho : float
        The correlation, :math:`|\rho| < 1`.

    Returns
    -------
    numpy.ndarray, shape (..., K, K)

    Raises
    ------
    TypeError, ValueError
        As :func:`~infonce_lib.correlated_gaussian_critic`.

    Examples
    --------
    Independent coordinates (:math:`\rho = 0`) carry no information: the ratio is 1.

    >>> X, Y = np.ones((2, 3)), np.zeros((2, 3))
    >>> np.round(correlated_gaussian_log_ratio(X, Y, 0.0), 12) + 0.0
    array([[0., 0.],
           [0., 0.]])
    """
    F = correlated_gaussian_critic(X, Y, rho)
    Yv = np.asarray(Y, dtype=np.float64)
    d = Yv.shape[-1]
    log_py = -0.5 * d * math.log(2.0 * math.pi) - 0.5 * np.einsum("...id,...id->...i", Yv, Yv)
    return F - log_py[..., :, None]


def optimal_critic_estimates(
    information: float,
    *,
    dim: int = 20,
    batch_size: int = 64,
    n_batches: int = 200,
    alpha: float = 0.01,
    seed=0,
    estimators=ESTIMATORS,
) -> dict[str, np.ndarray]:
    r"""Each estimator of the staircase with its optimal critic plugged in (no training).

    On ``n_batches`` fresh batches of the ``dim``-dimensional correlated Gaussian whose
    information is ``information`` nats (the setting of Poole et al., 2019), with
    :math:`r = p(y \mid x)/p(y)` from :func:`correlated_gaussian_log_ratio`:

    - ``"infonce"``: :func:`~infonce_lib.infonce_bound` of :math:`\log r`;
    - ``"nwj"``: :func:`~infonce_lib.nwj_bound` of :math:`1 + \log r`;
    - ``"dv"``: :func:`dv_bound` of :math:`\log r`;
    - ``"js"``: :func:`js_bound` of :math:`\log r` (the JS optimum, shifted inside), which
      is NWJ at :math:`1 + \log r` again;
    - ``"alpha"``: :func:`interpolated_bound` of :math:`\log r` with the constant baseline
      :math:`a = 1` (``log_baseline = 0``), tight at :math:`\alpha = 0` and InfoNCE-like
      at :math:`\alpha = 1`. (Adding the same :math:`c(y)` to the critic and to
      :math:`\log a(y)` leaves :math:`I_\alpha` unchanged, so this is also the critic
      :math:`\log p(y \mid x)` with the baseline :math:`p(y)`.)

    The spread over batches is each estimator's own noise; the mean minus the information
    is its bias at the best critic. These are those functions' values (the tests compare),
    with shared work: one log-mean of :math:`r` for DV, JS and NWJ; InfoNCE's normalisers
    from the row sums behind :math:`I_\alpha`.

    Parameters
    ----------
    information : float
        The true :math:`I \ge 0` in nats.
    dim, batch_size, n_batches : int
        :math:`d \ge 1`, :math:`K \ge 3`, at least 2 batches.
    alpha : float
        The interpolation weight of ``"alpha"``, in ``[0, 1]``.
    seed : int or numpy.random.Generator
        Explicit source of randomness.
    estimators : sequence of str, default :data:`ESTIMATORS`
        The estimators to compute (a non-empty subset of :data:`ESTIMATORS`); the others'
        work is skipped, and each value is the one the full call gives on the same batches.

    Returns
    -------
    dict of str to numpy.ndarray, shape (n_batches,)
        Keyed by the requested estimators, in the order of :data:`ESTIMATORS`.

    Raises
    ------
    TypeError, ValueError
        On a bad argument (named in the message).

    Examples
    --------
    With a batch of 64, InfoNCE already falls short of 2 nats; the others do not:

    >>> est = optimal_critic_estimates(2.0, n_batches=50, seed=0)
    >>> {k: round(float(v.mean()), 1) for k, v in est.items()}
    {'infonce': 1.8, 'nwj': 2.0, 'dv': 2.0, 'js': 2.0, 'alpha': 2.0}
    """
    info = as_positive_scalar(information, "information", allow_zero=True)
    d = as_int(dim, "dim", minimum=1)
    K = as_int(batch_size, "batch_size", minimum=3)
    n = as_int(n_batches, "n_batches", minimum=2)
    a = _check_alpha(alpha)
    want = as_name_subset(estimators, "estimators", ESTIMATORS)
    rng = as_generator(seed)
    rho = correlated_gaussian_rho(info, d)
    X, Y = sample_correlated_gaussian(n * K, rho, d, rng)
    X, Y = X.reshape(n, K, d), Y.reshape(n, K, d)
    R = correlated_gaussian_log_ratio(X, Y, rho)
    out = {}
    if want & {"nwj", "dv", "js"}:
        log_mean = _lse(_off_diagonal(R), axis=(1, 2)) - math.log(K * (K - 1))
        pos = _diag(R).mean(axis=-1)
        js = (1.0 + pos) - np.exp(log_mean)  # the expressions of dv_bound and js_bound
        finite_or_raise(js, "the estimates of the optimal critic")
        # NWJ(1 + log r) = 1 + mean log r_ii - mean_{i != j} r_ij: JS's value
        out.update(nwj=js.copy(), dv=pos - log_mean, js=js)
    if want & {"infonce", "alpha"}:
        loo = _loo_log_means(R)
    if "alpha" in want:
        alpha_values, _ = _interpolated(R, np.zeros(R.shape[:-1]), a, grad=False, loo=loo)
        out["alpha"] = finite_or_raise(alpha_values, "the estimates of the optimal critic")
    if "infonce" in want:
        row_lse = loo[2][..., 0] + np.log(loo[1].sum(axis=-1))  # log sum_j r_ij = m + log S
        out["infonce"] = math.log(K) + (_diag(R) - row_lse).mean(axis=-1)  # as infonce_bound
    return {k: out[k] for k in ESTIMATORS if k in want}
