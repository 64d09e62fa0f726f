r"""Checkers for the book's exercises, and the typical mistakes they are built to catch.

:func:`check_info_nce` runs a reader's own InfoNCE implementation on a handful of cases,
each designed so that one common mistake gives a visibly wrong answer, and says which case
failed, what was expected and, when the wrong answer matches a known mistake, what the
mistake probably is. :func:`typical_mistakes` returns those mistakes as small functions, so
the checker can be tested against them and the book can show what they do.
"""

from __future__ import annotations

import math
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..core import contrastive_log_probs, contrastive_loss_from_logits
from ..losses import info_nce_loss

__all__ = ["check_info_nce", "typical_mistakes"]

_RTOL = 1e-9
_ATOL = 1e-12


@dataclass
class _Case:
    name: str
    args: tuple
    kwargs: dict
    expected: float
    purpose: str
    # value a known mistake would give -> hint naming the mistake
    known: list[tuple[float, str]] = field(default_factory=list)
    check_unchanged: bool = False
    near_hint: str = ""  # shown when the value is right to 1e-5 but not to 1e-9


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_RTOL, abs_tol=_ATOL)


_HINT_OVERFLOW = (
    "exp overflowed: subtract each row's largest logit before exponentiating "
    "(log-sum-exp: log sum_j e^l_ij = m_i + log sum_j e^(l_ij - m_i))"
)
_HINT_AXIS = (
    "this is the softmax over the wrong axis: anchor i is row i of Z1, and its softmax "
    "runs over its candidates, the rows of Z2 (axis 1 of Z1 @ Z2.T)"
)
_HINT_SUM = "this is the sum over anchors; the loss is their mean (divide by N)"
_HINT_COLUMN0 = (
    "this takes column 0 as every anchor's positive; the positive of row i is column i "
    "(the diagonal)"
)
_HINT_LOO = (
    "this leaves the positive out of its own denominator; InfoNCE keeps it in "
    "(the softmax runs over all N candidates)"
)
_HINT_ROWS = "return one number, the mean loss, not one loss per anchor"


def _cases() -> list[_Case]:
    rng = np.random.default_rng(20261129)
    cases = []

    # 1. the worked example of the chapter
    v = [0.9, 0.3, 0.1, -0.2]
    S = np.array([[v[(j - i) % 4] for j in range(4)] for i in range(4)])
    Z1, Z2 = np.eye(4), S.T.copy()
    exp1 = info_nce_loss(Z1, Z2, 0.5)
    cases.append(
        _Case(
            "worked example",
            (Z1, Z2),
            {"temperature": 0.5},
            exp1,
            "similarities 0.9 | 0.3, 0.1, -0.2 at temperature 0.5 (about 0.4786)",
            [(4 * exp1, _HINT_SUM)],
        )
    )

    # 2. an asymmetric random batch: rows and columns give different answers
    Z1 = rng.normal(size=(6, 5))
    Z2 = rng.normal(size=(6, 5)) + 0.5 * Z1
    L = Z1 @ Z2.T / 0.5
    exp2 = info_nce_loss(Z1, Z2, 0.5)
    cases.append(
        _Case(
            "random batch",
            (Z1, Z2),
            {"temperature": 0.5},
            exp2,
            "N = 6, D = 5, temperature 0.5: catches the axis, the mean and the positives",
            [
                (contrastive_loss_from_logits(L, anchors="columns"), _HINT_AXIS),
                (6 * exp2, _HINT_SUM),
                (contrastive_loss_from_logits(L, np.zeros(6, dtype=int)), _HINT_COLUMN0),
                (-float(contrastive_log_probs(L, include_positive=False).mean()), _HINT_LOO),
            ],
        )
    )

    # 3. large logits: a naive exp overflows
    Z1 = rng.normal(size=(5, 4)) * 3
    Z2 = 0.5 * Z1 + 2 * rng.normal(size=(5, 4))
    cases.append(
        _Case(
            "large logits",
            (Z1, Z2),
            {"temperature": 0.01},
            info_nce_loss(Z1, Z2, 0.01),
            "temperature 0.01, logits in the thousands: e^1000 overflows float64",
        )
    )

    # 4. N = 1: one anchor, one candidate, loss exactly 0
    cases.append(
        _Case(
            "N = 1",
            (np.array([[1.0, 2.0]]), np.array([[3.0, -4.0]])),
            {"temperature": 0.1},
            0.0,
            "a batch of one pair: the positive is the only candidate, the loss is 0",
        )
    )

    # 5. float32 input: computing in float32 loses about 7 digits
    Z1 = rng.normal(size=(16, 32)).astype(np.float32)
    Z2 = (0.3 * Z1 + rng.normal(size=(16, 32))).astype(np.float32)
    cases.append(
        _Case(
            "float32 input",
            (Z1, Z2),
            {"temperature": 0.05},
            info_nce_loss(Z1, Z2, 0.05),
            "float32 arrays: the loss should be computed in float64",
            near_hint=(
                "right to about 7 digits only: the arithmetic ran in float32; convert the "
                "inputs with np.asarray(Z, dtype=np.float64) first"
            ),
        )
    )

    # 6. nested lists
    Z1l = [[1.0, 0.0, 2.0], [0.5, -1.0, 0.0], [0.0, 1.0, 1.0]]
    Z2l = [[1.0, 0.5, 1.5], [0.0, -1.0, 0.5], [0.5, 1.0, 0.0]]
    cases.append(
        _Case(
            "nested lists",
            (Z1l, Z2l),
            {"temperature": 0.2},
            info_nce_loss(Z1l, Z2l, 0.2),
            "Python lists instead of arrays (convert with np.asarray)",
        )
    )

    # 7. the inputs must come back unchanged
    Z1 = rng.normal(size=(4, 3))
    Z2 = rng.normal(size=(4, 3))
    cases.append(
        _Case(
            "inputs unchanged",
            (Z1, Z2),
            {"temperature": 0.3},
            info_nce_loss(Z1, Z2, 0.3),
            "the function must not modify Z1 or Z2 in place",
            check_unchanged=True,
        )
    )

    # 8. the default temperature
    Z1 = rng.normal(size=(4, 3))
    Z2 = Z1 + rng.normal(size=(4, 3))
    cases.append(
        _Case(
            "default temperature",
            (Z1, Z2),
            {},
            info_nce_loss(Z1, Z2, 0.1),
            "called without a temperature, it should use 0.1",
        )
    )
    return cases


