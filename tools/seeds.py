"""Execute every chapter with other seeds and report the checks that fail: ``make seeds``.

Usage (from the repository root, inside the project's virtual environment)::

    python tools/seeds.py chapters/04_bound_family.ipynb       # seeds 1 to 10
    python tools/seeds.py --seeds 1-3,7 --jobs 2 chapters/*.ipynb

Every chapter draws its random numbers from ``SEED = il.book_seed()``, which reads
``INFONCE_SEED`` (0, the default, gives the stored outputs). For each chapter and each seed
``k`` this runs a copy of the notebook top to bottom in a fresh kernel with
``INFONCE_SEED=k`` and one BLAS thread, carrying on past a failing cell, and records every
cell that raised (a cell tagged ``raises-exception`` is expected to raise; one that does not
is recorded too). It prints, per chapter, each failing statement with the seeds it failed
for (a NameError after an earlier failure is listed as "then" and not counted: it is that
failure's consequence), and exits with status 1 if any statement fails for more than
``--allowed`` seeds (default 1): a conclusion the book draws from a random experiment must
hold for other draws too, not only for the one printed. Nothing is written to the notebooks.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import copy
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# IPython marks the failing line of a cell with an arrow: "----> 12 assert x < y".
ARROW = re.compile(r"^-*> *(\d+) (.*)$")


@dataclass(frozen=True)
class Failure:
    """One cell of one run that raised (or did not raise when it should have)."""

    cell: int
    statement: str  # the failing line of the cell, as IPython marked it
    error: str  # the exception's name and first line of its message
    # A NameError in a cell after another cell failed is most likely that failure's
    # consequence (a name the failed cell never defined): listed, but not counted.
    consequence: bool = False

    def key(self) -> tuple[int, str]:
        return self.cell, self.statement


def parse_seeds(text: str) -> list[int]:
    """``"1-10"`` or ``"1-3,7"`` as a sorted list of distinct seeds."""
    seeds: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        start, stop = int(lo), int(hi or lo)
        if start < 0 or stop < start:
            raise argparse.ArgumentTypeError(f"not a seed range: {part!r}")
        seeds.update(range(start, stop + 1))
    return sorted(seeds)


def _failing_line(traceback: list[str], cell_source: str) -> str:
    """The statement of the cell that raised: the last arrow that points into the cell."""
    lines = cell_source.splitlines()
    found = ""
    for frame in traceback:
        for line in ANSI.sub("", frame).splitlines():
            match = ARROW.match(line.strip())
            if not match:
                continue
            number, text = int(match.group(1)), match.group(2).strip()
            if 0 < number <= len(lines) and lines[number - 1].strip() == text:
                found = text
    return found or "(the cell, line unknown)"


def failures(nb: nbformat.NotebookNode) -> list[Failure]:
    """The cells of an executed notebook that raised, and the tagged ones that did not."""
    found: list[Failure] = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        expected = "raises-exception" in cell.metadata.get("tags", [])
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors and not expected:
            err = errors[0]
            message = (err.get("evalue") or "").strip().splitlines()
            error = err.get("ename", "Error") + (f": {message[0][:160]}" if message else "")
            statement = _failing_line(err.get("traceback", []), cell.source)
            consequence = bool(found) and err.get("ename") == "NameError"
            found.append(Failure(index, statement, error, consequence))
        elif expected and not errors:
            found.append(Failure(index, "(tagged raises-exception)", "raised nothing"))
    return found


def run_one(path: Path, seed: int) -> tuple[Path, int, list[Failure], float]:
    """Execute a copy of ``path`` with ``INFONCE_SEED=seed``; its failures and wall time."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    work = copy.deepcopy(nb)
    env_before = os.environ.get("INFONCE_SEED")
    os.environ["INFONCE_SEED"] = str(seed)
    notebooks.pin_arithmetic()
    start = time.perf_counter()
    try:
        client = NotebookClient(
            work,
            kernel_name=notebooks.KERNELSPEC["name"],
            timeout=900,
            allow_errors=True,
            record_timing=False,
            resources={"metadata": {"path": str(path.parent.resolve())}},
            shutdown_kernel="immediate",  # the outputs are in: no graceful wait
        )
        client.execute()
    finally:
        if env_before is None:
            os.environ.pop("INFONCE_SEED", None)
        else:
            os.environ["INFONCE_SEED"] = env_before
    return path, seed, failures(work), time.perf_counter() - start


def _run_in_process(args: tuple[str, int]) -> tuple[str, int, list[Failure], float]:
    path, seed, found, seconds = run_one(Path(args[0]), args[1])
    return str(path), seed, found, seconds


def summarise(path: str, runs: dict[int, list[Failure]], allowed: int) -> tuple[list[str], bool]:
    """Lines of the report for one chapter, and whether every statement is within ``allowed``."""
    by_statement: dict[tuple[int, str], dict[int, str]] = defaultdict(dict)
    for seed, found in runs.items():
        for failure in found:
            by_statement[failure.key()][seed] = failure.error
    seeds = sorted(runs)
    consequences = {f.key() for found in runs.values() for f in found if f.consequence}
    ok = all(len(v) <= allowed for k, v in by_statement.items() if k not in consequences)
    head = f"{path}: {len(seeds)} seeds ({seeds[0]}-{seeds[-1]})" if seeds else f"{path}: no runs"
    if not by_statement:
        return [f"{head}: no check failed"], True
    lines = [f"{head}: {len(by_statement)} failing statement(s)"]
    for (cell, statement), failed in sorted(by_statement.items()):
        mark = "FAIL" if len(failed) > allowed else "ok  "
        if (cell, statement) in consequences:
            mark = "then"  # a NameError after an earlier failure: not counted
        listed = ", ".join(str(s) for s in sorted(failed))
        errors = sorted(set(failed.values()))
        lines.append(f"  [{mark}] cell {cell}: {statement}")
        lines.append(f"         failed for {len(failed)} of {len(seeds)} seeds: {listed}")
        for error in errors[:3]:
            lines.append(f"         {error}")
    return lines, ok


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="chapter notebooks")
    parser.add_argument("--seeds", type=parse_seeds, default=parse_seeds("1-10"))
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument(
        "--allowed", type=int, default=1, help="seeds a statement may fail for (default 1)"
    )
    args = parser.parse_args(argv)
    tasks = [(str(p), s) for p in args.paths for s in args.seeds]
    runs: dict[str, dict[int, list[Failure]]] = {str(p): {} for p in args.paths}
    seconds: dict[str, list[float]] = defaultdict(list)
    start = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for path, seed, found, took in pool.map(_run_in_process, tasks):
            runs[path][seed] = found
            seconds[path].append(took)
            status = "ok" if not found else f"{len(found)} failing cell(s)"
            print(f"  {path} INFONCE_SEED={seed}: {status} ({took:.1f} s)", flush=True)
    print()
    all_ok = True
    for path in runs:
        lines, ok = summarise(path, runs[path], args.allowed)
        all_ok &= ok
        print("\n".join(lines))
    total = time.perf_counter() - start
    print(f"\n{len(tasks)} runs in {total:.0f} s ({args.jobs} at a time)")
    print(
        "every failing statement is within the allowed seeds"
        if all_ok
        else f"FAILED: a statement fails for more than {args.allowed} of {len(args.seeds)} seeds"
    )
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
