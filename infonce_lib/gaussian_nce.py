r"""The zero-mean Gaussian model of chapter 1, fitted by noise-contrastive estimation.

The model is :math:`\log p_m(u; \theta) = -\tfrac12 u^\top \Lambda u + c`, its precision
matrix :math:`\Lambda` held through a log-Cholesky factor so that every parameter vector is
a valid model (:func:`gaussian_theta`, :func:`gaussian_params`), plus :math:`c`. Here:
:func:`gaussian_log_model` (a ``log_model`` for :func:`~infonce_lib.fit_nce`),
:func:`gaussian_log_partition`, :func:`fit_gaussian_nce` (which also decides whether the
objective has a maximiser at all), the reference estimator :func:`fit_gaussian_ml` with its
exact error :func:`gaussian_ml_precision_mse`, and the Monte Carlo driver
:func:`simulate_gaussian_nce`. The experiment that compares NCE with maximum likelihood is
:mod:`infonce_lib.experiments.nce_efficiency`.

The model is an exponential family, :math:`\log p_m(u) = s(u) \cdot \eta(\theta)` with
:math:`\eta = (\operatorname{vech} \Lambda, c)`, so the NCE objective is a logistic
regression in :math:`\eta` and concave there. With few samples its maximiser over all
:math:`\eta` can fail to exist (the data and the noise are separable by a quadratic) or have
a :math:`\Lambda` that is not positive definite; then no Gaussian maximises it, and
:func:`fit_gaussian_nce` says so instead of returning the end of a diverging run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._maximiser import (
    _NEWTON_ITERS,
    _eta_terms,
    _newton_twice,
    _no_maximiser_message,
    _precision_from_eta,
    _Report,
    _Samples,
)
from ._validation import (
    as_bool,
    as_generator,
    as_int,
    as_options,
    as_positive_scalar,
    as_real_array,
    finite_or_raise,
)
from .nce import NCEFit, NoMaximiserError, _as_output

__all__ = [
    "GaussianNCESimulation",
    "fit_gaussian_ml",
    "fit_gaussian_nce",
    "gaussian_log_model",
    "gaussian_log_partition",
    "gaussian_ml_precision_mse",
    "gaussian_params",
    "gaussian_theta",
    "simulate_gaussian_nce",
]


def _precision_matrix(value, name: str) -> np.ndarray:
    """A symmetric positive definite (..., d, d) matrix, or a clear error."""
    arr = as_real_array(value, name, ndim=None)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"{name} must be a square (..., d, d) matrix; got shape {arr.shape}")
    if not np.allclose(arr, np.swapaxes(arr, -1, -2), rtol=1e-10, atol=0.0):
        raise ValueError(f"{name} must be symmetric")
    try:
        np.linalg.cholesky(arr)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be positive definite") from None
    return arr


_THETA_HINT = "the log-Cholesky entries of theta are too large (exp of the diagonal)"


def _dim_from_size(p: int) -> int:
    """d such that p = d (d + 1) / 2 + 1, or a clear error."""
    d = round((math.sqrt(8 * (p - 1) + 1) - 1) / 2) if p >= 2 else 0
    if d < 1 or d * (d + 1) // 2 + 1 != p:
        raise ValueError(
            "theta must have d (d + 1) / 2 + 1 entries (a log-Cholesky factor of the d x d "
            f"precision matrix, then c) for some d >= 1; got {p}"
        )
    return d


def _cholesky_from_theta(theta: np.ndarray, d: int) -> np.ndarray:
    rows, cols = np.tril_indices(d)
    L = np.zeros((*theta.shape[:-1], d, d))
    entries = theta[..., :-1].copy()
    diag = rows == cols
    entries[..., diag] = np.exp(entries[..., diag])
    L[..., rows, cols] = entries
    return L


def _gaussian_features(u: np.ndarray) -> np.ndarray:
    """Sufficient statistics s(u), shape (..., T, P): log p_m(u; θ) = s(u) · η(θ).

    ``-u_k u_l / 2`` for ``k == l`` and ``-u_k u_l`` for ``k > l`` (the lower triangle, row
    by row, as ``numpy.tril_indices``), then 1 (the coefficient of c). Returned as a view of
    a C-contiguous (..., P, T) array, the layout the Newton fit multiplies with.
    """
    d = u.shape[-1]
    rows, cols = np.tril_indices(d)
    S_t = np.empty((*u.shape[:-2], rows.size + 1, u.shape[-2]))
    u_t = np.swapaxes(u, -1, -2)
    for k, (r, c) in enumerate(zip(rows, cols, strict=True)):
        np.multiply(u_t[..., r, :], u_t[..., c, :], out=S_t[..., k, :])
        S_t[..., k, :] *= -0.5 if r == c else -1.0
    S_t[..., -1, :] = 1.0
    return np.swapaxes(S_t, -1, -2)


def _gaussian_natural(theta: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """η(θ) = (vech Λ, c) and its Jacobian dη/dθ, shapes (..., P) and (..., P, P)."""
    L = _cholesky_from_theta(theta, d)
    lam = L @ np.swapaxes(L, -1, -2)
    rows, cols = np.tril_indices(d)
    eta = np.concatenate([lam[..., rows, cols], theta[..., -1:]], axis=-1)
    # Λ_kl = Σ_m L_km L_lm, so dΛ_kl / dL_ij = [k = i] L_lj + [l = i] L_kj (L lower: 0 if j > l).
    k, l = rows[:, None], cols[:, None]
    i, j = rows[None, :], cols[None, :]
    D_L = (k == i) * L[..., l, j] + (l == i) * L[..., k, j]
    diag = rows == cols  # log-scaled diagonal: dL_ii / dθ_ii = L_ii
    D_L[..., diag] *= L[..., rows[diag], cols[diag]][..., None, :]
    p = theta.shape[-1]
    D = np.zeros((*theta.shape[:-1], p, p))
    D[..., :-1, :-1] = D_L
    D[..., -1, -1] = 1.0
    return eta, D


def _gaussian_model_from_features(
    theta: np.ndarray, features: np.ndarray, d: int
) -> tuple[np.ndarray, np.ndarray]:
    eta, D = _gaussian_natural(theta, d)
    log_p = np.matmul(features, eta[..., None])[..., 0]
    return log_p, features @ D


def gaussian_theta(precision, c) -> np.ndarray:
    r"""Pack a precision matrix and :math:`c` into the Gaussian model's parameter vector.

    .. math::

        \theta = \bigl(\operatorname{vech}(\tilde L), c\bigr), \qquad
        \Lambda = L L^\top, \quad \tilde L_{ij} = L_{ij}\ (i > j), \quad
        \tilde L_{ii} = \log L_{ii},

    with :math:`L` the lower Cholesky factor of :math:`\Lambda` and
    :math:`\operatorname{vech}` the lower triangle row by row (``numpy.tril_indices``). Every
    real :math:`\theta` gives a positive definite :math:`\Lambda`, so an optimiser can move
    freely (the log-Cholesky parametrisation; Pinheiro & Bates, 1996).

    Parameters
    ----------
    precision : array_like, shape (..., d, d)
        Symmetric positive definite.
    c : float or array_like, shape (...)
        The log-normalising parameter :math:`c`.

    Returns
    -------
    numpy.ndarray, shape (..., d (d + 1) / 2 + 1)

    Raises
    ------
    ValueError
        If ``precision`` is not square, symmetric and positive definite, or ``c`` does not
        match its leading shape.

    Examples
    --------
    >>> np.round(gaussian_theta([[4.0, 0.0], [0.0, 1.0]], -1.5), 4)
    array([ 0.6931,  0.    ,  0.    , -1.5   ])
    """
    lam = _precision_matrix(precision, "precision")
    c_arr = as_real_array(c, "c", ndim=None)
    if c_arr.shape != lam.shape[:-2]:
        raise ValueError(
            f"c must have the leading shape of precision, {lam.shape[:-2]}; got {c_arr.shape}"
        )
    d = lam.shape[-1]
    L = np.linalg.cholesky(lam)
    rows, cols = np.tril_indices(d)
    entries = L[..., rows, cols].copy()
    diag = rows == cols
    entries[..., diag] = np.log(entries[..., diag])
    return np.concatenate([entries, c_arr[..., None]], axis=-1)


def gaussian_params(theta) -> tuple[np.ndarray, float | np.ndarray]:
    r"""Unpack the Gaussian model's parameter vector into :math:`(\Lambda, c)`.

    The inverse of :func:`gaussian_theta`: :math:`\Lambda = L L^\top` with the diagonal of
    :math:`L` exponentiated.

    Parameters
    ----------
    theta : array_like, shape (..., d (d + 1) / 2 + 1)

    Returns
    -------
    precision : numpy.ndarray, shape (..., d, d)
    c : float or numpy.ndarray of shape (...)

    Examples
    --------
    >>> lam, c = gaussian_params([math.log(2.0), 0.5, 0.0, -1.0])
    >>> lam, c
    (array([[4.  , 1.  ],
           [1.  , 1.25]]), -1.0)
    """
    th = as_real_array(theta, "theta", ndim=None)
    if th.ndim < 1:
        raise ValueError("theta must be at least 1-D (..., P)")
    d = _dim_from_size(th.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        L = _cholesky_from_theta(th, d)
        lam = L @ np.swapaxes(L, -1, -2)
    finite_or_raise(lam, "the precision matrix of theta", _THETA_HINT)
    return lam, _as_output(th[..., -1].copy())


def gaussian_log_partition(precision) -> float | np.ndarray:
    r"""Log-partition function of the zero-mean Gaussian with precision :math:`\Lambda`.

    .. math::

        \log Z(\Lambda) = \log \int e^{-u^\top \Lambda u / 2}\, du
                        = \frac{d}{2} \log 2\pi - \frac12 \log\det\Lambda,

    so the normalised model has :math:`c = -\log Z(\Lambda) = \tfrac12 \log\det\Lambda -
    \tfrac{d}{2}\log 2\pi`.

    Parameters
    ----------
    precision : array_like, shape (..., d, d)
        Symmetric positive definite.

    Returns
    -------
    float or numpy.ndarray of shape (...)

    Raises
    ------
    ValueError
        If ``precision`` is not square, symmetric and positive definite.

    Examples
    --------
    >>> round(gaussian_log_partition([[1.0]]), 6), round(0.5 * math.log(2 * math.pi), 6)
    (0.918939, 0.918939)
    """
    lam = _precision_matrix(precision, "precision")
    d = lam.shape[-1]
    _, logdet = np.linalg.slogdet(lam)
    return _as_output(0.5 * d * math.log(2 * math.pi) - 0.5 * logdet)


def gaussian_log_model(theta, u) -> tuple[np.ndarray, np.ndarray]:
    r"""Unnormalised zero-mean Gaussian log-density and its gradient in :math:`\theta`.

    .. math::

        \log p_m(u; \theta) = -\tfrac12 u^\top \Lambda u + c
                            = -\tfrac12 \lVert L^\top u \rVert^2 + c,

    with :math:`\theta = (\operatorname{vech}(\tilde L), c)` as in :func:`gaussian_theta`
    The gradient has entries :math:`-u_k (L^\top u)_l` for :math:`L_{kl}` (times
    :math:`L_{kk}` on the log-scaled diagonal) and 1 for :math:`c`. Use it as the
    ``log_model`` of :func:`fit_nce`.

    Parameters
    ----------
    theta : array_like, shape (..., P) with P = d (d + 1) / 2 + 1
    u : array_like, shape (..., T, d)
        Samples; leading axes broadcast against those of ``theta``.

    Returns
    -------
    log_p : numpy.ndarray, shape (..., T)
    grad : numpy.ndarray, shape (..., T, P)

    Raises
    ------
    ValueError, TypeError
        If ``theta`` has a size that is not :math:`d(d+1)/2 + 1`, ``u`` is not finite, or
        the dimension of ``u`` differs from the model's ``d``.

    Examples
    --------
    With :math:`\Lambda = I` and :math:`c = 0`, :math:`\log p_m(u) = -\lVert u\rVert^2/2`:

    >>> log_p, grad = gaussian_log_model([0.0, 0.0, 0.0, 0.0], [[1.0, 2.0]])
    >>> log_p, grad
    (array([-2.5]), array([[-1., -2., -4.,  1.]]))
    """
    th = as_real_array(theta, "theta", ndim=None)
    if th.ndim < 1:
        raise ValueError("theta must be at least 1-D (..., P)")
    d = _dim_from_size(th.shape[-1])
    x = as_real_array(u, "u", ndim=None)
    if x.ndim < 2:
        raise ValueError(f"u must have shape (..., T, d); got shape {x.shape}")
    if x.shape[-1] != d:
        raise ValueError(
            f"u has dimension {x.shape[-1]} but theta describes a {d}-dimensional model"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        log_p, grad = _gaussian_model_from_features(th, _gaussian_features(x), d)
    finite_or_raise(
        np.append(log_p, grad), "log p_m and its gradient (from theta and u)", _THETA_HINT + " or u"
    )
    return log_p, grad


def fit_gaussian_ml(x) -> tuple[np.ndarray, float | np.ndarray]:
    r"""Maximum-likelihood fit of the zero-mean Gaussian: the reference estimator.

    With the normalising constant known, the likelihood of :math:`\Lambda` is maximised by
    the inverse of the second-moment matrix, and :math:`c` follows from
    :func:`gaussian_log_partition`:

    .. math::

        \hat\Lambda_{\mathrm{ML}} = \Bigl(\frac1{T_d} \sum_{t=1}^{T_d} x_t x_t^\top\Bigr)^{-1},
        \qquad \hat c_{\mathrm{ML}} = -\log Z(\hat\Lambda_{\mathrm{ML}}).

    Parameters
    ----------
    x : array_like, shape (T_d, d) or (B, T_d, d)
        Data samples (``B`` independent data sets); ``T_d >= d`` so the estimate exists.

    Returns
    -------
    precision : numpy.ndarray, shape (d, d) or (B, d, d)
    c : float or numpy.ndarray of shape (B,)

    Raises
    ------
    ValueError, TypeError
        If ``x`` is not finite, has the wrong number of axes, or its second-moment matrix is
        singular.

    Examples
    --------
    >>> lam, c = fit_gaussian_ml([[1.0], [-1.0], [2.0], [-2.0]])  # mean square 2.5
    >>> lam, round(c, 6)
    (array([[0.4]]), -1.377084)
    """
    X = as_real_array(x, "x", ndim=(2, 3))
    t_d = X.shape[-2]
    with np.errstate(over="ignore", invalid="ignore"):
        second = np.swapaxes(X, -1, -2) @ X / t_d
    finite_or_raise(second, "the second-moment matrix of x", "rescale x")
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            lam = np.linalg.inv(second)
            np.linalg.cholesky(lam)
            lam = (lam + np.swapaxes(lam, -1, -2)) / 2
    except np.linalg.LinAlgError:
        raise ValueError(
            "x must span all d dimensions (its second-moment matrix is singular); need "
            f"T_d >= d = {X.shape[-1]} samples in general position"
        ) from None
    finite_or_raise(lam, "the ML precision of x (inverse second moment)", "rescale x")
    return lam, -gaussian_log_partition(lam)


def fit_gaussian_nce(
    x,
    y,
    noise_cov,
    *,
    nu=None,
    theta0=None,
    options: dict | None = None,
) -> NCEFit:
    r"""NCE fit of the unnormalised zero-mean Gaussian against Gaussian noise, by Newton's method.

    Maximises :math:`J(\theta)` of :func:`nce_objective` for the model
    :func:`gaussian_log_model` with noise :math:`p_n = \mathcal N(0, \Sigma_n)`. The model is
    an exponential family, :math:`\log p_m(u) = s(u) \cdot \eta` with natural parameters
    :math:`\eta = (\operatorname{vech}\Lambda, c)`, so :math:`J` is a logistic regression in
    :math:`\eta`, concave there, with gradient (the chain rule through
    :func:`nce_objective_and_grad`'s weights) and Hessian

    .. math::

        \begin{aligned}
        \nabla_\eta J &= \frac1{T_d} \sum_t (1 - h(x_t))\, s(x_t)
                       - \frac{\nu}{T_n} \sum_t h(y_t)\, s(y_t), \\
        \nabla^2_\eta J &= -\frac1{T_d} \sum_t h(1 - h)\, s s^\top
                         - \frac{\nu}{T_n} \sum_t h(1 - h)\, s s^\top
        \end{aligned}

    (Gutmann & Hyvärinen, 2012, section 2). Damped Newton steps in :math:`\eta` reach
    the maximiser in a few iterations, quadratically near it; the estimate is returned in the
    log-Cholesky parameters :math:`\theta` of :func:`gaussian_theta`. The default starting
    point matches the data's second moments (:math:`\Lambda^{-1} = \frac1{T_d} \sum_t x_t
    x_t^\top`, :math:`c = -\log Z(\Lambda)`: the maximum-likelihood fit, within sampling
    error of the NCE estimate), or the noise itself (:math:`\Lambda = \Sigma_n^{-1}`, so
    :math:`G \equiv 0`) where those moments are singular. A batch of data sets is fitted at
    once, each data set with its own steps. For other models, :func:`fit_nce` maximises
    :math:`J` with :func:`scipy.optimize.minimize`; both find the same maximiser here (the
    tests compare them).

    Parameters
    ----------
    x : array_like, shape (T_d, d) or (B, T_d, d)
        Data samples (``B`` independent data sets, fitted at once).
    y : array_like, shape (T_n, d) or (B, T_n, d)
        Noise samples drawn from :math:`\mathcal N(0, \Sigma_n)`.
    noise_cov : array_like, shape (d, d)
        :math:`\Sigma_n`, symmetric positive definite.
    nu : float, optional
        Noise-to-data ratio; default :math:`T_n / T_d`.
    theta0 : array_like, optional
        Starting point, shape (P,) or (B, P).
    options : dict, optional
        ``{"maxiter": n}``: at most ``n`` Newton iterations (default 100). A data set counts
        as fitted when its squared Newton decrement is below ``1e-10`` and its Newton step
        below ``1e-5`` times ``1 + max |eta|``; that step is then taken too, leaving an error
        of the order of its square.

    Returns
    -------
    NCEFit
        ``theta`` unpacks with :func:`gaussian_params`; ``result`` is a dict whose keys are
        also attributes, as :class:`scipy.optimize.OptimizeResult`: ``success``,
        ``message``, ``fun`` (:math:`-\sum_b J_b`), ``x`` and ``nit``, the Newton iterations
        of the slowest data set.

    Raises
    ------
    ValueError, TypeError
        If the samples are not finite, their dimensions or batch sizes disagree with each
        other or with ``noise_cov``, ``noise_cov`` is not positive definite, ``options``
        holds anything but a positive integer ``maxiter``, or J overflows at ``theta0``.
    NoMaximiserError
        A ``ValueError``: the NCE objective has no maximiser among Gaussians for these
        samples. When its maximiser over all :math:`\eta` does not exist (data and noise
        separable by a quadratic) or has a :math:`\Lambda` that is not positive definite,
        Newton's method only drifts towards a degenerate or unbounded precision matrix and
        never converges, from the start nor, tried next, from the noise itself (G = 0).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(size=(5000, 2)) * [1.0, 0.5]       # precision diag(1, 4)
    >>> y = rng.normal(size=(5000, 2)) * 1.5             # noise N(0, 2.25 I)
    >>> fit = fit_gaussian_nce(x, y, 2.25 * np.eye(2))
    >>> lam, c = gaussian_params(fit.theta)
    >>> np.round(lam, 1)
    array([[1., 0.],
           [0., 4.]])
    >>> bool(abs(c + gaussian_log_partition(lam)) < 0.05)  # self-normalised: c ≈ -log Z
    True
    """
    S_x, S_y, ln_x, ln_y, th0, eta_n = _gaussian_nce_inputs(x, y, noise_cov, theta0)
    nu = ln_y.shape[-1] / ln_x.shape[-1] if nu is None else as_positive_scalar(nu, "nu")
    maxiter = _newton_options(options)
    d = _dim_from_size(th0.shape[-1])
    data = _Samples(S_x, ln_x, 1.0 / ln_x.shape[-1], is_data=True)
    noise = _Samples(S_y, ln_y, nu / ln_y.shape[-1], is_data=False)
    eta0, _ = _gaussian_natural(th0, d)
    if theta0 is not None:
        J0 = _eta_terms(eta0, data, noise, nu, full=False)[0]
        finite_or_raise(J0, "J at theta0 (with x, y and noise_cov)", "start from another theta0")
    eta, J, done, nit = _newton_twice(eta0, eta_n, data, noise, nu, maxiter)
    lam, valid = _precision_from_eta(eta, d)
    lacking = ~(done & valid & np.isfinite(J))
    if lacking.any():
        raise NoMaximiserError(_no_maximiser_message(lacking), lacking)
    theta = gaussian_theta(lam, eta[..., -1])
    report = _Report(
        x=theta.ravel(), fun=-float(J.sum()), success=True, status=0, nit=nit,
        message="Newton's method converged: Newton decrement and step below tolerance",
    )  # fmt: skip
    return NCEFit(theta=theta, objective=_as_output(J), nu=float(nu), result=report)


def _newton_options(options) -> int:
    """The Newton iteration limit from ``options`` of :func:`fit_gaussian_nce`."""
    opts = as_options(options)
    unknown = sorted(set(opts) - {"maxiter"})
    if unknown:
        raise ValueError(f"options may only set maxiter (Newton iterations); got {unknown}")
    return as_int(opts.get("maxiter", _NEWTON_ITERS), "options['maxiter']", minimum=1)


def _moment_start(X: np.ndarray, theta_n: np.ndarray) -> np.ndarray:
    """The default start of :func:`fit_gaussian_nce`: per data set, the Gaussian that
    matches its second moments (the ML fit, within sampling error of the NCE estimate, so
    Newton's method needs a few steps however far the noise is from the data), or the noise
    where that Gaussian does not exist or is ill-conditioned."""
    th0 = np.broadcast_to(theta_n, (*X.shape[:-2], theta_n.size)).copy()
    with np.errstate(over="ignore", invalid="ignore"):
        second = np.swapaxes(X, -1, -2) @ X / X.shape[-2]
        finite = np.isfinite(second).all(axis=(-2, -1))
        w = np.linalg.eigvalsh(np.where(finite[..., None, None], second, 1.0))
        # well-conditioned moments on a moderate scale, so that Λ and log det Λ stay finite
        ok = finite & (w[..., 0] > 1e-8 * w[..., -1]) & (w[..., 0] > 1e-100)
        ok &= w[..., -1] < 1e100
    if not ok.any():
        return th0
    lam = np.linalg.inv(second[ok])
    lam = lam / 2 + np.swapaxes(lam, -1, -2) / 2
    th0[ok] = gaussian_theta(lam, -gaussian_log_partition(lam))
    return th0


def _gaussian_nce_inputs(x, y, noise_cov, theta0):
    """Checked statistics, noise log-densities and starting point of :func:`fit_gaussian_nce`."""
    X = as_real_array(x, "x", ndim=(2, 3))
    Y = as_real_array(y, "y", ndim=(2, 3))
    cov = _precision_matrix(noise_cov, "noise_cov")
    if cov.ndim != 2:
        raise ValueError(f"noise_cov must be one (d, d) matrix; got shape {cov.shape}")
    d = cov.shape[-1]
    for arr, name in ((X, "x"), (Y, "y")):
        if arr.shape[-1] != d:
            raise ValueError(
                f"{name} has dimension {arr.shape[-1]} but noise_cov is {d} x {d}; the "
                "samples and the noise density must live in the same space"
            )
    if X.ndim != Y.ndim or X.shape[:-2] != Y.shape[:-2]:
        raise ValueError(
            "x and y must both be (T, d) or both (B, T, d) with the same B; got shapes "
            f"{X.shape} and {Y.shape}"
        )
    # The noise is itself a member of the model family, normalised: its log-density is
    # the features times its natural parameters (the tests compare it with scipy).
    lam_n = np.linalg.inv(cov)
    lam_n = (lam_n + lam_n.T) / 2
    theta_n = gaussian_theta(lam_n, -gaussian_log_partition(lam_n))
    eta_n, _ = _gaussian_natural(theta_n, d)
    with np.errstate(over="ignore", invalid="ignore"):
        S_x, S_y = _gaussian_features(X), _gaussian_features(Y)
        ln_x, ln_y = S_x @ eta_n, S_y @ eta_n
    # Finite log p_n(u) = s(u) . eta_n with finite eta_n implies finite statistics s(u)
    # unless an overflow to inf met a zero coefficient; check both, without copies.
    for S, ln, what, hint in (
        (S_x, ln_x, "x x^T and log p_n(x) of x", "rescale x"),
        (S_y, ln_y, "y y^T and log p_n(y) of y (with noise_cov)", "rescale y and noise_cov"),
    ):
        finite_or_raise(ln, f"the statistics {what}", hint)
        if not np.isfinite(S).all():
            finite_or_raise(S, f"the statistics {what}", hint)
    if theta0 is None:
        return S_x, S_y, ln_x, ln_y, _moment_start(X, theta_n), eta_n
    th0 = as_real_array(theta0, "theta0", ndim=(1, 2))
    want = (*X.shape[:-2], theta_n.size)
    if th0.shape != want:
        raise ValueError(
            f"theta0 must have shape {want}: d (d + 1) / 2 + 1 = {theta_n.size} parameters "
            f"for d = {d}, one row per data set; got {th0.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        eta0, _ = _gaussian_natural(th0, d)
    finite_or_raise(eta0, "the precision matrix of theta0", _THETA_HINT)
    return S_x, S_y, ln_x, ln_y, th0, eta_n


# ---------------------------------------------------------------- Monte Carlo


@dataclass
class GaussianNCESimulation:
    """Estimates from :func:`simulate_gaussian_nce`: NCE and ML on the same data sets.

    Attributes
    ----------
    precision, c : numpy.ndarray, float
        The true :math:`\\Lambda` (d, d) and :math:`c^* = -\\log Z(\\Lambda)`.
    precision_nce, c_nce : numpy.ndarray
        NCE estimates, shapes (R, d, d) and (R,).
    precision_ml, c_ml : numpy.ndarray
        Maximum-likelihood estimates on the same data, shapes (R, d, d) and (R,).
    n_data, nu : int, float
        :math:`T_d` and :math:`\\nu` (so :math:`T_n = \\nu T_d`).
    fit : NCEFit
        The (batched) NCE fit with the optimiser's report.

    Examples
    --------
    >>> sim = simulate_gaussian_nce(np.eye(1), 500, reps=2, seed=0)
    >>> sim.precision_nce.shape, sim.c_ml.shape, sim.n_data, sim.nu
    ((2, 1, 1), (2,), 500, 1.0)
    >>> round(sim.c, 6)  # -log Z of the standard normal
    -0.918939
    """

    precision: np.ndarray
    c: float
    precision_nce: np.ndarray
    c_nce: np.ndarray
    precision_ml: np.ndarray
    c_ml: np.ndarray
    n_data: int
    nu: float
    fit: NCEFit


def simulate_gaussian_nce(
    precision,
    n_data: int,
    *,
    nu=1.0,
    noise_cov=None,
    reps: int = 1,
    seed: int | np.random.Generator = 0,
) -> GaussianNCESimulation:
    r"""Draw ``reps`` data sets from :math:`\mathcal N(0, \Lambda^{-1})`; fit each by NCE and ML.

    For each repetition: :math:`T_d` data samples :math:`x = z A^\top` with :math:`z`
    standard normal and :math:`A` the Cholesky factor of :math:`\Lambda^{-1}`, then
    :math:`T_n = \nu T_d` noise samples :math:`y = z' B^\top` with :math:`B` the Cholesky
    factor of :math:`\Sigma_n`. All data are drawn first (shape ``(reps, T_d, d)``), then all
    noise, from ``numpy.random.default_rng(seed)``; so calls with the same seed and
    :math:`T_d` share their data sets, and calls that differ only in :math:`\Sigma_n` share
    their standard-normal noise draws (common random numbers). The NCE fits run as one
    batched :func:`fit_gaussian_nce`; the reference is :func:`fit_gaussian_ml`.

    Parameters
    ----------
    precision : array_like, shape (d, d)
        The data's precision matrix :math:`\Lambda`.
    n_data : int
        :math:`T_d \ge d`.
    nu : float, default 1.0
        Noise-to-data ratio; :math:`\nu T_d` must be a whole number.
    noise_cov : array_like, shape (d, d), optional
        :math:`\Sigma_n`; default :math:`\Lambda^{-1}` (noise equal to the data distribution).
    reps : int, default 1
        Number of independent repetitions ``R``.
    seed : int or numpy.random.Generator

    Returns
    -------
    GaussianNCESimulation

    Raises
    ------
    ValueError, TypeError
        If ``precision`` or ``noise_cov`` is not symmetric positive definite or their sizes
        differ, ``n_data < d``, ``reps < 1``, ``nu <= 0`` or :math:`\nu T_d` is not a whole
        number.
    NoMaximiserError
        If some drawn data sets leave the objective without a maximiser (few samples, or a
        noise far from the data), as in :func:`fit_gaussian_nce`; its ``lacking`` says which.

    Examples
    --------
    >>> sim = simulate_gaussian_nce(np.eye(1), 2000, reps=3, seed=0)
    >>> sim.precision_nce.shape, sim.fit.success
    ((3, 1, 1), True)
    """
    lam = _precision_matrix(precision, "precision")
    if lam.ndim != 2:
        raise ValueError(f"precision must be one (d, d) matrix; got shape {lam.shape}")
    d = lam.shape[0]
    t_d = as_int(n_data, "n_data", minimum=d)
    reps = as_int(reps, "reps", minimum=1)
    nu = as_positive_scalar(nu, "nu")
    t_n = round(nu * t_d)
    if t_n < 1 or abs(t_n - nu * t_d) > 1e-9 * max(1.0, nu * t_d):
        raise ValueError(f"nu * n_data must be a positive whole number; got {nu} * {t_d}")
    cov_d = np.linalg.inv(lam)
    cov_d = (cov_d + cov_d.T) / 2
    if noise_cov is None:
        cov_n = cov_d
    else:
        cov_n = _precision_matrix(noise_cov, "noise_cov")
        if cov_n.shape != lam.shape:
            raise ValueError(
                f"noise_cov must have the shape of precision, {lam.shape}; got {cov_n.shape}"
            )
    rng = as_generator(seed)
    x = rng.standard_normal((reps, t_d, d)) @ np.linalg.cholesky(cov_d).T
    y = rng.standard_normal((reps, t_n, d)) @ np.linalg.cholesky(cov_n).T
    try:
        return _nce_and_ml(lam, x, y, cov_n, nu)
    except NoMaximiserError as exc:  # one sentence, in the terms of this function's arguments
        drawn = f"for the {t_d} data and {t_n} noise samples drawn with precision and noise_cov"
        advice = "use a larger n_data or nu, or a noise_cov closer to the inverse of precision"
        message = _no_maximiser_message(exc.lacking, drawn, advice)
        raise NoMaximiserError(message, exc.lacking) from None
    except ValueError as exc:
        raise ValueError(f"the NCE fit for this precision and noise_cov failed: {exc}") from None


def _nce_and_ml(
    lam: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    cov_n: np.ndarray,
    nu: float,
    ml: tuple[np.ndarray, np.ndarray] | None = None,
) -> GaussianNCESimulation:
    """Batched NCE fit and ML fit (or the given ML estimates) of data sets x (R, T_d, d)."""
    fit = fit_gaussian_nce(x, y, cov_n, nu=nu)
    lam_nce, c_nce = gaussian_params(fit.theta)
    lam_ml, c_ml = fit_gaussian_ml(x) if ml is None else ml
    return GaussianNCESimulation(
        precision=lam,
        c=-gaussian_log_partition(lam),
        precision_nce=lam_nce,
        c_nce=np.asarray(c_nce),
        precision_ml=lam_ml,
        c_ml=np.asarray(c_ml),
        n_data=x.shape[-2],
        nu=nu,
        fit=fit,
    )


def gaussian_ml_precision_mse(precision, n_data: int, *, exact: bool = True) -> float:
    r"""Mean squared error of the ML precision estimate, :math:`\mathbb E\lVert\hat\Lambda -
    \Lambda\rVert_F^2`, exactly or to first order.

    :math:`W = \sum_t x_t x_t^\top` is Wishart with :math:`T_d` degrees of freedom and scale
    :math:`\Lambda^{-1}`, so :math:`\hat\Lambda_{\mathrm{ML}} = T_d W^{-1}` is :math:`T_d` times an
    inverse-Wishart matrix with scale :math:`\Lambda`, whose mean is
    :math:`\Lambda / (T_d - d - 1)` and whose entries have variance
    :math:`[(T_d - d + 1)\Lambda_{ij}^2 + (T_d - d - 1)\Lambda_{ii}\Lambda_{jj}] /
    [(T_d - d)(T_d - d - 1)^2 (T_d - d - 3)]` (the standard moments of the
    inverse-Wishart distribution; checked by Monte Carlo in the tests). Summing variance and
    squared bias over the entries:

    .. math::

        \mathrm{MSE} &= \frac{T_d^2\,[(T_d - d + 1)\lVert\Lambda\rVert_F^2
                       + (T_d - d - 1)(\operatorname{tr}\Lambda)^2]}
                       {(T_d - d)(T_d - d - 1)^2(T_d - d - 3)} \\
        &\quad + \Bigl(\frac{d + 1}{T_d - d - 1}\Bigr)^2 \lVert\Lambda\rVert_F^2 \\
        &\xrightarrow{T_d \to \infty}\;
        \frac{(\operatorname{tr}\Lambda)^2 + \lVert\Lambda\rVert_F^2}{T_d}.

    The limit (``exact=False``) is the trace of the inverse Fisher information of
    :math:`\Lambda` divided by :math:`T_d`: the Cramér-Rao bound in Frobenius norm.

    Parameters
    ----------
    precision : array_like, shape (d, d)
        Symmetric positive definite :math:`\Lambda`.
    n_data : int
        :math:`T_d`; at least :math:`d + 4` when ``exact`` (the variance is infinite
        below), at least 1 otherwise.
    exact : bool, default True
        The finite-sample value, or the first-order (asymptotic) one.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``precision`` is not symmetric positive definite or ``n_data`` is too small.
    TypeError
        If ``exact`` is not a bool (``True``, ``False`` or a NumPy boolean).

    Examples
    --------
    In one dimension the first-order value is :math:`2\lambda^2 / T_d`:

    >>> round(gaussian_ml_precision_mse([[3.0]], 100, exact=False), 6)
    0.18
    >>> round(gaussian_ml_precision_mse([[3.0]], 100), 6)
    0.19898
    """
    lam = _precision_matrix(precision, "precision")
    if lam.ndim != 2:
        raise ValueError(f"precision must be one (d, d) matrix; got shape {lam.shape}")
    d = lam.shape[0]
    exact = as_bool(exact, "exact")
    t = as_int(n_data, "n_data", minimum=d + 4 if exact else 1)
    with np.errstate(over="ignore", invalid="ignore"):
        tr = float(np.trace(lam))
        tr2 = tr * tr  # not tr ** 2, which raises OverflowError for |tr| > 1.3e154
        fro2 = float(np.sum(lam**2))
    if not exact:
        out = (tr2 + fro2) / t
    else:
        var = t**2 * ((t - d + 1) * fro2 + (t - d - 1) * tr2)
        var /= (t - d) * (t - d - 1) ** 2 * (t - d - 3)
        out = var + ((d + 1) / (t - d - 1)) ** 2 * fro2
    finite_or_raise(out, "the MSE of precision", "rescale precision")
    return out
