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


def test_right_answer_passes(capsys):
    assert ex.check_warped_log_density(reader_density) is True
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


HINTS = {
    "no jacobian": "Jacobian is missing",
    "jacobian sign": "wrong sign",
    "jacobian of u": "taken at u",
    "no cube roots": "Gaussian density evaluated at u and v",
    "no constant": "normalising constant",
    "no log 3": "misses -log 3",
}


@pytest.mark.parametrize("key", sorted(HINTS))
def test_each_mistake_is_named(key, capsys):
    assert ex.check_warped_log_density(ex.warped_density_mistakes()[key]) is False
    out = " ".join(line.strip() for line in capsys.readouterr().out.splitlines())
    assert HINTS[key] in out
    assert "see the hints above" not in out


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
