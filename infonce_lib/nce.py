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

The module has two layers:

* :func:`nce_objective` and :func:`nce_objective_and_grad`: :math:`J` (and its gradient) from
  the values of :math:`\log p_m` and :math:`\log p_n` at the samples, for any model.
* :func:`fit_nce`: maximise :math:`J` with :func:`scipy.optimize.minimize`, gradient (and
  Gauss-Newton Hessian-vector products) supplied, for any model given as a function
  returning :math:`\log p_m` and its gradient; many independent problems can be fitted at
  once (a leading batch axis), which vectorises Monte Carlo repetitions. :func:`mse_ratio`
  compares two estimators' Monte Carlo errors.

The zero-mean Gaussian model of chapter 1 is in :mod:`infonce_lib.gaussian_nce`.

Log-sigmoids are computed as ``-np.logaddexp(0, -z)`` (never ``log(sigmoid(z))``), so
:math:`J` is finite and accurate for any finite :math:`G`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._maximiser import (
    _ADVICE,
    _BadModelOutput,
    _call_model,
    _Diverged,
    _lacking_maximiser,
    _where,
)
from ._validation import (
    as_array,
    as_options,
    as_positive_scalar,
    as_real_array,
    finite_or_raise,
)

if TYPE_CHECKING:
    from scipy.optimize import OptimizeResult

__all__ = [
    "NCEFit",
    "NoMaximiserError",
    "fit_nce",
    "mse_ratio",
    "nce_objective",
    "nce_objective_and_grad",
]

LogModel = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


# ---------------------------------------------------------------- the objective


def _log_density_values(value, name: str, *, density: str) -> np.ndarray:
    """Float64 array of log-density values, at least 1-D; a clear error if not finite."""
    raw = as_array(value, name)  # the policy for masked arrays and tensors comes first
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
    G_data: np.ndarray, G_noise: np.ndarray, nu: float, weights: bool = True
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Unchecked core: J and the per-sample weights dJ/dG on clean float64 arrays.

    ``G_data`` has shape ``(..., T_d)``, ``G_noise`` shape ``(..., T_n)``. Returns ``J`` of
    shape ``(...)``, and (``None`` without ``weights``) weights ``w_data = σ(-z_x) / T_d``
    and ``w_noise = -ν σ(z_y) / T_n`` (``z = G - log ν``) such that
    ``dJ/dθ = Σ_t w_data[t] ∇G(x_t) + Σ_t w_noise[t] ∇G(y_t)``.
    """
    log_nu = math.log(nu)
    t_d, t_n = G_data.shape[-1], G_noise.shape[-1]
    # With z = G - log ν: log h(x) = log σ(z_x) = -softplus(-z_x) and
    # log(1 - h(y)) = log σ(-z_y) = -softplus(z_y).
    sp_x, w_data = _softplus_sum(np.subtract(log_nu, G_data), weights)
    sp_y, w_noise = _softplus_sum(np.subtract(G_noise, log_nu), weights)
    J = sp_x / -t_d
    J -= sp_y * (nu / t_n)
    if weights:
        w_data /= t_d
        w_noise *= -nu / t_n
    return J, w_data, w_noise


def _softplus_sum(u: np.ndarray, sigmoid: bool):
    """Σ softplus(u) over the last axis and, if ``sigmoid``, σ(u), from one e = e^{-|u|} <= 1:
    softplus(u) = log(1 + e^u) = max(u, 0) + log1p(e) and σ(u) = 1/(1 + e) for u >= 0,
    e/(1 + e) below (no overflow, no cancellation)."""
    e = np.exp(-np.abs(u))
    total = np.maximum(u, 0.0).sum(axis=-1) + np.log1p(e).sum(axis=-1)
    if not sigmoid:
        return total, None
    sig = np.where(u >= 0, 1.0, e)
    sig /= 1.0 + e
    return total, sig


_G_NAMES = (
    "the log-density ratios log_model_data - log_noise_data and log_model_noise - log_noise_noise"
)


def _checked_terms(G_data: np.ndarray, G_noise: np.ndarray, nu: float, weights: bool = True):
    """:func:`_nce_terms` for the public functions: overflow raises, never warns."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = _nce_terms(G_data, G_noise, nu, weights)
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
        noise density is zero at a sample, which the theory excludes), is a masked array or
        a PyTorch tensor (``TypeError``), if shapes do not match, or if ``nu`` is not a
        finite positive number.
    ValueError
        If :math:`J` overflows float64 although the inputs are finite: a log-density ratio
        :math:`G = \log p_m - \log p_n` beyond ``±1.8e308`` (such as ``1e308 - (-1e308)``),
        or the sum of the samples' terms beyond it.

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
    J, _, _ = _checked_terms(G_x, G_y, nu, weights=False)
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
        As :func:`nce_objective` (also when :math:`J` overflows), and if the gradient arrays
        do not have shapes ``(..., T_d, P)`` and ``(..., T_n, P)`` with the same ``P``.
    ValueError
        If the gradient overflows float64 although its inputs are finite: the weighted sum
        of ``grad_model_data`` and ``grad_model_noise`` over the samples beyond ``±1.8e308``.

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


