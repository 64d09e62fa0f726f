"""Input validation shared by every public function of :mod:`infonce_lib`.

Every public function checks its arguments here, at the boundary, so that bad input fails
early with a message that names the argument and says what was expected. Internal helpers
then work on clean ``float64`` arrays and never re-check.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

__all__: list[str] = []  # private module


def as_real_array(
    value,
    name: str,
    *,
    ndim: int | tuple[int, ...] | None = None,
    allow_empty: bool = False,
) -> np.ndarray:
    """Return ``value`` as a finite ``float64`` array, or raise a clear error.

    Accepts NumPy arrays of any real dtype (bool excluded), nested lists and tuples of
    numbers, and scalars when ``ndim`` allows 0. A ``float64`` array that is already
    contiguous is returned without a copy.

    Raises
    ------
    TypeError
        If the values are not real numbers (strings, complex, objects, booleans).
    ValueError
        If the nesting is ragged, the number of dimensions is wrong, the array is empty
        (unless ``allow_empty``), or an entry is NaN or infinite.
    """
    if isinstance(value, np.ndarray):
        arr = value
    else:
        try:
            arr = np.asarray(value)
        except ValueError as exc:  # ragged nesting: "inhomogeneous shape"
            raise ValueError(
                f"{name} must be a rectangular array of real numbers; got ragged nested "
                f"sequences ({exc})"
            ) from None
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError(f"{name} must hold real numbers, not booleans (dtype {arr.dtype})")
    if kind == "c":
        raise TypeError(f"{name} must hold real numbers; got complex dtype {arr.dtype}")
    if kind not in "iuf":
        raise TypeError(
            f"{name} must hold real numbers; got dtype {arr.dtype} (from {type(value).__name__})"
        )
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"{name} must be {want}; got shape {arr.shape} ({arr.ndim}-D)")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty; got shape {arr.shape}")
    arr = np.asarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise ValueError(f"{name} must be finite; it has {n_nan} NaN and {n_inf} infinite entries")
    return arr


def as_real_scalar(value, name: str) -> float:
    """Return ``value`` as a finite Python float, or raise a clear error.

    Accepts Python and NumPy real numbers and 0-d arrays, not booleans.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN or infinite.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} {value!r}")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite; got {out}")
    return out


def as_positive_scalar(value, name: str, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a finite positive Python float, or raise a clear error.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (strings, None, booleans, complex, arrays with
        more than one element).
    ValueError
        If ``value`` is NaN, infinite, or not positive (``> 0``, or ``>= 0`` when
        ``allow_zero``).
    """
    out = as_real_scalar(value, name)
    if out < 0 or (out == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}; got {out}")
    return out


def as_int(value, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as a Python int, or raise a clear error.

    Accepts Python and NumPy integers (not booleans, not floats).
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__} {value!r}")
    out = int(value)
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {out}")
    return out


def as_generator(seed, name: str = "seed") -> np.random.Generator:
    """An explicit ``int`` seed (``>= 0``) or ``numpy.random.Generator``, as a Generator.

    ``None`` (fresh entropy), booleans, floats and strings are refused with a ``TypeError``
    naming the argument: every random draw in the library must be reproducible.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, bool | np.bool_) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"{name} must be an int >= 0 or a numpy.random.Generator (explicit, for "
            f"reproducibility); got {type(seed).__name__} {seed!r}"
        )
    return np.random.default_rng(as_int(seed, name, minimum=0))


def as_sequence(value, name: str) -> tuple:
    """``value`` as a tuple, or a ``TypeError`` naming the argument if it is not a sequence.

    Lists, tuples and 1-D arrays are accepted; strings, scalars, None and mappings are not.
    """
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return tuple(value.tolist())
    if not isinstance(value, list | tuple | range):
        raise TypeError(f"{name} must be a sequence (a list or tuple); got {type(value).__name__}")
    return tuple(value)


def as_options(value, name: str = "options") -> dict:
    """A dict of options (``None`` gives an empty dict), or a ``TypeError`` naming the argument."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a dict of options or None; got {type(value).__name__}")
    return dict(value)


def check_same_shape(a: np.ndarray, a_name: str, b: np.ndarray, b_name: str) -> None:
    """Raise ``ValueError`` unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise ValueError(
            f"{a_name} and {b_name} must have the same shape; got {a.shape} and {b.shape}"
        )


def finite_or_raise(
    values, what: str, hint: str = "rescale the inputs or use a larger temperature"
) -> np.ndarray:
    """Raise ``ValueError`` if an intermediate result overflowed float64.

    Used after products such as ``Z1 @ Z2.T / temperature`` whose inputs were finite but
    whose result may not be representable (computed under ``numpy.errstate`` so that the
    overflow itself does not warn). ``what`` names the quantity and the arguments it
    comes from; ``hint`` says what to change.
    """
    if not np.isfinite(values).all():
        raise ValueError(f"{what} overflowed float64 (entries beyond ±1.8e308); {hint}")
    return values
