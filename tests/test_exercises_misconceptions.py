"""Tests for infonce_lib.exercises.misconceptions: the warped-density checker."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from infonce_lib.exercises import misconceptions as ex


def reader_density(u, v, sigma):
    # scipy's normal log density at the cube roots, plus log |d cbrt(v)/dv| per pixel
    x, y = np.cbrt(u), np.cbrt(v)
    jac = -np.log(3.0 * np.abs(y) ** 2)
    return np.sum(norm.logpdf(y, loc=x, scale=sigma) + jac, axis=1)


def reader_density_by_hand(u, v, sigma):
    # the cube root through |.| ** (1/3) with its sign, the density written out, and the
    # Jacobian as the log of 1 / (3 |v|^(2/3))
    x = np.sign(u) * np.abs(u) ** (1 / 3)
    y = np.sign(v) * np.abs(v) ** (1 / 3)
    d = u.shape[1]
    gauss = -0.5 * np.sum(((y - x) / sigma) ** 2, axis=1) - d * np.log(sigma * np.sqrt(2 * np.pi))
    return gauss + np.sum(np.log(1 / (3 * np.abs(v) ** (2 / 3))), axis=1)


def reader_density_float32(u, v, sigma):
    # a careful single-precision version: float32 arrays throughout, log|v| written out
    u32, v32, s32 = np.float32(u), np.float32(v), np.float32(sigma)
    x, y = np.cbrt(u32), np.cbrt(v32)
    d = u32.shape[1]
    const = np.float32(-d / 2) * np.log(np.float32(2 * np.pi) * s32 * s32)
    gauss = -np.sum(np.square(y - x), axis=1) / (np.float32(2) * s32 * s32) + const
    jac = -np.sum(np.log(np.float32(3)) + np.float32(2 / 3) * np.log(np.abs(v32)), axis=1)
    out = gauss + jac
    assert out.dtype == np.float32
    return out


def reader_density_float32_scipy(u, v, sigma):
    # float32 cube roots and scipy's normal log density, the Jacobian as -log(3 y^2)
    x, y = np.cbrt(np.float32(u)), np.cbrt(np.float32(v))
    jac = -np.log(np.float32(3) * y * y)
    return np.sum(norm.logpdf(y, loc=x, scale=np.float32(sigma)).astype(np.float32) + jac, axis=1)


@pytest.mark.parametrize(
    "fn",
    [reader_density, reader_density_by_hand, reader_density_float32, reader_density_float32_scipy],
)
def test_right_answers_pass(fn, capsys):
    assert ex.check_warped_log_density(fn) is True
    assert "All cases pass." in capsys.readouterr().out


def test_the_right_answer_is_a_density_of_v():
    # one pixel: integrate p(v | u) over v (split at 0, where |v|^(-2/3) is integrable)
    right = ex.warped_density_mistakes()["right"]
    u, sigma = 0.7**3, 0.5

    def p(v):
        return math.exp(right(np.array([[u]]), np.array([[v]]), sigma)[0])

    total = quad(p, -np.inf, 0.0)[0] + quad(p, 0.0, np.inf)[0]
    assert abs(total - 1) < 1e-7
    no_jac = ex.warped_density_mistakes()["no jacobian"]

    def q(v):
        return math.exp(no_jac(np.array([[u]]), np.array([[v]]), sigma)[0])

    assert abs(quad(q, -np.inf, 0.0)[0] + quad(q, 0.0, np.inf)[0] - 1) > 0.1


# Each mistake, the first case that must catch it, and words its hint must contain.
HINTS = {
    "no jacobian": ("one pair, d = 2, positive", "Jacobian is missing"),
    "jacobian sign": ("one pair, d = 2, positive", "wrong sign"),
    "jacobian of u": ("one pair, d = 2, positive", "taken at u"),
    "no cube roots": ("one pair, d = 2, positive", "Gaussian density evaluated at u and v"),
    "no constant": ("one pair, d = 2, positive", "normalising constant"),
    "no log 3": ("one pair, d = 2, positive", "misses -log 3"),
    "cubed again": ("one pair, d = 2, positive", "cubes u and v again"),
    "power one third": ("a negative patch, positive view", "u ** (1/3) of a negative"),
    "log without abs": ("a positive patch, negative view", "needs log|v|, not log v"),
    "jacobian at v": ("one pair, d = 2, positive", "taken at v instead of"),
    "jacobian of u and v": ("one pair, d = 2, positive", "Jacobian of u as well"),
    "jacobian over the batch": ("8 pairs, d = 5", "summed over the whole array"),
    "log 3 once": ("one pair, d = 2, positive", "-log 3 appears once per pair"),
    "sigma as variance": ("one pair, d = 2, positive", "used as the variance"),
    "constant without square": ("one pair, d = 2, positive", "instead of log(2 pi sigma^2)"),
    "constant once": ("one pair, d = 2, positive", "appears once per pair"),
    "mean over pixels": ("one pair, d = 2, positive", "averages over the pixels"),
    "jacobian exponent 1/3": ("one pair, d = 2, positive", "has the exponent 1/3"),
    "plus log 3": ("one pair, d = 2, positive", "has +log 3"),
    "no 2 in the exponent": ("one pair, d = 2, positive", "missing its 2"),
    "constant without sigma": ("one pair, d = 2, positive", "without sigma"),
    "log10 in the jacobian": ("one pair, d = 2, positive", "uses log10"),
    "jacobian in y": ("one pair, d = 2, positive", "-(2/3) log|y| with y = cbrt(v)"),
}


def _failures(out: str) -> list[str]:
    joined = " ".join(line.strip() for line in out.splitlines())
    return [r for r in joined.replace("FAIL  ", "\nFAIL  ").splitlines() if r.startswith("FAIL")]


def test_every_mistake_is_listed():
    assert set(ex.warped_density_mistakes()) == {"right", *HINTS}


@pytest.mark.parametrize("key", sorted(HINTS))
def test_each_mistake_is_named(key, capsys):
    assert ex.check_warped_log_density(ex.warped_density_mistakes()[key]) is False
    case, words = HINTS[key]
    first = _failures(capsys.readouterr().out)[0]
    assert first.startswith(f"FAIL  {case}:"), first
    assert words in first


def reader_power(u, v, sigma):
    # what a reader writes first: real powers, which NumPy makes NaN below 0
    x, y = u ** (1 / 3), v ** (1 / 3)
    d = u.shape[1]
    gauss = -np.sum((y - x) ** 2, axis=1) / (2 * sigma**2) - d / 2 * np.log(2 * np.pi * sigma**2)
    return gauss - np.sum(np.log(3 * y**2), axis=1)


def reader_log_v(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    d = u.shape[1]
    gauss = -np.sum((y - x) ** 2, axis=1) / (2 * sigma**2) - d / 2 * np.log(2 * np.pi * sigma**2)
    return gauss - np.sum(np.log(3) + 2 / 3 * np.log(v), axis=1)


def reader_sign_abs_power(u, v, sigma):
    # the cube root right through sign and |.|, the Jacobian as a real power of v
    x, y = (np.sign(t) * np.abs(t) ** (1 / 3) for t in (u, v))
    d = u.shape[1]
    gauss = -np.sum((y - x) ** 2, axis=1) / (2 * sigma**2) - d / 2 * np.log(2 * np.pi * sigma**2)
    return gauss + np.sum(np.log(v ** (-2 / 3) / 3), axis=1)


@pytest.mark.parametrize(
    ("fn", "key"),
    [
        (reader_power, "power one third"),
        (reader_log_v, "log without abs"),
        (reader_sign_abs_power, "log without abs"),
    ],
)
def test_a_readers_nan_gets_the_hint_that_names_it(fn, key, capsys):
    with np.errstate(invalid="ignore"):
        assert ex.check_warped_log_density(fn) is False
    case, words = HINTS[key]
    first = _failures(capsys.readouterr().out)[0]
    assert first.startswith(f"FAIL  {case}:") and "got nan" in first, first
    assert words in first


def test_the_hint_says_whether_infonce_notices(capsys):
    ex.check_warped_log_density(ex.warped_density_mistakes()["jacobian of u"])
    assert "InfoNCE does notice" in capsys.readouterr().out
    ex.check_warped_log_density(ex.warped_density_mistakes()["no jacobian"])
    assert "InfoNCE would not notice" in capsys.readouterr().out


def test_starter_and_shape(capsys):
    def starter(u, v, sigma):
        raise NotImplementedError

    assert ex.check_warped_log_density(starter) is False
    assert "Not attempted yet" in capsys.readouterr().out

    def total(u, v, sigma):
        return float(np.sum(reader_density(u, v, sigma)))

    assert ex.check_warped_log_density(total) is False
    assert "one value per pair" in capsys.readouterr().out


# The mistakes as a reader writes them (not the library's list), each with the case that
# must catch it first and words of the hint that names it.
def _gauss(x, y, sigma, *, var=None, const=None, reduce=np.sum):
    var = sigma**2 if var is None else var
    d = x.shape[1]
    const = -d / 2 * np.log(2 * np.pi * sigma**2) if const is None else const
    return -reduce((y - x) ** 2, axis=1) / (2 * var) + const


def reader_jacobian_at_v(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    return _gauss(x, y, sigma) - np.sum(np.log(3 * v**2), axis=1)  # 3 t^2 at t = v


def reader_both_jacobians(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    jac = -np.sum(np.log(3 * y**2), axis=1) - np.sum(np.log(3 * x**2), axis=1)
    return _gauss(x, y, sigma) + jac


def reader_batch_jacobian(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    return _gauss(x, y, sigma) - np.sum(np.log(3 * y**2))  # no axis: one total


def reader_log3_once(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    return _gauss(x, y, sigma) - np.log(3) - np.sum(2 / 3 * np.log(np.abs(v)), axis=1)


def reader_sigma_variance(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    d = u.shape[1]
    gauss = _gauss(x, y, sigma, var=sigma, const=-d / 2 * np.log(2 * np.pi * sigma))
    return gauss - np.sum(np.log(3 * y**2), axis=1)


def reader_constant_no_square(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    const = -u.shape[1] / 2 * np.log(2 * np.pi * sigma)
    return _gauss(x, y, sigma, const=const) - np.sum(np.log(3 * y**2), axis=1)


def reader_constant_once(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    const = -0.5 * np.log(2 * np.pi * sigma**2)
    return _gauss(x, y, sigma, const=const) - np.sum(np.log(3 * y**2), axis=1)


def reader_mean_pixels(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    per_pixel = -((y - x) ** 2) / (2 * sigma**2) - 0.5 * np.log(2 * np.pi * sigma**2)
    return np.mean(per_pixel - np.log(3 * y**2), axis=1)


def reader_exponent_third(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    return _gauss(x, y, sigma) - np.sum(np.log(3) + np.log(np.abs(v)) / 3, axis=1)


def reader_plus_log3(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    return _gauss(x, y, sigma) + np.sum(np.log(3) - 2 / 3 * np.log(np.abs(v)), axis=1)


def reader_no_two(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    return _gauss(x, y, sigma, var=sigma**2 / 2) - np.sum(np.log(3 * y**2), axis=1)


def reader_constant_no_sigma(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    const = -u.shape[1] / 2 * np.log(2 * np.pi)
    return _gauss(x, y, sigma, const=const) - np.sum(np.log(3 * y**2), axis=1)


def reader_log10_jacobian(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    return _gauss(x, y, sigma) - np.sum(np.log10(3 * y**2), axis=1)


def reader_jacobian_in_y(u, v, sigma):
    x, y = np.cbrt(u), np.cbrt(v)
    return _gauss(x, y, sigma) - np.sum(np.log(3) + 2 / 3 * np.log(np.abs(y)), axis=1)


READERS = {
    reader_exponent_third: "jacobian exponent 1/3",
    reader_plus_log3: "plus log 3",
    reader_no_two: "no 2 in the exponent",
    reader_constant_no_sigma: "constant without sigma",
    reader_log10_jacobian: "log10 in the jacobian",
    reader_jacobian_in_y: "jacobian in y",
    reader_jacobian_at_v: "jacobian at v",
    reader_both_jacobians: "jacobian of u and v",
    reader_batch_jacobian: "jacobian over the batch",
    reader_log3_once: "log 3 once",
    reader_sigma_variance: "sigma as variance",
    reader_constant_no_square: "constant without square",
    reader_constant_once: "constant once",
    reader_mean_pixels: "mean over pixels",
}


@pytest.mark.parametrize("fn", list(READERS), ids=lambda f: f.__name__)
def test_a_readers_mistake_gets_the_hint_that_names_it(fn, capsys):
    assert ex.check_warped_log_density(fn) is False
    case, words = HINTS[READERS[fn]]
    first = _failures(capsys.readouterr().out)[0]
    assert first.startswith(f"FAIL  {case}:"), first
    assert words in " ".join(first.split())


def test_known_values_differ_on_every_case():
    # every mistake is told apart from the right answer and from every other mistake
    # on the first case that catches it
    mistakes = ex.warped_density_mistakes()
    rng = np.random.default_rng(5)
    x = rng.normal(size=(8, 5))
    u, v = x**3, (x + 0.6 * rng.normal(size=(8, 5))) ** 3
    values = {k: f(u, v, 0.6) for k, f in mistakes.items() if "abs" not in k and "power" not in k}
    keys = sorted(values)
    for i, a in enumerate(keys):
        for b in keys[:i]:
            assert not np.allclose(values[a], values[b], rtol=1e-5, atol=1e-5), (a, b)
