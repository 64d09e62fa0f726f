r"""Chapter 3's experiment: InfoNCE and leave-one-out on 8 x 8 Gaussian patches.

For each information level :math:`I_l`: :math:`\sigma_l` by
:func:`~infonce_lib.sigma_for_information`, ``m_pairs`` pairs by
:func:`~infonce_lib.patch_level_pairs` (seed ``l`` in the book's protocol, ``Config.seed = 0``;
``[seed, l]`` otherwise); the data checks; and for every
:math:`K`, the per-batch values

.. math::

    I_{\mathrm{NCE}} = \frac1K \sum_i \log
    \frac{e^{F_{ii}}}{\frac1K \sum_j e^{F_{ij}}}, \qquad
    I_{\mathrm{LOO}} = \frac1K \sum_i \log
    \frac{e^{F_{ii}}}{\frac1{K-1} \sum_{j \ne i} e^{F_{ij}}}

with :math:`F_{ij} = \log p(y_i \mid x_j)` (Poole et al., 2019: InfoNCE and leave-one-out), the
same with
:math:`\log p(y \mid x)/p(y)` and with the softmax over :math:`y`; their means and standard
errors (:func:`~infonce_lib.mean_and_se`). Then the cosine table at ``cosine_level``,
``cosine_batch_size`` (chapter 6 shows it alone: :mod:`.cosine_temperature`), with two caps
beside each temperature: the score-range cap :func:`~infonce_lib.cosine_cap`, which no score
matrix with entries in :math:`[-1, 1]` can pass, and the attainable cap
:func:`~infonce_lib.attainable_cosine_cap`, which no batch of unit-norm embeddings can pass
(the sharper of the two: the cosines of the patches are those of unit vectors).

The numbers equal those of :func:`~infonce_lib.infonce_bound` and
:func:`~infonce_lib.leave_one_out_bound` on :func:`~infonce_lib.optimal_critic_scores`
(tested to 1e-12); :mod:`infonce_lib.patches` explains the faster route.

Examples
--------
A reduced configuration (the book's protocol is the default):

>>> from infonce_lib.experiments import gaussian_patches
>>> config = gaussian_patches.Config(m_pairs=2048, levels=(2.0,), batch_sizes=(4, 64),
...                                  cosine_level=2.0, cosine_batch_size=64)
>>> r = gaussian_patches.run(config)
>>> bool(np.all(r.infonce_max_minus_log_k <= 0)), bool(np.all(r.loo >= r.infonce))
(True, True)
>>> report = gaussian_patches.report(config)
>>> sorted(report.results), [row["K"] for row in report.results["bounds"]]
(['bounds', 'cosine', 'levels'], [4, 64])
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_int, as_positive_scalar, as_sequence
from ..bounds import infonce_bound, leave_one_out_bound, mean_and_se
from ..caps import attainable_cosine_cap, cosine_cap
from ..gaussian import (
    _log_p_y,
    _log_p_y_given_x,
    gaussian_field,
    log_density_ratio_scores,
    optimal_critic_scores,
    patch_information,
    patch_information_logdet,
)
from ..patches import (
    BATCH_SIZES,
    LENGTH_SCALE,
    LEVELS,
    M_PAIRS,
    SIDE,
    TAUS,
    _check_field,
    _cosine_table,
    _level_batch_values,
    _level_pairs,
    _level_seed,
    _sample_covariance,
)
from ..report import Check, Report, format_table
from ._shared import as_config, below, best_tau_line, cap_checks, cosine_checks, f4, read_only

NAME = "gaussian-patches"
SUMMARY = "InfoNCE, leave-one-out and the cosine critic on 8x8 Gaussian patches"
CHAPTER = "chapter 3"

# Per-level and per-cell quantities computed by run(), in the order of Result's fields.
_LEVEL_KEYS = ("sigma", "mean", "se", "z", "mi_gap", "cov_err", "engine_diff")
_CELL_KEYS = (
    "nce", "nce_se", "loo", "loo_se", "max_minus", "ratio_diff",
    "nce_y", "nce_y_se", "nce_yr", "nce_yr_se",
)  # fmt: skip


@dataclass(frozen=True)
class Config:
    """The experiment's configuration; the defaults are the book's protocol.

    Validated and normalised on creation (sequences become tuples of float or int), so a
    ``Config`` is hashable and ``run`` can cache its result.

    Attributes
    ----------
    m_pairs : int, default 65536
        Pairs per level.
    levels : tuple of float, default (1, 3, 6, 12)
        Target informations in nats.
    batch_sizes : tuple of int, default (4, 16, 64, 256, 1024)
        Increasing; each divides the largest, which divides ``m_pairs`` at least twice.
    taus : tuple of float, default (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
        Temperatures of the cosine table.
    cosine_level : float, default 6
        Level of the cosine table (one of ``levels``).
    cosine_batch_size : int, default 256
        Batch size of the cosine table (one of ``batch_sizes``).
    side, length_scale : int, float, default 8, 1.5
        The field (:func:`~infonce_lib.gaussian_field`).
    seed : int, default 0
        ``>= 0``. 0 is the book's protocol: level ``l`` draws its pairs with
        ``numpy.random.default_rng(l)``. Any other value draws every level from a stream
        of its own, ``numpy.random.default_rng([seed, l])``
        (``infonce_lib.patches._level_seed``), so that the conclusions can be checked
        on other data (a chapter passes its ``SEED``).

    Raises
    ------
    TypeError, ValueError
        If a field is out of range (messages name it).
    """

    m_pairs: int = M_PAIRS
    levels: tuple = LEVELS
    batch_sizes: tuple = BATCH_SIZES
    taus: tuple = TAUS
    cosine_level: float = 6.0
    cosine_batch_size: int = 256
    side: int = SIDE
    length_scale: float = LENGTH_SCALE
    seed: int = 0

    def __post_init__(self):
        checked = _checked_config(self)
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        _check_field(self.side, self.length_scale, self.levels)


def _checked_config(c: Config) -> dict:
    M = as_int(c.m_pairs, "m_pairs", minimum=4)
    levels = tuple(as_positive_scalar(v, "levels") for v in as_sequence(c.levels, "levels"))
    if not levels:
        raise ValueError("levels must hold at least one information level")
    Ks = tuple(
        as_int(k, "batch_sizes", minimum=2) for k in as_sequence(c.batch_sizes, "batch_sizes")
    )
    if not Ks or list(Ks) != sorted(set(Ks)):
        raise ValueError(f"batch_sizes must be distinct and increasing; got {c.batch_sizes!r}")
    kmax = Ks[-1]
    if M % kmax or M // kmax < 2:
        raise ValueError(
            f"the largest batch size must divide m_pairs at least twice (for a standard "
            f"error): {M} pairs, K = {kmax}"
        )
    bad = [k for k in Ks if kmax % k]
    if bad:
        raise ValueError(f"every batch size must divide the largest, {kmax}; got {bad}")
    taus = tuple(as_positive_scalar(t, "taus") for t in as_sequence(c.taus, "taus"))
    if not taus:
        raise ValueError("taus must hold at least one temperature for the cosine table")
    cl = as_positive_scalar(c.cosine_level, "cosine_level")
    if cl not in levels:
        raise ValueError(f"cosine_level must be one of the levels {levels}; got {cl}")
    ck = as_int(c.cosine_batch_size, "cosine_batch_size", minimum=2)
    if ck not in Ks:
        raise ValueError(f"cosine_batch_size must be one of the batch sizes {Ks}; got {ck}")
    side = as_int(c.side, "side", minimum=1)
    ell = as_positive_scalar(c.length_scale, "length_scale")
    seed = as_int(c.seed, "seed", minimum=0)
    return dict(
        m_pairs=M, levels=levels, batch_sizes=Ks, taus=taus, cosine_level=cl,
        cosine_batch_size=ck, side=side, length_scale=ell, seed=seed,
    )  # fmt: skip


@dataclass(frozen=True)
class Result:
    """What :func:`run` computes (all arrays read-only, float64).

    Attributes
    ----------
    levels : tuple of float
        Target informations :math:`I`.
    batch_sizes : tuple of int
        The :math:`K`.
    m_pairs : int
        :math:`M`, pairs per level.
    sigma : numpy.ndarray, shape (L,)
        Noise level giving :math:`I` (root of the eigenvalue formula).
    mean_log_ratio, log_ratio_se, log_ratio_z : numpy.ndarray, shape (L,)
        Mean of :math:`\\log p(y|x) - \\log p(y)` over the M pairs, its SE, and
        ``(mean - I) / SE``.
    mi_gap : numpy.ndarray, shape (L,)
        :math:`I` by eigenvalues minus :math:`I` by log-determinants at ``sigma`` (nats).
    max_cov_error : numpy.ndarray, shape (L,)
        :math:`\\max_{ab} |\\hat C_{ab} - C_{ab}|`, ``numpy.cov`` of the M patches (ddof 1)
        against the field covariance.
    engine_max_diff : numpy.ndarray, shape (L,)
        On the first batch of the largest :math:`K` of each level: the largest absolute
        difference between the fast engine's five batch values (InfoNCE and leave-one-out
        over x, InfoNCE over x with the density ratio, InfoNCE over y with both critics)
        and :func:`~infonce_lib.infonce_bound` and :func:`~infonce_lib.leave_one_out_bound`
        on :func:`~infonce_lib.optimal_critic_scores` and
        :func:`~infonce_lib.log_density_ratio_scores`, computed separately.
    infonce, infonce_se, loo, loo_se : numpy.ndarray, shape (L, nK)
        Mean and SE over batches of InfoNCE and of the leave-one-out bound, critic
        :math:`\\log p(y|x)`, softmax over x.
    infonce_max_minus_log_k : numpy.ndarray, shape (L, nK)
        Largest batch value of InfoNCE minus :math:`\\log K`.
    ratio_over_x_max_diff : numpy.ndarray, shape (L, nK)
        Largest absolute difference between the batch values of InfoNCE over x with the
        critics :math:`\\log p(y|x)` and :math:`\\log p(y|x)/p(y)`.
    infonce_y, infonce_y_se, infonce_y_ratio, infonce_y_ratio_se : numpy.ndarray, shape (L, nK)
        InfoNCE with the softmax over y, for the critics :math:`\\log p(y|x)` and
        :math:`\\log p(y|x)/p(y)`.
    cosine_level, cosine_batch_size : float, int
        The cell of the cosine table.
    taus : tuple of float
        Temperatures of the cosine table.
    cosine_infonce, cosine_se : numpy.ndarray, shape (T,)
        Mean and SE of InfoNCE for the critic ``cos / tau``.
    cosine_cap, cosine_max_minus_cap : numpy.ndarray, shape (T,)
        The score-range cap :func:`~infonce_lib.cosine_cap`, and the largest batch value
        minus it.
    cosine_attainable_cap, cosine_max_minus_attainable_cap : numpy.ndarray, shape (T,)
        The attainable cap of unit-norm embeddings
        :func:`~infonce_lib.attainable_cosine_cap`, and the largest batch value minus it.
    best_tau, best_beta, best_infonce : float
        The best temperature over beta in ``infonce_lib.temperature.BETA_BOUNDS``, and its
        mean bound.
    best_cap, best_attainable_cap : float
        The score-range cap and the attainable cap at the best temperature.
    best_max_minus_cap, best_max_minus_attainable_cap : float
        The largest batch value at the best temperature minus each cap there.
    optimal_critic : float
        Mean InfoNCE of :math:`\\log p(y|x)` in the same cell.
    config : Config
        The configuration that produced it.
    """

    levels: tuple
    batch_sizes: tuple
    m_pairs: int
    sigma: np.ndarray
    mean_log_ratio: np.ndarray
    log_ratio_se: np.ndarray
    log_ratio_z: np.ndarray
    mi_gap: np.ndarray
    max_cov_error: np.ndarray
    engine_max_diff: np.ndarray
    infonce: np.ndarray
    infonce_se: np.ndarray
    loo: np.ndarray
    loo_se: np.ndarray
    infonce_max_minus_log_k: np.ndarray
    ratio_over_x_max_diff: np.ndarray
    infonce_y: np.ndarray
    infonce_y_se: np.ndarray
    infonce_y_ratio: np.ndarray
    infonce_y_ratio_se: np.ndarray
    cosine_level: float
    cosine_batch_size: int
    taus: tuple
    cosine_infonce: np.ndarray
    cosine_se: np.ndarray
    cosine_cap: np.ndarray
    cosine_max_minus_cap: np.ndarray
    cosine_attainable_cap: np.ndarray
    cosine_max_minus_attainable_cap: np.ndarray
    best_tau: float
    best_beta: float
    best_infonce: float
    best_cap: float
    best_attainable_cap: float
    best_max_minus_cap: float
    best_max_minus_attainable_cap: float
    optimal_critic: float
    config: Config


def run(config: Config | None = None) -> Result:
    """Run the experiment (cached per process: the same ``config`` gives the same object).

    Parameters
    ----------
    config : Config or None
        The configuration; ``None`` (the default) is ``Config()``, the book's protocol.

    Returns
    -------
    Result
        Shared by every caller with the same configuration; its arrays are read-only.
    """
    config = as_config(config, Config, "gaussian_patches")
    return _run_cached(config)


@functools.lru_cache(maxsize=4)
def _run_cached(config: Config) -> Result:
    field_ = gaussian_field(config.side, config.length_scale)
    L, nK = len(config.levels), len(config.batch_sizes)
    per_level = {k: np.empty(L) for k in _LEVEL_KEYS}
    cells = {k: np.empty((L, nK)) for k in _CELL_KEYS}
    cosine = None
    for li, target in enumerate(config.levels):
        sigma, x, y = _level_pairs(field_, target, _level_seed(config.seed, li), config.m_pairs)
        _level_statistics(field_, target, sigma, x, y, config, per_level, cells, li)
        if target == config.cosine_level:
            cosine = _cosine_table(x, y, config.cosine_batch_size, config.taus)
            cosine["optimal"] = float(cells["nce"][li, config.batch_sizes.index(
                config.cosine_batch_size)])  # fmt: skip
            cosine.update(attainable_columns(cosine, config.cosine_batch_size, config.taus))
            cosine.pop("objective")  # the cosine-temperature experiment needs it too
        del x, y
    return Result(
        levels=config.levels,
        batch_sizes=config.batch_sizes,
        m_pairs=config.m_pairs,
        **{f: read_only(per_level[k]) for f, k in zip(_LEVEL_FIELDS, _LEVEL_KEYS, strict=True)},
        **{f: read_only(cells[k]) for f, k in zip(_CELL_FIELDS, _CELL_KEYS, strict=True)},
        cosine_level=config.cosine_level,
        cosine_batch_size=config.cosine_batch_size,
        taus=config.taus,
        cosine_infonce=read_only(cosine["mean"]),
        cosine_se=read_only(cosine["se"]),
        cosine_cap=read_only(cosine["cap"]),
        cosine_max_minus_cap=read_only(cosine["max_minus_cap"]),
        cosine_attainable_cap=read_only(cosine["attainable_cap"]),
        cosine_max_minus_attainable_cap=read_only(cosine["max_minus_attainable_cap"]),
        best_tau=cosine["best"].tau,
        best_beta=cosine["best"].beta,
        best_infonce=cosine["best"].infonce,
        best_cap=cosine_cap(config.cosine_batch_size, cosine["best"].tau),
        best_attainable_cap=cosine["best_attainable_cap"],
        best_max_minus_cap=cosine["best_max_minus_cap"],
        best_max_minus_attainable_cap=cosine["best_max_minus_attainable_cap"],
        optimal_critic=cosine["optimal"],
        config=config,
    )


def attainable_columns(cosine: dict, K: int, taus: tuple) -> dict:
    """The attainable cap at each temperature and the largest batch value minus it.

    ``cosine`` is the cosine table (``infonce_lib.patches._cosine_table``); its objective
    remembers the batch values of the table and of the best temperature, so nothing is
    recomputed. Shared with :mod:`.cosine_temperature`.
    """
    objective, best = cosine["objective"], cosine["best"]
    tops = objective.batch_values_many([1.0 / tau for tau in taus]).max(axis=1)
    att = attainable_cosine_cap(K, np.asarray(taus, dtype=float))
    best_top = float(objective.batch_values(best.beta).max())
    return {
        "attainable_cap": att,
        "max_minus_attainable_cap": tops - att,
        "best_attainable_cap": attainable_cosine_cap(K, best.tau),
        "best_max_minus_attainable_cap": best_top - attainable_cosine_cap(K, best.tau),
    }


_LEVEL_FIELDS = (
    "sigma",
    "mean_log_ratio",
    "log_ratio_se",
    "log_ratio_z",
    "mi_gap",
    "max_cov_error",
    "engine_max_diff",
)
_CELL_FIELDS = (
    "infonce", "infonce_se", "loo", "loo_se", "infonce_max_minus_log_k", "ratio_over_x_max_diff",
    "infonce_y", "infonce_y_se", "infonce_y_ratio", "infonce_y_ratio_se",
)  # fmt: skip


def _level_statistics(field_, target, sigma, x, y, config, per_level, cells, li) -> None:
    """Fill row ``li`` of ``per_level`` and ``cells`` from the level's pairs."""
    per_level["sigma"][li] = sigma
    per_level["cov_err"][li] = np.abs(_sample_covariance(x) - field_.covariance).max()
    per_level["mi_gap"][li] = patch_information(
        sigma, field_.eigenvalues
    ) - patch_information_logdet(sigma, field_)
    log_py = _log_p_y(y, field_, sigma)
    mean, se = mean_and_se(_log_p_y_given_x(y, x, sigma) - log_py)
    per_level["mean"][li], per_level["se"][li] = mean, se
    per_level["z"][li] = (mean - target) / se
    values = _level_batch_values(x, y, sigma, log_py, config.batch_sizes)
    per_level["engine_diff"][li] = _engine_difference(field_, sigma, x, y, values)
    for ki, K in enumerate(config.batch_sizes):
        v = values[K]
        cells["nce"][li, ki], cells["nce_se"][li, ki] = mean_and_se(v[0])
        cells["loo"][li, ki], cells["loo_se"][li, ki] = mean_and_se(v[1])
        cells["max_minus"][li, ki] = v[0].max() - math.log(K)
        cells["ratio_diff"][li, ki] = np.abs(v[2] - v[0]).max()
        cells["nce_y"][li, ki], cells["nce_y_se"][li, ki] = mean_and_se(v[3])
        cells["nce_yr"][li, ki], cells["nce_yr_se"][li, ki] = mean_and_se(v[4])


