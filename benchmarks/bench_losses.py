"""Benchmarks for chapter 2's losses: speed against PyTorch, and memory of the chunked NT-Xent.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_losses.py            # everything (about 2 minutes)
    .venv/bin/python benchmarks/bench_losses.py --quick    # skip N = 16,384

Everything runs on one thread: the script sets OPENBLAS_NUM_THREADS=1 (and OMP/MKL) before
NumPy is imported and calls ``torch.set_num_threads(1)``. PyTorch is optional (install it
into the venv with ``.venv/bin/pip install torch==2.13.0``); without it the PyTorch columns
are skipped. The test suite never needs it.

1. ``info_nce_loss`` at N = 32, 256 and 2048 (D = 64 and 512 each), tau = 0.1, against
   PyTorch's ``cross_entropy(Z1 @ Z2.T / tau, arange(N))`` on the same float64 arrays.
   Timings are medians over interleaved rounds, so a burst of load on a shared machine hits
   both alike.
2. ``nt_xent_loss`` dense (``chunk_size=None``) against chunked (``chunk_size=1024``):
   median time, and the extra peak memory of one call measured in a fresh subprocess as
   the rise of the peak resident set size (VmHWM, reset through /proc/self/clear_refs
   after the inputs are made; ``resource.getrusage`` where that is not available).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import format_rows, median_times, row  # noqa: E402

D_NTXENT = 128  # SimCLR's projection dimension
TAU_NTXENT = 0.5


# ---------------------------------------------------------------- helpers


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


INFO_NCE_SIZES = ((32, 64), (32, 512), (256, 64), (256, 512), (2048, 64), (2048, 512))  # (N, D)


def bench_info_nce(rounds: int, sizes=INFO_NCE_SIZES, tau: float = 0.1) -> list:
    """info_nce_loss against torch's cross_entropy on the same float64 logits, one thread."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        torch = None
    rows = []
    for n, d in sizes:
        rng = np.random.default_rng(n)
        Z1 = rng.normal(size=(n, d))
        Z2 = rng.normal(size=(n, d))
        funcs = {"ours": lambda Z1=Z1, Z2=Z2: il.info_nce_loss(Z1, Z2, tau)}
        notes = f"D = {d}, tau = {tau}, float64, median of {rounds} interleaved rounds"
        if torch is not None:
            torch.set_num_threads(1)
            T1, T2 = torch.from_numpy(Z1), torch.from_numpy(Z2)
            labels = torch.arange(n)
            funcs["torch"] = lambda T1=T1, T2=T2, labels=labels: F.cross_entropy(
                T1 @ T2.T / tau, labels
            ).item()
            ours = il.info_nce_loss(Z1, Z2, tau)
            theirs = F.cross_entropy(T1 @ T2.T / tau, labels).item()
            notes += f"; values agree to {abs(ours - theirs) / abs(theirs):.0e} relative"
        inner = max(1, 20_000 // (n * 8))
        times = median_times(funcs, rounds=rounds, inner=inner)
        peer_t = times.get("torch")
        rows.append(
            row(
                "info_nce_loss vs PyTorch",
                f"N = {n}, D = {d}",
                times["ours"],
                peer=f"torch {torch.__version__} cross_entropy" if torch else None,
                peer_value=peer_t,
                target="ratio <= 1",
                met=None if peer_t is None else times["ours"] <= peer_t,
                notes=notes if torch else "PyTorch not installed (pip install torch==2.13.0)",
            )
        )
    return rows


def bench_nt_xent(sizes, rounds: int, chunk: int = 1024) -> list:
    """Chunked against dense NT-Xent: time, extra peak memory (OS), and agreement."""
    rows = []
    for n in sizes:
        z1, z2 = _views(n, D_NTXENT)
        times = median_times(
            {
                "dense": lambda z1=z1, z2=z2: il.nt_xent_loss(z1, z2, TAU_NTXENT),
                "chunked": lambda z1=z1, z2=z2: il.nt_xent_loss(
                    z1, z2, TAU_NTXENT, chunk_size=chunk
                ),
            },
            rounds=rounds,
            inner=1,
        )
        dense_v = il.nt_xent_loss(z1, z2, TAU_NTXENT)
        chunk_v = il.nt_xent_loss(z1, z2, TAU_NTXENT, chunk_size=chunk)
        rss_d = _run_child("dense", n, D_NTXENT, chunk, "rss")
        rss_c = _run_child("chunked", n, D_NTXENT, chunk, "rss")
        rel = abs(chunk_v - dense_v) / dense_v
        rows.append(
            row(
                "nt_xent_loss chunked vs dense: time",
                f"N = {n}",
                times["chunked"],
                peer="dense (chunk_size=None)",
                peer_value=times["dense"],
                target="ratio <= 1.5",
                met=times["chunked"] <= 1.5 * times["dense"],
                notes=f"chunk_size = {chunk}, D = {D_NTXENT}; values differ by {rel:.0e}",
            )
        )
        rows.append(
            row(
                "nt_xent_loss chunked vs dense: extra peak RSS",
                f"N = {n}",
                rss_c["extra_bytes"] / 1e6,
                unit="MB",
                peer="dense (chunk_size=None)",
                peer_value=rss_d["extra_bytes"] / 1e6,
                notes=f"rise of the peak resident set in a fresh process ({rss_c['method']})",
            )
        )
    return rows


def bench_large(n: int = 16_384, chunk: int = 1024) -> list:
    """The chunked NT-Xent where dense float64 logits would take 8.6 GB."""
    dense_bytes = (2 * n) ** 2 * 8
    budget = 0.05 * dense_bytes
    rss = _run_child("chunked", n, D_NTXENT, chunk, "rss")
    z1, z2 = _views(n, D_NTXENT)
    banded = _banded_dense_nt_xent(z1, z2, TAU_NTXENT)
    rel = abs(rss["value"] - banded) / banded
    return [
        row(
            "nt_xent_loss chunked at N = 16,384",
            "extra peak RSS",
            rss["extra_bytes"] / 1e6,
            unit="MB",
            peer="5% of dense float64 logits",
            peer_value=budget / 1e6,
            target="< 5% of dense",
            met=rss["extra_bytes"] < budget and rel < 1e-12,
            notes=(
                f"dense logits would be {dense_bytes / 1e9:.2f} GB; time {rss['seconds']:.1f} s; "
                f"equals the dense arithmetic (in bands) to {rel:.0e}"
            ),
        )
    ]


def run(quick: bool = False, rounds: int = 15) -> list:
    """All of this module's rows (``quick`` skips N = 16,384 and uses fewer rounds)."""
    rounds = 5 if quick else rounds
    rows = bench_info_nce(rounds)
    rows += bench_nt_xent([1024, 2048, 4096], rounds=max(3, rounds // 3))
    if not quick:
        rows += bench_large()
    return rows


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
    print(format_rows(run(args.quick, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
