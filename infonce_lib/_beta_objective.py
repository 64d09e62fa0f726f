"""The fast evaluation of InfoNCE of fixed cosines as a function of beta = 1/tau (private).

:class:`_BetaObjective` is the engine behind :func:`~infonce_lib.infonce_at_beta`,
:func:`~infonce_lib.infonce_beta_derivatives`, :func:`~infonce_lib.best_temperature` and
:func:`~infonce_lib.tau_scaled_loss` (and the cosine tables of the patch experiments): the
scores shifted by their row maxima once, then one exponential per score and evaluation, in
cache-sized chunks, with every result remembered by its ``beta``. The mathematics is in
those functions' docstrings; this module only makes it fast.
"""

from __future__ import annotations

import math

import numpy as np

from .core import _safe_mean

# exp(x) is exactly 0 in float64 below about -745.13: _BetaObjective sets such arguments to
# -inf, whose exp is the same 0 but quicker.
_EXP_ZERO = -746.0


class _BetaObjective:
    """Batch values of InfoNCE for the critic ``beta * S``, for many ``beta``, fast.

    Every evaluation works on ``D = S - max_j S`` (so ``D <= 0`` and the row maximum of
    ``beta * D`` is 0 for every ``beta > 0``): one multiply, one ``exp`` and one sum (a BLAS
    matrix-vector product), in cache-sized chunks of scratch buffers, so no array of the
    size of ``S`` is ever allocated. With ``overwrite=True``, ``S`` itself becomes ``D``
    once (cheaper when many ``beta`` are evaluated); otherwise each chunk of ``D`` is formed
    in a buffer and ``S`` is left alone. Both give the same numbers, bit for bit.

    The ``exp`` is nearly all the cost, so every result is remembered by its ``beta``: the
    batch values (from :meth:`batch_values_many` or :meth:`derivatives`, which give the same
    bits) and the derivatives. Asking again for a ``beta`` already evaluated costs nothing.
    """

    _CHUNK = 1 << 18  # doubles per chunk (2 MiB): about a core's L2 cache

    def __init__(self, S: np.ndarray, *, overwrite: bool = False) -> None:
        B, K, _ = S.shape
        self.K = K
        self.B = B
        idx = np.arange(K)
        row_max = S.max(axis=-1)  # (B, K)
        self.pos = S[:, idx, idx] - row_max  # (B, K), <= 0
        if overwrite:
            np.subtract(S, row_max[..., None], out=S)
            self.shift = None
        else:
            self.shift = row_max.reshape(B * K)
        self.D = S.reshape(B * K, K)  # S itself: shifted already, or chunk by chunk
        rows = max(1, self._CHUNK // K)
        self.rows = rows
        n = min(rows, B * K)
        self.buf = np.empty((n, K))
        self.mask = np.empty((n, K), dtype=bool)
        self.work = np.empty((n, K)) if overwrite else None  # allocated on first need
        self.shifted = None if overwrite else np.empty((n, K))
        self._values: dict[float, np.ndarray] = {}  # beta -> batch values (B,)
        self._derivs: dict[float, tuple] = {}  # beta -> (value, first, second), each (B,)

    def _exp(self, buf: np.ndarray, spread: float) -> None:
        """``exp`` in place of a chunk of arguments in ``[-spread, 0]`` (up to round-off).

        When some of them may lie below ``_EXP_ZERO`` (whose ``exp`` is 0 in float64) they
        are set to ``-inf`` first: the same zeros, but glibc's ``exp`` takes a slow path for
        an underflow, about 2.5 times as long. Call under ``errstate(under="ignore")``.
        """
        if spread > -_EXP_ZERO / 1.01:  # cosines may exceed [-1, 1] by round-off
            mask = self.mask[: buf.shape[0]]
            np.less(buf, _EXP_ZERO, out=mask)
            np.copyto(buf, -np.inf, where=mask)
        np.exp(buf, out=buf)

    def _chunks(self, stop: int | None = None):
        """``(start, stop, D[start:stop])``, the shifted rows (the first ``stop``), by chunks."""
        n = self.D.shape[0] if stop is None else stop
        for start in range(0, n, self.rows):
            block = self.D[start : min(start + self.rows, n)]
            stop = start + block.shape[0]
            if self.shift is not None:
                out = self.shifted[: block.shape[0]]
                np.subtract(block, self.shift[start:stop, None], out=out)
                block = out
            yield start, stop, block

    def batch_values(self, beta: float) -> np.ndarray:
        """Batch values at one ``beta``: shape (B,)."""
        return self.batch_values_many([beta])[0]

    def batch_values_many(self, betas) -> np.ndarray:
        """Batch values at several ``beta`` in one pass over ``D``: shape (len(betas), B)."""
        betas = [float(b) for b in betas]
        new = list(dict.fromkeys(b for b in betas if b not in self._values))
        if new:
            for beta, values in zip(new, self._evaluate_many(new), strict=True):
                self._values[beta] = values
        return np.array([self._values[b] for b in betas]).reshape(len(betas), self.B)

    def _evaluate_many(self, betas: list) -> np.ndarray:
        """The batch values at ``betas``, computed (nothing remembered)."""
        den = np.empty((len(betas), self.D.shape[0]))
        ones = np.ones(self.K)
        for start, stop, block in self._chunks():  # read once, reused for every beta
            buf = self.buf[: stop - start]
            for q, beta in enumerate(betas):
                with np.errstate(over="ignore", under="ignore"):
                    np.multiply(block, beta, out=buf)  # -inf only if beta * 2 overflows
                    self._exp(buf, 2.0 * beta)
                np.matmul(buf, ones, out=den[q, start:stop])
        np.log(den, out=den)
        with np.errstate(over="ignore"):  # beta * pos = -inf beyond float64: see _batch_means
            terms = np.multiply.outer(betas, self.pos.reshape(-1))
        terms -= den
        return self._batch_means(terms, betas, den)

    def _batch_means(self, terms: np.ndarray, betas, log_den: np.ndarray) -> np.ndarray:
        """``log K`` plus each batch's mean of the terms ``beta * pos - log_den`` (each of
        shape (len(betas), B * K)): the plain mean where finite; where a term or the sum
        left float64, ``beta * mean(pos) - mean(log_den)`` (``mean(pos)`` in [-2, 0]),
        finite wherever the bound is, else below -1.8e308 (callers raise)."""
        shape = (len(betas), self.B, self.K)
        with np.errstate(over="ignore"):
            out = math.log(self.K) + terms.reshape(shape).mean(axis=-1)
            if not np.isfinite(out).all():
                alt = np.multiply.outer(betas, self.pos.mean(-1)) - log_den.reshape(shape).mean(-1)
                out = np.where(np.isfinite(out), out, math.log(self.K) + alt)
        return out

    def derivatives(self, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Batch values and their first and second derivatives in ``beta``: each (B,).

        Per row, with ``p = softmax(beta * D)``: the first derivative is ``D_ii - sum p D``,
        the second ``-sum p (D - m)^2`` with ``m = sum p D`` (centred, so exactly ``<= 0``).
        ``D`` differs from ``S`` by a constant per row, which changes neither.
        """
        beta = float(beta)
        if beta not in self._derivs:
            value, first, second, log_den = self._row_derivatives(beta)
            bk = (self.B, self.K)
            value = self._batch_means(value[None], [beta], log_den[None])[0]
            self._derivs[beta] = (value, first.reshape(bk).mean(-1), second.reshape(bk).mean(-1))
            self._values.setdefault(beta, value)
        return tuple(a.copy() for a in self._derivs[beta])

    def mean_derivatives(self, beta: float, rows: int) -> tuple[float, float, float]:
        """Means over the first ``rows`` rows of the value and its two derivatives (a cheap
        estimate from part of the batches; nothing remembered)."""
        value, first, second, _ = self._row_derivatives(float(beta), rows)
        return math.log(self.K) + _safe_mean(value), float(first.mean()), float(second.mean())

    def _row_derivatives(self, beta: float, rows: int | None = None):
        """Per row (the first ``rows``): ``beta D_ii - log sum e^(beta D)``, the first and the
        second derivative in ``beta``, and ``log sum e^(beta D)``; each of shape (rows,)."""
        n = self.D.shape[0] if rows is None else rows
        K = self.K
        den, mean, var = np.empty(n), np.empty(n), np.empty(n)
        ones = np.ones(K)
        if self.work is None:
            self.work = np.empty_like(self.buf)
        for start, stop, block in self._chunks(n):
            w = self.buf[: stop - start]
            c = self.work[: stop - start]
            with np.errstate(over="ignore", under="ignore"):
                np.multiply(block, beta, out=w)
                self._exp(w, 2.0 * beta)  # in [0, 1]; each row's maximum gives exactly 1
            np.matmul(w, ones, out=den[start:stop])  # >= 1
            np.multiply(w, block, out=c)
            np.matmul(c, ones, out=mean[start:stop])
            mean[start:stop] /= den[start:stop]  # E_p[D], in [-2, 0]
            np.subtract(block, mean[start:stop, None], out=c)
            np.square(c, out=c)
            c *= w
            np.matmul(c, ones, out=var[start:stop])
            var[start:stop] /= den[start:stop]  # a sum of non-negative terms: >= 0
        pos = self.pos.reshape(-1)[:n]
        log_den = np.log(den)
        with np.errstate(over="ignore"):
            value = beta * pos - log_den
        return value, pos - mean, -var, log_den

    def log_denominators_at_tau(self, tau: float) -> np.ndarray:
        """``log sum_j exp(D_ij / tau)`` per row, shape (B, K), each in ``[0, log K]``.

        Divides by ``tau`` (never multiplies by ``1/tau``, which is infinite for subnormal
        ``tau``: ``0 * inf`` would be NaN). This is ``scipy.special.logsumexp`` of
        ``S / tau`` minus the row maximum, without its own max pass: each sum is at least 1
        and no term exceeds 1.
        """
        out = np.empty(self.D.shape[0])
        ones = np.ones(self.K)
        for start, stop, block in self._chunks():
            buf = self.buf[: stop - start]
            with np.errstate(over="ignore", under="ignore"):
                np.divide(block, tau, out=buf)  # -inf where the ratio leaves float64
                self._exp(buf, 2.0 / tau)
            np.matmul(buf, ones, out=out[start:stop])
        return np.log(out, out=out).reshape(self.B, self.K)
