"""Fuzz specifications and valid extremes for the patch experiments (infonce_lib.patches).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

from collections.abc import Callable

import infonce_lib as il
from tests.fuzzing import (
    POS,
    Bad,
    Num,
    Seq,
    Spec,
)

_PATCH_PARAMS = dict(
    m_pairs=Num("int", 64, minimum=4),
    levels=Seq((2.0,), Num(POS, 2.0, far=False)),
    batch_sizes=Seq((4, 16), Num("int", 4, minimum=2)),
    taus=Seq((0.5, 1.0), Num(POS, 0.5)),
    cosine_level=Num(POS, 2.0),
    cosine_batch_size=Num("int", 16, minimum=2),
    side=Num("int", 2, minimum=1),
    length_scale=Num(POS, 1.5),
)


_PATCH_BAD = (
    Bad(
        "cosine_level not a level", lambda kw, d, r: {**kw, "cosine_level": 3.0}, ("cosine_level",)
    ),
    Bad(
        "cosine_batch_size not a batch size",
        lambda kw, d, r: {**kw, "cosine_batch_size": 8},
        ("cosine_batch_size",),
    ),
    Bad(
        "batch sizes not increasing",
        lambda kw, d, r: {**kw, "batch_sizes": (16, 4)},
        ("batch_sizes",),
    ),
    Bad("m_pairs not a multiple", lambda kw, d, r: {**kw, "m_pairs": 40}, ("m_pairs",)),
)


SPECS: dict[str, tuple[Spec, ...]] = {
    "run_gaussian_patches": (
        Spec(il.run_gaussian_patches, _PATCH_PARAMS, bad=_PATCH_BAD, max_examples=40),
    ),
    "reproduce_gaussian_patches": (
        Spec(il.reproduce_gaussian_patches, _PATCH_PARAMS, bad=_PATCH_BAD, max_examples=30),
    ),
    "patch_level_pairs": (
        Spec(
            il.patch_level_pairs,
            dict(
                level=Num(POS, 2.0),
                levels=Seq((1.0, 2.0), Num(POS, 1.0, far=False)),
                m_pairs=Num("int", 8, minimum=1),
                side=Num("int", 2, minimum=1),
                length_scale=Num(POS, 1.5),
            ),
            bad=(Bad("level not a level", lambda kw, d, r: {**kw, "level": 3.0}, ("level",)),),
            max_examples=40,
        ),
    ),
    "run_cosine_temperature": (
        Spec(il.run_cosine_temperature, _PATCH_PARAMS, bad=_PATCH_BAD, max_examples=40),
    ),
    "reproduce_cosine_temperature": (
        Spec(il.reproduce_cosine_temperature, _PATCH_PARAMS, bad=_PATCH_BAD, max_examples=30),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {}


EXEMPT: dict[str, str] = {
    "PatchExperiment": "result record of run_gaussian_patches; fuzzed through it",
    "CosineTemperature": "result record of run_cosine_temperature; fuzzed through it",
}


NO_EXTREME: dict[str, str] = {
    "run_gaussian_patches": "the experiment: values tested in test_patches.py, inputs fuzzed",
    "reproduce_gaussian_patches": "the experiment's report (run_gaussian_patches)",
    "run_cosine_temperature": "chapter 5's experiment: values tested in its tests, inputs fuzzed",
    "reproduce_cosine_temperature": "the experiment's report (run_cosine_temperature)",
    "patch_level_pairs": "the experiment's data (sample_patch_pairs, field_covariance: extremes)",
}
