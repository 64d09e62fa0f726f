"""Fuzz specifications for the family of bounds (infonce_lib.bound_family), the critics, Adam,
the caps, the report helpers, the published figures and the exercise checkers.

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import infonce_lib as il
from tests.fuzzing import (
    _SCORE_DIMS,
    _SCORES,
    POS,
    Arr,
    Bad,
    Choice,
    Fixed,
    Num,
    Seed,
    Spec,
    _finite,
    _sizes,
)

# log_baseline: log q(y_i), a float, one per row (K,), or one per row and batch (B, K).
_BASELINE = Arr(("K",), ranks=frozenset({0, 1, 2}))
_NEG_INF_OK = dict(check=lambda out: _finite(out, neg_inf_ok=True))  # documented: -inf


def _alpha(value):
    return Bad(f"alpha = {value}", lambda kw, d, r: {**kw, "alpha": value}, ("alpha",))


SPECS: dict[str, tuple[Spec, ...]] = {
    "barber_agakov_bound": (
        Spec(
            il.barber_agakov_bound,
            dict(scores=_SCORES, entropy=Num("real", 1.0)),
            dims=_SCORE_DIMS,
        ),
    ),
    "dv_bound": (Spec(il.dv_bound, dict(scores=_SCORES), dims=_SCORE_DIMS),),
    "js_objective": (Spec(il.js_objective, dict(scores=_SCORES), dims=_SCORE_DIMS),),
    "js_bound": (
        Spec(
            il.js_bound,
            dict(scores=_SCORES),
            dims=_SCORE_DIMS,
            **_NEG_INF_OK,
        ),
    ),
    "tuba_bound": (
        Spec(
            il.tuba_bound,
            dict(scores=_SCORES, log_baseline=_BASELINE),
            dims=_SCORE_DIMS,
            **_NEG_INF_OK,
        ),
    ),
    "interpolated_bound": (
        Spec(
            il.interpolated_bound,
            dict(scores=_SCORES, log_baseline=_BASELINE, alpha=Fixed(0.5)),
            dims=_sizes(B=(1, 3), K=(3, 4)),
            bad=(_alpha(-0.1), _alpha(1.5), _alpha(float("nan")), _alpha("0.5")),
            **_NEG_INF_OK,
        ),
    ),
    "bound_and_score_grad": (
        Spec(
            il.bound_and_score_grad,
            dict(scores=_SCORES, estimator=Choice("nwj")),
            dims=_SCORE_DIMS,
            check=lambda out: (_finite(out[0], neg_inf_ok=True), _finite(out[1])),
        ),
    ),
    "correlated_gaussian_log_ratio": (
        Spec(
            il.correlated_gaussian_log_ratio,
            dict(X=Arr(("K", "D")), Y=Arr(("K", "D")), rho=Num("unit", 0.5)),
            dims=_sizes(K=(2, 4), D=(1, 3)),
        ),
    ),
    "attainable_cosine_cap": (
        Spec(
            il.attainable_cosine_cap,
            dict(batch_size=Num("int", 8, minimum=2), temperature=Num(POS, 0.5, array_ok=True)),
        ),
    ),
    "maximise_infonce_over_unit_embeddings": (
        Spec(
            il.maximise_infonce_over_unit_embeddings,
            dict(
                batch_size=Num("int", 4, minimum=2),
                temperature=Num(POS, 0.5),
                dim=Num("int", 3, minimum=1),
                seed=Seed(0),
            ),
        ),
    ),
}


def _x_attainable_cap(tau, K=16):
    # log K - log(1 + (K-1) e^{-a}) = -log1p((K-1)/K * expm1(-a)), a = K / ((K-1) tau):
    # log K itself for tiny tau, about a (K-1)/K = 1/tau for huge tau.
    def run(rng):
        a = K / ((K - 1) * tau)
        want = -math.log1p((K - 1) / K * math.expm1(-a))
        return [(il.attainable_cosine_cap(K, tau), want, abs(want) * 1e-12)]

    return run


EXTREMES: dict[str, dict[str, Callable]] = {
    "attainable_cosine_cap": {
        "tau 1e-8": _x_attainable_cap(1e-8),
        "tau 1e8": _x_attainable_cap(1e8),
    },
}


EXEMPT: dict[str, str] = {
    "ESTIMATORS": "a constant: the names of the estimators of the staircase",
    "optimal_critic_estimates": "a sampler of the staircase's optimal critic; its inputs "
    "(information, dim, batch_size, n_batches, alpha, seed) are checked in "
    "tests/test_bound_family.py, not yet fuzzed",
    "SeparableCritic": "a class: construction and gradients tested in tests/test_critics.py",
    "JointCritic": "a class: construction and gradients tested in tests/test_critics.py",
    "mlp_init": "builds a critic's weights; tested in tests/test_critics.py, not yet fuzzed",
    "mlp_forward": "a critic's forward pass; tested in tests/test_critics.py, not yet fuzzed",
    "mlp_backward": "a critic's backward pass; tested in tests/test_critics.py, not yet fuzzed",
    "flatten_grads": "concatenates a critic's gradients; tested in tests/test_critics.py",
    "Adam": "a class: tested in tests/test_optim.py",
    "Check": "a record of one check; built by the experiments",
    "Report": "a record of an experiment's results; built by the experiments",
    "format_table": "formats the experiments' tables; doctested, not fuzzed",
    "CLIP_TEMPERATURE": "a published figure (a constant record)",
    "MCALLESTER_STRATOS_TABLE1": "a published table (a constant record)",
    "MOCO_SETTINGS": "published settings (a constant record)",
    "POOLE_STAIRCASE": "published settings (a constant record)",
    "PUBLISHED": "the published records (a constant)",
    "PublishedSettings": "the record type of published settings",
    "PublishedTable": "the record type of published tables",
    "SIMCLR_BATCH_SIZES": "a published figure (a constant record)",
    "SIMCLR_TABLE5": "a published table (a constant record)",
    "WANG_ISOLA_METRICS": "published settings (a constant record)",
    "check_nce_objective": "an exercise checker: takes a learner's function; tested in "
    "tests/test_exercises_nce.py",
    "nce_objective_mistakes": "the checker's catalogue of mistakes (no arguments)",
    "check_infonce_bound": "an exercise checker: tested in tests/test_exercises_bounds.py",
    "infonce_bound_mistakes": "the checker's catalogue of mistakes (no arguments)",
    "check_nwj_bound": "an exercise checker: tested in tests/test_bound_family.py",
    "nwj_mistakes": "the checker's catalogue of mistakes (no arguments)",
    "check_min_batch_size": "an exercise checker: tested in tests/test_exercises_limits.py",
    "min_batch_size_mistakes": "the checker's catalogue of mistakes (no arguments)",
    "check_attainable_cap": "an exercise checker: tested in tests/test_exercises_temperature.py",
    "check_infonce_curvature": "an exercise checker: tested in tests/test_exercises_temperature.py",
    "check_zero_temperature_limit": "an exercise checker: tested in "
    "tests/test_exercises_temperature.py",
    "temperature_mistakes": "the checkers' catalogue of mistakes (no arguments)",
    "check_warped_log_density": "an exercise checker: tested in "
    "tests/test_exercises_misconceptions.py",
    "warped_density_mistakes": "the checker's catalogue of mistakes (no arguments)",
}


NO_EXTREME: dict[str, str] = {
    "maximise_infonce_over_unit_embeddings": "an optimiser whose temperatures are limited to "
    "caps.TEMPERATURE_RANGE (1e-4 to 1e4; 1e-8 and 1e8 are refused, naming the argument); both "
    "ends are run in tests/test_attainable_cap.py",
}
