"""Tests for infonce_lib.losses (the foundation: info_nce_loss)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import infonce_lib as il
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


# ================================================================ chapter 2: the family

from infonce_lib import (  # noqa: E402
    DEFAULT_CHUNK_SIZE,
    MoCoQueue,
    binary_nce_loss,
    clip_loss,
    contrastive_log_probs_streaming,
    info_nce_loss_and_grad,
    moco_loss,
    nt_xent_loss,
)
from tests.reference_losses import (  # noqa: E402
    binary_nce_reference,
    clip_reference,
    moco_reference,
    nt_xent_reference,
)


def _unit(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _nt_xent_general_form(z1, z2, tau):
    """NT-Xent through the public general core: the 2N x 2N cosine logits."""
    Z = _unit(np.vstack([z1, z2]))
    n = len(z1)
    m = 2 * n
    return contrastive_loss_from_logits(Z @ Z.T / tau, (np.arange(m) + n) % m, exclude=np.arange(m))


# ---------------------------------------------------------------- NT-Xent


@pytest.mark.parametrize("tau", [0.05, 0.5, 2.0])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_nt_xent_matches_loop_reference(rng, n, tau):
    z1, z2 = rng.normal(size=(2, n, 4))
    expected = nt_xent_reference(z1.tolist(), z2.tolist(), tau)
    assert nt_xent_loss(z1, z2, tau) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert nt_xent_loss(z1, z2, tau, chunk_size=3) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_nt_xent_equals_the_general_form(rng):
    z1, z2 = rng.normal(size=(2, 7, 3))
    assert nt_xent_loss(z1, z2, 0.3) == pytest.approx(_nt_xent_general_form(z1, z2, 0.3), rel=1e-13)


def test_nt_xent_by_hand_and_default_temperature():
    z1 = np.array([[1.0, 0.0], [0.0, 1.0]])
    # every view: positive s = 1, other two views s = 0 (orthogonal) -> log(1 + 2 e^{-1/tau})
    assert nt_xent_loss(z1, z1, 1.0) == pytest.approx(math.log(1 + 2 * math.exp(-1.0)), rel=1e-14)
    assert nt_xent_loss(z1, z1) == pytest.approx(math.log(1 + 2 * math.exp(-2.0)), rel=1e-14)


def test_nt_xent_n_equals_one_is_zero_and_equal_similarities_give_log_2n_minus_1():
    assert nt_xent_loss([[1.0, 2.0]], [[-3.0, 0.5]], 0.1) == 0.0
    z = np.ones((4, 3))
    assert nt_xent_loss(z, 2 * z, 0.1) == pytest.approx(math.log(7), rel=1e-14)


def test_nt_xent_invariances(rng):
    z1, z2 = rng.normal(size=(2, 6, 5))
    base = nt_xent_loss(z1, z2, 0.2)
    scales = rng.uniform(0.1, 10, size=(6, 1))
    assert nt_xent_loss(3.7 * z1, 0.01 * z2, 0.2) == pytest.approx(base, rel=1e-13)
    assert nt_xent_loss(scales * z1, z2[:, :] * scales[::-1], 0.2) == pytest.approx(base, rel=1e-13)
    assert nt_xent_loss(z2, z1, 0.2) == pytest.approx(base, rel=1e-13)  # swap the views
    perm = rng.permutation(6)
    assert nt_xent_loss(z1[perm], z2[perm], 0.2) == pytest.approx(base, rel=1e-13)
    Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))  # a rotation of the embedding space
    assert nt_xent_loss(z1 @ Q, z2 @ Q, 0.2) == pytest.approx(base, rel=1e-12)


def test_nt_xent_self_similarity_is_excluded_not_subtracted():
    # At tiny tau the self-similarity 1/tau dominates everything; excluding it by index
    # keeps full precision where subtracting it from a sum would cancel catastrophically.
    z1 = np.array([[1.0, 0.0], [0.0, 1.0]])
    z2 = np.array([[1.0, 0.1], [0.1, 1.0]])
    tau = 1e-3
    expected = nt_xent_reference(z1.tolist(), z2.tolist(), tau)
    got = nt_xent_loss(z1, z2, tau)
    assert math.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e150, 1e300])
def test_nt_xent_tiny_and_huge_vectors_are_normalised_without_overflow(rng, scale):
    z1, z2 = rng.normal(size=(2, 4, 3))
    assert nt_xent_loss(z1 * scale, z2 * scale, 0.5) == pytest.approx(
        nt_xent_loss(z1, z2, 0.5), rel=1e-13
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_nt_xent_any_real_dtype(dtype):
    rng = np.random.default_rng(1)
    z1 = rng.integers(1, 5, size=(3, 4)).astype(dtype)
    z2 = rng.integers(1, 5, size=(3, 4)).astype(dtype)
    assert nt_xent_loss(z1, z2, 0.5) == nt_xent_loss(z1.astype(float), z2.astype(float), 0.5)


# ---------------------------------------------------------------- chunked NT-Xent


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 11, 22, 23, 64, DEFAULT_CHUNK_SIZE])
@pytest.mark.parametrize("tau", [0.01, 0.5, 5.0])
def test_nt_xent_chunked_equals_dense(rng, chunk, tau):
    z1, z2 = rng.normal(size=(2, 11, 6))  # 2N = 22: most chunk sizes do not divide it
    dense = nt_xent_loss(z1, z2, tau)
    assert nt_xent_loss(z1, z2, tau, chunk_size=chunk) == pytest.approx(dense, rel=1e-12)


def test_nt_xent_chunked_equals_dense_when_the_loss_is_small(rng):
    z1 = rng.normal(size=(50, 32))
    z2 = z1 + 1e-3 * rng.normal(size=(50, 32))
    dense = nt_xent_loss(z1, z2, 0.02)
    assert dense < 1e-6
    for chunk in (7, 16, 100):
        assert nt_xent_loss(z1, z2, 0.02, chunk_size=chunk) == pytest.approx(dense, rel=1e-12)


def test_nt_xent_chunked_never_forms_the_full_matrix(rng):
    import tracemalloc

    n, d, chunk = 2048, 16, 256
    z1, z2 = rng.normal(size=(2, n, d))
    dense_logits_bytes = (2 * n) ** 2 * 8  # 128 MiB
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        nt_xent_loss(z1, z2, 0.5, chunk_size=chunk)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    # normalised views (2N x D) + one block (chunk^2) + O(N) vectors: about 1 MiB here
    assert peak < 0.05 * dense_logits_bytes
    assert peak < 2 * (2 * n * d * 8) + 2 * chunk**2 * 8 + 64 * (2 * n) * 8


@given(
    st.integers(1, 9),
    st.integers(1, 4),
    st.integers(1, 20),
    st.floats(0.02, 10.0),
    st.integers(0, 2**32 - 1),
)
def test_nt_xent_chunked_equals_dense_property(n, d, chunk, tau, seed):
    g = np.random.default_rng(seed)
    z1 = g.normal(size=(n, d))
    z2 = g.normal(size=(n, d))
    assert nt_xent_loss(z1, z2, tau, chunk_size=chunk) == pytest.approx(
        nt_xent_loss(z1, z2, tau), rel=1e-11, abs=1e-13
    )


# ---------------------------------------------------------------- the streaming core


@pytest.mark.parametrize("include_positive", [True, False])
@pytest.mark.parametrize("chunk", [1, 3, 4, 50])
def test_streaming_core_equals_dense_core(rng, chunk, include_positive):
    A = rng.normal(size=(9, 5))
    B = rng.normal(size=(13, 5))
    pos = rng.integers(0, 13, size=9)
    exc = (pos + 1 + rng.integers(0, 12, size=9)) % 13
    dense = contrastive_log_probs(
        A @ B.T / 0.4, pos, exclude=exc, include_positive=include_positive
    )
    got = contrastive_log_probs_streaming(
        A,
        B,
        pos,
        temperature=0.4,
        exclude=exc,
        include_positive=include_positive,
        chunk_size=chunk,
    )
    np.testing.assert_allclose(got, dense, rtol=1e-12, atol=1e-14)


def test_streaming_core_huge_logits_and_underflow(rng):
    A = rng.normal(size=(6, 3)) * 100
    B = rng.normal(size=(6, 3)) * 100
    dense = contrastive_log_probs(A @ B.T / 0.01)
    got = contrastive_log_probs_streaming(A, B, temperature=0.01, chunk_size=4)
    np.testing.assert_allclose(got, dense, rtol=1e-12)


def test_streaming_core_validation():
    A = np.ones((3, 2))
    with pytest.raises(ValueError, match="same dimension"):
        contrastive_log_probs_streaming(A, np.ones((3, 3)))
    with pytest.raises(ValueError, match="chunk_size"):
        contrastive_log_probs_streaming(A, A, chunk_size=0)
    with pytest.raises(TypeError, match="chunk_size"):
        contrastive_log_probs_streaming(A, A, chunk_size=2.0)
    with pytest.raises(ValueError, match="candidates"):
        contrastive_log_probs_streaming(A, np.ones((2, 2)))
    with pytest.raises(ValueError, match="exclude"):
        contrastive_log_probs_streaming(A, A, exclude=np.arange(3))
    with pytest.raises(ValueError, match="at least one candidate"):
        contrastive_log_probs_streaming(A[:1], A[:1], include_positive=False)
    with pytest.raises(ValueError, match="temperature"):
        contrastive_log_probs_streaming(A, A, temperature=0.0)
    with pytest.raises(ValueError, match="overflowed"):
        contrastive_log_probs_streaming(np.full((2, 2), 1e200), np.full((2, 2), 1e200))


# ---------------------------------------------------------------- CLIP


@pytest.mark.parametrize("scale", [1.0, 1 / 0.07, 100.0])
def test_clip_matches_loop_reference(rng, scale):
    images, texts = rng.normal(size=(2, 6, 4))
    expected = clip_reference(images.tolist(), texts.tolist(), scale)
    assert clip_loss(images, texts, scale) == pytest.approx(expected, rel=1e-12)


def test_clip_equals_the_general_form_and_is_the_mean_of_two_directions(rng):
    images, texts = rng.normal(size=(2, 5, 3))
    L = 14.0 * _unit(images) @ _unit(texts).T
    assert clip_loss(images, texts, 14.0) == pytest.approx(
        contrastive_loss_from_logits(L, anchors="both"), rel=1e-13
    )
    i2t = contrastive_loss_from_logits(L, anchors="rows")
    t2i = contrastive_loss_from_logits(L, anchors="columns")
    assert clip_loss(images, texts, 14.0) == pytest.approx((i2t + t2i) / 2, rel=1e-13)
    assert clip_loss(images, texts) == clip_loss(images, texts, 1 / 0.07)


def test_clip_invariances(rng):
    images, texts = rng.normal(size=(2, 6, 4))
    base = clip_loss(images, texts, 10.0)
    scales = rng.uniform(0.01, 100, size=(6, 1))
    assert clip_loss(scales * images, 5 * texts, 10.0) == pytest.approx(base, rel=1e-13)
    assert clip_loss(texts, images, 10.0) == pytest.approx(base, rel=1e-13)  # swap
    perm = rng.permutation(6)
    assert clip_loss(images[perm], texts[perm], 10.0) == pytest.approx(base, rel=1e-13)


def test_clip_extremes(rng):
    images, texts = rng.normal(size=(2, 5, 3))
    assert clip_loss(images, texts, 1e-12) == pytest.approx(math.log(5), abs=1e-10)
    big = clip_loss(images, texts, 1e6)
    assert math.isfinite(big)
    assert big == pytest.approx(clip_reference(images.tolist(), texts.tolist(), 1e6), rel=1e-10)
    assert clip_loss([[1.0, 0.0]], [[0.0, 1.0]], 3.0) == 0.0  # N = 1


# ---------------------------------------------------------------- MoCo


@pytest.mark.parametrize("n_queue", [0, 1, 7, 40])
def test_moco_matches_loop_reference(rng, n_queue):
    q, k = rng.normal(size=(2, 5, 4))
    queue = rng.normal(size=(n_queue, 4))
    expected = moco_reference(q.tolist(), k.tolist(), queue.tolist(), 0.2)
    assert moco_loss(q, k, queue, 0.2) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_moco_equals_the_general_form(rng):
    q, k = rng.normal(size=(2, 4, 3))
    queue = rng.normal(size=(9, 3))
    logits = np.hstack([np.sum(q * k, axis=1, keepdims=True), q @ queue.T]) / 0.07
    assert logits.shape == (4, 10)
    assert moco_loss(q, k, queue) == pytest.approx(
        contrastive_loss_from_logits(logits, np.zeros(4, dtype=int)), rel=1e-13
    )


def test_moco_empty_queue_gives_zero_and_queue_order_does_not_matter(rng):
    q, k = rng.normal(size=(2, 3, 2))
    assert moco_loss(q, k, np.empty((0, 2))) == 0.0
    queue = rng.normal(size=(8, 2))
    assert moco_loss(q, k, queue[::-1]) == pytest.approx(moco_loss(q, k, queue), rel=1e-14)


def test_moco_other_keys_of_the_batch_are_not_negatives(rng):
    q, k = rng.normal(size=(2, 4, 3))
    queue = rng.normal(size=(5, 3))
    base = moco_loss(q, k, queue, 0.1)
    k2 = k.copy()
    k2[1:] = rng.normal(size=(3, 3))  # change the other queries' keys
    assert moco_loss(q[:1], k2[:1], queue, 0.1) == pytest.approx(
        moco_reference(q[:1].tolist(), k[:1].tolist(), queue.tolist(), 0.1), rel=1e-12
    )
    assert math.isfinite(base)


def test_moco_queue_wraps_around_fifo():
    Q = MoCoQueue(capacity=5, dim=1)
    assert len(Q) == 0
    assert Q.keys.shape == (0, 1)
    Q.enqueue([[1.0], [2.0]])
    Q.enqueue([[3.0], [4.0]])
    assert Q.keys.ravel().tolist() == [1.0, 2.0, 3.0, 4.0]
    Q.enqueue([[5.0], [6.0]])  # 6 wraps to slot 0, evicting 1 (the oldest)
    assert Q.keys.ravel().tolist() == [6.0, 2.0, 3.0, 4.0, 5.0]
    assert len(Q) == 5
    Q.enqueue([[7.0], [8.0], [9.0]])  # batch size 3 does not divide 5: no assert
    assert sorted(Q.keys.ravel().tolist()) == [5.0, 6.0, 7.0, 8.0, 9.0]
    Q.enqueue(np.arange(10.0, 22.0)[:, None])  # larger than the queue: the last 5 stay
    assert sorted(Q.keys.ravel().tolist()) == [17.0, 18.0, 19.0, 20.0, 21.0]
    Q.enqueue([[22.0]])  # and the oldest of those (17) goes next
    assert sorted(Q.keys.ravel().tolist()) == [18.0, 19.0, 20.0, 21.0, 22.0]


def test_moco_queue_matches_a_plain_fifo(rng):
    from collections import deque

    Q = MoCoQueue(capacity=7, dim=2)
    ref: deque = deque(maxlen=7)
    for _ in range(30):
        batch = rng.normal(size=(int(rng.integers(1, 12)), 2))
        Q.enqueue(batch)
        ref.extend(map(tuple, batch))
        got = sorted(map(tuple, Q.keys))
        assert got == sorted(ref)
        assert len(Q) == len(ref)


def test_moco_queue_loss_then_enqueue(rng):
    initial = _unit(rng.normal(size=(6, 3)))
    Q = MoCoQueue(6, 3, initial=initial)
    q, k = _unit(rng.normal(size=(2, 4, 3)))
    loss = Q.loss_and_enqueue(q, k, 0.1)
    assert loss == pytest.approx(moco_loss(q, k, initial, 0.1), rel=1e-14)  # before the enqueue
    assert {tuple(r) for r in k} <= {tuple(r) for r in Q.keys}  # then k is in the queue
    assert Q.capacity == 6 and Q.dim == 3 and "capacity=6" in repr(Q)


def test_moco_queue_validation():
    with pytest.raises(ValueError, match="capacity"):
        MoCoQueue(0, 3)
    with pytest.raises(TypeError, match="dim"):
        MoCoQueue(4, 2.5)
    with pytest.raises(ValueError, match="initial"):
        MoCoQueue(4, 2, initial=np.ones((3, 2)))
    Q = MoCoQueue(4, 2)
    with pytest.raises(ValueError, match="dimension"):
        Q.enqueue(np.ones((2, 3)))
    with pytest.raises(ValueError, match="keys"):
        Q.enqueue([[np.nan, 1.0]])
    assert len(Q) == 0  # a rejected batch leaves the queue as it was


# ---------------------------------------------------------------- binary NCE


def test_binary_nce_matches_loop_reference(rng):
    F = rng.normal(size=(4, 6)) * 3
    for nu in (None, 0.5, 3.0):
        expected = binary_nce_reference(F.tolist(), 5.0 if nu is None else nu)
        assert binary_nce_loss(F, noise_ratio=nu) == pytest.approx(expected, rel=1e-12)


def test_binary_nce_is_not_shift_invariant_but_infonce_is(rng):
    F = rng.normal(size=(5, 5))
    c = rng.normal(size=(5, 1)) * 3
    assert contrastive_loss_from_logits(F + c) == pytest.approx(
        contrastive_loss_from_logits(F), rel=1e-13
    )
    assert abs(binary_nce_loss(F + c) - binary_nce_loss(F)) > 0.1


def test_binary_nce_extremes_and_validation():
    assert binary_nce_loss([[0.0, 0.0], [0.0, 0.0]]) == pytest.approx(2 * math.log(2), rel=1e-14)
    assert math.isfinite(binary_nce_loss([[1e6, -1e6], [-1e6, 1e6]]))
    assert binary_nce_loss([[1e6, -1e6], [-1e6, 1e6]]) == pytest.approx(0.0, abs=1e-300)
    assert binary_nce_loss([[5.0]]) == pytest.approx(math.log1p(math.exp(-5.0)), rel=1e-14)
    with pytest.raises(ValueError, match="candidates"):
        binary_nce_loss(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="noise_ratio"):
        binary_nce_loss(np.zeros((2, 2)), noise_ratio=0.0)


# ---------------------------------------------------------------- the gradient


def _central_differences(f, X, h):
    G = np.zeros_like(X)
    for idx in np.ndindex(*X.shape):
        E = np.zeros_like(X)
        E[idx] = h
        G[idx] = (f(X + E) - f(X - E)) / (2 * h)
    return G


def _rel_err(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.mark.parametrize("chunk", [None, 1, 2, 3, 100])
@pytest.mark.parametrize("tau", [0.2, 1.0])
def test_gradient_matches_central_differences(rng, chunk, tau):
    Z1, Z2 = rng.normal(size=(2, 5, 3))
    loss, dZ1, dZ2 = info_nce_loss_and_grad(Z1, Z2, tau, chunk_size=chunk)
    assert loss == pytest.approx(info_nce_loss(Z1, Z2, tau), rel=1e-13)
    fd1 = _central_differences(lambda X: info_nce_loss(X, Z2, tau), Z1, 1e-5)
    fd2 = _central_differences(lambda X: info_nce_loss(Z1, X, tau), Z2, 1e-5)
    assert _rel_err(dZ1, fd1) < 1e-6
    assert _rel_err(dZ2, fd2) < 1e-6


def test_gradient_is_the_softmax_formula(rng):
    from scipy.special import softmax

    Z1, Z2 = rng.normal(size=(2, 6, 4))
    tau, n = 0.3, 6
    _, dZ1, dZ2 = info_nce_loss_and_grad(Z1, Z2, tau)
    P = softmax(Z1 @ Z2.T / tau, axis=1)
    for i in range(n):  # anchor i: -(1/tau)(z+ - sum_k p_k z_k), over N for the mean
        np.testing.assert_allclose(dZ1[i], -(Z2[i] - P[i] @ Z2) / (tau * n), rtol=1e-12)
    for j in range(n):  # candidate j: its own anchor pulls, every anchor pushes with p_ij
        np.testing.assert_allclose(dZ2[j], -(Z1[j] - P[:, j] @ Z1) / (tau * n), rtol=1e-12)


@pytest.mark.parametrize("chunk", [1, 4, 7, 64])
def test_chunked_gradient_equals_dense(rng, chunk):
    Z1, Z2 = rng.normal(size=(2, 19, 6))
    loss, g1, g2 = info_nce_loss_and_grad(Z1, Z2, 0.05)
    closs, c1, c2 = info_nce_loss_and_grad(Z1, Z2, 0.05, chunk_size=chunk)
    assert closs == pytest.approx(loss, rel=1e-12)
    np.testing.assert_allclose(c1, g1, rtol=1e-10, atol=1e-14 * np.abs(g1).max())
    np.testing.assert_allclose(c2, g2, rtol=1e-10, atol=1e-14 * np.abs(g2).max())


def test_gradient_extremes(rng):
    _, g1, g2 = info_nce_loss_and_grad([[1.0, 2.0]], [[3.0, 4.0]])  # N = 1: loss constant
    assert np.all(g1 == 0) and np.all(g2 == 0)
    Z1, Z2 = rng.normal(size=(2, 4, 3))
    loss, g1, g2 = info_nce_loss_and_grad(Z1 * 1e3, Z2 * 1e3, 1e-3)  # logits ~ 1e9
    assert math.isfinite(loss) and np.isfinite(g1).all() and np.isfinite(g2).all()
    _, g1, g2 = info_nce_loss_and_grad(Z1.astype(np.float32), Z2.astype(np.float32), 0.5)
    assert g1.dtype == np.float64 and g2.dtype == np.float64


@settings(max_examples=60)
@given(
    st.integers(1, 96), st.integers(1, 40), st.floats(1e-3, 10.0), st.floats(1e-3, 30.0),
    st.sampled_from([None, 5, 64]), st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_loss_of_loss_and_grad_is_info_nce_loss_to_rounding(n, d, tau, scale, chunk, seed):
    # The documented contract: the same loss as info_nce_loss up to rounding, within
    # 1e-14 (1 + loss + max |logit|), with or without chunk_size.
    rng = np.random.default_rng(seed)
    Z1 = scale * rng.normal(size=(n, d))
    Z2 = Z1 * rng.uniform(0, 2) + scale * rng.normal(size=(n, d))
    loss = info_nce_loss(Z1, Z2, tau)
    got = info_nce_loss_and_grad(Z1, Z2, tau, chunk_size=chunk)[0]
    biggest = np.abs(Z1 @ Z2.T / tau).max()
    assert abs(got - loss) <= 1e-14 * (1 + loss + biggest)


def test_loss_of_loss_and_grad_differs_from_info_nce_loss_in_the_last_bits_only():
    # Not always bit-for-bit (the docstring says so): count how often, on small batches.
    rng = np.random.default_rng(0)
    differ = 0
    for _ in range(200):
        Z1, Z2 = rng.normal(size=(2, 8, 5))
        a, b = info_nce_loss(Z1, Z2, 0.3), info_nce_loss_and_grad(Z1, Z2, 0.3)[0]
        assert abs(a - b) <= 4 * np.spacing(a)
        differ += a != b
    assert 0 < differ < 200


@given(pairs(max_n=6, max_d=4), st.floats(0.1, 10.0))
def test_gradient_properties(zz, tau):
    Z1, Z2 = zz
    _, dZ1, dZ2 = info_nce_loss_and_grad(Z1, Z2, tau)
    scale = max(1.0, np.abs(Z1).max(), np.abs(Z2).max()) / tau
    # Adding one vector c to every candidate shifts each anchor's logits by a constant,
    # which the softmax ignores: the gradients of the candidates sum to zero.
    assert np.abs(dZ2.sum(axis=0)).max() <= 1e-9 * scale
    # Euler: the loss depends on Z1 only through Z1 @ Z2.T, so <Z1, dZ1> = <Z2, dZ2>.
    assert np.sum(Z1 * dZ1) == pytest.approx(np.sum(Z2 * dZ2), rel=1e-8, abs=1e-8 * scale)


# ---------------------------------------------------------------- bad input (chapter 2)


def test_zero_norm_vectors_are_rejected_under_cosine_similarity():
    good = np.eye(2)
    bad = np.array([[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"z2 .*zero-norm.*row 1"):
        nt_xent_loss(good, bad)
    with pytest.raises(ValueError, match=r"image_embeddings .*zero-norm"):
        clip_loss(bad, good)
    with pytest.raises(ValueError, match=r"text_embeddings .*zero-norm"):
        clip_loss(good, bad)


def test_moco_rejects_a_queue_of_another_dimension():
    q = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"queue .*dimension D = 3"):
        moco_loss(q, q, np.ones((5, 4)))
    with pytest.raises(ValueError, match=r"queue.T"):
        moco_loss(q, q, np.ones((3, 5)))  # MoCo's (D, K) layout
    with pytest.raises(ValueError, match="queue"):
        moco_loss(q, q, np.ones(3))
    with pytest.raises(ValueError, match="queue"):
        moco_loss(q, q, [[np.inf, 0.0, 0.0]])
    with pytest.raises(ValueError, match="same shape"):
        moco_loss(q, np.ones((2, 4)), np.ones((1, 3)))


# ---------------------------------------------------------------- info_nce_loss's fast path


def test_fast_validation_falls_back_for_huge_entries(rng):
    # The sum of squares of Z1 overflows (entries 1e160), yet every logit is moderate.
    Z1 = rng.normal(size=(4, 3)) * 1e160
    Z2 = rng.normal(size=(4, 3)) * 1e-160
    assert info_nce_loss(Z1, Z2, 1.0) == pytest.approx(
        info_nce_reference(Z1.tolist(), Z2.tolist(), 1.0), rel=1e-12
    )


def test_non_contiguous_and_nan_float64_input(rng):
    Z = rng.normal(size=(4, 6))
    assert info_nce_loss(Z[:, ::2], Z[:, 1::2], 0.5) == pytest.approx(
        info_nce_reference(Z[:, ::2].tolist(), Z[:, 1::2].tolist(), 0.5), rel=1e-12
    )
    F1 = np.asfortranarray(Z[:, :3])  # Fortran order takes the fast path too
    assert info_nce_loss(F1, Z[:, 3:], 0.5) == pytest.approx(
        info_nce_reference(Z[:, :3].tolist(), Z[:, 3:].tolist(), 0.5), rel=1e-12
    )
    Zn = np.asfortranarray(Z)
    Zn[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"Z2 must be finite.*1 NaN"):
        info_nce_loss(Z, Zn, 0.5)


def test_exp_floor_does_not_change_the_loss():
    # Row 0 has one negative 1e4 below the positive (its exponential underflows to 0)
    # and one 700.5 below (subnormal range): both must contribute nothing, as in the
    # plain reference.
    Z1 = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    Z2 = np.array([[0.0, -1e4, 0.0], [0.0, 0.0, -700.5], [0.0, 0.0, 1.0]]).T
    got = info_nce_loss(Z1, Z2, 1.0)
    assert got == pytest.approx(info_nce_reference(Z1.tolist(), Z2.tolist(), 1.0), rel=1e-14)


def _kept_fraction(Z1, Z2, tau):
    # The share of logits within 40 + log N nats of their anchor's maximum.
    L = Z1 @ Z2.T / tau
    return np.mean(L > L.max(axis=1, keepdims=True) - (40 + math.log(len(L))))


@pytest.mark.parametrize(
    ("n", "d", "tau", "sparse"),
    [
        (150, 8, 0.05, True),  # most exponentials negligible: only the others are computed
        (150, 8, 2.0, False),  # most of them matter: every one is computed
        (130, 200, 0.02, True),  # D > N: 1/tau scales the logits, not Z1
        (140, 6, 1.5, False),  # 1/tau < 1 scales the logits (scaling Z1 could underflow)
    ],
)
def test_large_batches_agree_with_the_exact_reference(n, d, tau, sparse):
    rng = np.random.default_rng(n + d)
    Z1 = rng.normal(size=(n, d))
    Z2 = Z1 + rng.normal(size=(n, d))
    assert (_kept_fraction(Z1, Z2, tau) <= 0.5) == sparse  # the path this case exercises
    want = info_nce_reference(Z1.tolist(), Z2.tolist(), tau)
    assert info_nce_loss(Z1, Z2, tau) == pytest.approx(want, rel=1e-14)
    assert info_nce_loss(Z1, Z2, tau, chunk_size=64) == pytest.approx(want, rel=1e-13)


def test_skipped_exponentials_cannot_change_a_small_loss():
    # Each anchor's positive is 20 nats above three negatives and 100 above the rest, which
    # are skipped (more than 40 + log N below the maximum). The loss, about 3 e^-20, is
    # computed as log(sum) with sum near 1, so it is accurate to about 1e-16 in absolute
    # terms; skipping changes it by less than N e^-100.
    n = 200
    L = np.full((n, n), -100.0)
    np.fill_diagonal(L, 0.0)
    for shift in (1, 2, 3):
        L[np.arange(n), (np.arange(n) + shift) % n] = -20.0
    Z1, Z2 = np.eye(n), L.T  # logits Z1 @ Z2.T = L
    assert _kept_fraction(Z1, Z2, 1.0) < 0.5  # the gathering path
    got = info_nce_loss(Z1, Z2, 1.0)
    want = math.log1p(3 * math.exp(-20.0) + (n - 4) * math.exp(-100.0))
    assert abs(got - want) < 4.5e-16  # two units in the last place of the sum


def test_the_cheap_checks_give_the_same_values_and_errors_as_the_full_ones(rng):
    # Plain float64 arrays and a float temperature take the cheap checks; byte-swapped
    # float64 (or lists) and a NumPy temperature take the full ones: the same value, bit
    # for bit, and the same errors.
    Z1, Z2 = rng.normal(size=(2, 40, 7))
    fast = info_nce_loss(Z1, Z2, 0.3)
    assert fast == info_nce_loss(Z1.astype(">f8"), Z2.astype(">f8"), np.float64(0.3))
    assert fast == info_nce_loss(Z1.tolist(), Z2.tolist(), np.float64(0.3))
    assert fast == info_nce_loss(Z1[:, ::1], np.asfortranarray(Z2), 0.3)
    bad_nan = Z2.copy()
    bad_nan[3, 2] = np.nan
    cases = [
        (Z1, bad_nan, 0.3),
        (Z1, Z2, 0.0),
        (Z1, Z2, -1.0),
        (Z1, Z2, math.inf),
        (Z1, Z2, math.nan),
        (Z1, Z2, 1e-320),
        (Z1, Z2[:, :3], 0.3),
        (Z1[:0], Z2[:0], 0.3),
        (Z1.ravel(), Z2.ravel(), 0.3),
        (Z1 * 1e200, Z2 * 1e200, 0.3),
    ]
    for a, b, t in cases:
        with pytest.raises((TypeError, ValueError)) as cheap:
            info_nce_loss(a, b, t)
        with pytest.raises((TypeError, ValueError)) as full:
            info_nce_loss(a.astype(">f8"), b.astype(">f8"), np.float64(t))
        assert (cheap.type, str(cheap.value)) == (full.type, str(full.value))


# ---------------------------------------------------------------- properties (chapter 2)

unit_floats = st.floats(-5, 5, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def nonzero_pairs(draw, max_n=5, max_d=4):
    """Two (n, d) arrays whose rows are far from zero (cosine similarity is defined)."""
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    Z1 = draw(arrays(np.float64, (n, d), elements=unit_floats))
    Z2 = draw(arrays(np.float64, (n, d), elements=unit_floats))
    Z1[:, 0] += np.where(Z1[:, 0] >= 0, 1.0, -1.0)  # |first entry| >= 1
    Z2[:, 0] += np.where(Z2[:, 0] >= 0, 1.0, -1.0)
    return Z1, Z2


@given(nonzero_pairs(), st.floats(0.05, 5.0))
def test_nt_xent_reference_and_swap_property(zz, tau):
    z1, z2 = zz
    got = nt_xent_loss(z1, z2, tau)
    assert got == pytest.approx(
        nt_xent_reference(z1.tolist(), z2.tolist(), tau), rel=1e-9, abs=1e-12
    )
    assert nt_xent_loss(z2, z1, tau) == pytest.approx(got, rel=1e-12, abs=1e-14)
    assert got >= 0.0


@given(nonzero_pairs(), st.floats(0.1, 100.0))
def test_clip_reference_and_swap_property(zz, scale):
    images, texts = zz
    got = clip_loss(images, texts, scale)
    assert got == pytest.approx(
        clip_reference(images.tolist(), texts.tolist(), scale), rel=1e-9, abs=1e-12
    )
    assert clip_loss(texts, images, scale) == pytest.approx(got, rel=1e-12, abs=1e-14)
    assert clip_loss(2.5 * images, texts, scale) == pytest.approx(got, rel=1e-12, abs=1e-14)


@given(pairs(max_n=5, max_d=3), st.integers(0, 6), st.floats(0.05, 5.0), st.integers(0, 2**32 - 1))
def test_moco_reference_and_queue_order_property(qk, n_queue, tau, seed):
    q, k = qk
    queue = np.random.default_rng(seed).normal(size=(n_queue, q.shape[1]))
    got = moco_loss(q, k, queue, tau)
    assert got == pytest.approx(
        moco_reference(q.tolist(), k.tolist(), queue.tolist(), tau), rel=1e-9, abs=1e-12
    )
    assert moco_loss(q, k, queue[::-1], tau) == pytest.approx(got, rel=1e-12, abs=1e-12)
    assert got >= 0.0


def _decimal_gradient_Z1(Z1, Z2, tau, prec=120):
    """dL/dZ1 of the mean InfoNCE loss in Decimal arithmetic (prec digits)."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = prec
        A = [[Decimal(float(x)) for x in r] for r in Z1]
        B = [[Decimal(float(x)) for x in r] for r in Z2]
        t = Decimal(float(tau))
        n, d = len(A), len(A[0])
        G = np.zeros((n, d))
        for i in range(n):
            logits = [sum(a * b for a, b in zip(A[i], B[j], strict=True)) / t for j in range(n)]
            top = max(logits)
            e = [(x - top).exp() for x in logits]
            s = sum(e)
            p = [x / s for x in e]
            for k in range(d):
                push = sum(p[j] * B[j][k] for j in range(n))
                G[i, k] = float(-(B[i][k] - push) / (n * t))
        return G


