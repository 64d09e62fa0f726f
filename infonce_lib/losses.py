r"""InfoNCE and its named variants, each a thin wrapper around :mod:`infonce_lib.core`.

Each docstring states its denominator exactly: whether the positive is in it, whether
self-pairs are excluded, and whether a symmetric loss averages or sums its two directions.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_positive_scalar, as_real_array, check_same_shape, finite_or_raise
from .core import _mean_loss, _positive_log_probs

__all__ = ["info_nce_loss"]


def info_nce_loss(Z1, Z2, temperature: float = 0.1) -> float:
    r"""InfoNCE loss with dot-product logits and the positives on the diagonal.

    With logits :math:`\ell_{ij} = z^{(1)}_i \cdot z^{(2)}_j / \tau`,

    .. math::

        \mathcal{L} = -\frac{1}{N} \sum_{i=1}^{N}
        \log \frac{e^{\ell_{ii}}}{\sum_{j=1}^{N} e^{\ell_{ij}}}

    (van den Oord, Li & Vinyals, 2018, eq. 4). Row ``i`` of ``Z1`` is the anchor; its
    candidates are all ``N`` rows of ``Z2``; its positive is row ``i`` of ``Z2``, which is
    in the denominator; nothing is excluded; one direction only (rows of ``Z1`` are the
    anchors). Each row's largest logit is subtracted before exponentiating.

    Parameters
    ----------
    Z1, Z2 : array_like, shape (N, D)
        Anchors and candidates: NumPy arrays of any real dtype or nested lists. Computed in
        float64. Not modified.
    temperature : float, default 0.1
        :math:`\tau > 0`; the logits are divided by it.

    Returns
    -------
    float
        The loss in nats: ``>= 0``; ``log N`` when all logits are equal; ``0.0`` for N = 1.

    Raises
    ------
    TypeError
        If the inputs are not real numbers or ``temperature`` is not a real number.
    ValueError
        If ``Z1`` or ``Z2`` is not 2-D, empty, ragged, not finite, or their shapes differ;
        if ``temperature`` is not finite and positive; if the logits overflow float64.

    Examples
    --------
    The worked example of chapter 2: every anchor's positive has similarity 0.9 and its
    three negatives 0.3, 0.1 and -0.2, at ``τ = 0.5``. With ``Z1`` the identity, the logits
    are ``Z2.T / τ``, so ``Z2`` holds the similarities (a circulant matrix):

    >>> import numpy as np
    >>> v = [0.9, 0.3, 0.1, -0.2]
    >>> S = np.array([[v[(j - i) % 4] for j in range(4)] for i in range(4)])
    >>> round(info_nce_loss(np.eye(4), S.T, temperature=0.5), 4)
    0.4786
    >>> round(info_nce_loss([[1.0, 2.0]], [[3.0, 4.0]]), 6)  # N = 1: nothing to contrast
    0.0
    """
    A = as_real_array(Z1, "Z1", ndim=2)
    B = as_real_array(Z2, "Z2", ndim=2)
    check_same_shape(A, "Z1", B, "Z2")
    tau = as_positive_scalar(temperature, "temperature")
    with np.errstate(over="ignore", invalid="ignore"):
        logits = A @ B.T
        logits /= tau
    finite_or_raise(logits, "the logits Z1 @ Z2.T / temperature")
    return _mean_loss(_positive_log_probs(logits, overwrite=True))
