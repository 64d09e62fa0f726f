r"""Chapter 5's experiment: our version of McAllester & Stratos (2020), Table 1, with checks.

For the three 128-dimensional correlated Gaussians (:math:`\rho = 0.25, 0.5, 0.9`): the exact
information (:func:`~infonce_lib.correlated_gaussian_information`); InfoNCE with the optimal
critic at :math:`N = 128` (:func:`~infonce_lib.correlated_gaussian_infonce`, mean over
``n_batches`` batches and its standard error); and the DoE estimate with coordinatewise
Gaussian models (:func:`~infonce_lib.doe_estimate`, ``n_train`` training and ``n_test``
held-out pairs, mean over ``repetitions`` independent repetitions and its standard error).
Row ``r`` uses ``numpy.random.default_rng([seed, r])``, InfoNCE first, then the DoE
repetitions.

Checks: the exact information rounds to the published value; every InfoNCE batch is at most
:math:`\ln 128`; the last two rows are within 0.01 nats of it; the DoE estimate is within
0.06 nats of the truth in the first two rows (their claim for their DoE) and within 3
standard errors plus 0.1 nats in the third.

Examples
--------
>>> from infonce_lib.experiments import mcallester_stratos
>>> config = mcallester_stratos.Config(n_batches=10, n_train=2000, n_test=2000, repetitions=2)
>>> rep = mcallester_stratos.report(config)
>>> [round(r["true_information"], 2) for r in rep.results["rows"]]
[4.13, 18.41, 106.29]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_int
from ..doe import doe_estimate
from ..limits import (
    correlated_gaussian_infonce,
    correlated_gaussian_information,
    sample_correlated_gaussian,
)
from ..report import Check, Report, format_table
from ._shared import as_config

NAME = "mcallester-stratos"
SUMMARY = "McAllester & Stratos's Table 1: InfoNCE at N = 128 and DoE on 128-d Gaussians"
CHAPTER = "chapter 5"

#: Their Table 1 (McAllester & Stratos, 2020): true information and the published estimates.
PUBLISHED_TABLE1 = {
    "rho": (0.25, 0.5, 0.9),
    "dim": 128,
    "batch_size": 128,
    "true_information": (4.13, 18.41, 106.29),
    "infonce": (2.73, 4.82, 4.85),
    "doe": ("within 0.06 nats of the truth", "within 0.06 nats of the truth", "104.18"),
}

#: Their claim for their DoE in the first two rows: within this many nats of the truth.
DOE_CLAIM = 0.06
#: InfoNCE in the last two rows is within this many nats of ln N (saturation).
SATURATION = 0.01


@dataclass(frozen=True)
class Config:
    """The experiment's configuration; the defaults are the book's protocol.

    Attributes
    ----------
    n_batches : int, default 200
        InfoNCE batches per row (at least 2).
    n_train, n_test : int, default 10000, 20000
        Training and held-out pairs of each DoE repetition.
    repetitions : int, default 4
        DoE repetitions per row (at least 2).
    seed : int, default 2020

    Raises
    ------
    TypeError, ValueError
        If a field is out of range (messages name it).
    """

    n_batches: int = 200
    n_train: int = 10_000
    n_test: int = 20_000
    repetitions: int = 4
    seed: int = 2020

    def __post_init__(self):
        for name, minimum in (("n_batches", 2), ("n_train", 3), ("n_test", 2), ("repetitions", 2)):
            object.__setattr__(self, name, as_int(getattr(self, name), name, minimum=minimum))
        object.__setattr__(self, "seed", as_int(self.seed, "seed", minimum=0))


@dataclass(frozen=True)
class Result:
    """What :func:`run` computes.

    Attributes
    ----------
    rows : tuple of dict
        Per :math:`\\rho`: ``rho``, ``dim``, ``batch_size``, ``true_information``,
        ``infonce_mean``, ``infonce_se``, ``infonce_max_batch``, ``doe_mean``, ``doe_se``
        and the published figures (``published_true_information``, ``published_infonce``,
        ``published_doe``).
    ln_batch_size : float
        :math:`\\ln N`.
    config : Config
    """

    rows: tuple
    ln_batch_size: float
    config: Config


def run(config: Config | None = None) -> Result:
    """Compute the three rows of the table."""
    config = as_config(config, Config, "mcallester_stratos")
    pub = PUBLISHED_TABLE1
    rows = [_row(config, r_idx, rho) for r_idx, rho in enumerate(pub["rho"])]
    return Result(rows=tuple(rows), ln_batch_size=math.log(pub["batch_size"]), config=config)


def _row(c: Config, r_idx: int, rho: float) -> dict:
    pub = PUBLISHED_TABLE1
    d, k = pub["dim"], pub["batch_size"]
    ntr, nte = c.n_train, c.n_test
    rng = np.random.default_rng([c.seed, r_idx])
    truth = correlated_gaussian_information(rho, d)
    nce = correlated_gaussian_infonce(rho, d, k, c.n_batches, rng)
    doe = []
    for _ in range(c.repetitions):
        X, Y = sample_correlated_gaussian(ntr + nte, rho, d, rng)
        est = doe_estimate(X[:ntr], Y[:ntr], X[ntr:], Y[ntr:], model="coordinatewise")
        doe.append(est.information)
    doe = np.asarray(doe)
    return {
        "rho": rho,
        "dim": d,
        "batch_size": k,
        "true_information": truth,
        "infonce_mean": float(nce.mean()),
        "infonce_se": float(nce.std(ddof=1) / math.sqrt(c.n_batches)),
        "infonce_max_batch": float(nce.max()),
        "doe_mean": float(doe.mean()),
        "doe_se": float(doe.std(ddof=1) / math.sqrt(c.repetitions)),
        "published_true_information": pub["true_information"][r_idx],
        "published_infonce": pub["infonce"][r_idx],
        "published_doe": pub["doe"][r_idx],
    }


def tables(r: Result) -> str:
    """Their Table 1 beside ours, with a header that states the settings."""
    c = r.config
    d, k = PUBLISHED_TABLE1["dim"], PUBLISHED_TABLE1["batch_size"]
    rows = [
        [
            row["rho"],
            row["true_information"],
            f"{row['infonce_mean']:.4f} ± {row['infonce_se']:.4f}",
            f"{row['doe_mean']:.3f} ± {row['doe_se']:.3f}",
            f"{row['published_infonce']:.2f}",
            row["published_doe"].replace(" nats of the truth", ""),
        ]
        for row in r.rows
    ]
    text = format_table(
        ["rho", "true I", "InfoNCE, ours", "DoE, ours", "InfoNCE, M&S", "DoE, M&S"],
        rows,
        ["", ".2f", "", "", "", ""],
    )
    header = "\n".join(
        [
            "McAllester & Stratos (2020), Table 1, beside ours. M&S: their published",
            "figures ('within 0.06': within 0.06 nats of the truth).",
            f"d = {d}, N = {k}, ln {k} = {r.ln_batch_size:.3f}.",
            f"InfoNCE: optimal critic, {c.n_batches} batches. DoE: coordinatewise Gaussian models,",
            f"{c.n_train} training and {c.n_test} held-out pairs, {c.repetitions} repetitions. "
            "± one SE.",
        ]
    )
    return header + "\n\n" + text


def checks(r: Result) -> list[Check]:
    """Per row: the published truth, the ceiling ln N, saturation, and the DoE estimate."""
    out = []
    k, log_k = PUBLISHED_TABLE1["batch_size"], r.ln_batch_size
    for r_idx, row in enumerate(r.rows):
        rho, truth = row["rho"], row["true_information"]
        published = row["published_true_information"]
        out.append(
            Check(
                f"rho = {rho}: exact I rounds to the published {published}",
                round(truth, 2) == published,
                f"{truth:.6f}",
            )
        )
        out.append(
            Check(
                f"rho = {rho}: every InfoNCE batch <= ln {k}",
                bool(row["infonce_max_batch"] <= log_k),
                f"max batch - ln {k} = {row['infonce_max_batch'] - log_k:.2e}",
            )
        )
        if r_idx >= 1:
            gap = log_k - row["infonce_mean"]
            out.append(
                Check(
                    f"rho = {rho}: InfoNCE within {SATURATION} of ln {k}",
                    bool(gap < SATURATION),
                    f"ln {k} - mean = {gap:.2e}",
                )
            )
        out.append(_doe_check(r_idx, row))
    return out


def _doe_check(r_idx: int, row: dict) -> Check:
    rho, err = row["rho"], row["doe_mean"] - row["true_information"]
    if r_idx <= 1:
        ok, detail = abs(err) < DOE_CLAIM, f"DoE - I = {err:+.4f} (SE {row['doe_se']:.4f})"
        return Check(f"rho = {rho}: DoE within {DOE_CLAIM} of the truth", bool(ok), detail)
    tol = 3 * row["doe_se"] + 0.1
    ok, detail = abs(err) < tol, f"DoE - I = {err:+.4f}, tol. {tol:.4f}"
    return Check(f"rho = {rho}: DoE within 3 SE + 0.1 of I", bool(ok), detail)


def report(config: Config | None = None) -> Report:
    """``python -m infonce_lib reproduce mcallester-stratos``: results, table and checks.

    Returns
    -------
    Report
        ``results``: ``rows`` (per :math:`\\rho`, unrounded, as :class:`Result`),
        ``ln_batch_size`` and ``settings`` (the configuration and ``doe_model``).
    """
    r = run(config)
    c = r.config
    settings = {
        "n_batches": c.n_batches,
        "n_train": c.n_train,
        "n_test": c.n_test,
        "repetitions": c.repetitions,
        "seed": c.seed,
        "doe_model": "coordinatewise",
    }
    results = {"rows": [dict(row) for row in r.rows], "ln_batch_size": r.ln_batch_size}
    results["settings"] = settings
    return Report(results=results, tables=tables(r), checks=checks(r))