def _copy_args(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else [list(r) for r in a] for a in args)


def _run_case(fn: Callable, case: _Case) -> tuple[bool, str]:
    """Run one case; return (passed, message). Never raises."""
    args = _copy_args(case.args)
    originals = _copy_args(case.args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args, **case.kwargs)
        except Exception as exc:  # a reader's error is reported, never re-raised
            return False, f"raised {type(exc).__name__}: {exc}"
    warned = f" (NumPy warned: {caught[0].message})" if caught else ""
    if isinstance(out, np.ndarray) and out.ndim > 0 and out.size != 1:
        return False, f"returned an array of shape {out.shape}; {_HINT_ROWS}{warned}"
    try:
        got = float(np.asarray(out).reshape(()))
    except (TypeError, ValueError):
        return False, f"returned {type(out).__name__} {out!r}, not a number{warned}"
    if not math.isfinite(got):
        hint = _HINT_OVERFLOW if case.name == "large logits" else "the loss must be finite"
        return False, f"expected {case.expected:.6f}, got {got}: {hint}{warned}"
    if not _close(got, case.expected):
        for value, hint in case.known:
            if _close(got, value):
                return False, f"expected {case.expected:.6f}, got {got:.6f}: {hint}"
        if case.near_hint and math.isclose(got, case.expected, rel_tol=1e-5):
            return False, f"expected {case.expected:.10f}, got {got:.10f}: {case.near_hint}"
        return False, f"expected {case.expected:.6f}, got {got:.6f}{warned}"
    if case.check_unchanged:
        for name, a, b in zip(("Z1", "Z2"), args, originals, strict=True):
            if not np.array_equal(np.asarray(a), np.asarray(b)):
                return False, f"the value is right but {name} was modified in place"
    return True, f"{got + 0.0:.6f}"


