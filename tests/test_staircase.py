"""The command's staircase (bound_family.Protocol): stacked and float32 critics, MINE and
SMILE, the trainer (resumable), the JSON keys, the options of the command line, and a tiny
run of Poole et al.'s protocol."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import infonce_lib as il
from infonce_lib import cli
from infonce_lib.experiments import bound_family as bf
from infonce_lib.experiments._staircase import Run, cubic_map, poole_columns, train

# ------------------------------------------------------------------ critics


def _xy(K=5, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(K, d)), rng.normal(size=(K, d))


def test_joint_copies_are_independent_critics():
    X, Y = _xy()
    stack = il.JointCritic(3, 3, hidden=6, layers=2, copies=3, seed=1)
    F, cache = stack.forward(X, Y)
    assert F.shape == (3, 5, 5)
    dF = np.random.default_rng(2).normal(size=F.shape)
    grads = stack.backward(cache, dF)
    for c in range(3):
        one = il.JointCritic(3, 3, hidden=6, layers=2, seed=0)
        for p, q in zip(one.params, stack.params, strict=True):
            p[...] = q[c].reshape(p.shape)
        F1, cache1 = one.forward(X, Y)
        np.testing.assert_allclose(F1, F[c], rtol=1e-12, atol=1e-12)
        for g1, g in zip(one.backward(cache1, dF[c]), grads, strict=True):
            np.testing.assert_allclose(g1, g[c].reshape(g1.shape), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["joint", "separable"])
def test_stacked_gradients_match_finite_differences(kind):
    X, Y = _xy()
    make = il.JointCritic if kind == "joint" else il.SeparableCritic
    kw = {"hidden": 5, "copies": 2, "seed": 3}
    if kind == "separable":
        kw["embed"] = 4
    critic = make(3, 3, **kw)
    W = np.random.default_rng(4).normal(size=(2, 5, 5))

    def objective():
        return float((critic.forward(X, Y)[0] * W).sum())

    _, cache = critic.forward(X, Y)
    g = il.flatten_grads(critic.backward(cache, W))
    rng = np.random.default_rng(5)
    for i in rng.choice(critic.flat.size, size=12, replace=False):
        old = critic.flat[i]
        critic.flat[i] = old + 1e-6
        up = objective()
        critic.flat[i] = old - 1e-6
        down = objective()
        critic.flat[i] = old
        assert abs((up - down) / 2e-6 - g[i]) < 1e-5 * max(1.0, abs(g[i]))


@pytest.mark.parametrize("kind", ["joint", "separable"])
def test_float32_critics_agree_with_float64_and_return_float64_scores(kind):
    X, Y = _xy(K=8, d=4)
    make = il.JointCritic if kind == "joint" else il.SeparableCritic
    c64 = make(4, 4, hidden=16, copies=2, seed=7)
    c32 = make(4, 4, hidden=16, copies=2, dtype="float32", seed=7)
    F64, k64 = c64.forward(X, Y)
    F32, k32 = c32.forward(X, Y)
    assert F32.dtype == np.float64 and c32.flat.dtype == np.float32
    assert all(p.dtype == np.float32 and np.shares_memory(p, c32.flat) for p in c32.params)
    np.testing.assert_allclose(F32, F64, rtol=1e-4, atol=1e-5)
    dF = np.ones_like(F64)
    for a, b in zip(c64.backward(k64, dF), c32.backward(k32, dF), strict=True):
        assert a.dtype == np.float64 and b.dtype == np.float32  # the parameters' dtype
        np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("kind", ["joint", "separable"])
def test_float32_overflow_is_named(kind):
    make = il.JointCritic if kind == "joint" else il.SeparableCritic
    critic = make(3, 3, hidden=4, dtype="float32", seed=0)
    F, cache = critic.forward(*_xy(K=4))
    with pytest.raises(ValueError, match=r"d_scores must fit .*float32"):
        critic.backward(cache, np.full(F.shape, 1e39))  # finite in float64 only
    critic.flat[...] = 1e15  # scores beyond float32's range
    with pytest.raises(ValueError, match=r"scores.*overflowed float32"):
        critic.forward(*_xy(K=4))


def test_critic_dtype_is_validated():
    with pytest.raises(ValueError, match="dtype"):
        il.JointCritic(2, 2, dtype="float16", seed=0)
    with pytest.raises(ValueError, match="dtype"):
        il.SeparableCritic(2, 2, dtype=np.int32, seed=0)


# ------------------------------------------------------------------ MINE and SMILE


def test_smile_is_dv_on_clipped_negatives():
    rng = np.random.default_rng(0)
    F = rng.normal(scale=3.0, size=(4, 6, 6))
    big = il.smile_bound(F, tau=100.0)
    np.testing.assert_allclose(big, il.dv_bound(F), rtol=1e-12)
    K = 6
    off = ~np.eye(K, dtype=bool)
    want = [np.diag(f).mean() - np.log(np.exp(np.clip(f, -1, 1))[off].mean()) for f in F]
    np.testing.assert_allclose(il.smile_bound(F, tau=1.0), want, rtol=1e-12)


def test_smile_validates_tau_and_scores():
    F = np.zeros((1, 3, 3))
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="tau"):
            il.smile_bound(F, tau=bad)
    with pytest.raises(TypeError, match="tau"):
        il.smile_bound(F, tau="5")
    with pytest.raises(ValueError):
        il.smile_bound(np.zeros((1, 3, 4)))


def test_smile_survives_extreme_scores():
    F = np.zeros((1, 4, 4))
    F[0, 0, 1] = 700.0
    F[0, 1, 0] = -700.0
    with np.errstate(all="raise"):
        v = il.smile_bound(F, tau=5.0)
    assert np.isfinite(v).all()


def test_mine_gradient_uses_the_moving_average():
    rng = np.random.default_rng(1)
    F1, F2 = rng.normal(size=(2, 1, 5, 5))
    mine = il.MineGradient(rate=0.25)
    mine(F1)
    v, g = mine(F2)
    np.testing.assert_allclose(v, il.dv_bound(F2[None][0]))
    K = 5
    off = ~np.eye(K, dtype=bool)
    m1, m2 = np.exp(F1[0])[off].mean(), np.exp(F2[0])[off].mean()
    ema = (0.75 * 0.25 * m1 + 0.25 * m2) / (1 - 0.75**2)  # bias-corrected, zero start
    want = -np.exp(F2[0]) / (K * (K - 1) * ema)
    np.fill_diagonal(want, 1 / K)
    np.testing.assert_allclose(g[0], want, rtol=1e-12)


def test_mine_validates_rate_and_batch_count():
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="rate"):
            il.MineGradient(rate=bad)
    mine = il.MineGradient()
    mine(np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match="batches"):
        mine(np.zeros((3, 3, 3)))


def test_mine_is_finite_on_huge_scores():
    F = np.full((1, 4, 4), 600.0)
    with np.errstate(all="raise"):
        v, g = il.MineGradient()(F)
    assert np.isfinite(v).all() and np.isfinite(g).all()


# ------------------------------------------------------------------ the protocol


def test_protocol_validation():
    for kw in ({"protocol": "x"}, {"critic": "concat"}, {"task": "cube"}, {"tail": 1.5}):
        with pytest.raises(ValueError):
            bf.Protocol(**kw)
    with pytest.raises(ValueError, match="seeds"):
        bf.Protocol(seeds=0)
    with pytest.raises(TypeError):
        bf.report("poole")


def test_defaults_are_at_least_five_seeds_and_both_critics():
    p = bf.Protocol()
    assert p.n_seeds >= 5 and p.kinds == ("joint", "separable")
    assert bf.Protocol(protocol="poole").level_steps == (4000,) * 5


TINY = bf.Protocol(seeds=2, steps_per_level=8, optimal_batches=4)


def test_summary_has_the_issue_keys():
    res = bf.run_protocol(TINY)
    out = bf.summary(res)
    assert out["batch_size"] == 64 and out["levels"] == [2.0, 4.0, 6.0, 8.0, 10.0]
    assert set(out["critics"]) == {"joint", "separable"}
    for kind in out["critics"].values():
        ests = kind["estimators"]
        assert {"infonce", "nwj", "dv", "js", "alpha", "mine", "smile"} <= set(ests)
        for e in ests.values():
            for key in ("median", "q25", "q75", "sd"):
                assert len(e[key]) == 5
            assert np.all(np.array(e["q25"]) <= np.array(e["q75"]) + 1e-12)
    assert out["seeds"] == 2 and out["seconds"] > 0
    # every batch value of InfoNCE is at most log K, so every summary is
    assert max(out["critics"]["joint"]["estimators"]["infonce"]["q75"]) <= math.log(64)


def test_training_resumes_from_a_checkpoint(tmp_path):
    setup = TINY.setup("joint")
    whole = train(setup, 1, 2)
    ck = tmp_path / "run.pkl"
    import pickle

    from infonce_lib.experiments._staircase import Run

    run = Run(setup, 1, 2)
    run.run_level()
    run.run_level()
    ck.write_bytes(pickle.dumps(run))
    resumed = train(setup, 1, 2, ck)
    np.testing.assert_array_equal(resumed.trace, whole.trace)
    with pytest.raises(ValueError, match="another protocol"):
        train(bf.Protocol(steps_per_level=9).setup("joint"), 1, 2, ck)


def test_poole_protocol_runs_for_a_few_steps(tmp_path):
    p = bf.Protocol(protocol="poole", steps_per_level=2, optimal_batches=3,
                    checkpoint=str(tmp_path))  # fmt: skip
    rep = bf.report(p)
    ests = rep.results["critics"]["joint"]["estimators"]
    assert set(ests) == {c.key for c in poole_columns()}
    assert "alpha_0.99" in ests and "tuba" in ests
    assert "wall time" in rep.tables and "differs from Poole" in rep.tables
    assert len(list(tmp_path.glob("*.pkl"))) == 2  # one run per critic, resumable


def test_cubic_task_keeps_the_information_map_invertible():
    W = cubic_map(20)
    assert np.linalg.cond(W) < 1e4
    rep = bf.report(bf.Protocol(task="cubic", critic="separable", seeds=1,
                                steps_per_level=4, optimal_batches=3))  # fmt: skip
    assert "(y W)^3" in rep.tables and rep.checks == []


def test_command_line_options(tmp_path, capsys):
    out = tmp_path / "r.json"
    status = cli.main(["reproduce", "bound-family", "--critic", "separable", "--seeds", "1",
                       "--steps", "4", "--json", str(out)])  # fmt: skip
    text = capsys.readouterr().out
    assert status in (0, 1)
    data = json.loads(out.read_text())
    assert list(data["critics"]) == ["separable"] and data["seeds"] == 1
    assert "How this differs from Poole et al.'s Colab" in text
    assert cli.main(["reproduce", "bound-family", "--critic", "concat"]) == cli.EXIT_USAGE
    assert cli.main(["reproduce", "nce-efficiency", "--critic", "joint"]) == cli.EXIT_USAGE


def test_parallel_runs_give_the_same_numbers():
    p = bf.Protocol(critic="separable", seeds=2, steps_per_level=2, optimal_batches=2)
    one = bf.run_protocol(p)
    two = bf.run_protocol(bf.Protocol(**{**p.__dict__, "jobs": 2}))
    for c in one.columns:
        np.testing.assert_array_equal(one.estimates["separable"][c], two.estimates["separable"][c])


def test_chapter_protocol_is_the_books_shortened_with_three_seeds():
    p, book = bf.Protocol(protocol="chapter"), bf.Protocol()
    assert p.n_seeds == 3 and p.kinds == ("joint", "separable")
    assert sum(p.level_steps) < sum(book.level_steps)
    keys = [c.key for c in p.setup("joint").columns]
    assert keys == ["infonce", "nwj", "js", "alpha", "smile"]
    text = "\n".join(bf.deviations(p))
    assert "1 hidden layer of 64" in text and "3 seeds" in text
    assert "SMILE" in text and "MINE" not in text  # the estimators it runs, named


def test_an_estimator_subset_trains_only_those_critics():
    p = bf.Protocol(protocol="chapter", estimators=("infonce", "smile"), seeds=1,
                    steps_per_level=3, optimal_batches=2)  # fmt: skip
    res = bf.run_protocol(p)
    assert res.columns == ("infonce", "smile")
    assert res.traces["joint"].shape == (1, 2, 15)
    assert set(res.optimal) == {"infonce", "smile"}
    for bad in (("infonce", "mine"), (), ("nwj", "nwj"), ["infonce"]):
        with pytest.raises(ValueError, match="estimators"):
            bf.Protocol(protocol="chapter", estimators=bad)


def test_cpu_time_without_getrusage(monkeypatch):
    # the browser's Python (Pyodide) has a resource module without getrusage
    import sys
    import types

    from infonce_lib.experiments import _bf_protocol

    monkeypatch.setitem(sys.modules, "resource", types.ModuleType("resource"))
    assert _bf_protocol._cpu() >= 0.0


def test_a_copy_whose_gradient_would_overflow_skips_its_update(monkeypatch):
    # One copy's float32 gradient is finite but its square is not: that copy alone skips
    # the update (counted for its columns), Adam's moments stay finite, the others train.
    setup = bf.Protocol(protocol="chapter", critic="separable", seed=0).setup("separable")
    run = Run(setup, 1, 2)
    real = run.critic._unchecked_backward

    def huge_first_copy(cache, dF):
        grads = real(cache, dF)
        grads[0][0] = 1e20  # the first weight matrix of copy 0
        return grads

    monkeypatch.setattr(run.critic, "_unchecked_backward", huge_first_copy)
    before = run.critic.flat.copy()
    run.step(0, 2.0)
    hit = run.copy_of == 0
    assert np.all(run.skipped[hit] == 1) and np.all(run.skipped[~hit] == 0)
    assert all(np.isfinite(v).all() for v in run.optimiser._v)
    W = run.critic.params[0]  # (copies, x_dim, hidden): copy 0 kept its first step
    W_before = before[: W.size].reshape(W.shape)
    moved = [not np.array_equal(W[c], W_before[c]) for c in range(len(run.trainers))]
    assert moved[0] is False and all(moved[1:])
