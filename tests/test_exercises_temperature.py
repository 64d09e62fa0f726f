"""Tests for infonce_lib.exercises.temperature: each checker passes right answers written
independently of the library (one of them in float32 or otherwise differently written), fails
each plausible wrong answer below (written here, not taken from the checker) with the hint
that names it, fails an answer that is NaN or infinite with a hint, tells an answer that is
right to a few digits only that it is imprecise, and reports an unattempted exercise
without raising."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp, softmax

from infonce_lib import attainable_cosine_cap
from infonce_lib.exercises import temperature as ex


def _flat(out: str) -> str:
    return " ".join(line.strip() for line in out.splitlines())


def _fails_with(check, fn, hint, capsys):
    """The checker rejects ``fn``, and its report names ``hint`` (and no generic advice)."""
    assert check(fn) is False
    out = _flat(capsys.readouterr().out)
    assert hint in out, out
    assert "no usual mistake gives this value" not in out, out
    assert "cases fail." in out


# ---------------------------------------------------------------- the attainable cap


def cap_right(K, tau):
    a = K / ((K - 1) * tau)
    return math.log(K) - math.log1p((K - 1) * math.exp(-a))


def cap_right_logaddexp(K, tau):
    return float(math.log(K) - np.logaddexp(0.0, math.log(K - 1) - K / ((K - 1) * tau)))


def cap_right_float32(K, tau):
    a = np.float32(K) / (np.float32(K - 1) * np.float32(tau))
    return float(np.log(np.float32(K)) - np.log1p(np.float32(K - 1) * np.exp(-a)))


def _cap(K, tau, gap, negatives, log_k=True):
    value = -math.log1p(negatives * math.exp(-gap / tau))
    return value + math.log(K) if log_k else value


CAP_WRONG = {
    "score-range gap": (lambda K, tau: _cap(K, tau, 2.0, K - 1), "score-range cap"),
    "population cap": (lambda K, tau: _cap(K, tau, 1.0, K - 1), "this is the population cap"),
    "gap upside down": (lambda K, tau: _cap(K, tau, (K - 1) / K, K - 1), "upside down"),
    "tau multiplied": (lambda K, tau: _cap(K, 1 / tau, K / (K - 1), K - 1), "tau multiplies"),
    "K negatives": (lambda K, tau: _cap(K, tau, K / (K - 1), K), "counts K negatives"),
    "log K missing": (
        lambda K, tau: _cap(K, tau, K / (K - 1), K - 1, log_k=False),
        "log K is missing",
    ),
    "bits": (lambda K, tau: _cap(K, tau, K / (K - 1), K - 1) / math.log(2), "in bits"),
    "upper bound": (
        lambda K, tau: min(math.log(K), K / ((K - 1) * tau)),
        "simple upper bound",
    ),
    "no 1 in the denominator": (
        lambda K, tau: math.log(K) - math.log((K - 1) * math.exp(-K / ((K - 1) * tau))),
        "the 1 is missing",
    ),
    "min(log K, 1/tau)": (lambda K, tau: min(math.log(K), 1 / tau), "min(log K, 1/tau)"),
    "log10": (
        lambda K, tau: math.log10(K) - math.log10(1 + (K - 1) * math.exp(-K / ((K - 1) * tau))),
        "decimal digits",
    ),
    "log(K - 1) for log K": (
        lambda K, tau: _cap(K, tau, K / (K - 1), K - 1) - math.log(K) + math.log(K - 1),
        "the first term is log(K - 1)",
    ),
    "K - 1 in place of K": (
        lambda K, tau: _cap(K - 1, tau, (K - 1) / (K - 2), K - 2),
        "the cap for K - 1 pairs",
    ),
    "overflow (math.exp raises)": (
        lambda K, tau: math.log(
            K * math.exp(K / ((K - 1) * tau)) / (math.exp(K / ((K - 1) * tau)) + K - 1)
        ),
        "exp overflowed",
    ),
}


def cap_overflow_nan(K, tau):
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(np.float64(K / ((K - 1) * tau)))
        return float(np.log(K * e / (e + K - 1)))  # inf / inf = nan at tau = 1e-3


@pytest.mark.parametrize("fn", [cap_right, cap_right_logaddexp, cap_right_float32])
def test_cap_right_answers_pass(fn, capsys):
    assert ex.check_attainable_cap(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out and "All cases pass." in out


@pytest.mark.parametrize("name", sorted(CAP_WRONG))
def test_cap_wrong_answers_fail_with_their_hint(name, capsys):
    fn, hint = CAP_WRONG[name]
    _fails_with(ex.check_attainable_cap, fn, hint, capsys)


def test_cap_nan_from_overflow_fails_with_the_stable_rewrite(capsys):
    _fails_with(ex.check_attainable_cap, cap_overflow_nan, "log1p((K-1) exp(-a))", capsys)


def test_cap_every_case_catches_every_gap_mistake():
    # The overflow temperature alone could not (every exp(-a) form gives log K there): each
    # case also has a temperature at which each mistake differs from the cap.
    for K, taus in ex._CAP_CASES:
        want = np.array([attainable_cosine_cap(K, t) for t in taus])
        for name, (fn, _) in CAP_WRONG.items():
            if "overflow" in name:
                continue
            try:
                got = np.array([fn(K, t) for t in taus])
            except ValueError:  # log(0) for a form whose exp(-a) underflows: a failure too
                continue
            assert not np.allclose(got, want, rtol=1e-6, atol=0), (name, K, taus)


def test_cap_rounded_answer_is_right_but_imprecise(capsys):
    assert ex.check_attainable_cap(lambda K, tau: round(cap_right(K, tau), 4)) is False
    assert "right but imprecise" in _flat(capsys.readouterr().out)


# ---------------------------------------------------------------- the curvature


def curvature_right(S, beta):
    P = softmax(beta * S, axis=1)
    m = (P * S).sum(axis=1, keepdims=True)
    return -float(np.mean((P * (S - m) ** 2).sum(axis=1)))


def curvature_right_pairwise(S, beta):
    # the variance as half the weighted mean squared difference of two independent draws
    total = 0.0
    for row in S:
        p = softmax(beta * row)
        diff = row[:, None] - row[None, :]
        total += 0.5 * float(p @ (diff**2) @ p)
    return -total / len(S)


def curvature_right_float32(S, beta):
    # a careful single-precision answer: shifted softmax and centred variance, all in float32
    S = np.asarray(S, dtype=np.float32)
    L = np.float32(beta) * S
    P = np.exp(L - L.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    m = (P * S).sum(axis=1, keepdims=True)
    return -float(np.mean((P * (S - m) ** 2).sum(axis=1)))


def _softmax_stable(L, axis):
    E = np.exp(L - L.max(axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)


def _var(P, S):
    m = (P * S).sum(axis=1, keepdims=True)
    return (P * (S - m) ** 2).sum(axis=1)


def _first(S, beta):
    P = _softmax_stable(beta * S, 1)
    return float(np.mean(np.diag(S) - (P * S).sum(axis=1)))


def _negatives_only(S, beta):
    L = beta * S.copy()
    np.fill_diagonal(L, -np.inf)
    return -float(_var(_softmax_stable(L, 1), S).mean())


CURVATURE_WRONG = {
    "sign flipped": (lambda S, b: -curvature_right(S, b), "sign is flipped"),
    "uncentred": (
        lambda S, b: -float(np.mean((_softmax_stable(b * S, 1) * S**2).sum(axis=1))),
        "weighted mean of S^2",
    ),
    "sum over rows": (lambda S, b: curvature_right(S, b) * len(S), "sum over rows"),
    "first derivative": (_first, "first derivative"),
    "softmax down the columns": (
        lambda S, b: -float(_var(_softmax_stable(b * S.T, 1), S.T).mean()),
        "wrong axis",
    ),
    "negatives only": (_negatives_only, "only the negatives"),
    "derivative in tau": (
        lambda S, b: b**4 * curvature_right(S, b) + 2 * b**3 * _first(S, b),
        "derivative in tau",
    ),
    "unweighted variance": (lambda S, b: -float(np.var(S, axis=1).mean()), "plain variances"),
    "variance of the logits": (
        lambda S, b: -float(_var(_softmax_stable(b * S, 1), b * S).mean()),
        "variance of the logits",
    ),
}


def curvature_unshifted(S, beta):
    with np.errstate(over="ignore", invalid="ignore"):
        E = np.exp(beta * S)
        P = E / E.sum(axis=1, keepdims=True)
    m = (P * S).sum(axis=1, keepdims=True)
    return -float(np.mean((P * (S - m) ** 2).sum(axis=1)))


def _bound(S, beta):
    return float(np.mean(beta * np.diag(S) - logsumexp(beta * S, axis=1)))


def curvature_finite_difference(S, beta, step=0.05):
    h = step * beta
    return (_bound(S, beta + h) - 2 * _bound(S, beta) + _bound(S, beta - h)) / h**2


@pytest.mark.parametrize("fn", [curvature_right, curvature_right_pairwise, curvature_right_float32])
def test_curvature_right_answers_pass(fn, capsys):
    assert ex.check_infonce_curvature(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out and "All cases pass." in out


@pytest.mark.parametrize("name", sorted(CURVATURE_WRONG))
def test_curvature_wrong_answers_fail_with_their_hint(name, capsys):
    fn, hint = CURVATURE_WRONG[name]
    _fails_with(ex.check_infonce_curvature, fn, hint, capsys)


def test_curvature_overflow_fails_with_the_shift_hint(capsys):
    _fails_with(ex.check_infonce_curvature, curvature_unshifted, "subtract each row's", capsys)


def test_curvature_tiny_case_rejects_zero_and_the_wrong_sign():
    S, beta = ex._curvature_batches()[-1]
    want = ex.infonce_beta_derivatives(S[None], beta).second[0]
    assert beta == 1000.0 and -1e-5 < want < 0  # tiny, yet checked relatively
    for wrong in (0.0, -want, 0.5 * want):
        assert ex.check_infonce_curvature(lambda s, b, w=wrong: w, verbose=False) is False


def test_curvature_cases_keep_the_scale_mistakes_apart():
    # beta^2 = K would make the variance of the logits (beta^2 times the answer) equal the
    # sum over rows (K times it): no case may have that coincidence
    for S, beta in ex._curvature_batches():
        assert not math.isclose(beta**2, len(S), rel_tol=1e-3)


def test_curvature_tolerance_is_loose_only_where_float32_needs_it():
    rtols = [
        ex._curvature_rtol(S, b, ex.infonce_beta_derivatives(S[None], b).second[0])
        for S, b in ex._curvature_batches()
    ]
    assert rtols[0] < 2e-6 and rtols[1] < 2e-5 and 1e-5 < rtols[2] < 1e-2


def curvature_uncentred_float32(S, beta):
    # single precision without centring: the difference of two close numbers loses digits
    S = np.asarray(S, dtype=np.float32)
    P = softmax(np.float32(beta) * S, axis=1).astype(np.float32)
    m = (P * S).sum(axis=1)
    return -float(np.mean((P * S**2).sum(axis=1) - m**2))


def test_an_uncentred_float32_answer_fails(capsys):
    assert ex.check_infonce_curvature(curvature_uncentred_float32) is False
    assert "FAIL" in capsys.readouterr().out


def test_a_coarse_finite_difference_is_right_but_imprecise(capsys):
    assert ex.check_infonce_curvature(curvature_finite_difference) is False
    out = _flat(capsys.readouterr().out)
    assert "right but imprecise" in out and "finite difference" in out
    assert "no usual mistake gives this value" not in out


# ---------------------------------------------------------------- the limit tau -> 0


def limit_right(S):
    K = S.shape[0]
    worst = [max(S[i, j] for j in range(K) if j != i) for i in range(K)]
    return sum(max(0.0, w - S[i, i]) for i, w in enumerate(worst)) / K


def limit_right_no_hinge_needed(S):
    # the largest score of the whole row, positive included, is never below the positive
    return float(np.mean(S.max(axis=1) - np.diag(S)))


def limit_right_float32(S):
    S = np.asarray(S, dtype=np.float32)
    N = S.copy()
    np.fill_diagonal(N, -np.inf)
    return float(np.mean(np.maximum(np.float32(0), N.max(axis=1) - np.diag(S))))


def _hardest(S, axis=1):
    N = np.array(S, dtype=float)
    np.fill_diagonal(N, -np.inf)
    return N.max(axis=axis)


LIMIT_WRONG = {
    "no hinge": (lambda S: float(np.mean(_hardest(S) - np.diag(S))), "hinge is missing"),
    "mean negative": (
        lambda S: float(
            np.mean(np.maximum(0, (S.sum(axis=1) - np.diag(S)) / (len(S) - 1) - np.diag(S)))
        ),
        "mean negative",
    ),
    "sign flipped": (
        lambda S: float(np.mean(np.maximum(0, np.diag(S) - _hardest(S)))),
        "sign is flipped",
    ),
    "sum over rows": (
        lambda S: float(np.sum(np.maximum(0, _hardest(S) - np.diag(S)))),
        "sum over rows",
    ),
    "one value per row": (
        lambda S: np.maximum(0, _hardest(S) - np.diag(S)),
        "not one per row",
    ),
    "hardest down a column": (
        lambda S: float(np.mean(np.maximum(0, _hardest(S, axis=0) - np.diag(S)))),
        "taken down a column",
    ),
    "a hinge per negative": (
        lambda S: float(
            np.sum(np.maximum(0, S - np.diag(S)[:, None]) * ~np.eye(len(S), dtype=bool)) / len(S)
        ),
        "a hinge for every negative",
    ),
    "diagonal masked with 0": (
        lambda S: float(
            np.mean(np.maximum(0, (S * (1 - np.eye(len(S)))).max(axis=1) - np.diag(S)))
        ),
        "masked with 0",
    ),
    "mean over the beaten rows": (
        lambda S: float(np.mean([m for m in np.maximum(0, _hardest(S) - np.diag(S)) if m > 0])),
        "beaten rows only",
    ),
    "divided by K - 1": (
        lambda S: float(np.sum(np.maximum(0, _hardest(S) - np.diag(S))) / (len(S) - 1)),
        "divides by K - 1",
    ),
    "easiest negative": (
        lambda S: float(np.mean(np.maximum(0, (S + 9 * np.eye(len(S))).min(axis=1) - np.diag(S)))),
        "easiest negative",
    ),
    "squared hinge": (
        lambda S: float(np.mean(np.maximum(0, _hardest(S) - np.diag(S)) ** 2)),
        "hinge is squared",
    ),
    "hardest of the whole batch": (
        lambda S: float(np.mean(np.maximum(0, S[~np.eye(len(S), dtype=bool)].max() - np.diag(S)))),
        "of the whole batch",
    ),
}


def limit_nan_mask(S):
    N = S - np.inf * np.eye(len(S))  # 0 * inf = nan off the diagonal
    return float(np.mean(np.maximum(0, N.max(axis=1) - np.diag(S))))


def limit_at_small_tau(S, tau=1e-2):
    return float(np.mean(tau * logsumexp(S / tau, axis=1) - np.diag(S)))


@pytest.mark.parametrize("fn", [limit_right, limit_right_no_hinge_needed, limit_right_float32])
def test_limit_right_answers_pass(fn, capsys):
    assert ex.check_zero_temperature_limit(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out and "All cases pass." in out


@pytest.mark.parametrize("name", sorted(LIMIT_WRONG))
def test_limit_wrong_answers_fail_with_their_hint(name, capsys):
    fn, hint = LIMIT_WRONG[name]
    _fails_with(ex.check_zero_temperature_limit, fn, hint, capsys)


def test_limit_nan_fails_with_the_masking_hint(capsys):
    _fails_with(ex.check_zero_temperature_limit, limit_nan_mask, "0 * inf = nan", capsys)


@pytest.mark.parametrize("tau", [1e-2, 1e-3])
def test_limit_at_a_small_tau_is_right_but_imprecise(tau, capsys):
    # at 1e-3 too: the tie at a row's maximum keeps tau L above the limit by tau log 2 / K
    assert ex.check_zero_temperature_limit(lambda S: limit_at_small_tau(S, tau)) is False
    out = _flat(capsys.readouterr().out)
    assert "right but imprecise" in out and "take the limit exactly" in out


def limit_overflow(S, tau=1e-10):
    with np.errstate(over="ignore", invalid="ignore"):
        E = np.exp(S / tau)  # no shift: inf, and inf / inf = nan
        return float(np.mean(-tau * np.log(np.diag(E) / E.sum(axis=1))))


def test_limit_overflow_fails_with_the_shift_hint(capsys):
    _fails_with(ex.check_zero_temperature_limit, limit_overflow, "overflows to inf", capsys)


# ---------------------------------------------------------------- all three checkers


EXPECTED_HINTS = {
    "cap: score-range gap 2": "score-range cap",
    "cap: population cap": "this is the population cap",
    "cap: gap upside down": "upside down",
    "cap: tau multiplied": "tau multiplies",
    "cap: K negatives": "counts K negatives",
    "cap: log K missing": "log K is missing",
    "cap: bits": "in bits",
    "cap: upper bound": "simple upper bound",
    "cap: positive's term missing": "the 1 is missing",
    "cap: overflow": "exp overflowed",
    "cap: simple bound 1/tau": "min(log K, 1/tau)",
    "cap: log10": "decimal digits",
    "cap: log(K - 1)": "the first term is log(K - 1)",
    "cap: K - 1 for K": "the cap for K - 1 pairs",
    "curvature: sign flipped": "sign is flipped",
    "curvature: uncentred": "weighted mean of S^2",
    "curvature: sum over rows": "sum over rows",
    "curvature: first derivative": "first derivative",
    "curvature: wrong axis": "wrong axis",
    "curvature: negatives only": "only the negatives",
    "curvature: derivative in tau": "derivative in tau",
    "curvature: unweighted variance": "plain variances",
    "curvature: variance of the logits": "variance of the logits",
    "limit: no hinge": "hinge is missing",
    "limit: mean negative": "mean negative",
    "limit: sign flipped": "sign is flipped",
    "limit: sum over rows": "sum over rows",
    "limit: per-row output": "not one per row",
    "limit: column-wise hardest": "taken down a column",
    "limit: every negative": "a hinge for every negative",
    "limit: diagonal masked with 0": "masked with 0",
    "limit: mean over beaten rows": "beaten rows only",
    "limit: divided by K - 1": "divides by K - 1",
    "limit: easiest negative": "easiest negative",
    "limit: squared hinge": "hinge is squared",
    "limit: batch-wide hardest": "of the whole batch",
    "cap: integer division": "integer division",
    "cap: gap doubled": "2K/(K-1)",
    "curvature: beta left out": "beta is left out",
    "curvature: beta used as tau": "used as a temperature",
    "limit: FaceNet margin 0.2": "adds a margin",
    "limit: second-largest of the row": "second-largest score",
}


def _checker(key):
    return {
        "cap": ex.check_attainable_cap,
        "curvature": ex.check_infonce_curvature,
        "limit": ex.check_zero_temperature_limit,
    }[key.split(":")[0]]


def test_every_listed_mistake_has_an_expected_hint():
    assert set(ex.temperature_mistakes()) == set(EXPECTED_HINTS)


@pytest.mark.parametrize("key", sorted(EXPECTED_HINTS))
def test_the_listed_mistakes_fail_and_are_named(key, capsys):
    _fails_with(_checker(key), ex.temperature_mistakes()[key], EXPECTED_HINTS[key], capsys)


@pytest.mark.parametrize(
    "check", [ex.check_attainable_cap, ex.check_infonce_curvature, ex.check_zero_temperature_limit]
)
def test_starter_is_reported_not_raised(check, capsys):
    def starter(*args):
        raise NotImplementedError

    assert check(starter) is False
    out = capsys.readouterr().out
    assert "Not attempted yet" in out and "FAIL" not in out


def test_errors_are_reported_and_non_callables_rejected(capsys):
    def broken(K, tau):
        return 1 / 0

    assert ex.check_attainable_cap(broken) is False
    assert "ZeroDivisionError" in capsys.readouterr().out
    for check in (ex.check_attainable_cap, ex.check_infonce_curvature):
        with pytest.raises(TypeError, match="callable"):
            check(3.0)


def test_unknown_wrong_answer_gets_a_generic_but_real_hint(capsys):
    assert ex.check_attainable_cap(lambda K, tau: 0.123) is False
    out = _flat(capsys.readouterr().out)
    assert "no usual mistake gives this value" in out


def test_inputs_are_copies():
    # a reader's function that scribbles on its input does not change the next case
    def scribbler(S):
        value = limit_right(S)
        S[:] = 0.0
        return value

    assert ex.check_zero_temperature_limit(scribbler, verbose=False) is True
