r"""Poole et al.'s staircase: five estimators of mutual information trained side by side.

A 20-dimensional correlated Gaussian (:func:`~infonce_lib.sample_correlated_gaussian`)
whose information steps through 2, 4, 6, 8 and 10 nats; one separable critic per estimator
(:class:`~infonce_lib.SeparableCritic`), trained by Adam on its own objective
(:func:`~infonce_lib.bound_and_score_grad`) on fresh batches of 64 pairs,
continuously across the levels (Poole et al., 2019, as their Colab runs it). Every step
first records the estimate on the new batch (which the critic has not seen), then updates
the critic on it; the estimates of the last quarter of each level give its mean and
standard deviation. Beside them, the optimal critic plugged in without training
(:func:`~infonce_lib.optimal_critic_estimates`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import as_int, as_positive_scalar, as_real_scalar
from ..bound_family import _GRADS, ESTIMATORS, optimal_critic_estimates
from ..critics import SeparableCritic
from ..limits import correlated_gaussian_rho
from ..optim import Adam
from ..report import Check, Report, format_table

__all__ = [
    "CHAPTER",
    "NAME",
    "SUMMARY",
    "Config",
    "Protocol",
    "Result",
    "StaircaseResult",
    "add_arguments",
    "checks",
    "config_from_arguments",
    "protocol_checks",
    "protocol_tables",
    "report",
    "run",
    "run_protocol",
    "summary",
    "tables",
]
from ._bf_protocol import (
    Protocol,
    StaircaseResult,
    add_arguments,
    config_from_arguments,
    run_protocol,
    summary,
)
from ._bf_protocol import checks as protocol_checks
from ._bf_protocol import tables as protocol_tables
from ._shared import as_config

NAME = "bound-family"
SUMMARY = "Poole et al.'s staircase: InfoNCE, NWJ, DV, JS and I_alpha trained at batch 64"
CHAPTER = "chapter 4"


@dataclass(frozen=True)
class Config:
    """The protocol; the defaults are the book's (Poole et al.'s staircase, shortened).

    Attributes
    ----------
    levels : tuple of float
        The true information of each level, in nats, in training order.
    dim : int
        Dimension of :math:`x` and of :math:`y`.
    batch_size : int
        :math:`K`, pairs per batch (``>= 3``).
    steps_per_level : int
        Adam steps (one fresh batch each) per level.
    tail : float
        Fraction of each level's steps whose estimates give its mean and sd, in (0, 1].
    alpha : float
        The weight of the batch average in :math:`I_\\alpha`, in [0, 1].
    hidden, embed, layers : int
        The separable critic's hidden width, embedding size and hidden layers per MLP.
    learning_rate : float
        Adam's step size.
    optimal_batches : int
        Fresh batches per level for the optimal critic's estimates.
    seed : int
        The one seed of the run.
    """

    levels: tuple[float, ...] = (2.0, 4.0, 6.0, 8.0, 10.0)
    dim: int = 20
    batch_size: int = 64
    steps_per_level: int = 500
    tail: float = 0.25
    alpha: float = 0.01
    hidden: int = 64
    embed: int = 32
    layers: int = 1
    learning_rate: float = 2e-3
    optimal_batches: int = 200
    seed: int = 0

    def __post_init__(self):
        if not isinstance(self.levels, tuple) or not self.levels:
            raise TypeError(f"levels must be a non-empty tuple of nats; got {self.levels!r}")
        for v in self.levels:
            as_positive_scalar(v, "levels[...]")
        as_int(self.dim, "dim", minimum=1)
        as_int(self.batch_size, "batch_size", minimum=3)
        steps = as_int(self.steps_per_level, "steps_per_level", minimum=1)
        t = as_positive_scalar(self.tail, "tail")
        if t > 1 or round(t * steps) < 2:
            raise ValueError(
                f"tail must be in (0, 1] and keep at least 2 steps of each level; got tail = "
                f"{t} of {steps} steps"
            )
        a = as_real_scalar(self.alpha, "alpha")
        if not 0.0 <= a <= 1.0:
            raise ValueError(f"alpha must be in [0, 1]; got {a}")
        for name in ("hidden", "embed"):
            as_int(getattr(self, name), name, minimum=1)
        as_int(self.layers, "layers", minimum=0)
        as_positive_scalar(self.learning_rate, "learning_rate")
        as_int(self.optimal_batches, "optimal_batches", minimum=2)
        as_int(self.seed, "seed", minimum=0)


@dataclass(frozen=True)
class Result:
    """What :func:`run` measured.

    Attributes
    ----------
    config : Config
    trace : dict of str to numpy.ndarray, shape (len(levels) * steps_per_level,)
        Each estimator's estimate on every fresh batch, before the update on it.
    mean, sd : dict of str to numpy.ndarray, shape (len(levels),)
        Mean and standard deviation (ddof = 1) of the last ``tail`` of each level's trace.
    optimal_mean, optimal_sd : dict of str to numpy.ndarray, shape (len(levels),)
        The same for the optimal critic, over ``optimal_batches`` batches per level.
    skipped : dict of str to int
        Steps whose gradient overflowed float64 (the update of that critic used zero).
    """

    config: Config
    trace: dict = field(repr=False)
    mean: dict
    sd: dict
    optimal_mean: dict
    optimal_sd: dict
    skipped: dict

    @property
    def log_k(self) -> float:
        """:math:`\\log K`, InfoNCE's ceiling."""
        return math.log(self.config.batch_size)

    @property
    def tail_steps(self) -> int:
        """Estimates per level behind each mean and sd."""
        return round(self.config.tail * self.config.steps_per_level)


