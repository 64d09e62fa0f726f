"""Tests for chapter 4's NWJ checker: what readers write, right or wrong, is judged and named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from infonce_lib import check_nwj_bound, nwj_bound, nwj_mistakes
from infonce_lib.exercises.bound_family import _cases, _float32_tolerance


def _flat(out: str) -> str:
    return " ".join(out.split())


# ---------------------------------------------------------------- right answers, written
# the ways readers write them


def masked_solution(F):
    K = len(F)
    off = ~np.eye(K, dtype=bool)
    return float(np.trace(F) / K - np.exp(F[off] - 1.0).sum() / (K * (K - 1)))


def float32_solution(F):
    """Careful, but in float32 throughout (as on a GPU)."""
    F = np.asarray(F, dtype=np.float32)
    K = len(F)
    off = ~np.eye(K, dtype=bool)
    return np.float32(np.diag(F).mean() - np.exp(F[off] - np.float32(1.0)).mean())


def loop_solution(F):
    K = len(F)
    joint = sum(F[i][i] for i in range(K)) / K
    marginal = sum(math.exp(F[i][j] - 1) for i in range(K) for j in range(K) if i != j)
    return joint - marginal / (K * (K - 1))


def row_means_solution(F):
    """The mean over rows of each row's off-diagonal mean: the same K(K-1) average."""
    F = np.asarray(F, dtype=float)
    K = len(F)
    E = np.exp(F - 1.0)
    row_off = (E.sum(axis=1) - np.diag(E)) / (K - 1)
    return float(np.diag(F).mean() - row_off.mean())


@pytest.mark.parametrize(
    "fn", [masked_solution, float32_solution, loop_solution, row_means_solution]
)
def test_right_answers_pass(fn, capsys):
    assert check_nwj_bound(fn) is True
    out = _flat(capsys.readouterr().out)
    assert "FAIL" not in out and out.count("PASS") == len(_cases())
    assert "All cases pass." in out


def test_float32_passes_with_a_note_and_float64_without(capsys):
    check_nwj_bound(float32_solution)
    assert "float32 precision" in _flat(capsys.readouterr().out)
    check_nwj_bound(masked_solution)
    assert "float32" not in capsys.readouterr().out


def test_float32_tolerance_is_far_below_every_mistake():
    for _, F in _cases():
        right = float(nwj_bound(F[None])[0])
        tol = _float32_tolerance(F)
        assert 1e-7 < tol < 1e-3
        for name, wrong in nwj_mistakes().items():
            if name != "overwrites the input":
                assert abs(wrong(F.copy()) - right) > 100 * tol, name


# ---------------------------------------------------------------- wrong answers readers
# write, each with the words of the hint that must name it


def reader_with_diagonal(F):
    return float(np.diag(F).mean() - np.exp(F - 1).mean())


def reader_no_e(F):
    K = len(F)
    off = ~np.eye(K, dtype=bool)
    return float(np.trace(F) / K - np.exp(F[off]).mean())


def reader_dv(F):
    K = len(F)
    off = ~np.eye(K, dtype=bool)
    return float(np.trace(F) / K - np.log(np.mean(np.exp(F[off]))))


def reader_k_squared(F):
    K = len(F)
    off = ~np.eye(K, dtype=bool)
    return float(np.trace(F) / K - np.exp(F[off] - 1).sum() / K**2)


def reader_in_place(F):
    K = len(F)
    joint = np.trace(F) / K
    np.fill_diagonal(F, -np.inf)
    return float(joint - np.exp(F - 1).sum() / (K * (K - 1)))


def reader_plus(F):
    K = len(F)
    off = ~np.eye(K, dtype=bool)
    return float(np.trace(F) / K + np.exp(F[off] - 1).mean())


def reader_sum_of_positives(F):
    off = ~np.eye(len(F), dtype=bool)
    return float(np.trace(F) - np.exp(F[off] - 1).mean())


