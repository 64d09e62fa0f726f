r"""Caps on InfoNCE for a bounded critic: what the temperature allows a cosine critic to certify.

A cosine critic scores :math:`f(x, y) = s(x, y) / \tau` with :math:`s \in [-1, 1]`. Every cap
below is one function of the *mean gap* of a batch, :math:`\bar g`, the average over the rows
of how far the positive's score stands above the mean of its negatives' (:func:`mean_gaps`):
by Jensen's inequality, twice, every batch value is at most

.. math::

    \phi_K(\bar g) = \log K - \log\big(1 + (K - 1)\, e^{-\bar g/\tau}\big)

(:func:`mean_gap_cap`), and :math:`\phi_K` increases with :math:`\bar g`. What bounds the
mean gap gives the caps:

* :func:`cosine_cap`, the score-range cap, :math:`\bar g \le 2`: any scores in
  :math:`[-1, 1]`; a bound on score matrices, which unit-norm embeddings cannot reach once
  :math:`K \ge 3`.
* :func:`attainable_cosine_cap`, :math:`\bar g \le K/(K-1)`: the largest value one batch of
  :math:`K` pairs of unit-norm embeddings can reach, attained by a regular simplex (which
  needs dimension :math:`d \ge K - 1`). At most :math:`1/\tau` for every :math:`K` (for
  the square batch; NT-Xent's and MoCo's batches have looser linear bounds).
* :func:`population_cosine_cap`, :math:`\mathbb{E}[\bar g] \le 1`: the expected value over
  i.i.d. batches of any fixed encoder with unit-norm outputs (the mean gap is then a
  covariance); approached, never attained, by an encoder that spreads its outputs uniformly
  on a sphere of high dimension.

:func:`maximise_infonce_over_unit_embeddings` puts the per-batch cap to a numerical test: an
optimiser over free unit embeddings goes no further, and in the cases tested it gets there.

What the temperature does besides (concavity in :math:`\beta = 1/\tau`, the best temperature,
how the push is shared among negatives) is in :mod:`infonce_lib.temperature`.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import (
    as_array,
    as_generator,
    as_int,
    as_positive_scalar,
    as_real_array,
    finite_or_raise,
)
from .margin_losses import _check_cosines

__all__ = [
    "attainable_cosine_cap",
    "cosine_cap",
    "maximise_infonce_over_unit_embeddings",
    "mean_gap_cap",
    "mean_gaps",
    "population_cosine_cap",
]

#: The temperatures :func:`maximise_infonce_over_unit_embeddings` accepts: beyond them the
#: optimisation is badly scaled in float64 (logits up to ``2 / tau``, gradients ``1 / tau``).
TEMPERATURE_RANGE = (1e-4, 1e4)


def _temperatures(temperature, name: str) -> tuple[np.ndarray, bool]:
    """Finite positive temperatures as a float64 array, and whether a scalar was given.

    A ragged list raises ``as_array``'s ValueError naming ``name`` (``np.ndim`` would raise
    NumPy's own message, which names no argument)."""
    if as_array(temperature, name).ndim == 0:
        return np.array([as_positive_scalar(temperature, name)]), True
    t = as_real_array(temperature, name)
    if (t <= 0).any():
        raise ValueError(f"{name} must be > 0; got minimum {t.min()}")
    return t, False


def _phi(K: int, a: np.ndarray) -> np.ndarray:
    r"""``log K - log(1 + (K - 1) exp(-a))`` for ``a`` = gap / tau, elementwise, stably.

    For :math:`|a| > 1` as :math:`\log K - \operatorname{logaddexp}(0, \log(K-1) - a)`: no
    overflow as :math:`a \to \pm\infty` (:math:`a = +\infty` gives :math:`\log K`;
    :math:`a = -\infty` gives :math:`-\infty`). For :math:`|a| \le 1` as
    :math:`-\operatorname{log1p}\big(\tfrac{K-1}{K}\operatorname{expm1}(-a)\big)`, which keeps
    its relative accuracy as :math:`a \to 0`, where the value is about
    :math:`\tfrac{K-1}{K} a`.
    """
    out = np.empty_like(a)
    far = np.abs(a) > 1.0
    with np.errstate(under="ignore", over="ignore"):
        out[far] = math.log(K) - np.logaddexp(0.0, math.log(K - 1) - a[far])
    near = ~far
    out[near] = -np.log1p(((K - 1) / K) * np.expm1(-a[near]))
    return out


