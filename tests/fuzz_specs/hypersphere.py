"""Fuzz specifications and valid extremes for the hypersphere (infonce_lib.hypersphere).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import scipy.special
import scipy.stats

import infonce_lib as il
from tests.fuzzing import (
    _LN2,
    POS,
    Arr,
    Bad,
    Num,
    Seed,
    Spec,
    _dot,
    _lse_tol,
    _rel,
    _sizes,
    _unit,
)
from tests.reference import logsumexp_list


def _x_limit(tau):
    def run(rng):
        Zx, Zy = _unit(rng, (2, 4, 3), {})
        n = 4
        align = -math.fsum(_dot(a, b) for a, b in zip(Zx, Zy, strict=True)) / n / tau
        unif = math.fsum(logsumexp_list([_dot(x, y) / tau for x in Zx]) for y in Zy) / n
        unif -= math.log(n)
        got = il.contrastive_loss_limit(Zx, Zy, tau)
        tol = _lse_tol(1.0 / tau)
        return [(got.alignment_term, align, tol), (got.uniformity_term, unif, tol)]

    return run


def _x_uniformity(t):
    def run(rng):
        Z = _unit(rng, (4, 3), {})
        sq = [math.fsum((a - b) ** 2 for a, b in zip(Z[i], Z[j], strict=True)) for i in range(4)
              for j in range(i + 1, 4)]  # fmt: skip
        want = logsumexp_list([-t * v for v in sq]) - math.log(len(sq))
        return [(il.uniformity(Z, t), want, _lse_tol(t * max(sq)))]

    return run


def _x_alignment(alpha):
    def run(rng):
        Zx = _unit(rng, (4, 3), {})
        Zy = _unit(rng, (4, 3), {})
        dist = [math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(x, y, strict=True)))
                for x, y in zip(Zx, Zy, strict=True)]  # fmt: skip
        want = math.fsum(d**alpha for d in dist) / 4
        return [(il.alignment(Zx, Zy, alpha), want, _rel(want, 1e-12))]

    return run


def _x_sphere(tau, m):
    def run(rng):
        k = 1.0 / tau
        if k < 1e-4:  # the power series: 0F1(; m/2; k^2/4) - 1 = k^2 / (2m) + ...
            z = k * k / 4
            want = z / (m / 2) + z * z / (2 * (m / 2) * (m / 2 + 1)) - (z / (m / 2)) ** 2 / 2
        elif m == 1:  # log cosh k
            want = k - _LN2 + math.log1p(math.exp(-2 * k))
        elif m == 2:  # log I_0(k)
            want = math.log(scipy.special.i0e(k)) + k
        else:  # m = 3: log(sinh k / k)
            want = k - math.log(2 * k) + math.log1p(-math.exp(-2 * k))
        return [(il.sphere_log_partition(m, tau), want, _rel(want, 1e-12))]

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "alignment": (
        Spec(
            il.alignment,
            dict(Zx=Arr(("n", "m")), Zy=Arr(("n", "m")), alpha=Num(POS, 2.0)),
            dims=_sizes(n=(1, 4), m=(1, 3)),
        ),
    ),
    "uniformity": (
        Spec(
            il.uniformity,
            dict(Z=Arr(("n", "m")), t=Num(POS, 2.0)),
            dims=_sizes(n=(2, 4), m=(1, 3)),
            bad=(Bad("one row", lambda kw, d, r: {**kw, "Z": np.ones((1, 2))}, ("Z",)),),
        ),
    ),
    "sphere_log_partition": (
        Spec(
            il.sphere_log_partition,
            dict(dim=Num("int", 3, minimum=1), temperature=Num(POS, 0.5)),
        ),
    ),
    "contrastive_loss_limit": (
        Spec(
            il.contrastive_loss_limit,
            dict(Zx=Arr(("n", "m"), _unit), Zy=Arr(("n", "m"), _unit), temperature=Num(POS, 0.5)),
            dims=_sizes(n=(2, 4), m=(1, 3)),
            bad=(
                Bad(
                    "one row",
                    lambda kw, d, r: {**kw, "Zx": np.ones((1, 2)), "Zy": np.ones((1, 2))},
                    ("Zx",),
                ),
            ),
        ),
    ),
    "sample_sphere_pairs": (
        Spec(
            il.sample_sphere_pairs,
            dict(
                n=Num("int", 3, minimum=1),
                dim=Num("int", 3, minimum=2),
                concentration=Num("nonneg", 1.0),
                noise=Num("nonneg", 0.1),
                seed=Seed(0),
            ),
        ),
    ),
    "warp_sphere": (
        Spec(
            il.warp_sphere,
            dict(Z=Arr(("n", "m"), _unit, f32=False), shift=Num("unit", 0.5)),
            dims=_sizes(n=(1, 4), m=(1, 3)),
            bad=(Bad("rows not unit", lambda kw, d, r: {**kw, "Z": 2 * kw["Z"]}, ("Z",)),),
        ),
    ),
    "unwarp_sphere": (
        Spec(
            il.unwarp_sphere,
            dict(W=Arr(("n", "m"), _unit, f32=False), shift=Num("unit", -0.5)),
            dims=_sizes(n=(1, 4), m=(1, 3)),
            bad=(Bad("rows not unit", lambda kw, d, r: {**kw, "W": 2 * kw["W"]}, ("W",)),),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "contrastive_loss_limit": {"tau 1e-8": _x_limit(1e-8), "tau 1e8": _x_limit(1e8)},
    "uniformity": {"t 1e-8": _x_uniformity(1e-8), "t 1e8": _x_uniformity(1e8)},
    "alignment": {"alpha 1e-8": _x_alignment(1e-8), "alpha 50": _x_alignment(50.0)},
    "sphere_log_partition": {
        f"dim {m}, tau {tau:g}": _x_sphere(tau, m) for m in (1, 2, 3) for tau in (1e-8, 1e8)
    },
}


EXEMPT: dict[str, str] = {
    "ContrastiveLimit": "result named tuple of contrastive_loss_limit; fuzzed through it",
}
