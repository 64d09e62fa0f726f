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

_HINTS = {
    "bits": "this is 2^I, rounded up: I is in nats, so the batch needs e^I pairs (log base e)",
    "decimal": "this is 10^I, rounded up: I is in nats, so the batch needs e^I pairs",
    "floor": (
        "rounded down (or to the nearest, which here rounds down): log K is then below I; "
        "round up (math.ceil) so that log K >= I"
    ),
    "plus one": (
        "one too many: K counts every candidate, the positive included, and log K >= I "
        "already holds at ceil(e^I)"
    ),
    "square": "this is e^(2I): the cap is log K, not (log K)/2",
    "log": "this is log I or I itself: invert log K >= I, that is K >= e^I",
    "strict": (
        "one too many at the boundary: here I = log K exactly, and K itself already has "
        "log K >= I; a strict inequality (log K > I, or floor(e^I) + 1) or an extra pair "
        "overshoots by one. Use >= (math.ceil(e^I))"
    ),
}


def _expected(information: float) -> int:
    return max(1, math.ceil(math.exp(information)))


def _known(information: float) -> list[tuple[float, str]]:
    e = math.exp(information)
    boundary = e == round(e)  # exp(I) is a whole number: >= and > give different K
    values = [
        (math.ceil(2.0**information), _HINTS["bits"]),
        (math.ceil(10.0**information), _HINTS["decimal"]),
        (math.floor(e), _HINTS["floor"]),
        (round(e), _HINTS["floor"]),
        (math.ceil(e) + 1, _HINTS["strict" if boundary else "plus one"]),
        (math.ceil(math.exp(2 * information)), _HINTS["square"]),
        (math.ceil(information), _HINTS["log"]),
    ]
    want = _expected(information)
    # A mistake that gives the right number here is not a mistake here; ambiguous ones
    # (two mistakes, one number) are named by neither.
    return [
        (v, h) for v, h in values if v != want and not any(v == w and h != g for w, g in values)
    ]


def _label(information: float) -> str:
    if information == math.log(_BOUNDARY_K):
        return f"I = log {_BOUNDARY_K} = {information:.6f} nats"
    return f"I = {information} nats"


def _run(fn: Callable, information: float) -> tuple[bool, str]:
    want = _expected(information)
    with np.errstate(all="ignore"):
        try:
            out = fn(information)
        except NotImplementedError:
            raise
        except Exception as exc:  # reported, never re-raised
            return False, f"raised {type(exc).__name__}: {exc}"
    try:
        got = float(out)
    except (TypeError, ValueError):
        return False, f"returned {type(out).__name__} {out!r}, not a number"
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
    for value, hint in _known(information):
        if got_int == value:
            return False, f"expected {want}, got {got_int}: {hint}"
    return False, f"expected {want} (log {want} = {math.log(want):.4f}), got {got_int}"


def check_min_batch_size(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``my_min_batch_size(information)`` on six informations.

    The answer for :math:`I` nats is the smallest whole :math:`K \ge 1` with
    :math:`\log K \ge I`, that is :math:`\lceil e^{I} \rceil`. The cases are
    :math:`I = 0.5, 2, 0.01, 5, 12` nats and :math:`I = \log 32` exactly (``math.log(32)``),
    where :math:`K = 32` itself satisfies :math:`\log K \ge I` and a strict inequality gives
    33. A whole number passes whatever its type (``int``, NumPy integer, or a float such as
    ``8.0``). The checker names these mistakes: bits or decimal digits instead of nats
    (:math:`2^I`, :math:`10^I`), rounding down or to the nearest, one pair too many, a strict
    inequality (:math:`\log K > I`), :math:`e^{2I}`, and returning :math:`I` itself, a
    non-integer, inf or NaN.

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
          here rounds down): log K is then below I; round up (math.ceil) so that log
          K >= I
    ...
    3 of 6 cases fail; each FAIL line says what went wrong.
    False
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable (your my_min_batch_size); got {type(fn).__name__}")
    outcomes = ((_label(i), *_run(fn, i)) for i in _CASES)
    return plain_report(outcomes, verbose=verbose)


def min_batch_size_mistakes() -> dict[str, Callable]:
    r"""Ten wrong ``my_min_batch_size`` functions, one per usual mistake.

    Returns
    -------
    dict of str to callable
        Name of the mistake to the function that makes it: ``"bits"`` (:math:`2^I`),
        ``"decimal"`` (:math:`10^I`), ``"rounds down"``, ``"rounds to nearest"``,
        ``"one too many"``, ``"strict inequality"`` (the smallest :math:`K` with
        :math:`\log K > I`, ``floor(e^I) + 1``), ``"squares"`` (:math:`e^{2I}`),
        ``"returns I"``, ``"not rounded"`` (:math:`e^I` as a float) and ``"overflows"``
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
        "one too many": lambda information: math.ceil(math.exp(information)) + 1,
        "squares": lambda information: math.ceil(math.exp(2 * information)),
        "returns I": lambda information: math.ceil(information),
        "not rounded": lambda information: math.exp(information),
        "strict inequality": lambda information: math.floor(math.exp(information)) + 1,
        "overflows": lambda information: np.ceil(
            np.exp(np.float64(information) + 800.0) / np.exp(800.0)
        ),
    }