def _cap(K: int, t: np.ndarray, gap, scalar: bool):
    """:func:`_phi` at ``a = gap / t`` (``gap / t`` may overflow to +-inf: the true limit)."""
    with np.errstate(over="ignore"):
        a = np.asarray(gap / t, dtype=np.float64)
    out = _phi(K, np.atleast_1d(a)).reshape(a.shape)
    return float(out.reshape(-1)[0]) if scalar else out


def cosine_cap(batch_size: int, tau):
    r"""The score-range cap: the largest InfoNCE of scores in :math:`[-1, 1]` over :math:`\tau`.

    .. math::

        \mathrm{cap}(K, \tau) = \log K - \log\big(1 + (K - 1)\, e^{-2/\tau}\big)

    Every batch value of :math:`I_{\mathrm{NCE}}` with scores :math:`S_{ij}/\tau` is at most
    this whenever every :math:`S_{ij}` lies in :math:`[-1, 1]`: a positive scores at most
    :math:`+1/\tau` and a negative at least :math:`-1/\tau`, so each gap is at most 2 (it is
    :func:`mean_gap_cap` at a mean gap of 2). The score matrix with :math:`S_{ii} = 1` and
    :math:`S_{ij} = -1` (:math:`j \ne i`) attains it.
    That matrix is not made of cosines of embeddings once :math:`K \ge 3`: :math:`S_{ii} = 1`
    forces :math:`x_i = y_i`, and cosine :math:`-1` with :math:`y_1` would make :math:`x_2`
    and :math:`x_3` both equal :math:`-y_1`, so that :math:`y_2` would score :math:`x_3` at
    :math:`+1`, not :math:`-1`. For unit-norm embeddings the sharp bound
    is :func:`attainable_cosine_cap`, lower for every :math:`K \ge 3` (equal at
    :math:`K = 2`). It is sharp, though, for a loss whose negatives are not the other rows'
    positives: with MoCo's queue (He et al., 2020, eq. 1), a query :math:`q`, its key
    :math:`q` and every queued key at :math:`-q` give a batch value of exactly this cap, with
    :math:`K` = the queue length + 1. Computed stably at both ends: for
    :math:`\tau < 2` as :math:`\log K - \operatorname{logaddexp}(0, \log(K-1) - 2/\tau)` (so
    :math:`\tau \to 0` gives :math:`\log K` without overflow); for :math:`\tau \ge 2` as
    :math:`-\operatorname{log1p}\big(\tfrac{K-1}{K}\operatorname{expm1}(-2/\tau)\big)`, which
    keeps its relative accuracy as :math:`\tau \to \infty` (cap
    :math:`\approx 2(K-1)/(K\tau)`). No warnings for any finite :math:`\tau > 0`.

    Parameters
    ----------
    batch_size : int
        :math:`K \ge 2` (a batch of one has no negative; its InfoNCE is identically 0).
    tau : float or array_like
        Temperatures :math:`\tau > 0`, finite.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar ``tau``, else an array of ``tau``'s shape; in
        :math:`(0, \log K]`.

    Raises
    ------
    TypeError, ValueError
        If ``batch_size`` is not an integer ``>= 2`` or a temperature is not finite and
        positive.

    Examples
    --------
    >>> [round(cosine_cap(256, t), 3) for t in (0.1, 0.2, 0.5, 1.0)]
    [5.545, 5.534, 3.81, 1.975]
    >>> cosine_cap(256, 1e-3) == math.log(256), f"{cosine_cap(256, 1e20):.4e}"
    (True, '1.9922e-20')
    """
    K = as_int(batch_size, "batch_size", minimum=2)
    t, scalar = _temperatures(tau, "tau")
    return _cap(K, t, 2.0, scalar)


