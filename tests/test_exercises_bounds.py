"""Tests for infonce_lib.exercises.bounds: right answers pass, each usual mistake is named."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import log_softmax, logsumexp

from infonce_lib.exercises.bounds import _cases, check_infonce_bound, infonce_bound_mistakes


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


def logaddexp_solution(scores):
    """Written differently: np.logaddexp.reduce along each row, the diagonal by np.trace."""
    F = np.asarray(scores, dtype=np.float64)
    log_probs_sum = np.trace(F) - np.logaddexp.reduce(F, axis=1).sum()
    return math.log(F.shape[0]) + float(log_probs_sum) / F.shape[0]


@pytest.mark.parametrize("fn", [plain_solution, scipy_solution])
def test_right_answers_pass(fn, capsys):
    assert check_infonce_bound(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.count("PASS") == 10 and "All cases pass." in out


def test_the_extreme_cases_are_what_they_claim():
    cases = {case.name: np.asarray(case.scores, dtype=np.float64) for case in _cases()}
    assert np.abs(cases["large scores"]).max() > 709.79  # a plain exp overflows
    assert np.ptp(cases["large scores"].max(axis=1)) < 700  # ... but no row is far apart
    far = cases["rows far apart"]
    assert np.ptp(far.max(axis=1)) > 746 and np.abs(far).max() < 709.78
    below = cases["positive far below"]
    assert np.max(below.max(axis=1) - np.diag(below)) > 746 and np.abs(below).max() < 709.78
    assert next(c.expected for c in _cases() if c.name == "worse than chance") < 0


# Every explanation the checker gives, by the words that identify it.
EXPLANATIONS = (
    "down the columns", "log K is missing", "InfoNCE loss", "sign is flipped",
    "takes their mean", "leave-one-out upper bound", "log(K - 1) was added", "in bits",
    "exp overflowed", "not one per row", "do not clip it", "never np.log of a softmax",
    "each row's own maximum", "and log K added", "symmetric, CLIP-style",
    "was made positive", "an epsilon inside the log", "over K - 1 rows",
    "log(K + 1) was added", "by F.size", "scores were clipped", "not saturated",
    "never added back", "base-10 logarithms",
)  # fmt: skip
# mistake -> (the case that must catch it, words its explanation must contain)
EXPECTED = {
    "softmax over the wrong axis": ("a 5 x 5 batch", "down the columns"),
    "no log K": ("a 5 x 5 batch", "log K is missing"),
    "returns the loss": ("a 5 x 5 batch", "InfoNCE loss"),
    "sign flipped": ("a 5 x 5 batch", "sign is flipped"),
    "sums the rows": ("a 5 x 5 batch", "takes their mean"),
    "positive left out": ("a 5 x 5 batch", "leave-one-out upper bound"),
    "log(K - 1)": ("a 5 x 5 batch", "log(K - 1) was added"),
    "in bits": ("a 5 x 5 batch", "in bits"),
    "no max-subtraction": ("large scores", "exp overflowed"),
    "one value per row": ("a 5 x 5 batch", "not one per row"),
    "needs an array": ("nested lists", "AttributeError"),
    "modifies its input": ("scores unchanged", "modified in place"),
    "clipped at 0": ("worse than chance", "do not clip it"),
    "log of the softmax": ("positive far below", "never np.log of a softmax"),
    "global maximum": ("rows far apart", "each row's own maximum"),
    "positive left out, log K": ("a 5 x 5 batch", "and log K added"),
    "symmetric": ("a 5 x 5 batch", "symmetric, CLIP-style"),
}
assert {words for _, words in EXPECTED.values()} <= set(EXPLANATIONS) | {
    "AttributeError", "modified in place"
}  # fmt: skip

# A later batch that a mistake also fails, with another explanation that is also right.
ALSO = {
    "no max-subtraction": "never np.log of a softmax",  # it takes the log of a ratio
    "sign flipped": "was made positive",  # on a negative value, abs() gives the same number
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
    # No batch explains the failure by another mistake.
    for line in out.split("FAIL ")[1:]:
        named = [w for w in EXPLANATIONS if w in line]
        assert all(w in (words, ALSO.get(name)) for w in named), (name, line)


# Six plausible wrong solutions a reader might write (not the library's catalogue).
def _reader_clip(scores):
    F = np.asarray(scores, dtype=float)
    return max(0.0, math.log(len(F)) + float(np.mean(np.diag(F) - logsumexp(F, axis=1))))


def _reader_log_softmax_underflow(scores):
    from scipy.special import softmax

    F = np.asarray(scores, dtype=float)
    return float(np.log(len(F)) + np.mean(np.log(np.diag(softmax(F, axis=1)))))


def _reader_global_max(scores):
    F = np.array(scores, dtype=float)
    F -= F.max()
    return float(np.log(len(F)) + np.mean(np.diag(F) - np.log(np.exp(F).sum(axis=1))))


def _reader_loo_log_k(scores):
    F = np.asarray(scores, dtype=float)
    K = len(F)
    off = np.where(np.eye(K, dtype=bool), -np.inf, F)
    return float(np.log(K) + np.mean(np.diag(F) - logsumexp(off, axis=1)))


def _reader_symmetric(scores):
    F = np.asarray(scores, dtype=float)
    d = np.diag(F)
    rows, cols = d - logsumexp(F, axis=1), d - logsumexp(F, axis=0)
    return float(np.log(len(F)) + 0.5 * (rows.mean() + cols.mean()))


def _reader_wrong_axis(scores):
    F = np.asarray(scores, dtype=float)
    return float(np.log(len(F)) + np.mean(np.diag(log_softmax(F, axis=0))))


READERS = {
    _reader_clip: ("worse than chance", "do not clip it"),
    _reader_log_softmax_underflow: ("positive far below", "never np.log of a softmax"),
    _reader_global_max: ("rows far apart", "each row's own maximum"),
    _reader_loo_log_k: ("a 5 x 5 batch", "and log K added"),
    _reader_symmetric: ("a 5 x 5 batch", "symmetric, CLIP-style"),
    _reader_wrong_axis: ("a 5 x 5 batch", "down the columns"),
}


@pytest.mark.parametrize("fn", list(READERS), ids=lambda fn: fn.__name__)
def test_a_readers_wrong_solution_fails_with_the_hint_that_names_it(fn, capsys):
    assert check_infonce_bound(fn) is False
    case, words = READERS[fn]
    out = _flat(capsys.readouterr().out)
    first = out.split("FAIL ")[1]
    assert first.startswith(f"{case}:") and words in first, first
    for line in out.split("FAIL ")[1:]:
        assert all(w == words for w in EXPLANATIONS if w in line), line


@pytest.mark.parametrize("fn", [logaddexp_solution, scipy_solution], ids=lambda f: f.__name__)
def test_two_differently_written_right_answers_pass(fn):
    assert check_infonce_bound(fn, verbose=False) is True


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


# Shortcuts a reader might take, each with the batch that must catch it first and the words
# of its hint.
def _reader_clip_500(scores):
    F = np.clip(np.asarray(scores, dtype=float), -500, 500)  # "to avoid overflow"
    return float(np.log(len(F)) + np.mean(np.diag(F) - logsumexp(F, axis=1)))


def _reader_log_k_when_large(scores):
    F = np.asarray(scores, dtype=float)
    if np.abs(F).max() > 700:  # "large scores saturate the bound"
        return math.log(len(F))
    return scipy_solution(F)


def _reader_abs(scores):
    return abs(scipy_solution(scores))  # "mutual information is never negative"


def _reader_eps(scores):
    from scipy.special import softmax

    F = np.asarray(scores, dtype=float)
    return float(np.log(len(F)) + np.mean(np.log(np.diag(softmax(F, axis=1)) + 1e-12)))


def _reader_k_minus_1_rows(scores):
    F = np.asarray(scores, dtype=float)
    lp = np.diag(F) - logsumexp(F, axis=1)
    return float(np.log(len(F)) + sum(lp[i] for i in range(len(F) - 1)) / (len(F) - 1))


def _reader_log_k_plus_1(scores):
    F = np.asarray(scores, dtype=float)
    return float(np.log(len(F) + 1) + np.mean(np.diag(F) - logsumexp(F, axis=1)))


def _reader_divides_by_size(scores):
    F = np.asarray(scores, dtype=float)
    return float(np.log(len(F)) + np.sum(np.diag(F) - logsumexp(F, axis=1)) / F.size)


def _reader_max_not_added(scores):
    F = np.asarray(scores, dtype=float)
    m = F.max(axis=1, keepdims=True)
    lse = np.log(np.exp(F - m).sum(axis=1))  # the row maximum m is never added back
    return float(np.log(len(F)) + np.mean(np.diag(F) - lse))


def _reader_log10(scores):
    F = np.asarray(scores, dtype=float)
    return float((np.log(len(F)) + np.mean(np.diag(log_softmax(F, axis=1)))) / np.log(10))


SHORTCUTS = {
    _reader_max_not_added: ("a 5 x 5 batch", "never added back"),
    _reader_log10: ("a 5 x 5 batch", "base-10 logarithms"),
    _reader_clip_500: ("large, unsaturated", "scores were clipped"),
    _reader_log_k_when_large: ("large, unsaturated", "not saturated"),
    _reader_abs: ("worse than chance", "was made positive"),
    _reader_eps: ("positive far below", "an epsilon inside the log"),
    _reader_k_minus_1_rows: ("a 5 x 5 batch", "over K - 1 rows"),
    _reader_log_k_plus_1: ("a 5 x 5 batch", "log(K + 1) was added"),
    _reader_divides_by_size: ("a 5 x 5 batch", "by F.size"),
}


@pytest.mark.parametrize("fn", list(SHORTCUTS), ids=lambda fn: fn.__name__)
def test_a_shortcut_fails_with_the_hint_that_names_it(fn, capsys):
    assert check_infonce_bound(fn) is False
    case, words = SHORTCUTS[fn]
    out = _flat(capsys.readouterr().out)
    first = out.split("FAIL ")[1]
    assert first.startswith(f"{case}:") and words in first, first
    for line in out.split("FAIL ")[1:]:
        assert all(w == words for w in EXPLANATIONS if w in line), line


def float32_solution(scores):
    """Careful float32 arithmetic: each row shifted by its own maximum, the log-softmax taken
    directly, only the final mean and log K in float64."""
    F = np.asarray(scores, dtype=np.float32)
    shifted = F - F.max(axis=1, keepdims=True)
    log_probs = np.diag(shifted) - np.log(np.exp(shifted).sum(axis=1))
    return math.log(len(F)) + float(np.mean(log_probs, dtype=np.float64))


def test_careful_float32_arithmetic_passes(capsys):
    assert check_infonce_bound(float32_solution) is True, capsys.readouterr().out


def test_the_unsaturated_large_case_is_what_it_claims():
    (case,) = [c for c in _cases() if c.name == "large, unsaturated"]
    F = np.asarray(case.scores)
    assert F.min() > 709.79  # a plain exp overflows in every entry
    assert np.array_equal(F.astype(np.float32), F)  # exact in float32
    assert math.log(4) - case.expected > 0.5  # far from the ceiling log K
