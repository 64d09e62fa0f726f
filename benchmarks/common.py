"""Shared pieces of the benchmarks: one thread, interleaved medians, one row format.

Every benchmark module exposes ``run(quick: bool) -> list[dict]``; each row has the keys

``benchmark``, ``case``
    what was measured;
``ours`` and ``unit``
    our figure (seconds or MB);
``peer``, ``peer_value``
    the implementation we compare with and its figure (or None);
``ratio``
    ours / peer_value, measured side by side in the same run;
``target``, ``met``
    the target of issue 9 in words and whether this run met it (None: no target);
``notes``
    anything a reader needs to interpret the row.

``benchmarks/run.py`` (``make bench``) prints all rows as one table and writes them to
``_build/bench/results.json``.
"""

from __future__ import annotations

import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402


def median_times(funcs: dict, rounds: int, inner: int = 1, warmup: int = 2) -> dict[str, float]:
    """Median seconds per call of each function over interleaved rounds of ``inner`` calls.

    Interleaving (A, B, A, B, ...) means a burst of load from elsewhere on a shared machine
    hits every contender alike, so the ratios are fairer than back-to-back timings.
    """
    for f in funcs.values():
        for _ in range(warmup):
            f()
    samples: dict[str, list[float]] = {k: [] for k in funcs}
    for _ in range(rounds):
        for name, f in funcs.items():
            t0 = time.perf_counter()
            for _ in range(inner):
                f()
            samples[name].append((time.perf_counter() - t0) / inner)
    return {k: float(np.median(v)) for k, v in samples.items()}


def row(
    benchmark, case, ours, unit="s", peer=None, peer_value=None, target=None, met=None, notes=""
):
    """One result row (see the module docstring)."""
    ratio = None if peer_value in (None, 0) else ours / peer_value
    return {
        "benchmark": benchmark,
        "case": case,
        "ours": ours,
        "unit": unit,
        "peer": peer,
        "peer_value": peer_value,
        "ratio": ratio,
        "target": target,
        "met": met,
        "notes": notes,
    }


def _fmt(value, unit):
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1e3:.2f} ms" if value < 1 else f"{value:.2f} s"
    return f"{value:.1f} {unit}"


def format_rows(rows: list[dict]) -> str:
    """All rows as one plain-text table."""
    from infonce_lib import format_table

    table = [
        [
            r["benchmark"],
            r["case"],
            _fmt(r["ours"], r["unit"]),
            r["peer"] or "-",
            _fmt(r["peer_value"], r["unit"]),
            "-" if r["ratio"] is None else f"{r['ratio']:.3f}",
            r["target"] or "-",
            {True: "yes", False: "NO", None: "-"}[r["met"]],
        ]
        for r in rows
    ]
    headers = ["benchmark", "case", "ours", "peer", "peer's", "ratio", "target", "met"]
    return format_table(headers, table, [""] * len(headers))