def attainable_cosine_cap(batch_size: int, temperature):
    r"""The largest InfoNCE that one batch of unit-norm embeddings can reach at :math:`\tau`.

    .. math::

        \mathrm{cap}^{\ast}(K, \tau) &= \log K
        - \log\Big(1 + (K - 1)\, \exp\Big(-\frac{K}{(K - 1)\,\tau}\Big)\Big) \\
        &\le \min\Big(\log K, \frac{1}{\tau}\Big)

    Every batch of :math:`K` pairs of unit vectors :math:`x_i, y_i` (any dimension) scored by
    the cosine critic :math:`S_{ij}/\tau`, :math:`S_{ij} = y_i \cdot x_j`, has
    :math:`I_{\mathrm{NCE}} \le \mathrm{cap}^{\ast}(K, \tau)`; a regular simplex attains it
    when the dimension is at least :math:`K - 1`, and in fewer dimensions it is only a bound.
    It is :func:`mean_gap_cap` at the largest mean gap of unit vectors, :math:`K/(K-1)`
    (:func:`cosine_cap` has 2); as :math:`K \to \infty` it tends to :math:`1/\tau` (the
    score-range cap to :math:`2/\tau`). The bound :math:`1/\tau` is the square batch's:
    the same linear step at other designs' largest mean gaps gives
    :math:`\frac{2N}{2N-1}\cdot\frac1\tau` for SimCLR's NT-Xent (:math:`2N - 1`
    candidates, mean gap :math:`N/(N-1)`) and :math:`\frac{2(K-1)}{K\tau}` for MoCo's
    queue (score range 2), and single batches of either can exceed :math:`1/\tau`
    (NT-Xent's simplex of :math:`N = 2` at :math:`\tau = 10` does; chapter 6). This is a
    statement about one batch, whatever its embeddings: the expected value over i.i.d.
    batches of a fixed encoder obeys the lower :func:`population_cosine_cap`.

    Proof. Row :math:`i` contributes :math:`\log K - \log\big(1 + \sum_{j \ne i}
    e^{-(S_{ii} - S_{ij})/\tau}\big)`. (1) The exponential is convex, so by Jensen's inequality
    the sum is at least :math:`(K-1)\, e^{-g_i/\tau}`, with :math:`g_i = S_{ii} - \frac{1}{K-1}
    \sum_{j \ne i} S_{ij}` the mean gap of row :math:`i`: the row term is at most
    :math:`\phi(g_i) = \log K - \log(1 + (K-1) e^{-g_i/\tau})`. (2) :math:`\phi` is increasing
    and concave (minus a softplus of an affine function), so the mean over the rows is at most
    :math:`\phi(\bar g)`, :math:`\bar g = \frac1K \sum_i g_i`. (3) Summing every score,
    :math:`\sum_{i \ne j} x_j \cdot y_i = K^2\, \bar x \cdot \bar y - \sum_i x_i \cdot y_i`,
    whence :math:`\bar g = \frac{K}{K-1} \cdot \frac1K \sum_i (x_i - \bar x) \cdot (y_i -
    \bar y)`. (4) By Cauchy–Schwarz that mean is at most :math:`\sqrt{(1 - \lVert \bar x
    \rVert^2)(1 - \lVert \bar y \rVert^2)} \le 1` (for unit vectors :math:`\frac1K \sum_i
    \lVert x_i - \bar x \rVert^2 = 1 - \lVert \bar x \rVert^2`), so :math:`\bar g \le K/(K-1)`
    and :math:`I_{\mathrm{NCE}} \le \phi(K/(K-1))`. The second inequality: :math:`\log` is
    concave, so (Jensen, weights :math:`1/K` and :math:`(K-1)/K`)
    :math:`\log\frac{1 + (K-1) e^{-g/\tau}}{K} \ge -\frac{K-1}{K}\frac{g}{\tau}`, that is
    :math:`\phi(g) \le \frac{K-1}{K} \frac{g}{\tau}` for every real :math:`g`; at
    :math:`g = K/(K-1)` the right-hand side is :math:`1/\tau`, and :math:`\phi < \log K`.
    Equality in the first inequality needs equality in every step:
    :math:`x_i = y_i = v_i` with :math:`\sum_i v_i = 0` and every :math:`v_i \cdot v_j =
    -1/(K-1)`, the vertices of a regular simplex, which exist in dimension :math:`\ge K - 1`.
    That the regular simplex minimises contrastive losses of this kind is known: Graf, Hofer,
    Niethammer & Kwitt (2021), "Dissecting supervised contrastive learning" (ICML), for the
    class means of the supervised contrastive loss; Lee, Lim, Lee & Sohn (2025), "On the
    similarities of embeddings in contrastive learning" (ICML), for full-batch InfoNCE-type
    losses (positives aligned, negatives at cosine :math:`-1/(n-1)`).

    Computed as :func:`cosine_cap` is: :math:`\log K - \operatorname{logaddexp}(0, \log(K-1)
    - a)` with :math:`a = K/((K-1)\tau)` when :math:`a > 1` (no overflow as
    :math:`\tau \to 0`), else :math:`-\operatorname{log1p}\big(\tfrac{K-1}{K}
    \operatorname{expm1}(-a)\big)` (relative accuracy as :math:`\tau \to \infty`, where the
    cap is about :math:`1/\tau`). No warnings for any finite :math:`\tau > 0`.

    Parameters
    ----------
    batch_size : int
        :math:`K \ge 2`.
    temperature : float or array_like
        Temperatures :math:`\tau > 0`, finite.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar ``temperature``, else an array of its shape; in
        :math:`(0, \log K]`, never above :func:`cosine_cap`.

    Raises
    ------
    TypeError, ValueError
        If ``batch_size`` is not an integer ``>= 2`` or a temperature is not finite and
        positive.

    See Also
    --------
    cosine_cap : the looser cap of any score matrix with entries in :math:`[-1, 1]`.
    population_cosine_cap : the lower cap on the expected value over i.i.d. batches.

    Examples
    --------
    >>> round(attainable_cosine_cap(8, 1.0), 3), round(cosine_cap(8, 1.0), 3)
    (0.906, 1.413)
    >>> round(attainable_cosine_cap(256, 1.0), 3), round(cosine_cap(256, 1.0), 3)
    (0.997, 1.975)
    >>> attainable_cosine_cap(2, 0.5) == cosine_cap(2, 0.5)  # K = 2: the same gap, 2
    True
    >>> np.round(attainable_cosine_cap(256, [0.01, 0.1, 1.0, 10.0]), 4)
    array([5.5452, 5.5341, 0.9972, 0.1   ])
    >>> attainable_cosine_cap(256, 1e-300) == math.log(256)  # tau -> 0: log K
    True
    >>> f"{attainable_cosine_cap(256, 1e300):.4e}"  # tau -> infinity: about 1/tau
    '1.0000e-300'
    >>> taus = np.geomspace(1e-3, 1e3, 61)  # never above 1/tau, for any K
    >>> all(bool(np.all(attainable_cosine_cap(K, taus) <= 1 / taus)) for K in (2, 8, 10**6))
    True
    """
    K = as_int(batch_size, "batch_size", minimum=2)
    t, scalar = _temperatures(temperature, "temperature")
    return _cap(K, t, K / (K - 1), scalar)


