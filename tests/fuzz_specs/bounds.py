"""Fuzz specifications and valid extremes for the bounds (infonce_lib.bounds).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import (
    _SCORE_DIMS,
    _SCORES,
    Arr,
    Bad,
    Choice,
    Spec,
    _finite,
    _loop_log_probs,
    _lse_tol,
    _pairs_of,
    _sizes,
)
from tests.reference import logsumexp_list


def _scores_k1(kw, dims, rng):
    return {**kw, "scores": np.zeros((2, 1, 1))}


_BOUNDS_BAD = (Bad("K = 1 (no negative)", _scores_k1, ("scores",)),)


def _x_bound(fn, scale=1e6):
    loo = fn is il.leave_one_out_bound

    def run(rng):
        F = scale * rng.normal(size=(2, 3, 3))
        K = 3
        want = [
            math.log(K - loo) + math.fsum(_loop_log_probs(b.tolist(), include_positive=not loo)) / K
            for b in F
        ]
        return _pairs_of(fn(F), want, _lse_tol(np.abs(F).max()))

    return run


def _x_nwj(scale=1e6):
    def run(rng):
        K = 3
        F = -scale * np.abs(rng.normal(size=(2, K, K)))  # e^F must not overflow
        want = []
        for b in F:
            off = [b[i, j] for i in range(K) for j in range(K) if i != j]
            marginal = math.exp(logsumexp_list(off) - math.log(K * (K - 1)) - 1.0)
            want.append(math.fsum(np.diag(b)) / K - marginal)
        return _pairs_of(il.nwj_bound(F), want, _lse_tol(np.abs(F).max()))

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "infonce_bound": (
        Spec(
            il.infonce_bound,
            dict(scores=_SCORES, over=Choice("y")),
            dims=_SCORE_DIMS,
            bad=_BOUNDS_BAD,
        ),
    ),
    "leave_one_out_bound": (
        Spec(
            il.leave_one_out_bound,
            dict(scores=_SCORES, over=Choice("x")),
            dims=_SCORE_DIMS,
            bad=_BOUNDS_BAD,
        ),
    ),
    "nwj_bound": (
        Spec(
            il.nwj_bound,
            dict(scores=_SCORES),
            dims=_SCORE_DIMS,
            bad=_BOUNDS_BAD,
            check=lambda out: _finite(out, neg_inf_ok=True),  # documented: -inf on overflow
        ),
    ),
    "mean_and_se": (
        Spec(
            il.mean_and_se,
            dict(values=Arr(("B",))),
            dims=_sizes(B=(2, 5)),
            bad=(Bad("one value", lambda kw, d, r: {"values": [1.0]}, ("values",)),),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "infonce_bound": {"scores 1e6": _x_bound(il.infonce_bound)},
    "leave_one_out_bound": {"scores 1e6": _x_bound(il.leave_one_out_bound)},
    "nwj_bound": {"scores -1e6": _x_nwj()},
}
