"""Fuzz specifications and valid extremes for the cube-warped patches (infonce_lib.warped_patches).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import scipy.stats

import infonce_lib as il
from tests.fuzzing import POS, Arr, Bad, Num, Obj, Spec, _rel, _sizes


def _field(dims, rng):
    return il.gaussian_field(dims["side"], 1.5)


def _jacobian(row) -> float:
    return -math.fsum(math.log(3) + 2 / 3 * math.log(abs(float(t))) for t in row)


def _x_conditional(sigma):
    def run(rng):
        u, v = rng.normal(size=(2, 3, 2)) ** 3
        want = [
            -math.fsum((np.cbrt(b) - np.cbrt(a)) ** 2 for a, b in zip(ur, vr, strict=True))
            / (2 * sigma**2)
            - (math.log(2 * math.pi) + 2 * math.log(sigma))
            + _jacobian(vr)
            for ur, vr in zip(u, v, strict=True)
        ]
        got = il.warped_log_p_v_given_u(v, u, sigma)
        return [(g, w, _rel(w, 1e-12)) for g, w in zip(got, want, strict=True)]

    return run


def _x_marginal(sigma):
    def run(rng):
        field_ = il.gaussian_field(2, 1.5)
        v = rng.normal(size=(3, 4)) ** 3
        Cy = field_.covariance + sigma**2 * np.eye(4)
        gauss = scipy.stats.multivariate_normal(np.zeros(4), Cy).logpdf(np.cbrt(v))
        want = [g + _jacobian(row) for g, row in zip(gauss, v, strict=True)]
        got = il.warped_log_p_v(v, field_, sigma)
        return [(g, w, _rel(w, 1e-10)) for g, w in zip(got, want, strict=True)]

    return run


def _x_ratio_scores(sigma):
    def run(rng):
        field_ = il.gaussian_field(1, 1.5)
        u, v = rng.normal(size=(2, 4, 1)) ** 3
        var = 1.0 + sigma**2  # the one-pixel field has unit variance
        got = il.warped_log_ratio_scores(u, v, field_, sigma, 2)
        out = []
        for b in range(2):
            for i in range(2):
                y = float(np.cbrt(v[2 * b + i, 0]))
                for j in range(2):
                    x = float(np.cbrt(u[2 * b + j, 0]))
                    want = (-((y - x) ** 2) / (2 * sigma**2) - math.log(sigma)) - (
                        -(y**2) / (2 * var) - 0.5 * math.log(var)
                    )
                    scale = (y * y + x * x) / sigma**2 + abs(want) + 1
                    out.append((got[b, i, j], want, 1e-12 * scale))
        return out

    return run


def _zero_in_v(kw, dims, rng):
    v = np.array(kw["v"], dtype=np.float64)
    v.flat[0] = 0.0
    return {**kw, "v": v}


_ZERO = Bad("a zero entry of v (an infinite density)", _zero_in_v, ("v",))

SPECS: dict[str, tuple[Spec, ...]] = {
    "cube_root_log_jacobian": (
        Spec(
            il.cube_root_log_jacobian,
            dict(v=Arr(("M", "d"))),
            dims=_sizes(M=(1, 4), d=(1, 3)),
            bad=(_ZERO,),
        ),
    ),
    "warped_log_p_v_given_u": (
        Spec(
            il.warped_log_p_v_given_u,
            dict(v=Arr(("M", "d")), u=Arr(("M", "d")), sigma=Num(POS, 0.7)),
            dims=_sizes(M=(1, 4), d=(1, 3)),
            bad=(_ZERO,),
        ),
    ),
    "warped_log_p_v": (
        Spec(
            il.warped_log_p_v,
            dict(v=Arr(("M", "d")), field=Obj(_field), sigma=Num(POS, 0.7)),
            dims=lambda n: (lambda s: {"side": s, "d": s * s, "M": n(1, 3)})(n(1, 2)),
            bound=frozenset({"d"}),
            bad=(_ZERO,),
        ),
    ),
    "warped_log_ratio_scores": (
        Spec(
            il.warped_log_ratio_scores,
            dict(
                u=Arr(("M", "d")),
                v=Arr(("M", "d")),
                field=Obj(_field),
                sigma=Num(POS, 0.7),
                batch_size=Num("int", lambda d: d["K"], minimum=2),
            ),
            dims=lambda n: (lambda s, K: {"side": s, "d": s * s, "K": K, "M": K * n(1, 2)})(
                n(1, 2), n(2, 3)
            ),
            bound=frozenset({"d", "M"}),
            bad=(_ZERO,),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "warped_log_ratio_scores": {
        "sigma 1e-8": _x_ratio_scores(1e-8),
        "sigma 1e8": _x_ratio_scores(1e8),
    },
    "warped_log_p_v_given_u": {
        "sigma 1e-8": _x_conditional(1e-8),
        "sigma 1e8": _x_conditional(1e8),
    },
    "warped_log_p_v": {"sigma 1e-8": _x_marginal(1e-8), "sigma 1e8": _x_marginal(1e8)},
}
