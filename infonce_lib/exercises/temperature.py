r"""Checkers for the exercises of chapter 6 (temperature), with the mistakes they recognise.

Three exercises, one checker each:

* :func:`check_attainable_cap`: the largest InfoNCE of unit-norm embeddings at temperature
  :math:`\tau`, :math:`\log K - \log(1 + (K-1) e^{-K/((K-1)\tau)})`
  (:func:`~infonce_lib.attainable_cosine_cap`).
* :func:`check_infonce_curvature`: the second derivative of a batch's :math:`I_{\mathrm{NCE}}`
  in :math:`\beta = 1/\tau`, minus the mean over rows of a softmax-weighted variance
  (:func:`~infonce_lib.infonce_beta_derivatives`).
* :func:`check_zero_temperature_limit`: the limit of :math:`\tau \mathcal{L}` as
  :math:`\tau \to 0`, the zero-margin triplet loss on the hardest negative.

Each checker runs the reader's function on a few cases, prints one line per case (PASS, or
FAIL with what was expected and, when the wrong answer matches a known mistake, what the
mistake is), and returns True when all pass. Every case is built so that each recognised
mistake gives a value of its own there; answers are compared to 1e-6 relative with no
absolute slack (looser only where a careful float32 computation cannot reach 1e-6: see
:func:`check_infonce_curvature`), so a float32 computation passes while 0 or the wrong sign
of a tiny value does not, and an answer right to a few digits only is told so. A function
that raises ``NotImplementedError`` (the starter cell) gets "Not attempted yet" and
``False``, without an exception. :func:`temperature_mistakes` returns the recognised
mistakes as functions, so the checkers can be tested against them."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..caps import attainable_cosine_cap, cosine_cap
from ..temperature import infonce_beta_derivatives, positive_margins
from ._runner import Case, run_cases

__all__ = [
    "check_attainable_cap",
    "check_infonce_curvature",
    "check_zero_temperature_limit",
    "temperature_mistakes",
]

# ---------------------------------------------------------------- the attainable cap

#: Relative tolerance of the three checkers (a float32 computation passes); absolute
#: tolerance 0, so that a tiny expected value is not matched by 0 or by the wrong sign.
_RTOL = 1e-6
#: Answers this close (relative) that match no known mistake are "right but imprecise".
_IMPRECISE_RTOL = 1e-2

#: The cases of the cap checker: each pairs a temperature at which every usual mistake gives
#: a distinct value with one at which exp(+a) overflows (there every exp(-a) form, right or
#: wrong, is log K to the last bit: that temperature tests finiteness only).
_CAP_CASES = ((8, (1.0, 1e-3)), (256, (1.0, 0.25)), (3, (0.5, 4.0)), (16, (0.5, 2e-3)))


def _cap_with(K: int, tau: float, gap: float, negatives: float, scale: float = 1.0) -> float:
    return scale * (math.log(K) - math.log1p(negatives * math.exp(-gap / tau)))


def _cap_mistakes(K: int, tau: float) -> dict[str, float]:
    g = K / (K - 1)
    return {
        "score-range gap 2": cosine_cap(K, tau),
        "gap 1": _cap_with(K, tau, 1.0, K - 1),
        "gap upside down": _cap_with(K, tau, (K - 1) / K, K - 1),
        "tau multiplied": _cap_with(K, 1 / tau, g, K - 1),
        "K negatives": _cap_with(K, tau, g, K),
        "log K missing": -math.log1p((K - 1) * math.exp(-g / tau)),
        "bits": _cap_with(K, tau, g, K - 1, scale=1 / math.log(2)),
        "upper bound": min(math.log(K), g / tau),
        "positive's term missing": math.log(K) - math.log(K - 1) + g / tau,
        "simple bound 1/tau": min(math.log(K), 1 / tau),
        "log10": _cap_with(K, tau, g, K - 1, scale=1 / math.log(10)),
        "log(K - 1)": math.log(K - 1) - math.log1p((K - 1) * math.exp(-g / tau)),
        "K - 1 for K": _cap_with(K - 1, tau, (K - 1) / (K - 2), K - 2),
        "gap doubled": _cap_with(K, tau, 2 * g, K - 1),
    }


_CAP_HINTS = {
    "score-range gap 2": (
        "this is the score-range cap (gap 2, every negative at cosine -1); unit vectors "
        "cannot place every negative opposite its view once K >= 3: the mean gap of one "
        "batch is at most K/(K-1)"
    ),
    "gap 1": (
        "this is the population cap, log K - log(1 + (K-1) exp(-1/tau)): the right bound on "
        "the expected value over i.i.d. batches of an encoder, whose mean gap is a covariance "
        "(at most 1); the exercise asks for the cap of one batch, mean gap K/(K-1). Or the "
        "gap was computed as K // (K - 1), integer division, which is 1 for K >= 3: use "
        "K / (K - 1)"
    ),
    "gap upside down": "the gap is upside down: it is K/(K-1), not (K-1)/K",
    "tau multiplied": (
        "tau multiplies the gap here; the critic is s/tau, so the exponent is -gap/tau"
    ),
    "K negatives": (
        "this counts K negatives; each row has K - 1 (the positive is the K-th candidate)"
    ),
    "log K missing": "log K is missing: a row contributes log K + log p_i",
    "bits": "this is in bits; the book works in nats (natural logarithms)",
    "upper bound": (
        "this is the simple upper bound min(log K, K/((K-1) tau)) on the cap, not the cap"
    ),
    "positive's term missing": (
        "the 1 is missing: the positive's own term, e^0 = 1 after dividing by it, stays in "
        "the softmax's denominator, log(1 + (K-1) exp(-a))"
    ),
    "simple bound 1/tau": (
        "this is min(log K, 1/tau), the bound the cap never exceeds (its large-K limit), "
        "not the cap"
    ),
    "log10": (
        "this is in decimal digits (log10); the book works in nats (natural logarithms, math.log)"
    ),
    "log(K - 1)": (
        "the first term is log(K - 1); the bound is log K minus the log of the denominator "
        "(K candidates: the positive and K - 1 negatives)"
    ),
    "K - 1 for K": (
        "this is the cap for K - 1 pairs: K counts every candidate, the positive included, so "
        "a batch of K pairs has K - 1 negatives and the gap K/(K-1)"
    ),
    "gap doubled": (
        "the gap here is 2K/(K-1), twice the largest mean gap of unit vectors: the gap of "
        "cosines is at most K/(K-1) (the score range 2 is the score-range cap's gap)"
    ),
}


def _each_tau(fn: Callable) -> Callable:
    """``fn(K, tau)`` called at each temperature of a case, the answers as one list."""

    def calls(K, taus):
        return [fn(K, t) for t in taus]

    calls.__name__ = getattr(fn, "__name__", "attainable_cap")
    return calls


def check_attainable_cap(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``attainable_cap(K, tau)`` against the attainable cosine cap.

    The expected value is

    .. math::

        \log K - \log\Big(1 + (K-1) \exp\Big(-\frac{K}{(K-1)\tau}\Big)\Big)

    (:func:`~infonce_lib.attainable_cosine_cap`). Each of the four cases calls ``fn`` at one
    :math:`K` and two temperatures and compares both answers: one temperature at which every
    recognised mistake gives its own value, and one of :math:`(K, \tau) = (8, 10^{-3})`,
    :math:`(256, 0.25)`, :math:`(3, 4)` or :math:`(16, 2 \times 10^{-3})`; at :math:`\tau =
    10^{-3}` the exponent is about :math:`-1000`, so a formula that forms :math:`e^{+1000}`
    overflows, while every form with :math:`e^{-a}` gives :math:`\log K` to the last bit.
    Recognised mistakes: the score-range gap 2, the population cap's gap 1 (a right answer
    to another question, and said so), a gap of :math:`(K-1)/K`, :math:`\tau` multiplied,
    :math:`K` negatives, :math:`\log K` left out, bits instead of nats, the upper bound
    :math:`\min(\log K, K/((K-1)\tau))` in place of the cap, or its large-:math:`K` form
    :math:`\min(\log K, 1/\tau)`, the positive's term 1 left out of the denominator, decimal
    logarithms (``log10``), :math:`\log(K-1)` in place of :math:`\log K`, the cap for
    :math:`K - 1` pairs (:math:`K - 1` in place of :math:`K` throughout), and (by its NaN,
    infinity or ``OverflowError``) an overflowing :math:`e^{+a}`.

    Parameters
    ----------
    fn : callable
        Called as ``fn(K, tau)`` with a Python int and float; returns a number.
    verbose : bool, default True
        Print one line per case.

    Returns
    -------
    bool
        True when every answer agrees to 1e-6 relative (a float32 computation passes).

    Raises
    ------
    TypeError
        If ``fn`` is not callable (the reader's own errors are reported, not raised).

    Examples
    --------
    >>> from infonce_lib import attainable_cosine_cap, cosine_cap
    >>> check_attainable_cap(attainable_cosine_cap, verbose=False)
    True
    >>> check_attainable_cap(cosine_cap)  # doctest: +ELLIPSIS
    FAIL  K = 8, tau = 1 and 0.001: entry 0: expected 0.9062334, got 1.412974: this
          is the score-range cap (gap 2, every negative at cosine -1); unit vectors
    ...
    4 of 4 cases fail.
    False
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable (attainable_cap(K, tau)); got {type(fn).__name__}")
    cases = []
    for K, taus in _CAP_CASES:
        want = np.array([attainable_cosine_cap(K, t) for t in taus])
        by_tau = [_cap_mistakes(K, t) for t in taus]
        known = [(np.array([m[k] for m in by_tau]), _CAP_HINTS[k]) for k in _CAP_HINTS]
        cases.append(
            Case(
                f"K = {K}, tau = {taus[0]:g} and {taus[1]:g}",
                (K, taus),
                want,
                known,
                nonfinite_hint=(
                    "exp overflowed: write the cap as log K - log1p((K-1) exp(-a)) with "
                    "a = K/((K-1) tau) >= 0, so only exp of a negative number is formed"
                ),
                rtol=_RTOL,
                atol=0.0,
                imprecise_rtol=1e-4,
                imprecise_hint="compute in float64 with math.log1p and math.exp",
            )
        )
    return run_cases(_each_tau(fn), cases, verbose, "attainable_cap(K, tau)")


# ---------------------------------------------------------------- concavity in beta


def _softmax_rows(L: np.ndarray) -> np.ndarray:
    P = np.exp(L - L.max(axis=-1, keepdims=True))
    return P / P.sum(axis=-1, keepdims=True)


def _weighted_var(P: np.ndarray, S: np.ndarray) -> np.ndarray:
    mean = np.sum(P * S, axis=1)
    return np.sum(P * (S - mean[:, None]) ** 2, axis=1)


def _curvature_variants(S: np.ndarray, beta: float) -> dict[str, float]:
    K = S.shape[0]
    P = _softmax_rows(beta * S)
    var = _weighted_var(P, S)
    first = float((np.diag(S) - np.sum(P * S, axis=1)).mean())
    off = ~np.eye(K, dtype=bool)
    Q = _softmax_rows(np.where(off, beta * S, -np.inf))  # over the negatives only
    return {
        "sign": float(var.mean()),
        "uncentred": float(-np.sum(P * S**2, axis=1).mean()),
        "sum": float(-var.sum()),
        "first": first,
        "axis": float(-_weighted_var(_softmax_rows(beta * S.T), S.T).mean()),
        "negatives only": float(-_weighted_var(Q, S).mean()),
        "in tau": float(-var.mean() * beta**4 + 2 * beta**3 * first),
        "unweighted": float(-S.var(axis=1).mean()),
        "logits": float(-(beta**2) * var.mean()),
        "no beta": float(-_weighted_var(_softmax_rows(S), S).mean()),
        "beta as tau": float(-_weighted_var(_softmax_rows(S / beta), S).mean()),
    }


_CURVATURE_HINTS = {
    "sign": "the sign is flipped: the second derivative is MINUS the variance (concave)",
    "uncentred": (
        "this is minus the weighted mean of S^2; the variance subtracts the square of the "
        "weighted mean: sum_j p_ij (S_ij - Sbar_i)^2"
    ),
    "sum": "this is the sum over rows; the batch value is the mean over rows (divide by K)",
    "first": "this is the first derivative, (1/K) sum_i (S_ii - Sbar_i), not the second",
    "axis": (
        "the softmax runs over the wrong axis: row i (the view y_i) is normalised over its "
        "candidates x_j, the columns of S[i]"
    ),
    "negatives only": (
        "this weights only the negatives; the softmax of row i includes the positive"
    ),
    "in tau": "this is a derivative in tau; the exercise asks for the derivative in beta = 1/tau",
    "unweighted": (
        "these are the plain variances of the rows (the curvature at beta = 0); weight each "
        "score by its softmax probability p_ij at the given beta"
    ),
    "logits": (
        "this is the variance of the logits beta * S_ij, beta^2 times too large: the "
        "derivative in beta of the softmax mean of S is the variance of S itself"
    ),
    "no beta": (
        "beta is left out: this is the softmax of S (beta = 1); the weights are "
        "p_ij = softmax(beta * S_i)_j at the given beta"
    ),
    "beta as tau": (
        "beta is used as a temperature: this is the softmax of S / beta; beta = 1/tau "
        "multiplies the scores, p_ij = softmax(beta * S_i)_j"
    ),
}


def _float32_curvature(S: np.ndarray, beta: float) -> float:
    """The centred formula evaluated in float32 throughout (a careful single-precision answer)."""
    S32 = S.astype(np.float32)
    P = _softmax_rows(np.float32(beta) * S32)
    return -float(np.mean(_weighted_var(P, S32)))


def _curvature_rtol(S: np.ndarray, beta: float, expected: float) -> float:
    """1e-6, or ten times the relative error of :func:`_float32_curvature` if larger: a case
    that single precision cannot get to 1e-6 (the beta = 1000 batch, where the scores differ
    by 1e-4 and float32 rounds them at 6e-8) accepts what a careful float32 answer gets."""
    error = abs(_float32_curvature(S, beta) - expected) / abs(expected)
    return max(_RTOL, 10.0 * error)


def _curvature_batches() -> list[tuple[np.ndarray, float]]:
    """Three batches and their beta: the third has, in four of its five rows, a negative
    within 1e-3 of the positive, so that at beta = 1000 the curvature is about -1e-7, not
    -1e-70: a tiny value, but one that 0 and the wrong sign cannot match."""
    rng = np.random.default_rng(20261130)
    out = []
    for K, beta in ((4, 3.0), (6, 10.0)):
        S = rng.uniform(-1, 1, size=(K, K))
        S[np.arange(K), np.arange(K)] = rng.uniform(0, 1, size=K)
        out.append((S, beta))
    K = 5
    S = rng.uniform(-1, 0.3, size=(K, K))
    S[np.arange(K), np.arange(K)] = rng.uniform(0.5, 0.9, size=K)
    for i, delta in zip(range(K - 1), (-6e-4, 4e-4, 1e-3, -2e-4), strict=True):
        S[i, (i + 1) % K] = S[i, i] + delta  # a negative next to the positive
    out.append((S, 1000.0))
    return out


def check_infonce_curvature(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``infonce_curvature(S, beta)``: the second derivative in :math:`\beta`.

    For one batch of cosines ``S`` (shape ``(K, K)``, ``S[i, j]`` the score of view
    :math:`y_i` against candidate :math:`x_j`, positives on the diagonal) the expected value is

    .. math::

        \frac{\mathrm{d}^2 I_{\mathrm{NCE}}}{\mathrm{d}\beta^2}
        &= -\frac1K \sum_i \sum_j p_{ij} \big(S_{ij} - \bar S_i\big)^2, \\
        p_{ij} &= \operatorname{softmax}_j(\beta S_{i\cdot}), \qquad
        \bar S_i = \sum_j p_{ij} S_{ij}

    (:func:`~infonce_lib.infonce_beta_derivatives`), on three batches at three values of
    :math:`\beta`. The last, :math:`\beta = 1000`, makes unshifted exponentials overflow; its
    batch has negatives within :math:`10^{-3}` of their positives, so that the curvature is
    about :math:`-10^{-7}` rather than vanishingly small. Answers must agree to
    :math:`10^{-6}` relative, with no absolute slack, so 0 and the wrong sign fail
    everywhere; where float32 cannot get that close (the :math:`\beta = 1000` batch, whose
    scores differ by about :math:`10^{-4}` and are rounded at :math:`6 \times 10^{-8}` in
    float32), the tolerance is ten times the relative error of the centred formula computed
    in float32, so a careful single-precision answer passes. The first batch is at
    :math:`\beta = 3`, not 2: with :math:`K = 4` and :math:`\beta = 2`,
    :math:`\beta^2 = K`, and the variance of the logits would equal the sum over rows.
    Recognised mistakes: the sign, the uncentred second moment, the sum over rows, the first
    derivative, the softmax over the wrong axis, the softmax over the negatives only, the
    derivative in :math:`\tau`, the plain (unweighted) variances, the variance of the
    logits :math:`\beta S` (:math:`\beta^2` times too large), an overflow (NaN or
    infinity), and an answer that is right to a few digits only (a finite difference with a
    large step, or an uncentred float32 computation).

    Parameters
    ----------
    fn : callable
        Called as ``fn(S, beta)`` with a float64 array of shape ``(K, K)`` and a float.
    verbose : bool, default True
        Print one line per case.

    Returns
    -------
    bool
        True when every case agrees to 1e-6 relative (or to float32's precision, above).

    Raises
    ------
    TypeError
        If ``fn`` is not callable.

    Examples
    --------
    >>> from infonce_lib.temperature import infonce_beta_derivatives
    >>> def right(S, beta):
    ...     return infonce_beta_derivatives(S[None], beta).second[0]
    >>> check_infonce_curvature(right, verbose=False)
    True
    >>> flipped = temperature_mistakes()["curvature: sign flipped"]
    >>> check_infonce_curvature(flipped)  # doctest: +ELLIPSIS
    FAIL  K = 4, beta = 3: expected -0.0541185, got 0.0541185: the sign is flipped:
    ...
    False
    """
    cases = []
    for S, beta in _curvature_batches():
        K = S.shape[0]
        variants = _curvature_variants(S, beta)
        known = [(variants[k], _CURVATURE_HINTS[k]) for k in _CURVATURE_HINTS]
        expected = float(infonce_beta_derivatives(S[None], beta).second[0])
        cases.append(
            Case(
                f"K = {K}, beta = {beta:g}",
                (S, beta),
                expected,
                known,
                nonfinite_hint=(
                    "exp overflowed: subtract each row's largest beta * S_ij before "
                    "exponentiating (the softmax does not change)"
                ),
                rtol=_curvature_rtol(S, beta, expected),
                atol=0.0,
                imprecise_rtol=_IMPRECISE_RTOL,
                imprecise_hint=(
                    "a finite difference of the bound (or float32 arithmetic) gives such a "
                    "value: use the formula, minus the softmax-weighted variance of each row"
                ),
            )
        )
    return run_cases(fn, cases, verbose, "infonce_curvature(S, beta)")


