r"""Caps on InfoNCE for a bounded critic: what the temperature allows a cosine critic to certify.

A cosine critic scores :math:`f(x, y) = s(x, y) / \tau` with :math:`s \in [-1, 1]`. Two caps
follow, and the book uses both:

* :func:`cosine_cap`, the score-range cap :math:`\log K - \log(1 + (K - 1) e^{-2/\tau})`:
  no batch of scores in :math:`[-1, 1]` divided by :math:`\tau` can give more, whatever the
  scores. It is a bound on score matrices, and unit-norm embeddings cannot reach it once
  :math:`K \ge 3`.
* :func:`attainable_cosine_cap`,
  :math:`\log K - \log(1 + (K - 1) e^{-K / ((K - 1)\tau)})`: the largest value a batch of
  :math:`K` pairs of unit-norm embeddings can reach, attained by a regular simplex. It is
  at most :math:`1/\tau` for every :math:`K`, so certifying :math:`I` nats with unit-norm
  embeddings needs :math:`1/\tau \ge I`.

:func:`maximise_infonce_over_unit_embeddings` puts the second to a numerical test: an
optimiser over free unit embeddings goes no further, and in the cases tested it gets there.

What the temperature does besides (concavity in :math:`\beta = 1/\tau`, the best temperature,
how the push is shared among negatives) is in :mod:`infonce_lib.temperature`.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_generator, as_int, as_positive_scalar, as_real_array

__all__ = ["attainable_cosine_cap", "cosine_cap", "maximise_infonce_over_unit_embeddings"]

#: The temperatures :func:`maximise_infonce_over_unit_embeddings` accepts: beyond them the
#: optimisation is badly scaled in float64 (logits up to ``2 / tau``, gradients ``1 / tau``).
TEMPERATURE_RANGE = (1e-4, 1e4)


def cosine_cap(batch_size: int, tau):
    r"""The score-range cap: the largest InfoNCE of scores in :math:`[-1, 1]` over :math:`\tau`.

    .. math::

        \mathrm{cap}(K, \tau) = \log K - \log\big(1 + (K - 1)\, e^{-2/\tau}\big)

    Every batch value of :math:`I_{\mathrm{NCE}}` with scores :math:`S_{ij}/\tau` is at most
    this whenever every :math:`S_{ij}` lies in :math:`[-1, 1]`: a positive scores at most
    :math:`+1/\tau` and a negative at least :math:`-1/\tau`, so each gap is at most 2. The
    score matrix with :math:`S_{ii} = 1` and :math:`S_{ij} = -1` (:math:`j \ne i`) attains it.
    That matrix is not made of cosines of embeddings once :math:`K \ge 3`: :math:`S_{ii} = 1`
    forces :math:`x_i = y_i`, and cosine :math:`-1` with :math:`y_1` would make :math:`x_2`
    and :math:`x_3` both equal :math:`-y_1`, so that :math:`y_2` would score :math:`x_3` at
    :math:`+1`, not :math:`-1`. For unit-norm embeddings the sharp bound
    is :func:`attainable_cosine_cap`, lower for every :math:`K \ge 3` (equal at
    :math:`K = 2`). Computed stably at both ends: for
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
    scalar = np.ndim(tau) == 0
    if scalar:
        t = np.array([as_positive_scalar(tau, "tau")])
    else:
        t = as_real_array(tau, "tau")
        if (t <= 0).any():
            raise ValueError(f"tau must be > 0; got minimum {t.min()}")
    out = np.empty_like(t)
    small = t < 2.0
    ts = t[small]
    with np.errstate(over="ignore", under="ignore"):  # 2/tau = inf for subnormal tau: fine
        out[small] = math.log(K) - np.logaddexp(0.0, math.log(K - 1) - 2.0 / ts)
    tl = t[~small]
    out[~small] = -np.log1p(((K - 1) / K) * np.expm1(-2.0 / tl))
    return float(out[0]) if scalar else out


def attainable_cosine_cap(batch_size: int, temperature):
    r"""The largest InfoNCE that unit-norm embeddings can reach at temperature :math:`\tau`.

    .. math::

        \mathrm{cap}^{\ast}(K, \tau) &= \log K
        - \log\Big(1 + (K - 1)\, \exp\Big(-\frac{K}{(K - 1)\,\tau}\Big)\Big) \\
        &\le \min\Big(\log K, \frac{1}{\tau}\Big)

    Every batch of :math:`K` pairs of unit vectors :math:`x_i, y_i` (any dimension) scored by
    the cosine critic :math:`S_{ij}/\tau`, :math:`S_{ij} = y_i \cdot x_j`, has
    :math:`I_{\mathrm{NCE}} \le \mathrm{cap}^{\ast}(K, \tau)`, and a regular simplex attains it.
    It is :func:`cosine_cap` with the largest gap between a positive and a negative, 2, replaced
    by :math:`K/(K-1)`; as :math:`K \to \infty` it tends to :math:`1/\tau` (the score-range cap
    to :math:`2/\tau`).

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
    scalar = np.ndim(temperature) == 0
    if scalar:
        t = np.array([as_positive_scalar(temperature, "temperature")])
    else:
        t = as_real_array(temperature, "temperature")
        if (t <= 0).any():
            raise ValueError(f"temperature must be > 0; got minimum {t.min()}")
    gap = K / (K - 1)  # the largest mean gap of unit-norm embeddings
    with np.errstate(over="ignore"):  # gap / t = inf for subnormal t: the true limit
        a = gap / t
    out = np.empty_like(t)
    small = a > 1.0
    with np.errstate(under="ignore"):
        out[small] = math.log(K) - np.logaddexp(0.0, math.log(K - 1) - a[small])
    out[~small] = -np.log1p(((K - 1) / K) * np.expm1(-a[~small]))
    return float(out[0]) if scalar else out


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
