r"""InfoNCE and its named variants, each a thin wrapper around :mod:`infonce_lib.core`.

Each docstring states its denominator exactly: whether the positive is in it, whether
self-pairs are excluded, and whether a symmetric loss averages or sums its two directions.

=======================  ===============  ==================  =========  ====================
function                 similarity       positive in denom.  self-pair  reduction
=======================  ===============  ==================  =========  ====================
:func:`info_nce_loss`    dot product / τ  yes                 none       mean over rows of Z1
:func:`nt_xent_loss`     cosine / τ       yes                 excluded   mean over 2N views
:func:`clip_loss`        cosine × scale   yes                 none       mean of 2 directions
:func:`moco_loss`        dot product / τ  yes (column 0)      none       mean over queries
:func:`binary_nce_loss`  any scores       no softmax          n/a        mean over rows
=======================  ===============  ==================  =========  ====================

MoCo's loss and queue are in :mod:`infonce_lib.moco`; two losses without a softmax, on
batches of cosine scores (chapter 6), are in :mod:`infonce_lib.margin_losses`.

The self-pair of NT-Xent (a view against itself) is removed by index, never with a
large negative constant.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import log_expit

from ._validation import (
    as_int,
    as_positive_scalar,
    as_real_array,
    check_same_shape,
    finite_or_raise,
)
from .core import (
    _EXP_FLOOR,
    _dense_fits,
    _diagonal_log_probs_columns_inplace,
    _mean_loss,
    _positive_log_probs,
    _streaming_gradient_products,
    _streaming_logsumexp,
    _streaming_positive_log_probs,
)

__all__ = [
    "binary_nce_loss",
    "clip_loss",
    "info_nce_loss",
    "info_nce_loss_and_grad",
    "nt_xent_loss",
]

_SAFE = 1e300  # logits bounded by this cannot overflow float64 (max 1.8e308)
_DENSE_CHECK_FROM = 4096  # N above which a dense (N, N) matrix is checked against memory
_LOGITS = "the logits Z1 @ Z2.T / temperature"
_SPAN_WHAT = "a log-probability (a logit of Z1 @ Z2.T / temperature minus its row maximum)"
_SPAN_HINT = "the logits of a row span more than 1.8e308; rescale Z1 and Z2"
_TINY_TEMPERATURE = "cosine / temperature spans more than 1.8e308; use a larger temperature"
_COSINE_LOGITS = "the logits (cosine / temperature)"


# ---------------------------------------------------------------- private helpers


def _float64_matrix(value, name: str) -> np.ndarray:
    """``value`` as a 2-D float64 array, without a finiteness pass when it already is one.

    A contiguous, non-empty float64 2-D array is returned as it is; its finiteness is then
    the caller's to check (:func:`info_nce_loss` checks its logits, which cost a quarter of
    the inputs' size to scan). Anything else goes through
    :func:`~infonce_lib._validation.as_real_array`.
    """
    if (
        type(value) is np.ndarray  # not a subclass (see _validation.check_array_type)
        and value.dtype == _F64
        and value.ndim == 2
        and value.size
        and (value.flags.c_contiguous or value.flags.f_contiguous)
    ):
        return value
    return as_real_array(value, name, ndim=2)


_F64 = np.dtype(np.float64)


def _matrix_and_sumsq(value, name: str) -> tuple[np.ndarray, float]:
    """``value`` as a finite float64 2-D array, and the sum of its squares.

    The sum of squares is computed with one BLAS dot product; it is finite exactly when
    every entry is finite (barring entries above 1e154, which fall back to the full check),
    so a float64 array that passes costs one fast pass instead of the ``isfinite`` pass of
    :func:`~infonce_lib._validation.as_real_array`. It also bounds every logit through
    Cauchy-Schwarz: ``|z1_i . z2_j| <= sqrt(sumsq1 * sumsq2)``.
    """
    if (
        type(value) is np.ndarray  # not a subclass (see _validation.check_array_type)
        and value.dtype == _F64
        and value.ndim == 2
        and value.size
        and (value.flags.c_contiguous or value.flags.f_contiguous)
    ):
        flat = value.ravel(order="K")  # a view, in memory order
        with np.errstate(over="ignore", invalid="ignore"):
            ss = float(flat @ flat)
        if math.isfinite(ss):
            return value, ss
    arr = as_real_array(value, name, ndim=2)
    flat = arr.ravel(order="K")
    with np.errstate(over="ignore", invalid="ignore"):
        return arr, float(flat @ flat)


def _scaled_dot_logits(
    A: np.ndarray, B: np.ndarray, factor: float, bound: float, what: str
) -> np.ndarray:
    """``A @ B.T * factor`` as a new array; raise if it may have overflowed and did.

    ``bound`` is an upper bound on ``|A @ B.T|``; the full finiteness check runs only
    when ``bound * max(1, factor)`` could exceed float64.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        logits = A @ B.T
        logits *= factor
    if not bound * max(1.0, factor) < _SAFE:
        finite_or_raise(logits, what)
    return logits


