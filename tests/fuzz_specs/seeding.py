"""Fuzz specification of infonce_lib/seeding.py: nothing to fuzz (see tests/test_seeding.py)."""

from __future__ import annotations

SPECS: dict = {}
EXTREMES: dict = {}

EXEMPT: dict[str, str] = {
    "SEED_VARIABLE": "a constant (a string), not a function",
    "book_seed": "takes no arguments; reads INFONCE_SEED, tested in tests/test_seeding.py",
}