def _engine_difference(field_, sigma, x, y, values) -> float:
    """The fast engine against the generic functions on the first batch of the largest K:
    the largest absolute difference over the five batch values (an independent check of the
    engine, which reuses one matrix of exponentials for all of them)."""
    K = max(values)
    F = optimal_critic_scores(x[:K], y[:K], sigma, K)
    R = log_density_ratio_scores(x[:K], y[:K], field_, sigma, K)
    generic = [
        infonce_bound(F)[0], leave_one_out_bound(F)[0], infonce_bound(R)[0],
        infonce_bound(F, over="y")[0], infonce_bound(R, over="y")[0],
    ]  # fmt: skip
    return float(np.max(np.abs(values[K][:, 0] - np.array(generic))))


def _results(r: Result) -> dict:
    """The JSON-able results of ``reproduce gaussian-patches --json`` (unrounded)."""
    levels = [
        {
            "I": float(I),
            "sigma": float(r.sigma[li]),
            "mean_log_ratio": float(r.mean_log_ratio[li]),
            "se": float(r.log_ratio_se[li]),
            "z": float(r.log_ratio_z[li]),
            "mi_gap": float(r.mi_gap[li]),
            "max_cov_error": float(r.max_cov_error[li]),
        }
        for li, I in enumerate(r.levels)
    ]
    bounds = [
        {
            "I": float(I),
            "K": int(K),
            "infonce": float(r.infonce[li, ki]),
            "infonce_se": float(r.infonce_se[li, ki]),
            "loo": float(r.loo[li, ki]),
            "loo_se": float(r.loo_se[li, ki]),
        }
        for li, I in enumerate(r.levels)
        for ki, K in enumerate(r.batch_sizes)
    ]
    rows = [
        {
            "tau": float(t),
            "infonce": float(r.cosine_infonce[ti]),
            "se": float(r.cosine_se[ti]),
            "cap": float(r.cosine_cap[ti]),  # the score-range cap
            "max_minus_cap": float(r.cosine_max_minus_cap[ti]),
            "attainable_cap": float(r.cosine_attainable_cap[ti]),
            "max_minus_attainable_cap": float(r.cosine_max_minus_attainable_cap[ti]),
        }
        for ti, t in enumerate(r.taus)
    ]
    best = ("best_tau", "best_infonce", "best_cap", "best_max_minus_cap", "best_attainable_cap",
            "best_max_minus_attainable_cap", "optimal_critic")  # fmt: skip
    cosine = {"I": float(r.cosine_level), "K": int(r.cosine_batch_size), "rows": rows}
    cosine.update({k: float(getattr(r, k)) for k in best})
    return {"levels": levels, "bounds": bounds, "cosine": cosine}