def _inverse(temperature: float) -> float:
    inv = 1.0 / temperature
    if not math.isfinite(inv):
        raise ValueError(
            f"temperature must be at least about 5.6e-309 (1 / temperature overflows float64); "
            f"got {temperature}"
        )
    return inv


def _unit_rows_into(out: np.ndarray, X: np.ndarray, name: str) -> None:
    """Write the rows of ``X`` scaled to unit Euclidean norm into ``out``.

    Each row is first divided by its largest absolute entry, so neither tiny (1e-300) nor
    huge (1e300) rows underflow or overflow when squared. A zero row raises: the cosine
    similarity of a zero vector is undefined.
    """
    scale = np.maximum(X.max(axis=1), -X.min(axis=1))  # max |x| per row, no temporary
    zero = np.flatnonzero(scale == 0)
    if zero.size:
        raise ValueError(
            f"{name} has {zero.size} zero-norm row(s) (first: row {int(zero[0])}); the cosine "
            "similarity of a zero vector is undefined"
        )
    np.divide(X, scale[:, None], out=out)
    out /= np.sqrt(np.einsum("ij,ij->i", out, out))[:, None]


def _unit_rows(X: np.ndarray, name: str) -> np.ndarray:
    out = np.empty_like(X)
    _unit_rows_into(out, X, name)
    return out


def _chunk_or_none(chunk_size) -> int | None:
    return None if chunk_size is None else as_int(chunk_size, "chunk_size", minimum=1)


# ---------------------------------------------------------------- InfoNCE


def info_nce_loss(Z1, Z2, temperature: float = 0.1, *, chunk_size: int | None = None) -> float:
    r"""InfoNCE loss with dot-product logits and the positives on the diagonal.

    With logits :math:`\ell_{ij} = z^{(1)}_i \cdot z^{(2)}_j / \tau`,

    .. math::

        \mathcal{L} = -\frac{1}{N} \sum_{i=1}^{N}
        \log \frac{e^{\ell_{ii}}}{\sum_{j=1}^{N} e^{\ell_{ij}}}

    (van den Oord, Li & Vinyals, 2018, eq. 4). Row ``i`` of ``Z1`` is the anchor; its
    candidates are all ``N`` rows of ``Z2``; its positive is row ``i`` of ``Z2``, which is
    in the denominator; nothing is excluded; one direction only (rows of ``Z1`` are the
    anchors). Each row's largest logit is subtracted before exponentiating. From N = 128,
    when most logits of the batch lie more than ``40 + log N`` below their row's maximum,
    those terms are left out: together they add less than ``e^-40`` to a sum that is at
    least 1, below its rounding in float64.

    Parameters
    ----------
    Z1, Z2 : array_like, shape (N, D)
        Anchors and candidates: NumPy arrays of any real dtype or nested lists. Computed in
        float64. Not modified.
    temperature : float, default 0.1
        :math:`\tau > 0`; the logits are divided by it.
    chunk_size : int, optional
        ``None`` (default): form the ``(N, N)`` matrix of logits. An integer: never form it;
        stream over blocks of ``chunk_size x chunk_size`` logits with an online
        log-sum-exp (:func:`~infonce_lib.contrastive_log_probs_streaming`); the two
        agree to rounding.

    Returns
    -------
    float
        The loss in nats: ``>= 0``; ``log N`` when all logits are equal; ``0.0`` for N = 1.

    Raises
    ------
    TypeError
        If the inputs are not real numbers (a masked array or a PyTorch tensor gets a
        message saying what to pass), ``temperature`` is not a real number or
        ``chunk_size`` not an integer.
    ValueError
        If ``Z1`` or ``Z2`` is not 2-D, empty, ragged, not finite, or their shapes differ;
        if ``temperature`` is not finite and positive or ``chunk_size`` is below 1; if the
        logits ``Z1 @ Z2.T / temperature`` overflow float64, or a positive's logit lies
        more than 1.8e308 below its row's maximum (its log-probability overflows). Terms
        that are each finite are averaged without overflow.
    MemoryError
        If the dense ``(N, N)`` logits would not fit in this machine's memory (checked
        before allocating); the message suggests ``chunk_size``.

    See Also
    --------
    info_nce_loss_and_grad : the same loss with its exact gradient, optionally chunked.

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
    >>> round(info_nce_loss(np.eye(4), S.T, temperature=0.5, chunk_size=3), 4)
    0.4786
    """
    if (  # plain float64 arrays and a float temperature: the checks below, done cheaply
        chunk_size is None
        and type(Z1) is np.ndarray  # not a subclass (see _validation.check_array_type)
        and type(Z2) is np.ndarray
        and Z1.dtype is _F64
        and Z2.dtype is _F64
        and Z1.ndim == 2
        and Z1.shape == Z2.shape
        and Z1.size
        and type(temperature) is float
        and 0.0 < temperature < math.inf
        and 1.0 / temperature < math.inf
    ):
        return _info_nce_loss_dense(Z1, Z2, 1.0 / temperature, Z1, Z2)
    A = _float64_matrix(Z1, "Z1")
    B = _float64_matrix(Z2, "Z2")
    if A.shape != B.shape:
        check_same_shape(A, "Z1", B, "Z2")
    tau = as_positive_scalar(temperature, "temperature")
    inv = _inverse(tau)
    if chunk_size is None:
        return _info_nce_loss_dense(A, B, inv, Z1, Z2)
    chunk = as_int(chunk_size, "chunk_size", minimum=1)
    A = as_real_array(A, "Z1", ndim=2)  # _float64_matrix skipped the finiteness check
    B = as_real_array(B, "Z2", ndim=2)
    log_probs = _streaming_positive_log_probs(
        A, B, tau, chunk_size=chunk, what=_LOGITS, hint=_SPAN_HINT
    )
    return _mean_loss(log_probs)


