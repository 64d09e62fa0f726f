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

For :func:`~infonce_lib.fit_nce`, whose model need not be an exponential family, this module
holds the checked call of its model (:func:`_call_model`) and decides whether the
optimiser's end point is a maximiser (:func:`_lacking_maximiser`): from there, damped Newton
steps with the Gauss-Newton matrix of the fit either settle at once, as they do at a
maximiser, or keep moving while :math:`J` creeps towards a supremum it never attains, as
they do when the parameters run off, the model heads for the edge of its domain (a
direction in which it stops changing on one side), or the fit separates the data from the
noise. The probe works on copies: it never changes the fit it checks.
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
    final = np.where(done[..., None], eta + step, eta)  # never 0 * inf where not done
    J_final = _eta_terms(final, x, y, nu, full=False)[0]
    better = done & (J_final >= J)
    eta = np.where(better[..., None], final, eta)
    return eta, np.where(better, J_final, J), done, iteration


def _newton_twice(eta0, eta_n, x: _Samples, y: _Samples, nu: float, maxiter: int):
    """:func:`_newton` from ``eta0``, then, for the problems it left unconverged, again from
    the noise's own parameters ``eta_n`` (where G = 0 at every sample, so no weight
    saturates: a start far from the noise, with G in the hundreds, can leave Newton's steps
    no curvature to go by). Where the first run converges nothing changes."""
    eta, J, done, nit = _newton(eta0, x, y, nu, maxiter)
    retry = ~done
    if not retry.any():
        return eta, J, done, nit
    pick = (lambda a: a[retry]) if retry.ndim else (lambda a: a)
    x2, y2 = (_Samples(pick(s.S), pick(s.ln), s.scale, s.is_data) for s in (x, y))
    start = np.broadcast_to(eta_n, pick(eta0).shape)
    eta2, J2, done2, nit2 = _newton(start, x2, y2, nu, maxiter)
    if not retry.ndim:
        return eta2, J2, done2, nit + nit2
    eta[retry], J[retry], done[retry] = eta2, J2, done2
    return eta, J, done, nit + nit2


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


def _where(lacking: np.ndarray) -> str:
    if not lacking.ndim:
        return ""
    index = np.flatnonzero(lacking)
    return f" in {index.size} of {lacking.size} data sets, e.g. number {int(index[0])},"


#: What to do about an objective without a maximiser, in every message that reports one.
_ADVICE = "use more samples, or noise closer to the data"


def _no_maximiser_message(
    lacking: np.ndarray, samples: str = "for these samples", advice: str = _ADVICE
) -> str:
    """The one sentence of fit_gaussian_nce (and simulate_gaussian_nce) without a maximiser."""
    return (
        f"the NCE objective has no maximiser{_where(lacking)} {samples}: no Gaussian tells the "
        "data from the noise best, because J keeps rising as the precision matrix degenerates "
        f"or grows without bound; {advice}"
    )


# ---------------------------------------------------------------- the model of fit_nce


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


class _BadModelOutput(Exception):
    """Raised when ``log_model`` returns non-finite values; a usage error at ``theta0``."""


def _call_model(log_model, theta: np.ndarray, u, shape: tuple, which: str, shape_name: str):
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
            f"log_model must return log_p of shape {shape}, the shape of {shape_name}, and "
            f"grad of shape {(*shape, p)} with P = {p} the last axis of theta0, or factors S "
            f"of shape {(*shape, 'Q')} and D of shape {(*shape[:-1], 'Q', p)}, for the "
            f"{which} samples; got log_p of shape {log_p.shape} and {got}"
        )
    finite = np.isfinite(log_p).all() and np.isfinite(S).all()
    if not (finite and (D is None or np.isfinite(D).all())):
        raise _BadModelOutput(
            f"log_model returned non-finite values for the {which} samples at theta = "
            f"{np.array2string(theta, precision=4, threshold=8)}"
        )
    return log_p, jac


# ---------------------------------------------------------------- did fit_nce reach one?


class _Diverged(Exception):
    """Raised inside :func:`~infonce_lib.fit_nce` when theta, the model's values or J leave
    float64, or ``log_model`` rejects a theta, during the optimisation or the check of its end.

    Private: :func:`~infonce_lib.fit_nce` turns it into a
    :class:`~infonce_lib.NoMaximiserError` that says what it means.
    """


#: At most this many damped Gauss-Newton steps from the optimiser's end point.
_PROBE_ITERS = 50
#: A Newton step longer than this many times 1 + max |theta| at the optimiser's end point, or
#: steps that take theta that far from it, have run off: a maximiser that far would mean the
#: optimiser had stopped nowhere near it.
_RUN_OFF = 10.0
#: Curvature below this fraction of the largest is none: a flat direction, whose Newton step
#: rounding cannot tell.
_FLAT = 1e-14
#: Along a flat direction, one scale 1 + max |theta| away on either side: J falling by more
#: than this times 1 + |J| is a marked fall (far above rounding, a few ulps of J) ...
_FALL = 1e-9
#: ... and a fall below this fraction of the other side's, or a rise, is hardly any.
_ONE_SIDED = 1e-3
#: A fit that tells every data sample from every noise sample with J above -_SEPARATED_J has
#: reached no maximiser: J only creeps towards its supremum 0 as theta grows.
_SEPARATED_J = 1e-3
#: Backtracking halvings of a probe step before the probe counts as stalled.
_HALVINGS = 30