#: The lines under the title of a cosine table that say what its two caps are.
CAPS_LEGEND = (
    "range cap = log K - log(1 + (K-1) e^(-2/tau)), which no scores in [-1, 1] pass;",
    "attainable = log K - log(1 + (K-1) e^(-K/((K-1) tau))), which no unit-norm",
    "embeddings pass (a regular simplex reaches it if d >= K - 1; in fewer dimensions",
    "it is only a bound); max = the largest batch value",
)


def simplex_line(dim: int, K: int) -> str:
    """Whether the attainable cap of a cosine table can be reached: a regular simplex of
    ``K`` unit vectors, which reaches it, needs ``dim >= K - 1`` dimensions."""
    if dim >= K - 1:
        return f"(d = {dim} >= K - 1 = {K - 1} here: a regular simplex reaches the cap)"
    return f"(d = {dim} < K - 1 = {K - 1} here: no simplex fits; attainable is only a bound)"


def cosine_table(taus, infonce, se, cap, att, max_minus_cap, max_minus_att) -> str:
    """The cosine table: one row per temperature, both caps and the largest batch value
    against each (shared with :mod:`.cosine_temperature`)."""
    return format_table(
        ["tau", "InfoNCE", "SE", "range cap", "attainable", "max - range", "max - attainable"],
        [
            [t, infonce[ti], se[ti], cap[ti], att[ti], f4(max_minus_cap[ti]),
             f4(max_minus_att[ti])]
            for ti, t in enumerate(taus)
        ],
        ["g", ".4f", ".4f", ".4f", ".4f", "", ""],
    )  # fmt: skip


