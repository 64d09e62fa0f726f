"""Matrix products that stay fast in the browser.

NumPy in the browser (Pyodide) is built without BLAS and multiplies matrices in a plain loop,
while SciPy there ships one: a 128 x 128 Gram matrix of 24,000 rows takes 7 s through NumPy
and about 0.3 s through SciPy's ``dgemm``. :func:`product` is ``A @ B``, taken through SciPy's
BLAS only where NumPy has none; everywhere else it is NumPy's product, so results on a
reader's machine do not depend on it. Only the few large products of the library use it.
"""

from __future__ import annotations

import sys

import numpy as np

NUMPY_WITHOUT_BLAS = sys.platform == "emscripten"


def product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A @ B``; through SciPy's BLAS where NumPy has none, for 2-D float64 operands (any
    other operands get NumPy's product everywhere, so shapes and dtypes never differ)."""
    if not (
        NUMPY_WITHOUT_BLAS
        and A.ndim == B.ndim == 2
        and A.dtype == B.dtype == np.float64
        and A.size
        and B.size
    ):
        return A @ B
    from scipy.linalg.blas import dgemm  # imported on first use (package docstring)

    # BLAS reads column-major arrays: a row-major operand goes in as its transpose with the
    # transpose flag set, so neither is copied.
    a, trans_a = (A.T, 1) if A.flags.c_contiguous else (A, 0)
    b, trans_b = (B.T, 1) if B.flags.c_contiguous else (B, 0)
    return dgemm(1.0, a, b, trans_a=trans_a, trans_b=trans_b)
