"""Tests for infonce_lib.exercises: the checker passes right answers and names each mistake."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_softmax, logsumexp, softmax

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


def float32_aware_solution(Z1, Z2, temperature=0.1):
    """Written differently: copies to float64 (float32 input included), scipy's
    log_softmax along each row, einsum for the logits."""
    A = np.array(Z1, dtype=np.float64)
    B = np.array(Z2, dtype=np.float64)
    logits = np.einsum("id,jd->ij", A, B) / np.float64(temperature)
    return -float(np.trace(log_softmax(logits, axis=1))) / len(A)


def logaddexp_solution(Z1, Z2, temperature=0.1):
    L = np.dot(np.asarray(Z1, np.float64), np.asarray(Z2, np.float64).T) / temperature
    return float(np.mean(np.logaddexp.reduce(L, axis=1) - L.diagonal()))


CORRECT = [info_nce_loss, plain_solution, scipy_solution, float32_aware_solution,
           logaddexp_solution]  # fmt: skip


@pytest.mark.parametrize("fn", CORRECT)
def test_correct_implementations_pass(fn, capsys):
    assert check_info_nce(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out
    assert out.count("PASS") == len(_cases()) == 10
    assert "All cases pass." in out


def test_a_correct_solution_gets_float32_input_right_to_float64_digits():
    # The float32 case: the inputs are float32, the right answer is computed in float64.
    (case,) = [c for c in _cases() if c.name == "float32 input"]
    assert case.args[0].dtype == np.float32
    got = float32_aware_solution(*case.args, **case.kwargs)
    assert got == pytest.approx(case.expected, rel=1e-12)


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
    "log of the softmax": ("positive far below", "never np.log of a softmax"),
    "global maximum": ("rows far apart", "each row's own maximum"),
    "symmetric (CLIP) average": ("random batch", "CLIP's symmetric loss"),
    "temperature inside the log-sum-exp only": ("worked example", "divided by tau too"),
    "mean over N - 1": ("worked example", "by N - 1"),
    "squared-distance logits": ("worked example", "squared-distance logits"),
    "mean over all entries": ("worked example", "every entry of the matrix"),
}

# Later cases that a mistake also fails, with another explanation that is also right.
ALSO = {
    "no max-subtraction": "never np.log of a softmax",  # it takes the log of a ratio too
    "positive left out of the denominator": "an empty sum",  # N = 1
    "temperature forgotten": "not used at all",  # the default-temperature case
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
    # No later case names another mistake instead of this one.
    for line in failing[1:]:
        assert (
            words in line
            or "the same mistake as above" in line
            or ALSO.get(name, "\0") in line
            or name in ("computes in float32", "casts to float32")  # digits, not a formula
            or name == "per-row output"
        ), f"{name!r}: {line}"
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
    # mistakes differ from each other and from the right answer (mistakes that coincide
    # on a case share one hint that names each of them).
    for case in _cases():
        values = [case.expected] + [v for v, _ in case.known]
        for i, a in enumerate(values):
            for b in values[:i]:
                assert not _close(a, b), case.name


def test_mistakes_that_coincide_share_a_hint_and_a_later_case_separates_them():
    joint = {
        case.name: [h for _, h in case.known if "usual mistakes give this value" in h]
        for case in _cases()
    }
    # On the worked example (a circulant matrix) column 0 holds every similarity once, so
    # "column 0 as positive" and "all entries" give the same value; nothing else coincides.
    assert {name: len(h) for name, h in joint.items() if h} == {"worked example": 1}
    (hint,) = joint["worked example"]
    assert "column 0" in hint and "every entry of the matrix" in hint
    random_batch = [h for _, h in _cases()[1].known]
    assert any(h.startswith("this takes column 0") for h in random_batch)
    assert any(h.startswith("this averages -log p_ij") for h in random_batch)


def test_the_extreme_cases_are_what_they_claim():
    cases = {case.name: case for case in _cases()}

    def logits(name):
        (Z1, Z2), tau = cases[name].args, cases[name].kwargs["temperature"]
        return np.asarray(Z1, float) @ np.asarray(Z2, float).T / tau

    big = logits("large logits")  # overflows, but no row or positive is far apart
    row_max = big.max(axis=1)
    assert big.max() > 709.79 and np.ptp(row_max) < 700
    assert np.max(row_max - np.diag(big)) < 700
    far = logits("rows far apart")  # row maxima > 745 apart, every logit below 709.78
    assert np.ptp(far.max(axis=1)) > 746 and np.abs(far).max() < 709.78
    below = logits("positive far below")  # a positive > 745 below its row's maximum
    assert np.max(below.max(axis=1) - np.diag(below)) > 746 and np.abs(below).max() < 709.78


# Six plausible wrong solutions a reader might write (not the library's catalogue), each
# with the words its hint must contain.
def _reader_log_of_softmax(Z1, Z2, temperature=0.1):
    P = softmax(np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature, axis=1)
    return float(-np.mean(np.log(np.diag(P))))


def _reader_clip(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    d = np.diag(L)
    return float(np.mean(logsumexp(L, axis=1) - d) + np.mean(logsumexp(L, axis=0) - d)) / 2


def _reader_tau_inside(Z1, Z2, temperature=0.1):
    S = np.asarray(Z1, float) @ np.asarray(Z2, float).T
    return float(np.mean(logsumexp(S / temperature, axis=1) - np.diag(S)))


def _reader_n_minus_1(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    return float(np.sum(logsumexp(L, axis=1) - np.diag(L)) / (len(L) - 1))


def _reader_sqdist(Z1, Z2, temperature=0.1):
    from scipy.spatial.distance import cdist

    L = -cdist(np.asarray(Z1, float), np.asarray(Z2, float), "sqeuclidean") / temperature
    return float(np.mean(logsumexp(L, axis=1) - np.diag(L)))


def _reader_all_entries(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    return float(-np.mean(log_softmax(L, axis=1)))


def _reader_global_max(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    E = np.exp(L - np.max(L))
    return float(np.mean(np.max(L) + np.log(E.sum(axis=1)) - np.diag(L)))


READERS = {
    _reader_log_of_softmax: ("positive far below", "never np.log of a softmax"),
    _reader_clip: ("random batch", "CLIP's symmetric loss"),
    _reader_tau_inside: ("worked example", "divided by tau too"),
    _reader_n_minus_1: ("worked example", "by N - 1"),
    _reader_sqdist: ("worked example", "squared-distance logits"),
    _reader_all_entries: ("worked example", "every entry of the matrix"),
    _reader_global_max: ("rows far apart", "each row's own maximum"),
    _reader_tau_twice: ("worked example", "applied twice"),
}


@pytest.mark.parametrize("fn", list(READERS), ids=lambda fn: fn.__name__)
def test_a_readers_wrong_solution_fails_with_the_hint_that_names_it(fn, capsys):
    assert check_info_nce(fn) is False
    case, words = READERS[fn]
    failing = [r for r in _reports(capsys.readouterr().out) if r.startswith("FAIL")]
    assert failing[0].startswith(f"FAIL  {case}:") and words in failing[0], failing[0]


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


# Numerical shortcuts and confusions with chapter 3: six more wrong solutions a reader might
# write, each with the case that must catch it first and the words of its hint.
def _reader_eps_in_log(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    P = softmax(L, axis=1)  # max-shifted inside scipy: nothing overflows
    return float(-np.mean(np.log(np.diag(P) + 1e-12)))  # ... but the epsilon shifts tiny p


def _reader_clipped_logits(Z1, Z2, temperature=0.1):
    L = np.clip(np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature, -50, 50)
    return float(np.mean(logsumexp(L, axis=1) - np.diag(L)))


def _reader_no_keepdims(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    m = L.max(axis=1)  # shape (N,): L - m subtracts m[j] from column j
    return float(np.mean(m + np.log(np.exp(L - m).sum(axis=1)) - np.diag(L)))


def _reader_loss_minus_log_n(Z1, Z2, temperature=0.1):
    return scipy_solution(Z1, Z2, temperature) - np.log(len(Z1))


def _reader_bound(Z1, Z2, temperature=0.1):
    return np.log(len(Z1)) - scipy_solution(Z1, Z2, temperature)  # chapter 3's I_NCE


def _reader_normalises(Z1, Z2, temperature=0.1):
    A, B = np.asarray(Z1, float), np.asarray(Z2, float)
    A = A / np.linalg.norm(A, axis=1, keepdims=True)
    B = B / np.linalg.norm(B, axis=1, keepdims=True)
    return scipy_solution(A, B, temperature)


def _reader_leave_one_out(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    off = np.where(np.eye(len(L), dtype=bool), -np.inf, L)  # the positive left out
    return float(np.mean(logsumexp(off, axis=1) - np.diag(L)))


def _reader_max_not_added(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    m = L.max(axis=1, keepdims=True)
    return float(np.mean(np.log(np.exp(L - m).sum(axis=1)) - np.diag(L)))  # + m forgotten


def _reader_log10(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
    return float(-np.mean(np.log10(np.diag(softmax(L, axis=1)))))


SHORTCUTS = {
    _reader_max_not_added: ("worked example", "never added back"),
    _reader_log10: ("worked example", "base-10 logarithms"),
    _reader_eps_in_log: ("random batch", "an epsilon inside the log"),
    _reader_clipped_logits: ("large logits", "logits were clipped"),
    _reader_no_keepdims: ("random batch", "without keepdims"),
    _reader_loss_minus_log_n: ("worked example", "the loss minus log N"),
    _reader_bound: ("worked example", "the bound I_NCE = log N - loss"),
    _reader_normalises: ("worked example", "normalises the embeddings"),
    _reader_leave_one_out: ("worked example", "out of its own denominator"),
}


@pytest.mark.parametrize("fn", list(SHORTCUTS), ids=lambda fn: fn.__name__)
def test_a_numerical_shortcut_fails_with_the_hint_that_names_it(fn, capsys):
    assert check_info_nce(fn) is False
    case, words = SHORTCUTS[fn]
    failing = [r for r in _reports(capsys.readouterr().out) if r.startswith("FAIL")]
    assert failing[0].startswith(f"FAIL  {case}:") and words in failing[0], failing[0]


def test_the_leave_one_out_form_is_not_finite_for_one_pair_and_says_why(capsys):
    assert check_info_nce(_reader_leave_one_out) is False
    (n1,) = [r for r in _reports(capsys.readouterr().out) if r.startswith("FAIL  N = 1:")]
    assert "an empty sum" in n1


@pytest.mark.parametrize("eps", [1e-12, 1e-8, 1e-6])
def test_every_usual_epsilon_inside_the_log_is_named(eps, capsys):
    def eps_in_log(Z1, Z2, temperature=0.1):
        L = np.asarray(Z1, float) @ np.asarray(Z2, float).T / temperature
        return float(-np.mean(np.log(np.diag(softmax(L, axis=1)) + eps)))

    assert check_info_nce(eps_in_log) is False
    failing = [r for r in _reports(capsys.readouterr().out) if r.startswith("FAIL")]
    assert "an epsilon inside the log" in failing[0], failing[0]
    for line in failing[1:]:
        assert "an epsilon inside the log" in line or "the same mistake as above" in line, line


def float32_careful_solution(Z1, Z2, temperature=0.1):
    """Keeps float32 storage for the inputs but accumulates in float64 (what a reader
    careful about memory might write): the matrix product and the exponentials in float64."""
    A = np.asarray(Z1, dtype=np.float32)
    B = np.asarray(Z2, dtype=np.float32)
    if not (np.array_equal(A, np.asarray(Z1)) and np.array_equal(B, np.asarray(Z2))):
        A, B = np.asarray(Z1, np.float64), np.asarray(Z2, np.float64)  # no rounding
    L = np.matmul(A, B.T, dtype=np.float64) / np.float64(temperature)
    m = L.max(axis=1, keepdims=True)
    return float(np.mean(m[:, 0] + np.log1p(np.exp(L - m).sum(axis=1) - 1.0) - np.diag(L)))


@pytest.mark.parametrize("fn", [float32_careful_solution, plain_solution])
def test_two_more_correct_variants_pass(fn):
    assert check_info_nce(fn, verbose=False) is True
