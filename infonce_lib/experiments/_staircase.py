"""The trainer behind the bound-family staircase: one stack of critics, one per training objective,
through the levels of information, for either critic and either protocol.

Private to :mod:`.bound_family` (the mathematics is the library's: the bounds and their
gradients in :mod:`infonce_lib.bound_family` and :mod:`infonce_lib.dv_variants`, the
critics in :mod:`infonce_lib.critics`, Adam in :mod:`infonce_lib.optim`).
"""

from __future__ import annotations

import math
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..bound_family import _GRADS
from ..bounds import nwj_bound
from ..critics import (
    JointCritic,
    SeparableCritic,
    _backward,
    _flat_views,
    _forward,
    _views_of,
    mlp_init,
)
from ..dv_variants import MineGradient, smile_bound
from ..limits import correlated_gaussian_rho
from ..optim import Adam
from ..published import POOLE_STAIRCASE


@dataclass(frozen=True)
class Column:
    """One estimator of the staircase: the objective its critic ascends, the value it
    reports, its alpha (I_alpha only) and whether it has a learned baseline a(y)."""

    key: str
    train: str  # "infonce", "nwj", "dv", "js", "tuba", "alpha", "mine"
    report: str  # "objective", "nwj_1pf" (NWJ of 1 + f), "nwj_f" (NWJ of f), "smile"
    alpha: float | None = None
    learned_baseline: bool = False


def book_columns(alpha: float) -> tuple[Column, ...]:
    """The book's staircase: InfoNCE, NWJ, DV, JS, I_alpha (constant baseline), MINE, SMILE."""
    return (
        Column("infonce", "infonce", "objective"),
        Column("nwj", "nwj", "objective"),
        Column("dv", "dv", "objective"),
        Column("js", "js", "nwj_1pf"),
        Column("alpha", "alpha", "objective", alpha=alpha),
        Column("mine", "mine", "objective"),
        Column("smile", "js", "smile"),
    )


def chapter_columns(alpha: float) -> tuple[Column, ...]:
    """Chapter 4's staircase: InfoNCE, NWJ, JS, I_alpha (constant baseline), SMILE."""
    keep = ("infonce", "nwj", "js", "alpha", "smile")
    return tuple(c for c in book_columns(alpha) if c.key in keep)


def trainers(columns: tuple[Column, ...]) -> tuple[tuple[Column, ...], list[int]]:
    """The critics a staircase trains, and which one each column reads.

    Columns that train the same objective share one critic: SMILE is read from the critic
    trained on the JS objective, as Song and Ermon (2020) define it, and JS's own estimate
    (NWJ at 1 + f) is read from the same critic.
    """
    out: list[Column] = []
    keys: list[tuple] = []
    copy_of = []
    for c in columns:
        key = (c.train, c.alpha, c.learned_baseline)
        if key not in keys:
            keys.append(key)
            out.append(c)
        copy_of.append(keys.index(key))
    return tuple(out), copy_of


def _sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def poole_columns() -> tuple[Column, ...]:
    """The Colab's estimators: NWJ, TUBA and the three I_alpha with a learned baseline
    (alpha = sigmoid(-5), 1/2, sigmoid(5), labelled 0.01, 0.50, 0.99 there), InfoNCE, JS
    (reported as the Colab's NWJ of f)."""
    return (
        Column("nwj", "nwj", "objective"),
        Column("tuba", "tuba", "objective", learned_baseline=True),
        Column("infonce", "infonce", "objective"),
        Column("js", "js", "nwj_f"),
        *(
            Column(f"alpha_{label}", "alpha", "objective", alpha=_sigmoid(logit),
                   learned_baseline=True)
            for label, logit in zip(("0.01", "0.50", "0.99"),
                                    POOLE_STAIRCASE.values["alpha_logits"], strict=True)
        ),
    )  # fmt: skip


@dataclass(frozen=True)
class Setup:
    """Everything one training run needs (one critic kind, one seed)."""

    columns: tuple[Column, ...]
    kind: str  # "joint" or "separable"
    levels: tuple[float, ...]
    steps: tuple[int, ...]  # per level
    dim: int
    batch_size: int
    learning_rate: float
    hidden: int
    layers: int
    embed: int
    eps: float
    dtype: str
    task: str  # "gaussian" or "cubic"
    tau: float
    mine_rate: float
    glorot: bool  # Keras's default initialisation (the Colab's) instead of He's
    transpose_joint: bool  # the Colab's concat critic returns F^T
    baseline_hidden: int
    baseline_layers: int


#: SMILE's clipping threshold tau (Song & Ermon, 2020, report 1, 5 and infinity).
SMILE_TAU = 5.0


