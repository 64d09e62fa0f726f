"""Fuzz specifications for NCE with infinitely many samples (infonce_lib.nce_population).

See tests/fuzzing.py for what a specification is and how to add one. None of these functions
has a scale parameter of the kinds test_fuzz.py lists (nu sets the noise-to-data ratio).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import POS, Arr, Bad, Num, Spec, _sizes, _spd


def _positive(rng, shape, dims):
    return rng.uniform(0.1, 1.0, size=shape)


def _cov_of(rng, shape, dims):
    """A noise covariance twice as wide as the data's (the inverse of precision's draw)."""
    return 2.0 * np.linalg.inv(_spd(np.random.default_rng(dims["seed"]), shape, dims))


def _precision(rng, shape, dims):
    return _spd(np.random.default_rng(dims["seed"]), shape, dims)


def _negative_density(kw, dims, rng):
    p = np.array(kw["noise_density"], dtype=np.float64)
    p.flat[0] = -0.5
    return {**kw, "noise_density": p}


def _singular(kw, dims, rng):
    g = np.array(kw["grad_log_model"], dtype=np.float64)
    g[:, -1] = g[:, 0] if g.shape[1] > 1 else 0.0
    return {**kw, "grad_log_model": g}


SPECS: dict[str, tuple[Spec, ...]] = {
    "nce_population_objective": (
        Spec(
            il.nce_population_objective,
            dict(
                log_model=Arr(("N",), ranks=frozenset({1, 2})),
                data_density=Arr(("N",), _positive),
                noise_density=Arr(("N",), _positive),
                weights=Arr(("N",), _positive),
                nu=Num(POS, 2.0),
            ),
            dims=_sizes(N=(1, 4)),
            bad=(Bad("a negative density", _negative_density, ("noise_density",)),),
        ),
    ),
    "nce_asymptotic_covariance": (
        Spec(
            il.nce_asymptotic_covariance,
            dict(
                grad_log_model=Arr(("N", "P")),
                log_data=Arr(("N",)),
                log_noise=Arr(("N",)),
                weights=Arr(("N",), _positive),
                nu=Num(POS, 1.5),
            ),
            dims=lambda n: (lambda p: {"P": p, "N": p + n(2, 4)})(n(1, 2)),
            bad=(
                Bad("gradients spanning fewer than P directions", _singular, ("grad_log_model",)),
            ),
        ),
    ),
    "gaussian_nce_precision_mse": (
        Spec(
            il.gaussian_nce_precision_mse,
            dict(
                precision=Arr(("d", "d"), _precision),
                noise_cov=Arr(("d", "d"), _cov_of),
                n_data=Num("int", 100, minimum=1),
                nu=Num(POS, 1.0),
            ),
            dims=lambda n: {"d": n(1, 2), "seed": n(0, 50)},
            max_examples=30,
            bad=(
                Bad(
                    "noise_cov not positive definite",
                    lambda kw, d, r: {**kw, "noise_cov": -np.asarray(kw["noise_cov"])},
                    ("noise_cov",),
                ),
            ),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {}
