r"""Chapter 1's exercise: the NCE objective from log-densities, and its usual mistakes.

:func:`check_nce_objective` runs a reader's implementation of the objective :math:`J_T` of
Gutmann & Hyvärinen (2012), normalised by :math:`1/T_d` (their 2010 paper, with
:math:`\nu = 1`, divides by :math:`2T` instead), on a handful of cases and names the mistake
when a wrong value matches a known one; :func:`nce_objective_mistakes` returns those mistakes
as small functions, so that the checker can be tested against them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..nce import nce_objective
from ._runner import call_reader, hinted_report

__all__ = ["check_nce_objective", "nce_objective_mistakes"]

#: A value passes within this relative tolerance: float32 arithmetic, done carefully, is
#: accurate to about 1e-7 here, and every mistake the checker knows is off by far more.
_RTOL = 2e-6
_ATOL = 1e-9
#: A case whose log-ratios G reach this size is one where a computed sigma overflows.
_FAR = 700.0


@dataclass
class _Case:
    name: str
    args: tuple
    kwargs: dict
    expected: float
    known: list[tuple[float, str]] = field(default_factory=list)
    raise_hint: str = ""


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_RTOL, abs_tol=_ATOL)


def _digits(expected: float, got: float) -> str:
    for k in range(6, 18):
        a, b = f"{expected:.{k}g}", f"{got:.{k}g}"
        if a != b:
            break
    return f"expected {a}, got {b}"


def _log_sigmoid(z):
    return -np.logaddexp(0.0, -np.asarray(z, dtype=np.float64))


_HINT_LOG_NU = (
    "the posterior is sigma(G - log nu), not sigma(G): the prior odds of data against "
    "noise are 1 : nu"
)
_HINT_LOG_NU_SIGN = "log nu has the wrong sign: the posterior is sigma(G - log nu)"
_HINT_NU_WEIGHT = (
    "the noise term is a mean over T_n = nu T_d samples, so it is weighted by nu: "
    "J = mean_x log h(x) + nu * mean_y log(1 - h(y)) (the sum over all samples divided by T_d)"
)
_HINT_NOISE_SIGN = (
    "the noise term uses log h(y); a noise sample is classified correctly with "
    "probability 1 - h(y) = sigma(log nu - G(y))"
)
_HINT_G_SWAPPED = "G is log p_m - log p_n (model minus noise), not the other way round"
_HINT_INNER_SIGN = (
    "data and noise swap roles: the data get log(1 - h) and the noise log h. Either the sign "
    "inside logaddexp is flipped (log sigma(z) = -np.logaddexp(0, -z), with a minus before z; "
    "-np.logaddexp(0, z) is log sigma(-z)), or the two terms are exchanged; J rewards h(x) "
    "near 1 at the data and h(y) near 0 at the noise"
)
_HINT_POOLED = (
    "this divides by T_d + T_n; J divides the sum over all samples by T_d (per data sample)"
)
_HINT_SUM = "this is the sum over samples; divide it by T_d"
_HINT_MINUS = "this is minus J (a loss); the exercise asks for J itself, which is below 0"
_HINT_OVERFLOW = (
    "log of a computed sigma: sigma(z) rounds to 0 or exp overflows for large |z|; use "
    "log sigma(z) = -np.logaddexp(0, -z)"
)
_HINT_ROWS = "return one number, J, not one term per sample"
_HINT_HALF = (
    "this is J/2, the normalisation 1/(2T) of Gutmann & Hyvarinen's 2010 paper (nu = 1, "
    "T_d = T_n = T); the exercise asks for J of their 2012 paper: the sum divided by T_d"
)
_HINT_BY_T_N = "this divides by T_n, the number of noise samples; J divides by T_d"
_HINT_INVERSE_NU = (
    "this uses 1/nu where nu belongs: nu = T_n / T_d is noise samples per data sample, the "
    "posterior is sigma(G - log nu) and the noise term is weighted by nu"
)
_HINT_CLIP = (
    "clipping (h into [eps, 1 - eps], or z into a range) changes the value where |G| is "
    "large: log sigma(-800) is -800, not log eps; -np.logaddexp(0, -z) needs no clipping"
)
_HINT_LOG10 = "this uses log10; the objective is in natural logarithms (nats): np.log"
_HINT_LOG2 = "this uses log2; the objective is in natural logarithms (nats): np.log"
_HINT_NU_ON_DATA = (
    "nu weights the noise term, not the data term: J = mean_x log h(x) + nu * mean_y log(1 - h(y))"
)
_HINT_NOISE_BY_NU = (
    "the noise term is weighted by nu, not 1/nu: it is a mean over T_n = nu T_d samples, "
    "and J divides their sum by T_d"
)
_HINT_LOG_NU_PLUS_1 = (
    "this uses log(nu + 1) where log nu belongs: the prior odds of data against noise are "
    "1 : nu, so the posterior is sigma(G - log nu)"
)
_HINT_NOISE_SUBTRACTED = (
    "the noise term is added, not subtracted: both terms are log-probabilities of a correct "
    "classification, J = mean_x log h(x) + nu * mean_y log(1 - h(y))"
)
_HINT_NOISE_SUM = (
    "the noise term is nu times the mean over the T_n noise samples (their sum divided by "
    "T_d), not their sum"
)
_HINT_LOG_T_N = "this uses log T_n where log nu = log(T_n / T_d) belongs"
_HINT_CLIP_GENERIC = (
    "the moderate cases pass and only those with |G| >= 700 fail, with a finite value: "
    "this looks like clipping (h into [eps, 1 - eps], or z into a range), which changes the "
    "value where |G| is large; -np.logaddexp(0, -z) needs no clipping"
)
#: The clipping a reader might use: h into [eps, 1 - eps], or z = G - log nu into [-c, c].
_CLIP_EPS = (1e-7, 1e-8, 1e-10, 1e-12, 1e-15)
_CLIP_Z = (20.0, 30.0, 50.0, 100.0, 500.0)
_HINT_NONFINITE = (
    "J must be finite, and every G in this case is moderate: look for a log of 0, a 0 / 0 or "
    "inf - inf (log sigma(z) = -np.logaddexp(0, -z) never gives one)"
)


def _terms(lm_x, ln_x, lm_y, ln_y, nu):
    G_x = np.asarray(lm_x, dtype=np.float64) - np.asarray(ln_x, dtype=np.float64)
    G_y = np.asarray(lm_y, dtype=np.float64) - np.asarray(ln_y, dtype=np.float64)
    return G_x, G_y, math.log(nu)


def _known(lm_x, ln_x, lm_y, ln_y, nu) -> list[tuple[float, str]]:
    G_x, G_y, log_nu = _terms(lm_x, ln_x, lm_y, ln_y, nu)
    T_d, T_n = G_x.size, G_y.size
    right_x, right_y = _log_sigmoid(G_x - log_nu), _log_sigmoid(log_nu - G_y)
    J = right_x.mean() + nu * right_y.mean()
    known = [
        (right_x.mean() + right_y.mean(), _HINT_NU_WEIGHT),
        (right_x.mean() + nu * _log_sigmoid(G_y - log_nu).mean(), _HINT_NOISE_SIGN),
        (
            _log_sigmoid(-G_x - log_nu).mean() + nu * _log_sigmoid(log_nu + G_y).mean(),
            _HINT_G_SWAPPED,
        ),
        (
            _log_sigmoid(log_nu - G_x).mean() + nu * _log_sigmoid(G_y - log_nu).mean(),
            _HINT_INNER_SIGN,
        ),
        ((right_x.sum() + right_y.sum()) / (T_d + T_n), _HINT_POOLED),
        (right_x.sum() + right_y.sum(), _HINT_SUM),
        (-J, _HINT_MINUS),
        (_log_sigmoid(G_x).mean() + nu * _log_sigmoid(-G_y).mean(), _HINT_LOG_NU),
        (
            _log_sigmoid(G_x + log_nu).mean() + nu * _log_sigmoid(-log_nu - G_y).mean(),
            _HINT_LOG_NU_SIGN,
        ),
        (J / 2, _HINT_HALF),
        ((right_x.sum() + right_y.sum()) / T_n, _HINT_BY_T_N),
        (
            _log_sigmoid(G_x + log_nu).mean() + _log_sigmoid(-log_nu - G_y).mean() / nu,
            _HINT_INVERSE_NU,
        ),
        (J / math.log(10), _HINT_LOG10),
        (J / math.log(2), _HINT_LOG2),
        (nu * right_x.mean() + right_y.mean(), _HINT_NU_ON_DATA),
        (right_x.mean() + right_y.mean() / nu, _HINT_NOISE_BY_NU),
        (_shifted(G_x, G_y, math.log(nu + 1), nu), _HINT_LOG_NU_PLUS_1),
        (right_x.mean() - nu * right_y.mean(), _HINT_NOISE_SUBTRACTED),
        (right_x.mean() + right_y.sum(), _HINT_NOISE_SUM),
        (_shifted(G_x, G_y, math.log(T_n), nu), _HINT_LOG_T_N),
        *((_clipped_h(G_x, G_y, log_nu, nu, eps), _HINT_CLIP) for eps in _CLIP_EPS),
        *((_clipped_z(G_x, G_y, log_nu, nu, c), _HINT_CLIP) for c in _CLIP_Z),
    ]
    return _merged([(v, h) for v, h in known if not _close(v, J)])


def _shifted(G_x, G_y, a, nu):
    """J with a in place of log nu in the posterior (the weight nu kept)."""
    return float(_log_sigmoid(G_x - a).mean() + nu * _log_sigmoid(a - G_y).mean())


def _clipped_h(G_x, G_y, log_nu, nu, eps):
    """J with h clipped into [eps, 1 - eps] before its logarithm."""
    h_x = np.clip(np.exp(_log_sigmoid(G_x - log_nu)), eps, 1 - eps)
    h_y = np.clip(np.exp(_log_sigmoid(G_y - log_nu)), eps, 1 - eps)
    return float(np.log(h_x).mean() + nu * np.log(1 - h_y).mean())


def _clipped_z(G_x, G_y, log_nu, nu, c):
    """J with z = G - log nu clipped into [-c, c] before log sigma."""
    z_x, z_y = np.clip(G_x - log_nu, -c, c), np.clip(G_y - log_nu, -c, c)
    return float(_log_sigmoid(z_x).mean() + nu * _log_sigmoid(-z_y).mean())


def _merged(known: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """One entry per distinct value: where two mistakes give the same value on a case (G
    swapped and the flipped sign inside logaddexp agree when nu = 1), the hint names both."""
    out: list[tuple[float, list[str]]] = []
    for value, hint in known:
        for v, hints in out:
            if _close(v, value):
                if hint not in hints:  # two clippings can agree: one hint suffices
                    hints.append(hint)
                break
        else:
            out.append((value, [hint]))
    return [
        (v, h[0] if len(h) == 1 else "two mistakes give this value here: " + "; or ".join(h))
        for v, h in out
    ]


def _case(name, arrays, nu, *, default=False, raise_hint="") -> _Case:
    kwargs = {} if default else {"nu": nu}
    expected = float(nce_objective(*arrays, nu=nu))
    return _Case(name, tuple(arrays), kwargs, expected, _known(*arrays, nu), raise_hint)


def _cases() -> list[_Case]:
    rng = np.random.default_rng(2012)
    cases = []
    zeros = [np.zeros(4), np.zeros(4), np.zeros(4), np.zeros(4)]
    cases.append(_case("model equals noise", zeros, 1.0))  # J = 2 log 1/2
    # nu = 4 and nu = 1/2: every mistake about nu gives its own value (none is right by
    # accident, as log nu left out is when nu = 1).
    arrays = [rng.normal(size=3), rng.normal(size=3), rng.normal(size=12), rng.normal(size=12)]
    cases.append(_case("random, nu = 4", arrays, 4.0))
    # T_n = 4 here, so that log T_n (a mistake) is not -log nu = log 2 (another one).
    arrays = [rng.normal(size=8), rng.normal(size=8), rng.normal(size=4), rng.normal(size=4)]
    cases.append(_case("random, nu = 1/2", arrays, 0.5))
    far = [
        np.array([800.0, -800.0, 3.0]),
        np.zeros(3),
        np.array([900.0, -700.0, 0.5]),
        np.zeros(3),
    ]
    cases.append(_case("far from the threshold, nu = 1", far, 1.0))
    far3 = [far[0], far[1], np.array([900.0, -700.0, 0.5, 750.0, -2.0, 1.0]), np.zeros(6)]
    cases.append(_case("far from the threshold, nu = 2", far3, 2.0))
    lists = [[0.5, -1.0], [0.0, 0.2], [-0.3, 1.5, 0.1, 2.0], [0.4, 0.0, -0.7, 0.9]]
    cases.append(
        _case(
            "nested lists",
            lists,
            2.0,
            raise_hint="convert the inputs with np.asarray(x, dtype=np.float64) first",
        )
    )
    arrays = [rng.normal(size=5) for _ in range(4)]
    cases.append(
        _case(
            "default nu",
            arrays,
            1.0,
            default=True,
            raise_hint="give nu a default: def my_nce_objective(..., nu=1.0)",
        )
    )
    return cases


def _run_case(fn: Callable, case: _Case) -> tuple[bool, str, str]:
    """Run one case: (passed, message, the hint in it or ""). Lets NotImplementedError out."""
    args = tuple(a.copy() if isinstance(a, np.ndarray) else list(a) for a in case.args)
    out, warned, failure = call_reader(fn, args, case.kwargs, case.raise_hint)
    if failure is not None:
        return failure
    if isinstance(out, np.ndarray) and out.ndim > 0 and out.size != 1:
        return False, f"returned an array of shape {out.shape}; {_HINT_ROWS}", _HINT_ROWS
    try:
        got = float(np.asarray(out).reshape(()))
    except (TypeError, ValueError):
        return False, f"returned {type(out).__name__} {out!r}, not a number{warned}", ""
    if not math.isfinite(got):
        G = np.concatenate([np.subtract(case.args[0], case.args[1]),
                            np.subtract(case.args[2], case.args[3])])  # fmt: skip
        hint = _HINT_OVERFLOW if np.abs(G).max() >= _FAR else _HINT_NONFINITE
        return False, f"expected {case.expected:.6g}, got {got}: {hint}", hint
    if not _close(got, case.expected):
        for value, hint in case.known:
            if _close(got, value):
                return False, f"{_digits(case.expected, got)}: {hint}", hint
        return False, f"{_digits(case.expected, got)}{warned}", ""
    return True, f"{got + 0.0:.6f}", ""


def check_nce_objective(fn: Callable, *, verbose: bool = True) -> bool:
    r"""Check a reader's ``nce_objective(log_pm_x, log_pn_x, log_pm_y, log_pn_y, nu=1.0)``.

    The exercise of chapter 1 asks for the NCE objective :math:`J_T` of Gutmann &
    Hyvärinen (2012), from the log-densities of the model and of the noise at :math:`T_d`
    data samples :math:`x_t` and :math:`T_n = \nu T_d` noise samples :math:`y_t`:

    .. math::

        J &= \frac{1}{T_d} \Big[ \sum_{t=1}^{T_d} \log \sigma\big(G(x_t) - \log\nu\big)
            + \sum_{t=1}^{T_n} \log \sigma\big(\log\nu - G(y_t)\big) \Big], \\
        G &= \log p_m - \log p_n ,

    returned as a float. This runs ``fn`` on seven cases: the model equal to the noise
    (:math:`J = 2 \log \tfrac12` at :math:`\nu = 1`); random cases with :math:`\nu = 4` and
    :math:`\nu = 1/2`, on which every mistake gives a value of its own; log-ratios of
    :math:`\pm 800` with :math:`\nu = 1` and :math:`\nu = 2`, where the logarithm of a
    computed :math:`\sigma` overflows or gives :math:`\log 0`; nested lists; and a call
    without ``nu`` (default 1). On each case the value of every known mistake is computed
    and compared with the reader's, so a wrong value is named when it matches one (where two
    mistakes give the same value, as :math:`G` swapped and the flipped sign inside
    ``logaddexp`` do when :math:`\nu = 1`, the hint names both): ``log nu`` left out of the
    posterior or with the wrong sign, the noise term not weighted by :math:`\nu`, the noise
    term written with :math:`\log h` instead of :math:`\log(1 - h)`, :math:`G` taken as
    noise minus model, ``-np.logaddexp(0, z)`` for :math:`\log\sigma(z)` (the roles of
    data and noise swapped, which gives the same value), a division by
    :math:`T_d + T_n`, by :math:`2 T_d` (the 2010 paper's :math:`1/(2T)`, :math:`J/2` at
    :math:`\nu = 1`), by :math:`T_n` or not at all, :math:`1/\nu` in place of :math:`\nu`,
    :math:`h` clipped into :math:`[\epsilon,
    1 - \epsilon]` or :math:`G - \log\nu` clipped into a range (for common choices of the
    bounds; with other bounds, when only the cases with large :math:`|G|` fail, a generic
    clipping hint), base-10 or base-2 logarithms, :math:`\nu` on the data term instead of
    the noise term, the noise term weighted by :math:`1/\nu`, summed instead of averaged or
    subtracted, :math:`\log(\nu + 1)` or :math:`\log T_n` for :math:`\log\nu`, minus
    :math:`J`, and one term per sample returned. An
    infinite or NaN answer always gets a hint: the overflow of a computed :math:`\sigma` on
    the cases with large :math:`|G|`, a log of 0 or 0/0 on the others. A value passes within
    2e-6 relative (1e-9 absolute) of :func:`~infonce_lib.nce_objective`, so a careful
    float32 implementation passes and every known mistake fails. A stub that raises
    ``NotImplementedError`` gets "not attempted yet"; other exceptions are reported, never
    re-raised. The last line says "see the hints above" only when a hint was printed.

    Parameters
    ----------
    fn : callable
        The reader's implementation, called as ``fn(lm_x, ln_x, lm_y, ln_y, nu=nu)`` with
        1-D arrays (or lists), and as ``fn(lm_x, ln_x, lm_y, ln_y)`` for the default.
    verbose : bool, default True
        Print one line per case (PASS or FAIL, with what was expected and a hint).

    Returns
    -------
    bool
        True when every case passes.

    Raises
    ------
    TypeError
        If ``fn`` is not callable.

    Examples
    --------
    >>> from infonce_lib import nce_objective
    >>> check_nce_objective(nce_objective, verbose=False)
    True
    >>> check_nce_objective(nce_objective_mistakes()["noise term not weighted by nu"])
    ... # doctest: +ELLIPSIS
    PASS  model equals noise: -1.386294
    FAIL  random, nu = 4: expected -3.18392, got -2.2567: the noise term is a mean
          over T_n = nu T_d samples, so it is weighted by nu: J = mean_x log h(x) +
          nu * mean_y log(1 - h(y)) (the sum over all samples divided by T_d)
    ...
    False
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable; got {type(fn).__name__}")
    return hinted_report(
        fn,
        _outcomes(fn),
        verbose=verbose,
        unknown=(
            "compare your steps with the formula (G, the posterior h, the two sums, "
            "the division by T_d)."
        ),
    )


