"""Fuzz specifications for the family of bounds (infonce_lib.bound_family), the critics, Adam,
the caps, the report helpers, the published figures and the exercise checkers.

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import infonce_lib as il
from infonce_lib.temperature import infonce_beta_derivatives, positive_margins
from tests.fuzzing import (
    _SCORE_DIMS,
    _SCORES,
    POS,
    Arr,
    Bad,
    Bool,
    Choice,
    Fixed,
    Func,
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


# A correct solution for each exercise checker (from its docstring): the checker runs its
# cases on it; verbose is a boolean option (only real booleans: "False" is truthy).
_SOLUTIONS = {
    "check_nce_objective": il.nce_objective,
    "check_infonce_bound": lambda F: il.infonce_bound(np.asarray(F)[None])[0],
    "check_nwj_bound": lambda F: float(il.nwj_bound(np.asarray(F)[None])[0]),
    "check_min_batch_size": lambda info: math.ceil(math.exp(info)),
    "check_attainable_cap": il.attainable_cosine_cap,
    "check_infonce_curvature": lambda S, beta: infonce_beta_derivatives(S[None], beta).second[0],
    "check_zero_temperature_limit": lambda S: float(
        np.mean(np.maximum(0.0, -positive_margins(S[None])[0]))
    ),
    "check_warped_log_density": il.warped_density_mistakes()["right"],
}


def _accepts_the_solution(out) -> None:
    assert out is True, f"the checker rejected a correct solution: returned {out!r}"


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
    **{
        name: (
            Spec(
                getattr(il, name),
                dict(fn=Func(solution), verbose=Bool(False)),
                check=_accepts_the_solution,
                max_examples=20,
            ),
        )
        for name, solution in _SOLUTIONS.items()
    },
    "Check": (
        Spec(
            il.Check,
            dict(description=Fixed("x is positive"), passed=Bool(True), detail=Fixed("x = 1")),
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
    "nce_objective_mistakes": "the checker's catalogue of mistakes (no arguments)",
    "infonce_bound_mistakes": "the checker's catalogue of mistakes (no arguments)",
    "nwj_mistakes": "the checker's catalogue of mistakes (no arguments)",
    "min_batch_size_mistakes": "the checker's catalogue of mistakes (no arguments)",
    "temperature_mistakes": "the checkers' catalogue of mistakes (no arguments)",
    "warped_density_mistakes": "the checker's catalogue of mistakes (no arguments)",
}


NO_EXTREME: dict[str, str] = {
    "maximise_infonce_over_unit_embeddings": "an optimiser whose temperatures are limited to "
    "caps.TEMPERATURE_RANGE (1e-4 to 1e4; 1e-8 and 1e8 are refused, naming the argument); both "
    "ends are run in tests/test_attainable_cap.py",
}