def _info_nce_loss_dense(A: np.ndarray, B: np.ndarray, inv: float, Z1, Z2) -> float:
    """:func:`info_nce_loss` without ``chunk_size`` on 2-D float64 ``A`` and ``B`` of the same
    shape that may not be finite (``Z1`` and ``Z2``: the caller's arguments)."""
    n = A.shape[0]
    if n > _DENSE_CHECK_FROM:
        _dense_fits(n, n, "info_nce_loss")
    # By Cauchy-Schwarz every logit is at most |Z1| |Z2| / temperature in size (Frobenius
    # norms). The two sums of squares (np.vdot, one BLAS pass each) are finite exactly when
    # the inputs are (barring entries above 1e154, which take the checked path). Below
    # 1e300 nothing that follows can overflow, so no errstate and no finiteness pass over
    # the logits are needed.
    norm_a = math.sqrt(np.vdot(A, A))
    bound = norm_a * math.sqrt(np.vdot(B, B))
    if not bound * max(1.0, inv) < _SAFE:  # also NaN: a non-finite input
        return _info_nce_loss_checked(Z1, Z2, A, B, inv)
    return _info_nce_loss_fast(A, B, inv, norm_a)


def _info_nce_loss_fast(A: np.ndarray, B: np.ndarray, inv: float, norm_a: float) -> float:
    """:func:`info_nce_loss` on finite float64 input whose logits are below 1e300 in size.

    The logits are formed transposed, candidates x anchors, so that each anchor's maximum
    and sum are reductions over axis 0 (vectorised across anchors; the sums by BLAS).
    ``1 / temperature`` multiplies the smaller of ``Z1`` (N x D) and the logits (N x N);
    ``Z1`` only when ``1 / temperature >= 1`` (nothing can underflow) and ``norm_a``
    (the Frobenius norm of ``Z1``) times it stays below 1e300 (nothing can overflow).
    From N = ``_GATHER_FROM``, when most exponentials are too small to change a sum (see
    ``_NEGLIGIBLE``), only the others are computed. At small N the cost is the number of
    NumPy calls, and these are the fewest that do the work.
    """
    n, d = A.shape
    if d < n and inv >= 1.0 and norm_a * inv < _SAFE:
        logits_t = B @ (A * inv).T
    else:
        logits_t = B @ A.T
        np.multiply(logits_t, inv, logits_t)
    col_max = np.maximum.reduce(logits_t, 0)
    if n >= _GATHER_FROM:
        cut = col_max - (_NEGLIGIBLE + math.log(n))
        if 2 * np.count_nonzero(logits_t[:_SAMPLE] > cut) <= _SAMPLE * n:  # few terms matter
            terms = np.log(_gathered_exp_sums(logits_t, col_max, logits_t > cut))
            np.subtract(terms, logits_t.diagonal() - col_max, terms)
            return float(np.dot(_ones(n), terms) / n)
    np.subtract(logits_t, col_max, logits_t)  # each anchor's maximum is now 0
    if n < _GATHER_FROM:
        # A new array, so the diagonal is kept; the floor as an array (see _constant).
        exps = np.maximum(logits_t, _constant((n, n), _EXP_FLOOR))
        positives = logits_t.diagonal()
    else:  # no second N x N array
        positives = logits_t.diagonal().copy()
        exps = np.maximum(logits_t, _EXP_FLOOR, out=logits_t)
    np.exp(exps, out=exps)  # the floor keeps exp off its slow path below -708
    terms = np.log(np.dot(_ones(n), exps))
    # Each anchor's loss, log(sum) - (positive - max), is >= 0: their mean is never -0.0.
    np.subtract(terms, positives, terms)
    return float(np.dot(_ones(n), terms) / n)


