r"""Chapter 6's experiment: the cosine critic's InfoNCE, its cap and the best temperature.

The cosine cell of :mod:`.gaussian_patches`, alone, with the same code on the same pairs:
the level ``cosine_level`` drawn by :func:`~infonce_lib.patch_level_pairs`; for each
:math:`\tau` the batch values of :func:`~infonce_lib.infonce_at_beta` at
:math:`\beta = 1/\tau` on the cosines of the raw patches (mean, SE, the score-range cap
:func:`~infonce_lib.cosine_cap` and the attainable cap of unit-norm embeddings
:func:`~infonce_lib.attainable_cosine_cap`, and the largest batch value minus each); the best
temperature by Newton's method on the concave
bound over :math:`\beta` in ``infonce_lib.temperature.BETA_BOUNDS``
(:func:`~infonce_lib.best_temperature`), with the slope and curvature there
(:func:`~infonce_lib.infonce_beta_derivatives`); and the optimal critic
:math:`\log p(y|x)` at the same :math:`K` from the same engine as chapter 3, asked for that
one batch size (each batch's value is computed from its own :math:`K \times K` block of
scores, so the other batch sizes of Table 2 change none of its digits; a test checks it).
Every number of ``gaussian-patches``' Table 3 comes out identical, and the other levels are
not drawn. ``Config.seed`` (default 0, that protocol) draws other pairs of the same level,
for checking that a conclusion holds beyond the draw printed; :func:`pairs` returns the
pairs of a configuration, so that a chapter can look at the very data behind its table.

Examples
--------
>>> from infonce_lib.experiments import cosine_temperature
>>> config = cosine_temperature.Config(m_pairs=2048, levels=(2.0,), batch_sizes=(4, 64),
...                                    cosine_level=2.0, cosine_batch_size=64)
>>> r = cosine_temperature.run(config)
>>> r.level, r.batch_size, bool(np.all(r.max_minus_cap <= 0)), bool(r.curvature_at_best < 0)
(2.0, 64, True, True)
>>> cosine_temperature.report(config).results["K"]
64
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_int, as_positive_scalar
from ..bounds import mean_and_se
from ..caps import cosine_cap, population_cosine_cap
from ..gaussian import _log_p_y, gaussian_field
from ..patches import _cosine_table, _level_batch_values, _level_pairs
from ..report import Check, Report
from ..temperature import BETA_BOUNDS
from . import gaussian_patches
from ._shared import as_config, best_tau_line, cap_checks, f4, read_only

NAME = "cosine-temperature"
SUMMARY = "the cosine critic's InfoNCE, its two caps and the best temperature at I = 6, K = 256"
CHAPTER = "chapter 6"

#: The slope threshold of the interior-maximum check: |dI/dbeta| below it counts as zero.
SLOPE_TOL = 1e-4
_SLOPE_TOL_TEXT = f"1e{round(math.log10(SLOPE_TOL))}"  # "1e-4"
#: The best beta is checked against the mean bound at beta * (1 -+ NEIGHBOUR_STEP), values
#: computed without the derivatives that the search used.
NEIGHBOUR_STEP = 0.01
#: Standard errors allowed by the one-sided check of the mean against the population cap.
POPULATION_SES = 3.0


@dataclass(frozen=True)
class Config(gaussian_patches.Config):
    """The configuration of :class:`.gaussian_patches.Config`, whose cosine cell is run.

    The defaults are the book's protocol (:math:`I = 6`, :math:`K = 256`,
    :math:`\\tau \\in \\{0.02, 0.05, 0.1, 0.2, 0.5, 1\\}`); validated on creation.

    Attributes
    ----------
    seed : int, default 0
        0 draws the level's pairs with its index in ``levels`` as the seed, as chapter 3's
        protocol does (the published table); ``s > 0`` draws them from
        ``numpy.random.default_rng([s, index])`` instead, other pairs of the same level.
        The other attributes are those of :class:`.gaussian_patches.Config`.
    """

    seed: int = 0

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "seed", as_int(self.seed, "seed", minimum=0))


@dataclass(frozen=True)
class Result:
    """What :func:`run` computes (arrays read-only, float64).

    Attributes
    ----------
    level : float
        The information level :math:`I` in nats.
    batch_size : int
        :math:`K`.
    m_pairs : int
        :math:`M`, pairs of the level; there are ``M // K`` batches.
    sigma : float
        The level's noise.
    seed : int
        The level's index in ``config.levels``: the seed of its pairs when
        ``config.seed`` is 0, else combined with it (:func:`pairs`).
    taus : tuple of float
        The temperatures of the table.
    infonce, se : numpy.ndarray, shape (T,)
        Mean and SE over batches of InfoNCE for the critic ``cos / tau``.
    cap, max_minus_cap : numpy.ndarray, shape (T,)
        The score-range cap :func:`~infonce_lib.cosine_cap`; the largest batch value minus it.
    attainable_cap, max_minus_attainable_cap : numpy.ndarray, shape (T,)
        The attainable cap of unit-norm embeddings :func:`~infonce_lib.attainable_cosine_cap`;
        the largest batch value minus it.
    batch_values : numpy.ndarray, shape (T, M // K)
        The batch values themselves, one row per temperature of the table (those of
        :func:`~infonce_lib.infonce_at_beta`, bit for bit).
    best_batch_values : numpy.ndarray, shape (M // K,)
        The batch values at the best temperature.
    best_tau, best_beta, best_infonce : float
        The best temperature over :math:`\\beta` in ``BETA_BOUNDS`` and its mean bound.
    best_cap, best_max_minus_cap, best_attainable_cap, best_max_minus_attainable_cap : float
        At the best temperature: the score-range cap, the largest batch value minus it, the
        attainable cap, and the largest batch value minus that.
    slope_at_best, curvature_at_best : float
        Mean over batches of :math:`\\mathrm{d}I_{\\mathrm{NCE}}/\\mathrm{d}\\beta` and
        :math:`\\mathrm{d}^2 I_{\\mathrm{NCE}}/\\mathrm{d}\\beta^2` at :math:`\\beta^\\star`.
    best_at_end : bool
        Whether :math:`\\beta^\\star` is an end of ``BETA_BOUNDS``
        (the ``at_end`` of :class:`~infonce_lib.BestTemperature`).
    neighbour_infonce : tuple of float
        The mean bound at :math:`\\beta^\\star (1 - 0.01)` and :math:`\\beta^\\star (1 + 0.01)`.
    population_cap : numpy.ndarray, shape (T,)
        :func:`~infonce_lib.population_cosine_cap` at each temperature of the table: the cap
        on the expected value over i.i.d. batches.
    optimal_critic, optimal_critic_se : float
        Mean InfoNCE of :math:`\\log p(y|x)` at the same :math:`K`, and its SE.
    config : Config
        The configuration that produced it.
    """

    level: float
    batch_size: int
    m_pairs: int
    sigma: float
    seed: int
    taus: tuple
    infonce: np.ndarray
    se: np.ndarray
    cap: np.ndarray
    max_minus_cap: np.ndarray
    attainable_cap: np.ndarray
    max_minus_attainable_cap: np.ndarray
    batch_values: np.ndarray
    best_batch_values: np.ndarray
    best_tau: float
    best_beta: float
    best_infonce: float
    best_cap: float
    best_max_minus_cap: float
    best_attainable_cap: float
    best_max_minus_attainable_cap: float
    slope_at_best: float
    curvature_at_best: float
    best_at_end: bool
    neighbour_infonce: tuple
    population_cap: np.ndarray
    optimal_critic: float
    optimal_critic_se: float
    config: Config


def run(config: Config | None = None) -> Result:
    """Run the cosine cell (cached per process: the same ``config`` gives the same object).

    Parameters
    ----------
    config : Config or None
        The configuration; ``None`` (the default) is ``Config()``, the book's protocol.

    Returns
    -------
    Result
        Shared by every caller with the same configuration; its arrays are read-only.
    """
    config = as_config(config, Config, "cosine_temperature")
    return _run_cached(config)


def pairs(config: Config | None = None, level=None, m_pairs=None):
    """The pairs of one level as the experiment draws them: ``(sigma, x, y)``.

    Parameters
    ----------
    config : Config or None
        The configuration (its field, levels, seed and number of pairs); ``None`` is
        ``Config()``.
    level : float, optional
        One of ``config.levels``; default ``config.cosine_level``.
    m_pairs : int, optional
        How many pairs; default ``config.m_pairs``.

    Returns
    -------
    sigma : float
        The noise that gives the level's information.
    x, y : numpy.ndarray, shape (m_pairs, side**2)
        Patches and their noisy views (read-only arrays, remembered for the last two
        requests, so that the experiment and a chapter draw them once), drawn with the
        level's index as the seed when
        ``config.seed`` is 0 (then the same pairs as
        :func:`~infonce_lib.patch_level_pairs`), else from
        ``numpy.random.default_rng([config.seed, index])``.

    Raises
    ------
    TypeError, ValueError
        If ``config`` is not a ``Config`` or ``None``, ``level`` is not one of its levels,
        or ``m_pairs`` is not an integer ``>= 1``.
    """
    config = as_config(config, Config, "cosine_temperature")
    target = config.cosine_level if level is None else as_positive_scalar(level, "level")
    if target not in config.levels:
        raise ValueError(f"level must be one of the levels {config.levels}; got {target}")
    M = config.m_pairs if m_pairs is None else as_int(m_pairs, "m_pairs", minimum=1)
    return _pairs(config, target, M)


@functools.lru_cache(maxsize=2)
def _pairs(config: Config, level: float, M: int):
    """The pairs, remembered (read-only): :func:`run` and a chapter that looks at the same
    data draw them once. Two entries: about 70 MB at the book's protocol."""
    li = config.levels.index(level)
    seed = li if config.seed == 0 else np.random.default_rng([config.seed, li])
    field_ = gaussian_field(config.side, config.length_scale)
    sigma, x, y = _level_pairs(field_, level, seed, M)
    x.setflags(write=False)
    y.setflags(write=False)
    return float(sigma), x, y


@functools.lru_cache(maxsize=4)
def _run_cached(config: Config) -> Result:
    field_ = gaussian_field(config.side, config.length_scale)
    K = config.cosine_batch_size
    li = config.levels.index(config.cosine_level)
    sigma, x, y = _pairs(config, config.cosine_level, config.m_pairs)
    log_py = _log_p_y(y, field_, sigma)
    optimal = mean_and_se(_level_batch_values(x, y, sigma, log_py, (K,))[K][0])  # Table 2's
    del log_py
    table = _cosine_table(x, y, K, config.taus)
    del x, y
    table.update(gaussian_patches.attainable_columns(table, K, config.taus))
    best = table["best"]
    # Remembered by the objective from the table and the search: no score is recomputed.
    objective = table.pop("objective")
    batch_values = objective.batch_values_many([1.0 / tau for tau in config.taus])
    best_values, slope, curvature = objective.derivatives(best.beta)
    steps = (best.beta * (1 - NEIGHBOUR_STEP), best.beta * (1 + NEIGHBOUR_STEP))
    neighbours = tuple(float(v.mean()) for v in objective.batch_values_many(steps))
    return Result(
        level=config.cosine_level,
        batch_size=K,
        m_pairs=config.m_pairs,
        sigma=float(sigma),
        seed=li,
        taus=config.taus,
        infonce=read_only(table["mean"]),
        se=read_only(table["se"]),
        cap=read_only(table["cap"]),
        max_minus_cap=read_only(table["max_minus_cap"]),
        attainable_cap=read_only(table["attainable_cap"]),
        max_minus_attainable_cap=read_only(table["max_minus_attainable_cap"]),
        batch_values=read_only(batch_values),
        best_batch_values=read_only(best_values),
        best_tau=best.tau,
        best_beta=best.beta,
        best_infonce=best.infonce,
        best_cap=cosine_cap(K, best.tau),
        best_max_minus_cap=table["best_max_minus_cap"],
        best_attainable_cap=table["best_attainable_cap"],
        best_max_minus_attainable_cap=table["best_max_minus_attainable_cap"],
        slope_at_best=float(slope.mean()),
        curvature_at_best=float(curvature.mean()),
        best_at_end=best.at_end,
        neighbour_infonce=neighbours,
        population_cap=read_only(population_cosine_cap(K, np.asarray(config.taus, float))),
        optimal_critic=optimal[0],
        optimal_critic_se=optimal[1],
        config=config,
    )


def _results(r: Result) -> dict:
    """The JSON-able results of ``reproduce cosine-temperature --json`` (unrounded)."""
    rows = [
        {
            "tau": float(t),
            "infonce": float(r.infonce[ti]),
            "se": float(r.se[ti]),
            "cap": float(r.cap[ti]),
            "max_minus_cap": float(r.max_minus_cap[ti]),
            "attainable_cap": float(r.attainable_cap[ti]),
            "max_minus_attainable_cap": float(r.max_minus_attainable_cap[ti]),
        }
        for ti, t in enumerate(r.taus)
    ]
    scalars = (
        "sigma", "best_tau", "best_beta", "best_infonce", "best_cap", "best_max_minus_cap",
        "best_attainable_cap", "best_max_minus_attainable_cap", "slope_at_best",
        "curvature_at_best", "optimal_critic", "optimal_critic_se",
    )  # fmt: skip
    out = {"I": float(r.level), "K": int(r.batch_size), "m_pairs": int(r.m_pairs)}
    out.update({"sigma": float(r.sigma), "rows": rows})
    out.update({k: float(getattr(r, k)) for k in scalars[1:]})
    out.update({"seed": int(r.config.seed), "best_at_end": bool(r.best_at_end)})
    out["population_cap"] = [float(v) for v in r.population_cap]
    return out


def _slope(v: float) -> str:
    """The slope at the optimum, printed the same on every machine."""
    return f"|dI/dbeta| < {SLOPE_TOL:.0e}" if abs(v) < SLOPE_TOL else f"dI/dbeta = {v:.1e}"


def tables(r: Result) -> str:
    """The chapter's table as text (4 decimals)."""
    table = gaussian_patches.cosine_table(
        r.taus, r.infonce, r.se, r.cap, r.attainable_cap, r.max_minus_cap,
        r.max_minus_attainable_cap,
    )  # fmt: skip
    side, K = r.config.side, r.batch_size
    seed = f"{r.seed} (the level's index)"
    if r.config.seed:
        seed = f"[{r.config.seed}, {r.seed}] (the config's seed, the level's index)"
    d = side * side
    fits = "fits" if d >= K - 1 else "does not fit"
    population = ", ".join(f"{v:.4f}" for v in r.population_cap)
    return "\n".join(
        [
            f"Cosine critic cos(x, y)/tau on raw {side}x{side} Gaussian patches: "
            f"I = {r.level:g} nats, K = {K},",
            f"M = {r.m_pairs} pairs ({r.m_pairs // K} batches), "
            f"sigma = {r.sigma:.4f}, seed = {seed}",
            *gaussian_patches.CAPS_LEGEND,
            f"(d = {d}, K - 1 = {K - 1}: a simplex of K vertices {fits} in the patches' space)",
            table,
            "population cap log K - log(1 + (K-1) e^(-1/tau)), on the mean over batches:",
            f"  {population}",
            best_tau_line(r.best_tau, r.best_beta),
            f"  InfoNCE = {r.best_infonce:.4f}, range cap = {r.best_cap:.4f}, "
            f"attainable cap = {r.best_attainable_cap:.4f}",
            f"  max - range cap = {f4(r.best_max_minus_cap)}, "
            f"max - attainable cap = {f4(r.best_max_minus_attainable_cap)}",
            f"  slope {_slope(r.slope_at_best)}, curvature d2I/dbeta2 = {r.curvature_at_best:.2e}",
            f"optimal critic log p(y|x) at the same K: InfoNCE = {r.optimal_critic:.4f} "
            f"(SE {r.optimal_critic_se:.4f})",
        ]
    )


def checks(r: Result) -> list[Check]:
    """The checks of the chapter's experiment: each could fail on other data.

    No batch above either cap; the mean over batches below the population cap (one-sided,
    ``POPULATION_SES`` standard errors: the cap bounds an expectation); the best
    :math:`\\beta` a maximum by the values alone (above the bound 1% to either side, computed
    without the derivatives the search used); an interior one (not an end of
    ``BETA_BOUNDS``, slope about 0, curvature negative); and the optimal critic above the
    best cosine critic.
    """
    caps = cap_checks(
        r.max_minus_cap, r.best_max_minus_cap, r.max_minus_attainable_cap,
        r.best_max_minus_attainable_cap,
    )  # fmt: skip
    excess = np.asarray(r.infonce) - np.asarray(r.population_cap) - POPULATION_SES * r.se
    population_ok = Check(
        f"cosine critic: the mean over batches stays below the population cap "
        f"(one-sided, {POPULATION_SES:g} SE), at every tau",
        bool(np.all(excess <= 0.0)),
        f"largest mean - cap - {POPULATION_SES:g} SE {f4(np.max(excess))}",
    )
    left, right = r.neighbour_infonce
    maximum_ok = Check(
        f"the best beta is a maximum of the values: the mean bound is lower at "
        f"beta (1 -+ {NEIGHBOUR_STEP:g})",
        bool(left < r.best_infonce and right < r.best_infonce),
        f"{left:.6f} < {r.best_infonce:.6f} > {right:.6f}",
    )
    interior_ok = Check(
        f"the best beta is an interior maximum: not an end of [{BETA_BOUNDS[0]:g}, "
        f"{BETA_BOUNDS[1]:g}], |dI/dbeta| < {_SLOPE_TOL_TEXT}, d2I/dbeta2 < 0",
        bool(not r.best_at_end and abs(r.slope_at_best) < SLOPE_TOL and r.curvature_at_best < 0),
        f"beta = {r.best_beta:.2f}, slope {_slope(r.slope_at_best)}, "
        f"curvature {r.curvature_at_best:.2e}",
    )
    optimal_ok = Check(
        "the optimal critic beats the best cosine critic at the same K",
        bool(r.optimal_critic > r.best_infonce),
        f"{r.optimal_critic:.4f} > {r.best_infonce:.4f}",
    )
    return [*caps, population_ok, maximum_ok, interior_ok, optimal_ok]


def report(config: Config | None = None) -> Report:
    """``python -m infonce_lib reproduce cosine-temperature``: results, table and checks.

    Returns
    -------
    Report
        ``results``::

            {"I", "K", "m_pairs", "sigma",
             "rows": [{"tau", "infonce", "se", "cap", "max_minus_cap", "attainable_cap",
                       "max_minus_attainable_cap"}, ...],
             "best_tau", "best_beta", "best_infonce", "best_cap", "best_max_minus_cap",
             "best_attainable_cap", "best_max_minus_attainable_cap",
             "slope_at_best", "curvature_at_best", "optimal_critic", "optimal_critic_se",
             "seed", "best_at_end", "population_cap": [per tau]}

        with ``cap`` the score-range cap and ``attainable_cap`` the attainable cap of
        unit-norm embeddings; ``max_minus_*`` is the largest batch value minus the cap.
    """
    r = run(config)
    return Report(results=_results(r), tables=tables(r), checks=checks(r))
