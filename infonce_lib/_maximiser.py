r"""Newton's method for the NCE objective of an exponential-family model.

For :func:`~infonce_lib.fit_gaussian_nce`. With :math:`\log p_m(u) = s(u) \cdot \eta`, the
log-ratio :math:`G = s(u) \cdot \eta - \log p_n(u)` is linear in the natural parameters
:math:`\eta`, so the NCE objective is a logistic regression in :math:`\eta` (Gutmann &
Hyvärinen, 2012, section 2): concave, with, for :math:`z = G - \log\nu` at the data
(unprimed) and noise (primed) samples,

.. math::

    \nabla_\eta J &= \frac1{T_d} \sum_t \sigma(-z_t)\, s(x_t)
                  - \frac{\nu}{T_n} \sum_t \sigma(z'_t)\, s(y_t), \\
    -\nabla^2_\eta J &= \frac1{T_d} \sum_t \sigma(z_t)\sigma(-z_t)\, s(x_t) s(x_t)^\top
                  + \frac{\nu}{T_n} \sum_t \sigma(z'_t)\sigma(-z'_t)\, s(y_t) s(y_t)^\top,

exact, not an approximation. Damped Newton steps (a backtracking line search on :math:`J`)
therefore find the maximiser over all :math:`\eta` when one exists, with quadratic
convergence near it, and never reach one when the data and the noise are separable. The
Gaussian model has a maximiser exactly when that one exists and its precision matrix is
positive definite. Each evaluation costs one ``exp`` and one ``log1p`` per sample:
:math:`e = e^{-|z|}` gives :math:`\log\sigma`, :math:`\sigma` and :math:`\sigma(z)\sigma(-z)
= e / (1 + e)^2` without overflow.
"""

from __future__ import annotations

import math

import numpy as np

#: Newton decrement (squared) in the natural parameters below which a point counts as the
#: maximiser: the objective could rise by about half of it, far below any sampling error.
_DECREMENT_TOL = 1e-10
#: ... and the Newton step must be this small relative to the parameters: where J only
#: approaches its supremum as the parameters grow, the decrement vanishes but the steps do not.
#: That last step is then taken, leaving an error of the order of its square.
_STEP_TOL = 1e-5
#: Default limit on the damped Newton iterations; a concave objective with a maximiser gets
#: there in a few (a dozen from a poor start), one without one never does.
_NEWTON_ITERS = 100


#: Problems of a batch are evaluated a few at a time, about this many samples per chunk, so
#: that the elementwise work stays in the processor's cache (a third faster on big batches).
_CHUNK = 40_000


class _Samples:
    """One side of the problem (data or noise): statistics s(u_t), shape (..., T, Q), their
    transpose (contiguous, for the products), log p_n(u_t), and the side's weight in J."""

    def __init__(self, S: np.ndarray, ln: np.ndarray, scale: float, is_data: bool):
        self.S, self.ln, self.scale, self.is_data = S, ln, scale, is_data
        self.St = np.ascontiguousarray(np.swapaxes(S, -1, -2))


def _side_terms(eta, S, St, ln, scale: float, is_data: bool, log_nu: float, full: bool):
    """One side's share of J and, if ``full``, of dJ/dη and minus the Hessian (see the
    module docstring)."""
    z = np.matmul(S, eta[..., None])[..., 0]
    z -= ln
    z -= log_nu
    # u = -z at the data (log h = log σ(z) = -softplus(-z)), u = z at the noise
    # (log(1 - h) = log σ(-z) = -softplus(z)); softplus(u) = max(u, 0) + log1p(e).
    u = np.negative(z, out=z) if is_data else z
    e = np.exp(-np.abs(u))
    J = -scale * (np.maximum(u, 0.0).sum(axis=-1) + np.log1p(e).sum(axis=-1))
    if not full:
        return J, None, None
    inv = 1.0 / (1.0 + e)
    sig_u = np.where(u >= 0, inv, e * inv)  # σ(u): the weight of s(u_t) in dJ/dη
    sig_u *= scale if is_data else -scale
    grad = np.matmul(St, sig_u[..., None])[..., 0]
    e *= inv * inv * scale  # σ(z)σ(-z), scaled
    H = np.matmul(St * e[..., None, :], S)
    return J, grad, H


