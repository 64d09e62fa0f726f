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
    the target in words and whether this run met it (None: no target);
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


def machine_speed(repeats: int = 5) -> dict[str, float]:
    """Two figures that say how fast this machine is at what the book spends its time on.

    ``dgemm_gflops``: a 1024 x 1024 x 1024 float64 matrix product, one BLAS thread;
    ``exp_ns``: ``np.exp`` per float64 element over 2**20 arguments in [-50, 0]. Best of
    ``repeats`` (CPU time). Timings of the chapters and of the experiments scale roughly
    with these, so a figure measured on another machine can be compared through them.
    """
    rng = np.random.default_rng(0)
    a, b = rng.random((1024, 1024)), rng.random((1024, 1024))
    c = np.empty_like(a)
    x = -50.0 * rng.random(1 << 20)
    y = np.empty_like(x)

    def best(f) -> float:
        f()
        times = []
        for _ in range(repeats):
            t0 = time.process_time()
            f()
            times.append(time.process_time() - t0)
        return min(times)

    return {
        "dgemm_gflops": 2 * 1024**3 / best(lambda: np.matmul(a, b, out=c)) / 1e9,
        "exp_ns": best(lambda: np.exp(x, out=y)) / x.size * 1e9,
    }


def describe_machine(speed: dict[str, float]) -> str:
    """``machine_speed`` in one line."""
    return (
        f"machine: {speed['dgemm_gflops']:.1f} GFLOP/s (float64 matrix product, one thread), "
        f"np.exp {speed['exp_ns']:.1f} ns per float64 element"
    )


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
    if unit == "s":  # three significant figures or more, so that small times stay readable
        if value < 1e-3:
            return f"{value * 1e6:.1f} µs"
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
