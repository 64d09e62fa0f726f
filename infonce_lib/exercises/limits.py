r"""Checker for chapter 5's exercise: the batch size InfoNCE needs to certify I nats.

Every batch value of InfoNCE is at most :math:`\log K` (chapter 5, after Poole et al.,
2019), so its bias is at least :math:`I - \log K`, and a batch can certify :math:`I` nats
only if :math:`\log K \ge I`. The exercise asks for ``my_min_batch_size(information)``, the
smallest whole batch size with that property,

.. math::

    K_{\min}(I) = \lceil e^{I} \rceil \qquad (I > 0),

the number of pairs below which the floor :math:`I - \log K` is positive.
:func:`check_min_batch_size` runs a reader's function on a few informations and names the
usual mistakes; :func:`min_batch_size_mistakes` returns them as functions for the tests.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import numpy as np

from ._runner import plain_report

__all__ = ["check_min_batch_size", "min_batch_size_mistakes"]

# Informations in nats. All but one are far from the logarithm of a whole number (where
# exp(I) lands within round-off of an integer and ceil may go either way). The one at the
# boundary, I = log 32 exactly (math.log(32), whose math.exp and numpy.exp are exactly 32.0,
# in float64 and through float32), is the case where ">=" and ">" differ: K = 32 itself has
# log K >= I, and the smallest K with log K > I is 33.
_BOUNDARY_K = 32
_CASES = (0.5, 2.0, 0.01, 5.0, 12.0, math.log(_BOUNDARY_K))

# Each hint: (a few words, used when several slips give the same number; the full hint).
_HINTS = {
    "bits": (
        "2^I (bits)",
        "this is 2^I, rounded up: I is in nats, so the batch needs e^I pairs (log base e)",
    ),
    "decimal": (
        "10^I (decimal digits)",
        "this is 10^I, rounded up: I is in nats, so the batch needs e^I pairs",
    ),
    "floor": (
        "e^I rounded down or to the nearest",
        "rounded down (or to the nearest, which here rounds down): log K is then below I; "
        "round up (math.ceil) so that log K >= I",
    ),
    "too few": (
        "one pair too few, ceil(e^I) - 1",
        "one too few: ceil(e^I) - 1 pairs have log K < I (here e^I is a whole number, so "
        "ceil(e^I) = e^I pairs already have log K = I); return ceil(e^I) itself",
    ),
    "plus one": (
        "one pair too many, ceil(e^I) + 1",
        "one too many: K counts every candidate, the positive included, and log K >= I "
        "already holds at ceil(e^I)",
    ),
    "strict": (
        "a strict inequality, log K > I",
        "one too many at the boundary: here I = log K exactly, and K itself already has "
        "log K >= I; a strict inequality (log K > I, or floor(e^I) + 1) or an extra pair "
        "overshoots by one. Use >= (math.ceil(e^I))",
    ),
    "square": ("e^(2I)", "this is e^(2I): the cap is log K, not (log K)/2"),
    "half": ("e^(I/2)", "this is e^(I/2): the cap is log K, not 2 log K"),
    "log": ("I itself", "this is log I or I itself: invert log K >= I, that is K >= e^I"),
    "rounded I": (
        "e to the power of I rounded",
        "this is e to the power of a rounded I (such as exp(ceil(I))): round the batch size "
        "e^I up, not the information I",
    ),
}


def _expected(information: float) -> int:
    return max(1, math.ceil(math.exp(information)))


def _known(information: float) -> dict[int, list[str]]:
    """Each wrong number a usual slip gives at this information, with the slips that give it."""
    e = math.exp(information)
    boundary = e == round(e)  # exp(I) is a whole number: >= and > give different K
    values = [
        (math.ceil(2.0**information), "bits"),
        (math.ceil(10.0**information), "decimal"),
        (math.floor(e), "floor"),
        (round(e), "floor"),
        (math.ceil(e) - 1, "too few"),
        (math.ceil(e) + 1, "strict" if boundary else "plus one"),
        (math.ceil(math.exp(2 * information)), "square"),
        (math.ceil(math.exp(information / 2)), "half"),
        (math.ceil(information), "log"),
    ]
    values += [(math.ceil(math.exp(r(information))), "rounded I") for r in (math.ceil, round)]
    want = _expected(information)
    out: dict[int, list[str]] = {}
    for value, key in values:
        if value != want and key not in out.setdefault(value, []):  # right here: no slip
            out[value].append(key)
    return out


# Two slips that give the same number wherever e^I is not whole, and have the same remedy.
_JOINT = {
    frozenset({"floor", "too few"}): (
        "rounded down (or to the nearest, which here rounds down), or one pair too few "
        "(ceil(e^I) - 1): log K is then below I; round up (math.ceil) so that log K >= I"
    ),
}


def _hint(keys: list[str]) -> str:
    """The full hint of a slip, or the short names of all the slips that give this number."""
    if len(keys) == 1:
        return _HINTS[keys[0]][1]
    if frozenset(keys) in _JOINT:
        return _JOINT[frozenset(keys)]
    names = "; ".join(_HINTS[k][0] for k in keys)
    return f"here several slips give this number ({names}); the other cases tell them apart"


def _label(information: float) -> str:
    if information == math.log(_BOUNDARY_K):
        return f"I = log {_BOUNDARY_K} = {information:.6f} nats"
    return f"I = {information} nats"


def _as_number(out) -> float | None:
    """``out`` as a float if it is a real number (int, float, NumPy scalar or 0-d array)."""
    if isinstance(out, np.ndarray) and out.ndim == 0:
        out = out[()]
    if isinstance(out, bool | np.bool_) or not isinstance(out, numbers.Real):
        return None
    return float(out)


def _run(fn: Callable, information: float) -> tuple[bool, str]:
    want = _expected(information)
    with np.errstate(all="ignore"):
        try:
            out = fn(information)
        except NotImplementedError:
            raise
        except Exception as exc:  # reported, never re-raised
            return False, f"raised {type(exc).__name__}: {exc}"
    got = _as_number(out)
    if got is None:
        text = " (text: drop the str() or f-string)" if isinstance(out, str | bytes) else ""
        return False, (
            f"returned {type(out).__name__} {out!r}, not a number{text}; return the batch size "
            "itself, a whole number such as math.ceil(...)"
        )
    if not math.isfinite(got):
        return False, (
            f"returned {got}; the answer is a whole number of pairs, e^I rounded up "
            "(no exp of a huge number, no log of a negative one, is needed)"
        )
    if got != round(got):
        return False, (
            f"expected {want}, got {got:.4f}: a batch size is a whole number of pairs; "
            "round e^I up with math.ceil"
        )
    got_int = round(got)
    if got_int == want:
        return True, f"K = {got_int} (log K = {math.log(got_int):.4f} >= {information})"
    keys = _known(information).get(got_int)
    if keys:
        return False, f"expected {want}, got {got_int}: {_hint(keys)}"
    return False, f"expected {want} (log {want} = {math.log(want):.4f}), got {got_int}"


def check_min_batch_size(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``my_min_batch_size(information)`` on six informations.

    The answer for :math:`I` nats is the smallest whole :math:`K \ge 1` with
    :math:`\log K \ge I`, that is :math:`\lceil e^{I} \rceil`. The cases are
    :math:`I = 0.5, 2, 0.01, 5, 12` nats and :math:`I = \log 32` exactly (``math.log(32)``),
    where :math:`K = 32` itself satisfies :math:`\log K \ge I` and a strict inequality gives
    33. A whole number passes whatever its type (``int``, NumPy integer, a float such as
    ``8.0``, or a 0-d array); text such as ``"8"`` does not. The checker names these
    mistakes: bits or decimal digits instead of nats (:math:`2^I`, :math:`10^I`), rounding
    down or to the nearest, one pair too few (:math:`\lceil e^I \rceil - 1`) or too many, a
    strict inequality (:math:`\log K > I`), :math:`e^{2I}` or :math:`e^{I/2}`, :math:`e` to
    the power of a rounded :math:`I`, and returning :math:`I` itself, text, a non-integer, inf
    or NaN. Where two slips give the same number, the line names both, and another case
    tells them apart: :math:`\lfloor e^I \rfloor` and :math:`\lceil e^I \rceil - 1` differ
    only at :math:`I = \log 32` (32 against 31), :math:`e^{\lceil I \rceil}` and one pair
    too many at :math:`I = 2` and :math:`\log 32`.

    Parameters
    ----------
    fn : callable
        The reader's function, called as ``fn(information)`` with a float in nats.
    verbose : bool, default True
        Print one line per case, PASS or FAIL with the likely mistake.

    Returns
    -------
    bool
        True when every case passes; False otherwise, and False after printing "not
        attempted yet" when ``fn`` raises NotImplementedError.

    Raises
    ------
    TypeError
        If ``fn`` is not callable.

    Examples
    --------
    >>> import math
    >>> check_min_batch_size(lambda I: math.ceil(math.exp(I)), verbose=False)
    True
    >>> check_min_batch_size(min_batch_size_mistakes()["rounds to nearest"])  # doctest: +ELLIPSIS
    PASS  I = 0.5 nats: K = 2 (log K = 0.6931 >= 0.5)
    FAIL  I = 2.0 nats: expected 8, got 7: rounded down (or to the nearest, which
          here rounds down), or one pair too few (ceil(e^I) - 1): log K is then
          below I; round up (math.ceil) so that log K >= I
    ...
    3 of 6 cases fail; each FAIL line says what went wrong.
    False
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable (your my_min_batch_size); got {type(fn).__name__}")
    outcomes = ((_label(i), *_run(fn, i)) for i in _CASES)
    return plain_report(outcomes, verbose=verbose)


def min_batch_size_mistakes() -> dict[str, Callable]:
    r"""Fourteen wrong ``my_min_batch_size`` functions, one per usual mistake.

    Returns
    -------
    dict of str to callable
        Name of the mistake to the function that makes it: ``"bits"`` (:math:`2^I`),
        ``"decimal"`` (:math:`10^I`), ``"rounds down"``, ``"rounds to nearest"``,
        ``"one too few"`` (``ceil(e^I) - 1``), ``"one too many"``, ``"strict inequality"``
        (the smallest :math:`K` with :math:`\log K > I`, ``floor(e^I) + 1``), ``"squares"``
        (:math:`e^{2I}`), ``"halves"`` (:math:`e^{I/2}`), ``"rounds I first"``
        (``ceil(exp(ceil(I)))``), ``"returns I"``, ``"returns text"`` (the right number as a
        string), ``"not rounded"`` (:math:`e^I` as a float) and ``"overflows"``
        (:math:`e^{I}` computed as a ratio of two exponentials that overflow: NaN).

    Examples
    --------
    >>> min_batch_size_mistakes()["bits"](2.0)
    4
    """
    return {
        "bits": lambda information: math.ceil(2.0**information),
        "decimal": lambda information: math.ceil(10.0**information),
        "rounds down": lambda information: math.floor(math.exp(information)),
        "rounds to nearest": lambda information: round(math.exp(information)),
        "one too few": lambda information: math.ceil(math.exp(information)) - 1,
        "one too many": lambda information: math.ceil(math.exp(information)) + 1,
        "squares": lambda information: math.ceil(math.exp(2 * information)),
        "halves": lambda information: math.ceil(math.exp(information / 2)),
        "rounds I first": lambda information: math.ceil(math.exp(math.ceil(information))),
        "returns I": lambda information: math.ceil(information),
        "returns text": lambda information: str(math.ceil(math.exp(information))),
        "not rounded": lambda information: math.exp(information),
        "strict inequality": lambda information: math.floor(math.exp(information)) + 1,
        "overflows": lambda information: np.ceil(
            np.exp(np.float64(information) + 800.0) / np.exp(800.0)
        ),
    }
