"""Fuzz specifications and valid extremes for the limits of chapter 5 (infonce_lib.limits).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import (
    _LN2,
    POS,
    Arr,
    Bad,
    Choice,
    Num,
    Seed,
    Spec,
    _dot,
    _pairs_of,
    _rel,
    _sizes,
)


def _doe_dims(n, same=False):
    dx = n(1, 2)
    dy = dx if same else n(1, 2)
    return {"dx": dx, "dy": dy, "n": dx + dy + n(3, 6), "m": n(2, 4)}


def _rhos(rng, shape, dims):
    return rng.uniform(-0.99, 0.99, size=shape)


def _x_cg_information(rho, dim=3):
    def run(rng):
        if abs(rho) < 1e-6:  # -1/2 log(1 - rho^2) = rho^2 / 2 + rho^4 / 4 + ...
            want = dim * (rho**2 / 2 + rho**4 / 4)
        else:  # rho = ±(1 - 2**-40): 1 - rho^2 = 2**-40 (2 - 2**-40), exactly
            want = -dim / 2 * (-40 * _LN2 + _LN2 + math.log1p(-(2.0**-41)))
        return [(il.correlated_gaussian_information(rho, dim), want, _rel(want, 1e-12))]

    return run


def _x_cg_rho(info, dim):
    def run(rng):
        rho = il.correlated_gaussian_rho(info, dim)
        return [(il.correlated_gaussian_information(rho, dim), info, _rel(info, 1e-9))]

    return run


def _x_cg_critic(rho=0.999):
    def run(rng):
        X, Y = rng.normal(size=(2, 3, 2))
        s2 = (1 - rho) * (1 + rho)
        F = il.correlated_gaussian_critic(X, Y, rho)
        out = []
        for i in range(3):
            for j in range(3):
                sq = math.fsum((Y[i, k] - rho * X[j, k]) ** 2 for k in range(2))
                want = -math.log(2 * math.pi * s2) - sq / (2 * s2)
                size = 1 + _dot(X[j], X[j]) + _dot(Y[i], Y[i])
                out.append((F[i, j], want, 1e-12 * size / s2))
        return out

    return run


def _x_binary_channel(sigma, dim=3):
    def run(rng):
        want = dim * _LN2 if sigma < 1 else dim / (2 * sigma**2)
        return [(il.binary_channel_information(sigma, dim), want, 1e-12 * dim)]

    return run


def _x_sample_binary_channel(sigma):
    def run(rng):
        seed = int(rng.integers(2**16))
        X, Y = il.sample_binary_channel(5, sigma, 2, seed)
        draws = np.random.default_rng(seed)
        signs = 2.0 * draws.integers(0, 2, size=(5, 2)) - 1.0
        Y_want = signs + sigma * draws.standard_normal((5, 2))
        return _pairs_of(X, signs, 0.0) + _pairs_of(Y, Y_want, 0.0)

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "binary_channel_information": (
        Spec(
            il.binary_channel_information,
            dict(sigma=Num(POS, 0.5), dim=Num("int", 2, minimum=1)),
        ),
    ),
    "correlated_gaussian_critic": (
        Spec(
            il.correlated_gaussian_critic,
            dict(X=Arr(("K", "d")), Y=Arr(("K", "d")), rho=Num("unit", 0.5)),
            dims=_sizes(K=(1, 4), d=(1, 3)),
        ),
    ),
    "correlated_gaussian_infonce": (
        Spec(
            il.correlated_gaussian_infonce,
            dict(
                rho=Num("unit", 0.5),
                dim=Num("int", 2, minimum=1),
                batch_size=Num("int", 4, minimum=2),
                n_batches=Num("int", 2, minimum=1),
                seed=Seed(0),
            ),
        ),
    ),
    "correlated_gaussian_infonce_levels": (
        Spec(
            il.correlated_gaussian_infonce_levels,
            dict(
                rhos=Arr(("L",), _rhos),
                dim=Num("int", 2, minimum=1),
                batch_size=Num("int", 4, minimum=2),
                n_batches=Num("int", 2, minimum=1),
                seed=Seed(0),
            ),
            dims=_sizes(L=(1, 3)),
        ),
    ),
    "correlated_gaussian_information": (
        Spec(
            il.correlated_gaussian_information,
            dict(rho=Num("unit", 0.5), dim=Num("int", 2, minimum=1)),
        ),
    ),
    "correlated_gaussian_rho": (
        Spec(
            il.correlated_gaussian_rho,
            dict(information=Num("nonneg", 1.0), dim=Num("int", 2, minimum=1)),
        ),
    ),
    "doe_estimate": tuple(
        Spec(
            il.doe_estimate,
            dict(
                X_train=Arr(("n", "dx")),
                Y_train=Arr(("n", "dy")),
                X_test=Arr(("m", "dx")),
                Y_test=Arr(("m", "dy")),
                model=Choice(model),
            ),
            dims=lambda n, same=(model == "coordinatewise"): _doe_dims(n, same),
            bad=(
                Bad(
                    "too few training pairs",
                    lambda kw, d, r: {
                        **kw,
                        "X_train": kw["X_train"][:2],
                        "Y_train": kw["Y_train"][:2],
                    },
                    ("X_train",),
                ),
                Bad(
                    "one test pair",
                    lambda kw, d, r: {**kw, "X_test": kw["X_test"][:1], "Y_test": kw["Y_test"][:1]},
                    ("X_test",),
                ),
                Bad(
                    "constant training column",
                    lambda kw, d, r: {**kw, "X_train": np.ones_like(kw["X_train"])},
                    ("X_train",),
                ),
            ),
        )
        for model in ("full", "coordinatewise")
    ),
    "sample_binary_channel": (
        Spec(
            il.sample_binary_channel,
            dict(
                n=Num("int", 3, minimum=1),
                sigma=Num(POS, 0.5),
                dim=Num("int", 2, minimum=1),
                seed=Seed(0),
            ),
        ),
    ),
    "sample_correlated_gaussian": (
        Spec(
            il.sample_correlated_gaussian,
            dict(
                n=Num("int", 3, minimum=1),
                rho=Num("unit", 0.5),
                dim=Num("int", 2, minimum=1),
                seed=Seed(0),
            ),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "sample_binary_channel": {
        "sigma 1e-8": _x_sample_binary_channel(1e-8),
        "sigma 1e8": _x_sample_binary_channel(1e8),
    },
    "correlated_gaussian_information": {
        "rho 1e-12": _x_cg_information(1e-12),
        "rho 1 - 2**-40": _x_cg_information(1 - 2.0**-40),
        "rho -(1 - 2**-40)": _x_cg_information(-(1 - 2.0**-40)),
    },
    "correlated_gaussian_rho": {
        "information 1e-12": _x_cg_rho(1e-12, 1),
        "information 30 in 10 dimensions": _x_cg_rho(30.0, 10),
    },
    "correlated_gaussian_critic": {"rho 0.999": _x_cg_critic()},
    "binary_channel_information": {
        "sigma 1e-8": _x_binary_channel(1e-8),
        "sigma 1e8": _x_binary_channel(1e8),
    },
}


EXEMPT: dict[str, str] = {
    "DoEEstimate": "result named tuple of doe_estimate; fuzzed through it",
}
