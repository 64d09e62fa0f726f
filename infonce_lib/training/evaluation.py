r"""What a trained encoder is worth: a nearest-neighbour classifier, and the held-out bound.

* :func:`knn_accuracy`: classify each test image by a vote of its ``k`` most similar
  training images (cosine similarity of the features), a probe with no parameter to fit.
* :func:`heldout_infonce`: the InfoNCE bound of the trained critic
  :math:`f(a, b) = \cos(g(a), g(b)) / \tau` on view pairs of images the encoder never saw.
  Two independent views :math:`A, B` of a test image :math:`X` are drawn, both embedded, and
  the pairs cut into batches of :math:`K`; each batch's value
  (:func:`~infonce_lib.infonce_at_beta` on :func:`~infonce_lib.cosine_scores`) is at most
  :math:`\log K`, and
  their mean estimates a number whose expectation is at most :math:`I(A; B)`, the
  information between **the two views** (chapter 3's theorem, the critic being fixed before
  the test images are seen). Since :math:`A` and :math:`B` are computed from :math:`X` each
  with its own independent randomness, :math:`I(A; B) \le I(X; A)`: the bound says how much
  the views share, and so depends on the views as much as on the encoder; it is not the
  information between images and labels, nor between images and features.

The linear probe is in :mod:`infonce_lib.training.probe`; Wang & Isola's alignment and
uniformity are :func:`~infonce_lib.alignment` and :func:`~infonce_lib.uniformity`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, as_int, as_positive_scalar
from ..bounds import mean_and_se
from ..temperature import cosine_scores, infonce_at_beta
from .encoder import Encoder, _check_images, _embed
from .probe import _probe_data
from .views import ViewRecipe, make_views

__all__ = ["HeldOutBound", "heldout_infonce", "knn_accuracy"]


def _unit(F: np.ndarray, name: str) -> np.ndarray:
    """The rows of ``F`` divided by their lengths, scaled first so no square overflows."""
    top = np.abs(F).max(axis=1, keepdims=True) if F.size else np.ones((F.shape[0], 1))
    if (top == 0).any():
        raise ValueError(f"{name} must have no zero rows (the cosine is undefined)")
    G = F / top
    return G / np.sqrt(np.einsum("ij,ij->i", G, G))[:, None]


def knn_accuracy(train_features, train_labels, test_features, test_labels, *, k: int = 5) -> float:
    r"""Accuracy of the cosine ``k``-nearest-neighbour classifier on the test rows.

    Each test row votes among the ``k`` training rows of highest cosine similarity with it;
    the class with most votes wins, and a tie goes to the tied class of the most similar
    neighbour. Nothing is fitted, so the accuracy measures only how the features place
    images of one class near each other.

    Parameters
    ----------
    train_features, train_labels, test_features, test_labels
        As :func:`~infonce_lib.linear_probe`; no feature row may be zero.
    k : int, default 5
        Neighbours, ``1 <= k <= n`` (the training rows).

    Returns
    -------
    float
        The fraction of test rows classified correctly.

    Raises
    ------
    TypeError, ValueError
        As :func:`~infonce_lib.linear_probe`, if a feature row is zero, or ``k`` is not an
        integer in ``[1, n]``.

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]
    >>> knn_accuracy(X, [0, 0, 1], [[1.0, 0.2], [0.1, 1.0]], [0, 1], k=1)
    1.0
    """
    Xtr, ytr, Xte, yte, c = _probe_data(train_features, train_labels, test_features, test_labels)
    k = as_int(k, "k", minimum=1)
    if k > Xtr.shape[0]:
        raise ValueError(f"k must be at most the training rows ({Xtr.shape[0]}); got {k}")
    S = _unit(Xte, "test_features") @ _unit(Xtr, "train_features").T
    # The k most similar, most similar first (ties by training row, as a stable sort).
    top = (
        np.argpartition(-S, k - 1, axis=1)[:, :k]
        if k < S.shape[1]
        else np.tile(np.arange(S.shape[1]), (S.shape[0], 1))
    )
    rank = np.lexsort((top, -np.take_along_axis(S, top, axis=1)), axis=1)
    nearest = np.take_along_axis(top, rank, axis=1)
    votes = ytr[nearest]
    counts = np.zeros((Xte.shape[0], c), dtype=np.int64)
    np.add.at(counts, (np.arange(Xte.shape[0])[:, None], votes), 1)
    tied = counts == counts.max(axis=1, keepdims=True)
    first = np.argmax(np.take_along_axis(tied, votes, axis=1), axis=1)  # best-ranked tied vote
    return float(np.mean(votes[np.arange(votes.shape[0]), first] == yte))


@dataclass(frozen=True)
class HeldOutBound:
    """The result of :func:`heldout_infonce`.

    Attributes
    ----------
    values : numpy.ndarray, shape (B,)
        The bound of each batch, in nats (each at most ``log K``).
    cosines : numpy.ndarray, shape (B, K, K)
        The batches' cosines, ``cosines[b, i, j]`` between view ``b`` of pair ``i`` and view
        ``a`` of pair ``j`` (:func:`~infonce_lib.cosine_scores`' layout), for chapter 6's
        functions (:func:`~infonce_lib.best_temperature`, the caps).
    embeddings_a, embeddings_b : numpy.ndarray, shape (B * K, D)
        The unit embeddings of the two views, pair by pair.
    batch_size : int
        :math:`K`.
    temperature : float
        The critic's :math:`\\tau`.

    Examples
    --------
    >>> from infonce_lib import init_encoder, load_digits
    >>> x = load_digits().x_test
    >>> out = heldout_infonce(init_encoder(seed=0), x, ViewRecipe(noise=0.1), batch_size=64,
    ...                       temperature=0.1, rounds=1, seed=0)
    >>> out.values.shape, bool(out.mean <= np.log(64))
    ((9,), True)
    """

    values: np.ndarray
    cosines: np.ndarray
    embeddings_a: np.ndarray
    embeddings_b: np.ndarray
    batch_size: int
    temperature: float

    @property
    def mean(self) -> float:
        """The mean over the batches, the estimate of the bound."""
        return mean_and_se(self.values)[0]

    @property
    def se(self) -> float:
        """Its standard error over the batches (0 for a single batch)."""
        return mean_and_se(self.values)[1] if self.values.size > 1 else 0.0


def heldout_infonce(
    encoder: Encoder,
    images,
    views: ViewRecipe,
    *,
    batch_size: int,
    temperature: float,
    rounds: int = 1,
    seed,
) -> HeldOutBound:
    r"""InfoNCE of the critic :math:`\cos(g(a), g(b))/\tau` on view pairs of held-out images.

    Each round shuffles ``images``, draws two independent views of each
    (:func:`~infonce_lib.make_views`), embeds them with ``encoder`` and cuts the pairs into
    :math:`\lfloor n / K \rfloor` batches of :math:`K` (leftover images skip the round).
    Each batch's value is :func:`~infonce_lib.infonce_at_beta` at :math:`\beta = 1/\tau`
    on :func:`~infonce_lib.cosine_scores` of the embeddings, with the views :math:`b` as
    anchors and the views :math:`a` as candidates (the book's convention). What it bounds:
    the information :math:`I(A; B)` between the two views of a test image (module
    docstring).

    Parameters
    ----------
    encoder : Encoder
        The trained (or any) encoder.
    images : array_like, shape (n, n_0)
        Held-out images, ``n >= K``. Not modified.
    views : ViewRecipe
        How the views are drawn (usually those of training).
    batch_size : int
        :math:`K \ge 2`.
    temperature : float
        The critic's :math:`\tau > 0` (usually the one trained with, or learned).
    rounds : int, default 1
        Shuffles of the images, ``>= 1``; the batches of all rounds are returned.
    seed : int or numpy.random.Generator
        The generator of the shuffles and the views.

    Returns
    -------
    HeldOutBound
        The batch values, their cosines and the embeddings.

    Raises
    ------
    TypeError, ValueError
        If ``encoder`` or ``views`` has the wrong type, ``images`` is not a finite 2-D array
        with ``n_0`` columns and at least ``K`` rows, ``batch_size`` is not an integer
        ``>= 2``, ``temperature`` not finite and positive, or ``rounds`` not an integer
        ``>= 1``, or the bound at ``temperature`` is below -1.8e308.

    Examples
    --------
    Identical views share everything: at a small temperature the bound of even a random
    encoder comes close to :math:`\log K`, far above that of noisy views.

    >>> from infonce_lib import init_encoder, load_digits
    >>> enc, x = init_encoder(seed=0), load_digits().x_test
    >>> same = heldout_infonce(enc, x, ViewRecipe(), batch_size=64, temperature=0.002, seed=0)
    >>> noisy = heldout_infonce(enc, x, ViewRecipe(noise=0.3), batch_size=64, temperature=0.002,
    ...                         seed=0)
    >>> bool(np.log(64) - same.mean < 0.01), bool(noisy.mean < same.mean - 1)
    (True, True)
    """
    X = _check_images(encoder, images)
    if not isinstance(views, ViewRecipe):
        raise TypeError(f"views must be a ViewRecipe; got {type(views).__name__}")
    K = as_int(batch_size, "batch_size", minimum=2)
    if X.shape[0] < K:
        raise ValueError(f"images must hold at least batch_size = {K} rows; got {X.shape[0]}")
    tau = as_positive_scalar(temperature, "temperature")
    if not 1.0 / tau < math.inf:
        raise ValueError(f"temperature must have a finite inverse; got {tau:g}")
    n_rounds = as_int(rounds, "rounds", minimum=1)
    rng = as_generator(seed)
    used = (X.shape[0] // K) * K
    pairs_a, pairs_b = [], []
    for _ in range(n_rounds):
        x = X[rng.permutation(X.shape[0])[:used]]
        pairs_a.append(_embed(encoder, make_views(x, views, seed=rng))[0])
        pairs_b.append(_embed(encoder, make_views(x, views, seed=rng))[0])
    A, B = np.concatenate(pairs_a), np.concatenate(pairs_b)
    S = cosine_scores(A, B, K)
    try:
        values = infonce_at_beta(S, 1.0 / tau)
    except ValueError as exc:  # a bound below -1.8e308: say which argument to change
        raise ValueError(f"temperature = {tau:g} is too small for these views: {exc}") from None
    return HeldOutBound(values, S, A, B, K, tau)
