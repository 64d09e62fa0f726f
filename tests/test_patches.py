"""Tests for infonce_lib.patches and its experiment, infonce_lib.experiments.gaussian_patches."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from infonce_lib import (
    _blas,
    attainable_cosine_cap,
    best_temperature,
    cosine_cap,
    cosine_scores,
    gaussian_field,
    infonce_at_beta,
    infonce_bound,
    leave_one_out_bound,
    log_density_ratio_scores,
    log_p_y,
    mean_and_se,
    optimal_critic_scores,
    patch_level_pairs,
    sample_patch_pairs,
    sigma_for_information,
)
from infonce_lib.experiments import EXPERIMENTS, cosine_temperature, gaussian_patches
from infonce_lib.patches import _level_batch_values, _sample_covariance

FIELD = gaussian_field()
SMALL = {
    "m_pairs": 4096,
    "levels": (1.0, 12.0),
    "batch_sizes": (4, 16, 64, 256),
    "cosine_level": 12.0,
    "cosine_batch_size": 64,
}
SMALL_CONFIG = gaussian_patches.Config(**SMALL)

LEVEL_KEYS = {"I", "sigma", "mean_log_ratio", "se", "z", "mi_gap", "max_cov_error"}
BOUND_KEYS = {"I", "K", "infonce", "infonce_se", "loo", "loo_se"}
COSINE_KEYS = {
    "I", "K", "rows", "best_tau", "best_infonce", "best_cap", "best_max_minus_cap",
    "best_attainable_cap", "best_max_minus_attainable_cap", "optimal_critic",
}  # fmt: skip
ROW_KEYS = {
    "tau", "infonce", "se", "cap", "max_minus_cap", "attainable_cap", "max_minus_attainable_cap",
}  # fmt: skip


def slow_values(x, y, sigma, K, field=FIELD):
    """The five per-batch quantities from the public, generic functions."""
    F = optimal_critic_scores(x, y, sigma, K)
    R = log_density_ratio_scores(x, y, field, sigma, K)
    return np.stack(
        [
            infonce_bound(F),
            leave_one_out_bound(F),
            infonce_bound(R),
            infonce_bound(F, over="y"),
            infonce_bound(R, over="y"),
        ]
    )


# ---------------------------------------------------------------- the fast engine


@pytest.mark.parametrize("I", [1.0, 12.0])
@pytest.mark.parametrize("panel_rows", [8, 32, 128, 512])
def test_fast_engine_equals_the_public_functions(I, panel_rows):
    sigma = sigma_for_information(I, FIELD.eigenvalues)
    x, y = sample_patch_pairs(FIELD, sigma, 1024, seed=7)
    Ks = (4, 16, 64, 256)
    fast = _level_batch_values(x, y, sigma, log_p_y(y, FIELD, sigma), Ks, panel_rows)
    for K in Ks:
        np.testing.assert_allclose(fast[K], slow_values(x, y, sigma, K), rtol=0, atol=1e-11)


def test_fallback_when_exponentials_leave_float64():
    # sigma = 0.005: off-diagonal scores near -1e5, their exponentials underflow to 0,
    # so the engine must redo the blocks the max-shifted way (and get huge finite LOO).
    sigma = 0.005
    x, y = sample_patch_pairs(FIELD, sigma, 256, seed=1)
    fast = _level_batch_values(x, y, sigma, log_p_y(y, FIELD, sigma), (4, 64), 32)
    for K in (4, 64):
        slow = slow_values(x, y, sigma, K)
        assert np.all(np.isfinite(fast[K])) and slow[1].min() > 1e3
        np.testing.assert_allclose(fast[K], slow, rtol=1e-12, atol=1e-9)


# ---------------------------------------------------------------- the experiment


def test_small_run_matches_the_public_functions_cell_by_cell():
    r = gaussian_patches.run(SMALL_CONFIG)
    for li, I in enumerate(SMALL["levels"]):
        sigma = sigma_for_information(I, FIELD.eigenvalues)
        assert r.sigma[li] == sigma
        x, y = sample_patch_pairs(FIELD, sigma, SMALL["m_pairs"], seed=li)
        for ki, K in enumerate(SMALL["batch_sizes"]):
            v = slow_values(x, y, sigma, K)
            m, se = mean_and_se(v[0])
            assert r.infonce[li, ki] == pytest.approx(m, abs=1e-12)
            assert r.infonce_se[li, ki] == pytest.approx(se, rel=1e-9)
            assert r.loo[li, ki] == pytest.approx(v[1].mean(), abs=1e-12)
            assert r.infonce_max_minus_log_k[li, ki] == pytest.approx(v[0].max() - math.log(K))
        if I == SMALL["cosine_level"]:
            S = cosine_scores(x, y, SMALL["cosine_batch_size"])
            for ti, tau in enumerate(r.taus):
                assert r.cosine_infonce[ti] == pytest.approx(
                    infonce_at_beta(S, 1 / tau).mean(), abs=1e-12
                )
            assert r.best_tau == pytest.approx(best_temperature(S).tau, rel=1e-12)


def test_result_is_cached_and_read_only():
    a = gaussian_patches.run(SMALL_CONFIG)
    assert gaussian_patches.run(SMALL_CONFIG) is a
    with pytest.raises(ValueError, match="read-only"):
        a.infonce[0, 0] = 0.0


def test_json_schema_on_a_small_run():
    res = gaussian_patches.report(SMALL_CONFIG).results
    assert set(res) == {"levels", "bounds", "cosine"}
    assert [set(row) for row in res["levels"]] == [LEVEL_KEYS] * 2
    assert [set(row) for row in res["bounds"]] == [BOUND_KEYS] * 8
    assert set(res["cosine"]) == COSINE_KEYS
    assert [set(row) for row in res["cosine"]["rows"]] == [ROW_KEYS] * 6
    assert [(b["I"], b["K"]) for b in res["bounds"]][:2] == [(1.0, 4), (1.0, 16)]
    assert json.loads(json.dumps(res)) == res  # plain JSON types only


def test_json_cosine_cell_has_both_caps_as_the_cosine_temperature_json_does():
    res = gaussian_patches.report(SMALL_CONFIG).results["cosine"]
    K = res["K"]
    for row in res["rows"]:
        assert row["attainable_cap"] == attainable_cosine_cap(K, row["tau"])
        assert row["cap"] == cosine_cap(K, row["tau"])
        assert row["max_minus_attainable_cap"] <= 1e-12 and row["max_minus_cap"] <= 0
    assert res["best_attainable_cap"] == attainable_cosine_cap(K, res["best_tau"])
    # The same cell, run alone: every key the two share has the same value.
    alone = cosine_temperature.report(cosine_temperature.Config(**SMALL)).results
    for key in set(res) & set(alone) - {"rows"}:
        assert res[key] == alone[key], key
    assert [set(row) for row in alone["rows"]] == [ROW_KEYS] * 6
    assert res["rows"] == alone["rows"]


def test_a_violated_claim_fails_its_check():
    r = gaussian_patches.run(SMALL_CONFIG)
    assert all(c.passed for c in gaussian_patches.checks(r) if "fast engine" in c.description)
    assert r.engine_max_diff.max() < 1e-9
    bad = dataclasses.replace(r, engine_max_diff=r.engine_max_diff + 1e-6)
    failed = [c for c in gaussian_patches.checks(bad) if not c.passed]
    assert len(failed) == 1 and "fast engine" in failed[0].description


def test_the_trend_checks_allow_a_rise_only_once_the_gap_is_noise():
    from infonce_lib.experiments.gaussian_patches import _falls

    se = np.full((1, 4), 0.01)
    assert _falls(np.array([[0.5, 0.2, 0.01, 0.02]]), se)  # 0.02 < 3 SE: noise
    assert not _falls(np.array([[0.5, 0.2, 0.05, 0.06]]), se)  # 0.06 > 3 SE: a real rise
    assert _falls(np.array([[0.5, 0.2, 0.05, -0.02]]), se)


def test_the_cosine_table_says_whether_a_simplex_reaches_the_attainable_cap():
    text = gaussian_patches.tables(gaussian_patches.run(SMALL_CONFIG))
    assert "d = 64 < K - 1 = 63" not in text and "d = 64 >= K - 1 = 63" in text
    assert "only a bound" in gaussian_patches.simplex_line(64, 256)
    assert all(len(line) <= 90 for line in text.splitlines())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"batch_sizes": (4, 24, 256)}, "must divide the largest"),
        ({"batch_sizes": (16, 4)}, "increasing"),
        ({"batch_sizes": (1, 4)}, "batch_sizes must be >= 2"),
        ({"m_pairs": 4000}, "must divide m_pairs"),
        ({"cosine_level": 3.0}, "cosine_level must be one of"),
        ({"cosine_batch_size": 32}, "cosine_batch_size must be one of"),
        ({"levels": (1.0, -2.0)}, "levels must be > 0"),
        ({"length_scale": 40.0}, "length_scale = 40 .* singular"),
    ],
)
def test_bad_configurations_raise(change, message):
    with pytest.raises(ValueError, match=message):
        gaussian_patches.Config(**{**SMALL, **change})


# ---------------------------------------------------------------- the command


def test_registered():
    assert EXPERIMENTS["gaussian-patches"] is gaussian_patches
    assert gaussian_patches.CHAPTER == "chapter 3"


def test_default_config_is_the_books_protocol_and_run_is_cached():
    c = gaussian_patches.Config()
    assert (c.m_pairs, c.levels, c.batch_sizes) == (
        65536,
        (1.0, 3.0, 6.0, 12.0),
        (4, 16, 64, 256, 1024),
    )
    assert (c.cosine_level, c.cosine_batch_size, c.side, c.length_scale) == (6.0, 256, 8, 1.5)
    # Sequences are normalised to tuples, so equal configurations hit the same cache entry.
    listed = gaussian_patches.Config(**{**SMALL, "levels": [1, 12]})
    assert listed == SMALL_CONFIG and gaussian_patches.run(listed) is gaussian_patches.run(
        SMALL_CONFIG
    )
    with pytest.raises(TypeError, match="config must be"):
        gaussian_patches.run(SMALL)


def test_full_command_writes_the_documented_json(tmp_path):
    # The book's full protocol: about 3-5 s on one core.
    out = tmp_path / "patches.json"
    done = subprocess.run(
        [sys.executable, "-m", "infonce_lib", "reproduce", "gaussian-patches", "--json", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
    for title in ("Table 1", "Table 2", "Table 3", "best tau"):
        assert title in done.stdout
    res = json.loads(out.read_text())
    assert [row["I"] for row in res["levels"]] == [1.0, 3.0, 6.0, 12.0]
    assert all(set(row) == LEVEL_KEYS for row in res["levels"])
    assert [(b["I"], b["K"]) for b in res["bounds"]] == [
        (I, K) for I in (1.0, 3.0, 6.0, 12.0) for K in (4, 16, 64, 256, 1024)
    ]
    assert all(set(row) == BOUND_KEYS for row in res["bounds"])
    assert set(res["cosine"]) == COSINE_KEYS and (res["cosine"]["I"], res["cosine"]["K"]) == (
        6.0,
        256,
    )
    assert [row["tau"] for row in res["cosine"]["rows"]] == [0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    # Spot values of the book's tables (4 decimals).
    cell = next(b for b in res["bounds"] if (b["I"], b["K"]) == (6.0, 256))
    assert round(cell["infonce"], 4) == 4.6416 and round(cell["loo"], 4) == 7.0492
    assert round(res["levels"][3]["sigma"], 4) == 1.0591


def test_patch_level_pairs_is_the_experiments_sampler():
    sigma, x, y = patch_level_pairs(3.0, m_pairs=64)
    assert sigma == sigma_for_information(3.0, FIELD.eigenvalues)
    x2, y2 = sample_patch_pairs(FIELD, sigma, 64, seed=1)  # 3 nats is level index 1
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    with pytest.raises(ValueError, match="level must be one of"):
        patch_level_pairs(5.0)


def test_seed_zero_is_the_protocol_and_other_seeds_draw_other_streams():
    assert gaussian_patches.Config().seed == 0
    seeded = gaussian_patches.Config(**SMALL, seed=3)
    r0, r3 = gaussian_patches.run(SMALL_CONFIG), gaussian_patches.run(seeded)
    assert not np.array_equal(r0.infonce, r3.infonce)
    assert "seed = [3, level index]" in gaussian_patches.tables(r3)
    assert "seed = level index" in gaussian_patches.tables(r0)
    # Level l of seed s is numpy.random.default_rng([s, l]), as patch_level_pairs draws it.
    li = 1  # 12 nats
    sigma, x, y = patch_level_pairs(12.0, levels=SMALL["levels"], m_pairs=SMALL["m_pairs"], seed=3)
    x2, y2 = sample_patch_pairs(FIELD, sigma, SMALL["m_pairs"], seed=np.random.default_rng([3, li]))
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    v = slow_values(x, y, sigma, 16)
    assert r3.infonce[li, 1] == pytest.approx(v[0].mean(), abs=1e-12)
    with pytest.raises(ValueError, match="seed"):
        gaussian_patches.Config(seed=-1)
    with pytest.raises(TypeError, match="seed"):
        gaussian_patches.Config(seed=1.5)


@pytest.mark.parametrize("through_scipy", [False, True])
def test_sample_covariance_is_numpys(through_scipy, monkeypatch, dgemm_calls):
    # through_scipy: the browser's route (Pyodide's NumPy has no BLAS; infonce_lib._blas)
    monkeypatch.setattr(_blas, "NUMPY_WITHOUT_BLAS", through_scipy)
    x, _ = sample_patch_pairs(FIELD, 1.0, 3000, seed=9)
    got = _sample_covariance(x)
    assert dgemm_calls == [True] * through_scipy  # once, with x read in place
    np.testing.assert_allclose(got, np.cov(x, rowvar=False), rtol=1e-11, atol=1e-13)
