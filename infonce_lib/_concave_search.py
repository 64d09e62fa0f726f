r"""A safeguarded Newton search for the maximiser of a concave function on an interval.

For :func:`~infonce_lib.best_temperature`: the mean InfoNCE bound of fixed scores is concave
in the inverse temperature :math:`\beta` (chapter 6), and its value, slope and curvature cost
one pass over the scores together, so Newton's method on the slope converges in a few passes
where a derivative-free search (Brent's) needs about twice as many of the value alone.
"""

from __future__ import annotations

import math


def _geometric_middle(a: float, b: float) -> float:
    """``sqrt(a b)``, also where ``a b`` leaves float64 (betas near 1e308 or 1e-308)."""
    p = a * b
    return math.sqrt(p) if 1e-300 < p < 1e300 else math.sqrt(a) * math.sqrt(b)


def _newton_search(evaluate, lo: float, hi: float, x: float, rtol: float):
    """Maximise a concave function on ``[lo, hi]`` from its value, slope and curvature.

    ``evaluate(b)`` returns ``(value, slope, curvature)``, curvature ``<= 0``. The slope's
    root is kept in a bracket ``[a, b]`` (slope > 0 at ``a``, < 0 at ``b``; the ends of the
    interval until evaluated). The next point is the Newton step in ``beta`` where the slope
    is positive and in ``log beta`` where it is negative (on these objectives each stays on
    its side of the root and lands near it), unless that step leaves the bracket or is not
    half the step taken two evaluations before (progress too slow, as in safeguarded Newton
    root finders): then an end of the interval, if the step points beyond it and it is not
    yet evaluated, or else the geometric middle of the bracket. Stops at the evaluated point
    whose Newton step is at most ``rtol * beta`` (convergence is quadratic: the point is
    then about that close to the maximiser), at an end of the interval where the slope
    points outwards, or when the bracket is narrower than ``rtol``. A point where the slope
    and the curvature are both exactly 0 (the bound flat to the last bit, as when every
    positive wins and the weights have saturated) sends the search to the upper end.

    Returns ``(beta, value at beta, number of evaluations)``.
    """
    a, b = lo, hi
    done = {lo: False, hi: False}  # the ends of the interval: evaluated yet?
    taken = []  # |log(next / x)| of every step taken
    n = 0
    while True:
        value, g, h = evaluate(x)
        n += 1
        done[x] = True
        if g == 0.0 and h == 0.0 and not done[hi]:
            # Flat to the last bit: the softmax weights have saturated (every positive
            # wins, so the slope tends to 0 from above and has underflowed) or the
            # function is constant. Either way nothing to the right is lower: the
            # maximiser on the interval is its upper end.
            x = hi
            continue
        if g == 0.0 or (x == hi and g >= 0.0) or (x == lo and g <= 0.0):
            return x, value, n
        if g > 0.0:
            a = x
            step = -g / h if h < 0.0 else math.inf  # a slope that does not fall: go right
        else:
            b = x
            step = x * math.expm1(-g / (x * h + g))  # Newton in log beta: a factor >= 1/e
        if abs(step) <= rtol * x or b <= a * (1.0 + rtol):
            return x, value, n
        new = x + step
        slow = len(taken) >= 2 and abs(math.log1p(step / x)) > 0.5 * taken[-2]
        if a < new < b and not slow:
            nxt = new
        elif new >= b and b == hi and not done[hi]:
            nxt = hi
        elif new <= a and a == lo and not done[lo]:
            nxt = lo
        else:
            nxt = _geometric_middle(a, b)
        taken.append(abs(math.log(nxt / x)))
        x = nxt
