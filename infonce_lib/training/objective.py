r"""The training objectives of chapter 8, with their gradients, the temperature's included.

Two views of each of :math:`N` images give embeddings :math:`a_i` and :math:`b_i` (rows of
``Za`` and ``Zb``; unit vectors when they come from the encoder, so their dot products are
cosines). The temperature is learned through its logarithm, as CLIP learns it (Radford et
al., 2021, section 2.5): the parameter is :math:`t = \log(1/\tau)`, the *log scale*, and the
logits are :math:`\ell_{ij} = e^{t}\, a_i \cdot b_j`.

* :func:`symmetric_infonce_grad`: CLIP's symmetric loss, the mean of InfoNCE with the
  :math:`a_i` as anchors and with the :math:`b_j` as anchors,
  :math:`\mathcal{L} = \tfrac12\big(\mathcal{L}(a \to b) + \mathcal{L}(b \to a)\big)`, the
  same number as :func:`~infonce_lib.clip_loss` for unit rows; each direction's gradient is
  that of chapter 2's :func:`~infonce_lib.info_nce_loss_and_grad` (the tests check both).
* :func:`nt_xent_grad`: SimCLR's NT-Xent on the :math:`2N` views, each view's negatives
  being the other :math:`2N - 2` views of either side (Chen et al., 2020, eq. 1); the same
  number as :func:`~infonce_lib.nt_xent_loss` for unit rows.

**The gradient in the log scale.** The logits are :math:`e^t` times a matrix that does not
depend on :math:`t`, so :math:`\partial \ell_{ij} / \partial t = \ell_{ij}` and

.. math::

    \frac{\partial \mathcal{L}}{\partial t}
    = \sum_{i,j} \frac{\partial \mathcal{L}}{\partial \ell_{ij}}\, \ell_{ij}
    = \sum_i a_i \cdot \frac{\partial \mathcal{L}}{\partial a_i} ,

the second form because :math:`\ell` is linear in the :math:`a_i` (for NT-Xent, quadratic in
the stacked views :math:`v`, it is half of :math:`\sum_k v_k \cdot \partial \mathcal{L} /
\partial v_k`). With :math:`p_{ij}` the softmax of anchor :math:`i` over its candidates, the
direction :math:`a \to b` alone has
:math:`\frac{e^t}{N} \sum_i \big(\sum_j p_{ij}\, a_i \cdot b_j - a_i \cdot b_i\big)`: the
softmax-weighted mean cosine minus the positive's, times the scale, and the symmetric loss
has the mean of the two directions'. That is :math:`-\beta\, \mathrm{d}I_{\mathrm{NCE}} /
\mathrm{d}\beta` at :math:`\beta = e^t`, the slope of chapter 6's
:func:`~infonce_lib.infonce_beta_derivatives` on the batch's cosines: negative while the
positives stand out from the softmax average, so gradient descent raises :math:`t` (sharpens
the softmax), and zero where the batch's bound stops rising in :math:`\beta`, chapter 6's
condition for the best temperature of fixed embeddings.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from .._validation import as_real_array, as_real_scalar, check_same_shape, finite_or_raise

__all__ = ["ContrastiveGradients", "nt_xent_grad", "symmetric_infonce_grad"]


class ContrastiveGradients(NamedTuple):
    """The loss of :func:`symmetric_infonce_grad` or :func:`nt_xent_grad` and its gradients.

    Attributes
    ----------
    loss : float
        The loss in nats.
    grad_a, grad_b : numpy.ndarray, shape (N, D)
        :math:`\\partial \\mathcal{L} / \\partial a_i` and
        :math:`\\partial \\mathcal{L} / \\partial b_i`, float64.
    grad_log_scale : float
        :math:`\\partial \\mathcal{L} / \\partial t`, with :math:`t = \\log(1/\\tau)`.

    Examples
    --------
    >>> Z = np.eye(3)
    >>> out = symmetric_infonce_grad(Z, Z, 0.0)
    >>> round(out.loss, 6), out.grad_a.shape
    (0.551445, (3, 3))
    """

    loss: float
    grad_a: np.ndarray
    grad_b: np.ndarray
    grad_log_scale: float


def _scale(log_scale) -> float:
    t = as_real_scalar(log_scale, "log_scale")
    s = math.exp(t) if t < 709.0 else math.inf
    if not 0.0 < s < math.inf:
        raise ValueError(
            f"log_scale must give a logit scale exp(log_scale) inside float64 (between about "
            f"-745 and 709); got {t}"
        )
    return s


def _pair(Za, Zb) -> tuple[np.ndarray, np.ndarray]:
    A = as_real_array(Za, "Za", ndim=2)
    B = as_real_array(Zb, "Zb", ndim=2)
    check_same_shape(A, "Za", B, "Zb")
    return A, B


def _softmax_minus_positive(shifted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of logits ``shifted`` (..., N, N), at most 0, with the positives on the
    diagonal: the log-probability of the positive, and the softmax weights with 1 taken from
    the positive's.

    The positive's weight minus 1 is formed as minus the other weights (by index, never as
    ``p - 1``, which cancels to 0 when ``p`` is within 1e-16 of 1), as chapter 2's
    :func:`~infonce_lib.info_nce_loss_and_grad` does: a batch whose positives all win keeps
    its small, nonzero gradient.
    """
    k = np.arange(shifted.shape[-1])
    W = np.exp(shifted)
    positive = W[..., k, k].copy()
    W[..., k, k] = 0.0
    others = W.sum(axis=-1)
    total = others + positive
    W /= total[..., None]
    W[..., k, k] = -others / total
    return shifted[..., k, k] - np.log(total), W


