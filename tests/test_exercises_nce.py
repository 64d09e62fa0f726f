"""Tests for infonce_lib.exercises.nce: chapter 1's checker passes right answers and names
each mistake."""

from __future__ import annotations

import math

import numpy as np
import pytest

from infonce_lib import nce_objective
from infonce_lib.exercises.nce import _cases, _close, check_nce_objective, nce_objective_mistakes


def _reports(out: str) -> list[str]:
    joined = " ".join(line.strip() for line in out.splitlines())
    return joined.replace("PASS  ", "\nPASS  ").replace("FAIL  ", "\nFAIL  ").splitlines()


def plain_solution(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    """What a reader might write: G, log sigma through logaddexp, the sum divided by T_d."""
    G_x = np.asarray(lm_x, dtype=float) - np.asarray(ln_x, dtype=float)
    G_y = np.asarray(lm_y, dtype=float) - np.asarray(ln_y, dtype=float)
    a = math.log(nu)
    total = -np.logaddexp(0, -(G_x - a)).sum() - np.logaddexp(0, -(a - G_y)).sum()
    return float(total / G_x.size)


@pytest.mark.parametrize("fn", [nce_objective, plain_solution])
def test_correct_implementations_pass(fn, capsys):
    assert check_nce_objective(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.count("PASS") == len(_cases())
    assert out.splitlines()[-1] == "All cases pass."


# Each mistake, the first case that must catch it, and words its hint must contain.
EXPECTED = {
    "log nu left out": ("random, nu = 4", "not sigma(G)"),
    "log nu with the wrong sign": ("random, nu = 4", "wrong sign"),
    "noise term not weighted by nu": ("random, nu = 4", "weighted by nu"),
    "log h for the noise": ("random, nu = 4", "1 - h(y)"),
    "G swapped": ("random, nu = 4", "model minus noise"),
    "mean over all samples": ("model equals noise", "T_d + T_n"),
    "returns minus J": ("model equals noise", "minus J"),
    "log of a computed sigma": ("far from the threshold", "logaddexp"),
    "per-sample output": ("model equals noise", "not one term per sample"),
}


def test_every_typical_mistake_is_listed():
    assert set(nce_objective_mistakes()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_typical_mistake_is_named(name, capsys):
    with np.errstate(over="ignore", divide="ignore"):
        assert check_nce_objective(nce_objective_mistakes()[name]) is False
    out = capsys.readouterr().out
    case, words = EXPECTED[name]
    failing = [r for r in _reports(out) if r.startswith("FAIL")]
    assert failing[0].startswith(f"FAIL  {case}:"), failing[0]
    assert words in failing[0]
    assert out.splitlines()[-1] == "Some cases fail: see the hints above."
    assert all(len(line) <= 80 for line in out.splitlines())


def test_the_sum_without_division_is_named(capsys):
    def summed(lm_x, ln_x, lm_y, ln_y, nu=1.0):
        return plain_solution(lm_x, ln_x, lm_y, ln_y, nu) * len(lm_x)

    assert check_nce_objective(summed) is False
    assert "sum over samples" in _reports(capsys.readouterr().out)[1]


def test_known_values_are_distinct_on_every_case():
    for case in _cases():
        values = [case.expected] + [v for v, _ in case.known]
        for i, a in enumerate(values):
            for b in values[:i]:
                assert not _close(a, b), case.name


def test_the_first_case_is_the_pencil_and_paper_result():
    assert _close(_cases()[0].expected, 2 * math.log(0.5))


def test_a_stub_is_not_attempted_yet(capsys):
    def my_nce_objective(lm_x, ln_x, lm_y, ln_y, nu=1.0):
        raise NotImplementedError

    assert check_nce_objective(my_nce_objective) is False
    out = capsys.readouterr().out
    assert out.startswith("Not attempted yet: my_nce_objective")
    assert "FAIL" not in out and "hints above" not in out


def test_unknown_wrong_values_get_no_hints_above(capsys):
    def wrong(lm_x, ln_x, lm_y, ln_y, nu=1.0):
        return -0.123

    assert check_nce_objective(wrong) is False
    out = capsys.readouterr().out
    assert "hints above" not in out and "match no mistake" in out.replace("\n", " ")


def test_a_readers_errors_are_reported_not_raised(capsys):
    def needs_arrays(lm_x, ln_x, lm_y, ln_y, nu=1.0):
        return plain_solution(lm_x.astype(float), ln_x, lm_y, ln_y, nu)

    def no_default(lm_x, ln_x, lm_y, ln_y, nu):
        return plain_solution(lm_x, ln_x, lm_y, ln_y, nu)

    assert check_nce_objective(needs_arrays) is False
    assert "np.asarray" in " ".join(_reports(capsys.readouterr().out))
    assert check_nce_objective(no_default) is False
    assert "give nu a default" in " ".join(_reports(capsys.readouterr().out))


def test_quiet_mode_prints_nothing(capsys):
    assert check_nce_objective(nce_objective, verbose=False) is True
    assert check_nce_objective(nce_objective_mistakes()["returns minus J"], verbose=False) is False
    assert capsys.readouterr().out == ""


def test_not_callable_raises_type_error():
    with pytest.raises(TypeError, match="fn must be a callable"):
        check_nce_objective(42)
