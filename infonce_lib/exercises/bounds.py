r"""Checker for chapter 3's exercise: the InfoNCE bound of one batch from its score matrix.

The exercise asks for ``my_infonce_bound(scores)``: given one batch's ``(K, K)`` score matrix
with ``scores[i, j] = f(x_j, y_i)`` (row ``i`` is the view :math:`y_i`, column ``j`` the
candidate :math:`x_j`, positives on the diagonal), return the batch's InfoNCE value

.. math::

    \hat I_{\mathrm{NCE}} = \log K + \frac1K \sum_{i=1}^{K}
    \log \frac{e^{F_{ii}}}{\sum_{j=1}^{K} e^{F_{ij}}}

(Poole et al., 2019; van den Oord et al., 2018), the softmax running over the candidates
:math:`x_j` of each row. :func:`check_infonce_bound` runs a reader's function on a few
batches built so that each usual mistake gives a recognisably wrong number, and names the
mistake; :func:`infonce_bound_mistakes` returns those mistakes as small functions, so the
tests can show that each one is caught.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp

from ..bounds import infonce_bound
from ._runner import plain_report

__all__ = ["check_infonce_bound", "infonce_bound_mistakes"]

# An answer passes within 1e-6 relative or 1e-6 absolute: float32 arithmetic done carefully
# (each row shifted by its maximum) lands there, every usual mistake far outside.
_RTOL = 1e-6
_ATOL = 1e-6
# The epsilons readers put inside a log, and the bounds they clip scores to.
_EPSILONS = (1e-12, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5)
_CLIPS = (50.0, 80.0, 88.0, 100.0, 300.0, 500.0, 700.0, 709.0)

_HINTS = {
    "wrong axis": (
        "the softmax ran down the columns (over the views y_i); here it runs along each "
        "row, over the candidates x_j (axis=1)"
    ),
    "no log K": "log K is missing: the bound is log K plus the mean log-probability",
    "loss": (
        "this is the InfoNCE loss, minus the mean log-probability; the bound is log K minus "
        "the loss"
    ),
    "sign": "the sign is flipped: the bound is log K plus the mean log-probability",
    "sum": "this sums the rows' log-probabilities; the bound takes their mean (divide by K)",
    "leave one out": (
        "the positive was left out of its own denominator (with log(K - 1)): that is the "
        "leave-one-out upper bound; InfoNCE keeps the positive among the K candidates"
    ),
    "log K-1": "log(K - 1) was added instead of log K: all K candidates count, positive included",
    "bits": "this is in bits (log base 2); the book works in nats (natural logarithm)",
    "overflow": (
        "exp overflowed: subtract each row's largest score before exponentiating "
        "(log-sum-exp), or use scipy.special.logsumexp"
    ),
    "rows": "return one number for the batch (the mean over its rows), not one per row",
    "clipped": (
        "this is 0 where the batch's value is negative: a critic worse than chance gives a "
        "negative value; do not clip it (only I(X; Y) itself is never negative)"
    ),
    "loo log K": (
        "the positive was left out of its own denominator and log K added: that is neither "
        "InfoNCE nor the leave-one-out bound (which adds log(K - 1)); InfoNCE keeps the "
        "positive among the K candidates"
    ),
    "symmetric": (
        "this averages two bounds, one normalised along each row and one along each column "
        "(a symmetric, CLIP-style bound); here only the rows are normalised, over the x_j"
    ),
    "global max": (
        "a whole row underflowed to 0: subtract each row's own maximum "
        "(F.max(axis=1, keepdims=True)), not the largest score of the whole batch"
    ),
    "abs": (
        "the value has the wrong sign: either the whole sign was flipped or it was made "
        "positive (abs); a batch worse than chance has a negative value, keep its sign"
    ),
    "eps": (
        "an epsilon inside the log, log(p_ii + eps): it shifts the value where a positive's "
        "probability is small; compute the log-softmax directly, F_ii - logsumexp(F_i)"
    ),
    "K-1 rows": (
        "this averages over K - 1 rows (a sum divided by K - 1, or a loop that stops one "
        "row early); the bound is the mean over all K rows"
    ),
    "log K+1": "log(K + 1) was added instead of log K: there are K candidates, positive included",
    "max not added": (
        "the row maxima were subtracted inside the log-sum-exp but never added back: "
        "logsumexp_j F_ij = m_i + log sum_j exp(F_ij - m_i)"
    ),
    "log10": "this uses base-10 logarithms: the bound is in nats (np.log, log K = np.log(K))",
    "size": (
        "this divides the sum of the K log-probabilities by F.size = K * K; their mean "
        "divides by K (len(F))"
    ),
    "clip scores": (
        "the scores were clipped: np.clip changes every score beyond the bound, and so the "
        "value; shifting each row by its maximum already keeps exp from overflowing"
    ),
    "log K shortcut": (
        "this is log K, the ceiling, but this batch is not saturated: its scores are large "
        "and their differences small; compute the log-softmax of every batch exactly"
    ),
    "log of softmax": (
        "the positive's probability underflowed to 0 before the log (its score is more "
        "than 745 below its row's maximum): compute the log-softmax directly, "
        "F_ii - logsumexp(F_i), never np.log of a softmax"
    ),
}


@dataclass
class _Case:
    name: str
    scores: object  # ndarray or nested list, as passed to the reader's function
    purpose: str
    known: list[tuple[float, str]] = field(default_factory=list)
    check_unchanged: bool = False
    nonfinite_hint: str = ""  # shown when the answer is infinite or NaN

    @property
    def expected(self) -> float:
        return float(infonce_bound(np.asarray(self.scores, dtype=np.float64)[None])[0])


def _log_probs(F: np.ndarray, axis: int = 1) -> np.ndarray:
    return np.diag(F) - logsumexp(F, axis=axis)


def _loo_value(F: np.ndarray) -> float:
    K = F.shape[0]
    off = F.copy()
    np.fill_diagonal(off, -np.inf)
    return math.log(K - 1) + float(np.mean(np.diag(F) - logsumexp(off, axis=1)))


def _bound(F: np.ndarray) -> float:
    return math.log(F.shape[0]) + float(_log_probs(F).mean())


def _known_values(F: np.ndarray) -> list[tuple[float, str]]:
    K = F.shape[0]
    lp = _log_probs(F)
    bound = math.log(K) + float(lp.mean())
    values = [
        (math.log(K) + float(_log_probs(F, axis=0).mean()), _HINTS["wrong axis"]),
        (float(lp.mean()), _HINTS["no log K"]),
        (-float(lp.mean()), _HINTS["loss"]),
        (-bound, _HINTS["sign"] if bound >= 0 else _HINTS["abs"]),  # -bound = abs(bound)
        (math.log(K) + float(lp.sum()), _HINTS["sum"]),
        (K * bound, _HINTS["sum"]),
        (_loo_value(F), _HINTS["leave one out"]),
        (_loo_value(F) - math.log(K - 1) + math.log(K), _HINTS["loo log K"]),
        (bound - math.log(K) + math.log(K - 1), _HINTS["log K-1"]),
        (bound / math.log(2.0), _HINTS["bits"]),
        (math.log(K) + float((lp + _log_probs(F, axis=0)).mean()) / 2, _HINTS["symmetric"]),
        (max(0.0, bound), _HINTS["clipped"]),
        (math.log(K) + float(lp.sum()) / (K - 1), _HINTS["K-1 rows"]),
        (math.log(K) + float(lp[:-1].mean()), _HINTS["K-1 rows"]),
        (bound - math.log(K) + math.log(K + 1), _HINTS["log K+1"]),
        (math.log(K) + float(lp.sum()) / F.size, _HINTS["size"]),
        (bound + float(F.max(axis=1).mean()), _HINTS["max not added"]),
        (bound / math.log(10.0), _HINTS["log10"]),
        *[(math.log(K) + float(np.log(np.exp(lp) + e).mean()), _HINTS["eps"]) for e in _EPSILONS],
        *[(_bound(np.clip(F, -c, c)), _HINTS["clip scores"]) for c in _CLIPS if abs(F).max() > c],
    ]
    # Where two mistakes give the same number (e.g. every log-probability 0), name neither.
    return [
        (v, h)
        for v, h in values
        if not any(_close(v, w) and h != g for w, g in values) and not _close(v, bound)
    ]


def _cases() -> list[_Case]:
    rng = np.random.default_rng(20261130)
    F1 = rng.normal(size=(5, 5)) + 1.5 * np.eye(5) + rng.normal(size=(5, 1))
    F2 = 300.0 * rng.normal(size=(4, 4)) + 800.0 * np.eye(4)
    F3 = rng.normal(size=(3, 3)) + np.eye(3)
    F4 = rng.normal(size=(4, 4)) - 2.0 * np.eye(4)  # positives scored below the negatives
    # 2048 plus quarters: exact in float32 too, so careful float32 arithmetic passes here.
    F5 = 2048.0 + rng.integers(-6, 7, size=(4, 4)) / 4 + np.eye(4)
    return [
        _Case(
            "a 5 x 5 batch",
            F1,
            "random scores, positives raised: catches the axis, the log K, the mean, the sign",
            _known_values(F1),
        ),
        _Case(
            "large scores",
            F2,
            "positives near 800: a plain exp overflows float64 here",
            _known_values(F2),
            nonfinite_hint=_HINTS["overflow"],
        ),
        _Case(
            "large, unsaturated",
            F5,
            "scores near 2048 that differ by a few units: exp overflows, and the value is "
            "well below log K",
            [*_known_values(F5), (math.log(4), _HINTS["log K shortcut"])],
            nonfinite_hint=_HINTS["overflow"],
        ),
        _Case(
            "an uninformative critic",
            np.zeros((2, 2)),
            "equal scores: the positive is a coin flip among 2, the bound is exactly 0",
        ),
        _Case(
            "a perfect critic",
            50.0 * np.eye(4),
            "each positive outscores its row by 50: the bound reaches its ceiling log 4",
            _known_values(50.0 * np.eye(4)),
        ),
        *_cases_extremes(F4),
        _Case(
            "nested lists",
            F3.tolist(),
            "a list of lists instead of an array (convert with np.asarray)",
            _known_values(F3),
        ),
        _Case(
            "scores unchanged",
            F3 + 1.0,
            "the function must not modify the caller's array in place",
            _known_values(F3 + 1.0),
            check_unchanged=True,
        ),
    ]


def _cases_extremes(F4: np.ndarray) -> list[_Case]:
    """A batch worse than chance, rows far apart, and a positive far below its row."""
    return [
        _Case(
            "worse than chance",
            F4,
            "positives scored 2 below the rest: the batch's value is negative",
            _known_values(F4),
        ),
        _Case(
            "rows far apart",
            _ROWS_FAR_APART,
            "row maxima 800 apart, every score below 709: each row needs its own maximum",
            _known_values(_ROWS_FAR_APART),
            nonfinite_hint=_HINTS["global max"],
        ),
        _Case(
            "positive far below",
            _POSITIVE_FAR_BELOW,
            "a positive 800 below its row's maximum: its probability underflows to 0",
            _known_values(_POSITIVE_FAR_BELOW),
            nonfinite_hint=_HINTS["log of softmax"],
        ),
    ]


# Row maxima 400 and -400: shifting every row by the batch's largest score (400) leaves
# e^-800 = 0 in every entry of the second row. Every score is below 709 in size, so a
# plain exp neither overflows nor underflows here.
_ROWS_FAR_APART = np.array([[400.0, 10.0, 0.0], [-420.0, -400.0, -410.0], [1.0, 0.0, 2.0]])
# The first positive scores -400 against a negative's 400: its probability, e^-800, is 0
# in float64 (the smallest positive float64 is about e^-745).
_POSITIVE_FAR_BELOW = np.array([[-400.0, 400.0, 0.0], [1.0, 2.0, 0.0], [0.0, 1.0, 3.0]])


def _copy(scores):
    return scores.copy() if isinstance(scores, np.ndarray) else [list(r) for r in scores]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_RTOL, abs_tol=_ATOL)


def _run_case(fn: Callable, case: _Case) -> tuple[bool, str]:
    """Run one case; return (passed, message). Never raises (NotImplementedError aside)."""
    scores = _copy(case.scores)
    with np.errstate(all="ignore"):
        try:
            out = fn(scores)
        except NotImplementedError:
            raise
        except Exception as exc:  # a reader's error is reported, never re-raised
            return False, f"raised {type(exc).__name__}: {exc} ({case.purpose})"
    expected = case.expected
    if isinstance(out, np.ndarray) and out.size != 1:
        return False, f"returned an array of shape {out.shape}: {_HINTS['rows']}"
    try:
        got = float(np.asarray(out, dtype=np.float64).reshape(()))
    except (TypeError, ValueError):
        return False, f"returned {type(out).__name__} {out!r}, not a number"
    if not math.isfinite(got):
        hint = case.nonfinite_hint or case.purpose
        return False, f"expected {expected:.6f}, got {got}: {hint}"
    if not _close(got, expected):
        for value, hint in case.known:
            if _close(got, value):
                return False, f"expected {expected:.6f}, got {got + 0.0:.6f}: {hint}"
        return False, f"expected {expected:.6f}, got {got + 0.0:.6f} ({case.purpose})"
    if case.check_unchanged and not np.array_equal(np.asarray(scores), np.asarray(case.scores)):
        return False, "the value is right but the scores were modified in place"
    return True, f"{got + 0.0:.6f}"


def check_infonce_bound(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``my_infonce_bound(scores)`` on ten batches.

    The reference is :func:`infonce_bound` of the library on the same batch: the softmax over
    the candidates of each row, the positive kept in its own denominator, the mean over rows
    plus :math:`\log K`, in nats. A value passes within 1e-6 relative or 1e-6 absolute, so
    careful float32 arithmetic (each row shifted by its own maximum) passes too; every usual
    mistake lands far outside.

    ========================  ===================================================
    case                      catches
    ========================  ===================================================
    a 5 x 5 batch             softmax over the wrong axis; a symmetric average of
                              both axes; log K missing; the loss or the negated
                              bound returned; a sum instead of a mean; the
                              positive left out (leave-one-out, with log(K - 1)
                              or with log K); log(K - 1) or log(K + 1); bits
                              instead of nats; the mean over K - 1 rows, or the
                              sum divided by F.size; one value per row
    large scores              no max-subtraction (exp overflows)
    large, unsaturated        scores near 2048 that differ by a few units: no
                              max-subtraction, scores clipped (to 500, say),
                              or log K returned for large scores
    an uninformative critic   equal scores must give exactly 0
    a perfect critic          the ceiling log K
    worse than chance         a negative value clipped at 0, or made positive
                              (abs)
    rows far apart            one maximum for the whole batch (a row 800 below
                              it underflows to 0)
    positive far below        the log of a softmax probability (a positive 800
                              below its row's maximum has probability 0), or
                              an epsilon inside that log
    nested lists              code that needs a NumPy array
    scores unchanged          in-place changes to the caller's array
    ========================  ===================================================

    A wrong value that matches a usual mistake on that batch is named (where two mistakes
    give the same value, neither is named there); an infinite or NaN value gets the hint
    of the batch built for it.

    Parameters
    ----------
    fn : callable
        The reader's function, called as ``fn(scores)`` with one ``(K, K)`` batch.
    verbose : bool, default True
        Print one line per case, PASS or FAIL with the likely mistake.

    Returns
    -------
    bool
        True when every case passes; False otherwise, and False (after printing "not
        attempted yet") when ``fn`` raises NotImplementedError.

    Raises
    ------
    TypeError
        If ``fn`` is not callable (the reader's own errors are reported, not raised).

    Examples
    --------
    >>> import numpy as np
    >>> from infonce_lib import infonce_bound
    >>> check_infonce_bound(lambda F: infonce_bound(np.asarray(F)[None])[0], verbose=False)
    True
    >>> check_infonce_bound(infonce_bound_mistakes()["returns the loss"])  # doctest: +ELLIPSIS
    FAIL  a 5 x 5 batch: expected 0.853569, got 0.755869: this is the InfoNCE loss,
          minus the mean log-probability; the bound is log K minus the loss
    ...
    10 of 10 cases fail; each FAIL line says what went wrong.
    False
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable (your my_infonce_bound); got {type(fn).__name__}")
    outcomes = ((case.name, *_run_case(fn, case)) for case in _cases())
    return plain_report(outcomes, verbose=verbose)


# ---------------------------------------------------------------- the usual mistakes


def _lp(F, axis=1):
    F = np.asarray(F, dtype=np.float64)
    return F, np.diag(F) - logsumexp(F, axis=axis)


def _wrong_axis(scores):
    F, lp = _lp(scores, axis=0)
    return math.log(len(F)) + float(lp.mean())


def _no_log_k(scores):
    return float(_lp(scores)[1].mean())


def _returns_loss(scores):
    return -float(_lp(scores)[1].mean())


def _sign_flipped(scores):
    F, lp = _lp(scores)
    return -(math.log(len(F)) + float(lp.mean()))


def _sums_rows(scores):
    F, lp = _lp(scores)
    return math.log(len(F)) + float(lp.sum())


def _leave_one_out(scores):
    return _loo_value(np.asarray(scores, dtype=np.float64))


def _log_k_minus_1(scores):
    F, lp = _lp(scores)
    return math.log(len(F) - 1) + float(lp.mean())


def _bits(scores):
    F, lp = _lp(scores)
    return (math.log(len(F)) + float(lp.mean())) / math.log(2.0)


def _no_max_subtraction(scores):
    F = np.asarray(scores, dtype=np.float64)
    E = np.exp(F)  # overflows once a score exceeds about 709.78
    return math.log(len(F)) + float(np.mean(np.log(np.diag(E) / E.sum(axis=1))))


def _per_row(scores):
    F, lp = _lp(scores)
    return math.log(len(F)) + lp


def _needs_array(scores):
    K = scores.shape[0]  # a list has no .shape
    return math.log(K) + float(_lp(scores)[1].mean())


def _modifies_input(scores):
    F = np.asarray(scores, dtype=np.float64)
    F -= F.max(axis=1, keepdims=True)  # changes the caller's float64 array
    return math.log(len(F)) + float(np.mean(np.diag(F) - np.log(np.exp(F).sum(axis=1))))


def _clipped(scores):
    F, lp = _lp(scores)
    return max(0.0, math.log(len(F)) + float(lp.mean()))  # "a bound on I is never negative"


def _log_of_softmax(scores):
    F = np.asarray(scores, dtype=np.float64)
    E = np.exp(F - F.max(axis=1, keepdims=True))  # no overflow ...
    P = E / E.sum(axis=1, keepdims=True)
    return math.log(len(F)) + float(np.mean(np.log(np.diag(P))))  # ... but p_ii may be 0


def _global_max(scores):
    F = np.asarray(scores, dtype=np.float64)
    m = F.max()  # the batch's largest score, not each row's
    lse = m + np.log(np.exp(F - m).sum(axis=1))
    return math.log(len(F)) + float(np.mean(np.diag(F) - lse))


def _leave_one_out_log_k(scores):
    F = np.asarray(scores, dtype=np.float64)
    return _loo_value(F) - math.log(len(F) - 1) + math.log(len(F))


def _symmetric(scores):
    F, rows = _lp(scores, axis=1)
    columns = _lp(scores, axis=0)[1]
    return math.log(len(F)) + float((rows + columns).mean()) / 2


def infonce_bound_mistakes() -> dict[str, Callable]:
    r"""Seventeen wrong ``my_infonce_bound`` functions, one per usual mistake.

    Each takes one ``(K, K)`` score matrix and is right except for one thing: the softmax
    over the wrong axis, no :math:`\log K`, the loss returned, the sign flipped, a sum over
    rows, the positive left out of its denominator (the leave-one-out bound), :math:`\log
    (K-1)`, bits, no max-subtraction, one value per row, ``.shape`` on a list, an in-place
    change of the caller's array, the value clipped at 0, the log of a softmax probability
    (which underflows to 0 for a positive far below its row's maximum), one maximum for
    the whole batch, the positive left out with :math:`\log K` added, and the mean of the
    softmax along rows and down columns (a symmetric bound).

    Returns
    -------
    dict of str to callable
        Name of the mistake to the function that makes it.

    Examples
    --------
    >>> import numpy as np
    >>> wrong = infonce_bound_mistakes()["returns the loss"]
    >>> round(wrong(np.zeros((2, 2))), 6)  # the loss of a coin flip is log 2
    0.693147
    """
    return {
        "softmax over the wrong axis": _wrong_axis,
        "no log K": _no_log_k,
        "returns the loss": _returns_loss,
        "sign flipped": _sign_flipped,
        "sums the rows": _sums_rows,
        "positive left out": _leave_one_out,
        "log(K - 1)": _log_k_minus_1,
        "in bits": _bits,
        "no max-subtraction": _no_max_subtraction,
        "one value per row": _per_row,
        "needs an array": _needs_array,
        "modifies its input": _modifies_input,
        "clipped at 0": _clipped,
        "log of the softmax": _log_of_softmax,
        "global maximum": _global_max,
        "positive left out, log K": _leave_one_out_log_k,
        "symmetric": _symmetric,
    }
