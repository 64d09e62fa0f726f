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
        # e ** I (math.e ** log 32 is 31.999999999999993, still rounded up to 32)
        lambda I: math.ceil(math.e**I),
        # a 0-d array, as np.ceil of a 0-d array gives
        lambda I: np.ceil(np.exp(np.asarray(I))),
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
    "one too few": "one too few: ceil(e^I) - 1 pairs have log K < I",
    "one too many": "one too many",
    "squares": "e^(2I)",
    "halves": "e^(I/2)",
    "rounds I first": "e to the power of a rounded I",
    "returns I": "invert log K >= I",
    "returns text": "not a number (text",
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


def _fail_lines(fn, capsys) -> dict[str, str]:
    """The checker's FAIL lines for ``fn``, each flattened, keyed by the case's label."""
    check_min_batch_size(fn)
    out = capsys.readouterr().out
    blocks = out.replace("\n      ", " ").splitlines()
    return {
        line.split(":")[0][6:]: " ".join(line.split()) for line in blocks if line.startswith("FAIL")
    }


def test_slips_that_give_one_number_are_named_together_and_told_apart_elsewhere(capsys):
    mistakes = min_batch_size_mistakes()
    # Rounding down and one pair too few agree wherever e^I is not whole (both name both),
    # and differ at I = log 32: floor(32) is right, ceil(32) - 1 = 31 is named alone.
    down = _fail_lines(mistakes["rounds down"], capsys)
    few = _fail_lines(mistakes["one too few"], capsys)
    for lines in (down, few):
        assert (
            "rounded down" in lines["I = 2.0 nats"] and "one pair too few" in lines["I = 2.0 nats"]
        )
    assert not any(k.startswith("I = log 32") for k in down)
    boundary = next(v for k, v in few.items() if k.startswith("I = log 32"))
    assert "got 31: one too few" in boundary and "rounded down" not in boundary
    # exp(ceil(I)) gives ceil(e^I) + 1 at I = 0.01: both are named there, and only the
    # rounding of I at log 32 (55); one too many alone at I = 2 (9, where exp(ceil(I)) is right).
    first = _fail_lines(mistakes["rounds I first"], capsys)
    many = _fail_lines(mistakes["one too many"], capsys)
    for lines in (first, many):
        assert "one pair too many" in lines["I = 0.01 nats"]
        assert "e to the power of I rounded" in lines["I = 0.01 nats"]
    assert "I = 2.0 nats" not in first and "got 9: one too many" in many["I = 2.0 nats"]
    at_32 = next(v for k, v in first.items() if k.startswith("I = log 32"))
    assert "got 55: this is e to the power of a rounded I" in at_32


def test_each_mistake_gets_a_hint_of_its_own_in_some_case(capsys):
    # Every listed mistake gets a hint of its own (not only a place among "several slips")
    # in at least one case; for rounding down it is the hint it shares with one pair too
    # few, its only twin, which has the same remedy.
    for name, fn in min_batch_size_mistakes().items():
        lines = _fail_lines(fn, capsys)
        alone = [v for v in lines.values() if "several slips" not in v]
        assert alone, (name, lines)


def test_not_attempted_quiet_and_errors(capsys):
    def stub(information):
        raise NotImplementedError

    assert check_min_batch_size(stub) is False
    assert "not attempted yet" in capsys.readouterr().out
    assert check_min_batch_size(lambda I: 7, verbose=False) is False
    assert capsys.readouterr().out == ""
    assert check_min_batch_size(lambda I: "eight") is False
    assert "not a number" in capsys.readouterr().out
    for text in (lambda I: str(math.ceil(math.exp(I))), lambda I: f"{math.ceil(math.exp(I))}"):
        assert check_min_batch_size(text) is False  # the right number, as text
        assert _flat(capsys.readouterr().out).count("not a number (text") == 6
    assert check_min_batch_size(lambda I: True) is False  # a boolean is not a batch size
    assert "not a number" in capsys.readouterr().out
    assert check_min_batch_size(lambda I: 1 / 0) is False
    assert "raised ZeroDivisionError" in capsys.readouterr().out
    assert check_min_batch_size(lambda I: math.inf) is False
    assert "whole number" in capsys.readouterr().out
    with pytest.raises(TypeError, match="fn must be a callable"):
        check_min_batch_size(None)