def _symmetric(A: np.ndarray, B: np.ndarray, s):
    """Loss, gradients and log-scale gradient of CLIP's loss for (..., N, D) stacks of pairs
    at scales ``s`` (...,): the computation of :func:`symmetric_infonce_grad`."""
    n = A.shape[-2]
    s = np.asarray(s, dtype=A.dtype)[..., None, None]
    L = s * (A @ np.swapaxes(B, -1, -2))  # l_ij = e^t a_i . b_j
    Lt = np.swapaxes(L, -1, -2)
    rows, w_rows = _softmax_minus_positive(L - L.max(axis=-1, keepdims=True))
    cols, w_cols = _softmax_minus_positive(Lt - Lt.max(axis=-1, keepdims=True))
    loss = -(rows.mean(axis=-1) + cols.mean(axis=-1)) / 2
    # dL/dl_ij: the mean of the two directions' softmax weights minus 1 at the positive.
    G = (w_rows + np.swapaxes(w_cols, -1, -2)) / (2 * n)
    grad_a = s * (G @ B)
    grad_b = s * (np.swapaxes(G, -1, -2) @ A)
    # dL/dt = sum_ij G_ij l_ij; each direction's weights sum to 0 over its candidates, so
    # each uses the logits minus its positive's (no cancellation at large scales).
    positives = np.diagonal(L, axis1=-2, axis2=-1)[..., None]
    dt = np.sum(w_rows * (L - positives), axis=(-2, -1))
    dt = (dt + np.sum(w_cols * (Lt - positives), axis=(-2, -1))) / (2 * n)
    return loss, grad_a, grad_b, dt


def _nt_xent(A: np.ndarray, B: np.ndarray, s):
    """The same for NT-Xent: the computation of :func:`nt_xent_grad`."""
    n = A.shape[-2]
    s = np.asarray(s, dtype=A.dtype)[..., None, None]
    V = np.concatenate([A, B], axis=-2)
    L = s * (V @ np.swapaxes(V, -1, -2))
    order = _nt_xent_order(n)
    R = np.take_along_axis(L, np.broadcast_to(order, (*L.shape[:-1], 2 * n - 1)), axis=-1)
    log_p, W = _first_minus_one(R - R.max(axis=-1, keepdims=True))
    loss = -log_p.mean(axis=-1)
    G = np.zeros_like(L)
    np.put_along_axis(G, np.broadcast_to(order, W.shape), W / (2 * n), axis=-1)
    grad = s * ((G + np.swapaxes(G, -1, -2)) @ V)
    dt = np.sum(W * (R - R[..., :1]), axis=(-2, -1)) / (2 * n)
    return loss, grad[..., :n, :], grad[..., n:, :], dt


@functools.lru_cache(maxsize=8)
def _nt_xent_order(n: int) -> np.ndarray:
    """Row k of the result lists the candidates of view k: its positive p(k) = k + n mod 2n
    first, then the other views but itself, in increasing order."""
    k = np.arange(2 * n)
    positive = (k + n) % (2 * n)
    others = np.array([np.delete(k, sorted((i, p))) for i, p in zip(k, positive, strict=True)])
    out = np.concatenate([positive[:, None], others], axis=1)
    out.setflags(write=False)
    return out


