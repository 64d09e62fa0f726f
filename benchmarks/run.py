"""``make bench``: every benchmark in one run, one table, one JSON file.

Runs the modules listed in ``MODULES`` (each exposes ``run(quick) -> rows``, see
``common.py``), prints all rows as one table, and writes them with the machine's context to
``_build/bench/results.json``. ``--quick`` makes a shorter run (fewer rounds, no N = 16,384).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import describe_machine, format_rows, machine_speed  # noqa: E402

MODULES = ["bench_losses", "bench_patches", "bench_notebooks", "bench_trainer"]


def _context() -> dict:
    import numpy as np

    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[:3]
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch_version,
        "cpus": os.cpu_count(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "load_average_at_start": load,
        "machine_speed": machine_speed(),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a shorter run")
    parser.add_argument("--out", default=str(HERE.parent / "_build" / "bench" / "results.json"))
    args = parser.parse_args(argv)
    context = _context()
    rows = []
    for name in MODULES:
        module = importlib.import_module(name)
        print(f"running {name} ...", flush=True)
        rows += module.run(quick=args.quick)
    print()
    print(format_rows(rows))
    print(describe_machine(context["machine_speed"]))
    print()
    for r in rows:
        if r["notes"]:
            print(f"- {r['benchmark']}, {r['case']}: {r['notes']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"context": context, "rows": rows}, indent=2) + "\n")
    print(f"\ncontext: {context}\nresults written to {out}")
    missed = [r for r in rows if r["met"] is False]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
