r"""Gaussian patches warped pixel by pixel by the cube: their densities, by change of variables.

Chapter 7 applies the invertible map :math:`g(t) = t^3` to every pixel of the Gaussian
patches :math:`x` and their noisy views :math:`y = x + \sigma\varepsilon`
(:mod:`infonce_lib.gaussian`): :math:`u = x^3`, :math:`v = y^3`. With
:math:`x = \sqrt[3]{u}` and :math:`y = \sqrt[3]{v}` pixel by pixel, the change of variables
gives the densities of the warped variables,

.. math::

    \log p(v \mid u) &= \log p\big(\sqrt[3]{v} \,\big|\, \sqrt[3]{u}\big) + J(v), \\
    \log p(v) &= \log p_Y\big(\sqrt[3]{v}\big) + J(v), \\
    J(v) &= \sum_k \log \Big\lvert \frac{\mathrm{d}\sqrt[3]{v_k}}{\mathrm{d} v_k}\Big\rvert
    = -\sum_k \big(\log 3 + \tfrac23 \log \lvert v_k \rvert\big),

with :math:`p(y \mid x) = \mathcal{N}(y; x, \sigma^2 I)` and
:math:`p_Y = \mathcal{N}(0, C + \sigma^2 I)` those of :func:`~infonce_lib.log_p_y_given_x`
and :func:`~infonce_lib.log_p_y`. Each density carries the Jacobian of its own variable,
:math:`v`; the patch :math:`u` is given in the conditional and brings none. In their ratio,
the optimal critic of the warped pair (Poole et al., 2019), the two Jacobians
cancel and leave the raw pair's :math:`p(y \mid x) / p(y)`: the information and the best
bound are those of the raw pair, the point of Tschannen et al. (2020) that an invertible
map leaves mutual information unchanged while it changes the features.

At :math:`v_k = 0` the density of a cubed variable is infinite (the cube root has an
infinite slope there): the functions refuse a zero entry of ``v``.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import (
    as_int,
    as_positive_scalar,
    as_real_array,
    check_same_shape,
    finite_or_raise,
)
from .gaussian import _check_field, _log_p_y, _log_p_y_given_x

__all__ = [
    "cube_root_log_jacobian",
    "warped_log_p_v",
    "warped_log_p_v_given_u",
    "warped_log_ratio_scores",
]

_LOG_3 = math.log(3.0)
_HINT = "rescale v and u or use a larger sigma"


def _nonzero(v, name: str) -> np.ndarray:
    V = as_real_array(v, name, ndim=2)
    zeros = int(np.count_nonzero(V == 0.0))
    if zeros:
        raise ValueError(
            f"{name} must have no zero entries: the density of a cubed variable is infinite "
            f"at 0 (log|d cbrt(v)/dv| = +inf there); got {zeros} zero entries"
        )
    return V


def _log_jacobian(V: np.ndarray) -> np.ndarray:
    return -np.sum(_LOG_3 + (2.0 / 3.0) * np.log(np.abs(V)), axis=1)


def cube_root_log_jacobian(v) -> np.ndarray:
    r"""The log-Jacobian of the inverse of the cube, summed over the pixels of each row.

    .. math::

        J(v) = \sum_{k=1}^{d} \log \Big\lvert \frac{\mathrm{d}\sqrt[3]{v_k}}{\mathrm{d} v_k}
        \Big\rvert = -\sum_{k=1}^{d} \big(\log 3 + \tfrac23 \log \lvert v_k \rvert\big),

    the term the change of variables :math:`y = \sqrt[3]{v}` adds to a log-density of
    :math:`y` to make it one of :math:`v` (chapter 7; see the module docstring).

    Parameters
    ----------
    v : array_like, shape (n, d)
        Warped values :math:`v = y^3`, row ``m`` one patch; no entry may be 0.

    Returns
    -------
    numpy.ndarray, shape (n,)
        :math:`J(v_m)` per row, in nats.

    Raises
    ------
    TypeError, ValueError
        If ``v`` is not a finite 2-D real array, is empty, or has a zero entry.

    Examples
    --------
    >>> np.round(cube_root_log_jacobian([[1.0, -8.0]]), 6)   # -(2 log 3 + (2/3) log 8)
    array([-3.583519])
    """
    return _log_jacobian(_nonzero(v, "v"))


def warped_log_p_v_given_u(v, u, sigma: float) -> np.ndarray:
    r"""Log-density of each cubed view given its cubed patch, :math:`\log p(v \mid u)`.

    For :math:`u = x^3` and :math:`v = y^3` pixel by pixel, with
    :math:`y = x + \sigma\varepsilon`,

    .. math::

        \log p(v \mid u) = \log \mathcal{N}\big(\sqrt[3]{v};\, \sqrt[3]{u},\, \sigma^2 I\big)
        + J(v),

    :func:`~infonce_lib.log_p_y_given_x` at the cube roots plus
    :func:`cube_root_log_jacobian` of :math:`v` (the change of variables; the given
    :math:`u` brings no Jacobian). Chapter 7.

    Parameters
    ----------
    v, u : array_like, shape (M, d)
        Cubed views and cubed patches, row ``m`` paired with row ``m``; no entry of ``v``
        may be 0.
    sigma : float
        Noise standard deviation of :math:`y = x + \sigma\varepsilon`, ``> 0``.

    Returns
    -------
    numpy.ndarray, shape (M,)

    Raises
    ------
    TypeError, ValueError
        If the arrays are not finite 2-D arrays of the same shape, ``v`` has a zero entry, or
        ``sigma`` is invalid; ``ValueError`` if a log-density overflows float64.

    Examples
    --------
    >>> np.round(warped_log_p_v_given_u([[1.0]], [[1.0]], 1.0), 6)  # -log(2 pi)/2 - log 3
    array([-2.017551])
    """
    V = _nonzero(v, "v")
    U = as_real_array(u, "u", ndim=2)
    check_same_shape(V, "v", U, "u")
    s = as_positive_scalar(sigma, "sigma")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        out = _log_p_y_given_x(np.cbrt(V), np.cbrt(U), s) + _log_jacobian(V)
    return finite_or_raise(out, "log p(v | u) of v and u at sigma", _HINT)


def warped_log_p_v(v, field, sigma: float) -> np.ndarray:
    r"""Marginal log-density of the cubed views, :math:`\log p(v)`.

    For :math:`v = y^3` pixel by pixel, :math:`y \sim \mathcal{N}(0, C + \sigma^2 I)`,

    .. math::

        \log p(v) = \log \mathcal{N}\big(\sqrt[3]{v};\, 0,\, C + \sigma^2 I\big) + J(v),

    :func:`~infonce_lib.log_p_y` at the cube roots plus :func:`cube_root_log_jacobian`.
    Chapter 7.

    Parameters
    ----------
    v : array_like, shape (M, d)
        Cubed views; no entry may be 0.
    field : GaussianField
        The patch distribution (:func:`~infonce_lib.gaussian_field`), with ``d`` pixels.
    sigma : float
        Noise standard deviation, ``> 0``.

    Returns
    -------
    numpy.ndarray, shape (M,)

    Raises
    ------
    TypeError, ValueError
        If ``v`` is not a finite 2-D array with ``d`` columns or has a zero entry, ``field``
        is not a :class:`~infonce_lib.GaussianField`, or ``sigma`` is invalid;
        ``ValueError`` if a log-density overflows float64.

    Examples
    --------
    One pixel of unit variance, :math:`\sigma = 1`: :math:`\sqrt[3]{v} = 1` has variance 2.

    >>> from infonce_lib import gaussian_field
    >>> np.round(warped_log_p_v([[1.0]], gaussian_field(1), 1.0), 6)
    array([-2.614124])
    """
    field = _check_field(field)
    V = _nonzero(v, "v")
    if V.shape[1] != field.dim:
        raise ValueError(f"v must have {field.dim} columns (pixels); got shape {V.shape}")
    s = as_positive_scalar(sigma, "sigma")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        out = _log_p_y(np.cbrt(V), field, s) + _log_jacobian(V)
    return finite_or_raise(out, "log p(v) of v at sigma (with the field)", _HINT)


def warped_log_ratio_scores(u, v, field, sigma: float, batch_size: int) -> np.ndarray:
    r"""Scores of the density-ratio critic of the warped pair, batch by batch.

    .. math::

        F_{bij} = \log p(v_{bK+i} \mid u_{bK+j}) - \log p(v_{bK+i}),

    each density computed as in :func:`warped_log_p_v_given_u` and :func:`warped_log_p_v`,
    its own Jacobian :math:`J(v_{bK+i})` included (view :math:`i` of batch :math:`b` against
    candidate patch :math:`j`, the layout of
    :func:`~infonce_lib.log_density_ratio_scores`). The two Jacobian terms are the same
    number and cancel in the difference, so to rounding :math:`F` equals the raw pair's
    :math:`\log p(y \mid x) - \log p(y)` at :math:`x = \sqrt[3]{u}`, :math:`y = \sqrt[3]{v}`:
    the optimal critic, and the information, are unchanged by the warp (Poole et al., 2019,
    section 2.3; Tschannen et al., 2020). Chapter 7.

    Parameters
    ----------
    u, v : array_like, shape (M, d)
        Cubed patches and cubed views, row ``m`` paired with row ``m``; no entry of ``v``
        may be 0.
    field : GaussianField
        The patch distribution (for :math:`p(v)`), with ``d`` pixels.
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
        If the arrays are not finite 2-D arrays of the same shape with ``d`` columns, ``v``
        has a zero entry, ``field`` is not a :class:`~infonce_lib.GaussianField`, ``sigma``
        is invalid, ``batch_size`` is not an integer ``>= 2`` dividing ``M``, or a score
        overflows float64.

    Examples
    --------
    >>> from infonce_lib import gaussian_field, log_density_ratio_scores, sample_patch_pairs
    >>> f = gaussian_field(2)
    >>> x, y = sample_patch_pairs(f, 0.5, 4, seed=1)
    >>> F = warped_log_ratio_scores(x**3, y**3, f, 0.5, 2)
    >>> bool(np.allclose(F, log_density_ratio_scores(x, y, f, 0.5, 2)))
    True
    """
    field = _check_field(field)
    V = _nonzero(v, "v")
    U = as_real_array(u, "u", ndim=2)
    check_same_shape(V, "v", U, "u")
    s = as_positive_scalar(sigma, "sigma")
    M, d = V.shape
    if d != field.dim:
        raise ValueError(f"v must have {field.dim} columns (pixels); got shape {V.shape}")
    K = as_int(batch_size, "batch_size", minimum=2)
    if M % K:
        raise ValueError(f"batch_size must divide the number of rows M = {M}; got {K}")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        X, Y = np.cbrt(U).reshape(-1, K, d), np.cbrt(V).reshape(-1, K, d)
        jac = _log_jacobian(V).reshape(-1, K)
        # log p(v_i | u_j): the Gaussian at the cube roots plus J(v_i), for every pair
        sq = np.einsum("bid,bid->bi", Y, Y)[:, :, None] + np.einsum("bjd,bjd->bj", X, X)[:, None]
        sq -= 2 * np.einsum("bid,bjd->bij", Y, X)
        conditional = -sq / (2 * s * s) - d * (0.5 * math.log(2 * math.pi) + math.log(s))
        conditional += jac[:, :, None]
        marginal = _log_p_y(Y.reshape(M, d), field, s).reshape(-1, K) + jac
        F = conditional - marginal[:, :, None]
    return finite_or_raise(F, "the scores log p(v | u) - log p(v) of v and u at sigma", _HINT)