class NoMaximiserError(ValueError):
    r"""The NCE objective has no maximiser for the samples: no parameter value fits best.

    Raised by :func:`fit_nce`, :func:`~infonce_lib.fit_gaussian_nce` and
    :func:`~infonce_lib.simulate_gaussian_nce` when :math:`J` keeps rising towards a
    supremum that no parameter value attains, as it does with few samples: the fit
    separates the data from the noise, or the parameters run off towards the edge of the
    model's domain. A ``ValueError``, so ``except ValueError`` catches it too; its message
    is one sentence that says what to change (more samples, or noise closer to the data).

    Attributes
    ----------
    lacking : numpy.ndarray of bool or None
        For a batch, which problems (rows of ``theta0``, or data sets) have no maximiser;
        ``None`` where the fit diverged and cannot tell them apart.

    Examples
    --------
    Data all positive and noise all negative: :math:`\log p_m(u) = \theta u` tells them
    apart ever better as :math:`\theta` grows, so no :math:`\theta` maximises :math:`J`.

    >>> x = np.array([1.0, 2.0, 0.5])
    >>> model = lambda th, u: (th[0] * u, u[:, None])
    >>> try:
    ...     fit_nce(model, [0.0], x, -x, np.zeros(3), np.zeros(3))
    ... except NoMaximiserError as exc:
    ...     print(str(exc).split(":")[0])
    the NCE objective has no maximiser for these samples
    """

    def __init__(self, message: str, lacking: np.ndarray | None = None):
        super().__init__(message)
        self.lacking = lacking