# Each anchor's sum of exponentials (its maximum shifted to 0) holds exp(0) = 1, so it is
# >= 1. An argument below -(_NEGLIGIBLE + log N) contributes less than exp(-40) / N, and
# all of them together less than exp(-40) = 4.2e-18 to a sum >= 1: 26 times less than
# the rounding of that sum in float64 (its last bit is 2.2e-16), which already limits the
# loss's accuracy to about 1e-16 in absolute terms. Leaving them out therefore changes
# nothing that float64 resolves; it also keeps exp off its slow path for arguments below
# -708, and at tau = 0.1 it usually leaves out most of the N^2 exponentials.
_NEGLIGIBLE = 40.0
_GATHER_FROM = 128  # N from which the few terms that matter are gathered, when few do
_SAMPLE = 32  # rows of the logits (candidates) that decide whether few do


def _gathered_exp_sums(logits_t: np.ndarray, col_max: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Each anchor's (column's) sum of ``exp(logit - col_max)`` over the entries ``keep``
    marks, gathered into a vector (one exp per kept entry); ``logits_t`` is not modified."""
    n = col_max.shape[0]
    flat = np.flatnonzero(keep)  # entry (j, i) is j * N + i: anchor i = flat % N
    anchor = flat % n
    terms = logits_t.ravel()[flat]
    terms -= col_max[anchor]
    np.exp(terms, terms)
    return np.bincount(anchor, weights=terms, minlength=n)


def _info_nce_loss_checked(Z1, Z2, A, B, inv) -> float:
    """:func:`info_nce_loss` on inputs that may be non-finite or give logits near 1.8e308:
    the same computation, checked step by step, so that an error names what overflowed
    (and a sum of finite terms that overflows becomes their mean, computed safely)."""
    as_real_array(Z1, "Z1", ndim=2)  # NaN or infinite entries are reported as such
    as_real_array(Z2, "Z2", ndim=2)
    with np.errstate(over="ignore", invalid="ignore"):
        logits_t = B @ A.T
        logits_t *= inv
    finite_or_raise(logits_t, _LOGITS)
    with np.errstate(over="ignore", invalid="ignore"):
        log_probs, _ = _diagonal_log_probs_columns_inplace(logits_t)
    finite_or_raise(log_probs, _SPAN_WHAT, _SPAN_HINT)
    return _mean_loss(log_probs)  # finite terms whose sum overflowed: their mean


@functools.lru_cache(maxsize=64)
def _constant(shape: tuple[int, ...], value: float) -> np.ndarray:
    """A read-only float64 array of ``shape`` filled with ``value``, built once and reused.

    Two uses, both small: a vector of ones, whose dot product sums columns by BLAS
    (:func:`_ones`), and an (n, n) array of ``_EXP_FLOOR`` for n < ``_GATHER_FROM``, because
    ``np.maximum`` against an array is vectorised and against a scalar it is not (at n = 64,
    0.8 µs against 2.2 µs with NumPy 2.4).
    """
    out = np.full(shape, value)
    out.flags.writeable = False
    return out


def _ones(n: int) -> np.ndarray:
    """A read-only vector of ``n`` ones (cached for n <= 4096): column sums by BLAS."""
    return _constant((n,), 1.0) if n <= 4096 else np.ones(n)


def info_nce_loss_and_grad(
    Z1, Z2, temperature: float = 0.1, *, chunk_size: int | None = None
) -> tuple[float, np.ndarray, np.ndarray]:
    r"""InfoNCE loss (as :func:`info_nce_loss`) and its exact gradient in both inputs.

    With :math:`\ell_{ij} = z^{(1)}_i \cdot z^{(2)}_j / \tau` and
    :math:`p_{ij} = e^{\ell_{ij}} / \sum_k e^{\ell_{ik}}` (softmax over the candidates of
    anchor :math:`i`, positive included), the mean loss
    :math:`\mathcal{L} = -\frac1N \sum_i \log p_{ii}` has

    .. math::

        \frac{\partial \mathcal{L}}{\partial z^{(1)}_i}
        = -\frac{1}{N\tau} \Big( z^{(2)}_i - \sum_{k} p_{ik}\, z^{(2)}_k \Big),
        \qquad
        \frac{\partial \mathcal{L}}{\partial z^{(2)}_j}
        = -\frac{1}{N\tau} \Big( z^{(1)}_j - \sum_{i} p_{ij}\, z^{(1)}_i \Big).

    The first is the anchor gradient of chapter 2, :math:`-(1/\tau)(z^+ - \sum_k p_k z_k)`,
    divided by :math:`N` because the loss is a mean over anchors: each anchor is pulled
    towards its positive and pushed away from the softmax-weighted average of all
    candidates, so the candidates with the largest :math:`p_{ik}` (the hard negatives) push
    hardest. The second collects, for candidate :math:`j`, the pull from its own anchor and
    the pushes from every anchor that gave it weight. In matrix form
    :math:`\nabla_{Z_1} = (P - I) Z_2 / (N\tau)` and
    :math:`\nabla_{Z_2} = (P - I)^\top Z_1 / (N\tau)`.

    Parameters
    ----------
    Z1, Z2 : array_like, shape (N, D)
        Anchors and candidates, as in :func:`info_nce_loss`. Not modified.
    temperature : float, default 0.1
        :math:`\tau > 0`.
    chunk_size : int, optional
        ``None`` (default): form the ``(N, N)`` matrix of logits. An integer: never form it;
        stream over blocks of ``chunk_size x chunk_size`` logits twice, first for each
        anchor's log-sum-exp (online), then for the two products :math:`P Z_2` and
        :math:`P^\top Z_1`; extra memory ``chunk_size**2`` floats plus ``O(N D)``.

    Returns
    -------
    loss : float
        :func:`info_nce_loss` of the same arguments up to rounding, with or without
        ``chunk_size``: the two order their floating-point operations differently, so the
        last bits can differ (tested: ``|difference| <= 1e-14 (1 + loss + max |logit|)``;
        on small batches they differ by a unit in the last place about one time in four).
    dZ1, dZ2 : numpy.ndarray, shape (N, D)
        Float64 gradients of the loss with respect to ``Z1`` and ``Z2``.

    Raises
    ------
    TypeError, ValueError, MemoryError
        As :func:`info_nce_loss`; also ``ValueError`` if an entry of a gradient overflows
        float64 (inputs near 1.8e308 at a small temperature), naming the gradient.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Z1, Z2 = rng.normal(size=(2, 4, 3))
    >>> loss, dZ1, dZ2 = info_nce_loss_and_grad(Z1, Z2, temperature=0.5)
    >>> bool(abs(loss - info_nce_loss(Z1, Z2, temperature=0.5)) <= 1e-14 * (1 + loss + 10))
    True
    >>> h = 1e-6; E = np.zeros_like(Z1); E[1, 2] = h   # one central difference
    >>> fd = (info_nce_loss(Z1 + E, Z2, 0.5) - info_nce_loss(Z1 - E, Z2, 0.5)) / (2 * h)
    >>> bool(abs(fd - dZ1[1, 2]) < 1e-8)
    True
    """
    A, ssa = _matrix_and_sumsq(Z1, "Z1")
    B, ssb = _matrix_and_sumsq(Z2, "Z2")
    check_same_shape(A, "Z1", B, "Z2")
    tau = as_positive_scalar(temperature, "temperature")
    chunk = _chunk_or_none(chunk_size)
    inv = _inverse(tau)
    if chunk is None:
        _dense_fits(A.shape[0], A.shape[0], "info_nce_loss_and_grad")
    bound = math.sqrt(ssa) * math.sqrt(ssb)
    if not bound * max(1.0, inv) < _SAFE:  # the logits may span more than float64 holds
        with np.errstate(over="ignore", invalid="ignore"):
            loss, GB, GtA = _info_nce_loss_and_grad(A, B, tau, inv, chunk, bound)
        hint = "rescale Z1 and Z2 or use a larger temperature"
        finite_or_raise(GB, "the gradient with respect to Z1", hint)
        finite_or_raise(GtA, "the gradient with respect to Z2", hint)
        return loss, GB, GtA
    return _info_nce_loss_and_grad(A, B, tau, inv, chunk, bound)


def _info_nce_loss_and_grad(A, B, tau, inv, chunk, bound):
    n = A.shape[0]
    if chunk is None:
        logits_t = _scaled_dot_logits(B, A, inv, bound, "the logits Z1 @ Z2.T / temperature")
        log_probs, sums = _diagonal_log_probs_columns_inplace(logits_t, floor=False)
        # Gt[j, i] = dL_i / dl_ij = p_ij - [i == j]: the softmax of anchor i over the
        # candidates j, minus 1 at the positive. p_ii - 1 is formed as minus the sum of
        # the other weights (by index), never as p_ii - 1, which cancels when p_ii ~ 1.
        Gt = logits_t  # holds exp(l_ij - max_j l_ij)
        diag = np.arange(n)
        Gt[diag, diag] = 0.0
        others = Gt.sum(axis=0)
        Gt /= sums
        Gt[diag, diag] = -others / sums
        GB = Gt.T @ B
        GtA = Gt @ A
    else:
        diag = np.arange(n)
        what = "the logits Z1 @ Z2.T / temperature"
        m, s, pos, r = _streaming_logsumexp(
            A, B, tau, positives=diag, chunk_size=chunk, off_positive=True, what=what
        )
        log_probs = (pos - m) - np.log(s)
        GB, GtA = _streaming_gradient_products(
            A, B, tau, m + np.log(s), diag, -r / s, chunk_size=chunk, what=what
        )
    GB *= inv / n
    GtA *= inv / n
    return _mean_loss(finite_or_raise(log_probs, _SPAN_WHAT, _SPAN_HINT)), GB, GtA


# ---------------------------------------------------------------- NT-Xent (SimCLR)


def nt_xent_loss(z1, z2, temperature: float = 0.5, *, chunk_size: int | None = None) -> float:
    r"""NT-Xent, the normalised temperature-scaled cross-entropy of SimCLR.

    Stack the two views, :math:`z = (z^{(1)}_1, \dots, z^{(1)}_N, z^{(2)}_1, \dots,
    z^{(2)}_N)`, so view :math:`a` has its positive at :math:`a + N \bmod 2N`. With the
    cosine similarity :math:`s_{ab} = z_a \cdot z_b / (\lVert z_a \rVert \lVert z_b
    \rVert)`,

    .. math::

        \mathcal{L} = -\frac{1}{2N} \sum_{a=1}^{2N}
        \log \frac{e^{s_{a, p(a)} / \tau}}{\sum_{b \neq a} e^{s_{ab} / \tau}}

    (Chen, Kornblith, Norouzi & Hinton, 2020, eq. 1 and Algorithm 1). **Denominator**: the
    :math:`2N - 1` other views, i.e. the positive and the :math:`2(N-1)` negatives; the
    self-similarity :math:`s_{aa} = 1` is excluded by index (set to :math:`-\infty`, never
    to a large negative constant). **Mean** over all :math:`2N` anchors, both views in
    turn (SimCLR's :math:`\frac{1}{2N} \sum_k [\ell(2k-1, 2k) + \ell(2k, 2k-1)]`).

    Parameters
    ----------
    z1, z2 : array_like, shape (N, D)
        The two augmented views; row ``i`` of each comes from the same example. Any real
        dtype, computed in float64; rows need not be normalised (they are, internally),
        but none may be zero. Not modified.
    temperature : float, default 0.5
        :math:`\tau > 0`.
    chunk_size : int, optional
        ``None`` (default): form the ``(2N, 2N)`` matrix of logits and apply the general
        core (:func:`~infonce_lib.contrastive_log_probs`). An integer: never form it;
        stream over blocks of ``chunk_size`` x ``chunk_size`` logits with an online
        log-sum-exp (:func:`~infonce_lib.contrastive_log_probs_streaming`), so the extra
        memory is ``chunk_size**2`` floats plus the ``(2N, D)`` normalised views. The two
        paths agree to rounding (about 1e-15 relative). ``make bench`` compares their
        speed and memory (``DEFAULT_CHUNK_SIZE`` is a good value).

    Returns
    -------
    float
        The loss in nats, ``>= 0``; ``0.0`` for N = 1 (each view's only candidate is its
        positive); ``log(2N - 1)`` when all similarities are equal.

    Raises
    ------
    TypeError, ValueError
        If ``z1`` or ``z2`` is not a 2-D, non-empty, finite real array, the shapes differ,
        a row has zero norm, ``temperature`` is not finite and positive, or ``chunk_size``
        is not an integer >= 1; ``ValueError`` if ``cosine / temperature`` overflows
        float64 (a temperature below about 1e-308).
    MemoryError
        If the dense ``(2N, 2N)`` logits would not fit in this machine's memory (checked
        before allocating); the message suggests ``chunk_size``.

    Examples
    --------
    >>> import numpy as np
    >>> z1 = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> round(nt_xent_loss(z1, 3 * z1, temperature=1.0), 6)   # views equal up to scale
    0.551445
    >>> round(float(np.log(1 + 2 * np.exp(-1))), 6)            # by hand: s = 1, 0, 0
    0.551445
    >>> round(nt_xent_loss(z1, 3 * z1, temperature=1.0, chunk_size=1), 6)
    0.551445
    """
    A = as_real_array(z1, "z1", ndim=2)
    B = as_real_array(z2, "z2", ndim=2)
    check_same_shape(A, "z1", B, "z2")
    tau = as_positive_scalar(temperature, "temperature")
    chunk = _chunk_or_none(chunk_size)
    n = A.shape[0]
    Z = np.empty((2 * n, A.shape[1]))
    _unit_rows_into(Z[:n], A, "z1")
    _unit_rows_into(Z[n:], B, "z2")
    del A, B
    views = np.arange(2 * n)
    positives = (views + n) % (2 * n)
    inv = _inverse(tau)
    if chunk is None:
        _dense_fits(2 * n, 2 * n, "nt_xent_loss")
        # Z @ Z.T of one array is a BLAS syrk, which the OpenBLAS of NumPy's wheels runs at
        # less than half the speed of a gemm on a copy (2N x D floats, against 2N x 2N).
        logits = _scaled_dot_logits(Z, Z.copy(), inv, 1.0, _COSINE_LOGITS)
        log_probs = _positive_log_probs(
            logits, positives, views, overwrite=True, hint=_TINY_TEMPERATURE
        )
    else:
        log_probs = _streaming_positive_log_probs(
            Z,
            Z,
            tau,
            positives,
            views,
            chunk_size=chunk,
            what=_COSINE_LOGITS,
            hint=_TINY_TEMPERATURE,
        )
    return _mean_loss(log_probs)


# ---------------------------------------------------------------- CLIP


def clip_loss(
    image_embeddings, text_embeddings, logit_scale: float = 1 / 0.07, *, chunk_size=None
) -> float:
    r"""The symmetric contrastive loss of CLIP: cosine logits times a scale, both ways.

    With unit vectors :math:`u_i = x_i / \lVert x_i \rVert` (images) and
    :math:`v_j = t_j / \lVert t_j \rVert` (texts) and :math:`\ell_{ij} = s\, u_i \cdot v_j`,

    .. math::

        \mathcal{L} = \frac12 \Big(
        -\frac1N \sum_i \log \frac{e^{\ell_{ii}}}{\sum_j e^{\ell_{ij}}}
        -\frac1N \sum_j \log \frac{e^{\ell_{jj}}}{\sum_i e^{\ell_{ij}}} \Big)

    (Radford et al., 2021, Figure 3; the same as open_clip's ``ClipLoss``).
    **Denominators**: image :math:`i` against all :math:`N` texts, and text :math:`j`
    against all :math:`N` images, the positive included in each; no self-pairs exist.
    **Mean** of the two directions (not their sum). The scale *multiplies*:
    :math:`s = e^t = 1/\tau`, initialised in CLIP at :math:`1/0.07` and clipped at 100.

    Parameters
    ----------
    image_embeddings, text_embeddings : array_like, shape (N, D)
        Row ``i`` of each is a matching pair. Normalised internally; no row may be zero.
        Not modified.
    logit_scale : float, default 1/0.07
        :math:`s > 0`, the exponentiated learnable temperature of CLIP (pass ``exp(t)``,
        not ``t``).
    chunk_size : int, optional
        ``None`` (default): form the ``(N, N)`` matrix of logits. An integer: never form it;
        each direction streams over blocks of ``chunk_size x chunk_size`` logits, as in
        :func:`nt_xent_loss`; the two agree to rounding.

    Returns
    -------
    float
        The loss in nats, ``>= 0``; ``log N`` when all logits are equal.

    Raises
    ------
    TypeError, ValueError
        If an embedding array is not a 2-D, non-empty, finite real array, the shapes
        differ, a row has zero norm, ``logit_scale`` is not finite and positive, or
        ``chunk_size`` is not an integer >= 1; ``ValueError`` if ``logit_scale * cosine``
        overflows float64 or spans more than 1.8e308 within a row.
    MemoryError
        If the dense ``(N, N)`` logits would not fit in this machine's memory (checked
        before allocating); the message suggests ``chunk_size``.

    Examples
    --------
    >>> import numpy as np
    >>> I = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> round(clip_loss(I, I, logit_scale=1.0), 6)             # both ways log(1 + e^-1)
    0.313262
    >>> round(float(np.log(1 + np.exp(-1))), 6)
    0.313262
    >>> round(clip_loss(I, I, logit_scale=1.0, chunk_size=1), 6)
    0.313262
    """
    A = as_real_array(image_embeddings, "image_embeddings", ndim=2)
    B = as_real_array(text_embeddings, "text_embeddings", ndim=2)
    check_same_shape(A, "image_embeddings", B, "text_embeddings")
    scale = as_positive_scalar(logit_scale, "logit_scale")
    chunk = _chunk_or_none(chunk_size)
    U = _unit_rows(A, "image_embeddings")
    V = _unit_rows(B, "text_embeddings")
    what = "the logits logit_scale * cosine"
    hint = "logit_scale * cosine spans more than 1.8e308; use a smaller logit_scale"
    if chunk is None:
        _dense_fits(U.shape[0], U.shape[0], "clip_loss", copies=2)
        logits = _scaled_dot_logits(U, V, scale, 1.0, what)
        image_to_text = _mean_loss(_positive_log_probs(logits, hint=hint))
        text_to_image = _mean_loss(_positive_log_probs(logits.T, overwrite=True, hint=hint))
    else:
        # Logits (s U) @ V.T at temperature 1: never 1 / s, which a tiny s overflows.
        image_to_text = _mean_loss(
            _streaming_positive_log_probs(U * scale, V, 1.0, chunk_size=chunk, what=what, hint=hint)
        )
        text_to_image = _mean_loss(
            _streaming_positive_log_probs(V * scale, U, 1.0, chunk_size=chunk, what=what, hint=hint)
        )
    return image_to_text / 2 + text_to_image / 2  # never their sum, which can overflow


# ---------------------------------------------------------------- binary NCE


def binary_nce_loss(logits, *, noise_ratio: float | None = None) -> float:
    r"""Binary NCE on a matrix of scores: every pairing judged alone, data or noise.

    Row :math:`i` of the ``(N, C)`` matrix scores one data pair :math:`F_{ii}` (its
    positive, on the diagonal) and :math:`C - 1` noise pairs :math:`F_{ij}, j \neq i`.
    Noise-contrastive estimation classifies each of them on its own with the posterior
    :math:`h = \sigma(F - \log \nu)` (Gutmann & Hyvärinen, 2012; :math:`\nu` noise samples
    per data sample), and the loss is minus the NCE objective per data sample:

    .. math::

        \mathcal{L}_{\mathrm{NCE}} = -\frac1N \sum_{i=1}^{N} \Big[
        \log \sigma(F_{ii} - \log\nu) + \sum_{j \neq i} \log\big(1 - \sigma(F_{ij} -
        \log\nu)\big) \Big].

    This is the binary decision that Wu et al. (2018) used for instance discrimination,
    against the :math:`C`-way softmax of InfoNCE on the same scores. There is **no
    denominator** shared across candidates: adding a constant :math:`c_i` to row
    :math:`i` leaves InfoNCE unchanged but changes this loss, which is why NCE must learn
    the normaliser and InfoNCE need not.

    Parameters
    ----------
    logits : array_like, shape (N, C)
        Scores :math:`F` (the log density ratio model :math:`G` of NCE), ``C >= N``,
        positives on the diagonal.
    noise_ratio : float, optional
        :math:`\nu > 0`; default ``C - 1`` (the number of noise pairs per data pair), or 1
        when ``C = 1``.

    Returns
    -------
    float
        The loss in nats, ``>= 0``.

    Raises
    ------
    TypeError, ValueError
        If ``logits`` is not a 2-D, non-empty, finite real array with ``C >= N``, or
        ``noise_ratio`` is not finite and positive; ``ValueError`` if the loss itself is
        beyond float64 (many logits near 1.8e308). Terms that are each finite are
        averaged without overflow.

    Examples
    --------
    >>> round(binary_nce_loss([[0.0, 0.0], [0.0, 0.0]]), 6)  # 2 log 2: each pair at chance
    1.386294
    """
    F = as_real_array(logits, "logits", ndim=2)
    n, c = F.shape
    if c < n:
        raise ValueError(
            f"logits needs at least as many candidates (columns) as rows, the positives on "
            f"the diagonal; got shape {F.shape}"
        )
    nu = (
        float(max(c - 1, 1))
        if noise_ratio is None
        else as_positive_scalar(noise_ratio, "noise_ratio")
    )
    G = F - math.log(nu)
    rows = np.arange(n)
    data = log_expit(G[rows, rows])
    noise_terms = log_expit(-G)
    noise_terms[rows, rows] = 0.0  # the positive is not a noise sample (removed by index)
    with np.errstate(over="ignore"):
        loss = float(0.0 - np.mean(data + noise_terms.sum(axis=1)))
        if not math.isfinite(loss):  # terms near -1.8e308 whose sum overflowed: scale first
            loss = float(0.0 - ((data / n).sum() + (noise_terms / n).sum()))
    if not math.isfinite(loss):
        raise ValueError(
            "the binary NCE loss is beyond float64 (more than 1.8e308 nats): the noise terms "
            "log(1 - h), about -|logit| each for large logits, add up past it; rescale logits"
        )
    return loss
