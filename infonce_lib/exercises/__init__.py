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
from ._infonce_mistakes import typical_mistakes
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
    nonfinite_hint: str = ""  # shown when it returns inf or NaN on this case


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
_HINT_GLOBAL_MAX = (
    "a whole row underflowed to 0: subtract each row's own maximum "
    "(logits.max(axis=1, keepdims=True)), not the largest logit of the whole batch"
)
_HINT_LOG_OF_SOFTMAX = (
    "the positive's probability underflowed to 0 before the log (its logit is more than "
    "745 below its row's maximum): take the log-probability directly, "
    "(l_ii - m_i) - log sum_j e^(l_ij - m_i), never np.log of a softmax"
)
_HINT_SYMMETRIC = (
    "this is the mean of the loss over rows and the loss over columns (CLIP's symmetric "
    "loss); InfoNCE has one direction: the anchors are the rows of Z1"
)
_HINT_TAU_INSIDE = (
    "the temperature divides the logits inside the log-sum-exp only: the positive's "
    "logit must be divided by tau too (l_ii = z1_i . z2_i / tau)"
)
_HINT_N_MINUS_1 = "this divides the sum of the N row losses by N - 1; the loss is their mean"
_HINT_SQDIST = (
    "these are squared-distance logits, -|z1_i - z2_j|^2 / tau; InfoNCE's logits are the "
    "dot products Z1 @ Z2.T / tau"
)
_HINT_ALL_ENTRIES = (
    "this averages -log p_ij over every entry of the matrix; the loss takes the positives "
    "only, the diagonal entries -log p_ii"
)
_HINT_EPS_IN_LOG = (
    "an epsilon inside the log, -log(p_ii + eps): it shifts row i's loss by about "
    "eps / p_ii, which is not negligible where a positive's probability is small; take the "
    "log-probability directly, (l_ii - m_i) - log sum_j e^(l_ij - m_i), which needs no eps"
)
_HINT_CLIPPED = (
    "the logits were clipped: np.clip changes every logit beyond the bound, and so the "
    "loss; subtracting each row's maximum already keeps exp from overflowing, so no clip "
    "is needed"
)
_HINT_NO_KEEPDIMS = (
    "the row maxima were subtracted without keepdims: logits - logits.max(axis=1) "
    "broadcasts the (N,) vector along the rows, so column j loses row j's maximum; use "
    "logits.max(axis=1, keepdims=True)"
)
_HINT_MAX_NOT_ADDED = (
    "the row maxima were subtracted inside the log-sum-exp but never added back: "
    "log sum_j exp(l_ij) = m_i + log sum_j exp(l_ij - m_i)"
)
_HINT_LOG10 = "this is the loss in base-10 logarithms: use the natural log (np.log)"
_HINT_LOSS_MINUS_LOG_N = (
    "this is the loss minus log N, that is minus the bound I_NCE = log N - loss; the "
    "exercise asks for the loss itself, -mean(log p_ii), with no log N"
)
_HINT_BOUND = (
    "this is the bound I_NCE = log N - loss (chapter 3), not the loss: return "
    "-mean(log p_ii), with no log N"
)
_HINT_NORMALISED = (
    "this normalises the embeddings (cosine logits); the exercise takes the raw dot "
    "products Z1 @ Z2.T / tau, without dividing by the norms"
)
_HINT_N1_NONFINITE = (
    "with N = 1 the positive is the only candidate and the loss is exactly 0; a NaN or "
    "inf here comes from an empty sum (the positive left out of its own denominator) or "
    "from dividing by N - 1"
)


# The epsilons readers put inside a log, and the bounds they clip logits to.
_EPSILONS = (1e-12, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5)
_CLIPS = (10.0, 20.0, 30.0, 50.0, 80.0, 88.0, 100.0, 300.0, 500.0, 700.0, 709.0)


def _loss(logits: np.ndarray) -> float:
    return contrastive_loss_from_logits(logits)


