"""Fuzz specifications of infonce_lib/dv_variants.py: SMILE's clipped DV estimate (MINE's
moving-average gradient is a class, tested in tests/test_staircase.py).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import _SCORE_DIMS, _SCORES, POS, Num, Spec

SPECS: dict[str, tuple[Spec, ...]] = {
    "smile_bound": (
        Spec(il.smile_bound, dict(scores=_SCORES, tau=Num(POS, 5.0)), dims=_SCORE_DIMS),
    ),
}


def _x_smile(tau):
    # tiny tau: every negative clipped to ~0, so the value is the mean positive score;
    # huge tau: nothing clipped, so it is DV.
    def run(rng):
        F = rng.normal(scale=2.0, size=(2, 5, 5))
        got = il.smile_bound(F, tau)
        want = np.diagonal(F, axis1=1, axis2=2).mean(-1) if tau < 1 else il.dv_bound(F)
        return [(g, w, 1e-7 * max(1.0, abs(w))) for g, w in zip(got, want, strict=True)]

    return run


EXTREMES: dict[str, dict[str, Callable]] = {
    "smile_bound": {"tau 1e-8": _x_smile(1e-8), "tau 1e8": _x_smile(1e8)},
}

EXEMPT: dict[str, str] = {
    "MineGradient": "a class with state (the moving average): its values, gradient, "
    "validation and extreme scores are tested in tests/test_staircase.py",
}
