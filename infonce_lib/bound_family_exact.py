r"""Exact values for the family of bounds: NWJ's variance with the optimal critic, I_α's cap.

Two numbers that chapter 4 would otherwise only estimate from random batches:

* :func:`nwj_optimal_variance`, the variance of one batch's NWJ estimate when the critic is
  the optimal one, :math:`f = 1 + \log r`, on the correlated Gaussian of
  :func:`~infonce_lib.sample_correlated_gaussian`, in closed form. The estimate is
  unbiased there, so this is its whole mean squared error, and it grows like
  :math:`e^{2I}/K^2`.
* :func:`interpolated_bound_cap`, the largest value one batch of
  :func:`~infonce_lib.interpolated_bound` can take, :math:`1 + \log((K-1)/\alpha)`.
"""

from __future__ import annotations

import math

from ._validation import as_int, as_positive_scalar, as_real_scalar

__all__ = ["interpolated_bound_cap", "nwj_optimal_variance"]

_LOG_MAX = math.log(1.7976931348623157e308)


def nwj_optimal_variance(information: float, *, dim: int, batch_size: int) -> float:
    r"""Variance of one batch's NWJ estimate with the optimal critic, correlated Gaussian.

    Pairs :math:`(x_k, y_k)`, :math:`k = 1..K`, are i.i.d. from the :math:`d`-dimensional
    Gaussian :math:`x \sim \mathcal N(0, I_d)`, :math:`y = \rho x + \sqrt{1-\rho^2}\,
    \varepsilon`, with :math:`I = -\frac d2 \log(1-\rho^2)` nats. With the optimal NWJ
    critic :math:`f = 1 + \log r`, :math:`r = p(x, y)/(p(x)p(y))` (Nguyen, Wainwright &
    Jordan, 2010; Poole et al., 2019), the batch estimate
    (:func:`~infonce_lib.nwj_bound` of :math:`F_{ij} = 1 + \log r(x_j, y_i)`) is

    .. math::

        \hat I = 1 + A - B, \qquad A = \frac1K \sum_i \log r_{ii},

        B = \frac{1}{K(K-1)} \sum_{i \ne j} r_{ij}, \quad r_{ij} = r(x_j, y_i),

    with :math:`\mathbb E A = I`, :math:`\mathbb E B = 1`, so :math:`\mathbb E \hat I = I`.
    Its variance is

    .. math::

        \operatorname{Var} \hat I = \frac{d\rho^2}{K}
        + \frac{(e^{2I} - 1) + (e^{2I} (1 + \rho^2)^{-d} - 1)}{K(K-1)}.

    Derivation. Per coordinate :math:`\log r = \frac12 (\rho^2 x^2 + 2\rho\sqrt{1-\rho^2}
    x\varepsilon - \rho^2 \varepsilon^2) + \text{const}` on a positive pair, three
    uncorrelated terms of variance :math:`\rho^4/2`, :math:`\rho^2(1-\rho^2)` and
    :math:`\rho^4/2`: :math:`\operatorname{Var} A = d\rho^2/K`. :math:`B` is a U-statistic:
    two of its terms are correlated only if they are the same pair,
    :math:`\operatorname{Var} r_{ij} = \mathbb E_{p(x)p(y)} r^2 - 1 = e^{2I} - 1`, or a
    swapped pair, :math:`\operatorname{Cov}(r_{ij}, r_{ji}) = (1-\rho^4)^{-d} - 1 =
    e^{2I}(1+\rho^2)^{-d} - 1` (a Gaussian integral over two independent positive pairs).
    Every other pair of terms shares at most one of :math:`x_j`, :math:`y_i` that the other
    does not pair with, and :math:`\mathbb E_{p(x)} r(x, y) = \mathbb E_{p(y)} r(x, y) = 1`
    makes their covariance 0; the same identity makes :math:`\operatorname{Cov}(A, B) = 0`.
    The :math:`K(K-1)` terms and their :math:`K(K-1)` swaps give
    :math:`\operatorname{Var} B = (e^{2I} - 1 + e^{2I}(1+\rho^2)^{-d} - 1)/(K(K-1))`.

    A simulation converges to this value slowly when :math:`|\rho| > 1/3`: per coordinate
    :math:`\mathbb E_{p(x)p(y)} r^k` is finite only for :math:`|\rho| < 1/(k-1)`, so the
    fourth moment behind the variance of a sample variance diverges there, and the sample
    variance of a few hundred batches, which rarely contain the pairs with a huge ratio,
    usually falls far below the true one.

    Parameters
    ----------
    information : float
        :math:`I \ge 0`, in nats.
    dim : int
        :math:`d \ge 1`.
    batch_size : int
        :math:`K \ge 2` pairs per batch.

    Returns
    -------
    float
        The variance in nats squared; ``inf`` (without a warning) when it exceeds the
        largest float64, from about :math:`I = 355 + \log K` nats.

    Raises
    ------
    TypeError, ValueError
        If ``information`` is not a finite number ``>= 0``, ``dim`` not an integer
        ``>= 1`` or ``batch_size`` not an integer ``>= 2``.

    Examples
    --------
    Poole et al.'s setting, 10 nats in 20 dimensions with batches of 64: a standard
    deviation of hundreds of nats, although the estimate is unbiased.

    >>> round(nwj_optimal_variance(10.0, dim=20, batch_size=64) ** 0.5)
    347
    >>> nwj_optimal_variance(0.0, dim=3, batch_size=8)  # f = 1: every batch gives 0
    0.0
    """
    info = as_positive_scalar(information, "information", allow_zero=True)
    d = as_int(dim, "dim", minimum=1)
    K = as_int(batch_size, "batch_size", minimum=2)
    rho2 = -math.expm1(-2.0 * info / d)  # 1 - rho^2 = e^{-2I/d}
    joint = d * rho2 / K
    t_same = 2.0 * info  # log E r^2 over p(x)p(y)
    t_swap = 2.0 * info - d * math.log1p(rho2)  # log E r_ij r_ji
    log_pairs = math.log(K) + math.log(K - 1)
    if t_same < 700.0:
        return joint + (math.expm1(t_same) + math.expm1(t_swap)) / (K * (K - 1))
    # e^{2I} alone overflows: the -1s and the joint term are far below one ulp of the rest
    log_var = t_same + math.log1p(math.exp(t_swap - t_same)) - log_pairs
    return math.exp(log_var) if log_var < _LOG_MAX else math.inf


