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

import math
import os
from typing import Literal

import numpy as np

from ._validation import (
    as_array,
    as_bool,
    as_int,
    as_positive_scalar,
    as_real_array,
    finite_or_raise,
)

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "contrastive_log_probs",
    "contrastive_log_probs_streaming",
    "contrastive_loss_from_logits",
]

Side = Literal["rows", "columns"]


def _positive_log_probs(
    logits: np.ndarray,
    positives: np.ndarray | None = None,
    exclude: np.ndarray | None = None,
    *,
    include_positive: bool = True,
    overwrite: bool = False,
    hint: str = "the logits (scores) of a row span more than 1.8e308; rescale them",
) -> np.ndarray:
    """Unchecked core on clean float64 input; anchors are the rows (last axis normalised).

    ``logits`` has shape ``(..., n, c)``; ``positives`` and ``exclude`` are int arrays of
    shape ``(n,)`` (``None``: positive of row ``i`` is column ``i``; nothing excluded).
    With ``overwrite=True`` the logits array is used as scratch space and its contents are
    destroyed; callers pass it only for arrays they created themselves. If a positive lies
    more than 1.8e308 below its row's maximum, its log-probability is not representable: a
    ``ValueError`` ends with ``hint``, which names the caller's arguments.
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
    # A logit more than 1.8e308 below its row maximum gives -inf here, and exp(-inf) = 0 is
    # right; only a positive that far from the maximum makes the result overflow (checked).
    with np.errstate(over="ignore"):
        if work is None:
            work = src - row_max
        else:
            np.subtract(work, row_max, out=work)
        np.exp(work, out=work)
        sums = work.sum(axis=-1)
        row_max = row_max[..., 0]
        out = (pos_vals - row_max) - np.log(sums)
    return finite_or_raise(
        out, "a positive's log-probability (its logit minus its row's maximum)", hint
    )


def _safe_mean(values: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    """The mean of finite values, without overflow wherever the mean itself is representable.

    The plain mean (a sum, then a division) overflows when terms near 1.8e308 add up past
    float64 although their mean is in range; then each term is divided by the count first
    (the sum of ``x / n`` is at most the largest ``|x|``). A result that is still not
    finite means the mean itself is beyond float64: callers check and say so. Along an
    axis, only the means that overflowed are recomputed, so each one is independent of the
    others (a batch's value does not depend on the other batches).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        out = values.mean(axis=axis)
        bad = ~np.isfinite(out)
        if bad.any():
            n = values.size if axis is None else values.shape[axis]
            scaled = (values / n).sum(axis=axis)
            if np.ndim(out) == 0:
                out = scaled
            else:  # only the means that overflowed: the others keep their plain bits
                out[bad] = scaled[bad]
    return out


def _mean_loss(log_probs: np.ndarray, what: str = "the mean loss") -> float:
    """Minus the mean of log-probabilities as a Python float (``0.0``, never ``-0.0``).

    Terms near -1.8e308 (logits of that size) are averaged without overflow
    (:func:`_safe_mean`); only a mean beyond float64 raises ``ValueError`` naming ``what``.
    """
    out = float(0.0 - _safe_mean(log_probs))
    if not math.isfinite(out):
        raise ValueError(f"{what} is beyond float64 (more than 1.8e308 nats); rescale the inputs")
    return out


def _dense_fits(n_rows: int, n_cols: int, what: str, copies: int = 1) -> None:
    """Refuse, before allocating, a dense float64 matrix larger than the machine's memory.

    ``copies`` counts the matrices of that size a call holds at once. Raises
    ``MemoryError`` with a message that names the size and suggests ``chunk_size``.
    """
    need = n_rows * n_cols * 8 * copies
    if need < _DENSE_CHECK_FROM:  # small: no need to ask the operating system
        return
    total = _physical_memory()
    if total is not None and need > total:
        raise MemoryError(
            f"{what} would need a dense {n_rows:,} x {n_cols:,} float64 matrix of logits "
            f"({need / 1e9:,.1f} GB with its working copies), more than this machine's "
            f"{total / 1e9:,.1f} GB of memory; pass chunk_size (e.g. chunk_size="
            f"{DEFAULT_CHUNK_SIZE}) to stream over blocks of logits instead"
        )


_DENSE_CHECK_FROM = 1 << 28  # 256 MiB


def _physical_memory() -> int | None:
    """Bytes of physical memory, or None where the operating system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _check_index(
    index,
    name: str,
    n_anchors: int,
    n_candidates: int,
    source: str = "logits",
    candidates: str = "logits",
) -> np.ndarray:
    arr = as_array(index, name)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an array of integer indices; got dtype {arr.dtype}")
    if arr.shape != (n_anchors,):
        raise ValueError(
            f"{name} must have one candidate index per anchor ({source} has {n_anchors} "
            f"anchors), shape ({n_anchors},); got shape {arr.shape}"
        )
    if n_anchors and (arr.min() < 0 or arr.max() >= n_candidates):
        raise ValueError(
            f"{name} must index the {n_candidates} candidates of {candidates} "
            f"(0 to {n_candidates - 1}); "
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
    2019, the InfoNCE bound and the leave-one-out bound). The loss is minus the mean of these terms.

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
        (``False``, the leave-one-out bound of Poole et al., 2019).

    Returns
    -------
    numpy.ndarray, shape (..., n_anchors)
        Float64 log-probabilities, each ``<= 0`` when ``include_positive`` is true.

    Raises
    ------
    ValueError, TypeError
        If ``logits`` is not at least 2-D, is empty or not finite, if an index array has
        the wrong length or is out of range, if ``exclude`` hits a positive, if a
        denominator would be empty, or if ``include_positive`` is not a bool
        (``TypeError``); ``ValueError`` if a positive lies more than 1.8e308 below its
        row's maximum (its log-probability overflows float64).

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
    pos, exc, include_positive = _check_denominators(
        positives,
        exclude,
        include_positive,
        n,
        c,
        counts=f"logits of shape {arr.shape} has {n} anchors and {c} candidates "
        f"(anchors={anchors!r})",
    )
    return _positive_log_probs(view, pos, exc, include_positive=include_positive)


def _check_denominators(
    positives,
    exclude,
    include_positive,
    n: int,
    c: int,
    *,
    counts: str,
    source: str = "logits",
    candidates: str = "logits",
) -> tuple[np.ndarray | None, np.ndarray | None, bool]:
    """Check the positives, exclusions and ``include_positive`` of ``n`` anchors against
    ``c`` candidates; return them clean (``None`` for the diagonal and for no exclusion).

    ``counts`` says in words where ``n`` and ``c`` come from (for the message when the
    diagonal default needs ``c >= n``); ``source`` and ``candidates`` name the arrays of
    the anchors and of the candidates in index messages.
    """
    pos = None
    if positives is None:
        if c < n:
            raise ValueError(
                f"positives=None puts anchor i's positive at candidate i, which needs at "
                f"least as many candidates as anchors; {counts}"
            )
    else:
        pos = _check_index(positives, "positives", n, c, source, candidates)
    exc = None
    if exclude is not None:
        exc = _check_index(exclude, "exclude", n, c, source, candidates)
        if np.any(exc == (np.arange(n) if pos is None else pos)):
            raise ValueError("exclude must not remove an anchor's own positive")
    include_positive = as_bool(include_positive, "include_positive")
    n_removed = (exc is not None) + (not include_positive)
    if c - n_removed < 1:
        raise ValueError(
            f"every anchor needs at least one candidate in its denominator; {c} candidates "
            f"minus {n_removed} removed leaves none"
        )
    return pos, exc, include_positive


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

    Raises
    ------
    ValueError, TypeError
        As :func:`contrastive_log_probs`; if ``anchors`` is not one of ``"rows"``,
        ``"columns"``, ``"both"``; if ``anchors="both"`` and the logits are not square or
        an index array is given; if a positive lies more than 1.8e308 below its row's
        maximum (its log-probability overflows float64). Terms that are each finite are
        averaged without overflow, so the mean of logits near 1.8e308 is returned.

    Examples
    --------
    >>> round(contrastive_loss_from_logits([[0.0, 0.0], [0.0, 0.0]]), 6)  # log 2
    0.693147
    """
    if anchors not in ("rows", "columns", "both"):
        raise ValueError(f"anchors must be 'rows', 'columns' or 'both'; got {anchors!r}")
    arr = as_real_array(logits, "logits", ndim=2)
    if anchors == "both":
        if positives is not None or exclude is not None:
            raise ValueError("anchors='both' uses the diagonal: positives and exclude must be None")
        if arr.shape[0] != arr.shape[1]:
            raise ValueError(f"anchors='both' needs square logits; got shape {arr.shape}")
        rows = _mean_loss(_positive_log_probs(arr))
        cols = _mean_loss(_positive_log_probs(arr.T))
        return rows / 2 + cols / 2  # never (rows + cols) / 2, which can overflow
    log_probs = contrastive_log_probs(arr, positives, anchors=anchors, exclude=exclude)
    return _mean_loss(log_probs)


# ---------------------------------------------------------------- exponentials that underflow
#
# NumPy's vectorised exp falls back to a much slower path for arguments below about
# -708, whose results are subnormal or zero. After the row maximum is subtracted every
# argument is <= 0 and the maximum contributes exp(0) = 1, so each sum of exponentials is
# >= 1; an argument below _EXP_FLOOR contributes less than 1e-304, which cannot change such
# a sum in float64 (it would take 1e288 of them). Raising those arguments to _EXP_FLOOR
# therefore leaves every sum, and every loss, as it was, and keeps exp on its fast path.
# Entries that must contribute exactly zero (exclusions) are zeroed by index after exp.

_EXP_FLOOR = -700.0


def _diagonal_log_probs_columns_inplace(
    logits_t: np.ndarray, *, floor: bool = True, ones: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Log-probabilities of diagonal positives, anchors on the columns; input destroyed.

    ``logits_t`` has shape ``(c, n)``, ``c >= n``: entry ``[j, i]`` is anchor ``i``'s logit
    for candidate ``j`` (the transpose of the usual layout, so that each anchor's max and
    sum are reductions over axis 0, which NumPy vectorises across anchors). The result
    equals ``_positive_log_probs(logits_t.T, overwrite=True)`` to rounding, for clean
    finite float64 logits. On return ``logits_t`` holds ``exp(logit - anchor max)`` (with
    arguments below ``_EXP_FLOOR`` raised to it, unless ``floor`` is false) and the
    second result is each anchor's sum of them, so a caller can form the softmax
    ``logits_t / sums`` without another exp. A caller that needs every softmax weight
    exactly, however small (a gradient), passes ``floor=False``. ``ones`` may pass a
    vector of ``c`` ones the caller already has (the column sums are a BLAS product).
    """
    col_max = logits_t.max(axis=0)
    pos_vals = np.diagonal(logits_t).copy()
    logits_t -= col_max
    if floor:
        np.maximum(logits_t, _EXP_FLOOR, out=logits_t)
    np.exp(logits_t, out=logits_t)
    if ones is None:
        ones = np.ones(logits_t.shape[0])
    sums = ones @ logits_t  # the column sums, by BLAS (faster than .sum(axis=0))
    return (pos_vals - col_max) - np.log(sums), sums


# ---------------------------------------------------------------- streaming (chunked) core
#
# The functions below compute the same log-probabilities as ``_positive_log_probs`` for
# logits of the form ``A @ B.T / temperature`` without ever holding the full matrix: they
# visit it in blocks of ``chunk_size`` anchors by ``chunk_size`` candidates and keep, for
# every anchor, a running maximum ``m`` and a running sum ``s = sum_c exp(l_c - m)``
# (the online log-sum-exp). When a block raises an anchor's maximum from ``m`` to ``m'``,
# the sum so far is rescaled by ``exp(m - m')``. Positives are read from the block that
# holds them and exclusions are set to ``-inf`` in the block, both by index, so the result
# agrees with the dense path to rounding.

#: Block edge used by the streaming core when none is given: blocks of 1024 x 1024 float64
#: logits (8 MiB of working memory). ``make bench`` compares its speed with the dense path.
#: (The API page shows the description given where the package re-exports it.)
DEFAULT_CHUNK_SIZE = 1024


def _hits(index: np.ndarray, r0: int, r1: int, c0: int, c1: int) -> tuple[np.ndarray, np.ndarray]:
    """Local (row, column) positions of anchors ``r0..r1`` whose ``index`` is in ``[c0, c1)``."""
    seg = index[r0:r1]
    rows = np.flatnonzero((seg >= c0) & (seg < c1))
    return rows, seg[rows] - c0


def _logit_bound(A: np.ndarray, B: np.ndarray, temperature: float) -> float:
    """An upper bound on ``|A @ B.T|`` and ``|A @ B.T / temperature|`` (Cauchy-Schwarz)."""
    with np.errstate(over="ignore", invalid="ignore"):
        na = float(np.sqrt(np.einsum("ij,ij->i", A, A)).max())
        nb = float(np.sqrt(np.einsum("ij,ij->i", B, B)).max())
        prod = na * nb
        return max(prod, prod / temperature)


_BLOCK_WHAT = "the logits anchors @ candidates.T / temperature"
_SPAN_HINT = (
    "the logits anchors @ candidates.T / temperature of a row span more than 1.8e308; "
    "rescale anchors and candidates"
)


def _logit_blocks(
    A: np.ndarray, B: np.ndarray, temperature: float, chunk_size: int, what: str = _BLOCK_WHAT
):
    """Yield ``(r0, r1, c0, c1, block)`` with ``block = A[r0:r1] @ B[c0:c1].T / temperature``.

    Blocks are yielded row band by row band (all candidate blocks of one band of anchors,
    then the next band). One scratch buffer of ``chunk_size**2`` floats is reused, so a
    caller must finish with a block before asking for the next one. Raises ``ValueError``
    if a block overflows float64.
    """
    n, c = A.shape[0], B.shape[0]
    buf = np.empty(min(chunk_size, n) * min(chunk_size, c))
    check = not _logit_bound(A, B, temperature) < 1e300
    for r0 in range(0, n, chunk_size):
        r1 = min(r0 + chunk_size, n)
        Ar = A[r0:r1]
        for c0 in range(0, c, chunk_size):
            c1 = min(c0 + chunk_size, c)
            blk = buf[: (r1 - r0) * (c1 - c0)].reshape(r1 - r0, c1 - c0)
            with np.errstate(over="ignore", invalid="ignore"):
                np.matmul(Ar, B[c0:c1].T, out=blk)
                blk /= temperature
            if check:
                finite_or_raise(blk, what)
            yield r0, r1, c0, c1, blk


def _streaming_logsumexp(
    A: np.ndarray,
    B: np.ndarray,
    temperature: float,
    *,
    positives: np.ndarray | None = None,
    exclude: tuple[np.ndarray, ...] = (),
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    off_positive: bool = False,
    what: str = _BLOCK_WHAT,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Unchecked streaming log-sum-exp on clean float64 ``A`` (n, D) and ``B`` (c, D).

    Returns ``(m, s, pos, r)``: each anchor's maximum logit over its denominator set, the
    sum of ``exp(logit - m)`` over that set, (if ``positives`` is given) each anchor's
    positive logit, and (if ``off_positive``) the same sum without the positive's term,
    accumulated separately so that ``1 - p(positive) = r / s`` keeps full relative
    precision when the positive's probability is close to 1. ``exclude`` holds index
    arrays of shape ``(n,)``, one candidate per anchor each, removed from the
    denominator. Arguments below ``_EXP_FLOOR`` are raised to it before exp (see above).
    Peak extra memory: ``chunk_size**2`` floats plus a few arrays of length ``n``.
    """
    n = A.shape[0]
    m_all = np.empty(n)
    s_all = np.empty(n)
    pos_all = None if positives is None else np.empty(n)
    r_all = np.empty(n) if off_positive else None
    m = s = r = np.empty(0)
    for r0, r1, c0, c1, blk in _logit_blocks(A, B, temperature, chunk_size, what):
        if c0 == 0:
            m = np.full(r1 - r0, -np.inf)
            s = np.zeros(r1 - r0)
            r = np.zeros(r1 - r0)
        if positives is not None:
            prow, pcol = _hits(positives, r0, r1, c0, c1)
            pos_all[r0 + prow] = blk[prow, pcol]
        hits = [_hits(index, r0, r1, c0, c1) for index in exclude]
        for rows, cols in hits:
            blk[rows, cols] = -np.inf
        new_m = np.maximum(m, blk.max(axis=1))
        shift = new_m if np.isfinite(new_m).all() else np.where(np.isfinite(new_m), new_m, 0.0)
        blk -= shift[:, None]
        np.maximum(blk, _EXP_FLOOR, out=blk)
        np.exp(blk, out=blk)
        for rows, cols in hits:
            blk[rows, cols] = 0.0
        rescale = np.exp(m - shift)
        s *= rescale
        s += blk.sum(axis=1)
        if off_positive:
            blk[prow, pcol] = 0.0
            r *= rescale
            r += blk.sum(axis=1)
        m = new_m
        if c1 == B.shape[0]:
            m_all[r0:r1] = m
            s_all[r0:r1] = s
            if off_positive:
                r_all[r0:r1] = r
    return m_all, s_all, pos_all, r_all


def _streaming_positive_log_probs(
    A: np.ndarray,
    B: np.ndarray,
    temperature: float,
    positives: np.ndarray | None = None,
    exclude: np.ndarray | None = None,
    *,
    include_positive: bool = True,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    what: str = _BLOCK_WHAT,
    hint: str = _SPAN_HINT,
) -> np.ndarray:
    """Streaming twin of ``_positive_log_probs`` for logits ``A @ B.T / temperature``.

    Same arguments and result as ``_positive_log_probs(A @ B.T / temperature, positives,
    exclude, include_positive=...)``, computed block by block, on clean float64 input.
    Logits that overflow raise ``ValueError`` naming ``what``; a positive more than
    1.8e308 below its row's maximum raises ``ValueError`` ending with ``hint``.
    """
    pos = np.arange(A.shape[0]) if positives is None else positives
    removed = () if exclude is None else (exclude,)
    if not include_positive:
        removed = (*removed, pos)
    if _logit_bound(A, B, temperature) < 1e300:  # no logit, nor a difference of two, overflows
        m, s, pos_vals, _ = _streaming_logsumexp(
            A, B, temperature, positives=pos, exclude=removed, chunk_size=chunk_size, what=what
        )
        return (pos_vals - m) - np.log(s)
    with np.errstate(over="ignore", invalid="ignore"):
        m, s, pos_vals, _ = _streaming_logsumexp(
            A, B, temperature, positives=pos, exclude=removed, chunk_size=chunk_size, what=what
        )
        out = (pos_vals - m) - np.log(s)
    return finite_or_raise(
        out, "a positive's log-probability (its logit minus its row's maximum)", hint
    )


def _streaming_gradient_products(
    A: np.ndarray,
    B: np.ndarray,
    temperature: float,
    lse: np.ndarray,
    positives: np.ndarray,
    positive_weight: np.ndarray,
    *,
    exclude: tuple[np.ndarray, ...] = (),
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    what: str = _BLOCK_WHAT,
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``G @ B`` (n, D) and ``G.T @ A`` (c, D) for ``G = P - Y``, block by block.

    ``P[a, c] = exp(A[a] . B[c] / temperature - lse[a])`` is each anchor's softmax (zero
    where excluded) and ``Y`` the one-hot matrix of the positives; ``G`` is the gradient of
    the summed loss with respect to the logits. Its positive entries ``p - 1`` are taken
    from ``positive_weight`` (computed by the caller as ``-(sum of the other p)``, without
    cancellation) instead of being formed by subtraction. No exp floor here: every weight
    is exact, however small.
    """
    GB = np.zeros((A.shape[0], B.shape[1]))
    GtA = np.zeros((B.shape[0], A.shape[1]))
    for r0, r1, c0, c1, blk in _logit_blocks(A, B, temperature, chunk_size, what):
        blk -= lse[r0:r1, None]
        np.exp(blk, out=blk)
        for index in exclude:
            rows, cols = _hits(index, r0, r1, c0, c1)
            blk[rows, cols] = 0.0
        rows, cols = _hits(positives, r0, r1, c0, c1)
        blk[rows, cols] = positive_weight[r0 + rows]
        GB[r0:r1] += blk @ B[c0:c1]
        GtA[c0:c1] += blk.T @ A[r0:r1]
    return GB, GtA


def contrastive_log_probs_streaming(
    anchors,
    candidates,
    positives=None,
    *,
    temperature: float = 1.0,
    exclude=None,
    include_positive: bool = True,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> np.ndarray:
    r"""Log-probabilities of the positives for dot-product logits, without the full matrix.

    The same result as ``contrastive_log_probs(anchors @ candidates.T / temperature,
    positives, exclude=exclude, include_positive=include_positive)``, that is

    .. math::

        \log \frac{e^{\ell_{a, p(a)}}}{\sum_{c \in \mathcal{D}(a)} e^{\ell_{a, c}}},
        \qquad \ell_{a, c} = \frac{u_a \cdot v_c}{\tau},

    computed in blocks of ``chunk_size`` anchors by ``chunk_size`` candidates with an online
    log-sum-exp: each anchor keeps a running maximum :math:`m` and a running sum
    :math:`s = \sum_c e^{\ell_{a,c} - m}`; a block that raises the maximum to :math:`m'`
    rescales the sum by :math:`e^{m - m'}` (the streaming softmax of Milakov & Gimelshein,
    2018, used by memory-efficient attention). The positive's logit is read from the block
    that holds it and excluded candidates are set to :math:`-\infty` in their block, both by
    index, so the full ``(n, c)`` matrix never exists: extra memory is ``chunk_size**2``
    floats plus a few arrays of length ``n``.

    Parameters
    ----------
    anchors : array_like, shape (n, D)
        One row per anchor, :math:`u_a`. Any real dtype, computed in float64.
    candidates : array_like, shape (c, D)
        One row per candidate, :math:`v_c`.
    positives : array_like of int, shape (n,), optional
        Index of each anchor's positive among the candidates; default ``a`` (the diagonal,
        needs ``c >= n``).
    temperature : float, default 1.0
        :math:`\tau > 0`; the logits are divided by it.
    exclude : array_like of int, shape (n,), optional
        One candidate per anchor removed from the denominator by index (the self-pair of
        NT-Xent). Must differ from the positive.
    include_positive : bool, default True
        Whether the positive is in its own denominator (``False``: the leave-one-out form
        of Poole et al., 2019).
    chunk_size : int, default 1024
        Block edge. Any value >= 1; it need not divide ``n`` or ``c``.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Float64 log-probabilities, equal to the dense computation up to rounding.

    Raises
    ------
    ValueError, TypeError
        If an array is not 2-D, is empty or not finite, the two dimensions ``D`` differ,
        an index array is malformed (as in :func:`contrastive_log_probs`), ``temperature``
        is not a finite positive number, ``chunk_size`` is not an integer >= 1, or the
        logits overflow float64.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> U, V = rng.normal(size=(2, 5, 3))
    >>> dense = contrastive_log_probs(U @ V.T / 0.5)
    >>> chunked = contrastive_log_probs_streaming(U, V, temperature=0.5, chunk_size=2)
    >>> bool(np.allclose(dense, chunked, rtol=1e-13, atol=0))
    True
    """
    A = as_real_array(anchors, "anchors", ndim=2)
    B = as_real_array(candidates, "candidates", ndim=2)
    if A.shape[1] != B.shape[1]:
        raise ValueError(
            f"anchors and candidates must have the same dimension D (columns); got shapes "
            f"{A.shape} and {B.shape}"
        )
    tau = as_positive_scalar(temperature, "temperature")
    chunk = as_int(chunk_size, "chunk_size", minimum=1)
    n, c = A.shape[0], B.shape[0]
    pos, exc, include_positive = _check_denominators(
        positives,
        exclude,
        include_positive,
        n,
        c,
        counts=f"got {n} anchors (rows of anchors) and {c} candidates (rows of candidates)",
        source="anchors",
        candidates="candidates",
    )
    return _streaming_positive_log_probs(
        A, B, tau, pos, exc, include_positive=include_positive, chunk_size=chunk
    )
