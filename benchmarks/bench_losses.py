"""Benchmarks for chapter 2's losses: speed against PyTorch, and memory of the chunked NT-Xent.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_losses.py            # everything (about 2 minutes)
    .venv/bin/python benchmarks/bench_losses.py --quick    # skip N = 16,384

Everything runs on one thread: the script sets OPENBLAS_NUM_THREADS=1 (and OMP/MKL) before
NumPy is imported and calls ``torch.set_num_threads(1)``. PyTorch is optional (install it
into the venv with ``.venv/bin/pip install torch==2.13.0``); without it the PyTorch columns
are skipped. The test suite never needs it.

1. ``info_nce_loss`` at N = 256, D = 512, tau = 0.1 against PyTorch's
   ``cross_entropy(Z1 @ Z2.T / tau, arange(N))`` on the same float64 arrays (and, for
   reference, in float32). Timings are medians over interleaved rounds, so a burst of load
   on a shared machine hits both sides alike.
2. ``nt_xent_loss`` dense (``chunk_size=None``) against chunked (``chunk_size=1024``):
   median time, and the extra peak memory of one call measured in a fresh subprocess as
   the rise of the peak resident set size (VmHWM, reset through /proc/self/clear_refs
   after the inputs are made; ``resource.getrusage`` where that is not available) and,
   separately, with ``tracemalloc``.
3. The chunked NT-Xent at N = 16,384 (dense float64 logits would be 2N x 2N x 8 bytes =
   8.6 GB): its extra peak memory against the 5% budget, and its value against the dense
   computation done one band of 1,024 anchor rows at a time (each row's log-probability
   depends on that row of logits only, so this is the dense path's arithmetic without the
   full matrix).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

import infonce_lib as il  # noqa: E402

D_NTXENT = 128  # SimCLR's projection dimension
TAU_NTXENT = 0.5


# ---------------------------------------------------------------- helpers


def _median_times(funcs: dict, rounds: int, inner: int) -> dict[str, float]:
    """Median seconds per call of each function, over interleaved rounds of ``inner`` calls."""
    for f in funcs.values():  # warm up
        for _ in range(3):
            f()
    samples: dict[str, list[float]] = {k: [] for k in funcs}
    for _ in range(rounds):
        for name, f in funcs.items():
            t0 = time.perf_counter()
            for _ in range(inner):
                f()
            samples[name].append((time.perf_counter() - t0) / inner)
    return {k: float(np.median(v)) for k, v in samples.items()}


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _views(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z1 = rng.normal(size=(n, d))
    z2 = z1 + rng.normal(size=(n, d))
    return z1, z2


def _banded_dense_nt_xent(z1: np.ndarray, z2: np.ndarray, tau: float, band: int = 1024):
    """The dense path's arithmetic, one band of anchor rows at a time (no 2N x 2N matrix)."""
    from infonce_lib.core import _mean_loss, _positive_log_probs
    from infonce_lib.losses import _unit_rows_into

    n = len(z1)
    Z = np.empty((2 * n, z1.shape[1]))
    _unit_rows_into(Z[:n], z1, "z1")
    _unit_rows_into(Z[n:], z2, "z2")
    out = np.empty(2 * n)
    for r0 in range(0, 2 * n, band):
        r1 = min(r0 + band, 2 * n)
        rows = np.arange(r0, r1)
        logits = Z[r0:r1] @ Z.T
        logits /= tau
        out[r0:r1] = _positive_log_probs(logits, (rows + n) % (2 * n), rows, overwrite=True)
    return _mean_loss(out)


# ---------------------------------------------------------------- child process


