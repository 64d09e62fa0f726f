"""Plain, loop-based references for the losses of chapter 2 (NT-Xent, CLIP, MoCo, binary NCE).

Written from the papers' definitions, for clarity, not speed: Python floats, explicit loops,
``math.fsum``. A disagreement with the library points at the library.
"""

from __future__ import annotations

import math

from tests.reference import logsumexp_list


def _dot(a, b) -> float:
    return math.fsum(float(x) * float(y) for x, y in zip(a, b, strict=True))


def _cos(a, b) -> float:
    return _dot(a, b) / (math.sqrt(_dot(a, a)) * math.sqrt(_dot(b, b)))


def nt_xent_reference(z1, z2, temperature: float) -> float:
    """SimCLR (Chen et al., 2020, eq. 1): views 0..N-1 then N..2N-1, self excluded, mean."""
    views = [list(r) for r in z1] + [list(r) for r in z2]
    n, m = len(z1), 2 * len(z1)
    terms = []
    for a in range(m):
        p = (a + n) % m
        others = [_cos(views[a], views[b]) / temperature for b in range(m) if b != a]
        terms.append(logsumexp_list(others) - _cos(views[a], views[p]) / temperature)
    return math.fsum(terms) / m


def clip_reference(images, texts, logit_scale: float) -> float:
    """CLIP (Radford et al., 2021, Fig. 3): mean of image->text and text->image losses."""
    n = len(images)
    L = [[logit_scale * _cos(images[i], texts[j]) for j in range(n)] for i in range(n)]
    rows = [logsumexp_list(L[i]) - L[i][i] for i in range(n)]
    cols = [logsumexp_list([L[i][j] for i in range(n)]) - L[j][j] for j in range(n)]
    return (math.fsum(rows) / n + math.fsum(cols) / n) / 2


def moco_reference(q, k, queue, temperature: float) -> float:
    """MoCo (He et al., 2020, Algorithm 1): logits [q.k, q.queue] / t, label 0."""
    terms = []
    for qi, ki in zip(q, k, strict=True):
        logits = [_dot(qi, ki) / temperature] + [_dot(qi, kn) / temperature for kn in queue]
        terms.append(logsumexp_list(logits) - logits[0])
    return math.fsum(terms) / len(q)


def _log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def binary_nce_reference(F, noise_ratio: float) -> float:
    """-(1/N) sum_i [log s(F_ii - log nu) + sum_{j != i} log(1 - s(F_ij - log nu))]."""
    shift = math.log(noise_ratio)
    terms = []
    for i, row in enumerate(F):
        t = _log_sigmoid(row[i] - shift)
        t += math.fsum(_log_sigmoid(-(f - shift)) for j, f in enumerate(row) if j != i)
        terms.append(t)
    return -math.fsum(terms) / len(F)