def tables(r: Result) -> str:
    """The three tables of the experiment as text (4 decimals)."""
    t1 = format_table(
        ["I", "sigma", "mean log r", "SE", "z", "I_eig - I_det", "max|cov - C|"],
        [
            [I, r.sigma[li], r.mean_log_ratio[li], r.log_ratio_se[li], r.log_ratio_z[li],
             below(r.mi_gap[li], 1e-9), r.max_cov_error[li]]
            for li, I in enumerate(r.levels)
        ],
        ["g", ".4f", ".4f", ".4f", ".2f", "", ".4f"],
    )  # fmt: skip
    t2 = format_table(
        ["I", "K", "log K", "InfoNCE", "SE", "leave-one-out", "SE"],
        [
            [I, K, math.log(K), r.infonce[li, ki], r.infonce_se[li, ki],
             r.loo[li, ki], r.loo_se[li, ki]]
            for li, I in enumerate(r.levels)
            for ki, K in enumerate(r.batch_sizes)
        ],
        ["g", "d", ".4f", ".4f", ".4f", ".4f", ".4f"],
    )  # fmt: skip
    t3 = cosine_table(
        r.taus, r.cosine_infonce, r.cosine_se, r.cosine_cap, r.cosine_attainable_cap,
        r.cosine_max_minus_cap, r.cosine_max_minus_attainable_cap,
    )  # fmt: skip
    K = r.cosine_batch_size
    side, seed = r.config.side, r.config.seed
    return "\n".join(
        [
            f"Gaussian patches: {side}x{side} field, length scale "
            f"{r.config.length_scale:g}, M = {r.m_pairs} pairs per level,",
            "seed = level index" if seed == 0 else f"seed = [{seed}, level index]",
            "",
            "Table 1. Data checks per level (log r = log p(y|x) - log p(y), mean over M pairs)",
            t1,
            "",
            "Table 2. Optimal critic log p(y|x), softmax over x: mean over M/K batches, SE",
            t2,
            f"largest batch value of InfoNCE - log K, over every cell: "
            f"{f4(float(r.infonce_max_minus_log_k.max()))}",
            "(<= 0 by construction, not a test: each term is log K plus a log-probability)",
            "",
            f"Table 3. Cosine critic cos(x, y)/tau at I = {r.cosine_level:g}, K = {K}",
            *CAPS_LEGEND,
            simplex_line(side * side, K),
            t3,
            best_tau_line(r.best_tau, r.best_beta),
            f"  InfoNCE = {r.best_infonce:.4f}, range cap = {r.best_cap:.4f}, "
            f"attainable cap = {r.best_attainable_cap:.4f}",
            f"optimal critic log p(y|x) at the same K: InfoNCE = {r.optimal_critic:.4f}",
        ]
    )


