"""Tests for infonce_lib.training.objective: the symmetric InfoNCE and NT-Xent against the
library's own losses, and every gradient (the log scale's included) against central finite
differences and against chapter 6's derivative in beta."""

from __future__ import annotations

import math

import numpy as np
import pytest

import infonce_lib as il


def _unit_pair(n=6, d=4, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d))
    B = A + 0.8 * rng.normal(size=(n, d))
    return (
        A / np.linalg.norm(A, axis=1, keepdims=True),
        B / np.linalg.norm(B, axis=1, keepdims=True),
    )


FUNCS = {"symmetric": il.symmetric_infonce_grad, "nt_xent": il.nt_xent_grad}


@pytest.mark.parametrize("t", [-1.0, 0.0, math.log(1 / 0.07), math.log(100.0)])
def test_values_are_the_librarys_losses(t):
    A, B = _unit_pair()
    s = math.exp(t)
    assert abs(il.symmetric_infonce_grad(A, B, t).loss - il.clip_loss(A, B, logit_scale=s)) < 1e-12
    assert abs(il.nt_xent_grad(A, B, t).loss - il.nt_xent_loss(A, B, temperature=1 / s)) < 1e-11


def test_symmetric_gradients_are_the_mean_of_chapter_2s_two_directions():
    A, B = _unit_pair(n=9, d=5, seed=1)
    t = 2.0
    out = il.symmetric_infonce_grad(A, B, t)
    _, dA1, dB1 = il.info_nce_loss_and_grad(A, B, math.exp(-t))
    _, dB2, dA2 = il.info_nce_loss_and_grad(B, A, math.exp(-t))
    np.testing.assert_allclose(out.grad_a, (dA1 + dA2) / 2, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(out.grad_b, (dB1 + dB2) / 2, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("t", [0.3, 2.5])
def test_gradients_match_central_differences(name, t):
    f = FUNCS[name]
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(2, 5, 3))  # any rows: the functions do not normalise
    out = f(A, B, t)
    h = 1e-6
    for which, Z, grad in (("a", A, out.grad_a), ("b", B, out.grad_b)):
        for idx in np.ndindex(Z.shape):
            E = np.zeros_like(Z)
            E[idx] = h
            args_up = (A + E, B) if which == "a" else (A, B + E)
            args_down = (A - E, B) if which == "a" else (A, B - E)
            fd = (f(*args_up, t).loss - f(*args_down, t).loss) / (2 * h)
            assert abs(fd - grad[idx]) < 1e-7 * (1 + abs(fd)), (which, idx)
    fd_t = (f(A, B, t + h).loss - f(A, B, t - h).loss) / (2 * h)
    assert abs(fd_t - out.grad_log_scale) < 1e-7 * (1 + abs(fd_t))


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_the_log_scale_gradient_is_the_embeddings_dot_their_gradients(name):
    A, B = _unit_pair(n=7, d=3, seed=3)
    out = FUNCS[name](A, B, 1.7)
    dot = float(np.sum(A * out.grad_a) + np.sum(B * out.grad_b))
    factor = 0.5 if name == "nt_xent" else 1.0  # quadratic in the views, or linear in a alone
    assert (
        abs(out.grad_log_scale - factor * (dot if name == "nt_xent" else np.sum(A * out.grad_a)))
        < 1e-12
    )
    if name == "symmetric":
        assert abs(np.sum(A * out.grad_a) - np.sum(B * out.grad_b)) < 1e-12


def test_the_log_scale_gradient_is_minus_beta_times_chapter_6s_slope():
    # dL/dt = -beta dI/dbeta at beta = e^t, averaged over the two directions.
    A, B = _unit_pair(n=8, d=4, seed=4)
    t = 1.3
    beta = math.exp(t)
    slope_ab = il.infonce_beta_derivatives((A @ B.T)[None], beta).first[0]  # anchors a_i
    slope_ba = il.infonce_beta_derivatives((B @ A.T)[None], beta).first[0]  # anchors b_j
    got = il.symmetric_infonce_grad(A, B, t).grad_log_scale
    assert abs(got + beta * (slope_ab + slope_ba) / 2) < 1e-12


def test_separated_positives_push_the_scale_up_forever():
    # Every positive beats every negative: the loss falls as the scale grows, at any scale.
    A = np.eye(4)
    for t in (0.0, 2.0, math.log(100.0), 5.0):
        assert il.symmetric_infonce_grad(A, A, t).grad_log_scale < 0
    # Beyond float64 (e^-22026 is 0), the slope is 0, never positive.
    assert il.symmetric_infonce_grad(A, A, 10.0).grad_log_scale == 0


def test_large_scales_stay_finite_and_overflow_is_refused():
    A, B = _unit_pair()
    out = il.symmetric_infonce_grad(A, B, 300.0)  # a scale of 2e130
    assert math.isfinite(out.loss) and np.isfinite(out.grad_a).all()
    with pytest.raises(ValueError, match="log_scale"):
        il.symmetric_infonce_grad(A, B, 800.0)
    with pytest.raises(ValueError, match="log_scale"):
        il.nt_xent_grad(A, B, -800.0)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_bad_input_is_refused_by_name(name):
    f = FUNCS[name]
    with pytest.raises(ValueError, match="Za and Zb must have the same shape"):
        f(np.ones((3, 2)), np.ones((4, 2)), 0.0)
    with pytest.raises(TypeError, match="log_scale"):
        f(np.ones((3, 2)), np.ones((3, 2)), "1")
    with pytest.raises(ValueError, match="Za must be finite"):
        f(np.full((3, 2), np.nan), np.ones((3, 2)), 0.0)
