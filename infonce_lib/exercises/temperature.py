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
mistake is), and returns True when all pass. A function that raises ``NotImplementedError``
(the starter cell) gets "Not attempted yet" and ``False``, without an exception.
:func:`temperature_mistakes` returns the recognised mistakes as functions, so the checkers can
be tested against them.
"""

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


def _cap_with(K: int, tau: float, gap: float, negatives: float, scale: float = 1.0) -> float:
    return scale * (math.log(K) - math.log1p(negatives * math.exp(-gap / tau)))


def _cap_mistakes(K: int, tau: float) -> list[tuple[float, str]]:
    g = K / (K - 1)
    out = [
        (
            cosine_cap(K, tau),
            "this is the score-range cap (gap 2, every negative at cosine -1); unit vectors "
            "cannot place every negative opposite its view once K >= 3: the mean gap is at "
            "most K/(K-1)",
        ),
        (
            _cap_with(K, tau, 1.0, K - 1),
            "this uses a gap of 1 (the large-K limit); the exact largest mean gap of a row is "
            "K/(K-1)",
        ),
        (
            _cap_with(K, tau, (K - 1) / K, K - 1),
            "the gap is upside down: it is K/(K-1), not (K-1)/K",
        ),
        (
            _cap_with(K, 1 / tau, g, K - 1),
            "tau multiplies the gap here; the critic is s/tau, so the exponent is -gap/tau",
        ),
        (
            _cap_with(K, tau, g, K),
            "this counts K negatives; each row has K - 1 (the positive is the K-th candidate)",
        ),
        (
            _cap_with(K, tau, g, K - 1) - math.log(K),
            "log K is missing: a row contributes log K + log p_i",
        ),
        (
            _cap_with(K, tau, g, K - 1, scale=1 / math.log(2)),
            "this is in bits; the book works in nats (natural logarithms)",
        ),
        (
            min(math.log(K), g / tau),
            "this is the simple upper bound min(log K, K/((K-1) tau)) on the cap, not the cap",
        ),
    ]
    return out


def check_attainable_cap(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``attainable_cap(K, tau)`` against the attainable cosine cap.

    The expected value is

    .. math::

        \log K - \log\Big(1 + (K-1) \exp\Big(-\frac{K}{(K-1)\tau}\Big)\Big)

    (:func:`~infonce_lib.attainable_cosine_cap`), for five cases:
    :math:`(K, \tau) = (8, 1)`, :math:`(256, 1)`, :math:`(2, 0.5)` (where it equals the
    score-range cap), :math:`(16, 0.25)` and :math:`(256, 10^{-3})` (the exponent is
    :math:`-1000`: a formula that forms :math:`e^{+1000}` overflows). Recognised mistakes:
    the score-range gap 2, a gap of 1 or :math:`(K-1)/K`, :math:`\tau` multiplied,
    :math:`K` negatives, :math:`\log K` left out, bits instead of nats, and the upper bound
    :math:`\min(\log K, K/((K-1)\tau))` in place of the cap.

    Parameters
    ----------
    fn : callable
        Called as ``fn(K, tau)`` with a Python int and float; returns a number.
    verbose : bool, default True
        Print one line per case.

    Returns
    -------
    bool
        True when every case agrees to 1e-9 relative (1e-12 absolute).

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
    FAIL  K = 8, tau = 1: expected 0.9062334, got 1.412974: this is the score-range
    ...
    False
    """
    cases = []
    for K, tau in ((8, 1.0), (256, 1.0), (2, 0.5), (16, 0.25), (256, 1e-3)):
        want = attainable_cosine_cap(K, tau)
        # at K = 2 the score-range cap is right: a mistake that gives the value is no hint
        known = [(v, h) for v, h in _cap_mistakes(K, tau) if not math.isclose(v, want)]
        cases.append(
            Case(
                f"K = {K}, tau = {tau:g}",
                (K, tau),
                want,
                known,
                nonfinite_hint=(
                    "exp overflowed: write the cap as log K - log1p((K-1) exp(-a)) with "
                    "a = K/((K-1) tau) >= 0, so only exp of a negative number is formed"
                ),
            )
        )
    return run_cases(fn, cases, verbose, "attainable_cap(K, tau)")


