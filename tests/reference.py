"""Plain, loop-based reference implementations the tests compare the library against.

Written for clarity, not speed: Python floats, explicit loops, ``math.fsum``. Each follows
the textbook definition directly so that a disagreement points at the library.
"""

from __future__ import annotations

import math


def logsumexp_list(values: list[float]) -> float:
    m = max(values)
    return m + math.log(math.fsum(math.exp(v - m) for v in values))


def info_nce_reference(Z1, Z2, temperature: float) -> float:
    """-(1/N) sum_i log( exp(l_ii) / sum_j exp(l_ij) ), l_ij = <z1_i, z2_j> / tau."""
    n = len(Z1)
    total = []
    for i in range(n):
        logits = [
            math.fsum(float(a) * float(b) for a, b in zip(Z1[i], Z2[j], strict=True)) / temperature
            for j in range(n)
        ]
        total.append(logsumexp_list(logits) - logits[i])
    return math.fsum(total) / n
