"""Fuzz specifications and valid extremes for temperature (infonce_lib.temperature).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import (
    _SCORE_DIMS,
    POS,
    Arr,
    Bad,
    Bool,
    Num,
    Seq,
    Spec,
    _batched,
    _cosine_above_one,
    _cosines,
    _loop_log_probs,
    _loop_softmax,
    _lse_tol,
    _pairs_of,
    _positive,
    _rel,
    _rows,
    _set_row_zero,
    _sizes,
)
from tests.reference import logsumexp_list


def _x_infonce_at_beta(beta):
    def run(rng):
        S = _cosines(rng, (2, 4, 4), {})
        want = [math.log(4) + math.fsum(_loop_log_probs((beta * b).tolist())) / 4 for b in S]
        return _pairs_of(il.infonce_at_beta(S, beta), want, _lse_tol(beta))

    return run


def _x_cosine_cap(tau, K=16):
    def run(rng):
        want = math.log(K) if tau < 1 else 2 * (K - 1) / (K * tau)
        tol = 0.0 if tau < 1 else _rel(want, 1e-7)
        return [(il.cosine_cap(K, tau), want, tol)]

    return run


def _x_softmax_weights(tau, negatives_only=False):
    def run(rng):
        S = _cosines(rng, (2, 3, 3), {})
        got = il.softmax_weights(S, tau, negatives_only=negatives_only)
        out = []
        for b in range(2):
            for i in range(3):
                js = [j for j in range(3) if not (negatives_only and j == i)]
                w = _loop_softmax([S[b, i, j] / tau for j in js])
                want = [0.0] * 3
                for j, v in zip(js, w, strict=True):
                    want[j] = v
                out += _pairs_of(got[b, i], want, 1e-12)
        return out

    return run


def _x_tau_scaled(tau):
    def run(rng):
        S = _cosines(rng, (2, 4, 4), {})
        want = []
        for b in S:
            terms = [
                max(r) - r[i] + tau * logsumexp_list([(v - max(r)) / tau for v in r])
                for i, r in enumerate(b.tolist())
            ]
            want.append(math.fsum(terms) / 4)
        got = il.tau_scaled_loss(S, tau)
        return [(g, w, 1e-12 * (1 + abs(w))) for g, w in zip(got, want, strict=True)]

    return run


def _x_beta_derivatives(beta):
    def run(rng):
        S = _cosines(rng, (2, 3, 3), {})
        d = il.infonce_beta_derivatives(S, beta)
        out = []
        for b in range(2):
            value = math.log(3) + math.fsum(_loop_log_probs((beta * S[b]).tolist())) / 3
            first, second = [], []
            for i in range(3):
                p = _loop_softmax([beta * v for v in S[b, i]])
                mean = math.fsum(pj * v for pj, v in zip(p, S[b, i], strict=True))
                first.append(S[b, i, i] - mean)
                second.append(
                    -math.fsum(pj * (v - mean) ** 2 for pj, v in zip(p, S[b, i], strict=True))
                )
            out += [
                (d.value[b], value, _lse_tol(beta)),
                (d.first[b], math.fsum(first) / 3, 1e-12),
                (d.second[b], math.fsum(second) / 3, 1e-12),
            ]
        return out

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "best_temperature": (
        Spec(
            il.best_temperature,
            dict(
                cosines=Arr(("B", "K", "K"), _cosines), beta_bounds=Seq((0.5, 5.0), Num(POS, 0.5))
            ),
            dims=_SCORE_DIMS,
            bad=(
                Bad(
                    "bounds reversed",
                    lambda kw, d, r: {**kw, "beta_bounds": (5.0, 0.5)},
                    ("beta_bounds",),
                ),
                Bad("one bound", lambda kw, d, r: {**kw, "beta_bounds": (0.5,)}, ("beta_bounds",)),
                Bad("a cosine above 1", _cosine_above_one, ("cosines",)),
            ),
        ),
    ),
    "cosine_cap": (
        Spec(
            il.cosine_cap,
            dict(batch_size=Num("int", 4, minimum=2), tau=Num(POS, 0.5, array_ok=True)),
        ),
        Spec(
            il.cosine_cap,
            dict(
                batch_size=Num("int", 4, minimum=2),
                tau=Arr(("T",), _positive, ranks=frozenset({0, 1, 2})),
            ),
            dims=_sizes(T=(1, 3)),
            bad=(Bad("a zero temperature", lambda kw, d, r: {**kw, "tau": np.zeros(2)}, ("tau",)),),
        ),
    ),
    "cosine_scores": (
        Spec(
            il.cosine_scores,
            dict(
                x=Arr(("M", "d"), _rows),
                y=Arr(("M", "d"), _rows),
                batch_size=Num("int", lambda d: d["K"], minimum=2),
            ),
            dims=_batched,
            bad=(
                Bad("a zero row", _set_row_zero("x"), ("x",)),
                Bad(
                    "batch_size does not divide",
                    lambda kw, d, r: {**kw, "batch_size": d["M"] + 1},
                    ("batch_size",),
                ),
            ),
        ),
    ),
    "positive_margins": (
        Spec(
            il.positive_margins,
            dict(cosines=Arr(("B", "K", "K"), _cosines)),
            dims=_SCORE_DIMS,
            bad=(Bad("a cosine above 1", _cosine_above_one, ("cosines",)),),
        ),
    ),
    "tau_scaled_loss": (
        Spec(
            il.tau_scaled_loss,
            dict(cosines=Arr(("B", "K", "K"), _cosines), tau=Num(POS, 0.5)),
            dims=_SCORE_DIMS,
            bad=(Bad("a cosine above 1", _cosine_above_one, ("cosines",)),),
        ),
    ),
    "infonce_beta_derivatives": (
        Spec(
            il.infonce_beta_derivatives,
            dict(cosines=Arr(("B", "K", "K"), _cosines), beta=Num(POS, 2.0)),
            dims=_SCORE_DIMS,
            bad=(Bad("a cosine above 1", _cosine_above_one, ("cosines",)),),
        ),
    ),
    "softmax_weights": tuple(
        Spec(
            il.softmax_weights,
            dict(
                cosines=Arr(("B", "K", "K"), _cosines),
                tau=Num(POS, 0.5),
                negatives_only=Bool(flag),
            ),
            dims=_SCORE_DIMS,
            bad=(Bad("a cosine above 1", _cosine_above_one, ("cosines",)),),
        )
        for flag in (False, True)
    ),
    "infonce_at_beta": (
        Spec(
            il.infonce_at_beta,
            dict(cosines=Arr(("B", "K", "K"), _cosines), beta=Num(POS, 2.0)),
            dims=_SCORE_DIMS,
            bad=(
                Bad(
                    "opposite cosines at beta 1.7e308",
                    lambda kw, d, r: {"cosines": [[[1.0, -1.0], [-1.0, 1.0]]], "beta": 1.7e308},
                    ("beta",),
                    expect="edge",
                ),
            ),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "infonce_at_beta": {"beta 1e-8": _x_infonce_at_beta(1e-8), "beta 1e8": _x_infonce_at_beta(1e8)},
    "cosine_cap": {"tau 1e-8": _x_cosine_cap(1e-8), "tau 1e8": _x_cosine_cap(1e8)},
    "softmax_weights": {
        "tau 1e-8": _x_softmax_weights(1e-8),
        "tau 1e8": _x_softmax_weights(1e8),
        "tau 1e-8, negatives only": _x_softmax_weights(1e-8, True),
    },
    "tau_scaled_loss": {"tau 1e-8": _x_tau_scaled(1e-8), "tau 1e8": _x_tau_scaled(1e8)},
    "infonce_beta_derivatives": {
        "beta 1e-8": _x_beta_derivatives(1e-8),
        "beta 1e8": _x_beta_derivatives(1e8),
    },
}


EXEMPT: dict[str, str] = {
    "BETA_BOUNDS": "a constant (a pair of floats), not a function; best_temperature's default",
    "BestTemperature": "result record of best_temperature; fuzzed through it",
    "BetaDerivatives": "result named tuple of infonce_beta_derivatives; fuzzed through it",
}
