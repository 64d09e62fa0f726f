"""The command's staircase: several seeds, the joint and the separable critic, the book's
protocol or Poole et al.'s Colab's, the Gaussian or the cubic task (re-exported by
:mod:`.bound_family`)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validation import as_int, as_positive_scalar
from ..bound_family import correlated_gaussian_log_ratio, dv_bound, interpolated_bound
from ..bounds import infonce_bound, nwj_bound
from ..dv_variants import smile_bound
from ..limits import correlated_gaussian_rho, sample_correlated_gaussian
from ..published import POOLE_STAIRCASE
from ..report import Check, format_table
from ._staircase import SMILE_TAU, Setup, book_columns, chapter_columns, poole_columns, train

_P = POOLE_STAIRCASE.values  # the Colab's settings, quoted once in published.py
PROTOCOLS = ("book", "chapter", "poole")
CRITICS, TASKS = ("joint", "separable", "both"), ("gaussian", "cubic")

#: The three protocols. "poole" is the Colab's (vbmi_demo): concat and separable critics of
#: 2 hidden layers of 256 (embedding 32), a 2 x 512 baseline MLP, Keras's Adam (lr 5e-4,
#: eps 1e-7) and Glorot-uniform initialisation, float32, 4,000 steps per level. "book" is
#: the command's shortened one; "chapter" shortens it further for chapter 4's time budget
#: (a narrower joint critic, 40% of the steps, three seeds, five estimators).
_PROTOCOL = {
    "book": dict(
        joint=dict(hidden=96, layers=1, learning_rate=1e-2),
        separable=dict(hidden=64, layers=1, learning_rate=2e-3),
        embed=32, steps=50, first_extra=150, seeds=5, eps=1e-8, glorot=False,
        transpose_joint=False, columns=book_columns(0.01),
    ),
    "chapter": dict(
        joint=dict(hidden=64, layers=1, learning_rate=1e-2),
        separable=dict(hidden=64, layers=1, learning_rate=2e-3),
        embed=32, steps=20, first_extra=60, seeds=3, eps=1e-8, glorot=False,
        transpose_joint=False, columns=chapter_columns(0.01),
    ),
    "poole": dict(
        joint=dict(hidden=_P["hidden_width"], layers=_P["hidden_layers"],
                   learning_rate=_P["learning_rate"]),
        separable=dict(hidden=_P["hidden_width"], layers=_P["hidden_layers"],
                       learning_rate=_P["learning_rate"]),
        embed=32, steps=_P["steps_per_level"], first_extra=0, seeds=1,
        eps=_P["adam_epsilon"], glorot=True,
        transpose_joint=True, columns=poole_columns(),
    ),
}  # fmt: skip

_SINGLE_SAMPLE = ("nwj", "dv", "js", "mine", "smile", "tuba")
_NAMES = {"infonce": "InfoNCE", "nwj": "NWJ", "dv": "DV", "js": "JS", "alpha": "I_alpha",
          "mine": "MINE", "smile": "SMILE (tau = 5)"}  # fmt: skip


@dataclass(frozen=True)
class Protocol:
    """The command's staircase (``python -m infonce_lib reproduce bound-family``).

    Attributes
    ----------
    protocol : {"book", "chapter", "poole"}
        ``"book"``: the shortened protocol of the command (at most 120 s on one core);
        ``"chapter"``: chapter 4's, shorter still (a few seconds);
        ``"poole"``: Poole et al.'s Colab, faithfully (hours on one core).
    critic : {"joint", "separable", "both"}
    task : {"gaussian", "cubic"}
        The correlated Gaussian, or the same with ``y`` replaced by ``(y W)^3`` for a fixed
        random ``W`` (the same information; see ``infonce_lib.experiments._staircase.cubic_map``).
    estimators : tuple of str, optional
        Train and report only these columns of the protocol (by key, e.g.
        ``("infonce", "nwj", "smile")``); default all of them.
    seeds : int, optional
        Independent runs (data and initial weights); default 5 (book), 3 (chapter),
        1 (poole).
    steps_per_level : int, optional
        Adam steps per level; default 50 (book, plus 150 more at the first level, where
        the critics start from scratch), 20 (chapter, plus 60 more at the first), 4,000
        (poole).
    tail : float
        Fraction of each level's steps whose estimates make a seed's estimate.
    optimal_batches : int
        Batches per level for the optimal critic's values.
    seed : int
        The root seed.
    checkpoint : str, optional
        A directory: each run is saved there after every level and resumed from it.
    jobs : int
        Runs trained in parallel (processes).
    """

    protocol: str = "book"
    critic: str = "both"
    task: str = "gaussian"
    estimators: tuple[str, ...] | None = None
    seeds: int | None = None
    steps_per_level: int | None = None
    tail: float = 0.25
    optimal_batches: int = 100
    seed: int = 0
    checkpoint: str | None = None
    jobs: int = 1

    def __post_init__(self):
        for name, allowed in (("protocol", PROTOCOLS), ("critic", CRITICS), ("task", TASKS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}; got {getattr(self, name)!r}")
        if self.estimators is not None:
            known = tuple(c.key for c in _PROTOCOL[self.protocol]["columns"])
            est = self.estimators
            if not isinstance(est, tuple) or not est or any(e not in known for e in est):
                raise ValueError(
                    f"estimators must be a non-empty tuple of the {self.protocol!r} "
                    f"protocol's estimators {known}; got {est!r}"
                )
            if len(set(est)) != len(est):
                raise ValueError(f"estimators must not repeat a name; got {est!r}")
        if self.seeds is not None:
            as_int(self.seeds, "seeds", minimum=1)
        if self.steps_per_level is not None:
            as_int(self.steps_per_level, "steps_per_level", minimum=2)
        t = as_positive_scalar(self.tail, "tail")
        if t > 1:
            raise ValueError(f"tail must be in (0, 1]; got {t}")
        as_int(self.optimal_batches, "optimal_batches", minimum=2)
        as_int(self.seed, "seed", minimum=0)
        as_int(self.jobs, "jobs", minimum=1)

    @property
    def n_seeds(self) -> int:
        return self.seeds if self.seeds is not None else _PROTOCOL[self.protocol]["seeds"]

    @property
    def kinds(self) -> tuple[str, ...]:
        return ("joint", "separable") if self.critic == "both" else (self.critic,)

    @property
    def level_steps(self) -> tuple[int, ...]:
        d = _PROTOCOL[self.protocol]
        steps = self.steps_per_level or d["steps"]
        extra = d["first_extra"] if self.steps_per_level is None else 0
        return (steps + extra,) + (steps,) * 4

    def setup(self, kind: str) -> Setup:
        """The trainer's setup for one critic kind."""
        d = _PROTOCOL[self.protocol]
        k = d[kind]
        columns = d["columns"]
        if self.estimators is not None:
            columns = tuple(c for c in columns if c.key in self.estimators)
        return Setup(
            columns=columns, kind=kind, levels=_P["levels"],
            steps=self.level_steps, dim=_P["dim"], batch_size=_P["batch_size"],
            learning_rate=k["learning_rate"],
            hidden=k["hidden"], layers=k["layers"], embed=d["embed"], eps=d["eps"],
            dtype="float32", task=self.task, tau=SMILE_TAU, mine_rate=0.01, glorot=d["glorot"],
            transpose_joint=d["transpose_joint"], baseline_hidden=_P["baseline_width"],
            baseline_layers=_P["baseline_layers"],
        )  # fmt: skip