def population_cosine_cap(batch_size: int, temperature):
    r"""The cap on the *expected* InfoNCE of a fixed encoder with unit-norm outputs.

    .. math::

        \mathbb{E}\big[I_{\mathrm{NCE}}\big] \;\le\; \log K
        - \log\big(1 + (K - 1)\, e^{-1/\tau}\big)

    for batches of :math:`K` pairs drawn i.i.d., whatever the encoder, the data and the
    dimension. It is :func:`mean_gap_cap` at a mean gap of 1, below the per-batch
    :func:`attainable_cosine_cap` (mean gap :math:`K/(K-1)`): at :math:`K = 8`,
    :math:`\tau = 1` it is 0.805 against 0.906. A single batch can exceed it; the average
    over batches cannot, in expectation.

    Assumptions. The :math:`K` pairs :math:`(X_i, Y_i)` of a batch are independent draws
    from one joint distribution; the candidates :math:`x_j = f(X_j)` and the views
    :math:`y_i = g(Y_i)` are unit vectors of :math:`\mathbb{R}^d` given by fixed maps
    :math:`f` and :math:`g` (any :math:`d`; :math:`f = g` or not), applied to each sample
    alone: nothing computed from the batch (such as batch normalisation) enters them; the
    critic is :math:`S_{ij}/\tau` with :math:`S_{ij} = y_i \cdot x_j`, the softmax over the
    candidates of each view (as in :func:`~infonce_lib.infonce_at_beta`); the expectation is
    over the draw of the batch.

    Proof. (1) Steps 1 and 2 of :func:`attainable_cosine_cap`'s proof (Jensen's inequality
    over the negatives of each row, then over the rows, :math:`\phi` being concave) hold for
    any scores: every batch value is at most :math:`\phi(\bar g)`, with :math:`\bar g` the
    batch's mean gap (:func:`mean_gaps`) and :math:`\phi` = :func:`mean_gap_cap`.
    (2) :math:`\phi` is concave and :math:`\bar g` bounded, so by Jensen's inequality once
    more :math:`\mathbb{E}[\phi(\bar g)] \le \phi(\mathbb{E}[\bar g])`. (3) For
    :math:`j \ne i`, :math:`x_j` is independent of :math:`y_i`, so
    :math:`\mathbb{E}[y_i \cdot x_j] = \mu_y \cdot \mu_x` with :math:`\mu_x = \mathbb{E}[x]`,
    :math:`\mu_y = \mathbb{E}[y]`; and :math:`\mathbb{E}[y_i \cdot x_i] = \mathbb{E}[y \cdot
    x]` for one pair. Hence every row has :math:`\mathbb{E}[g_i] = \mathbb{E}[y \cdot x] -
    \mu_y \cdot \mu_x = \mathbb{E}[(y - \mu_y) \cdot (x - \mu_x)]`, the trace of the
    cross-covariance of :math:`x` and :math:`y`, and so does :math:`\mathbb{E}[\bar g]`.
    (4) By the Cauchy–Schwarz inequality it is at most :math:`\sqrt{\mathbb{E}\lVert x -
    \mu_x \rVert^2 \, \mathbb{E}\lVert y - \mu_y \rVert^2} = \sqrt{(1 - \lVert \mu_x
    \rVert^2)(1 - \lVert \mu_y \rVert^2)} \le 1`, as :math:`\lVert x \rVert = 1`. As
    :math:`\phi` is increasing, :math:`\mathbb{E}[I_{\mathrm{NCE}}] \le \phi(1)`.

    Sharpness. The cap is approached: with :math:`X = Y` uniform on the unit sphere of
    :math:`\mathbb{R}^d` and :math:`f = g` the identity, :math:`S_{ii} = 1` and every
    negative cosine has mean 0 and variance :math:`1/d`, so as :math:`d \to \infty` the batch
    value tends to :math:`\phi(1)` in probability, and (being bounded) in expectation. It is
    never attained: equality would need :math:`\bar g = 1` almost surely (step 2,
    :math:`\phi` strictly concave), :math:`y = x` with :math:`\mu_x = 0` (step 4) and every
    negative cosine equal within a row (step 1), hence :math:`x_1 \cdot x_2 = 0` for two
    independent draws, so :math:`\lVert \mathbb{E}[x x^\top] \rVert_F^2 = \mathbb{E}[(x_1
    \cdot x_2)^2] = 0`, against :math:`\operatorname{tr} \mathbb{E}[x x^\top] = 1`.

    Other batch designs. The proof uses the square batch only in step 3, through two facts
    about each row: every negative is independent of the row's view, and has the same mean as
    the row's positive candidate. The argument would carry over row by row, with :math:`K` the
    number of candidates per anchor, to SimCLR's NT-Xent (Chen et al., 2020; :math:`2N - 1`
    candidates for :math:`N` examples) *if* both views are drawn from the same augmentation
    distribution, and to MoCo's queue (He et al., 2020; :math:`K = Q + 1`) *if* the queued
    keys are distributed as the current keys, which MoCo's slowly moving key encoder only
    approximates. That extension is not written out as a proof here (nor in chapter 6), so
    this function claims the cap for the square batch only. The per-batch caps of those
    designs differ from the square batch's: NT-Xent's is :func:`mean_gap_cap` at
    :math:`N/(N-1)` with :math:`2N - 1` candidates, MoCo's the score-range
    :func:`cosine_cap` (chapter 6).

    Parameters
    ----------
    batch_size : int
        :math:`K \ge 2`, the candidates per view (the pairs of a square batch).
    temperature : float or array_like
        Temperatures :math:`\tau > 0`, finite.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar ``temperature``, else an array of its shape; in
        :math:`(0, \log K]` (``log K`` itself only where float64 cannot tell them apart),
        never above :func:`attainable_cosine_cap`.

    Raises
    ------
    TypeError, ValueError
        If ``batch_size`` is not an integer ``>= 2`` or a temperature is not finite and
        positive.

    See Also
    --------
    attainable_cosine_cap : the cap of one batch, which a regular simplex attains (d >= K - 1).

    Examples
    --------
    >>> round(population_cosine_cap(8, 1.0), 3), round(attainable_cosine_cap(8, 1.0), 3)
    (0.805, 0.906)
    >>> population_cosine_cap(8, 1.0) == mean_gap_cap(8, 1.0, 1.0)
    True
    >>> f"{population_cosine_cap(256, 1e300):.4e}"  # tau -> infinity: (K - 1)/(K tau)
    '9.9609e-301'
    """
    K = as_int(batch_size, "batch_size", minimum=2)
    t, scalar = _temperatures(temperature, "temperature")
    return _cap(K, t, 1.0, scalar)


