r"""Views of small images: the random transformations that make a positive pair.

A contrastive encoder learns from pairs of *views* of one image, each drawn by a random
transformation (Chen et al., 2020, section 2.1, call them augmentations). For the 8 x 8
digits of chapter 8 the library has four, each vectorised over a stack of images and each
drawing all its randomness from the one generator it is given (``seed``: an int or a
``numpy.random.Generator``), so that a call is reproducible on its own:

* :func:`shift_images`: translate each image by a random whole number of pixels in each
  direction, at most ``max_shift``; pixels shifted in from outside are 0 (background);
* :func:`erase_patches`: set a random ``size x size`` square of each image to 0 (random
  erasing, in the spirit of Zhong et al., 2020);
* :func:`drop_pixels`: set each pixel to 0 with probability ``rate``, independently;
* :func:`add_pixel_noise`: add Gaussian noise of standard deviation ``sigma`` to each pixel.

:class:`ViewRecipe` names a combination and :func:`make_views` applies it, in that order
(shift, erase, drop, noise), from one generator. Images are rows of ``side * side`` pixels,
read row by row (the digits have ``side = 8``); any square side works.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import (
    as_generator,
    as_int,
    as_positive_scalar,
    as_real_array,
    as_real_scalar,
)

__all__ = [
    "ViewRecipe",
    "add_pixel_noise",
    "drop_pixels",
    "erase_patches",
    "make_views",
    "shift_images",
]


def _images(images, name: str = "images") -> tuple[np.ndarray, int]:
    """``images`` as a float64 array of shape (n, side**2) or (m, n, side**2), and ``side``."""
    X = as_real_array(images, name, ndim=(2, 3), allow_empty=True)
    n_pixels = X.shape[-1]
    side = math.isqrt(n_pixels)
    if n_pixels == 0 or side * side != n_pixels:
        raise ValueError(
            f"{name} must have side * side pixels per row (a square image); got {n_pixels}"
        )
    return X, side


@functools.lru_cache(maxsize=8)
def _shift_table(side: int, max_shift: int) -> np.ndarray:
    """For each shift (dy, dx), the source pixel of every target pixel (``side**2`` = blank).

    Row ``k`` of the table is the shift ``(dy, dx) = divmod(k, 2 m + 1) - (m, m)``: target
    pixel ``(r, c)`` takes source pixel ``(r - dy, c - dx)``, or the blank pixel appended at
    index ``side**2`` when that lies outside the image.
    """
    m = max_shift
    offsets = np.arange(-m, m + 1)
    r = np.arange(side)
    table = []
    for dy in offsets:
        for dx in offsets:
            rs, cs = r - dy, r - dx
            inside = ((rs >= 0) & (rs < side))[:, None] & ((cs >= 0) & (cs < side))[None, :]
            source = rs[:, None] * side + cs[None, :]
            table.append(np.where(inside, source, side * side).ravel())
    out = np.array(table, dtype=np.intp)
    out.setflags(write=False)
    return out


def shift_images(images, max_shift: int = 1, *, seed) -> np.ndarray:
    r"""Translate each image by a random number of whole pixels, filling in with 0.

    Each image gets its own shift :math:`(d_y, d_x)`, both drawn uniformly from
    :math:`\{-m, \dots, m\}` (:math:`(2m + 1)^2` shifts, no shift included): pixel
    :math:`(r, c)` of the view is pixel :math:`(r - d_y, c - d_x)` of the image, or 0 where
    that lies outside it (the digits' background is 0).

    Parameters
    ----------
    images : array_like, shape (n, side * side) or (m, n, side * side)
        Images, one per row, pixels row by row. Not modified.
    max_shift : int, default 1
        :math:`m \ge 0`, the largest shift in each direction, below ``side``.
    seed : int or numpy.random.Generator
        The generator of all the call's draws (one integer per image).

    Returns
    -------
    numpy.ndarray
        The shifted images, float64, same shape.

    Raises
    ------
    TypeError, ValueError
        If ``images`` is not a finite real array whose rows are square images, or
        ``max_shift`` is not an integer in ``[0, side)``, or ``seed`` is not an int >= 0 or a
        Generator.

    Examples
    --------
    >>> x = np.arange(1.0, 10.0)[None]  # one 3 x 3 image: 1 2 3 / 4 5 6 / 7 8 9
    >>> shift_images(x, 0, seed=0)[0].tolist() == x[0].tolist()  # m = 0: no shift
    True
    >>> counts = np.count_nonzero(shift_images(np.tile(x, (200, 1)), 1, seed=1), axis=1)
    >>> sorted(set(counts.tolist()))  # 9 pixels kept, 6 (one side shifted out) or 4 (a corner)
    [4, 6, 9]
    """
    X, side = _images(images)
    m = as_int(max_shift, "max_shift", minimum=0)
    if m >= side:
        raise ValueError(f"max_shift must be below the side of the images ({side}); got {m}")
    return _shift(X, side, m, as_generator(seed))


def _shift(X: np.ndarray, side: int, m: int, rng) -> np.ndarray:
    which = rng.integers(0, (2 * m + 1) ** 2, size=X.shape[:-1])
    padded = np.concatenate([X, np.zeros((*X.shape[:-1], 1), dtype=X.dtype)], axis=-1)
    return np.take_along_axis(padded, _shift_table(side, m)[which], axis=-1)


def erase_patches(images, size: int, *, seed) -> np.ndarray:
    r"""Set a random ``size x size`` square of each image to 0.

    The square lies inside the image; its top-left corner is uniform over the
    :math:`(s - k + 1)^2` positions of an image of side :math:`s` (:math:`k` = ``size``).
    ``size = 0`` erases nothing.

    Parameters
    ----------
    images : array_like, shape (n, side * side) or (m, n, side * side)
        Not modified.
    size : int
        :math:`0 \le k \le` ``side``.
    seed : int or numpy.random.Generator
        The generator of all the call's draws (two integers per image).

    Returns
    -------
    numpy.ndarray
        The images with one square erased each, float64.

    Raises
    ------
    TypeError, ValueError
        As :func:`shift_images`, and if ``size`` is not an integer in ``[0, side]``.

    Examples
    --------
    >>> out = erase_patches(np.ones((5, 64)), 3, seed=0)
    >>> (out == 0).sum(axis=1).tolist()
    [9, 9, 9, 9, 9]
    """
    X, side = _images(images)
    k = as_int(size, "size", minimum=0)
    if k > side:
        raise ValueError(f"size must be at most the side of the images ({side}); got {k}")
    return _erase(X, side, k, as_generator(seed))


def _erase(X: np.ndarray, side: int, k: int, rng) -> np.ndarray:
    corner = rng.integers(0, side - k + 1, size=(*X.shape[:-1], 2))
    r = np.arange(side)
    rows = (r >= corner[..., :1]) & (r < corner[..., :1] + k)  # (..., side)
    cols = (r >= corner[..., 1:]) & (r < corner[..., 1:] + k)
    erased = (rows[..., :, None] & cols[..., None, :]).reshape(X.shape)
    return np.where(erased, 0.0, X)


def drop_pixels(images, rate: float, *, seed) -> np.ndarray:
    r"""Set each pixel to 0 with probability ``rate``, independently.

    Parameters
    ----------
    images : array_like, shape (n, side * side) or (m, n, side * side)
        Not modified.
    rate : float
        The probability :math:`p \in [0, 1]` that a pixel is dropped.
    seed : int or numpy.random.Generator
        The generator of all the call's draws (one uniform number per pixel).

    Returns
    -------
    numpy.ndarray
        The images with their dropped pixels at 0, float64.

    Raises
    ------
    TypeError, ValueError
        As :func:`shift_images`, and if ``rate`` is not a number in ``[0, 1]``.

    Examples
    --------
    >>> out = drop_pixels(np.ones((100, 64)), 0.25, seed=0)
    >>> bool(abs((out == 0).mean() - 0.25) < 0.02)
    True
    """
    X, _ = _images(images)
    p = as_real_scalar(rate, "rate")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"rate must lie in [0, 1]; got {p}")
    return _drop(X, p, as_generator(seed))


def _drop(X: np.ndarray, p: float, rng, dtype=np.float64) -> np.ndarray:
    return X * (rng.random(X.shape, dtype=dtype) >= p)


def add_pixel_noise(images, sigma: float, *, seed) -> np.ndarray:
    r"""Add independent Gaussian noise :math:`\mathcal{N}(0, \sigma^2)` to every pixel.

    Parameters
    ----------
    images : array_like, shape (n, side * side) or (m, n, side * side)
        Not modified.
    sigma : float
        The standard deviation :math:`\sigma \ge 0`, in the units of the pixels (the digits'
        grey levels are in [0, 1]).
    seed : int or numpy.random.Generator
        The generator of all the call's draws (one normal number per pixel).

    Returns
    -------
    numpy.ndarray
        The noisy images, float64 (not clipped).

    Raises
    ------
    TypeError, ValueError
        As :func:`shift_images`, if ``sigma`` is not finite and non-negative, or if the
        noisy pixels overflow float64.

    Examples
    --------
    >>> out = add_pixel_noise(np.zeros((200, 64)), 0.1, seed=0)
    >>> bool(abs(out.std() - 0.1) < 0.005)
    True
    """
    X, _ = _images(images)
    s = as_positive_scalar(sigma, "sigma", allow_zero=True)
    out = _noise(X, s, as_generator(seed))
    if not np.isfinite(out).all():
        raise ValueError(
            "images plus sigma times the noise overflowed float64; use a smaller sigma"
        )
    return out


def _noise(X: np.ndarray, s: float, rng, dtype=np.float64) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return X + dtype(s) * rng.standard_normal(X.shape, dtype=dtype)


@dataclass(frozen=True)
class ViewRecipe:
    r"""How :func:`make_views` draws a view: which transformations, and how strong.

    Applied in this order: a shift of at most ``shift`` pixels (:func:`shift_images`), an
    erased square of side ``erase`` (:func:`erase_patches`), pixels dropped with probability
    ``dropout`` (:func:`drop_pixels`), Gaussian noise of standard deviation ``noise``
    (:func:`add_pixel_noise`). A zero switches a step off; the default recipe is the
    identity. Validated on creation (``TypeError`` or ``ValueError`` naming the field).

    Attributes
    ----------
    shift : int, default 0
        Largest shift in pixels, ``>= 0``.
    erase : int, default 0
        Side of the erased square in pixels, ``>= 0``.
    dropout : float, default 0
        Probability of dropping each pixel, in ``[0, 1]``.
    noise : float, default 0
        Standard deviation of the pixel noise, ``>= 0``.

    Examples
    --------
    >>> ViewRecipe(shift=1, dropout=0.2, noise=0.1)
    ViewRecipe(shift=1, erase=0, dropout=0.2, noise=0.1)
    """

    shift: int = 0
    erase: int = 0
    dropout: float = 0.0
    noise: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "shift", as_int(self.shift, "shift", minimum=0))
        object.__setattr__(self, "erase", as_int(self.erase, "erase", minimum=0))
        p = as_real_scalar(self.dropout, "dropout")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout must lie in [0, 1]; got {p}")
        object.__setattr__(self, "dropout", p)
        object.__setattr__(self, "noise", as_positive_scalar(self.noise, "noise", allow_zero=True))


def make_views(images, recipe: ViewRecipe, *, seed) -> np.ndarray:
    r"""One random view of each image, drawn by ``recipe`` from one generator.

    The steps of :class:`ViewRecipe` that are switched on run in its order (shift, erase,
    drop, noise), each drawing from the same generator in turn, so the view of a call is a
    function of ``seed`` alone. Two calls with two generators (or one generator, called
    twice) give the two views of a positive pair.

    Parameters
    ----------
    images : array_like, shape (n, side * side) or (m, n, side * side)
        Not modified.
    recipe : ViewRecipe
        The transformations and their strengths.
    seed : int or numpy.random.Generator
        The generator of all the call's draws.

    Returns
    -------
    numpy.ndarray
        The views, float64, same shape as ``images``.

    Raises
    ------
    TypeError, ValueError
        If ``recipe`` is not a :class:`ViewRecipe`, or as the steps it uses (a shift or an
        erased square too large for the images, say).

    Examples
    --------
    >>> from infonce_lib import load_digits
    >>> x = load_digits().images[:4]
    >>> a = make_views(x, ViewRecipe(shift=1, noise=0.1), seed=0)
    >>> b = make_views(x, ViewRecipe(shift=1, noise=0.1), seed=0)
    >>> a.shape, bool(np.array_equal(a, b))
    ((4, 64), True)
    """
    X, side = _images(images)
    _check_recipe(recipe, side)
    rng = as_generator(seed)
    out = _views(X, side, recipe, rng)
    if not np.isfinite(out).all():
        raise ValueError("images plus the noise overflowed float64; rescale the images")
    return out


def _check_recipe(recipe, side: int, name: str = "recipe") -> None:
    """Raise unless ``recipe`` is a :class:`ViewRecipe` that fits images of side ``side``."""
    if not isinstance(recipe, ViewRecipe):
        raise TypeError(f"{name} must be a ViewRecipe; got {type(recipe).__name__}")
    if recipe.shift >= side or recipe.erase > side:
        raise ValueError(
            f"{name} does not fit images of side {side}: its shift must be below the side and "
            f"its erased square at most the side; got shift {recipe.shift}, erase {recipe.erase}"
        )


def _views(X: np.ndarray, side: int, recipe: ViewRecipe, rng, dtype=np.float64) -> np.ndarray:
    """The steps of ``recipe`` on valid images, in order, from ``rng`` (no checks here). The
    trainer's float32 steps draw the dropped pixels and the noise in float32 (``dtype``)."""
    if recipe.shift:
        X = _shift(X, side, recipe.shift, rng)
    if recipe.erase:
        X = _erase(X, side, recipe.erase, rng)
    if recipe.dropout:
        X = _drop(X, recipe.dropout, rng, dtype)
    if recipe.noise:
        X = _noise(X, recipe.noise, rng, dtype)
    return X.copy() if not (recipe.shift or recipe.erase or recipe.dropout or recipe.noise) else X
