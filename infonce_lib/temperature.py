r"""Temperature: the cap that a bounded critic puts on InfoNCE, and what the temperature does.

A cosine critic scores :math:`f(x, y) = s(x, y) / \tau = \beta\, s(x, y)` with
:math:`s \in [-1, 1]` and :math:`\beta = 1/\tau`. The positive scores at most :math:`\beta`
and every negative at least :math:`-\beta`, so each term of :math:`I_{\mathrm{NCE}}` is at most

.. math::

    \log K - \log\big(1 + (K - 1)\, e^{-2/\tau}\big),

whatever the encoder (:func:`cosine_cap`, the score-range cap: it holds for any scores in
:math:`[-1, 1]`). Unit-norm embeddings cannot reach it once :math:`K \ge 3`: their cap,
:func:`attainable_cosine_cap`, replaces the gap 2 by :math:`K/(K-1)` and is attained by a
regular simplex. For fixed scores, :math:`I_{\mathrm{NCE}}(\beta)` is
a linear term minus a log-sum-exp of linear terms, hence concave in :math:`\beta`: its second
derivative is minus a softmax-weighted variance (:func:`infonce_beta_derivatives`), so any
local maximum is the global one (:func:`best_temperature`). If some negative outscores its
positive, the bound falls without limit as :math:`\beta \to \infty`, with slope tending to
minus the hardest-negative triplet loss.

The temperature also decides how the gradient's push is shared among the negatives (the
softmax weights, :func:`softmax_weights`), and as :math:`\tau \to 0` the scaled loss
:math:`\tau \mathcal{L}` (:func:`tau_scaled_loss`) tends to a zero-margin triplet loss on the
hardest negative (:func:`hardest_negative_triplet_loss`). Hadsell, Chopra & LeCun's (2006)
"contrastive loss" (:func:`hadsell_contrastive_loss`) is a margin loss of another kind: on
pairs, with no softmax and no temperature.

Shapes. Cosine scores come in batches, ``cosines[b, i, j]`` :math:`= s(x_j, y_i)` with shape
``(B, K, K)``, positives on the diagonal, the softmax over the candidates :math:`x_j` (the
last axis; Poole et al., 2019), as in :mod:`infonce_lib.bounds`. Every function
needs :math:`K \ge 2` (a batch of one has no negative) and scores in :math:`[-1, 1]` (up to
round-off of :math:`10^{-12}`; never clipped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.special

from ._beta_objective import _BetaObjective
from ._concave_search import _geometric_middle, _newton_search
from ._validation import (
    as_bool,
    as_int,
    as_positive_scalar,
    as_real_array,
    as_sequence,
    check_same_shape,
    finite_or_raise,
)
from .core import _safe_mean

# The cosine checks and margins are shared with the two margin losses in losses.py.
from .margin_losses import _check_cosines, _positive_margins

__all__ = [
    "BETA_BOUNDS",
    "BestTemperature",
    "BetaDerivatives",
    "best_temperature",
    "cosine_scores",
    "infonce_at_beta",
    "infonce_beta_derivatives",
    "positive_margins",
    "softmax_weights",
    "tau_scaled_loss",
]


class _BetaInterval(NamedTuple):
    r"""The default search interval of :func:`~infonce_lib.best_temperature`:
    :math:`\beta = 1/\tau` from ``low`` = 0.5 to ``high`` = 500, that is :math:`\tau` from
    0.002 to 2; the experiments of chapters 3 and 6 search it too. A pair of floats (a named
    tuple: ``BETA_BOUNDS[0]``, ``BETA_BOUNDS.low`` and ``low, high = BETA_BOUNDS`` all work).
    When the best :math:`\beta` is one of its ends, ``BestTemperature.at_end`` says so."""

    low: float
    high: float


BETA_BOUNDS = _BetaInterval(0.5, 500.0)

# The search of best_temperature: Newton stops when its step is at most _BETA_RTOL * beta;
# with _WARM_FRACTION * _WARM_MIN_ROWS rows or more, a search on the first 1/_WARM_FRACTION
# of the rows, to _WARM_RTOL, gives the starting point.
_BETA_RTOL = 1e-6
_WARM_FRACTION = 16
_WARM_MIN_ROWS = 256
_WARM_RTOL = 1e-2


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


def _without_positives(S: np.ndarray) -> np.ndarray:
    """A copy of ``S`` with every positive (the diagonal) set to ``-inf``, by index."""
    K = S.shape[-1]
    idx = np.arange(K)
    N = S.copy()
    N[..., idx, idx] = -np.inf
    return N


# ---------------------------------------------------------------- I_NCE(beta)


def infonce_at_beta(cosines, beta: float) -> np.ndarray:
    r"""InfoNCE of the cosine critic :math:`f = \beta s` as a function of :math:`\beta = 1/\tau`.

    .. math::

        I_{\mathrm{NCE}}^{(b)}(\beta) = \log K + \frac1K \sum_i
        \Big(\beta S_{bii} - \log \sum_j e^{\beta S_{bij}}\Big),

    the softmax over the candidates :math:`x_j` (Poole et al., 2019). Concave in
    :math:`\beta` (:func:`infonce_beta_derivatives`); each batch value is at most
    :func:`cosine_cap` ``(K, 1/beta)``.

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores :math:`S_{bij} \in [-1, 1]` (:func:`cosine_scores`). Not modified.
    beta : float
        Inverse temperature :math:`\beta > 0`.

    Returns
    -------
    numpy.ndarray, shape (B,)
        One value per batch, without overflow wherever it is in the float64 range.

    Raises
    ------
    TypeError, ValueError
        If ``cosines`` is not a finite (B, K, K) array in [-1, 1] with ``K >= 2``, or
        ``beta`` is not finite and positive; ``ValueError`` if a batch's value is below
        -1.8e308 (:math:`\beta` times its mean gap :math:`\max_j S_{bij} - S_{bii}` is).

    Examples
    --------
    >>> S = np.array([[[1.0, -1.0], [-1.0, 1.0]]])
    >>> float(np.round(infonce_at_beta(S, 2.0)[0], 6))  # equals the cap at tau = 1/2
    0.674997
    >>> from infonce_lib import cosine_cap
    >>> round(cosine_cap(2, 0.5), 6)
    0.674997
    """
    S = _check_cosines(cosines)
    b = as_positive_scalar(beta, "beta")
    return _finite_in_beta(_BetaObjective(S).batch_values(b), b)


def _finite_in_beta(values: np.ndarray, beta: float) -> np.ndarray:
    """``values``, or a ``ValueError`` naming ``beta`` if the bound fell below float64."""
    return finite_or_raise(
        values,
        f"InfoNCE at beta = {beta:g} (beta times a score gap)",
        "use a smaller beta (the bound is below -1.8e308 there)",
    )


class BetaDerivatives(NamedTuple):
    r"""The result of :func:`infonce_beta_derivatives`: per batch, shape (B,) each.

    Attributes
    ----------
    value : numpy.ndarray
        :math:`I_{\mathrm{NCE}}(\beta)`, as :func:`infonce_at_beta`.
    first : numpy.ndarray
        :math:`\mathrm{d}I_{\mathrm{NCE}}/\mathrm{d}\beta`.
    second : numpy.ndarray
        :math:`\mathrm{d}^2 I_{\mathrm{NCE}}/\mathrm{d}\beta^2`, always :math:`\le 0`.

    Examples
    --------
    >>> d = infonce_beta_derivatives(np.array([[[0.9, 0.1], [0.2, 0.8]]]), 5.0)
    >>> d.value.shape, bool(d.second[0] <= 0)
    ((1,), True)
    """

    value: np.ndarray
    first: np.ndarray
    second: np.ndarray


def infonce_beta_derivatives(cosines, beta: float) -> BetaDerivatives:
    r"""InfoNCE of a cosine critic and its first two derivatives in :math:`\beta = 1/\tau`.

    With :math:`p_{ij} = e^{\beta S_{ij}} / \sum_k e^{\beta S_{ik}}` (the softmax over the
    candidates of row :math:`i`) and :math:`\bar S_i = \sum_j p_{ij} S_{ij}`, differentiating
    :func:`infonce_at_beta` gives, per batch,

    .. math::

        \frac{\mathrm{d} I_{\mathrm{NCE}}}{\mathrm{d}\beta}
        &= \frac1K \sum_i \big(S_{ii} - \bar S_i\big), \\
        \frac{\mathrm{d}^2 I_{\mathrm{NCE}}}{\mathrm{d}\beta^2}
        &= -\frac1K \sum_i \sum_j p_{ij} \big(S_{ij} - \bar S_i\big)^2 \;\le\; 0 .

    The second derivative is minus the softmax-weighted variance of each row's scores,
    averaged: :math:`I_{\mathrm{NCE}}` is concave in :math:`\beta` (the derivative of a
    log-sum-exp is the softmax mean, that of the mean is the variance). It is computed in
    its centred form, a sum of non-negative terms, so the sign holds exactly in floating
    point too. As :math:`\beta \to \infty` the first derivative tends to
    :math:`\frac1K \sum_i (S_{ii} - \max_j S_{ij})`, minus
    :func:`hardest_negative_triplet_loss`: negative, and the bound falls without limit, as
    soon as one negative outscores its positive.

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1]. Not modified.
    beta : float
        :math:`\beta > 0`.

    Returns
    -------
    BetaDerivatives
        ``value``, ``first``, ``second``, each of shape (B,).

    Raises
    ------
    TypeError, ValueError
        As :func:`infonce_at_beta` (the derivatives are finite for every ``beta``).

    Examples
    --------
    One row whose negative (0.5) beats its positive (0.2), one whose positive wins: the
    slope tends to the mean of 0.2 - 0.5 and 0, that is -0.15.

    >>> S = np.array([[[0.2, 0.5], [-0.3, 0.9]]])
    >>> d = infonce_beta_derivatives(S, 3.0)
    >>> float(d.second[0]) <= 0.0
    True
    >>> round(float(infonce_beta_derivatives(S, 1e4).first[0]), 6)
    -0.15
    """
    S = _check_cosines(cosines)
    b = as_positive_scalar(beta, "beta")
    value, first, second = _BetaObjective(S).derivatives(b)
    return BetaDerivatives(_finite_in_beta(value, b), first, second)


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
        Number of evaluations of the mean bound with its first two derivatives (one pass
        over the scores each), those of the warm start on a 16th of the rows included.
    at_end : bool
        True when :math:`\\beta^\\star` is an end of the search interval and the slope there
        points out of it (``slope >= 0`` at the upper end, ``<= 0`` at the lower): the
        answer is then the interval's end, not a stationary point, and the maximiser over
        all :math:`\\beta > 0` lies beyond it or does not exist (see
        :func:`best_temperature` for when it exists). False for an interior maximum.
    slope : float
        The mean :math:`\\mathrm{d}I_{\\mathrm{NCE}}/\\mathrm{d}\\beta` at :math:`\\beta^\\star`:
        about 0 inside the interval; its sign at an end says which way the bound still rises.

    Examples
    --------
    >>> S = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.7, 0.4], [0.3, 0.6]]])
    >>> best = best_temperature(S)
    >>> round(best.tau * best.beta, 12), best.infonce <= 0.6932, best.at_end
    (1.0, True, True)
    """

    tau: float
    beta: float
    infonce: float
    evaluations: int
    at_end: bool
    slope: float


