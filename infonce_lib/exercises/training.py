r"""Checker for chapter 8's exercise: the gradient of CLIP's loss in its learned temperature.

CLIP learns its temperature through the *log scale* :math:`t = \log(1/\tau)`: the logits of
a batch of :math:`N` pairs are :math:`\ell_{ij} = e^{t} a_i \cdot b_j`, and the loss is the
mean of the two directions' InfoNCE,
:math:`\mathcal{L} = \frac12(\mathcal{L}(a \to b) + \mathcal{L}(b \to a))`
(:func:`~infonce_lib.symmetric_infonce_grad`). The exercise asks for
``my_log_scale_gradient(Za, Zb, log_scale)``, the number

.. math::

    \frac{\partial \mathcal{L}}{\partial t} = \frac{e^t}{2N} \sum_i \Big(
    \sum_j p_{ij}\, a_i \cdot b_j - a_i \cdot b_i \Big) + \frac{e^t}{2N} \sum_j \Big(
    \sum_i q_{ij}\, a_i \cdot b_j - a_j \cdot b_j \Big),

with :math:`p_{ij}` the softmax of row :math:`i` of the logits over :math:`j` and
:math:`q_{ij}` that of column :math:`j` over :math:`i`. :func:`check_log_scale_gradient`
runs a reader's function on a few batches built so that the usual mistakes give different
numbers, and names them; :func:`log_scale_gradient_mistakes` returns the mistakes as
functions, for the tests.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from ..training.objective import nt_xent_grad, symmetric_infonce_grad
from ._runner import plain_report

__all__ = ["check_log_scale_gradient", "log_scale_gradient_mistakes"]

#: A right answer computed in float32 lands within this (relative) of the float64 one; every
#: mistake below is off by far more.
_RTOL, _ATOL = 1e-4, 1e-7

_HINTS = {
    "tau": (
        "this is the gradient in tau, -e^t times the answer: the parameter is the log scale "
        "t = log(1/tau), and dL/dt = (dL/dtau)(dtau/dt) = -tau dL/dtau"
    ),
    "scale": (
        "this is the gradient in the scale s = e^t, the answer divided by e^t: differentiate "
        "in t, where each logit l_ij = e^t a_i . b_j has dl_ij/dt = l_ij"
    ),
    "sign": (
        "this is minus the answer: the gradient of the bound log N - L (or in log tau = -t), "
        "not of the loss in t"
    ),
    "one direction": (
        "this is one direction only (a_i against the b_j): CLIP's loss is the mean of both "
        "directions, the rows and the columns of the logits"
    ),
    "both summed": "this is the two directions summed: the loss is their mean (divide by 2)",
    "sum over anchors": "this sums over the N anchors: the loss is a mean (divide by N)",
    "positive only": (
        "this keeps only the positive's term -e^t a_i . b_i: the log-sum-exp of each row and "
        "column also depends on t, with derivative e^t times the softmax-weighted mean cosine"
    ),
    "softmax only": (
        "this keeps only the softmax terms: the positive's logit e^t a_i . b_i also depends "
        "on t (it gives -e^t a_i . b_i)"
    ),
    "t as log tau": (
        "this reads t as log tau (logits e^-t a_i . b_j): the logits are e^t a_i . b_j, "
        "with t = log(1/tau)"
    ),
    "t as tau": (
        "this reads t as the temperature itself (logits a_i . b_j / t): t is the log scale, "
        "the logits are e^t a_i . b_j"
    ),
    "clip inside": (
        "this is the gradient at the clipped scale min(e^t, 100): CLIP clips the parameter "
        "after the optimiser's step; the loss, and its gradient, use e^t itself"
    ),
    "zero beyond clip": (
        "this is 0 beyond the clip (t > log 100): the clip moves the parameter back after "
        "the step, it does not flatten the loss; the gradient there is that of e^t"
    ),
    "leave-one-out": (
        "this leaves the positive out of each log-sum-exp (a decoupled loss): InfoNCE's "
        "denominator sums over all N candidates of a row or column, the positive included"
    ),
    "nt-xent": (
        "this is the gradient of NT-Xent, SimCLR's loss, whose negatives include the other "
        "views on the anchor's own side: CLIP's loss scores each a_i against the b_j only, "
        "and each b_j against the a_i"
    ),
    "divided by N squared": (
        "this divides by N^2 (a mean over all N x N logits): the loss is a mean over the N "
        "anchors of each direction (divide by N, then average the two directions)"
    ),
    "divided by N - 1": (
        "this divides by N - 1: each direction's loss is a mean over its N anchors (every "
        "row and every column of the logits is one anchor), so divide by N"
    ),
    "unscaled softmax": (
        "this takes the softmax of the cosines a_i . b_j themselves: the weights are the "
        "softmax of the logits e^t a_i . b_j, scale included"
    ),
    "the loss": (
        "this is the loss itself, not its gradient: differentiate it in t (each logit "
        "l_ij = e^t a_i . b_j has dl_ij/dt = l_ij)"
    ),
    "scale 10**t": (
        "this uses the scale 10^t: the log scale is a natural logarithm, t = log(1/tau), so "
        "the scale is e^t (math.exp(t))"
    ),
}
_NONFINITE = (
    "not finite: exp overflowed; subtract each row's (and each column's) largest logit "
    "before exponentiating, as in a log-sum-exp"
)


def _unit(rng, n: int, d: int) -> np.ndarray:
    Z = rng.normal(size=(n, d))
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


def _cases() -> list[tuple[str, tuple]]:
    """Batches whose two directions differ (so that one direction is not half the total)
    and in which some positives are outscored (so that the answer is far from 0)."""
    rng = np.random.default_rng(8)
    out = []
    for n, d, t in ((5, 3, 1.3), (8, 4, math.log(1 / 0.07)), (3, 2, -0.4), (6, 3, 7.0)):
        A = _unit(rng, n, d)
        B = _unit(rng, n, d)
        B[0] = A[0]  # one positive at cosine 1, the others noisier
        out.append((f"N = {n}, t = {t:.3g}", (A, B, t)))
    return out


def _known(A: np.ndarray, B: np.ndarray, t: float) -> list[tuple[float, str]]:
    want = symmetric_infonce_grad(A, B, t).grad_log_scale
    values = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, fn in log_scale_gradient_mistakes().items():
            if name in _HINTS:  # the overflow is named by its non-finite value
                values.append((float(fn(A, B, t)), _HINTS[name]))

    def close(x, y):
        return math.isclose(x, y, rel_tol=_RTOL, abs_tol=_ATOL)

    # A value that two mistakes share, or the right answer, names neither.
    return [
        (v, h) for v, h in values
        if math.isfinite(v) and not close(v, want)
        and not any(close(v, w) and h != g for w, g in values)
    ]  # fmt: skip


def _run(fn: Callable, A: np.ndarray, B: np.ndarray, t: float) -> tuple[bool, str]:
    want = symmetric_infonce_grad(A, B, t).grad_log_scale
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            out = fn(A.copy(), B.copy(), t)
        except NotImplementedError:
            raise
        except Exception as exc:  # reported, never re-raised
            return False, f"raised {type(exc).__name__}: {exc}"
    try:
        got = float(np.asarray(out, dtype=float))
    except (TypeError, ValueError):
        return False, f"returned {type(out).__name__} {out!r:.60}, not one number"
    if not math.isfinite(got):
        return False, f"expected {want:.6g}, got {got}: {_NONFINITE}"
    if math.isclose(got, want, rel_tol=_RTOL, abs_tol=_ATOL):
        return True, f"dL/dt = {got:.6g}"
    for value, hint in _known(A, B, t):
        if math.isclose(got, value, rel_tol=_RTOL, abs_tol=_ATOL):
            return False, f"expected {want:.6g}, got {got:.6g}: {hint}"
    return False, (
        f"expected {want:.6g}, got {got:.6g}: no usual mistake gives this value; write the "
        "loss as a function of t and differentiate each logit, dl_ij/dt = l_ij"
    )


def check_log_scale_gradient(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``my_log_scale_gradient(Za, Zb, log_scale)`` on four batches.

    The answer is :math:`\partial \mathcal{L} / \partial t` of CLIP's symmetric loss at logit
    scale :math:`e^t` (module docstring), as computed by
    :func:`~infonce_lib.symmetric_infonce_grad`, to a relative :math:`10^{-4}` (a float32
    computation passes). The batches have unit rows whose two directions differ; the last
    has :math:`t = 7`, a scale of about 1,100, where exponentiating the logits unshifted
    overflows, and lies beyond CLIP's clip of the scale at 100. The checker names these
    mistakes: the gradient in :math:`\tau` or in the scale :math:`e^t` instead of :math:`t`,
    the sign (the bound's gradient, or that in :math:`\log\tau`), one direction only, the
    two directions summed, a sum over anchors or a division by :math:`N^2`, the positive's
    term alone or the softmax terms alone, :math:`t` read as :math:`\log\tau` or as
    :math:`\tau`, the clip applied inside the loss or a zero gradient beyond it, the
    positive left out of the log-sum-exp, NT-Xent's gradient instead of CLIP's, a division
    by :math:`N - 1`, the softmax of the unscaled cosines, the loss returned instead of its
    gradient, the scale :math:`10^t` instead of :math:`e^t`, and an overflow.

    Parameters
    ----------
    fn : callable
        Called as ``fn(Za, Zb, log_scale)`` with two float64 arrays of shape ``(N, D)`` and a
        float; must return one number.
    verbose : bool, default True
        Print one line per case, PASS or FAIL with the likely mistake.

    Returns
    -------
    bool
        True when every case passes; False otherwise, and False after printing "not
        attempted yet" when ``fn`` raises NotImplementedError.

    Raises
    ------
    TypeError
        If ``fn`` is not callable or ``verbose`` is not a bool.

    Examples
    --------
    >>> from infonce_lib import symmetric_infonce_grad
    >>> check_log_scale_gradient(lambda a, b, t: symmetric_infonce_grad(a, b, t).grad_log_scale,
    ...                          verbose=False)
    True
    >>> check_log_scale_gradient(log_scale_gradient_mistakes()["scale"])  # doctest: +ELLIPSIS
    FAIL  N = 5, t = 1.3: expected 2.17058, got 0.591551: this is the gradient in
          the scale s = e^t, the answer divided by e^t: differentiate in t, where
          each logit l_ij = e^t a_i . b_j has dl_ij/dt = l_ij
    ...
    4 of 4 cases fail; each FAIL line says what went wrong.
    False
    """
    if not callable(fn):
        raise TypeError(
            f"fn must be a callable (your my_log_scale_gradient); got {type(fn).__name__}"
        )
    outcomes = ((name, *_run(fn, *args)) for name, args in _cases())
    return plain_report(outcomes, verbose=verbose)


