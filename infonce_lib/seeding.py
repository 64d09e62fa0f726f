"""The book's one seed: every random stream of a chapter derives from it.

A chapter's first code cell sets ``SEED = il.book_seed()`` and every later cell draws from
its own generator, ``np.random.default_rng([SEED, k])`` with ``k`` a number of its own, so
that a reader changes every random number of the chapter by changing ``SEED`` in one place.
``SEED = 0`` is what the stored outputs were computed with; ``make seeds`` executes every
chapter again with ``INFONCE_SEED=1`` to ``10`` and reports the checks that fail for other
draws, so a conclusion stated in the book is one that holds beyond the draw printed.
"""

from __future__ import annotations

import os

__all__ = ["SEED_VARIABLE", "book_seed"]

#: The environment variable :func:`book_seed` reads (``INFONCE_SEED``); ``make seeds`` sets it.
SEED_VARIABLE = "INFONCE_SEED"


def book_seed() -> int:
    """The seed a chapter derives its random streams from.

    Returns
    -------
    int
        The non-negative integer in the environment variable ``INFONCE_SEED``, or 0 when it
        is unset or empty. Seed 0 gives the outputs stored in the book.

    Raises
    ------
    ValueError
        If ``INFONCE_SEED`` is set to anything but a non-negative integer.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("INFONCE_SEED", None) and None
    >>> book_seed()
    0
    """
    raw = os.environ.get(SEED_VARIABLE, "").strip()
    if not raw:
        return 0
    try:
        seed = int(raw, 10)
    except ValueError:
        seed = -1
    if seed < 0:
        raise ValueError(f"{SEED_VARIABLE} must be a non-negative integer, got {raw!r}")
    return seed
