r"""Poole et al.'s staircase: estimators of mutual information trained side by side.

A 20-dimensional correlated Gaussian (:func:`~infonce_lib.sample_correlated_gaussian`), or
the same with ``y`` passed through a fixed invertible map and cubed, whose information
steps through 2, 4, 6, 8 and 10 nats; one critic per training objective (joint,
:class:`~infonce_lib.JointCritic`, or separable, :class:`~infonce_lib.SeparableCritic`),
trained by Adam on its own objective on fresh batches of 64 pairs, continuously across the
levels (Poole et al., 2019, as their Colab runs it), for several seeds. Every step first
records the estimate on the new batch (which the critic has not seen), then updates the
critic on it; a seed's estimate of a level is the mean over the level's last steps, and the
tables give the median and quartiles over seeds. Beside them, the optimal critic plugged in
without training (:func:`~infonce_lib.optimal_critic_estimates`).

Three protocols (:class:`Protocol`): ``"book"`` (the command's, at most 120 s on one core),
``"chapter"`` (chapter 4's, a few seconds) and ``"poole"`` (the Colab's, hours); each lists
how it differs from the Colab (:func:`deviations`).
"""

from __future__ import annotations

from ..report import Report
from ._bf_protocol import (
    PROTOCOLS,
    Protocol,
    StaircaseResult,
    add_arguments,
    checks,
    config_from_arguments,
    critic_table,
    deviations,
    header,
    run_protocol,
    summary,
    tables,
)

__all__ = [
    "CHAPTER",
    "NAME",
    "PROTOCOLS",
    "SUMMARY",
    "Config",
    "Protocol",
    "Result",
    "StaircaseResult",
    "add_arguments",
    "checks",
    "config_from_arguments",
    "critic_table",
    "deviations",
    "header",
    "report",
    "run",
    "run_protocol",
    "summary",
    "tables",
]

NAME = "bound-family"
SUMMARY = (
    "Poole et al.'s staircase: InfoNCE, NWJ, DV, JS, I_alpha, MINE and SMILE trained at "
    "batch 64, joint and separable critics, several seeds"
)
CHAPTER = "chapter 4"


#: The experiment template's names for the protocol, its result and its run.
Config = Protocol
Result = StaircaseResult
run = run_protocol


def report(config: Protocol | None = None) -> Report:
    """Run the staircase and return its results (the keys of :func:`summary`), tables (the
    header of :func:`deviations` and the medians) and checks."""
    if config is not None and not isinstance(config, Protocol):
        raise TypeError(
            f"config must be a bound_family.Protocol or None; got {type(config).__name__}"
        )
    res = run_protocol(config)
    return Report(results=summary(res), tables=tables(res), checks=checks(res))
