"""Fuzz specifications and valid extremes for the readouts of chapter 7 (infonce_lib.readouts).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

from collections.abc import Callable

import infonce_lib as il
from tests.fuzzing import Arr, Num, Spec, _sizes


def _x_target_scale(fn, scale):
    """R^2 does not depend on the target's scale: equal to the unscaled value."""

    def run(rng):
        F = rng.normal(size=(40, 3))
        t = F[:, 0] + 0.5 * rng.normal(size=40)
        want = fn(F, t, 20)
        return [(fn(F, scale * t, 20), want, 1e-12 * (1 + abs(want)))]

    return run


_PARAMS = dict(features=Arr(("n", "p")), target=Arr(("n",)), n_train=Num("int", 2, minimum=1))

SPECS: dict[str, tuple[Spec, ...]] = {
    "linear_readout_r2": (
        Spec(il.linear_readout_r2, dict(_PARAMS), dims=_sizes(n=(4, 8), p=(1, 3))),
    ),
    "knn_readout_r2": (
        Spec(
            il.knn_readout_r2,
            dict(_PARAMS, k=Num("int", 1, minimum=1)),
            dims=_sizes(n=(4, 8), p=(1, 3)),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "linear_readout_r2": {
        "target times 1e-8": _x_target_scale(il.linear_readout_r2, 1e-8),
        "target times 1e8": _x_target_scale(il.linear_readout_r2, 1e8),
    },
    "knn_readout_r2": {
        "target times 1e-8": _x_target_scale(lambda F, t, n: il.knn_readout_r2(F, t, n, 4), 1e-8),
        "target times 1e8": _x_target_scale(lambda F, t, n: il.knn_readout_r2(F, t, n, 4), 1e8),
    },
}