def _known_mistakes(Z1, Z2, tau: float) -> list[tuple[float, str]]:
    """The value each known formula mistake gives on this case, with its hint.

    Mistakes that coincide with the right answer on a case (the sum when N = 1, say) are
    left out; :func:`_grouped` merges mistakes that give the same value on a case into one
    hint that names each of them, so a hint never names one mistake for another.
    """
    A = np.asarray(Z1, dtype=np.float64)
    B = np.asarray(Z2, dtype=np.float64)
    S = A @ B.T
    L = S / tau
    n = L.shape[0]
    log_p = contrastive_log_probs(L)
    loss = -float(log_p.mean())
    lse = np.diag(L) - log_p  # each row's log-sum-exp
    # -|a_i - b_j|^2 (its -|a_i|^2 is a constant of row i, which the softmax ignores)
    sq_dist = 2.0 * S - np.sum(A * A, axis=1)[:, None] - np.sum(B * B, axis=1)[None, :]
    known = [
        (_loss(S / tau**2), _HINT_TAU_TWICE),
        (_loss(S), _HINT_TAU_FORGOTTEN),
        (_loss(S * tau), _HINT_TAU_MULTIPLIED),
        (_loss(-L), _HINT_NEGATED),
        (contrastive_loss_from_logits(L, anchors="columns"), _HINT_AXIS),
        (float(np.mean(lse - np.diag(S))), _HINT_TAU_INSIDE),
        (_loss(sq_dist / tau), _HINT_SQDIST),
    ]
    known += _numerical_mistakes(L, log_p)
    unit_a = A / np.linalg.norm(A, axis=1, keepdims=True)
    unit_b = B / np.linalg.norm(B, axis=1, keepdims=True)
    if np.all(np.isfinite(unit_a)) and np.all(np.isfinite(unit_b)):  # no zero rows
        known.append((_loss(unit_a @ unit_b.T / tau), _HINT_NORMALISED))
    if n > 1:
        known += [
            (loss - math.log(n), _HINT_LOSS_MINUS_LOG_N),
            (math.log(n) - loss, _HINT_BOUND),
            (-loss, _HINT_MINUS),
            (n * loss, _HINT_SUM),
            (n * loss / (n - 1), _HINT_N_MINUS_1),
            (contrastive_loss_from_logits(L, np.zeros(n, dtype=int)), _HINT_COLUMN0),
            (-float(contrastive_log_probs(L, include_positive=False).mean()), _HINT_LOO),
            (contrastive_loss_from_logits(L, anchors="both"), _HINT_SYMMETRIC),
            (float(np.mean(lse) - np.mean(L)), _HINT_ALL_ENTRIES),
        ]
    return [(v, h) for v, h in known if not _close(v, loss)]


def _numerical_mistakes(L: np.ndarray, log_p: np.ndarray) -> list[tuple[float, str]]:
    """Values of numerical shortcuts: an epsilon inside the log, clipped logits, row
    maxima subtracted without keepdims or never added back, and base-10 logs (kept only
    where they are finite)."""
    p_pos = np.exp(log_p)  # each positive's softmax probability
    known = [(-float(np.mean(np.log(p_pos + eps))), _HINT_EPS_IN_LOG) for eps in _EPSILONS]
    known += [(_loss(np.clip(L, -c, c)), _HINT_CLIPPED) for c in _CLIPS if np.abs(L).max() > c]
    m = L.max(axis=1)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        no_keepdims = float(np.mean(m + np.log(np.exp(L - m).sum(axis=1)) - np.diag(L)))
    known.append((no_keepdims, _HINT_NO_KEEPDIMS))
    lse_shifted = np.log(np.exp(L - m[:, None]).sum(axis=1))  # m never added back
    known.append((float(np.mean(lse_shifted - np.diag(L))), _HINT_MAX_NOT_ADDED))
    known.append((-float(np.mean(log_p)) / math.log(10), _HINT_LOG10))
    return [(v, h) for v, h in known if math.isfinite(v)]