def _first_minus_one(shifted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_softmax_minus_positive` for rows whose positive is the first entry."""
    W = np.exp(shifted)
    positive = W[..., 0].copy()
    W[..., 0] = 0.0
    others = W.sum(axis=-1)
    total = others + positive
    W /= total[..., None]
    W[..., 0] = -others / total
    return shifted[..., 0] - np.log(total), W


def _checked(out, what: str) -> ContrastiveGradients:
    """The core's results as a ContrastiveGradients, or a ValueError if one overflowed."""
    loss, grad_a, grad_b, dt = out
    hint = "use a smaller log_scale, or rescale Za and Zb"
    for value, name in ((loss, "the loss"), (grad_a, "the gradient with respect to Za"),
                        (grad_b, "the gradient with respect to Zb"),
                        (dt, "the gradient with respect to log_scale")):  # fmt: skip
        finite_or_raise(value, f"{name} ({what})", hint)
    return ContrastiveGradients(float(loss), grad_a, grad_b, float(dt))


def symmetric_infonce_grad(Za, Zb, log_scale: float) -> ContrastiveGradients:
    r"""CLIP's symmetric InfoNCE at logit scale :math:`e^t`, and its exact gradients.

    .. math::

        \mathcal{L} = \frac12 \Big(
        -\frac1N \sum_i \log \frac{e^{\ell_{ii}}}{\sum_j e^{\ell_{ij}}}
        -\frac1N \sum_j \log \frac{e^{\ell_{jj}}}{\sum_i e^{\ell_{ij}}} \Big), \qquad
        \ell_{ij} = e^{t}\, a_i \cdot b_j

    (Radford et al., 2021, Figure 3), with :math:`\partial\mathcal{L}/\partial t =
    \sum_i a_i \cdot \partial\mathcal{L}/\partial a_i` (module docstring). For unit rows
    this is :func:`~infonce_lib.clip_loss` with ``logit_scale = exp(t)``; the rows are not
    normalised here (the encoder does that, and its gradient goes through it).

    Parameters
    ----------
    Za, Zb : array_like, shape (N, D)
        The embeddings of the two views, row :math:`i` of each from image :math:`i`.
    log_scale : float
        :math:`t = \log(1/\tau)`; the scale :math:`e^t` must be a positive float64.

    Returns
    -------
    ContrastiveGradients
        ``loss``, ``grad_a``, ``grad_b``, ``grad_log_scale``.

    Raises
    ------
    TypeError, ValueError
        If ``Za`` or ``Zb`` is not a finite, non-empty 2-D real array, their shapes differ,
        ``log_scale`` is not a real number whose exponential is a positive float64, or the
        logits or gradients overflow.

    Examples
    --------
    >>> from infonce_lib import clip_loss
    >>> rng = np.random.default_rng(0)
    >>> A, B = rng.normal(size=(2, 5, 3))
    >>> A /= np.linalg.norm(A, axis=1, keepdims=True); B /= np.linalg.norm(B, axis=1, keepdims=True)
    >>> out = symmetric_infonce_grad(A, B, np.log(10.0))
    >>> bool(abs(out.loss - clip_loss(A, B, logit_scale=10.0)) < 1e-12)
    True
    >>> h = 1e-6  # the log scale's gradient by central differences
    >>> up, down = (symmetric_infonce_grad(A, B, np.log(10.0) + d).loss for d in (h, -h))
    >>> bool(abs((up - down) / (2 * h) - out.grad_log_scale) < 1e-8)
    True
    """
    A, B = _pair(Za, Zb)
    s = _scale(log_scale)
    with np.errstate(over="ignore", invalid="ignore"):
        return _checked(_symmetric(A, B, s), "exp(log_scale) * Za @ Zb.T")


def nt_xent_grad(Za, Zb, log_scale: float) -> ContrastiveGradients:
    r"""SimCLR's NT-Xent at logit scale :math:`e^t`, and its exact gradients.

    Stack the views, :math:`v = (a_1, \dots, a_N, b_1, \dots, b_N)`, with
    :math:`\ell_{kl} = e^{t}\, v_k \cdot v_l` and :math:`k`'s positive :math:`p(k) = k \pm N`:

    .. math::

        \mathcal{L} = -\frac{1}{2N} \sum_{k=1}^{2N}
        \log \frac{e^{\ell_{k, p(k)}}}{\sum_{l \ne k} e^{\ell_{kl}}}

    (Chen et al., 2020, eq. 1 with the mean over the :math:`2N` views). With
    :math:`G_{kl} = (q_{kl} - [l = p(k)])/(2N)`, :math:`q_{kl}` the softmax of row :math:`k`
    over :math:`l \ne k`, the gradients are
    :math:`\partial\mathcal{L}/\partial v = e^{t} (G + G^\top) v` and
    :math:`\partial\mathcal{L}/\partial t = \sum_{k,l} G_{kl}\, \ell_{kl}`. For unit rows
    the loss is :func:`~infonce_lib.nt_xent_loss` at ``temperature = exp(-t)``.

    Parameters
    ----------
    Za, Zb : array_like, shape (N, D)
        The embeddings of the two views, ``N >= 1``.
    log_scale : float
        :math:`t = \log(1/\tau)`.

    Returns
    -------
    ContrastiveGradients

    Raises
    ------
    TypeError, ValueError
        As :func:`symmetric_infonce_grad`.

    Examples
    --------
    >>> from infonce_lib import nt_xent_loss
    >>> rng = np.random.default_rng(0)
    >>> A, B = rng.normal(size=(2, 4, 3))
    >>> A /= np.linalg.norm(A, axis=1, keepdims=True); B /= np.linalg.norm(B, axis=1, keepdims=True)
    >>> out = nt_xent_grad(A, B, np.log(5.0))
    >>> bool(abs(out.loss - nt_xent_loss(A, B, temperature=0.2)) < 1e-12)
    True
    """
    A, B = _pair(Za, Zb)
    s = _scale(log_scale)
    with np.errstate(over="ignore", invalid="ignore"):
        return _checked(_nt_xent(A, B, s), "exp(log_scale) * v @ v.T of the views Za and Zb")
