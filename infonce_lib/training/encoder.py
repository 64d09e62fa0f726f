r"""The encoder of chapter 8: a small multilayer perceptron whose output is a unit vector.

An image :math:`x \in \mathbb{R}^{n_0}` goes through :math:`L` affine layers with a ReLU
between them and none after the last, and the result is divided by its length:

.. math::

    h_0 = x, \quad h_l = \max(0,\; h_{l-1} W_l + b_l) \;\; (l < L), \quad
    z = h_{L-1} W_L + b_L, \quad u = z / \lVert z \rVert ,

so the embeddings :math:`u` lie on the unit sphere and their dot products are cosines, the
critic of SimCLR, MoCo and CLIP (chapter 2). :func:`init_encoder` draws the weights,
:func:`encode` embeds images, and :func:`encoder_gradients` backpropagates a gradient with
respect to the embeddings to the weights. Through the normalisation, the gradient
:math:`g = \partial \mathcal{L} / \partial u` becomes

.. math::

    \frac{\partial \mathcal{L}}{\partial z} = \frac{g - u\,(u \cdot g)}{\lVert z \rVert},

its component along :math:`u` removed (moving :math:`z` along itself does not move
:math:`u`), then flows back through the layers by the chain rule. The tests check every
gradient against central finite differences.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, as_int, as_real_array, as_sequence, check_array_type

__all__ = ["Encoder", "encode", "encoder_gradients", "init_encoder"]


@dataclass(frozen=True)
class Encoder:
    r"""The weights of a multilayer perceptron with unit-norm output (module docstring).

    ``weights`` is ``(W_1, b_1, ..., W_L, b_L)``: float64 arrays, ``W_l`` of shape
    ``(n_{l-1}, n_l)`` and ``b_l`` of shape ``(n_l,)``. A trainer updates them in place;
    :meth:`copy` takes a snapshot.

    Attributes
    ----------
    weights : tuple of numpy.ndarray
        The weights and biases, layer by layer.

    Examples
    --------
    >>> enc = init_encoder((64, 128, 32), seed=0)
    >>> enc.sizes, [w.shape for w in enc.weights]
    ((64, 128, 32), [(64, 128), (128,), (128, 32), (32,)])
    """

    weights: tuple

    def __post_init__(self) -> None:
        if not isinstance(self.weights, tuple | list) or len(self.weights) < 2:
            raise TypeError("weights must be a tuple (W_1, b_1, ..., W_L, b_L) of float64 arrays")
        if len(self.weights) % 2:
            raise ValueError(f"weights must pair each W with a b; got {len(self.weights)} arrays")
        for i, w in enumerate(self.weights):
            check_array_type(w, f"weights[{i}]")
            if not isinstance(w, np.ndarray) or w.dtype != np.float64:
                raise TypeError(f"weights[{i}] must be a float64 numpy array")
            if w.ndim != (2 if i % 2 == 0 else 1) or not np.isfinite(w).all():
                raise ValueError(f"weights[{i}] must be a finite {2 - i % 2}-D array")
        for l in range(0, len(self.weights), 2):
            W, b = self.weights[l], self.weights[l + 1]
            if b.shape != (W.shape[1],) or (l and W.shape[0] != self.weights[l - 2].shape[1]):
                raise ValueError(f"weights[{l}] and weights[{l + 1}] do not fit the layers around")
        object.__setattr__(self, "weights", tuple(self.weights))

    @property
    def sizes(self) -> tuple[int, ...]:
        """The layer widths ``(n_0, n_1, ..., n_L)``: input pixels, ..., embedding dimension."""
        return (self.weights[0].shape[0], *(W.shape[1] for W in self.weights[::2]))

    def copy(self) -> Encoder:
        """An independent copy of the weights (a snapshot of a training run)."""
        return Encoder(tuple(w.copy() for w in self.weights))


def init_encoder(sizes=(64, 128, 32), *, seed) -> Encoder:
    r"""An encoder with random weights: each layer drawn as PyTorch's ``nn.Linear`` does.

    Every entry of :math:`W_l` and :math:`b_l` is uniform on :math:`[-a_l, a_l]` with
    :math:`a_l = 1/\sqrt{n_{l-1}}` (PyTorch's default initialisation of a linear layer).
    The biases are not zero, so even a blank image has a direction.

    Parameters
    ----------
    sizes : sequence of int, default (64, 128, 32)
        :math:`(n_0, \dots, n_L)`, at least two widths, each ``>= 1``.
    seed : int or numpy.random.Generator
        The generator of all the draws.

    Returns
    -------
    Encoder

    Raises
    ------
    TypeError, ValueError
        If ``sizes`` is not a sequence of at least two integers ``>= 1``, or ``seed`` is not
        an int ``>= 0`` or a Generator.

    Examples
    --------
    >>> enc = init_encoder((4, 3), seed=0)
    >>> bool(np.all(np.abs(enc.weights[0]) <= 0.5))  # a = 1/sqrt(4)
    True
    """
    widths = as_sequence(sizes, "sizes")
    if len(widths) < 2:
        raise ValueError(f"sizes must give at least two widths (input, output); got {widths}")
    widths = tuple(as_int(n, "sizes", minimum=1) for n in widths)
    rng = as_generator(seed)
    weights = []
    for n_in, n_out in itertools.pairwise(widths):
        a = 1.0 / math.sqrt(n_in)
        weights.append(rng.uniform(-a, a, size=(n_in, n_out)))
        weights.append(rng.uniform(-a, a, size=n_out))
    return Encoder(tuple(weights))


def _forward(weights, X: np.ndarray):
    """Unit embeddings of the rows of ``X`` and what the backward pass needs.

    Works for one encoder (``W`` of shape (n_in, n_out), ``X`` of shape (n, n_in)) and for a
    stack of ``S`` encoders trained together (``W`` of shape (S, n_in, n_out), ``b`` of shape
    (S, n_out), ``X`` of shape (S, n, n_in)): the products broadcast over the leading axis.
    Computes in the dtype of ``X`` (the trainer's float32 option); ``weights`` must have it.
    """
    inputs, h = [], X
    last = len(weights) - 2
    for l in range(0, len(weights), 2):
        inputs.append(h)
        h = h @ weights[l]
        h += weights[l + 1][..., None, :]
        if l < last:
            np.maximum(h, 0.0, out=h)
    norm = np.sqrt(np.einsum("...i,...i->...", h, h))[..., None]
    return h / norm, (inputs, norm)


def _backward(weights, cache, U: np.ndarray, G: np.ndarray) -> list[np.ndarray]:
    """Gradients of ``sum(G * U)`` with respect to ``weights`` (``U`` from ``_forward``; one
    encoder or a stack, as there)."""
    inputs, norm = cache
    D = (G - U * np.einsum("...i,...i->...", U, G)[..., None]) / norm
    grads: list[np.ndarray] = [None] * len(weights)  # type: ignore[list-item]
    for l in range(len(weights) - 2, -1, -2):
        h = inputs[l // 2]
        grads[l] = np.swapaxes(h, -1, -2) @ D
        grads[l + 1] = D.sum(axis=-2)
        if l:
            D = D @ np.swapaxes(weights[l], -1, -2)
            D *= h > 0  # the ReLU of the layer below: h is its output
    return grads


def _check_images(encoder: Encoder, images, name: str = "images") -> np.ndarray:
    if not isinstance(encoder, Encoder):
        raise TypeError(f"encoder must be an Encoder; got {type(encoder).__name__}")
    X = as_real_array(images, name, ndim=2, allow_empty=True)
    if X.shape[1] != encoder.sizes[0]:
        raise ValueError(
            f"{name} must have {encoder.sizes[0]} columns (the encoder's input); got {X.shape[1]}"
        )
    return X


def _embed(encoder: Encoder, X: np.ndarray):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        U, cache = _forward(encoder.weights, X)
    norm = cache[1][:, 0]
    bad_rows = ~(np.isfinite(U).all(axis=1) & np.isfinite(norm) & (norm > 0))
    if bad_rows.any():
        bad = int(np.flatnonzero(bad_rows)[0])
        raise ValueError(
            f"images row {bad}: the encoder's output overflowed float64 or is the zero vector, "
            "which has no direction; rescale the images"
        )
    return U, cache


def encode(encoder: Encoder, images) -> np.ndarray:
    r"""The unit embeddings :math:`u = z / \lVert z \rVert` of the rows of ``images``.

    Parameters
    ----------
    encoder : Encoder
        The weights (:func:`init_encoder`, or a trained encoder's).
    images : array_like, shape (n, n_0)
        One image per row (for the digits, 64 grey levels in [0, 1]). Not modified.

    Returns
    -------
    numpy.ndarray, shape (n, n_L)
        Float64 unit vectors, one per image.

    Raises
    ------
    TypeError, ValueError
        If ``encoder`` is not an :class:`Encoder`, ``images`` is not a finite 2-D real array
        with ``n_0`` columns, or an output row overflows or is exactly zero.

    Examples
    --------
    >>> enc = init_encoder((64, 16, 8), seed=0)
    >>> U = encode(enc, np.ones((3, 64)))
    >>> U.shape, np.allclose(np.linalg.norm(U, axis=1), 1.0)
    ((3, 8), True)
    """
    X = _check_images(encoder, images)
    return _embed(encoder, X)[0]


def encoder_gradients(encoder: Encoder, images, grad_embeddings) -> tuple[np.ndarray, ...]:
    r"""Backpropagation: the gradient of a loss with respect to the weights of ``encoder``.

    Given :math:`g_i = \partial \mathcal{L} / \partial u_i` for the embeddings
    :math:`u_i` of the rows :math:`x_i` of ``images``, returns
    :math:`\partial \mathcal{L} / \partial \theta = \sum_i (\partial u_i / \partial
    \theta)^\top g_i` for every weight array :math:`\theta`, through the normalisation
    (module docstring) and the ReLUs (whose derivative at 0 is taken as 0).

    Parameters
    ----------
    encoder : Encoder
        The weights.
    images : array_like, shape (n, n_0)
        The images whose embeddings the loss used, ``n >= 1``. Not modified.
    grad_embeddings : array_like, shape (n, n_L)
        :math:`g_i`, one row per image.

    Returns
    -------
    tuple of numpy.ndarray
        One gradient per array of ``encoder.weights``, same shapes, float64.

    Raises
    ------
    TypeError, ValueError
        As :func:`encode`, and if ``grad_embeddings`` is not a finite array of shape
        ``(n, n_L)``.

    Examples
    --------
    The loss :math:`\sum_i u_i \cdot c` for a fixed :math:`c`, one weight by central
    differences:

    >>> enc = init_encoder((5, 4, 3), seed=0)
    >>> X = np.random.default_rng(1).normal(size=(6, 5)); c = np.array([1.0, -2.0, 0.5])
    >>> grads = encoder_gradients(enc, X, np.tile(c, (6, 1)))
    >>> def loss(e): return float(np.sum(encode(e, X) @ c))
    >>> up, down = enc.copy(), enc.copy()
    >>> up.weights[0][1, 2] += 1e-6; down.weights[0][1, 2] -= 1e-6
    >>> bool(abs((loss(up) - loss(down)) / 2e-6 - grads[0][1, 2]) < 1e-7)
    True
    """
    X = _check_images(encoder, images)
    if not X.shape[0]:
        raise ValueError("images must hold at least one image (row)")
    G = as_real_array(grad_embeddings, "grad_embeddings", ndim=2)
    if G.shape != (X.shape[0], encoder.sizes[-1]):
        raise ValueError(
            f"grad_embeddings must have shape {(X.shape[0], encoder.sizes[-1])}, one row per "
            f"row of images and one column per embedding dimension; got {G.shape}"
        )
    U, cache = _embed(encoder, X)
    with np.errstate(over="ignore", invalid="ignore"):
        grads = _backward(encoder.weights, cache, U, G)
    for i, g in enumerate(grads):
        if not np.isfinite(g).all():
            raise ValueError(
                f"the gradient of weights[{i}] overflowed float64; rescale grad_embeddings"
            )
    return tuple(grads)
