"""Tests for infonce_lib.training.trainer: a run is the documented sequence of public steps,
seeded, with checkpoints that are the shorter runs, and a learned temperature that follows
its gradient and is clipped where CLIP clips it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import infonce_lib as il

X = il.load_digits().x_train
SMALL = {"sizes": (64, 16, 8), "batch_size": 16}


def test_a_run_is_the_documented_sequence_of_public_steps():
    cfg = il.TrainingConfig(**SMALL, steps=3, temperature="learned", learning_rate=0.01)
    run = il.train_encoder(X, cfg, seed=5)
    # The same three steps by hand, drawing from one generator in the documented order:
    # the initial weights, a shuffle of the images (an epoch), then each step's views.
    rng = np.random.default_rng(5)
    enc = il.init_encoder(cfg.sizes, seed=rng)
    t = np.array([math.log(1 / cfg.initial_temperature)])
    adam = il.Adam([*enc.weights, t], lr=0.01)
    order = np.argsort(rng.random((1, X.shape[0])), axis=1)[0]
    for step in range(3):
        batch = X[order[16 * step : 16 * (step + 1)]]
        views = il.make_views(np.concatenate([batch, batch])[None], cfg.views, seed=rng)[0]
        U = il.encode(enc, views)
        out = il.symmetric_infonce_grad(U[:16], U[16:], float(t[0]))
        assert abs(out.loss - run.losses[step]) < 1e-12
        assert abs(math.exp(-t[0]) - run.temperatures[step]) < 1e-15
        grads = il.encoder_gradients(enc, views, np.concatenate([out.grad_a, out.grad_b]))
        adam.step([*grads, np.array([out.grad_log_scale])])
        np.clip(t, 0.0, math.log(100.0), out=t)
    for mine, theirs in zip(enc.weights, run.encoder.weights, strict=True):
        np.testing.assert_allclose(theirs, mine, rtol=1e-11, atol=1e-13)
    assert abs(run.final_temperature - math.exp(-t[0])) < 1e-15


def test_batches_go_through_the_images_in_epochs():
    # 64 images, batches of 16: every image once in each run's first 4 steps.
    x = X[:64]
    cfg = il.TrainingConfig(**SMALL, steps=4, views=il.ViewRecipe())
    seen = []
    rng = np.random.default_rng(0)
    il.init_encoder(cfg.sizes, seed=rng)
    il.init_encoder(cfg.sizes, seed=rng)
    order = np.argsort(rng.random((2, 64)), axis=1)
    for r in range(2):
        seen.append(np.sort(order[r]))
        np.testing.assert_array_equal(seen[-1], np.arange(64))
    runs = il.train_encoders(x, cfg, runs=2, seed=0)
    assert not np.array_equal(runs[0].losses, runs[1].losses)


def test_seeded_and_checkpoints_are_the_shorter_runs():
    cfg = il.TrainingConfig(**SMALL, steps=40, checkpoints=(10, 40))
    run = il.train_encoder(X, cfg, seed=1)
    again = il.train_encoder(X, cfg, seed=np.random.default_rng(1))
    assert il.train_encoders(X, cfg, runs=1, seed=1)[0].losses.tolist() == run.losses.tolist()
    np.testing.assert_array_equal(run.losses, again.losses)
    short = il.train_encoder(X, il.TrainingConfig(**SMALL, steps=10), seed=1)
    for a, b in zip(run.checkpoints[10].weights, short.encoder.weights, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(run.checkpoints[40].weights, run.encoder.weights, strict=True):
        np.testing.assert_array_equal(a, b)
    assert run.checkpoints[40] is not run.encoder  # a copy
    other = il.train_encoder(X, cfg, seed=2)
    assert not np.array_equal(other.losses, run.losses)


@pytest.mark.parametrize("loss", ["symmetric", "nt_xent"])
def test_training_lowers_the_loss(loss):
    cfg = il.TrainingConfig(**SMALL, steps=200, loss=loss, learning_rate=5e-3)
    run = il.train_encoder(X, cfg, seed=0)
    assert run.losses[-50:].mean() < run.losses[:50].mean() - 0.3
    assert (run.temperatures == 0.1).all() and run.final_temperature == 0.1


def test_a_learned_temperature_runs_to_the_clip_when_positives_are_separated():
    # Identical views: every positive beats its negatives, the loss falls as 1/tau grows,
    # and the parameter stops at log 100 (tau = 0.01), exactly.
    cfg = il.TrainingConfig(
        **SMALL, steps=150, views=il.ViewRecipe(), temperature="learned", learning_rate=0.1
    )
    run = il.train_encoder(X, cfg, seed=0)
    assert run.temperatures[0] == pytest.approx(0.07, rel=1e-15)
    assert run.final_temperature == pytest.approx(0.01, rel=1e-14)
    assert run.temperatures.min() >= 0.01 * (1 - 1e-14)
    assert np.all(np.diff(run.temperatures) <= 1e-15)  # never rises


def test_float32_compute_trains_as_well_as_float64():
    # The float32 steps draw their views in float32 too, so the runs differ draw by draw;
    # they train equally well, and keep float64 weights.
    cfg = dict(**SMALL, steps=150, learning_rate=5e-3)
    a = il.train_encoder(X, il.TrainingConfig(**cfg), seed=0)
    b = il.train_encoder(X, il.TrainingConfig(**cfg, compute_dtype="float32"), seed=0)
    assert all(w.dtype == np.float64 for w in b.encoder.weights)
    assert abs(b.losses[-50:].mean() - a.losses[-50:].mean()) < 0.05 * a.losses[-50:].mean()
    assert b.losses[-50:].mean() < b.losses[:50].mean() - 0.2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"temperature": "hot"}, "temperature must be a number or 'learned'"),
        ({"temperature": -0.1}, "temperature must be > 0"),
        ({"max_logit_scale": 0.5}, "max_logit_scale must be >= 1"),
        ({"initial_temperature": 0.005}, "initial_temperature must lie within the clip"),
        ({"initial_temperature": 2.0}, "initial_temperature must lie within the clip"),
        (
            {"initial_temperature": 0.05, "max_logit_scale": 10.0},
            r"initial_temperature must lie within the clip, from 1/max_logit_scale = 0.1",
        ),
        ({"loss": "triplet"}, "loss must be one of"),
        ({"compute_dtype": "float16"}, "compute_dtype must be one of"),
        ({"checkpoints": (0,)}, "checkpoints must be >= 1"),
        ({"checkpoints": (901,)}, "checkpoints must be steps from 1 to steps"),
        ({"batch_size": 1}, "batch_size must be >= 2"),
        ({"views": {"shift": 1}}, "views must be a ViewRecipe"),
        ({"sizes": (64,)}, "sizes must give at least two widths"),
    ],
)
def test_bad_configurations_are_refused_by_name(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        il.TrainingConfig(**kwargs)


def test_bad_calls_are_refused_by_name():
    cfg = il.TrainingConfig(**SMALL, steps=1)
    with pytest.raises(ValueError, match="images must have 64 columns"):
        il.train_encoder(X[:, :10], cfg, seed=0)
    with pytest.raises(ValueError, match="at least batch_size"):
        il.train_encoder(X[:5], cfg, seed=0)
    with pytest.raises(TypeError, match="config must be a TrainingConfig"):
        il.train_encoder(X, {"steps": 1}, seed=0)
    with pytest.raises(TypeError, match="seed must be"):
        il.train_encoder(X, cfg, seed=None)