def check_info_nce(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``info_nce_loss(Z1, Z2, temperature=0.1)`` against the library.

    The exercise of chapter 2 asks for a function that takes two ``(N, D)`` arrays (or
    nested lists), forms the logits :math:`\ell = Z_1 Z_2^\top / \tau`, and returns the
    mean over rows of :math:`-\log\big(e^{\ell_{ii}} / \sum_j e^{\ell_{ij}}\big)` as a
    float (van den Oord, Li & Vinyals, 2018, eq. 4). This runs ``fn`` on eight cases,
    each built to expose one usual mistake:

    ============================  =============================================
    case                          catches
    ============================  =============================================
    worked example                a wrong formula; the sum instead of the mean
    random batch (asymmetric)     softmax over the wrong axis; sum instead of
                                  mean; positives off the diagonal; the positive
                                  left out of its own denominator
    large logits (τ = 0.01)       no max-subtraction (exp overflows to inf)
    N = 1                         code that squeezes or divides by N - 1
    float32 input                 computing in float32 instead of float64
    nested lists                  code that needs NumPy arrays
    inputs unchanged              in-place changes to the caller's arrays
    default temperature           a missing or different default
    ============================  =============================================

    A value passes when it is within 1e-9 relative (1e-12 absolute) of
    :func:`~infonce_lib.losses.info_nce_loss`. An exception raised by ``fn`` is caught and
    reported, never re-raised; NumPy warnings are recorded and shown with the failure.
    Printed lines are wrapped at 80 characters.

    Parameters
    ----------
    fn : callable
        The reader's implementation, called as ``fn(Z1, Z2, temperature=t)`` (and as
        ``fn(Z1, Z2)`` for the default).
    verbose : bool, default True
        Print one line per case (PASS or FAIL, with what was expected and a hint).

    Returns
    -------
    bool
        True when every case passes.

    Raises
    ------
    TypeError
        If ``fn`` is not callable (nothing else: the reader's errors are reported).

    Examples
    --------
    >>> from infonce_lib import info_nce_loss
    >>> check_info_nce(info_nce_loss, verbose=False)
    True
    >>> check_info_nce(typical_mistakes()["sum instead of mean"])  # doctest: +ELLIPSIS
    FAIL  worked example: expected 0.478650, got 1.914599: this is the sum over
          anchors; the loss is their mean (divide by N)
    ...
    False
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable implementation of InfoNCE; got {type(fn).__name__}")
    all_passed = True
    for case in _cases():
        passed, message = _run_case(fn, case)
        all_passed &= passed
        if verbose:
            line = f"{'PASS' if passed else 'FAIL'}  {case.name}: {message}"
            print(textwrap.fill(line, width=80, subsequent_indent="      "))
    if verbose:
        print("All cases pass." if all_passed else "Some cases fail: see the hints above.")
    return all_passed


# ---------------------------------------------------------------- the usual mistakes


def _no_max_subtraction(Z1, Z2, temperature=0.1):
    A = np.asarray(Z1, dtype=float)
    B = np.asarray(Z2, dtype=float)
    E = np.exp(A @ B.T / temperature)  # overflows once a logit exceeds ~709.78
    return float(-np.mean(np.log(np.diag(E) / E.sum(axis=1))))


def _stable_rows(L, axis=1):
    m = L.max(axis=axis, keepdims=True)
    return (m + np.log(np.exp(L - m).sum(axis=axis, keepdims=True))).ravel()


def _wrong_axis(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.mean(_stable_rows(L, axis=0) - np.diag(L)))


def _sum_not_mean(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.sum(_stable_rows(L) - np.diag(L)))


def _positives_in_column_0(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.mean(_stable_rows(L) - L[:, 0]))


def _positive_left_out(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    off = L.copy()
    np.fill_diagonal(off, -np.inf)
    return float(np.mean(_stable_rows(off) - np.diag(L)))


def _squeezes(Z1, Z2, temperature=0.1):
    A = np.squeeze(np.asarray(Z1, dtype=float))
    B = np.squeeze(np.asarray(Z2, dtype=float))
    L = A @ B.T / temperature
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _float32(Z1, Z2, temperature=0.1):
    A, B = np.asarray(Z1), np.asarray(Z2)
    L = A @ B.T / np.asarray(temperature, dtype=A.dtype)
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _needs_arrays(Z1, Z2, temperature=0.1):
    L = Z1 @ Z2.T / temperature
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _modifies_inputs(Z1, Z2, temperature=0.1):
    A = np.asarray(Z1, dtype=float)
    A /= temperature  # changes the caller's float64 array
    L = A @ np.asarray(Z2, dtype=float).T
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _no_default(Z1, Z2, temperature):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def typical_mistakes() -> dict[str, Callable]:
    r"""Ten deliberately wrong InfoNCE implementations, one per usual mistake.

    Each is a short NumPy function with the exercise's signature
    ``(Z1, Z2, temperature=0.1) -> float`` that is right except for one thing:

    - ``"no max-subtraction"``: :math:`\log \sum_j e^{\ell_{ij}}` computed as written,
      which overflows once a logit exceeds about 709;
    - ``"softmax over the wrong axis"``: normalises over anchors (axis 0);
    - ``"sum instead of mean"``: sums the row losses;
    - ``"positives in column 0"``: takes column 0 as every anchor's positive;
    - ``"positive left out of the denominator"``: the leave-one-out form (Poole et al.,
      2019, eq. 13), not InfoNCE;
    - ``"squeezes its input"``: ``np.squeeze`` turns an ``(1, D)`` batch into a vector;
    - ``"computes in float32"``: keeps the input's dtype;
    - ``"needs NumPy arrays"``: calls ``.T`` on its inputs, so lists fail;
    - ``"modifies its inputs"``: divides the caller's ``Z1`` by τ in place;
    - ``"no default temperature"``: ``temperature`` is required.

    Returns
    -------
    dict of str to callable
        Name of the mistake to the function that makes it.

    Examples
    --------
    >>> import numpy as np
    >>> naive = typical_mistakes()["no max-subtraction"]
    >>> Z = np.eye(2)
    >>> round(naive(Z, Z, temperature=1.0), 6) == round(info_nce_loss(Z, Z, 1.0), 6)
    True
    >>> with np.errstate(over="ignore", invalid="ignore"):
    ...     naive(Z, Z, temperature=1e-3)  # e^1000 is inf, and inf / inf is nan
    nan
    """
    return {
        "no max-subtraction": _no_max_subtraction,
        "softmax over the wrong axis": _wrong_axis,
        "sum instead of mean": _sum_not_mean,
        "positives in column 0": _positives_in_column_0,
        "positive left out of the denominator": _positive_left_out,
        "squeezes its input": _squeezes,
        "computes in float32": _float32,
        "needs NumPy arrays": _needs_arrays,
        "modifies its inputs": _modifies_inputs,
        "no default temperature": _no_default,
    }
