"""Tests for infonce_lib.training.data: the shipped digits are the UCI test set, complete and
intact, and the split is the documented one."""

from __future__ import annotations

import gzip
import hashlib
import tomllib
from pathlib import Path

import numpy as np
import pytest

import infonce_lib as il
from infonce_lib.training import data

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "infonce_lib" / "training" / "data"
SHA256 = "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22"
# The number of test images of each digit 0-9 that the UCI repository documents for
# optdigits.tes (its "Class Distribution"), 1,797 in all.
UCI_TEST_COUNTS = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def _raw() -> np.ndarray:
    """The file parsed independently of the library (NumPy's own CSV reader)."""
    return np.loadtxt(DATA / "digits.csv.gz", delimiter=",", dtype=np.int64)


def test_the_file_is_the_documented_copy():
    assert hashlib.sha256((DATA / "digits.csv.gz").read_bytes()).hexdigest() == SHA256
    readme = (DATA / "README.md").read_text()
    assert SHA256 in readme and "CC BY 4.0" in readme and "10.24432/C50P49" in readme


def test_rows_pixels_labels_and_class_counts():
    table = _raw()
    assert table.shape == (1797, 65)
    pixels, labels = table[:, :64], table[:, 64]
    assert pixels.min() == 0 and pixels.max() == 16  # 17 grey levels, both ends used
    assert set(np.unique(labels)) == set(range(10))
    assert np.bincount(labels).tolist() == UCI_TEST_COUNTS
    # Every image has ink, and no two rows are one image entered twice.
    assert (pixels.sum(axis=1) > 0).all()
    assert np.unique(pixels, axis=0).shape[0] == 1797


def test_load_digits_reads_the_file_exactly():
    d = il.load_digits()
    table = _raw()
    np.testing.assert_array_equal(d.images * 16, table[:, :64])
    np.testing.assert_array_equal(d.labels, table[:, 64])
    assert d.images.dtype == np.float64 and d.labels.dtype == np.intp
    assert il.load_digits() is d  # cached
    for a in (d.images, d.labels, d.train_index, d.test_index):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 0


def test_the_split_is_every_third_image_of_each_class():
    d = il.load_digits()
    assert np.intersect1d(d.train_index, d.test_index).size == 0
    np.testing.assert_array_equal(np.union1d(d.train_index, d.test_index), np.arange(1797))
    assert (np.diff(d.train_index) > 0).all() and (np.diff(d.test_index) > 0).all()
    for c in range(10):
        rows = np.flatnonzero(d.labels == c)
        np.testing.assert_array_equal(np.intersect1d(rows, d.test_index), rows[::3])
        assert np.sum(d.y_test == c) == -(-rows.size // 3)  # ceil(n_c / 3)
    np.testing.assert_array_equal(d.x_train, d.images[d.train_index])
    np.testing.assert_array_equal(d.y_test, d.labels[d.test_index])
    assert (len(d.train_index), len(d.test_index)) == (1195, 602)


def test_the_file_ships_in_the_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    shipped = config["package-data"]["infonce_lib.training"]
    assert "data/digits.csv.gz" in shipped and "data/README.md" in shipped
    # The reader goes through importlib.resources, as an installed wheel needs.
    assert "resources.files" in Path(data.__file__).read_text()


def test_the_gzip_stream_is_complete():
    text = gzip.decompress((DATA / "digits.csv.gz").read_bytes()).decode("ascii")
    assert text.count("\n") == 1797 and text.endswith("\n")
