r"""Noise-contrastive estimation with infinitely many samples: the objective and the error.

Two results of Gutmann & Hyvärinen (2012) describe what NCE does when the samples are
many, and chapter 1 computes both:

* the **population objective** (the functional :math:`\tilde J` of their Theorem 1),

  .. math::

      \tilde J(f_m) = \int \Bigl[ p_d(u) \log \sigma\bigl(g(u)\bigr)
                       + \nu\, p_n(u) \log \sigma\bigl(-g(u)\bigr) \Bigr] du,
      \qquad g = f_m - \log p_n - \log \nu ,

  the limit of :math:`J` of :func:`~infonce_lib.nce_objective` as :math:`T_d \to \infty`
  for a log-model :math:`f_m`, computed here by quadrature from the densities
  (:func:`nce_population_objective`), including where the noise density is zero;
* the **asymptotic covariance** of the estimate (their Theorem 3):
  :math:`\sqrt{T_d}\,(\hat\theta - \theta^*)` is asymptotically normal with covariance

  .. math::

      \Sigma = I_\nu^{-1} - \Bigl(1 + \frac1\nu\Bigr) I_\nu^{-1} m_\nu m_\nu^\top I_\nu^{-1},

      I_\nu = \mathbb E_{p_d}\bigl[P_\nu\, g g^\top\bigr],\quad
      m_\nu = \mathbb E_{p_d}\bigl[P_\nu\, g\bigr],\quad
      P_\nu = \frac{\nu p_n}{p_d + \nu p_n},

  with :math:`g = \nabla_\theta \log p_m(u; \theta^*)` and :math:`p_m(\cdot; \theta^*) =
  p_d` (:func:`nce_asymptotic_covariance`); for the zero-mean Gaussian model of
  :mod:`infonce_lib.gaussian_nce` against Gaussian noise, the first-order mean squared error
  of the precision matrix follows by Gauss-Hermite quadrature
  (:func:`gaussian_nce_precision_mse`).

The covariance is the sandwich :math:`H^{-1} B H^{-1}` of an M-estimator: at
:math:`\theta^*` the expected Hessian of :math:`J` is :math:`H = -I_\nu` (the terms in
:math:`\nabla^2 \log p_m` cancel between data and noise) and the covariance of
:math:`\sqrt{T_d}\,\nabla J` is :math:`B = I_\nu - (1 + 1/\nu) m_\nu m_\nu^\top`; the tests
check the result against Monte Carlo fits.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import (
    as_int,
    as_positive_scalar,
    as_real_array,
    finite_or_raise,
)
from .gaussian_nce import _gaussian_features, _precision_matrix

__all__ = ["gaussian_nce_precision_mse", "nce_asymptotic_covariance", "nce_population_objective"]

#: Largest number of quadrature points :func:`gaussian_nce_precision_mse` builds (nodes ** d).
_MAX_POINTS = 1_000_000


def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x) without overflow: max(x, 0) + log1p(e^{-|x|})."""
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def nce_population_objective(log_model, data_density, noise_density, weights, nu=1.0):
    r"""The population NCE objective :math:`\tilde J(f_m)` by quadrature, zero densities allowed.

    .. math::

        \tilde J(f_m) \approx \sum_{i=1}^{N} w_i \Bigl[ p_d(u_i) \log \sigma\bigl(g(u_i)\bigr)
            + \nu\, p_n(u_i) \log \sigma\bigl(-g(u_i)\bigr) \Bigr],

        g = f_m - \log p_n - \log \nu,

    the limit of :func:`~infonce_lib.nce_objective` as :math:`T_d \to \infty` (Gutmann &
    Hyvärinen, 2012, the functional :math:`\tilde J` of their Theorem 1) for the log-model
    :math:`f_m`, evaluated at points :math:`u_i` with quadrature weights :math:`w_i` (cell
    volumes of a grid, say; with one point and :math:`w = 1` it is the integrand itself).
    Where :math:`p_n(u) = 0` and :math:`p_d(u) > 0`, :math:`g = +\infty` whatever :math:`f_m`
    is, so the integrand is :math:`p_d \log \sigma(+\infty) = 0`: the objective does not
    depend on the model there. Where :math:`p_d = 0` only the noise term remains.
    :math:`\log \sigma(z) = -\log(1 + e^{-z})` is computed without overflow.

    Parameters
    ----------
    log_model : array_like, shape (..., N)
        :math:`f_m(u_i)`, any real values (the model need not be normalised); leading axes
        hold several models, evaluated at once.
    data_density, noise_density : array_like, shape (N,)
        :math:`p_d(u_i) \ge 0` and :math:`p_n(u_i) \ge 0` (zero allowed: that is the point).
    weights : array_like, shape (N,)
        Quadrature weights :math:`w_i \ge 0`.
    nu : float, default 1.0
        The noise-to-data ratio :math:`\nu > 0`.

    Returns
    -------
    float or numpy.ndarray of shape (...)
        :math:`\tilde J` of each model (a float for a 1-D ``log_model``); at most 0.

    Raises
    ------
    ValueError, TypeError
        If an array is empty, not real, not finite, has the wrong number of axes or a
        different ``N``, a density or a weight is negative, or ``nu`` is not a finite
        positive number; ``ValueError`` if :math:`\tilde J` overflows float64.

    Examples
    --------
    At one point with :math:`p_d = 0.3`, :math:`p_n = 0.1` and :math:`\nu = 2`, the integrand
    is largest at :math:`f_m = \log p_d`; without noise there (:math:`p_n = 0`) it is 0 for
    every :math:`f_m`:

    >>> f = np.log([0.1, 0.3, 0.9])[:, None]            # three values of f_m at the point
    >>> J = nce_population_objective(f, [0.3], [0.1], [1.0], nu=2.0)
    >>> int(np.argmax(J))
    1
    >>> nce_population_objective(f, [0.3], [0.0], [1.0], nu=2.0)
    array([0., 0., 0.])
    """
    nu = as_positive_scalar(nu, "nu")
    f = as_real_array(log_model, "log_model", ndim=None)
    if f.ndim < 1:
        raise ValueError("log_model must be at least 1-D (..., N); got a scalar")
    p_d = as_real_array(data_density, "data_density", ndim=1)
    p_n = as_real_array(noise_density, "noise_density", ndim=1)
    w = as_real_array(weights, "weights", ndim=1)
    n = f.shape[-1]
    for arr, name in ((p_d, "data_density"), (p_n, "noise_density"), (w, "weights")):
        if arr.shape != (n,):
            raise ValueError(
                f"{name} must have shape (N,) = ({n},), the last axis of log_model; got {arr.shape}"
            )
        if (arr < 0).any():
            raise ValueError(f"{name} must be >= 0; got {int((arr < 0).sum())} negative entries")
    covered = p_n > 0  # elsewhere g = +inf and both terms vanish
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        g = f - np.log(np.where(covered, p_n, 1.0)) - math.log(nu)
        data_term = np.where(covered & (p_d > 0), p_d * _softplus(-g), 0.0)
        noise_term = np.where(covered, nu * p_n * _softplus(g), 0.0)
        J = 0.0 - np.sum(w * (data_term + noise_term), axis=-1)
    finite_or_raise(
        J,
        "J (from log_model, data_density, noise_density, weights and nu)",
        "rescale log_model, data_density, noise_density or weights",
    )
    return float(J) if J.ndim == 0 else J


