r"""Two contrastive losses without a softmax, on batches of cosine scores.

Chapter 6 compares InfoNCE with Hadsell, Chopra & LeCun's (2006) pairwise margin loss
(:func:`hadsell_contrastive_loss`, and its slope in each cosine,
:func:`hadsell_contrastive_grad`) and with the zero-margin triplet loss on the hardest
negative (:func:`hardest_negative_triplet_loss`), the limit of :math:`\tau \mathcal{L}` as
:math:`\tau \to 0`. Both take ``cosines[b, i, j]`` :math:`= s(x_j, y_i)`, shape
``(B, K, K)``, positives on the diagonal.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_positive_scalar, as_real_array, finite_or_raise
from .core import _safe_mean

__all__ = ["hadsell_contrastive_grad", "hadsell_contrastive_loss", "hardest_negative_triplet_loss"]


_ROUND_OFF = 1e-12  # cosines from a matrix product may exceed 1 by a few ulps; never clipped


def _check_cosines(cosines) -> np.ndarray:
    """Cosine scores of shape (B, K, K), K >= 2, in [-1, 1] up to ``_ROUND_OFF``."""
    S = as_real_array(cosines, "cosines", ndim=3)
    _, K, K2 = S.shape
    if K != K2:
        raise ValueError(f"cosines must have shape (B, K, K); got {S.shape}")
    if K < 2:
        raise ValueError(f"cosines needs batches of K >= 2 (a negative per row); got K = {K}")
    largest = max(float(S.max()), -float(S.min()))  # max |s| without a temporary
    if largest > 1.0 + _ROUND_OFF:
        raise ValueError(
            f"cosines must lie in [-1, 1] (the cap assumes it); got max |s| = {largest}"
        )
    return S


_CHUNK = 1 << 18  # doubles per chunk (2 MiB): about a core's L2 cache


def _positive_margins(S: np.ndarray) -> np.ndarray:
    """``S_ii - max_{j != i} S_ij`` for clean cosines (B, K, K), whole batches per chunk."""
    B, K, _ = S.shape
    idx = np.arange(K)
    flat = S.reshape(B * K, K)
    hardest = np.empty(B * K)
    rows = max(K, (_CHUNK // K) // K * K)  # whole batches per chunk
    buf = np.empty((min(rows, B * K), K))
    for start in range(0, B * K, rows):
        block = flat[start : start + rows]
        work = buf[: block.shape[0]]
        work[:] = block
        work[np.arange(block.shape[0]), np.tile(idx, block.shape[0] // K)] = -np.inf
        work.max(axis=-1, out=hardest[start : start + block.shape[0]])
    return S[:, idx, idx] - hardest.reshape(B, K)


def hardest_negative_triplet_loss(cosines) -> np.ndarray:
    r"""Zero-margin triplet loss on the hardest negative, one value per batch.

    .. math::

        T_b = \frac1K \sum_{i=1}^{K} \max\Big(0,\; \max_{j \ne i} S_{bij} - S_{bii}\Big)
        = \frac1K \sum_i \max(0, -m_{bi})

    with :math:`m` the :func:`~infonce_lib.positive_margins`. It is the limit
    of :func:`~infonce_lib.tau_scaled_loss` as :math:`\tau \to 0`; a triplet
    loss in the sense of Schroff et al. (2015, FaceNet), here on cosines, with margin 0 and
    only the hardest negative of the batch; and minus the limit of the slope
    :math:`\mathrm{d}I_{\mathrm{NCE}}/\mathrm{d}\beta` as :math:`\beta \to \infty`.
    Only rows whose hardest negative outscores the positive contribute, and in each only
    that one negative gets a push.

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1]. Not modified.

    Returns
    -------
    numpy.ndarray, shape (B,)
        Values in :math:`[0, 2]`.

    Raises
    ------
    TypeError, ValueError
        As :func:`~infonce_lib.infonce_at_beta`.

    Examples
    --------
    >>> hardest_negative_triplet_loss([[[0.2, 0.5], [-0.3, 0.9]]])
    array([0.15])
    """
    return np.maximum(0.0, -_positive_margins(_check_cosines(cosines))).mean(axis=-1)


def hadsell_contrastive_loss(cosines, margin: float = 1.0) -> np.ndarray:
    r"""Hadsell, Chopra & LeCun's (2006) contrastive loss on every pair of a batch.

    For unit vectors the Euclidean distance is :math:`D_{ij} = \sqrt{2 - 2 S_{ij}}`. Each
    pair is judged on its own: a similar pair (the positive, :math:`j = i`) pays
    :math:`\tfrac12 D^2`; a dissimilar pair pays :math:`\tfrac12 \max(0, m - D)^2`, nothing
    once it is farther apart than the margin :math:`m`. Per batch, averaged over the
    :math:`K` anchors,

    .. math::

        H_b = \frac1K \sum_{i=1}^{K} \Big( \tfrac12 D_{bii}^2
        + \sum_{j \ne i} \tfrac12 \max\big(0, m - D_{bij}\big)^2 \Big).

    There is no softmax, no normaliser shared by the candidates and no temperature: a
    negative beyond the margin contributes exactly 0 and gets no gradient, while InfoNCE
    gives every negative a positive weight. (Round-off may push :math:`2 - 2S` a few ulps
    below 0 for :math:`S = 1`; the distance is then 0.)

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1] of unit embeddings, positives on the diagonal. Not
        modified.
    margin : float, default 1.0
        :math:`m > 0` (distances of unit vectors lie in :math:`[0, 2]`).

    Returns
    -------
    numpy.ndarray, shape (B,)
        Non-negative values; 0 exactly when every positive pair coincides and every
        negative is at least :math:`m` away.

    Raises
    ------
    TypeError, ValueError
        As :func:`~infonce_lib.infonce_at_beta` (bad ``cosines``), or ``margin`` not finite
        and positive; ``ValueError`` if a squared violation :math:`(m - D)^2` overflows
        float64 (``margin`` above about 1.3e154) or a batch's loss is beyond float64.
        Violations that are each finite but whose sum overflows are averaged without
        overflow.

    Examples
    --------
    >>> S = np.array([[[1.0, -0.2], [0.3, 1.0]]])   # D = 1.549 and 1.183 for the negatives
    >>> hadsell_contrastive_loss(S, margin=1.0)
    array([0.])
    >>> np.round(hadsell_contrastive_loss(S, margin=1.5), 6)   # (1.5 - 1.183)^2 / 4
    array([0.025088])
    """
    S = _check_cosines(cosines)
    m = as_positive_scalar(margin, "margin")
    K = S.shape[-1]
    idx = np.arange(K)
    sq = np.maximum(2.0 - 2.0 * S, 0.0)  # squared distances of unit vectors
    push = np.maximum(m - np.sqrt(sq), 0.0)
    with np.errstate(over="ignore"):
        push *= push
    finite_or_raise(push, f"the squared margin violations at margin = {m:g}", "use a margin <= 2")
    push[:, idx, idx] = sq[:, idx, idx]  # the positive pays D^2 instead, by index
    with np.errstate(over="ignore"):
        out = 0.5 * push.sum(axis=-1).mean(axis=-1)
        bad = ~np.isfinite(out)
        if bad.any():  # violations near 1.8e308 whose sums overflowed: H_b = K/2 mean_ij
            out[bad] = (0.5 * K) * _safe_mean(push[bad].reshape(-1, K * K), axis=-1)
    return finite_or_raise(out, f"a batch's Hadsell loss at margin = {m:g}", "use a margin <= 2")


def hadsell_contrastive_grad(cosines, margin: float = 1.0) -> np.ndarray:
    r"""The slope of :func:`hadsell_contrastive_loss` in each cosine: how hard each pair is pushed.

    With :math:`D_{ij} = \sqrt{2 - 2 S_{ij}}` (unit vectors), :math:`\tfrac12 D^2 = 1 - S`
    and :math:`\mathrm{d}D/\mathrm{d}S = -1/D`, so per batch

    .. math::

        \frac{\partial H_b}{\partial S_{bii}} = -\frac1K, \qquad
        \frac{\partial H_b}{\partial S_{bij}} = \frac{1}{K}\,
        \frac{\max(0,\, m - D_{bij})}{D_{bij}} \quad (j \ne i).

    A negative beyond the margin (:math:`D \ge m`) gets exactly 0: the loss does not change
    when it moves. Compare InfoNCE's loss at temperature :math:`\tau`, whose slope in a
    negative's cosine is :math:`p_{ij}/(K\tau) > 0` for every negative (Wang & Liu, 2021,
    eq. 4; :func:`~infonce_lib.softmax_weights`), however far it is.

    Parameters
    ----------
    cosines : array_like, shape (B, K, K)
        Cosine scores in [-1, 1] of unit embeddings, positives on the diagonal; no negative
        at cosine 1 (distance 0, where the slope in the cosine is infinite). Not modified.
    margin : float, default 1.0
        :math:`m > 0`.

    Returns
    -------
    numpy.ndarray, shape (B, K, K)
        :math:`-1/K` on the diagonal, :math:`\ge 0` elsewhere.

    Raises
    ------
    TypeError, ValueError
        As :func:`hadsell_contrastive_loss`; ``ValueError`` if a negative has cosine 1
        (distance 0) or a slope overflows float64 (``margin`` near 1.8e308).

    Examples
    --------
    >>> S = np.array([[[1.0, 0.5], [-0.2, 1.0]]])   # distances 1 and 1.549 for the negatives
    >>> hadsell_contrastive_grad(S, margin=1.5)  # (1.5 - 1) / 1 / 2 = 0.25; 1.549 > 1.5
    array([[[-0.5 ,  0.25],
            [ 0.  , -0.5 ]]])
    """
    S = _check_cosines(cosines)
    m = as_positive_scalar(margin, "margin")
    K = S.shape[-1]
    idx = np.arange(K)
    D = np.sqrt(np.maximum(2.0 - 2.0 * S, 0.0))
    D[:, idx, idx] = 1.0  # placeholders: the positives' slope is set below
    if (D == 0.0).any():
        raise ValueError(
            "cosines has a negative at cosine 1 (distance 0): the slope of Hadsell's loss in "
            "the cosine is infinite there"
        )
    with np.errstate(over="ignore"):
        out = np.maximum(m - D, 0.0) / D / K
    out[:, idx, idx] = -1.0 / K
    return finite_or_raise(out, f"the slopes at margin = {m:g}", "use a margin <= 2")
