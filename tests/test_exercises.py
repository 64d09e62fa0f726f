"""Tests for infonce_lib.exercises: the checker passes right answers and names each mistake."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from infonce_lib import check_info_nce, info_nce_loss, typical_mistakes
from infonce_lib.exercises import _cases, _close


def _flat(out: str) -> str:
    """The checker's output with its wrapped lines joined again."""
    return " ".join(line.strip() for line in out.splitlines())


def plain_solution(Z1, Z2, temperature=0.1):
    """What a reader might write: float64, log-sum-exp, mean over rows."""
    Z1 = np.asarray(Z1, dtype=np.float64)
    Z2 = np.asarray(Z2, dtype=np.float64)
    logits = Z1 @ Z2.T / temperature
    m = logits.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
    return float(np.mean(lse - np.diag(logits)))


def scipy_solution(Z1, Z2, temperature=0.1):
    logits = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    return float(np.mean(logsumexp(logits, axis=1) - np.diag(logits)))


@pytest.mark.parametrize("fn", [info_nce_loss, plain_solution, scipy_solution])
def test_correct_implementations_pass(fn, capsys):
    assert check_info_nce(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out
    assert out.count("PASS") == 8
    assert "All cases pass." in out


# Each mistake, the first case that must catch it, and words its explanation must contain.
EXPECTED = {
    "no max-subtraction": ("large logits", "subtract each row's largest logit"),
    "softmax over the wrong axis": ("random batch", "wrong axis"),
    "sum instead of mean": ("worked example", "mean"),
    "positives in column 0": ("worked example", "diagonal"),
    "positive left out of the denominator": ("worked example", "denominator"),
    "temperature applied twice": ("worked example", "applied twice"),
    "temperature forgotten": ("worked example", "no temperature"),
    "temperature multiplied": ("worked example", "multiplied by the temperature"),
    "returns minus the loss": ("worked example", "minus the loss"),
    "negated logits": ("worked example", "negated logits"),
    "squeezes its input": ("N = 1", "raised"),
    "computes in float32": ("float32 input", "float32"),
    "casts to float32": ("worked example", "float32"),
    "per-row output": ("worked example", "not one loss per anchor"),
    "needs NumPy arrays": ("nested lists", "AttributeError"),
    "modifies its inputs": ("inputs unchanged", "modified in place"),
    "no default temperature": ("default temperature", "TypeError"),
}


def _reports(out: str) -> list[str]:
    """One line per case: the checker wraps long reports onto indented lines."""
    joined = " ".join(line.strip() for line in out.splitlines())
    return joined.replace("PASS  ", "\nPASS  ").replace("FAIL  ", "\nFAIL  ").splitlines()


def test_every_typical_mistake_is_listed():
    assert set(typical_mistakes()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_typical_mistake_fails_with_a_useful_message(name, capsys):
    fn = typical_mistakes()[name]
    assert check_info_nce(fn) is False
    out = capsys.readouterr().out
    lines = out.splitlines()
    case, words = EXPECTED[name]
    failing = [r for r in _reports(out) if r.startswith("FAIL")]
    # The first failing case is the one built to catch the mistake, and it names it.
    assert failing[0].startswith(f"FAIL  {case}:"), f"{name!r}: {failing[0]}"
    assert words in failing[0]
    assert lines[-1] == "Some cases fail: see the hints above."
    assert all(len(line) <= 80 for line in lines)


# A reader's hand-written version of each mistake, different from the library's catalogue.
def _reader_tau_twice(Z1, Z2, temperature=0.1):
    return plain_solution(Z1, Z2, temperature**2)


def _reader_float32(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, np.float32) @ np.asarray(Z2, np.float32).T / np.float32(temperature)
    return float(np.mean(logsumexp(L, axis=1) - np.diag(L)))


def test_float32_arithmetic_shows_the_digits_that_differ(capsys):
    assert check_info_nce(_reader_float32) is False
    first = _reports(capsys.readouterr().out)[1]
    assert first.startswith("FAIL  worked example: expected ")
    expected, got = first.split("expected ")[1].split(":")[0].split(", got ")
    assert expected != got  # never "expected 0.478650, got 0.478650"
    assert "float64" in first


def test_a_readers_own_mistake_is_named(capsys):
    assert check_info_nce(_reader_tau_twice) is False
    assert "applied twice" in _reports(capsys.readouterr().out)[1]


def test_every_known_value_is_distinct_on_every_case():
    # A hint must never name the wrong mistake: on each case the values of the known
    # mistakes differ from each other and from the right answer.
    for case in _cases():
        values = [case.expected] + [v for v, _ in case.known]
        for i, a in enumerate(values):
            for b in values[:i]:
                assert not _close(a, b), case.name


def test_a_stub_is_not_attempted_yet(capsys):
    def my_info_nce(Z1, Z2, temperature=0.1):
        raise NotImplementedError

    assert check_info_nce(my_info_nce) is False
    out = capsys.readouterr().out
    assert out.startswith("Not attempted yet: my_info_nce")
    assert "FAIL" not in out and "hints above" not in out


def test_no_hints_above_without_a_hint(capsys):
    def wrong(Z1, Z2, temperature=0.1):
        return 1.234567  # matches no known mistake

    assert check_info_nce(wrong) is False
    out = capsys.readouterr().out
    assert "see the hints above" not in out
    assert "match no mistake this checker knows" in _flat(out)


def test_per_row_output_says_the_mean_is_right(capsys):
    assert check_info_nce(typical_mistakes()["per-row output"]) is False
    assert "(their mean is right)" in _reports(capsys.readouterr().out)[1]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_mistake_passes_the_cases_it_does_not_target_or_is_plainly_wrong(name):
    # Sanity: the mistakes are real mistakes but still numbers on ordinary input.
    fn = typical_mistakes()[name]
    rng = np.random.default_rng(0)
    Z1, Z2 = rng.normal(size=(2, 3, 2))
    out = fn(Z1.copy(), Z2.copy(), temperature=1.0)
    if name == "per-row output":
        assert out.shape == (3,)
    else:
        assert isinstance(out, float)


def test_the_checker_never_raises_on_a_readers_errors(capsys):
    def raises(Z1, Z2, temperature=0.1):
        raise RuntimeError("boom")

    def returns_none(Z1, Z2, temperature=0.1):
        return None

    def returns_rows(Z1, Z2, temperature=0.1):
        L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
        return logsumexp(L, axis=1) - np.diag(L)

    def returns_string(Z1, Z2, temperature=0.1):
        return "0.5"

    def warns(Z1, Z2, temperature=0.1):
        np.log(np.zeros(1))  # RuntimeWarning: divide by zero (an error under pytest)
        return scipy_solution(Z1, Z2, temperature)

    assert check_info_nce(raises) is False
    assert "raised RuntimeError: boom" in _flat(capsys.readouterr().out)
    assert check_info_nce(returns_none) is False
    assert "not a number" in _flat(capsys.readouterr().out)
    assert check_info_nce(returns_rows) is False
    assert "one number, the mean loss" in _flat(capsys.readouterr().out)
    assert check_info_nce(returns_string) is False
    # A warning inside the reader's code is recorded, not turned into an error or printed.
    assert check_info_nce(warns) is True


def test_warnings_are_reported_with_the_failure(capsys):
    check_info_nce(typical_mistakes()["no max-subtraction"])
    assert "NumPy warned: overflow encountered in exp" in _flat(capsys.readouterr().out)


def test_quiet_mode_prints_nothing(capsys):
    assert check_info_nce(scipy_solution, verbose=False) is True
    assert check_info_nce(typical_mistakes()["sum instead of mean"], verbose=False) is False
    assert capsys.readouterr().out == ""


def test_the_checker_does_not_change_its_own_cases():
    # A mistake that modifies its inputs must not poison the cases of the next run.
    check_info_nce(typical_mistakes()["modifies its inputs"], verbose=False)
    assert check_info_nce(info_nce_loss, verbose=False) is True


def test_not_callable_raises_type_error():
    with pytest.raises(TypeError, match="fn must be a callable"):
        check_info_nce(42)


@pytest.mark.parametrize("bad", ["False", "no", 0, 1, None, np.array([False])])
def test_verbose_must_be_a_real_boolean_checked_by_as_bool(bad, monkeypatch, capsys):
    # "False" is truthy: only real booleans are accepted, through _validation.as_bool, before
    # any case runs (nothing is printed).
    with pytest.raises(TypeError, match="verbose must be True or False"):
        check_info_nce(info_nce_loss, verbose=bad)
    assert capsys.readouterr().out == ""
    assert check_info_nce(info_nce_loss, verbose=np.bool_(False)) is True
    # The check is as_bool's: with it replaced by bool(), the bad value would be accepted.
    monkeypatch.setattr("infonce_lib.exercises._runner.as_bool", lambda value, name: bool(value))
    assert check_info_nce(info_nce_loss, verbose=bad) is True
