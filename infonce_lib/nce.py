r"""Noise-contrastive estimation (NCE): fit an unnormalised model by telling data from noise.

Gutmann & Hyvärinen (2010, 2012) fit a model known only up to its normalising constant,
:math:`p_m(u; \alpha) = p_0(u; \alpha) / Z(\alpha)`, by making :math:`c = -\log Z` one more
parameter, :math:`\log p_m(u; \theta) = \log p_0(u; \alpha) + c` with
:math:`\theta = (\alpha, c)`, and fitting :math:`\theta` by logistic regression that separates
:math:`T_d` data samples :math:`x_t` from :math:`T_n = \nu T_d` samples :math:`y_t` of a known
noise density :math:`p_n`. With :math:`G(u; \theta) = \log p_m(u; \theta) - \log p_n(u)` the
posterior probability that :math:`u` is data is
:math:`h(u; \theta) = \sigma(G(u; \theta) - \log \nu)` and the objective is

.. math::

    J(\theta) = {} &\frac{1}{T_d} \sum_{t=1}^{T_d} \log h(x_t; \theta) \\
              &+ \frac{\nu}{T_n} \sum_{t=1}^{T_n} \log\bigl(1 - h(y_t; \theta)\bigr),

which is Gutmann & Hyvärinen's (2012) :math:`J_T` when :math:`T_n = \nu T_d` (their 2010
paper has :math:`\nu = 1` and divides by :math:`2 T_d`).

The module has three layers:

* :func:`nce_objective` and :func:`nce_objective_and_grad`: :math:`J` (and its gradient) from
  the values of :math:`\log p_m` and :math:`\log p_n` at the samples, for any model.
* :func:`fit_nce`: maximise :math:`J` with :func:`scipy.optimize.minimize`, gradient (and
  Gauss-Newton Hessian-vector products) supplied, for any model given as a function
  returning :math:`\log p_m` and its gradient; many independent problems can be fitted at
  once (a leading batch axis), which vectorises Monte Carlo repetitions.
* The zero-mean Gaussian model of chapter 1: :func:`gaussian_log_model` (precision matrix
  :math:`\Lambda` through a log-Cholesky factor, so every parameter vector is a valid
  model, plus :math:`c`; packed and unpacked by :func:`gaussian_theta` and
  :func:`gaussian_params`), :func:`gaussian_log_partition`, :func:`fit_gaussian_nce`, the
  reference estimator :func:`fit_gaussian_ml` with its exact error
  :func:`gaussian_ml_precision_mse`, the Monte Carlo driver :func:`simulate_gaussian_nce`,
  :func:`mse_ratio` for comparing estimators, and the experiment
  :func:`reproduce_nce_efficiency` (MSE(NCE) / MSE(ML) against :math:`1 + 1/\nu`).

Log-sigmoids are computed as ``-np.logaddexp(0, -z)`` (never ``log(sigmoid(z))``), so
:math:`J` is finite and accurate for any finite :math:`G`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import OptimizeResult, minimize
from scipy.special import expit

from ._validation import (
    as_generator,
    as_int,
    as_options,
    as_positive_scalar,
    as_real_array,
    as_sequence,
    finite_or_raise,
)
from .reproduce import Check, Report, format_table

__all__ = [
    "GaussianNCESimulation",
    "NCEFit",
    "fit_gaussian_ml",
    "fit_gaussian_nce",
    "fit_nce",
    "gaussian_log_model",
    "gaussian_log_partition",
    "gaussian_ml_precision_mse",
    "gaussian_params",
    "gaussian_theta",
    "mse_ratio",
    "nce_objective",
    "nce_objective_and_grad",
    "reproduce_nce_efficiency",
    "simulate_gaussian_nce",
]

LogModel = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


# ---------------------------------------------------------------- the objective


def _log_density_values(value, name: str, *, density: str) -> np.ndarray:
    """Float64 array of log-density values, at least 1-D; a clear error if not finite."""
    raw = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if raw.dtype.kind == "f" and raw.size and not np.isfinite(raw).all():
        n_bad = int((~np.isfinite(raw)).sum())
        raise ValueError(
            f"{name} must be finite: the {density} density must be positive and finite at "
            f"every sample (log-density > -inf); {n_bad} of {raw.size} entries are -inf, "
            "+inf or NaN"
        )
    arr = as_real_array(value, name, ndim=None)
    if arr.ndim < 1:
        raise ValueError(f"{name} must be at least 1-D (..., T); got a scalar")
    return arr


def _check_pairs(lm_x, ln_x, lm_y, ln_y) -> None:
    if lm_x.shape != ln_x.shape:
        raise ValueError(
            "log_model_data and log_noise_data must have the same shape (..., T_d); got "
            f"{lm_x.shape} and {ln_x.shape}"
        )
    if lm_y.shape != ln_y.shape:
        raise ValueError(
            "log_model_noise and log_noise_noise must have the same shape (..., T_n); got "
            f"{lm_y.shape} and {ln_y.shape}"
        )
    if lm_x.shape[:-1] != lm_y.shape[:-1]:
        raise ValueError(
            "the data arrays (..., T_d) and the noise arrays (..., T_n) must have the same "
            f"leading (batch) shape; got {lm_x.shape[:-1]} and {lm_y.shape[:-1]}"
        )


def _nce_terms(
    G_data: np.ndarray, G_noise: np.ndarray, nu: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unchecked core: J and the per-sample weights dJ/dG on clean float64 arrays.

    ``G_data`` has shape ``(..., T_d)``, ``G_noise`` shape ``(..., T_n)``. Returns ``J`` of
    shape ``(...)``, and weights ``w_data = σ(-z_x) / T_d`` and
    ``w_noise = -ν σ(z_y) / T_n`` (``z = G - log ν``) such that
    ``dJ/dθ = Σ_t w_data[t] ∇G(x_t) + Σ_t w_noise[t] ∇G(y_t)``.
    """
    log_nu = math.log(nu)
    t_d, t_n = G_data.shape[-1], G_noise.shape[-1]
    # With z = G - log ν: log h(x) = log σ(z_x) = -log(1 + e^{-z_x}) and
    # log(1 - h(y)) = log σ(-z_y) = -log(1 + e^{z_y}), both by np.logaddexp (no overflow).
    minus_z_x = np.subtract(log_nu, G_data)
    z_y = np.subtract(G_noise, log_nu)
    J = np.logaddexp(0.0, minus_z_x).sum(axis=-1) / -t_d
    J -= np.logaddexp(0.0, z_y).sum(axis=-1) * (nu / t_n)
    w_data = expit(minus_z_x)
    w_data /= t_d
    w_noise = expit(z_y)
    w_noise *= -nu / t_n
    return J, w_data, w_noise


