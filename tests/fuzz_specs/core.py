"""Fuzz specifications and valid extremes for the general core (infonce_lib.core).

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
    Bad,
    Bool,
    Choice,
    Fixed,
    Num,
    Spec,
    _dot,
    _exclude,
    _loop_log_probs,
    _lse_tol,
    _pairs_of,
    _positives,
    _sizes,
)


def _rc(n, r_lo=1):
    R = n(r_lo, 4)
    return {"R": R, "C": max(R, 2) + n(0, 2)}


def _ncd(n):
    d = {"n": n(1, 4), "D": n(1, 3)}
    d["C"] = max(d["n"], 2) + n(0, 2)
    return d


def _x_streaming(tau):
    def run(rng):
        U, V = rng.normal(size=(2, 5, 3))
        got = il.contrastive_log_probs_streaming(U, V, temperature=tau, chunk_size=2)
        L = [[_dot(u, v) / tau for v in V] for u in U]
        return _pairs_of(got, _loop_log_probs(L), _lse_tol(np.abs(U @ V.T).max() / tau))

    return run


def _x_logits(scale=1e6, f32=False):
    def run(rng):
        L = scale * rng.normal(size=(3, 4))
        if f32:
            L = L.astype(np.float32)
        L64 = L.astype(np.float64)
        tol = _lse_tol(np.abs(L64).max())
        got = il.contrastive_log_probs(L)
        out = _pairs_of(got, _loop_log_probs(L64.tolist()), tol)
        loss = il.contrastive_loss_from_logits(L)
        return [*out, (loss, -math.fsum(_loop_log_probs(L64.tolist())) / 3, tol)]

    return run


def _x_loss_from_logits(scale=1e6):
    def run(rng):
        L = scale * rng.normal(size=(4, 4))
        rows = -math.fsum(_loop_log_probs(L.tolist())) / 4
        cols = -math.fsum(_loop_log_probs(L.T.tolist())) / 4
        tol = _lse_tol(np.abs(L).max())
        return [
            (il.contrastive_loss_from_logits(L, anchors="columns"), cols, tol),
            (il.contrastive_loss_from_logits(L, anchors="both"), (rows + cols) / 2, tol),
        ]

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "contrastive_log_probs": (
        Spec(
            il.contrastive_log_probs,
            dict(
                logits=Arr(("R", "C"), ranks=frozenset({2, 3, 4})),
                positives=Arr(("R",), _positives, index=True),
                exclude=Arr(("R",), _exclude, index=True),
                anchors=Choice("rows"),
                include_positive=Bool(True),
            ),
            dims=_rc,
            bad=(
                Bad(
                    "positive out of range",
                    lambda kw, d, r: {**kw, "positives": np.full(d["R"], d["C"])},
                    ("positives",),
                ),
                Bad(
                    "negative positive",
                    lambda kw, d, r: {**kw, "positives": np.full(d["R"], -1)},
                    ("positives",),
                ),
                Bad(
                    "exclude hits the positive",
                    lambda kw, d, r: {**kw, "exclude": kw["positives"]},
                    ("exclude",),
                ),
            ),
        ),
        Spec(  # the diagonal default, positive left out of its denominator
            il.contrastive_log_probs,
            dict(logits=Arr(("R", "C"), ranks=frozenset({2, 3})), include_positive=Bool(False)),
            dims=lambda n: _rc(n, r_lo=2),
            bad=(
                Bad(
                    "fewer candidates than anchors",
                    lambda kw, d, r: {**kw, "logits": np.zeros((d["R"], d["R"] - 1))},
                    ("logits",),
                ),
            ),
        ),
    ),
    "contrastive_loss_from_logits": (
        Spec(
            il.contrastive_loss_from_logits,
            dict(
                logits=Arr(("R", "C")),
                positives=Arr(("R",), _positives, index=True),
                exclude=Arr(("R",), _exclude, index=True),
                anchors=Choice("rows"),
            ),
            dims=_rc,
        ),
        Spec(
            il.contrastive_loss_from_logits,
            dict(logits=Arr(("N", "N")), anchors=Fixed("both")),
            dims=_sizes(N=(1, 4)),
        ),
    ),
    "contrastive_log_probs_streaming": (
        Spec(
            il.contrastive_log_probs_streaming,
            dict(
                anchors=Arr(("n", "D")),
                candidates=Arr(("C", "D")),
                positives=Arr(("n",), _positives, index=True),
                temperature=Num(POS, 0.5),
                exclude=Arr(("n",), _exclude, index=True),
                include_positive=Bool(True),
                chunk_size=Num("int", 2, minimum=1),
            ),
            dims=_ncd,
            bad=(
                Bad(
                    "positive out of range",
                    lambda kw, d, r: {**kw, "positives": np.full(d["n"], d["C"])},
                    ("positives",),
                ),
            ),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "contrastive_log_probs_streaming": {
        "tau 1e-8": _x_streaming(1e-8),
        "tau 1e8": _x_streaming(1e8),
    },
    "contrastive_log_probs": {
        "logits 1e6": _x_logits(),
        "logits 1e12": _x_logits(1e12),
        "float32 logits 1e6": _x_logits(f32=True),
    },
    "contrastive_loss_from_logits": {"logits 1e6": _x_loss_from_logits()},
}


EXEMPT: dict[str, str] = {
    "DEFAULT_CHUNK_SIZE": "a constant (an int), not a function",
}
