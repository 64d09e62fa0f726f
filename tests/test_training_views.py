"""Tests for infonce_lib.training.views: each view does what it says, draws only from the
generator it is given, and refuses bad input by name."""

from __future__ import annotations

import numpy as np
import pytest

import infonce_lib as il

IMG = np.arange(1.0, 65.0)  # an 8 x 8 image whose pixels are all different


def _shift_reference(image: np.ndarray, dy: int, dx: int, side: int = 8) -> np.ndarray:
    """The image moved down by dy and right by dx, pixel by pixel in Python."""
    out = np.zeros(side * side)
    for r in range(side):
        for c in range(side):
            rs, cs = r - dy, c - dx
            if 0 <= rs < side and 0 <= cs < side:
                out[r * side + c] = image[rs * side + cs]
    return out


def test_shift_gives_exactly_the_shifted_images_all_shifts_alike():
    X = np.tile(IMG, (3000, 1))
    out = il.shift_images(X, 1, seed=0)
    candidates = {(dy, dx): _shift_reference(IMG, dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)}
    seen = {key: 0 for key in candidates}
    for row in out:
        (match,) = [key for key, ref in candidates.items() if np.array_equal(row, ref)]
        seen[match] += 1
    counts = np.array(list(seen.values()))
    # Each of the 9 shifts about 3000/9 = 333 times (3 SD of a binomial is about 50).
    assert counts.min() > 280 and counts.max() < 390


def test_shift_by_two_and_a_3d_stack():
    X = np.tile(IMG, (2, 400, 1))
    out = il.shift_images(X, 2, seed=1)
    assert out.shape == X.shape
    refs = [_shift_reference(IMG, dy, dx) for dy in range(-2, 3) for dx in range(-2, 3)]
    assert all(any(np.array_equal(row, ref) for ref in refs) for row in out.reshape(-1, 64))
    assert np.array_equal(il.shift_images(X, 0, seed=5), X)


def test_erase_sets_one_square_inside_the_image_to_zero():
    out = il.erase_patches(np.tile(IMG, (500, 1)), 3, seed=0)
    corners = set()
    for row in out:
        zero = (row == 0).reshape(8, 8)
        r, c = np.nonzero(zero)
        assert zero.sum() == 9 and r.max() - r.min() == 2 and c.max() - c.min() == 2
        corners.add((r.min(), c.min()))
    assert len(corners) == 36  # every one of the (8 - 3 + 1)^2 positions occurs
    assert np.array_equal(il.erase_patches(IMG[None], 0, seed=0), IMG[None])
    assert (il.erase_patches(IMG[None], 8, seed=0) == 0).all()


def test_drop_and_noise_have_the_stated_distribution():
    ones = np.ones((400, 64))
    dropped = il.drop_pixels(ones, 0.2, seed=0)
    assert set(np.unique(dropped)) == {0.0, 1.0}
    share = (dropped == 0).mean()  # 25,600 pixels: SD of the share about 0.0025
    assert abs(share - 0.2) < 0.01
    assert (il.drop_pixels(ones, 0.0, seed=0) == 1).all()
    assert (il.drop_pixels(ones, 1.0, seed=0) == 0).all()
    noisy = il.add_pixel_noise(ones, 0.3, seed=0) - 1
    assert abs(noisy.mean()) < 0.01 and abs(noisy.std() / 0.3 - 1) < 0.02
    assert np.array_equal(il.add_pixel_noise(ones, 0.0, seed=0), ones)


def test_each_call_draws_only_from_its_generator():
    X = np.tile(IMG, (10, 1))
    recipe = il.ViewRecipe(shift=1, erase=2, dropout=0.3, noise=0.1)
    a = il.make_views(X, recipe, seed=7)
    b = il.make_views(X, recipe, seed=np.random.default_rng(7))
    assert np.array_equal(a, b)
    # The global NumPy state plays no part.
    np.random.seed(0)  # noqa: NPY002 (the legacy global state, on purpose)
    c = il.make_views(X, recipe, seed=7)
    np.random.seed(1)  # noqa: NPY002
    assert np.array_equal(c, il.make_views(X, recipe, seed=7))
    # One generator called twice gives two different views: a positive pair.
    rng = np.random.default_rng(3)
    first, second = il.make_views(X, recipe, seed=rng), il.make_views(X, recipe, seed=rng)
    assert not np.array_equal(first, second)


def test_make_views_applies_the_steps_in_order_from_one_generator():
    X = np.tile(IMG, (20, 1))
    recipe = il.ViewRecipe(shift=1, erase=2, dropout=0.25, noise=0.05)
    rng = np.random.default_rng(11)
    by_hand = il.shift_images(X, 1, seed=rng)
    by_hand = il.erase_patches(by_hand, 2, seed=rng)
    by_hand = il.drop_pixels(by_hand, 0.25, seed=rng)
    by_hand = il.add_pixel_noise(by_hand, 0.05, seed=rng)
    assert np.array_equal(il.make_views(X, recipe, seed=11), by_hand)
    assert np.array_equal(il.make_views(X, il.ViewRecipe(), seed=0), X)  # identity, a copy
    assert il.make_views(X, il.ViewRecipe(), seed=0) is not X


def test_inputs_are_not_modified():
    X = np.tile(IMG, (5, 1))
    before = X.copy()
    il.make_views(X, il.ViewRecipe(shift=1, erase=2, dropout=0.5, noise=0.1), seed=0)
    assert np.array_equal(X, before)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: il.shift_images(np.ones((2, 63)), 1, seed=0), "side \\* side"),
        (lambda: il.shift_images(np.ones(64), 1, seed=0), "images must be 2-D or 3-D"),
        (lambda: il.shift_images(np.ones((2, 64)), 8, seed=0), "max_shift must be below"),
        (lambda: il.shift_images(np.ones((2, 64)), -1, seed=0), "max_shift must be >= 0"),
        (lambda: il.erase_patches(np.ones((2, 64)), 9, seed=0), "size must be at most"),
        (lambda: il.drop_pixels(np.ones((2, 64)), 1.5, seed=0), "rate must lie in"),
        (lambda: il.add_pixel_noise(np.ones((2, 64)), -0.1, seed=0), "sigma must be >= 0"),
        (lambda: il.make_views(np.ones((2, 64)), {"shift": 1}, seed=0), "recipe must be"),
        (lambda: il.ViewRecipe(dropout=2.0), "dropout must lie in"),
        (lambda: il.ViewRecipe(shift=1.5), "shift must be an integer"),
        (lambda: il.shift_images(np.ones((2, 64)), 1, seed=None), "seed must be"),
    ],
)
def test_bad_input_is_refused_by_name(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


def test_overflowing_noise_is_refused():
    with pytest.raises(ValueError, match="sigma"):
        il.add_pixel_noise(np.full((2, 64), 1.7e308), 1e308, seed=0)
