r"""Two repairs of the Donsker–Varadhan estimate: MINE's gradient and SMILE's clipping.

The DV estimate of a batch (:func:`~infonce_lib.dv_bound`),
:math:`\frac1K \sum_i F_{ii} - \log \frac{1}{K(K-1)} \sum_{i \ne j} e^{F_{ij}}`,
has two known defects when a critic is trained on it:

- its gradient is biased, because the logarithm of a batch mean is not the logarithm of
  the expectation. Belghazi et al. (2018, section 3.2) replace the batch mean in the
  denominator of the gradient by an exponential moving average over the batches seen so
  far: that is MINE (:class:`MineGradient`);
- its variance grows with :math:`e^{I}`, carried by the rare large values of
  :math:`e^{f}`. Song & Ermon (2020, section 5) clip :math:`e^{f}` to
  :math:`[e^{-\tau}, e^{\tau}]` inside the logarithm: that is SMILE
  (:func:`smile_bound`), whose critic they train on the Jensen–Shannon objective
  (:func:`~infonce_lib.js_objective`).

Scores follow the book's convention: ``F`` of shape ``(B, K, K)``, ``F[b, i, j] =
f(x_j, y_i)``, positives on the diagonal.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_positive_scalar, as_real_scalar, finite_or_raise
from .bounds import _RESCALE, _check_scores, _lse, _off_diagonal, _positive_mean

__all__ = ["MineGradient", "smile_bound"]


def smile_bound(scores, tau: float = 5.0) -> np.ndarray:
    r"""The SMILE estimate of :math:`I(X; Y)`: DV with :math:`e^{f}` clipped, per batch.

    Song & Ermon (2020, section 5, "SMILE"):

    .. math::

        I_{\mathrm{SMILE}}^{(b)} = \frac1K \sum_i F_{bii}
        - \log \frac{1}{K(K-1)} \sum_{i \ne j}
        \operatorname{clip}\!\left(e^{F_{bij}}, e^{-\tau}, e^{\tau}\right),

    i.e. the second term of :func:`~infonce_lib.dv_bound` computed on the scores clipped
    to :math:`[-\tau, \tau]` (the first term is not clipped). Clipping bounds the
    variance of the second term by a function of :math:`\tau`; the price is a bias when
    the critic's :math:`e^{f}` leaves the interval (at the optimum, when
    :math:`I` is large compared with :math:`\tau`). As :math:`\tau \to \infty` it is DV.
    Song & Ermon train the critic on the Jensen–Shannon objective and report this value.

    Parameters
    ----------
    scores : array_like, shape (B, K, K)
        ``scores[b, i, j] = f(x_j, y_i)``, ``K >= 2``. Not modified.
    tau : float, default 5.0
        The clipping threshold :math:`\tau > 0`, finite (Song & Ermon report 1, 5 and
        :math:`\infty`, the last being :func:`~infonce_lib.dv_bound`).

    Returns
    -------
    numpy.ndarray, shape (B,)

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a finite 3-D array of square (K, K) batches with ``K >= 2``,
        or ``tau`` is not positive (NaN included); ``ValueError`` if the mean positive
        score is beyond float64.

    Examples
    --------
    >>> F = np.zeros((1, 3, 3))
    >>> F[0, 0, 1] = 50.0   # one huge negative score: DV collapses, SMILE does not
    >>> from infonce_lib import dv_bound
    >>> np.round(dv_bound(F), 2), np.round(smile_bound(F, tau=5.0), 2)
    (array([-48.21]), array([-3.24]))
    """
    F = _check_scores(scores)
    t = as_positive_scalar(tau, "tau")
    K = F.shape[-1]
    joint = _positive_mean(F)
    clipped = np.clip(F, -t, t)
    log_mean = _lse(_off_diagonal(clipped), axis=(1, 2)) - math.log(K * (K - 1))
    return finite_or_raise(joint - log_mean, "the SMILE estimate", _RESCALE)


class MineGradient:
    r"""MINE: the DV estimate with the bias-corrected moving-average gradient.

    Belghazi et al. (2018, section 3.2, Algorithm 1). The gradient of the DV batch value,

    .. math::

        \nabla \frac1K \sum_i F_{ii}
        - \frac{\sum_{i \ne j} e^{F_{ij}} \nabla F_{ij} / (K(K-1))}
               {\frac{1}{K(K-1)} \sum_{i \ne j} e^{F_{ij}}},

    is biased because its denominator is a batch mean. MINE divides instead by an
    exponential moving average :math:`\bar m_t` of the batch means,

    .. math::

        m_t = (1 - r)\, m_{t-1} + r\, \frac{1}{K(K-1)} \sum_{i \ne j} e^{F_{ij}},

        \bar m_t = \frac{m_t}{1 - (1 - r)^t}, \quad m_0 = 0,

    with Adam's correction of the zero start (so :math:`\bar m_1` is the first batch
    mean). The average is kept in log space, so large scores do not overflow. The value
    reported is the DV batch value (:func:`~infonce_lib.dv_bound`); only the gradient
    changes. A stack of ``B`` batches keeps ``B`` independent averages (one per critic).

    Parameters
    ----------
    rate : float, default 0.01
        The weight :math:`r \in (0, 1]` of each new batch (``1``: no averaging, the DV
        gradient itself).

    Attributes
    ----------
    log_average : numpy.ndarray of shape (B,) or None
        :math:`\log m_t` (before the zero-start correction); None before the first call.
    steps : int
        :math:`t`, batches seen.

    Examples
    --------
    >>> from infonce_lib import bound_and_score_grad
    >>> F = np.random.default_rng(0).normal(size=(2, 4, 4))
    >>> mine = MineGradient(rate=0.5)
    >>> v, g = mine(F)           # the first batch: the average is that batch's mean
    >>> v2, g2 = bound_and_score_grad(F, "dv")
    >>> bool(np.allclose(v, v2) and np.allclose(g, g2))
    True
    """

    def __init__(self, rate: float = 0.01):
        r = as_real_scalar(rate, "rate")
        if not 0.0 < r <= 1.0:
            raise ValueError(f"rate must be in (0, 1] (the weight of each new batch); got {r}")
        self.rate = r
        self.log_average = None
        self.steps = 0

    def __call__(self, scores) -> tuple[np.ndarray, np.ndarray]:
        r"""The DV value of each batch and MINE's ascent direction on its scores.

        Parameters
        ----------
        scores : array_like, shape (B, K, K)
            The same ``B`` on every call (one moving average per batch slot).

        Returns
        -------
        values : numpy.ndarray, shape (B,)
            :func:`~infonce_lib.dv_bound` of the batch.
        grad : numpy.ndarray, shape (B, K, K)
            :math:`1/K` on the diagonal and
            :math:`-e^{F_{ij}} / (K(K-1)\, \bar m_t)` off it.

        Raises
        ------
        TypeError, ValueError
            On bad scores (as :func:`~infonce_lib.dv_bound`), or a number of batches that
            differs from the first call's.
        """
        F = _check_scores(scores)
        B, K, _ = F.shape
        if self.log_average is not None and len(self.log_average) != B:
            raise ValueError(
                f"scores must hold {len(self.log_average)} batches, as on the first call (one "
                f"moving average each); got {B}"
            )
        off = _off_diagonal(F)
        log_batch = _lse(off, axis=(1, 2)) - math.log(K * (K - 1))
        joint = _positive_mean(F)
        values = finite_or_raise(joint - log_batch, "the DV estimate", _RESCALE)
        r = self.rate
        new = math.log(r) + log_batch
        if self.log_average is None or r == 1.0:
            self.log_average = new
        else:
            self.log_average = np.logaddexp(math.log1p(-r) + self.log_average, new)
        self.steps += 1
        correction = -math.log1p(-((1.0 - r) ** self.steps)) if r < 1.0 else 0.0
        log_bar = self.log_average + correction
        with np.errstate(over="ignore", under="ignore"):
            grad = -np.exp(off - log_bar[:, None, None]) / (K * (K - 1))
        idx = np.arange(K)
        grad[:, idx, idx] = 1.0 / K
        return values, finite_or_raise(grad, "MINE's gradient", _RESCALE)