@pytest.mark.parametrize("chunk", [None, 2])
def test_gradient_keeps_full_precision_when_the_loss_saturates(chunk):
    # Each positive beats its negatives by ~50 nats: p_ii = 1 - 1e-22 rounds to 1.0 in
    # float64. The gradient is then ~1e-22 and must not be lost to 1 - p_ii = 0 (forming
    # P @ Z2 - Z2 would return exactly zero; autograd's P - I drops a term and is off by
    # tens of percent here).
    Z1 = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.2]])
    Z2 = np.array([[1.0, 0.1], [0.05, 1.0], [-1.0, 0.25]])
    tau = 0.02
    loss, dZ1, _ = info_nce_loss_and_grad(Z1, Z2, tau, chunk_size=chunk)
    exact = _decimal_gradient_Z1(Z1, Z2, tau)
    assert loss < 1e-15
    assert 0 < np.abs(exact[0]).max() < 1e-18  # row 0 saturated: p_00 rounds to 1
    np.testing.assert_allclose(dZ1, exact, rtol=1e-10, atol=0)


# ---------------------------------------------------------------- edges an outside suite found
#
# Each test below failed before the change it pins (see the commit that added it).


def _opposed_logits(n: int, big: float) -> np.ndarray:
    """n x n logits: positives -big, every negative +big. Each term is finite (-2 big, for
    big < 9e307) but n of them add up past float64 while their mean does not."""
    return np.where(np.eye(n, dtype=bool), -big, big)


