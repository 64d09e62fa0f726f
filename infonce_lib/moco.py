r"""MoCo: the loss of queries against their keys and a queue of negatives, and the queue.

He et al. (2020) compare each query :math:`q_i` with its own key :math:`k_i` (column 0 of
the logits) and with the :math:`Q` keys of a first-in, first-out queue filled by earlier
batches. :func:`moco_loss` computes that loss through the general core of
:mod:`infonce_lib.core`; :class:`MoCoQueue` keeps the queue for any batch size.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_int,
    as_positive_scalar,
    as_real_array,
    check_same_shape,
    finite_or_raise,
)
from .core import _dense_fits, _mean_loss, _positive_log_probs, _streaming_logsumexp
from .losses import _chunk_or_none

__all__ = ["MoCoQueue", "moco_loss"]


def moco_loss(q, k, queue, temperature: float = 0.07, *, chunk_size=None) -> float:
    r"""MoCo's InfoNCE: each query against its own key and a queue of negative keys.

    With queries :math:`q_i`, keys :math:`k_i` (the positives) and queued keys
    :math:`k^-_1, \dots, k^-_K`, the logits of query :math:`i` are the row
    :math:`(q_i \cdot k_i,\; q_i \cdot k^-_1, \dots, q_i \cdot k^-_K) / \tau` of an
    ``(N, 1 + K)`` matrix with the positive in **column 0**, and

    .. math::

        \mathcal{L} = -\frac1N \sum_{i=1}^{N}
        \log \frac{e^{q_i \cdot k_i / \tau}}
        {e^{q_i \cdot k_i / \tau} + \sum_{m=1}^{K} e^{q_i \cdot k^-_m / \tau}}

    (He, Fan, Wu, Xie & Girshick, 2020, eq. 1 and Algorithm 1). **Denominator**: the
    positive key and the :math:`K` queued keys, :math:`K + 1` candidates per query (here
    :math:`K` is MoCo's notation, the queue length; chapter 2 calls it :math:`Q` and keeps
    :math:`K = Q + 1` for the number of candidates); the other queries' keys of the same
    batch are not negatives. One direction (queries are the anchors); mean over queries.
    Dot products are taken as given: MoCo's encoders L2-normalise ``q`` and ``k`` (and so
    every queued key), so pass normalised vectors to reproduce the paper.

    Parameters
    ----------
    q, k : array_like, shape (N, D)
        Queries and their positive keys.
    queue : array_like, shape (K, D)
        Negative keys, **one per row** (MoCo's code stores the transpose, a ``(D, K)``
        buffer; pass ``queue.T`` for that layout). ``K = 0`` (shape ``(0, D)``) is allowed
        and gives a loss of 0.
    temperature : float, default 0.07
        :math:`\tau > 0` (MoCo's default).
    chunk_size : int, optional
        ``None`` (default): form the ``(N, 1 + K)`` matrix of logits. An integer: never
        form it; stream over blocks of ``chunk_size x chunk_size`` logits of the queue
        with an online log-sum-exp, then add each query's positive; the two agree to
        rounding.

    Returns
    -------
    float
        The loss in nats, ``>= 0``.

    Raises
    ------
    TypeError, ValueError
        If ``q`` or ``k`` is not a 2-D, non-empty, finite real array or their shapes
        differ, if ``queue`` is not 2-D and finite or its rows are not of dimension D,
        if ``temperature`` is not finite and positive, if ``chunk_size`` is not an integer
        >= 1; ``ValueError`` if the logits overflow float64 or a positive's logit lies
        more than 1.8e308 below its row's maximum.
    MemoryError
        If the dense ``(N, 1 + K)`` logits would not fit in this machine's memory (checked
        before allocating); the message suggests ``chunk_size``.

    See Also
    --------
    MoCoQueue : the first-in, first-out queue that supplies ``queue``.

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0]]); k = np.array([[1.0, 0.0]])
    >>> queue = np.array([[0.0, 1.0], [-1.0, 0.0]])
    >>> round(moco_loss(q, k, queue, temperature=1.0), 6)      # logits (1 | 0, -1)
    0.407606
    >>> round(float(np.log(1 + np.exp(-1) + np.exp(-2))), 6)   # by hand
    0.407606
    >>> round(moco_loss(q, k, queue, temperature=1.0, chunk_size=1), 6)
    0.407606
    """
    Q = as_real_array(q, "q", ndim=2)
    Kp = as_real_array(k, "k", ndim=2)
    check_same_shape(Q, "q", Kp, "k")
    queue_arr = _as_queue(queue, Q.shape[1])
    tau = as_positive_scalar(temperature, "temperature")
    chunk = _chunk_or_none(chunk_size)
    n, n_neg = Q.shape[0], queue_arr.shape[0]
    what = "the logits (q . k, q @ queue.T) / temperature"
    hint = "the logits span more than 1.8e308; rescale q, k and queue or raise the temperature"
    if chunk is not None:
        return _mean_loss(_moco_streaming(Q, Kp, queue_arr, tau, chunk, what, hint))
    _dense_fits(n, 1 + n_neg, "moco_loss")
    logits = np.empty((n, 1 + n_neg))
    with np.errstate(over="ignore", invalid="ignore"):
        logits[:, 0] = np.einsum("ij,ij->i", Q, Kp)
        np.matmul(Q, queue_arr.T, out=logits[:, 1:])
        logits /= tau
    finite_or_raise(logits, what)
    positives = np.zeros(n, dtype=np.intp)
    return _mean_loss(_positive_log_probs(logits, positives, overwrite=True, hint=hint))


def _moco_streaming(Q, Kp, queue, tau, chunk, what, hint) -> np.ndarray:
    """MoCo's log-probabilities without the ``(N, 1 + K)`` logits: the online log-sum-exp
    of each query over the queue (blocks of ``chunk``), then its positive added with
    ``logaddexp``. Unchecked input; overflow raises ``ValueError`` naming ``what``."""
    with np.errstate(over="ignore", invalid="ignore"):
        pos = np.einsum("ij,ij->i", Q, Kp)
        pos /= tau
        finite_or_raise(pos, what)
        if queue.shape[0] == 0:  # the positive is each query's only candidate
            return np.zeros(Q.shape[0])
        m, s, _, _ = _streaming_logsumexp(Q, queue, tau, chunk_size=chunk, what=what)
        out = pos - np.logaddexp(pos, m + np.log(s))
    return finite_or_raise(
        out, "a positive's log-probability (its logit minus its row's maximum)", hint
    )


def _as_queue(queue, dim: int) -> np.ndarray:
    arr = as_real_array(queue, "queue", ndim=2, allow_empty=True)
    if arr.shape[1] != dim:
        hint = (
            " (it looks like MoCo's (D, K) layout: pass queue.T)"
            if arr.shape[0] == dim and arr.shape[1] > 0
            else ""
        )
        raise ValueError(
            f"queue must hold one key of dimension D = {dim} per row, shape (K, {dim}); "
            f"got shape {arr.shape}{hint}"
        )
    return arr


class MoCoQueue:
    r"""The first-in, first-out dictionary of negative keys of MoCo (He et al., 2020).

    MoCo keeps the keys of recent batches as negatives: after each step the batch's keys
    are **enqueued** and the oldest keys **dequeued** (He et al., 2020, Sec. 3.2 and
    Algorithm 1). The order matters: the loss of a step uses the queue *before* that
    step's keys are added, so no key is ever its own query's negative
    (:meth:`loss_and_enqueue` does both in that order).

    The storage is a ring buffer of ``capacity`` rows with a write pointer, as in MoCo's
    code, but without its ``assert K % batch_size == 0``: a batch that runs past the end
    wraps around to the start, and a batch larger than the capacity leaves only its last
    ``capacity`` keys. :attr:`keys` lists the stored keys one per row, ``(len, dim)``,
    in buffer order (the loss does not depend on the order of the negatives).

    Parameters
    ----------
    capacity : int
        :math:`K`, the number of keys the queue holds when full (MoCo: 65,536).
    dim : int
        :math:`D`, the dimension of each key (MoCo: 128).
    initial : array_like, shape (capacity, dim), optional
        Keys to start from, e.g. random unit vectors as in MoCo's code; default: an empty
        queue that fills up over the first steps.

    Raises
    ------
    TypeError, ValueError
        If ``capacity`` or ``dim`` is not an integer >= 1, or ``initial`` (or a batch of
        keys) is not a finite real array with rows of dimension ``dim``.

    Examples
    --------
    >>> import numpy as np
    >>> Q = MoCoQueue(capacity=3, dim=1)
    >>> Q.enqueue([[1.0], [2.0]]); Q.enqueue([[3.0], [4.0]])  # 4 overwrites 1, the oldest
    >>> Q.keys.ravel().tolist(), len(Q)
    ([4.0, 2.0, 3.0], 3)
    """

    def __init__(self, capacity: int, dim: int, *, initial=None) -> None:
        self._capacity = as_int(capacity, "capacity", minimum=1)
        self._dim = as_int(dim, "dim", minimum=1)
        self._buffer = np.zeros((self._capacity, self._dim))
        self._ptr = 0
        self._size = 0
        if initial is not None:
            arr = as_real_array(initial, "initial", ndim=2)
            if arr.shape != (self._capacity, self._dim):
                raise ValueError(
                    f"initial must have shape (capacity, dim) = ({self._capacity}, {self._dim}); "
                    f"got {arr.shape}"
                )
            self._buffer[:] = arr
            self._size = self._capacity

    @property
    def capacity(self) -> int:
        """The number of keys the queue holds when full."""
        return self._capacity

    @property
    def dim(self) -> int:
        """The dimension of each key."""
        return self._dim

    def __len__(self) -> int:
        return self._size

    @property
    def keys(self) -> np.ndarray:
        """A copy of the stored keys, shape ``(len(self), dim)``, in buffer order."""
        return self._buffer[: self._size].copy()

    def enqueue(self, keys) -> None:
        """Add a batch of keys (shape ``(m, dim)``, any ``m >= 1``), dropping the oldest.

        Key ``j`` of the batch goes to slot ``(pointer + j) mod capacity``; the pointer
        then advances by ``m`` (mod capacity).
        """
        arr = as_real_array(keys, "keys", ndim=2)
        if arr.shape[1] != self._dim:
            raise ValueError(
                f"keys must have dimension dim = {self._dim} per row; got shape {arr.shape}"
            )
        m = arr.shape[0]
        cap = self._capacity
        if m > cap:  # only the last `cap` keys survive; they start where key m - cap lands
            start = (self._ptr + m - cap) % cap
            arr = arr[m - cap :]
        else:
            start = self._ptr
        self._buffer[(start + np.arange(arr.shape[0])) % cap] = arr
        self._ptr = (self._ptr + m) % cap
        self._size = min(self._size + m, cap)

    def loss_and_enqueue(self, q, k, temperature: float = 0.07) -> float:
        """:func:`moco_loss` of ``q`` and ``k`` against the current queue, then enqueue ``k``."""
        loss = moco_loss(q, k, self._buffer[: self._size], temperature)
        self.enqueue(k)
        return loss

    def __repr__(self) -> str:
        return f"MoCoQueue(capacity={self._capacity}, dim={self._dim}, len={self._size})"