def _eta_terms(eta: np.ndarray, x: _Samples, y: _Samples, nu: float, full: bool = True):
    """J, dJ/dη and minus the Hessian in η, per problem (exact: log p_m is linear in η);
    without ``full``, J only (the last two are ``None``)."""
    log_nu = math.log(nu)
    chunks = [...]
    if eta.ndim == 2:  # a batch: a few whole problems at a time
        step = max(1, _CHUNK // (x.S.shape[-2] + y.S.shape[-2]))
        chunks = [slice(i, i + step) for i in range(0, eta.shape[0], step)]
    parts = []
    with np.errstate(over="ignore", invalid="ignore"):
        for c in chunks:
            J, grad, H = _side_terms(eta[c], x.S[c], x.St[c], x.ln[c], x.scale, True, log_nu, full)
            J_y, grad_y, H_y = _side_terms(
                eta[c], y.S[c], y.St[c], y.ln[c], y.scale, False, log_nu, full
            )
            parts.append((J + J_y, grad + grad_y, H + H_y) if full else (J + J_y,))
    if len(parts) == 1:
        out = parts[0]
    else:
        out = tuple(np.concatenate(p) for p in zip(*parts, strict=True))
    return out if full else (out[0], None, None)


def _newton_step(eta, grad, H):
    """The Newton step in η, its decrement, and per problem whether η is the maximiser."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        step = np.matmul(np.linalg.pinv(H, hermitian=True), grad[..., None])[..., 0]
        dec = np.sum(grad * step, axis=-1)  # the squared Newton decrement
        small = np.max(np.abs(step), axis=-1) <= _STEP_TOL * (1 + np.max(np.abs(eta), axis=-1))
        curved = np.any(H != 0, axis=(-2, -1))  # not a plateau where every weight underflowed
    return step, dec, np.isfinite(dec) & (dec < _DECREMENT_TOL) & small & curved


def _newton(eta0: np.ndarray, x: _Samples, y: _Samples, nu: float, maxiter: int):
    """Damped Newton ascent of J in η from ``eta0``, every problem of a batch on its own.

    Returns ``(eta, J, converged, iterations)``: a problem counts as converged when its
    Newton decrement and step pass the tolerances above, and then takes that last (full)
    step too, unless it would lower J; one whose objective leaves float64 stops where it is,
    unconverged. Backtracking halves the step until J rises by a quarter of the decrement
    times the step length (Armijo's rule).
    """
    eta = np.array(eta0, dtype=np.float64)
    J, grad, H = _eta_terms(eta, x, y, nu)
    failed = np.zeros(J.shape, dtype=bool)
    done = failed
    for iteration in range(maxiter + 1):
        step, dec, done = _newton_step(eta, grad, H)
        failed = failed | ~np.isfinite(dec)
        active = ~(done | failed)
        if iteration == maxiter or not active.any():
            break
        t = active.astype(np.float64)
        for _ in range(40):  # backtracking, problem by problem
            trial = eta + t[..., None] * step
            J_new, grad_new, H_new = _eta_terms(trial, x, y, nu)
            ok = ~active | (J_new >= J + 0.25 * t * dec)
            if ok.all():
                break
            t = np.where(ok, t, t / 2)
        eta, J, grad, H = trial, J_new, grad_new, H_new
    final = eta + np.where(done, 1.0, 0.0)[..., None] * step
    J_final = _eta_terms(final, x, y, nu, full=False)[0]
    better = done & (J_final >= J)
    eta = np.where(better[..., None], final, eta)
    return eta, np.where(better, J_final, J), done, iteration


class _Report(dict):
    """The report of a Newton fit: a dict whose keys are also attributes (``success``,
    ``message``, ``nit``, ...), as :class:`scipy.optimize.OptimizeResult`, without importing
    SciPy's optimiser for it."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _precision_from_eta(eta: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Λ from the natural parameters (vech Λ, c), and per problem whether it is positive
    definite."""
    rows, cols = np.tril_indices(d)
    lam = np.zeros((*eta.shape[:-1], d, d))
    lam[..., rows, cols] = eta[..., :-1]
    lam[..., cols, rows] = eta[..., :-1]
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.isfinite(lam).all(axis=(-2, -1))
        pd = np.all(np.linalg.eigvalsh(np.where(np.isfinite(lam), lam, 0.0)) > 0, axis=-1)
    return lam, finite & pd


def _no_maximiser_message(lacking: np.ndarray) -> str:
    where = ""
    if lacking.ndim:
        index = np.flatnonzero(lacking)
        where = f" in {index.size} of {lacking.size} data sets, e.g. number {int(index[0])},"
    return (
        f"the NCE objective has no maximiser{where} for these samples: no Gaussian tells the "
        "data from the noise best, because J keeps rising as the precision matrix degenerates "
        "or grows without bound; use more samples, or noise closer to the data"
    )
