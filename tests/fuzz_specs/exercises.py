"""Fuzz specifications and valid extremes for chapter 2's exercises (infonce_lib.exercises).

See tests/fuzzing.py for what a specification is and how to add one.
"""

from __future__ import annotations

from collections.abc import Callable

import infonce_lib as il
from tests.fuzzing import (
    Bool,
    Func,
    Spec,
)


def _accepts_the_solution(out) -> None:
    assert out is True, f"the checker rejected a correct solution: returned {out!r}"


SPECS: dict[str, tuple[Spec, ...]] = {
    # verbose is a boolean option, like every checker's (only real booleans: "False" is
    # truthy); the checker runs its cases on the library's own loss, which must pass.
    "check_info_nce": (
        Spec(
            il.check_info_nce,
            dict(fn=Func(il.info_nce_loss), verbose=Bool(False)),
            check=_accepts_the_solution,
            max_examples=20,
        ),
    ),
    "typical_mistakes": (Spec(il.typical_mistakes, {}),),
}


EXTREMES: dict[str, dict[str, Callable]] = {}