_G_NAMES = (
    "the log-density ratios log_model_data - log_noise_data and log_model_noise - log_noise_noise"
)


def _checked_terms(G_data: np.ndarray, G_noise: np.ndarray, nu: float):
    """:func:`_nce_terms` for the public functions: overflow raises, never warns."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = _nce_terms(G_data, G_noise, nu)
    finite_or_raise(out[0], f"J (from {_G_NAMES})", "rescale the log-densities")
    return out


def _as_output(J: np.ndarray):
    return float(J) if J.ndim == 0 else J


def _objective_inputs(log_model_data, log_noise_data, log_model_noise, log_noise_noise, nu):
    """The checked inputs of :func:`nce_objective` and :func:`nce_objective_and_grad`."""
    nu = as_positive_scalar(nu, "nu")
    lm_x = as_real_array(log_model_data, "log_model_data", ndim=None)
    lm_y = as_real_array(log_model_noise, "log_model_noise", ndim=None)
    ln_x = _log_density_values(log_noise_data, "log_noise_data", density="noise")
    ln_y = _log_density_values(log_noise_noise, "log_noise_noise", density="noise")
    if lm_x.ndim < 1 or lm_y.ndim < 1:
        raise ValueError("log_model_data and log_model_noise must be at least 1-D (..., T)")
    _check_pairs(lm_x, ln_x, lm_y, ln_y)
    return nu, lm_x, ln_x, lm_y, ln_y


def nce_objective(log_model_data, log_noise_data, log_model_noise, log_noise_noise, nu=1.0):
    r"""The NCE objective :math:`J(\theta)` from log-densities at data and noise samples.

    .. math::

        J &= \frac{1}{T_d} \sum_{t=1}^{T_d} \log \sigma\bigl(G(x_t) - \log \nu\bigr)
          + \frac{\nu}{T_n} \sum_{t=1}^{T_n} \log \sigma\bigl(\log \nu - G(y_t)\bigr), \\
        G(u) &= \log p_m(u; \theta) - \log p_n(u),

    where :math:`\sigma(z) = 1/(1 + e^{-z})` and :math:`h(u) = \sigma(G(u) - \log \nu)` is the
    posterior probability that :math:`u` is data (Gutmann & Hyvärinen, 2012, section 2; 2010,
    section 2, for :math:`\nu = 1`, there divided by 2). With :math:`T_n = \nu T_d` the
    second term's factor :math:`\nu / T_n` is the paper's :math:`1 / T_d`; other :math:`T_n`
    give a Monte Carlo estimate of the same population objective
    :math:`\mathbb{E}_{p_d} \log h + \nu\, \mathbb{E}_{p_n} \log(1 - h)`. Always :math:`J < 0`.

    Parameters
    ----------
    log_model_data, log_noise_data : array_like, shape (..., T_d)
        :math:`\log p_m(x_t; \theta)` and :math:`\log p_n(x_t)` at the data samples.
    log_model_noise, log_noise_noise : array_like, shape (..., T_n)
        The same at the noise samples. Leading (batch) axes must match those of the data
        arrays; each batch entry is an independent problem.
    nu : float, default 1.0
        The noise-to-data ratio :math:`\nu > 0`.

    Returns
    -------
    float or numpy.ndarray of shape (...)
        :math:`J`, a float for 1-D inputs.

    Raises
    ------
    ValueError, TypeError
        If an array is empty, not real or not finite (a ``-inf`` noise log-density means the
        noise density is zero at a sample, which the theory excludes), if shapes do not
        match, or if ``nu`` is not a finite positive number.

    Examples
    --------
    When the model equals the noise (:math:`G = 0`) and :math:`\nu = 1`, every sample
    contributes :math:`\log \tfrac12`, so :math:`J = 2 \log \tfrac12`:

    >>> round(nce_objective([0.0, 0.0], [0.0, 0.0], [0.0], [0.0]), 6)
    -1.386294
    >>> round(2 * math.log(0.5), 6)
    -1.386294
    """
    nu, lm_x, ln_x, lm_y, ln_y = _objective_inputs(
        log_model_data, log_noise_data, log_model_noise, log_noise_noise, nu
    )
    with np.errstate(over="ignore", invalid="ignore"):
        G_x, G_y = lm_x - ln_x, lm_y - ln_y
    J, _, _ = _checked_terms(G_x, G_y, nu)
    return _as_output(J)


def nce_objective_and_grad(
    log_model_data,
    log_noise_data,
    log_model_noise,
    log_noise_noise,
    grad_model_data,
    grad_model_noise,
    nu=1.0,
):
    r"""The NCE objective :math:`J(\theta)` and its gradient with respect to :math:`\theta`.

    :math:`J` is as in :func:`nce_objective`. Since :math:`\nabla_\theta G = \nabla_\theta
    \log p_m` (the noise does not depend on :math:`\theta`) and
    :math:`\tfrac{d}{dz} \log \sigma(z) = \sigma(-z)`,

    .. math::

        \nabla_\theta J = {} &\frac{1}{T_d} \sum_{t=1}^{T_d} \sigma\bigl(\log\nu - G(x_t)\bigr)
            \nabla_\theta \log p_m(x_t; \theta) \\
          &- \frac{\nu}{T_n} \sum_{t=1}^{T_n} \sigma\bigl(G(y_t) - \log\nu\bigr)
            \nabla_\theta \log p_m(y_t; \theta)

    (the gradient of Gutmann & Hyvärinen's :math:`J_T`): data samples the classifier already
    calls data, and noise samples it already calls noise, hardly pull.

    Parameters
    ----------
    log_model_data, log_noise_data, log_model_noise, log_noise_noise : array_like
        As in :func:`nce_objective`: shapes ``(..., T_d)`` and ``(..., T_n)``.
    grad_model_data : array_like, shape (..., T_d, P)
        :math:`\nabla_\theta \log p_m(x_t; \theta)` for each data sample; ``P`` parameters.
    grad_model_noise : array_like, shape (..., T_n, P)
        The same at the noise samples.
    nu : float, default 1.0
        The noise-to-data ratio :math:`\nu > 0`.

    Returns
    -------
    J : float or numpy.ndarray of shape (...)
    grad : numpy.ndarray, shape (..., P)

    Raises
    ------
    ValueError, TypeError
        As :func:`nce_objective`, and if the gradient arrays do not have shapes
        ``(..., T_d, P)`` and ``(..., T_n, P)`` with the same ``P``.

    Examples
    --------
    A one-parameter model :math:`\log p_m = c` against a noise log-density of 0 at
    :math:`\nu = 1`: at :math:`c = 0` the data pull up and the noise pull down equally.

    >>> J, g = nce_objective_and_grad([0.0], [0.0], [0.0], [0.0], [[1.0]], [[1.0]])
    >>> round(J, 6), np.round(g, 6)
    (-1.386294, array([0.]))
    """
    nu, lm_x, ln_x, lm_y, ln_y = _objective_inputs(
        log_model_data, log_noise_data, log_model_noise, log_noise_noise, nu
    )
    g_x = as_real_array(grad_model_data, "grad_model_data", ndim=None)
    g_y = as_real_array(grad_model_noise, "grad_model_noise", ndim=None)
    if g_x.shape[:-1] != lm_x.shape:
        raise ValueError(
            f"grad_model_data must have shape (..., T_d, P) = {lm_x.shape} + (P,); got {g_x.shape}"
        )
    if g_y.shape[:-1] != lm_y.shape:
        raise ValueError(
            f"grad_model_noise must have shape (..., T_n, P) = {lm_y.shape} + (P,); got {g_y.shape}"
        )
    if g_x.shape[-1] != g_y.shape[-1]:
        raise ValueError(
            "grad_model_data and grad_model_noise must have the same number of parameters P; "
            f"got {g_x.shape[-1]} and {g_y.shape[-1]}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        G_x, G_y = lm_x - ln_x, lm_y - ln_y
    J, w_x, w_y = _checked_terms(G_x, G_y, nu)
    with np.errstate(over="ignore", invalid="ignore"):
        grad = np.einsum("...t,...tp->...p", w_x, g_x) + np.einsum("...t,...tp->...p", w_y, g_y)
    finite_or_raise(grad, "the gradient (from grad_model_data and grad_model_noise)")
    return _as_output(J), grad


# ---------------------------------------------------------------- fitting


@dataclass
class NCEFit:
    """The result of :func:`fit_nce`.

    Attributes
    ----------
    theta : numpy.ndarray, shape (P,) or (B, P)
        The estimate :math:`\\hat\\theta` (one row per problem for a batch).
    objective : float or numpy.ndarray of shape (B,)
        :math:`J(\\hat\\theta)` of each problem.
    nu : float
        The noise-to-data ratio used.
    result : scipy.optimize.OptimizeResult
        The optimiser's report (``success``, ``message``, ``nit``, ``nfev``, ...). For a
        batch, the independent problems are solved as one separable problem and this is its
        single report; ``result.fun`` is :math:`-\\sum_b J_b`.

    Examples
    --------
    The fit of :func:`fit_nce`'s example (:math:`\\log p_m(u) = c - u^2/2`, one parameter):

    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(2, 2000))
    >>> model = lambda th, u: (th[0] - u**2 / 2, np.ones((u.size, 1)))
    >>> ln = lambda u: -u**2 / 2 - 0.5 * math.log(2 * math.pi)
    >>> fit = fit_nce(model, [0.0], x, y, ln(x), ln(y))
    >>> fit.success, fit.theta.shape, fit.nu, bool(fit.objective < 0)
    (True, (1,), 1.0, True)
    """

    theta: np.ndarray
    objective: float | np.ndarray
    nu: float
    result: OptimizeResult

    @property
    def success(self) -> bool:
        """Whether the optimiser reports convergence."""
        return bool(self.result.success)


class _Jacobian:
    """∇θ log p_m at T samples: an array (..., T, P), or factored as S (..., T, Q) @ D (..., Q, P).

    The factored form suits exponential-family models, log p_m = s(u) · η(θ): S holds the
    sufficient statistics and D = dη/dθ, and products with weights never form S @ D.
    """

    def __init__(self, S: np.ndarray, D: np.ndarray | None = None):
        self.S, self.D = S, D

    def pullback(self, w: np.ndarray) -> np.ndarray:
        """Σ_t w_t ∇θ log p_m(u_t), shape (..., P)."""
        out = np.matmul(w[..., None, :], self.S)[..., 0, :]
        return out if self.D is None else np.matmul(out[..., None, :], self.D)[..., 0, :]

    def gram(self, v: np.ndarray) -> np.ndarray:
        """Σ_t v_t ∇θ log p_m(u_t) ∇θ log p_m(u_t)^T, shape (..., P, P)."""
        G = np.swapaxes(self.S * v[..., None], -1, -2) @ self.S
        return G if self.D is None else np.swapaxes(self.D, -1, -2) @ G @ self.D


def _call_model(
    log_model: LogModel, theta: np.ndarray, u, shape: tuple, which: str, shape_name: str
):
    out = log_model(theta, u)
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(
            f"log_model must return a pair (log_p, grad); got {type(out).__name__} for the "
            f"{which} samples"
        )
    p = theta.shape[-1]
    log_p = np.asarray(out[0], dtype=np.float64)
    if isinstance(out[1], tuple) and len(out[1]) == 2:
        S = np.asarray(out[1][0], dtype=np.float64)
        D = np.asarray(out[1][1], dtype=np.float64)
        ok = S.shape[:-1] == shape and D.shape == (*shape[:-1], S.shape[-1], p)
        got = f"grad factors of shapes {S.shape} and {D.shape}"
        jac = _Jacobian(S, D)
    else:
        S, D = np.asarray(out[1], dtype=np.float64), None
        ok = S.shape == (*shape, p)
        got = f"grad of shape {S.shape}"
        jac = _Jacobian(S)
    if log_p.shape != shape or not ok:
        raise ValueError(
            f"log_model must return log_p of shape {shape} (the shape of {shape_name}) and "
            f"grad of shape {(*shape, p)} (P = {p}, the last axis of theta0) (or factors S of "
            f"shape {(*shape, 'Q')} and D of shape {(*shape[:-1], 'Q', p)}) for the {which} "
            f"samples; got log_p of shape {log_p.shape} and {got}"
        )
    finite = np.isfinite(log_p).all() and np.isfinite(S).all()
    if not (finite and (D is None or np.isfinite(D).all())):
        raise ValueError(
            f"log_model returned non-finite values for the {which} samples (at "
            f"theta = {np.array2string(theta, precision=4, threshold=8)})"
        )
    return log_p, jac


def fit_nce(
    log_model: LogModel,
    theta0,
    data,
    noise,
    log_noise_data,
    log_noise_noise,
    nu=None,
    *,
    method: str = "trust-krylov",
    options: dict | None = None,
) -> NCEFit:
    r"""Fit :math:`\theta` by maximising the NCE objective with :func:`scipy.optimize.minimize`.

    .. math::

        \hat\theta = \arg\max_\theta J(\theta)

    with :math:`J` of :func:`nce_objective` and its analytic gradient
    (:func:`nce_objective_and_grad`) passed to the optimiser (Gutmann & Hyvärinen, 2010,
    section 2; 2012, section 2). Second-order methods (the default ``"trust-krylov"``,
    ``"trust-ncg"``, ``"Newton-CG"``) also get Hessian-vector products of the Gauss-Newton
    (Fisher) approximation

    .. math::

        \nabla^2 J \approx -\frac1{T_d} \sum_t \sigma(z_t)\sigma(-z_t)\, g_t g_t^\top
                          - \frac{\nu}{T_n} \sum_t \sigma(z'_t)\sigma(-z'_t)\, g'_t g'^\top_t,

    with :math:`g = \nabla_\theta \log p_m` and :math:`z = G - \log\nu` at the data
    (unprimed) and noise (primed) samples: the exact Hessian minus the terms in
    :math:`\nabla^2_\theta \log p_m`, which vanish for models linear in :math:`\theta`.
    It is negative definite, so every trust-region step is an ascent direction.

    A batch of ``B`` independent problems (``theta0`` of shape ``(B, P)``) is solved as one
    separable problem, maximising :math:`\sum_b J_b`: each block's gradient and Hessian
    depend only on its own samples, so the maximiser is the vector of the individual
    maximisers, and the Hessian-vector products stay block-diagonal (cost ``B P^2``).

    Parameters
    ----------
    log_model : callable
        ``log_model(theta, u) -> (log_p, grad)``: :math:`\log p_m(u_t; \theta)` of shape
        ``(..., T)`` and its gradient with respect to ``theta``, shape ``(..., T, P)``, for
        ``theta`` of shape ``theta0.shape`` and ``u`` one of ``data`` and ``noise``.
        Unnormalised: :math:`c` is one of the parameters. The gradient may also be
        returned factored, as a pair ``(S, D)`` with ``S`` of shape ``(..., T, Q)`` and
        ``D`` of shape ``(..., Q, P)`` meaning ``grad = S @ D``: for an exponential-family
        model :math:`\log p_m = s(u) \cdot \eta(\theta)`, ``S`` holds the statistics
        :math:`s(u_t)` and ``D`` the Jacobian :math:`d\eta/d\theta`, and the fit never
        forms the product.
    theta0 : array_like, shape (P,) or (B, P)
        Starting point(s).
    data, noise : object
        The data and noise samples, passed to ``log_model`` unchanged (arrays of samples, or
        precomputed features of them).
    log_noise_data : array_like, shape (T_d,) or (B, T_d)
        :math:`\log p_n(x_t)` at the data samples; must be finite (the noise density must
        be positive wherever there are data).
    log_noise_noise : array_like, shape (T_n,) or (B, T_n)
        :math:`\log p_n(y_t)` at the noise samples.
    nu : float, optional
        The noise-to-data ratio; default :math:`T_n / T_d`.
    method : str, default "trust-krylov"
        A method of :func:`scipy.optimize.minimize` that uses the gradient (and, for
        ``"trust-krylov"``, ``"trust-ncg"``, ``"Newton-CG"``, Hessian-vector products);
        e.g. ``"L-BFGS-B"`` for gradient only.
    options : dict, optional
        Passed to the optimiser. Defaults: ``{"gtol": 1e-7 * sqrt(theta0.size)}`` for the
        trust-region methods (which test the norm of the whole gradient),
        ``{"gtol": 1e-9, "ftol": 1e-15}`` for L-BFGS-B (stop on the gradient, not on a small
        relative change of the summed objective), and ``maxiter`` 2000.

    Returns
    -------
    NCEFit
        The estimate, :math:`J` at the estimate, :math:`\nu` and the optimiser's report.

    Raises
    ------
    ValueError, TypeError
        If the inputs have inconsistent shapes, ``nu`` is not positive, a noise
        log-density is not finite, ``method`` is unknown, or ``log_model`` returns arrays of
        the wrong shape or non-finite values.

    Examples
    --------
    The one-parameter model :math:`\log p_m(u) = c - u^2/2` against standard-normal noise
    at :math:`\nu = 1`: the data are standard normal too, so :math:`\hat c` estimates
    :math:`-\tfrac12 \log 2\pi \approx -0.919`.

    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(2, 20_000))
    >>> model = lambda th, u: (th[0] - u**2 / 2, np.ones((u.size, 1)))
    >>> ln = lambda u: -u**2 / 2 - 0.5 * math.log(2 * math.pi)
    >>> fit = fit_nce(model, [0.0], x, y, ln(x), ln(y))
    >>> fit.success, round(float(fit.theta[0]), 2)
    (True, -0.92)
    """
    th0 = as_real_array(theta0, "theta0", ndim=(1, 2))
    ln_x = _log_density_values(log_noise_data, "log_noise_data", density="noise")
    ln_y = _log_density_values(log_noise_noise, "log_noise_noise", density="noise")
    for arr, name in ((ln_x, "log_noise_data"), (ln_y, "log_noise_noise")):
        if arr.ndim != th0.ndim or arr.shape[:-1] != th0.shape[:-1]:
            shape = "(T,)" if th0.ndim == 1 else f"({th0.shape[0]}, T)"
            raise ValueError(
                f"{name} must have shape {shape} to match theta0 of shape {th0.shape}; got "
                f"{arr.shape}"
            )
    t_d, t_n = ln_x.shape[-1], ln_y.shape[-1]
    nu = t_n / t_d if nu is None else as_positive_scalar(nu, "nu")
    if not callable(log_model):
        raise TypeError(f"log_model must be callable; got {type(log_model).__name__}")
    if not isinstance(method, str):
        raise TypeError(f"method must be a string; got {type(method).__name__}")
    options = as_options(options)
    second_order = method.lower() in _SECOND_ORDER
    log_nu = math.log(nu)
    cache: dict = {}

    def evaluate(flat: np.ndarray) -> dict:
        if "x" in cache and np.array_equal(cache["x"], flat):
            return cache
        theta = flat.reshape(th0.shape)
        lm_x, g_x = _call_model(log_model, theta, data, ln_x.shape, "data", "log_noise_data")
        lm_y, g_y = _call_model(log_model, theta, noise, ln_y.shape, "noise", "log_noise_noise")
        with np.errstate(over="ignore", invalid="ignore"):
            G_x, G_y = lm_x - ln_x, lm_y - ln_y
            J, w_x, w_y = _nce_terms(G_x, G_y, nu)
            grad = g_x.pullback(w_x) + g_y.pullback(w_y)
        cache.clear()
        cache.update(x=flat.copy(), J=J, grad=grad, G_x=G_x, G_y=G_y, g_x=g_x, g_y=g_y)
        return cache

    def negative_objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
        ev = evaluate(flat)
        return -float(ev["J"].sum()), -ev["grad"].ravel()

    def hessp(flat: np.ndarray, vec: np.ndarray) -> np.ndarray:
        ev = evaluate(flat)
        if "H" not in ev:  # minus the Gauss-Newton matrix, block by block: (..., P, P)
            H = np.zeros((*th0.shape, th0.shape[-1]))
            for G, g, scale in ((ev["G_x"], ev["g_x"], 1 / t_d), (ev["G_y"], ev["g_y"], nu / t_n)):
                # σ(z) σ(-z) = e / (1 + e)^2 with e = exp(-|z|) <= 1: no overflow, no cancellation.
                e = np.exp(-np.abs(G - log_nu))
                v = e / (1.0 + e) ** 2 * scale
                H += g.gram(v)
            ev["H"] = H
        return (ev["H"] @ vec.reshape(th0.shape)[..., None]).ravel()

    opts: dict = {"maxiter": 2000}
    if method.upper() == "L-BFGS-B":
        opts.update(gtol=1e-9, ftol=1e-15)
    elif second_order and method.lower() != "newton-cg":
        # The trust-region methods stop on the Euclidean norm of the whole gradient; 1e-7
        # per component is far below any sampling error, and well above the rounding of a
        # sum of B objectives.
        opts.update(gtol=1e-7 * math.sqrt(th0.size))
    opts.update(options)
    extra = {"hessp": hessp} if second_order else {}
    start = evaluate(th0.ravel())
    finite_or_raise(
        np.append(start["J"], start["grad"]),
        "J and its gradient at theta0 (from log_model, log_noise_data and log_noise_noise)",
        "start from another theta0 or rescale the log-densities",
    )
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            result = minimize(
                negative_objective, th0.ravel(), jac=True, method=method, options=opts, **extra
            )
    except ValueError as exc:
        if "Unknown solver" in str(exc):
            raise ValueError(f"method must be a scipy.optimize.minimize method; {exc}") from None
        if str(exc).startswith("log_model returned non-finite"):
            raise ValueError(f"{_DIVERGED} ({exc}); {_DIVERGED_HINT}") from None
        raise
    theta = result.x.reshape(th0.shape)
    J = evaluate(result.x)["J"]
    if not (np.isfinite(theta).all() and np.isfinite(J).all()):
        raise ValueError(f"{_DIVERGED} (theta or J is not finite); {_DIVERGED_HINT}")
    return NCEFit(theta=theta, objective=_as_output(J), nu=float(nu), result=result)


_SECOND_ORDER = {"trust-krylov", "trust-ncg", "newton-cg"}
_DIVERGED = "the optimiser diverged"
_DIVERGED_HINT = (
    "rescale log_noise_data and log_noise_noise (and log_model), or start from another theta0"
)


# ---------------------------------------------------------------- the Gaussian model


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
    by row, as ``numpy.tril_indices``), then 1 (the coefficient of c).
    """
    d = u.shape[-1]
    rows, cols = np.tril_indices(d)
    half = np.where(rows == cols, 0.5, 1.0)
    quad = u[..., rows] * u[..., cols]
    quad *= -half
    return np.concatenate([quad, np.ones((*quad.shape[:-1], 1))], axis=-1)


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
    r"""NCE fit of the unnormalised zero-mean Gaussian against Gaussian noise.

    Maximises :math:`J(\theta)` of :func:`nce_objective` for the model
    :func:`gaussian_log_model` with noise :math:`p_n = \mathcal N(0, \Sigma_n)`, by
    :func:`fit_nce`. The default starting point is the noise itself (:math:`\Lambda =
    \Sigma_n^{-1}`, :math:`c = -\log Z(\Sigma_n^{-1})`, so :math:`G \equiv 0`).

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
        Passed to :func:`fit_nce`.

    Returns
    -------
    NCEFit
        ``theta`` unpacks with :func:`gaussian_params`.

    Raises
    ------
    ValueError, TypeError
        If the samples are not finite, their dimensions or batch sizes disagree with each
        other or with ``noise_cov``, or ``noise_cov`` is not positive definite.

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
    finite_or_raise(np.append(S_x, ln_x), "the statistics x x^T and log p_n(x) of x", "rescale x")
    finite_or_raise(
        np.append(S_y, ln_y),
        "the statistics y y^T and log p_n(y) of y (with noise_cov)",
        "rescale y and noise_cov",
    )
    if theta0 is None:
        theta0 = np.broadcast_to(theta_n, (*X.shape[:-2], theta_n.size)).copy()
    else:
        th0 = as_real_array(theta0, "theta0", ndim=(1, 2))
        want = (*X.shape[:-2], theta_n.size)
        if th0.shape != want:
            raise ValueError(
                f"theta0 must have shape {want} (d (d + 1) / 2 + 1 = {theta_n.size} parameters "
                f"for d = {d}, one row per data set); got {th0.shape}"
            )
        with np.errstate(over="ignore", invalid="ignore"):
            eta0, _ = _gaussian_natural(th0, d)
        finite_or_raise(eta0, "the precision matrix of theta0", _THETA_HINT)
        theta0 = th0

    def model(theta, features):  # gradient factored as features @ dη/dθ (see fit_nce)
        eta, D = _gaussian_natural(theta, d)
        return np.matmul(features, eta[..., None])[..., 0], (features, D)

    try:
        return fit_nce(model, theta0, S_x, S_y, ln_x, ln_y, nu, options=options)
    except ValueError as exc:
        if not str(exc).startswith(_DIVERGED):
            raise
        raise ValueError(
            f"the NCE fit of x against the noise y ~ N(0, noise_cov) left float64 ({exc}); put "
            "x, y and noise_cov on comparable scales"
        ) from None


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
    exact = bool(exact)
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


def mse_ratio(errors_num, errors_den) -> tuple[float, float]:
    r"""Ratio of two Monte Carlo mean squared errors and its standard error (delta method).

    With :math:`a_r = \lVert e^{(1)}_r \rVert^2` and :math:`b_r = \lVert e^{(2)}_r \rVert^2`
    the squared errors of two estimators in repetition :math:`r = 1, \dots, R` (possibly
    on the same data, so correlated),

    .. math::

        \hat\rho = \frac{\bar a}{\bar b}, \qquad
        \operatorname{SE}(\hat\rho) = \frac{\operatorname{sd}(a_r - \hat\rho\, b_r)}
                                          {\sqrt{R}\ \bar b},

    the first-order (delta-method) standard error of a ratio of means, which accounts for
    the correlation between :math:`a` and :math:`b`; sd uses ``ddof=1``.

    Parameters
    ----------
    errors_num, errors_den : array_like, shape (R, ...)
        Estimate minus truth for each repetition (any trailing shape, flattened per
        repetition), the numerator's and the denominator's estimator. ``R >= 2``.

    Returns
    -------
    ratio, se : float

    Raises
    ------
    ValueError
        If the arrays differ in shape, have fewer than 2 repetitions, are not finite, or
        the denominator's errors are all zero.

    Examples
    --------
    >>> r, se = mse_ratio([[2.0], [-2.0], [4.0]], [[1.0], [-1.0], [2.0]])
    >>> round(r, 6), round(se, 6)
    (4.0, 0.0)
    """
    a_err = as_real_array(errors_num, "errors_num", ndim=None)
    b_err = as_real_array(errors_den, "errors_den", ndim=None)
    if a_err.shape != b_err.shape:
        raise ValueError(
            f"errors_num and errors_den must have the same shape; got {a_err.shape} and "
            f"{b_err.shape}"
        )
    if a_err.ndim < 1 or a_err.shape[0] < 2:
        raise ValueError(
            "errors_num and errors_den need at least 2 repetitions along axis 0; got shape "
            f"{a_err.shape}"
        )
    reps = a_err.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.sum(a_err.reshape(reps, -1) ** 2, axis=1)
        b = np.sum(b_err.reshape(reps, -1) ** 2, axis=1)
    finite_or_raise(a, "the squared errors of errors_num", "rescale errors_num")
    finite_or_raise(b, "the squared errors of errors_den", "rescale errors_den")
    b_bar = b.mean()
    if b_bar == 0:
        raise ValueError("errors_den are all zero: the ratio is undefined")
    ratio = a.mean() / b_bar
    se = np.std(a - ratio * b, ddof=1) / (math.sqrt(reps) * b_bar)
    return float(ratio), float(se)


# ---------------------------------------------------------------- the efficiency experiment


def reproduce_nce_efficiency(
    nus=(0.5, 1.0, 2.0, 4.0),
    n_data: int = 1000,
    reps: int = 400,
    seed: int = 2012,
) -> Report:
    r"""Monte Carlo check of NCE's efficiency with noise equal to the data: ratio :math:`1 + 1/\nu`.

    Gutmann & Hyvärinen (2010, section 2.4, for :math:`\nu = 1`; 2012, for any
    :math:`\nu`): when :math:`p_n = p_d`, the asymptotic covariance of the NCE estimate
    is :math:`(1 + 1/\nu)` times that of maximum likelihood. For the zero-mean Gaussian
    with precision :math:`\Lambda` (:math:`d = 2`, unit variances, correlation 0.6), each of
    ``reps`` data sets of :math:`T_d` samples is fitted by NCE (for every :math:`\nu`, with
    :math:`T_n = \nu T_d` fresh noise samples from :math:`p_d`) and by ML, and

    .. math::

        \hat\rho_\nu = \frac{\sum_r \lVert\hat\Lambda^{\mathrm{NCE}}_r - \Lambda\rVert_F^2}
                            {\sum_r \lVert\hat\Lambda^{\mathrm{ML}}_r - \Lambda\rVert_F^2}

    is compared with :math:`1 + 1/\nu` using the delta-method standard error of
    :func:`mse_ratio`. The same data sets serve every :math:`\nu` (seeded by ``seed``).

    Checks: every fit converged; the ML Monte Carlo MSE agrees with its exact value
    (:func:`gaussian_ml_precision_mse`) within 3 standard errors; each
    :math:`\hat\rho_\nu` is within 3 standard errors of :math:`1 + 1/\nu`.

    Parameters
    ----------
    nus : sequence of float
        Noise-to-data ratios; each :math:`\nu T_d` must be a whole number.
    n_data : int
        :math:`T_d`.
    reps : int
        Repetitions ``R`` (at least 2).
    seed : int

    Returns
    -------
    Report
        ``results`` holds, per :math:`\nu`, the ratio, its standard error, the theory value
        and :math:`T_d\,\mathrm{MSE}` of NCE; and :math:`T_d\,\mathrm{MSE}` of ML (Monte
        Carlo, exact, first order).

    Examples
    --------
    >>> report = reproduce_nce_efficiency(nus=(1.0,), n_data=200, reps=50, seed=2)
    >>> report.passed, round(report.results["nu"][0]["theory"], 3)
    (True, 2.0)
    """
    nus = [as_positive_scalar(nu, "nus") for nu in as_sequence(nus, "nus")]
    if not nus:
        raise ValueError("nus must hold at least one noise-to-data ratio")
    reps = as_int(reps, "reps", minimum=2)
    seed = as_int(seed, "seed", minimum=0)
    sigma = np.array([[1.0, 0.6], [0.6, 1.0]])
    lam = np.linalg.inv(sigma)
    lam = (lam + lam.T) / 2
    t_d = as_int(n_data, "n_data", minimum=2)
    t_n = [round(nu * t_d) for nu in nus]
    if any(abs(n - nu * t_d) > 1e-9 * nu * t_d or n < 1 for n, nu in zip(t_n, nus, strict=True)):
        raise ValueError(
            f"every nu * n_data must be a positive whole number (nus * n_data); got {nus} * {t_d}"
        )
    rng = np.random.default_rng(seed)
    chol = np.linalg.cholesky(sigma)
    x = rng.standard_normal((reps, t_d, 2)) @ chol.T  # the data sets, shared by every nu
    ml = fit_gaussian_ml(x)
    ml_err = ml[0] - lam
    rows, converged = [], True
    out: dict = {"d": 2, "n_data": t_d, "reps": reps, "seed": seed, "nu": []}
    for nu, n in zip(nus, t_n, strict=True):
        y = rng.standard_normal((reps, n, 2)) @ chol.T  # fresh noise from p_d
        sim = _nce_and_ml(lam, x, y, sigma, nu, ml=ml)
        converged &= sim.fit.success
        ratio, se = mse_ratio(sim.precision_nce - lam, ml_err)
        mse_nce = float(np.mean(np.sum((sim.precision_nce - lam) ** 2, axis=(1, 2))))
        out["nu"].append(
            {
                "nu": nu,
                "ratio": ratio,
                "se": se,
                "theory": 1 + 1 / nu,
                "z": (ratio - (1 + 1 / nu)) / se,
                "nce_mse_T": mse_nce * t_d,
                "iterations": int(sim.fit.result.nit),
            }
        )
    sq_ml = np.sum(ml_err**2, axis=(1, 2))
    out["ml_mse_T"] = float(sq_ml.mean() * t_d)
    out["ml_mse_T_se"] = float(sq_ml.std(ddof=1) / math.sqrt(reps) * t_d)
    out["ml_mse_T_exact"] = gaussian_ml_precision_mse(lam, t_d) * t_d
    out["ml_mse_T_first_order"] = gaussian_ml_precision_mse(lam, t_d, exact=False) * t_d
    out["converged"] = bool(converged)
    for r in out["nu"]:
        rows.append([r["nu"], r["nce_mse_T"], r["ratio"], r["se"], r["theory"], r["z"]])
    table = format_table(
        ["nu", "T_d MSE(NCE)", "MSE ratio", "SE", "1 + 1/nu", "z"],
        rows,
        [".2f", ".3f", ".3f", ".3f", ".3f", "+.2f"],
    )
    table += (
        f"\n\nML: T_d MSE = {out['ml_mse_T']:.3f} ± {out['ml_mse_T_se']:.3f} (Monte Carlo), "
        f"{out['ml_mse_T_exact']:.3f} (exact),\n    {out['ml_mse_T_first_order']:.3f} "
        f"(first order); d = 2, T_d = {t_d}, {reps} repetitions"
    )
    z_ml = (out["ml_mse_T"] - out["ml_mse_T_exact"]) / out["ml_mse_T_se"]
    checks = [
        Check("every NCE fit converged", out["converged"]),
        Check("ML Monte Carlo MSE within 3 SE of exact", abs(z_ml) < 3, f"z = {z_ml:+.2f}"),
    ]
    for r in out["nu"]:
        checks.append(
            Check(
                f"nu = {r['nu']:g}: within 3 SE of 1 + 1/nu",
                abs(r["z"]) < 3,
                f"{r['ratio']:.3f} ± {r['se']:.3f} vs {r['theory']:.3f}, z = {r['z']:+.2f}",
            )
        )
    return Report(results=out, tables=table, checks=checks)
