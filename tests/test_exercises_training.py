"""Tests for infonce_lib.exercises.training (chapter 8's exercise): right answers pass, and each
usual mistake fails with the hint that names it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import infonce_lib as il
from infonce_lib.exercises.training import check_log_scale_gradient, log_scale_gradient_mistakes


def _flat(out: str) -> str:
    return " ".join(out.split())


def by_hand(Za, Zb, t):
    """The two directions written out: e^t times (softmax-weighted cosine - positive cosine)."""
    s = math.exp(t)
    C = Za @ Zb.T
    total = 0.0
    for M in (C, C.T):
        L = s * M
        P = np.exp(L - L.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        total += s * np.mean(np.sum(P * M, axis=1) - np.diag(M))
    return total / 2


def in_float32(Za, Zb, t):
    """The same in float32 throughout, through the identity dL/dt = sum_ij G_ij l_ij."""
    A, B = Za.astype(np.float32), Zb.astype(np.float32)
    L = np.float32(math.exp(t)) * (A @ B.T)
    n = len(A)
    G = np.zeros_like(L)
    for axis in (1, 0):
        P = np.exp(L - L.max(axis=axis, keepdims=True))
        G += P / P.sum(axis=axis, keepdims=True)
    G -= 2 * np.eye(n, dtype=np.float32)
    return float(np.sum(G * L) / (2 * n))


def via_the_library(Za, Zb, t):
    return il.symmetric_infonce_grad(Za, Zb, t).grad_log_scale


@pytest.mark.parametrize("fn", [by_hand, in_float32, via_the_library])
def test_right_answers_pass(fn, capsys):
    assert check_log_scale_gradient(fn) is True
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.count("PASS") == 4 and "All cases pass." in out


# mistake -> words that some FAIL line must contain
EXPECTED = {
    "tau": "the gradient in tau",
    "scale": "the gradient in the scale s = e^t",
    "sign": "minus the answer",
    "one direction": "one direction only",
    "both summed": "the two directions summed",
    "sum over anchors": "sums over the N anchors",
    "positive only": "only the positive's term",
    "softmax only": "only the softmax terms",
    "no max subtracted": "exp overflowed",
    "t as log tau": "reads t as log tau",
    "t as tau": "reads t as the temperature itself",
    "clip inside": "the gradient at the clipped scale",
    "zero beyond clip": "this is 0 beyond the clip",
    "leave-one-out": "leaves the positive out",
    "nt-xent": "the gradient of NT-Xent",
    "divided by N squared": "this divides by N^2",
    "divided by N - 1": "this divides by N - 1",
    "unscaled softmax": "the softmax of the cosines a_i . b_j themselves",
    "the loss": "the loss itself, not its gradient",
    "scale 10**t": "uses the scale 10^t",
}


def test_every_mistake_is_listed():
    assert set(log_scale_gradient_mistakes()) == set(EXPECTED)


def test_the_answer_is_far_from_zero_in_every_case():
    """A function returning 0, or one that is only right where the gradient vanishes, fails:
    every case has outscored positives, so dL/dt is not small."""
    from infonce_lib.exercises.training import _cases

    for _, (A, B, t) in _cases():
        g = il.symmetric_infonce_grad(A, B, t).grad_log_scale
        assert abs(g) > 0.05 * math.exp(t)
    assert check_log_scale_gradient(lambda a, b, t: 0.0, verbose=False) is False


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_mistake_fails_with_its_hint(name, capsys):
    assert check_log_scale_gradient(log_scale_gradient_mistakes()[name]) is False
    out = _flat(capsys.readouterr().out)
    assert EXPECTED[name] in out, out
    # No other mistake's hint is given for it.
    others = [words for other, words in EXPECTED.items() if other != name]
    assert not any(words in out for words in others), out


def test_not_attempted_quiet_and_odd_returns(capsys):
    def stub(Za, Zb, t):
        raise NotImplementedError

    assert check_log_scale_gradient(stub) is False
    assert "not attempted yet" in capsys.readouterr().out
    assert check_log_scale_gradient(lambda a, b, t: 0.5, verbose=False) is False
    assert capsys.readouterr().out == ""
    assert check_log_scale_gradient(lambda a, b, t: [1.0, 2.0]) is False
    assert "not one number" in capsys.readouterr().out
    assert check_log_scale_gradient(lambda a, b, t: math.nan) is False
    assert "not finite" in capsys.readouterr().out
    assert check_log_scale_gradient(lambda a, b, t: 1 / 0) is False
    assert "raised ZeroDivisionError" in capsys.readouterr().out
    assert check_log_scale_gradient(lambda a, b, t: 123.0) is False
    assert "no usual mistake" in capsys.readouterr().out
    with pytest.raises(TypeError, match="fn must be a callable"):
        check_log_scale_gradient(None)
    with pytest.raises(TypeError, match="verbose"):
        check_log_scale_gradient(by_hand, verbose="no")
