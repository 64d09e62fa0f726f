"""Fuzz specifications and valid extremes for chapter 8's training subpackage
(infonce_lib.training: data, views, encoder, objective, trainer, probe, evaluation).

See tests/fuzzing.py for what a specification is and how to add one. Images are 3 x 3
(``p = 9`` pixels) or 2 x 2 (``p = 4``) so that every call is small.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import infonce_lib as il
from tests.fuzzing import (
    POS,
    Arr,
    Bool,
    Choice,
    Fixed,
    Func,
    Num,
    Obj,
    Seed,
    Seq,
    Spec,
    _lse_tol,
    _sizes,
)
from tests.reference import logsumexp_list

_IMAGES = Arr(("n", "p"), ranks=frozenset({2, 3}), empty_ok=frozenset({0}))
_IMAGE_DIMS = _sizes(n=(1, 4), p=(9, 9))
_SHIFT_RECIPE = Obj(lambda dims, rng: il.ViewRecipe(shift=1, dropout=0.2, noise=0.1))
_NOISE_RECIPE = Obj(lambda dims, rng: il.ViewRecipe(noise=0.1))


def _encoder(dims, rng):
    return il.init_encoder((dims["p"], 3, dims.get("q", 2)), seed=0)


def _two_classes(rng, shape, dims):
    """Labels 0, 1, 0, 1, ...: every class has rows (as long as there are two rows)."""
    return np.arange(shape[0], dtype=np.intp) % 2


_LABELS = Arr(("n",), _two_classes, index=True)
_TEST_LABELS = Arr(("m",), _two_classes, index=True)


def _probe_params(**extra):
    return dict(
        train_features=Arr(("n", "d")),
        train_labels=_LABELS,
        test_features=Arr(("m", "d")),
        test_labels=_TEST_LABELS,
        **extra,
    )


_PROBE_DIMS = _sizes(n=(2, 5), m=(1, 3), d=(1, 3))


def _config(dims, rng):
    return il.TrainingConfig(
        sizes=(dims["p"], 3, 2), steps=2, batch_size=2, views=il.ViewRecipe(noise=0.1)
    )


def _x_noise(sigma):
    def run(rng):
        x = rng.normal(size=(3, 9))
        want = x + sigma * np.random.default_rng(5).standard_normal(x.shape)
        got = il.add_pixel_noise(x, sigma, seed=5)
        return [(float(g), float(w), 0.0) for g, w in zip(got.ravel(), want.ravel(), strict=True)]

    return run


def _x_heldout(tau):
    def run(rng):
        x = rng.uniform(0, 1, size=(6, 9))
        enc = il.init_encoder((9, 4, 3), seed=1)
        out = il.heldout_infonce(enc, x, il.ViewRecipe(noise=0.2), batch_size=3,
                                 temperature=tau, seed=2)  # fmt: skip
        triples = []
        for S, got in zip(out.cosines, out.values, strict=True):
            rows = [
                float(S[i, i]) / tau - logsumexp_list([float(v) / tau for v in S[i]])
                for i in range(3)
            ]
            want = math.log(3) + math.fsum(rows) / 3
            triples.append((float(got), want, _lse_tol(2.0 / tau)))
        return triples

    return run


def _accepts_the_solution(out) -> None:
    assert out is True, f"the checker rejected a correct solution: returned {out!r}"


SPECS: dict[str, tuple[Spec, ...]] = {
    # verbose is a boolean option, like every checker's; the library's own gradient passes.
    "check_log_scale_gradient": (
        Spec(
            il.check_log_scale_gradient,
            dict(
                fn=Func(lambda a, b, t: il.symmetric_infonce_grad(a, b, t).grad_log_scale),
                verbose=Bool(False),
            ),
            check=_accepts_the_solution,
            max_examples=20,
        ),
    ),
    "log_scale_gradient_mistakes": (Spec(il.log_scale_gradient_mistakes, {}),),
    "load_digits": (Spec(il.load_digits, {}, max_examples=5),),
    "shift_images": (
        Spec(
            il.shift_images,
            dict(images=_IMAGES, max_shift=Num("int", 1, minimum=0), seed=Seed(0)),
            dims=_IMAGE_DIMS,
        ),
    ),
    "erase_patches": (
        Spec(
            il.erase_patches,
            dict(images=_IMAGES, size=Num("int", 2, minimum=0), seed=Seed(0)),
            dims=_IMAGE_DIMS,
        ),
    ),
    "drop_pixels": (
        Spec(
            il.drop_pixels,
            dict(images=_IMAGES, rate=Num("nonneg", 0.3), seed=Seed(0)),
            dims=_IMAGE_DIMS,
        ),
    ),
    "add_pixel_noise": (
        Spec(
            il.add_pixel_noise,
            dict(images=_IMAGES, sigma=Num("nonneg", 0.1), seed=Seed(0)),
            dims=_IMAGE_DIMS,
        ),
    ),
    "ViewRecipe": (
        Spec(
            il.ViewRecipe,
            dict(
                shift=Num("int", 1, minimum=0),
                erase=Num("int", 0, minimum=0),
                dropout=Num("nonneg", 0.2),
                noise=Num("nonneg", 0.1),
            ),
        ),
    ),
    "make_views": (
        Spec(
            il.make_views,
            dict(images=_IMAGES, recipe=_SHIFT_RECIPE, seed=Seed(0)),
            dims=_IMAGE_DIMS,
        ),
    ),
    "init_encoder": (
        Spec(
            il.init_encoder,
            dict(sizes=Seq((4, 3, 2), Num("int", 3, minimum=1)), seed=Seed(0)),
        ),
    ),
    "encode": (
        Spec(
            il.encode,
            dict(encoder=Obj(_encoder), images=Arr(("n", "p"), empty_ok=frozenset({0}))),
            dims=_sizes(n=(1, 4), p=(1, 5)),
            bound=frozenset({"p"}),
        ),
    ),
    "encoder_gradients": (
        Spec(
            il.encoder_gradients,
            dict(
                encoder=Obj(_encoder),
                images=Arr(("n", "p")),
                grad_embeddings=Arr(("n", "q")),
            ),
            dims=_sizes(n=(1, 4), p=(1, 5), q=(2, 2)),
            bound=frozenset({"p", "q"}),
        ),
    ),
    "symmetric_infonce_grad": (
        Spec(
            il.symmetric_infonce_grad,
            dict(Za=Arr(("N", "D")), Zb=Arr(("N", "D")), log_scale=Num("real", 1.0)),
            dims=_sizes(N=(1, 4), D=(1, 3)),
        ),
    ),
    "nt_xent_grad": (
        Spec(
            il.nt_xent_grad,
            dict(Za=Arr(("N", "D")), Zb=Arr(("N", "D")), log_scale=Num("real", 1.0)),
            dims=_sizes(N=(1, 4), D=(1, 3)),
        ),
    ),
    "TrainingConfig": (
        Spec(
            il.TrainingConfig,
            dict(
                sizes=Seq((4, 3, 2), Num("int", 3, minimum=1)),
                views=_NOISE_RECIPE,
                steps=Num("int", 3, minimum=1),
                batch_size=Num("int", 2, minimum=2),
                temperature=Num(POS, 0.1),
                initial_temperature=Num(POS, 0.07),
                max_logit_scale=Num(POS, 100.0),
                learning_rate=Num(POS, 2e-3),
                log_scale_learning_rate=Num(POS, 1e-2, none_ok=True),
                loss=Choice("symmetric"),
                checkpoints=Fixed((1,)),
                compute_dtype=Choice("float64"),
            ),
        ),
    ),
    "train_encoder": (
        Spec(
            il.train_encoder,
            dict(images=Arr(("n", "p")), config=Obj(_config), seed=Seed(0)),
            dims=_sizes(n=(2, 4), p=(4, 4)),
            bound=frozenset({"p"}),
            max_examples=30,
        ),
    ),
    "train_encoders": (
        Spec(
            il.train_encoders,
            dict(
                images=Arr(("n", "p")),
                config=Obj(_config, bad=("field", 1.0)),  # None is the default: valid
                runs=Num("int", 2, minimum=1),
                seed=Seed(0),
            ),
            dims=_sizes(n=(2, 4), p=(4, 4)),
            bound=frozenset({"p"}),
            max_examples=30,
        ),
    ),
    "linear_probe": (
        Spec(
            il.linear_probe,
            _probe_params(C=Num(POS, 1.0), tol=Num(POS, 1e-6)),
            dims=_PROBE_DIMS,
            max_examples=40,
        ),
    ),
    "few_label_probe": (
        Spec(
            il.few_label_probe,
            _probe_params(
                per_class=Num("int", 1, minimum=1),
                draws=Num("int", 2, minimum=1),
                C=Num(POS, 1.0),
                tol=Num(POS, 1e-6),
                seed=Seed(0),
            ),
            dims=_PROBE_DIMS,
            max_examples=40,
        ),
    ),
    "knn_accuracy": (
        Spec(
            il.knn_accuracy,
            _probe_params(k=Num("int", 1, minimum=1)),
            dims=_PROBE_DIMS,
        ),
    ),
    "heldout_infonce": (
        Spec(
            il.heldout_infonce,
            dict(
                encoder=Obj(_encoder),
                images=Arr(("n", "p")),
                views=_NOISE_RECIPE,
                batch_size=Num("int", 2, minimum=2),
                temperature=Num(POS, 0.5),
                rounds=Num("int", 1, minimum=1),
                seed=Seed(0),
            ),
            dims=_sizes(n=(2, 4), p=(4, 4)),
            bound=frozenset({"p"}),
            max_examples=40,
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {
    "add_pixel_noise": {"sigma 1e-8": _x_noise(1e-8), "sigma 1e8": _x_noise(1e8)},
    "heldout_infonce": {"tau 1e-8": _x_heldout(1e-8), "tau 1e8": _x_heldout(1e8)},
}


NO_EXTREME: dict[str, str] = {
    "TrainingConfig": "a configuration: stores the temperature and computes nothing with it",
}


EXEMPT: dict[str, str] = {
    "UCI_DIGITS": "published settings (a constant record)",
    "Digits": "result dataclass of load_digits; fuzzed through it",
    "Encoder": (
        "a container of weights built by init_encoder (fuzzed) and validated on creation "
        "(tests/test_training_encoder.py checks each refusal)"
    ),
    "ContrastiveGradients": "result named tuple of symmetric_infonce_grad and nt_xent_grad",
    "TrainingRun": "result dataclass of train_encoder; fuzzed through it",
    "LinearProbe": "result dataclass of linear_probe; fuzzed through it",
    "FewLabelProbe": "result dataclass of few_label_probe; fuzzed through it",
    "HeldOutBound": "result dataclass of heldout_infonce; fuzzed through it",
}
