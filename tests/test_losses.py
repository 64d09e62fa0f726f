"""Tests for infonce_lib.losses (the foundation: info_nce_loss)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from infonce_lib import contrastive_log_probs, contrastive_loss_from_logits, info_nce_loss
from tests.reference import info_nce_reference

# ---------------------------------------------------------------- values


def test_worked_example_of_chapter_2():
    # One anchor: similarities 0.9 (positive), 0.3, 0.1, -0.2 at tau = 0.5.
    sims = np.array([0.9, 0.3, 0.1, -0.2])
    expected = -math.log(math.exp(1.8) / sum(math.exp(s / 0.5) for s in sims))
    S = np.array([[sims[(j - i) % 4] for j in range(4)] for i in range(4)])
    got = info_nce_loss(np.eye(4), S.T, temperature=0.5)
    assert got == pytest.approx(expected, rel=1e-14)
    assert round(got, 4) == 0.4786


def test_matches_loop_reference(rng):
    Z1 = rng.normal(size=(7, 5))
    Z2 = rng.normal(size=(7, 5))
    for tau in (0.05, 0.1, 1.0, 3.0):
        assert info_nce_loss(Z1, Z2, tau) == pytest.approx(
            info_nce_reference(Z1.tolist(), Z2.tolist(), tau), rel=1e-12
        )


def test_returns_python_float_and_accepts_lists():
    out = info_nce_loss([[1, 0], [0, 1]], [[1, 0], [0, 1]], temperature=1)
    assert type(out) is float
    assert out == pytest.approx(math.log(1 + math.exp(-1)), rel=1e-14)


def test_default_temperature_is_0_1(rng):
    Z1, Z2 = rng.normal(size=(2, 4, 3))
    assert info_nce_loss(Z1, Z2) == info_nce_loss(Z1, Z2, temperature=0.1)


def test_rows_of_Z1_are_the_anchors(rng):
    # Swapping the roles changes the normalised side: not symmetric in general.
    Z1, Z2 = rng.normal(size=(2, 5, 3))
    logits = Z1 @ Z2.T / 0.3
    assert info_nce_loss(Z1, Z2, 0.3) == pytest.approx(
        contrastive_loss_from_logits(logits, anchors="rows"), rel=1e-13
    )
    assert info_nce_loss(Z2, Z1, 0.3) == pytest.approx(
        contrastive_loss_from_logits(logits, anchors="columns"), rel=1e-13
    )
    assert info_nce_loss(Z1, Z2, 0.3) != pytest.approx(info_nce_loss(Z2, Z1, 0.3), rel=1e-6)


def test_inputs_not_modified(rng):
    Z1, Z2 = rng.normal(size=(2, 6, 4))
    c1, c2 = Z1.copy(), Z2.copy()
    info_nce_loss(Z1, Z2, 0.2)
    np.testing.assert_array_equal(Z1, c1)
    np.testing.assert_array_equal(Z2, c2)


# ---------------------------------------------------------------- valid extremes


def test_n_equals_one_gives_exactly_zero():
    out = info_nce_loss([[3.0, -1.0]], [[2.0, 5.0]], temperature=0.01)
    assert out == 0.0
    assert math.copysign(1.0, out) == 1.0  # +0.0, not -0.0


def test_tiny_temperature_is_finite_and_correct(rng):
    Z1, Z2 = rng.normal(size=(2, 8, 4))
    tau = 1e-8
    S = Z1 @ Z2.T
    # As tau -> 0 each row's loss tends to (max_j S_ij - S_ii) / tau (no ties here).
    expected = np.mean((S.max(axis=1) - np.diag(S)) / tau)
    got = info_nce_loss(Z1, Z2, tau)
    assert math.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-9)


def test_huge_logits_are_finite_and_correct(rng):
    Z1 = rng.normal(size=(6, 3)) * 1e3  # logits of order 1e6
    Z2 = rng.normal(size=(6, 3)) * 1e3
    got = info_nce_loss(Z1, Z2, temperature=1.0)
    assert math.isfinite(got)
    assert got == pytest.approx(info_nce_reference(Z1.tolist(), Z2.tolist(), 1.0), rel=1e-12)


def test_huge_temperature_tends_to_log_n(rng):
    Z1, Z2 = rng.normal(size=(2, 9, 4))
    got = info_nce_loss(Z1, Z2, temperature=1e8)
    assert got == pytest.approx(math.log(9), abs=1e-7)
    assert got == pytest.approx(info_nce_reference(Z1.tolist(), Z2.tolist(), 1e8), rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int64, np.uint16])
def test_any_real_dtype_is_computed_in_float64(dtype):
    rng = np.random.default_rng(0)
    Z1 = rng.integers(-3, 4, size=(5, 3)).astype(dtype)
    Z2 = rng.integers(0, 4, size=(5, 3)).astype(dtype)
    expected = info_nce_loss(Z1.astype(np.float64), Z2.astype(np.float64), 0.1)
    assert info_nce_loss(Z1, Z2, 0.1) == expected


def test_float32_input_matches_float64_of_same_values(rng):
    Z1 = rng.normal(size=(16, 8)).astype(np.float32)
    Z2 = rng.normal(size=(16, 8)).astype(np.float32)
    got = info_nce_loss(Z1, Z2, temperature=1e-3)
    assert math.isfinite(got)
    assert got == pytest.approx(
        info_nce_reference(Z1.astype(float).tolist(), Z2.astype(float).tolist(), 1e-3), rel=1e-12
    )


@pytest.mark.parametrize("temperature", [np.float32(0.5), np.int64(2), 1, np.array(0.5)])
def test_numpy_and_int_temperatures_are_accepted(temperature, rng):
    Z1, Z2 = rng.normal(size=(2, 3, 2))
    assert info_nce_loss(Z1, Z2, temperature) == pytest.approx(
        info_nce_reference(Z1.tolist(), Z2.tolist(), float(temperature)), rel=1e-12
    )


# ---------------------------------------------------------------- bad input

GOOD = [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize(
    ("Z1", "Z2", "exc", "words"),
    [
        (GOOD, [[1.0, 0.0]], ValueError, ["Z1", "Z2", "same shape"]),
        ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], GOOD, ValueError, ["same shape"]),
        ([1.0, 2.0], [3.0, 4.0], ValueError, ["Z1", "2-D"]),
        (GOOD, [[[1.0, 0.0], [0.0, 1.0]]], ValueError, ["Z2", "2-D"]),
        (5.0, 5.0, ValueError, ["Z1", "2-D"]),
        ([], [], ValueError, ["Z1"]),
        (np.empty((0, 3)), np.empty((0, 3)), ValueError, ["Z1", "empty"]),
        (np.empty((3, 0)), np.empty((3, 0)), ValueError, ["Z1", "empty"]),
        ([[1.0, 2.0], [3.0]], GOOD, ValueError, ["Z1", "ragged"]),
        (GOOD, [[1.0, 2.0], [3.0]], ValueError, ["Z2", "ragged"]),
        ([[np.nan, 0.0], [0.0, 1.0]], GOOD, ValueError, ["Z1", "finite", "NaN"]),
        (GOOD, [[np.inf, 0.0], [0.0, 1.0]], ValueError, ["Z2", "finite", "infinite"]),
        ([["a", "b"], ["c", "d"]], GOOD, TypeError, ["Z1", "real"]),
        (GOOD, np.array([[1 + 1j, 0], [0, 1]]), TypeError, ["Z2", "complex"]),
        ([[None, 1.0], [1.0, 1.0]], GOOD, TypeError, ["Z1"]),
        (np.array([[True, False], [False, True]]), GOOD, TypeError, ["Z1", "boolean"]),
    ],
)
def test_bad_arrays_raise_naming_the_argument(Z1, Z2, exc, words):
    with pytest.raises(exc) as info:
        info_nce_loss(Z1, Z2, 0.1)
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize(
    ("temperature", "exc"),
    [
        (0.0, ValueError),
        (-0.1, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (-float("inf"), ValueError),
        ("0.1", TypeError),
        (None, TypeError),
        (True, TypeError),
        (1j, TypeError),
        ([0.1], TypeError),
        (np.array([0.1, 0.2]), TypeError),
    ],
)
def test_bad_temperature_raises(temperature, exc):
    with pytest.raises(exc, match="temperature"):
        info_nce_loss(GOOD, GOOD, temperature)


def test_overflowing_logits_raise_a_clear_error():
    Z = np.full((2, 2), 1e200)
    with pytest.raises(ValueError, match="overflowed"):
        info_nce_loss(Z, Z, 1.0)


# ---------------------------------------------------------------- properties

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)
temperatures = st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def pairs(draw, max_n=8, max_d=5):
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    Z1 = draw(arrays(np.float64, (n, d), elements=finite))
    Z2 = draw(arrays(np.float64, (n, d), elements=finite))
    return Z1, Z2


@given(pairs(), temperatures, st.randoms(use_true_random=False))
def test_joint_row_permutation_leaves_loss_unchanged(zz, tau, rnd):
    Z1, Z2 = zz
    perm = list(range(len(Z1)))
    rnd.shuffle(perm)
    a = info_nce_loss(Z1, Z2, tau)
    b = info_nce_loss(Z1[perm], Z2[perm], tau)
    assert b == pytest.approx(a, rel=1e-9, abs=1e-9)


@given(pairs(), temperatures)
def test_loss_is_non_negative(zz, tau):
    assert info_nce_loss(*zz, tau) >= 0.0


@given(st.integers(1, 30), st.integers(1, 6), finite, temperatures)
def test_equal_logits_give_log_n(n, d, value, tau):
    Z1 = np.full((n, d), value)
    Z2 = np.ones((n, d))
    assert info_nce_loss(Z1, Z2, tau) == pytest.approx(math.log(n), abs=1e-12)


@given(pairs(), temperatures)
def test_agrees_with_plain_reference(zz, tau):
    Z1, Z2 = zz
    assert info_nce_loss(Z1, Z2, tau) == pytest.approx(
        info_nce_reference(Z1.tolist(), Z2.tolist(), tau), rel=1e-9, abs=1e-9
    )


# ---------------------------------------------------------------- the general core


def test_core_columns_equal_rows_of_transpose(rng):
    L = rng.normal(size=(3, 5, 5))
    np.testing.assert_allclose(
        contrastive_log_probs(L, anchors="columns"),
        contrastive_log_probs(np.swapaxes(L, -1, -2)),
        rtol=1e-15,
    )


def test_core_exclusion_and_leave_one_out_by_index(rng):
    L = rng.normal(size=(4, 4)) * 50
    pos = np.array([1, 0, 3, 2])
    exc = np.arange(4)
    got = contrastive_log_probs(L, pos, exclude=exc)
    for i in range(4):
        keep = [j for j in range(4) if j != i]
        assert got[i] == pytest.approx(L[i, pos[i]] - np.log(np.exp(L[i, keep]).sum()), rel=1e-12)
    loo = contrastive_log_probs(L, include_positive=False)
    for i in range(4):
        keep = [j for j in range(4) if j != i]
        assert loo[i] == pytest.approx(L[i, i] - np.log(np.exp(L[i, keep]).sum()), rel=1e-12)


def test_core_exclusion_is_exact_when_the_excluded_entry_dominates():
    # Self-similarity 1/tau dominates at small tau: subtracting it afterwards would
    # cancel catastrophically; excluding by index does not.
    L = np.array([[1e4, 1.0, 0.0], [1.0, 1e4, 0.0], [0.0, 1.0, 1e4]])
    got = contrastive_log_probs(L, np.array([1, 0, 1]), exclude=np.arange(3))
    assert got[0] == pytest.approx(1.0 - np.logaddexp(1.0, 0.0), rel=1e-14)


def test_core_validation():
    with pytest.raises(ValueError, match="positives"):
        contrastive_log_probs(np.zeros((2, 2)), np.array([0, 2]))
    with pytest.raises(TypeError, match="positives"):
        contrastive_log_probs(np.zeros((2, 2)), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="exclude"):
        contrastive_log_probs(np.zeros((2, 2)), exclude=np.array([0, 1]))
    with pytest.raises(ValueError, match="at least one candidate"):
        contrastive_log_probs(np.zeros((1, 1)), include_positive=False)
    with pytest.raises(ValueError, match="anchors"):
        contrastive_log_probs(np.zeros((2, 2)), anchors="diagonal")
    with pytest.raises(ValueError, match="logits"):
        contrastive_log_probs(np.zeros(3))
    with pytest.raises(ValueError, match="candidates"):
        contrastive_log_probs(np.zeros((3, 2)))


def test_core_symmetric_loss_is_mean_of_directions(rng):
    L = rng.normal(size=(5, 5))
    both = contrastive_loss_from_logits(L, anchors="both")
    rows = contrastive_loss_from_logits(L, anchors="rows")
    cols = contrastive_loss_from_logits(L, anchors="columns")
    assert both == pytest.approx((rows + cols) / 2, rel=1e-14)