def child(kind: str, n: int, d: int, chunk: int, how: str) -> None:
    """Run one NT-Xent call and print JSON: seconds, extra peak bytes, value."""
    z1, z2 = _views(n, d)
    chunk_size = None if kind == "dense" else chunk
    if how == "tracemalloc":
        import tracemalloc

        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        t0 = time.perf_counter()
        value = il.nt_xent_loss(z1, z2, TAU_NTXENT, chunk_size=chunk_size)
        seconds = time.perf_counter() - t0
        extra = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        method = "tracemalloc"
    else:
        import resource

        if _reset_peak_rss():
            base = _status_kib("VmRSS")
            method = "VmHWM after clear_refs"
        else:
            base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            method = "ru_maxrss"
        t0 = time.perf_counter()
        value = il.nt_xent_loss(z1, z2, TAU_NTXENT, chunk_size=chunk_size)
        seconds = time.perf_counter() - t0
        peak = (
            _status_kib("VmHWM")
            if method.startswith("VmHWM")
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        )
        extra = (peak - base) * 1024
    print(json.dumps({"seconds": seconds, "extra_bytes": extra, "value": value, "method": method}))


def _run_child(kind: str, n: int, d: int, chunk: int, how: str) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, str(n), str(d), str(chunk), how]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ.copy())
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the benchmarks


def bench_info_nce(rounds: int) -> None:
    n, d, tau = 256, 512, 0.1
    rng = np.random.default_rng(0)
    Z1 = rng.normal(size=(n, d))
    Z2 = rng.normal(size=(n, d))
    funcs = {
        "infonce_lib.info_nce_loss (float64)": lambda: il.info_nce_loss(Z1, Z2, tau),
        "  of which numpy Z1 @ Z2.T alone": lambda: Z1 @ Z2.T,
    }
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        torch = None
        print("PyTorch is not installed: only the NumPy timing is shown.")
    if torch is not None:
        torch.set_num_threads(1)
        T1, T2 = torch.from_numpy(Z1), torch.from_numpy(Z2)
        T1f, T2f = T1.float(), T2.float()
        labels = torch.arange(n)
        funcs["torch cross_entropy (float64)"] = lambda: F.cross_entropy(
            T1 @ T2.T / tau, labels
        ).item()
        funcs["  of which torch T1 @ T2.T alone"] = lambda: T1 @ T2.T
        funcs["torch cross_entropy (float32)"] = lambda: F.cross_entropy(
            T1f @ T2f.T / tau, labels
        ).item()
        ours = il.info_nce_loss(Z1, Z2, tau)
        theirs = F.cross_entropy(T1 @ T2.T / tau, labels).item()
        agree = abs(ours - theirs) / abs(theirs)
    times = _median_times(funcs, rounds=rounds, inner=20)
    print(f"\n1. InfoNCE, N = {n}, D = {d}, tau = {tau}, one thread")
    print(f"   median of {rounds} interleaved rounds of 20 calls each")
    ref = times["infonce_lib.info_nce_loss (float64)"]
    rows = [[k, v * 1e6, v / ref] for k, v in times.items()]
    print(
        il_format_table(["implementation", "time (us)", "vs infonce_lib"], rows, ["", ".0f", ".3f"])
    )
    if torch is not None:
        print(f"   |infonce_lib - torch float64| / torch = {agree:.1e}")
        print(f"   torch {torch.__version__}, numpy {np.__version__}")


