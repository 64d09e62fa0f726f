"""A straightforward, independent implementation of the Gaussian-patch experiment.

This is the yardstick for ``benchmarks/bench_patches.py``: the protocol of chapter 3 (and the
cosine-critic table of chapter 5) written the obvious way, with NumPy and SciPy only and no
import from :mod:`infonce_lib`. Every quantity gets its own full ``(B, K, K)`` array, every
log-sum-exp is :func:`scipy.special.logsumexp` on that array, and the best temperature is
found by :func:`scipy.optimize.minimize_scalar` re-evaluating the bound from scratch. It is
meant to be easy to check by eye against the protocol described in chapter 3, not fast.

Run it on its own (one BLAS thread, as the benchmark does)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/baseline_gaussian_patches.py [--json PATH]

It returns the same JSON schema as ``python -m infonce_lib reproduce gaussian-patches``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import logsumexp

SIDE = 8
D = SIDE * SIDE
LENGTH_SCALE = 1.5
M = 65_536
LEVELS = (1.0, 3.0, 6.0, 12.0)
KS = (4, 16, 64, 256, 1024)
COSINE_I, COSINE_K = 6.0, 256
TAUS = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def field_covariance():
    coords = np.array([(a // SIDE, a % SIDE) for a in range(D)], dtype=float)
    sq = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(axis=-1)
    return np.exp(-sq / (2 * LENGTH_SCALE**2))


def information(sigma, lam):
    return 0.5 * np.sum(np.log(1 + lam / sigma**2))


def information_logdet(sigma, C):
    Cy = C + sigma**2 * np.eye(D)
    J = np.block([[C, C], [C, Cy]])
    return 0.5 * (np.linalg.slogdet(C)[1] + np.linalg.slogdet(Cy)[1] - np.linalg.slogdet(J)[1])


def sigma_for(target, lam):
    root = brentq(
        lambda s: information(np.exp(s), lam) - target,
        np.log(1e-8),
        np.log(1e8),
        xtol=1e-14,
        rtol=4 * np.finfo(float).eps,
    )
    return float(np.exp(root))


def log_p_y_given_x_pairs(X, Y, sigma):
    """F[b, i, j] = log N(y_bi; x_bj, sigma^2 I)."""
    sq = (
        (Y**2).sum(-1)[:, :, None]
        - 2 * np.matmul(Y, X.transpose(0, 2, 1))
        + (X**2).sum(-1)[:, None, :]
    )
    return -sq / (2 * sigma**2) - 0.5 * D * np.log(2 * np.pi * sigma**2)


def log_p_y(y, Cy):
    _, logdet = np.linalg.slogdet(2 * np.pi * Cy)
    sol = np.linalg.solve(Cy, y.T).T
    return -0.5 * (y * sol).sum(-1) - 0.5 * logdet


def infonce(F, axis):
    K = F.shape[-1]
    diag = np.diagonal(F, axis1=1, axis2=2)
    return np.log(K) + (diag - logsumexp(F, axis=axis)).mean(axis=1)


def leave_one_out(F):
    K = F.shape[-1]
    diag = np.diagonal(F, axis1=1, axis2=2)
    G = F.copy()
    G[:, np.arange(K), np.arange(K)] = -np.inf
    return np.log(K - 1) + (diag - logsumexp(G, axis=2)).mean(axis=1)


def mean_se(v):
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size))


def run():
    C = field_covariance()
    lam, U = np.linalg.eigh(C)
    lam = np.clip(lam, 0, None)
    L = (U * np.sqrt(lam)) @ U.T  # the symmetric square root, as the library
    levels, bounds, batch_max, ratio_x_gap, ratio_y_wins, cos_data = [], [], [], [], [], None
    for index, target in enumerate(LEVELS):
        sigma = sigma_for(target, lam)
        rng = np.random.default_rng(index)
        z = rng.standard_normal((M, D))
        x = z @ L.T
        eps = rng.standard_normal((M, D))
        y = x + sigma * eps
        Cy = C + sigma**2 * np.eye(D)
        lpy = log_p_y(y, Cy)
        lpyx = -((y - x) ** 2).sum(-1) / (2 * sigma**2) - 0.5 * D * np.log(2 * np.pi * sigma**2)
        ratio = lpyx - lpy
        mean, se = mean_se(ratio)
        levels.append(
            {
                "I": target,
                "sigma": sigma,
                "mean_log_ratio": mean,
                "se": se,
                "z": (mean - target) / se,
                "mi_gap": information(sigma, lam) - information_logdet(sigma, C),
                "max_cov_error": float(np.abs(np.cov(x, rowvar=False) - C).max()),
            }
        )
        for K in KS:
            B = M // K
            X = x.reshape(B, K, D)
            Y = y.reshape(B, K, D)
            F = log_p_y_given_x_pairs(X, Y, sigma)
            R = F - lpy.reshape(B, K)[:, :, None]
            nce = infonce(F, axis=2)
            loo = leave_one_out(F)
            nce_ratio = infonce(R, axis=2)
            nce_y = infonce(F, axis=1)
            nce_y_ratio = infonce(R, axis=1)
            m1, s1 = mean_se(nce)
            m2, s2 = mean_se(loo)
            bounds.append(
                {"I": target, "K": K, "infonce": m1, "infonce_se": s1, "loo": m2, "loo_se": s2}
            )
            batch_max.append(float((nce - np.log(K)).max()))
            ratio_x_gap.append(float(np.abs(nce - nce_ratio).max()))
            ratio_y_wins.append(bool(nce_y_ratio.mean() > nce_y.mean()))
            if target == COSINE_I and K == COSINE_K:
                cos_data = (X, Y, m1)
    X, Y, optimal = cos_data
    Xn = X / np.linalg.norm(X, axis=-1, keepdims=True)
    Yn = Y / np.linalg.norm(Y, axis=-1, keepdims=True)
    S = np.matmul(Yn, Xn.transpose(0, 2, 1))
    K = COSINE_K

    def caps(tau):  # the score-range cap and the cap unit-norm embeddings can attain
        return (
            float(np.log(K) - np.log(1 + (K - 1) * np.exp(-2 / tau))),
            float(np.log(K) - np.log(1 + (K - 1) * np.exp(-K / ((K - 1) * tau)))),
        )

    rows, cap_excess = [], []
    for tau in TAUS:
        v = infonce(S / tau, axis=2)
        cap, attainable = caps(tau)
        m, s = mean_se(v)
        rows.append(
            {
                "tau": tau,
                "infonce": m,
                "se": s,
                "cap": cap,
                "max_minus_cap": float(v.max() - cap),
                "attainable_cap": attainable,
                "max_minus_attainable_cap": float(v.max() - attainable),
            }
        )
        cap_excess.append(float(v.max() - cap))
    best = minimize_scalar(
        lambda beta: -infonce(beta * S, axis=2).mean(), bounds=(0.5, 500), method="bounded"
    )
    best_tau = float(1 / best.x)
    best_max = float(infonce(best.x * S, axis=2).max())
    best_cap, best_attainable = caps(best_tau)
    cosine = {
        "I": COSINE_I,
        "K": K,
        "rows": rows,
        "best_tau": best_tau,
        "best_infonce": float(-best.fun),
        "best_cap": best_cap,
        "best_max_minus_cap": best_max - best_cap,
        "best_attainable_cap": best_attainable,
        "best_max_minus_attainable_cap": best_max - best_attainable,
        "optimal_critic": optimal,
    }
    checks = {
        "max_batch_minus_logK": max(batch_max),
        "max_ratio_x_gap": max(ratio_x_gap),
        "ratio_y_wins_everywhere": all(ratio_y_wins),
        "max_cap_excess": max(cap_excess),
    }
    return {"levels": levels, "bounds": bounds, "cosine": cosine}, checks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    t0 = time.perf_counter()
    results, checks = run()
    elapsed = time.perf_counter() - t0
    for row in results["levels"]:
        print(row)
    for row in results["bounds"]:
        print(row)
    print(results["cosine"])
    print(checks)
    print(f"baseline: {elapsed:.1f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