def nce_asymptotic_covariance(grad_log_model, log_data, log_noise, weights=None, nu=1.0):
    r"""The asymptotic covariance of the NCE estimate (Gutmann & Hyvärinen, 2012, Theorem 3).

    If the model family contains the data density, :math:`p_m(\cdot; \theta^*) = p_d`,
    then :math:`\sqrt{T_d}\,(\hat\theta_T - \theta^*)` is asymptotically normal with mean 0
    and covariance

    .. math::

        \Sigma = I_\nu^{-1} - \Bigl(1 + \frac1\nu\Bigr) I_\nu^{-1} m_\nu m_\nu^\top I_\nu^{-1},

        I_\nu = \mathbb E_{p_d}\bigl[P_\nu\, g g^\top\bigr], \quad
        m_\nu = \mathbb E_{p_d}\bigl[P_\nu\, g\bigr],

    with :math:`g = \nabla_\theta \log p_m(u; \theta^*)` and
    :math:`P_\nu = \nu p_n / (p_d + \nu p_n) = \sigma(\log\nu + \log p_n - \log p_d)`, the
    posterior probability that a sample at :math:`u` is noise. The expectations are the
    weighted averages :math:`\sum_i w_i (\cdot)(u_i)` over points :math:`u_i` with weights
    normalised to sum to 1: draws of :math:`p_d` with equal weights (Monte Carlo), or the
    nodes and weights of a quadrature rule for :math:`p_d`. The mean squared error of a
    linear function :math:`a^\top \hat\theta` is :math:`a^\top \Sigma a / T_d` to first
    order. With :math:`p_n = p_d` (so :math:`P_\nu = \nu/(1 + \nu)`), :math:`\Sigma` is
    :math:`1 + 1/\nu` times the asymptotic covariance of maximum likelihood.

    Parameters
    ----------
    grad_log_model : array_like, shape (N, P)
        :math:`g(u_i) = \nabla_\theta \log p_m(u_i; \theta^*)`, one row per point.
    log_data, log_noise : array_like, shape (N,)
        :math:`\log p_d(u_i)` and :math:`\log p_n(u_i)`, finite.
    weights : array_like, shape (N,), optional
        Non-negative weights of the points (normalised here); default equal weights.
    nu : float, default 1.0
        The noise-to-data ratio :math:`\nu > 0`.

    Returns
    -------
    numpy.ndarray, shape (P, P)
        :math:`\Sigma`, symmetric.

    Raises
    ------
    ValueError, TypeError
        If an array is empty, not finite, not real, has the wrong shape, a weight is
        negative or all are zero, ``nu`` is not a finite positive number, or :math:`I_\nu` is
        singular or not finite (the gradients at the points with weight do not span all
        ``P`` directions, or overflow).

    Examples
    --------
    The model :math:`\log p_m(u) = c - \lambda u^2/2` at :math:`\lambda = 1`, with the
    noise equal to the data, :math:`\mathcal N(0, 1)`, and the three-point Gauss-Hermite
    rule for the expectations (exact here): :math:`\hat\lambda` has asymptotic variance
    :math:`(1 + 1/\nu)\, 2\lambda^2 = 4` at :math:`\nu = 1`, twice that of maximum likelihood,
    and :math:`\hat c` follows as :math:`\tfrac12 \log\hat\lambda` does (variance
    :math:`4/4 = 1`):

    >>> u = np.array([-math.sqrt(3), 0.0, math.sqrt(3)])
    >>> g = np.stack([-u**2 / 2, np.ones(3)], axis=1)      # gradient in (lambda, c)
    >>> log_p = -u**2 / 2 - 0.5 * math.log(2 * math.pi)
    >>> np.round(nce_asymptotic_covariance(g, log_p, log_p, [1 / 6, 2 / 3, 1 / 6]), 6)
    array([[4., 2.],
           [2., 1.]])
    """
    nu = as_positive_scalar(nu, "nu")
    g = as_real_array(grad_log_model, "grad_log_model", ndim=2)
    n, p = g.shape
    ld = as_real_array(log_data, "log_data", ndim=1)
    ln = as_real_array(log_noise, "log_noise", ndim=1)
    w = np.full(n, 1.0 / n) if weights is None else as_real_array(weights, "weights", ndim=1)
    for arr, name in ((ld, "log_data"), (ln, "log_noise"), (w, "weights")):
        if arr.shape != (n,):
            raise ValueError(
                f"{name} must have shape (N,) = ({n},), one entry per row of grad_log_model; "
                f"got {arr.shape}"
            )
    if (w < 0).any() or not w.sum() > 0:
        raise ValueError("weights must be >= 0 and not all zero")
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        w = w / w.sum()
        z = math.log(nu) + ln - ld  # P_nu = sigma(z), without overflow:
        e = np.exp(-np.abs(z))
        P = np.where(z >= 0, 1.0, e) / (1.0 + e)
        wp = w * P
        info = (g * wp[:, None]).T @ g
        mean = wp @ g
    finite_or_raise(
        np.append(info, mean),
        "I_nu and m_nu (from grad_log_model, log_data, log_noise and weights)",
        "rescale grad_log_model",
    )
    info = (info + info.T) / 2
    eig = np.linalg.eigvalsh(info)
    if not eig[0] > 1e-12 * eig[-1] or not eig[-1] > 0:
        raise ValueError(
            "I_nu (from grad_log_model, log_data, log_noise, weights and nu) is singular: the "
            f"rows of grad_log_model at the points with weight do not span all P = {p} "
            "directions, or P_nu vanishes there; use more points, check the gradients, or bring "
            "nu and the noise closer to the data"
        )
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        inv_m = np.linalg.solve(info, mean)
        sigma = np.linalg.inv(info) - (1.0 + 1.0 / nu) * np.outer(inv_m, inv_m)
        sigma = (sigma + sigma.T) / 2
    return finite_or_raise(
        sigma,
        "the covariance (from grad_log_model, log_data, log_noise, weights and nu)",
        "rescale grad_log_model, or bring nu and the noise closer to the data",
    )