@dataclass
class NCEFit:
    """The result of :func:`fit_nce` (and of :func:`~infonce_lib.fit_gaussian_nce`).

    Attributes
    ----------
    theta : numpy.ndarray, shape (P,) or (B, P)
        The estimate :math:`\\hat\\theta` (one row per problem for a batch).
    objective : float or numpy.ndarray of shape (B,)
        :math:`J(\\hat\\theta)` of each problem.
    nu : float
        The noise-to-data ratio used.
    result : scipy.optimize.OptimizeResult or dict
        The optimiser's report, read by key or by attribute (``result.success``,
        ``result["nit"]``). :func:`fit_nce` gives SciPy's
        :class:`~scipy.optimize.OptimizeResult` (``success``, ``message``, ``nit``,
        ``nfev``, ...); Newton's method of :func:`~infonce_lib.fit_gaussian_nce` gives a
        ``dict`` with the same attribute access and the keys ``x``, ``fun``, ``success``,
        ``status``, ``nit`` and ``message``. For a batch, the independent problems are
        solved as one separable problem and this is its single report; ``result.fun`` is
        :math:`-\\sum_b J_b`.

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
    result: OptimizeResult | dict

    @property
    def success(self) -> bool:
        """Whether the optimiser reports convergence."""
        return bool(self.result.success)


class _NCEProblem:
    r"""The NCE objective of one fit as a function of :math:`\theta`: value, gradient, and
    Gauss-Newton Hessian-vector products (see :func:`fit_nce`).

    ``theta`` has the shape of ``theta0``, ``(P,)`` or ``(B, P)``; a batch is one separable
    problem whose objective is :math:`\sum_b J_b`. Evaluations are cached for the last
    ``theta`` (an optimiser asks for the value, the gradient and products at one point).
    """

    def __init__(self, log_model: LogModel, shape: tuple, data, noise, ln_x, ln_y, nu: float):
        self.log_model, self.shape = log_model, shape
        self.data, self.noise, self.ln_x, self.ln_y, self.nu = data, noise, ln_x, ln_y, nu
        self._at: np.ndarray | None = None
        self._ev: dict = {}

    def _evaluate(self, theta: np.ndarray) -> dict:
        theta = np.asarray(theta, dtype=np.float64).reshape(self.shape)
        if self._at is not None and np.array_equal(self._at, theta):
            return self._ev
        lm_x, g_x = _call_model(self.log_model, theta, self.data, self.ln_x.shape, "data",
                                "log_noise_data")  # fmt: skip
        lm_y, g_y = _call_model(self.log_model, theta, self.noise, self.ln_y.shape, "noise",
                                "log_noise_noise")  # fmt: skip
        with np.errstate(over="ignore", invalid="ignore"):
            G_x, G_y = lm_x - self.ln_x, lm_y - self.ln_y
            J, w_x, w_y = _nce_terms(G_x, G_y, self.nu)
            grad = g_x.pullback(w_x) + g_y.pullback(w_y)
        self._at = theta.copy()
        self._ev = {"J": J, "grad": grad, "G_x": G_x, "G_y": G_y, "g_x": g_x, "g_y": g_y}
        return self._ev

    def values(self, theta) -> np.ndarray:
        """:math:`J_b(\theta_b)`, shape ``()`` or ``(B,)``."""
        return self._evaluate(theta)["J"]

    def value(self, theta) -> float:
        r""":math:`\sum_b J_b`."""
        return float(self.values(theta).sum())

    def gradient(self, theta) -> np.ndarray:
        r""":math:`\nabla_\theta J`, the shape of ``theta``."""
        return self._evaluate(theta)["grad"]

    def gauss_newton(self, theta) -> np.ndarray:
        r"""The Gauss-Newton approximation of :math:`\nabla^2_\theta J`, (..., P, P)."""
        ev = self._evaluate(theta)
        if "H" not in ev:  # block by block
            H = np.zeros((*self.shape, self.shape[-1]))
            t_d, t_n, log_nu = self.ln_x.shape[-1], self.ln_y.shape[-1], math.log(self.nu)
            scaled = ((ev["G_x"], ev["g_x"], 1 / t_d), (ev["G_y"], ev["g_y"], self.nu / t_n))
            for G, g, scale in scaled:
                # σ(z) σ(-z) = e / (1 + e)^2 with e = exp(-|z|) <= 1: no overflow, no cancellation.
                e = np.exp(-np.abs(G - log_nu))
                H -= g.gram(e / (1.0 + e) ** 2 * scale)
            ev["H"] = H
        return ev["H"]

    def hessian_vector(self, theta, vec) -> np.ndarray:
        r"""The Gauss-Newton approximation of :math:`\nabla^2_\theta J` times ``vec``."""
        H = self.gauss_newton(theta)
        vec = np.asarray(vec, dtype=np.float64).reshape(self.shape)
        return (H @ vec[..., None])[..., 0]

    # The optimiser minimises -J over a flat vector; a theta that is not finite, a model that
    # rejects theta or returns values beyond float64, or a non-finite J is divergence.

    def _checked(self, flat: np.ndarray) -> dict:
        if not np.isfinite(flat).all():
            raise _Diverged
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                ev = self._evaluate(flat)
        except (_BadModelOutput, ValueError) as exc:
            raise _Diverged from exc
        if not (np.isfinite(ev["J"]).all() and np.isfinite(ev["grad"]).all()):
            raise _Diverged
        return ev

    def negative(self, flat: np.ndarray) -> tuple[float, np.ndarray]:
        ev = self._checked(flat)
        return -float(ev["J"].sum()), -ev["grad"].ravel()

    def negative_hessp(self, flat: np.ndarray, vec: np.ndarray) -> np.ndarray:
        self._checked(flat)
        return -self.hessian_vector(flat, vec).ravel()


#: Methods of scipy.optimize.minimize that use the gradient, and those that also take
#: Hessian-vector products.
_GRADIENT_METHODS = {"cg", "bfgs", "l-bfgs-b", "tnc", "slsqp", "trust-constr"}
_SECOND_ORDER = {"trust-krylov", "trust-ncg", "newton-cg"}
#: Default stopping rules (see fit_nce's ``options``).
_MAXITER = 2000
_TRUST_GTOL = 1e-7  # per component, times sqrt(theta0.size)
_LBFGS_OPTIONS = {"gtol": 1e-9, "ftol": 1e-15}

_SEPARATED = (
    "the NCE objective has no maximiser{where} for these samples: with log_noise_data and "
    "log_noise_noise, the fit tells every data sample from every noise sample and J only "
    f"creeps towards 0 as theta grows; {_ADVICE}"
)
_RUNS_OFF = (
    "the NCE objective has no maximiser{where} for these samples: J keeps rising towards a "
    "supremum that no theta attains, as theta runs off towards the edge of the model's "
    f"parameters where the model degenerates; {_ADVICE}"
)
_DIVERGED = (
    "the NCE objective has no maximiser for these samples: the fit diverged, J rising while "
    "theta left float64 or the values log_model accepts; use more samples, noise closer to the "
    "data, or rescale the model's log-densities, log_noise_data and log_noise_noise"
)


def _options(method: str, size: int, options: dict) -> dict:
    opts: dict = {"maxiter": _MAXITER}
    if method.upper() == "L-BFGS-B":
        opts.update(_LBFGS_OPTIONS)
    elif method.lower() in _SECOND_ORDER and method.lower() != "newton-cg":
        # The trust-region methods stop on the Euclidean norm of the whole gradient; 1e-7
        # per component is far below any sampling error, and well above the rounding of a
        # sum of B objectives.
        opts.update(gtol=_TRUST_GTOL * math.sqrt(size))
    opts.update(options)
    return opts


def _fit(problem: _NCEProblem, th0: np.ndarray, method: str, options: dict) -> NCEFit:
    """Maximise the problem's J from ``th0``; raises :class:`_Diverged` if it runs off."""
    try:
        start = problem._evaluate(th0)
    except _BadModelOutput as exc:
        raise ValueError(f"{exc}; start from another theta0") from None
    finite_or_raise(
        np.append(start["J"], start["grad"]),
        "J and its gradient at theta0 (from log_model, log_noise_data and log_noise_noise)",
        "start from another theta0 or rescale the log-densities (the model's, "
        "log_noise_data and log_noise_noise)",
    )
    second = {"hessp": problem.negative_hessp} if method.lower() in _SECOND_ORDER else {}
    from scipy.optimize import minimize  # imported on first use (see the package docstring)

    with np.errstate(over="ignore", invalid="ignore"):
        result = minimize(
            problem.negative, th0.ravel(), jac=True, method=method,
            options=_options(method, th0.size, options), **second,
        )  # fmt: skip
    theta = result.x.reshape(th0.shape)
    if not np.isfinite(theta).all():
        raise _Diverged
    J = problem._checked(result.x)["J"]
    return NCEFit(theta=theta, objective=_as_output(J), nu=float(problem.nu), result=result)


