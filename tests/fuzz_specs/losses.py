"""Fuzz specifications and valid extremes for the losses of chapters 2 and 5 (infonce_lib.losses).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import (
    _SCORE_DIMS,
    POS,
    Arr,
    Bad,
    Fixed,
    Num,
    Spec,
    _cosine_above_one,
    _cosines,
    _lse_tol,
    _set_row_zero,
    _sizes,
)
from tests.reference import info_nce_reference
from tests.reference_losses import (
    binary_nce_reference,
    clip_reference,
    moco_reference,
    nt_xent_reference,
)


def _enqueue(dim, keys):
    q = il.MoCoQueue(capacity=3, dim=dim)
    q.enqueue(keys)
    return q.keys


def _loss_and_enqueue(dim, q, k, temperature):
    queue = il.MoCoQueue(4, dim, initial=np.random.default_rng(0).normal(size=(4, dim)))
    loss = queue.loss_and_enqueue(q, k, temperature)
    return loss, queue.keys


def _x_info_nce(fn, tau, f32=False, **kw):
    def run(rng):
        Z1, Z2 = rng.normal(size=(2, 5, 3))
        if f32:
            Z1, Z2 = Z1.astype(np.float32), Z2.astype(np.float32)
        got = fn(Z1, Z2, tau, **kw)
        got = got[0] if isinstance(got, tuple) else got
        A, B = Z1.astype(np.float64), Z2.astype(np.float64)
        want = info_nce_reference(A.tolist(), B.tolist(), tau)
        return [(got, want, _lse_tol(np.abs(A @ B.T).max() / tau))]

    return run


def _x_nt_xent(tau, **kw):
    def run(rng):
        z1, z2 = rng.normal(size=(2, 4, 3))
        want = nt_xent_reference(z1.tolist(), z2.tolist(), tau)
        return [(il.nt_xent_loss(z1, z2, tau, **kw), want, _lse_tol(1.0 / tau))]

    return run


def _x_clip(scale):
    def run(rng):
        a, b = rng.normal(size=(2, 4, 3))
        want = clip_reference(a.tolist(), b.tolist(), scale)
        return [(il.clip_loss(a, b, logit_scale=scale), want, _lse_tol(scale))]

    return run


def _x_moco(tau):
    def run(rng):
        q, k = rng.normal(size=(2, 3, 4))
        queue = rng.normal(size=(5, 4))
        want = moco_reference(q.tolist(), k.tolist(), queue.tolist(), tau)
        S = max(np.abs(q @ queue.T).max(), np.abs((q * k).sum(axis=1)).max()) / tau
        return [(il.moco_loss(q, k, queue, tau), want, _lse_tol(S))]

    return run


def _x_binary_nce(scale=1e6):
    def run(rng):
        F = scale * rng.normal(size=(3, 4))
        want = binary_nce_reference(F.tolist(), 3.0)
        return [(il.binary_nce_loss(F), want, _lse_tol(np.abs(F).max()))]

    return run


def _x_binary_nce_ratio(nu):
    def run(rng):
        F = rng.normal(size=(3, 4))
        want = binary_nce_reference(F.tolist(), nu)
        return [(il.binary_nce_loss(F, noise_ratio=nu), want, _lse_tol(abs(math.log(nu))))]

    return run


def _x_hadsell(margin):
    def run(rng):
        S = _cosines(rng, (2, 3, 3), {})
        want = []
        for b in S:
            D = [[math.sqrt(max(0.0, 2 - 2 * v)) for v in r] for r in b.tolist()]
            terms = [
                0.5 * D[i][i] ** 2
                + math.fsum(0.5 * max(0.0, margin - D[i][j]) ** 2 for j in range(3) if j != i)
                for i in range(3)
            ]
            want.append(math.fsum(terms) / 3)
        got = il.hadsell_contrastive_loss(S, margin)
        return [(g, w, 1e-12 * (1 + abs(w))) for g, w in zip(got, want, strict=True)]

    return run


SPECS: dict[str, tuple[Spec, ...]] = {
    "info_nce_loss": tuple(
        Spec(
            il.info_nce_loss,
            dict(
                Z1=Arr(("N", "D")),
                Z2=Arr(("N", "D")),
                temperature=Num(POS, 0.5),
                chunk_size=Num("int", chunk, minimum=1, none_ok=True),
            ),
            dims=_sizes(N=(1, 4), D=(1, 3)),
        )
        for chunk in (None, 2)
    ),
    "info_nce_loss_and_grad": tuple(
        Spec(
            il.info_nce_loss_and_grad,
            dict(
                Z1=Arr(("N", "D")),
                Z2=Arr(("N", "D")),
                temperature=Num(POS, 0.5),
                chunk_size=Num("int", chunk, minimum=1, none_ok=True),
            ),
            dims=_sizes(N=(1, 4), D=(1, 3)),
        )
        for chunk in (None, 2)
    ),
    "nt_xent_loss": tuple(
        Spec(
            il.nt_xent_loss,
            dict(
                z1=Arr(("N", "D")),
                z2=Arr(("N", "D")),
                temperature=Num(POS, 0.5),
                chunk_size=Num("int", chunk, minimum=1, none_ok=True),
            ),
            dims=_sizes(N=(1, 4), D=(1, 3)),
            bad=(Bad("a zero row", _set_row_zero("z1"), ("z1",)),),
        )
        for chunk in (None, 2)
    ),
    "clip_loss": tuple(
        Spec(
            il.clip_loss,
            dict(
                image_embeddings=Arr(("N", "D")),
                text_embeddings=Arr(("N", "D")),
                logit_scale=Num(POS, 2.0),
                chunk_size=Num("int", chunk, minimum=1, none_ok=True),
            ),
            dims=_sizes(N=(1, 4), D=(1, 3)),
            bad=(Bad("a zero row", _set_row_zero("text_embeddings"), ("text_embeddings",)),),
        )
        for chunk in (None, 2)
    ),
    "moco_loss": tuple(
        Spec(
            il.moco_loss,
            dict(
                q=Arr(("N", "D")),
                k=Arr(("N", "D")),
                queue=Arr(("K", "D"), empty_ok=frozenset({0})),
                temperature=Num(POS, 0.5),
                chunk_size=Num("int", chunk, minimum=1, none_ok=True),
            ),
            dims=_sizes(N=(1, 4), K=(1, 3), D=(1, 3)),
        )
        for chunk in (None, 2)
    ),
    "MoCoQueue": (
        Spec(  # the constructor
            il.MoCoQueue,
            dict(
                capacity=Num("int", lambda d: d["cap"], minimum=1),
                dim=Num("int", lambda d: d["D"], minimum=1),
                initial=Arr(("cap", "D")),
            ),
            dims=_sizes(cap=(1, 4), D=(1, 3)),
            bound=frozenset({"cap", "D"}),
        ),
        Spec(  # MoCoQueue.enqueue
            _enqueue,
            dict(dim=Fixed(lambda d, r: d["D"]), keys=Arr(("m", "D"))),
            dims=_sizes(m=(1, 5), D=(1, 3)),
            bound=frozenset({"D"}),
        ),
        Spec(  # MoCoQueue.loss_and_enqueue
            _loss_and_enqueue,
            dict(
                dim=Fixed(lambda d, r: d["D"]),
                q=Arr(("N", "D")),
                k=Arr(("N", "D")),
                temperature=Num(POS, 0.5),
            ),
            dims=_sizes(N=(1, 3), D=(1, 3)),
            bound=frozenset({"D"}),
        ),
    ),
    "binary_nce_loss": (
        Spec(
            il.binary_nce_loss,
            dict(logits=Arr(("N", "C")), noise_ratio=Num(POS, 2.0, none_ok=True)),
            dims=lambda n: (lambda N: {"N": N, "C": N + n(0, 2)})(n(2, 4)),
            bad=(
                Bad(
                    "fewer columns than rows",
                    lambda kw, d, r: {**kw, "logits": np.zeros((d["N"], d["N"] - 1))},
                    ("logits",),
                ),
            ),
        ),
    ),
    "hadsell_contrastive_loss": (
        Spec(
            il.hadsell_contrastive_loss,
            dict(cosines=Arr(("B", "K", "K"), _cosines), margin=Num(POS, 1.0)),
            dims=_SCORE_DIMS,
            bad=(Bad("a cosine above 1", _cosine_above_one, ("cosines",)),),
        ),
    ),
    "hardest_negative_triplet_loss": (
        Spec(
            il.hardest_negative_triplet_loss,
            dict(cosines=Arr(("B", "K", "K"), _cosines)),
            dims=_SCORE_DIMS,
            bad=(Bad("a cosine above 1", _cosine_above_one, ("cosines",)),),
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "info_nce_loss": {
        "tau 1e-8": _x_info_nce(il.info_nce_loss, 1e-8),
        "tau 1e8": _x_info_nce(il.info_nce_loss, 1e8),
        "float32, tau 0.05": _x_info_nce(il.info_nce_loss, 0.05, f32=True),
    },
    "info_nce_loss_and_grad": {
        "tau 1e-8": _x_info_nce(il.info_nce_loss_and_grad, 1e-8),
        "tau 1e8": _x_info_nce(il.info_nce_loss_and_grad, 1e8),
        "tau 1e-8, chunked": _x_info_nce(il.info_nce_loss_and_grad, 1e-8, chunk_size=2),
        "float32, chunked": _x_info_nce(il.info_nce_loss_and_grad, 0.05, True, chunk_size=2),
    },
    "nt_xent_loss": {
        "tau 1e-8": _x_nt_xent(1e-8),
        "tau 1e8": _x_nt_xent(1e8),
        "tau 1e-8, chunked": _x_nt_xent(1e-8, chunk_size=3),
    },
    "clip_loss": {"logit_scale 1e-8": _x_clip(1e-8), "logit_scale 1e8": _x_clip(1e8)},
    "moco_loss": {"tau 1e-8": _x_moco(1e-8), "tau 1e8": _x_moco(1e8)},
    "binary_nce_loss": {
        "logits 1e6": _x_binary_nce(),
        "noise_ratio 1e-8": _x_binary_nce_ratio(1e-8),
        "noise_ratio 1e8": _x_binary_nce_ratio(1e8),
    },
    "hadsell_contrastive_loss": {"margin 1e-8": _x_hadsell(1e-8), "margin 1e8": _x_hadsell(1e8)},
}


NO_EXTREME: dict[str, str] = {
    "MoCoQueue": "loss_and_enqueue is moco_loss on the stored keys (moco_loss has extremes)",
}
