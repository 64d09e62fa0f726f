"""Input validation shared by every public function of :mod:`infonce_lib`.

Every public function checks its arguments here, at the boundary, so that bad input fails
early with a message that names the argument and says what was expected. Internal helpers
then work on clean ``float64`` arrays and never re-check. Every entry point below that takes
a caller's value applies :func:`check_array_type` (the policy for masked arrays, PyTorch
tensors and ``numpy.matrix``) before anything else looks at it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

__all__: list[str] = []  # private module


def check_array_type(value, name: str) -> None:
    """Apply the library's one policy for array-like objects that are not plain arrays.

    * ``numpy.ma.MaskedArray``: refused with a ``TypeError``. No function of the library
      honours a mask, and silently computing with the hidden values (or dropping them)
      would give a different answer than the caller meant; the message says to pass
      ``value.filled(x)`` (the masked entries replaced by ``x``) or ``value.compressed()``
      (the unmasked entries, flattened).
    * A PyTorch tensor (recognised by its class's module, so ``torch`` is never imported):
      refused with a ``TypeError`` that says to pass ``value.detach().cpu().numpy()``.
      Converting it here would break the autograd graph of a tensor that requires grad,
      or copy from a GPU, without the caller asking for it.
    * ``numpy.matrix`` and other ``ndarray`` subclasses: accepted, and treated as the plain
      ``ndarray`` with the same shape and values (a matrix is 2-D), so that ``*`` and ``@``
      inside the library keep their array meaning.

    Raises
    ------
    TypeError
        For a masked array or a PyTorch tensor, naming the argument.
    """
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(
            f"{name} is a numpy.ma.MaskedArray; masks are not supported. Pass "
            f"{name}.filled(value) to replace the masked entries, or {name}.compressed() "
            f"for the unmasked entries only (a 1-D array)"
        )
    module = type(value).__module__
    if module == "torch" or module.startswith("torch."):
        raise TypeError(
            f"{name} is a PyTorch tensor ({type(value).__name__}); pass a NumPy array: "
            f"{name}.detach().cpu().numpy()"
        )


def as_array(value, name: str) -> np.ndarray:
    """``value`` as a plain ``numpy.ndarray`` (any dtype), under :func:`check_array_type`.

    A plain ndarray is returned as it is; an ``ndarray`` subclass (``numpy.matrix``) as a
    plain ndarray view of the same data; anything else through ``numpy.asarray``.

    Raises
    ------
    TypeError
        For a masked array or a PyTorch tensor (see :func:`check_array_type`).
    ValueError
        If nested sequences are ragged.
    """
    if type(value) is np.ndarray:
        return value
    check_array_type(value, name)
    try:
        return np.asarray(value)  # an ndarray subclass becomes a plain ndarray
    except ValueError as exc:  # ragged nesting: "inhomogeneous shape"
        raise ValueError(
            f"{name} must be a rectangular array of real numbers; got ragged nested "
            f"sequences ({exc})"
        ) from None


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
    contiguous is returned without a copy. Array subclasses follow
    :func:`check_array_type`: ``numpy.matrix`` is taken as a 2-D array, masked arrays and
    PyTorch tensors are refused.

    Raises
    ------
    TypeError
        If the values are not real numbers (strings, complex, objects, booleans), or
        ``value`` is a masked array or a PyTorch tensor.
    ValueError
        If the nesting is ragged, the number of dimensions is wrong, the array is empty
        (unless ``allow_empty``), or an entry is NaN or infinite.
    """
    arr = as_array(value, name)
    kind = arr.dtype.kind
    if kind not in "iuf":
        if kind == "b":
            raise TypeError(f"{name} must hold real numbers, not booleans (dtype {arr.dtype})")
        if kind == "c":
            raise TypeError(f"{name} must hold real numbers; got complex dtype {arr.dtype}")
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
    if kind != "f" or arr.dtype != np.float64:
        arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise ValueError(f"{name} must be finite; it has {n_nan} NaN and {n_inf} infinite entries")
    return arr


def as_bool(value, name: str) -> bool:
    """``value`` as a Python bool: only ``True``, ``False`` and NumPy booleans are accepted.

    Strings (``"False"`` is truthy), numbers, ``None`` and arrays are refused, so that a
    misspelt option cannot silently mean ``True``.

    Raises
    ------
    TypeError
        If ``value`` is not a Python or NumPy boolean, naming the argument.
    """
    if value is True or value is False:
        return value
    check_array_type(value, name)
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"{name} must be True or False (a bool); got {type(value).__name__} {value!r}")


def as_real_scalar(value, name: str) -> float:
    """Return ``value`` as a finite Python float, or raise a clear error.

    Accepts Python and NumPy real numbers and 0-d arrays, not booleans.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (a PyTorch tensor gets the hint of
        :func:`check_array_type`).
    ValueError
        If ``value`` is NaN or infinite.
    """
    if type(value) is float:  # the common case, without the checks below
        out = value
    else:
        check_array_type(value, name)
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
    if type(value) is not int:
        check_array_type(value, name)
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
    check_array_type(seed, name)
    if seed is None or isinstance(seed, bool | np.bool_) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"{name} must be an int >= 0 or a numpy.random.Generator (explicit, for "
            f"reproducibility); got {type(seed).__name__} {seed!r}"
        )
    return np.random.default_rng(as_int(seed, name, minimum=0))


def as_sequence(value, name: str) -> tuple:
    """``value`` as a tuple, or a ``TypeError`` naming the argument if it is not a sequence.

    Lists, tuples and 1-D arrays are accepted; strings, scalars, None, mappings and arrays of
    another number of dimensions are not. Arrays follow :func:`check_array_type` first (a
    masked array is refused before its masked entries could become None; a
    ``numpy.matrix`` is a 2-D array, so refused).
    """
    check_array_type(value, name)
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise TypeError(
                f"{name} must be a sequence (a list, tuple or 1-D array); got a "
                f"{value.ndim}-D array of shape {value.shape}"
            )
        return tuple(value.tolist())
    if not isinstance(value, list | tuple | range):
        raise TypeError(f"{name} must be a sequence (a list or tuple); got {type(value).__name__}")
    return tuple(value)


def as_options(value, name: str = "options") -> dict:
    """A dict of options (``None`` gives an empty dict), or a ``TypeError`` naming the argument."""
    if value is None:
        return {}
    check_array_type(value, name)
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
    """Raise ``ValueError`` if an intermediate result overflowed its dtype (float64, or
    float32 for a float32 array).

    Used after products such as ``Z1 @ Z2.T / temperature`` whose inputs were finite but
    whose result may not be representable (computed under ``numpy.errstate`` so that the
    overflow itself does not warn). ``what`` names the quantity and the arguments it
    comes from; ``hint`` says what to change.
    """
    if not np.isfinite(values).all():
        if getattr(values, "dtype", None) == np.float32:
            raise ValueError(f"{what} overflowed float32 (entries beyond ±3.4e38); {hint}")
        raise ValueError(f"{what} overflowed float64 (entries beyond ±1.8e308); {hint}")
    return values


def as_name_subset(values, name: str, allowed: tuple[str, ...]) -> set[str]:
    """``values`` (a list or tuple of names, non-empty, each in ``allowed``) as a set, or a
    ``TypeError``/``ValueError`` naming ``name``."""
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise TypeError(f"{name} must be a list or tuple of names from {allowed}; got {values!r}")
    if not values or any(v not in allowed for v in values):
        raise ValueError(f"{name} must be a non-empty subset of {allowed}; got {tuple(values)!r}")
    return set(values)