def cubic_map(dim: int) -> np.ndarray:
    """The fixed random linear map of the non-Gaussian task (seed 0, Gaussian entries
    scaled by 1/sqrt(d)); invertible with probability 1, so I(X; Y) is unchanged."""
    return np.random.default_rng(0).standard_normal((dim, dim)) / math.sqrt(dim)


def sample(rng, setup: Setup, info: float, W) -> tuple[np.ndarray, np.ndarray]:
    """One batch of the task at information ``info`` (x and the noise drawn together, as
    the Colab does)."""
    K, d = setup.batch_size, setup.dim
    rho = correlated_gaussian_rho(info, d)
    Z = rng.standard_normal((K, 2 * d))
    X, E = Z[:, :d], Z[:, d:]
    Y = rho * X + math.exp(-info / d) * E  # sqrt(1 - rho^2) = e^{-I/d}
    if setup.task == "cubic":
        Y = (Y @ W) ** 3
    return X, Y


def _glorot(params: list[np.ndarray], rng) -> None:
    """Keras's glorot_uniform for every weight matrix (zero biases), in place."""
    for W in params[::2]:
        n_in, n_out = W.shape[-2], W.shape[-1]
        lim = math.sqrt(6.0 / (n_in + n_out))
        W[...] = rng.uniform(-lim, lim, size=W.shape)
    for b in params[1::2]:
        b[...] = 0.0


class _Baseline:
    """A stack of MLPs log a(y) (one per column; unused for the others), its parameters
    in the critic's dtype."""

    def __init__(self, setup: Setup, copies: int, rng):
        sizes = [setup.dim, *[setup.baseline_hidden] * setup.baseline_layers, 1]
        stacks = [mlp_init(sizes, rng) for _ in range(copies)]
        params = [np.stack(ps) for ps in zip(*stacks, strict=True)]
        params = [p if i % 2 == 0 else p[:, None, :] for i, p in enumerate(params)]
        self.flat, self.params = _flat_views(params, setup.dtype)
        if setup.glorot:
            _glorot(self.params, rng)

    def __getstate__(self):
        return {"flat": self.flat, "shapes": [p.shape for p in self.params]}

    def __setstate__(self, state):
        self.flat = state["flat"]
        self.params = _views_of(self.flat, state["shapes"])

    def forward(self, Y):
        out, cache = _forward(self.params, Y.astype(self.flat.dtype))
        return out[..., 0].astype(np.float64), cache

    def backward(self, cache, d_b):
        grads, _ = _backward(self.params, cache, d_b[..., None].astype(self.flat.dtype),
                             need_input=False)  # fmt: skip
        return grads


def _make_critic(setup: Setup, copies: int, rng):
    common = dict(hidden=setup.hidden, layers=setup.layers, copies=copies, dtype=setup.dtype)
    d = setup.dim
    if setup.kind == "joint":
        critic = JointCritic(d, d, seed=rng, **common)
    else:
        critic = SeparableCritic(d, d, embed=setup.embed, seed=rng, **common)
    if setup.glorot:
        _glorot(critic.params, rng)
    return critic


