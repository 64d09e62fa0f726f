r"""How features are judged downstream: a linear readout and a nearest-neighbour readout.

Chapter 7 asks whether a higher contrastive bound means better features. "Better" needs a
measure that does not come from the bound itself; the two used there are the usual ones of
representation learning, each fitted on the first ``n_train`` rows and scored on the rest
by the held-out coefficient of determination

.. math::

    R^2 = 1 - \frac{\sum_{m \in \text{test}} (t_m - \hat t_m)^2}
                   {\sum_{m \in \text{test}} (t_m - \bar t_{\text{test}})^2},

which is 1 for a perfect prediction, 0 for predicting the mean, and negative for worse:

* :func:`linear_readout_r2`: least squares with an intercept, the "linear evaluation" of
  contrastive methods (Chen et al., 2020);
* :func:`knn_readout_r2`: the mean target of the ``k`` training rows with the largest cosine
  similarity, a nearest-neighbour evaluation in the geometry a cosine critic compares
  (Wu et al., 2018, evaluate their features with a weighted nearest-neighbour classifier
  in cosine similarity).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_int, as_real_array, finite_or_raise

__all__ = ["knn_readout_r2", "linear_readout_r2"]

#: Test rows compared at once in :func:`knn_readout_r2` (bounds the similarity block's memory).
_CHUNK = 512


def _inputs(features, target, n_train):
    F = as_real_array(features, "features", ndim=2)
    t = as_real_array(target, "target", ndim=1)
    if t.shape[0] != F.shape[0]:
        raise ValueError(
            f"target must have one entry per row of features ({F.shape[0]}); got {t.shape[0]}"
        )
    n_train = as_int(n_train, "n_train", minimum=1)
    if n_train >= F.shape[0]:
        raise ValueError(
            f"n_train must leave test rows: n_train < {F.shape[0]} (the rows of features); "
            f"got {n_train}"
        )
    test = t[n_train:]
    scale = np.max(np.abs(test))
    if not scale > 0 or not np.ptp(test / scale) > 0:
        raise ValueError("target must vary over the test rows (after n_train): R^2 is undefined")
    return F, t, n_train


def _r2(t_test: np.ndarray, pred: np.ndarray) -> float:
    """Held-out R^2, computed on one common scale so that nothing overflows."""
    scale = max(np.max(np.abs(t_test)), np.max(np.abs(pred)))
    a, b = t_test / scale, pred / scale  # both within [-1, 1]
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        sse = np.sum((a - b) ** 2)
        sst = np.sum((a - a.mean()) ** 2)
        r2 = 1.0 - sse / sst
    if not (sst > 0 and np.isfinite(r2)):
        raise ValueError(
            "target varies too little over the test rows, next to the readout's predictions, "
            "for R^2 to be represented in float64; rescale target"
        )
    return float(r2)


def linear_readout_r2(features, target, n_train: int) -> float:
    r"""Held-out :math:`R^2` of a least-squares linear readout (with intercept) of a target.

    Fits :math:`\hat t = w^\top f + b` by least squares on the first ``n_train`` rows and
    returns :math:`R^2` (module docstring) on the others. A readout that is linear in the
    features cannot be changed by an invertible linear map of them; chapter 7 uses it to
    ask how much of a simple property of the input (a patch's mean brightness) stays
    linearly accessible after an encoder.

    Parameters
    ----------
    features : array_like, shape (n, p)
        One row of features per example.
    target : array_like, shape (n,)
        The quantity to read out; not constant over the test rows.
    n_train : int
        Rows used for fitting, ``1 <= n_train < n``; the rest are the test rows.

    Returns
    -------
    float
        :math:`R^2` on the test rows (at most 1).

    Raises
    ------
    ValueError, TypeError
        If the arrays are not finite real arrays of matching lengths, ``n_train`` is out of
        range, the target is constant on the test rows, or the fit overflows float64.

    Examples
    --------
    A target that is a linear function of the features is read out exactly:

    >>> rng = np.random.default_rng(0)
    >>> F = rng.normal(size=(200, 3))
    >>> round(linear_readout_r2(F, F @ [1.0, -2.0, 0.5] + 3.0, 100), 9)
    1.0
    """
    F, t, n_train = _inputs(features, target, n_train)
    # Columns on a common scale first (least squares is invariant to it), so that large
    # features neither overflow nor lose the intercept.
    col = np.max(np.abs(F), axis=0)
    col[col == 0] = 1.0
    A = np.column_stack([F / col, np.ones(F.shape[0])])
    scale = np.max(np.abs(t))
    try:
        w = np.linalg.lstsq(A[:n_train], t[:n_train] / scale, rcond=None)[0]
    except np.linalg.LinAlgError as exc:  # pragma: no cover - SVD failure on finite input
        raise ValueError(f"the least-squares fit of features failed: {exc}") from None
    pred = finite_or_raise(A[n_train:] @ w, "the readout of features", "rescale features")
    return _r2(t[n_train:] / scale, pred)


def knn_readout_r2(features, target, n_train: int, k: int = 16) -> float:
    r"""Held-out :math:`R^2` of a nearest-neighbour readout in cosine similarity.

    Each test row :math:`f` is predicted by the mean target of the ``k`` training rows
    :math:`f_j` with the largest cosine similarity :math:`f^\top f_j / (\lVert f\rVert
    \lVert f_j\rVert)`; returns :math:`R^2` (module docstring). It judges features by the
    comparisons a cosine critic makes: two inputs are alike when their features point the
    same way, whatever the lengths.

    Parameters
    ----------
    features : array_like, shape (n, p)
        One row of features per example; no row may be all zero (its direction is
        undefined).
    target : array_like, shape (n,)
        The quantity to read out; not constant over the test rows.
    n_train : int
        Rows that serve as neighbours, ``k <= n_train < n``; the rest are the test rows.
    k : int, default 16
        Neighbours averaged, at least 1.

    Returns
    -------
    float
        :math:`R^2` on the test rows (at most 1).

    Raises
    ------
    ValueError, TypeError
        If the arrays are not finite real arrays of matching lengths, a row of ``features``
        is zero, ``n_train`` or ``k`` is out of range, or the target is constant on the
        test rows.

    Examples
    --------
    Features whose direction encodes the target (an angle) read it out well; features
    whose direction ignores it do not:

    >>> rng = np.random.default_rng(0)
    >>> angle = rng.uniform(0, np.pi, size=400)
    >>> good = np.column_stack([np.cos(angle), np.sin(angle)])
    >>> bad = rng.normal(size=(400, 2))
    >>> knn_readout_r2(good, angle, 200) > 0.99, knn_readout_r2(bad, angle, 200) < 0.2
    (True, True)
    """
    F, t, n_train = _inputs(features, target, n_train)
    k = as_int(k, "k", minimum=1)
    if k > n_train:
        raise ValueError(f"k must be at most n_train = {n_train}; got {k}")
    # Unit rows, computed on each row's own scale so that no norm overflows or underflows.
    row = np.max(np.abs(F), axis=1, keepdims=True)
    if not (row > 0).all():
        raise ValueError(
            f"features must have no zero rows (a zero row has no direction); got "
            f"{int((row == 0).sum())}"
        )
    U = F / row
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    train, test = U[:n_train], U[n_train:]
    t = t / np.max(np.abs(t))  # R^2 does not depend on the target's scale
    pred = np.empty(test.shape[0])
    for start in range(0, test.shape[0], _CHUNK):
        sims = test[start : start + _CHUNK] @ train.T
        nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        pred[start : start + _CHUNK] = t[nearest].mean(axis=1)
    return _r2(t[n_train:], pred)