def mean_gap_cap(batch_size: int, temperature, mean_gap):
    r"""The most a batch of :math:`K` pairs with a given mean gap can certify.

    .. math::

        \phi_K(\bar g) = \log K - \log\big(1 + (K - 1)\, e^{-\bar g/\tau}\big)
        \;\le\; \frac{K-1}{K}\, \frac{\bar g}{\tau}

    Every batch value of :math:`I_{\mathrm{NCE}}` with critic :math:`S_{ij}/\tau` is at most
    :math:`\phi_K(\bar g)`, where :math:`\bar g` is the batch's mean gap, the mean over the
    rows of :math:`g_i = S_{ii} - \frac{1}{K-1}\sum_{j \ne i} S_{ij}` (:func:`mean_gaps`): by
    Jensen's inequality over the negatives of each row (the exponential is convex), then over
    the rows (:math:`\phi_K` is concave); no property of the scores is used. :math:`\phi_K`
    is increasing, so a bound on the mean gap is a cap: 2 for any scores in :math:`[-1, 1]`
    (:func:`cosine_cap`), :math:`K/(K-1)` for one batch of unit vectors
    (:func:`attainable_cosine_cap`), 1 in expectation for an encoder applied to i.i.d. pairs
    (:func:`population_cosine_cap`). The linear bound holds for every real :math:`\bar g`,
    negative ones included, by the concavity of the logarithm (Jensen with weights
    :math:`1/K` and :math:`(K-1)/K`). With :math:`K` candidates per anchor the same holds for
    any softmax loss with one positive per anchor, e.g. NT-Xent with :math:`K = 2N - 1`.

    Computed as :math:`\log K - \operatorname{logaddexp}(0, \log(K-1) - a)` for
    :math:`|a| > 1`, :math:`a = \bar g/\tau`, and as :math:`-\operatorname{log1p}
    \big(\tfrac{K-1}{K}\operatorname{expm1}(-a)\big)` otherwise (relative accuracy near 0).

    Parameters
    ----------
    batch_size : int
        :math:`K \ge 2`, the candidates per anchor.
    temperature : float or array_like
        Temperatures :math:`\tau > 0`, finite.
    mean_gap : float or array_like
        Mean gaps :math:`\bar g`, finite reals (in :math:`[-2, 2]` for cosines); broadcast
        against ``temperature``.

    Returns
    -------
    float or numpy.ndarray
        A float when both are scalars, else an array of the broadcast shape; below
        :math:`\log K`, and 0 at :math:`\bar g = 0`.

    Raises
    ------
    TypeError, ValueError
        If ``batch_size`` is not an integer ``>= 2``, a temperature is not finite and
        positive, a mean gap is not finite, the shapes do not broadcast, or a value is below
        the float64 range (a negative gap over a temperature of about 1e-308).

    Examples
    --------
    >>> mean_gap_cap(8, 1.0, 8 / 7) == attainable_cosine_cap(8, 1.0)
    True
    >>> np.round(mean_gap_cap(8, 1.0, [-1.0, 0.0, 1.0, 2.0]), 4)
    array([-0.9177,  0.    ,  0.8054,  1.413 ])
    """
    K = as_int(batch_size, "batch_size", minimum=2)
    t, t_scalar = _temperatures(temperature, "temperature")
    g = as_real_array(mean_gap, "mean_gap")
    g_scalar = g.ndim == 0
    if t_scalar:
        t = t.reshape(())
    try:
        g, t = np.broadcast_arrays(g, t)
    except ValueError:
        raise ValueError(
            f"mean_gap and temperature must broadcast; got shapes {g.shape} and {t.shape}"
        ) from None
    out = _cap(K, t, g, False)
    what = "mean_gap_cap (a negative mean_gap over a tiny temperature)"
    finite_or_raise(out, what, "use a larger temperature")
    return float(out) if (t_scalar and g_scalar) else out