# ---------------------------------------------------------------- concavity in beta


def _softmax_rows(L: np.ndarray) -> np.ndarray:
    P = np.exp(L - L.max(axis=-1, keepdims=True))
    return P / P.sum(axis=-1, keepdims=True)


def _curvature_variants(S: np.ndarray, beta: float) -> dict[str, float]:
    K = S.shape[0]
    P = _softmax_rows(beta * S)
    mean = np.sum(P * S, axis=1)
    var = np.sum(P * (S - mean[:, None]) ** 2, axis=1)
    Pc = _softmax_rows(beta * S.T)  # the softmax over the wrong axis
    mean_c = np.sum(Pc * S.T, axis=1)
    var_c = np.sum(Pc * (S.T - mean_c[:, None]) ** 2, axis=1)
    off = ~np.eye(K, dtype=bool)
    Q = _softmax_rows(np.where(off, beta * S, -np.inf))  # over the negatives only
    mean_q = np.sum(Q * S, axis=1)
    var_q = np.sum(Q * (S - mean_q[:, None]) ** 2, axis=1)
    return {
        "sign": float(var.mean()),
        "uncentred": float(-np.sum(P * S**2, axis=1).mean()),
        "sum": float(-var.sum()),
        "first": float((np.diag(S) - mean).mean()),
        "axis": float(-var_c.mean()),
        "negatives only": float(-var_q.mean()),
        "in tau": float(-var.mean() * beta**4 + 2 * beta**3 * (np.diag(S) - mean).mean()),
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
}


