"""Tests for infonce_lib.training.probe against a reference implementation: scikit-learn's
LogisticRegression (a test-only dependency; the library never imports it) fitted to the same
objective on the same data."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import infonce_lib as il

D = il.load_digits()


def _objective(W, b, X, y, C):
    """J(W, b) of the module docstring, computed directly."""
    L = X @ W + b
    L = L - L.max(axis=1, keepdims=True)
    log_p = L - np.log(np.exp(L).sum(axis=1, keepdims=True))
    return -C * log_p[np.arange(len(y)), y].sum() + 0.5 * np.sum(W * W)


def _reference(X, y, C):
    return LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(X, y)


@pytest.mark.parametrize("C", [0.1, 1.0, 30.0])
def test_the_probe_solves_scikit_learns_problem_on_the_digits(C):
    ref = _reference(D.x_train, D.y_train, C)
    mine = il.linear_probe(D.x_train, D.y_train, D.x_test, D.y_test, C=C, tol=1e-10)
    # The same predictions and accuracy, probabilities to 1e-4 ...
    np.testing.assert_array_equal(
        np.argmax(mine.predict_proba(D.x_test), axis=1), ref.predict(D.x_test)
    )
    assert mine.accuracy == ref.score(D.x_test, D.y_test)
    np.testing.assert_allclose(mine.predict_proba(D.x_test), ref.predict_proba(D.x_test), atol=1e-4)
    np.testing.assert_allclose(mine.weights, ref.coef_.T, atol=2e-3 * np.abs(ref.coef_).max())
    # ... and an objective at least as low as scikit-learn's (to round-off): the same minimum.
    j_mine = _objective(mine.weights, mine.intercepts, D.x_train, D.y_train, C)
    j_ref = _objective(ref.coef_.T, ref.intercept_, D.x_train, D.y_train, C)
    assert j_mine <= j_ref + 1e-8 * abs(j_ref)


def test_the_default_tolerance_gives_the_same_accuracies_as_a_tight_one():
    for C in (0.1, 10.0):
        loose = il.linear_probe(D.x_train, D.y_train, D.x_test, D.y_test, C=C)
        tight = il.linear_probe(D.x_train, D.y_train, D.x_test, D.y_test, C=C, tol=1e-10)
        assert loose.accuracy == tight.accuracy and loose.iterations < tight.iterations
        np.testing.assert_allclose(
            loose.predict_proba(D.x_test), tight.predict_proba(D.x_test), atol=2e-3
        )


def test_the_probe_on_encoder_features_and_few_labels_matches_the_reference():
    enc = il.init_encoder(seed=0)
    Ftr, Fte = il.encode(enc, D.x_train), il.encode(enc, D.x_test)
    out = il.few_label_probe(Ftr, D.y_train, Fte, D.y_test, per_class=5, draws=6, C=10.0, seed=1)
    for rows, acc in zip(out.selections, out.accuracies, strict=True):
        ref = _reference(Ftr[rows], D.y_train[rows], 10.0)
        assert acc == ref.score(Fte, D.y_test)
        alone = il.linear_probe(Ftr[rows], D.y_train[rows], Fte, D.y_test, C=10.0)
        assert alone.accuracy == acc  # fitting the draws together changes nothing


def test_label_draws_are_per_class_without_replacement_and_seeded():
    out = il.few_label_probe(
        D.x_train, D.y_train, D.x_test, D.y_test, per_class=3, draws=50, seed=4
    )
    assert out.selections.shape == (50, 30)
    for rows in out.selections:
        assert np.unique(rows).size == 30  # no image labelled twice
        np.testing.assert_array_equal(D.y_train[rows], np.repeat(np.arange(10), 3))
    # Draws differ from one another, and every training image of class 0 can be drawn.
    assert np.unique(out.selections, axis=0).shape[0] == 50
    zeros = np.flatnonzero(D.y_train == 0)
    assert np.isin(out.selections[:, :3], zeros).all()
    again = il.few_label_probe(
        D.x_train, D.y_train, D.x_test, D.y_test, per_class=3, draws=50,
        seed=np.random.default_rng(4),
    )  # fmt: skip
    np.testing.assert_array_equal(again.selections, out.selections)
    np.testing.assert_array_equal(again.accuracies, out.accuracies)
    assert out.mean == out.accuracies.mean()


def test_few_labels_are_noisy_and_all_labels_are_not():
    # A draw of 5 labels per class scatters by a few points; a single fit has no such noise.
    out = il.few_label_probe(D.x_train, D.y_train, D.x_test, D.y_test, draws=20, seed=0)
    assert out.accuracies.std() > 0.005
    full = il.linear_probe(D.x_train, D.y_train, D.x_test, D.y_test)
    assert full.accuracy > out.accuracies.max()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"train_labels": D.y_train.astype(float)}, "train_labels must hold integer"),
        ({"train_labels": D.y_train[:-1]}, "train_labels must have shape"),
        ({"test_features": D.x_test[:, :5]}, "test_features must have 64 columns"),
        ({"train_labels": np.zeros(1195, dtype=int)}, "at least two classes"),
        ({"C": 0.0}, "C must be > 0"),
        ({"C": 1e11}, "C must be at most"),
        ({"tol": 2.0}, "tol must lie in"),
        ({"per_class": 400}, "per_class must be at most"),
        ({"draws": 0}, "draws must be >= 1"),
        ({"seed": None}, "seed must be"),
    ],
)
def test_bad_input_is_refused_by_name(kwargs, match):
    args = {"train_features": D.x_train, "train_labels": D.y_train, "test_features": D.x_test,
            "test_labels": D.y_test, "seed": 0, **kwargs}  # fmt: skip
    with pytest.raises((TypeError, ValueError), match=match):
        il.few_label_probe(**args)
