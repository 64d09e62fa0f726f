"""Tests for infonce_lib.exercises.temperature: each checker passes right answers written
independently of the library, recognises each typical mistake by name, and reports an
unattempted exercise without raising."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp, softmax

from infonce_lib import attainable_cosine_cap
from infonce_lib.exercises import temperature as ex


def _flat(out: str) -> str:
    return " ".join(line.strip() for line in out.splitlines())


# ---------------------------------------------------------------- right answers


def reader_cap(K, tau):
    a = K / ((K - 1) * tau)
    return math.log(K) - math.log1p((K - 1) * math.exp(-a))


def reader_cap_logaddexp(K, tau):
    return float(math.log(K) - np.logaddexp(0.0, math.log(K - 1) - K / ((K - 1) * tau)))


def reader_curvature(S, beta):
    P = softmax(beta * S, axis=1)
    m = (P * S).sum(axis=1, keepdims=True)
    return -float(np.mean((P * (S - m) ** 2).sum(axis=1)))


def reader_curvature_fd(S, beta):
    # second difference of log K + mean_i (beta S_ii - logsumexp_j beta S_ij)
    def f(b):
        return np.mean(b * np.diag(S) - logsumexp(b * S, axis=1))

    h = 1e-3 * beta
    return (f(beta + h) - 2 * f(beta) + f(beta - h)) / h**2


def reader_limit(S):
    K = S.shape[0]
    worst = [max(S[i, j] for j in range(K) if j != i) for i in range(K)]
    return sum(max(0.0, w - S[i, i]) for i, w in enumerate(worst)) / K


@pytest.mark.parametrize(
    ("check", "fn"),
    [
        (ex.check_attainable_cap, reader_cap),
        (ex.check_attainable_cap, reader_cap_logaddexp),
        (ex.check_attainable_cap, attainable_cosine_cap),
        (ex.check_infonce_curvature, reader_curvature),
        (ex.check_zero_temperature_limit, reader_limit),
    ],
)
def test_right_answers_pass(check, fn, capsys):
    assert check(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out and "All cases pass." in out


def test_a_finite_difference_is_not_good_enough():
    # 1e-9 relative is the bar: a second difference is close but not exact.
    assert ex.check_infonce_curvature(reader_curvature_fd, verbose=False) is False


# ---------------------------------------------------------------- the mistakes


EXPECTED_HINTS = {
    "cap: score-range gap 2": "score-range cap",
    "cap: gap 1": "gap of 1",
    "cap: gap upside down": "upside down",
    "cap: tau multiplied": "tau multiplies",
    "cap: K negatives": "counts K negatives",
    "cap: log K missing": "log K is missing",
    "cap: bits": "in bits",
    "cap: upper bound": "simple upper bound",
    "cap: overflow": "exp overflowed",
    "curvature: sign flipped": "sign is flipped",
    "curvature: uncentred": "weighted mean of S^2",
    "curvature: sum over rows": "sum over rows",
    "curvature: first derivative": "first derivative",
    "curvature: wrong axis": "wrong axis",
    "curvature: negatives only": "only the negatives",
    "curvature: derivative in tau": "derivative in tau",
    "limit: no hinge": "hinge is missing",
    "limit: mean negative": "mean negative",
    "limit: sign flipped": "sign is flipped",
    "limit: sum over rows": "sum over rows",
    "limit: per-row output": "not one per row",
}


def _checker(key):
    return {
        "cap": ex.check_attainable_cap,
        "curvature": ex.check_infonce_curvature,
        "limit": ex.check_zero_temperature_limit,
    }[key.split(":")[0]]


def test_every_mistake_has_an_expected_hint():
    assert set(ex.temperature_mistakes()) == set(EXPECTED_HINTS)


@pytest.mark.parametrize("key", sorted(EXPECTED_HINTS))
def test_each_mistake_fails_and_is_named(key, capsys):
    fn = ex.temperature_mistakes()[key]
    assert _checker(key)(fn) is False
    out = _flat(capsys.readouterr().out)
    assert EXPECTED_HINTS[key] in out
    assert "see the hints above" not in out
    assert "cases fail." in out


def test_overflow_gets_the_stable_rewrite_hint(capsys):
    def overflowing(K, tau):
        a = K / ((K - 1) * tau)
        with np.errstate(over="ignore"):
            e = np.exp(np.float64(a))
        return float(np.log(K * e / (e + K - 1)))

    assert ex.check_attainable_cap(overflowing) is False
    out = _flat(capsys.readouterr().out)
    assert "exp overflowed" in out and "log1p" in out


def test_curvature_overflow_hint(capsys):
    def unshifted(S, beta):
        with np.errstate(over="ignore", invalid="ignore"):
            E = np.exp(beta * S)
            P = E / E.sum(axis=1, keepdims=True)
        m = (P * S).sum(axis=1, keepdims=True)
        return -float(np.mean((P * (S - m) ** 2).sum(axis=1)))

    assert ex.check_infonce_curvature(unshifted) is False
    assert "subtract each row's largest" in _flat(capsys.readouterr().out)


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
    with pytest.raises(TypeError, match="callable"):
        ex.check_attainable_cap(3.0)


def test_unknown_wrong_answer_gets_a_generic_but_real_hint(capsys):
    assert ex.check_attainable_cap(lambda K, tau: 0.123) is False
    out = _flat(capsys.readouterr().out)
    assert "no usual mistake gives this value" in out


def test_inputs_are_copies(capsys):
    # a reader's function that scribbles on its input does not change the next case
    def scribbler(S):
        value = reader_limit(S)
        S[:] = 0.0
        return value

    assert ex.check_zero_temperature_limit(scribbler, verbose=False) is True