def check_infonce_curvature(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``infonce_curvature(S, beta)``: the second derivative in :math:`\beta`.

    For one batch of cosines ``S`` (shape ``(K, K)``, ``S[i, j]`` the score of view
    :math:`y_i` against candidate :math:`x_j`, positives on the diagonal) the expected value is

    .. math::

        \frac{\mathrm{d}^2 I_{\mathrm{NCE}}}{\mathrm{d}\beta^2}
        &= -\frac1K \sum_i \sum_j p_{ij} \big(S_{ij} - \bar S_i\big)^2, \\
        p_{ij} &= \operatorname{softmax}_j(\beta S_{i\cdot}), \qquad
        \bar S_i = \sum_j p_{ij} S_{ij}

    (:func:`~infonce_lib.infonce_beta_derivatives`), on three batches at three
    values of :math:`\beta` (one large enough that unshifted exponentials overflow).
    Recognised mistakes: the sign, the uncentred second moment, the sum over rows, the first
    derivative, the softmax over the wrong axis, the softmax over the negatives only, and the
    derivative in :math:`\tau`.

    Parameters
    ----------
    fn : callable
        Called as ``fn(S, beta)`` with a float64 array of shape ``(K, K)`` and a float.
    verbose : bool, default True
        Print one line per case.

    Returns
    -------
    bool
        True when every case agrees to 1e-9 relative (1e-12 absolute).

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
    FAIL  K = 4, beta = 2: expected -0.07871966, got 0.07871966: the sign is
    ...
    False
    """
    rng = np.random.default_rng(20261130)
    cases = []
    for K, beta in ((4, 2.0), (6, 10.0), (5, 1000.0)):
        S = rng.uniform(-1, 1, size=(K, K))
        S[np.arange(K), np.arange(K)] = rng.uniform(0, 1, size=K)
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
    return {
        "no hinge": float(np.mean(hardest - pos)),
        "mean negative": float(np.mean(np.maximum(0.0, mean_neg - pos))),
        "sign": float(np.mean(np.maximum(0.0, pos - hardest))),
        "sum": float(np.sum(np.maximum(0.0, hardest - pos))),
        "rows": np.maximum(0.0, hardest - pos),
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
}


def check_zero_temperature_limit(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``zero_temperature_limit(S)``: :math:`\lim_{\tau \to 0} \tau\mathcal{L}`.

    For one batch of cosines ``S`` (shape ``(K, K)``, positives on the diagonal) the expected
    value is the zero-margin triplet loss on the hardest negative,

    .. math::

        T = \frac1K \sum_i \max\Big(0, \max_{j \ne i} S_{ij} - S_{ii}\Big),

    on three batches: one where some positives are beaten, one where none is (:math:`T = 0`),
    and one where every positive is. Recognised mistakes: no hinge, the mean negative instead
    of the hardest, the sign, the sum over rows, and one value per row.

    Parameters
    ----------
    fn : callable
        Called as ``fn(S)`` with a float64 array of shape ``(K, K)``; returns a number.
    verbose : bool, default True
        Print one line per case.

    Returns
    -------
    bool
        True when every case agrees to 1e-9 relative (1e-12 absolute).

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
    for name, diag in (("some positives beaten", 0.3), ("no positive beaten", 1.0)):
        K = 6
        S = rng.uniform(-1, 0.6, size=(K, K))
        S[np.arange(K), np.arange(K)] = diag
        cases.append(_triplet_case(name, S))
    S = rng.uniform(0.0, 1.0, size=(5, 5))
    S[np.arange(5), np.arange(5)] = -0.5
    cases.append(_triplet_case("every positive beaten", S))
    return run_cases(fn, cases, verbose, "zero_temperature_limit(S)")


def _triplet_case(name: str, S: np.ndarray) -> Case:
    expected = float(np.mean(np.maximum(0.0, -positive_margins(S[None])[0])))
    variants = _triplet_variants(S)
    known = [(variants[k], _TRIPLET_HINTS[k]) for k in _TRIPLET_HINTS]
    # a mistake that happens to give the right value here is not a hint for this case
    known = [(v, h) for v, h in known if not np.allclose(v, expected, rtol=1e-9, atol=1e-12)]
    return Case(name, (S,), expected, known)


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
    ['cap: K negatives', 'cap: bits', 'cap: gap 1']
    >>> check_attainable_cap(temperature_mistakes()["cap: K negatives"], verbose=False)
    False
    """

    def cap(gap, negatives, scale=1.0, tau_times=False, drop_log_k=False):
        def fn(K, tau):
            g = gap(K)
            t = 1 / tau if tau_times else tau
            value = _cap_with(K, t, g, negatives(K), scale)
            return value - math.log(K) if drop_log_k else value

        return fn

    def exact(K):
        return K / (K - 1)

    def minus_one(K):
        return K - 1

    mistakes: dict[str, Callable] = {
        "cap: score-range gap 2": lambda K, tau: cosine_cap(K, tau),
        "cap: gap 1": cap(lambda K: 1.0, minus_one),
        "cap: gap upside down": cap(lambda K: (K - 1) / K, minus_one),
        "cap: tau multiplied": cap(exact, minus_one, tau_times=True),
        "cap: K negatives": cap(exact, lambda K: K),
        "cap: log K missing": cap(exact, minus_one, drop_log_k=True),
        "cap: bits": cap(exact, minus_one, scale=1 / math.log(2)),
        "cap: upper bound": lambda K, tau: min(math.log(K), exact(K) / tau),
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
}
_TRIPLET_NAMES = {
    "no hinge": "no hinge",
    "mean negative": "mean negative",
    "sign": "sign flipped",
    "sum": "sum over rows",
    "rows": "per-row output",
}


def _curvature_mistake(key: str) -> Callable:
    def fn(S, beta):
        return _curvature_variants(np.asarray(S, dtype=float), beta)[key]

    return fn


def _triplet_mistake(key: str) -> Callable:
    def fn(S):
        return _triplet_variants(np.asarray(S, dtype=float))[key]

    return fn
