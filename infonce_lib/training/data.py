r"""The handwritten digits of chapter 8: 1,797 images of 8 x 8 pixels, their labels, a fixed split.

The data are the test set of Alpaydin & Kaynak's *Optical Recognition of Handwritten Digits*
(UCI Machine Learning Repository, 1998; CC BY 4.0): each digit was written on a form, its
32 x 32 bitmap cut into 4 x 4 blocks, and the "on" pixels of each block counted, so every
pixel is a grey level from 0 to 16. They ship with the package (``training/data/digits.csv.gz``,
57 KB, with its source and licence in ``training/data/README.md``), so nothing is downloaded,
in a notebook or in the browser.

The split is fixed and uses no random numbers: in each class, every third image in file
order (the first, the fourth, ...) is a test image and the others are training images, 602
and 1,195 images. The contrastive encoders of chapter 8 train on the training images without
their labels; the probes fit on training labels and are scored on the test images, and the
held-out bounds are computed on the test images.
"""

from __future__ import annotations

import functools
import gzip
from dataclasses import dataclass
from importlib import resources

import numpy as np

__all__ = ["Digits", "load_digits"]

_FILE = "digits.csv.gz"
#: Pixels per image (8 x 8), grey levels per pixel (0 to 16), classes (0 to 9).
_PIXELS, _LEVELS, _CLASSES = 64, 16, 10
#: Every ``_TEST_EVERY``-th image of each class, in file order, is a test image.
_TEST_EVERY = 3


@dataclass(frozen=True)
class Digits:
    """The digits and their split, as :func:`load_digits` returns them (arrays read-only).

    Attributes
    ----------
    images : numpy.ndarray, shape (1797, 64), float64
        Each row an 8 x 8 image read row by row, grey levels divided by 16: values in
        ``{0, 1/16, ..., 1}``.
    labels : numpy.ndarray, shape (1797,), numpy.intp
        The digit of each image, 0 to 9, in the platform's index integer (int64; int32 in
        the browser's Python, where ``np.bincount`` refuses int64).
    train_index, test_index : numpy.ndarray of numpy.intp
        The rows of the training images (1,195) and of the test images (602), increasing;
        together every row once.

    Examples
    --------
    >>> d = load_digits()
    >>> d.x_train.shape, d.x_test.shape, int(d.y_test[0])
    ((1195, 64), (602, 64), 0)
    """

    images: np.ndarray
    labels: np.ndarray
    train_index: np.ndarray
    test_index: np.ndarray

    @property
    def x_train(self) -> np.ndarray:
        """The training images, shape (1195, 64)."""
        return self.images[self.train_index]

    @property
    def y_train(self) -> np.ndarray:
        """The labels of the training images, shape (1195,)."""
        return self.labels[self.train_index]

    @property
    def x_test(self) -> np.ndarray:
        """The test images, shape (602, 64)."""
        return self.images[self.test_index]

    @property
    def y_test(self) -> np.ndarray:
        """The labels of the test images, shape (602,)."""
        return self.labels[self.test_index]


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _read_table() -> np.ndarray:
    """The file as an intp array of shape (1797, 65): 64 grey levels, then the label."""
    with resources.files(__package__).joinpath("data", _FILE).open("rb") as raw:
        text = gzip.decompress(raw.read()).decode("ascii")
    rows = text.split()
    return np.array([row.split(",") for row in rows], dtype=np.intp)


@functools.lru_cache(maxsize=1)
def load_digits() -> Digits:
    r"""The 1,797 handwritten digits shipped with the library, with the book's fixed split.

    Reads ``infonce_lib/training/data/digits.csv.gz`` (no network), divides the grey levels
    (0 to 16) by 16, and splits each class by file order: images 0, 3, 6, ... of the class
    are test images, the rest training images. The data are Alpaydin & Kaynak's (1998), from
    the UCI Machine Learning Repository, under CC BY 4.0 (see the module's docstring).

    Returns
    -------
    Digits
        The images, labels and the two index arrays, all read-only; the same object on every
        call (cached).

    Examples
    --------
    >>> d = load_digits()
    >>> d.images.shape, d.images.max(), np.bincount(d.labels).tolist()
    ((1797, 64), np.float64(1.0), [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])
    >>> len(d.train_index), len(d.test_index)
    (1195, 602)
    """
    table = _read_table()
    images = table[:, :_PIXELS] / float(_LEVELS)
    labels = table[:, _PIXELS].copy()
    test = np.sort(
        np.concatenate([np.flatnonzero(labels == c)[::_TEST_EVERY] for c in range(_CLASSES)])
    )
    train = np.setdiff1d(np.arange(labels.size), test)
    return Digits(
        images=_read_only(images),
        labels=_read_only(labels),
        train_index=_read_only(train.astype(np.intp)),
        test_index=_read_only(test.astype(np.intp)),
    )
