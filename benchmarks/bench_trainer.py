"""Benchmark of chapter 4's trainer: one training step of a critic against PyTorch.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_trainer.py [--quick]

One step = forward pass on a batch of K = 64 pairs (d = 20), the InfoNCE objective and its
gradient with respect to the K x K scores, the backward pass, and one Adam update: for
the joint (concat) critic of Poole et al.'s Colab, 2 hidden layers of 256 (scoring all
K^2 = 4,096 pairs), and for the separable critic, two MLPs of 2 hidden layers of 256 and an
embedding of 32. Ours is :class:`infonce_lib.JointCritic` / :class:`infonce_lib.SeparableCritic`
with :class:`infonce_lib.Adam`, in float32 (``dtype="float32"``: float32 weights, passes
and Adam; scores returned in float64) and in float64; the peer is the same network and
optimiser in PyTorch (``torch.nn.Linear`` layers, ``torch.optim.Adam``, autograd) on CPU
with one thread, in the same dtype. Medians over interleaved rounds (see
``common.median_times``). PyTorch is optional: without it the peer columns are empty.
"""

from __future__ import annotations

import argparse
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

import infonce_lib as il  # noqa: E402
from infonce_lib.bound_family import _GRADS  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import format_rows, median_times, row  # noqa: E402

K, D, HIDDEN, LAYERS, EMBED, LR = 64, 20, 256, 2, 32, 5e-4


def ours(kind: str, dtype: str):
    """One step of the library's trainer (a closure)."""
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((K, D)), rng.standard_normal((K, D))
    if kind == "joint":
        critic = il.JointCritic(D, D, hidden=HIDDEN, layers=LAYERS, dtype=dtype, seed=0)
    else:
        critic = il.SeparableCritic(
            D, D, hidden=HIDDEN, layers=LAYERS, embed=EMBED, dtype=dtype, seed=0
        )
    opt = il.Adam([critic.flat], lr=LR)

    def step():
        F, cache = critic.forward(X, Y)
        _, g = _GRADS["infonce"](F[None])
        grads = critic.backward(cache, -g[0])
        opt.step([np.concatenate([gr.ravel() for gr in grads])])

    return step


def torch_peer(kind: str, dtype: str):
    """The same step in PyTorch, or None without PyTorch."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    tdt = torch.float32 if dtype == "float32" else torch.float64
    torch.manual_seed(0)

    def mlp(n_in, n_out):
        layers, n = [], n_in
        for _ in range(LAYERS):
            layers += [torch.nn.Linear(n, HIDDEN), torch.nn.ReLU()]
            n = HIDDEN
        return torch.nn.Sequential(*layers, torch.nn.Linear(n, n_out)).to(tdt)

    g = torch.Generator().manual_seed(0)
    X = torch.randn(K, D, generator=g, dtype=tdt)
    Y = torch.randn(K, D, generator=g, dtype=tdt)
    if kind == "joint":
        net = mlp(2 * D, 1)

        def scores():
            pairs = torch.cat([X[None].expand(K, K, D), Y[:, None].expand(K, K, D)], dim=-1)
            return net(pairs.reshape(K * K, 2 * D)).reshape(K, K)  # F[i, j] = f(x_j, y_i)

        params = list(net.parameters())
    else:
        gx, hy = mlp(D, EMBED), mlp(D, EMBED)

        def scores():
            return hy(Y) @ gx(X).T

        params = list(gx.parameters()) + list(hy.parameters())
    opt = torch.optim.Adam(params, lr=LR)
    labels = torch.arange(K)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(scores(), labels)  # -InfoNCE + log K
        loss.backward()
        opt.step()

    return step


def run(quick: bool = False) -> list[dict]:
    """Rows for ``make bench``: one step, ours against PyTorch, both critics."""
    rounds = 5 if quick else 15
    rows = []
    for kind in ("joint", "separable"):
        for dtype in ("float32", "float64"):
            funcs = {"ours": ours(kind, dtype)}
            peer = torch_peer(kind, dtype)
            if peer is not None:
                funcs["torch"] = peer
            t = median_times(funcs, rounds=rounds, inner=1 if kind == "joint" else 5)
            p = t.get("torch")
            rows.append(
                row(
                    "critic training step (forward, backward, Adam)",
                    f"{kind} 2 x {HIDDEN}, K = {K}, {dtype}",
                    t["ours"],
                    peer="PyTorch (CPU, 1 thread)" if p is not None else None,
                    peer_value=p,
                    target="ratio <= 1.0" if p is not None else None,
                    met=(t["ours"] <= p) if p is not None else None,
                    notes="" if p is not None else "PyTorch not installed: no peer",
                )
            )
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(format_rows(run(quick=args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