def _outcomes(fn: Callable):
    """(name, passed, message, hint) per case. A finite wrong value on a case with |G| >= 700
    that no known mistake explains, when every moderate case passes, gets the generic
    clipping hint (clipping with bounds other than the common ones)."""
    results = [(case, *_run_case(fn, case)) for case in _cases()]
    far = {id(c) for c in _cases_far(r[0] for r in results)}
    moderate_ok = all(passed for case, passed, _, _ in results if id(case) not in far)
    for case, passed, message, hint in results:
        if moderate_ok and not passed and not hint and id(case) in far:
            if message.startswith("expected "):  # a finite number, not an exception
                message, hint = f"{message}: {_HINT_CLIP_GENERIC}", _HINT_CLIP_GENERIC
        yield case.name, passed, message, hint


def _cases_far(cases):
    for case in cases:
        G = np.concatenate([np.subtract(case.args[0], case.args[1]),
                            np.subtract(case.args[2], case.args[3])])  # fmt: skip
        if np.abs(G).max() >= _FAR:
            yield case


# ---------------------------------------------------------------- the usual mistakes


def _parts(lm_x, ln_x, lm_y, ln_y):
    G_x = np.asarray(lm_x, dtype=float) - np.asarray(ln_x, dtype=float)
    G_y = np.asarray(lm_y, dtype=float) - np.asarray(ln_y, dtype=float)
    return G_x, G_y


