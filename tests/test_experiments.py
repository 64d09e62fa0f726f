"""The cosine-temperature experiment: the cosine cell of the Gaussian patches, alone.

(The other experiments are tested beside their math modules: tests/test_nce.py,
tests/test_patches.py, tests/test_limits.py; the template by tests/test_layout.py.)"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from infonce_lib import (
    attainable_cosine_cap,
    best_temperature,
    cosine_cap,
    cosine_scores,
    infonce_at_beta,
    infonce_beta_derivatives,
    patch_level_pairs,
)
from infonce_lib.experiments import EXPERIMENTS, _shared, cosine_temperature, gaussian_patches

SMALL = {
    "m_pairs": 4096,
    "levels": (1.0, 12.0),
    "batch_sizes": (4, 16, 64, 256),
    "cosine_level": 12.0,
    "cosine_batch_size": 64,
}
CONFIG = cosine_temperature.Config(**SMALL)
ROW_KEYS = {
    "tau", "infonce", "se", "cap", "max_minus_cap", "attainable_cap", "max_minus_attainable_cap",
}  # fmt: skip
RESULT_KEYS = {
    "I", "K", "m_pairs", "sigma", "rows", "best_tau", "best_beta", "best_infonce", "best_cap",
    "best_max_minus_cap", "best_attainable_cap", "best_max_minus_attainable_cap",
    "slope_at_best", "curvature_at_best", "optimal_critic", "optimal_critic_se",
    "seed", "best_at_end", "population_cap",
}  # fmt: skip
RANGE_CHECK = "no batch exceeds the score-range cap"
ATTAINABLE_CHECK = "no batch exceeds the attainable cap"


def test_cosine_cell_is_gaussian_patches_digit_for_digit():
    full = gaussian_patches.run(gaussian_patches.Config(**SMALL))
    cell = cosine_temperature.run(CONFIG)
    np.testing.assert_array_equal(cell.infonce, full.cosine_infonce)
    np.testing.assert_array_equal(cell.se, full.cosine_se)
    np.testing.assert_array_equal(cell.cap, full.cosine_cap)
    np.testing.assert_array_equal(cell.max_minus_cap, full.cosine_max_minus_cap)
    np.testing.assert_array_equal(cell.attainable_cap, full.cosine_attainable_cap)
    np.testing.assert_array_equal(
        cell.max_minus_attainable_cap, full.cosine_max_minus_attainable_cap
    )
    assert (cell.best_tau, cell.best_infonce) == (full.best_tau, full.best_infonce)
    assert cell.best_max_minus_cap == full.best_max_minus_cap
    assert cell.best_max_minus_attainable_cap == full.best_max_minus_attainable_cap
    assert (cell.best_cap, cell.best_attainable_cap) == (full.best_cap, full.best_attainable_cap)
    assert cell.optimal_critic == full.optimal_critic
    assert cell.sigma == full.sigma[SMALL["levels"].index(SMALL["cosine_level"])]


def test_cosine_cell_matches_the_public_functions():
    cell = cosine_temperature.run(CONFIG)
    sigma, x, y = patch_level_pairs(12.0, levels=SMALL["levels"], m_pairs=SMALL["m_pairs"])
    assert sigma == cell.sigma
    S = cosine_scores(x, y, 64)
    for ti, tau in enumerate(cell.taus):
        v = infonce_at_beta(S, 1 / tau)
        assert cell.infonce[ti] == pytest.approx(v.mean(), abs=1e-12)
        assert cell.max_minus_cap[ti] == pytest.approx(v.max() - cosine_cap(64, tau), abs=1e-12)
        att = attainable_cosine_cap(64, tau)
        assert cell.attainable_cap[ti] == att
        assert cell.max_minus_attainable_cap[ti] == pytest.approx(v.max() - att, abs=1e-12)
        np.testing.assert_array_equal(cell.batch_values[ti], v)  # the values, bit for bit
    np.testing.assert_array_equal(cell.best_batch_values, infonce_at_beta(S, cell.best_beta))
    best_att = attainable_cosine_cap(64, cell.best_tau)
    assert cell.best_attainable_cap == best_att
    assert cell.best_max_minus_attainable_cap == pytest.approx(
        cell.best_batch_values.max() - best_att, abs=1e-12
    )
    best = best_temperature(S)
    assert cell.best_beta == pytest.approx(best.beta, rel=1e-12)
    d = infonce_beta_derivatives(S, best.beta)
    assert cell.slope_at_best == pytest.approx(d.first.mean(), abs=1e-12)
    assert cell.curvature_at_best == pytest.approx(d.second.mean(), rel=1e-10)


def test_cosine_cell_cached_read_only_and_checked():
    a = cosine_temperature.run(CONFIG)
    assert cosine_temperature.run(CONFIG) is a
    with pytest.raises(ValueError, match="read-only"):
        a.infonce[0] = 0.0
    checks = cosine_temperature.checks(a)
    assert all(c.passed for c in checks)
    bad = dataclasses.replace(a, best_max_minus_cap=0.01)
    failed = [c.description for c in cosine_temperature.checks(bad) if not c.passed]
    assert len(failed) == 1 and RANGE_CHECK in failed[0]
    with pytest.raises(ValueError, match="cosine_batch_size must be one of"):
        cosine_temperature.Config(**{**SMALL, "cosine_batch_size": 32})


def test_seed_zero_is_the_published_draw_and_other_seeds_draw_other_pairs():
    sigma, x, y = cosine_temperature.pairs(CONFIG)
    s0, x0, y0 = patch_level_pairs(12.0, levels=SMALL["levels"], m_pairs=SMALL["m_pairs"])
    assert sigma == s0 and np.array_equal(x, x0) and np.array_equal(y, y0)
    other = cosine_temperature.Config(**SMALL, seed=3)
    s3, x3, y3 = cosine_temperature.pairs(other)
    assert s3 == sigma and not np.allclose(x3, x)
    sub = cosine_temperature.pairs(other, level=1.0, m_pairs=64)[1]
    assert sub.shape == (64, 64)
    cell = cosine_temperature.run(other)
    S = cosine_scores(x3, y3, 64)
    np.testing.assert_array_equal(cell.batch_values[0], infonce_at_beta(S, 1 / cell.taus[0]))
    assert "seed = [3, 1]" in cosine_temperature.tables(cell)
    assert cosine_temperature.report(other).results["seed"] == 3
    with pytest.raises(ValueError, match="seed"):
        cosine_temperature.Config(**SMALL, seed=-1)
    with pytest.raises(ValueError, match="level"):
        cosine_temperature.pairs(CONFIG, level=6.0)
    # remembered for the experiment and the chapter, so read-only
    again = cosine_temperature.pairs(CONFIG)[1]
    assert cosine_temperature.pairs(CONFIG)[1] is again
    with pytest.raises(ValueError, match="read-only"):
        again[0, 0] = 0.0


def test_the_new_checks_can_fail():
    r = cosine_temperature.run(CONFIG)
    assert _failed(cosine_temperature.checks(r)) == []
    for change, words in (
        ({"infonce": r.population_cap + 1.0}, "population cap"),
        ({"neighbour_infonce": (r.best_infonce + 1e-6, r.neighbour_infonce[1])}, "maximum of"),
        ({"best_at_end": True}, "interior maximum"),
        ({"optimal_critic": r.best_infonce - 0.01}, "optimal critic"),
    ):
        failed = _failed(cosine_temperature.checks(dataclasses.replace(r, **change)))
        assert len(failed) == 1 and words in failed[0], failed
    assert r.best_at_end is False
    assert r.neighbour_infonce[0] < r.best_infonce > r.neighbour_infonce[1]


def _failed(checks) -> list[str]:
    return [c.description for c in checks if not c.passed]


@pytest.mark.parametrize("experiment", [cosine_temperature, gaussian_patches])
def test_both_caps_are_checked_and_each_check_can_fail(experiment):
    r = experiment.run(experiment.Config(**SMALL))
    assert _failed(experiment.checks(r)) == []
    prefix = "" if experiment is cosine_temperature else "cosine_"
    table = prefix + "max_minus_attainable_cap"
    tol = _shared.ATTAINABLE_CAP_TOL
    # A batch above the attainable cap (but below the score-range cap) fails only that check,
    # at the best temperature or at one of the table's; round-off within the allowance passes.
    for change in (
        {"best_max_minus_attainable_cap": 2 * tol},
        {table: np.append(getattr(r, table)[:-1], 2 * tol)},
    ):
        failed = _failed(experiment.checks(dataclasses.replace(r, **change)))
        assert len(failed) == 1 and ATTAINABLE_CHECK in failed[0], failed
    within = dataclasses.replace(r, best_max_minus_attainable_cap=tol / 2)
    assert _failed(experiment.checks(within)) == []
    # Above the score-range cap is above the attainable cap too: both checks fail.
    both = dataclasses.replace(r, best_max_minus_cap=0.01, best_max_minus_attainable_cap=0.5)
    failed = _failed(experiment.checks(both))
    assert len(failed) == 2 and RANGE_CHECK in failed[0] and ATTAINABLE_CHECK in failed[1]


@pytest.mark.parametrize("experiment", [cosine_temperature, gaussian_patches])
def test_the_cosine_table_names_both_caps(experiment):
    text = experiment.tables(experiment.run(experiment.Config(**SMALL)))
    header = next(line for line in text.splitlines() if line.lstrip().startswith("tau"))
    assert re.split(r"\s{2,}", header.strip()) == [
        "tau", "InfoNCE", "SE", "range cap", "attainable", "max - range", "max - attainable",
    ]  # fmt: skip
    assert all(line in text for line in gaussian_patches.CAPS_LEGEND)
    assert "range cap = " in text and "attainable cap = " in text  # the best tau's line
    assert max(len(line) for line in text.splitlines()) <= 90


def test_cosine_json_schema_on_a_small_run():
    res = cosine_temperature.report(CONFIG).results
    assert set(res) == RESULT_KEYS
    assert [set(row) for row in res["rows"]] == [ROW_KEYS] * 6
    assert json.loads(json.dumps(res)) == res


def test_registered():
    assert EXPERIMENTS["cosine-temperature"] is cosine_temperature
    assert cosine_temperature.CHAPTER == "chapter 6"
    with pytest.raises(TypeError, match=r"config must be a cosine_temperature\.Config"):
        cosine_temperature.run(gaussian_patches.Config(**SMALL))


def test_full_command_prints_the_chapters_table(tmp_path):
    # The book's protocol: I = 6, K = 256, M = 65,536 (about 1-2 s).
    out = tmp_path / "cosine.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "infonce_lib",
            "reproduce",
            "cosine-temperature",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout and "best tau = 0.0296" in done.stdout
    res = json.loads(out.read_text())
    assert (res["I"], res["K"], res["m_pairs"]) == (6.0, 256, 65536)
    assert [row["tau"] for row in res["rows"]] == [0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    # Table 3 of gaussian-patches, to its printed 4 decimals.
    assert [round(row["infonce"], 4) for row in res["rows"]] == [
        4.3908, 4.2602, 3.1895, 1.9409, 0.8676, 0.4494,
    ]  # fmt: skip
    assert round(res["best_infonce"], 4) == 4.5045 and round(res["optimal_critic"], 4) == 4.6416
    assert all(row["max_minus_cap"] <= 0 for row in res["rows"])
    assert all(row["max_minus_attainable_cap"] <= 0 for row in res["rows"])
    assert res["best_max_minus_attainable_cap"] <= 0
    assert "range cap" in done.stdout and "max - attainable" in done.stdout
