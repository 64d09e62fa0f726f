"""Fuzz specifications and valid extremes for chapter 2's exercises (infonce_lib.exercises).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

from collections.abc import Callable

import infonce_lib as il
from tests.fuzzing import (
    Fixed,
    Func,
    Spec,
)

SPECS: dict[str, tuple[Spec, ...]] = {
    "check_info_nce": (
        Spec(il.check_info_nce, dict(fn=Func(il.info_nce_loss), verbose=Fixed(False))),
    ),
    "typical_mistakes": (Spec(il.typical_mistakes, {}),),
}


EXTREMES: dict[str, dict[str, Callable]] = {}
