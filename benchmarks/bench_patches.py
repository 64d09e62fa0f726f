"""Time ``reproduce gaussian-patches`` against the straightforward baseline, side by side.

Both run as fresh processes with one BLAS thread, in alternating order, ``--repeat`` times
each; each writes its results as JSON. The script prints wall-clock and CPU times (min and
median) and their ratio, then checks that the two agree to the precision the tables print
(4 decimals; z-scores to 2; the log-determinant gap below 1e-9). Exit status 1 on any
disagreement.

    python benchmarks/bench_patches.py [--repeat 3]

The CPU time (user + system of the child) is less sensitive than the wall-clock time to
other processes on the machine; both are reported, with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _run(cmd: list[str]) -> tuple[float, float]:
    """Run ``cmd``; return its wall-clock and CPU (user + system) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        cmd, cwd=ROOT, env={**os.environ, **ONE_THREAD}, check=True, stdout=subprocess.DEVNULL
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _printed(key: str, value):
    """A value as the tables print it."""
    if key == "mi_gap":
        return abs(value) < 1e-9
    if key == "z":
        return round(value, 2)
    if isinstance(value, float):
        return round(value, 4)
    return value


def _compare(a, b, path: str = "") -> list[str]:
    if isinstance(a, dict):
        if set(a) != set(b):
            return [f"{path}: keys differ: {sorted(set(a) ^ set(b))}"]
        out = []
        for k in a:
            if isinstance(a[k], dict | list):
                out += _compare(a[k], b[k], f"{path}/{k}")
            elif _printed(k, a[k]) != _printed(k, b[k]):
                out.append(f"{path}/{k}: {a[k]!r} vs {b[k]!r}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: lengths differ"]
        return [
            m
            for i, (u, v) in enumerate(zip(a, b, strict=True))
            for m in _compare(u, v, f"{path}[{i}]")
        ]
    return []


def measure(repeat: int, verbose: bool = True) -> tuple[dict, list[str]]:
    """Run both commands ``repeat`` times, alternating; return the times and the mismatches."""
    with tempfile.TemporaryDirectory() as tmp:
        base_json, ours_json = Path(tmp) / "baseline.json", Path(tmp) / "ours.json"
        commands = {
            "baseline": [sys.executable, "benchmarks/baseline_gaussian_patches.py", "--json",
                         str(base_json)],
            "infonce_lib": [sys.executable, "-m", "infonce_lib", "reproduce", "gaussian-patches",
                            "--json", str(ours_json)],
        }  # fmt: skip
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for r in range(repeat):
            order = list(commands) if r % 2 == 0 else list(reversed(commands))
            for name in order:
                wall, cpu = _run(commands[name])
                times[name].append((wall, cpu))
                if verbose:
                    print(f"  run {r + 1} {name:<12} wall {wall:6.2f} s   cpu {cpu:6.2f} s")
        mismatches = _compare(json.loads(base_json.read_text()), json.loads(ours_json.read_text()))
    return times, mismatches


def run(quick: bool = False) -> list[dict]:
    """Rows for ``make bench``: wall and CPU medians of ours against the baseline."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from common import row

    repeat = 1 if quick else 3
    times, mismatches = measure(repeat, verbose=False)
    rows = []
    for i, kind in enumerate(("wall", "CPU")):
        ours = statistics.median(t[i] for t in times["infonce_lib"])
        base = statistics.median(t[i] for t in times["baseline"])
        rows.append(
            row(
                "reproduce gaussian-patches vs baseline",
                f"{kind} time",
                ours,
                peer="benchmarks/baseline_gaussian_patches.py",
                peer_value=base,
                target="ratio <= 0.1",
                met=ours <= 0.1 * base and not mismatches,
                notes=(
                    f"medians of {repeat} alternating runs, fresh processes, one BLAS thread; "
                    + (
                        "results agree at printed precision"
                        if not mismatches
                        else f"{len(mismatches)} results DIFFER"
                    )
                ),
            )
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    times, mismatches = measure(args.repeat)
    print(f"load average after:  {os.getloadavg()}")

    def stats(name: str, i: int) -> tuple[float, float]:
        vals = [t[i] for t in times[name]]
        return min(vals), statistics.median(vals)

    print(f"\n{'':<12} {'wall min':>9} {'wall med':>9} {'cpu min':>9} {'cpu med':>9}")
    for name in times:
        (wmin, wmed), (cmin, cmed) = stats(name, 0), stats(name, 1)
        print(f"{name:<12} {wmin:9.2f} {wmed:9.2f} {cmin:9.2f} {cmed:9.2f}")
    (bw, bwm), (bc, bcm) = stats("baseline", 0), stats("baseline", 1)
    (ow, owm), (oc, ocm) = stats("infonce_lib", 0), stats("infonce_lib", 1)
    print(f"{'speed-up':<12} {bw / ow:9.1f} {bwm / owm:9.1f} {bc / oc:9.1f} {bcm / ocm:9.1f}")
    if mismatches:
        print(f"\n{len(mismatches)} value(s) differ at printed precision:")
        print("\n".join(mismatches))
        return 1
    print("\nall results agree at printed precision (4 decimals; z to 2; mi_gap < 1e-9)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
