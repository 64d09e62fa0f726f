"""The book's experiments, one module each, all on one template.

Every experiment module defines::

    NAME = "gaussian-patches"      # the name of `python -m infonce_lib reproduce NAME`
    SUMMARY = "one line"           # shown by `reproduce --list`
    CHAPTER = "chapter 3"          # where the book discusses it

    @dataclass(frozen=True)
    class Config: ...              # defaults = the book's protocol; validated on creation
    @dataclass(frozen=True)
    class Result: ...              # what run() computes

    def run(config: Config | None = None) -> Result    # None: Config(), the protocol
    def tables(result: Result) -> str
    def checks(result: Result) -> list[Check]
    def report(config: Config | None = None) -> Report  # JSON-able results, tables, checks

The mathematics lives in the library's modules; an experiment only chooses the protocol,
calls them, and states what must hold. Adding an experiment is one new module on this
template plus one entry in :data:`EXPERIMENTS`.
"""

from __future__ import annotations

from . import (
    bound_family,
    cosine_temperature,
    digits,
    gaussian_patches,
    mcallester_stratos,
    nce_efficiency,
)

__all__ = ["EXPERIMENTS"]

#: The registry, in the order of the book: name -> experiment module.
EXPERIMENTS = {
    m.NAME: m
    for m in (
        nce_efficiency,
        gaussian_patches,
        bound_family,
        mcallester_stratos,
        cosine_temperature,
        digits,
    )
}
