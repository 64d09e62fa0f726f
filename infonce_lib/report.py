"""What an experiment hands back: its checks, its report, and plain-text tables.

No mathematics here. Every experiment of :mod:`infonce_lib.experiments` returns a
:class:`Report` (JSON-able results, the tables as text, the checks); the command line
prints it and the chapters assert its verdict with :meth:`Report.raise_if_failed`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._validation import as_bool, check_array_type

__all__ = ["Check", "Report", "format_table"]


@dataclass(frozen=True)
class Check:
    """One assertion of an experiment: what is checked, whether it held, and the evidence.

    ``passed`` must be a real boolean (Python's or NumPy's, stored as a Python bool): a
    string such as ``"False"`` is truthy and would report a failed check as passed, so it
    is refused with a ``TypeError``, as are numbers and None.

    Examples
    --------
    >>> Check("x is positive", True, "x = 1.25").line()
    '[PASS] x is positive: x = 1.25'
    """

    description: str
    passed: bool
    detail: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "passed", as_bool(self.passed, "passed"))

    def line(self) -> str:
        """The check on one line, marked PASS or FAIL."""
        mark = "PASS" if self.passed else "FAIL"
        return f"[{mark}] {self.description}" + (f": {self.detail}" if self.detail else "")


@dataclass
class Report:
    """What an experiment returns.

    Attributes
    ----------
    results : dict
        JSON-able results (numbers unrounded); written by ``--json``.
    tables : str
        The tables as printed text.
    checks : list of Check
        The checks the chapter asserts.

    Examples
    --------
    >>> report = Report({"x": 1.25}, "x = 1.25", [Check("x is positive", True, "1.25 > 0")])
    >>> report.passed
    True
    >>> print(report.checks_text())
    [PASS] x is positive: 1.25 > 0
    >>> report.raise_if_failed()  # nothing happens: every check held
    """

    results: dict
    tables: str
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        """The checks that did not hold."""
        return [c for c in self.checks if not c.passed]

    def checks_text(self, width: int | None = None) -> str:
        """The checks, one each, marked PASS or FAIL.

        Parameters
        ----------
        width : int, optional
            Wrap each check to this many columns, continuation lines indented under the
            description; by default each check is one line, as the command prints them.

        Examples
        --------
        >>> report = Report({}, "", [Check("a long description", False, "the evidence")])
        >>> print(report.checks_text(width=24))
        [FAIL] a long
               description: the
               evidence
        """
        lines = [c.line() for c in self.checks]
        if width is None:
            return "\n".join(lines)
        if isinstance(width, bool) or not isinstance(width, int):
            raise TypeError(f"width must be an int; got {type(width).__name__}")
        if width < 20:
            raise ValueError(f"width must be at least 20 columns; got {width}")
        indent = " " * len("[PASS] ")
        return "\n".join(textwrap.fill(s, width=width, subsequent_indent=indent) for s in lines)

    def raise_if_failed(self) -> None:
        """Raise ``AssertionError`` listing the failed checks, if any; else return None.

        For a chapter that asserts the verdict of an experiment without copying its
        thresholds.

        Examples
        --------
        >>> Report({}, "", [Check("impossible", False, "as designed")]).raise_if_failed()
        Traceback (most recent call last):
        ...
        AssertionError: 1 of 1 check(s) failed:
        [FAIL] impossible: as designed
        """
        failed = self.failed
        if failed:
            listed = "\n".join(c.line() for c in failed)
            raise AssertionError(f"{len(failed)} of {len(self.checks)} check(s) failed:\n{listed}")


def format_table(
    headers: Sequence[str], rows: Sequence[Sequence], formats: Sequence[str] | None = None
) -> str:
    """A plain-text table with right-aligned columns.

    ``formats`` gives one format spec per column (e.g. ``".4f"``); strings are left as they
    are. Every row must have one cell per header: a ragged row raises ``ValueError`` naming
    it (``rows[i]``); a masked array is refused (``TypeError``), as everywhere in the
    library.

    Examples
    --------
    >>> print(format_table(["K", "bound"], [[4, 1.2345], [16, 2.5]], ["d", ".3f"]))
       K  bound
    ----  -----
       4  1.234
      16  2.500
    """
    formats = list(formats) if formats is not None else [""] * len(headers)
    if len(formats) != len(headers):
        raise ValueError(
            f"formats must give one spec per column ({len(headers)}); got {len(formats)}"
        )
    check_array_type(rows, "rows")
    cells = []
    for i, row in enumerate(rows):
        check_array_type(row, f"rows[{i}]")
        if isinstance(row, str) or not hasattr(row, "__len__"):
            raise TypeError(f"rows[{i}] must be a sequence of cells; got {type(row).__name__}")
        if len(row) != len(headers):
            raise ValueError(
                f"rows[{i}] must have one cell per column ({len(headers)} headers); got {len(row)}"
            )
        cells.append(
            [v if isinstance(v, str) else format(v, f) for v, f in zip(row, formats, strict=True)]
        )
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    widths = [max(w, 4) for w in widths]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)
