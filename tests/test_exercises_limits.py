"""Tests for infonce_lib.exercises.limits: right answers pass, each usual mistake is named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from infonce_lib.exercises.limits import check_min_batch_size, min_batch_size_mistakes


def _flat(out: str) -> str:
    return " ".join(out.split())


def _bisect(information):
    """The smallest k with log k >= information, by doubling and then bisection."""
    lo, hi = 1, 2
    while math.log(hi) < information:
        hi *= 2
    while lo < hi:
        mid = (lo + hi) // 2
        if math.log(mid) >= information:
            hi = mid
        else:
            lo = mid + 1
    return lo


@pytest.mark.parametrize(
    "fn",
    [
        lambda I: math.ceil(math.exp(I)),
        lambda I: int(np.ceil(np.exp(I))),
        lambda I: float(np.ceil(np.exp(I))),  # a whole float passes too
        lambda I: next(k for k in range(1, 10**6) if math.log(k) >= I),
        # float32 throughout: e^I in single precision, rounded up
        lambda I: int(np.ceil(np.exp(np.float32(I), dtype=np.float32))),
        # the inequality solved on whole numbers, by bisection
        _bisect,
    ],
)
def test_right_answers_pass(fn, capsys):
    assert check_min_batch_size(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.count("PASS") == 6 and "All cases pass." in out


# mistake -> words that some FAIL line must contain
EXPECTED = {
    "bits": "2^I",
    "decimal": "10^I",
    "rounds down": "rounded down",
    "rounds to nearest": "to the nearest",
    "one too many": "one too many",
    "squares": "e^(2I)",
    "returns I": "invert log K >= I",
    "not rounded": "whole number of pairs",
    "strict inequality": "strict inequality",
    "overflows": "returned nan",
}


def test_every_mistake_is_listed():
    assert set(min_batch_size_mistakes()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_mistake_is_named(name, capsys):
    assert check_min_batch_size(min_batch_size_mistakes()[name]) is False
    out = _flat(capsys.readouterr().out)
    assert EXPECTED[name] in out, out
    assert "see the hints above" not in out
    assert "each FAIL line says what went wrong" in out


def test_the_boundary_case_separates_ge_from_gt(capsys):
    # At I = log 32 exactly, ">=" gives 32 and ">" gives 33; everywhere else they agree, so
    # the strict inequality fails there alone, and is named there.
    check_min_batch_size(min_batch_size_mistakes()["strict inequality"])
    lines = capsys.readouterr().out.splitlines()
    fails = [line for line in lines if line.startswith("FAIL")]
    assert len(fails) == 1 and fails[0].startswith("FAIL  I = log 32 = 3.465736 nats"), lines
    assert "expected 32, got 33" in fails[0]


def test_inf_and_nan_fail_with_a_hint(capsys):
    for bad in (math.inf, math.nan, np.float32("nan")):
        assert check_min_batch_size(lambda I, bad=bad: bad) is False
        out = _flat(capsys.readouterr().out)
        assert out.count("FAIL I =") == 6 and "whole number of pairs, e^I rounded up" in out


def test_ambiguous_values_are_not_named(capsys):
    # At I = 0.5, e^(2I) rounds up to 3, as does ceil(e^I) + 1: neither hint is given there.
    check_min_batch_size(min_batch_size_mistakes()["squares"])
    first = _flat(capsys.readouterr().out).split(" FAIL ")[0]
    assert first.startswith("FAIL I = 0.5 nats: expected 2 (log 2 = 0.6931), got 3")
    assert "one too many" not in first and "e^(2I)" not in first


def test_not_attempted_quiet_and_errors(capsys):
    def stub(information):
        raise NotImplementedError

    assert check_min_batch_size(stub) is False
    assert "not attempted yet" in capsys.readouterr().out
    assert check_min_batch_size(lambda I: 7, verbose=False) is False
    assert capsys.readouterr().out == ""
    assert check_min_batch_size(lambda I: "eight") is False
    assert "not a number" in capsys.readouterr().out
    assert check_min_batch_size(lambda I: 1 / 0) is False
    assert "raised ZeroDivisionError" in capsys.readouterr().out
    assert check_min_batch_size(lambda I: math.inf) is False
    assert "whole number" in capsys.readouterr().out
    with pytest.raises(TypeError, match="fn must be a callable"):
        check_min_batch_size(None)