def _no_log_nu(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    return float(_log_sigmoid(G_x).mean() + nu * _log_sigmoid(-G_y).mean())


def _log_nu_sign(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float(_log_sigmoid(G_x + a).mean() + nu * _log_sigmoid(-a - G_y).mean())


def _no_nu_weight(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float(_log_sigmoid(G_x - a).mean() + _log_sigmoid(a - G_y).mean())


def _noise_log_h(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float(_log_sigmoid(G_x - a).mean() + nu * _log_sigmoid(G_y - a).mean())


def _g_swapped(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    return _right(ln_x, lm_x, ln_y, lm_y, nu)


def _inner_sign(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    # -np.logaddexp(0, z) is log sigma(-z), not log sigma(z)
    return float(-np.logaddexp(0, G_x - a).mean() - nu * np.logaddexp(0, a - G_y).mean())


def _pooled_mean(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    terms = np.concatenate([_log_sigmoid(G_x - a), _log_sigmoid(a - G_y)])
    return float(terms.mean())


def _minus_j(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    return -_right(lm_x, ln_x, lm_y, ln_y, nu)


def _log_of_sigma(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    h_x = 1 / (1 + np.exp(-(G_x - a)))  # exp overflows, or h rounds to 0 or 1
    h_y = 1 / (1 + np.exp(-(G_y - a)))
    return float(np.log(h_x).mean() + nu * np.log(1 - h_y).mean())


def _exp_ratio(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    # h = p_m / (p_m + nu p_n) as exp(G) / (exp(G) + nu): inf / inf = NaN once exp overflows
    h_x, h_y = np.exp(G_x) / (np.exp(G_x) + nu), np.exp(G_y) / (np.exp(G_y) + nu)
    return float(np.log(h_x).mean() + nu * np.log(1 - h_y).mean())


def _per_sample(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return np.concatenate([_log_sigmoid(G_x - a), _log_sigmoid(a - G_y)])


def _half_j(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    # the 2010 paper's 1/(2T), written for any nu as 1/(2 T_d)
    return float((_log_sigmoid(G_x - a).sum() + _log_sigmoid(a - G_y).sum()) / (2 * G_x.size))


def _by_t_n(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float((_log_sigmoid(G_x - a).sum() + _log_sigmoid(a - G_y).sum()) / G_y.size)


def _inverse_nu(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    return _right(lm_x, ln_x, lm_y, ln_y, 1.0 / nu)  # nu read as T_d / T_n


def _clip_h(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    return _clipped_h(G_x, G_y, math.log(nu), nu, 1e-12)


def _clip_z(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    return _clipped_z(G_x, G_y, math.log(nu), nu, 500.0)


def _log10(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    return _right(lm_x, ln_x, lm_y, ln_y, nu) / math.log(10)


def _roles_swapped(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float((_log_sigmoid(a - G_x).sum() + _log_sigmoid(G_y - a).sum()) / G_x.size)


def _nu_on_data(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float(nu * _log_sigmoid(G_x - a).mean() + _log_sigmoid(a - G_y).mean())


def _noise_by_nu(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float(_log_sigmoid(G_x - a).mean() + _log_sigmoid(a - G_y).mean() / nu)


def _log_nu_plus_1(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    return _shifted(G_x, G_y, math.log(nu + 1), nu)


def _noise_subtracted(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float(_log_sigmoid(G_x - a).mean() - nu * _log_sigmoid(a - G_y).mean())


def _noise_sum(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float(_log_sigmoid(G_x - a).mean() + _log_sigmoid(a - G_y).sum())


def _log_t_n(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    return _shifted(G_x, G_y, math.log(G_y.size), nu)


def _log2(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    return _right(lm_x, ln_x, lm_y, ln_y, nu) / math.log(2)


def _clip_h_1e6(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    return _clipped_h(G_x, G_y, math.log(nu), nu, 1e-6)


def _clip_z_10(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    return _clipped_z(G_x, G_y, math.log(nu), nu, 10.0)


def _right(lm_x, ln_x, lm_y, ln_y, nu=1.0):
    G_x, G_y = _parts(lm_x, ln_x, lm_y, ln_y)
    a = math.log(nu)
    return float(_log_sigmoid(G_x - a).mean() + nu * _log_sigmoid(a - G_y).mean())


def nce_objective_mistakes() -> dict[str, Callable]:
    r"""Twenty-seven deliberately wrong NCE objectives, one per usual mistake.

    Each has the exercise's signature ``(lm_x, ln_x, lm_y, ln_y, nu=1.0) -> float`` and is
    right except for one thing:

    - ``"log nu left out"``: the posterior :math:`\sigma(G)` instead of
      :math:`\sigma(G - \log\nu)`;
    - ``"log nu with the wrong sign"``: :math:`\sigma(G + \log\nu)`;
    - ``"noise term not weighted by nu"``: the mean over noise samples without the
      factor :math:`\nu`;
    - ``"log h for the noise"``: :math:`\log h(y)` instead of :math:`\log(1 - h(y))`;
    - ``"G swapped"``: :math:`G = \log p_n - \log p_m`;
    - ``"sign inside logaddexp flipped"``: ``-np.logaddexp(0, z)`` for :math:`\log\sigma(z)`,
      which is :math:`\log\sigma(-z)` (at :math:`\nu = 1` the same value as ``"G swapped"``);
    - ``"mean over all samples"``: divides by :math:`T_d + T_n` instead of :math:`T_d`;
    - ``"returns minus J"``: the loss instead of the objective;
    - ``"log of a computed sigma"``: overflows or takes :math:`\log 0` for large
      :math:`|G|`;
    - ``"sigma as exp(G) / (exp(G) + nu)"``: the posterior written with the densities
      themselves, which gives ``inf / inf = NaN`` for large :math:`G`;
    - ``"per-sample output"``: returns the :math:`T_d + T_n` terms;
    - ``"J / 2, the 2010 normalisation"``: the sum divided by :math:`2 T_d`, Gutmann &
      Hyvärinen's (2010) :math:`1/(2T)` at :math:`\nu = 1` (there the same value as
      ``"mean over all samples"``);
    - ``"divided by T_n"``: the sum divided by the number of noise samples;
    - ``"1/nu in place of nu"``: :math:`\nu` read as :math:`T_d / T_n`, in the posterior
      and in the weight of the noise term;
    - ``"h clipped to [1e-12, 1 - 1e-12]"`` and ``"z clipped to [-500, 500]"``: finite, but
      wrong where :math:`|G|` is large;
    - ``"log10"``: the objective in base-10 logarithms;
    - ``"data and noise swapped"``: :math:`\log(1 - h)` at the data and :math:`\log h` at
      the noise (the same value as ``"sign inside logaddexp flipped"``, and the same hint);
    - ``"nu on the data term"``: :math:`\nu` weights the data term instead of the noise term;
    - ``"noise term weighted by 1/nu"``: the posterior right, the noise term divided by
      :math:`\nu`;
    - ``"log(nu + 1) for log nu"``: :math:`\sigma(G - \log(\nu + 1))` and its complement;
    - ``"noise term subtracted"``: :math:`J` with a minus before the noise term;
    - ``"log2"``: the objective in base-2 logarithms;
    - ``"mean over data, sum over noise"``: the noise term summed, not averaged;
    - ``"log T_n for log nu"``: :math:`\log T_n` in place of :math:`\log\nu`;
    - ``"h clipped to [1e-6, 1 - 1e-6]"`` and ``"z clipped to [-10, 10]"``: clipping with
      bounds the checker does not list; the moderate cases pass and the hint says clipping.

    Returns
    -------
    dict of str to callable
        Name of the mistake to the function that makes it.

    Examples
    --------
    >>> import numpy as np
    >>> wrong = nce_objective_mistakes()["log nu left out"]
    >>> z = np.zeros(2)
    >>> round(wrong(z, z, z, z, nu=1.0), 6)  # right when nu = 1: log nu = 0
    -1.386294
    """
    return {
        "log nu left out": _no_log_nu,
        "log nu with the wrong sign": _log_nu_sign,
        "noise term not weighted by nu": _no_nu_weight,
        "log h for the noise": _noise_log_h,
        "G swapped": _g_swapped,
        "sign inside logaddexp flipped": _inner_sign,
        "mean over all samples": _pooled_mean,
        "returns minus J": _minus_j,
        "log of a computed sigma": _log_of_sigma,
        "sigma as exp(G) / (exp(G) + nu)": _exp_ratio,
        "per-sample output": _per_sample,
        "J / 2, the 2010 normalisation": _half_j,
        "divided by T_n": _by_t_n,
        "1/nu in place of nu": _inverse_nu,
        "h clipped to [1e-12, 1 - 1e-12]": _clip_h,
        "z clipped to [-500, 500]": _clip_z,
        "log10": _log10,
        "data and noise swapped": _roles_swapped,
        "nu on the data term": _nu_on_data,
        "noise term weighted by 1/nu": _noise_by_nu,
        "log(nu + 1) for log nu": _log_nu_plus_1,
        "noise term subtracted": _noise_subtracted,
        "log2": _log2,
        "mean over data, sum over noise": _noise_sum,
        "log T_n for log nu": _log_t_n,
        "h clipped to [1e-6, 1 - 1e-6]": _clip_h_1e6,
        "z clipped to [-10, 10]": _clip_z_10,
    }