def best_temperature(cosines, beta_bounds: tuple[float, float] = BETA_BOUNDS) -> BestTemperature:
    r"""The temperature that maximises the mean InfoNCE of a fixed cosine critic.

    .. math::

        \beta^\star = \operatorname*{arg\,max}_{\beta \in [\beta_{\min}, \beta_{\max}]}
        \frac1B \sum_b I_{\mathrm{NCE}}^{(b)}(\beta), \qquad \tau^\star = 1/\beta^\star,

    by Newton's method on the slope, with the exact first and second derivatives of
    :func:`infonce_beta_derivatives`. The objective is concave in :math:`\beta`, so the
    slope falls and a point where it vanishes is the global maximum (an end of the interval
    if the slope keeps one sign there: ``at_end``). Newton's step is
    :math:`\beta \leftarrow \beta - I'(\beta)/I''(\beta)` while the slope is positive, and
    the same step in :math:`\log\beta` once it is negative (there the step in
    :math:`\beta` overshoots far to the left, as the slope flattens at large
    :math:`\beta`). The root stays bracketed: a step that leaves the bracket, or that does
    not halve, is replaced by the geometric middle of the bracket (or an end of the interval
    not yet evaluated), as in safeguarded Newton root finders (Press et al., *Numerical
    Recipes*, ``rtsafe``). The search stops at an evaluated :math:`\beta` whose Newton step
    is below :math:`10^{-6}\beta`; convergence is quadratic, so it is then that close to
    :math:`\beta^\star` and the bound within about :math:`|I''|(10^{-6}\beta)^2/2` of its
    maximum. With 4096 rows (:math:`BK`) or more, a search on the first 16th of the rows to
    1% gives the starting point, so that the whole set needs three or four evaluations;
    otherwise it starts at :math:`\sqrt{\beta_{\min}\beta_{\max}}`. Each evaluation is one
    pass over the scores (one exponential per score) for the value and both derivatives.

    When the maximum is interior. Let :math:`\bar g` be the mean over all rows of the gaps
    :math:`S_{ii} - \frac{1}{K-1}\sum_{j \ne i} S_{ij}` (:func:`~infonce_lib.mean_gaps`) and
    :math:`T` the mean :func:`~infonce_lib.hardest_negative_triplet_loss`. At
    :math:`\beta = 0` the softmax is uniform, :math:`\bar S_i = \frac1K \sum_j S_{ij}`, so the
    slope of :func:`infonce_beta_derivatives` is :math:`\frac{K-1}{K}\bar g`; as
    :math:`\beta \to \infty` it tends to :math:`-T`. Unless every row's scores are all equal
    (then the bound is 0 for every :math:`\beta`), the second derivative is negative
    everywhere, so the slope falls strictly from the first value to the second, and the mean
    bound has a maximiser in :math:`(0, \infty)` if and only if :math:`\bar g > 0` and
    :math:`T > 0`; it is then unique. If :math:`\bar g \le 0` the bound falls from
    :math:`\beta = 0` on (best :math:`\tau \to \infty`); if :math:`T = 0` it rises for ever
    (best :math:`\tau \to 0`). A beaten positive alone is not enough: the scores
    ``[[0, 0.5], [0.1, 0.2]]`` have one (:math:`T = 0.25`) but :math:`\bar g = -0.2`. These
    two slopes are the first-order terms of Wang & Liu's (2021) limits of the loss as
    :math:`\tau \to 0^+` (a triplet loss on the nearest negative) and :math:`\tau \to \infty`
    (a loss linear in the scores). On the interval, the answer is an end exactly when the
    slope there points outwards (not positive at ``low``, not negative at ``high``), and
    ``at_end`` says so. That is a statement about the interval, not only about
    :math:`\bar g` and :math:`T`: with :math:`\bar g > 0` and :math:`T > 0` the maximiser
    exists but may lie outside it. Dividing every score by :math:`c` multiplies
    :math:`\beta^\star` by :math:`c` (:math:`\beta` enters only through :math:`\beta S`);
    that scaling is all this says (it is not a claim about batches whose scores merely lie
    close together): the interior example below, divided by 3000, has
    :math:`\beta^\star \approx 2.0 \times 10^4`, and on the default interval ``at_end`` is
    True with a positive slope at 500.

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1].
    beta_bounds : (float, float), default ``BETA_BOUNDS`` = (0.5, 500)
        The search interval for :math:`\beta`, ``0 < low < high``.

    Returns
    -------
    BestTemperature
        :math:`\tau^\star`, :math:`\beta^\star`, the mean bound there, the number of
        evaluations, whether the answer is an end of the interval (``at_end``) and the slope
        there.

    Raises
    ------
    TypeError, ValueError
        If ``cosines`` is invalid (see :func:`infonce_at_beta`) or the bounds are not
        ``0 < low < high``.

    Examples
    --------
    With every positive at 0.9 and every negative at 0.1 no positive is beaten (:math:`T =
    0`): the bound rises with :math:`\beta` all the way, and the answer is the upper end:

    >>> S = np.full((2, 4, 4), 0.1) + 0.8 * np.eye(4)
    >>> best = best_temperature(S, (0.5, 5.0))
    >>> round(best.beta, 3), round(best.infonce, 4), best.at_end, best.slope > 0
    (5.0, 1.3328, True, True)

    A positive mean gap and a beaten positive (row 1): the maximum is interior, and the slope
    vanishes there:

    >>> S = np.array([[[0.9, 0.5, 0.1], [0.2, 0.3, 0.4], [0.0, 0.2, 0.8]]])
    >>> best = best_temperature(S)
    >>> round(best.beta, 4), abs(best.slope) < 1e-9, best.at_end
    (6.7627, True, False)

    The same scores divided by 3000: the same signs of :math:`\bar g` and :math:`T`, but the
    maximiser lies beyond the default interval, and a wider one finds it:

    >>> far = best_temperature(S / 3000)
    >>> far.beta, far.at_end, far.slope > 0
    (500.0, True, True)
    >>> wide = best_temperature(S / 3000, (0.5, 1e5))
    >>> round(wide.beta / best.beta), wide.at_end
    (3000, False)

    A beaten positive but a negative mean gap: the bound falls from the start, and the answer
    is the lower end:

    >>> best = best_temperature(np.array([[[0.0, 0.5], [0.1, 0.2]]]))
    >>> best.beta, best.at_end, best.slope < 0
    (0.5, True, True)
    """
    S = _check_cosines(cosines)
    beta_bounds = as_sequence(beta_bounds, "beta_bounds")
    if len(beta_bounds) != 2:
        raise ValueError(f"beta_bounds must be (low, high); got {beta_bounds!r}")
    lo = as_positive_scalar(beta_bounds[0], "beta_bounds[0]")
    hi = as_positive_scalar(beta_bounds[1], "beta_bounds[1]")
    if not lo < hi:
        raise ValueError(f"beta_bounds must satisfy low < high; got {beta_bounds!r}")
    return _best_beta(_BetaObjective(S), lo, hi)


