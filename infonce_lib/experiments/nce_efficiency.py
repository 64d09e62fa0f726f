r"""Chapter 1's experiment: NCE's efficiency with noise equal to the data, :math:`1 + 1/\nu`.

Gutmann & Hyvärinen (2012, Theorem 3) give the asymptotic covariance of the NCE estimate;
when :math:`p_n = p_d` it is :math:`(1 + 1/\nu)` times that of maximum likelihood. For the
zero-mean Gaussian with
precision :math:`\Lambda` (:math:`d = 2`, unit variances, correlation 0.6), each of ``reps``
data sets of :math:`T_d` samples is fitted by NCE (for every :math:`\nu`, with
:math:`T_n = \nu T_d` fresh noise samples from :math:`p_d`) and by ML, and

.. math::

    \hat\rho_\nu = \frac{\sum_r \lVert\hat\Lambda^{\mathrm{NCE}}_r - \Lambda\rVert_F^2}
                        {\sum_r \lVert\hat\Lambda^{\mathrm{ML}}_r - \Lambda\rVert_F^2}

is compared with :math:`1 + 1/\nu` using the delta-method standard error of
:func:`~infonce_lib.mse_ratio`, and the Monte Carlo MSE of NCE itself with its asymptotic
value from Theorem 3 (:func:`~infonce_lib.gaussian_nce_precision_mse`). The same data sets
serve every :math:`\nu` (all drawn from ``numpy.random.default_rng(seed)``).

Checks: every fit converged; the ML Monte Carlo MSE agrees with its exact value
(:func:`~infonce_lib.gaussian_ml_precision_mse`) within 3 standard errors; for each
:math:`\nu`, the NCE Monte Carlo MSE is within 3 standard errors of its Theorem 3 value and
:math:`\hat\rho_\nu` is within 3 standard errors of :math:`1 + 1/\nu`.

Examples
--------
>>> from infonce_lib.experiments import nce_efficiency
>>> report = nce_efficiency.report(nce_efficiency.Config(nus=(1.0,), n_data=200, reps=50, seed=3))
>>> report.passed, round(report.results["nu"][0]["theory"], 3)
(True, 2.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_int, as_positive_scalar, as_sequence
from ..gaussian_nce import _nce_and_ml, fit_gaussian_ml, gaussian_ml_precision_mse
from ..nce import mse_ratio
from ..nce_population import gaussian_nce_precision_mse
from ..report import Check, Report, format_table
from ._shared import as_config

NAME = "nce-efficiency"
SUMMARY = "MSE(NCE) / MSE(ML) against 1 + 1/nu, with noise equal to the data"
CHAPTER = "chapter 1"

#: The data's covariance: d = 2, unit variances, correlation 0.6.
DATA_COVARIANCE = ((1.0, 0.6), (0.6, 1.0))

#: A ratio (or the ML Monte Carlo error) passes within this many standard errors of theory.
Z_MAX = 3


@dataclass(frozen=True)
class Config:
    """The experiment's configuration; the defaults are the book's protocol.

    Attributes
    ----------
    nus : tuple of float, default (0.5, 1, 2, 4)
        Noise-to-data ratios; each :math:`\\nu T_d` must be a whole number.
    n_data : int, default 1000
        :math:`T_d`.
    reps : int, default 400
        Repetitions ``R`` (at least 2).
    seed : int, default 0
        Seeds every draw; 0 is the book's protocol (chapter 1 passes its ``SEED``).

    Raises
    ------
    TypeError, ValueError
        If a field is out of range (messages name it).
    """

    nus: tuple = (0.5, 1.0, 2.0, 4.0)
    n_data: int = 1000
    reps: int = 400
    seed: int = 0

    def __post_init__(self):
        nus = tuple(as_positive_scalar(nu, "nus") for nu in as_sequence(self.nus, "nus"))
        if not nus:
            raise ValueError("nus must hold at least one noise-to-data ratio")
        t_d = as_int(self.n_data, "n_data", minimum=2)
        for nu in nus:
            n = round(nu * t_d)
            if n < 1 or abs(n - nu * t_d) > 1e-9 * nu * t_d:
                raise ValueError(
                    f"every nu * n_data must be a positive whole number (nus * n_data); got "
                    f"{list(nus)} * {t_d}"
                )
        object.__setattr__(self, "nus", nus)
        object.__setattr__(self, "n_data", t_d)
        object.__setattr__(self, "reps", as_int(self.reps, "reps", minimum=2))
        object.__setattr__(self, "seed", as_int(self.seed, "seed", minimum=0))


@dataclass(frozen=True)
class Result:
    """What :func:`run` computes.

    Attributes
    ----------
    nu : tuple of dict
        Per :math:`\\nu`: ``nu``, ``ratio`` and its ``se``, ``theory`` (:math:`1 + 1/\\nu`),
        ``z``, ``nce_mse_T`` (:math:`T_d` times the MSE of NCE) and the optimiser's
        ``iterations``.
    ml_mse_T, ml_mse_T_se, ml_mse_T_exact, ml_mse_T_first_order : float
        :math:`T_d` times the MSE of ML: Monte Carlo, its SE, exact, first order.
    converged : bool
        Every NCE fit converged.
    config : Config
    """

    nu: tuple
    ml_mse_T: float
    ml_mse_T_se: float
    ml_mse_T_exact: float
    ml_mse_T_first_order: float
    converged: bool
    config: Config


def run(config: Config | None = None) -> Result:
    """Draw the data sets, fit them by ML and, for every :math:`\\nu`, by NCE."""
    config = as_config(config, Config, "nce_efficiency")
    t_d, reps = config.n_data, config.reps
    sigma = np.array(DATA_COVARIANCE)
    lam = np.linalg.inv(sigma)
    lam = (lam + lam.T) / 2
    rng = np.random.default_rng(config.seed)
    chol = np.linalg.cholesky(sigma)
    x = rng.standard_normal((reps, t_d, 2)) @ chol.T  # the data sets, shared by every nu
    ml = fit_gaussian_ml(x)
    ml_err = ml[0] - lam
    rows, converged = [], True
    for nu in config.nus:
        y = rng.standard_normal((reps, round(nu * t_d), 2)) @ chol.T  # fresh noise from p_d
        sim = _nce_and_ml(lam, x, y, sigma, nu, ml=ml)
        converged &= sim.fit.success
        ratio, se = mse_ratio(sim.precision_nce - lam, ml_err)
        sq = np.sum((sim.precision_nce - lam) ** 2, axis=(1, 2))
        mse_T, mse_T_se = float(sq.mean() * t_d), float(sq.std(ddof=1) / math.sqrt(reps) * t_d)
        asymptotic = gaussian_nce_precision_mse(lam, sigma, t_d, nu) * t_d
        rows.append(
            {
                "nu": nu,
                "ratio": ratio,
                "se": se,
                "theory": 1 + 1 / nu,
                "z": (ratio - (1 + 1 / nu)) / se,
                "nce_mse_T": mse_T,
                "nce_mse_T_se": mse_T_se,
                "nce_mse_T_asymptotic": asymptotic,
                "z_nce": (mse_T - asymptotic) / mse_T_se,
                "iterations": int(sim.fit.result.nit),
            }
        )
    sq_ml = np.sum(ml_err**2, axis=(1, 2))
    return Result(
        nu=tuple(rows),
        ml_mse_T=float(sq_ml.mean() * t_d),
        ml_mse_T_se=float(sq_ml.std(ddof=1) / math.sqrt(reps) * t_d),
        ml_mse_T_exact=gaussian_ml_precision_mse(lam, t_d) * t_d,
        ml_mse_T_first_order=gaussian_ml_precision_mse(lam, t_d, exact=False) * t_d,
        converged=bool(converged),
        config=config,
    )


def tables(r: Result) -> str:
    """The table of ratios and the ML line."""
    c = r.config
    rows = [
        [v["nu"], v["nce_mse_T"], v["nce_mse_T_se"], v["nce_mse_T_asymptotic"], v["ratio"],
         v["se"], v["theory"], v["z"]]
        for v in r.nu
    ]  # fmt: skip
    table = format_table(
        ["nu", "T_d MSE(NCE)", "SE", "Theorem 3", "MSE ratio", "SE", "1 + 1/nu", "z"],
        rows,
        [".2f", ".2f", ".2f", ".2f", ".3f", ".3f", ".3f", "+.2f"],
    )
    return table + (
        f"\n\nML: T_d MSE = {r.ml_mse_T:.3f} ± {r.ml_mse_T_se:.3f} (Monte Carlo), "
        f"{r.ml_mse_T_exact:.3f} (exact),\n    {r.ml_mse_T_first_order:.3f} "
        f"(first order); d = 2, T_d = {c.n_data}, {c.reps} repetitions"
    )


def checks(r: Result) -> list[Check]:
    """Convergence, the ML error against its exact value, and per nu the NCE error against
    Theorem 3 and the ratio against 1 + 1/nu."""
    z_ml = (r.ml_mse_T - r.ml_mse_T_exact) / r.ml_mse_T_se
    out = [
        Check("every NCE fit converged", r.converged),
        Check(
            f"ML Monte Carlo MSE within {Z_MAX} SE of exact", abs(z_ml) < Z_MAX, f"z = {z_ml:+.2f}"
        ),
    ]
    for v in r.nu:
        out.append(
            Check(
                f"nu = {v['nu']:g}: NCE MSE within {Z_MAX} SE of Theorem 3",
                abs(v["z_nce"]) < Z_MAX,
                f"{v['nce_mse_T']:.2f} ± {v['nce_mse_T_se']:.2f} vs "
                f"{v['nce_mse_T_asymptotic']:.2f}, z = {v['z_nce']:+.2f}",
            )
        )
        out.append(
            Check(
                f"nu = {v['nu']:g}: ratio within {Z_MAX} SE of 1 + 1/nu",
                abs(v["z"]) < Z_MAX,
                f"{v['ratio']:.3f} ± {v['se']:.3f} vs {v['theory']:.3f}, z = {v['z']:+.2f}",
            )
        )
    return out


def report(config: Config | None = None) -> Report:
    """``python -m infonce_lib reproduce nce-efficiency``: results, table and checks.

    Returns
    -------
    Report
        ``results`` holds ``d``, ``n_data``, ``reps``, ``seed``; per :math:`\\nu` (list
        ``"nu"``) the ratio, its standard error, the theory value, ``z``, :math:`T_d` times
        the MSE of NCE (Monte Carlo, its SE, Theorem 3's value, their ``z_nce``) and the
        iterations; :math:`T_d` times the MSE of ML (``ml_mse_T``,
        ``ml_mse_T_se``, ``ml_mse_T_exact``, ``ml_mse_T_first_order``); ``converged``.
    """
    r = run(config)
    c = r.config
    results = {"d": 2, "n_data": c.n_data, "reps": c.reps, "seed": c.seed}
    results["nu"] = [dict(v) for v in r.nu]
    for key in ("ml_mse_T", "ml_mse_T_se", "ml_mse_T_exact", "ml_mse_T_first_order"):
        results[key] = getattr(r, key)
    results["converged"] = r.converged
    return Report(results=results, tables=tables(r), checks=checks(r))
