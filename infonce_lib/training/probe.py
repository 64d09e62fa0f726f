r"""Linear probes: how well a linear classifier reads the labels off a set of features.

The standard test of a representation learned without labels is a *linear probe*: freeze the
encoder, fit a linear classifier on its features of labelled training images, and score it on
test images (Chen et al., 2020, section 2.3, call it the linear evaluation protocol). The
probe here is multinomial logistic regression with an :math:`\ell_2` penalty, in
scikit-learn's parameterisation: weights :math:`W` (features x classes) and intercepts
:math:`b` minimise

.. math::

    J(W, b) = C \sum_{i=1}^{n} \Big( \log \sum_k e^{x_i \cdot w_k + b_k}
    - (x_i \cdot w_{y_i} + b_{y_i}) \Big) + \frac12 \lVert W \rVert_F^2 ,

the intercepts unpenalised (the objective of scikit-learn's ``LogisticRegression`` with its
default penalty; the tests check the solutions agree). :math:`J` is strictly convex in
:math:`W`; L-BFGS (SciPy) minimises it from zero with the exact gradient
:math:`\nabla_W J = C X^\top (P - Y) + W`, :math:`\nabla_b J = C \mathbf{1}^\top (P - Y)`.

With few labels the accuracy depends on which images were labelled, so
:func:`few_label_probe` averages over draws of ``per_class`` labelled images of each class,
fitting all draws at once (their objectives add up and share no parameter, so the joint
minimum is each draw's minimum).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, as_int, as_positive_scalar, as_real_array, check_array_type

__all__ = ["FewLabelProbe", "LinearProbe", "few_label_probe", "linear_probe"]

#: The largest C accepted: beyond it the penalty no longer matters and, on separable data,
#: the weights grow without limit.
_MAX_C = 1e10
#: L-BFGS stops when the gradient is below ``tol`` times the number of samples (and C, if
#: above 1), or the objective's relative decrease below ``_FTOL_PER_TOL * tol``.
_FTOL_PER_TOL, _MAXITER = 1e-4, 20_000


@dataclass(frozen=True)
class LinearProbe:
    """The fitted probe of :func:`linear_probe`.

    Attributes
    ----------
    weights : numpy.ndarray, shape (d, c)
        :math:`W`, one column per class.
    intercepts : numpy.ndarray, shape (c,)
        :math:`b`.
    accuracy : float
        The fraction of test images whose most probable class is their label.
    iterations : int
        L-BFGS iterations.

    Examples
    --------
    >>> p = linear_probe([[0.0], [1.0]], [0, 1], [[0.2], [0.9]], [0, 1], C=10.0)
    >>> p.weights.shape, p.accuracy
    ((1, 2), 1.0)
    """

    weights: np.ndarray
    intercepts: np.ndarray
    accuracy: float
    iterations: int

    def predict_proba(self, features) -> np.ndarray:
        """The class probabilities (softmax of ``features @ weights + intercepts``), per row."""
        F = as_real_array(features, "features", ndim=2, allow_empty=True)
        if F.shape[1] != self.weights.shape[0]:
            raise ValueError(
                f"features must have {self.weights.shape[0]} columns; got {F.shape[1]}"
            )
        L = F @ self.weights + self.intercepts
        P = np.exp(L - L.max(axis=1, keepdims=True))
        return P / P.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class FewLabelProbe:
    """The result of :func:`few_label_probe`.

    Attributes
    ----------
    accuracies : numpy.ndarray, shape (draws,)
        The test accuracy of the probe fitted on each draw of labelled images.
    selections : numpy.ndarray, shape (draws, per_class * c)
        The training rows labelled in each draw (class by class).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 10); X = y[:, None] + 0.1 * rng.normal(size=(20, 2))
    >>> out = few_label_probe(X, y, X, y, per_class=2, draws=3, seed=0)
    >>> out.accuracies.shape, out.selections.shape, out.mean
    ((3,), (3, 4), 1.0)
    """

    accuracies: np.ndarray
    selections: np.ndarray

    @property
    def mean(self) -> float:
        """The mean accuracy over the draws."""
        return float(self.accuracies.mean())


def _labels(labels, name: str, n: int, rows: str) -> np.ndarray:
    check_array_type(labels, name)
    y = np.asarray(labels)
    if y.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer class labels; got dtype {y.dtype}")
    if y.shape != (n,):
        raise ValueError(
            f"{name} must have shape ({n},), one label per row of {rows}; got {y.shape}"
        )
    if n and y.min() < 0:
        raise ValueError(f"{name} must be class numbers >= 0; got {int(y.min())}")
    return y.astype(np.intp)  # bincount and indexing want intp (int32 in the browser)


def _probe_data(train_features, train_labels, test_features, test_labels):
    Xtr = as_real_array(train_features, "train_features", ndim=2)
    Xte = as_real_array(test_features, "test_features", ndim=2)
    if Xte.shape[1] != Xtr.shape[1]:
        raise ValueError(
            f"test_features must have {Xtr.shape[1]} columns like train_features; "
            f"got {Xte.shape[1]}"
        )
    ytr = _labels(train_labels, "train_labels", Xtr.shape[0], "train_features")
    yte = _labels(test_labels, "test_labels", Xte.shape[0], "test_features")
    if np.unique(ytr).size < 2:
        raise ValueError("train_labels must contain at least two classes")
    return Xtr, ytr, Xte, yte, int(max(ytr.max(), yte.max())) + 1


def _fit(X: np.ndarray, Y: np.ndarray, C: float, tol: float):
    """Minimise the summed objectives of the stacked problems X (m, n, d), Y (m, n, c)."""
    from scipy.optimize import minimize  # imported on first use (package docstring)

    m, n, d = X.shape
    c = Y.shape[2]
    X1 = np.concatenate([X, np.ones((m, n, 1))], axis=2)  # the intercept as a last feature
    penalised = np.ones((d + 1, c))
    penalised[d] = 0.0

    def objective(theta):
        Wb = theta.reshape(m, d + 1, c)
        L = X1 @ Wb
        L -= L.max(axis=2, keepdims=True)
        log_z = np.log(np.exp(L).sum(axis=2, keepdims=True))
        P = np.exp(L - log_z)
        value = C * float(np.sum(log_z[..., 0] - np.sum(Y * L, axis=2)))
        value += 0.5 * float(np.sum(penalised * Wb * Wb))
        grad = C * (X1.transpose(0, 2, 1) @ (P - Y)) + penalised * Wb
        return value, grad.ravel()

    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        res = minimize(
            objective,
            np.zeros(m * (d + 1) * c),
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": _MAXITER,
                "gtol": tol * n * max(C, 1.0),
                "ftol": _FTOL_PER_TOL * tol,
            },
        )
    if not (np.isfinite(res.x).all() and np.isfinite(res.fun)):
        raise ValueError(
            "the probe's objective overflowed float64; rescale train_features or use a smaller C"
        )
    Wb = res.x.reshape(m, d + 1, c)
    return Wb[:, :d], Wb[:, d], int(res.nit)


def _accuracy(W: np.ndarray, b: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Test accuracy of each stacked probe (ties go to the lower class, as argmax does)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.mean(np.argmax(X @ W + b[:, None, :], axis=2) == y, axis=-1)


def _tolerance(tol) -> float:
    tol = as_positive_scalar(tol, "tol")
    if not 1e-14 <= tol <= 1.0:
        raise ValueError(f"tol must lie in [1e-14, 1]; got {tol:g}")
    return tol


def _inverse_penalty(C) -> float:
    C = as_positive_scalar(C, "C")
    if C > _MAX_C:
        raise ValueError(f"C must be at most {_MAX_C:g} (the penalty would not matter); got {C:g}")
    return C


def linear_probe(
    train_features, train_labels, test_features, test_labels, *, C: float = 1.0,
    tol: float = 1e-6,
) -> LinearProbe:  # fmt: skip
    r"""Fit the :math:`\ell_2`-penalised multinomial logistic regression and score it.

    Minimises :math:`J(W, b)` of the module docstring on the training rows (L-BFGS from
    zero, stopping when the gradient is below ``tol`` per training row) and returns
    the fitted weights and the accuracy on the test rows. The classes are
    :math:`0, \dots, c - 1` with :math:`c` one more than the largest label given.

    Parameters
    ----------
    train_features : array_like, shape (n, d)
        One row per labelled training image (raw pixels, or an encoder's embeddings).
    train_labels : array_like of int, shape (n,)
        Their classes, ``>= 0``, at least two different ones.
    test_features : array_like, shape (m, d)
        The test rows.
    test_labels : array_like of int, shape (m,)
        Their classes.
    C : float, default 1
        The inverse strength of the penalty, :math:`0 < C \le 10^{10}` (scikit-learn's
        ``C``).
    tol : float, default 1e-6
        L-BFGS stops once the gradient of :math:`J` is below ``tol`` per training row
        (times ``C`` when ``C > 1``) or :math:`J` falls by less than ``1e-4 * tol``
        (relative) in a step; ``1e-6`` leaves the accuracies as they are at ``1e-9`` on the
        book's data, for a third of the iterations.

    Returns
    -------
    LinearProbe

    Raises
    ------
    TypeError, ValueError
        If the features are not finite 2-D real arrays with the same number of columns, the
        labels not non-negative integers, one per row, the training labels of a single
        class, ``C`` not in :math:`(0, 10^{10}]`, ``tol`` not in :math:`[10^{-14}, 1]`, or the
        objective overflows float64.

    Examples
    --------
    >>> from infonce_lib import load_digits
    >>> d = load_digits()
    >>> p = linear_probe(d.x_train, d.y_train, d.x_test, d.y_test)
    >>> p.weights.shape, bool(p.accuracy > 0.9)
    ((64, 10), True)
    """
    Xtr, ytr, Xte, yte, c = _probe_data(train_features, train_labels, test_features, test_labels)
    C = _inverse_penalty(C)
    W, b, nit = _fit(Xtr[None], np.eye(c)[ytr][None], C, _tolerance(tol))
    acc = float(_accuracy(W, b, Xte[None], yte)[0])
    return LinearProbe(W[0], b[0], acc, nit)


def _label_draws(y: np.ndarray, c: int, per_class: int, draws: int, rng) -> np.ndarray:
    """``draws`` rows of ``per_class`` distinct training rows of each class, class by class."""
    members = [np.flatnonzero(y == k) for k in range(c)]
    short = [k for k, rows in enumerate(members) if 0 < rows.size < per_class]
    if short:
        raise ValueError(
            f"per_class must be at most the training rows of each class; class {short[0]} "
            f"has {members[short[0]].size}"
        )
    present = [rows for rows in members if rows.size]
    # Per class, the first per_class of a uniformly random order of its rows, for every draw.
    picks = [rows[np.argsort(rng.random((draws, rows.size)), axis=1)[:, :per_class]]
             for rows in present]  # fmt: skip
    return np.concatenate(picks, axis=1)


def few_label_probe(
    train_features,
    train_labels,
    test_features,
    test_labels,
    *,
    per_class: int = 5,
    draws: int = 20,
    C: float = 1.0,
    tol: float = 1e-6,
    seed,
) -> FewLabelProbe:
    r"""The linear probe with ``per_class`` labelled images of each class, over many draws.

    Each draw labels ``per_class`` training rows of every class that has training rows,
    chosen uniformly without replacement within the class (so every class is represented
    equally, as in the usual few-label evaluations), fits :func:`linear_probe` on them, and
    scores it on all the test rows. The draws come from one generator; all the probes are
    fitted together (module docstring).

    Parameters
    ----------
    train_features, train_labels, test_features, test_labels
        As :func:`linear_probe`.
    per_class : int, default 5
        Labelled images per class, ``>= 1`` and at most the rows of the smallest class.
    draws : int, default 20
        Independent draws, ``>= 1``.
    C, tol : float, default 1 and 1e-6
        As :func:`linear_probe`.
    seed : int or numpy.random.Generator
        The generator of the draws.

    Returns
    -------
    FewLabelProbe
        The accuracy of each draw (``mean`` their mean) and the rows each draw labelled.

    Raises
    ------
    TypeError, ValueError
        As :func:`linear_probe`, and if ``per_class`` or ``draws`` is not an integer
        ``>= 1``, or a class has fewer than ``per_class`` training rows.

    Examples
    --------
    >>> from infonce_lib import load_digits
    >>> d = load_digits()
    >>> out = few_label_probe(d.x_train, d.y_train, d.x_test, d.y_test, draws=4, seed=0)
    >>> out.accuracies.shape, bool(0.7 < out.mean < 0.95)
    ((4,), True)
    """
    Xtr, ytr, Xte, yte, c = _probe_data(train_features, train_labels, test_features, test_labels)
    k = as_int(per_class, "per_class", minimum=1)
    m = as_int(draws, "draws", minimum=1)
    C = _inverse_penalty(C)
    chosen = _label_draws(ytr, c, k, m, as_generator(seed))
    return FewLabelProbe(_stacked_accuracies(Xtr[None], ytr, Xte[None], yte, chosen, C, tol)[0],
                         chosen)  # fmt: skip


def _stacked_accuracies(Xtr, ytr, Xte, yte, chosen, C: float, tol) -> np.ndarray:
    """The few-label probes of ``E`` feature sets at once (``Xtr`` (E, n, d), ``Xte`` (E, m,
    d)), each fitted on the rows ``chosen`` (draws, rows): accuracies of shape (E, draws).
    Their objectives share no parameter, so the joint minimum is each probe's minimum; one
    L-BFGS run serves them all (the experiments use it for the runs of a configuration)."""
    E, draws = Xtr.shape[0], chosen.shape[0]
    c = int(max(ytr.max(), yte.max())) + 1
    X = Xtr[:, chosen].reshape(E * draws, chosen.shape[1], Xtr.shape[2])
    Y = np.broadcast_to(np.eye(c)[ytr[chosen]], (E, *chosen.shape, c)).reshape((*X.shape[:2], c))
    W, b, _ = _fit(X, Y, C, _tolerance(tol))
    W = W.reshape(E, draws, *W.shape[1:])
    b = b.reshape(E, draws, 1, c)
    with np.errstate(over="ignore", invalid="ignore"):
        logits = Xte[:, None] @ W + b
    return np.mean(np.argmax(logits, axis=3) == yte, axis=2)