def _best_beta(objective: _BetaObjective, lo: float, hi: float) -> BestTemperature:
    """The maximiser of the mean bound over ``[lo, hi]``: Newton, warm-started on a part.

    With at least ``_WARM_MIN_ROWS * _WARM_FRACTION`` rows the search first runs, to a loose
    tolerance, on the first ``1/_WARM_FRACTION`` of the rows (a 16th of the cost per
    evaluation), and starts the full search where that one ended; otherwise it starts at the
    geometric middle of the interval. The full search's last evaluation is at the returned
    ``beta`` and stays remembered by ``objective``.
    """
    start, warm = _geometric_middle(lo, hi), 0
    rows = objective.D.shape[0] // _WARM_FRACTION
    if rows >= _WARM_MIN_ROWS:
        start, _, warm = _newton_search(
            lambda b: objective.mean_derivatives(b, rows), lo, hi, start, _WARM_RTOL
        )

    def whole(b):
        value, first, second = objective.derivatives(b)
        return float(_safe_mean(value)), float(first.mean()), float(second.mean())

    beta, value, n = _newton_search(whole, lo, hi, start, _BETA_RTOL)
    slope = whole(beta)[1]  # remembered by the objective: no new pass over the scores
    at_end = (beta == hi and slope >= 0.0) or (beta == lo and slope <= 0.0)
    return BestTemperature(1.0 / beta, beta, value, warm + n, bool(at_end), slope)