# ---------------------------------------------------------------- tau -> 0


def _triplet_variants(S: np.ndarray) -> dict[str, object]:
    K = S.shape[0]
    pos = np.diag(S)
    neg = np.where(np.eye(K, dtype=bool), -np.inf, S)
    hardest = neg.max(axis=1)
    mean_neg = (S.sum(axis=1) - pos) / (K - 1)
    off = ~np.eye(K, dtype=bool)
    hinge = np.maximum(0.0, hardest - pos)
    return {
        "no hinge": float(np.mean(hardest - pos)),
        "mean negative": float(np.mean(np.maximum(0.0, mean_neg - pos))),
        "sign": float(np.mean(np.maximum(0.0, pos - hardest))),
        "sum": float(np.sum(np.maximum(0.0, hardest - pos))),
        "rows": np.maximum(0.0, hardest - pos),
        "axis": float(np.mean(np.maximum(0.0, neg.max(axis=0) - pos))),
        "every negative": float(np.sum(np.maximum(0.0, neg - pos[:, None])) / K),
        "zero mask": float(np.mean(np.maximum(0.0, np.where(off, S, 0.0).max(axis=1) - pos))),
        "beaten rows only": float(hinge[hinge > 0].mean()),
        "K - 1": float(hinge.sum() / (K - 1)),
        "easiest negative": float(
            np.mean(np.maximum(0.0, np.where(off, S, np.inf).min(axis=1) - pos))
        ),
        "squared": float(np.mean(hinge**2)),
        "whole batch": float(np.mean(np.maximum(0.0, S[off].max() - pos))),
        "margin": float(np.mean(np.maximum(0.0, hardest - pos + 0.2))),
        "second largest": float(np.mean(np.maximum(0.0, np.sort(S, axis=1)[:, -2] - pos))),
    }


