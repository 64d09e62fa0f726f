r"""Alignment and uniformity on the hypersphere (Wang & Isola, 2020).

Wang & Isola (2020) look at the contrastive loss of an encoder :math:`f` whose embeddings lie
on the unit sphere :math:`S^{m-1}`, with one positive :math:`x` and :math:`M` negatives
:math:`x^-_i \sim p_{\mathrm{data}}` per anchor :math:`y`. Their Theorem 1: as
:math:`M \to \infty`,

.. math::

    \mathcal{L}(f; \tau, M) - \log M \;\longrightarrow\;
    & \underbrace{-\frac{1}{\tau} \mathbb{E}_{(x, y) \sim p_{\mathrm{pos}}}
    \big[f(x)^\top f(y)\big]}_{\text{alignment term}} \\
    & + \underbrace{\mathbb{E}_{y} \Big[ \log \mathbb{E}_{x^- \sim p_{\mathrm{data}}}
    \big[e^{f(x^-)^\top f(y) / \tau}\big] \Big]}_{\text{uniformity term}},

with the absolute deviation from the limit decaying as :math:`O(M^{-1/2})`. The first term is
smallest when positives coincide (perfect alignment); the second, when the embeddings are
uniform on the sphere (if such an encoder exists). They also define two metrics, alignment
:math:`\mathbb{E}\lVert f(x) - f(y)\rVert^\alpha` and uniformity
:math:`\log \mathbb{E}\, e^{-t\lVert f(x) - f(y)\rVert^2}`.

Here the data are a finite set of :math:`n` positive pairs of embeddings (rows of ``Zx`` and
``Zy``), :math:`p_{\mathrm{pos}}` is uniform over the pairs and :math:`p_{\mathrm{data}}`
uniform over the rows of ``Zx``; for that distribution :func:`contrastive_loss_limit` is
exact. Finite batches drawn from it, and how their loss approaches the limit, are in
:mod:`infonce_lib.convergence`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.special

from ._validation import (
    as_generator,
    as_int,
    as_positive_scalar,
    as_real_array,
    as_real_scalar,
    finite_or_raise,
)
from .core import _safe_mean

__all__ = [
    "ContrastiveLimit",
    "alignment",
    "contrastive_loss_limit",
    "sample_sphere_pairs",
    "sphere_log_partition",
    "uniformity",
    "unwarp_sphere",
    "warp_sphere",
]

_MAX_ENTRIES = 4_000_000  # float64 entries held at once (32 MB)
_SPAN = "the scores Zy @ Zx.T / temperature span more than 1.8e308; rescale Zx and Zy"
_POWER_HINT = "rescale Zx and Zy or use a smaller alpha"


def _pair_arrays(Zx, Zy, min_rows: int = 2) -> tuple[np.ndarray, np.ndarray]:
    A = as_real_array(Zx, "Zx", ndim=2)
    B = as_real_array(Zy, "Zy", ndim=2)
    if A.shape != B.shape:
        raise ValueError(
            f"Zx and Zy must have the same shape (row i of each is pair i); got {A.shape} "
            f"and {B.shape}"
        )
    if A.shape[0] < min_rows:
        raise ValueError(f"Zx must hold at least {min_rows} pairs (rows); got {A.shape[0]}")
    return A, B


def alignment(Zx, Zy, alpha: float = 2.0) -> float:
    r"""Wang & Isola's alignment metric: the mean distance between positives to the power α.

    .. math::

        \mathcal{L}_{\mathrm{align}}(f; \alpha) =
        \mathbb{E}_{(x, y) \sim p_{\mathrm{pos}}} \big[\lVert f(x) - f(y) \rVert_2^{\alpha}\big]
        \approx \frac1n \sum_{i=1}^{n} \lVert z^x_i - z^y_i \rVert_2^{\alpha}

    (Wang & Isola, 2020, their alignment loss; default :math:`\alpha = 2`). Lower is better
    aligned. For unit vectors and :math:`\alpha = 2` it equals
    :math:`2 - 2\,\mathbb{E}[f(x)^\top f(y)]`.

    Parameters
    ----------
    Zx, Zy : array_like, shape (n, m)
        Embeddings of the positive pairs (row ``i`` of each forms pair ``i``), ``n >= 1``;
        usually unit vectors, but any real vectors are accepted.
    alpha : float, default 2
        The power :math:`\alpha > 0`.

    Returns
    -------
    float
        The metric, ``>= 0``.

    Raises
    ------
    TypeError, ValueError
        If the arrays are not 2-D, empty, not finite or of different shapes, or ``alpha`` is
        not finite and positive; ``ValueError`` if a distance to the power :math:`\alpha`
        overflows float64. Distances beyond float64 whose powers are not, and powers that
        are each finite but whose sum overflows, give the right mean.

    Examples
    --------
    >>> round(alignment([[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]), 12)   # (2 + 0) / 2
    1.0
    """
    A, B = _pair_arrays(Zx, Zy, min_rows=1)
    a = as_positive_scalar(alpha, "alpha")
    with np.errstate(over="ignore", invalid="ignore"):
        dist = np.linalg.norm(A - B, axis=1)
        powers = dist**a
        out = float(np.mean(powers))
    if math.isfinite(out):
        return out
    if not np.isfinite(dist).all():  # A - B, or the sum of its squares, left float64
        powers = _scaled_distance_powers(A, B, a)
    finite_or_raise(powers, "the distances |Zx - Zy| to the power alpha", _POWER_HINT)
    return finite_or_raise(  # powers near 1.8e308 whose sum overflowed: their mean
        float(_safe_mean(powers)), "the mean of the distances to the power alpha", _POWER_HINT
    )


def _scaled_distance_powers(A: np.ndarray, B: np.ndarray, a: float) -> np.ndarray:
    """``|A_i - B_i| ** a`` per row without forming a distance beyond float64.

    Each row is divided by ``s_i = max(|A_i|, |B_i|)`` first (so the difference and its
    squares stay small: ``d_i = |A_i / s_i - B_i / s_i| <= 2 sqrt(m)``) and the power is
    ``s_i ** a * d_i ** a``, or ``exp(a (log s_i + log d_i))`` where a factor overflows:
    finite wherever the power is, though the distance itself need not be.
    """
    s = np.maximum(np.abs(A).max(axis=1), np.abs(B).max(axis=1))
    s[s == 0.0] = 1.0  # two zero rows: distance 0
    d = np.linalg.norm(A / s[:, None] - B / s[:, None], axis=1)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        out = s**a * d**a
        bad = ~np.isfinite(out)
        out[bad] = np.exp(a * (np.log(s[bad]) + np.log(d[bad])))
    return out


def uniformity(Z, t: float = 2.0) -> float:
    r"""Wang & Isola's uniformity metric: log of the mean Gaussian potential over distinct pairs.

    .. math::

        \mathcal{L}_{\mathrm{uniform}}(f; t) =
        \log \mathbb{E}_{x, y \overset{\text{i.i.d.}}{\sim} p_{\mathrm{data}}}
        \big[e^{-t \lVert f(x) - f(y) \rVert_2^2}\big]
        \approx \log \frac{2}{n(n-1)} \sum_{i < j} e^{-t \lVert z_i - z_j \rVert_2^2}

    (Wang & Isola, 2020, their uniformity loss; default :math:`t = 2`; the average runs over the
    :math:`n(n-1)/2` distinct pairs, as in their reference code). Lower is more uniform; it is
    ``<= 0`` and equals 0 when all embeddings coincide. The squared distances come from
    ``scipy.spatial.distance.pdist`` (differences, no cancellation) and the log-mean-exp from
    ``scipy.special.logsumexp``.

    Parameters
    ----------
    Z : array_like, shape (n, m)
        Embeddings, ``n >= 2``.
    t : float, default 2
        Scale :math:`t > 0` of the Gaussian potential.

    Returns
    -------
    float
        The metric, ``<= 0``.

    Raises
    ------
    TypeError, ValueError
        If ``Z`` is not 2-D, has fewer than 2 rows, is not finite, or ``t`` is not finite and
        positive.

    Examples
    --------
    Two antipodal unit vectors are at squared distance 4:

    >>> round(uniformity([[1.0, 0.0], [-1.0, 0.0]]), 6)   # log e^{-2 * 4}
    -8.0
    """
    A = as_real_array(Z, "Z", ndim=2)
    if A.shape[0] < 2:
        raise ValueError(f"Z must hold at least 2 embeddings (rows); got {A.shape[0]}")
    s = as_positive_scalar(t, "t")
    from scipy.spatial.distance import pdist  # imported on first use (package docstring)

    with np.errstate(over="ignore", invalid="ignore"):
        sq = pdist(A, "sqeuclidean")
        out = float(scipy.special.logsumexp(-s * sq) - math.log(sq.size))
    return finite_or_raise(
        out, "t times the squared distances between the rows of Z", "rescale Z or use a smaller t"
    )


def sphere_log_partition(dim: int, temperature: float) -> float:
    r"""Log of the mean of :math:`e^{u^\top v / \tau}` over :math:`u` uniform on the unit sphere.

    For any unit vector :math:`v` in :math:`\mathbb{R}^m` and :math:`u` uniform on
    :math:`S^{m-1}`, with :math:`\kappa = 1/\tau` and :math:`\nu = m/2 - 1`,

    .. math::

        \log \mathbb{E}_u\big[e^{\kappa\, u^\top v}\big]
        = \log \Gamma\!\left(\tfrac m2\right) + \nu \log \tfrac{2}{\kappa} + \log I_\nu(\kappa),

    the normaliser of the von Mises-Fisher distribution (:math:`I_\nu` the modified Bessel
    function of the first kind; for :math:`m = 3` it is :math:`\log(\sinh\kappa/\kappa)`).
    It is the value of the uniformity term of Wang & Isola's (2020) Theorem 1 when the
    embeddings are uniform on the sphere, the minimiser of that term when such an encoder
    exists. The mean equals :math:`{}_0F_1(; m/2; \kappa^2/4)`; it is evaluated by that
    power series when :math:`\kappa^2/4 \le m/2` (as ``log1p`` of the series minus 1, for full
    relative precision at small :math:`\kappa`), as ``log(ive) + κ``
    (``scipy.special.ive``) otherwise, by a log-space sum of the series where ``ive``
    underflows, and by the large-argument expansions of :math:`I_\nu` (Hankel's, or
    Debye's for :math:`\nu^2 > \kappa/4`) beyond :math:`\kappa \approx 10^9`, where
    ``ive`` returns NaN; so it is finite and accurate for any temperature down to
    ``1 / 1.8e308`` (for :math:`m = 3` and :math:`\tau = 10^{-300}` it is
    :math:`\kappa - \log 2\kappa`); Debye's expansion also replaces the series where
    that would need millions of terms (its largest term beyond the millionth).

    Parameters
    ----------
    dim : int
        Embedding dimension :math:`m \ge 1` (the sphere :math:`S^{m-1}`).
    temperature : float
        :math:`\tau > 0`.

    Returns
    -------
    float
        The log-partition, in :math:`[0, 1/\tau)`.

    Raises
    ------
    TypeError, ValueError
        If ``dim < 1`` or ``temperature`` is not finite and positive, or so small that
        ``1 / temperature`` overflows (below about 5.6e-309).

    Examples
    --------
    >>> k = 2.0   # m = 3, tau = 0.5
    >>> round(sphere_log_partition(3, 0.5), 12) == round(float(np.log(np.sinh(k) / k)), 12)
    True
    """
    m = as_int(dim, "dim", minimum=1)
    tau = as_positive_scalar(temperature, "temperature")
    kappa = 1.0 / tau
    if not math.isfinite(kappa):
        raise ValueError(
            f"temperature must be at least 1/1.8e308 (1/temperature overflows); got {tau}"
        )
    b, z = m / 2.0, kappa * kappa / 4.0
    if z <= b:
        # Small kappa: log1p of the series 0F1 - 1 keeps full relative precision.
        return math.log1p(_hyp0f1_minus_one(b, z))
    nu = b - 1.0
    with np.errstate(all="ignore"):
        ive = float(scipy.special.ive(nu, kappa))
    if math.isnan(ive):  # SciPy 1.17 returns NaN for kappa above about 1e9
        return math.lgamma(b) + nu * math.log(2.0 / kappa) + _log_bessel_i_large(nu, kappa)
    if ive > 1e-290:
        return math.lgamma(b) + nu * math.log(2.0 / kappa) + math.log(ive) + kappa
    # ive underflows when nu >> kappa: sum the series in log space instead, or, where its
    # largest term comes after _SERIES_MAX_PEAK terms (which needs nu > 1e4, see
    # _log_bessel_i_large), use Debye's expansion, exact at such nu.
    if 2.0 * z / (b + math.sqrt(b * b + 4.0 * z)) > _SERIES_MAX_PEAK:  # k (b + k) = z
        return math.lgamma(b) + nu * math.log(2.0 / kappa) + _log_bessel_i_large(nu, kappa)
    return _log_hyp0f1(b, z)


#: The log-space series is summed only while its largest term is among the first million
#: (it then needs about two million terms, 16 MB).
_SERIES_MAX_PEAK = 1e6


# The Debye coefficients U_k(p) of DLMF 10.41.10, as polynomials in p (lowest power first,
# every other power zero), with their denominators.
_DEBYE = (
    ((0, 3, 0, -5), 24),
    ((0, 0, 81, 0, -462, 0, 385), 1152),
    ((0, 0, 0, 30375, 0, -369603, 0, 765765, 0, -425425), 414720),
    ((0, 0, 0, 0, 4465125, 0, -94121676, 0, 349922430, 0, -446185740, 0, 185910725), 39813120),
)


def _log_bessel_i_large(nu: float, kappa: float) -> float:
    r"""``log I_nu(kappa)`` for ``kappa >= 1e9`` (where ``scipy.special.ive`` gives NaN).

    Where :math:`4\nu^2 \le \kappa`, Hankel's expansion (DLMF 10.40.1),
    :math:`I_\nu(\kappa) \sim e^\kappa (2\pi\kappa)^{-1/2} \sum_k (-1)^k a_k(\nu)
    \kappa^{-k}` with :math:`a_k/a_{k-1} = (4\nu^2 - (2k-1)^2) / (8k)`: the terms fall by a
    factor of at least ``8k``, so a few give full precision (for :math:`\nu = \pm 1/2`,
    ``dim`` 1 and 3, the first term is exact up to :math:`e^{-2\kappa}`, i.e. exactly in
    float64). Otherwise :math:`\nu > \sqrt{\kappa}/2`, at least 15000 where ``ive``
    fails, and Debye's uniform expansion (DLMF 10.41.3) in :math:`\nu` with four terms,
    each :math:`\nu^{-k}` smaller, is as exact. (The caller also uses it where ``ive``
    underflows and the power series is too long: there :math:`\nu^2 > 1336\kappa` and
    :math:`\nu > 10^4`.)
    """
    if 4.0 * nu * nu <= kappa:
        term, total, k = 1.0, 0.0, 0
        while True:
            k += 1
            term *= -(4.0 * nu * nu - (2 * k - 1) ** 2) / (8.0 * k * kappa)
            total += term
            if abs(term) <= 1e-17 * (1.0 + abs(total)):
                break
        return kappa - 0.5 * (math.log(2.0 * math.pi) + math.log(kappa)) + math.log1p(total)
    z = kappa / nu
    root = math.hypot(1.0, z)  # sqrt(1 + z^2)
    p = 1.0 / root
    eta = root + math.log(z / (1.0 + root))
    series = sum(
        np.polynomial.polynomial.polyval(p, coefs) / (den * nu ** (k + 1))
        for k, (coefs, den) in enumerate(_DEBYE)
    )
    return nu * eta - 0.5 * math.log(2.0 * math.pi * nu) - 0.5 * math.log(root) + math.log1p(series)


def _hyp0f1_minus_one(b: float, z: float) -> float:
    """``0F1(; b; z) - 1`` by its power series, for ``0 < z <= b`` (terms fall like 1/k!)."""
    term, total, k = 1.0, 0.0, 0
    while True:
        k += 1
        term *= z / ((b + k - 1.0) * k)
        total += term
        if term <= 1e-17 * total:
            return total


def _log_hyp0f1(b: float, z: float) -> float:
    """``log 0F1(; b; z)`` as a log-sum-exp of its series terms, for any ``z > 0``."""
    n_terms = 64
    while True:
        if n_terms > 1 << 22:  # never hit below _SERIES_MAX_PEAK; a guard against memory
            raise ValueError(
                f"sphere_log_partition needs more than 4 million series terms at dim = "
                f"{2 * b:g}, temperature = {1 / (2 * math.sqrt(z)):.3g}"
            )
        k = np.arange(n_terms, dtype=np.float64)
        log_terms = (
            k * math.log(z)
            - scipy.special.gammaln(b + k)
            + math.lgamma(b)
            - scipy.special.gammaln(k + 1.0)
        )
        if log_terms[-1] < log_terms.max() - 50.0 and np.all(np.diff(log_terms[-8:]) < 0):
            return float(scipy.special.logsumexp(log_terms))
        n_terms *= 2


class ContrastiveLimit(NamedTuple):
    """The large-:math:`M` limit of :math:`\\mathcal{L} - \\log M` and its two terms (nats).

    Attributes
    ----------
    alignment_term : float
        :math:`-\\frac{1}{\\tau} \\mathbb{E}[f(x)^\\top f(y)]` over the positive pairs.
    uniformity_term : float
        :math:`\\mathbb{E}_y \\log \\mathbb{E}_{x^-} e^{f(x^-)^\\top f(y)/\\tau}`.
    value : float
        Their sum, the limit.

    Examples
    --------
    Two orthogonal unit vectors, each its own positive, at :math:`\\tau = 1`:

    >>> Z = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> lim = contrastive_loss_limit(Z, Z, 1.0)
    >>> round(lim.alignment_term, 6), round(lim.uniformity_term, 6)   # -1, log((e + 1) / 2)
    (-1.0, 0.620115)
    >>> lim.value == lim.alignment_term + lim.uniformity_term
    True
    """

    alignment_term: float
    uniformity_term: float
    value: float


def contrastive_loss_limit(Zx, Zy, temperature: float) -> ContrastiveLimit:
    r"""The limit of :math:`\mathcal{L} - \log M` as the number of negatives grows (Theorem 1).

    For the finite set of :math:`n` positive pairs :math:`(z^x_i, z^y_i)`, with
    :math:`p_{\mathrm{pos}}` uniform over the pairs and the negatives drawn uniformly from
    the rows of ``Zx``, Wang & Isola's (2020) Theorem 1 limit is exactly

    .. math::

        \lim_{M \to \infty} \mathcal{L}(\tau, M) - \log M =
        -\frac{1}{n\tau} \sum_{i=1}^n z^{x\top}_i z^y_i
        + \frac1n \sum_{i=1}^n \log \frac1n \sum_{j=1}^n e^{z^{x\top}_j z^y_i / \tau},

    where :math:`\mathcal{L}(\tau, M)` is the expected loss of an anchor :math:`z^y_i` against
    its positive :math:`z^x_i` and :math:`M` negatives (softmax over the :math:`x`, as in their
    eq. 1 and this book's :math:`F_{ij} = f(x_j, y_i)`). With a batch of :math:`K` pairs,
    :math:`M = K - 1`, and :math:`\log K - \log(K-1) = O(1/K)`, so :math:`\mathcal{L} - \log K`
    has the same limit. For a sample from a population it is a plug-in estimate of the
    population's limit. The inner sums are log-sum-exps shifted by each anchor's largest
    score (no overflow), a block of anchors at a time.

    Parameters
    ----------
    Zx, Zy : array_like, shape (n, m)
        Embeddings of the positive pairs, ``n >= 2``; usually unit vectors.
    temperature : float
        :math:`\tau > 0`.

    Returns
    -------
    ContrastiveLimit
        ``alignment_term``, ``uniformity_term`` and their sum ``value``.

    Raises
    ------
    TypeError, ValueError
        If the arrays are not 2-D, have fewer than 2 rows, are not finite or differ in shape;
        if ``temperature`` is not finite and positive; ``ValueError`` if the scores
        overflow float64 or the limit itself does (a row's scores then span more than
        1.8e308). Terms whose sums overflow are averaged without overflow.

    Examples
    --------
    All embeddings equal: the loss is :math:`\log K` for every batch, so the limit is 0.

    >>> Z = np.tile([[0.0, 1.0]], (4, 1))
    >>> lim = contrastive_loss_limit(Z, Z, 0.5)
    >>> round(lim.alignment_term, 6), round(lim.uniformity_term, 6), round(lim.value, 6)
    (-2.0, 2.0, 0.0)
    """
    A, B = _pair_arrays(Zx, Zy)
    tau = as_positive_scalar(temperature, "temperature")
    return _limit_and_log_sums(A, B, tau)[0]


def _limit_and_log_sums(A: np.ndarray, B: np.ndarray, tau: float):
    """The limit of clean pairs and each anchor's ``log sum_c exp(Zy[a] . Zx[c] / tau)``."""
    n = A.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        pos = np.einsum("ij,ij->i", A, B) / tau
    finite_or_raise(pos, "the positive scores Zx . Zy / temperature")
    rows = max(1, _MAX_ENTRIES // n)
    lse = np.empty(n)
    for s in range(0, n, rows):
        with np.errstate(over="ignore", invalid="ignore"):
            F = B[s : s + rows] @ A.T
            F /= tau
        finite_or_raise(F, "the scores Zy @ Zx.T / temperature")
        row_max = F.max(axis=1)
        with np.errstate(over="ignore", invalid="ignore"):
            F -= row_max[:, None]  # every entry <= 0, the maximum exactly 0: no overflow
            np.exp(F, out=F)
            lse[s : s + rows] = np.log(F.sum(axis=1)) + row_max
    # Terms near 1.8e308 whose sums overflow are averaged without overflow (_safe_mean), so
    # the two terms are finite; only their sum can leave float64, and then some row's
    # scores span more than 1.8e308 (the sum is the mean of lse - pos, minus log n).
    align = float(-_safe_mean(pos))
    unif = float(_safe_mean(lse) - math.log(n))
    with np.errstate(over="ignore", invalid="ignore"):
        out = ContrastiveLimit(alignment_term=align, uniformity_term=unif, value=align + unif)
    finite_or_raise(out, "the limit (the alignment term plus the uniformity term)", _SPAN)
    return out, lse


def sample_sphere_pairs(
    n: int, dim: int, *, concentration: float, noise: float, seed
) -> tuple[np.ndarray, np.ndarray]:
    r"""Positive pairs of unit vectors: a spread of anchors and noisy views of them.

    .. math::

        z^x = \frac{g + c\, e_1}{\lVert g + c\, e_1 \rVert}, \qquad
        z^y = \frac{z^x + s\, \varepsilon}{\lVert z^x + s\, \varepsilon \rVert}, \qquad
        g, \varepsilon \sim \mathcal{N}(0, I_m),

    so :math:`c = 0` spreads the :math:`z^x` uniformly over the sphere :math:`S^{m-1}` and a
    large :math:`c` bunches them around :math:`e_1`, while the noise scale :math:`s` sets how
    far each positive view :math:`z^y` strays from its :math:`z^x` (a toy encoder for
    illustrating alignment and uniformity, not a model of any dataset). Draws ``g`` first,
    then :math:`\varepsilon`.

    Parameters
    ----------
    n : int
        Number of pairs, ``>= 1``.
    dim : int
        Embedding dimension :math:`m \ge 2`.
    concentration : float
        :math:`c \ge 0`.
    noise : float
        :math:`s \ge 0`.
    seed : int or numpy.random.Generator
        Source of randomness (explicit).

    Returns
    -------
    Zx, Zy : numpy.ndarray, shape (n, dim)
        Unit rows.

    Raises
    ------
    TypeError, ValueError
        On ``n < 1``, ``dim < 2``, negative or non-finite ``concentration`` or ``noise``, or
        a missing seed.

    Examples
    --------
    >>> Zx, Zy = sample_sphere_pairs(5, 3, concentration=0.0, noise=0.1, seed=0)
    >>> np.round(np.linalg.norm(Zx, axis=1), 12), Zy.shape
    (array([1., 1., 1., 1., 1.]), (5, 3))
    """
    n = as_int(n, "n", minimum=1)
    m = as_int(dim, "dim", minimum=2)
    c = as_positive_scalar(concentration, "concentration", allow_zero=True)
    s = as_positive_scalar(noise, "noise", allow_zero=True)
    rng = as_generator(seed)
    G = rng.standard_normal((n, m))
    G[:, 0] += c
    with np.errstate(over="ignore", invalid="ignore"):
        norm_g = np.linalg.norm(G, axis=1, keepdims=True)
    finite_or_raise(norm_g, "the norm of g + concentration e_1", "use a smaller concentration")
    Zx = G / norm_g
    E = rng.standard_normal((n, m))
    with np.errstate(over="ignore", invalid="ignore"):
        E *= s
        E += Zx
        norm_e = np.linalg.norm(E, axis=1, keepdims=True)
    finite_or_raise(norm_e, "the norm of z_x + noise * epsilon", "use a smaller noise")
    Zy = E / norm_e
    return Zx, Zy


def _unit_rows(Z, name: str) -> np.ndarray:
    A = as_real_array(Z, name, ndim=2)
    with np.errstate(over="ignore"):  # an infinite norm is not 1: reported below
        norms = np.linalg.norm(A, axis=1)
    if np.any(np.abs(norms - 1.0) > 1e-9):
        raise ValueError(
            f"{name} must hold unit vectors (rows of norm 1 within 1e-9); got norms from "
            f"{norms.min():.6g} to {norms.max():.6g}"
        )
    return A


def _as_shift(shift) -> float:
    c = as_real_scalar(shift, "shift")
    if not abs(c) < 1:
        raise ValueError(f"shift must satisfy |shift| < 1 (the map is then a bijection); got {c}")
    return c


def warp_sphere(Z, shift: float) -> np.ndarray:
    r"""A smooth invertible map of the unit sphere onto itself that bunches points near :math:`e_1`.

    .. math::

        w = \frac{u + c\, e_1}{\lVert u + c\, e_1 \rVert}, \qquad |c| < 1 .

    The sphere shifted by :math:`c\, e_1` still contains the origin, so every ray from the
    origin meets it exactly once: the map is a bijection of :math:`S^{m-1}`, undone by
    :func:`unwarp_sphere`. Applied to both views of a pair it leaves their mutual
    information unchanged (information is invariant under invertible maps of each variable)
    while it changes alignment, uniformity and the limit of :func:`contrastive_loss_limit`:
    an executable version of the point of Tschannen et al. (2020) that mutual information
    alone cannot tell such representations apart.

    Parameters
    ----------
    Z : array_like, shape (n, m)
        Unit vectors (norm 1 within 1e-9), ``m >= 1``.
    shift : float
        :math:`c`, with :math:`|c| < 1`.

    Returns
    -------
    numpy.ndarray, shape (n, m)
        Unit vectors.

    Raises
    ------
    TypeError, ValueError
        If ``Z`` is not 2-D, not finite or not unit rows, or :math:`|c| \ge 1`.

    Examples
    --------
    >>> W = warp_sphere([[0.0, 1.0], [-1.0, 0.0]], 0.5)
    >>> np.round(W, 4)
    array([[ 0.4472,  0.8944],
           [-1.    ,  0.    ]])
    >>> np.round(unwarp_sphere(W, 0.5), 12) + 0.0
    array([[ 0.,  1.],
           [-1.,  0.]])
    """
    A = _unit_rows(Z, "Z")
    c = _as_shift(shift)
    W = A.copy()
    W[:, 0] += c
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    return W


def unwarp_sphere(W, shift: float) -> np.ndarray:
    r"""The inverse of :func:`warp_sphere`.

    For a unit vector :math:`w`, the point :math:`u` of the unit sphere with
    :math:`u + c\, e_1 = t\, w`, :math:`t > 0`, is

    .. math::

        u = t\, w - c\, e_1, \qquad t = c\, w_1 + \sqrt{1 - c^2 + c^2 w_1^2} .

    Parameters
    ----------
    W : array_like, shape (n, m)
        Unit vectors.
    shift : float
        The :math:`c` given to :func:`warp_sphere`, :math:`|c| < 1`.

    Returns
    -------
    numpy.ndarray, shape (n, m)
        Unit vectors.

    Raises
    ------
    TypeError, ValueError
        As :func:`warp_sphere`.

    Examples
    --------
    >>> Z = np.array([[0.6, 0.8], [0.0, -1.0]])
    >>> bool(np.allclose(unwarp_sphere(warp_sphere(Z, -0.7), -0.7), Z, atol=1e-14))
    True
    """
    A = _unit_rows(W, "W")
    c = _as_shift(shift)
    w1 = A[:, 0]
    t = c * w1 + np.sqrt((1.0 - c * c) + (c * w1) ** 2)
    U = A * t[:, None]
    U[:, 0] -= c
    return U
