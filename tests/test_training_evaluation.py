"""Tests for infonce_lib.training.evaluation: the nearest-neighbour vote against a loop, and the
held-out bound against chapter 6's functions on the same embeddings."""

from __future__ import annotations

import math

import numpy as np
import pytest

import infonce_lib as il

D = il.load_digits()


def _knn_loop(Xtr, ytr, Xte, yte, k):
    """The documented rule, one test row at a time."""
    right = 0
    for x, y in zip(Xte, yte, strict=True):
        cos = [float(x @ t / (np.linalg.norm(x) * np.linalg.norm(t))) for t in Xtr]
        order = sorted(range(len(Xtr)), key=lambda i: -cos[i])[:k]  # stable: lower index first
        votes = {}
        for i in order:
            votes[ytr[i]] = votes.get(ytr[i], 0) + 1
        best = max(votes.values())
        winner = next(ytr[i] for i in order if votes[ytr[i]] == best)
        right += winner == y
    return right / len(yte)


@pytest.mark.parametrize("k", [1, 2, 4, 5])
def test_knn_is_the_documented_vote(k):
    rng = np.random.default_rng(k)
    Xtr, ytr = rng.normal(size=(40, 3)), rng.integers(0, 4, size=40)
    Xte, yte = rng.normal(size=(25, 3)), rng.integers(0, 4, size=25)
    assert il.knn_accuracy(Xtr, ytr, Xte, yte, k=k) == _knn_loop(Xtr, ytr, Xte, yte, k)


def test_knn_ties_go_to_the_nearest_tied_class():
    Xtr = [[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-1.0, 0.1]]
    ytr = [2, 1, 1, 2]
    # k = 4: two votes each; class 2 has the most similar neighbour of [1, 0].
    assert il.knn_accuracy(Xtr, ytr, [[1.0, 0.0]], [2], k=4) == 1.0
    assert il.knn_accuracy(Xtr, ytr, [[1.0, 0.0]], [1], k=4) == 0.0


def test_knn_on_the_digits_and_its_errors():
    acc = il.knn_accuracy(D.x_train, D.y_train, D.x_test, D.y_test, k=5)
    assert acc > 0.95  # raw pixels are close to their class
    with pytest.raises(ValueError, match="k must be at most"):
        il.knn_accuracy(D.x_train[:3], D.y_train[:3], D.x_test, D.y_test, k=4)
    with pytest.raises(ValueError, match="no zero rows"):
        il.knn_accuracy(np.zeros((3, 2)), [0, 1, 1], [[1.0, 0.0]], [0], k=1)


def test_the_heldout_bound_is_infonce_of_the_embedded_view_pairs():
    enc = il.init_encoder(seed=0)
    views = il.ViewRecipe(shift=1, noise=0.1)
    out = il.heldout_infonce(
        enc, D.x_test, views, batch_size=100, temperature=0.2, rounds=3, seed=7
    )
    assert out.values.shape == (18,) and out.cosines.shape == (18, 100, 100)  # 3 x 602 // 100
    # The same shuffles and views by hand, then chapter 6's functions.
    rng = np.random.default_rng(7)
    A, B = [], []
    for _ in range(3):
        x = D.x_test[rng.permutation(602)[:600]]
        A.append(il.encode(enc, il.make_views(x, views, seed=rng)))
        B.append(il.encode(enc, il.make_views(x, views, seed=rng)))
    S = il.cosine_scores(np.concatenate(A), np.concatenate(B), 100)
    np.testing.assert_allclose(out.cosines, S, atol=1e-15)
    np.testing.assert_allclose(out.values, il.infonce_at_beta(S, 5.0), atol=1e-12)
    assert np.all(out.values <= math.log(100))
    assert out.mean == pytest.approx(out.values.mean(), abs=1e-15)
    assert out.se == pytest.approx(out.values.std(ddof=1) / math.sqrt(18), rel=1e-12)


def test_the_bound_depends_on_the_views_not_only_on_the_encoder():
    # One encoder, two view pairs: identical views share everything, noisy ones less.
    enc = il.init_encoder(seed=1)
    same = il.heldout_infonce(enc, D.x_test, il.ViewRecipe(), batch_size=64, temperature=0.05,
                              seed=0)  # fmt: skip
    noisy = il.heldout_infonce(enc, D.x_test, il.ViewRecipe(noise=0.3, dropout=0.3),
                               batch_size=64, temperature=0.05, seed=0)  # fmt: skip
    assert same.mean > noisy.mean + 1.0
    # Identical views: each positive is the largest cosine of its row (1), so at its best
    # temperature even a random encoder's bound is within 0.01 of log K.
    assert math.log(64) - il.best_temperature(same.cosines).infonce < 0.01


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"batch_size": 1}, "batch_size must be >= 2"),
        ({"batch_size": 700}, "at least batch_size"),
        ({"temperature": 0.0}, "temperature must be > 0"),
        ({"rounds": 0}, "rounds must be >= 1"),
        ({"views": "noise"}, "views must be a ViewRecipe"),
        ({"images": D.x_test[:, :8]}, "images must have 64 columns"),
    ],
)
def test_bad_calls_are_refused_by_name(kwargs, match):
    args = {"encoder": il.init_encoder(seed=0), "images": D.x_test, "views": il.ViewRecipe(),
            "batch_size": 64, "temperature": 0.1, "seed": 0, **kwargs}  # fmt: skip
    with pytest.raises((TypeError, ValueError), match=match):
        il.heldout_infonce(**args)
