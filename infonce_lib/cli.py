"""``python -m infonce_lib reproduce``: the book's experiments from the command line.

Each experiment is a module of :mod:`infonce_lib.experiments` whose ``report()`` returns a
:class:`~infonce_lib.Report`: the results as plain JSON-able data (numbers unrounded), the
tables as text, and the checks the book asserts. The chapters call the same functions, so
the book and the command cannot disagree.

Usage::

    python -m infonce_lib reproduce --list
    python -m infonce_lib reproduce NAME [--json PATH] [the experiment's own options]
    python -m infonce_lib reproduce NAME --help     # lists those options too

An experiment may define ``add_arguments(parser)`` and ``config_from_arguments(args)`` for
options of its own (``reproduce bound-family --critic joint``, for instance).

The command prints the tables and the checks and exits with status 1 if any check fails,
and with status 2 (one line on standard error, nothing run) on a usage error: an unknown
name, ``--list`` with a name, no name (after the usage line), an option before the name
that is not the command's own, or a ``--json`` path that cannot be written.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .experiments import EXPERIMENTS
from .report import Report

__all__ = ["main", "run_experiment"]

#: Exit statuses: every check held; a check failed; the command was used wrongly.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class _UsageError(Exception):
    """A mistake on the command line: reported in one line, exit status 2."""


def run_experiment(name: str, config=None) -> Report:
    """Run the experiment registered under ``name`` (its default configuration, or
    ``config`` built from its own command-line options).

    Raises
    ------
    ValueError
        If no experiment has that name.
    """
    if name not in EXPERIMENTS:
        known = ", ".join(EXPERIMENTS) or "none yet"
        raise ValueError(f"name must be one of the registered experiments ({known}); got {name!r}")
    module = EXPERIMENTS[name]
    report = module.report() if config is None else module.report(config)
    if not isinstance(report, Report):
        raise TypeError(f"experiment {name!r} returned {type(report).__name__}, not Report")
    return report


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


def _check_json_path(text: str) -> Path:
    """The ``--json`` path, if it can be written; else a :class:`_UsageError` saying why.

    Checked before the experiment runs, so a mistake costs nothing. Missing parent
    directories are created later, when the results are written.
    """
    if not text.strip():
        raise _UsageError("--json needs a file name; got an empty one")
    path = Path(text)
    if path.is_dir():
        raise _UsageError(f"--json {text}: is a directory; give a file name")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise _UsageError(f"--json {text}: {parent} is not a directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise _UsageError(f"--json {text}: the file is not writable")
    if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise _UsageError(f"--json {text}: cannot create files in {parent}")
    return path


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are :class:`_UsageError` (one line, status 2)."""

    def error(self, message: str):
        raise _UsageError(message)


def _parser(options_of=None) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The command's parser and its ``reproduce`` subparser, with the own options of the
    experiment module ``options_of`` (if it has any) in a group of their own."""
    parser = _Parser(
        prog="python -m infonce_lib",
        description="Reproduce the experiments of the book.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    rep = sub.add_parser(
        "reproduce",
        help="run an experiment and print its tables and checks",
        description="Run an experiment of the book and print its tables and checks.",
        epilog="`reproduce NAME --help` also lists the options of experiment NAME.",
    )
    rep.add_argument("name", nargs="?", help="the experiment to run (see --list)")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit")
    rep.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    if hasattr(options_of, "add_arguments"):
        options_of.add_arguments(rep.add_argument_group(f"options of {options_of.NAME}"))
    return parser, rep


_OWN = ("--list", "--json", "--help")  # the options of `reproduce` itself


def _own_option(word: str) -> str | None:
    """The option of ``reproduce`` itself that ``word`` is (``--js``, ``--json=F``), or None."""
    if word == "-h":
        return "--help"
    flag = word.split("=", 1)[0]
    found = [o for o in _OWN if flag.startswith("--") and len(flag) > 2 and o.startswith(flag)]
    return found[0] if len(found) == 1 else None


def _name_position(words: list[str]) -> int | None:
    """Where the experiment's name is: the first word after ``reproduce`` that is neither an
    option nor the value of ``--json``. Before it only the command's own options may stand
    (an experiment's own options go after its name); anything else is a usage error."""
    if "reproduce" not in words:
        return None
    at = words.index("reproduce") + 1
    while at < len(words):
        word = words[at]
        if not word.startswith("-"):
            return at
        option = _own_option(word)
        if option is None:
            raise _UsageError(
                f"unrecognized option {word!r} (an experiment's own options go after its name)"
            )
        at += 2 if option == "--json" and "=" not in word else 1
    return None


def _parse(argv: Sequence[str] | None) -> tuple[argparse.Namespace, Path | None]:
    """Parse and check everything that can be checked before an experiment runs: with the
    named experiment's own options, so that ``NAME --help`` lists them and an option of
    another experiment is an error."""
    words = list(sys.argv[1:] if argv is None else argv)
    at = _name_position(words)
    module = None
    if at is not None:
        module = EXPERIMENTS.get(words[at])
        if module is None:  # reported even beside --help: the name is what is wrong
            known = ", ".join(EXPERIMENTS) or "none yet"
            raise _UsageError(f"unknown experiment {words[at]!r}; known: {known}")
    args = _parser(module)[0].parse_args(words)  # --help prints the help and exits here
    if args.list:
        if args.name is not None or args.json is not None:
            raise _UsageError("reproduce --list takes no experiment name and no --json")
        return args, None
    if args.name is None:
        _parser()[1].print_usage(sys.stderr)
        raise _UsageError("reproduce needs an experiment NAME, or --list to see them")
    return args, (_check_json_path(args.json) if args.json is not None else None)


def _write_json(path: Path, results: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(json.dumps(results, default=_to_json))
    path.write_text(json.dumps(_finite_json(data), indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m infonce_lib``; returns the exit status."""
    try:
        args, json_path = _parse(argv)
    except _UsageError as exc:
        print(f"python -m infonce_lib: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.list:
        for module in EXPERIMENTS.values():
            print(f"{module.NAME:<22} {module.SUMMARY} ({module.CHAPTER})")
        return EXIT_OK
    module = EXPERIMENTS[args.name]
    config = None
    if hasattr(module, "add_arguments"):  # args holds its options (and their defaults)
        try:
            config = module.config_from_arguments(args)
        except (TypeError, ValueError) as exc:
            print(f"python -m infonce_lib: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    report = run_experiment(args.name, config)
    print(report.tables)
    if report.checks:
        print("\nChecks")
        print(report.checks_text())
    if json_path is not None:
        _write_json(json_path, report.results)
        print(f"\nresults written to {json_path}")
    if not report.passed:
        print(f"\n{len(report.failed)} check(s) FAILED", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
