r"""Checker for the exercise of chapter 7: the density of warped views, Jacobian included.

Chapter 7 warps every pixel of the Gaussian patches and their noisy views by the cube,
:math:`u = x^3`, :math:`v = y^3`, with :math:`y = x + \sigma\varepsilon`. The conditional
density of the warped view follows from the change of variables :math:`y = \sqrt[3]{v}`:

.. math::

    \log p(v \mid u) = \sum_{k=1}^{d} \Big[ -\frac{(\sqrt[3]{v_k} - \sqrt[3]{u_k})^2}{2\sigma^2}
    - \tfrac12 \log(2\pi\sigma^2) - \log 3 - \tfrac23 \log\lvert v_k \rvert \Big],

the last two terms being :math:`\log \lvert \mathrm{d}\sqrt[3]{v_k}/\mathrm{d}v_k \rvert`, the
Jacobian: :func:`~infonce_lib.warped_log_p_v_given_u`, whose values the checker expects.
:func:`check_warped_log_density` checks a reader's version of it, names the usual
mistakes, and says for each whether InfoNCE would notice it: a term in :math:`v` alone cancels
in the softmax over the candidates :math:`u_j`, a term in :math:`u` does not.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..gaussian import log_p_y_given_x
from ..warped_patches import cube_root_log_jacobian, warped_log_p_v_given_u
from ._runner import Case, run_cases

__all__ = ["check_warped_log_density", "warped_density_mistakes"]


def _variants(u, v, sigma) -> dict[str, np.ndarray]:
    """The right log-density (the library's) and the mistakes, each from the library's parts."""
    right = warped_log_p_v_given_u(v, u, sigma)
    gauss = log_p_y_given_x(np.cbrt(v), np.cbrt(u), sigma)  # the Gaussian part, constant included
    jac_v, jac_u = cube_root_log_jacobian(v), cube_root_log_jacobian(u)
    d = u.shape[1]
    const = -0.5 * d * math.log(2 * math.pi * sigma**2)
    return {
        "right": right,
        "no jacobian": gauss,
        "jacobian sign": gauss - jac_v,
        "jacobian of u": gauss + jac_u,
        "no cube roots": log_p_y_given_x(v, u, sigma),
        "no constant": right - const,
        "no log 3": right + d * math.log(3),
        "cubed again": log_p_y_given_x(v**3, u**3, sigma) + cube_root_log_jacobian(v),
        "jacobian at v": gauss - np.sum(np.log(3.0 * v**2), axis=1),
        "jacobian of u and v": right + jac_u,
        "jacobian over the batch": gauss + np.sum(jac_v),
        "log 3 once": right + (d - 1) * math.log(3),
        "sigma as variance": log_p_y_given_x(np.cbrt(v), np.cbrt(u), math.sqrt(sigma)) + jac_v,
        "constant without square": right + 0.5 * d * math.log(sigma),
        "constant once": right - (d - 1) / d * const,
        "mean over pixels": right / d,
        "jacobian exponent 1/3": right + np.sum(np.log(np.abs(v)), axis=1) / 3,
        "plus log 3": right + 2 * d * math.log(3),
        "no 2 in the exponent": right
        - np.sum((np.cbrt(v) - np.cbrt(u)) ** 2, axis=1) / (2 * sigma**2),
        "constant without sigma": right + d * math.log(sigma),
        "log10 in the jacobian": gauss + jac_v / math.log(10),
        "jacobian in y": right + (4 / 9) * np.sum(np.log(np.abs(v)), axis=1),
    }


def _power_third(u, v, sigma):
    """The reader's ``u ** (1/3)``: NaN wherever an entry is negative."""
    with np.errstate(invalid="ignore"):
        x, y = u ** (1 / 3), v ** (1 / 3)
    d = u.shape[1]
    constant = -d / 2 * math.log(2 * math.pi * sigma**2)
    gauss = -np.sum((y - x) ** 2, axis=1) / (2 * sigma**2) + constant
    return gauss - np.sum(math.log(3) + (2 / 3) * np.log(np.abs(v)), axis=1)


def _log_without_abs(u, v, sigma):
    """The Jacobian with log v instead of log |v|: NaN wherever v < 0."""
    gauss = log_p_y_given_x(np.cbrt(v), np.cbrt(u), sigma)
    with np.errstate(invalid="ignore"):
        return gauss - np.sum(math.log(3) + (2 / 3) * np.log(v), axis=1)


_HINTS = {
    "no jacobian": (
        "the Jacobian is missing: add log|d cbrt(v_k)/dv_k| = -log 3 - (2/3) log|v_k| for "
        "every pixel (InfoNCE would not notice: the term depends on v alone and cancels in "
        "the softmax over the candidates u_j, but without it this is not a density of v)"
    ),
    "jacobian sign": (
        "the Jacobian has the wrong sign: the density of v is p_Y(cbrt v) times "
        "|d cbrt(v)/dv|, which is 1/(3 |v|^(2/3)) (InfoNCE would not notice: a function of "
        "v alone)"
    ),
    "jacobian of u": (
        "the Jacobian is taken at u; the change of variables is in the variable whose "
        "density this is, v. This one InfoNCE does notice: a term in u does not cancel in "
        "the softmax over the candidates u_j"
    ),
    "no cube roots": (
        "this is the Gaussian density evaluated at u and v themselves; the warped view "
        "v = y^3 is Gaussian only after the inverse map, y = cbrt(v), x = cbrt(u)"
    ),
    "no constant": (
        "the normalising constant -(d/2) log(2 pi sigma^2) is missing (InfoNCE would not "
        "notice, but the log density would not integrate to 1)"
    ),
    "no log 3": (
        "the Jacobian misses -log 3 per pixel: d cbrt(v)/dv = 1/(3 v^(2/3)), not v^(-2/3)"
    ),
    "cubed again": (
        "this cubes u and v again; the Gaussian variables are their cube roots, x = cbrt(u) "
        "and y = cbrt(v)"
    ),
    "jacobian at v": (
        "the Jacobian is -log(3 v^2): the derivative of the cube, 3 t^2, taken at v instead of "
        "at t = y = cbrt(v); |d cbrt(v)/dv| = 1/(3 y^2) = 1/(3 |v|^(2/3)) (InfoNCE would not "
        "notice: a function of v alone)"
    ),
    "jacobian of u and v": (
        "this adds the Jacobian of u as well as that of v; the conditional density of v "
        "changes variables in v only, u is given. InfoNCE does notice the extra term: it "
        "depends on u, which differs between the candidates"
    ),
    "jacobian over the batch": (
        "the Jacobian is summed over the whole array, every pair's pixels, and the same "
        "total added to each pair; sum over the pixels of each pair (axis=1) (InfoNCE would "
        "not notice: the same number in every score)"
    ),
    "log 3 once": (
        "-log 3 appears once per pair; it belongs to every pixel: -d log 3 in all (InfoNCE "
        "would not notice: a constant)"
    ),
    "sigma as variance": (
        "sigma is used as the variance; it is the standard deviation of the noise, "
        "y = x + sigma * eps, so the variance is sigma^2. InfoNCE does notice: the scale "
        "of (y - x)^2 changes the scores of the candidates differently"
    ),
    "constant without square": (
        "the normalising constant has log(2 pi sigma) instead of log(2 pi sigma^2): it "
        "is -(d/2) log(2 pi sigma^2) (InfoNCE would not notice: a constant)"
    ),
    "constant once": (
        "the normalising constant -(1/2) log(2 pi sigma^2) appears once per pair; it "
        "belongs to every pixel: -(d/2) log(2 pi sigma^2) (InfoNCE would not notice: a "
        "constant)"
    ),
    "mean over pixels": (
        "this averages over the pixels; the pixels are independent given u, so their log "
        "densities add: sum over axis 1. InfoNCE does notice: dividing every score by d "
        "changes the softmax"
    ),
    "jacobian exponent 1/3": (
        "the Jacobian has the exponent 1/3: d cbrt(v)/dv = (1/3) v^(-2/3), so its log is "
        "-log 3 - (2/3) log|v| (InfoNCE would not notice: a function of v alone)"
    ),
    "plus log 3": (
        "the Jacobian has +log 3; it is -log 3 per pixel: d cbrt(v)/dv = 1/(3 v^(2/3)) "
        "(InfoNCE would not notice: a constant)"
    ),
    "no 2 in the exponent": (
        "the Gaussian exponent is missing its 2: it is -(y - x)^2 / (2 sigma^2). InfoNCE "
        "does notice: the scale of (y - x)^2 changes the scores of the candidates"
    ),
    "constant without sigma": (
        "the normalising constant is -(d/2) log(2 pi), without sigma; it is "
        "-(d/2) log(2 pi sigma^2) (InfoNCE would not notice: a constant)"
    ),
    "log10 in the jacobian": (
        "the Jacobian uses log10; every log here is natural: -np.log(3) - (2/3) "
        "np.log(np.abs(v)) (InfoNCE would not notice: a function of v alone)"
    ),
    "jacobian in y": (
        "the Jacobian is -(2/3) log|y| with y = cbrt(v); it is -(2/3) log|v|, or -2 log|y| "
        "in y: d cbrt(v)/dv = 1/(3 y^2) (InfoNCE would not notice: a function of v alone)"
    ),
}

#: An answer passes within these tolerances, entry by entry: a careful float32 implementation
#: is accurate to a few parts in 1e7 here, and every known mistake is off by more than 0.1.
_RTOL = 1e-5
_ATOL = 1e-5

#: Hints for a NaN or infinite answer, by where the case has negative entries.
_NAN_U = (
    "NaN where u < 0: u ** (1/3) of a negative float is NaN in NumPy (a real power of a "
    "negative number); the cube root of every real number is np.cbrt(u)"
)
_NAN_V = (
    "NaN where v < 0: the Jacobian needs log|v|, not log v, and |v| ** (-2/3), not "
    "v ** (-2/3): a real power or log of a negative float is NaN in NumPy (so is "
    "v ** (1/3): use np.cbrt(v))"
)
_NAN_BOTH = (
    "NaN: u and v have negative entries here; u ** (1/3) is NaN below 0 in NumPy (use "
    "np.cbrt), and the Jacobian needs log|v|, not log v, and |v| ** (-2/3), not v ** (-2/3)"
)


def check_warped_log_density(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``warped_log_density(u, v, sigma)``: :math:`\log p(v \mid u)` per pair.

    ``u`` and ``v`` are arrays of shape ``(n, d)`` (cubed patches and cubed views, row ``m``
    a pair); the answer is an array of ``n`` log densities, the formula of the module
    docstring. Five cases: a hand-sized pair with positive entries; one with a negative
    patch entry and one with a negative view entry (where ``u ** (1/3)`` or ``log v`` gives
    NaN, each named by its own hint); eight pairs of random patches; and a larger
    :math:`\sigma`. Recognised mistakes: the Jacobian missing, with the wrong sign, taken at
    :math:`u`, at both :math:`u` and :math:`v`, as :math:`-\log(3 v^2)` (the derivative of
    the cube at :math:`v`), summed over the whole batch, without :math:`\log 3`, with
    :math:`+\log 3`, or with it once instead of once per pixel, with the exponent 1/3
    instead of 2/3, in base-10 logarithms, or as :math:`-\tfrac23 \log\lvert y \rvert`
    with :math:`y = \sqrt[3]{v}`; the Gaussian evaluated at the warped values themselves,
    or at their cubes, with :math:`\sigma` taken as the variance, without the 2 in
    :math:`(y - x)^2 / (2\sigma^2)`, or averaged over the pixels instead of summed; the
    normalising constant missing, written with :math:`\log(2\pi\sigma)` or without
    :math:`\sigma`, or counted once instead of once per pixel; a real power ``** (1/3)``,
    ``v ** (-2/3)`` or a ``log v`` that is NaN for negative entries. Each hint about a finite
    value says whether InfoNCE would notice the mistake. A value passes within 1e-5
    (relative or absolute) of the library's, so a careful float32 implementation passes.

    Parameters
    ----------
    fn : callable
        Called as ``fn(u, v, sigma)`` with two float64 arrays of shape ``(n, d)`` and a float.
    verbose : bool, default True
        Print one line per case.

    Returns
    -------
    bool
        True when every case agrees to 1e-5, relative or absolute (float32 done
        carefully passes).

    Raises
    ------
    TypeError
        If ``fn`` is not callable.

    Examples
    --------
    >>> check_warped_log_density(warped_density_mistakes()["right"], verbose=False)
    True
    >>> check_warped_log_density(warped_density_mistakes()["no jacobian"])  # doctest: +ELLIPSIS
    FAIL  one pair, d = 2, positive: entry 0: expected ..., got ...: the Jacobian is
    ...
    False
    """
    rng = np.random.default_rng(20261202)
    x8 = rng.normal(size=(8, 5))
    y8 = x8 + 0.6 * rng.normal(size=(8, 5))
    xb = rng.normal(size=(4, 3))
    yb = xb + 2.0 * rng.normal(size=(4, 3))
    cases = []
    for name, x, y, sigma, nan_hint in (
        # all positive first: a wrong Jacobian or constant shows as a wrong number, not NaN
        ("one pair, d = 2, positive", [[0.5, 1.2]], [[0.9, 0.7]], 0.5, _NAN_BOTH),
        ("a negative patch, positive view", [[-0.8, 0.4]], [[0.3, 0.6]], 0.5, _NAN_U),
        ("a positive patch, negative view", [[0.6, 0.9]], [[-0.4, 1.1]], 0.5, _NAN_V),
        ("8 pairs, d = 5", x8, y8, 0.6, _NAN_BOTH),
        ("4 pairs, d = 3, sigma = 2", xb, yb, 2.0, _NAN_BOTH),
    ):
        u, v = np.asarray(x, float) ** 3, np.asarray(y, float) ** 3
        variants = _variants(u, v, sigma)
        known = [(variants[k], _HINTS[k]) for k in _HINTS]
        cases.append(Case(name, (u, v, sigma), variants["right"], known, nan_hint, _RTOL, _ATOL))
    return run_cases(fn, cases, verbose, "warped_log_density(u, v, sigma)")


def warped_density_mistakes() -> dict[str, Callable]:
    """The right answer (key ``"right"``) and the mistakes the checker recognises.

    Each is a function ``(u, v, sigma) -> array of n log densities``; the last two,
    ``"power one third"`` (``u ** (1/3)``) and ``"log without abs"`` (``log v`` in the
    Jacobian), return NaN where an entry is negative.

    Returns
    -------
    dict of str to callable

    Examples
    --------
    >>> sorted(warped_density_mistakes())[:4]
    ['constant once', 'constant without sigma', 'constant without square', 'cubed again']
    """

    def make(key: str) -> Callable:
        def fn(u, v, sigma):
            return _variants(np.asarray(u, float), np.asarray(v, float), float(sigma))[key]

        return fn

    out = {key: make(key) for key in ("right", *_HINTS)}
    out["power one third"] = _power_third
    out["log without abs"] = _log_without_abs
    return out