def _gauss_hermite_grid(dim: int, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Points z of shape (nodes**dim, dim) and weights (summing to 1) of the tensor
    Gauss-Hermite rule for the standard normal in ``dim`` dimensions."""
    z1, w1 = np.polynomial.hermite_e.hermegauss(nodes)
    w1 = w1 / w1.sum()
    grids = np.meshgrid(*([z1] * dim), indexing="ij")
    z = np.stack([gr.ravel() for gr in grids], axis=-1)
    w = np.ones(z.shape[0])
    for wg in np.meshgrid(*([w1] * dim), indexing="ij"):
        w *= wg.ravel()
    return z, w


def _log_normal(u: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """log N(u; 0, cov) for the rows of u."""
    chol = np.linalg.cholesky(cov)
    white = np.linalg.solve(chol, u.T)
    logdet = 2 * np.sum(np.log(np.diag(chol)))
    return -0.5 * np.sum(white**2, axis=0) - 0.5 * (cov.shape[0] * math.log(2 * math.pi) + logdet)


def gaussian_nce_precision_mse(precision, noise_cov, n_data: int, nu=1.0, *, nodes: int = 64):
    r"""First-order MSE of NCE's precision estimate, from Theorem 3, for Gaussian data and noise.

    For the model :math:`\log p_m(u) = -\tfrac12 u^\top \Lambda u + c` of
    :func:`~infonce_lib.fit_gaussian_nce`, data :math:`\mathcal N(0, \Lambda^{-1})` and
    noise :math:`\mathcal N(0, \Sigma_n)`,

    .. math::

        \mathbb E\,\lVert \hat\Lambda - \Lambda \rVert_F^2
        \approx \frac{1}{T_d} \sum_{k, l} \Sigma_{(kl),(kl)},

    where :math:`\Sigma` is :func:`nce_asymptotic_covariance` (Gutmann & Hyvärinen, 2012,
    Theorem 3) in the natural parameters :math:`\eta = (\operatorname{vech}\Lambda, c)`,
    whose gradient is the statistic :math:`s(u)` (entries :math:`-u_k u_l/2` on the
    diagonal, :math:`-u_k u_l` below it, and 1): the entries of :math:`\Lambda` are entries
    of :math:`\eta`, an off-diagonal one counted twice. The expectations over :math:`p_d`
    are a tensor Gauss-Hermite rule with ``nodes`` points per axis (exact for polynomials
    of degree :math:`2\,\mathrm{nodes} - 1`; :math:`P_\nu` is a smooth function of a
    quadratic form, so the rule converges fast: for chapter 1's noise, 0.65 to 8 times as
    wide as the data, 64 nodes agree with 96 to about :math:`10^{-7}` relative). With
    :math:`\Sigma_n = \Lambda^{-1}` the result is :math:`1 + 1/\nu` times the first-order
    value of :func:`~infonce_lib.gaussian_ml_precision_mse`.

    Parameters
    ----------
    precision : array_like, shape (d, d)
        The data's precision :math:`\Lambda`, symmetric positive definite.
    noise_cov : array_like, shape (d, d)
        The noise covariance :math:`\Sigma_n`, symmetric positive definite.
    n_data : int
        :math:`T_d \ge 1`.
    nu : float, default 1.0
        The noise-to-data ratio :math:`\nu > 0`.
    nodes : int, default 64
        Gauss-Hermite points per axis, at least 3; ``nodes ** d`` may not exceed a million.

    Returns
    -------
    float
        The first-order mean squared error of :math:`\hat\Lambda` (Frobenius norm).

    Raises
    ------
    ValueError, TypeError
        If a matrix is not symmetric positive definite or their sizes differ, ``n_data`` or
        ``nodes`` is not an integer in range, ``nu`` is not a finite positive number, or
        the computation overflows float64 (matrices of extreme scale).

    Examples
    --------
    In one dimension with the noise equal to the data, :math:`(1 + 1/\nu)\, 2\lambda^2/T_d`:

    >>> round(gaussian_nce_precision_mse([[3.0]], [[1 / 3]], 100, nu=1.0), 6)
    0.36
    """
    lam = _precision_matrix(precision, "precision")
    cov_n = _precision_matrix(noise_cov, "noise_cov")
    if lam.ndim != 2 or cov_n.shape != lam.shape:
        raise ValueError(
            "precision and noise_cov must be (d, d) matrices of the same size; got shapes "
            f"{lam.shape} and {cov_n.shape}"
        )
    t_d = as_int(n_data, "n_data", minimum=1)
    nu = as_positive_scalar(nu, "nu")
    nodes = as_int(nodes, "nodes", minimum=3)
    d = lam.shape[0]
    if nodes**d > _MAX_POINTS:
        raise ValueError(
            f"nodes ** d = {nodes}**{d} quadrature points exceed {_MAX_POINTS:,}; use fewer nodes"
        )
    # The MSE of c Λ against noise Σ_n / c is c^2 times that of Λ against Σ_n (every entry
    # of the estimate scales by c): compute at the scale of a unit largest eigenvalue.
    c = float(np.max(np.linalg.eigvalsh(lam)))
    what = "the asymptotic covariance for precision, noise_cov and nu"
    try:
        with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
            lam1, cov1 = lam / c, cov_n * c
            cov_d = np.linalg.inv(lam1)
            cov_d = (cov_d + cov_d.T) / 2
            z, w = _gauss_hermite_grid(d, nodes)
            u = z @ np.linalg.cholesky(cov_d).T
            stats = _gaussian_features(u[None])[0]
            ld, ln = _log_normal(u, cov_d), _log_normal(u, cov1)
    except np.linalg.LinAlgError:
        raise ValueError(f"{what} could not be computed: a matrix left float64's range; "
                         "rescale precision and noise_cov") from None  # fmt: skip
    finite_or_raise(np.concatenate([stats.ravel(), ld, ln]), what, "rescale them")
    try:
        sigma = nce_asymptotic_covariance(stats, ld, ln, w, nu)
    except ValueError as exc:
        raise ValueError(f"{what} could not be computed: {exc}") from None
    rows, cols = np.tril_indices(d)
    count = np.where(rows == cols, 1.0, 2.0)  # an off-diagonal entry appears twice in Λ
    with np.errstate(over="ignore"):
        out = float(count @ np.diag(sigma)[:-1]) * c * c / t_d
    return finite_or_raise(out, "the MSE of precision (with noise_cov)", "rescale precision")