def _estimate(name: str, F: np.ndarray, objective: np.ndarray) -> np.ndarray:
    """The estimate reported for ``name`` on scores F (1, K, K): the training objective,
    except for JS, whose critic is evaluated with NWJ at 1 + f."""
    if name != "js":
        return objective
    K = F.shape[-1]
    idx = np.arange(K)
    with np.errstate(over="ignore"):
        E = np.exp(F)
        off = (E.sum(axis=(-2, -1)) - E[..., idx, idx].sum(axis=-1)) / (K * (K - 1))
        return 1.0 + F[..., idx, idx].mean(axis=-1) - off


def _ascent_directions(F: np.ndarray, config: Config, estimates, dF, skipped) -> None:
    """Each estimator's value and the ascent direction of its own objective, in place."""
    zero_baseline = np.zeros((1, F.shape[-1]))
    for e, name in enumerate(ESTIMATORS):
        F3 = F[e : e + 1]
        if name == "alpha":
            obj, g = _GRADS[name](F3, log_baseline=zero_baseline, alpha=config.alpha)
        else:
            obj, g = _GRADS[name](F3)
        estimates[e] = _estimate(name, F3, obj)[0]
        if np.isfinite(g).all():
            dF[e] = -g[0]  # ascent on the objective
        else:
            dF[e] = 0.0
            skipped[e] += 1


def _train(config: Config, data_seed, critic_seed) -> tuple[np.ndarray, np.ndarray]:
    """Train one stack of critics through the staircase; the estimates at every step."""
    c = config
    d, K, S = c.dim, c.batch_size, c.steps_per_level
    data_rng = np.random.default_rng(data_seed)
    # One stack of five independent critics (one per estimator) sees every batch in one pass;
    # Adam is elementwise, so one optimiser on the stack is five independent optimisers.
    critic = SeparableCritic(
        d,
        d,
        hidden=c.hidden,
        embed=c.embed,
        layers=c.layers,
        copies=len(ESTIMATORS),
        seed=np.random.default_rng(critic_seed),
    )
    optimiser = Adam([critic.flat], lr=c.learning_rate)
    trace = np.empty((len(ESTIMATORS), len(c.levels) * S))
    skipped = np.zeros(len(ESTIMATORS), dtype=int)
    dF = np.empty((len(ESTIMATORS), K, K))
    t = 0
    for info in c.levels:
        rho = correlated_gaussian_rho(info, d)
        noise = math.exp(-info / d)  # sqrt(1 - rho^2), as 1 - rho^2 = e^{-2I/d}
        for _ in range(S):
            X = data_rng.standard_normal((K, d))
            Y = rho * X + noise * data_rng.standard_normal((K, d))
            F, cache = critic.forward(X, Y)
            _ascent_directions(F, c, trace[:, t], dF, skipped)
            grads = critic.backward(cache, dF)
            optimiser.step([np.concatenate([gr.ravel() for gr in grads])])
            t += 1
    return trace, skipped