def mean_gaps(cosines) -> np.ndarray:
    r"""The gap of every row: its positive's score minus the mean of its negatives'.

    .. math::

        g_{bi} = S_{bii} - \frac{1}{K-1} \sum_{j \ne i} S_{bij}

    The mean of a batch's gaps, :math:`\bar g_b = \frac1K \sum_i g_{bi}`, bounds its InfoNCE
    through :func:`mean_gap_cap`. For cosines of unit vectors :math:`S_{ij} = y_i \cdot x_j`
    it is a centred covariance, :math:`\bar g = \frac{K}{K-1} \cdot \frac1K \sum_i (x_i -
    \bar x) \cdot (y_i - \bar y)` (:func:`attainable_cosine_cap`, step 3), at most
    :math:`K/(K-1)`. It also sets the slope of the bound at :math:`\beta = 1/\tau = 0`:
    :math:`\mathrm{d}I_{\mathrm{NCE}}/\mathrm{d}\beta = \frac{K-1}{K} \bar g` there
    (:func:`~infonce_lib.best_temperature`).

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1], positives on the diagonal, ``K >= 2``. Not modified.

    Returns
    -------
    numpy.ndarray, shape (B, K)
        One gap per row, in :math:`[-2, 2]` (up to round-off).

    Raises
    ------
    TypeError, ValueError
        As :func:`~infonce_lib.infonce_at_beta`.

    Examples
    --------
    >>> np.round(mean_gaps([[[0.9, 0.1, -0.3], [0.2, 0.5, 0.4], [0.0, 0.6, 0.2]]]), 6)
    array([[ 1. ,  0.2, -0.1]])
    """
    S = _check_cosines(cosines)
    K = S.shape[-1]
    positives = np.diagonal(S, axis1=-2, axis2=-1)
    negatives = S.sum(axis=-1) - positives
    return positives - negatives / (K - 1)


