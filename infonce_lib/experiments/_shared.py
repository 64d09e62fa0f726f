"""Formatting helpers and checks shared by the experiments (no mathematics here)."""

from __future__ import annotations

import math

import numpy as np

from ..report import Check
from ..temperature import BETA_BOUNDS


def f4(v: float) -> str:
    """Four decimals, never '-0.0000'."""
    return f"{round(float(v), 4) + 0.0:.4f}"


def below(v: float, threshold: float) -> str:
    """A tiny round-off figure, printed the same on every machine: '< threshold'."""
    return f"< {threshold:.0e}" if abs(v) < threshold else f"{v:.1e}"


def as_config(config, cls, module: str):
    """``cls()``, the book's protocol, for ``None``; ``config`` if it is a ``cls``; else TypeError.

    The experiments' ``run`` and ``report`` default to ``None`` rather than ``Config()``: a
    default ``Config()`` would be built, and validated, when the module is imported, which
    every chapter that imports one experiment would wait for.
    """
    if config is None:
        return cls()
    if not isinstance(config, cls):
        raise TypeError(f"config must be a {module}.Config or None; got {type(config).__name__}")
    return config


def read_only(a) -> np.ndarray:
    """A float64 copy of ``a`` that cannot be written to (results are shared by a cache)."""
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def best_tau_line(tau: float, beta: float) -> str:
    """The line of a cosine table that gives the best temperature and how it was found."""
    lo, hi = BETA_BOUNDS
    return (
        f"best tau = {tau:.4f} (beta = {beta:.2f}; Newton's method on the concave bound, "
        f"beta in [{lo:g}, {hi:g}])"
    )


#: Round-off allowed when a computed batch value is compared with the attainable cap: the
#: cap is an exact bound, and the batch values of the cosine table stay far below it.
ATTAINABLE_CAP_TOL = 1e-12
_ATTAINABLE_CAP_TOL_TEXT = f"1e{round(math.log10(ATTAINABLE_CAP_TOL))}"  # "1e-12"


def cap_checks(max_minus_cap, best_max_minus_cap, max_minus_att, best_max_minus_att) -> list:
    """No batch of the cosine table exceeds either cap, at any temperature or the best.

    The score-range cap holds for any scores in [-1, 1], so exactly; the attainable cap of
    unit-norm embeddings holds too, up to ``ATTAINABLE_CAP_TOL`` of round-off. Both patch
    experiments assert these (:mod:`.gaussian_patches` and :mod:`.cosine_temperature`).
    """
    excess = max(float(np.max(max_minus_cap)), best_max_minus_cap)
    excess_att = max(float(np.max(max_minus_att)), best_max_minus_att)
    return [
        Check(
            "cosine critic: no batch exceeds the score-range cap, at any tau or the best "
            "(an illustration: it holds by construction for cosines)",
            excess <= 0.0,
            f"largest batch value - range cap {f4(excess)}",
        ),
        Check(
            "cosine critic: no batch exceeds the attainable cap of unit-norm embeddings "
            f"(round-off {_ATTAINABLE_CAP_TOL_TEXT}), at any tau or the best",
            excess_att <= ATTAINABLE_CAP_TOL,
            f"largest batch value - attainable cap {f4(excess_att)}",
        ),
    ]


def cosine_checks(infonce, best_infonce, optimal) -> list:
    """The other checks of the cosine table that both patch experiments assert: the best tau
    beats the table's, and the optimal critic beats the best cosine critic (the caps are
    :func:`cap_checks`)."""
    return [
        Check(
            "the best tau does at least as well as every tau of the table",
            bool(best_infonce >= np.max(infonce)),
            f"{best_infonce:.4f} >= {np.max(infonce):.4f}",
        ),
        Check(
            "the optimal critic beats the best cosine critic at the same K",
            optimal > best_infonce,
            f"{optimal:.4f} > {best_infonce:.4f}",
        ),
    ]
