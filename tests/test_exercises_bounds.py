"""Tests for infonce_lib.exercises.bounds: right answers pass, each usual mistake is named."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from infonce_lib.exercises.bounds import check_infonce_bound, infonce_bound_mistakes


def _flat(out: str) -> str:
    return " ".join(out.split())


def plain_solution(scores):
    F = np.asarray(scores, dtype=np.float64)
    m = F.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(F - m).sum(axis=1))
    return math.log(F.shape[0]) + float(np.mean(np.diag(F) - lse))


def scipy_solution(scores):
    F = np.array(scores, dtype=float)
    return float(np.log(len(F)) + np.mean(np.diag(F) - logsumexp(F, axis=1)))


@pytest.mark.parametrize("fn", [plain_solution, scipy_solution])
def test_right_answers_pass(fn, capsys):
    assert check_infonce_bound(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.count("PASS") == 6 and "All cases pass." in out


# mistake -> (the case that must catch it, words its explanation must contain)
EXPECTED = {
    "softmax over the wrong axis": ("a 5 x 5 batch", "down the columns"),
    "no log K": ("a 5 x 5 batch", "log K is missing"),
    "returns the loss": ("a 5 x 5 batch", "InfoNCE loss"),
    "sign flipped": ("a 5 x 5 batch", "sign is flipped"),
    "sums the rows": ("a 5 x 5 batch", "takes their mean"),
    "positive left out": ("a 5 x 5 batch", "leave-one-out"),
    "log(K - 1)": ("a 5 x 5 batch", "log(K - 1) was added"),
    "in bits": ("a 5 x 5 batch", "bits"),
    "no max-subtraction": ("large scores", "exp overflowed"),
    "one value per row": ("a 5 x 5 batch", "not one per row"),
    "needs an array": ("nested lists", "AttributeError"),
    "modifies its input": ("scores unchanged", "modified in place"),
}


def test_every_mistake_is_listed():
    assert set(infonce_bound_mistakes()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_mistake_is_named(name, capsys):
    assert check_infonce_bound(infonce_bound_mistakes()[name]) is False
    out = _flat(capsys.readouterr().out)
    case, words = EXPECTED[name]
    assert f"FAIL {case}:" in out
    failing = out.split(f"FAIL {case}:")[1].split(" FAIL ")[0].split(" PASS ")[0]
    assert words in failing, failing
    assert "see the hints above" not in out
    assert "each FAIL line says what went wrong" in out


def test_not_attempted(capsys):
    def stub(scores):
        raise NotImplementedError

    assert check_infonce_bound(stub) is False
    assert "not attempted yet" in capsys.readouterr().out


def test_quiet_and_unknown_wrong_answer(capsys):
    assert check_infonce_bound(lambda F: 0.123, verbose=False) is False
    assert capsys.readouterr().out == ""
    check_infonce_bound(lambda F: 0.123)
    out = _flat(capsys.readouterr().out)
    assert "got 0.123000 (random scores" in out


def test_not_a_number_and_not_callable(capsys):
    assert check_infonce_bound(lambda F: "x") is False
    assert "not a number" in capsys.readouterr().out
    with pytest.raises(TypeError, match="fn must be a callable"):
        check_infonce_bound(3.0)