def run(config: Config | None = None) -> Result:
    """Train the five critics through the staircase and evaluate the optimal critic.

    Examples
    --------
    >>> r = run(Config(levels=(2.0,), steps_per_level=8, optimal_batches=4))
    >>> sorted(r.mean), r.trace["nwj"].shape
    (['alpha', 'dv', 'infonce', 'js', 'nwj'], (8,))
    """
    c = as_config(config, Config, "bound_family")
    data_seed, critic_seed, optimal_seed = np.random.SeedSequence(c.seed).spawn(3)
    trace, skipped = _train(c, data_seed, critic_seed)
    trace = dict(zip(ESTIMATORS, trace, strict=True))
    skipped = dict(zip(ESTIMATORS, skipped.tolist(), strict=True))
    S, n_tail = c.steps_per_level, round(c.tail * c.steps_per_level)
    tails = {k: v.reshape(len(c.levels), S)[:, S - n_tail :] for k, v in trace.items()}
    opt_rng = np.random.default_rng(optimal_seed)
    optimal = [
        optimal_critic_estimates(
            info,
            dim=c.dim,
            batch_size=c.batch_size,
            n_batches=c.optimal_batches,
            alpha=c.alpha,
            seed=opt_rng,
        )
        for info in c.levels
    ]
    with np.errstate(invalid="ignore"):
        return Result(
            config=c,
            trace=trace,
            mean={k: v.mean(axis=1) for k, v in tails.items()},
            sd={k: v.std(axis=1, ddof=1) for k, v in tails.items()},
            optimal_mean={k: np.array([o[k].mean() for o in optimal]) for k in ESTIMATORS},
            optimal_sd={k: np.array([o[k].std(ddof=1) for o in optimal]) for k in ESTIMATORS},
            skipped=skipped,
        )


_LABELS = {"infonce": "InfoNCE", "nwj": "NWJ", "dv": "DV", "js": "JS", "alpha": "I_alpha"}


def tables(result: Result) -> str:
    """The trained and the optimal critics' mean (sd) per level, as text."""
    r = result
    headers = ["true I", *(_LABELS[k] for k in ESTIMATORS)]

    def rows(mean, sd):
        return [
            [f"{info:.0f}", *(f"{mean[k][i]:.2f} ({sd[k][i]:.2f})" for k in ESTIMATORS)]
            for i, info in enumerate(r.config.levels)
        ]

    c = r.config
    head = (
        f"Poole et al.'s staircase: d = {c.dim}, batch K = {c.batch_size} (log K = "
        f"{r.log_k:.3f}), {c.steps_per_level} Adam steps per level, I_alpha with alpha = "
        f"{c.alpha}"
    )
    trained = format_table(headers, rows(r.mean, r.sd))
    optimal = format_table(headers, rows(r.optimal_mean, r.optimal_sd))
    return (
        f"{head}\n\nTrained critics: mean (sd) over the last {r.tail_steps} fresh batches "
        f"of each level\n{trained}\n\nOptimal critic plugged in: mean (sd) over "
        f"{c.optimal_batches} batches per level\n{optimal}"
    )