def checks(r: Result) -> list[Check]:
    """The summary checks of chapter 3 (and the cosine table's)."""
    best_ok, optimal_ok = cosine_checks(r.cosine_infonce, r.best_infonce, r.optimal_critic)
    caps = cap_checks(
        r.cosine_max_minus_cap, r.best_max_minus_cap, r.cosine_max_minus_attainable_cap,
        r.best_max_minus_attainable_cap,
    )  # fmt: skip
    return [*_data_checks(r), *_bound_checks(r), *caps, best_ok, optimal_ok]


def _data_checks(r: Result) -> list[Check]:
    """The pairs are what the protocol says: information, covariance, mean log-ratio."""
    gap = float(np.abs(r.mi_gap).max())
    cov_tol = 6 * math.sqrt(2 / r.m_pairs)
    cov = float(r.max_cov_error.max())
    z = r.log_ratio_z
    return [
        Check(
            "I(sigma) by eigenvalues and by log-determinants agree to 1e-9 at every level",
            gap < 1e-9,
            f"max |difference| {below(gap, 1e-9)}",
        ),
        Check(
            f"sample covariance of x matches C: max |cov - C| < 6 sqrt(2/M) = {cov_tol:.4f}",
            cov < cov_tol,
            f"largest {f4(cov)}",
        ),
        Check(
            "mean of log p(y|x)/p(y) matches I: |z| < 3 at every level",
            bool(np.all(np.abs(z) < 3)),
            "z = " + ", ".join(f"{v:.2f}" for v in z),
        ),
    ]


