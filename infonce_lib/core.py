r"""The general core: log-softmax probabilities of the positives in a matrix of logits.

Every loss and bound in :mod:`infonce_lib` is a thin wrapper around one computation. Given
a matrix of logits (or critic scores) in which each *anchor* is compared with a set of
*candidates*, one of which is its positive, compute for every anchor

.. math::

    \log p(\text{positive} \mid \text{anchor})
    = \ell_{a, p(a)} - \log \sum_{c \in \mathcal{D}(a)} e^{\ell_{a, c}},

where :math:`\mathcal{D}(a)` is the anchor's *denominator set*: all candidates, minus any
candidate excluded by index (the self-pair of NT-Xent), minus the positive itself for a
leave-one-out bound. What varies between InfoNCE, NT-Xent, MoCo, CLIP and the bounds of
Poole et al. (2019) is only which side of the matrix holds the anchors, where the positives
are, and what is excluded; this module takes those three choices as arguments.

The log-sum-exp subtracts each anchor's largest logit before exponentiating, so logits of
any finite size give a finite answer without overflow warnings. Excluded entries are set to
``-inf`` by index in a private copy (never to a large finite constant) and so contribute
exactly zero.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ._validation import as_real_array

__all__ = ["contrastive_log_probs", "contrastive_loss_from_logits"]

Side = Literal["rows", "columns"]


def _positive_log_probs(
    logits: np.ndarray,
    positives: np.ndarray | None = None,
    exclude: np.ndarray | None = None,
    *,
    include_positive: bool = True,
    overwrite: bool = False,
) -> np.ndarray:
    """Unchecked core on clean float64 input; anchors are the rows (last axis normalised).

    ``logits`` has shape ``(..., n, c)``; ``positives`` and ``exclude`` are int arrays of
    shape ``(n,)`` (``None``: positive of row ``i`` is column ``i``; nothing excluded).
    With ``overwrite=True`` the logits array is used as scratch space and its contents are
    destroyed; callers pass it only for arrays they created themselves.
    """
    n = logits.shape[-2]
    rows = np.arange(n)
    if positives is None:
        pos_vals = np.diagonal(logits, axis1=-2, axis2=-1).copy()
    else:
        pos_vals = logits[..., rows, positives]
    work = logits if overwrite else None
    if exclude is not None or not include_positive:
        if work is None:
            work = logits.copy()
        if exclude is not None:
            work[..., rows, exclude] = -np.inf
        if not include_positive:
            work[..., rows, rows if positives is None else positives] = -np.inf
    src = logits if work is None else work
    row_max = src.max(axis=-1, keepdims=True)
    if work is None:
        work = src - row_max
    else:
        np.subtract(work, row_max, out=work)
    np.exp(work, out=work)
    sums = work.sum(axis=-1)
    row_max = row_max[..., 0]
    return (pos_vals - row_max) - np.log(sums)


def _mean_loss(log_probs: np.ndarray) -> float:
    """Minus the mean of log-probabilities as a Python float (``0.0``, never ``-0.0``)."""
    return float(0.0 - log_probs.mean())


def _check_index(index, name: str, n_anchors: int, n_candidates: int) -> np.ndarray:
    arr = np.asarray(index)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an array of integer indices; got dtype {arr.dtype}")
    if arr.shape != (n_anchors,):
        raise ValueError(
            f"{name} must have one candidate index per anchor, shape ({n_anchors},); "
            f"got shape {arr.shape}"
        )
    if n_anchors and (arr.min() < 0 or arr.max() >= n_candidates):
        raise ValueError(
            f"{name} must index the {n_candidates} candidates (0 to {n_candidates - 1}); "
            f"got values from {arr.min()} to {arr.max()}"
        )
    return arr.astype(np.intp, copy=False)


def contrastive_log_probs(
    logits,
    positives=None,
    *,
    anchors: Side = "rows",
    exclude=None,
    include_positive: bool = True,
) -> np.ndarray:
    r"""Log-probability of each anchor's positive under a softmax over its candidates.

    For every anchor :math:`a` with positive :math:`p(a)` this returns

    .. math::

        \log \frac{e^{\ell_{a, p(a)}}}{\sum_{c \in \mathcal{D}(a)} e^{\ell_{a, c}}},

    the term inside every InfoNCE-type loss (van den Oord et al., 2018, eq. 4; Poole et al.,
    2019, eqs. 12-13). The loss is minus the mean of these terms.

    Parameters
    ----------
    logits : array_like, shape (..., R, C)
        Scores of anchors against candidates, any real dtype (computed in float64), any
        number of leading batch dimensions. Not modified.
    positives : array_like of int, optional
        Index of each anchor's positive among its candidates, one per anchor. Default:
        the diagonal (anchor ``i``'s positive is candidate ``i``), which requires at least
        as many candidates as anchors.
    anchors : {"rows", "columns"}
        Which side of the matrix holds the anchors. ``"rows"``: anchor ``i`` is row ``i``
        and the softmax runs along the last axis (over the ``C`` candidates).
        ``"columns"``: anchor ``j`` is column ``j`` and the softmax runs along axis -2.
    exclude : array_like of int, optional
        One candidate index per anchor removed from the denominator by index (for NT-Xent,
        each view's similarity with itself). Must differ from the positive.
    include_positive : bool
        Whether the positive is in the denominator (``True``, InfoNCE) or removed from it
        (``False``, the leave-one-out bound of Poole et al., 2019, eq. 13).

    Returns
    -------
    numpy.ndarray, shape (..., n_anchors)
        Float64 log-probabilities, each ``<= 0`` when ``include_positive`` is true.

    Raises
    ------
    ValueError, TypeError
        If ``logits`` is not at least 2-D, is empty or not finite, if an index array has
        the wrong length or is out of range, if ``exclude`` hits a positive, or if a
        denominator would be empty.

    Examples
    --------
    >>> import numpy as np
    >>> L = np.array([[2.0, 0.0], [0.0, 2.0]])
    >>> np.round(contrastive_log_probs(L), 6)
    array([-0.126928, -0.126928])
    >>> float(np.round(-np.log(np.exp(2) / (np.exp(2) + 1)), 6))
    0.126928
    """
    arr = as_real_array(logits, "logits", ndim=None)
    if arr.ndim < 2:
        raise ValueError(f"logits must be at least 2-D (..., R, C); got shape {arr.shape}")
    if anchors not in ("rows", "columns"):
        raise ValueError(f"anchors must be 'rows' or 'columns'; got {anchors!r}")
    view = arr if anchors == "rows" else np.swapaxes(arr, -1, -2)
    n, c = view.shape[-2:]
    pos = None
    if positives is None:
        if c < n:
            raise ValueError(
                f"positives=None puts anchor i's positive at candidate i, which needs at "
                f"least as many candidates as anchors; got {n} anchors and {c} candidates"
            )
    else:
        pos = _check_index(positives, "positives", n, c)
    exc = None
    if exclude is not None:
        exc = _check_index(exclude, "exclude", n, c)
        diag = np.arange(n) if pos is None else pos
        if np.any(exc == diag):
            raise ValueError("exclude must not remove an anchor's own positive")
    include_positive = bool(include_positive)
    n_removed = (exc is not None) + (not include_positive)
    if c - n_removed < 1:
        raise ValueError(
            f"every anchor needs at least one candidate in its denominator; {c} candidates "
            f"minus {n_removed} removed leaves none"
        )
    return _positive_log_probs(view, pos, exc, include_positive=include_positive)


def contrastive_loss_from_logits(
    logits,
    positives=None,
    *,
    anchors: Literal["rows", "columns", "both"] = "rows",
    exclude=None,
) -> float:
    r"""Mean cross-entropy of the positives: the general InfoNCE-type loss.

    .. math::

        \mathcal{L} = -\frac{1}{n} \sum_{a=1}^{n}
        \log \frac{e^{\ell_{a, p(a)}}}{\sum_{c \in \mathcal{D}(a)} e^{\ell_{a, c}}}

    with the positive in its own denominator. With ``anchors="both"`` the rows and the
    columns are each used as anchors and the two mean losses are averaged (the symmetric
    loss of CLIP, Radford et al., 2021).

    Parameters
    ----------
    logits : array_like, shape (R, C)
        Anchor-by-candidate scores (already divided by the temperature).
    positives, exclude : array_like of int, optional
        As in :func:`contrastive_log_probs`; with ``anchors="both"`` only the diagonal is
        supported (``positives`` and ``exclude`` must be None).
    anchors : {"rows", "columns", "both"}
        Which side holds the anchors.

    Returns
    -------
    float
        The loss in nats, ``>= 0``.

    Examples
    --------
    >>> round(contrastive_loss_from_logits([[0.0, 0.0], [0.0, 0.0]]), 6)  # log 2
    0.693147
    """
    if anchors == "both":
        if positives is not None or exclude is not None:
            raise ValueError("anchors='both' uses the diagonal: positives and exclude must be None")
        arr = as_real_array(logits, "logits", ndim=2)
        if arr.shape[0] != arr.shape[1]:
            raise ValueError(f"anchors='both' needs square logits; got shape {arr.shape}")
        rows = _positive_log_probs(arr)
        cols = _positive_log_probs(arr.T)
        return (_mean_loss(rows) + _mean_loss(cols)) / 2
    arr = as_real_array(logits, "logits", ndim=2)
    return _mean_loss(contrastive_log_probs(arr, positives, anchors=anchors, exclude=exclude))
