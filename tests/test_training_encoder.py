"""Tests for infonce_lib.training.encoder: the forward pass against a plain reference, and every
gradient (through the l2 normalisation and the ReLUs) against central finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import infonce_lib as il
from infonce_lib.training.encoder import _backward, _forward


def _reference(weights, X):
    """The encoder written out image by image, with no shared code."""
    out = []
    for x in X:
        h = np.asarray(x, dtype=np.float64)
        for l in range(0, len(weights), 2):
            h = h @ weights[l] + weights[l + 1]
            if l < len(weights) - 2:
                h = np.where(h > 0, h, 0.0)
        out.append(h / np.sqrt(np.sum(h * h)))
    return np.array(out)


@pytest.mark.parametrize("sizes", [(64, 128, 32), (5, 7, 4, 3), (6, 2)])
def test_encode_matches_the_reference_and_gives_unit_vectors(sizes):
    enc = il.init_encoder(sizes, seed=1)
    X = np.random.default_rng(2).normal(size=(9, sizes[0]))
    U = il.encode(enc, X)
    np.testing.assert_allclose(U, _reference(enc.weights, X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, atol=1e-14)


def _loss(enc, X, C):
    """A loss that is not linear in the embeddings: sum_i sum_d C_id u_id^2 + u_i . c."""
    U = il.encode(enc, X)
    return float(np.sum(C * U**2) + np.sum(U[:, :1]))


@pytest.mark.parametrize("sizes", [(6, 5, 4), (5, 7, 4, 3), (4, 3)])
def test_every_gradient_matches_central_differences(sizes):
    rng = np.random.default_rng(0)
    enc = il.init_encoder(sizes, seed=3)
    X = rng.normal(size=(7, sizes[0]))
    C = rng.normal(size=(7, sizes[-1]))
    U = il.encode(enc, X)
    G = 2 * C * U
    G[:, 0] += 1.0  # the gradient of the loss with respect to the embeddings
    grads = il.encoder_gradients(enc, X, G)
    assert [g.shape for g in grads] == [w.shape for w in enc.weights]
    h = 1e-6
    for i, w in enumerate(enc.weights):
        for idx in np.ndindex(w.shape):
            up, down = enc.copy(), enc.copy()
            up.weights[i][idx] += h
            down.weights[i][idx] -= h
            fd = (_loss(up, X, C) - _loss(down, X, C)) / (2 * h)
            assert abs(fd - grads[i][idx]) < 1e-7 * (1 + abs(fd)), (i, idx, fd, grads[i][idx])


def test_the_normalisation_removes_the_radial_part_of_the_gradient():
    # A gradient along each embedding itself moves nothing: every weight gradient is 0.
    enc = il.init_encoder((6, 5, 4), seed=0)
    X = np.random.default_rng(1).normal(size=(8, 6))
    U = il.encode(enc, X)
    grads = il.encoder_gradients(enc, X, 3.0 * U)
    assert max(np.abs(g).max() for g in grads) < 1e-13


def test_float32_forward_and_backward_agree_with_float64():
    enc = il.init_encoder((64, 128, 32), seed=0)
    X = il.load_digits().x_train[:50]
    G = np.random.default_rng(0).normal(size=(50, 32))
    U64, cache64 = _forward(enc.weights, X)
    w32 = [w.astype(np.float32) for w in enc.weights]
    U32, cache32 = _forward(w32, X.astype(np.float32))
    assert U32.dtype == np.float32
    np.testing.assert_allclose(U32, U64, atol=1e-5)
    for g32, g64 in zip(
        _backward(w32, cache32, U32, G.astype(np.float32)),
        _backward(enc.weights, cache64, U64, G),
        strict=True,
    ):
        np.testing.assert_allclose(g32, g64, atol=1e-4 * np.abs(g64).max())


def test_init_is_pytorchs_default_and_seeded():
    enc = il.init_encoder((64, 128, 32), seed=0)
    for W, b in zip(enc.weights[::2], enc.weights[1::2], strict=True):
        a = 1 / np.sqrt(W.shape[0])
        assert np.abs(W).max() <= a and np.abs(b).max() <= a
        # uniform on [-a, a]: variance a^2 / 3
        assert abs(W.var() / (a * a / 3) - 1) < 0.05
    again = il.init_encoder((64, 128, 32), seed=np.random.default_rng(0))
    assert all(np.array_equal(x, y) for x, y in zip(enc.weights, again.weights, strict=True))
    assert enc.sizes == (64, 128, 32)


def test_copy_is_independent():
    enc = il.init_encoder((3, 2), seed=0)
    snap = enc.copy()
    enc.weights[0][0, 0] += 1.0
    assert snap.weights[0][0, 0] == enc.weights[0][0, 0] - 1.0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda e: il.encode(e, np.ones((2, 5))), "images must have 4 columns"),
        (lambda e: il.encode("enc", np.ones((2, 4))), "encoder must be an Encoder"),
        (lambda e: il.encoder_gradients(e, np.ones((2, 4)), np.ones((2, 2))), "grad_embeddings"),
        (lambda e: il.init_encoder((4,), seed=0), "sizes must give at least two"),
        (lambda e: il.init_encoder((4, 0), seed=0), "sizes must be >= 1"),
        (lambda e: il.Encoder((np.ones((2, 3)), np.ones(2))), "do not fit"),
        (lambda e: il.Encoder((np.ones((2, 3)),)), "weights must be a tuple"),
        (lambda e: il.Encoder((np.ones((2, 3), dtype=np.float32), np.ones(3))), "float64"),
        (lambda e: il.encode(e, np.full((1, 4), 1e308)), "overflowed"),
    ],
)
def test_bad_input_is_refused_by_name(call, match):
    enc = il.init_encoder((4, 3), seed=0)
    with pytest.raises((TypeError, ValueError), match=match):
        call(enc)
