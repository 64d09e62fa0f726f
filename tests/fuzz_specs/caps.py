"""Fuzz specifications and valid extremes for the mean-gap caps of infonce_lib.caps.

(The score-range and attainable caps and the optimiser are specified in bound_family.py and
temperature.py, where they were added first.) See tests/fuzzing.py for what a
specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import _SCORE_DIMS, POS, Arr, Bad, Num, Spec, _cosine_above_one, _cosines


def _x_population_cap(tau, K=16):
    # -log1p((K-1)/K * expm1(-1/tau)): log K for tiny tau, (K-1)/(K tau) for huge tau.
    def run(rng):
        want = -math.log1p((K - 1) / K * math.expm1(-1.0 / tau))
        return [(il.population_cosine_cap(K, tau), want, abs(want) * 1e-12)]

    return run


def _x_mean_gap_cap(tau, K=16):
    # -log1p((K-1)/K * expm1(-a)), a = g / tau, with Python's math (the exact identity
    # log K - log(1 + (K-1) e^-a)); for |a| > 700 the limits log K and log K/(K-1) + a.
    def run(rng):
        out = []
        for g in (-1.5, -0.25, 0.0, 0.5, 2.0):
            a = g / tau
            if a > 700:
                want = math.log(K)
            elif a < -700:
                want = math.log(K / (K - 1)) + a
            else:
                want = -math.log1p((K - 1) / K * math.expm1(-a))
            out.append((il.mean_gap_cap(K, tau, g), want, 1e-12 * abs(want)))
        return out

    return run


def _x_mean_gaps(rng):
    S = _cosines(rng, (2, 4, 4), {})
    got = il.mean_gaps(S)
    out = []
    for b in range(2):
        for i in range(4):
            negatives = math.fsum(S[b, i, j] for j in range(4) if j != i)
            out.append((got[b, i], S[b, i, i] - negatives / 3, 1e-15))
    return out


SPECS: dict[str, tuple[Spec, ...]] = {
    "population_cosine_cap": (
        Spec(
            il.population_cosine_cap,
            dict(batch_size=Num("int", 8, minimum=2), temperature=Num(POS, 0.5, array_ok=True)),
        ),
    ),
    "mean_gap_cap": (
        Spec(
            il.mean_gap_cap,
            dict(
                batch_size=Num("int", 8, minimum=2),
                temperature=Num(POS, 0.5, array_ok=True),
                mean_gap=Num("real", 0.5, array_ok=True),
            ),
            bad=(
                Bad(
                    "a negative gap over a subnormal temperature",
                    lambda kw, d, r: {**kw, "temperature": 5e-324, "mean_gap": -1.0},
                    ("temperature",),
                    expect="edge",
                ),
                Bad(
                    "shapes that do not broadcast",
                    lambda kw, d, r: {**kw, "temperature": np.ones(2), "mean_gap": np.ones(3)},
                    ("mean_gap",),
                ),
            ),
        ),
    ),
    "mean_gaps": (
        Spec(
            il.mean_gaps,
            dict(cosines=Arr(("B", "K", "K"), _cosines)),
            dims=_SCORE_DIMS,
            bad=(Bad("a cosine above 1", _cosine_above_one, ("cosines",)),),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "population_cosine_cap": {
        "tau 1e-8": _x_population_cap(1e-8),
        "tau 1e8": _x_population_cap(1e8),
    },
    "mean_gap_cap": {"tau 1e-8": _x_mean_gap_cap(1e-8), "tau 1e8": _x_mean_gap_cap(1e8)},
    "mean_gaps": {"unit scale": _x_mean_gaps},
}
