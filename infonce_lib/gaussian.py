r"""Gaussian patches: a field whose mutual information is known exactly.

The data of chapter 3's central experiment (and of chapters 4 and 5). A patch
:math:`x \in \mathbb{R}^d` is an ``side x side`` window of a stationary Gaussian random field
with unit variance and squared-exponential covariance

.. math::

    C_{ab} = \exp\!\Big(-\frac{\lVert p_a - p_b \rVert^2}{2 \ell^2}\Big),
    \qquad p_a = (a \,//\, \text{side},\; a \bmod \text{side}),

pixels in row-major order (:math:`d = \text{side}^2`). Its noisy view is
:math:`y = x + \sigma \varepsilon` with :math:`\varepsilon \sim \mathcal{N}(0, I_d)`. Because
everything is Gaussian, the mutual information is exact:

.. math::

    I(X; Y) = \tfrac12 \sum_k \log\!\Big(1 + \frac{\lambda_k}{\sigma^2}\Big)
            = \tfrac12 \big(\log\det C + \log\det C_y - \log\det J\big),

with :math:`\lambda_k` the eigenvalues of :math:`C`, :math:`C_y = C + \sigma^2 I` and
:math:`J` the joint covariance of :math:`(x, y)`. So are the densities
:math:`p(y \mid x) = \mathcal{N}(y; x, \sigma^2 I)` and :math:`p(y) = \mathcal{N}(y; 0, C_y)`,
which give the optimal critic of Poole et al. (2019, their multi-sample bound).

The sampling protocol is fixed so that anyone can reproduce the book's tables:
``numpy.linalg.eigh`` of :math:`C` (tiny negative eigenvalues clipped to 0),
:math:`L = U \operatorname{diag}(\sqrt{\lambda})\, U^\top` (the symmetric square root of
:math:`C`), :math:`x = z L^\top` with ``z`` drawn first and :math:`\varepsilon` second from one
``numpy.random.default_rng(seed)``. The symmetric square root matters: :math:`C` has repeated
eigenvalues (the grid's symmetries), so the eigenvectors that ``eigh`` returns inside a repeated
eigenspace depend on the LAPACK build and the processor, and a factor
:math:`U \operatorname{diag}(\sqrt{\lambda})` would draw different samples on different
machines. :math:`U \operatorname{diag}(\sqrt{\lambda})\, U^\top` does not depend on that choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import (
    as_generator,
    as_int,
    as_positive_scalar,
    as_real_array,
    check_same_shape,
    finite_or_raise,
)

__all__ = [
    "GaussianField",
    "field_covariance",
    "gaussian_field",
    "gaussian_mutual_information",
    "log_density_ratio_scores",
    "log_p_y",
    "log_p_y_given_x",
    "optimal_critic_scores",
    "patch_information",
    "patch_information_logdet",
    "sample_patch_pairs",
    "sigma_for_information",
]

_LOG_2PI = math.log(2 * math.pi)
_SCALE_HINT = "rescale the data or use a larger sigma"


def field_covariance(side: int = 8, length_scale: float = 1.5) -> np.ndarray:
    r"""Pixel covariance of a ``side x side`` patch of a squared-exponential Gaussian field.

    .. math::

        C_{ab} = \exp\!\Big(-\frac{\lVert p_a - p_b \rVert^2}{2 \ell^2}\Big),
        \qquad p_a = (a \,//\, \text{side},\; a \bmod \text{side})

    Unit variance (:math:`C_{aa} = 1`); pixels in row-major order.

    Parameters
    ----------
    side : int, default 8
        Patch side in pixels (``>= 1``); :math:`d = \text{side}^2`.
    length_scale : float, default 1.5
        :math:`\ell > 0`, in pixels.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        Symmetric positive semi-definite, float64.

    Raises
    ------
    TypeError, ValueError
        If ``side`` is not an integer ``>= 1`` or ``length_scale`` is not finite and positive.

    Examples
    --------
    >>> C = field_covariance(2, 1.0)
    >>> np.round(C[0], 4)  # pixel (0, 0) against (0, 0), (0, 1), (1, 0), (1, 1)
    array([1.    , 0.6065, 0.6065, 0.3679])
    """
    side = as_int(side, "side", minimum=1)
    ell = as_positive_scalar(length_scale, "length_scale")
    a = np.arange(side * side)
    coords = np.stack([a // side, a % side], axis=1).astype(np.float64)
    diff = coords[:, None, :] - coords[None, :, :]
    sq = np.einsum("abk,abk->ab", diff, diff)
    # For length scales below about 1e-154, 2 l^2 underflows: the off-diagonal entries are
    # then exp(-inf) = 0 (as they already are, exactly, for any l < 0.026) and the diagonal
    # 0 / 0; it is exp(0) = 1 for every l, so it is set by index.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        C = np.exp(-sq / (2.0 * ell * ell))
    np.fill_diagonal(C, 1.0)
    return C


@dataclass(frozen=True)
class GaussianField:
    """A patch covariance and the factors the sampler and the densities use.

    Attributes
    ----------
    covariance : numpy.ndarray, shape (d, d)
        :math:`C`.
    eigenvalues : numpy.ndarray, shape (d,)
        Eigenvalues of :math:`C` from ``numpy.linalg.eigh`` (ascending), negative round-off
        clipped to 0.
    eigenvectors : numpy.ndarray, shape (d, d)
        :math:`U`, columns are eigenvectors.
    factor : numpy.ndarray, shape (d, d)
        :math:`L = U \\operatorname{diag}(\\sqrt{\\lambda})\\, U^\\top`, the symmetric square root,
        so that :math:`L L^\\top = C`; unlike :math:`U`, it does not depend on which basis
        ``eigh`` picks inside a repeated eigenspace.

    All arrays are read-only.

    Examples
    --------
    >>> f = gaussian_field(side=2, length_scale=1.0)
    >>> f.dim, f.covariance.shape, f.covariance.flags.writeable
    (4, (4, 4), False)
    >>> np.round(f.eigenvalues, 4)  # (1 - a)^2, 1 - a^2 (twice), (1 + a)^2 with a = e^{-1/2}
    array([0.1548, 0.6321, 0.6321, 2.5809])
    """

    covariance: np.ndarray
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    factor: np.ndarray

    @property
    def dim(self) -> int:
        """Number of pixels :math:`d`."""
        return int(self.covariance.shape[0])


def gaussian_field(side: int = 8, length_scale: float = 1.5) -> GaussianField:
    r"""The squared-exponential field of :func:`field_covariance`, eigendecomposed.

    ``numpy.linalg.eigh`` gives :math:`C = U \operatorname{diag}(\lambda) U^\top`; eigenvalues
    below 0 (round-off) are clipped to 0 and
    :math:`L = U \operatorname{diag}(\sqrt\lambda)\, U^\top`, the symmetric square root (the same
    on every machine, whatever basis ``eigh`` returns inside a repeated eigenspace). This is the
    protocol of the book's Gaussian-patch experiment (chapter 3).

    Parameters
    ----------
    side : int, default 8
        Patch side in pixels.
    length_scale : float, default 1.5
        Correlation length :math:`\ell` in pixels.

    Returns
    -------
    GaussianField
        Covariance, eigenvalues, eigenvectors and factor, read-only.

    Raises
    ------
    TypeError, ValueError
        As :func:`field_covariance`.

    Examples
    --------
    >>> f = gaussian_field()
    >>> f.dim, round(float(f.eigenvalues.sum()), 6)  # trace = d (unit variance)
    (64, 64.0)
    >>> bool(np.allclose(f.factor @ f.factor.T, f.covariance, atol=1e-12))
    True
    """
    C = field_covariance(side, length_scale)
    lam, U = np.linalg.eigh(C)
    lam = np.maximum(lam, 0.0)
    L = (U * np.sqrt(lam)) @ U.T  # symmetric: independent of the basis of repeated eigenspaces
    for arr in (C, lam, U, L):
        arr.setflags(write=False)
    return GaussianField(covariance=C, eigenvalues=lam, eigenvectors=U, factor=L)


def _check_field(field) -> GaussianField:
    if not isinstance(field, GaussianField):
        raise TypeError(
            f"field must be a GaussianField (from gaussian_field()); got {type(field).__name__}"
        )
    return field


def patch_information(sigma: float, eigenvalues) -> float:
    r"""Exact mutual information :math:`I(X; Y)` of :math:`y = x + \sigma\varepsilon`, in nats.

    .. math::

        I(\sigma) = \tfrac12 \sum_k \log\!\Big(1 + \frac{\lambda_k}{\sigma^2}\Big)

    (Cover & Thomas, the Gaussian channel; each eigen-direction of :math:`C` is an independent
    scalar channel with signal variance :math:`\lambda_k` and noise variance
    :math:`\sigma^2`). Computed with ``log1p``, accurate for tiny :math:`\lambda_k/\sigma^2`.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, ``> 0``.
    eigenvalues : array_like, shape (d,)
        Eigenvalues of the signal covariance, ``>= 0``.

    Returns
    -------
    float
        :math:`I \ge 0`, in nats.

    Raises
    ------
    TypeError, ValueError
        If ``sigma`` is not finite and positive, or ``eigenvalues`` is not a finite 1-D array
        of non-negative numbers.

    Examples
    --------
    >>> round(patch_information(1.0, [3.0]), 6)  # 0.5 log 4
    0.693147
    """
    s = as_positive_scalar(sigma, "sigma")
    lam = as_real_array(eigenvalues, "eigenvalues", ndim=1)
    if (lam < 0).any():
        raise ValueError(f"eigenvalues must be >= 0; got minimum {lam.min()}")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        info = _information(s, lam)
    finite_or_raise(
        info,
        "I = sum log1p(eigenvalues / sigma**2) / 2",
        "sigma is too small for these eigenvalues",
    )
    return info


def _information(sigma: float, lam: np.ndarray) -> float:
    return float(0.5 * np.log1p(lam / (sigma * sigma)).sum())


def _logdet_pd(A: np.ndarray, name: str) -> float:
    try:
        chol = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be symmetric positive definite") from None
    return float(2.0 * np.log(np.diagonal(chol)).sum())


def gaussian_mutual_information(joint_covariance, n_x: int) -> float:
    r"""Mutual information between the two blocks of a jointly Gaussian vector, in nats.

    For :math:`(X, Y)` Gaussian with covariance
    :math:`J = \begin{pmatrix} \Sigma_{xx} & \Sigma_{xy} \\ \Sigma_{yx} & \Sigma_{yy}
    \end{pmatrix}`,

    .. math::

        I(X; Y) = \tfrac12 \big(\log\det \Sigma_{xx} + \log\det \Sigma_{yy}
        - \log\det J\big).

    Each log-determinant comes from a Cholesky factor.

    Parameters
    ----------
    joint_covariance : array_like, shape (n, n)
        :math:`J`, symmetric positive definite; the first ``n_x`` coordinates are :math:`X`.
    n_x : int
        Dimension of :math:`X`, ``1 <= n_x < n``.

    Returns
    -------
    float
        :math:`I(X; Y)` in nats.

    Raises
    ------
    TypeError, ValueError
        If ``joint_covariance`` is not a finite square symmetric positive definite matrix, or
        ``n_x`` is out of range.

    Examples
    --------
    Two unit-variance scalars with correlation 0.6: :math:`I = -\tfrac12 \log(1 - 0.36)`.

    >>> round(gaussian_mutual_information([[1.0, 0.6], [0.6, 1.0]], 1), 6)
    0.223144
    """
    J = as_real_array(joint_covariance, "joint_covariance", ndim=2)
    n = J.shape[0]
    if J.shape != (n, n):
        raise ValueError(f"joint_covariance must be square; got shape {J.shape}")
    n_x = as_int(n_x, "n_x", minimum=1)
    if n_x >= n:
        raise ValueError(f"n_x must be smaller than the dimension {n}; got {n_x}")
    if not np.allclose(J, J.T, rtol=1e-12, atol=1e-12 * np.abs(J).max()):
        raise ValueError("joint_covariance must be symmetric")
    ld = _logdet_pd(J, "joint_covariance")
    ldx = _logdet_pd(J[:n_x, :n_x], "joint_covariance[:n_x, :n_x]")
    ldy = _logdet_pd(J[n_x:, n_x:], "joint_covariance[n_x:, n_x:]")
    return 0.5 * (ldx + ldy - ld)


def patch_information_logdet(sigma: float, field: GaussianField) -> float:
    r""":math:`I(X; Y)` of :math:`y = x + \sigma\varepsilon` by log-determinants, in nats.

    .. math::

        I = \tfrac12 \big(\log\det C + \log\det C_y - \log\det J\big),
        \qquad C_y = C + \sigma^2 I,

    .. math::

        J = \begin{pmatrix} C & C \\ C & C_y \end{pmatrix},

    an independent check of :func:`patch_information` (it never touches the eigenvalues).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, ``> 0``.
    field : GaussianField
        The signal covariance (must be positive definite).

    Returns
    -------
    float
        :math:`I` in nats.

    Raises
    ------
    TypeError, ValueError
        If ``sigma`` is not finite and positive, ``field`` is not a :class:`GaussianField`,
        or its covariance is singular to working precision.

    Examples
    --------
    >>> f = gaussian_field()
    >>> abs(patch_information_logdet(1.8, f) - patch_information(1.8, f.eigenvalues)) < 1e-9
    True
    """
    s = as_positive_scalar(sigma, "sigma")
    C = _check_field(field).covariance
    d = C.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):  # sigma**2 = inf: reported below
        Cy = C + (s * s) * np.eye(d)
    J = np.block([[C, C], [C, Cy]])
    try:
        return gaussian_mutual_information(J, d)
    except ValueError as exc:
        raise ValueError(
            f"the joint covariance of x (field) and y = x + sigma * noise (sigma = {s}) is not "
            f"positive definite and finite in float64 ({exc}); the field's covariance must be "
            "non-singular and sigma**2 neither underflow nor overflow"
        ) from None


def sigma_for_information(target: float, eigenvalues) -> float:
    r"""The noise level :math:`\sigma` at which :func:`patch_information` equals ``target``.

    Solves :math:`I(e^{s}) = I^\star` for :math:`s = \log \sigma` with Brent's method
    (``scipy.optimize.brentq``, ``xtol=1e-14``); :math:`I` falls strictly as :math:`\sigma`
    grows, so the root is unique. The bracket is widened until it holds the root.

    Parameters
    ----------
    target : float
        :math:`I^\star > 0`, in nats.
    eigenvalues : array_like, shape (d,)
        Eigenvalues of the signal covariance, ``>= 0``, at least one positive.

    Returns
    -------
    float
        :math:`\sigma > 0`.

    Raises
    ------
    TypeError, ValueError
        If ``target`` is not finite and positive, or the eigenvalues are invalid or all 0.

    Examples
    --------
    >>> lam = gaussian_field().eigenvalues
    >>> s = sigma_for_information(6.0, lam)
    >>> round(s, 4), round(patch_information(s, lam), 12)
    (1.8236, 6.0)
    """
    target = as_positive_scalar(target, "target")
    lam = as_real_array(eigenvalues, "eigenvalues", ndim=1)
    if (lam < 0).any():
        raise ValueError(f"eigenvalues must be >= 0; got minimum {lam.min()}")
    if not (lam > 0).any():
        raise ValueError("eigenvalues must include a positive value (otherwise I = 0)")

    def gap(log_sigma: float) -> float:
        return _information(math.exp(log_sigma), lam) - target

    centre = 0.5 * math.log(float(lam.max()))
    lo, hi = centre - 5.0, centre + 5.0
    while gap(lo) <= 0:
        lo -= 5.0
        if lo < _LOG_SIGMA_MIN:
            raise ValueError(
                f"target = {target} nats needs sigma below 1e-150 (sigma**2 underflows float64); "
                f"the largest reachable is {_information(math.exp(_LOG_SIGMA_MIN), lam):.6g}"
            )
    while gap(hi) >= 0:
        hi += 5.0
    from scipy.optimize import brentq  # imported on first use (see the package docstring)

    root = brentq(gap, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    return math.exp(root)


_LOG_SIGMA_MIN = math.log(1e-150)


def sample_patch_pairs(
    field: GaussianField, sigma: float, n_pairs: int, seed
) -> tuple[np.ndarray, np.ndarray]:
    r"""Draw ``n_pairs`` pairs :math:`(x, y)`: patches and their noisy views.

    .. math::

        x = z L^\top, \qquad y = x + \sigma \varepsilon,
        \qquad z, \varepsilon \sim \mathcal{N}(0, I_d),

    with one ``numpy.random.default_rng(seed)``, drawing ``z`` (shape ``(n_pairs, d)``)
    first and :math:`\varepsilon` second. The book's experiment uses seed = the index of
    the information level.

    Parameters
    ----------
    field : GaussianField
        The patch distribution (:func:`gaussian_field`).
    sigma : float
        Noise standard deviation, ``> 0``.
    n_pairs : int
        Number of pairs :math:`M \ge 1`.
    seed : int or numpy.random.Generator
        An int ``>= 0`` is passed to ``numpy.random.default_rng``; ``None`` is refused.

    Returns
    -------
    x, y : numpy.ndarray, shape (n_pairs, d)
        Float64.

    Raises
    ------
    TypeError, ValueError
        If ``field`` is not a :class:`GaussianField`, ``sigma`` is not finite and positive,
        or ``n_pairs`` is not a positive integer.

    Examples
    --------
    >>> x, y = sample_patch_pairs(gaussian_field(2), 0.5, 3, seed=0)
    >>> x.shape, y.shape
    ((3, 4), (3, 4))
    """
    field = _check_field(field)
    s = as_positive_scalar(sigma, "sigma")
    n = as_int(n_pairs, "n_pairs", minimum=1)
    rng = as_generator(seed)
    d = field.dim
    z = rng.standard_normal((n, d))
    x = z @ field.factor.T
    eps = rng.standard_normal((n, d))
    with np.errstate(over="ignore", invalid="ignore"):
        eps *= s
        eps += x
    if s > 1e290:  # only then can sigma * noise overflow (|noise| < 40 in any real sample)
        finite_or_raise(eps, "y = x + sigma * noise", "use a smaller sigma")
    return x, eps


def _pairs(x, y) -> tuple[np.ndarray, np.ndarray]:
    X = as_real_array(x, "x", ndim=2)
    Y = as_real_array(y, "y", ndim=2)
    check_same_shape(X, "x", Y, "y")
    return X, Y


def log_p_y_given_x(y, x, sigma: float) -> np.ndarray:
    r"""Log-density of each view given its own patch, :math:`\log \mathcal{N}(y; x, \sigma^2 I)`.

    .. math::

        \log p(y \mid x) = -\frac{\lVert y - x \rVert^2}{2\sigma^2}
        - \frac d2 \log(2\pi\sigma^2)

    Parameters
    ----------
    y, x : array_like, shape (M, d)
        Views and patches, row ``m`` paired with row ``m``.
    sigma : float
        Noise standard deviation, ``> 0``.

    Returns
    -------
    numpy.ndarray, shape (M,)

    Raises
    ------
    TypeError, ValueError
        If the arrays are not finite 2-D arrays of the same shape or ``sigma`` is invalid.

    Examples
    --------
    >>> np.round(log_p_y_given_x([[0.0]], [[0.0]], 1.0), 6)  # -log(2 pi) / 2
    array([-0.918939])
    """
    X, Y = _pairs(x, y)
    s = as_positive_scalar(sigma, "sigma")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        out = _log_p_y_given_x(Y, X, s)
    return finite_or_raise(out, "log p(y | x) of y and x at sigma", _SCALE_HINT)


def _log_p_y_given_x(Y: np.ndarray, X: np.ndarray, s: float) -> np.ndarray:
    diff = Y - X
    sq = np.einsum("md,md->m", diff, diff)
    sq /= -2 * s * s
    sq -= 0.5 * X.shape[1] * (_LOG_2PI + 2 * math.log(s))
    return sq


def log_p_y(y, field: GaussianField, sigma: float) -> np.ndarray:
    r"""Marginal log-density of the views, :math:`\log \mathcal{N}(y; 0, C + \sigma^2 I)`.

    .. math::

        \log p(y) = -\tfrac12 \sum_k \frac{(u_k^\top y)^2}{\lambda_k + \sigma^2}
        - \tfrac12 \sum_k \log\big(2\pi(\lambda_k + \sigma^2)\big)

    using the eigendecomposition of the field.

    Parameters
    ----------
    y : array_like, shape (M, d)
        Views.
    field : GaussianField
        The patch distribution.
    sigma : float
        Noise standard deviation, ``> 0``.

    Returns
    -------
    numpy.ndarray, shape (M,)

    Raises
    ------
    TypeError, ValueError
        If ``y`` is not a finite 2-D array with ``d`` columns, ``field`` is not a
        :class:`GaussianField`, or ``sigma`` is invalid.

    Examples
    --------
    >>> f = gaussian_field(2)
    >>> np.round(log_p_y(np.zeros((1, 4)), f, 1.0), 4)
    array([-4.7244])
    """
    field = _check_field(field)
    Y = as_real_array(y, "y", ndim=2)
    if Y.shape[1] != field.dim:
        raise ValueError(f"y must have {field.dim} columns (pixels); got shape {Y.shape}")
    s = as_positive_scalar(sigma, "sigma")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        out = _log_p_y(Y, field, s)
    return finite_or_raise(out, "log p(y) of y at sigma (with the field)", _SCALE_HINT)


def _log_p_y(Y: np.ndarray, field: GaussianField, s: float) -> np.ndarray:
    var = field.eigenvalues + s * s
    proj = Y @ field.eigenvectors
    proj /= np.sqrt(var)
    quad = np.einsum("md,md->m", proj, proj)
    return -0.5 * quad - 0.5 * float(np.log(var).sum() + field.dim * _LOG_2PI)


def _batched_pairs(x, y, batch_size) -> tuple[np.ndarray, np.ndarray, int]:
    X, Y = _pairs(x, y)
    M = X.shape[0]
    K = as_int(batch_size, "batch_size", minimum=2)
    if M % K:
        raise ValueError(
            f"batch_size must divide the number of pairs: {M} pairs cannot be cut into "
            f"batches of {K} (remainder {M % K})"
        )
    return X, Y, K


def optimal_critic_scores(x, y, sigma: float, batch_size: int) -> np.ndarray:
    r"""Scores of the critic :math:`f(x, y) = \log p(y \mid x)` for a pool cut into batches.

    The ``M`` pairs are cut into ``M / K`` consecutive batches of ``K``; within batch ``b``
    every view is scored against every patch:

    .. math::

        F_{bij} &= \log p(y_{bK+i} \mid x_{bK+j}) \\
        &= -\frac{\lVert y_{bK+i} \rVert^2 - 2\, y_{bK+i} \cdot x_{bK+j}
          + \lVert x_{bK+j} \rVert^2}{2\sigma^2} - \frac d2 \log(2\pi\sigma^2),

    the optimal critic of Poole et al. (2019, their multi-sample bound), up to any
    :math:`c(y)`. The squared distance is expanded into a matrix product per batch.

    Parameters
    ----------
    x, y : array_like, shape (M, d)
        Patches and views, row ``m`` of each forming a pair.
    sigma : float
        Noise standard deviation, ``> 0``.
    batch_size : int
        :math:`K \ge 2`, a divisor of ``M``.

    Returns
    -------
    numpy.ndarray, shape (M // K, K, K)
        ``F[b, i, j] = f(x_j, y_i)`` within batch ``b``; positives on the diagonal.

    Raises
    ------
    TypeError, ValueError
        If the arrays are not finite, 2-D and of the same shape, ``sigma`` is invalid,
        ``K < 2`` or ``K`` does not divide ``M``.

    Examples
    --------
    >>> x = np.array([[0.0], [1.0]]); y = np.array([[0.0], [3.0]])
    >>> np.round(optimal_critic_scores(x, y, 1.0, 2)[0], 4)
    array([[-0.9189, -1.4189],
           [-5.4189, -2.9189]])
    """
    X, Y, K = _batched_pairs(x, y, batch_size)
    s = as_positive_scalar(sigma, "sigma")
    M, d = X.shape
    Xb = X.reshape(M // K, K, d)
    Yb = Y.reshape(M // K, K, d)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        F = np.matmul(Yb, Xb.transpose(0, 2, 1))
        F *= 2.0
        yy = np.einsum("bid,bid->bi", Yb, Yb)
        xx = np.einsum("bjd,bjd->bj", Xb, Xb)
        F -= yy[:, :, None]
        F -= xx[:, None, :]
        F /= 2 * s * s
        F -= 0.5 * d * (_LOG_2PI + 2 * math.log(s))
        # |F| <= (|y| + |x|)^2 / (2 sigma^2) + |constant|: check every entry only if that
        # bound may leave float64 (it is inf when a norm or 1 / sigma^2 overflowed).
        r = np.sqrt(yy.max()) + np.sqrt(xx.max())  # NumPy floats: overflow gives inf
        bound = r * r / np.float64(2 * s * s) + abs(0.5 * d * (_LOG_2PI + 2 * math.log(s)))
    if not bound < 1e300:
        finite_or_raise(F, "the scores log p(y_i | x_j) of x and y at sigma", _SCALE_HINT)
    return F


def log_density_ratio_scores(x, y, field: GaussianField, sigma: float, batch_size: int):
    r"""Scores of the density-ratio critic :math:`f(x, y) = \log p(y \mid x) / p(y)`.

    .. math::

        F_{bij} = \log p(y_{bK+i} \mid x_{bK+j}) - \log p(y_{bK+i}),

    :func:`optimal_critic_scores` minus :math:`c(y) = \log p(y)`: the critic that is optimal
    whichever side the softmax normalises (Poole et al., 2019, their multi-sample bound).

    Parameters
    ----------
    x, y : array_like, shape (M, d)
        Patches and views.
    field : GaussianField
        The patch distribution (for :math:`p(y)`).
    sigma : float
        Noise standard deviation, ``> 0``.
    batch_size : int
        :math:`K \ge 2`, a divisor of ``M``.

    Returns
    -------
    numpy.ndarray, shape (M // K, K, K)

    Raises
    ------
    TypeError, ValueError
        As :func:`optimal_critic_scores` and :func:`log_p_y`.

    Examples
    --------
    >>> f = gaussian_field(2)
    >>> x, y = sample_patch_pairs(f, 0.5, 4, seed=1)
    >>> R = log_density_ratio_scores(x, y, f, 0.5, 2)
    >>> F = optimal_critic_scores(x, y, 0.5, 2)
    >>> bool(np.allclose(F - R, log_p_y(y, f, 0.5).reshape(2, 2)[:, :, None]))
    True
    """
    F = optimal_critic_scores(x, y, sigma, batch_size)
    lpy = log_p_y(y, field, sigma)
    with np.errstate(over="ignore", invalid="ignore"):
        F -= lpy.reshape(F.shape[0], F.shape[1])[:, :, None]
    return finite_or_raise(F, "the scores log p(y | x) - log p(y) of x and y", _SCALE_HINT)