def _reference_parts(Za, Zb, t, *, shift=True, with_positive=True, scaled=True) -> tuple:
    """Each direction's dL/dt and the positive and softmax parts, optionally unshifted, with
    the positive left out of each log-sum-exp, or with the softmax of the unscaled cosines."""
    A, B = np.asarray(Za, dtype=float), np.asarray(Zb, dtype=float)
    s = math.exp(t)
    C = A @ B.T
    out = []
    for M in (C, C.T):
        L = s * M if scaled else M
        if not with_positive:
            L = np.where(np.eye(len(L), dtype=bool), -np.inf, L)
        P = np.exp(L - L.max(axis=1, keepdims=True)) if shift else np.exp(L)
        P = P / P.sum(axis=1, keepdims=True)
        out.append((-s * float(np.mean(np.diag(M))), s * float(np.mean(np.sum(P * M, axis=1)))))
    (p1, s1), (p2, s2) = out
    return p1 + s1, p2 + s2, (p1 + p2) / 2, (s1 + s2) / 2


def _right(A, B, t) -> float:
    ab, ba, _, _ = _reference_parts(A, B, t)
    return (ab + ba) / 2


def _t_as_tau(A, B, t) -> float:
    """dL/dt with logits a_i . b_j / t: dL/ds at the scale s = 1/t, times ds/dt = -1/t^2."""
    C = np.asarray(A, dtype=float) @ np.asarray(B, dtype=float).T
    total = 0.0
    for M in (C, C.T):
        L = M / t
        P = np.exp(L - L.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        total += float(np.mean(np.sum(P * M, axis=1) - np.diag(M)))
    return -total / 2 / t**2


def log_scale_gradient_mistakes() -> dict[str, Callable]:
    r"""Twenty wrong ``my_log_scale_gradient`` functions, one per usual mistake.

    Returns
    -------
    dict of str to callable
        Name of the mistake to a function ``(Za, Zb, log_scale) -> float``: ``"tau"`` (the
        gradient in :math:`\tau`), ``"scale"`` (in :math:`e^t`), ``"sign"``, ``"one
        direction"``, ``"both summed"``, ``"sum over anchors"``, ``"divided by N squared"``,
        ``"positive only"``, ``"softmax only"``, ``"no max subtracted"`` (overflows at large
        scales), ``"t as log tau"`` (logits :math:`e^{-t} a_i \cdot b_j`), ``"t as tau"``
        (logits :math:`a_i \cdot b_j / t`), ``"clip inside"`` (the gradient at
        :math:`\min(e^t, 100)`), ``"zero beyond clip"`` (0 when :math:`e^t > 100`),
        ``"leave-one-out"`` (the positive left out of each log-sum-exp), ``"nt-xent"``
        (the gradient of :func:`~infonce_lib.nt_xent_grad`'s loss), ``"divided by N - 1"``,
        ``"unscaled softmax"`` (the softmax of the cosines, not of the logits), ``"the
        loss"`` (the loss itself) and ``"scale 10**t"`` (logits :math:`10^t a_i \cdot b_j`).

    Examples
    --------
    >>> A = np.eye(3)
    >>> round(log_scale_gradient_mistakes()["positive only"](A, A, 0.0), 6)  # -e^0 mean(1)
    -1.0
    """
    clip = math.log(100.0)
    return {
        "tau": lambda A, B, t: -math.exp(t) * _right(A, B, t),
        "scale": lambda A, B, t: _right(A, B, t) / math.exp(t),
        "sign": lambda A, B, t: -_right(A, B, t),
        "one direction": lambda A, B, t: _reference_parts(A, B, t)[0],
        "both summed": lambda A, B, t: 2 * _right(A, B, t),
        "sum over anchors": lambda A, B, t: len(A) * _right(A, B, t),
        "divided by N squared": lambda A, B, t: _right(A, B, t) / len(A),
        "positive only": lambda A, B, t: _reference_parts(A, B, t)[2],
        "softmax only": lambda A, B, t: _reference_parts(A, B, t)[3],
        "no max subtracted": lambda A, B, t: sum(_reference_parts(A, B, t, shift=False)[:2]) / 2,
        "t as log tau": lambda A, B, t: -_right(A, B, -t),
        "t as tau": _t_as_tau,
        "clip inside": lambda A, B, t: _right(A, B, min(t, clip)),
        "zero beyond clip": lambda A, B, t: 0.0 if t > clip else _right(A, B, t),
        "leave-one-out": lambda A, B, t: (
            sum(_reference_parts(A, B, t, with_positive=False)[:2]) / 2
        ),
        "nt-xent": lambda A, B, t: nt_xent_grad(A, B, t).grad_log_scale,
        "divided by N - 1": lambda A, B, t: _right(A, B, t) * len(A) / (len(A) - 1),
        "unscaled softmax": lambda A, B, t: sum(_reference_parts(A, B, t, scaled=False)[:2]) / 2,
        "the loss": lambda A, B, t: symmetric_infonce_grad(A, B, t).loss,
        "scale 10**t": lambda A, B, t: _right(A, B, t * math.log(10.0)),
    }