def reader_minus_e(F):
    off = ~np.eye(len(F), dtype=bool)
    return float(np.diag(F).mean() - np.exp(F[off] - np.e).mean())


def reader_per_row(F):
    F = np.asarray(F, dtype=float)
    K = len(F)
    E = np.where(np.eye(K, dtype=bool), 0.0, np.exp(F - 1))
    return np.diag(F) - E.sum(axis=1) / (K - 1)


def reader_no_e_float32(F):
    """The missing 1/e, computed in float32: still named."""
    F = np.asarray(F, dtype=np.float32)
    off = ~np.eye(len(F), dtype=bool)
    return np.diag(F).mean() - np.exp(F[off]).mean()


def reader_overflow(F):
    F = np.asarray(F, dtype=float)
    off = ~np.eye(len(F), dtype=bool)
    return float(np.diag(F).mean() - np.exp(1000 * F[off]).mean() / 1e300)


def reader_loss(F):
    K = len(F)
    off = ~np.eye(K, dtype=bool)
    return float(np.exp(F[off] - 1).mean() - np.trace(F) / K)


def reader_tuba_a_one(F):
    K = len(F)
    off = ~np.eye(K, dtype=bool)
    return float(1 + np.trace(F) / K - np.exp(F[off]).mean())


def reader_exp_of_mean(F):
    K = len(F)
    off = ~np.eye(K, dtype=bool)
    return float(np.trace(F) / K - np.exp(F[off].mean()) / np.e)


def reader_diagonal_over_k_k_minus_1(F):
    K = len(F)
    return float(np.trace(F) / K - np.exp(F - 1).sum() / (K * (K - 1)))


READERS = {
    reader_with_diagonal: "off-diagonal pairs only",
    reader_no_e: "carries a factor e^(-1)",
    reader_dv: "Donsker-Varadhan",
    reader_k_squared: "not K^2",
    reader_in_place: "modified the input F in place",
    reader_plus: "sign of the marginal term is flipped",
    reader_sum_of_positives: "not their sum",
    reader_minus_e: "subtract 1 inside the exponent",
    reader_per_row: "one value per row?",
    reader_no_e_float32: "carries a factor e^(-1)",
    reader_overflow: "of these finite scores is finite",
    reader_loss: "minus the bound, the loss",
    reader_tuba_a_one: "TUBA with the baseline a = 1",
    reader_exp_of_mean: "exponentiate first, then average",
    reader_diagonal_over_k_k_minus_1: "includes the diagonal but is divided by K(K-1)",
}
ALL_HINTS = (
    "off-diagonal pairs only", "carries a factor e^(-1)", "Donsker-Varadhan", "not K^2",
    "modified the input F in place", "sign of the marginal term is flipped",
    "not their sum", "subtract 1 inside the exponent", "one value per row?",
    "minus the bound, the loss", "TUBA with the baseline a = 1",
    "exponentiate first, then average", "includes the diagonal but is divided by K(K-1)",
)  # fmt: skip


@pytest.mark.parametrize("fn", list(READERS), ids=lambda f: f.__name__)
def test_each_wrong_answer_fails_with_the_hint_that_names_it(fn, capsys):
    assert check_nwj_bound(fn) is False
    out = _flat(capsys.readouterr().out)
    assert "FAIL" in out and "see the hints above" in out
    assert READERS[fn] in out
    others = [h for h in ALL_HINTS if h != READERS[fn] and h in out]
    assert not others, others  # no case blames another mistake


def test_the_library_catalogue_is_named_too(capsys):
    for name, wrong in nwj_mistakes().items():
        assert check_nwj_bound(wrong) is False, name
        out = capsys.readouterr().out
        assert "expected" in out or "in place" in out


def test_not_a_number_and_stub(capsys):
    assert check_nwj_bound(lambda F: "1.0") is False
    assert "return one number" in capsys.readouterr().out

    def stub(F):
        raise NotImplementedError

    assert check_nwj_bound(stub) is None
    assert "not attempted" in capsys.readouterr().out
