r"""High-confidence lower bounds on mutual information: distribution-free, and within a family.

Chapter 5 of the book. A lower bound that holds *with probability* :math:`1 - \delta` over
the sample, rather than in expectation, comes in two kinds here, one for each hypothesis of
McAllester & Stratos's (2020) ceiling:

* **Distribution-free, and capped at log K** (:func:`infonce_confidence_bound`). With a
  critic whose scores span at most ``M`` in every row, every InfoNCE batch value lies in
  ``[a, log K]`` (:func:`infonce_value_range`), and Hoeffding's inequality turns the mean of
  ``n`` independent batches into a bound that holds for every joint distribution. It never
  passes ``log K``, however many batches are averaged.
* **Within a parametric family, and not capped** (:func:`correlated_gaussian_confidence_bound`).
  If the pairs are known to be correlated Gaussians, one correlation coefficient carries all
  the information, and Fisher's z-transformation bounds it from below: the bound can pass
  :math:`\ln N` by far, and it means nothing outside the family.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

from ._validation import (
    as_array,
    as_int,
    as_positive_scalar,
    as_real_array,
    as_real_scalar,
    check_same_shape,
)

__all__ = [
    "correlated_gaussian_confidence_bound",
    "infonce_confidence_bound",
    "infonce_value_range",
]


def _as_delta(delta) -> float:
    d = as_real_scalar(delta, "delta")
    if not 0.0 < d < 1.0:
        raise ValueError(f"delta must lie in (0, 1) (a failure probability); got {d}")
    return d


def _value_span(k: int, m: float) -> float:
    """:math:`\\log K - a = \\log(1 + (K - 1) e^M)`, without overflow."""
    return float(np.logaddexp(0.0, math.log(k - 1) + m))


# ---------------------------------------------------------------- distribution-free (Hoeffding)


def infonce_value_range(batch_size: int, score_range: float) -> tuple[float, float]:
    r"""The interval every InfoNCE batch value lies in when the scores span at most ``M``.

    If in every row :math:`\max_j f(x_j, y_i) - f(x_i, y_i) \le M` (for instance, scores
    clipped to an interval of width :math:`M`), each positive's softmax probability is at
    least :math:`1 / (1 + (K - 1) e^{M})` and at most 1, so the batch value
    :math:`\hat I_{\mathrm{NCE}} = \log K + \frac1K \sum_i \log p_i` (chapter 3's
    :func:`~infonce_lib.infonce_bound`) lies in

    .. math::

        \big[a, \log K\big], \qquad a = \log K - \log\big(1 + (K - 1)\, e^{M}\big) .

    The lower end is reached when every positive scores :math:`M` below all its negatives,
    the upper end only in the limit of negatives infinitely far below the positive.

    Parameters
    ----------
    batch_size : int
        :math:`K \ge 2`, the pairs per batch.
    score_range : float
        :math:`M \ge 0`, the largest amount by which a candidate's score can exceed the
        positive's in a row.

    Returns
    -------
    (float, float)
        :math:`(a, \log K)`, in nats.

    Raises
    ------
    TypeError, ValueError
        If ``batch_size`` is not an integer ``>= 2``, or ``score_range`` is negative or not
        finite.

    Examples
    --------
    >>> a, b = infonce_value_range(16, 4.0)
    >>> round(a, 4), round(b, 4), round(b - a, 4)   # b - a = log(1 + 15 e^4)
    (-3.9367, 2.7726, 6.7093)
    """
    k = as_int(batch_size, "batch_size", minimum=2)
    m = as_positive_scalar(score_range, "score_range", allow_zero=True)
    log_k = math.log(k)
    return log_k - _value_span(k, m), log_k


def _input_eps(values) -> float:
    """Machine epsilon of the caller's floating dtype (float64's for anything else)."""
    dtype = as_array(values, "values").dtype
    return float(np.finfo(dtype).eps) if dtype.kind == "f" else float(np.finfo(np.float64).eps)


def infonce_confidence_bound(values, batch_size: int, score_range: float, delta: float = 0.05):
    r"""A lower bound on :math:`I(X; Y)` that holds with probability at least :math:`1 - \delta`.

    ``values`` are the InfoNCE values of :math:`n` independent batches of :math:`K` pairs
    each (disjoint pairs, drawn i.i.d.), all scored by one critic :math:`f` fixed in
    advance (not fitted to these batches). Their expectation is a lower bound,
    :math:`\mathbb{E}[\hat I_{\mathrm{NCE}}] \le I(X; Y)` (chapter 3; van den Oord et al.,
    2018; Poole et al., 2019), but a single mean can land above it. If the critic's scores
    span at most :math:`M` within every row, every batch value lies in :math:`[a, \log K]`
    (:func:`infonce_value_range`), and Hoeffding's inequality for independent variables in
    :math:`[a, b]`, :math:`P(\bar V - \mathbb{E} V \ge t) \le e^{-2 n t^2 / (b - a)^2}`
    (Hoeffding, 1963, Theorem 2), gives

    .. math::

        B = \bar V - (\log K - a) \sqrt{\frac{\ln(1/\delta)}{2 n}}, \qquad
        P\big(B \le \mathbb{E} \hat I_{\mathrm{NCE}} \le I(X; Y)\big) \ge 1 - \delta ,

    for every joint distribution of :math:`(X, Y)`. :math:`B \le \bar V \le \log K`: the
    high-confidence bound is capped where InfoNCE is, however large :math:`n`. Both ends
    matter: the cap alone would not do, because a mean of variables bounded only above can
    exceed its expectation by any amount; the lower end :math:`a` needs the bounded critic.

    Parameters
    ----------
    values : array_like, shape (n,)
        InfoNCE values of ``n >= 1`` independent batches, in nats (e.g. from
        :func:`~infonce_lib.infonce_bound` on clipped scores), of any real dtype.
    batch_size : int
        :math:`K \ge 2`, the pairs per batch.
    score_range : float
        :math:`M \ge 0`, the largest amount by which a candidate's score can exceed the
        positive's in a row.
    delta : float, default 0.05
        The confidence parameter :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`B`, in nats, at most :math:`\log K`.

    Raises
    ------
    TypeError, ValueError
        If ``values`` is not a non-empty 1-D array of finite reals, or a value lies outside
        :math:`[a, \log K]` by more than rounding: the scores spanned more than
        ``score_range``, or ``batch_size`` is not the batches' size. Rounding is judged in
        the dtype of ``values`` (``4 eps (1 + log K + (log K - a))``, at least ``1e-9`` of
        that scale: a float32 value at the cap exceeds :math:`\log K` by up to half a float32
        ulp); values within it are moved onto the interval. Also on ``batch_size < 2``, a
        negative or non-finite ``score_range``, or ``delta`` outside ``(0, 1)``.

    Examples
    --------
    Values of 1000 batches of 16 pairs, scores within a range of 4 nats:

    >>> v = np.full(1000, 0.4)
    >>> round(infonce_confidence_bound(v, 16, 4.0, delta=0.05), 4)   # 0.4 - 6.7093 * 0.0387
    0.1403
    >>> infonce_confidence_bound(v, 16, 4.0) <= math.log(16)
    True
    >>> top = np.full(10, np.log(128), dtype=np.float32)   # float32 rounds log 128 up
    >>> infonce_confidence_bound(top, 128, 1.0) < math.log(128)
    True
    """
    eps = _input_eps(values)
    v = as_real_array(values, "values", ndim=1)
    lower, log_k = infonce_value_range(batch_size, score_range)
    d = _as_delta(delta)
    span = log_k - lower
    tol = max(4.0 * eps, 1e-9) * (1.0 + log_k + span)
    outside = (v > log_k + tol) | (v < lower - tol)
    if outside.any():
        raise ValueError(
            f"values must lie in [{lower:.6g}, log K = {log_k:.6g}] for batch_size = "
            f"{batch_size} and score_range = {score_range:g}; got {v[outside][0]!r}: the "
            "critic's scores spanned more than score_range, or the batches are not of "
            "batch_size pairs"
        )
    v = np.clip(v, lower, log_k)  # rounding of the caller's dtype, moved onto [a, log K]
    margin = span * math.sqrt(-math.log(d) / (2.0 * v.size))
    if not math.isfinite(margin):
        raise ValueError(
            f"score_range = {score_range:g} is too large: Hoeffding's margin overflows float64"
        )
    return float((v / v.size).sum() - margin)  # the mean, summed without overflow


# ---------------------------------------------------------------- within a family (Fisher)


def _log_cosh(z: np.ndarray) -> np.ndarray:
    """:math:`\\ln\\cosh z = |z| + \\ln(1 + e^{-2|z|}) - \\ln 2`, finite for every finite z."""
    a = np.abs(z)
    return a + np.log1p(np.exp(-2.0 * a)) - math.log(2.0)


def correlated_gaussian_confidence_bound(X, Y, delta: float = 0.05):
    r"""A lower bound on :math:`I(X; Y)` with confidence :math:`1 - \delta`, for Gaussians only.

    The family: each pair :math:`(x, y) \in \mathbb{R}^d \times \mathbb{R}^d` consists of
    :math:`d` independent coordinate pairs :math:`(x_k, y_k)`, all bivariate normal with
    mean zero, the same variances and one correlation :math:`\rho` (the pairs of
    :func:`~infonce_lib.sample_correlated_gaussian`, and of McAllester & Stratos's Table 1).
    Then

    .. math::

        I(X; Y) = -\frac{d}{2} \ln(1 - \rho^2) = d \ln\cosh(\operatorname{artanh} \rho) .

    ``n`` pairs hold :math:`m = n d` independent coordinate pairs; their pooled correlation,
    with the means known to be zero, is
    :math:`r = \sum x_{tk} y_{tk} / \sqrt{\sum x_{tk}^2 \sum y_{tk}^2}`. Fisher's
    z-transformation :math:`\operatorname{artanh} r` is approximately normal with mean
    :math:`\operatorname{artanh} \rho` and standard deviation :math:`1/\sqrt{m - 3}`
    (Fisher, 1921, "On the 'probable error' of a coefficient of correlation deduced from a
    small sample", Metron 1, 3-32). With known means, :math:`r` has the distribution of an
    ordinary sample correlation of :math:`m + 1` pairs, so this standard deviation is if
    anything slightly large. A lower confidence limit on :math:`|\rho|`, mapped through the
    increasing function above, gives

    .. math::

        z_- = \max\Big(|\operatorname{artanh} r| - \frac{\Phi^{-1}(1 - \delta/2)}{\sqrt{m - 3}},
        \; 0\Big), \qquad B = d \ln\cosh z_- ,

    with :math:`P(B \le I(X; Y)) \ge 1 - \delta` for every member of the family, to the
    accuracy of Fisher's normal approximation (error of order :math:`1/m`; the tests check
    the coverage by simulation). The quantile is two-sided, :math:`\delta/2`, because the
    family includes negative correlations: at :math:`\rho = 0` either sign of :math:`r` can
    overshoot. Unlike :func:`infonce_confidence_bound`, :math:`B` has no cap: within the
    family it can certify far more than :math:`\ln N` nats from :math:`N` pairs. Outside
    the family it guarantees nothing (data with the same correlation and less information
    get the same :math:`B`).

    Parameters
    ----------
    X, Y : array_like, shape (..., n, d)
        The pairs: row ``t`` of ``X`` and of ``Y`` form pair ``t``; leading axes hold
        independent samples, each bounded separately. ``n d >= 4``. Computed in float64.
    delta : float, default 0.05
        The confidence parameter :math:`\delta \in (0, 1)`.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        :math:`B \ge 0`, in nats (a float for 2-D input).

    Raises
    ------
    TypeError, ValueError
        If ``X`` or ``Y`` is not a finite real array of at least 2 dimensions, their shapes
        differ, ``n d < 4``, a sample is all zeros in ``X`` or in ``Y`` (no correlation is
        defined) or perfectly correlated (:math:`|r| = 1`, impossible in the family); if
        ``delta`` is not in ``(0, 1)``.

    Examples
    --------
    One batch of 128 pairs from the second row of McAllester & Stratos's Table 1:

    >>> from infonce_lib import correlated_gaussian_information, sample_correlated_gaussian
    >>> X, Y = sample_correlated_gaussian(128, 0.5, 128, seed=0)
    >>> b = correlated_gaussian_confidence_bound(X, Y)
    >>> bool(math.log(128) < b < correlated_gaussian_information(0.5, 128)), round(b, 1)
    (True, 17.2)
    """
    A = as_real_array(X, "X")
    Bm = as_real_array(Y, "Y")
    if A.ndim < 2:
        raise ValueError(f"X must be at least 2-D (..., n, d); got shape {A.shape}")
    check_same_shape(A, "X", Bm, "Y")
    d_conf = _as_delta(delta)
    n, dim = A.shape[-2:]
    m = n * dim
    if m < 4:
        raise ValueError(
            f"X and Y must hold n d >= 4 coordinate pairs (Fisher's 1/sqrt(m - 3)); got "
            f"n = {n}, d = {dim}"
        )
    r = _pooled_correlation(A, Bm)
    z = np.abs(np.arctanh(r))
    z_lower = np.maximum(z - scipy.special.ndtri(1.0 - d_conf / 2) / math.sqrt(m - 3), 0.0)
    out = dim * _log_cosh(z_lower)
    return float(out) if out.ndim == 0 else out


def _pooled_correlation(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``sum(x y) / sqrt(sum(x^2) sum(y^2))`` over the last two axes, scaled against overflow."""
    sa = np.abs(A).max(axis=(-2, -1), keepdims=True)
    sb = np.abs(B).max(axis=(-2, -1), keepdims=True)
    if not (np.all(sa > 0) and np.all(sb > 0)):
        raise ValueError("X and Y must not be all zeros in a sample: no correlation is defined")
    A, B = A / sa, B / sb  # entries in [-1, 1]: the sums below cannot overflow
    xy = np.einsum("...tk,...tk->...", A, B)
    xx = np.einsum("...tk,...tk->...", A, A)
    yy = np.einsum("...tk,...tk->...", B, B)
    r = xy / (np.sqrt(xx) * np.sqrt(yy))
    if np.any(np.abs(r) >= 1.0):
        raise ValueError(
            "X and Y are perfectly correlated in a sample (|r| = 1 to float64 precision): "
            "impossible for correlated Gaussians with |rho| < 1"
        )
    return r
