r"""Chapter 8's experiment: contrastive encoders trained on the handwritten digits, and what
their held-out InfoNCE bound does and does not say about their features.

For each configuration of the grid (the views, the temperature, the batch size, the training
length) ``runs`` encoders are trained at once (:func:`~infonce_lib.train_encoders`) on the
1,195 training digits without labels (:func:`~infonce_lib.load_digits`) and evaluated on
the 602 test digits:

* ``probe_1``, ``probe_5``: the linear probe with 1 and 5 labelled training images per class,
  averaged over draws of the labels (:func:`~infonce_lib.few_label_probe`, penalty ``C``);
  every encoder and baseline gets the same draws (from ``np.random.default_rng([seed, 7,
  k])`` for ``k`` labels per class), so their differences are not those of the draws;
* ``probe_all``: the linear probe with every training label (:func:`~infonce_lib.linear_probe`);
* ``knn``: the cosine 5-nearest-neighbour classifier with every training label
  (:func:`~infonce_lib.knn_accuracy`);
* ``bound``: the held-out InfoNCE bound at the run's (final) temperature, in batches of
  ``bound_batch_size`` view pairs of test images (:func:`~infonce_lib.heldout_infonce`), a
  lower bound on the information between **two views** of a test image, not between images
  and labels; with ``best_tau`` and ``best_bound``, the temperature that maximises it for the
  same embeddings and the bound there (:func:`~infonce_lib.best_temperature`), and ``beaten``,
  the share of test rows whose positive is outscored by a negative
  (:func:`~infonce_lib.positive_margins`);
* ``alignment`` and ``uniformity``: Wang & Isola's metrics (:func:`~infonce_lib.alignment`,
  :func:`~infonce_lib.uniformity`, with their :math:`\alpha` and :math:`t`, quoted) of the
  test embeddings of one round of views.

The features the probes and the nearest neighbours see are the encoder's unit embeddings of
the clean test images. Two baselines have the same probes: the raw pixels (each probe with
the best ``C`` of ``raw_Cs``, chosen on the test images themselves: an advantage the encoders
do not get) and a random encoder of the same shape (:func:`~infonce_lib.init_encoder`, one
per run). Every metric is reported as the median over the runs, with the first and third
quartiles.

A learned temperature starts at CLIP's 0.07 unless the grid gives another start; the default
grid also learns it from 0.5 with shift views, beside the fixed 0.5, so that the check of
where it ends has a control: the same test applied to the fixed temperature must fail.

Training runs in float64 (``compute_dtype``), as everything reported does. In float32 it is
about a third quicker, but OpenBLAS then computes some of these matrix products with another
kernel when it has more than one thread, and training turns those last bits into different
third decimals: in float64 the results do not depend on the thread count.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .._validation import as_bool, as_int, as_positive_scalar, as_sequence
from ..hypersphere import alignment, uniformity
from ..published import WANG_ISOLA_METRICS
from ..report import Check, Report, format_table
from ..temperature import best_temperature, positive_margins
from ..training import (
    Encoder,
    TrainingConfig,
    ViewRecipe,
    encode,
    heldout_infonce,
    init_encoder,
    knn_accuracy,
    load_digits,
    train_encoders,
)
from ..training.probe import _label_draws, _stacked_accuracies
from ._shared import as_config, read_only

NAME = "digits"
SUMMARY = (
    "contrastive encoders on the handwritten digits: probes, kNN and held-out bounds over "
    "views, temperatures, batch sizes and training length"
)
CHAPTER = "chapter 8"

#: The views of the book: small shifts with dropped pixels and noise, or noise alone.
VIEWS = {
    "shift": ViewRecipe(shift=1, dropout=0.2, noise=0.1),
    "noise": ViewRecipe(noise=0.1),
}
_WI = WANG_ISOLA_METRICS.values
#: The metrics of every encoder, in the order of the tables.
METRICS = (
    "probe_1", "probe_5", "probe_all", "knn", "bound", "best_tau", "best_bound", "beaten",
    "alignment", "uniformity",
)  # fmt: skip


#: How far below the best-tuned raw pixels' 5-label probe the long runs' may end and still
#: count as reaching it (the draws of the runs move it by about a point).
RAW_GAP = 0.02

#: A temperature "ends near" the best one of its own held-out cosines when the two are
#: within this factor of each other (either way).
TRACKING_FACTOR = 1.25

#: Where a learned temperature starts unless the grid says otherwise (CLIP's, quoted).
CLIP_START = TrainingConfig().initial_temperature


def _default_grid() -> tuple:
    grid = tuple(itertools.product(VIEWS, (0.05, 0.1, 0.2, 0.5, "learned")))
    return (*grid, ("shift", "learned", 0.5))


@dataclass(frozen=True)
class Config:
    r"""The protocol; the defaults are the reproduce command's (the chapter runs a part).

    Attributes
    ----------
    seed : int, default 0
        The book's seed. The configurations that share a batch size and a number of steps
        train together (:func:`~infonce_lib.train_encoders`), group ``g`` from the generator
        ``np.random.default_rng([seed, g])``; the evaluations draw from
        ``np.random.default_rng([seed, J])``, ``J`` the number of configurations.
    runs : int, default 3
        Encoders per configuration (the medians and quartiles are over them).
    grid : tuple of (str, float or "learned") or (str, "learned", float)
        The (views, temperature) configurations at ``batch_size`` and ``steps``; views are
        keys of the module's ``VIEWS``; a learned temperature starts at CLIP's 0.07 unless a third
        item gives the start. Default: both views times 0.05, 0.1, 0.2, 0.5 and "learned",
        and shift views learned from 0.5 (the start of the fixed 0.5: the learned
        parameter's effect, the rest alike).
    sizes, steps, batch_size, learning_rate, log_scale_learning_rate, compute_dtype
        Passed to :class:`~infonce_lib.TrainingConfig` (the log scale learns at 5e-2 so that
        a few hundred steps show where it goes).
    long_tau : float, default 0.1
        The temperature whose configurations also train to ``long_steps``, with a snapshot at
        each of ``checkpoints`` (their grid records are the snapshot at ``steps``).
    long_steps : int, default 1800
    checkpoints : tuple of int, default (100, 300, 600, 1800)
        Must include ``steps`` and ``long_steps``.
    batch_sizes : tuple of int, default (32, 128)
        Further batch sizes for the ``long_tau`` configurations, at ``steps``.
    probe_C : float, default 10
        The probes' ``C`` for every encoder.
    probe_tol : float, default 1e-6
        The probes' ``tol`` (:func:`~infonce_lib.linear_probe`).
    raw_Cs : tuple of float, default (0.1, 1, 10, 100)
        The raw pixels' probes use the best of these on the test images.
    draws : tuple of (int, int), default ((1, 20), (5, 10))
        ``(labels per class, draws)`` of the few-label probes.
    all_labels : bool, default True
        Whether ``probe_all`` is computed for every encoder (else only for the baselines and
        the first configuration of the grid, and the snapshots at the checkpoints have only
        the few-label probes and the bound).
    probe_learned : bool, default True
        Whether the learned temperatures' encoders get the probes and the nearest neighbours
        (else only the bound and the metrics of the temperature and the embeddings).
    bound_batch_size, bound_rounds : int, default 256 and 4
        :math:`K` and the rounds of :func:`~infonce_lib.heldout_infonce`.
    knn_k : int, default 5
    """

    seed: int = 0
    runs: int = 3
    grid: tuple = field(default_factory=_default_grid)
    sizes: tuple = (64, 128, 32)
    steps: int = 600
    batch_size: int = 64
    learning_rate: float = 2e-3
    log_scale_learning_rate: float = 5e-2
    compute_dtype: str = "float64"
    long_tau: float = 0.1
    long_steps: int = 1800
    checkpoints: tuple = (100, 300, 600, 1800)
    batch_sizes: tuple = (32, 128)
    probe_C: float = 10.0
    probe_tol: float = 1e-6
    raw_Cs: tuple = (0.1, 1.0, 10.0, 100.0)
    draws: tuple = ((1, 20), (5, 10))
    all_labels: bool = True
    probe_learned: bool = True
    bound_batch_size: int = 256
    bound_rounds: int = 4
    knn_k: int = 5

    def __post_init__(self) -> None:
        put = functools.partial(object.__setattr__, self)
        put("seed", as_int(self.seed, "seed", minimum=0))
        put("runs", as_int(self.runs, "runs", minimum=1))
        put("grid", tuple(_grid_entry(g) for g in as_sequence(self.grid, "grid")))
        for name in ("steps", "long_steps", "batch_size", "bound_batch_size", "bound_rounds"):
            put(name, as_int(getattr(self, name), name, minimum=1))
        put(
            "checkpoints",
            tuple(
                sorted(
                    as_int(c, "checkpoints", minimum=1)
                    for c in as_sequence(self.checkpoints, "checkpoints")
                )
            ),
        )
        if not {self.steps, self.long_steps} <= set(self.checkpoints) or (
            max(self.checkpoints) > self.long_steps
        ):
            raise ValueError("checkpoints must include steps and long_steps and end there")
        put("batch_sizes", tuple(as_int(b, "batch_sizes", minimum=2) for b in self.batch_sizes))
        put("draws", tuple((as_int(k, "draws"), as_int(m, "draws")) for k, m in self.draws))
        put("raw_Cs", tuple(as_positive_scalar(c, "raw_Cs") for c in self.raw_Cs))
        put("all_labels", as_bool(self.all_labels, "all_labels"))
        put("probe_learned", as_bool(self.probe_learned, "probe_learned"))
        for views, tau, start in self.grid:
            TrainingConfig(**self._training(views, tau, self.batch_size, self.steps, (), start))

    def _training(self, views, tau, batch_size, steps, checkpoints, start=None) -> dict:
        return dict(
            sizes=self.sizes, views=VIEWS[views], steps=steps, batch_size=batch_size,
            temperature=tau, learning_rate=self.learning_rate,
            log_scale_learning_rate=self.log_scale_learning_rate, checkpoints=checkpoints,
            compute_dtype=self.compute_dtype,
            initial_temperature=CLIP_START if start is None else start,
        )  # fmt: skip


def _grid_entry(g) -> tuple:
    """(views, tau, start): start the learned temperature's first value, None if fixed."""
    g = tuple(as_sequence(g, "grid"))
    if len(g) not in (2, 3) or (len(g) == 3 and g[1] != "learned"):
        raise ValueError(f"grid entries must be (views, tau) or (views, 'learned', start); got {g}")
    views, tau = g[0], g[1]
    if views not in VIEWS:
        raise ValueError(f"grid: views must be one of {sorted(VIEWS)}; got {views!r}")
    if tau != "learned":
        return views, as_positive_scalar(tau, "grid"), None
    return views, tau, as_positive_scalar(g[2], "grid") if len(g) == 3 else CLIP_START


@dataclass(frozen=True)
class Record:
    """One configuration's runs, evaluated.

    Attributes
    ----------
    views : str
    tau : float or "learned"
    batch_size, steps : int
    values : dict of str to numpy.ndarray
        Each metric of :data:`METRICS` (``probe_all`` may be absent), one value per run.
    final_taus : numpy.ndarray or None
        For a learned temperature, its value after the last step of each run.
    start : float or None
        Where a learned temperature started (None for a fixed one).
    encoders : tuple of Encoder
        The encoders (for the chapter's own figures).
    losses, temperatures : numpy.ndarray or None
        The training loss and the temperature of each run at each step, shape (steps, runs)
        (None for a snapshot).
    """

    views: str
    tau: object
    batch_size: int
    steps: int
    values: dict
    final_taus: np.ndarray | None
    encoders: tuple
    losses: np.ndarray | None
    temperatures: np.ndarray | None = None
    start: float | None = None

    def median(self, metric: str) -> float:
        """The median of ``metric`` over the runs."""
        return float(np.median(self.values[metric]))

    def quartiles(self, metric: str) -> tuple[float, float]:
        """The first and third quartiles of ``metric`` over the runs."""
        q25, q75 = np.quantile(self.values[metric], [0.25, 0.75])
        return float(q25), float(q75)


@dataclass(frozen=True)
class Result:
    """What :func:`run` computes.

    Attributes
    ----------
    baselines : dict
        ``{"raw": {metric: array}, "random": {metric: array}}``: the raw pixels (one value
        per metric: the best of ``raw_Cs``) and a random encoder per run.
    raw_C : dict
        The ``C`` the raw pixels' probes used, per probe.
    records : tuple of Record
        The grid at ``steps``, then the snapshots of the ``long_tau`` runs at the other
        checkpoints, then the other batch sizes.
    seconds : float
        Wall-clock seconds of the run.
    config : Config
    """

    baselines: dict
    raw_C: dict
    records: tuple
    seconds: float
    config: Config

    def record(self, views: str, tau, *, start=None, batch_size=None, steps=None) -> Record:
        """The record of one configuration (default: the grid's batch size and steps, and
        for a learned temperature CLIP's start)."""
        K = self.config.batch_size if batch_size is None else batch_size
        n = self.config.steps if steps is None else steps
        if tau == "learned" and start is None:
            start = CLIP_START
        for r in self.records:
            if (r.views, r.tau, r.start, r.batch_size, r.steps) == (views, tau, start, K, n):
                return r
        raise KeyError(
            f"no record for views={views!r}, tau={tau!r}, start={start}, N={K}, steps={n}"
        )


def _probes(digits, Ftrs, Ftes, C: float, config: Config, all_labels: bool, knn=True) -> dict:
    """The probes of a stack of feature sets (E, n, d): one value per set, as arrays. The
    few-label draws are the same for every set, and for every call (seeded by ``config``)."""
    out, ytr, yte = {}, digits.y_train, digits.y_test
    for per_class, draws in config.draws:
        rng = np.random.default_rng([config.seed, 7, per_class])
        chosen = _label_draws(ytr, int(ytr.max()) + 1, per_class, draws, rng)
        acc = _stacked_accuracies(Ftrs, ytr, Ftes, yte, chosen, C, config.probe_tol)
        out[f"probe_{per_class}"] = acc.mean(axis=1)
    if all_labels:  # every training row, once
        every = np.arange(len(ytr))[None]
        out["probe_all"] = _stacked_accuracies(Ftrs, ytr, Ftes, yte, every, C, config.probe_tol)[
            :, 0
        ]
    if knn:
        out["knn"] = np.array([knn_accuracy(a, ytr, b, yte, k=config.knn_k)
                               for a, b in zip(Ftrs, Ftes, strict=True)])  # fmt: skip
    return out


def evaluate(encoder: Encoder, views: str, tau: float, config: Config, rng, detail="full"):
    """The metrics of one encoder (module docstring), as a dict of floats: all of them
    (``detail="full"``), all but ``probe_all`` (``"grid"``), all but the probes and the
    neighbours (``"bound"``), or only the few-label probes and the bound (``"snapshot"``,
    for the checkpoints of a run)."""
    return {k: float(v[0]) for k, v in _evaluate([encoder], views, [tau], config, rng,
                                                  detail).items()}  # fmt: skip


def _evaluate(encoders, views: str, taus, config: Config, rng, detail: str) -> dict:
    """:func:`evaluate` for several encoders at once: one array per metric."""
    digits = load_digits()
    out = {}
    if detail != "bound":
        Ftr = np.stack([encode(e, digits.x_train) for e in encoders])
        Fte = np.stack([encode(e, digits.x_test) for e in encoders])
        out = _probes(digits, Ftr, Fte, config.probe_C, config, detail == "full",
                      knn=detail != "snapshot")  # fmt: skip
    rows = []
    for encoder, tau in zip(encoders, taus, strict=True):
        held = heldout_infonce(
            encoder, digits.x_test, VIEWS[views], batch_size=config.bound_batch_size,
            temperature=tau, rounds=config.bound_rounds, seed=rng,
        )  # fmt: skip
        if detail == "snapshot":
            rows.append({"bound": held.mean})
            continue
        best = best_temperature(held.cosines)
        first = (digits.x_test.shape[0] // config.bound_batch_size) * config.bound_batch_size
        A, B = held.embeddings_a[:first], held.embeddings_b[:first]  # the first round
        rows.append(dict(
            bound=held.mean, best_tau=best.tau, best_bound=best.infonce,
            beaten=float(np.mean(positive_margins(held.cosines) < 0)),
            alignment=alignment(A, B, alpha=_WI["alignment_alpha"]),
            uniformity=uniformity(A, t=_WI["uniformity_t"]),
        ))  # fmt: skip
    out.update({k: np.array([r[k] for r in rows]) for k in rows[0]})
    return out


def _baselines(config: Config) -> tuple[dict, dict]:
    digits = load_digits()
    rng = np.random.default_rng([config.seed, 999])
    raw, raw_C = {}, {}
    for C in config.raw_Cs:  # the best C for each probe, chosen on the test images
        scores = _probes(digits, digits.x_train[None], digits.x_test[None], C, config, True,
                         knn=False)  # fmt: skip
        for k, v in scores.items():
            if v[0] > raw.get(k, -1.0):
                raw[k], raw_C[k] = float(v[0]), C
    raw["knn"] = knn_accuracy(digits.x_train, digits.y_train, digits.x_test, digits.y_test,
                              k=config.knn_k)  # fmt: skip
    randoms = [init_encoder(config.sizes, seed=rng) for _ in range(config.runs)]
    Ftr = np.stack([encode(e, digits.x_train) for e in randoms])
    Fte = np.stack([encode(e, digits.x_test) for e in randoms])
    random = {k: read_only(v) for k, v in _probes(digits, Ftr, Fte, config.probe_C, config,
                                                  True).items()}  # fmt: skip
    return {"raw": {k: read_only([v]) for k, v in raw.items()}, "random": random}, raw_C


def _record(job, steps, encoders, final_taus, history, config, rng, detail):
    views, tau, start, K = job[:4]
    values = {k: read_only(v) for k, v in _evaluate(encoders, views, list(final_taus), config,
                                                    rng, detail).items()}  # fmt: skip
    learned = tau == "learned"
    losses, temperatures = history
    return Record(views, tau, K, steps, values, read_only(final_taus) if learned else None,
                  tuple(encoders), losses, temperatures, start)  # fmt: skip


def run(config: Config | None = None) -> Result:
    """Train and evaluate the grid (cached per process: the same ``config``, the same object).

    Parameters
    ----------
    config : Config or None
        ``None`` is ``Config()``, the reproduce command's protocol.

    Returns
    -------
    Result
    """
    return _run_cached(as_config(config, Config, "digits"))


@functools.lru_cache(maxsize=4)
def _run_cached(config: Config) -> Result:
    t0 = time.perf_counter()  # not `start`: the grid's loop below binds that name
    x = load_digits().x_train
    jobs = []  # (views, tau, start, batch size, steps, checkpoints): the grid, the batch sizes
    for views, tau, start in config.grid:
        long = tau == config.long_tau
        steps = config.long_steps if long else config.steps
        cps = config.checkpoints if long else ()
        jobs.append((views, tau, start, config.batch_size, steps, cps))
    for views, tau, start in config.grid:
        if tau == config.long_tau:
            jobs += [(views, tau, start, K, config.steps, ()) for K in config.batch_sizes]
    runs = {}
    for g, key in enumerate(dict.fromkeys(j[3:5] for j in jobs)):
        group = [j for j in jobs if j[3:5] == key]  # trained together (one stack)
        cfgs = [TrainingConfig(**config._training(v, t, K, n, c, a)) for v, t, a, K, n, c in group]
        trained = train_encoders(
            x, cfgs, runs=config.runs, seed=np.random.default_rng([config.seed, g])
        )
        for i, job in enumerate(group):
            runs[job] = trained[i * config.runs : (i + 1) * config.runs]
    rng = np.random.default_rng([config.seed, len(jobs)])
    grid, snapshots, sizes = [], [], []
    for i, job in enumerate(jobs):
        tau, K, cps = job[1], job[3], job[5]
        rs = runs[job]
        taus = np.array([r.final_temperature for r in rs])
        at = [r.checkpoints[config.steps] if cps else r.encoder for r in rs]
        history = tuple(read_only(np.stack([getattr(r, k)[: config.steps] for r in rs], axis=1))
                        for k in ("losses", "temperatures"))  # fmt: skip
        detail = "full" if i == 0 or config.all_labels else "grid"
        if tau == "learned" and not config.probe_learned:
            detail = "bound"
        target = grid if K == config.batch_size else sizes
        target.append(_record(job, config.steps, at, taus, history, config, rng, detail))
        for c in (c for c in cps if c != config.steps):
            encs = [r.checkpoints[c] for r in rs]
            light = "full" if config.all_labels else "snapshot"
            snapshots.append(_record(job, c, encs, taus, (None, None), config, rng, light))
    baselines, raw_C = _baselines(config)
    records = tuple(grid + snapshots + sizes)
    return Result(baselines, raw_C, records, time.perf_counter() - t0, config)


def _summary(values: dict) -> dict:
    """Median and quartiles of each metric, as the JSON has them."""
    out = {}
    for k, v in values.items():
        q25, q50, q75 = np.quantile(v, [0.25, 0.5, 0.75])
        out.update({k: float(q50), f"{k}_q25": float(q25), f"{k}_q75": float(q75)})
    return out


def _results(r: Result) -> dict:
    """The JSON-able results of ``reproduce digits --json`` (unrounded)."""
    c = r.config
    runs = []
    for rec in r.records:
        row = {"views": rec.views, "tau": rec.tau, "batch_size": rec.batch_size,
               "steps": rec.steps, "bound_batch_size": c.bound_batch_size}  # fmt: skip
        row.update(_summary(rec.values))
        if rec.final_taus is not None:
            row.update({f"final_{k}": v for k, v in _summary({"tau": rec.final_taus}).items()})
            row["initial_tau"] = rec.start
        runs.append(row)
    baselines = {name: {k: float(np.median(v)) for k, v in b.items()}
                 for name, b in r.baselines.items()}  # fmt: skip
    for k, v in r.baselines["random"].items():
        baselines["random"].update({f"{k}_q25": float(np.quantile(v, 0.25)),
                                    f"{k}_q75": float(np.quantile(v, 0.75))})  # fmt: skip
    baselines["raw"]["C"] = dict(r.raw_C)
    return {
        "seeds": {"seed": c.seed, "runs": c.runs},
        "seconds": r.seconds,
        "baselines": baselines,
        "runs": runs,
        "protocol": {
            "sizes": list(c.sizes), "steps": c.steps, "batch_size": c.batch_size,
            "views": {k: vars(v) for k, v in VIEWS.items()}, "probe_C": c.probe_C,
            "draws": [list(d) for d in c.draws], "knn_k": c.knn_k,
            "bound_rounds": c.bound_rounds, "compute_dtype": c.compute_dtype,
        },
    }  # fmt: skip


def _tau_text(rec: Record) -> str:
    if rec.final_taus is None:
        return f"{rec.tau:g}"
    return f"learned {rec.start:g}->{np.median(rec.final_taus):.4f}"


def tables(r: Result) -> str:
    """The baselines and the grid, medians over the runs."""
    c = r.config
    base = [["raw pixels", *(f"{np.median(r.baselines['raw'][k]):.3f}"
                             for k in ("probe_1", "probe_5", "probe_all", "knn"))]]  # fmt: skip
    base.append(
        [
            "random encoder",
            *(
                f"{np.median(r.baselines['random'][k]):.3f}"
                for k in ("probe_1", "probe_5", "probe_all", "knn")
            ),
        ]
    )
    lines = [
        f"Handwritten digits: {c.runs} runs per configuration (medians), encoder "
        f"{'-'.join(map(str, c.sizes))}, held-out bound in batches of K = {c.bound_batch_size}"
        f" (N: the training batch; best tau: chosen on the same test pairs, not held out)",
        format_table(["baseline", "probe 1/class", "probe 5/class", "probe all", "kNN"], base),
        f"(raw pixels: the best C of {list(c.raw_Cs)} on the test images, {dict(r.raw_C)})",
        "",
    ]
    rows = []
    shown = ("probe_1", "probe_5", "probe_all", "knn", "bound", "best_tau", "alignment",
             "uniformity")  # fmt: skip
    for rec in r.records:
        cells = [f"{rec.median(k):{'.4f' if k == 'best_tau' else '.3f'}}" if k in rec.values
                 else "-" for k in shown]  # fmt: skip
        rows.append([rec.views, _tau_text(rec), rec.batch_size, rec.steps, *cells])
    headers = ["views", "tau", "N", "steps", "p 1", "p 5", "p all", "kNN", "bound", "best tau",
               "align", "unif"]  # fmt: skip
    fmts = ["", "", "d", "d", *[""] * len(shown)]
    lines.append(format_table(headers, rows, fmts))
    return "\n".join(lines)


def _get(r: Result, views, tau, **kw):
    try:
        return r.record(views, tau, **kw)
    except KeyError:
        return None


def _cap_check(r: Result) -> Check:
    from ..caps import attainable_cosine_cap

    K = r.config.bound_batch_size
    worst = max(float(np.max(rec.values["bound"])) - (
        math.log(K) if rec.final_taus is not None else attainable_cosine_cap(K, rec.tau))
        for rec in r.records)  # fmt: skip
    return Check(
        "no held-out bound exceeds the attainable cap of its temperature (log K for a learned one)",
        worst <= 0.0,
        f"largest bound minus its cap {worst:.4f}",
    )


def _feature_checks(r: Result) -> list[Check]:
    """The shift views' encoders against the baselines."""
    main, out = _get(r, "shift", r.config.long_tau), []
    if main is None:
        return out
    rnd, raw = r.baselines["random"], r.baselines["raw"]
    for p in ("probe_1", "probe_5"):
        out.append(Check(f"shift views beat a random encoder on {p}",
                         main.median(p) > float(np.median(rnd[p])),
                         f"{main.median(p):.3f} > {np.median(rnd[p]):.3f}"))  # fmt: skip
    long = _get(r, "shift", r.config.long_tau, steps=r.config.long_steps)
    if long is not None and long is not main:
        gap = float(raw["probe_5"][0]) - long.median("probe_5")
        ok = gap <= RAW_GAP  # a point or two either side is the draw's: not a >= coin flip
        out.append(Check(f"shift views, {long.steps} steps: the 5-label probe no more "
                         f"than {RAW_GAP:g} below the best-tuned raw pixels'", ok,
                         f"{long.median('probe_5'):.3f} >= {raw['probe_5'][0]:.3f} - "
                         f"{RAW_GAP:g}"))  # fmt: skip
    out.append(Check("shift views beat the best-tuned raw pixels with 1 label per class",
                     main.median("probe_1") > float(raw["probe_1"][0]),
                     f"{main.median('probe_1'):.3f} > {raw['probe_1'][0]:.3f}"))  # fmt: skip
    return out


def _disconnect_checks(r: Result) -> list[Check]:
    """Noise views against shift views, and the noise views' training length."""
    c, out = r.config, []
    main, noise = _get(r, "shift", c.long_tau), _get(r, "noise", c.long_tau)
    if main is not None and noise is not None:
        m, n = main.median, noise.median
        ok = n("bound") > m("bound") and n("probe_5") < m("probe_5")
        out.append(Check("noise views: a higher held-out bound and a worse 5-label probe than "
                         "shift views", ok, f"bound {n('bound'):.3f} > {m('bound'):.3f}, "
                         f"probe {n('probe_5'):.3f} < {m('probe_5'):.3f}"))  # fmt: skip
    early = _get(r, "noise", c.long_tau, steps=c.checkpoints[0])
    late = _get(r, "noise", c.long_tau, steps=c.long_steps)
    if early is not None and late is not None and early is not late:
        e, f = early.median, late.median
        ok = f("bound") > e("bound") and f("probe_5") < e("probe_5")
        out.append(Check(f"noise views, {early.steps} to {late.steps} steps: the bound rises, "
                         "the 5-label probe falls", ok,
                         f"bound {e('bound'):.3f} -> {f('bound'):.3f}, "
                         f"probe {e('probe_5'):.3f} -> {f('probe_5'):.3f}"))  # fmt: skip
    return out


def _temperature_checks(r: Result) -> list[Check]:
    """A large fixed temperature, and where a learned one ends."""
    c, out = r.config, []
    for views in VIEWS:
        small, large = _get(r, views, c.long_tau), _get(r, views, 0.5)
        if small is not None and large is not None:
            ok = large.median("bound") < small.median("bound")
            out.append(Check(f"{views} views: tau = 0.5 gives a lower bound than tau = "
                             f"{c.long_tau:g}", ok, f"{large.median('bound'):.3f} < "
                             f"{small.median('bound'):.3f}"))  # fmt: skip
    for start in (CLIP_START, 0.5):
        rec = _get(r, "shift", "learned", start=start)
        if rec is not None:
            out.append(_tracks_check(rec.final_taus, rec, f"shift views, tau learned from "
                                     f"{start:g}: ends within 25% of"))  # fmt: skip
    fixed = _get(r, "shift", 0.5)
    if fixed is not None:  # the control: the same test must reject a fixed temperature
        ratio = _tracking_ratio(np.full(c.runs, 0.5), fixed)
        out.append(Check("shift views, fixed tau = 0.5 (the control): NOT within 25% of the "
                         "best tau of its held-out cosines",
                         abs(math.log(ratio)) >= math.log(TRACKING_FACTOR),
                         f"fixed / best = {ratio:.3f}"))  # fmt: skip
    noise_l = _get(r, "noise", "learned")
    if noise_l is not None:
        clip = 1.0 / TrainingConfig().max_logit_scale
        final = float(np.median(noise_l.final_taus))
        out.append(Check("noise views: the learned tau ends within 25% of the clip 1/100",
                         final < TRACKING_FACTOR * clip,
                         f"median final tau {final:.4f}"))  # fmt: skip
    return out


def _tracking_ratio(taus: np.ndarray, rec: Record) -> float:
    """The median over the runs of tau over the best tau of the run's held-out cosines."""
    return float(np.median(np.asarray(taus) / rec.values["best_tau"]))


def _tracks_check(taus, rec: Record, what: str) -> Check:
    ratio = _tracking_ratio(taus, rec)
    ok = abs(math.log(ratio)) < math.log(TRACKING_FACTOR)
    return Check(
        f"{what} the best tau of its held-out cosines", ok, f"learned / best = {ratio:.3f}"
    )


def checks(r: Result) -> list[Check]:
    """What must hold; a check is left out if the grid lacks the records it compares."""
    return [_cap_check(r), *_feature_checks(r), *_disconnect_checks(r), *_temperature_checks(r)]


def report(config: Config | None = None) -> Report:
    """``python -m infonce_lib reproduce digits``: results, tables and checks.

    Returns
    -------
    Report
        ``results``::

            {"seeds": {"seed", "runs"}, "seconds",
             "baselines": {"raw": {"probe_1", "probe_5", "probe_all", "knn", "C"},
                           "random": {"probe_1", "probe_5", "probe_all", "knn", and each
                                      with "_q25" and "_q75"}},
             "runs": [{"views", "tau" (a number or "learned"), "batch_size", "steps",
                       "bound_batch_size", and for each metric of METRICS its median and
                       "<metric>_q25", "<metric>_q75" over the runs ("probe_all" where
                       computed); for a learned tau "final_tau" (median, quartiles) and
                       "initial_tau", where it started}, ...],
             "protocol": {...}}

        ``bound`` is the held-out InfoNCE bound in nats (on the information between two
        views of a test image), ``probe_5`` the 5-label probe's accuracy.
    """
    r = run(config)
    return Report(results=_results(r), tables=tables(r), checks=checks(r))