# ---------------------------------------------------------------- how tau shares the push


def softmax_weights(cosines, tau: float, *, negatives_only: bool = False) -> np.ndarray:
    r"""The softmax weights that temperature :math:`\tau` gives the candidates of each row.

    .. math::

        p_{bij} = \frac{e^{S_{bij}/\tau}}{\sum_k e^{S_{bik}/\tau}}, \qquad
        q_{bij} = \frac{e^{S_{bij}/\tau}}{\sum_{k \ne i} e^{S_{bik}/\tau}} \quad (j \ne i).

    The gradient of the loss pushes negative :math:`j` of anchor :math:`i` in proportion to
    :math:`p_{ij}` (chapter 2; van den Oord et al., 2018): the weights say how
    :math:`\tau` shares the push among the negatives. With ``negatives_only=True`` the
    positive is removed by index and the weights :math:`q` are renormalised over the
    :math:`K - 1` negatives (each row sums to 1; the diagonal is 0): the *share* of the push
    that each negative gets. Computed as ``scipy.special.softmax`` of
    :math:`(S - \max_j S)/\tau \le 0`, so any :math:`\tau > 0` is safe (as :math:`\tau \to 0`
    the weights tend to an equal split among each row's largest scores).

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1]. Not modified.
    tau : float
        :math:`\tau > 0`.
    negatives_only : bool, default False
        Renormalise over the negatives (positive excluded) instead of all candidates.

    Returns
    -------
    numpy.ndarray, shape (B, K, K)
        Non-negative weights; every row sums to 1.

    Raises
    ------
    TypeError, ValueError
        As :func:`infonce_at_beta`, or ``tau`` not finite and positive, or
        ``negatives_only`` not a bool (``TypeError``).

    Examples
    --------
    >>> S = np.array([[[0.9, 0.3, 0.1], [0.0, 0.8, 0.2], [0.1, 0.1, 0.7]]])
    >>> np.round(softmax_weights(S, 0.5)[0, 0], 4)
    array([0.6653, 0.2004, 0.1343])
    >>> np.round(softmax_weights(S, 0.5, negatives_only=True)[0, 0], 4)
    array([0.    , 0.5987, 0.4013])
    """
    S = _check_cosines(cosines)
    t = as_positive_scalar(tau, "tau")
    W = _without_positives(S) if as_bool(negatives_only, "negatives_only") else S.copy()
    W -= W.max(axis=-1, keepdims=True)  # <= 0; -inf stays -inf (the excluded positives)
    with np.errstate(over="ignore", under="ignore"):
        W /= t  # -inf where tau is so small that the ratio leaves float64: weight 0
        return scipy.special.softmax(W, axis=-1)