def _trend(levels, gaps) -> str:
    return "; ".join(
        f"I={lv:g}: " + " > ".join(f4(v) for v in gaps[li]) for li, lv in enumerate(levels)
    )


def _falls(gaps: np.ndarray, se: np.ndarray) -> bool:
    """Each row of ``gaps`` (one level, K increasing) decreases at every step, except where
    the gap has closed to noise: a step may rise when its new gap is within 3 SE of 0."""
    closed = np.abs(gaps[:, 1:]) < 3 * se[:, 1:]
    return bool(np.all((np.diff(gaps, axis=1) < 0) | closed))


def _bound_checks(r: Result) -> list[Check]:
    """The bounds: the engine, the z-scores, the trends in K, saturation, and the two critics."""
    levels, Ks = r.levels, r.batch_sizes
    I = np.asarray(levels)[:, None]
    z_nce = (r.infonce - I) / r.infonce_se
    z_loo = (r.loo - I) / r.loo_se
    gap_lo, gap_hi = I - r.infonce, r.loo - I
    top = int(np.argmax(levels))
    sat = np.log(np.asarray(Ks, dtype=float)) - r.infonce[top]
    engine = float(r.engine_max_diff.max())
    margin = r.infonce_y_ratio - r.infonce_y
    li, ki = np.unravel_index(np.argmin(margin), margin.shape)
    return [
        Check(
            "the fast engine agrees with infonce_bound and leave_one_out_bound on "
            "optimal_critic_scores and log_density_ratio_scores, computed separately (first "
            "batch of the largest K, every level, both critics, both sides): to 1e-9",
            engine < 1e-9,
            f"max |difference| {below(engine, 1e-9)}",
        ),
        Check(
            "z-scores of the means against I: (InfoNCE - I)/SE < 3 and (LOO - I)/SE > -3 in "
            "every cell",
            bool(np.all(z_nce < 3) and np.all(z_loo > -3)),
            f"largest InfoNCE z = {z_nce.max():.2f}, smallest LOO z = {z_loo.min():.2f}",
        ),
        Check(
            "I - InfoNCE falls as K grows, at every level, until it is within 3 SE of 0",
            _falls(gap_lo, r.infonce_se),
            _trend(levels, gap_lo),
        ),
        Check(
            "leave-one-out - I falls as K grows, at every level, until it is within 3 SE of 0",
            _falls(gap_hi, r.loo_se),
            _trend(levels, gap_hi),
        ),
        Check(
            f"saturation at I = {levels[top]:g}: log K - InfoNCE < 0.1 nats at every K",
            bool(np.all(sat < 0.1)),
            ", ".join(f"K={K}: {f4(v)}" for K, v in zip(Ks, sat, strict=True)),
        ),
        Check(
            "softmax over y: the density-ratio critic beats log p(y|x) in every cell",
            bool(np.all(margin > 0)),
            f"smallest margin {f4(margin[li, ki])} nats at I={levels[li]:g}, K={Ks[ki]}",
        ),
    ]