def deviations(p: Protocol) -> list[str]:
    """How the protocol differs from Poole et al.'s Colab, item by item."""
    if p.protocol == "poole":
        out = [
            "none in architecture, optimiser, learning rate or steps (the Colab's protocol); "
            "the optimal critic's values replace its TNCE column",
            "estimators "
            + ", ".join(c.key for c in p.setup(p.kinds[0]).columns)
            + " (the Colab: NWJ, TUBA, InfoNCE, JS, I_alpha at three alphas, TNCE)",
            "the first level has exactly 4,000 steps (the Colab's schedule spends its first "
            "step at I = 0 and rounds the level boundaries)",
            "NumPy in float32 with hand-written gradients instead of TensorFlow",
        ]
    else:
        b = _PROTOCOL[p.protocol]
        keys = [c.key for c in p.setup(p.kinds[0]).columns]
        names = ", ".join(_NAMES[k] for k in keys)
        out = [
            f"joint (concat) critic {b['joint']['layers']} hidden layer of "
            f"{b['joint']['hidden']} (the Colab: 2 x 256), learning rate "
            f"{b['joint']['learning_rate']:g} (5e-4)",
            f"separable critic {b['separable']['layers']} hidden layer of "
            f"{b['separable']['hidden']}, embedding {b['embed']} (2 x 256, embedding 32), "
            f"learning rate {b['separable']['learning_rate']:g} (5e-4)",
            f"{p.level_steps[1]} Adam steps per level, {p.level_steps[0]} at the first "
            "(4,000 per level)",
            "He-normal initial weights, output layer x 0.3, Adam eps 1e-8 (Keras: Glorot-"
            "uniform, eps 1e-7); float32 weights, passes and Adam, estimates in float64 "
            "(TensorFlow: float32 throughout)",
            f"estimators {names} (the Colab: NWJ, TUBA, InfoNCE, JS, I_alpha at alpha "
            "= 0.01, 0.5, 0.99, and TNCE)",
        ]
        if "alpha" in keys:
            out.append(
                "I_alpha at alpha = 0.01 only, with a constant baseline a = 1 (the Colab: "
                "a learned 2 x 512 baseline)"
            )
        if "js" in keys:
            out.append("JS reported as NWJ of 1 + f (the Colab: NWJ of f, 1/e below at the "
                       "JS optimum)")  # fmt: skip
        out += [
            "the concat critic's scores in the book's convention F[i, j] = f(x_j, y_i) (the "
            "Colab's concat critic returns the transpose)",
            f"{p.n_seeds} seeds, medians and quartiles over seeds (the Colab: one run)",
        ]
    if p.task == "cubic":
        out.append(
            "task: y replaced by (y W)^3, W a fixed random 20 x 20 matrix with entries of "
            "variance 1/d (our reading of the paper's Fig. 2, whose W has standard normal "
            "entries, a scale sqrt(d) larger before the cube); the stored Colab has no such task"
        )
    return out