# ---------------------------------------------------------------- the limit tau -> 0


def positive_margins(cosines) -> np.ndarray:
    r"""How far each positive beats its hardest negative: :math:`S_{ii} - \max_{j \ne i} S_{ij}`.

    .. math::

        m_{bi} = S_{bii} - \max_{j \ne i} S_{bij}

    (the maximum over the negatives only, the positive excluded by index). A negative
    margin means some negative outscores its positive; then the bound of the critic
    :math:`\beta S` falls without limit as :math:`\beta \to \infty`
    (:func:`infonce_beta_derivatives`).

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1]. Not modified.

    Returns
    -------
    numpy.ndarray, shape (B, K)
        One margin per row, in :math:`[-2, 2]`.

    Raises
    ------
    TypeError, ValueError
        As :func:`infonce_at_beta`.

    Examples
    --------
    >>> positive_margins([[[0.2, 0.5], [-0.3, 0.9]]])
    array([[-0.3,  1.2]])
    """
    return _positive_margins(_check_cosines(cosines))


def tau_scaled_loss(cosines, tau: float) -> np.ndarray:
    r"""The InfoNCE loss times the temperature, :math:`\tau \mathcal{L}`, one value per batch.

    .. math::

        \tau \mathcal{L}_b &= \frac1K \sum_i \Big(\tau \log \sum_j e^{S_{bij}/\tau}
        - S_{bii}\Big) \\
        &= \frac1K \sum_i \Big(M_{bi} - S_{bii}
        + \tau \log \sum_j e^{(S_{bij} - M_{bi})/\tau}\Big),

    with :math:`M_{bi} = \max_j S_{bij}`. The last term lies in :math:`[0, \tau \log K]`,
    so

    .. math::

        T_b \;\le\; \tau \mathcal{L}_b \;\le\; T_b + \tau \log K, \qquad
        \lim_{\tau \to 0} \tau \mathcal{L}_b = T_b ,

    the :func:`hardest_negative_triplet_loss`. Computed in the second form (a log-sum-exp of
    non-positive numbers divided by :math:`\tau`, each row's maximum already subtracted), so
    tiny :math:`\tau` is exact and warning-free;
    :math:`\tau \mathcal{L} = \tau(\log K - I_{\mathrm{NCE}})`.

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1]. Not modified.
    tau : float
        :math:`\tau > 0`.

    Returns
    -------
    numpy.ndarray, shape (B,)
        Non-negative values.

    Raises
    ------
    TypeError, ValueError
        As :func:`infonce_at_beta`, or ``tau`` not finite and positive.

    Examples
    --------
    >>> S = np.array([[[0.2, 0.5], [-0.3, 0.9]]])
    >>> [round(float(tau_scaled_loss(S, t)[0]), 6) for t in (1.0, 0.01, 1e-4)]
    [0.558819, 0.15, 0.15]
    """
    S = _check_cosines(cosines)
    t = as_positive_scalar(tau, "tau")
    objective = _BetaObjective(S)
    with np.errstate(under="ignore", over="ignore"):
        spread = t * objective.log_denominators_at_tau(t)  # tiny tau: underflows to 0
    with np.errstate(over="ignore"):
        out = (spread - objective.pos).mean(axis=-1)  # -pos = max_j S_ij - S_ii >= 0
    return finite_or_raise(out, f"tau * L at tau = {t:g}", "use a smaller tau")