_TRIPLET_HINTS = {
    "no hinge": (
        "the hinge is missing: a row whose positive wins contributes 0, not a negative "
        "number (max(0, hardest negative - positive))"
    ),
    "mean negative": (
        "this uses the mean negative; as tau -> 0 the softmax keeps only the hardest one "
        "(the largest S_ij with j != i)"
    ),
    "sign": "the sign is flipped: the loss counts how far the hardest negative beats the positive",
    "sum": "this is the sum over rows; tau * L is a mean over rows (divide by K)",
    "rows": "this is one value per row; return their mean, one number for the batch",
    "axis": (
        "the hardest negative is taken down a column; row i (the view y_i) compares its "
        "positive with the other candidates of the same row, S[i, j], j != i"
    ),
    "every negative": (
        "this adds a hinge for every negative that beats the positive; in the limit only the "
        "hardest negative of each row counts"
    ),
    "zero mask": (
        "the diagonal was masked with 0 (S * (1 - eye), or np.fill_diagonal(S, 0)): in a row "
        "whose scores are all negative the 0 then passes for the hardest negative; mask the "
        "positive with -inf (np.where(np.eye(K, dtype=bool), -np.inf, S))"
    ),
    "beaten rows only": (
        "this averages over the beaten rows only; the rows whose positive wins count too, "
        "each with 0: divide the sum by K"
    ),
    "K - 1": "this divides by K - 1; the mean runs over the K rows (divide by K)",
    "easiest negative": (
        "this uses the easiest negative (the smallest score); as tau -> 0 the softmax keeps "
        "the largest, the hardest negative"
    ),
    "squared": (
        "the hinge is squared; tau * L tends to the plain hinge max(0, hardest - positive), "
        "a difference of scores"
    ),
    "whole batch": (
        "this takes the hardest negative of the whole batch for every row; each row has its "
        "own hardest negative, the largest S[i, j] with j != i"
    ),
    "margin": (
        "this adds a margin (FaceNet's 0.2); the limit of tau * L is a triplet loss with "
        "zero margin, max(0, hardest negative - positive)"
    ),
    "second largest": (
        "this takes the second-largest score of the row, which is the hardest negative only "
        "when the positive is the largest; mask the positive and take the largest of the rest"
    ),
}

