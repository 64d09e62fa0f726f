"""Fuzz specifications for the exact values of the family of bounds
(infonce_lib.bound_family_exact): NWJ's optimal-critic variance and I_alpha's cap.

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import infonce_lib as il
from tests.fuzzing import Bad, Fixed, Num, Spec, _rel


def _alpha(value):
    return Bad(f"alpha = {value}", lambda kw, d, r: {**kw, "alpha": value}, ("alpha",))


def _not_nan(out) -> None:  # documented: inf once the variance passes the largest float
    assert out >= 0 and not math.isnan(out), out


def _x_variance_small(info):
    """At tiny I, to first order: e^{2I} - 1 = 2I and the swap term's exponent
    2I - d log(1 + rho^2) = 2I - d rho^2, with rho^2 = 1 - e^{-2I/d} (both nearly 0)."""

    def run(rng):
        d, K = 4, 8
        rho2 = -math.expm1(-2 * info / d)
        want = d * rho2 / K + (2 * info + 2 * info - d * rho2) / (K * (K - 1))
        got = il.nwj_optimal_variance(info, dim=d, batch_size=K)
        return [(got, want, _rel(want, 1e-6))]

    return run


def _x_variance_large(info):
    def run(rng):
        d, K = 20, 64
        rho2 = -math.expm1(-2 * info / d)
        log_want = 2 * info + math.log1p((1 + rho2) ** -d) - math.log(K * (K - 1))
        got = il.nwj_optimal_variance(info, dim=d, batch_size=K)
        return [(math.log(got), log_want, 1e-12 * log_want)]

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "nwj_optimal_variance": (
        Spec(
            il.nwj_optimal_variance,
            dict(
                information=Num("nonneg", 1.0),
                dim=Num("int", 3, minimum=1),
                batch_size=Num("int", 8, minimum=2),
            ),
            check=_not_nan,
        ),
    ),
    "interpolated_bound_cap": (
        Spec(
            il.interpolated_bound_cap,
            dict(batch_size=Num("int", 8, minimum=3), alpha=Fixed(0.5)),
            bad=(_alpha(-0.1), _alpha(1.5), _alpha(float("nan")), _alpha("0.5")),
        ),
    ),
}

EXTREMES: dict[str, dict[str, Callable]] = {
    "nwj_optimal_variance": {
        "information 1e-8": _x_variance_small(1e-8),
        "information 356 (e^{2I} past float64)": _x_variance_large(356.0),
    },
}
