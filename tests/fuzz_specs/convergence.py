"""Fuzz specifications and valid extremes for finite batches (infonce_lib.convergence).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import (
    POS,
    Arr,
    Num,
    Seed,
    Spec,
    _dot,
    _loop_log_probs,
    _lse_tol,
    _pairs_of,
    _sizes,
    _unit,
)
from tests.reference import logsumexp_list


def _x_sampled_losses(tau):
    def run(rng):
        Zx, Zy = _unit(rng, (2, 4, 3), {})
        seed = int(rng.integers(2**16))
        got = il.sampled_contrastive_losses(Zx, Zy, tau, 3, 2, seed)
        index = np.random.default_rng(seed).integers(0, 4, size=(2, 3))
        want = [
            -math.fsum(_loop_log_probs([[_dot(Zy[a], Zx[c]) / tau for c in idx] for a in idx])) / 3
            for idx in index
        ]
        return _pairs_of(got, want, _lse_tol(1.0 / tau))

    return run


def _softplus(x: float) -> float:
    """log(1 + e^x) without overflow."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _x_deviation(tau):
    """The parts of 2 batches of 3 from 4 unit pairs, and c+ and c_J, by loops."""

    def run(rng):
        Zx, Zy = _unit(rng, (2, 4, 3), {})
        seed = int(rng.integers(2**16))
        got = il.contrastive_limit_deviation(Zx, Zy, tau, 3, 2, seed)
        index = np.random.default_rng(seed).integers(0, 4, size=(2, 3))
        S = [[_dot(Zy[a], Zx[c]) / tau for c in range(4)] for a in range(4)]
        log_mu = [logsumexp_list(row) - math.log(4) for row in S]
        positive, jensen = [], []
        for idx in index:
            pos, jen = [], []
            for i, a in enumerate(idx):
                lse = logsumexp_list([S[a][c] for j, c in enumerate(idx) if j != i])
                pos.append(_softplus(S[a][a] - lse))
                jen.append(lse - math.log(2) - log_mu[a])
            positive.append(math.fsum(pos) / 3)
            jensen.append(math.fsum(jen) / 3)
        c_pos = math.fsum(math.exp(S[a][a] - log_mu[a]) for a in range(4)) / 4
        c_j = 0.5 * (math.fsum(math.exp(2 * (v - log_mu[a])) for a in range(4) for v in S[a])
                     / 16 - 1)  # fmt: skip
        tol = _lse_tol(1.0 / tau)
        return [
            *_pairs_of(got.positive, positive, tol),
            *_pairs_of(got.jensen, jensen, tol),
            (got.c_positive, c_pos, tol),
            (got.c_jensen, c_j, tol),
        ]

    return run


_PAIRS = dict(Zx=Arr(("n", "m"), _unit), Zy=Arr(("n", "m"), _unit), temperature=Num(POS, 0.5))
_BATCHES = dict(
    batch_size=Num("int", 3, minimum=2), n_batches=Num("int", 2, minimum=1), seed=Seed(0)
)

SPECS: dict[str, tuple[Spec, ...]] = {
    name: (Spec(getattr(il, name), {**_PAIRS, **_BATCHES}, dims=_sizes(n=(2, 4), m=(1, 3))),)
    for name in ("sampled_contrastive_losses", "contrastive_limit_deviation")
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "sampled_contrastive_losses": {
        "tau 1e-8": _x_sampled_losses(1e-8),
        "tau 1e8": _x_sampled_losses(1e8),
    },
    "contrastive_limit_deviation": {"tau 1e-8": _x_deviation(1e-8), "tau 1e8": _x_deviation(1e8)},
}


EXEMPT: dict[str, str] = {
    "LimitDeviation": "result named tuple of contrastive_limit_deviation; fuzzed through it",
}
