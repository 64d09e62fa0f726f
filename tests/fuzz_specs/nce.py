"""Fuzz specifications and valid extremes for noise-contrastive estimation (infonce_lib.nce).

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
    Func,
    Num,
    Opts,
    Seed,
    Spec,
    _lse_tol,
    _sizes,
    _spd,
    _zeros,
)
from tests.reference_losses import _log_sigmoid


def _model1(theta, u):
    """log p_m(u) = c - u^2 / 2 with theta = (c,): the model of fit_nce's docstring."""
    u = np.asarray(u)
    return theta[..., 0] - u**2 / 2, np.ones((*u.shape, 1))


def _gauss_dims(n):
    d = n(1, 3)
    return {"d": d, "P": d * (d + 1) // 2 + 1, "T": n(1, 4)}


def _nce_dims(n):
    return {"Td": n(1, 4), "Tn": n(1, 4), "P": n(1, 3)}


def _x_nce_objective(scale=1e6):
    def run(rng):
        lm_x, lm_y = scale * rng.normal(size=(2, 5))
        ln_x, ln_y = rng.normal(size=(2, 5))
        nu = 2.0
        G_x, G_y = lm_x - ln_x, lm_y - ln_y
        want = (
            math.fsum(_log_sigmoid(g - math.log(nu)) for g in G_x) / 5
            + nu * math.fsum(_log_sigmoid(math.log(nu) - g) for g in G_y) / 5
        )
        got = il.nce_objective(lm_x, ln_x, lm_y, ln_y, nu)
        return [(got, want, _lse_tol(max(np.abs(G_x).max(), np.abs(G_y).max())))]

    return run


def _x_log_partition(scale):
    def run(rng):
        P = _spd(rng, (3, 3), {})
        want = il.gaussian_log_partition(P) - 1.5 * math.log(scale)
        return [(il.gaussian_log_partition(scale * P), want, 1e-9 * (1 + abs(want)))]

    return run


def _identity(rng, shape, dims):
    # fit_gaussian_nce's y is drawn standard normal, so its valid noise_cov is the identity
    return np.eye(shape[-1])


def _four(rng, shape, dims):
    return 4.0 * np.eye(shape[-1])


def _narrow(rng, shape, dims):
    """Data with precision 4 I, narrower than the standard-normal noise."""
    return 0.5 * rng.normal(size=shape)


SPECS: dict[str, tuple[Spec, ...]] = {
    "nce_objective": (
        Spec(
            il.nce_objective,
            dict(
                log_model_data=Arr(("Td",)),
                log_noise_data=Arr(("Td",)),
                log_model_noise=Arr(("Tn",)),
                log_noise_noise=Arr(("Tn",)),
                nu=Num(POS, 2.0),
            ),
            dims=_nce_dims,
        ),
    ),
    "nce_objective_and_grad": (
        Spec(
            il.nce_objective_and_grad,
            dict(
                log_model_data=Arr(("Td",)),
                log_noise_data=Arr(("Td",)),
                log_model_noise=Arr(("Tn",)),
                log_noise_noise=Arr(("Tn",)),
                grad_model_data=Arr(("Td", "P")),
                grad_model_noise=Arr(("Tn", "P")),
                nu=Num(POS, 2.0),
            ),
            dims=_nce_dims,
        ),
    ),
    "fit_nce": (
        Spec(
            il.fit_nce,
            dict(
                log_model=Func(_model1),
                theta0=Arr(("P",), _zeros),
                data=Fixed(lambda d, r: r.normal(size=d["Td"])),
                noise=Fixed(lambda d, r: r.normal(size=d["Tn"])),
                log_noise_data=Arr(("Td",)),
                log_noise_noise=Arr(("Tn",)),
                nu=Num(POS, 1.0, none_ok=True),
                method=Choice("trust-krylov"),
                options=Opts(None),
            ),
            dims=lambda n: {"P": 1, "Td": n(2, 6), "Tn": n(2, 6)},
            bound=frozenset({"P", "Td", "Tn"}),
            max_examples=40,
            # The one-parameter model's J(c) falls without bound as c -> +-inf, so every
            # valid call has a maximiser. Far extremes can leave none: noise log-densities
            # times 1e300 can separate data from noise, and at nu = 5e-324 the noise term's
            # weight nu / T_n is 0 in float64; a defined error there only.
            edge_accept=(il.NoMaximiserError,),
        ),
    ),
    "gaussian_theta": (
        Spec(
            il.gaussian_theta,
            dict(precision=Arr(("d", "d"), _spd), c=Num("real", -1.5)),
            dims=_sizes(d=(1, 3)),
            bad=(
                Bad(
                    "not symmetric",
                    lambda kw, d, r: {**kw, "precision": [[2.0, 1.0], [0.0, 2.0]]},
                    ("precision",),
                ),
                Bad(
                    "not positive definite",
                    lambda kw, d, r: {**kw, "precision": -kw["precision"]},
                    ("precision",),
                ),
            ),
        ),
    ),
    "gaussian_params": (
        Spec(
            il.gaussian_params,
            dict(theta=Arr(("P",), ranks=frozenset({1, 2, 3}))),
            dims=_gauss_dims,
            bound=frozenset({"P"}),
        ),
    ),
    "gaussian_log_partition": (
        Spec(
            il.gaussian_log_partition,
            dict(precision=Arr(("d", "d"), _spd, ranks=frozenset({2, 3}))),
            dims=_sizes(d=(1, 3)),
            bad=(
                Bad(
                    "not positive definite",
                    lambda kw, d, r: {**kw, "precision": -kw["precision"]},
                    ("precision",),
                ),
            ),
        ),
    ),
    "gaussian_log_model": (
        Spec(
            il.gaussian_log_model,
            dict(
                theta=Arr(("P",), ranks=frozenset({1, 2})),
                u=Arr(("T", "d"), ranks=frozenset({2, 3})),
            ),
            dims=_gauss_dims,
            bound=frozenset({"P", "d"}),
        ),
    ),
    "fit_gaussian_ml": (
        Spec(
            il.fit_gaussian_ml,
            dict(x=Arr(("T", "d"), ranks=frozenset({2, 3}))),
            dims=lambda n: (lambda d: {"d": d, "T": d + n(1, 4)})(n(1, 3)),
            bad=(
                Bad(
                    "fewer samples than dimensions",
                    lambda kw, d, r: {**kw, "x": np.ones((3, 4))},
                    ("x",),
                ),
            ),
        ),
    ),
    "fit_gaussian_nce": (
        Spec(
            il.fit_gaussian_nce,
            dict(
                x=Arr(("Td", "d"), _narrow),
                y=Arr(("Tn", "d")),
                noise_cov=Arr(("d", "d"), _identity),  # the noise y is drawn from
                nu=Num(POS, 1.0, none_ok=True),
                theta0=Arr(("P",), _zeros),
                options=Opts(None),
            ),
            dims=lambda n: (
                lambda d: {"d": d, "P": d * (d + 1) // 2 + 1, "Td": n(60, 80), "Tn": n(60, 80)}
            )(n(1, 2)),
            bound=frozenset({"P"}),
            max_examples=40,
            # Data narrower than the noise and 60 to 80 samples of each: the objective has a
            # maximiser (none lacked one in 20,000 draws; the smallest eigenvalue of the
            # estimate was 1.46, the truth's 4), so a valid call must fit. At nu = 5e-324
            # or 1e-300 the noise term's weight nu / T_n leaves float64's range or precision,
            # and J has no maximiser float64 can find: a defined error there only.
            edge_accept=(il.NoMaximiserError,),
        ),
    ),
    "gaussian_ml_precision_mse": (
        Spec(
            il.gaussian_ml_precision_mse,
            dict(
                precision=Arr(("d", "d"), _spd),
                n_data=Num("int", lambda d: d["d"] + 10, minimum=lambda d: d["d"] + 4),
                exact=Bool(True),
            ),
            dims=_sizes(d=(1, 3)),
        ),
    ),
    "simulate_gaussian_nce": (
        Spec(
            il.simulate_gaussian_nce,
            dict(
                precision=Arr(("d", "d"), _four),  # data narrower than the noise
                n_data=Num("int", 60, minimum=lambda d: d["d"]),
                nu=Num(POS, 1.0, far=False),
                noise_cov=Arr(("d", "d"), _identity),
                reps=Num("int", 2, minimum=1),
                seed=Seed(0),
            ),
            dims=_sizes(d=(1, 2)),
            bad=(Bad("nu * n_data not whole", lambda kw, d, r: {**kw, "nu": 0.33}, ("nu",)),),
            max_examples=40,
            # Precision 4 I against noise I with 60 samples: every valid call (the seeds 0,
            # 5 and a Generator seeded 3) has a maximiser. A far extreme of precision (times
            # 1e300, or one diagonal entry 1.7e308) draws data all near 0 or a line, which a
            # narrow Gaussian separates from the noise: no maximiser, a defined error there.
            edge_accept=(il.NoMaximiserError,),
        ),
    ),
    "mse_ratio": (
        Spec(
            il.mse_ratio,
            dict(errors_num=Arr(("R", "P")), errors_den=Arr(("R", "P"))),
            dims=_sizes(R=(2, 4), P=(1, 3)),
            bad=(
                Bad(
                    "one repetition",
                    lambda kw, d, r: {"errors_num": np.ones((1, 2)), "errors_den": np.ones((1, 2))},
                    ("errors_num",),
                ),
                Bad(
                    "zero denominator errors",
                    lambda kw, d, r: {**kw, "errors_den": np.zeros_like(kw["errors_den"])},
                    ("errors_den",),
                ),
            ),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "nce_objective": {"log-densities 1e6": _x_nce_objective()},
    "gaussian_log_partition": {
        "precision times 1e-100": _x_log_partition(1e-100),
        "precision times 1e100": _x_log_partition(1e100),
    },
}


EXEMPT: dict[str, str] = {
    "NCEFit": "result record built by fit_nce; fuzzed through fit_nce's outputs",
    "GaussianNCESimulation": "result record of simulate_gaussian_nce; fuzzed through it",
    "NoMaximiserError": "exception class raised by the fits; tested in test_nce.py and fuzzed "
    "as the only error a valid fit may raise (Spec.accept)",
}