def _check_noise_values(th0: np.ndarray, log_noise_data, log_noise_noise):
    ln_x = _log_density_values(log_noise_data, "log_noise_data", density="noise")
    ln_y = _log_density_values(log_noise_noise, "log_noise_noise", density="noise")
    for arr, name in ((ln_x, "log_noise_data"), (ln_y, "log_noise_noise")):
        if arr.ndim != th0.ndim or arr.shape[:-1] != th0.shape[:-1]:
            shape = "(T,)" if th0.ndim == 1 else f"({th0.shape[0]}, T)"
            raise ValueError(
                f"{name} must have shape {shape} to match theta0 of shape {th0.shape}; got "
                f"{arr.shape}"
            )
    return ln_x, ln_y


def _check_method(method) -> str:
    if not isinstance(method, str):
        raise TypeError(f"method must be a string; got {type(method).__name__}")
    known = _GRADIENT_METHODS | _SECOND_ORDER
    if method.lower() not in known:
        raise ValueError(
            "method must be a scipy.optimize.minimize method that uses the gradient, one of "
            f"{', '.join(sorted(known))}; got {method!r}"
        )
    return method


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
        log-density is not finite, ``method`` is unknown, ``log_model`` returns arrays of
        the wrong shape or non-finite values at ``theta0``, or :math:`J` or its gradient
        overflows float64 at ``theta0``.
    NoMaximiserError
        A ``ValueError``: the objective has no maximiser for these samples (with few samples
        a flexible model can separate data from noise, or degenerate). Detected so: the fit
        diverges (:math:`\theta`, the model's values or :math:`J` leave float64, or
        ``log_model`` raises ``ValueError`` at a :math:`\theta` the optimiser tries); or,
        from the optimiser's end point, damped Newton steps with the Gauss-Newton matrix
        above, each problem of a batch on its own, do not settle within 50 steps (a step
        below ``1e-5`` times ``1 + max |theta|`` with squared decrement below ``1e-10``, the
        tolerances of :func:`~infonce_lib.fit_gaussian_nce`), stall, or have a step or a
        path longer than 10 times ``1 + max |theta|``; or they settle where the matrix has a
        direction without curvature (below ``1e-14`` of the largest) along which :math:`J`,
        one scale ``1 + max |theta|`` away, falls on one side and hardly or not at all on
        the other (the model stops changing at an edge of its parameters); or the fit tells
        every data sample from every noise sample with :math:`J` within ``1e-3`` of its
        supremum 0. At a maximiser the first step already settles, and the check works on
        copies, so it changes no result.

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
    ln_x, ln_y = _check_noise_values(th0, log_noise_data, log_noise_noise)
    nu = ln_y.shape[-1] / ln_x.shape[-1] if nu is None else as_positive_scalar(nu, "nu")
    if not callable(log_model):
        raise TypeError(f"log_model must be callable; got {type(log_model).__name__}")
    method = _check_method(method)
    problem = _NCEProblem(log_model, th0.shape, data, noise, ln_x, ln_y, nu)
    try:
        fit = _fit(problem, th0, method, as_options(options))
        lacking, separated = _lacking_maximiser(problem, fit.theta)
    except _Diverged as exc:
        raise NoMaximiserError(_DIVERGED) from exc.__cause__
    if lacking.any():
        message = _SEPARATED if separated[lacking].all() else _RUNS_OFF
        raise NoMaximiserError(message.format(where=_where(lacking)), lacking)
    return fit


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
        the denominator's errors are all zero; or if a repetition's squared error
        :math:`a_r` or :math:`b_r` overflows float64 although the errors are finite (errors
        beyond about ``1e154``).

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
