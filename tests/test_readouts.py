"""Tests for infonce_lib.readouts: the linear and nearest-neighbour readouts of chapter 7."""

from __future__ import annotations

import numpy as np
import pytest

import infonce_lib as il


def _reference_r2(t, pred):
    return 1 - np.sum((t - pred) ** 2) / np.sum((t - t.mean()) ** 2)


def test_linear_readout_matches_least_squares_by_hand():
    rng = np.random.default_rng(0)
    F = rng.normal(size=(300, 4))
    t = F @ [1.0, 0.5, 0.0, -1.0] + 0.3 * rng.normal(size=300) + 2.0
    A = np.column_stack([F, np.ones(300)])
    w = np.linalg.lstsq(A[:150], t[:150], rcond=None)[0]
    want = _reference_r2(t[150:], A[150:] @ w)
    assert il.linear_readout_r2(F, t, 150) == pytest.approx(want, rel=1e-10)


def test_linear_readout_is_invariant_to_invertible_linear_maps():
    rng = np.random.default_rng(1)
    F = rng.normal(size=(200, 3))
    t = np.sin(F[:, 0]) + F[:, 1]
    M = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    assert il.linear_readout_r2(F @ M, t, 100) == pytest.approx(
        il.linear_readout_r2(F, t, 100), rel=1e-9
    )


def test_knn_readout_matches_a_loop():
    rng = np.random.default_rng(2)
    F = rng.normal(size=(120, 3))
    t = F[:, 0] / np.linalg.norm(F, axis=1)
    U = F / np.linalg.norm(F, axis=1, keepdims=True)
    pred = []
    for row in U[60:]:
        sims = U[:60] @ row
        pred.append(t[:60][np.argsort(-sims)[:5]].mean())
    want = _reference_r2(t[60:], np.array(pred))
    assert il.knn_readout_r2(F, t, 60, k=5) == pytest.approx(want, rel=1e-12)


def test_knn_readout_ignores_lengths_and_scales():
    rng = np.random.default_rng(3)
    F = rng.normal(size=(200, 4))
    t = F[:, 1] / np.linalg.norm(F, axis=1)
    lengths = rng.uniform(0.1, 10, size=(200, 1))
    base = il.knn_readout_r2(F, t, 100)
    assert il.knn_readout_r2(F * lengths, t, 100) == base
    assert il.knn_readout_r2(F * 1e200, t * 1e-200, 100) == pytest.approx(base, rel=1e-12)


def test_readouts_reject_bad_input():
    F, t = np.ones((10, 2)), np.arange(10.0)
    with pytest.raises(ValueError, match="n_train"):
        il.linear_readout_r2(F, t, 10)
    with pytest.raises(ValueError, match="target must vary"):
        il.linear_readout_r2(F, np.ones(10), 5)
    with pytest.raises(ValueError, match="one entry per row"):
        il.knn_readout_r2(F, t[:9], 5)
    with pytest.raises(ValueError, match="zero rows"):
        il.knn_readout_r2(np.zeros((10, 2)), t, 5, k=2)
    with pytest.raises(ValueError, match="k must be at most"):
        il.knn_readout_r2(F, t, 5, k=6)
