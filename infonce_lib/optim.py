r"""Adam, the optimiser that trains the critics of the bound family.

Kingma & Ba (2015), Algorithm 1, for *minimising* an objective :math:`J(\theta)` with
gradient :math:`g_t`:

.. math::

    m_t = \beta_1 m_{t-1} + (1 - \beta_1) g_t, \qquad
    v_t = \beta_2 v_{t-1} + (1 - \beta_2) g_t^2,

.. math::

    \theta_t = \theta_{t-1} - \eta\, \frac{m_t / (1 - \beta_1^t)}
    {\sqrt{v_t / (1 - \beta_2^t)} + \epsilon} .

To maximise a bound, pass the negative of its gradient.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_positive_scalar, as_real_array, as_real_scalar, check_array_type

__all__ = ["Adam"]

#: Elements per block of an update (512 KB of float64 per array).
_BLOCK = 1 << 16


class Adam:
    r"""Adam on a list of parameter arrays, updated in place.

    Parameters
    ----------
    params : list of numpy.ndarray
        Float64 or float32 arrays (e.g. a critic's ``flat``); :meth:`step` modifies them in
        place, element by element (a ``numpy.matrix`` too; a masked array is refused, since
        the update would ignore its mask). The moment estimates are kept in each
        parameter's dtype, and its gradients are used in that dtype: float32 parameters
        train in float32, as in a deep learning library (where the second moment of a
        gradient beyond about 1e19 overflows to inf and, as beyond 1e154 in float64, stops
        that parameter's updates).
    lr : float, default 1e-3
        The step size :math:`\eta > 0`.
    betas : (float, float), default (0.9, 0.999)
        Decay rates :math:`\beta_1, \beta_2 \in [0, 1)`.
    eps : float, default 1e-8
        :math:`\epsilon > 0`, added to the root of the second moment.

    Raises
    ------
    TypeError, ValueError
        If a parameter is not a float64 or float32 array (or is a masked array), or a
        hyperparameter is out of range.

    Examples
    --------
    Minimise :math:`(\theta - 3)^2` from 0:

    >>> theta = np.zeros(1)
    >>> opt = Adam([theta], lr=0.1)
    >>> for _ in range(500):
    ...     opt.step([2.0 * (theta - 3.0)])
    >>> np.round(theta, 3)
    array([3.])
    """

    def __init__(self, params, *, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        if not isinstance(params, list | tuple) or not params:
            raise TypeError("params must be a non-empty list of float64 or float32 arrays")
        for i, p in enumerate(params):
            check_array_type(p, f"params[{i}]")  # a masked array: refused, its mask ignored
            if not isinstance(p, np.ndarray) or p.dtype not in (np.float64, np.float32):
                raise TypeError(
                    f"params[{i}] must be a float64 or float32 numpy array (updated in place); "
                    f"got {getattr(p, 'dtype', type(p).__name__)}"
                )
        self.params = list(params)
        self.lr = as_positive_scalar(lr, "lr")
        if not isinstance(betas, list | tuple) or len(betas) != 2:
            raise TypeError(f"betas must be a pair (beta1, beta2); got {betas!r}")
        b1, b2 = (as_real_scalar(b, "betas") for b in betas)
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ValueError(f"betas must lie in [0, 1); got {betas!r}")
        self.beta1, self.beta2 = b1, b2
        self.eps = as_positive_scalar(eps, "eps")
        self.t = 0
        self._m = [np.zeros_like(p) for p in self.params]
        self._v = [np.zeros_like(p) for p in self.params]
        # Two scratch arrays per parameter, kept: a fresh pair at every step would make a
        # large model's training loop map new memory (and fault on it) at every step.
        self._scratch = [(np.empty_like(p), np.empty_like(p)) for p in self.params]

    def step(self, grads) -> None:
        r"""One update :math:`\theta \leftarrow \theta - \eta \hat m / (\sqrt{\hat v} + \epsilon)`.

        Parameters
        ----------
        grads : list of array_like
            One gradient per parameter, same shapes, finite; used in the parameter's dtype.

        Raises
        ------
        TypeError, ValueError
            If the gradients do not match the parameters, are not finite, or do not fit a
            float32 parameter's range.
        """
        if not isinstance(grads, list | tuple) or len(grads) != len(self.params):
            raise TypeError(f"grads must be a list of {len(self.params)} arrays, one per parameter")
        self.t += 1
        c1 = 1.0 - self.beta1**self.t
        c2 = 1.0 - self.beta2**self.t
        step = self.lr * math.sqrt(c2) / c1
        eps = self.eps * math.sqrt(c2)
        state = zip(self.params, grads, self._m, self._v, self._scratch, strict=True)
        for i, (p, g, m, v, (a, c)) in enumerate(state):
            g = self._gradient(g, p, f"grads[{i}]")
            # The same operations, in the same order, as m = b1 m + (1 - b1) g,
            # v = b2 v + (1 - b2) g g and p -= step m / (sqrt(v) + eps), in two scratch
            # arrays; a large contiguous parameter block by block, so that each block's
            # arrays stay in the processor's cache across the nine operations (they are
            # elementwise: the result is the same).
            # (plain ndarray views: a numpy.matrix would multiply in place through np.dot)
            arrays = tuple(np.asarray(x) for x in (p, g, m, v, a, c))
            if p.size <= _BLOCK or not all(
                type(x) is np.ndarray and x.flags.c_contiguous for x in arrays
            ):
                self._update(*arrays, step, eps)
                continue
            for s in range(0, p.size, _BLOCK):
                self._update(*(x.reshape(-1)[s : s + _BLOCK] for x in arrays), step, eps)

    def _update(self, p, g, m, v, a, c, step: float, eps: float) -> None:
        with np.errstate(over="ignore"):  # v = inf (g near 1e154+) only stops the step
            m *= self.beta1
            m += np.multiply(1.0 - self.beta1, g, out=a)
            v *= self.beta2
            np.multiply(1.0 - self.beta2, g, out=a)
            v += np.multiply(a, g, out=a)
            np.sqrt(v, out=a)
            a += eps
            p -= np.divide(np.multiply(step, m, out=c), a, out=a)

    @staticmethod
    def _gradient(g, p: np.ndarray, name: str) -> np.ndarray:
        """``g`` checked (finite, non-empty, the shape of ``p``) and in the dtype of ``p``."""
        ready = type(g) is np.ndarray and g.dtype == p.dtype and g.size and np.isfinite(g).all()
        if not ready:  # the general check (its errors name NaN, inf and empty arrays)
            g = as_real_array(g, name, ndim=p.ndim)
            top, big = float(np.abs(g).max()), float(np.finfo(p.dtype).max)
            if top > big:
                raise ValueError(
                    f"{name} must fit the {p.dtype} of its parameter (|g| <= {big:.9g}); got "
                    f"entries up to {top:.9g}"
                )
            g = g.astype(p.dtype, copy=False)
        if g.shape != p.shape:
            raise ValueError(f"{name} must have shape {p.shape}; got {g.shape}")
        return g
