"""infonce_lib._blas.product: NumPy's ``A @ B``, or SciPy's BLAS in the browser (forced here)."""

from __future__ import annotations

import numpy as np
import pytest

from infonce_lib import _blas


@pytest.mark.parametrize("la", ["C", "F", "view"])
@pytest.mark.parametrize("lb", ["C", "F", "view"])
def test_dgemm_route_equals_numpys_product_for_every_layout(browser_route, la, lb):
    rng = np.random.default_rng(0)
    big_a, big_b = rng.normal(size=(14, 10)), rng.normal(size=(12, 16))
    layouts_a = {"C": big_a[:7, :5].copy(), "view": big_a[::2, ::2]}  # (7, 5)
    layouts_b = {"C": big_b[:5, :3].copy(), "view": big_b[:10:2, ::5][:, :3]}  # (5, 3)
    layouts_a["F"] = np.asfortranarray(layouts_a["C"])
    layouts_b["F"] = np.asfortranarray(layouts_b["C"])
    A, B = layouts_a[la], layouts_b[lb]
    got = _blas.product(A, B)
    assert len(browser_route) == 1
    assert got.shape == (7, 3) and got.dtype == np.float64
    np.testing.assert_allclose(got, A @ B, rtol=1e-13, atol=1e-15)


def test_contiguous_operands_reach_blas_without_a_copy(browser_route):
    # Row-major operands go in transposed with BLAS's transpose flag, column-major ones as
    # they are: dgemm gets column-major arrays, which it reads in place.
    x = np.random.default_rng(1).normal(size=(500, 6))
    C = np.random.default_rng(2).normal(size=(6, 4))
    np.testing.assert_allclose(_blas.product(x.T, x), x.T @ x, rtol=1e-13)  # a Gram matrix
    np.testing.assert_allclose(_blas.product(x, C), x @ C, rtol=1e-13)  # two row-major
    assert browser_route == [True, True]


@pytest.mark.parametrize(
    "A, B",
    [
        (np.ones((3, 2), np.float32), np.ones((2, 4), np.float32)),  # float32 stays float32
        (np.ones((3, 2), dtype=int), np.ones((2, 4), dtype=int)),  # integers stay integers
        (np.ones((3, 2)), np.ones(2)),  # a vector stays a vector
        (np.ones((0, 2)), np.ones((2, 4))),  # empty
    ],
)
def test_other_operands_get_numpys_product_in_the_browser_too(browser_route, A, B):
    got = _blas.product(A, B)
    want = A @ B
    assert browser_route == []
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_natively_it_is_numpys_product(monkeypatch):
    monkeypatch.setattr(_blas, "NUMPY_WITHOUT_BLAS", False)
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(9, 4)), rng.normal(size=(4, 5))
    np.testing.assert_array_equal(_blas.product(A, B), A @ B)
