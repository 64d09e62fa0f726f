"""A small runner shared by the chapter checkers: run a reader's function on cases, compare,
and name the mistake when a wrong answer matches a known one.

Private: the public checkers live in the chapter modules. Chapters 6 and 7 use the whole
runner (:class:`Case`, :func:`run_cases`); chapters 1 to 5 build their own cases and share
only the report: :func:`hinted_report` (chapters 1 and 2: a hint said once, then referred
back to) and :func:`plain_report` (chapters 3 and 5).
"""

from __future__ import annotations

import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._validation import as_bool

RTOL = 1e-9
ATOL = 1e-12


@dataclass
class Case:
    """One call of the reader's function and what it should return.

    ``known`` pairs the value a known mistake gives with the hint that names it;
    ``nonfinite_hint`` is shown when the answer is NaN or infinite. An answer passes when it
    is within ``rtol`` (relative) or ``atol`` (absolute) of ``expected``, entry by entry; a
    case whose expected value may be tiny sets ``atol = 0`` so that 0 and the wrong sign
    fail. With ``imprecise_rtol`` > 0, an answer that matches no known mistake but lies
    within that relative distance is reported as right but imprecise, with the number of
    digits it gets right and ``imprecise_hint``.
    """

    name: str
    args: tuple
    expected: np.ndarray | float
    known: list[tuple[np.ndarray | float, str]] = field(default_factory=list)
    nonfinite_hint: str = "the answer must be finite"
    rtol: float = RTOL
    atol: float = ATOL
    imprecise_rtol: float = 0.0
    imprecise_hint: str = ""


def _close(got: np.ndarray, want: np.ndarray, rtol: float = RTOL, atol: float = ATOL) -> bool:
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))


def _imprecise(got: np.ndarray, want: np.ndarray, case: Case) -> str:
    """The "right but imprecise" message, or "" if ``got`` is not within ``imprecise_rtol``."""
    if not case.imprecise_rtol or not _close(got, want, case.imprecise_rtol, 0.0):
        return ""
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = float(np.max(np.abs(got - want) / np.abs(want)))
    digits = max(0, int(-np.log10(rel))) if rel > 0 else 16
    return (
        f"right but imprecise: it agrees with the exact value to about {digits} significant "
        f"digits, and the checker asks for a relative error below {case.rtol:g}; "
        f"{case.imprecise_hint}"
    )


def _show(value: np.ndarray) -> str:
    if value.ndim == 0:
        return f"{float(value):.7g}"
    return np.array2string(value, precision=6, threshold=4, floatmode="maxprec")


def run_case(fn: Callable, case: Case) -> tuple[str, str]:
    """``(status, message)`` with status ``"PASS"``, ``"FAIL"`` or ``"TODO"``."""
    args = tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in case.args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except NotImplementedError:
            return "TODO", "not attempted yet (the function raises NotImplementedError)"
        except (OverflowError, FloatingPointError) as exc:
            return "FAIL", f"raised {type(exc).__name__}: {exc}: {case.nonfinite_hint}"
        except Exception as exc:  # a reader's error is reported, never re-raised
            return "FAIL", f"raised {type(exc).__name__}: {exc}"
    warned = f" (NumPy warned: {caught[0].message})" if caught else ""
    want = np.asarray(case.expected, dtype=float)
    try:
        got = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        return "FAIL", f"returned {type(out).__name__} {out!r}, not a number{warned}"
    if got.shape != want.shape and got.size == want.size:
        got = got.reshape(want.shape)  # a float for a 0-d answer, a list for a vector
    if got.shape != want.shape:
        return "FAIL", (
            f"returned shape {got.shape}, expected {want.shape or 'one number'}: "
            f"{'return one number, not one per row' if want.ndim == 0 else 'one value per pair'}"
        )
    if _close(got, want, case.rtol, case.atol):
        return "PASS", _show(got + 0.0)
    diff = f"expected {_show(want)}, got {_show(got)}"
    if want.ndim:  # name the worst entry, not the whole array
        with np.errstate(invalid="ignore"):
            m = int(np.nanargmax(np.where(np.isfinite(got), np.abs(got - want), np.inf)))
        diff = f"entry {m}: expected {_show(want[m])}, got {_show(got[m])}"
    if not np.all(np.isfinite(got)):
        return "FAIL", f"{diff}: {case.nonfinite_hint}{warned}"
    for value, hint in case.known:
        if _close(got, np.asarray(value, dtype=float), case.rtol, case.atol):
            return "FAIL", f"{diff}: {hint}"
    imprecise = _imprecise(got, want, case)
    if imprecise:
        return "FAIL", f"{diff}{warned}: {imprecise}"
    return "FAIL", (
        f"{diff}{warned}: no usual mistake gives this value; compare your formula with the "
        "proposition term by term"
    )


