r"""The checker for the exercise of chapter 4: the NWJ bound from one batch of scores.

:func:`check_nwj_bound` runs a reader's ``my_nwj(F)`` on a few cases, each built so that a
usual mistake gives a visibly wrong answer, and names the mistake when the wrong answer
matches one; :func:`nwj_mistakes` returns those mistakes as small functions, so the
checker can be tested against them. A function that raises ``NotImplementedError`` (the
starter stub) is reported as not attempted, without failing.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable

import numpy as np

from .._validation import as_bool
from ..bounds import nwj_bound
from ._runner import call_reader

__all__ = ["check_nwj_bound", "nwj_mistakes"]


def _with_diagonal(F):
    F = np.asarray(F, dtype=float)
    return float(np.diag(F).mean() - np.exp(F - 1.0).mean())


def _no_e_inverse(F):
    F = np.asarray(F, dtype=float)
    off = ~np.eye(len(F), dtype=bool)
    return float(np.diag(F).mean() - np.exp(F[off]).mean())


def _log_mean_exp(F):
    F = np.asarray(F, dtype=float)
    off = ~np.eye(len(F), dtype=bool)
    return float(np.diag(F).mean() - np.log(np.exp(F[off]).mean()))


def _divides_by_k_squared(F):
    F = np.asarray(F, dtype=float)
    off = ~np.eye(len(F), dtype=bool)
    return float(np.diag(F).mean() - np.exp(F[off] - 1.0).sum() / F.size)


def _adds_the_marginal_term(F):
    F = np.asarray(F, dtype=float)
    off = ~np.eye(len(F), dtype=bool)
    return float(np.diag(F).mean() + np.exp(F[off] - 1.0).mean())


def _sums_the_positives(F):
    F = np.asarray(F, dtype=float)
    off = ~np.eye(len(F), dtype=bool)
    return float(np.trace(F) - np.exp(F[off] - 1.0).mean())


def _subtracts_e(F):
    F = np.asarray(F, dtype=float)
    off = ~np.eye(len(F), dtype=bool)
    return float(np.diag(F).mean() - np.exp(F[off] - math.e).mean())


def _negated(F):
    return -float(nwj_bound(np.asarray(F, dtype=float)[None])[0])


def _tuba_a_one(F):
    F = np.asarray(F, dtype=float)
    off = ~np.eye(len(F), dtype=bool)
    return float(1.0 + np.diag(F).mean() - np.exp(F[off]).mean())


def _exp_of_mean(F):
    F = np.asarray(F, dtype=float)
    off = ~np.eye(len(F), dtype=bool)
    return float(np.diag(F).mean() - np.exp(F[off].mean() - 1.0))


def _diagonal_over_k_k_minus_1(F):
    F = np.asarray(F, dtype=float)
    K = len(F)
    return float(np.diag(F).mean() - np.exp(F - 1.0).sum() / (K * (K - 1)))


def _overwrites_diagonal(F):
    K = len(F)
    joint = float(np.trace(F)) / K
    F[np.diag_indices(K)] = -np.inf  # changes the caller's array
    return joint - float(np.exp(F - 1.0).sum()) / (K * (K - 1))


def nwj_mistakes() -> dict[str, Callable]:
    """The usual mistakes in the NWJ bound of one batch, as functions of ``F`` (K, K).

    Returns
    -------
    dict of str to callable
        Name of the mistake to a function that makes it.

    Examples
    --------
    >>> sorted(nwj_mistakes())  # doctest: +NORMALIZE_WHITESPACE
    ['DV instead of NWJ', 'TUBA with a = 1', 'adds the marginal term',
     'diagonal in the marginal term', 'diagonal over K(K-1)', 'divides by K^2',
     'exp of the mean', 'forgets the 1/e', 'negated (a loss)', 'overwrites the input',
     'subtracts e, not 1', 'sums the positives']
    """
    return {
        "diagonal in the marginal term": _with_diagonal,
        "forgets the 1/e": _no_e_inverse,
        "DV instead of NWJ": _log_mean_exp,
        "divides by K^2": _divides_by_k_squared,
        "adds the marginal term": _adds_the_marginal_term,
        "sums the positives": _sums_the_positives,
        "subtracts e, not 1": _subtracts_e,
        "negated (a loss)": _negated,
        "TUBA with a = 1": _tuba_a_one,
        "exp of the mean": _exp_of_mean,
        "diagonal over K(K-1)": _diagonal_over_k_k_minus_1,
        "overwrites the input": _overwrites_diagonal,
    }


_HINTS = {
    "diagonal in the marginal term": (
        "the marginal term averages e^(F_ij - 1) over the K(K-1) off-diagonal pairs only: "
        "the diagonal holds the positives, samples of p(x, y), not of p(x)p(y)"
    ),
    "forgets the 1/e": "the marginal term carries a factor e^(-1): average e^(F_ij - 1)",
    "DV instead of NWJ": (
        "this subtracts log(mean e^F), the Donsker-Varadhan (MINE) estimate; NWJ subtracts "
        "e^(-1) times the mean itself, with no logarithm"
    ),
    "divides by K^2": "average the off-diagonal terms: divide their sum by K(K-1), not K^2",
    "adds the marginal term": (
        "the sign of the marginal term is flipped: NWJ subtracts the average of e^(F_ij - 1)"
    ),
    "sums the positives": (
        "the joint term is the mean of the K positive scores, trace(F) / K, not their sum"
    ),
    "negated (a loss)": (
        "this is minus the bound, the loss a trainer minimises; return the bound itself, "
        "mean positive score minus the marginal term"
    ),
    "TUBA with a = 1": (
        "this is TUBA with the baseline a = 1 (1 + mean F_ii - mean e^(F_ij)); NWJ is TUBA "
        "with a = e: no leading 1, and e^(F_ij - 1) in the marginal term"
    ),
    "exp of the mean": (
        "this takes e to the mean score; the marginal term is the mean of e^(F_ij - 1), "
        "exponentiate first, then average"
    ),
    "diagonal over K(K-1)": (
        "the sum of e^(F_ij - 1) includes the diagonal but is divided by K(K-1): leave "
        "the positives out of the sum, it runs over the off-diagonal pairs i != j"
    ),
    "subtracts e, not 1": (
        "the factor e^(-1) is exp(-1): subtract 1 inside the exponent, e^(F_ij - 1), not e"
    ),
}


def _cases() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(4)
    return [
        ("worked example", np.array([[2.0, 0.0, -1.0], [0.5, 1.0, 0.0], [0.0, -0.5, 3.0]])),
        ("random 6 x 6 batch", rng.normal(scale=2.0, size=(6, 6)) + 3.0 * np.eye(6)),
        ("K = 2", np.array([[1.5, -0.3], [0.2, 0.7]])),
    ]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _float32_tolerance(F: np.ndarray) -> float:
    """What a careful float32 computation of the bound can be off by: about 100 float32
    ulps of the larger of its two terms (and of 1)."""
    off = ~np.eye(len(F), dtype=bool)
    scale = abs(np.trace(F)) / len(F) + float(np.exp(F[off] - 1.0).mean()) + 1.0
    return 100 * float(np.finfo(np.float32).eps) * scale


def _as_value(out, K: int) -> tuple[float | None, str]:
    """The reader's output as a float, or None and what is wrong with it."""
    arr = np.asarray(out)
    if arr.dtype.kind not in "iuf" or arr.dtype == bool:
        return None, f"returned {type(out).__name__} {out!r}; return one number, a float"
    if arr.size != 1:
        rows = " (one value per row?)" if arr.shape == (K,) else ""
        return None, (
            f"returned an array of shape {arr.shape}{rows}; return one number for the "
            "batch: the mean positive score minus the marginal term"
        )
    got = float(arr.reshape(()))
    if not math.isfinite(got):
        return None, f"returned {got}; the NWJ bound of these finite scores is finite"
    return got, ""


