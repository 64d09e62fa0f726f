r"""Checkers for the book's exercises, and the typical mistakes they are built to catch.

:func:`check_info_nce` runs a reader's own InfoNCE implementation on a handful of cases,
each designed so that common mistakes give visibly different wrong answers, and says which
case failed, what was expected and, when the wrong answer matches a known mistake, what the
mistake probably is. :func:`typical_mistakes` returns those mistakes as small functions, so
the checker can be tested against them and the book can show what they do.

Checkers of other chapters' exercises live in the submodules of this package (for example
``infonce_lib.exercises.nce`` for chapter 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..core import contrastive_log_probs, contrastive_loss_from_logits
from ..losses import info_nce_loss
from ._runner import call_reader, hinted_report

__all__ = ["check_info_nce", "typical_mistakes"]

_RTOL = 1e-9
_ATOL = 1e-12
# A value this close (relative) but not within _RTOL is right but for rounding: float32
# arithmetic (about 7 significant digits) lands here, a wrong formula does not.
_NEAR_RTOL = 1e-5


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
    raise_hint: str = ""  # shown when the function raises on this case


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_RTOL, abs_tol=_ATOL)


def _digits(expected: float, got: float) -> str:
    """``expected X, got Y`` with as many significant digits as it takes to tell them apart."""
    for k in range(6, 18):
        a, b = f"{expected:.{k}g}", f"{got:.{k}g}"
        if a != b:
            break
    return f"expected {a}, got {b}"


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
_HINT_TAU_TWICE = (
    "this is the loss of Z1 @ Z2.T / tau**2: the temperature is applied twice "
    "(divide the logits by tau once)"
)
_HINT_TAU_FORGOTTEN = "this is the loss of Z1 @ Z2.T with no temperature: divide the logits by tau"
_HINT_TAU_MULTIPLIED = (
    "this is the loss of Z1 @ Z2.T * tau: the logits are multiplied by the temperature; "
    "divide them by it"
)
_HINT_MINUS = (
    "this is minus the loss: the mean log-probability of the positives; the loss is its "
    "negative, -mean(log p_ii), which is never below 0"
)
_HINT_NEGATED = (
    "this is the loss of the negated logits, -Z1 @ Z2.T / tau: a sign is flipped inside "
    "the softmax (a similarity, not a distance: larger logits mean more alike)"
)
_HINT_FLOAT32 = (
    "right to about 7 significant digits only: the arithmetic ran in float32; convert "
    "the inputs with np.asarray(Z, dtype=np.float64) before multiplying"
)
_HINT_ROWS = "return one number, the mean loss, not one loss per anchor"


def _loss(logits: np.ndarray) -> float:
    return contrastive_loss_from_logits(logits)


def _known_mistakes(Z1, Z2, tau: float) -> list[tuple[float, str]]:
    """The value each known formula mistake gives on this case, with its hint.

    Mistakes that coincide with the right answer on a case (the sum when N = 1, say) are
    left out; the tests check that the remaining values are distinct from each other and
    from the right answer, so a hint never names the wrong mistake.
    """
    A = np.asarray(Z1, dtype=np.float64)
    B = np.asarray(Z2, dtype=np.float64)
    S = A @ B.T
    L = S / tau
    n = L.shape[0]
    loss = _loss(L)
    known = [
        (_loss(S / tau**2), _HINT_TAU_TWICE),
        (_loss(S), _HINT_TAU_FORGOTTEN),
        (_loss(S * tau), _HINT_TAU_MULTIPLIED),
        (_loss(-L), _HINT_NEGATED),
        (contrastive_loss_from_logits(L, anchors="columns"), _HINT_AXIS),
    ]
    if n > 1:
        known += [
            (-loss, _HINT_MINUS),
            (n * loss, _HINT_SUM),
            (contrastive_loss_from_logits(L, np.zeros(n, dtype=int)), _HINT_COLUMN0),
            (-float(contrastive_log_probs(L, include_positive=False).mean()), _HINT_LOO),
        ]
    return [(v, h) for v, h in known if not _close(v, loss)]


def _case(name, Z1, Z2, tau, purpose, *, default=False, **extra) -> _Case:
    kwargs = {} if default else {"temperature": tau}
    known = _known_mistakes(Z1, Z2, tau)
    if default:  # a different default temperature, the usual ones
        for other in (1.0, 0.5, 0.07):
            value = _loss(np.asarray(Z1, float) @ np.asarray(Z2, float).T / other)
            hint = f"this is the loss at temperature {other}: the default should be 0.1"
            if other == 1.0:
                hint += " (or the temperature is not used at all)"
                known = [(v, h) for v, h in known if h != _HINT_TAU_FORGOTTEN]
            known.append((value, hint))
    return _Case(name, (Z1, Z2), kwargs, info_nce_loss(Z1, Z2, tau), purpose, known, **extra)


def _cases() -> list[_Case]:
    rng = np.random.default_rng(20261129)
    return _cases_values(rng) + _cases_inputs(rng)  # one generator, drawn in this order


def _cases_values(rng: np.random.Generator) -> list[_Case]:
    """Cases 1-4: values that tell the mistakes of the formula apart."""
    cases = []

    # 1. the worked example of the chapter
    v = [0.9, 0.3, 0.1, -0.2]
    S = np.array([[v[(j - i) % 4] for j in range(4)] for i in range(4)])
    cases.append(
        _case(
            "worked example",
            np.eye(4),
            S.T.copy(),
            0.5,
            "similarities 0.9 | 0.3, 0.1, -0.2 at temperature 0.5 (about 0.4786)",
        )
    )

    # 2. an asymmetric random batch: rows and columns give different answers
    Z1 = rng.normal(size=(6, 5))
    Z2 = rng.normal(size=(6, 5)) + 0.5 * Z1
    cases.append(
        _case(
            "random batch",
            Z1,
            Z2,
            0.5,
            "N = 6, D = 5, temperature 0.5: catches the axis, the mean, the positives, "
            "the temperature and the sign",
        )
    )

    # 3. large logits: a naive exp overflows
    Z1 = rng.normal(size=(5, 4)) * 3
    Z2 = 0.5 * Z1 + 2 * rng.normal(size=(5, 4))
    cases.append(
        _case(
            "large logits",
            Z1,
            Z2,
            0.01,
            "temperature 0.01, logits in the thousands: e^1000 overflows float64",
        )
    )

    # 4. N = 1: one anchor, one candidate, loss exactly 0
    cases.append(
        _case(
            "N = 1",
            np.array([[1.0, 2.0]]),
            np.array([[3.0, -4.0]]),
            0.1,
            "a batch of one pair: the positive is the only candidate, the loss is 0",
            raise_hint="a (1, D) batch must stay two-dimensional (no np.squeeze)",
        )
    )
    return cases


def _cases_inputs(rng: np.random.Generator) -> list[_Case]:
    """Cases 5-8: the inputs a loss must accept (float32, lists, unchanged inputs, defaults)."""
    cases = []
    # 5. float32 input: computing in float32 loses about 7 digits
    Z1 = rng.normal(size=(16, 32)).astype(np.float32)
    Z2 = (0.3 * Z1 + rng.normal(size=(16, 32))).astype(np.float32)
    cases.append(
        _case(
            "float32 input",
            Z1,
            Z2,
            0.05,
            "float32 arrays: the loss should be computed in float64",
        )
    )

    # 6. nested lists
    Z1l = [[1.0, 0.0, 2.0], [0.5, -1.0, 0.0], [0.0, 1.0, 1.0]]
    Z2l = [[1.0, 0.5, 1.5], [0.0, -1.0, 0.5], [0.5, 1.0, 0.0]]
    cases.append(
        _case(
            "nested lists",
            Z1l,
            Z2l,
            0.2,
            "Python lists instead of arrays (convert with np.asarray)",
            raise_hint="convert the inputs with np.asarray(Z, dtype=np.float64) first",
        )
    )

    # 7. the inputs must come back unchanged
    Z1 = rng.normal(size=(4, 3))
    Z2 = rng.normal(size=(4, 3))
    cases.append(
        _case(
            "inputs unchanged",
            Z1,
            Z2,
            0.3,
            "the function must not modify Z1 or Z2 in place",
            check_unchanged=True,
        )
    )

    # 8. the default temperature
    Z1 = rng.normal(size=(4, 3))
    Z2 = Z1 + rng.normal(size=(4, 3))
    cases.append(
        _case(
            "default temperature",
            Z1,
            Z2,
            0.1,
            "called without a temperature, it should use 0.1",
            default=True,
            raise_hint="give temperature a default: def my_info_nce(Z1, Z2, temperature=0.1)",
        )
    )
    return cases


def _copy_args(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else [list(r) for r in a] for a in args)


def _run_case(fn: Callable, case: _Case) -> tuple[bool, str, str]:
    """Run one case; return (passed, message, the hint in the message or "").

    Never raises, but for NotImplementedError, which the caller turns into "not attempted
    yet".
    """
    args = _copy_args(case.args)
    originals = _copy_args(case.args)
    n = len(case.args[0])
    out, warned, failure = call_reader(fn, args, case.kwargs, case.raise_hint)
    if failure is not None:
        return failure
    if isinstance(out, np.ndarray) and out.ndim > 0 and out.size != 1:
        if out.shape == (n,):
            mean = float(np.mean(out)) if np.issubdtype(out.dtype, np.number) else math.nan
            right = " (their mean is right)" if _close(mean, case.expected) else ""
            return False, f"returned {n} numbers{right}; {_HINT_ROWS}{warned}", _HINT_ROWS
        return False, f"returned an array of shape {out.shape}, not one number{warned}", ""
    try:
        got = float(np.asarray(out).reshape(()))
    except (TypeError, ValueError):
        return False, f"returned {type(out).__name__} {out!r}, not a number{warned}", ""
    if not math.isfinite(got):
        if case.name == "large logits":
            message = f"expected {case.expected:.6g}, got {got}: {_HINT_OVERFLOW}{warned}"
            return False, message, _HINT_OVERFLOW
        return (
            False,
            f"expected {case.expected:.6g}, got {got}: the loss must be finite{warned}",
            "",
        )
    if not _close(got, case.expected):
        for value, hint in case.known:
            if _close(got, value):
                return False, f"{_digits(case.expected, got)}: {hint}", hint
        if math.isclose(got, case.expected, rel_tol=_NEAR_RTOL):
            return False, f"{_digits(case.expected, got)}: {_HINT_FLOAT32}", _HINT_FLOAT32
        return False, f"{_digits(case.expected, got)}{warned}", ""
    if case.check_unchanged:
        for name, a, b in zip(("Z1", "Z2"), args, originals, strict=True):
            if not np.array_equal(np.asarray(a), np.asarray(b)):
                return False, f"the value is right but {name} was modified in place", "in place"
    return True, f"{got + 0.0:.6f}", ""


def check_info_nce(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``info_nce_loss(Z1, Z2, temperature=0.1)`` against the library.

    The exercise of chapter 2 asks for a function that takes two ``(N, D)`` arrays (or
    nested lists), forms the logits :math:`\ell = Z_1 Z_2^\top / \tau`, and returns the
    mean over rows of :math:`-\log\big(e^{\ell_{ii}} / \sum_j e^{\ell_{ij}}\big)` as a
    float (van den Oord, Li & Vinyals, 2018, eq. 4). This runs ``fn`` on eight cases,
    each built to expose usual mistakes:

    ============================  =============================================
    case                          catches
    ============================  =============================================
    worked example, random batch  a wrong formula: the temperature applied twice
                                  (:math:`\ell / \tau`), forgotten or multiplied;
                                  the sign flipped (minus the loss, or the softmax
                                  of :math:`-\ell`); the sum instead of the mean;
                                  softmax over the wrong axis; positives off the
                                  diagonal; the positive left out of its own
                                  denominator; one loss per anchor returned
    large logits (τ = 0.01)       no max-subtraction (exp overflows to inf)
    N = 1                         code that squeezes or divides by N - 1
    float32 input                 computing in float32 instead of float64
    nested lists                  code that needs NumPy arrays
    inputs unchanged              in-place changes to the caller's arrays
    default temperature           a missing or different default
    ============================  =============================================

    On every case the value each formula mistake would give is computed and compared with
    the reader's, so a wrong value is named when it matches one (the cases are built so
    that these values are distinct). A value right to about seven significant digits but
    not to nine is float32 arithmetic, and both numbers are printed with enough digits to
    show the difference. A value passes when it is within 1e-9 relative (1e-12 absolute) of
    :func:`~infonce_lib.info_nce_loss`. A function that raises
    ``NotImplementedError`` (the exercise's stub) gets "not attempted yet"; any other
    exception is caught and reported, never re-raised; NumPy warnings are recorded and
    shown with the failure. The last line says "see the hints above" only when a hint was
    printed. Printed lines are wrapped at 80 characters.

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
    >>> check_info_nce(typical_mistakes()["temperature applied twice"])  # doctest: +ELLIPSIS
    FAIL  worked example: expected 0.47865, got 0.134319: this is the loss of Z1 @
          Z2.T / tau**2: the temperature is applied twice (divide the logits by tau
          once)
    ...
    False
    >>> def my_info_nce(Z1, Z2, temperature=0.1):
    ...     raise NotImplementedError
    >>> check_info_nce(my_info_nce)
    Not attempted yet: my_info_nce raises NotImplementedError. Write its body, then
    run this cell again.
    False
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable implementation of InfoNCE; got {type(fn).__name__}")
    outcomes = ((case.name, *_run_case(fn, case)) for case in _cases())
    return hinted_report(
        fn,
        outcomes,
        verbose=verbose,
        unknown=(
            "compare your steps with the exercise (logits divided by tau once, "
            "max-subtraction, the diagonal as positives, the mean over rows)."
        ),
    )


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


def _row_losses(Z1, Z2, scale):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T * scale
    return _stable_rows(L) - np.diag(L)


def _tau_twice(Z1, Z2, temperature=0.1):
    A = np.asarray(Z1, dtype=float) / temperature  # divides by tau here ...
    L = A @ np.asarray(Z2, dtype=float).T / temperature  # ... and again here
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _tau_forgotten(Z1, Z2, temperature=0.1):
    return float(np.mean(_row_losses(Z1, Z2, 1.0)))  # temperature never used


def _tau_multiplied(Z1, Z2, temperature=0.1):
    return float(np.mean(_row_losses(Z1, Z2, temperature)))  # * tau, not / tau


def _minus_loss(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.mean(np.diag(L) - _stable_rows(L)))  # mean log p_ii: minus the loss


def _negated_logits(Z1, Z2, temperature=0.1):
    return float(np.mean(_row_losses(Z1, Z2, -1.0 / temperature)))  # softmax of -logits


def _casts_to_float32(Z1, Z2, temperature=0.1):
    A = np.asarray(Z1, dtype=np.float32)
    B = np.asarray(Z2, dtype=np.float32)
    L = A @ B.T / np.float32(temperature)
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _per_row(Z1, Z2, temperature=0.1):
    return _row_losses(Z1, Z2, 1.0 / temperature)  # N losses, not their mean


def _needs_arrays(Z1, Z2, temperature=0.1):
    L = Z1.astype(float) @ Z2.astype(float).T / temperature  # lists have no .astype
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
    r"""Seventeen deliberately wrong InfoNCE implementations, one per usual mistake.

    Each is a short NumPy function with the exercise's signature
    ``(Z1, Z2, temperature=0.1) -> float`` that is right except for one thing:

    - ``"no max-subtraction"``: :math:`\log \sum_j e^{\ell_{ij}}` computed as written,
      which overflows once a logit exceeds about 709;
    - ``"softmax over the wrong axis"``: normalises over anchors (axis 0);
    - ``"sum instead of mean"``: sums the row losses;
    - ``"positives in column 0"``: takes column 0 as every anchor's positive;
    - ``"positive left out of the denominator"``: the leave-one-out form (Poole et al.,
      2019), not InfoNCE;
    - ``"temperature applied twice"``: divides ``Z1`` by τ and then the logits again, so
      the logits are :math:`Z_1 Z_2^\top / \tau^2`;
    - ``"temperature forgotten"``: never divides by τ;
    - ``"temperature multiplied"``: multiplies the logits by τ;
    - ``"returns minus the loss"``: the mean log-probability of the positives;
    - ``"negated logits"``: the softmax of :math:`-\ell`, as if the scores were distances;
    - ``"squeezes its input"``: ``np.squeeze`` turns an ``(1, D)`` batch into a vector;
    - ``"computes in float32"``: keeps the input's dtype;
    - ``"casts to float32"``: converts every input to float32;
    - ``"per-row output"``: returns the ``N`` row losses instead of their mean;
    - ``"needs NumPy arrays"``: calls ``.astype`` on its inputs, so lists fail;
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
        "temperature applied twice": _tau_twice,
        "temperature forgotten": _tau_forgotten,
        "temperature multiplied": _tau_multiplied,
        "returns minus the loss": _minus_loss,
        "negated logits": _negated_logits,
        "squeezes its input": _squeezes,
        "computes in float32": _float32,
        "casts to float32": _casts_to_float32,
        "per-row output": _per_row,
        "needs NumPy arrays": _needs_arrays,
        "modifies its inputs": _modifies_inputs,
        "no default temperature": _no_default,
    }
