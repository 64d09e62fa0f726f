r"""Does the NCE objective of an exponential-family model have a maximiser?

For :func:`~infonce_lib.fit_gaussian_nce`. With :math:`\log p_m(u) = s(u) \cdot \eta`, the
objective is a logistic regression in the natural parameters :math:`\eta`, concave there, so
damped Newton steps in :math:`\eta` find its maximiser when one exists and run off when the
data and the noise are separable. The Gaussian model has a maximiser exactly when that one
exists and its precision matrix is positive definite.
"""

from __future__ import annotations

import math

import numpy as np

from .nce import _nce_terms

#: Newton decrement (squared) in the natural parameters below which a point counts as the
#: maximiser: the objective could rise by about half of it, far below any sampling error.
_DECREMENT_TOL = 1e-10
#: ... and the Newton step must be this small relative to the parameters: where J only
#: approaches its supremum as the parameters grow, the decrement vanishes but the steps do not.
_STEP_TOL = 1e-6
#: Damped Newton iterations of the existence test; a concave objective with a maximiser
#: gets there in a few dozen, one without one never does.
_NEWTON_ITERS = 100


def _eta_terms(eta, S_x, S_y, ln_x, ln_y, nu):
    """J, dJ/dη and minus the Hessian in η (exact: log p_m is linear in η)."""
    with np.errstate(over="ignore", invalid="ignore"):
        G_x = np.matmul(S_x, eta[..., None])[..., 0] - ln_x
        G_y = np.matmul(S_y, eta[..., None])[..., 0] - ln_y
        J, w_x, w_y = _nce_terms(G_x, G_y, nu)
        grad = np.matmul(w_x[..., None, :], S_x)[..., 0, :]
        grad += np.matmul(w_y[..., None, :], S_y)[..., 0, :]
        log_nu = math.log(nu)
        H = 0.0
        for G, S, scale in ((G_x, S_x, 1 / S_x.shape[-2]), (G_y, S_y, nu / S_y.shape[-2])):
            e = np.exp(-np.abs(G - log_nu))
            H = H + np.swapaxes(S * (e / (1.0 + e) ** 2 * scale)[..., None], -1, -2) @ S
    return J, grad, H


def _newton_step(eta, grad, H):
    """The Newton step in η, and per problem whether η is the maximiser to tolerance."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        step = np.matmul(np.linalg.pinv(H, hermitian=True), grad[..., None])[..., 0]
        dec = np.sum(grad * step, axis=-1)  # the squared Newton decrement
        small = np.max(np.abs(step), axis=-1) <= _STEP_TOL * (1 + np.max(np.abs(eta), axis=-1))
        curved = np.any(H != 0, axis=(-2, -1))  # not a plateau where every weight underflowed
    return step, dec, np.isfinite(dec) & (dec < _DECREMENT_TOL) & small & curved


def _at_maximiser(eta, S_x, S_y, ln_x, ln_y, nu) -> bool:
    """True when the fitted η is, to tolerance, the maximiser over all η."""
    _, grad, H = _eta_terms(eta, S_x, S_y, ln_x, ln_y, nu)
    return bool(np.all(_newton_step(eta, grad, H)[2]))


def _has_maximiser(S_x, S_y, ln_x, ln_y, nu, eta_n, d) -> np.ndarray:
    """Per problem: does J have a maximiser with a positive definite precision matrix?

    J is concave in η, so damped Newton from η_n (the model equal to the noise) converges
    to its maximiser over all η when one exists. A Gaussian maximises J exactly when that
    maximiser exists and its precision matrix is positive definite.
    """
    eta = np.broadcast_to(eta_n, S_x.shape[:-2] + eta_n.shape).copy()
    J, grad, H = _eta_terms(eta, S_x, S_y, ln_x, ln_y, nu)
    done = np.zeros(J.shape, dtype=bool)
    for _ in range(_NEWTON_ITERS):
        step, dec, done = _newton_step(eta, grad, H)
        if done.all() or not np.isfinite(dec).all():
            break
        t = np.ones(J.shape)
        for _ in range(40):  # backtracking: a sufficient rise of J, problem by problem
            J_new = _eta_terms(eta + t[..., None] * step, S_x, S_y, ln_x, ln_y, nu)[0]
            ok = done | (J_new >= J + 0.25 * t * dec)
            if ok.all():
                break
            t = np.where(ok, t, t / 2)
        eta = eta + np.where(done, 0.0, t)[..., None] * step
        J, grad, H = _eta_terms(eta, S_x, S_y, ln_x, ln_y, nu)
    rows, cols = np.tril_indices(d)
    lam = np.zeros((*eta.shape[:-1], d, d))
    lam[..., rows, cols] = eta[..., :-1]
    lam[..., cols, rows] = eta[..., :-1]
    with np.errstate(over="ignore", invalid="ignore"):
        pd = np.all(np.linalg.eigvalsh(np.where(np.isfinite(lam), lam, 0.0)) > 0, axis=-1)
    return done & pd


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