def _optimal(p: Protocol, columns) -> dict[str, np.ndarray]:
    """Each column's estimate with the optimal critic log r (no training), per level."""
    rng = np.random.default_rng([p.seed, 10**6])
    K, d, n = 64, 20, p.optimal_batches
    out = {c.key: np.empty(5) for c in columns}
    for li, info in enumerate((2.0, 4.0, 6.0, 8.0, 10.0)):
        rho = correlated_gaussian_rho(info, d)
        X, Y = sample_correlated_gaussian(n * K, rho, d, rng)
        R = correlated_gaussian_log_ratio(X.reshape(n, K, d), Y.reshape(n, K, d), rho)
        for c in columns:
            if c.train == "infonce":
                v = infonce_bound(R)
            elif c.train in ("dv", "mine"):
                v = dv_bound(R)
            elif c.report == "smile":
                v = smile_bound(R, SMILE_TAU)
            elif c.report == "nwj_f":
                v = nwj_bound(R)
            elif c.train == "alpha":
                v = interpolated_bound(R, 0.0, c.alpha)
            else:  # NWJ, TUBA with a = p(y), JS as NWJ of 1 + f: all NWJ at 1 + log r
                v = nwj_bound(1.0 + R)
            out[c.key][li] = v.mean()
    return out


def _one(args):
    p, kind, s = args
    data, critic = np.random.SeedSequence([p.seed, s]).spawn(2)
    ck = None
    if p.checkpoint is not None:
        Path(p.checkpoint).mkdir(parents=True, exist_ok=True)
        ck = Path(p.checkpoint) / f"{p.protocol}-{p.task}-{kind}-seed{s}.pkl"
    run = train(p.setup(kind), data, critic, ck)
    return kind, s, run.trace, run.skipped


@dataclass(frozen=True)
class StaircaseResult:
    """What :func:`run_protocol` measured.

    ``estimates[kind][col]`` and ``within_sd[kind][col]`` have shape (seeds, levels): each
    seed's mean and standard deviation over the last ``tail`` of each level;
    ``traces[kind]`` (seeds, columns, steps) every estimate; ``optimal[col]`` the optimal
    critic's mean per level; ``seconds`` the wall time and ``cpu_seconds`` the CPU time.
    """

    protocol: Protocol
    columns: tuple[str, ...]
    estimates: dict
    within_sd: dict
    traces: dict = field(repr=False)
    optimal: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    @property
    def levels(self) -> tuple[float, ...]:
        return (2.0, 4.0, 6.0, 8.0, 10.0)

    def median(self, kind: str, col: str) -> np.ndarray:
        return np.median(self.estimates[kind][col], axis=0)


