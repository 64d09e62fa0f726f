"""Fuzz specification and valid extremes for the slope of Hadsell et al.'s loss
(infonce_lib.margin_losses; the two losses themselves are specified in losses.py).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import infonce_lib as il
from tests.fuzzing import _SCORE_DIMS, POS, Arr, Bad, Num, Spec, _cosine_above_one, _cosines


def _x_hadsell_grad(margin):
    def run(rng):
        S = _cosines(rng, (2, 3, 3), {})
        got = il.hadsell_contrastive_grad(S, margin)
        out = []
        for b in range(2):
            for i in range(3):
                for j in range(3):
                    if i == j:
                        want = -1 / 3
                    else:
                        D = math.sqrt(max(0.0, 2 - 2 * S[b, i, j]))
                        want = max(0.0, margin - D) / D / 3
                    out.append((got[b, i, j], want, 1e-12 * (1 + abs(want))))
        return out

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "hadsell_contrastive_grad": (
        Spec(
            il.hadsell_contrastive_grad,
            dict(cosines=Arr(("B", "K", "K"), _cosines), margin=Num(POS, 1.0)),
            dims=_SCORE_DIMS,
            bad=(Bad("a cosine above 1", _cosine_above_one, ("cosines",)),),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "hadsell_contrastive_grad": {
        "margin 1e-8": _x_hadsell_grad(1e-8),
        "margin 1e8": _x_hadsell_grad(1e8),
    },
}