@pytest.mark.parametrize("n", [2, 3, 32])
def test_finite_terms_whose_sum_overflows_still_give_their_mean(n):
    big = 8e307  # each loss term is about 1.6e308; the mean is too, the sum is not
    L = _opposed_logits(n, big)
    want = 2 * big - math.log(n - 1)  # log(n - 1) is below half an ulp of 1.6e308
    assert contrastive_loss_from_logits(L) == pytest.approx(want, rel=1e-15)
    assert contrastive_loss_from_logits(L, anchors="columns") == pytest.approx(want, rel=1e-15)
    assert contrastive_loss_from_logits(L, anchors="both") == pytest.approx(want, rel=1e-15)
    # InfoNCE with Z1 the identity has logits Z2.T / temperature
    got = [info_nce_loss(np.eye(n), L.T, 1.0), info_nce_loss(np.eye(n), L.T, 1.0, chunk_size=2)]
    if n == 2:  # for n > 2 the gradient itself overflows (and says so, tested below)
        got += [il.info_nce_loss_and_grad(np.eye(n), L.T, 1.0, chunk_size=c)[0] for c in (None, 1)]
    assert got == pytest.approx([want] * len(got), rel=1e-15)


def test_a_mean_near_1e306_of_mixed_terms():
    # The case of the outside suite: largest logits near 1.8e307, true mean about 9.5e305.
    n = 189
    L = np.zeros((n, n))
    for i in range(10):  # ten rows with one negative at 1.8e307: ten terms of about 1.8e307
        L[i, i + 1] = 1.8e307
    terms = [1.8e307] * 10 + [math.log(n)] * (n - 10)  # each row's log-sum-exp minus 0
    want = math.fsum(t / n for t in terms)  # the sum itself, 1.8e308, is beyond float64
    assert want == pytest.approx(9.5e305, rel=1e-2)
    assert contrastive_loss_from_logits(L) == pytest.approx(want, rel=1e-14)
    assert info_nce_loss(np.eye(n), L.T, 1.0) == pytest.approx(want, rel=1e-14)