def bench_nt_xent(sizes: list[int], rounds: int) -> None:
    print(f"\n2. NT-Xent dense vs chunked (chunk_size = 1024), D = {D_NTXENT}, tau = {TAU_NTXENT}")
    rows = []
    for n in sizes:
        z1, z2 = _views(n, D_NTXENT)
        times = _median_times(
            {
                "dense": lambda z1=z1, z2=z2: il.nt_xent_loss(z1, z2, TAU_NTXENT),
                "chunked": lambda z1=z1, z2=z2: il.nt_xent_loss(
                    z1, z2, TAU_NTXENT, chunk_size=1024
                ),
            },
            rounds=rounds,
            inner=1,
        )
        dense_v = il.nt_xent_loss(z1, z2, TAU_NTXENT)
        chunk_v = il.nt_xent_loss(z1, z2, TAU_NTXENT, chunk_size=1024)
        rss_d = _run_child("dense", n, D_NTXENT, 1024, "rss")
        rss_c = _run_child("chunked", n, D_NTXENT, 1024, "rss")
        tm_d = _run_child("dense", n, D_NTXENT, 1024, "tracemalloc")
        tm_c = _run_child("chunked", n, D_NTXENT, 1024, "tracemalloc")
        rows.append(
            [
                n,
                (2 * n) ** 2 * 8 / 2**20,
                times["dense"],
                times["chunked"],
                times["chunked"] / times["dense"],
                rss_d["extra_bytes"] / 2**20,
                rss_c["extra_bytes"] / 2**20,
                tm_d["extra_bytes"] / 2**20,
                tm_c["extra_bytes"] / 2**20,
                abs(chunk_v - dense_v) / dense_v,
            ]
        )
    print(
        il_format_table(
            [
                "N",
                "logits MiB",
                "dense s",
                "chunked s",
                "ratio",
                "dense RSS MiB",
                "chunked RSS MiB",
                "dense tm MiB",
                "chunked tm MiB",
                "rel. diff",
            ],
            rows,
            ["d", ".0f", ".3f", ".3f", ".2f", ".1f", ".1f", ".1f", ".1f", ".1e"],
        )
    )
    print("   RSS: rise of the peak resident set during one call (fresh process);")
    print("   tm: tracemalloc peak of one call. Medians of", rounds, "rounds for the times.")


def bench_large(n: int = 16_384) -> None:
    print(f"\n3. Chunked NT-Xent at N = {n:,} (2N = {2 * n:,}), D = {D_NTXENT}, chunk_size = 1024")
    dense_bytes = (2 * n) ** 2 * 8
    budget = 0.05 * dense_bytes
    rss = _run_child("chunked", n, D_NTXENT, 1024, "rss")
    tm = _run_child("chunked", n, D_NTXENT, 1024, "tracemalloc")
    z1, z2 = _views(n, D_NTXENT)
    t0 = time.perf_counter()
    banded = _banded_dense_nt_xent(z1, z2, TAU_NTXENT)
    t_banded = time.perf_counter() - t0
    rel = abs(rss["value"] - banded) / banded
    print(
        f"   dense float64 logits would take {dense_bytes / 1e9:.2f} GB; "
        f"5% budget {budget / 1e6:.0f} MB"
    )
    print(
        f"   time {rss['seconds']:.2f} s (dense arithmetic in bands of 1024 rows: {t_banded:.2f} s)"
    )
    print(f"   extra peak RSS     {rss['extra_bytes'] / 1e6:8.1f} MB  ({rss['method']})")
    print(f"   tracemalloc peak   {tm['extra_bytes'] / 1e6:8.1f} MB")
    print(f"   of which the normalised views (2N x D float64): {2 * n * D_NTXENT * 8 / 1e6:.1f} MB")
    print(f"   loss {rss['value']:.12f}; banded dense {banded:.12f}; relative difference {rel:.1e}")
    ok = max(rss["extra_bytes"], tm["extra_bytes"]) < budget and rel < 1e-12
    print(f"   within the 5% budget and equal to 1e-12: {'yes' if ok else 'NO'}")


def il_format_table(headers, rows, formats):
    from infonce_lib.reproduce import format_table

    return format_table(headers, rows, formats)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip N = 16,384")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved timing rounds")
    parser.add_argument("--child", nargs=5, metavar=("KIND", "N", "D", "CHUNK", "HOW"))
    args = parser.parse_args(argv)
    if args.child:
        kind, n, d, chunk, how = args.child
        child(kind, int(n), int(d), int(chunk), how)
        return 0
    print(f"numpy {np.__version__}; one BLAS thread; {os.cpu_count()} CPUs")
    with open("/proc/loadavg") as fh:
        print(f"load average at start: {fh.read().split()[:3]}")
    bench_info_nce(args.rounds)
    bench_nt_xent([1024, 2048, 4096], rounds=max(3, args.rounds // 3))
    if not args.quick:
        bench_large()
    return 0


if __name__ == "__main__":
    sys.exit(main())
