"""Tests for infonce_lib.exercises.nce: chapter 1's checker passes right answers and names
each mistake."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit, log_expit

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


def scipy_solution(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    """Written with scipy.special.log_expit, on lists as well as arrays."""
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    a = np.log(nu)
    return float((log_expit(G_x - a).sum() + log_expit(a - G_y).sum()) / len(G_x))


def float32_solution(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    """A careful float32 implementation: logaddexp throughout, in single precision."""
    a = np.float32(math.log(nu))
    G_x = np.asarray(lm_x, np.float32) - np.asarray(ln_x, np.float32)
    G_y = np.asarray(lm_y, np.float32) - np.asarray(ln_y, np.float32)
    zero = np.float32(0)
    total = -np.logaddexp(zero, a - G_x).sum() - np.logaddexp(zero, G_y - a).sum()
    assert total.dtype == np.float32
    return float(total / np.float32(G_x.size))


@pytest.mark.parametrize("fn", [nce_objective, plain_solution, scipy_solution, float32_solution])
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
    "sign inside logaddexp flipped": ("random, nu = 4", "sign inside logaddexp is flipped"),
    "mean over all samples": ("model equals noise", "T_d + T_n"),
    "returns minus J": ("model equals noise", "minus J"),
    "log of a computed sigma": ("far from the threshold, nu = 1", "log of a computed sigma"),
    "sigma as exp(G) / (exp(G) + nu)": ("far from the threshold, nu = 1", "exp overflows"),
    "per-sample output": ("model equals noise", "not one term per sample"),
    "J / 2, the 2010 normalisation": ("model equals noise", "2010 paper"),
    "divided by T_n": ("random, nu = 4", "divides by T_n"),
    "1/nu in place of nu": ("random, nu = 4", "1/nu where nu belongs"),
    "h clipped to [1e-12, 1 - 1e-12]": ("far from the threshold, nu = 1", "clipping"),
    "z clipped to [-500, 500]": ("far from the threshold, nu = 1", "clipping"),
    "log10": ("model equals noise", "log10"),
    "data and noise swapped": ("random, nu = 4", "data and noise swap roles"),
    "nu on the data term": ("random, nu = 4", "not the data term"),
    "noise term weighted by 1/nu": ("random, nu = 4", "weighted by nu, not 1/nu"),
    "log(nu + 1) for log nu": ("model equals noise", "log(nu + 1)"),
    "noise term subtracted": ("model equals noise", "added, not subtracted"),
    "log2": ("model equals noise", "log2"),
    "mean over data, sum over noise": ("model equals noise", "not their sum"),
    "log T_n for log nu": ("model equals noise", "log T_n"),
    "h clipped to [1e-6, 1 - 1e-6]": ("far from the threshold, nu = 1", "clipping"),
    "z clipped to [-10, 10]": ("far from the threshold, nu = 1", "clipping"),
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


# Wrong solutions as a reader writes them (not the library's list), with the case that must
# catch each first and words of the hint that names it.
def reader_inner_sign(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    z_x, z_y = G_x - np.log(nu), G_y - np.log(nu)
    log_h = -np.logaddexp(0, z_x)  # the inner sign flipped
    log_1mh = -np.logaddexp(0, -z_y)
    return float((log_h.sum() + log_1mh.sum()) / len(G_x))


def reader_no_log_nu(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    return float((log_expit(G_x).sum() + log_expit(-G_y).sum()) / len(G_x))


def reader_plus_log_nu(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    return float(
        (log_expit(G_x + np.log(nu)).sum() + log_expit(-G_y - np.log(nu)).sum()) / len(G_x)
    )


def reader_means(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    a = np.log(nu)
    return float(log_expit(G_x - a).mean() + log_expit(a - G_y).mean())


def reader_swapped(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(ln_x, lm_x), np.subtract(ln_y, lm_y)
    a = np.log(nu)
    return float((log_expit(G_x - a).sum() + log_expit(a - G_y).sum()) / len(G_x))


def reader_log_sigmoid(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    h_x = 1 / (1 + nu * np.exp(-G_x))
    h_y = 1 / (1 + nu * np.exp(-G_y))
    return float((np.log(h_x).sum() + np.log(1 - h_y).sum()) / len(G_x))


def reader_nan(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    p_x, p_y = np.exp(G_x), np.exp(G_y)
    return float((np.log(p_x / (p_x + nu)).sum() + np.log(nu / (p_y + nu)).sum()) / len(G_x))


def reader_2010(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    # the 2010 paper's 1/(2T), kept for every nu
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    a = np.log(nu)
    return float((log_expit(G_x - a).sum() + log_expit(a - G_y).sum()) / (2 * len(G_x)))


def reader_by_t_n(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    a = np.log(nu)
    return float((log_expit(G_x - a).sum() + log_expit(a - G_y).sum()) / len(G_y))


def reader_inverse_nu(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    # nu taken as T_d / T_n
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    r = 1 / nu
    return float(log_expit(G_x - np.log(r)).mean() + r * log_expit(np.log(r) - G_y).mean())


def reader_clip_h(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    eps = 1e-7
    h_x = np.clip(np.exp(log_expit(G_x - np.log(nu))), eps, 1 - eps)
    h_y = np.clip(np.exp(log_expit(G_y - np.log(nu))), eps, 1 - eps)
    return float((np.log(h_x).sum() + np.log(1 - h_y).sum()) / len(G_x))


def reader_clip_z(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    z_x, z_y = np.clip(G_x - np.log(nu), -30, 30), np.clip(G_y - np.log(nu), -30, 30)
    return float((log_expit(z_x).sum() + log_expit(-z_y).sum()) / len(G_x))  # "to be safe"


def reader_log10(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    a = np.log(nu)
    h_x, h_y = expit(G_x - a), expit(G_y - a)
    return float((np.log10(h_x).sum() + np.log10(1 - h_y).sum()) / len(G_x))


def reader_roles(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    # log h at the noise, log(1 - h) at the data
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    a = np.log(nu)
    return float((log_expit(a - G_x).sum() + log_expit(G_y - a).sum()) / len(G_x))


def reader_log_t_n(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    a = np.log(len(G_y))  # log T_n taken for log nu
    return float(log_expit(G_x - a).mean() + nu * log_expit(a - G_y).mean())


def reader_clip_z_10(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    z_x, z_y = np.clip(G_x - np.log(nu), -10, 10), np.clip(G_y - np.log(nu), -10, 10)
    return float((log_expit(z_x).sum() + log_expit(-z_y).sum()) / len(G_x))


def reader_clip_h_1e6(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    h_x = np.clip(expit(G_x - np.log(nu)), 1e-6, 1 - 1e-6)
    h_y = np.clip(expit(G_y - np.log(nu)), 1e-6, 1 - 1e-6)
    return float((np.log(h_x).sum() + np.log1p(-h_y).sum()) / len(G_x))


def reader_log2(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = np.subtract(lm_x, ln_x), np.subtract(lm_y, ln_y)
    h_x, h_y = expit(G_x - np.log(nu)), expit(G_y - np.log(nu))
    return float((np.log2(h_x).sum() + np.log2(1 - h_y).sum()) / len(G_x))


READERS = {
    reader_log_t_n: ("model equals noise", "log T_n"),
    reader_clip_z_10: ("far from the threshold, nu = 1", "clipping"),
    reader_clip_h_1e6: ("far from the threshold, nu = 1", "clipping"),
    reader_log2: ("model equals noise", "log2"),
    reader_2010: ("model equals noise", "2010 paper"),
    reader_by_t_n: ("random, nu = 4", "divides by T_n"),
    reader_inverse_nu: ("random, nu = 4", "1/nu where nu belongs"),
    reader_clip_h: ("far from the threshold, nu = 1", "clipping"),
    reader_clip_z: ("far from the threshold, nu = 1", "clipping"),
    reader_roles: ("random, nu = 4", "data and noise swap roles"),
    reader_log10: ("model equals noise", "log10"),
    reader_inner_sign: ("random, nu = 4", "sign inside logaddexp is flipped"),
    reader_no_log_nu: ("random, nu = 4", "not sigma(G)"),
    reader_plus_log_nu: ("random, nu = 4", "wrong sign"),
    reader_means: ("random, nu = 4", "weighted by nu"),
    reader_swapped: ("random, nu = 4", "model minus noise"),
    reader_log_sigmoid: ("far from the threshold, nu = 1", "log of a computed sigma"),
    reader_nan: ("far from the threshold, nu = 1", "exp overflows"),
}


@pytest.mark.parametrize("fn", list(READERS), ids=lambda f: f.__name__)
def test_readers_wrong_solutions_fail_with_their_hint(fn, capsys):
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        assert check_nce_objective(fn) is False
    case, words = READERS[fn]
    failing = [r for r in _reports(capsys.readouterr().out) if r.startswith("FAIL")]
    assert failing[0].startswith(f"FAIL  {case}:"), failing[0]
    assert words in failing[0]
    if fn is reader_nan:
        assert "got nan" in failing[0]


def test_log_t_n_is_never_taken_for_a_sign_error(capsys):
    # On the nu = 1/2 case T_n is not 1/nu, so log T_n is not -log nu there.
    check_nce_objective(reader_log_t_n)
    reports = _reports(capsys.readouterr().out)
    assert not any("wrong sign" in r for r in reports)
    half = next(r for r in reports if r.startswith("FAIL  random, nu = 1/2"))
    assert "log T_n" in half or "same mistake as above" in half


def test_inner_sign_and_swapped_g_are_told_apart_only_when_nu_differs_from_1(capsys):
    check_nce_objective(reader_inner_sign)
    reports = _reports(capsys.readouterr().out)
    at_1 = next(r for r in reports if r.startswith("FAIL  far from the threshold, nu = 1"))
    assert "two mistakes" in at_1 and "model minus noise" in at_1 and "logaddexp" in at_1


def test_nonfinite_answers_get_a_hint_on_every_case(capsys):
    def always_nan(lm_x, ln_x, lm_y, ln_y, nu=1.0):
        return float("nan")

    assert check_nce_objective(always_nan) is False
    reports = [r for r in _reports(capsys.readouterr().out) if r.startswith("FAIL")]
    assert len(reports) == len(_cases())
    assert "log of 0" in reports[0]  # moderate G: not an overflow
    far = next(r for r in reports if r.startswith("FAIL  far from the threshold, nu = 1"))
    assert "overflows" in far  # large G: the overflow of a computed sigma


def test_the_cases_with_nu_other_than_1_separate_every_mistake():
    # on each such case, every mistake of the list gives its own value
    for case in _cases():
        nu = case.kwargs.get("nu", 1.0)
        if nu == 1.0:
            continue
        merged = [h for _, h in case.known if h.startswith("two mistakes")]
        if nu == 2.0:  # T_n = 2 T_d: dividing by T_n is dividing by 2 T_d, the 2010 way
            assert len(merged) == 1 and "T_n" in merged[0] and "2010" in merged[0]
        else:
            assert not merged, case.name


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