def test_overflow_messages_say_what_overflowed():
    with pytest.raises(ValueError, match=r"the logits Z1 @ Z2.T / temperature overflowed"):
        info_nce_loss(np.full((2, 2), 1e200), np.full((2, 2), 1e200), 1.0)
    # a positive 2.4e308 below its row's maximum: its log-probability is not representable
    L = np.array([[-1.2e308, 1.2e308], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"a positive's log-probability .* overflowed"):
        contrastive_loss_from_logits(L)
    with pytest.raises(ValueError, match=r"log-probability .* overflowed.* span more than"):
        info_nce_loss(np.eye(2), L.T, 1.0)
    with pytest.raises(ValueError, match=r"the gradient with respect to Z1 overflowed"):
        # logits of order 1e10, but the pull (Z2_1 - Z2_0) / (2 tau) is 5e309
        il.info_nce_loss_and_grad(np.eye(2) * 1e-300, np.eye(2)[::-1] * 1e300, 1e-10)


def test_nt_xent_clip_moco_binary_average_huge_terms():
    # NT-Xent at temperature 1.2e-308: opposite views, so every positive sits 8.3e307 below
    # the others (cosine -1 against 0); four terms add up past float64, their mean does not.
    z1 = np.eye(2)
    tau = 1.2e-308
    want = 1.0 / tau - math.log(2)  # log(2) is far below an ulp
    assert il.nt_xent_loss(z1, -z1, tau) == pytest.approx(want, rel=1e-15)
    assert il.nt_xent_loss(z1, -z1, tau, chunk_size=1) == pytest.approx(want, rel=1e-15)
    scale = 1.7e308  # CLIP: each direction's mean is 1.7e308; never add the two
    assert il.clip_loss(z1, -z1, scale) == pytest.approx(scale, rel=1e-15)
    assert il.clip_loss(z1, -z1, scale, chunk_size=1) == pytest.approx(scale, rel=1e-15)
    q = np.eye(2)
    k, queue = -8e307 * np.eye(2), 8e307 * np.eye(2)
    assert il.moco_loss(q, k, queue, 1.0) == pytest.approx(1.6e308, rel=1e-15)
    assert il.moco_loss(q, k, queue, 1.0, chunk_size=1) == pytest.approx(1.6e308, rel=1e-15)
    F = _opposed_logits(3, 5e307)  # binary NCE: each row pays about 1.5e308
    assert il.binary_nce_loss(F, noise_ratio=1.0) == pytest.approx(1.5e308, rel=1e-15)
    with pytest.raises(ValueError, match="binary NCE loss is beyond float64"):
        il.binary_nce_loss(_opposed_logits(3, 1.5e308), noise_ratio=1.0)


def _matrix(values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.matrix(values)


@pytest.mark.parametrize("chunk", [None, 2])
def test_numpy_matrix_input_is_a_2d_array(rng, chunk):
    Z1, Z2 = rng.normal(size=(2, 5, 3))
    want = il.info_nce_loss_and_grad(Z1, Z2, 0.5, chunk_size=chunk)
    got = il.info_nce_loss_and_grad(_matrix(Z1), _matrix(Z2), 0.5, chunk_size=chunk)
    assert got[0] == want[0]
    for g, w in zip(got[1:], want[1:], strict=True):
        assert type(g) is np.ndarray
        np.testing.assert_array_equal(g, w)
    assert info_nce_loss(_matrix(Z1), _matrix(Z2), 0.5) == info_nce_loss(Z1, Z2, 0.5)
    assert il.clip_loss(_matrix(Z1), Z2) == il.clip_loss(Z1, Z2)


def test_masked_arrays_are_refused_not_silently_unmasked(rng):
    Z = rng.normal(size=(3, 2))
    m = np.ma.masked_array(Z, mask=np.eye(3, 2, dtype=bool))
    for call in (
        lambda: info_nce_loss(m, Z),
        lambda: il.info_nce_loss_and_grad(Z, m),
        lambda: il.info_nce_loss_and_grad(m, Z, chunk_size=1),
        lambda: il.nt_xent_loss(m, Z),
        lambda: il.moco_loss(Z, Z, m),
    ):
        with pytest.raises(TypeError, match=r"MaskedArray.*\.filled\(.*\.compressed\(\)"):
            call()


class _Tensor:
    """Looks like a torch.Tensor that requires grad (its class's module is torch)."""

    __module__ = "torch"
    requires_grad = True

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("Can't call numpy() on Tensor that requires grad.")


def test_a_pytorch_tensor_gets_a_type_error_saying_what_to_pass():
    for call in (
        lambda: info_nce_loss(_Tensor(), np.eye(2)),
        lambda: il.info_nce_loss_and_grad(np.eye(2), _Tensor()),
        lambda: il.clip_loss(_Tensor(), np.eye(2)),
        lambda: contrastive_log_probs(_Tensor()),
    ):
        with pytest.raises(TypeError, match=r"PyTorch tensor.*\.detach\(\)\.cpu\(\)\.numpy\(\)"):
            call()


@pytest.mark.parametrize("flag", ["False", "no", "0", "", 0, 1, None])
def test_boolean_options_accept_booleans_only(flag):
    L = np.zeros((3, 3))
    with pytest.raises(TypeError, match="include_positive must be True or False"):
        contrastive_log_probs(L, include_positive=flag)
    with pytest.raises(TypeError, match="include_positive must be True or False"):
        il.contrastive_log_probs_streaming(np.eye(3), np.eye(3), include_positive=flag)
    with pytest.raises(TypeError, match="negatives_only must be True or False"):
        il.softmax_weights(np.zeros((1, 2, 2)), 0.5, negatives_only=flag)
    for ok in (np.False_, False):
        assert contrastive_log_probs(L, include_positive=ok)[0] == pytest.approx(-math.log(2))


def test_anchors_message_lists_every_valid_value():
    with pytest.raises(ValueError, match=r"'rows', 'columns' or 'both'; got 'x'"):
        contrastive_loss_from_logits(np.zeros((2, 2)), anchors="x")


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_info_nce_clip_moco_chunked_equal_dense(rng, chunk):
    Z1, Z2 = rng.normal(size=(2, 7, 4))
    queue = rng.normal(size=(9, 4))
    for tau in (0.05, 1.0):
        dense, chunked = info_nce_loss(Z1, Z2, tau), info_nce_loss(Z1, Z2, tau, chunk_size=chunk)
        assert chunked == pytest.approx(dense, rel=1e-12)
        dense, chunked = (
            il.moco_loss(Z1, Z2, queue, tau),
            il.moco_loss(Z1, Z2, queue, tau, chunk_size=chunk),
        )
        assert chunked == pytest.approx(dense, rel=1e-12)
        dense = il.clip_loss(Z1, Z2, 1 / tau)
        assert il.clip_loss(Z1, Z2, 1 / tau, chunk_size=chunk) == pytest.approx(dense, rel=1e-12)
    assert il.moco_loss(Z1, Z2, queue[:0], 0.1, chunk_size=chunk) == 0.0


def test_a_dense_batch_too_big_for_memory_is_refused_before_allocating(monkeypatch):
    import tracemalloc

    monkeypatch.setattr("infonce_lib.core._physical_memory", lambda: 2 * 10**9)  # 2 GB
    n = 20_000  # dense logits: 3.2 GB
    Z = np.ones((n, 1))
    calls = {
        "info_nce_loss": lambda: info_nce_loss(Z, Z),
        "info_nce_loss_and_grad": lambda: il.info_nce_loss_and_grad(Z, Z),
        "nt_xent_loss": lambda: il.nt_xent_loss(Z, Z),
        "clip_loss": lambda: il.clip_loss(Z, Z),
        "moco_loss": lambda: il.moco_loss(Z, Z, np.ones((n, 1))),
    }
    for name, call in calls.items():
        tracemalloc.start()
        with pytest.raises(MemoryError, match=rf"{name} would need a dense .*chunk_size"):
            call()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 50e6, f"{name} allocated {peak / 1e6:.0f} MB before refusing"
    assert math.isfinite(info_nce_loss(Z[:2000], Z[:2000], chunk_size=512))  # what it suggests