def _grouped(known: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """One entry per distinct value: mistakes that give the same value on a case share a
    hint that names each of them (a later case, built for it, tells them apart)."""
    groups: list[tuple[float, list[str]]] = []
    for value, hint in known:
        for other, hints in groups:
            if _close(value, other):
                if hint not in hints:  # one shortcut at two settings is one mistake
                    hints.append(hint)
                break
        else:
            groups.append((value, [hint]))
    return [(value, hints[0] if len(hints) == 1 else _joint_hint(hints)) for value, hints in groups]


def _joint_hint(hints: list[str]) -> str:
    return (
        f"{len(hints)} usual mistakes give this value on this case, and a later case tells "
        "them apart: either " + "; or ".join(hints)
    )


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
    expected = info_nce_loss(Z1, Z2, tau)
    return _Case(name, (Z1, Z2), kwargs, expected, purpose, _grouped(known), **extra)


def _cases() -> list[_Case]:
    rng = np.random.default_rng(20261129)
    return _cases_values(rng) + _cases_extremes() + _cases_inputs(rng)  # one generator


def _cases_values(rng: np.random.Generator) -> list[_Case]:
    """Cases 1-3: values that tell the mistakes of the formula apart, and an overflow."""
    cases = []

    # 1. the worked example of the chapter. Its similarities are the dot products of the
    # first four coordinates; a fifth, which the anchors ignore (their entry is 0), gives
    # the candidates different lengths, so squared distances are not dot products here.
    v = [0.9, 0.3, 0.1, -0.2]
    S = np.array([[v[(j - i) % 4] for j in range(4)] for i in range(4)])
    cases.append(
        _case(
            "worked example",
            np.hstack([np.eye(4), np.zeros((4, 1))]),
            np.hstack([S.T, [[0.0], [0.5], [1.0], [1.5]]]),
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

    # 3. large logits: a naive exp overflows. A common component keeps every row's
    # maximum within a few hundred of the others and of its positive, so only the
    # overflow, no underflow, makes a value infinite here.
    Z1 = np.array([2.0, -1.0, 1.5, 0.5]) + 0.5 * rng.normal(size=(5, 4))
    Z2 = Z1 + 0.5 * rng.normal(size=(5, 4))
    cases.append(
        _case(
            "large logits",
            Z1,
            Z2,
            0.01,
            "temperature 0.01, logits near 1000: e^1000 overflows float64",
            nonfinite_hint=_HINT_OVERFLOW,
        )
    )
    return cases


def _cases_extremes() -> list[_Case]:
    """Cases 4-6: rows far apart, a positive far below its row, and N = 1."""
    return [
        # 4. row maxima 500 and -450 (950 apart), every logit below 709 in size: shifting
        # every row by the batch's largest logit makes row 2's exponentials all 0.
        _case(
            "rows far apart",
            np.array([[5.0, 0.0], [-5.0, 0.0], [0.0, 1.0]]),
            np.array([[1.0, 0.2], [0.95, -0.1], [0.9, 1.0]]),
            0.01,
            "row maxima 950 apart: each row needs its own maximum",
            nonfinite_hint=_HINT_GLOBAL_MAX,
        ),
        # 5. anchor 1's positive has logit -400 and a negative 400: the positive's
        # probability, e^-800, is below the smallest float64 (about e^-745).
        _case(
            "positive far below",
            np.array([[1.0, 0.0], [0.0, 1.0], [0.2, 0.2]]),
            np.array([[-4.0, 1.0], [4.0, 2.0], [0.5, 0.5]]),
            0.01,
            "a positive 800 below its row's maximum: its probability underflows to 0",
            nonfinite_hint=_HINT_LOG_OF_SOFTMAX,
        ),
        # 6. N = 1: one anchor, one candidate, loss exactly 0
        _case(
            "N = 1",
            np.array([[1.0, 2.0]]),
            np.array([[3.0, -4.0]]),
            0.1,
            "a batch of one pair: the positive is the only candidate, the loss is 0",
            raise_hint="a (1, D) batch must stay two-dimensional (no np.squeeze)",
            nonfinite_hint=_HINT_N1_NONFINITE,
        ),
    ]


def _cases_inputs(rng: np.random.Generator) -> list[_Case]:
    """Cases 7-10: the inputs a loss must accept (float32, lists, unchanged inputs, defaults)."""
    cases = []
    # 7. float32 input: computing in float32 loses about 7 digits
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

    # 8. nested lists
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

    # 9. the inputs must come back unchanged
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

    # 10. the default temperature
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
        if case.nonfinite_hint:
            message = f"expected {case.expected:.6g}, got {got}: {case.nonfinite_hint}{warned}"
            return False, message, case.nonfinite_hint
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
    float (van den Oord, Li & Vinyals, 2018, eq. 4). This runs ``fn`` on ten cases,
    each built to expose usual mistakes:

    ============================  =============================================
    case                          catches
    ============================  =============================================
    worked example, random batch  a wrong formula: the temperature applied twice
                                  (:math:`\ell / \tau`), forgotten, multiplied,
                                  or applied inside the log-sum-exp only; the
                                  sign flipped (minus the loss, or the softmax
                                  of :math:`-\ell`); the sum, or the sum over
                                  N - 1, instead of the mean; softmax over the
                                  wrong axis; CLIP's symmetric average of both
                                  axes; positives off the diagonal; the mean over
                                  every entry; the positive left out of its own
                                  denominator; squared-distance logits; the
                                  embeddings normalised (cosine logits); the
                                  loss minus log N, or the bound log N - loss;
                                  the row maxima subtracted without keepdims;
                                  an epsilon inside the log (where a positive's
                                  probability is small); one loss per anchor
                                  returned
    large logits (τ = 0.01)       no max-subtraction (exp overflows to inf);
                                  logits clipped to a bound (10 to 709)
    rows far apart                one maximum for the whole batch (a row far
                                  below it underflows to 0)
    positive far below            the log of a softmax probability (a positive
                                  more than 745 below its row's maximum has
                                  probability 0 in float64)
    N = 1                         code that squeezes or divides by N - 1, or
                                  leaves the positive out (an empty sum: inf)
    float32 input                 computing in float32 instead of float64
    nested lists                  code that needs NumPy arrays
    inputs unchanged              in-place changes to the caller's arrays
    default temperature           a missing or different default
    ============================  =============================================

    On every case the value each formula mistake would give is computed and compared with
    the reader's, so a wrong value is named when it matches one; where two mistakes give
    the same value on a case (column 0 as every positive and the mean over every entry, on
    the worked example's circulant matrix), the hint names both, and a later case tells
    them apart. An infinite or NaN answer gets the hint of the case built for it (overflow,
    a row or a positive that underflows, N = 1). A value right to about seven significant
    digits but not to nine is float32 arithmetic, and both numbers are printed with enough
    digits to show the difference. A value passes when it is within 1e-9 relative (1e-12
    absolute) of :func:`~infonce_lib.info_nce_loss`. A function that raises
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