def _cpu() -> float:
    """CPU seconds of this process and its ended child processes (this process only where the
    ``resource`` module is missing: Windows, and Python in the browser)."""
    try:
        import resource

        usage = resource.getrusage
    except (ImportError, AttributeError):  # Pyodide's resource module has no getrusage
        return time.process_time()
    a, b = usage(resource.RUSAGE_SELF), usage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def run_protocol(config: Protocol | None = None) -> StaircaseResult:
    """Train every (critic kind, seed) run of the protocol and summarise each level
    (``None``: the command's protocol, ``Protocol()``)."""
    p = config or Protocol()
    t0, c0 = time.perf_counter(), _cpu()
    units = [(p, kind, s) for kind in p.kinds for s in range(p.n_seeds)]
    if p.jobs > 1:
        # Imported here: the browser's Python (Pyodide) has no process pool, and every
        # chapter that imports the experiments must still run there.
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(p.jobs) as pool:
            done = list(pool.map(_one, units))
    else:
        done = [_one(u) for u in units]
    cols = tuple(c.key for c in p.setup(p.kinds[0]).columns)
    steps = np.array(p.level_steps)
    ends = np.cumsum(steps)
    tails = np.maximum(2, np.round(p.tail * steps).astype(int))
    est, sd, traces, skipped = {}, {}, {}, {}
    for kind in p.kinds:
        runs = sorted((s, tr, sk) for k, s, tr, sk in done if k == kind)
        traces[kind] = np.stack([tr for _, tr, _ in runs])
        skipped[kind] = dict(
            zip(cols, np.sum([sk for *_, sk in runs], axis=0).tolist(), strict=True)
        )
        parts = [traces[kind][:, :, e - n : e] for e, n in zip(ends, tails, strict=True)]
        with np.errstate(invalid="ignore", over="ignore"):
            m = np.stack([q.mean(axis=-1) for q in parts], axis=-1)
            v = np.stack([q.std(axis=-1, ddof=1) for q in parts], axis=-1)
        est[kind] = {c: m[:, i] for i, c in enumerate(cols)}
        sd[kind] = {c: v[:, i] for i, c in enumerate(cols)}
    optimal = _optimal(p, p.setup(p.kinds[0]).columns)
    return StaircaseResult(
        protocol=p, columns=cols, estimates=est, within_sd=sd, traces=traces,
        optimal=optimal, skipped=skipped, seconds=time.perf_counter() - t0,
        cpu_seconds=_cpu() - c0,
    )  # fmt: skip


def summary(result: StaircaseResult) -> dict:
    """The JSON results: batch_size, levels, critics -> kind -> estimators -> column ->
    median, q25, q75, sd (lists over levels), seeds, seconds."""
    r = result
    critics = {}
    for kind in r.protocol.kinds:
        ests = {}
        for c in r.columns:
            E = r.estimates[kind][c]
            with np.errstate(invalid="ignore"):
                ests[c] = {
                    "median": np.median(E, axis=0).tolist(),
                    "q25": np.quantile(E, 0.25, axis=0).tolist(),
                    "q75": np.quantile(E, 0.75, axis=0).tolist(),
                    "sd": np.median(r.within_sd[kind][c], axis=0).tolist(),
                    "per_seed": E.tolist(),
                }
        critics[kind] = {"estimators": ests, "skipped_updates": r.skipped[kind]}
    p = r.protocol
    return {
        "batch_size": 64,
        "levels": list(r.levels),
        "critics": critics,
        "optimal_critic": {c: v.tolist() for c, v in r.optimal.items()},
        "seeds": p.n_seeds,
        "seconds": r.seconds,
        "cpu_seconds": r.cpu_seconds,
        "protocol": {
            "name": p.protocol, "task": p.task, "steps_per_level": list(p.level_steps),
            "tail": p.tail, "seed": p.seed, "deviations_from_colab": deviations(p),
        },
        "notes": "sd is the median over seeds of each seed's sd within a level's tail",
    }  # fmt: skip


def header(p: Protocol) -> str:
    """The printed header: the protocol and how it differs from the Colab, item by item."""
    lines = [
        f"Poole et al.'s staircase, protocol {p.protocol!r}, task {p.task!r}: d = 20, K = 64 "
        f"(log K = {math.log(64):.3f}), levels 2, 4, 6, 8, 10 nats, {p.n_seeds} seed(s), "
        f"critic(s): {', '.join(p.kinds)}",
        "How this differs from Poole et al.'s Colab (vbmi_demo):",
    ]
    lines += [f"  {i}. {d}" for i, d in enumerate(deviations(p), 1)]
    return "\n".join(lines)