class Run:
    """One training run, resumable level by level (its whole state pickles)."""

    def __init__(self, setup: Setup, data_seed, critic_seed):
        self.setup = setup
        n_col = len(setup.columns)
        self.trainers, self.copy_of = trainers(setup.columns)
        n_copies = len(self.trainers)
        critic_rng = np.random.default_rng(critic_seed)
        self.critic = _make_critic(setup, n_copies, critic_rng)
        flats = [self.critic.flat]
        self.baseline = None
        if any(c.learned_baseline for c in self.trainers):
            self.baseline = _Baseline(setup, n_copies, critic_rng)
            flats.append(self.baseline.flat)
        self.optimiser = Adam(flats, lr=setup.learning_rate, eps=setup.eps)
        self.data_rng = np.random.default_rng(data_seed)
        self.mine = MineGradient(setup.mine_rate)
        self.W = cubic_map(setup.dim) if setup.task == "cubic" else None
        self.trace = np.full((n_col, sum(setup.steps)), np.nan)
        self.skipped = np.zeros(n_col, dtype=int)
        self.levels_done = 0

    def _columns(self, F, log_b):
        """Each column's reported value, and each critic's ascent direction on its scores
        (and on its log-baseline, which enters every bound through F_ij - log a(y_i))."""
        values = np.empty(len(self.setup.columns))
        objective = np.empty(len(self.trainers))
        dF = np.zeros_like(F)
        mine = [k for k, c in enumerate(self.trainers) if c.train == "mine"]
        if mine:
            objective[mine], dF[mine] = self.mine(F[mine])
        for k, c in enumerate(self.trainers):
            if c.train == "mine":
                continue
            kw = {}
            if c.train in ("tuba", "alpha"):
                kw["log_baseline"] = (
                    log_b[k : k + 1] if c.learned_baseline else np.zeros((1, F.shape[-1]))
                )
            if c.train == "alpha":
                kw["alpha"] = c.alpha
            obj, g = _GRADS[c.train](F[k : k + 1], **kw)
            objective[k], dF[k] = obj[0], g[0]
        for e, c in enumerate(self.setup.columns):
            k = self.copy_of[e]
            values[e] = _report(c.report, F[k : k + 1], objective[k], self.setup.tau)
        return values, dF

    def step(self, t: int, info: float) -> None:
        s = self.setup
        X, Y = sample(self.data_rng, s, info, self.W)
        F, cache = self.critic.forward(X, Y)
        if s.transpose_joint and s.kind == "joint":
            F = np.swapaxes(F, -1, -2)
        log_b, b_cache = None, None
        if self.baseline is not None:
            log_b, b_cache = self.baseline.forward(Y)
        values, dF = self._columns(F, log_b)
        self.trace[:, t] = values
        bad = ~np.isfinite(dF).all(axis=(1, 2))
        if bad.any():
            dF[bad] = 0.0
            self.skipped += bad[self.copy_of]
        d_b = -dF.sum(axis=-1)  # ascent on log a(y_i): every bound depends on F_ij - log a(y_i)
        if s.transpose_joint and s.kind == "joint":
            dF = np.swapaxes(dF, -1, -2)
        with np.errstate(over="ignore", invalid="ignore"):
            parts = self.critic._unchecked_backward(cache, dF)
            if self.baseline is not None:
                mask = np.array([c.learned_baseline for c in self.trainers], dtype=float)[:, None]
                parts += self.baseline.backward(b_cache, d_b * mask)
        # A copy whose gradient is not finite, or would overflow Adam's second moment (g^2
        # beyond the dtype's range), skips this update as a copy with non-finite scores does;
        # else its moments would stay inf and freeze its parameters for good.
        limit = math.sqrt(np.finfo(self.critic.flat.dtype).max) / 10
        n = len(self.trainers)
        over = np.zeros(n, dtype=bool)
        with np.errstate(invalid="ignore"):
            for g in parts:
                over |= ~(np.abs(g.reshape(n, -1)).max(axis=1) <= limit)
        for g in parts:
            g[over] = 0.0
        self.skipped += (over & ~bad)[self.copy_of]
        n_critic = len(self.critic.params)
        grads = [-np.concatenate([g.ravel() for g in parts[:n_critic]])]
        if self.baseline is not None:
            grads.append(-np.concatenate([g.ravel() for g in parts[n_critic:]]))
        self.optimiser.step(grads)

    def run_level(self) -> None:
        s = self.setup
        info = s.levels[self.levels_done]
        t0 = sum(s.steps[: self.levels_done])
        for t in range(t0, t0 + s.steps[self.levels_done]):
            self.step(t, info)
        self.levels_done += 1


def _report(kind: str, F3: np.ndarray, objective: float, tau: float) -> float:
    if kind == "objective":
        return objective
    if kind == "smile":
        return float(smile_bound(F3, tau)[0])
    if kind == "nwj_f":  # the Colab's JS estimate: NWJ of f itself
        with np.errstate(over="ignore"):
            return float(nwj_bound(F3)[0]) if np.isfinite(F3).all() else -math.inf
    # NWJ of 1 + f: tight at the JS optimum f = log r
    K = F3.shape[-1]
    idx = np.arange(K)
    with np.errstate(over="ignore"):
        E = np.exp(F3[0])
        off = (E.sum() - E[idx, idx].sum()) / (K * (K - 1))
        return float(1.0 + F3[0, idx, idx].mean() - off)


def train(setup: Setup, data_seed, critic_seed, checkpoint: Path | None = None) -> Run:
    """Train through every level; with ``checkpoint``, resume from it and save it after
    each level (a run already complete there is returned as is)."""
    run = None
    if checkpoint is not None and checkpoint.exists():
        with checkpoint.open("rb") as fh:
            run = pickle.load(fh)
        if (
            run.setup != setup
            or not hasattr(run, "copy_of")
            or run.critic.flat.dtype != np.dtype(setup.dtype)
        ):  # another protocol, or a checkpoint from before critics were shared between
            # columns or before float32 critics kept float32 weights
            raise ValueError(f"checkpoint {checkpoint} holds another protocol; remove it")
    if run is None:
        run = Run(setup, data_seed, critic_seed)
    while run.levels_done < len(setup.levels):
        run.run_level()
        if checkpoint is not None:
            tmp = checkpoint.with_suffix(".tmp")
            with tmp.open("wb") as fh:
                pickle.dump(run, fh)
            tmp.replace(checkpoint)
    return run
