"""Fuzz specifications for chapter 5's high-confidence bounds (infonce_lib.confidence).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import POS, Arr, Bad, Num, Spec, _sizes


def _batch_values(rng, shape, dims):
    # InfoNCE values of batches of 4 with scores in a range of 2: within [a, log K] for every
    # batch_size >= 2 and score_range >= 0 the specification may try (0 <= v <= 0.6 < log 2).
    return rng.uniform(0.0, 0.6, size=shape)


def _x_fisher_scaled(scale):
    """The bound depends on the pairs only through their correlation: X scaled by ``scale``
    and Y by ``1 / scale`` give the unscaled bound (to rounding of the rescaled sums)."""

    def run(rng):
        X, Y = il.sample_correlated_gaussian(40, 0.6, 3, rng)
        want = il.correlated_gaussian_confidence_bound(X, Y)
        got = il.correlated_gaussian_confidence_bound(scale * X, Y / scale)
        return [(got, want, 1e-12 * (1 + abs(want)))]

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "correlated_gaussian_confidence_bound": (
        Spec(
            il.correlated_gaussian_confidence_bound,
            dict(X=Arr(("n", "d")), Y=Arr(("n", "d")), delta=Num(POS, 0.05)),
            dims=_sizes(n=(2, 5), d=(2, 3)),
            bad=(
                Bad("delta of 1", lambda kw, d, r: {**kw, "delta": 1.0}, ("delta",)),
                Bad("Y equal to X", lambda kw, d, r: {**kw, "Y": kw["X"]}, ("X", "Y")),
                Bad("X all zeros", lambda kw, d, r: {**kw, "X": 0 * kw["X"]}, ("X",)),
            ),
        ),
    ),
    "infonce_confidence_bound": (
        Spec(
            il.infonce_confidence_bound,
            dict(
                values=Arr(("n",), _batch_values),
                batch_size=Num("int", 4, minimum=2),
                score_range=Num("nonneg", 2.0),
                delta=Num(POS, 0.05),
            ),
            dims=_sizes(n=(1, 5)),
            bad=(
                Bad(
                    "a value above log K",
                    lambda kw, d, r: {**kw, "values": np.append(kw["values"], math.log(4) + 0.1)},
                    ("values",),
                ),
                Bad("delta of 1", lambda kw, d, r: {**kw, "delta": 1.0}, ("delta",)),
            ),
        ),
    ),
    "infonce_value_range": (
        Spec(
            il.infonce_value_range,
            dict(batch_size=Num("int", 4, minimum=2), score_range=Num("nonneg", 2.0)),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "correlated_gaussian_confidence_bound": {
        "X times 1e-150, Y times 1e150": _x_fisher_scaled(1e-150),
        "X times 1e150, Y times 1e-150": _x_fisher_scaled(1e150),
    },
}


EXEMPT: dict[str, str] = {}
