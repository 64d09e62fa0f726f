r"""The limits of InfoNCE: correlated Gaussians, saturation at log K, a non-Gaussian channel.

Chapter 5 of the book. Three things live here, all about the same data:

* **Correlated Gaussian pairs.** ``d`` independent coordinate pairs
  :math:`(x_k, y_k)`, each standard bivariate normal with correlation :math:`\rho`:
  :math:`x \sim \mathcal{N}(0, I_d)`, :math:`y = \rho x + \sqrt{1 - \rho^2}\,\varepsilon`. Their
  mutual information is known exactly, :math:`I = -\tfrac{d}{2} \ln(1 - \rho^2)` nats; these
  are the test distributions of Poole et al. (2019) and McAllester & Stratos
  (2020, Table 1).
* **InfoNCE with the optimal critic** :math:`f(x, y) = \log p(y \mid x)`, batch by batch. Every
  batch value is at most :math:`\log K` (Poole et al., 2019), so the bias
  :math:`I - I_{\mathrm{NCE}}` grows with :math:`I` once :math:`I` passes :math:`\log K`.
* **A binary-input Gaussian channel**, whose output is not Gaussian: its exact information
  shows the difference-of-entropies estimate of :mod:`infonce_lib.doe` overshooting the
  truth.

The high-confidence bounds of the chapter (Hoeffding's for InfoNCE, Fisher's within the
Gaussian family) are in :mod:`infonce_lib.confidence`.

``python -m infonce_lib reproduce mcallester-stratos`` runs
:mod:`infonce_lib.experiments.mcallester_stratos`.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import (
    as_generator,
    as_int,
    as_positive_scalar,
    as_real_array,
    as_real_scalar,
    finite_or_raise,
)
from .core import _positive_log_probs

__all__ = [
    "binary_channel_information",
    "correlated_gaussian_critic",
    "correlated_gaussian_infonce",
    "correlated_gaussian_infonce_levels",
    "correlated_gaussian_information",
    "correlated_gaussian_rho",
    "sample_binary_channel",
    "sample_correlated_gaussian",
]

# Scores of at most this many float64 entries (32 MB) are held at once.
_MAX_SCORE_ENTRIES = 4_000_000


# ---------------------------------------------------------------- validation helpers


def _as_rho(rho) -> float:
    out = as_real_scalar(rho, "rho")
    if not abs(out) < 1:
        raise ValueError(
            f"rho must satisfy |rho| < 1 (at |rho| = 1 the information is infinite); got {out}"
        )
    return out


def _one_minus_rho2(rho: float) -> float:
    """:math:`1 - \\rho^2` as :math:`(1 - \\rho)(1 + \\rho)`: accurate as :math:`|\\rho| \\to 1`."""
    return (1.0 - rho) * (1.0 + rho)


# ---------------------------------------------------------------- correlated Gaussians


def correlated_gaussian_information(rho: float, dim: int) -> float:
    r"""Exact mutual information of ``dim`` independent coordinate pairs of correlation ``rho``.

    .. math::

        I(X; Y) = -\frac{d}{2} \ln(1 - \rho^2) \quad \text{nats}

    (each pair contributes :math:`-\tfrac12 \ln(1 - \rho^2)`, the information of a standard
    bivariate normal with correlation :math:`\rho`; the setting of Poole et al., 2019,
    Fig. 3, and McAllester & Stratos, 2020, Table 1).

    Parameters
    ----------
    rho : float
        Correlation of each coordinate pair, :math:`|\rho| < 1`.
    dim : int
        Number of coordinate pairs :math:`d \ge 1`.

    Returns
    -------
    float
        The information in nats, ``>= 0``.

    Raises
    ------
    TypeError
        If ``rho`` is not a real number or ``dim`` not an integer.
    ValueError
        If :math:`|\rho| \ge 1`, ``rho`` is not finite, or ``dim < 1``.

    Examples
    --------
    The three Gaussians of McAllester & Stratos (2020, Table 1):

    >>> [round(correlated_gaussian_information(r, 128), 2) for r in (0.25, 0.5, 0.9)]
    [4.13, 18.41, 106.29]
    """
    r = _as_rho(rho)
    d = as_int(dim, "dim", minimum=1)
    # ln(1 - rho^2): log1p(-rho^2) is accurate for small |rho| (the split below would cancel
    # there); ln(1 - rho) + ln(1 + rho) is accurate as |rho| -> 1 (1 - rho^2 would round).
    log_1m_r2 = math.log1p(-r * r) if abs(r) < 0.5 else math.log1p(-r) + math.log1p(r)
    return 0.0 - 0.5 * d * log_1m_r2  # 0.0 - : never -0.0


def correlated_gaussian_rho(information: float, dim: int) -> float:
    r"""The correlation that gives ``dim`` coordinate pairs a total information ``information``.

    The inverse of :func:`correlated_gaussian_information`:

    .. math::

        \rho = \sqrt{1 - e^{-2I/d}} .

    Parameters
    ----------
    information : float
        Target information :math:`I \ge 0` in nats.
    dim : int
        Number of coordinate pairs :math:`d \ge 1`.

    Returns
    -------
    float
        :math:`\rho \in [0, 1)`.

    Raises
    ------
    TypeError, ValueError
        If ``information`` is negative or not finite, ``dim < 1``, or the information is so
        large that :math:`\rho` rounds to 1 in float64.

    Examples
    --------
    >>> rho = correlated_gaussian_rho(10.0, 20)   # Poole et al.'s 20-dimensional Gaussian
    >>> round(rho, 6), round(correlated_gaussian_information(rho, 20), 12)
    (0.79506, 10.0)
    """
    info = as_positive_scalar(information, "information", allow_zero=True)
    d = as_int(dim, "dim", minimum=1)
    rho = math.sqrt(-math.expm1(-2.0 * info / d))
    if not rho < 1:
        raise ValueError(
            f"information = {info} nats over dim = {d} pairs needs a correlation that rounds "
            "to 1 in float64; use more dimensions"
        )
    return rho


def sample_correlated_gaussian(n: int, rho: float, dim: int, seed) -> tuple[np.ndarray, np.ndarray]:
    r"""Draw ``n`` pairs of ``dim``-dimensional correlated Gaussian vectors.

    .. math::

        x \sim \mathcal{N}(0, I_d), \qquad
        y = \rho\, x + \sqrt{1 - \rho^2}\, \varepsilon, \quad \varepsilon \sim \mathcal{N}(0, I_d),

    so each coordinate pair :math:`(x_k, y_k)` is standard bivariate normal with correlation
    :math:`\rho`, and the pairs are independent (as in Poole et al., 2019). The
    generator draws all of ``x`` first, then all of :math:`\varepsilon`.

    Parameters
    ----------
    n : int
        Number of pairs, ``>= 1``.
    rho : float
        Correlation, :math:`|\rho| < 1`.
    dim : int
        Dimension :math:`d \ge 1`.
    seed : int or numpy.random.Generator
        Source of randomness (explicit; ``None`` is refused).

    Returns
    -------
    X, Y : numpy.ndarray, shape (n, dim)
        Row ``i`` of ``X`` and row ``i`` of ``Y`` form pair ``i``.

    Raises
    ------
    TypeError, ValueError
        On a bad ``rho`` (:math:`|\rho| \ge 1`), ``n < 1``, ``dim < 1`` or a missing seed.

    Examples
    --------
    >>> X, Y = sample_correlated_gaussian(100_000, 0.5, 2, seed=0)
    >>> X.shape, round(float(np.corrcoef(X[:, 0], Y[:, 0])[0, 1]), 2)
    ((100000, 2), 0.5)
    """
    r = _as_rho(rho)
    n = as_int(n, "n", minimum=1)
    d = as_int(dim, "dim", minimum=1)
    rng = as_generator(seed)
    X = rng.standard_normal((n, d))
    Y = rng.standard_normal((n, d))
    Y *= math.sqrt(_one_minus_rho2(r))
    Y += r * X
    return X, Y


def _critic_unchecked(X: np.ndarray, Y: np.ndarray, rho: float) -> np.ndarray:
    d = X.shape[-1]
    s2 = _one_minus_rho2(rho)
    # ||y_i - rho x_j||^2 = ||y_i||^2 - 2 rho <y_i, x_j> + rho^2 ||x_j||^2, all pairs at once.
    F = np.matmul(Y, np.swapaxes(X, -1, -2))
    F *= 2.0 * rho
    F -= np.einsum("...id,...id->...i", Y, Y)[..., :, None]
    F -= (rho * rho) * np.einsum("...jd,...jd->...j", X, X)[..., None, :]
    F /= 2.0 * s2
    F -= 0.5 * d * math.log(2.0 * math.pi * s2)
    return F


def correlated_gaussian_critic(X, Y, rho: float) -> np.ndarray:
    r"""The optimal critic :math:`f(x, y) = \log p(y \mid x)` for every pairing in a batch.

    For correlated Gaussian pairs (:func:`sample_correlated_gaussian`),

    .. math::

        F_{ij} = \log p(y_i \mid x_j)
        = -\frac{d}{2} \ln\!\big(2\pi (1 - \rho^2)\big)
          - \frac{\lVert y_i - \rho\, x_j \rVert^2}{2 (1 - \rho^2)},

    computed for all :math:`K^2` pairings with one matrix product (the squared distance is
    expanded as :math:`\lVert y_i\rVert^2 - 2\rho\, y_i^\top x_j + \rho^2 \lVert x_j \rVert^2`).
    Any critic :math:`\log p(y \mid x) + c(y)` is optimal for InfoNCE with the softmax over
    the :math:`x_j` (Poole et al., 2019); this one has :math:`c = 0`.

    Parameters
    ----------
    X, Y : array_like, shape (..., K, d)
        A batch (or a stack of batches) of pairs: row ``i`` of ``X`` and of ``Y`` form pair
        ``i``. Computed in float64; not modified.
    rho : float
        The correlation the pairs were drawn with, :math:`|\rho| < 1`.

    Returns
    -------
    numpy.ndarray, shape (..., K, K)
        Critic scores with ``F[..., i, j] = f(x_j, y_i)``: rows are the :math:`y_i`, columns
        the candidate :math:`x_j`, positives on the diagonal.

    Raises
    ------
    TypeError, ValueError
        If ``X`` or ``Y`` is not at least 2-D, empty, not finite, or their shapes differ; on
        a bad ``rho``.

    Examples
    --------
    >>> X = np.array([[1.0], [0.0]]); Y = np.array([[0.5], [2.0]])
    >>> F = correlated_gaussian_critic(X, Y, 0.5)   # F[i, j] = log N(y_i; 0.5 x_j, 0.75)
    >>> from scipy.stats import norm
    >>> bool(np.isclose(F[1, 0], norm.logpdf(2.0, loc=0.5, scale=np.sqrt(0.75))))
    True
    """
    r = _as_rho(rho)
    A = as_real_array(X, "X")
    B = as_real_array(Y, "Y")
    if A.ndim < 2:
        raise ValueError(f"X must be at least 2-D (..., K, d); got shape {A.shape}")
    if A.shape != B.shape:
        raise ValueError(f"X and Y must have the same shape; got {A.shape} and {B.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        F = _critic_unchecked(A, B, r)
    return finite_or_raise(F, "the critic scores log p(y_i | x_j) of X and Y", "rescale X and Y")


def _infonce_from_scores(scores: np.ndarray) -> np.ndarray:
    r"""Per-batch InfoNCE, :math:`\log K + \frac1K \sum_i \log \mathrm{softmax}_j(F_{ij})|_{j=i}`.

    ``scores`` has shape ``(..., K, K)`` with ``F[..., i, j] = f(x_j, y_i)`` (softmax over the
    :math:`x_j`, the last axis; Poole et al., 2019). The array is used as scratch
    space and destroyed: pass only arrays created here (chapter 3's
    :func:`~infonce_lib.infonce_bound` is the public form, which leaves its input intact).
    """
    k = scores.shape[-1]
    return math.log(k) + _positive_log_probs(scores, overwrite=True).mean(axis=-1)


def correlated_gaussian_infonce(
    rho: float, dim: int, batch_size: int, n_batches: int, seed
) -> np.ndarray:
    r"""InfoNCE with the optimal critic on fresh batches of correlated Gaussian pairs.

    Each batch holds :math:`K` pairs from :func:`sample_correlated_gaussian`; its value is

    .. math::

        I_{\mathrm{NCE}} = \frac{1}{K} \sum_{i=1}^{K}
        \log \frac{e^{f(x_i, y_i)}}{\frac1K \sum_{j=1}^{K} e^{f(x_j, y_i)}}
        \;\le\; \log K,

    with :math:`f(x, y) = \log p(y \mid x)` (:func:`correlated_gaussian_critic`; Poole et al.,
    2019). Its expectation is a lower bound on :math:`I(X; Y)`; every single batch is
    at most :math:`\log K`, so the bound saturates.

    Parameters
    ----------
    rho : float
        Correlation, :math:`|\rho| < 1`.
    dim : int
        Dimension :math:`d \ge 1`.
    batch_size : int
        :math:`K \ge 2` pairs per batch (each :math:`y_i` sees :math:`K` candidates).
    n_batches : int
        Number of independent batches, ``>= 1``.
    seed : int or numpy.random.Generator
        Source of randomness (explicit). Batch ``b`` holds pairs ``b K`` to ``(b + 1) K - 1``
        of ``sample_correlated_gaussian(n_batches * K, rho, dim, seed)``; the scores are
        computed a block of batches at a time (at most 32 MB), without the terms of
        :math:`f(x_j, y_i)` that depend on :math:`i` alone, which cancel in the softmax.

    Returns
    -------
    numpy.ndarray, shape (n_batches,)
        One InfoNCE value per batch, in nats, each ``<= log(batch_size)``.

    Raises
    ------
    TypeError, ValueError
        On :math:`|\rho| \ge 1`, ``dim < 1``, ``batch_size < 2``, ``n_batches < 1`` or a
        missing seed.

    Examples
    --------
    >>> v = correlated_gaussian_infonce(0.9, 128, 128, 20, seed=0)   # I = 106.29 nats
    >>> bool(np.all(v <= np.log(128))), round(float(np.log(128) - v.mean()), 6)
    (True, 0.0)
    """
    r = _as_rho(rho)
    d = as_int(dim, "dim", minimum=1)
    k = as_int(batch_size, "batch_size", minimum=2)
    nb = as_int(n_batches, "n_batches", minimum=1)
    X, Y = sample_correlated_gaussian(nb * k, r, d, seed)
    X = X.reshape(nb, k, d)
    Y = Y.reshape(nb, k, d)
    chunk = max(1, min(nb, _MAX_SCORE_ENTRIES // (k * k)))
    out = np.empty(nb)
    for start in range(0, nb, chunk):
        stop = start + chunk
        out[start:stop] = _infonce_from_scores(_softmax_scores(X[start:stop], Y[start:stop], r))
    return out


def correlated_gaussian_infonce_levels(
    rhos, dim: int, batch_size: int, n_batches: int, seed
) -> np.ndarray:
    r"""InfoNCE with the optimal critic at several correlations, on common random numbers.

    One draw of :math:`x` and :math:`\varepsilon` serves every correlation
    :math:`\rho_\ell`: the pairs of level :math:`\ell` are
    :math:`y = \rho_\ell x + \sqrt{1 - \rho_\ell^2}\, \varepsilon`, so row :math:`\ell`
    holds the values :func:`correlated_gaussian_infonce` returns for :math:`\rho_\ell` from
    the same seed (to rounding), the curve of Poole et al. (2019) on one sample.
    The levels differ only by :math:`\rho`, so the differences between levels are far
    less noisy than each level (common random numbers). Dropping the terms that cancel in
    the softmax, the scores are

    .. math::

        G_{ij} = \frac{\rho^2}{1 - \rho^2}\Big(x_i^\top x_j - \tfrac12 \lVert x_j \rVert^2\Big)
        + \frac{\rho}{\sqrt{1 - \rho^2}}\, \varepsilon_i^\top x_j ,

    two matrix products per batch for all the levels, and each batch value is
    :math:`\log K + \frac1K \sum_i \log \mathrm{softmax}_j(G_{ij})|_{j=i} \le \log K`.

    Parameters
    ----------
    rhos : array_like, shape (L,)
        Correlations, each :math:`|\rho| < 1`.
    dim : int
        Dimension :math:`d \ge 1`.
    batch_size : int
        :math:`K \ge 2` pairs per batch.
    n_batches : int
        Number of independent batches, ``>= 1``.
    seed : int or numpy.random.Generator
        Source of randomness (explicit). It draws ``x`` and then :math:`\varepsilon`, each of
        shape ``(n_batches * K, dim)``, as :func:`sample_correlated_gaussian` does; batch
        ``b`` holds pairs ``b K`` to ``(b + 1) K - 1``. The products are computed a block of
        batches at a time (four arrays of at most 32 MB).

    Returns
    -------
    numpy.ndarray, shape (L, n_batches)
        ``out[l, b]``: the InfoNCE value of batch ``b`` at ``rhos[l]``, in nats, each
        ``<= log(batch_size)``.

    Raises
    ------
    TypeError, ValueError
        If ``rhos`` is not a non-empty 1-D array of finite reals with :math:`|\rho| < 1`; on
        ``dim < 1``, ``batch_size < 2``, ``n_batches < 1`` or a missing seed.

    Examples
    --------
    >>> v = correlated_gaussian_infonce_levels([0.0, 0.5, 0.9], 4, 8, 3, seed=1)
    >>> v.shape, bool(np.all(v[0] == 0.0)), bool(np.all(v <= np.log(8)))
    ((3, 3), True, True)
    >>> w = correlated_gaussian_infonce(0.5, 4, 8, 3, seed=1)   # the same draws
    >>> bool(np.allclose(v[1], w, rtol=1e-12, atol=1e-12))
    True
    """
    r = as_real_array(rhos, "rhos", ndim=1)
    if not np.all(np.abs(r) < 1):
        raise ValueError(
            f"rhos must satisfy |rho| < 1 (at |rho| = 1 the information is infinite); got "
            f"{r[~(np.abs(r) < 1)][0]}"
        )
    d = as_int(dim, "dim", minimum=1)
    k = as_int(batch_size, "batch_size", minimum=2)
    nb = as_int(n_batches, "n_batches", minimum=1)
    rng = as_generator(seed)
    X = rng.standard_normal((nb * k, d)).reshape(nb, k, d)
    E = rng.standard_normal((nb * k, d)).reshape(nb, k, d)
    chunk = max(1, min(nb, _MAX_SCORE_ENTRIES // (k * k)))
    out = np.empty((r.size, nb))
    for start in range(0, nb, chunk):
        stop = start + chunk
        Xt = np.swapaxes(X[start:stop], -1, -2)
        H = np.matmul(X[start:stop], Xt)  # x_i . x_j - |x_j|^2 / 2, then minus its diagonal
        H -= 0.5 * np.einsum("...jd,...jd->...j", X[start:stop], X[start:stop])[..., None, :]
        H -= np.diagonal(H, axis1=-2, axis2=-1).copy()[..., :, None]
        Q = np.matmul(E[start:stop], Xt)  # eps_i . x_j, minus its diagonal
        Q -= np.diagonal(Q, axis1=-2, axis2=-1).copy()[..., :, None]
        G, work = np.empty_like(H), np.empty_like(H)
        for level, rho in enumerate(r.tolist()):
            s2 = _one_minus_rho2(rho)
            _combine(H, Q, rho * rho / s2, rho / math.sqrt(s2), G, work)
            values = _infonce_from_shifted_scores(G)
            if values is None:  # a score exp(G_ij - G_ii) overflowed: shift by the row maximum
                _combine(H, Q, rho * rho / s2, rho / math.sqrt(s2), G, work)
                values = _infonce_from_scores(G)
            out[level, start:stop] = values
    return out


def _combine(H: np.ndarray, Q: np.ndarray, a: float, b: float, G: np.ndarray, work) -> None:
    """``G = a H + b Q`` in place, with ``work`` as scratch (no new arrays)."""
    np.multiply(H, a, out=G)
    np.multiply(Q, b, out=work)
    G += work


def _infonce_from_shifted_scores(G: np.ndarray) -> np.ndarray | None:
    r"""Per-batch InfoNCE from scores shifted so that each positive is 0; ``None`` on overflow.

    With :math:`G_{ii} = 0`, :math:`\log p_i = -\log \sum_j e^{G_{ij}}`; the sum includes
    :math:`e^0 = 1`, so every value is at most :math:`\log K` exactly, without the pass that
    finds each row's maximum. If a negative's score exceeds the positive's by more than
    709 nats, a sum overflows and the caller shifts by the row maximum instead. ``G`` is
    used as scratch space.
    """
    with np.errstate(over="ignore"):
        np.exp(G, out=G)
        sums = G.sum(axis=-1)
    if not np.isfinite(sums).all():
        return None
    return math.log(G.shape[-1]) - np.log(sums).mean(axis=-1)


def _softmax_scores(X: np.ndarray, Y: np.ndarray, rho: float) -> np.ndarray:
    r"""The critic's scores up to a constant per row, which the softmax over the x_j ignores.

    :math:`F_{ij} = G_{ij} + c_i` with :math:`G_{ij} = \frac{\rho}{1 - \rho^2}\, y_i^\top x_j
    - \frac{\rho^2}{2(1 - \rho^2)} \lVert x_j \rVert^2` and :math:`c_i` the terms in
    :math:`\lVert y_i \rVert^2` and the normaliser: one matrix product with the scale folded
    into :math:`Y` and one subtraction, instead of the five passes over the scores that
    :func:`correlated_gaussian_critic` makes.
    """
    s2 = _one_minus_rho2(rho)
    G = np.matmul(Y * (rho / s2), np.swapaxes(X, -1, -2))
    G -= (0.5 * rho * rho / s2) * np.einsum("...jd,...jd->...j", X, X)[..., None, :]
    return G


# ---------------------------------------------------------------- a non-Gaussian example


def sample_binary_channel(n: int, sigma: float, dim: int, seed) -> tuple[np.ndarray, np.ndarray]:
    r"""Draw ``n`` pairs from a binary-input Gaussian channel in ``dim`` coordinates.

    .. math::

        x_k \in \{-1, +1\} \text{ uniformly}, \qquad y = x + \sigma \varepsilon, \quad
        \varepsilon \sim \mathcal{N}(0, I_d),

    independently over the ``dim`` coordinates. :math:`Y \mid X` is Gaussian, but :math:`Y`
    itself is a mixture of two Gaussians per coordinate: a Gaussian model of :math:`Y` is
    mis-specified. The generator draws the signs first, then :math:`\varepsilon`.

    Parameters
    ----------
    n : int
        Number of pairs, ``>= 1``.
    sigma : float
        Noise scale :math:`\sigma > 0`.
    dim : int
        Dimension :math:`d \ge 1`.
    seed : int or numpy.random.Generator
        Source of randomness (explicit).

    Returns
    -------
    X, Y : numpy.ndarray, shape (n, dim)

    Raises
    ------
    TypeError, ValueError
        On ``n < 1``, ``dim < 1``, a non-positive or non-finite ``sigma`` or a missing seed.

    Examples
    --------
    >>> X, Y = sample_binary_channel(3, 0.5, 2, seed=0)
    >>> sorted(set(X.ravel().tolist())) <= [-1.0, 1.0], Y.shape
    (True, (3, 2))
    """
    n = as_int(n, "n", minimum=1)
    s = as_positive_scalar(sigma, "sigma")
    d = as_int(dim, "dim", minimum=1)
    rng = as_generator(seed)
    X = 2.0 * rng.integers(0, 2, size=(n, d)).astype(np.float64) - 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        Y = X + s * rng.standard_normal((n, d))
    if s > 1e290:  # only then can sigma * noise overflow
        finite_or_raise(Y, "y = x + sigma * noise", "use a smaller sigma")
    return X, Y


def binary_channel_information(sigma: float, dim: int) -> float:
    r"""Exact mutual information of :func:`sample_binary_channel`'s binary-input channel.

    Per coordinate, with :math:`x = \pm 1` equally likely and :math:`y = x + \sigma z`, the
    posterior log-odds of the wrong sign are :math:`-2y/\sigma^2`, so

    .. math::

        I(X; Y) = d \left( \ln 2 - \mathbb{E}_{z \sim \mathcal{N}(0, 1)}
        \left[ \ln\!\left(1 + e^{-2(1 + \sigma z)/\sigma^2}\right) \right] \right)
        \;\le\; d \ln 2,

    evaluated by adaptive quadrature (``scipy.integrate.quad``, absolute error below
    ``1e-12`` per coordinate). The Gaussian channel with the same input power carries
    :math:`\tfrac{d}{2}\ln(1 + 1/\sigma^2)`, more than this: that is the value a DoE estimate
    with Gaussian models tends to, so DoE overshoots here.

    Parameters
    ----------
    sigma : float
        Noise scale :math:`\sigma > 0`.
    dim : int
        Dimension :math:`d \ge 1`.

    Returns
    -------
    float
        The information in nats, in :math:`[0, d \ln 2]` (a rounding error that would take
        it below 0 gives 0).

    Raises
    ------
    TypeError, ValueError
        If ``sigma`` is not a number in ``[1e-150, 1e150]`` or ``dim < 1``.

    Examples
    --------
    >>> round(binary_channel_information(1e-3, 1) / math.log(2), 6)   # noiseless: one bit
    1.0
    >>> round(binary_channel_information(0.5, 8), 4), round(4 * math.log(1 + 1 / 0.25), 4)
    (5.0618, 6.4378)
    """
    s = as_positive_scalar(sigma, "sigma")
    d = as_int(dim, "dim", minimum=1)
    if not 1e-150 <= s <= 1e150:
        raise ValueError(
            f"sigma must lie in [1e-150, 1e150] (beyond, I equals its limits d ln 2 and 0 to "
            f"float64 precision and the quadrature overflows); got {s}"
        )

    import scipy.integrate  # imported on first use (see the package docstring)

    inv_sqrt_2pi = 1.0 / math.sqrt(2.0 * math.pi)

    def integrand(z: float) -> float:  # the standard normal density times the log-odds term
        density = inv_sqrt_2pi * math.exp(-0.5 * z * z)
        return density * float(np.logaddexp(0.0, -2.0 * (1.0 + s * z) / (s * s)))

    # Split at the point where the log-odds change sign (z = -1/sigma), where the
    # integrand bends; quad then converges to near machine precision.
    left, _ = scipy.integrate.quad(integrand, -np.inf, -1.0 / s, epsabs=1e-14, epsrel=1e-13)
    right, _ = scipy.integrate.quad(integrand, -1.0 / s, np.inf, epsabs=1e-14, epsrel=1e-13)
    # For large sigma the information (about d / 2 sigma^2) is a difference of two numbers
    # near ln 2, which rounding can push a few 1e-16 below 0. (It cannot exceed ln 2: the
    # integrand is never negative.)
    return d * max(math.log(2.0) - (left + right), 0.0)
