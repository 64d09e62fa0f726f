"""The digits experiment (chapter 8) on a small configuration: its records, its JSON, its
checks (each able to fail) and its registration. The full protocol is run by
`python -m infonce_lib reproduce digits` (about a minute on one core)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import infonce_lib as il
from infonce_lib.experiments import EXPERIMENTS, digits

SMALL = digits.Config(
    runs=2,
    grid=(("shift", 0.1), ("shift", 0.5), ("shift", "learned"), ("noise", 0.1),
          ("noise", "learned"), ("shift", "learned", 0.5)),
    sizes=(64, 16, 8), steps=40, long_steps=60, checkpoints=(20, 40, 60), batch_sizes=(32,),
    batch_size=16, draws=((1, 3), (5, 2)), bound_batch_size=64, bound_rounds=1,
    raw_Cs=(1.0, 10.0),
)  # fmt: skip
RUN_KEYS = {"views", "tau", "batch_size", "steps", "bound_batch_size", "probe_5", "probe_all",
            "knn", "bound", "alignment", "uniformity"}  # fmt: skip


@pytest.fixture(scope="module")
def result():
    return digits.run(SMALL)


def test_records_cover_the_grid_the_snapshots_and_the_batch_sizes(result):
    keys = [(r.views, r.tau, r.batch_size, r.steps) for r in result.records]
    assert keys[:6] == [(v, t, 16, 40) for v, t, *_ in SMALL.grid]
    assert ("shift", 0.1, 16, 20) in keys and ("noise", 0.1, 16, 60) in keys
    assert ("shift", 0.1, 32, 40) in keys and ("noise", 0.1, 32, 40) in keys
    assert len(keys) == 6 + 2 * 2 + 2
    assert result.record("noise", 0.1, steps=60).steps == 60
    with pytest.raises(KeyError, match="no record"):
        result.record("noise", 0.2)
    for rec in result.records:
        assert all(v.shape == (2,) for v in rec.values.values())
        assert set(digits.METRICS) <= set(rec.values)  # all_labels: every metric everywhere
    learned = result.record("noise", "learned")
    assert learned.final_taus.shape == (2,) and learned.temperatures.shape == (40, 2)
    assert learned.temperatures[0, 0] == pytest.approx(0.07) and learned.start == 0.07
    elsewhere = result.record("shift", "learned", start=0.5)
    assert elsewhere.temperatures[0, 0] == pytest.approx(0.5) and elsewhere.start == 0.5
    assert (
        result.record("shift", "learned").start == 0.07
        and result.record("shift", 0.1).start is None
    )


def test_learned_records_without_probes():
    cfg = dataclasses.replace(SMALL, grid=(("shift", 0.1), ("noise", "learned")), batch_sizes=(),
                              probe_learned=False, all_labels=False)  # fmt: skip
    rec = digits.run(cfg).record("noise", "learned")
    assert "probe_5" not in rec.values and "knn" not in rec.values
    assert {"bound", "best_tau", "beaten", "uniformity"} <= set(rec.values)


def test_seconds_is_the_run_time_when_the_grid_ends_with_a_fixed_tau():
    # The grid's loop variables once shadowed the timer: a fixed tau last (start None) crashed,
    # a learned one last turned the start temperature into the clock's origin.
    import time

    for grid in ((("shift", "learned", 0.5), ("shift", 0.1)), (("shift", 0.1),)):
        cfg = dataclasses.replace(SMALL, grid=grid, runs=1, steps=5, long_steps=5,
                                  checkpoints=(5,), batch_sizes=(), all_labels=False)  # fmt: skip
        t0 = time.perf_counter()
        r = digits.run(cfg)
        assert 0 < r.seconds <= time.perf_counter() - t0


def test_the_grid_records_are_the_snapshots_of_the_long_runs(result):
    # tau = 0.1 trains to long_steps; its grid record is the snapshot at steps.
    rec = result.record("shift", 0.1)
    assert rec.losses.shape == (40, 2)
    # Evaluated as the record was, the runs' probes in one stack: one L-BFGS fits the whole
    # stack, so a run's probe fitted alone stops a few last bits elsewhere (and a test
    # prediction near a tie can flip).
    encs = list(rec.encoders)
    rng = np.random.default_rng(0)
    ref = digits._evaluate(encs, "shift", [0.1] * len(encs), SMALL, rng, "full")
    assert ref["probe_1"].tolist() == rec.values["probe_1"].tolist()  # the same label draws
    assert ref["knn"].tolist() == rec.values["knn"].tolist()


def test_medians_and_quartiles_in_the_json(result):
    res = digits.report(SMALL).results
    assert set(res) >= {"seeds", "seconds", "baselines", "runs"}
    assert set(res["baselines"]) == {"raw", "random"}
    for name in ("raw", "random"):
        assert {"probe_5", "probe_all", "knn"} <= set(res["baselines"][name])
    for row, rec in zip(res["runs"], result.records, strict=True):
        assert RUN_KEYS <= set(row)
        assert row["bound"] == pytest.approx(float(np.median(rec.values["bound"])))
        assert row["bound_q25"] <= row["bound"] <= row["bound_q75"]
        assert ("final_tau" in row) == (rec.tau == "learned") == ("initial_tau" in row)
    assert json.loads(json.dumps(res)) == res
    assert res["baselines"]["raw"]["C"]["probe_all"] in SMALL.raw_Cs


def test_each_check_can_fail(result):
    checks = digits.checks(result)
    assert len(checks) >= 8
    # Move the trained encoders' one-label probe below the random encoder's: two checks fail.
    main = result.record("shift", 0.1)
    worse = {**main.values, "probe_1": main.values["probe_1"] * 0 + 0.01}
    records = tuple(
        dataclasses.replace(r, values=worse) if r is main else r for r in result.records
    )
    failed = [c.description for c in digits.checks(dataclasses.replace(result, records=records))
              if not c.passed]  # fmt: skip
    assert any("random encoder on probe_1" in d for d in failed)
    assert any("raw pixels with 1 label" in d for d in failed)
    # A bound above its cap fails the cap check.
    high = {**main.values, "bound": main.values["bound"] + 10}
    records = tuple(dataclasses.replace(r, values=high) if r is main else r for r in result.records)
    failed = [c.description for c in digits.checks(dataclasses.replace(result, records=records))
              if not c.passed]  # fmt: skip
    assert any("attainable cap" in d for d in failed)


def test_the_tracking_check_rejects_its_control(result):
    """The learned temperature's check must be able to fail: the fixed tau = 0.5 control is
    reported as not tracking, and a learned record moved far from its best tau fails."""
    names = {c.description: c for c in digits.checks(result)}
    assert any("(the control)" in d for d in names)
    rec = result.record("shift", "learned", start=0.5)
    moved = dataclasses.replace(rec, final_taus=rec.values["best_tau"] * 3)
    records = tuple(moved if r is rec else r for r in result.records)
    failed = [c.description for c in digits.checks(dataclasses.replace(result, records=records))
              if not c.passed]  # fmt: skip
    assert any("learned from 0.5" in d for d in failed)


def test_tables_and_registration(result):
    text = digits.tables(result)
    assert "raw pixels" in text and "random encoder" in text and "learned" in text
    assert EXPERIMENTS["digits"] is digits and digits.CHAPTER == "chapter 8"
    assert digits.run(SMALL) is result  # cached


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"grid": (("blur", 0.1),)}, "views must be one of"),
        ({"grid": (("shift", -1.0),)}, "grid must be > 0"),
        ({"checkpoints": (10, 20)}, "checkpoints must include"),
        ({"runs": 0}, "runs must be >= 1"),
        ({"all_labels": "yes"}, "all_labels must be True or False"),
        ({"grid": (("shift", "learned", 0.005),)}, "initial_temperature must lie within"),
        ({"grid": (("shift", 0.1, 0.5),)}, "grid entries must be"),
        ({"probe_learned": 1}, "probe_learned must be True or False"),
    ],
)
def test_bad_configurations_are_refused(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        digits.Config(**kwargs)


def test_the_experiment_uses_the_librarys_views_and_caps():
    assert digits.VIEWS["noise"] == il.ViewRecipe(noise=0.1)
    assert digits.Config().checkpoints[-1] == digits.Config().long_steps