def interpolated_bound_cap(batch_size: int, alpha: float) -> float:
    r"""The largest value one batch of :func:`~infonce_lib.interpolated_bound` can take.

    In :math:`I_\alpha` (Poole et al., 2019, as computed by
    :func:`~infonce_lib.interpolated_bound`) the pair :math:`j` is held out and the baseline
    of row :math:`i` is :math:`a(y_i; x_{\ne j}) = \frac{\alpha}{K-1} \sum_{k \ne j}
    e^{F_{ik}} + (1-\alpha) q(y_i)`. For :math:`j \ne i` that sum contains the positive
    :math:`e^{F_{ii}}`, so :math:`a \ge \alpha e^{F_{ii}} / (K-1)` and each joint term
    :math:`F_{ii} - \log a \le \log((K-1)/\alpha)`; the subtracted term is non-negative.
    Hence, for every critic, baseline and batch,

    .. math::

        I_\alpha \le 1 + \log \frac{K-1}{\alpha},

    an upper bound that is the supremum for :math:`\alpha < 1`: it is approached (not
    reached) by batches with negatives :math:`\ll \log q \ll` positives (the negatives far
    below the baseline :math:`\log q`, the positives far above it). At :math:`\alpha = 1`
    the baseline holds no :math:`q`, the subtracted term is exactly 1 and the supremum is
    :math:`\log(K-1)`, which this function returns there. For :math:`\alpha < 1` the cap is
    above :math:`\log(K/\alpha)` (what InfoNCE's
    :math:`\log K` would suggest) by :math:`1 + \log(1 - 1/K)`.

    Parameters
    ----------
    batch_size : int
        :math:`K \ge 3` (one pair held out, at least two in the baseline).
    alpha : float
        The weight of the batch average, in ``[0, 1]``; ``alpha = 0`` (TUBA) has no cap.

    Returns
    -------
    float
        :math:`1 + \log((K-1)/\alpha)` in nats, ``inf`` at ``alpha = 0`` and
        :math:`\log(K-1)` at ``alpha = 1``.

    Raises
    ------
    TypeError, ValueError
        If ``batch_size`` is not an integer ``>= 3`` or ``alpha`` is not a number in
        ``[0, 1]``.

    Examples
    --------
    >>> round(interpolated_bound_cap(64, 0.01), 2)
    9.75
    """
    K = as_int(batch_size, "batch_size", minimum=3)
    a = as_real_scalar(alpha, "alpha")
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"alpha must be in [0, 1]; got {a}")
    if a == 0.0:
        return math.inf
    if a == 1.0:  # the marginal term is exactly 1: the joint term alone, <= log(K - 1)
        return math.log(K - 1)
    return 1.0 + math.log(K - 1) - math.log(a)
