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
    Seed,
    Seq,
    Spec,
)

SPECS: dict[str, tuple[Spec, ...]] = {
    "patch_level_pairs": (
        Spec(
            il.patch_level_pairs,
            dict(
                level=Num(POS, 2.0),
                levels=Seq((1.0, 2.0), Num(POS, 1.0, far=False)),
                m_pairs=Num("int", 8, minimum=1),
                side=Num("int", 2, minimum=1),
                length_scale=Num(POS, 1.5),
                seed=Seed(0, generator_ok=False),
            ),
            bad=(Bad("level not a level", lambda kw, d, r: {**kw, "level": 3.0}, ("level",)),),
            max_examples=40,
        ),
    ),
}


EXTREMES: dict[str, dict[str, Callable]] = {}


EXEMPT: dict[str, str] = {}


NO_EXTREME: dict[str, str] = {
    "patch_level_pairs": "the experiment's data (sample_patch_pairs, field_covariance: extremes)",
}