def run_cases(fn: Callable, cases: list[Case], verbose: bool, what: str) -> bool:
    """Run every case, print one wrapped line each (when ``verbose``), return all passed."""
    verbose = as_bool(verbose, "verbose")  # "False" is truthy: only real booleans
    if not callable(fn):
        raise TypeError(f"fn must be a callable ({what}); got {type(fn).__name__}")
    results = [(case.name, *run_case(fn, case)) for case in cases]
    if any(status == "TODO" for _, status, _ in results):
        if verbose:
            name = getattr(fn, "__name__", what)
            print(f"Not attempted yet: {name} raises NotImplementedError.")
        return False
    passed = all(status == "PASS" for _, status, _ in results)
    if verbose:
        for name, status, message in results:
            line = f"{status}  {name}: {message}"
            print(textwrap.fill(line, width=80, subsequent_indent="      ", break_on_hyphens=False))
        failed = sum(status != "PASS" for _, status, _ in results)
        print("All cases pass." if passed else f"{failed} of {len(results)} cases fail.")
    return passed


def _print_wrapped(lines: list[str]) -> None:
    for line in lines:
        indent = "      " if line[:4] in ("PASS", "FAIL") else ""
        print(textwrap.fill(line, width=80, subsequent_indent=indent))


def hinted_report(fn: Callable, outcomes, *, verbose: bool, unknown: str) -> bool:
    """Report ``outcomes``, an iterable of ``(case name, passed, message, hint)``.

    A hint is printed in full once; later cases with the same hint refer back to it. If
    iterating raises NotImplementedError (the reader's stub), the report says "Not attempted
    yet" instead. ``unknown`` is the advice when cases fail with no recognised mistake.
    Returns whether every case passed.
    """
    verbose = as_bool(verbose, "verbose")  # before any case runs
    lines, all_passed, hinted, seen = [], True, False, set()
    try:
        for name, passed, message, hint in outcomes:
            all_passed &= passed
            if hint and hint in seen:  # said once in full; the next cases refer back to it
                message = message.replace(hint, "the same mistake as above")
            seen.add(hint)
            hinted |= bool(hint)
            lines.append(f"{'PASS' if passed else 'FAIL'}  {name}: {message}")
    except NotImplementedError:
        name = getattr(fn, "__name__", "the function")
        lines = [
            f"Not attempted yet: {name} raises NotImplementedError. Write its body, "
            "then run this cell again."
        ]
        all_passed = False
    else:
        if all_passed:
            lines.append("All cases pass.")
        elif hinted:
            lines.append("Some cases fail: see the hints above.")
        else:
            lines.append(
                "Some cases fail, with values that match no mistake this checker knows: " + unknown
            )
    if verbose:
        _print_wrapped(lines)
    return all_passed


def plain_report(outcomes, *, verbose: bool) -> bool:
    """Report ``outcomes``, an iterable of ``(case label, passed, message)``; a stub that
    raises NotImplementedError is "not attempted yet". Returns whether every case passed."""
    verbose = as_bool(verbose, "verbose")  # before any case runs
    try:
        results = list(outcomes)
    except NotImplementedError:
        if verbose:
            print("not attempted yet: replace the `raise NotImplementedError` with your code")
        return False
    if verbose:
        for label, passed, message in results:
            line = f"{'PASS' if passed else 'FAIL'}  {label}: {message}"
            print(textwrap.fill(line, width=80, subsequent_indent="      "))
        failed = sum(not passed for _, passed, _ in results)
        if failed:
            print(f"{failed} of {len(results)} cases fail; each FAIL line says what went wrong.")
        else:
            print("All cases pass.")
    return all(passed for _, passed, _ in results)


def call_reader(fn: Callable, args: tuple, kwargs: dict, raise_hint: str = ""):
    """Call the reader's ``fn``; return ``(out, warned, None)``, or ``(None, "", failure)``
    with ``failure = (False, message, hint)`` when it raised. NotImplementedError (the
    stub) passes through; NumPy warnings are caught and described in ``warned``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args, **kwargs)
        except NotImplementedError:
            raise
        except Exception as exc:  # a reader's error is reported, never re-raised
            message = f"raised {type(exc).__name__}: {exc}"
            if raise_hint:
                return None, "", (False, f"{message}: {raise_hint}", raise_hint)
            return None, "", (False, message, "")
    warned = f" (NumPy warned: {caught[0].message})" if caught else ""
    return out, warned, None