# ---------------------------------------------------------------- the cap, found numerically


def maximise_infonce_over_unit_embeddings(batch_size: int, temperature, dim: int, *, seed=0):
    r"""Maximise InfoNCE over free unit embeddings: how far an optimiser gets, from one start.

    The embeddings are :math:`x_j = u_j / \lVert u_j \rVert` and
    :math:`y_i = w_i / \lVert w_i \rVert` for free vectors :math:`u_j, w_i \in \mathbb{R}^d`,
    scored by the cosine critic :math:`S_{ij}/\tau`, :math:`S_{ij} = y_i \cdot x_j`
    (softmax over the candidates :math:`x_j` of each view :math:`y_i`). The objective is
    one batch's

    .. math::

        I_{\mathrm{NCE}} = \log K + \frac1K \sum_i \Big(\frac{S_{ii}}{\tau}
        - \log \sum_j e^{S_{ij}/\tau}\Big), \qquad
        \frac{\partial I_{\mathrm{NCE}}}{\partial S_{ij}} = \frac{\delta_{ij} - p_{ij}}{K\tau},

    with :math:`p_{ij}` the softmax weights, so :math:`\partial I/\partial y_i =
    \sum_j \partial I/\partial S_{ij}\, x_j` and :math:`\partial I/\partial x_j =
    \sum_i \partial I/\partial S_{ij}\, y_i`; through the normalisation,

    .. math::

        \frac{\partial I}{\partial u_j} = \frac{(\mathbf{1} - x_j x_j^\top)}{\lVert u_j
        \rVert} \frac{\partial I}{\partial x_j}

    (the part along :math:`x_j` removed: moving :math:`u_j` radially changes no cosine), and
    likewise for :math:`w_i`. Minus the objective and its gradient, as whole-matrix NumPy
    operations, go to L-BFGS-B (Byrd, Lu, Nocedal & Zhu, 1995) through
    ``scipy.optimize.minimize`` (imported on first use), from standard normal
    :math:`u, w` drawn from ``seed``, with tight tolerances (``gtol`` 1e-12, ``ftol``
    1e-15, at most 5000 iterations).

    What is proven and what is only observed. The value reached never exceeds
    :func:`attainable_cosine_cap`, whatever the start and the dimension: that is the
    proposition proved in its docstring, whose equality case puts the maximum at a regular
    simplex (:math:`x_i = y_i = v_i`), which needs :math:`d \ge K - 1`; so in fewer
    dimensions no embedding reaches the cap. That the simplex is the optimum of losses of this
    kind is also shown by Graf, Hofer, Niethammer & Kwitt (2021) for the class means of the
    supervised contrastive loss and by Lee, Lim, Lee & Sohn (2025) for full-batch
    InfoNCE-type losses. Nothing proves that L-BFGS-B gets there: from a random start it may
    stop at a stationary point below the cap. What is observed, in
    ``tests/test_attainable_cap.py`` and chapter 6, is that every start tried with
    :math:`d \ge K - 1` (a few seeds each, :math:`K` = 5, 8, 12 and 16) ends within 1e-8 nats
    of the cap.

    Parameters
    ----------
    batch_size : int
        :math:`K \ge 2`.
    temperature : float
        :math:`\tau`, in ``TEMPERATURE_RANGE`` (1e-4 to 1e4).
    dim : int
        :math:`d \ge 1`, the dimension of the embeddings.
    seed : int or numpy.random.Generator, default 0
        The starting point: ``2 K d`` standard normals (``u`` then ``w``, row-major).

    Returns
    -------
    value : float
        :math:`I_{\mathrm{NCE}}` at the end, in nats.
    x, y : numpy.ndarray, shape (K, d)
        The unit embeddings reached (candidates and views).

    Raises
    ------
    TypeError, ValueError
        If ``batch_size`` or ``dim`` is not an integer (``>= 2``, ``>= 1``), ``temperature``
        is not finite and positive or lies outside ``TEMPERATURE_RANGE``, or ``seed`` is not
        a seed.

    Examples
    --------
    >>> value, x, y = maximise_infonce_over_unit_embeddings(8, 1.0, 7, seed=0)
    >>> x.shape, bool(abs(value - attainable_cosine_cap(8, 1.0)) < 1e-9)
    ((8, 7), True)
    >>> np.round(y @ x.T, 3)[0]  # the views found their candidates: a regular simplex
    array([ 1.   , -0.143, -0.143, -0.143, -0.143, -0.143, -0.143, -0.143])
    >>> value, _, _ = maximise_infonce_over_unit_embeddings(8, 1.0, 3, seed=0)
    >>> bool(value < attainable_cosine_cap(8, 1.0) - 1e-3)  # no simplex of 8 in 3 dimensions
    True
    """
    from scipy.optimize import minimize  # imported on first use (package docstring)

    K = as_int(batch_size, "batch_size", minimum=2)
    t = as_positive_scalar(temperature, "temperature")
    lo, hi = TEMPERATURE_RANGE
    if not lo <= t <= hi:
        raise ValueError(f"temperature must lie in [{lo:g}, {hi:g}]; got {t!r}")
    d = as_int(dim, "dim", minimum=1)
    start = as_generator(seed).normal(size=2 * K * d)
    options = {"gtol": 1e-12, "ftol": 1e-15, "maxiter": 5000}
    res = minimize(
        _minus_infonce_on_spheres, start, (K, d, t), "L-BFGS-B", jac=True, options=options
    )
    U, W = res.x.reshape(2, K, d)
    x = U / np.linalg.norm(U, axis=1, keepdims=True)
    y = W / np.linalg.norm(W, axis=1, keepdims=True)
    return float(-res.fun), x, y


def _minus_infonce_on_spheres(params: np.ndarray, K: int, d: int, tau: float):
    """Minus InfoNCE of ``x = u/|u|``, ``y = w/|w|`` and its gradient in ``(u, w)``."""
    U, W = params.reshape(2, K, d)
    nu = np.linalg.norm(U, axis=1, keepdims=True)
    nw = np.linalg.norm(W, axis=1, keepdims=True)
    X, Y = U / nu, W / nw
    L = (Y @ X.T) / tau  # logits: row i the view y_i, column j the candidate x_j
    L -= L.max(axis=1, keepdims=True)
    with np.errstate(under="ignore"):
        P = np.exp(L)
    Z = P.sum(axis=1)  # >= 1
    P /= Z[:, None]
    value = math.log(K) + float(np.mean(np.diagonal(L) - np.log(Z)))
    G = -P
    G[np.diag_indices(K)] += 1.0
    G /= K * tau  # dI/dS
    gX, gY = G.T @ Y, G @ X
    gU = (gX - np.sum(gX * X, axis=1, keepdims=True) * X) / nu
    gW = (gY - np.sum(gY * Y, axis=1, keepdims=True) * Y) / nw
    return -value, -np.concatenate([gU.ravel(), gW.ravel()])