def report(config: Config | None = None) -> Report:
    """``python -m infonce_lib reproduce gaussian-patches``: results, tables and checks.

    Returns
    -------
    Report
        ``results`` has the documented JSON schema::

            {"levels": [{"I", "sigma", "mean_log_ratio", "se", "z", "mi_gap",
                         "max_cov_error"}, ...],
             "bounds": [{"I", "K", "infonce", "infonce_se", "loo", "loo_se"}, ...],
             "cosine": {"I", "K",
                        "rows": [{"tau", "infonce", "se", "cap", "max_minus_cap",
                                  "attainable_cap", "max_minus_attainable_cap"}, ...],
                        "best_tau", "best_infonce", "best_cap", "best_max_minus_cap",
                        "best_attainable_cap", "best_max_minus_attainable_cap",
                        "optimal_critic"}}

        with ``mi_gap`` = I by eigenvalues minus I by log-determinants at ``sigma`` (nats),
        ``max_cov_error`` = the largest absolute entry of ``numpy.cov(x) - C``, ``cap`` the
        score-range cap :func:`~infonce_lib.cosine_cap`, ``attainable_cap`` the attainable
        cap of unit-norm embeddings :func:`~infonce_lib.attainable_cosine_cap`, and
        ``max_minus_*`` the largest batch value minus that cap (the ``best_*`` at the best
        temperature): the cosine cell's keys and values are those of
        ``reproduce cosine-temperature --json``.
    """
    r = run(config)
    return Report(results=_results(r), tables=tables(r), checks=checks(r))