def _trained_checks(result: Result) -> list[Check]:
    """Checks on the trained critics (against log K, each other and the optimal critic)."""
    r = result
    top = len(r.config.levels) - 1
    levels = np.array(r.config.levels)
    m, s, om, osd = r.mean, r.sd, r.optimal_mean, r.optimal_sd
    out = []
    over = m["infonce"] - r.log_k
    out.append(
        Check(
            "trained InfoNCE never above log K by more than its noise (2 sd) at any level",
            bool(np.all(over <= 2 * s["infonce"])),
            "mean - log K per level: " + ", ".join(f"{v:+.3f}" for v in over),
        )
    )
    ratio = s["nwj"][top] / s["infonce"][top]
    out.append(
        Check(
            "at the top level NWJ's sd is at least 5 times InfoNCE's",
            bool(ratio >= 5.0),
            f"{s['nwj'][top]:.3f} / {s['infonce'][top]:.3f} = {ratio:.1f}",
        )
    )
    gap = om["infonce"][top] - m["infonce"][top]
    out.append(
        Check(
            "at the top level the trained InfoNCE is within 0.5 nats of the optimal critic's, "
            "and both are more than 5 nats below the truth",
            bool(abs(gap) < 0.5 and max(om["infonce"][top], m["infonce"][top]) < levels[top] - 5),
            f"trained {m['infonce'][top]:.3f}, optimal {om['infonce'][top]:.3f}, "
            f"true {levels[top]:.0f}",
        )
    )
    below = [
        k for k in ("infonce", "nwj", "js", "alpha") if np.all(m[k] <= om[k] + 2 * (s[k] + osd[k]))
    ]
    out.append(
        Check(
            "no trained lower bound beats the optimal critic beyond noise (2 sd) at any level",
            len(below) == 4,
            "within: " + ", ".join(below),
        )
    )
    return out


def _optimal_checks(result: Result) -> list[Check]:
    """Checks on the optimal critic plugged in: NWJ unbiased and noisy, I_alpha less noisy."""
    r = result
    top = len(r.config.levels) - 1
    levels = np.array(r.config.levels)
    om, osd = r.optimal_mean, r.optimal_sd
    out = []
    z = (om["nwj"] - levels) / (osd["nwj"] / math.sqrt(r.config.optimal_batches))
    out.append(
        Check(
            "the optimal critic's NWJ is unbiased: within 4 standard errors of the truth at "
            "every level",
            bool(np.all(np.abs(z) < 4)),
            "z per level: " + ", ".join(f"{v:+.2f}" for v in z),
        )
    )
    growth = osd["nwj"][top] / osd["nwj"][0]
    out.append(
        Check(
            "the optimal critic's NWJ sd grows with I: top level at least 5 times the first",
            bool(growth >= 5.0),
            f"{osd['nwj'][top]:.3f} / {osd['nwj'][0]:.3f} = {growth:.1f}",
        )
    )
    out.append(
        Check(
            "I_alpha's optimal-critic sd at the top level is below NWJ's",
            bool(osd["alpha"][top] < osd["nwj"][top]),
            f"I_alpha {osd['alpha'][top]:.3f}, NWJ {osd['nwj'][top]:.3f}",
        )
    )
    return out


def checks(result: Result) -> list[Check]:
    """What the chapter asserts about the staircase."""
    return _trained_checks(result) + _optimal_checks(result)


def _results(result: Result) -> dict:
    r = result
    c = r.config
    return {
        "batch_size": c.batch_size,
        "levels": list(c.levels),
        "estimators": {k: {"mean": r.mean[k].tolist(), "sd": r.sd[k].tolist()} for k in ESTIMATORS},
        "optimal_critic": {
            k: {"mean": r.optimal_mean[k].tolist(), "sd": r.optimal_sd[k].tolist()}
            for k in ESTIMATORS
        },
        "protocol": {
            "dim": c.dim,
            "steps_per_level": c.steps_per_level,
            "tail_steps": r.tail_steps,
            "alpha": c.alpha,
            "critic": f"separable, {c.layers} hidden layer(s) of {c.hidden}, embedding {c.embed}",
            "learning_rate": c.learning_rate,
            "optimal_batches": c.optimal_batches,
            "seed": c.seed,
            "skipped_updates": r.skipped,
        },
    }


def report(config: Config | Protocol | None = None) -> Report:
    """Run the staircase and return its results, tables and checks.

    With a :class:`Config`, the single-seed staircase of :func:`run` (the chapter's); with
    ``None`` or a :class:`Protocol`, the command's: several seeds, both critics, the keys of
    :func:`summary`, the header of :func:`protocol_tables` and :func:`protocol_checks`.
    """
    if isinstance(config, Config):
        result = run(config)
        return Report(results=_results(result), tables=tables(result), checks=checks(result))
    if config is not None and not isinstance(config, Protocol):
        raise TypeError(
            f"config must be a bound_family.Config, a bound_family.Protocol or None; got "
            f"{type(config).__name__}"
        )
    res = run_protocol(config)
    return Report(results=summary(res), tables=protocol_tables(res), checks=protocol_checks(res))