#: The cases of the limit checker (seeded): in every one, some rows' positives are beaten
#: and some win, two rows have only negative scores (so a diagonal masked with 0 shows), one
#: positive is beaten by every negative (so the easiest negative shows), and the mean,
#: hardest and column-wise negatives differ, so that each recognised mistake gives its own
#: value.
_TRIPLET_CASES = (("K = 6", 6, 0.3), ("K = 5", 5, 0.45), ("K = 8", 8, 0.2))


def check_zero_temperature_limit(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``zero_temperature_limit(S)``: :math:`\lim_{\tau \to 0} \tau\mathcal{L}`.

    For one batch of cosines ``S`` (shape ``(K, K)``, positives on the diagonal) the expected
    value is the zero-margin triplet loss on the hardest negative,

    .. math::

        T = \frac1K \sum_i \max\Big(0, \max_{j \ne i} S_{ij} - S_{ii}\Big),

    on three batches (:math:`K` = 6, 5, 8), each with beaten and winning positives, so that
    every recognised mistake gives a value of its own in every case. Answers must agree to
    :math:`10^{-6}` relative. Recognised mistakes: no hinge, the mean negative instead of the
    hardest, the sign, the sum over rows, one value per row, the hardest negative of a
    column instead of a row, a hinge for every negative, the diagonal masked with 0 instead
    of :math:`-\infty`, the mean over the beaten rows only, a division by :math:`K - 1`, the
    easiest negative, a squared hinge, the hardest negative of the whole batch, a NaN
    (masking the diagonal with ``inf * eye``, which is ``0 * inf = nan`` off the diagonal,
    or ``exp(S / tau)`` overflowing at a tiny :math:`\tau` without a shift),
    and a value a little above
    the limit (:math:`\tau\mathcal{L}` at a small :math:`\tau`, which lies between
    :math:`T` and :math:`T + \tau \log K`; a row with an exact tie at its maximum keeps it at
    least :math:`\tau \log 2 / K` above :math:`T`, so even :math:`\tau = 10^{-3}` shows).

    Parameters
    ----------
    fn : callable
        Called as ``fn(S)`` with a float64 array of shape ``(K, K)``; returns a number.
    verbose : bool, default True
        Print one line per case.

    Returns
    -------
    bool
        True when every case agrees to 1e-6 relative.

    Raises
    ------
    TypeError
        If ``fn`` is not callable.

    Examples
    --------
    >>> import numpy as np
    >>> from infonce_lib.temperature import positive_margins
    >>> def right(S):
    ...     return float(np.mean(np.maximum(0.0, -positive_margins(S[None])[0])))
    >>> check_zero_temperature_limit(right, verbose=False)
    True
    >>> def unfinished(S):
    ...     raise NotImplementedError
    >>> check_zero_temperature_limit(unfinished)
    Not attempted yet: unfinished raises NotImplementedError.
    False
    """
    rng = np.random.default_rng(20261201)
    cases = []
    for name, K, diag in _TRIPLET_CASES:
        S = rng.uniform(-1, 0.6, size=(K, K))
        S[np.arange(K), np.arange(K)] = diag + rng.uniform(-0.15, 0.15, size=K)
        # Row 0: two negatives beat the positive, tied exactly at the row's maximum, so
        # that tau * L at any tau > 0 exceeds the limit by at least tau log(2) / K.
        S[0, 1:3] = S[0, 0] + 0.1
        # Rows 1 and 2 have only negative scores: row 1's positive (-0.2) is beaten by one
        # negative (-0.1), row 2's (-0.3) wins; a 0 left on the diagonal would beat both.
        S[1:3] = rng.uniform(-1, -0.45, size=(2, K))
        S[1, 1], S[1, 0], S[2, 2] = -0.2, -0.1, -0.3
        S[3, 3] = -1.0  # row 3: every negative beats the positive, the easiest one too
        S[-1, -1] = 0.95  # the last row's positive wins (its negatives are below 0.6)
        cases.append(_triplet_case(name, S))
    return run_cases(fn, cases, verbose, "zero_temperature_limit(S)")


def _triplet_case(name: str, S: np.ndarray) -> Case:
    expected = float(np.mean(np.maximum(0.0, -positive_margins(S[None])[0])))
    variants = _triplet_variants(S)
    known = [(variants[k], _TRIPLET_HINTS[k]) for k in _TRIPLET_HINTS]
    return Case(
        name,
        (S,),
        expected,
        known,
        nonfinite_hint=(
            "the answer is NaN or infinite, for one of two reasons: masking the diagonal "
            "with np.inf * np.eye(K) makes 0 * inf = nan off the diagonal (use "
            "np.where(np.eye(K, dtype=bool), -np.inf, S) or np.fill_diagonal on a copy); or "
            "tau * L computed at a tiny tau without subtracting each row's maximum, where "
            "exp(S / tau) overflows to inf and inf / inf = nan (take the limit exactly: "
            "the hardest negative of each row)"
        ),
        rtol=_RTOL,
        atol=0.0,
        imprecise_rtol=0.05,
        imprecise_hint=(
            "tau * L at a small tau lies between the limit and the limit + tau log K; take "
            "the limit exactly: the hardest negative of each row"
        ),
    )


# ---------------------------------------------------------------- the usual mistakes


def temperature_mistakes() -> dict[str, Callable]:
    """The mistakes the three checkers recognise, as functions with the exercises' signatures.

    Keys start with ``"cap: "``, ``"curvature: "`` or ``"limit: "``, for
    :func:`check_attainable_cap`, :func:`check_infonce_curvature` and
    :func:`check_zero_temperature_limit`.

    Returns
    -------
    dict of str to callable

    Examples
    --------
    >>> sorted(temperature_mistakes())[:3]
    ['cap: K - 1 for K', 'cap: K negatives', 'cap: bits']
    >>> check_attainable_cap(temperature_mistakes()["cap: K negatives"], verbose=False)
    False
    """

    def cap(gap, negatives, scale=1.0, tau_times=False):
        def fn(K, tau):
            t = 1 / tau if tau_times else tau
            return _cap_with(K, t, gap(K), negatives(K), scale)

        return fn

    def exact(K):
        return K / (K - 1)

    def minus_one(K):
        return K - 1

    mistakes: dict[str, Callable] = {
        "cap: score-range gap 2": lambda K, tau: cosine_cap(K, tau),
        "cap: population cap": cap(lambda K: 1.0, minus_one),
        "cap: gap upside down": cap(lambda K: (K - 1) / K, minus_one),
        "cap: tau multiplied": cap(exact, minus_one, tau_times=True),
        "cap: K negatives": cap(exact, lambda K: K),
        "cap: log K missing": lambda K, tau: -math.log1p((K - 1) * math.exp(-exact(K) / tau)),
        "cap: bits": cap(exact, minus_one, scale=1 / math.log(2)),
        "cap: upper bound": lambda K, tau: min(math.log(K), exact(K) / tau),
        "cap: positive's term missing": lambda K, tau: math.log(K / (K - 1)) + exact(K) / tau,
        "cap: simple bound 1/tau": lambda K, tau: min(math.log(K), 1 / tau),
        "cap: log10": cap(exact, minus_one, scale=1 / math.log(10)),
        "cap: log(K - 1)": lambda K, tau: (
            math.log(K - 1) - math.log1p((K - 1) * math.exp(-exact(K) / tau))
        ),
        "cap: K - 1 for K": lambda K, tau: _cap_with(K - 1, tau, exact(K - 1), K - 2),
        "cap: integer division": cap(lambda K: K // (K - 1), minus_one),
        "cap: gap doubled": cap(lambda K: 2 * K / (K - 1), minus_one),
        "cap: overflow": lambda K, tau: math.log(
            K * math.exp(exact(K) / tau) / (math.exp(exact(K) / tau) + K - 1)
        ),
    }
    for key in _CURVATURE_HINTS:
        mistakes[f"curvature: {_CURVATURE_NAMES[key]}"] = _curvature_mistake(key)
    for key in _TRIPLET_HINTS:
        mistakes[f"limit: {_TRIPLET_NAMES[key]}"] = _triplet_mistake(key)
    return mistakes


_CURVATURE_NAMES = {
    "sign": "sign flipped",
    "uncentred": "uncentred",
    "sum": "sum over rows",
    "first": "first derivative",
    "axis": "wrong axis",
    "negatives only": "negatives only",
    "in tau": "derivative in tau",
    "unweighted": "unweighted variance",
    "logits": "variance of the logits",
    "no beta": "beta left out",
    "beta as tau": "beta used as tau",
}
_TRIPLET_NAMES = {
    "no hinge": "no hinge",
    "mean negative": "mean negative",
    "sign": "sign flipped",
    "sum": "sum over rows",
    "rows": "per-row output",
    "axis": "column-wise hardest",
    "every negative": "every negative",
    "zero mask": "diagonal masked with 0",
    "beaten rows only": "mean over beaten rows",
    "K - 1": "divided by K - 1",
    "easiest negative": "easiest negative",
    "squared": "squared hinge",
    "whole batch": "batch-wide hardest",
    "margin": "FaceNet margin 0.2",
    "second largest": "second-largest of the row",
}


def _curvature_mistake(key: str) -> Callable:
    def fn(S, beta):
        return _curvature_variants(np.asarray(S, dtype=float), beta)[key]

    return fn


def _triplet_mistake(key: str) -> Callable:
    def fn(S):
        return _triplet_variants(np.asarray(S, dtype=float))[key]

    return fn