def _num(v: float) -> str:
    """Two decimals, or three significant digits once a value is beyond +-10,000."""
    return f"{v:.2f}" if abs(v) < 1e4 else f"{v:.2e}"


def critic_table(result: StaircaseResult, kind: str, quartiles: bool = True) -> str:
    """One critic's table: per estimator, the median over seeds of each seed's estimate per
    level, the quartiles over seeds on the row below (unless ``quartiles`` is False), and
    the optimal critic's value of the same estimator (rows short enough for a page)."""
    r = result
    if kind not in r.protocol.kinds:
        raise ValueError(f"kind must be one of the run's critics {r.protocol.kinds}; got {kind!r}")
    rows = []
    for c in r.columns:
        E = r.estimates[kind][c]
        lo, hi = np.quantile(E, 0.25, 0), np.quantile(E, 0.75, 0)
        rows.append([c, *(_num(v) for v in np.median(E, 0))])
        if quartiles:
            rows.append(
                ["  [q25, q75]", *(f"[{_num(a)}, {_num(b)}]" for a, b in zip(lo, hi, strict=True))]
            )
        rows.append(["  optimal", *(_num(v) for v in r.optimal[c])])
    heads = ["estimator", *(f"I = {v:g}" for v in r.levels)]
    return (
        f"{kind} critic: median over {r.protocol.n_seeds} seed(s) of a seed's estimate (its "
        f"mean\nover the last {r.protocol.tail:g} of a level)\n" + format_table(heads, rows)
    )


def tables(result: StaircaseResult) -> str:
    """The header, then per critic :func:`critic_table`, then the run's time."""
    r = result
    out = [header(r.protocol), *("\n" + critic_table(r, kind) for kind in r.protocol.kinds)]
    out.append(f"\nwall time {r.seconds:.1f} s, CPU time {r.cpu_seconds:.1f} s")
    return "\n".join(out)


def checks(result: StaircaseResult) -> list[Check]:
    """The command's checks (book protocol, Gaussian task, joint critic)."""
    r, p = result, result.protocol
    if p.protocol != "book" or p.task != "gaussian" or "joint" not in p.kinds:
        return []
    logk = math.log(64)
    nce = r.median("joint", "infonce")
    gap = r.optimal["infonce"][0] - nce[0]
    top = {c: r.median("joint", c)[-1] for c in r.columns if c in _SINGLE_SAMPLE}
    best = max(top, key=top.get)
    return [
        Check(
            "joint critic converged at I = 2: trained InfoNCE's median within 0.25 nats of "
            "the optimal critic's",
            bool(abs(gap) <= 0.25),
            f"trained {nce[0]:.3f}, optimal {r.optimal['infonce'][0]:.3f}",
        ),
        Check(
            "joint InfoNCE's median at most log K at every level (holds by construction: "
            "each batch value is at most log K)",
            bool(np.all(nce <= logk)),
            ", ".join(f"{v:.2f}" for v in nce) + f" <= {logk:.2f}",
        ),
        Check(
            "with the joint critic a single-sample estimator's median passes log K + 0.5 at I = 10",
            bool(top[best] > logk + 0.5),
            f"best {best} {top[best]:.2f} vs {logk + 0.5:.2f}",
        ),
    ]


def add_arguments(parser) -> None:
    """The command-line options of ``reproduce bound-family``."""
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="book",
        help="book: shortened, <= 120 s; chapter: chapter 4's, seconds; poole: the Colab's (hours)",
    )
    parser.add_argument("--critic", choices=CRITICS, default="both", help="default both")
    parser.add_argument(
        "--task", choices=TASKS, default="gaussian", help="cubic: y cubed after a linear map"
    )
    parser.add_argument(
        "--seeds", type=int, default=None, help="default 5 (book), 3 (chapter), 1 (poole)"
    )
    parser.add_argument("--steps", type=int, default=None, help="Adam steps per level")
    parser.add_argument(
        "--checkpoint",
        metavar="DIR",
        default=None,
        help="save each run after every level and resume from DIR",
    )
    parser.add_argument("--jobs", type=int, default=1, help="runs trained in parallel")  # fmt: skip


def config_from_arguments(args) -> Protocol:
    """The :class:`Protocol` that the options of :func:`add_arguments` describe."""
    return Protocol(
        protocol=args.protocol, critic=args.critic, task=args.task, seeds=args.seeds,
        steps_per_level=args.steps, checkpoint=args.checkpoint, jobs=args.jobs,
    )  # fmt: skip