def _separated(ev: dict, nu: float) -> np.ndarray:
    """Per problem: does the classifier get every sample right, with J near 0?"""
    log_nu = math.log(nu)
    right = np.all(ev["G_x"] > log_nu, axis=-1) & np.all(ev["G_y"] < log_nu, axis=-1)
    return right & (ev["J"] > -_SEPARATED_J)


def _probe_step(grad: np.ndarray, H: np.ndarray):
    """The Newton step along the curved directions of the Gauss-Newton matrix ``H`` (negative
    semi-definite, (..., P, P)), its squared decrement, the eigenvectors, which of them are
    flat, and whether ``H`` has any curvature at all."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        h, V = np.linalg.eigh(-H)  # ascending curvatures h >= 0 (up to rounding)
        top = h[..., -1:]
        curved = h > _FLAT * top
        g = np.matmul(np.swapaxes(V, -1, -2), grad[..., None])[..., 0]
        s = np.where(curved, g / np.where(curved, h, 1.0), 0.0)
        step = np.matmul(V, s[..., None])[..., 0]
        dec = np.sum(g * s, axis=-1)
    return step, dec, V, ~curved, top[..., 0] > 0


def _one_sided(problem, theta, J, V, flat, scale) -> np.ndarray:
    """Per problem: is there a flat direction along which J falls markedly one scale away on
    one side and hardly, or rises, on the other? That is the edge of a model that degenerates
    there (J saturates towards its supremum); a direction along which the model does not
    change at all (a parameter it ignores) leaves J the same on both sides."""
    one_sided = np.zeros(J.shape, dtype=bool)
    for k in range(theta.shape[-1]):
        on = flat[..., k]
        if not on.any():
            continue
        falls = []
        for sign in (1.0, -1.0):
            reach = np.where(on, sign * scale, 0.0)[..., None]
            try:
                falls.append(J - problem._checked(theta + reach * V[..., :, k])["J"])
            except _Diverged:  # the model's values leave float64 there: no verdict
                break
        else:
            big, small = np.maximum(*falls), np.minimum(*falls)
            marked = big > _FALL * (1 + np.abs(J))
            one_sided |= on & marked & (small <= _ONE_SIDED * big)
    return one_sided


def _damped(problem, theta, J, step, dec, active):
    """Backtracking (Armijo's rule, as in :func:`_newton`) along ``step`` for the active
    problems; returns the new point and which active problems stalled."""
    t = active.astype(np.float64)
    ok = ~active
    for _ in range(_HALVINGS):
        trial = theta + t[..., None] * step
        J_new = problem._checked(trial)["J"]
        ok = ~active | (J_new >= J + 0.25 * t * dec)
        if ok.all():
            return trial, np.zeros(J.shape, dtype=bool)
        t = np.where(ok, t, t / 2)
    stalled = active & ~ok
    return theta + np.where(stalled, 0.0, t)[..., None] * step, stalled


def _lacking_maximiser(problem, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per problem of :func:`~infonce_lib.fit_nce`: is ``theta`` (the optimiser's end point)
    no maximiser, and is that because the fit separates data from noise?

    Damped Gauss-Newton steps from ``theta``, each problem on its own, until its step and
    decrement pass :func:`_newton`'s tolerances (a maximiser, unless the matrix has no
    curvature at all or :func:`_one_sided` finds the edge of the model along a flat
    direction), it separates the samples, its step or its path runs off beyond ``_RUN_OFF``
    scales, its line search stalls, or ``_PROBE_ITERS`` steps pass: all of these but the
    first mean no maximiser. At a maximiser the first step already passes.
    ``problem`` is the fit's :class:`~infonce_lib.nce._NCEProblem`; its ``_checked`` raises
    its own private error if the model's values leave float64 on the way.
    """
    th = np.array(theta, dtype=np.float64)
    origin = 1 + np.max(np.abs(th), axis=-1)
    shape = origin.shape
    lacking, separated, settled = (np.zeros(shape, dtype=bool) for _ in range(3))
    for iteration in range(_PROBE_ITERS + 1):
        ev = problem._checked(th)
        separated |= _separated(ev, problem.nu) & ~settled
        settled |= separated
        step, dec, V, flat, curved = _probe_step(ev["grad"], problem.gauss_newton(th))
        scale = 1 + np.max(np.abs(th), axis=-1)
        small = (np.max(np.abs(step), axis=-1) <= _STEP_TOL * scale) & (dec < _DECREMENT_TOL)
        done = small & ~settled
        flat &= done[..., None]
        if flat.any():
            lacking |= done & _one_sided(problem, th, ev["J"], V, flat, scale)
        lacking |= done & ~curved
        far = np.maximum(np.max(np.abs(step), axis=-1), np.max(np.abs(th - theta), axis=-1))
        run_off = ~settled & ~done & (far > _RUN_OFF * origin)
        lacking |= run_off
        settled |= done | run_off
        if settled.all() or iteration == _PROBE_ITERS:
            break
        th, stalled = _damped(problem, th, ev["J"], step, dec, ~settled)
        lacking |= stalled
        settled |= stalled
    return lacking | separated | ~settled, separated
