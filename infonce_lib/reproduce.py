"""``python -m infonce_lib reproduce``: the book's experiments from the command line.

Each experiment lives in the library module that owns its mathematics and exposes a function
that takes no arguments and returns a :class:`Report`: the results as plain JSON-able data
(numbers unrounded), the tables as text, and the checks the book asserts. The chapter
notebooks call the same functions, so the book and the command cannot disagree.

Usage::

    python -m infonce_lib reproduce --list
    python -m infonce_lib reproduce NAME [--json PATH]

The command prints the tables and the checks and exits with status 1 if any check fails.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["EXPERIMENTS", "Check", "Experiment", "Report", "format_table", "run_experiment"]


@dataclass(frozen=True)
class Check:
    """One assertion of an experiment: what is checked, whether it held, and the evidence."""

    description: str
    passed: bool
    detail: str = ""


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
    """

    results: dict
    tables: str
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)

    def checks_text(self) -> str:
        """The checks, one line each, marked PASS or FAIL."""
        return "\n".join(
            f"[{'PASS' if c.passed else 'FAIL'}] {c.description}"
            + (f": {c.detail}" if c.detail else "")
            for c in self.checks
        )


@dataclass(frozen=True)
class Experiment:
    """A registry entry: where the experiment's function lives and what it reproduces."""

    name: str
    target: str  # "module:function", imported only when the experiment is run
    summary: str
    chapter: str

    def load(self):
        module, _, func = self.target.partition(":")
        return getattr(importlib.import_module(module), func)


# One entry per experiment, in the order of the book. Each chapter adds its own entry, e.g.
#   _register(Experiment("gaussian-patches", "infonce_lib.patches:reproduce_gaussian_patches",
#                        "InfoNCE and leave-one-out on 8x8 Gaussian patches", "chapter 3"))
EXPERIMENTS: dict[str, Experiment] = {}


def _register(*experiments: Experiment) -> None:
    for exp in experiments:
        EXPERIMENTS[exp.name] = exp


# ---- chapter 1 ----
_register(
    Experiment(
        "nce-efficiency",
        "infonce_lib.nce:reproduce_nce_efficiency",
        "MSE(NCE) / MSE(ML) against 1 + 1/nu, with noise equal to the data",
        "chapter 1",
    )
)

# ---- chapter 3 ----

_register(
    Experiment(
        "gaussian-patches",
        "infonce_lib.patches:reproduce_gaussian_patches",
        "InfoNCE, leave-one-out and the cosine critic on 8x8 Gaussian patches",
        "chapter 3",
    )
)

# ---- chapter 4 ----
_register(
    Experiment(
        "mcallester-stratos",
        "infonce_lib.limits:reproduce_mcallester_stratos",
        "McAllester & Stratos's Table 1: InfoNCE at N = 128 and DoE on 128-d Gaussians",
        "chapter 4",
    )
)

# ---- chapter 5 ----
_register(
    Experiment(
        "cosine-temperature",
        "infonce_lib.patches:reproduce_cosine_temperature",
        "the cosine critic's InfoNCE, cap and best temperature at I = 6, K = 256",
        "chapter 5",
    )
)


def run_experiment(name: str) -> Report:
    """Run the experiment registered under ``name`` and return its :class:`Report`.

    Raises
    ------
    ValueError
        If no experiment has that name.
    """
    if name not in EXPERIMENTS:
        known = ", ".join(EXPERIMENTS) or "none yet"
        raise ValueError(f"name must be one of the registered experiments ({known}); got {name!r}")
    report = EXPERIMENTS[name].load()()
    if not isinstance(report, Report):
        raise TypeError(f"experiment {name!r} returned {type(report).__name__}, not Report")
    return report


def format_table(
    headers: Sequence[str], rows: Sequence[Sequence], formats: Sequence[str] | None = None
) -> str:
    """A plain-text table with right-aligned columns.

    ``formats`` gives one format spec per column (e.g. ``".4f"``); strings are left as they
    are.

    Examples
    --------
    >>> print(format_table(["K", "bound"], [[4, 1.2345], [16, 2.5]], ["d", ".3f"]))
       K  bound
    ----  -----
       4  1.234
      16  2.500
    """
    formats = list(formats) if formats is not None else [""] * len(headers)
    cells = [
        [v if isinstance(v, str) else format(v, f) for v, f in zip(row, formats, strict=True)]
        for row in rows
    ]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    widths = [max(w, 4) for w in widths]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def _to_json(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def _finite_json(obj):
    """Replace NaN and infinities (not valid JSON) with None, recursively."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite_json(v) for v in obj]
    return obj


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m infonce_lib``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m infonce_lib", description="Reproduce the experiments of the book."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("reproduce", help="run an experiment and print its tables and checks")
    rep.add_argument("name", nargs="?", help="the experiment to run (see --list)")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit")
    rep.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)

    if args.list or not args.name:
        if not args.list:
            parser.error("reproduce needs an experiment NAME or --list")
        for exp in EXPERIMENTS.values():
            print(f"{exp.name:<22} {exp.summary} ({exp.chapter})")
        return 0
    if args.name not in EXPERIMENTS:
        known = ", ".join(EXPERIMENTS) or "none yet"
        print(f"unknown experiment {args.name!r}; known: {known}", file=sys.stderr)
        return 2
    report = run_experiment(args.name)
    print(report.tables)
    if report.checks:
        print("\nChecks")
        print(report.checks_text())
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.loads(json.dumps(report.results, default=_to_json))
        path.write_text(json.dumps(_finite_json(data), indent=2) + "\n")
        print(f"\nresults written to {path}")
    if not report.passed:
        print(f"\n{sum(not c.passed for c in report.checks)} check(s) FAILED", file=sys.stderr)
        return 1
    return 0
