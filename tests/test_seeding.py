"""The book's seed: INFONCE_SEED read as a non-negative integer, 0 when unset."""

from __future__ import annotations

import pytest

import infonce_lib as il


@pytest.mark.parametrize(
    "raw, seed", [(None, 0), ("", 0), (" ", 0), ("0", 0), ("7", 7), (" 12 ", 12)]
)
def test_book_seed_reads_the_environment(monkeypatch, raw, seed):
    if raw is None:
        monkeypatch.delenv(il.SEED_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(il.SEED_VARIABLE, raw)
    assert il.book_seed() == seed
    assert type(il.book_seed()) is int


@pytest.mark.parametrize("raw", ["-1", "1.5", "one", "0x10", "1e3"])
def test_book_seed_refuses_what_is_not_a_seed(monkeypatch, raw):
    monkeypatch.setenv(il.SEED_VARIABLE, raw)
    with pytest.raises(ValueError, match="INFONCE_SEED must be a non-negative integer"):
        il.book_seed()