def _judge(fn: Callable, F: np.ndarray) -> tuple[bool, str]:
    """Run ``fn`` on a copy of one case: (passed, what to print after the case's name).
    NotImplementedError propagates (the starter stub)."""
    expected = float(nwj_bound(F[None])[0])
    arg = F.copy()
    out, _, failure = call_reader(fn, (arg,), {})
    if failure is not None:
        return False, failure[1]
    if not np.array_equal(arg, F):
        return False, "modified the input F in place; work on a copy (F.copy()) or a mask"
    got, problem = _as_value(out, len(F))
    if got is None:
        return False, problem
    if _close(got, expected):
        return True, f"{got:.6f}"
    if abs(got - expected) <= _float32_tolerance(F):
        return True, (
            f"{got:.6f} (agrees to float32 precision, {got - expected:+.1e} from the "
            "float64 value: right for a float32 computation)"
        )
    message = f"expected {expected:.6f}, got {got:.6f}"
    for mistake, wrong in nwj_mistakes().items():  # named at float32 precision too
        if mistake in _HINTS and abs(got - wrong(F.copy())) <= _float32_tolerance(F):
            return False, f"{message}: {_HINTS[mistake]}"
    return False, message


def check_nwj_bound(fn: Callable, *, verbose: bool = True) -> bool | None:
    r"""Check a reader's ``fn(F)``: the NWJ bound of one batch of critic scores.

    The exercise asks for a function of one ``(K, K)`` array ``F[i, j] = f(x_j, y_i)``
    returning, as a float,

    .. math::

        \frac1K \sum_i F_{ii} - \frac{e^{-1}}{K(K-1)} \sum_{i \ne j} e^{F_{ij}}

    (Nguyen, Wainwright & Jordan, 2010; Poole et al., 2019), without modifying ``F``. Each
    case is compared with :func:`~infonce_lib.nwj_bound`: an answer within a relative
    1e-9 passes, and so does one within what a float32 computation can be off by (100
    float32 ulps of the larger term), with a note saying so. A wrong value that matches a
    mistake of :func:`nwj_mistakes` (at either precision) is named with a hint; an array,
    a non-number, inf or NaN is refused with its own hint.

    Parameters
    ----------
    fn : callable
        The reader's implementation.
    verbose : bool, default True
        Print one line per case.

    Returns
    -------
    bool or None
        True when every case passes, False if one fails, None if ``fn`` raises
        ``NotImplementedError`` (not attempted yet).

    Raises
    ------
    TypeError
        If ``fn`` is not callable (the reader's own errors are reported, not raised).

    Examples
    --------
    >>> check_nwj_bound(lambda F: float(nwj_bound(np.asarray(F)[None])[0]), verbose=False)
    True
    >>> check_nwj_bound(nwj_mistakes()["forgets the 1/e"])  # doctest: +ELLIPSIS
    FAIL  worked example: expected ..., got ...: the marginal term carries a factor e^(-1):
          average e^(F_ij - 1)
    ...
    False
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable; got {type(fn).__name__}")
    say = print if as_bool(verbose, "verbose") else (lambda *_: None)
    ok = True
    for name, F in _cases():
        try:
            passed, text = _judge(fn, F)
        except NotImplementedError:
            say("not attempted: my function raises NotImplementedError; fill in its body")
            return None
        ok &= passed
        line = f"PASS  {name}: {text}" if passed else f"FAIL  {name}: {text}"
        say(textwrap.fill(line, width=88, subsequent_indent="      "))
    say("All cases pass." if ok else "Some cases fail: see the hints above.")
    return ok
