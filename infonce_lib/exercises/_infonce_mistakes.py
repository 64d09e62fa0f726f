"""The catalogue of wrong InfoNCE implementations that :func:`check_info_nce` is tested
against (private: the public name is :func:`infonce_lib.typical_mistakes`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["typical_mistakes"]


def _no_max_subtraction(Z1, Z2, temperature=0.1):
    A = np.asarray(Z1, dtype=float)
    B = np.asarray(Z2, dtype=float)
    E = np.exp(A @ B.T / temperature)  # overflows once a logit exceeds ~709.78
    return float(-np.mean(np.log(np.diag(E) / E.sum(axis=1))))


def _stable_rows(L, axis=1):
    m = L.max(axis=axis, keepdims=True)
    return (m + np.log(np.exp(L - m).sum(axis=axis, keepdims=True))).ravel()


def _wrong_axis(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.mean(_stable_rows(L, axis=0) - np.diag(L)))


def _sum_not_mean(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.sum(_stable_rows(L) - np.diag(L)))


def _positives_in_column_0(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.mean(_stable_rows(L) - L[:, 0]))


def _positive_left_out(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    off = L.copy()
    np.fill_diagonal(off, -np.inf)
    return float(np.mean(_stable_rows(off) - np.diag(L)))


def _squeezes(Z1, Z2, temperature=0.1):
    A = np.squeeze(np.asarray(Z1, dtype=float))
    B = np.squeeze(np.asarray(Z2, dtype=float))
    L = A @ B.T / temperature
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _float32(Z1, Z2, temperature=0.1):
    A, B = np.asarray(Z1), np.asarray(Z2)
    L = A @ B.T / np.asarray(temperature, dtype=A.dtype)
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _row_losses(Z1, Z2, scale):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T * scale
    return _stable_rows(L) - np.diag(L)


def _tau_twice(Z1, Z2, temperature=0.1):
    A = np.asarray(Z1, dtype=float) / temperature  # divides by tau here ...
    L = A @ np.asarray(Z2, dtype=float).T / temperature  # ... and again here
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _tau_forgotten(Z1, Z2, temperature=0.1):
    return float(np.mean(_row_losses(Z1, Z2, 1.0)))  # temperature never used


def _tau_multiplied(Z1, Z2, temperature=0.1):
    return float(np.mean(_row_losses(Z1, Z2, temperature)))  # * tau, not / tau


def _minus_loss(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.mean(np.diag(L) - _stable_rows(L)))  # mean log p_ii: minus the loss


def _negated_logits(Z1, Z2, temperature=0.1):
    return float(np.mean(_row_losses(Z1, Z2, -1.0 / temperature)))  # softmax of -logits


def _casts_to_float32(Z1, Z2, temperature=0.1):
    A = np.asarray(Z1, dtype=np.float32)
    B = np.asarray(Z2, dtype=np.float32)
    L = A @ B.T / np.float32(temperature)
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _per_row(Z1, Z2, temperature=0.1):
    return _row_losses(Z1, Z2, 1.0 / temperature)  # N losses, not their mean


def _needs_arrays(Z1, Z2, temperature=0.1):
    L = Z1.astype(float) @ Z2.astype(float).T / temperature  # lists have no .astype
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _modifies_inputs(Z1, Z2, temperature=0.1):
    A = np.asarray(Z1, dtype=float)
    A /= temperature  # changes the caller's float64 array
    L = A @ np.asarray(Z2, dtype=float).T
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _no_default(Z1, Z2, temperature):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _log_of_softmax(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    E = np.exp(L - L.max(axis=1, keepdims=True))  # max-shifted: nothing overflows ...
    P = E / E.sum(axis=1, keepdims=True)
    return float(-np.mean(np.log(np.diag(P))))  # ... but a tiny p_ii becomes 0, log 0 = -inf


def _global_max(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    m = L.max()  # one maximum for the whole batch, not one per row
    return float(np.mean(m + np.log(np.exp(L - m).sum(axis=1)) - np.diag(L)))


def _symmetric(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    rows = np.mean(_stable_rows(L) - np.diag(L))
    columns = np.mean(_stable_rows(L, axis=0) - np.diag(L))
    return float((rows + columns) / 2)  # CLIP's loss, not InfoNCE's


def _tau_inside_only(Z1, Z2, temperature=0.1):
    S = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T
    return float(np.mean(_stable_rows(S / temperature) - np.diag(S)))  # positive not / tau


def _mean_over_n_minus_1(Z1, Z2, temperature=0.1):
    terms = _row_losses(Z1, Z2, 1.0 / temperature)
    return float(terms.sum() / (len(terms) - 1))


def _squared_distance_logits(Z1, Z2, temperature=0.1):
    A, B = np.asarray(Z1, dtype=float), np.asarray(Z2, dtype=float)
    L = -((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2) / temperature
    return float(np.mean(_stable_rows(L) - np.diag(L)))


def _all_entries(Z1, Z2, temperature=0.1):
    L = np.asarray(Z1, dtype=float) @ np.asarray(Z2, dtype=float).T / temperature
    return float(np.mean(_stable_rows(L)[:, None] - L))  # every -log p_ij, not the diagonal


def typical_mistakes() -> dict[str, Callable]:
    r"""Twenty-four deliberately wrong InfoNCE implementations, one per usual mistake.

    Each is a short NumPy function with the exercise's signature
    ``(Z1, Z2, temperature=0.1) -> float`` that is right except for one thing:

    - ``"no max-subtraction"``: :math:`\log \sum_j e^{\ell_{ij}}` computed as written,
      which overflows once a logit exceeds about 709;
    - ``"softmax over the wrong axis"``: normalises over anchors (axis 0);
    - ``"sum instead of mean"``: sums the row losses;
    - ``"positives in column 0"``: takes column 0 as every anchor's positive;
    - ``"positive left out of the denominator"``: the leave-one-out form (Poole et al.,
      2019), not InfoNCE;
    - ``"temperature applied twice"``: divides ``Z1`` by τ and then the logits again, so
      the logits are :math:`Z_1 Z_2^\top / \tau^2`;
    - ``"temperature forgotten"``: never divides by τ;
    - ``"temperature multiplied"``: multiplies the logits by τ;
    - ``"returns minus the loss"``: the mean log-probability of the positives;
    - ``"negated logits"``: the softmax of :math:`-\ell`, as if the scores were distances;
    - ``"squeezes its input"``: ``np.squeeze`` turns an ``(1, D)`` batch into a vector;
    - ``"computes in float32"``: keeps the input's dtype;
    - ``"casts to float32"``: converts every input to float32;
    - ``"per-row output"``: returns the ``N`` row losses instead of their mean;
    - ``"needs NumPy arrays"``: calls ``.astype`` on its inputs, so lists fail;
    - ``"modifies its inputs"``: divides the caller's ``Z1`` by τ in place;
    - ``"no default temperature"``: ``temperature`` is required;
    - ``"log of the softmax"``: max-shifted, but ``-log`` of the softmax probability,
      which underflows to 0 when a positive lies more than about 745 below its row's
      maximum;
    - ``"global maximum"``: subtracts the largest logit of the whole batch, so a row far
      below it underflows to 0;
    - ``"symmetric (CLIP) average"``: the mean of the row and the column losses;
    - ``"temperature inside the log-sum-exp only"``: the positive's logit is not divided
      by τ;
    - ``"mean over N - 1"``: the sum of the row losses divided by ``N - 1``;
    - ``"squared-distance logits"``: :math:`-\lVert z^{(1)}_i - z^{(2)}_j \rVert^2 / \tau`
      instead of dot products;
    - ``"mean over all entries"``: averages :math:`-\log p_{ij}` over the whole matrix.

    Returns
    -------
    dict of str to callable
        Name of the mistake to the function that makes it.

    Examples
    --------
    >>> import numpy as np
    >>> from infonce_lib import info_nce_loss
    >>> naive = typical_mistakes()["no max-subtraction"]
    >>> Z = np.eye(2)
    >>> round(naive(Z, Z, temperature=1.0), 6) == round(info_nce_loss(Z, Z, 1.0), 6)
    True
    >>> with np.errstate(over="ignore", invalid="ignore"):
    ...     naive(Z, Z, temperature=1e-3)  # e^1000 is inf, and inf / inf is nan
    nan
    """
    return {
        "no max-subtraction": _no_max_subtraction,
        "softmax over the wrong axis": _wrong_axis,
        "sum instead of mean": _sum_not_mean,
        "positives in column 0": _positives_in_column_0,
        "positive left out of the denominator": _positive_left_out,
        "temperature applied twice": _tau_twice,
        "temperature forgotten": _tau_forgotten,
        "temperature multiplied": _tau_multiplied,
        "returns minus the loss": _minus_loss,
        "negated logits": _negated_logits,
        "squeezes its input": _squeezes,
        "computes in float32": _float32,
        "casts to float32": _casts_to_float32,
        "per-row output": _per_row,
        "needs NumPy arrays": _needs_arrays,
        "modifies its inputs": _modifies_inputs,
        "no default temperature": _no_default,
        "log of the softmax": _log_of_softmax,
        "global maximum": _global_max,
        "symmetric (CLIP) average": _symmetric,
        "temperature inside the log-sum-exp only": _tau_inside_only,
        "mean over N - 1": _mean_over_n_minus_1,
        "squared-distance logits": _squared_distance_logits,
        "mean over all entries": _all_entries,
    }
