"""Fuzz specifications and valid extremes for the Gaussian patches (infonce_lib.gaussian).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import scipy.special
import scipy.stats

import infonce_lib as il
from tests.fuzzing import (
    POS,
    Arr,
    Bad,
    Num,
    Obj,
    Seed,
    Spec,
    _batched,
    _dot,
    _pairs_of,
    _positive,
    _rel,
    _sizes,
    _spd,
)


def _field(side_key="side"):
    return lambda dims, rng: il.gaussian_field(dims[side_key], 1.5)


def _field_dims(n):
    side, K, B = n(1, 2), n(2, 3), n(1, 2)
    return {"side": side, "d": side * side, "K": K, "M": K * B}


def _x_patch_information(sigma):
    def run(rng):
        lam = rng.uniform(0.5, 2.0, size=4)
        want = 0.5 * math.fsum(math.log1p(v / sigma**2) for v in lam)
        return [(il.patch_information(sigma, lam), want, _rel(want, 1e-12))]

    return run


def _x_log_p_y_given_x(sigma):
    def run(rng):
        y, x = rng.normal(size=(2, 3, 2))
        want = [
            -math.fsum((a - b) ** 2 for a, b in zip(yi, xi, strict=True)) / (2 * sigma**2)
            - (math.log(2 * math.pi) + 2 * math.log(sigma))
            for yi, xi in zip(y, x, strict=True)
        ]
        got = il.log_p_y_given_x(y, x, sigma)
        return [(g, w, _rel(w, 1e-12)) for g, w in zip(got, want, strict=True)]

    return run


def _x_field_covariance(ell):
    def run(rng):
        side = 3
        C = il.field_covariance(side, ell)
        out = []
        for a in range(side * side):
            for b in range(side * side):
                d2 = (a // side - b // side) ** 2 + (a % side - b % side) ** 2
                want = math.exp(-d2 / (2 * ell * ell))
                out.append((C[a, b], want, _rel(want, 1e-14)))
        return out

    return run


def _x_sigma_for_information(target):
    def run(rng):
        lam = il.gaussian_field(4).eigenvalues
        sigma = il.sigma_for_information(target, lam)
        return [(il.patch_information(sigma, lam), target, _rel(target, 1e-9))]

    return run


def _x_gaussian_mi(scale):
    def run(rng):
        J = _spd(rng, (4, 4), {})
        want = il.gaussian_mutual_information(J, 2)
        return [(il.gaussian_mutual_information(scale * J, 2), want, 1e-9)]

    return run


def _x_critic_scores(sigma):
    def run(rng):
        x, y = rng.normal(size=(2, 4, 2))
        F = il.optimal_critic_scores(x, y, sigma, 2)
        out = []
        for b in range(2):
            for i in range(2):
                for j in range(2):
                    yi, xj = y[2 * b + i], x[2 * b + j]
                    sq = math.fsum((u - v) ** 2 for u, v in zip(yi, xj, strict=True))
                    want = -sq / (2 * sigma**2) - (math.log(2 * math.pi) + 2 * math.log(sigma))
                    size = (1 + _dot(yi, yi) + _dot(xj, xj)) / (2 * sigma**2)
                    out.append((F[b, i, j], want, 1e-12 * (size + abs(want))))
        return out

    return run


def _x_log_p_y(sigma):
    def run(rng):
        field_ = il.gaussian_field(2, 1.5)
        y = rng.normal(size=(3, 4))
        Cy = field_.covariance + sigma**2 * np.eye(4)
        want = scipy.stats.multivariate_normal(np.zeros(4), Cy).logpdf(y)
        got = il.log_p_y(y, field_, sigma)
        return [(g, w, _rel(w, 1e-10)) for g, w in zip(got, want, strict=True)]

    return run


def _x_sample_patch_pairs(sigma):
    def run(rng):
        field_ = il.gaussian_field(2, 1.5)
        seed = int(rng.integers(2**16))
        x, y = il.sample_patch_pairs(field_, sigma, 5, seed)
        draws = np.random.default_rng(seed)
        z = draws.standard_normal((5, 4))
        eps = draws.standard_normal((5, 4))
        return _pairs_of(y, x + sigma * eps, 0.0) + _pairs_of(x, z @ field_.factor.T, 0.0)

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "field_covariance": (
        Spec(
            il.field_covariance,
            dict(side=Num("int", 2, minimum=1), length_scale=Num(POS, 1.5)),
        ),
    ),
    "gaussian_field": (
        Spec(il.gaussian_field, dict(side=Num("int", 2, minimum=1), length_scale=Num(POS, 1.5))),
    ),
    "gaussian_mutual_information": (
        Spec(
            il.gaussian_mutual_information,
            dict(
                joint_covariance=Arr(("n", "n"), _spd),
                n_x=Num("int", 1, minimum=1),
            ),
            dims=_sizes(n=(2, 4)),
            bad=(
                Bad("n_x = n", lambda kw, d, r: {**kw, "n_x": d["n"]}, ("n_x",)),
                Bad(
                    "not symmetric",
                    lambda kw, d, r: {**kw, "joint_covariance": np.triu(kw["joint_covariance"])},
                    ("joint_covariance",),
                ),
                Bad(
                    "not positive definite",
                    lambda kw, d, r: {**kw, "joint_covariance": -kw["joint_covariance"]},
                    ("joint_covariance",),
                ),
            ),
        ),
    ),
    "patch_information": (
        Spec(
            il.patch_information,
            dict(sigma=Num(POS, 0.7), eigenvalues=Arr(("d",), _positive)),
            dims=_sizes(d=(1, 4)),
            bad=(
                Bad(
                    "a negative eigenvalue",
                    lambda kw, d, r: {**kw, "eigenvalues": -kw["eigenvalues"]},
                    ("eigenvalues",),
                ),
            ),
        ),
    ),
    "patch_information_logdet": (
        Spec(
            il.patch_information_logdet,
            dict(sigma=Num(POS, 0.7), field=Obj(_field(), (None, "field", np.eye(4), 1.0))),
            dims=_sizes(side=(1, 2)),
        ),
    ),
    "sigma_for_information": (
        Spec(
            il.sigma_for_information,
            dict(target=Num(POS, 1.0), eigenvalues=Arr(("d",), _positive)),
            dims=_sizes(d=(1, 4)),
            bad=(
                Bad(
                    "all eigenvalues zero",
                    lambda kw, d, r: {**kw, "eigenvalues": np.zeros(d["d"])},
                    ("eigenvalues",),
                ),
                Bad(
                    "a negative eigenvalue",
                    lambda kw, d, r: {**kw, "eigenvalues": -kw["eigenvalues"]},
                    ("eigenvalues",),
                ),
            ),
        ),
    ),
    "sample_patch_pairs": (
        Spec(
            il.sample_patch_pairs,
            dict(
                field=Obj(_field()),
                sigma=Num(POS, 0.5),
                n_pairs=Num("int", 3, minimum=1),
                seed=Seed(0),
            ),
            dims=_sizes(side=(1, 2)),
        ),
    ),
    "log_p_y_given_x": (
        Spec(
            il.log_p_y_given_x,
            dict(y=Arr(("M", "d")), x=Arr(("M", "d")), sigma=Num(POS, 0.7)),
            dims=_sizes(M=(1, 4), d=(1, 3)),
        ),
    ),
    "log_p_y": (
        Spec(
            il.log_p_y,
            dict(y=Arr(("M", "d")), field=Obj(_field()), sigma=Num(POS, 0.7)),
            dims=lambda n: (lambda s: {"side": s, "d": s * s, "M": n(1, 3)})(n(1, 2)),
            bound=frozenset({"d"}),
        ),
    ),
    "optimal_critic_scores": (
        Spec(
            il.optimal_critic_scores,
            dict(
                x=Arr(("M", "d")),
                y=Arr(("M", "d")),
                sigma=Num(POS, 0.7),
                batch_size=Num("int", lambda d: d["K"], minimum=2),
            ),
            dims=_batched,
            bad=(
                Bad(
                    "batch_size does not divide",
                    lambda kw, d, r: {**kw, "batch_size": d["M"] + 1},
                    ("batch_size",),
                ),
            ),
        ),
    ),
    "log_density_ratio_scores": (
        Spec(
            il.log_density_ratio_scores,
            dict(
                x=Arr(("M", "d")),
                y=Arr(("M", "d")),
                field=Obj(_field()),
                sigma=Num(POS, 0.7),
                batch_size=Num("int", lambda d: d["K"], minimum=2),
            ),
            dims=_field_dims,
            bound=frozenset({"d"}),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "optimal_critic_scores": {
        "sigma 1e-8": _x_critic_scores(1e-8),
        "sigma 1e8": _x_critic_scores(1e8),
    },
    "log_p_y": {"sigma 1e-8": _x_log_p_y(1e-8), "sigma 1e8": _x_log_p_y(1e8)},
    "sample_patch_pairs": {
        "sigma 1e-8": _x_sample_patch_pairs(1e-8),
        "sigma 1e8": _x_sample_patch_pairs(1e8),
    },
    "patch_information": {
        "sigma 1e-8": _x_patch_information(1e-8),
        "sigma 1e8": _x_patch_information(1e8),
    },
    "log_p_y_given_x": {
        "sigma 1e-8": _x_log_p_y_given_x(1e-8),
        "sigma 1e8": _x_log_p_y_given_x(1e8),
    },
    "field_covariance": {
        "length_scale 1e-8": _x_field_covariance(1e-8),
        "length_scale 1e8": _x_field_covariance(1e8),
    },
    "sigma_for_information": {
        "target 1e-8": _x_sigma_for_information(1e-8),
        "target 500": _x_sigma_for_information(500.0),
    },
    "gaussian_mutual_information": {
        "covariance times 1e-150": _x_gaussian_mi(1e-150),
        "covariance times 1e150": _x_gaussian_mi(1e150),
    },
}


EXEMPT: dict[str, str] = {
    "GaussianField": "frozen record built by gaussian_field (fuzzed); the functions that take one "
    "are fuzzed with wrong objects in its place",
}


NO_EXTREME: dict[str, str] = {
    "gaussian_field": "field_covariance (which has extremes) then numpy.linalg.eigh",
    "patch_information_logdet": "an independent check of patch_information by "
    "log-determinants, meant for moderate "
    "sigma: at sigma 1e-8 the joint covariance is singular to working precision and it "
    "raises ValueError naming sigma (fuzzed)",
    "log_density_ratio_scores": "optimal_critic_scores minus log_p_y (both have extremes)",
}
